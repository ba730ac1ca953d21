/* tilegwas rr: ridge regression (SNP-BLUP) of one or more phenotypes on every SNP. The solver is
 * chosen by --solver: `cg` (conjugate gradients over genotype matrix products, ZᵀZ never formed,
 * each phenotype on its own observed samples) or `cholesky` (ZᵀZ + λI from INT8 products, the
 * mixed-precision tile Cholesky: the KRR paper's RR baseline, on the samples observed for every
 * phenotype). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *help =
    "usage: tilegwas rr --bfile PREFIX --pheno FILE --lambda L --out PREFIX [options]\n"
    "Ridge regression of each phenotype on all SNPs with an unpenalised intercept:\n"
    "  min over mu, beta of sum over observed samples (y - mu - Z beta)^2 + L |beta|^2\n"
    "Z: genotypes centered by 2p (p the A1 frequency over non-missing calls), missing calls\n"
    "mean-imputed (0 after centering), with --scale divided by sqrt(2p(1-p)); monomorphic and\n"
    "all-missing SNPs get beta 0. With --solver cg each phenotype uses its own non-missing\n"
    "samples; with --solver cholesky the samples with any selected phenotype missing are\n"
    "dropped (the log says how many) and p is taken over the samples kept.\n"
    "Writes PREFIX.beta.tsv (SNP A1 then one beta column per phenotype), PREFIX.pred.tsv (FID\n"
    "IID then the in-sample fitted values mu + Z beta for every sample, or with --test-bfile\n"
    "the predictions of that cohort), PREFIX.cg.tsv (cg; per phenotype: observed samples,\n"
    "iterations, converged, residuals) or PREFIX.rr.tsv (cholesky; per phenotype: samples used,\n"
    "mean, lambda, solver) and PREFIX.log (options, the residual of every iteration or the\n"
    "precision map, times).\n\n"
    "options:\n"
    "  --bfile PREFIX     PLINK 1 fileset (.bed/.bim/.fam)\n"
    "  --pheno FILE       phenotypes: FID IID then columns (header optional; -9/NA missing)\n"
    "  --pheno-name A,B   use these columns (default: all)\n"
    "  --test-bfile T     predict this cohort instead (same SNPs in the same order, same A1;\n"
    "                     centered and scaled with the training frequencies, missing calls\n"
    "                     imputed by the training mean)\n"
    "  --lambda L         ridge parameter (required, > 0)\n"
    "  --solver S         cg: conjugate gradients (default); cholesky: Z'Z + L I formed from\n"
    "                     INT8 products and factored by the mixed-precision tile Cholesky\n"
    "  --scale            standardise SNPs to variance 1 (default: centered only)\n"
    "  --tol T            cg: stop when |r|/|b| <= T for a phenotype (default 1e-8)\n"
    "  --max-iter N       cg: iterations at most (default 1000); a phenotype not converged by\n"
    "                     then is an error (exit 1) after the results are written and flagged\n"
    "  --tile NB          cholesky: SNPs per tile (default 1024)\n"
    "  --accuracy EPS     cholesky: target accuracy of the adaptive precision map (default 1e-8)\n"
    "  --precisions LIST  cholesky: precisions off-diagonal tiles may take, from fp64, fp32,\n"
    "                     fp16, fp8 (default fp64,fp32,fp16 when GPUs are used, else\n"
    "                     fp64,fp32: on CPUs fp16 and fp8 tiles save memory, not time)\n"
    "  --diag P           cholesky: diagonal tiles and the solve in fp64 (default) or fp32\n"
    "  --help             this text\n" TG_CLI_GRID_HELP TG_CLI_COMMON_HELP
    "\nThe preconditioner is Jacobi: diag(Z'Z) + L over each phenotype's samples, exact.\n";

typedef struct {
    const char *bfile, *pheno, *pheno_names, *test_bfile, *precisions;
    double lambda, tol, accuracy;
    int64_t max_iter, tile;
    int scale, cholesky;
    unsigned allowed; /* bit set of --precisions; 0: by the workers (solve_chol) */
    tg_prec diag;
    tg_cli_common c;
} rr_opts;

