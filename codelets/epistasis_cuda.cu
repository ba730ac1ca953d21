// Epistasis rounds on the GPU. A round (one block of SNPs per position) becomes:
//   1. rows: the SNP positions split into a left group (1 or 2 SNPs) and a right group; every
//      tuple of a group gets one bit row per plane combination (the AND of its SNPs' planes),
//      per class. With complete data only the {g0, g1} combinations are per-tuple rows; the
//      entries with a valid plane ("V") come from a few extra rows (single SNPs, all ones), the
//      paper's lower-order tables at O(B) instead of O(B²) rows.
//   2. a binary GEMM, C = popc(L AND R) over the samples of one class, on the tensor cores
//      (wgmma m64n256k256 .and.popc fed by TMA on Hopper, mma.sync m16n8k256 elsewhere),
//      leaving out the tiles whose every pair of tuples is in the wrong order (TileKeys);
//   3. an epilogue, three lanes per combination: gather the 3^k entries E of both classes from
//      C, turn them into the contingency table ([N0, N1, N2] = [E0, E1, EV − E0 − E1] along each
//      SNP), score it exactly as the CPU reference does (same table, same order of operations,
//      no fused multiply-add). With K2 the exact score is skipped where a table-free lower
//      bound on the key is already above the worker's threshold (codelets/epistasis_k2screen.cuh);
//   4. selection of the round's best keys by sorting chunks in shared memory until one remains.
//      Only combinations no worse than the worker's threshold reach it: the topk-th best key this
//      worker has reported in the search so far (a combination worse than that cannot make the
//      search's top k), so after the first rounds the epilogue writes a few keys, not one per
//      combination, and the selection sorts those.
// Everything is queued on the worker's stream (the codelet is asynchronous); the per-worker
// scratch memory grows to the largest round seen and is kept.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <vector>

#include "codelets/epistasis.h"
#include "codelets/epistasis_cuda.cuh"
#include "codelets/epistasis_k2screen.cuh"
#include "runtime/cuda.h"

namespace {

// The round's GEMM: the first shape of codelets/epistasis_cuda.cuh that runs on this device.
void launch_gemm(const GemmArgs &g, cudaStream_t st) {
    static std::atomic<int> chosen[64]; // per device: the shape + 1, 0 before the first launch
    std::atomic<int> &c = chosen[device_index()];
    if (!c.load()) {
        int s = 0;
        while (s < NSHAPES && !shape_runs(s)) s++;
        if (s == NSHAPES) // under 96 KiB of shared memory a block
            STARPU_ABORT_MSG("epistasis: no GEMM shape fits this GPU's shared memory");
        c = s + 1;
    }
    gemm_shapes[c.load() - 1].run(g, st);
}

// ---------------------------------------------------------------------------------------------
// Round geometry, shared by the row builder and the epilogue.
constexpr int V = 2; // the valid plane's index, and "V" in an entry code

// The SNP positions of a round split into a left and a right group. Grouping 0 is (0,1 | 2,3)
// at order 4 and (0,1 | 2) at order 3; grouping 1, (0,3 | 1,2) and (1,2 | 0), is used when the
// middle positions share a block while their neighbours do not, so that the two SNPs of one
// block fall in one group, where only s1 < s2 tuples exist, and no GEMM entry is wasted on a
// combination out of order.
struct Side {
    int nl;                    // SNP positions in the group (1 or 2)
    const uint64_t *blk[2];    // the plane blocks of its positions
    int nsnp[2];               // real SNPs of those blocks
    const uint32_t *tuples;    // nl = 2: (s1 << 16 | s2), lexicographic
    int64_t nt;                // tuples
    int64_t nmain;             // per-tuple rows: nt·2^nl (complete) or nt·3^nl
    int64_t nrows;             // rows through the GEMM: + single rows (complete data), and on
                               // the left the all-ones row
};

struct Round {
    Side L, R;
    int complete;
    int64_t words[2];
    int64_t coff1;                     // word offset of class 1 in a plane block
    int64_t first[TG_EPI_MAX_ORDER];   // first global SNP of each position's block
    int64_t first_end;                 // the first SNP is below it (tg_epi_round_arg)
};

// Positions of the left and right groups, per order and grouping.
template <int K, int G> struct Groups {
    static constexpr int L0 = K == 2 ? 0 : (G ? (K == 4 ? 0 : 1) : 0);
    static constexpr int L1 = K == 2 ? -1 : (G ? (K == 4 ? 3 : 2) : 1);
    static constexpr int R0 = K == 2 ? 1 : (G ? (K == 4 ? 1 : 0) : 2);
    static constexpr int R1 = K == 4 ? (G ? 2 : 3) : -1;
};

__device__ __forceinline__ const uint64_t *plane(const Round &rd, const Side &sd, int which, int c,
                                                 int s, int p) {
    return sd.blk[which] + (c ? rd.coff1 : 0) + ((int64_t)s * 3 + p) * rd.words[c];
}

__device__ __forceinline__ void tuple_snps(const Side &sd, int64_t t, int &s1, int &s2) {
    if (sd.nl == 1) {
        s1 = (int)t;
        s2 = 0;
    } else {
        uint32_t v = sd.tuples[t];
        s1 = (int)(v >> 16);
        s2 = (int)(v & 0xffff);
    }
}

// The planes whose AND is bit row `r` of a side (class c); b is NULL for a single plane.
__device__ void row_planes(const Round &rd, const Side &sd, int64_t r, int c, const uint64_t *&a,
                           const uint64_t *&b) {
    b = nullptr;
    if (r < sd.nmain) {
        const int per = rd.complete ? (sd.nl == 1 ? 2 : 4) : (sd.nl == 1 ? 3 : 9);
        const int base = rd.complete ? 2 : 3;
        int64_t t = r / per;
        int code = (int)(r % per), s1, s2;
        tuple_snps(sd, t, s1, s2);
        if (sd.nl == 1) {
            a = plane(rd, sd, 0, c, s1, code);
        } else {
            a = plane(rd, sd, 0, c, s1, code / base);
            b = plane(rd, sd, 1, c, s2, code % base);
        }
        return;
    }
    r -= sd.nmain;
    // complete data, two-SNP groups: the single rows of each position's block; then one
    // all-ones row (the valid plane of any real SNP is all ones on the class's samples)
    for (int q = 0; q < sd.nl && sd.nl == 2; q++) {
        if (r < 2 * (int64_t)sd.nsnp[q]) {
            a = plane(rd, sd, q, c, (int)(r >> 1), (int)(r & 1));
            return;
        }
        r -= 2 * (int64_t)sd.nsnp[q];
    }
    a = plane(rd, sd, 0, c, 0, V);
}

// Rows r0 .. r0+nr of a side, both classes: a CTA per row at a time, its threads along words.
// With `tot` (left rows of complete data) each row's bit count goes to tot[(c·nr + row)·ldc]: C's
// column of the right side's all-ones row, which the GEMM leaves out (C's class 1 rows follow
// its nr class 0 rows, as the rows here do).
constexpr int ROW_THREADS = 256;
__global__ void __launch_bounds__(ROW_THREADS, 8)
    build_rows(Round rd, int left, int64_t r0, int64_t nr, uint64_t *out0, uint64_t *out1,
               int32_t *tot, int64_t ldc) {
    __shared__ int part[ROW_THREADS / 32];
    const Side &sd = left ? rd.L : rd.R;
    for (int64_t r = blockIdx.x; r < 2 * nr; r += gridDim.x) {
        int c = r >= nr;
        int64_t row = c ? r - nr : r, nw = rd.words[c];
        const uint64_t *a, *b;
        row_planes(rd, sd, r0 + row, c, a, b);
        uint64_t *out = (c ? out1 : out0) + row * nw;
        int n = 0;
        for (int64_t w = threadIdx.x; w < nw; w += ROW_THREADS) {
            const uint64_t v = b ? __ldg(a + w) & __ldg(b + w) : __ldg(a + w);
            out[w] = v;
            n += __popcll(v);
        }
        if (!tot) continue;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) n += __shfl_xor_sync(0xffffffffu, n, o);
        if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = n;
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int i = 1; i < ROW_THREADS / 32; i++) n += part[i];
            tot[r * ldc] = n;
        }
        __syncthreads(); // part is rewritten for the next row
    }
}

