/* Mixed-precision tile Cholesky (the KRR paper's Associate phase, Algorithm 3 line 3): the
 * precision map (adaptive, from tile norms computed where the tiles are, or the hand-tuned
 * bands), then a right-looking sequential task flow over tiles. Per panel k: potrf of A_kk, its
 * inverse once (trtri), every panel tile A_ik ← A_ik·L_kk⁻ᵀ as a GEMM in the diagonal precision
 * (a tile stored in FP16 below an FP32 diagonal: in place, on FP16 tensor cores with FP32
 * accumulation on the GPU, with no FP32 copy of it, by the inverse's scaled FP16 copy made once
 * for the panel), then the trailing updates,
 * each in the precision of the tile it updates, from copies of the panel tiles in that
 * precision made once per panel. Tiles the map makes FP8 are stored in FP16: their updates take
 * FP8 operands and accumulate in FP16.
 * Several MPI ranks: every task goes through TG_INSERT, so it runs on the owner of the tile it
 * writes; temporaries belong to the rank that writes them (the inverse of L_kk, its FP16 copy
 * and that copy's scale to the owner of A_kk, a panel tile's raised and lowered copies to the
 * owner of the panel tile), so the copies in the precisions of the updates are what StarPU-MPI
 * sends; after panel k's updates the copies other ranks received of its tiles are dropped. The
 * map's statistics are summed over the ranks (each tile's come from its owner, the others add
 * zeros: exact), so every rank builds the same map. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/gemm.h"
#include "codelets/potrf.h"
#include "algo/cholesky.h"
#include "io/out.h"
#include "runtime/runtime.h"
#include "tile/matrix.h"

tg_chol_opts tg_chol_defaults(void) {
    tg_chol_opts o = {.eps = 1e-8,
                      .allowed = 1u << TG_FP64 | 1u << TG_FP32 | 1u << TG_FP16 | 1u << TG_FP8_E4M3,
                      .diag = TG_FP64,
                      .band = -1,
                      .map_out = NULL,
                      .tol = 0,
                      .shift = 0,
                      .lower_diag = 0,
                      .refill = NULL,
                      .refill_ctx = NULL,
                      .max_bytes = 0};
    return o;
}

/* Per-tile statistics (tg_cl_tilestats, where the tile is): Frobenius norm (of the symmetric
 * matrix: a diagonal tile counts its lower triangle twice, its diagonal once), largest |entry|,
 * largest diagonal entry of a diagonal tile. */
struct stats {
    double *norm, *maxabs, *dmax;
};

/* The statistics of A's lower tiles: read from the tiles, or with @p measure from the tasks it
 * inserts (the tiles as they will be built). */
static tg_status read_stats(const tg_matrix *A, tg_chol_measure measure, void *mctx,
                            struct stats *s, tg_error *err) {
    size_t n2 = (size_t)A->mt * A->nt;
    double *v = tg_calloc_n(3 * (int64_t)A->mt, A->nt, sizeof *v, err);
    tg_handle *h = tg_calloc_n(A->mt, A->nt, sizeof *h, err);
    int bad = 0;
    if (!v || !h) {
        free(v);
        free(h);
        return TG_ERR_NOMEM;
    }
    for (int j = 0; j < A->nt; j++)
        for (int i = j; i < A->mt; i++) {
            size_t t = tg_tile_index(A, i, j);
            tg_handle_variable(&h[t], &v[3 * t], 3 * sizeof *v);
            tg_runtime_register(h[t], tg_matrix_tile_owner(A, i, j));
            bad |= measure ? measure(mctx, A, i, j, h[t])
                           : tg_insert_tilestats(A->h[t], h[t], A->prec[t], i == j,
                                                 1 / A->scale[t], 0);
        }
    tg_runtime_wait_all();
    for (size_t t = 0; t < n2; t++)
        if (h[t]) tg_handle_free(h[t]); /* brings the values home (on the owner) */
    /* the other ranks' tiles are zeros here: the sum is every tile's, exactly, on every rank */
    tg_runtime_sum(v, 3 * (int64_t)n2, TG_FP64);
    for (size_t t = 0; t < n2; t++) {
        s->norm[t] = sqrt(v[3 * t]);
        s->maxabs[t] = v[3 * t + 1];
        s->dmax[t] = v[3 * t + 2];
    }
    free(v);
    free(h);
    return bad ? tg_error_set(err, TG_ERR_RUNTIME, "tile Cholesky: StarPU refused a statistics task")
               : TG_OK;
}

