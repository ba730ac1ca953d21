/* PLINK 1 filesets (src/io/plink.c). References independent of the code under test: the .bed
 * bytes of tg_bed_write are compared with a packing done here sample by sample from the format
 * description; decodes (full and sub-ranges starting mid-byte, with ld > ni) are compared with
 * the genotypes written; tg_bed_stats with a per-sample loop, also with the padding bits of the
 * last byte set to every code; the block-by-block writer (tg_bed_out) against tg_bed_write's
 * bytes. Then .fam/.bim parsing details (CRLF, blank and very long lines,
 * PLINK's case/control rule) and bad inputs, each of which must give the right status, a
 * message naming the file (and line), and a zeroed tg_bed. */
#define _GNU_SOURCE
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "common.h"
#include "tap.h"
#include "tilegwas.h"

static char tmpdir[64];

/* tmpdir/NAME, in one of a few rotating buffers (enough for the calls of one statement). */
static const char *in_tmp(const char *fmt, ...) {
    static char buf[8][512];
    static int k;
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void put_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        printf("Bail out! cannot write %s\n", path);
        exit(1);
    }
}

static void put_string(const char *path, const char *text) { put_file(path, text, strlen(text)); }

static uint8_t *get_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*len + 1);
    if (fread(b, 1, *len, f) != *len) *len = 0;
    fclose(f);
    return b;
}

static void copy_file(const char *from, const char *to) {
    size_t len;
    uint8_t *b = get_file(from, &len);
    put_file(to, b, len);
    free(b);
}

static int rm_entry(const char *p, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb, (void)type, (void)ftw;
    return remove(p);
}

/* ---- a random fileset in memory */
typedef struct {
    int64_t n, m;
    tg_sample *s;
    tg_snp *v;
    int8_t *g; /* n × m, ld = n */
} dataset;

static void make_dataset(dataset *d, int64_t n, int64_t m, tg_rng *r) {
    static const char *alleles[] = {"A", "C", "G", "T", "AT", "GCC"};
    d->n = n;
    d->m = m;
    d->s = calloc((size_t)n, sizeof *d->s);
    d->v = calloc((size_t)m, sizeof *d->v);
    d->g = malloc((size_t)(n * m));
    for (int64_t i = 0; i < n; i++) {
        tg_sample *s = &d->s[i];
        s->fid = fmt_str("fam%" PRId64, i / 3); /* families of 3: IIDs alone must not clash */
        s->iid = fmt_str("ind%" PRId64, i % 3);
        s->father = fmt_str(i % 3 == 2 ? "ind0" : "0");
        s->mother = fmt_str(i % 3 == 2 ? "ind1" : "0");
        s->sex = (int)tg_rng_below(r, 3);
        s->pheno = tg_rng_below(r, 10) == 0 ? NAN : tg_rng_normal(r) * 3 + 0.1;
    }
    int64_t pos = 1000;
    for (int64_t j = 0; j < m; j++) {
        tg_snp *v = &d->v[j];
        int a = (int)tg_rng_below(r, 6), b = (a + 1 + (int)tg_rng_below(r, 5)) % 6;
        v->chrom = fmt_str("%d", 1 + (int)(j * 22 / m));
        v->id = fmt_str("rs%" PRId64, 100 + j);
        v->cm = tg_rng_below(r, 4) == 0 ? 0 : tg_rng_uniform(r) * 100;
        v->pos = pos += 1 + (int64_t)tg_rng_below(r, 5000);
        v->a1 = strdup(alleles[a]);
        v->a2 = strdup(alleles[b]);
        /* SNP 0 entirely missing when m > 1 (frequency NAN), else random frequency and
         * missing rate */
        double p = tg_rng_uniform(r), miss = j == 0 && m > 1 ? 1 : tg_rng_uniform(r) * 0.2;
        for (int64_t i = 0; i < n; i++)
            d->g[i + j * n] = tg_rng_uniform(r) < miss
                                  ? TG_GENO_MISSING
                                  : (int8_t)((tg_rng_uniform(r) < p) + (tg_rng_uniform(r) < p));
    }
}

