/* Association tests in REGENIE's two steps (tg_assoc), on the genotype products alone.
 *
 * Step 1, the polygenic prediction: a ridge (SNP-BLUP) of each phenotype on every scaled SNP,
 * the fixed effects projected out (tg_ridge_cg), λ = m(1 − h²)/h² (m the polymorphic SNPs: with
 * unit-variance SNPs and β_j ~ N(0, h²σ²/m), e ~ N(0, (1 − h²)σ²), λ = σ_e²/σ_β² whatever σ²).
 * K folds (sample i in fold i mod K): each (phenotype, h², fold) is a column of ONE CG solve,
 * with its own λ and the fold's samples missing. The held-out predictions (the fold columns'
 * fixed effects and β, tg_fixed_fit) pick per phenotype the h² of least squared error, and
 * they are the predictions used: sample i's comes from the model of its fold, which never saw
 * it. An in-sample fit would overfit y (at m ≫ n it nearly interpolates it), shrink the
 * residual variance and inflate every test; REGENIE's level 1 uses out-of-fold predictions
 * for the same reason. The LOCO prediction for chromosome c is Z(β_f − β_{f,c}): c's own SNPs
 * dropped from fold f's fit without refitting, as REGENIE's level 1 drops the chromosome's
 * predictors.
 *
 * Step 2, per phenotype t: the residuals r_c = M_t(y_t − LOCO_c) of every chromosome c (M_t
 * the projection off [1, covariates] on the phenotype's samples O_t, 0 elsewhere) are the
 * columns of one product Zᵀ·[r_1 … r_C, Q_t], Q_t's columns past the intercept giving the
 * covariates' part of G. SNP j of chromosome c reads U = Z_jᵀr_c (= g̃ᵀr_c, since M_t r_c = r_c)
 * and G = diag(ZᵀM_tZ)_j = Σ_{O_t}Z_j² − (Σ_{O_t}Z_j)²/n_t − Σ_{l≥1}(Q_lᵀZ_j)², the first terms
 * from the genotype counts (tg_ridge_jacobi_bed). Z is scaled (s_j = √(2p_j(1 − p_j)), p_j over
 * the fileset, which also imputes the missing calls): U and G in allele units are s_jU, s_j²G.
 *
 * A case/control phenotype (tg_assoc_opts.binary, y in {0, 1}) keeps step 1 (a linear ridge on
 * the 0/1 values, as REGENIE's level 0), and its step 2 is a logistic score test: per
 * chromosome c the null model logit μ_c = o_c + Q_ta (IRLS), the offset o_c = LOCO_c/(ȳ(1 − ȳ))
 * (the linear prediction moved to the logit scale by logit's slope at the prevalence ȳ), then
 * U = Z_jᵀ(y − μ_c) and V = Σ_i w_i Z_ij² − bᵀ(Q_tᵀWQ_t)⁻¹b, b = Q_tᵀWZ_j, w = μ_c(1 − μ_c):
 * one product Zᵀ·[y − μ_c, WQ_t per chromosome] and one weighted pass over the genotypes.
 *
 * Known relatives (tg_assoc_opts' pairs, a sparse K = 2 × kinship): a null SNP's genotypes are
 * independent of the residual r of its chromosome, so given r, Var(U) = rᵀCov(g)r with
 * Cov(g_i, g_i') ∝ K_ii'. The tests above take K = I; the pairs add their share as one factor
 * per phenotype and chromosome, c = 1 + 2Σ_pairs K r_i r_i' / rᵀr, on the variance (O(pairs)
 * each, nothing on the products). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/cg.h"
#include "algo/fixed.h"
#include "base/chi2.h"
#include "base/parallel.h"
#include "geno/pass.h"
#include "io/out.h"
#include "runtime/runtime.h"
#include "tilegwas.h"

/** The χ²₁ median, qchisq(0.5, 1): λ_GC's denominator. */
#define CHI2_1_MEDIAN 0.45493642311957283

static const double default_h2[] = {0.01, 0.1, 0.25, 0.5, 0.75, 0.9};

tg_assoc_opts tg_assoc_defaults(void) {
    return (tg_assoc_opts){.h2 = default_h2, .nh2 = 6, .folds = 5, .tol = 1e-6,
                           .max_iter = 1000};
}

void tg_assoc_result_free(tg_assoc_result *r) {
    free(r->chroms);
    free(r->chrom_of);
    free(r->beta);
    free(r->se);
    free(r->chisq);
    free(r->log10p);
    free(r->stats);
    free(r->h2);
    free(r->lambda);
    free(r->cv_mse);
    free(r->lambda_gc);
    free(r->sigma2);
    free(r->loco);
    free(r->nobs);
    free(r->nfixed);
    free(r->ncases);
    free(r->cg.pheno);
    free(r->relate);
    memset(r, 0, sizeof *r);
}

/* What the steps share. */
typedef struct {
    const tg_bed *bed;
    const tg_assoc_opts *o;
    tg_assoc_result *r;
    tg_geno *g;      /* scaled Z */
    int64_t n, m, k;
    double *ym;      /* n × k: y, NAN where the value or a covariate is missing */
    tg_fixed f;      /* the k phenotypes' bases */
    int K;           /* folds of step 1 (1 without it) */
    double *beta;    /* m × k·K·R: step 1's β of phenotype t, fold f at column t + k·f, and
                      * with loco_refit (R = C, else 1) of the fit without chromosome c at
                      * column t + k·(f + K·c) */
    double *jac;     /* m × k: diag(Z̃ᵀZ̃) over each phenotype's samples (tg_ridge_jacobi_bed) */
    int64_t noff;    /* distinct LOCO offsets: one per chromosome, or 1 without step 1 (all 0),
                      * when one residual serves every chromosome */
} job;

/* The residual column (of noff) that chromosome c's tests read. */
static inline int64_t off_col(const job *J, int64_t c) { return J->noff == 1 ? 0 : c; }

/* Whether phenotype t is case/control. */
#define BINARY(J, t) ((J)->o->binary && (J)->o->binary[t])

/* Phenotype t's name in messages: tg_assoc_opts.names[t], or its number. */
#define NAME(J, t) pheno_name((J)->o, t, (char[24]){0})
static const char *pheno_name(const tg_assoc_opts *o, int64_t t, char *buf) {
    if (o->names) return o->names[t];
    snprintf(buf, 24, "%lld", (long long)t + 1);
    return buf;
}

