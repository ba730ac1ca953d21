/* bench/hash: the cost of the ranks' input check (src/cli/ranks.c) as hash rates in MB/s on a
 * buffer in memory, against a ceiling measured in the same run (a sum of its 8-byte words, the
 * rate at which one core reads it): FNV-1a and tg_hash_bytes on one core, tg_hash_bulk on every
 * CPU; then, with a fileset, tg_bed_hash of it (rows and genotype bytes) after opening it,
 * warm cache. Best of R runs.
 * usage: bench/hash [--mb M] [--reps R] [--bfile PREFIX]   (default 1024 MB, 5 reps) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/parallel.h"
#include "io/out.h"
#include "tilegwas.h"

static uint64_t sum_words(uint64_t h, const void *p, size_t n) {
    const uint64_t *w = p;
    for (size_t i = 0; i < n / 8; i++) h += w[i];
    return h;
}

/* Best seconds of @p reps runs of @p fn over @p n bytes. */
static double best(int reps, uint64_t (*fn)(uint64_t, const void *, size_t), const void *p,
                   size_t n) {
    double t = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = tg_now();
        uint64_t h = fn(TG_FNV1A_INIT, p, n);
        __asm__ volatile("" : : "r"(h)); /* the hash must be computed */
        if (tg_now() - t0 < t) t = tg_now() - t0;
    }
    return t;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) { return tg_fnv1a(h, p, n); }

int main(int argc, char **argv) {
    size_t mb = 1024;
    int reps = 5;
    const char *bfile = NULL;
    for (int k = 1; k + 1 < argc; k += 2) {
        if (!strcmp(argv[k], "--mb")) mb = (size_t)atol(argv[k + 1]);
        else if (!strcmp(argv[k], "--reps")) reps = atoi(argv[k + 1]);
        else if (!strcmp(argv[k], "--bfile")) bfile = argv[k + 1];
        else return fprintf(stderr, "unknown option %s\n", argv[k]), 2;
    }
    const size_t n = mb << 20;
    unsigned char *buf = malloc(n);
    if (!buf) return fprintf(stderr, "cannot allocate %zu MB\n", mb), 1;
    for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(i * 2654435761u >> 13);
    const double ceil = best(reps, sum_words, buf, n);
    printf("buffer %zu MB; ceiling (sum of words, 1 core): %.0f MB/s\n", mb, 1e-6 * n / ceil);
    const struct {
        const char *name;
        uint64_t (*fn)(uint64_t, const void *, size_t);
        size_t bytes;
    } runs[] = {{"FNV-1a, 1 core", fnv, n / 8 < 128 << 20 ? n / 8 : 128 << 20},
                {"tg_hash_bytes, 1 core", tg_hash_bytes, n},
                {"tg_hash_bulk, all cores", tg_hash_bulk, n}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        double t = best(reps, runs[r].fn, buf, runs[r].bytes);
        printf("%-24s %8.0f MB/s (%.2f of the ceiling)\n", runs[r].name, 1e-6 * runs[r].bytes / t,
               ceil / t * runs[r].bytes / n);
    }
    printf("threads of tg_hash_bulk: %d\n", tg_parallel_threads());
    free(buf);
    if (!bfile) return 0;
    tg_bed b;
    tg_error err;
    double t0 = tg_now();
    if (tg_bed_open(bfile, &b, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    double topen = tg_now() - t0, t = 1e30;
    tg_bed_hashes h;
    for (int r = 0; r < reps; r++) {
        t0 = tg_now();
        tg_bed_hash(&b, &h);
        if (tg_now() - t0 < t) t = tg_now() - t0;
    }
    double bytes = (double)b.n_snps * (double)b.bytes_per_snp;
    printf("%s: %lld samples, %lld variants, %.1f MB of genotypes: opened in %.3f s, hashed in "
           "%.3f s (%.0f MB/s)\n", bfile, (long long)b.n_samples, (long long)b.n_snps,
           1e-6 * bytes, topen, t, 1e-6 * bytes / t);
    tg_bed_close(&b);
    return 0;
}
