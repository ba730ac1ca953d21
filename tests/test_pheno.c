/* Phenotype files (src/io/pheno.c, src/io/lines.c). The files are written here with fprintf from
 * known values (not with tg_pheno_write), rows shuffled, some samples left out and rows of
 * samples not in the list mixed in, and every value read is compared with the value written for
 * that sample; then a write → read round trip, a file of 100 000 shuffled rows (hash matching at
 * scale) as text, gzip and zstd (compressed here with zlib and libzstd, in several members /
 * frames, crossing the reader's buffers), lines longer than its first buffer, a FIFO (refused),
 * the header forms (any case, #IID), column selection by number and name, and bad inputs, each
 * of which must name the file (and the line) and leave a zeroed tg_pheno. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "base/rng.h"
#include "common.h"
#include "tap.h"
#include "tilegwas.h"

static char tmpdir[64];
static char path[128];

#define put(...) put_text(path, sizeof path, tmpdir, "pheno.txt", __VA_ARGS__)

typedef struct {
    int64_t n;
    tg_sample *s;
    char *names; /* the ID strings */
} samples;

/* n samples in families of 2: FID "F<i/2>", IID "I<i%2>", so IIDs repeat across families. */
static samples make_samples(int64_t n) {
    samples x = {n, calloc((size_t)n, sizeof(tg_sample)), malloc((size_t)n * 48)};
    for (int64_t i = 0; i < n; i++) {
        char *fid = x.names + i * 48, *iid = fid + 24;
        snprintf(fid, 24, "F%" PRId64, i / 2);
        snprintf(iid, 24, "I%" PRId64, i % 2);
        x.s[i] = (tg_sample){.fid = fid, .iid = iid, .father = "0", .mother = "0"};
    }
    return x;
}

static void shuffle(int64_t *a, int64_t n, tg_rng *r) {
    for (int64_t k = n - 1; k > 0; k--) {
        int64_t j = (int64_t)tg_rng_below(r, (uint64_t)k + 1), t = a[k];
        a[k] = a[j], a[j] = t;
    }
}

static int same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static int zeroed(const tg_pheno *p) {
    return !p->names && !p->values && !p->n_cols && !p->n_samples;
}

/* The file at `path`, read with @p o, must be refused with status @p want, a message naming it
 * and containing @p s, and a zeroed tg_pheno. */
static void expect_status(const samples *x, const tg_pheno_opts *o, tg_status want, const char *s,
                          const char *what) {
    tg_pheno p;
    memset(&p, 0x7f, sizeof p);
    tg_error err = {0};
    tg_status st = tg_pheno_read_opts(path, x->s, x->n, o, &p, &err);
    int good = st == want && strstr(err.msg, path) && strstr(err.msg, s) && zeroed(&p);
    ok(good, "%s: %s", what, err.msg);
    if (!good) diag("status %d, wanted '%s'", st, s);
    if (st == TG_OK) tg_pheno_free(&p);
}

/* The file of tmpdir/pheno.txt must be refused with a message naming it and containing @p s. */
static void expect_fail(const samples *x, const char *s, const char *what) {
    tg_pheno_opts o = tg_pheno_defaults();
    expect_status(x, &o, TG_ERR_FORMAT, s, what);
}

/* A header file with 3 columns: 30 of 40 samples in shuffled order, missing codes spread
 * over the values, the other 10 samples absent, and 8 rows of samples not in the list (skipped,
 * counted). */
