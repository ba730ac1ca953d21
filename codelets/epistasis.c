/* Epistasis round codelets, CPU side: the reference round function (AND + popcount on 64-bit
 * words, with AVX2 and AVX-512 VPOPCNTDQ kernels chosen at run time), the scores, the codelet
 * table (one per order, perfmodels tg_epi_round_o<k>) and the per-combination table used to
 * report hits. The interface and the cell / key rules are in codelets/epistasis.h. */

/* Keys must be bit-identical to the CUDA path: no contraction into FMA, no reassociation. */
#pragma GCC optimize("fp-contract=off")

#include "codelets/epistasis.h"

#include <errno.h>
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

struct starpu_codelet tg_cl_epi_round[TG_EPI_MAX_ORDER - 1];
static struct starpu_perfmodel epi_models[TG_EPI_MAX_ORDER - 1];
static const char *const epi_symbols[TG_EPI_MAX_ORDER - 1] = {"tg_epi_round_o2", "tg_epi_round_o3",
                                                              "tg_epi_round_o4"};

void tg_epi_codelets_init(void) {
    for (int k = 2; k <= TG_EPI_MAX_ORDER; k++) {
        enum starpu_data_access_mode m[TG_EPI_MAX_ORDER + 2];
        for (int i = 0; i < k + 1; i++) m[i] = STARPU_R; /* k plane blocks, the score table */
        m[k + 1] = STARPU_W;                             /* the result */
        tg_codelet_fill(&tg_cl_epi_round[k - 2], &epi_models[k - 2], epi_symbols[k - 2],
                        tg_epi_round_cpu, TG_CUDA_FN(tg_epi_round_cuda), k + 2, m,
                        (struct tg_codelet_hints){TG_B_EPI, 0});
    }
}

