/* tilegwas epistasis: exhaustive search of SNP pairs, triples or quads in a case-control
 * fileset (tg_epistasis), writing the top-k with full contingency tables to PREFIX.epi<k>.tsv. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *help =
    "usage: tilegwas epistasis (--bfile|--pfile PREFIX | --vcf|--bcf FILE) --out PREFIX [options]\n"
    "Scores every combination of --order SNPs against a case-control phenotype and writes the\n"
    "best --top to OUT.epi<k>.tsv (k = order) with their contingency tables, and OUT.log.\n\n"
    "options:\n"
    "  --pheno FILE       phenotype file (FID IID columns...; default: .fam column 6)\n"
    "  --pheno-name NAME  column of --pheno (default: the first)\n"
    "  --order K          2, 3 or 4 (default 2)\n"
    "  --top K            combinations reported (default 10, at most 1024)\n"
    "  --score S          k2 (column K2_LNBF: ln Bayes factor of the K2 model of the cells\n"
    "                     against no association, over the same samples), mi (mutual\n"
    "                     information, nats) or chi2 (Pearson chi-square of the 3^k x 2\n"
    "                     table); higher is better; default k2\n"
    "  --block B          SNPs per block, a multiple of 8 in [8, 4096] (default by order:\n"
    "                     1024, 256, 64, or at order 4 with GPUs 128 where that makes 8\n"
    "                     rounds a GPU; smaller when there are fewer SNPs)\n"
    "  --p-threshold T    (mi, chi2) instead of --top: every combination with P <= T, best\n"
    "                     score first, however many (T in (0, 1])\n"
    "  --set FILE         SNP IDs (separated by spaces or lines): only the combinations\n"
    "                     holding at least one of them, each once\n" TG_CLI_INPUT_HELP
    TG_CLI_COMMON_HELP
    "  --help             this text\n\n"
    "Phenotype coding as PLINK: 1 control, 2 case, 0/-9/NA missing (those samples are left\n"
    "out); any other value is a quantitative phenotype and an error. A missing genotype\n"
    "leaves the sample out of the tables of the combinations holding that SNP.\n"
    "Output columns: RANK, SNP1..SNPk, CHR1..CHRk, BP1..BPk, REF1..REFk, ALT1..ALTk (ALT is\n"
    "A1, the allele counted), the score (K2_LNBF, MI or CHI2; for MI and CHI2 then DF, the\n"
    "table's degrees of freedom, and P: the G-test's or Pearson's, from chi-square), N\n"
    "(samples counted), CONTROLS and CASES: 3^k comma-separated counts, cell g =\n"
    "sum g_i*3^(k-i) over the A1 counts g_i of SNP i (first SNP most significant: 00, 01, 02,\n"
    "10, ... for k = 2).\n";

static const char *score_names[] = {"k2", "mi", "chi2"};

typedef struct {
    const char *pheno, *pheno_name, *set;
    tg_epi_opts e;
    tg_cli_common c;
} epi_opts;

static int parse_options(int argc, char **argv, epi_opts *o, tg_error *err) {
    enum { O_PHENO = 1, O_PNAME, O_ORDER, O_TOP, O_SCORE, O_BLOCK, O_PTHR, O_SET, O_HELP };
    static const struct option opts[] = {{"pheno", required_argument, 0, O_PHENO},
                                         {"pheno-name", required_argument, 0, O_PNAME},
                                         {"order", required_argument, 0, O_ORDER},
                                         {"top", required_argument, 0, O_TOP},
                                         {"score", required_argument, 0, O_SCORE},
                                         {"block", required_argument, 0, O_BLOCK},
                                         {"p-threshold", required_argument, 0, O_PTHR},
                                         {"set", required_argument, 0, O_SET},
                                         {"help", no_argument, 0, O_HELP},
                                         TG_CLI_INPUT_OPTIONS,
                                         TG_CLI_COMMON_OPTIONS,
                                         {0, 0, 0, 0}};
    *o = (epi_opts){.e = tg_epi_defaults()};
    tg_cli_common_init(&o->c);
    int c;
    int64_t v;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_PHENO: o->pheno = optarg; break;
        case O_PNAME: o->pheno_name = optarg; break;
        case O_ORDER:
            if (!(st = tg_cli_int("order", optarg, 2, 4, &v, err))) o->e.order = (int)v;
            break;
        case O_TOP:
            if (!(st = tg_cli_int("top", optarg, 1, TG_EPI_MAX_TOPK, &v, err))) o->e.topk = (int)v;
            break;
        case O_SCORE: {
            int k = 0;
            while (k < 3 && strcmp(optarg, score_names[k])) k++;
            if (k == 3)
                st = tg_error_set(err, TG_ERR_ARG, "--score %s: expected k2, mi or chi2", optarg);
            o->e.score = (tg_epi_score_kind)k;
            break;
        }
        case O_BLOCK:
            if (!(st = tg_cli_int("block", optarg, 8, 4096, &v, err))) {
                o->e.block = (int)v;
                if (v % 8)
                    st = tg_error_set(err, TG_ERR_ARG, "--block %s: must be a multiple of 8",
                                      optarg);
            }
            break;
        case O_PTHR:
            if (!(st = tg_cli_double("p-threshold", optarg, 0, 1, &o->e.p_threshold, err)) &&
                !(o->e.p_threshold > 0))
                st = tg_error_set(err, TG_ERR_ARG, "--p-threshold %s: must be above 0", optarg);
            break;
        case O_SET: o->set = optarg; break;
        case O_HELP: fputs(help, stdout); return -1;
        default:
            st = c >= 1000 && c < 1200 ? tg_cli_common_option(&o->c, c, optarg, argv, err)
                                       : tg_cli_bad_option(argv, err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, err);
    if (st) return st;
    if ((st = tg_cli_input_check(&o->c, err))) return st;
    if (o->pheno_name && !o->pheno)
        return tg_error_set(err, TG_ERR_ARG, "--pheno-name needs --pheno");
    if (o->e.p_threshold > 0 && o->e.score == TG_EPI_SCORE_K2)
        return tg_error_set(err, TG_ERR_ARG, "--p-threshold: the K2 score has no P value (use "
                            "--score mi or chi2)");
    return TG_OK;
}

/* The search's progress hook (tg_epi_opts.progress) into the command's reporter. */
static void progress(void *ctx, uint64_t done, uint64_t total) {
    const uint64_t most = INT64_MAX; /* the reporter counts in int64: larger counts saturate */
    tg_cli_progress_hook(ctx, "epistasis", "combinations", (int64_t)(done < most ? done : most),
                         (int64_t)(total < most ? total : most));
}

