/* Multi-RHS solve with a tile Cholesky factor (the KRR paper's Algorithm 3 line 5): L·Lᵀ·W = B,
 * forward then backward substitution by tiles in B's precision. Diagonal tiles are inverted once
 * (trtri) and applied as GEMMs on the GPU (tg_cl_trsm); off-diagonal L tiles stored in another
 * precision are raised to B's for each sweep (a copy per use: each is read twice in all).
 * Several MPI ranks: tasks run on the owner of the B tile they write; a raised copy of L_ik
 * belongs to the owner of the B tile its updates write, so StarPU-MPI sends L_ik in its stored
 * (lower) precision and the receiver raises it; an inverse belongs to the owner of L_kk. The
 * copies of L_ik other ranks received are dropped after its last read, in the backward sweep. */
#include <stdlib.h>

#include "codelets/gemm.h"
#include "codelets/potrf.h"
#include "runtime/runtime.h"
#include "tile/matrix.h"

/* L tile (i, k) in precision b: the tile itself or a copy raised on rank @p owner (*own set:
 * unregister after). */
static tg_handle in_prec(const tg_matrix *L, int i, int k, tg_prec b, int owner,
                                    int *own, int *bad) {
    size_t t = tg_tile_index(L, i, k);
    *own = L->prec[t] != b || L->scale[t] != 1;
    if (!*own) return L->h[t];
    int rows, cols;
    tg_matrix_tile_dims(L, i, k, &rows, &cols);
    tg_handle h = tg_tile_temp(rows, cols, b, owner);
    tg_runtime_home(h, tg_matrix_tile_home(L, i, k));
    *bad |= tg_insert_convert(L->h[t], h, L->prec[t], b, 1 / L->scale[t], 0);
    return h;
}

static tg_status check(const tg_matrix *L, const tg_matrix *B, tg_prec *b, tg_error *err) {
    if (L->shape != TG_SYM_LOWER || B->shape != TG_GENERAL)
        return tg_error_set(err, TG_ERR_ARG,
                            "Cholesky solve: L must be symmetric-lower and B general");
    if (B->m != L->m || B->mb != L->mb)
        return tg_error_set(err, TG_ERR_ARG,
                            "Cholesky solve: B has %lld rows in tiles of %d, L %lld in tiles of %d",
                            (long long)B->m, B->mb, (long long)L->m, L->mb);
    *b = B->prec[0];
    for (size_t t = 0; t < (size_t)B->mt * B->nt; t++)
        if (B->prec[t] != *b || (*b != TG_FP64 && *b != TG_FP32) || B->scale[t] != 1)
            return tg_error_set(err, TG_ERR_ARG,
                                "Cholesky solve: every tile of B must be fp64, or every tile fp32, "
                                "unscaled (tile %zu is %s)", t, tg_prec_name(B->prec[t]));
    for (int k = 0; k < L->nt; k++)
        if (L->prec[tg_tile_index(L, k, k)] != TG_FP64 && L->prec[tg_tile_index(L, k, k)] != TG_FP32)
            return tg_error_set(err, TG_ERR_ARG,
                                "Cholesky solve: diagonal tile (%d, %d) of L is %s, not fp64/fp32",
                                k, k, tg_prec_name(L->prec[tg_tile_index(L, k, k)]));
    return TG_OK;
}

tg_status tg_chol_solve(const tg_matrix *L, tg_matrix *B, tg_error *err) {
    tg_prec b = TG_FP64;
    tg_status st = check(L, B, &b, err);
    if (st) return st;
    int nt = L->nt, nc = B->nt, bad = 0;
    tg_handle *inv = tg_calloc_n(nt, 1, sizeof *inv, err);
    if (!inv) return TG_ERR_NOMEM;
    tg_phase *ph = tg_phase_open("solve", "flop", -1);
    /* inverses of the diagonal tiles, in B's precision, kept for both sweeps */
    for (int k = 0; k < nt; k++) {
        int own, kb, owner = tg_matrix_tile_owner(L, k, k);
        tg_matrix_tile_dims(L, k, k, &kb, &kb);
        tg_handle lkk = in_prec(L, k, k, b, owner, &own, &bad);
        inv[k] = tg_tile_temp(kb, kb, b, owner);
        tg_runtime_home(inv[k], tg_matrix_tile_home(L, k, k));
        bad |= tg_insert_trtri(b, lkk, inv[k], 2 * nt - k);
        if (own) tg_handle_free_later(lkk);
    }
    /* forward: B_k ← L_kk⁻¹·B_k, then B_i −= L_ik·B_k below */
    for (int k = 0; k < nt; k++) {
        for (int c = 0; c < nc; c++)
            bad |= tg_insert_trsm(b, 'L', 'N', inv[k], NULL, tg_tile(B, k, c), 2 * nt - k);
        for (int i = k + 1; i < nt; i++) {
            int own;
            tg_handle lik = in_prec(L, i, k, b, tg_matrix_tile_owner(B, i, 0), &own, &bad);
            for (int c = 0; c < nc; c++)
                bad |= tg_insert_gemm(b, 'N', 'N', -1, lik, 1, tg_tile(B, k, c), 1, 1,
                                      tg_tile(B, i, c), 1, 2 * nt - k - (i - k));
            if (own) tg_handle_free_later(lik);
        }
    }
    /* backward: B_k −= Σ_{i>k} L_ikᵀ·B_i, then B_k ← L_kk⁻ᵀ·B_k */
    for (int k = nt - 1; k >= 0; k--) {
        for (int i = k + 1; i < nt; i++) {
            int own;
            tg_handle lik = in_prec(L, i, k, b, tg_matrix_tile_owner(B, k, 0), &own, &bad);
            for (int c = 0; c < nc; c++)
                bad |= tg_insert_gemm(b, 'T', 'N', -1, lik, 1, tg_tile(B, i, c), 1, 1,
                                      tg_tile(B, k, c), 1, k + 1);
            if (own) tg_handle_free_later(lik);
            tg_runtime_flush(tg_tile(L, i, k)); /* read for the last time: copies dropped */
        }
        for (int c = 0; c < nc; c++)
            bad |= tg_insert_trsm(b, 'L', 'T', inv[k], NULL, tg_tile(B, k, c), k + 1);
        tg_handle_free_later(inv[k]);
    }
    tg_phase_close(ph);
    tg_runtime_wait_all();
    free(inv);
    if (bad) return tg_error_set(err, TG_ERR_RUNTIME, "Cholesky solve: StarPU refused a task");
    return TG_OK;
}
