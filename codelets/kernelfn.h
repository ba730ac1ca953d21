/* The fused kernel-function tile (the KRR paper's exponentiation fused into the distance tile):
 * K (m × n, fp64, fp32 or fp16 — a table indexed by precision) from the INT32 dot products C of
 * tg_cl_gram and the per-sample terms of both panels. See include/tilegwas.h "Kernel ridge
 * regression" for the formulas. CPU in kernelfn.c (double arithmetic, one rounding: the
 * reference), CUDA in kernelfn_cuda.cu (one thread per entry, FP64 arithmetic for the distance,
 * so CPU and GPU agree to the last bits of exp). */
#ifndef TG_CODELETS_KERNELFN_H
#define TG_CODELETS_KERNELFN_H
#include "codelets/codelets.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tg_kernelfn_arg {
    int kind;     /* tg_kernel */
    tg_prec prec; /* of K */
    int ncov;     /* confounder columns in the terms panels (gaussian) */
    int diag;     /* a diagonal tile of a symmetric K: add alpha where row == column */
    double gamma, alpha;
    double c0, c1; /* ibs: c1 = 1/(2·N_S); linear: c0 = Σδ² (δ = 2p − round(2p)), c1 = 1/(2Σp(1−p)) */
};

/* buffers: C (R, matrix int32 m × n), Ti (R, matrix double m × (1+ncov): column 0 the terms
 * s_i, then the confounders of the m row samples), Tj (R, the same for the n column samples),
 * K (W, matrix m × n of precision prec). */
extern struct starpu_codelet tg_cl_kernelfn[TG_NPREC];
void tg_kernelfn_cpu(void *buffers[], void *cl_arg);
void tg_kernelfn_cuda(void *buffers[], void *cl_arg);
int tg_insert_kernelfn(const struct tg_kernelfn_arg *a, starpu_data_handle_t c,
                       starpu_data_handle_t ti, starpu_data_handle_t tj, starpu_data_handle_t k,
                       int priority);

/* The dot products and the kernel function in one task (a build that keeps no C): buffers
 * Ei (R, int8 panel k × m), Ej (R, int8 panel k × n), Ti, Tj, K as above; a diagonal tile passes
 * its panel and terms twice. The INT32 tile lives in scratch: on the GPU the worker's, reused
 * task after task, so the build allocates K only. */
extern struct starpu_codelet tg_cl_kernelgram[TG_NPREC];
void tg_kernelgram_cpu(void *buffers[], void *cl_arg);
void tg_kernelgram_cuda(void *buffers[], void *cl_arg);
int tg_insert_kernelgram(const struct tg_kernelfn_arg *a, starpu_data_handle_t ei,
                         starpu_data_handle_t ej, starpu_data_handle_t ti, starpu_data_handle_t tj,
                         starpu_data_handle_t k, int priority);

/* The statistics the precision map reads of the tile tg_cl_kernelgram[prec] would write
 * (tg_tile_stats of K + αI in precision prec), without keeping the tile: buffers Ei, Ej, Ti, Tj
 * as tg_cl_kernelgram's, then a variable of 3 doubles (W). The tile lives in scratch, so a
 * map can be made before any tile of K is stored. */
extern struct starpu_codelet tg_cl_kernelstats[TG_NPREC];
void tg_kernelstats_cpu(void *buffers[], void *cl_arg);
void tg_kernelstats_cuda(void *buffers[], void *cl_arg);
int tg_insert_kernelstats(const struct tg_kernelfn_arg *a, starpu_data_handle_t ei,
                          starpu_data_handle_t ej, starpu_data_handle_t ti,
                          starpu_data_handle_t tj, starpu_data_handle_t out, int priority);

/* The kernel function of one m × n tile on plain pointers (CPU). */
void tg_kernelfn_tile(const struct tg_kernelfn_arg *a, const int32_t *c, size_t ldc,
                      const double *ti, size_t ldi, const double *tj, size_t ldj, void *k,
                      size_t ldk, size_t m, size_t n);

void tg_kernelfn_codelets_init(void);

#ifdef __cplusplus
}
#endif
#endif
