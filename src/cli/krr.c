/* tilegwas krr: kernel ridge regression of one or more phenotypes (the KRR paper's Build,
 * Associate and Predict phases, Algorithms 2-4): split train/test, build the training kernel
 * and the test-train kernel from one set of INT32 dot products per cohort pair (reused by every
 * γ), factor K + αI with the mixed-precision tile Cholesky for every (γ, α), solve for all
 * phenotypes at once, predict the test cohort, and report MSPE and Pearson r (section VII-B).
 *
 * --save-model DIR keeps a fit (one γ and α) in a folder: the factor L in its per-tile
 * precisions (factor.bin), the weights, the training samples (the rows of K), the SNPs with the
 * training frequencies that imputed and centred them, the phenotype means, and model.tsv (the
 * options, and what identifies the training fileset: .bed size and time, a hash of the .bim).
 * --load-model DIR then predicts new cohorts from the saved weights, or solves new phenotypes
 * of the same training samples with the saved factor, with no training kernel and no
 * factorisation: only the test-train kernel is built, from training genotypes re-encoded with
 * the saved frequencies so that its columns match the rows of the factor. The folder's files
 * are written and read in src/cli/krr_model.c. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "cli/krr.h"
#include "io/idmap.h"
#include "io/png.h"

static const char *help =
    "usage: tilegwas krr --bfile PREFIX --pheno FILE --kernel K [--gamma G] --alpha A\n"
    "                    (--test-bfile T | --test-frac F) --out PREFIX [options]\n"
    "       tilegwas krr --load-model DIR [--pheno FILE] --test-bfile T --out PREFIX [options]\n"
    "Kernel ridge regression: W = (K + A I)^-1 (Y - mean), predictions K_test W + mean.\n"
    "Training samples are those with every selected phenotype observed (others are dropped\n"
    "with a warning); each phenotype is centered by its training mean. Genotypes: A1 counts,\n"
    "missing calls imputed by the nearest integer to the training mean 2p.\n"
    "Writes PREFIX.pred.tsv (FID IID, then one column per phenotype; with several gamma or\n"
    "alpha values one column per phenotype and pair, named PHENO_g<G>_a<A>, or PHENO_a<A> for\n"
    "the ibs and linear kernels), PREFIX.krr.tsv (per phenotype, gamma and alpha: n_train,\n"
    "n_test = observed test values, MSPE, Pearson r, seconds of that pair's phases) and\n"
    "PREFIX.log (times and rates per phase, precision map counts).\n\n"
    "options:\n"
    "  --bfile PREFIX       training PLINK 1 fileset (.bed/.bim/.fam)\n"
    "  --pheno FILE         phenotypes: FID IID then columns (header optional; -9/NA missing)\n"
    "  --pheno-name A,B     use these columns (default: all)\n"
    "  --covar FILE         confounders (gaussian kernel): their squared distance is added to\n"
    "                       the genotype distance; a missing value is an error\n"
    "  --covar-name A,B     use these columns of --covar (default: all)\n"
    "  --kernel K           gaussian exp(-G |x_i - x_j|^2), ibs (alleles shared / 2 N_SNP)\n"
    "                       or linear (the GRM of VanRaden) (default gaussian)\n"
    "  --gamma G[,G2..]     gaussian width(s), > 0 (required for gaussian; a first guess is\n"
    "                       1 / the median squared distance, about 1 / (N_SNP 4 p (1 - p)))\n"
    "  --alpha A[,A2..]     ridge parameter(s), >= 0 (required)\n"
    "  --test-bfile T       test cohort (same SNPs in the same order with the same A1)\n"
    "  --test-pheno FILE    phenotypes of the test cohort, for MSPE and r\n"
    "  --test-covar FILE    confounders of the test cohort (with --covar)\n"
    "  --test-frac F        or: hold out this fraction of the samples, in (0, 1)\n"
    "  --seed S             seed of the --test-frac shuffle (default 1)\n"
    "  --pred-tol T         the adaptive precision map keeps the weights, and so the\n"
    "                       predictions, within a relative T of those of an all-fp64\n"
    "                       factorisation (first-order bound; default 1e-3): its accuracy\n"
    "                       is T A / ((NT + 1) |K + A I|_F) for each alpha A, NT tiles a side\n"
    "  --accuracy E         instead, this target accuracy of the adaptive map (the log\n"
    "                       states the bound it gives)\n"
    "  --precisions P,..    precisions off-diagonal tiles may take, of fp64, fp32, fp16, fp8\n"
    "                       (default fp32,fp16,fp8 when GPUs are used, else fp32: on CPUs\n"
    "                       fp16 and fp8 tiles save memory, not time)\n"
    "  --diag fp32|fp64     precision of the diagonal tiles, the kernel and the solve\n"
    "                       (default fp64, and fp32 diagonal tiles and solve where\n"
    "                       --pred-tol allows them). A map under which the factorisation loses\n"
    "                       positive definiteness is raised and the kernel refactored\n"
    "                       (logged); only an all-fp64 failure is an error\n"
    "  --band B             instead of the adaptive map, the paper's bands: tiles with\n"
    "                       i - j <= B (NT - 1) take --diag, the others the lowest of\n"
    "                       --precisions (B in [0, 1])\n"
    "  --tile NB            tile size (default with GPUs 2048, 4096 from 32,768 training\n"
    "                       samples; CPU only 512)\n"
    "  --precision-map F    write the precision map of the last factorisation: F.tsv (tile\n"
    "                       row, tile column, precision) or F.png (heat map, the paper's\n"
    "                       Fig. 4: fp64 dark red, fp32 orange, fp16 light blue, fp8 dark\n"
    "                       blue, upper triangle white)\n"
    "  --save-model DIR     save the fit (one gamma and one alpha, no --covar) in folder DIR,\n"
    "                       created if missing; a folder that is not empty must hold a model,\n"
    "                       which is replaced. Files: model.tsv (options, training fileset),\n"
    "                       train.tsv, snps.tsv (training A1 frequencies), pheno.tsv (means),\n"
    "                       weights.tsv, factor.bin (the Cholesky factor in its precisions)\n"
    "  --load-model DIR     predict --test-bfile T with the model saved in DIR instead of a\n"
    "                       fit (no --bfile, --kernel, --gamma, --alpha, --tile, --accuracy,\n"
    "                       --precisions, --diag, --band, --covar, --test-covar, --test-frac,\n"
    "                       --seed, --precision-map: the model fixes them). With --pheno FILE:\n"
    "                       new phenotypes, observed for every training sample of the model,\n"
    "                       solved with the saved factor (no factorisation); --save-model then\n"
    "                       saves them as a new model. The training fileset must be unchanged\n"
    "                       (--save-model and --load-model run on one MPI rank)\n"
    "  --help               this text\n" TG_CLI_GRID_HELP TG_CLI_COMMON_HELP
    "\nUnder mpiexec -n R every rank runs the same command: the tiles of the kernels, the\n"
    "factor and the solve are spread over the --grid, each rank reads the genotypes of its\n"
    "panels only, and rank 0 writes the outputs.\n";


/* A comma-separated list of numbers in [lo, hi] (lo excluded when @p open_lo). */
static tg_status parse_list(const char *opt, const char *s, double lo, int open_lo,
                            double **out, int *n, tg_error *err) {
    free(*out);
    *out = NULL;
    *n = 0;
    char *list = tg_strdup(s, err), *save = NULL;
    if (!list || !(*out = tg_malloc((strlen(s) + 1) * sizeof **out, err))) {
        free(list);
        return TG_ERR_NOMEM;
    }
    tg_status st = TG_OK;
    for (char *t = strtok_r(list, ",", &save); t && !st; t = strtok_r(NULL, ",", &save)) {
        double v;
        if (!(st = tg_cli_double(opt, t, lo, INFINITY, &v, err))) {
            if (open_lo && !(v > lo))
                st = tg_error_set(err, TG_ERR_ARG, "--%s %s: must be > %g", opt, t, lo);
            (*out)[(*n)++] = v;
        }
    }
    if (!st && !*n) st = tg_error_set(err, TG_ERR_ARG, "--%s '%s': no value", opt, s);
    free(list);
    return st;
}

