/* KRR Predict and the whole KRR pipeline.
 * tg_pred_metrics: a hand case, degenerate cases and random data against closed forms.
 * tg_krr_predict_tiles: against a naive double product of the stored values, with W in FP64 and
 * with W in FP32 and the kernel tiles in every floating precision (scaled FP8 included).
 * Whole KRR through the library's workflow (tg_krr_fit: Build, Cholesky, solve; tg_krr_predict)
 * on a written .bed with missing calls, Gaussian kernel with confounders, N not a multiple of
 * the tile: all FP64 against a dense LAPACK solve (dposv) of (K + αI)W = Y − Ȳ (training
 * means) with K built naively here from the decoded, imputed genotypes, predictions K_t·W + Ȳ; FP32
 * diagonal + FP16 adaptive map at ε = 1e-4 against the FP64 predictions; the map from a
 * tolerance τ on the predictions (tg_chol_opts.tol, α the shift): its eps, its bound ≤ τ, and
 * the weights and predictions against FP64's within the bound and τ. Covariates as fixed effects
 * (tg_krr_opts.fixed): α = (CᵀC)⁻¹Cᵀy over the training samples (C = [1, covariates]) by
 * dposv of the normal equations, W from (K + αI)W = Y − Cα with K of the genotypes alone,
 * predictions K_t·W + C_t·α, all FP64. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "runtime/runtime.h"
#include "common.h"
#include "tap.h"

/* ------------------------------------------------------------------ metrics */

static void metrics_tests(tg_rng *r) {
    double mspe, rho;
    int64_t nobs;
    /* y (1, 2, 3, NA, 5), pred (2, 2, 4, 100, 3): squared errors 1 0 1 4 → 6/4; centered
     * (−1.75, −.75, .25, 2.25)·(−.75, −.75, 1.25, .25) = 2.75, |y−ȳ|² 8.75, |p−p̄|² 2.75 */
    const double y[] = {1, 2, 3, NAN, 5}, p[] = {2, 2, 4, 100, 3};
    tg_pred_metrics(y, p, 5, &mspe, &rho, &nobs);
    ok(nobs == 4 && fabs(mspe - 1.5) <= 1e-15 && fabs(rho - sqrt(2.75 / 8.75)) <= 1e-15,
       "hand case: nobs %lld, MSPE %.17g (1.5), r %.17g (sqrt(2.75/8.75))", (long long)nobs, mspe,
       rho);
    const double c[] = {4, 4, 4, 4, 4};
    tg_pred_metrics(y, c, 5, &mspe, &rho, &nobs);
    ok(isnan(rho) && fabs(mspe - 3.75) <= 1e-15, "constant predictions: r NAN, MSPE %g (15/4)", mspe);
    const double one[] = {NAN, NAN, 3, NAN, NAN}, none[] = {NAN, NAN, NAN, NAN, NAN};
    tg_pred_metrics(one, p, 5, &mspe, &rho, &nobs);
    int a = nobs == 1 && mspe == 1 && isnan(rho);
    tg_pred_metrics(none, p, 5, &mspe, &rho, &nobs);
    ok(a && nobs == 0 && isnan(mspe) && isnan(rho),
       "one observed value: r NAN; none: MSPE and r NAN");

    /* random: pred = a·y + b + noise; against the textbook formulas evaluated here, and with no
     * noise r = ±1 exactly (to rounding) and MSPE = mean(((1−a)y − b)²) */
    const int64_t n = 1001;
    double *yr = rand_mat(n, 1, 100, 101, r), *pr = malloc((size_t)n * sizeof *pr);
    for (int64_t i = 0; i < n; i += 7) yr[i] = NAN;
    for (int sign = -1; sign <= 1; sign += 2) {
        double slope = sign * (0.5 + tg_rng_uniform(r)), b = tg_rng_normal(r), want = 0;
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++) {
            pr[i] = slope * yr[i] + b;
            if (!isnan(yr[i])) {
                want += pow((1 - slope) * yr[i] - b, 2);
                m++;
            }
        }
        tg_pred_metrics(yr, pr, n, &mspe, &rho, &nobs);
        ok(nobs == m && fabs(rho - sign) <= 1e-12 && fabs(mspe - want / m) <= 1e-12 * want / m,
           "random exact line, slope %.3f: r %.17g, MSPE %.6g vs %.6g", slope, rho, mspe, want / m);
    }
    double sy = 0, sp = 0, syy = 0, spp = 0, syp = 0, se = 0;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        pr[i] = 0.3 * yr[i] + tg_rng_normal(r) * 0.2;
        if (isnan(yr[i])) continue;
        double dy = yr[i] - 100.5, dp = pr[i] - 30.15; /* shifted sums: no cancellation */
        sy += dy, sp += dp, syy += dy * dy, spp += dp * dp, syp += dy * dp, m++;
        se += (yr[i] - pr[i]) * (yr[i] - pr[i]);
    }
    double want = (m * syp - sy * sp) / sqrt((m * syy - sy * sy) * (m * spp - sp * sp));
    tg_pred_metrics(yr, pr, n, &mspe, &rho, &nobs);
    ok(fabs(rho - want) <= 1e-12 && fabs(mspe - se / m) <= 1e-12 * se / m,
       "random noisy line: r %.15g vs %.15g, MSPE %.6g vs %.6g", rho, want, mspe, se / m);
    free(yr);
    free(pr);
}

