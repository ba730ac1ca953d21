/* GRM files (tilegwas.h, tg_grm_out_*): blocks of rows converted on every core (text: groups of
 * rows formatted concurrently, each into its own buffer) and written in order by a thread of
 * their own while the caller computes the next block. Two slots: the writer empties one while
 * the other is filled. */
#include "io/grm_out.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parallel.h"
#include "io/out.h"

enum {
    TEXT_ROWS = 8, /* rows per formatting job */
    ENTRY_MAX = 14 /* "-1.23457e-100" and a separator */
};

/* ---- "%.6g" */

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* a·10^s with one rounding (10^|s| is exact for |s| ≤ 22) */
static double scale10(double a, int s) { return s >= 0 ? a * pow10_exact[s] : a / pow10_exact[-s]; }

int tg_format_g6(double x, char *buf) {
    const double a = fabs(x);
    /* the scalings below stay within the exact powers 10^±22 */
    if (!(a >= 1e-15 && a < 1e15)) return snprintf(buf, 32, "%.6g", x);
    int e = (int)floor(log10(a)); /* the decimal exponent, corrected below if log10 rounded */
    double q = scale10(a, 5 - e);
    if (q < 1e5) q = scale10(a, 5 - --e);
    else if (q >= 1e6) q = scale10(a, 5 - ++e);
    double fl = floor(q);
    if (fabs(q - fl - 0.5) < 1e-7) return snprintf(buf, 32, "%.6g", x); /* near a tie */
    long d = (long)fl + (q - fl > 0.5);
    if (d == 1000000) { /* 999999.5 and above rounds up a decade */
        d = 100000;
        e++;
    }
    char dig[6];
    for (int t = 5; t >= 0; t--, d /= 10) dig[t] = (char)('0' + d % 10);
    int nd = 6; /* significant digits left once trailing zeros go */
    while (nd > 1 && dig[nd - 1] == '0') nd--;
    char *p = buf;
    if (x < 0) *p++ = '-';
    if (e < -4 || e >= 6) { /* d.ddddde±XX */
        *p++ = dig[0];
        if (nd > 1) {
            *p++ = '.';
            for (int t = 1; t < nd; t++) *p++ = dig[t];
        }
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae >= 100) *p++ = (char)('0' + ae / 100);
        *p++ = (char)('0' + ae / 10 % 10);
        *p++ = (char)('0' + ae % 10);
    } else if (e >= 0) { /* e + 1 integer digits, then the rest */
        for (int t = 0; t <= e; t++) *p++ = dig[t];
        if (nd > e + 1) {
            *p++ = '.';
            for (int t = e + 1; t < nd; t++) *p++ = dig[t];
        }
    } else { /* 0.000ddd */
        *p++ = '0';
        *p++ = '.';
        for (int t = 0; t < -e - 1; t++) *p++ = '0';
        for (int t = 0; t < nd; t++) *p++ = dig[t];
    }
    return (int)(p - buf);
}

/* ---- the writer */

struct piece {
    char *buf;
    size_t len, cap;
};

struct slot {
    struct piece *pc; /* text: one per group of TEXT_ROWS rows; bin: one; gcta: values, N */
    int npc, cap, full;
};

struct tg_grm_out {
    tg_grm_shape shape;
    tg_grm_encoding enc;
    int64_t n, next_row;
    FILE *f[2];
    char *path[2];
    struct slot slot[2];
    int fill; /* the slot the next block goes to */
    pthread_t th;
    int started, quit;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* the block being formatted */
    const double *k, *nobs;
    int64_t r0, r1, ld;
    int bad; /* a buffer could not grow */
};

/* Makes piece room for @p need bytes; 0 when it cannot. */
static int reserve(struct piece *p, size_t need) {
    if (need <= p->cap) return 1;
    char *b = realloc(p->buf, need);
    if (!b) return 0;
    p->buf = b;
    p->cap = need;
    return 1;
}

static int64_t row_len(const tg_grm_out *o, int64_t r) {
    return o->shape == TG_GRM_TRIANGLE ? r + 1 : o->n;
}

