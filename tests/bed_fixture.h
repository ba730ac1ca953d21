/* A .bed/.bim/.fam fileset for the C tests: samples S0, S1, ... (FID = IID, no parents, sex 0,
 * missing phenotype), SNPs v0, v1, ... on chromosome 0 at positions 1, 2, ..., alleles A/C. */
#ifndef TG_TESTS_BED_FIXTURE_H
#define TG_TESTS_BED_FIXTURE_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tilegwas.h"

/** Writes the n × m genotypes @p g (column-major, leading dimension n) under @p prefix. */
static inline tg_status test_bed_write(const char *prefix, const int8_t *g, int64_t n, int64_t m,
                                       tg_error *err) {
    static char zero[] = "0", a[] = "A", c[] = "C";
    tg_sample *s = calloc((size_t)n, sizeof *s);
    tg_snp *v = calloc((size_t)m, sizeof *v);
    char(*ids)[16] = calloc((size_t)(n + m), sizeof *ids);
    tg_status st = TG_ERR_NOMEM;
    if (s && v && ids) {
        for (int64_t i = 0; i < n; i++) {
            snprintf(ids[i], sizeof ids[i], "S%lld", (long long)i);
            s[i] = (tg_sample){ids[i], ids[i], zero, zero, 0, NAN};
        }
        for (int64_t j = 0; j < m; j++) {
            snprintf(ids[n + j], sizeof ids[n + j], "v%lld", (long long)j);
            v[j] = (tg_snp){zero, ids[n + j], 0, j + 1, a, c};
        }
        st = tg_bed_write(prefix, s, n, v, m, g, n, err);
    } else {
        tg_error_set(err, st, "test_bed_write: out of memory");
    }
    free(s);
    free(v);
    free(ids);
    return st;
}
#endif
