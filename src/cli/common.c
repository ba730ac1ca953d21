/* Shared option parsing and error reporting of the commands. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cli/cli.h"

static int exit_code(const tg_error *err) { return err->status == TG_ERR_ARG ? 2 : 1; }

/* "tilegwas CMD: error: [rank R: ]MSG" on stderr and in the log. */
static int print_error(const char *cmd, tg_log *log, const tg_error *err, int name_rank) {
    char rank[32] = "";
    if (name_rank) snprintf(rank, sizeof rank, "rank %d: ", tg_runtime_rank());
    tg_cli_progress_interrupt();
    fprintf(stderr, "tilegwas%s%s: error: %s%s\n", cmd ? " " : "", cmd ? cmd : "", rank,
            err->msg);
    tg_log_file_only(log, "error: %s%s", rank, err->msg);
    tg_log_failed(log);
    return exit_code(err);
}

int tg_cli_error(const char *cmd, tg_log *log, const tg_error *err) {
    return print_error(cmd, log, err, tg_runtime_nranks() > 1);
}

int tg_cli_fail(const char *cmd, tg_log *log, const tg_error *err) {
    int rc = tg_cli_error(cmd, log, err);
    /* the other ranks may be waiting for this one in a collective, or would run on alone;
     * the log ends first, removing the outputs left unfinished, as the abort does not return */
    if (tg_runtime_nranks() > 1) {
        tg_log_close(log);
        tg_runtime_abort(rc);
    }
    return rc;
}

int tg_cli_fail_alike(const char *cmd, tg_log *log, const tg_error *err) {
    /* rank 0 says it once, as without MPI, and every rank returns */
    return tg_runtime_rank() == 0 ? print_error(cmd, log, err, 0) : exit_code(err);
}

int tg_cli_fail_options(const char *cmd, const tg_error *err) {
    /* parsing running out of memory may happen on one rank alone */
    if (err->status != TG_ERR_ARG) return tg_cli_fail(cmd, NULL, err);
    /* every rank fails alike: main checked that they have the same arguments */
    return tg_cli_fail_alike(cmd, NULL, err);
}

tg_status tg_cli_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out,
                     tg_error *err) {
    /* through strtod so that 1e6 is accepted; exact for every integer option value (< 2^53) */
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v != floor(v))
        return tg_error_set(err, TG_ERR_ARG, "--%s %s: expected an integer", opt, s);
    if (v < (double)lo || v > (double)hi)
        return tg_error_set(err, TG_ERR_ARG, "--%s %s: must be between %lld and %lld", opt, s,
                            (long long)lo, (long long)hi);
    *out = (int64_t)v;
    return TG_OK;
}

tg_status tg_cli_bad_option(char **argv, tg_error *err) {
    /* getopt_long (with opterr = 0) leaves the offending word at argv[optind - 1] */
    return tg_error_set(err, TG_ERR_ARG, "unknown option or missing value: %s (see --help)",
                        argv[optind - 1]);
}

tg_status tg_cli_no_operand(int argc, char **argv, tg_error *err) {
    if (optind >= argc) return TG_OK;
    return tg_error_set(err, TG_ERR_ARG, "unexpected argument '%s' (see --help)", argv[optind]);
}

tg_status tg_cli_double(const char *opt, const char *s, double lo, double hi, double *out,
                        tg_error *err) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return tg_error_set(err, TG_ERR_ARG, "--%s %s: expected a number", opt, s);
    if (v < lo || v > hi)
        return tg_error_set(err, TG_ERR_ARG, "--%s %s: must be between %g and %g", opt, s, lo, hi);
    *out = v;
    return TG_OK;
}

tg_status tg_cli_grid(const char *s, tg_runtime_opts *rt, tg_error *err) {
    char *end;
    long p = strtol(s, &end, 10), q = 0;
    if (end != s && (*end == 'x' || *end == 'X') && end[1] >= '0' && end[1] <= '9')
        q = strtol(end + 1, &end, 10);
    if (*end || p < 1 || q < 1 || p > 65536 || q > 65536)
        return tg_error_set(err, TG_ERR_ARG, "--grid %s: expected PxQ, two positive integers "
                            "(e.g. 2x1)", s);
    int nr = tg_runtime_nranks();
    if (p * q != nr)
        return tg_error_set(err, TG_ERR_ARG, "--grid %s: %ld places for %d MPI rank%s: P*Q must "
                            "equal the rank count", s, p * q, nr, nr == 1 ? "" : "s");
    rt->grid_p = (int)p;
    rt->grid_q = (int)q;
    return TG_OK;
}