static void free_dataset(dataset *d) {
    for (int64_t i = 0; i < d->n; i++) {
        free(d->s[i].fid), free(d->s[i].iid), free(d->s[i].father), free(d->s[i].mother);
    }
    for (int64_t j = 0; j < d->m; j++) {
        free(d->v[j].chrom), free(d->v[j].id), free(d->v[j].a1), free(d->v[j].a2);
    }
    free(d->s), free(d->v), free(d->g);
}

/* The .bed of d, packed one sample at a time from the format description: magic 6c 1b 01,
 * ceil(n/4) bytes per SNP, sample i in bits 2(i mod 4) and 2(i mod 4)+1 of byte i/4, code
 * 0 = two A1 alleles, 1 = missing, 2 = one A1 allele, 3 = none; padding bits zero. */
static uint8_t *naive_bed(const dataset *d, size_t *len) {
    size_t bps = (size_t)(d->n + 3) / 4;
    *len = 3 + bps * (size_t)d->m;
    uint8_t *b = calloc(*len, 1);
    b[0] = 0x6c, b[1] = 0x1b, b[2] = 0x01;
    for (int64_t j = 0; j < d->m; j++)
        for (int64_t i = 0; i < d->n; i++) {
            int v = d->g[i + j * d->n];
            int code = v == 2 ? 0 : v == TG_GENO_MISSING ? 1 : v == 1 ? 2 : 3;
            b[3 + (size_t)j * bps + (size_t)i / 4] |= (uint8_t)(code << (2 * (i % 4)));
        }
    return b;
}

/* Per-sample reference statistics of SNP j. */
static tg_snp_stats naive_stats(const dataset *d, int64_t j) {
    int64_t miss = 0, a1 = 0;
    for (int64_t i = 0; i < d->n; i++) {
        int v = d->g[i + j * d->n];
        if (v == TG_GENO_MISSING)
            miss++;
        else
            a1 += v;
    }
    int64_t obs = d->n - miss;
    return (tg_snp_stats){.freq = obs ? (double)a1 / (2.0 * (double)obs) : NAN,
                          .missing = (double)miss / (double)d->n,
                          .n_obs = obs};
}

