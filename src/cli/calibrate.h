/* tilegwas calibrate: the sweeps of sizes and the workloads they run (src/cli/calibrate_sweep.c),
 * shared with the command (src/cli/calibrate.c). */
#ifndef TG_CLI_CALIBRATE_H
#define TG_CLI_CALIBRATE_H
#include "cli/cli.h"

enum { W_KRR = 1, W_RR = 2, W_EPI = 4, W_SNPMM = 8 };

typedef struct {
    int kind;           /* STARPU_CPU_WORKER or STARPU_CUDA_WORKER */
    const int *tiles;   /* tile edges, 0-terminated */
    const int *samples; /* epistasis sample counts, 0-terminated */
    int reps;
    const char *dir;    /* scratch directory for the random filesets */
} sweep;

/* The calibrated sizes of a worker kind (--quick: the small ones; @p ngpu: CPU workers of a node
 * with GPUs also take the GPUs' smallest tile), 0-terminated. */
const int *calibrate_tiles(int kind, int quick, int ngpu);
const int *calibrate_samples(int kind, int quick);
/* Geometric means of neighbours of @p v, rounded to a multiple of @p mult (sizes never run). */
void calibrate_between(const int *v, int *out, int mult);
/* Runs the @p workloads (W_*) at every size of @p s, s->reps times. */
tg_status calibrate_sweep(const sweep *s, int workloads, int quick, tg_log *log, tg_error *err);
#endif
