/* What CUDA codelets need from the runtime: the calling worker's cuBLAS / cuBLASLt handles (bound
 * to its stream) and error checking. Kept apart from runtime.h so nvcc never sees MPI headers. */
#ifndef TG_RUNTIME_CUDA_H
#define TG_RUNTIME_CUDA_H
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cuda_runtime.h>
#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif
cublasHandle_t tg_cublas_handle(void);
cublasLtHandle_t tg_cublaslt_handle(void);
cusolverDnHandle_t tg_cusolver_handle(void);
/* Shared memory a block of the calling worker's device may opt in to (bytes). */
size_t tg_cuda_smem_optin(void);
/* Streaming multiprocessors of the calling worker's device. */
int tg_cuda_sm_count(void);
#ifdef __cplusplus
}
#endif

/* CUDA errors inside a codelet cannot be returned to the caller: report file:line and abort. */
#define TG_CUDA_CHECK(call)                                                                      \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess)                                                                   \
            STARPU_ABORT_MSG("CUDA error %s at %s:%d: %s", cudaGetErrorName(e_), __FILE__,       \
                             __LINE__, cudaGetErrorString(e_));                                  \
    } while (0)
#define TG_CUBLAS_CHECK(call)                                                                    \
    do {                                                                                         \
        cublasStatus_t s_ = (call);                                                              \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                         \
            STARPU_ABORT_MSG("cuBLAS error %d (%s) at %s:%d", (int)s_, cublasGetStatusString(s_), \
                             __FILE__, __LINE__);                                                \
    } while (0)
#endif
