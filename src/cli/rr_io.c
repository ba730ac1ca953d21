/* tilegwas rr: the inputs (fileset, phenotypes, test fileset) and, after tg_rr, the log lines
 * and the summary table of the fit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/rr.h"

void rr_on_progress(void *vctx, int iter, int64_t nphen, const double *relres) {
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

tg_status rr_write_summary(const rr_opts *o, int k, char **names, const tg_rr_result *r,
                           tg_error *err) {
    FILE *f;
    char *path = NULL;
    tg_status st = tg_out_open(o->c.out, o->cholesky ? ".rr.tsv" : ".cg.tsv", &f, &path, err);
    if (st) return st;
    const tg_cg_pheno *p = r->pheno;
    if (o->cholesky)
        fputs("pheno\tn_obs\tmean\tlambda\tsolver\n", f);
    else
        fputs("pheno\tn_obs\tmean\titerations\tconverged\trelres\ttrue_relres\n", f);
    for (int c = 0; c < k; c++)
        if (o->cholesky)
            fprintf(f, "%s\t%lld\t%.17g\t%.17g\tcholesky\n", names[c], (long long)r->n_used,
                    p[c].mean, o->lambda);
        else
            fprintf(f, "%s\t%lld\t%.17g\t%d\t%d\t%.6e\t%.6e\n", names[c], (long long)p[c].n_obs,
                    p[c].mean, p[c].iterations, p[c].converged, p[c].relres, p[c].true_relres);
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

tg_status rr_load(const rr_opts *o, rr_data *d, tg_log *log, tg_error *err) {
    double t0 = tg_now();
    tg_status st = tg_cli_input_open(&o->c, log, &d->bed, err);
    if (!st) st = tg_cli_phenotypes(log, o->pheno, o->pheno_col_nums, &d->bed, &d->ph, err);
    /* the phenotypes' source, for messages */
    const char *src = o->pheno ? o->pheno : "the .fam";
    if (!st) st = tg_cli_columns(src, "pheno-name", o->pheno_names, &d->ph, &d->cols, &d->k, err);
    if (st) return st;
    const int64_t n = d->bed.n_samples;
    if (!(d->names = tg_malloc_n(d->k, 1, sizeof *d->names, err)) ||
        !(d->y = tg_malloc_n(n, d->k, sizeof *d->y, err)))
        return TG_ERR_NOMEM;
    d->line_len = 64;
    for (int c = 0; c < d->k; c++) {
        d->names[c] = d->ph.names[d->cols[c]];
        d->line_len += strlen(d->names[c]) + 16;
        memcpy(d->y + c * n, d->ph.values + d->cols[c] * n, (size_t)n * sizeof *d->y);
        int64_t obs = 0;
        for (int64_t i = 0; i < n; i++) obs += !isnan(d->y[i + c * n]);
        if (obs < 2)
            return tg_error_set(err, TG_ERR_ARG,
                                "%s: phenotype %s has %lld value(s) for the samples of %s, at "
                                "least 2 are needed",
                                src, d->names[c], (long long)obs, o->c.in.path);
    }
    if (!(d->line = tg_malloc(d->line_len, err))) return TG_ERR_NOMEM;
    tg_log_printf(log, "%s: %d phenotype(s) used", src, d->k);
    if (o->covar && (st = tg_cli_covariates(log, o->covar, o->covar_names, o->covar_col_nums,
                                            d->bed.samples, n, NULL, &d->cv, err)))
        return st;
    if (o->test_bfile) {
        if ((st = tg_cli_test_open(&o->c, log, o->test_bfile, &d->bed, &d->test, err)))
            return st;
        tg_log_printf(log, "%s: %lld samples to predict", o->test_bfile,
                      (long long)d->test.n_samples);
        if (o->test_covar &&
            (st = tg_cli_covariates(log, o->test_covar, NULL, NULL, d->test.samples,
                                    d->test.n_samples, &d->cv, &d->tcv, err)))
            return st;
    }
    tg_log_printf(log, "read inputs: %.3f s", tg_now() - t0);
    return TG_OK;
}

void rr_log_fit(const rr_opts *o, const rr_data *d, const tg_rr_result *r, tg_log *log) {
    const int64_t m = d->bed.n_snps;
    if (r->excluded)
        tg_log_printf(log, "warning: %lld monomorphic or all-missing SNP(s): β = 0",
                      (long long)r->excluded);
    if (o->cholesky) {
        const tg_chol_report *c = &r->chol;
        if (tg_runtime_nranks() > 1)
            tg_log_printf(log, "each rank decoded its own samples' genotypes (rank 0: samples 1 "
                          "to %lld of the %lld kept) and every kept sample's genotypes of the "
                          "SNPs of its panels", (long long)r->local_rows, (long long)r->n_used);
        tg_log_printf(log, "precision map (diagonal %s, accuracy %g): fp64 %lld, fp32 %lld, "
                      "fp16 %lld, fp8 %lld tiles; %lld panel copies", tg_prec_name(o->diag),
                      o->accuracy, (long long)c->tiles[TG_FP64], (long long)c->tiles[TG_FP32],
                      (long long)c->tiles[TG_FP16], (long long)c->tiles[TG_FP8_E4M3],
                      (long long)c->copies);
        tg_log_printf(log, "cholesky: %.3f s in all: precision map %.3f s, factorisation %.3f s "
                      "(%.3g TFLOP/s at m³/3), genotypes, Z'y, build of Z'Z and solve %.3f s",
                      r->seconds_solve, c->map_seconds, c->factor_seconds,
                      (double)m * m * m / 3 / c->factor_seconds / 1e12,
                      r->seconds_solve - c->map_seconds - c->factor_seconds);
        return;
    }
    if (tg_runtime_nranks() > 1)
        tg_log_printf(log, "%d MPI ranks: each holds the genotypes and sample vectors of its own "
                      "samples (rank 0: samples 1 to %lld of %lld), SNP vectors on every rank",
                      tg_runtime_nranks(), (long long)r->local_rows, (long long)d->bed.n_samples);
    tg_log_printf(log, "genotypes and Jacobi preconditioner: %.3f s", r->seconds_prepare);
    const tg_cg_report *cg = &r->cg;
    tg_log_printf(log, "cg: %d iterations, %lld products, %.3f s (products %.3f s; %.3f ms per "
                  "iteration)", cg->iterations, (long long)cg->products, cg->seconds,
                  cg->seconds_products, cg->iterations ? 1e3 * cg->seconds / cg->iterations : 0.0);
    for (int c = 0; c < d->k; c++)
        tg_log_printf(log, "%s: %lld observed, %d iterations, relative residual %.3e (recomputed "
                      "%.3e)%s", d->names[c], (long long)r->pheno[c].n_obs,
                      r->pheno[c].iterations, r->pheno[c].relres, r->pheno[c].true_relres,
                      r->pheno[c].converged ? "" : " NOT CONVERGED");
}
