/* Genotype matrix product codelets (5codes): the interface between the product (src/algo/snpmm.c),
 * the CPU kernel (codelets/fivecodes.c) and the CUDA kernel (codelets/fivecodes_cuda.cu).
 *
 * One task computes a block of output rows over a part of the table rows (all of them, or a
 * range of whole groups: a product split along its inner dimension, so that the first part's
 * tasks start while the later parts of in are still checked and sent). The genotypes of the
 * block are 5codes (Freudenberg et al. 2023, section 2.2.2): five consecutive "table rows"
 * share one byte, the base-3 number code = Σ_t d_t·3^t (t = 0..4), d_t ∈ {0, 1, 2} the A1
 * count, 0 for a missing call, an excluded SNP or a table row past the end. Both products
 * have the same form:
 *   Z·Λ   (trans 0): output rows = samples of the block, table rows = SNPs (all m), in = Λ (m×k);
 *   Zᵀ·Λ̃ (trans 1): output rows = SNPs of the block, table rows = samples (all n), in = Λ̃ (n×k).
 *
 * Buffers (modes R, R, R, R, W or RW):
 *  0 codes: matrix of uint8, NX ≥ block rows (the genotypes pad it to 16: rows past out's NX
 *           are never output), NY = groups (ceil(table rows / 5)); byte (r, g) holds table
 *           rows 5g..5g+4 of output row r (rows contiguous within a group); a part reads
 *           its groups t0/5 ..;
 *  1 in:    matrix of double or float (the precision), NX = the part's table rows (from
 *           t0, a multiple of 5), NY = k;
 *  2 coef:  vector of double, 2m: coef[2j] = w_j (1, or 1/sqrt(2p_j(1−p_j)) when scaled),
 *           coef[2j+1] = c_j = 2p_j·w_j; both 0 for an excluded SNP;
 *  3 miss:  vector of int32, rows + 1 + count: offsets o_0 = 0 ≤ … ≤ o_rows = count, then the
 *           table rows t of the missing calls of output row r at rows + 1 + [o_r, o_(r+1)),
 *           ascending, over all the table rows (a part takes those in its range);
 *  4 out:   matrix of the precision, NX = block rows, NY = k; written by the part at t0 = 0
 *           (mode W), added to by the others (RW: tg_cl_fivecodes[..][..][1]).
 * Result (j the SNP of the term: j = t for trans 0, j = r0 + r for trans 1; t over the part):
 *   trans 0: out_r = Σ_t (d_rt·w_t − c_t)·in_t + Σ_{(r,t) missing} c_t·in_t
 *   trans 1: out_r = w_j·Σ_t d_rt·in_t − c_j·S + Σ_{(r,t) missing} c_j·in_t,  S = Σ_t in_t
 * i.e. Z·in with Z_ij = (x_ij − 2p_j)·w_j and 0 for a missing call: the centering term of a
 * missing call is added back, which is mean imputation exactly. For trans 0 the centering is
 * folded into the table (entry 0 of a group is −Σ_t c_t·in_t), as in the paper; for trans 1 it
 * depends on the output row, so it is applied once per row with S from the task argument. The
 * GPU computes D·A (FP64: on the INT8 tensor cores, A cut into exact 8-bit slices; FP32: FMA),
 * scaled by w_j for trans 1, adds the missing calls' c_j·in_t, then applies the centering once
 * per output row. */
#ifndef TG_CODELETS_FIVECODES_H
#define TG_CODELETS_FIVECODES_H
#include <stdint.h>

#include "codelets/codelets.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_FC_MAXK 64 /* columns of Λ per product */
#define TG_FC_NCODES 243

struct tg_fivecodes_arg {
    int trans;    /* 0: Z·Λ, 1: Zᵀ·Λ̃ */
    tg_prec prec; /* TG_FP64 or TG_FP32: the arrays and the accumulation */
    int k;
    int64_t r0; /* first output row of the block (trans 1: its first SNP) */
    int64_t t0; /* the part's first table row (a multiple of 5); 0: out written, else added to */
    uint64_t product; /* the part's serial: its blocks share in, so a GPU slices it once */
    /* the genotypes' serial, which with trans and r0 names the block's codes for good: a GPU
     * keeps 2-bit tiles made from them (codelets/fivecodes_cuda.cu); 0: it reads the codes */
    uint64_t geno;
    /* in double, over the part's table rows: trans 0: Σ_t c_t·in_t (the GPU subtracts it at
     * the end; the CPU folds it into its tables instead), trans 1: S = Σ_t in_t */
    double offset[TG_FC_MAXK];
    double amax[TG_FC_MAXK]; /* max_t |a_t·in_t| over the part (the AMX slices' scale) */
};

/* [trans][prec index: 0 fp64, 1 fp32][0: the first part (out W), 1: a later one (out RW)];
 * perfmodels tg_fivecodes_{zl,ztl}_{fp64,fp32}, one for both parts' codelets */
extern struct starpu_codelet tg_cl_fivecodes[2][2][2];
void tg_fivecodes_init(void);
void tg_fivecodes_cpu(void *buffers[], void *cl_arg);
void tg_fivecodes_cuda(void *buffers[], void *cl_arg);
/** Frees the GPUs' tiles of genotypes @p geno (tg_fivecodes_arg.geno), once no task of theirs
 * is left; on each CUDA worker. */
void tg_fivecodes_forget(uint64_t geno);
void tg_fivecodes_cuda_forget(void *geno);
/** Inserts one block product (handles in the buffer order above). @p worker ≥ 0: the task runs
 * on that worker; @p done (NULL: none) is called with @p done_arg once it has run, on the
 * worker's thread. */
int tg_insert_fivecodes(const struct tg_fivecodes_arg *a, starpu_data_handle_t codes,
                        starpu_data_handle_t in, starpu_data_handle_t coef,
                        starpu_data_handle_t miss, starpu_data_handle_t out, double flops,
                        int worker, void (*done)(void *), void *done_arg);

/** The first of a row's missing calls tl[lo .. hi) (ascending table rows) at table row @p t or
 * later, hi if none: where a part's calls start and end. A part that holds all of the row's
 * calls (one part: every product) costs a load or two, not a search of dependent loads. The
 * CPU kernel's; the CUDA kernel's warps search together (warp_first_call, the same result). */
static inline int32_t tg_fc_first_call(const int32_t *tl, int32_t lo, int32_t hi,
                                       int64_t t) {
    if (lo == hi || tl[lo] >= t) return lo;
    if (tl[hi - 1] < t) return hi;
    while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (tl[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

#ifdef __cplusplus
}
#endif
#endif