/* r->chroms in order of first appearance and r->chrom_of (a sorted .bim matches the previous
 * SNP's chromosome at once). */
static tg_status group_chroms(const tg_bed *bed, tg_assoc_result *r, tg_error *err) {
    const int64_t m = bed->n_snps;
    if (!(r->chrom_of = tg_malloc((size_t)m * sizeof *r->chrom_of, err)) ||
        !(r->chroms = tg_malloc((size_t)m * sizeof *r->chroms, err)))
        return TG_ERR_NOMEM;
    int c = 0;
    for (int64_t j = 0; j < m; j++) {
        const char *name = bed->snps[j].chrom;
        if (!r->nchrom || strcmp(r->chroms[c], name))
            for (c = 0; c < r->nchrom && strcmp(r->chroms[c], name); c++) continue;
        if (c == r->nchrom) r->chroms[r->nchrom++] = name;
        r->chrom_of[j] = c;
    }
    return TG_OK;
}

static tg_status check_opts(const tg_assoc_opts *o, tg_error *err) {
    for (int h = 0; h < o->nh2; h++)
        if (!(o->h2[h] > 0 && o->h2[h] < 1))
            return tg_error_set(err, TG_ERR_ARG, "assoc: h2 %g: every heritability of the grid "
                                "must be in (0, 1)", o->h2[h]);
    if (o->nh2 < 0 || (o->nh2 > 0 && o->folds < 2))
        return tg_error_set(err, TG_ERR_ARG, "assoc: %d h2 value(s), %d fold(s): "
                            "cross-validation needs at least 2 folds", o->nh2, o->folds);
    if (o->ncovar < 0 || (o->ncovar && !o->covar))
        return tg_error_set(err, TG_ERR_ARG, "assoc: %d covariate(s) without their matrix",
                            o->ncovar);
    if (o->npairs < 0 || (o->npairs && (!o->pair_i || !o->pair_j || !o->pair_k)))
        return tg_error_set(err, TG_ERR_ARG, "assoc: %lld relatives' pair(s) without their "
                            "arrays", (long long)o->npairs);
    return TG_OK;
}

/* The relatives' pairs: two distinct samples of the n, a relatedness in (0, 1.5] (2 × a
 * kinship; above 1.5 not even inbred twins). */
static tg_status check_pairs(const tg_assoc_opts *o, int64_t n, tg_error *err) {
    for (int64_t p = 0; p < o->npairs; p++) {
        const int64_t i = o->pair_i[p], j = o->pair_j[p];
        const double k = o->pair_k[p];
        if (i < 0 || i >= n || j < 0 || j >= n || i == j || !(k > 0 && k <= 1.5))
            return tg_error_set(err, TG_ERR_ARG, "assoc: relatives' pair %lld (samples %lld and "
                                "%lld, relatedness %g): expected two distinct samples of 1 to "
                                "%lld and a relatedness in (0, 1.5]", (long long)p + 1,
                                (long long)i + 1, (long long)j + 1, k, (long long)n);
    }
    return TG_OK;
}

/* ym, the bases, and the checks a phenotype must pass: enough samples for its fixed effects
 * plus the SNP and a residual degree of freedom, and some variance left once they are
 * projected out. */
static tg_status prepare(job *J, const double *y, int64_t ldy, tg_error *err) {
    const tg_assoc_opts *o = J->o;
    const int64_t n = J->n, k = J->k;
    if (!(J->ym = tg_malloc((size_t)(n * k) * sizeof *J->ym, err))) return TG_ERR_NOMEM;
    for (int64_t t = 0; t < k; t++)
        for (int64_t i = 0; i < n; i++) {
            int all = 1;
            for (int j = 0; j < o->ncovar; j++) all &= isfinite(o->covar[i + j * o->ldc]) != 0;
            const double v = y[i + t * ldy];
            J->ym[i + t * n] = all ? v : NAN;
            if (all && isinf(v))
                return tg_error_set(err, TG_ERR_ARG, "assoc: phenotype %s, sample %lld: "
                                    "value %g is not finite", NAME(J, t), (long long)i + 1, v);
            if (all && BINARY(J, t) && !isnan(v) && v != 0 && v != 1)
                return tg_error_set(err, TG_ERR_ARG, "assoc: phenotype %s, sample %lld: "
                                    "value %g; a case/control phenotype takes 0 (control) or "
                                    "1 (case)", NAME(J, t), (long long)i + 1, v);
        }
    tg_status st = tg_fixed_make(n, o->covar, o->ldc, o->ncovar, k, J->ym, n, &J->f, err);
    if (st) return st;
    for (int64_t t = 0; t < k; t++) {
        const int64_t nt = J->f.nobs[t];
        const int q = J->f.r[t];
        const double *Q = tg_fixed_q(&J->f, t), *yt = J->ym + t * n;
        J->r->nobs[t] = nt;
        J->r->nfixed[t] = q;
        J->r->ncases[t] = -1;
        if (BINARY(J, t))
            for (int64_t i = J->r->ncases[t] = 0; i < n; i++) J->r->ncases[t] += yt[i] == 1;
        if (nt < q + 2)
            return tg_error_set(err, TG_ERR_ARG, "assoc: phenotype %s has %lld sample(s) with "
                                "its value and every covariate, %d fixed effect(s): at least %d "
                                "are needed (the fixed effects, the SNP and one degree of "
                                "freedom)", NAME(J, t), (long long)nt, q, q + 2);
        /* yᵀM_ty = yᵀy − Σ_l (Q_lᵀy)², about the mean first for its rounding */
        double mean = 0, yy = 0, ss = 0;
        for (int64_t i = 0; i < n; i++)
            if (!isnan(yt[i])) mean += yt[i];
        mean /= (double)nt;
        for (int64_t i = 0; i < n; i++)
            if (!isnan(yt[i])) yy += (yt[i] - mean) * (yt[i] - mean);
        for (int l = 1; l < q; l++) {
            double d = 0;
            for (int64_t i = 0; i < n; i++)
                if (!isnan(yt[i])) d += Q[i + l * n] * (yt[i] - mean);
            ss += d * d;
        }
        if (!(yy - ss > 1e-12 * yy))
            return tg_error_set(err, TG_ERR_ARG, "assoc: phenotype %s has no variance on its "
                                "%lld sample(s)%s", NAME(J, t), (long long)nt,
                                q > 1 ? " once the covariates are projected out" : "");
    }
    return TG_OK;
}