static int same_double(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static int stats_match(const tg_bed *bed, const dataset *d) {
    tg_snp_stats *st = malloc((size_t)d->m * sizeof *st);
    tg_bed_stats(bed, st);
    int good = 1;
    for (int64_t j = 0; j < d->m; j++) {
        tg_snp_stats w = naive_stats(d, j);
        if (!same_double(st[j].freq, w.freq) || st[j].missing != w.missing ||
            st[j].n_obs != w.n_obs) {
            if (good)
                diag("SNP %" PRId64 ": freq %g missing %g n_obs %" PRId64 ", want %g %g %" PRId64,
                     j, st[j].freq, st[j].missing, st[j].n_obs, w.freq, w.missing, w.n_obs);
            good = 0;
        }
    }
    free(st);
    return good;
}

static int metadata_match(const tg_bed *bed, const dataset *d) {
    if (bed->n_samples != d->n || bed->n_snps != d->m) return 0;
    for (int64_t i = 0; i < d->n; i++) {
        const tg_sample *a = &bed->samples[i], *b = &d->s[i];
        if (strcmp(a->fid, b->fid) || strcmp(a->iid, b->iid) || strcmp(a->father, b->father) ||
            strcmp(a->mother, b->mother) || a->sex != b->sex || !same_double(a->pheno, b->pheno))
            return 0;
    }
    for (int64_t j = 0; j < d->m; j++) {
        const tg_snp *a = &bed->snps[j], *b = &d->v[j];
        if (strcmp(a->chrom, b->chrom) || strcmp(a->id, b->id) || a->cm != b->cm ||
            a->pos != b->pos || strcmp(a->a1, b->a1) || strcmp(a->a2, b->a2))
            return 0;
    }
    return 1;
}

/* Random sub-range decodes, most starting mid-byte, into a buffer with ld > ni whose gap rows
 * must stay untouched. */
static int subranges_match(const tg_bed *bed, const dataset *d, tg_rng *r) {
    for (int t = 0; t < 40; t++) {
        int64_t i0 = (int64_t)tg_rng_below(r, (uint64_t)d->n);
        if (t % 4 && i0 % 4 == 0) i0 += 1 + (int64_t)tg_rng_below(r, 3); /* mostly mid-byte */
        if (i0 >= d->n) i0 = d->n - 1;
        int64_t ni = (int64_t)tg_rng_below(r, (uint64_t)(d->n - i0 + 1));
        int64_t j0 = (int64_t)tg_rng_below(r, (uint64_t)d->m);
        int64_t nj = 1 + (int64_t)tg_rng_below(r, (uint64_t)(d->m - j0));
        int64_t ld = ni + (int64_t)tg_rng_below(r, 6);
        size_t len = (size_t)(ld * nj + 1);
        int8_t *out = malloc(len);
        memset(out, 0x5a, len);
        tg_bed_decode(bed, i0, ni, j0, nj, out, ld);
        int good = 1;
        for (int64_t j = 0; j < nj; j++)
            for (int64_t i = 0; i < ld; i++) {
                int8_t want = i < ni ? d->g[(i0 + i) + (j0 + j) * d->n] : 0x5a;
                good &= out[i + j * ld] == want;
            }
        good &= out[len - 1] == 0x5a;
        free(out);
        if (!good) {
            diag("decode of samples [%" PRId64 ", +%" PRId64 ") SNPs [%" PRId64 ", +%" PRId64
                 ") ld %" PRId64 " differs",
                 i0, ni, j0, nj, ld);
            return 0;
        }
    }
    return 1;
}

/* tg_bed_out: the fileset written in blocks of 1, 2, ... SNPs (ld n + 3, not n) has the bytes
 * of tg_bed_write's; nothing is in place before the close; a close naming another count of
 * SNPs, or a bad genotype in a later block (named by its SNP in the whole fileset), leaves no
 * file. */
static void streamed(tg_rng *r) {
    const int64_t n = 37, m = 40, ld = n + 3;
    dataset d;
    make_dataset(&d, n, m, r);
    int8_t *g = calloc((size_t)(ld * m), 1);
    for (int64_t j = 0; j < m; j++) memcpy(g + j * ld, d.g + j * n, (size_t)n);
    tg_error err = {0};
    tg_bed_out *w;
    tg_status st = tg_bed_write(in_tmp("whole"), d.s, n, d.v, m, d.g, n, &err);
    if (!st) st = tg_bed_out_open(in_tmp("parts"), n, &w, &err);
    int absent = access(in_tmp("parts.bed"), F_OK) != 0;
    for (int64_t j0 = 0, b = 1; j0 < m && !st; j0 += b, b++)
        st = tg_bed_out_put(w, d.v + j0, j0 + b <= m ? b : m - j0, g + j0 * ld, ld, &err);
    absent &= access(in_tmp("parts.bim"), F_OK) != 0;
    if (!st) st = tg_bed_out_close(w, d.s, d.v, m, &err);
    int same = !st;
    for (int k = 0; k < 3 && same; k++) {
        static const char *const ext[3] = {"bed", "bim", "fam"};
        size_t la, lb;
        uint8_t *a = get_file(in_tmp("whole.%s", ext[k]), &la);
        uint8_t *b = get_file(in_tmp("parts.%s", ext[k]), &lb);
        same = a && b && la == lb && !memcmp(a, b, la);
        free(a);
        free(b);
    }
    ok(same && absent, "tg_bed_out in blocks of 1, 2, 3, ... SNPs: tg_bed_write's bytes, no file "
       "in place before the close (%s)", st ? err.msg : "ok");
    st = tg_bed_out_open(in_tmp("count"), n, &w, &err);
    if (!st) st = tg_bed_out_put(w, d.v, 10, g, ld, &err);
    if (!st) st = tg_bed_out_close(w, d.s, d.v, m, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "40 SNPs named, 10 written") &&
           access(in_tmp("count.bed"), F_OK) != 0,
       "tg_bed_out_close with another SNP count refused, no file: %s", err.msg);
    g[5 + 33 * ld] = 7;
    st = tg_bed_out_open(in_tmp("badpart"), n, &w, &err);
    if (!st) st = tg_bed_out_put(w, d.v, 30, g, ld, &err);
    if (!st) st = tg_bed_out_put(w, d.v + 30, 10, g + 30 * ld, ld, &err);
    if (st) tg_bed_out_discard(w);
    ok(st == TG_ERR_ARG && strstr(err.msg, "sample 5, SNP 33 (rs133)") &&
           access(in_tmp("badpart.bed"), F_OK) != 0,
       "a bad genotype in the second block names SNP 33 of the fileset, no file: %s", err.msg);
    free(g);
    free_dataset(&d);
}

