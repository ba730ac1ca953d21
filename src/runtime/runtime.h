/* The runtime layer: the only place that knows whether tasks go through StarPU or StarPU-MPI,
 * and where the per-worker cuBLAS / cuBLASLt handles live. Algorithms and codelets include it. */
#ifndef TG_RUNTIME_H
#define TG_RUNTIME_H
#include <starpu.h>

#include "config.h"
#include "tilegwas.h"

/** Whether StarPU-MPI is running: built with MPI and started with more than one rank. A single
 * rank runs plain StarPU, exactly as a build without MPI (and keeps the core StarPU-MPI would
 * reserve for its progression thread). */
int tg_runtime_mpi(void);

#ifdef TG_USE_MPI
#include <starpu_mpi.h>
/* StarPU-MPI runs a task on the rank owning the data it writes and moves the inputs there. */
#define TG_INSERT(cl, ...)                                                                       \
    (tg_runtime_mpi() ? starpu_mpi_task_insert(MPI_COMM_WORLD, (cl), __VA_ARGS__)                \
                      : starpu_task_insert((cl), __VA_ARGS__))
#else
#define TG_INSERT(cl, ...) starpu_task_insert((cl), __VA_ARGS__)
#endif

#ifdef TG_USE_CUDA
#include "runtime/cuda.h"
#endif

/** Collective (every rank calls it at the same point): rank 0 receives the @p bytes (below
 * 2^31) at @p mine of every rank, in rank order, at @p all (tg_runtime_nranks() × @p bytes;
 * unused on the other ranks); with one rank a copy. With StarPU-MPI running it first waits for
 * every task and transfer (tg_runtime_wait_all). */
void tg_runtime_gather(const void *mine, size_t bytes, void *all);

/** Allocates @p count consecutive StarPU-MPI data tags (the same on every rank as long as all
 * ranks create the same objects in the same order). */
int64_t tg_runtime_tags(int64_t count);
#endif
