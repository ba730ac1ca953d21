/* Tile BLAS-3 codelets of the mixed-precision Cholesky and its solve (src/algo/cholesky.c,
 * src/algo/solve.c): gemm in every floating precision, syrk and "trsm by the inverse" in
 * FP32/FP64 (and FP16 tiles below an FP32 diagonal), the scaled FP16 copy of an FP32 inverse
 * that the FP16 trsm reads, and the transposing copy that feeds FP8 GEMMs. CPU functions in
 * gemm.c (OpenBLAS; FP16/FP8 operands widened to FP32 scratch: the reference), CUDA in
 * gemm_cuda.cu (cuBLAS, cuBLASLt for FP8).
 *
 * Scales: a tile stores value·scale (tg_matrix's per-tile scale, DESIGN-NOTES "Per-tile
 * scale"). Every argument struct carries the scales of its operands and the codelets compute on
 * the true values, so callers never unscale. */
#ifndef TG_CODELETS_GEMM_H
#define TG_CODELETS_GEMM_H
#include <math.h>

#include "codelets/codelets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- gemm: C ← beta·C + alpha·op(A)·op(B); A, B, C all of the table's precision, except the
 * FP8 entry: FP8 A and B, FP16 C (the tile accumulates its updates in FP16, which cuBLASLt's
 * FP8 matmul writes directly). That entry runs on cuBLASLt, which only takes the TN layout:
 * FP8 tasks must use ta = 'T', tb = 'N' (the operands are transposed copies, see tg_cl_convt). */
struct tg_gemm_arg {
    tg_prec prec;
    char ta, tb; /* 'N' or 'T' */
    double alpha, beta;
    double sa, sb, sc; /* scales of A, B, C */
};
extern struct starpu_codelet tg_cl_gemm[TG_NPREC];
void tg_gemm_cpu(void *buffers[], void *cl_arg);
void tg_gemm_cuda(void *buffers[], void *cl_arg);
int tg_insert_gemm(tg_prec p, char ta, char tb, double alpha, starpu_data_handle_t a, double sa,
                   starpu_data_handle_t b, double sb, double beta, starpu_data_handle_t c, double sc,
                   int priority);

/* ---- syrk: C ← C − A·Aᵀ on the lower triangle of a diagonal tile, indexed by A's precision:
 * FP64 and FP32 (C of the same precision), and FP16 with an FP32 C, for diagonal updates from
 * panel tiles the map stores in FP16 anyway: a GEMM on FP16 tensor cores (FP32 accumulation)
 * is ~10× faster than SSYRK at nb 2048 even computing the whole tile, which it does: the FP16
 * entry updates both triangles (on the CPU too), the others only the lower one. */
struct tg_syrk_arg {
    tg_prec prec; /* of A */
};
extern struct starpu_codelet tg_cl_syrk[TG_NPREC];
void tg_syrk_cpu(void *buffers[], void *cl_arg);
void tg_syrk_cuda(void *buffers[], void *cl_arg);
int tg_insert_syrk(tg_prec a_prec, starpu_data_handle_t a, starpu_data_handle_t c, int priority);

/* ---- trsm by the inverse: X ← X·op(T) (side 'R') or X ← op(T)·X (side 'L') with T = L⁻¹ a
 * lower-triangular tile whose strict upper part is zero (tg_cl_trtri's output), FP32 or FP64.
 * This is the triangular solve X·L⁻ᵀ / L⁻¹·X: the CPU runs TRMM in place, the GPU a copy and a
 * GEMM (cuBLAS TRSM is 14× slower than GEMM on the H100 at nb 1024). Indexed by the precision
 * the result is stored in: FP64 and FP32, buffers T (R) and X (RW) of that precision; and FP16:
 * X is a tile stored in FP16, solved in place (scale-free: the solve is linear) by an FP32 T
 * given as its scaled FP16 copy, buffers T16 (R) and alpha (R) from tg_cl_half_scaled (made once
 * per panel, not per tile), X (RW). T16·alpha is T rounded to FP16's unit roundoff 2⁻¹¹ (what
 * the TF32 path kept, without raising the tile to an FP32 copy and lowering it back); CPU and GPU
 * both multiply by that same rounded T: the GPU on FP16 tensor cores with FP32 accumulation,
 * W·T16 scaled by alpha read from device memory; the CPU in FP32 (TRMM) on T16·alpha and X
 * widened exactly. Both round the result to FP16 once. */
