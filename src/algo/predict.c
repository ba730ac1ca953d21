/* KRR Predict (the KRR paper's Algorithm 4 line 6): P = K_t·W by tile GEMMs in W's precision,
 * the test-train kernel tiles raised or lowered to it once each (a tile is read by every column
 * tile of W); and the prediction metrics of section VII-B (MSPE, Pearson r). Several MPI ranks:
 * each GEMM runs on the owner of the P tile it updates (converted K_t tiles belong to the
 * owner of P's tile (i, 0), so K_t tiles travel in their stored precision), and P is gathered
 * on every rank at the end. */
#include <math.h>
#include <stdlib.h>

#include "codelets/gemm.h"
#include "runtime/runtime.h"
#include "tile/matrix.h"

static tg_status check(const tg_matrix *Kt, const tg_matrix *W, tg_prec *w, tg_error *err) {
    if (Kt->shape != TG_GENERAL || W->shape != TG_GENERAL)
        return tg_error_set(err, TG_ERR_ARG, "KRR predict: Kt and W must be general matrices");
    if (Kt->n != W->m || Kt->nb != W->mb)
        return tg_error_set(err, TG_ERR_ARG,
                            "KRR predict: Kt has %lld columns in tiles of %d, W %lld rows in "
                            "tiles of %d",
                            (long long)Kt->n, Kt->nb, (long long)W->m, W->mb);
    *w = W->prec[0];
    for (size_t t = 0; t < (size_t)W->mt * W->nt; t++)
        if (W->prec[t] != *w || (*w != TG_FP64 && *w != TG_FP32) || W->scale[t] != 1)
            return tg_error_set(err, TG_ERR_ARG,
                                "KRR predict: every tile of W must be fp64, or every tile fp32, "
                                "unscaled (tile %zu is %s)", t, tg_prec_name(W->prec[t]));
    return TG_OK;
}

tg_status tg_krr_predict_tiles(const tg_matrix *Kt, const tg_matrix *W, double *pred, int64_t ldp,
                               tg_error *err) {
    tg_prec w = TG_FP64;
    tg_status st = check(Kt, W, &w, err);
    if (st) return st;
    if (ldp < Kt->m)
        return tg_error_set(err, TG_ERR_ARG, "KRR predict: leading dimension %lld < %lld rows",
                            (long long)ldp, (long long)Kt->m);
    tg_matrix *P = NULL;
    /* P starts at zero (StarPU refuses to read a tile never written): pred is the zero source */
    for (int64_t c = 0; c < W->n; c++)
        for (int64_t i = 0; i < Kt->m; i++) pred[i + c * ldp] = 0;
    if ((st = tg_matrix_create(&P, Kt->m, W->n, Kt->mb, W->nb, TG_GENERAL, w, 0, 0, err)) ||
        (st = tg_matrix_from_dense(P, pred, ldp, err))) {
        tg_matrix_destroy(P);
        return st;
    }
    int bad = 0;
    tg_phase *ph = tg_phase_open("predict", "flop", -1);
    for (int i = 0; i < Kt->mt; i++)
        for (int k = 0; k < Kt->nt; k++) {
            size_t t = tg_tile_index(Kt, i, k);
            tg_handle a = Kt->h[t];
            int own = Kt->prec[t] != w || Kt->scale[t] != 1;
            if (own) {
                int rows, cols;
                tg_matrix_tile_dims(Kt, i, k, &rows, &cols);
                a = tg_tile_temp(rows, cols, w, tg_matrix_tile_owner(P, i, 0));
                tg_runtime_home(a, tg_matrix_tile_home(Kt, i, k));
                bad |= tg_insert_convert(Kt->h[t], a, Kt->prec[t], w, 1 / Kt->scale[t], 0);
            }
            for (int c = 0; c < W->nt; c++)
                bad |= tg_insert_gemm(w, 'N', 'N', 1, a, 1, tg_tile(W, k, c), 1, 1,
                                      tg_tile(P, i, c), 1, 0);
            if (own) tg_handle_free_later(a);
            /* read by the tasks above only: other ranks drop their copies (with several α it
             * is sent again for each, rather than kept through the next factorisation) */
            tg_runtime_flush(Kt->h[t]);
        }
    tg_phase_close(ph);
    tg_runtime_wait_all();
    if (bad)
        st = tg_error_set(err, TG_ERR_RUNTIME, "KRR predict: StarPU refused a task");
    else
        st = tg_matrix_to_dense(P, pred, ldp, err);
    tg_matrix_destroy(P);
    return st;
}

void tg_pred_metrics(const double *y, const double *pred, int64_t n, double *mspe, double *r,
                     int64_t *nobs) {
    int64_t m = 0;
    double sy = 0, sp = 0, se = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(y[i])) {
            m++;
            sy += y[i];
            sp += pred[i];
            se += (y[i] - pred[i]) * (y[i] - pred[i]);
        }
    *nobs = m;
    *mspe = m ? se / m : NAN;
    *r = NAN;
    if (m < 2) return;
    /* two passes (means first): no cancellation when the means dwarf the spread */
    double my = sy / m, mp = sp / m, cyy = 0, cpp = 0, cyp = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(y[i])) {
            cyy += (y[i] - my) * (y[i] - my);
            cpp += (pred[i] - mp) * (pred[i] - mp);
            cyp += (y[i] - my) * (pred[i] - mp);
        }
    if (cyy > 0 && cpp > 0) *r = cyp / sqrt(cyy * cpp);
}
