// Genotype matrix products on the GPU. The genotypes are the same 5codes blocks as on the CPU
// (codelets/fivecodes.h): 1.6 bits per genotype, 20% fewer bytes than PLINK's 2-bit layout, and
// the same StarPU handle serves both kinds of worker. They are read once per column chunk,
// decoded in registers (base-3 digits by multiply-shift division) and multiplied with FMA:
//   P = D·A,  D the 0/1/2 digits (0 for a missing call), A_t = a_t·in_t (a_t = w_t for Z·Λ, 1
//   for Zᵀ·Λ̃), accumulated in the precision of the arrays (FP64, or FP32 on request);
// then one epilogue per output row applies the centering and scaling (Z·Λ: P − Σ_t c_t·in_t;
// Zᵀ·Λ̃: w_j·P_j − c_j·S). A missing call counts as the digit 2p_j, which gives back the
// centering term c_j·in_t = 2p_j·w_j·in_t it must not lose: each thread walks its rows' lists of
// missing calls (sorted by table row) beside the shared-memory tiles, so the correction costs a
// compare per row and tile plus k FMAs per call. (A separate pass of atomics over the lists took
// 7 ms of Z·Λ's 13.5 and 20 ms of Zᵀ·Λ̃'s 26 at 0.8% missing calls, n 102,000 × m 50,241.)
//
// Kernel layout: a thread owns RT output rows (strided by the block size, so each byte load of a
// warp is 32 consecutive bytes) and KC columns in registers; a thread block stages 32 groups
// (160 rows of A) in shared memory, each value then serving RT rows. The groups are split over
// gridDim.y so that a block of a few thousand rows still fills every SM; partial sums meet in
// `out` by atomicAdd (native for double since sm_60); the split makes the grid one full wave of
// resident thread blocks. Column chunks of at most 16: k = 10 runs in one pass, k = 64 in four.
#include <limits.h>
#include <stdint.h>

#include "codelets/fivecodes.h"
#include "runtime/cuda.h"