struct tg_trsm_arg {
    tg_prec prec; /* the table entry */
    char side, trans;
};
extern struct starpu_codelet tg_cl_trsm[TG_NPREC];
void tg_trsm_cpu(void *buffers[], void *cl_arg);
void tg_trsm_cuda(void *buffers[], void *cl_arg);
/** @p t is T (FP32/FP64 entries, @p alpha NULL) or T16 with its @p alpha (the FP16 entry). */
int tg_insert_trsm(tg_prec p, char side, char trans, starpu_data_handle_t t,
                   starpu_data_handle_t alpha, starpu_data_handle_t x, int priority);

/* ---- half_scaled: the FP16 entry of trsm's T, from an FP32 T: T16 = round16(T·s) (round to
 * nearest even) and alpha = 1/s, s = 2^(14 − e) with e = tg_half_scale_exp(max|T|), so the
 * largest entry lands just below 2^14: L⁻¹ of an ill-conditioned tile exceeds FP16's range, and
 * small entries would lose bits as subnormals. s and alpha are powers of two, so only the FP16
 * rounding errs. Buffers: T (R, FP32 matrix), T16 (W, FP16 matrix of T's size), alpha (W, a
 * variable of two floats, 1/s and 0: the FP16 trsm GEMM's alpha and beta, which it reads from
 * device memory). The CPU and the GPU give the same bits for a finite T (NaN entries become some
 * FP16 NaN; the maximum ignores them). Perfmodel tg_half_scaled_fp32. */
extern struct starpu_codelet tg_cl_half_scaled;
void tg_half_scaled_cpu(void *buffers[], void *cl_arg);
void tg_half_scaled_cuda(void *buffers[], void *cl_arg);
int tg_insert_half_scaled(starpu_data_handle_t t, starpu_data_handle_t t16,
                          starpu_data_handle_t alpha, int priority);

/** The exponent e of half_scaled's scale 2^(14 − e) for a largest |entry| m: m < 2^e (frexp),
 * 0 for m zero or not finite, at least −100 (the scale stays a finite float). The one rule of the
 * CPU and the CUDA function. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline int tg_half_scale_exp(float m) {
    int e = 0;
    if (m > 0 && isfinite(m)) frexpf(m, &e);
    return e < -100 ? -100 : e;
}

/* ---- convt: dst (cols × rows) = round_FP8(srcᵀ · scale), src FP32 or FP64: the transposed
 * FP8 copy of a panel tile that cuBLASLt's TN layout needs (the paper, section V-B.3). The
 * conversion codelet's functions with transpose set (struct tg_convert_arg), under perfmodels of
 * their own (tg_convt_<from>_fp8): a transposed store has its own speed. */
extern struct starpu_codelet tg_cl_convt[TG_NPREC];
int tg_insert_convt(starpu_data_handle_t src, tg_prec from, starpu_data_handle_t dst, double scale,
                    int priority);

/** Builds the tables above; called from tg_codelets_init(). */
void tg_gemm_codelets_init(void);

#ifdef TG_USE_CUDA
/** Device scratch of the calling CUDA worker, slot 0..4, grown to at least @p bytes (kept for
 * the worker's lifetime: the codelets reuse it task after task). */
void *tg_cuda_scratch(int slot, size_t bytes);
#endif

#ifdef __cplusplus
}
#endif
#endif
