/* The 5codes encoder (geno/codes5.h): blocks of this rank's samples with SNPs grouped by five
 * and blocks of SNPs with samples grouped by five, both filled from each chunk of the one pass;
 * the missing calls listed per block by output row. The SNPs the centring excludes (monomorphic
 * or all missing: tg_geno_polymorphic) are all zeros, without codes or corrections. */
#include "geno/codes5.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "base/mem.h"
#include "base/parallel.h"
#include "codelets/fivecodes.h"
#include "geno/pass.h"
#include "geno/source.h"
#include "runtime/runtime.h"

/* A growable list of int32 whose element 0 is the number of (r, t) pairs after it: the missing
 * calls of one chunk of SNPs, as the preparation finds them. */
typedef struct {
    int32_t *a;
    size_t len, cap;
} miss_list;

/* The products' default block counts: the rationale is algo/snpmm.c's header. */
enum {
    ROW_BLOCKS = 64,
    SNP_BLOCKS = 48,
    ROW_BLOCKS_PER_CPU = 4,
    SNP_BLOCKS_PER_CPU = 3,
    ROW_BLOCKS_PER_GPU = 8,
    SNP_BLOCKS_PER_GPU = 6
};

/* The default block counts of @p n samples × @p m SNPs for this rank's workers. With GPUs, so
 * many a GPU, the blocks as large as that makes them (*large 1), unless five of the largest
 * blocks' codes (1.5 times the mean: blocks_plan) would take over half of a GPU's memory
 * (tg_cli_gpu_memory's rule for the data StarPU holds at once). Otherwise ROW_BLOCKS and
 * SNP_BLOCKS with 16 CPU workers or more, or before the runtime starts, and so many a worker
 * with fewer. */
static void default_blocks(int64_t n, int64_t m, int64_t *rows, int64_t *snps, int *large) {
    const int cpus = tg_runtime_ncpu(), gpus = tg_runtime_ngpu();
    const int few = gpus == 0 && cpus > 0 && cpus * ROW_BLOCKS_PER_CPU < ROW_BLOCKS;
    *large = gpus > 0;
    *rows = *large ? gpus * ROW_BLOCKS_PER_GPU : few ? cpus * ROW_BLOCKS_PER_CPU : ROW_BLOCKS;
    *snps = *large ? gpus * SNP_BLOCKS_PER_GPU : few ? cpus * SNP_BLOCKS_PER_CPU : SNP_BLOCKS;
    const double mem = *large ? (double)tg_runtime_gpu_memory() : 0;
    if (mem > 0) { /* 5 · 1.5 · 0.2·n·m / count ≤ mem / 2 */
        const int64_t least = (int64_t)ceil(3.0 * (double)n * (double)m / mem);
        if (*rows < least) *rows = least;
        if (*snps < least) *snps = least;
    }
}

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }


/* Cuts @p total rows into blocks: of @p size rows each when given (the last one shorter), else
 * about @p target blocks of whole units of 512 rows, 2 units on average at least, at most 16
 * unless @p large, shrinking from about 1.5 to 0.5 times the mean: block b of c takes the units
 * up to units·b(3c − b)/(2c²), so that the last tasks of a product, when workers are freed at
 * different times, are the short ones. 0 or -1 out of memory. */
static void blocks_plan(int64_t total, int64_t size, int64_t target, int large, int64_t *unit,
                        int64_t *units, int64_t *count) {
    *unit = size > 0 ? (size < total ? size : total) : 512;
    *units = cdiv(total, *unit);
    const int64_t most = *units / 2 > 1 ? *units / 2 : 1; /* 2 units on average at least */
    *count = size > 0 ? *units : clamp64(target, large ? 1 : cdiv(3 * *units, 32), most);
}

/* The units before block b + 1 of blocks_make's cut. */
static int64_t blocks_end(int64_t units, int64_t count, int64_t size, int64_t b) {
    return size > 0 ? b + 1
                    : (int64_t)((__int128)units * (b + 1) * (3 * count - b - 1) /
                                (2 * (__int128)count * count));
}

