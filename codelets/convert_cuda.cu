// Tile precision conversion on the GPU: one kernel template, instantiated for every (from, to)
// pair. Loads are exact (every storage precision widens exactly to double) and stores use CUDA's
// own correctly-rounded conversions (round to nearest even; FP8 E4M3 saturating as in the OCP
// spec), so the tests can check this path against the independent CPU reference bit for bit.
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "codelets/codelets.h"
#include "codelets/gemm.h"
#include "runtime/cuda.h"

// The precisions are template parameters, so each switch below folds away at compile time and
// the element loop is a straight load-convert-store; launch() maps the run-time pair onto them.
template <tg_prec P> __device__ static double load(const void *a, size_t i) {
    switch (P) {
    case TG_FP64: return ((const double *)a)[i];
    case TG_FP32: return ((const float *)a)[i];
    case TG_FP16: {
        __half_raw r;
        r.x = ((const uint16_t *)a)[i];
        return __half2float(__half(r));
    }
    case TG_FP8_E4M3: {
        __half_raw r = __nv_cvt_fp8_to_halfraw(((const __nv_fp8_storage_t *)a)[i], __NV_E4M3);
        return __half2float(__half(r));
    }
    case TG_INT8: return ((const int8_t *)a)[i];
    case TG_INT32: return ((const int32_t *)a)[i];
    default: return 0;
    }
}

// Integer stores: nearest even, saturating, NaN → 0 (as tg_prec_store on the CPU).
__device__ static double to_int(double x, double lo, double hi) {
    return x != x ? 0.0 : fmin(fmax(rint(x), lo), hi);
}

template <tg_prec P> __device__ static void store(void *a, size_t i, double x) {
    switch (P) {
    case TG_FP64: ((double *)a)[i] = x; break;
    case TG_FP32: ((float *)a)[i] = __double2float_rn(x); break;
    case TG_FP16: ((uint16_t *)a)[i] = __half_raw(__double2half(x)).x; break;
    case TG_FP8_E4M3:
        ((__nv_fp8_storage_t *)a)[i] = __nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
        break;
    case TG_INT8: ((int8_t *)a)[i] = (int8_t)to_int(x, -128, 127); break;
    case TG_INT32: ((int32_t *)a)[i] = (int32_t)to_int(x, -2147483648.0, 2147483647.0); break;
    default: break;
    }
}

// A 2-D grid: x over rows, y over columns (grid-stride both ways), so no index division.
template <tg_prec F, tg_prec T>
__global__ static void convert_kernel(double scale, const void *src, size_t lds, void *dst,
                                      size_t ldd, size_t rows, size_t cols) {
    for (size_t j = blockIdx.y; j < cols; j += gridDim.y)
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows;
             i += (size_t)gridDim.x * blockDim.x)
            store<T>(dst, i + j * ldd, load<F>(src, i + j * lds) * scale);
}

// The transposed form through shared memory, 32 × 32 elements a block: reads along the source's
// columns and writes along the destination's, both coalesced (a direct transposed store is
// strided: 5× slower on the H100 at nb 4096).
template <tg_prec F, tg_prec T>
__global__ static void convert_t_kernel(double scale, const void *src, size_t lds, void *dst,
                                        size_t ldd, size_t rows, size_t cols) {
    __shared__ double t[32][33];
    for (size_t j0 = blockIdx.y * (size_t)32; j0 < cols; j0 += gridDim.y * (size_t)32)
        for (size_t i0 = blockIdx.x * (size_t)32; i0 < rows; i0 += gridDim.x * (size_t)32) {
            for (unsigned c = threadIdx.y; c < 32; c += blockDim.y) {
                size_t i = i0 + threadIdx.x, j = j0 + c;
                if (i < rows && j < cols) t[c][threadIdx.x] = load<F>(src, i + j * lds) * scale;
            }
            __syncthreads();
            for (unsigned r = threadIdx.y; r < 32; r += blockDim.y) {
                size_t i = i0 + r, j = j0 + threadIdx.x;
                if (i < rows && j < cols) store<T>(dst, j + i * ldd, t[threadIdx.x][r]);
            }
            __syncthreads();
        }
}

