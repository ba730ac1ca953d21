/* A set of independent tasks (a genotype product's blocks) and where they run: placed by the
 * scheduler, or, on CPU workers alone, pulled by the workers one at a time.
 *
 * Why pull: dmdas places a task when it is submitted, from the models' times; with every task
 * submitted at once, a core running slower than its model (a busy neighbour on a virtual
 * machine) kept its full share and ended the product last (H100 node, 16 cores: the busiest core
 * 33% above the mean), and with two tasks per worker in flight it still got the next task as
 * soon as its late one was due. With a GPU, which takes every task, the scheduler's placement is
 * kept (with a window of tasks in flight, Z·Λ took 12.5 ms instead of 11.0). */
#include <pthread.h>
#include <stdlib.h>

#include "runtime/runtime.h"

/* Each worker starts with one task and, as its task ends, the task's callback submits the next
 * one to the same worker, in submission order. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t all_done;
    tg_submit_fn submit;
    void *ctx;
    int64_t n, next, finished; /* tasks: count, next to submit, ended (or never run) */
    int err;                   /* the first failed submission's code */
} pull_state;

/* Counts @p ended tasks; a failed submission ends every task not yet submitted. */
static void pull_count(pull_state *p, int64_t ended, int ret) {
    pthread_mutex_lock(&p->lock);
    if (ret) {
        if (!p->err) p->err = ret;
        ended += p->n - p->next;
        p->next = p->n;
    }
    p->finished += ended;
    if (p->finished == p->n) pthread_cond_signal(&p->all_done);
    pthread_mutex_unlock(&p->lock); /* the last touch: the caller may free p after it */
}

static void pull_next(void *arg) {
    pull_state *p = arg;
    pthread_mutex_lock(&p->lock);
    const int64_t i = p->next < p->n ? p->next++ : -1;
    pthread_mutex_unlock(&p->lock);
    /* to this worker (to any when the callback runs on another thread) */
    const int ret = i >= 0 ? p->submit(p->ctx, i, starpu_worker_get_id(), pull_next, p) : 0;
    pull_count(p, ret ? 2 : 1, ret); /* this callback's task, and task i if it never runs */
}

int tg_runtime_submit_set(int64_t n, int pull, tg_submit_fn submit, void *ctx) {
    /* CPU workers only (see above). StarPU's submission limits (STARPU_LIMIT_*_SUBMITTED_TASKS)
     * make a submission wait for tasks to end, which StarPU refuses in a callback: the scheduler
     * then places the tasks */
    pull = pull && tg_runtime_ngpu() == 0 && !getenv("STARPU_LIMIT_MAX_SUBMITTED_TASKS") &&
           !getenv("STARPU_LIMIT_MIN_SUBMITTED_TASKS");
    int workers[STARPU_NMAXWORKERS];
    const int nw = pull ? starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, workers,
                                                        STARPU_NMAXWORKERS)
                        : 0;
    if (nw == 0) { /* every task at once, placed by the scheduler */
        for (int64_t i = 0; i < n; i++) {
            int ret = submit(ctx, i, -1, NULL, NULL);
            if (ret) return ret;
        }
        return 0;
    }
    pull_state p = {.submit = submit, .ctx = ctx, .n = n};
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.all_done, NULL);
    /* one task a worker to start with: a second one queued behind it would end the set late on
     * a core slowed by its neighbours (H100 node, Zᵀ·Λ̃: the cores idle 118 ms of 480 after
     * their last task); the callback's submission costs the worker microseconds */
    const int64_t first = n < (int64_t)nw ? n : (int64_t)nw;
    p.next = first;
    for (int64_t i = 0; i < first; i++) {
        int ret = submit(ctx, i, workers[i % nw], pull_next, &p);
        if (ret) { /* tasks i .. first − 1 never run */
            pull_count(&p, first - i, ret);
            break;
        }
    }
    pthread_mutex_lock(&p.lock);
    while (p.finished < p.n) pthread_cond_wait(&p.all_done, &p.lock);
    pthread_mutex_unlock(&p.lock);
    pthread_cond_destroy(&p.all_done);
    pthread_mutex_destroy(&p.lock);
    return p.err;
}
