/* bench/krr: the KRR Build and Associate phases at scale, on random genotypes written to a
 * temporary .bed (0/1/2 with probabilities 1/2, 1/4, 1/4, no missing call).
 *  - Build: the Gaussian K of every pair of samples i ≥ j with the INT8 dot products in the same
 *    task (tg_kernel_apply without C: what a single build does), then the dot products kept as
 *    INT32 tiles (tg_kernel_gram, what several γ reuse) and K from them; rates in useful ops
 *    (tg_kernel_ops) against cuBLAS INT8 GEMM (TN, INT32 output) on an 8192³ product measured in
 *    the same run (CPU: OpenBLAS SGEMM 2048³ as a reference rate, not a ceiling).
 *  - Associate: the tile Cholesky of K + αI for several precision maps (a fresh K for each),
 *    N³/3 flops over the factorisation time, against cuSOLVER's spotrf (64-bit API) on the same
 *    matrix on the GPU (CPU: OpenBLAS spotrf and dpotrf on every core; the all-FP64 map is
 *    compared with dpotrf).
 * Each phase prints its time, rate, the GPU memory in use after it, the share of the phase
 * the GPU workers spent executing tasks and the GiB moved host → GPUs, GPUs → host and between
 * GPUs (StarPU's profiling); under mpiexec, the last line is the bytes sent between the ranks
 * (StarPU-MPI's counts). Every kernel is first run once on
 * 4 tile rows (module loading and cuBLAS's algorithm choice are one-time costs, printed apart).
 * usage: bench/krr [--n N] [--snps S] [--nb NB] [--gamma G] [--alpha A] [--maps LIST]
 *                  [--no-ceiling] [--free-gram] [--cpu] [--ncpu N] [--no-homes]
 *                  [--trace PREFIX] [--in-map]
 * defaults: N 65536, S 32768, nb 2048, γ 1/S, α 0.1·√N, maps fp32,fp32+fp16,fp32+fp8,fp64.
 * Maps fp32+fp16 / fp32+fp8 force every off-diagonal tile to the low precision (band 0).
 * --free-gram keeps no dot products (every map rebuilds K with them): the largest N that fits.
 * --ncpu 0 measures the GPU alone: with uncalibrated perfmodels dmda hands 2048² × 32768 dot
 * products (seconds each on a core, 0.2 ms on the H100) to CPU workers while it calibrates.
 * --no-homes: with several GPUs, tasks placed by the scheduler instead of on their tiles' home
 * GPUs (tg_runtime_opts.tile_homes).
 * --trace PREFIX: every task from the build to the end of the first map's factorisation in
 * PREFIX.trace.tsv and PREFIX.gantt.png (tg_trace_tsv, tg_trace_gantt).
 * --in-map: each map's K + αI built directly in the map's precisions (tg_krr_build_factor: a
 * statistics pass, then the build, map_s and build_s) instead of an FP32 K lowered by the map:
 * no FP32 K ever exists, so no build phase, no kept dot products and no spotrf ceiling (which
 * needs the FP32 K). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "bench/common.h"
#include "io/out.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"
#include "tile/matrix.h"
#ifdef TG_USE_CUDA
#include <cublas_v2.h>
#include <cusolverDn.h>
#endif

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

/* Resets the workers' profiling counters; busy() then gives the share of @p wall seconds the
 * workers of @p kind spent executing tasks since (0 without such workers). */
static void busy_reset(void) {
    for (unsigned w = 0; w < starpu_worker_get_count(); w++) starpu_profiling_worker_get_info((int)w, NULL);
    for (int b = 0; b < starpu_bus_get_count(); b++) {
        struct starpu_profiling_bus_info info; /* reading resets the bus's counters */
        starpu_bus_get_profiling_info(b, &info);
    }
}

/* "\tH2D\tD2H\tD2D": GiB moved since busy_reset from host memory to the GPUs, back, and
 * between GPUs (StarPU's bus profiling), for the end of a result line. */