/* ------------------------------------------------------------------ tg_krr_predict_tiles */

/* P = Kt·W with Kt nt × n in tiles nb (converted to @p map: tile t gets map[t % 4] with the
 * FP8 tiles scaled by 8), W n × k in tiles nb × 2 of precision @p wp. Reference: the double
 * product of the stored values; bound 2(n + 2)·u_w·‖|Kt||W|‖_F (products and sums in W's
 * precision, one rounding of each Kt entry to it). */
static void predict_test(tg_rng *r, int64_t nt_, int64_t n, int64_t k, int nb, tg_prec wp,
                         const tg_prec map4[4]) {
    double *kt = rand_mat(nt_, n, -1, 1, r), *w = rand_mat(n, k, -1, 1, r);
    tg_matrix *Kt = tiled(kt, nt_, n, nb, nb, TG_GENERAL, TG_FP64),
              *W = tiled(w, n, k, nb, 2, TG_GENERAL, wp);
    int mt, ntt;
    tg_matrix_size(Kt, NULL, NULL, &mt, &ntt);
    tg_prec *map = malloc((size_t)mt * ntt * sizeof *map);
    double *scale = malloc((size_t)mt * ntt * sizeof *scale);
    for (int t = 0; t < mt * ntt; t++) {
        map[t] = map4[t % 4];
        scale[t] = map[t] == TG_FP8_E4M3 ? 8 : 1;
    }
    tg_error err = {0};
    tg_status st = tg_matrix_convert(Kt, map, scale, &err);
    tg_runtime_wait_all();
    /* the values actually stored, as the reference's inputs */
    tg_matrix_to_dense(Kt, kt, nt_, &err);
    tg_matrix_to_dense(W, w, n, &err);
    double *p = calloc((size_t)(nt_ + 3) * k, sizeof *p), *ref = calloc((size_t)(nt_ * k), sizeof *ref),
           *mag = calloc((size_t)(nt_ * k), sizeof *mag), *got = malloc((size_t)(nt_ * k) * sizeof *got);
    if (!st) st = tg_krr_predict_tiles(Kt, W, p, nt_ + 3, &err);
    for (int64_t c = 0; c < k; c++)
        for (int64_t i = 0; i < nt_; i++) {
            for (int64_t q = 0; q < n; q++) {
                ref[i + c * nt_] += kt[i + q * nt_] * w[q + c * n];
                mag[i + c * nt_] += fabs(kt[i + q * nt_] * w[q + c * n]);
            }
            got[i + c * nt_] = p[i + c * (nt_ + 3)];
        }
    double e = fro_diff(got, ref, (size_t)(nt_ * k)),
           bound = 2.0 * (n + 2) * tg_prec_unit_roundoff(wp) * fro(mag, (size_t)(nt_ * k));
    ok(st == TG_OK && e <= bound, "predict %lldx%lld · %lldx%lld, tiles %d, W %s, Kt tiles %s/%s/%s/%s: "
       "error %.3g <= %.3g %s", (long long)nt_, (long long)n, (long long)n, (long long)k, nb,
       tg_prec_name(wp), tg_prec_name(map4[0]), tg_prec_name(map4[1]), tg_prec_name(map4[2]),
       tg_prec_name(map4[3]), e, bound, st ? err.msg : "");
    tg_matrix_destroy(Kt);
    tg_matrix_destroy(W);
    free(kt), free(w), free(map), free(scale), free(p), free(ref), free(mag), free(got);
}

