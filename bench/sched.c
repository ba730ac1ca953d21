/* bench/sched: one workload under several StarPU schedulers and worker sets (CPU only, GPU only,
 * CPUs and GPUs), each run in a freshly started runtime with every task recorded. Per run: the
 * makespan (first task start to last task end), the rate in the workload's useful operations,
 * the busy share of each worker kind (task seconds / (makespan × workers of that kind)), the
 * share of the machine's cores this process used (well below the CPU busy share: other
 * processes took the cores, and task times are inflated), the bytes StarPU moved host → device, device → host and device → device, and two lower bounds
 * on the makespan with makespan / max(bounds):
 *  - area: the least T in which the run's tasks fit on its workers, each task divisible, taking
 *    the time its kernel takes per unit of work on that worker kind (tg_area_bound);
 *  - critical path: the longest chain of the recorded dependencies, each task at its kernel's
 *    time on the fastest kind present (tg_critical_path).
 * Kernel times per kind are the best (per unit of work) of this bench's single-kind runs (the
 * CPU-only runs for CPUs, the GPU-only runs for GPUs), else of every run; a kernel never
 * measured on a kind is taken as unable to run there. docs/SCHEDULING.md explains the measures.
 * Workloads: krr (kernel build + tile Cholesky of K + αI on random genotypes), cholesky (the
 * tile Cholesky of a random SPD matrix), epistasis (the exhaustive search of order 2, 3 or 4).
 * usage: bench/sched [--workload krr|cholesky|epistasis] [--scheds LIST] [--sets LIST]
 *          [--ncpu N] [--ngpu N] [--reps R] [--warmup W] [--out FILE] [--gantt DIR]
 *          [--n N] [--nb NB] [--map M] [--snps S] [--order K] [--samples N] [--block B]
 * defaults: krr, eager,lws,dm,dmda,dmdas,heteroprio, cpu,gpu,cpu+gpu
 * (those this machine can run), 1 rep, 1 warm-up run per set under dmda (calibrates the
 * perfmodels; not reported); krr N 8192, nb 1024, S 4096 SNPs, map fp32 (fp64, fp32,
 * fp32+fp16, fp32+fp8); cholesky N 8192, nb 1024; epistasis order 3, 1024 SNPs × 16384
 * samples, the library's block size. --gantt DIR writes DIR/WORKLOAD-SET-SCHED[-REP].gantt.png
 * and .trace.tsv for every reported run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/rng.h"
#include "bench/common.h"
#include "io/out.h"
#include "runtime/trace.h"
#include "bench/bound.h"
#include "runtime/runtime.h"
#ifdef TG_USE_CUDA
#include <cuda_runtime.h>
#endif

enum { KCPU, KGPU }; /* worker kinds, the index of every per-kind pair */
enum { SET_CPU, SET_GPU, SET_BOTH, NSETS };
static const char *set_names[NSETS] = {"cpu", "gpu", "cpu+gpu"};

/* ---- workloads: inputs made once, per-run preparation (not recorded), the recorded work */

static struct {
    const char *name;
    int64_t n, snps, samples;
    int nb, order, block;
    tg_prec diag;
    unsigned allowed;
    double band;
    char dir[64];
    tg_bed bed;
    int8_t *cls;
    double *a; /* cholesky: the dense SPD matrix */
    /* per run */
    tg_kgeno *g;
    tg_matrix *K;
} wl = {.name = "krr", .n = 8192, .snps = 0, .samples = 16384, .nb = 1024, .order = 3};

static void wl_inputs(void) {
    if (!strcmp(wl.name, "cholesky")) {
        if (!(wl.a = malloc((size_t)(wl.n * wl.n) * sizeof *wl.a)))
            die("no memory for the matrix", NULL);
        tg_rng r;
        tg_rng_seed(&r, 1);
        for (int64_t j = 0; j < wl.n; j++) /* symmetric uniform [-1, 1] plus N·I: SPD */
            for (int64_t i = j; i < wl.n; i++)
                wl.a[i + j * wl.n] = wl.a[j + i * wl.n] =
                    i == j ? (double)wl.n : 2 * tg_rng_uniform(&r) - 1;
        return;
    }
    char prefix[96];
    snprintf(wl.dir, sizeof wl.dir, "/tmp/bench-sched-XXXXXX");
    if (!mkdtemp(wl.dir)) die("mkdtemp", NULL);
    snprintf(prefix, sizeof prefix, "%s/g", wl.dir);
    int krr = !strcmp(wl.name, "krr");
    tg_error err = {0};
    if (tg_bed_write_random(prefix, krr ? wl.n : wl.samples, wl.snps, 2026, &err))
        die("writing the fileset", &err);
    if (tg_bed_open(prefix, &wl.bed, &err)) die("open", &err);
    if (!krr) {
        if (!(wl.cls = malloc((size_t)wl.samples))) die("out of memory", NULL);
        for (int64_t i = 0; i < wl.samples; i++) wl.cls[i] = i < wl.samples / 2 ? 0 : 1;
    }
}