// Row of entry code x (x_i ∈ {0, 1, V} for the side's positions) for tuple t = (s1, s2).
__device__ __forceinline__ int64_t entry_row(const Round &rd, const Side &sd, int64_t t, int s1,
                                             int s2, int x1, int x2) {
    if (!rd.complete) return sd.nl == 1 ? t * 3 + x1 : t * 9 + x1 * 3 + x2;
    if (sd.nl == 1) return x1 < 2 ? t * 2 + x1 : sd.nmain;
    if (x1 < 2 && x2 < 2) return t * 4 + x1 * 2 + x2;
    if (x1 < 2) return sd.nmain + 2 * s1 + x1;
    if (x2 < 2) return sd.nmain + 2 * (int64_t)sd.nsnp[0] + 2 * s2 + x2;
    return sd.nmain + 2 * (int64_t)sd.nsnp[0] + 2 * (int64_t)sd.nsnp[1];
}

template <int K> struct Pow3 { static constexpr int v = 3 * Pow3<K - 1>::v; };
template <> struct Pow3<0> { static constexpr int v = 1; };

struct ScoreArgs {
    const double *table;
    int score;
};

// Order-preserving 64-bit image of a key; above every real key for slots that are not
// combinations (so a +INFINITY key still sorts before them).
// (Host too: the page cursor of pass mode.)
__host__ __device__ __forceinline__ uint64_t key_bits(double k) {
    uint64_t b;
    memcpy(&b, &k, sizeof b);
    return (b >> 63) ? ~b : b | 0x8000000000000000ull;
}
__device__ __forceinline__ double bits_key(uint64_t b) {
    return __longlong_as_double((long long)((b >> 63) ? b & 0x7fffffffffffffffull : ~b));
}
constexpr uint64_t NO_COMBO = ~0ull;
constexpr int RANK_BITS = 12; // local SNP index bits per position in a rank (B ≤ 4096)

struct EpiArgs {
    Round rd;
    ScoreArgs sa;
    const int32_t *cm[2]; // C of the slab's per-tuple left rows, per class
    const int32_t *ce[2]; // C of the left single / all-ones rows (complete data)
    int64_t ldc;
    int64_t t0, t1;       // left tuples of this slab
    uint64_t *keys;       // candidates: key bits
    uint64_t *ranks;      // candidates: local SNP indices in position order (tie-break = SNP order)
    unsigned long long *evaluated, *kept; // counters: combinations evaluated, candidates written
    const unsigned long long *thr; // keys above it are left out
    // pass mode (tg_epi_round_arg): the statistic each df needs, and the page cursor (key bits
    // and rank; has_after 0: none)
    int has_after;
    uint64_t after_kb, after_rank;
    double pass_stat[81];
};

// Three lanes per combination, one per genotype d0 of the first SNP (ten combinations per
// warp, two lanes idle): a lane holds the 3^(k−1) cells of its d0 for both classes, so a
// thread's state fits in 168 registers, 12 warps per SM, and each lane keeps its C loads and
// its 3·3^(k−1) table loads in flight together. Each lane derives its cells along SNPs 2..k in
// registers, the lane of d0 = 2 along SNP 1 from its two neighbours by shuffles, then sums its
// cells' terms in cell order; the key is (p0 + p1) + p2 over the three lanes' partials, with
// explicitly rounded operations (no contraction), as the CPU reference computes it
// (tg_epi_key). The kernel is persistent: one CTA per SM, warps striding over groups of ten
// combinations. Measured on the H100 (order 4, 1,024 SNPs, 300 rounds): one thread per
// combination (2·3^k counts, 255 registers with spills, 8 warps per SM) about 2.4 s; three
// lanes 1.09 s (2 CTAs of 256 threads at 128 registers, spilling: 1.41 s; 512 threads: 1.48
// s; the score table's first 29,000 entries in shared memory: 1.41 s, from bank conflicts and
// the L1 left for C too small). Nsight Compute: bound by the L1's wavefronts (80% busy): the
// table gathers (~6.7 wavefronts per warp-wide load), then the C loads and the shuffles.
constexpr int EPI_THREADS = 384, EPI_WARPS = EPI_THREADS / 32, EPI_PER_WARP = 10;
// A lane's cell j = Σ_{p≥1} x_p·stride(p) over SNP positions 1 ≤ p < K; digit(j, p) = x_p.
// (Loop-free: nvcc keeps a loop here as a loop inside unrolled code, and the lane's arrays
// then go to local memory.)
template <int K> __host__ __device__ constexpr int stride(int p) {
    return p == K - 1 ? 1 : p == K - 2 ? 3 : p == K - 3 ? 9 : 27;
}
template <int K> __host__ __device__ constexpr int digit(int j, int p) {
    return j / stride<K>(p) % 3;
}