static const char *moved(void) {
    static char buf[96];
    double gib[3] = {0, 0, 0};
    for (int b = 0; b < starpu_bus_get_count(); b++) {
        struct starpu_profiling_bus_info info;
        if (starpu_bus_get_profiling_info(b, &info)) continue;
        int src = starpu_node_get_kind((unsigned)starpu_bus_get_src(b)) == STARPU_CUDA_RAM,
            dst = starpu_node_get_kind((unsigned)starpu_bus_get_dst(b)) == STARPU_CUDA_RAM;
        gib[src && dst ? 2 : src ? 1 : 0] += (double)info.transferred_bytes / (1u << 30);
    }
    snprintf(buf, sizeof buf, "\t%.2f\t%.2f\t%.2f", gib[0], gib[1], gib[2]);
    return buf;
}
static double busy(enum starpu_worker_archtype kind, double wall) {
    double us = 0;
    int n = 0;
    for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
        struct starpu_profiling_worker_info info;
        if (starpu_worker_get_type((int)w) != kind || starpu_profiling_worker_get_info((int)w, &info))
            continue;
        us += starpu_timing_timespec_to_us(&info.executing_time);
        n++;
    }
    return n && wall > 0 ? us * 1e-6 / (n * wall) : 0;
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
    if (gpu) return bench_gpu_gemm_rate(TG_INT8);
    const int n = 2048;
    float *a = calloc((size_t)n * n, 4), *b = calloc((size_t)n * n, 4), *c = calloc((size_t)n * n, 4);
    if (!a || !b || !c) return 0;
    blas_on_all_cores(1);
    double t = 1e30;
    for (int rep = 0; rep < 4; rep++) { /* the first call starts OpenBLAS's threads */
        double t0 = tg_now();
        cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
        if (rep) t = fmin(t, tg_now() - t0);
    }
    blas_on_all_cores(0);
    free(a);
    free(b);
    free(c);
    return 2.0 * n * n * (double)n / t;
}

/* Seconds of one spotrf of K's lower triangle: cuSOLVER's 64-bit API on the GPU (N² exceeds
 * the 32-bit API's index range from N = 46,341), the tiles copied device to device where they
 * are; OpenBLAS on the CPU, which also times dpotrf (*t64; 0 on the GPU). */