static void header_file(const samples *x, tg_rng *r) {
    static const char *miss[] = {"-9", "NA", "nan", "NaN", "-9.0", "na", ".", "NAN"};
    const int64_t n = x->n, present = 30;
    int64_t strangers = 0;
    int64_t *order = malloc((size_t)n * sizeof *order);
    double *want = malloc((size_t)n * 3 * sizeof *want);
    for (int64_t i = 0; i < n; i++) order[i] = i;
    shuffle(order, n, r);
    for (int64_t k = 0; k < 3 * n; k++) want[k] = NAN;
    put("FID IID height bmi\tage\n");
    FILE *f = fopen(path, "a");
    for (int64_t k = 0; k < present; k++) {
        int64_t i = order[k];
        fprintf(f, "%s\t%s", x->s[i].fid, x->s[i].iid);
        for (int c = 0; c < 3; c++) {
            if (tg_rng_below(r, 5) == 0) {
                fprintf(f, " %s", miss[tg_rng_below(r, 8)]);
            } else {
                want[i + c * n] = tg_rng_normal(r) * 10;
                fprintf(f, "  %.17g", want[i + c * n]);
            }
        }
        fprintf(f, k % 2 ? "\r\n" : "\n");
        if (k == 10) fprintf(f, "\n \t\n"); /* blank lines in the middle */
        if (k % 4 == 1) /* not in the list: an unknown FID with a known IID, and the reverse */
            fprintf(f, k % 8 == 1 ? "G%lld I0 1 2 x\n" : "F1 J%lld . 2 3\n",
                    (long long)strangers++);
    }
    fprintf(f, "\n\n");
    fclose(f);
    tg_pheno p;
    tg_error err = {0};
    tg_status st = tg_pheno_read(path, x->s, n, &p, &err);
    ok(st == TG_OK && p.n_cols == 3 && p.n_samples == n && strcmp(p.names[0], "height") == 0 &&
           strcmp(p.names[1], "bmi") == 0 && strcmp(p.names[2], "age") == 0,
       "header: 3 named columns, n_samples = list size (%s)", st ? err.msg : "ok");
    if (st == TG_OK) {
        int good = 1, absent = 1;
        for (int64_t k = 0; k < 3 * n; k++) good &= same(p.values[k], want[k]);
        for (int64_t k = present; k < n; k++)
            for (int c = 0; c < 3; c++) absent &= isnan(p.values[order[k] + c * n]);
        ok(good, "shuffled rows matched by FID+IID; -9, -9.0, NA, na, nan, NaN, NAN, . read as "
                 "missing");
        ok(absent, "the 10 samples absent from the file are NAN");
        ok(strangers == 8 && p.n_skipped == strangers,
           "rows of samples not in the list skipped (values unread) and counted: %lld of %lld",
           (long long)p.n_skipped, (long long)strangers);

        /* round trip through tg_pheno_write */
        char out[160];
        snprintf(out, sizeof out, "%s/out.pheno", tmpdir);
        tg_pheno q;
        st = tg_pheno_write(out, x->s, &p, &err);
        FILE *g = fopen(out, "r");
        char head[64] = "", row[256] = "";
        if (g) {
            if (!fgets(head, sizeof head, g) || !fgets(row, sizeof row, g)) head[0] = '\0';
            fclose(g);
        }
        ok(st == TG_OK && strcmp(head, "FID\tIID\theight\tbmi\tage\n") == 0 &&
               (!isnan(p.values[0]) || strstr(row, "\tNA")),
           "write: tab-separated header, NA for missing");
        st = tg_pheno_read(out, x->s, n, &q, &err);
        good = st == TG_OK && q.n_cols == 3 && strcmp(q.names[1], "bmi") == 0;
        for (int64_t k = 0; good && k < 3 * n; k++) good &= same(q.values[k], p.values[k]);
        ok(good, "write → read round trip is exact (%s)", st ? err.msg : "ok");
        if (st == TG_OK) tg_pheno_free(&q);
        tg_pheno_free(&p);
    }
    free(order);
    free(want);
}

