// Genotype matrix products on the GPU. The genotypes are the same 5codes blocks as on the CPU
// (codelets/fivecodes.h): 1.6 bits per genotype, 20% fewer bytes than PLINK's 2-bit layout, and
// the same StarPU handle serves both kinds of worker. They are read once per column chunk,
// decoded in registers (base-3 digits by multiply-shift division) and multiplied with FMA:
//   P = D·A,  D the 0/1/2 digits (0 for a missing call), A_t = a_t·in_t (a_t = w_t for Z·Λ, 1
//   for Zᵀ·Λ̃), accumulated in the precision of the arrays (FP64, or FP32 on request);
// then one epilogue per output row applies the centering and scaling (Z·Λ: P − Σ_t c_t·in_t;
// Zᵀ·Λ̃: w_j·P_j − c_j·S) and a last kernel adds back c_j·in_t for each missing call.
//
// Kernel layout: a thread owns RT output rows (strided by the block size, so each byte load of a
// warp is 32 consecutive bytes) and KC columns in registers; a thread block stages 32 groups
// (160 rows of A) in shared memory, each value then serving RT rows. The groups are split over
// gridDim.y so that a block of a few thousand rows still fills every SM; partial sums meet in
// `out` by atomicAdd (native for double since sm_60); the split makes the grid one full wave of
// resident thread blocks. Column chunks of at most 16: k = 10 runs in one pass, k = 64 in four.
#include <stdint.h>

#include "codelets/fivecodes.h"
#include "runtime/cuda.h"

namespace {

constexpr int THREADS = 128;
constexpr int SG = 32; // groups staged per shared-memory tile

struct params {
    int trans;
    const uint8_t *codes;
    size_t rows, groups, ldc;
    const void *in;
    size_t nt, ldin;
    const double *coef;
    void *out;
    size_t ldout;
    int k;
};

template <int RT>
__device__ __forceinline__ void load_codes(const params &p, size_t g, size_t rbase,
                                           unsigned *code) {
    const uint8_t *cg = p.codes + g * p.ldc;
#pragma unroll
    for (int q = 0; q < RT; q++) {
        size_t r = rbase + (size_t)q * THREADS;
        code[q] = r < p.rows ? cg[r] : 0u;
    }
}

template <typename T, int KC, int RT>
__global__ void __launch_bounds__(THREADS) product_kernel(params p, int c0, size_t gpb) {
    __shared__ T sA[5 * SG][KC];
    const T *in = (const T *)p.in;
    T *out = (T *)p.out;
    const size_t rbase = blockIdx.x * (size_t)(THREADS * RT) + threadIdx.x;
    const size_t g0 = blockIdx.y * gpb, g1 = g0 + gpb < p.groups ? g0 + gpb : p.groups;
    T acc[RT][KC];
#pragma unroll
    for (int q = 0; q < RT; q++)
#pragma unroll
        for (int c = 0; c < KC; c++) acc[q][c] = 0;
    for (size_t gt = g0; gt < g1; gt += SG) {
        const int ng = (int)(g1 - gt < SG ? g1 - gt : SG);
        __syncthreads();
        for (int e = threadIdx.x; e < 5 * SG * KC; e += THREADS) {
            int tr = e / KC, c = e % KC;
            size_t row = 5 * gt + tr;
            T v = 0;
            if (row < p.nt && tr < 5 * ng) {
                T a = p.trans ? (T)1 : (T)p.coef[2 * row];
                v = a * in[row + (size_t)(c0 + c) * p.ldin];
            }
            sA[tr][c] = v;
        }
        __syncthreads();
        // the codes of the next group are loaded while this one is computed (few warps fit an
        // SM at these register counts, so the load latency must be hidden within a thread)
        unsigned next[RT];
        load_codes<RT>(p, gt, rbase, next);
        for (int gg = 0; gg < ng; gg++) {
            unsigned code[RT];
#pragma unroll
            for (int q = 0; q < RT; q++) code[q] = next[q];
            if (gg + 1 < ng) load_codes<RT>(p, gt + gg + 1, rbase, next);
#pragma unroll
            for (int t = 0; t < 5; t++) {
                T d[RT];
#pragma unroll
                for (int q = 0; q < RT; q++) {
                    unsigned quot = (code[q] * 171u) >> 9; // code / 3 for code < 256
                    d[q] = (T)(int)(code[q] - 3u * quot);
                    code[q] = quot;
                }
#pragma unroll
                for (int c = 0; c < KC; c++) {
                    T a = sA[5 * gg + t][c];
#pragma unroll
                    for (int q = 0; q < RT; q++) acc[q][c] = fma(d[q], a, acc[q][c]);
                }
            }
        }
    }
#pragma unroll
    for (int q = 0; q < RT; q++) {
        size_t r = rbase + (size_t)q * THREADS;
        if (r < p.rows)
#pragma unroll
            for (int c = 0; c < KC; c++) atomicAdd(&out[r + (size_t)(c0 + c) * p.ldout], acc[q][c]);
    }
}

// Passed by value to the epilogue: Σ_t c_t·in_t (trans 0) or S (trans 1).
struct offsets {
    double v[TG_FC_MAXK];
};

template <typename T> __global__ void epilogue_kernel(params p, int64_t r0, offsets off) {
    T *out = (T *)p.out;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < p.rows * p.k;
         e += (size_t)gridDim.x * blockDim.x) {
        size_t r = e % p.rows, c = e / p.rows;
        T *o = &out[r + c * p.ldout];
        if (p.trans) {
            size_t j = (size_t)r0 + r;
            *o = (T)p.coef[2 * j] * *o - (T)p.coef[2 * j + 1] * (T)off.v[c];
        } else {
            *o -= (T)off.v[c];
        }
    }
}