namespace {

constexpr int THREADS = 128;
constexpr int SG = 32; // groups staged per shared-memory tile of the main loop
// groups staged per tile of the missing calls' pass: as many as ~40 KB hold (static shared memory
// stops at 48 KB), a multiple of SG, so that a block's groups take one or two tiles
template <typename T, int KC> __host__ __device__ constexpr int fill_groups() {
    constexpr int g = 40960 / (5 * (KC + 1) * (int)sizeof(T)) / SG * SG; // A and the digits
    return g > SG ? g : SG;
}

struct params {
    int trans;
    int64_t r0;
    const uint8_t *codes;
    const int32_t *miss; // rows + 1 offsets, then the table rows (codelets/fivecodes.h)
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

// 2p_j, the digit of a missing call at SNP j (0 for an excluded SNP, which has no missing calls)
template <typename T> __device__ __forceinline__ T mean_digit(const double *coef, size_t j) {
    return coef[2 * j] > 0 ? (T)(coef[2 * j + 1] / coef[2 * j]) : (T)0;
}

// Stages A_t for the ng groups from gt (0 past the end) in shared memory, and with @p digits
// (Z·Λ) the missing digits 2p_t of those table rows. Consecutive threads read consecutive rows of
// a column (coalesced), U loads in flight per thread: a load-then-store loop left one memory
// latency per element, which no other block hides at the start of the kernel.
template <typename T, int KC, int U>
__device__ __forceinline__ void stage_tile(const params &p, int c0, size_t gt, int ng,
                                           T (*sA)[KC], T *sF, bool digits) {
    const T *in = (const T *)p.in;
    const int nr = 5 * ng, total = nr * KC;
    for (int e0 = threadIdx.x; e0 < total; e0 += THREADS * U) {
        T v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            int e = e0 + u * THREADS, tr = e % nr, c = e / nr;
            size_t row = 5 * gt + tr;
            v[u] = 0;
            if (e < total && row < p.nt)
                v[u] = (p.trans ? (T)1 : (T)p.coef[2 * row]) * in[row + (size_t)(c0 + c) * p.ldin];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            int e = e0 + u * THREADS;
            if (e < total) sA[e % nr][e / nr] = v[u];
        }
    }
    if (digits)
        for (int tr = threadIdx.x; tr < nr; tr += THREADS) {
            size_t row = 5 * gt + tr;
            sF[tr] = row < p.nt ? mean_digit<T>(p.coef, row) : (T)0;
        }
}

template <typename T, int KC, int RT>
__global__ void __launch_bounds__(THREADS, 3) product_kernel(params p, int c0, size_t gpb) {
    constexpr int FG = fill_groups<T, KC>();
    __shared__ T sA[5 * FG][KC]; // the main loop uses the first 5·SG rows
    __shared__ T sF[5 * FG];
    T *out = (T *)p.out;
    const size_t rbase = blockIdx.x * (size_t)(THREADS * RT) + threadIdx.x;
    const size_t g0 = blockIdx.y * gpb, g1 = g0 + gpb < p.groups ? g0 + gpb : p.groups;
    T acc[RT][KC];
#pragma unroll
    for (int q = 0; q < RT; q++)
#pragma unroll
        for (int c = 0; c < KC; c++) acc[q][c] = 0;
    // First pass, the missing calls of the rows in this block's groups: the main loop counts
    // them as digit 0, 2p_j is due. A pass of its own, before the main loop: inside it, the
    // cursors took registers past what three resident blocks allow (172 against 168 at k = 10:
    // one block less, 1.33× slower), and after it ptxas kept them live (192). It stages Λ again
    // in tiles of FG groups (one or two per block), only tiles where some row has a call. The
    // calls are read W per row and tile at once, and the start of each row's calls is found by
    // one binary search over all the rows in step, so that the loads of different rows overlap.
    // Its cost at 0.8% missing calls: 1.2-1.7 ms of 7.7-8.6 per product (H100, n 102,000,
    // m 50,241, k 10).
    constexpr int W = RT >= 8 ? 2 : 16 / RT;
    const int32_t *tl = p.miss + p.rows + 1;
    int cur[RT], end[RT], len[RT]; // per row: the next call's index, the end of its calls
    T f[RT];                       // Zᵀ·Λ̃: the row's missing digit
#pragma unroll
    for (int q = 0; q < RT; q++) {
        size_t r = rbase + (size_t)q * THREADS;
        cur[q] = r < p.rows ? p.miss[r] : 0;
        end[q] = r < p.rows ? p.miss[r + 1] : 0;
        len[q] = end[q] - cur[q];
        f[q] = p.trans && r < p.rows ? mean_digit<T>(p.coef, (size_t)p.r0 + r) : (T)0;
    }
    const int first = (int)(5 * g0); // table rows are below 2^31
    for (int more = 1; more;) {
        more = 0;
#pragma unroll
        for (int q = 0; q < RT; q++)
            if (len[q] > 0) {
                int half = len[q] >> 1;
                if (tl[cur[q] + half] < first)
                    cur[q] += half + 1, len[q] -= half + 1;
                else
                    len[q] = half;
                more |= len[q] > 0;
            }
    }
    for (size_t gt = g0; gt < g1; gt += FG) {
        const int ng = (int)(g1 - gt < FG ? g1 - gt : FG);
        const int tbeg = (int)(5 * gt), tend = (int)(5 * (gt + ng));
        int w[RT][W];
#pragma unroll
        for (int q = 0; q < RT; q++)
#pragma unroll
            for (int i = 0; i < W; i++) w[q][i] = cur[q] + i < end[q] ? tl[cur[q] + i] : INT_MAX;
        int hit = 0;
#pragma unroll
        for (int q = 0; q < RT; q++) hit |= w[q][0] < tend;
        if (!__syncthreads_or(hit)) continue; // also: the previous tile is no longer read
        stage_tile<T, KC, 8>(p, c0, gt, ng, sA, sF, !p.trans);
        __syncthreads();
        auto add = [&](T(&a)[KC], T fr, int t) {
            const T fq = p.trans ? fr : sF[t - tbeg];
#pragma unroll
            for (int c = 0; c < KC; c++) a[c] = fma(fq, sA[t - tbeg][c], a[c]);
        };
#pragma unroll
        for (int q = 0; q < RT; q++) {
#pragma unroll
            for (int i = 0; i < W; i++)
                if (w[q][i] < tend) add(acc[q], f[q], w[q][i]), cur[q]++;
            if (w[q][W - 1] < tend) // more than W in this tile: the rest one at a time
                for (int t; cur[q] < end[q] && (t = tl[cur[q]]) < tend; cur[q]++)
                    add(acc[q], f[q], t);
        }
    }
    __syncthreads(); // the last tile of the first pass is read
    for (size_t gt = g0; gt < g1; gt += SG) {
        const int ng = (int)(g1 - gt < SG ? g1 - gt : SG);
        __syncthreads();
        stage_tile<T, KC, 4>(p, c0, gt, ng, sA, sF, false);
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

template <typename T> __global__ void epilogue_kernel(params p, offsets off) {
    T *out = (T *)p.out;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < p.rows * p.k;
         e += (size_t)gridDim.x * blockDim.x) {
        size_t r = e % p.rows, c = e / p.rows;
        T *o = &out[r + c * p.ldout];
        if (p.trans) {
            size_t j = (size_t)p.r0 + r;
            *o = (T)p.coef[2 * j] * *o - (T)p.coef[2 * j + 1] * (T)off.v[c];
        } else {
            *o -= (T)off.v[c];
        }
    }
}

// Thread blocks the device holds at once for this kernel (cached per instantiation; the GPUs
// of a node are assumed alike).
template <typename T, int KC, int RT> int resident_blocks() {
    static int blocks;
    if (!blocks) {
        int per_sm = 0;
        TG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, product_kernel<T, KC, RT>, THREADS, 0));
        blocks = tg_cuda_sm_count() * (per_sm > 0 ? per_sm : 1);
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

template <typename T> void run(const params &p, const tg_fivecodes_arg &a, cudaStream_t s) {
    TG_CUDA_CHECK(cudaMemset2DAsync(p.out, p.ldout * sizeof(T), 0, p.rows * sizeof(T), p.k, s));
    for (int c0 = 0; c0 < p.k; c0 += 16) launch_kc<T>(p, c0, p.k - c0 < 16 ? p.k - c0 : 16, s);
    offsets off;
    for (int c = 0; c < TG_FC_MAXK; c++) off.v[c] = a.offset[c];
    size_t elems = p.rows * (size_t)p.k, blocks = (elems + 255) / 256;
    epilogue_kernel<T><<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, s>>>(p, off);
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
    p.miss = (const int32_t *)STARPU_VECTOR_GET_PTR(buffers[3]);
    p.r0 = a.r0;
    p.out = (void *)STARPU_MATRIX_GET_PTR(buffers[4]);
    p.ldout = STARPU_MATRIX_GET_LD(buffers[4]);
    p.k = a.k;
    cudaStream_t s = starpu_cuda_get_local_stream();
    if (p.rows == 0) return;
    if (a.prec == TG_FP64)
        run<double>(p, a, s);
    else
        run<float>(p, a, s);
    TG_CUDA_CHECK(cudaGetLastError());
}
