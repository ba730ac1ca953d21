/* bench/convert: speed of the tile conversion codelet on one worker kind, as achieved bytes/s
 * (read + write) against a ceiling measured in the same run: cudaMemcpy device-to-device on the
 * GPU, memcpy on the CPU (both counted as read + write). Tiles of nb × nb; every precision pair
 * the mixed-precision Cholesky uses (lowering panels, raising results).
 * usage: bench/convert [--nb N] [--reps R] [--cpu]   (default nb 4096, 20 reps, on the GPU) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "io/out.h"
#include "runtime/runtime.h"

static double ceiling_bytes_per_s(int gpu, size_t bytes) {
    double t0, t;
    int reps = 10;
    if (gpu) {
#ifdef TG_USE_CUDA
        void *a, *b;
        cudaMalloc(&a, bytes);
        cudaMalloc(&b, bytes);
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaDeviceSynchronize();
        t0 = tg_now();
        for (int r = 0; r < reps; r++) cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaDeviceSynchronize();
        t = tg_now() - t0;
        cudaFree(a);
        cudaFree(b);
#else
        return 0;
#endif
    } else {
        char *a = malloc(bytes), *b = malloc(bytes);
        memset(a, 1, bytes);
        memset(b, 2, bytes);
        t0 = tg_now();
        for (int r = 0; r < reps; r++) {
            memcpy(b, a, bytes);
            __asm__ volatile("" : : "r"(b) : "memory"); /* the copy must happen */
        }
        t = tg_now() - t0;
        free(a);
        free(b);
    }
    return 2.0 * bytes * reps / t;
}

int main(int argc, char **argv) {
    tg_blas_restart_if_generic(argv);
    int nb = 4096, reps = 20, gpu = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nb") && i + 1 < argc) nb = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu")) gpu = 0;
        else {
            fprintf(stderr, "usage: %s [--nb N] [--reps R] [--cpu]\n", argv[0]);
            return 2;
        }
    }
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    o.ngpu = gpu ? 1 : 0;
    o.ncpu = gpu ? 0 : 1;
    if (tg_runtime_start(&o, &err)) {
        fprintf(stderr, "bench/convert: %s\n", err.msg);
        return 1;
    }
    int worker = starpu_worker_get_by_type(gpu ? STARPU_CUDA_WORKER : STARPU_CPU_WORKER, 0);
    char desc[512];
    tg_runtime_describe(desc, sizeof desc);
    printf("# %s\n# tile %d x %d, %d conversions per pair, on %s\n", desc, nb, nb, reps,
           gpu ? "the GPU" : "one CPU core");
    double ceil = ceiling_bytes_per_s(gpu, (size_t)nb * nb * 4);
    printf("# ceiling (%s copy, read + write): %.1f GB/s\n", gpu ? "cudaMemcpy D2D" : "memcpy",
           ceil / 1e9);
    printf("from\tto\tGB/s\tGelem/s\tof_ceiling\n");
    static const tg_prec pairs[][2] = {{TG_FP64, TG_FP32}, {TG_FP32, TG_FP16},
                                       {TG_FP32, TG_FP8_E4M3}, {TG_FP16, TG_FP32},
                                       {TG_FP8_E4M3, TG_FP32}, {TG_FP64, TG_FP16}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        tg_prec a = pairs[k][0], b = pairs[k][1];
        starpu_data_handle_t src, dst;
        starpu_matrix_data_register(&src, -1, 0, nb, nb, nb, tg_prec_size(a));
        starpu_matrix_data_register(&dst, -1, 0, nb, nb, nb, tg_prec_size(b));
        /* values of every magnitude the Cholesky sees, written once in main memory */
        starpu_data_acquire(src, STARPU_W);
        void *p = (void *)starpu_matrix_get_local_ptr(src);
        for (size_t i = 0; i < (size_t)nb * nb; i++) tg_prec_store(a, p, i, (double)(i % 1000) / 7 - 70);
        starpu_data_release(src);
        struct tg_convert_arg arg = {a, b, 1.0, 0};
        /* first task: allocation and calibration, not timed */
        for (int pass = 0; pass < 2; pass++) {
            int n = pass ? reps : 1;
            double t0 = tg_now();
            for (int r = 0; r < n; r++)
                starpu_task_insert(&tg_cl_convert[a][b], STARPU_R, src, STARPU_W, dst,
                                   STARPU_VALUE, &arg, sizeof arg, STARPU_EXECUTE_ON_WORKER,
                                   worker, 0);
            starpu_task_wait_for_all();
            double t = tg_now() - t0, elems = (double)nb * nb * n;
            if (pass)
                printf("%s\t%s\t%.1f\t%.2f\t%.2f\n", tg_prec_name(a), tg_prec_name(b),
                       elems * (tg_prec_size(a) + tg_prec_size(b)) / t / 1e9, elems / t / 1e9,
                       elems * (tg_prec_size(a) + tg_prec_size(b)) / t / ceil);
        }
        starpu_data_unregister(src);
        starpu_data_unregister(dst);
    }
    tg_runtime_stop();
    return 0;
}
