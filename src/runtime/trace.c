/* Task traces as a table and as a Gantt chart (trace.h). */
#include "runtime/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/out.h"
#include "io/png.h"

tg_status tg_trace_tsv(const char *path, const tg_task_record *r, size_t n, tg_error *err) {
    FILE *f;
    char *p = NULL;
    tg_status st = tg_out_open(path, "", &f, &p, err);
    if (st) return st;
    fputs("id\tkernel\tworker\tworker_name\tsubmit\tstart\tend\tpredicted\twork\tpreds\n", f);
    for (size_t i = 0; i < n; i++) {
        char name[64] = "-", pred[32] = "NA";
        if (r[i].worker >= 0) starpu_worker_get_name(r[i].worker, name, sizeof name);
        if (!isnan(r[i].predicted)) snprintf(pred, sizeof pred, "%.9f", r[i].predicted);
        fprintf(f, "%lld\t%s\t%d\t%s\t%.9f\t%.9f\t%.9f\t%s\t%.17g\t", (long long)r[i].id,
                r[i].kernel, r[i].worker, name, r[i].submit, r[i].start, r[i].end, pred,
                r[i].work);
        for (int k = 0; k < r[i].npred; k++)
            fprintf(f, "%s%lld", k ? "," : "", (long long)r[i].pred[k]);
        fputs(r[i].npred ? "\n" : "-\n", f);
    }
    st = tg_out_close(f, p, err);
    free(p);
    return st;
}

/* Distinct colours for the kernels taking the most time (Tableau 10, then two more); further
 * kernels get hues a golden angle apart. */
static uint32_t kernel_colour(int k) {
    static const uint32_t palette[] = {0x4E79A7, 0xF28E2B, 0xE15759, 0x76B7B2, 0x59A14F, 0xEDC948,
                                       0xB07AA1, 0xFF9DA7, 0x9C755F, 0xBAB0AC, 0x1B9E77, 0x7570B3};
    enum { NPAL = sizeof palette / sizeof palette[0] };
    if (k < NPAL) return palette[k];
    double h = fmod((k - NPAL) * 137.508, 360) / 60; /* HSV with S = 0.6, V = 0.8 */
    double c = 0.48, x = c * (1 - fabs(fmod(h, 2) - 1)), m = 0.8 - c, rgb[3];
    switch ((int)h) {
    case 0: rgb[0] = c, rgb[1] = x, rgb[2] = 0; break;
    case 1: rgb[0] = x, rgb[1] = c, rgb[2] = 0; break;
    case 2: rgb[0] = 0, rgb[1] = c, rgb[2] = x; break;
    case 3: rgb[0] = 0, rgb[1] = x, rgb[2] = c; break;
    case 4: rgb[0] = x, rgb[1] = 0, rgb[2] = c; break;
    default: rgb[0] = c, rgb[1] = 0, rgb[2] = x;
    }
    uint32_t v = 0;
    for (int i = 0; i < 3; i++) v = v << 8 | (uint32_t)lround((rgb[i] + m) * 255);
    return v;
}

struct kernel {
    const char *name;
    double busy;
    size_t tasks;
    uint32_t colour;
};

static int by_busy(const void *a, const void *b) {
    const struct kernel *x = a, *y = b;
    return (x->busy < y->busy) - (x->busy > y->busy);
}

