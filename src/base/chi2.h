/* Upper tail of the χ² distribution, for the P values of the epistasis scores (Pearson's χ²
 * and the G-test) and of the association tests. */
#ifndef TG_CHI2_H
#define TG_CHI2_H

/** P(X ≥ x) for X ~ χ² with df degrees of freedom (df > 0, x ≥ 0): the regularised upper
 * incomplete gamma function Q(df/2, x/2), to about 1e-14 relative; 0 once it is below the
 * smallest double (x of several thousand). df ≤ 0 gives 1 (no freedom: nothing to test). */
double tg_chi2_sf(double x, double df);
/** log10 P(X ≥ x), as tg_chi2_sf but in logs all the way, so that it stays finite and
 * accurate (about 1e-14 relative) where the P value itself is below the smallest double: the
 * LOG10P of the association tests. */
double tg_chi2_log10_sf(double x, double df);

#endif
