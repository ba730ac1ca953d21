/* Genotype matrix products Z·Λ and Zᵀ·Λ̃ (tg_geno_*): the 5codes genotype blocks, built once
 * from a genotype source by geno/codes5.c and registered here once with StarPU (so a GPU keeps
 * its copy between products), and the product as one task per block of output rows.
 *
 * Two copies of the genotypes, both 5codes (codelets/fivecodes.h): row blocks of samples with
 * SNPs grouped by five (for Z·Λ) and blocks of SNPs with samples grouped by five (for Zᵀ·Λ̃),
 * each block one contiguous array and one StarPU handle. 0.2 bytes per genotype each (the
 * paper stores both orientations too: a transposed read of one copy would stream Λ̃ once per
 * group instead of once per task). Missing calls are listed per block by output row (one int32
 * per call and orientation, plus an offset per row) and corrected exactly: the GPU adds them in
 * the product kernel, where the row's accumulators are; the CPU after its table lookups.
 *
 * Block sizes (defaults): Z·Λ, 64 blocks of samples, so that 16 CPU workers get 4 tasks each;
 * Zᵀ·Λ̃, 48 blocks of SNPs: a CPU task builds one table per group of 5 samples (243·k adds)
 * for all its rows, so fewer, longer blocks keep that cost down (under ~10% of the lookups at
 * 48). With fewer than 16 CPU workers and no GPU, 4 and 3 blocks a worker (within the bounds
 * below): each block rebuilds every group's tables, and 64 / 48 blocks on 2 cores made the
 * products 12% (Z·Λ) and 22% (Zᵀ·Λ̃) slower than the 19 / 10 blocks those bounds give there
 * (docs/PERFORMANCE.md). With GPUs, 8 blocks of samples and 6 of SNPs a GPU, without the
 * bound on their size below (smaller if five blocks would not fit in half a GPU): a GPU runs a
 * block in tens of microseconds, and each task's fixed costs made 64 / 48 blocks take 1.3–1.5×
 * the time of 8 / 6 at the paper's sizes; CPU workers beside the GPUs get few of them, if any.
 * Blocks are whole units of 512 rows, the rows of one CUDA thread block at k = 10, so no GPU
 * row tile is partial, and they shrink along the product from about 1.5 to 0.5 times the mean
 * (geno/codes5.c, blocks_make): with CPU workers only, the workers pull the blocks in that
 * order, one at a time (tg_geno_mul_submit), so the short last ones even out the workers' ends.
 * For the paper's n = 102,000 × m = 50,241 on 16 CPU workers: Z·Λ 64 tasks of 5 to 1 units
 * (0.5 to 2.6 GFLOP at k = 10), Zᵀ·Λ̃ 48 of 3 to 1. Measured on the H100 node's 16 cores
 * (bench/snpmm's recorded product): with equal blocks all submitted at once the cores were busy
 * 75–81% of the product's span (the busiest one 25–33% above the mean: dmdas places every task
 * at submission from the models, and a core slowed by its neighbours kept its share); with
 * shrinking blocks and two tasks per worker in flight, still placed by dmdas, 70–91%; pulled
 * one at a time, 87–88%, the idle time all after the cores' last tasks (docs/PERFORMANCE.md).
 *
 * With GPUs and a large Λ a product is also split along its inner dimension (part_end): a
 * task reads all of its Λ before it starts, and Λ is checked (and copied to the staging buffer)
 * on the host and then sent, so with one part none of that overlaps the GPU's work. Each
 * part's tasks (one per block, the first part writing the block, the others adding to it) are
 * submitted as soon as its rows are checked, the next part checked beside them (StarPU not
 * paused); the blocks' results leave one by one during the last part.
 *
 * Several MPI ranks: each holds the codes of its own samples only (tg_runtime_split: an even,
 * contiguous share of the rows), in blocks sized as above for its share, and decodes only those
 * rows of the .bed. The frequencies come from integer counts summed over the ranks, so every
 * rank has one rank's p bit for bit. Z·Λ gives each rank its own rows; Zᵀ·Λ̃ sums the ranks'
 * Z_rᵀ·Λ̃_r (tg_runtime_sum). The tasks touch only the rank's own handles: plain StarPU. */
#include "algo/snpmm.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/mem.h"
#include "base/parallel.h"
#include "codelets/fivecodes.h"
#include "geno/codes5.h"
#include "geno/pass.h"
#include "runtime/runtime.h"

