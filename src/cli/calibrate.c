/* tilegwas calibrate: parses the options, calls tg_calibrate (src/algo/calibrate.c), writes
 * its table (PREFIX.calibrate.tsv) and logs the median error per kernel and worker kind. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

static const char *help =
    "usage: tilegwas calibrate [options]\n"
    "Calibrates StarPU's performance model of every tilegwas kernel (KRR build, tile Cholesky\n"
    "and solve, RR's X'X, epistasis rounds, genotype products) on each worker kind of this\n"
    "machine, one kind at a time, over a range of sizes; makes each fitted model valid for every\n"
    "size (StarPU otherwise re-calibrates outside the sizes measured); then runs the kernels at\n"
    "sizes between those calibrated and prints, per kernel and worker kind, the predicted and\n"
    "measured times. Models are kept where StarPU keeps them (.starpu/ under XDG_CACHE_HOME,\n"
    "STARPU_HOME or HOME; STARPU_PERF_MODEL_DIR replaces the whole path)\n"
    "under this host's name, and every later run uses them.\n"
    "Outputs: PREFIX.calibrate.tsv (kernel, worker kind, work, tasks, measured and predicted\n"
    "mean ms, relative error, fastest task's ms), PREFIX.log (with StarPU's bus bandwidths).\n\n"
    "options:\n"
    "  --quick          small sizes only (a minute or two on 2 cores; what `make check` runs)\n"
    "  --workloads LIST comma-separated of krr, rr, epistasis, snpmm (default: all)\n"
    "  --reps N         repetitions of each size (default 3)\n"
    "  --reset          forget the models calibrated so far (STARPU_CALIBRATE=2)\n"
    "  --bus            measure the bus again (STARPU_BUS_CALIBRATE=1)\n"
    "  --export DIR     also write the models as a profile in DIR (DIR/machine.txt names this\n"
    "                   machine's CPU and GPUs; ship it as perfmodels/NAME/)\n"
    "  --help           this text\n" TG_CLI_COMMON_HELP;

/* tg_calibrate_opts.log_line: the account in the log, the details in its file only */
static void log_line(void *ctx, int detail, const char *line) {
    if (detail) tg_log_file_only(ctx, "%s", line);
    else tg_log_printf(ctx, "%s", line);
}

/* The median |predicted/measured - 1| of each kernel and worker kind, in the log. */
static void log_medians(tg_log *log, const tg_calibrate_report *rep) {
    const tg_calibrate_row *rows = rep->rows;
    for (size_t i = 0, j; i < rep->nrows; i = j) {
        double e[256];
        int ne = 0;
        for (j = i; j < rep->nrows && !strcmp(rows[j].kernel, rows[i].kernel) &&
                    !strcmp(rows[j].worker, rows[i].worker);
             j++) {
            double x = fabs(rows[j].predicted / rows[j].measured - 1);
            /* sizes without a prediction: counted in the summary line */
            if (ne < 256 && isfinite(x)) e[ne++] = x;
        }
        for (int a = 1; a < ne; a++)
            for (int b = a; b > 0 && e[b] < e[b - 1]; b--) {
                double x = e[b];
                e[b] = e[b - 1], e[b - 1] = x;
            }
        tg_log_printf(log, "  %-24s %-4s %3d sizes, median |predicted/measured - 1| %.2f",
                      rows[i].kernel, rows[i].worker, ne, ne ? e[ne / 2] : NAN);
    }
}

/* PREFIX.calibrate.tsv, then the medians and a summary in the log. */
static tg_status write_table(const char *out, const tg_calibrate_report *rep,
                             const char *export_dir, double t0, tg_log *log, tg_error *err) {
    FILE *f = NULL;
    char *path = NULL;
    tg_status st = tg_out_open(out, ".calibrate.tsv", &f, &path, err);
    if (st) return st;
    fputs("kernel\tworker\twork\ttasks\tmeasured_ms\tpredicted_ms\trel_error\tfastest_ms\n", f);
    int bad = 0;
    for (size_t i = 0; i < rep->nrows; i++) {
        const tg_calibrate_row *r = &rep->rows[i];
        double m = r->measured * 1e3, p = r->predicted * 1e3, e = (p - m) / m;
        bad += !isfinite(p);
        fprintf(f, "%s\t%s\t%.6g\t%lld\t%.4g\t%.4g\t%.3f\t%.4g\n", r->kernel, r->worker, r->work,
                (long long)r->tasks, m, p, e, r->fastest * 1e3);
    }
    if ((st = tg_out_close(f, path, err))) {
        free(path);
        return st;
    }
    log_medians(log, rep);
    tg_log_printf(log,
                  "%zu kernel sizes checked (%d without a prediction); wrote %s (%.1f s in all)",
                  rep->nrows, bad, path, tg_now() - t0);
    if (export_dir) tg_log_printf(log, "profile written to %s", export_dir);
    free(path);
    return TG_OK;
}

