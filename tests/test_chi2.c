/* tg_chi2_sf against the closed forms of the χ² upper tail at whole degrees of freedom
 * (chi2_sf_closed in tests/common.c, long double, another route) at df 1..80 (the epistasis
 * tables have at most 80) and x from 10^-3 to 1,400, both sides of x = df + 2 where the
 * function switches from the series to the continued fraction; plus the edges (df 0, x 0, the
 * far tail). tg_chi2_log10_sf at df 1 (the association tests' LOG10P) against log10 erfc(√(x/2))
 * in long double (whose range reaches 1e-4900: x up to 20,000), and beyond it against the
 * asymptotic series of erfc. */
#include <math.h>

#include "base/chi2.h"
#include "common.h"
#include "tap.h"

int main(void) {
    static const double xs[] = {1e-3, 0.1, 0.5, 1, 2, 3.5, 7, 10, 15.5, 20, 30, 42, 60, 79, 81,
                                100, 150, 250, 400, 700, 1000, 1400};
    int n = 0, bad = 0;
    double worst = 0;
    for (int df = 1; df <= 80; df++)
        for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
            const long double want = chi2_sf_closed(df, xs[i]);
            if (want < 1e-290L) continue;
            const double got = tg_chi2_sf(xs[i], df), rel = fabs((double)((got - want) / want));
            n++;
            if (rel > worst) worst = rel;
            if (rel > 1e-12 && bad++ < 5)
                diag("df %d, x %g: %.17g, closed form %.17Lg", df, xs[i], got, want);
        }
    ok(bad == 0 && n > 1500, "%d values at df 1..80: largest relative error %.3g (≤ 1e-12)", n,
       worst);
    ok(tg_chi2_sf(0, 5) == 1 && tg_chi2_sf(3, 0) == 1 && tg_chi2_sf(7, -1) == 1,
       "x = 0 and df ≤ 0 give 1");
    ok(tg_chi2_sf(5000, 8) == 0 || tg_chi2_sf(5000, 8) < 1e-300, "far tail: 0 or below 1e-300");
    /* a known value: the 5% point of χ²_1 is 3.841458820694124 */
    ok(fabs(tg_chi2_sf(3.841458820694124, 1) - 0.05) < 1e-15, "χ²_1 at 3.8414588: %.17g",
       tg_chi2_sf(3.841458820694124, 1));
    static const double xl[] = {1e-6, 0.3, 1, 3, 10, 30, 100, 700, 1400, 1500, 3000, 1e4, 2e4};
    worst = 0;
    bad = 0;
    for (size_t i = 0; i < sizeof xl / sizeof xl[0]; i++) {
        const long double want = log10l(erfcl(sqrtl(xl[i] / 2)));
        const double got = tg_chi2_log10_sf(xl[i], 1), rel = fabs((double)((got - want) / want));
        if (rel > worst) worst = rel;
        if (rel > 1e-12 && bad++ < 5) diag("x %g: %.17g, long double %.17Lg", xl[i], got, want);
    }
    ok(bad == 0, "log10 P at df 1, x 1e-6 to 2e4 (P down to 1e-4345): largest relative error "
       "%.3g (≤ 1e-12)", worst);
    /* erfc(z) = e^{−z²}/(z√π)·(1 − 1/(2z²) + 3/(4z⁴) − ...), the next term below 1e-17 at
     * z² = 5e5 */
    const double x = 1e6, z2 = x / 2,
                 asym = (-z2 - 0.5 * log(z2 * M_PI) + log1p(-1 / (2 * z2) + 3 / (4 * z2 * z2))) /
                        M_LN10;
    ok(fabs(tg_chi2_log10_sf(x, 1) - asym) < 1e-9 * fabs(asym), "log10 P at x = 1e6: %.17g, "
       "asymptotic %.17g", tg_chi2_log10_sf(x, 1), asym);
    ok(tg_chi2_log10_sf(0, 1) == 0 && tg_chi2_log10_sf(4, 0) == 0, "x = 0, df 0: log10 P = 0");
    tap_plan(tap_n);
    return tap_done();
}
