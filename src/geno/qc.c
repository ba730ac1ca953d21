/* QC statistics and the HWE exact test: see qc.h.
 *
 * Word-wise counting. A SNP's bytes read as a little-endian 64-bit word hold 32 samples, sample
 * i in bits 2i (lo) and 2i+1 (hi) of its word: lo·¬hi = 01 missing, hi·¬lo = 10 heterozygous,
 * ¬hi·¬lo = 00 homozygous A1, hi·lo = 11 homozygous A2. With lo and hi moved to the even bits,
 * each class is a word of lane bits, which a mask of selected samples cuts and a popcount of
 * even bits counts. The padding codes of the last byte are never selected. */
#include "geno/qc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the lane masks read .bed bytes as little-endian words"
#endif

#define EVEN 0x5555555555555555ULL
#define SNP_CHUNK 512 /* SNPs per parallel chunk */

/* Set bits of a word whose bits are all at even positions. */
static inline int64_t lanes(uint64_t x) {
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (int64_t)((x * 0x0101010101010101ULL) >> 56);
}

static inline uint64_t load_word(const uint8_t *p, size_t bps, int64_t w) {
    uint64_t x = 0;
    size_t off = (size_t)w * 8;
    memcpy(&x, p + off, off + 8 <= bps ? 8 : bps - off);
    return x;
}

static const uint8_t *snp_bytes(const tg_bed *bed, int64_t j) {
    return bed->geno + (size_t)j * bed->bytes_per_snp;
}

tg_status tg_qc_masks_init(tg_qc_masks *m, const tg_bed *bed, const uint8_t *keep,
                           tg_error *err) {
    memset(m, 0, sizeof *m);
    m->words = (bed->n_samples + 31) / 32;
    uint64_t *all = tg_calloc(4 * (size_t)m->words, sizeof *all, err);
    if (!all) return TG_ERR_NOMEM;
    m->kept = all;
    m->founders = all + m->words;
    m->males = all + 2 * m->words;
    m->male_founders = all + 3 * m->words;
    for (int64_t i = 0; i < bed->n_samples; i++) {
        if (!keep[i]) continue;
        const tg_sample *s = &bed->samples[i];
        uint64_t bit = 1ULL << (2 * (i % 32));
        int founder = strcmp(s->father, "0") == 0 && strcmp(s->mother, "0") == 0;
        int male = s->sex == 1;
        m->kept[i / 32] |= bit;
        m->n_kept++;
        if (founder) m->founders[i / 32] |= bit, m->n_founders++;
        if (male) m->males[i / 32] |= bit, m->n_males++;
        if (founder && male) m->male_founders[i / 32] |= bit, m->n_male_founders++;
    }
    return TG_OK;
}

void tg_qc_masks_free(tg_qc_masks *m) {
    free(m->kept);
    memset(m, 0, sizeof *m);
}

/* Missing calls over mask a, genotype classes over mask g (and gm, when not NULL) of one SNP. */
static void count_one(const uint8_t *p, size_t bps, int64_t words, const uint64_t *a,
                      const uint64_t *g, int64_t ng, const uint64_t *gm, int64_t ngm,
                      tg_qc_counts *c) {
    int64_t miss = 0, h1 = 0, het = 0, gmiss = 0, mh1 = 0, mhet = 0, mmiss = 0;
    for (int64_t w = 0; w < words; w++) {
        uint64_t x = load_word(p, bps, w), lo = x & EVEN, hi = (x >> 1) & EVEN;
        uint64_t ms = lo & ~hi, ht = hi & ~lo, a1 = ~(lo | hi) & EVEN;
        miss += lanes(ms & a[w]);
        h1 += lanes(a1 & g[w]);
        het += lanes(ht & g[w]);
        gmiss += lanes(ms & g[w]);
        if (gm) {
            mh1 += lanes(a1 & gm[w]);
            mhet += lanes(ht & gm[w]);
            mmiss += lanes(ms & gm[w]);
        }
    }
    *c = (tg_qc_counts){.miss = (int32_t)miss, .hom1 = (int32_t)h1, .het = (int32_t)het,
                        .hom2 = (int32_t)(ng - gmiss - h1 - het)};
    if (gm) {
        c->male_hom1 = (int32_t)mh1;
        c->male_het = (int32_t)mhet;
        c->male_hom2 = (int32_t)(ngm - mmiss - mh1 - mhet);
    }
}

typedef struct {
    const tg_bed *bed;
    const tg_qc_masks *m;
    const uint8_t *ploidy;
    const int64_t *snps;
    int64_t n;
    tg_qc_counts *counts;
    int64_t *miss; /* sample missing counts: one array of n_samples per chunk */
    int64_t nchunks;
} qc_ctx;

static void counts_chunk(void *arg, int64_t c) {
    const qc_ctx *x = arg;
    const tg_qc_masks *m = x->m;
    int64_t end = (c + 1) * SNP_CHUNK < x->n ? (c + 1) * SNP_CHUNK : x->n;
    for (int64_t k = c * SNP_CHUNK; k < end; k++) {
        int64_t j = x->snps[k];
        const uint8_t *p = snp_bytes(x->bed, j);
        size_t bps = x->bed->bytes_per_snp;
        switch ((tg_ploidy)x->ploidy[j]) {
        case TG_PLOIDY_Y:
            count_one(p, bps, m->words, m->males, m->male_founders, m->n_male_founders, NULL, 0,
                      &x->counts[k]);
            break;
        case TG_PLOIDY_X:
            count_one(p, bps, m->words, m->kept, m->founders, m->n_founders, m->male_founders,
                      m->n_male_founders, &x->counts[k]);
            break;
        default:
            count_one(p, bps, m->words, m->kept, m->founders, m->n_founders, NULL, 0,
                      &x->counts[k]);
        }
    }
}

