/* The CPUs this process may use: sched_getaffinity and the cgroup CPU quota (cpus.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET */
#include "base/cpus.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One integer from DIR/NAME; 0 when it cannot be read. */
static int read_ll(const char *dir, const char *name, long long *v) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int got = fscanf(f, "%lld", v);
    fclose(f);
    return got == 1;
}

/* The quota set on the cgroup at @p dir, in CPUs; 0 for none. */
static double quota_in(const char *dir) {
    char path[4096];
    long long q, p;
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    FILE *f = fopen(path, "r");
    if (f) { /* v2: "max 100000" (no quota) reads no number */
        int got = fscanf(f, "%lld %lld", &q, &p);
        fclose(f);
        return got == 2 && q > 0 && p > 0 ? (double)q / (double)p : 0;
    }
    if (read_ll(dir, "cpu.cfs_quota_us", &q) && read_ll(dir, "cpu.cfs_period_us", &p) && q > 0 &&
        p > 0)
        return (double)q / (double)p;
    return 0;
}

static double tighter(double a, double b) { return a > 0 && (b <= 0 || a < b) ? a : b; }

/* The tightest quota from the cgroup at ROOT/PATH up to ROOT: a parent's quota caps its
 * children, and in a container without a cgroup namespace PATH names the host's cgroup while
 * ROOT is the container's own, found on the way up. */
static double quota_up(const char *root, const char *path) {
    char dir[4096];
    size_t rl = strlen(root);
    if ((size_t)snprintf(dir, sizeof dir, "%s%s", root, path) >= sizeof dir) return 0;
    double best = 0;
    for (;;) {
        size_t l = strlen(dir);
        while (l > rl && dir[l - 1] == '/') dir[--l] = 0;
        best = tighter(quota_in(dir), best);
        char *slash = strrchr(dir + rl, '/');
        if (!slash) return best;
        *slash = 0;
    }
}

/* Whether the comma-separated controller list @p ctl names "cpu". */
static int names_cpu(const char *ctl) {
    for (const char *s = ctl; *s;) {
        size_t l = strcspn(s, ",");
        if (l == 3 && !strncmp(s, "cpu", 3)) return 1;
        s += l + (s[l] == ',');
    }
    return 0;
}

double tg_cpus_quota(const char *proc_cgroup, const char *root) {
    FILE *f = fopen(proc_cgroup, "r");
    if (!f) return 0;
    char line[4096], dir[4096];
    double best = 0;
    /* lines "ID:CONTROLLERS:PATH"; v2's unified hierarchy has no controllers */
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
        if (!path || path[1] != '/') continue;
        *ctl++ = 0;
        *path++ = 0;
        if (!*ctl) {
            best = tighter(quota_up(root, path), best);
        } else if (names_cpu(ctl) &&
                   (size_t)snprintf(dir, sizeof dir, "%s/%s", root, ctl) < sizeof dir) {
            best = tighter(quota_up(dir, path), best);
        }
    }
    fclose(f);
    return best;
}

void tg_cpus_get(tg_cpus *c) {
    cpu_set_t set;
    c->n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int i = 0; i < CPU_SETSIZE && c->n < TG_CPUS_MAX; i++)
            if (CPU_ISSET(i, &set)) c->id[c->n++] = i;
    if (!c->n) { /* EINVAL: the kernel's mask is wider than a cpu_set_t */
        long on = sysconf(_SC_NPROCESSORS_ONLN);
        for (int i = 0; i < (on < 1 ? 1 : on > TG_CPUS_MAX ? TG_CPUS_MAX : on); i++)
            c->id[c->n++] = i;
    }
    c->quota = tg_cpus_quota("/proc/self/cgroup", "/sys/fs/cgroup");
    /* a quota of 1.5 CPUs lets two threads run half of the time each */
    double q = ceil(c->quota);
    c->usable = c->quota > 0 && q < c->n ? (int)q : c->n;
}

void tg_cpus_ranges(const int *id, int n, char *buf, size_t len) {
    size_t l = 0;
    snprintf(buf, len, "none");
    for (int i = 0; i < n && l < len;) {
        int j = i;
        while (j + 1 < n && id[j + 1] <= id[j] + 1) j++; /* a run, repeats included */
        l += (size_t)snprintf(buf + l, len - l, "%s%d", l ? "," : "", id[i]);
        if (id[j] > id[i] && l < len) l += (size_t)snprintf(buf + l, len - l, "-%d", id[j]);
        i = j + 1;
    }
}

void tg_cpus_describe(const tg_cpus *c, char *buf, size_t len) {
    char mask[1024];
    tg_cpus_ranges(c->id, c->n, mask, sizeof mask);
    if (c->quota > 0)
        snprintf(buf, len, "affinity mask %s, cgroup quota %g CPUs", mask, c->quota);
    else
        snprintf(buf, len, "affinity mask %s", mask);
}
