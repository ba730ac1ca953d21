/* sim_check PREFIX [options]: reads a `tilegwas simulate` dataset back through the library's
 * readers (tg_bed_open, tg_bed_decode, tg_pheno_read) and checks it with statistics written
 * here, independently of the simulator: allele frequencies, missing rate and Hardy–Weinberg
 * proportions; every planted effect of PREFIX.truth.tsv is found by a scan over all SNPs (or
 * all SNP sets of its order), its size agrees with the truth within sampling error, and the
 * SNPs of a pure epistatic set (or of a non-linear pair) show no effect on their own.
 * Output: TAP, plan at the end.
 *
 * options (the values the dataset was simulated with):
 *   --maf-min F --maf-max F   A1 frequency range (default 0.05, 0.5)
 *   --missing R               missing-call rate (default 0)
 *   --prevalence P            (cc) check the case fraction
 *   --order K                 scan epistatic sets of order K only (default: every order)
 *   --min-var V               planted additive SNPs / non-linear pairs whose variance share
 *                             (effect²) is below V are not required to rank first (default 0.02)
 *   --alpha A                 significance level of the "no marginal effect" checks (default
 *                             1e-5 per test) */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tilegwas.h"

/* 5 standard errors: with a few hundred checks the chance of a false failure is < 1e-4. */
#define Z_TOL 5.0
#define MAX_SCAN_WORK 4e9 /* combinations × samples of one exhaustive scan */

typedef struct {
    double maf_min, maf_max, missing, prevalence, min_var, alpha;
    int order;
} check_opts;

typedef enum { K_ADDITIVE, K_NONLINEAR, K_EPISTASIS } eff_kind;

typedef struct {
    int pheno; /* column of the phenotype file */
    eff_kind kind;
    int k; /* SNPs in the effect */
    int64_t snp[4];
    double effect;
} truth_eff;

typedef struct {
    tg_bed bed;
    int64_t n, m;
    int8_t *g; /* n × m, column-major */
    tg_pheno ph;
    truth_eff *eff;
    int n_eff;
} dataset;

/* Role of a SNP for one phenotype: 0 none, else 1 + eff_kind, with the order for epistasis. */
static int role_of(const truth_eff *e) {
    return e->kind == K_EPISTASIS ? 10 + e->k : 1 + (int)e->kind;
}

static const dataset *sort_ds; /* qsort has no context argument */
static int cmp_snp_id(const void *a, const void *b) {
    return strcmp(sort_ds->bed.snps[*(const int64_t *)a].id,
                  sort_ds->bed.snps[*(const int64_t *)b].id);
}

