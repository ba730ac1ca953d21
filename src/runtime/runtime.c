/* StarPU's life cycle: the checks of the options, the environment StarPU starts with, its start
 * and stop (through the files that own MPI, worker places, CUDA handles and scheduling), waits,
 * and the description of the started runtime for the log. It registers no codelet: the layer
 * above does (src/api.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "base/parallel.h"
#include "runtime/internal.h"

static struct {
    int started;
    char sched[64];
    char models[1024]; /* where the performance models came from (tg_perfmodels_seed) */
    int node_ranks;    /* ranks on this rank's node */
    double start_s;    /* tg_runtime_open's time: StarPU's start, its first-run bus benchmark */
} rt;

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int tg_have_cuda(void) {
#ifdef TG_USE_CUDA
    return 1;
#else
    return 0;
#endif
}

int tg_have_mpi(void) {
#ifdef TG_USE_MPI
    return 1;
#else
    return 0;
#endif
}

tg_runtime_opts tg_runtime_defaults(void) {
    tg_runtime_opts o = {.sched = NULL, .ncpu = -1, .ngpu = -1, .cpus_help_gpus = 1, .grid_p = 0,
                         .grid_q = 0, .tile_homes = 1};
    return o;
}

/* StarPU silently falls back to its default on an unknown policy name; we refuse it instead. */
static tg_status check_sched(const char *name, tg_error *err) {
    struct starpu_sched_policy **pol = starpu_sched_get_predefined_policies();
    char names[1024] = "";
    for (int i = 0; pol[i]; i++) {
        if (!strcmp(pol[i]->policy_name, name)) return TG_OK;
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", pol[i]->policy_name);
    }
    return tg_error_set(err, TG_ERR_ARG, "--sched %s: unknown StarPU scheduler (known: %s)", name,
                        names);
}

