/* tg_assoc against dense FP64 references written here from the model's definition, on a small
 * fileset with missing calls, a monomorphic SNP, three chromosomes, two phenotypes with
 * different missing values and a covariate with a missing value:
 *  - step 1: each fold's ridge β = (Z_TᵀM_TZ_T + λI)⁻¹Z_TᵀM_Ty_T on the fold's training samples T
 *    (LAPACK dposv; M_T the projection off [1, covariate] on T, by dgels), λ = m(1 − h²)/h²
 *    of the h² tg_assoc chose, and every sample's LOCO prediction Σ_{j ∉ c} Z_ijβ_j from its
 *    fold's β, to 1e-7 (CG stops at relative residual 1e-11);
 *  - step 2, given those LOCO predictions: r = M(y − LOCO_c), g̃ = M g (g the mean-imputed,
 *    centred genotypes), BETA, SE, CHISQ, LOG10P (log10 erfc in long double), A1_FREQ, N and
 *    λ_GC, to 1e-10; and with no step 1 (--ignore-pred) the same with LOCO 0;
 *  - the h² chosen has the least held-out error of the reported ones, which the reference
 *    recomputes from its own fold fits;
 *  - bad inputs: a phenotype without variance, too few samples for the fixed effects, too
 *    many folds;
 *  - relatives' pairs (check_pairs): none given, the same bits; pairs of unrelated samples
 *    change CHISQ and SE by c = 1 + 2Σ K r r / rᵀr alone, c checked against the residual
 *    recomputed here; bad pairs refused;
 *  - related samples (check_related): the null SNPs' λ_GC inflated without step 1, most of the
 *    excess removed by the LOCO offset; with the sibs as pairs, λ_GC about 1 without step 1
 *    (c about 2), and c about 1 with the LOCO offset, which it leaves inflated;
 *  - case/control (check_binary; two binary phenotypes and a quantitative one in one run): the
 *    LOCO predictions of a 0/1 phenotype from its ridge folds as above; the null logistic
 *    model with the offset LOCO_c/(ȳ(1 − ȳ)) by a naive Newton here, then per SNP U, V from
 *    explicit loops and a direct 2 × 2 solve of XᵀWX, giving BETA, SE, CHISQ, LOG10P and λ_GC
 *    to 1e-10 (the tool's IRLS and its products checked through them); a value other than
 *    0/1 and a covariate that separates cases from controls refused.
 * The whole set runs on CPU workers, then on every worker (GPUs too; TG_REQUIRE_GPU=1: a
 * missing GPU fails), and the two runs' results agree to 1e-12. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"
#include "tilegwas.h"

enum { N = 173, M = 61, K = 3, NCHR = 3, FOLDS = 3 };
static const double H2[] = {0.2, 0.6};

static int chrom(int64_t j) { return (int)(j * NCHR / M); }

/* The samples of phenotype t: its value and the covariate observed. */
static int observed(const double *y, const double *cov, int64_t i) {
    return !isnan(y[i]) && !isnan(cov[i]);
}

/* Residuals of v (the rows in rows[0..nr)) after least squares on [1, cov] over them: out. */
static void project(const double *cov, const int64_t *rows, int64_t nr, const double *v,
                    double *out, int64_t nv) {
    double *a = malloc(sizeof(double) * (size_t)(2 * nr)),
           *b = malloc(sizeof(double) * (size_t)(nr * nv));
    for (int64_t i = 0; i < nr; i++) a[i] = 1, a[i + nr] = cov[rows[i]];
    memcpy(b, v, sizeof(double) * (size_t)(nr * nv));
    LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', (int)nr, 2, (int)nv, a, (int)nr, b, (int)nr);
    for (int64_t c = 0; c < nv; c++) /* residual = v − C·coef */
        for (int64_t i = 0; i < nr; i++)
            out[i + c * nr] = v[i + c * nr] - b[c * nr] - b[1 + c * nr] * cov[rows[i]];
    free(a);
    free(b);
}

/* g (n × m): centred, mean-imputed genotypes; s[j] = √(2p(1−p)) (0 monomorphic). */
static void centred(const int8_t *geno, double *g, double *s, int *meff) {
    *meff = 0;
    for (int64_t j = 0; j < M; j++) {
        double sum = 0, cnt = 0;
        for (int64_t i = 0; i < N; i++)
            if (geno[i + j * N] != TG_GENO_MISSING) sum += geno[i + j * N], cnt++;
        const double p = sum / (2 * cnt);
        s[j] = p > 0 && p < 1 ? sqrt(2 * p * (1 - p)) : 0;
        *meff += s[j] > 0;
        for (int64_t i = 0; i < N; i++)
            g[i + j * N] =
                geno[i + j * N] == TG_GENO_MISSING || !s[j] ? 0 : geno[i + j * N] - 2 * p;
    }
}

/* Fold f's β of phenotype y at λ (scaled Z), and its held-out squared error summed into *sse:
 * the held-out prediction is the training fit's fixed effects plus Zβ. Returns dposv's info. */