static int64_t find_snp(const dataset *d, const int64_t *sorted, const char *id) {
    int64_t lo = 0, hi = d->m - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        int c = strcmp(d->bed.snps[sorted[mid]].id, id);
        if (!c) return sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Parses PREFIX.truth.tsv; returns 0 and fills d->eff, or prints why and returns -1. */
static int read_truth(const char *prefix, dataset *d) {
    char path[4096], line[1024];
    snprintf(path, sizeof path, "%s.truth.tsv", prefix);
    FILE *f = fopen(path, "r");
    int64_t *sorted = malloc((size_t)d->m * sizeof *sorted);
    int rc = -1, line_no = 0, cap = 0;
    if (!f || !sorted) {
        diag("cannot open %s", path);
        goto done;
    }
    for (int64_t j = 0; j < d->m; j++) sorted[j] = j;
    sort_ds = d;
    qsort(sorted, (size_t)d->m, sizeof *sorted, cmp_snp_id);
    if (!fgets(line, sizeof line, f) || strncmp(line, "pheno\tkind\tsnps\teffect", 22)) {
        diag("%s: missing header 'pheno kind snps effect'", path);
        goto done;
    }
    while (fgets(line, sizeof line, f)) {
        line_no++;
        char *pheno = strtok(line, "\t\n"), *kind = strtok(NULL, "\t\n");
        char *snps = strtok(NULL, "\t\n"), *eff = strtok(NULL, "\t\n"), *end;
        if (!eff) {
            diag("%s line %d: expected 4 fields", path, line_no + 1);
            goto done;
        }
        if (d->n_eff == cap) {
            cap = cap ? 2 * cap : 16;
            truth_eff *t = realloc(d->eff, (size_t)cap * sizeof *t);
            if (!t) goto done;
            d->eff = t;
        }
        truth_eff *e = &d->eff[d->n_eff++];
        e->pheno = -1;
        for (int c = 0; c < d->ph.n_cols; c++)
            if (!strcmp(d->ph.names[c], pheno)) e->pheno = c;
        e->effect = strtod(eff, &end);
        if (!strcmp(kind, "additive"))
            e->kind = K_ADDITIVE, e->k = 1;
        else if (!strcmp(kind, "nonlinear"))
            e->kind = K_NONLINEAR, e->k = 2;
        else if (!strncmp(kind, "epistasis", 9) && kind[9] >= '2' && kind[9] <= '4' && !kind[10])
            e->kind = K_EPISTASIS, e->k = kind[9] - '0';
        else {
            diag("%s line %d: unknown kind '%s'", path, line_no + 1, kind);
            goto done;
        }
        int k = 0;
        for (char *s = strtok(snps, ","); s; s = strtok(NULL, ","), k++)
            if (k >= e->k || (e->snp[k] = find_snp(d, sorted, s)) < 0) {
                diag("%s line %d: SNP '%s' not in the .bim, or too many SNPs", path,
                     line_no + 1, s);
                goto done;
            }
        if (e->pheno < 0 || k != e->k || *end) {
            diag("%s line %d: bad phenotype name, SNP count or effect", path, line_no + 1);
            goto done;
        }
    }
    rc = 0;
done:
    if (f) fclose(f);
    free(sorted);
    return rc;
}

static int8_t geno(const dataset *d, int64_t i, int64_t j) { return d->g[i + j * d->n]; }

/* Upper tail of χ² with df degrees of freedom, closed form for even df (odd df rounded up,
 * which only makes the tail larger): e^(−x/2) Σ_{i<df/2} (x/2)^i / i!. */
static double chi2_tail(double x, int df) {
    int half = (df + 1) / 2;
    double term = 1, sum = 1;
    for (int i = 1; i < half; i++) sum += (term *= x / 2 / i);
    return exp(-x / 2 + log(sum));
}

/* Table of the samples by the 3^k genotypes of @p snp (samples with a missing call dropped):
 * T = n·(between-cell sum of squares)/(total sum of squares) of y, which for a 1/2-coded
 * case-control y is exactly Pearson's χ² of the 2 × 3^k table; and the K2 score (cc). */
typedef struct {
    double T, k2;
    int cells; /* non-empty cells */
} table_stat;

static table_stat table_scan(const dataset *d, const double *y, const int64_t *snp, int k) {
    double cnt[81] = {0}, sum[81] = {0}, cases[81] = {0}, sy = 0, syy = 0;
    int64_t used = 0;
    for (int64_t i = 0; i < d->n; i++) {
        int cell = 0, s;
        for (s = 0; s < k; s++) {
            int8_t g = geno(d, i, snp[s]);
            if (g < 0) break;
            cell = 3 * cell + g;
        }
        if (s < k) continue;
        cnt[cell]++, sum[cell] += y[i], cases[cell] += y[i] == 2;
        sy += y[i], syy += y[i] * y[i], used++;
    }
    table_stat r = {0, 0, 0};
    double mean = sy / (double)used, sst = syy - sy * mean, ssb = 0;
    for (int c = 0; c < 81; c++) {
        if (!cnt[c]) continue;
        r.cells++;
        ssb += sum[c] * sum[c] / cnt[c];
        r.k2 += lgamma(cnt[c] + 2) - lgamma(cases[c] + 1) - lgamma(cnt[c] - cases[c] + 1);
    }
    ssb -= sy * mean;
    r.T = sst > 0 ? (double)used * ssb / sst : 0;
    return r;
}

/* Sample-standardized genotype of SNP j (NAN where missing). */
static void zvec(const dataset *d, int64_t j, double *z) {
    double s = 0, ss = 0;
    int64_t n = 0;
    for (int64_t i = 0; i < d->n; i++)
        if (geno(d, i, j) >= 0) s += geno(d, i, j), ss += geno(d, i, j) * geno(d, i, j), n++;
    double mean = s / (double)n, sd = sqrt(ss / (double)n - mean * mean);
    for (int64_t i = 0; i < d->n; i++)
        z[i] = geno(d, i, j) >= 0 ? (geno(d, i, j) - mean) / sd : NAN;
}

/* Least-squares slope of y on x over samples where x is not NAN, with the heteroscedasticity-
 * robust (sandwich) standard error: valid when the variance of y depends on x, as it does for a
 * non-linear trait. */
static void lin_fit(const double *x, const double *y, int64_t n, double *b, double *se) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(x[i])) sx += x[i], sy += y[i], m++;
    double mx = sx / m, my = sy / m;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(x[i])) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
    *b = sxy / sxx;
    double meat = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i])) continue;
        double e = y[i] - my - *b * (x[i] - mx);
        meat += (x[i] - mx) * (x[i] - mx) * e * e;
    }
    *se = sqrt(meat) / sxx;
}

