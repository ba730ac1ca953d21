/* INT8 dot-product tiles on the CPU and the codelets. Two exact methods, the first the CPU has:
 *  - AVX-512 VNNI (VPDPBUSD: 64 unsigned × signed byte products summed into 16 int32 a
 *    cycle): A shifted to unsigned (a + 128), the shift taken back as 128·Σ_k b; int32 sums
 *    wrap, so the result is exact whenever it fits in int32. Register blocks of 32 rows × 8
 *    columns (16 accumulators) over packed panels of KC entries.
 *  - single-precision GEMMs (OpenBLAS, one thread per worker) on panels widened chunk by
 *    chunk: every int8 product is at most 128² = 2^14 in magnitude, so a chunk of 1024 entries
 *    sums to less than 2^24 and its float result is exact; chunks add up in int32. 5.4× the
 *    integer loop the compiler vectorised (bench/krr --cpu on 2 AVX-512 cores). */
#include "codelets/distance.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

struct starpu_codelet tg_cl_gram, tg_cl_gram_sym;
static struct starpu_perfmodel model_gram, model_gram_sym;

enum { CHUNK = 1024 }; /* entries per exact float GEMM: CHUNK · 2^14 ≤ 2^24 */

/* Columns [0, cols) of panel x (ld entries apart), entries [k0, k0 + kc), as floats. */
static void widen(const int8_t *x, size_t ld, size_t cols, size_t k0, size_t kc, float *out) {
    for (size_t c = 0; c < cols; c++)
        for (size_t t = 0; t < kc; t++) out[t + c * kc] = x[k0 + t + c * ld];
}

void tg_gram_tile_sgemm(const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k,
                        int32_t *c, size_t ldc, size_t m, size_t n, int sym) {
    size_t kc0 = k < CHUNK ? k : CHUNK;
    float *fa = tg_malloc_n((int64_t)(sym ? m : m + n), (int64_t)kc0, sizeof *fa, NULL),
          *fc = tg_malloc_n((int64_t)m, (int64_t)n, sizeof *fc, NULL);
    if (!fa || !fc) STARPU_ABORT_MSG("out of memory for a %zu x %zu dot-product tile", m, n);
    float *fb = sym ? fa : fa + m * kc0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++) c[i + j * ldc] = 0;
    for (size_t k0 = 0; k0 < k; k0 += CHUNK) {
        size_t kc = k - k0 < CHUNK ? k - k0 : CHUNK;
        widen(a, lda, m, k0, kc, fa);
        if (!sym) widen(b, ldb, n, k0, kc, fb);
        cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)m, (int)n, (int)kc, 1.0f, fa,
                    (int)kc, fb, (int)kc, 0.0f, fc, (int)m);
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < m; i++) c[i + j * ldc] += (int32_t)fc[i + j * m];
    }
    free(fa);
    free(fc);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TG_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))
enum { VR = 32, VC = 8, KC = 2048 }; /* rows and columns of a register block, entries a panel */

/* Rows [0, m) of A (columns of the k × m panel), entries [k0, k0 + kg·4), as unsigned bytes
 * a + 128 (0 past k): per block of VR rows and group of 4 entries, VR × 4 bytes. */
static void pack_a(const int8_t *a, size_t lda, size_t m, size_t k, size_t k0, size_t kg,
                   uint8_t *out) {
    for (size_t i0 = 0; i0 < m; i0 += VR)
        for (size_t g = 0; g < kg; g++, out += 4 * VR)
            for (size_t r = 0; r < VR; r++)
                for (size_t t = 0; t < 4; t++) {
                    size_t i = i0 + r, e = k0 + 4 * g + t;
                    out[4 * r + t] = i < m && e < k ? (uint8_t)(a[e + i * lda] + 128) : 0;
                }
}

/* Columns [j0, j0 + VC) of B (0 past n and past k), entries [k0, k0 + kg·4): per group of 4
 * entries, VC × 4 bytes; adds each column's entries to sum[j − j0]. */
