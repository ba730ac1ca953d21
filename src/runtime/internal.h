/* What the runtime's own files share (src/runtime/ only): the steps of the start and the stop
 * (runtime.c) carried out by the file that owns each responsibility. */
#ifndef TG_RUNTIME_INTERNAL_H
#define TG_RUNTIME_INTERNAL_H
#include "runtime/runtime.h"

/* ---- MPI (mpi.c) */
/** Starts StarPU with @p conf: StarPU-MPI with several ranks (its count of the bytes it sends
 * on), plain StarPU otherwise; starpu_init's return value. */
int tg_mpi_starpu_init(struct starpu_conf *conf);
/** After a successful start: the sums' counts start again, and the grid of the options. */
void tg_mpi_started(int grid_p, int grid_q);
/** Stops StarPU-MPI or StarPU, whichever tg_mpi_starpu_init started. */
void tg_mpi_starpu_shutdown(void);

/* ---- Worker places (workers.c) */
/** Checks o->ncpu against the CPUs this process may use, makes the default worker count
 * (o->ncpu −1) and binds StarPU's threads, @p ngpu GPUs' driver threads counted. */
tg_status tg_workers_place(tg_runtime_opts *o, int ngpu, tg_error *err);
/** " on CPUs 0-13": the CPUs StarPU bound its workers of @p type to; "" for none. */
void tg_workers_bound(enum starpu_worker_archtype type, char *buf, size_t len);

/* ---- Per-worker CUDA handles (cuda.c): created after StarPU starts, destroyed before it stops;
 * nothing without CUDA workers or in a build without CUDA. */
void tg_cuda_handles_create(void);
void tg_cuda_handles_destroy(void);

/* ---- Scheduling (sched.c) */
/** Sets @p conf's policy to @p sched, with heteroprio's buckets from @p buckets. */
void tg_sched_conf(struct starpu_conf *conf, const char *sched, const tg_sched_buckets *buckets);

/* ---- The stderr filter (stderr_filter.c) */
/** Runs @p fn with stderr passing every write to file descriptor 2 at once, except those that
 * contain @p marker. */
void tg_stderr_filtered(const char *marker, int (*fn)(void));
#endif
