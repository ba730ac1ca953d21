/* Tile Cholesky and its solve.
 * Codelets: potrf, trtri, gemm (fp64/fp32/fp16/fp8 with scales), syrk, trsm by the inverse, the
 * scaled FP16 copy of its T and the transposed FP8 copy run on EVERY worker and are compared
 * with naive double code computed from the same (rounded) inputs, within their precision's bound
 * (stated at each check; the scaled FP16 copy bit for bit against a naive rounding); CUDA
 * results are also compared with the CPU worker's.
 * Algorithm: Gaussian-kernel SPD matrices (N = one tile, N not a multiple of nb, several tiles):
 * all-FP64 factor and solve vs LAPACKE dpotrf/dpotrs; FP32 diagonal + FP16 and + FP8 adaptive
 * maps vs the FP64 solution within a bound derived from the map's perturbation; the map on
 * planted tile norms equals the rule evaluated here on the dense matrix; the band map; a
 * non-SPD matrix gives an error naming its tile, with a refill after raising the map to FP64;
 * a map too low for positive definiteness recovers through a refill (raised, refactored) and
 * meets the FP64 solution. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "codelets/gemm.h"
#include "codelets/potrf.h"
#include "common.h"
#include "runtime/runtime.h"
#include "tap.h"
#include "tile/matrix.h"

/* ------------------------------------------------------------------ codelets on one worker */

/* A host tile of precision p holding round_p(x·scale), with a leading dimension > rows. */
struct tile {
    tg_prec p;
    int rows, cols, ld;
    double scale;
    void *data;
    starpu_data_handle_t h;
};

static struct tile tile_make(tg_prec p, int rows, int cols, const double *x, double scale) {
    struct tile t = {p, rows, cols, rows + 3, scale, NULL, NULL};
    t.data = calloc((size_t)t.ld * cols, tg_prec_size(p));
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) tg_prec_store(p, t.data, i + (size_t)j * t.ld, x[i + (size_t)j * rows] * scale);
    starpu_matrix_data_register(&t.h, STARPU_MAIN_RAM, (uintptr_t)t.data, (uint32_t)t.ld,
                                (uint32_t)rows, (uint32_t)cols, tg_prec_size(p));
    return t;
}

/* Unregisters (bringing the data home) and returns the tile's true values (stored / scale). */
static double *tile_take(struct tile *t) {
    starpu_data_unregister(t->h);
    double *x = malloc((size_t)t->rows * t->cols * sizeof *x);
    for (int j = 0; j < t->cols; j++)
        for (int i = 0; i < t->rows; i++)
            x[i + (size_t)j * t->rows] = tg_prec_load(t->p, t->data, i + (size_t)j * t->ld) / t->scale;
    free(t->data);
    return x;
}

static int run_on(int w, struct starpu_codelet *cl, const void *arg, size_t argsize,
                  starpu_data_handle_t *h, int nh) {
    struct starpu_task *t = starpu_task_create();
    t->cl = cl;
    for (int i = 0; i < nh; i++) t->handles[i] = h[i];
    if (arg) { /* NULL: a codelet without arguments */
        starpu_codelet_pack_args(&t->cl_arg, &t->cl_arg_size, STARPU_VALUE, arg, argsize, 0);
        t->cl_arg_free = 1;
    }
    t->execute_on_a_specific_worker = 1;
    t->workerid = (unsigned)w;
    t->synchronous = 1;
    return starpu_task_submit(t);
}

/* x rounded to precision p and back (what a tile of p with scale s holds, in true values). */
static void round_to(tg_prec p, double *x, size_t n, double s) {
    for (size_t k = 0; k < n; k++) {
        double y;
        tg_prec_store(p, &y, 0, x[k] * s);
        x[k] = tg_prec_load(p, &y, 0) / s;
    }
}

/* What one codelet case gave on one worker: its output (true values), the reference's norm-wise
 * error and the bound it must meet. */
struct result {
    double *out;
    size_t n;
    double err, bound;
    int ret;
};

/* element (i, j) of op(X) for X rows × cols, column-major */
static double opel(const double *x, int rows, char t, int i, int j) {
    return t == 'N' ? x[i + (size_t)j * rows] : x[j + (size_t)i * rows];
}

/* gemm: C ← βC + α·op(A)·op(B) with scales; bound ‖ΔC‖ ≤ 2(k·u_c + 2u_p)·‖|β||C| + |α||A||B|‖
 * (u_c: the compute precision's roundoff, FP32 below FP64; u_p: the rounding of C, which is
 * FP16 for the FP8 entry). */
static struct result case_gemm(int w, uint64_t seed, tg_prec p, char ta, char tb, int m, int n,
                               int k, double sa, double sb, double sc) {
    tg_rng r;
    tg_rng_seed(&r, seed);
    int ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m, br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
    double *a = rand_mat(ar, ac, -1, 1, &r), *b = rand_mat(br, bc, -1, 1, &r), *c = rand_mat(m, n, -1, 1, &r);
    round_to(p, a, (size_t)ar * ac, sa);
    round_to(p, b, (size_t)br * bc, sb);
    tg_prec pc = p == TG_FP8_E4M3 ? TG_FP16 : p;
    round_to(pc, c, (size_t)m * n, sc);
    double alpha = -1, beta = 1;
    struct tile A = tile_make(p, ar, ac, a, sa), B = tile_make(p, br, bc, b, sb), C = tile_make(pc, m, n, c, sc);
    struct tg_gemm_arg g = {p, ta, tb, alpha, beta, sa, sb, sc};
    starpu_data_handle_t h[3] = {A.h, B.h, C.h};
    struct result res = {.n = (size_t)m * n};
    res.ret = run_on(w, &tg_cl_gemm[p], &g, sizeof g, h, 3);
    free(tile_take(&A));
    free(tile_take(&B));
    res.out = tile_take(&C);
    double *ref = malloc(res.n * sizeof *ref), *mag = malloc(res.n * sizeof *mag);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0, sm = 0;
            for (int l = 0; l < k; l++) {
                double x = opel(a, ar, ta, i, l) * opel(b, br, tb, l, j);
                s += x;
                sm += fabs(x);
            }
            ref[i + (size_t)j * m] = beta * c[i + (size_t)j * m] + alpha * s;
            mag[i + (size_t)j * m] = fabs(beta * c[i + (size_t)j * m]) + fabs(alpha) * sm;
        }
    double uc = tg_prec_unit_roundoff(p == TG_FP64 ? TG_FP64 : TG_FP32), up = tg_prec_unit_roundoff(pc);
    res.err = fro_diff(res.out, ref, res.n);
    res.bound = 2 * (k * uc + 2 * up) * fro(mag, res.n);
    free(a);
    free(b);
    free(c);
    free(ref);
    free(mag);
    return res;
}

/* A random SPD n × n matrix G·Gᵀ/n + I (well conditioned). */
static double *spd(int n, tg_rng *r) {
    double *g = rand_mat(n, n, -1, 1, r), *a = calloc((size_t)n * n, sizeof *a);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0 / n, g, n, g, n, 0, a, n);
    for (int i = 0; i < n; i++) a[i + (size_t)i * n] += 1;
    free(g);
    return a;
}

/* potrf: backward error ‖L·Lᵀ − A‖ ≤ 2(n+1)u·‖|L||Lᵀ|‖ (Higham, Thm 10.3), strict upper zero,
 * info 0; with a_55 = −1 (bad = 1) info must be 6 and the output is not checked. */
