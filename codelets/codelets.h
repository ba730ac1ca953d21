/* Codelet declarations. Each kernel family is a pair <family>.c (CPU function, codelet table,
 * tg_insert_<kernel>) and <family>_cuda.cu (CUDA function). Per-precision kernels are tables of
 * codelets indexed by tg_prec sharing one CPU and one CUDA function that dispatch on the
 * precisions carried in the task's argument; each table entry has its own perfmodel, named
 * tg_<kernel>_<prec...>, because each precision has its own speed. */
#ifndef TG_CODELETS_H
#define TG_CODELETS_H
#include <starpu.h>

#include "config.h"
#include "tilegwas.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A CUDA function's name where it exists, NULL in a build without CUDA (for tg_codelet_fill). */
#ifdef TG_USE_CUDA
#define TG_CUDA_FN(f) f
#else
#define TG_CUDA_FN(f) NULL
#endif

/* heteroprio's buckets (tg_sched_buckets; codelets/codelets.c describes them): one per kind of
 * kernel, in the order a GPU should take them (the panel chain first). */
enum tg_bucket { TG_B_PANEL, TG_B_TRSM, TG_B_SYRK, TG_B_GEMM, TG_B_MEMORY, TG_B_DOT, TG_B_EPI,
                 TG_B_GENO, TG_NBUCKETS };
/** The buckets, for the runtime's start (src/api.c). */
extern const struct tg_sched_buckets tg_codelet_buckets;

/* A codelet family's scheduling hints, carried by its table row: its heteroprio bucket, and
 * whether it is memory-bound (it then runs on the GPUs where there are any). */
struct tg_codelet_hints {
    enum tg_bucket bucket;
    int gpus_if_any;
};

/** Fills one codelet and its regression perfmodel (time = α·work^β) named @p symbol (kept, not
 * copied), and applies its scheduling @p hints. The CUDA function is ignored in a build without
 * CUDA. */
void tg_codelet_fill(struct starpu_codelet *cl, struct starpu_perfmodel *model, const char *symbol,
                     starpu_cpu_func_t cpu, starpu_cuda_func_t cuda, int nbuffers,
                     const enum starpu_data_access_mode *modes, struct tg_codelet_hints hints);

/* A family of codelets indexed by precision: one CPU and one CUDA function that dispatch on
 * the task's argument, and a perfmodel per entry named by fmt with the precision's name. */
struct tg_codelet_family {
    const char *fmt; /* e.g. "tg_gemm_%s" */
    struct starpu_codelet *table; /* TG_NPREC entries */
    starpu_cpu_func_t cpu;
    starpu_cuda_func_t cuda;
    int nbuffers;
    const enum starpu_data_access_mode *modes;
    struct tg_codelet_hints hints;
};
/** Fills the entries @p precs[0..nprec) (every precision when NULL) of the @p nfam families'
 * tables, their perfmodels and symbols kept in @p models and @p symbols (row f for family f). */
void tg_codelet_families_fill(const struct tg_codelet_family *fam, int nfam, const tg_prec *precs,
                              int nprec, struct starpu_perfmodel (*models)[TG_NPREC],
                              char (*symbols)[TG_NPREC][40]);

/** Builds every codelet table and gives each codelet its scheduling hints; called by
 * tg_runtime_start() (src/api.c) once the runtime has started. */
void tg_codelets_init(void);
/** Builds the conversion and tile-statistics tables below (codelets/convert.c). */
void tg_convert_codelets_init(void);
/** Registers each family's probe with the runtime (codelets/probes.c; tg_codelets_init). */
void tg_codelets_probes_register(void);

/* ---- convert: dst = round_to(dst precision, src · scale), one tile (matrix interface);
 * with transpose, dst(j, i) = round(src(i, j) · scale) (the TN copies cuBLASLt's FP8 GEMM needs). */
struct tg_convert_arg {
    tg_prec from, to;
    double scale;
    int transpose;
};
extern struct starpu_codelet tg_cl_convert[TG_NPREC][TG_NPREC];
void tg_convert_cpu(void *buffers[], void *cl_arg);
void tg_convert_cuda(void *buffers[], void *cl_arg);
#ifdef __CUDACC__
/** The conversion kernel on @p stream, for CUDA codelets that convert scratch buffers. */
void tg_convert_launch(tg_prec from, tg_prec to, const void *src, size_t lds, void *dst,
                       size_t ldd, size_t rows, size_t cols, double scale, int transpose,
                       cudaStream_t stream);
#endif
/** Inserts the conversion of tile @p src (precision @p from) into @p dst (precision @p to). */
int tg_insert_convert(starpu_data_handle_t src, starpu_data_handle_t dst, tg_prec from, tg_prec to,
                      double scale, int priority);

/* ---- tilestats: what the precision map reads of a tile (values v = stored / scale): out[0] =
 * Σv² (a diagonal tile of a symmetric matrix counts its strict lower part twice and ignores its
 * upper part), out[1] = max|v|, out[2] = the largest diagonal entry (0 unless diag, at least 0).
 * Indexed by the tile's precision (perfmodels tg_tilestats_<p>); buffers: the tile (R), a
 * variable of 3 doubles (W). Reduced where the tile is, so the map never moves K to the host. */
struct tg_tilestats_arg {
    tg_prec prec;
    int diag;
    double inv_scale;
};
extern struct starpu_codelet tg_cl_tilestats[TG_NPREC];
void tg_tilestats_cpu(void *buffers[], void *cl_arg);
void tg_tilestats_cuda(void *buffers[], void *cl_arg);
/** The statistics of the rows × cols tile at @p t (leading dimension @p ld) into out[0..2]. */
void tg_tile_stats(tg_prec p, const void *t, size_t ld, size_t rows, size_t cols, int diag,
                   double inv_scale, double out[3]);
#ifdef __CUDACC__
/** The same on @p stream, into 3 doubles of device memory at @p out (the worker's scratch slot 1
 * holds the partial sums). */
void tg_tile_stats_launch(tg_prec p, const void *t, size_t ld, size_t rows, size_t cols,
                          int diag, double inv_scale, double *out, cudaStream_t stream);
#endif
int tg_insert_tilestats(starpu_data_handle_t tile, starpu_data_handle_t out, tg_prec p, int diag,
                        double inv_scale, int priority);

#ifdef __cplusplus
}
#endif
#endif