static void pack_b(const int8_t *b, size_t ldb, size_t n, size_t k, size_t j0, size_t k0,
                   size_t kg, int8_t *out, int32_t *sum) {
    for (size_t g = 0; g < kg; g++, out += 4 * VC)
        for (size_t q = 0; q < VC; q++)
            for (size_t t = 0; t < 4; t++) {
                size_t j = j0 + q, e = k0 + 4 * g + t;
                int8_t v = j < n && e < k ? b[e + j * ldb] : 0;
                out[4 * q + t] = v;
                sum[q] += v;
            }
}

/* c[r, q] += Σ_g pa·pb over kg groups for a VR × VC block (rows past @p rows, columns past
 * @p cols not written); the sums wrap like the instruction's. */
static TG_VNNI void block(const uint8_t *pa, const int8_t *pb, size_t kg, int32_t *c, size_t ldc,
                          size_t rows, size_t cols) {
    __m512i acc[VC][2];
    /* unrolled, so that the 16 accumulators stay in registers */
#pragma GCC unroll 8
    for (int q = 0; q < VC; q++) acc[q][0] = acc[q][1] = _mm512_setzero_si512();
    for (size_t g = 0; g < kg; g++, pa += 4 * VR, pb += 4 * VC) {
        __m512i a0 = _mm512_loadu_si512(pa), a1 = _mm512_loadu_si512(pa + 64);
#pragma GCC unroll 8
        for (int q = 0; q < VC; q++) {
            int32_t w;
            memcpy(&w, pb + 4 * q, 4);
            __m512i bq = _mm512_set1_epi32(w);
            acc[q][0] = _mm512_dpbusd_epi32(acc[q][0], a0, bq);
            acc[q][1] = _mm512_dpbusd_epi32(acc[q][1], a1, bq);
        }
    }
    __mmask16 m0 = rows >= 16 ? 0xffff : (__mmask16)((1u << rows) - 1),
              m1 = rows >= 32 ? 0xffff : rows <= 16 ? 0 : (__mmask16)((1u << (rows - 16)) - 1);
#pragma GCC unroll 8
    for (size_t q = 0; q < VC; q++) {
        if (q >= cols) break;
        int32_t *cq = c + q * ldc;
        __m512i c0 = _mm512_maskz_loadu_epi32(m0, cq), c1 = _mm512_maskz_loadu_epi32(m1, cq + 16);
        _mm512_mask_storeu_epi32(cq, m0, _mm512_add_epi32(c0, acc[q][0]));
        _mm512_mask_storeu_epi32(cq + 16, m1, _mm512_add_epi32(c1, acc[q][1]));
    }
}

void tg_gram_tile_vnni(const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k,
                       int32_t *c, size_t ldc, size_t m, size_t n, int sym) {
    STARPU_ASSERT_MSG(!sym || m == n, "a symmetric dot-product tile must be square");
    const size_t mp = (m + VR - 1) / VR * VR, kg0 = ((k < KC ? k : KC) + 3) / 4;
    uint8_t *pa = aligned_alloc(64, (mp * 4 * kg0 + 127) / 64 * 64);
    int8_t *pb = aligned_alloc(64, (VC * 4 * kg0 + 127) / 64 * 64);
    int32_t *sum = tg_calloc_n((int64_t)(n + VC), 1, sizeof *sum, NULL);
    if (!pa || !pb || !sum) STARPU_ABORT_MSG("out of memory for a %zu x %zu dot-product tile", m, n);
    for (size_t j = 0; j < n; j++) memset(c + j * ldc, 0, m * sizeof *c);
    for (size_t k0 = 0; k0 < k; k0 += KC) {
        size_t kg = ((k - k0 < KC ? k - k0 : KC) + 3) / 4;
        pack_a(a, lda, m, k, k0, kg, pa);
        for (size_t j0 = 0; j0 < n; j0 += VC) {
            pack_b(b, ldb, n, k, j0, k0, kg, pb, sum + j0);
            size_t cols = n - j0 < VC ? n - j0 : VC;
            /* symmetric: the blocks holding a row at or below the diagonal, then mirrored */
            for (size_t i0 = sym ? j0 / VR * VR : 0; i0 < m; i0 += VR)
                block(pa + i0 * 4 * kg, pb, kg, c + i0 + j0 * ldc, ldc, m - i0 < VR ? m - i0 : VR,
                      cols);
        }
    }
    /* Σ (a + 128)·b − 128·Σ b, in unsigned arithmetic: the wrapped sums come out exact */
    for (size_t j = 0; j < n; j++)
        for (size_t i = sym ? j : 0; i < m; i++)
            c[i + j * ldc] = (int32_t)((uint32_t)c[i + j * ldc] - 128u * (uint32_t)sum[j]);
    if (sym)
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < j && i < m; i++) c[i + j * ldc] = c[j + i * ldc];
    free(pa);
    free(pb);
    free(sum);
}

