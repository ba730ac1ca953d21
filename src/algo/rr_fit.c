/* The rr command's workflow as one call (tg_rr): ridge regression of several phenotypes on
 * every SNP of a fileset, by conjugate gradients (tg_ridge_cg, each phenotype on its observed
 * samples, Jacobi-preconditioned) or by the tile Cholesky (tg_ridge_chol_bed, on the samples
 * observed for every phenotype), then the predictions of the training cohort or of a test
 * cohort (tg_ridge_predict_bed, the training frequencies). The genotype matrix lives only
 * inside the call. Covariates are fixed effects beside the intercept (algo/fixed.h): both
 * solvers project them out, α comes from the residuals y − Zβ, and a prediction is Cα + Zβ. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/fixed.h"
#include "io/out.h"
#include "tilegwas.h"

tg_rr_opts tg_rr_defaults(void) {
    return (tg_rr_opts){.solver = TG_RR_CG, .lambda = 1, .cg = tg_cg_defaults(),
                        .chol = tg_ridge_chol_defaults()};
}

tg_status tg_rr_check_test(const tg_bed *train, const tg_bed *test, tg_error *err) {
    if (test->n_snps != train->n_snps)
        return tg_error_set(err, TG_ERR_ARG, "--test-bfile %s: %lld SNPs, %s.bim has %lld",
                            test->prefix, (long long)test->n_snps, train->prefix,
                            (long long)train->n_snps);
    for (int64_t j = 0; j < train->n_snps; j++) {
        const tg_snp *a = &train->snps[j], *b = &test->snps[j];
        if (strcmp(a->id, b->id) || strcmp(a->a1, b->a1))
            return tg_error_set(err, TG_ERR_ARG,
                                "--test-bfile %s: SNP %lld of the .bim is %s (A1 %s), the "
                                "training SNP is %s (A1 %s): the same SNPs in the same order "
                                "with the same A1 are needed",
                                test->prefix, (long long)j + 1, b->id, b->a1, a->id, a->a1);
    }
    return TG_OK;
}

void tg_rr_result_free(tg_rr_result *r) {
    free(r->beta);
    free(r->alpha);
    free(r->mu);
    free(r->pred);
    free(r->pheno);
    free(r->snps);
    memset(r, 0, sizeof *r);
}

/* r->snps over the samples rows[0..n) of @p bed (NULL: every sample), the output's A1_FREQ and
 * N: the frequencies that centred Z, counted again rather than taken from the genotype matrix,
 * which keeps no call counts. */
static tg_status snp_stats(const tg_bed *bed, const int64_t *rows, int64_t n, tg_rr_result *r,
                           tg_error *err) {
    tg_geno_source *src = NULL;
    tg_status st = tg_geno_source_bed(bed, &src, err);
    if (!st) st = tg_geno_source_select(src, rows, n, NULL, bed->n_snps, err);
    if (!st) st = tg_geno_source_stats(src, r->snps, err);
    tg_geno_source_free(src);
    return st;
}

/* α of the fixed effects on the samples of @p g (its rows: @p covar, y), and the fitted values
 * Cα + Zβ into @p pred when not NULL; r->mu the intercepts. */
static tg_status fixed_effects(tg_geno *g, const double *covar, int64_t ldc, int ncovar,
                               int64_t k, const double *y, int64_t ldy, tg_rr_result *r,
                               double *pred, tg_error *err) {
    const int64_t n = tg_geno_n(g), m = tg_geno_m(g);
    tg_fixed f;
    tg_status st = tg_fixed_make(n, covar, ldc, ncovar, k, y, ldy, &f, err);
    if (st) return st;
    st = tg_fixed_fit(g, &f, covar, ldc, y, ldy, r->beta, m, r->alpha, r->nalpha, pred, n, err);
    for (int64_t c = 0; c < k; c++) r->mu[c] = r->alpha[c * r->nalpha];
    tg_fixed_free(&f);
    return st;
}

/* pred += the covariates' part of Cα (the intercept is in tg_ridge_predict_bed's μ); NAN for a
 * sample missing a covariate. */
static void add_covariates(const tg_rr_result *r, int64_t k, const double *covar, int64_t ldc,
                           int64_t n, double *pred) {
    for (int64_t c = 0; c < k; c++) {
        const double *a = r->alpha + c * r->nalpha;
        for (int64_t i = 0; i < n; i++)
            pred[i + c * n] += tg_fixed_row(covar, ldc, r->nalpha - 1, i, a) - a[0];
    }
}

