/* Genotype matrix products Z·Λ and Zᵀ·Λ̃ (tg_geno_*): the 5codes genotype blocks, built once
 * from a .bed or an int8 array and registered once with StarPU (so a GPU keeps its copy
 * between products), and the product as one task per block of output rows.
 *
 * Two copies of the genotypes, both 5codes (codelets/fivecodes.h): row blocks of samples with
 * SNPs grouped by five (for Z·Λ) and blocks of SNPs with samples grouped by five (for Zᵀ·Λ̃),
 * each block one contiguous array and one StarPU handle. 0.2 bytes per genotype each (the
 * paper stores both orientations too: a transposed read of one copy would stream Λ̃ once per
 * group instead of once per task). Missing calls are listed per block by output row (one int32
 * per call and orientation, plus an offset per row) and corrected exactly: the GPU adds them in
 * the product kernel, where the row's accumulators are; the CPU after its table lookups.
 *
 * Block sizes (defaults): Z·Λ, 64 blocks of samples, so that 16 CPU workers get 4 tasks each;
 * Zᵀ·Λ̃, 48 blocks of SNPs: a CPU task builds one table per group of 5 samples (243·k adds)
 * for all its rows, so fewer, longer blocks keep that cost down (under ~10% of the lookups at
 * 48). Blocks are whole units of 512 rows, the rows of one CUDA thread block at k = 10, so no
 * GPU row tile is partial, and they shrink along the product from about 1.5 to 0.5 times the
 * mean (blocks_make): with CPU workers only, the workers pull the blocks in that order, one
 * at a time (tg_geno_mul_submit), so the short last ones even out the workers' ends. For the
 * paper's n = 102,000 × m = 50,241: Z·Λ 64 tasks of 5 to 1 units (0.5 to 2.6 GFLOP at k = 10),
 * Zᵀ·Λ̃ 48 of 3 to 1. Measured on the H100 node's 16 cores (bench/snpmm's recorded product):
 * with equal blocks all submitted at once the cores were busy 75–81% of the product's span (the
 * busiest one 25–33% above the mean: dmdas places every task at submission from the models,
 * and a core slowed by its neighbours kept its share); with shrinking blocks and two tasks per
 * worker in flight, still placed by dmdas, 70–91%; pulled one at a time, 87–88%, the idle time
 * all after the cores' last tasks (docs/PERFORMANCE.md).
 *
 * Several MPI ranks: each holds the codes of its own samples only (tg_runtime_split: an even,
 * contiguous share of the rows), in blocks sized as above for its share, and decodes only those
 * rows of the .bed. The frequencies come from integer counts summed over the ranks, so every
 * rank has one rank's p bit for bit. Z·Λ gives each rank its own rows; Zᵀ·Λ̃ sums the ranks'
 * Z_rᵀ·Λ̃_r (tg_runtime_sum). The tasks touch only the rank's own handles: plain StarPU. */
#include "algo/snpmm.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parallel.h"
#include "codelets/fivecodes.h"
#include "runtime/runtime.h"

/* A growable list of int32 whose element 0 is the number of (r, t) pairs after it: the missing
 * calls of one chunk of SNPs, as the preparation finds them. */
typedef struct {
    int32_t *a;
    size_t len, cap;
} miss_list;

/* The missing calls of one block by output row, the layout the codelets read
 * (codelets/fivecodes.h): rows + 1 offsets, then the table rows of each row in ascending order. */
typedef struct {
    int32_t *a;
    size_t len;
} miss_rows;

/* A cut of rows into blocks of whole units (the last unit shorter): block b holds rows
 * [start[b], start[b + 1]), unit u = rows [u·unit, (u + 1)·unit) is in block of_unit[u]. */
typedef struct {
    int64_t count, unit, *start;
    int32_t *of_unit;
} blocks;

struct tg_geno {
    int64_t n, m, excluded;
    int64_t i0, nl; /* this rank's samples [i0, i0 + nl): the rows of its blocks */
    double *freq;   /* m; NAN for an all-missing SNP */
    double *coef;   /* 2m: w_j, c_j = 2p_j·w_j */
    blocks rbl, sbl;            /* blocks of this rank's samples (Z·Λ), of SNPs (Zᵀ·Λ̃) */
    uint8_t **rcodes, **tcodes; /* per block: rows × ceil(m/5), cols × ceil(n/5) */
    miss_rows *rmiss, *tmiss;
    int registered;
    starpu_data_handle_t hcoef, *hr, *ht, *hrm, *htm;
};

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }
static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t block_len(const blocks *bl, int64_t b) { return bl->start[b + 1] - bl->start[b]; }
static int64_t block_of(const blocks *bl, int64_t row) { return bl->of_unit[row / bl->unit]; }

