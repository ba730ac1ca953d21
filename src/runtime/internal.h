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
/** The rank an MPI launcher gave this process in its environment (mpiexec's hydra and PMI-2
 * launchers: PMI_RANK; PMIx ones, as srun --mpi=pmix: PMIX_RANK; OpenMPI's mpirun:
 * OMPI_COMM_WORLD_RANK), NULL when none started it. */
const char *tg_runtime_launcher_rank(void);

/* ---- Host memory (host.c) */
/** Frees the staging buffer (before StarPU stops). */
void tg_host_stage_release(void);

/* ---- The ranks of a node (node.c) */
typedef struct {
    int nranks, index;   /* the ranks on this node, and this rank's place among them */
    int same_cpus;       /* every one of them may use the same CPUs (nobody bound them) */
    int same_gpus;       /* every one of them sees the same CUDA devices */
} tg_node;
/** A collective over every rank: the ranks sharing this node, given each rank's signature of
 * its CPU set (@p cpus) and of its visible CUDA devices (@p gpus). One rank: 1, 0, 1, 1. */
tg_node tg_node_query(uint64_t cpus, uint64_t gpus);

/* ---- Worker places (workers.c) */
/** Signature of the CPUs this process may use, for tg_node_query. */
uint64_t tg_workers_cpus_signature(void);
/** Checks o->ncpu against the CPUs this process may use (its share of them when ranks of
 * @p node share them), makes the default worker count (o->ncpu −1) and binds StarPU's threads,
 * @p ngpu GPUs' driver threads counted. */
tg_status tg_workers_place(tg_runtime_opts *o, const tg_node *node, int ngpu, tg_error *err);
/** " on CPUs 0-13": the CPUs StarPU bound its workers of @p type to; "" for none. */
void tg_workers_bound(enum starpu_worker_archtype type, char *buf, size_t len);

/* ---- Per-worker CUDA handles (cuda.c): created after StarPU starts, destroyed before it stops;
 * nothing without CUDA workers or in a build without CUDA. */
void tg_cuda_handles_create(void);
void tg_cuda_handles_destroy(void);
/** Signature of the CUDA devices this process sees (their PCI addresses), for tg_node_query. */
uint64_t tg_cuda_devices_signature(void);
/** The CUDA devices this rank drives when --ngpu is left to tilegwas: every device it sees, or,
 * when ranks of @p node see the same devices, its share (device d to rank d mod R; with more
 * ranks than devices, device i mod D to rank i, each sharer held to its part of the memory).
 * Writes up to @p max device numbers to @p dev and returns their count. */
int tg_cuda_rank_devices(const tg_node *node, int *dev, int max);

/* ---- Scheduling (sched.c) */
/** Sets @p conf's policy to @p sched, with heteroprio's buckets from @p buckets. */
void tg_sched_conf(struct starpu_conf *conf, const char *sched, const tg_sched_buckets *buckets);

/* ---- Notes on a handle: its StarPU user data, which StarPU clears at the registration (and
 * nothing else in tilegwas uses). Bit 0: the recorder has seen the handle (record.c); the bits
 * above: its home worker + 1 (homes.c). */
#define TG_NOTE_SEEN ((uintptr_t)1)
static inline uintptr_t tg_handle_notes(starpu_data_handle_t h) {
    return (uintptr_t)starpu_data_get_user_data(h);
}
static inline void tg_handle_notes_set(starpu_data_handle_t h, uintptr_t notes) {
    starpu_data_set_user_data(h, (void *)notes);
}

/* ---- Home GPUs (homes.c) */
/** After StarPU started: homes on when @p on and there are two CUDA workers or more. */
void tg_homes_start(int on);
void tg_homes_stop(void);
/** Sends @p task to the home of its largest homed buffer (tg_runtime_home), if any. */
void tg_homes_place(struct starpu_task *task);

/* ---- The stderr filter (stderr_filter.c) */
/** Runs @p fn with stderr passing every write to file descriptor 2 at once, except those that
 * contain @p marker. */
void tg_stderr_filtered(const char *marker, int (*fn)(void));
#endif
