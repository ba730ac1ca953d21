/* tg_mem_available (tilegwas.h): what bounds the memory a run may take, from /proc and /sys;
 * tg_calloc_huge, tg_copy_stream (base/mem.h). */
#include "base/mem.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

void tg_advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
    enum { HUGE_PAGE = 2 << 20 };
    const uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1),
                    hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (p && hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}

void tg_copy_stream(void *dst, const void *src, size_t bytes) {
#ifdef __SSE2__
    char *d = dst;
    const char *s = src;
    const size_t head = (16 - (uintptr_t)d % 16) % 16;
    if (bytes < head + 64) {
        memcpy(d, s, bytes);
        return;
    }
    memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    for (; bytes >= 16; d += 16, s += 16, bytes -= 16)
        _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
    memcpy(d, s, bytes);
    _mm_sfence();
#else
    memcpy(dst, src, bytes);
#endif
}

void *tg_calloc_huge(int64_t n1, int64_t n2, size_t size, tg_error *err) {
    size_t bytes = 0;
    if (tg_size_mul(n1, n2, size, &bytes, err)) return NULL;
    /* calloc maps a large block fresh (zero) without writing it: nothing touched yet */
    void *p = tg_calloc(bytes ? bytes : 1, 1, err);
    tg_advise_huge(p, bytes);
    return p;
}

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

/* The least room (limit less usage) of this process's cgroup and its ancestors, under the
 * v2 hierarchy (files @p max_file, @p cur_file) or v1's memory controller, at mount @p root
 * (-1: no limit found). A batch job's limit may sit on a parent of the process's cgroup. */
static int64_t cgroup_room(const char *controller, const char *root, const char *max_file,
                           const char *cur_file) {
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[4096], dir[4096 + 64] = "", path[4096 + 128];
    size_t len = strlen(controller);
    while (f && !*dir && fgets(line, sizeof line, f)) { /* "ID:CONTROLLERS:/path" */
        char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
        if (p && (size_t)(p - c - 1) == len && !strncmp(c + 1, controller, len)) {
            p[strcspn(p, "\n")] = '\0';
            snprintf(dir, sizeof dir, "%s%s", root, p + 1);
        }
    }
    if (f) fclose(f);
    int64_t room = -1;
    while (strlen(dir) > strlen(root)) {
        snprintf(path, sizeof path, "%s/%s", dir, max_file);
        int64_t max = file_number(path);
        snprintf(path, sizeof path, "%s/%s", dir, cur_file);
        int64_t cur = file_number(path), left = max > cur ? max - cur : 0;
        if (max >= 0 && cur >= 0 && (room < 0 || left < room)) room = left;
        *strrchr(dir, '/') = '\0'; /* the parent */
    }
    return room;
}

int64_t tg_mem_available(const char **what) {
    int64_t best = -1;
    const char *name = "unknown";
    least(proc_kb("/proc/meminfo", "MemAvailable:"), "MemAvailable", &best, &name);
    /* v2, then v1 (whose "no limit" is a number near 2^63: MemAvailable is less) */
    least(cgroup_room("", "/sys/fs/cgroup", "memory.max", "memory.current"), "cgroup memory.max",
          &best, &name);
    least(cgroup_room("memory", "/sys/fs/cgroup/memory", "memory.limit_in_bytes",
                      "memory.usage_in_bytes"), "cgroup memory limit", &best, &name);
    struct rlimit r;
    int64_t vm = proc_kb("/proc/self/status", "VmSize:");
    if (!getrlimit(RLIMIT_AS, &r) && r.rlim_cur != RLIM_INFINITY && vm >= 0)
        least((int64_t)r.rlim_cur > vm ? (int64_t)r.rlim_cur - vm : 0, "ulimit -v", &best, &name);
    if (what) *what = name;
    return best;
}
