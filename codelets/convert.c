/* Tile precision conversion: the CPU function (the reference: tg_prec_load/tg_prec_store), the
 * codelet table indexed by (from, to), and the tile statistics of the precision map. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codelets/codelets.h"
#include "runtime/runtime.h"

struct starpu_codelet tg_cl_convert[TG_NPREC][TG_NPREC];
static struct starpu_perfmodel convert_models[TG_NPREC][TG_NPREC];
/* perfmodel symbols must outlive the models */
static char convert_symbols[TG_NPREC][TG_NPREC][40];
struct starpu_codelet tg_cl_tilestats[TG_NPREC];
static struct starpu_perfmodel stats_models[TG_NPREC];
static char stats_symbols[TG_NPREC][40];

void tg_convert_codelets_init(void) {
    static const enum starpu_data_access_mode modes[2] = {STARPU_R, STARPU_W};
    static const struct tg_codelet_hints memory = {TG_B_MEMORY, 1};
    for (int a = 0; a < TG_NPREC; a++)
        for (int b = 0; b < TG_NPREC; b++) {
            snprintf(convert_symbols[a][b], sizeof convert_symbols[a][b], "tg_convert_%s_%s",
                     tg_prec_name((tg_prec)a), tg_prec_name((tg_prec)b));
            tg_codelet_fill(&tg_cl_convert[a][b], &convert_models[a][b], convert_symbols[a][b],
                            tg_convert_cpu, TG_CUDA_FN(tg_convert_cuda), 2, modes, memory);
        }
    static const struct tg_codelet_family stats = {"tg_tilestats_%s", tg_cl_tilestats,
                                                   tg_tilestats_cpu, TG_CUDA_FN(tg_tilestats_cuda),
                                                   2, modes, {TG_B_MEMORY, 1}};
    tg_codelet_families_fill(&stats, 1, NULL, 0, &stats_models, &stats_symbols);
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

void tg_tile_stats(tg_prec p, const void *t, size_t ld, size_t rows, size_t cols, int diag,
                   double inv_scale, double out[3]) {
    double sum = 0, mx = 0, dm = 0;
    for (size_t j = 0; j < cols; j++)
        for (size_t i = diag ? j : 0; i < rows; i++) {
            double v = tg_prec_load(p, t, i + j * ld) * inv_scale;
            sum += (diag && i != j ? 2 : 1) * v * v;
            if (fabs(v) > mx) mx = fabs(v);
            if (diag && i == j && v > dm) dm = v;
        }
    out[0] = sum;
    out[1] = mx;
    out[2] = dm;
}

void tg_tilestats_cpu(void *buffers[], void *cl_arg) {
    struct tg_tilestats_arg a;
    starpu_codelet_unpack_args(cl_arg, &a);
    tg_tile_stats(a.prec, (const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
                  STARPU_MATRIX_GET_LD(buffers[0]), STARPU_MATRIX_GET_NX(buffers[0]),
                  STARPU_MATRIX_GET_NY(buffers[0]), a.diag, a.inv_scale,
                  (double *)STARPU_VARIABLE_GET_PTR(buffers[1]));
}

int tg_insert_tilestats(starpu_data_handle_t tile, starpu_data_handle_t out, tg_prec p, int diag,
                        double inv_scale, int priority) {
    struct tg_tilestats_arg a = {p, diag, inv_scale};
    size_t n = starpu_matrix_get_nx(tile) * starpu_matrix_get_ny(tile);
    return TG_INSERT(&tg_cl_tilestats[p], STARPU_R, tile, STARPU_W, out, STARPU_VALUE, &a, sizeof a,
                     STARPU_PRIORITY, priority, STARPU_FLOPS, 3.0 * (double)n, 0);
}
