/* INT8 dot-product tiles on the CPU and the codelets. The products run as single-precision
 * GEMMs (OpenBLAS, one thread per worker) on panels widened chunk by chunk: every int8 product
 * is at most 128² = 2^14 in magnitude, so a chunk of 1024 entries sums to less than 2^24 and
 * its float result is exact; chunks add up in int32. 5.4× the integer loop the compiler
 * vectorised (bench/krr --cpu on 2 AVX-512 cores), and the same integers. */
#include "codelets/distance.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/runtime.h"

struct starpu_codelet tg_cl_gram, tg_cl_gram_sym;
static struct starpu_perfmodel model_gram, model_gram_sym;

enum { CHUNK = 1024 }; /* entries per exact float GEMM: CHUNK · 2^14 ≤ 2^24 */

/* Columns [0, cols) of panel x (ld entries apart), entries [k0, k0 + kc), as floats. */
static void widen(const int8_t *x, size_t ld, size_t cols, size_t k0, size_t kc, float *out) {
    for (size_t c = 0; c < cols; c++)
        for (size_t t = 0; t < kc; t++) out[t + c * kc] = x[k0 + t + c * ld];
}

void tg_gram_tile(const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k, int32_t *c,
                  size_t ldc, size_t m, size_t n, int sym) {
    size_t kc0 = k < CHUNK ? k : CHUNK;
    float *fa = malloc((sym ? m : m + n) * kc0 * sizeof *fa + 1),
          *fc = malloc(m * n * sizeof *fc + 1);
    if (!fa || !fc) STARPU_ABORT_MSG("out of memory for a %zu x %zu dot-product tile", m, n);
    float *fb = sym ? fa : fa + m * kc0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++) c[i + j * ldc] = 0;
    for (size_t k0 = 0; k0 < k; k0 += CHUNK) {
        size_t kc = k - k0 < CHUNK ? k - k0 : CHUNK;
        widen(a, lda, m, k0, kc, fa);
        if (!sym) widen(b, ldb, n, k0, kc, fb);
        cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)m, (int)n, (int)kc, 1.0f, fa,
                    (int)kc, fb, (int)kc, 0.0f, fc, (int)m);
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < m; i++) c[i + j * ldc] += (int32_t)fc[i + j * m];
    }
    free(fa);
    free(fc);
}

static void gram(void *ba, void *bb, void *bc, int sym) {
    tg_gram_tile((const int8_t *)STARPU_MATRIX_GET_PTR(ba), STARPU_MATRIX_GET_LD(ba),
                 (const int8_t *)STARPU_MATRIX_GET_PTR(bb), STARPU_MATRIX_GET_LD(bb),
                 STARPU_MATRIX_GET_NX(ba), (int32_t *)STARPU_MATRIX_GET_PTR(bc),
                 STARPU_MATRIX_GET_LD(bc), STARPU_MATRIX_GET_NX(bc), STARPU_MATRIX_GET_NY(bc), sym);
}

void tg_gram_cpu(void *buffers[], void *cl_arg) {
    (void)cl_arg;
    gram(buffers[0], buffers[1], buffers[2], 0);
}

void tg_gram_sym_cpu(void *buffers[], void *cl_arg) {
    (void)cl_arg;
    gram(buffers[0], buffers[0], buffers[1], 1);
}

int tg_insert_gram(starpu_data_handle_t a, starpu_data_handle_t b, starpu_data_handle_t c,
                   int priority) {
    double ops = 2.0 * starpu_matrix_get_nx(a) * starpu_matrix_get_ny(a) * starpu_matrix_get_ny(b);
    if (a == b)
        return TG_INSERT(&tg_cl_gram_sym, STARPU_R, a, STARPU_W, c, STARPU_PRIORITY, priority,
                         STARPU_FLOPS, ops, 0);
    return TG_INSERT(&tg_cl_gram, STARPU_R, a, STARPU_R, b, STARPU_W, c, STARPU_PRIORITY, priority,
                     STARPU_FLOPS, ops, 0);
}

void tg_distance_codelets_init(void) {
    static const enum starpu_data_access_mode rrw[3] = {STARPU_R, STARPU_R, STARPU_W},
                                              rw[2] = {STARPU_R, STARPU_W};
    tg_codelet_fill(&tg_cl_gram, &model_gram, "tg_gram_int8", tg_gram_cpu,
                    TG_CUDA_FN(tg_gram_cuda), 3, rrw);
    tg_codelet_fill(&tg_cl_gram_sym, &model_gram_sym, "tg_gram_sym_int8", tg_gram_sym_cpu,
                    TG_CUDA_FN(tg_gram_sym_cuda), 2, rw);
}
