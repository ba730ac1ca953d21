/* The fused kernel-function tile on the CPU (the reference), its codelet table indexed by the
 * precision of K (fp64 and fp32 entries only) and tg_insert_kernelfn. Arithmetic in double,
 * one rounding to K's precision at the store. The CUDA kernel (kernelfn_cuda.cu) performs the
 * same operations in the same order, with the same explicit fma, so the only difference is
 * exp: CPU and GPU agree to 1 ulp in fp32 tiles and 2 ulp in fp64 tiles (glibc's and CUDA's
 * exp are each within 1 ulp); ibs and linear tiles agree bit for bit. */
#include "codelets/kernelfn.h"

#include <math.h>
#include <stdio.h>

#include "runtime/runtime.h"

struct starpu_codelet tg_cl_kernelfn[TG_NPREC];
static struct starpu_perfmodel models[TG_NPREC];
static char symbols[TG_NPREC][40];

void tg_kernelfn_cpu(void *buffers[], void *cl_arg) {
    struct tg_kernelfn_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const int32_t *c = (const int32_t *)STARPU_MATRIX_GET_PTR(buffers[0]);
    const double *ti = (const double *)STARPU_MATRIX_GET_PTR(buffers[1]),
                 *tj = (const double *)STARPU_MATRIX_GET_PTR(buffers[2]);
    void *k = (void *)STARPU_MATRIX_GET_PTR(buffers[3]);
    size_t ldc = STARPU_MATRIX_GET_LD(buffers[0]), ldi = STARPU_MATRIX_GET_LD(buffers[1]),
           ldj = STARPU_MATRIX_GET_LD(buffers[2]), ldk = STARPU_MATRIX_GET_LD(buffers[3]);
    size_t m = STARPU_MATRIX_GET_NX(buffers[3]), n = STARPU_MATRIX_GET_NY(buffers[3]);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++) {
            double cij = c[i + j * ldc], v;
            if (a.kind == TG_KERNEL_LINEAR) {
                v = (cij - ti[i] - tj[j] + a.c0) * a.c1;
            } else {
                /* s_i + s_j − 2c_ij: an exact integer */
                double d = ti[i] + tj[j] - 2 * cij;
                if (a.kind == TG_KERNEL_IBS) {
                    v = fma(-d, a.c1, 1.0);
                } else {
                    for (int l = 1; l <= a.ncov; l++) {
                        double t = ti[i + l * ldi] - tj[j + l * ldj];
                        d = fma(t, t, d);
                    }
                    v = exp(-a.gamma * d);
                }
            }
            if (a.diag && i == j) v += a.alpha;
            tg_prec_store(a.prec, k, i + j * ldk, v);
        }
}

int tg_insert_kernelfn(const struct tg_kernelfn_arg *a, starpu_data_handle_t c,
                       starpu_data_handle_t ti, starpu_data_handle_t tj, starpu_data_handle_t k,
                       int priority) {
    double entries = (double)starpu_matrix_get_nx(k) * starpu_matrix_get_ny(k);
    return TG_INSERT(&tg_cl_kernelfn[a->prec], STARPU_R, c, STARPU_R, ti, STARPU_R, tj, STARPU_W, k,
                     STARPU_VALUE, a, sizeof *a, STARPU_PRIORITY, priority, STARPU_FLOPS,
                     entries * (4 + 3 * a->ncov), 0);
}

void tg_kernelfn_codelets_init(void) {
    static const enum starpu_data_access_mode modes[4] = {STARPU_R, STARPU_R, STARPU_R, STARPU_W};
    /* K is built in fp64 or fp32; the Cholesky lowers tiles afterwards */
    static const tg_prec precs[2] = {TG_FP64, TG_FP32};
    for (int p = 0; p < 2; p++) {
        snprintf(symbols[p], sizeof symbols[p], "tg_kernelfn_%s", tg_prec_name(precs[p]));
        tg_codelet_fill(&tg_cl_kernelfn[precs[p]], &models[p], symbols[p], tg_kernelfn_cpu,
#ifdef TG_USE_CUDA
                        tg_kernelfn_cuda,
#else
                        NULL,
#endif
                        4, modes);
    }
}