static int blocks_make(blocks *bl, int64_t total, int64_t size, int64_t target, int large) {
    int64_t unit, units, count;
    blocks_plan(total, size, target, large, &unit, &units, &count);
    bl->unit = unit;
    bl->count = count;
    bl->start = tg_malloc_n(count + 1, 1, sizeof *bl->start, NULL);
    bl->of_unit = tg_malloc_n(units, 1, sizeof *bl->of_unit, NULL);
    if (!bl->start || !bl->of_unit) return -1;
    for (int64_t b = 0, u = 0; b < count; b++) {
        const int64_t end = blocks_end(units, count, size, b);
        bl->start[b] = u * unit;
        for (; u < end; u++) bl->of_unit[u] = (int32_t)b;
    }
    bl->start[count] = total;
    return 0;
}

/* 0, or -1 out of memory, or -2 when the count (an int32, as the codelets read it) is full */
static int miss_push(miss_list *l, int64_t r, int64_t t) {
    if (l->a[0] == INT32_MAX) return -2;
    if (l->len + 2 > l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        int32_t *a = realloc(l->a, cap * sizeof *a);
        if (!a) return -1;
        l->a = a;
        l->cap = cap;
    }
    l->a[l->len++] = (int32_t)r;
    l->a[l->len++] = (int32_t)t;
    l->a[0]++;
    return 0;
}

static tg_status miss_error(int e, const char *what, tg_error *err) {
    return tg_error_set(err, e == -1 ? TG_ERR_NOMEM : TG_ERR_ARG,
                        e == -1 ? "%s: out of memory for the missing calls"
                                : "%s: more than 2^31-1 missing calls in one block of samples or "
                                  "SNPs",
                        what);
}

static int miss_init(miss_list *l) {
    l->a = malloc(64 * sizeof *l->a);
    l->cap = 64;
    l->len = 1;
    if (l->a) l->a[0] = 0;
    return l->a ? 0 : -1;
}

void tg_geno_codes_release(tg_geno *g) {
    for (int64_t b = 0; g->rcodes && b < g->rbl.count; b++) free(g->rcodes[b]);
    for (int64_t b = 0; g->tcodes && b < g->sbl.count; b++) free(g->tcodes[b]);
    for (int64_t b = 0; g->rmiss && b < g->rbl.count; b++) free(g->rmiss[b].a);
    for (int64_t b = 0; g->tmiss && b < g->sbl.count; b++) free(g->tmiss[b].a);
    free(g->rcodes);
    free(g->tcodes);
    free(g->rmiss);
    free(g->tmiss);
    free(g->hr);
    free(g->ht);
    free(g->hrm);
    free(g->htm);
    free(g->freq);
    free(g->obs);
    free(g->coef);
    free(g->rbl.start);
    free(g->rbl.of_unit);
    free(g->sbl.start);
    free(g->sbl.of_unit);
    free(g);
}

/* The rows of the first (the largest) block of blocks_make's default cut of @p total rows. */
static double largest_block(int64_t total, int64_t target, int large) {
    int64_t unit, units, count;
    blocks_plan(total, 0, target, large, &unit, &units, &count);
    const int64_t rows = blocks_end(units, count, 0, 0) * unit;
    return (double)(rows < total ? rows : total);
}

int tg_geno_gpu_tiles_fit(int64_t n, int64_t m) {
    const double gpu = (double)tg_runtime_gpu_memory();
    return tg_runtime_ngpu() > 0 && gpu > 0 && 0.9 * (double)n * (double)m <= gpu / 2;
}

void tg_geno_device_bytes(int64_t n, int64_t m, int64_t k, size_t es, double *all,
                          double *task) {
    int64_t row_blocks, snp_blocks;
    int large;
    default_blocks(n, m, &row_blocks, &snp_blocks, &large);
    /* k columns go through products of at most TG_FC_MAXK */
    const double dn = (double)n, dm = (double)m, de = (double)es,
                 dk = (double)(k < TG_FC_MAXK ? k : TG_FC_MAXK),
                 rows = largest_block(n, row_blocks, large),
                 cols = largest_block(m, snp_blocks, large);
    /* the two 5codes copies, a byte per five genotypes each, and their tiles; the columns in
     * and out */
    *all = (tg_geno_gpu_tiles_fit(n, m) ? 0.9 : 0.4) * dn * dm + de * dk * (dn + dm);
    const double zl = 0.2 * rows * dm + de * dk * (dm + rows),
                 ztl = 0.2 * cols * dn + de * dk * (dn + cols);
    *task = zl > ztl ? zl : ztl;
}