static double spotrf_seconds(const tg_matrix *K, int gpu, double *t64) {
    int64_t n = K->m;
    size_t nn = (size_t)n * (size_t)n;
    double t = 0;
    *t64 = 0;
    if (gpu) {
#ifdef TG_USE_CUDA
        float *d;
        if (cudaMalloc((void **)&d, nn * 4) != cudaSuccess) {
            fprintf(stderr, "bench/krr: no GPU room for the dense %lld² spotrf ceiling\n", (long long)n);
            return 0;
        }
        unsigned node = starpu_worker_get_memory_node(
            (unsigned)starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0));
        for (int j = 0; j < K->nt; j++)
            for (int i = j; i < K->mt; i++) {
                starpu_data_handle_t h = tg_tile(K, i, j);
                starpu_data_acquire_on_node(h, (int)node, STARPU_R);
                const struct starpu_matrix_interface *m = starpu_data_get_interface_on_node(h, node);
                cudaMemcpy2D(d + i * (size_t)K->mb + j * (size_t)K->nb * (size_t)n, (size_t)n * 4,
                             (const void *)m->ptr, m->ld * 4, m->nx * 4, m->ny, cudaMemcpyDeviceToDevice);
                starpu_data_release_on_node(h, (int)node);
            }
        cusolverDnHandle_t s;
        cusolverDnParams_t par;
        size_t dbytes = 0, hbytes = 0;
        void *w = NULL, *hw = NULL;
        int *info = NULL;
        cusolverDnCreate(&s);
        cusolverDnCreateParams(&par);
        cusolverDnXpotrf_bufferSize(s, par, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_32F, d, n, CUDA_R_32F,
                                    &dbytes, &hbytes);
        if (cudaMalloc(&w, dbytes ? dbytes : 1) == cudaSuccess &&
            cudaMalloc((void **)&info, sizeof(int)) == cudaSuccess && (hw = malloc(hbytes + 1))) {
            cudaDeviceSynchronize();
            double t0 = tg_now();
            cusolverStatus_t st = cusolverDnXpotrf(s, par, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_32F, d,
                                                   n, CUDA_R_32F, w, dbytes, hw, hbytes, info);
            cudaDeviceSynchronize();
            t = st == CUSOLVER_STATUS_SUCCESS ? tg_now() - t0 : 0;
        }
        free(hw);
        cudaFree(w);
        cudaFree(info);
        cudaFree(d);
        cusolverDnDestroyParams(par);
        cusolverDnDestroy(s);
#endif
        return t;
    }
    float *h = malloc(nn * 4);
    double *h64 = malloc(nn * 8);
    if (!h || !h64) return 0;
    for (int j = 0; j < K->nt; j++)
        for (int i = j; i < K->mt; i++) {
            starpu_data_handle_t th = tg_tile(K, i, j);
            starpu_data_acquire(th, STARPU_R);
            const float *p = (const float *)starpu_matrix_get_local_ptr(th);
            size_t ld = starpu_matrix_get_local_ld(th), rows = starpu_matrix_get_nx(th),
                   cols = starpu_matrix_get_ny(th), off = (size_t)i * K->mb + (size_t)j * K->nb * (size_t)n;
            for (size_t c = 0; c < cols; c++) memcpy(h + off + c * (size_t)n, p + c * ld, rows * 4);
            starpu_data_release(th);
        }
    for (size_t e = 0; e < nn; e++) h64[e] = h[e];
    blas_on_all_cores(1);
    double t0 = tg_now();
    LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', (int)n, h, (int)n);
    t = tg_now() - t0;
    t0 = tg_now();
    LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (int)n, h64, (int)n);
    *t64 = tg_now() - t0;
    blas_on_all_cores(0);
    free(h);
    free(h64);
    return t;
}

struct map {
    const char *name;
    tg_prec diag;
    unsigned allowed;
};
static const struct map all_maps[] = {{"fp32", TG_FP32, 1u << TG_FP32},
                                      {"fp32+fp16", TG_FP32, 1u << TG_FP16},
                                      {"fp32+fp8", TG_FP32, 1u << TG_FP8_E4M3},
                                      {"fp64", TG_FP64, 1u << TG_FP64}};
enum { NMAPS = sizeof all_maps / sizeof all_maps[0] };

/* Factors K + αI of the first @p nw samples once per selected map: the first call of every
 * CUDA kernel loads its module and cuBLAS chooses its algorithms (up to ~0.1 s per kernel), a
 * one-time cost that is not the factorisation's rate. */
static double warm_up(const tg_bed *bed, int64_t nw, int nb, double gamma, double alpha,
                      const char *maps) {
    tg_error err = {0};
    double t0 = tg_now();
    tg_kgeno *w;
    tg_matrix *K, *C;
    if (tg_kgeno_create(bed, NULL, nw, TG_KERNEL_GAUSSIAN, NULL, NULL, 0, 0, nb, &w, &err) ||
        tg_kernel_gram(w, w, &C, NULL, &err))
        die("warm-up", &err);
    for (int m = 0; m < NMAPS; m++) {
        if (!in_list(maps, all_maps[m].name)) continue;
        tg_chol_opts co = tg_chol_defaults();
        co.diag = all_maps[m].diag;
        co.allowed = all_maps[m].allowed;
        co.band = 0;
        if (tg_kernel_apply(m ? C : NULL, w, w, gamma, alpha, co.diag, &K, &err) ||
            tg_cholesky(K, &co, NULL, &err))
            die("warm-up", &err);
        tg_matrix_destroy(K);
    }
    tg_matrix_destroy(C);
    tg_kgeno_free(w);
    return tg_now() - t0;
}

