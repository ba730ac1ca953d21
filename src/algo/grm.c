/* The genomic relationship matrix K = Z·Zᵀ/m through the genotype matrix products: for each
 * block of at most TG_CG_MAXK samples, W = Zᵀ·E (E the block's identity columns, so W holds those
 * samples' rows of Z) and K[:, block] = Z·W / m. 2·⌈n/64⌉ products; the genotypes stay where
 * tg_geno keeps them (on the GPUs) between products. With scale this is plink2's
 * `--make-rel meanimpute` (variance-standardised, missing calls mean-imputed, divided by the
 * total SNP count m, zero columns included); without, `--make-rel cov meanimpute`. */
#include <stdlib.h>

#include "algo/cg.h"

tg_status tg_grm(tg_geno *g, double *K, int64_t ldk, tg_error *err) {
    const int64_t n = tg_geno_n(g), m = tg_geno_m(g);
    if (ldk < n)
        return tg_error_set(err, TG_ERR_ARG, "GRM: leading dimension %lld < n %lld",
                            (long long)ldk, (long long)n);
    tg_status st = TG_OK;
    double *e = tg_calloc((size_t)(n * TG_CG_MAXK), sizeof *e, err),
           *w = tg_malloc((size_t)(m * TG_CG_MAXK) * sizeof *w, err);
    if (!e || !w) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    for (int64_t i0 = 0; i0 < n && !st; i0 += TG_CG_MAXK) {
        int64_t k = n - i0 < TG_CG_MAXK ? n - i0 : TG_CG_MAXK;
        for (int64_t a = 0; a < k; a++) e[i0 + a + a * n] = 1;
        st = tg_cg_mul(g, 1, k, e, n, w, m, NULL, NULL, err);
        if (!st) st = tg_cg_mul(g, 0, k, w, m, K + i0 * ldk, ldk, NULL, NULL, err);
        for (int64_t a = 0; a < k; a++) e[i0 + a + a * n] = 0;
    }
    if (st) goto cleanup;
    /* the two triangles come from different summation orders: average them, so K is exactly
     * symmetric, and divide by m */
    for (int64_t j = 0; j < n; j++) {
        K[j + j * ldk] /= (double)m;
        for (int64_t i = j + 1; i < n; i++) {
            double v = 0.5 * (K[i + j * ldk] + K[j + i * ldk]) / (double)m;
            K[i + j * ldk] = K[j + i * ldk] = v;
        }
    }
cleanup:
    free(w);
    free(e);
    return st;
}
