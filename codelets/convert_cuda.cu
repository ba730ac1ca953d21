// Tile precision conversion on the GPU: one kernel template, instantiated for every (from, to)
// pair. Loads are exact (every storage precision widens exactly to double) and stores use CUDA's
// own correctly-rounded conversions (round to nearest even; FP8 E4M3 saturating as in the OCP
// spec), so the tests can check this path against the independent CPU reference bit for bit.
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "codelets/codelets.h"
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
                                      size_t ldd, size_t rows, size_t cols, int transpose) {
    for (size_t j = blockIdx.y; j < cols; j += gridDim.y)
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows;
             i += (size_t)gridDim.x * blockDim.x)
            store<T>(dst, transpose ? j + i * ldd : i + j * ldd, load<F>(src, i + j * lds) * scale);
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
    const unsigned threads = 256;
    size_t bx = (a.rows + threads - 1) / threads;
    dim3 grid((unsigned)(bx < 1024 ? bx : 1024), (unsigned)(a.cols < 65535 ? a.cols : 65535));
    convert_kernel<F, T><<<grid, threads, 0, a.stream>>>(a.scale, a.src, a.lds, a.dst, a.ldd,
                                                           a.rows, a.cols, a.transpose);
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
