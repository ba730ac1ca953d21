/* Task records: the start and end of every task inserted through TG_INSERT / TG_INSERT_LOCAL
 * while recording, from StarPU's profiling API, for `tilegwas calibrate` (predicted against
 * measured), `--trace` and bench/sched (Gantt charts, busy shares). */
#include <math.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"

/* what a recorded task carries to its callback: the callback it had before */
struct rec_hook {
    void (*func)(void *);
    void *arg;
    int free_arg;
    double work; /* taken at submission, while the handles surely exist */
    int64_t id;
    int npred;
    int64_t *pred; /* malloc'd; the record owns it until tg_record_stop packs it */
};

/* A handle's sequential-consistency state: its last writer and the readers since. */
struct access {
    starpu_data_handle_t h; /* NULL: a free slot */
    int64_t writer;         /* -1: none recorded */
    int64_t *readers;
    int nreaders, cap;
};

static struct {
    int on, predict;
    double t0; /* µs, StarPU's clock */
    pthread_mutex_t lock;
    tg_task_record *r;
    size_t n, cap;
    /* submission side: ids and the handle table, under their own lock so that callbacks,
     * which take `lock`, never wait for a submission */
    pthread_mutex_t dep_lock;
    int64_t next_id;
    struct access *tab; /* open addressing keyed by handle pointer, at most half full */
    size_t tab_cap, tab_n;
} rec = {.lock = PTHREAD_MUTEX_INITIALIZER, .dep_lock = PTHREAD_MUTEX_INITIALIZER};

/* Handles are malloc'd by StarPU, so a handle registered after another was unregistered may get
 * its address: a handle without the note TG_NOTE_SEEN is new, and its old state is dropped. */

static size_t slot_of(starpu_data_handle_t h, size_t cap) {
    uint64_t k = (uint64_t)(uintptr_t)h * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing */
    return (size_t)(k >> 17) & (cap - 1);
}

static void table_clear(void) {
    for (size_t i = 0; i < rec.tab_cap; i++) free(rec.tab[i].readers);
    free(rec.tab);
    rec.tab = NULL;
    rec.tab_cap = rec.tab_n = 0;
}

/* The slot of @p h: its own, or the free one where it would go. */
static struct access *table_find(starpu_data_handle_t h) {
    size_t j = slot_of(h, rec.tab_cap);
    while (rec.tab[j].h && rec.tab[j].h != h) j = (j + 1) & (rec.tab_cap - 1);
    return &rec.tab[j];
}

/* The state of @p h, inserted (no writer, no reader) when absent; NULL when out of memory. */
static struct access *table_get(starpu_data_handle_t h) {
    struct access *a = rec.tab ? table_find(h) : NULL;
    if (!a || !a->h) {
        if (2 * (rec.tab_n + 1) > rec.tab_cap) {
            size_t cap = rec.tab_cap ? 2 * rec.tab_cap : 1024, old = rec.tab_cap;
            struct access *t = calloc(cap, sizeof *t), *o = rec.tab;
            if (!t) return NULL;
            rec.tab = t;
            rec.tab_cap = cap;
            for (size_t i = 0; i < old; i++)
                if (o[i].h) *table_find(o[i].h) = o[i];
            free(o);
        }
        a = table_find(h);
        *a = (struct access){.h = h, .writer = -1};
        rec.tab_n++;
    } else if (!(tg_handle_notes(h) & TG_NOTE_SEEN)) {
        a->writer = -1; /* a new handle at an old one's address */
        a->nreaders = 0;
    }
    tg_handle_notes_set(h, tg_handle_notes(h) | TG_NOTE_SEEN);
    return a;
}

