// Genotype matrix products on the GPU. The genotypes are the same 5codes blocks as on the CPU
// (codelets/fivecodes.h): 1.6 bits per genotype, 20% fewer bytes than PLINK's 2-bit layout, and
// the same StarPU handle serves both kinds of worker. FP64 products run on the INT8 tensor
// cores (the second half of this file); FP32 ones, below, read the codes once per column
// chunk, decode them in registers (base-3 digits by multiply-shift division) and multiply with
// FMA:
//   P = D·A,  D the 0/1/2 digits (0 for a missing call), A_t = a_t·in_t (a_t = w_t for Z·Λ, 1
//   for Zᵀ·Λ̃), accumulated in FP32;
// added to out (scaled by w_j for Zᵀ·Λ̃), then one epilogue per output row adds the centering
// (Z·Λ: −Σ_t c_t·in_t; Zᵀ·Λ̃: −c_j·S), all over the task's part of the table rows. A missing
// call counts as the digit 2p_j, which gives back the centering term c_j·in_t = 2p_j·w_j·in_t
// it must not lose: each thread walks its rows' lists of missing calls (sorted by table row)
// beside the shared-memory tiles, so the correction costs a compare per row and tile plus k
// FMAs per call. (A separate pass of atomics over the lists took 7 ms of Z·Λ's 13.5 and 20 ms
// of Zᵀ·Λ̃'s 26 at 0.8% missing calls, n 102,000 × m 50,241.)
//
// Kernel layout: a thread owns RT output rows (strided by the block size, so each byte load of a
// warp is 32 consecutive bytes) and KC columns in registers; a thread block stages 32 groups
// (160 rows of A) in shared memory, each value then serving RT rows. The groups are split over
// gridDim.y so that a block of a few thousand rows still fills every SM; partial sums meet in
// `out` by atomicAdd (native for double since sm_60); the split makes the grid one full wave of
// resident thread blocks. Column chunks of at most 16: k = 10 runs in one pass, k = 64 in four.
#include <limits.h>
#include <stdint.h>

#include <type_traits>
#include <vector>

#include "codelets/fivecodes.h"
#include "codelets/gemm.h"
#include "codelets/sm90a.cuh"
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
    int64_t t0;           // the part's first table row (the calls' lists hold the product's)
    const uint8_t *codes; // the part's groups
    const int32_t *miss;  // rows + 1 offsets, then the table rows (codelets/fivecodes.h)
    size_t nmiss;         // the missing calls listed
    size_t rows, groups, ldc;
    const void *in;
    size_t nt, ldin;
    const double *coef;
    void *out;
    size_t ldout;
    int k;
    const uint4 *tiles; // the part's first chunk of the block's 2-bit tiles, or null
};

// The 2-bit tiles' slabs of 16 output rows in a block of @p rows.
__host__ __device__ constexpr size_t tc_slabs(size_t rows) { return (rows + 15) / 16; }

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
    const int first = (int)(p.t0 + 5 * g0); // table rows are below 2^31
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
        const int tbeg = (int)(p.t0 + 5 * gt), tend = (int)(p.t0 + 5 * (gt + ng));
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
        if (r >= p.rows) continue;
        const T w = p.trans ? (T)p.coef[2 * (p.r0 + r)] : (T)1; // w_j·(its digit 2p_j) = c_j
#pragma unroll
        for (int c = 0; c < KC; c++) atomicAdd(&out[r + (size_t)(c0 + c) * p.ldout], w * acc[q][c]);
    }
}

// Passed by value to the epilogue: the part's Σ_t c_t·in_t (trans 0) or S (trans 1).
struct offsets {
    double v[TG_FC_MAXK];
};

// The part's centering, added to out: every term of a part is added, so that the parts' tasks
// may run on either kind of worker.
template <typename T> __global__ void epilogue_kernel(params p, offsets off) {
    T *out = (T *)p.out;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < p.rows * p.k;
         e += (size_t)gridDim.x * blockDim.x) {
        size_t r = e % p.rows, c = e / p.rows;
        out[r + c * p.ldout] -= (p.trans ? (T)p.coef[2 * (p.r0 + r) + 1] : (T)1) * (T)off.v[c];
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

// ---- FP64 products on the INT8 tensor cores (wgmma m64n80k32 on sm_90a, mma.sync m16n8k32 on
// sm_80 and later).
// Each column c of A_t = a_t·in_t (a_t = w_t for Z·Λ, 1 for Zᵀ·Λ̃) is split exactly into
// 8 slices of 7 bits with a power-of-two scale per column (Ozaki's scheme):
//   A_tc = 2^e_c·Σ_s q_tcs·2^(−7(s+1)) + ε_tc,  q ∈ [−64, 64],  |ε_tc| ≤ 2^(e_c − 57),
// 2^e_c ≤ 4·max_t |A_tc|, s = 0..7. D·Q_s is an exact integer product (|d·q| ≤ 128 a term,
// int32 while a block sums at most 2^24 terms), so P_c = Σ_s 2^(e_c − 7(s+1))·(D·Q_s)_c is
// D·A but for the slices' remainder: |P_c − (D·A)_c| ≤ 2^(−55)·max_t |A_tc|·Σ_t d_t (plus the
// rounding of the eight additions), under the FP64 kernel's own bound
// (N + 10)·u·Σ_t d_t·|A_tc| (N terms).
// Slices are the n dimension of the tile (eight: one n-tile a column of Λ). The k dimension
// is the table rows in an order of our choosing, the one in which a lane holds its digits: of
// the 5codes (tc_codes5) or of 2-bit tiles made from them once per block (tc_tiles2, sm_90a);
// the slices are laid out in that order beforehand (frag_kernel), so that a lane's A operand
// is its own bytes decoded. On sm_90a the tensor cores read B from shared memory themselves
// (wgmma, A from registers in mma.sync's fragment layout, a warpgroup's four warps one m64
// tile); elsewhere each lane loads its B operand, two conflict-free 4-byte words, for two m16
// tiles.
constexpr int TC_WARPS = 8, TC_MT = 2;         // warps of a block, m16 tiles of a warp
constexpr int TC_ROWS = TC_WARPS * TC_MT * 16; // output rows of a block (mma.sync)
constexpr int TC_G = 32;                       // groups of a chunk: 160 table rows, 5 k32 steps
constexpr int TC_WG_ROWS = TC_WARPS / 4 * 64;  // output rows of a block (wgmma)
constexpr int TC_STAGES = 4;                   // chunks in shared memory (wgmma)
constexpr int TC_KC = 10;                      // columns of a pass (accumulators: 2·10·4)
constexpr int TC_PAD = 16;                     // bytes after each group's rows (banks)
constexpr size_t TC_MAX_GROUPS = 3000000;      // groups a block sums: 5·3e6·128 < 2^31

// A_tc = a_t·in_tc (0 past the table rows): what the slices cut.
__device__ __forceinline__ double tc_a(const params &p, size_t t, size_t c) {
    return t < p.nt ? (p.trans ? 1.0 : p.coef[2 * t]) * ((const double *)p.in)[t + c * p.ldin]
                    : 0;
}

// The column's scale exponent e: max |A| < 2^(e − 1), so x·2^(−e) ∈ (−½, ½).
__device__ __forceinline__ int tc_exponent(unsigned long long bits) {
    double m = __longlong_as_double((long long)bits);
    return m > 0 ? ilogb(m) + 2 : 0;
}

// Each column's max |A_tc|, as the bits of a non-negative double (ordered as the values).
__global__ void colmax_kernel(params p, unsigned long long *mx) {
    const int c = blockIdx.y;
    double m = 0;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < p.nt;
         t += (size_t)gridDim.x * blockDim.x)
        m = fmax(m, fabs(tc_a(p, t, c))); // finite: snpmm.c checks the input
    // one atomic a block: one a warp serialises thousands on the same address
    __shared__ double part[32];
    for (int o = 16; o; o >>= 1) m = fmax(m, __shfl_xor_sync(~0u, m, o));
    if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)blockDim.x / 32; w++) m = fmax(m, part[w]);
        atomicMax(&mx[c], (unsigned long long)__double_as_longlong(m));
    }
}

