/* The statistics behind plink2's QC filters, over a selection of a fileset's samples: per-SNP
 * missing calls and founder genotype counts (--geno, --hwe, --maf/--max-maf/--mac), per-sample
 * missing calls (--mind), and the Hardy-Weinberg exact test. Counting is word-wise over the .bed
 * bytes with lane masks, in parallel over SNPs. */
#ifndef TG_GENO_QC_H
#define TG_GENO_QC_H
#include <stdint.h>

#include "tilegwas.h"

/** How plink2 counts a chromosome's calls: diploid (autosomes, XY, codes it does not know),
 * X (males haploid), Y (males only, haploid), haploid (MT). */
typedef enum { TG_PLOIDY_DIPLOID, TG_PLOIDY_X, TG_PLOIDY_Y, TG_PLOIDY_HAPLOID } tg_ploidy;

/** Samples as lane masks over a SNP's .bed bytes read as little-endian 64-bit words: sample i
 * is bit 2·(i mod 32) of word i / 32 (the low bit of its 2-bit code). */
typedef struct {
    int64_t words;
    uint64_t *kept, *founders, *males, *male_founders; /* selected; and founders, males (sex 1) */
    int64_t n_kept, n_founders, n_males, n_male_founders;
} tg_qc_masks;

/** Masks of the samples with keep[i] set; a founder has father and mother "0" (plink2). */
tg_status tg_qc_masks_init(tg_qc_masks *m, const tg_bed *bed, const uint8_t *keep,
                           tg_error *err);
void tg_qc_masks_free(tg_qc_masks *m);

/** One SNP's counts: missing calls among the selected samples (males on Y), and the genotype
 * counts of the selected founders (male founders on Y), A1/A1, A1/A2, A2/A2; on X also those of
 * the male founders alone (included in the first three). */
typedef struct {
    int32_t miss, hom1, het, hom2, male_hom1, male_het, male_hom2;
} tg_qc_counts;

/** counts[k] of SNP snps[k], k < n, whose ploidy is ploidy[snps[k]]. Parallel over SNPs. */
void tg_qc_snp_counts(const tg_bed *bed, const tg_qc_masks *m, const uint8_t *ploidy,
                      const int64_t *snps, int64_t n, tg_qc_counts *counts);

/** miss[i] = missing calls of sample i over SNPs snps[0..n) (a Y SNP counts for males only),
 * for the selected samples (others 0). Parallel over SNPs. */
tg_status tg_qc_sample_missing(const tg_bed *bed, const tg_qc_masks *m, const uint8_t *ploidy,
                               const int64_t *snps, int64_t n, int64_t *miss, tg_error *err);

/** Hardy-Weinberg exact test (Wigginton, Cutler & Abecasis 2005): the probability, given the
 * allele counts, of a heterozygote count no more likely than the one observed (ties within a
 * relative 2^-44 count as such, as plink2 does); 1 without a genotype. */
double tg_hwe_p(int64_t het, int64_t hom1, int64_t hom2);
/** Whether tg_hwe_p(het, hom1, hom2) < @p thr, most often without walking the whole
 * distribution (what --hwe asks of every SNP). */
int tg_hwe_below(int64_t het, int64_t hom1, int64_t hom2, double thr);
#endif
