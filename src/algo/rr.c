/* Ridge regression by the tile Cholesky: the KRR paper's RR baseline (section V-A, Fig. 2).
 * A = ZᵀZ + λI is built tile by tile from INT8 products of SNP panels (exact integers; with
 * missing calls each panel is [X0_J | M_J], genotypes with missing as 0 and the observed mask,
 * so that the mean imputation stays exact: codelets/xtx.h), finished per tile in FP64 and
 * stored in the diagonal precision of the factorisation, which lowers tiles by its map. The
 * right-hand side Zᵀ(y − ȳ) comes from the genotype matrix products (the same Z as
 * tg_ridge_cg's: one source of μ and s), then tg_cholesky and tg_chol_solve.
 * The genotypes are read through a source (an int8 array or the kept rows of a .bed), once
 * for this rank's samples (the frequencies and its share of Zᵀy: a tg_geno) and once for every
 * sample of the SNPs of this rank's panels; nothing else is decoded.
 * Several MPI ranks: panel J is filled and held by rank J mod R (StarPU-MPI sends it to the
 * ranks whose tiles need it), every tile of ZᵀZ is built on its owner, and the products for
 * the right-hand side split the samples over the ranks as tg_ridge_cg's do.
 * Fixed effects (the intercept and covariates, C = QR): the system is (ZᵀMZ + λI)β = ZᵀMy with
 * M = I − QQᵀ (Frisch–Waugh–Lovell). ZᵀMZ + λI = A − WWᵀ, A = ZᵀZ + λI as above and W = ZᵀQ
 * (m × r, r small), so the factorisation of A serves, with the Woodbury identity:
 *   β = X_b + X_W·S⁻¹·WᵀX_b,  A·[X_b X_W] = [ZᵀMy W],  S = I − WᵀX_W (r × r, FP64),
 * the solve taking r more right-hand sides. S = λQᵀ(ZZᵀ + λI)⁻¹Q is positive definite. Z is
 * centered over these samples, so the intercept's column of W is 0 up to rounding. */
#include "algo/rr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/cg.h"
#include "algo/fixed.h"
#include "base/parallel.h"
#include "codelets/distance.h"
#include "codelets/xtx.h"
#include "geno/panels.h"
#include "runtime/runtime.h"
#include "tile/matrix.h"

tg_ridge_chol_opts tg_ridge_chol_defaults(void) {
    tg_ridge_chol_opts o = {.lambda = 1, .nb = 1024, .chol = tg_chol_defaults()};
    return o;
}

/* The SNP panels: panel J holds SNPs [J·nb, J·nb + nb_J) as an int8 n_pad × w_J matrix
 * (w_J = nb_J, or 2·nb_J as [X0_J | M_J] with missing calls; rows n..n_pad−1 zero: the INT8
 * product needs a multiple of 16) and a vector of μ then s of those SNPs. */
struct panels {
    const tg_geno_source *src; /* every sample of the panel's SNPs is read through it */
    int64_t n, m, npad;
    int nb, np, missing, scale;
    const double *freq; /* A1 frequencies of the tg_geno */
    int8_t **data;
    double **vec;
    tg_handle *h, *v;
};

static int panel_snps(const struct panels *P, int J) {
    int64_t left = P->m - (int64_t)J * P->nb;
    return left < P->nb ? (int)left : P->nb;
}

/* The rank that fills and holds panel J (every panel with one rank). */
static int panel_owner(int J) { return J % tg_runtime_nranks(); }
static int mine(int J) { return panel_owner(J) == tg_runtime_rank(); }

static void fill_panel(void *ctx, int64_t J) {
    struct panels *P = ctx;
    if (!mine((int)J)) return;
    tg_geno_ridge_panel(P->src, P->freq, P->scale, J * P->nb, panel_snps(P, (int)J), P->npad,
                        P->missing, P->data[J], P->vec[J]);
}

static void panels_free(struct panels *P) {
    for (int J = 0; J < P->np; J++) {
        if (P->h && P->h[J]) tg_handle_free(P->h[J]);
        if (P->v && P->v[J]) tg_handle_free(P->v[J]);
        if (P->data) tg_host_free(P->data[J]);
        if (P->vec) free(P->vec[J]);
    }
    free(P->data);
    free(P->vec);
    free(P->h);
    free(P->v);
}

/* Allocates (pinned, on the main thread) and fills this rank's panels, registers every panel's
 * handles. */