// in with each table row's k values together, for the missing calls' gathers, times c_t = 2p_t·w_t
// for Z·Λ (what a call there stands for): a line of tc_ld(k) doubles a row, zeros after the k
// values, so that 16 columns are one aligned 128-byte line. TC_TT table rows a block, through
// shared memory so that both sides are coalesced.
__host__ __device__ constexpr int tc_ld(int k) { return (k + 15) / 16 * 16; }
constexpr int TC_TT = 64;
__global__ void rows_kernel(params p, double *rows_of) {
    __shared__ double tile[TC_TT * tc_ld(TG_FC_MAXK)];
    const int ld = tc_ld(p.k);
    const size_t t0 = blockIdx.x * (size_t)TC_TT;
    const int nr = (int)(p.nt - t0 < TC_TT ? p.nt - t0 : TC_TT), n = nr * ld;
    for (int e = threadIdx.x; e < n; e += blockDim.x) {
        const int c = e / nr, tt = e % nr;
        const size_t t = t0 + tt;
        tile[tt * ld + c] = c < p.k ? (p.trans ? 1.0 : p.coef[2 * t + 1]) *
                                          ((const double *)p.in)[t + (size_t)c * p.ldin]
                                    : 0;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < n; e += blockDim.x) rows_of[t0 * ld + e] = tile[e];
}

// A lane's 40 digits of one row (its 8 bytes of the chunk, which the four lanes of a row read
// from different banks) as 10 words of 4 int8 digits, word 2s + p holding digit s of bytes 4p ..
// 4p + 3. Decoded by arithmetic on two bytes at once (16-bit halves of a word; x/3 = x·171 >> 9
// for x < 243): a shared table of the 243 codes' digits, read at random rows, conflicted across
// banks and made shared memory the kernel's bottleneck.
template <int ROWS>
__device__ __forceinline__ void tc_decode(const uint8_t (*sc)[ROWS + TC_PAD], int row, int t4,
                                          uint32_t *w) {
    uint32_t x[2][2]; // [p][e]: bytes 4p + e (low half) and 4p + e + 2 (high half)
#pragma unroll
    for (int p = 0; p < 2; p++)
#pragma unroll
        for (int e = 0; e < 2; e++)
            x[p][e] = __byte_perm(sc[4 * (4 * p + e) + t4][row], sc[4 * (4 * p + e + 2) + t4][row],
                                  0x5410);
#pragma unroll
    for (int s = 0; s < 5; s++) {
        uint32_t d[2][2];
#pragma unroll
        for (int p = 0; p < 2; p++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const uint32_t q = s < 4 ? (x[p][e] * 171u >> 9) & 0x007f007fu : 0u;
                d[p][e] = x[p][e] - 3 * q;
                x[p][e] = q;
            }
#pragma unroll
        for (int p = 0; p < 2; p++) w[2 * s + p] = __byte_perm(d[p][0], d[p][1], 0x6240);
    }
}

// 16 bytes global → shared without registers; zero-filled (nothing read) when !valid.
__device__ __forceinline__ void tc_copy16(void *dst, const void *src, bool valid) {
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
                 "r"(valid ? 16 : 0));
}

// Where table row u of a chunk goes in the B operands: step st, and within the step's k32
// position 16·h + 4·t4 + i (lane t4's register for k half h, byte i).
struct tc_pos {
    int t4, st, h, i;
};

// Chunk gc of the block's codes (groups gc .. gc + TC_G − 1, zeros at and past g1 and past the
// rows) to shared memory by cp.async; codes whose rows are not 16-byte aligned are loaded by
// bytes.
template <int ROWS>
__device__ __forceinline__ void tc_stage_codes(const params &p, size_t r0, size_t gc, size_t g1,
                                               uint8_t (*sc)[ROWS + TC_PAD]) {
    const int tid = threadIdx.x;
    if (((uintptr_t)p.codes | p.ldc) % 16 == 0) {
        for (int e = tid; e < TC_G * ROWS / 16; e += blockDim.x) {
            const int g = e / (ROWS / 16), r = e % (ROWS / 16) * 16;
            // a segment that passes p.rows ends within ldc; those rows are never written
            const bool in = gc + g < g1 && r0 + r < p.rows;
            tc_copy16(&sc[g][r], in ? p.codes + (gc + g) * p.ldc + r0 + r : p.codes, in);
        }
    } else {
        for (int e = tid; e < TC_G * ROWS; e += blockDim.x) {
            const int g = e / ROWS, r = e % ROWS;
            sc[g][r] = gc + g < g1 && r0 + r < p.rows ? p.codes[(gc + g) * p.ldc + r0 + r] : 0;
        }
    }
}

