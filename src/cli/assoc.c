/* tilegwas assoc: association tests of quantitative and case/control phenotypes on every SNP
 * (tg_assoc), REGENIE's two steps: a whole-genome ridge with leave-one-chromosome-out
 * predictions, then a score test (linear or logistic) per SNP and phenotype. The inputs are
 * read as rr reads them (rr_load). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/rr.h"

static const char *help =
    "usage: tilegwas assoc --bfile PREFIX [--pheno FILE] --out PREFIX [options]\n"
    "       (--pfile PREFIX, --vcf FILE or --bcf FILE instead of --bfile)\n"
    "Association tests of quantitative and case/control phenotypes on every SNP, in\n"
    "REGENIE's two steps.\n"
    "Step 1: a ridge regression (SNP-BLUP) of each phenotype on all SNPs, scaled to variance\n"
    "1, with the intercept and the --covar columns as unpenalised fixed effects (conjugate\n"
    "gradients, as rr --scale), lambda = m(1-h2)/h2 (m the polymorphic SNPs), fitted in\n"
    "--cv K folds (sample i in fold i mod K, left out of its fold's fit); per phenotype the\n"
    "h2 of --h2 with the least held-out squared error, and each sample's prediction from its\n"
    "fold's fit (out of sample, as REGENIE's level 1). The prediction for chromosome c leaves\n"
    "c's own SNPs out (LOCO, no refit). A case/control phenotype is fitted as its 0/1 values.\n"
    "Step 2: for SNP j on chromosome c and phenotype t, the score test of the residual\n"
    "r = M(y - LOCO_c) (M: the projection off [1, covariates] on the phenotype's samples) on\n"
    "g = M x_j (x_j the A1 counts, missing calls imputed by the mean over the fileset):\n"
    "  BETA = g'r / g'g, SE = sigma / sqrt(g'g), CHISQ = (g'r)^2 / (sigma^2 g'g),\n"
    "  sigma^2 = r'r / (n - p), p the fixed effects; LOG10P = -log10 P(chi2_1 > CHISQ).\n"
    "With --ignore-pred (no step 1) these are plink2 --glm omit-ref's linear tests: the\n"
    "same BETA, and T^2 = (n-p-1) CHISQ / (n-p-CHISQ) between CHISQ and its T_STAT.\n"
    "Case/control phenotypes (plink's 1 = control, 2 = case, 0/-9/NA missing, as plink2\n"
    "reads every column of values among 0, 1, 2; or 0 = control, 1 = case when only 0 and 1\n"
    "occur, as plink2 --1 or REGENIE --bt): a logistic score test. Per chromosome c the null\n"
    "model logit P(case) = o_c + [1, covariates] a (IRLS), the offset o_c = LOCO_c /\n"
    "(ybar (1 - ybar)) (ybar the case fraction: the linear prediction on the logit scale),\n"
    "then with mu its fitted probabilities and W = diag(mu (1 - mu)):\n"
    "  U = x_j'(y - mu), V = x_j'W x_j - (C'W x_j)' (C'WC)^-1 (C'W x_j), C = [1, covariates],\n"
    "  BETA = U / V (log odds ratio), SE = 1 / sqrt(V), CHISQ = U^2 / V.\n"
    "No Firth or saddle-point correction: rare variants with few carriers among the cases\n"
    "get approximate p-values. A null model that separates cases from controls is an error.\n"
    "Writes per phenotype PHENO: PREFIX.PHENO.assoc.tsv (#CHROM POS ID REF ALT A1 A1_FREQ N\n"
    "BETA SE CHISQ LOG10P P; A1_FREQ and N over the phenotype's samples with a call; NA for\n"
    "a SNP without a test: monomorphic, or constant once the covariates are projected out;\n"
    "P is 10^-LOG10P, at least 2.2e-308 as plink2's --output-min-p default),\n"
    "PREFIX.PHENO.manhattan.png and PREFIX.PHENO.qq.png; PREFIX.loco.tsv (FID IID then a\n"
    "column PHENO.CHR per phenotype and chromosome: the LOCO prediction, without the fixed\n"
    "effects; not with --ignore-pred) and PREFIX.log (h2, lambda and the cross-validation\n"
    "errors per phenotype, the coding, cases and controls of a case/control one, lambda_GC =\n"
    "median CHISQ / 0.4549364, times).\n\n"
    "options:\n"
    "  --pheno FILE       phenotypes: FID IID then columns (header optional; -9/NA missing;\n"
    "                     default: the .fam's column 6)\n"
    "  --pheno-name A,B   use these columns (default: all)\n"
    "  --pheno-col-nums L use the file's columns L, counted from FID as 1 (plink2's; e.g. 3,5-7)\n"
    "  --covar FILE       covariates as fixed effects (plink2's --covar; as rr --covar:\n"
    "                     categorical columns expanded, constant and collinear ones dropped)\n"
    "  --covar-name A,B   use these covariate columns (plink2's; default: all)\n"
    "  --covar-col-nums L use the covariate file's columns L (plink2's)\n"
    "  --h2 LIST          step 1's heritabilities, in (0, 1) (default\n"
    "                     0.01,0.1,0.25,0.5,0.75,0.9; one value: no choice to make)\n"
    "  --cv K             step 1's folds (default 5, at least 2)\n"
    "  --ignore-pred      no step 1: the LOCO prediction is 0 (REGENIE's flag)\n"
    "  --tol T            step 1: stop a CG column at relative residual T (default 1e-6)\n"
    "  --max-iter N       step 1: CG iterations at most (default 1000); more is an error\n"
    "  --kinship FILE     known relatives: plink2 --make-king-table's .kin0 (#FID1 IID1\n"
    "                     FID2 IID2 ... KINSHIP, or #IID1 IID2 ... KINSHIP; .gz/.zst read).\n"
    "                     Pairs with KINSHIP >= 0.025 (fastGWA's GRM cutoff 0.05) are used,\n"
    "                     relatedness K = 2 KINSHIP; pairs naming a sample not analysed are\n"
    "                     skipped and counted in the log. Every test of phenotype t on\n"
    "                     chromosome c takes the variance given its residual r (y - mu for\n"
    "                     a case/control one): times c_tc = 1 + sum_{i!=i'} K r_i r_i' / r'r,\n"
    "                     so SE x sqrt(c), CHISQ / c, BETA unchanged; the log gives per\n"
    "                     phenotype the range of c over the chromosomes. With step 1 it\n"
    "                     implies --loco-refit, which the correction needs.\n"
    "  --grm-sparse P     known relatives as GCTA's sparse GRM (fastGWA's): P.grm.id (FID\n"
    "                     IID) and P.grm.sp (i j value, 0-based rows of .grm.id; the\n"
    "                     diagonal ignored); K = the value, pairs >= 0.05 used; as\n"
    "                     --kinship otherwise\n"
    "  --loco-refit       step 1 solved again without each chromosome for its LOCO\n"
    "                     prediction (phenotypes x folds x chromosomes more CG columns, at\n"
    "                     the chosen h2), where by default LOCO drops the chromosome's part\n"
    "                     of the whole-genome fit: among relatives that part holds some of\n"
    "                     what they share, and the tests of its SNPs are inflated (lambda_GC\n"
    "                     1.1-1.4 in sibships, 0.7-0.8 refitted, about 1 with --kinship)\n"
    "  --help             this text\n" TG_CLI_INPUT_HELP TG_CLI_COMMON_HELP
    "\nStep 1 solves phenotypes x h2 x K CG columns at once; step 2 is, per phenotype, one\n"
    "product Z[beta per fold and chromosome] and one Z'[residual per chromosome] (and for a\n"
    "case/control one Z'[W C per chromosome] and one weighted pass over the genotypes).\n"
    "One MPI rank.\n";

/* --kinship: the pairs kept, KINSHIP at least this (GRM 0.05, fastGWA's sparse GRM cutoff) */
#define KINSHIP_MIN 0.025

