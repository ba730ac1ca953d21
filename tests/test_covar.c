/* Covariates as fixed effects: the design of a covariate file (tg_pheno_read_opts with
 * categorical columns, tg_covar_make, tg_covar_apply) and the covariate-adjusted rr of both
 * solvers (tg_rr) against a dense FP64 reference written here from the model's definition: the
 * full normal equations
 *   [CᵀC  CᵀZ      ] [α]   [Cᵀy]
 *   [ZᵀC  ZᵀZ + λI ] [β] = [Zᵀy]
 * over the samples used (C = [1, covariates]), solved by LAPACK's dposv. n = 57 samples × m = 30
 * SNPs (5% missing calls), a numeric covariate AGE (3 samples missing) and a categorical GRP
 * (levels b, x2, x10: reference b by natural order; 2 samples missing), a constant column and one
 * collinear with AGE (both dropped), two phenotypes, the second missing 6 values. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/fixed.h"
#include "common.h"
#include "tap.h"

enum { N = 57, NT = 19, M = 30, K = 2, P = 4 /* 1 + AGE + 2 indicators */ };
static const double LAMBDA = 7;
static const char *GRP[3] = {"x10", "b", "x2"};

/* Z over samples rows[0..nk) of g (n rows): x − 2p, p over the samples freq_rows[0..nf), missing
 * calls 0, scaled by 1/sqrt(2p(1−p)) with @p scale. */
static void dense_z(const int8_t *g, int64_t n, const int64_t *rows, int64_t nk,
                    const int64_t *freq_rows, int64_t nf, int scale, double *freq, double *z) {
    for (int j = 0; j < M; j++) {
        double s = 0, c = 0;
        for (int64_t r = 0; r < nf; r++)
            if (g[freq_rows[r] + j * n] >= 0) s += g[freq_rows[r] + j * n], c++;
        double p = freq[j] = s / (2 * c), sd = scale ? sqrt(2 * p * (1 - p)) : 1;
        for (int64_t r = 0; r < nk; r++) {
            int8_t x = g[rows[r] + j * n];
            z[r + j * nk] = x >= 0 && sd > 0 ? (x - 2 * p) / sd : 0;
        }
    }
}

/* The full normal equations over rows[0..nk): α (P) and β (M) of phenotype column y. */
static int reference(const int8_t *g, const int64_t *rows, int64_t nk, const int64_t *freq_rows,
                     int64_t nf, int scale, const double *cov, const double *y, double *alpha,
                     double *beta) {
    enum { D = P + M };
    double *z = malloc(sizeof *z * (size_t)(nk * M)), *x = malloc(sizeof *x * (size_t)(nk * D)),
           a[D * D], b[D], freq[M];
    dense_z(g, N, rows, nk, freq_rows, nf, scale, freq, z);
    for (int64_t r = 0; r < nk; r++) { /* X = [1, covariates, Z] */
        x[r] = 1;
        for (int j = 1; j < P; j++) x[r + j * nk] = cov[rows[r] + (j - 1) * N];
        for (int j = 0; j < M; j++) x[r + (P + j) * nk] = z[r + j * nk];
    }
    for (int u = 0; u < D; u++) {
        double s = 0;
        for (int64_t r = 0; r < nk; r++) s += x[r + u * nk] * y[rows[r]];
        b[u] = s;
        for (int v = 0; v < D; v++) {
            s = u == v && u >= P ? LAMBDA : 0;
            for (int64_t r = 0; r < nk; r++) s += x[r + u * nk] * x[r + v * nk];
            a[u + v * D] = s;
        }
    }
    int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', D, 1, a, D, b, D);
    memcpy(alpha, b, sizeof *alpha * P);
    memcpy(beta, b + P, sizeof *beta * M);
    free(z);
    free(x);
    return info;
}

/* Cα + Zβ of sample i of genotypes g (n rows), Z centred (and scaled) by freq. */
static double predict_one(const int8_t *g, int64_t n, int64_t i, const double *cov, int64_t ldc,
                          const double *freq, int scale, const double *alpha, const double *beta) {
    double s = alpha[0];
    for (int j = 1; j < P; j++) s += cov[i + (j - 1) * ldc] * alpha[j];
    for (int j = 0; j < M; j++) {
        double p = freq[j], sd = scale ? sqrt(2 * p * (1 - p)) : 1;
        if (g[i + j * n] >= 0 && sd > 0) s += (g[i + j * n] - 2 * p) / sd * beta[j];
    }
    return s;
}

static double rel_err(const double *got, const double *want, int64_t n) {
    double d = 0, w = 0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(got[i] - want[i])), w = fmax(w, fabs(want[i]));
    return d / w;
}