static int have_vnni(void) {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
}
#else
static int have_vnni(void) { return 0; }
void tg_gram_tile_vnni(const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k,
                       int32_t *c, size_t ldc, size_t m, size_t n, int sym) {
    tg_gram_tile_sgemm(a, lda, b, ldb, k, c, ldc, m, n, sym);
}
#endif

int tg_gram_tile_has_vnni(void) { return have_vnni(); }

void tg_gram_tile(const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k, int32_t *c,
                  size_t ldc, size_t m, size_t n, int sym) {
    static int vnni = -1;
    if (vnni < 0) vnni = have_vnni();
    (vnni ? tg_gram_tile_vnni : tg_gram_tile_sgemm)(a, lda, b, ldb, k, c, ldc, m, n, sym);
}

static void gram(void *ba, void *bb, void *bc, int sym) {
    tg_gram_tile((const int8_t *)STARPU_MATRIX_GET_PTR(ba), STARPU_MATRIX_GET_LD(ba),
                 (const int8_t *)STARPU_MATRIX_GET_PTR(bb), STARPU_MATRIX_GET_LD(bb),
                 STARPU_MATRIX_GET_NX(ba), (int32_t *)STARPU_MATRIX_GET_PTR(bc),
                 STARPU_MATRIX_GET_LD(bc), STARPU_MATRIX_GET_NX(bc), STARPU_MATRIX_GET_NY(bc), sym);
}

void tg_gram_cpu(void *buffers[], void *cl_arg) {
    (void)cl_arg;
    gram(buffers[0], buffers[1], buffers[2], 0);
}

void tg_gram_sym_cpu(void *buffers[], void *cl_arg) {
    (void)cl_arg;
    gram(buffers[0], buffers[0], buffers[1], 1);
}

int tg_insert_gram(starpu_data_handle_t a, starpu_data_handle_t b, starpu_data_handle_t c,
                   int priority) {
    double ops = 2.0 * starpu_matrix_get_nx(a) * starpu_matrix_get_ny(a) * starpu_matrix_get_ny(b);
    if (a == b)
        return TG_INSERT(&tg_cl_gram_sym, STARPU_R, a, STARPU_W, c, STARPU_PRIORITY, priority,
                         STARPU_FLOPS, ops, 0);
    return TG_INSERT(&tg_cl_gram, STARPU_R, a, STARPU_R, b, STARPU_W, c, STARPU_PRIORITY, priority,
                     STARPU_FLOPS, ops, 0);
}

void tg_distance_codelets_init(void) {
    static const enum starpu_data_access_mode rrw[3] = {STARPU_R, STARPU_R, STARPU_W},
                                              rw[2] = {STARPU_R, STARPU_W};
    tg_codelet_fill(&tg_cl_gram, &model_gram, "tg_gram_int8", tg_gram_cpu,
                    TG_CUDA_FN(tg_gram_cuda), 3, rrw, (struct tg_codelet_hints){TG_B_DOT, 0});
    tg_codelet_fill(&tg_cl_gram_sym, &model_gram_sym, "tg_gram_sym_int8", tg_gram_sym_cpu,
                    TG_CUDA_FN(tg_gram_sym_cuda), 2, rw, (struct tg_codelet_hints){TG_B_DOT, 0});
}