tg_status tg_runtime_open(const tg_runtime_opts *opts, const tg_sched_buckets *buckets,
                          tg_error *err) {
    const double t0 = seconds_now();
    tg_runtime_opts o = opts ? *opts : tg_runtime_defaults();
    if (rt.started) return tg_error_set(err, TG_ERR_RUNTIME, "the runtime is already started");
    tg_runtime_prepare_wait();
    if (o.ncpu < -1) return tg_error_set(err, TG_ERR_ARG, "--ncpu %d: must be ≥ 0", o.ncpu);
    if (o.ngpu < -1) return tg_error_set(err, TG_ERR_ARG, "--ngpu %d: must be ≥ 0", o.ngpu);
    tg_status st = tg_runtime_init_mpi(err);
    if (st) return st;
    if ((o.grid_p || o.grid_q) &&
        (o.grid_p < 1 || o.grid_q < 1 || (int64_t)o.grid_p * o.grid_q != tg_runtime_nranks()))
        return tg_error_set(err, TG_ERR_ARG, "--grid %dx%d: the grid must have as many places as "
                            "there are MPI ranks (%d)", o.grid_p, o.grid_q, tg_runtime_nranks());
    if (!tg_have_cuda() && o.ngpu > 0)
        return tg_error_set(err, TG_ERR_ARG,
                            "--ngpu %d: this build of tilegwas has no CUDA support (the StarPU it "
                            "was built with has no CUDA); use --ngpu 0, or rebuild after "
                            "scripts/setup-deps on a machine with nvcc",
                            o.ngpu);
    /* ranks that share a node share its cores and GPUs unless the launcher split them */
    const tg_node node = tg_node_query(tg_workers_cpus_signature(), tg_cuda_devices_signature());
    int ngpu_used = 0, dev[STARPU_NMAXWORKERS], ndev = 0;
#ifdef TG_USE_CUDA
    /* refuse an impossible --ngpu before starting StarPU: StarPU 1.3.10 hangs in starpu_init on
     * the H100 when asked for more CUDA devices than exist */
    ndev = tg_cuda_rank_devices(&node, dev, STARPU_NMAXWORKERS);
    if (o.ngpu > ndev)
        return tg_error_set(err, TG_ERR_DEVICE, "--ngpu %d: only %d CUDA device%s %s", o.ngpu,
                            ndev, ndev == 1 ? "" : "s", node.nranks > 1 && node.same_gpus ?
                            "for this rank (the node's devices are shared among its ranks)" :
                            "found");
    ngpu_used = o.ngpu >= 0 ? o.ngpu : ndev;
#endif
    st = tg_workers_place(&o, &node, ngpu_used, err);
    if (st) return st;
    /* dmdas (dmda with each worker's queue sorted by priority, so a panel's factorisation
     * overtakes the updates queued before it) ran KRR's factorisation 7-8% faster than dmda on
     * the H100 node (docs/SCHEDULING.md) and the epistasis search at the same speed */
    const char *sched = o.sched ? o.sched : "dmdas";
    st = check_sched(sched, err);
    if (st) return st;
    snprintf(rt.sched, sizeof rt.sched, "%s", sched);

    /* StarPU's own chatter (uncalibrated models, ...) is for developers: STARPU_SILENT=0 shows it. */
    setenv("STARPU_SILENT", "1", 0);
    /* StarPU writes dirty GPU tiles back to the host in the background whenever fewer than 5%
     * of a GPU's buffers are clean, so that it can evict them quickly. Every tile a build or a
     * factorisation writes is dirty, so that meant a pinned host allocation and a copy per tile
     * and ran the KRR build 6× slower on the H100 (0.79 s instead of 0.13 s at N = 65,536).
     * Without it StarPU still evicts, synchronously, when a GPU is full. The environment
     * overrides it. */
    setenv("STARPU_MINIMUM_CLEAN_BUFFERS", "0", 0);
    setenv("STARPU_TARGET_CLEAN_BUFFERS", "0", 0);
    /* Models always measure (the environment overrides it). StarPU 1.3 decides whether to time
     * a task separately at its start, its end and its model update, from a flag that turns on
     * as soon as any prediction of that model is missing: a task that straddles the switch
     * gets an end time from an earlier task and a negative duration, an assertion failure
     * (seen on the H100 with a fresh model directory). Timing every task keeps the flag on. */
    setenv("STARPU_CALIBRATE", "1", 0);
    /* StarPU reads each model file at its first task: shipped models must be in place first */
    tg_perfmodels_seed(rt.models, sizeof rt.models);
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    tg_sched_conf(&conf, rt.sched, buckets);
    conf.ncpus = o.ncpu;
    conf.ncuda = ngpu_used;
    /* the devices chosen above, unless the user named them to StarPU */
    if (node.nranks > 1 && node.same_gpus && !getenv("STARPU_WORKERS_CUDAID")) {
        conf.use_explicit_workers_cuda_gpuid = 1;
        for (int i = 0; i < ndev; i++) conf.workers_cuda_gpuid[i] = (unsigned)dev[i];
    }
    conf.nopencl = 0;
    conf.nmic = 0;
    conf.nmpi_ms = 0;
    int ret = tg_mpi_starpu_init(&conf);
    /* every CPU worker is a core already: a multithreaded BLAS call inside a task would
     * oversubscribe them */
    openblas_set_num_threads(1);
    if (ret == -ENODEV)
        return tg_error_set(err, TG_ERR_ARG, "no worker to run on (--ncpu %d --ngpu %d)", o.ncpu,
                            o.ngpu);
    if (ret) return tg_error_set(err, TG_ERR_RUNTIME, "StarPU failed to start: %s", strerror(-ret));
    rt.started = 1;
    rt.node_ranks = node.nranks;
    tg_mpi_started(o.grid_p, o.grid_q);
    tg_cuda_handles_create();
    tg_homes_start(o.tile_homes);
    tg_probe_reset();
    /* host loops pause the workers, whose idle loop spins (running tasks go on) */
    tg_parallel_hooks(starpu_pause, starpu_resume);
    rt.start_s = seconds_now() - t0;
    return TG_OK;
}

void tg_runtime_close(void) {
    if (!rt.started) return;
    tg_parallel_hooks(NULL, NULL);
    tg_runtime_wait_all();
    tg_homes_stop();
    tg_cuda_handles_destroy();
    tg_host_stage_release();
    tg_mpi_starpu_shutdown();
    rt.started = 0;
}

void tg_runtime_wait_all(void) {
#ifdef TG_USE_MPI
    if (tg_runtime_mpi()) {
        starpu_mpi_wait_for_all(MPI_COMM_WORLD);
        return;
    }
#endif
    starpu_task_wait_for_all();
}

void tg_runtime_wait_local(void) { starpu_task_wait_for_all(); }

