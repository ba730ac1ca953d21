/* StarPU / StarPU-MPI start-up and shut-down, worker options, per-worker cuBLAS(Lt) handles. */
#define _GNU_SOURCE /* fopencookie, memmem: the filter of StarPU-MPI's shutdown output */
#include "runtime/runtime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#include <starpu_heteroprio.h>
#include <hwloc.h>

#include "base/cpus.h"
#include "base/parallel.h"
#include "codelets/codelets.h"

static struct {
    int started;
    int mpi; /* StarPU-MPI started (more than one rank) */
    int comm_stats; /* StarPU-MPI counts the bytes it sends (STARPU_COMM_STATS) */
    int rank, nranks;
    int thread_ok; /* every rank has MPI_THREAD_MULTIPLE (tg_runtime_init_mpi) */
    int grid_p, grid_q; /* the started runtime's; 0, 0: the squarest */
    int64_t next_tag;
    uint64_t summed; /* bytes this rank passed to tg_runtime_sum* since the runtime started */
    int64_t nsums;
    char sched[64];
    char models[1024]; /* where the performance models came from (tg_perfmodels_seed) */
} rt = {.nranks = 1};

#ifdef TG_USE_CUDA
#include <starpu_cublas_v2.h>
/* Library handles of each CUDA worker, created on its thread when the runtime starts (bound to
 * the worker's stream, which StarPU re-creates at every start) and destroyed when it stops. */
static cublasLtHandle_t lt_handles[STARPU_NMAXWORKERS];
static cusolverDnHandle_t solver_handles[STARPU_NMAXWORKERS];

static void handles_create(void *arg) {
    (void)arg;
    int w = starpu_worker_get_id_check();
    if (cublasLtCreate(&lt_handles[w]) != CUBLAS_STATUS_SUCCESS)
        STARPU_ABORT_MSG("cublasLtCreate failed on worker %d", w);
    if (cusolverDnCreate(&solver_handles[w]) != CUSOLVER_STATUS_SUCCESS ||
        cusolverDnSetStream(solver_handles[w], starpu_cuda_get_local_stream()) !=
            CUSOLVER_STATUS_SUCCESS)
        STARPU_ABORT_MSG("cusolverDnCreate failed on worker %d", w);
    /* GEMMs with FP16 output (tile updates, the FP16 panel solve) sum their split-K partials in
     * FP32, never in FP16 */
    if (cublasSetMathMode(starpu_cublas_get_local_handle(),
                          CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) !=
        CUBLAS_STATUS_SUCCESS)
        STARPU_ABORT_MSG("cublasSetMathMode failed on worker %d", w);
}

static void handles_destroy(void *arg) {
    (void)arg;
    int w = starpu_worker_get_id_check();
    cublasLtDestroy(lt_handles[w]);
    cusolverDnDestroy(solver_handles[w]);
}

cublasHandle_t tg_cublas_handle(void) { return starpu_cublas_get_local_handle(); }
cublasLtHandle_t tg_cublaslt_handle(void) { return lt_handles[starpu_worker_get_id_check()]; }
cusolverDnHandle_t tg_cusolver_handle(void) { return solver_handles[starpu_worker_get_id_check()]; }

/* Attributes of the calling worker's device, asked once per worker (each touches its own). */
enum { ATTR_SMEM_OPTIN, ATTR_SMS, NATTR };
static int worker_attr(int which) {
    static const enum cudaDeviceAttr attr[NATTR] = {cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                                    cudaDevAttrMultiProcessorCount};
    static int value[STARPU_NMAXWORKERS][NATTR];
    int w = starpu_worker_get_id_check();
    if (!value[w][which]) {
        int dev;
        TG_CUDA_CHECK(cudaGetDevice(&dev));
        TG_CUDA_CHECK(cudaDeviceGetAttribute(&value[w][which], attr[which], dev));
    }
    return value[w][which];
}
size_t tg_cuda_smem_optin(void) { return (size_t)worker_attr(ATTR_SMEM_OPTIN); }
int tg_cuda_sm_count(void) { return worker_attr(ATTR_SMS); }
#endif

#ifdef TG_USE_MPI
static void mpi_finalize(void) {
    int done;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}
#endif

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

#ifdef TG_USE_MPI
static const char *thread_level_name(int level) {
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}
#endif

