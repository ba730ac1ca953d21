/* What calibrating the performance models needs of StarPU (src/algo/calibrate.c): its
 * calibration settings for the runtimes started meanwhile, the user's put back after; its bus
 * bandwidths as text; the CUDA devices present; and task records summed by kernel, worker kind
 * and work. A record's kernel is its model's symbol: this file names no kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

static char *dup_env(const char *name) {
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}

static void put_env(const char *name, const char *user) {
    if (user) setenv(name, user, 1);
    else unsetenv(name);
}

void tg_calibration_begin(tg_calibration_env *user) {
    user->calibrate = dup_env("STARPU_CALIBRATE");
    user->bus = dup_env("STARPU_BUS_CALIBRATE");
}

void tg_calibration_set(int mode, int bus) {
    static const char *const modes[] = {"0", "1", "2"};
    setenv("STARPU_CALIBRATE", modes[mode], 1);
    if (bus) setenv("STARPU_BUS_CALIBRATE", "1", 1);
}

void tg_calibration_started(const tg_calibration_env *user) {
    put_env("STARPU_BUS_CALIBRATE", user->bus);
}

void tg_calibration_end(tg_calibration_env *user) {
    put_env("STARPU_CALIBRATE", user->calibrate);
    put_env("STARPU_BUS_CALIBRATE", user->bus);
    free(user->calibrate);
    free(user->bus);
    user->calibrate = user->bus = NULL;
}

char *tg_runtime_bus_text(void) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return NULL;
    starpu_bus_print_bandwidth(m);
    fclose(m);
    return text;
}


size_t tg_record_sums(const tg_task_record *r, size_t n, tg_record_sum *sums, size_t nsums) {
    for (size_t i = 0; i < n; i++) {
        tg_worker_kind kind = starpu_worker_get_type(r[i].worker) == STARPU_CPU_WORKER
                                  ? TG_WORKER_CPU
                                  : TG_WORKER_CUDA;
        size_t k = 0;
        while (k < nsums && !(sums[k].kernel == r[i].kernel && sums[k].kind == kind &&
                              sums[k].work == r[i].work))
            k++;
        if (k == nsums)
            sums[nsums++] = (tg_record_sum){r[i].kernel, kind, r[i].work, 0, 0, 0, INFINITY};
        double t = r[i].end - r[i].start;
        sums[k].tasks++;
        sums[k].measured += t;
        sums[k].fastest = fmin(sums[k].fastest, t);
        sums[k].predicted += r[i].predicted;
    }
    return nsums;
}
