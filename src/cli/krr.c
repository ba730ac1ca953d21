/* tilegwas krr: kernel ridge regression of one or more phenotypes (the KRR paper's Build,
 * Associate and Predict phases): the options and their checks. The workflow is the library's
 * (tg_krr_fit, tg_krr_predict, the model folder: src/algo/krr.c, krr_model.c); reading the
 * inputs, the calls and the outputs are in src/cli/krr_run.c.
 *
 * --save-model DIR keeps a fit (one γ and α) in a folder; --load-model DIR then predicts new
 * cohorts from the saved weights, or solves new phenotypes of the same training samples with
 * the saved factor, with no training kernel and no factorisation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/krr.h"

static const char *help =
    "usage: tilegwas krr --bfile PREFIX [--pheno FILE] --kernel K [--gamma G] --alpha A\n"
    "                    (or --pfile PREFIX, --vcf FILE, --bcf FILE instead of --bfile)\n"
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
    "  --pheno FILE         phenotypes: FID IID then columns (header optional; -9/NA missing;\n"
    "                       default: the .fam's column 6)\n"
    "  --pheno-name A,B     use these columns (default: all)\n"
    "  --pheno-col-nums L   use the file's columns L, counted from FID as 1 (e.g. 3,5-7)\n"
    "  --covar FILE         covariates as fixed effects (plink2's --covar): C = [1, covariates]\n"
    "                       over the training samples, alpha = (C'C)^-1 C'y, the kernel fits\n"
    "                       y - C alpha, predictions add C_test alpha (PREFIX.alpha.tsv). As\n"
    "                       rr: a non-numeric column is categorical, an indicator per level\n"
    "                       but the first in natural order; constant and collinear columns\n"
    "                       dropped with a warning; samples missing a covariate left out\n"
    "  --covar-name A,B     use these columns of --covar (default: all)\n"
    "  --covar-col-nums L   use --covar's columns L, counted from FID as 1 (plink2's)\n"
    "  --covar-kernel       gaussian kernel: the --covar columns are confounders instead,\n"
    "                       standardised over the training samples (mean 0, variance 1), their\n"
    "                       squared distance added to the genotype distance; a missing value\n"
    "                       is an error\n"
    "  --kernel K           gaussian exp(-G |x_i - x_j|^2), ibs (alleles shared / 2 N_SNP)\n"
    "                       or linear (the GRM of VanRaden) (default gaussian)\n"
    "  --gamma G[,G2..]     gaussian width(s), > 0 (required for gaussian; a first guess is\n"
    "                       1 / the median squared distance, about 1 / (N_SNP 4 p (1 - p)))\n"
    "  --alpha A[,A2..]     ridge parameter(s), >= 0 (required)\n"
    "  --test-bfile T       test cohort (its variants matched to the training ones by\n"
    "                       chromosome, position and ID, same alleles)\n"
    "  --test-pheno FILE    phenotypes of the test cohort, for MSPE and r\n"
    "  --test-covar FILE    covariates of the test cohort (with --covar and --test-bfile)\n"
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
    "  --build-precision B  how each K + alpha I is built: diag (whole in the --diag\n"
    "                       precision, then lowered by the map; a grid keeps its dot\n"
    "                       products), map (each tile directly in its map precision, after a\n"
    "                       pass that computes the map's statistics without keeping K: one\n"
    "                       more pass of dot products per gamma and alpha, and with fp16\n"
    "                       tiles a quarter of diag's memory), auto (default: map when diag's\n"
    "                       K would take over 3/4 of the GPUs' memory, or without GPUs of the\n"
    "                       available memory)\n"
    "  --tile NB            tile size (default with GPUs 2048, 4096 from 32,768 training\n"
    "                       samples; CPU only 512); at least 16, and at most 1024 tiles a side\n"
    "  --precision-map F    write the precision map of the last factorisation: F.tsv (tile\n"
    "                       row, tile column, precision) or F.png (heat map, the paper's\n"
    "                       Fig. 4: fp64 dark red, fp32 light red, fp16 light blue, fp8\n"
    "                       dark blue, upper triangle white; axes in tiles and samples)\n"
    "  --save-model DIR     save the fit (one gamma and one alpha; not with --covar, whose\n"
    "                       effects and levels the model files do not hold yet) in folder DIR:\n"
    "                       written into a new folder beside it that then takes its place whole\n"
    "                       (an existing DIR must hold a model's files only). Files: model.tsv\n"
    "                       (format, options, training fileset's identity, every file's XXH64\n"
    "                       checksum), train.tsv, snps.tsv (training A1 frequencies), pheno.tsv\n"
    "                       (means), weights.tsv, factor.bin (the Cholesky factor in its\n"
    "                       precisions)\n"
    "  --load-model DIR     predict --test-bfile T with the model saved in DIR instead of a\n"
    "                       fit (no --bfile, --kernel, --gamma, --alpha, --tile, --accuracy,\n"
    "                       --precisions, --diag, --band, --build-precision, --covar,\n"
    "                       --test-covar, --test-frac, --seed, --precision-map: the model\n"
    "                       fixes them). With --pheno FILE:\n"
    "                       new phenotypes, observed for every training sample of the model,\n"
    "                       solved with the saved factor (no factorisation); --save-model then\n"
    "                       saves them as a new model. The training fileset must be unchanged\n"
    "                       (.bed size and time, .bim and .fam content), every file's checksum\n"
    "                       right (factor.bin's when it is read: with --pheno)\n"
    "                       (--save-model and --load-model run on one MPI rank)\n"
    "  --help               this text\n" TG_CLI_GRID_HELP TG_CLI_INPUT_HELP TG_CLI_COMMON_HELP
    "\nUnder mpiexec -n R every rank runs the same command: the tiles of the kernels, the\n"
    "factor and the solve are spread over the --grid, each rank reads the genotypes of its\n"
    "panels only, and rank 0 writes the outputs.\n"
    "On several GPUs each tile is built, converted and updated on its home GPU (block-cyclic\n"
    "over them); --ngpu N uses N.\n";


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

/* The options of a fit that name covariates, and --gamma, fit together. */
static tg_status check_covar(const krr_opts *o, tg_error *err) {
    if (o->kernel != TG_KERNEL_GAUSSIAN && (o->ngamma || o->covar_kernel))
        return tg_error_set(err, TG_ERR_ARG, "--%s applies to the gaussian kernel only, not %s",
                            o->ngamma ? "gamma" : "covar-kernel", tg_kernel_name(o->kernel));
    if (o->covar_kernel && !o->covar)
        return tg_error_set(err, TG_ERR_ARG, "--covar-kernel needs --covar FILE");
    if (o->save_model && o->covar)
        return tg_error_set(err, TG_ERR_ARG, "--save-model: a model with --covar cannot be "
                            "saved (covariates' effects, levels and confounders are not part "
                            "of the model files yet)");
    return tg_cli_covar_check(o->covar, o->covar_names, o->covar_col_nums, o->test_bfile,
                              o->test_covar, err);
}