tg_status tg_runtime_init_mpi(tg_error *err) {
#ifdef TG_USE_MPI
    /* MPI can be initialised once per process, StarPU many times: we own MPI's lifetime. */
    int mpi_up, provided;
    MPI_Initialized(&mpi_up);
    if (!mpi_up) {
        /* MULTIPLE, not the SERIALIZED StarPU-MPI asks for itself: this thread's collectives
         * (tg_runtime_sum, ...) run while StarPU-MPI's progression thread may still be in
         * MPI_Test on sends that a barrier does not wait for (docs/DESIGN-NOTES.md) */
        MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
        atexit(mpi_finalize);
    } else {
        MPI_Query_thread(&provided); /* a library user initialised it */
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rt.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &rt.nranks);
    /* One rank runs plain StarPU, without StarPU-MPI's thread: any level will do. */
    if (rt.nranks == 1 || rt.thread_ok) return TG_OK;
    /* Test hook (tests/mpi_cli.sh): TG_TEST_SERIALIZED_RANK=R makes rank R take the level MPI
     * gave as MPI_THREAD_SERIALIZED. */
    const char *hook = getenv("TG_TEST_SERIALIZED_RANK");
    if (hook && atoi(hook) == rt.rank && provided > MPI_THREAD_SERIALIZED)
        provided = MPI_THREAD_SERIALIZED;
    /* No other thread exists yet, so any level allows this collective; every rank learns the
     * lowest level and the first rank given it, and all refuse alike. */
    int mine[2] = {provided, rt.rank}, low[2];
    MPI_Allreduce(mine, low, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (low[0] < MPI_THREAD_MULTIPLE)
        return tg_error_set(err, TG_ERR_RUNTIME,
                            "MPI gives rank %d only %s; tilegwas on several ranks needs "
                            "MPI_THREAD_MULTIPLE (its own MPI calls run beside StarPU-MPI's "
                            "thread): use an MPI library built with thread support",
                            low[1], thread_level_name(low[0]));
    rt.thread_ok = 1;
#else
    (void)err;
#endif
    return TG_OK;
}

int tg_runtime_differing_rank(uint64_t value) {
    int first = -1;
#ifdef TG_USE_MPI
    if (rt.nranks > 1) {
        uint64_t root = value;
        MPI_Bcast(&root, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        int mine = root == value ? rt.nranks : rt.rank;
        MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (first == rt.nranks) first = -1;
    }
#else
    (void)value;
#endif
    return first;
}

void tg_runtime_abort(int code) {
#ifdef TG_USE_MPI
    if (rt.nranks > 1) {
        /* mpiexec ends every rank as soon as one aborts and drops the output it has not
         * forwarded yet (MPICH's hydra lost both ranks' error lines in 7 of 120 runs on 2 busy
         * cores): what this rank printed gets a moment to reach it first */
        fflush(NULL);
        nanosleep(&(struct timespec){.tv_nsec = 500000000}, NULL);
        MPI_Abort(MPI_COMM_WORLD, code);
    }
#endif
    exit(code);
}

#ifdef TG_USE_MPI
/* The collectives below first wait for every task and transfer submitted (callers sum or gather
 * what tasks wrote). StarPU-MPI's progression thread may still be inside MPI after that wait,
 * testing sends it has handed to MPI: MPI_THREAD_MULTIPLE (tg_runtime_init_mpi) allows it. */
static void wait_tasks(void) {
    if (rt.started && rt.mpi) tg_runtime_wait_all();
}

/* Elements per MPI call: counts are int */
#define MPI_PIECE ((int64_t)1 << 28)

/* tg_runtime_describe_sums: every rank passes the same count to a collective */
static void count_sum(int64_t bytes) {
    rt.summed += (uint64_t)bytes;
    rt.nsums += bytes > 0;
}
#endif

void tg_runtime_gather(const void *mine, size_t bytes, void *all) {
#ifdef TG_USE_MPI
    if (rt.nranks > 1) {
        wait_tasks();
        MPI_Gather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        return;
    }
#endif
    memcpy(all, mine, bytes);
}

void tg_runtime_split(int64_t n, int rank, int64_t *first, int64_t *count) {
    /* ⌊r·n/R⌋: r < 2^31 and n < 2^31, so the product fits in 64 bits */
    *first = (int64_t)((uint64_t)rank * (uint64_t)n / (uint64_t)rt.nranks);
    *count = (int64_t)((uint64_t)(rank + 1) * (uint64_t)n / (uint64_t)rt.nranks) - *first;
}

tg_status tg_runtime_gather_rows(const void *mine, int64_t ldm, void *all, int64_t lda,
                                 int64_t n, int64_t k, size_t elem, tg_error *err) {
    int64_t first, count;
    tg_runtime_split(n, rt.rank, &first, &count);
    if (rt.rank == 0 && (mine != all || ldm != lda)) /* rank 0's rows start at row 0 */
        for (int64_t c = 0; c < k; c++)
            memmove((char *)all + (size_t)(c * lda) * elem, (const char *)mine +
                    (size_t)(c * ldm) * elem, (size_t)count * elem);
#ifdef TG_USE_MPI
    if (rt.nranks > 1) {
        wait_tasks();
        int *counts = NULL, *displs = NULL;
        if (rt.rank == 0) {
            counts = malloc((size_t)rt.nranks * sizeof *counts);
            displs = malloc((size_t)rt.nranks * sizeof *displs);
            if (!counts || !displs) {
                free(counts);
                free(displs);
                return tg_error_set(err, TG_ERR_NOMEM, "out of memory gathering rows on rank 0");
            }
            for (int r = 0; r < rt.nranks; r++) {
                int64_t f, c;
                tg_runtime_split(n, r, &f, &c);
                counts[r] = (int)c; /* n below 2^31 */
                displs[r] = (int)f;
            }
        }
        MPI_Datatype row;
        MPI_Type_contiguous((int)elem, MPI_BYTE, &row);
        MPI_Type_commit(&row);
        for (int64_t c = 0; c < k; c++) {
            /* rank 0 receives in place; the others send (and may pass no @p all) */
            if (rt.rank == 0)
                MPI_Gatherv(MPI_IN_PLACE, (int)count, row, (char *)all + (size_t)(c * lda) * elem,
                            counts, displs, row, 0, MPI_COMM_WORLD);
            else
                MPI_Gatherv((const char *)mine + (size_t)(c * ldm) * elem, (int)count, row, NULL,
                            NULL, NULL, row, 0, MPI_COMM_WORLD);
        }
        MPI_Type_free(&row);
        free(counts);
        free(displs);
    }
#else
    (void)err;
#endif
    return TG_OK;
}

void tg_runtime_sum(void *buf, int64_t count, tg_prec prec) {
#ifdef TG_USE_MPI
    if (rt.nranks > 1) {
        wait_tasks();
        count_sum(count * (int64_t)tg_prec_size(prec));
        /* reduced on rank 0, then broadcast: MPI_Allreduce does not promise every rank the same
         * rounding, and ranks deciding on these sums (CG's steps and stopping) must agree */
        MPI_Datatype t = prec == TG_FP32 ? MPI_FLOAT : MPI_DOUBLE;
        for (int64_t at = 0; at < count; at += MPI_PIECE) {
            int c = (int)(count - at < MPI_PIECE ? count - at : MPI_PIECE);
            char *p = (char *)buf + (size_t)at * tg_prec_size(prec);
            MPI_Reduce(rt.rank == 0 ? MPI_IN_PLACE : p, p, c, t, MPI_SUM, 0, MPI_COMM_WORLD);
            MPI_Bcast(p, c, t, 0, MPI_COMM_WORLD);
        }
    }
#else
    (void)buf, (void)count, (void)prec;
#endif
}

void tg_runtime_sum_int64(int64_t *buf, int64_t count) {
#ifdef TG_USE_MPI
    if (rt.nranks > 1) {
        wait_tasks();
        count_sum(count * (int64_t)sizeof *buf);
        for (int64_t at = 0; at < count; at += MPI_PIECE) {
            int c = (int)(count - at < MPI_PIECE ? count - at : MPI_PIECE);
            MPI_Allreduce(MPI_IN_PLACE, buf + at, c, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        }
    }
#else
    (void)buf, (void)count;
#endif
}

/* Where StarPU may bind its threads, from the CPUs this process may use (tg_cpus_get): StarPU
 * 1.3.10 binds over every core hwloc lists whatever the affinity mask (src/core/topology.c reads
 * the binding only under STARPU_WORKERS_GETBIND) and knows no cgroup quota, so under taskset it
 * put workers on cores the process was kept off. A place is the first CPU, in hwloc's order, of
 * each core with a CPU in the mask (one worker a core, as StarPU's own default), at most
 * tg_cpus.usable of them; @p pu gets their hwloc logical PU indexes, StarPU's bind ids. Returns
 * the count, 0 when hwloc cannot read the machine. */
static int cpu_places(const tg_cpus *c, unsigned *pu, int max) {
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo)) return 0;
    int n = 0;
    hwloc_bitmap_t mask = hwloc_bitmap_alloc();
    if (mask && hwloc_topology_load(topo) == 0) {
        for (int i = 0; i < c->n; i++) hwloc_bitmap_set(mask, (unsigned)c->id[i]);
        hwloc_obj_t last = NULL; /* the core of the last place: a core's PUs are consecutive */
        int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        for (int i = 0; i < npu && n < max && n < c->usable; i++) {
            hwloc_obj_t p = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
            hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, p);
            if (!hwloc_bitmap_isset(mask, p->os_index) || (core && core == last)) continue;
            last = core;
            pu[n++] = p->logical_index;
        }
    }
    hwloc_bitmap_free(mask);
    hwloc_topology_destroy(topo);
    return n;
}