static int fold_fit(const double *g, const double *s, const double *y, const double *cov, int f,
                    double lambda, double *beta, double *sse) {
    int64_t rows[N], nr = 0;
    for (int64_t i = 0; i < N; i++)
        if (observed(y, cov, i) && i % FOLDS != f) rows[nr++] = i;
    double *z = malloc(sizeof(double) * (size_t)(nr * (M + 1))),
           *zm = malloc(sizeof(double) * (size_t)(nr * (M + 1))), a[M * M];
    for (int64_t j = 0; j < M; j++)
        for (int64_t i = 0; i < nr; i++)
            z[i + j * nr] = s[j] ? g[rows[i] + j * N] / s[j] : 0;
    for (int64_t i = 0; i < nr; i++) z[i + M * nr] = y[rows[i]];
    project(cov, rows, nr, z, zm, M + 1);
    for (int64_t j = 0; j < M; j++) {
        double b = 0;
        for (int64_t i = 0; i < nr; i++) b += zm[i + j * nr] * zm[i + M * nr];
        beta[j] = b;
        for (int64_t l = 0; l < M; l++) {
            double d = 0;
            for (int64_t i = 0; i < nr; i++) d += zm[i + j * nr] * zm[i + l * nr];
            a[j + l * M] = d + (j == l ? lambda : 0);
        }
    }
    int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', M, 1, a, M, beta, M);
    /* the fixed effects: least squares of y − Zβ on [1, cov] over the training rows */
    double c[N * 2], e[N];
    for (int64_t i = 0; i < nr; i++) {
        e[i] = y[rows[i]];
        for (int64_t j = 0; j < M; j++) e[i] -= z[i + j * nr] * beta[j];
        c[i] = 1, c[i + nr] = cov[rows[i]];
    }
    LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', (int)nr, 2, 1, c, (int)nr, e, (int)nr);
    for (int64_t i = f; i < N; i += FOLDS) {
        if (!observed(y, cov, i)) continue;
        double pred = e[0] + e[1] * cov[i];
        for (int64_t j = 0; j < M; j++) pred += (s[j] ? g[i + j * N] / s[j] : 0) * beta[j];
        *sse += (y[i] - pred) * (y[i] - pred);
    }
    free(z);
    free(zm);
    return info;
}

/* loco[i + c·N] for phenotype y at λ: sample i's fold's β over the SNPs off chromosome c; and
 * the held-out mean squared error. */
