/* Genotype input: the format's reader (io/plink.c, io/pgen.c, io/vcf.c) into one tg_bed, then
 * the selection and QC (geno/filter.c), so that every command takes every format and flag the
 * same way and the workloads see only a tg_bed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "geno/filter.h"
#include "io/fileset.h"
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

/* The key a variant is matched by across filesets: chromosome, position, ID. */
static uint64_t snp_key(const tg_snp *s) {
    uint64_t h = tg_fnv1a(TG_FNV1A_INIT, s->chrom, strlen(s->chrom) + 1);
    h = tg_fnv1a(h, &s->pos, sizeof s->pos);
    return tg_fnv1a(h, s->id, strlen(s->id));
}

static int same_snp(const tg_snp *a, const tg_snp *b) {
    return a->pos == b->pos && !strcmp(a->chrom, b->chrom) && !strcmp(a->id, b->id);
}

/* cols[j]: the SNP of @p bed that is ref's SNP j, through an open-addressing table of bed's SNPs
 * (load ≤ 1/2; a repeated key keeps its first SNP, as ref's own order decides). */
static tg_status match_cols(const tg_bed *ref, const tg_bed *bed, int64_t *cols, tg_error *err) {
    uint64_t cap = 2;
    while (cap < 2 * (uint64_t)bed->n_snps) cap *= 2;
    int64_t *slot = tg_malloc_n((int64_t)cap, 1, sizeof *slot, err);
    if (!slot) return TG_ERR_NOMEM;
    memset(slot, 0xff, cap * sizeof *slot); /* -1: empty */
    for (int64_t t = 0; t < bed->n_snps; t++) {
        uint64_t h = snp_key(&bed->snps[t]) & (cap - 1);
        while (slot[h] >= 0 && !same_snp(&bed->snps[slot[h]], &bed->snps[t]))
            h = (h + 1) & (cap - 1);
        if (slot[h] < 0) slot[h] = t;
    }
    tg_status st = TG_OK;
    for (int64_t j = 0; j < ref->n_snps && !st; j++) {
        const tg_snp *r = &ref->snps[j];
        uint64_t h = snp_key(r) & (cap - 1);
        while (slot[h] >= 0 && !same_snp(&bed->snps[slot[h]], r)) h = (h + 1) & (cap - 1);
        cols[j] = slot[h];
        if (slot[h] < 0)
            st = tg_error_set(err, TG_ERR_ARG, "%s has no variant %s (chromosome %s, position "
                              "%lld), variant %lld of %s", bed->prefix, r->id, r->chrom,
                              (long long)r->pos, (long long)j + 1, ref->prefix);
        else if (strcmp(bed->snps[slot[h]].a1, r->a1) || strcmp(bed->snps[slot[h]].a2, r->a2))
            st = tg_error_set(err, TG_ERR_ARG, "%s: variant %s has A1 %s and A2 %s, %s has A1 %s "
                              "and A2 %s: the same alleles are needed", bed->prefix, r->id,
                              bed->snps[slot[h]].a1, bed->snps[slot[h]].a2, ref->prefix, r->a1,
                              r->a2);
    }
    free(slot);
    return st;
}

tg_status tg_input_match_snps(const tg_bed *ref, tg_bed *bed, const char *tmp_dir,
                              int64_t *dropped, tg_error *err) {
    int64_t *cols = tg_malloc_n(ref->n_snps, 1, sizeof *cols, err);
    if (!cols) return TG_ERR_NOMEM;
    tg_status st = match_cols(ref, bed, cols, err);
    int same = !st && ref->n_snps == bed->n_snps;
    for (int64_t j = 0; same && j < ref->n_snps; j++) same = cols[j] == j;
    *dropped = st ? 0 : bed->n_snps - ref->n_snps;
    tg_bed sub;
    if (!st && !same &&
        !(st = tg_fileset_subset(bed, NULL, bed->n_samples, cols, ref->n_snps, tmp_dir, &sub,
                                 err))) {
        tg_bed_close(bed);
        *bed = sub;
    }
    free(cols);
    return st;
}
