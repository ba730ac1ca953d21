/* The runtime layer: the only place that knows whether tasks go through StarPU or StarPU-MPI,
 * and where the per-worker cuBLAS / cuBLASLt handles live. Algorithms and codelets include it;
 * it includes no codelet and names no kernel (the codelets' hints reach it as data). Files:
 * runtime.c life cycle, mpi.c MPI, workers.c worker places, cuda.c CUDA handles, host.c host
 * memory, sched.c scheduling hints, taskset.c task sets, stderr_filter.c, record.c, trace.c,
 * progress.c, perfmodels.c, probe.c, blas.c, calibration.c (what tg_calibrate needs). */
#ifndef TG_RUNTIME_H
#define TG_RUNTIME_H
#include <starpu.h>

#include "config.h"
#include "tilegwas.h"

/** Whether StarPU-MPI is running: built with MPI and started with more than one rank. A single
 * rank runs plain StarPU, exactly as a build without MPI (and keeps the core StarPU-MPI would
 * reserve for its progression thread). */
int tg_runtime_mpi(void);

/* ---- Scheduling hints (sched.c). The runtime knows no kernel: the layer that starts it
 * describes heteroprio's buckets, and each codelet family gives its codelets their bucket. */
/** heteroprio's buckets 0 .. n−1 (n ≤ STARPU_HETEROPRIO_MAX_PRIO): GPUs take them in that
 * order, CPUs in @c cpu_order (n entries); beside GPUs a CPU takes a task of bucket b only when
 * b holds more than cpu_slow[b] tasks per GPU, and never when cpu_slow[b] is 0. A codelet given
 * no bucket is in @c fallback. */
typedef struct tg_sched_buckets {
    int n;
    const int *cpu_order;
    const float *cpu_slow;
    int fallback;
} tg_sched_buckets;
/** Puts codelet @p cl in heteroprio bucket @p bucket (set when its family's table is built). */
void tg_sched_hint(const struct starpu_codelet *cl, int bucket);
/** The bucket of @p cl: its hint, else the fallback bucket. */
int tg_sched_bucket(const struct starpu_codelet *cl);
/** Whether the heteroprio scheduler runs; then every task's priority is replaced by its
 * codelet's bucket (tg_sched_bucket), which heteroprio requires. */
int tg_runtime_heteroprio(void);

/** Starts StarPU (StarPU-MPI with several ranks) with the options of tg_runtime_start and
 * heteroprio's @p buckets; the codelets are the caller's to register afterwards (src/api.c). */
tg_status tg_runtime_open(const tg_runtime_opts *opts, const tg_sched_buckets *buckets,
                          tg_error *err);
/** Waits for every task and stops what tg_runtime_open started (nothing when not started). */
void tg_runtime_close(void);

/** Submits a task built by starpu_task_build (NULL: -EINVAL), as starpu_task_insert would,
 * and records it while tg_record_start is on. Every task goes through it (TG_INSERT,
 * TG_INSERT_LOCAL). */
int tg_task_submit(struct starpu_task *task);

/* A task on this node's own handles: plain StarPU whatever the rank count (this rank's own
 * work, waited for with tg_runtime_wait_local). */
#define TG_INSERT_LOCAL(cl, ...) tg_task_submit(starpu_task_build((cl), __VA_ARGS__))

#ifdef TG_USE_MPI
#include <starpu_mpi.h>
/* StarPU-MPI runs a task on the rank owning the data it writes and moves the inputs there:
 * starpu_mpi_task_insert split into its build (NULL on the ranks that do not run it), submit and
 * post-build steps, in that order (the comma operator sequences them), so that tg_task_submit
 * sees the task. Post-build runs even after a failed submit, as in starpu_mpi_task_insert, so
 * every rank's cache of sent and received tiles stays in step; the submit's error is returned.
 * The arguments are evaluated twice: they must have no side effects. (starpu_mpi_task_build
 * asserts on a malformed argument list where starpu_mpi_task_insert would return an error.) */