int main(int argc, char **argv) {
    tg_blas_restart_if_generic(argv);
    int64_t n = 65536, s = 32768;
    int nb = 2048, gpu = 1, ceiling = 1, free_gram = 0, ncpu = -1, homes = 1, in_map = 0;
    double gamma = 0, alpha = -1;
    const char *maps_arg = "fp32,fp32+fp16,fp32+fp8,fp64", *trace = NULL;
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
        else if (!strcmp(argv[i], "--ncpu") && i + 1 < argc) ncpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-homes")) homes = 0;
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc) trace = argv[++i];
        else if (!strcmp(argv[i], "--in-map")) in_map = 1;
        else {
            fprintf(stderr, "usage: %s [--n N] [--snps S] [--nb NB] [--gamma G] [--alpha A] "
                            "[--maps LIST] [--no-ceiling] [--free-gram] [--cpu] [--ncpu N] "
                            "[--no-homes] [--trace PREFIX] [--in-map]\n", argv[0]);
            return 2;
        }
    }
    if (!(gamma > 0)) gamma = 1.0 / (double)s;
    if (alpha < 0) alpha = 0.1 * sqrt((double)n);
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    if (!gpu) o.ngpu = 0;
    if (ncpu >= 0) o.ncpu = ncpu;
    o.tile_homes = homes;
    if (tg_runtime_start(&o, &err)) die("runtime", &err);
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
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
    double t_prep = tg_now() - t0, ops = tg_kernel_ops(g, g);
    printf("# warm-up (first call of every kernel) on %lld samples: %.2f s\n",
           (long long)(n < 4 * nb ? n : 4 * nb), warm_up(&bed, n < 4 * nb ? n : 4 * nb, nb, gamma, alpha, maps_arg));
    enum starpu_worker_archtype kind = gpu ? STARPU_CUDA_WORKER : STARPU_CPU_WORKER;
    printf("phase\tseconds\tT_ops/s\tof_reference\tGPU_GiB_used\t%s_busy\tGiB_to_GPUs\t"
           "GiB_from_GPUs\tGiB_between_GPUs\n", gpu ? "GPU" : "CPU");
    printf("prepare\t%.3f\t\t\t\t\n", t_prep);
    tg_matrix *C = NULL, *K;
    /* phase NAME: runs STMT, waits, prints a line (ops 0: no rate) */
