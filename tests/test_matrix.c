/* Tiled matrix: sizes not multiple of the tile, dense round trip, symmetric-lower storage,
 * per-tile precision maps and scales checked against each precision's rounding bound
 * |y − x| ≤ u_p·|x| (a closed form, independent of the conversion code), raw tile copies, and
 * bad arguments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "tap.h"
#include "tile/matrix.h"

static double *random_dense(int64_t m, int64_t n, tg_rng *r) {
    double *a = malloc((size_t)(m * n) * sizeof *a);
    /* magnitudes in [0.5, 2): no subnormals or overflow in any float precision */
    for (int64_t k = 0; k < m * n; k++)
        a[k] = (tg_rng_uniform(r) * 1.5 + 0.5) * (tg_rng_u64(r) & 1 ? 1 : -1);
    return a;
}

int main(void) {
    tg_error err = {0};
    tg_rng r;
    uint64_t seed = tap_seed();
    tg_rng_seed(&r, seed);
    tg_runtime_opts o = tg_runtime_defaults();
    if (tg_runtime_start(&o, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }

    /* general, 37 × 53 in 8 × 16 tiles: partial last tiles in both directions */
    const int64_t m = 37, n = 53;
    double *a = random_dense(m, n, &r), *b = malloc((size_t)(m * n) * sizeof *b);
    tg_matrix *A;
    ok(tg_matrix_create(&A, m, n, 8, 16, TG_GENERAL, TG_FP64, 0, 0, &err) == TG_OK, "create 37×53");
    int mt, nt, rows, cols;
    tg_matrix_size(A, NULL, NULL, &mt, &nt);
    tg_matrix_tile_dims(A, mt - 1, nt - 1, &rows, &cols);
    ok(mt == 5 && nt == 4 && rows == 5 && cols == 5, "tile counts 5×4, last tile 5×5");
    tg_matrix_from_dense(A, a, m, &err);
    tg_matrix_to_dense(A, b, m, &err);
    ok(memcmp(a, b, (size_t)(m * n) * sizeof *a) == 0, "fp64 dense round trip is exact");

    /* a map with every float precision, and FP8 tiles scaled by powers of two and non-powers */
    static const tg_prec cycle[] = {TG_FP64, TG_FP32, TG_FP16, TG_FP8_E4M3};
    tg_prec *map = malloc((size_t)(mt * nt) * sizeof *map);
    double *scale = malloc((size_t)(mt * nt) * sizeof *scale);
    for (int t = 0; t < mt * nt; t++) {
        map[t] = cycle[t % 4];
        scale[t] = t % 3 == 0 ? 1.0 : t % 3 == 1 ? 64.0 : 0x1p-3;
    }
    ok(tg_matrix_convert(A, map, scale, &err) == TG_OK, "convert to a mixed map");
    tg_matrix_to_dense(A, b, m, &err);
    int worst_ok = 1;
    for (int j = 0; j < nt; j++)
        for (int i = 0; i < mt; i++) {
            tg_prec p = tg_matrix_tile_prec(A, i, j);
            double u = tg_prec_unit_roundoff(p), s = tg_matrix_tile_scale(A, i, j);
            tg_matrix_tile_dims(A, i, j, &rows, &cols);
            double bound = u; /* power-of-two scales are exact */
            for (int c = 0; c < cols; c++)
                for (int rr = 0; rr < rows; rr++) {
                    int64_t k = (int64_t)i * 8 + rr + ((int64_t)j * 16 + c) * m;
                    if (fabs(b[k] - a[k]) > bound * fabs(a[k])) {
                        if (worst_ok) diag("tile (%d,%d) %s scale %g: %.17g vs %.17g", i, j,
                                           tg_prec_name(p), s, b[k], a[k]);
                        worst_ok = 0;
                    }
                }
            if (p != map[i + j * mt] || s != scale[i + j * mt]) worst_ok = 0;
        }
    ok(worst_ok, "every tile within its precision's bound u_p·|x|, map and scales recorded");

    /* back to FP64: the lowered values are kept exactly */
    double *c2 = malloc((size_t)(m * n) * sizeof *c2);
    for (int t = 0; t < mt * nt; t++) map[t] = TG_FP64;
    tg_matrix_convert(A, map, NULL, &err);
    tg_matrix_to_dense(A, c2, m, &err);
    ok(memcmp(b, c2, (size_t)(m * n) * sizeof *b) == 0, "raising back to fp64 is exact");
    tg_matrix_destroy(A);

    /* raw tiles (krr --save-model): a mixed map with scales, copied tile by tile into a matrix
     * created in fp64, has the same precisions, scales and values bit for bit (each rank reads
     * the tiles it owns; every rank writes every tile, as with tg_matrix_convert) */
    tg_matrix *R;
    tg_matrix_create(&A, m, n, 8, 16, TG_GENERAL, TG_FP64, 0, 0, &err);
    tg_matrix_create(&R, m, n, 8, 16, TG_GENERAL, TG_FP64, 0, 0, &err);
    tg_matrix_from_dense(A, a, m, &err);
    for (int t = 0; t < mt * nt; t++) map[t] = cycle[t % 4], scale[t] = t % 2 ? 0x1p-3 : 1;
    tg_matrix_convert(A, map, scale, &err);
    double *raw = malloc(8 * 16 * sizeof *raw);
    int raw_ok = 1;
    for (int j = 0; j < nt; j++)
        for (int i = 0; i < mt; i++) {
            tg_prec p = tg_matrix_tile_prec(A, i, j);
            double sc = tg_matrix_tile_scale(A, i, j);
            int mine = tg_matrix_tile_owner(A, i, j) == tg_runtime_rank();
            raw_ok &= (!mine || tg_matrix_tile_read(A, i, j, raw, &err) == TG_OK) &&
                      tg_matrix_tile_write(R, i, j, p, sc, raw, &err) == TG_OK &&
                      tg_matrix_tile_prec(R, i, j) == p && tg_matrix_tile_scale(R, i, j) == sc;
        }
    tg_matrix_to_dense(A, b, m, &err);
    tg_matrix_to_dense(R, c2, m, &err);
    ok(raw_ok && memcmp(b, c2, (size_t)(m * n) * sizeof *b) == 0,
       "raw tile read/write: precisions, scales and values identical");
    ok(tg_matrix_tile_write(R, 0, 0, TG_INT8, 1, raw, &err) == TG_ERR_ARG,
       "raw tile write: int8 refused: %s", err.msg);
    ok(tg_matrix_tile_write(R, 0, 0, TG_FP32, 3, raw, &err) == TG_ERR_ARG,
       "raw tile write: scale 3 refused: %s", err.msg);
    ok(tg_matrix_tile_read(R, mt, 0, raw, &err) == TG_ERR_ARG,
       "raw tile read: tile outside the matrix refused: %s", err.msg);
    tg_matrix_destroy(R);
    tg_matrix_destroy(A);
    free(raw);

    /* FP8 range: values up to 1000 overflow E4M3 (max 448) unless scaled down */
    for (int64_t k = 0; k < m * n; k++) a[k] *= 500;
    tg_matrix_create(&A, m, n, 16, 16, TG_GENERAL, TG_FP64, 0, 0, &err);
    tg_matrix_from_dense(A, a, m, &err);
    tg_matrix_size(A, NULL, NULL, &mt, &nt);
    for (int t = 0; t < mt * nt; t++) map[t] = TG_FP8_E4M3, scale[t] = 0.25;
    tg_matrix_convert(A, map, scale, &err);
    tg_matrix_to_dense(A, b, m, &err);
    double rel = 0;
    for (int64_t k = 0; k < m * n; k++) rel = fmax(rel, fabs(b[k] - a[k]) / fabs(a[k]));
    ok(rel <= 0x1p-4, "fp8 with scale 1/4 holds |x| ≤ 1000 within 2^-4 (max rel %.3g)", rel);
    tg_matrix_destroy(A);

    /* symmetric lower: only tiles i ≥ j exist; the upper part of the output is untouched */
    const int64_t ns = 45;
    double *s = random_dense(ns, ns, &r), *t2 = malloc((size_t)(ns * ns) * sizeof *t2);
    for (int64_t k = 0; k < ns * ns; k++) t2[k] = 12345;
    ok(tg_matrix_create(&A, ns, ns, 10, 10, TG_SYM_LOWER, TG_FP32, 0, 0, &err) == TG_OK,
       "create symmetric-lower 45×45");
    ok(tg_matrix_has_tile(A, 4, 0) && !tg_matrix_has_tile(A, 0, 4), "only lower tiles stored");
    tg_matrix_from_dense(A, s, ns, &err);
    tg_matrix_to_dense(A, t2, ns, &err);
    int sym_ok = 1;
    for (int64_t j = 0; j < ns; j++)
        for (int64_t i = 0; i < ns; i++) {
            int lower_tile = i / 10 >= j / 10;
            double want = lower_tile ? (double)(float)s[i + j * ns] : 12345;
            if (t2[i + j * ns] != want) sym_ok = 0;
        }
    ok(sym_ok, "symmetric-lower: stored tiles rounded to fp32, upper tiles untouched");
    tg_matrix_destroy(A);

    /* bad arguments */
    ok(tg_matrix_create(&A, 0, 5, 4, 4, TG_GENERAL, TG_FP64, 0, 0, &err) == TG_ERR_ARG,
       "zero rows refused: %s", err.msg);
    ok(tg_matrix_create(&A, 5, 5, -4, 4, TG_GENERAL, TG_FP64, 0, 0, &err) == TG_ERR_ARG,
       "negative tile size refused: %s", err.msg);
    ok(tg_matrix_create(&A, 5, 6, 4, 4, TG_SYM_LOWER, TG_FP64, 0, 0, &err) == TG_ERR_ARG,
       "non-square symmetric refused: %s", err.msg);
    int nr = tg_runtime_nranks();
    ok(tg_matrix_create(&A, 5, 5, 4, 4, TG_GENERAL, TG_FP64, nr + 1, 1, &err) == TG_ERR_ARG,
       "grid %d×1 on %d rank(s) refused: %s", nr + 1, nr, err.msg);
    tg_matrix_create(&A, 5, 5, 4, 4, TG_GENERAL, TG_FP64, 0, 0, &err);
    tg_prec bad[4] = {TG_FP64, (tg_prec)99, TG_FP64, TG_FP64};
    ok(tg_matrix_convert(A, bad, NULL, &err) == TG_ERR_ARG, "invalid precision in a map refused");
    double zero[4] = {1, 0, 1, 1};
    tg_prec good[4] = {TG_FP64, TG_FP16, TG_FP64, TG_FP64};
    ok(tg_matrix_convert(A, good, zero, &err) == TG_ERR_ARG, "zero scale refused: %s", err.msg);
    double three[4] = {1, 3, 1, 1};
    ok(tg_matrix_convert(A, good, three, &err) == TG_ERR_ARG, "scale 3 (not a power of two) refused");
    tg_matrix_destroy(A);

    free(a), free(b), free(c2), free(s), free(t2), free(map), free(scale);
    tg_runtime_stop();
    tap_plan(tap_n);
    return tap_done();
}