/* @p n: this rank's samples; @p rb, @p sb: the block sizes asked for (0: the defaults) */
static tg_status alloc_geno(int64_t n, int64_t m, int64_t rb, int64_t sb, tg_geno **out,
                            tg_error *err) {
    if (m > INT32_MAX) /* the SNPs' 2 × m coefficients are one StarPU vector (uint32 entries) */
        return tg_error_set(err, TG_ERR_ARG, "genotypes of %lld SNPs: at most %d", (long long)m,
                            INT32_MAX);
    tg_geno *g = tg_calloc(1, sizeof *g, err);
    if (!g) return TG_ERR_NOMEM;
    g->nl = n;
    g->m = m;
    int64_t row_blocks, snp_blocks;
    int large;
    default_blocks(n, m, &row_blocks, &snp_blocks, &large);
    int ok = !blocks_make(&g->rbl, n, rb, row_blocks, large) &&
             !blocks_make(&g->sbl, m, sb, snp_blocks, large);
    int64_t ng = cdiv(m, 5), nh = cdiv(n, 5);
    ok = ok && (g->coef = tg_malloc_n(2, m, sizeof *g->coef, NULL)) &&
             (g->rcodes = tg_calloc_n(g->rbl.count, 1, sizeof *g->rcodes, NULL)) &&
             (g->tcodes = tg_calloc_n(g->sbl.count, 1, sizeof *g->tcodes, NULL)) &&
             (g->rmiss = tg_calloc_n(g->rbl.count, 1, sizeof *g->rmiss, NULL)) &&
             (g->tmiss = tg_calloc_n(g->sbl.count, 1, sizeof *g->tmiss, NULL)) &&
             (g->hr = tg_calloc_n(g->rbl.count, 1, sizeof *g->hr, NULL)) &&
             (g->hrm = tg_calloc_n(g->rbl.count, 1, sizeof *g->hrm, NULL)) &&
             (g->ht = tg_calloc_n(g->sbl.count, 1, sizeof *g->ht, NULL)) &&
             (g->htm = tg_calloc_n(g->sbl.count, 1, sizeof *g->htm, NULL));
    for (int64_t b = 0; ok && b < g->rbl.count; b++) {
        int64_t rows = block_len(&g->rbl, b);
        g->rmiss[b].len = (size_t)rows + 1;
        ok = (g->rcodes[b] = tg_calloc_huge(block_ld(&g->rbl, b), ng, 1, NULL)) &&
             (g->rmiss[b].a = tg_calloc_n(rows + 1, 1, sizeof(int32_t), NULL));
    }
    for (int64_t b = 0; ok && b < g->sbl.count; b++) {
        int64_t cols = block_len(&g->sbl, b);
        g->tmiss[b].len = (size_t)cols + 1;
        ok = (g->tcodes[b] = tg_calloc_huge(block_ld(&g->sbl, b), nh, 1, NULL)) &&
             (g->tmiss[b].a = tg_calloc_n(cols + 1, 1, sizeof(int32_t), NULL));
    }
    if (!ok) {
        tg_geno_codes_release(g);
        return tg_error_set(err, TG_ERR_NOMEM,
                            "out of memory for the 5codes genotypes (%lld samples × %lld SNPs: "
                            "%.2f GB)",
                            (long long)n, (long long)m, 0.4e-9 * (double)n * (double)m);
    }
    *out = g;
    return TG_OK;
}

/* SNPs decoded per chunk: a multiple of 5 (whole groups), enough consecutive bytes per sample
 * group in the SNP-block copy. */
#define CHUNK 40

/* Rows [i0, i0 + ni) of SNPs j0.. (the tile @p x, leading dimension ld) become digits 0/1/2; the
 * missing calls of SNPs not excluded are appended to @p cm as (sample, SNP). */