static tg_status panels_make(struct panels *P, tg_error *err) {
    int np = P->np;
    if (!(P->data = tg_calloc_n(np, 1, sizeof *P->data, err)) ||
        !(P->vec = tg_calloc_n(np, 1, sizeof *P->vec, err)) ||
        !(P->h = tg_calloc_n(np, 1, sizeof *P->h, err)) ||
        !(P->v = tg_calloc_n(np, 1, sizeof *P->v, err)))
        return TG_ERR_NOMEM;
    for (int J = 0; J < np; J++) {
        if (!mine(J)) continue;
        int nbj = panel_snps(P, J), w = P->missing ? 2 * nbj : nbj;
        size_t bytes;
        if (tg_size_mul(P->npad, w, 1, &bytes, NULL) ||
            !(P->data[J] = tg_host_alloc(bytes, NULL)))
            return tg_error_set(err, TG_ERR_NOMEM, "ridge (Cholesky): no memory for SNP panel %d "
                                "(%lld × %d int8)", J, (long long)P->npad, w);
        if (!(P->vec[J] = tg_malloc_n(2, nbj, sizeof(double), err))) return TG_ERR_NOMEM;
    }
    tg_parallel_for(np, fill_panel, P);
    /* other ranks' panels (NULL here): the runtime allocates them where this rank receives them */
    for (int J = 0; J < np; J++) {
        int nbj = panel_snps(P, J), w = P->missing ? 2 * nbj : nbj;
        tg_handle_matrix(&P->h[J], P->data[J], (uint32_t)P->npad, (uint32_t)P->npad, (uint32_t)w,
                         1);
        tg_handle_vector(&P->v[J], P->vec[J], (uint32_t)(2 * nbj), sizeof(double));
        tg_runtime_register(P->h[J], panel_owner(J));
        tg_runtime_register(P->v[J], panel_owner(J));
    }
    return TG_OK;
}

/* A = ZᵀZ + λI (lower tiles): per tile a gram into a temporary INT32 tile, then the finishing
 * codelet. Waits for completion (the panels are freed after). */
static tg_status build(const struct panels *P, double lambda, tg_matrix *A, tg_error *err) {
    int bad = 0;
    tg_prec prec = A->prec[0];
    tg_phase *ph = tg_phase_open("xtx", "op", -1);
    for (int K = 0; K < P->np; K++)
        for (int J = K; J < P->np; J++) {
            uint32_t wj = (uint32_t)tg_handle_cols(P->h[J]),
                     wk = (uint32_t)tg_handle_cols(P->h[K]);
            tg_handle c = tg_matrix_tile_temp(A, J, K, (int)wj, (int)wk, TG_INT32);
            /* tiles of early panels first: the factorisation starts there */
            int prio = P->np - K;
            struct tg_xtx_arg a = {prec, P->missing, J == K, (double)P->n, lambda};
            bad |= tg_insert_gram(P->h[J], P->h[K], c, prio);
            bad |= tg_insert_xtx(&a, c, P->v[J], P->v[K], tg_tile(A, J, K), prio);
            tg_handle_free_later(c);
        }
    tg_phase_close(ph);
    tg_runtime_wait_all();
    if (bad) return tg_error_set(err, TG_ERR_RUNTIME, "ridge (Cholesky): StarPU refused a task");
    return TG_OK;
}

static tg_status check_args(int64_t n, int64_t m, int64_t nphen, const double *y, int64_t ldy,
                            const tg_ridge_chol_opts *o, int64_t ldb, tg_error *err) {
    if (n < 1 || m < 1 || nphen < 1 || ldy < n || ldb < m)
        return tg_error_set(err, TG_ERR_ARG,
                            "ridge (Cholesky): n %lld, m %lld, nphen %lld must be ≥ 1, ldy %lld "
                            "≥ n, ldb %lld ≥ m",
                            (long long)n, (long long)m, (long long)nphen, (long long)ldy,
                            (long long)ldb);
    if (!(o->lambda > 0) || !isfinite(o->lambda))
        return tg_error_set(err, TG_ERR_ARG, "ridge (Cholesky): lambda %g: must be > 0",
                            o->lambda);
    /* BLAS takes ints: the panels' leading dimension is n padded to 16, the right-hand sides
     * (phenotypes and the covariates' basis) are one tile wide */
    if (n > INT32_MAX - 15 || nphen > INT32_MAX - 1 - (int64_t)o->ncovar)
        return tg_error_set(err, TG_ERR_ARG, "ridge (Cholesky): %lld samples, %lld phenotypes "
                            "and %d covariates: a panel's column (samples padded to 16) and the "
                            "right-hand sides (phenotypes, covariates and 1) must each fit an "
                            "int (%d)", (long long)n, (long long)nphen, o->ncovar, INT32_MAX);
    tg_status st = tg_tile_check("--tile", m, o->nb, err); /* tiles of SNPs */
    if (st) return st;
    if (o->chol.diag != TG_FP64 && o->chol.diag != TG_FP32)
        return tg_error_set(err, TG_ERR_ARG,
                            "ridge (Cholesky): diagonal precision %s: must be fp64 or fp32",
                            tg_prec_name(o->chol.diag));
    for (int64_t c = 0; c < nphen; c++)
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(y[i + c * ldy]))
                return tg_error_set(err, TG_ERR_ARG,
                                    "ridge (Cholesky): phenotype %lld of sample %lld is %g: every "
                                    "value must be observed and finite (keep the samples observed "
                                    "for every phenotype)",
                                    (long long)c + 1, (long long)i + 1, y[i + c * ldy]);
    if (o->ncovar < 0 || (o->ncovar && (!o->covar || o->ldc < n)))
        return tg_error_set(err, TG_ERR_ARG, "ridge (Cholesky): %d covariate(s), matrix %s, ld "
                            "%lld < n %lld", o->ncovar, o->covar ? "given" : "NULL",
                            (long long)o->ldc, (long long)n);
    for (int j = 0; j < o->ncovar; j++)
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(o->covar[i + j * o->ldc]))
                return tg_error_set(err, TG_ERR_ARG,
                                    "ridge (Cholesky): covariate %d of sample %lld is %g: every "
                                    "value must be observed and finite (keep the samples with "
                                    "every covariate)",
                                    j + 1, (long long)i + 1, o->covar[i + j * o->ldc]);
    return TG_OK;
}

