/* The CPU's 5codes products on AMX tiles (codelets/fivecodes_amx.c): D·A for up to
 * TG_FC_AMX_MAXK columns, the part of the product that the lookup kernel's tables compute. */
#ifndef TG_CODELETS_FIVECODES_AMX_H
#define TG_CODELETS_FIVECODES_AMX_H
#include <stddef.h>
#include <stdint.h>

#include "codelets/fivecodes.h"

#define TG_FC_AMX_MAXK 10 /* columns a pass over the digits' tiles: five accumulator tiles */

/** Whether this process can use AMX tiles (the CPU has them, the kernel grants them, and
 * TILEGWAS_AMX is not 0); asks the kernel once. */
int tg_fc_amx_available(void);
/** Turns the AMX products off (0) or back on where available, for the products submitted
 * after it (tests: the lookup kernel on a CPU with AMX); returns the previous setting. */
int tg_fc_amx_use(int on);
/** Whether a part of @p nt table rows keeps its integer sums within int32. */
int tg_fc_amx_fits(size_t nt);
/** P (rows × a->k, row-major) = D·A over the part: D the codes' digits (as the lookup kernel's
 * arguments: codes from the part's first group, @p groups of them), A_t = a_t·in_t with a_t =
 * coef[2t] for Z·Λ, 1 for Zᵀ·Λ̃, cut into slices, TG_FC_AMX_MAXK columns at a time over the
 * same digits; the slices of a part are made once and shared by the product's blocks (keyed by
 * a->product and the columns). */
void tg_fc_amx_product(const struct tg_fivecodes_arg *a, const uint8_t *codes, size_t rows,
                       size_t groups, size_t ldc, const void *in, size_t nt, size_t ldin,
                       const double *coef, double *P);

#endif
