/* The probes of the codelet families (src/runtime/probe.c): for each codelet that CPUs and GPUs
 * can both run, a task on scratch data shaped like the codelet's first task in the workload
 * (on GPUs that shape; on cores a smaller one growing with a level, a core taking seconds to
 * minutes for a GPU's task), so that its time per unit of work is the one the workload will see;
 * the kernels of the same precision that the workloads submit beside it borrow its rate. Kernels
 * that only GPUs run when a node has any (conversions, tile statistics, kernel functions) need
 * none: a single kind of worker runs them. */
#include <stdlib.h>
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

/* A probe task's data: host buffers registered with StarPU, released together. */
struct scratch {
    int n;
    starpu_data_handle_t h[STARPU_NMAXBUFS];
    void *p[STARPU_NMAXBUFS];
};

static void scratch_release(void *arg) {
    struct scratch *s = arg;
    for (int i = 0; i < s->n; i++) {
        starpu_data_unregister(s->h[i]);
        free(s->p[i]);
    }
    free(s);
}

/* A zeroed host matrix (rows × cols, column-major) or vector (cols 0) in @p s; NULL without
 * memory. */
static starpu_data_handle_t scratch_add(struct scratch *s, size_t rows, size_t cols, size_t elem) {
    void *p = tg_calloc_n((int64_t)rows, (int64_t)(cols ? cols : 1), elem, NULL);
    if (!p) return NULL;
    starpu_data_handle_t h;
    if (cols)
        starpu_matrix_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)p, (uint32_t)rows,
                                    (uint32_t)rows, (uint32_t)cols, elem);
    else starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)p, (uint32_t)rows, elem);
    s->h[s->n] = h;
    s->p[s->n++] = p;
    return h;
}

static int finish(struct scratch *s, struct starpu_task *t, tg_probe_task *out) {
    if (!t) {
        scratch_release(s);
        return -1;
    }
    *out = (tg_probe_task){t, scratch_release, s};
    return 0;
}

/* On a GPU, the first task itself on its own inputs (@p like's buffers read, those it writes
 * replaced by zeroed host buffers of their shape): the transfers and the first call of its
 * kernels are then the run's own, moved ahead, where a probe on scratch data of that size paid
 * its own (on the H100 node the epistasis probe's 200 MB of random planes cost 0.12 s, the GRM's
 * borrowed FP64 GEMM 0.27 s, of first runs of 1.5–1.8 s). One rank only: under MPI a task's
 * inputs may be another rank's until it runs. Not while the host holds handles (an epistasis
 * search's planes before they are built): the probe would wait for them inside the submission
 * that comes before their release. Every probe's first step (tg_probe_set_first):
 * 0, or 1 when the task does not lend itself (the codelet's probe makes scratch data), or −1
 * without memory. */
static int on_own_inputs(struct starpu_codelet *cl, int level, enum starpu_worker_archtype type,
                         const struct starpu_task *like, tg_probe_task *out) {
    const unsigned nbuf = like ? STARPU_TASK_GET_NBUFFERS(like) : 0;
    if (type != STARPU_CUDA_WORKER || !like || tg_runtime_nranks() > 1 || level > 0 ||
        nbuf > STARPU_NMAXBUFS || like->dyn_handles || tg_handles_held())
        return 1;
    struct scratch *s = calloc(1, sizeof *s);
    if (!s) return -1;
    struct starpu_data_descr d[STARPU_NMAXBUFS];
    for (unsigned i = 0; i < nbuf; i++) {
        starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(like, i);
        enum starpu_data_access_mode m = STARPU_TASK_GET_MODE(like, i);
        d[i] = (struct starpu_data_descr){h, m};
        if (!(m & STARPU_W)) continue;
        int id = starpu_data_get_interface_id(h);
        d[i].handle = id == STARPU_MATRIX_INTERFACE_ID
                          ? scratch_add(s, starpu_matrix_get_nx(h), starpu_matrix_get_ny(h),
                                        starpu_matrix_get_elemsize(h))
                      : id == STARPU_VECTOR_INTERFACE_ID
                          ? scratch_add(s, starpu_vector_get_nx(h), 0,
                                        starpu_vector_get_elemsize(h))
                          : NULL;
        if (!d[i].handle) {
            scratch_release(s);
            return id == STARPU_MATRIX_INTERFACE_ID || id == STARPU_VECTOR_INTERFACE_ID ? -1 : 1;
        }
    }
    void *arg = like->cl_arg_size ? malloc(like->cl_arg_size) : NULL;
    if (like->cl_arg_size && !arg) {
        scratch_release(s);
        return -1;
    }
    if (arg) memcpy(arg, like->cl_arg, like->cl_arg_size);
    struct starpu_task *t = starpu_task_create();
    t->cl = cl;
    t->nbuffers = (int)nbuf;
    for (unsigned i = 0; i < nbuf; i++) t->handles[i] = d[i].handle, t->modes[i] = d[i].mode;
    t->cl_arg = arg;
    t->cl_arg_size = like->cl_arg_size;
    t->cl_arg_free = 1;
    t->flops = like->flops;
    return finish(s, t, out);
}

