/* The one pass (geno/pass.h): chunks of SNPs on every core, each read by tiles of samples that
 * stay in the cache: decoded and counted, its frequencies set, then decoded again tile by tile
 * for the encoder. A chunk whole in memory (12 MB at 300,000 samples) was written, counted and
 * swept by the encoder from memory: decoding twice costs less than that traffic. A chunk owns
 * its SNPs' counts, so no two threads write one counter. */
#include "geno/pass.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "geno/source.h"
#include "runtime/runtime.h"

typedef struct {
    const tg_geno_source *s;
    const tg_geno_range *ranges;
    int nranges;
    int64_t nl, chunk, nchunks;
    int64_t tile;               /* rows a tile */
    int count;                  /* count (and check) the chunk's values */
    int set_freq;               /* the frequencies follow from this chunk's counts */
    const tg_geno_encoder *enc; /* NULL: count only */
    tg_geno_counts *c;
    int64_t bad;                /* the lowest chunk holding a value that is not a genotype */
    pthread_mutex_t lock;
    int64_t failed;             /* the lowest chunk whose encoder failed (nchunks: none) */
    tg_error err;
    tg_phase *phase;            /* "genotypes": SNPs done */
} pass_job;

/* The first value of @p col (n rows) that is not a genotype, or -1. */
static int64_t first_bad(const int8_t *col, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (col[i] != TG_GENO_MISSING && (col[i] < 0 || col[i] > 2)) return i;
    return -1;
}

/* One branch-free sweep: 16-bit partial sums over blocks that cannot overflow them, and
 * vectorisation asked for here (the library builds at -O2, where gcc 12 vectorises only loops
 * without epilogues): a third of the bit-plane build's time at 262,144 samples before. */
enum { COUNT_BLOCK = 32767 }; /* values a 16-bit sum takes: at most 2 A1 alleles a value */
__attribute__((optimize("tree-vectorize"))) int tg_geno_count_column(const int8_t *col,
                                                                     int64_t n, int64_t *obs,
                                                                     int64_t *a1, int64_t *two) {
    uint8_t bad = 0;
    *obs = *a1 = *two = 0;
    for (int64_t b0 = 0; b0 < n; b0 += COUNT_BLOCK) {
        const int64_t b1 = n - b0 < COUNT_BLOCK ? n : b0 + COUNT_BLOCK;
        uint16_t o = 0, a = 0, t = 0;
        for (int64_t i = b0; i < b1; i++) {
            const int8_t v = col[i];
            bad |= (uint8_t)(v + 1) > 3;
            o += v != TG_GENO_MISSING;
            a += (uint8_t)(v > 0 ? v : 0);
            t += v == 2;
        }
        *obs += o;
        *a1 += a;
        *two += t;
    }
    return bad;
}

static int64_t tile_bytes = 1 << 20; /* a chunk's tile in L2 */

int64_t tg_geno_pass_tile_bytes(int64_t bytes) {
    const int64_t was = tile_bytes;
    if (bytes > 0) tile_bytes = bytes;
    return was;
}