/* Step 1's columns: phenotype t, fold f, h² index h. */
static int64_t column(int64_t k, int K, int64_t t, int f, int h) {
    return t + k * (f + (int64_t)K * h);
}

/* The held-out squared errors of every h² (the columns of yc, β B), into r->cv_mse; returns in
 * best[t] the h² index of least error. */
static tg_status cross_validate(job *J, const double *yc, int64_t cols, const double *B,
                                int *best, tg_error *err) {
    const tg_assoc_opts *o = J->o;
    const int64_t n = J->n, m = J->m, k = J->k;
    const int nh = o->nh2, K = J->K, p = o->ncovar + 1;
    tg_fixed fc = {0};
    double *alpha = tg_malloc((size_t)(p * cols) * sizeof *alpha, err),
           *pred = tg_malloc((size_t)(n * cols) * sizeof *pred, err);
    tg_status st = !alpha || !pred ? TG_ERR_NOMEM : TG_OK;
    if (!st) st = tg_fixed_make(n, o->covar, o->ldc, o->ncovar, cols, yc, n, &fc, err);
    if (!st) st = tg_fixed_fit(J->g, &fc, o->covar, o->ldc, yc, n, B, m, alpha, p, pred, n, err);
    for (int64_t t = 0; t < k && !st; t++) {
        const double *yt = J->ym + t * n;
        best[t] = 0;
        for (int h = 0; h < nh; h++) {
            double e = 0;
            for (int64_t i = 0; i < n; i++)
                if (!isnan(yt[i])) {
                    const double d = yt[i] - pred[i + n * column(k, K, t, (int)(i % K), h)];
                    e += d * d;
                }
            J->r->cv_mse[h + nh * t] = e / (double)J->r->nobs[t];
            if (e / (double)J->r->nobs[t] < J->r->cv_mse[best[t] + nh * t]) best[t] = h;
        }
    }
    tg_fixed_free(&fc);
    free(alpha);
    free(pred);
    return st;
}

/* The folds: sample i is in fold i mod K (interleaved, so that a file sorted by family or
 * origin spreads over the folds); each must leave held-out and training samples of every
 * phenotype. */
static tg_status check_folds(const job *J, tg_error *err) {
    const int K = J->K;
    for (int64_t t = 0; t < J->k; t++)
        for (int f = 0; f < K; f++) {
            int64_t held = 0;
            for (int64_t i = f; i < J->n; i += K) held += !isnan(J->ym[i + t * J->n]);
            if (!held || J->r->nobs[t] - held < J->r->nfixed[t] + 1)
                return tg_error_set(err, TG_ERR_ARG, "assoc: phenotype %s: fold %d of %d holds "
                                    "%lld of its %lld samples; every fold needs some, and the "
                                    "others more than the fixed effects (fewer folds?)",
                                    NAME(J, t), f + 1, K, (long long)held,
                                    (long long)J->r->nobs[t]);
        }
    return TG_OK;
}

/* TG_ERR_NUMERIC naming the first column of the solve that did not converge. */
static tg_status not_converged(const job *J, int64_t cols, tg_error *err) {
    const int64_t k = J->k;
    for (int64_t c = 0; c < cols; c++)
        if (!J->r->cg.pheno[c].converged)
            return tg_error_set(err, TG_ERR_NUMERIC, "assoc: step 1 did not converge for "
                                "phenotype %s at h2 %g (fold %d): relative residual %.3g "
                                "after %d iterations (--max-iter, --tol)", NAME(J, c % k),
                                J->o->h2[c / k / J->K], (int)(c / k % J->K) + 1,
                                J->r->cg.pheno[c].relres, J->o->max_iter);
    return TG_ERR_NUMERIC;
}

/* Step 1's CG options: the columns' λ and Jacobi diagonals @p lam and @p jac (leading
 * dimension m), the fixed effects and the limits of @p J's options. */
static tg_cg_opts step1_opts(const job *J, const double *lam, const double *jac) {
    const tg_assoc_opts *o = J->o;
    tg_cg_opts co = tg_cg_defaults();
    co.lambdas = lam;
    co.tol = o->tol;
    co.max_iter = o->max_iter;
    co.progress = o->progress;
    co.ctx = o->ctx;
    co.jacobi = jac;
    co.ldj = J->m;
    co.covar = o->covar;
    co.ldc = o->ldc;
    co.ncovar = o->ncovar;
    return co;
}

/* Step 1 again without each chromosome c, at each phenotype's chosen h² (column t + k·(f +
 * K·c)), into J->beta; @p yc, @p lam and @p jac are step 1's columns. */
static tg_status refit(job *J, const double *yc, const double *lam, const double *jac,
                       const int *best, tg_error *err) {
    const tg_assoc_opts *o = J->o;
    const int64_t n = J->n, m = J->m, k = J->k, C = J->r->nchrom, cols = k * J->K * C;
    const int K = J->K;
    double *y2 = tg_malloc((size_t)(n * cols) * sizeof *y2, err),
           *lam2 = tg_malloc((size_t)cols * sizeof *lam2, err),
           *jac2 = tg_malloc((size_t)(m * cols) * sizeof *jac2, err);
    int *drop = tg_malloc((size_t)cols * sizeof *drop, err);
    tg_cg_report rep = {.pheno = tg_calloc((size_t)cols, sizeof(tg_cg_pheno), err)};
    tg_status st = !y2 || !lam2 || !jac2 || !drop || !rep.pheno ? TG_ERR_NOMEM : TG_OK;
    for (int64_t c = 0; c < C && !st; c++)
        for (int f = 0; f < K; f++)
            for (int64_t t = 0; t < k; t++) {
                const int64_t a = t + k * (f + K * c), from = column(k, K, t, f, best[t]);
                memcpy(y2 + a * n, yc + from * n, (size_t)n * sizeof *y2);
                memcpy(jac2 + a * m, jac + from * m, (size_t)m * sizeof *jac2);
                lam2[a] = lam[from];
                drop[a] = (int)c;
            }
    tg_cg_opts co = step1_opts(J, lam2, jac2);
    co.drop = drop;
    co.chrom_of = J->r->chrom_of;
    if (!st) st = tg_ridge_cg(J->g, cols, y2, n, &co, J->beta, m, &rep, err);
    for (int64_t a = 0; a < cols && st == TG_ERR_NUMERIC; a++)
        if (!rep.pheno[a].converged) {
            st = tg_error_set(err, TG_ERR_NUMERIC, "assoc: step 1 without chromosome %s did not "
                              "converge for phenotype %s (fold %d): relative residual %.3g "
                              "after %d iterations (--max-iter, --tol)",
                              J->r->chroms[a / k / K], NAME(J, a % k), (int)(a / k % K) + 1,
                              rep.pheno[a].relres, o->max_iter);
            break;
        }
    J->r->refit_columns = cols;
    J->r->cg.iterations += rep.iterations;
    J->r->cg.products += rep.products;
    J->r->cg.seconds += rep.seconds;
    J->r->cg.seconds_products += rep.seconds_products;
    free(y2);
    free(lam2);
    free(jac2);
    free(drop);
    free(rep.pheno);
    return st;
}