/* Text rows [r0 + c·TEXT_ROWS, ...) of the block into piece c. */
static void text_group(void *ctx, int64_t c) {
    tg_grm_out *o = ctx;
    struct piece *pc = &o->slot[o->fill].pc[c];
    const int64_t a = o->r0 + c * TEXT_ROWS, b = a + TEXT_ROWS < o->r1 ? a + TEXT_ROWS : o->r1;
    size_t need = 32; /* tg_format_g6's buffer, at the last entry */
    for (int64_t r = a; r < b; r++) need += (size_t)row_len(o, r) * ENTRY_MAX;
    if (!reserve(pc, need)) {
        o->bad = 1;
        return;
    }
    char *p = pc->buf;
    for (int64_t r = a; r < b; r++) {
        const double *kr = o->k + (r - o->r0) * o->ld;
        const int64_t vals = o->shape == TG_GRM_SQUARE ? o->n : r + 1;
        for (int64_t j = 0; j < vals; j++) {
            p += tg_format_g6(kr[j], p);
            *p++ = '\t';
        }
        for (int64_t j = vals; j < row_len(o, r); j++) { /* square0 */
            *p++ = '0';
            *p++ = '\t';
        }
        p[-1] = '\n';
    }
    pc->len = (size_t)(p - pc->buf);
}

/* Binary rows of the block into @p pc: float64 (bin) or float32 (bin4, gcta) values of @p src
 * (the values or the counts). */
static int bin_rows(const tg_grm_out *o, const double *src, int f32, struct piece *pc) {
    size_t w = f32 ? 4 : 8, need = 0;
    for (int64_t r = o->r0; r < o->r1; r++) need += (size_t)row_len(o, r) * w;
    if (!reserve(pc, need)) return 0;
    char *p = pc->buf;
    for (int64_t r = o->r0; r < o->r1; r++) {
        const double *kr = src + (r - o->r0) * o->ld;
        const int64_t vals = o->shape == TG_GRM_SQUARE ? o->n : r + 1;
        for (int64_t j = 0; j < row_len(o, r); j++, p += w) {
            double v = j < vals ? kr[j] : 0;
            float v4 = (float)v;
            memcpy(p, f32 ? (void *)&v4 : (void *)&v, w);
        }
    }
    pc->len = (size_t)(p - pc->buf);
    return 1;
}

static void *writer(void *arg) {
    tg_grm_out *o = arg;
    for (int s = 0;; s ^= 1) {
        pthread_mutex_lock(&o->mu);
        while (!o->slot[s].full && !o->quit) pthread_cond_wait(&o->cv, &o->mu);
        int full = o->slot[s].full;
        pthread_mutex_unlock(&o->mu);
        if (!full) return NULL; /* quit, everything written */
        struct slot *sl = &o->slot[s];
        for (int i = 0; i < sl->npc; i++)
            fwrite(sl->pc[i].buf, 1, sl->pc[i].len, o->f[o->enc == TG_GRM_GCTA ? i : 0]);
        pthread_mutex_lock(&o->mu);
        sl->full = 0;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
    }
}

tg_status tg_grm_out_open(const char *prefix, tg_grm_shape shape, tg_grm_encoding enc, int64_t n,
                          tg_grm_out **out, tg_error *err) {
    *out = NULL;
    if ((unsigned)shape > TG_GRM_SQUARE0 || (unsigned)enc > TG_GRM_GCTA || n < 1)
        return tg_error_set(err, TG_ERR_ARG, "GRM output: invalid layout %d, encoding %d or %lld "
                            "samples", (int)shape, (int)enc, (long long)n);
    if (enc == TG_GRM_GCTA && shape != TG_GRM_TRIANGLE)
        return tg_error_set(err, TG_ERR_ARG, "GCTA's .grm.bin is a lower triangle: no square "
                            "layout");
    tg_grm_out *o = tg_calloc(1, sizeof *o, err);
    if (!o) return TG_ERR_NOMEM;
    o->shape = shape;
    o->enc = enc;
    o->n = n;
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    const char *suffix[2] = {enc == TG_GRM_GCTA  ? ".grm.bin"
                             : enc == TG_GRM_TEXT ? ".rel"
                                                  : ".rel.bin",
                             ".grm.N.bin"};
    tg_status st = TG_OK;
    for (int i = 0; i < (enc == TG_GRM_GCTA ? 2 : 1) && !st; i++)
        st = tg_out_open(prefix, suffix[i], &o->f[i], &o->path[i], err);
    if (!st && pthread_create(&o->th, NULL, writer, o))
        st = tg_error_set(err, TG_ERR_RUNTIME, "cannot start the thread writing %s", o->path[0]);
    o->started = !st;
    *out = o;
    if (st) {
        tg_grm_out_close(o, 1, NULL);
        *out = NULL;
    }
    return st;
}