static int has_covar(const tg_covar *cv, int64_t i) { return !isnan(cv->values[i]); }

/* A covariate file for n samples S0.. with AGE (NA where age_na), GRP, CONST, AGE2X = 2·AGE + 1. */
static void covar_file(tg_rng *r, const char *path, int64_t n, int with_extra) {
    FILE *f = fopen(path, "w");
    fprintf(f, "#FID IID AGE GRP%s\n", with_extra ? " CONST AGE2X" : "");
    for (int64_t i = 0; i < n; i++) {
        double age = 40 + (double)(int)(20 * tg_rng_uniform(r)) + 0.5 * (double)(i % 2);
        int na_age = with_extra && i % 19 == 7, na_grp = with_extra && i % 23 == 11;
        fprintf(f, "S%lld S%lld ", (long long)i, (long long)i);
        if (na_age) fprintf(f, "NA ");
        else fprintf(f, "%.17g ", age);
        fprintf(f, "%s", na_grp ? "NA" : GRP[(i * 7 + i / 3) % 3]);
        if (with_extra) {
            if (na_age) fprintf(f, " 1 NA\n");
            else fprintf(f, " 1 %.17g\n", 2 * age + 1);
        } else
            fputc('\n', f);
    }
    fclose(f);
}

/* The data every check reads. */
static int8_t g[N * M], gt[NT * M];
static double y[N * K];
static tg_bed bed, test;
static tg_covar cv, ct;

/* Both cohorts' covariate files read into designs (tests 1-4); 0 on success. */
static int check_design(const char *cpath, const char *tpath, tg_pheno *ph, tg_pheno *pt) {
    tg_error err = {0};
    tg_pheno_opts po = tg_pheno_defaults();
    po.categorical = 1;
    tg_status st = tg_pheno_read_opts(cpath, bed.samples, N, &po, ph, &err);
    ok(!st && ph->n_levels && ph->n_levels[0] == 0 && ph->n_levels[1] == 3 &&
           !strcmp(ph->levels[1][0], "b") && !strcmp(ph->levels[1][1], "x2") &&
           !strcmp(ph->levels[1][2], "x10"),
       "GRP read as categorical, levels in natural order b, x2, x10 %s", err.msg);
    if (!st) st = tg_covar_make(ph, cpath, &cv, &err);
    int64_t missing = 0;
    for (int64_t i = 0; i < N; i++) missing += i % 19 == 7 || i % 23 == 11;
    ok(!st && cv.n_cols == 3 && !strcmp(cv.names[0], "AGE") && !strcmp(cv.names[1], "GRP=x2") &&
           !strcmp(cv.names[2], "GRP=x10") && cv.n_missing == missing,
       "design AGE, GRP=x2, GRP=x10 (reference b); %lld samples missing a covariate",
       st ? -1LL : (long long)cv.n_missing);
    ok(!st && cv.n_dropped == 2 && strstr(cv.dropped[0], "CONST (constant)") &&
           strstr(cv.dropped[1], "AGE2X (collinear"),
       "the constant and the collinear column are dropped: %s; %s",
       !st && cv.n_dropped > 0 ? cv.dropped[0] : "-", !st && cv.n_dropped > 1 ? cv.dropped[1] : "-");
    if (st) return 1;
    po.names = "AGE,GRP";
    st = tg_pheno_read_opts(tpath, test.samples, NT, &po, pt, &err);
    if (!st) st = tg_covar_apply(&cv, pt, tpath, &ct, &err);
    ok(!st && ct.n_cols == 3 && ct.n_missing == 0 && !strcmp(ct.names[2], "GRP=x10"),
       "the test cohort's design built alike %s", err.msg);
    return st != TG_OK;
}

/* Predictions of @p cohort (genotypes gc, n rows, design cov) against the reference's. */
static double pred_err(const tg_rr_result *res, const int8_t *gc, int64_t n, const tg_covar *cov,
                       const double *freq, int scale, const double *alpha, const double *beta,
                       int *nan_ok) {
    double want[N * K], got[N * K];
    int64_t np = 0;
    *nan_ok = 1;
    for (int c = 0; c < K; c++)
        for (int64_t i = 0; i < n; i++) {
            if (!has_covar(cov, i)) {
                *nan_ok &= isnan(res->pred[i + c * n]);
                continue;
            }
            want[np] = predict_one(gc, n, i, cov->values, n, freq, scale, alpha + c * P,
                                   beta + c * M);
            got[np++] = res->pred[i + c * n];
        }
    return rel_err(got, want, np);
}

