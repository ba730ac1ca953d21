/* Internal helpers shared by the ridge CG solver (cg.c), the GRM (grm.c) and the RR baseline
 * (rr.c): written only in terms of the genotype matrix products of snpmm.c. */
#ifndef TG_ALGO_CG_H
#define TG_ALGO_CG_H
#include <stdint.h>

#include "tilegwas.h"

/** Columns tg_geno_mul takes in one call. */
#define TG_CG_MAXK 64

/** FP64 Z·in (trans 0) or Zᵀ·in (trans 1) for any k ≥ 1 on this rank's samples, as
 * tg_geno_mul_rows (snpmm.h: trans 0 gives this rank's rows, trans 1 reads them and sums over
 * the ranks), in calls of at most TG_CG_MAXK columns; adds the time spent to *seconds and the
 * calls made to *calls (either may be NULL). */
tg_status tg_cg_mul(tg_geno *g, int trans, int64_t k, const double *in, int64_t ldin, double *out,
                    int64_t ldout, double *seconds, int64_t *calls, tg_error *err);
#endif
