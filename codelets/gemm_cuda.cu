// Tile BLAS-3 codelets on the GPU. gemm: one cublasGemmEx call driven by a per-precision type
// table (FP64, FP32, FP16 inputs with FP32 compute); FP8 E4M3 inputs on cuBLASLt in its TN
// layout with the FP16 tile as C and D.
// trsm by the inverse: a copy and a GEMM (cuBLAS TRSM is ~14× slower than GEMM at nb 1024); for
// a tile stored in FP16, an FP16 GEMM in place of the tile with T's scaled FP16 copy, made once
// per panel by half_scaled (T's largest |entry|, then T·s rounded to FP16).
#include <cuda_fp16.h>
#include <stdint.h>

#include "codelets/gemm.h"
#include "runtime/cuda.h"

// ---- per-worker scratch (each worker touches only its own row: no lock)
static struct {
    void *p;
    size_t bytes;
} scratch[STARPU_NMAXWORKERS][5];

extern "C" void *tg_cuda_scratch(int slot, size_t bytes) {
    auto &s = scratch[starpu_worker_get_id_check()][slot];
    if (s.bytes < bytes) {
        // cudaFree synchronises the device, so earlier tasks still using the buffer are done
        if (s.p) TG_CUDA_CHECK(cudaFree(s.p));
        TG_CUDA_CHECK(cudaMalloc(&s.p, bytes));
        s.bytes = bytes;
    }
    return s.p;
}

// ---- cuBLAS types per precision (FP16: FP16 storage, FP32 compute)
struct blas_type {
    cudaDataType data;
    cublasComputeType_t compute;
    int double_scalars;
};
static blas_type blas_type_of(tg_prec p) {
    switch (p) {
    case TG_FP64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F, 1};
    case TG_FP32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F, 0};
    case TG_FP16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, 0};
    default: STARPU_ABORT_MSG("no cuBLAS GEMM for %s tiles", tg_prec_name(p));
    }
    return {};
}

static cublasOperation_t op(char t) { return t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N; }

// C = beta·C + alpha·op(A)·op(B), all of t's data type; alpha and beta point to scalars of t's
// scalar type, on the host, or on the device in the handle's device pointer mode.
static cublasStatus_t gemm_at(blas_type t, char ta, char tb, int m, int n, int k, const void *alpha,
                              const void *a, int lda, const void *b, int ldb, const void *beta,
                              void *c, int ldc) {
    return cublasGemmEx(tg_cublas_handle(), op(ta), op(tb), m, n, k, alpha, a, t.data, lda, b,
                        t.data, ldb, beta, c, t.data, ldc, t.compute, CUBLAS_GEMM_DEFAULT);
}

// gemm_at with the scalars given by value.
static void gemm_ex(blas_type t, char ta, char tb, int m, int n, int k, double alpha, const void *a,
                    int lda, const void *b, int ldb, double beta, void *c, int ldc) {
    float fa = (float)alpha, fb = (float)beta;
    const void *pa = t.double_scalars ? (const void *)&alpha : (const void *)&fa;
    const void *pb = t.double_scalars ? (const void *)&beta : (const void *)&fb;
    TG_CUBLAS_CHECK(gemm_at(t, ta, tb, m, n, k, pa, a, lda, b, ldb, pb, c, ldc));
}

static struct {
    int valid, m, n, k, lda, ldb, ldc;
    cublasLtMatmulAlgo_t algo;
} lt_algo[STARPU_NMAXWORKERS];

// FP8: C = beta·C + alpha·Aᵀ·B on cuBLASLt, E4M3 inputs, FP32 compute, C (and D: in place) the
// tile's FP16 storage.
static void gemm_fp8(int m, int n, int k, float alpha, const void *a, int lda, const void *b,
                     int ldb, float beta, __half *c, int ldc) {
    if (m % 16 || n % 16 || k % 16)
        STARPU_ABORT_MSG("FP8 GEMM %d x %d x %d: cuBLASLt needs multiples of 16 (the precision map "
                         "never gives FP8 to such tiles)", m, n, k);
    const size_t ws_bytes = 32u << 20;
    void *ws = tg_cuda_scratch(2, ws_bytes);

    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    TG_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    TG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    TG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    TG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, m, lda));
    TG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, n, ldb));
    TG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, m, n, ldc));
    cublasLtMatmulPreference_t pref;
    TG_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    TG_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    // split-K partials summed in FP32, never in the FP16 output
    const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    TG_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes, sizeof schemes));
    cublasLtHandle_t lt = tg_cublaslt_handle();
    // the heuristic query costs about as much as a 2048³ FP8 GEMM: keep the last answer per worker
    auto &cache = lt_algo[starpu_worker_get_id_check()];
    if (!cache.valid || cache.m != m || cache.n != n || cache.k != k || cache.lda != lda ||
        cache.ldb != ldb || cache.ldc != ldc) {
        cublasLtMatmulHeuristicResult_t heur;
        int found = 0;
        TG_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &heur, &found));
        if (!found) STARPU_ABORT_MSG("cuBLASLt has no FP8 algorithm for %d x %d x %d", m, n, k);
        cache = {1, m, n, k, lda, ldb, ldc, heur.algo};
    }
    TG_CUBLAS_CHECK(cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, c, lc, c, lc,
                                   &cache.algo, ws, ws_bytes, starpu_cuda_get_local_stream()));
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
}