static struct result case_potrf(int w, uint64_t seed, tg_prec p, int n, int bad) {
    tg_rng r;
    tg_rng_seed(&r, seed);
    double *a = spd(n, &r);
    if (bad) a[5 + 5 * (size_t)n] = -1;
    round_to(p, a, (size_t)n * n, 1);
    struct tile A = tile_make(p, n, n, a, 1);
    int info = -7;
    starpu_data_handle_t hi;
    starpu_variable_data_register(&hi, STARPU_MAIN_RAM, (uintptr_t)&info, sizeof info);
    struct tg_potrf_arg s = {p};
    starpu_data_handle_t h[2] = {A.h, hi};
    struct result res = {.n = (size_t)n * n};
    res.ret = run_on(w, &tg_cl_potrf[p], &s, sizeof s, h, 2);
    starpu_data_unregister(hi);
    res.out = tile_take(&A);
    if (bad) {
        res.err = info != 6;
        res.bound = 0;
        /* compare workers on the info only */
        memset(res.out, 0, res.n * sizeof *res.out);
        res.out[0] = info;
        free(a);
        return res;
    }
    double *l = res.out, *llt = calloc(res.n, sizeof *llt), *mag = calloc(res.n, sizeof *mag);
    double upper = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            if (i < j) upper += fabs(l[i + (size_t)j * n]);
            for (int q = 0; q <= (i < j ? i : j); q++) {
                llt[i + (size_t)j * n] += l[i + (size_t)q * n] * l[j + (size_t)q * n];
                mag[i + (size_t)j * n] += fabs(l[i + (size_t)q * n] * l[j + (size_t)q * n]);
            }
        }
    res.err = info != 0 || upper != 0 ? INFINITY : fro_diff(llt, a, res.n);
    res.bound = 2 * (n + 1) * tg_prec_unit_roundoff(p) * fro(mag, res.n);
    free(a);
    free(llt);
    free(mag);
    return res;
}

/* A lower-triangular factor rounded to p (from LAPACK on an SPD matrix), strict upper zero. */
static double *factor_tile(int n, tg_prec p, tg_rng *r) {
    double *l = spd(n, r);
    LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, l, n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++) l[i + (size_t)j * n] = 0;
    round_to(p, l, (size_t)n * n, 1);
    return l;
}

/* trtri: residual ‖T·L − I‖ ≤ 10n·u·‖|T||L|‖ (triangular inversion, Higham §14.2), T lower. */
static struct result case_trtri(int w, uint64_t seed, tg_prec p, int n) {
    tg_rng r;
    tg_rng_seed(&r, seed);
    double *l = factor_tile(n, p, &r), *z = calloc((size_t)n * n, sizeof *z);
    struct tile L = tile_make(p, n, n, l, 1), T = tile_make(p, n, n, z, 1);
    struct tg_trtri_arg s = {p};
    starpu_data_handle_t h[2] = {L.h, T.h};
    struct result res = {.n = (size_t)n * n};
    res.ret = run_on(w, &tg_cl_trtri[p], &s, sizeof s, h, 2);
    free(tile_take(&L));
    res.out = tile_take(&T);
    double *t = res.out, upper = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++) upper += fabs(t[i + (size_t)j * n]);
    double *tl = calloc(res.n, sizeof *tl), *mag = calloc(res.n, sizeof *mag), *id = calloc(res.n, sizeof *id);
    for (int j = 0; j < n; j++) {
        id[j + (size_t)j * n] = 1;
        for (int i = 0; i < n; i++)
            for (int q = 0; q < n; q++) {
                tl[i + (size_t)j * n] += t[i + (size_t)q * n] * l[q + (size_t)j * n];
                mag[i + (size_t)j * n] += fabs(t[i + (size_t)q * n] * l[q + (size_t)j * n]);
            }
    }
    res.err = upper != 0 ? INFINITY : fro_diff(tl, id, res.n);
    res.bound = 10.0 * n * tg_prec_unit_roundoff(p) * fro(mag, res.n);
    free(l);
    free(z);
    free(tl);
    free(mag);
    free(id);
    return res;
}

/* syrk: lower triangle of C − A·Aᵀ within 2(k+1)u·‖|C| + |A||Aᵀ|‖; the upper part untouched,
 * except with FP16 A (FP32 C, u of FP32), which updates both triangles. */
static struct result case_syrk(int w, uint64_t seed, tg_prec p, int n, int k) {
    tg_rng r;
    tg_rng_seed(&r, seed);
    tg_prec cp = p == TG_FP16 ? TG_FP32 : p;
    double *a = rand_mat(n, k, -1, 1, &r), *c = rand_mat(n, n, -1, 1, &r);
    round_to(p, a, (size_t)n * k, 1);
    round_to(cp, c, (size_t)n * n, 1);
    struct tile A = tile_make(p, n, k, a, 1), C = tile_make(cp, n, n, c, 1);
    struct tg_syrk_arg s = {p};
    starpu_data_handle_t h[2] = {A.h, C.h};
    struct result res = {.n = (size_t)n * n};
    res.ret = run_on(w, &tg_cl_syrk[p], &s, sizeof s, h, 2);
    free(tile_take(&A));
    res.out = tile_take(&C);
    double *ref = malloc(res.n * sizeof *ref), *mag = calloc(res.n, sizeof *mag);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double s2 = 0, sm = 0;
            for (int q = 0; q < k && (i >= j || p == TG_FP16); q++) {
                s2 += a[i + (size_t)q * n] * a[j + (size_t)q * n];
                sm += fabs(a[i + (size_t)q * n] * a[j + (size_t)q * n]);
            }
            ref[i + (size_t)j * n] = c[i + (size_t)j * n] - s2;
            mag[i + (size_t)j * n] = fabs(c[i + (size_t)j * n]) + sm;
        }
    res.err = fro_diff(res.out, ref, res.n);
    res.bound = 2 * (k + 1) * tg_prec_unit_roundoff(cp) * fro(mag, res.n);
    free(a);
    free(c);
    free(ref);
    free(mag);
    return res;
}

/* trsm by the inverse: X·op(T) or op(T)·X with T lower (zero upper); within 2n·u·‖|X||T|‖.
 * The fp16 entry: an FP16 tile X solved in place with an FP32 T given as half_scaled's T16 and
 * alpha (made first on the same worker), u of FP16 (T is rounded to FP16). T is scaled by tscale
 * and X by its inverse: T beyond FP16's range (2^16) or in its subnormals (2^-12) checks that T
 * is scaled into range. */