/* A bound on every value tile (i, j) takes during the factorisation: its entries, its
 * Schur-complement entries (|s_rc| ≤ √(s_rr·s_cc) ≤ √(a_rr·a_cc)) and its factor entries
 * (|l_rc| ≤ √a_rr), from the largest diagonal entries d of diagonal tiles i and j. */
static double range_bound(const tg_matrix *A, const struct stats *s, int i, int j) {
    double di = s->dmax[tg_tile_index(A, i, i)], dj = s->dmax[tg_tile_index(A, j, j)];
    return fmax(s->maxabs[tg_tile_index(A, i, j)], fmax(sqrt(di * dj), sqrt(di)));
}

/* Whether tile (i, j) may be FP16 or FP8, both stored in FP16 (unscaled): its range bound fits
 * FP16 with a factor 2 to spare (65,504 is FP16's largest value); FP8 also needs sides that are
 * multiples of 16 (cuBLASLt). */
static int low_fits(const tg_matrix *A, const struct stats *s, int i, int j, tg_prec p) {
    int rows, cols;
    tg_matrix_tile_dims(A, i, j, &rows, &cols);
    return range_bound(A, s, i, j) <= 32768 &&
           (p != TG_FP8_E4M3 || (rows % 16 == 0 && cols % 16 == 0));
}

/* The precisions tile (i, j) may take, least accurate first: allowed ∪ {diag}, none more
 * accurate than diag, FP16 and FP8 only where they fit. Returns the count. */
static int candidates(const tg_matrix *A, const tg_chol_opts *o, const struct stats *s, int i,
                      int j, tg_prec *c) {
    int n = 0;
    for (int p = TG_FP8_E4M3; p >= TG_FP64; p--) {
        if (!((o->allowed >> p & 1u) || p == (int)o->diag)) continue;
        if (tg_prec_unit_roundoff((tg_prec)p) < tg_prec_unit_roundoff(o->diag)) continue;
        if ((p == TG_FP8_E4M3 || p == TG_FP16) && !low_fits(A, s, i, j, (tg_prec)p)) continue;
        c[n++] = (tg_prec)p;
    }
    return n;
}

/* The scale of the FP8 copies of tile (i, j): the largest power of two s with
 * s·range_bound ≤ 448, so no value saturates. */
static double fp8_scale(const tg_matrix *A, const struct stats *s, int i, int j) {
    double b = range_bound(A, s, i, j);
    if (!(b > 0) || !isfinite(b)) return 1;
    int e;
    frexp(448.0 / b, &e); /* 448/b = f·2^e, f in [0.5, 1): 2^(e−1) ≤ 448/b */
    return ldexp(1.0, e - 1);
}

/* ‖A‖_F from the tile norms (off-diagonal tiles count twice: A is symmetric). */
static double total_norm(const tg_matrix *A, const struct stats *s) {
    double total = 0;
    for (int j = 0; j < A->nt; j++)
        for (int i = j; i < A->nt; i++) {
            double v = s->norm[tg_tile_index(A, i, j)];
            total += (i == j ? 1 : 2) * v * v;
        }
    return sqrt(total);
}

/* Builds the precision map (the precision of each tile's updates) for accuracy @p eps and the
 * FP8 scales (s8: the scale an FP8 copy of each tile uses). */
