/* Ridge regression (SNP-BLUP) by preconditioned conjugate gradients, never forming ZᵀZ: each
 * iteration is one product Z·P and one product Zᵀ·Q for all phenotypes at once (the PCG use
 * case of the 5codes paper, section on single-step models), plus O(m·k) vector work.
 *
 * Per phenotype c, with O_c its observed samples (n_c), d_c their 0/1 indicator, D_c = diag(d_c):
 *   min over μ, β of ‖D_c(y_c − μ1 − Zβ)‖² + λ‖β‖².
 * The intercept is not penalised; eliminating it centers y_c and the columns of Z over O_c:
 *   (Z̃ᵀZ̃ + λI)·β = Z̃ᵀỹ,  Z̃ = C_c Z,  C_c = D_c − d_c d_cᵀ/n_c,  ỹ = C_c y_c.
 * C_c is a projection, so Z̃ᵀZ̃·v = Zᵀ·(C_c·(Z·v)): after the product Z·P, column c is centered
 * over O_c and zeroed elsewhere, then multiplied by Zᵀ. One product pair serves every phenotype
 * whatever its missing values. Columns that converge leave the block (the products shrink).
 * Covariates (fixed effects beside the intercept) generalise C_c to M_c = I − Q_cQ_cᵀ, Q_c an
 * orthonormal basis of [1, covariates] over O_c (algo/fixed.h; without covariates Q_c = d_c/√n_c
 * and M_c = C_c): the same two passes between the products, with r_c sums instead of one.
 * The Jacobi preconditioner diag(Z̃ᵀZ̃) + λ is computed exactly from the genotypes
 * (tg_ridge_jacobi_*): from per-SNP genotype counts, in one pass over the data.
 *
 * Several MPI ranks: vectors over samples (Z·P, the centered phenotypes) hold this rank's rows
 * only (tg_geno_local), vectors over SNPs (β, r, z, p, Zᵀ·Q) are whole on every rank. The
 * column sums of the centering and Zᵀ·Q are summed over the ranks with the same bits on each
 * (tg_runtime_sum), so every rank computes the same α, β and stopping decisions and runs the
 * same iterations; the genotype counts of the Jacobi diagonal are summed as integers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/cg.h"
#include "algo/fixed.h"
#include "algo/snpmm.h"
#include "base/parallel.h"
#include "geno/pass.h"
#include "io/out.h"
#include "runtime/runtime.h"

tg_status tg_cg_mul(tg_geno *g, int trans, int64_t k, const double *in, int64_t ldin, double *out,
                    int64_t ldout, double *seconds, int64_t *calls, tg_error *err) {
    double t0 = tg_now();
    for (int64_t c = 0; c < k; c += TG_CG_MAXK) {
        int64_t kc = k - c < TG_CG_MAXK ? k - c : TG_CG_MAXK;
        tg_status st = tg_geno_mul_rows(g, trans, kc, TG_FP64, in + c * ldin, ldin,
                                        out + c * ldout, ldout, err);
        if (st) return st;
        if (calls) ++*calls;
    }
    if (seconds) *seconds += tg_now() - t0;
    return TG_OK;
}

tg_cg_opts tg_cg_defaults(void) {
    return (tg_cg_opts){.lambda = 1, .tol = 1e-8, .max_iter = 1000};
}

/* ---- The Jacobi diagonal from genotypes, column block by column block. */

enum { GENO_BLOCK = 256 };

/* diag_c[j] = Σ_{O_c} Z_ij² − (Σ_{O_c} Z_ij)²/n_c. Z_ij takes one value per genotype class
 * (z_0, z_1, z_2; 0 when missing), so the sums need only each class's count over O_c: counted
 * over this rank's samples, minus the counts over those of them c lacks (few, usually), then
 * summed over the ranks as integers, so the diagonal is one rank's bit for bit. The counts are
 * taken GENO_BLOCK SNPs at a time on every core (one pass over the rank's rows of the .bed). */
struct jacobi_job {
    const tg_geno_source *src;
    int64_t i0, nl, m, nphen;
    const int64_t *nmiss, *miss; /* this rank's samples each phenotype lacks (local indices) */
    int64_t *cnt; /* cnt[3·(j + c·m) + x]: samples of O_c with genotype x at SNP j */
};