/* The TSV: its header, then one row per combination (write_row), best first. */
struct tsv {
    const epi_opts *o;
    const tg_bed *bed;
    FILE *f;
    char *path;
    int64_t rows;
};

static tg_status open_tsv(const epi_opts *o, const tg_bed *bed, struct tsv *t, tg_error *err) {
    char suffix[16];
    const int k = o->e.order;
    *t = (struct tsv){.o = o, .bed = bed};
    snprintf(suffix, sizeof suffix, ".epi%d.tsv", k);
    tg_status st = tg_out_open(o->c.out, suffix, &t->f, &t->path, err);
    if (st) return st;
    /* each SNP's ID, then what joins a row back when the ID is '.': position and alleles */
    static const char *cols[5] = {"SNP", "CHR", "BP", "REF", "ALT"};
    fputs("RANK", t->f);
    for (int c = 0; c < 5; c++)
        for (int i = 1; i <= k; i++) fprintf(t->f, "\t%s%d", cols[c], i);
    fprintf(t->f, "\t%s%s\tN\tCONTROLS\tCASES\n",
            o->e.score == TG_EPI_SCORE_K2   ? "K2_LNBF"
            : o->e.score == TG_EPI_SCORE_MI ? "MI"
                                            : "CHI2",
            o->e.score != TG_EPI_SCORE_K2 ? "\tDF\tP" : ""); /* MI and χ² have a P value */
    return TG_OK;
}

