/* Placement before any model exists (src/runtime/probe.c). A test codelet runs on worker 0 with
 * its first implementation and on every worker with its second, which a test hook makes 100×
 * slower: worker 1 is a slow kind of worker (as a core is beside a GPU), and using it never
 * shortens the run. With a fresh model directory, StarPU alone calibrates by sending tasks to
 * every kind (worker 1 gets some); with the probe, the models predict the 100× from the first
 * task and worker 1 gets none. The probe's prior is saved with the model: a second runtime does
 * not probe again. Then tg_probe_keep's rule on the rates of a node's kinds: a worker type
 * that would add under 1% of the node's rate is left out of the codelet's tasks; and
 * tg_probe_fit_edge, past which the rule's predictions from a flat fit grow linearly. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codelets/codelets.h"
#include "runtime/runtime.h"
#include "tap.h"

enum { SLOW = 100, NTASKS = 10 };
/* units of work of each task: 1 ns of spinning each on the fast kind, 0.5 ms a task (10 tasks
 * take 5 ms on worker 0; one on worker 1 takes 50 ms, and its prior says 100: a run under
 * load, which slows the probes unevenly, still leaves a factor of 20 between them) */
static const double WORK = 5e5;

static atomic_int ran[2], built;
static double ratio; /* predicted slow / fast time of a task, after the run */

static void spin_us(double us) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) * 1e-3 < us);
}

/* the fast implementation runs on worker 0 only */
static int where(unsigned worker, struct starpu_task *t, unsigned impl) {
    (void)t;
    return impl == 1 || worker == 0;
}

static struct starpu_codelet cl;

/* The task's work in units: its flops. Counted are the workload's tasks, not the probe's, which
 * run a copy of the codelet. */
static void fast(void *buffers[], void *arg) {
    (void)buffers, (void)arg;
    struct starpu_task *t = starpu_task_get_current();
    if (t->cl == &cl) ran[0]++;
    spin_us(t->flops * 1e-3);
}
static void slow(void *buffers[], void *arg) {
    (void)buffers, (void)arg;
    struct starpu_task *t = starpu_task_get_current();
    if (t->cl == &cl) ran[1]++;
    spin_us(t->flops * 1e-3 * SLOW);
}
static struct starpu_perfmodel model;

static void nothing(void *ctx) { (void)ctx; }

static int probe(struct starpu_codelet *c, int level, enum starpu_worker_archtype type,
                 const struct starpu_task *like, tg_probe_task *out) {
    (void)type, (void)like;
    if (level > 6) return 1;
    built++;
    struct starpu_task *t = starpu_task_build(c, STARPU_FLOPS, 1e5 * (double)(1 << level), 0);
    *out = (tg_probe_task){t, nothing, NULL};
    return t ? 0 : -1;
}

/* Starts a runtime, submits NTASKS equal tasks, and stops; ran[] and built count what ran. */
static int run(void) {
    ran[0] = ran[1] = built = 0;
    tg_error err;
    tg_runtime_opts o = tg_runtime_defaults();
    o.ncpu = 2;
    o.ngpu = 0;
    if (tg_runtime_start(&o, &err)) {
        diag("%s", err.msg);
        return -1;
    }
    tg_codelet_fill(&cl, &model, "tg_test_probe", fast, NULL, 0, NULL,
                    (struct tg_codelet_hints){TG_B_GEMM, 0});
    cl.cpu_funcs[1] = slow;
    cl.can_execute = where;
    tg_probe_register(&cl, probe, NULL);
    int bad = 0;
    for (int i = 0; i < NTASKS; i++) bad |= TG_INSERT_LOCAL(&cl, STARPU_FLOPS, WORK, 0) != 0;
    tg_runtime_wait_all();
    char said[1024];
    tg_probe_describe(said, sizeof said);
    diag("%s", said);
    struct starpu_task *t = starpu_task_build(&cl, STARPU_FLOPS, WORK, 0);
    struct starpu_perfmodel_arch *a = starpu_worker_get_perf_archtype(1, STARPU_NMAX_SCHED_CTXS);
    ratio = t ? starpu_task_expected_length(t, a, 1) / starpu_task_expected_length(t, a, 0) : 0;
    if (t) {
        t->destroy = 0;
        starpu_task_destroy(t);
    }
    tg_runtime_stop();
    return bad ? -1 : 0;
}