extern "C" void tg_gemm_cuda(void *buffers[], void *cl_arg) {
    struct tg_gemm_arg g;
    starpu_codelet_unpack_args(cl_arg, &g);
    int m = (int)STARPU_MATRIX_GET_NX(buffers[2]), n = (int)STARPU_MATRIX_GET_NY(buffers[2]);
    int k = (int)(g.ta == 'N' ? STARPU_MATRIX_GET_NY(buffers[0]) : STARPU_MATRIX_GET_NX(buffers[0]));
    const void *a = (const void *)STARPU_MATRIX_GET_PTR(buffers[0]);
    const void *b = (const void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    void *c = (void *)STARPU_MATRIX_GET_PTR(buffers[2]);
    int lda = (int)STARPU_MATRIX_GET_LD(buffers[0]), ldb = (int)STARPU_MATRIX_GET_LD(buffers[1]),
        ldc = (int)STARPU_MATRIX_GET_LD(buffers[2]);
    double alpha = g.alpha * g.sc / (g.sa * g.sb); // on stored values, as the CPU path
    if (g.prec == TG_FP8_E4M3) {
        if (g.ta != 'T' || g.tb != 'N') STARPU_ABORT_MSG("FP8 GEMM needs the TN layout");
        gemm_fp8(m, n, k, (float)alpha, a, lda, b, ldb, (float)g.beta, (__half *)c, ldc);
    } else {
        gemm_ex(blas_type_of(g.prec), g.ta, g.tb, m, n, k, alpha, a, lda, b, ldb, g.beta, c, ldc);
    }
}

extern "C" void tg_syrk_cuda(void *buffers[], void *cl_arg) {
    struct tg_syrk_arg s;
    starpu_codelet_unpack_args(cl_arg, &s);
    int n = (int)STARPU_MATRIX_GET_NX(buffers[1]), k = (int)STARPU_MATRIX_GET_NY(buffers[0]);
    int lda = (int)STARPU_MATRIX_GET_LD(buffers[0]), ldc = (int)STARPU_MATRIX_GET_LD(buffers[1]);
    void *a = (void *)STARPU_MATRIX_GET_PTR(buffers[0]), *c = (void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    if (s.prec == TG_FP16) {
        const float m1 = -1, one = 1;
        TG_CUBLAS_CHECK(cublasGemmEx(tg_cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_T, n, n, k, &m1, a,
                                     CUDA_R_16F, lda, a, CUDA_R_16F, lda, &one, c, CUDA_R_32F, ldc,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if (s.prec == TG_FP64) {
        const double m1 = -1, one = 1;
        TG_CUBLAS_CHECK(cublasDsyrk(tg_cublas_handle(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k,
                                    &m1, (const double *)a, lda, &one, (double *)c, ldc));
    } else {
        const float m1 = -1, one = 1;
        TG_CUBLAS_CHECK(cublasSsyrk(tg_cublas_handle(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k,
                                    &m1, (const float *)a, lda, &one, (float *)c, ldc));
    }
}

// half_scaled (gemm.h): |T| reduced to its largest entry, then T·s rounded to FP16 with s a
// power of two that puts that entry near 2^14 (L⁻¹ of an ill-conditioned tile exceeds FP16's
// range, and tiny entries would lose bits as subnormals); alpha = 1/s and beta = 0 into its
// variable.
__global__ static void absmax_kernel(const float *t, int rows, int cols, int ld, unsigned *bits) {
    float m = 0;
    for (int j = blockIdx.x; j < cols; j += gridDim.x) // a column per block: coalesced, no division
        for (int i = threadIdx.x; i < rows; i += blockDim.x)
            m = fmaxf(m, fabsf(t[i + (size_t)j * ld]));
    for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) atomicMax(bits, __float_as_uint(m)); // ordered as m ≥ 0
}

__global__ static void scale_half_kernel(const float *t, int rows, int cols, int ld,
                                         const unsigned *bits, __half *h, int ldh, float *ab) {
    // exact powers of two: only the FP16 rounding errs (a product below FLT_MIN rounds to ±0 in
    // FP16 either way), so this is the CPU's round16(t·s) bit for bit
    const float s = ldexpf(1.0f, 14 - tg_half_scale_exp(__uint_as_float(*bits)));
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ab[0] = 1.0f / s;
        ab[1] = 0;
    }
    for (int j = blockIdx.x; j < cols; j += gridDim.x)
        for (int i = threadIdx.x; i < rows; i += blockDim.x)
            h[i + (size_t)j * ldh] = __float2half_rn(t[i + (size_t)j * ld] * s);
}

extern "C" void tg_half_scaled_cuda(void *buffers[], void *cl_arg) {
    (void)cl_arg;
    const float *t = (const float *)STARPU_MATRIX_GET_PTR(buffers[0]);
    __half *h = (__half *)STARPU_MATRIX_GET_PTR(buffers[1]);
    int rows = (int)STARPU_MATRIX_GET_NX(buffers[0]), cols = (int)STARPU_MATRIX_GET_NY(buffers[0]),
        ld = (int)STARPU_MATRIX_GET_LD(buffers[0]), ldh = (int)STARPU_MATRIX_GET_LD(buffers[1]);
    cudaStream_t st = starpu_cuda_get_local_stream();
    unsigned *bits = (unsigned *)tg_cuda_scratch(1, sizeof(unsigned));
    TG_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof *bits, st));
    const int blocks = 264, threads = 256;
    absmax_kernel<<<blocks, threads, 0, st>>>(t, rows, cols, ld, bits);
    scale_half_kernel<<<blocks, threads, 0, st>>>(t, rows, cols, ld, bits, h, ldh,
                                                  (float *)STARPU_VARIABLE_GET_PTR(buffers[2]));
    TG_CUDA_CHECK(cudaGetLastError());
}

extern "C" void tg_trsm_cuda(void *buffers[], void *cl_arg) {
    struct tg_trsm_arg s;
    starpu_codelet_unpack_args(cl_arg, &s);
    const void *t = (const void *)STARPU_MATRIX_GET_PTR(buffers[0]);
    void *xb = buffers[tg_cl_trsm[s.prec].nbuffers - 1]; // the fp16 entry: T16, alpha, X
    void *x = (void *)STARPU_MATRIX_GET_PTR(xb);
    int m = (int)STARPU_MATRIX_GET_NX(xb), n = (int)STARPU_MATRIX_GET_NY(xb);
    int ldt = (int)STARPU_MATRIX_GET_LD(buffers[0]), ldx = (int)STARPU_MATRIX_GET_LD(xb);
    // X ← W·op(T) or op(T)·W from a copy W. The fp16 entry: X is the FP16 tile itself, T its
    // FP16 copy T16, the product on FP16 tensor cores with FP32 accumulation (blas_type_of) and
    // rounded to FP16 once; its alpha (1/s: T16·alpha is T rounded to FP16, 10 bits, as TF32
    // kept) and beta, half_scaled's variable, are read from device memory, so nothing waits for
    // half_scaled on the host
    blas_type bt = blas_type_of(s.prec);
    size_t es = tg_prec_size(s.prec);
    void *w = tg_cuda_scratch(0, (size_t)m * n * es);
    TG_CUDA_CHECK(cudaMemcpy2DAsync(w, (size_t)m * es, x, (size_t)ldx * es, (size_t)m * es,
                                    (size_t)n, cudaMemcpyDeviceToDevice,
                                    starpu_cuda_get_local_stream()));
    const double one = 1, zero = 0;
    const float onef = 1, zerof = 0;
    const void *alpha = bt.double_scalars ? (const void *)&one : (const void *)&onef;
    const void *beta = bt.double_scalars ? (const void *)&zero : (const void *)&zerof;
    cublasHandle_t h = tg_cublas_handle(); // its math mode keeps FP32 reductions (runtime.c)
    if (s.prec == TG_FP16) {
        alpha = (const float *)STARPU_VARIABLE_GET_PTR(buffers[1]);
        beta = (const float *)alpha + 1;
        TG_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    }
    cublasStatus_t r = s.side == 'R'
                           ? gemm_at(bt, 'N', s.trans, m, n, n, alpha, w, m, t, ldt, beta, x, ldx)
                           : gemm_at(bt, s.trans, 'N', m, n, m, alpha, t, ldt, w, m, beta, x, ldx);
    if (s.prec == TG_FP16) TG_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    TG_CUBLAS_CHECK(r);
}
