/* Sizes that scale with the data are checked where they are computed (issue 30): tg_size_mul
 * against 128-bit arithmetic at the address space's edge (PTRDIFF_MAX passes, one more byte
 * does not, 2^32 × 2^32 is refused instead of wrapping to 0), negative counts, and the checked
 * allocators tg_malloc_n and tg_calloc_n. Then library calls given counts whose sizes overflow,
 * each of which wrote or read out of bounds before (a heap overflow, a segmentation fault):
 * they now fail with a message, and a valid call beside them still gives the right answer. */
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "io/png.h"
#include "tap.h"
#include "tilegwas.h"

enum { N = 40, M = 24 };

/* tg_image_create of w × h pixels: w · h · 3 + 1 is 2^64 for these (1,722,007,169 ×
 * 3,570,783,445), which wrapped to a 0-byte image that the fill then overran. */
static void check_image(void) {
    tg_image img = {0};
    tg_error err = {0};
    tg_status st = tg_image_create(&img, 1722007169u, 3570783445u, 0, &err);
    ok(st == TG_ERR_NOMEM && !img.rgb && strstr(err.msg, "exceed the address space"),
       "an image whose bytes wrap to 0 is refused: %s", err.msg);
    st = tg_image_create(&img, 3, 2, 0x102030, &err);
    ok(!st && img.rgb[0] == 0x10 && img.rgb[17] == 0x30, "a 3 × 2 image is filled");
    free(img.rgb);
}

/* tg_ridge_cg and tg_ridge_chol with 2^61 phenotypes (y and β hold 2): m · nphen overflowed
 * int64 and wrapped the solver's arrays (then a memset of the report ran off its end), and the
 * Cholesky path read y past its end while checking it. A 2-phenotype solve beside them agrees
 * with the CG's. */
static void check_ridge(tg_rng *r) {
    int8_t *g = malloc(N * M);
    double y[2 * N], beta[2 * M], beta_chol[2 * M], mu[2];
    make_geno(r, N, M, 0.1, 0.5, 0, g);
    for (int i = 0; i < 2 * N; i++) y[i] = tg_rng_normal(r);
    tg_error err = {0};
    tg_geno *geno = NULL;
    tg_cg_pheno pr[2];
    tg_cg_report rep = {.pheno = pr};
    tg_cg_opts o = tg_cg_defaults();
    o.lambda = 1;
    o.tol = 1e-12;
    const int64_t huge = (int64_t)1 << 61;
    if (tg_geno_from_int8(g, N, M, N, 0, &geno, &err)) {
        ok(0, "genotypes prepared: %s", err.msg);
        free(g);
        return;
    }
    tg_status st = tg_ridge_cg(geno, huge, y, N, &o, beta, M, &rep, &err);
    ok(st == TG_ERR_NOMEM && strstr(err.msg, "exceed the address space"),
       "tg_ridge_cg with 2^61 phenotypes: %s", err.msg);
    tg_ridge_chol_opts co = tg_ridge_chol_defaults();
    co.nb = 16;
    co.lambda = 1;
    err = (tg_error){0};
    st = tg_ridge_chol(g, N, M, N, 0, huge, y, N, &co, beta_chol, M, mu, NULL, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "fit an int"), "tg_ridge_chol with 2^61 phenotypes: %s",
       err.msg);
    st = tg_ridge_cg(geno, 2, y, N, &o, beta, M, &rep, &err) ||
         tg_ridge_chol(g, N, M, N, 0, 2, y, N, &co, beta_chol, M, mu, NULL, &err);
    double d = 0, s = 0;
    for (int j = 0; j < 2 * M; j++) d = fmax(d, fabs(beta[j] - beta_chol[j])), s += fabs(beta[j]);
    ok(!st && s > 0 && d < 1e-6 * s, "2 phenotypes: CG and Cholesky agree (max |Δβ| %.2g)", d);
    tg_geno_free(geno);
    free(g);
}

/* tg_size_mul(n1, n2, size) against the exact product: passes with it when it is at most
 * PTRDIFF_MAX, fails with TG_ERR_NOMEM (and leaves the output alone) otherwise. */
static int size_matches(int64_t n1, int64_t n2, size_t size) {
    unsigned __int128 want = (unsigned __int128)(uint64_t)n1 * (uint64_t)n2 * size;
    int fits = n1 >= 0 && n2 >= 0 && want <= PTRDIFF_MAX;
    size_t got = 12345;
    tg_error err = {0};
    tg_status st = tg_size_mul(n1, n2, size, &got, &err);
    int good = fits ? !st && got == (size_t)want
                    : st == TG_ERR_NOMEM && err.status == TG_ERR_NOMEM && got == 12345;
    if (!good)
        diag("%lld × %lld × %zu: status %d, got %zu (%s)", (long long)n1, (long long)n2, size,
             st, got, err.msg);
    return good;
}

