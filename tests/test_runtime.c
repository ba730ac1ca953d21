/* The runtime starts and stops, refuses impossible options with a clear message, and runs the
 * conversion codelet for every precision pair on EVERY worker (CPU, and CUDA where present):
 * results equal the scalar CPU reference bit for bit (NaN: any NaN). On the GPU machine this is
 * the CUDA-vs-CPU check of the conversion codelets. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "codelets/codelets.h"
#include "runtime/runtime.h"
#include "tap.h"

enum { ROWS = 67, COLS = 5, LD = 70 };

/* Inputs that exercise rounding: ties, subnormals, overflow, specials, plus random values. */
static void fill_inputs(double *x, size_t n, tg_rng *r) {
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 448.0, 464.0, 465.0, 1e6, -1e6,
                                     65504.0, 65520.0, 65519.99, 0x1p-24, 0x1p-25, 0x1.8p-25,
                                     0x1p-9, 0x1p-10, 0x1.001p-10, 2.5, -2.5, 3.5, 127.5, -128.5,
                                     1.0 + 0x1p-11, 1.0 + 0x1.8p-11, 1.0 + 0x1p-4, 300.0, 1e300,
                                     INFINITY, -INFINITY, NAN};
    size_t ns = sizeof special / sizeof special[0];
    for (size_t i = 0; i < n; i++) {
        if (i < ns)
            x[i] = special[i];
        else if (i % 3 == 0)
            x[i] = ldexp(tg_rng_normal(r), (int)tg_rng_below(r, 60) - 30);
        else
            x[i] = (tg_rng_uniform(r) - 0.5) * 1000;
    }
}

static int same(tg_prec p, const void *a, const void *b, size_t i) {
    double x = tg_prec_load(p, a, i), y = tg_prec_load(p, b, i);
    if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    return memcmp((const char *)a + i * tg_prec_size(p), (const char *)b + i * tg_prec_size(p),
                  tg_prec_size(p)) == 0;
}

/* Converts on worker w and compares with the reference; returns mismatches. */
static int check_pair(int w, tg_prec from, tg_prec to, double scale, const double *x) {
    size_t n = (size_t)LD * COLS;
    char *src = calloc(n, tg_prec_size(from)), *dst = calloc(n, tg_prec_size(to)),
         *ref = calloc(n, tg_prec_size(to));
    for (size_t k = 0; k < n; k++) tg_prec_store(from, src, k, x[k]);
    for (size_t j = 0; j < COLS; j++)
        for (size_t i = 0; i < ROWS; i++)
            tg_prec_store(to, ref, i + j * LD, tg_prec_load(from, src, i + j * LD) * scale);
    starpu_data_handle_t hs, hd;
    starpu_matrix_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)src, LD, ROWS, COLS,
                                tg_prec_size(from));
    starpu_matrix_data_register(&hd, STARPU_MAIN_RAM, (uintptr_t)dst, LD, ROWS, COLS,
                                tg_prec_size(to));
    struct tg_convert_arg a = {from, to, scale, 0};
    int ret = starpu_task_insert(&tg_cl_convert[from][to], STARPU_R, hs, STARPU_W, hd,
                                 STARPU_VALUE, &a, sizeof a, STARPU_EXECUTE_ON_WORKER, w, 0);
    starpu_task_wait_for_all();
    starpu_data_unregister(hs);
    starpu_data_unregister(hd);
    int bad = ret != 0;
    for (size_t j = 0; j < COLS; j++)
        for (size_t i = 0; i < ROWS; i++)
            if (!same(to, dst, ref, i + j * LD)) {
                if (bad++ < 3)
                    diag("worker %d %s->%s at (%zu,%zu): x=%.17g got %.17g want %.17g", w,
                         tg_prec_name(from), tg_prec_name(to), i, j, x[i + j * LD],
                         tg_prec_load(to, dst, i + j * LD), tg_prec_load(to, ref, i + j * LD));
            }
    free(src);
    free(dst);
    free(ref);
    return bad;
}

