/* Diagonal-tile codelets: potrf and trtri on the CPU (LAPACKE), their tables and insert helpers. */
#include "codelets/potrf.h"

#include <lapacke.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

struct starpu_codelet tg_cl_potrf[TG_NPREC], tg_cl_trtri[TG_NPREC];
static struct starpu_perfmodel models[2][TG_NPREC];
static char symbols[2][TG_NPREC][40];

/* Zeroes the strict upper triangle of an n × n tile, so the tile holds exactly L. */
static void zero_upper(tg_prec p, void *a, size_t ld, size_t n) {
    size_t es = tg_prec_size(p);
    for (size_t j = 1; j < n; j++) memset((char *)a + j * ld * es, 0, j * es);
}

void tg_potrf_cpu(void *buffers[], void *cl_arg) {
    struct tg_potrf_arg s;
    starpu_codelet_unpack_args(cl_arg, &s);
    void *a = (void *)STARPU_MATRIX_GET_PTR(buffers[0]);
    int n = (int)STARPU_MATRIX_GET_NX(buffers[0]), ld = (int)STARPU_MATRIX_GET_LD(buffers[0]);
    int *info = (int *)STARPU_VARIABLE_GET_PTR(buffers[1]);
    *info = s.prec == TG_FP64 ? LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, a, ld)
                              : LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', n, a, ld);
    zero_upper(s.prec, a, (size_t)ld, (size_t)n);
}

void tg_trtri_cpu(void *buffers[], void *cl_arg) {
    struct tg_trtri_arg s;
    starpu_codelet_unpack_args(cl_arg, &s);
    const char *l = (const char *)STARPU_MATRIX_GET_PTR(buffers[0]);
    char *t = (char *)STARPU_MATRIX_GET_PTR(buffers[1]);
    size_t n = STARPU_MATRIX_GET_NX(buffers[0]), es = tg_prec_size(s.prec);
    size_t ldl = STARPU_MATRIX_GET_LD(buffers[0]), ldt = STARPU_MATRIX_GET_LD(buffers[1]);
    for (size_t j = 0; j < n; j++) memcpy(t + j * ldt * es, l + j * ldl * es, n * es);
    /* L is non-singular (potrf succeeded before this task), so info is 0 */
    if (s.prec == TG_FP64)
        LAPACKE_dtrtri(LAPACK_COL_MAJOR, 'L', 'N', (int)n, (double *)t, (int)ldt);
    else
        LAPACKE_strtri(LAPACK_COL_MAJOR, 'L', 'N', (int)n, (float *)t, (int)ldt);
}

int tg_insert_potrf(tg_prec p, starpu_data_handle_t a, starpu_data_handle_t info, int priority) {
    struct tg_potrf_arg s = {p};
    double n = (double)starpu_matrix_get_nx(a);
    return TG_INSERT(&tg_cl_potrf[p], STARPU_RW, a, STARPU_W, info, STARPU_VALUE, &s, sizeof s,
                     STARPU_PRIORITY, priority, STARPU_FLOPS, n * n * n / 3, 0);
}

int tg_insert_trtri(tg_prec p, starpu_data_handle_t l, starpu_data_handle_t t, int priority) {
    struct tg_trtri_arg s = {p};
    double n = (double)starpu_matrix_get_nx(l);
    return TG_INSERT(&tg_cl_trtri[p], STARPU_R, l, STARPU_W, t, STARPU_VALUE, &s, sizeof s,
                     STARPU_PRIORITY, priority, STARPU_FLOPS, n * n * n / 3, 0);
}

void tg_potrf_codelets_init(void) {
    static const enum starpu_data_access_mode potrf_modes[2] = {STARPU_RW, STARPU_W},
                                              trtri_modes[2] = {STARPU_R, STARPU_W};
    static const struct tg_codelet_family fam[2] = {
        {"tg_potrf_%s", tg_cl_potrf, tg_potrf_cpu, TG_CUDA_FN(tg_potrf_cuda), 2, potrf_modes,
         {TG_B_PANEL, 0}},
        {"tg_trtri_%s", tg_cl_trtri, tg_trtri_cpu, TG_CUDA_FN(tg_trtri_cuda), 2, trtri_modes,
         {TG_B_PANEL, 0}}};
    tg_codelet_families_fill(fam, 2, NULL, 0, models, symbols);
}
