/* The bit-plane encoder of the epistasis search (layout: codelets/epistasis.h), fed by the one
 * pass over the case-control samples. A missing call sets no bit of any plane of its SNP, so it
 * is excluded from every table that SNP enters. */
#ifndef TG_GENO_PLANES_H
#define TG_GENO_PLANES_H
#include "tilegwas.h"

/** Plane blocks of B SNPs, block_words words each; the rows the pass reads are the n[0]
 * controls, then the n[1] cases. */
typedef struct {
    uint64_t *planes;
    int B;
    int64_t words[2], n[2], block_words;
} tg_planes;

/** The tg_geno_encoder.chunk of a tg_planes (any SNPs per chunk). */
tg_status tg_planes_chunk(void *ctx, const double *freq, int64_t j0, int64_t nj, int8_t *x,
                          int64_t ld, tg_error *err);
#endif
