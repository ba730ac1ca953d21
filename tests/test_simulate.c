/* The cohort generator (src/algo/simulate.c, tg_simulate) called through the public header:
 * the same options give the same cohort; the planted SNPs are distinct and the rescaled
 * coefficients have Σ effect² = h2 per phenotype (closed form); epistatic SNPs have frequency
 * 0.5; the missing calls counted are those in the genotypes; the .fam phenotype is PHENO1; the
 * liability threshold, recomputed here from the genotypes and the effects, gives a mean case
 * probability equal to the prevalence; and bad options are refused naming the option. The
 * statistics of the planted signals are checked by tests/simulate.sh with tests/sim_check.
 * tg_simulate_stream hands a sink the same genotypes in order, block by block, whatever the
 * number of threads (its pieces of one stream start by tg_rng_jump, which test_rng checks
 * against the stream itself), and stops at the sink's error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "tap.h"
#include "tilegwas.h"

static int same_cohort(const tg_sim *a, const tg_sim *b) {
    size_t nm = (size_t)(a->n * a->m), nk = (size_t)(a->n * a->n_pheno);
    int same = a->n_eff == b->n_eff && a->n_missing == b->n_missing &&
               !memcmp(a->geno, b->geno, nm) && !memcmp(a->pheno, b->pheno, nk * sizeof(double)) &&
               !memcmp(a->freq, b->freq, (size_t)a->m * sizeof(double));
    for (int64_t k = 0; k < a->n_eff && same; k++) { /* field by field: the padding is not set */
        const tg_sim_effect *x = &a->eff[k], *y = &b->eff[k];
        same = x->pheno == y->pheno && x->kind == y->kind && x->nsnp == y->nsnp &&
               x->effect == y->effect && !memcmp(x->snp, y->snp, (size_t)x->nsnp * sizeof *x->snp);
    }
    return same;
}

/* Σ effect² of the additive and non-linear effects of phenotype p. */
static double genetic_variance(const tg_sim *s, int p) {
    double ss = 0;
    for (int64_t k = 0; k < s->n_eff; k++)
        if (s->eff[k].pheno == p && s->eff[k].kind != TG_SIM_EPISTASIS)
            ss += s->eff[k].effect * s->eff[k].effect;
    return ss;
}

static int distinct_snps(const tg_sim *s) {
    char *seen = calloc((size_t)s->m, 1);
    int good = seen != NULL;
    for (int64_t k = 0; k < s->n_eff && good; k++)
        for (int i = 0; i < s->eff[k].nsnp; i++) {
            int64_t j = s->eff[k].snp[i];
            good &= !seen[j] && (i == 0 || j > s->eff[k].snp[i - 1]);
            seen[j] = 1;
        }
    free(seen);
    return good;
}

/* Mean over the samples of Φ((G_i − t)/√(1 − h2)), G from the complete genotypes (call before
 * any missing call: the test's cohort for this has none). */
static double mean_case_probability(const tg_sim *s, const tg_sim_opts *o, int p) {
    double mean = 0, sigma = sqrt(1 - o->h2);
    for (int64_t i = 0; i < s->n; i++) {
        double g = 0;
        for (int64_t k = 0; k < s->n_eff; k++) {
            const tg_sim_effect *e = &s->eff[k];
            if (e->pheno != p || e->kind != TG_SIM_ADDITIVE) continue;
            double f = s->freq[e->snp[0]];
            g += e->effect * (s->geno[i + e->snp[0] * s->n] - 2 * f) / sqrt(2 * f * (1 - f));
        }
        mean += 0.5 * erfc(-(g - s->threshold[p]) / sigma / sqrt(2.0));
    }
    return mean / (double)s->n;
}

/* A sink that copies the blocks into one matrix, checking that they come in order; with
 * fail_at ≥ 0 it fails at the block that starts there. */
typedef struct {
    int8_t *geno;
    int64_t n, next, blocks, fail_at;
    int in_order;
} collect;

static tg_status put(void *ctx, int64_t j0, int64_t nj, const int8_t *g, tg_error *err) {
    collect *c = ctx;
    c->in_order &= j0 == c->next;
    c->next = j0 + nj;
    c->blocks++;
    if (j0 == c->fail_at) return tg_error_set(err, TG_ERR_IO, "sink full at SNP %lld",
                                              (long long)j0);
    memcpy(c->geno + j0 * c->n, g, (size_t)(nj * c->n));
    return TG_OK;
}

/* Every SNP's column differs from every other: pieces drawn from overlapping stretches of one
 * stream would repeat columns. */