typedef struct {
    rr_opts rr; /* the inputs' options, read by rr_load */
    const char *kinship, *grm_sparse;
    int loco_refit;
    double h2[16];
    int nh2;
    int64_t folds;
} assoc_opts;

/* --h2 LIST: comma-separated values in (0, 1). */
static tg_status parse_h2(const char *s, assoc_opts *o, tg_error *err) {
    o->nh2 = 0;
    for (const char *p = s;; p++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || (*end && *end != ',') || !(v > 0 && v < 1))
            return tg_error_set(err, TG_ERR_ARG, "--h2 %s: expected values in (0, 1) separated "
                                "by commas", s);
        if (o->nh2 == (int)(sizeof o->h2 / sizeof o->h2[0]))
            return tg_error_set(err, TG_ERR_ARG, "--h2 %s: at most %d values", s, o->nh2);
        o->h2[o->nh2++] = v;
        if (!*end) return TG_OK;
        p = end;
    }
}

/* Returns TG_OK, an error, or -1 after printing the help. */
static int parse_options(int argc, char **argv, assoc_opts *o, tg_error *err) {
    enum {
        O_PHENO = 1, O_PNAME, O_PCOLS, O_COVAR, O_CNAME, O_CCOLS, O_H2, O_CV, O_IGNORE, O_TOL,
        O_MAXIT, O_KIN, O_GRMSP, O_REFIT, O_HELP
    };
    static const struct option opts[] = {
        {"pheno", required_argument, 0, O_PHENO},
        {"pheno-name", required_argument, 0, O_PNAME},
        {"pheno-col-nums", required_argument, 0, O_PCOLS},
        {"covar", required_argument, 0, O_COVAR}, {"covar-name", required_argument, 0, O_CNAME},
        {"covar-col-nums", required_argument, 0, O_CCOLS}, {"h2", required_argument, 0, O_H2},
        {"cv", required_argument, 0, O_CV}, {"ignore-pred", no_argument, 0, O_IGNORE},
        {"tol", required_argument, 0, O_TOL}, {"max-iter", required_argument, 0, O_MAXIT},
        {"kinship", required_argument, 0, O_KIN},
        {"grm-sparse", required_argument, 0, O_GRMSP},
        {"loco-refit", no_argument, 0, O_REFIT},
        {"help", no_argument, 0, O_HELP}, TG_CLI_INPUT_OPTIONS, TG_CLI_COMMON_OPTIONS,
        {0, 0, 0, 0}};
    const tg_assoc_opts d = tg_assoc_defaults();
    *o = (assoc_opts){.rr = {.tol = d.tol, .max_iter = d.max_iter, .scale = 1},
                      .nh2 = d.nh2, .folds = d.folds};
    memcpy(o->h2, d.h2, (size_t)d.nh2 * sizeof *o->h2);
    rr_opts *r = &o->rr;
    tg_cli_common_init(&r->c);
    int c, ignore = 0;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_PHENO: r->pheno = optarg; break;
        case O_PNAME: r->pheno_names = optarg; break;
        case O_PCOLS: r->pheno_col_nums = optarg; break;
        case O_COVAR: r->covar = optarg; break;
        case O_CNAME: r->covar_names = optarg; break;
        case O_CCOLS: r->covar_col_nums = optarg; break;
        case O_H2: st = parse_h2(optarg, o, err); break;
        case O_CV: st = tg_cli_int("cv", optarg, 2, 1000, &o->folds, err); break;
        case O_IGNORE: ignore = 1; break;
        case O_TOL: st = tg_cli_double("tol", optarg, 1e-300, 0.5, &r->tol, err); break;
        case O_MAXIT: st = tg_cli_int("max-iter", optarg, 1, 1000000, &r->max_iter, err); break;
        case O_KIN: o->kinship = optarg; break;
        case O_GRMSP: o->grm_sparse = optarg; break;
        case O_REFIT: o->loco_refit = 1; break;
        case O_HELP: fputs(help, stdout); return -1;
        case '?':
        case ':': st = tg_cli_bad_option(argv, err); break;
        default: st = tg_cli_common_option(&r->c, c, optarg, argv, err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, err);
    if (!st) st = tg_cli_input_check(&r->c, err);
    if (st) return st;
    if ((r->pheno_names || r->pheno_col_nums) && !r->pheno)
        return tg_error_set(err, TG_ERR_ARG, "--%s needs --pheno FILE",
                            r->pheno_names ? "pheno-name" : "pheno-col-nums");
    if (r->pheno_names && r->pheno_col_nums)
        return tg_error_set(err, TG_ERR_ARG, "--pheno-name and --pheno-col-nums: give one of them");
    if (ignore && o->loco_refit)
        return tg_error_set(err, TG_ERR_ARG, "--loco-refit refits step 1, which --ignore-pred "
                            "leaves out: give one of them");
    if (ignore) o->nh2 = 0;
    if (o->kinship && o->grm_sparse)
        return tg_error_set(err, TG_ERR_ARG, "--kinship and --grm-sparse: give one of them");
    return tg_cli_covar_check(r->covar, r->covar_names, r->covar_col_nums, NULL, NULL, err);
}

