/* Calibrated performance models: shipped profiles, StarPU's model directory, widening fits.
 *
 * StarPU keeps one file per codelet model, <model dir>/codelets/45/<symbol>.<host>, keyed by
 * host name. A profile, perfmodels/<name>/, holds a reference machine's files as <symbol> plus
 * machine.txt (its CPU model and GPU names). Before StarPU starts, a profile whose machine.txt
 * matches this machine is copied in under this host's name, for each model the user has none of
 * yet: the first run on a reference machine schedules from calibrated models. */
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"

/* StarPU 1.3's model-file format version: the codelets/<version>/ directory */
#define STARPU_MODEL_FORMAT 45

static void model_dir(char *buf, size_t len) {
    const char *d = getenv("STARPU_PERF_MODEL_DIR");
    if (d) {
        snprintf(buf, len, "%s/codelets/%d", d, STARPU_MODEL_FORMAT);
        return;
    }
    /* StarPU 1.3's order (_starpu_get_home_path): XDG_CACHE_HOME first, set values even empty */
    static const char *const vars[] = {"XDG_CACHE_HOME", "STARPU_HOME", "HOME", "TMPDIR", "TEMP", "TMP"};
    const char *home = NULL;
    for (size_t i = 0; !home && i < sizeof vars / sizeof *vars; i++) home = getenv(vars[i]);
    snprintf(buf, len, "%s/.starpu/sampling/codelets/%d", home ? home : "/tmp", STARPU_MODEL_FORMAT);
}

static void model_host(char *buf, size_t len) {
    const char *h = getenv("STARPU_HOSTNAME");
    if (h && *h) {
        snprintf(buf, len, "%s", h);
        return;
    }
    if (gethostname(buf, len) != 0) snprintf(buf, len, "localhost");
    buf[len - 1] = 0;
    char *dot = strchr(buf, '.'); /* as StarPU names it */
    if (dot) *dot = 0;
}

static int mkpath(const char *path) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0700) && errno != EEXIST) return -1;
            *s = '/';
        }
    return mkdir(p, 0700) && errno != EEXIST ? -1 : 0;
}

/* Writes @p size bytes to @p path through a temporary name and rename(): ranks of one node
 * that seed at the same time never let StarPU read half a file, and a failed write never
 * leaves a short model (StarPU asserts on a malformed one). */
static int replace_file(const char *path, const char *text, size_t size) {
    char tmp[2 * PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *w = fopen(tmp, "wb");
    int bad = !w || fwrite(text, 1, size, w) != size;
    if (w && fclose(w)) bad = 1;
    if (!bad && rename(tmp, path)) bad = 1;
    if (bad) remove(tmp);
    return bad ? -1 : 0;
}

/* Model files are a few kilobytes: read whole. */
static int copy_file(const char *src, const char *dst) {
    FILE *in = fopen(src, "rb");
    char *text = NULL;
    size_t size = 0;
    FILE *out = in ? open_memstream(&text, &size) : NULL;
    int ok = in && out, c;
    while (ok && (c = getc(in)) != EOF) ok = putc(c, out) != EOF;
    ok = ok && !ferror(in);
    if (in) fclose(in);
    if (out && fclose(out)) ok = 0;
    ok = ok && !replace_file(dst, text, size);
    free(text);
    return ok ? 0 : -1;
}

/* This machine's CPU model name (/proc/cpuinfo). */
static void machine_cpu(char *buf, size_t len) {
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10)) continue;
        char *v = strchr(line, ':');
        if (!v) break;
        for (v++; *v == ' ' || *v == '\t'; v++) {}
        v[strcspn(v, "\n")] = 0;
        snprintf(buf, len, "%s", v);
        break;
    }
    if (f) fclose(f);
}

/* The names of this machine's GPUs (at most @p max), and in *same whether they are all the
 * same: identical GPUs share one model, so a profile lists one of them. */
static int machine_gpus(char names[][128], int max, int *same) {
    int n = tg_cuda_device_count();
#ifdef TG_USE_CUDA
    for (int d = 0; d < n && d < max; d++) {
        struct cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess) snprintf(p.name, sizeof p.name, "?");
        snprintf(names[d], 128, "%.127s", p.name);
    }
#else
    (void)names, (void)max;
#endif
    n = n < max ? n : max;
    *same = 1;
    for (int d = 1; d < n; d++) *same &= !strcmp(names[d], names[0]);
    return n;
}

/* How much of this machine profile @p dir describes: MATCH_CPU for the same CPU model, MATCH_GPU
 * for the same GPUs (a CPU-only profile on a machine without GPUs too). */
enum { MATCH_CPU = 1, MATCH_GPU = 2, MATCH_ALL = 3 };
static unsigned profile_match(const char *dir, const char *cpu, char gpus[][128], int ngpu) {
    char path[PATH_MAX + 16], line[512];
    snprintf(path, sizeof path, "%s/machine.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int cpu_ok = 0, nlisted = 0, gpu_ok = 1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        char *tab = strchr(line, '\t');
        if (line[0] == '#' || !tab) continue;
        *tab = 0;
        if (!strcmp(line, "cpu")) cpu_ok = !strcmp(tab + 1, cpu);
        if (!strcmp(line, "gpu")) gpu_ok &= nlisted < ngpu && !strcmp(tab + 1, gpus[nlisted++]);
    }
    fclose(f);
    return (cpu_ok ? MATCH_CPU : 0) | (gpu_ok && nlisted == ngpu ? MATCH_GPU : 0);
}

