/* tilegwas grm: the genomic relationship matrix Z·Zᵀ/m through the genotype matrix products,
 * written like plink2 --make-rel square (text) or square bin (float64). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *help =
    "usage: tilegwas grm (--bfile|--pfile PREFIX | --vcf|--bcf FILE) --out PREFIX [options]\n"
    "Writes the genomic relationship matrix K = Z Z' / m of all samples (m = every SNP of the\n"
    ".bim): Z the genotypes centered by 2p (p the A1 frequency over non-missing calls) and\n"
    "divided by sqrt(2p(1-p)), missing calls mean-imputed (0 after centering), monomorphic and\n"
    "all-missing SNPs contributing 0. This is plink2 --make-rel meanimpute; without missing\n"
    "calls it is plink2 --make-rel (whose default divides each pair by the SNPs both samples\n"
    "have called instead of imputing).\n"
    "Outputs: PREFIX.rel, n lines of n tab-separated values (plink2's 'square' layout, full\n"
    "precision), or with --bin PREFIX.rel.bin (n x n little-endian float64, plink2's 'square\n"
    "bin'); PREFIX.rel.id (#FID IID, one line per sample in .fam order); PREFIX.log.\n\n"
    "options:\n"
    "  --cov            centered only, not divided by sqrt(2p(1-p)) (plink2 'cov')\n"
    "  --bin            write PREFIX.rel.bin instead of PREFIX.rel\n"
    "  --help           this text\n" TG_CLI_INPUT_HELP TG_CLI_COMMON_HELP;

static tg_status write_ids(const char *prefix, const tg_bed *bed, tg_error *err) {
    FILE *f;
    char *path = NULL;
    tg_status st = tg_out_open(prefix, ".rel.id", &f, &path, err);
    if (st) return st;
    fputs("#FID\tIID\n", f);
    for (int64_t i = 0; i < bed->n_samples; i++)
        fprintf(f, "%s\t%s\n", bed->samples[i].fid, bed->samples[i].iid);
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

/* K is symmetric, so its column-major array is also plink2's row-major layout. */
static tg_status write_rel(const char *prefix, int bin, const double *k, int64_t n,
                           tg_error *err) {
    FILE *f;
    char *path = NULL, num[32];
    tg_status st = tg_out_open(prefix, bin ? ".rel.bin" : ".rel", &f, &path, err);
    if (st) return st;
    if (bin)
        fwrite(k, sizeof *k, (size_t)(n * n), f);
    else
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                tg_text_format_double(k[j + i * n], num);
                fputs(num, f);
                fputc(j + 1 < n ? '\t' : '\n', f);
            }
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