/* Returns TG_OK, an error, or -1 after printing the help. */
static int parse_options(int argc, char **argv, krr_opts *o, tg_error *err) {
    enum {
        O_BFILE = 1, O_PHENO, O_PNAME, O_COVAR, O_CNAME, O_KERNEL, O_GAMMA, O_ALPHA, O_TEST,
        O_TPHENO, O_TCOVAR, O_FRAC, O_SEED, O_ACC, O_PTOL, O_PREC, O_DIAG, O_BAND, O_TILE, O_MAP, O_SAVE,
        O_LOAD, O_GRID, O_HELP
    };
    /* options of a fit, which a loaded model fixes */
    const unsigned fit_only = 1u << O_BFILE | 1u << O_COVAR | 1u << O_CNAME | 1u << O_KERNEL |
                              1u << O_GAMMA | 1u << O_ALPHA | 1u << O_TCOVAR | 1u << O_FRAC |
                              1u << O_SEED | 1u << O_ACC | 1u << O_PTOL | 1u << O_PREC | 1u << O_DIAG |
                              1u << O_BAND | 1u << O_TILE | 1u << O_MAP;
    static const struct option opts[] = {
        {"bfile", required_argument, 0, O_BFILE}, {"pheno", required_argument, 0, O_PHENO},
        {"pheno-name", required_argument, 0, O_PNAME}, {"covar", required_argument, 0, O_COVAR},
        {"covar-name", required_argument, 0, O_CNAME}, {"kernel", required_argument, 0, O_KERNEL},
        {"gamma", required_argument, 0, O_GAMMA}, {"alpha", required_argument, 0, O_ALPHA},
        {"test-bfile", required_argument, 0, O_TEST},
        {"test-pheno", required_argument, 0, O_TPHENO},
        {"test-covar", required_argument, 0, O_TCOVAR},
        {"test-frac", required_argument, 0, O_FRAC}, {"seed", required_argument, 0, O_SEED},
        {"accuracy", required_argument, 0, O_ACC}, {"pred-tol", required_argument, 0, O_PTOL},
        {"precisions", required_argument, 0, O_PREC},
        {"diag", required_argument, 0, O_DIAG}, {"band", required_argument, 0, O_BAND},
        {"tile", required_argument, 0, O_TILE}, {"precision-map", required_argument, 0, O_MAP},
        {"save-model", required_argument, 0, O_SAVE},
        {"load-model", required_argument, 0, O_LOAD}, {"grid", required_argument, 0, O_GRID},
        {"help", no_argument, 0, O_HELP}, TG_CLI_COMMON_OPTIONS, {0, 0, 0, 0}};
    *o = (krr_opts){.kernel = TG_KERNEL_GAUSSIAN, .test_frac = NAN, .eps = 0, .band = -1,
                    .pred_tol = 1e-3,
                    .seed = 1, .nb = 0, .allowed = 0 /* by the workers: run */,
                    .diag = TG_FP64};
    tg_cli_common_init(&o->c);
    int c, idx = 0;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (c = getopt_long(argc, argv, "", opts, &idx)) != -1) {
        if (c < O_HELP && fit_only >> c & 1u && !o->fit_opt) o->fit_opt = opts[idx].name;
        switch (c) {
        case O_BFILE: o->bfile = optarg; break;
        case O_PHENO: o->pheno = optarg; break;
        case O_PNAME: o->pheno_names = optarg; break;
        case O_COVAR: o->covar = optarg; break;
        case O_CNAME: o->covar_names = optarg; break;
        case O_KERNEL: st = tg_kernel_parse(optarg, &o->kernel, err); break;
        case O_GAMMA: st = parse_list("gamma", optarg, 0, 1, &o->gamma, &o->ngamma, err); break;
        case O_ALPHA: st = parse_list("alpha", optarg, 0, 0, &o->alpha, &o->nalpha, err); break;
        case O_TEST: o->test_bfile = optarg; break;
        case O_TPHENO: o->test_pheno = optarg; break;
        case O_TCOVAR: o->test_covar = optarg; break;
        case O_FRAC:
            if (!(st = tg_cli_double("test-frac", optarg, 0, 1, &o->test_frac, err)) &&
                !(o->test_frac > 0 && o->test_frac < 1))
                st = tg_error_set(err, TG_ERR_ARG, "--test-frac %s: must be in (0, 1)", optarg);
            break;
        case O_SEED: st = tg_cli_int("seed", optarg, 0, INT64_MAX / 2, &o->seed, err); break;
        case O_ACC:
            st = tg_cli_double("accuracy", optarg, 0, 1, &o->eps, err);
            o->eps_given = 1;
            break;
        case O_PTOL:
            if (!(st = tg_cli_double("pred-tol", optarg, 0, 1, &o->pred_tol, err)) &&
                !(o->pred_tol > 0))
                st = tg_error_set(err, TG_ERR_ARG, "--pred-tol %s: must be > 0", optarg);
            break;
        case O_PREC: st = tg_cli_precisions(optarg, &o->allowed, err); break;
        case O_DIAG:
            o->diag_given = 1;
            if (!(st = tg_prec_parse(optarg, &o->diag, err)) && o->diag != TG_FP32 &&
                o->diag != TG_FP64)
                st = tg_error_set(err, TG_ERR_ARG, "--diag %s: expected fp32 or fp64", optarg);
            break;
        case O_BAND: st = tg_cli_double("band", optarg, 0, 1, &o->band, err); break;
        case O_TILE: st = tg_cli_int("tile", optarg, 1, 1 << 16, &o->nb, err); break;
        case O_MAP: o->map_path = optarg; break;
        case O_SAVE: o->save_model = optarg; break;
        case O_LOAD: o->load_model = optarg; break;
        case O_GRID: st = tg_cli_grid(optarg, &o->c.rt, err); break;
        case O_HELP: fputs(help, stdout); return -1;
        case '?':
        case ':': st = tg_cli_bad_option(argv, err); break;
        default: st = tg_cli_common_option(&o->c, c, optarg, err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, err);
    if (st) return st;
    /* the model's files hold whole matrices: distributing them is left for later */
    if ((o->save_model || o->load_model) && tg_runtime_nranks() > 1)
        return tg_error_set(err, TG_ERR_ARG, "--%s runs on one MPI rank only (started on %d): "
                            "fit and save, or load and predict, without mpiexec",
                            o->save_model ? "save-model" : "load-model", tg_runtime_nranks());
    if (o->load_model) { /* the rest is read from the model (krr_model_read) */
        if (o->fit_opt)
            return tg_error_set(err, TG_ERR_ARG, "--%s cannot be given with --load-model: the "
                                "saved model fixes the training data, kernel, tiles and factor",
                                o->fit_opt);
        if (!o->test_bfile)
            return tg_error_set(err, TG_ERR_ARG, "--load-model needs --test-bfile T (the cohort "
                                "to predict)");
        if (o->pheno_names && !o->pheno)
            return tg_error_set(err, TG_ERR_ARG, "--pheno-name needs --pheno");
        if (o->save_model && !o->pheno)
            return tg_error_set(err, TG_ERR_ARG, "--save-model with --load-model needs --pheno "
                                "(new phenotypes to save): the loaded model is saved already");
        return TG_OK;
    }
    if (!o->bfile) return tg_error_set(err, TG_ERR_ARG, "--bfile PREFIX is required");
    if (!o->pheno) return tg_error_set(err, TG_ERR_ARG, "--pheno FILE is required");
    if (!o->nalpha) return tg_error_set(err, TG_ERR_ARG, "--alpha A is required");
    if (o->kernel == TG_KERNEL_GAUSSIAN && !o->ngamma)
        return tg_error_set(err, TG_ERR_ARG, "--gamma G is required with --kernel gaussian");
    if (o->kernel != TG_KERNEL_GAUSSIAN && (o->ngamma || o->covar))
        return tg_error_set(err, TG_ERR_ARG, "--%s applies to the gaussian kernel only, not %s",
                            o->ngamma ? "gamma" : "covar", tg_kernel_name(o->kernel));
    if (!o->ngamma) { /* ibs, linear: one pass with no γ */
        if (!(o->gamma = tg_calloc(1, sizeof *o->gamma, err))) return TG_ERR_NOMEM;
        o->ngamma = 1;
    }
    if (!o->test_bfile == isnan(o->test_frac))
        return tg_error_set(err, TG_ERR_ARG, "give one of --test-bfile T and --test-frac F");
    if (!o->test_bfile && (o->test_pheno || o->test_covar))
        return tg_error_set(err, TG_ERR_ARG, "--test-pheno/--test-covar go with --test-bfile");
    if (o->test_bfile && o->covar && !o->test_covar)
        return tg_error_set(err, TG_ERR_ARG, "--covar with --test-bfile needs --test-covar");
    if (o->covar_names && !o->covar)
        return tg_error_set(err, TG_ERR_ARG, "--covar-name needs --covar");
    if (o->save_model && (o->ngamma > 1 || o->nalpha > 1))
        return tg_error_set(err, TG_ERR_ARG, "--save-model needs one --gamma and one --alpha");
    if (o->save_model && o->covar)
        return tg_error_set(err, TG_ERR_ARG, "--save-model: a model with --covar cannot be "
                            "saved (confounders are not part of the model files)");
    if (o->map_path) {
        size_t l = strlen(o->map_path);
        o->png = l > 4 && !strcmp(o->map_path + l - 4, ".png");
        if (!o->png && !(l > 4 && !strcmp(o->map_path + l - 4, ".tsv")))
            return tg_error_set(err, TG_ERR_ARG,
                                "--precision-map %s: the name must end in .png or .tsv",
                                o->map_path);
    }
    return TG_OK;
}

/* Columns of a test cohort's file with the training names (each must be there). */
static tg_status match_columns(const char *file, const tg_pheno *ph, char **names, int k,
                               int *cols, tg_error *err) {
    for (int c = 0; c < k; c++) {
        cols[c] = -1;
        for (int t = 0; t < ph->n_cols && cols[c] < 0; t++)
            if (!strcmp(ph->names[t], names[c])) cols[c] = t;
        if (cols[c] < 0)
            return tg_error_set(err, TG_ERR_ARG, "%s has no column %s (a training column)", file,
                                names[c]);
    }
    return TG_OK;
}

/* The shortest of %.15g..%.17g that reads back as @p v (0.0005, not 0.00050000000000000001). */
static void exact(char *buf, size_t size, double v) {
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v) return;
    }
}


