/* The GRM's FP64 tile (src/algo/grm.c: the standardised kind, and every kind with missing
 * calls): S = Z_Jᵀ·Z_I, Z = (e − δ)·√w widened from int8 encoding panels e = x − round(2p)
 * (TG_GRM_MISS a missing call, widened to 0) with the per-SNP δ = 2p − round(2p) and weight
 * √w, chunk by chunk of SNPs. CPU in grm.c (OpenBLAS DSYRK / DGEMM on chunks of 1,024 SNPs),
 * CUDA in grm_cuda.cu (a widening kernel into the worker's scratch, then cuBLAS DSYRK / DGEMM on
 * chunks of 4,096). The integer kinds without missing calls and the pair counts take the exact
 * INT8 Gram instead (codelets/distance.h). */
#ifndef TG_CODELETS_GRM_H
#define TG_CODELETS_GRM_H
#include "codelets/codelets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the encoding of a missing call: never x − round(2p), which is −2..2 */
enum { TG_GRM_MISS = -128 };

/* buffers: Ei (R, matrix int8 k × rows, one sample per column), Ej (R, int8 k × cols), V (R,
 * vector double 2k: δ then √w; 0 for SNPs that add nothing, padding included), S (W, matrix
 * double cols × rows: S(j, i) = Σ_t Z_ti Z_tj, i.e. the tile's row i is S's column i). A diagonal
 * tile passes its panel once (tg_cl_grm_sym: Ei, V, S) and gets only S(j, i) for j ≤ i (the
 * rest is left as it was: the caller mirrors). */
extern struct starpu_codelet tg_cl_grm, tg_cl_grm_sym;
void tg_grm_cpu(void *buffers[], void *cl_arg);
void tg_grm_cuda(void *buffers[], void *cl_arg);
void tg_grm_sym_cpu(void *buffers[], void *cl_arg);
void tg_grm_sym_cuda(void *buffers[], void *cl_arg);
/* Inserts S = Z_Jᵀ·Z_I for the panels @p ei and @p ej (the same handle: the symmetric form). */
int tg_insert_grm(starpu_data_handle_t ei, starpu_data_handle_t ej, starpu_data_handle_t v,
                  starpu_data_handle_t s, int priority);

void tg_grm_codelets_init(void);

#ifdef __cplusplus
}
#endif
#endif