/* Case/control phenotypes, as plink2 reads them: values among 0, 1, 2 with 1 and 2 both
 * present are 1 = control, 2 = case, 0 = missing; 0 and 1 alone are control and case (plink2's
 * --1, REGENIE's --bt coding). Recoded in d->y to 0/1 (NAN missing), binary[t] set. */
static tg_status find_binary(rr_data *d, int *binary, tg_log *log, tg_error *err) {
    const int64_t n = d->bed.n_samples;
    for (int t = 0; t < d->k; t++) {
        double *y = d->y + t * n;
        int seen[3] = {0}, other = 0;
        for (int64_t i = 0; i < n && !other; i++) {
            other = !isnan(y[i]) && !(y[i] == 0 || y[i] == 1 || y[i] == 2);
            if (!isnan(y[i]) && !other) seen[(int)y[i]] = 1;
        }
        binary[t] = !other && seen[0] + seen[1] + seen[2] >= 2;
        if (!binary[t]) continue;
        if (!seen[1])
            return tg_error_set(err, TG_ERR_ARG, "phenotype %s takes the values 0 and 2 only: "
                                "expected case/control as 1 = control, 2 = case (0 missing) or "
                                "0 = control, 1 = case", d->names[t]);
        const int plink = seen[2];
        int64_t miss = 0;
        for (int64_t i = 0; i < n; i++) {
            if (plink && y[i] == 0) y[i] = NAN, miss++;
            if (plink && !isnan(y[i])) y[i] -= 1;
        }
        char zeros[64] = "";
        if (miss) snprintf(zeros, sizeof zeros, "; %lld zeros read as missing", (long long)miss);
        tg_log_printf(log, "%s: case/control (%s%s), logistic score test", d->names[t],
                      plink ? "1 = control, 2 = case, 0 missing" : "0 = control, 1 = case",
                      zeros);
    }
    return TG_OK;
}

