/* Genotype sources: the .bed (through io/plink.c's decoder) and caller-held int8 arrays behind
 * one decoder each, and the selection of samples and SNPs, applied here once so that every
 * encoder reads selected rows and columns only. A read is cut into runs of consecutive
 * selected samples and SNPs, one decoder call each (few runs when few samples or SNPs are
 * dropped), or, when the samples' runs are short, decodes the scattered samples directly. */
#include "geno/source.h"

#include <stdlib.h>
#include <string.h>

tg_status tg_geno_source_new(tg_geno_decode_fn decode, const void *ctx, int64_t n, int64_t m,
                             const char *what, tg_geno_source **out, tg_error *err) {
    *out = NULL;
    tg_geno_source *s = tg_calloc(1, sizeof *s, err);
    if (!s) return TG_ERR_NOMEM;
    *s = (tg_geno_source){.decode = decode, .ctx = ctx, .n_all = n, .m_all = m, .n = n, .m = m,
                          .what = what};
    *out = s;
    return TG_OK;
}

static void decode_bed(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                       int8_t *out, int64_t ld) {
    tg_bed_decode(ctx, i0, ni, j0, nj, out, ld);
}

static void decode_bed_rows(const void *ctx, const int64_t *rows, int64_t ni, int64_t j0,
                            int64_t nj, int8_t *out, int64_t ld) {
    tg_bed_decode_rows(ctx, rows, ni, j0, nj, out, ld);
}

tg_status tg_geno_source_bed(const tg_bed *bed, tg_geno_source **out, tg_error *err) {
    if (!bed) return tg_error_set(err, TG_ERR_ARG, "genotype source: NULL fileset");
    tg_status st = tg_geno_source_new(decode_bed, bed, bed->n_samples, bed->n_snps, bed->prefix,
                                      out, err);
    if (st) return st;
    (*out)->bed = bed;
    (*out)->decode_rows = decode_bed_rows;
    return TG_OK;
}

static void decode_int8(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                        int8_t *out, int64_t ld) {
    const tg_geno_source *s = ctx;
    for (int64_t t = 0; t < nj; t++)
        memcpy(out + t * ld, s->g + (size_t)(j0 + t) * (size_t)s->ld + (size_t)i0, (size_t)ni);
}

static void decode_int8_rows(const void *ctx, const int64_t *rows, int64_t ni, int64_t j0,
                             int64_t nj, int8_t *out, int64_t ld) {
    const tg_geno_source *s = ctx;
    for (int64_t t = 0; t < nj; t++) {
        const int8_t *col = s->g + (size_t)(j0 + t) * (size_t)s->ld;
        for (int64_t i = 0; i < ni; i++) out[i + t * ld] = col[rows[i]];
    }
}

tg_status tg_geno_source_int8(const int8_t *g, int64_t n, int64_t m, int64_t ld,
                              tg_geno_source **out, tg_error *err) {
    *out = NULL;
    if (!g || ld < n)
        return tg_error_set(err, TG_ERR_ARG, "genotype array %s, leading dimension %lld < n %lld",
                            g ? "given" : "NULL", (long long)ld, (long long)n);
    tg_status st = tg_geno_source_new(decode_int8, NULL, n, m, "genotype array", out, err);
    if (st) return st;
    (*out)->ctx = *out;
    (*out)->decode_rows = decode_int8_rows;
    (*out)->g = g;
    (*out)->ld = ld;
    return TG_OK;
}

void tg_geno_source_free(tg_geno_source *s) {
    if (!s) return;
    free(s->rows);
    free(s->cols);
    free(s);
}

/* A copy of idx[0..k) checked against [0, all); idx NULL: the first k, no copy. */
static tg_status select_one(const tg_geno_source *s, const int64_t *idx, int64_t k, int64_t all,
                            const char *kind, int64_t **copy, tg_error *err) {
    *copy = NULL;
    if (k < 1 || (!idx && k > all))
        return tg_error_set(err, TG_ERR_ARG, "%s: %lld %ss selected, the input has %lld: need 1 "
                            "to %lld", s->what, (long long)k, kind, (long long)all,
                            (long long)all);
    if (!idx) return TG_OK;
    for (int64_t r = 0; r < k; r++)
        if (idx[r] < 0 || idx[r] >= all)
            return tg_error_set(err, TG_ERR_ARG, "%s: %s index %lld (selection entry %lld) is "
                                "outside the input's %lld %ss", s->what, kind, (long long)idx[r],
                                (long long)r, (long long)all, kind);
    if (!(*copy = tg_malloc_n(k, 1, sizeof **copy, err))) return TG_ERR_NOMEM;
    memcpy(*copy, idx, (size_t)k * sizeof **copy);
    return TG_OK;
}

tg_status tg_geno_source_select(tg_geno_source *s, const int64_t *samples, int64_t n,
                                const int64_t *snps, int64_t m, tg_error *err) {
    int64_t *rows, *cols = NULL;
    tg_status st = select_one(s, samples, n, s->n_all, "sample", &rows, err);
    if (!st) st = select_one(s, snps, m, s->m_all, "SNP", &cols, err);
    if (st) {
        free(rows);
        return st;
    }
    free(s->rows);
    free(s->cols);
    s->rows = rows;
    s->cols = cols;
    s->n = n;
    s->m = m;
    return TG_OK;
}

int64_t tg_geno_source_n(const tg_geno_source *s) { return s->n; }
int64_t tg_geno_source_m(const tg_geno_source *s) { return s->m; }

const tg_sample *tg_geno_source_sample(const tg_geno_source *s, int64_t i) {
    return s->bed ? &s->bed->samples[s->rows ? s->rows[i] : i] : NULL;
}
const tg_snp *tg_geno_source_snp(const tg_geno_source *s, int64_t j) {
    return s->bed ? &s->bed->snps[s->cols ? s->cols[j] : j] : NULL;
}

/* The end of the run of consecutive entries of @p idx that starts at a (below b). */
static int64_t run_end(const int64_t *idx, int64_t a, int64_t b) {
    int64_t e = a + 1;
    while (idx && e < b && idx[e] == idx[e - 1] + 1) e++;
    return idx ? e : b;
}

/* Whether selected rows [i0, i0 + ni) are better read scattered, by the format's decode_rows,
 * than run by run: runs shorter than 16 on average (samples of two interleaved classes, a
 * random test split), where a decoder call per run would cost more than its samples. */
static int scattered(const tg_geno_source *s, int64_t i0, int64_t ni) {
    int64_t runs = 1;
    for (int64_t i = i0 + 1; i < i0 + ni; i++) runs += s->rows[i] != s->rows[i - 1] + 1;
    return s->decode_rows && runs * 16 > ni;
}

void tg_geno_source_read(const tg_geno_source *s, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                         int8_t *out, int64_t ld) {
    for (int64_t ja = j0, jb; ja < j0 + nj; ja = jb) {
        jb = run_end(s->cols, ja, j0 + nj);
        const int64_t fj = s->cols ? s->cols[ja] : ja;
        int8_t *o = out + (ja - j0) * ld;
        if (ni > 0 && s->rows && scattered(s, i0, ni)) {
            s->decode_rows(s->ctx, s->rows + i0, ni, fj, jb - ja, o, ld);
            continue;
        }
        for (int64_t ia = i0, ib; ia < i0 + ni; ia = ib) {
            ib = run_end(s->rows, ia, i0 + ni);
            s->decode(s->ctx, s->rows ? s->rows[ia] : ia, ib - ia, fj, jb - ja, o + (ia - i0), ld);
        }
    }
}
