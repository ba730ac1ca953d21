/* tilegwas rr: ridge regression (SNP-BLUP) of one or more phenotypes on every SNP (tg_rr). The
 * solver is chosen by --solver: `cg` (conjugate gradients over genotype matrix products, ZᵀZ
 * never formed, each phenotype on its own observed samples) or `cholesky` (ZᵀZ + λI from INT8
 * products, the mixed-precision tile Cholesky: the KRR paper's RR baseline, on the samples
 * observed for every phenotype). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/rr.h"

static const char *help =
    "usage: tilegwas rr --bfile PREFIX [--pheno FILE] --lambda L --out PREFIX [options]\n"
    "       (--pfile PREFIX, --vcf FILE or --bcf FILE instead of --bfile)\n"
    "Ridge regression of each phenotype on all SNPs with unpenalised fixed effects, the\n"
    "intercept and the --covar columns (C = [1, covariates]):\n"
    "  min over alpha, beta of sum over observed samples (y - C alpha - Z beta)^2 + L |beta|^2\n"
    "solved as (Z'MZ + L I) beta = Z'My, M = I - C(C'C)^-1 C' (Frisch-Waugh), alpha from\n"
    "y - Z beta; a sample missing a covariate is left out.\n"
    "Z: genotypes centered by 2p (p the A1 frequency over non-missing calls), missing calls\n"
    "mean-imputed (0 after centering), with --scale divided by sqrt(2p(1-p)); monomorphic and\n"
    "all-missing SNPs get beta 0. With --solver cg each phenotype uses its own non-missing\n"
    "samples; with --solver cholesky the samples with any selected phenotype missing are\n"
    "dropped (the log says how many) and p is taken over the samples kept.\n"
    "Writes PREFIX.beta.tsv (#CHROM POS ID REF ALT A1 A1_FREQ N, A1_FREQ and N the p and the\n"
    "non-missing calls over the samples fitted, then one beta column per phenotype),\n"
    "PREFIX.pred.tsv (FID IID then the in-sample fitted values C alpha + Z beta for every\n"
    "sample, or with --test-bfile the predictions of that cohort), PREFIX.cg.tsv (cg; per\n"
    "phenotype: observed samples, iterations, converged, residuals) or PREFIX.rr.tsv\n"
    "(cholesky; per phenotype: samples used, mean, lambda, solver) and PREFIX.log (options,\n"
    "the residual of every iteration or the precision map, times); with --covar\n"
    "PREFIX.alpha.tsv (the fixed effects: a line per design column, a column per phenotype).\n\n"
    "options:\n"
    "  --pheno FILE       phenotypes: FID IID then columns (header optional; -9/NA missing;\n"
    "                     default: the .fam's column 6)\n"
    "  --pheno-name A,B   use these columns (default: all)\n"
    "  --pheno-col-nums L use the file's columns L, counted from FID as 1 (plink2's; e.g. 3,5-7)\n"
    "  --test-bfile T     predict this cohort instead (its variants matched to the training\n"
    "                     ones by chromosome, position and ID, same alleles; centered and\n"
    "                     scaled with the training frequencies, missing calls imputed by the\n"
    "                     training mean)\n"
    "  --lambda L         ridge parameter (required, > 0)\n"
    "  --solver S         cg: conjugate gradients (default); cholesky: Z'Z + L I formed from\n"
    "                     INT8 products and factored by the mixed-precision tile Cholesky\n"
    "  --scale            standardise SNPs to variance 1 (default: centered only)\n"
    "  --tol T            cg: stop when |r|/|b| <= T for a phenotype (default 1e-8)\n"
    "  --max-iter N       cg: iterations at most (default 1000); a phenotype not converged by\n"
    "                     then is an error (exit 1) after the results are written and flagged\n"
    "  --tile NB          cholesky: SNPs per tile (default 1024; at least 16, and at most\n"
    "                     1024 tiles a side)\n"
    "  --accuracy EPS     cholesky: target accuracy of the adaptive precision map (default 1e-8)\n"
    "  --precisions LIST  cholesky: precisions off-diagonal tiles may take, from fp64, fp32,\n"
    "                     fp16, fp8 (default fp64,fp32,fp16 when GPUs are used, else\n"
    "                     fp64,fp32: on CPUs fp16 and fp8 tiles save memory, not time)\n"
    "  --diag P           cholesky: diagonal tiles and the solve in fp64 (default) or fp32\n"
    "  --covar FILE       covariates as fixed effects (plink2's --covar): FID IID then columns,\n"
    "                     as --pheno; a column with a non-numeric value is categorical,\n"
    "                     expanded to an indicator per level but the first in natural order\n"
    "                     (the reference), named COL=LEVEL; constant columns and columns\n"
    "                     collinear with earlier ones are dropped with a warning\n"
    "  --covar-name A,B   use these covariate columns (plink2's; default: all)\n"
    "  --covar-col-nums L use the covariate file's columns L, counted from FID as 1 (plink2's)\n"
    "  --test-covar FILE  the --test-bfile cohort's covariates (the same columns; needed with\n"
    "                     --covar and --test-bfile)\n"
    "  --help             this text\n" TG_CLI_GRID_HELP TG_CLI_INPUT_HELP TG_CLI_COMMON_HELP
    "\nThe preconditioner is Jacobi: diag(Z'Z) + L over each phenotype's samples, exact.\n";

/* Returns TG_OK, an error, or -1 after printing the help. */
static int parse_options(int argc, char **argv, rr_opts *o, tg_error *err) {
    enum {
        O_PHENO = 1, O_PNAME, O_PCOLS, O_LAMBDA, O_SOLVER, O_SCALE, O_TOL, O_MAXIT, O_TEST, O_HELP,
        O_TILE, O_ACC, O_PRECS, O_DIAG, O_GRID, O_COVAR, O_CNAME, O_CCOLS, O_TCOVAR
    };
    static const struct option opts[] = {
        {"pheno", required_argument, 0, O_PHENO},
        {"pheno-name", required_argument, 0, O_PNAME}, {"pheno-col-nums", required_argument, 0, O_PCOLS},
        {"lambda", required_argument, 0, O_LAMBDA},
        {"solver", required_argument, 0, O_SOLVER}, {"scale", no_argument, 0, O_SCALE},
        {"tol", required_argument, 0, O_TOL}, {"max-iter", required_argument, 0, O_MAXIT},
        {"test-bfile", required_argument, 0, O_TEST}, {"help", no_argument, 0, O_HELP},
        {"tile", required_argument, 0, O_TILE}, {"accuracy", required_argument, 0, O_ACC},
        {"precisions", required_argument, 0, O_PRECS}, {"diag", required_argument, 0, O_DIAG},
        {"grid", required_argument, 0, O_GRID}, {"covar", required_argument, 0, O_COVAR},
        {"covar-name", required_argument, 0, O_CNAME},
        {"covar-col-nums", required_argument, 0, O_CCOLS},
        {"test-covar", required_argument, 0, O_TCOVAR}, TG_CLI_INPUT_OPTIONS, TG_CLI_COMMON_OPTIONS,
        {0, 0, 0, 0}};
    *o = (rr_opts){.lambda = NAN, .tol = 1e-8, .max_iter = 1000, .tile = 1024, .accuracy = 1e-8,
                   .diag = TG_FP64};
    tg_cli_common_init(&o->c);
    int c;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_PHENO: o->pheno = optarg; break;
        case O_PNAME: o->pheno_names = optarg; break;
        case O_PCOLS: o->pheno_col_nums = optarg; break;
        case O_TEST: o->test_bfile = optarg; break;
        case O_COVAR: o->covar = optarg; break;
        case O_CNAME: o->covar_names = optarg; break;
        case O_CCOLS: o->covar_col_nums = optarg; break;
        case O_TCOVAR: o->test_covar = optarg; break;
        case O_LAMBDA: st = tg_cli_double("lambda", optarg, 0, INFINITY, &o->lambda, err); break;
        case O_SOLVER:
            o->cholesky = !strcmp(optarg, "cholesky");
            if (!o->cholesky && strcmp(optarg, "cg"))
                st = tg_error_set(err, TG_ERR_ARG, "--solver %s: expected cg or cholesky", optarg);
            break;
        case O_SCALE: o->scale = 1; break;
        case O_TOL: st = tg_cli_double("tol", optarg, 1e-300, 0.5, &o->tol, err); break;
        case O_MAXIT: st = tg_cli_int("max-iter", optarg, 1, 1000000, &o->max_iter, err); break;
        case O_TILE:
            if (!(st = tg_cli_int("tile", optarg, 0, 1 << 16, &o->tile, err)))
                st = tg_tile_check("--tile", 0, o->tile, err);
            break;
        case O_ACC: st = tg_cli_double("accuracy", optarg, 0, 1, &o->accuracy, err); break;
        case O_PRECS:
            o->precisions = optarg;
            st = tg_cli_precisions(optarg, &o->allowed, err);
            break;
        case O_DIAG:
            if (tg_prec_parse(optarg, &o->diag, err) || (o->diag != TG_FP64 && o->diag != TG_FP32))
                st = tg_error_set(err, TG_ERR_ARG, "--diag %s: expected fp64 or fp32", optarg);
            break;
        case O_GRID: st = tg_cli_grid(optarg, &o->c.rt, err); break;
        case O_HELP: fputs(help, stdout); return -1;
        case '?':
        case ':': st = tg_cli_bad_option(argv, err); break;
        default: st = tg_cli_common_option(&o->c, c, optarg, argv, err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, err);
    if (st) return st;
    if ((st = tg_cli_input_check(&o->c, err))) return st;
    if ((o->pheno_names || o->pheno_col_nums) && !o->pheno)
        return tg_error_set(err, TG_ERR_ARG, "--%s needs --pheno FILE",
                            o->pheno_names ? "pheno-name" : "pheno-col-nums");
    if (o->pheno_names && o->pheno_col_nums)
        return tg_error_set(err, TG_ERR_ARG, "--pheno-name and --pheno-col-nums: give one of them");
    if ((st = tg_cli_covar_check(o->covar, o->covar_names, o->covar_col_nums, o->test_bfile,
                                 o->test_covar, err)))
        return st;
    if (isnan(o->lambda)) return tg_error_set(err, TG_ERR_ARG, "--lambda L is required");
    if (!(o->lambda > 0))
        return tg_error_set(err, TG_ERR_ARG, "--lambda %g: must be > 0", o->lambda);
    if (o->c.rt.grid_p && !o->cholesky)
        return tg_error_set(err, TG_ERR_ARG, "--grid goes with --solver cholesky (cg splits the "
                            "samples over the ranks, it has no tiles)");
    return TG_OK;
}