/* (1) Frequencies inside the range within a binomial bound, missing rate, HWE; the .bim. */
static void check_genotypes(const dataset *d, const check_opts *o, const int *epistatic) {
    int64_t bad = 0, miss = 0, worst = -1, n_free = 0;
    double worst_dev = 0, het_obs = 0, het_exp = 0, het_var = 0, mean_free = 0;
    for (int64_t j = 0; j < d->m; j++) {
        int64_t n = 0, a1 = 0, het = 0;
        for (int64_t i = 0; i < d->n; i++) {
            int8_t g = geno(d, i, j);
            if (g < 0) {
                miss++;
                continue;
            }
            n++, a1 += g, het += g == 1;
        }
        if (!n) continue;
        double p = (double)a1 / (2.0 * (double)n), tol = Z_TOL * sqrt(1 / (8.0 * (double)n));
        double lo = epistatic[j] ? 0.5 : o->maf_min, hi = epistatic[j] ? 0.5 : o->maf_max;
        double dev = p < lo ? lo - p : p > hi ? p - hi : 0;
        if (dev > tol) bad++;
        if (dev / tol > worst_dev) worst_dev = dev / tol, worst = j;
        if (!epistatic[j]) mean_free += p, n_free++;
        /* 2n/(2n−1) makes 2p̂q̂ unbiased for the heterozygosity */
        double h = 2 * p * (1 - p) * 2.0 * (double)n / (2.0 * (double)n - 1);
        het_obs += (double)het, het_exp += (double)n * h, het_var += (double)n * h * (1 - h);
    }
    ok(bad == 0, "A1 frequencies inside [%g, %g] (0.5 for epistatic SNPs) within %g binomial sd",
       o->maf_min, o->maf_max, Z_TOL);
    if (bad) diag("%lld SNPs outside; worst %s (%.2f × tolerance)", (long long)bad,
                  d->bed.snps[worst].id, worst_dev);
    if (n_free >= 20) {
        /* p ~ U[min, max]: the mean frequency has sd (max − min)/√(12·M) */
        double want = (o->maf_min + o->maf_max) / 2, got = mean_free / (double)n_free;
        double tol = Z_TOL * ((o->maf_max - o->maf_min) / sqrt(12.0 * (double)n_free) +
                              sqrt(1 / (8.0 * (double)d->n * (double)n_free)));
        ok(fabs(got - want) <= tol, "mean A1 frequency %.4f of %lld SNPs ≈ %.4f (uniform range)",
           got, (long long)n_free, want);
    }
    double calls = (double)d->n * (double)d->m, rate = (double)miss / calls;
    double tol = Z_TOL * sqrt(o->missing * (1 - o->missing) / calls) + 1e-12;
    ok(fabs(rate - o->missing) <= tol, "missing rate %.5f ≈ %g", rate, o->missing);
    double z = (het_obs - het_exp) / sqrt(het_var);
    ok(fabs(z) <= Z_TOL, "heterozygotes %.0f vs %.1f expected under HWE (z = %.2f)", het_obs,
       het_exp, z);
    int bim_ok = 1;
    for (int64_t j = 0; j < d->m; j++) {
        const tg_snp *s = &d->bed.snps[j];
        int chrom = atoi(s->chrom);
        bim_ok &= chrom >= 1 && chrom <= 22 && strlen(s->a1) == 1 && strlen(s->a2) == 1 &&
                  strchr("ACGT", s->a1[0]) && strchr("ACGT", s->a2[0]) && s->a1[0] != s->a2[0];
        if (j) {
            const tg_snp *t = &d->bed.snps[j - 1];
            int prev = atoi(t->chrom);
            bim_ok &= chrom > prev || (chrom == prev && s->pos > t->pos);
        }
    }
    ok(bim_ok, ".bim: chromosomes 1-22 in blocks, increasing positions, distinct ACGT alleles");
}