static const tg_sample *test_sample(const krr_data *d, int64_t i) {
    return d->rows_test ? &d->bed.samples[d->rows_test[i]] : &d->test.samples[i];
}

/* The test cohort of --test-bfile: the same SNPs in the same order with the same A1. */
static tg_status open_test(const krr_opts *o, krr_data *d, tg_error *err) {
    tg_status st = tg_bed_open(o->test_bfile, &d->test, err);
    if (st) return st;
    if (d->test.n_snps != d->bed.n_snps)
        return tg_error_set(err, TG_ERR_ARG, "--test-bfile %s: %lld SNPs, %s.bim has %lld",
                            o->test_bfile, (long long)d->test.n_snps, d->bed.prefix,
                            (long long)d->bed.n_snps);
    for (int64_t j = 0; j < d->bed.n_snps; j++) {
        const tg_snp *a = &d->bed.snps[j], *b = &d->test.snps[j];
        if (strcmp(a->id, b->id) || strcmp(a->a1, b->a1))
            return tg_error_set(err, TG_ERR_ARG,
                                "--test-bfile %s: SNP %lld of the .bim is %s (A1 %s), the "
                                "training SNP is %s (A1 %s): the same SNPs in the same order "
                                "with the same A1 are needed",
                                o->test_bfile, (long long)j + 1, b->id, b->a1, a->id, a->a1);
    }
    d->ntest = d->test.n_samples;
    return TG_OK;
}

