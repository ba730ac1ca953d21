/* tilegwas simulate: a synthetic cohort with planted signals (PLINK fileset, phenotype file, the
 * list of planted effects), so that the association workloads can be tested against a truth.
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
 * - Missing calls: each call is set missing with probability --missing, independently (MCAR),
 *   at every SNP, after the phenotypes were drawn from the complete genotypes.
 * - Reproducibility: one seed gives four independent streams (layout and effects, genotypes,
 *   phenotypes, missingness); the same options and seed give byte-identical files.
 * Memory: the n × m int8 genotype matrix is held whole, so n·m ≤ 2^33 (8 GiB). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "cli/cli.h"

#define MAX_DIM ((int64_t)1 << 25)
#define MAX_GENOTYPES ((int64_t)1 << 33)
#define MAX_PHENO 1000
#define NCHROM 22

static const char *help =
    "usage: tilegwas simulate --out PREFIX --n-snps M [options]\n"
    "Writes a synthetic cohort with planted signals: PREFIX.bed/.bim/.fam, PREFIX.pheno (FID IID\n"
    "PHENO1..), PREFIX.truth.tsv (pheno, kind, SNP ids, effect of every planted effect) and\n"
    "PREFIX.log.\n\n"
    "options:\n"
    "  --out PREFIX        output prefix (required)\n"
    "  --n-samples N       samples (default 1000; at most 2^25)\n"
    "  --n-snps M          SNPs (required; at most 2^25, and N·M at most 2^33 genotypes,\n"
    "                      held in memory as one byte each)\n"
    "  --seed S            random seed (default 1); the same seed gives identical files\n"
    "  --maf-min F         smallest A1 allele frequency (default 0.05; in (0, 0.5])\n"
    "  --maf-max F         largest A1 allele frequency (default 0.5; in [maf-min, 0.5])\n"
    "  --missing R         rate of missing calls, completely at random (default 0)\n"
    "  --trait cc|qt       case-control or quantitative (default cc)\n"
    "  --n-pheno K         independent phenotypes, each with its own planted effects (default 1)\n"
    "  --additive C        additive SNPs per phenotype (default 0)\n"
    "  --h2 H              variance of the additive + non-linear part (default 0.5; in (0, 1))\n"
    "  --epistasis K:C     plant C sets of K interacting SNPs per phenotype, K in 2..4;\n"
    "                      repeatable (default none)\n"
    "  --epi-effect E      effect of each epistatic set (default 0.2)\n"
    "  --nonlinear         (qt only) plant non-linear pairs, see --nl-pairs\n"
    "  --nl-pairs P        pairs of SNPs per phenotype for --nonlinear (default 5)\n"
    "  --prevalence P      (cc) expected fraction of cases (default 0.5)\n"
    "  --quiet             write the summary to PREFIX.log only\n"
    "  --help              this text\n\n"
    "model:\n"
    "  Genotypes in Hardy-Weinberg proportions from each SNP's frequency p ~ U[maf-min,\n"
    "  maf-max]. Planted SNPs are distinct SNPs chosen at random. z = (g - 2p)/sqrt(2p(1-p)).\n"
    "  Genetic part G = sum beta*z over additive SNPs (beta ~ N(0,1)) + sum w*z_a*z_b over\n"
    "  non-linear pairs (w = +-1; no linear marginal effect), rescaled so Var(G) = h2 in the\n"
    "  population; the truth file gives the rescaled coefficients (effect^2 = variance share).\n"
    "  qt: y = G + e, e ~ N(0, 1-h2) (N(0, 1) without a genetic part).\n"
    "  cc: liability G + e; P(case | G) = Phi((G - t)/sqrt(1-h2)), t set so that the mean\n"
    "  probability is the prevalence; without additive SNPs P(case) = prevalence.\n"
    "  Epistasis: the K SNPs of a set get frequency 0.5; s = (-1)^(number of heterozygous SNPs\n"
    "  in the set) is independent of any K-1 of them, so there is no effect below order K.\n"
    "  cc: P(case) += E*s (prevalence +- E*sets must be in (0,1); clipped to [0,1] with\n"
    "  additive SNPs); qt: y += E*s.\n"
    "  Missing calls are drawn after the phenotypes, independently of everything.\n"
    "  Output: FID F<i>, IID I<i> (i from 0), random sex, .fam phenotype = PHENO1 (cc:\n"
    "  1 control, 2 case); SNP ids snp<j> (j from 0), chromosomes 1-22 in blocks,\n"
    "  increasing positions.\n";

/* Command-line options, with the defaults of the help text. */
typedef struct {
    const char *out;
    int64_t n, m, n_pheno, additive, nl_pairs, seed;
    int64_t epi_sets[5]; /* sets per phenotype by order (index 2..4) */
    double maf_min, maf_max, missing, h2, epi_effect, prevalence;
    int qt, nonlinear, quiet;
} sim_opts;

