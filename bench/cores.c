/* bench/cores: how far loops of three kinds scale over this machine's cores — the ceilings for
 * every CPU scaling figure (e.g. bench/snpmm's 16 cores against one). Each thread, pinned to
 * one CPU, runs the loop on its own data; its rate is timed between two barriers (best of 3).
 *   fma:  independent 256-bit FMA chains (10 in flight, enough for two FMA ports): the cores;
 *   l2:   read, add, write 256-bit words over 1 MiB of its own (stays in a core's L2);
 *   dram: the same over 256 MiB of its own (memory bandwidth).
 * For each: c = 1, 2, 4, ... all CPUs busy: rate per thread, in all, and the speedup over one
 * CPU. Then, for fma, CPU 0 with each other CPU j: CPU 0's rate against alone. About 0.5 means
 * CPU j shares CPU 0's core (SMT siblings a virtual machine's topology may not report).
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

/* kind 1 (l2) and 2 (dram): passes of read-add-write over the thread's buffer; 32 bytes read
 * and 32 written per word. Returns a value that depends on every word. */
enum { FMA, L2, DRAM };
static const size_t kind_bytes[3] = {0, 1u << 20, 256u << 20};
static const char *const kind_name[3] = {"fma", "l2", "dram"};

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
    if (j->kind != FMA) { /* first touch by the pinned thread: its memory, faulted in before timing */
        if (posix_memalign((void **)&buf, 64, kind_bytes[j->kind])) exit(1);
        memset(buf, 0, kind_bytes[j->kind]);
    }
    pthread_barrier_wait(j->bar);
    double t0 = now();
    j->sink = j->kind == FMA ? fma_loop(j->iters) : rw_loop(buf, words, j->iters);
    j->seconds = now() - t0;
    pthread_barrier_wait(j->bar);
    free(buf);
    return NULL;
}

/* the kind's rate unit per iteration: GFLOP for fma, GB (read + written) for the others */
static double work_of(int kind, long iters) {
    return kind == FMA ? (double)iters * CHAINS * 8 / 1e9 : 2.0 * (double)kind_bytes[kind] * iters / 1e9;
}

/* the rate of each of the n threads on @p cpus (best of 3 runs per thread) */
static void measure(int kind, const int *cpus, int n, long iters, double *rate) {
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
            double r = work_of(kind, iters) / j[i].seconds;
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
    double *rate = malloc((size_t)ncpu * sizeof *rate);
    printf("# %d CPUs; fma in GFLOP/s (256-bit FMA), l2 and dram in GB/s (read + written)\n", ncpu);
    printf("loop\tcpus_busy\tper_cpu_min\tper_cpu_mean\ttotal\tspeedup_over_one\n");
    long iters_fma = 0;
    for (int kind = FMA; kind <= DRAM; kind++) {
        /* size the loop to ~seconds on one CPU */
        long iters = kind == FMA ? 1000000 : 4;
        measure(kind, cpus, 1, iters, rate);
        iters = (long)((double)iters * seconds / (work_of(kind, iters) / rate[0]));
        if (iters < 1) iters = 1;
        if (kind == FMA) iters_fma = iters;
        measure(kind, cpus, 1, iters, rate);
        double one = rate[0];
        for (int n = 1;; n = n * 2 > ncpu && n < ncpu ? ncpu : n * 2) {
            if (n > 1) measure(kind, cpus, n, iters, rate);
            double sum = 0, lo = rate[0];
            for (int i = 0; i < n; i++) {
                sum += rate[i];
                if (rate[i] < lo) lo = rate[i];
            }
            printf("%s\t%d\t%.1f\t%.1f\t%.1f\t%.2f\n", kind_name[kind], n, lo, sum / n, sum, sum / one);
            if (n == ncpu) break;
        }
    }
    measure(FMA, cpus, 1, iters_fma, rate);
    double one = rate[0];
    printf("pair\tcpu0_fma_of_alone\n");
    for (int j = 1; j < ncpu; j++) {
        int two[2] = {cpus[0], cpus[j]};
        measure(FMA, two, 2, iters_fma, rate);
        printf("%d+%d\t%.2f\n", cpus[0], cpus[j], rate[0] / one);
    }
    free(rate);
    return 0;
}