void tg_geno_free(tg_geno *g) {
    if (!g) return;
    if (g->registered && tg_runtime_started()) {
        tg_handle_free(g->hcoef);
        for (int64_t b = 0; b < g->rbl.count; b++) {
            tg_handle_free(g->hr[b]);
            tg_handle_free(g->hrm[b]);
        }
        for (int64_t b = 0; b < g->sbl.count; b++) {
            tg_handle_free(g->ht[b]);
            tg_handle_free(g->htm[b]);
        }
        /* once the handles' frees have waited for every task that reads the codes */
        if (g->tiles) tg_fivecodes_forget(g->tiles);
    }
    tg_geno_codes_release(g);
}

int64_t tg_geno_n(const tg_geno *g) { return g->n; }
int64_t tg_geno_m(const tg_geno *g) { return g->m; }
int64_t tg_geno_excluded(const tg_geno *g) { return g->excluded; }
int64_t tg_geno_missing(const tg_geno *g) {
    int64_t c = 0;
    for (int64_t b = 0; b < g->rbl.count; b++) c += g->rmiss[b].a[block_len(&g->rbl, b)];
    return c;
}
void tg_geno_local(const tg_geno *g, int64_t *first, int64_t *count) {
    *first = g->i0;
    *count = g->nl;
}
const double *tg_geno_freq(const tg_geno *g) { return g->freq; }
void tg_geno_stats(const tg_geno *g, tg_snp_stats *stats) {
    tg_geno_counts_stats(g->freq, g->obs, g->n, g->m, stats);
}
int64_t tg_geno_block_start(const tg_geno *g, int trans, int64_t b) {
    return (trans ? &g->sbl : &g->rbl)->start[b];
}

static _Atomic int tiles_use = 1;
int tg_geno_gpu_tiles_use(int on) { return atomic_exchange(&tiles_use, on != 0); }

/* Registers every block once; StarPU then keeps valid copies on the devices that read them.
 * A GPU's FP64 products read 2-bit tiles that it makes once from each block's 5codes (0.25
 * bytes a genotype, where the 5codes' 0.2 cost four times the integer work to decode:
 * codelets/fivecodes_cuda.cu), where they fit (tg_geno_gpu_tiles_fit). */
static void register_blocks(tg_geno *g) {
    static _Atomic uint64_t serial;
    if (tg_geno_gpu_tiles_fit(g->nl, g->m)) g->tiles = ++serial;
    int64_t ng = cdiv(g->m, 5), nh = cdiv(g->nl, 5);
    tg_handle_vector(&g->hcoef, g->coef, 2 * (uint32_t)g->m, sizeof(double));
    for (int64_t b = 0; b < g->rbl.count; b++) {
        uint32_t ld = (uint32_t)block_ld(&g->rbl, b);
        tg_handle_matrix(&g->hr[b], g->rcodes[b], ld, ld, (uint32_t)ng, 1);
        tg_handle_vector(&g->hrm[b], g->rmiss[b].a, (uint32_t)g->rmiss[b].len, sizeof(int32_t));
    }
    for (int64_t b = 0; b < g->sbl.count; b++) {
        uint32_t ld = (uint32_t)block_ld(&g->sbl, b);
        tg_handle_matrix(&g->ht[b], g->tcodes[b], ld, ld, (uint32_t)nh, 1);
        tg_handle_vector(&g->htm[b], g->tmiss[b].a, (uint32_t)g->tmiss[b].len, sizeof(int32_t));
    }
    g->registered = 1;
}

