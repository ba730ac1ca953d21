/* tg_simulate: a synthetic cohort with planted signals (genotypes, phenotypes, the list of
 * planted effects), so that the association workloads can be tested against a truth; the
 * `simulate` command writes it as a PLINK fileset, a phenotype file and a truth table.
 *
 * Model (also in the --help text; tests and later commands rely on it):
 * - SNP j has A1 frequency p_j ~ U[maf-min, maf-max]; genotypes (A1 counts) are drawn in
 *   Hardy–Weinberg proportions (p², 2pq, q²). Planted SNPs are distinct SNPs chosen at random
 *   (distinct across phenotypes too, so every phenotype's effects are independent).
 * - Additive: per phenotype C SNPs with β ~ N(0,1) on the standardized genotype
 *   z = (g − 2p)/√(2p(1−p)) (p the SNP's true frequency).
 * - Non-linear (qt only): per phenotype P pairs (a, b) with weight w = ±1 on z_a·z_b. A product
 *   of independent standardized genotypes has mean 0 given either factor, so no linear model on
 *   single SNPs sees it, while a Gaussian kernel (universal) can.
 * - The genetic part G = Σ β·z + Σ w·z_a·z_b has population variance Σβ² + Σw² (all terms are
 *   uncorrelated with variance coefficient²); the coefficients are rescaled together so it is
 *   h2, hence effect² = variance explained by that term. qt: y = G + e, e ~ N(0, 1 − h2)
 *   (e ~ N(0, 1) when there is no additive or non-linear part). cc: liability L = G + e, and
 *   P(case | G) = Φ((G − t)/√(1−h2)) with the threshold t solved (bisection) so that the mean
 *   of this probability over the sample is the prevalence; without additive SNPs
 *   P(case) = prevalence.
 * - Pure k-way epistasis (k = 2, 3, 4): the k SNPs of a set get frequency 0.5, so each is
 *   heterozygous with probability 1/2 independently; s = (−1)^(number of heterozygous SNPs).
 *   s is independent of the genotypes of any k−1 of them (the parity of the others is a fair
 *   coin), so no proper subset of the set has any effect: cc adds E·s to P(case) (prevalence
 *   ± E·(number of sets) must stay in (0, 1); with additive SNPs too, the probability is
 *   clipped to [0, 1], which keeps the set free of marginal effects because it still acts only
 *   through s), qt adds E·s to y (in units where the rest of the trait has variance 1).
 * - Populations (Balding & Nichols 1995): with K > 1, sample i belongs to population i mod K,
 *   and population q's frequency of SNP j is p_qj ~ Beta(p_j(1−F)/F, (1−p_j)(1−F)/F): mean p_j,
 *   variance F·p_j(1−p_j), so F is the expected F_ST between the populations and the ancestral
 *   p_j. Genotypes are Hardy–Weinberg from p_qj. Epistatic SNPs stay at 0.5 in every
 *   population (the parity argument above needs it). The phenotype model is unchanged and z
 *   keeps the ancestral p_j, so a population's mean genetic value differs from 0: the
 *   stratification that assoc's λ_GC and pca must see (the h2 rescaling holds in the
 *   ancestral population; across the cohort the variance of z is about 1 + F).
 * - Missing calls: each call is set missing with probability --missing, independently (MCAR),
 *   at every SNP, after the phenotypes were drawn from the complete genotypes. --missing-snps
 *   F:R gives round(F·m') of the m' SNPs not planted, chosen at random, the rate R instead:
 *   null SNPs of uneven missingness, the case that made K2 rank by missingness (issue 21),
 *   while the planted SNPs keep the common rate.
 * - Reproducibility: one seed gives five independent streams (layout and effects, genotypes,
 *   phenotypes, missingness, population frequencies); the same options and seed give
 *   byte-identical files, and one population draws nothing from the fifth, so its files are
 *   those of the versions before --populations.
 * Memory: tg_simulate holds the n × m int8 genotypes whole (n·m ≤ 2^33, 8 GiB);
 * tg_simulate_stream hands them to a sink in blocks of ≤ 64 MiB and keeps only the planted
 * SNPs' columns. Both draw the same numbers, on every core (tg_rng_jump). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "base/rng.h"
#include "tilegwas.h"

/* SNP role during the layout: planted epistatic SNPs get frequency 0.5; ROLE_MISSING marks the
 * SNPs of --missing-snps's rate once the layout is done. */