/* TG_RR_CG: every phenotype on its own observed samples with every covariate. A phenotype not
 * converged is TG_ERR_NUMERIC after the predictions are made. */
static tg_status fit_cg(const tg_bed *bed, int64_t k, const double *y, int64_t ldy,
                        const tg_bed *test, const tg_rr_opts *o, tg_rr_result *r, tg_geno **geno,
                        tg_error *err) {
    const int64_t n = bed->n_samples, m = bed->n_snps;
    double *jacobi = tg_malloc_n(m, k, sizeof *jacobi, err), *in_sample = NULL;
    double *ym = tg_malloc_n(n, k, sizeof *ym, err);
    if (!jacobi || !ym) {
        free(jacobi);
        return TG_ERR_NOMEM;
    }
    /* a sample missing a covariate is missing for every phenotype (the Jacobi counts too) */
    for (int64_t c = 0; c < k; c++)
        for (int64_t i = 0; i < n; i++) {
            int all = 1;
            for (int j = 0; j < o->ncovar; j++) all &= isfinite(o->covar[i + j * o->ldc]) != 0;
            ym[i + c * n] = all ? y[i + c * ldy] : NAN;
        }
    double t0 = tg_now();
    tg_status st;
    if ((st = snp_stats(bed, NULL, n, r, err)) ||
        (st = tg_geno_from_bed(bed, o->scale, geno, err)) ||
        (st = tg_ridge_jacobi_bed(bed, *geno, o->scale, k, ym, n, jacobi, m, err)))
        goto done;
    r->seconds_prepare = tg_now() - t0;
    tg_cg_opts co = o->cg;
    co.lambda = o->lambda;
    co.jacobi = jacobi;
    co.ldj = m;
    co.covar = o->covar;
    co.ldc = o->ldc;
    co.ncovar = o->ncovar;
    r->cg = (tg_cg_report){.pheno = r->pheno};
    tg_status solve = tg_ridge_cg(*geno, k, ym, n, &co, r->beta, m, &r->cg, err);
    r->seconds_solve = r->cg.seconds;
    if (solve && solve != TG_ERR_NUMERIC) {
        st = solve;
        goto done;
    }
    t0 = tg_now();
    /* the in-sample fit gives α; with a test cohort its values are not kept */
    in_sample = test ? tg_malloc_n(n, k, sizeof *in_sample, err) : r->pred;
    if (!in_sample) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    if (!(st = fixed_effects(*geno, o->covar, o->ldc, o->ncovar, k, ym, n, r, in_sample, err)) &&
        test &&
        !(st = tg_ridge_predict_bed(*geno, o->scale, test, k, r->beta, m, r->mu, r->pred,
                                    test->n_samples, err)))
        add_covariates(r, k, o->test_covar, o->ldt, test->n_samples, r->pred);
    r->seconds_predict = tg_now() - t0;
    if (!st) st = solve;
done:
    if (in_sample != r->pred) free(in_sample);
    free(jacobi);
    free(ym);
    return st;
}

/* TG_RR_CHOLESKY: the samples observed for every phenotype and covariate, their values into
 * *yk and *ck. */
static tg_status complete_cases(const tg_bed *bed, int64_t k, const double *y, int64_t ldy,
                                const tg_rr_opts *o, tg_rr_result *r, int64_t **rows, double **yk,
                                double **ck, tg_error *err) {
    const int64_t n = bed->n_samples;
    if (!(*rows = tg_malloc_n(n, 1, sizeof **rows, err))) return TG_ERR_NOMEM;
    int64_t nk = 0;
    for (int64_t i = 0; i < n; i++) {
        int all = 1;
        for (int64_t c = 0; c < k; c++) all &= !isnan(y[i + c * ldy]);
        for (int j = 0; j < o->ncovar; j++) all &= isfinite(o->covar[i + j * o->ldc]) != 0;
        if (all) (*rows)[nk++] = i;
    }
    r->n_used = nk;
    if (nk < 2)
        return tg_error_set(err, TG_ERR_ARG,
                            "--solver cholesky: %lld sample(s) have every selected phenotype "
                            "and covariate observed; at least 2 are needed",
                            (long long)nk);
    if (!(*yk = tg_malloc_n(nk, k, sizeof **yk, err)) ||
        !(*ck = tg_malloc_n(nk, o->ncovar, sizeof **ck, err)))
        return TG_ERR_NOMEM;
    for (int64_t c = 0; c < k; c++)
        for (int64_t i = 0; i < nk; i++) (*yk)[i + c * nk] = y[(*rows)[i] + c * ldy];
    for (int j = 0; j < o->ncovar; j++)
        for (int64_t i = 0; i < nk; i++) (*ck)[i + j * nk] = o->covar[(*rows)[i] + j * o->ldc];
    return TG_OK;
}

