/* VCF/BCF input (src/io/vcf.c, tg_vcf_read). References independent of the code under test:
 * a small hand-written VCF whose A1 counts are worked out by hand from the VCF specification and
 * plink2's import rules (ALT counted, haploid calls homozygous, half calls missing, DS hard calls
 * within 0.1 of an integer in plink2's 1/16384 units); a random VCF whose expected counts come
 * from the calls drawn here, read as text, as bgzip and as BCF (both written by htslib's own
 * writer), with a temporary folder and with 1 or 2 threads; then bad inputs, each of which must
 * give TG_ERR_FORMAT, a message naming the file (and the line), and a zeroed tg_bed. */
#define _GNU_SOURCE
#include <ftw.h>
#include <htslib/bgzf.h>
#include <htslib/hts.h>
#include <htslib/vcf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "io/vcf.h"
#include "tap.h"

static char tmpdir[64];

static int rm_entry(const char *p, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb, (void)type, (void)ftw;
    return remove(p);
}

static const char header[] =
    "##fileformat=VCFv4.2\n"
    "##contig=<ID=1>\n"
    "##contig=<ID=2>\n"
    "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
    "##FORMAT=<ID=DS,Number=1,Type=Float,Description=\"ALT dosage\">\n"
    "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT";

static tg_status read_vcf(const char *path, tg_input_format f, char delim, const char *tmp,
                          int threads, tg_bed *bed, tg_input_report *rep, tg_error *err) {
    tg_input_opts o;
    tg_input_opts_init(&o);
    o.format = f;
    o.path = path;
    o.id_delim = delim;
    o.tmp_dir = tmp;
    o.threads = threads;
    memset(rep, 0, sizeof *rep);
    return tg_vcf_read(&o, bed, rep, err);
}

/* Whether the decoded genotypes of @p bed are want[i + j·n]; names the first difference. */
static int same_geno(const tg_bed *bed, const int8_t *want, int64_t n, int64_t m) {
    if (bed->n_samples != n || bed->n_snps != m) {
        diag("%lld × %lld, want %lld × %lld", (long long)bed->n_samples, (long long)bed->n_snps,
             (long long)n, (long long)m);
        return 0;
    }
    int8_t *got = malloc((size_t)(n * m));
    tg_bed_decode(bed, 0, n, 0, m, got, n);
    int64_t bad = -1;
    for (int64_t k = 0; k < n * m && bad < 0; k++)
        if (got[k] != want[k]) bad = k;
    if (bad >= 0)
        diag("sample %lld of SNP %lld: %d, want %d", (long long)(bad % n), (long long)(bad / n),
             got[bad], want[bad]);
    free(got);
    return bad < 0;
}

static int has_note(const tg_input_report *rep, const char *text) {
    for (int k = 0; k < rep->nnotes; k++)
        if (strstr(rep->notes[k], text)) return 1;
    diag("no note with '%s' among %d", text, rep->nnotes);
    return 0;
}

/* Converts @p vcf with htslib's own reader and writer (mode "wb": BCF, "wz": bgzip VCF);
 * returns 0 on success. */
static int htslib_copy(const char *vcf, const char *out, const char *mode) {
    htsFile *in = hts_open(vcf, "r"), *o = hts_open(out, mode);
    bcf_hdr_t *h = in ? bcf_hdr_read(in) : NULL;
    bcf1_t *rec = bcf_init();
    int ret = h && o && bcf_hdr_write(o, h) == 0 ? 0 : -2; /* -1: the end of the input */
    while (ret == 0 && (ret = bcf_read(in, h, rec)) == 0)
        if (bcf_write(o, h, rec) != 0) ret = -2;
    bcf_destroy(rec);
    if (h) bcf_hdr_destroy(h);
    if (in) hts_close(in);
    if (o && hts_close(o) != 0) ret = -2;
    return ret != -1;
}

