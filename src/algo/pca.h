/* Principal components of the genotypes (pca.c): the top eigenpairs of the standardised GRM
 * K = Z·Zᵀ/m, exactly from K or approximately by block Krylov on the genotype products. */
#ifndef TG_ALGO_PCA_H
#define TG_ALGO_PCA_H
#include <stdint.h>

#include "tilegwas.h"

/** Samples above which tg_pca_opts.mode TG_PCA_AUTO takes the approximation (plink2
 * recommends --pca approx only above 5000, and forming K costs n²·m). */
#define TG_PCA_EXACT_MAX 5000

typedef enum { TG_PCA_AUTO, TG_PCA_EXACT, TG_PCA_APPROX } tg_pca_mode;

typedef struct {
    int k;            /**< PCs wanted, 1 ≤ k ≤ n */
    tg_pca_mode mode; /**< exact (K and LAPACK dsyevr), approx, or by n (TG_PCA_EXACT_MAX) */
    uint64_t seed;    /**< approx: the random start block */
    double tol;       /**< approx: stop when ‖K·v − λ·v‖ ≤ tol·λ₁ for each of the top k */
    int max_blocks;   /**< approx: at most this many Krylov blocks */
} tg_pca_opts;

/** tol 1e-6, 24 blocks, seed 1, TG_PCA_AUTO, k 10 (plink2's default count). */
tg_pca_opts tg_pca_defaults(void);

typedef struct {
    int approx;          /**< 1: block Krylov was run */
    int block, blocks;   /**< approx: block width and blocks in the basis */
    int converged;       /**< approx: every one of the top k met tol (exact: 1) */
    double residual;     /**< approx: the largest ‖K·v − λ·v‖/λ₁ of the top k */
    int64_t products;    /**< genotype products (tg_geno_mul calls of ≤ 64 columns) */
    double seconds_products, seconds_dense;
} tg_pca_report;

/** The top k eigenvalues @p val (descending) and unit eigenvectors @p vec (n × k,
 * column-major, leading dimension n) of K = Z·Zᵀ/m for the scaled genotypes @p g (m counts
 * every SNP of @p g). Exact: K formed by tg_grm, then LAPACK dsyevr for the top k. Approx:
 * randomized block Krylov (blocks of 2k, at least k + 10, columns; each block K·Y through two
 * genotype products, never forming K; Rayleigh-Ritz on the whole basis after each block, until
 * the residuals meet tol or max_blocks). Several ranks: collective; @p vec and @p val are filled
 * on rank 0 only (NULL elsewhere accepted). */
tg_status tg_pca(tg_geno *g, const tg_pca_opts *o, double *vec, double *val, tg_pca_report *rep,
                 tg_error *err);
#endif
