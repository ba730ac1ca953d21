/* The tiled matrix: creation (one StarPU handle per stored tile, StarPU-allocated on first use),
 * owner ranks on a 2D block-cyclic grid, dense import/export (tests, outputs) and raw tile
 * import/export in the tiles' own precisions (saved factors). It submits no task: the
 * conversion of its tiles by tasks is src/algo/convert.c. */
#include "tile/matrix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

int tg_matrix_has_tile(const tg_matrix *A, int i, int j) {
    return i >= 0 && j >= 0 && i < A->mt && j < A->nt && (A->shape == TG_GENERAL || i >= j);
}

void tg_matrix_tile_dims(const tg_matrix *A, int i, int j, int *rows, int *cols) {
    *rows = (int)(i == A->mt - 1 ? A->m - (int64_t)i * A->mb : A->mb);
    *cols = (int)(j == A->nt - 1 ? A->n - (int64_t)j * A->nb : A->nb);
}

int tg_matrix_tile_owner(const tg_matrix *A, int i, int j) { return (i % A->p) * A->q + j % A->q; }
tg_prec tg_matrix_tile_prec(const tg_matrix *A, int i, int j) { return A->prec[tg_tile_index(A, i, j)]; }
double tg_matrix_tile_scale(const tg_matrix *A, int i, int j) { return A->scale[tg_tile_index(A, i, j)]; }

void tg_matrix_size(const tg_matrix *A, int64_t *m, int64_t *n, int *mt, int *nt) {
    if (m) *m = A->m;
    if (n) *n = A->n;
    if (mt) *mt = A->mt;
    if (nt) *nt = A->nt;
}

tg_handle tg_tile_temp(int rows, int cols, tg_prec p, int owner) {
    tg_handle h;
    /* home node -1: StarPU allocates the tile where it is first used */
    starpu_matrix_data_register(&h, -1, 0, (uint32_t)rows, (uint32_t)rows, (uint32_t)cols,
                                tg_prec_size(p));
    tg_runtime_register(h, owner);
    return h;
}

/* The GPUs of a rank hold its tiles as the ranks hold the matrix's: tile (i, j) is the rank's
 * (i div p, j div q), on the squarest g_p × g_q grid of its G home GPUs, g_p ≥ g_q. */
int tg_matrix_tile_home(const tg_matrix *A, int i, int j) {
    int g = tg_runtime_homes(), gp, gq;
    if (g < 2) return -1;
    tg_grid_squarest(g, &gp, &gq);
    return (i / A->p) % gp * gq + (j / A->q) % gq;
}

tg_handle tg_matrix_tile_temp(const tg_matrix *A, int i, int j, int rows, int cols, tg_prec p) {
    tg_handle h = tg_tile_temp(rows, cols, p, tg_matrix_tile_owner(A, i, j));
    tg_runtime_home(h, tg_matrix_tile_home(A, i, j));
    return h;
}

tg_handle tg_matrix_new_tile(const tg_matrix *A, int i, int j, tg_prec prec) {
    int rows, cols;
    tg_matrix_tile_dims(A, i, j, &rows, &cols);
    return tg_matrix_tile_temp(A, i, j, rows, cols, prec);
}

tg_status tg_tile_check(const char *opt, int64_t n, int64_t nb, tg_error *err) {
    if (nb < TG_TILE_MIN && (n == 0 || nb < n))
        return tg_error_set(err, TG_ERR_ARG, "%s %lld: below %d, the smallest tile the workers "
                            "use well (a task on a smaller tile takes less time than StarPU "
                            "spends to schedule it, and the tasks grow as (n / tile)³)", opt,
                            (long long)nb, TG_TILE_MIN);
    const int64_t nt = n > 0 && nb > 0 ? (n + nb - 1) / nb : 0;
    if (nt > TG_TILES_MAX)
        return tg_error_set(err, TG_ERR_ARG, "%s %lld: %lld tiles a side for %lld rows, more "
                            "than %d (%.2g Cholesky tasks): use %s %lld or more", opt,
                            (long long)nb, (long long)nt, (long long)n, TG_TILES_MAX,
                            (double)nt * (double)nt * (double)nt / 6, opt,
                            (long long)((n + TG_TILES_MAX - 1) / TG_TILES_MAX));
    return TG_OK;
}

