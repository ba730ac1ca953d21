/* Principal components (tg_pca, tilegwas.h): the top k eigenpairs of K = Z·Zᵀ/m, Z the scaled
 * genotypes.
 *
 * Exact: K formed by tg_grm (the one call that forms it), then eigenpairs n−k+1..n on every
 * core (tg_pca_eig): the block Krylov below with DSYMM products on K, taken when its residuals
 * reach rounding level (the top k apart from the rest), else LAPACK dsyevr, what plink2 --pca
 * does (its ExtractEigvecs is dsyevr too). n² doubles of memory.
 *
 * Approx: randomized block Krylov (Musco & Musco 2015; plink2's `approx` and FlashPCA2 are of
 * this family) on the genotype products, K never formed: Y₀ a Gaussian n × b block, then
 * Y_{j+1} = K·Y_j orthonormalised against every block before it (two passes of block
 * Gram-Schmidt and Cholesky QR), K·Y_j = Z·(Zᵀ·Y_j)/m by two tg_geno_mul products. The products
 * W = K·Q of the basis Q are kept, so Rayleigh-Ritz after each block costs no product:
 * H = QᵀW, H·S = S·Λ, Ritz vectors V = Q·S, residuals K·V − V·Λ = W·S − Q·S·Λ. It stops when
 * every residual of the top k is below tol·λ₁ (eigenvalue errors are then about the squared
 * residual over the gap, far below the printed digits) or at max_blocks. Unlike plink2's
 * fixed k + 1 blocks of unorthogonalised powers, the basis stays orthonormal and the stop is
 * measured.
 *
 * Several ranks: each holds its samples' rows of Q and W (the products work on those rows);
 * the small Gram and projected matrices are summed over the ranks (tg_runtime_sum: the same bits
 * everywhere), so every rank takes the same decisions and the same small eigenproblems; rank 0
 * gathers the eigenvectors. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/cg.h"
#include "base/rng.h"
#include "io/out.h"
#include "io/select.h"
#include "runtime/runtime.h"
#include "tilegwas.h"

tg_pca_opts tg_pca_defaults(void) {
    return (tg_pca_opts){.k = 10, .mode = TG_PCA_AUTO, .seed = 1, .tol = 1e-6, .max_blocks = 24};
}

/* Columns j and k−1−j swapped, and the values: LAPACK returns ascending eigenvalues. */
static void descending(double *vec, int64_t ld, int64_t rows, double *val, int k) {
    for (int j = 0; j < k / 2; j++) {
        double t = val[j];
        val[j] = val[k - 1 - j], val[k - 1 - j] = t;
        if (vec) cblas_dswap((int)rows, vec + j * ld, 1, vec + (k - 1 - j) * ld, 1);
    }
}

/* The top k eigenpairs of K by LAPACK dsyevr (K's lower triangle, overwritten). */
static tg_status lapack_eig(double *K, int64_t n, int k, double *vec, double *val,
                            tg_error *err) {
    double *w = tg_malloc_n(n, 1, sizeof *w, err);
    lapack_int *isuppz = tg_malloc_n(2, k, sizeof *isuppz, err), found = 0;
    if (!w || !isuppz) {
        free(w);
        free(isuppz);
        return TG_ERR_NOMEM;
    }
    lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'L', (lapack_int)n, K,
                                     (lapack_int)n, 0, 0, (lapack_int)(n - k + 1), (lapack_int)n,
                                     LAPACKE_dlamch('S'), &found, w, vec, (lapack_int)n, isuppz);
    tg_status st = TG_OK;
    if (info || found != k) {
        st = tg_error_set(err, TG_ERR_NUMERIC, "exact PCA: LAPACK dsyevr failed (info %d, %d of "
                          "%d eigenpairs)", (int)info, (int)found, k);
    } else {
        memcpy(val, w, (size_t)k * sizeof *val);
        descending(vec, n, n, val, k);
    }
    free(isuppz);
    free(w);
    return st;
}

/* ---- block Krylov: the approx mode, and the exact mode on the formed K */

typedef struct {
    tg_geno *g;       /* K·Y by the genotype products, or */
    const double *K;  /* by DSYMM on this dense K (lower triangle, ld n; one process: local) */
    int local;        /* every row here: nothing to sum over the ranks */
    int give_up;      /* stop early when the residuals' rate cannot reach tol within the blocks */
    int64_t n, m, i0, nl;
    int b, cap;       /* block width; basis columns at most */
    double *Q, *W;    /* this rank's rows of the basis and of K·Q (nl × cap) */
    double *T;        /* Zᵀ·Y (m × b) */
    double *H;        /* QᵀW (cap × cap), upper triangle, the same on every rank */
    double *small;    /* cap × cap scratch, summed over the ranks */
    double *col;      /* a random column, n long */
    double *norm;     /* 2b: the block's squared column lengths, then their scales */
    double *lam;      /* cap: Ritz values (dsyevr's W array is as long as its matrix) */
    tg_rng rng;       /* the same draws on every rank */
    tg_pca_report *rep;
} krylov;