enum { ROLE_FREE, ROLE_PLANTED, ROLE_EPISTATIC, ROLE_MISSING };

static char no_parent[] = "0";
static char alleles[4][2] = {"A", "C", "G", "T"};
#define NCHROM 22
static char chrom_names[NCHROM][3] = {"1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",
                                       "9",  "10", "11", "12", "13", "14", "15", "16",
                                       "17", "18", "19", "20", "21", "22"};

static double norm_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* The effects each phenotype gets, in this order: additive SNPs, non-linear pairs, then the
 * epistatic sets of order 2, 3, 4. */
typedef struct {
    tg_sim_kind kind;
    int nsnp;
    int64_t count;
} eff_group;
#define NGROUPS 5

static void effect_groups(const tg_sim_opts *o, eff_group g[NGROUPS]) {
    g[0] = (eff_group){TG_SIM_ADDITIVE, 1, o->additive};
    g[1] = (eff_group){TG_SIM_NONLINEAR, 2, o->nl_pairs};
    for (int k = 2; k <= 4; k++) g[k] = (eff_group){TG_SIM_EPISTASIS, k, o->epi_sets[k]};
}

static int64_t planted_per_pheno(const tg_sim_opts *o) {
    eff_group g[NGROUPS];
    int64_t total = 0;
    effect_groups(o, g);
    for (int k = 0; k < NGROUPS; k++) total += g[k].nsnp * g[k].count;
    return total;
}

tg_sim_opts tg_sim_defaults(void) {
    return (tg_sim_opts){.n = 1000, .n_pheno = 1, .seed = 1, .maf_min = 0.05, .maf_max = 0.5,
                         .h2 = 0.5, .epi_effect = 0.2, .prevalence = 0.5, .populations = 1};
}