/* Step 1: per phenotype the h² of least held-out error, and the β of each of its folds
 * (J->beta, column t + k·f). */
static tg_status step1(job *J, tg_error *err) {
    const tg_assoc_opts *o = J->o;
    const int64_t n = J->n, m = J->m, k = J->k;
    const int nh = o->nh2, K = J->K;
    const int64_t cols = k * K * nh, meff = m - J->r->excluded;
    tg_status st = check_folds(J, err);
    if (st) return st;
    double *yc = tg_malloc((size_t)(n * cols) * sizeof *yc, err),
           *lam = tg_malloc((size_t)cols * sizeof *lam, err),
           *jac = tg_malloc((size_t)(m * cols) * sizeof *jac, err),
           *B = tg_malloc((size_t)(m * cols) * sizeof *B, err);
    int *best = tg_calloc((size_t)k, sizeof *best, err);
    J->r->cg = (tg_cg_report){.pheno = tg_calloc((size_t)cols, sizeof(tg_cg_pheno), err)};
    J->r->cg_columns = cols;
    if (!yc || !lam || !jac || !B || !best || !J->r->cg.pheno) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    /* the preconditioner of a fold's column: the phenotype's diagonal scaled to the training
     * samples' share (any positive diagonal is a preconditioner; this one is close), where
     * the exact one would take a pass over the genotypes per column, each lacking n/K
     * samples */
    for (int h = 0; h < nh; h++)
        for (int f = 0; f < K; f++)
            for (int64_t t = 0; t < k; t++) {
                const int64_t c = column(k, K, t, f, h);
                int64_t held = 0;
                lam[c] = (double)(meff > 0 ? meff : 1) * (1 - o->h2[h]) / o->h2[h];
                for (int64_t i = 0; i < n; i++) {
                    yc[i + c * n] = i % K == f ? NAN : J->ym[i + t * n];
                    held += i % K == f && !isnan(J->ym[i + t * n]);
                }
                const double share = 1 - (double)held / (double)J->r->nobs[t];
                for (int64_t j = 0; j < m; j++) jac[j + c * m] = share * J->jac[j + t * m];
            }
    tg_cg_opts co = step1_opts(J, lam, jac);
    if ((st = tg_ridge_cg(J->g, cols, yc, n, &co, B, m, &J->r->cg, err)) == TG_ERR_NUMERIC)
        st = not_converged(J, cols, err);
    if (st || (st = cross_validate(J, yc, cols, B, best, err))) goto done;
    for (int64_t t = 0; t < k; t++) {
        J->r->h2[t] = o->h2[best[t]];
        J->r->lambda[t] = lam[column(k, K, t, 0, best[t])];
        for (int f = 0; f < K; f++)
            memcpy(J->beta + (t + k * f) * m, B + m * column(k, K, t, f, best[t]),
                   (size_t)m * sizeof *B);
    }
    if (o->loco_refit && J->r->nchrom > 1) st = refit(J, yc, lam, jac, best, err);
done:
    free(yc);
    free(lam);
    free(jac);
    free(B);
    free(best);
    return st;
}

/* r->stats: A1_FREQ and N of every SNP over each phenotype's samples, one pass over the
 * genotypes per distinct sample set. */
