/* Per-tile precision conversion of a tiled matrix by tasks (tg_insert_convert): the algorithm
 * above the descriptor, which only records each tile's precision and scale (src/tile). */
#include "codelets/codelets.h"
#include "runtime/runtime.h"
#include "tile/matrix.h"

unsigned tg_precisions_by_workers(unsigned with_gpus, unsigned cpu_only, const char **why) {
    const int gpus = tg_runtime_ngpu() > 0;
    if (why) *why = gpus ? "GPUs in use" : "CPU only: fp16 and fp8 tiles would save memory, not time";
    return gpus ? with_gpus : cpu_only;
}

tg_status tg_matrix_convert(tg_matrix *A, const tg_prec *map, const double *scale, tg_error *err) {
    for (size_t t = 0; t < (size_t)A->mt * A->nt; t++) {
        if (map[t] < 0 || map[t] >= TG_NPREC)
            return tg_error_set(err, TG_ERR_ARG, "precision map entry %zu: invalid precision %d",
                                t, (int)map[t]);
        if (scale && !tg_tile_scale_valid(scale[t]))
            return tg_error_set(err, TG_ERR_ARG,
                                "scale of tile %zu: %g is not a positive power of two", t,
                                scale[t]);
    }
    for (int j = 0; j < A->nt; j++)
        for (int i = 0; i < A->mt; i++) {
            size_t t = tg_tile_index(A, i, j);
            double s = scale ? scale[t] : 1;
            if (!A->h[t] || (map[t] == A->prec[t] && s == A->scale[t])) continue;
            tg_handle h = tg_matrix_new_tile(A, i, j, map[t]);
            int ret = tg_insert_convert(A->h[t], h, A->prec[t], map[t], s / A->scale[t], 0);
            if (ret)
                return tg_error_set(err, TG_ERR_RUNTIME, "cannot submit conversion of tile (%d, %d)",
                                    i, j);
            tg_handle_free_later(A->h[t]);
            A->h[t] = h;
            A->prec[t] = map[t];
            A->scale[t] = s;
        }
    return TG_OK;
}
