/* The GRM by blocks of rows (tg_grm_rows, tg_grm_lower) against a naive double reference on
 * random genotypes with missing calls, a monomorphic and an all-missing SNP, for every kind,
 * both divisors (pairwise counts, meanimpute), tile sizes that do not divide n (the INT8 and the
 * FP64 paths, diagonal and off-diagonal tiles, square rows); and the files' "%.6g" formatter
 * (tg_format_g6) against printf's on a million values, rounding ties and decade edges included. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "io/grm_out.h"
#include "tap.h"

enum { N = 53, M = 97 };

/* The definition, term by term: p over the calls, Z = x − 2p (0 where missing), the kinds'
 * weights and divisors (tilegwas.h, tg_grm_kind). K and the counts C are n × n, column-major. */
static void naive(const int8_t *g, int64_t n, int64_t m, tg_grm_kind kind, int meanimpute,
                  double *K, double *C) {
    double var = 0;
    memset(K, 0, (size_t)(n * n) * sizeof *K);
    memset(C, 0, (size_t)(n * n) * sizeof *C);
    for (int64_t k = 0; k < m; k++) {
        const int8_t *x = g + k * n;
        double a = 0, obs = 0;
        for (int64_t i = 0; i < n; i++)
            if (x[i] != TG_GENO_MISSING) a += x[i], obs++;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                C[i + j * n] += x[i] != TG_GENO_MISSING && x[j] != TG_GENO_MISSING;
        double p = obs > 0 ? a / (2 * obs) : NAN;
        if (!(p > 0 && p < 1)) continue;
        var += 2 * p * (1 - p);
        double w = kind == TG_GRM_STANDARDISED ? 1 / (2 * p * (1 - p)) : 1;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                if (x[i] != TG_GENO_MISSING && x[j] != TG_GENO_MISSING)
                    K[i + j * n] += w * (x[i] - 2 * p) * (x[j] - 2 * p);
    }
    for (int64_t e = 0; e < n * n; e++) {
        if (meanimpute) C[e] = (double)m;
        K[e] /= kind == TG_GRM_VANRADEN ? var : C[e];
    }
}

struct rows {
    int64_t n;
    int square;
    double *K, *C; /* n × n column-major: what the callback received */
    int64_t next;  /* rows must come in order, each once */
    int order_ok;
};

static tg_status take(void *ctx, int64_t r0, int64_t r1, const double *k, const double *nobs,
                      int64_t ld, tg_error *err) {
    struct rows *s = ctx;
    (void)err;
    s->order_ok &= r0 == s->next && r1 > r0;
    s->next = r1;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t j = 0; j < (s->square ? s->n : r + 1); j++) {
            s->K[r + j * s->n] = k[j + (r - r0) * ld];
            if (nobs) s->C[r + j * s->n] = nobs[j + (r - r0) * ld];
        }
    return TG_OK;
}

/* the largest |a − b| over the lower triangle (the whole matrix with @p square) */
static double maxdiff(const double *a, const double *b, int64_t n, int square) {
    double d = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = square ? 0 : j; i < n; i++) {
            double e = fabs(a[i + j * n] - b[i + j * n]);
            if (e > d || isnan(e)) d = e;
        }
    return d;
}

static void check_matrix(const tg_bed *bed, const int8_t *g, int missing) {
    double *R = malloc(N * N * sizeof *R), *RC = malloc(N * N * sizeof *RC),
           *K = malloc(N * N * sizeof *K), *C = malloc(N * N * sizeof *C);
    for (int kind = 0; kind <= TG_GRM_VANRADEN; kind++)
        for (int mi = 0; mi <= 1; mi++) {
            naive(g, N, M, (tg_grm_kind)kind, mi, R, RC);
            const int nbs[] = {0, 7, 53};
            for (int t = 0; t < 3; t++) {
                tg_grm_opts o = {(tg_grm_kind)kind, mi, t == 1, 1, nbs[t]};
                struct rows s = {N, o.square, K, C, 0, 1};
                tg_grm_info info;
                tg_error err = {0};
                memset(K, 0, N * N * sizeof *K);
                tg_status st = tg_grm_rows(bed, &o, take, &s, &info, &err);
                double d = st ? INFINITY : maxdiff(K, R, N, o.square),
                       dc = st ? INFINITY : maxdiff(C, RC, N, o.square);
                ok(!st && s.order_ok && s.next == N && d <= 1e-13 && dc == 0,
                   "%s, %s, %s calls, rows of %d%s (%s path): max |K - naive| %.3g, counts %s %s",
                   tg_grm_kind_name((tg_grm_kind)kind), mi ? "meanimpute" : "pairwise",
                   missing ? "missing" : "no missing", nbs[t] ? nbs[t] : 256,
                   o.square ? ", square" : "", info.integer ? "INT8" : "FP64", d,
                   dc == 0 ? "equal" : "differ", err.msg);
            }
            /* the in-memory form the pca command takes */
            tg_grm_opts o = {(tg_grm_kind)kind, mi, 0, 0, 11};
            tg_error err = {0};
            memset(K, 0, N * N * sizeof *K);
            tg_status st = tg_grm_lower(bed, &o, K, N, NULL, &err);
            double d = st ? INFINITY : maxdiff(K, R, N, 0);
            ok(!st && d <= 1e-13, "tg_grm_lower: %s, %s: max |K - naive| %.3g %s",
               tg_grm_kind_name((tg_grm_kind)kind), mi ? "meanimpute" : "pairwise", d, err.msg);
        }
    free(R);
    free(RC);
    free(K);
    free(C);
}

