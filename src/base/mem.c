/* tg_mem_available (tilegwas.h): what bounds the memory a run may take, from /proc and /sys. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "tilegwas.h"

/* The number after @p key in the "Key: N kB" file @p path, in bytes (-1: not found). */
static int64_t proc_kb(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    char line[256];
    long long kb = -1;
    size_t len = strlen(key);
    while (f && kb < 0 && fgets(line, sizeof line, f))
        if (!strncmp(line, key, len) && sscanf(line + len, " %lld", &kb) != 1) kb = -1;
    if (f) fclose(f);
    return kb < 0 ? -1 : (int64_t)kb * 1024;
}

/* The first number in file @p path (-1: none, or "max"). */
static int64_t file_number(const char *path) {
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (f && fscanf(f, "%lld", &v) != 1) v = -1;
    if (f) fclose(f);
    return v;
}

static void least(int64_t v, const char *name, int64_t *best, const char **what) {
    if (v >= 0 && (*best < 0 || v < *best)) *best = v, *what = name;
}

int64_t tg_mem_available(const char **what) {
    int64_t best = -1;
    const char *name = "unknown";
    least(proc_kb("/proc/meminfo", "MemAvailable:"), "MemAvailable", &best, &name);
    int64_t max = file_number("/sys/fs/cgroup/memory.max"),
            cur = file_number("/sys/fs/cgroup/memory.current");
    if (max >= 0 && cur >= 0) least(max > cur ? max - cur : 0, "cgroup memory.max", &best, &name);
    max = file_number("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    cur = file_number("/sys/fs/cgroup/memory/memory.usage_in_bytes");
    /* v1 says "no limit" with a huge number: MemAvailable is less */
    if (max >= 0 && cur >= 0) least(max > cur ? max - cur : 0, "cgroup memory limit", &best, &name);
    struct rlimit r;
    int64_t vm = proc_kb("/proc/self/status", "VmSize:");
    if (!getrlimit(RLIMIT_AS, &r) && r.rlim_cur != RLIM_INFINITY && vm >= 0)
        least((int64_t)r.rlim_cur > vm ? (int64_t)r.rlim_cur - vm : 0, "ulimit -v", &best, &name);
    if (what) *what = name;
    return best;
}
