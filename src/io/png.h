/* RGB pictures written as PNG (deflated by zlib): the precision map of krr, the Gantt charts of
 * --trace and bench/sched. A canvas with filled rectangles and a built-in 5×8 bitmap font. */
#ifndef TG_PNG_H
#define TG_PNG_H
#include <stdint.h>

#include "tilegwas.h"

/** Writes the 8-bit RGB image w × h of @p rgb (rows of 3w bytes, top first) to @p path. */
tg_status tg_png_write(const char *path, const uint8_t *rgb, uint32_t w, uint32_t h,
                       tg_error *err);

/** An RGB canvas (rows of 3w bytes, top first); drawing clips at its edges. */
typedef struct {
    uint32_t w, h;
    uint8_t *rgb;
} tg_image;

/** A w × h canvas filled with @p colour (0xRRGGBB); free it with tg_image_free. */
tg_status tg_image_create(tg_image *img, uint32_t w, uint32_t h, uint32_t colour, tg_error *err);
void tg_image_free(tg_image *img);
/** Fills the rectangle with corner (x, y) and size w × h. */
void tg_image_fill(tg_image *img, int64_t x, int64_t y, int64_t w, int64_t h, uint32_t colour);
/** Text of printable ASCII in 5×8 glyphs, 6 pixels apart (TG_GLYPH_W), the top left corner at
 * (x, y); other bytes are drawn as '?'. */
void tg_image_text(tg_image *img, int64_t x, int64_t y, const char *s, uint32_t colour);
enum { TG_GLYPH_W = 6, TG_GLYPH_H = 8, TG_LINE_H = 10 };
/** tg_image_text in lines TG_LINE_H apart, each at most @p width pixels wide, broken at the
 * last space where the line fits (a longer word is cut; spaces at a break are dropped); returns
 * the line count. @p img NULL only counts,
 * so that a canvas can be sized before it is drawn. */
int tg_image_text_wrap(tg_image *img, int64_t x, int64_t y, int64_t width, const char *s,
                       uint32_t colour);
#endif
