/* Internal view of the genotype product: the block sizes (tests cover block edges with small
 * blocks; the benchmark reports them), the genotype sources the preparation and the ridge
 * Jacobi read, and the product on this rank's rows or on caller-held StarPU handles. */
#ifndef TG_ALGO_SNPMM_H
#define TG_ALGO_SNPMM_H
#include <starpu.h>

#include "tilegwas.h"

/** tg_geno_from_int8 with @p rows_per_block samples per Z·Λ task and @p snps_per_block SNPs per
 * Zᵀ·Λ̃ task (0: the default, see the header comment of src/algo/snpmm.c); with several ranks
 * the blocks cut each rank's own samples. */
tg_status tg_geno_from_int8_blocks(const int8_t *g, int64_t n, int64_t m, int64_t ld, int scale,
                                   int64_t rows_per_block, int64_t snps_per_block, tg_geno **out,
                                   tg_error *err);
/** Output blocks of a product on this rank: row blocks of its samples (trans 0) or blocks of
 * SNPs (trans 1). */
int64_t tg_geno_nblocks(const tg_geno *g, int trans);
/** The first row of block @p b (local sample or SNP); b = tg_geno_nblocks gives the row count. */
int64_t tg_geno_block_start(const tg_geno *g, int trans, int64_t b);

/** A genotype source: fills @p buf (ni × nj, column-major, leading dimension ni) with samples
 * [i0, i0 + ni) of SNPs [j0, j0 + nj), A1 counts or TG_GENO_MISSING. Thread-safe. */
typedef void (*tg_geno_source)(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                               int8_t *buf);
/** The context of tg_geno_source_int8: a column-major array with leading dimension ld. */
typedef struct {
    const int8_t *g;
    int64_t ld;
} tg_int8_geno;
void tg_geno_source_int8(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                         int8_t *buf);
/** @p ctx a tg_bed. */
void tg_geno_source_bed(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                        int8_t *buf);
/** The context of tg_geno_source_bed_rows: sample i is row rows[i] of the .bed (.fam order). */
typedef struct {
    const tg_bed *bed;
    const int64_t *rows;
} tg_bed_rows;
void tg_geno_source_bed_rows(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                             int8_t *buf);

/** A genotype matrix of @p n samples × @p m SNPs read through @p src (this rank's samples
 * only), as tg_geno_from_bed; @p what names the input in errors. Collective likewise. */
tg_status tg_geno_from_source(int64_t n, int64_t m, int scale, tg_geno_source src,
                              const void *ctx, const char *what, tg_geno **out, tg_error *err);
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
/** Inserts the tasks of one product on this rank's blocks without waiting, on handles the
 * caller registered: @p in (matrix, table rows × k: m SNPs for trans 0, this rank's samples
 * for trans 1) and out_blocks[b] (matrix, rows of block b × k), so that vectors may stay on
 * the devices across products. @p offset[k] is tg_fivecodes_arg.offset (trans 0: Σ_j c_j·in_j;
 * trans 1: Σ_i in_i over this rank's samples; codelets/fivecodes.h). No argument checks, no
 * sum over the ranks. @p pull, where the workers are CPUs only (tg_runtime_submit_set): they
 * pull the blocks, largest first, each taking its next one as its task ends, so that a core
 * slower than its model takes fewer; the call then returns when every block's task has run.
 * With pull the caller must not hold anything those tasks wait for (an acquired handle, a
 * tag), or the wait never ends; not from a task or a callback. Without pull, with GPU workers
 * or with StarPU's submission limits set (STARPU_LIMIT_*_SUBMITTED_TASKS: a callback's
 * submission would have to wait), it returns once every task is submitted, placed by the
 * scheduler. */
tg_status tg_geno_mul_submit(tg_geno *g, int trans, int k, tg_prec prec, const double *offset,
                             starpu_data_handle_t in, const starpu_data_handle_t *out_blocks,
                             int pull, tg_error *err);
#endif
