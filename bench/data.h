/* Inputs shared by the benchmarks. */
#ifndef TG_BENCH_DATA_H
#define TG_BENCH_DATA_H
#include <stdint.h>

#include "tilegwas.h"

/** Writes @p m random SNPs × @p n samples to PREFIX.{bed,bim,fam}: A1 frequencies uniform in
 * [0.05, 0.5], genotypes in Hardy-Weinberg proportions, no missing call, the first half of the
 * samples controls (.fam phenotype 1), the rest cases (2). Exits on failure. */
void bench_random_bed(const char *prefix, int64_t m, int64_t n, uint64_t seed);
#endif
