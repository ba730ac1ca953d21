/* The ranks that share a node: how many, this rank's place among them, and whether they see the
 * same CPUs and GPUs (then the launcher split nothing, and tilegwas splits them: see
 * tg_workers_place and tg_cuda_rank_devices). */
#include "runtime/internal.h"

tg_node tg_node_query(uint64_t cpus, uint64_t gpus) {
    tg_node node = {.nranks = 1, .index = 0, .same_cpus = 1, .same_gpus = 1};
#ifdef TG_USE_MPI
    if (tg_runtime_nranks() == 1) return node;
    static MPI_Comm comm = MPI_COMM_NULL; /* the same ranks share a node for the process's life */
    if (comm == MPI_COMM_NULL)
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, tg_runtime_rank(), MPI_INFO_NULL,
                            &comm);
    MPI_Comm_size(comm, &node.nranks);
    MPI_Comm_rank(comm, &node.index);
    uint64_t mine[2] = {cpus, gpus}, first[2] = {cpus, gpus};
    MPI_Bcast(first, 2, MPI_UINT64_T, 0, comm);
    int differ[2] = {mine[0] != first[0], mine[1] != first[1]}, any[2];
    MPI_Allreduce(differ, any, 2, MPI_INT, MPI_MAX, comm);
    node.same_cpus = !any[0];
    node.same_gpus = !any[1];
#else
    (void)cpus;
    (void)gpus;
#endif
    return node;
}