static void build_map(const tg_matrix *A, const tg_chol_opts *o, const struct stats *s,
                      double eps, double total, tg_prec *map, double *s8) {
    int nt = A->nt;
    int wband = o->band < 0 ? -1 : (int)lround(o->band * (nt - 1));
    for (int j = 0; j < nt; j++)
        for (int i = 0; i < nt; i++) {
            size_t t = tg_tile_index(A, i, j);
            map[t] = o->diag;
            s8[t] = 1;
            if (i > j) {
                s8[t] = fp8_scale(A, s, i, j);
                tg_prec c[TG_NPREC];
                int n = candidates(A, o, s, i, j, c);
                if (wband >= 0) {
                    map[t] = i - j <= wband ? o->diag : c[0];
                } else {
                    for (int k = 0; k < n; k++)
                        if (tg_prec_unit_roundoff(c[k]) * s->norm[t] <= eps * total / nt) {
                            map[t] = c[k];
                            break;
                        }
                }
            } else if (i == j) {
                s8[t] = fp8_scale(A, s, i, j);
            }
        }
}

/* Σ (u_p·‖A_ij‖_F)² over the tiles of @p map, both triangles (diagonal tiles once), with the
 * diagonal tiles in precision @p d. */
static double rounding2(const tg_matrix *A, const struct stats *s, const tg_prec *map, tg_prec d) {
    double sum = 0;
    for (int j = 0; j < A->nt; j++)
        for (int i = j; i < A->nt; i++) {
            size_t t = tg_tile_index(A, i, j);
            double e = tg_prec_unit_roundoff(i == j ? d : map[t]) * s->norm[t];
            sum += (i == j ? 1 : 2) * e * e;
        }
    return sum;
}

/* The final map's eps and the first-order bound on the solution's relative change: each entry
 * of tile (i, j) is rounded to its precision at most NT + 1 times (stored, after each of its
 * ≤ NT − 1 updates, after its panel step), each time by u_p times a value of the tile's size,
 * so ‖ΔA_ij‖_F ≲ (NT + 1)·u_p‖A_ij‖_F and ‖ΔA‖_F ≲ (NT + 1)·eps_map·‖A‖_F with
 * eps_map = √(Σ (u_p‖A_ij‖_F)²)/‖A‖_F (≤ eps under the rule: every tile within ε‖A‖_F/NT);
 * with λ_min(A) ≥ shift the solution moves by ≤ ‖ΔA‖₂/shift relatively (docs/DESIGN-NOTES.md,
 * "Tile Cholesky"). */
static void map_bound(const tg_matrix *A, const struct stats *s, const tg_prec *map, tg_prec d,
                      double total, double shift, tg_chol_report *r) {
    r->eps_map = total > 0 ? sqrt(rounding2(A, s, map, d)) / total : 0;
    r->bound = shift > 0 ? (A->nt + 1) * r->eps_map * total / shift : INFINITY;
}

/* tg_chol_opts.lower_diag: the diagonal tiles go to FP32 when every off-diagonal tile is FP32
 * or less accurate (none may be more accurate than the diagonal) and the rounding of the whole
 * map stays within the rule's budget (eps·‖A‖_F)². The diagonal tiles are where the critical
 * path runs (potrf, trtri, the panel solves), FP32 there lets the panels of FP16 tiles run on
 * tensor cores, and on a near-diagonal kernel they cost little of the budget, which the
 * off-diagonal tiles, far below their shares, leave mostly unused. */
static void lower_diagonal(const tg_matrix *A, tg_chol_opts *o, const struct stats *s,
                           tg_prec *map, double eps, double total) {
    if (!(o->lower_diag && o->tol > 0 && o->band < 0 && o->diag == TG_FP64 &&
          o->allowed >> TG_FP32 & 1u))
        return;
    for (int j = 0; j < A->nt; j++)
        for (int i = j + 1; i < A->nt; i++)
            if (map[tg_tile_index(A, i, j)] == TG_FP64) return;
    if (rounding2(A, s, map, TG_FP32) > eps * total * eps * total) return;
    o->diag = TG_FP32;
    for (int j = 0; j < A->nt; j++)
        for (int i = 0; i <= j; i++) map[tg_tile_index(A, i, j)] = TG_FP32; /* upper: diag */
}

