/* Ridge regression by conjugate gradients, its Jacobi preconditioner, the fitted values and the
 * GRM, against a dense double reference written here from the model's definition: Z built
 * naively from the int8 genotypes (mean imputation, centering, optional scaling), for each
 * phenotype the observed rows with their columns centered, A = ZᵀZ + λI, β = A⁻¹Zᵀ(y − ȳ) by
 * LAPACK's dposv. Random genotypes with missing calls, a monomorphic and an all-missing SNP,
 * sizes not multiples of 4, 5 or 64, phenotypes with missing values; more than 64 phenotypes
 * (the products' column limit), also with a λ per phenotype. The whole set runs on CPU
 * workers only, then again with every GPU (TG_REQUIRE_GPU=1: a missing GPU fails), both
 * against the same reference. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "common.h"
#include "tap.h"
#include "tilegwas.h"

enum { N = 157, M = 83, NPHEN = 3, WIDE_N = 53, WIDE_M = 23, WIDE_K = 70 };

/* Genotypes n × m: SNP 0 monomorphic, SNP 1 all missing, SNP 2 all 2 but a few missing, the
 * rest Hardy-Weinberg draws with p ~ U[0.05, 0.5] and 5% missing calls. */
static void make_test_geno(tg_rng *r, int64_t n, int64_t m, int8_t *g) {
    make_geno(r, n, m, 0.05, 0.5, 0.05, g);
    for (int64_t i = 0; i < n; i++) {
        g[i] = 0;
        g[i + n] = TG_GENO_MISSING;
        if (g[i + 2 * n] != TG_GENO_MISSING) g[i + 2 * n] = 2;
    }
}

/* SNP j of genotypes n × m: p over non-missing calls and the column's scale w (1/sqrt(2p(1−p))
 * or 1; 0 when p ∉ (0, 1), a zero column). */
static double snp_freq(const int8_t *g, int64_t n, int64_t j, int scale, double *w) {
    double s = 0, c = 0;
    for (int64_t i = 0; i < n; i++)
        if (g[i + j * n] != TG_GENO_MISSING) s += g[i + j * n], c++;
    double p = c > 0 ? s / (2 * c) : 0;
    *w = !(p > 0 && p < 1) ? 0 : scale ? 1 / sqrt(2 * p * (1 - p)) : 1;
    return p;
}

/* Dense Z (n × m) by the definition: Z_ij = (x_ij − 2p_j)·w_j, 0 where missing. */
static void dense_z(const int8_t *g, int64_t n, int64_t m, int scale, double *z) {
    for (int64_t j = 0; j < m; j++) {
        double w, p = snp_freq(g, n, j, scale, &w);
        for (int64_t i = 0; i < n; i++)
            z[i + j * n] = g[i + j * n] != TG_GENO_MISSING ? (g[i + j * n] - 2 * p) * w : 0;
    }
}

/* Observed rows of y with Z's columns centered over them: zc (nc × m), yc (nc). Returns nc. */
static int64_t observed(const double *z, int64_t n, int64_t m, const double *y, double *zc,
                        double *yc) {
    int64_t nc = 0;
    double ym = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(y[i])) yc[nc++] = y[i], ym += y[i];
    ym /= (double)nc;
    for (int64_t i = 0; i < nc; i++) yc[i] -= ym;
    for (int64_t j = 0; j < m; j++) {
        double s = 0;
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            if (!isnan(y[i])) zc[k + j * nc] = z[i + j * n], s += z[i + j * n], k++;
        for (int64_t i = 0; i < nc; i++) zc[i + j * nc] -= s / (double)nc;
    }
    return nc;
}