static struct result case_trsm(int w, uint64_t seed, tg_prec p, char side, char trans, int m, int n,
                               double tscale) {
    tg_rng r;
    tg_rng_seed(&r, seed);
    int tn = side == 'R' ? n : m;
    tg_prec dp = p == TG_FP16 ? TG_FP32 : p;
    if (tscale == 0) tscale = 1;
    double *t = factor_tile(tn, dp, &r), *x = rand_mat(m, n, -1 / tscale, 1 / tscale, &r);
    for (size_t e = 0; e < (size_t)tn * tn; e++) t[e] *= tscale; /* exact: a power of two */
    round_to(p, x, (size_t)m * n, 1);
    struct tile T = tile_make(dp, tn, tn, t, 1), X = tile_make(p, m, n, x, 1), T16 = {0};
    struct tg_trsm_arg s = {p, side, trans};
    starpu_data_handle_t h[3] = {T.h, X.h, NULL}, ha = NULL;
    struct result res = {.n = (size_t)m * n};
    float alpha[2] = {0, 0};
    if (p == TG_FP16) { /* the trsm reads T16, alpha, X */
        double *z = calloc((size_t)tn * tn, sizeof *z);
        T16 = tile_make(TG_FP16, tn, tn, z, 1);
        free(z);
        starpu_variable_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)alpha, sizeof alpha);
        starpu_data_handle_t hs[3] = {T.h, T16.h, ha};
        res.ret = run_on(w, &tg_cl_half_scaled, NULL, 0, hs, 3);
        h[0] = T16.h;
        h[1] = ha;
        h[2] = X.h;
    }
    res.ret |= run_on(w, &tg_cl_trsm[p], &s, sizeof s, h, tg_cl_trsm[p].nbuffers);
    free(tile_take(&T));
    if (ha) {
        starpu_data_unregister(ha);
        free(tile_take(&T16));
    }
    res.out = tile_take(&X);
    double *ref = calloc(res.n, sizeof *ref), *mag = calloc(res.n, sizeof *mag);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            for (int q = 0; q < tn; q++) {
                double v = side == 'R' ? x[i + (size_t)q * m] * opel(t, tn, trans, q, j)
                                       : opel(t, tn, trans, i, q) * x[q + (size_t)j * m];
                ref[i + (size_t)j * m] += v;
                mag[i + (size_t)j * m] += fabs(v);
            }
    res.err = fro_diff(res.out, ref, res.n);
    res.bound = 2.0 * tn * tg_prec_unit_roundoff(p) * fro(mag, res.n);
    free(t);
    free(x);
    free(ref);
    free(mag);
    return res;
}

/* convt: dst = round_FP8(srcᵀ·scale), bit for bit against tg_prec_store (error 0). */
static struct result case_convt(int w, uint64_t seed, tg_prec from, int m, int n, double scale) {
    tg_rng r;
    tg_rng_seed(&r, seed);
    double *x = rand_mat(m, n, -300, 300, &r), *z = calloc((size_t)m * n, sizeof *z);
    x[0] = 1e6; /* saturates to ±448 */
    x[1] = 1e-5;
    round_to(from, x, (size_t)m * n, 1);
    struct tile S = tile_make(from, m, n, x, 1), D = tile_make(TG_FP8_E4M3, n, m, z, 1);
    struct tg_convert_arg a = {from, TG_FP8_E4M3, scale, 1};
    starpu_data_handle_t h[2] = {S.h, D.h};
    struct result res = {.n = (size_t)m * n};
    res.ret = run_on(w, &tg_cl_convt[from], &a, sizeof a, h, 2);
    free(tile_take(&S));
    res.out = tile_take(&D);
    int diff = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            uint8_t b = tg_fp8_from_double(x[i + (size_t)j * m] * scale);
            diff += tg_fp8_to_double(b) != res.out[j + (size_t)i * n];
        }
    res.err = diff;
    res.bound = 0;
    free(x);
    free(z);
    return res;
}

/* x rounded to FP16, naively: to the nearest multiple of the quantum of x's binade (2^-24 for
 * subnormals), ties to even (rint); ±inf from 65520 on (past 65504 and the midpoint to 2^16). */
static double ref_round16(double x) {
    double a = fabs(x);
    if (a == 0) return x;
    int e;
    frexp(a, &e); /* 2^(e−1) ≤ a < 2^e: quantum 2^(e−11) */
    int q = e - 11 < -24 ? -24 : e - 11;
    double r = ldexp(rint(ldexp(a, -q)), q);
    return copysign(r > 65504 ? INFINITY : r, x);
}

/* FP16 bits to their value, naively. */
static double ref_half(uint16_t b) {
    int ex = b >> 10 & 31, man = b & 1023;
    double v = ex == 0    ? ldexp(man, -24)
               : ex == 31 ? (man ? NAN : INFINITY)
                          : ldexp(1024 + man, ex - 25);
    return b >> 15 ? -v : v;
}

/* half_scaled: T16 = round16(T·s), alpha = (1/s, 0), s = 2^(14 − e) with e the exponent of max|T|
 * (max|T| < 2^e ≤ 2·max|T|), 0 when T is zero, at least −100; bit for bit (signs of zeros too)
 * against ref_round16 on T·s in double (exact: s is a power of two), error = the count of
 * entries that differ. mag: T's entries are uniform in ±mag (a power of two) with planted
 * values at the top of the range and ties at FP16's top binade and in its subnormals after
 * scaling; mag 0: a zero tile (with −0 entries). */
static struct result case_half(int w, uint64_t seed, int m, int n, double mag) {
    tg_rng r;
    tg_rng_seed(&r, seed);
    size_t nn = (size_t)m * n;
    double *x = rand_mat(m, n, -mag, mag, &r), *z = calloc(nn, sizeof *z);
    if (mag > 0) {
        const double planted[] = {1, -0.75, 1 - 0x1p-12, -(1 - 3 * 0x1p-12), 0x1p-30, 3 * 0x1p-39,
                                  0x1p-38, -0x1p-38};
        for (size_t k = 0; k < sizeof planted / sizeof *planted; k++) x[7 * k] = planted[k] * mag;
    } else {
        for (size_t k = 0; k < nn; k += 3) x[k] = -0.0;
    }
    round_to(TG_FP32, x, nn, 1);
    struct tile T = tile_make(TG_FP32, m, n, x, 1), H = tile_make(TG_FP16, m, n, z, 1);
    float alpha[2] = {-1, -1}; /* alpha and beta */
    starpu_data_handle_t h[3] = {T.h, H.h, NULL};
    starpu_variable_data_register(&h[2], STARPU_MAIN_RAM, (uintptr_t)alpha, sizeof alpha);
    struct result res = {.n = nn + 1};
    res.ret = run_on(w, &tg_cl_half_scaled, NULL, 0, h, 3);
    starpu_data_unregister(h[2]);
    starpu_data_unregister(H.h);
    free(tile_take(&T));
    double mx = 0;
    for (size_t k = 0; k < nn; k++) mx = fmax(mx, fabs(x[k]));
    int e = 0;
    if (mx > 0) frexp(mx, &e);
    e = e < -100 ? -100 : e;
    double sc = ldexp(1, 14 - e);
    res.out = malloc(res.n * sizeof *res.out);
    int diff = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double got = ref_half(((const uint16_t *)H.data)[i + (size_t)j * H.ld]),
                   want = ref_round16(x[i + (size_t)j * m] * sc);
            res.out[i + (size_t)j * m] = got;
            diff += got != want || signbit(got) != signbit(want);
        }
    res.out[nn] = alpha[0];
    res.err = diff + (alpha[0] != 1 / sc) + (alpha[1] != 0);
    res.bound = 0;
    free(H.data);
    free(x);
    free(z);
    return res;
}

/* tilestats: Σv², max|v|, largest diagonal entry of a tile (v = stored / scale; diagonal tiles
 * of a symmetric matrix: strict lower part twice, upper part ignored — it holds garbage here);
 * the maxima exact, the sum within n·u₆₄ relative (FP64 accumulation of exact squares). */