static void predict_errors(void) {
    tg_matrix *Kt = NULL, *W = NULL;
    tg_error err = {0};
    double p[64];
    tg_matrix_create(&Kt, 5, 20, 8, 8, TG_GENERAL, TG_FP64, 0, 0, &err);
    tg_matrix_create(&W, 20, 2, 10, 2, TG_GENERAL, TG_FP64, 0, 0, &err);
    tg_status st = tg_krr_predict_tiles(Kt, W, p, 5, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "tiles of"), "W tiled unlike Kt's columns: %s", err.msg);
    tg_matrix_destroy(W);
    tg_matrix_create(&W, 20, 2, 8, 2, TG_GENERAL, TG_FP16, 0, 0, &err);
    st = tg_krr_predict_tiles(Kt, W, p, 5, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "fp16"), "W in fp16 refused: %s", err.msg);
    tg_matrix_destroy(W);
    tg_matrix_destroy(Kt);
}

/* ------------------------------------------------------------------ whole KRR */

enum { NS = 93, NTR = 70, NSNP = 150, NCOV = 2, NPH = 3, NB = 16 };

struct cohort {
    char prefix[64];
    tg_bed bed;
    int64_t train[NTR], test[NS - NTR];
    double *g;         /* NS × NSNP: A1 counts, missing imputed as the rule says */
    double *covar;     /* NS × NCOV confounders */
    double *zcov;      /* standardised over the training samples, as the fit does */
    double *y;         /* NTR × NPH */
};

/* Random genotypes with 3% missing calls written as a .bed; a random train/test split. Each SNP
 * gets an odd number of training calls, so that the training mean 2p is never a half-integer
 * and "nearest integer" imputation has no tie to break. */