/* Reference β (m) of one phenotype, and diag(Z̃ᵀZ̃) (m). Returns LAPACK's info. */
static int ref_solve(const double *z, int64_t n, int64_t m, const double *y, double lambda,
                     double *beta, double *diag) {
    double *zc = malloc(sizeof(double) * (size_t)(n * m)), *yc = malloc(sizeof(double) * (size_t)n),
           *a = malloc(sizeof(double) * (size_t)(m * m));
    int64_t nc = observed(z, n, m, y, zc, yc);
    for (int64_t j = 0; j < m; j++) {
        double s = 0;
        for (int64_t i = 0; i < nc; i++) s += zc[i + j * nc] * yc[i];
        beta[j] = s;
        for (int64_t k = 0; k < m; k++) {
            double t = 0;
            for (int64_t i = 0; i < nc; i++) t += zc[i + j * nc] * zc[i + k * nc];
            a[j + k * m] = t + (j == k ? lambda : 0);
        }
        diag[j] = a[j + j * m] - lambda;
    }
    int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', (int)m, 1, a, (int)m, beta, (int)m);
    free(zc);
    free(yc);
    free(a);
    return info;
}

/* ‖a − b‖ / ‖b‖ over columns of length len (leading dimensions lda, ldb). */
static double rel_err(const double *a, int64_t lda, const double *b, int64_t ldb, int64_t len,
                      int64_t k) {
    double d = 0, s = 0;
    for (int64_t c = 0; c < k; c++)
        for (int64_t i = 0; i < len; i++) {
            double e = a[i + c * lda] - b[i + c * ldb];
            d += e * e;
            s += b[i + c * ldb] * b[i + c * ldb];
        }
    return s > 0 ? sqrt(d / s) : sqrt(d);
}

/* Phenotypes y = Zβ* + e (n × k), Z standardised, β* ~ N(0, 1/m); column c gets ~10·c % NANs. */
static void make_pheno(tg_rng *r, const double *zs, int64_t n, int64_t m, int64_t k, double *y) {
    for (int64_t c = 0; c < k; c++) {
        for (int64_t i = 0; i < n; i++) y[i + c * n] = tg_rng_normal(r);
        for (int64_t j = 0; j < m; j++) {
            double b = tg_rng_normal(r) / sqrt((double)m);
            for (int64_t i = 0; i < n; i++) y[i + c * n] += zs[i + j * n] * b;
        }
        for (int64_t i = 0; i < n; i++)
            if (tg_rng_uniform(r) < 0.1 * (double)(c % 4)) y[i + c * n] = NAN;
    }
}

typedef struct {
    int calls, last_iter;
    double last[WIDE_K];
} progress_log;

static void on_progress(void *ctx, int iter, int64_t nphen, const double *relres) {
    progress_log *l = ctx;
    l->calls++;
    l->last_iter = iter;
    for (int64_t c = 0; c < nphen && c < WIDE_K; c++)
        if (!isnan(relres[c])) l->last[c] = relres[c];
}

