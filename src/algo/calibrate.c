/* tg_calibrate, what `tilegwas calibrate` runs: every kernel the workloads use over a range of
 * sizes on each worker kind of this machine until StarPU's performance models are calibrated,
 * the fits widened to every size, then a check of them on sizes never run (predicted against
 * measured). The sizes and workloads are in calibrate_sweep.c; what it needs of StarPU (its
 * calibration settings, bus bandwidths, records by worker kind) in src/runtime/calibration.c. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/calibrate.h"
#include "io/out.h"

tg_calibrate_opts tg_calibrate_defaults(void) {
    return (tg_calibrate_opts){.rt = tg_runtime_defaults(), .workloads = TG_CALIBRATE_ALL,
                               .reps = 3};
}

tg_status tg_calibrate_check(const tg_calibrate_opts *o, tg_error *err) {
    if (!o->workloads || (o->workloads & ~(unsigned)TG_CALIBRATE_ALL))
        return tg_error_set(err, TG_ERR_ARG, "calibrate: workloads %#x: not a non-empty set of "
                            "TG_CALIBRATE_*", o->workloads);
    if (o->reps < 1) return tg_error_set(err, TG_ERR_ARG, "--reps %d: must be ≥ 1", o->reps);
    if (tg_runtime_nranks() > 1)
        return tg_error_set(err, TG_ERR_ARG, "calibrate runs on one rank (each node calibrates "
                            "its own models: run it once per kind of node)");
    return TG_OK;
}

void tg_calibrate_log(const tg_calibrate_opts *o, int detail, const char *fmt, ...) {
    if (!o->log_line) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->log_line(o->log_ctx, detail, line);
}

/* One started runtime per worker kind: only those workers, so each kind is measured at every
 * size (under a scheduler the GPU would take nearly every task). StarPU's calibration @p mode
 * and @p bus are set for this start (tg_calibration_set). */
static tg_status start_kind(const tg_calibrate_opts *c, tg_worker_kind kind, int mode, int bus,
                            const tg_calibration_env *user, tg_error *err) {
    tg_runtime_opts o = c->rt;
    if (kind == TG_WORKER_CPU) o.ngpu = 0;
    else o.ncpu = 0;
    tg_calibration_set(mode, bus);
    tg_status st = tg_runtime_start(&o, err);
    tg_calibration_started(user);
    return st;
}

/* The runtime and StarPU's bus bandwidths, once, in the log. */
static void log_runtime(const tg_calibrate_opts *o) {
    char desc[2048];
    tg_runtime_describe(desc, sizeof desc);
    tg_calibrate_log(o, 0, "runtime: %s", desc);
    char *text = tg_runtime_bus_text();
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n"))
        tg_calibrate_log(o, 1, "bus: %s", line);
    free(text);
}

/* Calibration: StarPU records every task and writes the models at each stop. */
static tg_status calibrate_kinds(const tg_calibrate_opts *o, const tg_worker_kind *kinds, int nk,
                                 const char *dir, const tg_calibration_env *user, tg_error *err) {
    tg_status st = TG_OK;
    for (int k = 0; k < nk && !st; k++) {
        if ((st = start_kind(o, kinds[k], o->reset && k == 0 ? 2 : 1, o->bus && k == 0, user,
                             err)))
            break;
        if (k == 0) log_runtime(o);
        tg_calibrate_log(o, 0, "calibrating on the %s workers",
                         kinds[k] == TG_WORKER_CPU ? "CPU" : "GPU");
        tg_calibrate_pass s = {kinds[k], tg_calibrate_tiles(kinds[k], o->quick, nk > 1),
                               tg_calibrate_samples(kinds[k], o->quick), o->reps, dir};
        st = tg_calibrate_sweep(&s, o, err);
        tg_runtime_stop();
    }
    return st;
}

/* Verification: the models as later runs load them, on sizes between those calibrated; every
 * task recorded with its prediction, summed into @p sums. */