void tg_qc_snp_counts(const tg_bed *bed, const tg_qc_masks *m, const uint8_t *ploidy,
                      const int64_t *snps, int64_t n, tg_qc_counts *counts) {
    qc_ctx x = {.bed = bed, .m = m, .ploidy = ploidy, .snps = snps, .n = n, .counts = counts};
    tg_parallel_for((n + SNP_CHUNK - 1) / SNP_CHUNK, counts_chunk, &x);
}

/* Chunk c of the sample missing counts: SNPs [c·n/nchunks, (c+1)·n/nchunks) into its own array.
 * Missing calls are rare, so their bits are walked one by one. */
static void missing_chunk(void *arg, int64_t c) {
    const qc_ctx *x = arg;
    const tg_qc_masks *m = x->m;
    int64_t *miss = x->miss + c * x->bed->n_samples;
    for (int64_t k = c * x->n / x->nchunks; k < (c + 1) * x->n / x->nchunks; k++) {
        int64_t j = x->snps[k];
        const uint8_t *p = snp_bytes(x->bed, j);
        const uint64_t *mask = x->ploidy[j] == TG_PLOIDY_Y ? m->males : m->kept;
        for (int64_t w = 0; w < m->words; w++) {
            uint64_t v = load_word(p, x->bed->bytes_per_snp, w);
            for (uint64_t b = v & ~(v >> 1) & mask[w]; b; b &= b - 1)
                miss[w * 32 + __builtin_ctzll(b) / 2]++;
        }
    }
}

tg_status tg_qc_sample_missing(const tg_bed *bed, const tg_qc_masks *m, const uint8_t *ploidy,
                               const int64_t *snps, int64_t n, int64_t *miss, tg_error *err) {
    int64_t nchunks = tg_parallel_threads();
    if (nchunks > n) nchunks = n > 0 ? n : 1;
    qc_ctx x = {.bed = bed, .m = m, .ploidy = ploidy, .snps = snps, .n = n, .nchunks = nchunks};
    if (!(x.miss = tg_calloc((size_t)(nchunks * bed->n_samples), sizeof *x.miss, err)))
        return TG_ERR_NOMEM;
    tg_parallel_for(nchunks, missing_chunk, &x);
    for (int64_t i = 0; i < bed->n_samples; i++) {
        miss[i] = 0;
        for (int64_t c = 0; c < nchunks; c++) miss[i] += x.miss[c * bed->n_samples + i];
    }
    free(x.miss);
    return TG_OK;
}

/* ---- Hardy-Weinberg exact test.
 * With n genotypes and r copies of the rarer allele, the heterozygote count h (of r's parity)
 * has P(h) ∝ n! / (homr! h! homc!) · 2^h (the paper's eq. 1), so that neighbours follow
 *     P(h − 2) = P(h) · h(h − 1) / (4 (homr + 1)(homc + 1)),
 *     P(h + 2) = P(h) · 4 homr homc / ((h + 1)(h + 2))          (eqs. 2 and 3),
 * with homr, homc the homozygote counts at h. Starting from P(obs) = 1 and walking both ways,
 * p = Σ_{P(h) ≤ P(obs)} P(h) / Σ P(h). Each walk stops once its terms, past the mode, fall
 * below 2^-64 of the tail sum; sums are rescaled before they could overflow. */
typedef struct {
    double unit, tail, total; /* P(obs), the tail sum and the whole sum, in the current scale */
} hwe_sums;

static void hwe_add(hwe_sums *s, double *p) {
    if (*p > 1e250) { /* rescale everything, the walk's current term too */
        s->unit *= 1e-250, s->tail *= 1e-250, s->total *= 1e-250, *p *= 1e-250;
    }
    s->total += *p;
    if (*p <= s->unit * (1 + 0x1p-44)) s->tail += *p;
}

/* Past the mode and inside the tail, the terms only fall: the walk ends once they no longer
 * move the tail sum (or P(obs) has underflowed against the mode: p is 0 then). */
static int hwe_done(const hwe_sums *s, double p, double prev) {
    return s->unit == 0 || (p < prev && p <= s->unit && p < s->tail * 0x1p-64);
}

double tg_hwe_p(int64_t het, int64_t hom1, int64_t hom2) {
    int64_t homr = hom1 < hom2 ? hom1 : hom2, homc = hom1 < hom2 ? hom2 : hom1;
    if (het + homr + homc == 0) return 1;
    hwe_sums s = {1, 1, 1};
    double p = 1, prev;
    for (int64_t h = het, r = homr, c = homc; h >= 2; h -= 2, r++, c++) {
        prev = p;
        p *= (double)h * (double)(h - 1) / (4.0 * (double)(r + 1) * (double)(c + 1));
        hwe_add(&s, &p);
        if (hwe_done(&s, p, prev)) break;
    }
    p = s.unit;
    for (int64_t h = het, r = homr, c = homc; r >= 1 && c >= 1; h += 2, r--, c--) {
        prev = p;
        p *= 4.0 * (double)r * (double)c / ((double)(h + 1) * (double)(h + 2));
        hwe_add(&s, &p);
        if (hwe_done(&s, p, prev)) break;
    }
    return s.tail / s.total;
}
