/* Benchmark and test hooks of the epistasis GEMM (codelets/epistasis_hooks.cu), built into
 * bench/epistasis and tests/test_epistasis only, not into the library. */
#ifndef TG_CODELETS_EPISTASIS_HOOKS_H
#define TG_CODELETS_EPISTASIS_HOOKS_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Benchmark hooks of the CUDA path (bench/epistasis.c), on the current device: the binary mma
 * ceiling in TOPS (register-only kernel, AND+POPC counted as 2), and the AND+POPC GEMM alone on
 * random rows (m × n rows of `words` 64-bit words, two classes), with the count of entries of a
 * few rows that differ from a CUDA-core popcount reference. */
double tg_epi_bench_ceiling(void);
/* The Hopper ceiling: wgmma fed from shared memory alone (TOPS, 0 on other GPUs), with the
 * entries of one checked product that differ from a host popcount in *mismatches. */
double tg_epi_bench_ceiling_wgmma(int64_t *mismatches);
double tg_epi_bench_gemm(int64_t m, int64_t n, int64_t words, int reps, int shape,
                         int64_t *mismatches);
/* Name of GEMM tile shape `shape` (the codelet uses the first that runs on its GPU), NULL past
 * the last; tg_epi_bench_gemm returns 0 for a shape this GPU cannot run. */
const char *tg_epi_bench_gemm_shape(int shape);
/* Test hook: one GEMM of shape `shape` on random rows (m × n rows, words0 / words1 words in the
 * two classes), every entry compared with a CUDA-core popcount: the number that differ, or −1
 * when this GPU cannot run the shape. With @p left, the tiles of pairs in the wrong order are
 * left out (rows in tuples of 4 keyed 0, 1, …; columns but the last 3 in tuples of 2 whose keys
 * ascend over the same range): the entries of such pairs are not compared, and *left counts
 * those the GEMM did not write. */
int64_t tg_epi_test_gemm(int64_t m, int64_t n, int64_t words0, int64_t words1, int shape,
                         int64_t *left);
/* Test hook: the epilogue's K2 screen (codelets/epistasis_k2screen.cuh) on n tables of an order
 * (r0, r1: 3^order counts each, in cell order; t: the K2 table, tlen entries, past every R + 1):
 * the lower bound on each table's key, −∞ where the epilogue does not screen. */
void tg_epi_test_k2_screen(int order, int64_t n, const int32_t *r0, const int32_t *r1,
                           const double *t, int64_t tlen, double *lb);

#ifdef __cplusplus
}
#endif
#endif