/* Fits, writes (rank 0: it holds every prediction; every rank has the same β) and logs. A cg
 * phenotype not converged is TG_ERR_NUMERIC after the results are written. */
static tg_status fit(const rr_opts *o, rr_data *d, tg_rr_result *r, tg_log *log, tg_error *err) {
    tg_rr_opts ro = tg_rr_defaults();
    ro.solver = o->cholesky ? TG_RR_CHOLESKY : TG_RR_CG;
    ro.lambda = o->lambda;
    ro.scale = o->scale;
    progress_ctx pc = {log, d->names, d->line, d->line_len};
    ro.cg.tol = o->tol;
    ro.cg.max_iter = (int)o->max_iter;
    ro.cg.progress = rr_on_progress;
    ro.cg.ctx = &pc;
    ro.chol.nb = (int)o->tile;
    ro.chol.chol.eps = o->accuracy;
    ro.chol.chol.diag = o->diag;
    ro.covar = d->cv.values;
    ro.ldc = d->bed.n_samples;
    ro.ncovar = d->cv.n_cols;
    ro.test_covar = d->tcv.values;
    ro.ldt = d->test.n_samples;
    if (o->cholesky) {
        tg_cli_log_grid(log, " of Z'Z", "SNP panel p built");
        ro.chol.chol.allowed =
            o->allowed ? o->allowed
                       : tg_cli_default_precisions(log, 1u << TG_FP64 | 1u << TG_FP32 |
                                                            1u << TG_FP16,
                                                   1u << TG_FP64 | 1u << TG_FP32);
    }
    const tg_bed *cohort = o->test_bfile ? &d->test : &d->bed;
    tg_status st = tg_rr(&d->bed, d->k, d->y, d->bed.n_samples, o->test_bfile ? &d->test : NULL,
                         &ro, r, err);
    if (o->cholesky && r->n_used < d->bed.n_samples)
        tg_log_printf(log, "warning: %lld sample(s) with a selected phenotype%s missing dropped "
                      "(--solver cholesky uses the samples observed for every phenotype%s); "
                      "%lld kept", (long long)(d->bed.n_samples - r->n_used),
                      o->covar ? " or a covariate" : "", o->covar ? " and covariate" : "",
                      (long long)r->n_used);
    if (st && st != TG_ERR_NUMERIC) return st;
    rr_log_fit(o, d, r, log);
    double t0 = tg_now();
    tg_status wst;
    if (tg_runtime_rank() == 0 &&
        ((wst = tg_cli_write_values(o->c.out, ".beta.tsv", &d->bed, r->snps, d->k, d->names,
                                    r->beta, err)) ||
         (wst = tg_cli_write_values(o->c.out, ".pred.tsv", cohort, NULL, d->k, d->names, r->pred,
                                    err)) ||
         (wst = rr_write_summary(o, d->k, d->names, r, err)) ||
         (o->covar && (wst = tg_cli_write_alpha(o->c.out, d->k, (const char *const *)d->names,
                                                &d->cv, r->alpha, err)))))
        return wst;
    const char *z = o->c.zst ? ".zst" : "";
    tg_log_printf(log, "wrote %s.beta.tsv%s, %s.pred.tsv%s (%s), %s.%s.tsv%s%s%s%s%s (%.3f s)",
                  o->c.out, z, o->c.out, z, o->test_bfile ? o->test_bfile : "in-sample", o->c.out,
                  o->cholesky ? "rr" : "cg", z, o->covar ? ", " : "", o->covar ? o->c.out : "",
                  o->covar ? ".alpha.tsv" : "", o->covar ? z : "",
                  r->seconds_predict + tg_now() - t0);
    tg_cli_log_traffic(log);
    for (int c = 0; c < d->k && st; c++) /* TG_ERR_NUMERIC: name the first not converged */
        if (!r->pheno[c].converged)
            return tg_error_set(err, st,
                                "%s did not reach relative residual %g in %lld iterations (last "
                                "%.3g); results written, flagged in %s.cg.tsv",
                                d->names[c], o->tol, (long long)o->max_iter, r->pheno[c].relres,
                                o->c.out);
    return st;
}

