/* Tile precision conversion: the CPU function (the reference: tg_prec_load/tg_prec_store), the
 * codelet table indexed by (from, to), the tile statistics of the precision map, the generic
 * codelet filler and tg_codelets_init(). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/distance.h"
#include "codelets/epistasis.h"
#include "codelets/fivecodes.h"
#include "codelets/gemm.h"
#include "codelets/kernelfn.h"
#include "codelets/potrf.h"
#include "codelets/xtx.h"
#include "runtime/runtime.h"

struct starpu_codelet tg_cl_convert[TG_NPREC][TG_NPREC];
static struct starpu_perfmodel convert_models[TG_NPREC][TG_NPREC];
/* perfmodel symbols must outlive the models */
static char convert_symbols[TG_NPREC][TG_NPREC][40];
struct starpu_codelet tg_cl_tilestats[TG_NPREC];
static struct starpu_perfmodel stats_models[TG_NPREC];
static char stats_symbols[TG_NPREC][40];

/* History entries keyed by the task's work (every codelet sets its flops), not by its data
 * sizes, which do not tell an epistasis round's or a partial tile's work apart. */
static uint32_t work_footprint(struct starpu_task *task) {
    uint64_t w = (uint64_t)tg_task_work(task, 0);
    return starpu_hash_crc32c_be_n(&w, sizeof w, 0);
}

void tg_codelet_fill(struct starpu_codelet *cl, struct starpu_perfmodel *model, const char *symbol,
                     starpu_cpu_func_t cpu, starpu_cuda_func_t cuda, int nbuffers,
                     const enum starpu_data_access_mode *modes) {
    memset(model, 0, sizeof *model);
    /* time = α·work^β fitted on every measurement, so tile edges, SNP chunks, blocks and
     * column counts that never ran are still predicted (within the calibrated range, which
     * calibrate widens to every size). Not StarPU 1.3's non-linear a·work^b + c: its fit keeps
     * only the samples more than twice c (c near the lower third of the times), so a kernel
     * whose times vary little gets no fit at all, and StarPU then calibrates it again on every
     * worker kind at the next run (seen with epistasis rounds and potrf). */
    model->type = STARPU_REGRESSION_BASED;
    model->size_base = tg_task_work;
    model->footprint = work_footprint;
    model->symbol = symbol;
    memset(cl, 0, sizeof *cl);
    cl->cpu_funcs[0] = cpu;
#ifdef TG_USE_CUDA
    cl->cuda_funcs[0] = cuda;
    cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
#else
    (void)cuda;
#endif
    cl->nbuffers = nbuffers;
    for (int i = 0; i < nbuffers; i++) cl->modes[i] = modes[i];
    cl->model = model;
    cl->name = symbol;
}

void tg_codelet_families_fill(const struct tg_codelet_family *fam, int nfam, const tg_prec *precs,
                              int nprec, struct starpu_perfmodel (*models)[TG_NPREC],
                              char (*symbols)[TG_NPREC][40]) {
    for (int f = 0; f < nfam; f++)
        for (int i = 0; i < (precs ? nprec : TG_NPREC); i++) {
            tg_prec p = precs ? precs[i] : (tg_prec)i;
            snprintf(symbols[f][p], sizeof symbols[f][p], fam[f].fmt, tg_prec_name(p));
            tg_codelet_fill(&fam[f].table[p], &models[f][p], symbols[f][p], fam[f].cpu,
                            fam[f].cuda, fam[f].nbuffers, fam[f].modes);
        }
}

/* Memory-bound tile kernels cost less than moving their tile: on a node with GPUs they run on
 * the GPUs, where the tiles are made. At N = 32,768 on the H100 the KRR map phase took 1.08 s
 * instead of 0.014 s when dmda sent tile statistics and conversions to the 15 cores: StarPU's
 * transfer model does not count the pinned host buffer each moved tile needs. A task sent to a
 * chosen worker still runs there (tests compare the CPU and CUDA paths). */
static int on_gpus_if_any(unsigned workerid, struct starpu_task *task, unsigned nimpl) {
    (void)nimpl;
    return task->execute_on_a_specific_worker || starpu_cuda_worker_get_count() == 0 ||
           starpu_worker_get_type((int)workerid) == STARPU_CUDA_WORKER;
}