static int columns_distinct(const int8_t *g, int64_t ld, int64_t n, int64_t m) {
    for (int64_t j = 0; j < m; j++)
        for (int64_t k = j + 1; k < m; k++)
            if (!memcmp(g + j * ld, g + k * ld, (size_t)n)) return 0;
    return 1;
}

/* The stream's cohort equals tg_simulate's (populations, missing calls, two blocks of 64 MiB:
 * 33,000 × 2,100 genotypes), on every thread and on one. */
static void stream(uint64_t seed) {
    tg_sim_opts o = tg_sim_defaults();
    o.n = 33000, o.m = 2100, o.additive = 3, o.n_pheno = 2, o.seed = seed, o.missing = 0.01;
    o.missing_snps = 0.1, o.missing_snps_rate = 0.1, o.populations = 3, o.fst = 0.05;
    tg_error err = {0};
    tg_sim a, b = {0};
    collect c = {.n = o.n, .fail_at = -1, .in_order = 1};
    const tg_sim_sink sink = {.put = put, .ctx = &c};
    tg_parallel_cap(1);
    tg_status st = tg_simulate(&o, &a, &err);
    tg_parallel_cap(0);
    if (st || !(c.geno = malloc((size_t)(o.n * o.m))) ||
        tg_simulate_stream(&o, &sink, &b, &err)) {
        ok(0, "tg_simulate, then tg_simulate_stream: %s", err.msg);
        free(c.geno);
        return;
    }
    b.geno = c.geno;
    ok(c.in_order && c.next == o.m && c.blocks == 2 && same_cohort(&a, &b) &&
           columns_distinct(a.geno, o.n, 2000, o.m),
       "stream: %lld blocks in order, the cohort of tg_simulate on one thread; columns distinct",
       (long long)c.blocks);
    tg_sim_free(&a);
    tg_sim_free(&b);
    c = (collect){.n = o.n, .fail_at = 0, .in_order = 1};
    c.geno = NULL;
    st = tg_simulate_stream(&o, &sink, &b, &err);
    ok(st == TG_ERR_IO && strstr(err.msg, "sink full at SNP 0") && c.blocks == 1 && !b.snps,
       "stream: the sink's error stops the draw and frees the cohort: %s", err.msg);
}

static void refused(tg_sim_opts o, const char *want, const char *desc) {
    tg_sim s;
    tg_error err = {0};
    tg_status st = tg_simulate(&o, &s, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, want) && !s.geno, "%s: %s", desc, err.msg);
}

