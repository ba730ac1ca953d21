// Diagonal-tile codelets on the GPU: cuSOLVER potrf (info written straight into the StarPU
// variable, read by the caller after the wait), on the worker's cuSOLVER handle
// (tg_cusolver_handle, made by the runtime), and trtri by recursive doubling on GEMMs (Xtrtri
// for the sizes that do not split).
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

// ---- trtri: T = L⁻¹ by recursive doubling on tensor-free GEMMs (cuSOLVER's Xtrtri took 4.4 ms
// at nb 4096 and 0.7–2.5 ms at 2048 on the H100, on the factorisation's critical path). The
// diagonal blocks of size b0 (n = b0·2^levels, b0 ≤ TRTRI_BASE) are inverted by forward
// substitution in shared memory, one CTA each; then level by level, every pair of inverted
// blocks X11, X22 of size b gives the block below them, X21 = −X22·(L21·X11), as two strided
// batched GEMMs over all pairs of the level. Other n (odd multiples of large blocks, or a large
// block at double precision) go to Xtrtri.
constexpr int TRTRI_BASE = 128;

template <typename T> static int trtri_base(size_t n) {
    size_t b = n;
    while (b % 2 == 0 && b > 64) b /= 2;
    // its shared memory (L and X blocks) must fit the device's per-block limit
    return b <= (size_t)(sizeof(T) == 4 ? TRTRI_BASE : 64) && 2 * b * b * sizeof(T) <= tg_cuda_smem_optin()
               ? (int)b
               : 0;
}

// A b × b diagonal block's inverse, a thread per column j solving L·x = e_j right-looking:
// x_k /= l_kk, then x_i −= l_ik·x_k below. The threads walk (k, i) in step, so l_ik is one
// broadcast read and x sits in shared memory as [k][j] (consecutive threads, consecutive
// banks). The whole block of T is written (zeros above its diagonal).
template <typename T> __global__ static void trtri_blocks(const T *l, size_t ldl, T *t, size_t ldt, int b) {
    extern __shared__ __align__(16) unsigned char sm[];
    T *ls = (T *)sm, *xs = ls + (size_t)b * b;
    const size_t off = (size_t)blockIdx.x * b;
    for (int e = threadIdx.x; e < b * b; e += blockDim.x) {
        int r = e % b, c = e / b;
        ls[e] = l[off + r + (off + c) * ldl];
        xs[e] = r == c ? T(1) : T(0);
    }
    __syncthreads();
    const int j = threadIdx.x; // blockDim.x == b
    for (int k = 0; k < b; k++) {
        const T xk = xs[k * b + j] / ls[k + k * b];
        xs[k * b + j] = xk;
        for (int i = k + 1; i < b; i++) xs[i * b + j] -= ls[i + k * b] * xk;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < b * b; e += blockDim.x) {
        int r = e % b, c = e / b;
        t[off + r + (off + c) * ldt] = xs[r * b + c];
    }
}

// C_p = alpha·A_p·B_p for count n × n blocks p, strided, in T's own precision (no tensor cores)
template <typename T>
static cublasStatus_t gemm_batched(cublasHandle_t h, int n, T alpha, const T *a, int lda,
                                   long long sa, const T *b, int ldb, long long sb, T *c, int ldc,
                                   long long sc, int count) {
    const T zero = 0;
    const cudaDataType ty = sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
    return cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, ty, lda, sa,
                                      b, ty, ldb, sb, &zero, c, ty, ldc, sc, count,
                                      sizeof(T) == 8 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT);
}

template <typename T> static void trtri_doubling(const T *l, size_t ldl, T *t, size_t ldt, size_t n, int b0) {
    cudaStream_t st = starpu_cuda_get_local_stream();
    const size_t sm = 2 * (size_t)b0 * b0 * sizeof(T);
    TG_CUDA_CHECK(cudaFuncSetAttribute(trtri_blocks<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
    launch_zero_upper(t, ldt, n); // the base blocks and the levels write only on and below the diagonal
    trtri_blocks<T><<<(unsigned)(n / b0), b0, sm, st>>>(l, ldl, t, ldt, b0);
    TG_CUDA_CHECK(cudaGetLastError());
    if ((size_t)b0 == n) return;
    T *w = (T *)tg_cuda_scratch(3, n * n / 4 * sizeof(T));
    cublasHandle_t h = tg_cublas_handle();
    for (size_t b = b0; b < n; b *= 2) {
        const int count = (int)(n / (2 * b));
        const long long sl = (long long)(2 * b * (ldl + 1)), stt = (long long)(2 * b * (ldt + 1));
        // W = L21·X11, then X21 = −X22·W
        TG_CUBLAS_CHECK(gemm_batched(h, (int)b, T(1), l + b, (int)ldl, sl, t, (int)ldt, stt, w,
                                     (int)b, (long long)(b * b), count));
        TG_CUBLAS_CHECK(gemm_batched(h, (int)b, T(-1), t + b + b * ldt, (int)ldt, stt, w, (int)b,
                                     (long long)(b * b), t + b, (int)ldt, stt, count));
    }
}

extern "C" void tg_trtri_cuda(void *buffers[], void *cl_arg) {
    struct tg_trtri_arg s;
    starpu_codelet_unpack_args(cl_arg, &s);
    const void *l = (const void *)STARPU_MATRIX_GET_PTR(buffers[0]);
    void *t = (void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    size_t n = STARPU_MATRIX_GET_NX(buffers[0]), es = tg_prec_size(s.prec);
    size_t ldl = STARPU_MATRIX_GET_LD(buffers[0]), ldt = STARPU_MATRIX_GET_LD(buffers[1]);
    int b0 = s.prec == TG_FP64 ? trtri_base<double>(n) : trtri_base<float>(n);
    if (b0 && s.prec == TG_FP64) return trtri_doubling((const double *)l, ldl, (double *)t, ldt, n, b0);
    if (b0) return trtri_doubling((const float *)l, ldl, (float *)t, ldt, n, b0);
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
