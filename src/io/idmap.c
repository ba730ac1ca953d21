/* Shared plumbing of the text readers in src/io: the FID+IID hash map, whole-file text reading
 * with in-place line/field splitting, and number parsing and printing. See idmap.h. */
#include "io/idmap.h"

#include <errno.h>
#include <float.h>
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
    m->n = n;
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

static int64_t insert_hashed(tg_idmap *m, int64_t i, uint64_t h) {
    const tg_sample *x = &m->samples[i];
    tg_idmap_slot *e = id_slot(m, x->fid, x->iid, h);
    if (e->idx >= 0) return e->idx;
    e->hash = h;
    e->idx = i;
    return -1;
}

int64_t tg_idmap_insert_all(tg_idmap *m, int64_t n, int64_t *dup) {
    enum { AHEAD = 16 };
    uint64_t h[AHEAD];
    for (int64_t i = 0; i < n + AHEAD - 1; i++) {
        if (i < n) {
            h[i % AHEAD] = id_hash(m->samples[i].fid, m->samples[i].iid);
            __builtin_prefetch(&m->slots[h[i % AHEAD] & m->mask], 1);
        }
        const int64_t j = i - (AHEAD - 1);
        if (j >= 0 && (*dup = insert_hashed(m, j, h[j % AHEAD])) >= 0) return j;
    }
    return -1;
}

