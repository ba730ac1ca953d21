/* Helpers shared by the C test programs (tests/common.c): random genotypes and .bed filesets,
 * random dense matrices, their Frobenius norms and tiled copies. TAP output is tests/tap.h. */
#ifndef TG_TESTS_COMMON_H
#define TG_TESTS_COMMON_H
#include <stddef.h>
#include <stdint.h>

#include "base/rng.h"
#include "tilegwas.h"

/** n × m genotypes into @p g (column-major, leading dimension n): per SNP p ~ U[p_lo, p_hi],
 * each call the sum of two Bernoulli(p) draws (Hardy-Weinberg), then TG_GENO_MISSING with
 * probability @p miss (no draw when miss is 0). Tests plant their special SNPs afterwards. */
void make_geno(tg_rng *r, int64_t n, int64_t m, double p_lo, double p_hi, double miss, int8_t *g);

/** Writes the n × m genotypes @p g (column-major, leading dimension n) as PREFIX.bed/.bim/.fam:
 * samples S0, S1, ... (FID = IID, no parents, sex 0, missing phenotype), SNPs v0, v1, ... on
 * chromosome 0 at positions 1, 2, ..., alleles A/C. */
tg_status write_bed(const char *prefix, const int8_t *g, int64_t n, int64_t m, tg_error *err);
/** write_bed under a PREFIX made by mkstemp from the template @p prefix (ending in XXXXXX, replaced
 * in place); the empty file mkstemp creates is PREFIX itself. */
tg_status write_bed_tmp(char *prefix, const int8_t *g, int64_t n, int64_t m, tg_error *err);
/** Removes PREFIX.bed, .bim and .fam, and PREFIX itself (write_bed_tmp's placeholder). */
void remove_bed(const char *prefix);

/** A malloc'ed string from a printf format (at most 63 characters): IDs of hand-made filesets. */
char *fmt_str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Writes DIR/NAME from a printf format, its path into @p path (@p len bytes); returns @p path. */
const char *put_text(char *path, size_t len, const char *dir, const char *name, const char *fmt,
                     ...) __attribute__((format(printf, 5, 6)));

/** P(χ²_df ≥ x) by the closed forms at whole df, in long double (no incomplete gamma
 * function: the reference for tg_chi2_sf), y = x/2: df = 2m, e^{−y} Σ_{j<m} y^j / j!;
 * df = 2m + 1, erfc(√y) + e^{−y} Σ_{j=1..m} y^{j−1/2} / Γ(j + 1/2). */
long double chi2_sf_closed(int df, long double x);

/** rows × cols values uniform in [lo, hi) (malloc'd, column-major). */
double *rand_mat(int64_t rows, int64_t cols, double lo, double hi, tg_rng *r);
/** Frobenius norm of x[0..n), and of x − y. */
double fro(const double *x, size_t n);
double fro_diff(const double *x, const double *y, size_t n);
/** qsort comparison of doubles, ascending. */
int cmp_double(const void *a, const void *b);
/** The CUDA workers the runtime starts with its defaults (started and stopped here; 0 in a
 * build without CUDA or when it does not start): whether a test's GPU-only pass can run. */
int gpu_count(void);
/** A tiled copy (mb × nb tiles, owners on the runtime's grid) of the m × n column-major array
 * @p a (leading dimension m); bails out of the TAP run when it cannot be made. */
tg_matrix *tiled(const double *a, int64_t m, int64_t n, int mb, int nb, tg_shape shape, tg_prec p);
#endif