/* The solver against the reference for one scaling, with and without the preconditioner. */
static void check_solve(tg_rng *r, const int8_t *g, int scale, const char *where) {
    tg_error err = {0};
    tg_geno *geno = NULL;
    double *z = malloc(sizeof(double) * N * M), *zs = malloc(sizeof(double) * N * M),
           *y = malloc(sizeof(double) * N * NPHEN), *ref = malloc(sizeof(double) * M * NPHEN),
           *dref = malloc(sizeof(double) * M * NPHEN), *d = malloc(sizeof(double) * M * NPHEN),
           *beta = malloc(sizeof(double) * M * NPHEN), *b1 = malloc(sizeof(double) * M),
           *pred = malloc(sizeof(double) * N * NPHEN);
    const double lambda = 20, tol = 1e-10;
    dense_z(g, N, M, scale, z);
    dense_z(g, N, M, 1, zs);
    make_pheno(r, zs, N, M, NPHEN, y);
    int info = 0;
    for (int c = 0; c < NPHEN; c++)
        info |= ref_solve(z, N, M, y + c * N, lambda, ref + c * M, dref + c * M);
    if (!ok(!info && !tg_geno_from_int8(g, N, M, N, scale, &geno, &err),
            "%s scale %d: reference solved, genotypes prepared %s", where, scale, err.msg))
        goto cleanup;

    tg_status st = tg_ridge_jacobi_int8(g, N, geno, scale, NPHEN, y, N, d, M, &err);
    double e = rel_err(d, M, dref, M, M, NPHEN);
    ok(!st && e <= 1e-13, "%s scale %d: Jacobi diagonal = diag(Z̃ᵀZ̃) of each phenotype (rel %.2g)",
       where, scale, e);

    int iters[2];
    for (int pre = 1; pre >= 0; pre--) {
        tg_cg_pheno pr[NPHEN];
        tg_cg_report rep = {.pheno = pr};
        progress_log lg = {0};
        tg_cg_opts o = tg_cg_defaults();
        o.lambda = lambda;
        o.tol = tol;
        o.jacobi = pre ? d : NULL;
        o.ldj = M;
        o.progress = on_progress;
        o.ctx = &lg;
        st = tg_ridge_cg(geno, NPHEN, y, N, &o, beta, M, &rep, &err);
        e = rel_err(beta, M, ref, M, M, NPHEN);
        iters[pre] = rep.iterations;
        ok(!st && e <= 1e-8, "%s scale %d %s: β matches LAPACK dposv (rel %.2g, %d iterations) %s",
           where, scale, pre ? "Jacobi" : "no preconditioner", e, rep.iterations, err.msg);
        int fine = lg.calls == rep.iterations && lg.last_iter == rep.iterations;
        for (int c = 0; c < NPHEN; c++)
            fine &= pr[c].converged && pr[c].relres <= tol && lg.last[c] == pr[c].relres &&
                    pr[c].true_relres <= 100 * tol && pr[c].iterations <= rep.iterations;
        ok(fine, "%s scale %d %s: per-iteration residuals reported, each phenotype ≤ tol, true "
           "residual ≤ 100·tol (%.2g %.2g %.2g)", where, scale, pre ? "Jacobi" : "plain",
           pr[0].true_relres, pr[1].true_relres, pr[2].true_relres);
    }
    /* unscaled columns differ in variance by up to 5×, which Jacobi removes; the spread of
     * ZᵀZ's eigenvalues from n/m ≈ 2 remains, so the gain is a few iterations (1–3 seen) */
    if (!scale)
        ok(iters[1] <= iters[0], "%s unscaled: Jacobi takes no more iterations (%d) than none (%d)",
           where, iters[1], iters[0]);

    /* phenotype 2 alone gives the same β as in the block */
    tg_cg_pheno p1;
    tg_cg_report rep1 = {.pheno = &p1};
    tg_cg_opts o = tg_cg_defaults();
    o.lambda = lambda;
    o.tol = tol;
    o.jacobi = d + M;
    o.ldj = M;
    st = tg_ridge_cg(geno, 1, y + N, N, &o, b1, M, &rep1, &err);
    e = rel_err(b1, M, ref + M, M, M, 1);
    ok(!st && e <= 1e-8, "%s scale %d: a phenotype solved alone matches (rel %.2g)", where, scale,
       e);

    /* SNP groups left out (tg_cg_opts.drop): group j mod 3 of SNP j, phenotype c without
     * group c mod 3 − 1 (none for the first): the reference is the ridge on Z with those SNPs'
     * columns zeroed, whose β there is 0 */
    {
        int grp[M], drop[NPHEN];
        double *zd = malloc(sizeof(double) * N * M), *rd = malloc(sizeof(double) * M * NPHEN),
               *dd0 = malloc(sizeof(double) * M);
        for (int64_t j = 0; j < M; j++) grp[j] = (int)(j % 3);
        int info2 = 0;
        for (int c = 0; c < NPHEN; c++) {
            drop[c] = c % 3 - 1;
            for (int64_t j = 0; j < M; j++)
                for (int64_t i = 0; i < N; i++)
                    zd[i + j * N] = grp[j] == drop[c] ? 0 : z[i + j * N];
            info2 |= ref_solve(zd, N, M, y + c * N, lambda, rd + c * M, dd0);
        }
        tg_cg_pheno pd[NPHEN];
        tg_cg_report repd = {.pheno = pd};
        o.jacobi = d;
        o.drop = drop;
        o.chrom_of = grp;
        st = tg_ridge_cg(geno, NPHEN, y, N, &o, beta, M, &repd, &err);
        e = rel_err(beta, M, rd, M, M, NPHEN);
        int zero = 1;
        for (int c = 0; c < NPHEN; c++)
            for (int64_t j = 0; j < M; j++) zero &= grp[j] != drop[c] || beta[j + c * M] == 0;
        ok(!st && !info2 && e <= 1e-8 && zero, "%s scale %d: SNP groups left out: β matches the "
           "ridge without them (rel %.2g), exactly 0 on them %s", where, scale, e, err.msg);
        free(zd);
        free(rd);
        free(dd0);
        o.drop = NULL;
        st = tg_ridge_cg(geno, NPHEN, y, N, &o, beta, M, &repd, &err); /* β as before */
    }

    /* fitted values ŷ = ȳ + Zβ − mean_O(Zβ) */
    st = tg_ridge_predict(geno, NPHEN, y, N, beta, M, pred, N, NULL, &err);
    double dd = 0, ss = 0;
    for (int c = 0; c < NPHEN; c++) {
        double sy = 0, sz = 0, no = 0, *zb = malloc(sizeof(double) * N);
        for (int64_t i = 0; i < N; i++) {
            zb[i] = 0;
            for (int64_t j = 0; j < M; j++) zb[i] += z[i + j * N] * ref[j + c * M];
            if (!isnan(y[i + c * N])) sy += y[i + c * N], sz += zb[i], no++;
        }
        for (int64_t i = 0; i < N; i++) {
            double want = zb[i] + (sy - sz) / no;
            dd += (pred[i + c * N] - want) * (pred[i + c * N] - want);
            ss += want * want;
        }
        free(zb);
    }
    ok(!st && sqrt(dd / ss) <= 1e-8, "%s scale %d: fitted values match (rel %.2g)", where, scale,
       sqrt(dd / ss));
cleanup:
    tg_geno_free(geno);
    free(z);
    free(zs);
    free(y);
    free(ref);
    free(dref);
    free(d);
    free(beta);
    free(b1);
    free(pred);
}

