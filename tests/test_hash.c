/* The hashes the MPI ranks compare their inputs by (src/cli/ranks.c): tg_hash_bytes and
 * tg_hash_bulk tell apart every single-bit change and every length (zero padding included),
 * and give the same value for the same bytes at any alignment; tg_bed_hash gives an opened
 * .bed and its copy built in memory the same three hashes, and a change to one genotype, one
 * variant ID or one phenotype changes its own hash and no other. */
#include <string.h>

#include "base/hash.h"
#include "common.h"
#include "io/fileset.h"
#include "tap.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Whether the @p n values of @p h are pairwise different (sorts them). */
static int all_distinct(uint64_t *h, size_t n) {
    qsort(h, n, sizeof *h, cmp_u64);
    for (size_t k = 1; k < n; k++)
        if (h[k] == h[k - 1]) return 0;
    return 1;
}

typedef uint64_t (*hash_fn)(uint64_t, const void *, size_t);

/* Every single-bit flip of @p len random bytes (at most @p flips of them, spread evenly) and
 * the unchanged bytes: all hashes different. */
static int flips_differ(hash_fn fn, size_t len, size_t flips, tg_rng *r) {
    unsigned char *b = malloc(len + 1);
    size_t nbits = 8 * len, step = nbits / flips > 1 ? nbits / flips : 1, nh = 0;
    uint64_t *h = malloc((nbits / step + 2) * sizeof *h);
    for (size_t i = 0; i < len; i++) b[i] = (unsigned char)tg_rng_u64(r);
    h[nh++] = fn(TG_FNV1A_INIT, b, len);
    for (size_t bit = 0; bit < nbits; bit += step) {
        b[bit / 8] ^= (unsigned char)(1u << bit % 8);
        h[nh++] = fn(TG_FNV1A_INIT, b, len);
        b[bit / 8] ^= (unsigned char)(1u << bit % 8);
    }
    int good = all_distinct(h, nh);
    free(h);
    free(b);
    return good;
}

/* The same @p len bytes at the 8 alignments of a word: one value. */
static int alignment_free(hash_fn fn, size_t len, tg_rng *r) {
    unsigned char *b = malloc(len + 8), *ref = malloc(len + 1);
    for (size_t i = 0; i < len; i++) ref[i] = (unsigned char)tg_rng_u64(r);
    uint64_t h0 = fn(TG_FNV1A_INIT, ref, len);
    int good = 1;
    for (int off = 0; off < 8; off++) {
        memcpy(b + off, ref, len);
        good &= fn(TG_FNV1A_INIT, b + off, len) == h0;
    }
    free(b);
    free(ref);
    return good;
}

/* 0 to 200 zero bytes: 201 different values (the padding of the last word is not content). */
static int lengths_differ(hash_fn fn) {
    unsigned char z[200] = {0};
    uint64_t h[201];
    for (size_t n = 0; n <= 200; n++) h[n] = fn(TG_FNV1A_INIT, z, n);
    return all_distinct(h, 201);
}

static int same(const tg_bed_hashes *a, const tg_bed_hashes *b) {
    return a->snps == b->snps && a->samples == b->samples && a->geno == b->geno;
}

static void fileset_tests(tg_rng *r) {
    const int64_t n = 37, m = 23; /* 37 samples: the last byte of each SNP has padding codes */
    int8_t *g = malloc((size_t)(n * m));
    make_geno(r, n, m, 0.1, 0.5, 0.05, g);
    char p1[] = "/tmp/tg_hash_XXXXXX", p2[] = "/tmp/tg_hash_XXXXXX";
    tg_error err;
    tg_bed a, b, mem;
    if (write_bed_tmp(p1, g, n, m, &err) || tg_bed_open(p1, &a, &err) ||
        tg_fileset_subset(&a, NULL, n, NULL, m, NULL, &mem, &err)) {
        printf("Bail out! %s\n", err.msg);
        exit(1);
    }
    tg_bed_hashes ha, hm, hb;
    tg_bed_hash(&a, &ha);
    tg_bed_hash(&mem, &hm);
    ok(same(&ha, &hm), "an opened .bed and its copy in memory hash the same");
    g[n * 11 + 36] = (int8_t)(g[n * 11 + 36] == 2 ? 0 : 2); /* the last sample of SNP 11 */
    if (write_bed_tmp(p2, g, n, m, &err) || tg_bed_open(p2, &b, &err)) {
        printf("Bail out! %s\n", err.msg);
        exit(1);
    }
    tg_bed_hash(&b, &hb);
    ok(hb.geno != ha.geno && hb.snps == ha.snps && hb.samples == ha.samples,
       "one genotype changed: the genotype hash alone differs");
    char *id = a.snps[7].id;
    a.snps[7].id = "v7x";
    tg_bed_hash(&a, &hb);
    a.snps[7].id = id;
    ok(hb.snps != ha.snps && hb.samples == ha.samples && hb.geno == ha.geno,
       "one variant ID changed: the variant rows' hash alone differs");
    a.samples[20].pheno = 1.5;
    tg_bed_hash(&a, &hb);
    ok(hb.samples != ha.samples && hb.snps == ha.snps && hb.geno == ha.geno,
       "one phenotype changed: the sample rows' hash alone differs");
    a.n_samples--;
    tg_bed_hash(&a, &hb);
    a.n_samples++;
    ok(hb.samples != ha.samples, "one sample fewer: the sample rows' hash differs");
    tg_bed_close(&a);
    tg_bed_close(&b);
    tg_bed_close(&mem);
    remove_bed(p1);
    remove_bed(p2);
    free(g);
}

int main(void) {
    tap_plan(13);
    tg_rng r;
    tg_rng_seed(&r, 42);
    int good = 1;
    for (size_t len = 1; len <= 70; len++) good &= flips_differ(tg_hash_bytes, len, 1000, &r);
    ok(good, "tg_hash_bytes: every single-bit flip of 1 to 70 bytes changes the value");
    ok(flips_differ(tg_hash_bytes, 1000003, 4000, &r),
       "tg_hash_bytes: 4000 single-bit flips over 1 MB each change the value");
    /* 3 pieces of tg_hash_bulk, the last one short; flips in each */
    ok(flips_differ(tg_hash_bulk, (9 << 20) + 5, 3000, &r),
       "tg_hash_bulk: 3000 single-bit flips over 9 MB (3 pieces) each change the value");
    ok(lengths_differ(tg_hash_bytes), "tg_hash_bytes: 0 to 200 zero bytes, 201 values");
    ok(lengths_differ(tg_hash_bulk), "tg_hash_bulk: 0 to 200 zero bytes, 201 values");
    good = 1;
    for (size_t len = 0; len <= 70; len++) good &= alignment_free(tg_hash_bytes, len, &r);
    ok(good, "tg_hash_bytes: the same value at every alignment (0 to 70 bytes)");
    ok(alignment_free(tg_hash_bulk, (5 << 20) + 3, &r),
       "tg_hash_bulk: the same value at every alignment (5 MB)");
    unsigned char x[64] = {1};
    ok(tg_hash_bytes(TG_FNV1A_INIT, x, 64) != tg_hash_bytes(TG_FNV1A_INIT + 1, x, 64),
       "the starting value counts");
    fileset_tests(&r);
    return tap_failed != 0;
}