/* Cuts @p total rows into blocks: of @p size rows each when given (the last one shorter), else
 * about @p target blocks of whole units of 512 rows, 2 units on average at least, at most 16,
 * shrinking from about 1.5 to 0.5 times the mean: block b of c takes the units up to
 * units·b(3c − b)/(2c²), so that the last tasks of a product, when workers are freed at
 * different times, are the short ones. 0 or -1 out of memory. */
static int blocks_make(blocks *bl, int64_t total, int64_t size, int64_t target) {
    const int64_t unit = size > 0 ? (size < total ? size : total) : 512;
    const int64_t units = cdiv(total, unit);
    const int64_t most = units / 2 > 1 ? units / 2 : 1; /* 2 units on average at least */
    const int64_t count = size > 0 ? units : clamp64(target, cdiv(3 * units, 32), most);
    bl->unit = unit;
    bl->count = count;
    bl->start = malloc((size_t)(count + 1) * sizeof *bl->start);
    bl->of_unit = malloc((size_t)units * sizeof *bl->of_unit);
    if (!bl->start || !bl->of_unit) return -1;
    for (int64_t b = 0, u = 0; b < count; b++) {
        const int64_t end = size > 0 ? b + 1
                                     : (int64_t)((__int128)units * (b + 1) * (3 * count - b - 1) /
                                                 (2 * (__int128)count * count));
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

void tg_geno_free(tg_geno *g) {
    if (!g) return;
    if (g->registered && starpu_is_initialized()) {
        starpu_data_unregister(g->hcoef);
        for (int64_t b = 0; b < g->rbl.count; b++) {
            starpu_data_unregister(g->hr[b]);
            starpu_data_unregister(g->hrm[b]);
        }
        for (int64_t b = 0; b < g->sbl.count; b++) {
            starpu_data_unregister(g->ht[b]);
            starpu_data_unregister(g->htm[b]);
        }
    }
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
    free(g->coef);
    free(g->rbl.start);
    free(g->rbl.of_unit);
    free(g->sbl.start);
    free(g->sbl.of_unit);
    free(g);
}

int64_t tg_geno_n(const tg_geno *g) { return g->n; }
int64_t tg_geno_m(const tg_geno *g) { return g->m; }
int64_t tg_geno_excluded(const tg_geno *g) { return g->excluded; }
int64_t tg_geno_missing(const tg_geno *g) {
    int64_t c = 0;
    for (int64_t b = 0; b < g->rbl.count; b++) c += g->rmiss[b].a[block_len(&g->rbl, b)];
    return c;
}
void tg_geno_local(const tg_geno *g, int64_t *first, int64_t *count) {
    *first = g->i0;
    *count = g->nl;
}
const double *tg_geno_freq(const tg_geno *g) { return g->freq; }
int64_t tg_geno_block_start(const tg_geno *g, int trans, int64_t b) {
    return (trans ? &g->sbl : &g->rbl)->start[b];
}

/* @p n: this rank's samples; @p rb, @p sb: the block sizes asked for (0: the defaults) */
static tg_status alloc_geno(int64_t n, int64_t m, int64_t rb, int64_t sb, tg_geno **out,
                            tg_error *err) {
    tg_geno *g = tg_calloc(1, sizeof *g, err);
    if (!g) return TG_ERR_NOMEM;
    g->nl = n;
    g->m = m;
    int ok = !blocks_make(&g->rbl, n, rb, 64) && !blocks_make(&g->sbl, m, sb, 48);
    int64_t ng = cdiv(m, 5), nh = cdiv(n, 5);
    ok = ok && (g->freq = malloc((size_t)m * sizeof *g->freq)) &&
             (g->coef = malloc(2 * (size_t)m * sizeof *g->coef)) &&
             (g->rcodes = calloc((size_t)g->rbl.count, sizeof *g->rcodes)) &&
             (g->tcodes = calloc((size_t)g->sbl.count, sizeof *g->tcodes)) &&
             (g->rmiss = calloc((size_t)g->rbl.count, sizeof *g->rmiss)) &&
             (g->tmiss = calloc((size_t)g->sbl.count, sizeof *g->tmiss)) &&
             (g->hr = calloc((size_t)g->rbl.count, sizeof *g->hr)) &&
             (g->hrm = calloc((size_t)g->rbl.count, sizeof *g->hrm)) &&
             (g->ht = calloc((size_t)g->sbl.count, sizeof *g->ht)) &&
             (g->htm = calloc((size_t)g->sbl.count, sizeof *g->htm));
    for (int64_t b = 0; ok && b < g->rbl.count; b++) {
        int64_t rows = block_len(&g->rbl, b);
        g->rmiss[b].len = (size_t)rows + 1;
        ok = (g->rcodes[b] = calloc((size_t)(rows * ng), 1)) &&
             (g->rmiss[b].a = calloc((size_t)rows + 1, sizeof(int32_t)));
    }
    for (int64_t b = 0; ok && b < g->sbl.count; b++) {
        int64_t cols = block_len(&g->sbl, b);
        g->tmiss[b].len = (size_t)cols + 1;
        ok = (g->tcodes[b] = calloc((size_t)(cols * nh), 1)) &&
             (g->tmiss[b].a = calloc((size_t)cols + 1, sizeof(int32_t)));
    }
    if (!ok) {
        tg_geno_free(g);
        return tg_error_set(err, TG_ERR_NOMEM,
                            "out of memory for the 5codes genotypes (%lld samples × %lld SNPs: "
                            "%.2f GB)",
                            (long long)n, (long long)m, 0.4e-9 * (double)n * (double)m);
    }
    *out = g;
    return TG_OK;
}

void tg_geno_source_int8(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                         int8_t *buf) {
    const tg_int8_geno *s = ctx;
    for (int64_t t = 0; t < nj; t++)
        memcpy(buf + t * ni, s->g + (size_t)(j0 + t) * (size_t)s->ld + (size_t)i0, (size_t)ni);
}

void tg_geno_source_bed(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                        int8_t *buf) {
    tg_bed_decode(ctx, i0, ni, j0, nj, buf, ni);
}

void tg_geno_source_bed_rows(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                             int8_t *buf) {
    const tg_bed_rows *s = ctx;
    const int64_t *rows = s->rows + i0;
    /* a run of consecutive .fam rows is one decode: few runs when few samples are dropped */
    for (int64_t a = 0, b; a < ni; a = b) {
        for (b = a + 1; b < ni && rows[b] == rows[b - 1] + 1; b++)
            ;
        tg_bed_decode(s->bed, rows[a], b - a, j0, nj, buf + a, ni);
    }
}

/* SNPs decoded per step: a multiple of 5 (whole groups), enough consecutive bytes per sample
 * group in the SNP-block copy. */
#define CHUNK 40

/* ---- First pass: the frequencies, from counts of called genotypes and A1 alleles per SNP over
 * this rank's samples, summed over the ranks. */

typedef struct {
    tg_geno *g;
    tg_geno_source src;
    const void *ctx;
    int64_t *cnt; /* 2m: called genotypes, A1 alleles */
    int64_t bad;  /* the lowest chunk holding a value other than 0, 1, 2, missing (atomic) */
    int nomem;    /* atomic */
} count_job;

/* The first value of @p col (n samples) that is not a genotype, or -1. */
static int64_t first_bad(const int8_t *col, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (col[i] != TG_GENO_MISSING && (col[i] < 0 || col[i] > 2)) return i;
    return -1;
}

static void count_chunk(void *ctx, int64_t c) {
    count_job *jb = ctx;
    const int64_t n = jb->g->nl, j0 = c * CHUNK, nj = jb->g->m - j0 < CHUNK ? jb->g->m - j0 : CHUNK;
    int8_t *buf = malloc((size_t)(n * nj));
    if (!buf) {
        __atomic_store_n(&jb->nomem, 1, __ATOMIC_RELAXED);
        return;
    }
    jb->src(jb->ctx, jb->g->i0, n, j0, nj, buf);
    for (int64_t t = 0; t < nj; t++) {
        const int8_t *col = buf + t * n;
        int64_t obs = 0, sum = 0;
        if (first_bad(col, n) >= 0) {
            int64_t cur = __atomic_load_n(&jb->bad, __ATOMIC_RELAXED);
            while (c < cur && !__atomic_compare_exchange_n(&jb->bad, &cur, c, 0, __ATOMIC_RELAXED,
                                                           __ATOMIC_RELAXED))
                ;
            break;
        }
        for (int64_t i = 0; i < n; i++)
            if (col[i] != TG_GENO_MISSING) obs++, sum += col[i];
        jb->cnt[2 * (j0 + t)] = obs;
        jb->cnt[2 * (j0 + t) + 1] = sum;
    }
    free(buf);
}

/* Fills freq, coef and excluded from every rank's counts (collective). */
static tg_status frequencies(tg_geno *g, int scale, tg_geno_source src, const void *ctx,
                             const char *what, tg_error *err) {
    const int64_t nchunks = cdiv(g->m, CHUNK);
    count_job jb = {.g = g, .src = src, .ctx = ctx, .bad = nchunks};
    if (!(jb.cnt = tg_malloc(2 * (size_t)g->m * sizeof *jb.cnt, err))) return TG_ERR_NOMEM;
    tg_status st = TG_OK;
    tg_parallel_for(nchunks, count_chunk, &jb);
    if (jb.nomem) {
        st = tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory", what);
    } else if (jb.bad < nchunks) { /* name the first bad genotype in SNP order */
        const int64_t n = g->nl, j0 = jb.bad * CHUNK;
        int8_t *col = tg_malloc((size_t)n, err);
        if (!col) {
            st = TG_ERR_NOMEM;
        } else {
            for (int64_t j = j0, i = -1; i < 0; j++) {
                src(ctx, g->i0, n, j, 1, col);
                if ((i = first_bad(col, n)) >= 0)
                    st = tg_error_set(err, TG_ERR_ARG,
                                      "%s: genotype of sample %lld at SNP %lld is %d: expected 0, "
                                      "1, 2 or TG_GENO_MISSING (-1)",
                                      what, (long long)(g->i0 + i), (long long)j, col[i]);
            }
            free(col);
        }
    }
    if (!st) {
        tg_runtime_sum_int64(jb.cnt, 2 * g->m);
        for (int64_t j = 0; j < g->m; j++) {
            int64_t obs = jb.cnt[2 * j], sum = jb.cnt[2 * j + 1];
            double p = obs ? (double)sum / (2.0 * (double)obs) : NAN;
            int excluded = obs == 0 || sum == 0 || sum == 2 * obs;
            g->freq[j] = p;
            double w = excluded ? 0 : scale ? 1 / sqrt(2 * p * (1 - p)) : 1;
            g->coef[2 * j] = w;
            g->coef[2 * j + 1] = excluded ? 0 : 2 * p * w;
            g->excluded += excluded;
        }
    }
    free(jb.cnt);
    return st;
}

/* ---- Second pass: the codes. */

/* SNPs j0.. of buf become digits 0/1/2; the missing calls of SNPs not excluded are appended to
 * @p cm as (sample, SNP). */
static tg_status chunk_prepare(tg_geno *g, int64_t j0, int64_t nj, int8_t *buf, miss_list *cm,
                               const char *what, tg_error *err) {
    const int64_t n = g->nl;
    for (int64_t t = 0; t < nj; t++) {
        const int64_t j = j0 + t;
        const int excluded = g->coef[2 * j] == 0; /* w_j is positive for every other SNP */
        int8_t *col = buf + t * n;
        /* an excluded SNP is all zeros: no codes, no corrections */
        for (int64_t i = 0; i < n; i++) {
            if (excluded) {
                col[i] = 0;
            } else if (col[i] == TG_GENO_MISSING) {
                int e = miss_push(cm, i, j);
                if (e) return miss_error(e, what, err);
                col[i] = 0;
            }
        }
    }
    return TG_OK;
}

/* 5codes of SNPs j0..j0+nj−1 (j0 a multiple of 5) into both copies. */
static void chunk_encode(tg_geno *g, int64_t j0, int64_t nj, const int8_t *d) {
    const int64_t n = g->nl, nh = cdiv(n, 5);
    for (int64_t q = 0; q < nj; q += 5) { /* SNP groups: samples in row blocks */
        int64_t grp = (j0 + q) / 5, w = nj - q < 5 ? nj - q : 5;
        for (int64_t b = 0; b < g->rbl.count; b++) {
            int64_t i0 = g->rbl.start[b], rows = block_len(&g->rbl, b);
            uint8_t *dst = g->rcodes[b] + grp * rows;
            for (int64_t i = 0; i < rows; i++) {
                int code = 0;
                for (int64_t t = w - 1; t >= 0; t--) code = 3 * code + d[(q + t) * n + i0 + i];
                dst[i] = (uint8_t)code;
            }
        }
    }
    for (int64_t t = 0; t < nj; t++) { /* SNPs: sample groups */
        int64_t j = j0 + t, b = block_of(&g->sbl, j), cols = block_len(&g->sbl, b),
                jl = j - g->sbl.start[b];
        const int8_t *col = d + t * n;
        uint8_t *dst = g->tcodes[b] + jl;
        for (int64_t h = 0; h < nh; h++) {
            int code = 0;
            for (int64_t u = (n - 5 * h < 5 ? n - 5 * h : 5) - 1; u >= 0; u--)
                code = 3 * code + col[5 * h + u];
            dst[h * cols] = (uint8_t)code;
        }
    }
}

/* The preparation runs on every core. Chunks of SNPs are claimed in increasing order; the codes
 * of a chunk are bytes of both copies no other chunk writes; its missing calls go to a list of
 * its own, merged into the block lists in chunk order at the end, so the lists (hence the
 * rounding of the products) and the error reported (the first bad genotype in SNP order) do not
 * depend on the number of threads. */
typedef struct {
    tg_geno *g;
    tg_geno_source src;
    const void *ctx;
    const char *what;
    int64_t nchunks;
    miss_list *cmiss; /* per chunk: (sample, SNP) of its missing calls */
    pthread_mutex_t lock;
    int64_t next;      /* the next chunk to claim */
    int64_t err_chunk; /* the lowest chunk that failed (nchunks: none; -1: no memory) */
    tg_error err;
} build_job;

static void *build_worker(void *arg) {
    build_job *jb = arg;
    const int64_t n = jb->g->nl, m = jb->g->m;
    int8_t *buf = malloc((size_t)n * CHUNK);
    for (;;) {
        pthread_mutex_lock(&jb->lock);
        int64_t c = jb->next++;
        if (!buf && jb->err_chunk >= 0) {
            jb->err_chunk = -1;
            tg_error_set(&jb->err, TG_ERR_NOMEM, "%s: out of memory", jb->what);
        }
        /* chunks after a failed one are not needed: the error reported is the first one */
        int stop = c >= jb->nchunks || c > jb->err_chunk;
        pthread_mutex_unlock(&jb->lock);
        if (stop) break;
        int64_t j0 = c * CHUNK, nj = m - j0 < CHUNK ? m - j0 : CHUNK;
        tg_error e;
        jb->src(jb->ctx, jb->g->i0, n, j0, nj, buf);
        if (chunk_prepare(jb->g, j0, nj, buf, &jb->cmiss[c], jb->what, &e)) {
            pthread_mutex_lock(&jb->lock);
            if (c < jb->err_chunk) {
                jb->err_chunk = c;
                jb->err = e;
            }
            pthread_mutex_unlock(&jb->lock);
            continue;
        }
        chunk_encode(jb->g, j0, nj, buf);
    }
    free(buf);
    return NULL;
}

/* Counts (@p fill 0) or places (@p fill 1) one missing call in row r of @p l. Counting: a[r + 1]
 * counts row r, -2 when the block would pass 2^31-1 calls. Placing: a[r] is row r's next free
 * slot among the table rows, which start at a + rows + 1. */
static int rows_add(miss_rows *l, int64_t rows, int64_t r, int32_t t, int fill) {
    if (fill) {
        l->a[rows + 1 + l->a[r]++] = t;
        return 0;
    }
    if (l->len >= (size_t)INT32_MAX) return -2;
    l->a[r + 1]++;
    l->len++;
    return 0;
}

/* Runs the chunks on as many threads as the host pool has (the CPUs this process may use),
 * then sorts the missing calls into the block lists by output row: one pass counts, one places
 * them in chunk order (table rows ascending within a row). */
static tg_status build_chunks(build_job *jb, tg_error *err) {
    int64_t nth = tg_parallel_threads(); /* at most 256 */
    if (nth > jb->nchunks) nth = jb->nchunks;
    pthread_t th[256];
    int64_t started = 0;
    for (; started < nth - 1; started++)
        if (pthread_create(&th[started], NULL, build_worker, jb)) break;
    build_worker(jb); /* this thread works too (alone if no thread could start) */
    for (int64_t t = 0; t < started; t++) pthread_join(th[t], NULL);
    if (jb->err_chunk < jb->nchunks) {
        *err = jb->err;
        return jb->err.status;
    }
    tg_geno *g = jb->g;
    for (int fill = 0; fill < 2; fill++) {
        for (int64_t c = 0; c < jb->nchunks; c++) {
            const int32_t *a = jb->cmiss[c].a;
            for (int32_t e = 0; e < a[0]; e++) {
                int64_t i = a[1 + 2 * e], j = a[2 + 2 * e];
                int64_t rbk = block_of(&g->rbl, i), sbk = block_of(&g->sbl, j);
                int r = rows_add(&g->rmiss[rbk], block_len(&g->rbl, rbk), i - g->rbl.start[rbk],
                                 (int32_t)j, fill);
                if (!r)
                    r = rows_add(&g->tmiss[sbk], block_len(&g->sbl, sbk), j - g->sbl.start[sbk],
                                 (int32_t)i, fill);
                if (r) return miss_error(r, jb->what, err);
            }
        }
        for (int trans = 0; trans < 2; trans++) {
            const blocks *bl = trans ? &g->sbl : &g->rbl;
            for (int64_t b = 0; b < bl->count; b++) {
                miss_rows *l = trans ? &g->tmiss[b] : &g->rmiss[b];
                int64_t rows = block_len(bl, b);
                if (!fill) { /* counts to starts, then room for the table rows */
                    for (int64_t r = 0; r < rows; r++) l->a[r + 1] += l->a[r];
                    int32_t *a = realloc(l->a, l->len * sizeof *a);
                    if (!a) return miss_error(-1, jb->what, err);
                    l->a = a;
                } else { /* each a[r] went from row r's start to its end: back to the starts */
                    memmove(l->a + 1, l->a, (size_t)rows * sizeof *l->a);
                    l->a[0] = 0;
                }
            }
        }
    }
    return TG_OK;
}

/* Collective with several ranks: the frequencies are summed over them. */
static tg_status build(int64_t n, int64_t m, int scale, int64_t rb, int64_t sb,
                       tg_geno_source src, const void *ctx, const char *what, tg_geno **out,
                       tg_error *err) {
    *out = NULL;
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
    if ((st = frequencies(g, scale, src, ctx, what, err))) {
        tg_geno_free(g);
        return st;
    }
    build_job jb = {.g = g, .src = src, .ctx = ctx, .what = what, .nchunks = cdiv(m, CHUNK)};
    jb.err_chunk = jb.nchunks;
    jb.cmiss = tg_calloc((size_t)jb.nchunks, sizeof *jb.cmiss, err);
    int ok = jb.cmiss != NULL;
    for (int64_t c = 0; ok && c < jb.nchunks; c++) ok = !miss_init(&jb.cmiss[c]);
    if (!ok) st = tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory", what);
    if (!st) {
        pthread_mutex_init(&jb.lock, NULL);
        st = build_chunks(&jb, err);
        pthread_mutex_destroy(&jb.lock);
    }
    for (int64_t c = 0; jb.cmiss && c < jb.nchunks; c++) free(jb.cmiss[c].a);
    free(jb.cmiss);
    if (st) {
        tg_geno_free(g);
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
    tg_int8_geno s = {geno, ld};
    return build(n, m, scale, rows_per_block, snps_per_block, tg_geno_source_int8, &s,
                 "genotype array", out, err);
}

tg_status tg_geno_from_int8(const int8_t *g, int64_t n, int64_t m, int64_t ld, int scale,
                            tg_geno **out, tg_error *err) {
    return tg_geno_from_int8_blocks(g, n, m, ld, scale, 0, 0, out, err);
}

tg_status tg_geno_from_bed(const tg_bed *bed, int scale, tg_geno **out, tg_error *err) {
    if (!bed || !out) return tg_error_set(err, TG_ERR_ARG, "tg_geno_from_bed: NULL argument");
    return build(bed->n_samples, bed->n_snps, scale, 0, 0, tg_geno_source_bed, bed, bed->prefix,
                 out, err);
}

tg_status tg_geno_from_source(int64_t n, int64_t m, int scale, tg_geno_source src,
                              const void *ctx, const char *what, tg_geno **out, tg_error *err) {
    return build(n, m, scale, 0, 0, src, ctx, what, out, err);
}

/* Registers every block once; StarPU then keeps valid copies on the devices that read them. */
static void register_blocks(tg_geno *g) {
    int64_t ng = cdiv(g->m, 5), nh = cdiv(g->nl, 5);
    starpu_vector_data_register(&g->hcoef, STARPU_MAIN_RAM, (uintptr_t)g->coef, 2 * (uint32_t)g->m,
                                sizeof(double));
    for (int64_t b = 0; b < g->rbl.count; b++) {
        uint32_t rows = (uint32_t)block_len(&g->rbl, b);
        starpu_matrix_data_register(&g->hr[b], STARPU_MAIN_RAM, (uintptr_t)g->rcodes[b], rows, rows,
                                    (uint32_t)ng, 1);
        starpu_vector_data_register(&g->hrm[b], STARPU_MAIN_RAM, (uintptr_t)g->rmiss[b].a,
                                    (uint32_t)g->rmiss[b].len, sizeof(int32_t));
    }
    for (int64_t b = 0; b < g->sbl.count; b++) {
        uint32_t cols = (uint32_t)block_len(&g->sbl, b);
        starpu_matrix_data_register(&g->ht[b], STARPU_MAIN_RAM, (uintptr_t)g->tcodes[b], cols, cols,
                                    (uint32_t)nh, 1);
        starpu_vector_data_register(&g->htm[b], STARPU_MAIN_RAM, (uintptr_t)g->tmiss[b].a,
                                    (uint32_t)g->tmiss[b].len, sizeof(int32_t));
    }
    g->registered = 1;
}

tg_status tg_geno_mul(tg_geno *g, int trans, int64_t k, tg_prec prec, const void *in, int64_t ldin,
                      void *out, int64_t ldout, tg_error *err) {
    if (!g || !in || !out) return tg_error_set(err, TG_ERR_ARG, "tg_geno_mul: NULL argument");
    if (trans != 0 && trans != 1)
        return tg_error_set(err, TG_ERR_ARG, "tg_geno_mul: trans %d: expected 0 or 1", trans);
    if (k < 1 || k > TG_FC_MAXK)
        return tg_error_set(err, TG_ERR_ARG, "tg_geno_mul: %lld columns: expected 1 to %d",
                            (long long)k, TG_FC_MAXK);
    if (prec != TG_FP64 && prec != TG_FP32)
        return tg_error_set(err, TG_ERR_ARG, "tg_geno_mul: precision %s: expected fp64 or fp32",
                            tg_prec_name(prec));
    const int64_t nt = trans ? g->n : g->m, nr = trans ? g->m : g->n;
    if (ldin < nt || ldout < nr || ldin > UINT32_MAX || ldout > UINT32_MAX)
        return tg_error_set(err, TG_ERR_ARG,
                            "tg_geno_mul: leading dimensions %lld (input, rows %lld) and %lld "
                            "(output, rows %lld) must be at least the row counts and below 2^32",
                            (long long)ldin, (long long)nt, (long long)ldout, (long long)nr);
    const size_t es = tg_prec_size(prec), mine = (size_t)g->i0 * es;
    /* the blocks' flops (tg_geno_mul_submit) add up to 2·k per genotype of this rank; the
     * products of the CG and the GRM, which go through tg_geno_mul_rows, are not phases */
    tg_phase *ph = tg_phase_open("snpmm", "flop", 2 * g->nl * g->m * k);
    tg_status st = trans ? tg_geno_mul_rows(g, 1, k, prec, (const char *)in + mine, ldin, out,
                                            ldout, err)
                         : tg_geno_mul_rows(g, 0, k, prec, in, ldin, (char *)out + mine, ldout,
                                            err);
    tg_phase_close(ph);
    if (!st && !trans)
        st = tg_runtime_gather_rows((char *)out + mine, ldout, out, ldout, g->n, k, es, err);
    return st;
}

/* The m × k @p out (leading dimension ld) summed over the ranks, packed when ld > m. */
static tg_status sum_over_ranks(const tg_geno *g, int64_t k, tg_prec prec, void *out, int64_t ld,
                                tg_error *err) {
    if (tg_runtime_nranks() == 1) return TG_OK;
    const size_t es = tg_prec_size(prec), col = (size_t)g->m * es;
    if (ld == g->m) {
        tg_runtime_sum(out, g->m * k, prec);
        return TG_OK;
    }
    char *buf = tg_malloc(col * (size_t)k, err);
    if (!buf) return TG_ERR_NOMEM;
    for (int64_t c = 0; c < k; c++) memcpy(buf + c * col, (char *)out + (size_t)(c * ld) * es, col);
    tg_runtime_sum(buf, g->m * k, prec);
    for (int64_t c = 0; c < k; c++) memcpy((char *)out + (size_t)(c * ld) * es, buf + c * col, col);
    free(buf);
    return TG_OK;
}

/* The task argument's offsets (codelets/fivecodes.h) and the check that the input is finite: a
 * column per call, on all cores, typed loops: done per product, so it must stay well under the
 * product itself (n·k values for Zᵀ·Λ̃). */
typedef struct {
    const tg_geno *g;
    int trans;
    tg_prec prec;
    const void *in;
    int64_t ldin, nt;
    double *offset;
    int64_t *bad; /* per column: the first row that is not finite, or -1 */
} offset_job;

static void column_offset(void *ctx, int64_t c) {
    const offset_job *jb = ctx;
    const double *xd = jb->prec == TG_FP64 ? (const double *)jb->in + c * jb->ldin : NULL;
    const float *xf = jb->prec == TG_FP64 ? NULL : (const float *)jb->in + c * jb->ldin;
    double s = 0;
    jb->bad[c] = -1;
    for (int64_t r = 0; r < jb->nt; r++) {
        double x = xd ? xd[r] : xf[r];
        if (!isfinite(x)) {
            jb->bad[c] = r;
            return;
        }
        s += jb->trans ? x : jb->g->coef[2 * r + 1] * x;
    }
    jb->offset[c] = s;
}

tg_status tg_geno_mul_rows(tg_geno *g, int trans, int64_t k, tg_prec prec, const void *in,
                           int64_t ldin, void *out, int64_t ldout, tg_error *err) {
    if (!tg_runtime_started())
        return tg_error_set(err, TG_ERR_RUNTIME, "tg_geno_mul: the runtime is not started");
    const size_t es = tg_prec_size(prec);
    const int64_t nt = trans ? g->nl : g->m;
    double offset[TG_FC_MAXK];
    int64_t bad[TG_FC_MAXK];
    offset_job jb = {g, trans, prec, in, ldin, nt, offset, bad};
    tg_parallel_for(k, column_offset, &jb);
    for (int64_t c = 0; c < k; c++)
        if (bad[c] >= 0) {
            int64_t r = bad[c];
            return tg_error_set(err, TG_ERR_ARG,
                                "tg_geno_mul: input row %lld (%s %lld), column %lld is %g: "
                                "expected a finite number",
                                (long long)(trans ? g->i0 + r : r), trans ? "sample" : "SNP",
                                (long long)(trans ? g->i0 + r : r), (long long)c,
                                tg_prec_load(prec, in, (size_t)(r + c * ldin)));
        }
    const int64_t nblk = tg_geno_nblocks(g, trans);
    const blocks *bl = trans ? &g->sbl : &g->rbl;
    starpu_data_handle_t hin, *hout = tg_calloc((size_t)nblk, sizeof *hout, err);
    if (!hout) return TG_ERR_NOMEM;
    tg_handle_matrix(&hin, in, (uint32_t)ldin, (uint32_t)nt, (uint32_t)k, es);
    for (int64_t b = 0; b < nblk; b++)
        tg_handle_matrix(&hout[b], (char *)out + (size_t)bl->start[b] * es, (uint32_t)ldout,
                         (uint32_t)block_len(bl, b), (uint32_t)k, es);
    /* pulled by the workers where they are CPUs only (tg_runtime_submit_set) */
    tg_status st = tg_geno_mul_submit(g, trans, (int)k, prec, offset, hin, hout, 1, err);
    for (int64_t b = 0; b < nblk; b++) tg_handle_free(hout[b]); /* waits, copies back */
    tg_handle_free(hin);
    free(hout);
    if (!st && trans) st = sum_over_ranks(g, k, prec, out, ldout, err);
    return st;
}

int64_t tg_geno_nblocks(const tg_geno *g, int trans) { return trans ? g->sbl.count : g->rbl.count; }

/* One product's blocks (tg_geno_mul_submit), as tg_runtime_submit_set submits them. */
typedef struct {
    tg_geno *g;
    struct tg_fivecodes_arg a;
    starpu_data_handle_t in;
    const starpu_data_handle_t *out;
    int64_t nt;
} product;

static int submit_block(void *ctx, int64_t b, int worker, void (*done)(void *), void *done_arg) {
    const product *p = ctx;
    const blocks *bl = p->a.trans ? &p->g->sbl : &p->g->rbl;
    struct tg_fivecodes_arg a = p->a;
    a.r0 = bl->start[b];
    return tg_insert_fivecodes(&a, a.trans ? p->g->ht[b] : p->g->hr[b], p->in, p->g->hcoef,
                               a.trans ? p->g->htm[b] : p->g->hrm[b], p->out[b],
                               2.0 * (double)block_len(bl, b) * (double)p->nt * (double)a.k,
                               worker, done, done_arg);
}

tg_status tg_geno_mul_submit(tg_geno *g, int trans, int k, tg_prec prec, const double *offset,
                             starpu_data_handle_t in, const starpu_data_handle_t *out_blocks,
                             int pull, tg_error *err) {
    if (!g->registered) register_blocks(g);
    product p = {.g = g,
                 .a = {.trans = trans, .prec = prec, .k = k},
                 .in = in,
                 .out = out_blocks,
                 .nt = trans ? g->nl : g->m};
    memcpy(p.a.offset, offset, (size_t)k * sizeof *offset);
    int ret = tg_runtime_submit_set(tg_geno_nblocks(g, trans), pull, submit_block, &p);
    if (ret)
        return tg_error_set(err, TG_ERR_RUNTIME, "genotype product: task submission failed (%d)",
                            ret);
    return TG_OK;
}
