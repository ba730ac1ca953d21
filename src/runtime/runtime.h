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

/** This rank's share of @p n rows (n < 2^31) split evenly and contiguously over the ranks: rows
 * [*first, *first + *count) for @p rank, rank r starting at ⌊r·n/R⌋ (R the rank count; every
 * row with one rank). */
void tg_runtime_split(int64_t n, int rank, int64_t *first, int64_t *count);

/** Collective: rank 0 receives every rank's share of the @p n rows (tg_runtime_split) of @p k
 * columns of @p elem-byte elements: this rank's rows are at @p mine (leading dimension @p ldm),
 * rank 0 writes all n rows to @p all (leading dimension @p lda; unused on the other ranks). With
 * one rank a copy (nothing when mine is all with the same leading dimension). Fails only on
 * rank 0 (no memory for R counts), before the others meet it: end every rank then. */
tg_status tg_runtime_gather_rows(const void *mine, int64_t ldm, void *all, int64_t lda,
                                 int64_t n, int64_t k, size_t elem, tg_error *err);

/** Collective: @p count elements of @p buf (double for TG_FP64, float for TG_FP32) become their
 * sum over the ranks, the same bits on every rank and the same for a given rank count from run
 * to run (reduced on rank 0 in MPI's fixed order, then broadcast); nothing with one rank. */
void tg_runtime_sum(void *buf, int64_t count, tg_prec prec);
/** Collective: exact sums over the ranks of @p count int64 (MPI_Allreduce). */
void tg_runtime_sum_int64(int64_t *buf, int64_t count);

/** Allocates @p count consecutive StarPU-MPI data tags (the same on every rank as long as all
 * ranks create the same objects in the same order). */
int64_t tg_runtime_tags(int64_t count);

/** With StarPU-MPI running, gives @p h the next tag and the owner rank @p owner, so that tasks
 * inserted with TG_INSERT run where it is written and move it where it is read; every rank
 * registers the same handles in the same order. Nothing on one rank. */
void tg_runtime_register(starpu_data_handle_t h, int owner);
#endif
