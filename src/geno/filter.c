/* plink2's sample and variant selection and QC, in plink2's order (2.0/plink2.cc, Plink2Core;
 * checked against PLINK v2.00a3.5's logs):
 *   variants: --chr / --autosome (as the .bim is read), --from-bp/--to-bp, --extract range,
 *             --exclude range, --extract, --exclude;
 *   samples:  --keep, --remove, then --mind over the variants selected;
 *   variants: --geno, --hwe, --maf/--max-maf/--mac, all three on statistics of the samples left
 *             after --mind, each removing among the variants the previous one left.
 * Frequencies and HWE use founders only (father and mother "0"), plink2's default. A step's
 * thresholds carry plink2's 2^-44 relative slack, so that a value equal to the threshold reads
 * the same. What is left is repacked into a fileset built in memory (io/fileset.h). */
#include "geno/filter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "geno/qc.h"
#include "io/fileset.h"
#include "io/select.h"

#define SLACK 0x1p-44 /* plink2's kSmallEpsilon */

typedef struct {
    tg_bed *bed;
    const tg_input_opts *o;
    tg_input_report *rep;
    uint8_t *skeep, *vkeep, *ploidy, *hit;
    int64_t ns, nv; /* samples and SNPs left */
} filt;

/* Records a step that left ns samples and nv SNPs; an empty selection is the error naming it. */
static tg_status step(filt *f, const char *flag, const char *arg, int64_t ns, int64_t nv,
                      tg_error *err) {
    if (!tg_input_step_add(f->rep, flag, f->ns - ns, f->nv - nv, ns, nv))
        return tg_error_set(err, TG_ERR_ARG, "selection and QC: too many steps");
    f->ns = ns;
    f->nv = nv;
    if (!ns || !nv)
        return tg_error_set(err, TG_ERR_ARG, "%s%s%s removed every %s", flag, *arg ? " " : "", arg,
                            ns ? "variant" : "sample");
    return TG_OK;
}

/* keep[k] &= (hit[k] == want) over n entries; returns how many are left. */
static int64_t apply(uint8_t *keep, const uint8_t *hit, int want, int64_t n) {
    int64_t left = 0;
    for (int64_t k = 0; k < n; k++) left += keep[k] &= hit[k] == want;
    return left;
}

/* ---- variant selection */

static tg_status check_opts(const tg_input_opts *o, tg_chr_set *chr, tg_error *err) {
    tg_status st = TG_OK;
    if (o->chr && o->autosome)
        return tg_error_set(err, TG_ERR_ARG, "--chr cannot be used with --autosome (plink2's "
                            "rule)");
    if (o->chr && (st = tg_chr_set_parse(chr, o->chr, err))) return st;
    if ((o->from_bp >= 0 || o->to_bp >= 0) && (!o->chr || chr->ncodes != 1 ||
                                                strchr(o->chr, '-')))
        return tg_error_set(err, TG_ERR_ARG, "--from-bp and --to-bp need --chr with exactly one "
                            "chromosome (plink2's rule)");
    if (o->from_bp >= 0 && o->to_bp >= 0 && o->to_bp < o->from_bp)
        return tg_error_set(err, TG_ERR_ARG, "--to-bp %lld is smaller than --from-bp %lld",
                            (long long)o->to_bp, (long long)o->from_bp);
    return st;
}

static tg_status by_chrom(filt *f, const tg_chr_set *chr, tg_error *err) {
    const tg_input_opts *o = f->o;
    const tg_bed *b = f->bed;
    int64_t left = 0;
    if (!o->chr && !o->autosome) return TG_OK;
    for (int64_t j = 0; j < b->n_snps; j++) {
        const char *c = b->snps[j].chrom;
        if (j && strcmp(c, b->snps[j - 1].chrom) == 0) {
            f->vkeep[j] = f->vkeep[j - 1]; /* the same chromosome as the SNP before */
        } else if (o->chr) {
            f->vkeep[j] = (uint8_t)tg_chr_set_has(chr, c);
        } else {
            int code = tg_chrom_code(c);
            f->vkeep[j] = code >= 1 && code <= 22;
        }
        left += f->vkeep[j];
    }
    return o->chr ? step(f, "--chr", o->chr, f->ns, left, err)
                  : step(f, "--autosome", "", f->ns, left, err);
}