// The 3^NR entries of one C row for a right tuple, right digits y1·3 + y2 (NR = 0: the one
// entry at col[0]). With complete data the entries of a tuple's four {0, 1} codes are one
// aligned 16-byte chunk and (0, V) / (1, V) and (V, 0) / (V, 1) are pairs of single-SNP rows:
// four loads instead of nine, each using the whole sector it brings into L1.
template <int NR>
__device__ __forceinline__ void load_entries(const int32_t *row, const int64_t *col, int complete,
                                             int *out) {
    if constexpr (NR == 0) {
        out[0] = __ldg(row + col[0]);
    } else if (!complete) {
#pragma unroll
        for (int x = 0; x < Pow3<NR>::v; x++) out[x] = __ldg(row + col[x]);
    } else if constexpr (NR == 1) {
        int2 v = __ldg((const int2 *)(row + col[0]));
        out[0] = v.x, out[1] = v.y, out[2] = __ldg(row + col[2]);
    } else {
        int4 m = __ldg((const int4 *)(row + col[0]));
        int2 y = __ldg((const int2 *)(row + col[2])), x = __ldg((const int2 *)(row + col[6]));
        out[0] = m.x, out[1] = m.y, out[3] = m.z, out[4] = m.w;
        out[2] = y.x, out[5] = y.y, out[6] = x.x, out[7] = x.y, out[8] = __ldg(row + col[8]);
    }
}

