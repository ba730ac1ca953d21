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

#include "base/rng.h"
#include "cli/cli.h"
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

enum { W_KRR = 1, W_RR = 2, W_EPI = 4, W_SNPMM = 8 };

typedef struct {
    int kind;           /* STARPU_CPU_WORKER or STARPU_CUDA_WORKER */
    const int *tiles;   /* tile edges, 0-terminated */
    const int *samples; /* epistasis sample counts, 0-terminated */
    int reps;
    const char *dir;    /* scratch directory for the random filesets */
} sweep;

/* Sizes per worker kind: tile edges of the Cholesky and build kernels (every other size follows
 * from them) and epistasis sample counts. Verification runs the geometric means of neighbours,
 * sizes the calibration never ran. */
static const int cpu_tiles[] = {64, 128, 256, 512, 0}, cpu_samples[] = {1024, 4096, 16384, 0};
/* CPU workers of a node with GPUs: also the GPUs' smallest tile size, at which the scheduler
 * weighs a core against a GPU (2048 took 51 s a repetition on the H100 node's cores) */
static const int cpu_gpu_node_tiles[] = {64, 128, 256, 512, 1024, 0};
static const int gpu_tiles[] = {256, 512, 1024, 2048, 4096, 0},
                 gpu_samples[] = {8192, 32768, 131072, 0};
static const int quick_tiles[] = {32, 64, 128, 0}, quick_samples[] = {256, 1024, 0};

static const int *tiles_of(int kind, int quick, int ngpu) {
    if (quick) return quick_tiles;
    if (kind == STARPU_CUDA_WORKER) return gpu_tiles;
    return ngpu ? cpu_gpu_node_tiles : cpu_tiles;
}

static int count(const int *v) {
    int n = 0;
    while (v[n]) n++;
    return n;
}

/* Geometric means of neighbours, rounded to a multiple of @p mult. */
static void between(const int *v, int *out, int mult) {
    int n = count(v), k = 0;
    for (int i = 0; i + 1 < n; i++) {
        int m = (int)(sqrt((double)v[i] * v[i + 1]) / mult + 0.5) * mult;
        out[k++] = m > v[i] ? m : v[i] + mult;
    }
    out[k] = 0;
}

/* A random fileset PREFIX = dir/name, written once per run. */
static tg_status fileset(const sweep *s, const char *name, int64_t n, int64_t m, tg_bed *bed,
                         tg_error *err) {
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s/%s_%lld_%lld", s->dir, name, (long long)n, (long long)m);
    char bedpath[PATH_MAX + 8];
    snprintf(bedpath, sizeof bedpath, "%s.bed", prefix);
    tg_status st = access(bedpath, R_OK) == 0 ? TG_OK
                                               : tg_bed_write_random(prefix, n, m, 12345, err);
    return st ? st : tg_bed_open(prefix, bed, err);
}

/* KRR at tile edge nb through the library's workflow (tg_krr_fit, tg_krr_predict): each
 * forced precision map's factorisation with fused builds of K and K_t (dot products in the
 * kernel's task), then an adaptive map over two γ, whose kernels come from kept dot products of
 * both cohorts; the solve and the prediction of a test cohort every time. */
