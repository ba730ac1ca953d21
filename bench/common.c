/* Helpers shared by the benchmarks (common.h). */
#define _GNU_SOURCE /* program_invocation_short_name */
#include "bench/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/out.h"
#include "runtime/runtime.h" /* config.h: TG_USE_CUDA */
#ifdef TG_USE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

void die(const char *what, const tg_error *err) {
    fprintf(stderr, "%s: %s%s%s\n", program_invocation_short_name, what ? what : "",
            what && err ? ": " : "", err ? err->msg : "");
    exit(1);
}

int in_list(const char *list, const char *name) {
    size_t len = strlen(name);
    for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
        if ((p == list || p[-1] == ',') && (!p[len] || p[len] == ',')) return 1;
    return 0;
}

double bench_gpu_gemm_rate(tg_prec prec) {
#ifdef TG_USE_CUDA
    const int n = 8192, int8 = prec == TG_INT8;
    const size_t es = tg_prec_size(prec), bytes = (size_t)n * n * es;
    void *a, *b, *c;
    cublasHandle_t h;
    if (cudaMalloc(&a, bytes) || cudaMalloc(&b, bytes) ||
        cudaMalloc(&c, int8 ? 4 * bytes : bytes) || cublasCreate(&h))
        return 0;
    cudaMemset(a, int8, bytes);
    cudaMemset(b, int8, bytes);
    const double one = 1, zero = 0;
    const float onef = 1, zerof = 0;
    const int32_t onei = 1, zeroi = 0;
    double best = 1e30;
    for (int rep = 0; rep < 6; rep++) {
        cudaDeviceSynchronize();
        double t0 = tg_now();
        if (prec == TG_FP64)
            cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
        else if (prec == TG_FP32)
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &onef, a, n, b, n, &zerof, c, n);
        else
            cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &onei, a, CUDA_R_8I, n, b,
                         CUDA_R_8I, n, &zeroi, c, CUDA_R_32I, n, CUBLAS_COMPUTE_32I,
                         CUBLAS_GEMM_DEFAULT);
        cudaDeviceSynchronize();
        const double t = tg_now() - t0;
        if (rep && t < best) best = t; /* rep 0 loads the kernel */
    }
    cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 2.0 * n * (double)n * n / best;
#else
    (void)prec;
    return 0;
#endif
}