static const char *const build_names[] = {"auto", "diag", "map"}; /* tg_krr_build */

static tg_status parse_build(const char *v, tg_krr_build *b, tg_error *err) {
    for (int i = 0; i < (int)(sizeof build_names / sizeof *build_names); i++)
        if (!strcmp(v, build_names[i])) {
            *b = (tg_krr_build)i;
            return TG_OK;
        }
    return tg_error_set(err, TG_ERR_ARG, "--build-precision %s: expected auto, diag or map", v);
}

/* Returns TG_OK, an error, or -1 after printing the help. */
static int parse_options(int argc, char **argv, krr_opts *o, tg_error *err) {
    enum {
        O_PHENO = 1, O_PNAME, O_PCOLS, O_COVAR, O_CNAME, O_KERNEL, O_GAMMA, O_ALPHA, O_TEST,
        O_TPHENO, O_TCOVAR, O_FRAC, O_SEED, O_ACC, O_PTOL, O_PREC, O_DIAG, O_BAND, O_TILE, O_MAP, O_SAVE,
        O_LOAD, O_GRID, O_CCOLS, O_CKERNEL, O_BUILD, O_HELP
    };
    /* options of a fit, which a loaded model fixes */
    const unsigned fit_only = 1u << O_COVAR | 1u << O_CNAME | 1u << O_CCOLS | 1u << O_CKERNEL |
                              1u << O_KERNEL |
                              1u << O_GAMMA | 1u << O_ALPHA | 1u << O_TCOVAR | 1u << O_FRAC |
                              1u << O_SEED | 1u << O_ACC | 1u << O_PTOL | 1u << O_PREC | 1u << O_DIAG |
                              1u << O_BAND | 1u << O_TILE | 1u << O_MAP | 1u << O_BUILD;
    static const struct option opts[] = {
        {"pheno", required_argument, 0, O_PHENO},
        {"pheno-name", required_argument, 0, O_PNAME}, {"pheno-col-nums", required_argument, 0, O_PCOLS},
        {"covar", required_argument, 0, O_COVAR},
        {"covar-name", required_argument, 0, O_CNAME}, {"kernel", required_argument, 0, O_KERNEL},
        {"covar-col-nums", required_argument, 0, O_CCOLS},
        {"covar-kernel", no_argument, 0, O_CKERNEL},
        {"gamma", required_argument, 0, O_GAMMA}, {"alpha", required_argument, 0, O_ALPHA},
        {"test-bfile", required_argument, 0, O_TEST},
        {"test-pheno", required_argument, 0, O_TPHENO}, {"test-covar", required_argument, 0, O_TCOVAR},
        {"test-frac", required_argument, 0, O_FRAC}, {"seed", required_argument, 0, O_SEED},
        {"accuracy", required_argument, 0, O_ACC}, {"pred-tol", required_argument, 0, O_PTOL},
        {"precisions", required_argument, 0, O_PREC},
        {"diag", required_argument, 0, O_DIAG}, {"band", required_argument, 0, O_BAND},
        {"tile", required_argument, 0, O_TILE}, {"build-precision", required_argument, 0, O_BUILD},
        {"precision-map", required_argument, 0, O_MAP},
        {"save-model", required_argument, 0, O_SAVE},
        {"load-model", required_argument, 0, O_LOAD}, {"grid", required_argument, 0, O_GRID},
        {"help", no_argument, 0, O_HELP}, TG_CLI_INPUT_OPTIONS, TG_CLI_COMMON_OPTIONS,
        {0, 0, 0, 0}};
    *o = (krr_opts){.kernel = TG_KERNEL_GAUSSIAN, .test_frac = NAN, .eps = 0, .band = -1,
                    .pred_tol = 1e-3,
                    .seed = 1, .nb = 0, .allowed = 0 /* by the workers: run */,
                    .diag = TG_FP64};
    tg_cli_common_init(&o->c);
    int c, idx = 0;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (c = getopt_long(argc, argv, "", opts, &idx)) != -1) {
        /* the training genotypes (the input options) are a fit's too */
        if (((c < O_HELP && fit_only >> c & 1u) || (c >= 1100 && c < 1200)) && !o->fit_opt)
            o->fit_opt = opts[idx].name;
        switch (c) {
        case O_PHENO: o->pheno = optarg; break;
        case O_PNAME: o->pheno_names = optarg; break;
        case O_PCOLS: o->pheno_col_nums = optarg; break;
        case O_COVAR: o->covar = optarg; break;
        case O_CNAME: o->covar_names = optarg; break;
        case O_CCOLS: o->covar_col_nums = optarg; break;
        case O_CKERNEL: o->covar_kernel = 1; break;
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
        case O_BUILD: st = parse_build(optarg, &o->build, err); break;
        case O_TILE:
            if (!(st = tg_cli_int("tile", optarg, 0, 1 << 16, &o->nb, err)))
                st = tg_tile_check("--tile", 0, o->nb, err);
            break;
        case O_MAP: o->map_path = optarg; break;
        case O_SAVE: o->save_model = optarg; break;
        case O_LOAD: o->load_model = optarg; break;
        case O_GRID: st = tg_cli_grid(optarg, &o->c.rt, err); break;
        case O_HELP: fputs(help, stdout); return -1;
        case '?':
        case ':': st = tg_cli_bad_option(argv, err); break;
        default: st = tg_cli_common_option(&o->c, c, optarg, argv, err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, err);
    if (st) return st;
    if ((o->pheno_names || o->pheno_col_nums) && !o->pheno)
        return tg_error_set(err, TG_ERR_ARG, "--%s needs --pheno FILE",
                            o->pheno_names ? "pheno-name" : "pheno-col-nums");
    if (o->pheno_names && o->pheno_col_nums)
        return tg_error_set(err, TG_ERR_ARG, "--pheno-name and --pheno-col-nums: give one of them");
    /* the model's files hold whole matrices: distributing them is left for later */
    if ((o->save_model || o->load_model) && tg_runtime_nranks() > 1)
        return tg_error_set(err, TG_ERR_ARG, "--%s runs on one MPI rank only (started on %d): "
                            "fit and save, or load and predict, without mpiexec",
                            o->save_model ? "save-model" : "load-model", tg_runtime_nranks());
    if (o->load_model) { /* the rest is read from the model (tg_krr_model_load) */
        if (o->fit_opt)
            return tg_error_set(err, TG_ERR_ARG, "--%s cannot be given with --load-model: the "
                                "saved model fixes the training data, kernel, tiles and factor",
                                o->fit_opt);
        if (!o->test_bfile)
            return tg_error_set(err, TG_ERR_ARG, "--load-model needs --test-bfile T (the cohort "
                                "to predict)");
        if (o->save_model && !o->pheno)
            return tg_error_set(err, TG_ERR_ARG, "--save-model with --load-model needs --pheno "
                                "(new phenotypes to save): the loaded model is saved already");
        return TG_OK;
    }
    if ((st = tg_cli_input_check(&o->c, err))) return st;
    if (!o->nalpha) return tg_error_set(err, TG_ERR_ARG, "--alpha A is required");
    if (o->kernel == TG_KERNEL_GAUSSIAN && !o->ngamma)
        return tg_error_set(err, TG_ERR_ARG, "--gamma G is required with --kernel gaussian");
    if ((st = check_covar(o, err))) return st;
    if (!o->ngamma) { /* ibs, linear: one pass with no γ */
        if (!(o->gamma = tg_calloc(1, sizeof *o->gamma, err))) return TG_ERR_NOMEM;
        o->ngamma = 1;
    }
    if (!o->test_bfile == isnan(o->test_frac))
        return tg_error_set(err, TG_ERR_ARG, "give one of --test-bfile T and --test-frac F");
    if (!o->test_bfile && (o->test_pheno || o->test_covar))
        return tg_error_set(err, TG_ERR_ARG, "--test-pheno/--test-covar go with --test-bfile");
    if (o->save_model && (o->ngamma > 1 || o->nalpha > 1))
        return tg_error_set(err, TG_ERR_ARG, "--save-model needs one --gamma and one --alpha");
    if (o->save_model && (o->c.in.format != TG_INPUT_BED || tg_input_filters(&o->c.in)))
        return tg_error_set(err, TG_ERR_ARG, "--save-model needs the training genotypes as a "
                            "--bfile fileset without selection or QC flags: the model reopens "
                            "that .bed when it predicts (make one with plink2 --make-bed)");
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

int tg_cmd_krr(int argc, char **argv) {
    krr_opts o;
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
        char allowed[64] = "by the workers";
        if (o.allowed) tg_cli_precision_names(o.allowed, allowed, sizeof allowed);
        if (!o.load_model)
            tg_log_file_only(log, "options: kernel %s, %s %g, precisions %s, diag %s, "
                             "band %g, tile %lld (0: by the workers), build-precision %s",
                             tg_kernel_name(o.kernel), o.eps_given ? "accuracy" : "pred-tol",
                             o.eps_given ? o.eps : o.pred_tol, allowed, tg_prec_name(o.diag),
                             o.band, (long long)o.nb, build_names[o.build]);
        rc = krr_run(&o, log);
    }
    free(o.gamma);
    free(o.alpha);
    tg_log_close(log);
    return rc;
}