extern _Thread_local int tg_insert_ret;
#define TG_INSERT(cl, ...)                                                                       \
    (tg_runtime_mpi()                                                                            \
         ? (tg_insert_ret = tg_task_submit_mpi(                                                  \
                starpu_mpi_task_build(MPI_COMM_WORLD, (cl), __VA_ARGS__)),                      \
            starpu_mpi_task_post_build(MPI_COMM_WORLD, (cl), __VA_ARGS__), tg_insert_ret)       \
         : TG_INSERT_LOCAL(cl, __VA_ARGS__))
/** tg_task_submit where @p task is not NULL (this rank runs it); 0 where it is. */
int tg_task_submit_mpi(struct starpu_task *task);
#else
#define TG_INSERT(cl, ...) TG_INSERT_LOCAL(cl, __VA_ARGS__)
#endif

/* ---- Handles and waits: the runtime's vocabulary for algorithms, which never call StarPU for
 * them (an algorithm knows nothing of whether StarPU or StarPU-MPI runs its tasks). */
/** A piece of data the runtime moves between memories and orders tasks on. */
typedef starpu_data_handle_t tg_handle;
/** Registers @p n elements of @p elem bytes of host memory at @p ptr as a vector handle; @p ptr
 * NULL: data another rank holds (tg_runtime_register), which the runtime allocates where this
 * rank receives it. */
static inline void tg_handle_vector(tg_handle *h, const void *ptr, uint32_t n, size_t elem) {
    starpu_vector_data_register(h, ptr ? STARPU_MAIN_RAM : -1, (uintptr_t)ptr, n, elem);
}
/** Registers a column-major @p rows × @p cols host matrix at @p ptr (leading dimension @p ld, in
 * elements of @p elem bytes) as a matrix handle; @p ptr NULL: as for tg_handle_vector. */
static inline void tg_handle_matrix(tg_handle *h, const void *ptr, uint32_t ld, uint32_t rows,
                                    uint32_t cols, size_t elem) {
    starpu_matrix_data_register(h, ptr ? STARPU_MAIN_RAM : -1, (uintptr_t)ptr, ld, rows, cols,
                                elem);
}
/** Registers @p size bytes of host memory at @p ptr as a variable handle; @p ptr NULL: memory
 * the runtime allocates where the variable is first written. */
static inline void tg_handle_variable(tg_handle *h, const void *ptr, size_t size) {
    starpu_variable_data_register(h, ptr ? STARPU_MAIN_RAM : -1, (uintptr_t)ptr, size);
}
/** The number of columns of matrix handle @p h. */
static inline uint32_t tg_handle_cols(tg_handle h) { return starpu_matrix_get_ny(h); }
/** The number of rows of matrix handle @p h. */
static inline uint32_t tg_handle_rows(tg_handle h) { return starpu_matrix_get_nx(h); }
/** Waits for the tasks submitted on @p h, brings its data back to where it was registered
 * from, and forgets the handle. */
static inline void tg_handle_free(tg_handle h) { starpu_data_unregister(h); }
/** Forgets @p h once the tasks submitted so far on it have run, without waiting. */
static inline void tg_handle_free_later(tg_handle h) { starpu_data_unregister_submit(h); }
/** Takes @p h for the host to write (no task submitted before; not from a task): tasks
 * submitted from now on that read it wait until tg_handle_release, which may come from another
 * thread, so that work can be submitted before its data are made. */
void tg_handle_hold(tg_handle h);
/** Gives back a handle held by tg_handle_hold: the tasks waiting on it may start. */
void tg_handle_release(tg_handle h);
/** Whether the host holds a handle now (tg_handle_hold): a probe then leaves the first task's
 * inputs alone, which may be among them and would make it wait for their release. */
int tg_handles_held(void);
/** Tells the runtime that no task submitted from now on reads @p h for a while: a device copy
 * may be evicted first. */
static inline void tg_handle_wont_use(tg_handle h) { starpu_data_wont_use(h); }
/** Whether the runtime is started (tg_runtime_start). */
static inline int tg_runtime_started(void) { return starpu_is_initialized(); }
/** The number of workers (CPU and GPU) of this rank. */
static inline int tg_runtime_nworkers(void) { return (int)starpu_worker_get_count(); }