static tg_status pheno_stats(const job *J, tg_error *err) {
    const int64_t n = J->n, m = J->m;
    int64_t *rows = tg_malloc((size_t)n * sizeof *rows, err);
    tg_geno_source *src = NULL;
    tg_status st = rows ? tg_geno_source_bed(J->bed, &src, err) : TG_ERR_NOMEM;
    for (int64_t t = 0; t < J->k && !st; t++) {
        int64_t same = -1, nt = 0;
        for (int64_t u = 0; u < t && same < 0; u++) {
            int64_t i = 0;
            while (i < n && isnan(J->ym[i + t * n]) == isnan(J->ym[i + u * n])) i++;
            if (i == n) same = u;
        }
        if (same >= 0) {
            memcpy(J->r->stats + t * m, J->r->stats + same * m, (size_t)m * sizeof *J->r->stats);
            continue;
        }
        for (int64_t i = 0; i < n; i++)
            if (!isnan(J->ym[i + t * n])) rows[nt++] = i;
        if (!(st = tg_geno_source_select(src, rows, nt, NULL, m, err)))
            st = tg_geno_source_stats(src, J->r->stats + t * m, err);
    }
    tg_geno_source_free(src);
    free(rows);
    return st;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* r->lambda_gc[t] from the tested SNPs' CHISQ (NAN when none). */
static tg_status genomic_control(tg_assoc_result *r, int64_t t, tg_error *err) {
    double *v = tg_malloc((size_t)r->m * sizeof *v + 1, err);
    if (!v) return TG_ERR_NOMEM;
    int64_t nv = 0;
    for (int64_t j = 0; j < r->m; j++)
        if (!isnan(r->chisq[j + t * r->m])) v[nv++] = r->chisq[j + t * r->m];
    qsort(v, (size_t)nv, sizeof *v, cmp_double);
    r->lambda_gc[t] = !nv ? NAN
                      : nv % 2 ? v[nv / 2] / CHI2_1_MEDIAN
                               : (v[nv / 2 - 1] + v[nv / 2]) / 2 / CHI2_1_MEDIAN;
    free(v);
    return TG_OK;
}

/* r->loco of phenotype t: sample i's LOCO_c comes from the model of its fold f,
 * zb[i + f·n] − w[i + (f + K·c)·n] (Zβ_f and Z_cβ_f,c), or with loco_refit w[i + (f + K·c)·n]
 * (the fit without c). */
static void loco_fill(const job *J, int64_t t, const double *zb, const double *w) {
    const int64_t n = J->n, C = J->r->nchrom, K = J->K;
    const int refit = J->o->loco_refit && C > 1;
    for (int64_t c = 0; c < C; c++)
        for (int64_t i = 0; i < n; i++) {
            const double wc = w[i + (i % K + K * c) * n];
            J->r->loco[i + n * (c + C * t)] = refit ? wc : zb[i + i % K * n] - wc;
        }
}

/* The residual columns of phenotype t: res[:, c] = M_t(y_t − LOCO_c) on O_t (0 elsewhere),
 * then Q_t's columns past the intercept; r->sigma2 of t. */
static void residuals(const job *J, int64_t t, double *res) {
    const int64_t n = J->n, C = J->r->nchrom, N = J->noff;
    const int q = J->f.r[t];
    const double *Q = tg_fixed_q(&J->f, t), *yt = J->ym + t * n;
    for (int64_t c = 0; c < N; c++) {
        const double *loco = J->r->loco + n * (c + C * t);
        double *v = res + c * n, h[q > 0 ? q : 1], ss = 0;
        for (int64_t i = 0; i < n; i++) v[i] = isnan(yt[i]) ? 0 : yt[i] - loco[i];
        for (int l = 0; l < q; l++) {
            h[l] = 0;
            for (int64_t i = 0; i < n; i++) h[l] += Q[i + l * n] * v[i];
        }
        for (int64_t i = 0; i < n; i++) {
            if (isnan(yt[i])) continue;
            for (int l = 0; l < q; l++) v[i] -= Q[i + l * n] * h[l];
            ss += v[i] * v[i];
        }
        J->r->sigma2[c + C * t] = ss / (double)(J->r->nobs[t] - q);
    }
    for (int64_t c = N; c < C; c++) J->r->sigma2[c + C * t] = J->r->sigma2[C * t];
    for (int l = 1; l < q; l++) memcpy(res + (N + l - 1) * n, Q + l * n, (size_t)n * sizeof *Q);
}

/* IRLS: Newton steps at most, and the Newton decrement gᵀH⁻¹g (twice the log-likelihood still
 * to gain) below which the last full step is taken: quadratic convergence then leaves ~1e-20. */
enum { IRLS_MAX_ITER = 50 };
#define IRLS_TOL 1e-10
/* |logit μ| beyond which a fit is taken as separated (μ within 2e-9 of 0 or 1): under
 * separation the log-likelihood creeps towards 0 and the decrement falls below IRLS_TOL only
 * once every separated sample has |logit μ| ≳ 23; a real fit hardly has odds of 5e8 to 1 */
#define IRLS_ETA_MAX 20.0

/* Σ_{O_t} y·η − log(1 + e^η) at η = o + Qa (into eta), the logistic log-likelihood. */
static double loglik(int64_t n, int q, const double *Q, const double *y, const double *o,
                     const double *a, double *eta) {
    double ll = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(y[i])) continue;
        double e = o[i];
        for (int l = 0; l < q; l++) e += Q[i + l * n] * a[l];
        eta[i] = e;
        ll += y[i] * e - (e > 0 ? e + log1p(exp(-e)) : log1p(exp(e)));
    }
    return ll;
}

/* The gradient g = Qᵀ(y − μ) and H = QᵀWQ (q × q, ld q) at eta; w = μ(1 − μ) and y − μ into
 * w and res (0 outside O_t). */
static void score_info(int64_t n, int q, const double *Q, const double *y, const double *eta,
                       double *w, double *res, double *g, double *H) {
    for (int64_t i = 0; i < n; i++) {
        const double mu = isnan(y[i]) ? 0 : 1 / (1 + exp(-eta[i]));
        w[i] = mu * (1 - mu);
        res[i] = isnan(y[i]) ? 0 : y[i] - mu;
    }
    for (int l = 0; l < q; l++) {
        g[l] = 0;
        for (int64_t i = 0; i < n; i++) g[l] += Q[i + l * n] * res[i];
        for (int k = 0; k <= l; k++) {
            double h = 0;
            for (int64_t i = 0; i < n; i++) h += Q[i + l * n] * w[i] * Q[i + k * n];
            H[l + k * q] = H[k + l * q] = h;
        }
    }
}

/* The null logistic model of case/control phenotype t for chromosome c: logit μ = o + Q_ta on
 * O_t, o the LOCO offset, by Newton's method (IRLS) with step halving. Into res (y − μ), w
 * (μ(1 − μ); both 0 outside O_t) and Sinv = (Q_tᵀWQ_t)⁻¹ (q × q). */
static tg_status logistic_null(const job *J, int64_t t, int64_t c, const double *o, double *res,
                               double *w, double *Sinv, tg_error *err) {
    const int64_t n = J->n;
    const int q = J->f.r[t];
    const double *Q = tg_fixed_q(&J->f, t), *y = J->ym + t * n;
    double a[q], step[q], g[q], H[q * q], *eta = tg_malloc((size_t)n * sizeof *eta, err);
    if (!eta) return TG_ERR_NOMEM;
    for (int l = 0; l < q; l++) a[l] = 0;
    double ll = loglik(n, q, Q, y, o, a, eta), dec = INFINITY;
    int it = 0, spd = 0;
    for (; it < IRLS_MAX_ITER; it++) {
        score_info(n, q, Q, y, eta, w, res, g, H);
        memcpy(step, g, sizeof g);
        if ((spd = tg_fixed_spd_solve(q, H, q, 1, step, q))) break;
        dec = 0;
        for (int l = 0; l < q; l++) dec += g[l] * step[l];
        double s = 1, b[q], nll = -INFINITY;
        for (int h = 0; h < 30 && !(nll >= ll); h++, s /= 2) {
            for (int l = 0; l < q; l++) b[l] = a[l] + s * step[l];
            nll = loglik(n, q, Q, y, o, b, eta);
            if (dec < IRLS_TOL) break; /* the last step, taken whole */
        }
        memcpy(a, b, sizeof a);
        ll = nll;
        if (dec < IRLS_TOL) break;
    }
    int64_t far = -1;
    if (!spd && it < IRLS_MAX_ITER) {
        loglik(n, q, Q, y, o, a, eta);
        score_info(n, q, Q, y, eta, w, res, g, H);
        for (int64_t i = 0; i < n && far < 0; i++)
            if (!isnan(y[i]) && fabs(eta[i]) > IRLS_ETA_MAX) far = i;
        for (int l = 0; l < q * q; l++) Sinv[l] = l % (q + 1) == 0;
        spd = tg_fixed_spd_solve(q, H, q, q, Sinv, q);
    }
    free(eta);
    char where[160]; /* the chromosome whose offset it had, when there are several */
    snprintf(where, sizeof where, "phenotype %s%s%s", NAME(J, t),
             J->noff > 1 ? ", chromosome " : "", J->noff > 1 ? J->r->chroms[c] : "");
    if (far >= 0)
        return tg_error_set(err, TG_ERR_NUMERIC, "assoc: %s: the null logistic model separates "
                            "cases from controls (sample %lld's fitted probability is within "
                            "2e-9 of 0 or 1): drop or merge the covariate that predicts them",
                            where, (long long)far + 1);
    if (spd)
        return tg_error_set(err, TG_ERR_NUMERIC, "assoc: %s: the null logistic model's "
                            "information matrix is singular (the fitted probabilities at 0 or "
                            "1: cases and controls separated?)",
                            where);
    if (it == IRLS_MAX_ITER)
        return tg_error_set(err, TG_ERR_NUMERIC, "assoc: %s: the null logistic model did not "
                            "converge in %d Newton steps (decrement %.3g): the covariates may "
                            "separate cases from controls",
                            where, IRLS_MAX_ITER, dec);
    return TG_OK;
}