static int make_cohort(struct cohort *c, tg_rng *r) {
    static int8_t g8[NS * NSNP];
    static tg_sample s[NS];
    static tg_snp v[NSNP];
    static char ids[NS][16], snp_ids[NSNP][16], zero[] = "0", a1[] = "A", a2[] = "C";
    int64_t perm[NS];
    for (int i = 0; i < NS; i++) perm[i] = i;
    for (int i = NS - 1; i > 0; i--) {
        int j = (int)tg_rng_below(r, (uint64_t)i + 1);
        int64_t t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    memcpy(c->train, perm, sizeof c->train);
    memcpy(c->test, perm + NTR, sizeof c->test);
    for (int j = 0; j < NSNP; j++) {
        double f = 0.05 + 0.9 * tg_rng_uniform(r);
        int obs = 0;
        for (int i = 0; i < NS; i++) {
            int8_t x = (int8_t)((tg_rng_uniform(r) < f) + (tg_rng_uniform(r) < f));
            g8[i + j * NS] = tg_rng_uniform(r) < 0.03 ? TG_GENO_MISSING : x;
        }
        for (int i = 0; i < NTR; i++) obs += g8[c->train[i] + j * NS] != TG_GENO_MISSING;
        if (obs % 2 == 0) { /* toggle the first training sample's call */
            int8_t *x = &g8[c->train[0] + j * NS];
            *x = *x == TG_GENO_MISSING ? 1 : TG_GENO_MISSING;
        }
        snprintf(snp_ids[j], sizeof snp_ids[j], "snp%d", j);
        v[j] = (tg_snp){zero, snp_ids[j], 0, j + 1, a1, a2};
    }
    for (int i = 0; i < NS; i++) {
        snprintf(ids[i], sizeof ids[i], "S%d", i);
        s[i] = (tg_sample){ids[i], ids[i], zero, zero, 0, NAN};
    }
    snprintf(c->prefix, sizeof c->prefix, "/tmp/tg-krr-XXXXXX");
    int fd = mkstemp(c->prefix);
    tg_error err = {0};
    if (fd < 0 || close(fd) || tg_bed_write(c->prefix, s, NS, v, NSNP, g8, NS, &err) ||
        tg_bed_open(c->prefix, &c->bed, &err)) {
        diag("writing the cohort: %s", err.msg);
        return 0;
    }
    /* the imputed genotypes: nearest integer to 2p over the training calls */
    c->g = malloc((size_t)NS * NSNP * sizeof *c->g);
    for (int j = 0; j < NSNP; j++) {
        double sum = 0;
        int obs = 0;
        for (int i = 0; i < NTR; i++) {
            int8_t x = g8[c->train[i] + j * NS];
            if (x != TG_GENO_MISSING) sum += x, obs++;
        }
        double imp = obs ? round(sum / obs) : 0;
        for (int i = 0; i < NS; i++)
            c->g[i + j * NS] = g8[i + j * NS] == TG_GENO_MISSING ? imp : g8[i + j * NS];
    }
    c->covar = rand_mat(NS, NCOV, -2, 2, r);
    c->zcov = malloc((size_t)NS * NCOV * sizeof *c->zcov);
    for (int j = 0; j < NCOV; j++) {
        double s = 0, ss = 0;
        for (int i = 0; i < NTR; i++) s += c->covar[c->train[i] + j * NS] / NTR;
        for (int i = 0; i < NTR; i++) ss += pow(c->covar[c->train[i] + j * NS] - s, 2);
        for (int i = 0; i < NS; i++)
            c->zcov[i + j * NS] = (c->covar[i + j * NS] - s) / sqrt(ss / (NTR - 1));
    }
    c->y = malloc((size_t)NTR * NPH * sizeof *c->y);
    for (int k = 0; k < NTR * NPH; k++) c->y[k] = tg_rng_normal(r);
    return 1;
}

/* Squared distance of samples a, b (bed rows): genotypes and confounders. */
static double dist2(const struct cohort *c, int64_t a, int64_t b) {
    double d = 0;
    for (int j = 0; j < NSNP; j++) d += pow(c->g[a + j * NS] - c->g[b + j * NS], 2);
    for (int j = 0; j < NCOV; j++) d += pow(c->zcov[a + j * NS] - c->zcov[b + j * NS], 2);
    return d;
}

/* One run of the library's workflow (tg_krr_fit, tg_krr_predict; α is the map's shift) with
 * the map of @p co: predictions (NS−NTR) × NPH into @p pred, the weights NTR × NPH into @p w. */
static tg_status pipeline(const struct cohort *c, double gamma, double alpha,
                          const tg_chol_opts *co, tg_chol_report *rep, double *pred, double *w,
                          tg_error *err) {
    static const char *const names[NPH] = {"y0", "y1", "y2"};
    double *y = malloc((size_t)NS * NPH * sizeof *y); /* by .fam row, as the fit reads it */
    for (int k = 0; k < NPH; k++)
        for (int i = 0; i < NTR; i++) y[c->train[i] + k * NS] = c->y[i + k * NTR];
    tg_krr_opts o = tg_krr_defaults();
    o.gamma = &gamma, o.ngamma = 1, o.alpha = &alpha, o.nalpha = 1;
    o.covar = c->covar, o.ncov = NCOV, o.ldc = NS;
    o.nb = NB;
    o.accuracy = co->tol > 0 ? 0 : co->eps;
    o.pred_tol = co->tol;
    o.allowed = co->allowed;
    o.diag = co->diag;
    o.diag_fixed = !co->lower_diag;
    o.band = co->band;
    tg_krr_model *m = NULL;
    tg_krr_fit_report fr = {0};
    tg_status st = tg_krr_fit(&c->bed, c->train, NTR, NPH, y, NS, names, &o, &m, &fr, err);
    if (fr.npairs) *rep = fr.pair[0].chol;
    if (!st) st = tg_krr_predict(m, &c->bed, c->test, NS - NTR, c->covar, NS, pred, NS - NTR,
                                 NULL, err);
    if (!st) st = tg_krr_model_weights(m, 0, 0, w, NTR, err);
    if (st) diag("pipeline: %s", err->msg);
    tg_krr_model_free(m);
    tg_krr_fit_report_free(&fr);
    free(y);
    return st;
}

/* Covariates as fixed effects, all FP64, against the naive reference of the header. */
static void fixed_test(const struct cohort *c, double gamma, double alpha) {
    enum { P = NCOV + 1, NTE = NS - NTR };
    double *k = malloc(sizeof *k * NTR * NTR), *kt = malloc(sizeof *kt * NTE * NTR),
           *w = malloc(sizeof *w * NTR * NPH), ref[NTE * NPH], pred[NTE * NPH], a[P * P],
           fa[P * NPH] = {0}, wdum[NTR * NPH];
    for (int j = 0; j < NTR; j++) /* the genotypes' kernel: no confounder */
        for (int i = 0; i < NS; i++) {
            double d = 0;
            for (int l = 0; l < NSNP; l++) d += pow(c->g[i + l * NS] - c->g[c->train[j] + l * NS], 2);
            for (int t = 0; t < NTE; t++)
                if (c->test[t] == i) kt[t + j * NTE] = exp(-gamma * d);
            for (int t = 0; t < NTR; t++)
                if (c->train[t] == i) k[t + j * NTR] = exp(-gamma * d) + (t == j ? alpha : 0);
        }
#define CV(i, l) ((l) ? c->covar[(i) + ((l) - 1) * NS] : 1.0) /* design column l of sample i */
    for (int u = 0; u < P; u++) {
        for (int v = 0; v < P; v++) {
            a[u + v * P] = 0;
            for (int i = 0; i < NTR; i++) a[u + v * P] += CV(c->train[i], u) * CV(c->train[i], v);
        }
        for (int q = 0; q < NPH; q++)
            for (int i = 0; i < NTR; i++) fa[u + q * P] += CV(c->train[i], u) * c->y[i + q * NTR];
    }
    int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', P, NPH, a, P, fa, P);
    for (int q = 0; q < NPH; q++) {
        for (int i = 0; i < NTR; i++) {
            w[i + q * NTR] = c->y[i + q * NTR];
            for (int l = 0; l < P; l++) w[i + q * NTR] -= CV(c->train[i], l) * fa[l + q * P];
        }
        for (int t = 0; t < NTE; t++) {
            ref[t + q * NTE] = 0;
            for (int l = 0; l < P; l++) ref[t + q * NTE] += CV(c->test[t], l) * fa[l + q * P];
        }
    }
#undef CV
    info |= LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', NTR, NPH, k, NTR, w, NTR);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, NTE, NPH, NTR, 1, kt, NTE, w, NTR, 1,
                ref, NTE);
    static const char *const names[NPH] = {"y0", "y1", "y2"};
    double *y = malloc((size_t)NS * NPH * sizeof *y);
    for (int q = 0; q < NPH; q++)
        for (int i = 0; i < NTR; i++) y[c->train[i] + q * NS] = c->y[i + q * NTR];
    tg_krr_opts o = tg_krr_defaults();
    o.gamma = &gamma, o.ngamma = 1, o.alpha = &alpha, o.nalpha = 1;
    o.covar = c->covar, o.ncov = NCOV, o.ldc = NS, o.fixed = 1;
    o.nb = NB, o.allowed = 1u << TG_FP64, o.diag = TG_FP64, o.diag_fixed = 1, o.accuracy = 1e-12;
    tg_krr_model *m = NULL;
    tg_error err = {0};
    tg_status st = tg_krr_fit(&c->bed, c->train, NTR, NPH, y, NS, names, &o, &m, NULL, &err);
    if (!st) st = tg_krr_predict(m, &c->bed, c->test, NTE, c->covar, NS, pred, NTE, NULL, &err);
    const double *ga = st ? wdum : tg_krr_model_describe(m)->fixed_alpha;
    double ea = st ? NAN : fro_diff(ga, fa, P * NPH) / fro(fa, P * NPH),
           ep = st ? NAN : fro_diff(pred, ref, NTE * NPH) / fro(ref, NTE * NPH);
    ok(!st && !info && ea <= 1e-12 && ep <= 1e-10,
       "KRR with %d covariates as fixed effects, all fp64: alpha vs the normal equations %.3g, "
       "predictions K_t W + C_t alpha vs dposv %.3g %s", NCOV, ea, ep, err.msg);
    tg_krr_model_free(m);
    free(y), free(k), free(kt), free(w);
}