/* tg_probe_keep against the rule computed here: the types' summed rates (workers / time). */
static void check_keep(void) {
    const enum starpu_worker_archtype C = STARPU_CPU_WORKER, G = STARPU_CUDA_WORKER;
    const struct {
        const char *what;
        int n;
        enum starpu_worker_archtype type[3];
        int nw[3];
        double us[3];
    } c[] = {
        {"14 cores 3,700x slower than a GPU (rr's products on the H100 node)", 2, {C, G},
         {14, 1}, {291, 0.078}},
        {"64 cores 10x slower than a GPU", 2, {C, G}, {64, 1}, {10, 1}},
        {"cores at 0.98% of the node", 2, {C, G}, {1, 1}, {101, 1}},
        {"cores at 1.02% of the node", 2, {C, G}, {1, 1}, {97, 1}},
        {"a GPU 1,000x slower than 16 cores", 2, {C, G}, {16, 1}, {1, 1000}},
        {"two GPU kinds and cores, the cores under 1%", 3, {C, G, G}, {2, 1, 1}, {400, 1, 2}},
        {"a kind of unknown speed", 2, {C, G}, {14, 1}, {NAN, 0.078}},
        {"two kinds of core", 2, {C, C}, {1, 1}, {1, 1000}},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        double cpu = 0, gpu = 0, known = 1;
        for (int k = 0; k < c[i].n; k++) {
            known = known && c[i].us[k] > 0;
            *(c[i].type[k] == C ? &cpu : &gpu) += c[i].nw[k] / c[i].us[k];
        }
        const unsigned want = !known || !cpu || !gpu ? 0
                              : cpu < 0.01 * (cpu + gpu) ? STARPU_CUDA
                              : gpu < 0.01 * (cpu + gpu) ? STARPU_CPU
                                                         : 0;
        const unsigned got = tg_probe_keep(c[i].n, c[i].type, c[i].nw, c[i].us);
        ok(got == want, "keep: %s: mask %u (expected %u)", c[i].what, got, want);
    }
}

/* tg_probe_fit_edge against e^(mean + 2 sd) of the samples' ln work, computed here from them */
static void check_edge(void) {
    const double lnx[] = {10, 12, 14}; /* mean 12, variance 8/3 */
    double s = 0, s2 = 0;
    for (int i = 0; i < 3; i++) s += lnx[i], s2 += lnx[i] * lnx[i];
    const double want = exp(12 + 2 * sqrt(8.0 / 3)), got = tg_probe_fit_edge(s, s2, 3);
    ok(fabs(got / want - 1) < 1e-12, "fit edge: samples at e^10, e^12, e^14: %.6g (expected %.6g)",
       got, want);
    ok(fabs(tg_probe_fit_edge(3 * 15.0, 3 * 225.0, 3) / exp(15) - 1) < 1e-12,
       "fit edge: three samples of one size: that size");
    ok(isinf(tg_probe_fit_edge(15, 225, 1)), "fit edge: one sample: no edge");
}

int main(void) {
    tap_plan(18);
    check_keep();
    check_edge();
    char home[] = "/tmp/tg-probe-XXXXXX", path[512];
    if (!mkdtemp(home)) tap_skip_all("no temporary directory");
    setenv("STARPU_HOME", home, 1);
    unsetenv("XDG_CACHE_HOME");
    unsetenv("STARPU_PERF_MODEL_DIR");
    setenv("TILEGWAS_PERFMODELS", "off", 1);
    setenv("STARPU_SILENT", "1", 1);

    /* StarPU's own calibration: the test would not show anything if it sent no task to the
     * slow kind */
    setenv("TILEGWAS_PROBE", "off", 1);
    ok(run() == 0, "without the probe: the tasks ran");
    ok(ran[1] > 0, "without the probe, StarPU calibrates on worker 1 too (%d of %d tasks)",
       (int)ran[1], NTASKS);
    snprintf(path, sizeof path, "rm -rf %s/.starpu", home);
    if (system(path)) diag("could not clear %s", home);

    setenv("TILEGWAS_PROBE", "on", 1);
    int r = run();
    ok(r == 0 && built > 0, "with the probe: the codelet was probed (%d probe tasks)", (int)built);
    ok(ran[1] == 0 && ran[0] == NTASKS, "with the probe, worker 1 gets no task (%d fast, %d slow)",
       (int)ran[0], (int)ran[1]);

    /* the slower kind's prior carries the probe's margin of 2 (src/runtime/probe.c), and a
     * loaded machine (a parallel build) may slow either probe several times */
    ok(ratio > SLOW / 2.0 && ratio < SLOW * 20.0,
       "the models predict the slow kind %.2f times slower (%d, and a margin of 2)", ratio, SLOW);

    /* the prior was saved with the model */
    r = run();
    ok(r == 0 && built == 0, "a second runtime finds the models and probes nothing (%d)",
       (int)built);
    ok(ran[1] == 0, "and worker 1 still gets no task (%d fast, %d slow)", (int)ran[0],
       (int)ran[1]);
    snprintf(path, sizeof path, "rm -rf %s", home);
    if (system(path)) diag("could not remove %s", home);
    return tap_done();
}