static double loco_ref(const double *g, const double *s, const double *y, const double *cov,
                       double lambda, double *loco, int *info) {
    double beta[M], sse = 0, nobs = 0;
    for (int f = 0; f < FOLDS; f++) {
        *info |= fold_fit(g, s, y, cov, f, lambda, beta, &sse);
        for (int64_t i = f; i < N; i += FOLDS)
            for (int c = 0; c < NCHR; c++) {
                double v = 0;
                for (int64_t j = 0; j < M; j++)
                    if (chrom(j) != c && s[j]) v += g[i + j * N] / s[j] * beta[j];
                loco[i + c * N] = v;
            }
    }
    for (int64_t i = 0; i < N; i++) nobs += observed(y, cov, i);
    return sse / nobs;
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The score tests of phenotype y given loco (N × NCHR) against r's column t; the largest
 * relative error of BETA, SE, CHISQ, LOG10P and λ_GC, and whether NA, N and A1_FREQ match. */
static double step2_ref(const int8_t *geno, const double *g, const double *y, const double *cov,
                        const double *loco, const tg_assoc_result *r, int t, int *same) {
    int64_t rows[N], nr = 0;
    for (int64_t i = 0; i < N; i++)
        if (observed(y, cov, i)) rows[nr++] = i;
    double *v = malloc(sizeof(double) * (size_t)(nr * (M + NCHR))),
           *w = malloc(sizeof(double) * (size_t)(nr * (M + NCHR))), chi[M], worst = 0;
    for (int64_t i = 0; i < nr; i++) {
        for (int64_t j = 0; j < M; j++) v[i + j * nr] = g[rows[i] + j * N];
        for (int c = 0; c < NCHR; c++) v[i + (M + c) * nr] = y[rows[i]] - loco[rows[i] + c * N];
    }
    project(cov, rows, nr, v, w, M + NCHR);
    int64_t nchi = 0;
    for (int64_t j = 0; j < M; j++) {
        const int64_t at = j + t * M;
        const double *gt = w + j * nr, *rc = w + (M + chrom(j)) * nr;
        double U = 0, G = 0, rr = 0, a1 = 0, calls = 0;
        for (int64_t i = 0; i < nr; i++) {
            U += gt[i] * rc[i], G += gt[i] * gt[i], rr += rc[i] * rc[i];
            const int8_t x = geno[rows[i] + j * N];
            if (x != TG_GENO_MISSING) a1 += x, calls++;
        }
        *same &= r->stats[at].n_obs == (int64_t)calls &&
                 fabs(r->stats[at].freq - a1 / (2 * calls)) < 1e-12;
        if (G < 1e-9) { /* monomorphic */
            *same &= isnan(r->beta[at]) && isnan(r->chisq[at]) && isnan(r->log10p[at]);
            continue;
        }
        const double s2 = rr / (double)(nr - 2), want[4] = {
            U / G, sqrt(s2 / G), U * U / (s2 * G),
            (double)-log10l(erfcl(sqrtl((long double)(U * U / (s2 * G)) / 2)))};
        const double got[4] = {r->beta[at], r->se[at], r->chisq[at], r->log10p[at]};
        for (int q = 0; q < 4; q++) {
            const double e = fabs(got[q] - want[q]) / fabs(want[q]);
            if (!(e <= worst)) worst = e;
        }
        chi[nchi++] = want[2];
    }
    qsort(chi, (size_t)nchi, sizeof *chi, cmp);
    const double med = nchi % 2 ? chi[nchi / 2] : (chi[nchi / 2 - 1] + chi[nchi / 2]) / 2,
                 gc = med / 0.45493642311957283, e = fabs(r->lambda_gc[t] - gc) / gc;
    free(v);
    free(w);
    return e > worst ? e : worst;
}

/* The logistic score tests of case/control phenotype y (0/1) given loco (N × NCHR) against r's
 * column t: per chromosome the null model logit μ = o + a0 + a1·cov, o = LOCO_c/(ȳ(1 − ȳ)), by
 * Newton's method (60 steps from 0: far past convergence for this small fit), then per SNP
 * U = gᵀ(y − μ), V = Σ w g² − bᵀA⁻¹b (w = μ(1 − μ), A = XᵀWX, b = XᵀWg, X = [1, cov]).
 * Returns the largest relative error of BETA, SE, CHISQ, LOG10P and λ_GC; BETA's at least in
 * units of SE, CHISQ's and LOG10P's at least in units of 1: near U = 0 the score is a
 * difference of sums, exact to rounding in absolute terms only (CHISQ 1e-6 would leave U's
 * last 5 digits to rounding). */
static double logistic_ref(const double *g, const double *y, const double *cov,
                           const double *loco, const tg_assoc_result *r, int t) {
    int64_t rows[N], nr = 0;
    double ybar = 0, mu[N], chi[M], worst = 0;
    for (int64_t i = 0; i < N; i++)
        if (observed(y, cov, i)) rows[nr++] = i, ybar += y[i];
    ybar /= (double)nr;
    int64_t nchi = 0;
    for (int c = 0; c < NCHR; c++) {
        double a0 = 0, a1 = 0;
        for (int it = 0;; it++) {
            double g0 = 0, g1 = 0, h00 = 0, h01 = 0, h11 = 0;
            for (int64_t k = 0; k < nr; k++) {
                const int64_t i = rows[k];
                const double x = cov[i], o = loco[i + c * N] / (ybar * (1 - ybar));
                mu[i] = 1 / (1 + exp(-(o + a0 + a1 * x)));
                const double w = mu[i] * (1 - mu[i]);
                g0 += y[i] - mu[i], g1 += x * (y[i] - mu[i]);
                h00 += w, h01 += w * x, h11 += w * x * x;
            }
            if (it == 60) break;
            const double det = h00 * h11 - h01 * h01;
            a0 += (h11 * g0 - h01 * g1) / det;
            a1 += (h00 * g1 - h01 * g0) / det;
        }
        for (int64_t j = 0; j < M; j++) {
            if (chrom(j) != c) continue;
            const int64_t at = j + t * M;
            double U = 0, gwg = 0, A[3] = {0}, b[2] = {0};
            for (int64_t k = 0; k < nr; k++) {
                const int64_t i = rows[k];
                const double x = cov[i], w = mu[i] * (1 - mu[i]), gi = g[i + j * N];
                U += gi * (y[i] - mu[i]), gwg += w * gi * gi;
                A[0] += w, A[1] += w * x, A[2] += w * x * x;
                b[0] += w * gi, b[1] += w * x * gi;
            }
            const double det = A[0] * A[2] - A[1] * A[1],
                         V = gwg - (A[2] * b[0] * b[0] - 2 * A[1] * b[0] * b[1] +
                                    A[0] * b[1] * b[1]) / det;
            if (V < 1e-9) { /* monomorphic */
                if (!isnan(r->chisq[at])) worst = INFINITY;
                continue;
            }
            const double want[4] = {U / V, 1 / sqrt(V), U * U / V,
                                    (double)-log10l(erfcl(sqrtl((long double)(U * U / V) / 2)))};
            const double got[4] = {r->beta[at], r->se[at], r->chisq[at], r->log10p[at]},
                         unit[4] = {fmax(fabs(want[0]), want[1]), want[1], fmax(want[2], 1),
                                    fmax(want[3], 1)};
            for (int q = 0; q < 4; q++) {
                const double e = fabs(got[q] - want[q]) / unit[q];
                if (!(e <= worst)) worst = e;
            }
            chi[nchi++] = want[2];
        }
    }
    qsort(chi, (size_t)nchi, sizeof *chi, cmp);
    const double med = nchi % 2 ? chi[nchi / 2] : (chi[nchi / 2 - 1] + chi[nchi / 2]) / 2,
                 gc = med / 0.45493642311957283, e = fabs(r->lambda_gc[t] - gc) / gc;
    return e > worst ? e : worst;
}

/* Case/control phenotypes 1 and 2 (a logistic model on SNPs 3 and 40 and the covariate;
 * phenotype 2 with missing values) beside the quantitative phenotype 3 of @p yq, with and
 * without step 1; then the bad inputs. */
static void check_binary(const tg_bed *bed, const int8_t *geno, const double *yq,
                         const double *cov, tg_rng *rng, int errors) {
    static double y[N * K];
    static const int bin[K] = {1, 1, 0};
    double g[N * M], s[M];
    int meff;
    centred(geno, g, s, &meff);
    for (int64_t i = 0; i < N; i++) {
        const int8_t a = geno[i + 3 * N], b = geno[i + 40 * N];
        const double x = isnan(cov[i]) ? 0 : cov[i],
                     e0 = -0.4 + 0.8 * x + 0.7 * (a > 0 ? a : 0),
                     e1 = 0.3 - 0.5 * x - 0.6 * (b > 0 ? b : 0);
        y[i] = tg_rng_uniform(rng) < 1 / (1 + exp(-e0));
        y[i + N] = i % 13 == 2 ? NAN : tg_rng_uniform(rng) < 1 / (1 + exp(-e1));
        y[i + 2 * N] = yq[i + 2 * N];
    }
    for (int nh = 2; nh >= 0; nh -= 2) {
        tg_assoc_opts o = tg_assoc_defaults();
        o.h2 = H2, o.nh2 = nh, o.folds = FOLDS, o.tol = 1e-11;
        o.covar = cov, o.ldc = N, o.ncovar = 1, o.binary = bin;
        tg_assoc_result r;
        tg_error err = {0};
        tg_status st = tg_assoc(bed, K, y, N, &o, &r, &err);
        double lerr = 0, l2 = 0, worst = 0;
        int info = 0, cases = 1;
        for (int t = 0; t < 2 && !st; t++) {
            const double *yt = y + t * N, *lt = r.loco + t * N * NCHR;
            int64_t nc = 0;
            for (int64_t i = 0; i < N; i++) nc += observed(yt, cov, i) && yt[i] == 1;
            cases &= r.ncases[t] == nc && isnan(r.sigma2[t * NCHR]);
            if (nh) { /* step 1 of a 0/1 phenotype: the same ridge folds */
                double ref[N * NCHR];
                loco_ref(g, s, yt, cov, meff * (1 - r.h2[t]) / r.h2[t], ref, &info);
                for (int64_t i = 0; i < N * NCHR; i++)
                    lerr += (lt[i] - ref[i]) * (lt[i] - ref[i]), l2 += ref[i] * ref[i];
            }
            worst = fmax(worst, logistic_ref(g, yt, cov, lt, &r, t));
        }
        int same = 1;
        if (!st)
            worst = fmax(worst, step2_ref(geno, g, y + 2 * N, cov, r.loco + 2 * N * NCHR, &r, 2,
                                          &same));
        ok(!st && !info && (!nh || sqrt(lerr / l2) < 1e-7) && worst < 1e-10 && same && cases &&
               r.ncases[2] == -1,
           "case/control, %s: LOCO of the 0/1 phenotypes from their ridge folds (rel %.2g); "
           "BETA, SE, CHISQ, LOG10P and lambda_GC of the logistic score tests with the offset, "
           "and of the quantitative phenotype beside them, within %.2g of the naive ones; "
           "cases counted %s", nh ? "LOCO" : "no step 1", l2 > 0 ? sqrt(lerr / l2) : 0, worst,
           err.msg);
        tg_assoc_result_free(&r);
    }
    if (!errors) return;
    tg_assoc_opts o = tg_assoc_defaults();
    o.h2 = H2, o.nh2 = 0, o.covar = cov, o.ldc = N, o.ncovar = 1, o.binary = bin;
    tg_assoc_result r;
    tg_error err = {0};
    const double keep = y[N + 9];
    y[N + 9] = 2;
    tg_status st = tg_assoc(bed, K, y, N, &o, &r, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "phenotype 2, sample 10: value 2"),
       "a case/control value 2 refused: %s", err.msg);
    tg_assoc_result_free(&r);
    y[N + 9] = keep;
    for (int64_t i = 0; i < N; i++) y[i] = cov[i] > 0;
    st = tg_assoc(bed, K, y, N, &o, &r, &err);
    ok(st == TG_ERR_NUMERIC && strstr(err.msg, "phenotype 1: the null logistic model") &&
           strstr(err.msg, "separates cases from controls"),
       "a covariate that separates cases from controls refused: %s", err.msg);
    tg_assoc_result_free(&r);
}