/* cholesky: the samples with both phenotypes and every covariate (tests 5-7). */
static void check_cholesky(tg_rr_opts o) {
    tg_error err = {0};
    int64_t rows[N], nk = 0;
    for (int64_t i = 0; i < N; i++)
        if (has_covar(&cv, i) && !isnan(y[i + N])) rows[nk++] = i;
    double alpha[P * K], beta[M * K], freq[M], z[N * M];
    int info = 0, nan_ok;
    for (int c = 0; c < K; c++)
        info |= reference(g, rows, nk, rows, nk, 1, cv.values, y + c * N, alpha + c * P,
                          beta + c * M);
    dense_z(g, N, rows, nk, rows, nk, 1, freq, z);
    o.solver = TG_RR_CHOLESKY, o.scale = 1, o.chol.nb = 16; /* 2 tiles of SNPs, the last ragged */
    o.chol.chol.allowed = 1u << TG_FP64;
    tg_rr_result res;
    tg_status st = tg_rr(&bed, K, y, N, NULL, &o, &res, &err);
    ok(!st && !info && res.n_used == nk && rel_err(res.beta, beta, M * K) < 1e-10 &&
           rel_err(res.alpha, alpha, P * K) < 1e-10,
       "cholesky: %lld samples used, beta within %.2g and alpha within %.2g of the dense "
       "reference %s",
       (long long)nk, st ? NAN : rel_err(res.beta, beta, M * K),
       st ? NAN : rel_err(res.alpha, alpha, P * K), err.msg);
    double e = st ? NAN : pred_err(&res, g, N, &cv, freq, 1, alpha, beta, &nan_ok);
    ok(!st && nan_ok && e < 1e-10,
       "cholesky: in-sample C alpha + Z beta within %.2g; NAN for samples missing a covariate", e);
    tg_rr_result_free(&res);
    st = tg_rr(&bed, K, y, N, &test, &o, &res, &err);
    e = st ? NAN : pred_err(&res, gt, NT, &ct, freq, 1, alpha, beta, &nan_ok);
    ok(!st && e < 1e-10, "cholesky: the test cohort's C_T alpha + Z_T beta within %.2g %s", e,
       err.msg);
    tg_rr_result_free(&res);
}

/* cg: each phenotype on its samples with every covariate; Z centred over every sample (tests
 * 8-11). */
static void check_cg(tg_rr_opts o) {
    tg_error err = {0};
    int64_t all[N], nobs[K];
    for (int64_t i = 0; i < N; i++) all[i] = i;
    double alpha[P * K], beta[M * K], freq[M], z[N * M];
    int info = 0, nan_ok;
    for (int c = 0; c < K; c++) {
        int64_t rc[N];
        nobs[c] = 0;
        for (int64_t i = 0; i < N; i++)
            if (has_covar(&cv, i) && !isnan(y[i + c * N])) rc[nobs[c]++] = i;
        info |= reference(g, rc, nobs[c], all, N, 0, cv.values, y + c * N, alpha + c * P,
                          beta + c * M);
    }
    dense_z(g, N, all, N, all, N, 0, freq, z);
    o.solver = TG_RR_CG, o.scale = 0, o.cg.tol = 1e-13;
    tg_rr_result res;
    tg_status st = tg_rr(&bed, K, y, N, NULL, &o, &res, &err);
    ok(!st && !info && res.pheno[0].n_obs == nobs[0] && res.pheno[1].n_obs == nobs[1] &&
           res.pheno[0].n_fixed == P && rel_err(res.beta, beta, M * K) < 1e-9,
       "cg: %lld and %lld samples used, beta within %.2g of the dense reference %s",
       (long long)nobs[0], (long long)nobs[1], st ? NAN : rel_err(res.beta, beta, M * K),
       err.msg);
    ok(!st && rel_err(res.alpha, alpha, P * K) < 1e-9,
       "cg: alpha (intercept, AGE, GRP=x2, GRP=x10) within %.2g",
       st ? NAN : rel_err(res.alpha, alpha, P * K));
    double e = st ? NAN : pred_err(&res, g, N, &cv, freq, 0, alpha, beta, &nan_ok);
    ok(!st && nan_ok && e < 1e-9, "cg: in-sample predictions within %.2g", e);
    tg_rr_result_free(&res);
    st = tg_rr(&bed, K, y, N, &test, &o, &res, &err);
    e = st ? NAN : pred_err(&res, gt, NT, &ct, freq, 0, alpha, beta, &nan_ok);
    ok(!st && e < 1e-9, "cg: the test cohort's predictions within %.2g %s", e, err.msg);
    tg_rr_result_free(&res);
}

/* tg_fixed_make: columns with the same observed samples share one basis, equal to the one each
 * would get alone (tg_fixed_basis on that column). Columns: the phenotypes y0, y0 + 1 (the same
 * samples), y1 (6 more missing), 2·y1. */