static tg_status by_position(filt *f, tg_error *err) {
    const tg_input_opts *o = f->o;
    if (o->from_bp < 0 && o->to_bp < 0) return TG_OK;
    int64_t left = 0, lo = o->from_bp >= 0 ? o->from_bp : 0;
    int64_t hi = o->to_bp >= 0 ? o->to_bp : INT64_MAX;
    for (int64_t j = 0; j < f->bed->n_snps; j++)
        left += f->vkeep[j] &= f->bed->snps[j].pos >= lo && f->bed->snps[j].pos <= hi;
    const char *flag = o->from_bp < 0   ? "--to-bp"
                       : o->to_bp < 0 ? "--from-bp"
                                      : "--from-bp/--to-bp";
    return step(f, flag, "", f->ns, left, err);
}

/* --extract or --exclude (@p want 1 or 0), by range or by ID, when @p range matches. */
static tg_status by_list(filt *f, const char *path, int range, int want, int this_range,
                         tg_error *err) {
    if (!path || range != this_range) return TG_OK;
    memset(f->hit, 0, (size_t)f->bed->n_snps);
    tg_status st = range ? tg_snp_ranges_mark(path, f->bed, f->hit, err)
                         : tg_snp_ids_mark(path, f->bed, f->hit, err);
    if (st) return st;
    char flag[32];
    snprintf(flag, sizeof flag, "%s%s", want ? "--extract" : "--exclude", range ? " range" : "");
    return step(f, flag, path, f->ns, apply(f->vkeep, f->hit, want, f->bed->n_snps), err);
}

static tg_status select_variants(filt *f, tg_error *err) {
    const tg_input_opts *o = f->o;
    tg_chr_set chr = {0};
    tg_status st = check_opts(o, &chr, err);
    if (!st) st = by_chrom(f, &chr, err);
    tg_chr_set_free(&chr);
    if (!st) st = by_position(f, err);
    for (int range = 1; range >= 0 && !st; range--)
        if (!(st = by_list(f, o->extract, o->extract_range, 1, range, err)))
            st = by_list(f, o->exclude, o->exclude_range, 0, range, err);
    return st;
}

static tg_status select_samples(filt *f, tg_error *err) {
    const char *path[2] = {f->o->keep, f->o->remove};
    for (int k = 0; k < 2; k++) {
        if (!path[k]) continue;
        memset(f->hit, 0, (size_t)f->bed->n_samples);
        tg_status st = tg_sample_list_mark(path[k], f->bed, f->hit, err);
        if (st) return st;
        int64_t left = apply(f->skeep, f->hit, k == 0, f->bed->n_samples);
        if ((st = step(f, k == 0 ? "--keep" : "--remove", path[k], left, f->nv, err))) return st;
    }
    return TG_OK;
}

/* ---- QC */

/* The indices of the entries left in keep[0..n) (out has room for them). */
static int64_t kept_list(const uint8_t *keep, int64_t n, int64_t *out) {
    int64_t m = 0;
    for (int64_t k = 0; k < n; k++)
        if (keep[k]) out[m++] = k;
    return m;
}

/* --mind: missing calls over the selected variants, a Y variant counting for males only. */
static tg_status qc_mind(filt *f, int64_t *vidx, tg_error *err) {
    const tg_bed *b = f->bed;
    tg_qc_masks m;
    int64_t *miss = NULL, nv = kept_list(f->vkeep, b->n_snps, vidx), ny = 0;
    tg_status st = tg_qc_masks_init(&m, b, f->skeep, err);
    if (st) return st;
    if (!(miss = tg_malloc_n(b->n_samples, 1, sizeof *miss, err))) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    if ((st = tg_qc_sample_missing(b, &m, f->ploidy, vidx, nv, miss, err))) goto done;
    for (int64_t k = 0; k < nv; k++) ny += f->ploidy[vidx[k]] == TG_PLOIDY_Y;
    double t = f->o->mind * (1 + SLACK);
    int64_t most[2] = {(int64_t)((double)(nv - ny) * t), (int64_t)((double)nv * t)};
    int64_t left = 0;
    for (int64_t i = 0; i < b->n_samples; i++)
        left += f->skeep[i] &= miss[i] <= most[b->samples[i].sex == 1];
    char arg[32];
    snprintf(arg, sizeof arg, "%g", f->o->mind);
    st = step(f, "--mind", arg, left, f->nv, err);
done:
    free(miss);
    tg_qc_masks_free(&m);
    return st;
}