static void sum(const krylov *s, double *x, int64_t count) {
    if (!s->local) tg_runtime_sum(x, count, TG_FP64);
}

/* out (ca × cb, packed) = Aᵀ·B over the rows of every rank. */
static void gram(const krylov *s, const double *a, int ca, const double *b, int cb, double *out) {
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, ca, cb, (int)s->nl, 1, a, (int)s->nl, b,
                (int)s->nl, 0, out, ca);
    sum(s, out, (int64_t)ca * cb);
}

/* Column @p j of the block at @p y: a fresh Gaussian vector (this rank's rows of it). */
static void random_column(krylov *s, double *y, int j) {
    for (int64_t i = 0; i < s->n; i++) s->col[i] = tg_rng_normal(&s->rng);
    memcpy(y + (int64_t)j * s->nl, s->col + s->i0, (size_t)s->nl * sizeof *y);
}

/* One pass: Y ← Y − Q₀(Q₀ᵀY) against the first c0 basis columns, then Cholesky QR. Returns the
 * column to replace (dependent on the ones before it), or −1 when Y is orthonormal. */
static int orth_pass(krylov *s, double *y, int c0, int check) {
    const int b = s->b, nl = (int)s->nl;
    double *before = s->norm, *scale = s->norm + b, *c = s->small;
    if (check)
        for (int j = 0; j < b; j++) before[j] = cblas_ddot(nl, y + j * s->nl, 1, y + j * s->nl, 1);
    if (check) sum(s, before, b);
    if (c0) {
        gram(s, s->Q, c0, y, b, c);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nl, b, c0, -1, s->Q, nl, c, c0, 1,
                    y, nl);
    }
    gram(s, y, b, y, b, c);
    /* a column left with almost nothing of its length lies in the basis already */
    for (int j = 0; j < b; j++)
        if (check && !(c[j + j * b] > 1e-20 * before[j])) return j;
    for (int j = 0; j < b; j++) scale[j] = 1 / sqrt(c[j + j * b]);
    for (int j = 0; j < b; j++) {
        cblas_dscal(nl, scale[j], y + j * s->nl, 1);
        for (int i = 0; i < b; i++) c[i + j * b] *= scale[i] * scale[j];
    }
    lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', b, c, b);
    if (info > 0) return (int)info - 1;
    cblas_dtrsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, nl, b, 1, c, b,
                y, nl);
    return -1;
}

/* The block at basis column c0 orthonormal to the columns before it and within itself;
 * dependent columns are replaced by random ones (the basis stays a valid subspace). A block
 * that random columns cannot complete (not seen; c0 + b ≤ n always) is an error, not a
 * basis that is not one. */
static tg_status orthonormalise(krylov *s, int c0, tg_error *err) {
    double *y = s->Q + (int64_t)c0 * s->nl;
    for (int tries = 0; tries < 4 * s->b + 8; tries++) {
        int j = orth_pass(s, y, c0, 1);
        if (j < 0) j = orth_pass(s, y, c0, 0); /* the second pass: orthogonal to rounding */
        if (j < 0) return TG_OK;
        random_column(s, y, j);
    }
    return tg_error_set(err, TG_ERR_NUMERIC, "PCA by block Krylov: no orthonormal block %d of %d "
                        "columns found after %d random restarts", c0 / s->b + 1, s->b,
                        4 * s->b + 8);
}

/* W[:, c0 : c0 + b] = K·Q[:, c0 : c0 + b]: Zᵀ·Y summed over the ranks, Z·(that) on this
 * rank's rows, over m. */
static tg_status apply_k(krylov *s, int c0, tg_error *err) {
    double *y = s->Q + (int64_t)c0 * s->nl, *w = s->W + (int64_t)c0 * s->nl;
    if (s->K) {
        cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, (int)s->n, s->b, 1, s->K, (int)s->n, y,
                    (int)s->n, 0, w, (int)s->n);
        return TG_OK;
    }
    tg_status st = tg_cg_mul(s->g, 1, s->b, y, s->nl, s->T, s->m, &s->rep->seconds_products,
                             &s->rep->products, err);
    if (!st)
        st = tg_cg_mul(s->g, 0, s->b, s->T, s->m, w, s->nl, &s->rep->seconds_products,
                       &s->rep->products, err);
    for (int j = 0; !st && j < s->b; j++) /* a column at a time: nl · b may pass an int */
        cblas_dscal((int)s->nl, 1.0 / (double)s->m, w + (int64_t)j * s->nl, 1);
    return st;
}