/* After diagonal tile k failed under @p map: raises the least accurate precision "from" of
 * the leading block (tiles i, j ≤ k, the only ones tile k's values came from) to the next
 * precision "to" of allowed ∪ {diag}, in every tile of the matrix at "from" or less accurate:
 * the failure says a perturbation of that size is more than A's smallest eigenvalue takes, and
 * tiles at that level elsewhere perturb the later minors as much, so raising them now saves a
 * refactorisation each (FP16 → FP32 cuts u by 2¹³, a subset of the tiles would not). A block
 * all in its diagonal precision FP32 makes every tile FP64. Returns 0 when the block was all
 * FP64: nothing left to raise. */
static int raise_map(const tg_matrix *A, tg_chol_opts *o, int k, tg_prec *map, tg_chol_retry *rt) {
    tg_prec from = TG_FP64, to = TG_FP64;
    for (int j = 0; j <= k; j++)
        for (int i = j; i <= k; i++)
            if (map[tg_tile_index(A, i, j)] > from) from = map[tg_tile_index(A, i, j)];
    if (from == TG_FP64) return 0;
    if (from == o->diag) {
        o->diag = TG_FP64; /* every tile is at most as accurate as the diagonal: all FP64 */
    } else {
        for (int p = from - 1; p > TG_FP64 && to == TG_FP64; p--)
            if (o->allowed >> p & 1u || p == (int)o->diag) to = (tg_prec)p;
    }
    rt->tile = k;
    rt->from = from;
    rt->to = to;
    rt->raised = 0;
    for (int j = 0; j < A->nt; j++)
        for (int i = 0; i < A->nt; i++) { /* the upper entries follow the diagonal's */
            size_t t = tg_tile_index(A, i, j);
            if (map[t] >= from) {
                map[t] = to;
                rt->raised += i >= j;
            }
        }
    return 1;
}

/* tg_chol_opts.max_bytes: the lower tiles' bytes in their storage precisions @p store, per
 * rank, against the limit. */
static tg_status check_bytes(const tg_matrix *A, const tg_chol_opts *o, const tg_prec *store,
                             tg_error *err) {
    if (!(o->max_bytes > 0)) return TG_OK;
    double bytes = 0;
    for (int j = 0; j < A->nt; j++)
        for (int i = j; i < A->mt; i++) {
            int rows, cols;
            tg_matrix_tile_dims(A, i, j, &rows, &cols);
            bytes += (double)rows * cols * (double)tg_prec_size(store[tg_tile_index(A, i, j)]);
        }
    bytes /= tg_runtime_nranks();
    if (bytes <= o->max_bytes) return TG_OK;
    return tg_error_set(err, TG_ERR_NOMEM, "tile Cholesky: the precision map stores the matrix "
                        "in %.1f MiB a rank, more than the %.1f MiB allowed (the memory it "
                        "lives in): allow less accurate tiles or spread it over more GPUs or "
                        "ranks", bytes / 1048576, o->max_bytes / 1048576);
}

static tg_status check_opts(const tg_matrix *A, const tg_chol_opts *o, tg_error *err) {
    if (A->shape != TG_SYM_LOWER)
        return tg_error_set(err, TG_ERR_ARG, "tile Cholesky: the matrix must be symmetric-lower");
    if (o->diag != TG_FP64 && o->diag != TG_FP32)
        return tg_error_set(err, TG_ERR_ARG, "tile Cholesky: diagonal precision %s: must be fp64 or fp32",
                            tg_prec_name(o->diag));
    unsigned floats = 1u << TG_FP64 | 1u << TG_FP32 | 1u << TG_FP16 | 1u << TG_FP8_E4M3;
    if (o->allowed & ~floats)
        return tg_error_set(err, TG_ERR_ARG,
                            "tile Cholesky: allowed precisions 0x%x: only fp64, fp32, fp16, fp8",
                            o->allowed);
    if (o->band < 0 ? !(o->eps >= 0 && isfinite(o->eps)) : !(o->band <= 1))
        return tg_error_set(err, TG_ERR_ARG,
                            "tile Cholesky: eps %g / band %g: eps must be ≥ 0, band in [0, 1]",
                            o->eps, o->band);
    if (!(o->tol >= 0 && isfinite(o->tol) && o->shift >= 0 && isfinite(o->shift)))
        return tg_error_set(err, TG_ERR_ARG,
                            "tile Cholesky: tol %g, shift %g: both must be finite and ≥ 0", o->tol,
                            o->shift);
    return TG_OK;
}