/* β = X_b + X_W·S⁻¹·WᵀX_b (the Woodbury correction above) from X = [X_b X_W] (m × (k + r)). */
static tg_status woodbury(int64_t m, int64_t k, int r, const double *W, const double *X,
                          double *beta, int64_t ldb, tg_error *err) {
    const double *xb = X, *xw = X + k * m;
    double *S = tg_malloc_n(r, r, sizeof *S, err),
           *U = tg_malloc_n(r, k, sizeof *U, err);
    tg_status st = !S || !U ? TG_ERR_NOMEM : TG_OK;
    for (int a = 0; a < r && !st; a++) {
        for (int b = 0; b < r; b++) {
            double d = 0;
            for (int64_t j = 0; j < m; j++) d += W[j + a * m] * xw[j + b * m];
            S[a + b * r] = (a == b) - d;
        }
        for (int64_t c = 0; c < k; c++) {
            double d = 0;
            for (int64_t j = 0; j < m; j++) d += W[j + a * m] * xb[j + c * m];
            U[a + c * r] = d;
        }
    }
    if (!st && tg_fixed_spd_solve(r, S, r, k, U, r))
        st = tg_error_set(err, TG_ERR_NUMERIC, "ridge (Cholesky): the fixed effects' correction "
                          "I − WᵀA⁻¹W is not positive definite (a covariate nearly in the span "
                          "of the genotypes with a tiny lambda?)");
    for (int64_t c = 0; c < k && !st; c++)
        for (int64_t j = 0; j < m; j++) {
            double v = xb[j + c * m];
            for (int a = 0; a < r; a++) v += xw[j + a * m] * U[a + c * r];
            beta[j + c * ldb] = v;
        }
    free(S);
    free(U);
    return st;
}

