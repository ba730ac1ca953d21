/* The CPUs this process may use on a shared node: its affinity mask (taskset, a batch system's
 * binding) and its cgroup's CPU quota (a container's --cpus, systemd's CPUQuota). The host
 * thread pool and StarPU's workers are sized and placed from it, never from the machine's
 * core count. */
#ifndef TG_BASE_CPUS_H
#define TG_BASE_CPUS_H
#include <stddef.h>

enum { TG_CPUS_MAX = 1024 }; /* glibc's CPU_SETSIZE */

typedef struct {
    int n;               /* CPUs in the affinity mask */
    int id[TG_CPUS_MAX]; /* their numbers, ascending, as taskset and /proc/cpuinfo number them */
    double quota;        /* the cgroup's CPU quota in CPUs (quota / period); 0: none */
    int usable;          /* min(n, ⌈quota⌉): the threads that can run at once */
} tg_cpus;

/** The calling thread's affinity mask (every online CPU, at most TG_CPUS_MAX, when it holds
 * more than a cpu_set_t) and the quota of its cgroup (tg_cpus_quota of /proc/self/cgroup under
 * /sys/fs/cgroup). */
void tg_cpus_get(tg_cpus *c);

/** The tightest CPU quota, in CPUs, of the cgroups listed in @p proc_cgroup (the format of
 * /proc/PID/cgroup) and of their ancestors, under the cgroup file system mounted at @p root:
 * v2's cpu.max ("QUOTA PERIOD"; "max PERIOD" is none) in ROOT/PATH, v1's cpu.cfs_quota_us /
 * cpu.cfs_period_us (-1 is none) in ROOT/CONTROLLERS/PATH for the hierarchy holding the cpu
 * controller. 0 when there is none (or nothing can be read). */
double tg_cpus_quota(const char *proc_cgroup, const char *root);

/** @p n CPU numbers, ascending, in the compact form taskset takes ("0-3,8,10-11"; repeats
 * written once; "none" when n is 0). */
void tg_cpus_ranges(const int *id, int n, char *buf, size_t len);

/** "affinity mask 0-13" or "affinity mask 0-13, cgroup quota 1.5 CPUs". */
void tg_cpus_describe(const tg_cpus *c, char *buf, size_t len);
#endif