static void round_trip(int64_t n, int64_t m, tg_rng *r) {
    dataset d;
    make_dataset(&d, n, m, r);
    const char *prefix = in_tmp("rt_%" PRId64 "_%" PRId64, n, m);
    tg_error err = {0};
    tg_bed bed;
    int wrote = tg_bed_write(prefix, d.s, n, d.v, m, d.g, n, &err) == TG_OK;
    if (!wrote) diag("%s", err.msg);
    size_t len, want_len;
    uint8_t *got = get_file(in_tmp("rt_%" PRId64 "_%" PRId64 ".bed", n, m), &len);
    uint8_t *want = naive_bed(&d, &want_len);
    ok(wrote && got && len == want_len && memcmp(got, want, len) == 0,
       "n=%" PRId64 " m=%" PRId64 ": written .bed equals a sample-by-sample packing", n, m);
    free(got);
    free(want);
    tg_status st = tg_bed_open(prefix, &bed, &err);
    if (st) diag("%s", err.msg);
    ok(st == TG_OK && metadata_match(&bed, &d),
       "n=%" PRId64 " m=%" PRId64 ": open, .fam/.bim fields read back", n, m);
    if (st) {
        free_dataset(&d);
        return;
    }
    ok(bed.bytes_per_snp == (size_t)(n + 3) / 4, "n=%" PRId64 ": bytes_per_snp = ceil(n/4)", n);
    int8_t *all = malloc((size_t)(n * m));
    tg_bed_decode(&bed, 0, n, 0, m, all, n);
    ok(memcmp(all, d.g, (size_t)(n * m)) == 0, "n=%" PRId64 " m=%" PRId64 ": full decode", n, m);
    free(all);
    ok(subranges_match(&bed, &d, r), "n=%" PRId64 " m=%" PRId64 ": 40 sub-range decodes", n, m);
    ok(stats_match(&bed, &d), "n=%" PRId64 " m=%" PRId64 ": stats vs per-sample loop", n, m);
    tg_bed_close(&bed);

    /* padding codes 01, 10 and 11 in every last byte (00 was tested above) must not change
     * decodes or statistics */
    if (n % 4) {
        const char *bedp = in_tmp("rt_%" PRId64 "_%" PRId64 ".bed", n, m);
        uint8_t *b = get_file(bedp, &len);
        size_t bps = (size_t)(n + 3) / 4;
        int good = 1;
        for (int code = 1; code < 4; code++) {
            for (int64_t j = 0; j < m; j++)
                for (int64_t i = n; i < (int64_t)bps * 4; i++) {
                    uint8_t *last = &b[3 + (size_t)j * bps + bps - 1];
                    *last = (uint8_t)((*last & ~(3 << (2 * (i % 4)))) | code << (2 * (i % 4)));
                }
            put_file(bedp, b, len);
            if (tg_bed_open(prefix, &bed, &err)) {
                good = 0;
                break;
            }
            int8_t *g = malloc((size_t)(n * m));
            tg_bed_decode(&bed, 0, n, 0, m, g, n);
            good &= memcmp(g, d.g, (size_t)(n * m)) == 0 && stats_match(&bed, &d);
            free(g);
            tg_bed_close(&bed);
        }
        free(b);
        ok(good, "n=%" PRId64 " m=%" PRId64 ": padding codes 01/10/11 ignored by decode, stats", n,
           m);
    }
    free_dataset(&d);
}

