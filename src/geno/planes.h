/* The bit-plane encoder of the epistasis search (layout: codelets/epistasis.h), built straight
 * from a fileset's 2-bit codes: each class's samples are compacted out of every 32-sample word
 * of a SNP's row, so no per-sample value is ever formed. A missing call sets no bit of any plane
 * of its SNP, so it is excluded from every table that SNP enters. */
#ifndef TG_GENO_PLANES_H
#define TG_GENO_PLANES_H
#include "tilegwas.h"

/** Plane blocks of B SNPs, block_words words each; n[c] samples of class c, in words[c] words
 * a plane. */
typedef struct {
    uint64_t *planes;
    int B;
    int64_t words[2], n[2], block_words;
} tg_planes;

/** Writes every word of the blocks of SNPs [0, m) (the planes of the .bed's SNP snps[j], NULL:
 * SNP j; the padding bits and the SNPs past m in the last block zeros), the class of .fam sample
 * i being cls[i] (0 controls, 1 cases, −1 left out) and each class's samples in .fam order, on
 * every core, blocks in order; with @p beside the runtime's workers keep running meanwhile, so
 * that tasks waiting for the blocks run as they are built (else they are paused, as in every
 * host loop: tg_parallel_for). @p built (may be NULL) is called once for each block, with
 * the block's missing calls of the samples used, on the thread that wrote its last word, while
 * later blocks are still being built. @p pl->n must be the classes' sizes. *missing: the missing
 * calls of the samples used, every SNP. TG_ERR_NOMEM (then @p built was not called), or TG_OK. */
tg_status tg_planes_build(const tg_bed *bed, const int8_t *cls, const int64_t *snps, int64_t m,
                          const tg_planes *pl, int beside,
                          void (*built)(void *ctx, int64_t block, int64_t missing),
                          void *built_ctx, int64_t *missing, tg_error *err);

/** Whether tg_planes_build compacts with the CPU's PEXT (BMI2, chosen where it is fast: Intel,
 * and AMD from Zen 3) or with its portable equivalent: @p use 1 or 0 sets it (1 only where the
 * CPU has BMI2), −1 restores the automatic choice. Returns the choice now in use. Not
 * thread-safe (tests run both). */
int tg_planes_use_pext(int use);
#endif
