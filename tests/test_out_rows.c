/* The text tables' fast paths. tg_out_rows (src/io/out_rows.c): a table written in blocks
 * formatted on every core equals, byte for byte, the same row function printing every row
 * straight to a plain file (stdio, one thread): rows of uneven lengths, block sizes that leave
 * a short last block, one block, more blocks than a batch, no rows, and from inside a parallel
 * loop (one thread). tg_text_format_double (src/io/idmap.c): printf's "%.15g", or "%.17g"
 * where that does not read back, on millions of values: random bits (every magnitude), random
 * values of every decade, the outputs' usual ranges, decimal roundings and halves, powers of 2
 * and 10 and their neighbouring doubles. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parallel.h"
#include "base/rng.h"
#include "io/out.h"
#include "tap.h"

typedef struct {
    const double *v;
    int k;
} table;

/* rows of k values, some NA, a row name that grows with the row: lines of uneven length */
static void rows(void *ctx, FILE *f, int64_t r0, int64_t r1) {
    const table *t = ctx;
    char num[32];
    for (int64_t r = r0; r < r1; r++) {
        fprintf(f, "row%lld", (long long)r * r);
        for (int c = 0; c < t->k; c++) {
            const double x = t->v[r * t->k + c];
            if (x < -1.5)
                strcpy(num, "NA");
            else
                tg_text_format_double(x, num);
            fprintf(f, "\t%s", num);
        }
        fputc('\n', f);
    }
}

static char *slurp(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    rewind(f);
    char *b = malloc((size_t)*len + 1);
    if (b && fread(b, 1, (size_t)*len, f) != (size_t)*len) *len = -1;
    fclose(f);
    return b;
}

/* 1 when tg_out_rows' file of n rows in blocks of `block` equals the serial reference */
static int same_as_serial(const table *t, int64_t n, int64_t block) {
    tg_error err = {0};
    FILE *ref = fopen("out_rows_ref.tsv", "w"), *f;
    if (!ref) return 0;
    fputs("#header\n", ref);
    rows((void *)t, ref, 0, n);
    fclose(ref);
    char *path = NULL;
    if (tg_out_open("out_rows", ".tsv", &f, &path, &err)) return 0;
    fputs("#header\n", f);
    tg_status st = tg_out_rows(f, path, n, block, rows, (void *)t, &err);
    if (st) tg_out_discard(f);
    if (!st) st = tg_out_close(f, path, &err);
    free(path);
    long la = 0, lb = 0;
    char *a = slurp("out_rows_ref.tsv", &la), *b = slurp("out_rows.tsv", &lb);
    int same = !st && a && b && la == lb && la > 0 && !memcmp(a, b, (size_t)la);
    if (!same) diag("%lld rows in blocks of %lld: %ld bytes, serial %ld (%s)", (long long)n,
                    (long long)block, lb, la, st ? err.msg : "differ");
    free(a);
    free(b);
    unlink("out_rows_ref.tsv");
    unlink("out_rows.tsv");
    return same;
}

typedef struct {
    const table *t;
    int same;
} nested;

static void inside(void *ctx, int64_t c) {
    nested *j = ctx;
    if (c == 0) j->same = same_as_serial(j->t, 5000, 3);
}

/* printf's digits, the definition */
static void reference(double x, char buf[32]) {
    snprintf(buf, 32, "%.15g", x);
    if (strtod(buf, NULL) != x) snprintf(buf, 32, "%.17g", x);
}

static long mismatch(double x, long bad) {
    char a[32], b[32];
    tg_text_format_double(x, a);
    reference(x, b);
    if (!strcmp(a, b)) return bad;
    if (bad < 5) diag("%a: '%s', printf '%s'", x, a, b);
    return bad + 1;
}

static double seconds(void (*fmt)(double, char[32]), const double *v, int n) {
    char b[32];
    const double t0 = tg_now();
    for (int i = 0; i < n; i++) fmt(v[i], b);
    return tg_now() - t0;
}

