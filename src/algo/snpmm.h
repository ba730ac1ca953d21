/* Internal view of the genotype product: the blocks (tests cover block edges with small blocks,
 * made by tg_geno_from_int8_blocks of geno/codes5.h; the benchmark reports them) and the product
 * on this rank's rows or on caller-held runtime handles. */
#ifndef TG_ALGO_SNPMM_H
#define TG_ALGO_SNPMM_H
#include "geno/codes5.h"
#include "runtime/runtime.h"
#include "tilegwas.h"

/** Output blocks of a product on this rank: row blocks of its samples (trans 0) or blocks of
 * SNPs (trans 1). */
int64_t tg_geno_nblocks(const tg_geno *g, int trans);
/** The first row of block @p b (local sample or SNP); b = tg_geno_nblocks gives the row count. */
int64_t tg_geno_block_start(const tg_geno *g, int trans, int64_t b);

/** The missing calls among this rank's samples, SNPs excluded from Z (monomorphic or all
 * missing) left out. */
int64_t tg_geno_missing(const tg_geno *g);

/** The product on this rank's samples (tg_geno_local), k ≤ 64 columns, FP64 or FP32, no
 * argument checks beyond the finiteness of @p in. trans 0: @p in m × k, @p out this rank's
 * rows of Z·in (its samples × k). trans 1: @p in this rank's rows (its samples × k), @p out the
 * m × k Zᵀ·in, summed over the ranks on every rank (collective: tg_runtime_sum). With one rank
 * the public product. */
tg_status tg_geno_mul_rows(tg_geno *g, int trans, int64_t k, tg_prec prec, const void *in,
                           int64_t ldin, void *out, int64_t ldout, tg_error *err);
/** The table rows of each part of a product on @p g (a multiple of 640; the last part may be
 * shorter), 0 for the default (tg_geno_mul_rows: parts only with GPUs): tests split products
 * on any worker. */
void tg_geno_set_part_rows(tg_geno *g, int64_t rows);
/** Whether GPUs' FP64 products may read the 2-bit tiles they make from the genotypes (1, the
 * default, where they fit: snpmm.c) or read the 5codes (0); returns the previous setting. For
 * tests and benchmarks, which compare the two. */
int tg_geno_gpu_tiles_use(int on);

/** Inserts the tasks of one product, or of one part of it, on this rank's blocks without
 * waiting, on handles the caller registered: @p in (matrix, the table rows from @p t0 × k:
 * table rows are the m SNPs for trans 0, this rank's samples for trans 1; t0 a multiple of 5)
 * and out_blocks[b] (matrix, rows of block b × k), so that vectors may stay on the devices
 * across products. The part at t0 = 0 writes the blocks, the others add to them: submit the
 * first part first. @p offset[k] is tg_fivecodes_arg.offset over the part's rows (trans 0:
 * Σ_j c_j·in_j; trans 1: Σ_i in_i; codelets/fivecodes.h), @p amax[k] its .amax (max |a_j·in_j|,
 * a_j = w_j for trans 0, 1 for trans 1). No argument checks, no sum over the
 * ranks. @p pull, where the workers are CPUs only (tg_runtime_submit_set): they
 * pull the blocks, largest first, each taking its next one as its task ends, so that a core
 * slower than its model takes fewer; the call then returns when every block's task has run.
 * With pull the caller must not hold anything those tasks wait for (an acquired handle, a
 * tag), or the wait never ends; not from a task or a callback. Without pull, with GPU workers
 * or with StarPU's submission limits set (STARPU_LIMIT_*_SUBMITTED_TASKS: a callback's
 * submission would have to wait), it returns once every task is submitted, placed by the
 * scheduler. */
tg_status tg_geno_mul_submit(tg_geno *g, int trans, int k, tg_prec prec, int64_t t0,
                             const double *offset, const double *amax, tg_handle in,
                             const tg_handle *out_blocks, int pull, tg_error *err);
#endif