/* The run's peak host memory, for tg_cli_memory: the 5codes genotypes of both cohorts (0.4
 * bytes a call, a rank holding its samples), with --solver cholesky the lower tiles of the SNP
 * matrix ZᵀZ + λI at the diagonal's precision (fp64 at most; shared among the ranks), and the
 * vectors of CG or the solve (samples and SNPs by phenotypes). */
static tg_status check_memory(const rr_opts *o, const rr_data *d, tg_log *log, tg_error *err) {
    const double n = (double)d->bed.n_samples, nt = (double)d->test.n_samples,
                 m = (double)d->bed.n_snps, k = d->k, ranks = tg_runtime_nranks(),
                 gb = 0.4 * (n + nt) * m / ranks,
                 ab = o->cholesky ? (o->diag == TG_FP32 ? 4 : 8) * m * (m + 1) / 2 / ranks : 0,
                 vb = 8 * k * (4 * (n + m) + nt), mib = 1024.0 * 1024.0;
    char terms[256];
    int len = snprintf(terms, sizeof terms, "genotypes %.0f MiB, ", gb / mib);
    if (o->cholesky) len += snprintf(terms + len, sizeof terms - (size_t)len, "SNP matrix %.0f "
                                     "MiB, ", ab / mib);
    snprintf(terms + len, sizeof terms - (size_t)len, "vectors %.0f MiB", vb / mib);
    tg_status st = tg_cli_memory(&o->c, log, gb + ab + vb, terms, err);
    if (st) return st;
    double all, task;
    if (o->cholesky) { /* the tiles, and a tile of ZᵀZ from two INT8 panels of SNPs */
        const double nb = (double)o->tile, upd = 3 * 8 * nb * nb,
                     bld = 2 * nb * n + 8 * nb * nb;
        all = ab / (tg_runtime_ngpu() > 0 ? tg_runtime_ngpu() : 1) + n * nb;
        task = upd > bld ? upd : bld;
        snprintf(terms, sizeof terms, "SNP matrix %.0f MiB", all / mib);
    } else {
        tg_geno_device_bytes((int64_t)(n / ranks), (int64_t)m, (int64_t)k, 8, &all, &task);
        snprintf(terms, sizeof terms, "the genotype products' blocks and vectors");
    }
    return tg_cli_gpu_memory(log, all, task, terms, o->cholesky ? "use a smaller --tile" :
                             "use fewer SNPs or samples per run, or more MPI ranks", err);
}