/** Work that is this rank's own: tasks on handles only this rank registered, as many as it
 * alone decides (other ranks run other numbers), inserted with TG_INSERT_LOCAL (plain StarPU
 * whatever the rank count: StarPU-MPI would want every rank to submit them) and waited for by
 * tg_runtime_wait_local, which waits for this rank's tasks without meeting the other ranks. */
void tg_runtime_wait_local(void);

/** A set of @p n tasks (a product's blocks) whose only order is submission's: @p submit(ctx,
 * i, worker, done, done_arg) submits task i, to @p worker (−1: wherever the scheduler puts it),
 * calling done(done_arg) when it ends (done NULL: nothing). With @p pull and only CPU workers,
 * each worker pulls the next task as its last one ends, and the call returns when every task has
 * ended; otherwise every task is submitted at once, placed by the scheduler, and the call
 * returns (the caller waits on the tasks' handles). 0, or the first failed submission's code
 * (the tasks not submitted then never run). */
typedef int (*tg_submit_fn)(void *ctx, int64_t i, int worker, void (*done)(void *), void *done_arg);
int tg_runtime_submit_set(int64_t n, int pull, tg_submit_fn submit, void *ctx);

/* ---- Progress of long phases (progress.c), reported through tg_progress_set's hook. */
typedef struct tg_phase tg_phase;
/** Opens phase @p name counting @p unit (the hook hears of it at once, with total −1). @p total
 * < 0: the tasks this thread submits from now on (tg_task_submit), and those their callbacks
 * submit, count their flops (STARPU_FLOPS, which every tg_insert_* sets) into the total as
 * they are submitted and into done as they end; its figures are reported once it is closed
 * (its total complete). @p total ≥ 0: a total known in advance, figures reported from the
 * start; done counts the tasks' flops likewise. NULL, and nothing counted, when no hook is
 * set, out of memory, or when a phase is already open on this thread (phases do not nest:
 * the outer one counts). */
tg_phase *tg_phase_open(const char *name, const char *unit, int64_t total);
/** A phase of @p total units whose done count the host adds (tg_phase_add); the tasks this
 * thread submits meanwhile do not count (and open no phase of their own). NULL as above. */
tg_phase *tg_phase_open_host(const char *name, const char *unit, int64_t total);
/** Adds @p n to the done count of a host-counted phase (NULL: nothing). */
void tg_phase_add(tg_phase *p, int64_t n);
/** Ends the phase's counting of submissions (NULL: nothing); it never waits: the phase reports
 * its last figures and is freed when its last task ends (at once when none is pending). Every
 * opened phase must be closed, since phases report in order. */
void tg_phase_close(tg_phase *p);
/** Called by tg_task_submit around the submission of @p task: tg_phase_attach makes the task
 * count in this thread's open phase (NULL when none), tg_phase_submitted takes the result. */
struct tg_phase_task;
struct tg_phase_task *tg_phase_attach(struct starpu_task *task);
void tg_phase_submitted(struct tg_phase_task *t, int ret);

/* ---- Performance models (perfmodels.c). Every codelet's model is a power-law regression of
 * its time on its work (tg_task_work). */
/** Before StarPU starts: copies the models of the shipped profile that matches this machine
 * (TILEGWAS_PERFMODELS: a directory of profiles or one profile, "off" for none; otherwise
 * perfmodels/ beside the binary, as installed, copied with its share folder or built in the
 * source tree, then the install prefix's and the source tree's) into StarPU's directory
 * (.starpu/sampling under XDG_CACHE_HOME, STARPU_HOME or HOME, or STARPU_PERF_MODEL_DIR, as
 * StarPU 1.3 looks) under this host's name, never over a model already there; makes identical
 * GPUs share models. A profile that matches only this machine's GPUs or only its CPU is kept for
 * tg_perfmodels_partial instead. Describes what it did in @p desc. */
void tg_perfmodels_seed(char *desc, size_t len);
/** The file of model @p symbol in the profile that matches this machine's GPUs (@p cuda) or its
 * CPU but not both, into @p path: 1 when there is one. */
