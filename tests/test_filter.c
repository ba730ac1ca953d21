/* Selection and QC (geno/filter.c, geno/qc.c): the HWE exact test against a naive enumeration of
 * the exact distribution in long double, and the steps' counts and the filtered genotypes on
 * small random filesets against the definitions computed here from the genotype array. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "geno/qc.h"
#include "tap.h"

/* The exact test by its definition: P(h) ∝ n! / (homr! h! homc!) · 2^h over every h of the
 * rare allele count's parity; p = Σ P(h) over P(h) ≤ P(obs). */
static long double naive_hwe(int64_t het, int64_t hom1, int64_t hom2) {
    int64_t n = het + hom1 + hom2, rare = het + 2 * (hom1 < hom2 ? hom1 : hom2);
    if (!n) return 1;
    long double lp[8192], top = -INFINITY, obs = 0;
    int64_t k = 0;
    for (int64_t h = rare % 2; h <= rare && h <= n; h += 2, k++) {
        int64_t r = (rare - h) / 2, c = n - h - r;
        lp[k] = lgammal(n + 1) - lgammal(r + 1) - lgammal(h + 1) - lgammal(c + 1) + h * logl(2);
        if (lp[k] > top) top = lp[k];
        if (h == het) obs = lp[k];
    }
    long double tail = 0, total = 0;
    for (int64_t q = 0; q < k; q++) {
        long double p = expl(lp[q] - top);
        total += p;
        if (lp[q] <= obs + 1e-12L) tail += p;
    }
    return tail / total;
}

static void test_hwe(tg_rng *r) {
    int bad = 0, cases = 0;
    double worst = 0;
    for (int64_t n = 1; n <= 60; n++)
        for (int64_t hom1 = 0; hom1 <= n; hom1++)
            for (int64_t het = 0; het + hom1 <= n; het++, cases++) {
                int64_t hom2 = n - hom1 - het;
                double p = tg_hwe_p(het, hom1, hom2), q = (double)naive_hwe(het, hom1, hom2);
                double d = fabs(p - q) / (q > 1e-300 ? q : 1);
                if (d > worst) worst = d;
                if (!(d <= 1e-9) && bad++ < 3)
                    diag("het %lld hom %lld/%lld: %.17g, naive %.17g", (long long)het,
                         (long long)hom1, (long long)hom2, p, q);
            }
    ok(!bad, "HWE p = naive enumeration for every genotype count of 1..60 samples (%d cases, "
       "worst relative difference %.2g)", cases, worst);
    bad = 0;
    worst = 0;
    for (int t = 0; t < 200; t++) {
        int64_t n = 100 + (int64_t)tg_rng_below(r, 7000);
        double f = 0.02 + 0.48 * tg_rng_uniform(r), e = 0.7 + 0.6 * tg_rng_uniform(r);
        int64_t het = (int64_t)(2 * f * (1 - f) * e * (double)n);
        int64_t hom1 = (int64_t)((double)(n - het) * f * f / (f * f + (1 - f) * (1 - f)));
        int64_t hom2 = n - het - hom1;
        double p = tg_hwe_p(het, hom1, hom2), q = (double)naive_hwe(het, hom1, hom2);
        double d = q > 1e-250 ? fabs(p - q) / q : fabs(p - q);
        if (d > worst) worst = d;
        if (!(d <= 1e-8) && bad++ < 3)
            diag("het %lld hom %lld/%lld: %.17g, naive %.17g", (long long)het, (long long)hom1,
                 (long long)hom2, p, q);
    }
    ok(!bad, "HWE p = naive enumeration on 200 random counts of 100..7100 samples, from "
       "deficits to excesses of heterozygotes (worst relative difference %.2g)", worst);
    /* the threshold test, which mostly stops early, against the whole p-value */
    static const double thr[] = {1e-50, 1e-12, 1e-6, 1e-3, 0.05, 0.5, 0.999};
    int agree = 1, tests = 0;
    for (int t = 0; t < 3000; t++) {
        int64_t n = 1 + (int64_t)tg_rng_below(r, t < 1500 ? 80 : 20000);
        int64_t het = (int64_t)tg_rng_below(r, (uint64_t)n + 1);
        int64_t hom1 = (int64_t)tg_rng_below(r, (uint64_t)(n - het) + 1), hom2 = n - het - hom1;
        double p = tg_hwe_p(het, hom1, hom2);
        for (size_t k = 0; k < sizeof thr / sizeof thr[0]; k++, tests++) {
            /* thresholds at p itself too, where the early stop must not round the other way */
            double th = k ? thr[k] : p;
            if (tg_hwe_below(het, hom1, hom2, th) != (p < th) && agree) {
                agree = 0;
                diag("het %lld hom %lld/%lld thr %g: p %.17g", (long long)het, (long long)hom1,
                     (long long)hom2, th, p);
            }
        }
    }
    ok(agree, "tg_hwe_below(thr) = (tg_hwe_p < thr) on %d random counts and thresholds", tests);
    ok(tg_hwe_p(0, 0, 0) == 1 && tg_hwe_p(0, 5, 0) == 1 && tg_hwe_p(100000, 0, 0) == 0,
       "HWE: no genotype or a monomorphic SNP give 1; 100,000 heterozygotes alone give 0 "
       "(underflow, not NaN)");
}

/* ---- steps on a small fileset */

#define N 41
#define M 57

typedef struct {
    int8_t g[N * M];
    int founder[N];
    char dir[64], prefix[96];
} fixture;

