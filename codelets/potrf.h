/* Diagonal-tile codelets of the tile Cholesky: potrf (factor) and trtri (inverse of the factor),
 * FP32 and FP64. CPU in potrf.c (LAPACKE), CUDA in potrf_cuda.cu (cuSOLVER). */
#ifndef TG_CODELETS_POTRF_H
#define TG_CODELETS_POTRF_H
#include "codelets/codelets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- potrf: A = L·Lᵀ in place (lower), strict upper part set to zero so the tile is L. Buffer
 * 1 is an int variable receiving LAPACK's info (0, or j > 0: the leading minor of order j is not
 * positive definite): errors cannot go back through StarPU, the caller reads it after the wait. */
struct tg_potrf_arg {
    tg_prec prec;
};
extern struct starpu_codelet tg_cl_potrf[TG_NPREC];
void tg_potrf_cpu(void *buffers[], void *cl_arg);
void tg_potrf_cuda(void *buffers[], void *cl_arg);
int tg_insert_potrf(tg_prec p, starpu_data_handle_t a, starpu_data_handle_t info, int priority);

/* ---- trtri: T = L⁻¹ (lower, strict upper zero) from a factor tile L with zero strict upper. */
struct tg_trtri_arg {
    tg_prec prec;
};
extern struct starpu_codelet tg_cl_trtri[TG_NPREC];
void tg_trtri_cpu(void *buffers[], void *cl_arg);
void tg_trtri_cuda(void *buffers[], void *cl_arg);
int tg_insert_trtri(tg_prec p, starpu_data_handle_t l, starpu_data_handle_t t, int priority);

/** Builds the tables above; called from tg_codelets_init(). */
void tg_potrf_codelets_init(void);

#ifdef __cplusplus
}
#endif
#endif