int main(void) {
    tap_plan(16);
    const int64_t p32 = (int64_t)1 << 32;
    tg_error err = {0};
    size_t bytes = 7;
    tg_status st = tg_size_mul(p32, p32, 1, &bytes, &err);
    ok(st == TG_ERR_NOMEM && bytes == 7 &&
           strstr(err.msg, "4294967296 × 4294967296 × 1 bytes") &&
           strstr(err.msg, "exceed the address space"),
       "2^32 × 2^32 (2^64, wraps to 0 in size_t) is refused, naming its factors: %s", err.msg);
    ok(!tg_size_mul(p32 / 2, p32 / 2, 1, &bytes, &err) && bytes == (size_t)1 << 62,
       "2^31 × 2^31 = 2^62 passes");
    /* PTRDIFF_MAX = 2^63 − 1 = 7² · 73 · 127 · 337 · 92737 · 649657 */
    const int64_t a = 7 * 7 * 73 * 127, b = (int64_t)337 * 92737 * 649657;
    ok(!tg_size_mul(a, b, 1, &bytes, &err) && bytes == PTRDIFF_MAX,
       "the exact limit %lld × %lld × 1 = PTRDIFF_MAX passes", (long long)a, (long long)b);
    ok(tg_size_mul(a, b, 2, &bytes, &err) == TG_ERR_NOMEM &&
           tg_size_mul(2, (int64_t)1 << 62, 1, &bytes, &err) == TG_ERR_NOMEM &&
           tg_size_mul((int64_t)1 << 61, 1, 8, &bytes, &err) == TG_ERR_NOMEM,
       "past it: 2·PTRDIFF_MAX, 2^63 (fits size_t, not the address space), 2^61 × 8 (wraps)");
    err = (tg_error){0};
    ok(tg_size_mul(-1, 5, 8, &bytes, &err) == TG_ERR_NOMEM && strstr(err.msg, "negative"),
       "a negative count is refused: %s", err.msg);
    ok(tg_size_mul(INT64_MIN, INT64_MIN, 1, &bytes, NULL) == TG_ERR_NOMEM &&
           tg_size_mul(0, -3, 1, &bytes, NULL) == TG_ERR_NOMEM,
       "INT64_MIN² and 0 × −3 are refused (no NULL error needed)");
    ok(!tg_size_mul(0, INT64_MAX, SIZE_MAX, &bytes, &err) && bytes == 0,
       "a zero count gives 0 whatever the others");

    /* random factors around the limit: products of every magnitude, half past PTRDIFF_MAX */
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    int good = 1, passed = 0;
    for (int t = 0; t < 200000; t++) {
        int e1 = (int)(tg_rng_u64(&r) % 64), e2 = (int)(tg_rng_u64(&r) % 64);
        int e3 = (int)(tg_rng_u64(&r) % 8);
        int64_t n1 = (int64_t)(tg_rng_u64(&r) >> (64 - e1 > 63 ? 63 : 64 - e1));
        int64_t n2 = (int64_t)(tg_rng_u64(&r) >> (64 - e2 > 63 ? 63 : 64 - e2));
        size_t size = (size_t)1 << e3;
        if (t % 7 == 0) n1 = -n1 - 1;
        int fits = n1 >= 0 && (unsigned __int128)(uint64_t)n1 * (uint64_t)n2 * size <= PTRDIFF_MAX;
        passed += fits;
        if (!size_matches(n1, n2, size)) good = 0;
        if (!good) break;
    }
    ok(good && passed > 10000 && passed < 190000,
       "200,000 random products against 128-bit arithmetic (%d within the limit)", passed);

    err = (tg_error){0};
    ok(!tg_malloc_n(p32, p32, 1, &err) && err.status == TG_ERR_NOMEM &&
           strstr(err.msg, "exceed the address space"),
       "tg_malloc_n(2^32, 2^32, 1) fails with the message: %s", err.msg);
    err = (tg_error){0};
    ok(!tg_calloc_n(-2, 3, 8, &err) && err.status == TG_ERR_NOMEM && strstr(err.msg, "negative"),
       "tg_calloc_n with a negative count fails: %s", err.msg);
    double *z = tg_calloc_n(3, 5, sizeof *z, &err), *e = tg_malloc_n(0, 5, sizeof *e, &err);
    int zero = z && e;
    for (int i = 0; zero && i < 15; i++) zero = z[i] == 0;
    ok(zero, "tg_calloc_n(3, 5, 8) gives 15 zeroed doubles, tg_malloc_n(0, ...) a pointer");
    free(z);
    free(e);

    check_image();
    tg_runtime_opts ro = tg_runtime_defaults();
    ro.ngpu = 0;
    if (tg_runtime_start(&ro, &err)) {
        ok(0, "runtime start: %s", err.msg);
        return tap_done();
    }
    check_ridge(&r);
    tg_runtime_stop();
    return tap_done();
}