int tg_insert_epi_round(const struct tg_epi_round_arg *a, const starpu_data_handle_t blk[],
                        starpu_data_handle_t table, starpu_data_handle_t result, double work,
                        void (*done)(void *), void *done_arg) {
    /* the argument goes to the task as is (both codelets read it by a cast); StarPU frees it */
    struct tg_epi_round_arg *arg = malloc(sizeof *arg);
    if (!arg) return -ENOMEM;
    *arg = *a;
    /* as many plane blocks as the order: the handles go as an array */
    struct starpu_data_descr d[TG_EPI_MAX_ORDER + 2];
    for (int i = 0; i < a->order; i++) d[i] = (struct starpu_data_descr){blk[i], STARPU_R};
    d[a->order] = (struct starpu_data_descr){table, STARPU_R};
    d[a->order + 1] = (struct starpu_data_descr){result, STARPU_W};
    return TG_INSERT_LOCAL(&tg_cl_epi_round[a->order - 2], STARPU_CL_ARGS, arg, sizeof *arg,
                           STARPU_DATA_MODE_ARRAY, d, a->order + 2, STARPU_CALLBACK_WITH_ARG_NFREE,
                           done, done_arg, STARPU_FLOPS, work, 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Scores */

void tg_epi_score_table(enum tg_epi_score score, int64_t n, double *t) {
    for (int64_t i = 0; i < n + 2; i++)
        t[i] = score == TG_EPI_K2   ? lgamma((double)i + 1)
               : score == TG_EPI_MI ? (i ? (double)i * log((double)i) : 0.0)
                                    : 0.0;
}

/* The key in the documented order; inlined where order (and in the pair round, score) is a
 * constant, so every caller runs the same arithmetic; the loops unroll by 9 (3^k cells: whole
 * at order 2, the table in registers). */
static inline __attribute__((always_inline)) double key_of(enum tg_epi_score score, int order,
                                                           const int64_t *r0, const int64_t *r1,
                                                           const double *t) {
    const int cells = order == 2 ? 9 : order == 3 ? 27 : 81, per = cells / 3;
    int64_t R0 = 0, R1 = 0;
#pragma GCC unroll 9
    for (int g = 0; g < cells; g++) R0 += r0[g], R1 += r1[g];
    const int64_t R = R0 + R1, Rc[2] = {R0, R1};
    if (R == 0) return INFINITY;
    /* a partial sum per genotype of the first SNP, each over its cells in order (the CUDA
     * path's three lanes per combination), then (p0 + p1) + p2 */
    double p[3];
#pragma GCC unroll 3
    for (int d = 0; d < 3; d++) {
        double a = 0;
#pragma GCC unroll 9
        for (int g = d * per; g < (d + 1) * per; g++) {
            const int64_t r = r0[g] + r1[g], rc[2] = {r0[g], r1[g]};
            switch (score) {
            case TG_EPI_K2: a = a + ((t[r + 1] - t[r0[g]]) - t[r1[g]]); break;
            case TG_EPI_MI:
                a = a + t[r0[g]];
                a = a + t[r1[g]];
                a = a - t[r];
                break;
            case TG_EPI_CHI2:
                if (r == 0) break;
                for (int c = 0; c < 2; c++)
                    if (Rc[c] > 0) a = a + (double)(rc[c] * rc[c]) / (double)(r * Rc[c]);
                break;
            }
        }
        p[d] = a;
    }
    const double a = (p[0] + p[1]) + p[2];
    switch (score) {
    case TG_EPI_K2: return a - ((t[R + 1] - t[R0]) - t[R1]);
    case TG_EPI_MI: return -((((a - t[R0]) - t[R1]) + t[R]) / (double)R);
    case TG_EPI_CHI2: return -((a - 1.0) * (double)R);
    }
    return NAN;
}

double tg_epi_key(enum tg_epi_score score, int order, const int64_t *r0, const int64_t *r1,
                  const double *t) {
    return order == 2   ? key_of(score, 2, r0, r1, t)
           : order == 3 ? key_of(score, 3, r0, r1, t)
                        : key_of(score, 4, r0, r1, t);
}

int tg_epi_passes(const struct tg_epi_round_arg *a, const int64_t *r0, const int64_t *r1,
                  double key) {
    int cells = 0;
    int64_t R0 = 0, R1 = 0;
    for (int g = 0; g < (a->order == 2 ? 9 : a->order == 3 ? 27 : 81); g++)
        cells += r0[g] + r1[g] > 0, R0 += r0[g], R1 += r1[g];
    const int classes = (R0 > 0) + (R1 > 0), df = cells && classes ? (cells - 1) * (classes - 1) : 0;
    if (!df) return a->pass_stat[0] < 0; /* P = 1: passes only a threshold of 1 */
    return (a->score == TG_EPI_CHI2 ? -key : -key * (2.0 * (double)(R0 + R1))) >= a->pass_stat[df];
}

int tg_epi_hit_cmp(const struct tg_epi_hit *a, const struct tg_epi_hit *b) {
    if (a->key < b->key) return -1;
    if (a->key > b->key) return 1;
    for (int i = 0; i < TG_EPI_MAX_ORDER; i++)
        if (a->snp[i] != b->snp[i]) return a->snp[i] < b->snp[i] ? -1 : 1;
    return 0;
}

void tg_epi_keep(struct tg_epi_hit *hits, int32_t *n, int topk, const struct tg_epi_hit *h) {
    if (*n == topk && tg_epi_hit_cmp(h, &hits[*n - 1]) >= 0) return;
    if (*n < topk) ++*n;
    int i = *n - 1;
    for (; i > 0 && tg_epi_hit_cmp(h, &hits[i - 1]) < 0; i--) hits[i] = hits[i - 1];
    hits[i] = *h;
}

/* ---------------------------------------------------------------------------------------- */
/* Popcount kernels: out[j] = popcount(p AND b_j) summed over nw words for b0, b1 and (when bv
 * is not NULL) bv. nw is a multiple of 4 (the plane layout pads every plane to 256 bits). */

typedef void popc_fn(const uint64_t *p, const uint64_t *b0, const uint64_t *b1, const uint64_t *bv,
                     int64_t nw, uint64_t out[3]);

__attribute__((target("popcnt"))) static void popc_scalar(const uint64_t *p, const uint64_t *b0,
                                                          const uint64_t *b1, const uint64_t *bv,
                                                          int64_t nw, uint64_t out[3]) {
    uint64_t c0 = 0, c1 = 0, cv = 0;
    for (int64_t w = 0; w < nw; w++) {
        c0 += (uint64_t)__builtin_popcountll(p[w] & b0[w]);
        c1 += (uint64_t)__builtin_popcountll(p[w] & b1[w]);
        if (bv) cv += (uint64_t)__builtin_popcountll(p[w] & bv[w]);
    }
    out[0] = c0, out[1] = c1, out[2] = cv;
}

/* AVX2 has no vector popcount: nibble lookup (pshufb) and byte sums (psadbw) per 64-bit lane
 * (Muła's method). */
__attribute__((target("avx2"))) static inline __m256i popc256(__m256i v) {
    const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
    const __m256i low = _mm256_set1_epi8(0x0f);
    __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
    __m256i c = _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi));
    return _mm256_sad_epu8(c, _mm256_setzero_si256());
}

__attribute__((target("avx2"))) static inline uint64_t hsum256(__m256i v) {
    __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return (uint64_t)_mm_cvtsi128_si64(s) + (uint64_t)_mm_extract_epi64(s, 1);
}

__attribute__((target("avx2"))) static void popc_avx2(const uint64_t *p, const uint64_t *b0,
                                                      const uint64_t *b1, const uint64_t *bv,
                                                      int64_t nw, uint64_t out[3]) {
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, cv = c0;
    for (int64_t w = 0; w < nw; w += 4) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(p + w));
        c0 = _mm256_add_epi64(
            c0, popc256(_mm256_and_si256(x, _mm256_loadu_si256((const __m256i *)(b0 + w)))));
        c1 = _mm256_add_epi64(
            c1, popc256(_mm256_and_si256(x, _mm256_loadu_si256((const __m256i *)(b1 + w)))));
        if (bv)
            cv = _mm256_add_epi64(
                cv, popc256(_mm256_and_si256(x, _mm256_loadu_si256((const __m256i *)(bv + w)))));
    }
    out[0] = hsum256(c0), out[1] = hsum256(c1), out[2] = hsum256(cv);
}

