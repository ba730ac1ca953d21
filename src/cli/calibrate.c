/* tilegwas calibrate: runs every kernel the workloads use over a range of sizes on each worker
 * kind of this machine until StarPU's performance models are calibrated, widens the fits to
 * every size, then checks them on sizes never run (predicted against measured). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/calibrate.h"
#include "runtime/runtime.h"

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


/* One started runtime per worker kind: only those workers, so each kind is measured at every
 * size (under a scheduler the GPU would take nearly every task). */
static tg_status start_kind(const tg_cli_common *c, int kind, tg_error *err) {
    tg_runtime_opts o = c->rt;
    if (kind == STARPU_CPU_WORKER) o.ngpu = 0;
    else o.ncpu = 0;
    return tg_runtime_start(&o, err);
}

typedef struct {
    const char *kernel;
    int kind;
    double work, n, measured, predicted, fastest;
} row;

static int row_cmp(const void *a, const void *b) {
    const row *x = a, *y = b;
    int c = strcmp(x->kernel, y->kernel);
    if (c) return c;
    if (x->kind != y->kind) return x->kind - y->kind;
    return (x->work > y->work) - (x->work < y->work);
}

/* Sums the records into rows (kernel, worker kind, work). */
static size_t aggregate(const tg_task_record *r, size_t n, row *rows, size_t nrows) {
    for (size_t i = 0; i < n; i++) {
        int kind = starpu_worker_get_type(r[i].worker);
        size_t k = 0;
        while (k < nrows && !(rows[k].kernel == r[i].kernel && rows[k].kind == kind &&
                              rows[k].work == r[i].work))
            k++;
        if (k == nrows) rows[nrows++] = (row){r[i].kernel, kind, r[i].work, 0, 0, 0, INFINITY};
        double t = r[i].end - r[i].start;
        rows[k].n++;
        rows[k].measured += t;
        rows[k].fastest = fmin(rows[k].fastest, t);
        rows[k].predicted += r[i].predicted;
    }
    return nrows;
}