typedef enum { EFF_ADDITIVE, EFF_NONLINEAR, EFF_EPISTASIS } eff_kind;

/* One planted effect of one phenotype: SNP indices in increasing order. */
typedef struct {
    int pheno;
    eff_kind kind;
    int nsnp;
    int64_t snp[4];
    double effect;
} sim_effect;

/* SNP role during the layout: planted epistatic SNPs get frequency 0.5. */
enum { ROLE_FREE, ROLE_PLANTED, ROLE_EPISTATIC };

/* Everything the command allocates, freed at one place. */
typedef struct {
    tg_sample *samples;
    tg_snp *snps;
    char *sample_ids, *snp_ids;
    double *freq;
    uint8_t *role;
    int64_t *pick;
    sim_effect *eff;
    int64_t n_eff;
    int8_t *geno;
    double *pheno, *work;
    char **pheno_names;
} sim_data;

static char no_parent[] = "0";
static char alleles[4][2] = {"A", "C", "G", "T"};
static char chrom_names[NCHROM][3] = {"1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",
                                       "9",  "10", "11", "12", "13", "14", "15", "16",
                                       "17", "18", "19", "20", "21", "22"};

static double norm_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* The effects each phenotype gets, in this order: additive SNPs, non-linear pairs, then the
 * epistatic sets of order 2, 3, 4. */
typedef struct {
    eff_kind kind;
    int nsnp;
    int64_t count;
} eff_group;
#define NGROUPS 5

static void effect_groups(const sim_opts *o, eff_group g[NGROUPS]) {
    g[0] = (eff_group){EFF_ADDITIVE, 1, o->additive};
    g[1] = (eff_group){EFF_NONLINEAR, 2, o->nl_pairs};
    for (int k = 2; k <= 4; k++) g[k] = (eff_group){EFF_EPISTASIS, k, o->epi_sets[k]};
}

static int64_t planted_per_pheno(const sim_opts *o) {
    eff_group g[NGROUPS];
    int64_t total = 0;
    effect_groups(o, g);
    for (int k = 0; k < NGROUPS; k++) total += g[k].nsnp * g[k].count;
    return total;
}

static tg_status parse_epistasis(const char *arg, sim_opts *o, tg_error *err) {
    char order[16];
    const char *colon = strchr(arg, ':');
    int64_t k, c;
    if (!colon || (size_t)(colon - arg) >= sizeof order)
        return tg_error_set(err, TG_ERR_ARG, "--epistasis %s: expected ORDER:COUNT, e.g. 2:1", arg);
    memcpy(order, arg, (size_t)(colon - arg));
    order[colon - arg] = 0;
    tg_status st = tg_cli_int("epistasis ORDER", order, 2, 4, &k, err);
    if (!st) st = tg_cli_int("epistasis COUNT", colon + 1, 1, MAX_DIM, &c, err);
    if (!st) o->epi_sets[k] += c;
    return st;
}