// The sources of A for the wgmma kernels, each a chunk's table rows (TROWS, STEPS k32 steps),
// its bytes in shared memory (A_BYTES), a lane's digits of its rows 16·warp + lane / 4 and + 8
// from there (decode, word 2·st + h' of row half h holding the lane's four bytes of step st
// and k half h'), and pos.
// The 5codes themselves: chunks of TC_G groups, lane t4 of a row holding the bytes of groups
// t4, t4 + 4, ..., t4 + 28 (byte j: group 4j + t4), digit st of each at step st (tc_decode).
// Copied to shared memory by every thread (stage, cp.async).
struct tc_codes5 {
    static constexpr int TROWS = 5 * TC_G, STEPS = 5;
    static constexpr int A_BYTES = TC_G * (TC_WG_ROWS + TC_PAD);
    __device__ static tc_pos pos(int u) {
        const int lg = u / 5;
        return {lg % 4, u % 5, lg / 16, lg / 4 % 4};
    }
#if TG_SM90A // the wgmma kernel's alone
    __device__ static void stage(const params &p, size_t r0, size_t chunk, uint8_t *sa) {
        tc_stage_codes<TC_WG_ROWS>(p, r0, chunk * TC_G, p.groups,
                                   (uint8_t(*)[TC_WG_ROWS + TC_PAD])sa);
    }
    __device__ static void decode(const uint8_t *sa, uint32_t (&w)[2][2 * STEPS]) {
        const int lane = threadIdx.x & 31, row = 16 * (threadIdx.x >> 5) + (lane >> 2);
#pragma unroll
        for (int h = 0; h < 2; h++)
            tc_decode<TC_WG_ROWS>((const uint8_t(*)[TC_WG_ROWS + TC_PAD])sa, row + 8 * h,
                                  lane & 3, w[h]);
    }
#endif
};

// The block's 2-bit tiles (tiles_kernel), made once per block and worker: a lane's 32 digits
// of a row are two words, four int8 digits a shift and a mask, so that a digit costs half an
// integer operation where the 5codes' base-3 digits cost two (what bounded the kernel:
// docs/PERFORMANCE.md). Chunk c, slab s (16 output rows), lane l = 4·g + t4: one 16-byte
// piece, words x, y for row 16s + g and z, w for row 16s + g + 8, each row's table rows
// 128c + 32·t4 + v (v = 0..31) with digit v at bit 32·(v / 16) + 8·(v % 4) + 2·(v / 4 % 4) of
// the pair of words: digits 8st .. 8st + 7 are step st's.
struct tc_tiles2 {
    static constexpr int TROWS = 128, STEPS = 4;
    static constexpr int A_BYTES = TC_WARPS * 32 * 16; // a 16-byte piece a thread
    __device__ static tc_pos pos(int u) {
        const int v = u % 32;
        return {u / 32, v / 8, v % 8 / 4, v % 4};
    }
#if TG_SM90A
    __device__ static void decode(const uint8_t *sa, uint32_t (&w)[2][2 * STEPS]) {
        const uint4 u = ((const uint4 *)sa)[threadIdx.x];
        const uint32_t word[2][2] = {{u.x, u.y}, {u.z, u.w}};
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int j = 0; j < 2 * STEPS; j++)
                w[h][j] = word[h][j / 4] >> 2 * (j % 4) & 0x03030303u;
    }
#endif
};

// The block's 5codes as 2-bit tiles (tc_tiles2's layout), every chunk of its 5·groups table
// rows: one thread a 16-byte piece (consecutive threads, consecutive pieces).
__global__ void tiles_kernel(const uint8_t *codes, size_t ldc, size_t rows, size_t groups,
                             size_t slabs, size_t chunks, uint4 *tiles) {
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < chunks * slabs * 32;
         e += (size_t)gridDim.x * blockDim.x) {
        const int lane = (int)(e % 32), t4 = lane % 4;
        const size_t s = e / 32 % slabs, c = e / 32 / slabs, t = 128 * c + 32 * (size_t)t4;
        uint64_t d[2] = {0, 0};
        for (int h = 0; h < 2; h++) {
            const size_t r = 16 * s + lane / 4 + 8 * h;
            if (r >= rows) continue;
            for (size_t g = t / 5; g < groups && 5 * g < t + 32; g++) {
                unsigned code = codes[g * ldc + r];
                for (int q = 0; q < 5; q++, code /= 3) {
                    const int64_t v = (int64_t)(5 * g + q) - (int64_t)t;
                    if (v >= 0 && v < 32)
                        d[h] |= (uint64_t)(code % 3) << (32 * (v / 16) + 8 * (v % 4) +
                                                         2 * (v / 4 % 4));
                }
            }
        }
        tiles[e] = make_uint4((uint32_t)d[0], (uint32_t)(d[0] >> 32), (uint32_t)d[1],
                              (uint32_t)(d[1] >> 32));
    }
}

// The B operands of every chunk, column and step of A's source Src: 256 bytes each, at
// ((chunk·k + c)·STEPS + step)·256, the k32 × n8 tile as wgmma's K-major core matrices (8 rows
// of 16 bytes; no swizzle): byte 128·h + 16·s + 4·t4 + i holds slice s of the table row at
// (t4, step, h, i) (Src::pos). mma.sync's lane 4s + t4 finds its two B words at word offsets
// lane and 32 + lane. One thread a (table row, column): r_0 = A·2^(−e), q_s = rint(128·r_s),
// r_(s+1) = 128·r_s − q_s (exact).
template <class Src>
__global__ void frag_kernel(params p, const unsigned long long *mx, uint8_t *frag,
                            size_t chunks) {
    const size_t rows = chunks * Src::TROWS, total = rows * p.k;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < total;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t t = e % rows, c = e / rows, chunk = t / Src::TROWS;
        const tc_pos q = Src::pos((int)(t % Src::TROWS));
        double r = scalbn(tc_a(p, t, c), -tc_exponent(mx[c]));
        uint8_t *w = frag + ((chunk * p.k + c) * Src::STEPS + q.st) * 256 + q.h * 128 +
                     4 * q.t4 + q.i;
#pragma unroll
        for (int sl = 0; sl < 8; sl++) {
            const double x = rint(128 * r);
            r = 128 * r - x;
            w[16 * sl] = (uint8_t)(int8_t)x;
        }
    }
}

__device__ __forceinline__ void tc_mma(int *d, uint32_t a0, uint32_t a1, uint32_t a2,
                                       uint32_t a3, uint2 b) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b.x), "r"(b.y));
}