/* tg_bed_open must fail with @p want, a message containing @p s1 and @p s2 (if non-NULL), and
 * leave a zeroed tg_bed. */
static void expect_fail(const char *prefix, tg_status want, const char *s1, const char *s2,
                        const char *what) {
    tg_bed bed;
    memset(&bed, 0x7f, sizeof bed);
    tg_error err = {0};
    tg_status st = tg_bed_open(prefix, &bed, &err);
    int zero = !bed.samples && !bed.snps && !bed.map && !bed.prefix && !bed.n_samples;
    int good = st == want && strstr(err.msg, s1) && (!s2 || strstr(err.msg, s2)) && zero;
    ok(good, "%s: %s", what, err.msg);
    if (!good) diag("status %d (want %d), wanted '%s' and '%s'", st, want, s1, s2 ? s2 : "");
    if (st == TG_OK) tg_bed_close(&bed);
}

/* PREFIX.{bed,bim,fam} from the files of the "good" fileset, with one replaced by @p text
 * (NULL: copied; "-": left out). */
static const char *variant(const char *name, const char *fam, const char *bim) {
    static const char *ext[3] = {"fam", "bim", "bed"};
    const char *repl[3] = {fam, bim, NULL};
    for (int k = 0; k < 3; k++) {
        const char *to = in_tmp("%s.%s", name, ext[k]);
        if (!repl[k])
            copy_file(in_tmp("good.%s", ext[k]), to);
        else if (strcmp(repl[k], "-") != 0)
            put_string(to, repl[k]);
    }
    return in_tmp("%s", name);
}