static tg_status chunk_prepare(tg_geno *g, int64_t j0, int64_t nj, int64_t i0, int64_t ni,
                               int8_t *x, int64_t ld, miss_list *cm, const char *what,
                               tg_error *err) {
    for (int64_t t = 0; t < nj; t++) {
        const int64_t j = j0 + t;
        int8_t *col = x + t * ld, *end = col + ni;
        if (g->coef[2 * j] == 0) { /* excluded (w_j is positive for every other SNP): all 0s,
                                    * no codes, no corrections */
            memset(col, 0, (size_t)ni);
            continue;
        }
        /* memchr's vector scan: missing calls are few */
        for (int8_t *p = memchr(col, (uint8_t)TG_GENO_MISSING, (size_t)ni); p;
             p = p + 1 < end ? memchr(p + 1, (uint8_t)TG_GENO_MISSING, (size_t)(end - p - 1))
                             : NULL) {
            int e = miss_push(cm, i0 + (p - col), j);
            if (e) return miss_error(e, what, err);
            *p = 0;
        }
    }
    return TG_OK;
}

/* The code of five digits, the first the least significant (at most 242: byte arithmetic). */
static inline uint8_t code5(uint8_t d0, uint8_t d1, uint8_t d2, uint8_t d3, uint8_t d4) {
    return (uint8_t)(d0 + 3 * (d1 + 3 * (d2 + 3 * (d3 + 3 * d4))));
}

/* Row codes of one whole group: five SNP columns, @p rows samples (vectorised: gcc 12 at -O2
 * vectorises only loops without epilogues). */
__attribute__((optimize("tree-vectorize"))) static void group_codes(
    const uint8_t *restrict a, const uint8_t *restrict b, const uint8_t *restrict c,
    const uint8_t *restrict d, const uint8_t *restrict e, int64_t rows, uint8_t *restrict dst) {
    for (int64_t i = 0; i < rows; i++) dst[i] = code5(a[i], b[i], c[i], d[i], e[i]);
}

/* The SNP-block copy's codes of one SNP, whole groups [0, groups) of its digits @p c, to dst[0],
 * dst[ld], ... */
static void snp_groups_scalar(const uint8_t *c, int64_t groups, uint8_t *dst, int64_t ld) {
    for (int64_t h = 0; h < groups; h++, c += 5) dst[h * ld] = code5(c[0], c[1], c[2], c[3], c[4]);
}

#if defined(__x86_64__)
/* Two groups at a time from 16 bytes (their 10 digits and 6 more): digit d at place k is looked
 * up as d·3^k, and each group's five summed by psadbw, where the scalar loop spends five loads
 * and four multiply-adds a code. */
__attribute__((target("ssse3"))) static void snp_groups_ssse3(const uint8_t *c, int64_t groups,
                                                              uint8_t *dst, int64_t ld) {
    const __m128i spread = _mm_setr_epi8(0, 1, 2, 3, 4, -1, -1, -1, 5, 6, 7, 8, 9, -1, -1, -1);
    const __m128i place = _mm_setr_epi8(0, 3, 6, 9, 12, 15, 15, 15, 0, 3, 6, 9, 12, 15, 15, 15);
    const __m128i value = _mm_setr_epi8(0, 1, 2, 0, 3, 6, 0, 9, 18, 0, 27, 54, 0, 81, (char)162,
                                        0);
    int64_t h = 0;
    for (; h + 4 <= groups; h += 2) { /* the 16 bytes stay within the groups' digits */
        __m128i d = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(c + 5 * h)), spread);
        d = _mm_sad_epu8(_mm_shuffle_epi8(value, _mm_add_epi8(d, place)), _mm_setzero_si128());
        dst[h * ld] = (uint8_t)_mm_cvtsi128_si32(d);
        dst[(h + 1) * ld] = (uint8_t)_mm_extract_epi16(d, 4);
    }
    snp_groups_scalar(c + 5 * h, groups - h, dst + h * ld, ld);
}
#endif

