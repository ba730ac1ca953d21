/* PNG pictures (src/io/png.c). The files are read back here from the format's description:
 * chunk by chunk with a bitwise CRC-32 written below (not zlib's), the IDAT stream inflated by
 * zlib's uncompress, each row's filter byte checked, and the pixels compared with the canvas
 * that was written, byte for byte. Sizes against the stored (uncompressed) deflate layout the
 * writer used before: flat pictures must shrink at least twentyfold, noise grow < 0.1%.
 * Wrapped text: the line count, every line's ink within the width, words kept whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/rng.h"
#include "io/png.h"
#include "tap.h"

static uint32_t crc_bitwise(const uint8_t *p, size_t n, uint32_t crc) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++) crc = crc & 1 ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
    }
    return ~crc;
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The size of the same picture in stored deflate blocks of 65,535 bytes (the old writer). */
static size_t stored_size(uint32_t w, uint32_t h) {
    size_t raw = (1 + 3 * (size_t)w) * h;
    return 8 + 25 + 12 + (2 + raw + 5 * ((raw + 65534) / 65535) + 4) + 12;
}

/* Reads @p path back; 1 when every chunk's CRC holds, IHDR says w × h 8-bit RGB, and the rows
 * inflate to filter 0 and exactly the pixels of @p img. *bytes: the file size. */
static int decodes_to(const char *path, const tg_image *img, long *bytes) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *b = malloc((size_t)n), *idat = malloc((size_t)n);
    size_t ni = 0, raw_n = (1 + 3 * (size_t)img->w) * img->h;
    uint8_t *raw = malloc(raw_n + 1);
    int good = fread(b, 1, (size_t)n, f) == (size_t)n &&
               !memcmp(b, "\x89PNG\r\n\x1a\n", 8);
    fclose(f);
    *bytes = n;
    int ihdr = 0, iend = 0;
    for (long at = 8; good && at + 12 <= n; ) {
        uint32_t len = get32(b + at);
        if (at + 12 + (long)len > n) {
            good = 0;
            break;
        }
        const uint8_t *type = b + at + 4, *data = b + at + 8;
        good &= crc_bitwise(type, 4 + len, 0) == get32(data + len);
        if (!memcmp(type, "IHDR", 4))
            ihdr = len == 13 && get32(data) == img->w && get32(data + 4) == img->h &&
                   data[8] == 8 && data[9] == 2 && !data[10] && !data[11] && !data[12];
        if (!memcmp(type, "IDAT", 4)) memcpy(idat + ni, data, len), ni += len;
        if (!memcmp(type, "IEND", 4)) iend = at + 12 + (long)len == n;
        at += 12 + (long)len;
    }
    uLongf got = (uLongf)raw_n + 1;
    good = good && ihdr && iend && uncompress(raw, &got, idat, (uLong)ni) == Z_OK &&
           got == raw_n;
    for (uint32_t y = 0; good && y < img->h; y++) {
        const uint8_t *row = raw + y * (1 + 3 * (size_t)img->w);
        good = row[0] == 0 && !memcmp(row + 1, img->rgb + (size_t)y * 3 * img->w, 3 * img->w);
    }
    free(raw);
    free(idat);
    free(b);
    return good;
}

/* A chart like --trace's: stripes, bars, text. */
static void chart(tg_image *img, tg_rng *r) {
    for (int w = 0; w < 8; w++) {
        if (w % 2) tg_image_fill(img, 130, 24 + w * 16, 1050, 16, 0xF2F2F2);
        tg_image_text(img, 4, 28 + w * 16, "CPU 3", 0x000000);
        for (int t = 0; t < 40; t++)
            tg_image_fill(img, 130 + (int64_t)tg_rng_below(r, 1000), 25 + w * 16,
                          1 + (int64_t)tg_rng_below(r, 50), 14,
                          (uint32_t)tg_rng_below(r, 4) * 0x3F2A11 + 0x4E79A7);
    }
    tg_image_text(img, 8, 6, "krr: 1234 tasks in 5.678 s; CPU only", 0x000000);
}

