/* INT8 dot-product tiles on the CPU (the reference: plain integer loops that the compiler
 * vectorises) and the codelets. */
#include "codelets/distance.h"

#include <stdio.h>

#include "runtime/runtime.h"

struct starpu_codelet tg_cl_gram, tg_cl_gram_sym;
static struct starpu_perfmodel model_gram, model_gram_sym;

/* -O3 and per-ISA clones: GCC vectorises this widening reduction only with its full cost model,
 * and AVX2 doubles the width over the x86-64 baseline. */
__attribute__((optimize("O3"), target_clones("avx2", "default")))
static int32_t dot(const int8_t *restrict a, const int8_t *restrict b, size_t k) {
    int32_t s = 0;
    for (size_t t = 0; t < k; t++) s += (int32_t)a[t] * b[t];
    return s;
}

void tg_gram_tile(const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k, int32_t *c,
                  size_t ldc, size_t m, size_t n, int sym) {
    for (size_t j = 0; j < n; j++)
        for (size_t i = sym ? j : 0; i < m; i++) {
            c[i + j * ldc] = dot(a + i * lda, b + j * ldb, k);
            if (sym) c[j + i * ldc] = c[i + j * ldc];
        }
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

#ifdef TG_USE_CUDA
#define CUDA_FN(f) f
#else
#define CUDA_FN(f) NULL
#endif

void tg_distance_codelets_init(void) {
    static const enum starpu_data_access_mode rrw[3] = {STARPU_R, STARPU_R, STARPU_W},
                                              rw[2] = {STARPU_R, STARPU_W};
    tg_codelet_fill(&tg_cl_gram, &model_gram, "tg_gram_int8", tg_gram_cpu, CUDA_FN(tg_gram_cuda), 3,
                    rrw);
    tg_codelet_fill(&tg_cl_gram_sym, &model_gram_sym, "tg_gram_sym_int8", tg_gram_sym_cpu,
                    CUDA_FN(tg_gram_sym_cuda), 2, rw);
}