struct launch_args {
    double scale;
    const void *src;
    size_t lds;
    void *dst;
    size_t ldd, rows, cols;
    int transpose;
    cudaStream_t stream;
};

template <tg_prec F, tg_prec T> static void launch_pair(const launch_args &a) {
    if (a.transpose) {
        size_t bx = (a.rows + 31) / 32, by = (a.cols + 31) / 32;
        dim3 grid((unsigned)(bx < 65535 ? bx : 65535), (unsigned)(by < 65535 ? by : 65535));
        convert_t_kernel<F, T><<<grid, dim3(32, 8), 0, a.stream>>>(a.scale, a.src, a.lds, a.dst,
                                                                     a.ldd, a.rows, a.cols);
        return;
    }
    const unsigned threads = 256;
    size_t bx = (a.rows + threads - 1) / threads;
    dim3 grid((unsigned)(bx < 1024 ? bx : 1024), (unsigned)(a.cols < 65535 ? a.cols : 65535));
    convert_kernel<F, T><<<grid, threads, 0, a.stream>>>(a.scale, a.src, a.lds, a.dst, a.ldd,
                                                           a.rows, a.cols);
}

template <tg_prec F> static void launch_from(tg_prec to, const launch_args &a) {
    switch (to) {
    case TG_FP64: launch_pair<F, TG_FP64>(a); break;
    case TG_FP32: launch_pair<F, TG_FP32>(a); break;
    case TG_FP16: launch_pair<F, TG_FP16>(a); break;
    case TG_FP8_E4M3: launch_pair<F, TG_FP8_E4M3>(a); break;
    case TG_INT8: launch_pair<F, TG_INT8>(a); break;
    case TG_INT32: launch_pair<F, TG_INT32>(a); break;
    default: break;
    }
}

static void launch(tg_prec from, tg_prec to, const launch_args &a) {
    switch (from) {
    case TG_FP64: launch_from<TG_FP64>(to, a); break;
    case TG_FP32: launch_from<TG_FP32>(to, a); break;
    case TG_FP16: launch_from<TG_FP16>(to, a); break;
    case TG_FP8_E4M3: launch_from<TG_FP8_E4M3>(to, a); break;
    case TG_INT8: launch_from<TG_INT8>(to, a); break;
    case TG_INT32: launch_from<TG_INT32>(to, a); break;
    default: break;
    }
}

extern "C" void tg_convert_launch(tg_prec from, tg_prec to, const void *src, size_t lds,
                                  void *dst, size_t ldd, size_t rows, size_t cols, double scale,
                                  int transpose, cudaStream_t stream) {
    if (rows == 0 || cols == 0) return;
    launch(from, to, {scale, src, lds, dst, ldd, rows, cols, transpose, stream});
    TG_CUDA_CHECK(cudaGetLastError());
}

extern "C" void tg_convert_cuda(void *buffers[], void *cl_arg) {
    struct tg_convert_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    tg_convert_launch(a.from, a.to, (const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
                      STARPU_MATRIX_GET_LD(buffers[0]), (void *)STARPU_MATRIX_GET_PTR(buffers[1]),
                      STARPU_MATRIX_GET_LD(buffers[1]), STARPU_MATRIX_GET_NX(buffers[0]),
                      STARPU_MATRIX_GET_NY(buffers[0]), a.scale, a.transpose,
                      starpu_cuda_get_local_stream());
}

// ---- tile statistics (see codelets.h): per-block partial sums and maxima in a fixed order, then
// one block over the partials, so a tile gives the same statistics on every run.
__device__ static void block_reduce(double *sh, unsigned t, double &s, double &mx, double &dm) {
    sh[t] = s;
    sh[t + blockDim.x] = mx;
    sh[t + 2 * blockDim.x] = dm;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        if (t < w) {
            sh[t] += sh[t + w];
            sh[t + blockDim.x] = fmax(sh[t + blockDim.x], sh[t + w + blockDim.x]);
            sh[t + 2 * blockDim.x] = fmax(sh[t + 2 * blockDim.x], sh[t + w + 2 * blockDim.x]);
        }
        __syncthreads();
    }
    s = sh[0];
    mx = sh[blockDim.x];
    dm = sh[2 * blockDim.x];
}

