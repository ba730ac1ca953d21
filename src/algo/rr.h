/* Internal view of the ridge regression by the tile Cholesky: the one path behind
 * tg_ridge_chol (an int8 array) and tg_ridge_chol_bed (rows of a .bed), on any genotype
 * source (geno/source.h), so that tests can watch what a rank reads. */
#ifndef TG_ALGO_RR_H
#define TG_ALGO_RR_H
#include "algo/snpmm.h"

/** tg_ridge_chol on the selected samples × SNPs of @p src. Each rank reads only samples
 * [first, first + count) of every SNP (tg_geno_local of the genotype matrix it makes) and every
 * sample of the SNPs of its panels (panel J, SNPs [J·nb, J·nb + nb), on rank J mod R).
 * @p train: as tg_ridge_chol_bed's. */
tg_status tg_ridge_chol_source(const tg_geno_source *src, int scale, int64_t nphen,
                               const double *y, int64_t ldy, const tg_ridge_chol_opts *opts,
                               double *beta, int64_t ldb, double *mu, tg_chol_report *rep,
                               tg_geno **train, tg_error *err);
#endif
