/* The rr workflow (tg_rr, src/algo/rr_fit.c) on a fileset against a dense double reference
 * written here from the model's definition: over the samples observed for every phenotype,
 * Z = x − 2p (p over their non-missing calls, missing calls 0, optionally scaled by
 * 1/sqrt(2p(1−p))), β from (ZᵀZ + λI)β = Zᵀ(y − ȳ) by LAPACK's dposv, μ = ȳ, predictions
 * μ + Z_T β for a test cohort centred by the training frequencies. n = 61 training samples
 * (5% missing calls, 2 phenotypes, 7 samples missing the second) × m = 45 SNPs, tiles of 16:
 *  - cholesky (all FP64) drops the 7 samples and matches the reference, on the training cohort
 *    and on a test cohort;
 *  - cg on the complete phenotype matches it too (tol 1e-12);
 *  - a test cohort with other SNPs is refused naming --test-bfile. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

enum { N = 61, NT = 23, M = 45, K = 2, DROP = 7 };
static const double LAMBDA = 20;

/* Both cohorts draw SNP j from the same frequency, 5% of the calls missing. */
static void cohort_geno(tg_rng *r, int64_t n, int8_t *g) {
    for (int j = 0; j < M; j++) {
        double p = 0.05 + 0.45 * (double)((j * 7919) % 97) / 97; /* the same in both cohorts */
        for (int64_t i = 0; i < n; i++) {
            int8_t x = (int8_t)((tg_rng_uniform(r) < p) + (tg_rng_uniform(r) < p));
            g[i + j * n] = tg_rng_uniform(r) < 0.05 ? TG_GENO_MISSING : x;
        }
    }
}

/* Reference over the rows[0..nk) of g: β (m × k), μ (k), freq (m); y n × k. */
static int reference(const int8_t *g, const int64_t *rows, int64_t nk, const double *y, int k,
                     int scale, double *beta, double *mu, double *freq) {
    double *z = calloc((size_t)(nk * M), sizeof *z), *a = calloc(M * M, sizeof *a);
    for (int j = 0; j < M; j++) {
        double s = 0, c = 0;
        for (int64_t r = 0; r < nk; r++)
            if (g[rows[r] + j * N] >= 0) s += g[rows[r] + j * N], c++;
        double p = freq[j] = s / (2 * c), sd = scale ? sqrt(2 * p * (1 - p)) : 1;
        for (int64_t r = 0; r < nk; r++)
            z[r + j * nk] = g[rows[r] + j * N] >= 0 && sd > 0 ? (g[rows[r] + j * N] - 2 * p) / sd : 0;
    }
    for (int j = 0; j < M; j++)
        for (int l = 0; l < M; l++) {
            double s = j == l ? LAMBDA : 0;
            for (int64_t r = 0; r < nk; r++) s += z[r + j * nk] * z[r + l * nk];
            a[j + l * M] = s;
        }
    for (int c = 0; c < k; c++) {
        mu[c] = 0;
        for (int64_t r = 0; r < nk; r++) mu[c] += y[rows[r] + c * N] / (double)nk;
        for (int j = 0; j < M; j++) {
            double s = 0;
            for (int64_t r = 0; r < nk; r++) s += z[r + j * nk] * (y[rows[r] + c * N] - mu[c]);
            beta[j + c * M] = s;
        }
    }
    int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', M, k, a, M, beta, M);
    free(z);
    free(a);
    return info;
}

/* Largest |got − want| / max|want| over n × k. */
static double rel_err(const double *got, const double *want, int64_t n) {
    double d = 0, w = 0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(got[i] - want[i])), w = fmax(w, fabs(want[i]));
    return d / w;
}

/* μ + Z_T β for the test genotypes gt (NT × M), centred (and scaled) by the training freq. */
static void predict_ref(const int8_t *gt, const double *freq, int scale, const double *beta,
                        const double *mu, double *pred) {
    for (int c = 0; c < K; c++)
        for (int i = 0; i < NT; i++) {
            double s = mu[c];
            for (int j = 0; j < M; j++) {
                double p = freq[j], sd = scale ? sqrt(2 * p * (1 - p)) : 1;
                if (gt[i + j * NT] >= 0 && sd > 0) s += (gt[i + j * NT] - 2 * p) / sd * beta[j + c * M];
            }
            pred[i + c * NT] = s;
        }
}