typedef void (*snp_groups_fn)(const uint8_t *c, int64_t groups, uint8_t *dst, int64_t ld);

static snp_groups_fn snp_groups_pick(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("ssse3")) return snp_groups_ssse3;
#endif
    return snp_groups_scalar;
}

/* Rows of SNP-block copies written a tile of sample groups at a time, so that the tile's
 * lines (one per group, written at every SNP of the chunk) stay in L1 across the SNPs. */
enum { GROUP_TILE = 256 };

/* 5codes of rows [i0, i0 + ni) (i0 a multiple of 5: the tile @p d, leading dimension ld) of
 * SNPs j0..j0+nj−1 (j0 a multiple of 5) into both copies. */
static void chunk_encode(tg_geno *g, int64_t j0, int64_t nj, int64_t i0, int64_t ni,
                         const int8_t *d, int64_t ld, snp_groups_fn groups) {
    const int64_t n = g->nl, full = n / 5, nh = cdiv(n, 5), i1 = i0 + ni;
    const uint8_t *u = (const uint8_t *)d;
    for (int64_t q = 0; q < nj; q += 5) { /* SNP groups: samples in row blocks */
        int64_t grp = (j0 + q) / 5, w = nj - q < 5 ? nj - q : 5;
        for (int64_t b = block_of(&g->rbl, i0); b < g->rbl.count && g->rbl.start[b] < i1; b++) {
            const int64_t s0 = g->rbl.start[b], s1 = g->rbl.start[b + 1],
                          lo = s0 > i0 ? s0 : i0, rows = (s1 < i1 ? s1 : i1) - lo;
            uint8_t *dst = g->rcodes[b] + grp * block_ld(&g->rbl, b) + (lo - s0);
            const uint8_t *col = u + q * ld + (lo - i0);
            if (w == 5) {
                group_codes(col, col + ld, col + 2 * ld, col + 3 * ld, col + 4 * ld, rows, dst);
                continue;
            }
            for (int64_t i = 0; i < rows; i++) {
                int code = 0;
                for (int64_t t = w - 1; t >= 0; t--) code = 3 * code + col[t * ld + i];
                dst[i] = (uint8_t)code;
            }
        }
    }
    const int64_t hb = i0 / 5, he = i1 == n ? nh : i1 / 5;
    for (int64_t h0 = hb; h0 < he; h0 += GROUP_TILE) { /* SNPs: sample groups */
        const int64_t h1 = h0 + GROUP_TILE < he ? h0 + GROUP_TILE : he;
        for (int64_t t = 0; t < nj; t++) {
            int64_t j = j0 + t, b = block_of(&g->sbl, j), bld = block_ld(&g->sbl, b);
            const uint8_t *col = u + t * ld;
            uint8_t *dst = g->tcodes[b] + (j - g->sbl.start[b]);
            const int64_t hf = h1 < full ? h1 : full;
            if (hf > h0) groups(col + (5 * h0 - i0), hf - h0, dst + h0 * bld, bld);
            for (int64_t h = hf > h0 ? hf : h0; h < h1; h++) { /* the last, partial group */
                int code = 0;
                for (int64_t v = n - 5 * h - 1; v >= 0; v--) code = 3 * code + col[5 * h - i0 + v];
                dst[h * bld] = (uint8_t)code;
            }
        }
    }
}

/* The encoder's state: the missing calls of each chunk, merged in chunk order at the end, so
 * that the lists (hence the rounding of the products) do not depend on the number of threads. */
typedef struct {
    tg_geno *g;
    int scale;
    const char *what;
    miss_list *cmiss;
    snp_groups_fn groups;
} codes_job;

/* Per chunk: the centring coefficients of its SNPs at its first tile (each chunk owns its
 * SNPs), then each tile's codes. */
