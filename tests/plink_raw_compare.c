/* Checks tg_bed_open/tg_bed_decode/tg_bed_stats against PLINK 1.9 (tests/bed_vs_plink.sh runs it).
 *
 *   plink_raw_compare PREFIX RAWFILE
 *       opens PREFIX.bed/.bim/.fam with tilegwas and compares with RAWFILE, PLINK's
 *       `--recode A --keep-allele-order` output (header FID IID PAT MAT SEX PHENOTYPE then one
 *       column ID_A1 per SNP; A1 allele counts 0/1/2 or NA): the header against the .bim, the
 *       rows against the .fam, every genotype, and the A1 frequencies and missing rates of
 *       tg_bed_stats against those counted from RAWFILE. Prints TAP.
 *   plink_raw_compare --write PREFIX N_SAMPLES N_SNPS [SEED]
 *       writes a random fileset (missing calls, varied alleles) with tg_bed_write, for PLINK to
 *       read back. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "tap.h"
#include "tilegwas.h"

static const char *sep = " \t\r\n";

static int write_random(const char *prefix, int64_t n, int64_t m, uint64_t seed) {
    static const char *bases[4] = {"A", "C", "G", "T"};
    tg_rng r;
    tg_rng_seed(&r, seed);
    tg_sample *s = calloc((size_t)n, sizeof *s);
    tg_snp *v = calloc((size_t)m, sizeof *v);
    int8_t *g = malloc((size_t)(n * m));
    char *ids = malloc((size_t)(n + m) * 64);
    for (int64_t i = 0; i < n; i++) {
        char *fid = ids + 64 * i, *iid = fid + 32;
        snprintf(fid, 32, "fam%" PRId64, i / 2);
        snprintf(iid, 32, "ind%" PRId64, i);
        s[i] = (tg_sample){.fid = fid,
                           .iid = iid,
                           .father = "0",
                           .mother = "0",
                           .sex = (int)tg_rng_below(&r, 3),
                           .pheno = tg_rng_below(&r, 8) ? tg_rng_normal(&r) : NAN};
    }
    for (int64_t j = 0; j < m; j++) {
        char *chrom = ids + 64 * (n + j), *id = chrom + 16;
        int a = (int)tg_rng_below(&r, 4), b = (a + 1 + (int)tg_rng_below(&r, 3)) % 4;
        snprintf(chrom, 16, "%d", 1 + (int)(j * 22 / m));
        snprintf(id, 48, "snp_%" PRId64, j); /* an underscore, as in ID_A1 column names */
        v[j] = (tg_snp){.chrom = chrom,
                        .id = id,
                        .cm = 0,
                        .pos = 1000 + 17 * j,
                        .a1 = (char *)bases[a],
                        .a2 = (char *)bases[b]};
        /* the last SNP entirely missing, the others with random frequency and missing rate */
        double p = tg_rng_uniform(&r), miss = j == m - 1 ? 1 : tg_rng_uniform(&r) * 0.15;
        for (int64_t i = 0; i < n; i++)
            g[i + j * n] = tg_rng_uniform(&r) < miss
                               ? TG_GENO_MISSING
                               : (int8_t)((tg_rng_uniform(&r) < p) + (tg_rng_uniform(&r) < p));
    }
    tg_error err = {0};
    tg_status st = tg_bed_write(prefix, s, n, v, m, g, n, &err);
    if (st) fprintf(stderr, "plink_raw_compare: %s\n", err.msg);
    free(s), free(v), free(g), free(ids);
    return st ? 1 : 0;
}