template <int K, int NL, int G, bool PASS>
__global__ void __launch_bounds__(EPI_THREADS, 1) epilogue(EpiArgs e) {
    using Gr = Groups<K, G>;
    constexpr int NR = K - NL, NJ = Pow3<K - 1>::v;
    constexpr bool P0L = Gr::L0 == 0; // the first SNP is in the left group (all but k = 3, G = 1)
    constexpr int PL1 = Gr::L1 < 0 ? 1 : Gr::L1, PR1 = Gr::R1 < 0 ? 1 : Gr::R1; // (−1: unused)
    constexpr int NLP = P0L ? Pow3<NL - 1>::v : Pow3<NL>::v, NRP = P0L ? Pow3<NR>::v : 1;
    const double *t = e.sa.table;
    const Round &rd = e.rd;
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31, d0 = lane % 3, slot = lane / 3;
    const int base = 3 * slot < 30 ? 3 * slot : 0; // the combination's first lane
    const int64_t nrt = rd.R.nt, n = (e.t1 - e.t0) * nrt;
    const int64_t per_l = rd.L.nt ? rd.L.nmain / rd.L.nt : 0;
    const bool narrow = n <= UINT32_MAX;
    const int64_t ngroups = (n + EPI_PER_WARP - 1) / EPI_PER_WARP;
    unsigned long long evaluated = 0;
    // the worker's threshold, fixed while the kernel runs (write_result moves it between rounds)
    const uint64_t thr = PASS ? NO_COMBO : *e.thr;
    const bool screen = !PASS && e.sa.score == TG_EPI_K2 && thr < NO_COMBO;
    const double thr_key = bits_key(thr);
    for (int64_t grp = (int64_t)blockIdx.x * EPI_WARPS + threadIdx.x / 32; grp < ngroups;
         grp += (int64_t)gridDim.x * EPI_WARPS) {
        const int64_t i = grp * EPI_PER_WARP + slot;
        bool valid = false;
        int s[4] = {0, 0, 0, 0};
        int n0[NJ], n1[NJ];
        if (slot < EPI_PER_WARP && i < n) {
            // (a 32-bit division where it fits: the 64-bit one is a call of ~70 instructions)
            const int64_t q = narrow ? (int64_t)((uint32_t)i / (uint32_t)nrt) : i / nrt;
            const int64_t lt = e.t0 + q, rt = i - q * nrt;
            int l1, l2, r1, r2;
            tuple_snps(rd.L, lt, l1, l2);
            tuple_snps(rd.R, rt, r1, r2);
            s[Gr::L0] = l1;
            if (NL == 2) s[PL1] = l2;
            s[Gr::R0] = r1;
            if (NR == 2) s[PR1] = r2;
            valid = true;
#pragma unroll
            for (int p = 0; p + 1 < K; p++)
                valid = valid && rd.first[p] + s[p] < rd.first[p + 1] + s[p + 1];
            valid = valid && rd.first[0] + s[0] < rd.first_end;
            if (valid) {
                // the lane's left rows (per class) and right columns, by the digits d0 leaves free
                const int32_t *lp0[NLP], *lp1[NLP];
                int64_t rp[NRP];
#pragma unroll
                for (int x = 0; x < NLP; x++) {
                    int x1 = P0L ? d0 : (NL == 1 ? x : x / 3), x2 = P0L ? x : (NL == 1 ? 0 : x % 3);
                    int64_t lr = entry_row(rd, rd.L, lt, l1, l2, x1, x2);
                    if (lr < rd.L.nmain) {
                        lp0[x] = e.cm[0] + (lr - e.t0 * per_l) * e.ldc;
                        lp1[x] = e.cm[1] + (lr - e.t0 * per_l) * e.ldc;
                    } else {
                        lp0[x] = e.ce[0] + (lr - rd.L.nmain) * e.ldc;
                        lp1[x] = e.ce[1] + (lr - rd.L.nmain) * e.ldc;
                    }
                }
#pragma unroll
                for (int x = 0; x < NRP; x++) {
                    int y1 = P0L ? (NR == 1 ? x : x / 3) : d0, y2 = P0L && NR == 2 ? x % 3 : 0;
                    rp[x] = entry_row(rd, rd.R, rt, r1, r2, y1, y2);
                }
                int e0[NLP][NRP], e1[NLP][NRP];
#pragma unroll
                for (int x = 0; x < NLP; x++) {
                    load_entries<P0L ? NR : 0>(lp0[x], rp, rd.complete, e0[x]);
                    load_entries<P0L ? NR : 0>(lp1[x], rp, rd.complete, e1[x]);
                }
#pragma unroll
                for (int j = 0; j < NJ; j++) { // which of the lane's rows / columns cell j reads
                    const int li = P0L ? (NL == 2 ? digit<K>(j, PL1) : 0)
                                       : digit<K>(j, Gr::L0) * 3 + digit<K>(j, PL1);
                    const int ri = !P0L   ? 0
                                 : NR == 2 ? digit<K>(j, Gr::R0) * 3 + digit<K>(j, PR1)
                                           : digit<K>(j, Gr::R0);
                    n0[j] = e0[li][ri];
                    n1[j] = e1[li][ri];
                }
                // [N0, N1, N2] = [E0, E1, EV − E0 − E1] along SNPs 2..k (any order of SNPs)
#pragma unroll
                for (int p = 1; p < K; p++)
#pragma unroll
                    for (int j = 0; j < NJ; j++)
                        if (digit<K>(j, p) == 2) {
                            const int st = stride<K>(p);
                            n0[j] -= n0[j - st] + n0[j - 2 * st];
                            n1[j] -= n1[j - st] + n1[j - 2 * st];
                        }
            }
        }
        // (with the left tuples ordered by their last SNP, a left tuple's slots before its
        // first valid right tuple are consecutive, so whole warps of them end here)
        if (!__any_sync(FULL, valid)) continue;
        if (!valid)
#pragma unroll
            for (int j = 0; j < NJ; j++) n0[j] = n1[j] = 0;
        // ... and along SNP 1: the lane of d0 = 2 takes E0 and E1 from the two lanes below it
        int c0 = 0, c1 = 0, nz = 0; // the lane's share of R0, R1 (< 2^31: a class's samples)
                                    // and (pass mode) of the non-empty cells
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            int a0 = __shfl_up_sync(FULL, n0[j], 1), b0 = __shfl_up_sync(FULL, n0[j], 2);
            int a1 = __shfl_up_sync(FULL, n1[j], 1), b1 = __shfl_up_sync(FULL, n1[j], 2);
            if (d0 == 2) {
                n0[j] -= a0 + b0;
                n1[j] -= a1 + b1;
            }
            c0 += n0[j];
            c1 += n1[j];
            if constexpr (PASS) nz += n0[j] + n1[j] > 0;
        }
        const int64_t R0 = __shfl_sync(FULL, c0, base) + __shfl_sync(FULL, c0, base + 1) +
                           __shfl_sync(FULL, c0, base + 2),
                      R1 = __shfl_sync(FULL, c1, base) + __shfl_sync(FULL, c1, base + 1) +
                           __shfl_sync(FULL, c1, base + 2),
                      R = R0 + R1;
        const bool lead = valid && d0 == 0; // the lane that reports the combination
        // K2: c of the key, and the screen (codelets/epistasis_k2screen.cuh): a combination whose
        // lower bound is above the threshold cannot be kept, so its exact score is not needed
        double c = 0, tr = 0; // tr = t[R + 1], the largest table entry of the combination
        if (e.sa.score == TG_EPI_K2 && lead) {
            tr = __ldg(t + R + 1);
            c = __dsub_rn(__dsub_rn(tr, __ldg(t + R0)), __ldg(t + R1));
        }
        bool skip = false;
        if (screen) {
            K2Screen sc;
            if (valid)
#pragma unroll
                for (int j = 0; j < NJ; j++) k2_screen_cell(n0[j], n1[j], sc);
            const double d = (double)sc.d + __shfl_sync(FULL, sc.d, base + 1) +
                             __shfl_sync(FULL, sc.d, base + 2),
                         r = (double)sc.r + __shfl_sync(FULL, sc.r, base + 1) +
                             __shfl_sync(FULL, sc.r, base + 2);
            if (lead && R > 0 && R <= K2_SCREEN_MAX_R)
                skip = k2_screen_key(d, r, R, 3 * NJ, NJ, c, tr) > thr_key;
            skip = __shfl_sync(FULL, skip, base);
        }
        // one loop per score, the branch outside: inside, it would keep the compiler from
        // issuing the table loads of many cells together
        double a = 0;
        if (valid && !skip) {
            if (e.sa.score == TG_EPI_K2) {
#pragma unroll
                for (int j = 0; j < NJ; j++)
                    a = __dadd_rn(a, __dsub_rn(__dsub_rn(__ldg(t + (int64_t)n0[j] + n1[j] + 1),
                                                         __ldg(t + n0[j])),
                                               __ldg(t + n1[j])));
            } else if (e.sa.score == TG_EPI_MI) {
#pragma unroll
                for (int j = 0; j < NJ; j++) {
                    a = __dadd_rn(a, __ldg(t + n0[j]));
                    a = __dadd_rn(a, __ldg(t + n1[j]));
                    a = __dsub_rn(a, __ldg(t + (int64_t)n0[j] + n1[j]));
                }
            } else {
#pragma unroll
                for (int j = 0; j < NJ; j++) {
                    const int64_t r0 = n0[j], r1 = n1[j], rg = r0 + r1;
                    if (rg == 0) continue;
                    if (R0 > 0) a = __dadd_rn(a, __ddiv_rn((double)(r0 * r0), (double)(rg * R0)));
                    if (R1 > 0) a = __dadd_rn(a, __ddiv_rn((double)(r1 * r1), (double)(rg * R1)));
                }
            }
        }
        const double a1 = __shfl_sync(FULL, a, base + 1), a2 = __shfl_sync(FULL, a, base + 2);
        int cells = 0;
        if constexpr (PASS)
            cells = __shfl_sync(FULL, nz, base) + __shfl_sync(FULL, nz, base + 1) +
                    __shfl_sync(FULL, nz, base + 2);
        bool keep = false;
        uint64_t kb = NO_COMBO, rank = 0;
        if (lead && !skip) {
            a = __dadd_rn(__dadd_rn(a, a1), a2);
            double key;
            if (e.sa.score == TG_EPI_K2)
                key = __dsub_rn(a, c);
            else if (e.sa.score == TG_EPI_MI)
                key = -__ddiv_rn(__dadd_rn(__dsub_rn(__dsub_rn(a, __ldg(t + R0)), __ldg(t + R1)),
                                           __ldg(t + R)),
                                 (double)R);
            else
                key = -__dmul_rn(__dsub_rn(a, 1.0), (double)R);
            kb = key_bits(R == 0 ? INFINITY : key);
#pragma unroll
            for (int p = 0; p < K; p++) rank = rank << RANK_BITS | (uint64_t)s[p];
            if constexpr (PASS) { // tg_epi_passes, then the page cursor
                const int classes = (R0 > 0) + (R1 > 0),
                          df = cells && classes ? (cells - 1) * (classes - 1) : 0;
                keep = df ? (e.sa.score == TG_EPI_CHI2 ? -key : __dmul_rn(-key, 2.0 * (double)R)) >=
                                e.pass_stat[df]
                          : e.pass_stat[0] < 0;
                keep = keep && (!e.has_after || kb > e.after_kb ||
                                (kb == e.after_kb && rank > e.after_rank));
            } else {
                keep = kb <= thr;
            }
        }
        evaluated += lead;
        // the warp's candidates take consecutive places, one atomic per warp
        unsigned want = __ballot_sync(FULL, keep);
        unsigned long long at = 0;
        if (lane == 0 && want) at = atomicAdd(e.kept, (unsigned long long)__popc(want));
        at = __shfl_sync(FULL, at, 0) + __popc(want & ((1u << lane) - 1));
        if (keep) {
            e.keys[at] = kb;
            e.ranks[at] = rank;
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) evaluated += __shfl_xor_sync(FULL, evaluated, o);
    if (lane == 0 && evaluated) atomicAdd(e.evaluated, evaluated);
}

