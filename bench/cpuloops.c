/* The CPU ceiling loops of bench/cpuloops.h. */
#define _GNU_SOURCE
#include "bench/cpuloops.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef double v4d __attribute__((vector_size(32)));
enum { CHAINS = 10 };

const char *const cpuloop_name[CPULOOP_KINDS] = {"fma", "l2", "dram"};
static const size_t kind_bytes[CPULOOP_KINDS] = {0, 1u << 20, 256u << 20};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int cpuloop_supported(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

int *cpuloop_cpus(int *n) {
    cpu_set_t mine;
    sched_getaffinity(0, sizeof mine, &mine);
    int *cpus = malloc(CPU_SETSIZE * sizeof *cpus);
    if (!cpus) exit(1);
    *n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine)) cpus[(*n)++] = c;
    return cpus;
}

/* 2 flops per lane per FMA: iters · CHAINS · 4 lanes · 2 */
__attribute__((target("avx2,fma"))) static double fma_loop(long iters) {
    v4d acc[CHAINS], a = {1.0000001, 0.9999999, 1.0000002, 0.9999998}, b = {1e-9, 2e-9, 3e-9, 4e-9};
    for (int c = 0; c < CHAINS; c++) acc[c] = (v4d){c, c + 1, c + 2, c + 3};
    for (long i = 0; i < iters; i++)
#pragma GCC unroll 10
        for (int c = 0; c < CHAINS; c++) acc[c] = __builtin_ia32_vfmaddpd256(acc[c], a, b);
    double s = 0;
    for (int c = 0; c < CHAINS; c++) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    return s;
}

/* l2 and dram: passes of read-add-write over the thread's buffer; 32 bytes read and 32 written
 * per word. Returns a value that depends on every word. */
__attribute__((target("avx2"))) static double rw_loop(v4d *buf, size_t words, long passes) {
    const v4d one = {1, 1, 1, 1};
    for (long p = 0; p < passes; p++)
        for (size_t w = 0; w < words; w++) buf[w] += one;
    return buf[0][0] + buf[words - 1][3];
}

struct job {
    int cpu, kind;
    long iters;
    pthread_barrier_t *bar;
    double seconds, sink;
};

static void *run(void *p) {
    struct job *j = p;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(j->cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) fprintf(stderr, "# cannot pin to CPU %d\n", j->cpu);
    v4d *buf = NULL;
    size_t words = kind_bytes[j->kind] / sizeof(v4d);
    if (j->kind != CPULOOP_FMA) { /* first touch by the pinned thread: its memory, faulted in before timing */
        if (posix_memalign((void **)&buf, 64, kind_bytes[j->kind])) exit(1);
        memset(buf, 0, kind_bytes[j->kind]);
    }
    pthread_barrier_wait(j->bar);
    double t0 = now();
    j->sink = j->kind == CPULOOP_FMA ? fma_loop(j->iters) : rw_loop(buf, words, j->iters);
    j->seconds = now() - t0;
    pthread_barrier_wait(j->bar);
    free(buf);
    return NULL;
}

double cpuloop_work(int kind, long iters) {
    return kind == CPULOOP_FMA ? (double)iters * CHAINS * 8 / 1e9
                               : 2.0 * (double)kind_bytes[kind] * iters / 1e9;
}

void cpuloop_measure(int kind, const int *cpus, int n, long iters, double *rate) {
    struct job *j = calloc((size_t)n, sizeof *j);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!j || !t) exit(1);
    for (int i = 0; i < n; i++) rate[i] = 0;
    for (int rep = 0; rep < 3; rep++) {
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)n);
        for (int i = 0; i < n; i++) {
            j[i] = (struct job){.cpu = cpus[i], .kind = kind, .iters = iters, .bar = &bar};
            pthread_create(&t[i], NULL, run, &j[i]);
        }
        for (int i = 0; i < n; i++) {
            pthread_join(t[i], NULL);
            double r = cpuloop_work(kind, iters) / j[i].seconds;
            if (r > rate[i]) rate[i] = r;
        }
        pthread_barrier_destroy(&bar);
    }
    free(j);
    free(t);
}

long cpuloop_iters(int kind, int cpu, double seconds) {
    long iters = kind == CPULOOP_FMA ? 1000000 : 4;
    double rate;
    cpuloop_measure(kind, &cpu, 1, iters, &rate);
    iters = (long)((double)iters * seconds / (cpuloop_work(kind, iters) / rate));
    return iters < 1 ? 1 : iters;
}

double cpuloop_fma_speedup(const int *cpus, int n, double seconds) {
    long iters = cpuloop_iters(CPULOOP_FMA, cpus[0], seconds);
    double *rate = malloc((size_t)n * sizeof *rate), one, sum = 0;
    if (!rate) exit(1);
    cpuloop_measure(CPULOOP_FMA, cpus, 1, iters, rate);
    one = rate[0];
    cpuloop_measure(CPULOOP_FMA, cpus, n, iters, rate);
    for (int i = 0; i < n; i++) sum += rate[i];
    free(rate);
    return sum / one;
}
