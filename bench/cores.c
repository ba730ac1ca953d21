/* bench/cores: how far a compute-bound loop scales over this machine's cores — the ceiling for
 * every CPU scaling figure (e.g. bench/snpmm's 16 cores against one). Each thread, pinned to
 * one CPU, runs independent 256-bit FMA chains (10 in flight, enough to fill two FMA ports);
 * the rate per thread is timed between two barriers.
 *   1. c = 1, 2, 4, ... all CPUs busy: rate per thread, in all, and the speedup over one CPU;
 *   2. CPU 0 with each other CPU j: CPU 0's rate against alone. About 0.5 means CPU j shares
 *      CPU 0's core (SMT siblings a virtual machine's topology may not report); about 1, its
 *      own core.
 * usage: bench/cores [--seconds S] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef double v4d __attribute__((vector_size(32)));
enum { CHAINS = 10 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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

struct job {
    int cpu;
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
    pthread_barrier_wait(j->bar);
    double t0 = now();
    j->sink = fma_loop(j->iters);
    j->seconds = now() - t0;
    pthread_barrier_wait(j->bar);
    return NULL;
}

/* GFLOP/s of each of the n threads on @p cpus (best of 3 runs per thread) */
static void measure(const int *cpus, int n, long iters, double *rate) {
    struct job *j = calloc((size_t)n, sizeof *j);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!j || !t) exit(1);
    for (int i = 0; i < n; i++) rate[i] = 0;
    for (int rep = 0; rep < 3; rep++) {
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)n);
        for (int i = 0; i < n; i++) {
            j[i] = (struct job){.cpu = cpus[i], .iters = iters, .bar = &bar};
            pthread_create(&t[i], NULL, run, &j[i]);
        }
        for (int i = 0; i < n; i++) {
            pthread_join(t[i], NULL);
            double r = (double)iters * CHAINS * 8 / j[i].seconds / 1e9;
            if (r > rate[i]) rate[i] = r;
        }
        pthread_barrier_destroy(&bar);
    }
    free(j);
    free(t);
}

int main(int argc, char **argv) {
    double seconds = 0.3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
            return 2;
        }
    }
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("# this CPU has no AVX2 FMA: nothing measured\n");
        return 0;
    }
    cpu_set_t mine;
    sched_getaffinity(0, sizeof mine, &mine);
    int ncpu = 0, cpus[CPU_SETSIZE];
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine)) cpus[ncpu++] = c;
    /* size the loop to ~seconds on one CPU */
    long iters = 1000000;
    double t0 = now();
    volatile double sink = fma_loop(iters); /* kept, or the call is optimised away */
    (void)sink;
    iters = (long)((double)iters * seconds / (now() - t0));
    double *rate = malloc((size_t)ncpu * sizeof *rate), one;
    measure(cpus, 1, iters, rate);
    one = rate[0];
    printf("# %d CPUs; one alone: %.1f GFLOP/s (256-bit FMA, the ceiling below is its multiples)\n",
           ncpu, one);
    printf("cpus_busy\tper_cpu_GFLOPs_min\tper_cpu_GFLOPs_mean\ttotal_GFLOPs\tspeedup_over_one\n");
    for (int n = 1;; n = n * 2 > ncpu && n < ncpu ? ncpu : n * 2) {
        measure(cpus, n, iters, rate);
        double sum = 0, lo = rate[0];
        for (int i = 0; i < n; i++) {
            sum += rate[i];
            if (rate[i] < lo) lo = rate[i];
        }
        printf("%d\t%.1f\t%.1f\t%.1f\t%.2f\n", n, lo, sum / n, sum, sum / one);
        if (n == ncpu) break;
    }
    printf("pair\tcpu0_rate_of_alone\n");
    for (int j = 1; j < ncpu; j++) {
        int two[2] = {cpus[0], cpus[j]};
        measure(two, 2, iters, rate);
        printf("%d+%d\t%.2f\n", cpus[0], cpus[j], rate[0] / one);
    }
    free(rate);
    return 0;
}
