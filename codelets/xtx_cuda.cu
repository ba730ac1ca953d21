// The RR finishing codelet on the GPU: one thread per tile entry, the formula of xtx.h in FP64,
// stored as T (double or float: the tile's precision).
#include "codelets/xtx.h"
#include "runtime/cuda.h"

template <typename T>
__global__ void xtx_kernel(tg_xtx_arg a, const int32_t *c32, size_t ldc, const double *vj,
                           const double *vk, T *t, size_t ld, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols)
        t[r + c * ld] =
            (T)tg_xtx_entry(&a, c32, ldc, rows, cols, vj, vj + rows, vk, vk + cols, r, c);
}

template <typename T>
static void launch(const tg_xtx_arg &a, void *buffers[], int rows, int cols) {
    dim3 block(32, 8), grid((rows + 31) / 32, (cols + 7) / 8);
    xtx_kernel<T><<<grid, block, 0, starpu_cuda_get_local_stream()>>>(
        a, (const int32_t *)STARPU_MATRIX_GET_PTR(buffers[0]), STARPU_MATRIX_GET_LD(buffers[0]),
        (const double *)STARPU_VECTOR_GET_PTR(buffers[1]),
        (const double *)STARPU_VECTOR_GET_PTR(buffers[2]), (T *)STARPU_MATRIX_GET_PTR(buffers[3]),
        STARPU_MATRIX_GET_LD(buffers[3]), rows, cols);
    TG_CUDA_CHECK(cudaGetLastError());
}

extern "C" void tg_xtx_cuda(void *buffers[], void *cl_arg) {
    tg_xtx_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    int rows = (int)STARPU_MATRIX_GET_NX(buffers[3]), cols = (int)STARPU_MATRIX_GET_NY(buffers[3]);
    if (a.prec == TG_FP64)
        launch<double>(a, buffers, rows, cols);
    else
        launch<float>(a, buffers, rows, cols);
}