/* The null models of case/control phenotype t, one per chromosome: res holds then per
 * chromosome c y − μ_c at column c and W_cQ_t at columns C + c·q + l; w (n × C) the weights,
 * Sinv (q × q × C) the inverse informations. The offset is LOCO_c/(ȳ(1 − ȳ)): step 1 predicts
 * P(case) on the linear scale, and logit(ȳ + δ) ≈ logit ȳ + δ/(ȳ(1 − ȳ)). */
static tg_status logistic_nulls(const job *J, int64_t t, double *res, double *w, double *Sinv,
                                tg_error *err) {
    const int64_t n = J->n, C = J->r->nchrom, N = J->noff;
    const int q = J->f.r[t];
    const double *Q = tg_fixed_q(&J->f, t),
                 ybar = (double)J->r->ncases[t] / (double)J->r->nobs[t];
    double *o = tg_malloc((size_t)n * sizeof *o, err);
    tg_status st = o ? TG_OK : TG_ERR_NOMEM;
    for (int64_t c = 0; c < N && !st; c++) {
        const double *loco = J->r->loco + n * (c + C * t);
        double *wc = w + c * n;
        for (int64_t i = 0; i < n; i++) o[i] = loco[i] / (ybar * (1 - ybar));
        st = logistic_null(J, t, c, o, res + c * n, wc, Sinv + c * q * q, err);
        for (int l = 0; l < q && !st; l++)
            for (int64_t i = 0; i < n; i++) res[i + (N + c * q + l) * n] = wc[i] * Q[i + l * n];
    }
    for (int64_t c = 0; c < C; c++) J->r->sigma2[c + C * t] = NAN;
    free(o);
    return st;
}

enum { WPASS_SNPS = 256 };

/* The weighted pass: d[j] = Σ_i w_{c(j), i} Z_ij² for every SNP j (c(j) its chromosome), by the
 * weights' sums over each genotype class (Z_ij takes one value per class, 0 when missing). */
struct wpass_job {
    const tg_geno_source *src;
    const double *freq, *w; /* w: n × noff */
    const int *chrom_of;    /* NULL: one weight column for every chromosome */
    int64_t n, m;
    double *d;
};

static void wpass_chunk(void *ctx, int64_t chunk, void *scratch) {
    struct wpass_job *jb = ctx;
    const int64_t n = jb->n, j0 = chunk * WPASS_SNPS;
    const int64_t nj = jb->m - j0 < WPASS_SNPS ? jb->m - j0 : WPASS_SNPS;
    int8_t *buf = scratch;
    tg_geno_source_read(jb->src, 0, n, j0, nj, buf, n);
    for (int64_t jj = 0; jj < nj; jj++) {
        const int64_t j = j0 + jj;
        const int8_t *x = buf + jj * n;
        const double *w = jb->w + (jb->chrom_of ? jb->chrom_of[j] * n : 0), p = jb->freq[j];
        double sum[4] = {0}; /* by genotype + 1: missing, 0, 1, 2 */
        for (int64_t i = 0; i < n; i++) sum[(uint8_t)(x[i] + 1) & 3] += w[i];
        jb->d[j] = 0;
        if (tg_geno_polymorphic(p))
            for (int k = 0; k < 3; k++) jb->d[j] += sum[k + 1] * (k - 2 * p) * (k - 2 * p);
        jb->d[j] /= tg_geno_polymorphic(p) ? 2 * p * (1 - p) : 1;
    }
}

static tg_status weighted_pass(const job *J, const double *w, double *d, tg_error *err) {
    tg_geno_source *src;
    tg_status st = tg_geno_source_bed(J->bed, &src, err);
    if (st) return st;
    struct wpass_job jb = {src, tg_geno_freq(J->g), w, J->noff == 1 ? NULL : J->r->chrom_of,
                           J->n, J->m, d};
    const int nomem = tg_parallel_for_scratch((J->m + WPASS_SNPS - 1) / WPASS_SNPS,
                                              (size_t)(J->n * WPASS_SNPS), wpass_chunk, &jb);
    tg_geno_source_free(src);
    if (nomem) return tg_error_set(err, TG_ERR_NOMEM, "assoc: weighted pass: out of memory");
    return TG_OK;
}

/* zb = Zβ_{t,f} (n × K) and w = Z·[β_{t,f} on chromosome c, 0 elsewhere] (n × K·C, column
 * f + K·c): the LOCO predictions' products of phenotype t; 0 without step 1. */
static tg_status loco_products(const job *J, int64_t t, double *bl, double *zb, double *w,
                               tg_error *err) {
    const int64_t n = J->n, m = J->m, K = J->K, C = J->r->nchrom;
    if (!J->o->nh2) {
        memset(zb, 0, (size_t)(n * K) * sizeof *zb);
        memset(w, 0, (size_t)(n * K * C) * sizeof *w);
        return TG_OK;
    }
    const double *beta = J->beta + t * m; /* β_{t,f} at beta + f·k·m */
    if (J->o->loco_refit && C > 1) /* LOCO_c = Zβ_{t,f} of the fit without c, column f + K·c */
        return tg_cg_mul(J->g, 0, K * C, beta, J->k * m, w, n, NULL, NULL, err);
    tg_status st = tg_cg_mul(J->g, 0, K, beta, J->k * m, zb, n, NULL, NULL, err);
    for (int64_t c = 0; c < C && !st; c++)
        for (int64_t f = 0; f < K; f++)
            for (int64_t j = 0; j < m; j++)
                bl[j + (f + K * c) * m] = J->r->chrom_of[j] == c ? beta[j + f * J->k * m] : 0;
    if (!st) st = tg_cg_mul(J->g, 0, K * C, bl, m, w, n, NULL, NULL, err);
    return st;
}

