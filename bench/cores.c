/* bench/cores: how far loops of three kinds scale over this machine's cores — the ceilings for
 * every CPU scaling figure (e.g. bench/snpmm's 16 cores against one). The loops (fma, l2, dram)
 * are those of bench/cpuloops.h.
 * For each: c = 1, 2, 4, ... all CPUs busy: rate per thread, in all, and the speedup over one
 * CPU. Then, for fma, CPU 0 with each other CPU j: CPU 0's rate against alone. About 0.5 means
 * CPU j shares CPU 0's core (SMT siblings a virtual machine's topology may not report).
 * usage: bench/cores [--seconds S] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cpuloops.h"

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
    if (!cpuloop_supported()) {
        printf("# this CPU has no AVX2 FMA: nothing measured\n");
        return 0;
    }
    int ncpu, *cpus = cpuloop_cpus(&ncpu);
    double *rate = malloc((size_t)ncpu * sizeof *rate);
    if (!rate) return 1;
    printf("# %d CPUs; fma in GFLOP/s (256-bit FMA), l2 and dram in GB/s (read + written)\n", ncpu);
    printf("loop\tcpus_busy\tper_cpu_min\tper_cpu_mean\ttotal\tspeedup_over_one\n");
    long iters_fma = 0;
    for (int kind = CPULOOP_FMA; kind < CPULOOP_KINDS; kind++) {
        long iters = cpuloop_iters(kind, cpus[0], seconds);
        if (kind == CPULOOP_FMA) iters_fma = iters;
        cpuloop_measure(kind, cpus, 1, iters, rate);
        double one = rate[0];
        for (int n = 1;; n = n * 2 > ncpu && n < ncpu ? ncpu : n * 2) {
            if (n > 1) cpuloop_measure(kind, cpus, n, iters, rate);
            double sum = 0, lo = rate[0];
            for (int i = 0; i < n; i++) {
                sum += rate[i];
                if (rate[i] < lo) lo = rate[i];
            }
            printf("%s\t%d\t%.1f\t%.1f\t%.1f\t%.2f\n", cpuloop_name[kind], n, lo, sum / n, sum,
                   sum / one);
            if (n == ncpu) break;
        }
    }
    cpuloop_measure(CPULOOP_FMA, cpus, 1, iters_fma, rate);
    double one = rate[0];
    printf("pair\tcpu0_fma_of_alone\n");
    for (int j = 1; j < ncpu; j++) {
        int two[2] = {cpus[0], cpus[j]};
        cpuloop_measure(CPULOOP_FMA, two, 2, iters_fma, rate);
        printf("%d+%d\t%.2f\n", cpus[0], cpus[j], rate[0] / one);
    }
    free(rate);
    free(cpus);
    return 0;
}