#if TG_SM90A
#define TG_R4(i) "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3])
#define TG_R20(i) TG_R4(i), TG_R4(i + 4), TG_R4(i + 8), TG_R4(i + 12), TG_R4(i + 16)
// d += A·B for a warpgroup's 64 rows × 80 columns (ten columns' eight slices) × 32 digits: A in
// mma.sync's registers, B the shared-memory tile of descriptor db; acc = 0 overwrites d.
__device__ __forceinline__ void tc_wgmma(int (&d)[40], uint32_t a0, uint32_t a1, uint32_t a2,
                                         uint32_t a3, uint64_t db, int acc = 1) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %45, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n80k32.s32.s8.s8 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "
                 "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, "
                 "%33, %34, %35, %36, %37, %38, %39}, {%40, %41, %42, %43}, %44, p;\n}\n"
                 : TG_R20(0), TG_R20(20)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(acc)
                 : "memory");
}
#undef TG_R20
#undef TG_R4

// A warpgroup's products of one chunk, queued: acc += A·B over its STEPS k32 steps (with
// @p overwrite, the first step overwrites acc), A the lane's decoded digits (word 2·st + h' of
// row half h), B the chunk's slices at shared address b0 (column n's core matrices STEPS·256
// bytes apart, the two k halves 128). Returns once only this chunk's products may still run:
// the previous chunk's A registers and slices are free.
template <int STEPS>
__device__ __forceinline__ void tc_chunk_products(int (&acc)[1][TC_KC][4],
                                                  const uint32_t (&a)[2][2 * STEPS], unsigned b0,
                                                  bool overwrite) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int st = 0; st < STEPS; st++) {
        const uint64_t db = (uint64_t)(((b0 + 256 * st) & 0x3ffff) >> 4) |
                            (uint64_t)(128 >> 4) << 16 | (uint64_t)(STEPS * 256 >> 4) << 32;
        tc_wgmma(*reinterpret_cast<int(*)[40]>(&acc[0][0][0]), a[0][2 * st], a[1][2 * st],
                 a[0][2 * st + 1], a[1][2 * st + 1], db, !overwrite || st);
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
}
#endif

// The B operands of chunk `chunk`'s columns c0 .. c0 + NT − 1 to shared memory by cp.async.
template <int NT, int STEPS>
__device__ __forceinline__ void tc_stage_b(const params &p, const uint2 *frag, int c0,
                                           size_t chunk, uint2 *sb) {
    const uint2 *fb = frag + (chunk * p.k + c0) * STEPS * 32;
    for (int e = threadIdx.x; e < NT * STEPS * 16; e += blockDim.x)
        tc_copy16(&sb[2 * e], fb + 2 * e, true);
}

// Copies chunk gc of the block's codes and the B operands of its columns c0 .. c0 + NT − 1
// to shared memory by cp.async, one commit group.
template <int NT, int ROWS>
__device__ __forceinline__ void tc_stage(const params &p, const uint2 *frag, int c0, size_t r0,
                                         size_t gc, size_t g1, uint8_t (*sc)[ROWS + TC_PAD],
                                         uint2 *sb) {
    tc_stage_codes<ROWS>(p, r0, gc, g1, sc);
    tc_stage_b<NT, 5>(p, frag, c0, gc / TC_G, sb);
    asm volatile("cp.async.commit_group;\n" ::);
}

// The lane's digits of its rows of chunk sc: rows m0[mt] + gid and + 8 of each m16 tile.
template <int MT, int ROWS>
__device__ __forceinline__ void tc_decode_tiles(const uint8_t (*sc)[ROWS + TC_PAD],
                                                const int (&m0)[MT], uint32_t (&wa)[MT][2][10]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            tc_decode<ROWS>(sc, m0[mt] + (lane >> 2) + 8 * h, lane & 3, wa[mt][h]);
}

// The integer products of columns c0 .. c0 + NT − 1 scaled back (and by w_j for Zᵀ·Λ̃) and added
// to out by atomicAdd (other blocks hold the same rows' other groups), m16 tile mt starting at
// row m0[mt].
template <int NT, int MT>
__device__ __forceinline__ void tc_store(const params &p, int c0, const unsigned long long *mx,
                                         size_t r0, const int (&m0)[MT],
                                         const int (&acc)[MT][NT][4]) {
    const int lane = threadIdx.x & 31, t4 = lane & 3, gid = lane >> 2;
    double *out = (double *)p.out;
#pragma unroll
    for (int n = 0; n < NT; n++) {
        const int c = c0 + n, e = tc_exponent(mx[c]);
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            // this lane: slices 2·t4 and 2·t4 + 1 of rows gid and gid + 8; the four lanes of a
            // row sum its eight slices
            double v[2];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                v[h] = scalbn((double)acc[mt][n][2 * h + 1], e - 7 * (2 * t4 + 2)) +
                       scalbn((double)acc[mt][n][2 * h], e - 7 * (2 * t4 + 1));
                v[h] += __shfl_xor_sync(~0u, v[h], 1);
                v[h] += __shfl_xor_sync(~0u, v[h], 2);
            }
            const size_t r = r0 + m0[mt] + gid + 8 * (t4 & 1);
            if (t4 < 2 && r < p.rows)
                atomicAdd(&out[r + (size_t)c * p.ldout],
                          (p.trans ? p.coef[2 * (p.r0 + r)] : 1.0) * v[t4]);
        }
    }
}