/* Whether STARPU_WORKERS_CPUID is ours: set by tilegwas, not by the user (process-wide, since the
 * variable stays set across restarts). */
static int bind_ours;

/* Checks --ncpu against the places (cpu_places), makes the default worker count, and binds
 * StarPU's threads to the places. Besides the CPU workers StarPU binds, each to a place of its
 * own, the driver thread of each GPU (@p ngpu) and, with several ranks, StarPU-MPI's progression
 * thread: --ncpu may take the rest, never more (issue 20: --ncpu 64 on 2 cores ran 100-200x
 * slower). The default leaves, with GPUs, one more place to the thread that submits the tasks:
 * StarPU's idle workers keep polling, so a submitting thread sharing a core fed the GPU late
 * (KRR, N = 16,384, tiles of 2048, on the H100 node: 0.332 s with 15 CPU workers, 0.038 s with
 * 14, against 0.041 s on the GPU alone). Without GPUs it takes every place (the submitting
 * thread sleeps in its waits). The places go to StarPU through STARPU_WORKERS_CPUID rather than
 * starpu_conf.workers_bindid: StarPU 1.3.10 takes all STARPU_NMAXWORKERS entries of the
 * latter as places, where a GPU's driver thread looking for its preferred core could match a
 * repeated entry of a core already taken, and the variable's list counts exactly as long as it
 * is. A user's STARPU_WORKERS_CPUID, STARPU_WORKERS_COREID or STARPU_WORKERS_GETBIND is left
 * to StarPU. */