/* Whether a tile stored in p below an FP32 diagonal takes the tensor-core panel paths: the
 * in-place FP16 panel solve (tg_cl_trsm's fp16 entry) and the FP16 diagonal update
 * (tg_cl_syrk's). */
static int below_fp32(tg_prec d, tg_prec p) { return d == TG_FP32 && p == TG_FP16; }

/* One panel's tiles: hi[i] is A_ik after the panel solve (the tile itself, or, own_hi[i], a
 * copy raised to the diagonal precision); cp[i][q] the copy in precision q the trailing updates
 * read. */
struct panel {
    tg_handle *hi, *cp; /* cp: nt × TG_NPREC */
    unsigned char *own_hi, *own_cp;
    double *cp_scale;
};

/* The precision and scale of panel tile (i, k) after its solve: those of the tile when it is
 * solved in place, the diagonal precision d and 1 for a raised copy. */
static tg_prec solved_prec(const tg_matrix *A, const struct panel *pn, int i, int k, tg_prec d) {
    return pn->own_hi[i] ? d : A->prec[tg_tile_index(A, i, k)];
}
static double solved_scale(const tg_matrix *A, const struct panel *pn, int i, int k) {
    return pn->own_hi[i] ? 1 : A->scale[tg_tile_index(A, i, k)];
}

/* The copy of panel tile (i, k) in precision q, made on first request. */
static tg_handle panel_copy(tg_matrix *A, struct panel *pn, const double *s8, int i,
                                       int k, tg_prec q, tg_prec d, int prio, int64_t *copies,
                                       int *bad) {
    size_t c = (size_t)i * TG_NPREC + q, t = tg_tile_index(A, i, k);
    if (pn->cp[c]) return pn->cp[c];
    int rows, cols;
    tg_matrix_tile_dims(A, i, k, &rows, &cols);
    tg_prec hp = solved_prec(A, pn, i, k, d);
    double hs = solved_scale(A, pn, i, k);
    if (q == hp) {
        pn->cp[c] = pn->hi[i];
        pn->cp_scale[c] = hs;
    } else if (q == A->prec[t] && q != TG_FP8_E4M3) {
        pn->cp[c] = A->h[t];
        pn->cp_scale[c] = A->scale[t];
    } else if (q == TG_FP8_E4M3) { /* transposed: cuBLASLt's TN layout */
        pn->cp[c] = tg_matrix_tile_temp(A, i, k, cols, rows, q);
        pn->own_cp[c] = 1;
        pn->cp_scale[c] = s8[t];
        ++*copies;
        *bad |= tg_insert_convt(pn->hi[i], hp, pn->cp[c], s8[t] / hs, prio);
    } else {
        pn->cp[c] = tg_matrix_tile_temp(A, i, k, rows, cols, q);
        pn->own_cp[c] = 1;
        pn->cp_scale[c] = 1;
        ++*copies;
        *bad |= tg_insert_convert(pn->hi[i], pn->cp[c], hp, q, 1 / hs, prio);
    }
    return pn->cp[c];
}

