/* Placement before any model exists: a probe of each codelet on every kind of worker that can
 * run it, turned into a prior of the codelet's StarPU model (docs/DESIGN-NOTES.md, "Performance
 * models"). Without it, StarPU's dm* schedulers calibrate a codelet by giving its first tasks to
 * every worker kind, and keep doing so while its regression is not valid (all tasks of one size
 * never make it valid): an order-4 epistasis round takes a core minutes where the GPU takes
 * milliseconds.
 *
 * A kind is a performance-model architecture and an implementation (StarPU models each pair).
 * The first time a codelet is submitted from the application's thread, each kind that can run
 * it and has no valid model gets one: the codelet's probe (a task with scratch data, of growing
 * size, on that kind's workers) gives its time per unit of work (tg_task_work), and the model
 * receives time = α·work (β = 1) with the weight of StarPU's minimum number of samples, valid
 * for every size. History then refines it like any measurement, and StarPU saves it with the
 * model at shutdown, so a machine is probed once. Models that are valid are never touched but
 * widened to every size (a fit outside its range is not used at all). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

enum { MAX_PROBES = 96, MAX_KINDS = 16 };

/* A kind of worker for one codelet: its architecture and implementation, and its workers. */
struct kind {
    struct starpu_perfmodel_arch *arch;
    int comb;
    unsigned impl;
    enum starpu_worker_archtype type;
    int nworkers;
    int workers[STARPU_NMAXWORKERS];
};

/* A registered codelet: its probe, or the codelet whose measured rate it borrows. */
struct entry {
    struct starpu_codelet *cl;
    tg_probe_fn fn;
    struct starpu_codelet *like;
    int checked;            /* models made ready in this runtime */
    unsigned where;         /* tg_probe_keep's mask for this runtime, 0: every type */
    int nmeasured;          /* rates measured in this runtime, per (comb, impl) */
    int comb[MAX_KINDS];
    unsigned impl[MAX_KINDS];
    double us_per_work[MAX_KINDS]; /* 0: the probe failed */
    double work[MAX_KINDS];        /* of the largest level run */
};

static struct {
    pthread_mutex_t lock;
    struct entry e[MAX_PROBES];
    int n;
    int off;              /* TILEGWAS_PROBE=off */
    int probed;           /* codelet kinds probed since the runtime started */
    double seconds;       /* spent probing */
    char said[2048];      /* the priors set, for the log */
    char kept[1024];      /* the codelets left to one worker type, for the log */
    tg_probe_fn first;    /* tg_probe_set_first's */
} pr = {.lock = PTHREAD_MUTEX_INITIALIZER};

void tg_probe_register(struct starpu_codelet *cl, tg_probe_fn fn, struct starpu_codelet *like) {
    pthread_mutex_lock(&pr.lock);
    int i = 0;
    while (i < pr.n && pr.e[i].cl != cl) i++;
    if (i == pr.n && pr.n < MAX_PROBES) pr.n++;
    if (i < MAX_PROBES) pr.e[i] = (struct entry){.cl = cl, .fn = fn, .like = like};
    pthread_mutex_unlock(&pr.lock);
}

void tg_probe_set_first(tg_probe_fn fn) { pr.first = fn; }

/* The probe task of entry @p e: tg_probe_set_first's step, else the codelet's probe. */
static int build(const struct entry *e, int level, enum starpu_worker_archtype type,
                 const struct starpu_task *like, tg_probe_task *out) {
    const int r = pr.first ? pr.first(e->cl, level, type, like, out) : 1;
    return r == 1 ? e->fn(e->cl, level, type, like, out) : r;
}

int tg_probe_build(struct starpu_codelet *cl, int level, enum starpu_worker_archtype type,
                   const struct starpu_task *like, tg_probe_task *out) {
    pthread_mutex_lock(&pr.lock);
    struct entry e = {0};
    for (int i = 0; i < pr.n && !e.fn; i++)
        if (pr.e[i].cl == cl) e = pr.e[i];
    pthread_mutex_unlock(&pr.lock);
    return e.fn ? build(&e, level, type, like, out) : -1;
}