static void wl_prepare(void) {
    tg_error err = {0};
    if (!strcmp(wl.name, "krr")) {
        if (tg_kgeno_create(&wl.bed, NULL, wl.n, TG_KERNEL_GAUSSIAN, NULL, NULL, 0, 0, wl.nb,
                            &wl.g, &err))
            die("krr genotypes", &err);
    } else if (!strcmp(wl.name, "cholesky")) {
        if (tg_matrix_create(&wl.K, wl.n, wl.n, wl.nb, wl.nb, TG_SYM_LOWER, wl.diag, 0, 0, &err) ||
            tg_matrix_from_dense(wl.K, wl.a, wl.n, &err))
            die("cholesky matrix", &err);
    }
    tg_runtime_wait_all();
}

/* The recorded work; returns its useful operations. */
static double wl_run(void) {
    tg_error err = {0};
    tg_chol_opts co = tg_chol_defaults();
    co.diag = wl.diag;
    co.allowed = wl.allowed;
    co.band = wl.band;
    if (!strcmp(wl.name, "krr")) {
        /* γ = 1/S and α = 0.1·√N, as bench/krr */
        if (tg_kernel_apply(NULL, wl.g, wl.g, 1.0 / (double)wl.snps, 0.1 * sqrt((double)wl.n),
                            wl.diag, &wl.K, &err) ||
            tg_cholesky(wl.K, &co, NULL, &err))
            die("krr", &err);
        return tg_kernel_ops(wl.g, wl.g) + (double)wl.n * (double)wl.n * (double)wl.n / 3;
    }
    if (!strcmp(wl.name, "cholesky")) {
        if (tg_cholesky(wl.K, &co, NULL, &err)) die("cholesky", &err);
        return (double)wl.n * (double)wl.n * (double)wl.n / 3;
    }
    tg_epi_opts o = tg_epi_defaults();
    o.order = wl.order;
    o.block = wl.block;
    tg_epi_report rep;
    if (tg_epistasis(&wl.bed, wl.cls, &o, &rep, &err)) die("epistasis", &err);
    double ops = (double)rep.combinations * (double)wl.samples; /* the paper's metric */
    tg_epi_report_free(&rep);
    return ops;
}

static void wl_release(void) {
    tg_matrix_destroy(wl.K);
    tg_kgeno_free(wl.g);
    wl.K = NULL;
    wl.g = NULL;
}

/* ---- runs */

struct run {
    const char *sched;
    int set, rep;
    int nw[2];                       /* workers of each kind */
    int kind[STARPU_NMAXWORKERS];    /* kind of each worker id */
    tg_task_record *r;
    size_t n;
    double ops, wall, makespan;
    double cpu_use;  /* this process's CPU seconds / (wall × cores) */
    double bytes[3]; /* host → device, device → host, device → device */
};