static _Atomic int handles_held;

void tg_handle_hold(tg_handle h) {
    handles_held++;
    starpu_data_acquire(h, STARPU_W);
}

void tg_handle_release(tg_handle h) {
    starpu_data_release(h);
    handles_held--;
}

int tg_handles_held(void) { return handles_held; }

int tg_runtime_heteroprio(void) { return rt.started && !strcmp(rt.sched, "heteroprio"); }

int tg_runtime_ncpu(void) { return (int)starpu_cpu_worker_get_count(); }
int tg_runtime_ngpu(void) { return (int)starpu_cuda_worker_get_count(); }

int64_t tg_runtime_gpu_memory(void) {
    int64_t least = -1;
    for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
        if (starpu_worker_get_type((int)w) != STARPU_CUDA_WORKER) continue;
        int64_t total = (int64_t)starpu_memory_get_total(starpu_worker_get_memory_node(w));
        if (total > 0 && (least < 0 || total < least)) least = total;
    }
    return least;
}

static const char *cpu_note;
void tg_runtime_note_cpu(const char *note) { cpu_note = note; }

void tg_runtime_describe(char *buf, size_t len) {
    char on_cpus[600], gpu_cpus[600];
    tg_workers_bound(STARPU_CPU_WORKER, on_cpus, sizeof on_cpus);
    tg_workers_bound(STARPU_CUDA_WORKER, gpu_cpus, sizeof gpu_cpus);
    size_t l = (size_t)snprintf(buf, len, "StarPU %d.%d.%d (started in %.2f s), scheduler %s, "
                                "%d rank%s, %d CPU worker%s%s", STARPU_MAJOR_VERSION,
                                STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION, rt.start_s, rt.sched,
                                tg_runtime_nranks(),
                                tg_runtime_nranks() == 1 ? "" : "s", tg_runtime_ncpu(),
                                tg_runtime_ncpu() == 1 ? "" : "s", on_cpus);
    l += (size_t)snprintf(buf + l, l < len ? len - l : 0, ", %d GPU%s", tg_runtime_ngpu(),
                          tg_runtime_ngpu() == 1 ? "" : "s");
    /* name each CUDA worker's device */
    for (unsigned w = 0; w < starpu_worker_get_count() && l < len; w++) {
        if (starpu_worker_get_type((int)w) != STARPU_CUDA_WORKER) continue;
        char name[128];
        starpu_worker_get_name((int)w, name, sizeof name);
        l += (size_t)snprintf(buf + l, len - l, " [%s]", name);
    }
    if (l < len && *gpu_cpus) l += (size_t)snprintf(buf + l, len - l, " driven%s", gpu_cpus);
    if (l < len && tg_runtime_homes())
        l += (size_t)snprintf(buf + l, len - l, ", each tile's tasks on its home GPU");
    /* measured on 4 H200s (docs/PERFORMANCE.md): KRR on 4 ranks, one GPU each, 29× slower
     * than one process on the 4 GPUs */
    if (l < len && rt.node_ranks > 1 && tg_runtime_ngpu() > 0)
        l += (size_t)snprintf(buf + l, len - l, "; %d ranks share this node: tiles between "
                              "its GPUs go through host memory and MPI (one rank per node, "
                              "driving all its GPUs, is faster)", rt.node_ranks);
    if (l < len)
        l += (size_t)snprintf(buf + l, len - l, "; host loops on %d thread%s",
                              tg_parallel_threads(), tg_parallel_threads() == 1 ? "" : "s");
    if (l < len)
        l += (size_t)snprintf(buf + l, len - l, "; OpenBLAS kernels %s", tg_blas_core());
    const char *forced = getenv("OPENBLAS_CORETYPE"), /* the user's, or the restart's */
        *chosen = getenv("TG_BLAS_RESTARTED");
    if (l < len && forced && *forced)
        l += (size_t)snprintf(buf + l, len - l, " (OPENBLAS_CORETYPE=%s%s%s%s)", forced,
                              chosen ? ", set by tilegwas: OpenBLAS chose its " : "",
                              chosen ? chosen : "", chosen ? " kernels on this CPU" : "");
    if (l < len && cpu_note) l += (size_t)snprintf(buf + l, len - l, "; %s", cpu_note);
    if (l < len) snprintf(buf + l, len - l, "; performance models: %s", rt.models);
}