static int cmp_id(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A buffer of a task that takes part in sequential consistency, taken before the submission
 * (the task may be done and destroyed by the time starpu_task_submit returns). */
struct buf {
    starpu_data_handle_t h;
    int writes; /* a reduction or a commuting access counts as a write: after everything */
};

/* The buffers of @p task that order it (scratch buffers and handles with sequential
 * consistency off, for the handle or this task, do not); *b is malloc'd (NULL when none).
 * -ENOMEM when out of memory. */
static int task_bufs(struct starpu_task *task, struct buf **b, unsigned *n) {
    unsigned nb = STARPU_TASK_GET_NBUFFERS(task);
    *b = NULL;
    *n = 0;
    if (!task->sequential_consistency || !nb) return 0;
    if (!(*b = malloc(nb * sizeof **b))) return -ENOMEM;
    for (unsigned i = 0; i < nb; i++) {
        starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
        enum starpu_data_access_mode m = STARPU_TASK_GET_MODE(task, i);
        if ((m & STARPU_SCRATCH) || !starpu_data_get_sequential_consistency_flag(h) ||
            (task->handles_sequential_consistency && !task->handles_sequential_consistency[i]))
            continue;
        (*b)[(*n)++] = (struct buf){h, (m & (STARPU_W | STARPU_REDUX)) != 0};
    }
    return 0;
}

/* The predecessors of a task accessing @p b: sorted, without repeats, in *pred (malloc'd, NULL
 * when none). -ENOMEM when out of memory. */
static int task_preds(const struct buf *b, unsigned nb, int64_t **pred, int *npred) {
    size_t n = 0, cap = 0;
    int64_t *p = NULL;
    for (unsigned i = 0; i < nb; i++) {
        struct access *a = table_get(b[i].h);
        if (!a) goto nomem;
        int with_readers = b[i].writes && a->nreaders > 0;
        size_t add = with_readers ? (size_t)a->nreaders : a->writer >= 0;
        if (n + add > cap) {
            cap = 2 * (n + add);
            int64_t *g = realloc(p, cap * sizeof *g);
            if (!g) goto nomem;
            p = g;
        }
        if (with_readers) memcpy(p + n, a->readers, (size_t)a->nreaders * sizeof *p);
        else if (add) p[n] = a->writer;
        n += add;
    }
    if (n > 1) {
        qsort(p, n, sizeof *p, cmp_id);
        size_t u = 1;
        for (size_t i = 1; i < n; i++)
            if (p[i] != p[u - 1]) p[u++] = p[i];
        n = u;
    }
    *pred = p;
    *npred = (int)n;
    return 0;
nomem:
    free(p);
    return -ENOMEM;
}

/* Once task @p id, accessing @p b, is submitted: the last writer or one more reader of them. */
static void task_accessed(const struct buf *b, unsigned nb, int64_t id) {
    for (unsigned i = 0; i < nb; i++) {
        struct access *a = table_get(b[i].h); /* found: task_preds inserted it */
        if (b[i].writes) {
            a->writer = id;
            a->nreaders = 0;
        } else if (!a->nreaders || a->readers[a->nreaders - 1] != id) { /* once per task */
            if (a->nreaders == a->cap) {
                int cap = a->cap ? 2 * a->cap : 4;
                int64_t *g = realloc(a->readers, (size_t)cap * sizeof *g);
                if (!g) continue; /* out of memory: an edge less, the critical path stays a bound */
                a->readers = g;
                a->cap = cap;
            }
            a->readers[a->nreaders++] = id;
        }
    }
}

static double since_t0(struct timespec *ts) {
    return (starpu_timing_timespec_to_us(ts) - rec.t0) * 1e-6;
}

size_t tg_task_work(struct starpu_task *task, unsigned nimpl) {
    (void)nimpl;
    if (task->flops > 0) return (size_t)task->flops;
    size_t bytes = 0;
    for (unsigned i = 0; i < STARPU_TASK_GET_NBUFFERS(task); i++) {
        starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
        if (h) bytes += starpu_data_get_size(h); /* none on the probe's paper tasks */
    }
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
            .id = h->id,
            .npred = h->npred,
            .pred = h->pred,
        };
        h->pred = NULL; /* the record owns it */
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
        else free((void *)r.pred);
        pthread_mutex_unlock(&rec.lock);
    }
    if (h->func) h->func(h->arg);
    if (h->free_arg) free(h->arg);
    free(h->pred);
    free(h);
}

/* starpu_task_submit, and on -ENODEV what starpu_task_insert does: the task is destroyed (with
 * hook @p h, its callback's state) */
static int submit(struct starpu_task *task, struct rec_hook *h) {
    int ret = starpu_task_submit(task);
    if (ret == -ENODEV) {
        if (h) {
            task->callback_func = NULL;
            if (h->free_arg) free(h->arg);
            free(h->pred);
            free(h);
        }
        task->destroy = 0;
        starpu_task_destroy(task);
    }
    return ret;
}

