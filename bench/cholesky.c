/* bench/cholesky: tile Cholesky rate (N³/3 flops / factorisation time) for four precision maps
 * (all FP64; all FP32; FP32 diagonal + FP16 off-diagonal; FP32 diagonal + FP8 off-diagonal, the
 * last two forced with band 0 so every off-diagonal tile is lowered), against a ceiling measured
 * in the same run on the same matrix: cusolverDnSpotrf on the whole matrix on one GPU, or
 * OpenBLAS dpotrf/spotrf (--cpu). The matrix is SPD: uniform [-1, 1] symmetric plus N·I.
 * Each map runs --reps times (StarPU calibrates its performance models on the first runs);
 * the best time is reported.
 * usage: bench/cholesky [--n N] [--nb NB] [--reps R] [--cpu]   (default N 32768, nb 2048, 3
 * reps, GPU) */
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "io/out.h"
#include "runtime/runtime.h"
#ifdef TG_USE_CUDA
#include <cusolverDn.h>
#endif

/* Seconds of one full-matrix potrf in precision p: cuSOLVER on the GPU or LAPACKE on the CPU. */
static double ceiling_seconds(const double *a, int64_t n, tg_prec p, int gpu) {
    size_t es = tg_prec_size(p), nn = (size_t)(n * n);
    void *h = malloc(nn * es);
    if (!h) return 0;
    for (size_t k = 0; k < nn; k++) tg_prec_store(p, h, k, a[k]);
    double t = 0;
    if (gpu) {
#ifdef TG_USE_CUDA
        cusolverDnHandle_t s;
        void *d, *w;
        int *info, lwork = 0;
        cusolverDnCreate(&s);
        if (cudaMalloc(&d, nn * es) != cudaSuccess) {
            fprintf(stderr, "bench/cholesky: no room for the %lld² ceiling matrix\n", (long long)n);
            free(h);
            return 0;
        }
        cudaMalloc((void **)&info, sizeof(int));
        cudaMemcpy(d, h, nn * es, cudaMemcpyHostToDevice);
        if (p == TG_FP64) cusolverDnDpotrf_bufferSize(s, CUBLAS_FILL_MODE_LOWER, (int)n, d, (int)n, &lwork);
        else cusolverDnSpotrf_bufferSize(s, CUBLAS_FILL_MODE_LOWER, (int)n, d, (int)n, &lwork);
        cudaMalloc(&w, (size_t)lwork * es);
        cudaDeviceSynchronize();
        double t0 = tg_now();
        if (p == TG_FP64) cusolverDnDpotrf(s, CUBLAS_FILL_MODE_LOWER, (int)n, d, (int)n, w, lwork, info);
        else cusolverDnSpotrf(s, CUBLAS_FILL_MODE_LOWER, (int)n, d, (int)n, w, lwork, info);
        cudaDeviceSynchronize();
        t = tg_now() - t0;
        cudaFree(w);
        cudaFree(info);
        cudaFree(d);
        cusolverDnDestroy(s);
#endif
    } else {
        double t0 = tg_now();
        if (p == TG_FP64) LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (int)n, h, (int)n);
        else LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', (int)n, h, (int)n);
        t = tg_now() - t0;
    }
    free(h);
    return t;
}

struct map {
    const char *name;
    tg_prec diag;
    unsigned allowed;
    double band;
};

/* Best factorisation time of one map over @p reps fresh copies of the matrix (0 on error). */
static double best_seconds(const struct map *mp, const double *a, int64_t n, int nb, int reps,
                           tg_chol_report *rep) {
    double best = 0;
    tg_error err = {0};
    for (int k = 0; k < reps; k++) {
        tg_matrix *A;
        if (tg_matrix_create(&A, n, n, nb, nb, TG_SYM_LOWER, mp->diag, 0, 0, &err) ||
            tg_matrix_from_dense(A, a, n, &err)) {
            fprintf(stderr, "bench/cholesky: %s\n", err.msg);
            return 0;
        }
        tg_chol_opts co = tg_chol_defaults();
        co.diag = mp->diag;
        co.allowed = mp->allowed;
        co.band = mp->band;
        tg_status st = tg_cholesky(A, &co, rep, &err);
        tg_matrix_destroy(A);
        if (st) {
            fprintf(stderr, "bench/cholesky: %s: %s\n", mp->name, err.msg);
            return 0;
        }
        if (k == 0 || rep->factor_seconds < best) best = rep->factor_seconds;
    }
    return best;
}

int main(int argc, char **argv) {
    tg_blas_restart_if_generic(argv);
    int64_t n = 32768;
    int nb = 2048, gpu = 1, reps = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--nb") && i + 1 < argc) nb = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu")) gpu = 0;
        else {
            fprintf(stderr, "usage: %s [--n N] [--nb NB] [--reps R] [--cpu]\n", argv[0]);
            return 2;
        }
    }
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    if (!gpu) o.ngpu = 0;
    if (tg_runtime_start(&o, &err)) {
        fprintf(stderr, "bench/cholesky: %s\n", err.msg);
        return 1;
    }
    char desc[512];
    tg_runtime_describe(desc, sizeof desc);
    printf("# %s\n# N %lld, nb %d, ceiling: %s potrf of the whole matrix\n", desc, (long long)n, nb,
           gpu ? "cuSOLVER (one GPU)" : "OpenBLAS");
    double *a = malloc((size_t)(n * n) * sizeof *a);
    if (!a) {
        fprintf(stderr, "bench/cholesky: no memory for the %lld² matrix\n", (long long)n);
        return 1;
    }
    tg_rng r;
    tg_rng_seed(&r, 1);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = j; i < n; i++)
            a[i + j * n] = a[j + i * n] = i == j ? (double)n : 2 * tg_rng_uniform(&r) - 1;
    double flops = (double)n * n * n / 3;
    double ceil32 = ceiling_seconds(a, n, TG_FP32, gpu), ceil64 = ceiling_seconds(a, n, TG_FP64, gpu);
    printf("# ceiling: spotrf %.4g TFLOP/s, dpotrf %.4g TFLOP/s\n", flops / ceil32 / 1e12,
           flops / ceil64 / 1e12);
    static const struct map maps[] = {{"fp64", TG_FP64, 1u << TG_FP64, 1},
                                      {"fp32", TG_FP32, 1u << TG_FP32, 1},
                                      {"fp32+fp16", TG_FP32, 1u << TG_FP16, 0},
                                      {"fp32+fp8", TG_FP32, 1u << TG_FP8_E4M3, 0}};
    printf("map\ttiles_fp64\ttiles_fp32\ttiles_fp16\ttiles_fp8\tseconds\tTFLOP/s\tof_spotrf\t"
           "of_dpotrf\n");
    for (size_t m = 0; m < sizeof maps / sizeof maps[0]; m++) {
        tg_chol_report rep;
        double best = best_seconds(&maps[m], a, n, nb, reps, &rep);
        if (!(best > 0)) return 1;
        printf("%s\t%lld\t%lld\t%lld\t%lld\t%.3f\t%.4g\t%.3f\t%.3f\n", maps[m].name,
               (long long)rep.tiles[TG_FP64], (long long)rep.tiles[TG_FP32],
               (long long)rep.tiles[TG_FP16], (long long)rep.tiles[TG_FP8_E4M3], best,
               flops / best / 1e12, ceil32 / best, ceil64 / best);
        fflush(stdout);
    }
    free(a);
    tg_runtime_stop();
    return 0;
}
