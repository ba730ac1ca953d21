/* The precision map of a tile Cholesky as TSV or as a heat map PNG with axes and a legend
 * (tg_precmap_write, declared in tilegwas.h). */
#include <stdlib.h>
#include <string.h>

#include "io/out.h"
#include "io/png.h"
#include "tilegwas.h"

/* The colours, named alike in the legend, tg_precmap_write's comment, krr --help and the user
 * guide (the KRR paper's Fig. 4, a diverging red-blue scale). */
static const struct {
    uint32_t rgb;
    const char *name;
} colour[TG_NPREC] = {[TG_FP64] = {0xB2182B, "dark red"},
                      [TG_FP32] = {0xF4A582, "light red"},
                      [TG_FP16] = {0x92C5DE, "light blue"},
                      [TG_FP8_E4M3] = {0x2166AC, "dark blue"}};

/* Axis ticks at tile boundaries far enough apart for their labels: the tile index (black)
 * and the tile's first sample (grey; the last tick: the tile count and n), above the map and
 * left of it. */
static void axis_labels(tg_image *img, int nt, int64_t nb, int64_t n, uint32_t s, int x0, int y0) {
    char widest[24];
    int len = snprintf(widest, sizeof widest, "%lld", (long long)n);
    int step = (int)(((uint32_t)(len + 1) * TG_GLYPH_W + s - 1) / s);
    for (int t = 0;; t = t + step < nt ? t + step : nt) {
        char tile[16], smp[24];
        int64_t at = (int64_t)t * (int64_t)s, lt, ls;
        lt = snprintf(tile, sizeof tile, "%d", t);
        ls = snprintf(smp, sizeof smp, "%lld", (long long)(t < nt ? (int64_t)t * nb : n));
        tg_image_fill(img, x0 + at - (t == nt), y0 - 4, 1, 4, 0x000000);
        tg_image_text(img, x0 + at - lt * TG_GLYPH_W / 2, y0 - 26, tile, 0x000000);
        tg_image_text(img, x0 + at - ls * TG_GLYPH_W / 2, y0 - 15, smp, 0x555555);
        tg_image_fill(img, x0 - 4, y0 + at - (t == nt), 4, 1, 0x000000);
        int64_t ty = y0 + at - TG_GLYPH_H / 2;
        tg_image_text(img, x0 - 6 - ls * TG_GLYPH_W, ty, smp, 0x555555);
        tg_image_text(img, x0 - 6 - (ls + 1 + lt) * TG_GLYPH_W, ty, tile, 0x000000);
        if (t == nt) break;
    }
}

/* The heat map, ⌊256/nt⌋ pixels per tile, with axes in tiles (black) and samples (grey) on
 * the top and the left, and a legend of the precisions on the right. */
static tg_status precmap_png(const char *path, const tg_prec *map, int nt, int64_t nb, int64_t n,
                             tg_error *err) {
    uint32_t s = nt < 256 ? 256 / (uint32_t)nt : 1, side = s * (uint32_t)nt;
    char widest[48];
    snprintf(widest, sizeof widest, "%d %lld", nt, (long long)n);
    const int x0 = 12 + (int)strlen(widest) * TG_GLYPH_W, y0 = 48, legend_x = x0 + (int)side + 16;
    const int w = legend_x + 24 * TG_GLYPH_W, h = y0 + (int)side + 24;
    tg_image img;
    tg_status st = tg_image_create(&img, (uint32_t)w, (uint32_t)(h > 150 ? h : 150), 0xFFFFFF,
                                   err);
    if (st) return st;
    for (int j = 0; j < nt; j++)
        for (int i = j; i < nt; i++)
            tg_image_fill(&img, x0 + (int64_t)j * s, y0 + (int64_t)i * s, s, s,
                          colour[map[i + (size_t)j * nt]].rgb);
    tg_image_text(&img, 4, 4, "precision of each tile's updates; tiles (black), samples (grey)",
                  0x000000);
    axis_labels(&img, nt, nb, n, s, x0, y0);
    static const tg_prec order[] = {TG_FP64, TG_FP32, TG_FP16, TG_FP8_E4M3};
    for (int q = 0; q < 4; q++) {
        char lab[48];
        snprintf(lab, sizeof lab, "%s %s", tg_prec_name(order[q]), colour[order[q]].name);
        tg_image_fill(&img, legend_x, y0 + q * 16, 12, 10, colour[order[q]].rgb);
        tg_image_text(&img, legend_x + 18, y0 + q * 16 + 1, lab, 0x000000);
    }
    tg_image_fill(&img, legend_x, y0 + 4 * 16, 12, 10, 0xDDDDDD);
    tg_image_fill(&img, legend_x + 1, y0 + 4 * 16 + 1, 10, 8, 0xFFFFFF);
    tg_image_text(&img, legend_x + 18, y0 + 4 * 16 + 1, "upper: white", 0x000000);
    st = tg_png_write(path, img.rgb, img.w, img.h, err);
    tg_image_free(&img);
    return st;
}

tg_status tg_precmap_write(const char *path, int png, const tg_prec *map, int nt, int64_t nb,
                           int64_t n, tg_error *err) {
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
    return precmap_png(path, map, nt, nb, n, err);
}