static void jacobi_chunk(void *ctx, int64_t chunk, void *scratch) {
    struct jacobi_job *jb = ctx;
    const int64_t n = jb->nl, j0 = chunk * GENO_BLOCK;
    const int64_t nj = jb->m - j0 < GENO_BLOCK ? jb->m - j0 : GENO_BLOCK;
    const int64_t *nmiss = jb->nmiss, *miss = jb->miss;
    int8_t *buf = scratch;
    tg_geno_source_read(jb->src, jb->i0, n, j0, nj, buf, n);
    for (int64_t jj = 0; jj < nj; jj++) {
        const int8_t *x = buf + jj * n;
        int64_t obs, a1, two, all[4]; /* by genotype + 1: missing, 0, 1, 2 */
        tg_geno_count_column(x, n, &obs, &a1, &two); /* values checked by the genotype pass */
        all[0] = n - obs, all[2] = a1 - 2 * two, all[3] = two, all[1] = obs - all[2] - two;
        for (int64_t c = 0; c < jb->nphen; c++) {
            int64_t cnt[4] = {all[0], all[1], all[2], all[3]};
            for (int64_t t = nmiss[c]; t < nmiss[c + 1]; t++) cnt[(uint8_t)(x[miss[t]] + 1) & 3]--;
            memcpy(jb->cnt + 3 * (j0 + jj + c * jb->m), cnt + 1, 3 * sizeof *cnt);
        }
    }
}