/* Marginal test of one SNP against y: cc → 2×3 χ² (2 df), qt → robust t² (1 df); p-value. */
static double marginal_p(const dataset *d, const double *y, int cc, int64_t j, double *z,
                         double *stat) {
    if (cc) {
        *stat = table_scan(d, y, &j, 1).T;
        return chi2_tail(*stat, 2);
    }
    double b, se;
    zvec(d, j, z);
    lin_fit(z, y, d->n, &b, &se);
    *stat = (b / se) * (b / se);
    return erfc(fabs(b / se) / sqrt(2.0));
}

/* (2) Additive SNPs: the strong ones beat every other SNP in the marginal scan; qt: slope ≈ β. */
static void check_additive(const dataset *d, const check_opts *o, int p, const double *y, int cc,
                           const int *role, double *z) {
    double best_other = -1, worst_planted = INFINITY, stat;
    int64_t best_j = -1, n_checked = 0;
    for (int64_t j = 0; j < d->m; j++) {
        if (role[j] == 1 + K_ADDITIVE) continue;
        marginal_p(d, y, cc, j, z, &stat);
        if (stat > best_other) best_other = stat, best_j = j;
    }
    for (int k = 0; k < d->n_eff; k++) {
        const truth_eff *e = &d->eff[k];
        if (e->pheno != p || e->kind != K_ADDITIVE) continue;
        marginal_p(d, y, cc, e->snp[0], z, &stat);
        if (e->effect * e->effect >= o->min_var) {
            n_checked++;
            if (stat < worst_planted) worst_planted = stat;
        }
        double b, se;
        zvec(d, e->snp[0], z);
        lin_fit(z, y, d->n, &b, &se);
        if (cc) {
            ok(b * e->effect > 0 || e->effect * e->effect < o->min_var,
               "%s additive %s: direction of the association (slope %.3g) matches effect %.3g",
               d->ph.names[p], d->bed.snps[e->snp[0]].id, b, e->effect);
        } else {
            /* z uses the sample frequency, the truth the population one: relative O(1/√n) */
            double tol = Z_TOL * se + Z_TOL * fabs(e->effect) / sqrt((double)d->n);
            ok(fabs(b - e->effect) <= tol, "%s additive %s: slope %.4f ≈ effect %.4f (tol %.3g)",
               d->ph.names[p], d->bed.snps[e->snp[0]].id, b, e->effect, tol);
        }
    }
    if (!n_checked) {
        diag("%s: no additive SNP explains ≥ %g of the variance; ranking not checked",
             d->ph.names[p], o->min_var);
        return;
    }
    ok(worst_planted > best_other,
       "%s: %lld additive SNPs with effect² ≥ %g rank above all %lld other SNPs (%s %.1f vs best "
       "other %s %.1f)",
       d->ph.names[p], (long long)n_checked, o->min_var, (long long)(d->m - n_checked),
       cc ? "χ²" : "t²", worst_planted, d->bed.snps[best_j].id, best_other);
}

