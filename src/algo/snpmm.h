/* Internal view of the genotype product: the block sizes (tests cover block edges with small
 * blocks; the benchmark reports them) and the product on caller-held StarPU handles. */
#ifndef TG_ALGO_SNPMM_H
#define TG_ALGO_SNPMM_H
#include <starpu.h>

#include "tilegwas.h"

/** tg_geno_from_int8 with @p rows_per_block samples per Z·Λ task and @p snps_per_block SNPs per
 * Zᵀ·Λ̃ task (0: the default, see the header comment of src/algo/snpmm.c). */
tg_status tg_geno_from_int8_blocks(const int8_t *g, int64_t n, int64_t m, int64_t ld, int scale,
                                   int64_t rows_per_block, int64_t snps_per_block, tg_geno **out,
                                   tg_error *err);
/** The block sizes a genotype matrix uses. */
void tg_geno_blocks(const tg_geno *g, int64_t *rows_per_block, int64_t *snps_per_block);
/** Output blocks of a product: row blocks of samples (trans 0) or blocks of SNPs (trans 1), of
 * the sizes tg_geno_blocks gives (the last one smaller). */
int64_t tg_geno_nblocks(const tg_geno *g, int trans);
/** Inserts the tasks of one product without waiting, on handles the caller registered: @p in
 * (matrix, table rows × k) and out_blocks[b] (matrix, rows of block b × k), so that vectors may
 * stay on the devices across products. @p offset[k] is tg_fivecodes_arg.offset (trans 0:
 * Σ_j c_j·in_j; trans 1: Σ_i in_i; codelets/fivecodes.h). No argument checks. */
tg_status tg_geno_mul_submit(tg_geno *g, int trans, int k, tg_prec prec, const double *offset,
                             starpu_data_handle_t in, const starpu_data_handle_t *out_blocks,
                             tg_error *err);
#endif