/* The messages name each field by its option of the simulate command. */
tg_status tg_sim_check(const tg_sim_opts *o, tg_error *err) {
    if (o->n < 1 || o->n > TG_SIM_MAX_DIM || o->m < 1 || o->m > TG_SIM_MAX_DIM)
        return tg_error_set(err, TG_ERR_ARG, "--n-samples %lld, --n-snps %lld: each must be "
                            "between 1 and 2^25", (long long)o->n, (long long)o->m);
    if (o->n_pheno < 1 || o->n_pheno > TG_SIM_MAX_PHENO)
        return tg_error_set(err, TG_ERR_ARG, "--n-pheno %lld: must be between 1 and %d",
                            (long long)o->n_pheno, TG_SIM_MAX_PHENO);
    if (!(o->maf_min > 0))
        return tg_error_set(err, TG_ERR_ARG, "--maf-min %g: must be greater than 0", o->maf_min);
    if (o->maf_min > o->maf_max)
        return tg_error_set(err, TG_ERR_ARG, "--maf-min %g is greater than --maf-max %g",
                            o->maf_min, o->maf_max);
    if (!(o->maf_max <= 0.5))
        return tg_error_set(err, TG_ERR_ARG, "--maf-max %g: must be at most 0.5", o->maf_max);
    if (!(o->missing >= 0 && o->missing < 1))
        return tg_error_set(err, TG_ERR_ARG, "--missing %g: must be in [0, 1)", o->missing);
    if (!(o->missing_snps >= 0 && o->missing_snps <= 1) ||
        !(o->missing_snps_rate >= 0 && o->missing_snps_rate < 1))
        return tg_error_set(err, TG_ERR_ARG,
                            "--missing-snps %g:%g: the fraction must be in [0, 1] and the rate in "
                            "[0, 1)",
                            o->missing_snps, o->missing_snps_rate);
    if (!(o->h2 > 0 && o->h2 < 1))
        return tg_error_set(err, TG_ERR_ARG, "--h2 %g: must be strictly between 0 and 1", o->h2);
    if (!(o->prevalence > 0 && o->prevalence < 1))
        return tg_error_set(err, TG_ERR_ARG, "--prevalence %g: must be strictly between 0 and 1",
                            o->prevalence);
    if (!(o->epi_effect > 0))
        return tg_error_set(err, TG_ERR_ARG, "--epi-effect %g: must be greater than 0",
                            o->epi_effect);
    if (o->populations < 1 || o->populations > o->n)
        return tg_error_set(err, TG_ERR_ARG, "--populations %lld: must be between 1 and "
                            "--n-samples %lld", (long long)o->populations, (long long)o->n);
    if (o->populations == 1 && o->fst != 0)
        return tg_error_set(err, TG_ERR_ARG, "--fst needs --populations K > 1");
    if (o->populations > 1 && !(o->fst > 0 && o->fst < 1))
        return tg_error_set(err, TG_ERR_ARG, "--fst %g: must be strictly between 0 and 1",
                            o->fst);
    if (o->nl_pairs && !o->qt) return tg_error_set(err, TG_ERR_ARG, "--nonlinear needs --trait qt");
    if (o->additive < 0 || o->nl_pairs < 0 || o->epi_sets[2] < 0 || o->epi_sets[3] < 0 ||
        o->epi_sets[4] < 0)
        return tg_error_set(err, TG_ERR_ARG, "a negative count of planted effects");
    double sets = (double)(o->epi_sets[2] + o->epi_sets[3] + o->epi_sets[4]);
    double lo = o->prevalence - o->epi_effect * sets, hi = o->prevalence + o->epi_effect * sets;
    if (!o->qt && sets > 0 && (lo <= 0 || hi >= 1))
        return tg_error_set(err, TG_ERR_ARG,
                            "--prevalence %g ± --epi-effect %g × %g epistatic sets = [%g, %g]: "
                            "P(case) must stay strictly between 0 and 1",
                            o->prevalence, o->epi_effect, sets, lo, hi);
    int64_t per_pheno = planted_per_pheno(o);
    if (per_pheno * o->n_pheno > o->m)
        return tg_error_set(err, TG_ERR_ARG,
                            "%lld planted SNPs per phenotype × %lld phenotypes is more than "
                            "--n-snps %lld",
                            (long long)per_pheno, (long long)o->n_pheno, (long long)o->m);
    return TG_OK;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Chooses the planted SNPs and the effects: fills d->eff and role (pick: m scratch entries). */
static void plant_effects(const tg_sim_opts *o, tg_rng *r, tg_sim *d, uint8_t *role,
                          int64_t *pick) {
    eff_group grp[NGROUPS];
    effect_groups(o, grp);
    int64_t total = planted_per_pheno(o) * o->n_pheno, next = 0;
    /* Floyd's sampling of `total` distinct SNPs, then a shuffle so the order is random too */
    for (int64_t j = o->m - total, k = 0; j < o->m; j++) {
        int64_t t = (int64_t)tg_rng_below(r, (uint64_t)j + 1);
        if (role[t]) t = j;
        role[t] = ROLE_PLANTED;
        pick[k++] = t;
    }
    for (int64_t k = total - 1; k > 0; k--) {
        int64_t t = (int64_t)tg_rng_below(r, (uint64_t)k + 1), x = pick[k];
        pick[k] = pick[t];
        pick[t] = x;
    }
    d->n_eff = 0;
    for (int p = 0; p < o->n_pheno; p++) {
        double ss = 0; /* Σ coefficient² of the genetic part, for the h2 rescaling */
        int64_t first = d->n_eff;
        for (int g = 0; g < NGROUPS; g++)
            for (int64_t c = 0; c < grp[g].count; c++) {
                tg_sim_effect *e = &d->eff[d->n_eff++];
                *e = (tg_sim_effect){.pheno = p, .kind = grp[g].kind, .nsnp = grp[g].nsnp};
                for (int s = 0; s < e->nsnp; s++) {
                    e->snp[s] = pick[next++];
                    if (e->kind == TG_SIM_EPISTASIS) role[e->snp[s]] = ROLE_EPISTATIC;
                }
                qsort(e->snp, (size_t)e->nsnp, sizeof e->snp[0], cmp_i64);
                e->effect = e->kind == TG_SIM_ADDITIVE    ? tg_rng_normal(r)
                            : e->kind == TG_SIM_NONLINEAR ? (tg_rng_below(r, 2) ? 1.0 : -1.0)
                                                       : o->epi_effect;
                if (e->kind != TG_SIM_EPISTASIS) ss += e->effect * e->effect;
            }
        for (int64_t k = first; k < d->n_eff; k++)
            if (d->eff[k].kind != TG_SIM_EPISTASIS) d->eff[k].effect *= sqrt(o->h2 / ss);
    }
}

/* SNP table, frequencies and sample table (strings in two fixed-stride buffers). */
static void make_layout(const tg_sim_opts *o, tg_rng *r, tg_sim *d, const uint8_t *role) {
    int prev_chrom = -1;
    int64_t pos = 0;
    for (int64_t j = 0; j < o->m; j++) {
        tg_snp *s = &d->snps[j];
        int chrom = (int)(j * NCHROM / o->m);
        pos = chrom != prev_chrom ? 1 + (int64_t)tg_rng_below(r, 10000)
                                  : pos + 1 + (int64_t)tg_rng_below(r, 20000);
        prev_chrom = chrom;
        int a1 = (int)tg_rng_below(r, 4), a2 = (a1 + 1 + (int)tg_rng_below(r, 3)) % 4;
        double u = tg_rng_uniform(r); /* drawn for every SNP so the streams stay aligned */
        d->freq[j] = role[j] == ROLE_EPISTATIC ? 0.5
                                                  : o->maf_min + (o->maf_max - o->maf_min) * u;
        char *id = d->snp_ids + 16 * j;
        snprintf(id, 16, "snp%u", (unsigned)j); /* j < 2^25 */
        *s = (tg_snp){.chrom = chrom_names[chrom], .id = id, .cm = 0, .pos = pos,
                      .a1 = alleles[a1], .a2 = alleles[a2]};
    }
    for (int64_t i = 0; i < o->n; i++) {
        tg_sample *s = &d->samples[i];
        s->fid = d->sample_ids + 24 * i;
        s->iid = s->fid + 12;
        if (o->populations > 1) /* plink2 users select a population by FID (--keep-fam) */
            snprintf(s->fid, 12, "pop%u", (unsigned)(i % o->populations) + 1);
        else
            snprintf(s->fid, 12, "F%u", (unsigned)i); /* i < 2^25 */
        snprintf(s->iid, 12, "I%u", (unsigned)i);
        s->father = s->mother = no_parent;
        s->sex = 1 + (int)tg_rng_below(r, 2);
    }
}

/* The planted SNPs' complete genotypes, column by column (slot: SNP → column, or -1). */
typedef struct {
    int8_t *geno;
    int64_t *slot;
} planted_cols;

/* The genotype pass: SNPs in blocks, each block's SNPs drawn in parallel, in runs of
 * consecutive SNPs ("pieces") whose streams start where one thread drawing everything in order
 * would be (tg_rng_jump), so the numbers do not depend on the threads. */
typedef struct {
    const tg_sim_opts *o;
    const uint8_t *role;
    int64_t j0, nj, piece;  /* the block's first SNP, its SNPs, SNPs per piece */
    int8_t *geno;           /* n × nj: the block */
    const double *cut;      /* 2K per SNP of the block: P(g ≥ 1), P(g = 2) per population */
    const tg_rng *geno_at;  /* per piece: the genotype stream at its first draw */
    const tg_rng *miss_at;  /* per piece: the missingness stream, or NULL (no call drawn) */
    int8_t *planted;        /* the complete columns of the planted SNPs */
    const int64_t *slot;    /* per SNP: its column in planted, or -1 */
    int64_t *missing;       /* per piece: its missing calls */
} geno_block;

/* Hardy–Weinberg genotypes from each population's frequency, one uniform per call in sample
 * order whatever K (so K = 1 draws as before --populations), then the missing calls: one
 * uniform per call at the SNP's rate. */
static void draw_piece(void *ctx, int64_t c) {
    const geno_block *b = ctx;
    const tg_sim_opts *o = b->o;
    const int64_t n = o->n, k = o->populations;
    int64_t t1 = (c + 1) * b->piece < b->nj ? (c + 1) * b->piece : b->nj, count = 0;
    tg_rng r = b->geno_at[c], rm = b->miss_at ? b->miss_at[c] : r;
    for (int64_t t = c * b->piece; t < t1; t++) {
        const int64_t j = b->j0 + t;
        const double *cut = b->cut + 2 * k * t;
        int8_t *g = b->geno + t * n;
        for (int64_t i = 0, q = 0; i < n; i++, q = q + 1 == k ? 0 : q + 1) {
            double u = tg_rng_uniform(&r);
            g[i] = (int8_t)((u < cut[2 * q]) + (u < cut[2 * q + 1]));
        }
        if (b->slot[j] >= 0) memcpy(b->planted + b->slot[j] * n, g, (size_t)n);
        if (!b->miss_at) continue;
        double rate = b->role[j] == ROLE_MISSING ? o->missing_snps_rate : o->missing;
        for (int64_t i = 0; i < n; i++)
            if (tg_rng_uniform(&rm) < rate) {
                g[i] = TG_GENO_MISSING;
                count++;
            }
    }
    b->missing[c] = count;
}

/* Each population's P(g ≥ 1) and P(g = 2) for SNP j (rpop draws the frequencies of K > 1, in
 * SNP order). A frequency of 0 or 1 (tiny Beta shapes) still gives a valid draw, a SNP
 * monomorphic in that population, so none is clamped. */
static void snp_cuts(const tg_sim_opts *o, const tg_sim *d, const uint8_t *role, int64_t j,
                     tg_rng *rpop, double *cut) {
    const double p = d->freq[j], f = o->fst;
    for (int64_t q = 0; q < o->populations; q++) {
        double pq = o->populations == 1 || role[j] == ROLE_EPISTATIC
                        ? p
                        : tg_rng_beta(rpop, p * (1 - f) / f, (1 - p) * (1 - f) / f);
        cut[2 * q] = 1 - (1 - pq) * (1 - pq);
        cut[2 * q + 1] = pq * pq;
    }
}

/* Draws every genotype, block by block: into d->geno, or (sink) into a block buffer handed to
 * the sink. The planted SNPs' complete columns go to planted (slot: SNP → column). */
static tg_status draw_genotypes(const tg_sim_opts *o, tg_sim *d, const uint8_t *role,
                                const tg_sim_sink *sink, tg_rng *rgeno, tg_rng *rmiss,
                                int draw_missing, tg_rng *rpop, const planted_cols *pc,
                                tg_error *err) {
    const int64_t n = o->n, k = o->populations;
    /* pieces of ≥ 2^16 draws keep the jumps' cost (~1 µs each) small; blocks of ≤ 64 MiB of
     * genotypes and of ≤ 64 MiB of cuts (2^22 SNP-population pairs) */
    const int64_t piece = (65536 + n - 1) / n;
    int64_t nb = ((int64_t)1 << 26) / n / piece * piece, by_cut = ((int64_t)1 << 22) / k;
    if (nb > by_cut) nb = by_cut / piece * piece;
    if (nb < piece) nb = piece;
    if (nb > o->m) nb = o->m;
    const int64_t npieces = (nb + piece - 1) / piece;
    geno_block b = {.o = o, .role = role, .piece = piece, .planted = pc->geno, .slot = pc->slot};
    double *cut = tg_malloc_n(nb, 2 * k * sizeof *cut, 1, err);
    tg_rng *at = tg_malloc_n(2 * npieces, sizeof *at, 1, err);
    int64_t *missing = tg_malloc_n(npieces, sizeof *missing, 1, err);
    int8_t *buf = sink ? tg_malloc_n(nb, n, 1, err) : NULL;
    tg_status st = cut && at && missing && (buf || !sink) ? TG_OK : TG_ERR_NOMEM;
    tg_rng_jump jump;
    tg_rng_jump_init(&jump, (uint64_t)(piece * n));
    b.cut = cut, b.geno_at = at, b.miss_at = draw_missing ? at + npieces : NULL;
    b.missing = missing;
    d->n_missing = 0;
    for (int64_t j0 = 0; j0 < o->m && !st; j0 += nb) {
        b.j0 = j0;
        b.nj = j0 + nb <= o->m ? nb : o->m - j0;
        b.geno = sink ? buf : d->geno + j0 * n;
        for (int64_t t = 0; t < b.nj; t++) snp_cuts(o, d, role, j0 + t, rpop, cut + 2 * k * t);
        const int64_t np = (b.nj + piece - 1) / piece;
        for (int64_t c = 0; c < np; c++) {
            at[c] = *rgeno;
            tg_rng_jump_apply(&jump, rgeno);
            if (!draw_missing) continue;
            at[npieces + c] = *rmiss;
            tg_rng_jump_apply(&jump, rmiss);
        }
        tg_parallel_for(np, draw_piece, &b);
        for (int64_t c = 0; c < np; c++) d->n_missing += missing[c];
        if (sink) st = sink->put(sink->ctx, j0, b.nj, buf, err);
    }
    free(buf);
    free(missing);
    free(at);
    free(cut);
    return st;
}

static double zscore(const tg_sim *d, const planted_cols *pc, int64_t j, int64_t i) {
    double p = d->freq[j];
    return (pc->geno[pc->slot[j] * d->n + i] - 2 * p) / sqrt(2 * p * (1 - p));
}

/* The liability threshold t with mean_i Φ((G_i − t)/σ) = prevalence (decreasing in t). */
static double solve_threshold(const double *g, int64_t n, double sigma, double prevalence) {
    double lo = -50, hi = 50;
    for (int it = 0; it < 64; it++) {
        double t = 0.5 * (lo + hi), mean = 0;
        for (int64_t i = 0; i < n; i++) mean += norm_cdf((g[i] - t) / sigma);
        if (mean / (double)n > prevalence)
            lo = t;
        else
            hi = t;
    }
    return 0.5 * (lo + hi);
}

/* Phenotype column p from the complete genotypes; returns the liability threshold (cc with a
 * genetic part) or NAN. work holds 2n doubles: G and the epistatic sum. */
static double draw_phenotype(const tg_sim_opts *o, tg_rng *r, tg_sim *d,
                             const planted_cols *pc, int p, double *work) {
    const int64_t n = o->n;
    double *g = work, *epi = work + n, *y = d->pheno + p * n, t = NAN;
    int genetic = 0;
    memset(work, 0, 2 * (size_t)n * sizeof *work);
    for (int64_t k = 0; k < d->n_eff; k++) {
        const tg_sim_effect *e = &d->eff[k];
        if (e->pheno != p) continue;
        genetic |= e->kind != TG_SIM_EPISTASIS;
        for (int64_t i = 0; i < n; i++) {
            if (e->kind == TG_SIM_ADDITIVE)
                g[i] += e->effect * zscore(d, pc, e->snp[0], i);
            else if (e->kind == TG_SIM_NONLINEAR)
                g[i] += e->effect * zscore(d, pc, e->snp[0], i) * zscore(d, pc, e->snp[1], i);
            else {
                int het = 0;
                for (int s = 0; s < e->nsnp; s++)
                    het += pc->geno[pc->slot[e->snp[s]] * n + i] == 1;
                epi[i] += het & 1 ? -e->effect : e->effect;
            }
        }
    }
    const double sigma = genetic ? sqrt(1 - o->h2) : 1;
    if (o->qt) {
        for (int64_t i = 0; i < n; i++) y[i] = g[i] + sigma * tg_rng_normal(r) + epi[i];
        return t;
    }
    if (genetic) t = solve_threshold(g, n, sigma, o->prevalence);
    for (int64_t i = 0; i < n; i++) {
        double pr = (genetic ? norm_cdf((g[i] - t) / sigma) : o->prevalence) + epi[i];
        pr = pr < 0 ? 0 : pr > 1 ? 1 : pr;
        y[i] = tg_rng_uniform(r) < pr ? 2 : 1;
    }
    return t;
}

/* The SNPs of rate missing_snps_rate (a partial shuffle of the SNPs not planted, in pick),
 * drawn before the calls of the genotype pass; without --missing-snps the stream is used as
 * before, so earlier cohorts stay byte-identical. Returns whether any call is to be drawn. */
static int choose_missing_snps(const tg_sim_opts *o, tg_rng *r, tg_sim *d, uint8_t *role,
                               int64_t *pick) {
    int64_t free_snps = 0, high = 0;
    for (int64_t j = 0; j < o->m; j++)
        if (role[j] == ROLE_FREE) pick[free_snps++] = j;
    if (o->missing_snps > 0) high = llround(o->missing_snps * (double)free_snps);
    for (int64_t x = 0; x < high; x++) {
        int64_t y = x + (int64_t)tg_rng_below(r, (uint64_t)(free_snps - x)), t = pick[x];
        pick[x] = pick[y], pick[y] = t;
    }
    d->n_missing_snps = high;
    if (o->missing <= 0 && (high == 0 || o->missing_snps_rate <= 0)) return 0;
    for (int64_t x = 0; x < high; x++) role[pick[x]] = ROLE_MISSING;
    return 1;
}

static tg_status alloc_data(const tg_sim_opts *o, int hold, tg_sim *d, tg_error *err) {
    const int64_t n = o->n, m = o->m, k = o->n_pheno;
    d->n = o->n;
    d->m = o->m;
    d->n_pheno = o->n_pheno;
    if (!(d->samples = tg_calloc_n(n, 1, sizeof *d->samples, err)) ||
        !(d->snps = tg_calloc_n(m, 1, sizeof *d->snps, err)) ||
        !(d->sample_ids = tg_malloc_n(n, 24, 1, err)) ||
        !(d->snp_ids = tg_malloc_n(m, 16, 1, err)) ||
        !(d->freq = tg_malloc_n(m, 1, sizeof *d->freq, err)) ||
        !(d->eff = tg_malloc_n(m, 1, sizeof *d->eff, err)) ||
        (hold && !(d->geno = tg_malloc_n(n, m, 1, err))) ||
        !(d->pheno = tg_malloc_n(n, k, sizeof *d->pheno, err)) ||
        !(d->threshold = tg_malloc_n(k, 1, sizeof *d->threshold, err)) ||
        !(d->pheno_names = tg_calloc_n(k, 1, sizeof *d->pheno_names, err)))
        return TG_ERR_NOMEM;
    for (int64_t p = 0; p < k; p++) {
        if (!(d->pheno_names[p] = tg_malloc(24, err))) return TG_ERR_NOMEM;
        snprintf(d->pheno_names[p], 24, "PHENO%u", (unsigned)p + 1);
    }
    return TG_OK;
}

void tg_sim_free(tg_sim *d) {
    if (d->pheno_names)
        for (int64_t p = 0; p < d->n_pheno; p++) free(d->pheno_names[p]);
    free(d->pheno_names);
    free(d->threshold);
    free(d->pheno);
    free(d->geno);
    free(d->eff);
    free(d->freq);
    free(d->snp_ids);
    free(d->sample_ids);
    free(d->snps);
    free(d->samples);
    memset(d, 0, sizeof *d);
}

const char *tg_sim_kind_name(const tg_sim_effect *e) {
    static const char *epi[5] = {"", "", "epistasis2", "epistasis3", "epistasis4"};
    return e->kind == TG_SIM_ADDITIVE    ? "additive"
           : e->kind == TG_SIM_NONLINEAR ? "nonlinear"
                                         : epi[e->nsnp];
}

/* The planted SNPs' columns (the phenotypes are drawn after the pass, from the complete
 * genotypes, which a sink does not keep). */
static tg_status alloc_planted(const tg_sim *d, planted_cols *pc, tg_error *err) {
    int64_t cols = 0;
    if (!(pc->slot = tg_malloc_n(d->m, 1, sizeof *pc->slot, err))) return TG_ERR_NOMEM;
    for (int64_t j = 0; j < d->m; j++) pc->slot[j] = -1;
    for (int64_t k = 0; k < d->n_eff; k++)
        for (int s = 0; s < d->eff[k].nsnp; s++) pc->slot[d->eff[k].snp[s]] = cols++;
    pc->geno = tg_malloc_n(cols ? cols : 1, d->n, 1, err);
    return pc->geno ? TG_OK : TG_ERR_NOMEM;
}

static tg_status simulate(const tg_sim_opts *o, const tg_sim_sink *sink, tg_sim *d,
                          tg_error *err) {
    memset(d, 0, sizeof *d);
    tg_status st = tg_sim_check(o, err);
    if (st) return st;
    if (!sink && o->n * o->m > TG_SIM_MAX_GENOTYPES)
        return tg_error_set(err, TG_ERR_ARG,
                            "--n-samples %lld × --n-snps %lld = %lld genotypes: more than the "
                            "2^33 held in memory",
                            (long long)o->n, (long long)o->m, (long long)(o->n * o->m));
    uint8_t *role = NULL;
    int64_t *pick = NULL;
    double *work = NULL;
    planted_cols pc = {0};
    if ((st = alloc_data(o, !sink, d, err)) || !(role = tg_calloc_n(o->m, 1, 1, err)) ||
        !(pick = tg_malloc_n(o->m, 1, sizeof *pick, err)) ||
        !(work = tg_malloc_n(2, o->n, sizeof *work, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    tg_rng master, layout, geno, pheno, missing, pops;
    tg_rng_seed(&master, o->seed);
    tg_rng_seed(&layout, tg_rng_u64(&master));
    tg_rng_seed(&geno, tg_rng_u64(&master));
    tg_rng_seed(&pheno, tg_rng_u64(&master));
    tg_rng_seed(&missing, tg_rng_u64(&master));
    tg_rng_seed(&pops, tg_rng_u64(&master));
    plant_effects(o, &layout, d, role, pick);
    make_layout(o, &layout, d, role);
    if ((st = alloc_planted(d, &pc, err))) goto cleanup;
    int calls = choose_missing_snps(o, &missing, d, role, pick);
    if ((st = draw_genotypes(o, d, role, sink, &geno, &missing, calls, &pops, &pc, err)))
        goto cleanup;
    for (int p = 0; p < o->n_pheno; p++)
        d->threshold[p] = draw_phenotype(o, &pheno, d, &pc, p, work);
    for (int64_t i = 0; i < o->n; i++) d->samples[i].pheno = d->pheno[i];
cleanup:
    free(pc.geno);
    free(pc.slot);
    free(work);
    free(pick);
    free(role);
    if (st) tg_sim_free(d);
    return st;
}

tg_status tg_simulate(const tg_sim_opts *o, tg_sim *d, tg_error *err) {
    return simulate(o, NULL, d, err);
}

tg_status tg_simulate_stream(const tg_sim_opts *o, const tg_sim_sink *sink, tg_sim *d,
                             tg_error *err) {
    return simulate(o, sink, d, err);
}