static void no_header(const samples *x) {
    tg_pheno p;
    tg_error err = {0};
    put("F1 I1 1.5 -9\nF0 I0 NA 2e3\n");
    tg_status st = tg_pheno_read(path, x->s, x->n, &p, &err);
    ok(st == TG_OK && p.n_cols == 2 && strcmp(p.names[0], "PHENO1") == 0 &&
           strcmp(p.names[1], "PHENO2") == 0 && p.values[3] == 1.5 && isnan(p.values[3 + x->n]) &&
           isnan(p.values[0]) && p.values[0 + x->n] == 2000 && isnan(p.values[1]),
       "no header: PHENO1, PHENO2; values of F1 I1 and F0 I0 in .fam order");
    if (st == TG_OK) tg_pheno_free(&p);
    put("#FID\tIID\ty\nF0 I1 7\n");
    st = tg_pheno_read(path, x->s, x->n, &p, &err);
    ok(st == TG_OK && p.n_cols == 1 && strcmp(p.names[0], "y") == 0 && p.values[1] == 7,
       "#FID IID header");
    if (st == TG_OK) tg_pheno_free(&p);
}

/* ---- Compressed files, made here with zlib and libzstd */
typedef enum { TEXT, GZIP, ZSTD } packing;
static const char *packing_name[] = {"text", "gzip", "zstd"};

/* One gzip member (zlib's deflate with the gzip wrapper) of @p n bytes; *len its size. */
static unsigned char *gzip_member(const char *src, size_t n, size_t *len) {
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return NULL;
    size_t cap = deflateBound(&z, (uLong)n);
    unsigned char *out = malloc(cap);
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int done = deflate(&z, Z_FINISH) == Z_STREAM_END;
    *len = cap - z.avail_out;
    deflateEnd(&z);
    if (!done) free(out);
    return done ? out : NULL;
}

/* One zstd frame of @p n bytes, with its content checksum; *len its size. */
static unsigned char *zstd_frame(const char *src, size_t n, size_t *len) {
    size_t cap = ZSTD_compressBound(n);
    unsigned char *out = malloc(cap);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    *len = ZSTD_compress2(c, out, cap, src, n);
    ZSTD_freeCCtx(c);
    if (ZSTD_isError(*len)) {
        free(out);
        return NULL;
    }
    return out;
}

/* Where @p text splits into two parts at a line end near its middle. */
static size_t middle_line_end(const char *text, size_t len) {
    const char *nl = memchr(text + len / 2, '\n', len - len / 2);
    return nl ? (size_t)(nl - text) + 1 : len;
}

/* @p text packed as two gzip members or two zstd frames, split at a line end (as bgzip or
 * `cat a.gz b.gz` make them), or as is; *len its size. @p first: the first part's packed size. */
static unsigned char *pack(const char *text, size_t len, packing k, size_t *out_len,
                           size_t *first) {
    if (k == TEXT) {
        unsigned char *b = malloc(len + 1);
        memcpy(b, text, len);
        *out_len = *first = len;
        return b;
    }
    size_t half = middle_line_end(text, len), l1, l2;
    unsigned char *a = k == GZIP ? gzip_member(text, half, &l1) : zstd_frame(text, half, &l1);
    unsigned char *b = k == GZIP ? gzip_member(text + half, len - half, &l2)
                                 : zstd_frame(text + half, len - half, &l2);
    unsigned char *both = a && b ? realloc(a, l1 + l2) : NULL;
    if (both) memcpy(both + l1, b, l2);
    else free(a);
    free(b);
    *out_len = l1 + l2;
    *first = l1;
    return both;
}

static void put_bytes(const char *file, const unsigned char *b, size_t n) {
    snprintf(path, sizeof path, "%s/%s", tmpdir, file);
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, n, f);
    fclose(f);
}

/* File names: .gz as usual, and zstd under a name that says nothing, so that only the first
 * bytes can tell. */
static const char *packed_file[] = {"pheno.txt", "pheno.txt.gz", "pheno.data"};

/* 100 000 shuffled rows, values a function of the sample index, as text, gzip and zstd (the
 * compressed files span several of the reader's input buffers). */
