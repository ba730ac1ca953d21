/* Ridge regression by the tile Cholesky (tg_ridge_chol) against a dense double reference written
 * here from the model's definition: Z built naively from the int8 genotypes (mean imputation,
 * centering, optional scaling), A = ZᵀZ + λI, b = Zᵀ(y − ȳ), β by LAPACK's dposv. Genotypes
 * n = 97 × m = 141 in SNP tiles of 32 (neither a multiple of the tile), with 5% missing calls
 * (panels [X0 | M]) and complete (panels X0 alone), each with a monomorphic and an all-missing
 * (or second monomorphic) SNP, 3 phenotypes:
 *  - all-FP64 map, centered and scaled: β within 1e-10 relative, β = 0 on the excluded SNPs,
 *    μ = ȳ;
 *  - FP32 diagonal + FP16 allowed at ε = 1e-4 and 1e-3 (the latter lowers tiles): within the
 *    bound derived at mixed_bound();
 *  - equal to tg_ridge_cg (tol 1e-12) within 1e-8;
 *  - bad input (a NAN phenotype, λ ≤ 0, an int8 diagonal) refused.
 * Everything runs on whatever workers the runtime starts (CUDA ones included when present). */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "common.h"
#include "tap.h"
#include "tilegwas.h"

enum { N = 97, M = 141, NB = 32, NPHEN = 3 };
static const double LAMBDA = 50;

/* Genotypes n × m, Hardy-Weinberg draws with p ~ U[0.05, 0.5], a fraction @p miss missing;
 * SNP 5 monomorphic (0), SNP 40 all missing (all 2 when miss is 0). */
static void make_test_geno(tg_rng *r, double miss, int8_t *g) {
    make_geno(r, N, M, 0.05, 0.5, miss, g);
    for (int i = 0; i < N; i++) {
        if (g[i + 5 * N] != TG_GENO_MISSING) g[i + 5 * N] = 0;
        g[i + 40 * N] = miss > 0 ? TG_GENO_MISSING : 2;
    }
}

/* The reference system: A (m × m) and b (m × nphen) from Z_ij = M_ij·(x_ij − μ_j)·s_j. */
static void reference_system(const int8_t *g, int scale, const double *y, double *a, double *b) {
    double *z = calloc((size_t)N * M, sizeof *z), ym[NPHEN] = {0};
    for (int j = 0; j < M; j++) {
        double s = 0, c = 0;
        for (int i = 0; i < N; i++)
            if (g[i + j * N] != TG_GENO_MISSING) s += g[i + j * N], c++;
        double mu = c > 0 ? s / c : 0, p = mu / 2;
        double w = !(p > 0 && p < 1) ? 0 : scale ? 1 / sqrt(2 * p * (1 - p)) : 1;
        for (int i = 0; i < N; i++)
            z[i + j * N] = g[i + j * N] != TG_GENO_MISSING ? (g[i + j * N] - mu) * w : 0;
    }
    for (int c = 0; c < NPHEN; c++) {
        for (int i = 0; i < N; i++) ym[c] += y[i + c * N] / N;
        for (int j = 0; j < M; j++) {
            double s = 0;
            for (int i = 0; i < N; i++) s += z[i + j * N] * (y[i + c * N] - ym[c]);
            b[j + c * M] = s;
        }
    }
    for (int k = 0; k < M; k++)
        for (int j = 0; j < M; j++) {
            double s = 0;
            for (int i = 0; i < N; i++) s += z[i + j * N] * z[i + k * N];
            a[j + k * M] = s + (j == k ? LAMBDA : 0);
        }
    free(z);
}

static double rel_diff(const double *x, const double *ref, size_t n) {
    double d = 0, s = 0;
    for (size_t k = 0; k < n; k++) d += (x[k] - ref[k]) * (x[k] - ref[k]), s += ref[k] * ref[k];
    return sqrt(d / s);
}

/* κ₂(A) and ‖A‖_F/‖A‖₂ of the SPD reference matrix (LAPACK eigenvalues). */
static void conditioning(const double *a, double *kappa, double *fro_ratio) {
    double *c = malloc(sizeof(double) * M * M), ev[M], f = 0;
    memcpy(c, a, sizeof(double) * M * M);
    for (int k = 0; k < M * M; k++) f += a[k] * a[k];
    LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', M, c, M, ev);
    *kappa = ev[M - 1] / ev[0];
    *fro_ratio = sqrt(f) / ev[M - 1];
    free(c);
}