/* Whether a scan over sets of role r may include SNP j (no SNP of another planted role). */
static int candidate(const int *role, int64_t j, int r) { return role[j] == 0 || role[j] == r; }

/* The planted effect of phenotype p with role r and these SNPs, or -1. */
static int planted_index(const dataset *d, int p, int r, const int64_t *snp, int k) {
    for (int e = 0; e < d->n_eff; e++) {
        const truth_eff *t = &d->eff[e];
        if (t->pheno != p || role_of(t) != r) continue;
        int same = 1;
        for (int s = 0; s < k; s++) same &= t->snp[s] == snp[s];
        if (same) return e;
    }
    return -1;
}

/* Next k-combination of [0, n) in increasing order; 0 when done. */
static int next_comb(int64_t *c, int k, int64_t n) {
    int i = k - 1;
    while (i >= 0 && c[i] == n - k + i) i--;
    if (i < 0) return 0;
    c[i]++;
    for (int s = i + 1; s < k; s++) c[s] = c[s - 1] + 1;
    return 1;
}

/* (3) Epistatic sets of order k: an exhaustive scan of all k-sets of candidate SNPs ranks the
 * planted ones first (T; and K2 for cc); no proper subset of a planted set is significant;
 * the effect of s = (−1)^(heterozygous count) is 2E between the two parities. */
