// The binary AND+POPC GEMM of the epistasis rounds: the mma.sync tile shapes, the wgmma+TMA
// kernel for Hopper and the table of shapes in order of preference. Included by
// codelets/epistasis_cuda.cu (the round codelet, in the library) and codelets/epistasis_hooks.cu
// (bench and test hooks, built into those programs only). Everything is in an unnamed namespace:
// each includer compiles its own copy of the same source with the same flags, so the hooks time
// and check the kernels the codelet runs while the library exports none of them.
#ifndef TG_CODELETS_EPISTASIS_CUDA_CUH
#define TG_CODELETS_EPISTASIS_CUDA_CUH
#include <stdint.h>

#include <atomic>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "codelets/sm90a.cuh"
#include "runtime/cuda.h"

namespace {

// ---------------------------------------------------------------------------------------------
// Binary GEMM: C[c][i][j] = popc(A[c][i] & B[c][j]) over kwords[c] 64-bit words, class c =
// blockIdx.z. A CTA computes a BM × BN tile with WM × WN warps; k is staged ROWB bytes per row
// at a time through a STAGES-deep cp.async pipeline; shared rows have their 16-byte chunks
// XOR-swizzled by row so that ldmatrix reads eight rows without bank conflicts. The shape is a
// template so bench/epistasis can compare several on the device; launch_gemm picks one.
// Tiles left out: with keys, A's rows are tuples of lper rows whose keys (l) ascend and B's
// first rmain rows tuples of rper rows whose keys (r) ascend; a tile whose every row key is at
// least every column key holds only entries no combination reads (the round's left SNPs come
// before its right ones), so it is neither computed nor stored. l = NULL: every tile computed.
struct TileKeys {
    const int32_t *l, *r;
    int64_t lper, rper, rmain;
};

struct GemmArgs {
    const uint64_t *a[2], *b[2];
    int32_t *c[2];
    int64_t lda[2], ldb[2]; // row strides in words
    int64_t kwords[2];      // words per row (a positive multiple of 4)
    int64_t m, n, ldc;
    TileKeys keys;
};

// Whether the tile of rows row0.. and columns col0 .. col0 + bn − 1 is left out (TileKeys):
// the keys ascend, so the first row's key is the tile's least and the last column's its largest.
__device__ __forceinline__ bool tile_left_out(const TileKeys &k, int64_t row0, int64_t col0,
                                              int64_t bn, int64_t n) {
    if (!k.l) return false;
    const int64_t last = (col0 + bn < n ? col0 + bn : n) - 1;
    return last < k.rmain && k.l[row0 / k.lper] >= k.r[last / k.rper];
}

__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned &r0, unsigned &r1,
                                            unsigned &r2, unsigned &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

__device__ __forceinline__ void mma_and_popc(int (&c)[4], const unsigned (&a)[4], unsigned b0,
                                             unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Byte offset of 16-byte chunk ch of row r in rows of 128 bytes: the chunk index XOR r mod 8,
// so that eight consecutive rows hit distinct banks; also the 128-byte swizzle of TMA and wgmma.
__device__ __forceinline__ unsigned swz128(int r, int ch) { return r * 128 + ((ch ^ (r & 7)) << 4); }

// C[r][c], C[r][c + 1] = v0, v1 where inside m × n (c even, so the pair is 8-byte aligned).
__device__ __forceinline__ void store_pair(int32_t *C, int64_t ldc, int64_t m, int64_t n,
                                           int64_t r, int64_t c, int v0, int v1) {
    if (r >= m) return;
    if (c + 1 < n)
        *(int2 *)(C + r * ldc + c) = make_int2(v0, v1);
    else if (c < n)
        C[r * ldc + c] = v0;
}

template <int BM, int BN, int WM, int WN, int ROWB, int STAGES> struct Gemm {
    static constexpr int THREADS = 32 * WM * WN, MT = BM / WM / 16, NT = BN / WN / 8;
    static constexpr int CH = ROWB / 16; // 16-byte chunks per shared row
    static constexpr int STAGE_BYTES = (BM + BN) * ROWB, SMEM = STAGES * STAGE_BYTES;
    static_assert(NT % 2 == 0 && (BM + BN) * CH % THREADS == 0 && THREADS % CH == 0, "shape");
    // byte offset of chunk ch of shared row r: eight consecutive rows hit distinct banks
    static __device__ __forceinline__ unsigned swz(int r, int ch) {
        return CH == 8 ? swz128(r, ch) : r * ROWB + ((ch ^ ((r >> 1) & 3)) << 4);
    }
};

template <int BM, int BN, int WM, int WN, int ROWB, int STAGES>
__global__ void __launch_bounds__(32 * WM * WN, 1) popc_gemm(GemmArgs g) {
    using G = Gemm<BM, BN, WM, WN, ROWB, STAGES>;
    extern __shared__ __align__(128) unsigned char smem[];
    const int cls = blockIdx.z;
    const int64_t row0 = (int64_t)blockIdx.y * BM, col0 = (int64_t)blockIdx.x * BN;
    if (tile_left_out(g.keys, row0, col0, BN, g.n)) return;
    const int64_t kbytes = g.kwords[cls] * 8;
    const int nstage = (int)((kbytes + ROWB - 1) / ROWB);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WN, wn = warp % WN;
    // each thread copies chunk `ch` of rows rl, rl + THREADS/CH, ...: one base pointer per
    // operand, rows reached by adding a stride
    const int ch = tid % G::CH, rl = tid / G::CH, RSTEP = G::THREADS / G::CH;
    const char *abase = (const char *)(g.a[cls] + (row0 + rl) * g.lda[cls]) + ch * 16;
    const char *bbase = (const char *)(g.b[cls] + (col0 + rl) * g.ldb[cls]) + ch * 16;
    const int64_t astep = RSTEP * g.lda[cls] * 8, bstep = RSTEP * g.ldb[cls] * 8;

    auto load_stage = [&](int s, int kt) {
        unsigned base = smem_u32(smem + (size_t)s * G::STAGE_BYTES);
        int64_t kb = (int64_t)kt * ROWB;
        bool kin = kb + ch * 16 < kbytes;
#pragma unroll
        for (int i = 0; i < BM / RSTEP; i++) {
            bool ok = kin && row0 + rl + i * RSTEP < g.m;
            cp_async16(base + G::swz(rl + i * RSTEP, ch), ok ? abase + i * astep + kb : (const char *)g.a[cls], ok);
        }
#pragma unroll
        for (int i = 0; i < BN / RSTEP; i++) {
            bool ok = kin && col0 + rl + i * RSTEP < g.n;
            cp_async16(base + G::swz(BM + rl + i * RSTEP, ch), ok ? bbase + i * bstep + kb : (const char *)g.a[cls], ok);
        }
    };

    int acc[G::MT][G::NT][4];
#pragma unroll
    for (int i = 0; i < G::MT; i++)
#pragma unroll
        for (int j = 0; j < G::NT; j++)
#pragma unroll
            for (int q = 0; q < 4; q++) acc[i][j][q] = 0;

#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nstage) load_stage(s, s);
        asm volatile("cp.async.commit_group;\n");
    }
    for (int kt = 0; kt < nstage; kt++) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads();
        if (kt + STAGES - 1 < nstage) load_stage((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
        asm volatile("cp.async.commit_group;\n");
        const unsigned char *st = smem + (size_t)(kt % STAGES) * G::STAGE_BYTES;
        unsigned sa = smem_u32(st), sb = sa + BM * ROWB;
#pragma unroll
        for (int kk = 0; kk < ROWB / 32; kk++) { // 256-bit steps
            unsigned af[G::MT][4], bf[G::NT][2];
#pragma unroll
            for (int mi = 0; mi < G::MT; mi++) {
                int r = wm * (BM / WM) + mi * 16 + (lane & 15);
                ldmatrix_x4(sa + G::swz(r, 2 * kk + (lane >> 4)), af[mi][0], af[mi][1],
                            af[mi][2], af[mi][3]);
            }
#pragma unroll
            for (int nj = 0; nj < G::NT; nj += 2) {
                int r = wn * (BN / WN) + (nj + (lane >> 4)) * 8 + (lane & 7);
                ldmatrix_x4(sb + G::swz(r, 2 * kk + ((lane >> 3) & 1)), bf[nj][0], bf[nj][1],
                            bf[nj + 1][0], bf[nj + 1][1]);
            }
#pragma unroll
            for (int mi = 0; mi < G::MT; mi++)
#pragma unroll
                for (int nj = 0; nj < G::NT; nj++)
                    mma_and_popc(acc[mi][nj], af[mi], bf[nj][0], bf[nj][1]);
        }
    }
    asm volatile("cp.async.wait_group 0;\n");

    int32_t *C = g.c[cls];
    const int gr = lane >> 2, tc = (lane & 3) * 2;
#pragma unroll
    for (int mi = 0; mi < G::MT; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int nj = 0; nj < G::NT; nj++)
                store_pair(C, g.ldc, g.m, g.n, row0 + wm * (BM / WM) + mi * 16 + gr + 8 * h,
                           col0 + wn * (BN / WN) + nj * 8 + tc, acc[mi][nj][2 * h],
                           acc[mi][nj][2 * h + 1]);
}

template <int BM, int BN, int WM, int WN, int ROWB, int STAGES>
void launch_gemm_shape(const GemmArgs &g, cudaStream_t st) {
    using G = Gemm<BM, BN, WM, WN, ROWB, STAGES>;
    auto *kern = popc_gemm<BM, BN, WM, WN, ROWB, STAGES>;
    static std::atomic<uint64_t> attr{0};
    smem_attribute(kern, G::SMEM, attr);
    if (g.m == 0 || g.n == 0) return;
    dim3 grid((unsigned)((g.n + BN - 1) / BN), (unsigned)((g.m + BM - 1) / BM), 2);
    kern<<<grid, G::THREADS, G::SMEM, st>>>(g);
    TG_CUDA_CHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------------------------
// Binary GEMM on Hopper (sm_90a): wgmma.m64n256k256 .and.popc, both operands read from shared
// memory, which TMA (cp.async.bulk.tensor) fills in 1,024-bit stages with the 128-byte swizzle
// wgmma expects. A CTA computes 192 × 256 entries: three warpgroups of 64 rows, 128 counts per
// thread; thread 0 also issues the loads, four stages deep, refilling a stage once every
// warpgroup has released it (mbarriers, no __syncthreads). Tiles run in groups of eight M-tiles,
// N fastest within a group, so the CTAs in flight share their A and B tiles in the L2 instead
// of streaming all of B from memory for every row of M-tiles.
// Measured on the H100 (16,641² rows × 131,072 bits × 2 classes; wgmma fed from shared memory
// alone: 15,400 TOPS, the register-only mma.sync stream 8,900): bench/epistasis --gemm, this
// kernel 12,808 TOPS, the mma.sync kernel above 6,352. A stand-alone driver that launched every
// TMA variant as a cluster (of one CTA, unless said) timed this kernel at 10,000–10,100 and:
// without the grouped order 7,700 (B re-read from memory); 128 × 256 tiles 8,250; 2-CTA
// clusters multicasting B 7,000–7,300; persistent CTAs carrying the loads across tiles 9,350
// (a plain launch); cp.async instead of TMA 5,900.
// cuTensorMapEncodeTiled comes from the driver through cudart (no -lcuda).
constexpr int WG_NC = 3, WG_S = 4, WG_BM = 64 * WG_NC, WG_BN = 256;
constexpr int WG_STAGE = (WG_BM + WG_BN) * 128, WG_SMEM = WG_S * WG_STAGE + 1024 + 16 * WG_S;

struct WgArgs {
    CUtensorMap a[2], b[2]; // [kbytes × rows] bytes, boxes of 128 bytes × WG_BM / WG_BN rows
    int32_t *c[2];
    int64_t kbytes[2], m, n, ldc;
    int ntm, ntn; // tiles along M and N
    TileKeys keys;
};

#if TG_SM90A
constexpr int WG_GROUP = 8; // M-tiles per group of the tile order

// Shared-memory matrix descriptor: K-major rows of 128 bytes, 128-byte swizzle, eight-row groups
// 1,024 bytes apart.
__device__ __forceinline__ uint64_t wg_desc(unsigned addr) {
    return (uint64_t)((addr & 0x3ffff) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 |
           (uint64_t)1 << 62;
}

#define TG_ACC4(i) "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3])
#define TG_ACC16(i) TG_ACC4(i), TG_ACC4(i + 4), TG_ACC4(i + 8), TG_ACC4(i + 12)
#define TG_ACC64(i) TG_ACC16(i), TG_ACC16(i + 16), TG_ACC16(i + 32), TG_ACC16(i + 48)
// d (+)= popc(A AND B) for 64 rows × 256 columns × 256 bits; acc = 0 overwrites d.
__device__ __forceinline__ void wg_mma(int (&d)[128], uint64_t da, uint64_t db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k256.s32.b1.b1.and.popc "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "
                 "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "
                 "%123, %124, %125, %126, %127}, %128, %129, p;\n}\n"
                 : TG_ACC64(0), TG_ACC64(64)
                 : "l"(da), "l"(db), "r"(acc)
                 : "memory");
}
#undef TG_ACC64
#undef TG_ACC16
#undef TG_ACC4

// Rows row .. row+box of map, bytes k .. k+128, to dst; completes `bar`'s transaction bytes.
__device__ __forceinline__ void tma_load(unsigned dst, const CUtensorMap *map, int k, int row,
                                         unsigned bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst), "l"((uint64_t)map), "r"(k), "r"(row),
                 "r"(bar)
                 : "memory");
}
#endif

__global__ void __launch_bounds__(128 * WG_NC, 1) wgmma_gemm(const __grid_constant__ WgArgs g) {
#if TG_SM90A
    extern __shared__ unsigned char raw[];
    // the swizzle pattern repeats every 1,024 bytes: stages start on such a boundary
    const unsigned base = (smem_u32(raw) + 1023) & ~1023u;
    const unsigned full = base + WG_S * WG_STAGE, empty = full + 8 * WG_S; // one per stage
    const int cls = blockIdx.z, tid = threadIdx.x, wg = tid / 128;
    const int per = WG_GROUP * g.ntn, f = blockIdx.x / per * WG_GROUP, w = blockIdx.x % per;
    const int gs = g.ntm - f < WG_GROUP ? g.ntm - f : WG_GROUP;
    const int row0 = (f + w % gs) * WG_BM, col0 = w / gs * WG_BN;
    if (tile_left_out(g.keys, row0, col0, WG_BN, g.n)) return;
    const int nstage = (int)((g.kbytes[cls] + 127) / 128);
    if (tid == 0) {
        for (int s = 0; s < WG_S; s++) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, WG_NC);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    // stage kt into buffer kt % WG_S (rows and bytes past the ends arrive as zeros)
    auto load = [&](int kt) {
        const int s = kt % WG_S;
        const unsigned sa = base + s * WG_STAGE, bar = full + 8 * s;
        mbar_expect(bar, WG_STAGE);
        tma_load(sa, &g.a[cls], kt * 128, row0, bar);
        tma_load(sa + WG_BM * 128, &g.b[cls], kt * 128, col0, bar);
    };
    if (tid == 0)
        for (int kt = 0; kt < WG_S && kt < nstage; kt++) load(kt);
    int d[128];
    for (int kt = 0; kt < nstage; kt++) {
        const int s = kt % WG_S;
        mbar_wait(full + 8 * s, (kt / WG_S) & 1);
        const unsigned sa = base + s * WG_STAGE, sb = sa + WG_BM * 128;
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < 4; kk++) // 256-bit steps inside the swizzled 128-byte rows
            wg_mma(d, wg_desc(sa + wg * 64 * 128 + kk * 32), wg_desc(sb + kk * 32), kt | kk);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); // stage kt − 1 is read
        if (kt > 0) {
            const int ps = (kt - 1) % WG_S;
            if ((tid & 127) == 0) mbar_arrive(empty + 8 * ps);
            if (tid == 0 && kt - 1 + WG_S < nstage) {
                mbar_wait(empty + 8 * ps, ((kt - 1) / WG_S) & 1);
                load(kt - 1 + WG_S);
            }
        }
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    // accumulator layout: warp w of the warpgroup holds rows 16w + lane/4 (+8), columns
    // 8j + 2·(lane % 4) (+1) in d[4j .. 4j+3]
    int32_t *C = g.c[cls];
    const int wq = (tid / 32) % 4, l = tid % 32;
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int j = 0; j < 32; j++)
            store_pair(C, g.ldc, g.m, g.n, row0 + wg * 64 + 16 * wq + l / 4 + 8 * h,
                       col0 + 8 * j + 2 * (l % 4), d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
#elif defined(__CUDA_ARCH__)
    __trap(); // launched only where the sm_90a code runs (wgmma_ok)
#endif
}