/* More phenotypes than one product takes (70 > 64), and a constant phenotype (b = 0). */
static void check_wide(tg_rng *r, const char *where) {
    enum { n = WIDE_N, m = WIDE_M, k = WIDE_K };
    tg_error err = {0};
    tg_geno *geno = NULL;
    int8_t *g = malloc(n * m);
    double *z = malloc(sizeof(double) * n * m), *y = malloc(sizeof(double) * n * k),
           *ref = malloc(sizeof(double) * m * k), *dref = malloc(sizeof(double) * m * k),
           *d = malloc(sizeof(double) * m * k), *beta = malloc(sizeof(double) * m * k);
    tg_cg_pheno *pr = malloc(sizeof *pr * k);
    make_test_geno(r, n, m, g);
    dense_z(g, n, m, 1, z);
    make_pheno(r, z, n, m, k, y);
    for (int64_t i = 0; i < n; i++) y[i + 5 * n] = 3.5; /* constant: β = 0 */
    int info = 0;
    for (int c = 0; c < k; c++) info |= ref_solve(z, n, m, y + c * n, 5, ref + c * m, dref + c * m);
    tg_status st = tg_geno_from_int8(g, n, m, n, 1, &geno, &err);
    if (!st) st = tg_ridge_jacobi_int8(g, n, geno, 1, k, y, n, d, m, &err);
    tg_cg_report rep = {.pheno = pr};
    tg_cg_opts o = tg_cg_defaults();
    o.lambda = 5;
    o.tol = 1e-11;
    o.jacobi = d;
    o.ldj = m;
    if (!st) st = tg_ridge_cg(geno, k, y, n, &o, beta, m, &rep, &err);
    double e = rel_err(beta, m, ref, m, m, k);
    int zero = 1;
    for (int64_t j = 0; j < m; j++) zero &= beta[j + 5 * m] == 0;
    ok(!st && !info && e <= 1e-8, "%s: %d phenotypes in one block (products split by 64) match "
       "LAPACK (rel %.2g) %s", where, k, e, err.msg);
    ok(!st && zero && pr[5].converged && pr[5].iterations == 0,
       "%s: a constant phenotype gives β = 0 without iterating", where);
    /* a λ per column (tg_cg_opts.lambdas), 0.5 to 50, in the same block */
    double lam[k];
    info = 0;
    for (int c = 0; c < k; c++) {
        lam[c] = 0.5 * pow(10, c % 5 / 2.0);
        info |= ref_solve(z, n, m, y + c * n, lam[c], ref + c * m, dref + c * m);
    }
    o.lambdas = lam;
    if (!st) st = tg_ridge_cg(geno, k, y, n, &o, beta, m, &rep, &err);
    e = rel_err(beta, m, ref, m, m, k);
    ok(!st && !info && e <= 1e-8, "%s: %d phenotypes each with its own λ (0.5 to 50) match "
       "LAPACK (rel %.2g) %s", where, k, e, err.msg);
    lam[3] = -1;
    st = tg_ridge_cg(geno, k, y, n, &o, beta, m, &rep, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "lambda -1"), "%s: a column's λ −1 refused: %s",
       where, err.msg);
    tg_geno_free(geno);
    free(g);
    free(z);
    free(y);
    free(ref);
    free(dref);
    free(d);
    free(beta);
    free(pr);
}