/* The profile under @p root (or @p root itself) that matches this machine best: a full match
 * first, else one that matches its GPUs (this machine having some), else its CPU. Its folder in
 * @p out and the match in *how (0: none). */
static void find_profile(const char *root, const char *cpu, char gpus[][128], int ngpu, char *out,
                         size_t len, unsigned *how) {
    char dir[PATH_MAX];
    unsigned best = 0;
    DIR *d = opendir(root);
    struct dirent *e = NULL;
    for (int first = 1; best != MATCH_ALL && (first || (d && (e = readdir(d)))); first = 0) {
        if (!first && e->d_name[0] == '.') continue;
        int l = first ? snprintf(dir, sizeof dir, "%s", root)
                      : snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        if (l < 0 || (size_t)l >= sizeof dir || (size_t)l >= len) continue;
        unsigned m = profile_match(dir, cpu, gpus, ngpu);
        /* without GPUs, the GPU part of a CPU-only profile says nothing on its own */
        if (!ngpu && m != MATCH_ALL) m &= MATCH_CPU;
        /* full beats GPU beats CPU: GPUs set the pace of what runs on them */
        if (m > best) {
            memcpy(out, dir, (size_t)l + 1);
            best = m;
        }
    }
    if (d) closedir(d);
    *how = best;
}

/* Where profiles are looked for: TILEGWAS_PERFMODELS alone when it names a folder; otherwise
 * beside the binary (share/tilegwas/perfmodels of an installed or copied tree, a perfmodels
 * folder next to it, the source tree above a build folder), then the install prefix and the
 * source tree it was built from. */
static int profile_roots(const char *env, char roots[][PATH_MAX], int max) {
    if (env && *env) return snprintf(roots[0], PATH_MAX, "%s", env), 1;
    char exe[PATH_MAX];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int n = 0;
    if (l > 0) {
        exe[l] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        static const char *const rel[] = {"/../share/tilegwas/perfmodels", "/perfmodels",
                                          "/../perfmodels"};
        for (size_t i = 0; i < sizeof rel / sizeof *rel && n < max; i++)
            if (snprintf(roots[n], PATH_MAX, "%s%s", exe, rel[i]) < PATH_MAX) n++;
    }
    if (n < max) snprintf(roots[n++], PATH_MAX, "%s", TG_PERFMODELS_INSTALLED);
    if (n < max) snprintf(roots[n++], PATH_MAX, "%s", TG_PERFMODELS_SOURCE);
    return n;
}

/* A profile that matches only part of this machine: its models serve the kinds of worker it
 * matches, model by model (tg_perfmodels_partial), and the probe gives the others theirs. */
static struct {
    char dir[PATH_MAX];
    unsigned how;
} partial;

int tg_perfmodels_partial(const char *symbol, int cuda, char *path, size_t len) {
    if (!(partial.how & (cuda ? MATCH_GPU : MATCH_CPU))) return 0;
    if (snprintf(path, len, "%s/%s", partial.dir, symbol) >= (int)len) return 0;
    return access(path, R_OK) == 0;
}

void tg_perfmodels_seed(char *desc, size_t len) {
    const char *env = getenv("TILEGWAS_PERFMODELS");
    partial.how = 0;
    if (env && !strcmp(env, "off")) {
        snprintf(desc, len, "shipped models off (TILEGWAS_PERFMODELS=off)");
        return;
    }
    char cpu[256], gpus[16][128], profile[PATH_MAX] = "", roots[5][PATH_MAX];
    machine_cpu(cpu, sizeof cpu);
    int same, ngpu = machine_gpus(gpus, 16, &same);
    /* identical GPUs share one model (StarPU keeps one per device otherwise), so a profile
     * calibrated on one GPU serves every GPU of that kind */
    if (same) setenv("STARPU_PERF_MODEL_HOMOGENEOUS_CUDA", "1", 0);
    /* profiles are matched on one GPU of each: a node with several identical GPUs uses the
     * profile of one */
    int nmatch = same && ngpu > 1 ? 1 : ngpu;
    unsigned how = 0;
    int nroots = profile_roots(env, roots, 5);
    for (int r = 0; r < nroots && how != MATCH_ALL; r++) {
        char found[PATH_MAX];
        unsigned m;
        find_profile(roots[r], cpu, gpus, nmatch, found, sizeof found, &m);
        if (m > how) {
            how = m;
            snprintf(profile, sizeof profile, "%s", found);
        }
    }
    char dir[PATH_MAX], host[256];
    model_dir(dir, sizeof dir);
    model_host(host, sizeof host);
    const char *name = strrchr(profile, '/');
    name = name ? name + 1 : profile;
    if (!how) {
        snprintf(desc, len, "no shipped models for this machine (CPU \"%s\"%s%s); "
                 "`tilegwas calibrate` makes them", cpu, ngpu ? ", GPU " : "", ngpu ? gpus[0] : "");
        return;
    }
    if (how != MATCH_ALL) {
        snprintf(partial.dir, sizeof partial.dir, "%s", profile);
        partial.how = how;
        snprintf(desc, len, "models of %s for this machine's %s, the probe's for its %s", name,
                 how == MATCH_GPU ? "GPUs" : "CPUs", how == MATCH_GPU ? "CPUs" : "GPUs");
        return;
    }
    int copied = 0, kept = 0, failed = 0;
    DIR *d = opendir(profile);
    struct dirent *e;
    if (mkpath(dir)) failed++;
    while (!failed && d && (e = readdir(d))) {
        if (strncmp(e->d_name, "tg_", 3)) continue;
        char src[2 * PATH_MAX], dst[2 * PATH_MAX];
        snprintf(src, sizeof src, "%s/%s", profile, e->d_name);
        snprintf(dst, sizeof dst, "%s/%s.%s", dir, e->d_name, host);
        if (access(dst, F_OK) == 0) kept++;
        else if (copy_file(src, dst) == 0) copied++;
        else failed++;
    }
    if (d) closedir(d);
    snprintf(desc, len, "models of %s: %d copied into %s, %d already there%s", name, copied, dir,
             kept, failed ? " (some could not be copied)" : "");
}

