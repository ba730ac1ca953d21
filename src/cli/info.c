/* tilegwas info: with a genotype input, a summary of it (samples, SNPs, missingness, MAF
 * spectrum, case/control counts); without, the build's features and the workers StarPU starts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "config.h"

static const char *help =
    "usage: tilegwas info [--bfile|--pfile PREFIX | --vcf|--bcf FILE] [options]\n"
    "  with a genotype input: summarise it (after the selection and QC flags below): samples,\n"
    "  SNPs, missing rate, MAF spectrum\n"
    "  --pheno FILE     also summarise a phenotype file (FID IID columns...) matched to the\n"
    "                   samples\n"
    "  without a genotype input: print the build (CUDA, MPI) and the CPU/GPU workers StarPU\n"
    "  starts\n"
    "runtime options (without a genotype input):\n"
    "  --sched NAME --ncpu N --ngpu N   as for the compute commands\n" TG_CLI_INPUT_HELP;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Per column: samples with a value, and mean and standard deviation (or case/control counts). */
static tg_status info_pheno(const char *path, const tg_bed *bed, tg_error *err) {
    tg_pheno ph;
    tg_status st = tg_pheno_read(path, bed->samples, bed->n_samples, &ph, err);
    if (st) return st;
    for (int c = 0; c < ph.n_cols; c++) {
        const double *v = ph.values + (size_t)c * ph.n_samples;
        int64_t n = 0, n1 = 0, n2 = 0;
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < ph.n_samples; i++) {
            if (isnan(v[i])) continue;
            n++, s += v[i], s2 += v[i] * v[i];
            n1 += v[i] == 1, n2 += v[i] == 2;
        }
        double mean = n ? s / n : NAN, sd = n > 1 ? sqrt((s2 - s * mean) / (n - 1)) : NAN;
        if (n && n1 + n2 == n)
            printf("pheno_%s\tcases %lld\tcontrols %lld\tmissing %lld\n", ph.names[c],
                   (long long)n2, (long long)n1, (long long)(ph.n_samples - n));
        else
            printf("pheno_%s\tn %lld\tmean %.6g\tsd %.6g\tmissing %lld\n", ph.names[c],
                   (long long)n, mean, sd, (long long)(ph.n_samples - n));
    }
    tg_pheno_free(&ph);
    return TG_OK;
}

