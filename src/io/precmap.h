/* The precision map of a tile Cholesky as a file: TSV of the lower tiles, or a heat map PNG
 * (the KRR paper's Fig. 4). */
#ifndef TG_PRECMAP_H
#define TG_PRECMAP_H
#include "tilegwas.h"

/** Writes the map @p map (nt × nt, column-major) to @p path: with @p png a heat map of
 * ⌊256/nt⌋ (at least 1) pixels per tile, tile (0, 0) top left (fp64 dark red, fp32 orange,
 * fp16 light blue, fp8 dark blue, upper triangle white); otherwise TSV lines (tile row, tile
 * column, precision) of the lower tiles. */
tg_status tg_precmap_write(const char *path, int png, const tg_prec *map, int nt, tg_error *err);
#endif
