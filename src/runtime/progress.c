/* Progress of long phases: the process-wide hook (tg_progress_set) and the phases that feed it.
 * A task phase counts the flops of the tasks its thread submits, through a callback wrapped
 * around each task's own (the algorithms never wait for that: their tasks end in StarPU's
 * order). Phases report in the order they were opened: a phase's tasks may still end after
 * the next phase's first tasks (StarPU releases a task's data before its callback runs), so a
 * later phase stays silent until every earlier one has given its last figures. Everything is
 * under one lock, taken once per task submitted and ended, and only while a hook is set: tile
 * tasks take milliseconds, the lock a fraction of a microsecond. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "io/out.h"
#include "runtime/runtime.h"

/* Seconds between two reports of a phase (its last is always sent): the hook's user throttles
 * its own output further; this keeps a hook from running at every task of a fast phase. */
#define REPORT_EVERY 0.1

struct tg_phase {
    const char *name, *unit;
    int64_t done, total, pending; /* pending: tasks attached that have not ended */
    int busy;                     /* callbacks of its tasks running */
    int gone;                     /* over: reported and out of the list (freed once not busy) */
    int known;                    /* total given at opening */
    int host;                     /* done counted by the host (tg_phase_add), not by tasks */
    int closed;
    int announced;                /* told the hook it started (total −1) */
    double last;                  /* when it last reported (its opening before that) */
    struct tg_phase *next;        /* the next phase opened */
};

/* What a counted task carries to its callback: its phase and the callback it had before. */
struct tg_phase_task {
    tg_phase *phase;
    int64_t weight;
    void (*func)(void *);
    void *arg;
    int free_arg;
};

static struct {
    pthread_mutex_t lock;
    tg_progress_fn fn;
    void *ctx;
    tg_phase *head, *tail; /* phases not yet over, in opening order */
} prog = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The phase counting this thread's submissions (a task's callback: its task's phase). */
static _Thread_local tg_phase *current;

void tg_progress_set(tg_progress_fn fn, void *ctx) {
    pthread_mutex_lock(&prog.lock);
    prog.fn = fn;
    prog.ctx = ctx;
    pthread_mutex_unlock(&prog.lock);
}

/* Under the lock: reports the oldest phase when due, and while it is over, its last figures,
 * frees it and goes on with the next. */
static void report(void) {
    double now = tg_now();
    while (prog.head) {
        tg_phase *p = prog.head;
        int over = p->closed && p->pending == 0;
        if (!over && !p->announced) { /* it starts (for the hook's clock) */
            if (prog.fn) prog.fn(prog.ctx, p->name, p->unit, p->done, -1);
            p->announced = 1;
            p->last = now;
        }
        if (!over && !p->known && !p->closed) return; /* its total is still being counted */
        /* done = total only once: the last call */
        if (over || (p->done < p->total && now - p->last >= REPORT_EVERY)) {
            if (prog.fn) prog.fn(prog.ctx, p->name, p->unit, p->done, p->total);
            p->last = now;
        }
        if (!over) return;
        prog.head = p->next;
        if (!prog.head) prog.tail = NULL;
        p->gone = 1;
        if (!p->busy) free(p);
    }
}

static tg_phase *open_phase(const char *name, const char *unit, int64_t total, int host) {
    if (current) return NULL;
    pthread_mutex_lock(&prog.lock);
    tg_phase *p = prog.fn ? calloc(1, sizeof *p) : NULL;
    if (p) {
        *p = (tg_phase){.name = name, .unit = unit, .total = total < 0 ? 0 : total,
                        .known = total >= 0, .host = host, .last = tg_now()};
        if (prog.tail) prog.tail->next = p;
        else prog.head = p;
        prog.tail = p;
        report(); /* its start, when no earlier phase is still running */
    }
    pthread_mutex_unlock(&prog.lock);
    current = p;
    return p;
}

tg_phase *tg_phase_open(const char *name, const char *unit, int64_t total) {
    return open_phase(name, unit, total, 0);
}

tg_phase *tg_phase_open_host(const char *name, const char *unit, int64_t total) {
    return open_phase(name, unit, total < 0 ? 0 : total, 1);
}

void tg_phase_add(tg_phase *p, int64_t n) {
    if (!p) return;
    pthread_mutex_lock(&prog.lock);
    p->done += n;
    report();
    pthread_mutex_unlock(&prog.lock);
}

void tg_phase_close(tg_phase *p) {
    if (!p) return;
    if (current == p) current = NULL;
    pthread_mutex_lock(&prog.lock);
    p->closed = 1;
    report(); /* p may be freed here */
    pthread_mutex_unlock(&prog.lock);
}

/* Counts the task before its own callback runs: a host woken by that callback (snpmm's pull)
 * then closes a phase whose count is complete, and gives its last figures itself. */
static void task_done(void *arg) {
    struct tg_phase_task *t = arg;
    tg_phase *p = t->phase;
    pthread_mutex_lock(&prog.lock);
    p->done += t->weight;
    p->pending--;
    p->busy++;
    report();
    pthread_mutex_unlock(&prog.lock);
    tg_phase *saved = current;
    current = p; /* what the callback submits belongs to the phase (snpmm's pull) */
    if (t->func) t->func(t->arg);
    current = saved;
    if (t->free_arg) free(t->arg);
    free(t);
    pthread_mutex_lock(&prog.lock);
    if (--p->busy == 0 && p->gone) free(p);
    pthread_mutex_unlock(&prog.lock);
}

struct tg_phase_task *tg_phase_attach(struct starpu_task *task) {
    tg_phase *p = current;
    if (!p || p->host) return NULL;
    struct tg_phase_task *t = malloc(sizeof *t);
    if (!t) return NULL; /* out of memory: the task runs uncounted */
    double f = task->flops; /* truncated, as the performance models' sizes (tg_task_work) */
    *t = (struct tg_phase_task){p, f > 0 && isfinite(f) ? (int64_t)f : 0, task->callback_func,
                                task->callback_arg, (int)task->callback_arg_free};
    /* counted before it can end, so that done never passes total */
    pthread_mutex_lock(&prog.lock);
    int gone = p->gone; /* a callback's submission after its phase ended: not counted */
    if (!gone) {
        p->pending++;
        if (!p->known) p->total += t->weight;
    }
    pthread_mutex_unlock(&prog.lock);
    if (gone) {
        free(t);
        return NULL;
    }
    task->callback_func = task_done;
    task->callback_arg = t;
    task->callback_arg_free = 0;
    return t;
}

void tg_phase_submitted(struct tg_phase_task *t, int ret) {
    if (!t || !ret) return;
    /* refused: the callback never runs (the task is destroyed, or left unsubmitted) */
    pthread_mutex_lock(&prog.lock);
    t->phase->pending--;
    if (!t->phase->known) t->phase->total -= t->weight;
    report();
    pthread_mutex_unlock(&prog.lock);
    if (t->free_arg) free(t->arg);
    free(t);
}