typedef struct {
    const rr_data *d;
    const tg_assoc_result *r;
    int t;
} tests_job;

static void tests_rows(void *ctx, FILE *f, int64_t j0, int64_t j1) {
    const tests_job *jb = ctx;
    const tg_assoc_result *r = jb->r;
    char num[32];
    for (int64_t j = j0; j < j1; j++) {
        const int64_t at = j + jb->t * r->m;
        tg_snp_key_write(f, &jb->d->bed.snps[j]);
        tg_snp_stats_write(f, &r->stats[at]);
        const double lp = r->log10p[at], p = pow(10, -lp),
                     v[5] = {r->beta[at], r->se[at], r->chisq[at], lp, p > DBL_MIN ? p : DBL_MIN};
        for (int c = 0; c < 5; c++) {
            if (isnan(v[c]))
                strcpy(num, "NA");
            else
                tg_text_format_double(v[c], num);
            fprintf(f, "\t%s", num);
        }
        fputc('\n', f);
    }
}

/* PREFIX.PHENO.assoc.tsv of phenotype t. */
static tg_status write_tests(const char *out, const rr_data *d, const tg_assoc_result *r, int t,
                             tg_error *err) {
    char suffix[512];
    snprintf(suffix, sizeof suffix, ".%s.assoc.tsv", d->names[t]);
    FILE *f;
    char *path = NULL;
    tg_status st = tg_out_open(out, suffix, &f, &path, err);
    if (st) return st;
    fputs(TG_SNP_KEY_HEADER TG_SNP_STATS_HEADER "\tBETA\tSE\tCHISQ\tLOG10P\tP\n", f);
    tests_job jb = {d, r, t};
    st = tg_out_rows(f, path, r->m, 1024, tests_rows, &jb, err);
    if (st)
        tg_out_discard(f);
    else
        st = tg_out_close(f, path, err);
    free(path);
    return st;
}