/* r->relate of phenotype t on chromosome c from its residual v (0 outside the phenotype's
 * samples, so that a pair with one of them missing adds nothing): 1 + 2Σ_pairs K v_i v_i' / vᵀv,
 * the variance of U = gᵀv given v over that of unrelated samples. */
static tg_status relate(const job *J, int64_t t, int64_t c, const double *v, tg_error *err) {
    const tg_assoc_opts *o = J->o;
    double *at = J->r->relate + c + J->r->nchrom * t, vv = 0, kv = 0;
    *at = 1;
    if (!o->npairs) return TG_OK;
    for (int64_t i = 0; i < J->n; i++) vv += v[i] * v[i];
    for (int64_t p = 0; p < o->npairs; p++)
        kv += o->pair_k[p] * v[o->pair_i[p]] * v[o->pair_j[p]];
    *at = 1 + 2 * kv / vv;
    if (!(*at > 0))
        return tg_error_set(err, TG_ERR_NUMERIC, "assoc: phenotype %s, chromosome %s: the "
                            "relatives' pairs give the residual a variance factor %g, not "
                            "positive: their relatedness is not positive definite (pairs "
                            "missing from a family, or values not of one relatedness matrix?)",
                            NAME(J, t), J->r->chroms[c], *at);
    return TG_OK;
}

/* SNP j's entry `at` from the score U and its information G of the scaled genotypes (s_j =
 * √(2p_j(1 − p_j)): in allele units s_jU and s_j²G) and s2, the residual variance (1 for the
 * logistic test) times the relatives' factor c: BETA = U/G, SE = √(s2/G), CHISQ = U²/(s2·G),
 * in allele units. NaN for a SNP with nothing to test: monomorphic, or G not above @p least
 * (constant on the phenotype's samples, or in the covariates' span there, where G cancels down
 * to rounding). */
static void put_test(tg_assoc_result *r, int64_t at, double p, double U, double G, double least,
                     double s2) {
    r->beta[at] = r->se[at] = r->chisq[at] = r->log10p[at] = NAN;
    if (!tg_geno_polymorphic(p) || !(G > least)) return;
    const double sj = sqrt(2 * p * (1 - p));
    r->beta[at] = U / (sj * G);
    r->se[at] = sqrt(s2 / G) / sj;
    r->chisq[at] = U * U / (s2 * G);
    r->log10p[at] = r->chisq[at] > 0 ? -tg_chi2_log10_sf(r->chisq[at], 1) : 0;
}

/* The tests of phenotype t from s = Zᵀ·[r_1 … r_C, Q_t past the intercept] and the counts'
 * part of G (jac). */
static void tests(const job *J, int64_t t, const double *s, const double *jac) {
    tg_assoc_result *r = J->r;
    const int64_t m = J->m, C = r->nchrom, N = J->noff;
    const int q = J->f.r[t];
    const double *p = tg_geno_freq(J->g);
    for (int64_t j = 0; j < m; j++) {
        const int64_t at = j + t * m, c = r->chrom_of[j];
        double G = jac[j];
        for (int l = 1; l < q; l++) G -= s[j + (N + l - 1) * m] * s[j + (N + l - 1) * m];
        /* scaled, G is about n_t for a SNP that varies */
        put_test(r, at, p[j], s[j + off_col(J, c) * m], G, 1e-8 * (double)r->nobs[t],
                 r->sigma2[c + C * t] * r->relate[c + C * t]);
    }
}

/* The logistic score tests of case/control phenotype t from s = Zᵀ·[y − μ_c per chromosome,
 * W_cQ_t per chromosome], the weighted pass d and the inverse informations Sinv. */
static void binary_tests(const job *J, int64_t t, const double *s, const double *d,
                         const double *Sinv) {
    tg_assoc_result *r = J->r;
    const int64_t m = J->m, C = r->nchrom, N = J->noff;
    const int q = J->f.r[t];
    const double *p = tg_geno_freq(J->g);
    for (int64_t j = 0; j < m; j++) {
        const int64_t at = j + t * m, c = r->chrom_of[j], o = off_col(J, c);
        const double *S = Sinv + o * q * q;
        double b[q], V = d[j];
        for (int l = 0; l < q; l++) b[l] = s[j + (N + o * q + l) * m];
        for (int l = 0; l < q; l++)
            for (int k = 0; k < q; k++) V -= b[l] * S[l + k * q] * b[k];
        put_test(r, at, p[j], s[j + o * m], V, 1e-8 * d[j], r->relate[c + C * t]);
    }
}

/* Step 2: the LOCO residuals and the tests, phenotype by phenotype. A case/control phenotype
 * takes C·(1 + q) product columns where a quantitative one takes C + q − 1. */
