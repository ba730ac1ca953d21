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

/** Fills one codelet and its history-based perfmodel named @p symbol (kept, not copied). The
 * CUDA function is ignored in a build without CUDA. */
void tg_codelet_fill(struct starpu_codelet *cl, struct starpu_perfmodel *model, const char *symbol,
                     starpu_cpu_func_t cpu, starpu_cuda_func_t cuda, int nbuffers,
                     const enum starpu_data_access_mode *modes);

/** Builds every codelet table; called once by tg_runtime_start(). */
void tg_codelets_init(void);

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

#ifdef __cplusplus
}
#endif
#endif
