/* Loops whose rate over this machine's CPUs is the ceiling of a CPU scaling figure (bench/cores
 * tabulates them; bench/snpmm measures the fma loop's 16-core speedup next to its products).
 * Each thread, pinned to one CPU, runs the loop on its own data, timed between two barriers.
 *   fma:  independent 256-bit FMA chains (10 in flight, enough for two FMA ports): the cores;
 *   l2:   read, add, write 256-bit words over 1 MiB of its own (stays in a core's L2);
 *   dram: the same over 256 MiB of its own (memory bandwidth). */
#ifndef TG_BENCH_CPULOOPS_H
#define TG_BENCH_CPULOOPS_H

enum { CPULOOP_FMA, CPULOOP_L2, CPULOOP_DRAM, CPULOOP_KINDS };
extern const char *const cpuloop_name[CPULOOP_KINDS];

/** Whether the loops can run here (AVX2 and FMA). */
int cpuloop_supported(void);
/** The CPUs this process may run on, in order, in a malloc'd array; their number in *n. */
int *cpuloop_cpus(int *n);
/** The loop's work per iteration count: GFLOP for fma, GB (read + written) for the others. */
double cpuloop_work(int kind, long iters);
/** Iterations that take about @p seconds on one CPU (cpus[0]). */
long cpuloop_iters(int kind, int cpu, double seconds);
/** The rate of each of the n threads on @p cpus, all running at once (best of 3 runs each). */
void cpuloop_measure(int kind, const int *cpus, int n, long iters, double *rate);
/** The fma loop's speedup on all @p n CPUs over cpus[0] alone (the sum of their rates against
 *  its rate), each run about @p seconds. */
double cpuloop_fma_speedup(const int *cpus, int n, double seconds);

#endif