int tg_perfmodels_partial(const char *symbol, int cuda, char *path, size_t len);
/** After a calibration: makes every model of this host valid for every size (StarPU 1.3 uses a
 * fit only within 0.9× the smallest and 1.1× the largest size measured, and outside that
 * forces calibration on every worker kind, sending a larger run's first tasks of each kernel
 * to the slowest workers); with @p export, also writes them as a profile in that existing
 * folder (machine.txt and one file per model, named by its symbol). *nmodels: how many. */
tg_status tg_perfmodels_finish(const char *export, int *nmodels, tg_error *err);

/* ---- Placement before any model exists (probe.c). A codelet submitted for the first time
 * from the application's thread, runnable on several kinds of worker (model architecture and
 * implementation) of which some have no valid model, is probed on those kinds, and each gets
 * the prior time = α·work from the probe's measured time per unit of work (docs/DESIGN-NOTES.md). */
/** A probe task: built, not submitted; its flops are its work (tg_task_work); @p release frees
 * its data once it has run (or was never submitted). */
typedef struct {
    struct starpu_task *task;
    void (*release)(void *ctx);
    void *ctx;
} tg_probe_task;
/** Builds a task of codelet @p cl at size @p level (0 the smallest; each level about 4× the
 * work of the one before) with scratch data, for a worker of @p type, shaped like @p like (the
 * codelet's first task, whose data it must not touch; NULL: a shape of the probe's own): 0, or
 * non-zero past the largest level or on failure. */
typedef int (*tg_probe_fn)(struct starpu_codelet *cl, int level, enum starpu_worker_archtype type,
                           const struct starpu_task *like, tg_probe_task *out);
/** How @p cl is probed (codelet families register at tg_codelets_init): by @p fn, or, when @p fn
 * is NULL, at the time per unit of work measured for the codelet @p like (e.g. syrk as gemm). */
void tg_probe_register(struct starpu_codelet *cl, tg_probe_fn fn, struct starpu_codelet *like);
/** A step every probe tries first (codelets/probes.c: on a GPU, the first task on its own
 * inputs): its task and 0, 1 where it does not apply (the codelet's own probe then builds the
 * task), or −1 on failure. */
void tg_probe_set_first(tg_probe_fn fn);
/** The task of @p cl's probe at @p level for a worker of @p type shaped like @p like, as the
 * runtime builds it (tg_probe_set_first's step, then the codelet's probe): 0, or non-zero when
 * @p cl has no probe of its own, past its last level, or on failure. For the tests, which run
 * a probe's task and check that it does the work it claims. */
int tg_probe_build(struct starpu_codelet *cl, int level, enum starpu_worker_archtype type,
                   const struct starpu_task *like, tg_probe_task *out);
/** At every runtime start: forgets what the last runtime probed (TILEGWAS_PROBE=off turns
 * probing off). */
void tg_probe_reset(void);
/** Makes the model of @p task's codelet ready on every kind of worker that can run it, probing
 * with tasks shaped like @p task (tg_task_submit calls it before submitting; nothing from a
 * worker's thread, nothing after the codelet's first task). Returns the worker types (a
 * starpu_task.where mask) worth considering for the codelet's tasks, 0 for all of them
 * (tg_probe_keep). */
unsigned tg_models_ensure(const struct starpu_task *task);
/** Where a power-law model time = α·work^β fitted on @p n tasks with Σ ln work = @p sumlnx and
 * Σ (ln work)² = @p sumlnx2 stops being trusted: e^(mean + 2 sd) of ln work (INFINITY under 2
 * tasks). tg_models_ensure's predictions past it grow linearly in work from it when β < 1: a
 * flatter fit reflects the fixed costs of small tasks (a profile's epistasis rounds on the
 * cores, calibrated on small rounds) and would promise a task 100 times larger in a fraction
 * of its time, keeping slow workers that then take the run's last tasks. */