/* PREFIX.loco.tsv: a column PHENO.CHR per phenotype and chromosome. */
static tg_status write_loco(const char *out, const rr_data *d, const tg_assoc_result *r,
                            tg_error *err) {
    const int64_t cols = d->k * r->nchrom;
    char **names = tg_calloc((size_t)cols, sizeof *names, err);
    tg_status st = names ? TG_OK : TG_ERR_NOMEM;
    for (int64_t c = 0; c < cols && !st; c++) {
        const char *ph = d->names[c / r->nchrom], *chr = r->chroms[c % r->nchrom];
        if (!(names[c] = tg_malloc(strlen(ph) + strlen(chr) + 2, err)))
            st = TG_ERR_NOMEM;
        else
            sprintf(names[c], "%s.%s", ph, chr);
    }
    if (!st)
        st = tg_cli_write_values(out, ".loco.tsv", &d->bed, NULL, (int)cols, names, r->loco, err);
    for (int64_t c = 0; names && c < cols; c++) free(names[c]);
    free(names);
    return st;
}

/* The per-phenotype outputs, three a phenotype: its tests, its Manhattan and its QQ plot. */
typedef struct {
    const assoc_opts *o;
    const rr_data *d;
    const tg_assoc_result *r;
    tg_error *errs; /* one per output */
    double *seconds;
} outputs_job;

static void write_output(void *ctx, int64_t i) {
    const outputs_job *jb = ctx;
    const rr_data *d = jb->d;
    const tg_assoc_result *r = jb->r;
    const char *out = jb->o->rr.c.out;
    const int t = (int)(i / 3);
    const double t0 = tg_now();
    char path[4096], title[256];
    if (r->ncases[t] >= 0)
        snprintf(title, sizeof title, "%s (%lld cases, %lld controls)", d->names[t],
                 (long long)r->ncases[t], (long long)(r->nobs[t] - r->ncases[t]));
    else
        snprintf(title, sizeof title, "%s (%lld samples)", d->names[t], (long long)r->nobs[t]);
    if (i % 3 == 0) {
        write_tests(out, d, r, t, &jb->errs[i]);
    } else if (i % 3 == 1) {
        snprintf(path, sizeof path, "%s.%s.manhattan.png", out, d->names[t]);
        tg_manhattan_png(path, &d->bed, r->log10p + t * r->m, title, &jb->errs[i]);
    } else {
        snprintf(path, sizeof path, "%s.%s.qq.png", out, d->names[t]);
        tg_qq_png(path, r->log10p + t * r->m, r->m, title, r->lambda_gc[t], &jb->errs[i]);
    }
    jb->seconds[i] = tg_now() - t0;
}

/* The LOCO table first, its rows formatted on every core; then the phenotypes' files, each on
 * a core of its own (a file's rows and a plot's pixels are serial work): the phenotypes' files
 * overlap, their syncs included. */
static tg_status write_outputs(const assoc_opts *o, const rr_data *d, const tg_assoc_result *r,
                               tg_log *log, tg_error *err) {
    double t0 = tg_now();
    tg_status st = o->nh2 ? write_loco(o->rr.c.out, d, r, err) : TG_OK;
    if (!st && o->nh2) tg_log_printf(log, "wrote the LOCO predictions (%.3f s)", tg_now() - t0);
    const int64_t n = 3 * (int64_t)d->k;
    outputs_job jb = {o, d, r, st ? NULL : tg_calloc((size_t)n, sizeof *jb.errs, err),
                      st ? NULL : tg_calloc((size_t)n, sizeof *jb.seconds, err)};
    if (!st && (!jb.errs || !jb.seconds)) st = TG_ERR_NOMEM;
    const double t1 = tg_now();
    const int threads = st ? 0 : tg_out_each(n, write_output, &jb);
    for (int64_t i = 0; i < n && !st; i++)
        if (jb.errs[i].status) {
            *err = jb.errs[i];
            st = err->status;
        }
    double most = 0;
    for (int64_t i = 0; i < n && !st; i++) most = jb.seconds[i] > most ? jb.seconds[i] : most;
    if (!st)
        tg_log_printf(log, "wrote %d phenotype(s)' tests and plots (%.3f s, the longest file "
                      "%.3f s; %d thread(s))", d->k, tg_now() - t1, most, threads);
    free(jb.errs);
    free(jb.seconds);
    return st;
}