/* Random bits (xorshift64): planes whose AND-popcounts look like genotypes. */
static void fill_random(uint64_t *w, size_t n, uint64_t seed) {
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        w[i] = x;
    }
}

/* An epistasis round over `order` distinct blocks (the search's usual round) of complete data,
 * K2, top 10, with the samples of the search's first round (@p like) or 262,144: on GPUs that
 * round's block size, one level; on cores blocks of 4·2^level SNPs, since a round would take
 * them minutes. The sample count matters more than anything: at a few thousand samples a GPU
 * round is all per-combination work and its time per unit was 20 times a search's. */
static int probe_round(struct starpu_codelet *cl, int level, enum starpu_worker_archtype type,
                       const struct starpu_task *like, tg_probe_task *out) {
    const int k = (int)(cl - tg_cl_epi_round) + 2, gpu = type == STARPU_CUDA_WORKER;
    static const int gpu_block[] = {1024, 256, 64};
    const struct tg_epi_round_arg *l = like ? like->cl_arg : NULL;
    const int B = gpu ? (l ? l->block : gpu_block[k - 2]) : 4 << level;
    if (level > (gpu ? 0 : 4)) return 1;
    struct scratch *s = calloc(1, sizeof *s);
    if (!s) return -1;
    /* every SNP of the k blocks may come first (first_end: without it no combination counts,
     * and the probe timed an empty round) */
    struct tg_epi_round_arg a = {.order = k, .block = B, .complete = 1, .score = TG_EPI_K2,
                                 .topk = 10, .search = -2, .first_end = (int64_t)k * B};
    for (int c = 0; c < 2; c++) {
        a.n[c] = l ? l->n[c] : 131072;
        a.words[c] = 4 * ((a.n[c] + 255) / 256);
    }
    const int64_t n = a.n[0] + a.n[1];
    size_t words = (size_t)3 * B * (size_t)(a.words[0] + a.words[1]);
    starpu_data_handle_t blk = scratch_add(s, words, 0, sizeof(uint64_t));
    starpu_data_handle_t tab = scratch_add(s, (size_t)n + 2, 0, sizeof(double));
    starpu_data_handle_t res = scratch_add(s, tg_epi_result_size(a.topk), 0, 1);
    struct tg_epi_round_arg *arg = malloc(sizeof *arg);
    if (!blk || !tab || !res || !arg) {
        free(arg);
        scratch_release(s);
        return -1;
    }
    /* genotype planes g0, g1 disjoint, every sample valid; padding stays 0 */
    uint64_t *pl = s->p[0];
    fill_random(pl, words, (uint64_t)level * 977 + 1);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < B; i++) {
            uint64_t *g0 = pl + tg_epi_plane_offset(B, a.words, c, i, 0),
                     *g1 = pl + tg_epi_plane_offset(B, a.words, c, i, 1),
                     *v = pl + tg_epi_plane_offset(B, a.words, c, i, 2);
            for (int64_t w = 0; w < a.words[c]; w++) {
                int64_t live = a.n[c] - 64 * w;
                uint64_t m = live >= 64 ? ~0ull : live > 0 ? (1ull << live) - 1 : 0;
                g1[w] &= ~g0[w] & m;
                g0[w] &= m;
                v[w] = m;
            }
        }
    /* the score table stays zero: its values do not change a round's time, and lgamma over
     * the samples for every core would cost the probe more than its rounds */
    struct starpu_data_descr d[TG_EPI_MAX_ORDER + 2];
    double combos = 1;
    for (int i = 0; i < k; i++) {
        a.first[i] = (int64_t)i * B; /* distinct blocks with the same planes */
        a.nsnp[i] = B;
        d[i] = (struct starpu_data_descr){blk, STARPU_R};
        combos *= B;
    }
    d[k] = (struct starpu_data_descr){tab, STARPU_R};
    d[k + 1] = (struct starpu_data_descr){res, STARPU_W};
    *arg = a;
    /* the work as src/algo/epistasis.c counts it */
    return finish(s, starpu_task_build(cl, STARPU_CL_ARGS, arg, sizeof *arg, STARPU_DATA_MODE_ARRAY,
                                       d, k + 2, STARPU_FLOPS, combos * (double)(n + 1024), 0),
                  out);
}

/* The rows of matrix buffer @p i of @p like, or @p dflt without one. */
static size_t like_rows(const struct starpu_task *like, int i, size_t dflt) {
    return like ? starpu_matrix_get_nx(STARPU_TASK_GET_HANDLE(like, i)) : dflt;
}

