/* The makespan bounds of bench/sched and the task graph they read: the area bound against closed
 * forms and against a bisection on T, the recorder's predecessors on a small graph of tasks with
 * known access modes (and their times: a predecessor ends before its successor starts), and the
 * critical path of that graph. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bound.h"
#include "runtime/runtime.h"
#include "tap.h"

/* Whether the tasks fit within T (to rounding): the fractional greedy by b/a fills kind 0 up to
 * p·T, the rest must fit in q·T. */
static int fits(int nt, const double *cnt, const double (*t)[2], const int w[2], double T) {
    double cap0 = w[0] * T, load1 = 0, total = 0;
    int *order = malloc((size_t)nt * sizeof *order);
    for (int i = 0; i < nt; i++) order[i] = i;
    for (int i = 0; i < nt; i++) /* selection sort by b/a, descending */
        for (int j = i + 1; j < nt; j++)
            if (t[order[j]][1] * t[order[i]][0] > t[order[i]][1] * t[order[j]][0]) {
                int x = order[i];
                order[i] = order[j], order[j] = x;
            }
    for (int k = 0; k < nt; k++) {
        int i = order[k];
        double x = t[i][0] > 0 ? fmin(cnt[i], cap0 / t[i][0]) : cnt[i];
        cap0 -= x * t[i][0];
        load1 += (cnt[i] - x) * t[i][1];
        total += cnt[i] * (t[i][0] + t[i][1]);
    }
    free(order);
    return load1 <= w[1] * T + 1e-12 * total;
}

static void area_bounds(uint64_t seed) {
    int one_kind[2] = {4, 0}, both[2] = {2, 1}, single[2] = {1, 1}, none_of_1[2] = {3, 0};
    double c10[] = {10}, c44[] = {4, 4}, c3[] = {3};
    const double unit[][2] = {{1, INFINITY}};
    ok_close(tg_area_bound(1, c10, unit, one_kind), 2.5, 1e-15,
             "area: 10 tasks of 1 s on 4 identical workers take 2.5 s");
    const double t41[][2] = {{4, 1}};
    ok_close(tg_area_bound(1, c10, t41, both), 10.0 / (2.0 / 4 + 1.0 / 1), 1e-15,
             "area: one type on 2 slow + 1 fast workers, n / (p/a + q/b) = 6.667 s");
    const double swap[][2] = {{1, 4}, {4, 1}};
    ok_close(tg_area_bound(2, c44, swap, single), 4, 1e-15,
             "area: two types, each kind takes the one it runs 4x faster: 4 s");
    const double gpu_only[][2] = {{INFINITY, 2}};
    ok_close(tg_area_bound(1, c3, gpu_only, both), 6, 1e-15,
             "area: a type without a kind-0 implementation stays on kind 1");
    ok(isinf(tg_area_bound(1, c3, gpu_only, none_of_1)),
       "area: infinite when a type can run on no worker present");
    /* kind 0 alone can only take the first type; the split of the second follows */
    const double mixed[][2] = {{2, INFINITY}, {3, 1}};
    double c21[] = {2, 6};
    /* kind 0: 4 s fixed + x·3; kind 1: (6 − x)·1; equal at 4 + 3x = 6 − x, x = 0.5: T = 5.5 */
    ok_close(tg_area_bound(2, c21, mixed, single), 5.5, 1e-15,
             "area: a fixed kind-0 load and one split type: 5.5 s");

    /* random instances: the closed form fits and 1e-6 less does not */
    tg_rng r;
    tg_rng_seed(&r, seed);
    int bad = 0;
    for (int inst = 0; inst < 500; inst++) {
        int nt = 1 + (int)tg_rng_below(&r, 6), w[2] = {1 + (int)tg_rng_below(&r, 8),
                                                        (int)tg_rng_below(&r, 3)};
        double cnt[6], t[6][2];
        for (int i = 0; i < nt; i++) {
            cnt[i] = 1 + (double)tg_rng_below(&r, 50);
            t[i][0] = 0.01 + tg_rng_uniform(&r);
            t[i][1] = 0.001 + tg_rng_uniform(&r) * (tg_rng_below(&r, 2) ? 0.1 : 2);
        }
        double T = tg_area_bound(nt, cnt, (const double(*)[2])t, w);
        if (!fits(nt, cnt, (const double(*)[2])t, w, T) ||
            fits(nt, cnt, (const double(*)[2])t, w, T * (1 - 1e-6))) {
            if (!bad)
                diag("first bad instance %d: %d types, workers %d + %d, T %.17g", inst, nt, w[0],
                     w[1], T);
            bad++;
        }
    }
    ok(bad == 0, "area: 500 random instances, the bound is the least T the greedy fits (%d bad)",
       bad);
}

/* A task that takes a millisecond, so that start and end times are apart. */
static void sleep_ms(void *buffers[], void *arg) {
    (void)buffers, (void)arg;
    nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
}
static struct starpu_codelet cl = {.cpu_funcs = {sleep_ms},
                                   .nbuffers = STARPU_VARIABLE_NBUFFERS,
                                   .name = "test_sleep"};

static const tg_task_record *by_id(const tg_task_record *r, size_t n, int64_t id) {
    for (size_t i = 0; i < n; i++)
        if (r[i].id == id) return &r[i];
    return NULL;
}

static int preds_are(const tg_task_record *t, int n, const int64_t *want) {
    if (!t || t->npred != n) return 0;
    for (int k = 0; k < n; k++)
        if (t->pred[k] != want[k]) return 0;
    return 1;
}