/* tg_epi_opts.emit too (--p-threshold) */
static tg_status write_row(void *ctx, const tg_epi_hit_info *x, tg_error *err) {
    struct tsv *t = ctx;
    const int k = t->o->e.order, cells = k == 2 ? 9 : k == 3 ? 27 : 81;
    const tg_snp *v = t->bed->snps;
    (void)err;
    fprintf(t->f, "%lld", (long long)++t->rows);
    for (int i = 0; i < k; i++) fprintf(t->f, "\t%s", v[x->snp[i]].id);
    for (int i = 0; i < k; i++) fprintf(t->f, "\t%s", v[x->snp[i]].chrom);
    for (int i = 0; i < k; i++) fprintf(t->f, "\t%lld", (long long)v[x->snp[i]].pos);
    for (int i = 0; i < k; i++) fprintf(t->f, "\t%s", v[x->snp[i]].a2); /* REF */
    for (int i = 0; i < k; i++) fprintf(t->f, "\t%s", v[x->snp[i]].a1); /* ALT, the A1 counted */
    fprintf(t->f, "\t%.10g", x->score);
    if (t->o->e.score != TG_EPI_SCORE_K2) fprintf(t->f, "\t%d\t%.6g", x->df, x->p);
    fprintf(t->f, "\t%lld", (long long)x->n);
    for (int c = 0; c < 2; c++)
        for (int g = 0; g < cells; g++)
            fprintf(t->f, "%s%lld", g ? "," : "\t", (long long)x->table[c][g]);
    fputc('\n', t->f);
    return TG_OK;
}

static tg_status close_tsv(struct tsv *t, tg_error *err) {
    tg_status st = t->f ? tg_out_close(t->f, t->path, err) : TG_OK;
    t->f = NULL;
    free(t->path);
    t->path = NULL;
    return st;
}