static tg_status factor(tg_matrix *A, const tg_chol_opts *o, const tg_prec *map,
                        const double *s8, int *info,
                        tg_chol_report *r, tg_error *err) {
    int nt = A->nt;
    tg_prec d = o->diag;
    struct panel pn = {0};
    tg_handle *hinfo = tg_calloc_n(nt, 1, sizeof *hinfo, err);
    int64_t *linfo = tg_calloc_n(nt, 1, sizeof *linfo, err);
    pn.hi = tg_calloc_n(nt, 1, sizeof *pn.hi, err);
    pn.cp = tg_calloc_n(nt, TG_NPREC, sizeof *pn.cp, err);
    pn.own_hi = tg_calloc_n(nt, 1, 1, err);
    pn.own_cp = tg_calloc_n(nt, TG_NPREC, 1, err);
    pn.cp_scale = tg_calloc_n(nt, TG_NPREC, sizeof *pn.cp_scale, err);
    tg_status st = TG_OK;
    int bad = 0;
    if (!hinfo || !linfo || !pn.hi || !pn.cp || !pn.own_hi || !pn.own_cp || !pn.cp_scale) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    tg_phase *ph = tg_phase_open("cholesky", "flop", -1);
    for (int k = 0; k < nt; k++) {
        tg_handle_variable(&hinfo[k], &info[k], sizeof(int));
        tg_runtime_register(hinfo[k], tg_matrix_tile_owner(A, k, k));
        int top = 3 * nt - 3 * k; /* critical path first: potrf, then panel, then updates */
        bad |= tg_insert_potrf(d, tg_tile(A, k, k), hinfo[k], top + 2 * nt);
        if (k == nt - 1) break;
        int kb;
        tg_matrix_tile_dims(A, k, k, &kb, &kb);
        int kowner = tg_matrix_tile_owner(A, k, k);
        tg_handle linv = tg_matrix_tile_temp(A, k, k, kb, kb, d), linv16 = NULL, alpha = NULL;
        bad |= tg_insert_trtri(d, tg_tile(A, k, k), linv, top + 2 * nt);
        int any16 = 0;
        for (int i = k + 1; i < nt; i++) any16 |= below_fp32(d, A->prec[tg_tile_index(A, i, k)]);
        if (any16) { /* linv's scaled FP16 copy, once for the panel's FP16 solves */
            linv16 = tg_matrix_tile_temp(A, k, k, kb, kb, TG_FP16);
            tg_handle_variable(&alpha, NULL, 2 * sizeof(float)); /* alpha, beta */
            tg_runtime_register(alpha, kowner);
            tg_runtime_home(alpha, tg_matrix_tile_home(A, k, k));
            bad |= tg_insert_half_scaled(linv, linv16, alpha, top + 2 * nt);
        }
        for (int i = k + 1; i < nt; i++) {
            size_t t = tg_tile_index(A, i, k);
            int prio = top + nt - i;
            if (A->prec[t] == d || below_fp32(d, A->prec[t])) { /* solved in place */
                pn.hi[i] = A->h[t];
            } else { /* raise, solve in the diagonal precision, round back into the tile */
                int rows, cols;
                tg_matrix_tile_dims(A, i, k, &rows, &cols);
                pn.hi[i] = tg_matrix_tile_temp(A, i, k, rows, cols, d);
                pn.own_hi[i] = 1;
                bad |= tg_insert_convert(A->h[t], pn.hi[i], A->prec[t], d, 1 / A->scale[t], prio);
            }
            tg_prec sp = solved_prec(A, &pn, i, k, d); /* FP16: below FP32, by linv16 */
            bad |= tg_insert_trsm(sp, 'R', 'T', sp == TG_FP16 ? linv16 : linv, alpha, pn.hi[i],
                                  prio);
            if (pn.own_hi[i])
                bad |= tg_insert_convert(pn.hi[i], A->h[t], d, A->prec[t], A->scale[t], prio);
        }
        tg_handle_free_later(linv);
        if (linv16) {
            tg_handle_free_later(linv16);
            tg_handle_free_later(alpha);
        }
        for (int j = k + 1; j < nt; j++) {
            /* a panel tile stored in FP16 (map FP16 or FP8) updates an FP32 diagonal from its
             * FP16 storage, on tensor cores */
            tg_prec sp = below_fp32(d, A->prec[tg_tile_index(A, j, k)]) ? TG_FP16 : d;
            tg_handle aj =
                sp == d ? pn.hi[j]
                        : panel_copy(A, &pn, s8, j, k, sp, d, top - 2 * (j - k), &r->copies, &bad);
            bad |= tg_insert_syrk(sp, aj, tg_tile(A, j, j), top - 2 * (j - k));
            for (int i = j + 1; i < nt; i++) {
                size_t t = tg_tile_index(A, i, j);
                tg_prec q = map[t]; /* FP8 tiles: FP8 operands, updates into their FP16 */
                int prio = top - (i - k) - (j - k);
                tg_handle a = panel_copy(A, &pn, s8, i, k, q, d, prio, &r->copies, &bad),
                                     b = panel_copy(A, &pn, s8, j, k, q, d, prio, &r->copies, &bad);
                double sa = pn.cp_scale[(size_t)i * TG_NPREC + q],
                       sb = pn.cp_scale[(size_t)j * TG_NPREC + q];
                int fp8 = q == TG_FP8_E4M3;
                bad |= tg_insert_gemm(q, fp8 ? 'T' : 'N', fp8 ? 'N' : 'T', -1, a, sa, b, sb, 1, A->h[t],
                               A->scale[t], prio);
                r->gemms[q]++;
            }
        }
        /* the panel's copies are read by the tasks above only: free them when those are done
         * (unregistering frees every rank's copy); A_ik is final, and the copies other ranks
         * received of it are dropped likewise (the solve has it sent again) */
        for (int i = k + 1; i < nt; i++) {
            for (int q = 0; q < TG_NPREC; q++) {
                size_t c = (size_t)i * TG_NPREC + q;
                if (pn.own_cp[c]) tg_handle_free_later(pn.cp[c]);
                pn.cp[c] = NULL;
                pn.own_cp[c] = 0;
            }
            if (pn.own_hi[i]) tg_handle_free_later(pn.hi[i]);
            else tg_handle_wont_use(pn.hi[i]);
            pn.own_hi[i] = 0;
            tg_runtime_flush(A->h[tg_tile_index(A, i, k)]);
        }
    }
    tg_phase_close(ph);
    tg_runtime_wait_all();
    for (int k = 0; k < nt; k++)
        if (hinfo[k]) tg_handle_free(hinfo[k]);
    /* info[k] is set on the owner of A_kk, 0 elsewhere: every rank learns it */
    for (int k = 0; k < nt; k++) linfo[k] = info[k];
    tg_runtime_sum_int64(linfo, nt);
    for (int k = 0; k < nt; k++) info[k] = (int)linfo[k];
    if (bad) {
        st = tg_error_set(err, TG_ERR_RUNTIME, "tile Cholesky: StarPU refused a task");
        goto done;
    }
    for (int k = 0; k < nt; k++)
        if (info[k] > 0) {
            int kb;
            tg_matrix_tile_dims(A, k, k, &kb, &kb);
            st = tg_error_set(err, TG_ERR_NUMERIC,
                              "tile Cholesky: diagonal tile (%d, %d) is not positive definite in %s "
                              "(leading minor of order %d, global row %lld): the matrix is not SPD "
                              "at this precision; use a larger regularisation alpha (K + alpha·I) or "
                              "a more accurate precision map",
                              k, k, tg_prec_name(d), info[k], (long long)k * A->nb + info[k]);
            break;
        }
done:
    free(hinfo);
    free(linfo);
    free(pn.hi);
    free(pn.cp);
    free(pn.own_hi);
    free(pn.own_cp);
    free(pn.cp_scale);
    return st;
}

