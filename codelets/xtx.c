/* The RR finishing codelet on the CPU (the reference: FP64 arithmetic, one rounding to the
 * tile's precision) and its table. */
#include "codelets/xtx.h"

#include <stdio.h>

#include "runtime/runtime.h"

struct starpu_codelet tg_cl_xtx[TG_NPREC];
static struct starpu_perfmodel models[TG_NPREC];
static char symbols[TG_NPREC][40];

void tg_xtx_cpu(void *buffers[], void *cl_arg) {
    struct tg_xtx_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const int32_t *c32 = (const int32_t *)STARPU_MATRIX_GET_PTR(buffers[0]);
    size_t ldc = STARPU_MATRIX_GET_LD(buffers[0]);
    const double *vj = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]),
                 *vk = (const double *)STARPU_VECTOR_GET_PTR(buffers[2]);
    void *t = (void *)STARPU_MATRIX_GET_PTR(buffers[3]);
    size_t ld = STARPU_MATRIX_GET_LD(buffers[3]);
    int rows = (int)STARPU_MATRIX_GET_NX(buffers[3]), cols = (int)STARPU_MATRIX_GET_NY(buffers[3]);
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < rows; r++)
            tg_prec_store(a.prec, t, r + c * ld,
                          tg_xtx_entry(&a, c32, ldc, rows, cols, vj, vj + rows, vk, vk + cols, r,
                                       c));
}

int tg_insert_xtx(const struct tg_xtx_arg *a, starpu_data_handle_t c, starpu_data_handle_t vj,
                  starpu_data_handle_t vk, starpu_data_handle_t tile, int priority) {
    double flops = 8.0 * starpu_matrix_get_nx(tile) * starpu_matrix_get_ny(tile);
    return TG_INSERT(&tg_cl_xtx[a->prec], STARPU_R, c, STARPU_R, vj, STARPU_R, vk, STARPU_W, tile,
                     STARPU_VALUE, a, sizeof *a, STARPU_PRIORITY, priority, STARPU_FLOPS, flops, 0);
}

void tg_xtx_codelets_init(void) {
    static const enum starpu_data_access_mode modes[4] = {STARPU_R, STARPU_R, STARPU_R, STARPU_W};
    static const tg_prec precs[2] = {TG_FP64, TG_FP32};
    static const struct tg_codelet_family fam = {"tg_xtx_%s", tg_cl_xtx, tg_xtx_cpu,
                                                 TG_CUDA_FN(tg_xtx_cuda), 4, modes,
                                                 {TG_B_DOT, 0}};
    tg_codelet_families_fill(&fam, 1, precs, 2, &models, &symbols);
}
