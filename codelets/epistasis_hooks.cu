// Benchmark and test hooks of the epistasis GEMM (bench/epistasis.c, tests/test_epistasis.c;
// codelets/epistasis_hooks.h): the binary tensor-core ceilings, the GEMM alone, the GEMM checked
// entry by entry, the epilogue's K2 screen on given tables. Built into those programs only, not
// into the library; the kernels come from codelets/epistasis_cuda.cuh and
// codelets/epistasis_k2screen.cuh, the sources the round codelet compiles.
#include <stdint.h>

#include <atomic>
#include <vector>

#include "codelets/epistasis_cuda.cuh"
#include "codelets/epistasis_hooks.h"
#include "codelets/epistasis_k2screen.cuh"
#include "runtime/cuda.h"

namespace {
// Register-only stream of independent mma: the rate no kernel that also loads data can exceed.
__global__ void mma_ceiling(int iters, int *sink) {
    unsigned a[4] = {threadIdx.x, threadIdx.x * 2654435761u, ~threadIdx.x, threadIdx.x ^ 0x5555u};
    int acc[8][4] = {};
    for (int it = 0; it < iters; it++)
#pragma unroll
        for (int j = 0; j < 8; j++) mma_and_popc(acc[j], a, a[j & 3] + it, a[(j + 1) & 3]);
    int s = 0;
    for (int j = 0; j < 8; j++)
        for (int q = 0; q < 4; q++) s += acc[j][q];
    if (s == 0x7fffffff) *sink = s;
}

// wgmma fed from shared memory alone (two warpgroups, operands resident, 1,024 bits): the rate
// no Hopper kernel that also loads its operands can exceed. With iters = 1 it writes C (128 ×
// 256) for a check of the descriptors and swizzle against the host.
__global__ void __launch_bounds__(256, 1) wgmma_ceiling(const uint64_t *ga, const uint64_t *gb,
                                                        int iters, int *out) {
#if TG_SM90A
    extern __shared__ unsigned char raw[];
    const unsigned base = (smem_u32(raw) + 1023) & ~1023u;
    unsigned char *sm = raw + (base - smem_u32(raw));
    for (int i = threadIdx.x; i < (128 + 256) * 8; i += blockDim.x) { // 16-byte chunks, swizzled
        const int r = i / 8, ch = i % 8;
        const uint64_t *src = (r < 128 ? ga + r * 16 : gb + (r - 128) * 16) + ch * 2;
        *(uint4 *)(sm + swz128(r, ch)) = *(const uint4 *)src;
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // visible to wgmma
    __syncthreads();
    const int wg = threadIdx.x / 128;
    int d[128];
    for (int it = 0; it < iters; it++) {
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            wg_mma(d, wg_desc(base + wg * 64 * 128 + kk * 32), wg_desc(base + 128 * 128 + kk * 32),
                   it | kk);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    const int w = (threadIdx.x / 32) % 4, l = threadIdx.x % 32;
    int sum = 0;
    for (int j = 0; j < 32; j++)
        for (int h = 0; h < 2; h++) {
            if (iters == 1)
                store_pair(out, 256, 128, 256, wg * 64 + 16 * w + l / 4 + 8 * h, 8 * j + 2 * (l % 4),
                           d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
            sum += d[4 * j + 2 * h] + d[4 * j + 2 * h + 1];
        }
    if (iters != 1 && sum == 0x7fffffff) out[0] = sum; // keeps the loop alive
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

__global__ void fill_random(uint64_t *p, int64_t n, uint64_t seed) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        p[i] = z ^ (z >> 31);
    }
}

// CUDA-core reference for a few rows of C (popcount of 64-bit words). With g.keys, the
// entries of pairs in the wrong order are not compared: those still −1 (as filled) are counted
// in *left.
__global__ void gemm_reference(GemmArgs g, int64_t r0, int64_t nr, int64_t *bad, int64_t *left) {
    const TileKeys &k = g.keys;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < 2 * nr * g.n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int c = (int)(i / (nr * g.n));
        int64_t r = r0 + (i / g.n) % nr, j = i % g.n;
        if (r >= g.m) continue;
        if (k.l && j < k.rmain && k.l[r / k.lper] >= k.r[j / k.rper]) {
            if (g.c[c][r * g.ldc + j] == -1) atomicAdd((unsigned long long *)left, 1ull);
            continue;
        }
        int s = 0;
        for (int64_t w = 0; w < g.kwords[c]; w++)
            s += __popcll(g.a[c][r * g.lda[c] + w] & g.b[c][j * g.ldb[c] + w]);
        if (s != g.c[c][r * g.ldc + j]) atomicAdd((unsigned long long *)bad, 1ull);
    }
}
} // namespace

namespace {
// Milliseconds that launch() takes on the default stream.
template <class F> float time_ms(F launch) {
    cudaEvent_t e0, e1;
    TG_CUDA_CHECK(cudaEventCreate(&e0));
    TG_CUDA_CHECK(cudaEventCreate(&e1));
    TG_CUDA_CHECK(cudaEventRecord(e0));
    launch();
    TG_CUDA_CHECK(cudaGetLastError());
    TG_CUDA_CHECK(cudaEventRecord(e1));
    TG_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms;
    TG_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    TG_CUDA_CHECK(cudaEventDestroy(e0));
    TG_CUDA_CHECK(cudaEventDestroy(e1));
    return ms;
}

// Entries of rows r0 .. r0+nr of both classes of C that differ from the CUDA-core popcount;
// with g.keys, *left: those of pairs in the wrong order left unwritten (bad: two counters).
int64_t gemm_mismatches(const GemmArgs &g, int64_t r0, int64_t nr, int64_t *bad,
                        int64_t *left = nullptr) {
    int64_t h[2];
    TG_CUDA_CHECK(cudaMemset(bad, 0, 2 * sizeof *bad));
    gemm_reference<<<1024, 256>>>(g, r0, nr, bad, bad + 1);
    TG_CUDA_CHECK(cudaGetLastError());
    TG_CUDA_CHECK(cudaMemcpy(h, bad, sizeof h, cudaMemcpyDeviceToHost));
    if (left) *left = h[1];
    return h[0];
}

// Random rows for a GEMM of m × n rows, words[c] words a class (row strides = words), C
// (ldc = n rounded up to 4) filled with −1; free with gemm_free.
GemmArgs gemm_alloc(int64_t m, int64_t n, const int64_t words[2]) {
    GemmArgs g{};
    g.m = m;
    g.n = n;
    g.ldc = (n + 3) & ~(int64_t)3;
    for (int c = 0; c < 2; c++) {
        uint64_t *a, *b;
        TG_CUDA_CHECK(cudaMalloc(&a, (size_t)m * words[c] * 8));
        TG_CUDA_CHECK(cudaMalloc(&b, (size_t)n * words[c] * 8));
        TG_CUDA_CHECK(cudaMalloc(&g.c[c], (size_t)m * g.ldc * 4));
        TG_CUDA_CHECK(cudaMemset(g.c[c], 0xff, (size_t)m * g.ldc * 4));
        fill_random<<<1024, 256>>>(a, m * words[c], 1 + 2 * c);
        fill_random<<<1024, 256>>>(b, n * words[c], 2 + 2 * c);
        TG_CUDA_CHECK(cudaGetLastError());
        g.a[c] = a;
        g.b[c] = b;
        g.lda[c] = g.ldb[c] = g.kwords[c] = words[c];
    }
    return g;
}
void gemm_free(GemmArgs &g) {
    for (int c = 0; c < 2; c++) {
        TG_CUDA_CHECK(cudaFree((void *)g.a[c]));
        TG_CUDA_CHECK(cudaFree((void *)g.b[c]));
        TG_CUDA_CHECK(cudaFree(g.c[c]));
    }
}
} // namespace

extern "C" double tg_epi_bench_ceiling(void) {
    int dev, sms;
    TG_CUDA_CHECK(cudaGetDevice(&dev));
    TG_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    int *sink;
    TG_CUDA_CHECK(cudaMalloc(&sink, sizeof *sink));
    const int iters = 20000, blocks = sms * 4, threads = 256;
    mma_ceiling<<<blocks, threads>>>(100, sink); // warm-up
    const float ms = time_ms([&] { mma_ceiling<<<blocks, threads>>>(iters, sink); });
    TG_CUDA_CHECK(cudaFree(sink));
    double ops = (double)blocks * (threads / 32) * iters * 8 * (16.0 * 8 * 256 * 2);
    return ops / (ms * 1e-3) / 1e12;
}

extern "C" double tg_epi_bench_ceiling_wgmma(int64_t *mismatches) {
    int dev, sms;
    TG_CUDA_CHECK(cudaGetDevice(&dev));
    *mismatches = 0;
    if (!wgmma_ok()) return 0;
    TG_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const int smem = (128 + 256) * 128 + 1024;
    static std::atomic<uint64_t> attr{0};
    smem_attribute(wgmma_ceiling, smem, attr);
    // one pass of 1,024 bits checked against the CUDA-core reference (both "classes" the same)
    const int64_t words[2] = {16, 16};
    GemmArgs g = gemm_alloc(128, 256, words);
    wgmma_ceiling<<<1, 256, smem>>>(g.a[0], g.b[0], 1, g.c[0]);
    TG_CUDA_CHECK(cudaGetLastError());
    GemmArgs one = g;
    one.a[1] = g.a[0];
    one.b[1] = g.b[0];
    one.c[1] = g.c[0];
    int64_t *bad;
    TG_CUDA_CHECK(cudaMalloc(&bad, 2 * sizeof *bad));
    *mismatches = gemm_mismatches(one, 0, 128, bad) / 2;
    TG_CUDA_CHECK(cudaFree(bad));
    const int iters = 4000;
    const float ms = time_ms([&] { wgmma_ceiling<<<sms, 256, smem>>>(g.a[0], g.b[0], iters, g.c[0]); });
    gemm_free(g);
    return (double)sms * 2 * iters * 4 * (64.0 * 256 * 256 * 2) / (ms * 1e-3) / 1e12;
}

extern "C" const char *tg_epi_bench_gemm_shape(int shape) {
    return shape >= 0 && shape < NSHAPES ? gemm_shapes[shape].name : NULL;
}

// C (m × n, two classes of `words` words each) timed over `reps`; returns TOPS (AND + POPC
// counted as 2) and the number of entries of a few checked rows that differ from the reference.
extern "C" double tg_epi_bench_gemm(int64_t m, int64_t n, int64_t words, int reps, int shape,
                                    int64_t *mismatches) {
    *mismatches = 0;
    if (!shape_runs(shape)) return 0;
    const int64_t w[2] = {words, words};
    GemmArgs g = gemm_alloc(m, n, w);
    int64_t *bad;
    TG_CUDA_CHECK(cudaMalloc(&bad, 2 * sizeof *bad));
    gemm_shapes[shape].run(g, 0);
    *mismatches = gemm_mismatches(g, 0, 130, bad) + gemm_mismatches(g, m > 130 ? m - 130 : 0, 130, bad);
    const float ms = time_ms([&] {
        for (int r = 0; r < reps; r++) gemm_shapes[shape].run(g, 0);
    });
    TG_CUDA_CHECK(cudaFree(bad));
    gemm_free(g);
    return 2.0 * m * n * words * 64 * 2 * reps / (ms * 1e-3) / 1e12;
}

extern "C" int64_t tg_epi_test_gemm(int64_t m, int64_t n, int64_t words0, int64_t words1,
                                    int shape, int64_t *left) {
    if (!shape_runs(shape)) return -1;
    const int64_t w[2] = {words0, words1};
    GemmArgs g = gemm_alloc(m, n, w);
    int32_t *keys = nullptr;
    if (left) { // left tuples of 4 rows keyed 0, 1, …; right ones of 2 spread over the same keys
        const int64_t nl = (m + 3) / 4, rmain = (n - 3) / 2 * 2, nr = rmain / 2;
        std::vector<int32_t> k((size_t)(nl + nr));
        for (int64_t t = 0; t < nl; t++) k[t] = (int32_t)t;
        for (int64_t u = 0; u < nr; u++) k[nl + u] = (int32_t)(u * nl / nr);
        TG_CUDA_CHECK(cudaMalloc(&keys, k.size() * sizeof *keys));
        TG_CUDA_CHECK(cudaMemcpy(keys, k.data(), k.size() * sizeof *keys, cudaMemcpyHostToDevice));
        g.keys = {keys, keys + nl, 4, 2, rmain};
    }
    int64_t *bad;
    TG_CUDA_CHECK(cudaMalloc(&bad, 2 * sizeof *bad));
    gemm_shapes[shape].run(g, 0);
    const int64_t wrong = gemm_mismatches(g, 0, m, bad, left);
    TG_CUDA_CHECK(cudaFree(bad));
    if (keys) TG_CUDA_CHECK(cudaFree(keys));
    gemm_free(g);
    return wrong;
}

namespace {
// One thread a table, its three lanes' cells summed as the epilogue sums them.
__global__ void k2_screen_tables(int cells, int64_t n, const int32_t *r0, const int32_t *r1,
                                 const double *t, double *lb) {
    const int per = cells / 3;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int32_t *a = r0 + i * cells, *b = r1 + i * cells;
        int64_t R0 = 0, R1 = 0;
        for (int g = 0; g < cells; g++) R0 += a[g], R1 += b[g];
        const int64_t R = R0 + R1;
        double d = 0, r = 0;
        for (int lane = 0; lane < 3; lane++) {
            K2Screen s;
            for (int j = 0; j < per; j++) k2_screen_cell(a[lane * per + j], b[lane * per + j], s);
            d += s.d;
            r += s.r;
        }
        const double c = __dsub_rn(__dsub_rn(t[R + 1], t[R0]), t[R1]);
        lb[i] = R > 0 && R <= K2_SCREEN_MAX_R ? k2_screen_key(d, r, R, cells, per, c, t[R + 1])
                                               : -INFINITY;
    }
}
} // namespace