/* Bound on β's relative error with an FP32 diagonal and the adaptive map at ε. The computed β
 * solves (A + ΔA)β̂ = b + Δb with
 *   ‖ΔA‖₂ ≤ (NT·ε + 8m·u₃₂)·‖A‖_F: the map rounds tiles with Σ‖ΔA_ij‖² ≤ ε²‖A‖²_F (each tile
 *     ≤ ε‖A‖_F/NT, NT² tiles), the updates made in a tile's precision add at most NT such
 *     roundings; the FP32 storage of A, the FP32 factorisation (Higham Thm 10.3) and the two
 *     FP32 triangular solves (Thm 8.5) add at most 8m·u₃₂‖A‖_F together;
 *   ‖Δb‖ ≤ u₃₂‖b‖ (b stored in FP32);
 * so (Higham Thm 7.2) ‖β̂ − β‖/‖β‖ ≤ 2κ₂(‖ΔA‖₂/‖A‖₂ + u₃₂) while κ₂‖ΔA‖₂/‖A‖₂ ≤ 1/2. */
static double mixed_bound(double eps, double kappa, double fro_ratio) {
    const int nt = (M + NB - 1) / NB;
    double da = (nt * eps + 8.0 * M * 0x1p-24) * fro_ratio;
    return kappa * da <= 0.5 ? 2 * kappa * (da + 0x1p-24) : INFINITY;
}

static int solve(const int8_t *g, int scale, const double *y, const tg_ridge_chol_opts *o,
                 double *beta, double *mu, tg_chol_report *rep) {
    tg_error err = {0};
    tg_status st = tg_ridge_chol(g, N, M, N, scale, NPHEN, y, N, o, beta, M, mu, rep, &err);
    if (st) diag("tg_ridge_chol: %s", err.msg);
    return st;
}