static tg_status codes_chunk(void *ctx, const double *freq, int64_t j0, int64_t nj, int64_t i0,
                             int64_t ni, int8_t *x, int64_t ld, tg_error *err) {
    codes_job *jb = ctx;
    tg_geno *g = jb->g;
    for (int64_t j = j0; i0 == 0 && j < j0 + nj; j++) {
        const double p = freq[j];
        const int used = tg_geno_polymorphic(p);
        const double w = !used ? 0 : jb->scale ? 1 / sqrt(2 * p * (1 - p)) : 1;
        g->coef[2 * j] = w;
        g->coef[2 * j + 1] = used ? 2 * p * w : 0;
    }
    tg_status st = chunk_prepare(g, j0, nj, i0, ni, x, ld, &jb->cmiss[j0 / CHUNK], jb->what, err);
    if (!st) chunk_encode(g, j0, nj, i0, ni, x, ld, jb->groups);
    return st;
}

/* The merge of the chunks' missing calls into the block lists (merge_missing). */
typedef struct {
    tg_geno *g;
    const miss_list *cmiss;
    const int64_t *gchunk; /* group q: chunks gchunk[q] .. gchunk[q + 1] − 1 */
    int64_t groups;
    int32_t *cnt;          /* groups × nl: a group's calls at each sample, then its next place */
    int64_t *total;        /* per sample block: its calls */
    int fill;
} merge_job;

/* By SNP, chunk c (its SNPs' rows are its own): counts each row's calls into a[r], or places
 * them, a[r] then the row's next free place (samples ascending: the chunk lists them so). */
static void snp_rows(void *ctx, int64_t c) {
    const merge_job *mj = ctx;
    const tg_geno *g = mj->g;
    const int32_t *a = mj->cmiss[c].a;
    for (int32_t e = 0; e < a[0]; e++) {
        const int64_t i = a[1 + 2 * e], j = a[2 + 2 * e], b = block_of(&g->sbl, j),
                      r = j - g->sbl.start[b];
        int32_t *l = g->tmiss[b].a;
        if (mj->fill)
            l[block_len(&g->sbl, b) + 1 + l[r]++] = (int32_t)i;
        else
            l[r]++;
    }
}

/* By sample, group q: counts its calls at each sample, or places them from its places there. */
static void sample_group(void *ctx, int64_t q) {
    const merge_job *mj = ctx;
    const tg_geno *g = mj->g;
    int32_t *cnt = mj->cnt + q * g->nl;
    for (int64_t c = mj->gchunk[q]; c < mj->gchunk[q + 1]; c++) {
        const int32_t *a = mj->cmiss[c].a;
        for (int32_t e = 0; e < a[0]; e++) {
            const int64_t i = a[1 + 2 * e];
            if (!mj->fill) {
                cnt[i]++;
                continue;
            }
            const int64_t b = block_of(&g->rbl, i);
            g->rmiss[b].a[block_len(&g->rbl, b) + 1 + cnt[i]++] = a[2 + 2 * e];
        }
    }
}

/* Sample block b: each row's start from the groups' counts, which become each group's first
 * place in the row (groups in chunk order, so SNPs ascend along a row); the block's total. */
static void sample_starts(void *ctx, int64_t b) {
    const merge_job *mj = ctx;
    const tg_geno *g = mj->g;
    const int64_t i0 = g->rbl.start[b], rows = block_len(&g->rbl, b), nl = g->nl;
    int32_t *a = g->rmiss[b].a;
    int64_t s = 0;
    for (int64_t r = 0; r < rows; r++) {
        a[r] = (int32_t)s; /* past INT32_MAX: refused by the caller before any use */
        for (int64_t q = 0; q < mj->groups; q++) {
            const int32_t c = mj->cnt[q * nl + i0 + r];
            mj->cnt[q * nl + i0 + r] = (int32_t)s;
            s += c;
        }
    }
    a[rows] = (int32_t)s;
    mj->total[b] = s;
}

/* Sorts the chunks' missing calls into the block lists by output row, table rows ascending in
 * each row, on every thread (on one, it took as long as the genotypes' pass at 1% missing calls).
 * By SNP each chunk owns its SNPs' rows, so chunks count and place in parallel. By sample every
 * chunk reaches every row: groups of consecutive chunks count their calls at each sample (groups
 * × nl int32), whose running sums give each group its places in each row, then place their calls
 * in parallel. The lists do not depend on the number of threads. */
