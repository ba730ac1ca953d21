/* The bit-plane encoder (geno/planes.h), moved from algo/epistasis.c. Distinct SNPs own distinct
 * plane words, so chunks never write the same word. */
#include "geno/planes.h"

#include "codelets/epistasis.h"

/* Each plane word is assembled in registers from the 64 samples of its class that it holds,
 * and stored once (setting bits sample by sample in memory took 0.16 s for 512 SNPs × 262,144
 * samples on the H100 node's 16 cores, and 1.26–1.55 s for 8,192 SNPs: most of an order-2
 * search). */
tg_status tg_planes_chunk(void *ctx, const double *freq, int64_t j0, int64_t nj, int8_t *x,
                          int64_t ld, tg_error *err) {
    const tg_planes *s = ctx;
    (void)freq;
    (void)err;
    for (int64_t j = j0; j < j0 + nj; j++) {
        uint64_t *blk = s->planes + (j / s->B) * s->block_words;
        const int snp = (int)(j % s->B);
        for (int cl = 0; cl < 2; cl++) {
            uint64_t *p0 = blk + tg_epi_plane_offset(s->B, s->words, cl, snp, 0),
                     *p1 = blk + tg_epi_plane_offset(s->B, s->words, cl, snp, 1),
                     *pv = blk + tg_epi_plane_offset(s->B, s->words, cl, snp, 2);
            const int8_t *col = x + (j - j0) * ld + (cl ? s->n[0] : 0);
            for (int64_t i0 = 0; i0 < s->n[cl]; i0 += 64) {
                const int64_t nt = s->n[cl] - i0 < 64 ? s->n[cl] - i0 : 64;
                uint64_t w0 = 0, w1 = 0, wv = 0;
                for (int64_t t = 0; t < nt; t++) {
                    const int8_t v = col[i0 + t];
                    w0 |= (uint64_t)(v == 0) << t;
                    w1 |= (uint64_t)(v == 1) << t;
                    wv |= (uint64_t)(v != TG_GENO_MISSING) << t;
                }
                p0[i0 / 64] = w0;
                p1[i0 / 64] = w1;
                pv[i0 / 64] = wv;
            }
        }
    }
    return TG_OK;
}