static tg_status write_fixture(fixture *x, tg_rng *r, tg_error *err) {
    static char zero[] = "0", dad[] = "S0";
    char ids[N + M][16];
    tg_sample s[N];
    tg_snp v[M];
    make_geno(r, N, M, 0.01, 0.5, 0.06, x->g);
    for (int i = 0; i < 5; i++) /* a few samples with many more missing calls */
        for (int j = 0; j < M; j++)
            if (tg_rng_uniform(r) < 0.3) x->g[i + j * N] = TG_GENO_MISSING;
    for (int i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], "S%d", i);
        x->founder[i] = i % 6 != 5;
        s[i] = (tg_sample){ids[i], ids[i], x->founder[i] ? zero : dad, zero, 0, NAN};
    }
    for (int j = 0; j < M; j++) {
        snprintf(ids[N + j], sizeof ids[N + j], "v%d", j);
        v[j] = (tg_snp){"3", ids[N + j], 0, 1000 + j, "A", "C"};
    }
    snprintf(x->prefix, sizeof x->prefix, "%s/f", x->dir);
    return tg_bed_write(x->prefix, s, N, v, M, x->g, N, err);
}

/* Expected by the definitions: --mind over every SNP, then --geno and --maf (founders) over the
 * samples left, plink2's strict comparisons. */
static void expected(const fixture *x, double mind, double geno, double maf, int *skeep,
                     int *vkeep, int64_t cnt[3]) {
    memset(cnt, 0, 3 * sizeof *cnt);
    int64_t ns = 0;
    for (int i = 0; i < N; i++) {
        int miss = 0;
        for (int j = 0; j < M; j++) miss += x->g[i + j * N] < 0;
        skeep[i] = miss <= mind * M + 1e-9;
        ns += skeep[i];
        cnt[0] += !skeep[i];
    }
    for (int j = 0; j < M; j++) {
        int miss = 0, a1 = 0, calls = 0;
        for (int i = 0; i < N; i++) {
            int8_t y = x->g[i + j * N];
            if (!skeep[i]) continue;
            miss += y < 0;
            if (x->founder[i] && y >= 0) a1 += y, calls++;
        }
        double f = calls ? (double)a1 / (2.0 * calls) : 0.5, mf = f < 1 - f ? f : 1 - f;
        vkeep[j] = 1;
        if (miss > geno * (double)ns + 1e-9) vkeep[j] = 0, cnt[1]++;
        else if (mf < maf - 1e-12) vkeep[j] = 0, cnt[2]++;
    }
}

static void test_steps(tg_rng *r) {
    fixture x;
    tg_error err;
    strcpy(x.dir, "/tmp/tg-filter-XXXXXX");
    if (!mkdtemp(x.dir) || write_fixture(&x, r, &err)) {
        ok(0, "fixture written");
        return;
    }
    tg_input_opts o;
    tg_input_opts_init(&o);
    o.path = x.prefix;
    o.mind = 0.15;
    o.geno = 0.08;
    o.maf = 0.1;
    tg_bed b;
    tg_input_report rep;
    int skeep[N], vkeep[M];
    int64_t cnt[3];
    expected(&x, o.mind, o.geno, o.maf, skeep, vkeep, cnt);
    tg_status st = tg_input_open(&o, &b, &rep, &err);
    if (!ok(!st, "tg_input_open with --mind --geno --maf")) {
        diag("%s", err.msg);
        return;
    }
    const char *flag[3] = {"--mind", "--geno", "--maf"};
    int steps_ok = rep.nsteps == 3;
    for (int k = 0; k < 3 && steps_ok; k++)
        steps_ok = strcmp(rep.steps[k].flag, flag[k]) == 0 &&
                   (k ? rep.steps[k].snps_removed : rep.steps[k].samples_removed) == cnt[k];
    ok(steps_ok, "steps --mind, --geno, --maf removed %lld samples, %lld and %lld SNPs, as "
       "computed here", (long long)cnt[0], (long long)cnt[1], (long long)cnt[2]);
    /* the filtered genotypes are the kept rows and columns, in order */
    int same = b.n_samples == N - cnt[0] && b.n_snps == M - cnt[1] - cnt[2];
    int8_t *dec = same ? malloc((size_t)(b.n_samples * b.n_snps)) : NULL;
    if (dec) {
        tg_bed_decode(&b, 0, b.n_samples, 0, b.n_snps, dec, b.n_samples);
        for (int j = 0, jj = 0; j < M; j++) {
            if (!vkeep[j]) continue;
            char id[16];
            snprintf(id, sizeof id, "v%d", j);
            same &= strcmp(b.snps[jj].id, id) == 0;
            for (int i = 0, ii = 0; i < N; i++)
                if (skeep[i]) same &= dec[ii++ + (int64_t)jj * b.n_samples] == x.g[i + j * N];
            jj++;
        }
    }
    ok(same, "the filtered fileset holds the kept samples' genotypes of the kept SNPs, in order");
    free(dec);
    tg_bed_close(&b);
    o.maf = NAN;
    o.mac = 1000;
    st = tg_input_open(&o, &b, &rep, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "--mac removed every variant"),
       "a step that removes every SNP is TG_ERR_ARG naming it: %s", err.msg);
    remove_bed(x.prefix);
    rmdir(x.dir);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    tap_plan(8);
    test_hwe(&r);
    test_steps(&r);
    return tap_done();
}