// Columns c0..c0+NT−1 of the rows of blockIdx.x over the groups of blockIdx.y (gpc of them, a
// multiple of TC_G) by mma.sync: the partial P added to out, as product_kernel's. The next
// chunk is copied to shared memory while this one computes.
template <int NT>
__global__ void __launch_bounds__(TC_WARPS * 32, 2)
    tensor_kernel(params p, int c0, size_t gpc, const uint2 *frag,
                  const unsigned long long *mx) {
    __shared__ __align__(16) uint8_t sc[2][TC_G][TC_ROWS + TC_PAD];
    __shared__ __align__(16) uint2 sb[2][NT * 5 * 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    static_assert(TC_MT == 2, "m0 lists two m16 tiles");
    const int m0[TC_MT] = {warp * TC_MT * 16, warp * TC_MT * 16 + 16};
    const size_t r0 = (size_t)blockIdx.x * TC_ROWS, g0 = blockIdx.y * gpc,
                 g1 = g0 + gpc < p.groups ? g0 + gpc : p.groups;
    int acc[TC_MT][NT][4] = {};
    if (g0 < g1) tc_stage<NT, TC_ROWS>(p, frag, c0, r0, g0, g1, sc[0], sb[0]);
    int buf = 0;
    for (size_t gc = g0; gc < g1; gc += TC_G, buf ^= 1) {
        if (gc + TC_G < g1)
            tc_stage<NT, TC_ROWS>(p, frag, c0, r0, gc + TC_G, g1, sc[buf ^ 1], sb[buf ^ 1]);
        else asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::); // this chunk's copies have landed
        __syncthreads();
        uint32_t wa[TC_MT][2][10];
        tc_decode_tiles<TC_MT, TC_ROWS>(sc[buf], m0, wa);
#pragma unroll
        for (int st = 0; st < 5; st++)
#pragma unroll
            for (int n = 0; n < NT; n++) {
                const uint32_t *w = (const uint32_t *)&sb[buf][(n * 5 + st) * 32];
                const uint2 b = make_uint2(w[lane], w[32 + lane]);
#pragma unroll
                for (int mt = 0; mt < TC_MT; mt++)
                    tc_mma(acc[mt][n], wa[mt][0][2 * st], wa[mt][1][2 * st],
                           wa[mt][0][2 * st + 1], wa[mt][1][2 * st + 1], b);
            }
        __syncthreads(); // before the copies into this buffer, two chunks on
    }
    tc_store<NT, TC_MT>(p, c0, mx, r0, m0, acc);
}

