/* The int8 panel encoders (geno/panels.h), moved from algo/build.c and algo/rr.c: their rules
 * for missing calls (the nearest integer to the training mean; the [X0 | M] mask that keeps the
 * ridge's mean imputation exact) are stated once, here. */
#include "geno/panels.h"

#include <math.h>
#include <string.h>

#include "geno/source.h"

double tg_geno_nearest_2p(double p) { return floor(2 * p + 0.5); }

tg_status tg_kpanels_chunk(void *ctx, const double *freq, int64_t j0, int64_t nj, int64_t i0,
                           int64_t ni, int8_t *x, int64_t ld, tg_error *err) {
    const tg_kpanels *k = ctx;
    const int64_t w = k->kind == TG_KERNEL_IBS ? 2 : 1;
    (void)err;
    /* per SNP: the value of a missing call and the shift (linear: centred by the integer
     * nearest 2p, exactly; see tilegwas.h); an SNP without training calls is 0 for every
     * sample, so it adds nothing to any kernel */
    int8_t fill[TG_KPANELS_SNPS], shift[TG_KPANELS_SNPS], keep[TG_KPANELS_SNPS];
    for (int64_t j = 0; j < nj; j++) {
        double p = freq[j0 + j];
        keep[j] = !isnan(p);
        fill[j] = keep[j] ? (int8_t)tg_geno_nearest_2p(p) : 0;
        shift[j] = k->kind == TG_KERNEL_LINEAR ? fill[j] : 0;
    }
    for (int p = 0; p < k->np; p++) {
        if (!k->enc[p]) continue;
        const int64_t r0 = (int64_t)p * k->nb, rows = p == k->np - 1 ? k->n - r0 : k->nb;
        /* the panel's rows in the tile [i0, i0 + ni) of the pass's rows */
        const int64_t lo = k->off[p] > i0 ? k->off[p] : i0,
                      hi = k->off[p] + rows < i0 + ni ? k->off[p] + rows : i0 + ni;
        /* sample by sample: each writes its chunk of one panel column contiguously */
        for (int64_t r = lo - k->off[p]; r < hi - k->off[p]; r++) {
            const int8_t *xr = x + (k->off[p] + r - i0);
            int8_t *e = k->enc[p] + r * k->enc_pad + j0 * w;
            for (int64_t j = 0; j < nj; j++) {
                int8_t v = xr[j * ld];
                if (v == TG_GENO_MISSING) v = fill[j];
                v = keep[j] ? (int8_t)(v - shift[j]) : 0;
                if (w == 1) {
                    e[j] = v;
                } else { /* ibs: ([g ≥ 1], [g ≥ 2]), so Σ(e_i − e_j)² = Σ|g_i − g_j| */
                    e[2 * j] = v >= 1;
                    e[2 * j + 1] = v >= 2;
                }
            }
        }
    }
    return TG_OK;
}

void tg_geno_ridge_panel(const tg_geno_source *s, const double *freq, int scale, int64_t j0,
                         int nbj, int64_t npad, int mask, int8_t *x, double *vec) {
    const int64_t n = s->n;
    double *mu = vec, *sc = vec + nbj;
    memset(x, 0, (size_t)(npad * (mask ? 2 * nbj : nbj)));
    for (int t = 0; t < nbj; t++) {
        const int64_t j = j0 + t;
        /* the mask columns follow the genotype columns, only in the [X0 | M] layout */
        int8_t *col = x + t * npad, *m = mask ? x + (nbj + t) * npad : NULL;
        tg_geno_source_read(s, 0, n, j, 1, col, npad);
        for (int64_t i = 0; i < n; i++) {
            int obs = col[i] != TG_GENO_MISSING;
            if (!obs) col[i] = 0;
            if (m) m[i] = (int8_t)obs;
        }
        /* monomorphic or all-missing (p NAN): a zero column, and μ 0 so that 0·μ stays 0 */
        double p = freq[j];
        int excluded = !tg_geno_polymorphic(p);
        mu[t] = excluded ? 0 : 2 * p;
        sc[t] = excluded ? 0 : scale ? 1 / sqrt(2 * p * (1 - p)) : 1;
    }
}
