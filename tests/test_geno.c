/* The genotype preparation of src/geno against naive references that decode the .bed bytes by
 * hand (sample i of SNP j is the 2-bit code at byte 3 + j·ceil(n/4) + i/4, bits 2·(i mod 4):
 * 00 → 2, 01 → missing, 10 → 1, 11 → 0). A fileset of 203 samples (padding codes in the last
 * byte) × 57 SNPs, 8% missing calls, one monomorphic SNP, one all-missing, one all-homozygous-A1;
 * three sample selections (every sample; scattered samples with a repeat and a reversed stretch,
 * which the source decodes one by one, tg_bed_decode_rows; long runs, read run by run) and a
 * SNP selection with a repeat and a reversed stretch:
 *  - tg_geno_source_read, whole and at cut points, gives the selected genotypes, from the .bed
 *    and (scattered) from the same genotypes as an int8 array;
 *  - the one pass over two ranges of rows gives each SNP's calls, A1 alleles, frequency (the
 *    double a1 / 2·calls, bit for bit) and the missing calls; tg_geno_source_stats and
 *    tg_bed_stats give the same statistics over every sample;
 *  - each encoder fed by the pass equals a naive encoding of the same selection: the KRR INT8
 *    panels (gaussian, ibs, linear; the frequencies counted, and given with a panel left to
 *    another rank), the ridge SNP panels ([X0 | M], μ and s), the 5codes (both copies, the
 *    missing-call lists, the frequencies and centring coefficients);
 *  - the epistasis bit planes built from the .bed's codes, classes in runs and mixed, with PEXT
 *    and without;
 *  - a value that is not a genotype, and a selection outside the input, are errors naming them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "common.h"
#include "codelets/epistasis.h"
#include "geno/codes5.h"
#include "geno/panels.h"
#include "geno/pass.h"
#include "geno/planes.h"
#include "geno/source.h"
#include "tap.h"

enum { N = 203, M = 57, MSEL = 40, NB = 16 };

static uint8_t *bed_bytes; /* the .bed file, read whole */

/* The naive decoder: format sample i of format SNP j. */
static int8_t naive(int64_t i, int64_t j) {
    const int64_t bps = (N + 3) / 4;
    const int code = bed_bytes[3 + j * bps + i / 4] >> (2 * (i % 4)) & 3;
    return code == 0 ? 2 : code == 1 ? TG_GENO_MISSING : code == 2 ? 1 : 0;
}

/* A selection: format rows and SNPs (NULL: all). */
typedef struct {
    const char *name;
    const int64_t *rows, *cols;
    int64_t n, m;
} sel;

static int64_t row_of(const sel *s, int64_t i) { return s->rows ? s->rows[i] : i; }
static int64_t col_of(const sel *s, int64_t j) { return s->cols ? s->cols[j] : j; }
static int8_t val(const sel *s, int64_t i, int64_t j) { return naive(row_of(s, i), col_of(s, j)); }

/* Naive counts over selected rows [lo, hi) of two ranges. */
typedef struct {
    int64_t obs[M], a1[M], missing;
    double freq[M];
} ncounts;

static void naive_counts(const sel *s, const tg_geno_range *r, int nr, ncounts *c) {
    memset(c, 0, sizeof *c);
    for (int64_t j = 0; j < s->m; j++) {
        for (int k = 0; k < nr; k++)
            for (int64_t i = r[k].lo; i < r[k].hi; i++) {
                int8_t v = val(s, i, j);
                if (v == TG_GENO_MISSING) {
                    c->missing++;
                } else {
                    c->obs[j]++;
                    c->a1[j] += v;
                }
            }
        c->freq[j] = c->obs[j] ? (double)c->a1[j] / (2.0 * (double)c->obs[j]) : NAN;
    }
}

