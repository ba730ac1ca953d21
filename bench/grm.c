/* bench/grm: the GRM's compute rate on a random fileset (tg_bed_write_random: no missing call)
 * through tg_grm_rows with the rows handed to nothing: the tile tasks, the block rows' transfers
 * and the host's corrections and divisors, not the formatting or the file (time `tilegwas grm`
 * for those). The rate counts the lower triangle's useful work, 2·m·n(n + 1)/2 flops (ops for
 * the INT8 Gram), over the block loop's time (tg_grm_info.products_s); its ceiling, measured in
 * the same run, is cuBLAS DGEMM (standardised: FP64 tiles) or cuBLAS INT8 GEMM (centred and
 * VanRaden: the exact INT8 Gram) on an 8192³ product, with a GPU; without one, OpenBLAS DGEMM
 * on one core times the CPU workers (a loose ceiling: the cores share their memory bandwidth).
 * Each configuration runs --reps times (the first one also probes the models of a new machine).
 * usage: bench/grm [--n N] [--m M] [--kind K] [--nb NB] [--reps R] [--ncpu C] [--ngpu G]
 * (defaults: 20,000 samples × 20,000 SNPs, standardised, tg_grm_block_rows's blocks, 3 reps,
 * every worker) */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/common.h"
#include "io/out.h"
#include "runtime/runtime.h"

static tg_status nothing(void *ctx, int64_t r0, int64_t r1, const double *k, const double *nobs,
                         int64_t ld, tg_error *err) {
    (void)ctx, (void)r0, (void)r1, (void)k, (void)nobs, (void)ld, (void)err;
    return TG_OK;
}

/* OpenBLAS DGEMM 2048³ on the calling thread (OpenBLAS runs one thread in the runtime), flops/s,
 * the best of 3 after one that warms up. */
static double cpu_dgemm_rate(void) {
    const int n = 2048;
    double *a = calloc((size_t)n * n, 8), *b = calloc((size_t)n * n, 8),
           *c = calloc((size_t)n * n, 8), best = 1e30;
    if (!a || !b || !c) die("no memory for the DGEMM ceiling", NULL);
    for (int rep = 0; rep < 4; rep++) {
        double t0 = tg_now();
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
        double t = tg_now() - t0;
        if (rep && t < best) best = t;
    }
    free(a);
    free(b);
    free(c);
    return 2.0 * n * (double)n * n / best;
}

int main(int argc, char **argv) {
    tg_blas_restart_if_generic(argv);
    int64_t n = 20000, m = 20000;
    int reps = 3;
    tg_grm_opts o = {.kind = TG_GRM_STANDARDISED};
    tg_runtime_opts ro = tg_runtime_defaults();
    tg_error err = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--m") && i + 1 < argc) m = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--nb") && i + 1 < argc) o.nb = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ncpu") && i + 1 < argc) ro.ncpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ngpu") && i + 1 < argc) ro.ngpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
            if (tg_grm_kind_parse(argv[++i], &o.kind, &err)) die("--kind", &err);
        } else {
            fprintf(stderr, "usage: %s [--n N] [--m M] [--kind K] [--nb NB] [--reps R] "
                    "[--ncpu C] [--ngpu G]\n", argv[0]);
            return 2;
        }
    }
    if (n < 1 || m < 1 || reps < 1) die("--n, --m and --reps must be positive", NULL);
    char dir[] = "/tmp/tg-bench-grm-XXXXXX", prefix[64];
    if (!mkdtemp(dir)) die("mkdtemp", NULL);
    snprintf(prefix, sizeof prefix, "%s/g", dir);
    double t0 = tg_now();
    if (tg_bed_write_random(prefix, n, m, 7, &err)) die("writing the fileset", &err);
    printf("# %lld samples x %lld SNPs written in %.1f s\n", (long long)n, (long long)m,
           tg_now() - t0);
    tg_bed bed = {0};
    if (tg_bed_open(prefix, &bed, &err) || tg_runtime_start(&ro, &err)) die(prefix, &err);
    const int integer = o.kind != TG_GRM_STANDARDISED;
    double ceiling;
    const char *what;
    if (tg_runtime_ngpu() > 0) {
        ceiling = bench_gpu_gemm_rate(integer ? TG_INT8 : TG_FP64) * tg_runtime_ngpu();
        what = integer ? "cuBLAS INT8 GEMM 8192^3 (TN, INT32)" : "cuBLAS DGEMM 8192^3";
    } else {
        ceiling = cpu_dgemm_rate() * tg_runtime_ncpu();
        what = "OpenBLAS DGEMM 2048^3 on one core x CPU workers";
    }
    printf("# workers: %d CUDA, %d CPU; blocks of %d rows; ceiling %s: %.4g T/s\n",
           tg_runtime_ngpu(), tg_runtime_ncpu(), tg_grm_block_rows(&o), what, ceiling / 1e12);
    printf("kind\trep\tread_s\tblocks_s\tT_per_s\tceiling_ratio\tpath\n");
    const double ops = 2.0 * (double)m * (double)n * (double)(n + 1) / 2;
    for (int r = 0; r < reps; r++) {
        tg_grm_info info;
        if (tg_grm_rows(&bed, &o, nothing, NULL, &info, &err)) die("tg_grm_rows", &err);
        const double rate = ops / info.products_s;
        printf("%s\t%d\t%.3f\t%.3f\t%.4g\t%.3f\t%s\n", tg_grm_kind_name(o.kind), r, info.read_s,
               info.products_s, rate / 1e12, ceiling > 0 ? rate / ceiling : 0,
               info.integer ? "INT8 Gram" : "FP64 tiles");
        fflush(stdout);
    }
    tg_runtime_stop();
    tg_bed_close(&bed);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
