/* PLINK 2 filesets (.pgen/.pvar/.psam, through pgenlib) into a fileset built in memory
 * (io/fileset.h). */
#ifndef TG_IO_PGEN_H
#define TG_IO_PGEN_H
#include "tilegwas.h"

/** Reads PREFIX.pgen/.pvar/.psam (@p o->path) into @p bed; what it skipped or rounded goes to
 * @p rep (steps and notes). On failure @p bed is zeroed. */
tg_status tg_pgen_read(const tg_input_opts *o, tg_bed *bed, tg_input_report *rep, tg_error *err);
#endif
