/* bench/krr: the KRR Build and Associate phases at scale, on random genotypes written to a
 * temporary .bed (0/1/2 with probabilities 1/2, 1/4, 1/4, no missing call).
 *  - Build: INT8 dot products of every pair of samples i ≥ j (tg_kernel_gram, which counts the
 *    useful ops) and the fused Gaussian kernel (tg_kernel_apply), against cuBLAS INT8 GEMM (TN,
 *    INT32 output) on an 8192³ product measured in the same run (CPU: OpenBLAS SGEMM 2048³ as a
 *    reference rate, not a ceiling).
 *  - Associate: the tile Cholesky of K + αI for several precision maps (fresh K for each from the
 *    kept dot products), N³/3 flops over the factorisation time, against cusolverDnSpotrf on
 *    the same matrix on the GPU (CPU: OpenBLAS spotrf).
 * The log shows per-phase times and the GPU memory in use after each phase.
 * usage: bench/krr [--n N] [--snps S] [--nb NB] [--gamma G] [--alpha A] [--maps LIST]
 *                  [--no-ceiling] [--free-gram] [--cpu]
 * defaults: N 65536, S 32768, nb 2048, γ 1/S, α 0.1·√N, maps fp32,fp32+fp16,fp32+fp8,fp64.
 * Maps fp32+fp16 / fp32+fp8 force every off-diagonal tile to the low precision (band 0). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "io/out.h"
#include "runtime/runtime.h"
#include "tile/matrix.h"
#ifdef TG_USE_CUDA
#include <cublas_v2.h>
#include <cusolverDn.h>
#endif

static void die(const char *what, const tg_error *err) {
    fprintf(stderr, "bench/krr: %s: %s\n", what, err ? err->msg : "failed");
    exit(1);
}

/* Writes DIR/g.{bed,bim,fam}: n samples × s SNPs of random genotypes. */
static void write_bed(const char *prefix, int64_t n, int64_t s) {
    char path[4096];
    snprintf(path, sizeof path, "%s.fam", prefix);
    FILE *f = fopen(path, "w");
    for (int64_t i = 0; f && i < n; i++) fprintf(f, "F%lld\tI%lld\t0\t0\t0\t-9\n", (long long)i, (long long)i);
    if (!f || fclose(f)) die(path, NULL);
    snprintf(path, sizeof path, "%s.bim", prefix);
    f = fopen(path, "w");
    for (int64_t j = 0; f && j < s; j++) fprintf(f, "1\ts%lld\t0\t%lld\tA\tC\n", (long long)j, (long long)j + 1);
    if (!f || fclose(f)) die(path, NULL);
    snprintf(path, sizeof path, "%s.bed", prefix);
    f = fopen(path, "wb");
    size_t bps = (size_t)(n + 3) / 4;
    unsigned char *row = malloc(bps);
    if (!f || !row) die(path, NULL);
    fwrite("\x6c\x1b\x01", 1, 3, f);
    tg_rng r;
    tg_rng_seed(&r, 7);
    for (int64_t j = 0; j < s; j++) {
        for (size_t b = 0; b < bps; b++) {
            unsigned v = (unsigned)tg_rng_u64(&r) & 0xff;
            v &= ~(v & ~(v >> 1) & 0x55); /* code 01 (missing) becomes 00 */
            row[b] = (unsigned char)v;
        }
        if (n % 4) row[bps - 1] &= (unsigned char)((1u << (2 * (n % 4))) - 1);
        fwrite(row, 1, bps, f);
    }
    free(row);
    if (fclose(f)) die(path, NULL);
}

static double gpu_used_gib(void) {
#ifdef TG_USE_CUDA
    size_t fr, tot;
    if (tg_runtime_ngpu() > 0 && cudaMemGetInfo(&fr, &tot) == cudaSuccess)
        return (double)(tot - fr) / (1u << 30);
#endif
    return 0;
}