static int same_double(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static tg_geno_source *open_sel(const tg_bed *bed, const sel *s) {
    tg_geno_source *src;
    tg_error err;
    if (tg_geno_source_bed(bed, &src, &err) ||
        tg_geno_source_select(src, s->rows, s->n, s->cols, s->m, &err)) {
        printf("Bail out! %s\n", err.msg);
        exit(1);
    }
    return src;
}

static void check_read(const tg_geno_source *src, const sel *s) {
    int8_t *out = malloc((size_t)(s->n + 3) * (size_t)s->m);
    int64_t bad = 0;
    /* whole, then pieces cut at sample and SNP boundaries that split runs */
    const int64_t icut[] = {0, 1, 37, s->n / 2, s->n - 1, s->n}, jcut[] = {0, 3, 17, s->m};
    for (int a = 0; a < 6; a++)
        for (int b = a + 1; b < 6; b++)
            for (int c = 0; c < 4; c++)
                for (int d = c + 1; d < 4; d++) {
                    const int64_t i0 = icut[a], ni = icut[b] - i0, j0 = jcut[c], nj = jcut[d] - j0;
                    if (ni <= 0) continue;
                    memset(out, 0x55, (size_t)(s->n + 3) * (size_t)s->m);
                    tg_geno_source_read(src, i0, ni, j0, nj, out, ni + 3);
                    for (int64_t j = 0; j < nj; j++)
                        for (int64_t i = 0; i < ni + 3; i++)
                            bad += out[i + j * (ni + 3)] != (i < ni ? val(s, i0 + i, j0 + j) : 0x55);
                }
    ok(bad == 0, "%s: tg_geno_source_read gives the selected genotypes, rows past ni untouched "
       "(%lld wrong)", s->name, (long long)bad);
    /* the fixture names sample i "S<i>" and SNP j "v<j>" */
    int64_t wrong_ids = (tg_geno_source_n(src) != s->n) + (tg_geno_source_m(src) != s->m);
    char want[32];
    for (int64_t i = 0; i < s->n; i++) {
        snprintf(want, sizeof want, "S%lld", (long long)row_of(s, i));
        wrong_ids += strcmp(tg_geno_source_sample(src, i)->iid, want) != 0;
    }
    for (int64_t j = 0; j < s->m; j++) {
        snprintf(want, sizeof want, "v%lld", (long long)col_of(s, j));
        wrong_ids += strcmp(tg_geno_source_snp(src, j)->id, want) != 0;
    }
    ok(wrong_ids == 0, "%s: the source's sizes, sample and SNP ids follow the selection (%lld wrong)",
       s->name, (long long)wrong_ids);
    free(out);
}

static void check_pass(const tg_geno_source *src, const sel *s) {
    const tg_geno_range r[2] = {{0, s->n / 3}, {s->n / 2, s->n}};
    ncounts want;
    naive_counts(s, r, 2, &want);
    tg_geno_counts c;
    tg_error err;
    int64_t bad = 0;
    tg_status st = tg_geno_pass(src, r, 2, 0, NULL, NULL, &c, &err);
    for (int64_t j = 0; !st && j < s->m; j++)
        bad += c.obs[j] != want.obs[j] || c.a1[j] != want.a1[j] ||
               !same_double(c.freq[j], want.freq[j]);
    ok(!st && !bad && c.missing == want.missing, "%s: the pass over two ranges counts calls, A1 "
       "alleles and %lld missing calls, frequencies bit for bit (%lld SNPs wrong; %s)", s->name,
       (long long)want.missing, (long long)bad, st ? err.msg : "ok");
    if (!st) tg_geno_counts_free(&c);
}

static void check_stats(const tg_bed *bed, const tg_geno_source *src, const sel *s) {
    const tg_geno_range all = {0, s->n};
    ncounts want;
    naive_counts(s, &all, 1, &want);
    tg_snp_stats *st = calloc((size_t)s->m, sizeof *st), *bs = calloc(M, sizeof *bs);
    tg_error err;
    int64_t bad = 0;
    tg_status e = tg_geno_source_stats(src, st, &err);
    tg_bed_stats(bed, bs);
    for (int64_t j = 0; !e && j < s->m; j++) {
        double miss = (double)(s->n - want.obs[j]) / (double)s->n;
        bad += st[j].n_obs != want.obs[j] || !same_double(st[j].freq, want.freq[j]) ||
               !same_double(st[j].missing, miss);
        if (!s->rows) /* tg_bed_stats counts every sample by its byte tables */
            bad += bs[col_of(s, j)].n_obs != want.obs[j] ||
                   !same_double(bs[col_of(s, j)].freq, want.freq[j]) ||
                   !same_double(bs[col_of(s, j)].missing, miss);
    }
    ok(!e && !bad, "%s: tg_geno_source_stats%s equal the naive statistics (%lld wrong; %s)",
       s->name, s->rows ? "" : " and tg_bed_stats", (long long)bad, e ? err.msg : "ok");
    free(st);
    free(bs);
}

/* The KRR panels of the selection for @p kind; with @p given, panel 1 is another rank's (not
 * read, not written) and the frequencies are those given. */
static void check_kpanels(const tg_geno_source *src, const sel *s, tg_kernel kind,
                          const double *given) {
    const int np = (int)((s->n + NB - 1) / NB), w = kind == TG_KERNEL_IBS ? 2 : 1;
    const int64_t enc_pad = (w * s->m + 15) / 16 * 16;
    int8_t **enc = calloc((size_t)np, sizeof *enc);
    int64_t *off = calloc((size_t)np, sizeof *off);
    tg_geno_range *r = calloc((size_t)np, sizeof *r);
    int nr = 0;
    for (int p = 0, at = 0; p < np; p++) {
        const int64_t rows = p == np - 1 ? s->n - (int64_t)p * NB : NB;
        enc[p] = calloc((size_t)(rows * enc_pad), 1);
        if (given && p == 1) continue;
        r[nr++] = (tg_geno_range){(int64_t)p * NB, (int64_t)p * NB + rows};
        off[p] = at;
        at += (int)rows;
    }
    int8_t *other = enc[1];
    if (given) enc[1] = NULL;
    tg_kpanels kp = {kind, s->n, enc_pad, NB, np, enc, off};
    const tg_geno_encoder e = {tg_kpanels_chunk, &kp, TG_KPANELS_SNPS, 1};
    tg_geno_counts c;
    tg_error err;
    tg_status st = tg_geno_pass(src, r, nr, !given, given, &e, &c, &err);
    const tg_geno_range all = {0, s->n};
    ncounts want;
    naive_counts(s, &all, 1, &want);
    const double *freq = given ? given : want.freq;
    int64_t bad = 0;
    for (int64_t i = 0; !st && i < s->n; i++) {
        const int p = (int)(i / NB);
        const int8_t *col = (given && p == 1 ? other : enc[p]) + (i % NB) * enc_pad;
        for (int64_t k = 0; k < enc_pad; k++) {
            const int64_t j = k / w;
            int8_t want_e = 0;
            if (given && p == 1) {
                want_e = 0; /* another rank's panel: untouched */
            } else if (j < s->m && !isnan(freq[j])) {
                const int near = (int)floor(2 * freq[j] + 0.5);
                int v = val(s, i, j) == TG_GENO_MISSING ? near : val(s, i, j);
                if (kind == TG_KERNEL_LINEAR) v -= near;
                want_e = (int8_t)(w == 1 ? v : k % 2 ? v >= 2 : v >= 1);
            }
            bad += col[k] != want_e;
        }
    }
    ok(!st && !bad, "%s: %s INT8 panels (frequencies %s) equal the naive encodings (%lld wrong; "
       "%s)", s->name, tg_kernel_name(kind), given ? "given, panel 1 another rank's" : "counted",
       (long long)bad, st ? err.msg : "ok");
    if (!st) tg_geno_counts_free(&c);
    if (given) enc[1] = other;
    for (int p = 0; p < np; p++) free(enc[p]);
    free(enc);
    free(off);
    free(r);
}

static void check_ridge(const tg_geno_source *src, const sel *s) {
    const int64_t npad = (s->n + 15) / 16 * 16;
    const int nbj = 9;
    const tg_geno_range all = {0, s->n};
    ncounts want;
    naive_counts(s, &all, 1, &want);
    int8_t *x = malloc((size_t)(npad * 2 * nbj));
    double vec[2 * 9];
    int64_t bad = 0;
    for (int64_t j0 = 0; j0 < s->m; j0 += nbj) {
        const int nj = s->m - j0 < nbj ? (int)(s->m - j0) : nbj;
        memset(x, 0x55, (size_t)(npad * 2 * nbj));
        tg_geno_ridge_panel(src, want.freq, 1, j0, nj, npad, 1, x, vec);
        for (int t = 0; t < nj; t++) {
            const double p = want.freq[j0 + t];
            const int used = p > 0 && p < 1;
            bad += !same_double(vec[t], used ? 2 * p : 0) ||
                   !same_double(vec[nj + t], used ? 1 / sqrt(2 * p * (1 - p)) : 0);
            for (int64_t i = 0; i < npad; i++) {
                const int8_t v = i < s->n ? val(s, i, j0 + t) : 0;
                const int obs = i < s->n && v != TG_GENO_MISSING;
                bad += x[i + t * npad] != (obs ? v : 0) || x[i + (nj + t) * npad] != obs;
            }
        }
    }
    ok(!bad, "%s: the ridge panels [X0 | M] with μ and s equal the naive ones (%lld wrong)",
       s->name, (long long)bad);
    free(x);
}

/* The 5codes copies, the missing-call lists and the coefficients against naive ones. */
static void check_codes5(const tg_geno_source *src, const sel *s) {
    tg_geno *g;
    tg_error err;
    tg_status st = tg_geno_from_source_blocks(src, 1, 13, 11, &g, &err);
    if (!ok(!st, "%s: 5codes prepared (%s)", s->name, st ? err.msg : "ok")) return;
    const tg_geno_range all = {0, s->n};
    ncounts want;
    naive_counts(s, &all, 1, &want);
    int64_t bad = 0, excluded = 0;
    /* the digit of (i, j): the genotype, 0 where missing or the SNP excluded */
    int8_t *d = malloc((size_t)(s->n * s->m));
    for (int64_t j = 0; j < s->m; j++) {
        const double p = want.freq[j];
        const int used = p > 0 && p < 1;
        excluded += !used;
        const double w = used ? 1 / sqrt(2 * p * (1 - p)) : 0;
        bad += !same_double(g->freq[j], p) || !same_double(g->coef[2 * j], w) ||
               !same_double(g->coef[2 * j + 1], used ? 2 * p * w : 0);
        for (int64_t i = 0; i < s->n; i++) {
            const int8_t v = val(s, i, j);
            d[i + j * s->n] = (int8_t)(used && v != TG_GENO_MISSING ? v : 0);
        }
    }
    for (int64_t b = 0; b < g->rbl.count; b++) { /* samples × groups of 5 SNPs */
        const int64_t i0 = g->rbl.start[b], rows = g->rbl.start[b + 1] - i0;
        const int32_t *a = g->rmiss[b].a;
        for (int64_t i = 0; i < rows; i++) {
            for (int64_t q = 0; q < (s->m + 4) / 5; q++) {
                int code = 0;
                for (int64_t t = 4; t >= 0; t--)
                    code = 3 * code + (5 * q + t < s->m ? d[i0 + i + (5 * q + t) * s->n] : 0);
                bad += g->rcodes[b][q * block_ld(&g->rbl, b) + i] != code;
            }
            int32_t at = a[i]; /* row i's missing calls of used SNPs, ascending */
            for (int64_t j = 0; j < s->m; j++)
                if (val(s, i0 + i, j) == TG_GENO_MISSING && g->coef[2 * j] != 0)
                    bad += at >= a[i + 1] || a[rows + 1 + at++] != j;
            bad += at != a[i + 1];
        }
    }
    for (int64_t b = 0; b < g->sbl.count; b++) { /* SNPs × groups of 5 samples */
        const int64_t j0 = g->sbl.start[b], cols = g->sbl.start[b + 1] - j0;
        const int32_t *a = g->tmiss[b].a;
        for (int64_t t = 0; t < cols; t++) {
            for (int64_t h = 0; h < (s->n + 4) / 5; h++) {
                int code = 0;
                for (int64_t u = 4; u >= 0; u--)
                    code = 3 * code + (5 * h + u < s->n ? d[5 * h + u + (j0 + t) * s->n] : 0);
                bad += g->tcodes[b][h * block_ld(&g->sbl, b) + t] != code;
            }
            int32_t at = a[t];
            for (int64_t i = 0; i < s->n; i++)
                if (val(s, i, j0 + t) == TG_GENO_MISSING && g->coef[2 * (j0 + t)] != 0)
                    bad += at >= a[t + 1] || a[cols + 1 + at++] != i;
            bad += at != a[t + 1];
        }
    }
    ok(!bad && g->excluded == excluded, "%s: 5codes of both copies, missing-call lists, "
       "frequencies and coefficients equal the naive ones, %lld SNPs excluded (%lld wrong)",
       s->name, (long long)excluded, (long long)bad);
    free(d);
    tg_geno_free(g);
}

/* tg_planes_build's report of a block built: counted, and the block and its missing calls
 * compared with the naive ones then (it must be whole when reported). */
typedef struct {
    const uint64_t *want, *got;
    int64_t block_words;
    int64_t reports[NB], wrong_then[NB], want_missing[NB];
} built_check;

static void block_built(void *ctx, int64_t b, int64_t missing) {
    built_check *c = ctx;
    __atomic_fetch_add(&c->reports[b], 1, __ATOMIC_RELAXED);
    for (int64_t w = b * c->block_words; w < (b + 1) * c->block_words; w++)
        c->wrong_then[b] += c->want[w] != c->got[w];
    c->wrong_then[b] += missing != c->want_missing[b];
}

/* Bit planes of the SNPs of @p s (its samples unused: classes are by .fam sample, cls[i]), in a
 * buffer of garbage that every word must overwrite, against planes set bit by bit, with PEXT
 * (where the CPU has it) or its portable equivalent; each block reported once, whole. */
static void check_planes(const tg_bed *bed, const sel *s, const int8_t *cls, const char *what,
                         int pext) {
    enum { B = 6 }; /* the last block of 40 SNPs has 2 past m */
    int64_t n[2] = {0, 0}, want_missing = 0, missing = -1, bad = 0, reports = 0;
    for (int64_t i = 0; i < N; i++)
        if (cls[i] >= 0) n[cls[i]]++;
    tg_planes pl = {NULL, B, {4 * ((n[0] + 255) / 256), 4 * ((n[1] + 255) / 256)},
                    {n[0], n[1]}, 0};
    pl.block_words = 3 * B * (pl.words[0] + pl.words[1]);
    const int64_t nblk = (s->m + B - 1) / B;
    const size_t words = (size_t)(nblk * pl.block_words);
    uint64_t *want = calloc(words, sizeof *want); /* padding bits and SNPs past m: zeros */
    built_check bc = {want, NULL, pl.block_words, {0}, {0}, {0}};
    for (int64_t j = 0; j < s->m; j++)
        for (int cl = 0; cl < 2; cl++)
            for (int64_t i = 0, t = 0; i < N; i++) {
                if (cls[i] != cl) continue;
                const int8_t v = naive(i, col_of(s, j));
                want_missing += v == TG_GENO_MISSING;
                bc.want_missing[j / B] += v == TG_GENO_MISSING;
                for (int p = 0; p < 3; p++)
                    if (p == 2 ? v != TG_GENO_MISSING : v == p)
                        want[(j / B) * pl.block_words +
                             tg_epi_plane_offset(B, pl.words, cl, (int)(j % B), p) + t / 64] |=
                            (uint64_t)1 << (t % 64);
                t++;
            }
    pl.planes = malloc(words * sizeof *pl.planes);
    memset(pl.planes, 0xa5, words * sizeof *pl.planes); /* garbage */
    bc.got = pl.planes;
    const int used = tg_planes_use_pext(pext);
    tg_error err;
    tg_status st = tg_planes_build(bed, cls, s->cols, s->m, &pl, 0, block_built, &bc, &missing,
                                   &err);
    tg_planes_use_pext(-1);
    for (size_t w = 0; !st && w < words; w++) bad += __builtin_popcountll(want[w] ^ pl.planes[w]);
    for (int64_t b = 0; b < nblk; b++) reports += bc.reports[b] == 1 && !bc.wrong_then[b];
    ok(!st && !bad && missing == want_missing && reports == nblk, "%s, %s: bit planes of %lld "
       "controls and %lld cases, %lld SNPs, equal the naive ones, %lld missing calls, each of %lld "
       "blocks reported once when whole with its missing calls (%lld wrong bits, %lld missing "
       "counted, %lld blocks reported right; %s)", s->name, what, (long long)n[0], (long long)n[1], (long long)s->m,
       (long long)want_missing, (long long)nblk, (long long)bad, (long long)missing,
       (long long)reports, used ? "PEXT" : "portable");
    free(want);
    free(pl.planes);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    tap_plan(6 * 11 + 4 + 4); /* per selection and tiling: 11 results (check_read and
                               * check_codes5 give two); planes: 4 */
    static int8_t geno[N * M];
    for (int j = 0; j < M; j++) {
        const double p = 0.05 + 0.9 * tg_rng_uniform(&r);
        for (int i = 0; i < N; i++) {
            int8_t x = (int8_t)((tg_rng_uniform(&r) < p) + (tg_rng_uniform(&r) < p));
            if (j == 4) x = 1;               /* monomorphic */
            if (j == 9) x = 2;               /* all A1: p = 1 */
            if (tg_rng_uniform(&r) < 0.08 || j == 11) x = TG_GENO_MISSING; /* 11: all missing */
            geno[i + j * N] = x;
        }
    }
    char dir[] = "/tmp/tg-geno-XXXXXX", prefix[64];
    if (!mkdtemp(dir)) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    snprintf(prefix, sizeof prefix, "%s/g", dir);
    tg_error err;
    tg_bed bed;
    if (write_bed(prefix, geno, N, M, &err) || tg_bed_open(prefix, &bed, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    char path[80];
    snprintf(path, sizeof path, "%s.bed", prefix);
    FILE *f = fopen(path, "rb");
    const size_t bytes = 3 + (size_t)M * ((N + 3) / 4);
    bed_bytes = malloc(bytes);
    if (!f || fread(bed_bytes, 1, bytes, f) != bytes) {
        printf("Bail out! cannot read %s\n", path);
        return 1;
    }
    fclose(f);

    /* scattered: every 3rd sample, a reversed stretch, a repeat; runs: every sample but each
     * 25th; SNPs: a reversed stretch, a repeat, gaps */
    int64_t scat[N], runs[N], cols[MSEL], ns = 0, nr = 0, nc = 0;
    for (int64_t i = 0; i < N; i += 3) scat[ns++] = i;
    for (int64_t i = N - 1; i > N - 20; i--) scat[ns++] = i;
    scat[ns++] = 5;
    for (int64_t i = 0; i < N; i++)
        if (i % 25 != 24) runs[nr++] = i;
    for (int64_t j = M - 1; j > M - 8; j--) cols[nc++] = j;
    for (int64_t j = 0; nc < MSEL - 1; j += 1 + (j % 4 == 3)) cols[nc++] = j;
    cols[nc++] = 9;
    const sel sels[3] = {{"every sample and SNP", NULL, NULL, N, M},
                         {"scattered samples, selected SNPs", scat, cols, ns, nc},
                         {"runs of samples, selected SNPs", runs, cols, nr, nc}};
    /* each selection read by the pass in one tile (its default at these sizes), then in tiles
     * of 6–10 rows (encoders of 64 and 40 SNPs), which cross the ranges' ends */
    const int64_t one_tile = tg_geno_pass_tile_bytes(400);
    for (int k = 0; k < 6; k++) {
        sel tiled = sels[k % 3];
        char name[96];
        snprintf(name, sizeof name, "%s%s", tiled.name, k < 3 ? "" : ", tiles of a few rows");
        tiled.name = name;
        tg_geno_pass_tile_bytes(k < 3 ? one_tile : 400);
        const sel *s = &tiled;
        tg_geno_source *src = open_sel(&bed, s);
        check_read(src, s);
        check_pass(src, s);
        check_stats(&bed, src, s);
        for (int kind = 0; kind < 3; kind++) check_kpanels(src, s, (tg_kernel)kind, NULL);
        double given[M]; /* a training cohort's: other values, one SNP without a call */
        for (int64_t j = 0; j < s->m; j++) given[j] = j == 2 ? NAN : 0.1 + 0.8 * (double)j / M;
        check_kpanels(src, s, TG_KERNEL_LINEAR, given);
        check_ridge(src, s);
        check_codes5(src, s); /* two results: prepared, equal */
        tg_geno_source_free(src);
    }

    /* planes: classes in runs (whole 32-sample words of one class), and scattered, some samples
     * left out; the selected SNPs (not a multiple of the block) */
    int8_t runs_cls[N], mixed_cls[N];
    for (int64_t i = 0; i < N; i++) {
        runs_cls[i] = (int8_t)(i >= 70);
        mixed_cls[i] = (int8_t)(tg_rng_uniform(&r) < 0.15 ? -1 : tg_rng_uniform(&r) < 0.4);
    }
    for (int pext = 0; pext < 2; pext++) {
        check_planes(&bed, &sels[1], runs_cls, "classes in runs", pext);
        check_planes(&bed, &sels[1], mixed_cls, "classes mixed, samples left out", pext);
    }

    /* the scattered selection of the same genotypes held as an int8 array */
    tg_geno_source *src;
    int8_t *got = malloc((size_t)(ns * nc));
    int64_t wrong = 0;
    tg_status st = tg_geno_source_int8(geno, N, M, N, &src, &err);
    if (!st) st = tg_geno_source_select(src, scat, ns, cols, nc, &err);
    if (!st) tg_geno_source_read(src, 0, ns, 0, nc, got, ns);
    for (int64_t j = 0; !st && j < nc; j++)
        for (int64_t i = 0; i < ns; i++) wrong += got[i + j * ns] != val(&sels[1], i, j);
    ok(!st && !wrong, "int8 array, scattered samples: the selected genotypes (%lld wrong; %s)",
       (long long)wrong, st ? err.msg : "ok");
    tg_geno_source_free(src);
    free(got);

    /* a value that is not a genotype, in an int8 array, named by its sample and SNP */
    geno[17 + 30 * N] = 3;
    st = tg_geno_source_int8(geno, N, M, N, &src, &err);
    tg_geno_counts c;
    const tg_geno_range all = {0, N};
    if (!st) st = tg_geno_pass(src, &all, 1, 0, NULL, NULL, &c, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "sample 17 at SNP 30 is 3"), "a genotype 3 is named: "
       "%s", err.msg);
    tg_geno_source_free(src);
    /* a selection outside the input */
    const int64_t out_rows[] = {0, N};
    src = open_sel(&bed, &sels[0]);
    st = tg_geno_source_select(src, out_rows, 2, NULL, M, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "sample index 203"), "a sample outside the .fam is "
       "refused: %s", err.msg);
    st = tg_geno_source_select(src, NULL, N, NULL, M + 1, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "58 SNPs selected"), "more SNPs than the .bim has are "
       "refused: %s", err.msg);
    tg_geno_source_free(src);

    tg_bed_close(&bed);
    free(bed_bytes);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    if (system(path)) diag("could not remove %s", dir);
    return tap_done();
}