static struct result case_stats(int w, uint64_t seed, tg_prec p, int m, int n, int diag_tile,
                                double scale) {
    tg_rng r;
    tg_rng_seed(&r, seed);
    double *x = rand_mat(m, n, -3, 2, &r);
    round_to(p, x, (size_t)m * n, scale);
    struct tile T = tile_make(p, m, n, x, scale);
    double v[3] = {-1, -1, -1};
    starpu_data_handle_t h[2] = {T.h, NULL};
    starpu_variable_data_register(&h[1], STARPU_MAIN_RAM, (uintptr_t)v, sizeof v);
    struct tg_tilestats_arg a = {p, diag_tile, 1 / scale};
    struct result res = {.n = 3};
    res.ret = run_on(w, &tg_cl_tilestats[p], &a, sizeof a, h, 2);
    starpu_data_unregister(h[1]);
    free(tile_take(&T));
    double want[3] = {0, 0, 0};
    for (int j = 0; j < n; j++)
        for (int i = diag_tile ? j : 0; i < m; i++) {
            double e = x[i + (size_t)j * m];
            want[0] += (diag_tile && i != j ? 2 : 1) * e * e;
            want[1] = fmax(want[1], fabs(e));
            if (diag_tile && i == j) want[2] = fmax(want[2], e);
        }
    res.out = malloc(sizeof v);
    memcpy(res.out, v, sizeof v);
    res.err = fabs(v[0] - want[0]) + fabs(v[1] - want[1]) + fabs(v[2] - want[2]);
    res.bound = (double)m * n * tg_prec_unit_roundoff(TG_FP64) * want[0];
    free(x);
    return res;
}

enum { K_GEMM, K_POTRF, K_POTRF_BAD, K_TRTRI, K_SYRK, K_TRSM, K_CONVT, K_STATS, K_HALF };
struct kcase {
    int kind;
    tg_prec p;
    char a, b; /* gemm: ta, tb; trsm: side, trans */
    int m, n, k;
    double sa, sb, sc;
};

static struct result run_case(int w, uint64_t seed, const struct kcase *c) {
    switch (c->kind) {
    case K_GEMM: return case_gemm(w, seed, c->p, c->a, c->b, c->m, c->n, c->k, c->sa, c->sb, c->sc);
    case K_POTRF: return case_potrf(w, seed, c->p, c->m, 0);
    case K_POTRF_BAD: return case_potrf(w, seed, c->p, c->m, 1);
    case K_TRTRI: return case_trtri(w, seed, c->p, c->m);
    case K_SYRK: return case_syrk(w, seed, c->p, c->m, c->k);
    case K_TRSM: return case_trsm(w, seed, c->p, c->a, c->b, c->m, c->n, c->sa);
    case K_STATS: return case_stats(w, seed, c->p, c->m, c->n, c->k, c->sa);
    case K_HALF: return case_half(w, seed, c->m, c->n, c->sa);
    default: return case_convt(w, seed, c->p, c->m, c->n, c->sa);
    }
}

static const char *kind_name[] = {"gemm",  "potrf", "potrf (not SPD)", "trtri",      "syrk",
                                  "trsm",  "convt", "tilestats",       "half_scaled"};

/* Every codelet case on every worker: within its bound; CUDA workers also within 2·bound of the
 * CPU worker's output (both are within the bound of the same reference). */
static void codelet_tests(uint64_t seed, int *cuda_ran) {
    static const struct kcase cases[] = {
        {K_GEMM, TG_FP64, 'N', 'T', 37, 29, 23, 1, 1, 1},
        {K_GEMM, TG_FP64, 'T', 'N', 33, 17, 40, 1, 1, 1},
        {K_GEMM, TG_FP32, 'N', 'T', 37, 29, 23, 1, 1, 1},
        {K_GEMM, TG_FP32, 'N', 'N', 20, 31, 12, 1, 1, 1},
        {K_GEMM, TG_FP16, 'N', 'T', 37, 29, 23, 1, 1, 1},
        {K_GEMM, TG_FP8_E4M3, 'T', 'N', 32, 48, 64, 8, 16, 32},
        {K_GEMM, TG_FP8_E4M3, 'T', 'N', 16, 16, 32, 0.5, 1, 64},
        {K_POTRF, TG_FP64, 0, 0, 37, 0, 0, 0, 0, 0},
        {K_POTRF, TG_FP32, 0, 0, 64, 0, 0, 0, 0, 0},
        {K_POTRF_BAD, TG_FP64, 0, 0, 20, 0, 0, 0, 0, 0},
        {K_POTRF_BAD, TG_FP32, 0, 0, 20, 0, 0, 0, 0, 0},
        {K_TRTRI, TG_FP64, 0, 0, 37, 0, 0, 0, 0, 0},
        {K_TRTRI, TG_FP32, 0, 0, 40, 0, 0, 0, 0, 0},
        /* the GPU's recursive doubling: base blocks 64 / 48 / 125, two or three levels; and a
         * size it hands to cuSOLVER (FP64 base blocks above 64) */
        {K_TRTRI, TG_FP32, 0, 0, 256, 0, 0, 0, 0, 0},
        {K_TRTRI, TG_FP64, 0, 0, 192, 0, 0, 0, 0, 0},
        {K_TRTRI, TG_FP32, 0, 0, 500, 0, 0, 0, 0, 0},
        {K_TRTRI, TG_FP64, 0, 0, 250, 0, 0, 0, 0, 0},
        {K_SYRK, TG_FP64, 0, 0, 37, 0, 21, 0, 0, 0},
        {K_SYRK, TG_FP32, 0, 0, 30, 0, 32, 0, 0, 0},
        {K_SYRK, TG_FP16, 0, 0, 30, 0, 32, 0, 0, 0},
        {K_TRSM, TG_FP64, 'R', 'T', 41, 37, 0, 0, 0, 0},
        {K_TRSM, TG_FP32, 'R', 'T', 41, 37, 0, 0, 0, 0},
        {K_TRSM, TG_FP16, 'R', 'T', 41, 37, 0, 0, 0, 0},
        {K_TRSM, TG_FP16, 'R', 'T', 64, 48, 0, 65536, 0, 0},
        {K_TRSM, TG_FP16, 'R', 'T', 33, 40, 0, 1.0 / 4096, 0, 0},
        {K_TRSM, TG_FP16, 'L', 'N', 40, 9, 0, 0, 0, 0},
        {K_TRSM, TG_FP64, 'L', 'N', 37, 5, 0, 0, 0, 0},
        {K_TRSM, TG_FP64, 'L', 'T', 37, 5, 0, 0, 0, 0},
        {K_TRSM, TG_FP32, 'L', 'T', 30, 3, 0, 0, 0, 0},
        {K_CONVT, TG_FP32, 0, 0, 37, 21, 0, 0.25, 0, 0},
        {K_CONVT, TG_FP64, 0, 0, 16, 48, 0, 4, 0, 0},
        {K_STATS, TG_FP64, 0, 0, 37, 37, 1, 1, 0, 0},
        {K_STATS, TG_FP32, 0, 0, 300, 41, 0, 1, 0, 0},
        {K_STATS, TG_FP16, 0, 0, 64, 64, 1, 1, 0, 0},
        {K_STATS, TG_FP8_E4M3, 0, 0, 48, 32, 0, 64, 0, 0},
        /* max|T| 1, 2^100 (FP16 overflows unscaled), 2^-120 (e clamped at −100; FP32
         * subnormals), a zero tile; a rectangular one */
        {K_HALF, TG_FP32, 0, 0, 40, 40, 0, 1, 0, 0},
        {K_HALF, TG_FP32, 0, 0, 64, 64, 0, 0x1p100, 0, 0},
        {K_HALF, TG_FP32, 0, 0, 33, 33, 0, 0x1p-120, 0, 0},
        {K_HALF, TG_FP32, 0, 0, 17, 17, 0, 0, 0, 0},
        {K_HALF, TG_FP32, 0, 0, 70, 9, 0, 0x1p-7, 0, 0},
    };
    int cpu = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct kcase *k = &cases[c];
        uint64_t s = seed + c;
        struct result ref = run_case(cpu, s, k);
        ok(ref.ret == 0 && ref.err <= ref.bound, "%s %s %c%c %dx%dx%d on the CPU: error %.3g <= %.3g",
           kind_name[k->kind], tg_prec_name(k->p), k->a ? k->a : '-', k->b ? k->b : '-', k->m,
           k->n, k->k, ref.err, ref.bound);
        for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
            if (starpu_worker_get_type((int)w) != STARPU_CUDA_WORKER) continue;
            struct result g = run_case((int)w, s, k);
            double d = fro_diff(g.out, ref.out, g.n);
            ok(g.ret == 0 && g.err <= g.bound && d <= 2 * g.bound,
               "%s %s on CUDA worker %u: error %.3g <= %.3g, vs CPU %.3g <= %.3g", kind_name[k->kind],
               tg_prec_name(k->p), w, g.err, g.bound, d, 2 * g.bound);
            *cuda_ran = 1;
            free(g.out);
        }
        free(ref.out);
    }
}