static tg_status merge_missing(tg_geno *g, const miss_list *cmiss, int64_t nchunks,
                               const char *what, tg_error *err) {
    int64_t calls = 0;
    for (int64_t c = 0; c < nchunks; c++) calls += cmiss[c].a[0];
    if (calls == 0) return TG_OK; /* the lists are all empty rows already */
    merge_job mj = {.g = g, .cmiss = cmiss};
    /* by SNP: count, starts (a[r] = row r's start, a[rows] the total), place, back to starts */
    tg_parallel_for(nchunks, snp_rows, &mj);
    for (int64_t b = 0; b < g->sbl.count; b++) {
        miss_rows *l = &g->tmiss[b];
        const int64_t rows = block_len(&g->sbl, b);
        int64_t s = 0;
        for (int64_t r = 0; r <= rows; r++) {
            const int64_t c = r < rows ? l->a[r] : 0;
            l->a[r] = (int32_t)s;
            s += c;
        }
        if (s > INT32_MAX) return miss_error(-2, what, err);
        int32_t *a = realloc(l->a, (size_t)(rows + 1 + s) * sizeof *a);
        if (!a) return miss_error(-1, what, err);
        l->a = a;
        l->len = (size_t)(rows + 1 + s);
    }
    mj.fill = 1;
    tg_parallel_for(nchunks, snp_rows, &mj);
    for (int64_t b = 0; b < g->sbl.count; b++) { /* each a[r] went to row r's end */
        const int64_t rows = block_len(&g->sbl, b);
        memmove(g->tmiss[b].a + 1, g->tmiss[b].a, (size_t)rows * sizeof(int32_t));
        g->tmiss[b].a[0] = 0;
    }
    /* by sample: groups of about equal calls, at most one a thread */
    int64_t groups = tg_parallel_threads();
    if (groups > nchunks) groups = nchunks;
    int64_t *gchunk = tg_malloc_n(groups + 1, 1, sizeof *gchunk, NULL);
    mj.cnt = tg_calloc_n(groups, g->nl, sizeof *mj.cnt, NULL);
    mj.total = tg_malloc_n(g->rbl.count, 1, sizeof *mj.total, NULL);
    tg_status st = TG_OK;
    if (!gchunk || !mj.cnt || !mj.total) {
        st = miss_error(-1, what, err);
        goto done;
    }
    gchunk[0] = 0;
    for (int64_t q = 1, c = 0, sum = 0; q <= groups; q++) {
        while (c < nchunks && (q == groups || sum < calls * q / groups)) sum += cmiss[c++].a[0];
        gchunk[q] = c;
    }
    mj.gchunk = gchunk;
    mj.groups = groups;
    mj.fill = 0;
    tg_parallel_for(groups, sample_group, &mj);
    tg_parallel_for(g->rbl.count, sample_starts, &mj);
    for (int64_t b = 0; b < g->rbl.count; b++) {
        const int64_t rows = block_len(&g->rbl, b);
        if (mj.total[b] > INT32_MAX) {
            st = miss_error(-2, what, err);
            goto done;
        }
        int32_t *a = realloc(g->rmiss[b].a, (size_t)(rows + 1 + mj.total[b]) * sizeof *a);
        if (!a) {
            st = miss_error(-1, what, err);
            goto done;
        }
        g->rmiss[b].a = a;
        g->rmiss[b].len = (size_t)(rows + 1 + mj.total[b]);
    }
    mj.fill = 1;
    tg_parallel_for(groups, sample_group, &mj);
done:
    free(gchunk);
    free(mj.cnt);
    free(mj.total);
    return st;
}