// ---------------------------------------------------------------------------------------------
// Selection: each CTA sorts SEL (key, rank) pairs in shared memory and keeps the first `keep`;
// repeated until one CTA holds everything. Ranks are the local SNP indices in position order,
// so ties break by SNP order, as on the CPU.
constexpr int SEL = 2048, SEL_THREADS = 1024;

// n: the entries, or (first pass) at most that many with *count the real number.
__global__ void select_chunk(const uint64_t *kin, const uint64_t *rin, int64_t n,
                             const unsigned long long *count, int keep, uint64_t *kout,
                             uint64_t *rout) {
    __shared__ uint64_t k[SEL], s[SEL];
    int64_t base = (int64_t)blockIdx.x * SEL;
    if (count) n = (int64_t)*count;
    if (base >= n && base > 0) { // nothing here: an empty chunk's best
        for (int i = threadIdx.x; i < keep; i += SEL_THREADS) {
            kout[(int64_t)blockIdx.x * keep + i] = NO_COMBO;
            rout[(int64_t)blockIdx.x * keep + i] = ~0ull;
        }
        return;
    }
    for (int i = threadIdx.x; i < SEL; i += SEL_THREADS) {
        int64_t j = base + i;
        k[i] = j < n ? kin[j] : NO_COMBO;
        s[i] = j < n ? rin[j] : ~0ull;
    }
    __syncthreads();
    for (int size = 2; size <= SEL; size <<= 1)
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int i = threadIdx.x; i < SEL / 2; i += SEL_THREADS) {
                int lo = 2 * i - (i & (stride - 1)), hi = lo + stride;
                bool up = (lo & size) == 0;
                bool gt = k[lo] > k[hi] || (k[lo] == k[hi] && s[lo] > s[hi]);
                if (gt == up) {
                    uint64_t tk = k[lo];
                    k[lo] = k[hi];
                    k[hi] = tk;
                    uint64_t ts = s[lo];
                    s[lo] = s[hi];
                    s[hi] = ts;
                }
            }
            __syncthreads();
        }
    for (int i = threadIdx.x; i < keep; i += SEL_THREADS) {
        kout[(int64_t)blockIdx.x * keep + i] = k[i];
        rout[(int64_t)blockIdx.x * keep + i] = s[i];
    }
}

// Also lowers the worker's threshold to the round's topk-th key when it has topk hits (not in
// pass mode, whose rounds keep what passes, not the search's best; `kept` counts it).
__global__ void write_result(Round rd, int order, int topk, const uint64_t *k, const uint64_t *s,
                             const unsigned long long *evaluated, const unsigned long long *kept,
                             int pass, tg_epi_result *res, unsigned long long *thr) {
    unsigned long long ev = *evaluated;
    __shared__ int nhit;
    if (threadIdx.x == 0) { // the keys are sorted, the empty places (NO_COMBO) last
        nhit = 0;
        while (nhit < topk && k[nhit] != NO_COMBO) nhit++;
        if (nhit == topk && !pass) atomicMin(thr, (unsigned long long)k[topk - 1]);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < topk; i += blockDim.x) {
        tg_epi_hit h;
        for (int q = 0; q < TG_EPI_MAX_ORDER; q++) h.snp[q] = -1;
        h.key = INFINITY;
        if (i < nhit) {
            h.key = bits_key(k[i]);
            for (int p = 0; p < order; p++)
                h.snp[p] = (int32_t)(rd.first[p] +
                                     (int64_t)((s[i] >> (RANK_BITS * (order - 1 - p))) &
                                               ((1u << RANK_BITS) - 1)));
        }
        res->hit[i] = h;
    }
    if (threadIdx.x == 0) {
        res->evaluated = ev;
        res->passing = pass ? *kept : 0;
        res->nhit = nhit;
        res->pad = 0;
    }
}