/* ------------------------------------------------------------------ the algorithm */

/* Gaussian kernel of n sorted random points in [0, 1] plus alpha·I (SPD: the kernel is PSD).
 * Sorted points put near neighbours in the same tile, so far tiles are small: the structure
 * the adaptive map exploits (the paper's Fig. 4). */
static double *gauss_kernel(int n, double gamma, double alpha, tg_rng *r) {
    double *x = rand_mat(1, n, 0, 1, r), *a = malloc((size_t)n * n * sizeof *a);
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            a[i + (size_t)j * n] = exp(-gamma * pow(x[i] - x[j], 2)) + (i == j ? alpha : 0);
    free(x);
    return a;
}

/* 2-norm condition number of an SPD matrix (LAPACK eigenvalues). */
static double cond2(const double *a, int n, double *lmax) {
    double *c = malloc((size_t)n * n * sizeof *c), *ev = malloc((size_t)n * sizeof *ev);
    memcpy(c, a, (size_t)n * n * sizeof *c);
    LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', n, c, n, ev);
    double k = ev[n - 1] / ev[0];
    *lmax = ev[n - 1];
    free(c);
    free(ev);
    return k;
}

/* What one factor + solve gave: W's relative error against the reference, L's against the
 * reference factor (when given), and the backward error ‖A − L̂L̂ᵀ‖_F / ‖|L̂||L̂ᵀ|‖_F of the
 * computed factor: independent of the condition number, so it checks the lowered paths tightly. */
struct fs {
    double w_err, l_err, berr;
};

static struct fs factor_solve(const double *a, int n, int nb, int nrhs, const double *y,
                              const tg_chol_opts *o, const double *w_ref, const double *l_ref,
                              tg_chol_report *rep, tg_prec bprec) {
    struct fs f = {INFINITY, INFINITY, INFINITY};
    tg_error err = {0};
    tg_matrix *A = tiled(a, n, n, nb, nb, TG_SYM_LOWER, TG_FP64);
    if (tg_cholesky(A, o, rep, &err)) {
        diag("tg_cholesky: %s", err.msg);
        tg_matrix_destroy(A);
        return f;
    }
    size_t nn = (size_t)n * n;
    double *l = calloc(nn, sizeof *l), *llt = calloc(nn, sizeof *llt), *mag = calloc(nn, sizeof *mag);
    tg_matrix_to_dense(A, l, n, &err); /* the upper tiles stay 0 */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            for (int q = 0; q <= (i < j ? i : j); q++) {
                llt[i + (size_t)j * n] += l[i + (size_t)q * n] * l[j + (size_t)q * n];
                mag[i + (size_t)j * n] += fabs(l[i + (size_t)q * n] * l[j + (size_t)q * n]);
            }
    f.berr = fro_diff(llt, a, nn) / fro(mag, nn);
    if (l_ref) f.l_err = fro_diff(l, l_ref, nn) / fro(l_ref, nn);
    free(l);
    free(llt);
    free(mag);
    tg_matrix *B = tiled(y, n, nrhs, nb, 2, TG_GENERAL, bprec);
    if (tg_chol_solve(A, B, &err) == TG_OK) {
        double *w = malloc((size_t)n * nrhs * sizeof *w);
        tg_matrix_to_dense(B, w, n, &err);
        f.w_err = fro_diff(w, w_ref, (size_t)n * nrhs) / fro(w_ref, (size_t)n * nrhs);
        free(w);
    } else {
        diag("tg_chol_solve: %s", err.msg);
    }
    tg_matrix_destroy(B);
    tg_matrix_destroy(A);
    return f;
}

/* Backward error bound of a tile Cholesky whose least accurate tile is of precision p: each
 * entry is rounded at most NT + 1 times in its tile's precision (storage, one per update) and
 * accumulates (n + 1)·u₃₂ in FP32 arithmetic (Higham Thm 10.3), relative to |L||Lᵀ|; FP8 adds
 * an absolute 2⁻¹⁰/scale per entry at most (subnormals), covered by the factor 2. */
static double berr_bound(tg_prec p, int nt, int n) {
    return 2 * ((nt + 1) * tg_prec_unit_roundoff(p) + (n + 1) * 0x1p-24);
}

static void counts(const tg_chol_report *r, char *buf, size_t len) {
    snprintf(buf, len, "tiles fp64 %lld fp32 %lld fp16 %lld fp8 %lld, copies %lld",
             (long long)r->tiles[TG_FP64], (long long)r->tiles[TG_FP32], (long long)r->tiles[TG_FP16],
             (long long)r->tiles[TG_FP8_E4M3], (long long)r->copies);
}

/* The FP64 reference (dpotrf + dpotrs) and the tiled solves for one Gaussian kernel matrix. */
/* "" on every worker; " (GPU only)" in the second pass, where no CPU worker exists. */
static const char *workers = "";