void tg_codelets_init(void) {
    static const enum starpu_data_access_mode modes[2] = {STARPU_R, STARPU_W};
    for (int a = 0; a < TG_NPREC; a++)
        for (int b = 0; b < TG_NPREC; b++) {
            snprintf(convert_symbols[a][b], sizeof convert_symbols[a][b], "tg_convert_%s_%s",
                     tg_prec_name((tg_prec)a), tg_prec_name((tg_prec)b));
            tg_codelet_fill(&tg_cl_convert[a][b], &convert_models[a][b], convert_symbols[a][b],
                            tg_convert_cpu, TG_CUDA_FN(tg_convert_cuda), 2, modes);
        }
    static const struct tg_codelet_family stats = {"tg_tilestats_%s", tg_cl_tilestats,
                                                   tg_tilestats_cpu, TG_CUDA_FN(tg_tilestats_cuda),
                                                   2, modes};
    tg_codelet_families_fill(&stats, 1, NULL, 0, &stats_models, &stats_symbols);
    /* workload codelet families (one call each, declared in codelets/<family>.h) */
    tg_epi_codelets_init();
    tg_potrf_codelets_init();
    tg_gemm_codelets_init();
    tg_fivecodes_init();
    tg_distance_codelets_init();
    tg_kernelfn_codelets_init();
    tg_xtx_codelets_init();
    tg_cl_half_scaled.can_execute = on_gpus_if_any;
    for (int a = 0; a < TG_NPREC; a++) {
        tg_cl_tilestats[a].can_execute = on_gpus_if_any;
        tg_cl_kernelfn[a].can_execute = on_gpus_if_any;
        tg_cl_convt[a].can_execute = on_gpus_if_any;
        for (int b = 0; b < TG_NPREC; b++) tg_cl_convert[a][b].can_execute = on_gpus_if_any;
    }
    tg_codelets_probes_register();
}

void tg_convert_cpu(void *buffers[], void *cl_arg) {
    struct tg_convert_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const void *src = (const void *)STARPU_MATRIX_GET_PTR(buffers[0]);
    void *dst = (void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    size_t rows = STARPU_MATRIX_GET_NX(buffers[0]), cols = STARPU_MATRIX_GET_NY(buffers[0]);
    size_t lds = STARPU_MATRIX_GET_LD(buffers[0]), ldd = STARPU_MATRIX_GET_LD(buffers[1]);
    for (size_t j = 0; j < cols; j++)
        for (size_t i = 0; i < rows; i++)
            tg_prec_store(a.to, dst, a.transpose ? j + i * ldd : i + j * ldd,
                          tg_prec_load(a.from, src, i + j * lds) * a.scale);
}

int tg_insert_convert(starpu_data_handle_t src, starpu_data_handle_t dst, tg_prec from, tg_prec to,
                      double scale, int priority) {
    struct tg_convert_arg a = {from, to, scale, 0};
    size_t n = starpu_matrix_get_nx(src) * starpu_matrix_get_ny(src);
    return TG_INSERT(&tg_cl_convert[from][to], STARPU_R, src, STARPU_W, dst, STARPU_VALUE, &a,
                     sizeof a, STARPU_PRIORITY, priority, STARPU_FLOPS, (double)n, 0);
}

void tg_tilestats_cpu(void *buffers[], void *cl_arg) {
    struct tg_tilestats_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const void *t = (const void *)STARPU_MATRIX_GET_PTR(buffers[0]);
    size_t rows = STARPU_MATRIX_GET_NX(buffers[0]), cols = STARPU_MATRIX_GET_NY(buffers[0]),
           ld = STARPU_MATRIX_GET_LD(buffers[0]);
    double sum = 0, mx = 0, dm = 0;
    for (size_t j = 0; j < cols; j++)
        for (size_t i = a.diag ? j : 0; i < rows; i++) {
            double v = tg_prec_load(a.prec, t, i + j * ld) * a.inv_scale;
            sum += (a.diag && i != j ? 2 : 1) * v * v;
            if (fabs(v) > mx) mx = fabs(v);
            if (a.diag && i == j && v > dm) dm = v;
        }
    double *out = (double *)STARPU_VARIABLE_GET_PTR(buffers[1]);
    out[0] = sum;
    out[1] = mx;
    out[2] = dm;
}

int tg_insert_tilestats(starpu_data_handle_t tile, starpu_data_handle_t out, tg_prec p, int diag,
                        double inv_scale, int priority) {
    struct tg_tilestats_arg a = {p, diag, inv_scale};
    size_t n = starpu_matrix_get_nx(tile) * starpu_matrix_get_ny(tile);
    return TG_INSERT(&tg_cl_tilestats[p], STARPU_R, tile, STARPU_W, out, STARPU_VALUE, &a, sizeof a,
                     STARPU_PRIORITY, priority, STARPU_FLOPS, 3.0 * (double)n, 0);
}
