/* VCF and BCF genotypes (through htslib) into a fileset built in memory (io/fileset.h). */
#ifndef TG_IO_VCF_H
#define TG_IO_VCF_H
#include "tilegwas.h"

/** Reads the VCF/BCF @p o->path (o->format TG_INPUT_VCF or TG_INPUT_BCF) into @p bed; what it
 * skipped or rounded goes to @p rep (steps and notes). On failure @p bed is zeroed. */
tg_status tg_vcf_read(const tg_input_opts *o, tg_bed *bed, tg_input_report *rep, tg_error *err);
#endif
