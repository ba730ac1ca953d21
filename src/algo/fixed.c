/* Fixed effects for the ridge solvers (algo/fixed.h). With C = [1, covariates] over a
 * phenotype's samples and Q an orthonormal basis of its columns, Frisch–Waugh–Lovell gives the
 * penalised genotype effects from the projected system (ZᵀMZ + λI)β = ZᵀMy, M = I − QQᵀ, and the
 * unpenalised α from the least squares of y − Zβ on C. Q comes from Gram–Schmidt applied twice
 * ("twice is enough": orthogonal to working precision) in the order of the design, so that of
 * two collinear columns the later is the one left out. */
#include "algo/fixed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/cg.h"
#include "base/hash.h"
#include "runtime/runtime.h"

/* Whether row i has y and every covariate. */
static int observed(const double *y, const double *covar, int64_t ldc, int ncovar, int64_t i) {
    if (y && isnan(y[i])) return 0;
    for (int j = 0; j < ncovar; j++)
        if (!isfinite(covar[i + j * ldc])) return 0;
    return 1;
}

double tg_fixed_row(const double *covar, int64_t ldc, int ncovar, int64_t i, const double *alpha) {
    double s = alpha[0];
    for (int j = 0; j < ncovar; j++) s += covar[i + j * ldc] * alpha[j + 1];
    return s;
}

int tg_fixed_basis(int64_t n, const double *y, const double *covar, int64_t ldc, int ncovar,
                   double *Q, int64_t ldq, double *R, int ldr, int *kept, int *why) {
    int r = 0;
    double h[ncovar + 1];
    for (int j = 0; j <= ncovar; j++) {
        double *v = Q + r * ldq, lo = INFINITY, hi = -INFINITY, s = 0;
        int64_t no = 0;
        for (int64_t i = 0; i < n; i++) {
            int o = observed(y, covar, ldc, ncovar, i);
            v[i] = !o ? 0 : j ? covar[i + (j - 1) * ldc] : 1;
            if (!o) continue;
            lo = fmin(lo, v[i]), hi = fmax(hi, v[i]), s += v[i], no++;
        }
        double spread = 0; /* the column's norm about its mean: what collinearity compares */
        for (int64_t i = 0; i < n && no; i++)
            if (observed(y, covar, ldc, ncovar, i)) spread += (v[i] - s / no) * (v[i] - s / no);
        spread = sqrt(spread);
        memset(h, 0, sizeof h);
        for (int pass = 0; pass < 2; pass++)
            for (int l = 0; l < r; l++) {
                const double *ql = Q + l * ldq;
                double d = 0;
                for (int64_t i = 0; i < n; i++) d += ql[i] * v[i];
                for (int64_t i = 0; i < n; i++) v[i] -= d * ql[i];
                h[l] += d;
            }
        double norm = 0;
        for (int64_t i = 0; i < n; i++) norm += v[i] * v[i];
        norm = sqrt(norm);
        int w = TG_FIXED_KEPT;
        if (!no || (j && hi == lo)) /* a covariate constant over the rows, or no row */
            w = TG_FIXED_CONSTANT;
        else if (j && norm <= TG_FIXED_TOL * spread)
            w = TG_FIXED_COLLINEAR;
        if (why) why[j] = w;
        if (w != TG_FIXED_KEPT) continue;
        for (int64_t i = 0; i < n; i++) v[i] /= norm;
        for (int l = 0; l < ldr; l++) R[l + r * ldr] = l < r ? h[l] : l == r ? norm : 0;
        kept[r++] = j;
    }
    return r;
}

void tg_fixed_free(tg_fixed *f) {
    free(f->r);
    free(f->kept);
    free(f->basis);
    free(f->Q);
    free(f->R);
    free(f->nobs);
    memset(f, 0, sizeof *f);
}