/* ---- the hand-written file: every rule once */
static void hand_written(void) {
    char path[512];
    put_text(path, sizeof path, tmpdir, "hand.vcf",
             "##fileformat=VCFv4.2\n##contig=<ID=chr1>\n##contig=<ID=chrX>\n"
             "##contig=<ID=chr2>\n%s\tfa_ia\tfb_ib\tfc_ic\tfd_id\tfe_ie\n"
             /* diploid, phased or not, one missing */
             "chr1\t100\trs1\tA\tG\t.\t.\t.\tGT\t0/0\t0/1\t1|1\t./.\t1/0\n"
             /* haploid 0 and 1 (homozygous), half calls ./1 and 1/., a missing haploid call */
             "1\t200\t.\tC\tT\t.\t.\t.\tGT\t0\t1\t./1\t.\t1/.\n"
             /* no ALT: monomorphic, A1 '.' */
             "1\t300\trs3\tG\t.\t.\t.\t.\tGT\t0/0\t0/0\t./.\t0\t0|0\n"
             /* two ALT alleles: skipped */
             "1\t300\trs4\tG\tA,C\t.\t.\t.\tGT\t0/0\t0/1\t0/2\t1/2\t2/2\n"
             /* DS only: 0.05 → 0, 0.95 → 1, 1.5 missing, 1.91 → 2, '.' missing */
             "1\t500\trs5\tT\tC\t.\t.\t.\tDS\t0.05\t0.95\t1.5\t1.91\t.\n"
             /* the threshold: 0.1 is 1638 sixteen-thousandths (→ 0), 0.11 is 1802 (missing);
              * 1.9 is 31130, 1638 from 2 (→ 2) */
             "1\t600\trs6\tT\tC\t.\t.\t.\tDS\t0.1\t0.11\t2\t0\t1.9\n"
             /* GT and DS: GT read */
             "chrX\t100\trsX\tA\tT\t.\t.\t.\tGT:DS\t0/1:0\t1:0\t0:2\t./.:1\t1/1:0\n"
             "chr2\t50\trs8\tC\tA\t.\t.\t.\tGT\t1|0\t0|1\t1|1\t0|0\t.|.\n"
             /* GT not first, and left out of a column that stops before it */
             "2\t60\trs9\tA\tG\t.\t.\t.\tDS:GT\t1:0/1\t2:1/1\t0.3\t0:0\t.:./1\n",
             strchr(header, '\n') + 1);
    static const int8_t want[] = {0, 1,  2,  -1, 1,  /* rs1 */
                                  0, 2,  -1, -1, -1, /* . */
                                  0, 0,  -1, 0,  0,  /* rs3 */
                                  0, 1,  -1, 2,  -1, /* rs5 */
                                  0, -1, 2,  0,  2,  /* rs6 */
                                  1, 2,  0,  -1, 2,  /* rsX */
                                  1, 1,  2,  0,  -1, /* rs8 */
                                  1, 2,  -1, 0,  -1 /* rs9 */};
    static const char *const chrom[] = {"1", "1", "1", "1", "1", "X", "2", "2"};
    static const char *const id[] = {"rs1", ".", "rs3", "rs5", "rs6", "rsX", "rs8", "rs9"};
    static const char *const a1[] = {"G", "T", ".", "C", "C", "T", "A", "G"};
    static const char *const a2[] = {"A", "C", "G", "T", "T", "A", "C", "A"};
    static const int64_t pos[] = {100, 200, 300, 500, 600, 100, 50, 60};
    tg_bed bed;
    tg_input_report rep;
    tg_error err = {0};
    tg_status st = read_vcf(path, TG_INPUT_VCF, '_', NULL, 1, &bed, &rep, &err);
    if (!ok(st == TG_OK, "hand-written VCF read with --id-delim _")) {
        diag("%s", err.msg);
        return;
    }
    ok(same_geno(&bed, want, 5, 8), "A1 (ALT) counts as worked out by hand: diploid, haploid "
       "(homozygous), half calls missing, DS hard calls at plink2's threshold, GT over DS, GT "
       "after another field or left out");
    int meta = 1;
    for (int j = 0; j < 8 && j < bed.n_snps; j++) {
        const tg_snp *s = &bed.snps[j];
        if (strcmp(s->chrom, chrom[j]) || strcmp(s->id, id[j]) || strcmp(s->a1, a1[j]) ||
            strcmp(s->a2, a2[j]) || s->pos != pos[j] || s->cm != 0) {
            diag("SNP %d: %s %s %g %lld %s %s", j, s->chrom, s->id, s->cm, (long long)s->pos,
                 s->a1, s->a2);
            meta = 0;
        }
    }
    ok(meta, "variants: plink2's chromosome codes (chr1 → 1, chrX → X), ID '.' kept, A1 = ALT "
       "('.' without one), A2 = REF, cM 0");
    int ids = 1;
    for (int i = 0; i < 5; i++) {
        const tg_sample *s = &bed.samples[i];
        char f[8], iid[8];
        snprintf(f, sizeof f, "f%c", 'a' + i);
        snprintf(iid, sizeof iid, "i%c", 'a' + i);
        ids &= !strcmp(s->fid, f) && !strcmp(s->iid, iid) && !strcmp(s->father, "0") &&
               !strcmp(s->mother, "0") && s->sex == 0 && isnan(s->pheno);
    }
    ok(ids, "--id-delim _: FID and IID split at the '_', parents 0, sex 0, phenotype missing");
    ok(rep.nsteps == 1 && !strcmp(rep.steps[0].flag, "multi-allelic") &&
           rep.steps[0].snps_removed == 1 && rep.steps[0].snps_left == 8 &&
           rep.steps[0].samples_left == 5,
       "the multi-allelic record is a step: 1 removed, 8 left");
    ok(has_note(&rep, "1 multi-allelic") && has_note(&rep, "2 variants without GT") &&
           has_note(&rep, "(3 calls") && has_note(&rep, "2 variants with both GT and DS") &&
           has_note(&rep, "3 half calls") && has_note(&rep, "6 haploid calls"),
       "notes count the skip, the DS hard calls (3 missing), GT over DS, half and haploid calls");
    ok(!strcmp(bed.format, "vcf") && !strcmp(bed.prefix, path), "format 'vcf', prefix the path");
    tg_bed_close(&bed);

    /* the same records as BCF, written by htslib: its genotype vectors, not the text */
    char bcf[512];
    snprintf(bcf, sizeof bcf, "%s/hand.bcf", tmpdir);
    if (htslib_copy(path, bcf, "wb")) {
        printf("Bail out! htslib cannot write %s\n", bcf);
        exit(1);
    }
    st = read_vcf(bcf, TG_INPUT_BCF, '_', NULL, 2, &bed, &rep, &err);
    if (st) diag("%s", err.msg);
    ok(st == TG_OK && same_geno(&bed, want, 5, 8) && !strcmp(bed.format, "bcf") &&
           has_note(&rep, "3 half calls") && has_note(&rep, "6 haploid calls") &&
           !strcmp(bed.samples[4].iid, "ie") && !strcmp(bed.snps[5].chrom, "X"),
       "the same file as BCF: the same counts, IDs, codes and notes");
    tg_bed_close(&bed);

    st = read_vcf(path, TG_INPUT_VCF, 0, tmpdir, 0, &bed, &rep, &err);
    int plain = st == TG_OK && same_geno(&bed, want, 5, 8);
    for (int i = 0; plain && i < 5; i++)
        plain = !strcmp(bed.samples[i].fid, "0") && !strncmp(bed.samples[i].iid, "f", 1) &&
                strchr(bed.samples[i].iid, '_');
    ok(plain, "without --id-delim: FID 0, IID the whole ID; same genotypes through a temporary "
       "folder");
    tg_bed_close(&bed);
}