/* A genotype product block (codelets/fivecodes.h) of the product's first block's columns and
 * table rows (@p like; else 10 and 40,960): on GPUs its rows, one level; on cores 4^level times
 * 128 rows (at most its rows), a block being a core's tens of milliseconds. */
static int probe_fivecodes(struct starpu_codelet *cl, int level, enum starpu_worker_archtype type,
                           const struct starpu_task *like, tg_probe_task *out) {
    const int trans = cl >= &tg_cl_fivecodes[1][0][0],
              fp32 = cl == &tg_cl_fivecodes[trans][1][0];
    const int gpu = type == STARPU_CUDA_WORKER;
    const int64_t real = (int64_t)like_rows(like, 4, 4096), table = (int64_t)like_rows(like, 1, 40960),
                  groups = (table + 4) / 5,
                  k = like ? (int64_t)starpu_matrix_get_ny(STARPU_TASK_GET_HANDLE(like, 1)) : 10;
    int64_t rows = gpu ? real : (int64_t)128 << (2 * level);
    if (level > (gpu ? 0 : 3) || (!gpu && level && rows / 4 >= real)) return 1;
    if (rows > real) rows = real;
    const size_t es = fp32 ? sizeof(float) : sizeof(double);
    const int64_t nsnp = trans ? rows : table;
    struct scratch *s = calloc(1, sizeof *s);
    if (!s) return -1;
    starpu_data_handle_t codes = scratch_add(s, (size_t)rows, (size_t)groups, 1),
                         in = scratch_add(s, (size_t)table, (size_t)k, es),
                         coef = scratch_add(s, 2 * (size_t)nsnp, 0, sizeof(double)),
                         miss = scratch_add(s, (size_t)rows + 1, 0, sizeof(int32_t)),
                         o = scratch_add(s, (size_t)rows, (size_t)k, es);
    if (!codes || !in || !coef || !miss || !o) {
        scratch_release(s);
        return -1;
    }
    /* a code whose five genotypes are not all 0 (the kernels look every code up alike) */
    memset(s->p[0], 121, (size_t)(rows * groups));
    double *w = s->p[2];
    for (int64_t j = 0; j < nsnp; j++) w[2 * j] = 1, w[2 * j + 1] = 0.5;
    struct tg_fivecodes_arg a = {.trans = trans, .prec = fp32 ? TG_FP32 : TG_FP64, .k = (int)k};
    return finish(s, starpu_task_build(cl, STARPU_R, codes, STARPU_R, in, STARPU_R, coef, STARPU_R,
                                       miss, STARPU_W, o, STARPU_VALUE, &a, sizeof a, STARPU_FLOPS,
                                       2.0 * (double)rows * (double)table * (double)k, 0),
                  out);
}

/* A tile GEMM of the Cholesky's updates (C ← C − A·Bᵀ; FP8: TN with an FP16 C): on GPUs tiles
 * of the first task's size (@p like, else 2048), one level; on cores 64·2^level, at most that. */
static int probe_gemm(struct starpu_codelet *cl, int level, enum starpu_worker_archtype type,
                      const struct starpu_task *like, tg_probe_task *out) {
    const tg_prec p = (tg_prec)(cl - tg_cl_gemm);
    const int gpu = type == STARPU_CUDA_WORKER;
    const size_t real = like_rows(like, 2, 2048), nb = gpu ? real : (size_t)64 << level;
    if (level > (gpu ? 0 : 5) || (!gpu && nb > real)) return 1;
    struct scratch *s = calloc(1, sizeof *s);
    if (!s) return -1;
    const int fp8 = p == TG_FP8_E4M3;
    starpu_data_handle_t a = scratch_add(s, nb, nb, tg_prec_size(p)),
                         b = scratch_add(s, nb, nb, tg_prec_size(p)),
                         c = scratch_add(s, nb, nb, tg_prec_size(fp8 ? TG_FP16 : p));
    if (!a || !b || !c) {
        scratch_release(s);
        return -1;
    }
    struct tg_gemm_arg g = {p, fp8 ? 'T' : 'N', fp8 ? 'N' : 'T', -1, 1, 1, 1, 1};
    return finish(s, starpu_task_build(cl, STARPU_R, a, STARPU_R, b, STARPU_RW, c, STARPU_VALUE, &g,
                                       sizeof g, STARPU_FLOPS, 2.0 * (double)(nb * nb * nb), 0),
                  out);
}

/* An INT8 dot-product tile of the KRR build over the first task's panels (@p like: their SNPs
 * and samples; else 8,192 × 2,048): on GPUs that tile, one level; on cores 64·2^level samples. */
