// INT8 dot-product tiles on the GPU: one cublasGemmEx, INT8 inputs, INT32 output and compute, in
// the TN layout (both panels hold one sample, or one SNP, per column: k contiguous), which is
// the layout cuBLAS's INT8 tensor-core kernels take. The symmetric form computes the whole tile:
// diagonal tiles are 1/NT of the work, and a full tile keeps C symmetric for the kernel function.
#include "codelets/distance.h"
#include "runtime/cuda.h"

extern "C" void tg_gram_tile_cuda(const int8_t *a, int lda, const int8_t *b, int ldb, int k,
                                  int32_t *c, int ldc, int m, int n) {
    const int32_t one = 1, zero = 0;
    TG_CUBLAS_CHECK(cublasGemmEx(tg_cublas_handle(), CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a,
                                 CUDA_R_8I, lda, b, CUDA_R_8I, ldb, &zero, c, CUDA_R_32I, ldc,
                                 CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
}

static void gram(void *ba, void *bb, void *bc) {
    tg_gram_tile_cuda((const int8_t *)STARPU_MATRIX_GET_PTR(ba), (int)STARPU_MATRIX_GET_LD(ba),
                      (const int8_t *)STARPU_MATRIX_GET_PTR(bb), (int)STARPU_MATRIX_GET_LD(bb),
                      (int)STARPU_MATRIX_GET_NX(ba), (int32_t *)STARPU_MATRIX_GET_PTR(bc),
                      (int)STARPU_MATRIX_GET_LD(bc), (int)STARPU_MATRIX_GET_NX(bc),
                      (int)STARPU_MATRIX_GET_NY(bc));
}

extern "C" void tg_gram_cuda(void *buffers[], void *) { gram(buffers[0], buffers[1], buffers[2]); }

extern "C" void tg_gram_sym_cuda(void *buffers[], void *) {
    gram(buffers[0], buffers[0], buffers[1]);
}