template <typename T> __global__ void missing_kernel(params p, int64_t r0, const int32_t *miss) {
    const T *in = (const T *)p.in;
    T *out = (T *)p.out;
    const size_t count = (size_t)miss[0];
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < count * p.k;
         e += (size_t)gridDim.x * blockDim.x) {
        size_t pair = e % count, c = e / count;
        size_t r = (size_t)miss[1 + 2 * pair], t = (size_t)miss[2 + 2 * pair];
        size_t j = p.trans ? (size_t)r0 + r : t;
        atomicAdd(&out[r + c * p.ldout], (T)p.coef[2 * j + 1] * in[t + c * p.ldin]);
    }
}

// Thread blocks the device holds at once for this kernel (cached per instantiation; the GPUs
// of a node are assumed alike).
template <typename T, int KC, int RT> int resident_blocks() {
    static int blocks;
    if (!blocks) {
        int dev = 0, sms = 0, per_sm = 0;
        TG_CUDA_CHECK(cudaGetDevice(&dev));
        TG_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        TG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, product_kernel<T, KC, RT>, THREADS, 0));
        blocks = sms * (per_sm > 0 ? per_sm : 1);
    }
    return blocks;
}

template <typename T, int KC> void launch_chunk(const params &p, int c0, cudaStream_t s) {
    constexpr int RT = KC <= 5 ? 8 : 40 / KC;
    const size_t tiles = (p.rows + THREADS * RT - 1) / (THREADS * RT);
    // split the groups so that the grid is one full wave of resident blocks (all blocks do the
    // same work, so a second, partial wave would leave SMs idle), keeping at least 2 shared-
    // memory tiles of groups per block; each split costs rows·KC atomics
    size_t want = (size_t)resident_blocks<T, KC, RT>() / tiles,
           most = (p.groups + 2 * SG - 1) / (2 * SG);
    size_t splits = want < most ? want : most;
    if (splits < 1) splits = 1;
    if (splits > 65535) splits = 65535;
    size_t gpb = (p.groups + splits - 1) / splits;
    dim3 grid((unsigned)tiles, (unsigned)((p.groups + gpb - 1) / gpb));
    product_kernel<T, KC, RT><<<grid, THREADS, 0, s>>>(p, c0, gpb);
}

// kc (1..16) columns in one pass: each count is its own instantiation, registers sized to it
template <typename T, int KC = 16> void launch_kc(const params &p, int c0, int kc, cudaStream_t s) {
    if (kc == KC)
        launch_chunk<T, KC>(p, c0, s);
    else if constexpr (KC > 1)
        launch_kc<T, KC - 1>(p, c0, kc, s);
}

template <typename T>
void run(const params &p, const tg_fivecodes_arg &a, const int32_t *miss, int32_t nmiss,
         cudaStream_t s) {
    TG_CUDA_CHECK(cudaMemset2DAsync(p.out, p.ldout * sizeof(T), 0, p.rows * sizeof(T), p.k, s));
    for (int c0 = 0; c0 < p.k; c0 += 16) launch_kc<T>(p, c0, p.k - c0 < 16 ? p.k - c0 : 16, s);
    offsets off;
    for (int c = 0; c < TG_FC_MAXK; c++) off.v[c] = a.offset[c];
    size_t elems = p.rows * (size_t)p.k, blocks = (elems + 255) / 256;
    epilogue_kernel<T><<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, s>>>(p, a.r0, off);
    if (nmiss > 0) {
        size_t me = (size_t)nmiss * p.k, mb = (me + 255) / 256;
        missing_kernel<T><<<(unsigned)(mb < 4096 ? mb : 4096), 256, 0, s>>>(p, a.r0, miss);
    }
}

} // namespace

extern "C" void tg_fivecodes_cuda(void *buffers[], void *cl_arg) {
    struct tg_fivecodes_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    params p;
    p.trans = a.trans;
    p.codes = (const uint8_t *)STARPU_MATRIX_GET_PTR(buffers[0]);
    p.rows = STARPU_MATRIX_GET_NX(buffers[0]);
    p.groups = STARPU_MATRIX_GET_NY(buffers[0]);
    p.ldc = STARPU_MATRIX_GET_LD(buffers[0]);
    p.in = (const void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    p.nt = STARPU_MATRIX_GET_NX(buffers[1]);
    p.ldin = STARPU_MATRIX_GET_LD(buffers[1]);
    p.coef = (const double *)STARPU_VECTOR_GET_PTR(buffers[2]);
    const int32_t *miss = (const int32_t *)STARPU_VECTOR_GET_PTR(buffers[3]);
    // the count is the number of pairs the list was built with: its length says it on the host
    int32_t nmiss = (int32_t)((STARPU_VECTOR_GET_NX(buffers[3]) - 1) / 2);
    p.out = (void *)STARPU_MATRIX_GET_PTR(buffers[4]);
    p.ldout = STARPU_MATRIX_GET_LD(buffers[4]);
    p.k = a.k;
    cudaStream_t s = starpu_cuda_get_local_stream();
    if (p.rows == 0) return;
    if (a.prec == TG_FP64)
        run<double>(p, a, miss, nmiss, s);
    else
        run<float>(p, a, miss, nmiss, s);
    TG_CUDA_CHECK(cudaGetLastError());
}