static int probe_gram(struct starpu_codelet *cl, int level, enum starpu_worker_archtype type,
                      const struct starpu_task *like, tg_probe_task *out) {
    (void)cl;
    const int gpu = type == STARPU_CUDA_WORKER;
    const size_t k = like_rows(like, 0, 8192),
                 real = like ? starpu_matrix_get_ny(STARPU_TASK_GET_HANDLE(like, 0)) : 2048,
                 nb = gpu ? real : (size_t)64 << level;
    if (level > (gpu ? 0 : 5) || (!gpu && nb > real)) return 1;
    struct scratch *s = calloc(1, sizeof *s);
    if (!s) return -1;
    starpu_data_handle_t a = scratch_add(s, k, nb, 1), b = scratch_add(s, k, nb, 1),
                         c = scratch_add(s, nb, nb, sizeof(int32_t));
    if (!a || !b || !c) {
        scratch_release(s);
        return -1;
    }
    return finish(s, starpu_task_build(&tg_cl_gram, STARPU_R, a, STARPU_R, b, STARPU_W, c,
                                       STARPU_FLOPS, 2.0 * (double)(k * nb * nb), 0),
                  out);
}

/* A diagonal GRM tile (codelets/grm.h) over the first task's SNPs (@p like), at most 4,096 (the
 * work is linear in them; a panel of every SNP made the cores' first level 50 ms on the H100
 * node): on GPUs that task, one level; on cores panels of 64·2^level samples, at most the
 * task's. */
static int probe_grm(struct starpu_codelet *cl, int level, enum starpu_worker_archtype type,
                     const struct starpu_task *like, tg_probe_task *out) {
    const size_t k = like_rows(like, 0, 4096) < 4096 ? like_rows(like, 0, 4096) : 4096,
                 real = like ? starpu_matrix_get_ny(STARPU_TASK_GET_HANDLE(like, 0)) : 512,
                 nb = (size_t)64 << level;
    if (type == STARPU_CUDA_WORKER || level > 5 || (level && nb / 2 >= real)) return 1;
    struct scratch *s = calloc(1, sizeof *s);
    if (!s) return -1;
    starpu_data_handle_t e = scratch_add(s, k, nb, 1), v = scratch_add(s, 2 * k, 0, sizeof(double)),
                         o = scratch_add(s, nb, nb, sizeof(double));
    if (!e || !v || !o) {
        scratch_release(s);
        return -1;
    }
    memset(s->p[0], 1, k * nb); /* codes x − round(2p) = 1, weights 1: every product counts */
    double *w = s->p[1];
    for (size_t j = 0; j < k; j++) w[k + j] = 1;
    const double rows = (double)nb;
    return finish(s, starpu_task_build(cl, STARPU_R, e, STARPU_R, v, STARPU_W, o, STARPU_FLOPS,
                                       (double)k * rows * (rows + 1), 0),
                  out);
}

void tg_codelets_probes_register(void) {
    tg_probe_set_first(on_own_inputs);
    for (int k = 0; k < TG_EPI_MAX_ORDER - 1; k++)
        tg_probe_register(&tg_cl_epi_round[k], probe_round, NULL);
    for (int t = 0; t < 2; t++)
        for (int p = 0; p < 2; p++) { /* a later part's tasks share the first part's model */
            tg_probe_register(&tg_cl_fivecodes[t][p][0], probe_fivecodes, NULL);
            tg_probe_register(&tg_cl_fivecodes[t][p][1], NULL, &tg_cl_fivecodes[t][p][0]);
        }
    tg_probe_register(&tg_cl_gram, probe_gram, NULL);
    tg_probe_register(&tg_cl_gram_sym, NULL, &tg_cl_gram);
    /* a GRM's first block row is its diagonal tile: the block tiles (the same FP64 products,
     * cuBLAS DGEMM for DSYRK) take its rate rather than a probe of their own, whose cold first
     * call on the GPU cost a first run 60-70 ms on the H100 node */
    tg_probe_register(&tg_cl_grm_sym, probe_grm, NULL);
    tg_probe_register(&tg_cl_grm, NULL, &tg_cl_grm_sym);
    for (int p = 0; p < TG_NPREC; p++) {
        struct starpu_codelet *g = &tg_cl_gemm[p];
        tg_probe_register(g, probe_gemm, NULL);
        /* the other kernels of the factorisation and the build, at the rate of their precision's
         * GEMM or of the INT8 product (the work they report is their flops) */
        tg_probe_register(&tg_cl_syrk[p], NULL, g);
        tg_probe_register(&tg_cl_trsm[p], NULL, g);
        tg_probe_register(&tg_cl_potrf[p], NULL, g);
        tg_probe_register(&tg_cl_trtri[p], NULL, g);
        tg_probe_register(&tg_cl_xtx[p], NULL, g);
        tg_probe_register(&tg_cl_kernelgram[p], NULL, &tg_cl_gram);
        tg_probe_register(&tg_cl_kernelstats[p], NULL, &tg_cl_gram);
    }
}
