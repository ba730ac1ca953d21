// The GRM's FP64 tile on the GPU: per chunk of 4,096 SNPs, a kernel widens both panels' int8
// encodings to Z = (e − δ)·√w in the worker's scratch (the same operations as the CPU, so Z is
// the same bits), then cuBLAS DSYRK (diagonal tiles) or DGEMM on the worker's handle and stream
// adds the chunk into S. The chunk keeps the scratch at (rows + cols) × 32 KiB (128 MiB for two
// panels of 2,048) while each product stays large enough for the tensor cores.
#include "codelets/gemm.h"
#include "codelets/grm.h"
#include "runtime/cuda.h"

enum { KC = 4096 };

// z (kc × cols) = Z of SNPs [k0, k0 + kc) of the cols samples of panel e: x over SNPs (coalesced
// reads of e and of the per-SNP terms), y over samples.
__global__ static void widen(const int8_t *e, size_t lde, int cols, const double *off,
                             const double *w, int k0, int kc, double *z) {
    for (int c = blockIdx.y; c < cols; c += gridDim.y)
        for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < kc; t += gridDim.x * blockDim.x) {
            int8_t v = e[k0 + t + c * lde];
            z[t + (size_t)c * kc] = v == TG_GRM_MISS ? 0.0 : (v - off[k0 + t]) * w[k0 + t];
        }
}

static void launch_widen(const int8_t *e, size_t lde, int cols, const double *off, const double *w,
                         int k0, int kc, double *z, cudaStream_t s) {
    const int threads = 256;
    dim3 grid((unsigned)((kc + threads - 1) / threads), (unsigned)(cols < 65535 ? cols : 65535));
    widen<<<grid, threads, 0, s>>>(e, lde, cols, off, w, k0, kc, z);
    TG_CUDA_CHECK(cudaGetLastError());
}

static void grm_tile(void *bi, void *bj, void *bv, void *bs, int sym) {
    const int8_t *ei = (const int8_t *)STARPU_MATRIX_GET_PTR(bi),
                 *ej = (const int8_t *)STARPU_MATRIX_GET_PTR(bj);
    const int k = (int)STARPU_MATRIX_GET_NX(bi);
    const size_t ldi = STARPU_MATRIX_GET_LD(bi), ldj = STARPU_MATRIX_GET_LD(bj);
    const double *off = (const double *)STARPU_VECTOR_GET_PTR(bv), *w = off + k;
    double *s = (double *)STARPU_MATRIX_GET_PTR(bs);
    const int cols = (int)STARPU_MATRIX_GET_NX(bs), rows = (int)STARPU_MATRIX_GET_NY(bs),
              lds = (int)STARPU_MATRIX_GET_LD(bs), kc0 = k < KC ? k : KC;
    // slot 0: tasks of one worker run in stream order, so kernelgram's and trsm's use of it
    // never overlaps this one
    double *za = (double *)tg_cuda_scratch(0, (size_t)(rows + (sym ? 0 : cols)) * kc0 *
                                                  sizeof(double)),
           *zb = sym ? za : za + (size_t)rows * kc0;
    cudaStream_t st = starpu_cuda_get_local_stream();
    cublasHandle_t h = tg_cublas_handle();
    const double one = 1, zero = 0;
    for (int k0 = 0; k0 < k; k0 += KC) {
        const int kc = k - k0 < KC ? k - k0 : KC;
        const double *beta = k0 ? &one : &zero; // the first chunk overwrites S
        launch_widen(ei, ldi, rows, off, w, k0, kc, za, st);
        if (sym) {
            TG_CUBLAS_CHECK(cublasDsyrk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, rows, kc, &one, za,
                                        kc, beta, s, lds));
        } else {
            launch_widen(ej, ldj, cols, off, w, k0, kc, zb, st);
            TG_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, kc, &one, zb, kc,
                                        za, kc, beta, s, lds));
        }
    }
}

extern "C" void tg_grm_cuda(void *buffers[], void *) {
    grm_tile(buffers[0], buffers[1], buffers[2], buffers[3], 0);
}

extern "C" void tg_grm_sym_cuda(void *buffers[], void *) {
    grm_tile(buffers[0], buffers[0], buffers[1], buffers[2], 1);
}