static void check_epistasis(const dataset *d, const check_opts *o, int p, const double *y, int cc,
                            int k, const int *role) {
    const int r = 10 + k;
    int64_t *cand = malloc((size_t)d->m * sizeof *cand), mc = 0, c[4], snp[4], other[4] = {0};
    for (int64_t j = 0; j < d->m; j++)
        if (candidate(role, j, r)) cand[mc++] = j;
    double combos = 1;
    for (int s = 0; s < k; s++) combos = combos * (double)(mc - s) / (s + 1);
    if (combos * (double)d->n > MAX_SCAN_WORK) {
        ok(0, "%s order %d: %.3g sets × %lld samples is too large an exhaustive scan for a test",
           d->ph.names[p], k, combos, (long long)d->n);
        free(cand);
        return;
    }
    double best_T = -1, best_k2 = INFINITY, worst_T = INFINITY, worst_k2 = -INFINITY;
    int n_planted = 0;
    for (int s = 0; s < k; s++) c[s] = s;
    do {
        for (int s = 0; s < k; s++) snp[s] = cand[c[s]];
        table_stat t = table_scan(d, y, snp, k);
        if (planted_index(d, p, r, snp, k) >= 0) {
            n_planted++;
            worst_T = fmin(worst_T, t.T), worst_k2 = fmax(worst_k2, t.k2);
        } else {
            if (t.T > best_T) best_T = t.T, memcpy(other, snp, sizeof other);
            best_k2 = fmin(best_k2, t.k2);
        }
    } while (next_comb(c, k, mc));
    ok(n_planted > 0 && worst_T > best_T,
       "%s: exhaustive scan of %.0f sets of order %d ranks the %d planted set(s) first "
       "(T %.1f vs best other %.1f: %s,%s,...)",
       d->ph.names[p], combos, k, n_planted, worst_T, best_T, d->bed.snps[other[0]].id,
       d->bed.snps[other[1]].id);
    if (cc)
        ok(worst_k2 < best_k2, "%s order %d: K2 ranks the planted set(s) first too (%.1f vs %.1f)",
           d->ph.names[p], k, worst_k2, best_k2);
    free(cand);

    for (int e = 0; e < d->n_eff; e++) {
        const truth_eff *t = &d->eff[e];
        if (t->pheno != p || role_of(t) != r) continue;
        /* every proper non-empty subset, by bit mask */
        double min_p = 1;
        int worst_mask = 0;
        for (int mask = 1; mask < (1 << k) - 1; mask++) {
            int ks = 0;
            for (int s = 0; s < k; s++)
                if (mask >> s & 1) snp[ks++] = t->snp[s];
            table_stat ts = table_scan(d, y, snp, ks);
            double pv = chi2_tail(ts.T, ts.cells - 1);
            if (pv < min_p) min_p = pv, worst_mask = mask;
        }
        ok(min_p > o->alpha,
           "%s %s,...: no subset of the %d-way set has an effect (smallest p %.3g, subset mask %d)",
           d->ph.names[p], d->bed.snps[t->snp[0]].id, k, min_p, worst_mask);
        /* effect size: mean of y by the parity s */
        double n1 = 0, n0 = 0, s1 = 0, s0 = 0, q1 = 0, q0 = 0;
        for (int64_t i = 0; i < d->n; i++) {
            int het = 0, s;
            for (s = 0; s < k && geno(d, i, t->snp[s]) >= 0; s++) het += geno(d, i, t->snp[s]) == 1;
            if (s < k) continue;
            if (het & 1)
                n0++, s0 += y[i], q0 += y[i] * y[i];
            else
                n1++, s1 += y[i], q1 += y[i] * y[i];
        }
        double m1 = s1 / n1, m0 = s0 / n0;
        double se = sqrt((q1 / n1 - m1 * m1) / n1 + (q0 / n0 - m0 * m0) / n0);
        ok(fabs(m1 - m0 - 2 * t->effect) <= Z_TOL * se,
           "%s %d-way set: mean difference between parities %.4f ≈ 2E = %.4f (se %.3g)",
           d->ph.names[p], k, m1 - m0, 2 * t->effect, se);
    }
}

/* (4) Non-linear pairs (qt): a scan of all candidate pairs by the robust t² of y on z_a·z_b
 * ranks the strong planted pairs first; slope ≈ w; no linear marginal effect of their SNPs. */
static void check_nonlinear(const dataset *d, const check_opts *o, int p, const double *y,
                            const int *role, double *z) {
    const int r = 1 + K_NONLINEAR;
    int64_t *cand = malloc((size_t)d->m * sizeof *cand), mc = 0, c[2] = {0, 1};
    for (int64_t j = 0; j < d->m; j++)
        if (candidate(role, j, r)) cand[mc++] = j;
    double *zs = malloc((size_t)(d->n * mc) * sizeof *zs), *x = malloc((size_t)d->n * sizeof *x);
    for (int64_t a = 0; a < mc; a++) zvec(d, cand[a], zs + a * d->n);
    double best_other = -1, worst_planted = INFINITY, b, se;
    int n_checked = 0;
    if (mc >= 2) do {
            const double *za = zs + c[0] * d->n, *zb = zs + c[1] * d->n;
            for (int64_t i = 0; i < d->n; i++) x[i] = za[i] * zb[i];
            lin_fit(x, y, d->n, &b, &se);
            int64_t snp[2] = {cand[c[0]], cand[c[1]]};
            int e = planted_index(d, p, r, snp, 2);
            if (e < 0)
                best_other = fmax(best_other, (b / se) * (b / se));
            else if (d->eff[e].effect * d->eff[e].effect >= o->min_var)
                worst_planted = fmin(worst_planted, (b / se) * (b / se)), n_checked++;
        } while (next_comb(c, 2, mc));
    ok(n_checked > 0 && worst_planted > best_other,
       "%s: scan of all pairs by z_a·z_b ranks the %d planted non-linear pairs with effect² ≥ %g "
       "first (t² %.1f vs best other %.1f)",
       d->ph.names[p], n_checked, o->min_var, worst_planted, best_other);
    for (int e = 0; e < d->n_eff; e++) {
        const truth_eff *t = &d->eff[e];
        if (t->pheno != p || t->kind != K_NONLINEAR) continue;
        zvec(d, t->snp[0], z);
        zvec(d, t->snp[1], x);
        for (int64_t i = 0; i < d->n; i++) x[i] *= z[i];
        lin_fit(x, y, d->n, &b, &se);
        double tol = Z_TOL * se + Z_TOL * fabs(t->effect) / sqrt((double)d->n);
        ok(fabs(b - t->effect) <= tol, "%s non-linear %s,%s: slope %.4f ≈ w = %.4f (tol %.3g)",
           d->ph.names[p], d->bed.snps[t->snp[0]].id, d->bed.snps[t->snp[1]].id, b, t->effect, tol);
        for (int s = 0; s < 2; s++) {
            double stat, pv = marginal_p(d, y, 0, t->snp[s], z, &stat);
            ok(pv > o->alpha, "%s non-linear SNP %s: no linear marginal effect (robust p %.3g)",
               d->ph.names[p], d->bed.snps[t->snp[s]].id, pv);
        }
    }
    free(x);
    free(zs);
    free(cand);
}