tg_status tg_geno_mul(tg_geno *g, int trans, int64_t k, tg_prec prec, const void *in, int64_t ldin,
                      void *out, int64_t ldout, tg_error *err) {
    if (!g || !in || !out) return tg_error_set(err, TG_ERR_ARG, "tg_geno_mul: NULL argument");
    if (trans != 0 && trans != 1)
        return tg_error_set(err, TG_ERR_ARG, "tg_geno_mul: trans %d: expected 0 or 1", trans);
    if (k < 1 || k > TG_FC_MAXK)
        return tg_error_set(err, TG_ERR_ARG, "tg_geno_mul: %lld columns: expected 1 to %d",
                            (long long)k, TG_FC_MAXK);
    if (prec != TG_FP64 && prec != TG_FP32)
        return tg_error_set(err, TG_ERR_ARG, "tg_geno_mul: precision %s: expected fp64 or fp32",
                            tg_prec_name(prec));
    const int64_t nt = trans ? g->n : g->m, nr = trans ? g->m : g->n;
    if (ldin < nt || ldout < nr || ldin > UINT32_MAX || ldout > UINT32_MAX)
        return tg_error_set(err, TG_ERR_ARG,
                            "tg_geno_mul: leading dimensions %lld (input, rows %lld) and %lld "
                            "(output, rows %lld) must be at least the row counts and below 2^32",
                            (long long)ldin, (long long)nt, (long long)ldout, (long long)nr);
    const size_t es = tg_prec_size(prec), mine = (size_t)g->i0 * es;
    /* the blocks' flops (tg_geno_mul_submit) add up to 2·k per genotype of this rank; the
     * products of the CG and the GRM, which go through tg_geno_mul_rows, are not phases */
    tg_phase *ph = tg_phase_open("snpmm", "flop", 2 * g->nl * g->m * k);
    tg_status st = trans ? tg_geno_mul_rows(g, 1, k, prec, (const char *)in + mine, ldin, out,
                                            ldout, err)
                         : tg_geno_mul_rows(g, 0, k, prec, in, ldin, (char *)out + mine, ldout,
                                            err);
    tg_phase_close(ph);
    if (!st && !trans)
        st = tg_runtime_gather_rows((char *)out + mine, ldout, out, ldout, g->n, k, es, err);
    return st;
}

/* Columns of a matrix copied between leading dimensions (elements), one column a call. */
typedef struct {
    char *dst;
    const char *src;
    size_t ldd, lds, rows, es;
} cols_copy;

static void copy_column(void *ctx, int64_t c) {
    const cols_copy *x = ctx;
    memcpy(x->dst + (size_t)c * x->ldd * x->es, x->src + (size_t)c * x->lds * x->es,
           x->rows * x->es);
}

/* The m × k @p out (leading dimension ld) summed over the ranks, packed when ld > m. */
static tg_status sum_over_ranks(const tg_geno *g, int64_t k, tg_prec prec, void *out, int64_t ld,
                                tg_error *err) {
    if (tg_runtime_nranks() == 1) return TG_OK;
    const size_t es = tg_prec_size(prec), m = (size_t)g->m;
    if (ld == g->m) {
        tg_runtime_sum(out, g->m * k, prec);
        return TG_OK;
    }
    char *buf = tg_malloc_n(g->m, k, es, err);
    if (!buf) return TG_ERR_NOMEM;
    cols_copy pack = {buf, out, m, (size_t)ld, m, es}, unpack = {out, buf, (size_t)ld, m, m, es};
    tg_parallel_for(k, copy_column, &pack);
    tg_runtime_sum(buf, g->m * k, prec);
    tg_parallel_for(k, copy_column, &unpack);
    free(buf);
    return TG_OK;
}

/* The task argument's offsets (codelets/fivecodes.h) and the check that the input is finite:
 * typed loops over chunks of a column's rows on all cores, done per product, so it must stay
 * well under the product itself (n·k values for Zᵀ·Λ̃). Chunks of a fixed size from the part's
 * first row, so that the offsets' sums are the same on every machine with the same parts, and
 * small enough to keep 16 cores busy at k = 10. With @p copy, each chunk is also copied there
 * (the staging buffer, packed) while it is in cache, with stores that bypass the caches: the
 * GPU reads the buffer next, and lines left dirty in the cores' caches cross at half the rate. */
enum { OFFSET_ROWS = 8192 };

typedef struct {
    const tg_geno *g;
    int trans;
    tg_prec prec;
    const void *in;
    int64_t ldin, nt, t0, t1, nchunk; /* table rows, the part's, chunks a column */
    double *part, *amax;              /* per chunk (column-major, nchunk a column): the sum, and
                                       * the largest |a_t·in_t| (a_t = w_t for Z·Λ, 1 for Zᵀ·Λ̃) */
    int64_t *bad;                     /* per chunk: the first row that is not finite, or -1 */
    char *copy;
} offset_job;