/* Not converging within max_iter, and bad arguments. */
static void check_errors(tg_rng *r, const int8_t *g, const char *where) {
    tg_error err = {0};
    tg_geno *geno = NULL;
    double *zs = malloc(sizeof(double) * N * M), *y = malloc(sizeof(double) * N * NPHEN),
           *beta = malloc(sizeof(double) * M * NPHEN);
    tg_cg_pheno pr[NPHEN];
    tg_cg_report rep = {.pheno = pr};
    dense_z(g, N, M, 1, zs);
    make_pheno(r, zs, N, M, NPHEN, y);
    if (tg_geno_from_int8(g, N, M, N, 1, &geno, &err)) {
        ok(0, "%s: genotypes prepared: %s", where, err.msg);
        goto cleanup;
    }
    tg_cg_opts o = tg_cg_defaults();
    o.lambda = 1;
    o.tol = 1e-14;
    o.max_iter = 2;
    tg_status st = tg_ridge_cg(geno, NPHEN, y, N, &o, beta, M, &rep, &err);
    double bn = 0;
    for (int64_t j = 0; j < M * NPHEN; j++) bn += fabs(beta[j]);
    ok(st == TG_ERR_NUMERIC && strstr(err.msg, "did not reach") && !pr[0].converged &&
           pr[0].iterations == 2 && pr[0].relres > 1e-14 && bn > 0 && isfinite(pr[0].true_relres),
       "%s: max_iter 2 at tol 1e-14: TG_ERR_NUMERIC, last iterate and residuals kept: %s", where,
       err.msg);
    o = tg_cg_defaults();
    o.lambda = 0;
    st = tg_ridge_cg(geno, NPHEN, y, N, &o, beta, M, &rep, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "lambda"), "%s: λ = 0 refused: %s", where, err.msg);
    o.lambda = 1;
    o.tol = 0;
    st = tg_ridge_cg(geno, NPHEN, y, N, &o, beta, M, &rep, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "tol"), "%s: tol = 0 refused: %s", where, err.msg);
    o.tol = 1e-8;
    for (int64_t i = 1; i < N; i++) y[i + 2 * N] = NAN;
    st = tg_ridge_cg(geno, NPHEN, y, N, &o, beta, M, &rep, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "phenotype 3"),
       "%s: a phenotype with one observed value refused: %s", where, err.msg);
    y[2 * N] = INFINITY;
    y[2 * N + 1] = 1;
    st = tg_ridge_cg(geno, NPHEN, y, N, &o, beta, M, &rep, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "not finite"), "%s: an infinite value refused: %s",
       where, err.msg);