static int run(const rr_opts *o, rr_data *d, tg_log *log) {
    tg_error err = {0};
    tg_rr_result r = {0};
    tg_status st = rr_load(o, d, log, &err);
    if (st) return tg_cli_fail("rr", log, &err);
    const char *files[] = {o->pheno, o->covar, o->test_covar};
    int rc = tg_cli_ranks_agree("rr", log, &o->c, &d->bed, o->test_bfile,
                                o->test_bfile ? &d->test : NULL, files, 3);
    if (rc) return rc;
    /* the tile Cholesky's CPU workers never got a task on the H100 node, and slowed it; the
     * genotype products of CG share the work */
    tg_runtime_opts ro = o->c.rt;
    ro.cpus_help_gpus = !o->cholesky;
    if ((st = tg_runtime_start(&ro, &err))) return tg_cli_fail("rr", log, &err);
    tg_cli_trace_start(&o->c);
    tg_cli_progress_on(&o->c);
    tg_cli_log_runtime(log, &ro);
    /* after the runtime's start, whose threads and buffers take address space (ulimit -v) */
    if (!(st = check_memory(o, d, log, &err))) st = fit(o, d, &r, log, &err);
    if (!st) st = tg_cli_trace_stop(&o->c, "rr", log, &err);
    tg_cli_progress_off();
    /* the error first: with several ranks it ends them all, where stopping would wait for them;
     * except numerical failures, which every rank reaches alike: CG's (not converged,
     * breakdown) at the same iteration, its sums having the same bits everywhere, and the tile
     * Cholesky's (not SPD), whose info is summed over the ranks */
    if (st == TG_ERR_NUMERIC)
        rc = tg_cli_fail_alike("rr", log, &err);
    else if (st)
        rc = tg_cli_fail("rr", log, &err);
    tg_rr_result_free(&r);
    tg_runtime_stop();
    return rc;
}