int tg_cmd_epistasis(int argc, char **argv) {
    epi_opts o;
    tg_error err = {0};
    tg_log *log = NULL;
    tg_bed bed = {0};
    int8_t *cls = NULL;
    int64_t *set = NULL;
    tg_epi_report rep = {0};
    struct tsv tsv = {0};
    int rc = 0, started = 0;
    int st = parse_options(argc, argv, &o, &err);
    if (st < 0) return 0;
    if (st) return tg_cli_fail_options("epistasis", &err);
    if ((st = tg_cli_check_outputs(&o.c, &err))) return tg_cli_fail("epistasis", NULL, &err);
    if ((st = tg_log_open(&log, o.c.out, argc, argv, &err)))
        return tg_cli_fail("epistasis", NULL, &err);
    tg_log_set_quiet(log, o.c.quiet);
    tg_log_file_only(log,
                     "options: --pheno %s --pheno-name %s --order %d --top %d "
                     "--score %s --block %d%s --p-threshold %g --set %s",
                     o.pheno ? o.pheno : "(.fam)", o.pheno_name ? o.pheno_name : "(first)",
                     o.e.order, o.e.topk, score_names[o.e.score], o.e.block,
                     o.e.block ? "" : " (by order)", o.e.p_threshold, o.set ? o.set : "(none)");
    double t0 = tg_now();
    if ((st = tg_cli_input_open(&o.c, log, &bed, &err)) ||
        !(cls = tg_malloc_n(bed.n_samples, 1, 1, &err)) ||
        (st = tg_epi_classes_bed(&bed, o.pheno, o.pheno_name, cls, &err)) ||
        (o.set && (st = tg_snp_set_read(o.set, &bed, &set, &o.e.nset, &err)))) {
        rc = tg_cli_fail("epistasis", log, &err);
        goto cleanup;
    }
    const char *files[] = {o.pheno, o.set};
    if ((rc = tg_cli_ranks_agree("epistasis", log, &o.c, &bed, NULL, NULL, files, 2))) goto cleanup;
    if ((st = tg_runtime_start(&o.c.rt, &err))) {
        rc = tg_cli_fail("epistasis", log, &err);
        goto cleanup;
    }
    started = 1;
    tg_cli_trace_start(&o.c);
    char desc[2048];
    tg_runtime_describe(desc, sizeof desc);
    tg_log_file_only(log, "runtime: %s", desc);
    tg_log_file_only(log, "read genotypes and phenotype: %.2f s", tg_now() - t0);
    const int nranks = tg_runtime_nranks(), rank0 = tg_runtime_rank() == 0;
    if (nranks > 1)
        tg_log_file_only(log,
                         "%d MPI ranks: block round i runs on rank i mod %d; progress on stderr "
                         "counts rank 0's rounds times %d until the exact total at the end",
                         nranks, nranks, nranks);
    o.e.set = set;
    double host, gpu, task;
    if ((st = tg_epistasis_memory(&bed, cls, &o.e, &host, &gpu, &task, &err)) ||
        (st = tg_cli_memory(&o.c, log, host, "genotype planes and the rounds' results", &err)) ||
        (st = tg_cli_gpu_memory(log, gpu, task, "genotype planes", "use a smaller --block",
                                &err))) {
        rc = tg_cli_fail("epistasis", log, &err);
        goto cleanup;
    }
    o.e.progress = progress;
    o.e.progress_ctx = tg_cli_progress_on(&o.c);
    /* the clock from here, the total with the search's first call */
    tg_cli_progress_start(o.e.progress_ctx, "epistasis", -1, "combinations");
    /* --p-threshold streams its rows from the search (one rank: tg_epistasis refuses more) */
    if (o.e.p_threshold > 0 && rank0) {
        o.e.emit = write_row;
        o.e.emit_ctx = &tsv;
        if ((st = open_tsv(&o, &bed, &tsv, &err))) {
            rc = tg_cli_fail("epistasis", log, &err);
            goto cleanup;
        }
    }
    if ((st = tg_epistasis(&bed, cls, &o.e, &rep, &err)) ||
        (st = tg_cli_trace_stop(&o.c, "epistasis", log, &err))) {
        rc = tg_cli_fail("epistasis", log, &err);
        goto cleanup;
    }
    tg_log_printf(log,
                  "%lld SNPs; samples: %lld controls, %lld cases, %lld without phenotype "
                  "(left out)",
                  (long long)rep.n_snps, (long long)rep.n_controls, (long long)rep.n_cases,
                  (long long)rep.n_excluded);
    tg_log_printf(log, "missing genotype rate %.4g: %s", rep.missing_rate,
                  rep.complete ? "complete data" : "with missing genotypes (counted per SNP)");
    tg_cli_log_traffic(log);
    tg_log_printf(log, "order %d, score %s, block %d SNPs, %lld rounds, %llu combinations%s",
                  rep.order, score_names[o.e.score], rep.block, (long long)rep.rounds,
                  (unsigned long long)rep.combinations,
                  rep.n_set ? " (those holding a SNP of the set)" : "");
    if (rep.n_set)
        tg_log_printf(log, "--set %s: %lld SNPs; C(%lld, %d) - C(%lld, %d) combinations hold one",
                      o.set, (long long)rep.n_set, (long long)rep.n_snps, rep.order,
                      (long long)(rep.n_snps - rep.n_set), rep.order);
    if (o.e.score != TG_EPI_SCORE_K2)
        tg_log_printf(log,
                      "P values: %llu combinations tested; Bonferroni: P <= 0.05 / %llu = %.3g "
                      "(a family-wise level of 5%%)",
                      (unsigned long long)rep.combinations, (unsigned long long)rep.combinations,
                      0.05 / (double)rep.combinations);
    double cs = (double)rep.combinations * (double)(rep.n_controls + rep.n_cases);
    tg_log_printf(log,
                  "planes built in %.3f s; search %.3f s with the planes: %.4g "
                  "combinations/s, %.4g combinations*samples/s",
                  rep.seconds_planes, rep.seconds_search,
                  rep.seconds_search > 0 ? (double)rep.combinations / rep.seconds_search : 0,
                  rep.seconds_search > 0 ? cs / rep.seconds_search : 0);
    /* rank 0 holds the hits; the other ranks' logs are muted */
    if (rank0 && !tsv.f) st = open_tsv(&o, &bed, &tsv, &err);
    for (int h = 0; !st && h < rep.nhit; h++) st = write_row(&tsv, &rep.hits[h], &err);
    if (st || (st = close_tsv(&tsv, &err))) {
        rc = tg_cli_fail("epistasis", log, &err);
        goto cleanup;
    }
    if (o.e.p_threshold > 0)
        tg_log_printf(log, "--p-threshold %g: %llu of %llu combinations have P <= %g",
                      o.e.p_threshold, (unsigned long long)rep.passed,
                      (unsigned long long)rep.combinations, o.e.p_threshold);
    tg_log_printf(log, "wrote %s.epi%d.tsv%s (%lld combinations)", o.c.out, rep.order,
                  o.c.zst ? ".zst" : "", (long long)tsv.rows);
cleanup:
    if (tsv.f) { /* a failed run: the partial file is closed, the error already reported */
        fclose(tsv.f);
        free(tsv.path);
    }
    tg_cli_progress_off();
    tg_epi_report_free(&rep);
    if (started) tg_runtime_stop();
    free(cls);
    free(set);
    tg_bed_close(&bed);
    tg_log_close(log);
    return rc;
}