static void check_phenotype(const dataset *d, const check_opts *o, int p, int *role, double *z) {
    const double *y = d->ph.values + (size_t)p * d->n;
    int cc = 1, has[16] = {0};
    int64_t cases = 0, n_nan = 0;
    double s = 0, s2 = 0, s4 = 0, epi_var = 0;
    for (int64_t i = 0; i < d->n; i++) {
        n_nan += isnan(y[i]);
        cc &= y[i] == 1 || y[i] == 2;
        cases += y[i] == 2, s += y[i], s2 += y[i] * y[i];
    }
    ok(n_nan == 0, "%s: every sample has a value", d->ph.names[p]);
    for (int64_t j = 0; j < d->m; j++) role[j] = 0;
    for (int e = 0; e < d->n_eff; e++) {
        const truth_eff *t = &d->eff[e];
        if (t->pheno != p) continue;
        for (int k = 0; k < t->k; k++) role[t->snp[k]] = role_of(t);
        has[role_of(t)] = 1;
        if (t->kind == K_EPISTASIS) epi_var += t->effect * t->effect;
    }
    double n = (double)d->n, mean = s / n, var = s2 / n - mean * mean;
    if (cc) {
        diag("%s: case-control, %lld cases, %lld controls", d->ph.names[p], (long long)cases,
             (long long)(d->n - cases));
        if (!isnan(o->prevalence)) {
            double sd = sqrt(o->prevalence * (1 - o->prevalence) / n);
            ok(fabs(cases / n - o->prevalence) <= Z_TOL * sd, "%s: case fraction %.4f ≈ %g",
               d->ph.names[p], cases / n, o->prevalence);
        }
    } else {
        /* the model gives Var(y) = 1 + Σ E² (genetic part h2 + noise 1 − h2, or noise 1) */
        for (int64_t i = 0; i < d->n; i++) s4 += pow(y[i] - mean, 4);
        double se = sqrt((s4 / n - var * var) / n);
        ok(fabs(var - (1 + epi_var)) <= Z_TOL * se, "%s: quantitative, variance %.4f ≈ %.4f",
           d->ph.names[p], var, 1 + epi_var);
    }
    if (has[1 + K_ADDITIVE]) check_additive(d, o, p, y, cc, role, z);
    if (has[1 + K_NONLINEAR]) check_nonlinear(d, o, p, y, role, z);
    for (int k = 2; k <= 4; k++)
        if (has[10 + k] && (!o->order || o->order == k)) check_epistasis(d, o, p, y, cc, k, role);
}