void tg_probe_reset(void) {
    pthread_mutex_lock(&pr.lock);
    for (int i = 0; i < pr.n; i++) pr.e[i].checked = pr.e[i].nmeasured = 0, pr.e[i].where = 0;
    const char *env = getenv("TILEGWAS_PROBE");
    pr.off = env && !strcmp(env, "off");
    pr.probed = 0;
    pr.seconds = 0;
    pr.said[0] = pr.kept[0] = 0;
    pthread_mutex_unlock(&pr.lock);
}

void tg_probe_describe(char *buf, size_t len) {
    int l = 0;
    if (pr.off) l = snprintf(buf, len, "probe off (TILEGWAS_PROBE=off)");
    else if (pr.probed)
        l = snprintf(buf, len, "probed %d codelet kind%s without a model in %.2f s; priors (µs "
                     "per 10^6 units of work):%s", pr.probed, pr.probed == 1 ? "" : "s",
                     pr.seconds, pr.said);
    else l = snprintf(buf, len, "no probe needed");
    if (pr.kept[0] && l >= 0 && (size_t)l < len)
        snprintf(buf + l, len - (size_t)l, "; under %g%% of the node's rate, left out:%s",
                 100 * TG_PROBE_KEEP_SHARE, pr.kept);
}

static struct entry *find(const struct starpu_codelet *cl) {
    for (int i = 0; i < pr.n; i++)
        if (pr.e[i].cl == cl) return &pr.e[i];
    return NULL;
}

/* A task that is never submitted, of @p work units: what StarPU's model functions read (the
 * codelet, and through tg_task_work the flops). */
static struct starpu_task *paper_task(struct starpu_codelet *cl, double work) {
    struct starpu_task *t = starpu_task_create();
    t->cl = cl;
    t->flops = work;
    t->destroy = 0;
    return t;
}

static int can_run(struct starpu_codelet *cl, int w, unsigned impl, struct starpu_task *t) {
    enum starpu_worker_archtype type = starpu_worker_get_type(w);
    if (type == STARPU_CPU_WORKER && !cl->cpu_funcs[impl]) return 0;
    if (type == STARPU_CUDA_WORKER && !cl->cuda_funcs[impl]) return 0;
    if (type != STARPU_CPU_WORKER && type != STARPU_CUDA_WORKER) return 0;
    return !cl->can_execute || cl->can_execute((unsigned)w, t, impl);
}

/* The kinds of worker that can run @p cl. */
static int kinds_of(struct starpu_codelet *cl, struct kind *k) {
    struct starpu_task *t = paper_task(cl, 1);
    int n = 0;
    for (unsigned w = 0; w < starpu_worker_get_count(); w++)
        for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++) {
            if (!can_run(cl, (int)w, impl, t)) continue;
            struct starpu_perfmodel_arch *a = starpu_worker_get_perf_archtype((int)w, STARPU_NMAX_SCHED_CTXS);
            int comb = starpu_perfmodel_arch_comb_get(a->ndevices, a->devices);
            if (comb < 0) comb = starpu_perfmodel_arch_comb_add(a->ndevices, a->devices);
            int i = 0;
            while (i < n && !(k[i].comb == comb && k[i].impl == impl)) i++;
            if (i == n) {
                if (n == MAX_KINDS) continue;
                k[n++] = (struct kind){.arch = a, .comb = comb, .impl = impl,
                                       .type = starpu_worker_get_type((int)w)};
            }
            k[i].workers[k[i].nworkers++] = (int)w;
        }
    starpu_task_destroy(t);
    return n;
}

/* Whether the model of @p cl is valid on kind @p k (after loading it from its file); a valid
 * fit is widened to every size, since StarPU does not use a fit outside the sizes measured. */