static int info_input(const tg_cli_common *c, const char *pheno) {
    tg_error err = {0};
    tg_bed bed;
    if (tg_cli_input_open(c, NULL, &bed, &err)) return tg_cli_fail("info", NULL, &err);
    int rc = tg_cli_ranks_agree("info", NULL, c, &bed, NULL, NULL, &pheno, 1);
    if (rc) {
        tg_bed_close(&bed);
        return rc;
    }
    tg_snp_stats *st = tg_malloc_n(bed.n_snps, 1, sizeof *st, &err);
    double *maf = st ? tg_malloc_n(bed.n_snps, 1, sizeof *maf, &err) : NULL;
    if (!maf) {
        free(st);
        tg_bed_close(&bed);
        return tg_cli_fail("info", NULL, &err);
    }
    tg_bed_stats(&bed, st);
    int64_t nmaf = 0, all_missing = 0, mono = 0, obs = 0;
    for (int64_t j = 0; j < bed.n_snps; j++) {
        obs += st[j].n_obs;
        if (st[j].n_obs == 0) {
            all_missing++;
            continue;
        }
        double m = st[j].freq < 0.5 ? st[j].freq : 1 - st[j].freq;
        if (m == 0) mono++;
        maf[nmaf++] = m;
    }
    qsort(maf, (size_t)nmaf, sizeof *maf, cmp_double);
    /* .fam column 6: case/control when every value is 1 or 2 (tg_bed_open made 0/-9 missing) */
    int64_t cases = 0, controls = 0, pheno_missing = 0, other = 0;
    double psum = 0;
    for (int64_t i = 0; i < bed.n_samples; i++) {
        double p = bed.samples[i].pheno;
        if (isnan(p)) {
            pheno_missing++;
            continue;
        }
        cases += p == 2, controls += p == 1, other += p != 1 && p != 2;
        psum += p;
    }
    double calls = (double)bed.n_samples * (double)bed.n_snps;
    printf("fileset\t%s\nsamples\t%lld\nsnps\t%lld\n", c->in.path, (long long)bed.n_samples,
           (long long)bed.n_snps);
    printf("missing_rate\t%.6g\n", calls > 0 ? 1 - obs / calls : 0);
    printf("snps_all_missing\t%lld\nsnps_monomorphic\t%lld\n", (long long)all_missing,
           (long long)mono);
    if (nmaf) {
        double mean = 0;
        for (int64_t j = 0; j < nmaf; j++) mean += maf[j];
        printf("maf_min\t%.6g\nmaf_median\t%.6g\nmaf_mean\t%.6g\nmaf_max\t%.6g\n", maf[0],
               maf[nmaf / 2], mean / nmaf, maf[nmaf - 1]);
        /* maf is sorted: each bin is the run up to its upper edge (the last one includes 0.5) */
        static const double upper[] = {0.01, 0.05, 0.1, 0.2, INFINITY};
        int64_t j = 0;
        for (int b = 0; b < 5; b++) {
            int64_t start = j;
            while (j < nmaf && maf[j] < upper[b]) j++;
            printf("maf_%g_%g\t%lld\n", b ? upper[b - 1] : 0.0, b == 4 ? 0.5 : upper[b],
                   (long long)(j - start));
        }
    }
    int64_t nobs = bed.n_samples - pheno_missing;
    if (nobs && !other)
        printf("fam_pheno\tcase-control\nfam_cases\t%lld\nfam_controls\t%lld\n", (long long)cases,
               (long long)controls);
    else if (nobs)
        printf("fam_pheno\tquantitative\nfam_pheno_mean\t%.6g\n", psum / nobs);
    else
        printf("fam_pheno\tnone\n");
    printf("fam_pheno_missing\t%lld\n", (long long)pheno_missing);
    rc = pheno && info_pheno(pheno, &bed, &err) ? tg_cli_fail("info", NULL, &err) : 0;
    free(maf);
    free(st);
    tg_bed_close(&bed);
    return rc;
}

static int info_runtime(const tg_cli_common *c) {
    tg_error err = {0};
    printf("tilegwas\t%s\ncuda\t%s\nmpi\t%s\n", PACKAGE_VERSION, tg_have_cuda() ? "yes" : "no",
           tg_have_mpi() ? "yes" : "no");
    if (tg_runtime_start(&c->rt, &err)) return tg_cli_fail("info", NULL, &err);
    char desc[2048];
    tg_runtime_describe(desc, sizeof desc);
    printf("runtime\t%s\n", desc);
    tg_runtime_stop();
    return 0;
}

int tg_cmd_info(int argc, char **argv) {
    static const struct option opts[] = {
        {"pheno", required_argument, 0, 'p'}, {"help", no_argument, 0, 'h'},
        TG_CLI_INPUT_OPTIONS, TG_CLI_COMMON_OPTIONS, {0, 0, 0, 0}};
    tg_cli_common c;
    tg_cli_common_init(&c);
    tg_error err = {0};
    const char *pheno = NULL;
    int o;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (o == 'p')
            pheno = optarg;
        else if (o == 'h') {
            fputs(help, stdout);
            return 0;
        } else if (o == '?' || o == ':') {
            tg_cli_bad_option(argv, &err);
            return tg_cli_fail_options("info", &err);
        } else if (tg_cli_common_option(&c, o, optarg, argv, &err))
            return tg_cli_fail_options("info", &err);
    }
    if (tg_cli_no_operand(argc, argv, &err)) return tg_cli_fail_options("info", &err);
    if (pheno && !c.in.path) {
        tg_error_set(&err, TG_ERR_ARG, "--pheno needs a genotype input (IDs are matched to its "
                     "samples)");
        return tg_cli_fail_options("info", &err);
    }
    if (c.in.path && tg_cli_input_check(&c, &err)) return tg_cli_fail_options("info", &err);
    return c.in.path ? info_input(&c, pheno) : info_runtime(&c);
}