static void large(tg_rng *r) {
    const int64_t n = 100000;
    samples x = make_samples(n);
    int64_t *order = malloc((size_t)n * sizeof *order);
    for (int64_t i = 0; i < n; i++) order[i] = i;
    shuffle(order, n, r);
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    for (int64_t k = 0; k < n; k++)
        fprintf(f, "%s %s %" PRId64 "\n", x.s[order[k]].fid, x.s[order[k]].iid, order[k] * 3);
    fclose(f);
    for (packing k = TEXT; k <= ZSTD; k++) {
        size_t plen, first;
        unsigned char *b = pack(text, len, k, &plen, &first);
        put_bytes(packed_file[k], b, plen);
        tg_pheno p;
        tg_error err = {0};
        tg_status st = tg_pheno_read(path, x.s, n, &p, &err);
        int good = st == TG_OK && p.n_skipped == 0;
        for (int64_t i = 0; good && i < n; i++) good &= p.values[i] == (double)(i * 3);
        ok(good, "100000 shuffled rows matched, %s, %zu bytes (%s)", packing_name[k], plen,
           st ? err.msg : "ok");
        if (st == TG_OK) tg_pheno_free(&p);
        if (k == TEXT) {
            free(b);
            continue;
        }
        /* the same bytes cut inside the second member/frame: an error after the lines of the
         * first part at least, never a short read */
        const char *what = packing_name[k];
        int64_t lines1 = 0;
        for (size_t c = 0; c < middle_line_end(text, len); c++) lines1 += text[c] == '\n';
        put_bytes(packed_file[k], b, first + (plen - first) / 2);
        memset(&p, 0x7f, sizeof p);
        st = tg_pheno_read(path, x.s, n, &p, &err);
        const char *at = strstr(err.msg, "after line ");
        long long line = at ? atoll(at + 11) : -1;
        char want[64];
        snprintf(want, sizeof want, "the %s data ends early", what);
        ok(st == TG_ERR_FORMAT && strstr(err.msg, path) && strstr(err.msg, want) &&
               line >= lines1 && line < n && zeroed(&p),
           "%s cut in its second part: %s (%lld lines in the first part)", what, err.msg,
           (long long)lines1);
        if (st == TG_OK) tg_pheno_free(&p);
        if (k == GZIP) { /* a reserved block type (11) at the start of the second member's data */
            b[first + 10] = 0x07;
            put_bytes(packed_file[k], b, plen);
            memset(&p, 0x7f, sizeof p);
            st = tg_pheno_read(path, x.s, n, &p, &err);
            snprintf(want, sizeof want, "corrupt gzip data after line %lld", (long long)lines1);
            ok(st == TG_ERR_FORMAT && strstr(err.msg, path) && strstr(err.msg, want) &&
                   zeroed(&p),
               "corrupt gzip member: %s", err.msg);
            if (st == TG_OK) tg_pheno_free(&p);
        }
        free(b);
    }
    free(text);
    free(order);
    free(x.s);
    free(x.names);
}

/* Lines of ~73 kB (12 000 columns), longer than the reader's first buffer (64 KiB), in each
 * packing. */
static void wide(const samples *x) {
    const int ncol = 12000, rows = 10;
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    fprintf(f, "FID IID");
    for (int c = 0; c < ncol; c++) fprintf(f, " c%d", c);
    for (int i = 0; i < rows; i++) {
        fprintf(f, "\n%s %s", x->s[i].fid, x->s[i].iid);
        for (int c = 0; c < ncol; c++)
            fprintf(f, c % 7 == 3 ? " ." : " %d", i * 100000 + c);
    }
    fclose(f); /* no newline at the end */
    for (packing k = TEXT; k <= ZSTD; k++) {
        size_t plen, first;
        unsigned char *b = pack(text, len, k, &plen, &first);
        put_bytes(packed_file[k], b, plen);
        free(b);
        tg_pheno p;
        tg_error err = {0};
        tg_status st = tg_pheno_read(path, x->s, x->n, &p, &err);
        int good = st == TG_OK && p.n_cols == ncol && strcmp(p.names[ncol - 1], "c11999") == 0;
        for (int i = 0; good && i < x->n; i++)
            for (int c = 0; c < ncol; c++) {
                double v = p.values[i + (int64_t)c * x->n];
                good &= i >= rows || c % 7 == 3 ? isnan(v) : v == i * 100000 + c;
            }
        ok(good, "%d columns, lines of %zu bytes, %s (%s)", ncol, len / (rows + 1),
           packing_name[k], st ? err.msg : "ok");
        if (st == TG_OK) tg_pheno_free(&p);
    }
    free(text);
}

