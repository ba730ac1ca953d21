/* Fixed effects in the ridge solvers (Frisch–Waugh–Lovell): the design C = [1, covariates] of
 * each phenotype's samples as an orthonormal basis, so that the solvers apply the projection
 * M = I − QQᵀ between their genotype products, and the effects α of C from the fitted β. */
#ifndef TG_ALGO_FIXED_H
#define TG_ALGO_FIXED_H
#include <stdint.h>

#include "tilegwas.h"

/** Why tg_fixed_basis left a design column out. */
enum { TG_FIXED_KEPT = 0, TG_FIXED_CONSTANT, TG_FIXED_COLLINEAR };

/** A column is collinear with the columns before it when its residual after projecting them out
 * is at most this fraction of its norm about its mean (R² above 1 − 10⁻¹²). */
#define TG_FIXED_TOL 1e-6

/** Per phenotype c, O_c: the samples with y_c and every covariate observed; Q_c (n × r_c,
 * leading dimension n, rows outside O_c zero) orthonormal with C_c's kept columns = Q_c·R_c on
 * O_c, R_c upper triangular (r_c × r_c, leading dimension p). The intercept is column 0 of C.
 * Phenotypes with the same O_c share one Q_c and R_c (assoc's columns of one phenotype and
 * fold, one per h²: a basis per column made step 1's memory grow with the h² grid). */
typedef struct {
    int64_t n, nphen;
    int p;        /* 1 + covariates */
    int *r;       /* columns kept, per phenotype */
    int *kept;    /* kept[c·p + l], l < r[c]: the design column of Q_c's column l */
    int64_t *basis; /* per phenotype: its basis, Q_c at Q + basis[c]·n·p (tg_fixed_q) */
    int64_t nbasis; /* distinct O_c */
    double *Q;
    double *R;
    int64_t *nobs; /* |O_c| */
} tg_fixed;

/** Q_c and R_c of phenotype c. */
static inline const double *tg_fixed_q(const tg_fixed *f, int64_t c) {
    return f->Q + f->basis[c] * f->n * f->p;
}
static inline const double *tg_fixed_r(const tg_fixed *f, int64_t c) {
    return f->R + f->basis[c] * f->p * f->p;
}

/** Gram–Schmidt (twice, in order) over the rows where @p y (NULL: every row) and every covariate
 * are observed: Q (n × r, ld ldq), R (r × r upper, ld ldr), kept[0..r) the design columns kept,
 * why[j] (p entries, may be NULL) a TG_FIXED_* per design column. Returns r (0 without rows). */
int tg_fixed_basis(int64_t n, const double *y, const double *covar, int64_t ldc, int ncovar,
                   double *Q, int64_t ldq, double *R, int ldr, int *kept, int *why);

/** The bases of the @p nphen phenotypes of @p y (NAN = missing); @p covar n × ncovar (leading
 * dimension ldc, NAN = missing; NULL with ncovar 0: the intercept alone). */
tg_status tg_fixed_make(int64_t n, const double *covar, int64_t ldc, int ncovar, int64_t nphen,
                        const double *y, int64_t ldy, tg_fixed *f, tg_error *err);
void tg_fixed_free(tg_fixed *f);

/** The fixed effects given β: α_c = R_c⁻¹Q_cᵀ(y_c − Zβ_c) over O_c, into @p alpha (p × nphen,
 * ld lda; 0 for a column left out), and, when @p pred is not NULL, the fitted values
 * C·α_c + Zβ_c of every sample (NAN where a covariate is missing), whole on rank 0. */
tg_status tg_fixed_fit(tg_geno *g, const tg_fixed *f, const double *covar, int64_t ldc,
                       const double *y, int64_t ldy, const double *beta, int64_t ldb,
                       double *alpha, int64_t lda, double *pred, int64_t ldp, tg_error *err);

/** Solves S·U = T in place (T r × k, ld ldt) for S symmetric positive definite (r × r, lower
 * triangle read, overwritten by its Cholesky factor). Returns −1 when S is not positive
 * definite. */
int tg_fixed_spd_solve(int r, double *S, int lds, int64_t k, double *T, int64_t ldt);

/** Row i of the design times α (p entries): α_0 + Σ_j covar[i + j·ldc]·α_{j+1}. */
double tg_fixed_row(const double *covar, int64_t ldc, int ncovar, int64_t i, const double *alpha);
#endif
