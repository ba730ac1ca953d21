/* Helpers shared by the benchmarks (bench/common.c). */
#ifndef TG_BENCH_COMMON_H
#define TG_BENCH_COMMON_H
#include "tilegwas.h"

/** Prints "PROGRAM: WHAT: MESSAGE" on stderr (PROGRAM: the name it was run by, bench-NAME once
 * tests/device/pack has copied it; WHAT left out when NULL, MESSAGE when @p err is NULL) and
 * exits with status 1. */
_Noreturn void die(const char *what, const tg_error *err);

/** Whether the comma-separated @p list names @p name (a whole item, not a part of one). */
int in_list(const char *list, const char *name);

/** The rate of cuBLAS GEMM on an 8192³ product on the current GPU, flops (ops for INT8) per
 * second, the best of 5 calls after one that loads the kernel: @p prec TG_FP64 or TG_FP32 (NN),
 * or TG_INT8 (TN, INT32 output and compute: the layout of the INT8 tensor cores); 0 without
 * CUDA, a GPU or its memory. */
double bench_gpu_gemm_rate(tg_prec prec);
#endif