/* One run of tg_assoc (nh 0: no step 1) checked against the references; its results kept in
 * *keep for the comparison of the two passes. */
static void check(const tg_bed *bed, const int8_t *geno, const double *y, const double *cov,
                  int nh, const char *where, tg_assoc_result *keep) {
    double g[N * M], s[M], loco[N * NCHR * K] = {0};
    int meff, info = 0, same = 1;
    centred(geno, g, s, &meff);
    tg_assoc_opts o = tg_assoc_defaults();
    o.h2 = H2, o.nh2 = nh, o.folds = FOLDS, o.tol = 1e-11;
    o.covar = cov, o.ldc = N, o.ncovar = 1;
    tg_error err = {0};
    tg_status st = tg_assoc(bed, K, y, N, &o, keep, &err);
    if (!ok(!st && keep->nchrom == NCHR, "%s, %s: tg_assoc ran (%d chromosomes) %s", where,
            nh ? "LOCO" : "no step 1", keep->nchrom, err.msg))
        return;
    double lerr = 0, l2 = 0, cverr = 0, worst = 0;
    int argmin = 1;
    for (int t = 0; t < K && nh; t++) {
        double mse[2], lam = meff * (1 - keep->h2[t]) / keep->h2[t], *lt = loco + t * N * NCHR;
        for (int h = 0; h < nh; h++) {
            double l = meff * (1 - H2[h]) / H2[h], tmp[N * NCHR];
            mse[h] = loco_ref(g, s, y + t * N, cov, l, tmp, &info);
            cverr = fmax(cverr, fabs(mse[h] - keep->cv_mse[h + nh * t]) / mse[h]);
        }
        argmin &= keep->h2[t] == H2[mse[1] < mse[0]];
        loco_ref(g, s, y + t * N, cov, lam, lt, &info);
        for (int64_t i = 0; i < N * NCHR; i++) {
            const double d = keep->loco[i + t * N * NCHR] - lt[i];
            lerr += d * d, l2 += lt[i] * lt[i];
        }
    }
    if (nh) {
        ok(!info && sqrt(lerr / l2) < 1e-7 && cverr < 1e-7 && argmin,
           "%s: every sample's LOCO prediction from its fold's ridge fit (rel %.2g), held-out "
           "errors (rel %.2g), the h2 of least error chosen", where, sqrt(lerr / l2), cverr);
        /* step 2 given the tool's own LOCO predictions, to isolate it */
        memcpy(loco, keep->loco, sizeof loco);
    }
    for (int t = 0; t < K; t++)
        worst = fmax(worst,
                     step2_ref(geno, g, y + t * N, cov, loco + t * N * NCHR, keep, t, &same));
    ok(worst < 1e-10 && same, "%s, %s: BETA, SE, CHISQ, LOG10P and lambda_GC of %d SNPs x %d "
       "phenotypes within %.2g of the naive score test; A1_FREQ, N and the monomorphic SNP's "
       "NA match", where, nh ? "LOCO" : "no step 1", M, K, worst);
}

/* The largest relative difference of two runs' tests (NAN where both are NAN). */
static double differ(const tg_assoc_result *a, const tg_assoc_result *b) {
    double worst = 0;
    const double *x[] = {a->beta, a->se, a->chisq, a->log10p, a->loco},
                 *y[] = {b->beta, b->se, b->chisq, b->log10p, b->loco};
    for (int q = 0; q < 5; q++)
        for (int64_t i = 0; i < (q < 4 ? M * K : N * NCHR * K); i++) {
            if (isnan(x[q][i]) && isnan(y[q][i])) continue;
            const double e = fabs(x[q][i] - y[q][i]) / fmax(fabs(y[q][i]), 1e-3);
            if (!(e <= worst)) worst = e;
        }
    return worst;
}