/* CPU seconds this process has used (every thread). */
static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
           (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

/* Reads (and so resets) StarPU's per-bus byte counters, adding them by direction into @p b. */
static void bus_bytes(double b[3]) {
    for (int bus = 0; bus < starpu_bus_get_count(); bus++) {
        struct starpu_profiling_bus_info info;
        starpu_bus_get_profiling_info(bus, &info);
        int src = starpu_node_get_kind((unsigned)starpu_bus_get_src(bus)) == STARPU_CUDA_RAM,
            dst = starpu_node_get_kind((unsigned)starpu_bus_get_dst(bus)) == STARPU_CUDA_RAM;
        if (src || dst) b[src && dst ? 2 : src ? 1 : 0] += (double)info.transferred_bytes;
    }
}

static tg_runtime_opts set_opts(int set, const char *sched, int ncpu, int ngpu) {
    tg_runtime_opts o = tg_runtime_defaults();
    o.sched = sched;
    o.ncpu = set == SET_GPU ? 0 : ncpu;
    o.ngpu = set == SET_CPU ? 0 : ngpu;
    return o;
}

/* One run in a fresh runtime; with @p r NULL a warm-up, nothing kept. */
static void one_run(int set, const char *sched, int rep, int ncpu, int ngpu, struct run *r,
                    const char *gantt, int reps) {
    tg_error err = {0};
    tg_runtime_opts o = set_opts(set, sched, ncpu, ngpu);
    if (tg_runtime_start(&o, &err)) die("runtime", &err);
    wl_prepare();
    double b[3] = {0}, t0 = tg_now(), c0 = cpu_seconds();
    tg_record_start(0);
    bus_bytes(b); /* resets the counters: the preparation's transfers are not the run's */
    double ops = wl_run();
    size_t n;
    tg_task_record *rec = tg_record_stop(&n);
    double wall = tg_now() - t0, cpu = cpu_seconds() - c0;
    if (!rec) die("out of memory for the task records", NULL);
    memset(b, 0, sizeof b);
    bus_bytes(b);
    if (r) {
        double cores = (double)sysconf(_SC_NPROCESSORS_ONLN);
        *r = (struct run){.sched = sched, .set = set, .rep = rep, .r = rec, .n = n, .ops = ops,
                          .wall = wall, .cpu_use = cpu / (wall * cores)};
        memcpy(r->bytes, b, sizeof b);
        for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
            r->kind[w] = starpu_worker_get_type((int)w) == STARPU_CUDA_WORKER ? KGPU : KCPU;
            r->nw[r->kind[w]]++;
        }
        double first = INFINITY, last = -INFINITY;
        for (size_t i = 0; i < n; i++)
            first = fmin(first, rec[i].start), last = fmax(last, rec[i].end);
        r->makespan = n ? last - first : 0;
        if (gantt) {
            char path[4096], title[512];
            snprintf(path, sizeof path, "%s/%s-%s-%s", gantt, wl.name, set_names[set], sched);
            if (reps > 1) snprintf(path + strlen(path), sizeof path - strlen(path), "-%d", rep);
            snprintf(title, sizeof title,
                     "bench/sched %s, %s workers (%d CPU, %d GPU), %s: %zu tasks, makespan %.4f s",
                     wl.name, set_names[set], r->nw[KCPU], r->nw[KGPU], sched, n, r->makespan);
            size_t l = strlen(path);
            strcpy(path + l, ".trace.tsv");
            if (tg_trace_tsv(path, rec, n, &err)) die("--gantt", &err);
            strcpy(path + l, ".gantt.png");
            if (tg_trace_gantt(path, rec, n, title, &err)) die("--gantt", &err);
        }
    } else {
        free(rec);
    }
    wl_release();
    tg_runtime_stop();
}

/* ---- kernel times per kind, and the bounds */

/* A kernel's speed on each kind: the best over the runs added, so that a run slowed by noise
 * (other processes, a cold cache) loosens the bounds instead of making them exceed a makespan */
struct ktime {
    const char *kernel;
    double per_work[2]; /* least seconds per unit of work of a run; INFINITY: none */
    double mean[2];     /* least mean seconds per task of a run; INFINITY: none */
    size_t count[2];    /* tasks over the runs added */
};

struct ktable {
    struct ktime *k;
    int n, cap;
};

static struct ktime *ktable_find(const struct ktable *t, const char *kernel) {
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->k[i].kernel, kernel)) return &t->k[i];
    return NULL;
}

/* The entry of @p kernel, added when absent. */
static struct ktime *ktable_get(struct ktable *t, const char *kernel) {
    struct ktime *k = ktable_find(t, kernel);
    if (k) return k;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 32;
        if (!(t->k = realloc(t->k, (size_t)t->cap * sizeof *t->k))) die("out of memory", NULL);
    }
    t->k[t->n] = (struct ktime){.kernel = kernel, .per_work = {INFINITY, INFINITY},
                                .mean = {INFINITY, INFINITY}};
    return &t->k[t->n++];
}