/* A chunk's sum of c_t·x_t (c_t = 1 for Zᵀ·Λ̃) and largest |a_t·x_t|, or its first row that is
 * not finite (-1: none): OFFSET_LANES sums and maxima in step, which the compiler keeps in
 * vector registers (one chain of dependent additions a value took ~4 cycles a value), added
 * in a fixed order. Inlined into each of chunk_offset's four calls, their arguments constant
 * there. */
enum { OFFSET_LANES = 8 };
static inline __attribute__((always_inline)) int64_t
chunk_sums(const double *xd, const float *xf, const double *coef, int trans, int64_t r0,
           int64_t r1, double *sum, double *max) {
    double s[OFFSET_LANES] = {0}, m[OFFSET_LANES] = {0};
    int bad = 0;
    for (int64_t r = r0; r < r1; r += OFFSET_LANES) {
        const int n = r1 - r < OFFSET_LANES ? (int)(r1 - r) : OFFSET_LANES;
        for (int j = 0; j < n; j++) {
            const double x = xd ? xd[r + j] : xf[r + j],
                         a = fabs(trans ? x : coef[2 * (r + j)] * x);
            bad |= !(fabs(x) <= DBL_MAX);
            s[j] += trans ? x : coef[2 * (r + j) + 1] * x;
            m[j] = a > m[j] ? a : m[j];
        }
    }
    if (bad)
        for (int64_t r = r0;; r++)
            if (!isfinite(xd ? xd[r] : xf[r])) return r;
    *sum = *max = 0;
    for (int j = 0; j < OFFSET_LANES; j++) {
        *sum += s[j];
        *max = m[j] > *max ? m[j] : *max;
    }
    return -1;
}

static void chunk_offset(void *ctx, int64_t i) {
    const offset_job *jb = ctx;
    const int64_t c = i / jb->nchunk, r0 = jb->t0 + i % jb->nchunk * OFFSET_ROWS,
                  r1 = r0 + OFFSET_ROWS < jb->t1 ? r0 + OFFSET_ROWS : jb->t1;
    const double *xd = (const double *)jb->in + c * jb->ldin, *coef = jb->g->coef;
    const float *xf = (const float *)jb->in + c * jb->ldin;
    double *s = &jb->part[i], *m = &jb->amax[i];
    if (jb->prec == TG_FP64)
        jb->bad[i] = jb->trans ? chunk_sums(xd, NULL, coef, 1, r0, r1, s, m)
                               : chunk_sums(xd, NULL, coef, 0, r0, r1, s, m);
    else
        jb->bad[i] = jb->trans ? chunk_sums(NULL, xf, coef, 1, r0, r1, s, m)
                               : chunk_sums(NULL, xf, coef, 0, r0, r1, s, m);
    if (jb->copy && jb->bad[i] < 0) {
        const size_t es = tg_prec_size(jb->prec);
        tg_copy_stream(jb->copy + (size_t)(c * jb->nt + r0) * es,
                       (const char *)jb->in + (size_t)(c * jb->ldin + r0) * es,
                       (size_t)(r1 - r0) * es);
    }
}

/* The offsets of Λ's table rows [t0, t1) into @p offset, their largest |a_t·in_t| into
 * @p amax, and those rows copied to @p copy (packed, all the table rows a column) unless NULL;
 * TG_ERR_ARG at the first value that is not finite. */
static tg_status offsets(const tg_geno *g, int trans, int64_t k, tg_prec prec, const void *in,
                         int64_t ldin, int64_t t0, int64_t t1, double *offset, double *amax,
                         char *copy, tg_error *err) {
    const int64_t nchunk = (t1 - t0 + OFFSET_ROWS - 1) / OFFSET_ROWS;
    double *part = tg_malloc_n(k * nchunk, 1, 2 * sizeof(double) + sizeof(int64_t), err);
    if (!part) return TG_ERR_NOMEM;
    offset_job jb = {g,    trans, prec, in, ldin, trans ? g->nl : g->m, t0, t1, nchunk, part,
                     part + k * nchunk, (int64_t *)(part + 2 * k * nchunk), copy};
    /* the first part's pass has nothing beside it: StarPU paused, as in any loop; a later
     * part's runs beside the tasks of the earlier ones */
    (t0 ? tg_parallel_for_running : tg_parallel_for)(k * nchunk, chunk_offset, &jb);
    tg_status st = TG_OK;
    for (int64_t c = 0; c < k && !st; c++) {
        offset[c] = amax[c] = 0;
        for (int64_t j = c * nchunk; j < (c + 1) * nchunk && !st; j++) {
            const int64_t r = jb.bad[j];
            if (r >= 0)
                st = tg_error_set(err, TG_ERR_ARG,
                                  "tg_geno_mul: input row %lld (%s %lld), column %lld is %g: "
                                  "expected a finite number",
                                  (long long)(trans ? g->i0 + r : r), trans ? "sample" : "SNP",
                                  (long long)(trans ? g->i0 + r : r), (long long)c,
                                  tg_prec_load(prec, in, (size_t)(r + c * ldin)));
            else {
                offset[c] += part[j];
                amax[c] = fmax(amax[c], jb.amax[j]);
            }
        }
    }
    free(part);
    return st;
}