/* ---- a random VCF: its expected counts from the calls drawn, as text, bgzip and BCF */

/* One random call as VCF text into @p out; returns its A1 count by the rules above. */
static int8_t random_call(tg_rng *r, char *out) {
    static const char *const al[] = {"0", "1", "."};
    double u = tg_rng_uniform(r);
    int a = (int)(tg_rng_uniform(r) * 3), b = (int)(tg_rng_uniform(r) * 3);
    if (u < 0.1) { /* haploid */
        sprintf(out, "%s", al[a]);
        return a == 2 ? TG_GENO_MISSING : (int8_t)(2 * a);
    }
    sprintf(out, "%s%c%s", al[a], u < 0.5 ? '/' : '|', al[b]);
    return a == 2 || b == 2 ? TG_GENO_MISSING : (int8_t)(a + b);
}

static void random_file(tg_rng *r) {
    /* 37 samples (not a multiple of 4) × 5000 records: past the builder's first 4096 */
    const int64_t n = 37, m = 5000;
    char path[512], gz[512], bcf[512], call[8];
    snprintf(path, sizeof path, "%s/rand.vcf", tmpdir);
    snprintf(gz, sizeof gz, "%s/rand.vcf.gz", tmpdir);
    snprintf(bcf, sizeof bcf, "%s/rand.bcf", tmpdir);
    int8_t *want = malloc((size_t)(n * m));
    FILE *f = fopen(path, "w");
    fprintf(f, "%s", header);
    for (int64_t i = 0; i < n; i++) fprintf(f, "\tS%lld", (long long)i);
    fputc('\n', f);
    for (int64_t j = 0; j < m; j++) {
        fprintf(f, "%d\t%lld\tv%lld\tA\tC\t.\t.\t.\tGT", j < m / 2 ? 1 : 2, (long long)(j + 1),
                (long long)j);
        for (int64_t i = 0; i < n; i++) {
            want[i + j * n] = random_call(r, call);
            fprintf(f, "\t%s", call);
        }
        fputc('\n', f);
    }
    fclose(f);
    if (htslib_copy(path, gz, "wz") || htslib_copy(path, bcf, "wb")) {
        printf("Bail out! htslib cannot write %s or %s\n", gz, bcf);
        exit(1);
    }
    static const struct {
        const char *what;
        int file, threads;
        tg_input_format f;
    } runs[] = {{"plain VCF", 0, 1, TG_INPUT_VCF},
                {"bgzip VCF, 1 thread", 1, 1, TG_INPUT_VCF},
                {"bgzip VCF, 2 threads", 1, 2, TG_INPUT_VCF},
                {"plain VCF, 5 threads", 0, 5, TG_INPUT_VCF},
                {"BCF, the CPUs allowed", 2, 0, TG_INPUT_BCF}};
    const char *files[] = {path, gz, bcf};
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        tg_bed bed;
        tg_input_report rep;
        tg_error err = {0};
        tg_status st = read_vcf(files[runs[k].file], runs[k].f, 0, k % 2 ? tmpdir : NULL,
                                runs[k].threads, &bed, &rep, &err);
        if (st) diag("%s", err.msg);
        ok(st == TG_OK && same_geno(&bed, want, n, m) && !strcmp(bed.snps[m - 1].chrom, "2") &&
               bed.snps[m - 1].pos == m && !strcmp(bed.samples[n - 1].iid, "S36"),
           "random %lld × %lld, %s: every call as drawn", (long long)n, (long long)m,
           runs[k].what);
        tg_bed_close(&bed);
    }
    /* a bgzip file cut short, at a block boundary or inside one */
    FILE *in = fopen(gz, "rb");
    fseek(in, 0, SEEK_END);
    long len = ftell(in);
    rewind(in);
    char *buf = malloc((size_t)len);
    if (fread(buf, 1, (size_t)len, in) != (size_t)len) len = 0;
    fclose(in);
    for (int cut = 0; cut < 2; cut++) {
        char tr[512];
        snprintf(tr, sizeof tr, "%s/cut%d.vcf.gz", tmpdir, cut);
        f = fopen(tr, "wb");
        fwrite(buf, 1, (size_t)(cut ? len / 2 : len - 28), f); /* 28: the end-of-file block */
        fclose(f);
        tg_bed bed;
        tg_input_report rep;
        tg_error err = {0};
        tg_status st = read_vcf(tr, TG_INPUT_VCF, 0, NULL, 2, &bed, &rep, &err);
        ok(st == TG_ERR_FORMAT && strstr(err.msg, tr) && strstr(err.msg, "truncated") &&
               !bed.samples && !bed.map,
           "bgzip VCF cut %s: %s", cut ? "in the middle" : "before its end-of-file block",
           err.msg);
    }
    free(buf);
    free(want);
}

