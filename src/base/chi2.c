/* Q(a, x) = Γ(a, x) / Γ(a), from its two classic expansions (Abramowitz & Stegun 6.5.29 and
 * 6.5.31): below x = a + 1 the series of the lower function P = 1 − Q converges fast and Q is
 * not small, so 1 − P loses nothing; above it the continued fraction of Q converges fast and
 * keeps its relative precision into the far tail, where the P values of strong hits lie. */
#include "base/chi2.h"

#include <float.h>
#include <math.h>

enum { MAX_TERMS = 1000 }; /* both converge in well under 100 terms for a ≤ 40 */

/* log(e^{−x} x^a / Γ(a)), so that neither factor overflows on its own */
static double log_front(double a, double x) { return a * log(x) - x - lgamma(a); }
static double front(double a, double x) { return exp(log_front(a, x)); }

/* P(a, x) = e^{−x} x^a / Γ(a + 1) · Σ_n x^n / ((a + 1)···(a + n)) */
static double lower_series(double a, double x) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < MAX_TERMS && term > sum * DBL_EPSILON; n++) {
        term *= x / (a + n);
        sum += term;
    }
    return sum * front(a, x);
}

/* Q(a, x) = e^{−x} x^a / Γ(a) · 1 / (x + 1 − a − 1·(1 − a) / (x + 3 − a − 2·(2 − a) / ...)),
 * evaluated forwards by the modified Lentz method (tiny guards against a zero denominator);
 * returns the fraction alone, which stays near 1/x however far in the tail */
static double upper_fraction(double a, double x) {
    const double tiny = DBL_MIN / DBL_EPSILON;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int n = 1; n < MAX_TERMS; n++) {
        const double an = -n * (n - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        const double step = d * c;
        h *= step;
        if (fabs(step - 1) < DBL_EPSILON) break;
    }
    return h;
}

double tg_chi2_sf(double x, double df) {
    if (!(df > 0)) return 1;
    if (!(x > 0)) return 1;
    const double a = df / 2, y = x / 2;
    return y < a + 1 ? 1 - lower_series(a, y) : front(a, y) * upper_fraction(a, y);
}

double tg_chi2_log10_sf(double x, double df) {
    if (!(df > 0) || !(x > 0)) return 0;
    const double a = df / 2, y = x / 2;
    if (y < a + 1) return log10(1 - lower_series(a, y));
    return (log_front(a, y) + log(upper_fraction(a, y))) / M_LN10;
}