// ---------------------------------------------------------------------------------------------
// Per-worker scratch memory, grown to the largest round seen. Indexed by worker within the
// driving thread: one thread may drive several workers (STARPU_NWORKER_PER_CUDA), whose rounds
// then run at once on their own streams; the thread's end frees its workers' memory.
struct Scratch {
    void *p = nullptr;
    size_t size = 0;
    ~Scratch() { // the worker thread ends with StarPU: give its memory back
        if (p) cudaFree(p);
    }
    void *get(size_t want) {
        if (want > size) {
            if (p) TG_CUDA_CHECK(cudaFree(p));
            TG_CUDA_CHECK(cudaMalloc(&p, want));
            size = want;
        }
        return p;
    }
};
thread_local Scratch scratch[STARPU_NMAXWORKERS];

// The worker's threshold (key bits; NO_COMBO: none yet) and the search it belongs to, per
// worker like the scratch memory.
struct Threshold {
    unsigned long long *dev = nullptr;
    int64_t search = -1;
    ~Threshold() {
        if (dev) cudaFree(dev);
    }
    unsigned long long *get(int64_t s, cudaStream_t st) {
        if (!dev) TG_CUDA_CHECK(cudaMalloc(&dev, sizeof *dev));
        if (s != search) TG_CUDA_CHECK(cudaMemsetAsync(dev, 0xff, sizeof *dev, st));
        search = s;
        return dev;
    }
};
thread_local Threshold threshold[STARPU_NMAXWORKERS];

// Carves aligned pieces out of the scratch block.
struct Carver {
    size_t off = 0;
    char *base = nullptr;
    template <class T> T *take(size_t count) {
        off = (off + 255) & ~(size_t)255;
        T *r = (T *)(base + off);
        off += count * sizeof(T);
        return r;
    }
};

// Tuples (a, b) of a 2-SNP group, a < b when the blocks are the same block (`same`): in
// lexicographic order, or ordered by b first when `by_second`.
static std::vector<uint32_t> make_tuples(int n1, int n2, bool same, bool by_second) {
    std::vector<uint32_t> t;
    if (by_second) {
        for (int b = 0; b < n2; b++)
            for (int a = 0; a < (same && b < n1 ? b : n1); a++)
                t.push_back((uint32_t)a << 16 | (uint32_t)b);
    } else {
        for (int a = 0; a < n1; a++)
            for (int b = same ? a + 1 : 0; b < n2; b++)
                t.push_back((uint32_t)a << 16 | (uint32_t)b);
    }
    return t;
}

// One CTA per SM: the kernel strides over the combinations.
// Pass mode is a template argument: the top-k kernels stay as they were (registers, speed).
template <int K, int NL, int G, bool PASS>
void launch_epilogue(const EpiArgs &e, cudaStream_t st) {
    const int64_t n = (e.t1 - e.t0) * e.rd.R.nt;
    if (n == 0) return;
    const int64_t ctas = ((n + EPI_PER_WARP - 1) / EPI_PER_WARP + EPI_WARPS - 1) / EPI_WARPS,
                  sms = tg_cuda_sm_count();
    epilogue<K, NL, G, PASS><<<(unsigned)(ctas < sms ? ctas : sms), EPI_THREADS, 0, st>>>(e);
    TG_CUDA_CHECK(cudaGetLastError());
}

template <bool PASS>
void epilogue_dispatch(int order, int grouping, const EpiArgs &e, cudaStream_t st) {
    switch (order * 2 + grouping) {
    case 4: launch_epilogue<2, 1, 0, PASS>(e, st); break;
    case 6: launch_epilogue<3, 2, 0, PASS>(e, st); break;
    case 7: launch_epilogue<3, 2, 1, PASS>(e, st); break;
    case 8: launch_epilogue<4, 2, 0, PASS>(e, st); break;
    default: launch_epilogue<4, 2, 1, PASS>(e, st); break;
    }
}

// TG_EPI_PROFILE=1: time each phase of every round (synchronising, so only for measurements)
// and print the totals per GPU worker when it stops.
struct Profile {
    bool on = getenv("TG_EPI_PROFILE") != nullptr;
    double ms[4] = {0, 0, 0, 0}; // rows, gemm, epilogue, selection
    long rounds = 0;
    cudaEvent_t ev[2];
    bool made = false;
    void mark(cudaStream_t st, int phase, bool start) {
        if (!on) return;
        if (!made) {
            TG_CUDA_CHECK(cudaEventCreate(&ev[0]));
            TG_CUDA_CHECK(cudaEventCreate(&ev[1]));
            made = true;
        }
        TG_CUDA_CHECK(cudaEventRecord(ev[start ? 0 : 1], st));
        if (start) return;
        TG_CUDA_CHECK(cudaEventSynchronize(ev[1]));
        float t;
        TG_CUDA_CHECK(cudaEventElapsedTime(&t, ev[0], ev[1]));
        ms[phase] += t;
    }
    ~Profile() {
        if (on && rounds)
            fprintf(stderr,
                    "epistasis GPU profile: %ld rounds; rows %.1f ms, GEMM %.1f ms, epilogue %.1f "
                    "ms, selection %.1f ms\n",
                    rounds, ms[0], ms[1], ms[2], ms[3]);
    }
};
thread_local Profile profile;

} // namespace