/* The CPU references run OpenBLAS threaded on every core with StarPU's workers paused (the
 * runtime keeps OpenBLAS single-threaded inside its tasks). */
static void blas_on_all_cores(int on) {
    if (on) starpu_pause();
    openblas_set_num_threads(on ? (int)sysconf(_SC_NPROCESSORS_ONLN) : 1);
    if (!on) starpu_resume();
}

/* Ops/s of the INT8 ceiling (GPU: cuBLAS 8192³ TN INT8→INT32) or of OpenBLAS SGEMM 2048³. */
static double ceiling_rate(int gpu) {
    if (gpu) {
#ifdef TG_USE_CUDA
        const int n = 8192;
        void *a, *b, *c;
        cublasHandle_t h;
        if (cudaMalloc(&a, (size_t)n * n) || cudaMalloc(&b, (size_t)n * n) ||
            cudaMalloc(&c, (size_t)n * n * 4) || cublasCreate(&h))
            return 0;
        cudaMemset(a, 1, (size_t)n * n);
        cudaMemset(b, 1, (size_t)n * n);
        const int32_t one = 1, zero = 0;
        double best = 1e30;
        for (int rep = 0; rep < 6; rep++) {
            cudaDeviceSynchronize();
            double t0 = tg_now();
            cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_8I, n, b, CUDA_R_8I, n,
                         &zero, c, CUDA_R_32I, n, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
            cudaDeviceSynchronize();
            if (rep) best = fmin(best, tg_now() - t0); /* the first call loads the kernel */
        }
        cublasDestroy(h);
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
        return 2.0 * n * n * (double)n / best;
#endif
    }
    const int n = 2048;
    float *a = calloc((size_t)n * n, 4), *b = calloc((size_t)n * n, 4), *c = calloc((size_t)n * n, 4);
    if (!a || !b || !c) return 0;
    blas_on_all_cores(1);
    double t0 = tg_now();
    cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
    double t = tg_now() - t0;
    blas_on_all_cores(0);
    free(a);
    free(b);
    free(c);
    return 2.0 * n * n * (double)n / t;
}

/* Seconds of one spotrf of K's lower triangle (cuSOLVER on the GPU, OpenBLAS on the CPU). */
static double spotrf_seconds(const tg_matrix *K, int gpu) {
    int64_t n = K->m;
    size_t nn = (size_t)n * (size_t)n;
    float *h = NULL;
    void *d = NULL;
    if (gpu) {
#ifdef TG_USE_CUDA
        if (cudaMalloc(&d, nn * 4) != cudaSuccess) {
            fprintf(stderr, "bench/krr: no GPU room for the dense %lld² spotrf ceiling\n", (long long)n);
            return 0;
        }
#endif
    } else if (!(h = malloc(nn * 4))) {
        return 0;
    }
    for (int j = 0; j < K->nt; j++)
        for (int i = j; i < K->mt; i++) {
            starpu_data_handle_t t = tg_tile(K, i, j);
            starpu_data_acquire(t, STARPU_R);
            const float *p = (const float *)starpu_matrix_get_local_ptr(t);
            size_t ld = starpu_matrix_get_local_ld(t), rows = starpu_matrix_get_nx(t),
                   cols = starpu_matrix_get_ny(t), off = (size_t)i * K->mb + (size_t)j * K->nb * (size_t)n;
#ifdef TG_USE_CUDA
            if (gpu) cudaMemcpy2D((float *)d + off, (size_t)n * 4, p, ld * 4, rows * 4, cols, cudaMemcpyHostToDevice);
#endif
            for (size_t c = 0; !gpu && c < cols; c++) memcpy(h + off + c * (size_t)n, p + c * ld, rows * 4);
            starpu_data_release(t);
        }
    double t = 0;
    if (gpu) {
#ifdef TG_USE_CUDA
        cusolverDnHandle_t s;
        int lwork = 0, *info;
        void *w;
        cusolverDnCreate(&s);
        cusolverDnSpotrf_bufferSize(s, CUBLAS_FILL_MODE_LOWER, (int)n, d, (int)n, &lwork);
        cudaMalloc(&w, (size_t)lwork * 4);
        cudaMalloc((void **)&info, sizeof(int));
        cudaDeviceSynchronize();
        double t0 = tg_now();
        cusolverDnSpotrf(s, CUBLAS_FILL_MODE_LOWER, (int)n, d, (int)n, w, lwork, info);
        cudaDeviceSynchronize();
        t = tg_now() - t0;
        cudaFree(w);
        cudaFree(info);
        cudaFree(d);
        cusolverDnDestroy(s);
#endif
    } else {
        blas_on_all_cores(1);
        double t0 = tg_now();
        LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', (int)n, h, (int)n);
        t = tg_now() - t0;
        blas_on_all_cores(0);
        free(h);
    }
    return t;
}