int main(void) {
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    tg_rng r;
    uint64_t seed = tap_seed();
    tg_rng_seed(&r, seed);

    o.sched = "no-such-scheduler";
    ok(tg_runtime_start(&o, &err) == TG_ERR_ARG && strstr(err.msg, "dmda"),
       "unknown scheduler refused, known ones listed: %s", err.msg);
    o = tg_runtime_defaults();
    o.ncpu = -5;
    ok(tg_runtime_start(&o, &err) == TG_ERR_ARG && strstr(err.msg, "--ncpu"),
       "negative --ncpu refused: %s", err.msg);

    o = tg_runtime_defaults();
    if (!ok(tg_runtime_start(&o, &err) == TG_OK, "runtime starts with defaults")) {
        diag("%s", err.msg);
        return tap_done();
    }
    int ngpu = tg_runtime_ngpu();
    ok(tg_runtime_ncpu() >= 1, "at least one CPU worker (%d CPU, %d GPU)", tg_runtime_ncpu(), ngpu);
    char desc[1024];
    tg_runtime_describe(desc, sizeof desc);
    ok(strstr(desc, "CPU worker") != NULL, "describe: %s", desc);
    ok(strstr(desc, tg_blas_core()) != NULL, "describe names OpenBLAS's kernels (%s)", tg_blas_core());
    /* the kernels asked for when OpenBLAS fell back to older ones than the CPU runs */
    const unsigned avx2 = TG_CPU_AVX2 | TG_CPU_FMA, avx512 = avx2 | TG_CPU_AVX512;
    static const struct {
        const char *core;
        unsigned features;
        const char *want;
    } cores[] = {{"Prescott", avx512, "SkylakeX"},    {"Prescott", avx512 | TG_CPU_AVX512BF16, "Cooperlake"},
                 {"Prescott", avx2, "Haswell"},       {"PRESCOTT", avx2, "Haswell"},
                 {"Sandybridge", avx2, "Haswell"},    {"Prescott", TG_CPU_AVX2, NULL},
                 {"Prescott", TG_CPU_AVX512, NULL},   {"Prescott", 0, NULL},
                 {"Haswell", avx512, NULL},           {"HASWELL", avx512, NULL},
                 {"SkylakeX", avx512 | TG_CPU_AVX512BF16, NULL}, {"Zen", avx2, NULL},
                 {"Excavator", avx2, NULL},           {"Cooperlake", avx512, NULL},
                 {"SomeFutureCore", avx512, NULL},    {NULL, avx2, NULL}};
    for (size_t i = 0; i < sizeof cores / sizeof *cores; i++) {
        const char *got = tg_blas_better_core(cores[i].core, cores[i].features);
        ok(got == cores[i].want || (got && cores[i].want && !strcmp(got, cores[i].want)),
           "OpenBLAS %s on features 0x%x: ask for %s (got %s)", cores[i].core ? cores[i].core : "(none)",
           cores[i].features, cores[i].want ? cores[i].want : "nothing", got ? got : "nothing");
    }
    ok(tg_runtime_start(&o, &err) != TG_OK, "a second start is refused");

    double x[LD * COLS];
    fill_inputs(x, LD * COLS, &r);
    static const tg_prec floats[] = {TG_FP64, TG_FP32, TG_FP16, TG_FP8_E4M3, TG_INT8, TG_INT32};
    int kinds_seen[2] = {0, 0};
    for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
        enum starpu_worker_archtype t = starpu_worker_get_type((int)w);
        int bad = 0, pairs = 0;
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                bad += check_pair((int)w, floats[a], floats[b], 1.0, x);
                bad += check_pair((int)w, floats[a], floats[b], 0.25, x);
                pairs += 2;
            }
        char name[128];
        starpu_worker_get_name((int)w, name, sizeof name);
        ok(bad == 0, "worker %u (%s): %d conversion kinds equal the CPU reference", w, name, pairs);
        kinds_seen[t == STARPU_CUDA_WORKER] = 1;
    }
    ok(kinds_seen[0] && (ngpu == 0 || kinds_seen[1]), "every worker kind present ran the codelet");
    if (getenv("TG_REQUIRE_GPU")) ok(kinds_seen[1], "a CUDA worker ran (TG_REQUIRE_GPU is set)");
    tg_runtime_stop();

    /* more GPUs than exist (or any GPU in a CPU-only build) */
    o = tg_runtime_defaults();
    o.ngpu = ngpu + 1;
    tg_status st = tg_runtime_start(&o, &err);
    ok(st != TG_OK && strstr(err.msg, "--ngpu") != NULL, "--ngpu %d refused: %s", ngpu + 1,
       err.msg);
    if (st == TG_OK) tg_runtime_stop();
    o.ngpu = 0;
    o.ncpu = 0;
    st = tg_runtime_start(&o, &err);
    ok(st != TG_OK, "no worker at all refused: %s", err.msg);
    if (st == TG_OK) tg_runtime_stop();
    o = tg_runtime_defaults();
    ok(tg_runtime_start(&o, &err) == TG_OK, "restarts after failed starts");
    tg_runtime_stop();
    tap_plan(tap_n);
    return tap_done();
}