tg_status tg_matrix_create(tg_matrix **out, int64_t m, int64_t n, int mb, int nb, tg_shape shape,
                           tg_prec prec, int p, int q, tg_error *err) {
    *out = NULL;
    if (m <= 0 || n <= 0)
        return tg_error_set(err, TG_ERR_ARG, "matrix size %lld × %lld: must be positive",
                            (long long)m, (long long)n);
    if (mb <= 0 || nb <= 0)
        return tg_error_set(err, TG_ERR_ARG, "tile size %d × %d: must be positive", mb, nb);
    if (shape == TG_SYM_LOWER && (m != n || mb != nb))
        return tg_error_set(err, TG_ERR_ARG,
                            "a symmetric matrix must be square with square tiles (%lld × %lld, "
                            "tiles %d × %d)",
                            (long long)m, (long long)n, mb, nb);
    int nranks = tg_runtime_nranks();
    if (p == 0 && q == 0) tg_runtime_grid(&p, &q);
    if (p <= 0 || q <= 0 || p * q != nranks)
        return tg_error_set(err, TG_ERR_ARG, "process grid %d × %d does not match %d rank%s", p, q,
                            nranks, nranks == 1 ? "" : "s");
    int64_t mt = (m + mb - 1) / mb, nt = (n + nb - 1) / nb;
    if (mt > INT32_MAX / 2 || nt > INT32_MAX / 2 || (double)mt * (double)nt > 1e9)
        return tg_error_set(err, TG_ERR_ARG, "too many tiles (%lld × %lld): use larger tiles",
                            (long long)mt, (long long)nt);
    tg_matrix *A = tg_calloc(1, sizeof *A, err);
    if (!A) return TG_ERR_NOMEM;
    *A = (tg_matrix){.m = m, .n = n, .mb = mb, .nb = nb, .mt = (int)mt, .nt = (int)nt,
                     .shape = shape, .p = p, .q = q};
    A->prec = tg_malloc_n(mt, nt, sizeof *A->prec, err);
    A->scale = tg_malloc_n(mt, nt, sizeof *A->scale, err);
    A->h = tg_calloc_n(mt, nt, sizeof *A->h, err);
    if (!A->prec || !A->scale || !A->h) {
        tg_matrix_destroy(A);
        return TG_ERR_NOMEM;
    }
    for (int j = 0; j < A->nt; j++)
        for (int i = 0; i < A->mt; i++) {
            size_t t = tg_tile_index(A, i, j);
            A->prec[t] = prec;
            A->scale[t] = 1;
            if (tg_matrix_has_tile(A, i, j)) A->h[t] = tg_matrix_new_tile(A, i, j, prec);
        }
    *out = A;
    return TG_OK;
}

void tg_matrix_destroy(tg_matrix *A) {
    if (!A) return;
    if (A->h)
        for (size_t t = 0; t < (size_t)A->mt * A->nt; t++)
            if (A->h[t]) starpu_data_unregister(A->h[t]);
    free(A->h);
    free(A->prec);
    free(A->scale);
    free(A);
}

static int owned(const tg_matrix *A, int i, int j) {
    return tg_matrix_has_tile(A, i, j) && tg_matrix_tile_owner(A, i, j) == tg_runtime_rank();
}

tg_status tg_matrix_from_dense(tg_matrix *A, const double *a, int64_t lda, tg_error *err) {
    if (lda < A->m)
        return tg_error_set(err, TG_ERR_ARG, "leading dimension %lld < %lld rows", (long long)lda,
                            (long long)A->m);
    for (int j = 0; j < A->nt; j++)
        for (int i = 0; i < A->mt; i++) {
            if (!owned(A, i, j)) continue;
            size_t t = tg_tile_index(A, i, j);
            int rows, cols;
            tg_matrix_tile_dims(A, i, j, &rows, &cols);
            starpu_data_acquire(A->h[t], STARPU_W);
            void *p = (void *)starpu_matrix_get_local_ptr(A->h[t]);
            size_t ld = starpu_matrix_get_local_ld(A->h[t]);
            const double *src = a + (int64_t)i * A->mb + (int64_t)j * A->nb * lda;
            for (int c = 0; c < cols; c++)
                for (int r = 0; r < rows; r++)
                    tg_prec_store(A->prec[t], p, r + c * ld, src[r + c * lda] * A->scale[t]);
            starpu_data_release(A->h[t]);
        }
    return TG_OK;
}

/* Copies tile (i, j), which this rank owns, into buf (rows × cols, column-major, unscaled). */
static void tile_to_buf(const tg_matrix *A, int i, int j, double *buf, int rows, int cols) {
    size_t t = tg_tile_index(A, i, j);
    starpu_data_acquire(A->h[t], STARPU_R);
    const void *p = (const void *)starpu_matrix_get_local_ptr(A->h[t]);
    size_t ld = starpu_matrix_get_local_ld(A->h[t]);
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < rows; r++)
            buf[r + (size_t)c * rows] = tg_prec_load(A->prec[t], p, r + c * ld) / A->scale[t];
    starpu_data_release(A->h[t]);
}

