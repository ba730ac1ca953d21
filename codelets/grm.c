/* The GRM's FP64 tile on the CPU and its codelets. Z is widened 1,024 SNPs at a time into two
 * malloc'd panels (the FP64 copy of a whole panel would be 8× the encodings), each chunk added
 * by DSYRK (diagonal tiles) or DGEMM, OpenBLAS running one thread per worker. */
#include "codelets/grm.h"

#include <cblas.h>
#include <stdlib.h>

#include "runtime/runtime.h"

struct starpu_codelet tg_cl_grm, tg_cl_grm_sym;
static struct starpu_perfmodel model_grm, model_grm_sym;

enum { KC = 1024 }; /* SNPs widened at a time */

/* Z of SNPs [k0, k0 + kc) of the @p cols samples of panel @p e (leading dimension @p lde) into
 * z (kc × cols). */
static void widen(const int8_t *e, size_t lde, size_t cols, const double *off, const double *w,
                  size_t k0, size_t kc, double *z) {
    for (size_t c = 0; c < cols; c++)
        for (size_t t = 0; t < kc; t++) {
            int8_t v = e[k0 + t + c * lde];
            z[t + c * kc] = v == TG_GRM_MISS ? 0 : (v - off[k0 + t]) * w[k0 + t];
        }
}

static void grm_tile(void *bi, void *bj, void *bv, void *bs, int sym) {
    const int8_t *ei = (const int8_t *)STARPU_MATRIX_GET_PTR(bi),
                 *ej = (const int8_t *)STARPU_MATRIX_GET_PTR(bj);
    const size_t k = STARPU_MATRIX_GET_NX(bi), ldi = STARPU_MATRIX_GET_LD(bi),
                 ldj = STARPU_MATRIX_GET_LD(bj);
    const double *off = (const double *)STARPU_VECTOR_GET_PTR(bv), *w = off + k;
    double *s = (double *)STARPU_MATRIX_GET_PTR(bs);
    const size_t cols = STARPU_MATRIX_GET_NX(bs), rows = STARPU_MATRIX_GET_NY(bs),
                 lds = STARPU_MATRIX_GET_LD(bs), kc0 = k < KC ? k : KC;
    double *za = tg_malloc_n((int64_t)(rows + (sym ? 0 : cols)), (int64_t)kc0, sizeof *za, NULL),
           *zb = sym ? za : za + rows * kc0;
    if (!za) STARPU_ABORT_MSG("out of memory for a %zu x %zu GRM tile", rows, cols);
    for (size_t k0 = 0; k0 < k; k0 += KC) {
        const size_t kc = k - k0 < KC ? k - k0 : KC;
        const double beta = k0 ? 1 : 0; /* the first chunk overwrites S */
        widen(ei, ldi, rows, off, w, k0, kc, za);
        if (sym) {
            cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, (int)rows, (int)kc, 1.0, za,
                        (int)kc, beta, s, (int)lds);
        } else {
            widen(ej, ldj, cols, off, w, k0, kc, zb);
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)cols, (int)rows, (int)kc,
                        1.0, zb, (int)kc, za, (int)kc, beta, s, (int)lds);
        }
    }
    free(za);
}

void tg_grm_cpu(void *buffers[], void *cl_arg) {
    (void)cl_arg;
    grm_tile(buffers[0], buffers[1], buffers[2], buffers[3], 0);
}

void tg_grm_sym_cpu(void *buffers[], void *cl_arg) {
    (void)cl_arg;
    grm_tile(buffers[0], buffers[0], buffers[1], buffers[2], 1);
}

int tg_insert_grm(starpu_data_handle_t ei, starpu_data_handle_t ej, starpu_data_handle_t v,
                  starpu_data_handle_t s, int priority) {
    const double k = starpu_matrix_get_nx(ei), rows = starpu_matrix_get_ny(ei),
                 cols = starpu_matrix_get_ny(ej);
    if (ei == ej) /* the triangle with the diagonal */
        return TG_INSERT(&tg_cl_grm_sym, STARPU_R, ei, STARPU_R, v, STARPU_W, s, STARPU_PRIORITY,
                         priority, STARPU_FLOPS, k * rows * (rows + 1), 0);
    return TG_INSERT(&tg_cl_grm, STARPU_R, ei, STARPU_R, ej, STARPU_R, v, STARPU_W, s,
                     STARPU_PRIORITY, priority, STARPU_FLOPS, 2 * k * rows * cols, 0);
}

void tg_grm_codelets_init(void) {
    static const enum starpu_data_access_mode rrrw[4] = {STARPU_R, STARPU_R, STARPU_R, STARPU_W},
                                              rrw[3] = {STARPU_R, STARPU_R, STARPU_W};
    tg_codelet_fill(&tg_cl_grm, &model_grm, "tg_grm_fp64", tg_grm_cpu, TG_CUDA_FN(tg_grm_cuda), 4,
                    rrrw, (struct tg_codelet_hints){TG_B_DOT, 0});
    tg_codelet_fill(&tg_cl_grm_sym, &model_grm_sym, "tg_grm_sym_fp64", tg_grm_sym_cpu,
                    TG_CUDA_FN(tg_grm_sym_cuda), 3, rrw, (struct tg_codelet_hints){TG_B_DOT, 0});
}