void tg_cli_common_init(tg_cli_common *c) {
    c->out = "tilegwas";
    c->rt = tg_runtime_defaults();
    c->quiet = 0;
    c->trace = NULL;
    c->memory = 0;
    c->zst = c->zst_level = 0;
    tg_input_opts_init(&c->in);
}

tg_status tg_cli_common_option(tg_cli_common *c, int opt, const char *arg, char **argv,
                               tg_error *err) {
    if (opt >= 1100 && opt < 1200) return tg_cli_input_option(c, opt, arg, argv, err);
    int64_t v;
    tg_status st = TG_OK;
    switch (opt) {
    case 1000: c->out = arg; break;
    case 1001: c->rt.sched = arg; break;
    case 1002:
        if (!(st = tg_cli_int("ncpu", arg, 0, 4096, &v, err))) c->rt.ncpu = (int)v;
        break;
    case 1003:
        if (!(st = tg_cli_int("ngpu", arg, 0, 1024, &v, err))) c->rt.ngpu = (int)v;
        break;
    case 1004: c->quiet = 1; break;
    case 1005: c->trace = arg; break;
    case 1006: /* plink2's --memory: MiB */
        if (!(st = tg_cli_int("memory", arg, 1, INT64_C(1) << 40, &v, err))) c->memory = v << 20;
        break;
    case 1007: c->zst = 1; break;
    case 1008:
        if (!(st = tg_cli_int("zst-level", arg, 1, ZSTD_maxCLevel(), &v, err)))
            c->zst_level = (int)v;
        break;
    default: st = tg_error_set(err, TG_ERR_ARG, "unknown option");
    }
    return st;
}

tg_status tg_cli_check_outputs(const tg_cli_common *c, tg_error *err) {
    if (c->zst_level && !c->zst)
        return tg_error_set(err, TG_ERR_ARG, "--zst-level %d without --zst: add --zst to "
                            "compress the outputs", c->zst_level);
    tg_status st = tg_out_check_prefix(c->out, err);
    if (!st && c->trace) st = tg_out_check_option("trace", c->trace, err);
    /* plink2's default level; as many compression threads as --threads gives, else every
     * usable core (writing mostly follows the computing) */
    if (!st && c->zst) tg_out_set_zstd(c->zst_level ? c->zst_level : 3, c->rt.ncpu);
    return st;
}

void tg_cli_trace_start(const tg_cli_common *c) {
    if (c->trace) tg_trace_start();
}

tg_status tg_cli_trace_stop(const tg_cli_common *c, const char *cmd, tg_log *log, tg_error *err) {
    if (!c->trace) return TG_OK;
    char label[64];
    size_t n;
    snprintf(label, sizeof label, "tilegwas %s", cmd);
    tg_status st = tg_trace_stop(c->trace, label, &n, err);
    if (!st)
        tg_log_printf(log, "trace: %zu tasks in %s.trace.tsv%s and %s.gantt.png", n, c->trace,
                      c->zst ? ".zst" : "", c->trace);
    return st;
}

tg_status tg_cli_columns(const char *file, const char *opt, const char *list, const tg_pheno *ph,
                         int **cols, int *k, tg_error *err) {
    char *copy = tg_strdup(list ? list : "", err), *save = NULL;
    if (!copy || !(*cols = tg_malloc((strlen(copy) + (size_t)ph->n_cols + 1) * sizeof **cols, err))) {
        free(copy);
        return TG_ERR_NOMEM;
    }
    tg_status st = TG_OK;
    *k = 0;
    for (char *t = strtok_r(copy, ",", &save); list && t && !st; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int c = 0; c < ph->n_cols && found < 0; c++)
            if (!strcmp(ph->names[c], t)) found = c;
        for (int a = 0; a < *k && found >= 0; a++)
            if ((*cols)[a] == found) st = tg_error_set(err, TG_ERR_ARG, "--%s: %s is named twice", opt, t);
        if (found < 0) st = tg_error_set(err, TG_ERR_ARG, "--%s: %s has no column %s", opt, file, t);
        else if (!st) (*cols)[(*k)++] = found;
    }
    for (int c = 0; !list && c < ph->n_cols; c++) (*cols)[(*k)++] = c;
    if (!st && !*k) st = tg_error_set(err, TG_ERR_ARG, "--%s: no column named", opt);
    free(copy);
    return st;
}