/* ---- batches: the reader holds up to 1024 lines and decodes their GT on several threads */

/* A VCF of 9 samples × 3000 records (batches of 1024: three of them), every call "0/1" but
 * record @p bad's, @p call, and record bad + 900's, "0/4", at sample S4; record @p unsorted
 * (0: none) at position 1. */
static void batch_file(const char *path, int64_t bad, const char *call, int64_t unsorted) {
    FILE *f = fopen(path, "w");
    fprintf(f, "%s", header);
    for (int i = 0; i < 9; i++) fprintf(f, "\tS%d", i);
    fputc('\n', f);
    for (int64_t j = 1; j <= 3000; j++) {
        fprintf(f, "1\t%lld\tv%lld\tA\tC\t.\t.\t.\tGT", j == unsorted ? 1 : (long long)j,
                (long long)j);
        for (int i = 0; i < 9; i++) fprintf(f, "\t%s", i != 4 ? "0/1" : j == bad ? call : j == bad + 900 ? "0/4" : "0/1");
        fputc('\n', f);
    }
    fclose(f);
}

static void batches(tg_rng *r) {
    char path[512], line[64];
    snprintf(path, sizeof path, "%s/batch.vcf", tmpdir);
    /* record 2500 (line 2506: 6 header lines), late in the third batch, on 1 and 4 threads;
     * then the same with an unsorted record after it, whose check runs before the batch is
     * decoded: the bad call still comes first */
    for (int k = 0; k < 4; k++) {
        batch_file(path, 2500, "0/x", k < 2 ? 0 : 2900);
        tg_bed bed;
        tg_input_report rep;
        tg_error err = {0};
        tg_status st = read_vcf(path, TG_INPUT_VCF, 0, NULL, k % 2 ? 4 : 1, &bed, &rep, &err);
        snprintf(line, sizeof line, "line 2506 (variant 1:2500 v2500), sample 'S4'");
        ok(st == TG_ERR_FORMAT && strstr(err.msg, line) && strstr(err.msg, "GT '0/x'") &&
               !bed.samples,
           "a bad GT in record 2500 of 3000, %d thread%s%s: %s", k % 2 ? 4 : 1,
           k % 2 ? "s" : "", k < 2 ? "" : ", an unsorted record after it", err.msg);
    }
    /* the first of two bad records in the second batch, decoded by different threads */
    batch_file(path, 1100, "0/3", 0);
    tg_bed bed;
    tg_input_report rep;
    tg_error err = {0};
    tg_status st = read_vcf(path, TG_INPUT_VCF, 0, NULL, 3, &bed, &rep, &err);
    ok(st == TG_ERR_FORMAT && strstr(err.msg, "line 1106 (variant 1:1100 v1100), sample 'S4': "
                                     "GT allele 3"), "the first of two bad records: %s", err.msg);
    /* random calls over 3000 records: the same fileset and notes on 1 and on 3 threads */
    const int64_t n = 9, m = 3000;
    int8_t *want = malloc((size_t)(n * m));
    char call[8];
    FILE *f = fopen(path, "w");
    fprintf(f, "%s", header);
    for (int64_t i = 0; i < n; i++) fprintf(f, "\tS%lld", (long long)i);
    fputc('\n', f);
    for (int64_t j = 0; j < m; j++) {
        fprintf(f, "1\t%lld\tv%lld\tA\tC\t.\t.\t.\tGT", (long long)(j + 1), (long long)j);
        for (int64_t i = 0; i < n; i++) {
            want[i + j * n] = random_call(r, call);
            fprintf(f, "\t%s", call);
        }
        fputc('\n', f);
    }
    fclose(f);
    tg_bed one, three;
    tg_input_report rep1, rep3;
    st = read_vcf(path, TG_INPUT_VCF, 0, NULL, 1, &one, &rep1, &err);
    tg_status st3 = read_vcf(path, TG_INPUT_VCF, 0, NULL, 3, &three, &rep3, &err);
    int same = !st && !st3 && one.n_snps == m && three.n_snps == m &&
               !memcmp(one.geno, three.geno, (size_t)(m * ((n + 3) / 4))) &&
               rep1.nnotes == rep3.nnotes && rep1.nnotes > 0;
    for (int k = 0; same && k < rep1.nnotes; k++) same = !strcmp(rep1.notes[k], rep3.notes[k]);
    ok(same && same_geno(&three, want, n, m) && has_note(&rep3, "haploid call"),
       "random 9 × 3000 over three batches: 1 and 3 threads give the same bytes and notes");
    if (!st) tg_bed_close(&one);
    if (!st3) tg_bed_close(&three);
    free(want);
}