/* --workloads LIST into a set of TG_CALIBRATE_* */
static tg_status parse_workloads(const char *arg, unsigned *set, tg_error *err) {
    static const char *const names[] = {"krr", "rr", "epistasis", "snpmm"};
    tg_status st = TG_OK;
    *set = 0;
    char *list = strdup(arg), *save = NULL;
    for (char *w = list ? strtok_r(list, ",", &save) : NULL; w && !st;
         w = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < 4 && strcmp(w, names[k])) k++;
        if (k == 4)
            st = tg_error_set(err, TG_ERR_ARG, "--workloads: unknown workload '%s' (known: krr, "
                              "rr, epistasis, snpmm)", w);
        *set |= 1u << k;
    }
    free(list);
    if (!st && !*set) st = tg_error_set(err, TG_ERR_ARG, "--workloads: empty list");
    return st;
}

static int run(const tg_cli_common *c, tg_calibrate_opts *o, tg_log *log) {
    tg_error err = {0};
    double t0 = tg_now();
    o->rt = c->rt;
    o->log_line = log_line;
    o->log_ctx = log;
    tg_calibrate_report rep;
    tg_status st = tg_calibrate(o, &rep, &err);
    if (!st) st = write_table(c->out, &rep, o->export_dir, t0, log, &err);
    tg_calibrate_report_free(&rep);
    return st ? tg_cli_fail("calibrate", log, &err) : 0;
}

int tg_cmd_calibrate(int argc, char **argv) {
    enum { O_QUICK = 1, O_WORK, O_REPS, O_RESET, O_BUS, O_EXPORT, O_HELP };
    static const struct option opts[] = {
        {"quick", no_argument, 0, O_QUICK}, {"workloads", required_argument, 0, O_WORK},
        {"reps", required_argument, 0, O_REPS}, {"reset", no_argument, 0, O_RESET},
        {"bus", no_argument, 0, O_BUS}, {"export", required_argument, 0, O_EXPORT},
        {"help", no_argument, 0, O_HELP}, TG_CLI_COMMON_OPTIONS, {0, 0, 0, 0}};
    tg_cli_common c;
    tg_cli_common_init(&c);
    tg_calibrate_opts cal = tg_calibrate_defaults();
    tg_error err = {0};
    int64_t reps = cal.reps;
    tg_status st = TG_OK;
    int o;
    opterr = 0;
    while (!st && (o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case O_QUICK: cal.quick = 1; break;
        case O_WORK: st = parse_workloads(optarg, &cal.workloads, &err); break;
        case O_REPS: st = tg_cli_int("reps", optarg, 1, 100, &reps, &err); break;
        case O_RESET: cal.reset = 1; break;
        case O_BUS: cal.bus = 1; break;
        case O_EXPORT: cal.export_dir = optarg; break;
        case O_HELP: fputs(help, stdout); return 0;
        case '?':
        case ':': st = tg_cli_bad_option(argv, &err); break;
        default: st = tg_cli_common_option(&c, o, optarg, argv, &err);
        }
    }
    cal.reps = (int)reps;
    if (!st) st = tg_cli_no_operand(argc, argv, &err);
    if (!st) st = tg_calibrate_check(&cal, &err);
    if (st) return tg_cli_fail_options("calibrate", &err);
    if ((st = tg_cli_check_outputs(&c, &err))) return tg_cli_fail("calibrate", NULL, &err);
    if (cal.export_dir && mkdir(cal.export_dir, 0755) && errno != EEXIST) {
        tg_error_set(&err, TG_ERR_IO, "--export %s: cannot create the directory: %s",
                     cal.export_dir, strerror(errno));
        return tg_cli_fail("calibrate", NULL, &err);
    }
    tg_log *log = NULL;
    if (tg_log_open(&log, c.out, argc, argv, &err)) return tg_cli_fail("calibrate", NULL, &err);
    tg_log_set_quiet(log, c.quiet);
    int rc = run(&c, &cal, log);
    tg_log_close(log);
    return rc;
}