// rows × kbytes bytes with rows `ld` words apart, read in boxes of 128 bytes × box rows
void tensor_map(CUtensorMap *map, const uint64_t *p, int64_t rows, int64_t ld, int64_t kbytes,
                int box) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void *fn = nullptr;
        cudaDriverEntryPointQueryResult q;
        TG_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                       cudaEnableDefault, &q));
        if (q != cudaDriverEntryPointSuccess || !fn)
            STARPU_ABORT_MSG("epistasis: the CUDA driver has no cuTensorMapEncodeTiled");
        return (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }();
    const cuuint64_t dim[2] = {(cuuint64_t)kbytes, (cuuint64_t)rows}, stride[1] = {(cuuint64_t)ld * 8};
    const cuuint32_t boxd[2] = {128, (cuuint32_t)box}, one[2] = {1, 1};
    CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, (void *)p, dim, stride, boxd, one,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        STARPU_ABORT_MSG("epistasis: cuTensorMapEncodeTiled failed (%d) for %lld rows of %lld bytes",
                         (int)r, (long long)rows, (long long)kbytes);
}

void launch_gemm_wgmma(const GemmArgs &g, cudaStream_t st) {
    static std::atomic<uint64_t> attr{0};
    smem_attribute(wgmma_gemm, WG_SMEM, attr);
    if (g.m == 0 || g.n == 0) return;
    WgArgs w{}; // (a class without words: tensor_map refuses its map)
    for (int c = 0; c < 2; c++) {
        tensor_map(&w.a[c], g.a[c], g.m, g.lda[c], g.kwords[c] * 8, WG_BM);
        tensor_map(&w.b[c], g.b[c], g.n, g.ldb[c], g.kwords[c] * 8, WG_BN);
        w.c[c] = g.c[c];
        w.kbytes[c] = g.kwords[c] * 8;
    }
    w.m = g.m;
    w.n = g.n;
    w.ldc = g.ldc;
    w.ntm = (int)((g.m + WG_BM - 1) / WG_BM);
    w.ntn = (int)((g.n + WG_BN - 1) / WG_BN);
    w.keys = g.keys;
    wgmma_gemm<<<dim3((unsigned)w.ntm * w.ntn, 1, 2), 128 * WG_NC, WG_SMEM, st>>>(w);
    TG_CUDA_CHECK(cudaGetLastError());
}