cleanup:
    tg_geno_free(geno);
    free(zs);
    free(y);
    free(beta);
}

/* The GRM against Z·Zᵀ/m (m counting the zero columns). */
static void check_grm(const int8_t *g, int scale, const char *where) {
    tg_error err = {0};
    tg_geno *geno = NULL;
    double *z = malloc(sizeof(double) * N * M), *k = malloc(sizeof(double) * N * N);
    dense_z(g, N, M, scale, z);
    tg_status st = tg_geno_from_int8(g, N, M, N, scale, &geno, &err);
    if (!st) st = tg_grm(geno, k, N, &err);
    double dmax = 0, kmax = 0;
    int sym = 1;
    for (int64_t j = 0; j < N; j++)
        for (int64_t i = 0; i < N; i++) {
            double want = 0;
            for (int64_t s = 0; s < M; s++) want += z[i + s * N] * z[j + s * N];
            want /= M;
            dmax = fmax(dmax, fabs(k[i + j * N] - want));
            kmax = fmax(kmax, fabs(want));
            sym &= k[i + j * N] == k[j + i * N];
        }
    ok(!st && dmax <= 1e-13 * kmax && sym,
       "%s scale %d: GRM = ZZᵀ/m, exactly symmetric (max error %.2g of %.3g) %s", where, scale,
       dmax, kmax, err.msg);
    tg_geno_free(geno);
    free(z);
    free(k);
}

/* The .bed route of the Jacobi diagonal equals the int8 route. */
static void check_jacobi_bed(tg_rng *r, const int8_t *g) {
    tg_error err = {0};
    tg_geno *geno = NULL;
    tg_bed bed = {0};
    char prefix[] = "/tmp/tg-test-cg-XXXXXX";
    double *zs = malloc(sizeof(double) * N * M), *y = malloc(sizeof(double) * N * NPHEN),
           *d1 = malloc(sizeof(double) * M * NPHEN), *d2 = malloc(sizeof(double) * M * NPHEN);
    dense_z(g, N, M, 1, zs);
    make_pheno(r, zs, N, M, NPHEN, y);
    tg_status st = write_bed_tmp(prefix, g, N, M, &err);
    if (!st) st = tg_bed_open(prefix, &bed, &err);
    if (!st) st = tg_geno_from_bed(&bed, 1, &geno, &err);
    if (!st) st = tg_ridge_jacobi_bed(&bed, geno, 1, NPHEN, y, N, d1, M, &err);
    if (!st) st = tg_ridge_jacobi_int8(g, N, geno, 1, NPHEN, y, N, d2, M, &err);
    ok(!st && !memcmp(d1, d2, sizeof(double) * M * NPHEN),
       "Jacobi diagonal from a .bed equals the one from int8 genotypes %s", err.msg);
    tg_geno_free(geno);
    tg_bed_close(&bed);
    remove_bed(prefix);
    free(zs);
    free(y);
    free(d1);
    free(d2);
}

/* Predictions for another cohort: its genotypes centered (and scaled) with the training
 * frequencies, missing calls at the training mean; SNP 3 all missing and SNP 4 monomorphic in
 * the cohort, so its own frequencies differ from the training ones everywhere. Any β and μ. */