/* Compares with the .raw; every check is one TAP line. */
static int compare(const char *prefix, const char *rawpath) {
    static const char *fixed[6] = {"FID", "IID", "PAT", "MAT", "SEX", "PHENOTYPE"};
    tap_plan(5);
    tg_bed bed;
    tg_error err = {0};
    if (!ok(tg_bed_open(prefix, &bed, &err) == TG_OK, "tg_bed_open %s", prefix)) {
        diag("%s", err.msg);
        return tap_done();
    }
    const int64_t n = bed.n_samples, m = bed.n_snps;
    diag("%" PRId64 " samples, %" PRId64 " SNPs", n, m);
    int8_t *g = malloc((size_t)(n * m));
    tg_bed_decode(&bed, 0, n, 0, m, g, n);
    FILE *f = fopen(rawpath, "r");
    char *line = NULL, *save, *tok;
    size_t cap = 0;
    if (!f || getline(&line, &cap, f) < 0) {
        printf("Bail out! cannot read %s\n", rawpath);
        exit(1);
    }

    /* header: the 6 fixed columns, then ID_A1 of every SNP in .bim order */
    int head_ok = 1;
    int64_t col = 0;
    for (tok = strtok_r(line, sep, &save); tok; tok = strtok_r(NULL, sep, &save), col++) {
        char want[512];
        if (col < 6)
            snprintf(want, sizeof want, "%s", fixed[col]);
        else if (col - 6 < m)
            snprintf(want, sizeof want, "%s_%s", bed.snps[col - 6].id, bed.snps[col - 6].a1);
        else
            want[0] = '\0';
        if (strcmp(tok, want) != 0 && head_ok) {
            diag("header column %" PRId64 ": '%s', want '%s'", col + 1, tok, want);
            head_ok = 0;
        }
    }
    ok(head_ok && col == 6 + m, "header: %" PRId64 " columns, SNP_A1 names match the .bim", col);

    /* rows: FID IID in .fam order, then the genotypes */
    int64_t row = 0, bad_ids = 0, bad_geno = 0, *a1 = calloc((size_t)m, sizeof *a1),
            *obs = calloc((size_t)m, sizeof *obs);
    for (; getline(&line, &cap, f) >= 0; row++) {
        col = 0;
        for (tok = strtok_r(line, sep, &save); tok; tok = strtok_r(NULL, sep, &save), col++) {
            if (row >= n) break;
            if (col < 2) {
                bad_ids += strcmp(tok, col ? bed.samples[row].iid : bed.samples[row].fid) != 0;
            } else if (col >= 6 && col - 6 < m) {
                int64_t j = col - 6;
                int want = g[row + j * n],
                    got = strcmp(tok, "NA") == 0 ? TG_GENO_MISSING : atoi(tok);
                if (got != TG_GENO_MISSING) a1[j] += got, obs[j]++;
                if (got != want && bad_geno++ < 5)
                    diag("sample %" PRId64 " SNP %s: .raw has %s, tilegwas decodes %d", row,
                         bed.snps[j].id, tok, want);
            }
        }
    }
    fclose(f);
    free(line);
    ok(row == n && bad_ids == 0, "%" PRId64 " rows, FID IID in .fam order (%" PRId64 " differ)",
       row, bad_ids);
    ok(bad_geno == 0, "every genotype equals the .raw (%" PRId64 " differ of %" PRId64 ")",
       bad_geno, n * m);

    tg_snp_stats *st = malloc((size_t)m * sizeof *st);
    tg_bed_stats(&bed, st);
    int64_t bad_freq = 0, bad_miss = 0, all_missing = 0;
    for (int64_t j = 0; j < m; j++) {
        double want = obs[j] ? (double)a1[j] / (2.0 * (double)obs[j]) : NAN;
        all_missing += obs[j] == 0;
        if (!(fabs(st[j].freq - want) <= 1e-12 || (isnan(want) && isnan(st[j].freq)))) bad_freq++;
        if (fabs(st[j].missing - (double)(n - obs[j]) / (double)n) > 1e-12 || st[j].n_obs != obs[j])
            bad_miss++;
    }
    ok(bad_freq == 0,
       "tg_bed_stats A1 frequencies match the .raw (%" PRId64 " differ; %" PRId64
       " SNPs all missing)",
       bad_freq, all_missing);
    ok(bad_miss == 0, "tg_bed_stats missing rates and n_obs match the .raw (%" PRId64 " differ)",
       bad_miss);
    free(st), free(a1), free(obs), free(g);
    tg_bed_close(&bed);
    return tap_done();
}

int main(int argc, char **argv) {
    if (argc >= 5 && argc <= 6 && strcmp(argv[1], "--write") == 0)
        return write_random(argv[2], atoll(argv[3]), atoll(argv[4]),
                            argc == 6 ? strtoull(argv[5], NULL, 10) : tg_rng_fresh_seed());
    if (argc == 3) return compare(argv[1], argv[2]);
    fprintf(stderr, "usage: plink_raw_compare PREFIX RAWFILE\n"
                    "       plink_raw_compare --write PREFIX N_SAMPLES N_SNPS [SEED]\n");
    return 2;
}