static tg_status cpu_workers(tg_runtime_opts *o, int ngpu, tg_error *err) {
    tg_cpus c;
    tg_cpus_get(&c);
    unsigned pu[STARPU_NMAXWORKERS];
    int places = cpu_places(&c, pu, STARPU_NMAXWORKERS);
    if (!places) return tg_error_set(err, TG_ERR_RUNTIME, "hwloc could not read this machine's "
                                     "CPU topology");
    /* without GPUs one worker at least, even on a rank's only core beside StarPU-MPI's thread */
    int others = ngpu + (rt.nranks > 1), most = places > others ? places - others : !ngpu;
    if (o->ncpu > most) {
        char set[1200], cores[32] = "", less[128] = "";
        tg_cpus_describe(&c, set, sizeof set);
        if (places < c.usable) snprintf(cores, sizeof cores, " on %d cores", places);
        if (others)
            snprintf(less, sizeof less, ", less a core for %s%s%s", ngpu == 1 ? "the GPU's driver "
                     "thread" : ngpu ? "each GPU's driver thread" : "", ngpu && others > ngpu ?
                     " and " : "", others > ngpu ? "StarPU-MPI's thread" : "");
        return tg_error_set(err, TG_ERR_ARG, "--ncpu %d: this process may use %d CPU%s%s (%s)%s; "
                            "use at most %d", o->ncpu, c.usable, c.usable == 1 ? "" : "s", cores,
                            set, less, most);
    }
    if (o->ncpu < 0) o->ncpu = !ngpu ? most : o->cpus_help_gpus && most > 0 ? most - 1 : 0;
    if (bind_ours || !(getenv("STARPU_WORKERS_CPUID") || getenv("STARPU_WORKERS_COREID") ||
                       getenv("STARPU_WORKERS_GETBIND"))) {
        char ids[STARPU_NMAXWORKERS * 8];
        size_t l = 0;
        for (int i = 0; i < places && l < sizeof ids; i++)
            l += (size_t)snprintf(ids + l, sizeof ids - l, "%s%u", i ? "," : "", pu[i]);
        setenv("STARPU_WORKERS_CPUID", ids, 1);
        bind_ours = 1;
    }
    return TG_OK;
}