/* n samples F<i> U<i>: IIDs unique, for the IID-only header. */
static samples unique_iids(int64_t n) {
    samples u = {n, calloc((size_t)n, sizeof(tg_sample)), malloc((size_t)n * 48)};
    for (int64_t i = 0; i < n; i++) {
        char *fid = u.names + i * 48, *iid = fid + 24;
        snprintf(fid, 24, "F%" PRId64, i);
        snprintf(iid, 24, "U%" PRId64, i);
        u.s[i] = (tg_sample){.fid = fid, .iid = iid, .father = "0", .mother = "0"};
    }
    return u;
}

/* Reads `path` for list @p x: one column, its name, and the values of samples i[0..3]. */
static int reads_as(const samples *x, const char *name, const int64_t idx[3], const double v[3],
                    int64_t skipped, tg_error *err) {
    tg_pheno p;
    tg_status st = tg_pheno_read(path, x->s, x->n, &p, err);
    if (st) return 0;
    int good = p.n_cols == 1 && strcmp(p.names[0], name) == 0 && p.n_skipped == skipped;
    int64_t set = 0;
    for (int k = 0; k < 3; k++) good &= same(p.values[idx[k]], v[k]);
    for (int64_t i = 0; i < x->n; i++) set += !isnan(p.values[i]);
    for (int k = 0; k < 3; k++) set -= !isnan(v[k]);
    tg_pheno_free(&p);
    return good && set == 0; /* no other sample got a value */
}

static void headers(const samples *x) {
    samples u = unique_iids(6);
    tg_error err = {0};
    const int64_t a[3] = {1, 2, 5}, b[3] = {0, 3, 4};
    put("fid iid y\nF0 I1 3\nF1 I0 4\nF2 I1 5\n");
    ok(reads_as(x, "y", a, (double[]){3, 4, 5}, 0, &err), "header 'fid iid' (lower case) %s",
       err.msg);
    put("#Fid\tIid y\nF0 I1 3\nF1 I0 4\nF2 I1 5\n");
    ok(reads_as(x, "y", a, (double[]){3, 4, 5}, 0, &err), "header '#Fid Iid' %s", err.msg);
    put("#IID\ty\nU1 1.5\nU2 NA\nV9 7\nU5 -2\n");
    ok(reads_as(&u, "y", a, (double[]){1.5, NAN, -2}, 1, &err),
       "#IID header: rows of IIDs matched by IID, V9 skipped %s", err.msg);
    put("IID y\nU0 8\nU3 9\nU4 .\n");
    ok(reads_as(&u, "y", b, (double[]){8, 9, NAN}, 0, &err), "'IID' header (no '#') %s",
       err.msg);
    put("## written by a pipeline\n#comment\n#IID y\nU0 8\nU3 9\nU4 10\n");
    ok(reads_as(&u, "y", b, (double[]){8, 9, 10}, 0, &err),
       "'#' lines before the #IID header skipped %s", err.msg);
    put("#iid y\nU1 1\nU1 2\n");
    expect_fail(&u, "line 3: duplicate sample 'U1' (IID), first on line 2", "duplicate IID");
    put("#IID y\nU1 1 2\n");
    expect_fail(&u, "line 2: expected 2 columns (IID and 1 values), found 3", "long #IID row");
    put("#IID\nU1\n");
    expect_fail(&u, "line 1: expected IID and at least one value column, found 1",
                "#IID header without values");

    /* a list in which U0 is the IID of two samples: refused only where a row uses it */
    samples t = unique_iids(7);
    t.s[6].fid = "G";
    t.s[6].iid = "U0";
    put("#IID y\nU1 1\nU2 2\nU5 5\n");
    ok(reads_as(&t, "y", a, (double[]){1, 2, 5}, 0, &err),
       "#IID: an IID shared in the list but not in the file is no error %s", err.msg);
    put("#IID y\nU1 1\nU0 2\n");
    expect_fail(&t,
                "line 3: IID 'U0' is that of two samples of the sample list, 'F0 U0' and 'G U0'",
                "#IID row matching two samples");
    free(t.s);
    free(t.names);
    free(u.s);
    free(u.names);
}