#define PHASE(name, ops_, stmt)                                                                     \
    do {                                                                                            \
        busy_reset();                                                                               \
        double t0_ = tg_now();                                                                      \
        if (stmt) die(name, &err);                                                                  \
        tg_runtime_wait_all();                                                                      \
        double t_ = tg_now() - t0_;                                                                 \
        printf("%s\t%.3f\t%.4g\t%.3f\t%.1f\t%.2f%s\n", name, t_, (ops_) / t_ / 1e12,                 \
               (ops_) / t_ / peak, gpu_used_gib(), busy(kind, t_), moved());                       \
        fflush(stdout);                                                                             \
    } while (0)
    if (trace) tg_record_start(0);
    K = NULL;
    if (!in_map) PHASE("build", ops, tg_kernel_apply(NULL, g, g, gamma, alpha, TG_FP32, &K, &err));
    if (!free_gram && !in_map) {
        tg_matrix *K2;
        PHASE("dot_products_kept", ops, tg_kernel_gram(g, g, &C, NULL, &err));
        PHASE("kernel_from_kept", 0.0, tg_kernel_apply(C, g, g, gamma, alpha, TG_FP32, &K2, &err));
        tg_matrix_destroy(K2);
    }
    double flops = (double)n * n * (double)n / 3, t_dpotrf = 0,
           t_spotrf = ceiling && K ? spotrf_seconds(K, gpu, &t_dpotrf) : 0;
    if (t_spotrf > 0) printf("spotrf_ceiling\t%.3f\t%.4g\n", t_spotrf, flops / t_spotrf / 1e12);
    if (t_dpotrf > 0) printf("dpotrf_ceiling\t%.3f\t%.4g\n", t_dpotrf, flops / t_dpotrf / 1e12);
    /* of_potrf: against spotrf, or dpotrf for the all-FP64 map where it was measured */
    printf("map\ttiles_fp64\ttiles_fp32\ttiles_fp16\ttiles_fp8\tfactor_s\tTFLOP/s\tof_potrf\t"
           "map_s\tGPU_GiB_used\tbusy_map+factor\tGiB_to_GPUs\tGiB_from_GPUs\tGiB_between_GPUs"
           "\tbuild_s\tbuild_T_ops/s\n");
    int first = 1;
    for (int m = 0; m < NMAPS; m++) {
        if (!in_list(maps_arg, all_maps[m].name)) continue;
        if (!in_map && (!first || all_maps[m].diag != TG_FP32)) { /* K was overwritten */
            tg_matrix_destroy(K);
            if (tg_kernel_apply(C, g, g, gamma, alpha, all_maps[m].diag, &K, &err)) die("apply", &err);
            tg_runtime_wait_all();
        }
        first = 0;
        tg_chol_opts co = tg_chol_defaults();
        co.diag = all_maps[m].diag;
        co.allowed = all_maps[m].allowed;
        co.band = 0;
        tg_chol_report rep;
        busy_reset();
        if (in_map) {
            tg_matrix_destroy(K);
            K = NULL;
        }
        if (in_map ? tg_krr_build_factor(g, gamma, alpha, co.diag, &co, &K, &rep, &err)
                   : tg_cholesky(K, &co, &rep, &err)) {
            printf("%s\tfailed: %s\n", all_maps[m].name, err.msg);
            continue;
        }
        printf("%s\t%lld\t%lld\t%lld\t%lld\t%.3f\t%.4g\t%.3f\t%.3f\t%.1f\t%.2f%s\t%.3f\t%.4g\n",
               all_maps[m].name,
               (long long)rep.tiles[TG_FP64], (long long)rep.tiles[TG_FP32],
               (long long)rep.tiles[TG_FP16], (long long)rep.tiles[TG_FP8_E4M3], rep.factor_seconds,
               flops / rep.factor_seconds / 1e12,
               (all_maps[m].diag == TG_FP64 && t_dpotrf > 0 ? t_dpotrf : t_spotrf) / rep.factor_seconds,
               rep.map_seconds, gpu_used_gib(),
               busy(kind, rep.map_seconds + rep.build_seconds + rep.factor_seconds), moved(),
               rep.build_seconds, rep.build_seconds > 0 ? ops / rep.build_seconds / 1e12 : 0);
        fflush(stdout);
        if (trace) {
            size_t nrec = 0;
            tg_task_record *rec = tg_record_stop(&nrec);
            char path[1024], title[256];
            snprintf(title, sizeof title, "bench/krr N %lld, %d GPU%s%s, build + %s", (long long)n,
                     tg_runtime_ngpu(), tg_runtime_ngpu() == 1 ? "" : "s",
                     tg_runtime_homes() ? " (homes)" : "", all_maps[m].name);
            char who[32] = ""; /* under mpiexec each rank traces its own tasks */
            if (tg_runtime_nranks() > 1) snprintf(who, sizeof who, ".rank%d", tg_runtime_rank());
            snprintf(path, sizeof path, "%s%s.trace.tsv", trace, who);
            if (tg_trace_tsv(path, rec, nrec, &err)) die("--trace", &err);
            snprintf(path, sizeof path, "%s%s.gantt.png", trace, who);
            if (tg_trace_gantt(path, rec, nrec, title, &err)) die("--trace", &err);
            free(rec);
            trace = NULL;
        }
    }
    char comm[1024]; /* a collective: every rank asks, rank 0 prints */
    if (tg_runtime_describe_comm(comm, sizeof comm) && tg_runtime_rank() == 0)
        printf("# %s\n", comm);
    tg_matrix_destroy(K);
    if (C) tg_matrix_destroy(C);
    tg_kgeno_free(g);
    tg_bed_close(&bed);
    tg_runtime_stop();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) ? 1 : 0;
}