/* heteroprio: one bucket per kind of kernel, in the order a GPU should take them (the panel
 * chain first); StarPU 1.3.10's heteroprio has no default for priorities other than 0. */
enum { B_PANEL, B_TRSM, B_SYRK, B_GEMM, B_MEMORY, B_DOT, B_EPI, B_GENO, NBUCKETS };
static const struct {
    const char *prefix;
    int bucket;
} buckets[] = {{"tg_potrf", B_PANEL},       {"tg_trtri", B_PANEL},    {"tg_half_scaled", B_PANEL},
               {"tg_trsm", B_TRSM},         {"tg_syrk", B_SYRK},      {"tg_gemm", B_GEMM},
               {"tg_convert", B_MEMORY},    {"tg_convt", B_MEMORY},   {"tg_tilestats", B_MEMORY},
               {"tg_kernelfn", B_MEMORY},   {"tg_gram", B_DOT},       {"tg_kernelgram", B_DOT},
               {"tg_xtx", B_DOT},           {"tg_epi", B_EPI},        {"tg_fivecodes", B_GENO}};

int tg_heteroprio_bucket(const char *kernel) {
    for (size_t i = 0; kernel && i < sizeof buckets / sizeof *buckets; i++)
        if (!strncmp(kernel, buckets[i].prefix, strlen(buckets[i].prefix))) return buckets[i].bucket;
    return B_GEMM;
}

int tg_runtime_heteroprio(void) { return rt.started && !strcmp(rt.sched, "heteroprio"); }

/* CPUs take first what they do relatively best (epistasis rounds, genotype products), the
 * panel chain last; beside GPUs, a CPU takes a task only when its bucket holds more than
 * slow-factor tasks per GPU, and never the memory-bound kernels, which stay on GPUs
 * (can_execute). Slow factors: round numbers below the GPU/CPU time ratios of the H100 node's
 * models (a 2048² tile update: 24 µs against about a second; an epistasis round of 65,536
 * samples: 8 ms against seconds; a genotype-product block: about 100). With 10 for rounds, the
 * cores took rounds of seconds while the GPU ran them in 8 ms. */
static void heteroprio_init(unsigned ctx) {
    static const int cpu_order[] = {B_EPI, B_GENO, B_DOT, B_GEMM, B_SYRK, B_TRSM, B_PANEL, B_MEMORY};
    static const float cpu_slow[NBUCKETS] = {[B_PANEL] = 1000, [B_TRSM] = 1000, [B_SYRK] = 1000,
                                             [B_GEMM] = 1000,  [B_DOT] = 1000,  [B_EPI] = 1000,
                                             [B_GENO] = 100};
    int gpus = starpu_cuda_worker_get_count() > 0, cpus = starpu_cpu_worker_get_count() > 0;
    if (gpus) {
        starpu_heteroprio_set_nb_prios(ctx, STARPU_CUDA_IDX, NBUCKETS);
        for (int b = 0; b < NBUCKETS; b++) {
            starpu_heteroprio_set_mapping(ctx, STARPU_CUDA_IDX, b, b);
            starpu_heteroprio_set_faster_arch(ctx, STARPU_CUDA_IDX, b);
        }
    }
    if (cpus) {
        int n = gpus ? NBUCKETS - 1 : NBUCKETS; /* beside GPUs, not B_MEMORY */
        starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_IDX, n);
        for (int i = 0; i < n; i++) {
            starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, i, cpu_order[i]);
            if (gpus)
                starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_IDX, cpu_order[i],
                                                       cpu_slow[cpu_order[i]]);
        }
    }
}

tg_runtime_opts tg_runtime_defaults(void) {
    tg_runtime_opts o = {.sched = NULL, .ncpu = -1, .ngpu = -1, .cpus_help_gpus = 1, .grid_p = 0,
                         .grid_q = 0};
    return o;
}