/* Rayleigh-Ritz on the first c basis columns: the top k Ritz values s->lam (descending), their
 * vectors' coefficients @p sv (c × k), and the largest residual over λ₁. */
static tg_status ritz(krylov *s, int c, int k, double *sv, double *resid, tg_error *err) {
    double *val = s->lam;
    lapack_int found = 0, *isuppz = tg_malloc_n(2, k, sizeof *isuppz, err);
    double *h = tg_malloc_n(c, c, sizeof *h, err),
           *r = tg_malloc_n(s->nl, k, sizeof *r, err);
    tg_status st = TG_OK;
    if (!isuppz || !h || !r) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    for (int j = 0; j < c; j++) memcpy(h + (int64_t)j * c, s->H + (int64_t)j * s->cap,
                                      (size_t)c * sizeof *h);
    lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'U', c, h, c, 0, 0, c - k + 1, c,
                                     LAPACKE_dlamch('S'), &found, val, sv, c, isuppz);
    if (info || found != k) {
        st = tg_error_set(err, TG_ERR_NUMERIC, "PCA by block Krylov: LAPACK dsyevr failed on the "
                          "%d × %d projected matrix (info %d)", c, c, (int)info);
        goto done;
    }
    descending(sv, c, c, val, k);
    /* R = W·S − Q·S·Λ */
    const int nl = (int)s->nl;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nl, k, c, 1, s->W, nl, sv, c, 0, r,
                nl);
    for (int j = 0; j < k; j++)
        cblas_dgemv(CblasColMajor, CblasNoTrans, nl, c, -val[j], s->Q, nl, sv + (int64_t)j * c,
                    1, 1, r + (int64_t)j * nl, 1);
    double *nrm = s->small;
    for (int j = 0; j < k; j++) nrm[j] = cblas_ddot(nl, r + (int64_t)j * nl, 1,
                                                    r + (int64_t)j * nl, 1);
    sum(s, nrm, k);
    *resid = 0;
    for (int j = 0; j < k; j++) *resid = fmax(*resid, sqrt(nrm[j]) / fabs(val[0]));
done:
    free(r);
    free(h);
    free(isuppz);
    return st;
}

/* Whether the residuals, @p r after block @p blk (hist[] before it), are falling too slowly to
 * reach @p tol within @p nb blocks at their rate over the last three blocks. Krylov's error
 * falls geometrically at a rate set by the gap after the top k; a flat spectrum there (samples
 * from one population: a Marchenko-Pastur bulk) shows within a few blocks. */
static int hopeless(double *hist, int blk, int nb, double r, double tol) {
    hist[blk] = r;
    if (blk < 4 || !(hist[blk - 3] > 0) || !(r > 0)) return 0;
    double rate = pow(r / hist[blk - 3], 1.0 / 3);
    return rate >= 1 || blk + log(tol / r) / log(rate) > nb - 1;
}

/* Block Krylov on @p s (its operator, rows and report set): blocks of s->b columns, at most
 * @p nb, until the top k residuals are below tol·λ₁. The eigenvectors go to @p vec (rank 0,
 * gathered) and the values to @p val (rank 0). */
