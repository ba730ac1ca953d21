/* Internal view of the tiled matrix, for algorithms that insert tasks on its tiles. */
#ifndef TG_MATRIX_H
#define TG_MATRIX_H
#include "runtime/runtime.h"
#include "tilegwas.h"

struct tg_matrix {
    int64_t m, n;   /* global size */
    int mb, nb;     /* tile size (the last tile row/column may be smaller) */
    int mt, nt;     /* tile counts */
    tg_shape shape;
    int p, q;       /* process grid: tile (i, j) lives on rank (i mod p)·q + (j mod q) */
    tg_prec *prec;  /* mt × nt, column-major */
    double *scale;  /* mt × nt: a tile holds value·scale */
    tg_handle *h; /* mt × nt; NULL where no tile is stored */
};

static inline size_t tg_tile_index(const tg_matrix *A, int i, int j) {
    return (size_t)i + (size_t)j * (size_t)A->mt;
}
static inline tg_handle tg_tile(const tg_matrix *A, int i, int j) {
    return A->h[tg_tile_index(A, i, j)];
}

/** A temporary tile of @p rows × @p cols in precision @p p, allocated by StarPU where it is
 * first written, owned by rank @p owner (the rank whose task writes it) under StarPU-MPI. */
tg_handle tg_tile_temp(int rows, int cols, tg_prec p, int owner);

/** The home GPU of tile (i, j) of @p A among this rank's (tg_runtime_homes), -1 when homes are
 * off. */
int tg_matrix_tile_home(const tg_matrix *A, int i, int j);

/** A temporary tile of @p rows × @p cols in precision @p p that lives with tile (i, j) of @p A:
 * the same owner rank and home GPU (a copy or a transform of that tile). */
tg_handle tg_matrix_tile_temp(const tg_matrix *A, int i, int j, int rows, int cols, tg_prec p);

/** A fresh handle for tile (i, j) of @p A in precision @p p (content undefined, owner as the
 * tile's): what a tile becomes when its precision changes. */
tg_handle tg_matrix_new_tile(const tg_matrix *A, int i, int j, tg_prec p);

/** Whether @p s is a valid tile scale: a positive power of two. */
int tg_tile_scale_valid(double s);

/** Gives every stored tile the precision map[i + j·mt] and scale scale[i + j·mt] as fresh
 * tiles whose content is undefined (nothing converted): for a matrix about to be written
 * again, such as a factor to be refilled after a failed factorisation. */
void tg_matrix_retype(tg_matrix *A, const tg_prec *map, const double *scale);
#endif