static void bad_inputs(tg_rng *r) {
    /* good: 10 samples (3 bytes per SNP), 6 SNPs → .bed of 3 + 18 bytes */
    dataset d;
    make_dataset(&d, 10, 6, r);
    tg_error err = {0};
    if (tg_bed_write(in_tmp("good"), d.s, d.n, d.v, d.m, d.g, d.n, &err)) {
        printf("Bail out! %s\n", err.msg);
        exit(1);
    }
    size_t len;
    uint8_t *bed = get_file(in_tmp("good.bed"), &len);

    const char *p = variant("nobed", NULL, NULL);
    remove(in_tmp("nobed.bed"));
    expect_fail(p, TG_ERR_IO, "cannot open", in_tmp("nobed.bed"), "missing .bed");
    expect_fail(in_tmp("none"), TG_ERR_IO, "cannot open", in_tmp("none.bed"),
                "no file at all: the .bed is named");
    expect_fail(variant("nobim", NULL, "-"), TG_ERR_IO, "cannot open", in_tmp("nobim.bim"),
                "missing .bim");
    expect_fail(variant("nofam", "-", NULL), TG_ERR_IO, "cannot open", in_tmp("nofam.fam"),
                "missing .fam");

    p = variant("magic", NULL, NULL);
    uint8_t *b = malloc(len + 8);
    memcpy(b, bed, len);
    b[0] = 'X', b[1] = 'Y', b[2] = 'Z';
    put_file(in_tmp("magic.bed"), b, len);
    expect_fail(p, TG_ERR_FORMAT, in_tmp("magic.bed"), "58 59 5a, expected 6c 1b 01",
                "wrong magic bytes");
    p = variant("smajor", NULL, NULL);
    memcpy(b, bed, len);
    b[2] = 0x00;
    put_file(in_tmp("smajor.bed"), b, len);
    expect_fail(p, TG_ERR_FORMAT, in_tmp("smajor.bed"), "sample-major", "sample-major magic");
    p = variant("trunc", NULL, NULL);
    put_file(in_tmp("trunc.bed"), bed, len - 1);
    expect_fail(p, TG_ERR_FORMAT, in_tmp("trunc.bed"), "20 bytes, expected 21", "truncated .bed");
    p = variant("extra", NULL, NULL);
    memcpy(b, bed, len);
    memset(b + len, 0, 8);
    put_file(in_tmp("extra.bed"), b, len + 5);
    expect_fail(p, TG_ERR_FORMAT, in_tmp("extra.bed"), "26 bytes, expected 21",
                ".bed with extra bytes");
    p = variant("tiny", NULL, NULL);
    put_file(in_tmp("tiny.bed"), bed, 2);
    expect_fail(p, TG_ERR_FORMAT, in_tmp("tiny.bed"), "too short", ".bed of 2 bytes");
    free(b);

    /* .fam for 10 samples: sample 5 (line 7, after a blank line) repeats line 2's FID IID */
    char fam[2048] = "";
    for (int i = 0; i < 10; i++) {
        char line[128];
        snprintf(line, sizeof line, "%sf%d i%d 0 0 1 -9\n", i == 5 ? "\n" : "", i == 5 ? 1 : i,
                 i == 5 ? 1 : i);
        strcat(fam, line);
    }
    expect_fail(variant("dup", fam, NULL), TG_ERR_FORMAT, in_tmp("dup.fam"),
                "line 7: duplicate sample ID 'f1 i1' (FID IID), first on line 2",
                "duplicate sample ID");
    /* the first error in line order: a repeated ID (line 7) before a bad line (12), and a bad
     * line (3) before it */
    char *dup_bad = malloc(strlen(fam) + 64), *bad_dup = malloc(strlen(fam) + 64);
    strcpy(dup_bad, fam);
    strcat(dup_bad, "f10 i10 0 0 1\n");
    strcpy(bad_dup, fam);
    char *third = strstr(bad_dup, "f2 i2 0 0 1 -9");
    memcpy(third, "f2 i2 0 0 1   ", 14); /* five columns */
    expect_fail(variant("dupbad", dup_bad, NULL), TG_ERR_FORMAT, in_tmp("dupbad.fam"),
                "line 7: duplicate sample ID", "a repeated ID before a bad line is the error");
    expect_fail(variant("baddup", bad_dup, NULL), TG_ERR_FORMAT, in_tmp("baddup.fam"),
                "line 3: expected 6 columns", "a bad line before a repeated ID is the error");
    free(dup_bad);
    free(bad_dup);
    /* 3,000 samples, sample 2,900 (line 2,901) repeating sample 17: far past the slots fetched
     * ahead */
    char *big = malloc(3000 * 32);
    big[0] = 0;
    for (int i = 0, at = 0; i < 3000; i++)
        at += sprintf(big + at, "f%d i%d 0 0 2 -9\n", i == 2900 ? 17 : i, i == 2900 ? 17 : i);
    expect_fail(variant("dupfar", big, NULL), TG_ERR_FORMAT, in_tmp("dupfar.fam"),
                "line 2901: duplicate sample ID 'f17 i17' (FID IID), first on line 18",
                "a repeated ID far apart");
    free(big);
    /* the same IID in two families is not a duplicate */
    char *same_iid = strdup(fam);
    char *at = strstr(same_iid, "\nf1 i1") + 1;
    at[1] = '9';
    tg_bed ok_bed;
    tg_status st = tg_bed_open(variant("iid", same_iid, NULL), &ok_bed, &err);
    ok(st == TG_OK && ok_bed.n_samples == 10, "same IID in different families is accepted");
    if (st == TG_OK) tg_bed_close(&ok_bed);
    free(same_iid);

    expect_fail(variant("famcols", "a b 0 0 1 1\na c 0 0 1 1 extra\n", NULL), TG_ERR_FORMAT,
                in_tmp("famcols.fam"), "line 2: expected 6 columns", ".fam line with 7 columns");
    expect_fail(variant("fampheno", "a b 0 0 1 1\na c 0 0 1 high\n", NULL), TG_ERR_FORMAT,
                in_tmp("fampheno.fam"), "line 2: phenotype 'high'", "non-numeric .fam phenotype");
    expect_fail(variant("famempty", "", NULL), TG_ERR_FORMAT, in_tmp("famempty.fam"), "is empty",
                "empty .fam");
    expect_fail(variant("famblank", "\n  \r\n\t\n", NULL), TG_ERR_FORMAT, in_tmp("famblank.fam"),
                "is empty", ".fam of blank lines");
    expect_fail(variant("bimempty", NULL, ""), TG_ERR_FORMAT, in_tmp("bimempty.bim"), "is empty",
                "empty .bim");
    const char *bim5 =
        "1 a 0 1 A C\n1 b 0 2 A C\n1 c 0 3 A\n1 d 0 4 A C\n1 e 0 5 A C\n1 f 0 6 A C\n";
    expect_fail(variant("bimcols", NULL, bim5), TG_ERR_FORMAT, in_tmp("bimcols.bim"),
                "line 3: expected 6 columns (chromosome SNP-ID cM position A1 A2), found 5",
                "malformed .bim line (5 columns)");
    const char *bimpos =
        "1 a 0 1 A C\n1 b 0 2x A C\n1 c 0 3 A C\n1 d 0 4 A C\n1 e 0 5 A C\n1 f 0 6 A C\n";
    expect_fail(variant("bimpos", NULL, bimpos), TG_ERR_FORMAT, in_tmp("bimpos.bim"),
                "line 2: position '2x' (column 4) is not an integer", "non-numeric .bim position");
    const char *bimcm =
        "1 a 0 1 A C\n1 b 0 2 A C\n1 c 0 3 A C\n1 d cM 4 A C\n1 e 0 5 A C\n1 f 0 6 A C\n";
    expect_fail(variant("bimcm", NULL, bimcm), TG_ERR_FORMAT, in_tmp("bimcm.bim"),
                "line 4: genetic distance 'cM'", "non-numeric .bim cM");
    /* one SNP fewer in the .bim than the .bed holds: a size mismatch naming both sources */
    const char *bim5l = "1 a 0 1 A C\n1 b 0 2 A C\n1 c 0 3 A C\n1 d 0 4 A C\n1 e 0 5 A C\n";
    expect_fail(variant("bimshort", NULL, bim5l), TG_ERR_FORMAT, in_tmp("bimshort.bed"),
                "expected 18 = 3 + 5 SNPs", ".bim with a SNP fewer than the .bed");
    free(bed);

    /* tg_bed_write errors name the path; a bad genotype leaves none of the three files */
    st = tg_bed_write(in_tmp("nodir/x"), d.s, d.n, d.v, d.m, d.g, d.n, &err);
    ok(st == TG_ERR_IO && strstr(err.msg, in_tmp("nodir/x.fam")), "write into a missing folder: %s",
       err.msg);
    d.g[3 + 2 * d.n] = 3;
    st = tg_bed_write(in_tmp("badg"), d.s, d.n, d.v, d.m, d.g, d.n, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "sample 3, SNP 2 (rs102)") &&
           access(in_tmp("badg.bed"), F_OK) != 0 && access(in_tmp("badg.bim"), F_OK) != 0 &&
           access(in_tmp("badg.fam"), F_OK) != 0,
       "write of genotype 3 refused, no .bed, .bim or .fam left: %s", err.msg);
    d.g[3 + 2 * d.n] = 0;
    char *iid = d.s[4].iid;
    d.s[4].iid = "has space";
    st = tg_bed_write(in_tmp("badid"), d.s, d.n, d.v, d.m, d.g, d.n, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "sample 4: IID 'has space'"),
       "write of an IID with a space refused: %s", err.msg);
    d.s[4].iid = iid;
    free_dataset(&d);
}