static void check_format(tg_rng *r) {
    long bad = 0, n = 0;
    for (; n < 1000000; n++) { /* every bit pattern's kind: NaN, inf, subnormals, 0 */
        uint64_t bits = tg_rng_u64(r);
        double x;
        memcpy(&x, &bits, sizeof x);
        bad = mismatch(x, bad);
    }
    for (int i = 0; i < 1000000; i++, n++) { /* every decade from 1e-20 to 1e20 */
        const double x = (1 + 9 * tg_rng_uniform(r)) * pow(10, floor(41 * tg_rng_uniform(r)) - 20);
        bad = mismatch(tg_rng_uniform(r) < 0.5 ? -x : x, bad);
    }
    for (int i = 0; i < 1000000; i++, n++) { /* predictions, BETA, SE, CHISQ, P */
        const double u = tg_rng_uniform(r);
        bad = mismatch(i % 3 == 0 ? u - 0.5 : i % 3 == 1 ? 0.01 * u / (1 - u) : -log10(u), bad);
    }
    for (int d = 1; d < 100000; d += 7) /* short decimals and halves, and their neighbours */
        for (int e = -8; e <= 8; e++) {
            const double x[3] = {d * pow(10, e), (d + 0.5) * pow(10, e - 10), d / 1024.0};
            for (int k = 0; k < 3; k++, n += 3) {
                bad = mismatch(nextafter(x[k], 0), bad);
                bad = mismatch(x[k], bad);
                bad = mismatch(nextafter(x[k], INFINITY), bad);
            }
        }
    for (int e = -1074; e <= 1023; e++, n += 3) { /* powers of 2, the gap below halved */
        bad = mismatch(nextafter(ldexp(1, e), 0), bad);
        bad = mismatch(ldexp(1, e), bad);
        bad = mismatch(nextafter(ldexp(1, e), INFINITY), bad);
    }
    for (int e = -30; e <= 30; e++, n += 3) { /* decades: the exponent and style change */
        bad = mismatch(nextafter(pow(10, e), 0), bad);
        bad = mismatch(pow(10, e), bad);
        bad = mismatch(nextafter(pow(10, e), INFINITY), bad);
    }
    n += 4;
    bad = mismatch(0.0, mismatch(-0.0, mismatch(DBL_MAX, mismatch(DBL_MIN, bad))));
    ok(bad == 0, "tg_text_format_double = printf %%.15g, or %%.17g where that does not read "
       "back, on %ld values: %ld differ", n, bad);
    enum { T = 200000 };
    double *v = malloc(sizeof *v * T);
    for (int i = 0; i < T; i++) v[i] = tg_rng_uniform(r) - 0.5;
    const double fast = seconds(tg_text_format_double, v, T), slow = seconds(reference, v, T);
    diag("LOCO-like values: %.0f ns a number, printf and strtod %.0f ns", 1e9 * fast / T,
         1e9 * slow / T);
    free(v);
}

int main(void) {
    tap_plan(7);
    enum { N = 20011, K = 7 };
    tg_rng rng;
    tg_rng_seed(&rng, tap_seed());
    double *v = malloc(sizeof *v * N * K);
    for (int64_t i = 0; i < (int64_t)N * K; i++)
        v[i] = (tg_rng_uniform(&rng) * 4 - 2) * (i % 3 ? 1 : 1e-5 * (double)(i % 1000));
    const table t = {v, K};
    diag("%d thread(s)", tg_parallel_threads());
    ok(same_as_serial(&t, N, 7), "%d rows in blocks of 7 (a short last block, many batches)", N);
    ok(same_as_serial(&t, N, N), "one block of every row");
    ok(same_as_serial(&t, N, 100000), "a block larger than the table");
    ok(same_as_serial(&t, 1, 3), "one row");
    ok(same_as_serial(&t, 0, 3), "no rows: the header alone");
    nested j = {&t, 0};
    tg_parallel_for(4, inside, &j);
    ok(j.same, "called from inside a parallel loop (serially)");
    check_format(&rng);
    free(v);
    return tap_done();
}