tg_status tg_fixed_make(int64_t n, const double *covar, int64_t ldc, int ncovar, int64_t nphen,
                        const double *y, int64_t ldy, tg_fixed *f, tg_error *err) {
    const int p = ncovar + 1;
    *f = (tg_fixed){.n = n, .nphen = nphen, .p = p};
    if (ncovar < 0 || (ncovar && (!covar || ldc < n)))
        return tg_error_set(err, TG_ERR_ARG, "fixed effects: %d covariate(s), matrix %s, ld %lld "
                            "< n %lld", ncovar, covar ? "given" : "NULL", (long long)ldc,
                            (long long)n);
    int64_t *first = tg_malloc_n(nphen ? nphen : 1, 1, sizeof *first, err); /* per basis */
    uint64_t *hash = tg_malloc_n(nphen ? nphen : 1, 1, sizeof *hash, err);   /* per phenotype */
    if (!first || !hash || !(f->r = tg_calloc_n(nphen, 1, sizeof *f->r, err)) ||
        !(f->kept = tg_calloc_n(nphen, p, sizeof *f->kept, err)) ||
        !(f->basis = tg_malloc_n(nphen, 1, sizeof *f->basis, err)) ||
        !(f->nobs = tg_calloc_n(nphen, 1, sizeof *f->nobs, err))) {
        free(first);
        free(hash);
        tg_fixed_free(f);
        return TG_ERR_NOMEM;
    }
    /* the phenotypes' observed sets, by hash, then compared sample by sample */
    for (int64_t c = 0; c < nphen; c++) {
        const double *yc = y + c * ldy;
        uint64_t h = TG_FNV1A_INIT;
        for (int64_t i = 0; i < n; i++) {
            const unsigned char o = (unsigned char)observed(yc, covar, ldc, ncovar, i);
            f->nobs[c] += o;
            h = tg_fnv1a(h, &o, 1);
        }
        hash[c] = h;
        int64_t b = 0;
        for (; b < f->nbasis; b++) {
            const double *yb = y + first[b] * ldy;
            if (hash[first[b]] != h) continue;
            int64_t i = 0;
            while (i < n && observed(yc, covar, ldc, ncovar, i) ==
                                observed(yb, covar, ldc, ncovar, i))
                i++;
            if (i == n) break;
        }
        if (b == f->nbasis) first[f->nbasis++] = c;
        f->basis[c] = b;
    }
    size_t pb; /* p × nbasis */
    tg_status st = tg_size_mul(p, f->nbasis, 1, &pb, err);
    if (!st && (!(f->Q = tg_malloc_n(n, (int64_t)pb, sizeof *f->Q, err)) ||
                !(f->R = tg_calloc_n(p, (int64_t)pb, sizeof *f->R, err))))
        st = TG_ERR_NOMEM;
    for (int64_t b = 0; b < f->nbasis && !st; b++) {
        const int64_t c = first[b];
        f->r[c] = tg_fixed_basis(n, y + c * ldy, covar, ldc, ncovar, f->Q + b * n * p, n,
                                 f->R + b * p * p, p, f->kept + c * p, NULL);
    }
    for (int64_t c = 0; c < nphen && !st; c++) { /* the others take their basis's */
        const int64_t c0 = first[f->basis[c]];
        f->r[c] = f->r[c0];
        memcpy(f->kept + c * p, f->kept + c0 * p, (size_t)p * sizeof *f->kept);
    }
    free(first);
    free(hash);
    if (st) tg_fixed_free(f);
    return st;
}

tg_status tg_fixed_fit(tg_geno *g, const tg_fixed *f, const double *covar, int64_t ldc,
                       const double *y, int64_t ldy, const double *beta, int64_t ldb,
                       double *alpha, int64_t lda, double *pred, int64_t ldp, tg_error *err) {
    const int64_t n = f->n, k = f->nphen;
    const int p = f->p;
    int64_t i0, nl;
    tg_geno_local(g, &i0, &nl);
    double *zb = tg_malloc_n(nl, k, sizeof *zb, err),
           *t = tg_calloc_n(p, k, sizeof *t, err);
    tg_status st = !zb || !t ? TG_ERR_NOMEM : TG_OK;
    if (!st) st = tg_cg_mul(g, 0, k, beta, ldb, zb, nl, NULL, NULL, err);
    if (st) goto done;
    /* t_c = Q_cᵀ(y_c − Zβ_c): this rank's rows, summed over the ranks */
    for (int64_t c = 0; c < k; c++)
        for (int l = 0; l < f->r[c]; l++) {
            const double *q = tg_fixed_q(f, c) + l * n + i0, *yc = y + c * ldy + i0;
            double s = 0;
            for (int64_t i = 0; i < nl; i++)
                if (q[i] != 0) s += q[i] * (yc[i] - zb[i + c * nl]);
            t[l + c * p] = s;
        }
    tg_runtime_sum(t, p * k, TG_FP64);
    for (int64_t c = 0; c < k; c++) { /* R_c α = t_c by back substitution */
        const double *R = tg_fixed_r(f, c);
        double *a = alpha + c * lda;
        for (int j = 0; j < p; j++) a[j] = 0;
        for (int l = f->r[c] - 1; l >= 0; l--) {
            double s = t[l + c * p];
            for (int u = l + 1; u < f->r[c]; u++) s -= R[l + u * p] * a[f->kept[c * p + u]];
            a[f->kept[c * p + l]] = s / R[l + l * p];
        }
        for (int64_t i = 0; pred && i < nl; i++)
            pred[i0 + i + c * ldp] = tg_fixed_row(covar, ldc, p - 1, i0 + i, a) + zb[i + c * nl];
    }
    if (pred) st = tg_runtime_gather_rows(pred + i0, ldp, pred, ldp, n, k, sizeof *pred, err);
done:
    free(zb);
    free(t);
    return st;
}

int tg_fixed_spd_solve(int r, double *S, int lds, int64_t k, double *T, int64_t ldt) {
    for (int j = 0; j < r; j++) { /* S = LLᵀ in the lower triangle */
        double d = S[j + j * lds];
        for (int l = 0; l < j; l++) d -= S[j + l * lds] * S[j + l * lds];
        if (!(d > 0)) return -1;
        S[j + j * lds] = d = sqrt(d);
        for (int i = j + 1; i < r; i++) {
            double v = S[i + j * lds];
            for (int l = 0; l < j; l++) v -= S[i + l * lds] * S[j + l * lds];
            S[i + j * lds] = v / d;
        }
    }
    for (int64_t c = 0; c < k; c++) {
        double *t = T + c * ldt;
        for (int i = 0; i < r; i++) {
            for (int l = 0; l < i; l++) t[i] -= S[i + l * lds] * t[l];
            t[i] /= S[i + i * lds];
        }
        for (int i = r - 1; i >= 0; i--) {
            for (int l = i + 1; l < r; l++) t[i] -= S[l + i * lds] * t[l];
            t[i] /= S[i + i * lds];
        }
    }
    return 0;
}