/* Train/test split. --test-frac: a seeded shuffle of the .fam, the first round(F·N) held out;
 * training samples are the others with every phenotype observed (kept in .fam order). */
static tg_status split(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err) {
    const int64_t n = d->bed.n_samples;
    char *is_test = tg_calloc((size_t)n, 1, err);
    if (!is_test || !(d->train = tg_malloc((size_t)n * sizeof *d->train, err))) {
        free(is_test);
        return TG_ERR_NOMEM;
    }
    if (o->test_bfile == NULL) {
        int64_t *perm = tg_malloc((size_t)n * sizeof *perm, err);
        if (!perm || !(d->rows_test = tg_malloc((size_t)n * sizeof *d->rows_test, err))) {
            free(perm);
            free(is_test);
            return TG_ERR_NOMEM;
        }
        tg_rng r;
        tg_rng_seed(&r, (uint64_t)o->seed);
        for (int64_t i = 0; i < n; i++) perm[i] = i;
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)tg_rng_below(&r, (uint64_t)i + 1), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        int64_t nt = (int64_t)llround(o->test_frac * (double)n);
        for (int64_t i = 0; i < nt; i++) is_test[perm[i]] = 1;
        free(perm);
        d->ntest = 0;
        for (int64_t i = 0; i < n; i++)
            if (is_test[i]) d->rows_test[d->ntest++] = i;
    }
    int64_t dropped = 0, candidates = 0;
    tg_status st = TG_OK;
    d->ntrain = 0;
    for (int64_t i = 0; i < n; i++) {
        if (is_test[i]) continue;
        candidates++;
        int all = 1;
        for (int c = 0; c < d->k; c++) all &= !isnan(d->ph.values[i + d->pcols[c] * n]);
        if (all) d->train[d->ntrain++] = i;
        else dropped++;
    }
    /* a phenotype without any training value is named (not just "no training sample") */
    for (int c = 0; c < d->k && !st && candidates; c++) {
        int64_t obs = 0;
        for (int64_t i = 0; i < n; i++) obs += !is_test[i] && !isnan(d->ph.values[i + d->pcols[c] * n]);
        if (!obs)
            st = tg_error_set(err, TG_ERR_ARG, "%s: phenotype %s has no value for the training "
                              "samples of %s.fam", o->pheno, d->names[c], o->bfile);
    }
    free(is_test);
    if (st) return st;
    if (d->ntest == 0 || candidates == 0)
        return tg_error_set(err, TG_ERR_ARG, "--test-frac %g of %lld samples leaves %s",
                            o->test_frac, (long long)n,
                            d->ntest ? "no training sample" : "no test sample");
    if (d->ntrain < 2)
        return tg_error_set(err, TG_ERR_ARG, "%lld training sample(s) with every phenotype "
                            "observed: at least 2 are needed", (long long)d->ntrain);
    if (d->k > d->ntrain)
        return tg_error_set(err, TG_ERR_ARG, "%d phenotypes but %lld training samples: more "
                            "phenotypes than samples", d->k, (long long)d->ntrain);
    if (dropped)
        tg_log_printf(log, "warning: %lld training sample(s) dropped: a selected phenotype is "
                      "missing", (long long)dropped);
    tg_log_printf(log, "split: %lld training, %lld test samples%s", (long long)d->ntrain,
                  (long long)d->ntest, o->test_bfile ? "" : " (--test-frac)");
    return TG_OK;
}

/* Centered training phenotypes (with --load-model and no --pheno: none, the model has the
 * weights and means), the test phenotypes (NAN where absent) and the confounders. */
static tg_status arrays(krr_data *d, tg_error *err) {
    const int64_t n = d->bed.n_samples, nr = d->ntrain, nt = d->ntest;
    const int k = d->k, given = d->ph.values != NULL;
    if ((given && (!(d->y = tg_malloc((size_t)(nr * k) * sizeof *d->y, err)) ||
                   !(d->mean = tg_calloc((size_t)k, sizeof *d->mean, err)))) ||
        !(d->ytest = tg_malloc((size_t)(nt * k) * sizeof *d->ytest, err)) ||
        (d->ncov && (!(d->xtr = tg_malloc((size_t)(nr * d->ncov) * sizeof *d->xtr, err)) ||
                     !(d->xte = tg_malloc((size_t)(nt * d->ncov) * sizeof *d->xte, err)))))
        return TG_ERR_NOMEM;
    for (int c = 0; c < k; c++) {
        const double *v = given ? d->ph.values + d->pcols[c] * n : NULL;
        for (int64_t i = 0; given && i < nr; i++) d->mean[c] += v[d->train[i]] / (double)nr;
        for (int64_t i = 0; given && i < nr; i++) d->y[i + c * nr] = v[d->train[i]] - d->mean[c];
        for (int64_t i = 0; i < nt; i++)
            d->ytest[i + c * nt] = d->rows_test ? v[d->rows_test[i]]
                                   : d->tcols ? d->tph.values[i + d->tcols[c] * nt] : NAN;
    }
    for (int c = 0; c < d->ncov; c++) {
        const double *v = d->cov.values + d->ccols[c] * n;
        for (int64_t i = 0; i < nr; i++) d->xtr[i + c * nr] = v[d->train[i]];
        for (int64_t i = 0; i < nt; i++)
            d->xte[i + c * nt] = d->rows_test ? v[d->rows_test[i]]
                                              : d->tcov.values[i + d->tccols[c] * nt];
    }
    return TG_OK;
}

/* --load-model --pheno: the factor is for exactly the model's training samples, so each must
 * have a value of every phenotype. */
static tg_status check_new_pheno(const krr_opts *o, const krr_data *d, tg_error *err) {
    const int64_t n = d->bed.n_samples;
    for (int c = 0; c < d->k; c++)
        for (int64_t i = 0; i < d->ntrain; i++)
            if (isnan(d->ph.values[d->train[i] + d->pcols[c] * n])) {
                const tg_sample *s = &d->bed.samples[d->train[i]];
                return tg_error_set(err, TG_ERR_ARG, "%s: training sample '%s %s' (FID IID) has "
                                    "no value of %s: the saved factor is for exactly the %lld "
                                    "training samples of the model", o->pheno, s->fid, s->iid,
                                    d->names[c], (long long)d->ntrain);
            }
    return TG_OK;
}

