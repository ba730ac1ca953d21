/* The precision map of a tile Cholesky as TSV or as a heat map PNG (tg_precmap_write, declared in
 * tilegwas.h). */
#include <stdlib.h>
#include <string.h>

#include "io/out.h"
#include "io/png.h"
#include "tilegwas.h"

tg_status tg_precmap_write(const char *path, int png, const tg_prec *map, int nt, tg_error *err) {
    if (!png) {
        FILE *f;
        char *p = NULL;
        tg_status st = tg_out_open(path, "", &f, &p, err);
        if (st) return st;
        fputs("tile_row\ttile_col\tprecision\n", f);
        for (int j = 0; j < nt; j++)
            for (int i = j; i < nt; i++)
                fprintf(f, "%d\t%d\t%s\n", i, j, tg_prec_name(map[i + (size_t)j * nt]));
        st = tg_out_close(f, p, err);
        free(p);
        return st;
    }
    static const uint8_t colour[TG_NPREC][3] = {
        [TG_FP64] = {178, 24, 43}, [TG_FP32] = {244, 165, 130}, [TG_FP16] = {146, 197, 222},
        [TG_FP8_E4M3] = {33, 102, 172}};
    uint32_t s = nt < 256 ? 256 / (uint32_t)nt : 1, side = s * (uint32_t)nt;
    uint8_t *rgb = tg_malloc((size_t)side * side * 3, err);
    if (!rgb) return TG_ERR_NOMEM;
    for (uint32_t y = 0; y < side; y++)
        for (uint32_t x = 0; x < side; x++) {
            int i = (int)(y / s), j = (int)(x / s);
            uint8_t *px = rgb + ((size_t)y * side + x) * 3;
            if (i < j) memset(px, 255, 3);
            else memcpy(px, colour[map[i + (size_t)j * nt]], 3);
        }
    tg_status st = tg_png_write(path, rgb, side, side, err);
    free(rgb);
    return st;
}
