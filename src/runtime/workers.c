/* Worker places: where StarPU may bind its threads, the default CPU worker count, and which
 * CPUs the started workers were bound to. */
#include <stdio.h>
#include <stdlib.h>

#include <hwloc.h>

#include "base/cpus.h"
#include "base/hash.h"
#include "base/parallel.h"
#include "runtime/internal.h"

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
tg_status tg_workers_place(tg_runtime_opts *o, const tg_node *node, int ngpu, tg_error *err) {
    tg_cpus c;
    tg_cpus_get(&c);
    unsigned pu[STARPU_NMAXWORKERS];
    int places = cpu_places(&c, pu, STARPU_NMAXWORKERS);
    if (!places) return tg_error_set(err, TG_ERR_RUNTIME, "hwloc could not read this machine's "
                                     "CPU topology");
    /* ranks of one node that the launcher did not bind (MPICH's default) would each bind a
     * worker to every core: each takes its own consecutive share of the places instead (one
     * place, shared, when there are more ranks than places) */
    if (node->nranks > 1 && node->same_cpus) {
        int first = (int)((int64_t)places * node->index / node->nranks);
        int count = (int)((int64_t)places * (node->index + 1) / node->nranks) - first;
        if (count < 1) first = node->index % places, count = 1;
        for (int i = 0; i < count; i++) pu[i] = pu[first + i];
        c.usable = places = count;
    }
    /* the host loops too: 4 ranks on 64 cores ran 4 × 64 threads */
    tg_parallel_cap(node->nranks > 1 && node->same_cpus ? places : 0);
    /* without GPUs one worker at least, even on a rank's only core beside StarPU-MPI's thread */
    int others = ngpu + (tg_runtime_nranks() > 1), most = places > others ? places - others : !ngpu;
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

uint64_t tg_workers_cpus_signature(void) {
    tg_cpus c;
    tg_cpus_get(&c);
    return tg_fnv1a(tg_fnv1a(TG_FNV1A_INIT, c.id, (size_t)c.n * sizeof *c.id), &c.usable,
                    sizeof c.usable);
}

static int ascending(const void *a, const void *b) {
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* OS numbers, sorted and written as ranges (tg_cpus_ranges) */
void tg_workers_bound(enum starpu_worker_archtype type, char *buf, size_t len) {
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