/* Collective with several ranks: the frequencies are summed over them. */
tg_status tg_geno_from_source_blocks(const tg_geno_source *s, int scale, int64_t rb, int64_t sb,
                                     tg_geno **out, tg_error *err) {
    *out = NULL;
    const int64_t n = s->n, m = s->m;
    const char *what = s->what;
    if (n < 1 || m < 1 || n >= INT32_MAX || m >= INT32_MAX)
        return tg_error_set(err, TG_ERR_ARG,
                            "%s: %lld samples × %lld SNPs: both must be in 1..2^31-2", what,
                            (long long)n, (long long)m);
    /* the ranks share the samples: their count is needed now */
    tg_status st = tg_runtime_init_mpi(err);
    if (st) return st;
    if (n < tg_runtime_nranks())
        return tg_error_set(err, TG_ERR_ARG,
                            "%s: %lld samples for %d MPI ranks: every rank needs at least one",
                            what, (long long)n, tg_runtime_nranks());
    int64_t i0, nl;
    tg_runtime_split(n, tg_runtime_rank(), &i0, &nl);
    tg_geno *g = NULL;
    st = alloc_geno(nl, m, rb, sb, &g, err);
    if (st) return st;
    g->n = n;
    g->i0 = i0;
    const int64_t nchunks = cdiv(m, CHUNK);
    codes_job jb = {.g = g, .scale = scale, .what = what, .groups = snp_groups_pick(),
                    .cmiss = tg_calloc_n(nchunks, 1, sizeof *jb.cmiss, err)};
    int ok = jb.cmiss != NULL;
    for (int64_t c = 0; ok && c < nchunks; c++) ok = !miss_init(&jb.cmiss[c]);
    if (!ok) st = tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory", what);
    const tg_geno_range mine = {i0, i0 + nl};
    const tg_geno_encoder enc = {codes_chunk, &jb, CHUNK, 5};
    tg_geno_counts cnt;
    if (!st && !(st = tg_geno_pass(s, &mine, 1, 1, NULL, &enc, &cnt, err))) {
        g->freq = cnt.freq; /* the one pass's frequencies and calls, kept */
        g->obs = cnt.obs;
        cnt.freq = NULL;
        cnt.obs = NULL;
        tg_geno_counts_free(&cnt);
        for (int64_t j = 0; j < m; j++) g->excluded += g->coef[2 * j] == 0;
        st = merge_missing(g, jb.cmiss, nchunks, what, err);
    }
    for (int64_t c = 0; jb.cmiss && c < nchunks; c++) free(jb.cmiss[c].a);
    free(jb.cmiss);
    if (st) {
        tg_geno_codes_release(g);
        return st;
    }
    *out = g;
    return TG_OK;
}

tg_status tg_geno_from_int8_blocks(const int8_t *geno, int64_t n, int64_t m, int64_t ld, int scale,
                                   int64_t rows_per_block, int64_t snps_per_block, tg_geno **out,
                                   tg_error *err) {
    if (!geno || !out) return tg_error_set(err, TG_ERR_ARG, "tg_geno_from_int8: NULL argument");
    if (ld < n)
        return tg_error_set(err, TG_ERR_ARG, "tg_geno_from_int8: ld %lld < n %lld", (long long)ld,
                            (long long)n);
    tg_geno_source *s;
    tg_status st = tg_geno_source_int8(geno, n, m, ld, &s, err);
    if (!st) st = tg_geno_from_source_blocks(s, scale, rows_per_block, snps_per_block, out, err);
    tg_geno_source_free(s);
    return st;
}

tg_status tg_geno_from_int8(const int8_t *g, int64_t n, int64_t m, int64_t ld, int scale,
                            tg_geno **out, tg_error *err) {
    return tg_geno_from_int8_blocks(g, n, m, ld, scale, 0, 0, out, err);
}

tg_status tg_geno_from_source(const tg_geno_source *s, int scale, tg_geno **out, tg_error *err) {
    if (!s || !out) return tg_error_set(err, TG_ERR_ARG, "tg_geno_from_source: NULL argument");
    return tg_geno_from_source_blocks(s, scale, 0, 0, out, err);
}

tg_status tg_geno_from_bed(const tg_bed *bed, int scale, tg_geno **out, tg_error *err) {
    if (!bed || !out) return tg_error_set(err, TG_ERR_ARG, "tg_geno_from_bed: NULL argument");
    tg_geno_source *s;
    tg_status st = tg_geno_source_bed(bed, &s, err);
    if (st) {
        *out = NULL;
        return st;
    }
    st = tg_geno_from_source_blocks(s, scale, 0, 0, out, err);
    tg_geno_source_free(s);
    return st;
}
