/* tg_parallel_for: every chunk runs exactly once (tg_parallel_for_scratch too, each chunk
 * with a buffer no other thread writes), for loop sizes around the thread count and
 * over thousands of loops (the pool is reused), from two threads at once and nested; the hooks
 * run once per parallel loop; a cap keeps a loop to its threads; and with the runtime started,
 * its idle workers use no CPU time while a host loop runs (StarPU 1.3's idle workers spin
 * unless paused). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/parallel.h"
#include "io/out.h"
#include "runtime/runtime.h"
#include "tap.h"

typedef struct {
    int *hits;
    int64_t n;
} counts;

static void hit(void *ctx, int64_t c) {
    counts *k = ctx;
    __atomic_fetch_add(&k->hits[c], 1, __ATOMIC_RELAXED);
}

/* every chunk of a loop of n hit exactly once */
static int once_each(int64_t n) {
    counts k = {calloc((size_t)n + 1, sizeof(int)), n};
    tg_parallel_for(n, hit, &k);
    int good = 1;
    for (int64_t c = 0; c < n; c++) good &= k.hits[c] == 1;
    free(k.hits);
    return good;
}

/* A chunk of the scratch loop: fills its whole buffer with its number, then checks that no
 * other chunk wrote into it meanwhile (each thread has its own), and counts the chunk. */
static void scratch_hit(void *ctx, int64_t c, void *scratch) {
    counts *k = ctx;
    int64_t *b = scratch, bad = 0;
    for (int64_t i = 0; i < 4096; i++) b[i] = c;
    for (int64_t i = 0; i < 4096; i++) bad |= b[i] != c;
    __atomic_fetch_add(&k->hits[c], bad ? 2 : 1, __ATOMIC_RELAXED);
}

/* tg_parallel_for_scratch: every chunk once, each in a buffer of its thread's own */
static int scratch_once_each(int64_t n) {
    counts k = {calloc((size_t)n + 1, sizeof(int)), n};
    int rc = tg_parallel_for_scratch(n, 4096 * sizeof(int64_t), scratch_hit, &k);
    int good = rc == 0;
    for (int64_t c = 0; c < n; c++) good &= k.hits[c] == 1;
    free(k.hits);
    return good;
}

static void nested(void *ctx, int64_t c) {
    counts *k = ctx;
    counts inner = {k->hits + c * 10, 10};
    tg_parallel_for(10, hit, &inner);
}

static int enters, leaves;
static void on_enter(void) { enters++; }
static void on_leave(void) { leaves++; }

static void *many_loops(void *arg) {
    int *good = arg;
    for (int r = 0; r < 300; r++) *good &= once_each(1 + r % 37);
    return NULL;
}

static void nap(void *ctx, int64_t c) {
    (void)ctx, (void)c;
    usleep(100000);
}

typedef struct {
    pthread_t caller;
    int others; /* chunks run on another thread than the caller */
} where;

static void napped_where(void *ctx, int64_t c) {
    where *w = ctx;
    (void)c;
    usleep(20000); /* long enough for every pool thread to take a chunk */
    if (!pthread_equal(pthread_self(), w->caller))
        __atomic_fetch_add(&w->others, 1, __ATOMIC_RELAXED);
}

static int chunks_elsewhere(void) {
    where w = {pthread_self(), 0};
    tg_parallel_for(8, napped_where, &w);
    return w.others;
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
           (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

int main(void) {
    tap_plan(11);
    const int64_t sizes[] = {0, 1, 2, 3, 7, 16, 17, 1000, 100003};
    int good = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) good &= once_each(sizes[i]);
    ok(good, "loops of 0 to 100,003 chunks: each chunk once");

    good = 1;
    for (int r = 0; r < 3000; r++) good &= once_each(1 + r % 64);
    ok(good, "3,000 loops in a row (1 to 64 chunks): each chunk once");

    good = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) good &= scratch_once_each(sizes[i]);
    ok(good, "scratch loops of 0 to 100,003 chunks: each chunk once, in a buffer of its own");

    counts k = {calloc(400, sizeof(int)), 400};
    tg_parallel_for(40, nested, &k);
    good = 1;
    for (int c = 0; c < 400; c++) good &= k.hits[c] == 1;
    free(k.hits);
    ok(good, "a loop inside a loop's chunk runs (serially): 40 × 10 chunks, each once");

    int g1 = 1, g2 = 1;
    pthread_t t1, t2;
    pthread_create(&t1, NULL, many_loops, &g1);
    pthread_create(&t2, NULL, many_loops, &g2);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    ok(g1 && g2, "two threads running 300 loops each at once: each chunk once");

    const int all = tg_parallel_threads();
    tg_parallel_cap(1);
    int elsewhere = chunks_elsewhere();
    ok(tg_parallel_threads() == 1 && elsewhere == 0 && once_each(1000),
       "capped at 1 thread: %d threads, %d of 8 chunks on another thread than the caller",
       tg_parallel_threads(), elsewhere);
    tg_parallel_cap(0);
    elsewhere = chunks_elsewhere();
    ok(tg_parallel_threads() == all && (all == 1 || elsewhere > 0),
       "the cap lifted: %d threads (%d before the cap), %d of 8 chunks on the pool's threads",
       tg_parallel_threads(), all, elsewhere);

    tg_parallel_hooks(on_enter, on_leave);
    once_each(0), once_each(1), once_each(5), once_each(100);
    k = (counts){calloc(40, sizeof(int)), 40};
    tg_parallel_for(4, nested, &k);
    free(k.hits);
    ok(enters == 3 && leaves == 3,
       "the hooks run once per loop of more than one chunk, not for nested loops: %d and %d of 3",
       enters, leaves);
    tg_parallel_hooks(NULL, NULL);

    /* the runtime's workers, idle during a host loop whose chunks sleep: paused, they use no
     * CPU time; spinning, each would use about the loop's wall time */
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    o.ngpu = 0;
    if (!ok(tg_runtime_start(&o, &err) == TG_OK, "runtime starts: %s", err.msg)) return tap_done();
    int nw = tg_runtime_ncpu();
    usleep(100000); /* the workers settle into their idle loop */
    double w0 = tg_now(), c0 = cpu_seconds();
    tg_parallel_for(2, nap, NULL);
    double wall = tg_now() - w0, cpu = cpu_seconds() - c0;
    ok(cpu < 0.3 * wall * nw, "%d idle CPU workers during a host loop of %.2f s: %.3f s of CPU "
       "time in all (spinning: about %.2f s)", nw, wall, cpu, wall * nw);
    tg_runtime_stop();
    ok(once_each(1000), "after the runtime stops, loops run without its hooks");
    return tap_done();
}