static void check_test_cohort(tg_rng *r, const int8_t *g, int scale, const char *where) {
    enum { NT = 61, K = 2 };
    tg_error err = {0};
    tg_geno *geno = NULL;
    tg_bed bed = {0}, small = {0};
    char prefix[] = "/tmp/tg-test-cg-XXXXXX", prefix2[] = "/tmp/tg-test-cg-XXXXXX";
    int8_t *gt = malloc(NT * M);
    double *beta = malloc(sizeof(double) * M * K), *pred = malloc(sizeof(double) * NT * K),
           mu[K] = {0.3, -1.2};
    make_test_geno(r, NT, M, gt);
    for (int64_t i = 0; i < NT; i++) gt[i + 3 * NT] = TG_GENO_MISSING, gt[i + 4 * NT] = 1;
    for (int64_t j = 0; j < M * K; j++) beta[j] = tg_rng_normal(r);
    tg_status st = tg_geno_from_int8(g, N, M, N, scale, &geno, &err);
    if (!st) st = write_bed_tmp(prefix, gt, NT, M, &err);
    if (!st) st = tg_bed_open(prefix, &bed, &err);
    if (!st)
        st = tg_ridge_predict_bed(geno, scale, &bed, K, beta, M, mu, pred, NT, &err);
    double dd = 0, ss = 0;
    for (int64_t c = 0; c < K; c++)
        for (int64_t i = 0; i < NT; i++) {
            double want = mu[c];
            for (int64_t j = 0; j < M; j++) {
                double w, p = snp_freq(g, N, j, scale, &w); /* the training SNP */
                if (gt[i + j * NT] != TG_GENO_MISSING)
                    want += (gt[i + j * NT] - 2 * p) * w * beta[j + c * M];
            }
            dd += (pred[i + c * NT] - want) * (pred[i + c * NT] - want);
            ss += want * want;
        }
    ok(!st && sqrt(dd / ss) <= 1e-12,
       "%s scale %d: test cohort predicted with the training centering (rel %.2g) %s", where,
       scale, sqrt(dd / ss), err.msg);
    /* a cohort with other SNPs is refused */
    if (!st) st = write_bed_tmp(prefix2, gt, NT, M - 1, &err);
    if (!st) st = tg_bed_open(prefix2, &small, &err);
    tg_status st2 = st ? st : tg_ridge_predict_bed(geno, scale, &small, K, beta, M, mu, pred, NT,
                                                   &err);
    ok(!st && st2 == TG_ERR_ARG && strstr(err.msg, "SNPs"),
       "%s scale %d: a cohort with another SNP count refused: %s", where, scale, err.msg);
    tg_geno_free(geno);
    tg_bed_close(&bed);
    tg_bed_close(&small);
    remove_bed(prefix);
    remove_bed(prefix2);
    free(gt);
    free(beta);
    free(pred);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    int8_t *g = malloc(N * M);
    make_test_geno(&r, N, M, g);
    const char *req = getenv("TG_REQUIRE_GPU");
    int require_gpu = req && !strcmp(req, "1");
    /* per pass: 10 + 9 solve, 4 wide, 5 errors, 2 GRM, 4 cohort; once: .bed */
    tap_plan(2 * 34 + 1);
    for (int pass = 0; pass < 2; pass++) {
        tg_error err = {0};
        tg_runtime_opts o = tg_runtime_defaults();
        const char *where = pass ? "all workers" : "CPU workers";
        if (!pass) o.ngpu = 0;
        if (tg_runtime_start(&o, &err)) {
            ok(0, "runtime start (%s): %s", where, err.msg);
            return tap_done();
        }
        if (pass && !tg_runtime_ngpu()) {
            if (require_gpu) ok(0, "TG_REQUIRE_GPU=1 but no CUDA worker");
            diag("no CUDA worker: the second pass runs on CPU workers again");
        }
        for (int scale = 0; scale <= 1; scale++) check_solve(&r, g, scale, where);
        check_wide(&r, where);
        check_errors(&r, g, where);
        for (int scale = 0; scale <= 1; scale++) check_grm(g, scale, where);
        for (int scale = 0; scale <= 1; scale++) check_test_cohort(&r, g, scale, where);
        if (!pass) check_jacobi_bed(&r, g);
        tg_runtime_stop();
    }
    free(g);
    return tap_done();
}
