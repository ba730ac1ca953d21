/* Internal view of tg_calibrate (src/algo/calibrate.c): the sizes calibrated per worker kind
 * and the sweep of workloads run at each (src/algo/calibrate_sweep.c). */
#ifndef TG_ALGO_CALIBRATE_H
#define TG_ALGO_CALIBRATE_H
#include "runtime/runtime.h"

typedef struct {
    tg_worker_kind kind;
    const int *tiles;   /* tile edges, 0-terminated */
    const int *samples; /* epistasis sample counts, 0-terminated */
    int reps;
    const char *dir;    /* scratch directory for the random filesets */
} tg_calibrate_pass;

/* The calibrated sizes of a worker kind (@p quick: the small ones; @p ngpu: CPU workers of a
 * node with GPUs also take the GPUs' smallest tile), 0-terminated. */
const int *tg_calibrate_tiles(tg_worker_kind kind, int quick, int ngpu);
const int *tg_calibrate_samples(tg_worker_kind kind, int quick);
/* Geometric means of neighbours of @p v, rounded to a multiple of @p mult (sizes never run). */
void tg_calibrate_between(const int *v, int *out, int mult);
/* One line of the run's account to @p o's log_line (nothing without one); @p detail: for the
 * log file only. */
void tg_calibrate_log(const tg_calibrate_opts *o, int detail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Runs the workloads of @p o (TG_CALIBRATE_*) at every size of @p s, s->reps times, logging
 * each size's time. */
tg_status tg_calibrate_sweep(const tg_calibrate_pass *s, const tg_calibrate_opts *o,
                             tg_error *err);
#endif
