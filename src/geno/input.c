/* Genotype input: the format's reader (io/plink.c, io/pgen.c, io/vcf.c) into one tg_bed, then
 * the selection and QC (geno/filter.c), so that every command takes every format and flag the
 * same way and the workloads see only a tg_bed. */
#include <math.h>
#include <string.h>

#include "geno/filter.h"
#include "io/pgen.h"
#include "io/vcf.h"

void tg_input_opts_init(tg_input_opts *o) {
    *o = (tg_input_opts){.format = TG_INPUT_BED, .from_bp = -1, .to_bp = -1, .mind = NAN,
                         .geno = NAN, .hwe = NAN, .maf = NAN, .max_maf = NAN};
}

int tg_input_filters(const tg_input_opts *o) {
    return o->keep || o->remove || o->extract || o->exclude || o->chr || o->autosome ||
           o->from_bp >= 0 || o->to_bp >= 0 || !isnan(o->mind) || !isnan(o->geno) ||
           !isnan(o->hwe) || !isnan(o->maf) || !isnan(o->max_maf) || o->mac;
}

static tg_status read_input(const tg_input_opts *o, tg_bed *bed, tg_input_report *rep,
                            tg_error *err) {
    switch (o->format) {
    case TG_INPUT_BED: return tg_bed_open(o->path, bed, err);
    case TG_INPUT_PGEN: return tg_pgen_read(o, bed, rep, err);
    case TG_INPUT_VCF:
    case TG_INPUT_BCF: return tg_vcf_read(o, bed, rep, err);
    }
    return tg_error_set(err, TG_ERR_ARG, "genotype input: unknown format %d", (int)o->format);
}

tg_status tg_input_open(const tg_input_opts *o, tg_bed *bed, tg_input_report *rep,
                        tg_error *err) {
    tg_input_report own;
    if (!rep) rep = &own;
    memset(rep, 0, sizeof *rep);
    memset(bed, 0, sizeof *bed);
    if (!o->path) return tg_error_set(err, TG_ERR_ARG, "genotype input: no path given");
    tg_status st = read_input(o, bed, rep, err);
    if (st) return st;
    rep->samples_read = bed->n_samples;
    rep->snps_read = bed->n_snps;
    for (int k = 0; k < rep->nsteps; k++) rep->snps_read += rep->steps[k].snps_removed;
    if (!(st = tg_input_filter(bed, o, rep, err))) return TG_OK;
    tg_bed_close(bed);
    return st;
}
