/* The runtime's sums right after StarPU-MPI transfers, on any number of MPI ranks
 * (tests/mpi_matrix.sh runs this on 2 ranks; `make check` runs it on one):
 *  - with several ranks, MPI runs MPI_THREAD_MULTIPLE;
 *  - MPI is started only where a launcher (mpiexec, srun) started the process;
 *  - ROUNDS times, rank 0 sends a 512 KiB buffer (a 256 × 256 FP64 tile: a rendezvous send
 *    under UCX) to every other rank, which receives it, then every rank sums an integer and a
 *    double over the ranks (tg_runtime_sum_int64, tg_runtime_sum) and gets the right totals.
 * StarPU-MPI's progression thread may still be in MPI_Test on rank 0's sends when the sums
 * start (docs/DESIGN-NOTES.md): under MPI_THREAD_SERIALIZED UCX aborted this program on 2
 * ranks in 20 runs of 20 (2 cores), in under a second; it takes 2 s with MULTIPLE.
 * Ranks started unbound on one node (mpiexec's default) bind their CPU workers to distinct
 * cores while there are enough cores for one each (tg_node_query), and their host loops share
 * the node's CPUs instead of each running a thread on every one. */
#include <stdlib.h>
#include <unistd.h>

#include <hwloc.h>

#include "base/parallel.h"
#include "runtime/runtime.h"
#include "tap.h"

enum { ROUNDS = 24, LEN = 256 * 256 };

int main(void) {
    tg_error err;
    (void)tg_parallel_threads(); /* the pool starts first, as in the commands that read input */
    tg_runtime_opts o = tg_runtime_defaults();
    o.ncpu = 1;
    if (tg_runtime_start(&o, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    const int rank = tg_runtime_rank(), nr = tg_runtime_nranks();
    tap_plan(6);
    diag("rank %d of %d", rank, nr);
#ifdef TG_USE_MPI
    int up, level = -1;
    MPI_Initialized(&up);
    if (up) MPI_Query_thread(&level);
    ok(nr == 1 || level == MPI_THREAD_MULTIPLE, "MPI runs MPI_THREAD_MULTIPLE (level %d)", level);
    const char *launcher = getenv("PMI_RANK") ? "PMI_RANK" : getenv("PMIX_RANK") ? "PMIX_RANK"
                           : getenv("OMPI_COMM_WORLD_RANK") ? "OMPI_COMM_WORLD_RANK" : NULL;
    ok(up == (launcher != NULL), "MPI %s, the launcher's %s", up ? "started" : "not started",
       launcher ? launcher : "rank not in the environment");
#else
    ok(1, "no MPI in this build");
    ok(nr == 1, "no MPI in this build: one rank");
#endif
    double *buf = calloc(LEN, sizeof *buf);
    if (!buf) {
        printf("Bail out! out of memory\n");
        return 1;
    }
    buf[0] = 1;
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)buf, LEN, sizeof *buf);
    int bad_int = 0, bad_dbl = 0, bad_recv = 0;
    for (int r = 0; r < ROUNDS; r++) {
#ifdef TG_USE_MPI
        if (nr > 1 && rank == 0)
            for (int to = 1; to < nr; to++)
                starpu_mpi_isend_detached(h, to, r, MPI_COMM_WORLD, NULL, NULL);
        else if (nr > 1) {
            buf[0] = 0;
            MPI_Status st;
            starpu_mpi_recv(h, 0, r, MPI_COMM_WORLD, &st);
            bad_recv += buf[0] != 1;
        }
#endif
        int64_t i = rank + r;
        double d = 0.5 * rank + r;
        tg_runtime_sum_int64(&i, 1);
        tg_runtime_sum(&d, 1, TG_FP64);
        bad_int += i != (int64_t)nr * (nr - 1) / 2 + (int64_t)nr * r;
        bad_dbl += d != 0.25 * nr * (nr - 1) + (double)nr * r;
    }
    tg_runtime_wait_all();
    starpu_data_unregister(h);
    free(buf);
    ok(!bad_recv, "%d buffers received from rank 0, %d wrong", rank ? ROUNDS : 0, bad_recv);
    ok(!bad_int && !bad_dbl, "%d integer and %d double sums right after the sends, %d and %d wrong",
       ROUNDS, ROUNDS, bad_int, bad_dbl);
#ifdef TG_USE_MPI
    /* each rank's first CPU worker's core, against the node's cores */
    int mine = starpu_worker_get_bindid(starpu_worker_get_by_type(STARPU_CPU_WORKER, 0)), cores = 0;
    hwloc_topology_t topo;
    if (!hwloc_topology_init(&topo) && !hwloc_topology_load(topo))
        cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    hwloc_topology_destroy(topo);
    int *all = calloc((size_t)nr, sizeof *all), same = 0;
    all[0] = mine;
    if (nr > 1) MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int a = 0; a < nr; a++)
        for (int b = a + 1; b < nr; b++) same += all[a] == all[b];
    ok(nr > cores || !same, "%d ranks on %d cores: rank %d's CPU worker on place %d, %d pairs of "
       "ranks on one place", nr, cores, rank, mine, same);
    free(all);
#else
    ok(1, "no MPI in this build");
#endif
    int threads = tg_parallel_threads(), sum = threads, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
#ifdef TG_USE_MPI
    if (nr > 1) MPI_Allreduce(&threads, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
#endif
    ok(sum <= (nr > ncpu ? nr : ncpu), "%d ranks on %d CPUs: %d host-loop threads in all (rank "
       "%d: %d)", nr, ncpu, sum, rank, threads);
    tg_runtime_stop();
    return tap_done();
}