extern "C" void tg_epi_test_k2_screen(int order, int64_t n, const int32_t *r0, const int32_t *r1,
                                      const double *t, int64_t tlen, double *lb) {
    const int cells = order == 2 ? 9 : order == 3 ? 27 : 81;
    int32_t *dr;
    double *dt, *dlb;
    TG_CUDA_CHECK(cudaMalloc(&dr, (size_t)n * cells * 2 * sizeof *dr));
    TG_CUDA_CHECK(cudaMalloc(&dt, (size_t)tlen * sizeof *dt));
    TG_CUDA_CHECK(cudaMalloc(&dlb, (size_t)n * sizeof *dlb));
    TG_CUDA_CHECK(cudaMemcpy(dr, r0, (size_t)n * cells * sizeof *dr, cudaMemcpyHostToDevice));
    TG_CUDA_CHECK(cudaMemcpy(dr + n * cells, r1, (size_t)n * cells * sizeof *dr,
                             cudaMemcpyHostToDevice));
    TG_CUDA_CHECK(cudaMemcpy(dt, t, (size_t)tlen * sizeof *dt, cudaMemcpyHostToDevice));
    k2_screen_tables<<<(unsigned)((n + 255) / 256), 256>>>(cells, n, dr, dr + n * cells, dt, dlb);
    TG_CUDA_CHECK(cudaGetLastError());
    TG_CUDA_CHECK(cudaMemcpy(lb, dlb, (size_t)n * sizeof *dlb, cudaMemcpyDeviceToHost));
    TG_CUDA_CHECK(cudaFree(dr));
    TG_CUDA_CHECK(cudaFree(dt));
    TG_CUDA_CHECK(cudaFree(dlb));
}
