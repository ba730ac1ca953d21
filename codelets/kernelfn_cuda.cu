// The fused kernel-function tile on the GPU: one kernel templated on K's element type (double,
// float, or half: a tile built directly in its map precision), one thread per entry (x over
// rows: coalesced reads of C, Ti and K). The distance is FP64 (s_i + s_j − 2c_ij is an exact
// integer; the confounder sum and ibs use the same explicit fma as the CPU, so nvcc's
// contraction changes nothing), exp is FP64, the result is rounded once at the store. So CPU and
// GPU agree to 1 ulp in fp32 and fp16 tiles and to 2 ulp in fp64 tiles (CUDA's and glibc's exp
// are each within 1 ulp); ibs and linear tiles agree bit for bit.
#include <cuda_fp16.h>

#include "codelets/distance.h"
#include "codelets/gemm.h"
#include "codelets/kernelfn.h"
#include "runtime/cuda.h"

// Rounded to nearest even, as tg_prec_store.
__device__ static void put(double *k, double v) { *k = v; }
__device__ static void put(float *k, double v) { *k = __double2float_rn(v); }
__device__ static void put(__half *k, double v) { *k = __double2half(v); }

template <typename T>
__global__ static void kernelfn_kernel(tg_kernelfn_arg a, const int32_t *c, size_t ldc,
                                       const double *ti, size_t ldi, const double *tj, size_t ldj,
                                       T *k, size_t ldk, size_t m, size_t n) {
    for (size_t j = blockIdx.y; j < n; j += gridDim.y)
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < m;
             i += (size_t)gridDim.x * blockDim.x) {
            double cij = c[i + j * ldc], v;
            if (a.kind == TG_KERNEL_LINEAR) {
                v = (cij - ti[i] - tj[j] + a.c0) * a.c1;
            } else {
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
            if (a.diag && i == j) v = __dadd_rn(v, a.alpha); // never fused with the product above
            put(k + i + j * ldk, v);
        }
}

// K (m × n, precision a.prec) from the INT32 tile c and the terms, on the worker's stream.
static void launch(const tg_kernelfn_arg &a, const int32_t *c, size_t ldc, const double *ti,
                   size_t ldi, const double *tj, size_t ldj, void *k, size_t ldk, size_t m,
                   size_t n) {
    const unsigned threads = 128;
    size_t bx = (m + threads - 1) / threads;
    dim3 grid((unsigned)(bx < 1024 ? bx : 1024), (unsigned)(n < 65535 ? n : 65535));
    cudaStream_t s = starpu_cuda_get_local_stream();
    if (a.prec == TG_FP64)
        kernelfn_kernel<double><<<grid, threads, 0, s>>>(a, c, ldc, ti, ldi, tj, ldj, (double *)k,
                                                         ldk, m, n);
    else if (a.prec == TG_FP32)
        kernelfn_kernel<float><<<grid, threads, 0, s>>>(a, c, ldc, ti, ldi, tj, ldj, (float *)k,
                                                        ldk, m, n);
    else if (a.prec == TG_FP16)
        kernelfn_kernel<__half><<<grid, threads, 0, s>>>(a, c, ldc, ti, ldi, tj, ldj, (__half *)k,
                                                         ldk, m, n);
    else
        STARPU_ABORT_MSG("kernel function: %s tiles are not built (fp64, fp32 or fp16)",
                         tg_prec_name(a.prec));
    TG_CUDA_CHECK(cudaGetLastError());
}

static const double *terms(void *b) { return (const double *)STARPU_MATRIX_GET_PTR(b); }

extern "C" void tg_kernelfn_cuda(void *buffers[], void *cl_arg) {
    tg_kernelfn_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    launch(a, (const int32_t *)STARPU_MATRIX_GET_PTR(buffers[0]), STARPU_MATRIX_GET_LD(buffers[0]),
           terms(buffers[1]), STARPU_MATRIX_GET_LD(buffers[1]), terms(buffers[2]),
           STARPU_MATRIX_GET_LD(buffers[2]), (void *)STARPU_MATRIX_GET_PTR(buffers[3]),
           STARPU_MATRIX_GET_LD(buffers[3]), STARPU_MATRIX_GET_NX(buffers[3]),
           STARPU_MATRIX_GET_NY(buffers[3]));
}

// The dot products into the worker's scratch (slot 0, shared with trsm: tasks of one worker run
// in stream order), then the kernel function into @p k: no INT32 tile is ever allocated.
static void gram_and_kernel(const tg_kernelfn_arg &a, void *buffers[], void *k, size_t ldk,
                            size_t m, size_t n) {
    int32_t *c = (int32_t *)tg_cuda_scratch(0, m * n * sizeof(int32_t));
    tg_gram_tile_cuda((const int8_t *)STARPU_MATRIX_GET_PTR(buffers[0]),
                      (int)STARPU_MATRIX_GET_LD(buffers[0]),
                      (const int8_t *)STARPU_MATRIX_GET_PTR(buffers[1]),
                      (int)STARPU_MATRIX_GET_LD(buffers[1]), (int)STARPU_MATRIX_GET_NX(buffers[0]),
                      c, (int)m, (int)m, (int)n);
    launch(a, c, m, terms(buffers[2]), STARPU_MATRIX_GET_LD(buffers[2]), terms(buffers[3]),
           STARPU_MATRIX_GET_LD(buffers[3]), k, ldk, m, n);
}

extern "C" void tg_kernelgram_cuda(void *buffers[], void *cl_arg) {
    tg_kernelfn_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    gram_and_kernel(a, buffers, (void *)STARPU_MATRIX_GET_PTR(buffers[4]),
                    STARPU_MATRIX_GET_LD(buffers[4]), STARPU_MATRIX_GET_NX(buffers[4]),
                    STARPU_MATRIX_GET_NY(buffers[4]));
}

// The tile in the worker's scratch slot 4, reduced there (tg_tile_stats_launch: slot 1).
extern "C" void tg_kernelstats_cuda(void *buffers[], void *cl_arg) {
    tg_kernelfn_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    size_t m = STARPU_MATRIX_GET_NY(buffers[0]), n = STARPU_MATRIX_GET_NY(buffers[1]);
    void *k = tg_cuda_scratch(4, m * n * tg_prec_size(a.prec));
    gram_and_kernel(a, buffers, k, m, m, n);
    tg_tile_stats_launch(a.prec, k, m, m, n, a.diag, 1.0,
                         (double *)STARPU_VARIABLE_GET_PTR(buffers[4]),
                         starpu_cuda_get_local_stream());
}