static void one_dataset(tg_rng *r, double miss) {
    int8_t *g = malloc((size_t)N * M);
    double *y = malloc(sizeof(double) * N * NPHEN), *a = malloc(sizeof(double) * M * M),
           *b = malloc(sizeof(double) * M * NPHEN), *beta = malloc(sizeof(double) * M * NPHEN),
           *bcg = malloc(sizeof(double) * M * NPHEN), mu[NPHEN];
    make_test_geno(r, miss, g);
    for (int k = 0; k < N * NPHEN; k++) y[k] = 3 + tg_rng_normal(r);
    const char *what = miss > 0 ? "5% missing" : "complete";
    for (int scale = 0; scale <= 1; scale++) {
        reference_system(g, scale, y, a, b);
        double kappa, fro_ratio;
        conditioning(a, &kappa, &fro_ratio);
        LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', M, NPHEN, a, M, b, M); /* b ← β_ref */
        diag("%s, %s: cond2 %.3g, |A|_F/|A|_2 %.3g", what, scale ? "scaled" : "centered", kappa,
             fro_ratio);

        /* all FP64 */
        tg_ridge_chol_opts o = tg_ridge_chol_defaults();
        o.lambda = LAMBDA;
        o.nb = NB;
        o.chol.allowed = 1u << TG_FP64;
        tg_chol_report rep;
        int st = solve(g, scale, y, &o, beta, mu, &rep);
        double e = st ? INFINITY : rel_diff(beta, b, (size_t)M * NPHEN), ymax = 0;
        int zero = 1;
        for (int c = 0; c < NPHEN; c++) {
            double s = 0;
            for (int i = 0; i < N; i++) s += y[i + c * N];
            ymax = fmax(ymax, fabs(mu[c] - s / N));
            zero &= beta[5 + c * M] == 0 && beta[40 + c * M] == 0;
        }
        ok(e <= 1e-10 && zero && ymax <= 1e-14 * 3 && rep.tiles[TG_FP64] == 15,
           "%s, %s, all fp64: beta vs dposv %.3g <= 1e-10; excluded SNPs beta 0 (%s); mu = "
           "mean(y) (%.2g)", what, scale ? "scaled" : "centered", e, zero ? "yes" : "no", ymax);

        /* FP32 diagonal, FP16 allowed: ε = 1e-4 (the issue's), ε = 1e-3 (lowers tiles) */
        if (scale) {
            const double eps[2] = {1e-4, 1e-3};
            for (int t = 0; t < 2; t++) {
                tg_ridge_chol_opts q = o;
                q.chol.diag = TG_FP32;
                q.chol.allowed = 1u << TG_FP32 | 1u << TG_FP16;
                q.chol.eps = eps[t];
                st = solve(g, scale, y, &q, beta, mu, &rep);
                double em = st ? INFINITY : rel_diff(beta, b, (size_t)M * NPHEN),
                       bound = mixed_bound(eps[t], kappa, fro_ratio);
                ok(em <= bound && (t == 0 || rep.tiles[TG_FP16] > 0),
                   "%s, scaled, fp32 diag + fp16 at eps %g (tiles fp32 %lld fp16 %lld): beta vs "
                   "dposv %.3g <= %.3g", what, eps[t], (long long)rep.tiles[TG_FP32],
                   (long long)rep.tiles[TG_FP16], em, bound);
            }
        }

        /* the same model by conjugate gradients */
        tg_error err = {0};
        tg_geno *gg = NULL;
        tg_cg_pheno pr[NPHEN];
        tg_cg_report crep = {.pheno = pr};
        tg_cg_opts co = tg_cg_defaults();
        co.lambda = LAMBDA;
        co.tol = 1e-12;
        st = tg_geno_from_int8(g, N, M, N, scale, &gg, &err) ||
             tg_ridge_cg(gg, NPHEN, y, N, &co, bcg, M, &crep, &err);
        if (st) diag("cg: %s", err.msg);
        tg_geno_free(gg);
        solve(g, scale, y, &o, beta, mu, &rep);
        double ec = st ? INFINITY : rel_diff(beta, bcg, (size_t)M * NPHEN);
        ok(ec <= 1e-8, "%s, %s: beta vs tg_ridge_cg (tol 1e-12) %.3g <= 1e-8", what,
           scale ? "scaled" : "centered", ec);
    }
    free(g);
    free(y);
    free(a);
    free(b);
    free(beta);
    free(bcg);
}

static void bad_input(tg_rng *r) {
    int8_t *g = malloc((size_t)N * M);
    double *y = malloc(sizeof(double) * N * NPHEN), *beta = malloc(sizeof(double) * M * NPHEN);
    make_test_geno(r, 0.05, g);
    for (int k = 0; k < N * NPHEN; k++) y[k] = tg_rng_normal(r);
    tg_ridge_chol_opts o = tg_ridge_chol_defaults();
    o.nb = NB;
    tg_error err = {0};
    y[7 + 2 * N] = NAN;
    tg_status st = tg_ridge_chol(g, N, M, N, 0, NPHEN, y, N, &o, beta, M, NULL, NULL, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "phenotype 3 of sample 8"), "a NAN phenotype: %s",
       err.msg);
    y[7 + 2 * N] = 0;
    o.lambda = 0;
    st = tg_ridge_chol(g, N, M, N, 0, NPHEN, y, N, &o, beta, M, NULL, NULL, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "lambda"), "lambda 0: %s", err.msg);
    o.lambda = 1;
    o.chol.diag = TG_FP16;
    st = tg_ridge_chol(g, N, M, N, 0, NPHEN, y, N, &o, beta, M, NULL, NULL, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "fp16"), "an fp16 diagonal: %s", err.msg);
    o.chol.diag = TG_FP64;
    g[3 + 9 * N] = 3;
    st = tg_ridge_chol(g, N, M, N, 0, NPHEN, y, N, &o, beta, M, NULL, NULL, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "SNP 9"), "a genotype 3: %s", err.msg);
    free(g);
    free(y);
    free(beta);
}

int main(void) {
    tg_error err = {0};
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    tg_runtime_opts o = tg_runtime_defaults();
    if (tg_runtime_start(&o, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    one_dataset(&r, 0.05);
    one_dataset(&r, 0);
    bad_input(&r);
    tg_runtime_stop();
    tap_plan(tap_n);
    return tap_done();
}