/* Step 1's progress: the columns left and their largest residual, every iteration in the log
 * file, the first and every 10th on stderr too. */
static void on_progress(void *ctx, int iter, int64_t ncol, const double *relres) {
    int64_t left = 0;
    double worst = 0;
    for (int64_t c = 0; c < ncol; c++)
        if (!isnan(relres[c])) left++, worst = relres[c] > worst ? relres[c] : worst;
    void (*to)(tg_log *, const char *, ...) =
        iter == 1 || iter % 10 == 0 ? tg_log_printf : tg_log_file_only;
    to(ctx, "step 1: cg iteration %d: %lld of %lld column(s) left, largest relative residual "
       "%.3e", iter, (long long)left, (long long)ncol, worst);
}

static void log_results(const assoc_opts *o, const rr_data *d, const tg_assoc_result *r,
                        tg_log *log) {
    if (r->excluded)
        tg_log_printf(log, "warning: %lld monomorphic or all-missing SNP(s): not tested",
                      (long long)r->excluded);
    if (o->nh2 && r->nchrom == 1)
        tg_log_printf(log, "warning: one chromosome: its LOCO prediction leaves every SNP out "
                      "(0), as --ignore-pred");
    char refit[96] = "";
    if (r->refit_columns)
        snprintf(refit, sizeof refit, ", then %lld refitting LOCO without each chromosome",
                 (long long)r->refit_columns);
    if (o->nh2)
        tg_log_printf(log, "step 1: %lld cg column(s)%s, %d iterations, %lld products, %.3f s",
                      (long long)r->cg_columns, refit, r->cg.iterations,
                      (long long)r->cg.products, r->seconds_step1);
    for (int t = 0; t < d->k; t++) {
        char cv[512] = "";
        size_t at = 0;
        for (int h = 0; h < o->nh2 && at < sizeof cv; h++)
            at += (size_t)snprintf(cv + at, sizeof cv - at, "%s%g: %.6g",
                                   h ? ", " : "; held-out mean squared error by h2 ", o->h2[h],
                                   r->cv_mse[h + o->nh2 * t]);
        if (o->nh2)
            tg_log_printf(log, "%s: %lld samples, %d fixed effect(s), h2 %g, lambda %.6g%s",
                          d->names[t], (long long)r->nobs[t], r->nfixed[t], r->h2[t],
                          r->lambda[t], cv);
        if (r->ncases[t] >= 0)
            tg_log_printf(log, "%s: logistic score test: %lld cases, %lld controls", d->names[t],
                          (long long)r->ncases[t], (long long)(r->nobs[t] - r->ncases[t]));
        if (o->kinship || o->grm_sparse) {
            int lo = 0, hi = 0;
            for (int c = 1; c < r->nchrom; c++) {
                const double *rel = r->relate + r->nchrom * t;
                lo = rel[c] < rel[lo] ? c : lo;
                hi = rel[c] > rel[hi] ? c : hi;
            }
            tg_log_printf(log, "%s: relatives' variance factor c %.4f (chromosome %s) to %.4f "
                          "(chromosome %s)", d->names[t], r->relate[lo + r->nchrom * t],
                          r->chroms[lo], r->relate[hi + r->nchrom * t], r->chroms[hi]);
        }
        tg_log_printf(log, "%s: lambda_GC %.4f", d->names[t], r->lambda_gc[t]);
    }
    tg_log_printf(log, "step 2: %lld SNPs x %d phenotype(s), %.3f s", (long long)r->m, d->k,
                  r->seconds_step2);
}