static void check_errors(const tg_bed *bed, double *y, const double *cov) {
    tg_assoc_opts o = tg_assoc_defaults();
    o.h2 = H2, o.nh2 = 2, o.folds = FOLDS, o.covar = cov, o.ldc = N, o.ncovar = 1;
    tg_assoc_result r;
    tg_error err = {0};
    double keep[N];
    memcpy(keep, y + N, sizeof keep);
    for (int64_t i = 0; i < N; i++) y[i + N] = 2.5 + 0 * keep[i];
    tg_status st = tg_assoc(bed, K, y, N, &o, &r, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "phenotype 2 has no variance"),
       "a constant phenotype refused: %s", err.msg);
    tg_assoc_result_free(&r);
    for (int64_t i = 0; i < N; i++) y[i + N] = i < 2 ? keep[i] : NAN;
    st = tg_assoc(bed, K, y, N, &o, &r, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "phenotype 2 has") && strstr(err.msg, "at least 4"),
       "a phenotype with fewer samples than its fixed effects + 2 refused: %s", err.msg);
    tg_assoc_result_free(&r);
    memcpy(y + N, keep, sizeof keep);
    o.folds = N;
    st = tg_assoc(bed, K, y, N, &o, &r, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "fold"), "%d folds refused: %s", N, err.msg);
    tg_assoc_result_free(&r);
}

/* c = 1 + 2Σ_pairs K r_i r_i' / rᵀr of the residual @p r (n values, 0 outside the phenotype's
 * samples), in plain loops. */
static double relate_ref(const double *r, int64_t n, int64_t np, const int64_t *pi,
                         const int64_t *pj, const double *pk) {
    double rr = 0, kr = 0;
    for (int64_t i = 0; i < n; i++) rr += r[i] * r[i];
    for (int64_t p = 0; p < np; p++) kr += pk[p] * r[pi[p]] * r[pj[p]];
    return 1 + 2 * kr / rr;
}

/* Relatives' pairs on the unrelated fileset (with step 1, the covariate and the missing
 * values): pairs given as none change no bit; pairs of unrelated samples at small K (some
 * with a sample whose value is missing) give per phenotype and chromosome the c of the
 * residual M(y − LOCO_c) recomputed here by dgels, and every test changes by it alone: CHISQ
 * / c, SE × √c, BETA and LOG10P's input the same; for a case/control phenotype the same
 * factor on CHISQ and SE. Bad pairs are refused naming the pair. */
static void check_pairs(const tg_bed *bed, const double *y, const double *cov) {
    enum { NP = 60 };
    int64_t pi[NP], pj[NP];
    double pk[NP], yb[N * 2];
    for (int64_t p = 0; p < NP; p++)
        pi[p] = 2 * p, pj[p] = (2 * p + 7) % N, pk[p] = 0.05 + 0.01 * (double)(p % 5);
    for (int64_t i = 0; i < N; i++) /* a case/control phenotype beside a quantitative one */
        yb[i] = y[i], yb[i + N] = isnan(y[i + N]) ? NAN : y[i + N] > 0.5;
    const int binary[2] = {0, 1};
    tg_assoc_opts o = tg_assoc_defaults();
    o.h2 = H2, o.nh2 = 2, o.folds = FOLDS, o.covar = cov, o.ldc = N, o.ncovar = 1;
    o.binary = binary;
    tg_assoc_result r0, r1, r2;
    tg_error err = {0};
    tg_status st = tg_assoc(bed, 2, yb, N, &o, &r0, &err);
    o.pair_i = pi, o.pair_j = pj, o.pair_k = pk;
    if (!st) st = tg_assoc(bed, 2, yb, N, &o, &r1, &err);
    o.npairs = NP;
    if (!st) st = tg_assoc(bed, 2, yb, N, &o, &r2, &err);
    int same = !st, beta = !st;
    double worst_c = 0, worst_t = 0, cmin = INFINITY, cmax = 0;
    for (int64_t at = 0; !st && at < M * 2; at++) {
        const double *a[] = {r0.beta, r0.se, r0.chisq, r0.log10p},
                     *b[] = {r1.beta, r1.se, r1.chisq, r1.log10p};
        for (int q = 0; q < 4; q++) same &= !memcmp(&a[q][at], &b[q][at], sizeof(double));
        beta &= !memcmp(&r0.beta[at], &r2.beta[at], sizeof(double));
        if (isnan(r0.chisq[at])) continue;
        const double c = r2.relate[chrom(at % M) + NCHR * (at / M)];
        worst_t = fmax(worst_t, fabs(r0.chisq[at] / r2.chisq[at] / c - 1));
        worst_t = fmax(worst_t, fabs(r2.se[at] / r0.se[at] / sqrt(c) - 1));
    }
    for (int64_t c = 0; !st && c < NCHR; c++) {
        int64_t rows[N], nr = 0;
        double v[N], out[N], full[N] = {0};
        for (int64_t i = 0; i < N; i++)
            if (observed(yb, cov, i)) v[nr] = yb[i] - r2.loco[i + N * c], rows[nr++] = i;
        project(cov, rows, nr, v, out, 1);
        for (int64_t i = 0; i < nr; i++) full[rows[i]] = out[i];
        const double ref = relate_ref(full, N, NP, pi, pj, pk), got = r2.relate[c];
        worst_c = fmax(worst_c, fabs(got - ref) / ref);
        same &= r0.relate[c] == 1 && r0.relate[c + NCHR] == 1;
        for (int t = 0; t < 2; t++)
            cmin = fmin(cmin, r2.relate[c + NCHR * t]), cmax = fmax(cmax, r2.relate[c + NCHR * t]);
    }
    ok(!st && same && beta && worst_c < 1e-12 && worst_t < 1e-12 && cmin != 1 && cmax != 1,
       "relatives' pairs: none given, every bit as without (%d); %d pairs at K 0.05-0.09: c "
       "%.4f to %.4f over phenotypes x chromosomes, the quantitative one's within %.2g of the "
       "naive 1 + 2 sum K r r / r'r of its residual, CHISQ / c and SE x sqrt(c) to %.2g, BETA "
       "the same bits (%d) %s", same, NP, cmin, cmax, worst_c, worst_t, beta, err.msg);
    tg_assoc_result_free(&r0);
    tg_assoc_result_free(&r1);
    tg_assoc_result_free(&r2);
    pj[3] = pi[3];
    st = tg_assoc(bed, 2, yb, N, &o, &r0, &err);
    int refused = st == TG_ERR_ARG && strstr(err.msg, "pair 4 (samples 7 and 7");
    tg_assoc_result_free(&r0);
    pj[3] = N, pk[4] = 1.6;
    st = tg_assoc(bed, 2, yb, N, &o, &r0, &err);
    refused &= st == TG_ERR_ARG && strstr(err.msg, "pair 4 (samples 7 and 174") != NULL;
    tg_assoc_result_free(&r0);
    pj[3] = 9;
    st = tg_assoc(bed, 2, yb, N, &o, &r0, &err);
    refused &= st == TG_ERR_ARG && strstr(err.msg, "pair 5 (") && strstr(err.msg, "1.6");
    tg_assoc_result_free(&r0);
    ok(refused, "a pair of one sample, a sample out of range and a relatedness 1.6 refused: %s",
       err.msg);
}

