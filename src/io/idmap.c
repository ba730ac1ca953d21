/* Shared plumbing of the text readers in src/io: the FID+IID hash map, whole-file text reading
 * with in-place line/field splitting, and number parsing and printing. See idmap.h. */
#include "io/idmap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/hash.h"
#include "io/lines.h"

/* ---------------------------------------------------------------------------------------- */
/* FID+IID hash map */

/* FNV-1a over "FID\0IID", then a 64-bit finaliser (Murmur3's) so that the low bits used as
 * the slot index depend on every input byte. */
static uint64_t id_hash(const char *fid, const char *iid) {
    /* with the separator byte 0: "a b" and "ab " hash differently */
    uint64_t h = tg_fnv1a(tg_fnv1a(TG_FNV1A_INIT, fid, strlen(fid) + 1), iid, strlen(iid));
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

tg_status tg_idmap_init(tg_idmap *m, const tg_sample *samples, int64_t n, tg_error *err) {
    uint64_t cap = 2;
    while (cap < 2 * (uint64_t)(n > 0 ? n : 1)) cap *= 2;
    m->samples = samples;
    m->mask = cap - 1;
    m->slots = tg_malloc_n((int64_t)cap, 1, sizeof *m->slots, err);
    if (!m->slots) return TG_ERR_NOMEM;
    for (uint64_t s = 0; s < cap; s++) m->slots[s].idx = -1;
    return TG_OK;
}

/* The slot holding (fid, iid), or the empty slot where it would go. */
static tg_idmap_slot *id_slot(const tg_idmap *m, const char *fid, const char *iid, uint64_t h) {
    for (uint64_t s = h & m->mask;; s = (s + 1) & m->mask) {
        tg_idmap_slot *e = &m->slots[s];
        if (e->idx < 0) return e;
        const tg_sample *o = &m->samples[e->idx];
        if (e->hash == h && strcmp(o->fid, fid) == 0 && strcmp(o->iid, iid) == 0) return e;
    }
}

int64_t tg_idmap_insert(tg_idmap *m, int64_t i) {
    const tg_sample *x = &m->samples[i];
    uint64_t h = id_hash(x->fid, x->iid);
    tg_idmap_slot *e = id_slot(m, x->fid, x->iid, h);
    if (e->idx >= 0) return e->idx;
    e->hash = h;
    e->idx = i;
    return -1;
}

tg_status tg_idmap_add_line(tg_idmap *m, int64_t i, int64_t *line_of, const char *path,
                            int64_t line, tg_error *err) {
    line_of[i] = line;
    int64_t d = tg_idmap_insert(m, i);
    if (d < 0) return TG_OK;
    return tg_error_set(err, TG_ERR_FORMAT,
                        "%s line %lld: duplicate sample ID '%s %s' (FID IID), first on line "
                        "%lld",
                        path, (long long)line, TG_ESC(m->samples[i].fid), TG_ESC(m->samples[i].iid),
                        (long long)line_of[d]);
}

void tg_fam_case_control(tg_sample *s, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double p = s[i].pheno;
        if (!isnan(p) && p != 0 && p != 1 && p != 2) return;
    }
    for (int64_t i = 0; i < n; i++)
        if (s[i].pheno == 0) s[i].pheno = NAN;
}

int64_t tg_idmap_find(const tg_idmap *m, const char *fid, const char *iid) {
    return id_slot(m, fid, iid, id_hash(fid, iid))->idx;
}

void tg_idmap_free(tg_idmap *m) {
    free(m->slots);
    m->slots = NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Whole-file text */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

tg_status tg_text_read(tg_text *t, const char *path, tg_error *err) {
    memset(t, 0, sizeof *t);
    t->path = path;
    char *buf;
    size_t len;
    /* through the line reader's checks: a regular file, plain or compressed, no endless line */
    tg_status st = tg_lines_read_all(path, &buf, &len, err);
    if (st) return st;
    t->base = t->text = t->cur = buf;
    t->end = buf + len;
    return TG_OK;
}

int64_t tg_text_count_lines(const tg_text *t) {
    int64_t n = 0;
    int blank = 1;
    for (const char *p = t->cur; p < t->end; p++) {
        if (*p == '\n') {
            n += !blank;
            blank = 1;
        } else if (!is_space(*p)) {
            blank = 0;
        }
    }
    return n + !blank;
}

tg_status tg_text_reserve_front(tg_text *t, size_t front, tg_error *err) {
    size_t len = (size_t)(t->end - t->text), off = (size_t)(t->cur - t->text);
    char *b = realloc(t->base, front + len + 1);
    if (!b) return tg_error_set(err, TG_ERR_NOMEM, "out of memory reading %s", t->path);
    memmove(b + front, b + (t->text - t->base), len + 1);
    t->base = b;
    t->text = b + front;
    t->cur = t->text + off;
    t->end = t->text + len;
    return TG_OK;
}

char *tg_text_next_line(tg_text *t) {
    while (t->cur < t->end) {
        char *line = t->cur, *nl = memchr(line, '\n', (size_t)(t->end - line));
        char *stop = nl ? nl : t->end;
        *stop = '\0';
        t->cur = nl ? nl + 1 : t->end;
        t->line_no++;
        for (const char *p = line; p < stop; p++)
            if (!is_space(*p)) return line;
    }
    return NULL;
}

void tg_text_free(tg_text *t) {
    free(t->base);
    t->base = NULL;
}

int tg_text_split(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    for (;;) {
        while (is_space(*p)) p++;
        if (!*p) return n;
        int keep = n < max;
        if (keep) fields[n] = p;
        n++;
        while (*p && !is_space(*p)) p++;
        if (!*p) return n;
        if (keep)
            *p = '\0'; /* fields past max are only counted, so a count leaves the line intact */
        p++;
    }
}

int tg_text_is_token(const char *s) { return s && *s && !strpbrk(s, " \t\r\n\v\f"); }

/* ---------------------------------------------------------------------------------------- */
/* Numbers */

int tg_text_parse_double(const char *s, double *v) {
    char *e;
    double x = strtod(s, &e); /* overflow gives ±inf, refused; underflow rounds, accepted */
    if (e == s || *e || !isfinite(x)) return 0;
    *v = x;
    return 1;
}

int tg_text_parse_int64(const char *s, int64_t *v) {
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10);
    if (e == s || *e || errno == ERANGE) return 0;
    *v = x;
    return 1;
}

int tg_text_parse_value(const char *s, double *v) {
    if (strcasecmp(s, "NA") == 0 || strcasecmp(s, "NaN") == 0) {
        *v = NAN;
        return 1;
    }
    if (!tg_text_parse_double(s, v)) return 0;
    if (*v == -9) *v = NAN;
    return 1;
}

void tg_text_format_double(double x, char buf[32]) {
    snprintf(buf, 32, "%.15g", x);
    if (strtod(buf, NULL) != x) snprintf(buf, 32, "%.17g", x);
}