static tg_status krylov_run(krylov *s, int k, int nb, double tol, uint64_t seed, double *vec,
                            double *val, tg_error *err) {
    tg_pca_report *rep = s->rep;
    s->cap = nb * s->b;
    tg_rng_seed(&s->rng, seed);
    double t_dense = 0, t0;
    double *sv = NULL, *v = NULL, *hist = NULL;
    tg_status st = TG_OK;
    if (!(hist = tg_malloc_n(nb, 1, sizeof *hist, err)) ||
        !(s->Q = tg_malloc_n(s->nl, s->cap, sizeof *s->Q, err)) ||
        !(s->W = tg_malloc_n(s->nl, s->cap, sizeof *s->W, err)) ||
        (!s->K && !(s->T = tg_malloc_n(s->m, s->b, sizeof *s->T, err))) ||
        !(s->H = tg_calloc_n(s->cap, s->cap, sizeof *s->H, err)) ||
        !(s->small = tg_malloc_n(s->cap, s->cap, sizeof *s->small, err)) ||
        !(s->col = tg_malloc_n(s->n, 1, sizeof *s->col, err)) ||
        !(s->norm = tg_malloc_n(2, s->b, sizeof *s->norm, err)) ||
        !(s->lam = tg_malloc_n(s->cap, 1, sizeof *s->lam, err)) ||
        !(sv = tg_malloc_n(s->cap, k, sizeof *sv, err)) ||
        !(v = tg_malloc_n(s->nl, k, sizeof *v, err))) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    for (int j = 0; j < s->b; j++) random_column(s, s->Q, j);
    tg_phase *ph = tg_phase_open_host("pca", "blocks", nb);
    int c = 0;
    for (int blk = 0; blk < nb && !st; blk++) {
        t0 = tg_now();
        if (blk) { /* the next block: K·(the last block), against the whole basis */
            memcpy(s->Q + (int64_t)c * s->nl, s->W + (int64_t)(c - s->b) * s->nl,
                   (size_t)s->nl * (size_t)s->b * sizeof *s->Q);
        }
        st = orthonormalise(s, c, err);
        t_dense += tg_now() - t0;
        t0 = tg_now();
        if (st || (st = apply_k(s, c, err))) break;
        if (s->K) t_dense += tg_now() - t0;
        t0 = tg_now();
        c += s->b;
        /* the new columns of H = QᵀW: rows 0..c of the block's columns (the upper triangle) */
        gram(s, s->Q, c, s->W + (int64_t)(c - s->b) * s->nl, s->b, s->small);
        for (int j = 0; j < s->b; j++)
            memcpy(s->H + (int64_t)(c - s->b + j) * s->cap, s->small + (int64_t)j * c,
                   (size_t)c * sizeof *s->H);
        if (c >= k) st = ritz(s, c, k, sv, &rep->residual, err);
        rep->blocks = blk + 1;
        t_dense += tg_now() - t0;
        tg_phase_add(ph, 1);
        if (c >= k && rep->residual <= tol) break;
        if (c >= k && s->give_up && hopeless(hist, blk, nb, rep->residual, tol)) break;
    }
    tg_phase_close(ph);
    if (st) goto done;
    rep->converged = rep->residual <= tol;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)s->nl, k, c, 1, s->Q, (int)s->nl,
                sv, c, 0, s->local ? vec : v, (int)s->nl);
    if (!s->local) st = tg_runtime_gather_rows(v, s->nl, vec, s->n, s->n, k, sizeof *v, err);
    if (!st && tg_runtime_rank() == 0) memcpy(val, s->lam, (size_t)k * sizeof *val);
done:
    rep->block = s->b;
    rep->seconds_dense += t_dense;
    free(hist);
    free(v);
    free(sv);
    free(s->lam);
    free(s->norm);
    free(s->col);
    free(s->small);
    free(s->H);
    free(s->T);
    free(s->W);
    free(s->Q);
    return st;
}

/* The block width: 2k columns, at least k + 10, at most n. */
static int block_width(int k, int64_t n) {
    int b = k + (k > 10 ? k : 10);
    return b > n ? (int)n : b;
}

static tg_status pca_approx(tg_geno *g, const tg_pca_opts *o, double *vec, double *val,
                            tg_pca_report *rep, tg_error *err) {
    krylov s = {.g = g, .n = tg_geno_n(g), .m = tg_geno_m(g), .rep = rep};
    tg_geno_local(g, &s.i0, &s.nl);
    s.b = block_width(o->k, s.n);
    int nb = o->max_blocks > 0 ? o->max_blocks : 1;
    if ((int64_t)nb * s.b > s.n) nb = (int)(s.n / s.b); /* the basis spans at most n */
    return krylov_run(&s, o->k, nb, o->tol, o->seed, vec, val, err);
}