int tg_cmd_rr(int argc, char **argv) {
    rr_opts o;
    rr_data d = {0};
    tg_error err = {0};
    tg_log *log = NULL;
    int st = parse_options(argc, argv, &o, &err);
    if (st < 0) return 0;
    if (st) return tg_cli_fail_options("rr", &err);
    if ((st = tg_cli_check_outputs(&o.c, &err))) return tg_cli_fail("rr", NULL, &err);
    if ((st = tg_log_open(&log, o.c.out, argc, argv, &err))) return tg_cli_fail("rr", NULL, &err);
    tg_log_set_quiet(log, o.c.quiet);
    if (o.cholesky)
        tg_log_file_only(log, "options: solver cholesky, lambda %.17g, tile %lld, accuracy %g, "
                         "precisions %s, diag %s, %s", o.lambda, (long long)o.tile, o.accuracy,
                         o.precisions ? o.precisions : "by the workers", tg_prec_name(o.diag),
                         o.scale ? "scaled SNPs" : "centered SNPs");
    else
        tg_log_file_only(log, "options: solver cg, lambda %.17g, tol %g, max-iter %lld, %s",
                         o.lambda, o.tol, (long long)o.max_iter,
                         o.scale ? "scaled SNPs" : "centered SNPs");
    int rc = run(&o, &d, log);
    free(d.line);
    free(d.y);
    free(d.names);
    free(d.cols);
    tg_pheno_free(&d.ph);
    tg_covar_free(&d.cv);
    tg_covar_free(&d.tcv);
    tg_bed_close(&d.test);
    tg_bed_close(&d.bed);
    tg_log_close(log);
    return rc;
}
