#include "base/parallel.h"

#include <pthread.h>
#include <unistd.h>

struct loop {
    void (*fn)(void *, int64_t);
    void *ctx;
    int64_t n, next;
};

static void *worker(void *arg) {
    struct loop *l = arg;
    for (;;) {
        int64_t c = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
        if (c >= l->n) return NULL;
        l->fn(l->ctx, c);
    }
}

void tg_parallel_for(int64_t n, void (*fn)(void *ctx, int64_t c), void *ctx) {
    struct loop l = {fn, ctx, n, 0};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t nth = cores < 1 ? 1 : cores > 256 ? 256 : cores;
    if (nth > n) nth = n;
    pthread_t th[256];
    int64_t started = 0;
    for (; started < nth - 1; started++)
        if (pthread_create(&th[started], NULL, worker, &l)) break;
    worker(&l); /* this thread works too (alone if no thread could start) */
    for (int64_t t = 0; t < started; t++) pthread_join(th[t], NULL);
}
