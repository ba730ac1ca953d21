/* The CPU set (src/base/cpus.c): cgroup quotas read from /proc/PID/cgroup-style files and
 * cgroup trees written here (v2 cpu.max, v1 cfs files, a parent's tighter quota, "max", a
 * container whose cgroup path names the host's tree), the range form of CPU lists, and the
 * usable count of this process against sched_getaffinity read independently. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cpus.h"
#include "tap.h"

static char top[256];

/* writes TEXT to top/REL, creating the folders on the way */
static void put(const char *rel, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", top, rel);
    for (char *s = path + strlen(top) + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        printf("Bail out! cannot write %s\n", path);
        exit(1);
    }
}

/* the quota read for the cgroup file CG under the tree top/ROOT */
static double quota(const char *cg, const char *root) {
    char p[512], r[512];
    snprintf(p, sizeof p, "%s/%s", top, cg);
    snprintf(r, sizeof r, "%s/%s", top, root);
    return tg_cpus_quota(p, r);
}

static void ranges(const int *id, int n, const char *want) {
    char buf[64];
    tg_cpus_ranges(id, n, buf, sizeof buf);
    ok(!strcmp(buf, want), "ranges: %s (want %s)", buf, want);
}

int main(void) {
    snprintf(top, sizeof top, "%s/tg-cpus-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(top)) {
        printf("Bail out! mkdtemp %s\n", top);
        return 1;
    }

    /* cgroup v2: the process's cgroup /a/b; quotas on it and on its parent */
    put("v2/cg", "0::/a/b\n");
    put("v2/fs/a/b/cpu.max", "150000 100000\n");
    ok_close(quota("v2/cg", "v2/fs"), 1.5, 1e-12, "v2 cpu.max 150000 100000: 1.5 CPUs");
    put("v2/fs/a/cpu.max", "50000 100000\n");
    ok_close(quota("v2/cg", "v2/fs"), 0.5, 1e-12, "v2: the parent's tighter quota (0.5) caps the child's");
    put("v2/fs/a/cpu.max", "max 100000\n");
    put("v2/fs/a/b/cpu.max", "max 100000\n");
    ok(quota("v2/cg", "v2/fs") == 0, "v2 \"max 100000\" everywhere: no quota");
    put("v2/fs/cpu.max", "400000 100000\n");
    ok_close(quota("v2/cg", "v2/fs"), 4, 1e-12, "v2: the root's quota found from /a/b");
    put("v2/cg2", "0::/\n");
    ok_close(quota("v2/cg2", "v2/fs"), 4, 1e-12, "v2 cgroup /: the root's quota");

    /* cgroup v1 (hybrid: a v2 line without cpu.max too), cpu with cpuacct */
    put("v1/cg", "12:memory:/m\n4:cpu,cpuacct:/job/7\n0::/job/7\n");
    put("v1/fs/cpu,cpuacct/job/7/cpu.cfs_quota_us", "-1\n");
    put("v1/fs/cpu,cpuacct/job/7/cpu.cfs_period_us", "100000\n");
    ok(quota("v1/cg", "v1/fs") == 0, "v1 cfs_quota_us -1: no quota");
    put("v1/fs/cpu,cpuacct/job/7/cpu.cfs_quota_us", "300000\n");
    ok_close(quota("v1/cg", "v1/fs"), 3, 1e-12, "v1 300000 / 100000: 3 CPUs");
    put("v1/fs/memory/m/cpu.cfs_quota_us", "10000\n");
    put("v1/fs/memory/m/cpu.cfs_period_us", "100000\n");
    ok_close(quota("v1/cg", "v1/fs"), 3, 1e-12, "v1: only the hierarchy with the cpu controller counts");
    /* "cpuacct" alone is not "cpu" */
    put("v1/cg3", "3:cpuacct:/x\n");
    put("v1/fs/cpuacct/x/cpu.cfs_quota_us", "100000\n");
    put("v1/fs/cpuacct/x/cpu.cfs_period_us", "100000\n");
    ok(quota("v1/cg3", "v1/fs") == 0, "v1: a cpuacct-only hierarchy holds no quota");
    /* a container without a cgroup namespace: the path is the host's, the mount is its own */
    put("v1/cg4", "2:cpu:/docker/0123abcd\n");
    put("v1/fs/cpu/cpu.cfs_quota_us", "250000\n");
    put("v1/fs/cpu/cpu.cfs_period_us", "100000\n");
    ok_close(quota("v1/cg4", "v1/fs"), 2.5, 1e-12, "v1: a host path under a container's mount: 2.5 CPUs");

    ok(quota("no-such-file", "v1/fs") == 0, "no cgroup file: no quota");
    put("bad/cg", "garbage\n0::relative\n");
    ok(quota("bad/cg", "v2/fs") == 0, "malformed cgroup lines are passed over");
    put("bad/cg2", "0::/q\n");
    put("bad/fs/q/cpu.max", "lots 100000\n");
    ok(quota("bad/cg2", "bad/fs") == 0, "an unreadable cpu.max is no quota");

    ranges((const int[]){0, 1, 2, 3, 8, 10, 11}, 7, "0-3,8,10-11");
    ranges((const int[]){5}, 1, "5");
    ranges((const int[]){0, 0, 1, 3, 3}, 5, "0-1,3");
    ranges(NULL, 0, "none");

    /* this process: the mask as sched_getaffinity gives it, usable within it */
    cpu_set_t set;
    int want = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) want = CPU_COUNT(&set);
    tg_cpus c;
    tg_cpus_get(&c);
    ok(c.n == want, "this process's mask: %d CPUs (sched_getaffinity: %d)", c.n, want);
    int in = 1;
    for (int i = 0; i < c.n; i++) in &= CPU_ISSET(c.id[i], &set) && (i == 0 || c.id[i] > c.id[i - 1]);
    ok(in, "every CPU listed is in the mask, ascending");
    int usable = c.quota > 0 && ceil(c.quota) < c.n ? (int)ceil(c.quota) : c.n;
    ok(c.usable == usable && c.usable >= 1, "usable: %d (mask %d, quota %g)", c.usable, c.n, c.quota);
    char d[2048];
    tg_cpus_describe(&c, d, sizeof d);
    diag("%s", d);

    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    if (system(cmd)) diag("could not remove %s", top);
    tap_plan(tap_n);
    return tap_done();
}