static tg_status jacobi(const tg_geno_source *src, const tg_geno *g, int scale,
                        int64_t nphen, const double *y, int64_t ldy, double *d, int64_t ldd,
                        tg_error *err) {
    const int64_t n = tg_geno_n(g), m = tg_geno_m(g);
    if (nphen < 1 || ldy < n || ldd < m)
        return tg_error_set(err, TG_ERR_ARG,
                            "ridge Jacobi: nphen %lld must be ≥ 1, ldy %lld ≥ n %lld, ldd %lld "
                            "≥ m %lld",
                            (long long)nphen, (long long)ldy, (long long)n, (long long)ldd,
                            (long long)m);
    int64_t i0, nl;
    tg_geno_local(g, &i0, &nl);
    tg_status st = TG_OK;
    int64_t *nmiss = tg_calloc_n(nphen + 1, 1, sizeof *nmiss, err), *miss = NULL, *cnt = NULL;
    int64_t *nobs = tg_calloc_n(nphen, 1, sizeof *nobs, err);
    if (!nmiss || !nobs) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    /* miss[nmiss[c] .. nmiss[c+1]) are this rank's samples phenotype c lacks; nobs[c] = n_c */
    for (int64_t c = 0; c < nphen; c++) {
        nmiss[c + 1] = nmiss[c];
        for (int64_t i = 0; i < n; i++) {
            int lacks = isnan(y[i + c * ldy]) != 0;
            nobs[c] += !lacks;
            nmiss[c + 1] += lacks && i >= i0 && i < i0 + nl;
        }
    }
    if (!(miss = tg_malloc_n(nmiss[nphen] + 1, 1, sizeof *miss, err)) ||
        !(cnt = tg_malloc_n(3 * m, nphen, sizeof *cnt, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    for (int64_t c = 0, at = 0; c < nphen; c++)
        for (int64_t i = 0; i < nl; i++)
            if (isnan(y[i0 + i + c * ldy])) miss[at++] = i;
    struct jacobi_job jb = {src, i0, nl, m, nphen, nmiss, miss, cnt};
    if (tg_parallel_for_scratch((m + GENO_BLOCK - 1) / GENO_BLOCK, (size_t)(nl * GENO_BLOCK),
                                jacobi_chunk, &jb)) {
        st = tg_error_set(err, TG_ERR_NOMEM, "ridge Jacobi: out of memory");
        goto cleanup;
    }
    tg_runtime_sum_int64(cnt, 3 * m * nphen);
    const double *freq = tg_geno_freq(g);
    for (int64_t j = 0; j < m; j++) {
        const double p = freq[j];
        double z[3] = {0, 0, 0};
        if (tg_geno_polymorphic(p)) /* monomorphic / all-missing SNPs have a zero column */
            for (int x = 0; x < 3; x++)
                z[x] = (x - 2 * p) * (scale ? 1 / sqrt(2 * p * (1 - p)) : 1);
        for (int64_t c = 0; c < nphen; c++) {
            const int64_t *k = cnt + 3 * (j + c * m);
            const double nc = (double)nobs[c];
            double s1 = 0, s2 = 0;
            for (int x = 0; x < 3; x++) {
                s1 += (double)k[x] * z[x];
                s2 += (double)k[x] * z[x] * z[x];
            }
            double v = nc > 0 ? s2 - s1 * s1 / nc : 0;
            d[j + c * ldd] = v > 0 ? v : 0;
        }
    }
cleanup:
    free(cnt);
    free(miss);
    free(nobs);
    free(nmiss);
    return st;
}

tg_status tg_ridge_jacobi_bed(const tg_bed *bed, const tg_geno *g, int scale, int64_t nphen,
                              const double *y, int64_t ldy, double *d, int64_t ldd,
                              tg_error *err) {
    if (bed->n_samples != tg_geno_n(g) || bed->n_snps != tg_geno_m(g))
        return tg_error_set(err, TG_ERR_ARG,
                            "ridge Jacobi: %s has %lld samples × %lld SNPs, the genotype matrix "
                            "%lld × %lld",
                            bed->prefix, (long long)bed->n_samples, (long long)bed->n_snps,
                            (long long)tg_geno_n(g), (long long)tg_geno_m(g));
    tg_geno_source *s;
    tg_status st = tg_geno_source_bed(bed, &s, err);
    if (!st) st = jacobi(s, g, scale, nphen, y, ldy, d, ldd, err);
    tg_geno_source_free(s);
    return st;
}

tg_status tg_ridge_jacobi_int8(const int8_t *geno, int64_t ld, const tg_geno *g, int scale,
                               int64_t nphen, const double *y, int64_t ldy, double *d,
                               int64_t ldd, tg_error *err) {
    if (ld < tg_geno_n(g))
        return tg_error_set(err, TG_ERR_ARG, "ridge Jacobi: leading dimension %lld < n %lld",
                            (long long)ld, (long long)tg_geno_n(g));
    tg_geno_source *s;
    tg_status st = tg_geno_source_int8(geno, tg_geno_n(g), tg_geno_m(g), ld, &s, err);
    if (!st) st = jacobi(s, g, scale, nphen, y, ldy, d, ldd, err);
    tg_geno_source_free(s);
    return st;
}

/* ---- The solver. */

/* Projected phenotypes ỹ = M_c y_c on samples [i0, i0 + nl) (nl × nphen, ld nl): observed
 * values minus their projection on the fixed effects (the mean without covariates), 0 for the
 * others. Q_c and y are whole on every rank, so every rank computes the same projection. Fills
 * n_obs, mean and n_fixed of each report entry. */
static tg_status center_pheno(const tg_fixed *f, int64_t nphen, const double *y, int64_t ldy,
                              int64_t i0, int64_t nl, double *yt, tg_cg_pheno *pr, tg_error *err) {
    const int64_t n = f->n;
    for (int64_t c = 0; c < nphen; c++) {
        const double *yc = y + c * ldy, *Q = tg_fixed_q(f, c);
        double s = 0, t[f->p];
        for (int64_t i = 0; i < n; i++) {
            if (isnan(yc[i])) continue;
            if (!isfinite(yc[i]))
                return tg_error_set(err, TG_ERR_ARG,
                                    "ridge CG: phenotype %lld, sample %lld: value %g is not finite",
                                    (long long)c + 1, (long long)i + 1, yc[i]);
            s += yc[i];
        }
        if (f->nobs[c] < 2 || f->nobs[c] <= f->r[c])
            return tg_error_set(err, TG_ERR_ARG,
                                "ridge CG: phenotype %lld has %lld observed value(s) with every "
                                "covariate, at least 2 and more than its %d fixed effect(s) are "
                                "needed",
                                (long long)c + 1, (long long)f->nobs[c], f->r[c]);
        pr[c].n_obs = f->nobs[c];
        pr[c].mean = s / (double)f->nobs[c];
        pr[c].n_fixed = f->r[c];
        /* Q_c's first column is the intercept's: its projection is the mean, subtracted
         * exactly (a constant phenotype gives b = 0); the others are orthogonal to it */
        for (int l = 1; l < f->r[c]; l++) {
            t[l] = 0;
            for (int64_t i = 0; i < n; i++)
                if (!isnan(yc[i])) t[l] += Q[i + l * n] * (yc[i] - pr[c].mean);
        }
        for (int64_t i = 0; i < nl; i++) {
            double v = yc[i0 + i] - pr[c].mean;
            for (int l = 1; l < f->r[c] && !isnan(v); l++) v -= Q[i0 + i + l * n] * t[l];
            yt[i + c * nl] = isnan(v) ? 0 : v;
        }
    }
    return TG_OK;
}

static double dot(int64_t m, const double *a, const double *b) {
    double s = 0;
    for (int64_t j = 0; j < m; j++) s += a[j] * b[j];
    return s;
}

/* The solver's state: m × nphen blocks with leading dimension m, q (this rank's nl samples ×
 * nphen, from sample i0 on), and the active columns. */
typedef struct {
    tg_geno *g;
    int64_t m, nphen, i0, nl;
    const double *y; /* NAN where the phenotype or a covariate is missing */
    int64_t ldy;
    const tg_fixed *f;
    const tg_cg_opts *o;
    tg_cg_report *rep;
    double *b, *r, *z, *p, *pa, *wa, *q, *rz, *bnorm, *relres;
    int64_t *act, nact;
    double *x;     /* β */
    int64_t ldx;
    double *coef;  /* a scalar per column of a pass (α or β) */
    double *proj;  /* Q_cᵀq per column of a pass (p each) */
    double *part;  /* width sums per chunk of a pass */
    int width;     /* max(2, p) */
} cg_state;

/* ---- Vector passes: the iteration's O(n·k + m·k) work on all cores (one thread would spend
 * as long on it as the GPU on the products). Columns are cut in chunks of CG_CHUNK entries and
 * each chunk's sums go to its own slot, added in chunk order (pass_sum): the results do not
 * depend on the thread count. */
enum { CG_CHUNK = 16384 };
enum pass_op {
    DOTS,       /* part_l = Σ Q_c[:, l]·q, l < r_c (Q_c is 0 outside O_c) */
    PROJECT,    /* q ← q − Q_c·proj over O_c, 0 elsewhere (M_c q) */
    SHIFT,      /* wa += λ·pa, part0 = Σ pa·wa */
    STEP,       /* β += α·p, r −= α·wa, z = M⁻¹r, part0 = Σ r², part1 = Σ r·z (coef α) */
    DIRECTION,  /* p = z + coef·p, and pa = p for the next product */
    RESIDUAL    /* part0 = Σ (b − wa)² */
};

typedef struct {
    cg_state *s;
    enum pass_op op;
    const int64_t *cols; /* the phenotype of each column of the pass */
    int64_t len, nck;    /* entries per column, chunks per column */
} pass;

/* λ of phenotype c: its own with tg_cg_opts.lambdas */
static double column_lambda(const tg_cg_opts *o, int64_t c) {
    return o->lambdas ? o->lambdas[c] : o->lambda;
}

static void pass_chunk(void *ctx, int64_t u) {
    const pass *ps = ctx;
    cg_state *s = ps->s;
    const int64_t a = u / ps->nck, c = ps->cols[a], j0 = u % ps->nck * CG_CHUNK,
                  j1 = j0 + CG_CHUNK < ps->len ? j0 + CG_CHUNK : ps->len, m = s->m;
    const double k = s->coef[a], lambda = column_lambda(s->o, c);
    const double *yc = s->y + s->i0 + c * s->ldy;
    const double *dj = s->o->jacobi ? s->o->jacobi + c * s->o->ldj : NULL;
    const int64_t n = s->f->n, p = s->f->p, nq = s->f->r[c];
    const double *Q = tg_fixed_q(s->f, c) + s->i0, *h = s->proj + a * p;
    double *out = s->part + s->width * u;
    double *q = s->q + a * s->nl, *pa = s->pa + a * m, *wa = s->wa + a * m, *pc = s->p + c * m,
           *rc = s->r + c * m, *zc = s->z + c * m, *xc = s->x + c * s->ldx;
    double s0 = 0, s1 = 0;
    switch (ps->op) {
    case DOTS:
        for (int64_t l = 0; l < nq; l++) {
            double d = 0;
            for (int64_t i = j0; i < j1; i++) d += Q[i + l * n] * q[i];
            out[l] = d;
        }
        return;
    case PROJECT:
        for (int64_t i = j0; i < j1; i++) {
            double v = q[i];
            for (int64_t l = 0; l < nq; l++) v -= Q[i + l * n] * h[l];
            q[i] = isnan(yc[i]) ? 0 : v;
        }
        break;
    case SHIFT:
        for (int64_t j = j0; j < j1; j++) s0 += pa[j] * (wa[j] += lambda * pa[j]);
        if (s->o->drop && s->o->drop[c] >= 0) /* the operator on the SNPs kept */
            for (int64_t j = j0; j < j1; j++)
                if (s->o->chrom_of[j] == s->o->drop[c]) wa[j] = 0;
        break;
    case STEP:
        for (int64_t j = j0; j < j1; j++) {
            xc[j] += k * pc[j];
            double r = rc[j] -= k * wa[j], z = dj ? r / (dj[j] + lambda) : r;
            zc[j] = z;
            s0 += r * r;
            s1 += r * z;
        }
        break;
    case DIRECTION:
        for (int64_t j = j0; j < j1; j++) pc[j] = zc[j] + k * pc[j];
        memcpy(pa + j0, pc + j0, (size_t)(j1 - j0) * sizeof *pa);
        break;
    case RESIDUAL:
        for (int64_t j = j0; j < j1; j++) {
            double e = s->b[j + c * m] - wa[j];
            s0 += e * e;
        }
        break;
    }
    out[0] = s0;
    out[1] = s1;
}

/* Runs @p op on columns cols[0..k) of @p len entries; returns the pass (for pass_sum). */
static pass run_pass(cg_state *s, enum pass_op op, const int64_t *cols, int64_t k, int64_t len) {
    pass ps = {s, op, cols, len, (len + CG_CHUNK - 1) / CG_CHUNK};
    tg_parallel_for(k * ps.nck, pass_chunk, &ps);
    return ps;
}

/* Sum @p which (< width) of column a of the pass just run. */
static double pass_sum(const pass *ps, int64_t a, int which) {
    double t = 0;
    for (int64_t u = a * ps->nck; u < (a + 1) * ps->nck; u++)
        t += ps->s->part[ps->s->width * u + which];
    return t;
}

/* wa[:, a] = (Z̃ᵀZ̃ + λI)·pa[:, a] for the phenotypes cols[a], a < k; then
 * coef[a] = pa[:, a]ᵀwa[:, a]. */
static tg_status apply(cg_state *s, const int64_t *cols, int64_t k, tg_error *err) {
    tg_status st = tg_cg_mul(s->g, 0, k, s->pa, s->m, s->q, s->nl, &s->rep->seconds_products,
                             &s->rep->products, err);
    if (st) return st;
    /* M_c between the products: q ← q − Q_c(Q_cᵀq), the sums over this rank's rows added over
     * the ranks */
    const int p = s->f->p;
    pass ps = run_pass(s, DOTS, cols, k, s->nl);
    for (int64_t a = 0; a < k; a++)
        for (int l = 0; l < p; l++)
            s->proj[a * p + l] = l < s->f->r[cols[a]] ? pass_sum(&ps, a, l) : 0;
    tg_runtime_sum(s->proj, k * p, TG_FP64);
    run_pass(s, PROJECT, cols, k, s->nl);
    st = tg_cg_mul(s->g, 1, k, s->q, s->nl, s->wa, s->m, &s->rep->seconds_products,
                   &s->rep->products, err);
    if (st) return st;
    ps = run_pass(s, SHIFT, cols, k, s->m);
    for (int64_t a = 0; a < k; a++) s->coef[a] = pass_sum(&ps, a, 0);
    return TG_OK;
}

/* z = M⁻¹ r for column c (M = diag(Z̃ᵀZ̃) + λ, or I without a preconditioner). */
static void precondition(const cg_state *s, int64_t c, const double *r, double *z) {
    const double *dj = s->o->jacobi ? s->o->jacobi + c * s->o->ldj : NULL;
    const double lambda = column_lambda(s->o, c);
    for (int64_t j = 0; j < s->m; j++) z[j] = dj ? r[j] / (dj[j] + lambda) : r[j];
}

static tg_status check_args(tg_geno *g, int64_t nphen, int64_t ldy, const tg_cg_opts *o,
                            int64_t ldb, tg_error *err) {
    const int64_t n = tg_geno_n(g), m = tg_geno_m(g);
    if (nphen < 1 || ldy < n || ldb < m)
        return tg_error_set(err, TG_ERR_ARG,
                            "ridge CG: nphen %lld must be ≥ 1, ldy %lld ≥ n %lld, ldb %lld ≥ m "
                            "%lld",
                            (long long)nphen, (long long)ldy, (long long)n, (long long)ldb,
                            (long long)m);
    for (int64_t c = 0; c < (o->lambdas ? nphen : 1); c++)
        if (!(column_lambda(o, c) > 0) || !isfinite(column_lambda(o, c)))
            return tg_error_set(err, TG_ERR_ARG, "ridge CG: lambda %g%s must be positive and "
                                "finite", column_lambda(o, c), o->lambdas ? " (a column's)" : "");
    if (!(o->tol > 0) || !(o->tol < 1))
        return tg_error_set(err, TG_ERR_ARG, "ridge CG: tol %g must be in (0, 1)", o->tol);
    if (o->max_iter < 1)
        return tg_error_set(err, TG_ERR_ARG, "ridge CG: max_iter %d must be ≥ 1", o->max_iter);
    if (o->ncovar < 0 || (o->ncovar && (!o->covar || o->ldc < n)))
        return tg_error_set(err, TG_ERR_ARG, "ridge CG: %d covariate(s), matrix %s, ld %lld < n "
                            "%lld", o->ncovar, o->covar ? "given" : "NULL", (long long)o->ldc,
                            (long long)n);
    if (o->drop && !o->chrom_of)
        return tg_error_set(err, TG_ERR_ARG, "ridge CG: SNP groups to leave out without the "
                            "SNPs' groups");
    if (o->jacobi && o->ldj < m)
        return tg_error_set(err, TG_ERR_ARG, "ridge CG: Jacobi leading dimension %lld < m %lld",
                            (long long)o->ldj, (long long)m);
    return TG_OK;
}

/* One iteration for the active columns: updates x, r, p; a column whose residual reaches the
 * tolerance leaves the active list. */
static tg_status iterate(cg_state *s, int iter, tg_error *err) {
    const int64_t m = s->m;
    tg_status st = apply(s, s->act, s->nact, err); /* pa: p's active columns, in act's order */
    if (st) return st;
    for (int64_t a = 0; a < s->nact; a++) { /* coef: pᵀAp, then α */
        const double pw = s->coef[a];
        if (!(pw > 0) || !isfinite(pw))
            return tg_error_set(err, TG_ERR_NUMERIC,
                                "ridge CG: breakdown at iteration %d for phenotype %lld (pᵀAp = "
                                "%g; the system should be positive definite)",
                                iter, (long long)s->act[a] + 1, pw);
        s->coef[a] = s->rz[s->act[a]] / pw;
    }
    pass ps = run_pass(s, STEP, s->act, s->nact, m);
    for (int64_t c = 0; c < s->nphen; c++) s->relres[c] = NAN;
    int64_t keep = 0;
    for (int64_t a = 0; a < s->nact; a++) {
        const int64_t c = s->act[a];
        tg_cg_pheno *pr = &s->rep->pheno[c];
        pr->iterations = iter;
        pr->relres = s->relres[c] = sqrt(pass_sum(&ps, a, 0)) / s->bnorm[c];
        if (pr->relres <= s->o->tol) {
            pr->converged = 1;
            continue;
        }
        double rz = pass_sum(&ps, a, 1);
        s->coef[keep] = rz / s->rz[c]; /* β, at the column's new place (α is used up) */
        s->rz[c] = rz;
        s->act[keep++] = c;
    }
    run_pass(s, DIRECTION, s->act, keep, m);
    s->nact = keep;
    s->rep->iterations = iter;
    if (s->o->progress) s->o->progress(s->o->ctx, iter, s->nphen, s->relres);
    return TG_OK;
}

/* true_relres = ‖b − Aβ‖/‖b‖ for every phenotype with b ≠ 0 (one more product pair). */
static tg_status true_residuals(cg_state *s, tg_error *err) {
    const int64_t m = s->m;
    int64_t k = 0;
    for (int64_t c = 0; c < s->nphen; c++)
        if (s->bnorm[c] > 0) {
            memcpy(s->pa + k * m, s->x + c * s->ldx, (size_t)m * sizeof *s->pa);
            s->act[k++] = c;
        }
    if (!k) return TG_OK;
    tg_status st = apply(s, s->act, k, err);
    if (st) return st;
    pass ps = run_pass(s, RESIDUAL, s->act, k, m);
    for (int64_t a = 0; a < k; a++)
        s->rep->pheno[s->act[a]].true_relres = sqrt(pass_sum(&ps, a, 0)) / s->bnorm[s->act[a]];
    return TG_OK;
}

tg_status tg_ridge_cg(tg_geno *g, int64_t nphen, const double *y, int64_t ldy,
                      const tg_cg_opts *o, double *beta, int64_t ldb, tg_cg_report *rep,
                      tg_error *err) {
    tg_status st = check_args(g, nphen, ldy, o, ldb, err);
    if (st) return st;
    const double t0 = tg_now();
    const int64_t n = tg_geno_n(g), m = tg_geno_m(g);
    size_t mb; /* bytes of an m × nphen array */
    if (tg_size_mul(m, nphen, sizeof(double), &mb, err)) return TG_ERR_NOMEM;
    tg_fixed f = {0};
    cg_state s = {.g = g, .m = m, .nphen = nphen, .ldy = n, .f = &f, .o = o, .rep = rep,
                  .x = beta, .ldx = ldb, .width = o->ncovar + 1 > 2 ? o->ncovar + 1 : 2};
    tg_geno_local(g, &s.i0, &s.nl);
    const int64_t len = s.nl > m ? s.nl : m, nck = (len + CG_CHUNK - 1) / CG_CHUNK;
    double *yt = NULL, *ym = NULL;
    size_t bq, wn; /* s.q's bytes; s.part's columns */
    memset(rep->pheno, 0, (size_t)nphen * sizeof *rep->pheno);
    rep->iterations = 0;
    rep->products = 0;
    rep->seconds = rep->seconds_products = 0;
    if (!(s.b = tg_malloc(mb, err)) ||
        !(s.r = tg_malloc(mb, err)) ||
        !(s.z = tg_malloc(mb, err)) ||
        !(s.p = tg_malloc(mb, err)) ||
        /* the products' operands: pinned, they cross the bus twice an iteration */
        !(s.pa = tg_host_alloc(mb, err)) ||
        !(s.wa = tg_host_alloc(mb, err)) ||
        tg_size_mul(s.nl, nphen, sizeof(double), &bq, err) ||
        !(s.q = tg_host_alloc(bq, err)) ||
        !(yt = tg_malloc_n(s.nl, nphen, sizeof(double), err)) ||
        !(ym = tg_malloc_n(n, nphen, sizeof(double), err)) ||
        !(s.proj = tg_malloc_n(nphen, o->ncovar + 1, sizeof(double), err)) ||
        !(s.rz = tg_malloc_n(nphen, 1, sizeof(double), err)) ||
        !(s.bnorm = tg_malloc_n(nphen, 1, sizeof(double), err)) ||
        !(s.relres = tg_malloc_n(nphen, 1, sizeof(double), err)) ||
        !(s.act = tg_malloc_n(nphen, 1, sizeof(int64_t), err)) ||
        !(s.coef = tg_malloc_n(nphen, 1, sizeof(double), err)) ||
        tg_size_mul(s.width, nck, 1, &wn, err) ||
        !(s.part = tg_malloc_n(wn, nphen, sizeof(double), err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    /* a sample missing a covariate is missing for every phenotype */
    for (int64_t c = 0; c < nphen; c++)
        for (int64_t i = 0; i < n; i++) {
            int all = 1;
            for (int j = 0; j < o->ncovar; j++) all &= isfinite(o->covar[i + j * o->ldc]) != 0;
            ym[i + c * n] = all ? y[i + c * ldy] : NAN;
        }
    s.y = ym;
    /* b = ZᵀM_c y_c; x0 = 0, r0 = b */
    if ((st = tg_fixed_make(n, o->covar, o->ldc, o->ncovar, nphen, ym, n, &f, err)) ||
        (st = center_pheno(&f, nphen, ym, n, s.i0, s.nl, yt, rep->pheno, err)) ||
        (st = tg_cg_mul(g, 1, nphen, yt, s.nl, s.b, m, &rep->seconds_products, &rep->products,
                        err)))
        goto cleanup;
    for (int64_t c = 0; c < nphen; c++) {
        double *bc = s.b + c * m, *rc = s.r + c * m, *zc = s.z + c * m;
        if (o->drop && o->drop[c] >= 0)
            for (int64_t j = 0; j < m; j++)
                if (o->chrom_of[j] == o->drop[c]) bc[j] = 0;
        memset(beta + c * ldb, 0, (size_t)m * sizeof *beta);
        memcpy(rc, bc, (size_t)m * sizeof *rc);
        s.bnorm[c] = sqrt(dot(m, bc, bc));
        if (s.bnorm[c] == 0) { /* ỹ orthogonal to every SNP (e.g. constant y): β = 0 exactly */
            rep->pheno[c].converged = 1;
            continue;
        }
        precondition(&s, c, rc, zc);
        s.rz[c] = dot(m, rc, zc);
        memcpy(s.p + c * m, zc, (size_t)m * sizeof *s.p);
        memcpy(s.pa + s.nact * m, zc, (size_t)m * sizeof *s.pa); /* then the DIRECTION pass */
        s.act[s.nact++] = c;
    }
    for (int iter = 1; s.nact > 0 && iter <= o->max_iter; iter++)
        if ((st = iterate(&s, iter, err))) goto cleanup;
    if ((st = true_residuals(&s, err))) goto cleanup;
    for (int64_t c = 0; c < nphen; c++)
        if (!rep->pheno[c].converged) {
            st = tg_error_set(err, TG_ERR_NUMERIC,
                              "ridge CG: phenotype %lld did not reach relative residual %g in %d "
                              "iterations (last %.3g); its β is the last iterate",
                              (long long)c + 1, o->tol, o->max_iter, rep->pheno[c].relres);
            break;
        }
cleanup:
    rep->seconds = tg_now() - t0;
    free(yt);
    free(ym);
    tg_fixed_free(&f);
    free(s.b);
    free(s.r);
    free(s.z);
    free(s.p);
    tg_host_free(s.pa);
    tg_host_free(s.wa);
    tg_host_free(s.q);
    free(s.proj);
    free(s.rz);
    free(s.bnorm);
    free(s.relres);
    free(s.act);
    free(s.coef);
    free(s.part);
    return st;
}

tg_status tg_ridge_predict(tg_geno *g, int64_t nphen, const double *y, int64_t ldy,
                           const double *beta, int64_t ldb, double *pred, int64_t ldp, double *mu,
                           tg_error *err) {
    const int64_t n = tg_geno_n(g), m = tg_geno_m(g);
    if (nphen < 1 || ldy < n || ldb < m || ldp < n)
        return tg_error_set(err, TG_ERR_ARG,
                            "ridge predict: nphen %lld must be ≥ 1, ldy %lld and ldp %lld ≥ n "
                            "%lld, ldb %lld ≥ m %lld",
                            (long long)nphen, (long long)ldy, (long long)ldp, (long long)n,
                            (long long)ldb, (long long)m);
    /* ŷ = μ + Zβ, μ the fixed effect of the intercept alone: mean_O(y − Zβ) */
    tg_fixed f;
    double *a = tg_malloc_n(nphen, 1, sizeof *a, err);
    tg_status st = a ? tg_fixed_make(n, NULL, 0, 0, nphen, y, ldy, &f, err) : TG_ERR_NOMEM;
    if (st) goto done;
    for (int64_t c = 0; c < nphen && !st; c++)
        if (!f.nobs[c])
            st = tg_error_set(err, TG_ERR_ARG, "ridge predict: phenotype %lld has no value",
                              (long long)c + 1);
    if (!st) st = tg_fixed_fit(g, &f, NULL, 0, y, ldy, beta, ldb, a, 1, pred, ldp, err);
    if (!st && mu) memcpy(mu, a, (size_t)nphen * sizeof *mu);
    tg_fixed_free(&f);
done:
    free(a);
    return st;
}

/* Another cohort, centered and scaled with the training frequencies p (its own are q). With
 * s_j the training scale, w = s∘β and d_j = 2(q_j − p_j)·w_j, for sample i
 *   Σ_{j called} (x_ij − 2p_j)·w_j = (Z_q·w)_i + Σ_j d_j − Σ_{j missing at i} d_j,
 * Z_q the cohort's own unscaled centered matrix (a product), the last sum over its missing
 * calls (one pass over its genotypes). */
tg_status tg_ridge_predict_bed(tg_geno *train, int scale, const tg_bed *test, int64_t nphen,
                               const double *beta, int64_t ldb, const double *mu, double *pred,
                               int64_t ldp, tg_error *err) {
    const int64_t m = tg_geno_m(train), n = test->n_samples;
    if (test->n_snps != m || nphen < 1 || ldb < m || ldp < n)
        return tg_error_set(err, TG_ERR_ARG,
                            "ridge predict: %s has %lld SNPs, the training genotypes %lld (nphen "
                            "%lld, ldb %lld, ldp %lld)",
                            test->prefix, (long long)test->n_snps, (long long)m,
                            (long long)nphen, (long long)ldb, (long long)ldp);
    tg_geno *gt = NULL;
    double *w = NULL, *dj = NULL;
    int8_t *buf = NULL;
    tg_status st = tg_geno_from_bed(test, 0, &gt, err);
    if (st) return st;
    int64_t i0, nl; /* the rows of the cohort this rank predicts */
    tg_geno_local(gt, &i0, &nl);
    if (!(w = tg_malloc_n(m, nphen, sizeof *w, err)) ||
        !(dj = tg_malloc_n(m, nphen, sizeof *dj, err)) ||
        !(buf = tg_malloc_n(nl, GENO_BLOCK, 1, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    const double *p = tg_geno_freq(train), *q = tg_geno_freq(gt);
    for (int64_t c = 0; c < nphen; c++) {
        double total = 0;
        for (int64_t j = 0; j < m; j++) {
            double sj = !tg_geno_polymorphic(p[j]) ? 0 : scale ? 1 / sqrt(2 * p[j] * (1 - p[j])) : 1;
            w[j + c * m] = sj * beta[j + c * ldb];
            /* all-missing in the cohort (q NAN): nothing is called, no term */
            dj[j + c * m] = isnan(q[j]) ? 0 : 2 * (q[j] - p[j]) * w[j + c * m];
            total += dj[j + c * m];
        }
        for (int64_t i = i0; i < i0 + nl; i++) pred[i + c * ldp] = mu[c] + total;
    }
    /* pred += Z_q·w, through a scratch block since tg_cg_mul overwrites */
    double *zw = tg_malloc_n(nl, nphen, sizeof *zw, err);
    if (!zw) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    st = tg_cg_mul(gt, 0, nphen, w, m, zw, nl, NULL, NULL, err);
    for (int64_t c = 0; c < nphen && !st; c++)
        for (int64_t i = 0; i < nl; i++) pred[i0 + i + c * ldp] += zw[i + c * nl];
    free(zw);
    for (int64_t j0 = 0; j0 < m && !st; j0 += GENO_BLOCK) {
        int64_t nj = m - j0 < GENO_BLOCK ? m - j0 : GENO_BLOCK;
        tg_bed_decode(test, i0, nl, j0, nj, buf, nl);
        for (int64_t jj = 0; jj < nj; jj++)
            for (int64_t i = 0; i < nl; i++)
                if (buf[i + jj * nl] == TG_GENO_MISSING)
                    for (int64_t c = 0; c < nphen; c++)
                        pred[i0 + i + c * ldp] -= dj[j0 + jj + c * m];
    }
    if (!st) st = tg_runtime_gather_rows(pred + i0, ldp, pred, ldp, n, nphen, sizeof *pred, err);
cleanup:
    free(buf);
    free(dj);
    free(w);
    tg_geno_free(gt);
    return st;
}