void tg_geno_set_part_rows(tg_geno *g, int64_t rows) { g->part_rows = rows; }

/* The end of the part of a product's table rows that starts at t0. With GPUs a product is
 * split along its inner dimension when Λ is large, so that the first part's tasks start while
 * the rest of Λ is checked, copied and sent (a task reads all of its Λ before it starts). Each
 * part costs a task per block, whose kernels add to every output row of the block: on the H200
 * node the medium Zᵀ·Λ̃'s (751,000 samples) GPU time grew from 13.5 to 14.5 ms in four parts
 * instead of one (18 more tasks), and parts of 25,600 rows made the paper's small products
 * 0.3–0.6 ms slower (docs/PERFORMANCE.md). Hence two parts: the first a quarter of Λ, whose
 * tasks outlast the pass and transfer of the other three quarters, and at least PART_ROWS
 * rows and twice the output's rows; the second the rest. Parts are whole multiples of
 * PART_UNIT rows (chunks of the GPU kernels: 160 table rows of the 5codes', 128 of the 2-bit
 * tiles'), but for the last. CPU workers read Λ where it is: no parts without GPUs.
 * tg_geno_set_part_rows's parts are all of its size. */
enum { PART_ROWS = 131072, PART_UNIT = 640 };

static int64_t part_end(const tg_geno *g, int64_t nt, int64_t nr, int64_t t0) {
    int64_t rows = g->part_rows;
    if (!rows) {
        const int64_t least = 2 * nr > PART_ROWS ? 2 * nr : PART_ROWS;
        if (tg_runtime_ngpu() == 0 || t0 > 0 || nt < 2 * least) return nt;
        rows = nt / 4 > least ? nt / 4 : least;
    }
    rows = cdiv(rows, PART_UNIT) * PART_UNIT;
    return nt - t0 > rows ? t0 + rows : nt;
}