// The shapes bench/epistasis compares, in the codelet's order of preference: it uses the first
// that runs on its GPU (wgmma where the sm_90a code runs, else mma.sync with four stages, or
// three on GPUs with less shared memory a block, as the A100's 163 KiB, or a smaller tile where
// even that does not fit, as on sm_86 / sm_89 with 99 KiB).
// Measured on the H100 (docs/PERFORMANCE.md; 2026-11-24, two runs): 256x128 k1024 with 4 stages
// 0.71 of the mma.sync ceiling, 3 stages 0.70, 128x256 0.62, 128x128 0.60, 2048-bit stages
// 0.52; 16 warps of 32x64 (256x128, 3 or 4 stages) 0.63. 256x128 with the next 256-bit step's
// fragments loaded during this step's mma (two buffers, 236 registers) 0.70, with the mma in
// serpentine order (consecutive ones sharing B) 0.68-0.69: ptxas already overlaps the loads.
struct GemmShape {
    void (*run)(const GemmArgs &, cudaStream_t);
    const char *name;
    int smem;   // dynamic shared memory a block
    bool wgmma; // needs the sm_90a code
};
template <int BM, int BN, int WM, int WN, int ROWB, int STAGES>
constexpr GemmShape mma_shape(const char *name) {
    return {launch_gemm_shape<BM, BN, WM, WN, ROWB, STAGES>, name,
            Gemm<BM, BN, WM, WN, ROWB, STAGES>::SMEM, false};
}
const GemmShape gemm_shapes[] = {
    {launch_gemm_wgmma, "wgmma+TMA 192x256 k1024 s4", WG_SMEM, true},
    mma_shape<256, 128, 4, 2, 128, 4>("mma.sync 256x128 w4x2 k1024 s4"),
    mma_shape<256, 128, 4, 2, 128, 3>("mma.sync 256x128 w4x2 k1024 s3"),
    mma_shape<128, 256, 2, 4, 128, 3>("mma.sync 128x256 w2x4 k1024 s3"),
    mma_shape<128, 128, 2, 2, 128, 3>("mma.sync 128x128 w2x2 k1024 s3"),
    mma_shape<256, 128, 4, 2, 256, 2>("mma.sync 256x128 w4x2 k2048 s2"),
};
constexpr int NSHAPES = sizeof gemm_shapes / sizeof gemm_shapes[0];

// Whether shape runs on the current device.
bool shape_runs(int shape) {
    if (shape < 0 || shape >= NSHAPES) return false;
    int dev, smem;
    TG_CUDA_CHECK(cudaGetDevice(&dev));
    TG_CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    return smem >= gemm_shapes[shape].smem && (!gemm_shapes[shape].wgmma || wgmma_ok());
}

} // namespace
#endif
