/* Host-side parallel loops for preprocessing (decoding a .bed into another layout) that is too
 * small to be worth StarPU tasks but too slow on one core at biobank scale. */
#ifndef TG_BASE_PARALLEL_H
#define TG_BASE_PARALLEL_H
#include <stdint.h>

/** Runs fn(ctx, c) for every c in [0, n) on all online cores (one thread each, chunks handed
 * out one at a time) and returns when all are done. fn must be safe to run concurrently on
 * distinct chunks. */
void tg_parallel_for(int64_t n, void (*fn)(void *ctx, int64_t c), void *ctx);
#endif