tg_status tg_idmap_add_lines(tg_idmap *m, int64_t n, const int64_t *line_of, const char *path,
                             tg_status later, tg_error *err) {
    int64_t d, j = tg_idmap_insert_all(m, n, &d);
    if (j < 0) return later;
    return tg_error_set(err, TG_ERR_FORMAT,
                        "%s line %lld: duplicate sample ID '%s %s' (FID IID), first on line %lld",
                        path, (long long)line_of[j], TG_ESC(m->samples[j].fid),
                        TG_ESC(m->samples[j].iid), (long long)line_of[d]);
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

int64_t tg_idmap_find_near(const tg_idmap *m, const char *fid, const char *iid, int64_t hint) {
    if (hint >= 0 && hint < m->n && strcmp(m->samples[hint].iid, iid) == 0 &&
        strcmp(m->samples[hint].fid, fid) == 0)
        return hint;
    return tg_idmap_find(m, fid, iid);
}

void tg_idmap_free(tg_idmap *m) {
    free(m->slots);
    m->slots = NULL;
}

tg_status tg_idlookup_init(tg_idlookup *m, const char *path, const tg_sample *samples, int64_t n,
                           int iid_only, tg_error *err) {
    tg_status st = tg_idmap_init(&m->full, samples, n, err);
    if (st) return st;
    int64_t first, again = tg_idmap_insert_all(&m->full, n, &first);
    if (again >= 0)
        return tg_error_set(err, TG_ERR_ARG,
                            "reading %s: the sample list has sample '%s %s' (FID IID) twice "
                            "(samples %lld and %lld)",
                            path, TG_ESC(samples[again].fid), TG_ESC(samples[again].iid),
                            (long long)first, (long long)again);
    if (!iid_only) return TG_OK;
    m->iid_keys = tg_malloc_n(n, 1, sizeof *m->iid_keys, err);
    m->twin = tg_malloc_n(n, 1, sizeof *m->twin, err);
    if (!m->iid_keys || !m->twin || (st = tg_idmap_init(&m->by_iid, m->iid_keys, n, err)))
        return TG_ERR_NOMEM;
    for (int64_t i = 0; i < n; i++) {
        m->iid_keys[i] = (tg_sample){.fid = "", .iid = samples[i].iid};
        m->twin[i] = -1;
        int64_t d = insert_hashed(&m->by_iid, i, id_hash("", samples[i].iid));
        if (d >= 0 && m->twin[d] < 0) m->twin[d] = i;
    }
    return TG_OK;
}

void tg_idlookup_free(tg_idlookup *m) {
    tg_idmap_free(&m->full);
    tg_idmap_free(&m->by_iid);
    free(m->iid_keys);
    free(m->twin);
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

/* printf's "%.15g, or %.17g where that does not read back" costs about a microsecond a number
 * (glibc formats in multiple precision, then strtod reads it back): 25 s of the 22 million
 * values of assoc's LOCO table at 100,000 samples. The digits come instead from one product
 * in the x87's 64-bit long double, q = |x|·10^s, exact but for one rounding (10^s is exact for
 * |s| ≤ 27): within q·2^-64 of the true q, so that rounding q to an integer gives printf's
 * digits unless q is that close to a half, and the read-back is decided from the distance to
 * the neighbouring doubles unless that close to half their gap. Those rare values, and the
 * magnitudes out of the exact powers' range, go to printf and strtod. */
#if LDBL_MANT_DIG >= 64
static const long double pow10l_exact[] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
enum { POW10L_MAX = sizeof pow10l_exact / sizeof *pow10l_exact - 1 };

static long double scale10l(double a, int s) {
    return s >= 0 ? (long double)a * pow10l_exact[s] : (long double)a / pow10l_exact[-s];
}

/* The P significant digits of a > 0 as printf rounds them: *d in [10^(P-1), 10^P] (10^P:
 * rounded up a decade) and the exponent *e of the first digit, with *q the scaled value and
 * *tol its error bound; 0 when undecided (near a half or a decade, or out of range). */
static int digits(double a, int P, uint64_t *d, int *e, long double *q, long double *tol) {
    int ex = (int)floor(log10(a));
    for (int tries = 0;; tries++) { /* log10 may be off by one at a decade */
        const int s = P - 1 - ex;
        if (s > POW10L_MAX || -s > POW10L_MAX || tries == 2) return 0;
        *q = scale10l(a, s);
        *tol = *q * 0x1p-63L; /* twice the rounding's bound */
        if (*q < pow10l_exact[P - 1] + *tol) ex--;
        else if (*q >= pow10l_exact[P] - *tol) ex++;
        else break;
    }
    const long double fl = floorl(*q);
    if (fabsl(*q - fl - 0.5L) <= *tol) return 0;
    *d = (uint64_t)fl + (*q - fl > 0.5L);
    *e = ex;
    return 1;
}

/* "%.Pg" of the digits d (P of them, or 10^P) and exponent e; returns the length. */
static int put_g(char *buf, int neg, uint64_t d, int P, int e) {
    if (d == (uint64_t)pow10l_exact[P]) d /= 10, e++;
    char dig[20];
    for (int t = P - 1; t >= 0; t--, d /= 10) dig[t] = (char)('0' + d % 10);
    int nd = P; /* significant digits left once trailing zeros go */
    while (nd > 1 && dig[nd - 1] == '0') nd--;
    char *p = buf;
    if (neg) *p++ = '-';
    if (e < -4 || e >= P) { /* d.ddde±XX */
        *p++ = dig[0];
        if (nd > 1) *p++ = '.';
        for (int t = 1; t < nd; t++) *p++ = dig[t];
        p += sprintf(p, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    } else if (e >= 0) { /* e + 1 integer digits, then the rest */
        for (int t = 0; t <= e; t++) *p++ = dig[t];
        if (nd > e + 1) *p++ = '.';
        for (int t = e + 1; t < nd; t++) *p++ = dig[t];
        *p = 0;
    } else { /* 0.000ddd */
        *p++ = '0';
        *p++ = '.';
        for (int t = 0; t < -e - 1; t++) *p++ = '0';
        for (int t = 0; t < nd; t++) *p++ = dig[t];
        *p = 0;
    }
    return (int)(p - buf);
}

/* 1 when printed, 0 when undecided. */
static int format_fast(double x, char buf[32]) {
    const double a = fabs(x);
    if (!(a >= DBL_MIN && a <= DBL_MAX)) return 0; /* 0, subnormals, inf, NaN */
    uint64_t d;
    int e, ex2;
    long double q, tol;
    if (!digits(a, 15, &d, &e, &q, &tol)) return 0;
    /* reads back when d·10^(e-14) is nearer to a than half the gap to the next double on its
     * side (a quarter of a's ulp below a power of 2), in units of q */
    const double m = frexp(a, &ex2);
    const long double half = ldexpl(scale10l(1, 14 - e), ex2 - 55) * (d < q && m == 0.5 ? 1 : 2),
                      dist = fabsl((long double)d - q);
    if (fabsl(dist - half) <= tol) return 0;
    if (dist < half) return put_g(buf, x < 0, d, 15, e) > 0;
    return digits(a, 17, &d, &e, &q, &tol) && put_g(buf, x < 0, d, 17, e) > 0;
}
#else
static int format_fast(double x, char buf[32]) { return (void)x, (void)buf, 0; }
#endif

void tg_text_format_double(double x, char buf[32]) {
    if (format_fast(x, buf)) return;
    snprintf(buf, 32, "%.15g", x);
    if (strtod(buf, NULL) != x) snprintf(buf, 32, "%.17g", x);
}