/* The chromosomes of @p bed, at most: the changes of chromosome along the .bim, plus one. */
static double count_chroms(const tg_bed *bed) {
    double c = bed->n_snps > 0;
    for (int64_t j = 1; j < bed->n_snps; j++)
        c += strcmp(bed->snps[j].chrom, bed->snps[j - 1].chrom) != 0;
    return c;
}

/* The relatives of --kinship or --grm-sparse among the samples analysed, into *k, and what
 * was kept in the log. */
static tg_status read_relatives(const assoc_opts *o, const rr_data *d, tg_relatives *k,
                                tg_log *log, tg_error *err) {
    const int kin0 = o->kinship != NULL;
    if (!kin0 && !o->grm_sparse) return TG_OK;
    tg_status st = kin0 ? tg_kin0_read(o->kinship, d->bed.samples, d->bed.n_samples,
                                       KINSHIP_MIN, k, err)
                        : tg_grm_sparse_read(o->grm_sparse, d->bed.samples, d->bed.n_samples,
                                             2 * KINSHIP_MIN, k, err);
    if (st) return st;
    char skipped[256] = "";
    if (k->skipped)
        snprintf(skipped, sizeof skipped, "; %lld pair(s) naming a sample not analysed skipped "
                 "(the first, %s)", (long long)k->skipped, k->first_skipped);
    tg_log_printf(log, "%s%s: %lld pair(s) of relatives used (relatedness %s); %lld pair(s) "
                  "with %s under %g (fastGWA's cutoff) taken as unrelated%s",
                  kin0 ? o->kinship : o->grm_sparse, kin0 ? "" : ".grm.sp",
                  (long long)k->npairs, kin0 ? "2 x KINSHIP" : "the GRM's value",
                  (long long)k->below, kin0 ? "KINSHIP" : "GRM",
                  kin0 ? KINSHIP_MIN : 2 * KINSHIP_MIN, skipped);
    return TG_OK;
}

static tg_status fit(const assoc_opts *o, rr_data *d, const int *binary,
                     const tg_relatives *kin, tg_log *log, tg_error *err) {
    tg_assoc_opts ao = tg_assoc_defaults();
    int bin = 0;
    for (int t = 0; t < d->k; t++) bin |= binary[t];
    ao.h2 = o->h2;
    ao.nh2 = o->nh2;
    ao.folds = (int)o->folds;
    ao.tol = o->rr.tol;
    ao.max_iter = (int)o->rr.max_iter;
    ao.progress = on_progress;
    ao.ctx = log;
    ao.covar = d->cv.values;
    ao.ldc = d->bed.n_samples;
    ao.ncovar = d->cv.n_cols;
    ao.names = (const char *const *)d->names;
    ao.binary = binary;
    ao.npairs = kin->npairs;
    ao.pair_i = kin->pair_i;
    ao.pair_j = kin->pair_j;
    ao.pair_k = kin->pair_k;
    /* the relatives' correction needs residuals that do not depend on the tested SNPs */
    ao.loco_refit = o->loco_refit || ((o->kinship || o->grm_sparse) && o->nh2);
    /* the peak: the genotypes (0.4 bytes a call), then per step 1 column 4 sample vectors
     * (the phenotype copies, CG's) and 8 SNP vectors, and per phenotype and fold (the columns
     * of its h² share them) a fixed-effects basis of p sample vectors, or in
     * step 2 the LOCO predictions and the products (per fold and chromosome; the
     * quantitative phenotypes' residuals all at once, a residual per chromosome with step 1,
     * one without; a case/control one's C(1 + p) columns and its weights per chromosome) */
    const double n = (double)d->bed.n_samples, m = (double)d->bed.n_snps, k = d->k,
                 K = o->nh2 ? (double)o->folds : 1, C = count_chroms(&d->bed),
                 p = 1 + d->cv.n_cols, cols = k * o->nh2 * K, mib = 1048576,
                 R = o->nh2 ? C : 1, w2 = k * (R + p) + (bin ? R * (2 + p) : 0),
                 refit = ao.loco_refit && o->nh2 ? k * K * C : 0; /* and its β kept */
    const double gb = 0.4 * n * m,
                 s1 = 8 * ((cols + refit) * (4 * n + 8 * m) + k * K * n * p + refit * m),
                 s2 = 8 * (n * C * k + (n + m) * (K * C + w2) + m * k * (K + 1)),
                 vb = s1 > s2 ? s1 : s2;
    char terms[128];
    snprintf(terms, sizeof terms, "genotypes %.0f MiB, vectors %.0f MiB", gb / mib, vb / mib);
    tg_assoc_result r = {0};
    tg_status st = tg_cli_memory(&o->rr.c, log, gb + vb, terms, err);
    double all, task;
    tg_geno_device_bytes(d->bed.n_samples, d->bed.n_snps, (int64_t)cols, 8, &all, &task);
    if (!st) st = tg_cli_gpu_memory(log, all, task, "the genotype products' blocks", "use fewer "
                                    "SNPs or samples per run", err);
    if (!st) st = tg_assoc(&d->bed, d->k, d->y, d->bed.n_samples, &ao, &r, err);
    if (!st) log_results(o, d, &r, log);
    if (!st) st = write_outputs(o, d, &r, log, err);
    tg_assoc_result_free(&r);
    return st;
}