int main(void) {
    tap_plan(18);
    tg_error err = {0};
    tg_sim_opts o = tg_sim_defaults();
    o.n = 500, o.m = 300, o.n_pheno = 2, o.additive = 4, o.epi_sets[2] = 1, o.epi_sets[3] = 1;
    o.missing = 0.03, o.seed = tap_seed(), o.prevalence = 0.4, o.epi_effect = 0.1;
    tg_sim a, b;
    tg_status st = tg_simulate(&o, &a, &err);
    if (st || tg_simulate(&o, &b, &err)) {
        ok(0, "tg_simulate: %s", err.msg);
        return tap_done();
    }
    ok(same_cohort(&a, &b), "the same options give the same genotypes, phenotypes and effects");
    ok(a.n_eff == 2 * (4 + 2) && distinct_snps(&a),
       "%lld effects (4 additive + 2 sets per phenotype) on distinct SNPs, each set increasing",
       (long long)a.n_eff);
    ok_close(genetic_variance(&a, 0), o.h2, 1e-12, "phenotype 1: Σ effect² = h2");
    ok_close(genetic_variance(&a, 1), o.h2, 1e-12, "phenotype 2: Σ effect² = h2");
    int freq_ok = 1, cls_ok = 1;
    for (int64_t k = 0; k < a.n_eff; k++)
        for (int i = 0; i < a.eff[k].nsnp && a.eff[k].kind == TG_SIM_EPISTASIS; i++)
            freq_ok &= a.freq[a.eff[k].snp[i]] == 0.5;
    for (int64_t j = 0; j < a.m; j++) freq_ok &= a.freq[j] >= o.maf_min && a.freq[j] <= o.maf_max;
    ok(freq_ok, "epistatic SNPs at frequency 0.5, every frequency in [maf-min, maf-max]");
    int64_t missing = 0, bad = 0;
    for (int64_t e = 0; e < a.n * a.m; e++)
        missing += a.geno[e] == TG_GENO_MISSING, bad += a.geno[e] < -1 || a.geno[e] > 2;
    ok(missing == a.n_missing && !bad && fabs((double)missing / (double)(a.n * a.m) - 0.03) < 0.005,
       "%lld missing calls counted, as many in the genotypes (rate %.4f), the others 0/1/2",
       (long long)a.n_missing, (double)missing / (double)(a.n * a.m));
    for (int64_t i = 0; i < a.n * a.n_pheno; i++) cls_ok &= a.pheno[i] == 1 || a.pheno[i] == 2;
    for (int64_t i = 0; i < a.n; i++) cls_ok &= a.samples[i].pheno == a.pheno[i];
    ok(cls_ok && !strcmp(a.pheno_names[1], "PHENO2"),
       "case-control values 1/2; the .fam phenotype is PHENO1");
    tg_sim_free(&a);
    tg_sim_free(&b);
    ok(!a.geno && !a.eff && !a.samples, "tg_sim_free zeroes");

    /* the liability threshold, without missing calls or epistasis so that G is exact here */
    tg_sim_opts q = tg_sim_defaults();
    q.n = 2000, q.m = 50, q.additive = 5, q.prevalence = 0.2, q.h2 = 0.4, q.seed = o.seed + 1;
    if ((st = tg_simulate(&q, &a, &err))) {
        ok(0, "tg_simulate: %s", err.msg);
        return tap_done();
    }
    ok_close(mean_case_probability(&a, &q, 0), q.prevalence, 1e-9,
             "mean Φ((G − t)/√(1 − h2)) over the samples = prevalence, G recomputed here");
    tg_sim_free(&a);

    tg_sim_opts r = tg_sim_defaults();
    r.m = 10;
    r.maf_min = 0.3, r.maf_max = 0.2;
    refused(r, "--maf-min 0.3 is greater than --maf-max 0.2", "maf-min above maf-max");
    r = tg_sim_defaults(), r.m = 5, r.additive = 6;
    refused(r, "6 planted SNPs per phenotype × 1 phenotypes is more than --n-snps 5",
            "more planted SNPs than SNPs");
    r = tg_sim_defaults(), r.m = 10, r.epi_sets[2] = 3;
    refused(r, "P(case) must stay strictly between 0 and 1", "prevalence ± E·sets outside (0, 1)");
    /* --missing-snps: round(0.25 · 96) of the 96 SNPs not planted at 20%, the others at 1% */
    tg_sim_opts h = tg_sim_defaults();
    h.n = 2000, h.m = 100, h.epi_sets[4] = 1, h.missing = 0.01, h.seed = o.seed + 2;
    h.missing_snps = 0.25, h.missing_snps_rate = 0.2;
    if ((st = tg_simulate(&h, &a, &err))) {
        ok(0, "tg_simulate: %s", err.msg);
        return tap_done();
    }
    int64_t high = 0, low_ok = 1, planted_low = 1, total = 0;
    for (int64_t j = 0; j < a.m; j++) {
        int64_t miss = 0;
        for (int64_t i = 0; i < a.n; i++) miss += a.geno[i + j * a.n] == TG_GENO_MISSING;
        total += miss;
        /* binomial(2000, p): 20% is 400 ± 18, 1% is 20 ± 4.5 */
        const int is_high = miss > 200;
        high += is_high;
        low_ok &= is_high ? miss > 320 && miss < 480 : miss < 50;
        for (int i = 0; i < 4; i++) planted_low &= !(is_high && a.eff[0].snp[i] == j);
    }
    ok(high == 24 && a.n_missing_snps == 24 && low_ok && planted_low && total == a.n_missing,
       "--missing-snps 0.25:0.2: %lld SNPs near 20%% missing (24 = 0.25 × 96 not planted), the "
       "others near 1%%, none of the planted quad",
       (long long)high);
    tg_sim_free(&a);
    r = tg_sim_defaults(), r.m = 10, r.missing_snps = 0.5, r.missing_snps_rate = 1;
    refused(r, "--missing-snps 0.5:1", "--missing-snps rate 1");
    r = tg_sim_defaults(), r.m = 10, r.nl_pairs = 2;
    refused(r, "--nonlinear needs --trait qt", "non-linear pairs in a case-control trait");
    r = tg_sim_defaults(), r.n = (int64_t)1 << 17, r.m = (int64_t)1 << 17;
    refused(r, "2^33 held in memory", "more genotypes than tg_simulate holds");
    stream(o.seed + 3);
    return tap_done();
}
