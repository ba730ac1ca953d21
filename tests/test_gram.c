/* The CPU's INT8 dot-product tiles (codelets/distance.c), both methods, against a naive 64-bit
 * loop: exact, for int8 values over the whole range, sizes off the register blocks (32 × 8)
 * and across the packed panels (2,048 entries), leading dimensions past the sizes, the
 * symmetric form, and a tile whose shifted sums wrap int32 while the result fits (A = B = 127,
 * k = 70,000). */
#include <stdint.h>
#include <string.h>

#include "codelets/distance.h"
#include "tap.h"

typedef void gram_fn(const int8_t *, size_t, const int8_t *, size_t, size_t, int32_t *, size_t,
                     size_t, size_t, int);

/* c = aᵀb by the method, compared with the 64-bit sums; returns the count of wrong entries */
static long check(gram_fn *fn, const int8_t *a, size_t lda, const int8_t *b, size_t ldb, size_t k,
                  size_t m, size_t n, int sym) {
    size_t ldc = m + 3;
    int32_t *c = malloc(ldc * n * sizeof *c);
    for (size_t e = 0; e < ldc * n; e++) c[e] = 12345; /* garbage the method must overwrite */
    fn(a, lda, sym ? a : b, sym ? lda : ldb, k, c, ldc, m, n, sym);
    long bad = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++) {
            int64_t s = 0;
            for (size_t e = 0; e < k; e++)
                s += (int64_t)a[e + i * lda] * (sym ? a[e + j * lda] : b[e + j * ldb]);
            bad += s != c[i + j * ldc];
        }
    bad += c[m] != 12345; /* past the rows: untouched */
    free(c);
    return bad;
}

static int8_t *random_panel(tg_rng *r, size_t ld, size_t cols) {
    int8_t *x = malloc(ld * cols);
    for (size_t e = 0; e < ld * cols; e++) x[e] = (int8_t)(tg_rng_u64(r) & 0xff);
    return x;
}

int main(void) {
    tap_plan(11);
    tg_rng r;
    tg_rng_seed(&r, 7);
    const struct {
        size_t m, n, k;
        int sym;
    } cases[] = {{1, 1, 16, 0},    {31, 33, 16, 0},  {32, 8, 4112, 0}, {100, 70, 2064, 0},
                 {77, 77, 4112, 1}, {40, 40, 32, 1}};
    const int vnni = tg_gram_tile_has_vnni();
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        size_t m = cases[t].m, n = cases[t].n, k = cases[t].k, lda = k + 16, ldb = k + 32;
        int8_t *a = random_panel(&r, lda, m), *b = random_panel(&r, ldb, n);
        long bs = check(tg_gram_tile_sgemm, a, lda, b, ldb, k, m, n, cases[t].sym);
        long bv = vnni ? check(tg_gram_tile_vnni, a, lda, b, ldb, k, m, n, cases[t].sym) : 0;
        ok(bs == 0 && bv == 0, "%zu x %zu x %zu%s: wrong entries: float GEMMs %ld, VNNI %ld%s", m,
           n, k, cases[t].sym ? " symmetric" : "", bs, bv, vnni ? "" : " (no VNNI: not run)");
        free(a);
        free(b);
    }
    /* (127 + 128)·127·70,000 > 2^31 wraps; 127²·70,000 fits */
    size_t k = 70000;
    int8_t *a = malloc(k * 3);
    memset(a, 127, k * 3);
    long bv = vnni ? check(tg_gram_tile_vnni, a, k, a, k, k, 3, 3, 0) : 0,
         bs = check(tg_gram_tile_sgemm, a, k, a, k, k, 3, 3, 0);
    ok(bv == 0 && bs == 0, "all 127, k = 70,000 (shifted sums wrap): wrong entries VNNI %ld, "
       "float GEMMs %ld", bv, bs);
    for (size_t e = 0; e < k * 3; e += 2) a[e] = -128;
    bv = vnni ? check(tg_gram_tile_vnni, a, k, a, k, k, 3, 3, 1) : 0;
    ok(bv == 0, "-128 and 127 alternating, k = 70,000, symmetric: wrong entries VNNI %ld", bv);
    free(a);
    /* tg_gram_tile takes VNNI when the CPU has it: the same integers either way */
    size_t m = 45, n = 19;
    k = 2048 + 64;
    int8_t *x = random_panel(&r, k, m), *y = random_panel(&r, k, n);
    ok(check(tg_gram_tile, x, k, y, k, k, m, n, 0) == 0, "tg_gram_tile (%s): exact",
       vnni ? "VNNI" : "float GEMMs");
    ok(check(tg_gram_tile, x, k, x, k, k, m, m, 1) == 0, "tg_gram_tile symmetric: exact");
    free(x);
    free(y);
    ok(vnni || !__builtin_cpu_supports("avx512vnni"),
       "the method follows the CPU: VNNI used whenever the CPU reports it");
    return tap_done();
}