/* λ_GC of the SNPs of @p res from @p j0 on (CHISQ's median / the χ²₁ median). */
static double lambda_gc(const tg_assoc_result *res, int64_t j0) {
    const int64_t nv = res->m - j0;
    double *v = malloc(sizeof(double) * (size_t)nv);
    memcpy(v, res->chisq + j0, sizeof(double) * (size_t)nv);
    qsort(v, (size_t)nv, sizeof *v, cmp);
    const double gc = (nv % 2 ? v[nv / 2] : (v[nv / 2 - 1] + v[nv / 2]) / 2) / 0.45493642311957283;
    free(v);
    return gc;
}

/* The LOCO offset of a refit: step 1 on the @p mc causal SNPs' chromosomes alone (the SNPs of
 * @p geno before mc, chromosomes 1 and 2, and one monomorphic SNP of chromosome 3, whose LOCO
 * prediction is then the whole fit), and the score tests of the null SNPs mc..ms on its
 * residual r = y − LOCO − mean, computed here: λ_GC into gc[0], c of the pairs into *c. */
static tg_status refit_loco(const int8_t *geno, const double *y, int64_t ns, int64_t mc,
                            int64_t ms, int64_t np, const int64_t *pi, const int64_t *pj,
                            const double *pk, double *gc, double *c, tg_error *err) {
    int8_t *g2 = calloc((size_t)(ns * (mc + 1)), 1);
    double *r = malloc(sizeof(double) * (size_t)ns), *ch = malloc(sizeof(double) * (size_t)ms),
           mean = 0, rr = 0;
    memcpy(g2, geno, (size_t)(ns * mc));
    char prefix[] = "/tmp/tg-test-assoc-refit-XXXXXX";
    tg_bed bed;
    tg_assoc_result res = {0};
    tg_status st = write_bed_tmp(prefix, g2, ns, mc + 1, err);
    if (!st) st = tg_bed_open(prefix, &bed, err);
    for (int64_t j = 0; !st && j <= mc; j++) bed.snps[j].chrom[0] = (char)('1' + 2 * j / mc);
    tg_assoc_opts o = tg_assoc_defaults();
    if (!st && !(st = tg_assoc(&bed, 1, y, ns, &o, &res, err))) {
        for (int64_t i = 0; i < ns; i++) mean += (y[i] - res.loco[i + 2 * ns]) / (double)ns;
        for (int64_t i = 0; i < ns; i++) r[i] = y[i] - res.loco[i + 2 * ns] - mean;
        for (int64_t i = 0; i < ns; i++) rr += r[i] * r[i];
        for (int64_t j = mc; j < ms; j++) {
            double gm = 0, u = 0, gg = 0;
            for (int64_t i = 0; i < ns; i++) gm += geno[i + j * ns] / (double)ns;
            for (int64_t i = 0; i < ns; i++) {
                u += (geno[i + j * ns] - gm) * r[i];
                gg += (geno[i + j * ns] - gm) * (geno[i + j * ns] - gm);
            }
            ch[j - mc] = u * u / (rr / (double)(ns - 1) * gg);
        }
        qsort(ch, (size_t)(ms - mc), sizeof *ch, cmp);
        const int64_t h = (ms - mc) / 2;
        *gc = ((ms - mc) % 2 ? ch[h] : (ch[h - 1] + ch[h]) / 2) / 0.45493642311957283;
        *c = relate_ref(r, ns, np, pi, pj, pk);
    }
    tg_assoc_result_free(&res);
    if (!st) tg_bed_close(&bed);
    remove_bed(prefix);
    free(g2);
    free(r);
    free(ch);
    return st;
}