/* Returns TG_OK, an error, or -1 after printing the help. */
static int parse_options(int argc, char **argv, sim_opts *o, tg_error *err) {
    enum {
        O_OUT = 1, O_N, O_M, O_SEED, O_MAF_MIN, O_MAF_MAX, O_MISSING, O_TRAIT, O_NPHENO,
        O_ADDITIVE, O_H2, O_EPI, O_EPI_EFFECT, O_NONLINEAR, O_NL_PAIRS, O_PREV, O_QUIET, O_HELP
    };
    static const struct option opts[] = {
        {"out", required_argument, 0, O_OUT}, {"n-samples", required_argument, 0, O_N},
        {"n-snps", required_argument, 0, O_M}, {"seed", required_argument, 0, O_SEED},
        {"maf-min", required_argument, 0, O_MAF_MIN}, {"maf-max", required_argument, 0, O_MAF_MAX},
        {"missing", required_argument, 0, O_MISSING}, {"trait", required_argument, 0, O_TRAIT},
        {"n-pheno", required_argument, 0, O_NPHENO}, {"additive", required_argument, 0, O_ADDITIVE},
        {"h2", required_argument, 0, O_H2}, {"epistasis", required_argument, 0, O_EPI},
        {"epi-effect", required_argument, 0, O_EPI_EFFECT},
        {"nonlinear", no_argument, 0, O_NONLINEAR}, {"nl-pairs", required_argument, 0, O_NL_PAIRS},
        {"prevalence", required_argument, 0, O_PREV}, {"quiet", no_argument, 0, O_QUIET},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    *o = (sim_opts){.n = 1000, .n_pheno = 1, .nl_pairs = 5, .seed = 1, .maf_min = 0.05,
                    .maf_max = 0.5, .h2 = 0.5, .epi_effect = 0.2, .prevalence = 0.5};
    int c, nl_pairs_given = 0;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_OUT: o->out = optarg; break;
        case O_N: st = tg_cli_int("n-samples", optarg, 1, MAX_DIM, &o->n, err); break;
        case O_M: st = tg_cli_int("n-snps", optarg, 1, MAX_DIM, &o->m, err); break;
        case O_SEED: st = tg_cli_int("seed", optarg, 0, (int64_t)1 << 53, &o->seed, err); break;
        case O_MAF_MIN: st = tg_cli_double("maf-min", optarg, 0, 0.5, &o->maf_min, err); break;
        case O_MAF_MAX: st = tg_cli_double("maf-max", optarg, 0, 0.5, &o->maf_max, err); break;
        case O_MISSING: st = tg_cli_double("missing", optarg, 0, 0.99, &o->missing, err); break;
        case O_TRAIT:
            if (strcmp(optarg, "cc") && strcmp(optarg, "qt"))
                st = tg_error_set(err, TG_ERR_ARG, "--trait %s: expected cc or qt", optarg);
            o->qt = !strcmp(optarg, "qt");
            break;
        case O_NPHENO: st = tg_cli_int("n-pheno", optarg, 1, MAX_PHENO, &o->n_pheno, err); break;
        case O_ADDITIVE: st = tg_cli_int("additive", optarg, 0, MAX_DIM, &o->additive, err); break;
        case O_H2: st = tg_cli_double("h2", optarg, 0, 1, &o->h2, err); break;
        case O_EPI: st = parse_epistasis(optarg, o, err); break;
        case O_EPI_EFFECT:
            st = tg_cli_double("epi-effect", optarg, 0, 100, &o->epi_effect, err);
            break;
        case O_NONLINEAR: o->nonlinear = 1; break;
        case O_NL_PAIRS:
            st = tg_cli_int("nl-pairs", optarg, 1, MAX_DIM, &o->nl_pairs, err);
            nl_pairs_given = 1;
            break;
        case O_PREV: st = tg_cli_double("prevalence", optarg, 0, 1, &o->prevalence, err); break;
        case O_QUIET: o->quiet = 1; break;
        case O_HELP: fputs(help, stdout); return -1;
        default: st = tg_cli_bad_option(argv, err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, err);
    if (st) return st;
    if (!o->out) return tg_error_set(err, TG_ERR_ARG, "--out PREFIX is required");
    if (!o->m) return tg_error_set(err, TG_ERR_ARG, "--n-snps M is required");
    if (o->n * o->m > MAX_GENOTYPES)
        return tg_error_set(err, TG_ERR_ARG,
                            "--n-samples %lld × --n-snps %lld = %lld genotypes: more than the "
                            "2^33 this command holds in memory",
                            (long long)o->n, (long long)o->m, (long long)(o->n * o->m));
    if (o->maf_min <= 0)
        return tg_error_set(err, TG_ERR_ARG, "--maf-min %g: must be greater than 0", o->maf_min);
    if (o->maf_min > o->maf_max)
        return tg_error_set(err, TG_ERR_ARG, "--maf-min %g is greater than --maf-max %g",
                            o->maf_min, o->maf_max);
    if (o->h2 <= 0 || o->h2 >= 1)
        return tg_error_set(err, TG_ERR_ARG, "--h2 %g: must be strictly between 0 and 1", o->h2);
    if (o->prevalence <= 0 || o->prevalence >= 1)
        return tg_error_set(err, TG_ERR_ARG, "--prevalence %g: must be strictly between 0 and 1",
                            o->prevalence);
    if (o->epi_effect <= 0)
        return tg_error_set(err, TG_ERR_ARG, "--epi-effect %g: must be greater than 0",
                            o->epi_effect);
    if (o->nonlinear && !o->qt)
        return tg_error_set(err, TG_ERR_ARG, "--nonlinear needs --trait qt");
    if (nl_pairs_given && !o->nonlinear)
        return tg_error_set(err, TG_ERR_ARG, "--nl-pairs needs --nonlinear");
    if (!o->nonlinear) o->nl_pairs = 0;
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

/* Chooses the planted SNPs and the effects: fills d->eff, d->role. */
static void plant_effects(const sim_opts *o, tg_rng *r, sim_data *d) {
    eff_group grp[NGROUPS];
    effect_groups(o, grp);
    int64_t total = planted_per_pheno(o) * o->n_pheno, next = 0;
    /* Floyd's sampling of `total` distinct SNPs, then a shuffle so the order is random too */
    for (int64_t j = o->m - total, k = 0; j < o->m; j++) {
        int64_t t = (int64_t)tg_rng_below(r, (uint64_t)j + 1);
        if (d->role[t]) t = j;
        d->role[t] = ROLE_PLANTED;
        d->pick[k++] = t;
    }
    for (int64_t k = total - 1; k > 0; k--) {
        int64_t t = (int64_t)tg_rng_below(r, (uint64_t)k + 1), x = d->pick[k];
        d->pick[k] = d->pick[t];
        d->pick[t] = x;
    }
    d->n_eff = 0;
    for (int p = 0; p < o->n_pheno; p++) {
        double ss = 0; /* Σ coefficient² of the genetic part, for the h2 rescaling */
        int64_t first = d->n_eff;
        for (int g = 0; g < NGROUPS; g++)
            for (int64_t c = 0; c < grp[g].count; c++) {
                sim_effect *e = &d->eff[d->n_eff++];
                *e = (sim_effect){.pheno = p, .kind = grp[g].kind, .nsnp = grp[g].nsnp};
                for (int s = 0; s < e->nsnp; s++) {
                    e->snp[s] = d->pick[next++];
                    if (e->kind == EFF_EPISTASIS) d->role[e->snp[s]] = ROLE_EPISTATIC;
                }
                qsort(e->snp, (size_t)e->nsnp, sizeof e->snp[0], cmp_i64);
                e->effect = e->kind == EFF_ADDITIVE    ? tg_rng_normal(r)
                            : e->kind == EFF_NONLINEAR ? (tg_rng_below(r, 2) ? 1.0 : -1.0)
                                                       : o->epi_effect;
                if (e->kind != EFF_EPISTASIS) ss += e->effect * e->effect;
            }
        for (int64_t k = first; k < d->n_eff; k++)
            if (d->eff[k].kind != EFF_EPISTASIS) d->eff[k].effect *= sqrt(o->h2 / ss);
    }
}

/* SNP table, frequencies and sample table (strings in two fixed-stride buffers). */
static void make_layout(const sim_opts *o, tg_rng *r, sim_data *d) {
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
        d->freq[j] = d->role[j] == ROLE_EPISTATIC ? 0.5
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
        snprintf(s->fid, 12, "F%u", (unsigned)i); /* i < 2^25 */
        snprintf(s->iid, 12, "I%u", (unsigned)i);
        s->father = s->mother = no_parent;
        s->sex = 1 + (int)tg_rng_below(r, 2);
    }
}

static void draw_genotypes(const sim_opts *o, tg_rng *r, sim_data *d) {
    for (int64_t j = 0; j < o->m; j++) {
        const double p = d->freq[j], two = p * p, one_or_two = 1 - (1 - p) * (1 - p);
        int8_t *g = d->geno + j * o->n;
        for (int64_t i = 0; i < o->n; i++) {
            double u = tg_rng_uniform(r);
            g[i] = (int8_t)((u < one_or_two) + (u < two));
        }
    }
}

static double zscore(const sim_data *d, int64_t n, int64_t j, int64_t i) {
    double p = d->freq[j];
    return (d->geno[i + j * n] - 2 * p) / sqrt(2 * p * (1 - p));
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
 * genetic part) or NAN. d->work holds 2n doubles: G and the epistatic sum. */
static double draw_phenotype(const sim_opts *o, tg_rng *r, sim_data *d, int p) {
    const int64_t n = o->n;
    double *g = d->work, *epi = d->work + n, *y = d->pheno + p * n, t = NAN;
    int genetic = 0;
    memset(d->work, 0, 2 * (size_t)n * sizeof *d->work);
    for (int64_t k = 0; k < d->n_eff; k++) {
        const sim_effect *e = &d->eff[k];
        if (e->pheno != p) continue;
        genetic |= e->kind != EFF_EPISTASIS;
        for (int64_t i = 0; i < n; i++) {
            if (e->kind == EFF_ADDITIVE)
                g[i] += e->effect * zscore(d, n, e->snp[0], i);
            else if (e->kind == EFF_NONLINEAR)
                g[i] += e->effect * zscore(d, n, e->snp[0], i) * zscore(d, n, e->snp[1], i);
            else {
                int het = 0;
                for (int s = 0; s < e->nsnp; s++) het += d->geno[i + e->snp[s] * n] == 1;
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

static int64_t draw_missing(const sim_opts *o, tg_rng *r, sim_data *d) {
    int64_t count = 0;
    if (o->missing <= 0) return 0;
    for (int64_t k = 0; k < o->n * o->m; k++)
        if (tg_rng_uniform(r) < o->missing) {
            d->geno[k] = TG_GENO_MISSING;
            count++;
        }
    return count;
}

static const char *kind_name(const sim_effect *e) {
    static const char *epi[5] = {"", "", "epistasis2", "epistasis3", "epistasis4"};
    return e->kind == EFF_ADDITIVE    ? "additive"
           : e->kind == EFF_NONLINEAR ? "nonlinear"
                                      : epi[e->nsnp];
}

/* "snp3,snp17": the SNP ids of an effect. */
static void effect_snps(const sim_data *d, const sim_effect *e, char *buf, size_t len) {
    size_t at = 0;
    for (int s = 0; s < e->nsnp; s++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", s ? "," : "", d->snps[e->snp[s]].id);
}

static tg_status write_truth(const sim_opts *o, const sim_data *d, tg_error *err) {
    FILE *f;
    char *path = NULL, snps[96];
    tg_status st = tg_out_open(o->out, ".truth.tsv", &f, &path, err);
    if (st) return st;
    fputs("pheno\tkind\tsnps\teffect\n", f);
    for (int64_t k = 0; k < d->n_eff; k++) {
        const sim_effect *e = &d->eff[k];
        effect_snps(d, e, snps, sizeof snps);
        fprintf(f, "%s\t%s\t%s\t%.9g\n", d->pheno_names[e->pheno], kind_name(e), snps, e->effect);
    }
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

static tg_status write_outputs(const sim_opts *o, sim_data *d, tg_error *err) {
    for (int64_t i = 0; i < o->n; i++) d->samples[i].pheno = d->pheno[i];
    tg_status st = tg_bed_write(o->out, d->samples, o->n, d->snps, o->m, d->geno, o->n, err);
    if (st) return st;
    size_t len = strlen(o->out) + sizeof ".pheno";
    char *path = tg_malloc(len, err);
    if (!path) return TG_ERR_NOMEM;
    snprintf(path, len, "%s.pheno", o->out);
    tg_pheno ph = {.n_samples = o->n, .n_cols = (int)o->n_pheno, .names = d->pheno_names,
                   .values = d->pheno};
    st = tg_pheno_write(path, d->samples, &ph, err);
    free(path);
    return st ? st : write_truth(o, d, err);
}

static void log_summary(const sim_opts *o, const sim_data *d, const double *thresholds,
                        int64_t n_missing, tg_log *log) {
    tg_log_printf(log, "simulated %lld samples × %lld SNPs, seed %lld, %s trait, %lld phenotype(s)",
                  (long long)o->n, (long long)o->m, (long long)o->seed,
                  o->qt ? "quantitative" : "case-control", (long long)o->n_pheno);
    tg_log_printf(log,
                  "planted per phenotype: %lld additive SNPs, %lld non-linear pairs, epistatic "
                  "sets of order 2/3/4: %lld/%lld/%lld",
                  (long long)o->additive, (long long)o->nl_pairs, (long long)o->epi_sets[2],
                  (long long)o->epi_sets[3], (long long)o->epi_sets[4]);
    tg_log_printf(log, "missing calls: %lld (rate %.4g)", (long long)n_missing,
                  (double)n_missing / ((double)o->n * (double)o->m));
    for (int p = 0; p < o->n_pheno; p++) {
        const double *y = d->pheno + p * o->n;
        double s = 0, s2 = 0;
        int64_t cases = 0;
        for (int64_t i = 0; i < o->n; i++) s += y[i], s2 += y[i] * y[i], cases += y[i] == 2;
        double mean = s / (double)o->n, var = o->n > 1 ? (s2 - s * mean) / (double)(o->n - 1) : 0;
        if (o->qt)
            tg_log_printf(log, "%s: mean %.4g, variance %.4g", d->pheno_names[p], mean, var);
        else if (isnan(thresholds[p]))
            tg_log_printf(log, "%s: %lld cases, %lld controls", d->pheno_names[p],
                          (long long)cases, (long long)(o->n - cases));
        else
            tg_log_printf(log, "%s: %lld cases, %lld controls (liability threshold %.4g)",
                          d->pheno_names[p], (long long)cases, (long long)(o->n - cases),
                          thresholds[p]);
    }
    char snps[96];
    for (int64_t k = 0; k < d->n_eff; k++) {
        const sim_effect *e = &d->eff[k];
        effect_snps(d, e, snps, sizeof snps);
        tg_log_file_only(log, "planted %s %s %s effect %.6g", d->pheno_names[e->pheno],
                         kind_name(e), snps, e->effect);
    }
    tg_log_printf(log, "wrote %s.bed/.bim/.fam, %s.pheno, %s.truth.tsv", o->out, o->out, o->out);
}

static tg_status alloc_data(const sim_opts *o, sim_data *d, tg_error *err) {
    const size_t n = (size_t)o->n, m = (size_t)o->m, k = (size_t)o->n_pheno;
    if (!(d->samples = tg_calloc(n, sizeof *d->samples, err)) ||
        !(d->snps = tg_calloc(m, sizeof *d->snps, err)) ||
        !(d->sample_ids = tg_malloc(24 * n, err)) || !(d->snp_ids = tg_malloc(16 * m, err)) ||
        !(d->freq = tg_malloc(m * sizeof *d->freq, err)) ||
        !(d->role = tg_calloc(m, 1, err)) || !(d->pick = tg_malloc(m * sizeof *d->pick, err)) ||
        !(d->eff = tg_malloc(m * sizeof *d->eff, err)) || !(d->geno = tg_malloc(n * m, err)) ||
        !(d->pheno = tg_malloc(n * k * sizeof *d->pheno, err)) ||
        !(d->work = tg_malloc(2 * n * sizeof *d->work, err)) ||
        !(d->pheno_names = tg_calloc(k, sizeof *d->pheno_names, err)))
        return TG_ERR_NOMEM;
    for (size_t p = 0; p < k; p++) {
        if (!(d->pheno_names[p] = tg_malloc(24, err))) return TG_ERR_NOMEM;
        snprintf(d->pheno_names[p], 24, "PHENO%u", (unsigned)p + 1);
    }
    return TG_OK;
}

static void free_data(const sim_opts *o, sim_data *d) {
    if (d->pheno_names)
        for (int64_t p = 0; p < o->n_pheno; p++) free(d->pheno_names[p]);
    free(d->pheno_names);
    free(d->work);
    free(d->pheno);
    free(d->geno);
    free(d->eff);
    free(d->pick);
    free(d->role);
    free(d->freq);
    free(d->snp_ids);
    free(d->sample_ids);
    free(d->snps);
    free(d->samples);
}

int tg_cmd_simulate(int argc, char **argv) {
    sim_opts o;
    sim_data d = {0};
    tg_error err = {0};
    tg_log *log = NULL;
    double *thresholds = NULL;
    int rc = 0;
    int st = parse_options(argc, argv, &o, &err);
    if (st < 0) return 0;
    if (st) return tg_cli_fail_options("simulate", &err);
    if ((st = tg_out_check_prefix(o.out, &err))) return tg_cli_fail("simulate", NULL, &err);
    if ((st = tg_log_open(&log, o.out, argc, argv, &err)))
        return tg_cli_fail("simulate", NULL, &err);
    tg_log_set_quiet(log, o.quiet);
    /* one dataset: under mpiexec rank 0 draws and writes it, the other ranks have nothing to do */
    if (tg_runtime_rank() > 0) goto cleanup;
    if ((st = alloc_data(&o, &d, &err)) ||
        !(thresholds = tg_malloc((size_t)o.n_pheno * sizeof *thresholds, &err))) {
        rc = tg_cli_fail("simulate", log, &err);
        goto cleanup;
    }
    tg_rng master, layout, geno, pheno, missing;
    tg_rng_seed(&master, (uint64_t)o.seed);
    tg_rng_seed(&layout, tg_rng_u64(&master));
    tg_rng_seed(&geno, tg_rng_u64(&master));
    tg_rng_seed(&pheno, tg_rng_u64(&master));
    tg_rng_seed(&missing, tg_rng_u64(&master));
    plant_effects(&o, &layout, &d);
    make_layout(&o, &layout, &d);
    draw_genotypes(&o, &geno, &d);
    for (int p = 0; p < o.n_pheno; p++) thresholds[p] = draw_phenotype(&o, &pheno, &d, p);
    int64_t n_missing = draw_missing(&o, &missing, &d);
    if ((st = write_outputs(&o, &d, &err))) {
        rc = tg_cli_fail("simulate", log, &err);
        goto cleanup;
    }
    log_summary(&o, &d, thresholds, n_missing, log);
cleanup:
    free(thresholds);
    free_data(&o, &d);
    tg_log_close(log);
    return rc;
}