static void accuracy_tests(tg_rng *r, int n, int nb, double gamma, double alpha, int adaptive) {
    int nrhs = 3;
    double *a = gauss_kernel(n, gamma, alpha, r), *y = rand_mat(n, nrhs, -1, 1, r);
    double *l = malloc((size_t)n * n * sizeof *l), *w = malloc((size_t)n * nrhs * sizeof *w);
    memcpy(l, a, (size_t)n * n * sizeof *l);
    memcpy(w, y, (size_t)n * nrhs * sizeof *w);
    LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, l, n);
    LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', n, nrhs, l, n, w, n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++) l[i + (size_t)j * n] = 0;
    double lmax, kappa = cond2(a, n, &lmax), afro = fro(a, (size_t)n * n);
    int nt = (n + nb - 1) / nb;
    diag("N %d nb %d (%d tiles), gamma %g alpha %g: cond2 %.3g%s", n, nb, nt, gamma, alpha, kappa,
         workers);
    char buf[160];
    tg_chol_report rep;

    /* all FP64: two backward-stable factorisations of the same matrix differ by at most
     * ~κ₂·c·n·u₆₄ relatively (perturbation of the factor); κ₂ ≤ 410 here (alpha ≥ 0.5 with
     * λ_max ≤ N + alpha) and n ≤ 210, so 1e-10 has a margin above 410·210·1.1e-16 ≈ 1e-11. */
    tg_chol_opts o = tg_chol_defaults();
    o.allowed = 1u << TG_FP64;
    o.diag = TG_FP64;
    struct fs f = factor_solve(a, n, nb, nrhs, y, &o, w, l, &rep, TG_FP64);
    ok(f.l_err <= 1e-10 && f.w_err <= 1e-10 && rep.tiles[TG_FP64] == nt * (nt + 1) / 2,
       "N %d nb %d all fp64%s: L vs dpotrf %.3g, W vs dpotrs %.3g (<= 1e-10)", n, nb, workers,
       f.l_err, f.w_err);

    /* Mixed maps. The factor's backward error must meet berr_bound() for the least accurate
     * precision used. For W: the map's rounding of A is a perturbation with ‖ΔA‖_F ≤ ε‖A‖_F
     * (NT² tiles each ≤ ε‖A‖_F/NT, in squares); updates made in a tile's precision add at most
     * NT such roundings, and FP32 arithmetic c·n·u₃₂‖A‖. So ‖ΔA‖₂ ≤ (NT·ε + 4n·u₃₂)·‖A‖_F and
     * (Higham Thm 7.2) W's relative error ≤ 2κ₂(NT·ε + 4n·u₃₂)‖A‖_F/‖A‖₂ when that is below 1.
     * That a-priori bound is loose (the rule is conservative), so W must also meet the issue's
     * 1e-3 target. Forced band 0 lowers every off-diagonal tile, small or not, so a wrong lowered
     * path shows (the adaptive maps lower only tiles too small to matter: they run on localized
     * kernels, the bands on smooth ones whose off-diagonal tiles carry weight); band 0.34 keeps
     * the first band in FP32, so FP16 updates read converted FP32 panel tiles. W: same bound with
     * ‖ΔA‖_F ≤ ((NT + 1)·u_p + 4n·u₃₂)‖A‖_F, and 1e-2 for FP16 / 0.2 for FP8 (u = 1/16). */
    static const struct {
        unsigned allowed;
        double eps, band, target;
        tg_prec low;
        const char *what;
    } maps[] = {{1u << TG_FP32 | 1u << TG_FP16, 1e-4, -1, 1e-3, TG_FP16, "adaptive fp32 + fp16"},
                {1u << TG_FP32 | 1u << TG_FP16 | 1u << TG_FP8_E4M3, 1e-4, -1, 1e-3, TG_FP8_E4M3,
                 "adaptive fp32 + fp16 + fp8"},
                {1u << TG_FP16, 0, 0, 1e-2, TG_FP16, "band 0, all off-diagonal fp16"},
                {1u << TG_FP8_E4M3, 0, 0, 0.2, TG_FP8_E4M3, "band 0, all off-diagonal fp8"},
                {1u << TG_FP16, 0, 0.34, 1e-2, TG_FP16, "band 0.34, fp32 + fp16"},
                {1u << TG_FP8_E4M3, 0, 0.34, 0.2, TG_FP8_E4M3, "band 0.34, fp32 + fp8"}};
    for (size_t m = 0; m < sizeof maps / sizeof maps[0]; m++) {
        if ((maps[m].band < 0) != adaptive ||
            (maps[m].low == TG_FP8_E4M3 && (nb % 16 || (maps[m].band >= 0 && n % 16))))
            continue;
        o = tg_chol_defaults();
        o.diag = TG_FP32;
        o.allowed = maps[m].allowed;
        o.eps = maps[m].eps;
        o.band = maps[m].band;
        double pert = maps[m].band < 0 ? nt * o.eps : (nt + 1) * tg_prec_unit_roundoff(maps[m].low);
        double bound = 2 * kappa * (pert + 4 * n * 0x1p-24) * afro / lmax;
        double bb = berr_bound(maps[m].low, nt, n);
        f = factor_solve(a, n, nb, nrhs, y, &o, w, NULL, &rep, TG_FP32);
        counts(&rep, buf, sizeof buf);
        int wband = (int)lround(maps[m].band * (nt - 1)), want = 0;
        for (int i = 0; i < nt; i++)
            for (int j = 0; j < i; j++) want += i - j > wband;
        int lowered = maps[m].band < 0 ? rep.tiles[TG_FP16] + rep.tiles[TG_FP8_E4M3] > 0 || nt == 1
                                       : rep.tiles[maps[m].low] == want && want > 0;
        ok(f.berr <= bb && f.w_err <= bound && f.w_err <= maps[m].target && lowered,
           "N %d nb %d %s%s: backward error %.3g <= %.3g, W vs fp64 %.3g <= min(%.3g, %g) (%s)",
           n, nb, maps[m].what, workers, f.berr, bb, f.w_err, bound, maps[m].target, buf);
    }
    free(a);
    free(y);
    free(l);
    free(w);
}

/* The map on a matrix with planted tile norms equals the rule evaluated here on the dense
 * matrix, and the band map puts the diagonal precision exactly on the bands asked. */
