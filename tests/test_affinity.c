/* StarPU's threads stay inside the process's CPU set: the test binds itself to the last CPU
 * of its mask (as `taskset -c` would), starts the runtime and asks every CPU worker's thread
 * for its own affinity (pthread_getaffinity_np), which must be that CPU alone; the host pool
 * runs one thread; --ncpu 2 is refused. The last CPU rather than the first: StarPU binds its
 * first worker to CPU 0 when left to itself. */
#define _GNU_SOURCE /* sched_setaffinity, pthread_getaffinity_np */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "runtime/runtime.h"
#include "tap.h"

static cpu_set_t seen[STARPU_NMAXWORKERS];
static int got[STARPU_NMAXWORKERS];

static void record(void *arg) {
    (void)arg;
    int w = starpu_worker_get_id_check();
    got[w] = pthread_getaffinity_np(pthread_self(), sizeof seen[w], &seen[w]) == 0;
}

int main(void) {
    cpu_set_t mask, one;
    if (sched_getaffinity(0, sizeof mask, &mask)) tap_skip_all("sched_getaffinity failed");
    int last = -1;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &mask)) last = i;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    if (sched_setaffinity(0, sizeof one, &one)) tap_skip_all("sched_setaffinity failed");
    diag("bound to CPU %d of %d", last, CPU_COUNT(&mask));

    tg_error err;
    tg_runtime_opts o = tg_runtime_defaults();
    o.ngpu = 0;
    if (!ok(tg_runtime_start(&o, &err) == TG_OK, "runtime starts on one CPU")) {
        diag("%s", err.msg);
        return tap_done();
    }
    ok(tg_runtime_ncpu() == 1, "1 CPU worker by default (%d)", tg_runtime_ncpu());
    starpu_execute_on_each_worker(record, NULL, STARPU_CPU);
    int inside = tg_runtime_ncpu() > 0;
    for (int w = 0; w < (int)starpu_worker_get_count(); w++)
        if (starpu_worker_get_type(w) == STARPU_CPU_WORKER) {
            inside &= got[w] && CPU_EQUAL(&seen[w], &one);
            if (got[w]) diag("worker %d: %d CPUs in its mask, CPU %d %s", w, CPU_COUNT(&seen[w]),
                             last, CPU_ISSET(last, &seen[w]) ? "among them" : "not among them");
        }
    ok(inside, "every CPU worker's thread is bound to CPU %d alone", last);
    char desc[2048], on[32];
    tg_runtime_describe(desc, sizeof desc);
    snprintf(on, sizeof on, "1 CPU worker on CPU %d,", last);
    ok(strstr(desc, on) != NULL, "describe: %s", desc);
    ok(tg_parallel_threads() == 1, "the host pool runs %d thread (want 1)", tg_parallel_threads());
    tg_runtime_stop();

    o.ncpu = 2;
    char want[128];
    snprintf(want, sizeof want, "(affinity mask %d); use at most 1", last);
    tg_status st = tg_runtime_start(&o, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, want), "--ncpu 2 on one CPU refused: %s",
       st ? err.msg : "it started");
    if (!st) tg_runtime_stop();
    tap_plan(tap_n);
    return tap_done();
}