/* Adds run @p r: its own per-kernel sums, then the best of them and the table's. */
static void ktable_add(struct ktable *t, const struct run *r) {
    struct sums {
        const char *kernel;
        double dur[2], work[2];
        size_t count[2];
    } *s = calloc(r->n ? r->n : 1, sizeof *s);
    if (!s) die("out of memory", NULL);
    int ns = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->r[i].worker < 0) continue; /* not run by a worker: no time to learn from */
        int j = 0, kind = r->kind[r->r[i].worker];
        while (j < ns && strcmp(s[j].kernel, r->r[i].kernel)) j++;
        if (j == ns) s[ns++].kernel = r->r[i].kernel;
        s[j].dur[kind] += r->r[i].end - r->r[i].start;
        s[j].work[kind] += r->r[i].work;
        s[j].count[kind]++;
    }
    for (int j = 0; j < ns; j++) {
        struct ktime *k = ktable_get(t, s[j].kernel);
        for (int kind = 0; kind < 2; kind++) {
            if (!s[j].count[kind]) continue;
            if (s[j].work[kind] > 0)
                k->per_work[kind] = fmin(k->per_work[kind], s[j].dur[kind] / s[j].work[kind]);
            k->mean[kind] = fmin(k->mean[kind], s[j].dur[kind] / (double)s[j].count[kind]);
            k->count[kind] += s[j].count[kind];
        }
    }
    free(s);
}

/* Seconds of record @p x on @p kind: its work at its kernel's seconds per unit of work (the mean
 * time when there is no work), from @p single's measurements, else @p all's; INFINITY when
 * neither measured the kernel on that kind. */
static double task_time(const struct ktable *single, const struct ktable *all,
                        const tg_task_record *x, int kind) {
    const struct ktable *from[2] = {single, all};
    for (int f = 0; f < 2; f++) {
        const struct ktime *k = ktable_find(from[f], x->kernel);
        if (!k || !k->count[kind]) continue;
        return x->work > 0 && isfinite(k->per_work[kind]) ? x->work * k->per_work[kind]
                                                           : k->mean[kind];
    }
    return INFINITY;
}

/* The area and critical-path bounds of run @p r. */
static void bounds(const struct run *r, const struct ktable single[2], const struct ktable *all,
                   double *area, double *cp) {
    struct ktable types = {0};
    double (*load)[2] = NULL, *cost = malloc((r->n ? r->n : 1) * sizeof *cost);
    if (!cost) die("out of memory", NULL);
    for (size_t i = 0; i < r->n; i++) ktable_get(&types, r->r[i].kernel);
    if (!(load = calloc((size_t)(types.n ? types.n : 1), sizeof *load))) die("out of memory", NULL);
    for (size_t i = 0; i < r->n; i++) {
        int t = (int)(ktable_get(&types, r->r[i].kernel) - types.k);
        cost[i] = INFINITY;
        for (int kind = 0; kind < 2; kind++) {
            double s = task_time(&single[kind], all, &r->r[i], kind);
            load[t][kind] += s;
            if (r->nw[kind]) cost[i] = fmin(cost[i], s);
        }
    }
    double *one = malloc((size_t)(types.n ? types.n : 1) * sizeof *one);
    if (!one) die("out of memory", NULL);
    for (int t = 0; t < types.n; t++) one[t] = 1; /* a type's whole load, divisible */
    *area = tg_area_bound(types.n, one, (const double(*)[2])load, r->nw);
    *cp = tg_critical_path(r->r, r->n, cost);
    free(one);
    free(load);
    free(cost);
    free(types.k);
}

/* ---- options */

static int have_sched(const char *name) {
    struct starpu_sched_policy **pol = starpu_sched_get_predefined_policies();
    for (int i = 0; pol[i]; i++)
        if (!strcmp(pol[i]->policy_name, name)) return 1;
    return 0;
}

static int cuda_devices(void) {
#ifdef TG_USE_CUDA
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
#else
    return 0;
#endif
}

static void usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s [--workload krr|cholesky|epistasis] [--scheds LIST] [--sets LIST] "
            "[--ncpu N] [--ngpu N]\n          [--reps R] [--warmup W] [--out FILE] [--gantt DIR] "
            "[--n N] [--nb NB] [--map M] [--snps S]\n          [--order K] [--samples N] "
            "[--block B]\n",
            argv0);
    exit(2);
}