static void map_tests(tg_rng *r) {
    const int nb = 16, nt = 6, n = nb * nt - 5; /* last tile 11 rows: never FP8 */
    double *a = calloc((size_t)n * n, sizeof *a);
    for (int tj = 0; tj < nt; tj++)
        for (int ti = tj + 1; ti < nt; ti++) {
            /* tile norms 1e-4 .. 1; three planted so that fp8, fp16 and fp32 always occur */
            double target = pow(10, -4.0 * tg_rng_uniform(r));
            if (tj == 0 && ti <= 3) target = ti == 1 ? 1e-4 : ti == 2 ? 1e-2 : 0.5;
            int rows = ti == nt - 1 ? n - ti * nb : nb;
            double *t = rand_mat(rows, nb, -1, 1, r), f = fro(t, (size_t)rows * nb);
            for (int j = 0; j < nb; j++)
                for (int i = 0; i < rows; i++) {
                    double v = t[i + (size_t)j * rows] * target / f;
                    a[(ti * nb + i) + (size_t)(tj * nb + j) * n] = v;
                    a[(tj * nb + j) + (size_t)(ti * nb + i) * n] = v;
                }
            free(t);
        }
    for (int i = 0; i < n; i++) a[i + (size_t)i * n] = 2; /* |off-diagonal row sums| < 1 */
    double total = fro(a, (size_t)n * n);
    tg_chol_opts o = tg_chol_defaults();
    o.diag = TG_FP32;
    o.eps = 1e-5;
    tg_error err = {0};
    tg_chol_report rep;
    tg_prec map[6 * 6];
    o.map_out = map; /* the map, tile (i, j) at i + j·nt: FP8 tiles are stored in FP16 */
    tg_matrix *A = tiled(a, n, n, nb, nb, TG_SYM_LOWER, TG_FP64);
    int st = tg_cholesky(A, &o, &rep, &err), bad = 0, seen[TG_NPREC] = {0};
    for (int tj = 0; tj < nt; tj++)
        for (int ti = tj; ti < nt; ti++) {
            int rows = ti == nt - 1 ? n - ti * nb : nb, cols = tj == nt - 1 ? n - tj * nb : nb;
            double s = 0;
            for (int j = 0; j < cols; j++)
                for (int i = 0; i < rows; i++) s += pow(a[(ti * nb + i) + (size_t)(tj * nb + j) * n], 2);
            /* the rule: least accurate of fp8 (16-multiple sides), fp16, fp32 (the diagonal's)
             * with u_p·‖A_ij‖_F ≤ ε‖A‖_F/NT */
            tg_prec want = TG_FP32;
            if (ti != tj) {
                if (0x1p-11 * sqrt(s) <= o.eps * total / nt) want = TG_FP16;
                if (rows % 16 == 0 && 0x1p-4 * sqrt(s) <= o.eps * total / nt) want = TG_FP8_E4M3;
            }
            tg_prec got = map[ti + tj * nt], stored = tg_matrix_tile_prec(A, ti, tj);
            seen[got] = 1;
            if (stored != (got == TG_FP8_E4M3 ? TG_FP16 : got)) bad++;
            if (got != want && bad++ < 3)
                diag("tile (%d, %d) norm %.3g: got %s, want %s", ti, tj, sqrt(s), tg_prec_name(got),
                     tg_prec_name(want));
        }
    ok(st == TG_OK && bad == 0 && seen[TG_FP16] && seen[TG_FP8_E4M3] && seen[TG_FP32],
       "adaptive map on planted tile norms equals the rule (fp32, fp16 and fp8 all chosen; "
       "fp8 tiles stored in fp16)");
    tg_matrix_destroy(A);

    o.band = 0.4; /* bands i − j ≤ round(0.4·5) = 2 keep fp32, the rest the lowest allowed */
    A = tiled(a, n, n, nb, nb, TG_SYM_LOWER, TG_FP64);
    st = tg_cholesky(A, &o, &rep, &err);
    bad = 0;
    for (int tj = 0; tj < nt; tj++)
        for (int ti = tj; ti < nt; ti++) {
            tg_prec want = ti - tj <= 2 ? TG_FP32 : ti == nt - 1 ? TG_FP16 : TG_FP8_E4M3;
            bad += map[ti + tj * nt] != want;
        }
    ok(st == TG_OK && bad == 0, "band map 0.4: bands 0..2 fp32, others fp8 (fp16 on the 11-row tiles)");
    tg_matrix_destroy(A);

    /* FP16 range: with a diagonal of 1e5, entries of the Schur complements may reach 1e5 >
     * 65,504, so no tile may be FP16 or FP8 (both stored in FP16), even in band 0 */
    for (int i = 0; i < n; i++) a[i + (size_t)i * n] = 1e5;
    o.band = 0;
    o.allowed = 1u << TG_FP16 | 1u << TG_FP8_E4M3;
    A = tiled(a, n, n, nb, nb, TG_SYM_LOWER, TG_FP64);
    st = tg_cholesky(A, &o, &rep, &err);
    ok(st == TG_OK && rep.tiles[TG_FP32] == nt * (nt + 1) / 2,
       "diagonal 1e5: every tile stays fp32, out of FP16's range (%lld fp32 tiles of %d)",
       (long long)rep.tiles[TG_FP32], nt * (nt + 1) / 2);
    tg_matrix_destroy(A);
    free(a);
}

/* What a refill writes: the dense matrix the factorisation started from. */
struct dense {
    const double *a;
    int n;
};

static tg_status refill_dense(void *ctx, tg_matrix *A, tg_error *err) {
    const struct dense *d = ctx;
    return tg_matrix_from_dense(A, d->a, d->n, err);
}

/* Recovery from a lost positive definiteness: on a smooth kernel with a small α, every
 * off-diagonal tile in FP16 (band 0) perturbs K + αI by ~u₁₆·‖K‖ ≫ α, so a diagonal tile fails
 * (checked without a refill: the error today's code gives); with a refill the factorisation
 * raises the map (FP16 → FP32, or further), refactors, and meets the backward error bound of
 * its final map (berr_bound) and the FP64 solution within the a-priori bound of accuracy_tests
 * (2κ₂·((NT + 1)·u_p + 4n·u₃₂)·‖A‖_F/‖A‖₂, vacuous at κ₂ ~ 1e5) and 1e-2 (measured ~7e-4 with
 * an FP32 map: κ₂ times its backward error). At α = 1e-2 the FP16 map does not fail: the test
 * needs α below the perturbation. Allowing FP8 too starts lower: two recoveries. With an FP32
 * diagonal and α = 1e-6 (κ₂ ~ 1e8 > 1/u₃₂) FP32 fails too, and the map ends all FP64. */
static void recovery_tests(tg_rng *r, int n, int nb, double gamma, double alpha, unsigned allowed,
                           tg_prec diag, tg_prec first) {
    int nrhs = 2, nt = (n + nb - 1) / nb;
    double *a = gauss_kernel(n, gamma, alpha, r), *y = rand_mat(n, nrhs, -1, 1, r);
    double *l = malloc((size_t)n * n * sizeof *l), *w = malloc((size_t)n * nrhs * sizeof *w);
    memcpy(l, a, (size_t)n * n * sizeof *l);
    memcpy(w, y, (size_t)n * nrhs * sizeof *w);
    LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, nrhs, l, n, w, n);
    double lmax, kappa = cond2(a, n, &lmax), afro = fro(a, (size_t)n * n);
    tg_chol_opts o = tg_chol_defaults();
    o.band = 0;
    o.allowed = allowed;
    o.diag = diag;
    tg_chol_report rep;
    tg_error err = {0};
    tg_matrix *A = tiled(a, n, n, nb, nb, TG_SYM_LOWER, TG_FP64);
    tg_status st = tg_cholesky(A, &o, &rep, &err);
    tg_matrix_destroy(A);
    ok(st == TG_ERR_NUMERIC && rep.tiles[first] == nt * (nt - 1) / 2,
       "N %d nb %d, gamma %g alpha %g (cond2 %.3g), diag %s, band 0 %s without a refill: %s",
       n, nb, gamma, alpha, kappa, tg_prec_name(diag), tg_prec_name(first), err.msg);

    struct dense d = {a, n};
    o.refill = refill_dense;
    o.refill_ctx = &d;
    struct fs f = factor_solve(a, n, nb, nrhs, y, &o, w, NULL, &rep, TG_FP64);
    tg_prec low = TG_FP64;
    for (int p = TG_FP64; p <= TG_FP8_E4M3; p++)
        if (rep.tiles[p]) low = (tg_prec)p;
    double bound = 2 * kappa * ((nt + 1) * tg_prec_unit_roundoff(low) + 4 * n * 0x1p-24) * afro / lmax;
    double bb = berr_bound(low, nt, n);
    char steps[256] = "";
    int chain = rep.retries >= 1 && rep.retry[0].from == first;
    for (int k = 0; k < rep.retries; k++) {
        size_t len = strlen(steps);
        snprintf(steps + len, sizeof steps - len, "%stile %d: %lld tiles %s -> %s", k ? "; " : "",
                 rep.retry[k].tile, (long long)rep.retry[k].raised, tg_prec_name(rep.retry[k].from),
                 tg_prec_name(rep.retry[k].to));
        chain &= rep.retry[k].to < rep.retry[k].from && rep.retry[k].raised > 0 &&
                 (k == 0 || rep.retry[k].from <= rep.retry[k - 1].to);
    }
    ok(chain && rep.diag == TG_FP64 && low < first && f.berr <= bb && f.w_err <= bound &&
           f.w_err <= 1e-2,
       "the same with a refill recovers (%s): final map least accurate %s, backward error %.3g "
       "<= %.3g, W vs dposv %.3g <= min(%.3g, 1e-2)", steps, tg_prec_name(low), f.berr, bb,
       f.w_err, bound);
    free(a);
    free(y);
    free(l);
    free(w);
}