static void krr_tests(tg_rng *r) {
    struct cohort c = {0};
    if (!ok(make_cohort(&c, r), "cohort of %d samples (%d train), %d SNPs written", NS, NTR, NSNP))
        return;
    const int nte = NS - NTR;
    double *d = malloc((size_t)NTR * NTR * sizeof *d), *med = malloc((size_t)NTR * NTR * sizeof *med);
    int nm = 0;
    for (int j = 0; j < NTR; j++)
        for (int i = 0; i < NTR; i++) {
            d[i + j * NTR] = dist2(&c, c.train[i], c.train[j]);
            if (i > j) med[nm++] = d[i + j * NTR];
        }
    qsort(med, (size_t)nm, sizeof *med, cmp_double);
    double median = med[nm / 2];
    double *dt = malloc((size_t)nte * NTR * sizeof *dt);
    for (int j = 0; j < NTR; j++)
        for (int i = 0; i < nte; i++) dt[i + j * nte] = dist2(&c, c.test[i], c.train[j]);

    /* two kernels: γ = 1/median (smooth, κ up to ~N/α) for the FP64 check; γ = 4/median
     * (localized: off-diagonal entries ~e⁻⁴, so the adaptive rule lowers tiles) for the map */
    for (int pass = 0; pass < 2; pass++) {
        double gamma = (pass ? 4 : 1) / median, alpha = pass ? 0.5 : 0.1;
        double *k = malloc((size_t)NTR * NTR * sizeof *k), *kt = malloc((size_t)nte * NTR * sizeof *kt);
        double *w = malloc((size_t)NTR * NPH * sizeof *w), *ref = malloc((size_t)nte * NPH * sizeof *ref);
        for (int q = 0; q < NTR * NTR; q++) k[q] = exp(-gamma * d[q]);
        for (int i = 0; i < NTR; i++) k[i + i * NTR] += alpha;
        for (int q = 0; q < nte * NTR; q++) kt[q] = exp(-gamma * dt[q]);
        /* κ₂ and ‖A‖_F/‖A‖₂ of K + αI for the bound below (dposv overwrites its copy) */
        double *a = malloc((size_t)NTR * NTR * sizeof *a), ev[NTR];
        memcpy(a, k, (size_t)NTR * NTR * sizeof *a);
        LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', NTR, a, NTR, ev);
        double kappa = ev[NTR - 1] / ev[0], ffac = fro(k, (size_t)NTR * NTR) / ev[NTR - 1];
        memcpy(a, k, (size_t)NTR * NTR * sizeof *a);
        /* the phenotypes centred by their training means, which the predictions add back */
        double mean[NPH] = {0};
        for (int q = 0; q < NPH; q++) {
            for (int i = 0; i < NTR; i++) mean[q] += c.y[i + q * NTR] / NTR;
            for (int i = 0; i < NTR; i++) w[i + q * NTR] = c.y[i + q * NTR] - mean[q];
            for (int i = 0; i < nte; i++) ref[i + q * nte] = mean[q];
        }
        int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', NTR, NPH, a, NTR, w, NTR);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nte, NPH, NTR, 1, kt, nte, w, NTR,
                    1, ref, nte);
        double *p = calloc((size_t)nte * NPH, sizeof *p), *p64 = calloc((size_t)nte * NPH, sizeof *p64);
        double *wt = calloc((size_t)NTR * NPH, sizeof *wt), *w64 = calloc((size_t)NTR * NPH, sizeof *w64);
        size_t np = (size_t)nte * NPH;
        tg_error err = {0};
        tg_chol_report rep;
        tg_chol_opts o = tg_chol_defaults();
        o.allowed = 1u << TG_FP64;
        o.diag = TG_FP64;
        /* all FP64: both are backward stable solves of the same system, so they differ by about
         * κ₂·n·u₆₄ ≤ ~1e3·70·1.1e-16 relatively (κ₂ printed), well below 1e-10 */
        tg_status st = pipeline(&c, gamma, alpha, &o, &rep, p64, w64, &err);
        double e64 = fro_diff(p64, ref, np) / fro(ref, np);
        ok(info == 0 && st == TG_OK && e64 <= 1e-10,
           "KRR gaussian γ = %.3g/median, α %g, N %d (tiles %d), %d SNPs + %d confounders, all "
           "fp64: predictions vs dposv %.3g <= 1e-10 (κ₂ %.3g)",
           gamma * median, alpha, NTR, NB, NSNP, NCOV, e64, kappa);
        if (pass == 1) {
            /* FP32 diagonal + FP16 adaptive map at ε = 1e-4. The map perturbs K + αI by
             * ‖ΔA‖_F ≤ NT·ε‖A‖_F (each lowered tile by ≤ ε‖A‖_F/NT, updates adding up to NT such
             * roundings), FP32 storage and arithmetic by ≤ 4n·u₃₂‖A‖_F, so (Higham Thm 7.2)
             * ‖ΔW‖/‖W‖ ≤ δ_W = 2κ₂(NT·ε + 4n·u₃₂)‖A‖_F/‖A‖₂. P = K_t·W in FP32 adds K_t's
             * rounding and the product's, 2(n + 2)u₃₂ relative to |K_t||W|, so
             * ‖ΔP‖/‖P‖ ≤ ‖K_t‖_F‖W‖_F/‖P‖_F·(δ_W + 2(n + 2)u₃₂): roughly ε·κ amplified by how
             * much P cancels. γ = 4/median keeps κ₂ near 2 with α = 0.5 and off-diagonal tiles
             * small enough to be lowered; the target 1e-3 must hold as well. */
            int nt = (NTR + NB - 1) / NB;
            double u32 = tg_prec_unit_roundoff(TG_FP32);
            double dw = 2 * kappa * (nt * 1e-4 + 4 * NTR * u32) * ffac;
            double bound = fro(kt, (size_t)nte * NTR) * fro(w, (size_t)NTR * NPH) / fro(ref, np) *
                           (dw + 2 * (NTR + 2) * u32);
            o = tg_chol_defaults();
            o.allowed = 1u << TG_FP32 | 1u << TG_FP16;
            o.diag = TG_FP32;
            o.eps = 1e-4;
            st = pipeline(&c, gamma, alpha, &o, &rep, p, wt, &err);
            double e = fro_diff(p, p64, np) / fro(p64, np);
            ok(st == TG_OK && rep.tiles[TG_FP16] > 0 && e <= bound && e <= 1e-3,
               "KRR fp32 diagonal + fp16 adaptive map (ε 1e-4; tiles fp32 %lld fp16 %lld): "
               "predictions vs fp64 %.3g <= min(%.3g, 1e-3)",
               (long long)rep.tiles[TG_FP32], (long long)rep.tiles[TG_FP16], e, bound);
        }
        /* The default map from a tolerance τ on the predictions (tol, α the shift): its eps is
         * τ·α/((NT + 1)‖A‖_F), and the bound (NT + 1)·eps_map·‖A‖_F/α it reports must be ≤ τ;
         * the weights then move by ≤ bound relatively (‖ΔW‖ ≤ ‖(K + αI)⁻¹‖₂‖ΔA‖₂‖W‖ with
         * ‖(K + αI)⁻¹‖₂ ≤ 1/α), the predictions by ≤ bound·‖K_t‖_F‖W‖_F, and relatively by
         * ≤ τ as well (they barely cancel here). Not vacuous: with τ ≥ 1e-3 the map lowers
         * tiles on both kernels (FP32, FP16 or FP8: every precision is allowed) and, with
         * lower_diag, the diagonal to FP32 (the solve with it); τ = 1e-12 leaves too little
         * room: all FP64. */
        static const double taus[] = {1e-3, 1e-2, 1e-12};
        for (int q = 0; q < 3; q++) {
            double tau = taus[q];
            o = tg_chol_defaults();
            o.tol = tau;
            o.lower_diag = 1;
            st = pipeline(&c, gamma, alpha, &o, &rep, p, wt, &err);
            int nt = (NTR + NB - 1) / NB;
            double ew = fro_diff(wt, w64, (size_t)NTR * NPH) / fro(w64, (size_t)NTR * NPH),
                   ep = fro_diff(p, p64, np) / fro(p64, np),
                   pb = rep.bound * fro(kt, (size_t)nte * NTR) * fro(w64, (size_t)NTR * NPH) /
                        fro(p64, np);
            int64_t low = rep.tiles[TG_FP32] + rep.tiles[TG_FP16] + rep.tiles[TG_FP8_E4M3];
            double want = tau * alpha / ((nt + 1) * fro(k, (size_t)NTR * NTR));
            ok(st == TG_OK && fabs(rep.eps - want) <= 1e-9 * want && rep.bound <= tau &&
                   ew <= rep.bound && ep <= pb && ep <= tau &&
                   (tau < 1e-6 ? low == 0 && rep.diag == TG_FP64 : low > 0 && rep.diag == TG_FP32),
               "KRR γ = %.3g/median, α %g, default map for τ %g: eps %.3g (%.3g), diag %s, tiles "
               "fp64 %lld fp32 %lld fp16 %lld fp8 %lld, bound %.3g <= τ; W vs fp64 %.3g <= %.3g, "
               "predictions %.3g <= min(%.3g, τ)",
               gamma * median, alpha, tau, rep.eps, want, tg_prec_name(rep.diag),
               (long long)rep.tiles[TG_FP64],
               (long long)rep.tiles[TG_FP32], (long long)rep.tiles[TG_FP16],
               (long long)rep.tiles[TG_FP8_E4M3], rep.bound, ew, rep.bound, ep, pb);
        }
        free(p), free(p64), free(wt), free(w64), free(k), free(kt), free(w), free(ref), free(a);
    }
    fixed_test(&c, 1 / median, 0.1);
    free(d), free(med), free(dt);
    free(c.g), free(c.covar), free(c.zcov), free(c.y);
    tg_bed_close(&c.bed);
    remove_bed(c.prefix);
}

int main(void) {
    tg_rng r;
    uint64_t seed = tap_seed();
    tg_rng_seed(&r, seed);
    metrics_tests(&r);
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    if (tg_runtime_start(&o, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    static const tg_prec all64[4] = {TG_FP64, TG_FP64, TG_FP64, TG_FP64},
                         mixed[4] = {TG_FP64, TG_FP32, TG_FP16, TG_FP8_E4M3};
    predict_test(&r, 37, 50, 5, 16, TG_FP64, all64);
    predict_test(&r, 37, 50, 5, 16, TG_FP32, mixed);
    predict_test(&r, 40, 64, 3, 16, TG_FP64, mixed);
    predict_test(&r, 9, 7, 1, 16, TG_FP64, all64);
    predict_errors();
    krr_tests(&r);
    tg_runtime_stop();
    tap_plan(tap_n);
    return tap_done();
}
