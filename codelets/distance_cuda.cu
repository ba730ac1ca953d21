// INT8 dot-product tiles on the GPU: one cublasGemmEx, INT8 inputs, INT32 output and compute, in
// the TN layout (both panels hold one sample, or one SNP, per column: k contiguous), which is
// the layout cuBLAS's INT8 tensor-core kernels take. The symmetric form computes the whole tile:
// diagonal tiles are 1/NT of the work, and a full tile keeps C symmetric for the kernel function.
#include "codelets/distance.h"
#include "runtime/cuda.h"

static void gram(void *ba, void *bb, void *bc) {
    const int32_t one = 1, zero = 0;
    int k = (int)STARPU_MATRIX_GET_NX(ba), m = (int)STARPU_MATRIX_GET_NX(bc),
        n = (int)STARPU_MATRIX_GET_NY(bc);
    TG_CUBLAS_CHECK(cublasGemmEx(tg_cublas_handle(), CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one,
                                 (const void *)STARPU_MATRIX_GET_PTR(ba), CUDA_R_8I,
                                 (int)STARPU_MATRIX_GET_LD(ba),
                                 (const void *)STARPU_MATRIX_GET_PTR(bb), CUDA_R_8I,
                                 (int)STARPU_MATRIX_GET_LD(bb), &zero,
                                 (void *)STARPU_MATRIX_GET_PTR(bc), CUDA_R_32I,
                                 (int)STARPU_MATRIX_GET_LD(bc), CUBLAS_COMPUTE_32I,
                                 CUBLAS_GEMM_DEFAULT));
}

extern "C" void tg_gram_cuda(void *buffers[], void *) { gram(buffers[0], buffers[1], buffers[2]); }

extern "C" void tg_gram_sym_cuda(void *buffers[], void *) {
    gram(buffers[0], buffers[0], buffers[1]);
}