static tg_status fit_chol(const tg_bed *bed, int64_t k, const double *y, int64_t ldy,
                          const tg_bed *test, const tg_rr_opts *o, tg_rr_result *r,
                          tg_geno **geno, tg_error *err) {
    const int64_t m = bed->n_snps;
    int64_t *rows = NULL;
    double *yk = NULL, *ck = NULL;
    tg_status st = complete_cases(bed, k, y, ldy, o, r, &rows, &yk, &ck, err);
    if (!st) st = snp_stats(bed, rows, r->n_used, r, err);
    if (st) goto done;
    tg_ridge_chol_opts ro = o->chol;
    ro.lambda = o->lambda;
    ro.covar = ck;
    ro.ldc = r->n_used;
    ro.ncovar = o->ncovar;
    double t0 = tg_now();
    if ((st = tg_ridge_chol_bed(bed, rows, r->n_used, o->scale, k, yk, r->n_used, &ro, r->beta,
                                m, r->mu, &r->chol, geno, err)))
        goto done;
    for (int64_t c = 0; c < k; c++) /* the means; r->mu becomes the intercepts below */
        r->pheno[c] = (tg_cg_pheno){.n_obs = r->n_used, .mean = r->mu[c]};
    r->seconds_solve = tg_now() - t0;
    /* the predictions use the training frequencies: the kept samples', in *geno */
    t0 = tg_now();
    const tg_bed *cohort = test ? test : bed;
    if (!(st = fixed_effects(*geno, ck, r->n_used, o->ncovar, k, yk, r->n_used, r, NULL, err)) &&
        !(st = tg_ridge_predict_bed(*geno, o->scale, cohort, k, r->beta, m, r->mu, r->pred,
                                    cohort->n_samples, err)))
        add_covariates(r, k, test ? o->test_covar : o->covar, test ? o->ldt : o->ldc,
                       cohort->n_samples, r->pred);
    r->seconds_predict = tg_now() - t0;
done:
    free(ck);
    free(yk);
    free(rows);
    return st;
}

tg_status tg_rr(const tg_bed *bed, int64_t nphen, const double *y, int64_t ldy,
                const tg_bed *test, const tg_rr_opts *o, tg_rr_result *r, tg_error *err) {
    memset(r, 0, sizeof *r);
    const int64_t m = bed->n_snps, np = test ? test->n_samples : bed->n_samples;
    tg_status st = test ? tg_rr_check_test(bed, test, err) : TG_OK;
    if (st) return st;
    if (o->ncovar < 0 || (o->ncovar && (!o->covar || o->ldc < bed->n_samples ||
                                        (test && (!o->test_covar || o->ldt < np)))))
        return tg_error_set(err, TG_ERR_ARG, "rr: %d covariate(s) without the matrices (of the "
                            "training%s cohort) or with a short leading dimension", o->ncovar,
                            test ? " and test" : "");
    r->nalpha = o->ncovar + 1;
    if (!(r->beta = tg_malloc_n(m, nphen, sizeof *r->beta, err)) ||
        !(r->alpha = tg_malloc_n(r->nalpha, nphen, sizeof *r->alpha, err)) ||
        !(r->mu = tg_malloc_n(nphen, 1, sizeof *r->mu, err)) ||
        !(r->pred = tg_malloc_n(np, nphen, sizeof *r->pred, err)) ||
        !(r->pheno = tg_calloc_n(nphen, 1, sizeof *r->pheno, err)) ||
        !(r->snps = tg_malloc_n(m, 1, sizeof *r->snps, err)))
        return TG_ERR_NOMEM;
    r->n_used = bed->n_samples;
    tg_geno *geno = NULL;
    st = o->solver == TG_RR_CHOLESKY ? fit_chol(bed, nphen, y, ldy, test, o, r, &geno, err)
                                     : fit_cg(bed, nphen, y, ldy, test, o, r, &geno, err);
    if (geno) {
        int64_t first;
        tg_geno_local(geno, &first, &r->local_rows);
        r->excluded = tg_geno_excluded(geno);
    }
    tg_geno_free(geno);
    return st;
}