/* Inputs: a fit's, or a saved model's (which fixes the options) and --pheno's. */
static tg_status load(krr_opts *o, krr_data *d, tg_log *log, tg_error *err) {
    double t0 = tg_now();
    tg_status st = o->load_model ? krr_model_read(o, d, log, err)
                                 : tg_bed_open(o->bfile, &d->bed, err);
    if (!st && o->pheno)
        st = tg_pheno_read(o->pheno, d->bed.samples, d->bed.n_samples, &d->ph, err);
    if (!st && o->pheno)
        st = tg_cli_columns(o->pheno, "pheno-name", o->pheno_names, &d->ph, &d->pcols, &d->k, err);
    if (!st && o->covar) {
        st = tg_pheno_read(o->covar, d->bed.samples, d->bed.n_samples, &d->cov, err);
        if (!st) st = tg_cli_columns(o->covar, "covar-name", o->covar_names, &d->cov, &d->ccols, &d->ncov, err);
    }
    if (st) return st;
    if (!o->pheno) d->k = d->mk; /* --load-model: the saved phenotypes */
    if (!(d->names = tg_malloc((size_t)d->k * sizeof *d->names, err))) return TG_ERR_NOMEM;
    for (int c = 0; c < d->k; c++) d->names[c] = o->pheno ? d->ph.names[d->pcols[c]] : d->mnames[c];
    if (o->pheno)
        tg_log_printf(log, "%s: %lld samples, %lld SNPs; %s: %d phenotype(s) used", d->bed.prefix,
                      (long long)d->bed.n_samples, (long long)d->bed.n_snps, o->pheno, d->k);
    if (o->test_bfile) {
        if ((st = open_test(o, d, err))) return st;
        if (o->test_pheno &&
            (!(d->tcols = tg_malloc((size_t)d->k * sizeof *d->tcols, err)) ||
             (st = tg_pheno_read(o->test_pheno, d->test.samples, d->test.n_samples, &d->tph, err)) ||
             (st = match_columns(o->test_pheno, &d->tph, d->names, d->k, d->tcols, err))))
            return st ? st : TG_ERR_NOMEM;
        if (o->test_covar) {
            char **cn = tg_malloc((size_t)d->ncov * sizeof *cn + 1, err);
            if (!cn || !(d->tccols = tg_malloc((size_t)d->ncov * sizeof *d->tccols + 1, err))) {
                free(cn);
                return TG_ERR_NOMEM;
            }
            for (int c = 0; c < d->ncov; c++) cn[c] = d->cov.names[d->ccols[c]];
            st = tg_pheno_read(o->test_covar, d->test.samples, d->test.n_samples, &d->tcov, err);
            if (!st) st = match_columns(o->test_covar, &d->tcov, cn, d->ncov, d->tccols, err);
            free(cn);
            if (st) return st;
        }
    }
    if (o->load_model) {
        if (o->pheno && (st = check_new_pheno(o, d, err))) return st;
        tg_log_printf(log, "%lld training samples (the model's), %lld test samples",
                      (long long)d->ntrain, (long long)d->ntest);
    } else if ((st = split(o, d, log, err))) {
        return st;
    }
    if ((st = arrays(d, err))) return st;
    tg_log_printf(log, "read inputs: %.3f s", tg_now() - t0);
    return TG_OK;
}

/* ---- outputs */

static void column_name(const krr_opts *o, const char *pheno, int g, int a, char *buf, size_t len) {
    if (o->ngamma * o->nalpha == 1)
        snprintf(buf, len, "%s", pheno);
    else if (o->kernel == TG_KERNEL_GAUSSIAN)
        snprintf(buf, len, "%s_g%g_a%g", pheno, o->gamma[g], o->alpha[a]);
    else
        snprintf(buf, len, "%s_a%g", pheno, o->alpha[a]);
}

