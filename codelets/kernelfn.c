/* The fused kernel-function tile on the CPU (the reference), its codelet tables indexed by the
 * precision of K (fp64, fp32 and fp16 entries: kernelfn from kept dot products, kernelgram with
 * the dot products in the same task; kernelstats, fp64 and fp32, the map's statistics of a
 * kernelgram tile) and the tg_insert_* helpers. Arithmetic in double, one rounding to K's
 * precision at the store. The CUDA kernel (kernelfn_cuda.cu) performs the same operations in
 * the same order, with the same explicit fma, so the only difference is exp: CPU and GPU agree
 * to 1 ulp in fp32 and fp16 tiles and 2 ulp in fp64 tiles (glibc's and CUDA's exp are each
 * within 1 ulp); ibs and linear tiles agree bit for bit. */
#include "codelets/kernelfn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "codelets/distance.h"
#include "runtime/runtime.h"

struct starpu_codelet tg_cl_kernelfn[TG_NPREC], tg_cl_kernelgram[TG_NPREC],
    tg_cl_kernelstats[TG_NPREC];
static struct starpu_perfmodel models[3][TG_NPREC];
static char symbols[3][TG_NPREC][40];

void tg_kernelfn_tile(const struct tg_kernelfn_arg *a, const int32_t *c, size_t ldc,
                      const double *ti, size_t ldi, const double *tj, size_t ldj, void *k,
                      size_t ldk, size_t m, size_t n) {
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++) {
            double cij = c[i + j * ldc], v;
            if (a->kind == TG_KERNEL_LINEAR) {
                v = (cij - ti[i] - tj[j] + a->c0) * a->c1;
            } else {
                /* s_i + s_j − 2c_ij: an exact integer */
                double d = ti[i] + tj[j] - 2 * cij;
                if (a->kind == TG_KERNEL_IBS) {
                    v = fma(-d, a->c1, 1.0);
                } else {
                    for (int l = 1; l <= a->ncov; l++) {
                        double t = ti[i + l * ldi] - tj[j + l * ldj];
                        d = fma(t, t, d);
                    }
                    v = exp(-a->gamma * d);
                }
            }
            if (a->diag && i == j) v += a->alpha;
            tg_prec_store(a->prec, k, i + j * ldk, v);
        }
}

void tg_kernelfn_cpu(void *buffers[], void *cl_arg) {
    struct tg_kernelfn_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    tg_kernelfn_tile(&a, (const int32_t *)STARPU_MATRIX_GET_PTR(buffers[0]),
                     STARPU_MATRIX_GET_LD(buffers[0]),
                     (const double *)STARPU_MATRIX_GET_PTR(buffers[1]),
                     STARPU_MATRIX_GET_LD(buffers[1]),
                     (const double *)STARPU_MATRIX_GET_PTR(buffers[2]),
                     STARPU_MATRIX_GET_LD(buffers[2]), (void *)STARPU_MATRIX_GET_PTR(buffers[3]),
                     STARPU_MATRIX_GET_LD(buffers[3]), STARPU_MATRIX_GET_NX(buffers[3]),
                     STARPU_MATRIX_GET_NY(buffers[3]));
}

/* The dot products and the kernel function of the m × n tile into @p k (ld m), from a
 * kernelgram or kernelstats task's first four buffers. */
static void gram_and_kernel(const struct tg_kernelfn_arg *a, void *buffers[], void *k, size_t ldk,
                            size_t m, size_t n) {
    int32_t *c = tg_malloc_n((int64_t)m, (int64_t)n, sizeof *c, NULL);
    if (!c) STARPU_ABORT_MSG("out of memory for a %zu x %zu dot-product tile", m, n);
    const int8_t *ei = (const int8_t *)STARPU_MATRIX_GET_PTR(buffers[0]),
                 *ej = (const int8_t *)STARPU_MATRIX_GET_PTR(buffers[1]);
    tg_gram_tile(ei, STARPU_MATRIX_GET_LD(buffers[0]), ej, STARPU_MATRIX_GET_LD(buffers[1]),
                 STARPU_MATRIX_GET_NX(buffers[0]), c, m, m, n, ei == ej);
    tg_kernelfn_tile(a, c, m, (const double *)STARPU_MATRIX_GET_PTR(buffers[2]),
                     STARPU_MATRIX_GET_LD(buffers[2]),
                     (const double *)STARPU_MATRIX_GET_PTR(buffers[3]),
                     STARPU_MATRIX_GET_LD(buffers[3]), k, ldk, m, n);
    free(c);
}