template <tg_prec P>
__global__ static void stats_kernel(const void *a, size_t ld, size_t rows, size_t cols, int diag,
                                    double inv_scale, double *part) {
    extern __shared__ double sh[];
    double s = 0, mx = 0, dm = 0;
    for (size_t j = blockIdx.x; j < cols; j += gridDim.x)
        for (size_t i = (diag ? j : 0) + threadIdx.x; i < rows; i += blockDim.x) {
            double v = load<P>(a, i + j * ld) * inv_scale;
            s += (diag && i != j ? 2 : 1) * v * v;
            mx = fmax(mx, fabs(v));
            if (diag && i == j) dm = fmax(dm, v);
        }
    block_reduce(sh, threadIdx.x, s, mx, dm);
    if (threadIdx.x == 0) {
        part[3 * blockIdx.x] = s;
        part[3 * blockIdx.x + 1] = mx;
        part[3 * blockIdx.x + 2] = dm;
    }
}

__global__ static void stats_final(const double *part, unsigned nparts, double *out) {
    extern __shared__ double sh[];
    double s = 0, mx = 0, dm = 0;
    for (unsigned b = threadIdx.x; b < nparts; b += blockDim.x) {
        s += part[3 * b];
        mx = fmax(mx, part[3 * b + 1]);
        dm = fmax(dm, part[3 * b + 2]);
    }
    block_reduce(sh, threadIdx.x, s, mx, dm);
    if (threadIdx.x == 0) {
        out[0] = s;
        out[1] = mx;
        out[2] = dm;
    }
}

extern "C" void tg_tile_stats_launch(tg_prec p, const void *t, size_t ld, size_t rows,
                                     size_t cols, int diag, double inv_scale, double *out,
                                     cudaStream_t st) {
    const unsigned threads = 256, nparts = 1024;
    size_t sh = 3 * threads * sizeof(double);
    double *part = (double *)tg_cuda_scratch(1, 3 * nparts * sizeof(double));
#define TG_STATS(P)                                                                                \
    case P:                                                                                        \
        stats_kernel<P><<<nparts, threads, sh, st>>>(t, ld, rows, cols, diag, inv_scale, part);    \
        break;
    switch (p) {
        TG_STATS(TG_FP64)
        TG_STATS(TG_FP32)
        TG_STATS(TG_FP16)
        TG_STATS(TG_FP8_E4M3)
        TG_STATS(TG_INT8)
        TG_STATS(TG_INT32)
    default: STARPU_ABORT_MSG("tile statistics of %s tiles", tg_prec_name(p));
    }
#undef TG_STATS
    stats_final<<<1, threads, sh, st>>>(part, nparts, out);
    TG_CUDA_CHECK(cudaGetLastError());
}

extern "C" void tg_tilestats_cuda(void *buffers[], void *cl_arg) {
    struct tg_tilestats_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    tg_tile_stats_launch(a.prec, (const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
                         STARPU_MATRIX_GET_LD(buffers[0]), STARPU_MATRIX_GET_NX(buffers[0]),
                         STARPU_MATRIX_GET_NY(buffers[0]), a.diag, a.inv_scale,
                         (double *)STARPU_VARIABLE_GET_PTR(buffers[1]),
                         starpu_cuda_get_local_stream());
}