/* tg_cholesky, and with @p measure tg_cholesky_measured. */
static tg_status cholesky(tg_matrix *A, const tg_chol_opts *opts, tg_chol_measure measure,
                          void *mctx, tg_chol_report *rep, tg_error *err) {
    tg_chol_opts o = opts ? *opts : tg_chol_defaults();
    tg_chol_report r;
    memset(&r, 0, sizeof r);
    tg_status st = check_opts(A, &o, err);
    if (st) return st;
    if (measure && !o.refill)
        return tg_error_set(err, TG_ERR_ARG, "tile Cholesky: a map made before the tiles are "
                            "built needs a refill to build them");
    size_t n2 = (size_t)A->mt * A->nt;
    double t0 = tg_now();
    const int mt = A->mt, nt = A->nt;
    struct stats s = {tg_calloc_n(mt, nt, sizeof(double), err),
                      tg_calloc_n(mt, nt, sizeof(double), err),
                      tg_calloc_n(mt, nt, sizeof(double), err)};
    tg_prec *map = tg_malloc_n(mt, nt, sizeof *map, err),
            *store = tg_malloc_n(mt, nt, sizeof *store, err),
            *prec0 = tg_malloc_n(mt, nt, sizeof *prec0, err);
    double *s8 = tg_malloc_n(mt, nt, sizeof *s8, err),
           *scale0 = tg_malloc_n(mt, nt, sizeof *scale0, err);
    int *info = tg_calloc_n(A->nt, 1, sizeof *info, err);
    if (!s.norm || !s.maxabs || !s.dmax || !map || !store || !prec0 || !s8 || !scale0 || !info) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    /* what a refill writes into: the tiles as they came */
    memcpy(prec0, A->prec, n2 * sizeof *prec0);
    memcpy(scale0, A->scale, n2 * sizeof *scale0);
    if ((st = read_stats(A, measure, mctx, &s, err))) goto done;
    r.norm = total_norm(A, &s);
    r.eps = o.band >= 0 ? NAN
            : o.tol > 0  ? (r.norm > 0 ? o.tol * o.shift / ((A->nt + 1) * r.norm) : 0)
                         : o.eps;
    build_map(A, &o, &s, o.band >= 0 ? 0 : r.eps, r.norm, map, s8);
    lower_diagonal(A, &o, &s, map, r.eps, r.norm);
    for (;;) {
        for (size_t t = 0; t < n2; t++) store[t] = map[t] == TG_FP8_E4M3 ? TG_FP16 : map[t];
        if ((st = check_bytes(A, &o, store, err))) goto done;
        if (measure) { /* the tiles are built in the precisions they are stored in */
            double tb = tg_now();
            tg_matrix_retype(A, store, scale0);
            if ((st = o.refill(o.refill_ctx, A, err))) goto done;
            tg_runtime_wait_all();
            if (!r.retries) {
                r.build_seconds = tg_now() - tb;
                t0 += r.build_seconds; /* not the map's */
            }
        } else {
            if ((st = tg_matrix_convert(A, store, NULL, err))) goto done;
            tg_runtime_wait_all();
        }
        memset(r.tiles, 0, sizeof r.tiles);
        memset(r.gemms, 0, sizeof r.gemms);
        r.copies = 0;
        for (int j = 0; j < A->nt; j++)
            for (int i = j; i < A->mt; i++) r.tiles[map[tg_tile_index(A, i, j)]]++;
        map_bound(A, &s, map, o.diag, r.norm, o.shift, &r);
        r.diag = o.diag;
        if (o.map_out) memcpy(o.map_out, map, n2 * sizeof *map);
        if (r.retries) r.retry_seconds += tg_now() - t0;
        else r.map_seconds = tg_now() - t0;
        t0 = tg_now();
        memset(info, 0, (size_t)A->nt * sizeof *info);
        st = factor(A, &o, map, s8, info, &r, err);
        r.factor_seconds = tg_now() - t0;
        int k = 0;
        while (k < A->nt && info[k] <= 0) k++;
        tg_chol_retry *rt = &r.retry[r.retries];
        if (st != TG_ERR_NUMERIC || k == A->nt || !o.refill || r.retries == TG_CHOL_MAX_RETRIES)
            break;
        memcpy(rt->tiles, r.tiles, sizeof rt->tiles);
        if (!raise_map(A, &o, k, map, rt)) break; /* FP64 failed: the error stands */
        r.retries++;
        r.retry_seconds += r.factor_seconds;
        r.factor_seconds = 0;
        t0 = tg_now();
        if (measure) continue; /* the loop builds the tiles in the raised map */
        tg_matrix_retype(A, prec0, scale0);
        if ((st = o.refill(o.refill_ctx, A, err))) goto done;
    }
done:
    if (rep) *rep = r;
    free(s.norm);
    free(s.maxabs);
    free(s.dmax);
    free(map);
    free(store);
    free(prec0);
    free(s8);
    free(scale0);
    free(info);
    return st;
}

tg_status tg_cholesky(tg_matrix *A, const tg_chol_opts *o, tg_chol_report *r, tg_error *err) {
    return cholesky(A, o, NULL, NULL, r, err);
}

tg_status tg_cholesky_measured(tg_matrix *A, const tg_chol_opts *o, tg_chol_measure measure,
                               void *ctx, tg_chol_report *r, tg_error *err) {
    return cholesky(A, o, measure, ctx, r, err);
}