static tg_status write_pred(const krr_opts *o, const krr_data *d, tg_error *err) {
    FILE *f;
    char *path = NULL, num[32], name[512];
    tg_status st = tg_out_open(o->c.out, ".pred.tsv", &f, &path, err);
    if (st) return st;
    int ncol = o->ngamma * o->nalpha * d->k;
    fputs("FID\tIID", f);
    for (int g = 0; g < o->ngamma; g++)
        for (int a = 0; a < o->nalpha; a++)
            for (int c = 0; c < d->k; c++) {
                column_name(o, d->names[c], g, a, name, sizeof name);
                fprintf(f, "\t%s", name);
            }
    fputc('\n', f);
    for (int64_t i = 0; i < d->ntest; i++) {
        const tg_sample *s = test_sample(d, i);
        fprintf(f, "%s\t%s", s->fid, s->iid);
        for (int c = 0; c < ncol; c++) {
            tg_text_format_double(d->pred[i + c * d->ntest], num);
            fprintf(f, "\t%s", num);
        }
        fputc('\n', f);
    }
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

static tg_status write_stats(const krr_opts *o, const krr_data *d, tg_error *err) {
    FILE *f;
    char *path = NULL;
    tg_status st = tg_out_open(o->c.out, ".krr.tsv", &f, &path, err);
    if (st) return st;
    fputs("pheno\tgamma\talpha\tn_train\tn_test\tMSPE\tpearson_r\tseconds\n", f);
    fputs(d->stats ? d->stats : "", f);
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

/* Appends one printf-formatted line to d->stats. */
static tg_status add_stats(krr_data *d, tg_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tg_status add_stats(krr_data *d, tg_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = realloc(d->stats, d->stats_len + (size_t)len + 1);
    if (!s) return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
    d->stats = s;
    va_start(ap, fmt);
    vsnprintf(s + d->stats_len, (size_t)len + 1, fmt, ap);
    va_end(ap);
    d->stats_len += (size_t)len;
    return TG_OK;
}

/* The precision map (nt × nt, column-major) as TSV of the lower tiles or as a heat map of
 * ⌊256/nt⌋ (at least 1) pixels per tile, tile (0, 0) top left. */
static tg_status write_map(const char *path, int png, const tg_prec *map, int nt, tg_error *err) {
    if (!png) {
        FILE *f;
        char *p = NULL;
        tg_status st = tg_out_open(path, "", &f, &p, err);
        if (st) return st;
        fputs("tile_row\ttile_col\tprecision\n", f);
        for (int j = 0; j < nt; j++)
            for (int i = j; i < nt; i++)
                fprintf(f, "%d\t%d\t%s\n", i, j, tg_prec_name(map[i + (size_t)j * nt]));
        st = tg_out_close(f, p, err);
        free(p);
        return st;
    }
    static const uint8_t colour[TG_NPREC][3] = {
        [TG_FP64] = {178, 24, 43}, [TG_FP32] = {244, 165, 130}, [TG_FP16] = {146, 197, 222},
        [TG_FP8_E4M3] = {33, 102, 172}};
    uint32_t s = nt < 256 ? 256 / (uint32_t)nt : 1, side = s * (uint32_t)nt;
    uint8_t *rgb = tg_malloc((size_t)side * side * 3, err);
    if (!rgb) return TG_ERR_NOMEM;
    for (uint32_t y = 0; y < side; y++)
        for (uint32_t x = 0; x < side; x++) {
            int i = (int)(y / s), j = (int)(x / s);
            uint8_t *px = rgb + ((size_t)y * side + x) * 3;
            if (i < j) memset(px, 255, 3);
            else memcpy(px, colour[map[i + (size_t)j * nt]], 3);
        }
    tg_status st = tg_png_write(path, rgb, side, side, err);
    free(rgb);
    return st;
}

/* ---- the phases */

/* Build: the kernel genotypes of both cohorts, and their dot products when several kernels
 * reuse them (every (γ, α) pair rebuilds K + αI, since the factorisation overwrites it; the
 * test-train kernel is built once per γ); a single build computes them inside its tasks. */
static tg_status build(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err) {
    double t0 = tg_now();
    int nb = (int)o->nb;
    tg_status st;
    /* d->freq: a loaded model's, so that its rows are the factor's; NULL computes them */
    if ((st = tg_kgeno_create(&d->bed, d->train, d->ntrain, o->kernel, d->freq, d->xtr, d->ncov,
                              d->ntrain, nb, &d->gtr, err)) ||
        (st = tg_kgeno_create(o->test_bfile ? &d->test : &d->bed, d->rows_test, d->ntest,
                              o->kernel, tg_kgeno_freq(d->gtr), d->xte, d->ncov, d->ntest, nb,
                              &d->gte, err)))
        return st;
    if (tg_kgeno_imputed(d->gtr) || tg_kgeno_imputed(d->gte))
        tg_log_printf(log, "missing calls imputed by the nearest integer to 2p: %lld training, "
                      "%lld test", (long long)tg_kgeno_imputed(d->gtr),
                      (long long)tg_kgeno_imputed(d->gte));
    double t1 = tg_now();
    if ((o->ngamma * o->nalpha > 1 && (st = tg_kernel_gram(d->gtr, d->gtr, &d->C, NULL, err))) ||
        (o->ngamma > 1 && (st = tg_kernel_gram(d->gte, d->gtr, &d->Ct, NULL, err))))
        return st;
    tg_runtime_wait_all();
    double t2 = tg_now(), ops = (d->C ? tg_kernel_ops(d->gtr, d->gtr) : 0) +
                                (d->Ct ? tg_kernel_ops(d->gte, d->gtr) : 0);
    tg_log_printf(log, "build (%s kernel): genotype panels %.3f s", tg_kernel_name(o->kernel),
                  t1 - t0);
    if (ops > 0)
        tg_log_printf(log, "dot products kept for reuse (%s): %.3f s, %.4g tera int ops, %.3f "
                      "Tops/s", d->C && d->Ct ? "train x train, test x train"
                                : d->C ? "train x train" : "test x train",
                      t2 - t1, ops * 1e-12, ops * 1e-12 / (t2 - t1 > 0 ? t2 - t1 : 1e-9));
    return TG_OK;
}

/* K (a == b: + αI) from the kept dot products @p C, or with them when C is NULL; waits, so the
 * log's phase times are the work's. Logs the time, and the rate when it computed products. */
static tg_status kernel(const krr_opts *o, const tg_matrix *C, const tg_kgeno *a,
                        const tg_kgeno *b, double gamma, double alpha, tg_matrix **K,
                        const char *what, tg_log *log, tg_error *err) {
    double t0 = tg_now();
    tg_status st = tg_kernel_apply(C, a, b, gamma, alpha, o->diag, K, err);
    if (st) return st;
    tg_runtime_wait_all();
    double t = tg_now() - t0, ops = tg_kernel_ops(a, b);
    if (C)
        tg_log_printf(log, "%s from the kept dot products: %.3f s", what, t);
    else
        tg_log_printf(log, "%s (dot products and kernel function): %.3f s, %.4g tera int ops, "
                      "%.3f Tops/s", what, t, ops * 1e-12, ops * 1e-12 / (t > 0 ? t : 1e-9));
    return TG_OK;
}

/* Column block (g, a) of d->pred holds K_t·W: refuses non-finite values, adds the training
 * means, and writes each phenotype's MSPE and r to the log and d->stats (@p seconds: the
 * pair's phases). */
static tg_status pair_metrics(const krr_opts *o, krr_data *d, int g, int a, double seconds,
                              tg_log *log, tg_error *err) {
    const int64_t nt = d->ntest;
    double *pred = d->pred + (size_t)((g * o->nalpha + a) * d->k) * (size_t)nt;
    char gs[40] = "", gcol[32] = "NA", as[32]; /* γ in messages and krr.tsv: gaussian only */
    if (o->kernel == TG_KERNEL_GAUSSIAN) {
        snprintf(gs, sizeof gs, "gamma %g, ", o->gamma[g]);
        exact(gcol, sizeof gcol, o->gamma[g]);
    }
    exact(as, sizeof as, o->alpha[a]);
    for (int64_t i = 0; i < nt * d->k; i++)
        if (!isfinite(pred[i]))
            return tg_error_set(err, TG_ERR_NUMERIC, "%salpha %g: predictions are not finite: "
                                "K + alpha·I is too ill-conditioned for this precision map; use "
                                "a larger --alpha or a smaller --accuracy", gs, o->alpha[a]);
    for (int c = 0; c < d->k; c++) {
        double *p = pred + (size_t)c * nt, mspe, r;
        int64_t nobs;
        for (int64_t i = 0; i < nt; i++) p[i] += d->mean[c];
        tg_pred_metrics(d->ytest + (size_t)c * nt, p, nt, &mspe, &r, &nobs);
        tg_log_printf(log, "  %s: test MSPE %.6g, Pearson r %.4f (%lld observed test values)",
                      d->names[c], mspe, r, (long long)nobs);
        char ms[32] = "NA", rs[32] = "NA"; /* no test values, or r undefined */
        if (!isnan(mspe)) snprintf(ms, sizeof ms, "%.6e", mspe);
        if (!isnan(r)) snprintf(rs, sizeof rs, "%.6f", r);
        tg_status st = add_stats(d, err, "%s\t%s\t%s\t%lld\t%lld\t%s\t%s\t%.3f\n", d->names[c],
                                 gcol, as, (long long)d->ntrain, (long long)nobs, ms, rs, seconds);
        if (st) return st;
    }
    return TG_OK;
}

/* --save-model: the weights W from B as doubles (exact: B's tiles are fp64 or fp32). */
static tg_status keep_weights(krr_data *d, const tg_matrix *B, tg_error *err) {
    free(d->w);
    if (!(d->w = tg_malloc((size_t)(d->ntrain * d->k) * sizeof *d->w, err))) return TG_ERR_NOMEM;
    return tg_matrix_to_dense(B, d->w, d->ntrain, err);
}

/* The factorisation's map, its bound and its recoveries, for the log. */
static void log_factor(const krr_opts *o, const char *gs, double alpha, const tg_chol_report *r,
                       tg_log *log) {
    for (int k = 0; k < r->retries; k++) {
        const tg_chol_retry *t = &r->retry[k];
        tg_log_printf(log, "%salpha %g: tile Cholesky: tile (%d, %d) not positive definite under "
                      "the map (tiles fp64 %lld, fp32 %lld, fp16 %lld, fp8 %lld); raised %lld "
                      "tiles of %s or less to %s; refactoring", gs, alpha, t->tile, t->tile,
                      (long long)t->tiles[TG_FP64], (long long)t->tiles[TG_FP32],
                      (long long)t->tiles[TG_FP16], (long long)t->tiles[TG_FP8_E4M3],
                      (long long)t->raised, tg_prec_name(t->from), tg_prec_name(t->to));
    }
    char from[96];
    if (o->band >= 0) snprintf(from, sizeof from, "--band %g", o->band);
    else if (o->eps_given) snprintf(from, sizeof from, "--accuracy %g", r->eps);
    else snprintf(from, sizeof from, "eps %.3g from --pred-tol %g", r->eps, o->pred_tol);
    tg_log_printf(log, "%salpha %g: precision map (%s): tiles fp64 %lld, fp32 %lld, fp16 %lld, "
                  "fp8 %lld, diag %s; |K + alpha I|_F %.6g; weights and predictions within "
                  "(NT + 1) eps_map |K + alpha I|_F / alpha = %.3g relatively of fp64's "
                  "(eps_map %.3g)%s",
                  gs, alpha, from, (long long)r->tiles[TG_FP64], (long long)r->tiles[TG_FP32],
                  (long long)r->tiles[TG_FP16], (long long)r->tiles[TG_FP8_E4M3],
                  tg_prec_name(r->diag), r->norm, r->bound, r->eps_map,
                  r->retries ? " after the recoveries above" : "");
}

/* One (γ, α): K + αI, factor, solve, predict into column block (g, a) of d->pred, metrics.
 * --save-model keeps the factor (d->L) and the weights (d->w). */
static tg_status fit(const krr_opts *o, krr_data *d, int g, int a, const tg_matrix *Kt,
                     tg_log *log, tg_error *err) {
    double t0 = tg_now(), gamma = o->gamma[g], alpha = o->alpha[a];
    const int64_t nr = d->ntrain, nt = d->ntest;
    tg_matrix *K = NULL, *B = NULL;
    tg_chol_opts co = tg_chol_defaults();
    co.eps = o->eps;
    co.tol = o->eps_given ? 0 : o->pred_tol;
    co.lower_diag = !o->diag_given;
    co.allowed = o->allowed;
    co.diag = o->diag;
    co.band = o->band;
    co.map_out = d->map;
    tg_chol_report rep = {0};
    double *pred = d->pred + (size_t)((g * o->nalpha + a) * d->k) * (size_t)nt;
    char gs[40] = "", what[96]; /* γ in messages: gaussian only */
    if (o->kernel == TG_KERNEL_GAUSSIAN) snprintf(gs, sizeof gs, "gamma %g, ", gamma);
    snprintf(what, sizeof what, "%salpha %g: kernel", gs, alpha);
    tg_status st = kernel(o, d->C, d->gtr, d->gtr, gamma, alpha, &K, what, log, err);
    if (!st) {
        st = tg_krr_factor(K, d->C, d->gtr, gamma, alpha, &co, &rep, err);
        if (!st || st == TG_ERR_NUMERIC) log_factor(o, gs, alpha, &rep, log); /* a map was made */
    }
    double t2 = tg_now();
    /* the solve in the factor's diagonal precision (a recovery may have raised it) */
    if (!st && !(st = tg_matrix_create(&B, nr, d->k, (int)o->nb, d->k, TG_GENERAL, rep.diag, 0, 0, err)) &&
        !(st = tg_matrix_from_dense(B, d->y, nr, err)))
        st = tg_chol_solve(K, B, err);
    double t3 = tg_now();
    if (!st) st = tg_krr_predict(Kt, B, pred, nt, err);
    if (!st && o->save_model && !(st = keep_weights(d, B, err))) {
        d->L = K; /* one (γ, α) when saving: this is the factor */
        d->ldiag = rep.diag;
        K = NULL;
    }
    tg_matrix_destroy(B);
    tg_matrix_destroy(K);
    if (st) { /* name the pair; the Cholesky's message names the tile and suggests a larger α */
        tg_error e = *err;
        return tg_error_set(err, st, "%salpha %g: %s", gs, alpha, e.msg);
    }
    double t4 = tg_now(), n3 = (double)nr * nr * nr / 3;
    char retry[64] = "";
    if (rep.retries)
        snprintf(retry, sizeof retry, "; %d recover%s %.3f s", rep.retries,
                 rep.retries > 1 ? "ies" : "y", rep.retry_seconds);
    tg_log_printf(log, "%salpha %g: precision map %.3f s; factor %.3f s, %.3f TFLOP/s (N^3/3)%s; "
                  "solve %.3f s; predict %.3f s",
                  gs, alpha, rep.map_seconds, rep.factor_seconds,
                  n3 * 1e-12 / (rep.factor_seconds > 0 ? rep.factor_seconds : 1e-9), retry,
                  t3 - t2, t4 - t3);
    return pair_metrics(o, d, g, a, t4 - t0, log, err);
}

/* --load-model: the saved weights, or with --pheno the new phenotypes solved with the saved
 * factor (no training kernel, no factorisation); predictions of the test cohort, metrics. */
static tg_status predict_saved(const krr_opts *o, krr_data *d, const tg_matrix *Kt,
                               tg_log *log, tg_error *err) {
    double t0 = tg_now(), t1 = t0;
    tg_matrix *B = NULL;
    tg_status st = tg_matrix_create(&B, d->ntrain, d->k, (int)o->nb, d->k, TG_GENERAL, o->diag,
                                    0, 0, err);
    if (!st) st = tg_matrix_from_dense(B, o->pheno ? d->y : d->w, d->ntrain, err);
    if (!st && o->pheno && !(st = tg_chol_solve(d->L, B, err))) {
        t1 = tg_now();
        tg_log_printf(log, "solved %d phenotype%s with the saved factor (no factorisation): "
                      "%.3f s", d->k, d->k > 1 ? "s" : "", t1 - t0);
        if (o->save_model) st = keep_weights(d, B, err);
    }
    if (!st) st = tg_krr_predict(Kt, B, d->pred, d->ntest, err);
    tg_matrix_destroy(B);
    if (st) return st;
    tg_log_printf(log, "predict %.3f s", tg_now() - t1);
    return pair_metrics(o, d, 0, 0, tg_now() - t0, log, err);
}

static int run(krr_opts *o, krr_data *d, tg_log *log) {
    tg_error err = {0};
    int rc;
    /* a --save-model folder that cannot take the model is an error before the work */
    tg_status st = o->save_model ? krr_model_check_dir(o->save_model, &err) : TG_OK;
    if (st || (st = load(o, d, log, &err))) return tg_cli_fail("krr", log, &err);
    /* the factorisation's CPU workers never got a task on the H100 node, and slowed it */
    tg_runtime_opts ro = o->c.rt;
    ro.cpus_help_gpus = 0;
    if ((st = tg_runtime_start(&ro, &err))) return tg_cli_fail("krr", log, &err);
    tg_cli_trace_start(&o->c);
    tg_cli_progress_on(&o->c);
    tg_cli_log_runtime(log, &ro);
    tg_cli_log_grid(log, "", "genotype panel p read");
    if (!o->nb) { /* GEMM tiles below 2048 waste a GPU; 512 keeps a CPU run's cores busy; from
                   * 32,768 samples tiles of 4096 halve the GPU's idle time between its tasks
                   * (docs/SCHEDULING.md) */
        int gpus = tg_runtime_ngpu() > 0, big = d->ntrain >= 32768;
        o->nb = gpus ? (big ? 4096 : 2048) : 512;
        tg_log_printf(log, "tile size %lld (%s)", (long long)o->nb,
                      !gpus ? "CPU only" : big ? "GPUs in use, 32,768 samples or more" : "GPUs in use");
    }
    if (!o->allowed)
        o->allowed = tg_cli_default_precisions(
            log, 1u << TG_FP32 | 1u << TG_FP16 | 1u << TG_FP8_E4M3, 1u << TG_FP32);
    int ntile = (int)((d->ntrain + o->nb - 1) / o->nb);
    tg_matrix *Kt = NULL;
    if (!(d->pred = tg_malloc((size_t)(d->ntest * d->k * o->ngamma * o->nalpha) * sizeof *d->pred, &err)) ||
        !(d->map = tg_malloc((size_t)ntile * ntile * sizeof *d->map, &err))) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    if ((st = build(o, d, log, &err)) ||
        (o->load_model && o->pheno && (st = krr_model_load_factor(o, d, log, &err))))
        goto done;
    for (int g = 0; g < o->ngamma && !st; g++) {
        if ((st = kernel(o, d->Ct, d->gte, d->gtr, o->gamma[g], 0, &Kt,
                         o->ngamma > 1 ? "test-train kernel for this gamma" : "test-train kernel",
                         log, &err)))
            break;
        for (int a = 0; a < o->nalpha && !st; a++)
            st = o->load_model ? predict_saved(o, d, Kt, log, &err)
                               : fit(o, d, g, a, Kt, log, &err);
        tg_matrix_destroy(Kt);
        Kt = NULL;
    }
    if (st || (st = tg_cli_trace_stop(&o->c, "krr", log, &err))) goto done;
    double t0 = tg_now();
    /* every rank has the predictions and the map; rank 0 writes */
    if (tg_runtime_rank() == 0 &&
        ((st = write_pred(o, d, &err)) || (st = write_stats(o, d, &err)) ||
         (o->map_path && (st = write_map(o->map_path, o->png, d->map, ntile, &err)))))
        goto done;
    tg_log_printf(log, "wrote %s.pred.tsv, %s.krr.tsv%s%s (%.3f s)", o->c.out, o->c.out,
                  o->map_path ? ", " : "", o->map_path ? o->map_path : "", tg_now() - t0);
    if (o->save_model) st = krr_model_save(o, d, log, &err);
    if (!st) tg_cli_log_traffic(log);
done:
    tg_cli_progress_off();
    /* the error first: with several ranks it ends them all, where stopping would wait for them;
     * except numerical failures (not SPD, predictions not finite), which every rank reaches
     * alike: the Cholesky's info is summed over the ranks, the predictions gathered on all */
    rc = !st ? 0 : st == TG_ERR_NUMERIC ? tg_cli_fail_alike("krr", log, &err)
                                        : tg_cli_fail("krr", log, &err);
    tg_matrix_destroy(d->L);
    tg_matrix_destroy(d->Ct);
    tg_matrix_destroy(d->C);
    tg_kgeno_free(d->gte);
    tg_kgeno_free(d->gtr);
    d->L = d->C = d->Ct = NULL;
    d->gtr = d->gte = NULL;
    tg_runtime_stop();
    return rc;
}

int tg_cmd_krr(int argc, char **argv) {
    krr_opts o;
    krr_data d = {0};
    tg_error err = {0};
    tg_log *log = NULL;
    int st = parse_options(argc, argv, &o, &err), rc;
    if (st < 0) {
        rc = 0;
    } else if (st) {
        rc = tg_cli_fail_options("krr", &err);
    } else if ((st = tg_cli_check_outputs(&o.c, &err)) ||
               (st = tg_log_open(&log, o.c.out, argc, argv, &err))) {
        rc = tg_cli_fail("krr", NULL, &err);
    } else {
        tg_log_set_quiet(log, o.c.quiet);
        char allowed[64] = "by the workers"; /* a loaded model's: krr_model_read logs them */
        if (o.allowed) tg_cli_precision_names(o.allowed, allowed, sizeof allowed);
        if (!o.load_model)
            tg_log_file_only(log, "options: kernel %s, %s %g, precisions %s, diag %s, "
                             "band %g, tile %lld (0: by the workers)", tg_kernel_name(o.kernel),
                             o.eps_given ? "accuracy" : "pred-tol",
                             o.eps_given ? o.eps : o.pred_tol, allowed, tg_prec_name(o.diag),
                             o.band, (long long)o.nb);
        rc = run(&o, &d, log);
    }
    free(o.gamma);
    free(o.alpha);
    free(d.tscale);
    free(d.tprec);
    for (int c = 0; d.mnames && c < d.mk; c++) free(d.mnames[c]);
    free(d.mnames);
    free(d.train_given);
    free(d.freq);
    free(d.w);
    free(d.stats);
    free(d.map);
    free(d.pred);
    free(d.xte);
    free(d.xtr);
    free(d.ytest);
    free(d.mean);
    free(d.y);
    free(d.train);
    free(d.rows_test);
    free(d.names);
    free(d.tccols);
    free(d.tcols);
    free(d.ccols);
    free(d.pcols);
    tg_pheno_free(&d.tcov);
    tg_pheno_free(&d.cov);
    tg_pheno_free(&d.tph);
    tg_pheno_free(&d.ph);
    tg_bed_close(&d.test);
    tg_bed_close(&d.bed);
    tg_log_close(log);
    return rc;
}