// The same for ten columns by wgmma (sm_90a), from the 5codes (tc_codes5): each warpgroup one
// m64 tile (warp w's rows 16·w of the block), so that two blocks of two warpgroups fit an SM's
// registers: at one block an SM the warps' dependent decoding arithmetic left the schedulers
// idle. Software-pipelined: while the tensor cores multiply chunk c, the warps decode chunk
// c + 1 (a second set of A registers); chunk c − 1's products may still run, and chunks c + 2
// and c + 3 are on their way: TC_STAGES buffers of dynamic shared memory, one barrier a chunk.
// The block sums chunks cpb·blockIdx.y .. of the part's.
constexpr int TC_WG_SMEM = TC_STAGES * (tc_codes5::A_BYTES + TC_KC * tc_codes5::STEPS * 256);
__global__ void __launch_bounds__(TC_WARPS * 32, 2)
    tensor_kernel_wg(params p, int c0, size_t cpb, const uint2 *frag,
                     const unsigned long long *mx) {
#if TG_SM90A
    constexpr int STEPS = tc_codes5::STEPS, STAGE = tc_codes5::A_BYTES + TC_KC * STEPS * 256;
    extern __shared__ __align__(16) uint8_t tc_smem[];
    auto sa = [&](int b) { return tc_smem + b * STAGE; };
    auto sb = [&](int b) { return (uint2 *)(tc_smem + b * STAGE + tc_codes5::A_BYTES); };
    const int m0[1] = {16 * (int)(threadIdx.x >> 5)};
    const size_t chunks = (p.nt + tc_codes5::TROWS - 1) / tc_codes5::TROWS,
                 r0 = (size_t)blockIdx.x * TC_WG_ROWS, cb = blockIdx.y * cpb,
                 ce = cb + cpb < chunks ? cb + cpb : chunks;
    const int nch = cb < ce ? (int)(ce - cb) : 0;
    // chunk i into buffer i % TC_STAGES, one commit group each (empty past the last chunk)
    auto stage = [&](int i) {
        if (i < nch) {
            tc_codes5::stage(p, r0, cb + i, sa(i % TC_STAGES));
            tc_stage_b<TC_KC, STEPS>(p, frag, c0, cb + i, sb(i % TC_STAGES));
        }
        asm volatile("cp.async.commit_group;\n" ::);
    };
    // chunk i's digits and slices are in shared memory, visible to every thread and to wgmma
    // (cp.async wrote them by the generic proxy; wgmma reads by the async one), with at most
    // N later chunks' copies still in flight
    auto landed = [&](auto n) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(decltype(n)::value));
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();
    };
    for (int i = 0; i < TC_STAGES - 1; i++) stage(i);
    int acc[1][TC_KC][4] = {};
    uint32_t wa[2][2][2 * STEPS];
    landed(std::integral_constant<int, TC_STAGES - 2>());
    tc_codes5::decode(sa(0), wa[0]);
    // chunk c: its A in use, the next chunk's A filled meanwhile
    auto step = [&](int c, uint32_t(&use)[2][2 * STEPS], uint32_t(&fill)[2][2 * STEPS]) {
        // chunk c − 1's products are done after it: its A registers (fill) are free, and once
        // every warpgroup has passed this point (the barrier in landed), its buffer too
        tc_chunk_products<STEPS>(acc, use, smem_u32(sb(c % TC_STAGES)), false);
        if (c + 1 < nch) {
            landed(std::integral_constant<int, TC_STAGES - 3>());
            stage(c + TC_STAGES - 1);
            tc_codes5::decode(sa((c + 1) % TC_STAGES), fill);
        }
    };
    for (int c = 0; c < nch; c += 2) {
        step(c, wa[0], wa[1]);
        if (c + 1 < nch) step(c + 1, wa[1], wa[0]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    tc_store<TC_KC, 1>(p, c0, mx, r0, m0, acc);
#else
    __trap(); // launched only where the sm_90a code runs (wgmma_ok)
#endif
}

// The same from the 2-bit tiles, each chunk's digits (4 KB: the block's eight slabs, which the
// layout puts side by side) and slices (10 KB) brought by two TMA bulk copies that thread 0
// issues, TC_TILES_STAGES chunks ahead: a chunk's arrival and its release by both warpgroups are
// mbarriers, so that neither warpgroup waits for the other, and no thread computes a copy's
// addresses.
constexpr int TC_TILES_STAGES = 4;
constexpr int TC_TILES_STAGE = tc_tiles2::A_BYTES + TC_KC * tc_tiles2::STEPS * 256;
constexpr int TC_TILES_SMEM = TC_TILES_STAGES * TC_TILES_STAGE + 16 * TC_TILES_STAGES;
__global__ void __launch_bounds__(TC_WARPS * 32, 2)
    tensor_kernel_tiles(params p, int c0, size_t cpb, const uint2 *frag,
                        const unsigned long long *mx) {
#if TG_SM90A
    constexpr int STEPS = tc_tiles2::STEPS, A_BYTES = tc_tiles2::A_BYTES;
    extern __shared__ __align__(16) uint8_t tc_smem[];
    const unsigned base = smem_u32(tc_smem), full = base + TC_TILES_STAGES * TC_TILES_STAGE,
                   empty = full + 8 * TC_TILES_STAGES;
    const int tid = threadIdx.x;
    const int m0[1] = {16 * (tid >> 5)};
    const size_t chunks = (p.nt + tc_tiles2::TROWS - 1) / tc_tiles2::TROWS,
                 r0 = (size_t)blockIdx.x * TC_WG_ROWS, cb = blockIdx.y * cpb,
                 ce = cb + cpb < chunks ? cb + cpb : chunks, slabs = tc_slabs(p.rows),
                 slab0 = r0 / 16;
    if (cb >= ce) return;
    const int nch = (int)(ce - cb);
    // the slabs past the block's rows are not copied: their rows' sums are never stored
    const unsigned abytes = (unsigned)(slabs - slab0 < TC_WARPS ? slabs - slab0 : TC_WARPS) * 512;
    if (tid == 0) {
        for (int s = 0; s < TC_TILES_STAGES; s++) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, TC_WARPS / 4);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    auto load = [&](int i) { // chunk i into stage i % TC_TILES_STAGES, by thread 0
        const int b = i % TC_TILES_STAGES;
        const unsigned st = base + b * TC_TILES_STAGE, bar = full + 8 * b;
        mbar_expect(bar, abytes + TC_KC * STEPS * 256);
        bulk_load(st, p.tiles + ((cb + i) * slabs + slab0) * 32, abytes, bar);
        bulk_load(st + A_BYTES, frag + ((cb + i) * p.k + c0) * STEPS * 32, TC_KC * STEPS * 256,
                  bar);
    };
    if (tid == 0)
        for (int i = 0; i < TC_TILES_STAGES && i < nch; i++) load(i);
    auto sa = [&](int i) { return tc_smem + i % TC_TILES_STAGES * TC_TILES_STAGE; };
    int acc[1][TC_KC][4]; // written by the first wgmma
    uint32_t wa[2][2][2 * STEPS];
    mbar_wait(full, 0);
    tc_tiles2::decode(sa(0), wa[0]);
    // chunk c: its A in use, the next chunk's A filled meanwhile
    auto step = [&](int c, uint32_t(&use)[2][2 * STEPS], uint32_t(&fill)[2][2 * STEPS]) {
        // chunk c − 1's products are done after it: its A registers (fill) and, once both
        // warpgroups say so, its stage are free
        tc_chunk_products<STEPS>(acc, use, base + c % TC_TILES_STAGES * TC_TILES_STAGE + A_BYTES,
                                 c == 0);
        if (c > 0) {
            const int ps = (c - 1) % TC_TILES_STAGES;
            if ((tid & 127) == 0) mbar_arrive(empty + 8 * ps);
            if (tid == 0 && c - 1 + TC_TILES_STAGES < nch) {
                mbar_wait(empty + 8 * ps, (c - 1) / TC_TILES_STAGES & 1);
                load(c - 1 + TC_TILES_STAGES);
            }
        }
        if (c + 1 < nch) {
            mbar_wait(full + 8 * ((c + 1) % TC_TILES_STAGES), (c + 1) / TC_TILES_STAGES & 1);
            tc_tiles2::decode(sa(c + 1), fill);
        }
    };
    for (int c = 0; c < nch; c += 2) {
        step(c, wa[0], wa[1]);
        if (c + 1 < nch) step(c + 1, wa[1], wa[0]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    tc_store<TC_KC, 1>(p, c0, mx, r0, m0, acc);
#else
    __trap(); // launched only where the sm_90a code runs (wgmma_ok)
#endif
}

template <int NT = TC_KC>
void launch_tensor_kc(const params &p, int c0, int kc, dim3 grid, size_t gpc, const uint2 *frag,
                      const unsigned long long *mx, cudaStream_t s) {
    if (kc == NT)
        tensor_kernel<NT><<<grid, TC_WARPS * 32, 0, s>>>(p, c0, gpc, frag, mx);
    else if constexpr (NT > 1)
        launch_tensor_kc<NT - 1>(p, c0, kc, grid, gpc, frag, mx, s);
}

// tg_fc_first_call by the 32 lanes of a warp together: each step compares 32 evenly spaced
// calls, ~3 dependent loads for a row's thousands of calls where a binary search takes ~13, in
// every row of each later part's task.
__device__ int warp_first_call(const int32_t *tl, int lo, int hi, int64_t t) {
    if (lo == hi || tl[lo] >= t) return lo;
    if (tl[hi - 1] < t) return hi;
    const int lane = threadIdx.x & 31;
    while (hi - lo > 32) { // the first call not below t is in [lo, hi]
        const int step = (hi - lo + 31) / 32, at = lo + lane * step;
        const int below = __popc(__ballot_sync(~0u, at < hi && tl[at] < t));
        if (below == 0) return lo;
        const int top = lo + below * step;
        lo += (below - 1) * step + 1;
        hi = top < hi ? top : hi;
    }
    return lo + __popc(__ballot_sync(~0u, lo + lane < hi && tl[lo + lane] < t));
}

// The missing calls, counted as digit 0 above, added back as c_j·in_t (the digit 2p_j times w_j):
// @p split warps a row, each over its share of the row's calls in the part, 32 calls a step
// (their table rows loaded one a lane during the step before, so that a step waits for one
// load, not two), each call's line of rows_of read by eight lanes (two columns each, one 16-byte
// load), so that a load touches four lines rather than one line a lane for each column. The
// four partial sums of a warp meet by shuffles, the warps' in out by atomicAdd (the tensor kernel
// has finished: one stream). A block's few thousand rows make too few warps to keep enough loads
// in flight without the split.
constexpr int TC_MU = 8; // calls a lane has in flight: a step is 32 calls a warp
// four blocks an SM (64 registers; unbounded it takes 72, which leaves room for three)
__global__ void __launch_bounds__(256, 4)
    missing_kernel(params p, const double2 *rows_of, int split) {
    const int lane = threadIdx.x & 31, sub = lane >> 3;
    const size_t w = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32, r = w / split;
    if (r >= p.rows) return;
    const int32_t *tl = p.miss + p.rows + 1;
    // the row's calls in the part (its table rows from p.t0, those of rows_of)
    const int lo = warp_first_call(tl, p.miss[r], p.miss[r + 1], p.t0),
              hi = warp_first_call(tl, lo, p.miss[r + 1], p.t0 + (int64_t)p.nt);
    const int64_t len = hi - lo, part = (int64_t)(w % split);
    const int ib = (int)(lo + len * part / split), ie = (int)(lo + len * (part + 1) / split);
    if (ib == ie) return;
    const int ld2 = tc_ld(p.k) / 2;
    // Zᵀ·Λ̃: the row's SNP gives c_j, the table row (a sample) the column
    const double f = p.trans ? p.coef[2 * ((size_t)p.r0 + r) + 1] : 1.0;
    double *out = (double *)p.out;
    for (int c0 = 0; c0 < p.k; c0 += 16) {
        const int c = c0 + 2 * (lane & 7);
        double2 acc = {0, 0};
        int tn = ib + lane < ie ? tl[ib + lane] : 0;
        for (int i0 = ib; i0 < ie; i0 += 4 * TC_MU) {
            const int tc = tn;
            tn = i0 + 4 * TC_MU + lane < ie ? tl[i0 + 4 * TC_MU + lane] : 0;
            double2 v[TC_MU];
#pragma unroll
            for (int u = 0; u < TC_MU; u++) {
                const int call = 4 * u + sub, t = __shfl_sync(~0u, tc, call);
                // k = 10: three lanes of the eight have no columns
                v[u] = c < p.k && i0 + call < ie ? rows_of[(size_t)(t - p.t0) * ld2 + c / 2]
                                                 : make_double2(0, 0);
            }
#pragma unroll
            for (int u = 0; u < TC_MU; u++) acc.x += v[u].x, acc.y += v[u].y;
        }
        for (int o = 8; o < 32; o <<= 1) {
            acc.x += __shfl_xor_sync(~0u, acc.x, o);
            acc.y += __shfl_xor_sync(~0u, acc.y, o);
        }
        if (sub == 0 && c < p.k) atomicAdd(&out[r + (size_t)c * p.ldout], f * acc.x);
        if (sub == 0 && c + 1 < p.k) atomicAdd(&out[r + (size_t)(c + 1) * p.ldout], f * acc.y);
    }
}

// What a worker's scratch slot 3 (this file's alone) holds: the column maxima, the slices in
// each source's layout (tc_codes5's, also mma.sync's; tc_tiles2's) and the row-major copy of
// one part's in. Its size does not depend on the block (the copy's room is kept without
// missing calls too, and both layouts' slices), so no block of a part reallocates it.
static struct {
    uint64_t product;
    const void *base;
    bool frag5, frag2, rows;
} tc_made[STARPU_NMAXWORKERS];

// The 2-bit tiles each worker has made, by block (tg_fivecodes_arg.geno, trans, r0); p null
// where the device had no room for them (that block then reads its 5codes).
struct tiles_entry {
    uint64_t geno;
    int trans;
    int64_t r0;
    uint4 *p;
};
static std::vector<tiles_entry> tiles_made[STARPU_NMAXWORKERS];

// The block's tiles, made on first use from its whole codes (@p groups of @p rows), or null.
const uint4 *block_tiles(const tg_fivecodes_arg &a, const uint8_t *codes, size_t ldc,
                         size_t rows, size_t groups, cudaStream_t s) {
    auto &made = tiles_made[starpu_worker_get_id_check()];
    for (const tiles_entry &e : made)
        if (e.geno == a.geno && e.trans == a.trans && e.r0 == a.r0) return e.p;
    const size_t sl = tc_slabs(rows), chunks = (5 * groups + tc_tiles2::TROWS - 1) /
                                                 tc_tiles2::TROWS;
    uint4 *t = nullptr;
    if (cudaMalloc(&t, chunks * sl * 32 * sizeof *t) != cudaSuccess) {
        (void)cudaGetLastError(); // out of memory: not an error of the stream's
        t = nullptr;
    } else {
        const size_t b = (chunks * sl * 32 + 255) / 256;
        tiles_kernel<<<(unsigned)(b < 65536 ? b : 65536), 256, 0, s>>>(codes, ldc, rows, groups,
                                                                       sl, chunks, t);
    }
    made.push_back({a.geno, a.trans, a.r0, t});
    return t;
}

// D·A of every column added to out by the tensor cores, then the missing calls; the epilogue is
// epilogue_kernel's. The slices of in are made by the first block of @p product (a part's
// serial) on this worker and kept for its other blocks (one stream: in order). Passes of ten
// columns run by wgmma where the device has it, from the block's 2-bit tiles where p.tiles is
// set, else from its 5codes; other passes by mma.sync.
void launch_tensor(const params &p, uint64_t product, cudaStream_t s) {
    const bool wg = wgmma_ok(), from_tiles = p.tiles, codes5 = !from_tiles || p.k % TC_KC;
    const size_t ch5 = (p.nt + tc_codes5::TROWS - 1) / tc_codes5::TROWS,
                 ch2 = (p.nt + tc_tiles2::TROWS - 1) / tc_tiles2::TROWS,
                 fb5 = ch5 * p.k * tc_codes5::STEPS * 256, fb2 = ch2 * p.k * tc_tiles2::STEPS * 256,
                 tbytes = p.nt * tc_ld(p.k) * sizeof(double);
    char *base = (char *)tg_cuda_scratch(3, TG_FC_MAXK * 8 + fb5 + fb2 + tbytes);
    unsigned long long *mx = (unsigned long long *)base;
    uint8_t *frag5 = (uint8_t *)(base + TG_FC_MAXK * 8), *frag2 = frag5 + fb5;
    double *rows_of = (double *)(frag2 + fb2);
    auto &made = tc_made[starpu_worker_get_id_check()];
    if (made.product != product || made.base != base) {
        TG_CUDA_CHECK(cudaMemsetAsync(mx, 0, p.k * sizeof *mx, s));
        const size_t cb = (p.nt + 255) / 256;
        colmax_kernel<<<dim3((unsigned)(cb < 32 ? cb : 32), p.k), 256, 0, s>>>(p, mx);
        made = {product, base, false, false, false};
    }
    auto slices = [&](auto src, size_t chunks, uint8_t *frag, bool &done) {
        if (done) return;
        const size_t fb = (chunks * decltype(src)::TROWS * p.k + 255) / 256;
        frag_kernel<decltype(src)><<<(unsigned)(fb < 8192 ? fb : 8192), 256, 0, s>>>(p, mx, frag,
                                                                                    chunks);
        done = true;
    };
    if (codes5) slices(tc_codes5{}, ch5, frag5, made.frag5);
    if (from_tiles) slices(tc_tiles2{}, ch2, frag2, made.frag2);
    if (p.nmiss && !made.rows) {
        rows_kernel<<<(unsigned)((p.nt + TC_TT - 1) / TC_TT), 256, 0, s>>>(p, rows_of);
        made.rows = true;
    }
    // blocks of brows rows, two an SM (the kernels' registers): split the part's chunks so
    // that the blocks fill their last wave best (by 2% steps, fewer splits first), each block
    // at least two chunks and at most TC_MAX_GROUPS groups' table rows; *cpb: the chunks of a
    // block
    auto shape = [&](int brows, size_t chunks, int trows, size_t *cpb) {
        const size_t tiles = (p.rows + brows - 1) / brows, slots = 2 * (size_t)tg_cuda_sm_count(),
                     most_rows = 5 * TC_MAX_GROUPS / trows,
                     least = (chunks + most_rows - 1) / most_rows;
        size_t splits = least, most = (chunks + 1) / 2 < 64 ? (chunks + 1) / 2 : 64;
        double fill = 0;
        for (size_t sp = least; sp <= most; sp++) {
            const size_t blocks = tiles * sp;
            const double f = (double)blocks / (double)((blocks + slots - 1) / slots * slots);
            if (f > fill + 0.02) fill = f, splits = sp;
        }
        *cpb = (chunks + splits - 1) / splits;
        return dim3((unsigned)tiles, (unsigned)((chunks + *cpb - 1) / *cpb));
    };
    for (int c0 = 0; c0 < p.k; c0 += TC_KC) {
        const int kc = p.k - c0 < TC_KC ? p.k - c0 : TC_KC;
        size_t cpb;
        if (kc == TC_KC && from_tiles) { // wgmma's shape is m64n80: ten columns
            static std::atomic<uint64_t> attr{0};
            smem_attribute(tensor_kernel_tiles, TC_TILES_SMEM, attr);
            const dim3 grid = shape(TC_WG_ROWS, ch2, tc_tiles2::TROWS, &cpb);
            tensor_kernel_tiles<<<grid, TC_WARPS * 32, TC_TILES_SMEM, s>>>(
                p, c0, cpb, (const uint2 *)frag2, mx);
        } else if (wg && kc == TC_KC) {
            static std::atomic<uint64_t> attr{0};
            smem_attribute(tensor_kernel_wg, TC_WG_SMEM, attr);
            const dim3 grid = shape(TC_WG_ROWS, ch5, tc_codes5::TROWS, &cpb);
            tensor_kernel_wg<<<grid, TC_WARPS * 32, TC_WG_SMEM, s>>>(p, c0, cpb,
                                                                   (const uint2 *)frag5, mx);
        } else {
            const dim3 grid = shape(TC_ROWS, ch5, tc_codes5::TROWS, &cpb);
            launch_tensor_kc(p, c0, kc, grid, cpb * TC_G, (const uint2 *)frag5, mx, s);
        }
    }
    if (p.nmiss) {
        // warps enough to fill every SM's 64 warp slots
        const size_t want = 64 * (size_t)tg_cuda_sm_count(), rows = p.rows;
        const int split = (int)((want + rows - 1) / rows < 16 ? (want + rows - 1) / rows : 16);
        missing_kernel<<<(unsigned)((rows * split + 7) / 8), 256, 0, s>>>(
            p, (const double2 *)rows_of, split);
    }
}

template <typename T> void run(const params &p, const tg_fivecodes_arg &a, cudaStream_t s) {
    if (a.t0 == 0) // the first part: out is written
        TG_CUDA_CHECK(cudaMemset2DAsync(p.out, p.ldout * sizeof(T), 0, p.rows * sizeof(T), p.k, s));
    if constexpr (std::is_same<T, double>::value)
        launch_tensor(p, a.product, s);
    else
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
    p.t0 = a.t0;
    // the part's groups and table rows; the coefficients by table row from the part's first for
    // trans 0, by output row for trans 1
    p.ldc = STARPU_MATRIX_GET_LD(buffers[0]);
    p.codes = (const uint8_t *)STARPU_MATRIX_GET_PTR(buffers[0]) + a.t0 / 5 * p.ldc;
    p.rows = STARPU_MATRIX_GET_NX(buffers[4]);
    p.in = (const void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    p.nt = STARPU_MATRIX_GET_NX(buffers[1]);
    p.groups = (p.nt + 4) / 5;
    p.ldin = STARPU_MATRIX_GET_LD(buffers[1]);
    p.coef = (const double *)STARPU_VECTOR_GET_PTR(buffers[2]) + (a.trans ? 0 : 2 * a.t0);
    p.miss = (const int32_t *)STARPU_VECTOR_GET_PTR(buffers[3]);
    p.nmiss = STARPU_VECTOR_GET_NX(buffers[3]) - p.rows - 1;
    p.r0 = a.r0;
    p.out = (void *)STARPU_MATRIX_GET_PTR(buffers[4]);
    p.ldout = STARPU_MATRIX_GET_LD(buffers[4]);
    p.k = a.k;
    p.tiles = nullptr;
    cudaStream_t s = starpu_cuda_get_local_stream();
    if (p.rows == 0) return;
    // the block's 2-bit tiles, for FP64 passes of ten columns by wgmma, in parts that start at
    // one of their chunks
    if (a.prec == TG_FP64 && a.geno && a.k >= TC_KC && a.t0 % tc_tiles2::TROWS == 0 &&
        wgmma_ok()) {
        const uint4 *t = block_tiles(a, (const uint8_t *)STARPU_MATRIX_GET_PTR(buffers[0]), p.ldc,
                                     p.rows, STARPU_MATRIX_GET_NY(buffers[0]), s);
        if (t) p.tiles = t + (size_t)a.t0 / tc_tiles2::TROWS * tc_slabs(p.rows) * 32;
    }
    if (a.prec == TG_FP64)
        run<double>(p, a, s);
    else
        run<float>(p, a, s);
    TG_CUDA_CHECK(cudaGetLastError());
}

extern "C" void tg_fivecodes_cuda_forget(void *geno) {
    auto &made = tiles_made[starpu_worker_get_id_check()];
    for (size_t i = 0; i < made.size();)
        if (made[i].geno == *(const uint64_t *)geno) {
            if (made[i].p) TG_CUDA_CHECK(cudaFree(made[i].p));
            made[i] = made.back();
            made.pop_back();
        } else {
            i++;
        }
}