/* Whether a worker of a type in @p where can run @p task (its codelet may refuse a task on a
 * kind, e.g. for its size). */
static int runnable_on(struct starpu_task *task, unsigned where) {
    for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
        enum starpu_worker_archtype t = starpu_worker_get_type((int)w);
        unsigned mask = t == STARPU_CPU_WORKER    ? STARPU_CPU
                        : t == STARPU_CUDA_WORKER ? STARPU_CUDA
                                                  : 0;
        if ((mask & where) && starpu_worker_can_execute_task(w, task, 0)) return 1;
    }
    return 0;
}

int tg_task_submit(struct starpu_task *task) {
    if (!task) return -EINVAL;
    const unsigned where = tg_models_ensure(task);
    if (where && task->where == -1 && runnable_on(task, where)) task->where = (int)where;
    task->name = task->cl ? task->cl->name : NULL; /* starpu_task_build names it "task_build" */
    /* heteroprio reads a task's priority as its bucket */
    if (tg_runtime_heteroprio() && task->cl) task->priority = tg_sched_bucket(task->cl);
    tg_homes_place(task);
    struct tg_phase_task *pt = tg_phase_attach(task); /* the progress callback, innermost */
    if (!rec.on) {
        int ret = submit(task, NULL);
        tg_phase_submitted(pt, ret);
        return ret;
    }
    /* held across the submission so that the table sees the tasks in StarPU's order */
    pthread_mutex_lock(&rec.dep_lock);
    struct buf *b = NULL;
    unsigned nb = 0;
    struct rec_hook *h = malloc(sizeof *h);
    if (h) {
        *h = (struct rec_hook){task->callback_func, task->callback_arg, task->callback_arg_free,
                               (double)tg_task_work(task, 0), rec.next_id, 0, NULL};
        if (task_bufs(task, &b, &nb) || task_preds(b, nb, &h->pred, &h->npred)) {
            free(h); /* out of memory: the task runs unrecorded */
            h = NULL;
        } else {
            task->callback_func = record_done;
            task->callback_arg = h;
            task->callback_arg_free = 0;
        }
    }
    int ret = submit(task, h);
    if (!ret && h) task_accessed(b, nb, rec.next_id++);
    pthread_mutex_unlock(&rec.dep_lock);
    tg_phase_submitted(pt, ret);
    free(b);
    return ret;
}

static int cmp_record(const void *a, const void *b) {
    return cmp_id(&((const tg_task_record *)a)->id, &((const tg_task_record *)b)->id);
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
    pthread_mutex_lock(&rec.dep_lock);
    table_clear();
    rec.next_id = 0;
    pthread_mutex_unlock(&rec.dep_lock);
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    rec.on = 1;
}

tg_task_record *tg_record_stop(size_t *count) {
    tg_runtime_wait_all();
    rec.on = 0;
    starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
    pthread_mutex_lock(&rec.dep_lock);
    table_clear();
    pthread_mutex_unlock(&rec.dep_lock);
    pthread_mutex_lock(&rec.lock);
    tg_task_record *r = rec.r;
    size_t n = rec.n;
    rec.r = NULL;
    rec.n = rec.cap = 0;
    pthread_mutex_unlock(&rec.lock);
    /* one block: the records, then their predecessor lists */
    size_t npred = 0;
    for (size_t i = 0; i < n; i++) npred += (size_t)r[i].npred;
    tg_task_record *out = malloc(n * sizeof *out + npred * sizeof(int64_t) + 1);
    if (out) {
        if (n) qsort(r, n, sizeof *r, cmp_record); /* r is NULL when no task ran */
        int64_t *p = (int64_t *)(out + n);
        for (size_t i = 0; i < n; i++) {
            out[i] = r[i];
            if (r[i].npred) memcpy(p, r[i].pred, (size_t)r[i].npred * sizeof *p);
            out[i].pred = p;
            p += r[i].npred;
        }
    }
    for (size_t i = 0; i < n; i++) free((void *)r[i].pred);
    free(r);
    *count = out ? n : 0;
    return out;
}

#ifdef TG_USE_MPI
_Thread_local int tg_insert_ret;
int tg_task_submit_mpi(struct starpu_task *task) { return task ? tg_task_submit(task) : 0; }
#endif