/* Returns TG_OK, an error, or -1 after printing the help. */
static int parse_options(int argc, char **argv, rr_opts *o, tg_error *err) {
    enum {
        O_BFILE = 1, O_PHENO, O_PNAME, O_LAMBDA, O_SOLVER, O_SCALE, O_TOL, O_MAXIT, O_TEST, O_HELP,
        O_TILE, O_ACC, O_PRECS, O_DIAG, O_GRID
    };
    static const struct option opts[] = {
        {"bfile", required_argument, 0, O_BFILE}, {"pheno", required_argument, 0, O_PHENO},
        {"pheno-name", required_argument, 0, O_PNAME}, {"lambda", required_argument, 0, O_LAMBDA},
        {"solver", required_argument, 0, O_SOLVER}, {"scale", no_argument, 0, O_SCALE},
        {"tol", required_argument, 0, O_TOL}, {"max-iter", required_argument, 0, O_MAXIT},
        {"test-bfile", required_argument, 0, O_TEST}, {"help", no_argument, 0, O_HELP},
        {"tile", required_argument, 0, O_TILE}, {"accuracy", required_argument, 0, O_ACC},
        {"precisions", required_argument, 0, O_PRECS}, {"diag", required_argument, 0, O_DIAG},
        {"grid", required_argument, 0, O_GRID}, TG_CLI_COMMON_OPTIONS, {0, 0, 0, 0}};
    *o = (rr_opts){.lambda = NAN, .tol = 1e-8, .max_iter = 1000, .tile = 1024, .accuracy = 1e-8,
                   .diag = TG_FP64};
    tg_cli_common_init(&o->c);
    int c;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_BFILE: o->bfile = optarg; break;
        case O_PHENO: o->pheno = optarg; break;
        case O_PNAME: o->pheno_names = optarg; break;
        case O_TEST: o->test_bfile = optarg; break;
        case O_LAMBDA: st = tg_cli_double("lambda", optarg, 0, INFINITY, &o->lambda, err); break;
        case O_SOLVER:
            o->cholesky = !strcmp(optarg, "cholesky");
            if (!o->cholesky && strcmp(optarg, "cg"))
                st = tg_error_set(err, TG_ERR_ARG, "--solver %s: expected cg or cholesky", optarg);
            break;
        case O_SCALE: o->scale = 1; break;
        case O_TOL: st = tg_cli_double("tol", optarg, 1e-300, 0.5, &o->tol, err); break;
        case O_MAXIT: st = tg_cli_int("max-iter", optarg, 1, 1000000, &o->max_iter, err); break;
        case O_TILE: st = tg_cli_int("tile", optarg, 1, 1 << 16, &o->tile, err); break;
        case O_ACC: st = tg_cli_double("accuracy", optarg, 0, 1, &o->accuracy, err); break;
        case O_PRECS:
            o->precisions = optarg;
            st = tg_cli_precisions(optarg, &o->allowed, err);
            break;
        case O_DIAG:
            if (tg_prec_parse(optarg, &o->diag, err) || (o->diag != TG_FP64 && o->diag != TG_FP32))
                st = tg_error_set(err, TG_ERR_ARG, "--diag %s: expected fp64 or fp32", optarg);
            break;
        case O_GRID: st = tg_cli_grid(optarg, &o->c.rt, err); break;
        case O_HELP: fputs(help, stdout); return -1;
        case '?':
        case ':': st = tg_cli_bad_option(argv, err); break;
        default: st = tg_cli_common_option(&o->c, c, optarg, err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, err);
    if (st) return st;
    if (!o->bfile) return tg_error_set(err, TG_ERR_ARG, "--bfile PREFIX is required");
    if (!o->pheno) return tg_error_set(err, TG_ERR_ARG, "--pheno FILE is required");
    if (isnan(o->lambda)) return tg_error_set(err, TG_ERR_ARG, "--lambda L is required");
    if (!(o->lambda > 0))
        return tg_error_set(err, TG_ERR_ARG, "--lambda %g: must be > 0", o->lambda);
    if (o->c.rt.grid_p && !o->cholesky)
        return tg_error_set(err, TG_ERR_ARG, "--grid goes with --solver cholesky (cg splits the "
                            "samples over the ranks, it has no tiles)");
    return TG_OK;
}

/* Per-iteration residuals: every iteration to the log file, every 10th (and the first) to
 * stderr as progress. */