tg_status tg_geno_mul_rows(tg_geno *g, int trans, int64_t k, tg_prec prec, const void *in,
                           int64_t ldin, void *out, int64_t ldout, tg_error *err) {
    if (!tg_runtime_started())
        return tg_error_set(err, TG_ERR_RUNTIME, "tg_geno_mul: the runtime is not started");
    const size_t es = tg_prec_size(prec);
    const int64_t nt = trans ? g->nl : g->m, nr = trans ? g->m : g->nl;
    /* FP64 products (the tensor cores' short kernels) take Λ and the result through the pinned
     * staging buffer where GPUs run and the caller's memory is pageable: a copy on the host's
     * cores and a DMA transfer each way, where CUDA's own staging of pageable memory is several
     * times slower. FP32 products' longer kernels hide CUDA's copies, and the buffer's copies
     * before and after them would only add. Λ is copied by the pass that checks it. */
    const size_t bin = (size_t)(nt * k) * es;
    char *stage = prec != TG_FP64 || (tg_host_pinned(in) && tg_host_pinned(out))
                      ? NULL
                      : tg_host_stage_take(bin + (size_t)(nr * k) * es);
    const int64_t nblk = tg_geno_nblocks(g, trans);
    int64_t nparts = 0; /* one, empty, where this rank has no samples */
    for (int64_t t = 0; t < nt || !nparts; t = part_end(g, nt, nr, t)) nparts++;
    const blocks *bl = trans ? &g->sbl : &g->rbl;
    tg_handle *hout = tg_calloc_n(nblk + nparts, 1, sizeof *hout, err), *hin = hout + nblk;
    if (!hout) {
        if (stage) tg_host_stage_give();
        return TG_ERR_NOMEM;
    }
    const char *pin = stage ? stage : in;
    void *pout = stage ? stage + bin : out;
    const int64_t lin = stage ? nt : ldin, lout = stage ? nr : ldout;
    for (int64_t b = 0; b < nblk; b++)
        tg_handle_matrix(&hout[b], (char *)pout + (size_t)bl->start[b] * es, (uint32_t)lout,
                         (uint32_t)block_len(bl, b), (uint32_t)k, es);
    /* each part's tasks submitted once its rows are checked (and staged): pulled by the
     * workers where they are CPUs only (tg_runtime_submit_set) */
    tg_status st = TG_OK;
    int64_t sent = 0;
    for (int64_t t0 = 0, t1; sent < nparts && !st; t0 = t1) {
        t1 = part_end(g, nt, nr, t0);
        double offset[TG_FC_MAXK], amax[TG_FC_MAXK];
        st = offsets(g, trans, k, prec, in, ldin, t0, t1, offset, amax, stage, err);
        if (st) break;
        tg_handle_matrix(&hin[sent], pin + (size_t)t0 * es, (uint32_t)lin, (uint32_t)(t1 - t0),
                         (uint32_t)k, es);
        st = tg_geno_mul_submit(g, trans, (int)k, prec, t0, offset, amax, hin[sent++], hout, 1,
                                err);
    }
    for (int64_t b = 0; b < nblk; b++) {
        tg_handle_free(hout[b]); /* waits, copies back */
        if (!stage || st) continue;
        /* each block leaves the staging buffer as it lands, while later blocks compute: on
         * every core (one core copies a block more slowly than the GPU computes the next),
         * though the pool's loop pauses StarPU's workers meanwhile; queued kernels go on */
        const size_t r0 = (size_t)bl->start[b];
        cols_copy cc = {(char *)out + r0 * es, (char *)pout + r0 * es, (size_t)ldout,
                        (size_t)nr, (size_t)block_len(bl, b), es};
        tg_parallel_for(k, copy_column, &cc);
    }
    for (int64_t p = 0; p < sent; p++) tg_handle_free(hin[p]);
    free(hout);
    if (stage) tg_host_stage_give();
    if (!st && trans) st = sum_over_ranks(g, k, prec, out, ldout, err);
    return st;
}

int64_t tg_geno_nblocks(const tg_geno *g, int trans) { return trans ? g->sbl.count : g->rbl.count; }

/* One product's blocks (tg_geno_mul_submit), as tg_runtime_submit_set submits them. */
typedef struct {
    tg_geno *g;
    struct tg_fivecodes_arg a;
    tg_handle in;
    const tg_handle *out;
    int64_t nt;
} product;

static int submit_block(void *ctx, int64_t b, int worker, void (*done)(void *), void *done_arg) {
    const product *p = ctx;
    const blocks *bl = p->a.trans ? &p->g->sbl : &p->g->rbl;
    struct tg_fivecodes_arg a = p->a;
    a.r0 = bl->start[b];
    return tg_insert_fivecodes(&a, a.trans ? p->g->ht[b] : p->g->hr[b], p->in, p->g->hcoef,
                               a.trans ? p->g->htm[b] : p->g->hrm[b], p->out[b],
                               2.0 * (double)block_len(bl, b) * (double)p->nt * (double)a.k,
                               worker, done, done_arg);
}

tg_status tg_geno_mul_submit(tg_geno *g, int trans, int k, tg_prec prec, int64_t t0,
                             const double *offset, const double *amax, tg_handle in,
                             const tg_handle *out_blocks, int pull, tg_error *err) {
    static _Atomic uint64_t serial;
    if (!g->registered) register_blocks(g);
    product p = {.g = g,
                 .a = {.trans = trans,
                       .prec = prec,
                       .k = k,
                       .t0 = t0,
                       .product = ++serial,
                       .geno = atomic_load(&tiles_use) ? g->tiles : 0},
                 .in = in,
                 .out = out_blocks,
                 .nt = tg_handle_rows(in)};
    memcpy(p.a.offset, offset, (size_t)k * sizeof *offset);
    memcpy(p.a.amax, amax, (size_t)k * sizeof *amax);
    int ret = tg_runtime_submit_set(tg_geno_nblocks(g, trans), pull, submit_block, &p);
    if (ret)
        return tg_error_set(err, TG_ERR_RUNTIME, "genotype product: task submission failed (%d)",
                            ret);
    return TG_OK;
}
