/* Tile BLAS-3 codelets (gemm, syrk, trsm by the inverse, the scaled FP16 copy of its T,
 * transposed FP8 copy): CPU functions on OpenBLAS, the codelet tables indexed by precision and
 * tg_insert_* helpers. The CPU path is the reference: FP16/FP8 operands are widened exactly to
 * FP32 scratch, the product runs in FP32 (FP64 for FP64 tiles) and the result is rounded once to
 * the tile's precision. */
#include "codelets/gemm.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/runtime.h"

struct starpu_codelet tg_cl_gemm[TG_NPREC], tg_cl_syrk[TG_NPREC], tg_cl_trsm[TG_NPREC],
    tg_cl_convt[TG_NPREC], tg_cl_half_scaled;
static struct starpu_perfmodel models[4][TG_NPREC], half_scaled_model;
static char symbols[4][TG_NPREC][40];

/* The precision the CPU computes in for tiles of precision p. */
static tg_prec compute_prec(tg_prec p) { return p == TG_FP64 ? TG_FP64 : TG_FP32; }

/* A matrix operand seen in the compute precision: the tile itself when it already is, otherwise
 * an exact widening into scratch (FP16 and FP8 values are exact in FP32). */
struct operand {
    void *p;
    int ld;
    void *scratch;
};

static struct operand widen(tg_prec p, tg_prec cp, void *buf) {
    struct operand o = {(void *)STARPU_MATRIX_GET_PTR(buf), (int)STARPU_MATRIX_GET_LD(buf), NULL};
    if (p == cp) return o;
    size_t rows = STARPU_MATRIX_GET_NX(buf), cols = STARPU_MATRIX_GET_NY(buf);
    o.scratch = tg_malloc_n((int64_t)rows, (int64_t)cols, tg_prec_size(cp), NULL);
    if (!o.scratch) STARPU_ABORT_MSG("out of memory widening a %zu x %zu tile", rows, cols);
    for (size_t j = 0; j < cols; j++)
        for (size_t i = 0; i < rows; i++)
            tg_prec_store(cp, o.scratch, i + j * rows, tg_prec_load(p, o.p, i + j * (size_t)o.ld));
    o.p = o.scratch;
    o.ld = (int)(rows > 0 ? rows : 1);
    return o;
}

/* Rounds a widened result back into its tile (one rounding) and frees the scratch. */
static void narrow(tg_prec p, tg_prec cp, void *buf, struct operand *o) {
    if (!o->scratch) return;
    size_t rows = STARPU_MATRIX_GET_NX(buf), cols = STARPU_MATRIX_GET_NY(buf);
    void *t = (void *)STARPU_MATRIX_GET_PTR(buf);
    size_t ld = STARPU_MATRIX_GET_LD(buf);
    for (size_t j = 0; j < cols; j++)
        for (size_t i = 0; i < rows; i++)
            tg_prec_store(p, t, i + j * ld, tg_prec_load(cp, o->scratch, i + j * rows));
    free(o->scratch);
}

static enum CBLAS_TRANSPOSE cblas_trans(char t) { return t == 'T' ? CblasTrans : CblasNoTrans; }

void tg_gemm_cpu(void *buffers[], void *cl_arg) {
    struct tg_gemm_arg g;
    starpu_codelet_unpack_args(cl_arg, &g);
    tg_prec cp = compute_prec(g.prec);
    int m = (int)STARPU_MATRIX_GET_NX(buffers[2]), n = (int)STARPU_MATRIX_GET_NY(buffers[2]);
    int k = (int)(g.ta == 'N' ? STARPU_MATRIX_GET_NY(buffers[0]) : STARPU_MATRIX_GET_NX(buffers[0]));
    tg_prec pc = g.prec == TG_FP8_E4M3 ? TG_FP16 : g.prec; /* C of the FP8 entry is FP16 */
    struct operand a = widen(g.prec, cp, buffers[0]), b = widen(g.prec, cp, buffers[1]),
                   c = widen(pc, cp, buffers[2]);
    /* on stored values: C·sc ← beta·C·sc + alpha·sc/(sa·sb) · (A·sa)(B·sb) */
    double alpha = g.alpha * g.sc / (g.sa * g.sb);
    if (cp == TG_FP64)
        cblas_dgemm(CblasColMajor, cblas_trans(g.ta), cblas_trans(g.tb), m, n, k, alpha, a.p, a.ld,
                    b.p, b.ld, g.beta, c.p, c.ld);
    else
        cblas_sgemm(CblasColMajor, cblas_trans(g.ta), cblas_trans(g.tb), m, n, k, (float)alpha,
                    a.p, a.ld, b.p, b.ld, (float)g.beta, c.p, c.ld);
    free(a.scratch);
    free(b.scratch);
    narrow(pc, cp, buffers[2], &c);
}