struct map {
    const char *name;
    tg_prec diag;
    unsigned allowed;
};

int main(int argc, char **argv) {
    int64_t n = 65536, s = 32768;
    int nb = 2048, gpu = 1, ceiling = 1, free_gram = 0;
    double gamma = 0, alpha = -1;
    const char *maps_arg = "fp32,fp32+fp16,fp32+fp8,fp64";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--snps") && i + 1 < argc) s = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--nb") && i + 1 < argc) nb = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gamma") && i + 1 < argc) gamma = atof(argv[++i]);
        else if (!strcmp(argv[i], "--alpha") && i + 1 < argc) alpha = atof(argv[++i]);
        else if (!strcmp(argv[i], "--maps") && i + 1 < argc) maps_arg = argv[++i];
        else if (!strcmp(argv[i], "--no-ceiling")) ceiling = 0;
        else if (!strcmp(argv[i], "--free-gram")) free_gram = 1;
        else if (!strcmp(argv[i], "--cpu")) gpu = 0;
        else {
            fprintf(stderr, "usage: %s [--n N] [--snps S] [--nb NB] [--gamma G] [--alpha A] "
                            "[--maps LIST] [--no-ceiling] [--free-gram] [--cpu]\n", argv[0]);
            return 2;
        }
    }
    if (!(gamma > 0)) gamma = 1.0 / (double)s;
    if (alpha < 0) alpha = 0.1 * sqrt((double)n);
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    if (!gpu) o.ngpu = 0;
    if (tg_runtime_start(&o, &err)) die("runtime", &err);
    gpu = gpu && tg_runtime_ngpu() > 0; /* no GPU: the CPU references */
    char desc[512];
    tg_runtime_describe(desc, sizeof desc);
    printf("# %s\n# N %lld, SNPs %lld, nb %d, gamma %g, alpha %g\n", desc, (long long)n, (long long)s,
           nb, gamma, alpha);
    double peak = ceiling_rate(gpu);
    printf("# reference: %s %.4g T ops/s\n", gpu ? "cuBLAS INT8 GEMM 8192^3" : "OpenBLAS SGEMM 2048^3",
           peak / 1e12);

    char dir[] = "/tmp/bench-krr-XXXXXX", prefix[64];
    if (!mkdtemp(dir)) die("mkdtemp", NULL);
    snprintf(prefix, sizeof prefix, "%s/g", dir);
    double t0 = tg_now();
    write_bed(prefix, n, s);
    tg_bed bed;
    if (tg_bed_open(prefix, &bed, &err)) die("open", &err);
    printf("# wrote the random .bed in %.2f s\n", tg_now() - t0);

    t0 = tg_now();
    tg_kgeno *g;
    if (tg_kgeno_create(&bed, NULL, n, TG_KERNEL_GAUSSIAN, NULL, NULL, 0, 0, nb, &g, &err))
        die("kgeno", &err);
    double t_prep = tg_now() - t0;
    tg_matrix *C, *K;
    double ops;
    t0 = tg_now();
    if (tg_kernel_gram(g, g, &C, &ops, &err)) die("gram", &err);
    tg_runtime_wait_all();
    double t_gram = tg_now() - t0;
    double mem_gram = gpu_used_gib();
    t0 = tg_now();
    if (tg_kernel_apply(C, g, g, gamma, alpha, TG_FP32, &K, &err)) die("apply", &err);
    tg_runtime_wait_all();
    double t_apply = tg_now() - t0;
    printf("phase\tseconds\tT_ops/s\tof_reference\tGPU_GiB_used\n");
    printf("prepare\t%.3f\t\t\t\n", t_prep);
    printf("build_gram\t%.3f\t%.4g\t%.3f\t%.1f\n", t_gram, ops / t_gram / 1e12, ops / t_gram / peak, mem_gram);
    printf("build_gram+kernel\t%.3f\t%.4g\t%.3f\t%.1f\n", t_gram + t_apply,
           ops / (t_gram + t_apply) / 1e12, ops / (t_gram + t_apply) / peak, gpu_used_gib());
    fflush(stdout);
    double flops = (double)n * n * (double)n / 3, t_spotrf = ceiling ? spotrf_seconds(K, gpu) : 0;
    if (t_spotrf > 0) printf("spotrf_ceiling\t%.3f\t%.4g\n", t_spotrf, flops / t_spotrf / 1e12);
    if (free_gram) {
        tg_matrix_destroy(C);
        C = NULL;
    }
    static const struct map all[] = {{"fp32", TG_FP32, 1u << TG_FP32},
                                     {"fp32+fp16", TG_FP32, 1u << TG_FP16},
                                     {"fp32+fp8", TG_FP32, 1u << TG_FP8_E4M3},
                                     {"fp64", TG_FP64, 1u << TG_FP64}};
    printf("map\ttiles_fp64\ttiles_fp32\ttiles_fp16\ttiles_fp8\tfactor_s\tTFLOP/s\tof_spotrf\t"
           "map_s\tGPU_GiB_used\n");
    int first = 1;
    for (size_t m = 0; m < sizeof all / sizeof all[0]; m++) {
        const char *p = strstr(maps_arg, all[m].name);
        size_t len = strlen(all[m].name);
        while (p && ((p != maps_arg && p[-1] != ',') || (p[len] && p[len] != ',')))
            p = strstr(p + 1, all[m].name);
        if (!p) continue;
        if (!first || all[m].diag != TG_FP32) { /* the factor overwrote K: a fresh one */
            if (!C) die("--free-gram allows one map only", NULL);
            tg_matrix_destroy(K);
            if (tg_kernel_apply(C, g, g, gamma, alpha, all[m].diag, &K, &err)) die("apply", &err);
            tg_runtime_wait_all();
        }
        first = 0;
        tg_chol_opts co = tg_chol_defaults();
        co.diag = all[m].diag;
        co.allowed = all[m].allowed;
        co.band = 0;
        tg_chol_report rep;
        if (tg_cholesky(K, &co, &rep, &err)) {
            printf("%s\tfailed: %s\n", all[m].name, err.msg);
            continue;
        }
        printf("%s\t%lld\t%lld\t%lld\t%lld\t%.3f\t%.4g\t%.3f\t%.3f\t%.1f\n", all[m].name,
               (long long)rep.tiles[TG_FP64], (long long)rep.tiles[TG_FP32],
               (long long)rep.tiles[TG_FP16], (long long)rep.tiles[TG_FP8_E4M3], rep.factor_seconds,
               flops / rep.factor_seconds / 1e12, t_spotrf > 0 ? t_spotrf / rep.factor_seconds : 0,
               rep.map_seconds, gpu_used_gib());
        fflush(stdout);
    }
    tg_matrix_destroy(K);
    if (C) tg_matrix_destroy(C);
    tg_kgeno_free(g);
    tg_bed_close(&bed);
    tg_runtime_stop();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) ? 1 : 0;
}