static int run(const assoc_opts *o, rr_data *d, tg_log *log) {
    tg_error err = {0};
    int *binary = NULL;
    tg_relatives kin = {0};
    tg_status st = rr_load(&o->rr, d, log, &err);
    if (!st && !(binary = tg_calloc((size_t)d->k, sizeof *binary, &err))) st = TG_ERR_NOMEM;
    if (!st) st = find_binary(d, binary, log, &err);
    if (!st) st = read_relatives(o, d, &kin, log, &err);
    if (st) {
        free(binary);
        tg_relatives_free(&kin);
        return tg_cli_fail("assoc", log, &err);
    }
    tg_runtime_opts ro = o->rr.c.rt;
    ro.cpus_help_gpus = 1; /* the genotype products share the work, as rr --solver cg */
    if ((st = tg_runtime_start(&ro, &err))) {
        free(binary);
        tg_relatives_free(&kin);
        return tg_cli_fail("assoc", log, &err);
    }
    tg_cli_trace_start(&o->rr.c);
    tg_cli_progress_on(&o->rr.c);
    tg_cli_log_runtime(log, &ro);
    st = fit(o, d, binary, &kin, log, &err);
    free(binary);
    tg_relatives_free(&kin);
    if (!st) st = tg_cli_trace_stop(&o->rr.c, "assoc", log, &err);
    tg_cli_progress_off();
    int rc = st ? tg_cli_fail("assoc", log, &err) : 0;
    tg_runtime_stop();
    return rc;
}

int tg_cmd_assoc(int argc, char **argv) {
    assoc_opts o;
    rr_data d = {0};
    tg_error err = {0};
    tg_log *log = NULL;
    int st = parse_options(argc, argv, &o, &err);
    if (st < 0) return 0;
    if (st) return tg_cli_fail_options("assoc", &err);
    if ((st = tg_cli_check_outputs(&o.rr.c, &err))) return tg_cli_fail("assoc", NULL, &err);
    if ((st = tg_log_open(&log, o.rr.c.out, argc, argv, &err)))
        return tg_cli_fail("assoc", NULL, &err);
    tg_log_set_quiet(log, o.rr.c.quiet);
    char grid[256] = "none (--ignore-pred)";
    for (int h = 0, at = 0; h < o.nh2; h++)
        at += snprintf(grid + at, sizeof grid - (size_t)at, "%s%g", h ? "," : "", o.h2[h]);
    tg_log_file_only(log, "options: h2 %s, folds %lld, tol %g, max-iter %lld", grid,
                     o.nh2 ? (long long)o.folds : 0LL, o.rr.tol, (long long)o.rr.max_iter);
    int rc = run(&o, &d, log);
    free(d.line);
    free(d.y);
    free(d.names);
    free(d.cols);
    tg_pheno_free(&d.ph);
    tg_covar_free(&d.cv);
    tg_bed_close(&d.bed);
    tg_log_close(log);
    return rc;
}