void tg_syrk_cpu(void *buffers[], void *cl_arg) {
    struct tg_syrk_arg s;
    starpu_codelet_unpack_args(cl_arg, &s);
    int n = (int)STARPU_MATRIX_GET_NX(buffers[1]), k = (int)STARPU_MATRIX_GET_NY(buffers[0]);
    int lda = (int)STARPU_MATRIX_GET_LD(buffers[0]), ldc = (int)STARPU_MATRIX_GET_LD(buffers[1]);
    void *a = (void *)STARPU_MATRIX_GET_PTR(buffers[0]), *c = (void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    if (s.prec == TG_FP16) {
        struct operand w = widen(TG_FP16, TG_FP32, buffers[0]);
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, k, -1.0f, w.p, w.ld, w.p, w.ld,
                    1.0f, c, ldc);
        free(w.scratch);
    } else if (s.prec == TG_FP64)
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, k, -1.0, a, lda, 1.0, c, ldc);
    else
        cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, n, k, -1.0f, a, lda, 1.0f, c, ldc);
}

void tg_trsm_cpu(void *buffers[], void *cl_arg) {
    struct tg_trsm_arg s;
    starpu_codelet_unpack_args(cl_arg, &s);
    tg_prec cp = compute_prec(s.prec);
    /* X is the last buffer. The fp16 entry: T16 and alpha before it, T = T16·alpha widened to
     * FP32 scratch (exactly: alpha is a power of two), X the FP16 tile, solved in FP32 scratch
     * and rounded back once */
    void *xb = buffers[tg_cl_trsm[s.prec].nbuffers - 1];
    struct operand t = widen(s.prec, cp, buffers[0]), x = widen(s.prec, cp, xb);
    if (t.scratch)
        cblas_sscal((int)(STARPU_MATRIX_GET_NX(buffers[0]) * STARPU_MATRIX_GET_NY(buffers[0])),
                    *(const float *)STARPU_VARIABLE_GET_PTR(buffers[1]), t.p, 1);
    int m = (int)STARPU_MATRIX_GET_NX(xb), n = (int)STARPU_MATRIX_GET_NY(xb);
    enum CBLAS_SIDE side = s.side == 'L' ? CblasLeft : CblasRight;
    if (cp == TG_FP64)
        cblas_dtrmm(CblasColMajor, side, CblasLower, cblas_trans(s.trans), CblasNonUnit, m, n, 1.0,
                    t.p, t.ld, x.p, x.ld);
    else
        cblas_strmm(CblasColMajor, side, CblasLower, cblas_trans(s.trans), CblasNonUnit, m, n, 1.0f,
                    t.p, t.ld, x.p, x.ld);
    free(t.scratch);
    narrow(s.prec, cp, xb, &x);
}

void tg_half_scaled_cpu(void *buffers[], void *cl_arg) {
    (void)cl_arg;
    const float *t = (const float *)STARPU_MATRIX_GET_PTR(buffers[0]);
    void *h = (void *)STARPU_MATRIX_GET_PTR(buffers[1]);
    size_t rows = STARPU_MATRIX_GET_NX(buffers[0]), cols = STARPU_MATRIX_GET_NY(buffers[0]),
           ld = STARPU_MATRIX_GET_LD(buffers[0]), ldh = STARPU_MATRIX_GET_LD(buffers[1]);
    float m = 0;
    for (size_t j = 0; j < cols; j++)
        for (size_t i = 0; i < rows; i++) m = fmaxf(m, fabsf(t[i + j * ld]));
    double sc = ldexp(1, 14 - tg_half_scale_exp(m));
    float *ab = (float *)STARPU_VARIABLE_GET_PTR(buffers[2]);
    ab[0] = (float)(1 / sc);
    ab[1] = 0;
    /* t·sc is exact in double: one rounding, to nearest even, as the GPU's */
    for (size_t j = 0; j < cols; j++)
        for (size_t i = 0; i < rows; i++)
            tg_prec_store(TG_FP16, h, i + j * ldh, t[i + j * ld] * sc);
}

static size_t dim(starpu_data_handle_t h, int which) {
    return which ? starpu_matrix_get_ny(h) : starpu_matrix_get_nx(h);
}

