/* tg_copy_stream (base/mem.h), the staging buffer's copy with non-temporal stores: against
 * memcpy for every alignment of source and destination within a 64-byte line, lengths around
 * its 16-byte steps and its short-copy threshold, and a few MiB; no byte outside the
 * destination's range is written. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "tap.h"

enum { PAD = 64, LARGE = 3 << 20 };

/* copies n bytes from src + so to dst + doff with tg_copy_stream, then checks dst's bytes: the
 * copy inside, the fill byte 0xA5 outside */
static int copy_right(const uint8_t *src, size_t so, uint8_t *dst, size_t doff, size_t n) {
    memset(dst, 0xA5, doff + n + PAD);
    tg_copy_stream(dst + doff, src + so, n);
    for (size_t i = 0; i < doff; i++)
        if (dst[i] != 0xA5) return 0;
    if (memcmp(dst + doff, src + so, n)) return 0;
    for (size_t i = doff + n; i < doff + n + PAD; i++)
        if (dst[i] != 0xA5) return 0;
    return 1;
}

int main(void) {
    tap_plan(2);
    uint8_t *src = aligned_alloc(64, LARGE + 2 * PAD), *dst = aligned_alloc(64, LARGE + 3 * PAD);
    if (!src || !dst) return 1;
    tg_rng r;
    tg_rng_seed(&r, 7);
    for (size_t i = 0; i < LARGE + 2 * PAD; i++) src[i] = (uint8_t)tg_rng_u64(&r);
    int good = 1, cases = 0;
    for (size_t so = 0; so < PAD && good; so++)
        for (size_t doff = 0; doff < PAD && good; doff++)
            for (size_t n = 0; n <= 200 && good; n += n < 96 ? 1 : 13, cases++)
                good = copy_right(src, so, dst, doff, n);
    ok(good, "%d copies of 0 to 200 bytes, every source and destination offset in 64 bytes",
       cases);
    good = 1;
    for (size_t doff = 0; doff < 24 && good; doff += 7)
        good = copy_right(src, 3 + doff, dst, doff, LARGE + doff);
    ok(good, "copies of 3 MiB and a few bytes at four destination offsets");
    free(src);
    free(dst);
    return 0;
}