/* Twice the founders' A1 and total allele counts of one SNP (a haploid call counts one allele,
 * a haploid heterozygous call half of each, as plink2 counts dosages). */
static void allele_units(const tg_qc_counts *c, int ploidy, int64_t *a1, int64_t *tot) {
    int64_t obs = (int64_t)c->hom1 + c->het + c->hom2;
    if (ploidy == TG_PLOIDY_DIPLOID) {
        *a1 = 4 * (int64_t)c->hom1 + 2 * (int64_t)c->het;
        *tot = 4 * obs;
    } else if (ploidy == TG_PLOIDY_X) {
        int64_t mobs = (int64_t)c->male_hom1 + c->male_het + c->male_hom2;
        *a1 = 4 * (int64_t)(c->hom1 - c->male_hom1) + 2 * (int64_t)(c->het - c->male_het) +
              2 * (int64_t)c->male_hom1 + c->male_het;
        *tot = 4 * (obs - mobs) + 2 * mobs;
    } else {
        *a1 = 2 * (int64_t)c->hom1 + c->het;
        *tot = 2 * obs;
    }
}

/* Whether --maf/--max-maf/--mac remove a SNP. The minor allele frequency is formed as plink2
 * forms it: A2 (its REF) count times the reciprocal of the total, then min(ref, 1 − ref); a SNP
 * without a founder call has frequency 1/2 and count 0. */
static int freq_fails(const tg_input_opts *o, const tg_qc_counts *c, int ploidy) {
    int64_t a1, tot;
    allele_units(c, ploidy, &a1, &tot);
    double ref = tot ? (double)(tot - a1) * (1.0 / (double)tot) : 0.5;
    double maf = ref < 1.0 - ref ? ref : 1.0 - ref;
    int64_t minor = a1 < tot - a1 ? a1 : tot - a1;
    return (!isnan(o->maf) && maf < o->maf * (1 - SLACK)) ||
           (!isnan(o->max_maf) && maf > o->max_maf * (1 + SLACK)) ||
           (o->mac && minor < 2 * o->mac);
}

/* --hwe on founders: autosomes, XY and codes plink2 reads as diploid; not X (plink2 tests it
 * with a sex-aware test this does not have), not Y or MT (plink2 skips them too). */
static int hwe_fails(double thr, const tg_qc_counts *c, int ploidy) {
    if (ploidy != TG_PLOIDY_DIPLOID || (int64_t)c->hom1 + c->het + c->hom2 == 0) return 0;
    return tg_hwe_below(c->het, c->hom1, c->hom2, thr * (1 - SLACK));
}

/* --geno, --hwe, --maf/--max-maf/--mac in that order, on one pass of counts. */
static tg_status qc_variants(filt *f, int64_t *vidx, tg_error *err) {
    const tg_input_opts *o = f->o;
    const tg_bed *b = f->bed;
    int do_freq = !isnan(o->maf) || !isnan(o->max_maf) || o->mac;
    if (isnan(o->geno) && isnan(o->hwe) && !do_freq) return TG_OK;
    tg_qc_masks m;
    tg_qc_counts *c = NULL;
    int64_t nv = kept_list(f->vkeep, b->n_snps, vidx);
    tg_status st = tg_qc_masks_init(&m, b, f->skeep, err);
    if (st) return st;
    if (!(c = tg_malloc_n(nv, 1, sizeof *c, err))) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    tg_qc_snp_counts(b, &m, f->ploidy, vidx, nv, c);
    char arg[32], flag[32] = "";
    int64_t left = nv;
    if (!isnan(o->geno)) {
        double t = o->geno * (1 + SLACK);
        int64_t most[2] = {(int64_t)(t * (double)m.n_kept), (int64_t)(t * (double)m.n_males)};
        for (int64_t k = 0; k < nv; k++)
            if (f->vkeep[vidx[k]] && c[k].miss > most[f->ploidy[vidx[k]] == TG_PLOIDY_Y])
                f->vkeep[vidx[k]] = 0, left--;
        snprintf(arg, sizeof arg, "%g", o->geno);
        if ((st = step(f, "--geno", arg, f->ns, left, err))) goto done;
    }
    if (!isnan(o->hwe)) {
        for (int64_t k = 0; k < nv; k++)
            if (f->vkeep[vidx[k]] && hwe_fails(o->hwe, &c[k], f->ploidy[vidx[k]]))
                f->vkeep[vidx[k]] = 0, left--;
        snprintf(arg, sizeof arg, "%g", o->hwe);
        if ((st = step(f, "--hwe", arg, f->ns, left, err))) goto done;
    }
    if (do_freq) {
        for (int64_t k = 0; k < nv; k++)
            if (f->vkeep[vidx[k]] && freq_fails(o, &c[k], f->ploidy[vidx[k]]))
                f->vkeep[vidx[k]] = 0, left--;
        if (!isnan(o->maf)) strcat(flag, "/--maf");
        if (!isnan(o->max_maf)) strcat(flag, "/--max-maf");
        if (o->mac) strcat(flag, "/--mac");
        st = step(f, flag + 1, "", f->ns, left, err);
    }
done:
    free(c);
    tg_qc_masks_free(&m);
    return st;
}