/* AVX-512 VPOPCNTDQ: 8 words per step; a last group of 4 words is a masked load. */
__attribute__((target("avx512f,avx512vpopcntdq"))) static void
popc_avx512(const uint64_t *p, const uint64_t *b0, const uint64_t *b1, const uint64_t *bv,
            int64_t nw, uint64_t out[3]) {
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, cv = c0;
    for (int64_t w = 0; w < nw; w += 8) {
        __mmask8 m = nw - w >= 8 ? 0xff : 0x0f;
        __m512i x = _mm512_maskz_loadu_epi64(m, p + w);
        c0 = _mm512_add_epi64(
            c0, _mm512_popcnt_epi64(_mm512_and_si512(x, _mm512_maskz_loadu_epi64(m, b0 + w))));
        c1 = _mm512_add_epi64(
            c1, _mm512_popcnt_epi64(_mm512_and_si512(x, _mm512_maskz_loadu_epi64(m, b1 + w))));
        if (bv)
            cv = _mm512_add_epi64(
                cv, _mm512_popcnt_epi64(_mm512_and_si512(x, _mm512_maskz_loadu_epi64(m, bv + w))));
    }
    out[0] = (uint64_t)_mm512_reduce_add_epi64(c0);
    out[1] = (uint64_t)_mm512_reduce_add_epi64(c1);
    out[2] = (uint64_t)_mm512_reduce_add_epi64(cv);
}

/* Counts against runs of SNPs (the innermost SNP of a round, or the second of a pair):
 * out[(j·nx + i)·Q + q] = popcount(x[i] AND plane q of y SNP j) over nw words, for x planes
 * x[0 .. nx), planes q < Q (Q = 2: g0, g1; Q = 3: and the valid plane), y SNPs `stride` words
 * apart and their planes nw apart (the plane block layout). */
typedef void pairs_fn(const uint64_t *const *x, int nx, const uint64_t *y, int ny, int Q,
                      int64_t nw, int64_t stride, int64_t *out);

/* Without vector popcount an x plane against a y SNP is one popc call. */
static void pairs_by(popc_fn *pc, const uint64_t *const *x, int nx, const uint64_t *y, int ny,
                     int Q, int64_t nw, int64_t stride, int64_t *out) {
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++) {
            const uint64_t *yj = y + j * stride;
            uint64_t o[3];
            pc(x[i], yj, yj + nw, Q == 3 ? yj + 2 * nw : NULL, nw, o);
            for (int q = 0; q < Q; q++) out[(j * nx + i) * Q + q] = (int64_t)o[q];
        }
}

static void pairs_scalar(const uint64_t *const *x, int nx, const uint64_t *y, int ny, int Q,
                         int64_t nw, int64_t stride, int64_t *out) {
    pairs_by(popc_scalar, x, nx, y, ny, Q, nw, stride, out);
}

static void pairs_avx2(const uint64_t *const *x, int nx, const uint64_t *y, int ny, int Q,
                       int64_t nw, int64_t stride, int64_t *out) {
    pairs_by(popc_avx2, x, nx, y, ny, Q, nw, stride, out);
}

/* Eight accumulators → one vector of their eight sums (lane z = sum of v[z]): a tree of
 * unpacks and 128-bit lane shuffles, 21 instructions where eight reductions take 56. */
