/* Scheduling hints, applied the same way to every codelet: heteroprio's buckets, as described by
 * the layer that starts the runtime, and each codelet's bucket, given by its family's table row.
 * The runtime knows no kernel: it maps codelets (by address) to the numbers it was given. */
#include <pthread.h>
#include <starpu_heteroprio.h>
#include <stdint.h>
#include <string.h>

#include "runtime/internal.h"

/* Open addressing on the codelet's address: a few hundred codelets at most, looked up at every
 * submission under heteroprio. */
enum { NSLOTS = 1024 };
static struct {
    pthread_mutex_t lock; /* writers only: hints are set before the tasks that read them */
    const struct starpu_codelet *cl[NSLOTS];
    int bucket[NSLOTS];
    int n;
} hints = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* the buckets of the started runtime: read by heteroprio_init during starpu_init */
static tg_sched_buckets plan;

static size_t slot_of(const struct starpu_codelet *cl) {
    uintptr_t x = (uintptr_t)cl;
    x ^= x >> 17;
    x *= UINT64_C(0x9E3779B97F4A7C15);
    size_t s = (size_t)(x >> 32) % NSLOTS;
    while (hints.cl[s] && hints.cl[s] != cl) s = (s + 1) % NSLOTS;
    return s;
}

void tg_sched_hint(const struct starpu_codelet *cl, int bucket) {
    pthread_mutex_lock(&hints.lock);
    size_t s = slot_of(cl);
    if (hints.cl[s] || hints.n < NSLOTS / 2) { /* half full at most: probes stay short */
        hints.n += !hints.cl[s];
        hints.cl[s] = cl;
        hints.bucket[s] = bucket;
    }
    pthread_mutex_unlock(&hints.lock);
}

int tg_sched_bucket(const struct starpu_codelet *cl) {
    size_t s = slot_of(cl);
    return hints.cl[s] ? hints.bucket[s] : plan.fallback;
}

/* GPUs take the buckets in their order; CPUs in plan.cpu_order, and beside GPUs a CPU takes a
 * task only when its bucket holds more than the bucket's slow factor tasks per GPU, never one of
 * a bucket without a slow factor (those stay on GPUs). StarPU 1.3.10's heteroprio has no
 * default for priorities other than 0. */
static void heteroprio_init(unsigned ctx) {
    int gpus = starpu_cuda_worker_get_count() > 0, cpus = starpu_cpu_worker_get_count() > 0;
    if (gpus) {
        starpu_heteroprio_set_nb_prios(ctx, STARPU_CUDA_IDX, (unsigned)plan.n);
        for (int b = 0; b < plan.n; b++) {
            starpu_heteroprio_set_mapping(ctx, STARPU_CUDA_IDX, (unsigned)b, (unsigned)b);
            starpu_heteroprio_set_faster_arch(ctx, STARPU_CUDA_IDX, (unsigned)b);
        }
    }
    if (cpus) {
        int order[STARPU_HETEROPRIO_MAX_PRIO], n = 0;
        for (int i = 0; i < plan.n; i++)
            if (!gpus || plan.cpu_slow[plan.cpu_order[i]] > 0) order[n++] = plan.cpu_order[i];
        starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_IDX, (unsigned)n);
        for (int i = 0; i < n; i++) {
            starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, (unsigned)i, (unsigned)order[i]);
            if (gpus)
                starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_IDX, (unsigned)order[i],
                                                       plan.cpu_slow[order[i]]);
        }
    }
}

void tg_sched_conf(struct starpu_conf *conf, const char *sched, const tg_sched_buckets *buckets) {
    conf->sched_policy_name = sched;
    if (strcmp(sched, "heteroprio")) return;
    plan = *buckets;
    conf->sched_policy_init = heteroprio_init;
}