/* A matrix that is not positive definite in tile 2: the error names tile (2, 2). */
static void non_spd_test(tg_rng *r) {
    const int n = 70, nb = 16;
    double *a = gauss_kernel(n, 30, 1, r);
    a[(2 * nb + 3) * (size_t)(n + 1)] = -50;
    tg_matrix *A = tiled(a, n, n, nb, nb, TG_SYM_LOWER, TG_FP64);
    tg_error err = {0};
    tg_chol_opts o = tg_chol_defaults();
    tg_status st = tg_cholesky(A, &o, NULL, &err);
    ok(st == TG_ERR_NUMERIC && strstr(err.msg, "(2, 2)") && strstr(err.msg, "alpha"),
       "not SPD in tile 2%s: %s", workers, err.msg);
    tg_matrix_destroy(A);
    /* with a refill and an FP16 band: raised to FP32, then all FP64, which fails too */
    struct dense d = {a, n};
    tg_chol_report rep;
    o.band = 0;
    o.diag = TG_FP32;
    o.allowed = 1u << TG_FP16;
    o.refill = refill_dense;
    o.refill_ctx = &d;
    A = tiled(a, n, n, nb, nb, TG_SYM_LOWER, TG_FP64);
    st = tg_cholesky(A, &o, &rep, &err);
    ok(st == TG_ERR_NUMERIC && strstr(err.msg, "(2, 2)") && strstr(err.msg, "in fp64") &&
           rep.retries >= 1 && rep.diag == TG_FP64 && rep.tiles[TG_FP64] == 15,
       "not SPD with a refill%s: %d recoveries to all fp64, then %s", workers, rep.retries,
       err.msg);
    tg_matrix_destroy(A);
    o = tg_chol_defaults();
    A = tiled(a, n, n, nb, 2, TG_GENERAL, TG_FP64);
    st = tg_cholesky(A, &o, NULL, &err);
    ok(st == TG_ERR_ARG, "a general matrix is refused: %s", err.msg);
    tg_matrix_destroy(A);
    free(a);
}

/* Several GPUs with homes on: every GEMM and potrf of a factorisation ran on the GPU its tile's
 * home names (counted per worker against the 2D block-cyclic map), and the factor is right. */
static void homes_test(tg_rng *r) {
    int g = tg_runtime_homes(), n = 320, nb = 32, nt = n / nb;
    if (g < 2) return;
    int ids[STARPU_NMAXWORKERS], want_gemm[STARPU_NMAXWORKERS] = {0},
        want_potrf[STARPU_NMAXWORKERS] = {0}, got_gemm[STARPU_NMAXWORKERS] = {0},
        got_potrf[STARPU_NMAXWORKERS] = {0}, elsewhere = 0;
    starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, STARPU_NMAXWORKERS);
    double *a = spd(n, r), *l = malloc((size_t)n * n * sizeof *l);
    tg_matrix *A = tiled(a, n, n, nb, nb, TG_SYM_LOWER, TG_FP64);
    for (int k = 0; k < nt; k++) {
        want_potrf[tg_matrix_tile_home(A, k, k)]++;
        for (int j = k + 1; j < nt; j++)
            for (int i = j + 1; i < nt; i++) want_gemm[tg_matrix_tile_home(A, i, j)]++;
    }
    tg_chol_opts o = tg_chol_defaults();
    o.allowed = 1u << TG_FP64;
    tg_error err = {0};
    tg_record_start(0);
    tg_status st = tg_cholesky(A, &o, NULL, &err);
    size_t nrec = 0;
    tg_task_record *rec = tg_record_stop(&nrec);
    for (size_t t = 0; t < nrec; t++) {
        int *got = !strcmp(rec[t].kernel, "tg_gemm_fp64")    ? got_gemm
                   : !strcmp(rec[t].kernel, "tg_potrf_fp64") ? got_potrf
                                                             : NULL;
        int h = 0;
        while (h < g && ids[h] != rec[t].worker) h++;
        if (got && h < g) got[h]++;
        else if (got) elsewhere++;
    }
    int same = !elsewhere;
    for (int h = 0; h < g; h++) same &= got_gemm[h] == want_gemm[h] && got_potrf[h] == want_potrf[h];
    ok(st == TG_OK && same, "homes: %d GPUs, GEMMs per GPU %d %d (expected %d %d), potrf %d %d "
       "(%d %d), %d elsewhere", g, got_gemm[0], got_gemm[1], want_gemm[0], want_gemm[1],
       got_potrf[0], got_potrf[1], want_potrf[0], want_potrf[1], elsewhere);
    tg_matrix_to_dense(A, l, n, &err);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++) l[i + (size_t)j * n] = 0;
    double *llt = calloc((size_t)n * n, sizeof *llt);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1, l, n, l, n, 0, llt, n);
    double e = 0, an = 0;
    for (size_t t = 0; t < (size_t)n * n; t++) {
        e = fmax(e, fabs(llt[t] - a[t]));
        an = fmax(an, fabs(a[t]));
    }
    ok(e <= 1e-12 * n * an, "homes: L·Lᵀ = A within %.2g (bound %.2g)", e, 1e-12 * n * an);
    free(rec);
    free(llt);
    tg_matrix_destroy(A);
    free(a);
    free(l);
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
    int cuda_ran = 0;
    codelet_tests(seed, &cuda_ran);
    if (getenv("TG_REQUIRE_GPU") && atoi(getenv("TG_REQUIRE_GPU")))
        ok(cuda_ran, "a CUDA worker ran every codelet (TG_REQUIRE_GPU is set)");

    /* localized kernels (adaptive maps): one tile; 4 tiles, the last 11 rows; 5 full tiles,
     * FP8-eligible. Smooth kernels (forced bands): 4 tiles, the last 11 rows; 6 full tiles. */
    accuracy_tests(&r, 50, 64, 10, 0.5, 1);
    accuracy_tests(&r, 203, 64, 100, 0.5, 1);
    accuracy_tests(&r, 160, 32, 200, 0.5, 1);
    accuracy_tests(&r, 203, 64, 2, 10, 0);
    accuracy_tests(&r, 192, 32, 2, 10, 0);
    map_tests(&r);
    recovery_tests(&r, 192, 32, 2, 1e-3, 1u << TG_FP32 | 1u << TG_FP16, TG_FP64, TG_FP16);
    recovery_tests(&r, 192, 32, 2, 1e-3, 1u << TG_FP32 | 1u << TG_FP16 | 1u << TG_FP8_E4M3,
                   TG_FP64, TG_FP8_E4M3);
    recovery_tests(&r, 192, 32, 2, 1e-6, 1u << TG_FP16, TG_FP32, TG_FP16);
    non_spd_test(&r);

    /* again with the CUDA workers alone, so every task of the flow runs on the GPU (with CPU
     * workers present the scheduler may keep these small tiles on the CPU) */
    if (tg_runtime_ngpu() > 0) {
        tg_runtime_stop();
        o.ncpu = 0;
        if (!ok(tg_runtime_start(&o, &err) == TG_OK, "restart with CUDA workers only")) {
            diag("%s", err.msg);
            tap_plan(tap_n);
            return tap_done();
        }
        workers = " (GPU only)";
        accuracy_tests(&r, 160, 32, 200, 0.5, 1);
        accuracy_tests(&r, 203, 64, 2, 10, 0);
        accuracy_tests(&r, 192, 32, 2, 10, 0);
        non_spd_test(&r);
        homes_test(&r);
    }

    tg_runtime_stop();
    tap_plan(tap_n);
    return tap_done();
}
