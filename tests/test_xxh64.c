/* tg_xxh64 (the checksum of a saved KRR model's files) against xxhsum -H64, xxHash's own tool
 * (Debian's xxhash; skipped without it), on random bytes of every length up to 300 and of
 * 100,000, fed in random pieces, and tg_file_hash of a file; and what a checksum is for: one
 * flipped bit or one byte fewer changes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hash.h"
#include "tilegwas.h"
#include "tap.h"

/* @p p fed to tg_xxh64 in pieces of random lengths (0 to 70 bytes) */
static uint64_t pieces(const unsigned char *p, size_t n, tg_rng *r) {
    tg_xxh64 h;
    tg_xxh64_init(&h);
    for (size_t at = 0, k; at < n; at += k) {
        k = tg_rng_below(r, 71);
        if (k > n - at) k = n - at;
        tg_xxh64_add(&h, p + at, k);
    }
    return tg_xxh64_value(&h);
}

/* xxhsum's hash of @p p (0: no xxhsum) */
static uint64_t xxhsum(const unsigned char *p, size_t n, const char *path) {
    FILE *f = fopen(path, "wb");
    char cmd[300], out[64] = "";
    unsigned long long v = 0;
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) return 0;
    snprintf(cmd, sizeof cmd, "xxhsum -H64 %s 2>/dev/null", path);
    FILE *pp = popen(cmd, "r");
    if (pp && fgets(out, sizeof out, pp)) sscanf(out, "%16llx", &v);
    if (pp) pclose(pp);
    return v;
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    enum { BIG = 100000 };
    unsigned char *buf = malloc(BIG);
    char path[] = "/tmp/tg_test_hash_XXXXXX";
    int fd = mkstemp(path), have = system("xxhsum -V >/dev/null 2>&1") == 0, bad = 0, k = 0;
    if (!buf || fd < 0) tap_skip_all("no memory or no temporary file");
    for (size_t i = 0; i < BIG; i++) buf[i] = (unsigned char)tg_rng_u64(&r);
    if (have) {
        for (size_t n = 0; n <= 301; n++, k++) {
            size_t len = n == 301 ? BIG : n;
            uint64_t got = pieces(buf, len, &r), want = xxhsum(buf, len, path);
            if (got != want && bad++ < 3)
                diag("%zu bytes: %016llx, xxhsum %016llx", len, (unsigned long long)got,
                     (unsigned long long)want);
        }
        ok(bad == 0, "%d lengths (0-300 and 100,000 bytes) in random pieces: xxhsum -H64's hash",
           k);
        /* the file of 100,000 bytes xxhsum read last, read back by tg_file_hash */
        int64_t bytes = 0;
        uint64_t fh = 0;
        tg_error err;
        tg_status st = tg_file_hash(path, &bytes, &fh, &err);
        ok(st == TG_OK && bytes == BIG && fh == xxhsum(buf, BIG, path),
           "tg_file_hash of a file: its %lld bytes and xxhsum -H64's hash", (long long)bytes);
    } else {
        printf("ok %d # SKIP no xxhsum (Debian's xxhash)\n", ++tap_n);
    }
    const uint64_t all = pieces(buf, BIG, &r);
    int same = 0;
    for (int t = 0; t < 200; t++) {
        size_t at = tg_rng_below(&r, BIG);
        unsigned char bit = (unsigned char)(1u << tg_rng_below(&r, 8));
        buf[at] ^= bit;
        same += pieces(buf, BIG, &r) == all;
        buf[at] ^= bit;
    }
    same += pieces(buf, BIG - 1, &r) == all;
    ok(same == 0 && pieces(buf, BIG, &r) == all,
       "200 single flipped bits and a byte fewer: every hash differs from the file's");
    close(fd);
    unlink(path);
    free(buf);
    tap_plan(tap_n);
    return tap_done();
}