/* A tg_pheno read with @p o must have the named columns, values 10·(sample) + (value column). */
static void selects(const samples *x, const char *col_nums, const char *names_opt,
                    const char *want_names, const char *what) {
    tg_pheno_opts o = tg_pheno_defaults();
    o.col_nums = col_nums;
    o.names = names_opt;
    tg_pheno p;
    tg_error err = {0};
    tg_status st = tg_pheno_read_opts(path, x->s, x->n, &o, &p, &err);
    char got[256] = "";
    int good = st == TG_OK;
    for (int c = 0; good && c < p.n_cols; c++) {
        size_t l = strlen(got);
        snprintf(got + l, sizeof got - l, "%s%.16s", c ? "," : "", p.names[c]);
        /* the value column's number is the digit after the letter, or its letter a..e */
        const char *nm = p.names[c];
        int vc = nm[0] == 'P' ? nm[5] - '1' : nm[0] - 'a';
        for (int64_t i = 0; i < x->n; i++)
            good &= same(p.values[i + c * x->n], i < 10 ? 10.0 * i + vc : NAN);
    }
    ok(good && strcmp(got, want_names) == 0, "%s: columns %s (%s)", what, got,
       st ? err.msg : "ok");
    if (st == TG_OK) tg_pheno_free(&p);
}