static tg_status run_krr(const sweep *s, int nb, tg_error *err) {
    const int64_t n = 3 * (int64_t)nb + nb / 2, snps = nb < 128 ? 256 : 2 * nb, nt = nb + nb / 2;
    tg_bed bed;
    tg_status st = fileset(s, "krr", n + nt, snps, &bed, err);
    if (st) return st;
    int64_t *rows = malloc((size_t)(n + nt) * sizeof *rows);
    double *y = malloc((size_t)n * 4 * sizeof *y), *pred = malloc((size_t)nt * 8 * sizeof *pred);
    if (!rows || !y || !pred) st = tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
    for (int64_t i = 0; !st && i < n + nt; i++) rows[i] = i;
    tg_rng rng;
    tg_rng_seed(&rng, 7);
    for (int64_t i = 0; !st && i < 4 * n; i++) y[i] = tg_rng_normal(&rng);
    const double gammas[2] = {1.0 / (double)snps, 2.0 / (double)snps},
                 alpha = 1 + 0.1 * sqrt((double)n);
    static const char *const names[4] = {"y1", "y2", "y3", "y4"};
    /* every precision the adaptive map can choose (FP16 and FP8 tiles below FP32 diagonals: the
     * FP16 panel solve and its scaled copy of L⁻¹, tg_trsm_fp16 and tg_half_scaled_fp32) */
    static const struct {
        tg_prec diag;
        unsigned low;
    } maps[] = {{TG_FP64, 0}, {TG_FP32, 0}, {TG_FP32, 1u << TG_FP16}, {TG_FP32, 1u << TG_FP8_E4M3},
                {TG_FP64, 1u << TG_FP32 | 1u << TG_FP16}};
    const size_t nmaps = sizeof maps / sizeof *maps;
    for (size_t k = 0; k < nmaps && !st; k++) {
        const int last = k + 1 == nmaps; /* adaptive, two γ */
        tg_krr_opts o = tg_krr_defaults();
        o.gamma = gammas, o.ngamma = last ? 2 : 1;
        o.alpha = &alpha, o.nalpha = 1;
        o.nb = nb;
        o.diag = maps[k].diag;
        o.diag_fixed = 1;
        o.allowed = maps[k].low ? maps[k].low : 1u << maps[k].diag;
        o.band = last ? -1 : 0;
        o.accuracy = 1e-6;
        tg_krr_model *m = NULL;
        if (!(st = tg_krr_fit(&bed, rows, n, 4, y, n, names, &o, &m, NULL, err)))
            st = tg_krr_predict(m, &bed, rows + n, nt, NULL, 0, pred, nt, NULL, err);
        tg_krr_model_free(m);
    }
    free(pred);
    free(y);
    free(rows);
    tg_bed_close(&bed);
    return st;
}

/* RR by the tile Cholesky at SNP tile edge nb: X'X by INT8 panels, FP64 and FP32 factors. */
static tg_status run_rr(int nb, tg_error *err) {
    const int64_t n = 2 * (int64_t)nb, m = 3 * (int64_t)nb + nb / 2;
    int8_t *x = malloc((size_t)(n * m));
    double *y = malloc((size_t)n * sizeof *y), *beta = malloc((size_t)m * sizeof *beta), mu;
    tg_status st = TG_OK;
    if (!x || !y || !beta) st = tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
    tg_rng rng;
    tg_rng_seed(&rng, 11);
    for (int64_t i = 0; !st && i < n * m; i++) x[i] = (int8_t)(tg_rng_u64(&rng) % 3);
    for (int64_t i = 0; !st && i < n; i++) y[i] = tg_rng_normal(&rng);
    for (int d = 0; d < 2 && !st; d++) {
        tg_ridge_chol_opts o = tg_ridge_chol_defaults();
        o.lambda = (double)n;
        o.nb = nb;
        o.chol.diag = d ? TG_FP32 : TG_FP64;
        o.chol.allowed = 1u << o.chol.diag;
        st = tg_ridge_chol(x, n, m, n, 1, 1, y, n, &o, beta, m, &mu, NULL, err);
    }
    free(beta);
    free(y);
    free(x);
    return st;
}

/* Epistasis rounds of every order and score-independent kernel on @p n samples. */
static tg_status run_epi(const sweep *s, int n, int quick, tg_error *err) {
    /* [order][GPU, CPU, quick]: the default blocks on GPUs; smaller on CPUs, where a round of
     * the default blocks takes minutes */
    static const int blocks[3][3] = {{1024, 256, 128}, {256, 64, 32}, {64, 32, 16}};
    tg_status st = TG_OK;
    for (int k = 2; k <= 4 && !st; k++) {
        int b = blocks[k - 2][quick ? 2 : s->kind == STARPU_CPU_WORKER];
        /* three blocks: at least C(3 + k − 1, k) ≥ 10 rounds */
        tg_bed bed;
        if ((st = fileset(s, "epi", n, 3 * b, &bed, err))) break;
        int8_t *cls = malloc((size_t)n);
        if (!cls) st = tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
        for (int i = 0; !st && i < n; i++) cls[i] = i >= n / 2;
        tg_epi_opts o = tg_epi_defaults();
        o.order = k;
        o.block = b;
        tg_epi_report rep = {0};
        if (!st) st = tg_epistasis(&bed, cls, &o, &rep, err);
        tg_epi_report_free(&rep);
        free(cls);
        tg_bed_close(&bed);
    }
    return st;
}

