// Diagonal-tile codelets on the GPU: cuSOLVER potrf (info written straight into the StarPU
// variable, read by the caller after the wait) and Xtrtri, on the worker's cuSOLVER handle
// (tg_cusolver_handle, made by the runtime).
#include "codelets/gemm.h"
#include "codelets/potrf.h"
#include "runtime/cuda.h"

#define TG_CUSOLVER_CHECK(call)                                                                  \
    do {                                                                                         \
        cusolverStatus_t s_ = (call);                                                            \
        if (s_ != CUSOLVER_STATUS_SUCCESS)                                                       \
            STARPU_ABORT_MSG("cuSOLVER error %d at %s:%d", (int)s_, __FILE__, __LINE__);          \
    } while (0)

// Zeroes the strict upper triangle of an n × n tile, so the tile holds exactly L.
template <typename T> __global__ static void zero_upper(T *a, size_t ld, size_t n) {
    for (size_t j = blockIdx.y + 1; j < n; j += gridDim.y)
        for (size_t i = threadIdx.x; i < j; i += blockDim.x) a[i + j * ld] = 0;
}

template <typename T> static void launch_zero_upper(T *a, size_t ld, size_t n) {
    if (n < 2) return;
    zero_upper<<<dim3(1, (unsigned)(n < 65535 ? n : 65535)), 256, 0,
                 starpu_cuda_get_local_stream()>>>(a, ld, n);
    TG_CUDA_CHECK(cudaGetLastError());
}

extern "C" void tg_potrf_cuda(void *buffers[], void *cl_arg) {
    struct tg_potrf_arg s;
    starpu_codelet_unpack_args(cl_arg, &s);
    void *a = (void *)STARPU_MATRIX_GET_PTR(buffers[0]);
    int n = (int)STARPU_MATRIX_GET_NX(buffers[0]), ld = (int)STARPU_MATRIX_GET_LD(buffers[0]);
    int *info = (int *)STARPU_VARIABLE_GET_PTR(buffers[1]); // device memory
    cusolverDnHandle_t h = tg_cusolver_handle();
    int lwork = 0;
    if (s.prec == TG_FP64) {
        TG_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, (double *)a, ld, &lwork));
        double *w = (double *)tg_cuda_scratch(3, (size_t)lwork * sizeof(double) + 1);
        TG_CUSOLVER_CHECK(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, (double *)a, ld, w, lwork, info));
        launch_zero_upper((double *)a, (size_t)ld, (size_t)n);
    } else {
        TG_CUSOLVER_CHECK(cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, (float *)a, ld, &lwork));
        float *w = (float *)tg_cuda_scratch(3, (size_t)lwork * sizeof(float) + 1);
        TG_CUSOLVER_CHECK(cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, (float *)a, ld, w, lwork, info));
        launch_zero_upper((float *)a, (size_t)ld, (size_t)n);
    }
}

extern "C" void tg_trtri_cuda(void *buffers[], void *cl_arg) {
    struct tg_trtri_arg s;
    starpu_codelet_unpack_args(cl_arg, &s);
    const void *l = (const void *)STARPU_MATRIX_GET_PTR(buffers[0]);
    void *t = (void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    size_t n = STARPU_MATRIX_GET_NX(buffers[0]), es = tg_prec_size(s.prec);
    size_t ldl = STARPU_MATRIX_GET_LD(buffers[0]), ldt = STARPU_MATRIX_GET_LD(buffers[1]);
    cudaStream_t stream = starpu_cuda_get_local_stream();
    TG_CUDA_CHECK(cudaMemcpy2DAsync(t, ldt * es, l, ldl * es, n * es, n, cudaMemcpyDeviceToDevice, stream));
    cudaDataType type = s.prec == TG_FP64 ? CUDA_R_64F : CUDA_R_32F;
    cusolverDnHandle_t h = tg_cusolver_handle();
    size_t dev_bytes = 0, host_bytes = 0;
    TG_CUSOLVER_CHECK(cusolverDnXtrtri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT,
                                                  (int64_t)n, type, t, (int64_t)ldt, &dev_bytes,
                                                  &host_bytes));
    // device workspace, then info (L is non-singular after a successful potrf: info stays 0)
    size_t off = (dev_bytes + 15) / 16 * 16;
    char *w = (char *)tg_cuda_scratch(3, off + sizeof(int));
    // the host workspace must outlive the asynchronous call: one per worker, kept
    static void *host_ws[STARPU_NMAXWORKERS];
    static size_t host_len[STARPU_NMAXWORKERS];
    int id = starpu_worker_get_id_check();
    if (host_len[id] < host_bytes) {
        TG_CUDA_CHECK(cudaStreamSynchronize(stream));
        free(host_ws[id]);
        host_ws[id] = malloc(host_bytes);
        if (!host_ws[id]) STARPU_ABORT_MSG("out of memory (trtri host workspace)");
        host_len[id] = host_bytes;
    }
    TG_CUSOLVER_CHECK(cusolverDnXtrtri(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, (int64_t)n,
                                       type, t, (int64_t)ldt, w, dev_bytes, host_ws[id],
                                       host_bytes, (int *)(w + off)));
}