extern "C" void tg_epi_round_cuda(void *buffers[], void *cl_arg) {
    const tg_epi_round_arg *a = (const tg_epi_round_arg *)cl_arg;
    const int k = a->order;
    cudaStream_t st = starpu_cuda_get_local_stream();
    const double *table = (const double *)STARPU_VECTOR_GET_PTR(buffers[k]);
    tg_epi_result *res = (tg_epi_result *)STARPU_VECTOR_GET_PTR(buffers[k + 1]);

    Round rd{};
    rd.complete = tg_epi_round_complete(a);
    rd.words[0] = a->words[0];
    rd.words[1] = a->words[1];
    rd.coff1 = (int64_t)a->block * 3 * a->words[0];
    for (int p = 0; p < k; p++) rd.first[p] = a->first[p];
    rd.first_end = a->first_end;
    // grouping 1 when the middle positions share a block and their neighbours do not (Groups)
    // (measured at 1,024 SNPs: the GEMM of the first 600 rounds 10.7 s instead of 11.4 s)
    const int grouping = (k == 4 && a->first[1] == a->first[2] && a->first[0] != a->first[1] &&
                          a->first[2] != a->first[3]) ||
                         (k == 3 && a->first[1] == a->first[2] && a->first[0] != a->first[1]);
    static const int group_pos[5][2][2][2] = {
        {}, {}, {{{0, -1}, {1, -1}}, {{0, -1}, {1, -1}}},
        {{{0, 1}, {2, -1}}, {{1, 2}, {0, -1}}}, {{{0, 1}, {2, 3}}, {{0, 3}, {1, 2}}}};
    // Where the left group's last position and the right group's first share a block, only
    // left tuples whose last SNP comes before the right tuple's first make combinations: the
    // left tuples are then ordered by their last SNP, and the GEMM leaves out the tiles of
    // pairs in the wrong order (TileKeys; at order 4, 256 SNPs in blocks of 64, 31% of it).
    const int *lpos = group_pos[k][grouping][0], *rpos = group_pos[k][grouping][1];
    const int llast = lpos[1] < 0 ? lpos[0] : lpos[1];
    const bool cross = llast + 1 == rpos[0] && a->first[llast] == a->first[rpos[0]];
    std::vector<uint32_t> tup[2];
    std::vector<int32_t> key[2]; // (cross) the left tuples' last SNPs, the right ones' first
    Side *sides[2] = {&rd.L, &rd.R};
    for (int s = 0; s < 2; s++) {
        Side &sd = *sides[s];
        const int *pos = group_pos[k][grouping][s];
        sd.nl = pos[1] < 0 ? 1 : 2;
        for (int q = 0; q < sd.nl; q++) {
            sd.blk[q] = (const uint64_t *)STARPU_VECTOR_GET_PTR(buffers[pos[q]]);
            sd.nsnp[q] = a->nsnp[pos[q]];
        }
        if (sd.nl == 2) {
            tup[s] = make_tuples(sd.nsnp[0], sd.nsnp[1], a->first[pos[0]] == a->first[pos[1]],
                                 cross && s == 0);
            sd.nt = (int64_t)tup[s].size();
        } else {
            sd.nt = sd.nsnp[0];
        }
        if (cross) {
            key[s].resize((size_t)sd.nt);
            for (int64_t t = 0; t < sd.nt; t++)
                key[s][t] = sd.nl == 1 ? (int32_t)t
                                       : (int32_t)(s ? tup[s][t] >> 16 : tup[s][t] & 0xffff);
        }
        int per = rd.complete ? (sd.nl == 1 ? 2 : 4) : (sd.nl == 1 ? 3 : 9);
        sd.nmain = sd.nt * per;
        sd.nrows = sd.nmain;
        if (rd.complete) {
            if (sd.nl == 2) sd.nrows += 2 * ((int64_t)sd.nsnp[0] + sd.nsnp[1]);
            // The left all-ones row gives the right rows' totals. A right one would cost a GEMM
            // tile column for one column (order 3: 513 columns in three tiles of 256): the left
            // rows' totals are counted as they are built, into that column (build_rows).
            if (s == 0) sd.nrows += 1;
        }
    }

    // Scratch sizing: right rows whole, left rows and C by slabs of left tuples within a budget.
    const int64_t wsum = a->words[0] + a->words[1];
    // (column R.nrows: the all-ones column of complete data, entry_row's last)
    const int64_t ldc = (rd.R.nrows + rd.complete + 3) & ~(int64_t)3;
    const int64_t per_l = rd.L.nmain / (rd.L.nt ? rd.L.nt : 1),
                  per_r = rd.R.nmain / (rd.R.nt ? rd.R.nt : 1);
    const int64_t next = rd.L.nrows - rd.L.nmain;
    const int64_t nslot = rd.L.nt * rd.R.nt;
    // Larger slabs mean fewer, fuller GEMM and epilogue launches (H100, 300 rounds: order 4 at
    // 1,024 SNPs 115.9 → 116.6 and order 3 at 2,048 148 → 156 tera comb.·samples/s from 1 to
    // 4 GB; 128 MB and below lose 17–65%): a sixteenth of the GPU's memory, within 256 MB–4 GB,
    // cut into equal slabs so that the last is not a sliver.
    thread_local size_t budget = 0;
    if (!budget) {
        size_t free_b, total_b;
        TG_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        budget = total_b / 16 < ((size_t)256 << 20) ? (size_t)256 << 20
               : total_b / 16 > ((size_t)4 << 30)   ? (size_t)4 << 30
                                                     : total_b / 16;
    }
    int64_t slab = per_l ? (int64_t)(budget / ((size_t)per_l * (ldc * 8 + wsum * 8))) : 1;
    if (slab < 1) slab = 1;
    if (slab > rd.L.nt) slab = rd.L.nt;
    if (rd.L.nt) slab = (rd.L.nt + (rd.L.nt + slab - 1) / slab - 1) / ((rd.L.nt + slab - 1) / slab);
    // each selection pass keeps topk of every SEL pairs, so it shrinks only while topk < SEL / 2
    STARPU_ASSERT_MSG(a->topk >= 1 && a->topk <= SEL / 2, "epistasis: top-k %d outside 1..%d",
                      a->topk, SEL / 2);
    STARPU_ASSERT_MSG(a->block <= (1 << RANK_BITS), "epistasis: block %d above %d", a->block,
                      1 << RANK_BITS);
    const int64_t ncand = ((nslot + SEL - 1) / SEL + 1) * a->topk;

    Carver cv;
    size_t need = 0;
    for (int pass = 0; pass < 2; pass++) {
        cv = Carver();
        cv.base = pass ? (char *)scratch[starpu_worker_get_id_check()].get(need) : nullptr;
        uint32_t *dtup[2] = {cv.take<uint32_t>(tup[0].size()), cv.take<uint32_t>(tup[1].size())};
        int32_t *dkey[2] = {cv.take<int32_t>(key[0].size()), cv.take<int32_t>(key[1].size())};
        uint64_t *rrows = cv.take<uint64_t>((size_t)rd.R.nrows * wsum);
        uint64_t *lrows = cv.take<uint64_t>((size_t)(slab * per_l > next ? slab * per_l : next) * wsum);
        int32_t *cm = cv.take<int32_t>((size_t)2 * slab * per_l * ldc);
        int32_t *ce = cv.take<int32_t>((size_t)2 * next * ldc);
        uint64_t *keys = cv.take<uint64_t>((size_t)nslot), *ranks = cv.take<uint64_t>((size_t)nslot);
        uint64_t *kc[2] = {cv.take<uint64_t>((size_t)ncand), cv.take<uint64_t>((size_t)ncand)};
        uint64_t *sc[2] = {cv.take<uint64_t>((size_t)ncand), cv.take<uint64_t>((size_t)ncand)};
        unsigned long long *evaluated = cv.take<unsigned long long>(2), *kept = evaluated + 1;
        if (!pass) {
            need = cv.off + 256;
            continue;
        }
        for (int s = 0; s < 2; s++)
            if (!tup[s].empty()) {
                TG_CUDA_CHECK(cudaMemcpyAsync(dtup[s], tup[s].data(), tup[s].size() * 4,
                                              cudaMemcpyHostToDevice, st));
                sides[s]->tuples = dtup[s];
            }
        for (int s = 0; s < 2; s++)
            if (!key[s].empty())
                TG_CUDA_CHECK(cudaMemcpyAsync(dkey[s], key[s].data(), key[s].size() * 4,
                                              cudaMemcpyHostToDevice, st));
        TG_CUDA_CHECK(cudaMemsetAsync(evaluated, 0, 2 * sizeof *evaluated, st));
        unsigned long long *thr = threshold[starpu_worker_get_id_check()].get(a->search, st);

        // c: the C rows of left rows (their totals' column); nullptr for the right side
        auto rows = [&](int left, int64_t r0, int64_t n, uint64_t *out, int32_t *c) {
            if (n == 0) return;
            profile.mark(st, 0, true);
            build_rows<<<(unsigned)(2 * n < 8192 ? 2 * n : 8192), ROW_THREADS, 0, st>>>(
                rd, left, r0, n, out, out + n * a->words[0],
                rd.complete && c ? c + rd.R.nrows : nullptr, ldc);
            TG_CUDA_CHECK(cudaGetLastError());
            profile.mark(st, 0, false);
        };
        // t0: the first left tuple of a slab's per-tuple rows (its tiles may be left out), or
        // −1 (the left single / all-ones rows: all needed)
        auto gemm = [&](const uint64_t *l, int64_t m, int32_t *c, int64_t t0) {
            GemmArgs g{};
            if (cross && t0 >= 0)
                g.keys = {dkey[0] + t0, dkey[1], per_l, per_r, rd.R.nmain};
            for (int cl = 0; cl < 2; cl++) {
                g.a[cl] = l + (cl ? m * a->words[0] : 0);
                g.b[cl] = rrows + (cl ? rd.R.nrows * a->words[0] : 0);
                g.c[cl] = c + (size_t)cl * m * ldc;
                g.lda[cl] = g.ldb[cl] = g.kwords[cl] = a->words[cl];
            }
            g.m = m;
            g.n = rd.R.nrows;
            g.ldc = ldc;
            profile.mark(st, 1, true);
            launch_gemm(g, st);
            profile.mark(st, 1, false);
        };

        rows(0, 0, rd.R.nrows, rrows, nullptr);
        // the left single / all-ones rows first: every slab's combinations need them
        rows(1, rd.L.nmain, next, lrows, ce);
        gemm(lrows, next, ce, -1);
        EpiArgs e{};
        e.rd = rd;
        e.sa.table = table;
        e.sa.score = a->score;
        e.ce[0] = ce;
        e.ce[1] = ce + (size_t)next * ldc;
        e.ldc = ldc;
        e.keys = keys;
        e.ranks = ranks;
        e.evaluated = evaluated;
        e.kept = kept;
        e.thr = thr;
        // pass mode: the cursor as key bits and a rank of local indices
        e.has_after = a->pass && a->has_after;
        if (e.has_after) {
            e.after_kb = key_bits(a->after_key);
            for (int p = 0; p < k; p++)
                e.after_rank = e.after_rank << RANK_BITS | (uint64_t)(a->after_snp[p] - a->first[p]);
        }
        memcpy(e.pass_stat, a->pass_stat, sizeof e.pass_stat);
        for (int64_t t0 = 0; t0 < rd.L.nt; t0 += slab) {
            int64_t t1 = t0 + slab < rd.L.nt ? t0 + slab : rd.L.nt, m = (t1 - t0) * per_l;
            rows(1, t0 * per_l, m, lrows, cm);
            gemm(lrows, m, cm, t0);
            e.cm[0] = cm;
            e.cm[1] = cm + (size_t)m * ldc;
            e.t0 = t0;
            e.t1 = t1;
            profile.mark(st, 2, true);
            if (a->pass)
                epilogue_dispatch<true>(k, grouping, e, st);
            else
                epilogue_dispatch<false>(k, grouping, e, st);
            profile.mark(st, 2, false);
        }

        // selection: chunks of SEL sorted, the best topk of each kept, until one chunk is left
        profile.mark(st, 3, true);
        const uint64_t *kin = keys, *sin = ranks;
        int64_t n = nslot;
        int pp = 0;
        do {
            int64_t nb = (n + SEL - 1) / SEL;
            if (nb == 0) nb = 1;
            select_chunk<<<(unsigned)nb, SEL_THREADS, 0, st>>>(kin, sin, n, kin == keys ? kept : nullptr,
                                                                 a->topk, kc[pp], sc[pp]);
            TG_CUDA_CHECK(cudaGetLastError());
            kin = kc[pp];
            sin = sc[pp];
            n = nb * a->topk;
            pp ^= 1;
            if (nb == 1) break;
        } while (true);
        write_result<<<1, 256, 0, st>>>(rd, k, a->topk, kin, sin, evaluated, kept, a->pass, res,
                                        thr);
        TG_CUDA_CHECK(cudaGetLastError());
        profile.mark(st, 3, false);
        profile.rounds += profile.on;
    }
}