tg_status tg_matrix_to_dense(const tg_matrix *A, double *a, int64_t lda, tg_error *err) {
    if (lda < A->m)
        return tg_error_set(err, TG_ERR_ARG, "leading dimension %lld < %lld rows", (long long)lda,
                            (long long)A->m);
    double *buf = tg_malloc_n(A->mb, A->nb, sizeof *buf, err);
    if (!buf) return TG_ERR_NOMEM;
    /* this thread calls MPI below: StarPU-MPI's must be idle (see tg_runtime_gather) */
    if (tg_runtime_mpi()) tg_runtime_wait_all();
    for (int j = 0; j < A->nt; j++)
        for (int i = 0; i < A->mt; i++) {
            if (!tg_matrix_has_tile(A, i, j)) continue;
            int rows, cols, owner = tg_matrix_tile_owner(A, i, j);
            tg_matrix_tile_dims(A, i, j, &rows, &cols);
            if (owner == tg_runtime_rank()) tile_to_buf(A, i, j, buf, rows, cols);
#ifdef TG_USE_MPI
            if (tg_runtime_mpi())
                MPI_Bcast(buf, rows * cols, MPI_DOUBLE, owner, MPI_COMM_WORLD);
#endif
            double *dst = a + (int64_t)i * A->mb + (int64_t)j * A->nb * lda;
            for (int c = 0; c < cols; c++)
                for (int r = 0; r < rows; r++) dst[r + c * lda] = buf[r + (size_t)c * rows];
        }
    free(buf);
    return TG_OK;
}

/* Powers of two only: scaling is then exact and adds no rounding to the tile's own. */
int tg_tile_scale_valid(double s) {
    int e;
    return s > 0 && isfinite(s) && frexp(s, &e) == 0.5;
}

void tg_matrix_retype(tg_matrix *A, const tg_prec *map, const double *scale) {
    for (int j = 0; j < A->nt; j++)
        for (int i = 0; i < A->mt; i++) {
            size_t t = tg_tile_index(A, i, j);
            if (!A->h[t]) continue;
            starpu_data_unregister_submit(A->h[t]);
            A->h[t] = tg_matrix_new_tile(A, i, j, map[t]);
            A->prec[t] = map[t];
            A->scale[t] = scale[t];
        }
}

tg_status tg_matrix_tile_read(const tg_matrix *A, int i, int j, void *buf, tg_error *err) {
    if (!owned(A, i, j))
        return tg_error_set(err, TG_ERR_ARG, "tile (%d, %d) is not a stored tile of this rank", i,
                            j);
    size_t t = tg_tile_index(A, i, j), es = tg_prec_size(A->prec[t]);
    int rows, cols;
    tg_matrix_tile_dims(A, i, j, &rows, &cols);
    if (starpu_data_acquire(A->h[t], STARPU_R))
        return tg_error_set(err, TG_ERR_RUNTIME, "cannot acquire tile (%d, %d)", i, j);
    const char *p = (const char *)starpu_matrix_get_local_ptr(A->h[t]);
    size_t ld = starpu_matrix_get_local_ld(A->h[t]);
    for (int c = 0; c < cols; c++)
        memcpy((char *)buf + (size_t)c * rows * es, p + (size_t)c * ld * es, (size_t)rows * es);
    starpu_data_release(A->h[t]);
    return TG_OK;
}

tg_status tg_matrix_tile_write(tg_matrix *A, int i, int j, tg_prec prec, double scale,
                               const void *buf, tg_error *err) {
    if (!tg_matrix_has_tile(A, i, j))
        return tg_error_set(err, TG_ERR_ARG, "tile (%d, %d) is not a stored tile", i, j);
    if (prec < TG_FP64 || prec > TG_FP8_E4M3)
        return tg_error_set(err, TG_ERR_ARG, "tile (%d, %d): %s is not fp64, fp32, fp16 or fp8",
                            i, j, tg_prec_name(prec));
    if (!tg_tile_scale_valid(scale))
        return tg_error_set(err, TG_ERR_ARG, "tile (%d, %d): scale %g is not a positive power of "
                            "two", i, j, scale);
    size_t t = tg_tile_index(A, i, j), es = tg_prec_size(prec);
    /* every rank: a handle of the new element size (the old content is dropped), registered
     * with the same StarPU-MPI tag everywhere, and the tile's precision and scale */
    if (prec != A->prec[t]) {
        starpu_data_unregister(A->h[t]);
        A->h[t] = tg_matrix_new_tile(A, i, j, prec);
        A->prec[t] = prec;
    }
    A->scale[t] = scale;
    if (!owned(A, i, j)) return TG_OK;
    int rows, cols;
    tg_matrix_tile_dims(A, i, j, &rows, &cols);
    if (starpu_data_acquire(A->h[t], STARPU_W))
        return tg_error_set(err, TG_ERR_RUNTIME, "cannot acquire tile (%d, %d)", i, j);
    char *p = (char *)starpu_matrix_get_local_ptr(A->h[t]);
    size_t ld = starpu_matrix_get_local_ld(A->h[t]);
    for (int c = 0; c < cols; c++)
        memcpy(p + (size_t)c * ld * es, (const char *)buf + (size_t)c * rows * es,
               (size_t)rows * es);
    starpu_data_release(A->h[t]);
    return TG_OK;
}
