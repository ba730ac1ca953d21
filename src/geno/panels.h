/* The int8 panel encoders: the KRR cohort's encoding panels (one sample per column, fed by the
 * one pass) and the ridge regression's SNP panels (one SNP per column, every sample). */
#ifndef TG_GENO_PANELS_H
#define TG_GENO_PANELS_H
#include "geno/pass.h"
#include "tilegwas.h"

/** The integer nearest 2p (halves up): a missing call's value in the KRR encodings, and the
 * linear kernel's shift. */
double tg_geno_nearest_2p(double p);

/** The KRR encoder (tilegwas.h, "Kernel ridge regression"): panel p holds samples
 * [p·nb, p·nb + rows_p) of the source as columns of enc_pad int8 encodings (the padding left
 * as allocated, zero). The pass reads this rank's panels, in order; panel p starts at row
 * off[p] of each chunk. A missing call becomes the integer nearest 2p; the linear kernel
 * subtracts that integer; an SNP without a frequency is 0 everywhere; ibs writes
 * ([g ≥ 1], [g ≥ 2]) per SNP. */
typedef struct {
    tg_kernel kind;
    int64_t n, enc_pad;
    int nb, np;
    int8_t **enc;       /* np panels, NULL where not this rank's */
    const int64_t *off; /* np: the first row of this rank's panel p in a chunk (others unused) */
} tg_kpanels;

/** The tg_geno_encoder.chunk of a tg_kpanels (its SNPs per chunk: TG_KPANELS_SNPS). */
tg_status tg_kpanels_chunk(void *ctx, const double *freq, int64_t j0, int64_t nj, int64_t i0,
                           int64_t ni, int8_t *x, int64_t ld, tg_error *err);
enum { TG_KPANELS_SNPS = 64 };

/** The ridge panel of SNPs [j0, j0 + nbj) of @p s, every selected sample (tg_ridge_chol_bed):
 * @p x is npad × nbj int8 with missing calls as 0, or with @p mask npad × 2·nbj as [X0 | M],
 * M the observed mask (rows n..npad − 1 zero: the INT8 product needs a multiple of 16); @p vec
 * the SNPs' μ then s: 2p and 1/sqrt(2p(1 − p)) (1 without @p scale), 0 and 0 for an SNP the
 * centring excludes (tg_geno_polymorphic), whose column is then zero. */
void tg_geno_ridge_panel(const tg_geno_source *s, const double *freq, int scale, int64_t j0,
                         int nbj, int64_t npad, int mask, int8_t *x, double *vec);
#endif
