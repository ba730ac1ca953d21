/* One pool of threads, started at the first loop and asleep between loops: a solver calls
 * several short loops per iteration (the CG's vector updates), where creating the threads
 * every time would cost as much as the loop. Loops are serialised (one at a time; a loop
 * started from inside a loop runs on the calling thread alone). */
#include "base/parallel.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/cpus.h"

static struct {
    pthread_mutex_t lock; /* held by the thread running a loop, from start to end */
    pthread_mutex_t m;    /* guards what follows */
    pthread_cond_t start, done;
    int nth;           /* threads in the pool, the caller not counted */
    int active;        /* of them, those that run the loops (tg_parallel_cap) */
    unsigned long gen; /* loops started: a thread runs each new one once */
    int busy;          /* pool threads still inside the current loop */
    void (*fn)(void *, int64_t);
    void *ctx;
    int64_t n, next;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .m = PTHREAD_MUTEX_INITIALIZER,
          .start = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static __thread int in_loop; /* this thread runs a loop's chunk: nested loops run serially */
static void (*hook_enter)(void), (*hook_leave)(void);
static int cap; /* tg_parallel_cap's threads, 0: no cap */

static void run_chunks(void) {
    in_loop = 1;
    for (;;) {
        int64_t c = __atomic_fetch_add(&pool.next, 1, __ATOMIC_RELAXED);
        if (c >= pool.n) break;
        pool.fn(pool.ctx, c);
    }
    in_loop = 0;
}

static void *pool_thread(void *arg) {
    const int index = (int)(intptr_t)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.m);
    for (;;) {
        while (pool.gen == seen) pthread_cond_wait(&pool.start, &pool.m);
        seen = pool.gen;
        if (index >= pool.active) continue; /* capped out: sleeps through the loop */
        pthread_mutex_unlock(&pool.m);
        run_chunks();
        pthread_mutex_lock(&pool.m);
        if (--pool.busy == 0) pthread_cond_signal(&pool.done);
    }
    return NULL;
}

static void pool_init(void) {
    /* one thread per CPU the process may use: under taskset or a cgroup quota, threads beyond
     * them would only take turns */
    tg_cpus c;
    tg_cpus_get(&c);
    int want = c.usable > 256 ? 255 : c.usable - 1;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    /* threads that could not start leave the work to those that did, or to the caller */
    while (pool.nth < want && !pthread_create(&t, &at, pool_thread, (void *)(intptr_t)pool.nth))
        pool.nth++;
    pthread_attr_destroy(&at);
    pthread_mutex_lock(&pool.m);
    pool.active = cap > 0 && cap - 1 < pool.nth ? cap - 1 : pool.nth;
    pthread_mutex_unlock(&pool.m);
}

void tg_parallel_cap(int nthreads) {
    pthread_mutex_lock(&pool.lock); /* not during a loop */
    pthread_mutex_lock(&pool.m);
    cap = nthreads;
    pool.active = cap > 0 && cap - 1 < pool.nth ? cap - 1 : pool.nth; /* pool_init redoes it */
    pthread_mutex_unlock(&pool.m);
    pthread_mutex_unlock(&pool.lock);
}

int tg_parallel_threads(void) {
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool.m);
    int n = pool.active + 1;
    pthread_mutex_unlock(&pool.m);
    return n;
}

void tg_parallel_hooks(void (*enter)(void), void (*leave)(void)) {
    hook_enter = enter;
    hook_leave = leave;
}

static void parallel_for(int64_t n, void (*fn)(void *ctx, int64_t c), void *ctx, int hooks) {
    if (n <= 1 || in_loop) {
        for (int64_t c = 0; c < n; c++) fn(ctx, c);
        return;
    }
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool.lock);
    if (hooks && hook_enter) hook_enter();
    pthread_mutex_lock(&pool.m);
    pool.fn = fn, pool.ctx = ctx, pool.n = n, pool.next = 0;
    pool.busy = pool.active;
    pool.gen++;
    pthread_cond_broadcast(&pool.start);
    pthread_mutex_unlock(&pool.m);
    run_chunks(); /* the caller works too (alone if no thread could start) */
    pthread_mutex_lock(&pool.m);
    while (pool.busy) pthread_cond_wait(&pool.done, &pool.m);
    pthread_mutex_unlock(&pool.m);
    if (hooks && hook_leave) hook_leave();
    pthread_mutex_unlock(&pool.lock);
}

void tg_parallel_for(int64_t n, void (*fn)(void *ctx, int64_t c), void *ctx) {
    parallel_for(n, fn, ctx, 1);
}

void tg_parallel_for_running(int64_t n, void (*fn)(void *ctx, int64_t c), void *ctx) {
    parallel_for(n, fn, ctx, 0);
}

/* tg_parallel_for_scratch: one worker per thread takes the chunks in turn with its buffer */
typedef struct {
    int64_t n, next; /* next: atomic */
    size_t bytes;
    void (*fn)(void *, int64_t, void *);
    void *ctx;
} scratch_loop;

static void scratch_worker(void *arg, int64_t w) {
    scratch_loop *s = arg;
    (void)w;
    void *buf = malloc(s->bytes ? s->bytes : 1);
    if (!buf) return; /* the other workers take its chunks */
    for (int64_t c; (c = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED)) < s->n;)
        s->fn(s->ctx, c, buf);
    free(buf);
}

int tg_parallel_for_scratch(int64_t n, size_t bytes, void (*fn)(void *ctx, int64_t c,
                                                                void *scratch),
                            void *ctx) {
    scratch_loop s = {.n = n, .bytes = bytes, .fn = fn, .ctx = ctx};
    const int64_t threads = tg_parallel_threads();
    tg_parallel_for(threads < n ? threads : n, scratch_worker, &s);
    return s.next < n ? -1 : 0; /* no worker got a buffer */
}