static int usage(void) {
    fprintf(stderr, "usage: sim_check PREFIX [--maf-min F] [--maf-max F] [--missing R] "
                    "[--prevalence P] [--order K] [--min-var V] [--alpha A]\n");
    return 2;
}

int main(int argc, char **argv) {
    static const struct option opts[] = {
        {"maf-min", required_argument, 0, 'a'}, {"maf-max", required_argument, 0, 'b'},
        {"missing", required_argument, 0, 'm'}, {"prevalence", required_argument, 0, 'p'},
        {"order", required_argument, 0, 'o'},   {"min-var", required_argument, 0, 'v'},
        {"alpha", required_argument, 0, 'x'},   {0, 0, 0, 0}};
    check_opts o = {.maf_min = 0.05, .maf_max = 0.5, .prevalence = NAN, .min_var = 0.02,
                    .alpha = 1e-5};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        double v = optarg ? atof(optarg) : 0;
        switch (c) {
        case 'a': o.maf_min = v; break;
        case 'b': o.maf_max = v; break;
        case 'm': o.missing = v; break;
        case 'p': o.prevalence = v; break;
        case 'o': o.order = (int)v; break;
        case 'v': o.min_var = v; break;
        case 'x': o.alpha = v; break;
        default: return usage();
        }
    }
    if (optind != argc - 1) return usage();
    const char *prefix = argv[optind];
    dataset d = {0};
    tg_error err = {0};
    char path[4096];
    if (tg_bed_open(prefix, &d.bed, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    d.n = d.bed.n_samples, d.m = d.bed.n_snps;
    snprintf(path, sizeof path, "%s.pheno", prefix);
    d.g = malloc((size_t)(d.n * d.m));
    int *role = malloc((size_t)d.m * sizeof *role);
    int *epistatic = calloc((size_t)d.m, sizeof *epistatic);
    double *z = malloc((size_t)d.n * sizeof *z);
    if (!d.g || !role || !epistatic || !z) {
        printf("Bail out! out of memory\n");
        return 1;
    }
    if (tg_pheno_read(path, d.bed.samples, d.n, &d.ph, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    tg_bed_decode(&d.bed, 0, d.n, 0, d.m, d.g, d.n);
    if (read_truth(prefix, &d)) {
        printf("Bail out! cannot read %s.truth.tsv\n", prefix);
        return 1;
    }
    diag("%s: %lld samples, %lld SNPs, %d phenotype(s), %d planted effects", prefix,
         (long long)d.n, (long long)d.m, d.ph.n_cols, d.n_eff);

    int fam_ok = 1, distinct = 1;
    for (int64_t i = 0; i < d.n; i++) {
        double a = d.bed.samples[i].pheno, b = d.ph.values[i];
        fam_ok &= a == b || (isnan(a) && isnan(b));
    }
    ok(fam_ok, ".fam phenotype column equals %s", d.ph.n_cols ? d.ph.names[0] : "(none)");
    /* role[] counts the effects each SNP is planted in, until check_phenotype reuses it */
    for (int64_t j = 0; j < d.m; j++) role[j] = 0;
    for (int e = 0; e < d.n_eff; e++)
        for (int k = 0; k < d.eff[e].k; k++) {
            int64_t j = d.eff[e].snp[k];
            distinct &= role[j]++ == 0;
            epistatic[j] |= d.eff[e].kind == K_EPISTASIS;
        }
    ok(distinct, "planted SNPs are distinct (%d effects)", d.n_eff);
    check_genotypes(&d, &o, epistatic);
    for (int p = 0; p < d.ph.n_cols; p++) check_phenotype(&d, &o, p, role, z);

    printf("1..%d\n", tap_n);
    free(z);
    free(epistatic);
    free(role);
    free(d.eff);
    free(d.g);
    tg_pheno_free(&d.ph);
    tg_bed_close(&d.bed);
    return tap_done();
}