static int model_ready(struct starpu_codelet *cl, const struct kind *k) {
    struct starpu_task *t = paper_task(cl, 1e6);
    starpu_task_expected_length(t, k->arch, k->impl); /* loads the model's file */
    starpu_task_destroy(t);
    struct starpu_perfmodel_per_arch *pa =
        starpu_perfmodel_get_model_per_arch(cl->model, k->arch, k->impl);
    if (!pa || !pa->regression.valid || isnan(pa->regression.alpha) || isnan(pa->regression.beta))
        return 0;
    pa->regression.minx = 1;
    pa->regression.maxx = (unsigned long)1 << 58; /* StarPU computes 9·maxx in unsigned long */
    return 1;
}

/* Gives the model of @p cl on kind @p k the regression @p src (its sums: its weight), valid for
 * every size. */
static void set_regression(struct starpu_codelet *cl, const struct kind *k,
                           const struct starpu_perfmodel_regression_model *src) {
    /* creates the model's entry for this kind (StarPU's own bookkeeping) with one sample on
     * the line, which the regression below then replaces */
    struct starpu_task *t = paper_task(cl, 1e6);
    starpu_perfmodel_update_history(cl->model, t, k->arch, 0, k->impl,
                                    src->alpha * pow(1e6, src->beta));
    starpu_task_destroy(t);
    struct starpu_perfmodel_per_arch *pa =
        starpu_perfmodel_get_model_per_arch(cl->model, k->arch, k->impl);
    if (!pa) return;
    struct starpu_perfmodel_regression_model *r = &pa->regression;
    r->sumlnx = src->sumlnx, r->sumlnx2 = src->sumlnx2, r->sumlny = src->sumlny;
    r->sumlnxlny = src->sumlnxlny, r->nsample = src->nsample;
    r->alpha = src->alpha, r->beta = src->beta;
    r->minx = 1;
    r->maxx = (unsigned long)1 << 58;
    r->valid = 1;
}

/* Takes the model of @p cl on kind @p k from the profile that matches this kind of worker
 * (tg_perfmodels_partial); 1 when it had a valid one. */
static int from_profile(struct starpu_codelet *cl, const struct kind *k) {
    char path[4096];
    if (!tg_perfmodels_partial(cl->model->symbol, k->type == STARPU_CUDA_WORKER, path, sizeof path))
        return 0;
    struct starpu_perfmodel m;
    memset(&m, 0, sizeof m);
    if (starpu_perfmodel_load_file(path, &m)) return 0;
    struct starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&m, k->arch, k->impl);
    int ok = pa && pa->regression.valid && pa->regression.nsample >= 2 &&
             !isnan(pa->regression.alpha) && !isnan(pa->regression.beta);
    if (ok) set_regression(cl, k, &pa->regression);
    starpu_perfmodel_unload_model(&m);
    return ok;
}

/* Gives the model of @p cl on kind @p k the prior time = us_per_work·work (µs): StarPU's minimum
 * number of samples of that line, spread over ±3 binades of @p work0, valid for every size. */
static void set_prior(struct starpu_codelet *cl, const struct kind *k, double us_per_work,
                      double work0) {
    struct starpu_perfmodel_regression_model r = {.alpha = us_per_work, .beta = 1};
    int K = starpu_get_env_number_default("STARPU_CALIBRATE_MINIMUM", 10);
    if (K < 2) K = 2;
    for (int i = 0; i < K; i++) {
        double x = log(work0) + log(8.0) * (2.0 * i / (K - 1) - 1), y = log(us_per_work) + x;
        r.sumlnx += x, r.sumlnx2 += x * x, r.sumlny += y, r.sumlnxlny += x * y;
    }
    r.nsample = (unsigned)K;
    set_regression(cl, k, &r);
}

double tg_probe_fit_edge(double sumlnx, double sumlnx2, unsigned n) {
    if (n < 2) return INFINITY;
    const double m = sumlnx / n, v = sumlnx2 / n - m * m;
    return exp(m + 2 * sqrt(v > 0 ? v : 0));
}