static int run(const tg_cli_common *c, int quick, int workloads, int reps, int reset, int bus,
               const char *export, tg_log *log) {
    tg_error err = {0};
    tg_status st = TG_OK;
    char dir[] = "/tmp/tilegwas-calibrate-XXXXXX";
    if (!mkdtemp(dir)) {
        tg_error_set(&err, TG_ERR_IO, "cannot create a scratch directory in /tmp");
        return tg_cli_fail("calibrate", log, &err);
    }
    int kinds[2], nk = 0;
    if (c->rt.ncpu != 0) kinds[nk++] = STARPU_CPU_WORKER;
    int ndev = 0;
#ifdef TG_USE_CUDA
    if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
#endif
    if (c->rt.ngpu != 0 && ndev > 0) kinds[nk++] = STARPU_CUDA_WORKER;
    if (!nk) {
        rmdir(dir);
        tg_error_set(&err, TG_ERR_ARG, "no worker to calibrate (--ncpu 0 and %s)",
                     ndev ? "--ngpu 0" : "no GPU");
        return tg_cli_fail("calibrate", log, &err);
    }
    row *rows = NULL;
    size_t nrows = 0;
    double t0 = tg_now();
    /* calibration: StarPU records every task and writes the models at each stop */
    /* the user's own settings come back after each forced one */
    char *user_cal = getenv("STARPU_CALIBRATE"), *user_bus = getenv("STARPU_BUS_CALIBRATE");
    user_cal = user_cal ? strdup(user_cal) : NULL;
    user_bus = user_bus ? strdup(user_bus) : NULL;
    for (int k = 0; k < nk && !st; k++) {
        setenv("STARPU_CALIBRATE", reset && k == 0 ? "2" : "1", 1);
        if (bus && k == 0) setenv("STARPU_BUS_CALIBRATE", "1", 1);
        if ((st = start_kind(c, kinds[k], &err))) break;
        if (user_bus) setenv("STARPU_BUS_CALIBRATE", user_bus, 1);
        else unsetenv("STARPU_BUS_CALIBRATE");
        if (k == 0) {
            tg_cli_log_runtime(log, &c->rt);
            char *text = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&text, &len);
            if (m) {
                starpu_bus_print_bandwidth(m);
                fclose(m);
                for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                    tg_log_file_only(log, "bus: %s", line);
                free(text);
            }
        }
        tg_log_printf(log, "calibrating on the %s workers", kinds[k] == STARPU_CPU_WORKER ? "CPU" : "GPU");
        sweep s = {kinds[k], calibrate_tiles(kinds[k], quick, nk > 1),
                   calibrate_samples(kinds[k], quick),
                   reps, dir};
        st = calibrate_sweep(&s, workloads, quick, log, &err);
        tg_runtime_stop();
    }
    int nmodels = 0;
    if (!st) st = tg_perfmodels_finish(export, &nmodels, &err);
    if (!st)
        tg_log_printf(log, "calibrated %d models in %.1f s; checking them on sizes never run", nmodels,
                      tg_now() - t0);
    /* verification: the models as later runs load them, on sizes between those calibrated */
    setenv("STARPU_CALIBRATE", "0", 1);
    for (int k = 0; k < nk && !st; k++) {
        if ((st = start_kind(c, kinds[k], &err))) break;
        const int *tiles = calibrate_tiles(kinds[k], quick, nk > 1);
        const int *samples = calibrate_samples(kinds[k], quick);
        int vt[8], vs[8];
        calibrate_between(tiles, vt, 16);
        calibrate_between(samples, vs, 64);
        /* quick sizes take microseconds, which one time slice of a loaded machine turns into
         * milliseconds: two tasks a size, and the fastest is reported beside the mean */
        sweep s = {kinds[k], vt, vs, quick ? 2 : 1, dir};
        tg_record_start(1);
        st = calibrate_sweep(&s, workloads, quick, log, &err);
        size_t n;
        tg_task_record *r = tg_record_stop(&n);
        row *g = realloc(rows, (nrows + n) * sizeof *g);
        if (g) rows = g, nrows = aggregate(r, n, rows, nrows);
        else if (!st) st = tg_error_set(&err, TG_ERR_NOMEM, "calibrate: out of memory");
        free(r);
        tg_runtime_stop();
    }
    if (user_cal) setenv("STARPU_CALIBRATE", user_cal, 1);
    else unsetenv("STARPU_CALIBRATE");
    free(user_cal);
    free(user_bus);
    FILE *f = NULL;
    char *path = NULL;
    if (!st && !(st = tg_out_open(c->out, ".calibrate.tsv", &f, &path, &err))) {
        qsort(rows, nrows, sizeof *rows, row_cmp);
        fputs("kernel\tworker\twork\ttasks\tmeasured_ms\tpredicted_ms\trel_error\tfastest_ms\n", f);
        int bad = 0;
        double worst = 0;
        for (size_t i = 0; i < nrows; i++) {
            double m = rows[i].measured / rows[i].n * 1e3, p = rows[i].predicted / rows[i].n * 1e3;
            double e = (p - m) / m;
            bad += !isfinite(p);
            if (isfinite(e) && fabs(e) > worst) worst = fabs(e);
            fprintf(f, "%s\t%s\t%.6g\t%.0f\t%.4g\t%.4g\t%.3f\t%.4g\n", rows[i].kernel,
                    rows[i].kind == STARPU_CPU_WORKER ? "cpu" : "cuda", rows[i].work, rows[i].n, m, p,
                    e, rows[i].fastest * 1e3);
        }
        st = tg_out_close(f, path, &err);
        /* the median error per kernel and kind, in the log */
        for (size_t i = 0, j; !st && i < nrows; i = j) {
            double e[256];
            int ne = 0;
            for (j = i; j < nrows && rows[j].kernel == rows[i].kernel && rows[j].kind == rows[i].kind; j++) {
                double x = fabs(rows[j].predicted / rows[j].measured - 1);
                if (ne < 256 && isfinite(x)) e[ne++] = x; /* sizes without a prediction: counted below */
            }
            for (int a = 1; a < ne; a++)
                for (int b = a; b > 0 && e[b] < e[b - 1]; b--) {
                    double x = e[b];
                    e[b] = e[b - 1], e[b - 1] = x;
                }
            tg_log_printf(log, "  %-24s %-4s %3d sizes, median |predicted/measured - 1| %.2f",
                          rows[i].kernel, rows[i].kind == STARPU_CPU_WORKER ? "cpu" : "cuda", ne,
                          ne ? e[ne / 2] : NAN);
        }
        if (!st)
            tg_log_printf(log, "%zu kernel sizes checked (%d without a prediction); wrote %s (%.1f s in all)",
                          nrows, bad, path, tg_now() - t0);
        if (!st && export) tg_log_printf(log, "profile written to %s", export);
        free(path);
    }
    free(rows);
    /* scratch filesets */
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[2 * PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.') unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
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
    tg_error err = {0};
    int quick = 0, reset = 0, bus = 0, workloads = W_KRR | W_RR | W_EPI | W_SNPMM, o;
    int64_t reps = 3;
    const char *export = NULL;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case O_QUICK: quick = 1; break;
        case O_WORK: {
            static const char *const names[] = {"krr", "rr", "epistasis", "snpmm"};
            workloads = 0;
            char *list = strdup(optarg), *save = NULL;
            for (char *w = list ? strtok_r(list, ",", &save) : NULL; w && !st;
                 w = strtok_r(NULL, ",", &save)) {
                int k = 0;
                while (k < 4 && strcmp(w, names[k])) k++;
                if (k == 4)
                    st = tg_error_set(&err, TG_ERR_ARG,
                                      "--workloads: unknown workload '%s' (known: krr, rr, "
                                      "epistasis, snpmm)", w);
                workloads |= 1 << k;
            }
            free(list);
            if (!st && !workloads) st = tg_error_set(&err, TG_ERR_ARG, "--workloads: empty list");
            break;
        }
        case O_REPS: st = tg_cli_int("reps", optarg, 1, 100, &reps, &err); break;
        case O_RESET: reset = 1; break;
        case O_BUS: bus = 1; break;
        case O_EXPORT: export = optarg; break;
        case O_HELP: fputs(help, stdout); return 0;
        case '?':
        case ':': st = tg_cli_bad_option(argv, &err); break;
        default: st = tg_cli_common_option(&c, o, optarg, &err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, &err);
    if (!st && tg_runtime_nranks() > 1)
        st = tg_error_set(&err, TG_ERR_ARG, "calibrate runs on one rank (each node calibrates "
                          "its own models: run it once per kind of node)");
    if (st) return tg_cli_fail_options("calibrate", &err);
    if ((st = tg_out_check_prefix(c.out, &err))) return tg_cli_fail("calibrate", NULL, &err);
    if (export && mkdir(export, 0755) && errno != EEXIST) {
        tg_error_set(&err, TG_ERR_IO, "--export %s: cannot create the directory: %s", export,
                     strerror(errno));
        return tg_cli_fail("calibrate", NULL, &err);
    }
    tg_log *log = NULL;
    if (tg_log_open(&log, c.out, argc, argv, &err)) return tg_cli_fail("calibrate", NULL, &err);
    tg_log_set_quiet(log, c.quiet);
    int rc = run(&c, quick, workloads, (int)reps, reset, bus, export, log);
    tg_log_close(log);
    return rc;
}