/* Genotype products, both orientations, FP64 and FP32, k = 1, 16, 64 columns. */
static tg_status run_snpmm(int nb, tg_error *err) {
    /* row and SNP blocks stop growing with nb beyond 1024: larger inputs only take longer to
     * make, the products are split into the same blocks */
    int e = nb < 1024 ? nb : 1024;
    const int64_t n = 16 * (int64_t)e + 3, m = 4 * (int64_t)e + 1, len = (n > m ? n : m) * 64;
    int8_t *x = malloc((size_t)(n * m));
    double *in = malloc((size_t)len * sizeof *in), *out = malloc((size_t)len * sizeof *out);
    float *in32 = malloc((size_t)len * sizeof *in32), *out32 = malloc((size_t)len * sizeof *out32);
    tg_geno *g = NULL;
    tg_status st = TG_OK;
    if (!x || !in || !out || !in32 || !out32)
        st = tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
    tg_rng rng;
    tg_rng_seed(&rng, 13);
    for (int64_t i = 0; !st && i < n * m; i++) x[i] = (int8_t)(tg_rng_u64(&rng) % 3);
    for (int64_t i = 0; !st && i < len; i++) in32[i] = (float)(in[i] = tg_rng_normal(&rng));
    if (!st) st = tg_geno_from_int8(x, n, m, n, 0, &g, err);
    static const int ks[] = {1, 16, 64};
    for (int p = 0; p < 2 && !st; p++)
        for (int trans = 0; trans < 2 && !st; trans++)
            for (int c = 0; c < 3 && !st; c++)
                st = tg_geno_mul(g, trans, ks[c], p ? TG_FP32 : TG_FP64, p ? (void *)in32 : in,
                                 trans ? n : m, p ? (void *)out32 : out, trans ? m : n, err);
    tg_geno_free(g);
    free(out32);
    free(in32);
    free(out);
    free(in);
    free(x);
    return st;
}

static tg_status run_sweep(const sweep *s, int workloads, int quick, tg_log *log, tg_error *err) {
    tg_status st = TG_OK;
    for (int r = 0; r < s->reps && !st; r++) {
        for (int i = 0; s->tiles[i] && !st; i++) {
            double t0 = tg_now();
            int nb = s->tiles[i];
            if ((workloads & W_KRR) && (st = run_krr(s, nb, err))) break;
            if ((workloads & W_RR) && (st = run_rr(nb, err))) break;
            if ((workloads & W_SNPMM) && (st = run_snpmm(nb, err))) break;
            tg_log_printf(log, "  %s tile %d: %.2f s", s->kind == STARPU_CPU_WORKER ? "CPU" : "GPU",
                          nb, tg_now() - t0);
        }
        for (int i = 0; (workloads & W_EPI) && s->samples[i] && !st; i++) {
            double t0 = tg_now();
            if ((st = run_epi(s, s->samples[i], quick, err))) break;
            tg_log_printf(log, "  %s epistasis %d samples: %.2f s",
                          s->kind == STARPU_CPU_WORKER ? "CPU" : "GPU", s->samples[i],
                          tg_now() - t0);
        }
    }
    return st;
}

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
        sweep s = {kinds[k], tiles_of(kinds[k], quick, nk > 1),
                   quick ? quick_samples : kinds[k] == STARPU_CPU_WORKER ? cpu_samples : gpu_samples,
                   reps, dir};
        st = run_sweep(&s, workloads, quick, log, &err);
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
        const int *tiles = tiles_of(kinds[k], quick, nk > 1);
        const int *samples = quick ? quick_samples : kinds[k] == STARPU_CPU_WORKER ? cpu_samples : gpu_samples;
        int vt[8], vs[8];
        between(tiles, vt, 16);
        between(samples, vs, 64);
        /* quick sizes take microseconds, which one time slice of a loaded machine turns into
         * milliseconds: two tasks a size, and the fastest is reported beside the mean */
        sweep s = {kinds[k], vt, vs, quick ? 2 : 1, dir};
        tg_record_start(1);
        st = run_sweep(&s, workloads, quick, log, &err);
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
