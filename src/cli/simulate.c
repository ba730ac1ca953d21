/* tilegwas simulate: a synthetic cohort with planted signals (tg_simulate; the model is in
 * src/algo/simulate.c and in the help text), written as a PLINK fileset, a phenotype file and
 * the list of planted effects, so that the association workloads can be tested against a
 * truth. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static const char *help =
    "usage: tilegwas simulate --out PREFIX --n-snps M [options]\n"
    "Writes a synthetic cohort with planted signals: PREFIX.bed/.bim/.fam, PREFIX.pheno (FID IID\n"
    "PHENO1..), PREFIX.truth.tsv (pheno, kind, SNP ids, effect of every planted effect) and\n"
    "PREFIX.log.\n\n"
    "options:\n"
    "  --out PREFIX        output prefix (required)\n"
    "  --n-samples N       samples (default 1000; at most 2^25)\n"
    "  --n-snps M          SNPs (required; at most 2^25; the genotypes are drawn on every\n"
    "                      core and written as they are drawn, so N·M has no other limit)\n"
    "  --seed S            random seed (default 1); the same seed gives identical files\n"
    "  --maf-min F         smallest A1 allele frequency (default 0.05; in (0, 0.5])\n"
    "  --maf-max F         largest A1 allele frequency (default 0.5; in [maf-min, 0.5])\n"
    "  --missing R         rate of missing calls, completely at random (default 0)\n"
    "  --missing-snps F:R  a fraction F of the SNPs not planted, chosen at random, get the\n"
    "                      missing rate R instead of --missing (default none)\n"
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
    "  --populations K     K populations of equal size, sample i in population i mod K + 1\n"
    "                      (default 1; at most the number of samples)\n"
    "  --fst F             (with --populations K > 1) their divergence F_ST (default 0.1;\n"
    "                      in (0, 1))\n"
    "  --quiet             write the summary to PREFIX.log only\n"
    "  --zst               zstd-compress PREFIX.pheno and PREFIX.truth.tsv (names end in .zst;\n"
    "                      the .bed/.bim/.fam stay as PLINK reads them)\n"
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
    "  Populations (Balding-Nichols): population q's frequency of SNP j is\n"
    "  p_qj ~ Beta(p(1-F)/F, (1-p)(1-F)/F), mean p and variance F*p(1-p); its genotypes are\n"
    "  Hardy-Weinberg from p_qj. Epistatic SNPs keep frequency 0.5 in every population (the\n"
    "  parity argument needs it). The phenotype model is unchanged, with z from the ancestral\n"
    "  p: populations differ in mean genetic value (stratification).\n"
    "  Missing calls are drawn after the phenotypes, independently of everything (at the\n"
    "  SNP's rate).\n"
    "  Output: FID F<i> (pop<q> with --populations K > 1: plink2's --keep-fam selects a\n"
    "  population), IID I<i> (i from 0), random sex, .fam phenotype = PHENO1 (cc: 1 control,\n"
    "  2 case); SNP ids snp<j> (j from 0), chromosomes 1-22 in blocks, increasing positions.\n";

typedef struct {
    const char *out;
    tg_sim_opts s;
    int quiet;
    int zst;
} sim_opts;

static tg_status parse_missing_snps(const char *arg, tg_sim_opts *o, tg_error *err) {
    char frac[32];
    const char *colon = strchr(arg, ':');
    if (!colon || (size_t)(colon - arg) >= sizeof frac)
        return tg_error_set(err, TG_ERR_ARG, "--missing-snps %s: expected FRACTION:RATE, e.g. "
                            "0.1:0.05", arg);
    memcpy(frac, arg, (size_t)(colon - arg));
    frac[colon - arg] = 0;
    tg_status st = tg_cli_double("missing-snps FRACTION", frac, 0, 1, &o->missing_snps, err);
    if (!st) st = tg_cli_double("missing-snps RATE", colon + 1, 0, 0.99, &o->missing_snps_rate, err);
    return st;
}

static tg_status parse_epistasis(const char *arg, tg_sim_opts *o, tg_error *err) {
    char order[16];
    const char *colon = strchr(arg, ':');
    int64_t k, c;
    if (!colon || (size_t)(colon - arg) >= sizeof order)
        return tg_error_set(err, TG_ERR_ARG, "--epistasis %s: expected ORDER:COUNT, e.g. 2:1", arg);
    memcpy(order, arg, (size_t)(colon - arg));
    order[colon - arg] = 0;
    tg_status st = tg_cli_int("epistasis ORDER", order, 2, 4, &k, err);
    if (!st) st = tg_cli_int("epistasis COUNT", colon + 1, 1, TG_SIM_MAX_DIM, &c, err);
    if (!st) o->epi_sets[k] += c;
    return st;
}

/* Returns TG_OK, an error, or -1 after printing the help. */
static int parse_options(int argc, char **argv, sim_opts *o, tg_error *err) {
    enum {
        O_OUT = 1, O_N, O_M, O_SEED, O_MAF_MIN, O_MAF_MAX, O_MISSING, O_MISS_SNPS, O_TRAIT, O_NPHENO,
        O_ADDITIVE, O_H2, O_EPI, O_EPI_EFFECT, O_NONLINEAR, O_NL_PAIRS, O_PREV, O_POPS, O_FST,
        O_QUIET, O_ZST, O_HELP
    };
    static const struct option opts[] = {
        {"out", required_argument, 0, O_OUT}, {"n-samples", required_argument, 0, O_N},
        {"n-snps", required_argument, 0, O_M}, {"seed", required_argument, 0, O_SEED},
        {"maf-min", required_argument, 0, O_MAF_MIN}, {"maf-max", required_argument, 0, O_MAF_MAX},
        {"missing", required_argument, 0, O_MISSING},
        {"missing-snps", required_argument, 0, O_MISS_SNPS},
        {"trait", required_argument, 0, O_TRAIT},
        {"n-pheno", required_argument, 0, O_NPHENO}, {"additive", required_argument, 0, O_ADDITIVE},
        {"h2", required_argument, 0, O_H2}, {"epistasis", required_argument, 0, O_EPI},
        {"epi-effect", required_argument, 0, O_EPI_EFFECT},
        {"nonlinear", no_argument, 0, O_NONLINEAR}, {"nl-pairs", required_argument, 0, O_NL_PAIRS},
        {"prevalence", required_argument, 0, O_PREV},
        {"populations", required_argument, 0, O_POPS}, {"fst", required_argument, 0, O_FST},
        {"quiet", no_argument, 0, O_QUIET},
        {"zst", no_argument, 0, O_ZST}, {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    *o = (sim_opts){.s = tg_sim_defaults()};
    tg_sim_opts *s = &o->s;
    int c, nonlinear = 0, fst_given = 0;
    int64_t seed = 1, nl_pairs = 0; /* --nl-pairs: 0 when not given */
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_OUT: o->out = optarg; break;
        case O_N: st = tg_cli_int("n-samples", optarg, 1, TG_SIM_MAX_DIM, &s->n, err); break;
        case O_M: st = tg_cli_int("n-snps", optarg, 1, TG_SIM_MAX_DIM, &s->m, err); break;
        case O_SEED: st = tg_cli_int("seed", optarg, 0, (int64_t)1 << 53, &seed, err); break;
        case O_MAF_MIN: st = tg_cli_double("maf-min", optarg, 0, 0.5, &s->maf_min, err); break;
        case O_MAF_MAX: st = tg_cli_double("maf-max", optarg, 0, 0.5, &s->maf_max, err); break;
        case O_MISSING: st = tg_cli_double("missing", optarg, 0, 0.99, &s->missing, err); break;
        case O_MISS_SNPS: st = parse_missing_snps(optarg, s, err); break;
        case O_TRAIT:
            if (strcmp(optarg, "cc") && strcmp(optarg, "qt"))
                st = tg_error_set(err, TG_ERR_ARG, "--trait %s: expected cc or qt", optarg);
            s->qt = !strcmp(optarg, "qt");
            break;
        case O_NPHENO:
            st = tg_cli_int("n-pheno", optarg, 1, TG_SIM_MAX_PHENO, &s->n_pheno, err);
            break;
        case O_ADDITIVE:
            st = tg_cli_int("additive", optarg, 0, TG_SIM_MAX_DIM, &s->additive, err);
            break;
        case O_H2: st = tg_cli_double("h2", optarg, 0, 1, &s->h2, err); break;
        case O_EPI: st = parse_epistasis(optarg, s, err); break;
        case O_EPI_EFFECT:
            st = tg_cli_double("epi-effect", optarg, 0, 100, &s->epi_effect, err);
            break;
        case O_NONLINEAR: nonlinear = 1; break;
        case O_NL_PAIRS: st = tg_cli_int("nl-pairs", optarg, 1, TG_SIM_MAX_DIM, &nl_pairs, err); break;
        case O_PREV: st = tg_cli_double("prevalence", optarg, 0, 1, &s->prevalence, err); break;
        case O_POPS:
            st = tg_cli_int("populations", optarg, 1, TG_SIM_MAX_DIM, &s->populations, err);
            break;
        case O_FST:
            st = tg_cli_double("fst", optarg, 0, 1, &s->fst, err);
            fst_given = 1;
            break;
        case O_QUIET: o->quiet = 1; break;
        case O_ZST: o->zst = 1; break;
        case O_HELP: fputs(help, stdout); return -1;
        default: st = tg_cli_bad_option(argv, err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, err);
    if (st) return st;
    if (!o->out) return tg_error_set(err, TG_ERR_ARG, "--out PREFIX is required");
    if (!s->m) return tg_error_set(err, TG_ERR_ARG, "--n-snps M is required");
    if (nonlinear && !s->qt) return tg_error_set(err, TG_ERR_ARG, "--nonlinear needs --trait qt");
    if (nl_pairs && !nonlinear)
        return tg_error_set(err, TG_ERR_ARG, "--nl-pairs needs --nonlinear");
    if (fst_given && s->populations == 1)
        return tg_error_set(err, TG_ERR_ARG, "--fst needs --populations K > 1");
    if (!fst_given && s->populations > 1) s->fst = 0.1;
    s->seed = (uint64_t)seed;
    s->nl_pairs = nonlinear ? (nl_pairs ? nl_pairs : 5) : 0;
    return tg_sim_check(s, err);
}

/* "snp3,snp17": the SNP ids of an effect. */
static void effect_snps(const tg_sim *d, const tg_sim_effect *e, char *buf, size_t len) {
    size_t at = 0;
    for (int s = 0; s < e->nsnp; s++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", s ? "," : "", d->snps[e->snp[s]].id);
}

static tg_status write_truth(const char *out, const tg_sim *d, tg_error *err) {
    FILE *f;
    char *path = NULL, snps[96];
    tg_status st = tg_out_open(out, ".truth.tsv", &f, &path, err);
    if (st) return st;
    fputs("pheno\tkind\tsnps\teffect\n", f);
    for (int64_t k = 0; k < d->n_eff; k++) {
        const tg_sim_effect *e = &d->eff[k];
        effect_snps(d, e, snps, sizeof snps);
        fprintf(f, "%s\t%s\t%s\t%.9g\n", d->pheno_names[e->pheno], tg_sim_kind_name(e), snps,
                e->effect);
    }
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

/* The genotypes go to the .bed block by block as they are drawn (simulate_stream). */
typedef struct {
    tg_bed_out *bed;
    const tg_sim *d;
    tg_cli_progress *progress;
} bed_sink;

static tg_status put_block(void *ctx, int64_t j0, int64_t nj, const int8_t *geno,
                           tg_error *err) {
    bed_sink *b = ctx;
    tg_status st = tg_bed_out_put(b->bed, b->d->snps + j0, nj, geno, b->d->n, err);
    tg_cli_progress_update(b->progress, j0 + nj);
    return st;
}

static tg_status simulate_fileset(const sim_opts *o, tg_sim *d, tg_error *err) {
    tg_bed_out *bed;
    tg_status st = tg_bed_out_open(o->out, o->s.n, &bed, err);
    if (st) return st;
    tg_cli_progress progress;
    tg_cli_progress_init(&progress, stderr, isatty(2), o->quiet || tg_runtime_rank() != 0,
                         tg_now);
    tg_cli_progress_start(&progress, "genotypes drawn and written", o->s.m, "SNPs");
    bed_sink b = {.bed = bed, .d = d, .progress = &progress};
    const tg_sim_sink sink = {.put = put_block, .ctx = &b};
    st = tg_simulate_stream(&o->s, &sink, d, err);
    tg_cli_progress_end(&progress);
    if (st) {
        tg_bed_out_discard(bed);
        return st;
    }
    if ((st = tg_bed_out_close(bed, d->samples, d->snps, d->m, err))) return st;
    size_t len = strlen(o->out) + sizeof ".pheno";
    char *path = tg_malloc(len, err);
    if (!path) return TG_ERR_NOMEM;
    snprintf(path, len, "%s.pheno", o->out);
    tg_pheno ph = {.n_samples = d->n, .n_cols = (int)d->n_pheno, .names = d->pheno_names,
                   .values = d->pheno};
    st = tg_pheno_write(path, d->samples, &ph, err);
    free(path);
    return st ? st : write_truth(o->out, d, err);
}

static void log_summary(const sim_opts *so, const tg_sim *d, tg_log *log) {
    const tg_sim_opts *o = &so->s;
    tg_log_printf(log, "simulated %lld samples × %lld SNPs, seed %lld, %s trait, %lld phenotype(s)",
                  (long long)o->n, (long long)o->m, (long long)o->seed,
                  o->qt ? "quantitative" : "case-control", (long long)o->n_pheno);
    tg_log_printf(log,
                  "planted per phenotype: %lld additive SNPs, %lld non-linear pairs, epistatic "
                  "sets of order 2/3/4: %lld/%lld/%lld",
                  (long long)o->additive, (long long)o->nl_pairs, (long long)o->epi_sets[2],
                  (long long)o->epi_sets[3], (long long)o->epi_sets[4]);
    if (o->populations > 1)
        tg_log_printf(log,
                      "%lld populations (Balding-Nichols, F_ST %g): FID pop1..pop%lld, sample i "
                      "in population i mod %lld + 1",
                      (long long)o->populations, o->fst, (long long)o->populations,
                      (long long)o->populations);
    tg_log_printf(log, "missing calls: %lld (rate %.4g)", (long long)d->n_missing,
                  (double)d->n_missing / ((double)o->n * (double)o->m));
    if (d->n_missing_snps)
        tg_log_printf(log, "%lld SNPs not planted drawn at missing rate %.4g (--missing-snps)",
                      (long long)d->n_missing_snps, o->missing_snps_rate);
    for (int p = 0; p < o->n_pheno; p++) {
        const double *y = d->pheno + p * o->n;
        double s = 0, s2 = 0;
        int64_t cases = 0;
        for (int64_t i = 0; i < o->n; i++) s += y[i], s2 += y[i] * y[i], cases += y[i] == 2;
        double mean = s / (double)o->n, var = o->n > 1 ? (s2 - s * mean) / (double)(o->n - 1) : 0;
        if (o->qt)
            tg_log_printf(log, "%s: mean %.4g, variance %.4g", d->pheno_names[p], mean, var);
        else if (isnan(d->threshold[p]))
            tg_log_printf(log, "%s: %lld cases, %lld controls", d->pheno_names[p],
                          (long long)cases, (long long)(o->n - cases));
        else
            tg_log_printf(log, "%s: %lld cases, %lld controls (liability threshold %.4g)",
                          d->pheno_names[p], (long long)cases, (long long)(o->n - cases),
                          d->threshold[p]);
    }
    char snps[96];
    for (int64_t k = 0; k < d->n_eff; k++) {
        const tg_sim_effect *e = &d->eff[k];
        effect_snps(d, e, snps, sizeof snps);
        tg_log_file_only(log, "planted %s %s %s effect %.6g", d->pheno_names[e->pheno],
                         tg_sim_kind_name(e), snps, e->effect);
    }
    const char *z = so->zst ? ".zst" : "";
    tg_log_printf(log, "wrote %s.bed/.bim/.fam, %s.pheno%s, %s.truth.tsv%s", so->out, so->out, z,
                  so->out, z);
}

int tg_cmd_simulate(int argc, char **argv) {
    sim_opts o;
    tg_sim d = {0};
    tg_error err = {0};
    tg_log *log = NULL;
    int rc = 0;
    int st = parse_options(argc, argv, &o, &err);
    if (st < 0) return 0;
    if (st) return tg_cli_fail_options("simulate", &err);
    char bed[96];
    snprintf(bed, sizeof bed, "the .bed of %lld samples × %lld SNPs", (long long)o.s.n,
             (long long)o.s.m);
    if ((st = tg_out_check_prefix(o.out, &err)) ||
        (st = tg_out_check_space(o.out, 3 + (double)o.s.m * (double)((o.s.n + 3) / 4), bed,
                                 &err)))
        return tg_cli_fail("simulate", NULL, &err);
    if (o.zst) tg_out_set_zstd(3, 0); /* plink2's default level, every usable core */
    if ((st = tg_log_open(&log, o.out, argc, argv, &err)))
        return tg_cli_fail("simulate", NULL, &err);
    tg_log_set_quiet(log, o.quiet);
    /* one dataset: under mpiexec rank 0 draws and writes it, the other ranks have nothing to do */
    if (tg_runtime_rank() == 0) {
        if ((st = simulate_fileset(&o, &d, &err)))
            rc = tg_cli_fail("simulate", log, &err);
        else
            log_summary(&o, &d, log);
    }
    tg_sim_free(&d);
    tg_log_close(log);
    return rc;
}