/* The squarest p × q = n grid, p ≥ q: tile rows, which the Cholesky's panels run down, over the
 * larger dimension (ScaLAPACK's and Chameleon's habit for a tall dimension). */
static void squarest_grid(int n, int *p, int *q) {
    int best = 1;
    for (int d = 1; d * d <= n; d++)
        if (n % d == 0) best = d;
    *q = best;
    *p = n / best;
}

void tg_runtime_grid(int *p, int *q) {
    if (rt.grid_p) {
        *p = rt.grid_p;
        *q = rt.grid_q;
    } else {
        squarest_grid(rt.nranks, p, q);
    }
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

#ifdef TG_USE_MPI
/* Whether STARPU_COMM_STATS is ours: set by tilegwas, not by the user (process-wide, since the
 * variable stays set across restarts). */
static int comm_stats_ours;

/* StarPU-MPI's count of the bytes it sends (tg_runtime_describe_comm) is on unless the user
 * set STARPU_COMM_STATS: one addition per transfer. Its start-up warning that this slows it
 * down is silenced with StarPU's notices (STARPU_SILENT). */
static void comm_stats_on(void) {
    if (!getenv("STARPU_COMM_STATS")) {
        setenv("STARPU_COMM_STATS", "1", 1);
        comm_stats_ours = 1;
    }
    rt.comm_stats = starpu_get_env_number("STARPU_COMM_STATS") > 0;
}

/* Writes to file descriptor 2 at once, except StarPU-MPI's table of transfers. */
static ssize_t without_comm_table(void *cookie, const char *buf, size_t len) {
    (void)cookie;
    if (memmem(buf, len, "[starpu_comm_stats]", 19)) return (ssize_t)len;
    for (size_t at = 0; at < len;) {
        ssize_t w = write(2, buf + at, len - at);
        if (w <= 0) break;
        at += (size_t)w;
    }
    return (ssize_t)len;
}

/* starpu_mpi_shutdown prints every rank's table of transfers on stderr when the counts are on;
 * where tilegwas turned them on, the log has them already (tg_runtime_describe_comm). While it
 * runs, stderr is an unbuffered stream that passes every other write (an error, an assertion)
 * to descriptor 2 as it comes: each fprintf is one write, and the table's lines each carry the
 * marker. StarPU's threads have ended when it returns (it stops StarPU too). */
static void mpi_shutdown(void) {
    FILE *real = stderr, *quiet = NULL;
    if (comm_stats_ours &&
        (quiet = fopencookie(NULL, "w", (cookie_io_functions_t){.write = without_comm_table}))) {
        setvbuf(quiet, NULL, _IONBF, 0);
        stderr = quiet;
    }
    starpu_mpi_shutdown();
    if (quiet) {
        stderr = real;
        fclose(quiet);
    }
}
#endif

tg_status tg_runtime_start(const tg_runtime_opts *opts, tg_error *err) {
    tg_runtime_opts o = opts ? *opts : tg_runtime_defaults();
    if (rt.started) return tg_error_set(err, TG_ERR_RUNTIME, "the runtime is already started");
    if (o.ncpu < -1) return tg_error_set(err, TG_ERR_ARG, "--ncpu %d: must be ≥ 0", o.ncpu);
    if (o.ngpu < -1) return tg_error_set(err, TG_ERR_ARG, "--ngpu %d: must be ≥ 0", o.ngpu);
    tg_status st = tg_runtime_init_mpi(err);
    if (st) return st;
    if ((o.grid_p || o.grid_q) &&
        (o.grid_p < 1 || o.grid_q < 1 || (int64_t)o.grid_p * o.grid_q != rt.nranks))
        return tg_error_set(err, TG_ERR_ARG, "--grid %dx%d: the grid must have as many places as "
                            "there are MPI ranks (%d)", o.grid_p, o.grid_q, rt.nranks);
    if (!tg_have_cuda() && o.ngpu > 0)
        return tg_error_set(err, TG_ERR_ARG,
                            "--ngpu %d: this build of tilegwas has no CUDA support (the StarPU it "
                            "was built with has no CUDA); use --ngpu 0, or rebuild after "
                            "scripts/setup-deps on a machine with nvcc",
                            o.ngpu);
    int ngpu_used = 0;
#ifdef TG_USE_CUDA
    /* refuse an impossible --ngpu before starting StarPU: StarPU 1.3.10 hangs in starpu_init on
     * the H100 when asked for more CUDA devices than exist */
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
    if (o.ngpu > ndev)
        return tg_error_set(err, TG_ERR_DEVICE, "--ngpu %d: only %d CUDA device%s found", o.ngpu,
                            ndev, ndev == 1 ? "" : "s");
    ngpu_used = o.ngpu < 0 ? ndev : o.ngpu;
#endif
    st = cpu_workers(&o, ngpu_used, err);
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
    conf.sched_policy_name = rt.sched;
    if (!strcmp(rt.sched, "heteroprio")) conf.sched_policy_init = heteroprio_init;
    conf.ncpus = o.ncpu;
    conf.ncuda = tg_have_cuda() ? o.ngpu : 0;
    conf.nopencl = 0;
    conf.nmic = 0;
    conf.nmpi_ms = 0;
#ifdef TG_USE_MPI
    rt.mpi = rt.nranks > 1;
    if (rt.mpi) comm_stats_on();
    int ret = rt.mpi ? starpu_mpi_init_conf(NULL, NULL, 0, MPI_COMM_WORLD, &conf) : starpu_init(&conf);
#else
    int ret = starpu_init(&conf);
#endif
    /* every CPU worker is a core already: a multithreaded BLAS call inside a task would
     * oversubscribe them */
    openblas_set_num_threads(1);
    if (ret == -ENODEV)
        return tg_error_set(err, TG_ERR_ARG, "no worker to run on (--ncpu %d --ngpu %d)", o.ncpu,
                            o.ngpu);
    if (ret) return tg_error_set(err, TG_ERR_RUNTIME, "StarPU failed to start: %s", strerror(-ret));
    rt.started = 1;
    rt.summed = 0;
    rt.nsums = 0;
    rt.grid_p = o.grid_p;
    rt.grid_q = o.grid_q;
#ifdef TG_USE_CUDA
    if (starpu_cuda_worker_get_count() > 0) {
        starpu_cublas_init();
        starpu_execute_on_each_worker(handles_create, NULL, STARPU_CUDA);
    }
#endif
    tg_probe_reset();
    tg_codelets_init();
    /* host loops pause the workers, whose idle loop spins (running tasks go on) */
    tg_parallel_hooks(starpu_pause, starpu_resume);
    return TG_OK;
}

void tg_runtime_stop(void) {
    if (!rt.started) return;
    tg_parallel_hooks(NULL, NULL);
    tg_runtime_wait_all();
#ifdef TG_USE_CUDA
    if (starpu_cuda_worker_get_count() > 0) {
        starpu_execute_on_each_worker(handles_destroy, NULL, STARPU_CUDA);
        starpu_cublas_shutdown();
    }
#endif
#ifdef TG_USE_MPI
    if (rt.mpi) mpi_shutdown();
    else
#endif
        starpu_shutdown();
    rt.started = 0;
    rt.mpi = 0;
    rt.comm_stats = 0;
    rt.next_tag = 0;
}

void tg_runtime_wait_all(void) {
#ifdef TG_USE_MPI
    if (rt.mpi) {
        starpu_mpi_wait_for_all(MPI_COMM_WORLD);
        return;
    }
#endif
    starpu_task_wait_for_all();
}

int tg_runtime_mpi(void) { return rt.mpi; }

int64_t tg_runtime_tags(int64_t count) {
    int64_t t = rt.next_tag;
    rt.next_tag += count;
    return t;
}

void tg_runtime_register(starpu_data_handle_t h, int owner) {
#ifdef TG_USE_MPI
    if (rt.mpi) starpu_mpi_data_register(h, tg_runtime_tags(1), owner);
#else
    (void)h, (void)owner;
#endif
}

void tg_runtime_flush(starpu_data_handle_t h) {
#ifdef TG_USE_MPI
    if (rt.mpi) starpu_mpi_cache_flush(MPI_COMM_WORLD, h);
#else
    (void)h;
#endif
}

int tg_runtime_describe_comm(char *buf, size_t len) {
#ifdef TG_USE_MPI
    if (!rt.comm_stats) return 0;
    tg_runtime_wait_all(); /* every transfer posted */
    size_t to[rt.nranks];  /* bytes this rank sent to each rank */
    uint64_t mine = 0, all[rt.nranks];
    starpu_mpi_comm_amounts_retrieve(to);
    for (int r = 0; r < rt.nranks; r++) mine += to[r];
    tg_runtime_gather(&mine, sizeof mine, all);
    if (rt.rank != 0) return 1;
    uint64_t sent = 0;
    for (int r = 0; r < rt.nranks; r++) sent += all[r];
    if (!sent) return 0;
    size_t l = (size_t)snprintf(buf, len, "bytes sent between ranks (StarPU-MPI): %llu in all "
                                "(%.1f MiB);", (unsigned long long)sent, (double)sent / 1048576);
    for (int r = 0; r < rt.nranks && l < len; r++)
        l += (size_t)snprintf(buf + l, len - l, " rank %d %llu%s", r, (unsigned long long)all[r],
                              r + 1 < rt.nranks ? "," : "");
    return 1;
#else
    (void)buf, (void)len;
    return 0;
#endif
}

int tg_runtime_describe_sums(char *buf, size_t len) {
    if (rt.nranks < 2) return 0;
    snprintf(buf, len, "bytes summed over the ranks (MPI reductions): %llu per rank (%.1f MiB) in "
             "%lld sum%s", (unsigned long long)rt.summed, (double)rt.summed / 1048576,
             (long long)rt.nsums, rt.nsums == 1 ? "" : "s");
    return 1;
}

void *tg_host_alloc(size_t bytes, tg_error *err) {
    void *p = NULL;
    if (starpu_malloc(&p, bytes ? bytes : 1)) {
        tg_error_set(err, TG_ERR_NOMEM, "out of memory: %zu bytes of host memory", bytes);
        return NULL;
    }
    return p;
}

void tg_host_free(void *p) {
    if (p) starpu_free(p);
}

int tg_runtime_rank(void) { return rt.rank; }
int tg_runtime_nranks(void) { return rt.nranks; }
int tg_runtime_ncpu(void) { return (int)starpu_cpu_worker_get_count(); }
int tg_runtime_ngpu(void) { return (int)starpu_cuda_worker_get_count(); }

static int ascending(const void *a, const void *b) {
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* " on CPUs 0-13": the CPUs (OS numbers) StarPU bound its workers of @p type to; "" for none */
static void bound_cpus(enum starpu_worker_archtype type, char *buf, size_t len) {
    int id[STARPU_NMAXWORKERS], n = 0;
    for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
        if (starpu_worker_get_type((int)w) != type) continue;
        hwloc_cpuset_t set = starpu_worker_get_hwloc_cpuset((int)w);
        int cpu = hwloc_bitmap_first(set);
        hwloc_bitmap_free(set);
        if (cpu >= 0) id[n++] = cpu;
    }
    qsort(id, (size_t)n, sizeof *id, ascending);
    char list[512];
    tg_cpus_ranges(id, n, list, sizeof list);
    snprintf(buf, len, n ? " on CPU%s %s" : "", n > 1 && id[n - 1] > id[0] ? "s" : "", list);
}

void tg_runtime_describe(char *buf, size_t len) {
    char on_cpus[600], gpu_cpus[600];
    bound_cpus(STARPU_CPU_WORKER, on_cpus, sizeof on_cpus);
    bound_cpus(STARPU_CUDA_WORKER, gpu_cpus, sizeof gpu_cpus);
    size_t l = (size_t)snprintf(buf, len, "StarPU %d.%d.%d, scheduler %s, %d rank%s, %d CPU "
                                "worker%s%s", STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION,
                                STARPU_RELEASE_VERSION, rt.sched, rt.nranks,
                                rt.nranks == 1 ? "" : "s", tg_runtime_ncpu(),
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
    if (l < len)
        l += (size_t)snprintf(buf + l, len - l, "; host loops on %d thread%s",
                              tg_parallel_threads(), tg_parallel_threads() == 1 ? "" : "s");
    if (l < len)
        l += (size_t)snprintf(buf + l, len - l, "; OpenBLAS kernels %s", tg_blas_core());
    const char *forced = getenv("OPENBLAS_CORETYPE"); /* the user's, or tg_blas_restart's */
    if (l < len && forced && *forced)
        l += (size_t)snprintf(buf + l, len - l, " (OPENBLAS_CORETYPE=%s)", forced);
    if (l < len) snprintf(buf + l, len - l, "; performance models: %s", rt.models);
}
