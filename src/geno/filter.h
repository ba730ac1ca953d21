/* plink2's sample and variant selection and QC filters over an open fileset. */
#ifndef TG_GENO_FILTER_H
#define TG_GENO_FILTER_H
#include "tilegwas.h"

/** Applies @p o's selection and QC to @p bed in plink2's order, each step added to @p rep;
 * when a step removes anything, @p bed is replaced by a fileset built in memory (o->tmp_dir)
 * that holds only what is left, and the original is closed. */
tg_status tg_input_filter(tg_bed *bed, const tg_input_opts *o, tg_input_report *rep,
                          tg_error *err);
#endif