static void lower_to(int64_t *at, int64_t c) {
    int64_t cur = __atomic_load_n(at, __ATOMIC_RELAXED);
    while (c < cur &&
           !__atomic_compare_exchange_n(at, &cur, c, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* Rows [i0, i0 + ni) of the rows the pass reads (its ranges end to end), SNPs [j0, j0 + nj). */
static void read_rows(const pass_job *jb, int64_t j0, int64_t nj, int64_t i0, int64_t ni,
                      int8_t *x, int64_t ld) {
    int64_t at = 0;
    for (int r = 0; r < jb->nranges && ni > 0; r++) {
        const int64_t len = jb->ranges[r].hi - jb->ranges[r].lo;
        if (i0 < at + len) {
            const int64_t k = i0 - at < 0 ? 0 : i0 - at, take = len - k < ni ? len - k : ni;
            tg_geno_source_read(jb->s, jb->ranges[r].lo + k, take, j0, nj, x, ld);
            x += take, i0 += take, ni -= take;
        }
        at += len;
    }
}

/* The chunk's counts, tile by tile; nonzero on a value that is not a genotype. */
static int count_chunk(pass_job *jb, int64_t j0, int64_t nj, int8_t *x) {
    int64_t *obs = jb->c->obs + j0, *a1 = jb->c->a1 + j0;
    memset(obs, 0, (size_t)nj * sizeof *obs);
    memset(a1, 0, (size_t)nj * sizeof *a1);
    for (int64_t i0 = 0; i0 < jb->nl; i0 += jb->tile) {
        const int64_t ni = jb->nl - i0 < jb->tile ? jb->nl - i0 : jb->tile;
        read_rows(jb, j0, nj, i0, ni, x, ni);
        for (int64_t t = 0; t < nj; t++) {
            int64_t o, a, two;
            if (tg_geno_count_column(x + t * ni, ni, &o, &a, &two)) return 1;
            obs[t] += o;
            a1[t] += a;
        }
    }
    for (int64_t t = 0; jb->set_freq && t < nj; t++)
        jb->c->freq[j0 + t] = tg_a1_freq(a1[t], obs[t]);
    return 0;
}

static void pass_chunk(void *ctx, int64_t c, void *scratch) {
    pass_job *jb = ctx;
    int8_t *x = scratch;
    const int64_t n = jb->nl, j0 = c * jb->chunk, m = jb->s->m;
    const int64_t nj = m - j0 < jb->chunk ? m - j0 : jb->chunk;
    if (c > __atomic_load_n(&jb->bad, __ATOMIC_RELAXED)) return; /* the error is known */
    if (jb->count && count_chunk(jb, j0, nj, x)) {
        lower_to(&jb->bad, c);
        return;
    }
    tg_error e;
    tg_status st = TG_OK;
    for (int64_t i0 = 0; jb->enc && !st && i0 < n; i0 += jb->tile) {
        const int64_t ni = n - i0 < jb->tile ? n - i0 : jb->tile;
        if (!jb->count || n > jb->tile) read_rows(jb, j0, nj, i0, ni, x, ni); /* else still in x */
        st = jb->enc->chunk(jb->enc->ctx, jb->c->freq, j0, nj, i0, ni, x, ni, &e);
    }
    if (st) {
        pthread_mutex_lock(&jb->lock);
        if (c < jb->failed) {
            jb->failed = c;
            jb->err = e;
        }
        pthread_mutex_unlock(&jb->lock);
    }
    tg_phase_add(jb->phase, nj);
}

/* The message of the first bad value of chunk @p c (in SNP order, then sample order). */
static tg_status bad_value(const pass_job *jb, int64_t c, tg_error *err) {
    int8_t *col = tg_malloc_n(jb->nl, 1, 1, err);
    if (!col) return TG_ERR_NOMEM;
    tg_status st = TG_OK;
    for (int64_t j = c * jb->chunk, k = -1; k < 0 && j < jb->s->m; j++) {
        read_rows(jb, j, 1, 0, jb->nl, col, jb->nl);
        if ((k = first_bad(col, jb->nl)) < 0) continue;
        int64_t i = k; /* the k-th row read: row lo + i of a range */
        int r = 0;
        for (; i >= jb->ranges[r].hi - jb->ranges[r].lo; r++)
            i -= jb->ranges[r].hi - jb->ranges[r].lo;
        st = tg_error_set(err, TG_ERR_ARG,
                          "%s: genotype of sample %lld at SNP %lld is %d: expected 0, 1, 2 or "
                          "TG_GENO_MISSING (-1)",
                          jb->s->what, (long long)(jb->ranges[r].lo + i), (long long)j, col[k]);
    }
    free(col);
    return st;
}

/* One run of the chunks: counting and/or encoding. */
static tg_status run(pass_job *jb, tg_error *err) {
    jb->bad = jb->failed = jb->nchunks;
    jb->phase = tg_phase_open_host("genotypes", "SNPs", jb->s->m);
    pthread_mutex_init(&jb->lock, NULL);
    const int nomem =
        tg_parallel_for_scratch(jb->nchunks, (size_t)(jb->tile * jb->chunk), pass_chunk, jb);
    tg_phase_close(jb->phase);
    pthread_mutex_destroy(&jb->lock);
    if (nomem)
        return tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory decoding the genotypes",
                            jb->s->what);
    if (jb->bad < jb->failed) return bad_value(jb, jb->bad, err);
    if (jb->failed < jb->nchunks) {
        *err = jb->err;
        return jb->err.status;
    }
    return TG_OK;
}

void tg_geno_counts_free(tg_geno_counts *c) {
    free(c->obs);
    free(c->freq);
    memset(c, 0, sizeof *c);
}

/* Counts summed over the ranks are those of every selected row: 0 ≤ a1 ≤ 2·obs ≤ 2n. Ranks that
 * summed different things (other inputs: the CLI checks them first, tg_cli_ranks_agree; a
 * library caller may not) would give any values, and 64-bit sums of them overflow below. */
static tg_status check_sums(const tg_geno_source *s, const tg_geno_counts *c, tg_error *err) {
    for (int64_t j = 0; j < s->m; j++)
        if (c->obs[j] < 0 || c->obs[j] > s->n || c->a1[j] < 0 || c->a1[j] > 2 * c->obs[j])
            return tg_error_set(err, TG_ERR_ARG, "%s: SNP %lld has %lld calls and %lld A1 alleles "
                                "summed over the ranks, for %lld samples: the ranks did not read "
                                "the same genotypes", s->what, (long long)j + 1,
                                (long long)c->obs[j], (long long)c->a1[j], (long long)s->n);
    return TG_OK;
}

tg_status tg_geno_pass(const tg_geno_source *s, const tg_geno_range *ranges, int nranges,
                       int collective, const double *freq, const tg_geno_encoder *enc,
                       tg_geno_counts *c, tg_error *err) {
    const int64_t m = s->m;
    memset(c, 0, sizeof *c);
    c->m = m;
    pass_job jb = {.s = s, .ranges = ranges, .nranges = nranges, .c = c,
                   .chunk = enc ? enc->snps : 64};
    for (int r = 0; r < nranges; r++) jb.nl += ranges[r].hi - ranges[r].lo;
    /* tiles of about tile_bytes, whole units of the encoder */
    const int64_t unit = enc ? enc->unit : 1, units = tile_bytes / jb.chunk / unit;
    jb.tile = unit * (units > 1 ? units : 1);
    if (jb.tile > jb.nl) jb.tile = jb.nl > 0 ? jb.nl : 1;
    jb.nchunks = (m + jb.chunk - 1) / jb.chunk;
    if (!(c->obs = tg_calloc_n(2, m, sizeof *c->obs, err)) ||
        !(c->freq = tg_malloc_n(m, 1, sizeof *c->freq, err))) {
        tg_geno_counts_free(c);
        return TG_ERR_NOMEM;
    }
    c->a1 = c->obs + m;
    if (freq) memcpy(c->freq, freq, (size_t)m * sizeof *freq);
    /* the frequencies must be every rank's before any encoding: then a first run counts */
    const int split = collective && tg_runtime_nranks() > 1 && !freq;
    jb.count = 1;
    jb.set_freq = !freq && !split;
    jb.enc = split ? NULL : enc;
    tg_status st = run(&jb, err);
    if (!st && collective) {
        tg_runtime_sum_int64(c->obs, 2 * m);
        st = check_sums(s, c, err);
    }
    for (int64_t j = 0; !st && split && j < m; j++) c->freq[j] = tg_a1_freq(c->a1[j], c->obs[j]);
    if (!st && split && enc) {
        jb.count = jb.set_freq = 0;
        jb.enc = enc;
        st = run(&jb, err);
    }
    if (st) {
        tg_geno_counts_free(c);
        return st;
    }
    int64_t rows = collective ? s->n : 0; /* collective: the ranks read every selected row */
    for (int r = 0; !collective && r < nranges; r++) rows += ranges[r].hi - ranges[r].lo;
    for (int64_t j = 0; j < m; j++) c->missing += rows - c->obs[j];
    return TG_OK;
}

void tg_geno_counts_stats(const double *freq, const int64_t *obs, int64_t n, int64_t m,
                          tg_snp_stats *stats) {
    for (int64_t j = 0; j < m; j++)
        stats[j] = (tg_snp_stats){.freq = freq[j],
                                  .missing = (double)(n - obs[j]) / (double)n,
                                  .n_obs = obs[j]};
}

tg_status tg_geno_source_stats(const tg_geno_source *s, tg_snp_stats *stats, tg_error *err) {
    const tg_geno_range all = {0, s->n};
    tg_geno_counts c;
    tg_status st = tg_geno_pass(s, &all, 1, 0, NULL, NULL, &c, err);
    if (st) return st;
    tg_geno_counts_stats(c.freq, c.obs, s->n, s->m, stats);
    tg_geno_counts_free(&c);
    return TG_OK;
}