static void pictures(const char *dir, tg_rng *r) {
    char path[512];
    tg_error err = {0};
    long bytes = 0;
    tg_image img;
    /* a chart, then the same size of noise, then odd sizes (one pixel; rows of one stored
     * block's length) */
    struct {
        uint32_t w, h;
        int noise;
        const char *what;
    } cases[] = {{1200, 160, 0, "a 1200 x 160 chart"}, {1200, 160, 1, "1200 x 160 of noise"},
                 {1, 1, 1, "one pixel"}, {21845, 4, 1, "rows of 65,536 bytes"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(path, sizeof path, "%s/p%zu.png", dir, c);
        if (tg_image_create(&img, cases[c].w, cases[c].h, 0xFFFFFF, &err)) {
            ok(0, "%s: canvas", cases[c].what);
            continue;
        }
        if (cases[c].noise)
            for (size_t i = 0; i < (size_t)img.w * img.h * 3; i++)
                img.rgb[i] = (uint8_t)tg_rng_below(r, 256);
        else
            chart(&img, r);
        tg_status st = tg_png_write(path, img.rgb, img.w, img.h, &err);
        int good = !st && decodes_to(path, &img, &bytes);
        ok(good, "%s: written (%s), every CRC, IHDR, rows and pixels as drawn", cases[c].what,
           st ? err.msg : "ok");
        size_t stored = stored_size(img.w, img.h);
        if (cases[c].noise)
            ok(good && (double)bytes <= 1.001 * (double)stored,
               "%s: %ld bytes, within 0.1%% of stored %zu", cases[c].what, bytes, stored);
        else
            ok(good && (size_t)bytes * 20 < stored, "%s: %ld bytes, a twentieth of stored %zu",
               cases[c].what, bytes, stored);
        tg_image_free(&img);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/no/such/folder/x.png", dir);
    const uint8_t px[3] = {1, 2, 3};
    tg_status st = tg_png_write(path, px, 1, 1, &err);
    ok(st == TG_ERR_IO && strstr(err.msg, path) && access(path, F_OK) != 0,
       "a folder that does not exist: TG_ERR_IO naming the path (%s)", err.msg);
}

/* The columns [x0, x1) of line @p l of wrapped text drawn at (0, 0) that hold ink. */
static void ink(const tg_image *img, int l, int *x0, int *x1) {
    *x0 = (int)img->w, *x1 = 0;
    for (int y = l * TG_LINE_H; y < l * TG_LINE_H + TG_GLYPH_H && y < (int)img->h; y++)
        for (int x = 0; x < (int)img->w; x++)
            if (img->rgb[((size_t)y * img->w + x) * 3] == 0) {
                if (x < *x0) *x0 = x;
                if (x + 1 > *x1) *x1 = x + 1;
            }
}

static void wrapping(void) {
    tg_error err = {0};
    tg_image img;
    const char *title = "grm: 250 tasks in 12.345 s; StarPU 1.3.10, scheduler dmdas, 1 rank, 2 CPU "
                        "workers on CPUs 0-1, 0 GPUs; host loops on 2 threads; OpenBLAS kernels "
                        "Haswell (OPENBLAS_CORETYPE=Haswell)";
    const int width = 60 * TG_GLYPH_W; /* 60 characters */
    int lines = tg_image_text_wrap(NULL, 0, 0, width, title, 0);
    /* greedy by hand: the words of the title, 60 characters a line at most */
    int want = 1, used = 0;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", title);
    for (char *w = strtok(copy, " "); w; w = strtok(NULL, " ")) {
        int len = (int)strlen(w);
        if (used && used + 1 + len > 60) want++, used = len;
        else used += (used ? 1 : 0) + len;
    }
    ok(lines == want, "a %zu-character title in 60-character lines: %d lines (by hand %d)",
       strlen(title), lines, want);
    if (tg_image_create(&img, 2 * width, (uint32_t)(lines + 1) * TG_LINE_H, 0xFFFFFF, &err)) {
        ok(0, "canvas");
        return;
    }
    int drawn = tg_image_text_wrap(&img, 0, 0, width, title, 0x000000), inside = 1, x0, x1;
    for (int l = 0; l < lines; l++) {
        ink(&img, l, &x0, &x1);
        /* ink in the first glyph cell: the line starts with a word, not a space */
        inside &= x0 < TG_GLYPH_W && x1 <= width;
    }
    ink(&img, lines, &x0, &x1);
    ok(drawn == lines && inside && x1 == 0,
       "drawn in the same %d lines, each starting at the left and within %d pixels", drawn,
       width);
    tg_image_free(&img);
    ok(tg_image_text_wrap(NULL, 0, 0, 4 * TG_GLYPH_W, "abcdefghij", 0) == 3,
       "a word longer than a line is cut (10 characters, 4 a line: 3 lines)");
    ok(tg_image_text_wrap(NULL, 0, 0, 4 * TG_GLYPH_W, "abcd efgh", 0) == 2,
       "a line that fits exactly ends before its space ('abcd efgh', 4 a line: 2 lines)");
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    char dir[] = "/tmp/tg_png_XXXXXX";
    if (!mkdtemp(dir)) tap_skip_all("no temporary folder");
    pictures(dir, &r);
    wrapping();
    rmdir(dir);
    tap_plan(tap_n);
    return tap_done();
}
