// Tile precision conversion on the GPU: one kernel for every (from, to) pair. Loads are exact
// (every storage precision widens exactly to double) and stores use CUDA's own correctly-rounded
// conversions (round to nearest even; FP8 E4M3 saturating as in the OCP spec), so the tests can
// check this path against the independent CPU reference bit for bit.
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "codelets/codelets.h"
#include "runtime/cuda.h"

__device__ static double load(tg_prec p, const void *a, size_t i) {
    switch (p) {
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

__device__ static void store(tg_prec p, void *a, size_t i, double x) {
    switch (p) {
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

__global__ static void convert_kernel(tg_prec from, tg_prec to, double scale, const void *src,
                                      size_t lds, void *dst, size_t ldd, size_t rows, size_t cols) {
    size_t n = rows * cols;
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x) {
        size_t i = k % rows, j = k / rows;
        store(to, dst, i + j * ldd, load(from, src, i + j * lds) * scale);
    }
}

extern "C" void tg_convert_cuda(void *buffers[], void *cl_arg) {
    struct tg_convert_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    size_t rows = STARPU_MATRIX_GET_NX(buffers[0]), cols = STARPU_MATRIX_GET_NY(buffers[0]);
    size_t n = rows * cols, threads = 256;
    unsigned blocks = (unsigned)((n + threads - 1) / threads < 65536 ? (n + threads - 1) / threads : 65536);
    if (n == 0) return;
    convert_kernel<<<blocks, threads, 0, starpu_cuda_get_local_stream()>>>(
        a.from, a.to, a.scale, (const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
        STARPU_MATRIX_GET_LD(buffers[0]), (void *)STARPU_MATRIX_GET_PTR(buffers[1]),
        STARPU_MATRIX_GET_LD(buffers[1]), rows, cols);
    TG_CUDA_CHECK(cudaGetLastError());
}