static tg_status step2(job *J, tg_error *err) {
    const int64_t n = J->n, m = J->m, k = J->k, C = J->r->nchrom, p = J->f.p, K = J->K,
                  N = J->noff;
    /* the quantitative phenotypes' columns side by side, one product for them all (a pass over
     * the genotypes per product); then a case/control phenotype at a time, whose weighted pass
     * is its own */
    int64_t wq = 0, nbin = 0;
    for (int64_t t = 0; t < k; t++)
        if (BINARY(J, t))
            nbin++;
        else
            wq += N + J->f.r[t] - 1;
    const int64_t width = nbin && N * (1 + p) > wq ? N * (1 + p) : wq;
    double *zb = tg_malloc((size_t)(n * K) * sizeof *zb, err),
           *bl = tg_malloc((size_t)(m * K * C) * sizeof *bl, err),
           *w = tg_malloc((size_t)(n * K * C) * sizeof *w, err),
           *res = tg_malloc((size_t)(n * width) * sizeof *res, err),
           *s = tg_malloc((size_t)(m * width) * sizeof *s, err),
           *wt = nbin ? tg_malloc((size_t)(n * N) * sizeof *wt, err) : NULL,
           *d = nbin ? tg_malloc((size_t)m * sizeof *d, err) : NULL,
           *Sinv = nbin ? tg_malloc((size_t)(p * p * N) * sizeof *Sinv, err) : NULL;
    tg_status st = !zb || !bl || !w || !res || !s || (nbin && (!wt || !d || !Sinv))
                       ? TG_ERR_NOMEM : TG_OK;
    tg_phase *ph = tg_phase_open_host("assoc", "phenotypes", k);
    for (int64_t t = 0, at = 0; t < k && !st; t++) {
        if (BINARY(J, t)) continue;
        if ((st = loco_products(J, t, bl, zb, w, err))) break;
        loco_fill(J, t, zb, w);
        residuals(J, t, res + at * n);
        for (int64_t c = 0; c < C && !st; c++)
            st = relate(J, t, c, res + (at + off_col(J, c)) * n, err);
        at += N + J->f.r[t] - 1;
    }
    if (!st && wq) st = tg_cg_mul(J->g, 1, wq, res, n, s, m, NULL, NULL, err);
    for (int64_t t = 0, at = 0; t < k && !st && wq; t++) {
        if (BINARY(J, t)) continue;
        tests(J, t, s + at * m, J->jac + t * m);
        if ((st = genomic_control(J->r, t, err))) break;
        tg_phase_add(ph, 1);
        at += N + J->f.r[t] - 1;
    }
    for (int64_t t = 0; t < k && !st; t++) {
        if (!BINARY(J, t)) continue;
        const int q = J->f.r[t];
        if ((st = loco_products(J, t, bl, zb, w, err))) break;
        loco_fill(J, t, zb, w);
        st = logistic_nulls(J, t, res, wt, Sinv, err);
        for (int64_t c = 0; c < C && !st; c++) st = relate(J, t, c, res + off_col(J, c) * n, err);
        if (!st) st = tg_cg_mul(J->g, 1, N * (1 + q), res, n, s, m, NULL, NULL, err);
        if (!st) st = weighted_pass(J, wt, d, err);
        if (st) break;
        binary_tests(J, t, s, d, Sinv);
        if ((st = genomic_control(J->r, t, err))) break;
        tg_phase_add(ph, 1);
    }
    tg_phase_close(ph);
    free(zb);
    free(bl);
    free(w);
    free(res);
    free(s);
    free(wt);
    free(d);
    free(Sinv);
    return st;
}

static tg_status result_alloc(tg_assoc_result *r, int64_t n, int64_t m, int64_t k, int nh,
                              tg_error *err) {
    const size_t mk = (size_t)(m * k) * sizeof(double);
    r->nphen = k;
    r->m = m;
    r->n = n;
    if (!(r->beta = tg_malloc(mk, err)) || !(r->se = tg_malloc(mk, err)) ||
        !(r->chisq = tg_malloc(mk, err)) || !(r->log10p = tg_malloc(mk, err)) ||
        !(r->stats = tg_malloc((size_t)(m * k) * sizeof *r->stats, err)) ||
        !(r->h2 = tg_malloc((size_t)k * sizeof *r->h2, err)) ||
        !(r->lambda = tg_malloc((size_t)k * sizeof *r->lambda, err)) ||
        !(r->cv_mse = tg_malloc((size_t)(nh * k) * sizeof *r->cv_mse + 1, err)) ||
        !(r->lambda_gc = tg_malloc((size_t)k * sizeof *r->lambda_gc, err)) ||
        !(r->nobs = tg_malloc((size_t)k * sizeof *r->nobs, err)) ||
        !(r->nfixed = tg_malloc((size_t)k * sizeof *r->nfixed, err)) ||
        !(r->ncases = tg_malloc((size_t)k * sizeof *r->ncases, err)))
        return TG_ERR_NOMEM;
    for (int64_t i = 0; i < nh * k; i++) r->cv_mse[i] = NAN;
    for (int64_t t = 0; t < k; t++) r->h2[t] = r->lambda[t] = NAN;
    return TG_OK;
}

tg_status tg_assoc(const tg_bed *bed, int64_t nphen, const double *y, int64_t ldy,
                   const tg_assoc_opts *o, tg_assoc_result *r, tg_error *err) {
    memset(r, 0, sizeof *r);
    const int64_t n = bed->n_samples, m = bed->n_snps;
    if (nphen < 1 || ldy < n)
        return tg_error_set(err, TG_ERR_ARG, "assoc: nphen %lld must be ≥ 1, ldy %lld ≥ n %lld",
                            (long long)nphen, (long long)ldy, (long long)n);
    if (tg_runtime_nranks() > 1)
        return tg_error_set(err, TG_ERR_ARG, "assoc runs on one MPI rank (%d here)",
                            tg_runtime_nranks());
    tg_status st = check_opts(o, err);
    if (!st) st = check_pairs(o, n, err);
    if (!st) st = result_alloc(r, n, m, nphen, o->nh2, err);
    if (!st) st = group_chroms(bed, r, err);
    if (st) return st;
    job J = {.bed = bed, .o = o, .r = r, .n = n, .m = m, .k = nphen, .K = o->nh2 ? o->folds : 1,
             .noff = o->nh2 ? r->nchrom : 1};
    double t0 = tg_now();
    const int64_t R = o->loco_refit && r->nchrom > 1 ? r->nchrom : 1;
    if (!(J.beta = tg_calloc((size_t)(m * nphen * J.K * R), sizeof *J.beta, err)) ||
        !(r->sigma2 = tg_malloc((size_t)(r->nchrom * nphen) * sizeof *r->sigma2, err)) ||
        !(r->loco = tg_malloc((size_t)(n * r->nchrom * nphen) * sizeof *r->loco, err)) ||
        !(r->relate = tg_malloc((size_t)(r->nchrom * nphen) * sizeof *r->relate, err))) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    if ((st = prepare(&J, y, ldy, err)) || (st = pheno_stats(&J, err)) ||
        (st = tg_geno_from_bed(bed, 1, &J.g, err)))
        goto done;
    if (!(J.jac = tg_malloc((size_t)(m * nphen) * sizeof *J.jac, err))) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    if ((st = tg_ridge_jacobi_bed(bed, J.g, 1, nphen, J.ym, n, J.jac, m, err))) goto done;
    r->excluded = tg_geno_excluded(J.g);
    if (o->nh2 > 0 && (st = step1(&J, err))) goto done;
    r->seconds_step1 = tg_now() - t0;
    t0 = tg_now();
    st = step2(&J, err);
    r->seconds_step2 = tg_now() - t0;
done:
    tg_geno_free(J.g);
    tg_fixed_free(&J.f);
    free(J.ym);
    free(J.beta);
    free(J.jac);
    return st;
}