int main(void) {
    tap_plan(7);
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    char dir[] = "/tmp/tg_rr_XXXXXX", train_p[64], test_p[64], other_p[64];
    static int8_t g[N * M], gt[NT * M], go[NT * (M - 1)];
    static double y[N * K], beta[M * K], mu[K], freq[M], pred[NT * K];
    int64_t rows[N], nk = 0;
    tg_error err = {0};
    if (!mkdtemp(dir)) return 1;
    cohort_geno(&r, N, g);
    cohort_geno(&r, NT, gt);
    memcpy(go, gt, sizeof go);
    for (int64_t i = 0; i < N; i++) {
        y[i] = tg_rng_normal(&r) + g[i + 3 * N] * (g[i + 3 * N] >= 0);
        y[i + N] = i % 9 == 4 && i / 9 < DROP ? NAN : tg_rng_normal(&r);
        if (!isnan(y[i + N])) rows[nk++] = i;
    }
    snprintf(train_p, sizeof train_p, "%s/train", dir);
    snprintf(test_p, sizeof test_p, "%s/test", dir);
    snprintf(other_p, sizeof other_p, "%s/other", dir);
    tg_bed bed, test, other;
    tg_runtime_opts ro = tg_runtime_defaults();
    ro.ncpu = 2;
    if (write_bed(train_p, g, N, M, &err) || write_bed(test_p, gt, NT, M, &err) ||
        write_bed(other_p, go, NT, M - 1, &err) || tg_bed_open(train_p, &bed, &err) ||
        tg_bed_open(test_p, &test, &err) || tg_bed_open(other_p, &other, &err) ||
        tg_runtime_start(&ro, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    tg_rr_opts o = tg_rr_defaults();
    o.solver = TG_RR_CHOLESKY, o.lambda = LAMBDA, o.scale = 1, o.chol.nb = 16;
    o.chol.chol.allowed = 1u << TG_FP64;
    tg_rr_result res;
    tg_status st = tg_rr(&bed, K, y, N, NULL, &o, &res, &err);
    int info = reference(g, rows, nk, y, K, 1, beta, mu, freq);
    ok(!st && !info && res.n_used == N - DROP && rel_err(res.beta, beta, M * K) < 1e-10 &&
           rel_err(res.mu, mu, K) < 1e-12,
       "cholesky: %lld of %d samples kept, beta within %.2g of the reference %s",
       (long long)res.n_used, N, st ? NAN : rel_err(res.beta, beta, M * K), err.msg);
    /* in-sample: the reference's prediction formula on the training genotypes, every sample */
    double in_ref[N * K];
    for (int c = 0; c < K; c++)
        for (int64_t i = 0; i < N; i++) {
            double s = mu[c];
            for (int j = 0; j < M; j++) {
                double p = freq[j], sd = sqrt(2 * p * (1 - p));
                if (g[i + j * N] >= 0 && sd > 0) s += (g[i + j * N] - 2 * p) / sd * beta[j + c * M];
            }
            in_ref[i + c * N] = s;
        }
    ok(!st && rel_err(res.pred, in_ref, N * K) < 1e-10,
       "cholesky: in-sample predictions of all %d samples within %.2g", N,
       st ? NAN : rel_err(res.pred, in_ref, N * K));
    tg_rr_result_free(&res);
    st = tg_rr(&bed, K, y, N, &test, &o, &res, &err);
    predict_ref(gt, freq, 1, beta, mu, pred);
    ok(!st && rel_err(res.pred, pred, NT * K) < 1e-10,
       "cholesky: the test cohort's %d predictions within %.2g (training frequencies) %s", NT,
       st ? NAN : rel_err(res.pred, pred, NT * K), err.msg);
    tg_rr_result_free(&res);

    /* cg on the complete phenotype 1 (every sample), unscaled */
    int64_t all[N];
    for (int64_t i = 0; i < N; i++) all[i] = i;
    double beta1[M * K] = {0}, mu1[K] = {0}, freq1[M];
    info = reference(g, all, N, y, 1, 0, beta1, mu1, freq1); /* no NAN: dposv refuses them */
    o = tg_rr_defaults();
    o.lambda = LAMBDA, o.cg.tol = 1e-12;
    st = tg_rr(&bed, 1, y, N, &test, &o, &res, &err);
    predict_ref(gt, freq1, 0, beta1, mu1, pred);
    double pred1 = rel_err(res.pred, pred, NT); /* column 0 only */
    ok(!st && !info && res.pheno[0].converged && rel_err(res.beta, beta1, M) < 1e-8,
       "cg: converged in %d iterations, beta within %.2g %s", res.pheno ? res.pheno[0].iterations : 0,
       st ? NAN : rel_err(res.beta, beta1, M), err.msg);
    ok(!st && pred1 < 1e-8 && fabs(res.mu[0] - mu1[0]) < 1e-10 * fabs(mu1[0]) + 1e-12,
       "cg: test predictions within %.2g, intercept = mean of y", pred1);
    tg_rr_result_free(&res);

    st = tg_rr(&bed, K, y, N, &other, &o, &res, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "--test-bfile") && strstr(err.msg, other_p),
       "a test cohort with another SNP count: %s", err.msg);
    tg_rr_result_free(&res);
    st = tg_rr_check_test(&bed, &test, &err);
    ok(!st, "tg_rr_check_test accepts the same SNPs");
    tg_runtime_stop();
    tg_bed_close(&bed);
    tg_bed_close(&test);
    tg_bed_close(&other);
    remove_bed(train_p);
    remove_bed(test_p);
    remove_bed(other_p);
    rmdir(dir);
    return tap_done();
}
