/* Host-side parallel loops for preprocessing (decoding a .bed into another layout) that is too
 * small to be worth StarPU tasks but too slow on one core at biobank scale. */
#ifndef TG_BASE_PARALLEL_H
#define TG_BASE_PARALLEL_H
#include <stddef.h>
#include <stdint.h>

/** Runs fn(ctx, c) for every c in [0, n) on the CPUs this process may use (tg_cpus_get's
 * usable count: one thread each, the caller included; chunks handed out one at a time) and
 * returns when all are done. fn must be safe to run concurrently on distinct chunks. */
void tg_parallel_for(int64_t n, void (*fn)(void *ctx, int64_t c), void *ctx);
/** tg_parallel_for without the hooks (tg_parallel_hooks): the runtime's workers keep running,
 * for a short loop beside its work, such as a product's next part checked and staged while a
 * GPU computes the previous one (paused, the GPU's worker would launch nothing meanwhile). With
 * CPU workers the loop's threads share the cores with them. */
void tg_parallel_for_running(int64_t n, void (*fn)(void *ctx, int64_t c), void *ctx);
/** tg_parallel_for with a scratch buffer of @p bytes for each thread, made once per loop:
 * a large buffer made per chunk costs the kernel a freshly zeroed mapping each time
 * (docs/DESIGN-NOTES.md, "Genotype preparation"). Returns 0, or -1 when no buffer could be
 * made (then no chunk ran; a thread that gets none leaves its chunks to the others). */
int tg_parallel_for_scratch(int64_t n, size_t bytes, void (*fn)(void *ctx, int64_t c,
                                                                void *scratch),
                            void *ctx);
/** The threads tg_parallel_for runs a loop on (the caller included; starts the pool). */
int tg_parallel_threads(void);
/** At most @p nthreads threads (the caller included) run each later loop; 0 lifts the cap. The
 * runtime sets it to a rank's share of the cores when ranks share a node's CPUs. */
void tg_parallel_cap(int nthreads);
/** Functions run before and after every loop of more than one chunk (NULL: none). The runtime
 * sets them to pause its workers: StarPU 1.3's idle workers spin, and would hold the cores the
 * loop's threads need (on the H100 node, 14 spinning workers made tg_geno_from_int8 1.55× and
 * the Jacobi diagonal 1.8× slower). */
void tg_parallel_hooks(void (*enter)(void), void (*leave)(void));
#endif