/* Related samples: 500 sibships of 6 (the parents not genotyped), unlinked SNPs passed on by
 * Mendel's rules, 2000 causal SNPs on chromosomes 1 and 2 (h² 0.8, effects N(0, 1)), 1000
 * null SNPs on chromosome 3. A null SNP's genotypes are correlated among sibs (1/2), and so
 * is the polygenic part of y (h²/2): the linear test's variance is too small and λ_GC of the
 * null SNPs about 1 + 5·(1/2)·(0.8/2) = 2 without step 1 (plink2 --glm's tests,
 * tests/assoc_cli.sh). The LOCO offset for chromosome 3 predicts the polygenic part from
 * chromosomes 1 and 2 (the sibs in the other folds teach it the family's share) and removes
 * most of the excess, not all: the part of the family's share that the sibs do not predict
 * stays in the residuals (nine draws: 1.82 → 1.12, 1.91 → 1.14, 1.94 → 1.15, 1.83 → 1.13,
 * 2.34 → 1.31, 2.22 → 1.28, 1.98 → 1.30, 2.30 → 1.30, 2.04 → 1.38, 63% to 85% of the excess
 * removed; the test's own seed 1.90 → 1.16; DESIGN-NOTES, "Association tests"). The sibs'
 * pairs (K 0.5) correct the tests without step 1 by c ≈ 1 + 5·½·0.4 = 2 (six seeds: λ_GC
 * 0.94 to 1.14); with the LOCO offset the sibs' residuals are hardly correlated (c within
 * 0.05 of 1) and λ_GC stays where it was: its excess there is not what c measures. It comes
 * from LOCO without a refit: a refit of step 1 without chromosome 3 (refit_loco) leaves the
 * sibs' residuals negatively correlated (c about 0.7, λ_GC about 0.7), and c brings λ_GC to 1
 * (six seeds: 0.91 to 1.04). */
static void check_related(tg_rng *r) {
    enum { FAM = 500, SIBS = 6, NS = FAM * SIBS, MC = 2000, MS = 3000 };
    int8_t *geno = malloc((size_t)NS * MS);
    double *y = calloc(NS, sizeof(double)), gc[4] = {NAN, NAN, NAN, NAN}, vg = 0, mg = 0;
    for (int64_t j = 0; j < MS; j++) {
        const double p = 0.1 + 0.4 * tg_rng_uniform(r), b = j < MC ? tg_rng_normal(r) : 0;
        for (int64_t f = 0; f < FAM; f++) {
            int par[4]; /* the parents' alleles */
            for (int a = 0; a < 4; a++) par[a] = tg_rng_uniform(r) < p;
            for (int64_t k = 0; k < SIBS; k++) {
                const int64_t i = f * SIBS + k;
                geno[i + j * NS] = (int8_t)(par[tg_rng_uniform(r) < 0.5] +
                                            par[2 + (tg_rng_uniform(r) < 0.5)]);
                y[i] += b * (geno[i + j * NS] - 2 * p) / sqrt(2 * p * (1 - p));
            }
        }
    }
    for (int64_t i = 0; i < NS; i++) mg += y[i] / NS;
    for (int64_t i = 0; i < NS; i++) vg += (y[i] - mg) * (y[i] - mg) / NS;
    for (int64_t i = 0; i < NS; i++)
        y[i] = (y[i] - mg) * sqrt(0.8 / vg) + sqrt(0.2) * tg_rng_normal(r);
    char prefix[] = "/tmp/tg-test-assoc-fam-XXXXXX";
    tg_error err = {0};
    tg_bed bed;
    tg_status st = write_bed_tmp(prefix, geno, NS, MS, &err);
    if (!st) st = tg_bed_open(prefix, &bed, &err);
    for (int64_t j = 0; !st && j < MS; j++) bed.snps[j].chrom[0] = (char)('1' + j / 1000);
    /* the sibs' pairs, K 0.5 (full sibs: kinship 1/4) */
    const int64_t np = FAM * SIBS * (SIBS - 1) / 2;
    int64_t *pi = malloc(sizeof(int64_t) * np), *pj = malloc(sizeof(int64_t) * np), p = 0;
    double *pk = malloc(sizeof(double) * np), *r3 = malloc(sizeof(double) * NS), c3[2] = {0},
           worst = 0;
    for (int64_t f = 0; f < FAM; f++)
        for (int64_t a = 0; a < SIBS; a++)
            for (int64_t b = a + 1; b < SIBS; b++, p++)
                pi[p] = f * SIBS + a, pj[p] = f * SIBS + b, pk[p] = 0.5;
    for (int loco = 0; loco < 2 && !st; loco++)
        for (int kin = 0; kin < 2 && !st; kin++) {
            tg_assoc_opts o = tg_assoc_defaults();
            o.nh2 = loco ? o.nh2 : 0;
            o.npairs = kin ? np : 0, o.pair_i = pi, o.pair_j = pj, o.pair_k = pk;
            tg_assoc_result res;
            if (!(st = tg_assoc(&bed, 1, y, NS, &o, &res, &err)))
                gc[loco + 2 * kin] = lambda_gc(&res, MC);
            if (!st && kin) { /* chromosome 3's residual y − LOCO − its mean, and its c */
                double mean = 0;
                for (int64_t i = 0; i < NS; i++) mean += (y[i] - res.loco[i + 2 * NS]) / NS;
                for (int64_t i = 0; i < NS; i++) r3[i] = y[i] - res.loco[i + 2 * NS] - mean;
                c3[loco] = relate_ref(r3, NS, np, pi, pj, pk);
                worst = fmax(worst, fabs(res.relate[2] - c3[loco]) / c3[loco]);
            }
            tg_assoc_result_free(&res);
        }
    ok(!st && gc[0] > 1.4 && gc[1] < 1 + 0.5 * (gc[0] - 1) && gc[1] > 0.9,
       "500 sibships of 6, h2 0.8 on chromosomes 1-2: the null SNPs' lambda_GC %.3f without "
       "step 1, %.3f with the LOCO offset (at least half the excess removed) %s", gc[0], gc[1],
       err.msg);
    /* with the LOCO offset the sibs' residuals are hardly correlated (c about 1): what
     * inflates those tests is not what c measures (DESIGN-NOTES), so c must leave them be */
    ok(!st && fabs(gc[2] - 1) <= 0.1 && gc[3] > 0.9 && gc[3] <= 1.05 * gc[1] &&
           fabs(c3[1] - 1) < 0.1 && worst < 1e-12,
       "the sibs given as pairs (K 0.5): lambda_GC %.3f without step 1 (c %.3f, about 1 + "
       "5 x 0.5 x 0.4 = 2), within 1 +- 0.1; %.3f with the LOCO offset (c %.3f, within 0.1 of "
       "1: not the cure there); chromosome 3's c within %.2g of the naive one %s", gc[2],
       c3[0], gc[3], c3[1], worst, err.msg);
    double gr = NAN, cr = NAN;
    if (!st) st = refit_loco(geno, y, NS, MC, MS, np, pi, pj, pk, &gr, &cr, &err);
    ok(!st && cr < 0.9 && fabs(gr / cr - 1) <= 0.1,
       "step 1 refit without chromosome 3: the sibs' residuals negatively correlated (c %.3f), "
       "lambda_GC %.3f, %.3f with c, within 1 +- 0.1 %s", cr, gr, gr / cr, err.msg);
    /* the same through tg_assoc_opts.loco_refit: step 1 solved again without each chromosome,
     * the pairs' c on its residuals */
    double gl[2] = {NAN, NAN}, cl = NAN;
    for (int kin = 0; kin < 2 && !st; kin++) {
        tg_assoc_opts o = tg_assoc_defaults();
        o.loco_refit = 1;
        o.npairs = kin ? np : 0, o.pair_i = pi, o.pair_j = pj, o.pair_k = pk;
        tg_assoc_result res;
        if (!(st = tg_assoc(&bed, 1, y, NS, &o, &res, &err))) {
            gl[kin] = lambda_gc(&res, MC);
            cl = res.relate[2];
        }
        tg_assoc_result_free(&res);
    }
    ok(!st && cl < 0.9 && gl[0] < 0.9 && fabs(gl[1] - 1) <= 0.1,
       "loco_refit: lambda_GC %.3f (the sibs' residuals negatively correlated, c %.3f), %.3f "
       "with the pairs, within 1 +- 0.1 %s", gl[0], cl, gl[1], err.msg);
    free(pi);
    free(pj);
    free(pk);
    free(r3);
    if (!st) tg_bed_close(&bed);
    remove_bed(prefix);
    free(geno);
    free(y);
}