__attribute__((target("avx512f"))) static inline __m512i sum2(__m512i a, __m512i b) {
    /* 128-bit lane L: [a's two words of L summed, b's] */
    return _mm512_add_epi64(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

__attribute__((target("avx512f"))) static inline __m512i lanes2(__m512i a, __m512i b) {
    /* [a's lanes 0 + 1, a's 2 + 3, b's 0 + 1, b's 2 + 3] */
    return _mm512_add_epi64(_mm512_shuffle_i64x2(a, b, 0x88), _mm512_shuffle_i64x2(a, b, 0xdd));
}

/* (by value: an accumulator array whose address is taken stays in memory) */
__attribute__((target("avx512f"))) static inline __m512i sum8(__m512i v0, __m512i v1, __m512i v2,
                                                              __m512i v3, __m512i v4, __m512i v5,
                                                              __m512i v6, __m512i v7) {
    return lanes2(lanes2(sum2(v0, v1), sum2(v2, v3)), lanes2(sum2(v4, v5), sum2(v6, v7)));
}

/* A register tile of A x planes × B y SNPs × Q planes (A·B·Q ≤ 24 accumulators; the x planes
 * and one y SNP's planes in registers, of 32): each 8-word step loads A + B·Q vectors for
 * A·B·Q AND + popcounts, where a plane against a SNP at a time loads 1 + Q for Q. A, B, Q are
 * constants at every call, so the loops unroll into registers. */
enum { TILE_ACC = 24, TILE_X = 6 };

/* One 8-word step of a tile; m masks the last step of planes padded to 4 words only: full
 * steps load without a mask (a variable mask cost a store and reload of it every step). */
__attribute__((target("avx512f,avx512vpopcntdq"))) static inline __attribute__((always_inline)) void
tile_step(__m512i *acc, const uint64_t *const *x, const uint64_t *y, int A, int B, int Q,
          int64_t nw, int64_t stride, int64_t w, __mmask8 m) {
    __m512i xv[TILE_X];
#pragma GCC unroll 6
    for (int i = 0; i < A; i++) {
        xv[i] = _mm512_maskz_loadu_epi64(m, x[i] + w);
        __asm__("" : "+v"(xv[i])); /* one load each: not folded into every AND */
    }
#pragma GCC unroll 3
    for (int j = 0; j < B; j++) {
        __m512i yv[3];
#pragma GCC unroll 3
        for (int q = 0; q < Q; q++) {
            yv[q] = _mm512_maskz_loadu_epi64(m, y + j * stride + q * nw + w);
            __asm__("" : "+v"(yv[q]));
        }
#pragma GCC unroll 6
        for (int i = 0; i < A; i++)
#pragma GCC unroll 3
            for (int q = 0; q < Q; q++) {
                const int z = (j * A + i) * Q + q; /* the order of out */
                acc[z] = _mm512_add_epi64(acc[z],
                                          _mm512_popcnt_epi64(_mm512_and_si512(xv[i], yv[q])));
            }
    }
}

__attribute__((target("avx512f,avx512vpopcntdq"))) static inline __attribute__((always_inline)) void
tile512(const uint64_t *const *x, const uint64_t *y, int A, int B, int Q, int64_t nw,
        int64_t stride, int ldo, int64_t *out) {
    __m512i acc[TILE_ACC];
#pragma GCC unroll 24
    for (int z = 0; z < TILE_ACC; z++) acc[z] = _mm512_setzero_si512();
    int64_t w = 0;
    for (; w + 8 <= nw; w += 8) tile_step(acc, x, y, A, B, Q, nw, stride, w, 0xff);
    if (w < nw) tile_step(acc, x, y, A, B, Q, nw, stride, w, 0x0f);
    /* y SNP j's counts are A·Q consecutive entries of out: where they fill whole groups of 8
     * (4 × 2) or there is one y SNP (6 × 1 × 3, the last group masked), the sums are stored
     * as they come out of the tree */
    const int n = A * B * Q, run = A * Q;
    int64_t sums[TILE_ACC];
#pragma GCC unroll 3
    for (int z = 0; z < n; z += 8) {
        const __m512i v = sum8(acc[z], acc[z + 1], acc[z + 2], acc[z + 3], acc[z + 4], acc[z + 5],
                               acc[z + 6], acc[z + 7]);
        if (run % 8 == 0)
            _mm512_storeu_si512(out + (z / run * ldo) * Q + z % run, v);
        else if (B == 1)
            _mm512_mask_storeu_epi64(out + z, (__mmask8)(n - z >= 8 ? 0xff : (1 << (n - z)) - 1),
                                     v);
        else
            _mm512_storeu_si512(sums + z, v);
    }
    if (run % 8 && B > 1)
#pragma GCC unroll 24
        for (int z = 0; z < n; z++) out[(z / run * ldo + z % run / Q) * Q + z % Q] = sums[z];
}

/* Tiles of 4 x planes × 3 y SNPs with 2 planes; with 3, 6 × 1 (a pair's 2 SNPs) or 3 × 2 (3
 * divides the 9 and 27 prefixes counted with missing calls): 18 accumulators, and more x
 * planes than y SNPs, whose chunk is read from L2. A last group of fewer x planes repeats one
 * (its counts are dropped). */
__attribute__((target("avx512f,avx512vpopcntdq"))) static void
pairs_avx512(const uint64_t *const *x, int nx, const uint64_t *y, int ny, int Q, int64_t nw,
             int64_t stride, int64_t *out) {
    const int A = Q == 2 ? 4 : nx % 6 ? 3 : 6;
    for (int i = 0; i < nx; i += A) {
        const uint64_t *xi[TILE_X];
        int64_t part[TILE_X * 3 * 3];
        const int full = nx - i >= A;
        for (int a = 0; a < A; a++) xi[a] = x[i + (i + a < nx ? a : 0)];
        for (int j = 0; j < ny;) {
            const int b = Q == 3 ? (A == 3 && ny - j >= 2 ? 2 : 1) : ny - j >= 3 ? 3 : ny - j;
            /* a full group writes its columns of out; a last one writes part, then those */
            int64_t *o = full ? out + (j * nx + i) * Q : part;
            const int ldo = full ? nx : A;
            const uint64_t *yj = y + j * stride;
            if (Q == 3)
                A == 6   ? tile512(xi, yj, 6, 1, 3, nw, stride, ldo, o)
                : b == 2 ? tile512(xi, yj, 3, 2, 3, nw, stride, ldo, o)
                         : tile512(xi, yj, 3, 1, 3, nw, stride, ldo, o);
            else
                b == 3   ? tile512(xi, yj, 4, 3, 2, nw, stride, ldo, o)
                : b == 2 ? tile512(xi, yj, 4, 2, 2, nw, stride, ldo, o)
                         : tile512(xi, yj, 4, 1, 2, nw, stride, ldo, o);
            for (int jj = 0; !full && jj < b; jj++)
                memcpy(out + ((j + jj) * nx + i) * Q, part + jj * A * Q,
                       (size_t)((nx - i) * Q) * sizeof *out);
            j += b;
        }
    }
}

static const struct {
    const char *name;
    popc_fn *fn;
    pairs_fn *pairs;
} popc_kernels[] = {{"avx512", popc_avx512, pairs_avx512},
                    {"avx2", popc_avx2, pairs_avx2},
                    {"scalar", popc_scalar, pairs_scalar}};
#define NKERNELS (int)(sizeof popc_kernels / sizeof popc_kernels[0])
static int popc_current = -1;

static int popc_supported(int i) {
    __builtin_cpu_init();
    switch (i) {
    case 0: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
    case 1: return __builtin_cpu_supports("avx2");
    default: return __builtin_cpu_supports("popcnt");
    }
}

const char *tg_epi_popc_select(const char *name) {
    for (int i = 0; i < NKERNELS; i++)
        if ((!name || !strcmp(name, popc_kernels[i].name)) && popc_supported(i)) {
            popc_current = i;
            return popc_kernels[i].name;
        }
    return NULL;
}

static int popc_index(void) {
    if (popc_current < 0) tg_epi_popc_select(NULL);
    return popc_current < 0 ? NKERNELS - 1 : popc_current;
}

void tg_epi_pair_counts(const uint64_t *const *x, int nx, const uint64_t *y, int ny, int Q,
                        int64_t nw, int64_t stride, int64_t *out) {
    popc_kernels[popc_index()].pairs(x, nx, y, ny, Q, nw, stride, out);
}

/* ---------------------------------------------------------------------------------------- */
/* The round */

/* popcount of one plane (or prefix) of nw words */
static int64_t count(popc_fn *pc, const uint64_t *p, int64_t nw) {
    uint64_t out[3];
    pc(p, p, p, NULL, nw, out);
    return (int64_t)out[0];
}

static const int pow3[TG_EPI_MAX_ORDER + 1] = {1, 3, 9, 27, 81};

/* E → table in place: along each SNP dimension, [E0, E1, EV] → [E0, E1, EV − E0 − E1]
 * (inlined and unrolled where k is a constant: the order-2 table stays in registers). */
static inline void e_to_table(int k, int64_t *e) {
#pragma GCC unroll 4
    for (int d = 0; d < k; d++) {
        const int stride = pow3[k - 1 - d];
#pragma GCC unroll 9
        for (int hi = 0; hi < pow3[k]; hi += 3 * stride)
#pragma GCC unroll 9
            for (int g = hi; g < hi + stride; g++) e[g + 2 * stride] -= e[g] + e[g + stride];
    }
}

/* Search state of one round. pre[c][j][x] is the AND of the planes x_0..x_j (x in base 3, a
 * digit 2 = the valid plane) of the current SNPs 0..j, for the levels j ≤ k − 2 that prefix the
 * innermost SNP. With complete data an AND with the valid plane changes nothing on real
 * samples, so such entries point at their parent, and the all-valid prefix is NULL (its
 * count is n_c; the counts against the innermost SNP are its marginals). */
struct round {
    struct tg_epi_round_arg a;
    const uint64_t *blk[TG_EPI_MAX_ORDER];
    const double *t;
    struct tg_epi_result *res;
    popc_fn *pc;
    pairs_fn *pairs;
    const uint64_t *pre[2][TG_EPI_MAX_ORDER - 1][27];
    uint64_t *store[2][TG_EPI_MAX_ORDER - 1]; /* room for the computed prefixes of each level */
    int64_t prepc[2][27];        /* complete data: popcount of each last-level prefix */
    int64_t *margin[2];          /* complete data: [s][2] counts of g0, g1 of the innermost block */
    /* complete data: pair[c][i][((s_i·nsnp_last + s)·2 + a)·2 + y], the count of plane a of
     * SNP s_i of level i AND plane y of SNP s of the innermost level (local indices): the
     * entries of a prefix with one SNP left (every other digit V), which innermost would
     * otherwise count again for every value of the SNPs left out */
    int32_t *pair[2][TG_EPI_MAX_ORDER - 1];
    int8_t single[27][2]; /* prefix x: its one non-V level and digit, or level −1 */
    int64_t S[TG_EPI_MAX_ORDER]; /* current global SNP indices */
};

static const uint64_t *plane(const struct round *r, int j, int c, int64_t s, int p) {
    return r->blk[j] + tg_epi_plane_offset(r->a.block, r->a.words, c, (int)(s - r->a.first[j]), p);
}

/* Pass mode: only combinations that pass, after the page cursor, counted in `passing`. */
static void keep_hit(struct round *r, const int64_t *r0, const int64_t *r1, double key) {
    struct tg_epi_hit h = {key, {-1, -1, -1, -1}};
    for (int i = 0; i < r->a.order; i++) h.snp[i] = (int32_t)r->S[i];
    if (r->a.pass) {
        if (!tg_epi_passes(&r->a, r0, r1, key)) return;
        if (r->a.has_after) {
            struct tg_epi_hit after = {r->a.after_key, {0}};
            memcpy(after.snp, r->a.after_snp, sizeof after.snp);
            if (tg_epi_hit_cmp(&h, &after) <= 0) return;
        }
        r->res->passing++;
    }
    tg_epi_keep(r->res->hit, &r->res->nhit, r->a.topk, &h);
}

/* tg_epi_keep's own rejection first, inline: most combinations end there */
static inline void insert_hit(struct round *r, const int64_t *r0, const int64_t *r1, double key) {
    const struct tg_epi_result *res = r->res;
    if (!r->a.pass && res->nhit == r->a.topk && key > res->hit[r->a.topk - 1].key) return;
    keep_hit(r, r0, r1, key);
}

/* The combinations of the current prefixes with every innermost SNP in [lo, hi): the prefixes
 * that need counting against a chunk of YCHUNK SNPs at a time (tg_epi_pair_counts), the others
 * from the pair tables and margins. Which prefixes need counting is the same in both classes. */
enum { YCHUNK = 48 };

static void innermost(struct round *r, int64_t lo, int64_t hi) {
    const int k = r->a.order, j = k - 1, np = pow3[k - 1], Q = r->a.complete ? 2 : 3;
    int row[27], nx = 0; /* prefix x: its rows in the counts, or −1 */
    for (int x = 0; x < np; x++)
        row[x] = r->pre[0][k - 2][x] && !(r->a.complete && r->single[x][0] >= 0) ? nx++ : -1;
    int64_t cnt[2][27 * YCHUNK * 3], e[2][81];
    for (int64_t y0 = lo; y0 < hi; y0 += YCHUNK) {
        const int ny = (int)(y0 + YCHUNK < hi ? YCHUNK : hi - y0);
        for (int c = 0; c < 2; c++) {
            const uint64_t *xs[27];
            for (int x = 0; x < np; x++)
                if (row[x] >= 0) xs[row[x]] = r->pre[c][k - 2][x];
            r->pairs(xs, nx, plane(r, j, c, y0, 0), ny, Q, r->a.words[c], 3 * r->a.words[c],
                     cnt[c]);
        }
        for (int y = 0; y < ny; y++) {
            const int64_t sl = (r->S[j] = y0 + y) - r->a.first[j];
            for (int c = 0; c < 2; c++) {
                for (int x = 0; x < np; x++) {
                    const int i = r->single[x][0];
                    int64_t *ex = e[c] + 3 * x;
                    if (row[x] >= 0) {
                        const int64_t *o = cnt[c] + (y * nx + row[x]) * Q;
                        ex[0] = o[0], ex[1] = o[1];
                        ex[2] = r->a.complete ? r->prepc[c][x] : o[2];
                    } else if (r->pre[c][k - 2][x]) { /* complete data, one SNP left */
                        const int64_t si = r->S[i] - r->a.first[i];
                        const int32_t *q =
                            r->pair[c][i] + ((si * r->a.nsnp[j] + sl) * 2 + r->single[x][1]) * 2;
                        ex[0] = q[0], ex[1] = q[1], ex[2] = r->prepc[c][x];
                    } else { /* complete data, every earlier SNP at V */
                        const int64_t *m = r->margin[c] + 2 * sl;
                        ex[0] = m[0], ex[1] = m[1], ex[2] = r->a.n[c];
                    }
                }
                e_to_table(k, e[c]);
            }
            r->res->evaluated++;
            insert_hit(r, e[0], e[1],
                       tg_epi_key((enum tg_epi_score)r->a.score, k, e[0], e[1], r->t));
        }
    }
}

/* Sets the prefixes of level j from those of level j − 1 and the planes of SNP S[j]. */
static void build_prefixes(struct round *r, int j) {
    const int64_t *words = r->a.words;
    for (int c = 0; c < 2; c++) {
        uint64_t *dst = r->store[c][j];
        for (int x = 0; x < pow3[j]; x++) {
            const uint64_t *parent = j ? r->pre[c][j - 1][x] : NULL;
            for (int y = 0; y < 3; y++) {
                const uint64_t *pl = plane(r, j, c, r->S[j], y), **out = &r->pre[c][j][3 * x + y];
                if (r->a.complete && y == 2)
                    *out = parent;
                else if (!parent)
                    *out = pl;
                else {
                    for (int64_t w = 0; w < words[c]; w++) dst[w] = parent[w] & pl[w];
                    *out = dst;
                    dst += words[c];
                }
            }
        }
        if (j == r->a.order - 2 && r->a.complete)
            for (int x = 0; x < pow3[j + 1]; x++) {
                const uint64_t *p = r->pre[c][j][x];
                r->prepc[c][x] = p ? count(r->pc, p, words[c]) : r->a.n[c];
            }
    }
}

static void level(struct round *r, int j) {
    const struct tg_epi_round_arg *a = &r->a;
    int64_t lo = a->first[j], hi = a->first[j] + a->nsnp[j];
    if (j && r->S[j - 1] + 1 > lo) lo = r->S[j - 1] + 1;
    if (!j && hi > a->first_end) hi = a->first_end;
    if (j == a->order - 1) {
        innermost(r, lo, hi);
        return;
    }
    for (r->S[j] = lo; r->S[j] < hi; r->S[j]++) {
        build_prefixes(r, j);
        level(r, j + 1);
    }
}

/* The keys of np order-2 tables (t[c] + 9·p), score a constant at each call. */
static inline __attribute__((always_inline)) void keys2(enum tg_epi_score score, int np,
                                                        int64_t *const t[2], const double *lt,
                                                        double *key) {
    for (int p = 0; p < np; p++) key[p] = key_of(score, 2, t[0] + 9 * p, t[1] + 9 * p, lt);
}

/* Order 2: the pair counts of two x SNPs against a chunk of y SNPs that stays in cache (in both
 * classes, 48 SNPs of 16,000 samples are 300 KB), then each pair's table, key and selection.
 * With complete data only the P = 2 planes are counted: a SNP's own plane counts give the cells
 * of genotype 2. */
static void round2(struct round *r) {
    const struct tg_epi_round_arg *a = &r->a;
    const int P = a->complete ? 2 : 3;
    const int64_t lo0 = a->first[0], lo1 = a->first[1], hi1 = lo1 + a->nsnp[1],
                  hi0 = lo0 + a->nsnp[0] < a->first_end ? lo0 + a->nsnp[0] : a->first_end,
                  nm = a->nsnp[0] + a->nsnp[1];
    int64_t *marg = NULL; /* complete: [c][x SNPs, then y SNPs][g0, g1] plane counts */
    if (a->complete) {
        marg = tg_malloc_n(4, nm, sizeof *marg, NULL);
        STARPU_ASSERT_MSG(marg, "epistasis round: out of memory for %lld counts",
                          (long long)(4 * nm));
        for (int c = 0; c < 2; c++)
            for (int64_t s = 0; s < 2 * nm; s++) {
                const int side = s / 2 >= a->nsnp[0];
                const int64_t g = (side ? lo1 - a->nsnp[0] : lo0) + s / 2;
                marg[2 * c * nm + s] = count(r->pc, plane(r, side, c, g, (int)(s % 2)),
                                             a->words[c]);
            }
    }
    /* a group (two x SNPs against a run of y SNPs) in three passes over its pairs: the tables
     * (in place over the counts with missing calls), the keys, the selection. The key pass has
     * no stores but the key and no branch, so the core overlaps the pairs' lookups, where
     * interleaved with the tables' stores and the selection each pair waited on its own (see
     * docs/DESIGN-NOTES.md) */
    int64_t cnt[2][2 * YCHUNK * 9], tab[2][2 * YCHUNK * 9];
    double key[2 * YCHUNK];
    uint64_t evaluated = 0;
    for (int64_t y0 = lo1; y0 < hi1; y0 += YCHUNK) {
        const int64_t y1 = y0 + YCHUNK < hi1 ? y0 + YCHUNK : hi1;
        for (int64_t x = lo0; x < hi0 && x + 1 < y1; x += 2) {
            const int nx = hi0 - x >= 2 ? 2 : 1;
            const int64_t ys = x + 1 > y0 ? x + 1 : y0;
            const int ny = (int)(y1 - ys), np = nx * ny;
            int64_t *t[2] = {a->complete ? tab[0] : cnt[0], a->complete ? tab[1] : cnt[1]};
            for (int c = 0; c < 2; c++) {
                const uint64_t *xs[6];
                for (int z = 0; z < nx * P; z++) xs[z] = plane(r, 0, c, x + z / P, z % P);
                r->pairs(xs, nx * P, plane(r, 1, c, ys, 0), ny, P, a->words[c], 3 * a->words[c],
                         cnt[c]);
                /* pair p = j·nx + i (x SNP x + i, y SNP ys + j): E(plane u of s0, plane v of
                 * s1) = e[u·P + v]; with complete data the entries with V are the SNPs' own
                 * plane counts and n_c */
                for (int j = 0; j < ny; j++)
                    for (int i = 0; i < nx; i++) {
                        const int p = j * nx + i;
                        int64_t *q = t[c] + 9 * p;
                        if (a->complete) {
                            const int64_t *e = cnt[c] + 4 * p,
                                          *mx = marg + 2 * (c * nm + x + i - lo0),
                                          *my = marg + 2 * (c * nm + a->nsnp[0] + ys + j - lo1);
                            q[0] = e[0], q[1] = e[1], q[2] = mx[0];
                            q[3] = e[2], q[4] = e[3], q[5] = mx[1];
                            q[6] = my[0], q[7] = my[1], q[8] = a->n[c];
                        }
                        e_to_table(2, q);
                    }
            }
            switch (a->score) {
            case TG_EPI_K2: keys2(TG_EPI_K2, np, t, r->t, key); break;
            case TG_EPI_MI: keys2(TG_EPI_MI, np, t, r->t, key); break;
            default: keys2(TG_EPI_CHI2, np, t, r->t, key); break;
            }
            for (int j = 0; j < ny; j++)
                for (int i = 0; i < nx; i++) {
                    const int p = j * nx + i;
                    if (i > j && ys == x + 1) continue; /* SNP x + 1 with itself */
                    evaluated++;
                    r->S[0] = x + i, r->S[1] = ys + j;
                    insert_hit(r, t[0] + 9 * p, t[1] + 9 * p, key[p]);
                }
        }
    }
    r->res->evaluated += evaluated;
    free(marg);
}

void tg_epi_round_cpu(void *buffers[], void *cl_arg) {
    struct round r;
    memset(&r, 0, sizeof r);
    memcpy(&r.a, cl_arg, sizeof r.a); /* passed as is (STARPU_CL_ARGS), not packed */
    r.a.complete = tg_epi_round_complete(&r.a);
    const int k = r.a.order, last = k - 1;
    for (int i = 0; i < k; i++) r.blk[i] = (const uint64_t *)STARPU_VECTOR_GET_PTR(buffers[i]);
    r.t = (const double *)STARPU_VECTOR_GET_PTR(buffers[k]);
    r.res = (struct tg_epi_result *)STARPU_VECTOR_GET_PTR(buffers[k + 1]);
    r.res->evaluated = 0;
    r.res->passing = 0;
    r.res->nhit = 0;
    r.pc = popc_kernels[popc_index()].fn;
    r.pairs = popc_kernels[popc_index()].pairs;
    if (k == 2) {
        round2(&r);
        return;
    }
    /* scratch: level j holds at most 3^(j+1) computed prefixes per class */
    size_t need = 0;
    for (int c = 0; c < 2; c++)
        for (int j = 1; j <= k - 2; j++) need += (size_t)pow3[j + 1] * (size_t)r.a.words[c];
    need += 2 * 2 * (size_t)r.a.block; /* margins */
    uint64_t *scratch = tg_malloc_n((int64_t)need, 1, sizeof *scratch, NULL);
    STARPU_ASSERT_MSG(scratch, "epistasis round: out of memory for %zu words of scratch", need);
    uint64_t *at = scratch;
    for (int c = 0; c < 2; c++) {
        for (int j = 1; j <= k - 2; j++) {
            r.store[c][j] = at;
            at += (size_t)pow3[j + 1] * (size_t)r.a.words[c];
        }
        r.margin[c] = (int64_t *)at;
        at += 2 * (size_t)r.a.block;
        if (r.a.complete)
            for (int s = 0; s < 2 * r.a.nsnp[last]; s++)
                r.margin[c][s] =
                    count(r.pc, plane(&r, last, c, r.a.first[last] + s / 2, s % 2), r.a.words[c]);
    }
    /* the prefixes with one SNP left and, with complete data and order ≥ 3, their pair counts */
    const int np = pow3[k - 1];
    int32_t *pairs = NULL;
    for (int x = 0; x < np; x++) {
        int n = 0;
        r.single[x][0] = -1;
        for (int i = 0, rest = x; i < k - 1; i++) {
            int d = rest / pow3[k - 2 - i];
            rest %= pow3[k - 2 - i];
            if (d != 2) n++, r.single[x][0] = (int8_t)i, r.single[x][1] = (int8_t)d;
        }
        if (n != 1 || k < 3) r.single[x][0] = -1;
    }
    if (r.a.complete && k >= 3) {
        size_t per = 0;
        for (int i = 0; i < k - 1; i++) per += (size_t)r.a.nsnp[i] * (size_t)r.a.nsnp[last] * 4;
        pairs = tg_malloc_n(2, (int64_t)per, sizeof *pairs, NULL);
        STARPU_ASSERT_MSG(pairs, "epistasis round: out of memory for %zu pair counts", 2 * per);
        int32_t *q = pairs;
        for (int c = 0; c < 2; c++)
            for (int i = 0; i < k - 1; i++) {
                /* levels on one block (most rounds) share their table */
                int same = 0;
                while (same < i && r.a.first[same] != r.a.first[i]) same++;
                if (same < i) {
                    r.pair[c][i] = r.pair[c][same];
                    continue;
                }
                r.pair[c][i] = q;
                for (int si = 0; si < r.a.nsnp[i]; si++)
                    for (int s = 0; s < r.a.nsnp[last]; s++)
                        for (int a = 0; a < 2; a++, q += 2) {
                            uint64_t out[3];
                            r.pc(plane(&r, i, c, r.a.first[i] + si, a),
                                 plane(&r, last, c, r.a.first[last] + s, 0),
                                 plane(&r, last, c, r.a.first[last] + s, 1), NULL, r.a.words[c],
                                 out);
                            q[0] = (int32_t)out[0], q[1] = (int32_t)out[1];
                        }
            }
    }
    level(&r, 0);
    free(pairs);
    free(scratch);
}

void tg_epi_table(int order, int block, const int64_t words[2], const uint64_t *const blk[],
                  const int32_t s[], int64_t r0[], int64_t r1[]) {
    int64_t *r[2] = {r0, r1};
    for (int c = 0; c < 2; c++)
        for (int g = 0; g < pow3[order]; g++) {
            /* E with x_i = digit i of g (2 = valid plane) */
            const uint64_t *pl[TG_EPI_MAX_ORDER];
            for (int i = 0, rest = g; i < order; i++) {
                int x = rest / pow3[order - 1 - i];
                rest %= pow3[order - 1 - i];
                pl[i] = blk[i] + tg_epi_plane_offset(block, words, c, s[i], x);
            }
            int64_t e = 0;
            for (int64_t w = 0; w < words[c]; w++) {
                uint64_t v = ~(uint64_t)0;
                for (int i = 0; i < order; i++) v &= pl[i][w];
                e += __builtin_popcountll(v);
            }
            r[c][g] = e;
        }
    e_to_table(order, r0);
    e_to_table(order, r1);
}