/* tg_format_g6(x) = printf("%.6g", x); returns the mismatches (the first few printed) */
static long g6_mismatches(double x, long bad) {
    char a[40], b[40];
    int la = tg_format_g6(x, a);
    a[la] = 0;
    snprintf(b, sizeof b, "%.6g", x);
    if (!strcmp(a, b)) return bad;
    if (bad < 5) diag("%.17g: '%s', printf '%s'", x, a, b);
    return bad + 1;
}

static void check_format(tg_rng *r) {
    long bad = 0, n = 0;
    for (; n < 1000000; n++) { /* random magnitudes 1e-15..1e15, both signs */
        double x = (1 + 9 * tg_rng_uniform(r)) * pow(10, floor(30 * tg_rng_uniform(r)) - 15);
        bad = g6_mismatches(tg_rng_uniform(r) < 0.5 ? -x : x, bad);
    }
    /* halves at the 6th digit (exact in binary: printf's tie rule decides), the decimal edges
     * of the two styles, and values a few ulps around 6-digit rounding points */
    static const double edge[] = {0, 1, -1, 0.5, 1.5, 2.5, 1234565, 1234575, 0.0001, 9.999995e-5,
                                  0.00099999949, 999999, 999999.5, 999999.4999, 1e6, 100000,
                                  9.999995, 9.9999949999, 1e-5, 123456.5, 0.125, 1e-30, 1e30,
                                  -0.0, 3.0517578125e-05, 1e100, 1e-300, NAN, INFINITY};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++, n++) bad = g6_mismatches(edge[i], bad);
    for (int d = 100000; d < 1000000; d += 7919)
        for (int e = -8; e <= 8; e++) {
            double x = (d + 0.5) * pow(10, e - 5);
            bad = g6_mismatches(nextafter(x, 0), bad);
            bad = g6_mismatches(x, bad);
            bad = g6_mismatches(nextafter(x, 1e300), bad);
            n += 3;
        }
    ok(bad == 0, "tg_format_g6 = printf %%.6g on %ld values: %ld differ", n, bad);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, 2024);
    tap_plan(2 * 3 * 2 * 4 + 1);
    check_format(&r);
    tg_runtime_opts ro = tg_runtime_defaults();
    ro.ngpu = 0;
    tg_error err = {0};
    if (tg_runtime_start(&ro, &err)) {
        ok(0, "runtime start: %s", err.msg);
        return tap_done();
    }
    int8_t *g = malloc(N * M);
    for (int missing = 0; missing <= 1; missing++) {
        make_geno(&r, N, M, 0.05, 0.5, missing ? 0.08 : 0, g);
        for (int64_t i = 0; i < N; i++) g[i + 3 * N] = 2; /* monomorphic */
        if (missing)
            for (int64_t i = 0; i < N; i++) g[i + 5 * N] = TG_GENO_MISSING; /* all missing */
        char prefix[] = "/tmp/tg_grm_XXXXXX";
        tg_bed bed = {0};
        if (write_bed_tmp(prefix, g, N, M, &err) || tg_bed_open(prefix, &bed, &err)) {
            ok(0, "fileset: %s", err.msg);
            break;
        }
        check_matrix(&bed, g, missing);
        tg_bed_close(&bed);
        remove_bed(prefix);
    }
    free(g);
    tg_runtime_stop();
    return tap_done();
}
