/* The CPU's 5codes products on AMX, Intel's tile matrix units (Sapphire Rapids and later):
 * D·A as integer products, A cut into exact 8-bit slices (the scheme of the CUDA kernel's INT8
 * path, codelets/fivecodes_cuda.cu: 8 slices of 7 bits a column, a power-of-two scale per
 * column from max_t |A_tc| in the task argument, and its bound: |P_c − (D·A)_c| ≤
 * 2^(−55)·max_t |A_tc|·Σ_t d_t plus the rounding of the slices' eight additions). One TDPBSUD
 * multiplies 16 × 64 signed slice bytes by 64 × 16 unsigned digits: 16,384 multiply-adds, where
 * the lookup kernel adds one table entry.
 *
 * Layout. A part's table rows go by chunks of FA_G groups (5·FA_G table rows); step d of a
 * chunk is digit d of its groups, so that a step's K index j is group j of the chunk:
 *  - slices (A operand, per chunk, step and pair of columns: a tile of 16 slice rows × 64 bytes):
 *    row 8·(c % 2) + s holds slice s of column c at K index j (table row 5·(FA_G·ch + j) + d);
 *  - digits (B operand, per 64 output rows, chunk and step): four tiles, tile q's row kk
 *    holding, for its 16 output rows n, the digits of groups 4kk .. 4kk + 3 (byte 4n + i);
 *    tile q's column n is output row 16·(n / 4) + 4q + n % 4 of the 64, the order in which
 *    byte unpacking interleaves four groups' rows;
 *  - accumulators (C, int32): 16 slice rows × 16 output rows a tile, five tiles (ten columns)
 *    per tile of rows, kept in memory for FA_R rows while the chunks pass.
 * The digits of the next 64 rows are made between the tile products of the current ones, in
 * a second buffer, so that the vector units and the tile unit work at once. Columns go ten at
 * a time (five accumulator tiles of the eight); with more, the digits of a pass's rows are
 * kept for the later slices of columns, which read them from L2.
 * Integer sums are exact: a term is at most 2·64, a part at most 2^24 table rows. */
#include "codelets/fivecodes_amx.h"

#include <cpuid.h>
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/runtime.h"

#define FA_G 64    /* groups a chunk: 64 K bytes a step */
#define FA_R 2048  /* output rows whose accumulators stay in L2 (640 KiB a slice of columns) */
#define FA_R_SLICES 512 /* the same with several slices (1.1 MiB at seven, k = 64) */
#define FA_TB 1024 /* bytes of a tile: 16 rows of 64 */
#define FA_MAXNT (1 << 24) /* table rows a part may have (int32 sums) */
#define FA_SLICE_TILES 5   /* accumulator tiles of a slice of columns: two columns each */
#define FA_NSLICES ((TG_FC_MAXK + TG_FC_AMX_MAXK - 1) / TG_FC_AMX_MAXK)

#define FA_TARGET                                                                                  \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,amx-tile,amx-int8")))

/* ---- availability: the CPU's, the kernel's (tile data is granted per process), the user's */

static int fa_on;
static _Atomic int fa_use = 1;
static pthread_once_t fa_once = PTHREAD_ONCE_INIT;