/* ---- the filtered fileset */

static tg_status rebuild(filt *f, int64_t *vidx, tg_error *err) {
    tg_bed *b = f->bed, nb;
    int64_t *sidx = tg_malloc_n(b->n_samples, 1, sizeof *sidx, err);
    if (!sidx) return TG_ERR_NOMEM;
    int64_t ns = kept_list(f->skeep, b->n_samples, sidx), nv = kept_list(f->vkeep, b->n_snps, vidx);
    tg_status st = tg_fileset_subset(b, ns < b->n_samples ? sidx : NULL, ns, vidx, nv,
                                     f->o->tmp_dir, &nb, err);
    if (!st) {
        tg_bed_close(b);
        *b = nb;
    }
    free(sidx);
    return st;
}

static uint8_t ploidy_of(const char *chrom) {
    switch (tg_chrom_code(chrom)) {
    case TG_CHR_X: return TG_PLOIDY_X;
    case TG_CHR_Y: return TG_PLOIDY_Y;
    case TG_CHR_MT: return TG_PLOIDY_HAPLOID;
    default: return TG_PLOIDY_DIPLOID;
    }
}

tg_status tg_input_filter(tg_bed *bed, const tg_input_opts *o, tg_input_report *rep,
                          tg_error *err) {
    if (!tg_input_filters(o)) return TG_OK;
    int64_t n = bed->n_samples, m = bed->n_snps, big = n > m ? n : m;
    filt f = {.bed = bed, .o = o, .rep = rep, .ns = n, .nv = m};
    int64_t *vidx = NULL;
    tg_status st = TG_ERR_NOMEM;
    if (!(f.skeep = tg_malloc_n(n, 1, 1, err)) || !(f.vkeep = tg_malloc_n(m, 1, 1, err)) ||
        !(f.ploidy = tg_malloc_n(m, 1, 1, err)) || !(f.hit = tg_malloc_n(big, 1, 1, err)) ||
        !(vidx = tg_malloc_n(m, 1, sizeof *vidx, err)))
        goto done;
    memset(f.skeep, 1, (size_t)n);
    memset(f.vkeep, 1, (size_t)m);
    for (int64_t j = 0; j < m; j++) /* a chromosome's SNPs come in runs */
        f.ploidy[j] = j && strcmp(bed->snps[j].chrom, bed->snps[j - 1].chrom) == 0
                          ? f.ploidy[j - 1]
                          : ploidy_of(bed->snps[j].chrom);
    if ((st = select_variants(&f, err)) || (st = select_samples(&f, err))) goto done;
    if (!isnan(o->mind) && (st = qc_mind(&f, vidx, err))) goto done;
    if ((st = qc_variants(&f, vidx, err))) goto done;
    if (f.ns < n || f.nv < m) st = rebuild(&f, vidx, err);
done:
    free(vidx);
    free(f.hit);
    free(f.ploidy);
    free(f.vkeep);
    free(f.skeep);
    return st;
}
