/* The pictures of the association tests (tg_manhattan_png, tg_qq_png; declared in tilegwas.h):
 * a Manhattan plot and a QQ plot of −log10 P, drawn with the canvas of io/png.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/png.h"
#include "tilegwas.h"

/* The frame of a plot: the data area's corner (x0, y0: top left) and size, and the −log10 P
 * at its top. */
typedef struct {
    int64_t x0, y0, w, h;
    double ymax;
} frame;

static int64_t ypix(const frame *f, double v) {
    return f->y0 + f->h - (int64_t)llround(v / f->ymax * (double)f->h);
}

/* Axes, ticks on the −log10 P axis (a step that gives at most 10 of them), its label and the
 * title. */
static void axes(tg_image *img, const frame *f, const char *title) {
    tg_image_fill(img, f->x0 - 1, f->y0, 1, f->h + 1, 0x000000);
    tg_image_fill(img, f->x0 - 1, f->y0 + f->h, f->w + 1, 1, 0x000000);
    double step = 1;
    while (f->ymax / step > 10) step *= 2;
    for (double v = 0; v <= f->ymax; v += step) {
        char s[16];
        int len = snprintf(s, sizeof s, "%g", v);
        int64_t y = ypix(f, v);
        tg_image_fill(img, f->x0 - 5, y, 4, 1, 0x000000);
        tg_image_text(img, f->x0 - 7 - len * TG_GLYPH_W, y - TG_GLYPH_H / 2, s, 0x000000);
    }
    tg_image_text(img, 4, f->y0 - 14, "-log10 P", 0x000000);
    tg_image_text(img, f->x0 + (f->w - (int64_t)strlen(title) * TG_GLYPH_W) / 2, 6, title,
                  0x000000);
}

static void dot(tg_image *img, int64_t x, int64_t y, uint32_t colour) {
    tg_image_fill(img, x - 1, y - 1, 3, 3, colour);
}

static double max_finite(const double *v, int64_t m, double at_least) {
    for (int64_t j = 0; j < m; j++)
        if (v[j] > at_least && isfinite(v[j])) at_least = v[j];
    return at_least;
}

/* The chromosomes of @p bed in order of first appearance: of[j] for each SNP, and per
 * chromosome its first SNP and its span [lo, hi] in bp; returns their count. */
static int chromosomes(const tg_bed *bed, int *of, int64_t *first, int64_t *lo, int64_t *hi) {
    int nc = 0;
    for (int64_t j = 0; j < bed->n_snps; j++) {
        const tg_snp *s = &bed->snps[j];
        int c = j && !strcmp(s->chrom, bed->snps[j - 1].chrom) ? of[j - 1] : 0;
        while (c < nc && strcmp(bed->snps[first[c]].chrom, s->chrom)) c++;
        if (c == nc) first[nc] = j, lo[nc] = hi[nc] = s->pos, nc++;
        of[j] = c;
        if (s->pos < lo[c]) lo[c] = s->pos;
        if (s->pos > hi[c]) hi[c] = s->pos;
    }
    return nc;
}

/* The Manhattan plot's content: the significance line, chromosome names (those that fit) and
 * the dots; each chromosome as wide as its span in bp, start[c] its offset. */
static void manhattan(tg_image *img, const frame *f, const tg_bed *bed, const double *log10p,
                      const int *of, const int64_t *first, const int64_t *lo, const int64_t *hi,
                      const double *start, int nc, double total) {
    for (int64_t x = f->x0; x < f->x0 + f->w; x += 8) /* genome-wide significance, dashed */
        tg_image_fill(img, x, ypix(f, -log10(5e-8)), 4, 1, 0xD62728);
    int64_t label_end = 0;
    for (int c = 0; c < nc; c++) {
        const double mid = (start[c] + (double)(hi[c] - lo[c]) / 2) / total;
        const char *name = bed->snps[first[c]].chrom;
        const int64_t x = f->x0 + (int64_t)(mid * (double)f->w),
                      len = (int64_t)strlen(name) * TG_GLYPH_W;
        if (x - len / 2 > label_end) { /* names that do not fit are left out */
            tg_image_text(img, x - len / 2, f->y0 + f->h + 8, name, 0x000000);
            label_end = x + len / 2 + TG_GLYPH_W;
        }
    }
    for (int64_t j = 0; j < bed->n_snps; j++) {
        if (isnan(log10p[j])) continue;
        const int c = of[j];
        const double at = (start[c] + (double)(bed->snps[j].pos - lo[c])) / total;
        dot(img, f->x0 + (int64_t)(at * (double)(f->w - 1)),
            ypix(f, isfinite(log10p[j]) ? log10p[j] : f->ymax), c % 2 ? 0x6BAED6 : 0x1F4E79);
    }
}

