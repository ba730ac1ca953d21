/* Lower bounds on the makespan of a recorded task graph (bench/sched, tests/test_sched,
 * docs/SCHEDULING.md): the area bound of its tasks on two kinds of workers and the critical path
 * of its dependencies. Built into those programs, not into the library. */
#ifndef TG_BENCH_BOUND_H
#define TG_BENCH_BOUND_H
#include <stddef.h>

#include "runtime/runtime.h"

/** The area bound: the least T such that @p ntypes task types, count[t] tasks of type t taking
 * time[t][k] seconds on a worker of kind k (INFINITY: no implementation there), fit on
 * nworkers[0] workers of kind 0 and nworkers[1] of kind 1 within T each, tasks being divisible
 * (the linear relaxation, solved exactly). INFINITY when some type can run on no worker. */
double tg_area_bound(int ntypes, const double *count, const double (*time)[2],
                     const int nworkers[2]);

/** The longest path through the dependencies of @p n records (tg_record_stop's, in id order;
 * predecessors not among them are ignored), record i taking cost[i] seconds. NAN when out of
 * memory. */
double tg_critical_path(const tg_task_record *r, size_t n, const double *cost);
#endif