static tg_status verify_kinds(const tg_calibrate_opts *o, const tg_worker_kind *kinds, int nk,
                              const char *dir, const tg_calibration_env *user,
                              tg_record_sum **sums, size_t *nsums, tg_error *err) {
    tg_status st = TG_OK;
    for (int k = 0; k < nk && !st; k++) {
        if ((st = start_kind(o, kinds[k], 0, 0, user, err))) break;
        int vt[8], vs[8];
        tg_calibrate_between(tg_calibrate_tiles(kinds[k], o->quick, nk > 1), vt, 16);
        tg_calibrate_between(tg_calibrate_samples(kinds[k], o->quick), vs, 64);
        /* quick sizes take microseconds, which one time slice of a loaded machine turns into
         * milliseconds: two tasks a size, and the fastest is reported beside the mean */
        tg_calibrate_pass s = {kinds[k], vt, vs, o->quick ? 2 : 1, dir};
        tg_record_start(1);
        st = tg_calibrate_sweep(&s, o, err);
        size_t n;
        tg_task_record *r = tg_record_stop(&n);
        tg_record_sum *g = realloc(*sums, (*nsums + n) * sizeof *g);
        if (g) *sums = g, *nsums = tg_record_sums(r, n, g, *nsums);
        else if (!st) st = tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
        free(r);
        tg_runtime_stop();
    }
    return st;
}

static int row_cmp(const void *a, const void *b) {
    const tg_calibrate_row *x = a, *y = b;
    int c = strcmp(x->kernel, y->kernel);
    if (c) return c;
    c = strcmp(x->worker, y->worker);
    if (c) return c;
    return (x->work > y->work) - (x->work < y->work);
}

/* The report's rows from the sums: means per task, sorted by kernel, worker kind and work. */
static tg_status report_rows(const tg_record_sum *sums, size_t n, tg_calibrate_report *rep,
                             tg_error *err) {
    rep->rows = n ? tg_malloc_n((int64_t)n, 1, sizeof *rep->rows, NULL) : NULL;
    if (n && !rep->rows) return tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
    for (size_t i = 0; i < n; i++)
        rep->rows[i] = (tg_calibrate_row){sums[i].kernel,
                                          sums[i].kind == TG_WORKER_CPU ? "cpu" : "cuda",
                                          sums[i].work,
                                          sums[i].tasks,
                                          sums[i].measured / (double)sums[i].tasks,
                                          sums[i].predicted / (double)sums[i].tasks,
                                          sums[i].fastest};
    rep->nrows = n;
    qsort(rep->rows, n, sizeof *rep->rows, row_cmp);
    return TG_OK;
}

/* The scratch filesets and their folder. */
static void remove_scratch(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[2 * PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.') unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
}

tg_status tg_calibrate(const tg_calibrate_opts *o, tg_calibrate_report *rep, tg_error *err) {
    memset(rep, 0, sizeof *rep);
    tg_status st = tg_calibrate_check(o, err);
    if (st) return st;
    char dir[] = "/tmp/tilegwas-calibrate-XXXXXX";
    if (!mkdtemp(dir))
        return tg_error_set(err, TG_ERR_IO, "cannot create a scratch directory in /tmp");
    tg_worker_kind kinds[2];
    int nk = 0, ndev = tg_cuda_device_count();
    if (o->rt.ncpu != 0) kinds[nk++] = TG_WORKER_CPU;
    if (o->rt.ngpu != 0 && ndev > 0) kinds[nk++] = TG_WORKER_CUDA;
    if (!nk) {
        rmdir(dir);
        return tg_error_set(err, TG_ERR_ARG, "no worker to calibrate (--ncpu 0 and %s)",
                            ndev ? "--ngpu 0" : "no GPU");
    }
    double t0 = tg_now();
    tg_calibration_env user; /* the user's own settings come back after each forced one */
    tg_calibration_begin(&user);
    st = calibrate_kinds(o, kinds, nk, dir, &user, err);
    if (!st) st = tg_perfmodels_finish(o->export_dir, &rep->nmodels, err);
    if (!st)
        tg_calibrate_log(o, 0, "calibrated %d models in %.1f s; checking them on sizes never run",
                         rep->nmodels, tg_now() - t0);
    tg_record_sum *sums = NULL;
    size_t nsums = 0;
    if (!st) st = verify_kinds(o, kinds, nk, dir, &user, &sums, &nsums, err);
    tg_calibration_end(&user);
    if (!st) st = report_rows(sums, nsums, rep, err);
    free(sums);
    remove_scratch(dir);
    return st;
}

void tg_calibrate_report_free(tg_calibrate_report *rep) {
    free(rep->rows);
    memset(rep, 0, sizeof *rep);
}