void tg_kernelgram_cpu(void *buffers[], void *cl_arg) {
    struct tg_kernelfn_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    gram_and_kernel(&a, buffers, (void *)STARPU_MATRIX_GET_PTR(buffers[4]),
                    STARPU_MATRIX_GET_LD(buffers[4]), STARPU_MATRIX_GET_NX(buffers[4]),
                    STARPU_MATRIX_GET_NY(buffers[4]));
}

void tg_kernelstats_cpu(void *buffers[], void *cl_arg) {
    struct tg_kernelfn_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    size_t m = STARPU_MATRIX_GET_NY(buffers[0]), n = STARPU_MATRIX_GET_NY(buffers[1]);
    void *k = tg_malloc_n((int64_t)m, (int64_t)n, tg_prec_size(a.prec), NULL);
    if (!k) STARPU_ABORT_MSG("out of memory for a %zu x %zu kernel tile", m, n);
    gram_and_kernel(&a, buffers, k, m, m, n);
    tg_tile_stats(a.prec, k, m, m, n, a.diag, 1, (double *)STARPU_VARIABLE_GET_PTR(buffers[4]));
    free(k);
}

int tg_insert_kernelfn(const struct tg_kernelfn_arg *a, starpu_data_handle_t c,
                       starpu_data_handle_t ti, starpu_data_handle_t tj, starpu_data_handle_t k,
                       int priority) {
    double entries = (double)starpu_matrix_get_nx(k) * starpu_matrix_get_ny(k);
    return TG_INSERT(&tg_cl_kernelfn[a->prec], STARPU_R, c, STARPU_R, ti, STARPU_R, tj, STARPU_W, k,
                     STARPU_VALUE, a, sizeof *a, STARPU_PRIORITY, priority, STARPU_FLOPS,
                     entries * (4 + 3 * a->ncov), 0);
}

int tg_insert_kernelgram(const struct tg_kernelfn_arg *a, starpu_data_handle_t ei,
                         starpu_data_handle_t ej, starpu_data_handle_t ti, starpu_data_handle_t tj,
                         starpu_data_handle_t k, int priority) {
    double entries = (double)starpu_matrix_get_nx(k) * starpu_matrix_get_ny(k);
    return TG_INSERT(&tg_cl_kernelgram[a->prec], STARPU_R, ei, STARPU_R, ej, STARPU_R, ti,
                     STARPU_R, tj, STARPU_W, k, STARPU_VALUE, a, sizeof *a, STARPU_PRIORITY,
                     priority, STARPU_FLOPS,
                     entries * (2.0 * (double)starpu_matrix_get_nx(ei) + 4 + 3 * a->ncov), 0);
}

int tg_insert_kernelstats(const struct tg_kernelfn_arg *a, starpu_data_handle_t ei,
                          starpu_data_handle_t ej, starpu_data_handle_t ti,
                          starpu_data_handle_t tj, starpu_data_handle_t out, int priority) {
    double entries = (double)starpu_matrix_get_ny(ei) * starpu_matrix_get_ny(ej);
    return TG_INSERT(&tg_cl_kernelstats[a->prec], STARPU_R, ei, STARPU_R, ej, STARPU_R, ti,
                     STARPU_R, tj, STARPU_W, out, STARPU_VALUE, a, sizeof *a, STARPU_PRIORITY,
                     priority, STARPU_FLOPS,
                     entries * (2.0 * (double)starpu_matrix_get_nx(ei) + 7 + 3 * a->ncov), 0);
}

void tg_kernelfn_codelets_init(void) {
    static const enum starpu_data_access_mode
        fn_modes[4] = {STARPU_R, STARPU_R, STARPU_R, STARPU_W},
        gram_modes[5] = {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W};
    static const struct tg_codelet_family fam[3] = {
        {"tg_kernelfn_%s", tg_cl_kernelfn, tg_kernelfn_cpu, TG_CUDA_FN(tg_kernelfn_cuda), 4,
         fn_modes, {TG_B_MEMORY, 1}},
        {"tg_kernelgram_%s", tg_cl_kernelgram, tg_kernelgram_cpu, TG_CUDA_FN(tg_kernelgram_cuda),
         5, gram_modes, {TG_B_DOT, 0}},
        {"tg_kernelstats_%s", tg_cl_kernelstats, tg_kernelstats_cpu,
         TG_CUDA_FN(tg_kernelstats_cuda), 5, gram_modes, {TG_B_DOT, 0}}};
    /* K is built in fp64 or fp32, or each tile in its map precision (fp16 for fp16 and fp8
     * tiles) after a statistics pass in the build precision */
    static const tg_prec precs[3] = {TG_FP64, TG_FP32, TG_FP16};
    tg_codelet_families_fill(fam, 2, precs, 3, models, symbols);
    tg_codelet_families_fill(fam + 2, 1, precs, 2, models + 2, symbols + 2);
}