tg_status tg_cli_precisions(const char *list, unsigned *allowed, tg_error *err) {
    char *copy = tg_strdup(list, err), *save = NULL;
    if (!copy) return TG_ERR_NOMEM;
    tg_status st = TG_OK;
    *allowed = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !st; t = strtok_r(NULL, ",", &save)) {
        tg_prec p;
        tg_error perr;
        if (tg_prec_parse(t, &p, &perr) || p == TG_INT8 || p == TG_INT32)
            st = tg_error_set(err, TG_ERR_ARG, "--precisions %s: %s is not one of fp64, fp32, "
                              "fp16, fp8", list, t);
        else
            *allowed |= 1u << p;
    }
    if (!st && !*allowed)
        st = tg_error_set(err, TG_ERR_ARG, "--precisions '%s': no precision named", list);
    free(copy);
    return st;
}

void tg_cli_precision_names(unsigned set, char *buf, size_t len) {
    size_t l = 0;
    buf[0] = 0;
    for (int p = 0; p < TG_NPREC && l < len; p++)
        if (set >> p & 1u)
            l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? "," : "", tg_prec_name((tg_prec)p));
}

unsigned tg_cli_default_precisions(tg_log *log, unsigned with_gpus, unsigned without) {
    const char *why;
    const unsigned a = tg_precisions_by_workers(with_gpus, without, &why);
    char names[64];
    tg_cli_precision_names(a, names, sizeof names);
    tg_log_printf(log, "precisions %s (%s)", names, why);
    return a;
}

tg_status tg_cli_pheno_read(tg_log *log, const char *path, const char *col_nums,
                            const tg_sample *samples, int64_t n, tg_pheno *ph, tg_error *err) {
    tg_pheno_opts po = tg_pheno_defaults();
    po.col_nums = col_nums;
    tg_status st = tg_pheno_read_opts(path, samples, n, &po, ph, err);
    if (!st && ph->n_skipped)
        tg_log_printf(log, "%s: %lld row(s) of samples not in the genotypes' .fam skipped", path,
                      (long long)ph->n_skipped);
    return st;
}