/* The time in µs the model of @p cl predicts on kind @p k for @p work units (NAN: none); past
 * the sizes of a fit flatter than linear (tg_probe_fit_edge), linear in work from its edge. */
static double predicted(struct starpu_codelet *cl, const struct kind *k, double work) {
    const struct starpu_perfmodel_per_arch *pa =
        starpu_perfmodel_get_model_per_arch(cl->model, k->arch, k->impl);
    double at = work;
    if (pa && pa->regression.valid && pa->regression.beta < 1) {
        const double edge = tg_probe_fit_edge(pa->regression.sumlnx, pa->regression.sumlnx2,
                                              pa->regression.nsample);
        if (work > edge) at = edge;
    }
    struct starpu_task *t = paper_task(cl, at);
    double us = starpu_task_expected_length(t, k->arch, k->impl);
    starpu_task_destroy(t);
    return us * (work / at);
}

static double median(double *v, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n ? v[n / 2] : NAN;
}

/* Runs one probe level of @p e on every worker of @p k at once (cores share memory bandwidth,
 * as in a run), each task through @p copy, the codelet without its model (StarPU must not record
 * these runs as measurements: the prior is set from them), @p runs times on the same data (the
 * first run of a GPU kernel in a process loads its code). The last run's median time in µs and
 * the work, or a negative time when the level is past the probe's last or something failed. */
static double run_level(const struct entry *e, struct starpu_codelet *copy, const struct kind *k,
                        const struct starpu_task *tmpl, int level, int runs, double *work) {
    tg_probe_task pt[STARPU_NMAXWORKERS];
    double us[STARPU_NMAXWORKERS];
    int n = 0, ok = 1;
    /* one GPU is enough (identical GPUs share a model); every core, for the bandwidth */
    int nw = k->type == STARPU_CPU_WORKER ? k->nworkers : 1;
    while (n < nw && !build(e, level, k->type, tmpl, &pt[n])) n++;
    ok = n == nw;
    for (int i = 0; i < n; i++) {
        struct starpu_task *t = pt[i].task;
        t->cl = copy;
        t->execute_on_a_specific_worker = 1;
        t->workerid = (unsigned)k->workers[i];
        t->priority = STARPU_MAX_PRIO;
        t->detach = 0;
        t->destroy = 0;
    }
    /* built first, then submitted together: the cores run at once; a task that has ended may
     * be submitted again */
    for (int r = 0; r < runs && ok; r++) {
        int submitted = 0;
        while (submitted < n && starpu_task_submit(pt[submitted].task) == 0) submitted++;
        for (int i = 0; i < submitted; i++)
            if (starpu_task_wait(pt[i].task)) ok = 0;
        ok &= submitted == n;
    }
    for (int i = 0; i < n; i++) {
        struct starpu_task *t = pt[i].task;
        struct starpu_profiling_task_info *p = t->profiling_info;
        us[i] = p ? starpu_timing_timespec_delay_us(&p->start_time, &p->end_time) : NAN;
        *work = t->flops;
        pt[i].release(pt[i].ctx);
        starpu_task_destroy(t);
    }
    return ok ? median(us, n) : -1;
}

/* How long (µs) a probe's task may grow to on a kind: long enough for a GPU kernel to leave its
 * launch latency behind, short enough for a first run not to notice. */
static double target_us(enum starpu_worker_archtype type) {
    return type == STARPU_CUDA_WORKER ? 1000 : 10000;
}

/* A probe stops growing after this much time on a kind (data making and transfers included). */
#define PROBE_BUDGET_US 500000.0

/* A kind already this many times slower than another kind measured for the codelet stops
 * growing once a level's task takes FAR_SLOWER_MIN_US (its rate read clear of timer noise):
 * how much slower no longer changes where tasks go, and the larger levels were most of a
 * first run's probe (H100 node: epistasis order 2's cores 202 ms of 323). */
#define FAR_SLOWER 20.0
#define FAR_SLOWER_MIN_US 500.0