/* A tick step of 1, 2 or 5 times a power of ten giving about @p want ticks over @p span. */
static double tick_step(double span, int want) {
    double raw = span / want, p = pow(10, floor(log10(raw))), m = raw / p;
    return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

tg_status tg_trace_gantt(const char *path, const tg_task_record *r, size_t n, const char *title,
                         tg_error *err) {
    int nw = (int)starpu_worker_get_count();
    struct kernel *ks = tg_malloc_n((int64_t)(n ? n : 1), 1, sizeof *ks, err);
    if (!ks) return TG_ERR_NOMEM;
    /* kernels (by symbol; records share the codelets' strings), their time and colour */
    int nk = 0;
    double t0 = INFINITY, t1 = -INFINITY, busy = 0;
    for (size_t i = 0; i < n; i++) {
        int k = 0;
        while (k < nk && ks[k].name != r[i].kernel && strcmp(ks[k].name, r[i].kernel)) k++;
        if (k == nk) ks[nk++] = (struct kernel){r[i].kernel, 0, 0, 0};
        ks[k].busy += r[i].end - r[i].start;
        ks[k].tasks++;
        busy += r[i].end - r[i].start;
        t0 = fmin(t0, r[i].start);
        t1 = fmax(t1, r[i].end);
    }
    if (!n) t0 = 0, t1 = 1;
    if (t1 <= t0) t1 = t0 + 1e-6;
    qsort(ks, (size_t)nk, sizeof *ks, by_busy);
    for (int k = 0; k < nk; k++) ks[k].colour = kernel_colour(k);

    /* layout: title, worker rows with their names left, the axis, the legend in columns */
    const int W = 1200, label_w = 20 * TG_GLYPH_W, x0 = label_w + 10, plot_w = W - x0 - 20;
    const int row_h = nw <= 48 ? 16 : nw <= 256 ? 6 : 3;
    const int top = 14 + TG_LINE_H * tg_image_text_wrap(NULL, 8, 6, W - 16, title, 0);
    const int plot_h = nw * row_h, axis_y = top + plot_h, legend_y = axis_y + 34;
    const int col_w = 390, per_col = (nk + 2) / 3, legend_h = (per_col ? per_col : 1) * 12;
    tg_image img;
    tg_status st = tg_image_create(&img, (uint32_t)W, (uint32_t)(legend_y + legend_h + 8),
                                   0xFFFFFF, err);
    if (st) {
        free(ks);
        return st;
    }
    tg_image_text_wrap(&img, 8, 6, W - 16, title, 0x000000);
    for (int w = 0; w < nw; w++) {
        if (w % 2) tg_image_fill(&img, x0, top + w * row_h, plot_w, row_h, 0xF2F2F2);
        if (row_h >= TG_GLYPH_H + 2) {
            char name[64];
            starpu_worker_get_name(w, name, sizeof name);
            name[20] = 0; /* the label column's width */
            tg_image_text(&img, 4, top + w * row_h + (row_h - TG_GLYPH_H) / 2, name, 0x000000);
        }
    }
    double scale = plot_w / (t1 - t0);
    for (size_t i = 0; i < n; i++) {
        if (r[i].worker < 0 || r[i].worker >= nw) continue;
        int k = 0;
        while (ks[k].name != r[i].kernel && strcmp(ks[k].name, r[i].kernel)) k++;
        int64_t a = (int64_t)floor((r[i].start - t0) * scale),
                b = (int64_t)ceil((r[i].end - t0) * scale);
        int gap = row_h >= 6 ? 1 : 0;
        tg_image_fill(&img, x0 + a, top + r[i].worker * row_h + gap, b > a ? b - a : 1,
                      row_h - 2 * gap, ks[k].colour);
    }
    /* time axis: a line, ticks at 1-2-5 steps, labelled in seconds */
    tg_image_fill(&img, x0, axis_y, plot_w, 1, 0x000000);
    double step = tick_step(t1 - t0, 8);
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    for (int64_t i = (int64_t)ceil(t0 / step); (double)i * step <= t1 + 1e-9 * step; i++) {
        double t = (double)i * step;
        int64_t x = x0 + (int64_t)lround((t - t0) * scale);
        char lab[32];
        snprintf(lab, sizeof lab, "%.*f", dec, t);
        tg_image_fill(&img, x, axis_y, 1, 5, 0x000000);
        tg_image_text(&img, x - (int64_t)strlen(lab) * TG_GLYPH_W / 2, axis_y + 8, lab, 0x000000);
    }
    tg_image_text(&img, x0 + plot_w - 9 * TG_GLYPH_W, axis_y + 20, "seconds", 0x000000);
    for (int k = 0; k < nk; k++) {
        int x = 8 + (k / per_col) * col_w, y = legend_y + (k % per_col) * 12;
        char lab[128];
        snprintf(lab, sizeof lab, "%.36s %zu (%.1f%%)", ks[k].name, ks[k].tasks,
                 busy > 0 ? 100 * ks[k].busy / busy : 0);
        tg_image_fill(&img, x, y, 14, 8, ks[k].colour);
        tg_image_text(&img, x + 20, y, lab, 0x000000);
    }
    st = tg_png_write(path, img.rgb, img.w, img.h, err);
    tg_image_free(&img);
    free(ks);
    return st;
}

void tg_trace_start(void) { tg_record_start(0); }

/* PREFIX SUFFIX, malloc'd */
static char *joined(const char *prefix, const char *suffix, tg_error *err) {
    size_t len = strlen(prefix) + strlen(suffix) + 1;
    char *p = tg_malloc(len, err);
    if (p) snprintf(p, len, "%s%s", prefix, suffix);
    return p;
}

tg_status tg_trace_stop(const char *prefix, const char *label, size_t *ntasks, tg_error *err) {
    size_t n;
    tg_task_record *r = tg_record_stop(&n);
    if (!r) return tg_error_set(err, TG_ERR_NOMEM, "out of memory collecting the task trace");
    *ntasks = n;
    tg_status st = TG_OK;
    if (tg_runtime_rank() == 0) {
        char *tsv = NULL, *png = NULL, title[768], desc[512];
        double t0 = n ? r[0].start : 0, t1 = 0;
        for (size_t i = 0; i < n; i++) t0 = fmin(t0, r[i].start), t1 = fmax(t1, r[i].end);
        tg_runtime_describe(desc, sizeof desc);
        snprintf(title, sizeof title, "%s: %zu tasks in %.3f s; %s", label, n, t1 - t0, desc);
        if (!(tsv = joined(prefix, ".trace.tsv", err)) ||
            !(png = joined(prefix, ".gantt.png", err)))
            st = TG_ERR_NOMEM;
        if (!st && !(st = tg_trace_tsv(tsv, r, n, err))) st = tg_trace_gantt(png, r, n, title, err);
        free(tsv);
        free(png);
    }
    free(r);
    return st;
}
