/* QC statistics and the HWE exact test: see qc.h.
 *
 * Samples as lane masks: sample i is bit 2·(i mod 32) of mask word i / 32, i.e. the low bit of
 * its 2-bit code's place when the .bed bytes are read as little-endian words (01 missing, 10
 * heterozygous, 00 homozygous A1, 11 homozygous A2). Per-SNP counts OR each byte with the
 * complement of its mask byte, tripled into 2-bit lanes (a sample left out reads as 11), and look
 * the byte up in one table of three counts; per-sample missing calls walk the missing bits of
 * each word. The padding codes of the last byte are never selected. */
#include "geno/qc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the lane masks read .bed bytes as little-endian words"
#endif

#define SNP_CHUNK 512 /* SNPs per parallel chunk */

/* Byte → its 4 codes' missing calls, heterozygotes and A1 homozygotes, in 16-bit fields (bits
 * 0, 16, 32), so that one lookup counts all three and a sum of up to 16,383 bytes cannot carry
 * from one field into the next. */
#define CODE_CLS(c) ((c) == 1 ? 1ULL : (c) == 2 ? 1ULL << 16 : (c) == 0 ? 1ULL << 32 : 0)
#define SAMPLE(b, k) ((b) >> (2 * (k)) & 3)
#define CLS_ENTRY(b)                                                                             \
    (CODE_CLS(SAMPLE(b, 0)) + CODE_CLS(SAMPLE(b, 1)) + CODE_CLS(SAMPLE(b, 2)) +                 \
     CODE_CLS(SAMPLE(b, 3)))
/* clang-format off */
#define T4(E, b) E(b), E((b) + 1), E((b) + 2), E((b) + 3)
#define T16(E, b) T4(E, b), T4(E, (b) + 4), T4(E, (b) + 8), T4(E, (b) + 12)
#define T64(E, b) T16(E, b), T16(E, (b) + 16), T16(E, (b) + 32), T16(E, (b) + 48)
#define T256(E) T64(E, 0), T64(E, 64), T64(E, 128), T64(E, 192)
/* clang-format on */
static const uint64_t cls_table[256] = {T256(CLS_ENTRY)};
#define FIELD(x, k) ((int64_t)((x) >> (16 * (k)) & 0xffff))

static inline uint64_t load_word(const uint8_t *p, size_t bps, int64_t w) {
    uint64_t x = 0;
    size_t off = (size_t)w * 8;
    if (off + 8 <= bps)
        memcpy(&x, p + off, 8); /* a constant size: one load, not a call */
    else
        memcpy(&x, p + off, bps - off);
    return x;
}

static const uint8_t *snp_bytes(const tg_bed *bed, int64_t j) {
    return bed->geno + (size_t)j * bed->bytes_per_snp;
}

tg_status tg_qc_masks_init(tg_qc_masks *m, const tg_bed *bed, const uint8_t *keep,
                           tg_error *err) {
    memset(m, 0, sizeof *m);
    m->words = (bed->n_samples + 31) / 32;
    uint64_t *all = tg_calloc_n(4, m->words, sizeof *all, err);
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

/* Class counts (missing, heterozygous, A1 homozygous) of one SNP's selected samples: a sample
 * outside the mask is read as 11 (homozygous A2), which none of the three counts. */
static void classes(const uint8_t *p, size_t bps, const uint64_t *mask, int64_t out[3]) {
    const uint8_t *mb = (const uint8_t *)mask; /* byte k: the lane bits of samples 4k..4k+3 */
    out[0] = out[1] = out[2] = 0;
    for (size_t k0 = 0; k0 < bps; k0 += 16383) {
        size_t k1 = k0 + 16383 < bps ? k0 + 16383 : bps;
        uint64_t acc = 0;
        for (size_t k = k0; k < k1; k++) acc += cls_table[p[k] | (uint8_t) ~(mb[k] * 3)];
        for (int f = 0; f < 3; f++) out[f] += FIELD(acc, f);
    }
}

/* Missing calls over mask a; genotype counts over mask g of ng samples (one pass when a and g
 * are the same set); on X those of the ngm male founders too. */
static void count_one(const uint8_t *p, size_t bps, const uint64_t *a, int same,
                      const uint64_t *g, int64_t ng, const uint64_t *gm, int64_t ngm,
                      tg_qc_counts *c) {
    int64_t ca[3], cg[3], cm[3];
    classes(p, bps, a, ca);
    if (same)
        memcpy(cg, ca, sizeof cg);
    else
        classes(p, bps, g, cg);
    *c = (tg_qc_counts){.miss = (int32_t)ca[0], .het = (int32_t)cg[1], .hom1 = (int32_t)cg[2],
                        .hom2 = (int32_t)(ng - cg[0] - cg[1] - cg[2])};
    if (gm) {
        classes(p, bps, gm, cm);
        c->male_het = (int32_t)cm[1];
        c->male_hom1 = (int32_t)cm[2];
        c->male_hom2 = (int32_t)(ngm - cm[0] - cm[1] - cm[2]);
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
        /* founders ⊆ selected: equal counts, equal sets */
        int same = m->n_founders == m->n_kept, msame = m->n_male_founders == m->n_males;
        switch ((tg_ploidy)x->ploidy[j]) {
        case TG_PLOIDY_Y:
            count_one(p, bps, m->males, msame, m->male_founders, m->n_male_founders, NULL, 0,
                      &x->counts[k]);
            break;
        case TG_PLOIDY_X:
            count_one(p, bps, m->kept, same, m->founders, m->n_founders, m->male_founders,
                      m->n_male_founders, &x->counts[k]);
            break;
        default:
            count_one(p, bps, m->kept, same, m->founders, m->n_founders, NULL, 0,
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
    if (!(x.miss = tg_calloc_n(nchunks, bed->n_samples, sizeof *x.miss, err)))
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