/* The prior of a kind slower than another that runs the codelet is this many times its probe's
 * time: a probe runs on small data, and a task given to a slow kind on a too optimistic
 * estimate ends the run late (the fast kind has nothing left to do), while one left to the
 * fast kind costs at most its share. History corrects it on the tasks the kind does get. */
#define SLOWER_MARGIN 2.0

/* The time per unit of work of @p e on kind @p k (µs), from its largest level run; 0 when the
 * probe fails. @p fastest: the least time per unit measured on another kind (0: none yet). */
static double measure(const struct entry *e, struct starpu_codelet *copy, const struct kind *k,
                      const struct starpu_task *tmpl, double fastest, double *work0) {
    double us = -1, w = 0, best = 0, start = starpu_timing_now();
    *work0 = 0;
    for (int level = 0; level < 12 && starpu_timing_now() - start < PROBE_BUDGET_US; level++) {
        double t = run_level(e, copy, k, tmpl, level,
                             level == 0 && k->type == STARPU_CUDA_WORKER ? 2 : 1, &w);
        if (!(t > 0)) break;
        us = t;
        best = us / w;
        *work0 = w;
        if (us >= target_us(k->type)) break;
        if (fastest > 0 && us >= FAR_SLOWER_MIN_US && best > FAR_SLOWER * fastest) break;
    }
    return us > 0 ? best : 0;
}

/* The measured time per unit of work of the entry @p e on kind @p k, probing it once per
 * runtime; 0 when it cannot be measured. */
static double rate_of(struct entry *e, const struct kind *k, const struct starpu_task *tmpl,
                      double fastest, double *work0) {
    for (int i = 0; i < e->nmeasured; i++)
        if (e->comb[i] == k->comb && e->impl[i] == k->impl) return *work0 = e->work[i], e->us_per_work[i];
    if (!e->fn || e->nmeasured == MAX_KINDS) return 0;
    /* the probe runs the kind's implementation (StarPU runs a task sent to a worker with its
     * first implementation that can) and records nothing in the model */
    struct starpu_codelet copy = *e->cl;
    copy.model = NULL;
    memset(copy.cpu_funcs, 0, sizeof copy.cpu_funcs);
    memset(copy.cuda_funcs, 0, sizeof copy.cuda_funcs);
    copy.cpu_funcs[0] = e->cl->cpu_funcs[k->impl];
    copy.cuda_funcs[0] = e->cl->cuda_funcs[k->impl];
    copy.cuda_flags[0] = e->cl->cuda_flags[k->impl];
    copy.can_execute = NULL; /* the kind's workers can run it */
    copy.where = 0;          /* StarPU derives it from the functions */
    double t0 = starpu_timing_now();
    int prof = starpu_profiling_status_get();
    if (!prof) starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    double r = measure(e, &copy, k, tmpl, fastest, work0);
    if (!prof) starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
    pr.seconds += (starpu_timing_now() - t0) * 1e-6;
    pr.probed++;
    e->comb[e->nmeasured] = k->comb;
    e->impl[e->nmeasured] = k->impl;
    e->work[e->nmeasured] = *work0;
    e->us_per_work[e->nmeasured++] = r;
    return r;
}

unsigned tg_probe_keep(int n, const enum starpu_worker_archtype *type, const int *nworkers,
                       const double *us) {
    double total = 0, cpu = 0, cuda = 0;
    for (int i = 0; i < n; i++) {
        if (!(us[i] > 0)) return 0; /* a kind of unknown speed: nothing to weigh */
        const double rate = nworkers[i] / us[i];
        total += rate;
        if (type[i] == STARPU_CPU_WORKER) cpu += rate;
        else if (type[i] == STARPU_CUDA_WORKER) cuda += rate;
        else return 0;
    }
    if (cpu > 0 && cuda > 0 && cpu < TG_PROBE_KEEP_SHARE * total) return STARPU_CUDA;
    if (cpu > 0 && cuda > 0 && cuda < TG_PROBE_KEEP_SHARE * total) return STARPU_CPU;
    return 0;
}

