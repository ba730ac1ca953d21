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

/* Counting even bits: a word's lane bits summed into its 8 bytes (at most 4 each), bytes added
 * over up to 63 words (at most 252 each) before one horizontal sum. */
static inline uint64_t byte_sums(uint64_t x) {
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    return (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
}

static inline int64_t horizontal(uint64_t b) {
    b = (b & 0x00ff00ff00ff00ffULL) + ((b >> 8) & 0x00ff00ff00ff00ffULL);
    return (int64_t)((b * 0x0001000100010001ULL) >> 48);
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

/* Missing calls over mask a, genotype classes over mask g (and gm, when not NULL) of one SNP:
 * seven counters of lane bits, summed per byte over blocks of 63 words. */
enum { C_MISS, C_H1, C_HET, C_GMISS, C_MH1, C_MHET, C_MMISS, NC };

static void count_one(const uint8_t *p, size_t bps, int64_t words, const uint64_t *a,
                      const uint64_t *g, int64_t ng, const uint64_t *gm, int64_t ngm,
                      tg_qc_counts *c) {
    int64_t t[NC] = {0};
    int nc = gm ? NC : C_MH1;
    for (int64_t w0 = 0; w0 < words; w0 += 63) {
        uint64_t acc[NC] = {0};
        int64_t w1 = w0 + 63 < words ? w0 + 63 : words;
        for (int64_t w = w0; w < w1; w++) {
            uint64_t x = load_word(p, bps, w), lo = x & EVEN, hi = (x >> 1) & EVEN;
            uint64_t ms = lo & ~hi, ht = hi & ~lo, a1 = ~(lo | hi) & EVEN;
            acc[C_MISS] += byte_sums(ms & a[w]);
            acc[C_H1] += byte_sums(a1 & g[w]);
            acc[C_HET] += byte_sums(ht & g[w]);
            acc[C_GMISS] += byte_sums(ms & g[w]);
            if (gm) {
                acc[C_MH1] += byte_sums(a1 & gm[w]);
                acc[C_MHET] += byte_sums(ht & gm[w]);
                acc[C_MMISS] += byte_sums(ms & gm[w]);
            }
        }
        for (int k = 0; k < nc; k++) t[k] += horizontal(acc[k]);
    }
    *c = (tg_qc_counts){.miss = (int32_t)t[C_MISS], .hom1 = (int32_t)t[C_H1],
                        .het = (int32_t)t[C_HET],
                        .hom2 = (int32_t)(ng - t[C_GMISS] - t[C_H1] - t[C_HET])};
    if (gm) {
        c->male_hom1 = (int32_t)t[C_MH1];
        c->male_het = (int32_t)t[C_MHET];
        c->male_hom2 = (int32_t)(ngm - t[C_MMISS] - t[C_MH1] - t[C_MHET]);
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
 * with homr, homc the homozygote counts at h. Starting from P(obs) = 1, two walks go down and
 * up, and p = Σ_{P(h) ≤ P(obs)} P(h) / Σ P(h). Along each walk the ratio of neighbours only
 * falls (the distribution is log-concave), so once it is below 1 the walk is past the mode, and
 * what is left of it is at most p·q / (1 − q) for its last term p and ratio q: a walk ends when
 * its terms no longer move the tail sum, and a threshold test ends as soon as these bounds
 * prove p above the threshold. Sums are rescaled before they could overflow. */
typedef struct {
    double unit, tail, total; /* P(obs), the tail sum and the whole sum, in the current scale */
    double p[2], q[2];        /* last term and ratio of the walk down (0) and up (1) */
    int64_t h[2], r[2], c[2]; /* heterozygotes and homozygotes (rare, common) at that term */
    int done[2];
} hwe_walks;

static void hwe_init(hwe_walks *w, int64_t het, int64_t hom1, int64_t hom2) {
    int64_t homr = hom1 < hom2 ? hom1 : hom2, homc = hom1 < hom2 ? hom2 : hom1;
    *w = (hwe_walks){.unit = 1, .tail = 1, .total = 1, .p = {1, 1}, .q = {1, 1},
                     .h = {het, het}, .r = {homr, homr}, .c = {homc, homc}};
}

static void hwe_step(hwe_walks *w, int d) {
    int64_t h = w->h[d], r = w->r[d], c = w->c[d];
    if (d == 0 ? h < 2 : r < 1 || c < 1) {
        w->done[d] = 1;
        return;
    }
    double q = d == 0 ? (double)h * (double)(h - 1) / (4.0 * (double)(r + 1) * (double)(c + 1))
                      : 4.0 * (double)r * (double)c / ((double)(h + 1) * (double)(h + 2));
    w->h[d] = d ? h + 2 : h - 2;
    w->r[d] = d ? r - 1 : r + 1;
    w->c[d] = d ? c - 1 : c + 1;
    double p = w->p[d] *= q;
    w->q[d] = q;
    w->total += p;
    if (p <= w->unit * (1 + 0x1p-44)) w->tail += p;
    if (w->unit == 0 || (q < 1 && p <= w->unit && p < w->tail * 0x1p-64)) w->done[d] = 1;
    if (p > 1e250) { /* rescale everything, both walks' terms too */
        w->unit *= 1e-250, w->tail *= 1e-250, w->total *= 1e-250;
        w->p[0] *= 1e-250, w->p[1] *= 1e-250;
    }
}

double tg_hwe_p(int64_t het, int64_t hom1, int64_t hom2) {
    if (het + hom1 + hom2 == 0) return 1;
    hwe_walks w;
    hwe_init(&w, het, hom1, hom2);
    for (int d = 0; d < 2; d++)
        while (!w.done[d]) hwe_step(&w, d);
    return w.tail / w.total;
}

int tg_hwe_below(int64_t het, int64_t hom1, int64_t hom2, double thr) {
    if (het + hom1 + hom2 == 0) return 1 < thr;
    hwe_walks w;
    hwe_init(&w, het, hom1, hom2);
    /* just past the mode the bound is loose but often enough; a little further it is tight */
    static const double stage[2] = {1, 0.5};
    for (int k = 0; k < 2; k++) {
        double rest = 0;
        for (int d = 0; d < 2; d++) {
            while (!w.done[d] && !(w.q[d] < stage[k])) hwe_step(&w, d);
            if (!w.done[d]) rest += w.p[d] * w.q[d] / (1 - w.q[d]);
        }
        if (w.tail >= thr * (w.total + rest)) return 0;
    }
    /* undecided (p near or below the threshold, rare): the p-value itself, summed in its own
     * order so that both functions agree to the last bit */
    return tg_hwe_p(het, hom1, hom2) < thr;
}