tg_status tg_cli_write_alpha(const char *prefix, int k, const char *const *names,
                             const tg_covar *cv, const double *alpha, tg_error *err) {
    FILE *f;
    char *path = NULL, num[32];
    tg_status st = tg_out_open(prefix, ".alpha.tsv", &f, &path, err);
    if (st) return st;
    const int p = 1 + cv->n_cols;
    fputs("term", f);
    for (int c = 0; c < k; c++) fprintf(f, "\t%s", names[c]);
    for (int j = 0; j < p; j++) {
        fprintf(f, "\n%s", j ? cv->names[j - 1] : "intercept");
        for (int c = 0; c < k; c++) {
            tg_text_format_double(alpha[j + c * p], num);
            fprintf(f, "\t%s", num);
        }
    }
    fputc('\n', f);
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

tg_status tg_cli_covar_check(const char *covar, const char *names, const char *col_nums,
                             const char *test_bfile, const char *test_covar, tg_error *err) {
    if ((names || col_nums) && !covar)
        return tg_error_set(err, TG_ERR_ARG, "--%s needs --covar FILE",
                            names ? "covar-name" : "covar-col-nums");
    if (names && col_nums)
        return tg_error_set(err, TG_ERR_ARG, "--covar-name and --covar-col-nums: give one of them");
    if (test_covar && (!covar || !test_bfile))
        return tg_error_set(err, TG_ERR_ARG, "--test-covar goes with --covar and --test-bfile");
    if (covar && test_bfile && !test_covar)
        return tg_error_set(err, TG_ERR_ARG, "--covar with --test-bfile needs --test-covar FILE: "
                            "the test cohort's predictions include the covariates' effects");
    return TG_OK;
}

tg_status tg_cli_covariates(tg_log *log, const char *path, const char *names, const char *col_nums,
                            const tg_sample *samples, int64_t n, const tg_covar *like,
                            tg_covar *cv, tg_error *err) {
    tg_pheno ph;
    tg_pheno_opts po = tg_pheno_defaults();
    po.names = names;
    po.col_nums = col_nums;
    po.categorical = 1;
    tg_status st = tg_pheno_read_opts(path, samples, n, &po, &ph, err);
    if (st) return st;
    if (ph.n_skipped)
        tg_log_printf(log, "%s: %lld row(s) of samples not in the genotypes' .fam skipped", path,
                      (long long)ph.n_skipped);
    st = like ? tg_covar_apply(like, &ph, path, cv, err) : tg_covar_make(&ph, path, cv, err);
    tg_pheno_free(&ph);
    if (st) return st;
    char line[1024];
    size_t at = 0;
    for (int j = 0; j < cv->n_cols && at < sizeof line; j++)
        at += (size_t)snprintf(line + at, sizeof line - at, "%s%s", j ? ", " : "", cv->names[j]);
    tg_log_printf(log, "%s: %d covariate column(s) as fixed effects beside the intercept%s%s", path,
                  cv->n_cols, cv->n_cols ? ": " : "", line);
    for (int s = 0; s < cv->n_src && !like; s++)
        if (cv->src_nlevels[s] > 1)
            tg_log_printf(log, "%s: categorical, %d levels, reference level %s (the first in "
                          "natural order)", cv->src_names[s], cv->src_nlevels[s],
                          cv->src_levels[s][0]);
    for (int j = 0; j < cv->n_dropped; j++)
        tg_log_printf(log, "warning: covariate column %s dropped", cv->dropped[j]);
    if (cv->n_missing)
        tg_log_printf(log, "%s: %lld of %lld sample(s) missing a covariate, left out of the fit%s",
                      path, (long long)cv->n_missing, (long long)n,
                      like ? " (their predictions are NA)" : "");
    return TG_OK;
}

tg_status tg_cli_phenotypes(tg_log *log, const char *path, const char *col_nums, const tg_bed *bed,
                            tg_pheno *ph, tg_error *err) {
    if (path) return tg_cli_pheno_read(log, path, col_nums, bed->samples, bed->n_samples, ph, err);
    const int64_t n = bed->n_samples;
    int64_t seen = 0;
    *ph = (tg_pheno){.n_samples = n, .n_cols = 1};
    if (!(ph->names = tg_calloc(1, sizeof *ph->names, err)) ||
        !(ph->names[0] = tg_strdup("PHENO1", err)) ||
        !(ph->values = tg_malloc_n(n, 1, sizeof *ph->values, err))) {
        tg_pheno_free(ph);
        return TG_ERR_NOMEM;
    }
    for (int64_t i = 0; i < n; i++) seen += !isnan(ph->values[i] = bed->samples[i].pheno);
    if (!seen) {
        tg_pheno_free(ph);
        return tg_error_set(err, TG_ERR_ARG, "%s.fam: no sample has a phenotype in column 6: give "
                            "--pheno FILE", bed->prefix);
    }
    tg_log_printf(log, "phenotype: the .fam's column 6 (PHENO1), %lld of %lld samples observed",
                  (long long)seen, (long long)n);
    return TG_OK;
}

void tg_cli_log_traffic(tg_log *log) {
    char line[2048];
    tg_probe_describe(line, sizeof line);
    tg_log_file_only(log, "performance models: %s", line);
    if (tg_runtime_describe_comm(line, sizeof line)) tg_log_printf(log, "%s", line);
    if (tg_runtime_describe_sums(line, sizeof line)) tg_log_printf(log, "%s", line);
}

tg_status tg_cli_memory(const tg_cli_common *c, tg_log *log, double need, const char *terms,
                        tg_error *err) {
    const char *what = "--memory";
    const double mib = 1024.0 * 1024.0,
                 have = c->memory ? (double)c->memory : (double)tg_mem_available(&what);
    /* and the runtime's conversion buffers, workspaces and threads' allocator arenas: krr of
     * 9,900 training samples took 516 MiB more address space than of 270, for 458 MiB of
     * terms */
    need = need * 1.15 + 64 * mib;
    char line[512];
    snprintf(line, sizeof line, "about %.0f MiB at the peak (%s; the runtime 15%% more and 64 "
             "MiB)", need / mib, terms);
    if (have < 0) {
        tg_log_printf(log, "memory: %s; what is available is not known", line);
        return TG_OK;
    }
    tg_log_printf(log, "memory: %s, %.0f MiB available (%s)", line, have / mib, what);
    if (need > have)
        return tg_error_set(err, TG_ERR_NOMEM, "not enough memory: the run needs %s, %.0f MiB "
                            "are available (%s)", line, have / mib, what);
    return TG_OK;
}

tg_status tg_cli_gpu_memory(tg_log *log, double data, double task, const char *terms,
                            const char *smaller, tg_error *err) {
    const int ngpu = tg_runtime_ngpu();
    const double mib = 1024.0 * 1024.0, have = (double)tg_runtime_gpu_memory();
    if (ngpu < 1) return TG_OK;
    char line[512];
    snprintf(line, sizeof line, "about %.0f MiB of data a GPU (%s), %.0f MiB for the largest "
             "task", data / mib, terms, task / mib);
    if (have <= 0) {
        tg_log_printf(log, "GPU memory: %s; what the GPUs hold is not known", line);
        return TG_OK;
    }
    /* StarPU evicts what no task needs to host memory, but holds several tasks' data at once
     * (the running, the pipelined, the prefetched): krr's tasks of 6 MiB ran on a GPU of
     * 32 MiB and never ended on 24 (StarPU 1.3.10, H100) */
    const double held = 5 * task;
    tg_log_printf(log, "GPU memory: %s, %.0f MiB on each of %d GPU%s%s", line, have / mib, ngpu,
                  ngpu == 1 ? "" : "s", data <= have ? "" : "; what does not fit stays in host "
                  "memory and StarPU moves it in as tasks need it (slower than a run that fits)");
    if (held > have)
        return tg_error_set(err, TG_ERR_NOMEM, "not enough GPU memory: one task needs %.0f MiB, "
                            "StarPU holds about five tasks' data at once (%.0f MiB) and a GPU "
                            "has %.0f MiB (%s): %s", task / mib, held / mib, have / mib, line,
                            smaller);
    return TG_OK;
}

void tg_cli_log_runtime(tg_log *log, const tg_runtime_opts *ro) {
    char desc[2048];
    tg_runtime_describe(desc, sizeof desc);
    tg_log_printf(log, "runtime: %s", desc);
    if (ro->ncpu < 0 && !ro->cpus_help_gpus && tg_runtime_ngpu() > 0)
        tg_log_printf(log, "no CPU workers beside the GPUs for this workload (measured on the H100 "
                      "node: they never got a task and slowed the GPU by 4-15%%; "
                      "docs/SCHEDULING.md); --ncpu N adds them");
}

void tg_cli_log_grid(tg_log *log, const char *tiles, const char *panels) {
    int r = tg_runtime_nranks(), p, q;
    if (r < 2) return;
    tg_runtime_grid(&p, &q);
    tg_log_printf(log, "%d MPI ranks, process grid %dx%d: tile (i, j)%s on rank (i mod %d)*%d + "
                  "(j mod %d); %s by rank p mod %d", r, p, q, tiles, p, q, q, panels, r);
}

typedef struct {
    const tg_bed *bed;
    const tg_snp_stats *stats;
    int k;
    int64_t rows;
    const double *v;
} values_job;

static void values_rows(void *ctx, FILE *f, int64_t r0, int64_t r1) {
    const values_job *j = ctx;
    char num[32];
    for (int64_t i = r0; i < r1; i++) {
        if (!j->stats) {
            fprintf(f, "%s\t%s", j->bed->samples[i].fid, j->bed->samples[i].iid);
        } else {
            tg_snp_key_write(f, &j->bed->snps[i]);
            tg_snp_stats_write(f, &j->stats[i]);
        }
        for (int c = 0; c < j->k; c++) {
            const double x = j->v[i + c * j->rows];
            if (isnan(x)) /* no value (a sample missing a covariate): plink's NA */
                strcpy(num, "NA");
            else
                tg_text_format_double(x, num);
            fprintf(f, "\t%s", num);
        }
        fputc('\n', f);
    }
}

tg_status tg_cli_write_values(const char *prefix, const char *suffix, const tg_bed *bed,
                              const tg_snp_stats *stats, int k, char *const *names,
                              const double *v, tg_error *err) {
    FILE *f;
    char *path = NULL;
    tg_status st = tg_out_open(prefix, suffix, &f, &path, err);
    if (st) return st;
    values_job j = {bed, stats, k, stats ? bed->n_snps : bed->n_samples, v};
    fputs(stats ? TG_SNP_KEY_HEADER TG_SNP_STATS_HEADER : "FID\tIID", f);
    for (int c = 0; c < k; c++) fprintf(f, "\t%s", names[c]);
    fputc('\n', f);
    /* blocks of about 64 kB of text: tens of them per thread at a million values */
    st = tg_out_rows(f, path, j.rows, 1 + 4096 / (k + 1), values_rows, &j, err);
    if (st)
        tg_out_discard(f);
    else
        st = tg_out_close(f, path, err);
    free(path);
    return st;
}