static int run(int cov, int bin, const tg_cli_common *c, tg_log *log) {
    tg_error err = {0};
    tg_bed bed = {0};
    tg_geno *geno = NULL;
    double *k = NULL;
    double t0 = tg_now();
    int rc;
    tg_status st = tg_cli_input_open(c, log, &bed, &err);
    if (st) return tg_cli_fail("grm", log, &err);
    if ((rc = tg_cli_ranks_agree("grm", log, c, &bed, NULL, NULL, NULL, 0))) {
        tg_bed_close(&bed);
        return rc;
    }
    const int64_t n = bed.n_samples;
    const int root = tg_runtime_rank() == 0; /* holds K and writes it */
    /* the peak: K on rank 0, the 5codes genotypes (0.4 bytes a call, a rank its samples) */
    const double kb = root ? 8.0 * (double)n * (double)n : 0,
                 gb = 0.4 * (double)n * (double)bed.n_snps / tg_runtime_nranks();
    char terms[128];
    snprintf(terms, sizeof terms, "K %.0f MiB, genotypes %.0f MiB", kb / 1048576, gb / 1048576);
    if ((st = tg_cli_memory(c, log, kb + gb, terms, &err))) {
        tg_bed_close(&bed);
        return tg_cli_fail("grm", log, &err);
    }
    if (root && ((double)n * (double)n * sizeof *k > (double)SIZE_MAX ||
                 !(k = tg_malloc((size_t)(n * n) * sizeof *k, &err)))) {
        tg_error_set(&err, TG_ERR_NOMEM, "the %lld × %lld relationship matrix (%.3g GB) does not "
                     "fit in memory", (long long)n, (long long)n, 8e-9 * (double)n * (double)n);
        tg_bed_close(&bed);
        return tg_cli_fail("grm", log, &err);
    }
    if ((st = tg_runtime_start(&c->rt, &err))) {
        free(k);
        tg_bed_close(&bed);
        return tg_cli_fail("grm", log, &err);
    }
    tg_cli_trace_start(c);
    tg_cli_progress_on(c);
    tg_cli_log_runtime(log, &c->rt);
    if ((st = tg_geno_from_bed(&bed, !cov, &geno, &err))) goto done;
    if (tg_runtime_nranks() > 1) {
        int64_t first, rows;
        tg_geno_local(geno, &first, &rows);
        tg_log_printf(log, "%d MPI ranks: each holds the genotypes of its own samples (rank 0: "
                      "samples 1 to %lld of %lld); rank 0 gathers and writes the matrix",
                      tg_runtime_nranks(), (long long)rows, (long long)n);
    }
    if (tg_geno_excluded(geno))
        tg_log_printf(log, "warning: %lld monomorphic or all-missing SNP(s) contribute 0 (still "
                      "counted in m)", (long long)tg_geno_excluded(geno));
    tg_log_printf(log, "read and prepared genotypes: %.3f s", tg_now() - t0);
    t0 = tg_now();
    if ((st = tg_grm(geno, k, n, &err)) || (st = tg_cli_trace_stop(c, "grm", log, &err)))
        goto done;
    tg_log_printf(log, "relationship matrix (%s): %.3f s", cov ? "covariance" : "standardised",
                  tg_now() - t0);
    t0 = tg_now();
    if (root && ((st = write_rel(c->out, bin, k, n, &err)) || (st = write_ids(c->out, &bed, &err))))
        goto done;
    tg_log_printf(log, "wrote %s%s and %s.rel.id (%.3f s)", c->out, bin ? ".rel.bin" : ".rel",
                  c->out, tg_now() - t0);
    tg_cli_log_traffic(log);
done:
    tg_cli_progress_off();
    /* the error first: with several ranks it ends them all, where stopping would wait for them */
    rc = st ? tg_cli_fail("grm", log, &err) : 0;
    tg_geno_free(geno);
    tg_runtime_stop();
    free(k);
    tg_bed_close(&bed);
    return rc;
}

int tg_cmd_grm(int argc, char **argv) {
    enum { O_COV = 1, O_BIN, O_HELP };
    static const struct option opts[] = {
        {"cov", no_argument, 0, O_COV}, {"bin", no_argument, 0, O_BIN},
        {"help", no_argument, 0, O_HELP}, TG_CLI_INPUT_OPTIONS, TG_CLI_COMMON_OPTIONS,
        {0, 0, 0, 0}};
    tg_cli_common c;
    tg_cli_common_init(&c);
    tg_error err = {0};
    int cov = 0, bin = 0, o;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case O_COV: cov = 1; break;
        case O_BIN: bin = 1; break;
        case O_HELP: fputs(help, stdout); return 0;
        case '?':
        case ':': st = tg_cli_bad_option(argv, &err); break;
        default: st = tg_cli_common_option(&c, o, optarg, argv, &err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, &err);
    if (!st) st = tg_cli_input_check(&c, &err);
    if (st) return tg_cli_fail_options("grm", &err);
    if ((st = tg_cli_check_outputs(&c, &err))) return tg_cli_fail("grm", NULL, &err);
    tg_log *log = NULL;
    if (tg_log_open(&log, c.out, argc, argv, &err)) return tg_cli_fail("grm", NULL, &err);
    tg_log_set_quiet(log, c.quiet);
    int rc = run(cov, bin, &c, log);
    tg_log_close(log);
    return rc;
}