tg_status tg_manhattan_png(const char *path, const tg_bed *bed, const double *log10p,
                           const char *title, tg_error *err) {
    const int64_t m = bed->n_snps;
    int64_t *first = tg_malloc((size_t)m * sizeof *first + 1, err),
            *lo = tg_malloc((size_t)m * sizeof *lo + 1, err),
            *hi = tg_malloc((size_t)m * sizeof *hi + 1, err);
    int *of = tg_malloc((size_t)m * sizeof *of + 1, err);
    double *start = tg_malloc((size_t)m * sizeof *start + 1, err), total = 0;
    tg_image img = {0};
    tg_status st = !first || !lo || !hi || !of || !start ? TG_ERR_NOMEM : TG_OK;
    if (!st) {
        const int nc = chromosomes(bed, of, first, lo, hi);
        for (int c = 0; c < nc; c++) {
            start[c] = total;
            total += (double)(hi[c] - lo[c] + 1);
        }
        frame f = {60, 30, 940, 300, 1.05 * max_finite(log10p, m, -log10(5e-8))};
        if (!(st = tg_image_create(&img, 1024, 360, 0xFFFFFF, err))) {
            axes(&img, &f, title);
            manhattan(&img, &f, bed, log10p, of, first, lo, hi, start, nc, total);
            st = tg_png_write(path, img.rgb, img.w, img.h, err);
        }
    }
    tg_image_free(&img);
    free(start);
    free(first);
    free(lo);
    free(hi);
    free(of);
    return st;
}

static int descending(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

tg_status tg_qq_png(const char *path, const double *log10p, int64_t m, const char *title,
                    double lambda_gc, tg_error *err) {
    double *v = tg_malloc((size_t)m * sizeof *v + 1, err);
    if (!v) return TG_ERR_NOMEM;
    int64_t nv = 0;
    for (int64_t j = 0; j < m; j++)
        if (!isnan(log10p[j])) v[nv++] = log10p[j];
    qsort(v, (size_t)nv, sizeof *v, descending);
    /* the i-th largest of nv uniform P values is expected at (i − 1/2)/nv */
    const double emax = nv ? -log10(0.5 / (double)nv) : 1;
    frame f = {60, 30, 400, 400, 1.05 * max_finite(v, nv, emax)};
    tg_image img = {0};
    tg_status st = tg_image_create(&img, 480, 470, 0xFFFFFF, err);
    if (!st) {
        axes(&img, &f, title);
        for (int64_t x = 0; x < f.w; x++) /* the diagonal */
            tg_image_fill(&img, f.x0 + x, ypix(&f, (double)x / (double)f.w * f.ymax), 1, 1,
                          0xD62728);
        double step = 1; /* the expected axis' ticks, as the observed one's */
        while (f.ymax / step > 10) step *= 2;
        for (double e = 0; e <= f.ymax; e += step) {
            char t[16];
            const int len = snprintf(t, sizeof t, "%g", e);
            const int64_t x = f.x0 + (int64_t)llround(e / f.ymax * (double)f.w);
            tg_image_fill(&img, x, f.y0 + f.h + 1, 1, 4, 0x000000);
            tg_image_text(&img, x - len * TG_GLYPH_W / 2, f.y0 + f.h + 7, t, 0x000000);
        }
        for (int64_t i = 0; i < nv; i++) {
            const double e = -log10(((double)i + 0.5) / (double)nv);
            dot(&img, f.x0 + (int64_t)(e / f.ymax * (double)f.w),
                ypix(&f, isfinite(v[i]) ? v[i] : f.ymax), 0x1F4E79);
        }
        char s[64];
        snprintf(s, sizeof s, "expected -log10 P; lambda_GC %.4f", lambda_gc);
        tg_image_text(&img, f.x0, f.y0 + f.h + 20, s, 0x000000);
        st = tg_png_write(path, img.rgb, img.w, img.h, err);
    }
    tg_image_free(&img);
    free(v);
    return st;
}