static void check_shared_bases(void) {
    double cols[4 * N];
    for (int64_t i = 0; i < N; i++) {
        cols[i] = y[i];
        cols[i + N] = y[i] + 1;
        cols[i + 2 * N] = y[i + N];
        cols[i + 3 * N] = 2 * y[i + N];
    }
    tg_fixed f;
    tg_error err = {0};
    if (!ok(tg_fixed_make(N, cv.values, N, cv.n_cols, 4, cols, N, &f, &err) == TG_OK,
            "fixed effects of 4 columns: %s", err.msg))
        return;
    int same = f.nbasis == 2 && f.basis[0] == f.basis[1] && f.basis[2] == f.basis[3] &&
               f.basis[0] != f.basis[2];
    for (int c = 0; c < 4; c++) {
        double Q[N * P], R[P * P] = {0};
        int kept[P], r = tg_fixed_basis(N, cols + c * N, cv.values, N, cv.n_cols, Q, N, R, P,
                                        kept, NULL);
        same &= r == f.r[c] && !memcmp(kept, f.kept + c * P, (size_t)r * sizeof *kept) &&
                !memcmp(Q, tg_fixed_q(&f, c), (size_t)(N * r) * sizeof *Q) &&
                !memcmp(R, tg_fixed_r(&f, c), sizeof R);
    }
    ok(same, "columns with the same observed samples share a basis (%lld bases for 4 columns: "
       "%lld %lld %lld %lld), each equal to the column's own", (long long)f.nbasis,
       (long long)f.basis[0], (long long)f.basis[1], (long long)f.basis[2],
       (long long)f.basis[3]);
    tg_fixed_free(&f);
}

int main(void) {
    tap_plan(14);
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    char dir[] = "/tmp/tg_covar_XXXXXX", train_p[64], test_p[64], cpath[96], tpath[96];
    tg_error err = {0};
    if (!mkdtemp(dir)) return 1;
    make_geno(&r, N, M, 0.1, 0.5, 0.05, g);
    make_geno(&r, NT, M, 0.1, 0.5, 0.05, gt);
    snprintf(train_p, sizeof train_p, "%s/train", dir);
    snprintf(test_p, sizeof test_p, "%s/test", dir);
    snprintf(cpath, sizeof cpath, "%s/train.cov", dir);
    snprintf(tpath, sizeof tpath, "%s/test.cov", dir);
    covar_file(&r, cpath, N, 1);
    covar_file(&r, tpath, NT, 0);
    tg_pheno ph, pt;
    tg_runtime_opts ro = tg_runtime_defaults();
    ro.ncpu = 2;
    if (write_bed(train_p, g, N, M, &err) || write_bed(test_p, gt, NT, M, &err) ||
        tg_bed_open(train_p, &bed, &err) || tg_bed_open(test_p, &test, &err) ||
        tg_runtime_start(&ro, &err) || check_design(cpath, tpath, &ph, &pt)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    /* phenotypes: covariates, one SNP, noise; the second misses 6 values */
    for (int64_t i = 0; i < N; i++) {
        double c = has_covar(&cv, i) ? 0.3 * cv.values[i] + 2 * cv.values[i + N] - cv.values[i + 2 * N] : 0;
        y[i] = 5 + c + (g[i + 3 * N] >= 0 ? g[i + 3 * N] : 1) + tg_rng_normal(&r);
        y[i + N] = i % 9 == 2 && i / 9 < 6 ? NAN : -2 + 0.5 * c + tg_rng_normal(&r);
    }

    tg_rr_opts o = tg_rr_defaults();
    o.lambda = LAMBDA;
    o.covar = cv.values, o.ldc = N, o.ncovar = cv.n_cols;
    o.test_covar = ct.values, o.ldt = NT;
    check_cholesky(o);
    check_cg(o);
    check_shared_bases();

    /* a test level the training lacks */
    tg_covar bad;
    pt.levels[1][0][0] = 'z'; /* the test cohort's level b renamed z */
    tg_status st = tg_covar_apply(&cv, &pt, tpath, &bad, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, tpath) && strstr(err.msg, "GRP"),
       "a level the training lacks: %s", err.msg);

    tg_covar_free(&ct);
    tg_covar_free(&cv);
    tg_pheno_free(&pt);
    tg_pheno_free(&ph);
    tg_runtime_stop();
    tg_bed_close(&bed);
    tg_bed_close(&test);
    remove_bed(train_p);
    remove_bed(test_p);
    unlink(cpath);
    unlink(tpath);
    rmdir(dir);
    return tap_done();
}