double tg_probe_fit_edge(double sumlnx, double sumlnx2, unsigned n);
/** Which worker types a codelet's tasks go to, from each kind's type, worker count and
 * predicted time for the same task (µs; NAN or ≤ 0: unknown): a type whose workers together
 * would deliver under TG_PROBE_KEEP_SHARE of the node's rate is left out (its only effect
 * would be the scheduler's cost of weighing it for every task). 0: every type kept. */
#define TG_PROBE_KEEP_SHARE 0.01
unsigned tg_probe_keep(int n, const enum starpu_worker_archtype *type, const int *nworkers,
                       const double *us);

/* ---- Task records, for calibrate, --trace and bench/sched. */
typedef struct {
    const char *kernel;   /* the codelet's perfmodel symbol, e.g. "tg_gemm_fp16" */
    int worker;           /* StarPU worker id (starpu_worker_get_name names it) */
    double submit, start, end; /* seconds since tg_record_start */
    double predicted;     /* seconds predicted for that worker; NAN when not known */
    double work;          /* the perfmodel's size: the task's flops, else its data bytes */
    int64_t id;           /* submission order while recording, from 0 */
    int npred;            /* ids of the recorded tasks this one waited for, ascending */
    const int64_t *pred;
} tg_task_record;
/** Records every task submitted from now on (StarPU profiling on). With @p predict, each
 * record gets the model's prediction for the worker that ran it (which, on an uncalibrated
 * model, starts StarPU's calibration); otherwise the scheduler's own (dm* schedulers only).
 * Dependencies follow StarPU's sequential consistency over the task's handles: a reader waits
 * for the last writer, a writer for every reader since the last writer, or for that writer
 * when there was no reader (edges implied through others are left out). Scratch buffers, and
 * handles or tasks with sequential consistency off, add none. With StarPU-MPI, only this
 * rank's tasks are recorded: a dependency through another rank's task is missing. */
void tg_record_start(int predict);
/** Waits for every task, stops recording and returns the records in id order: one malloc'd
 * block (free() frees the predecessor lists too); *count of them. */
tg_task_record *tg_record_stop(size_t *count);
/** The perfmodel size of a task (every codelet's size_base): its flops, else its data bytes. */
size_t tg_task_work(struct starpu_task *task, unsigned nimpl);

/* ---- Calibration of the performance models (calibration.c), for tg_calibrate. */
/** The user's STARPU_CALIBRATE and STARPU_BUS_CALIBRATE, kept while calibrate sets its own. */
typedef struct {
    char *calibrate, *bus;
} tg_calibration_env;
void tg_calibration_begin(tg_calibration_env *user);
/** For the runtimes started from now on: StarPU's calibration @p mode (0 use the models, 1 also
 * measure every task, 2 forget them first) and, with @p bus, a new measure of the bus. */
void tg_calibration_set(int mode, int bus);
/** After a start: the user's bus setting back (a new measure of the bus is for one start). */
void tg_calibration_started(const tg_calibration_env *user);
/** Every setting back to the user's. */
void tg_calibration_end(tg_calibration_env *user);
/** StarPU's bus bandwidths and latencies as it prints them (malloc'd; NULL when out of
 * memory). Needs a started runtime. */
char *tg_runtime_bus_text(void);
/** CUDA devices present (0 without CUDA or when none answers). */
int tg_cuda_device_count(void);
typedef enum { TG_WORKER_CPU = 0, TG_WORKER_CUDA } tg_worker_kind;
/** Task records summed per kernel (its model's symbol, one pointer per codelet), worker kind
 * and work. */
typedef struct {
    const char *kernel;
    tg_worker_kind kind;
    double work;
    int64_t tasks;
    double measured, predicted; /* sums of the tasks' measured and predicted seconds */
    double fastest;             /* the fastest task's seconds */
} tg_record_sum;
/** Adds the @p n records @p r to the @p nsums sums at @p sums (room for nsums + n); returns
 * the new count. */
size_t tg_record_sums(const tg_task_record *r, size_t n, tg_record_sum *sums, size_t nsums);

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

/** With StarPU-MPI running, drops the copies of @p h that other ranks received (StarPU-MPI's
 * cache), each freed once the tasks submitted so far have read it; the owner keeps its data and
 * sends it again to a later task that needs it. Every rank calls it at the same point of
 * submission. Nothing on one rank. */