/* ---- bad inputs: TG_ERR_FORMAT, the file and where in it, a zeroed tg_bed */
static void bad_inputs(void) {
    static const char samples[] = "\tS1\tS2\n";
    static const struct {
        const char *what, *text, *want;
        int no_header; /* text is the whole file */
        char delim;
    } cases[] = {
        {"no GT and no DS",
         "1\t10\tr\tA\tC\t.\t.\t.\tGQ\t3\t4\n",
         "line 7 (variant 1:10 r): no GT", 0, 0},
        {"one sample column short",
         "1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1\n",
         "line 7 (variant 1:10 r): 10 columns, expected 11", 0, 0},
        {"one sample column too many",
         "1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\t1/1\n",
         "12 columns, expected 11", 0, 0},
        {"a GT that is not a number",
         "1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1\tA/C\n",
         "sample 'S2': GT 'A/C'", 0, 0},
        {"a GT allele beyond ALT",
         "1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1\t0/2\n",
         "GT allele 2", 0, 0},
        {"a DS beyond 2",
         "1\t10\tr\tA\tC\t.\t.\t.\tDS\t0\t2.5\n",
         "DS 2.5 outside", 0, 0},
        {"triploid calls",
         "1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1/1\t0/0/0\n",
         "only haploid and diploid", 0, 0},
        {"positions decreasing",
         "1\t20\tr\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n"
         "1\t10\ts\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n",
         "line 8 (variant 1:10 s): position 10 comes after 20", 0, 0},
        {"a chromosome split",
         "1\t20\tr\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n"
         "2\t10\ts\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n"
         "1\t30\tt\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n",
         "line 9 (variant 1:30 t): chromosome 1 comes again after 2", 0, 0},
        {"a position that is not a number",
         "1\t2x\tr\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n",
         "POS is not a positive integer", 0, 0},
        {"no records",
         "",
         "no variant records", 0, 0},
        {"only multi-allelic records",
         "1\t10\tr\tA\tC,G\t.\t.\t.\tGT\t0/1\t0/2\n",
         "every record is multi-allelic (1;", 0, 0},
        {"an ID without the --id-delim",
         "1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n",
         "sample ID 'S1' is not FID_IID", 0, '_'},
        {"no #CHROM line",
         "##fileformat=VCFv4.2\n"
         "1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n",
         "line 2: a record before the #CHROM", 1, 0},
        {"a header cut before #CHROM",
         "##fileformat=VCFv4.2\n"
         "##contig=<ID=1>\n",
         "no #CHROM header line", 1, 0},
        {"no samples",
         "##fileformat=VCFv4.2\n"
         "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
         "1\t10\tr\tA\tC\t.\t.\t.\n",
         "no samples", 1, 0},
        {"a duplicate sample ID",
         "##fileformat=VCFv4.2\n"
         "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS1\n",
         "line 2: duplicate sample ID 'S1'", 1, 0},
        {"a sample ID with a space",
         "##fileformat=VCFv4.2\n"
         "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS 1\n"
         "1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1\n",
         "contains a space", 1, 0},
        {"an empty sample ID (htslib takes the tab after it into the next)",
         "##fileformat=VCFv4.2\n"
         "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\t\tS2\n"
         "1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1\t0/1\t1/1\n",
         "sample ID 2 of the #CHROM line is empty or holds a tab", 1, 0},
        {"not a VCF",
         "FID IID PAT MAT SEX PHENO\n",
         "is not a VCF or BCF file", 1, 0},
        {"an empty file",
         "",
         "is empty", 1, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char path[512], name[32];
        snprintf(name, sizeof name, "bad%zu.vcf", k);
        if (cases[k].no_header)
            put_text(path, sizeof path, tmpdir, name, "%s", cases[k].text);
        else
            put_text(path, sizeof path, tmpdir, name, "%s%s%s", header, samples, cases[k].text);
        tg_bed bed;
        tg_input_report rep;
        tg_error err = {0};
        tg_status st = read_vcf(path, TG_INPUT_VCF, cases[k].delim, NULL, 1, &bed, &rep, &err);
        ok(st == TG_ERR_FORMAT && strstr(err.msg, path) && strstr(err.msg, cases[k].want) &&
               !bed.samples && !bed.snps && !bed.map && !bed.n_snps,
           "%s: %s", cases[k].what, err.msg);
    }
    /* the flag that does not match the content, both ways */
    char vcf[512], bcf[512];
    put_text(vcf, sizeof vcf, tmpdir, "ok.vcf", "%s%s1\t10\tr\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n",
             header, samples);
    snprintf(bcf, sizeof bcf, "%s/ok.bcf", tmpdir);
    if (htslib_copy(vcf, bcf, "wb")) {
        printf("Bail out! htslib cannot write %s\n", bcf);
        exit(1);
    }
    tg_bed bed;
    tg_input_report rep;
    tg_error err = {0};
    tg_status st = read_vcf(vcf, TG_INPUT_BCF, 0, NULL, 1, &bed, &rep, &err);
    ok(st == TG_ERR_FORMAT && strstr(err.msg, "read it with --vcf, not --bcf"), "--bcf with a "
       "VCF: %s", err.msg);
    st = read_vcf(bcf, TG_INPUT_VCF, 0, NULL, 1, &bed, &rep, &err);
    ok(st == TG_ERR_FORMAT && strstr(err.msg, "read it with --bcf, not --vcf"), "--vcf with a "
       "BCF: %s", err.msg);
    /* a BCF whose header says 2 GiB (fuzz/fuzz_vcf: htslib allocated that before reading) */
    put_text(bcf, sizeof bcf, tmpdir, "claims.bcf", "%s", "BCF\2\2\377\377\377\177##fileformat");
    st = read_vcf(bcf, TG_INPUT_BCF, 0, NULL, 1, &bed, &rep, &err);
    ok(st == TG_ERR_FORMAT && strstr(err.msg, "its BCF header claims 2147483647 bytes, more than "
       "the file's 21 bytes"), "a BCF header longer than its file: %s", err.msg);
    snprintf(vcf, sizeof vcf, "%s/absent.vcf", tmpdir);
    st = read_vcf(vcf, TG_INPUT_VCF, 0, NULL, 1, &bed, &rep, &err);
    ok(st == TG_ERR_IO && strstr(err.msg, vcf) && !bed.samples, "a missing file: %s", err.msg);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_vcf.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp failed\n");
        return 1;
    }
    hand_written();
    random_file(&r);
    batches(&r);
    bad_inputs();
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    tap_plan(tap_n);
    return tap_done();
}