int main(int argc, char **argv) {
    tg_blas_restart_if_generic(argv);
    const char *scheds = NULL, *sets = "cpu,gpu,cpu+gpu", *out = NULL, *gantt = NULL,
               *map = "fp32";
    int ncpu = -1, ngpu = -1, reps = 1, warmup = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage(argv[0]);
        i++;
        if (!strcmp(a, "--workload")) wl.name = v;
        else if (!strcmp(a, "--scheds")) scheds = v;
        else if (!strcmp(a, "--sets")) sets = v;
        else if (!strcmp(a, "--ncpu")) ncpu = atoi(v);
        else if (!strcmp(a, "--ngpu")) ngpu = atoi(v);
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--warmup")) warmup = atoi(v);
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--gantt")) gantt = v;
        else if (!strcmp(a, "--n")) wl.n = atoll(v);
        else if (!strcmp(a, "--nb")) wl.nb = atoi(v);
        else if (!strcmp(a, "--map")) map = v;
        else if (!strcmp(a, "--snps")) wl.snps = atoll(v);
        else if (!strcmp(a, "--order")) wl.order = atoi(v);
        else if (!strcmp(a, "--samples")) wl.samples = atoll(v);
        else if (!strcmp(a, "--block")) wl.block = atoi(v);
        else usage(argv[0]);
    }
    int epi = !strcmp(wl.name, "epistasis");
    if (!wl.snps) wl.snps = epi ? 1024 : 4096;
    if ((strcmp(wl.name, "krr") && strcmp(wl.name, "cholesky") && !epi) || wl.n < 1 ||
        wl.nb < 1 || wl.snps < 1 || wl.samples < 2 || reps < 1 || warmup < 0 ||
        (epi && (wl.order < 2 || wl.order > 4 || wl.snps < wl.order)))
        usage(argv[0]);
    static const struct {
        const char *name;
        tg_prec diag;
        unsigned allowed;
        double band; /* 0: every off-diagonal tile lowered, as bench/krr */
    } maps[] = {{"fp64", TG_FP64, 1u << TG_FP64, 1},
                {"fp32", TG_FP32, 1u << TG_FP32, 1},
                {"fp32+fp16", TG_FP32, 1u << TG_FP16, 0},
                {"fp32+fp8", TG_FP32, 1u << TG_FP8_E4M3, 0}};
    int mi = -1;
    for (int m = 0; m < 4; m++)
        if (!strcmp(map, maps[m].name)) mi = m;
    if (mi < 0) {
        fprintf(stderr, "bench/sched: --map %s: one of fp64, fp32, fp32+fp16, fp32+fp8\n", map);
        return 2;
    }
    wl.diag = maps[mi].diag;
    wl.allowed = maps[mi].allowed;
    wl.band = maps[mi].band;

    /* schedulers: the given ones must exist; of the defaults, those this StarPU has */
    static const char *defaults[] = {"eager", "lws", "dm", "dmda", "dmdas", "heteroprio"};
    const char *use[64];
    int nsched = 0;
    char *copy = strdup(scheds ? scheds : ""), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); scheds && t && nsched < 64;
         t = strtok_r(NULL, ",", &save)) {
        if (!have_sched(t)) {
            fprintf(stderr, "bench/sched: --scheds: StarPU has no scheduler '%s'\n", t);
            return 2;
        }
        use[nsched++] = t;
    }
    for (size_t d = 0; !scheds && d < sizeof defaults / sizeof *defaults; d++)
        if (have_sched(defaults[d]))
            use[nsched++] = defaults[d];
    if (!nsched) usage(argv[0]);
    int run_set[NSETS], ngpus = cuda_devices();
    for (int s = 0; s < NSETS; s++) {
        run_set[s] = in_list(sets, set_names[s]) && (s == SET_CPU || ngpus > 0) &&
                     (s == SET_GPU || ncpu != 0) && (s == SET_CPU || ngpu != 0);
        if (in_list(sets, set_names[s]) && !run_set[s])
            fprintf(stderr, "bench/sched: skipping the %s set: %s\n", set_names[s],
                    ngpus == 0 && s != SET_CPU ? "no CUDA device (or no CUDA in this build)"
                                               : "no worker of a kind it needs (--ncpu/--ngpu 0)");
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        perror(out);
        return 1;
    }

    wl_inputs();
    struct run *runs = calloc((size_t)(NSETS * nsched * reps), sizeof *runs);
    if (!runs) die("out of memory", NULL);
    int nrun = 0, total = 0;
    for (int s = 0; s < NSETS; s++) total += run_set[s] * nsched * reps;
    for (int s = 0; s < NSETS; s++) {
        if (!run_set[s]) continue;
        for (int w = 0; w < warmup; w++) one_run(s, "dmda", 0, ncpu, ngpu, NULL, NULL, reps);
        for (int k = 0; k < nsched; k++)
            for (int rep = 0; rep < reps; rep++) {
                struct run *r = &runs[nrun++];
                one_run(s, use[k], rep, ncpu, ngpu, r, gantt, reps);
                fprintf(stderr, "bench/sched: run %d/%d: %s %s: %zu tasks, makespan %.4f s\n",
                        nrun, total, set_names[s], use[k], r->n, r->makespan);
            }
    }

    /* kernel times: single-kind runs first, every run as the fallback */
    struct ktable single[2] = {{0}}, all = {0};
    for (int i = 0; i < nrun; i++) {
        ktable_add(&all, &runs[i]);
        if (runs[i].set == SET_CPU) ktable_add(&single[KCPU], &runs[i]);
        if (runs[i].set == SET_GPU) ktable_add(&single[KGPU], &runs[i]);
    }
    char host[256] = "?";
    gethostname(host, sizeof host);
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "# bench/sched on %s, %s, StarPU %d.%d.%d, %ld cores, %d CUDA device%s\n", host,
            date, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION,
            sysconf(_SC_NPROCESSORS_ONLN), ngpus, ngpus == 1 ? "" : "s");
    fprintf(f, "# command:");
    for (int i = 0; i < argc; i++) fprintf(f, " %s", argv[i]);
    if (epi)
        fprintf(f, "\n# workload epistasis: order %d, %lld SNPs x %lld samples, block %d%s\n",
                wl.order, (long long)wl.snps, (long long)wl.samples, wl.block,
                wl.block ? "" : " (the library's)");
    else if (!strcmp(wl.name, "krr"))
        fprintf(f, "\n# workload krr: N %lld, %lld SNPs, nb %d, map %s\n", (long long)wl.n,
                (long long)wl.snps, wl.nb, map);
    else
        fprintf(f, "\n# workload cholesky: N %lld, nb %d, map %s\n", (long long)wl.n, wl.nb, map);
    fprintf(f, "# kernel\tcpu_tasks\tcpu_mean_s\tgpu_tasks\tgpu_mean_s (single-kind runs; mean: "
               "the least over the runs)\n");
    for (int i = 0; i < all.n; i++) {
        fprintf(f, "# %s", all.k[i].kernel);
        for (int kind = 0; kind < 2; kind++) {
            const struct ktime *k = ktable_find(&single[kind], all.k[i].kernel);
            if (k && k->count[kind]) fprintf(f, "\t%zu\t%.6g", k->count[kind], k->mean[kind]);
            else fprintf(f, "\t0\tNA");
        }
        fputc('\n', f);
    }
    fprintf(f, "workload\tset\tsched\trep\tncpu\tngpu\ttasks\twall_s\tmakespan_s\tGops_per_s\t"
               "busy_cpu\tbusy_gpu\tcpu_use\th2d_MB\td2h_MB\td2d_MB\tarea_s\tcp_s\tbound_s\t"
               "makespan_over_bound\n");
    for (int i = 0; i < nrun; i++) {
        const struct run *r = &runs[i];
        double busy[2] = {0}, area, cp;
        for (size_t t = 0; t < r->n; t++)
            if (r->r[t].worker >= 0) busy[r->kind[r->r[t].worker]] += r->r[t].end - r->r[t].start;
        bounds(r, single, &all, &area, &cp);
        double bound = fmax(area, cp);
        fprintf(f, "%s\t%s\t%s\t%d\t%d\t%d\t%zu\t%.4f\t%.4f\t%.4g\t", wl.name, set_names[r->set],
                r->sched, r->rep, r->nw[KCPU], r->nw[KGPU], r->n, r->wall, r->makespan,
                r->ops / r->makespan / 1e9);
        for (int kind = 0; kind < 2; kind++) {
            if (r->nw[kind]) fprintf(f, "%.3f\t", busy[kind] / (r->makespan * r->nw[kind]));
            else fputs("NA\t", f);
        }
        fprintf(f, "%.3f\t%.1f\t%.1f\t%.1f\t%.4f\t%.4f\t%.4f\t%.3f\n", r->cpu_use,
                r->bytes[0] / 1e6, r->bytes[1] / 1e6, r->bytes[2] / 1e6, area, cp, bound,
                r->makespan / bound);
    }
    if (out && fclose(f)) die(out, NULL);
    for (int i = 0; i < nrun; i++) free(runs[i].r);
    free(runs);
    free(all.k);
    free(single[0].k);
    free(single[1].k);
    free(copy);
    free(wl.a);
    free(wl.cls);
    if (wl.dir[0]) {
        tg_bed_close(&wl.bed);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", wl.dir);
        if (system(cmd)) fprintf(stderr, "bench/sched: could not remove %s\n", wl.dir);
    }
    return 0;
}