void tg_runtime_flush(starpu_data_handle_t h);

/** With StarPU-MPI running, gives @p h the next tag and the owner rank @p owner, so that tasks
 * inserted with TG_INSERT run where it is written and move it where it is read; every rank
 * registers the same handles in the same order. Nothing on one rank. */
void tg_runtime_register(starpu_data_handle_t h, int owner);
/** The home GPUs of this process (tg_runtime_opts.tile_homes): their count, 0 when off (one
 * GPU or none, or homes not asked for). */
int tg_runtime_homes(void);
/** Gives @p h home @p home (modulo the count; nothing when homes are off): a task runs on the
 * home of its largest homed buffer. */
void tg_runtime_home(starpu_data_handle_t h, int home);
/** The squarest p × q = n grid, p ≥ q: tile rows, which the Cholesky's panels run down, over
 * the larger dimension (ScaLAPACK's and Chameleon's habit for a tall dimension); the ranks' grid
 * by default, and the home GPUs' in a rank. */
void tg_grid_squarest(int n, int *p, int *q);
/** A note on the CPU kernels in use ("CPU genotype products on AMX tiles"), which the runtime's
 * line (tg_runtime_describe) gives after OpenBLAS's kernels; NULL: none. Set by a codelet
 * family as it starts. */
void tg_runtime_note_cpu(const char *note);
/* ---- OpenBLAS's kernels (blas.c) */
/** The name of the kernels OpenBLAS uses ("Cooperlake", "Haswell", "Prescott", ...). */
const char *tg_blas_core(void);
/** A BLAS or LAPACK call on the host between tasks: on (1), OpenBLAS threads on the host loops'
 * cores and the runtime's workers paused (their idle loop spins); off (0), back to one thread
 * (the workers' setting) and the workers resumed. */
void tg_blas_host(int on);
enum { TG_CPU_AVX2 = 1, TG_CPU_FMA = 2, TG_CPU_AVX512 = 4, TG_CPU_AVX512BF16 = 8 };
/** The OPENBLAS_CORETYPE a CPU with @p features (TG_CPU_*; TG_CPU_AVX512: F, BW, DQ and VL)
 * calls for when OpenBLAS runs the kernels @p core: only when those are x86 kernels without
 * AVX2 (Prescott, Sandybridge, ...: any case) on a CPU with AVX2 and FMA; NULL otherwise. */
const char *tg_blas_better_core(const char *core, unsigned features);

/* ---- Host memory (host.c) */
/** A large buffer that the host's cores fill before GPUs read it: plain memory (in huge pages
 * where the kernel gives them on request), pinned by tg_host_pin once filled, released with
 * free() once what was pinned is unpinned. Pinning pages already touched, by the cores that
 * filled them, costs a fraction of what tg_host_alloc's pinned allocation does, which faults and
 * pins every page on one thread (and frees as slowly). NULL, with the error set, when out of
 * memory. */
void *tg_host_alloc_large(size_t bytes, tg_error *err);
/** Pins @p bytes at @p p (within tg_host_alloc_large's memory) for DMA when the runtime has
 * CUDA workers; returns whether it did (unpinned, transfers go through CUDA's staging of
 * pageable memory). Thread-safe. */
int tg_host_pin(void *p, size_t bytes);
/** Unpins what tg_host_pin pinned. Thread-safe. */
void tg_host_unpin(void *p, size_t bytes);
/** Whether @p p is in pinned (page-locked or registered) host memory: 0 without CUDA. */
int tg_host_pinned(const void *p);
/** The process's pinned staging buffer of at least @p bytes, for copies between a caller's
 * pageable memory and GPUs (a memcpy on the host and a DMA transfer instead of CUDA's pageable
 * path); NULL without CUDA workers, past 256 MiB, out of memory, or while another caller holds
 * it. Kept for later calls until the runtime stops. */
void *tg_host_stage_take(size_t bytes);
/** Returns the buffer tg_host_stage_take gave. */
void tg_host_stage_give(void);
#endif
