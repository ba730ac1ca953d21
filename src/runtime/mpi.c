/* MPI: its initialisation (we own its lifetime), StarPU-MPI's start and stop, the collectives
 * the algorithms call (gathers, sums), the split of rows over the ranks, data tags and owners,
 * the process grid, and the counts of what was sent and summed. Without MPI, or with one rank,
 * every call is a copy or nothing. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/internal.h"

static struct {
    int mpi; /* StarPU-MPI started (more than one rank) */
    int comm_stats; /* StarPU-MPI counts the bytes it sends (STARPU_COMM_STATS) */
    int rank, nranks;
    int thread_ok; /* every rank has MPI_THREAD_MULTIPLE (tg_runtime_init_mpi) */
    int grid_p, grid_q; /* the started runtime's; 0, 0: the squarest */
    int64_t next_tag;
    uint64_t summed; /* bytes this rank passed to tg_runtime_sum* since the runtime started */
    int64_t nsums;
} rt = {.nranks = 1};

#ifdef TG_USE_MPI
static void mpi_finalize(void) {
    int done;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}
#endif

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

const char *tg_runtime_launcher_rank(void) {
    static const char *const vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i])) return getenv(vars[i]);
    return NULL;
}

tg_status tg_runtime_init_mpi(tg_error *err) {
#ifdef TG_USE_MPI
    /* MPI can be initialised once per process, StarPU many times: we own MPI's lifetime. */
    int mpi_up, provided;
    MPI_Initialized(&mpi_up);
    /* A process that no launcher started is one rank: MPI's singleton start (its process
     * manager, UCX's transports, hwloc's PCI scan) would only lengthen every short command. */
    if (!mpi_up && !tg_runtime_launcher_rank()) return TG_OK;
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

int tg_runtime_differing_rank(const uint64_t *mine, int n, uint64_t *all) {
    memcpy(all, mine, (size_t)n * sizeof *mine);
#ifdef TG_USE_MPI
    if (rt.nranks > 1) {
        /* every rank gets every rank's values, so that each can tell which differ and how */
        MPI_Allgather(mine, n, MPI_UINT64_T, all, n, MPI_UINT64_T, MPI_COMM_WORLD);
        for (int r = 1; r < rt.nranks; r++)
            if (memcmp(all + (size_t)r * (size_t)n, all, (size_t)n * sizeof *all)) return r;
    }
#endif
    return -1;
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
    if (rt.mpi) tg_runtime_wait_all(); /* set only while StarPU-MPI runs */
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
            counts = tg_malloc_n(rt.nranks, 1, sizeof *counts, NULL);
            displs = tg_malloc_n(rt.nranks, 1, sizeof *displs, NULL);
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

int tg_mpi_starpu_init(struct starpu_conf *conf) {
    rt.mpi = rt.nranks > 1;
    if (rt.mpi) comm_stats_on();
    int ret = rt.mpi ? starpu_mpi_init_conf(NULL, NULL, 0, MPI_COMM_WORLD, conf) : starpu_init(conf);
    if (ret) rt.mpi = rt.comm_stats = 0;
    return ret;
}

/* starpu_mpi_shutdown prints every rank's table of transfers on stderr when the counts are on;
 * where tilegwas turned them on, the log has them already (tg_runtime_describe_comm): the filter
 * drops the table's lines, each of which carries the marker. StarPU's threads have ended when
 * it returns (it stops StarPU too). */
static void mpi_shutdown(void) {
    if (comm_stats_ours) tg_stderr_filtered("[starpu_comm_stats]", starpu_mpi_shutdown);
    else starpu_mpi_shutdown();
}
#else
int tg_mpi_starpu_init(struct starpu_conf *conf) { return starpu_init(conf); }
#endif

void tg_mpi_starpu_shutdown(void) {
#ifdef TG_USE_MPI
    if (rt.mpi) mpi_shutdown();
    else
#endif
        starpu_shutdown();
    rt.mpi = 0;
    rt.comm_stats = 0;
    rt.next_tag = 0;
}

void tg_mpi_started(int grid_p, int grid_q) {
    rt.summed = 0;
    rt.nsums = 0;
    rt.grid_p = grid_p;
    rt.grid_q = grid_q;
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

int tg_runtime_rank(void) { return rt.rank; }
int tg_runtime_nranks(void) { return rt.nranks; }

void tg_grid_squarest(int n, int *p, int *q) {
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
        tg_grid_squarest(rt.nranks, p, q);
    }
}
