/* Random genotypes written as a PLINK fileset, shared by the benchmarks (data.h). */
#include "bench/data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"

void bench_random_bed(const char *prefix, int64_t m, int64_t n, uint64_t seed) {
    tg_rng rng;
    tg_rng_seed(&rng, seed);
    tg_sample *s = calloc((size_t)n, sizeof *s);
    tg_snp *v = calloc((size_t)m, sizeof *v);
    int8_t *g = malloc((size_t)n * (size_t)m);
    char buf[64];
    if (!s || !v || !g) {
        fprintf(stderr, "bench: out of memory for %lld × %lld genotypes\n", (long long)m,
                (long long)n);
        exit(1);
    }
    for (int64_t i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "I%lld", (long long)i);
        s[i].fid = strdup(buf);
        s[i].iid = strdup(buf);
        s[i].father = strdup("0");
        s[i].mother = strdup("0");
        s[i].pheno = i < n / 2 ? 1 : 2;
    }
    for (int64_t j = 0; j < m; j++) {
        snprintf(buf, sizeof buf, "snp%lld", (long long)j);
        v[j].chrom = strdup("1");
        v[j].id = strdup(buf);
        v[j].pos = j + 1;
        v[j].a1 = strdup("A");
        v[j].a2 = strdup("G");
        double p = 0.05 + 0.45 * tg_rng_uniform(&rng);
        /* 64 bits give 32 two-bit draws: genotype = (u < p) + (u' < p) with 16-bit uniforms */
        uint32_t thr = (uint32_t)(p * 65536);
        for (int64_t i = 0; i < n; i += 2) {
            uint64_t r = tg_rng_u64(&rng);
            for (int q = 0; q < 2 && i + q < n; q++, r >>= 32)
                g[j * n + i + q] = (int8_t)(((r & 0xffff) < thr) + (((r >> 16) & 0xffff) < thr));
        }
    }
    tg_error err = {0};
    if (tg_bed_write(prefix, s, n, v, m, g, n, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
    }
    for (int64_t i = 0; i < n; i++) {
        free(s[i].fid);
        free(s[i].iid);
        free(s[i].father);
        free(s[i].mother);
    }
    for (int64_t j = 0; j < m; j++) {
        free(v[j].chrom);
        free(v[j].id);
        free(v[j].a1);
        free(v[j].a2);
    }
    free(s);
    free(v);
    free(g);
}