static void fa_detect(void) {
    unsigned a, b, c, d;
    const char *env = getenv("TILEGWAS_AMX");
    if (env && !strcmp(env, "0")) return;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
    /* AMX-TILE, AMX-INT8 (edx 24, 25), AVX512-VBMI (ecx 1) for the digits, DQ for the slices;
     * AVX-512 state enabled by the OS (gcc's check reads XCR0) */
    if (!(d >> 24 & 1) || !(d >> 25 & 1) || !(c >> 1 & 1)) return;
    if (!__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512dq")) return;
    const long ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18;
    fa_on = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

int tg_fc_amx_available(void) {
    pthread_once(&fa_once, fa_detect);
    return fa_on && fa_use;
}

int tg_fc_amx_use(int on) { return atomic_exchange(&fa_use, on != 0); }

int tg_fc_amx_fits(size_t nt) { return nt <= FA_MAXNT; }

/* ---- the slices of a part's columns, shared by the product's blocks: each block's task
 * builds the chunks it reaches first and waits for those another is building, so that the
 * blocks that start together share the work */

enum { FA_TODO, FA_BUILDING, FA_BUILT };

typedef struct {
    uint64_t product; /* 0: never used */
    int c0, users;
    unsigned long age;
    size_t chunks, cap, scap;
    int8_t *q;
    _Atomic int *state;    /* per chunk */
    int e[TG_FC_AMX_MAXK]; /* column scale exponents: max |A| < 2^(e − 1) */
} fa_slices;

static fa_slices fa_cache[8];
static unsigned long fa_clock;
static pthread_mutex_t fa_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t fa_chunks(size_t nt) { return (nt + 5 * FA_G - 1) / (5 * FA_G); }
static int fa_tiles(int k) { return (k + 1) / 2; }

/* Sizes @p S for the part and marks every chunk to build; 0 when out of memory. */
static int fa_reset(fa_slices *S, const struct tg_fivecodes_arg *a, int c0, size_t nt) {
    const size_t chunks = fa_chunks(nt), bytes = chunks * 5 * (size_t)fa_tiles(a->k) * FA_TB;
    if (S->cap < bytes) {
        free(S->q);
        S->q = aligned_alloc(64, (bytes + 63) / 64 * 64);
        S->cap = S->q ? bytes : 0;
    }
    if (S->scap < chunks) {
        free(S->state);
        S->state = malloc(chunks * sizeof *S->state);
        S->scap = S->state ? chunks : 0;
    }
    if (!S->q || !S->state) return 0;
    for (size_t ch = 0; ch < chunks; ch++) atomic_init(&S->state[ch], FA_TODO);
    for (int c = 0; c < a->k; c++) S->e[c] = a->amax[c] > 0 ? ilogb(a->amax[c]) + 2 : 0;
    S->product = a->product;
    S->c0 = c0;
    S->chunks = chunks;
    S->age = ++fa_clock;
    return 1;
}

/* The part's slices: the cache's entry for it, or a free entry made its own (the least
 * recently used), or @p own when every entry is in use. */
static fa_slices *fa_acquire(const struct tg_fivecodes_arg *a, int c0, size_t nt,
                             fa_slices *own) {
    pthread_mutex_lock(&fa_lock);
    fa_slices *S = NULL, *free_one = NULL;
    for (int i = 0; i < 8 && !S; i++) {
        fa_slices *e = &fa_cache[i];
        if (e->product == a->product && e->c0 == c0) S = e;
        else if (!e->users && (!free_one || e->age < free_one->age)) free_one = e;
    }
    if (!S && free_one && fa_reset(free_one, a, c0, nt)) S = free_one;
    if (S) S->users++;
    pthread_mutex_unlock(&fa_lock);
    if (S) return S;
    if (!fa_reset(own, a, c0, nt)) STARPU_ABORT_MSG("out of memory in the AMX products");
    return own;
}

static void fa_release(fa_slices *S, fa_slices *own) {
    if (S == own) {
        free(own->q);
        free(own->state);
        return;
    }
    pthread_mutex_lock(&fa_lock);
    S->users--;
    pthread_mutex_unlock(&fa_lock);
}

/* A_tc = a_t·in_tc as a double (a_t = w_t for Z·Λ, 1 for Zᵀ·Λ̃) */
static double fa_a(const struct tg_fivecodes_arg *a, const void *in, size_t ldin,
                   const double *coef, size_t t, int c) {
    size_t e = t + (size_t)c * ldin;
    double x = a->prec == TG_FP64 ? ((const double *)in)[e] : (double)((const float *)in)[e];
    return a->trans ? x : coef[2 * t] * x;
}

/* Chunk ch's slices: for each step d and column c, the 64 values A_tc (t = 5·(FA_G·ch + j)
 * + d, 0 from nt on) scaled by 2^(−e_c), then eight times q = rint(128·r), r = 128·r − q
 * (exact), as rows 8·(c % 2) + s of the pair's tile; an odd k's last eight rows 0. */
FA_TARGET static void fa_build_chunk(const fa_slices *S, size_t ch,
                                     const struct tg_fivecodes_arg *a, const void *in, size_t nt,
                                     size_t ldin, const double *coef) {
    const int k = a->k, nT = fa_tiles(k);
    double r[FA_G] __attribute__((aligned(64)));
    for (int d = 0; d < 5; d++) {
        int8_t *tiles = S->q + (ch * 5 + (size_t)d) * (size_t)nT * FA_TB;
        if (k % 2) memset(tiles + (size_t)(nT - 1) * FA_TB + 8 * 64, 0, 8 * 64);
        for (int c = 0; c < k; c++) {
            for (int j = 0; j < FA_G; j++) {
                const size_t t = 5 * (FA_G * ch + (size_t)j) + (size_t)d;
                r[j] = t < nt ? fa_a(a, in, ldin, coef, t, c) : 0;
            }
            int8_t *rows = tiles + (size_t)(c / 2) * FA_TB + (size_t)(8 * (c % 2)) * 64;
            const __m512d scale = _mm512_set1_pd(-S->e[c]), b128 = _mm512_set1_pd(128);
            for (int v = 0; v < FA_G / 8; v++) {
                __m512d x = _mm512_scalef_pd(_mm512_load_pd(r + 8 * v), scale);
                for (int sl = 0; sl < 8; sl++) {
                    const __m512d y = _mm512_mul_pd(x, b128),
                                  q = _mm512_roundscale_pd(y, _MM_FROUND_TO_NEAREST_INT |
                                                                  _MM_FROUND_NO_EXC);
                    x = _mm512_sub_pd(y, q);
                    _mm_storel_epi64((__m128i *)(rows + 64 * sl + 8 * v),
                                     _mm512_cvtepi64_epi8(_mm512_cvtpd_epi64(q)));
                }
            }
        }
    }
}

/* Waits until chunk ch's slices are built, building them if no one has started. */
FA_TARGET static void fa_chunk_ready(fa_slices *S, size_t ch, const struct tg_fivecodes_arg *a,
                                     const void *in, size_t nt, size_t ldin, const double *coef) {
    int todo = FA_TODO;
    if (atomic_load_explicit(&S->state[ch], memory_order_acquire) == FA_BUILT) return;
    if (atomic_compare_exchange_strong(&S->state[ch], &todo, FA_BUILDING)) {
        fa_build_chunk(S, ch, a, in, nt, ldin, coef);
        atomic_store_explicit(&S->state[ch], FA_BUILT, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&S->state[ch], memory_order_acquire) != FA_BUILT) _mm_pause();
}

/* ---- digits and tiles */

/* Tile instructions with the memory they read or write made known to the compiler (the
 * headers' loads name none: the digits written just before would be dead stores to it). */
#define FA_LOAD(t, p)                                                                             \
    __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #t ::"r"(p), "r"((long)64) : "memory")
#define FA_STORE(t, p)                                                                            \
    __asm__ volatile("tilestored %%tmm" #t ", (%0,%1,1)" ::"r"(p), "r"((long)64) : "memory")
#define FA_DP(c, a, b) __asm__ volatile("tdpbsud %%tmm" #b ", %%tmm" #a ", %%tmm" #c ::)

struct fa_cfg {
    uint8_t palette, start, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

/* Digits 0..3 of x < 81 (tables of 128 bytes, two vectors each), for codes reduced mod 81 */
typedef struct {
    __m512i lo[4], hi[4];
} fa_digit_tables;

FA_TARGET static void fa_digit_tables_make(fa_digit_tables *T) {
    uint8_t b[128] __attribute__((aligned(64)));
    for (int s = 0, p = 1; s < 4; s++, p *= 3) {
        for (int x = 0; x < 128; x++) b[x] = (uint8_t)(x < 81 ? x / p % 3 : 0);
        T->lo[s] = _mm512_load_si512(b);
        T->hi[s] = _mm512_load_si512(b + 64);
    }
}

/* The five digit vectors of 64 codes (< 243): digit 4 from the two comparisons, the others
 * looked up at code mod 81 */
FA_TARGET static inline void fa_digits(const fa_digit_tables *T, __m512i v, __m512i *d) {
    const __m512i n81 = _mm512_set1_epi8(81), one = _mm512_set1_epi8(1);
    const __mmask64 k1 = _mm512_cmpge_epu8_mask(v, n81),
                    k2 = _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8((char)162));
    v = _mm512_mask_sub_epi8(v, k1, v, n81);
    v = _mm512_mask_sub_epi8(v, k2, v, n81);
#pragma GCC unroll 4
    for (int s = 0; s < 4; s++) d[s] = _mm512_permutex2var_epi8(T->lo[s], v, T->hi[s]);
    d[4] = _mm512_mask_add_epi8(_mm512_maskz_mov_epi8(k1, one), k2,
                                _mm512_maskz_mov_epi8(k1, one), one);
}

/* The digit tiles of 64 output rows (codes at g·ldc, rows contiguous) over one chunk's FA_G
 * groups, their rows kk0 .. kk0 + 3 (groups 4·kk0 ..): B[(q·5 + d)·FA_TB + kk·64 + 4n + i] (see
 * the layout above). The same rows' codes of the next chunk (@p next, NULL: none) are fetched
 * into L2 meanwhile: a chunk's lines, read 64 rows at a time from 64 groups, are more streams
 * than the prefetchers follow. */
FA_TARGET static void fa_decode(const fa_digit_tables *T, const uint8_t *codes, size_t ldc,
                                const uint8_t *next, int kk0, uint8_t *B) {
    for (int kk = kk0; kk < kk0 + 4; kk++) {
        const uint8_t *c = codes + (size_t)(4 * kk) * ldc;
#pragma GCC unroll 4
        for (int i = 0; next && i < 4; i++)
            _mm_prefetch((const char *)next + (size_t)(4 * kk + i) * ldc, _MM_HINT_T1);
        const __m512i g0 = _mm512_loadu_si512(c), g1 = _mm512_loadu_si512(c + ldc),
                      g2 = _mm512_loadu_si512(c + 2 * ldc), g3 = _mm512_loadu_si512(c + 3 * ldc);
        const __m512i t0 = _mm512_unpacklo_epi8(g0, g1), t1 = _mm512_unpackhi_epi8(g0, g1),
                      t2 = _mm512_unpacklo_epi8(g2, g3), t3 = _mm512_unpackhi_epi8(g2, g3);
        const __m512i u[4] = {_mm512_unpacklo_epi16(t0, t2), _mm512_unpackhi_epi16(t0, t2),
                              _mm512_unpacklo_epi16(t1, t3), _mm512_unpackhi_epi16(t1, t3)};
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            __m512i d[5];
            fa_digits(T, u[q], d);
#pragma GCC unroll 5
            for (int s = 0; s < 5; s++)
                _mm512_store_si512(B + (size_t)(q * 5 + s) * FA_TB + (size_t)kk * 64, d[s]);
        }
    }
}

/* Where the codes of 64 rows from @p rr over a chunk (groups g0 .. g0 + ng − 1) are read: in
 * place, or from @p edge, zero-filled, when rows or groups run out */
typedef struct {
    const uint8_t *codes, *next;
    size_t ld;
} fa_src;

static void fa_rows_src(const uint8_t *codes, size_t ldc, size_t g0, size_t ng, size_t rows,
                        size_t rr, int more, uint8_t *edge, fa_src *src) {
    const size_t n = rows - rr < 64 ? rows - rr : 64;
    src->codes = codes + g0 * ldc + rr;
    src->next = more && n == 64 ? src->codes + FA_G * ldc : NULL;
    src->ld = ldc;
    if (n < 64 || ng < FA_G) {
        memset(edge, 0, FA_G * 64);
        for (size_t g = 0; g < ng; g++) memcpy(edge + g * 64, src->codes + g * ldc, n);
        src->codes = edge;
        src->ld = 64;
    }
}

/* C_q += Σ_d A(ch, d)·B_q,d for the nT accumulator tiles of tile q (tmm0..4), the digits in
 * tmm5, the slices alternating in tmm6 and tmm7 */
#define FA_STEP(I, R)                                                                              \
    if (nT > I) {                                                                                  \
        FA_LOAD(R, qs + (size_t)I * FA_TB);                                                        \
        FA_DP(I, R, 5);                                                                            \
    }
FA_TARGET static void fa_tile_rows(int32_t *C, const uint8_t *B, const int8_t *q, int nT) {
#define FA_C(op)                                                                                   \
    op(0, C);                                                                                      \
    if (nT > 1) op(1, C + 256);                                                                    \
    if (nT > 2) op(2, C + 512);                                                                    \
    if (nT > 3) op(3, C + 768);                                                                    \
    if (nT > 4) op(4, C + 1024);
    FA_C(FA_LOAD)
    for (int d = 0; d < 5; d++) {
        const int8_t *qs = q + (size_t)d * nT * FA_TB;
        FA_LOAD(5, B + (size_t)d * FA_TB);
        FA_STEP(0, 6)
        FA_STEP(1, 7)
        FA_STEP(2, 6)
        FA_STEP(3, 7)
        FA_STEP(4, 6)
    }
    FA_C(FA_STORE)
#undef FA_C
}
#undef FA_STEP

/* The scaled sums of rows [0, nr) of a slice of k columns into P (row-major, ldp a row):
 * 2^e_c·Σ_s 2^(−7(s+1))·C_s, the slices' sum scaled by powers of two (exact), then one product
 * by 2^e_c, exact where it is a normal number (else scalbn, which rounds once as well) */
static void fa_scale(const int32_t *C, const fa_slices *S, int k, size_t nr, double *P,
                     size_t ldp) {
    double pe[TG_FC_AMX_MAXK], g[8];
    for (int col = 0; col < k; col++)
        pe[col] = S->e[col] >= -1021 && S->e[col] <= 1023 ? scalbn(1.0, S->e[col]) : 0;
    for (int s = 0; s < 8; s++) g[s] = scalbn(1.0, -7 * (s + 1));
    for (size_t sb = 0; sb < (nr + 63) / 64; sb++)
        for (int q = 0; q < 4; q++)
            for (int n = 0; n < 16; n++) {
                const size_t r = sb * 64 + (size_t)(16 * (n / 4) + 4 * q + n % 4);
                if (r >= nr) continue;
                const int32_t *c = C + (sb * 4 + (size_t)q) * FA_SLICE_TILES * 256 + n;
                for (int col = 0; col < k; col++) {
                    const int32_t *x = c + (size_t)(col / 2) * 256 + (size_t)(8 * (col % 2)) * 16;
                    double v = 0;
                    for (int s = 0; s < 8; s++) v += (double)x[16 * s] * g[s];
                    P[r * ldp + (size_t)col] = pe[col] ? v * pe[col] : scalbn(v, S->e[col]);
                }
            }
}

/* One tile configuration for every tile: 16 rows of 64 bytes */
FA_TARGET static void fa_configure(void) {
    struct fa_cfg cfg = {.palette = 1};
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    _tile_loadconfig(&cfg);
}

FA_TARGET void tg_fc_amx_product(const struct tg_fivecodes_arg *a, const uint8_t *codes,
                                 size_t rows, size_t groups, size_t ldc, const void *in, size_t nt,
                                 size_t ldin, const double *coef, double *P) {
    STARPU_ASSERT(a->k >= 1 && a->k <= TG_FC_MAXK && nt <= FA_MAXNT);
    /* the columns in slices of TG_FC_AMX_MAXK, each with its slices of Λ */
    const int ns = (a->k + TG_FC_AMX_MAXK - 1) / TG_FC_AMX_MAXK;
    const size_t es = tg_prec_size(a->prec);
    struct tg_fivecodes_arg sa[FA_NSLICES];
    const void *sin[FA_NSLICES];
    fa_slices own[FA_NSLICES] = {0}, *S[FA_NSLICES];
    for (int sl = 0; sl < ns; sl++) {
        const int c0 = sl * TG_FC_AMX_MAXK;
        sa[sl] = *a;
        sa[sl].k = a->k - c0 < TG_FC_AMX_MAXK ? a->k - c0 : TG_FC_AMX_MAXK;
        memcpy(sa[sl].amax, a->amax + c0, (size_t)sa[sl].k * sizeof *a->amax);
        sin[sl] = (const char *)in + (size_t)c0 * ldin * es;
        S[sl] = fa_acquire(&sa[sl], c0, nt, &own[sl]);
    }
    /* rows a pass: the accumulators of every slice in L2 */
    const size_t R = ns > 1 ? FA_R_SLICES : FA_R;
    const size_t chunks = fa_chunks(nt), sbr = R / 64, cs = sbr * 4 * FA_SLICE_TILES * 256;
    /* the accumulators; the digits of 64 rows, two buffers in turn for one slice, else those
     * of every 64 rows of the pass (made for the first slice, read by the others); a staging
     * copy of the codes for the edges (rows past the block or groups past the part read as
     * code 0) */
    const size_t nb = ns > 1 ? sbr : 2;
    int32_t *C = aligned_alloc(64, (size_t)ns * cs * sizeof *C);
    uint8_t *B = aligned_alloc(64, nb * 20 * FA_TB + FA_G * 64);
    STARPU_ASSERT_MSG(C && B, "out of memory in the AMX products");
    uint8_t *edge = B + nb * 20 * FA_TB;
    fa_src src;
    fa_digit_tables T;
    fa_digit_tables_make(&T);
    fa_configure();
    for (size_t r0 = 0; r0 < rows; r0 += R) {
        const size_t nr = rows - r0 < R ? rows - r0 : R, nsb = (nr + 63) / 64;
        for (int sl = 0; sl < ns; sl++)
            memset(C + (size_t)sl * cs, 0, nsb * 4 * FA_SLICE_TILES * FA_TB);
        for (size_t ch = 0; ch < chunks; ch++) {
            const size_t g0 = ch * FA_G, ng = groups - g0 < FA_G ? groups - g0 : FA_G;
            for (int sl = 0; sl < ns && r0 == 0; sl++)
                fa_chunk_ready(S[sl], ch, &sa[sl], sin[sl], nt, ldin, coef);
            /* the first slice: the digits of the next 64 rows made a quarter at a time between
             * the tile products of these, so that the vector units work while the tile unit
             * does */
            const int nT0 = fa_tiles(sa[0].k);
            const int8_t *q0 = S[0]->q + ch * 5 * (size_t)nT0 * FA_TB;
            fa_rows_src(codes, ldc, g0, ng, rows, r0, ch + 1 < chunks, edge, &src);
            for (int kk0 = 0; kk0 < FA_G / 4; kk0 += 4)
                fa_decode(&T, src.codes, src.ld, src.next, kk0, B);
            for (size_t sb = 0; sb < nsb; sb++) {
                uint8_t *cur = B + sb % nb * 20 * FA_TB, *nxt = B + (sb + 1) % nb * 20 * FA_TB;
                if (sb + 1 < nsb)
                    fa_rows_src(codes, ldc, g0, ng, rows, r0 + 64 * (sb + 1), ch + 1 < chunks,
                                edge, &src);
                for (int qt = 0; qt < 4; qt++) {
                    fa_tile_rows(C + (sb * 4 + (size_t)qt) * FA_SLICE_TILES * 256,
                                 cur + (size_t)qt * 5 * FA_TB, q0, nT0);
                    if (sb + 1 < nsb) fa_decode(&T, src.codes, src.ld, src.next, 4 * qt, nxt);
                }
            }
            for (int sl = 1; sl < ns; sl++) {
                const int nTs = fa_tiles(sa[sl].k);
                const int8_t *qs = S[sl]->q + ch * 5 * (size_t)nTs * FA_TB;
                for (size_t sb = 0; sb < nsb; sb++)
                    for (int qt = 0; qt < 4; qt++)
                        fa_tile_rows(C + sl * cs + (sb * 4 + (size_t)qt) * FA_SLICE_TILES * 256,
                                     B + sb * 20 * FA_TB + (size_t)qt * 5 * FA_TB, qs, nTs);
            }
        }
        for (int sl = 0; sl < ns; sl++)
            fa_scale(C + (size_t)sl * cs, S[sl], sa[sl].k, nr,
                     P + r0 * (size_t)a->k + (size_t)sl * TG_FC_AMX_MAXK, (size_t)a->k);
    }
    _tile_release();
    free(C);
    free(B);
    for (int sl = 0; sl < ns; sl++) fa_release(S[sl], &own[sl]);
}