int main(void) {
    tap_plan(2 * 5 + 1 + 3 + 2 + 1 + 2 * 2 + 5);
    tg_rng r;
    const uint64_t seed = tap_seed();
    tg_rng_seed(&r, seed);
    static int8_t geno[N * M];
    static double y[N * K], cov[N];
    make_geno(&r, N, M, 0.05, 0.5, 0.04, geno);
    for (int64_t i = 0; i < N; i++) geno[i + 7 * N] = i % 11 ? 1 : TG_GENO_MISSING; /* mono */
    for (int64_t i = 0; i < N; i++) {
        cov[i] = i == 5 ? NAN : tg_rng_normal(&r);
        for (int t = 0; t < K; t++) { /* a signal at SNPs 3 and 40, and the covariate */
            const int8_t a = geno[i + 3 * N], b = geno[i + 40 * N];
            y[i + t * N] = tg_rng_normal(&r) + 0.5 * (a > 0 ? a : 0) - 0.3 * t * (b > 0 ? b : 0) +
                           (isnan(cov[i]) ? 0 : cov[i]);
        }
        if (i % 13 == 2) y[i + N] = NAN;
    }
    char prefix[] = "/tmp/tg-test-assoc-XXXXXX";
    tg_error err = {0};
    tg_bed bed;
    if (write_bed_tmp(prefix, geno, N, M, &err) || tg_bed_open(prefix, &bed, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    for (int64_t j = 0; j < M; j++) bed.snps[j].chrom[0] = (char)('1' + chrom(j));
    const char *req = getenv("TG_REQUIRE_GPU");
    tg_assoc_result res[2][2] = {{{0}}};
    for (int pass = 0; pass < 2; pass++) {
        tg_runtime_opts ro = tg_runtime_defaults();
        const char *where = pass ? "all workers" : "CPU workers";
        if (!pass) ro.ngpu = 0;
        if (tg_runtime_start(&ro, &err)) {
            printf("Bail out! %s\n", err.msg);
            return 1;
        }
        if (pass && !tg_runtime_ngpu()) {
            if (req && !strcmp(req, "1")) ok(0, "TG_REQUIRE_GPU=1 but no CUDA worker");
            diag("no CUDA worker: the second pass runs on CPU workers again");
        }
        check(&bed, geno, y, cov, 2, where, &res[pass][0]);
        check(&bed, geno, y, cov, 0, where, &res[pass][1]);
        if (!pass) check_errors(&bed, y, cov);
        if (!pass) check_pairs(&bed, y, cov);
        tg_rng bin;
        tg_rng_seed(&bin, seed + 1);
        check_binary(&bed, geno, y, cov, &bin, !pass);
        /* a seed of its own: the excess removed varies with the draw (63% to 85% over nine
         * seeds), so the check is fixed on one rather than failing on a rare draw */
        tg_rng fam;
        tg_rng_seed(&fam, 1);
        if (!pass) check_related(&fam);
        tg_runtime_stop();
    }
    const double d = fmax(differ(&res[0][0], &res[1][0]), differ(&res[0][1], &res[1][1]));
    ok(d <= 1e-12, "the CPU workers' and every worker's results agree (rel %.2g)", d);
    for (int pass = 0; pass < 2; pass++)
        for (int q = 0; q < 2; q++) tg_assoc_result_free(&res[pass][q]);
    tg_bed_close(&bed);
    remove_bed(prefix);
    return tap_done();
}