tg_status tg_ridge_chol_source(const tg_geno_source *src, int scale, int64_t nphen,
                               const double *y, int64_t ldy, const tg_ridge_chol_opts *opts,
                               double *beta, int64_t ldb, double *mu, tg_chol_report *rep,
                               tg_geno **train, tg_error *err) {
    const int64_t n = tg_geno_source_n(src), m = tg_geno_source_m(src);
    tg_ridge_chol_opts o = opts ? *opts : tg_ridge_chol_defaults();
    if (train) *train = NULL;
    tg_status st = check_args(n, m, nphen, y, ldy, &o, ldb, err);
    if (st) return st;
    tg_geno *g = NULL;
    tg_matrix *A = NULL, *B = NULL;
    tg_fixed f = {0};
    double *yc = NULL, *b = NULL;
    struct panels P = {.src = src, .n = n, .m = m, .npad = (n + 15) / 16 * 16,
                       .nb = o.nb < m ? o.nb : (int)m, .scale = scale};
    P.np = (int)((m + P.nb - 1) / P.nb);
    /* this rank's samples: the frequencies (integer counts summed over the ranks) and its
     * share of Zᵀy */
    if ((st = tg_geno_from_source(src, scale, &g, err))) return st;
    P.freq = tg_geno_freq(g);
    /* the panel layout: [X0 | M] when any call of an SNP in Z is missing */
    int64_t missing = tg_geno_missing(g);
    tg_runtime_sum_int64(&missing, 1);
    P.missing = missing > 0;
    /* the basis of the fixed effects (every sample has every value: one basis serves all) */
    if ((st = tg_fixed_make(n, o.covar, o.ldc, o.ncovar, 1, y, ldy, &f, err))) goto done;
    const int r = f.r[0];
    const int64_t kr = nphen + r; /* right-hand sides: ZᵀMy, then W = ZᵀQ */
    if (!(yc = tg_malloc_n(n, nphen, sizeof *yc, err)) ||
        !(b = tg_malloc_n(m, kr, sizeof *b, err))) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    /* b = ZᵀMy: without covariates My = y − ȳ (Z's columns are centered, so this only matters
     * in rounding, but it keeps b's terms small) */
    for (int64_t c = 0; c < nphen; c++) {
        double s = 0, t[r];
        for (int64_t i = 0; i < n; i++) s += y[i + c * ldy];
        const double mean = s / (double)n; /* Q's first column, the intercept's, exactly */
        if (mu) mu[c] = mean;
        for (int l = 1; l < r; l++) {
            t[l] = 0;
            for (int64_t i = 0; i < n; i++) t[l] += f.Q[i + l * n] * (y[i + c * ldy] - mean);
        }
        for (int64_t i = 0; i < n; i++) {
            double v = y[i + c * ldy] - mean;
            for (int l = 1; l < r; l++) v -= f.Q[i + l * n] * t[l];
            yc[i + c * n] = v;
        }
    }
    int64_t first, count; /* the products read this rank's samples */
    tg_geno_local(g, &first, &count);
    if ((st = tg_cg_mul(g, 1, nphen, yc + first, n, b, m, NULL, NULL, err)) ||
        (st = tg_cg_mul(g, 1, r, f.Q + first, n, b + nphen * m, m, NULL, NULL, err)) ||
        (st = panels_make(&P, err)) ||
        (st = tg_matrix_create(&A, m, m, P.nb, P.nb, TG_SYM_LOWER, o.chol.diag, 0, 0, err)) ||
        (st = build(&P, o.lambda, A, err)))
        goto done;
    panels_free(&P);
    memset(&P, 0, sizeof P);
    if (!train) { /* its products and frequencies are no longer needed */
        tg_geno_free(g);
        g = NULL;
    }
    /* B in the solve's precision with A's row tiling; X = A⁻¹B into x, W stays in b's tail
     * for the correction */
    double *x = tg_malloc_n(m, kr, sizeof *x, err);
    if (!x) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    if (!(st = tg_cholesky(A, &o.chol, rep, err)) &&
        !(st = tg_matrix_create(&B, m, kr, A->nb, (int)kr, TG_GENERAL, o.chol.diag, 0, 0, err)) &&
        !(st = tg_matrix_from_dense(B, b, m, err)) && !(st = tg_chol_solve(A, B, err)) &&
        !(st = tg_matrix_to_dense(B, x, m, err)))
        st = woodbury(m, nphen, r, b + nphen * m, x, beta, ldb, err);
    free(x);
    if (!st && train) {
        *train = g;
        g = NULL;
    }
done:
    panels_free(&P);
    tg_fixed_free(&f);
    tg_matrix_destroy(B);
    tg_matrix_destroy(A);
    tg_geno_free(g);
    free(yc);
    free(b);
    return st;
}

tg_status tg_ridge_chol(const int8_t *geno, int64_t n, int64_t m, int64_t ld, int scale,
                        int64_t nphen, const double *y, int64_t ldy, const tg_ridge_chol_opts *opts,
                        double *beta, int64_t ldb, double *mu, tg_chol_report *rep,
                        tg_error *err) {
    if (!geno || ld < n)
        return tg_error_set(err, TG_ERR_ARG, "ridge (Cholesky): genotype array %s, ld %lld < n "
                            "%lld", geno ? "given" : "NULL", (long long)ld, (long long)n);
    tg_geno_source *s;
    tg_status st = tg_geno_source_int8(geno, n, m, ld, &s, err);
    if (!st)
        st = tg_ridge_chol_source(s, scale, nphen, y, ldy, opts, beta, ldb, mu, rep, NULL, err);
    tg_geno_source_free(s);
    return st;
}

tg_status tg_ridge_chol_bed(const tg_bed *bed, const int64_t *rows, int64_t n, int scale,
                            int64_t nphen, const double *y, int64_t ldy,
                            const tg_ridge_chol_opts *opts, double *beta, int64_t ldb, double *mu,
                            tg_chol_report *rep, tg_geno **train, tg_error *err) {
    if (train) *train = NULL;
    if (!bed) return tg_error_set(err, TG_ERR_ARG, "ridge (Cholesky): NULL fileset");
    tg_status st = tg_bed_check_rows(bed, rows, n, err);
    if (st) return st;
    tg_geno_source *s;
    if ((st = tg_geno_source_bed(bed, &s, err))) return st;
    if (!(st = tg_geno_source_select(s, rows, n, NULL, bed->n_snps, err)))
        st = tg_ridge_chol_source(s, scale, nphen, y, ldy, opts, beta, ldb, mu, rep, train, err);
    tg_geno_source_free(s);
    return st;
}
