/* The codelet layer's machinery: the generic filler of codelets and their performance models,
 * the scheduling hints every family's table row carries (heteroprio buckets, memory-bound
 * kernels on the GPUs), and tg_codelets_init(), which builds every family's table. */
#include <stdio.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/distance.h"
#include "codelets/epistasis.h"
#include "codelets/fivecodes.h"
#include "codelets/gemm.h"
#include "codelets/grm.h"
#include "codelets/kernelfn.h"
#include "codelets/potrf.h"
#include "codelets/xtx.h"
#include "runtime/runtime.h"

/* CPUs take first what they do relatively best (epistasis rounds, genotype products), the
 * panel chain last; beside GPUs, a CPU takes a task only when its bucket holds more than
 * slow-factor tasks per GPU, and never the memory-bound kernels (no slow factor), which stay on
 * GPUs (gpus_if_any). Slow factors: round numbers below the GPU/CPU time ratios of the H100
 * node's models (a 2048² tile update: 24 µs against about a second; an epistasis round of
 * 65,536 samples: 8 ms against seconds; a genotype-product block: about 100). With 10 for
 * rounds, the cores took rounds of seconds while the GPU ran them in 8 ms. A codelet without a
 * bucket (a test's, a bench's) counts as a tile update. */
static const int cpu_order[TG_NBUCKETS] = {TG_B_EPI,  TG_B_GENO, TG_B_DOT,   TG_B_GEMM,
                                           TG_B_SYRK, TG_B_TRSM, TG_B_PANEL, TG_B_MEMORY};
static const float cpu_slow[TG_NBUCKETS] = {[TG_B_PANEL] = 1000, [TG_B_TRSM] = 1000,
                                            [TG_B_SYRK] = 1000,  [TG_B_GEMM] = 1000,
                                            [TG_B_DOT] = 1000,   [TG_B_EPI] = 1000,
                                            [TG_B_GENO] = 100};
const struct tg_sched_buckets tg_codelet_buckets = {TG_NBUCKETS, cpu_order, cpu_slow, TG_B_GEMM};

/* History entries keyed by the task's work (every codelet sets its flops), not by its data
 * sizes, which do not tell an epistasis round's or a partial tile's work apart. */
static uint32_t work_footprint(struct starpu_task *task) {
    uint64_t w = (uint64_t)tg_task_work(task, 0);
    return starpu_hash_crc32c_be_n(&w, sizeof w, 0);
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

void tg_codelet_fill(struct starpu_codelet *cl, struct starpu_perfmodel *model, const char *symbol,
                     starpu_cpu_func_t cpu, starpu_cuda_func_t cuda, int nbuffers,
                     const enum starpu_data_access_mode *modes, struct tg_codelet_hints hints) {
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
    if (hints.gpus_if_any) cl->can_execute = on_gpus_if_any;
    tg_sched_hint(cl, hints.bucket);
}

void tg_codelet_families_fill(const struct tg_codelet_family *fam, int nfam, const tg_prec *precs,
                              int nprec, struct starpu_perfmodel (*models)[TG_NPREC],
                              char (*symbols)[TG_NPREC][40]) {
    for (int f = 0; f < nfam; f++)
        for (int i = 0; i < (precs ? nprec : TG_NPREC); i++) {
            tg_prec p = precs ? precs[i] : (tg_prec)i;
            snprintf(symbols[f][p], sizeof symbols[f][p], fam[f].fmt, tg_prec_name(p));
            tg_codelet_fill(&fam[f].table[p], &models[f][p], symbols[f][p], fam[f].cpu,
                            fam[f].cuda, fam[f].nbuffers, fam[f].modes, fam[f].hints);
        }
}

void tg_codelets_init(void) {
    /* one call per family, declared in codelets/<family>.h */
    tg_convert_codelets_init();
    tg_epi_codelets_init();
    tg_potrf_codelets_init();
    tg_gemm_codelets_init();
    tg_fivecodes_init();
    tg_distance_codelets_init();
    tg_grm_codelets_init();
    tg_kernelfn_codelets_init();
    tg_xtx_codelets_init();
    tg_codelets_probes_register();
}
