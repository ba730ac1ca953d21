/* The genomic relationship matrix K = Z·Zᵀ/m through the genotype matrix products: for each
 * block of at most TG_CG_MAXK samples, W = Zᵀ·E (E the block's identity columns, so W holds those
 * samples' rows of Z) and K[:, block] = Z·W / m. 2·⌈n/64⌉ products; the genotypes stay where
 * tg_geno keeps them (on the GPUs) between products. With scale this is plink2's
 * `--make-rel meanimpute` (variance-standardised, missing calls mean-imputed, divided by the
 * total SNP count m, zero columns included); without, `--make-rel cov meanimpute`.
 *
 * Several MPI ranks: E holds this rank's rows only, so W = Σ_r Z_rᵀ·E_r is summed over the
 * ranks (only the ranks holding a sample of the block add anything but zeros, and W's entries
 * are exact sums of a few terms: the same as one rank's), Z·W gives each rank its rows of the
 * block's columns, and rank 0 gathers them into K. Only rank 0 holds K. */
#include <stdlib.h>

#include "algo/cg.h"
#include "runtime/runtime.h"

tg_status tg_grm(tg_geno *g, double *K, int64_t ldk, tg_error *err) {
    const int64_t n = tg_geno_n(g), m = tg_geno_m(g);
    const int root = tg_runtime_rank() == 0;
    if (root && (!K || ldk < n))
        return tg_error_set(err, TG_ERR_ARG, "GRM: no matrix, or leading dimension %lld < n %lld",
                            (long long)ldk, (long long)n);
    int64_t i0, nl;
    tg_geno_local(g, &i0, &nl);
    tg_status st = TG_OK;
    double *e = tg_calloc((size_t)(nl * TG_CG_MAXK), sizeof *e, err),
           *w = tg_malloc((size_t)(m * TG_CG_MAXK) * sizeof *w, err),
           *kb = tg_malloc((size_t)(nl * TG_CG_MAXK) * sizeof *kb, err);
    if (!e || !w || !kb) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    /* counted on the host: each product waits for its tasks */
    tg_phase *ph =
        tg_phase_open_host("grm", "products", 2 * ((n + TG_CG_MAXK - 1) / TG_CG_MAXK));
    for (int64_t b0 = 0; b0 < n && !st; b0 += TG_CG_MAXK) {
        int64_t k = n - b0 < TG_CG_MAXK ? n - b0 : TG_CG_MAXK;
        /* the block's samples that are this rank's: a = i − b0 for i in both ranges */
        int64_t a0 = i0 > b0 ? i0 - b0 : 0, a1 = i0 + nl - b0 < k ? i0 + nl - b0 : k;
        for (int64_t a = a0; a < a1; a++) e[b0 + a - i0 + a * nl] = 1;
        st = tg_cg_mul(g, 1, k, e, nl, w, m, NULL, NULL, err);
        if (!st) st = tg_cg_mul(g, 0, k, w, m, kb, nl, NULL, NULL, err);
        if (!st) tg_phase_add(ph, 2);
        if (!st)
            st = tg_runtime_gather_rows(kb, nl, root ? K + b0 * ldk : NULL, ldk, n, k, sizeof *kb,
                                        err);
        for (int64_t a = a0; a < a1; a++) e[b0 + a - i0 + a * nl] = 0;
    }
    tg_phase_close(ph);
    if (st || !root) goto cleanup;
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
    free(kb);
    free(w);
    free(e);
    return st;
}
