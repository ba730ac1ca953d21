/* The tile Cholesky's entry for a matrix whose map is made before its tiles exist (the KRR
 * build in the map's precisions, src/algo/build.c); tg_cholesky is in include/tilegwas.h. */
#ifndef TG_ALGO_CHOLESKY_H
#define TG_ALGO_CHOLESKY_H
#include "runtime/runtime.h"
#include "tilegwas.h"

/* Inserts the task that writes lower tile (i, j)'s statistics, as its entries will be, into
 * @p out (3 doubles, as tg_cl_tilestats writes them); nonzero when the runtime refused it. */
typedef int (*tg_chol_measure)(void *ctx, const tg_matrix *A, int i, int j, tg_handle out);

/* tg_cholesky with the map made from @p measure's statistics instead of A's tiles, which need
 * hold nothing at the call: o->refill (required) then writes every tile in the precision the map
 * stores it in, with the map raised after a loss of positive definiteness as tg_cholesky's
 * refill comment says. A matrix that would not fit in its build precision exists only in the
 * map's. The report's build_seconds is the first refill's. */
tg_status tg_cholesky_measured(tg_matrix *A, const tg_chol_opts *o, tg_chol_measure measure,
                               void *ctx, tg_chol_report *r, tg_error *err);
#endif