/* tg_probe_keep for @p cl over its kinds @p k, at the work of @p task. */
static unsigned keep_of(struct starpu_codelet *cl, const struct kind *k, int n,
                        const struct starpu_task *task) {
    enum starpu_worker_archtype type[MAX_KINDS];
    int nw[MAX_KINDS];
    double us[MAX_KINDS];
    const double work = task->flops > 0 ? task->flops : 1e9;
    for (int i = 0; i < n; i++) {
        type[i] = k[i].type;
        nw[i] = k[i].nworkers;
        us[i] = predicted(cl, &k[i], work);
    }
    return tg_probe_keep(n, type, nw, us);
}

unsigned tg_models_ensure(const struct starpu_task *task) {
    struct starpu_codelet *cl = task->cl;
    if (!cl || !cl->model || pr.off) return 0;
    pthread_mutex_lock(&pr.lock);
    struct entry *e = find(cl);
    /* callbacks (worker threads) never wait for a probe: the application thread submitted the
     * codelet's first task, and its models were made ready then */
    if (!e || e->checked || starpu_worker_get_id() >= 0) {
        unsigned where = e ? e->where : 0;
        pthread_mutex_unlock(&pr.lock);
        return where;
    }
    e->checked = 1;
    static struct kind k[MAX_KINDS];
    int n = kinds_of(cl, k);
    int ready[MAX_KINDS], missing = 0;
    for (int i = 0; i < n; i++)
        missing += !(ready[i] = model_ready(cl, &k[i]) || from_profile(cl, &k[i]));
    /* one kind: it runs every task whatever its model says, and StarPU calibrates it */
    struct entry *src = e->fn ? e : find(e->like);
    if (n >= 2 && missing && src) {
        double us[MAX_KINDS], w0[MAX_KINDS], t[MAX_KINDS], ms[MAX_KINDS], ref = 0, best = INFINITY,
               fastest = 0;
        /* the GPUs first: their rate lets the cores' probe stop early */
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < n; i++) {
                if ((k[i].type == STARPU_CUDA_WORKER) != !pass) continue;
                double t0 = starpu_timing_now(); /* for the log: where first runs' time goes */
                us[i] = ready[i] ? 0 : rate_of(src, &k[i], src == e ? task : NULL, fastest, &w0[i]);
                ms[i] = (starpu_timing_now() - t0) * 1e-3;
                if (us[i] > 0 && w0[i] > ref) ref = w0[i];
                if (us[i] > 0 && (!fastest || us[i] < fastest)) fastest = us[i];
            }
        /* which kind is fastest, at the work of the largest probe (none measured: no prior to
         * set, and a model asked about no work would read the handles a paper task lacks) */
        for (int i = 0; i < n && ref > 0; i++) {
            t[i] = ready[i] ? predicted(cl, &k[i], ref) : us[i] > 0 ? us[i] * ref : INFINITY;
            if (t[i] < best) best = t[i];
        }
        for (int i = 0; i < n && ref > 0; i++) {
            if (ready[i] || !(us[i] > 0)) continue;
            double a = us[i] * (t[i] > best ? SLOWER_MARGIN : 1);
            set_prior(cl, &k[i], a, w0[i]);
            char arch[64];
            starpu_perfmodel_get_arch_name(k[i].arch, arch, sizeof arch, k[i].impl);
            size_t l = strlen(pr.said);
            snprintf(pr.said + l, sizeof pr.said - l, " %s %s %.3g (%.0f ms)", cl->model->symbol,
                     arch, a * 1e6, ms[i]);
        }
    }
    if (n >= 2 && (e->where = keep_of(cl, k, n, task))) {
        size_t l = strlen(pr.kept);
        snprintf(pr.kept + l, sizeof pr.kept - l, " %s's %s", cl->model->symbol,
                 e->where == STARPU_CUDA ? "cores" : "GPUs");
    }
    unsigned where = e->where;
    pthread_mutex_unlock(&pr.lock);
    return where;
}