/* A model file's regression line: sumlnx sumlnx2 sumlny sumlnxlny alpha beta n minx maxx.
 * maxx 2^58 (work up to 2.9e17): StarPU computes 9·maxx in unsigned long. */
static int widen_line(char *line, size_t len) {
    char tok[9][64];
    int n = sscanf(line, "%63s %63s %63s %63s %63s %63s %63s %63s %63s", tok[0], tok[1], tok[2],
                   tok[3], tok[4], tok[5], tok[6], tok[7], tok[8]);
    if (n != 9) return -1;
    snprintf(line, len, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%lu\t%lu\n", tok[0], tok[1], tok[2], tok[3],
             tok[4], tok[5], tok[6], 1ul, (unsigned long)1 << 58);
    return 0;
}

/* Makes the fitted regression of model file @p path valid for every size. StarPU 1.3 uses a
 * fit only within 0.9× the smallest and 1.1× the largest size measured, and outside that
 * forces calibration on every worker kind: a larger run than calibrated then sends its first
 * tasks of each kernel to the slowest workers. 0 on success. */
static int widen(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    char line[4096];
    int after_header = 0, bad = !out;
    while (!bad && fgets(line, sizeof line, f)) {
        if (after_header && widen_line(line, sizeof line)) bad = 1;
        after_header = !strncmp(line, "# sumlnx", 8);
        if (fputs(line, out) == EOF) bad = 1;
    }
    bad |= ferror(f) != 0;
    fclose(f);
    if (out && fclose(out)) bad = 1;
    if (!bad) bad = replace_file(path, text, size) != 0;
    free(text);
    return bad ? -1 : 0;
}

/* machine.txt: what profile_matches reads */
static int write_machine(const char *path) {
    char cpu[256], gpus[16][128];
    machine_cpu(cpu, sizeof cpu);
    int same, ngpu = machine_gpus(gpus, 16, &same);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# a tilegwas perfmodel profile: the machine its models were calibrated on\n"
               "cpu\t%s\ncores\t%ld\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    for (int d = 0; d < (same && ngpu ? 1 : ngpu); d++) fprintf(f, "gpu\t%s\n", gpus[d]);
    return fclose(f) ? -1 : 0;
}

tg_status tg_perfmodels_finish(const char *export, int *nmodels, tg_error *err) {
    char dir[PATH_MAX], host[256], suffix[260], path[2 * PATH_MAX];
    model_dir(dir, sizeof dir);
    model_host(host, sizeof host);
    snprintf(suffix, sizeof suffix, ".%s", host);
    *nmodels = 0;
    if (export && (snprintf(path, sizeof path, "%s/machine.txt", export), write_machine(path)))
        return tg_error_set(err, TG_ERR_IO, "cannot write %s", path);
    DIR *d = opendir(dir);
    if (!d) return tg_error_set(err, TG_ERR_IO, "no model directory %s", dir);
    struct dirent *e;
    tg_status st = TG_OK;
    while (!st && (e = readdir(d))) {
        size_t l = strlen(e->d_name), ls = strlen(suffix);
        if (strncmp(e->d_name, "tg_", 3) || l <= ls || strcmp(e->d_name + l - ls, suffix)) continue;
        char dst[2 * PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (widen(path)) {
            st = tg_error_set(err, TG_ERR_IO, "cannot rewrite the model %s", path);
            break;
        }
        (*nmodels)++;
        /* the profile's copy is named by the symbol alone, as tg_perfmodels_seed reads it */
        snprintf(dst, sizeof dst, "%s/%.*s", export ? export : "", (int)(l - ls), e->d_name);
        if (export && copy_file(path, dst))
            st = tg_error_set(err, TG_ERR_IO, "cannot write %s", dst);
    }
    closedir(d);
    return st;
}
