/* The one pass over a genotype source: decode → per-SNP counts → A1 frequencies → missing
 * calls, feeding the encoders (geno/panels.h, geno/codes5.h) with each decoded tile. Every
 * workload's frequencies, exclusions and missing-call counts come from here, but epistasis's,
 * whose planes (geno/planes.h) come straight from the .bed's codes. */
#ifndef TG_GENO_PASS_H
#define TG_GENO_PASS_H
#include "tilegwas.h"

/** Rows [lo, hi) of a source's selected samples. */
typedef struct {
    int64_t lo, hi;
} tg_geno_range;

/** An encoder: chunk() receives rows [i0, i0 + ni) of SNPs [j0, j0 + nj) of the rows the pass
 * reads (column-major @p x, leading dimension @p ld; rows numbered in the order of the pass's
 * ranges; missing calls as TG_GENO_MISSING; it may overwrite @p x) once freq[j0 .. j0 + nj) are
 * final. A chunk's rows come in tiles of a multiple of @p unit rows (the last shorter), in
 * order, on one thread; chunks run on every core, concurrently. An error it returns (filled
 * into @p err) stops the pass, which reports the error of the lowest chunk that failed. */
typedef struct {
    tg_status (*chunk)(void *ctx, const double *freq, int64_t j0, int64_t nj, int64_t i0,
                       int64_t ni, int8_t *x, int64_t ld, tg_error *err);
    void *ctx;
    int64_t snps; /**< SNPs per chunk (an encoder's unit: 5codes want multiples of 5) */
    int64_t unit; /**< a tile's rows are a multiple of it (5codes: whole groups of samples) */
} tg_geno_encoder;

/** What the pass counted, per SNP over the rows read (every rank's with several). */
typedef struct {
    int64_t m;
    int64_t *obs;    /**< called genotypes */
    int64_t *a1;     /**< A1 alleles */
    double *freq;    /**< tg_a1_freq(a1, obs), or the frequencies the caller gave */
    int64_t missing; /**< missing calls, all SNPs */
} tg_geno_counts;

/** Reads the rows of @p ranges (@p nranges of them, this rank's) of every selected SNP of @p s
 * once, counts, and feeds @p enc (may be NULL). @p collective: the ranks' ranges partition the
 * selected rows (every row read by one rank) and the counts are summed over them (integer sums:
 * every rank's frequencies are one rank's, bit for bit); then, with several ranks and no
 * @p freq, the rows are read twice (the counts first, the encodings once the sums are known).
 * @p freq (may be NULL): frequencies given (a test cohort's are its training cohort's), used
 * instead of the counted ones.
 * A value other than 0, 1, 2 and TG_GENO_MISSING is TG_ERR_ARG naming the sample and SNP; so
 * are summed counts that no n rows can give (0 ≤ A1 ≤ 2·calls ≤ 2n): ranks that read other
 * genotypes, on some ranks only (the caller must then end every rank). */
tg_status tg_geno_pass(const tg_geno_source *s, const tg_geno_range *ranges, int nranges,
                       int collective, const double *freq, const tg_geno_encoder *enc,
                       tg_geno_counts *c, tg_error *err);
void tg_geno_counts_free(tg_geno_counts *c);
/** Each SNP's statistics over @p n samples from the pass's A1 frequencies and calls (the one
 * rule of tg_geno_source_stats and tg_geno_stats): stats[0 .. m). */
void tg_geno_counts_stats(const double *freq, const int64_t *obs, int64_t n, int64_t m,
                          tg_snp_stats *stats);
/** Sets the bytes of a chunk's tile (@p bytes > 0; 1 MiB: in L2) and returns the previous value:
 * tests cut small inputs into many tiles with it. Not during a pass. */
int64_t tg_geno_pass_tile_bytes(int64_t bytes);
/** One column of @p n values: its calls, A1 alleles and genotypes 2 (so 1s and 0s too); returns
 * nonzero when a value lies outside −1..2. One vectorised sweep (the pass's, and the CG's
 * Jacobi counts'). */
int tg_geno_count_column(const int8_t *col, int64_t n, int64_t *obs, int64_t *a1, int64_t *two);

/** The exclusion rule of the centred encodings (5codes, ridge panels, the Jacobi diagonal): an
 * SNP is used when its frequency is in (0, 1), i.e. it is neither monomorphic nor all missing. */
static inline int tg_geno_polymorphic(double p) { return p > 0 && p < 1; }
#endif
