/* tg_rng_beta (src/base/rng.c), the population frequencies of simulate --populations, against
 * closed forms: a Kolmogorov–Smirnov distance to the Beta CDF where it has one (Beta(1, 1) is
 * uniform, Beta(1/2, 1/2) has CDF (2/π)·asin(√x), Beta(2, 3) has CDF P(Binomial(4, x) ≥ 2)),
 * and the mean a/(a+b) and variance ab/((a+b)²(a+b+1)) for shapes on both sides of 1 (the
 * Gamma deviate's two branches), down to the tiny shapes of --fst near 1, whose draws must stay
 * in [0, 1], never NaN. tg_rng_jump (simulate's parallel pieces of one stream) against the
 * stream itself: a jump of s steps, applied once or k times, leaves the state that s (or k·s)
 * calls of tg_rng_u64 leave. */
#include <math.h>
#include <stdlib.h>

#include "tap.h"

#define NDRAW 200000

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double cdf_uniform(double x) { return x; }
static double cdf_arcsine(double x) { return 2 / M_PI * asin(sqrt(x)); }
static double cdf_beta23(double x) { return 1 - pow(1 - x, 4) - 4 * x * pow(1 - x, 3); }

/* NDRAW draws of Beta(a, b) into x (sorted); returns how many were outside [0, 1] or NaN. */
static int draw(tg_rng *r, double a, double b, double *x) {
    int bad = 0;
    for (int k = 0; k < NDRAW; k++) {
        x[k] = tg_rng_beta(r, a, b);
        bad += !(x[k] >= 0 && x[k] <= 1);
    }
    qsort(x, NDRAW, sizeof *x, cmp_double);
    return bad;
}

/* sup |F_n − F|: P(D > 0.0092) < 1e-6 for 200,000 draws (√(ln(2/α)/(2n)), α = 1e-6). */
static void ks(tg_rng *r, double a, double b, double (*cdf)(double), double *x) {
    int bad = draw(r, a, b, x);
    double d = 0;
    for (int k = 0; k < NDRAW; k++) {
        double f = cdf(x[k]), lo = f - (double)k / NDRAW, hi = (double)(k + 1) / NDRAW - f;
        d = fmax(d, fmax(lo, hi));
    }
    ok(!bad && d < 0.0092, "Beta(%g, %g): Kolmogorov-Smirnov distance %.4f to its CDF", a, b, d);
}

/* The mean and variance within 6 standard errors: Var(mean) = σ²/n, and Var(s²) ≤ σ²/n too,
 * since (x − μ)⁴ ≤ (x − μ)² on [0, 1]. */
static void moments(tg_rng *r, double a, double b, double *x) {
    int bad = draw(r, a, b, x);
    double mu = a / (a + b), var = a * b / ((a + b) * (a + b) * (a + b + 1)), s = 0, s2 = 0;
    for (int k = 0; k < NDRAW; k++) s += x[k];
    double mean = s / NDRAW, se = sqrt(var / NDRAW);
    for (int k = 0; k < NDRAW; k++) s2 += (x[k] - mean) * (x[k] - mean);
    double v = s2 / (NDRAW - 1);
    ok(!bad && fabs(mean - mu) < 6 * se && fabs(v - var) < 6 * se,
       "Beta(%g, %g): mean %.5f (want %.5f), variance %.5f (want %.5f), ± %.5f", a, b, mean, mu,
       v, var, 6 * se);
}

/* The generator after s·k single steps equals the one moved by k jumps of s steps. */
static void jump(uint64_t seed, uint64_t s, int k) {
    tg_rng a, b;
    tg_rng_seed(&a, seed);
    tg_rng_seed(&b, seed);
    for (uint64_t t = 0; t < s * (uint64_t)k; t++) tg_rng_u64(&a);
    tg_rng_jump j;
    tg_rng_jump_init(&j, s);
    for (int t = 0; t < k; t++) tg_rng_jump_apply(&j, &b);
    int same = 1;
    for (int t = 0; t < 1000; t++) same &= tg_rng_u64(&a) == tg_rng_u64(&b);
    ok(same, "%d jumps of %llu steps equal %llu calls (the next 1000 numbers)", k,
       (unsigned long long)s, (unsigned long long)s * (unsigned long long)k);
}

int main(void) {
    tap_plan(12);
    double *x = malloc(NDRAW * sizeof *x);
    if (!x) return 1;
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    ks(&r, 1, 1, cdf_uniform, x);
    ks(&r, 0.5, 0.5, cdf_arcsine, x);
    ks(&r, 2, 3, cdf_beta23, x);
    /* --fst 0.1 at p = 0.05 and p = 0.5; --fst 0.9 at p = 0.01; --fst 0.999 at p = 0.001 */
    moments(&r, 0.45, 8.55, x);
    moments(&r, 4.5, 4.5, x);
    moments(&r, 0.0011, 0.11, x);
    moments(&r, 1e-6, 1e-3, x);
    uint64_t seed = tg_rng_u64(&r);
    jump(seed, 0, 3);
    jump(seed, 1, 1);
    jump(seed, 1, 5);
    jump(seed, 500000, 1);
    jump(seed, 123457, 17); /* an odd count: every bit of the square-and-multiply */
    free(x);
    return tap_done();
}