tg_status tg_pca_eig(double *K, int64_t n, int k, double *vec, double *val, tg_pca_report *rep,
                     tg_error *err) {
    if (n < 1 || n > INT32_MAX || k < 1 || k > n)
        return tg_error_set(err, TG_ERR_ARG, "PCA: %d eigenpairs of a %lld × %lld matrix", k,
                            (long long)n, (long long)n);
    tg_pca_report own = {0};
    if (!rep) rep = &own;
    krylov s = {.K = K, .local = 1, .give_up = 1, .n = n, .nl = n, .rep = rep};
    s.b = block_width(k, n);
    /* the basis at most n/4 columns and TG_PCA_EXACT_BLOCKS blocks: its products and
     * orthogonalisation then cost a small part of dsyevr's ~(4/3)n³ when it does not converge */
    int64_t nb = n / 4 / s.b;
    if (nb > TG_PCA_EXACT_BLOCKS) nb = TG_PCA_EXACT_BLOCKS;
    double t0 = tg_now();
    tg_status st = TG_OK;
    tg_blas_host(1);
    rep->converged = 0;
    if (nb >= 2) st = krylov_run(&s, k, (int)nb, TG_PCA_EXACT_TOL, 1, vec, val, err);
    rep->seconds_krylov = tg_now() - t0;
    rep->lapack = !st && !rep->converged;
    if (rep->lapack) st = lapack_eig(K, n, k, vec, val, err);
    tg_blas_host(0);
    rep->converged = !st;
    rep->seconds_dense = tg_now() - t0;
    return st;
}

static tg_status pca_exact(tg_geno *g, int k, double *vec, double *val, tg_pca_report *rep,
                           tg_error *err) {
    const int64_t n = tg_geno_n(g);
    const int root = tg_runtime_rank() == 0;
    double *K = NULL;
    if (root && ((double)n * (double)n * sizeof *K > (double)SIZE_MAX ||
                 !(K = tg_malloc_n(n, n, sizeof *K, err))))
        return tg_error_set(err, TG_ERR_NOMEM, "exact PCA: the %lld × %lld relationship matrix "
                            "(%.3g GB) does not fit in memory; --pca approx needs no such matrix",
                            (long long)n, (long long)n, 8e-9 * (double)n * (double)n);
    double t0 = tg_now();
    tg_status st = tg_grm(g, K, n, err);
    rep->seconds_products = tg_now() - t0;
    if (!st && root) st = tg_pca_eig(K, n, k, vec, val, rep, err);
    free(K);
    return st;
}

tg_status tg_pca_snps(const tg_bed *bed, int64_t **snps, int64_t *m, int64_t *dropped,
                      tg_error *err) {
    int64_t *keep = tg_malloc_n(bed->n_snps ? bed->n_snps : 1, 1, sizeof *keep, err);
    *snps = NULL;
    *m = 0;
    if (!keep) return TG_ERR_NOMEM;
    for (int64_t j = 0; j < bed->n_snps; j++) {
        int code = tg_chrom_code(bed->snps[j].chrom);
        if (code >= 1 && code <= 22) keep[(*m)++] = j;
    }
    *dropped = bed->n_snps - *m;
    if (!*m) {
        free(keep);
        return tg_error_set(err, TG_ERR_ARG, "%s: none of the %lld variants is on an autosome "
                            "(chromosomes 1-22): PCA uses autosomes only, as plink2 --pca does",
                            bed->prefix, (long long)bed->n_snps);
    }
    *snps = keep;
    return TG_OK;
}

tg_status tg_pca_geno(const tg_bed *bed, tg_geno **out, int64_t *dropped, tg_error *err) {
    tg_geno_source *src = NULL;
    int64_t *keep, m;
    tg_status st = tg_pca_snps(bed, &keep, &m, dropped, err);
    if (st) return st;
    st = tg_geno_source_bed(bed, &src, err);
    if (!st) st = tg_geno_source_select(src, NULL, bed->n_samples, keep, m, err);
    if (!st) st = tg_geno_from_source(src, 1, out, err);
    tg_geno_source_free(src);
    free(keep);
    return st;
}

tg_status tg_pca(tg_geno *g, const tg_pca_opts *o, double *vec, double *val, tg_pca_report *rep,
                 tg_error *err) {
    const int64_t n = tg_geno_n(g);
    memset(rep, 0, sizeof *rep);
    if (o->k < 1 || o->k > n)
        return tg_error_set(err, TG_ERR_ARG, "PCA: %d PCs of %lld samples: expected 1 to %lld",
                            o->k, (long long)n, (long long)n);
    if (tg_runtime_rank() == 0 && (!vec || !val))
        return tg_error_set(err, TG_ERR_ARG, "PCA: no output arrays");
    if (n > INT32_MAX) /* BLAS and LAPACK take the samples as an int */
        return tg_error_set(err, TG_ERR_ARG, "PCA: %lld samples: at most %d", (long long)n,
                            INT32_MAX);
    rep->approx = o->mode == TG_PCA_APPROX || (o->mode == TG_PCA_AUTO && n > TG_PCA_EXACT_MAX);
    return rep->approx ? pca_approx(g, o, vec, val, rep, err)
                       : pca_exact(g, o->k, vec, val, rep, err);
}