tg_status tg_grm_out_rows(void *out, int64_t r0, int64_t r1, const double *k, const double *nobs,
                          int64_t ld, tg_error *err) {
    tg_grm_out *o = out;
    if (r0 != o->next_row || r1 <= r0 || r1 > o->n || (o->enc == TG_GRM_GCTA && !nobs))
        return tg_error_set(err, TG_ERR_ARG, "GRM output: rows %lld to %lld out of order (next "
                            "%lld of %lld), or no pair counts for GCTA's N", (long long)r0,
                            (long long)r1, (long long)o->next_row, (long long)o->n);
    struct slot *sl = &o->slot[o->fill];
    pthread_mutex_lock(&o->mu);
    while (sl->full) pthread_cond_wait(&o->cv, &o->mu);
    pthread_mutex_unlock(&o->mu);
    const int groups = (int)((r1 - r0 + TEXT_ROWS - 1) / TEXT_ROWS),
              npc = o->enc == TG_GRM_TEXT ? groups : o->enc == TG_GRM_GCTA ? 2 : 1;
    if (npc > sl->cap) {
        struct piece *pc = realloc(sl->pc, (size_t)npc * sizeof *pc);
        if (!pc) return tg_error_set(err, TG_ERR_NOMEM, "out of memory writing %s", o->path[0]);
        memset(pc + sl->cap, 0, (size_t)(npc - sl->cap) * sizeof *pc);
        sl->pc = pc;
        sl->cap = npc;
    }
    sl->npc = npc;
    o->k = k;
    o->nobs = nobs;
    o->r0 = r0;
    o->r1 = r1;
    o->ld = ld;
    o->bad = 0;
    if (o->enc == TG_GRM_TEXT)
        tg_parallel_for(groups, text_group, o);
    else
        o->bad = !bin_rows(o, k, o->enc != TG_GRM_BIN, &sl->pc[0]) ||
                 (o->enc == TG_GRM_GCTA && !bin_rows(o, nobs, 1, &sl->pc[1]));
    if (o->bad)
        return tg_error_set(err, TG_ERR_NOMEM, "out of memory formatting rows %lld to %lld of %s",
                            (long long)r0 + 1, (long long)r1, o->path[0]);
    pthread_mutex_lock(&o->mu);
    sl->full = 1;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    o->fill ^= 1;
    o->next_row = r1;
    return TG_OK;
}

tg_status tg_grm_out_close(tg_grm_out *o, int abandon, tg_error *err) {
    if (!o) return TG_OK;
    if (o->started) {
        pthread_mutex_lock(&o->mu);
        o->quit = 1;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
        pthread_join(o->th, NULL);
    }
    tg_status st = TG_OK;
    if (!abandon && o->next_row != o->n)
        st = tg_error_set(err, TG_ERR_ARG, "GRM output: %lld of %lld rows written to %s",
                          (long long)o->next_row, (long long)o->n, o->path[0]);
    for (int i = 0; i < 2; i++) {
        if (!o->f[i]) continue;
        if (abandon || st) { /* no half-written file left behind */
            tg_out_discard(o->f[i]);
        } else {
            st = tg_out_close(o->f[i], o->path[i], err);
        }
        free(o->path[i]);
    }
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < o->slot[s].cap; i++) free(o->slot[s].pc[i].buf);
        free(o->slot[s].pc);
    }
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    free(o);
    return st;
}