typedef struct {
    tg_log *log;
    char **names;
    char *line;
    size_t len;
} progress_ctx;

static void on_progress(void *vctx, int iter, int64_t nphen, const double *relres) {
    progress_ctx *p = vctx;
    size_t at = (size_t)snprintf(p->line, p->len, "cg iteration %d: relative residual", iter);
    for (int64_t c = 0; c < nphen && at < p->len; c++) /* p->len fits every name */
        if (!isnan(relres[c]))
            at += (size_t)snprintf(p->line + at, p->len - at, " %s %.3e", p->names[c], relres[c]);
    if (iter == 1 || iter % 10 == 0)
        tg_log_printf(p->log, "%s", p->line);
    else
        tg_log_file_only(p->log, "%s", p->line);
}

static tg_status write_beta(const char *prefix, const tg_bed *bed, int k, char **names,
                            const double *beta, tg_error *err) {
    FILE *f;
    char *path = NULL, num[32];
    tg_status st = tg_out_open(prefix, ".beta.tsv", &f, &path, err);
    if (st) return st;
    fputs("SNP\tA1", f);
    for (int c = 0; c < k; c++) fprintf(f, "\t%s", names[c]);
    fputc('\n', f);
    for (int64_t j = 0; j < bed->n_snps; j++) {
        fprintf(f, "%s\t%s", bed->snps[j].id, bed->snps[j].a1);
        for (int c = 0; c < k; c++) {
            tg_text_format_double(beta[j + c * bed->n_snps], num);
            fprintf(f, "\t%s", num);
        }
        fputc('\n', f);
    }
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

static tg_status write_pred(const char *prefix, const tg_bed *bed, int k, char **names,
                            const double *pred, tg_error *err) { /* bed: the cohort predicted */
    FILE *f;
    char *path = NULL, num[32];
    tg_status st = tg_out_open(prefix, ".pred.tsv", &f, &path, err);
    if (st) return st;
    fputs("FID\tIID", f);
    for (int c = 0; c < k; c++) fprintf(f, "\t%s", names[c]);
    fputc('\n', f);
    for (int64_t i = 0; i < bed->n_samples; i++) {
        fprintf(f, "%s\t%s", bed->samples[i].fid, bed->samples[i].iid);
        for (int c = 0; c < k; c++) {
            tg_text_format_double(pred[i + c * bed->n_samples], num);
            fprintf(f, "\t%s", num);
        }
        fputc('\n', f);
    }
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

static tg_status write_summary(const char *prefix, int k, char **names, const tg_cg_pheno *pr,
                               tg_error *err) {
    FILE *f;
    char *path = NULL;
    tg_status st = tg_out_open(prefix, ".cg.tsv", &f, &path, err);
    if (st) return st;
    fputs("pheno\tn_obs\tmean\titerations\tconverged\trelres\ttrue_relres\n", f);
    for (int c = 0; c < k; c++)
        fprintf(f, "%s\t%lld\t%.17g\t%d\t%d\t%.6e\t%.6e\n", names[c], (long long)pr[c].n_obs,
                pr[c].mean, pr[c].iterations, pr[c].converged, pr[c].relres, pr[c].true_relres);
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

static tg_status write_rr_summary(const char *prefix, int k, char **names, int64_t nk,
                                  const double *mu, double lambda, tg_error *err) {
    FILE *f;
    char *path = NULL;
    tg_status st = tg_out_open(prefix, ".rr.tsv", &f, &path, err);
    if (st) return st;
    fputs("pheno\tn_obs\tmean\tlambda\tsolver\n", f);
    for (int c = 0; c < k; c++)
        fprintf(f, "%s\t%lld\t%.17g\t%.17g\tcholesky\n", names[c], (long long)nk, mu[c], lambda);
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

/* Everything the command allocates, freed at one place. */
typedef struct {
    tg_bed bed, test;
    tg_pheno ph;
    tg_geno *geno;
    int *cols, k;
    char **names, *line;
    size_t line_len;
    double *y, *jacobi, *beta, *pred, *mu, *test_pred;
    tg_cg_pheno *pr;
    /* --solver cholesky: the kept samples (rows of the .fam) and their phenotypes */
    int64_t nk, *rows;
    double *yk;
} rr_data;

/* The test cohort: the same SNPs in the same order with the same A1. */
static tg_status load_test(const rr_opts *o, rr_data *d, tg_log *log, tg_error *err) {
    tg_status st = tg_bed_open(o->test_bfile, &d->test, err);
    if (st) return st;
    if (d->test.n_snps != d->bed.n_snps)
        return tg_error_set(err, TG_ERR_ARG, "--test-bfile %s: %lld SNPs, %s.bim has %lld",
                            o->test_bfile, (long long)d->test.n_snps, o->bfile,
                            (long long)d->bed.n_snps);
    for (int64_t j = 0; j < d->bed.n_snps; j++) {
        const tg_snp *a = &d->bed.snps[j], *b = &d->test.snps[j];
        if (strcmp(a->id, b->id) || strcmp(a->a1, b->a1))
            return tg_error_set(err, TG_ERR_ARG,
                                "--test-bfile %s: SNP %lld of the .bim is %s (A1 %s), the "
                                "training SNP is %s (A1 %s): the same SNPs in the same order "
                                "with the same A1 are needed",
                                o->test_bfile, (long long)j + 1, b->id, b->a1, a->id, a->a1);
    }
    if (!(d->test_pred = tg_malloc((size_t)(d->test.n_samples * d->k) * sizeof(double), err)))
        return TG_ERR_NOMEM;
    tg_log_printf(log, "%s: %lld samples to predict", o->test_bfile,
                  (long long)d->test.n_samples);
    return TG_OK;
}

static tg_status load(const rr_opts *o, rr_data *d, tg_log *log, tg_error *err) {
    double t0 = tg_now();
    tg_status st = tg_bed_open(o->bfile, &d->bed, err);
    if (!st) st = tg_pheno_read(o->pheno, d->bed.samples, d->bed.n_samples, &d->ph, err);
    if (!st) st = tg_cli_columns(o->pheno, "pheno-name", o->pheno_names, &d->ph, &d->cols, &d->k, err);
    if (st) return st;
    const int64_t n = d->bed.n_samples, m = d->bed.n_snps, k = d->k;
    if (!(d->names = tg_malloc((size_t)k * sizeof *d->names, err)) ||
        !(d->y = tg_malloc((size_t)(n * k) * sizeof *d->y, err)) ||
        (!o->cholesky && !(d->jacobi = tg_malloc((size_t)(m * k) * sizeof *d->jacobi, err))) ||
        !(d->beta = tg_malloc((size_t)(m * k) * sizeof *d->beta, err)) ||
        !(d->pred = tg_malloc((size_t)(n * k) * sizeof *d->pred, err)) ||
        !(d->pr = tg_calloc((size_t)k, sizeof *d->pr, err)) ||
        !(d->mu = tg_malloc((size_t)k * sizeof *d->mu, err)))
        return TG_ERR_NOMEM;
    d->line_len = 64;
    for (int c = 0; c < k; c++) {
        d->names[c] = d->ph.names[d->cols[c]];
        d->line_len += strlen(d->names[c]) + 16;
        memcpy(d->y + c * n, d->ph.values + d->cols[c] * n, (size_t)n * sizeof *d->y);
        int64_t obs = 0;
        for (int64_t i = 0; i < n; i++) obs += !isnan(d->y[i + c * n]);
        if (obs < 2)
            return tg_error_set(err, TG_ERR_ARG,
                                "%s: phenotype %s has %lld value(s) for the samples of %s.fam, at "
                                "least 2 are needed",
                                o->pheno, d->names[c], (long long)obs, o->bfile);
    }
    if (!(d->line = tg_malloc(d->line_len, err))) return TG_ERR_NOMEM;
    tg_log_printf(log, "%s: %lld samples, %lld SNPs; %s: %d phenotype(s) used", o->bfile,
                  (long long)n, (long long)m, o->pheno, d->k);
    if (o->test_bfile && (st = load_test(o, d, log, err))) return st;
    tg_log_printf(log, "read inputs: %.3f s", tg_now() - t0);
    return TG_OK;
}

/* --solver cg: every phenotype on its own observed samples. A phenotype not converged is
 * TG_ERR_NUMERIC after the results are written. */
static tg_status solve_cg(const rr_opts *o, rr_data *d, tg_log *log, tg_error *err) {
    const int64_t n = d->bed.n_samples, m = d->bed.n_snps;
    double t0 = tg_now();
    tg_status st;
    if ((st = tg_geno_from_bed(&d->bed, o->scale, &d->geno, err)) ||
        (st = tg_ridge_jacobi_bed(&d->bed, d->geno, o->scale, d->k, d->y, n, d->jacobi, m, err)))
        return st;
    if (tg_geno_excluded(d->geno))
        tg_log_printf(log, "warning: %lld monomorphic or all-missing SNP(s): β = 0",
                      (long long)tg_geno_excluded(d->geno));
    if (tg_runtime_nranks() > 1) {
        int64_t first, rows;
        tg_geno_local(d->geno, &first, &rows);
        tg_log_printf(log, "%d MPI ranks: each holds the genotypes and sample vectors of its own "
                      "samples (rank 0: samples 1 to %lld of %lld), SNP vectors on every rank",
                      tg_runtime_nranks(), (long long)rows, (long long)n);
    }
    tg_log_printf(log, "genotypes and Jacobi preconditioner: %.3f s", tg_now() - t0);
    progress_ctx pc = {log, d->names, d->line, d->line_len};
    tg_cg_opts co = tg_cg_defaults();
    co.lambda = o->lambda;
    co.tol = o->tol;
    co.max_iter = (int)o->max_iter;
    co.jacobi = d->jacobi;
    co.ldj = m;
    co.progress = on_progress;
    co.ctx = &pc;
    tg_cg_report rep = {.pheno = d->pr};
    tg_status solve = tg_ridge_cg(d->geno, d->k, d->y, n, &co, d->beta, m, &rep, err);
    if (solve && solve != TG_ERR_NUMERIC) return solve;
    tg_log_printf(log, "cg: %d iterations, %lld products, %.3f s (products %.3f s; %.3f ms per "
                  "iteration)",
                  rep.iterations, (long long)rep.products, rep.seconds, rep.seconds_products,
                  rep.iterations ? 1e3 * rep.seconds / rep.iterations : 0.0);
    for (int c = 0; c < d->k; c++)
        tg_log_printf(log, "%s: %lld observed, %d iterations, relative residual %.3e (recomputed "
                      "%.3e)%s",
                      d->names[c], (long long)d->pr[c].n_obs, d->pr[c].iterations,
                      d->pr[c].relres, d->pr[c].true_relres,
                      d->pr[c].converged ? "" : " NOT CONVERGED");
    t0 = tg_now();
    if ((st = tg_ridge_predict(d->geno, d->k, d->y, n, d->beta, m, d->pred, n, d->mu, err)) ||
        (o->test_bfile &&
         (st = tg_ridge_predict_bed(d->geno, o->scale, &d->test, d->k, d->beta, m, d->mu,
                                    d->test_pred, d->test.n_samples, err))))
        return st;
    /* rank 0 holds every prediction and writes; every rank has the same β */
    if (tg_runtime_rank() == 0 &&
        ((st = write_beta(o->c.out, &d->bed, d->k, d->names, d->beta, err)) ||
         (st = o->test_bfile
                   ? write_pred(o->c.out, &d->test, d->k, d->names, d->test_pred, err)
                   : write_pred(o->c.out, &d->bed, d->k, d->names, d->pred, err)) ||
         (st = write_summary(o->c.out, d->k, d->names, d->pr, err))))
        return st;
    tg_log_printf(log, "wrote %s.beta.tsv, %s.pred.tsv (%s), %s.cg.tsv (%.3f s)", o->c.out,
                  o->c.out, o->test_bfile ? o->test_bfile : "in-sample", o->c.out, tg_now() - t0);
    tg_cli_log_traffic(log);
    if (!solve) return TG_OK;
    for (int c = 0; c < d->k; c++) /* TG_ERR_NUMERIC: name the first phenotype not converged */
        if (!d->pr[c].converged)
            return tg_error_set(err, solve,
                                "%s did not reach relative residual %g in %lld iterations (last "
                                "%.3g); results written, flagged in %s.cg.tsv",
                                d->names[c], o->tol, (long long)o->max_iter, d->pr[c].relres,
                                o->c.out);
    return solve;
}

/* --solver cholesky: the samples observed for every selected phenotype and their values. */
static tg_status chol_inputs(rr_data *d, tg_log *log, tg_error *err) {
    const int64_t n = d->bed.n_samples;
    if (!(d->rows = tg_malloc((size_t)n * sizeof *d->rows, err))) return TG_ERR_NOMEM;
    for (int64_t i = 0; i < n; i++) {
        int all = 1;
        for (int c = 0; c < d->k; c++) all &= !isnan(d->y[i + c * n]);
        if (all) d->rows[d->nk++] = i;
    }
    if (d->nk < n)
        tg_log_printf(log, "warning: %lld sample(s) with a selected phenotype missing dropped "
                      "(--solver cholesky uses the samples observed for every phenotype); %lld "
                      "kept", (long long)(n - d->nk), (long long)d->nk);
    if (d->nk < 2)
        return tg_error_set(err, TG_ERR_ARG,
                            "--solver cholesky: %lld sample(s) have every selected phenotype "
                            "observed; at least 2 are needed",
                            (long long)d->nk);
    if (!(d->yk = tg_malloc((size_t)(d->nk * d->k) * sizeof *d->yk, err))) return TG_ERR_NOMEM;
    for (int c = 0; c < d->k; c++)
        for (int64_t r = 0; r < d->nk; r++) d->yk[r + c * d->nk] = d->y[d->rows[r] + c * n];
    return TG_OK;
}

static tg_status solve_chol(const rr_opts *o, rr_data *d, tg_log *log, tg_error *err) {
    const int64_t m = d->bed.n_snps;
    tg_status st = chol_inputs(d, log, err);
    if (st) return st;
    tg_cli_log_grid(log, " of Z'Z", "SNP panel p built");
    tg_ridge_chol_opts ro = tg_ridge_chol_defaults();
    ro.lambda = o->lambda;
    ro.nb = (int)o->tile;
    ro.chol.eps = o->accuracy;
    ro.chol.allowed = o->allowed ? o->allowed
                                 : tg_cli_default_precisions(log, 1u << TG_FP64 | 1u << TG_FP32 |
                                                                      1u << TG_FP16,
                                                             1u << TG_FP64 | 1u << TG_FP32);
    ro.chol.diag = o->diag;
    tg_chol_report rep;
    double t0 = tg_now();
    if ((st = tg_ridge_chol_bed(&d->bed, d->rows, d->nk, o->scale, d->k, d->yk, d->nk, &ro,
                                d->beta, m, d->mu, &rep, &d->geno, err)))
        return st;
    double total = tg_now() - t0;
    if (tg_runtime_nranks() > 1) {
        int64_t first, rows;
        tg_geno_local(d->geno, &first, &rows);
        tg_log_printf(log, "each rank decoded its own samples' genotypes (rank 0: samples 1 to "
                      "%lld of the %lld kept) and every kept sample's genotypes of the SNPs of "
                      "its panels", (long long)rows, (long long)d->nk);
    }
    tg_log_printf(log, "precision map (diagonal %s, accuracy %g): fp64 %lld, fp32 %lld, fp16 "
                  "%lld, fp8 %lld tiles; %lld panel copies",
                  tg_prec_name(o->diag), o->accuracy, (long long)rep.tiles[TG_FP64],
                  (long long)rep.tiles[TG_FP32], (long long)rep.tiles[TG_FP16],
                  (long long)rep.tiles[TG_FP8_E4M3], (long long)rep.copies);
    tg_log_printf(log, "cholesky: %.3f s in all: precision map %.3f s, factorisation %.3f s "
                  "(%.3g TFLOP/s at m³/3), genotypes, Z'y, build of Z'Z and solve %.3f s",
                  total, rep.map_seconds, rep.factor_seconds,
                  (double)m * m * m / 3 / rep.factor_seconds / 1e12,
                  total - rep.map_seconds - rep.factor_seconds);
    /* the predictions use the training frequencies: the kept samples', in d->geno */
    t0 = tg_now();
    if (tg_geno_excluded(d->geno))
        tg_log_printf(log, "warning: %lld monomorphic or all-missing SNP(s): β = 0",
                      (long long)tg_geno_excluded(d->geno));
    const tg_bed *cohort = o->test_bfile ? &d->test : &d->bed;
    double *pred = o->test_bfile ? d->test_pred : d->pred;
    if ((st = tg_ridge_predict_bed(d->geno, o->scale, cohort, d->k, d->beta, m, d->mu, pred,
                                   cohort->n_samples, err)))
        return st;
    /* rank 0 holds every prediction and writes; every rank has the same β */
    if (tg_runtime_rank() == 0 &&
        ((st = write_beta(o->c.out, &d->bed, d->k, d->names, d->beta, err)) ||
         (st = write_pred(o->c.out, cohort, d->k, d->names, pred, err)) ||
         (st = write_rr_summary(o->c.out, d->k, d->names, d->nk, d->mu, o->lambda, err))))
        return st;
    tg_log_printf(log, "wrote %s.beta.tsv, %s.pred.tsv (%s), %s.rr.tsv (%.3f s)", o->c.out,
                  o->c.out, o->test_bfile ? o->test_bfile : "in-sample", o->c.out, tg_now() - t0);
    tg_cli_log_traffic(log);
    return TG_OK;
}

static int run(const rr_opts *o, rr_data *d, tg_log *log) {
    tg_error err = {0};
    tg_status st = load(o, d, log, &err);
    if (st) return tg_cli_fail("rr", log, &err);
    /* the tile Cholesky's CPU workers never got a task on the H100 node, and slowed it; the
     * genotype products of CG share the work */
    tg_runtime_opts ro = o->c.rt;
    ro.cpus_help_gpus = !o->cholesky;
    if ((st = tg_runtime_start(&ro, &err))) return tg_cli_fail("rr", log, &err);
    tg_cli_trace_start(&o->c);
    tg_cli_progress_on(&o->c);
    tg_cli_log_runtime(log, &ro);
    st = o->cholesky ? solve_chol(o, d, log, &err) : solve_cg(o, d, log, &err);
    if (!st) st = tg_cli_trace_stop(&o->c, "rr", log, &err);
    tg_cli_progress_off();
    /* the error first: with several ranks it ends them all, where stopping would wait for them;
     * except numerical failures, which every rank reaches alike: CG's (not converged,
     * breakdown) at the same iteration, its sums having the same bits everywhere, and the tile
     * Cholesky's (not SPD), whose info is summed over the ranks */
    int rc = 0;
    if (st == TG_ERR_NUMERIC)
        rc = tg_cli_fail_alike("rr", log, &err);
    else if (st)
        rc = tg_cli_fail("rr", log, &err);
    tg_geno_free(d->geno);
    d->geno = NULL;
    tg_runtime_stop();
    return rc;
}

int tg_cmd_rr(int argc, char **argv) {
    rr_opts o;
    rr_data d = {0};
    tg_error err = {0};
    tg_log *log = NULL;
    int st = parse_options(argc, argv, &o, &err);
    if (st < 0) return 0;
    if (st) return tg_cli_fail_options("rr", &err);
    if ((st = tg_cli_check_outputs(&o.c, &err))) return tg_cli_fail("rr", NULL, &err);
    if ((st = tg_log_open(&log, o.c.out, argc, argv, &err))) return tg_cli_fail("rr", NULL, &err);
    tg_log_set_quiet(log, o.c.quiet);
    if (o.cholesky)
        tg_log_file_only(log, "options: solver cholesky, lambda %.17g, tile %lld, accuracy %g, "
                         "precisions %s, diag %s, %s", o.lambda, (long long)o.tile, o.accuracy,
                         o.precisions ? o.precisions : "by the workers", tg_prec_name(o.diag),
                         o.scale ? "scaled SNPs" : "centered SNPs");
    else
        tg_log_file_only(log, "options: solver cg, lambda %.17g, tol %g, max-iter %lld, %s",
                         o.lambda, o.tol, (long long)o.max_iter,
                         o.scale ? "scaled SNPs" : "centered SNPs");
    int rc = run(&o, &d, log);
    free(d.rows);
    free(d.yk);
    free(d.line);
    free(d.test_pred);
    free(d.mu);
    free(d.pr);
    free(d.pred);
    free(d.beta);
    free(d.jacobi);
    free(d.y);
    free(d.names);
    free(d.cols);
    tg_pheno_free(&d.ph);
    tg_bed_close(&d.test);
    tg_bed_close(&d.bed);
    tg_log_close(log);
    return rc;
}
