/* Task records: the start and end of every task inserted through TG_INSERT / TG_INSERT_LOCAL
 * while recording, from StarPU's profiling API, for `tilegwas calibrate` (predicted against
 * measured), `--trace` and bench/sched (Gantt charts, busy shares). */
#include <math.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

/* what a recorded task carries to its callback: the callback it had before */
struct rec_hook {
    void (*func)(void *);
    void *arg;
    int free_arg;
    double work; /* taken at submission, while the handles surely exist */
};

static struct {
    int on, predict;
    double t0; /* µs, StarPU's clock */
    pthread_mutex_t lock;
    tg_task_record *r;
    size_t n, cap;
} rec = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double since_t0(struct timespec *ts) {
    return (starpu_timing_timespec_to_us(ts) - rec.t0) * 1e-6;
}

size_t tg_task_work(struct starpu_task *task, unsigned nimpl) {
    (void)nimpl;
    if (task->flops > 0) return (size_t)task->flops;
    size_t bytes = 0;
    for (unsigned i = 0; i < STARPU_TASK_GET_NBUFFERS(task); i++)
        bytes += starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, i));
    return bytes;
}

static void record_done(void *arg) {
    struct rec_hook *h = arg;
    struct starpu_task *task = starpu_task_get_current();
    struct starpu_profiling_task_info *p = task ? task->profiling_info : NULL;
    if (p && task->cl) {
        tg_task_record r = {
            .kernel = task->cl->model && task->cl->model->symbol ? task->cl->model->symbol
                                                                  : task->cl->name,
            .worker = p->workerid,
            .submit = since_t0(&p->submit_time),
            .start = since_t0(&p->start_time),
            .end = since_t0(&p->end_time),
            .predicted = NAN,
            .work = h->work,
        };
        if (rec.predict && task->cl->model && p->workerid >= 0) {
            /* the model's prediction for the worker that ran it, whatever the scheduler */
            struct starpu_perfmodel_arch *arch =
                starpu_worker_get_perf_archtype(p->workerid, task->sched_ctx);
            r.predicted = starpu_task_expected_length(task, arch, 0) * 1e-6;
        } else if (!isnan(task->predicted)) {
            r.predicted = task->predicted * 1e-6;
        }
        pthread_mutex_lock(&rec.lock);
        if (rec.n == rec.cap) {
            size_t cap = rec.cap ? 2 * rec.cap : 4096;
            tg_task_record *g = realloc(rec.r, cap * sizeof *g);
            if (g) rec.r = g, rec.cap = cap;
        }
        if (rec.n < rec.cap) rec.r[rec.n++] = r; /* out of memory: the record is dropped */
        pthread_mutex_unlock(&rec.lock);
    }
    if (h->func) h->func(h->arg);
    if (h->free_arg) free(h->arg);
    free(h);
}

int tg_task_submit(struct starpu_task *task) {
    if (!task) return -EINVAL;
    task->name = task->cl ? task->cl->name : NULL; /* starpu_task_build names it "task_build" */
    if (rec.on) {
        struct rec_hook *h = malloc(sizeof *h);
        if (h) {
            *h = (struct rec_hook){task->callback_func, task->callback_arg,
                                   task->callback_arg_free, (double)tg_task_work(task, 0)};
            task->callback_func = record_done;
            task->callback_arg = h;
            task->callback_arg_free = 0;
        }
    }
    int ret = starpu_task_submit(task);
    if (ret == -ENODEV) { /* as starpu_task_insert does */
        if (rec.on && task->callback_func == record_done) {
            struct rec_hook *h = task->callback_arg;
            if (h->free_arg) free(h->arg);
            free(h);
            task->callback_func = NULL;
        }
        task->destroy = 0;
        starpu_task_destroy(task);
    }
    return ret;
}

void tg_record_start(int predict) {
    tg_runtime_wait_all();
    pthread_mutex_lock(&rec.lock);
    free(rec.r);
    rec.r = NULL;
    rec.n = rec.cap = 0;
    rec.predict = predict;
    rec.t0 = starpu_timing_now();
    pthread_mutex_unlock(&rec.lock);
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    rec.on = 1;
}

tg_task_record *tg_record_stop(size_t *count) {
    tg_runtime_wait_all();
    rec.on = 0;
    starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
    pthread_mutex_lock(&rec.lock);
    tg_task_record *r = rec.r;
    *count = rec.n;
    rec.r = NULL;
    rec.n = rec.cap = 0;
    pthread_mutex_unlock(&rec.lock);
    return r;
}

#ifdef TG_USE_MPI
_Thread_local int tg_insert_ret;
int tg_task_submit_mpi(struct starpu_task *task) { return task ? tg_task_submit(task) : 0; }
#endif