/* Hand-written .fam/.bim: CRLF, tabs and runs of spaces, blank lines (middle and end), a
 * 200 000-character IID, and the case/control rule for column 6. */
static void parsing(void) {
    size_t nlong = 200000;
    char *longid = malloc(nlong + 1);
    memset(longid, 'x', nlong);
    longid[nlong] = '\0';
    size_t cap = nlong + 1024;
    char *fam = malloc(cap);
    snprintf(fam, cap,
             "f1 i1 0 0 1 1\r\n"
             "f1\ti2\t0\t0  2   2\r\n"
             "\r\n"
             "f2 %s 0 0 0 0\r\n"
             "f3 i4 0 0 M -9\r\n"
             "f3 i5 0 0 1 NA\n"
             "\n\n  \n",
             longid);
    put_string(in_tmp("parse.fam"), fam);
    put_string(in_tmp("parse.bim"), "1\trs1\t0.5\t100\tA\tG\r\n\r\nX rs2 0 -5 AT  C\r\n\r\n");
    /* 5 samples: 2 bytes per SNP; SNP 1 = 2 1 0 -1 | 2, SNP 2 all missing */
    const uint8_t bedb[] = {0x6c, 0x1b, 0x01, 0x02 << 2 | 0x03 << 4 | 0x01 << 6, 0x00, 0x55, 0x01};
    put_file(in_tmp("parse.bed"), bedb, sizeof bedb);
    tg_bed b;
    tg_error err = {0};
    tg_status st = tg_bed_open(in_tmp("parse"), &b, &err);
    ok(st == TG_OK && b.n_samples == 5 && b.n_snps == 2, "CRLF, tabs, blank lines: 5 × 2 (%s)",
       st ? err.msg : "ok");
    if (st) {
        free(fam), free(longid);
        return;
    }
    ok(strcmp(b.samples[1].iid, "i2") == 0 && b.samples[1].sex == 2 &&
           strcmp(b.samples[2].iid, longid) == 0 && b.samples[3].sex == 0 &&
           strcmp(b.samples[4].fid, "f3") == 0,
       ".fam fields, 200000-character IID, unknown sex code → 0");
    ok(b.samples[0].pheno == 1 && b.samples[1].pheno == 2 && isnan(b.samples[2].pheno) &&
           isnan(b.samples[3].pheno) && isnan(b.samples[4].pheno),
       "case/control column: 1, 2 kept; 0, -9, NA missing");
    ok(strcmp(b.snps[1].chrom, "X") == 0 && b.snps[0].cm == 0.5 && b.snps[1].pos == -5 &&
           strcmp(b.snps[1].a1, "AT") == 0 && strcmp(b.snps[1].a2, "C") == 0 &&
           strcmp(b.snps[0].id, "rs1") == 0,
       ".bim fields with CRLF and tabs");
    int8_t g[10];
    tg_bed_decode(&b, 0, 5, 0, 2, g, 5);
    const int8_t want[10] = {2, 1, 0, -1, 2, -1, -1, -1, -1, -1};
    ok(memcmp(g, want, sizeof want) == 0, "hand-packed bytes decode per the format description");
    tg_bed_close(&b);

    /* a value outside {0, 1, 2} makes the column quantitative: 0 is then a value */
    put_string(in_tmp("parse.fam"), "f1 i1 0 0 1 1\nf1 i2 0 0 2 0\nf2 i3 0 0 0 2.5\n"
                                  "f3 i4 0 0 0 -9\nf3 i5 0 0 1 2\n");
    st = tg_bed_open(in_tmp("parse"), &b, &err);
    ok(st == TG_OK && b.samples[0].pheno == 1 && b.samples[1].pheno == 0 &&
           b.samples[2].pheno == 2.5 && isnan(b.samples[3].pheno) && b.samples[4].pheno == 2,
       "quantitative column: 0 kept, -9 missing");
    if (st == TG_OK) tg_bed_close(&b);
    free(fam);
    free(longid);
}

int main(void) {
    tg_rng r;
    uint64_t seed = tap_seed();
    tg_rng_seed(&r, seed);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_plink.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp failed\n");
        return 1;
    }
    static const int64_t sizes[][2] = {{1, 1},  {1, 7},   {3, 5},  {4, 3},
                                       {5, 17}, {37, 40}, {64, 2}, {1001, 13}};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        round_trip(sizes[k][0], sizes[k][1], &r);
    streamed(&r);
    parsing();
    bad_inputs(&r);
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    tap_plan(tap_n);
    return tap_done();
}