static void graph(void) {
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    o.ncpu = 2;
    o.ngpu = 0;
    o.sched = "eager";
    if (!ok(tg_runtime_start(&o, &err) == TG_OK, "runtime starts%s%s", *err.msg ? ": " : "",
            err.msg))
        return;
    double v[6] = {0};
    starpu_data_handle_t h[6];
    for (int i = 0; i < 6; i++)
        starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&v[i], sizeof v[i]);
    enum { A, B, C, D, E, F };
    tg_record_start(0);
    /* the graph: id, accesses, expected predecessors */
    TG_INSERT_LOCAL(&cl, STARPU_W, h[A], 0);                        /* 0: {}     */
    TG_INSERT_LOCAL(&cl, STARPU_R, h[A], STARPU_W, h[B], 0);        /* 1: {0}    */
    TG_INSERT_LOCAL(&cl, STARPU_R, h[A], STARPU_W, h[C], 0);        /* 2: {0}    */
    TG_INSERT_LOCAL(&cl, STARPU_RW, h[A], 0);                       /* 3: {1, 2} */
    TG_INSERT_LOCAL(&cl, STARPU_R, h[B], STARPU_R, h[C], 0);        /* 4: {1, 2} */
    TG_INSERT_LOCAL(&cl, STARPU_W, h[D], STARPU_SCRATCH, h[E], 0);  /* 5: {}     */
    TG_INSERT_LOCAL(&cl, STARPU_R, h[A], STARPU_R, h[D], 0);        /* 6: {3, 5} */
    TG_INSERT_LOCAL(&cl, STARPU_W, h[B], STARPU_SCRATCH, h[E], 0);  /* 7: {4}    */
    TG_INSERT_LOCAL(&cl, STARPU_R, h[E], STARPU_R, h[F], 0);        /* 8: {}     */
    /* a handle registered at the address of an unregistered one starts with no history */
    starpu_data_unregister(h[F]);
    starpu_data_handle_t old = h[F];
    starpu_variable_data_register(&h[F], STARPU_MAIN_RAM, (uintptr_t)&v[F], sizeof v[F]);
    TG_INSERT_LOCAL(&cl, STARPU_W, h[F], 0);                        /* 9: {}     */
    TG_INSERT_LOCAL(&cl, STARPU_R, h[F], 0);                        /* 10: {9}   */
    /* the same whatever malloc does: a handle without the recorder's mark, as StarPU registers
     * every handle, is taken for a new one even where a known handle was */
    starpu_data_set_user_data(h[A], NULL);
    TG_INSERT_LOCAL(&cl, STARPU_R, h[A], 0);                        /* 11: {}    */
    size_t n;
    tg_task_record *r = tg_record_stop(&n);
    for (int i = 0; i < 6; i++) starpu_data_unregister(h[i]);
    diag("the new handle %s the old one's address", h[F] == old ? "has" : "does not have");

    ok(r && n == 12, "12 records (%zu)", n);
    int ids = 1;
    for (size_t i = 0; r && i < n; i++) ids &= r[i].id == (int64_t)i;
    ok(ids, "records in id order, ids 0..11");
    static const int64_t p1[] = {0}, p3[] = {1, 2}, p6[] = {3, 5}, p7[] = {4}, p10[] = {9};
    ok(preds_are(by_id(r, n, 0), 0, NULL) && preds_are(by_id(r, n, 5), 0, NULL),
       "first writers wait for nothing (scratch buffers add no edge)");
    ok(preds_are(by_id(r, n, 1), 1, p1) && preds_are(by_id(r, n, 2), 1, p1),
       "readers wait for the last writer");
    ok(preds_are(by_id(r, n, 3), 2, p3), "a writer waits for every reader since the last write");
    ok(preds_are(by_id(r, n, 4), 2, p3), "a task reading two handles waits for both writers");
    ok(preds_are(by_id(r, n, 6), 2, p6), "reads after RW and W: {3, 5}");
    ok(preds_are(by_id(r, n, 7), 1, p7), "write after read of another handle's writer: {4}");
    ok(preds_are(by_id(r, n, 8), 0, NULL), "reads of a scratch-only and an unwritten handle: {}");
    ok(preds_are(by_id(r, n, 9), 0, NULL) && preds_are(by_id(r, n, 10), 1, p10),
       "a newly registered handle has no history");
    ok(preds_are(by_id(r, n, 11), 0, NULL), "an unmarked handle at a known address has no history");
    int order = 1;
    for (size_t i = 0; r && i < n; i++) {
        order &= r[i].end >= r[i].start && r[i].worker >= 0 && !strcmp(r[i].kernel, "test_sleep");
        for (int k = 0; k < r[i].npred; k++) {
            const tg_task_record *p = by_id(r, n, r[i].pred[k]);
            order &= p && p->end <= r[i].start + 1e-6;
        }
    }
    ok(order, "every task ends after it starts, after its predecessors end, named by its codelet");

    /* critical path with task i costing i + 1 (the chain 9-10 costing 2, task 11 one): 0-1-3-6
     * = 1+2+4+7 = 14, 0-2-4-7 = 1+3+5+8 = 17 */
    double cost[12];
    for (int i = 0; i < 12; i++) cost[i] = i < 9 ? i + 1 : 1;
    ok_close(r && n == 12 ? tg_critical_path(r, n, cost) : 0, 17, 1e-15,
             "critical path 0-2-4-7: 17");
    for (int i = 0; i < 12; i++) cost[i] = 1;
    ok_close(r && n == 12 ? tg_critical_path(r, n, cost) : 0, 4, 1e-15, "unit costs: 4 tasks deep");
    free(r);
    tg_runtime_stop();
}

int main(void) {
    tap_plan(22);
    area_bounds(tap_seed());
    graph();
    return tap_done();
}
