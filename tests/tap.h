/* Minimal TAP producer for the C tests: plan, ok(), and comparisons that print what differed.
 * Each test program includes this once; automake's tap-driver.sh reads the output. */
#ifndef TG_TAP_H
#define TG_TAP_H
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/rng.h"

static int tap_n, tap_failed;

static inline void tap_plan(int n) { printf("1..%d\n", n); }
/* Skips the whole program (automake SKIP) with a reason, e.g. no GPU. */
static inline void tap_skip_all(const char *why) { printf("1..0 # SKIP %s\n", why); exit(0); }

static inline int ok(int cond, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!cond) tap_failed++;
    fflush(stdout);
    return cond;
}

static inline void diag(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* Passes when |got - want| <= tol·max(1, |want|). */
static inline int ok_close(double got, double want, double tol, const char *what) {
    double d = fabs(got - want), s = fabs(want) > 1 ? fabs(want) : 1;
    int c = d <= tol * s;
    ok(c, "%s", what);
    if (!c) diag("got %.17g, want %.17g (tol %.3g)", got, want, tol);
    return c;
}

/* The run's random seed: TG_SEED when set (to repeat a failing run, or to give every MPI rank
 * the same data), otherwise a fresh one; printed either way. */
static inline uint64_t tap_seed(void) {
    const char *s = getenv("TG_SEED");
    uint64_t seed = s && *s ? strtoull(s, NULL, 10) : tg_rng_fresh_seed();
    diag("seed %llu (TG_SEED=%llu repeats this run)", (unsigned long long)seed,
         (unsigned long long)seed);
    return seed;
}

/* Ends the program: exit status 1 when any test failed. */
static inline int tap_done(void) {
    fflush(stdout);
    return tap_failed ? 1 : 0;
}
#endif
