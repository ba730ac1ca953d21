/* The .pgen reader (src/io/pgen.c) against plink2, an independent implementation: random
 * filesets written as .bed (tg_bed_write), converted by `plink2 --make-pgen`, read back by
 * tg_pgen_read, and compared with the .bed they came from (genotypes, through tg_bed_decode)
 * and with what `plink2 --pfile --make-bed` makes of the same .pgen (samples, SNPs and
 * genotypes). Shapes cover partial last words and bytes and a single sample (plink2's
 * single-sample storage modes); the reads run on 1, 3 and every thread, in memory and through a
 * file-backed mapping. Layouts plink2 accepts (a .psam without FID, a .pvar with its columns
 * reordered and a CM column, header-less files) are read as plink2 reads them. Skipped without
 * plink2 (PLINK2, else PATH). */
#define _GNU_SOURCE
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/pgen.h"
#include "common.h"
#include "tap.h"
#include "tilegwas.h"

static char tmpdir[64];
static const char *plink2;

static const char *in_tmp(const char *name) {
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* Runs plink2 with @p args (a printf format) in tmpdir; 0 when it succeeded. */
static int run_plink2(const char *fmt, ...) {
    char args[1024], cmd[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' --threads 1 %s >/dev/null 2>&1", tmpdir, plink2,
             args);
    int rc = system(cmd);
    if (rc) diag("plink2 %s: exit %d", args, rc);
    return rc;
}

/* A random fileset PREFIX.bed/.bim/.fam of n samples × m SNPs (values plink2 prints exactly:
 * phenotypes and cM in quarters) with missing calls, SNP 0 all missing when m > 1. */
static void write_random(const char *prefix, int64_t n, int64_t m, tg_rng *r) {
    static const char *alleles[] = {"A", "C", "G", "T", "AT", "GCC"};
    tg_sample *s = calloc((size_t)n, sizeof *s);
    tg_snp *v = calloc((size_t)m, sizeof *v);
    int8_t *g = malloc((size_t)(n * m));
    for (int64_t i = 0; i < n; i++) {
        s[i].fid = fmt_str("fam%" PRId64, i / 3);
        s[i].iid = fmt_str("ind%" PRId64, i % 3);
        s[i].father = fmt_str(i % 3 == 2 ? "ind0" : "0");
        s[i].mother = fmt_str(i % 3 == 2 ? "ind1" : "0");
        s[i].sex = (int)tg_rng_below(r, 3);
        s[i].pheno = tg_rng_below(r, 10) == 0 ? NAN : (double)tg_rng_below(r, 40) / 4 - 3;
    }
    for (int64_t j = 0, pos = 1000; j < m; j++) {
        int a = (int)tg_rng_below(r, 6), b = (a + 1 + (int)tg_rng_below(r, 5)) % 6;
        v[j] = (tg_snp){.chrom = fmt_str("%d", 1 + (int)(j * 22 / m)),
                        .id = fmt_str("rs%" PRId64, 100 + j),
                        .cm = (double)tg_rng_below(r, 400) / 4,
                        .pos = pos += 1 + (int64_t)tg_rng_below(r, 5000),
                        .a1 = strdup(alleles[a]),
                        .a2 = strdup(alleles[b])};
        double p = tg_rng_uniform(r), miss = j == 0 && m > 1 ? 1 : tg_rng_uniform(r) * 0.2;
        for (int64_t i = 0; i < n; i++)
            g[i + j * n] = tg_rng_uniform(r) < miss
                               ? TG_GENO_MISSING
                               : (int8_t)((tg_rng_uniform(r) < p) + (tg_rng_uniform(r) < p));
    }
    tg_error err;
    if (tg_bed_write(in_tmp(prefix), s, n, v, m, g, n, &err)) {
        printf("Bail out! %s\n", err.msg);
        exit(1);
    }
    for (int64_t i = 0; i < n; i++)
        free(s[i].fid), free(s[i].iid), free(s[i].father), free(s[i].mother);
    for (int64_t j = 0; j < m; j++) free(v[j].chrom), free(v[j].id), free(v[j].a1), free(v[j].a2);
    free(s), free(v), free(g);
}

static int same_str(const char *a, const char *b) { return a && b && !strcmp(a, b); }
static int same_num(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* Whether two filesets hold the same genotypes (every value, through tg_bed_decode). */
static int same_geno(const tg_bed *a, const tg_bed *b) {
    if (a->n_samples != b->n_samples || a->n_snps != b->n_snps) return 0;
    size_t len = (size_t)(a->n_samples * a->n_snps);
    int8_t *x = malloc(len ? len : 1), *y = malloc(len ? len : 1);
    tg_bed_decode(a, 0, a->n_samples, 0, a->n_snps, x, a->n_samples);
    tg_bed_decode(b, 0, b->n_samples, 0, b->n_snps, y, b->n_samples);
    int same = !memcmp(x, y, len);
    free(x), free(y);
    return same;
}

static int same_samples(const tg_bed *a, const tg_bed *b) {
    if (a->n_samples != b->n_samples) return 0;
    for (int64_t i = 0; i < a->n_samples; i++) {
        const tg_sample *s = &a->samples[i], *t = &b->samples[i];
        if (!same_str(s->fid, t->fid) || !same_str(s->iid, t->iid) ||
            !same_str(s->father, t->father) || !same_str(s->mother, t->mother) ||
            s->sex != t->sex || !same_num(s->pheno, t->pheno)) {
            diag("sample %" PRId64 ": %s %s %s %s %d %g vs %s %s %s %s %d %g", i, s->fid, s->iid,
                 s->father, s->mother, s->sex, s->pheno, t->fid, t->iid, t->father, t->mother,
                 t->sex, t->pheno);
            return 0;
        }
    }
    return 1;
}

static int same_snps(const tg_bed *a, const tg_bed *b) {
    if (a->n_snps != b->n_snps) return 0;
    for (int64_t j = 0; j < a->n_snps; j++) {
        const tg_snp *s = &a->snps[j], *t = &b->snps[j];
        if (!same_str(s->chrom, t->chrom) || !same_str(s->id, t->id) || s->cm != t->cm ||
            s->pos != t->pos || !same_str(s->a1, t->a1) || !same_str(s->a2, t->a2)) {
            diag("SNP %" PRId64 ": %s %s %g %" PRId64 " %s %s vs %s %s %g %" PRId64 " %s %s", j,
                 s->chrom, s->id, s->cm, s->pos, s->a1, s->a2, t->chrom, t->id, t->cm, t->pos,
                 t->a1, t->a2);
            return 0;
        }
    }
    return 1;
}

static tg_status read_pgen(const char *prefix, int threads, const char *tmp, tg_bed *b,
                           tg_input_report *rep, tg_error *err) {
    tg_input_opts o;
    tg_input_opts_init(&o);
    o.format = TG_INPUT_PGEN;
    o.path = in_tmp(prefix);
    o.threads = threads;
    o.tmp_dir = tmp;
    memset(rep, 0, sizeof *rep);
    return tg_pgen_read(&o, b, rep, err);
}

static void open_bed(const char *prefix, tg_bed *b) {
    tg_error err;
    if (tg_bed_open(in_tmp(prefix), b, &err)) {
        printf("Bail out! %s\n", err.msg);
        exit(1);
    }
}

/* One shape: X (.bed) → P (.pgen, plink2) → Z (.bed, plink2 again); P read by tg_pgen_read. */
static void check_shape(int64_t n, int64_t m, tg_rng *r) {
    tg_bed x, z, p;
    tg_input_report rep;
    tg_error err;
    write_random("x", n, m, r);
    if (run_plink2("--bfile x --make-pgen --out p") || run_plink2("--pfile p --make-bed --out z")) {
        ok(0, "%" PRId64 " × %" PRId64 ": plink2 converts", n, m);
        return;
    }
    open_bed("x", &x);
    open_bed("z", &z);
    tg_status st = read_pgen("p", 0, NULL, &p, &rep, &err);
    if (!ok(st == TG_OK, "%" PRId64 " samples × %" PRId64 " SNPs: tg_pgen_read reads plink2's "
            ".pgen", n, m))
        diag("%s", err.msg);
    else {
        ok(same_geno(&p, &x), "  genotypes = the .bed's it was converted from");
        ok(same_geno(&p, &z) && same_samples(&p, &z) && same_snps(&p, &z),
           "  samples, SNPs and genotypes = plink2 --pfile --make-bed's");
        ok(rep.nsteps == 0 && rep.nnotes == 0, "  nothing skipped, no note");
        for (int t = 1; t <= 3; t += 2) {
            tg_bed q;
            st = read_pgen("p", t, tmpdir, &q, &rep, &err);
            ok(st == TG_OK && same_geno(&q, &p) && same_snps(&q, &p),
               "  %d thread%s, file-backed: the same", t, t > 1 ? "s" : "");
            tg_bed_close(&q);
        }
    }
    tg_bed_close(&p);
    tg_bed_close(&x);
    tg_bed_close(&z);
}

static void copy_file(const char *from, const char *to) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", in_tmp(from), in_tmp(to));
    if (system(cmd)) {
        printf("Bail out! %s\n", cmd);
        exit(1);
    }
}

/* Layouts plink2 accepts, from the last shape's x and p. */
static void check_layouts(void) {
    tg_bed x, z, h;
    tg_input_report rep;
    tg_error err;
    open_bed("x", &x);
    /* header-less .psam and .pvar: a .fam and a .bim */
    copy_file("p.pgen", "h.pgen"), copy_file("x.fam", "h.psam"), copy_file("x.bim", "h.pvar");
    tg_status st = read_pgen("h", 2, NULL, &h, &rep, &err);
    ok(st == TG_OK && same_samples(&h, &x) && same_snps(&h, &x) && same_geno(&h, &x),
       "a .fam as .psam and a .bim as .pvar: the fileset they came from");
    tg_bed_close(&h);
    /* #IID only (FID "0"), a categorical column before the phenotype, the .pvar's columns
     * reordered with CM and INFO: against plink2 --pfile --make-bed */
    FILE *f = fopen(in_tmp("r.psam"), "w");
    fprintf(f, "#IID\tSEX\tPOP\tPHENO1\n");
    for (int64_t i = 0; i < x.n_samples; i++) {
        char ph[32];
        snprintf(ph, sizeof ph, "%g", x.samples[i].pheno);
        fprintf(f, "%s_%s\t%d\t%s\t%s\n", x.samples[i].fid, x.samples[i].iid, x.samples[i].sex,
                i % 2 ? "EUR" : "AFR", isnan(x.samples[i].pheno) ? "NA" : ph);
    }
    fclose(f);
    f = fopen(in_tmp("r.pvar"), "w");
    fprintf(f, "##fileformat=PVARv1.0\n#CHROM\tID\tREF\tALT\tPOS\tCM\tINFO\n");
    for (int64_t j = 0; j < x.n_snps; j++)
        fprintf(f, "%s\t%s\t%s\t%s\t%" PRId64 "\t%g\tK=%" PRId64 "\n", x.snps[j].chrom,
                x.snps[j].id, x.snps[j].a2, x.snps[j].a1, x.snps[j].pos, x.snps[j].cm, j);
    fclose(f);
    copy_file("p.pgen", "r.pgen");
    if (run_plink2("--pfile r --make-bed --out rz")) {
        ok(0, "plink2 reads the reordered fileset");
    } else {
        open_bed("rz", &z);
        st = read_pgen("r", 0, NULL, &h, &rep, &err);
        ok(st == TG_OK && same_samples(&h, &z) && same_snps(&h, &z) && same_geno(&h, &z),
           "#IID-only .psam with a categorical column, reordered .pvar with CM: = plink2 "
           "--make-bed's");
        ok(st == TG_OK && same_str(h.samples[0].fid, "0"), "  no FID column: FID 0, as plink2");
        tg_bed_close(&h);
        tg_bed_close(&z);
    }
    tg_bed_close(&x);
}

/* Failures: the status, a message naming the file, and a zeroed fileset. */
static void check_failures(void) {
    tg_bed b;
    tg_input_report rep;
    tg_error err;
    /* h.psam without its last sample */
    copy_file("p.pgen", "m.pgen"), copy_file("p.pvar", "m.pvar");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "head -n -1 '%s' >'%s'", in_tmp("p.psam"), in_tmp("m.psam"));
    if (system(cmd)) printf("Bail out! %s\n", cmd), exit(1);
    tg_status st = read_pgen("m", 0, NULL, &b, &rep, &err);
    ok(st == TG_ERR_FORMAT && strstr(err.msg, "m.psam") && b.n_samples == 0 && !b.geno,
       "a .psam one sample short: TG_ERR_FORMAT naming it, fileset zeroed: %s", err.msg);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && truncate -s -7 '%s'", in_tmp("p.pgen"),
             in_tmp("m.pgen"), in_tmp("m.pgen"));
    copy_file("p.psam", "m.psam");
    if (system(cmd)) printf("Bail out! %s\n", cmd), exit(1);
    st = read_pgen("m", 0, tmpdir, &b, &rep, &err);
    ok(st == TG_ERR_FORMAT && strstr(err.msg, "m.pgen") && b.n_samples == 0 && !b.geno,
       "a .pgen cut short: TG_ERR_FORMAT naming it, fileset zeroed: %s", err.msg);
}

static int rm_entry(const char *p, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb, (void)type, (void)ftw;
    return remove(p);
}

int main(void) {
    static char found[512];
    plink2 = getenv("PLINK2");
    if (!plink2 || !*plink2) {
        FILE *p = popen("command -v plink2", "r");
        plink2 = p && fgets(found, sizeof found, p) ? found : NULL;
        if (p) pclose(p);
        if (plink2) found[strcspn(found, "\n")] = '\0';
    }
    if (!plink2 || !*plink2) tap_skip_all("plink2 not found (PLINK2 or PATH)");
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tg-pgen-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    static const int64_t shapes[][2] = {{1, 7}, {64, 33}, {203, 157}, {37, 101}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        check_shape(shapes[k][0], shapes[k][1], &r);
    check_layouts();
    check_failures();
    nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    tap_plan(tap_n);
    return tap_done();
}