static void selection(const samples *x) {
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    for (int i = 0; i < 10; i++) {
        fprintf(f, "%s %s", x->s[i].fid, x->s[i].iid);
        for (int c = 0; c < 5; c++) fprintf(f, " %d", 10 * i + c);
        fputc('\n', f);
    }
    fclose(f);
    put("FID IID a b c d e\n%s", text);
    selects(x, NULL, NULL, "a,b,c,d,e", "no selection");
    selects(x, "3-4,7", NULL, "a,b,e", "--pheno-col-nums 3-4,7 (FID is column 1)");
    selects(x, "7 3", NULL, "e,a", "--pheno-col-nums '7 3': the order given");
    selects(x, NULL, "e,a", "e,a", "--pheno-name e,a");
    selects(x, NULL, "b-d", "b,c,d", "--pheno-name b-d: a range");
    selects(x, NULL, "a,c-e", "a,c,d,e", "--pheno-name a,c-e");

    tg_pheno_opts o = tg_pheno_defaults();
    struct {
        const char *nums, *names, *msg;
    } bad[] = {
        {"2", NULL, "'2' is outside the value columns, 3 to 7 (FID is column 1)"},
        {"6-8", NULL, "'6-8' is outside the value columns, 3 to 7"},
        {"3-x", NULL, "'3-x' is not a number or a range"},
        {"3-", NULL, "'3-' is not a number or a range"},
        {"0", NULL, "'0' is not a number or a range"},
        {"5-3", NULL, "the range '5-3' in '5-3' runs backwards"},
        {"3-4,4", NULL, "column 4 is chosen twice in '3-4,4'"},
        {",", NULL, "no column chosen by ','"},
        {NULL, "a,zz", "has no column named 'zz' (its columns: a b c d e)"},
        {NULL, "d-b", "the range 'd-b' in 'd-b' runs backwards"},
        {NULL, "b,a-c", "column 4 is chosen twice in 'b,a-c'"}, /* b: FID IID a b */
        {"3", "a", "columns chosen both by number ('3') and by name ('a')"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        o.col_nums = bad[k].nums;
        o.names = bad[k].names;
        expect_status(x, &o, TG_ERR_ARG, bad[k].msg, bad[k].nums ? bad[k].nums : bad[k].names);
    }

    put("%s", text); /* no header: PHENO<k> by the value column's place */
    selects(x, "4,3", NULL, "PHENO2,PHENO1", "no header, --pheno-col-nums 4,3");
    o.col_nums = NULL;
    o.names = "a";
    expect_status(x, &o, TG_ERR_ARG, "has no header line, so its columns cannot be chosen by name",
                  "names without a header");

    /* a name with '-' in it is taken whole */
    put("FID IID a-b a b\nF0 I0 1 2 3\n");
    o.names = "a-b";
    tg_pheno p;
    tg_error err = {0};
    tg_status st = tg_pheno_read_opts(path, x->s, x->n, &o, &p, &err);
    ok(st == TG_OK && p.n_cols == 1 && strcmp(p.names[0], "a-b") == 0 && p.values[0] == 1,
       "--pheno-name a-b: the column named so, not a range (%s)", st ? err.msg : "ok");
    if (st == TG_OK) tg_pheno_free(&p);

    /* #IID: the first value column is 2 */
    samples u = unique_iids(3);
    put("#IID p q\nU0 1 2\nU2 5 6\n");
    o.names = NULL;
    o.col_nums = "3";
    st = tg_pheno_read_opts(path, u.s, u.n, &o, &p, &err);
    ok(st == TG_OK && p.n_cols == 1 && strcmp(p.names[0], "q") == 0 && p.values[0] == 2 &&
           isnan(p.values[1]) && p.values[2] == 6,
       "#IID file, --pheno-col-nums 3: its second value column (%s)", st ? err.msg : "ok");
    if (st == TG_OK) tg_pheno_free(&p);
    o.col_nums = "1";
    expect_status(&u, &o, TG_ERR_ARG, "'1' is outside the value columns, 2 to 3 (IID is column 1)",
                  "#IID file, column 1");
    free(u.s);
    free(u.names);
    free(text);
}

/* A FIFO (bash's --pheno <(...)) that nobody writes is refused at once, naming what it is:
 * inputs are regular files, and opening a FIFO to read would wait for a writer (the alarm
 * turns such a wait into a failure instead of a hang). */
static void from_fifo(const samples *x) {
    snprintf(path, sizeof path, "%s/fifo", tmpdir);
    if (mkfifo(path, 0600) != 0) {
        ok(0, "mkfifo %s", path);
        return;
    }
    tg_pheno p;
    tg_error err = {0};
    alarm(10);
    tg_status st = tg_pheno_read(path, x->s, x->n, &p, &err);
    alarm(0);
    ok(st == TG_ERR_IO && strstr(err.msg, path) &&
           strstr(err.msg, "is a FIFO (named pipe), not a regular file"),
       "a FIFO nobody writes is refused at once: %s", err.msg);
    if (st == TG_OK) tg_pheno_free(&p);
    unlink(path);
}

static void bad_inputs(const samples *x) {
    /* samples not in the list are skipped and counted (plink2, REGENIE); only a file with
     * none of the list's samples is refused */
    put("FID IID a b\nF0 I0 1 2\nF1 I0 3 4\nF9 I9 1 2\n");
    tg_pheno q;
    tg_error qerr = {0};
    tg_status qst = tg_pheno_read(path, x->s, x->n, &q, &qerr);
    ok(qst == TG_OK && q.n_skipped == 1 && q.values[0] == 1 && q.values[2] == 3 &&
           q.values[x->n] == 2 && q.values[2 + x->n] == 4,
       "unknown ID skipped and counted (%s)", qst ? qerr.msg : "ok");
    if (qst == TG_OK) tg_pheno_free(&q);
    put("FID IID a b\nF9 I9 1 2\nF0 I9 1 2\n");
    expect_fail(x, "none of its 2 samples is in the sample list (.fam), the first being 'F9 I9' "
                   "(FID IID) on line 2", "no ID in the list");
    put("FID IID a b\nF0 I0 1 2\nF1 I0 . NAN\nF2 I0 1 two\n");
    expect_fail(x, "line 4: column 4 (b): 'two' is not a number", "non-numeric after '.' and NAN");
    /* text under a .gz name; bzip2 and xz data, which are not read */
    put_bytes("pheno.txt.gz", (const unsigned char *)"F0 I0 1\n", 8);
    expect_fail(x, "the name ends in .gz but the file is not gzip data", "text named .gz");
    put_bytes("pheno.txt", (const unsigned char *)"BZh91AY&SY\x01\x02", 12);
    expect_fail(x, "is bzip2-compressed, which is not read", "bzip2 data");
    put_bytes("pheno.txt", (const unsigned char *)"\xfd" "7zXZ\0\0\x04", 8);
    expect_fail(x, "is xz-compressed, which is not read", "xz data");
    put("FID IID a b\nF0 I0 1 2\n\nF1 I0 1 2\nF0 I0 3 4\n");
    expect_fail(x, "line 5: duplicate sample 'F0 I0' (FID IID), first on line 2", "duplicate ID");
    put("FID IID a b\nF0 I0 1 2\nF1 I0 1 2\nF1 I1 1 x2\n");
    expect_fail(x, "line 4: column 4 (b): 'x2' is not a number", "non-numeric value");
    put("F0 I0 1 2\nF1 I1 1 inf\n");
    expect_fail(x, "line 2: column 4 (PHENO2): 'inf'", "infinite value");
    put("FID IID a b\nF0 I0 1 2\nF1 I0 1\n");
    expect_fail(x, "line 3: expected 4 columns (FID IID and 2 values), found 3", "short line");
    put("F0 I0 1 2\nF1 I0 1 2 3\n");
    expect_fail(x, "line 2: expected 4 columns (FID IID and 2 values), found 5", "long line");
    put("");
    expect_fail(x, "is empty", "empty file");
    put("\n \r\n\n");
    expect_fail(x, "is empty", "file of blank lines");
    put("FID IID a\n\n");
    expect_fail(x, "header line but no data lines", "header only");
    put("\nF0 I0\nF1 I1\n");
    expect_fail(x, "line 2: expected FID, IID and at least one value column, found 2",
                "no value column");

    tg_pheno p;
    tg_error err = {0};
    snprintf(path, sizeof path, "%s/none.txt", tmpdir);
    tg_status st = tg_pheno_read(path, x->s, x->n, &p, &err);
    ok(st == TG_ERR_IO && strstr(err.msg, "cannot open") && strstr(err.msg, path) && zeroed(&p),
       "missing file: %s", err.msg);

    /* a sample list with a repeated ID is the caller's error */
    put("F0 I0 1\n");
    tg_sample two[2] = {x->s[0], x->s[0]};
    st = tg_pheno_read(path, two, 2, &p, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "twice") && zeroed(&p),
       "duplicate in the sample list: %s", err.msg);

    /* write: a column name with a space would break the header */
    double v[40] = {0};
    char *names[1] = {"body mass"};
    tg_pheno w = {.n_samples = x->n, .n_cols = 1, .names = names, .values = v};
    snprintf(path, sizeof path, "%s/w.txt", tmpdir);
    st = tg_pheno_write(path, x->s, &w, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "'body mass'"), "write refuses a name with a space: %s",
       err.msg);
    snprintf(path, sizeof path, "%s/nodir/w.txt", tmpdir);
    names[0] = "bmi";
    st = tg_pheno_write(path, x->s, &w, &err);
    ok(st == TG_ERR_IO && strstr(err.msg, path), "write into a missing folder: %s", err.msg);
}

int main(void) {
    tg_rng r;
    uint64_t seed = tap_seed();
    tg_rng_seed(&r, seed);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_pheno.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp failed\n");
        return 1;
    }
    samples x = make_samples(40);
    header_file(&x, &r);
    no_header(&x);
    headers(&x);
    selection(&x);
    large(&r);
    wide(&x);
    from_fifo(&x);
    bad_inputs(&x);
    free(x.s);
    free(x.names);
    static const char *files[] = {"pheno.txt", "out.pheno", "pheno.txt.gz", "pheno.data"};
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[k]);
        unlink(path);
    }
    rmdir(tmpdir);
    tap_plan(tap_n);
    return tap_done();
}
