/* The finishing codelet of the RR baseline's ZᵀZ + λI (src/algo/rr.c, the KRR paper's Fig. 2):
 * turns one INT32 gram tile of SNP panels into the centered, scaled tile of A in FP64 or FP32.
 * CPU in xtx.c (the reference), CUDA in xtx_cuda.cu (one thread per entry, FP64 arithmetic:
 * O(nb²) next to the gram's O(nb²·n), so its speed does not matter).
 *
 * Exact mean imputation: Z_ij = M_ij·(x_ij − μ_j)·s_j with M the observed mask and x0 the
 * genotypes with missing calls as 0, so
 *   (ZᵀZ)_jk = s_j·s_k·[X0ᵀX0 − μ_k·X0ᵀM − μ_j·MᵀX0 + μ_j·μ_k·MᵀM]_jk,
 * every bracket an exact integer from the INT8 product of panels [X0_J | M_J]. Without missing
 * calls the panels are X0_J alone and X0ᵀM = n·μ (column sums), MᵀM = n. */
#ifndef TG_CODELETS_XTX_H
#define TG_CODELETS_XTX_H
#include "codelets/codelets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* buffers: C (R, matrix int32: w_J × w_K, w = nb or 2nb with missing calls), the panels' vectors
 * vJ, vK (R, vector double: μ then s of the panel's nb SNPs; the same handle twice on a diagonal
 * tile) and A (W, matrix of the table's precision, nb_J × nb_K). */
struct tg_xtx_arg {
    tg_prec prec;
    int missing; /* C holds the four blocks of [X0 | M] */
    int diag;    /* a diagonal tile: λ added to its diagonal */
    double n;    /* samples: MᵀM and the column sums without missing calls */
    double lambda;
};
/* Indexed by A's precision: FP64 and FP32 entries only. */
extern struct starpu_codelet tg_cl_xtx[TG_NPREC];
void tg_xtx_cpu(void *buffers[], void *cl_arg);
void tg_xtx_cuda(void *buffers[], void *cl_arg);
int tg_insert_xtx(const struct tg_xtx_arg *a, starpu_data_handle_t c, starpu_data_handle_t vj,
                  starpu_data_handle_t vk, starpu_data_handle_t tile, int priority);

void tg_xtx_codelets_init(void);

#ifdef __CUDACC__
#define TG_XTX_HD __host__ __device__
#else
#define TG_XTX_HD
#endif

/* Entry (r, c) of the tile, shared by the CPU and CUDA functions. c32/ldc: the gram tile;
 * mj, sj / mk, sk: μ and s of the two panels (nbj, nbk SNPs). */
static inline TG_XTX_HD double tg_xtx_entry(const struct tg_xtx_arg *a, const int32_t *c32,
                                            size_t ldc, int nbj, int nbk, const double *mj,
                                            const double *sj, const double *mk,
                                            const double *sk, int r, int c) {
    double g = c32[r + c * ldc], xm, mx, mm;
    if (a->missing) {
        xm = c32[r + (size_t)(nbk + c) * ldc];
        mx = c32[nbj + r + c * ldc];
        mm = c32[nbj + r + (size_t)(nbk + c) * ldc];
    } else {
        xm = a->n * mj[r];
        mx = a->n * mk[c];
        mm = a->n;
    }
    double v = sj[r] * sk[c] * (g - mk[c] * xm - mj[r] * mx + mj[r] * mk[c] * mm);
    return a->diag && r == c ? v + a->lambda : v;
}

#ifdef __cplusplus
}
#endif
#endif