int tg_insert_gemm(tg_prec p, char ta, char tb, double alpha, starpu_data_handle_t a, double sa,
                   starpu_data_handle_t b, double sb, double beta, starpu_data_handle_t c, double sc,
                   int priority) {
    struct tg_gemm_arg g = {p, ta, tb, alpha, beta, sa, sb, sc};
    double flops = 2.0 * dim(c, 0) * dim(c, 1) * dim(a, ta == 'N');
    return TG_INSERT(&tg_cl_gemm[p], STARPU_R, a, STARPU_R, b, STARPU_RW, c, STARPU_VALUE, &g,
                     sizeof g, STARPU_PRIORITY, priority, STARPU_FLOPS, flops, 0);
}

int tg_insert_syrk(tg_prec p, starpu_data_handle_t a, starpu_data_handle_t c, int priority) {
    struct tg_syrk_arg s = {p};
    double flops = (p == TG_FP16 ? 2.0 : 1.0) * dim(c, 0) * dim(c, 0) * dim(a, 1);
    return TG_INSERT(&tg_cl_syrk[p], STARPU_R, a, STARPU_RW, c, STARPU_VALUE, &s, sizeof s,
                     STARPU_PRIORITY, priority, STARPU_FLOPS, flops, 0);
}

int tg_insert_trsm(tg_prec p, char side, char trans, starpu_data_handle_t t,
                   starpu_data_handle_t alpha, starpu_data_handle_t x, int priority) {
    struct tg_trsm_arg s = {p, side, trans};
    double flops = (double)dim(x, 0) * dim(x, 1) * dim(t, 0);
    starpu_data_handle_t h[3];
    int n = 0;
    h[n++] = t;
    if (p == TG_FP16) h[n++] = alpha;
    h[n++] = x;
    return TG_INSERT(&tg_cl_trsm[p], STARPU_DATA_ARRAY, h, n, STARPU_VALUE, &s, sizeof s,
                     STARPU_PRIORITY, priority, STARPU_FLOPS, flops, 0);
}

int tg_insert_half_scaled(starpu_data_handle_t t, starpu_data_handle_t t16,
                          starpu_data_handle_t alpha, int priority) {
    return TG_INSERT(&tg_cl_half_scaled, STARPU_R, t, STARPU_W, t16, STARPU_W, alpha,
                     STARPU_PRIORITY, priority, STARPU_FLOPS, 2.0 * dim(t, 0) * dim(t, 1), 0);
}

int tg_insert_convt(starpu_data_handle_t src, tg_prec from, starpu_data_handle_t dst, double scale,
                    int priority) {
    struct tg_convert_arg a = {from, TG_FP8_E4M3, scale, 1};
    return TG_INSERT(&tg_cl_convt[from], STARPU_R, src, STARPU_W, dst, STARPU_VALUE, &a, sizeof a,
                     STARPU_PRIORITY, priority, STARPU_FLOPS, (double)dim(src, 0) * dim(src, 1), 0);
}

void tg_gemm_codelets_init(void) {
    static const enum starpu_data_access_mode rrw[3] = {STARPU_R, STARPU_R, STARPU_RW},
                                              rw[2] = {STARPU_R, STARPU_RW},
                                              rwo[2] = {STARPU_R, STARPU_W},
                                              rww[3] = {STARPU_R, STARPU_W, STARPU_W};
    static const struct tg_codelet_family fam[4] = {
        {"tg_gemm_%s", tg_cl_gemm, tg_gemm_cpu, TG_CUDA_FN(tg_gemm_cuda), 3, rrw, {TG_B_GEMM, 0}},
        {"tg_syrk_%s", tg_cl_syrk, tg_syrk_cpu, TG_CUDA_FN(tg_syrk_cuda), 2, rw, {TG_B_SYRK, 0}},
        {"tg_trsm_%s", tg_cl_trsm, tg_trsm_cpu, TG_CUDA_FN(tg_trsm_cuda), 2, rw, {TG_B_TRSM, 0}},
        {"tg_convt_%s_fp8", tg_cl_convt, tg_convert_cpu, TG_CUDA_FN(tg_convert_cuda), 2, rwo,
         {TG_B_MEMORY, 1}},
    };
    tg_codelet_families_fill(fam, 4, NULL, 0, models, symbols);
    /* trsm's fp16 entry reads T16 and alpha, then X (the family's model and symbol) */
    tg_codelet_fill(&tg_cl_trsm[TG_FP16], &models[2][TG_FP16], symbols[2][TG_FP16], tg_trsm_cpu,
                    TG_CUDA_FN(tg_trsm_cuda), 3, rrw, fam[2].hints);
    tg_codelet_fill(&tg_cl_half_scaled, &half_scaled_model, "tg_half_scaled_fp32",
                    tg_half_scaled_cpu, TG_CUDA_FN(tg_half_scaled_cuda), 3, rww,
                    (struct tg_codelet_hints){TG_B_PANEL, 1});
}
