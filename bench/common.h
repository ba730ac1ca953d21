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
#endif
