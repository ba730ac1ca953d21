/* Streaming line reader over plain, gzip and zstd text. See lines.h. */
#include "io/lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

enum { IN_SIZE = 1 << 17, OUT_START = 1 << 16 };

static const char *kind_name(tg_lines_kind k) {
    return k == TG_LINES_GZIP ? "gzip" : k == TG_LINES_ZSTD ? "zstd" : "text";
}

/* Lines decoded intact so far: those returned, and the complete ones still buffered. Where a
 * stream breaks, everything up to this line was read correctly. */
static long long lines_intact(const tg_lines *r) {
    long long n = r->line_no;
    for (const char *p = r->buf + r->beg; (p = memchr(p, '\n', (size_t)(r->buf + r->len - p)));
         p++)
        n++;
    return n;
}

/* Refills the input buffer once its bytes are consumed. */
static tg_status fill_in(tg_lines *r, tg_error *err) {
    if (r->in_pos < r->in_len || r->in_eof) return TG_OK;
    r->in_len = fread(r->in, 1, IN_SIZE, r->f);
    r->in_pos = 0;
    if (ferror(r->f))
        return tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", r->path, strerror(errno));
    r->in_eof = r->in_len < IN_SIZE;
    return TG_OK;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

tg_status tg_lines_open(tg_lines *r, const char *path, tg_error *err) {
    memset(r, 0, sizeof *r);
    r->path = path;
    if (!(r->f = fopen(path, "rb")))
        return tg_error_set(err, TG_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    r->cap = OUT_START;
    if (!(r->in = tg_malloc(IN_SIZE, err)) || !(r->buf = tg_malloc(r->cap, err)))
        return TG_ERR_NOMEM;
    tg_status st = fill_in(r, err);
    if (st) return st;
    const unsigned char *b = r->in;
    size_t n = r->in_len;
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        r->kind = TG_LINES_GZIP;
    else if (n >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
        r->kind = TG_LINES_ZSTD;
    /* bzip2: "BZh", the block size, then the block magic (pi's digits), so that text starting
     * with "BZh" is not taken for it */
    else if ((n >= 10 && memcmp(b, "BZh", 3) == 0 && b[3] >= '1' && b[3] <= '9' &&
              memcmp(b + 4, "\x31\x41\x59\x26\x53\x59", 6) == 0) ||
             (n >= 6 && memcmp(b, "\xfd" "7zXZ\0", 6) == 0))
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s is %s-compressed, which is not read: decompress it, or compress it "
                            "with gzip or zstd",
                            path, b[0] == 'B' ? "bzip2" : "xz");
    /* a name that promises compression and bytes that are not: say so, rather than read the
     * bytes as text and fail later on "columns" */
    static const struct {
        const char *suffix;
        tg_lines_kind kind;
        const char *magic;
    } named[] = {{".gz", TG_LINES_GZIP, "1f 8b"}, {".zst", TG_LINES_ZSTD, "28 b5 2f fd"}};
    for (int k = 0; k < 2; k++)
        if (ends_with(path, named[k].suffix) && r->kind != named[k].kind)
            return tg_error_set(err, TG_ERR_FORMAT,
                                "%s: the name ends in %s but the file is not %s data (it does not "
                                "start with the bytes %s)",
                                path, named[k].suffix, kind_name(named[k].kind), named[k].magic);
    if (r->kind == TG_LINES_GZIP) {
        z_stream *z = tg_calloc(1, sizeof *z, err);
        if (!z) return TG_ERR_NOMEM;
        r->dec = z;
        if (inflateInit2(z, 16 + MAX_WBITS) != Z_OK) /* 16: gzip wrapper only */
            return tg_error_set(err, TG_ERR_NOMEM, "reading %s: zlib cannot start", path);
    } else if (r->kind == TG_LINES_ZSTD) {
        if (!(r->dec = ZSTD_createDStream()))
            return tg_error_set(err, TG_ERR_NOMEM, "reading %s: zstd cannot start", path);
    }
    return TG_OK;
}

/* Up to @p cap bytes of decoded text into @p dst; *got = 0 only at the end of the stream. */
static tg_status produce(tg_lines *r, char *dst, size_t cap, size_t *got, tg_error *err) {
    tg_status st;
    *got = 0;
    if (r->kind == TG_LINES_TEXT) {
        if (r->in_pos < r->in_len) { /* bytes read while looking for a magic number */
            size_t k = r->in_len - r->in_pos < cap ? r->in_len - r->in_pos : cap;
            memcpy(dst, r->in + r->in_pos, k);
            r->in_pos += k;
            *got = k;
            return TG_OK;
        }
        if (r->in_eof) return TG_OK;
        *got = fread(dst, 1, cap, r->f);
        if (ferror(r->f))
            return tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", r->path, strerror(errno));
        r->in_eof = *got < cap;
        return TG_OK;
    }
    for (;;) {
        if ((st = fill_in(r, err))) return st;
        int no_input = r->in_pos == r->in_len;
        if (no_input && !r->pending) {
            if (r->open_frame)
                return tg_error_set(err, TG_ERR_FORMAT,
                                    "%s: the %s data ends early, inside compressed data, after "
                                    "line %lld (a truncated or partly copied file)",
                                    r->path, kind_name(r->kind), lines_intact(r));
            return TG_OK;
        }
        size_t out;
        if (r->kind == TG_LINES_GZIP) {
            z_stream *z = r->dec;
            z->next_in = r->in + r->in_pos;
            z->avail_in = (uInt)(r->in_len - r->in_pos);
            z->next_out = (Bytef *)dst;
            z->avail_out = (uInt)cap;
            int ret = inflate(z, Z_NO_FLUSH);
            size_t used = r->in_len - z->avail_in - r->in_pos;
            r->in_pos += used;
            out = cap - z->avail_out;
            if (used || out) r->open_frame = 1;
            if (ret == Z_STREAM_END) { /* a member ends; another may follow (bgzip, cat) */
                r->open_frame = 0;
                inflateReset(z);
            } else if (ret != Z_OK && ret != Z_BUF_ERROR) { /* BUF_ERROR: no progress, no harm */
                return tg_error_set(err, TG_ERR_FORMAT,
                                    "%s: corrupt gzip data after line %lld (zlib: %s)", r->path,
                                    lines_intact(r), z->msg ? z->msg : zError(ret));
            }
        } else {
            ZSTD_inBuffer ib = {r->in, r->in_len, r->in_pos};
            ZSTD_outBuffer ob = {dst, cap, 0};
            size_t ret = ZSTD_decompressStream(r->dec, &ob, &ib);
            size_t used = ib.pos - r->in_pos;
            r->in_pos = ib.pos;
            out = ob.pos;
            if (ZSTD_isError(ret))
                return tg_error_set(err, TG_ERR_FORMAT,
                                    "%s: corrupt zstd data after line %lld (zstd: %s)", r->path,
                                    lines_intact(r), ZSTD_getErrorName(ret));
            /* 0: a frame ended and is flushed; a call that did nothing (a flush found nothing
             * left) says nothing about frames */
            if (used || out) r->open_frame = ret != 0;
        }
        /* a full output buffer may leave decoded bytes inside the decoder */
        r->pending = out == cap;
        if (out) {
            *got = out;
            return TG_OK;
        }
    }
}

tg_status tg_lines_next(tg_lines *r, char **line, tg_error *err) {
    *line = NULL;
    for (;;) {
        char *nl = memchr(r->buf + r->scan, '\n', r->len - r->scan);
        char *l = r->buf + r->beg;
        if (nl || (r->eof && r->beg < r->len)) { /* a line, or the last one without '\n' */
            size_t stop = nl ? (size_t)(nl - r->buf) : r->len;
            r->buf[stop] = '\0'; /* buf keeps a byte past len for this */
            r->beg = r->scan = nl ? stop + 1 : r->len;
            r->line_no++;
            if (l[strspn(l, " \t\r\v\f")]) {
                *line = l;
                return TG_OK;
            }
            continue;
        }
        if (r->eof) return TG_OK;
        /* no complete line buffered: keep the partial one, make room, decode more */
        memmove(r->buf, l, r->len - r->beg);
        r->len -= r->beg;
        r->scan = r->len;
        r->beg = 0;
        if (r->len + 1 >= r->cap) {
            char *b = realloc(r->buf, 2 * r->cap);
            if (!b) return tg_error_set(err, TG_ERR_NOMEM, "out of memory reading %s", r->path);
            r->buf = b;
            r->cap *= 2;
        }
        size_t got;
        tg_status st = produce(r, r->buf + r->len, r->cap - 1 - r->len, &got, err);
        if (st) return st;
        r->len += got;
        r->eof = got == 0;
    }
}

void tg_lines_close(tg_lines *r) {
    if (r->kind == TG_LINES_GZIP && r->dec) {
        inflateEnd(r->dec);
        free(r->dec);
    } else if (r->kind == TG_LINES_ZSTD) {
        ZSTD_freeDStream(r->dec);
    }
    if (r->f) fclose(r->f);
    free(r->in);
    free(r->buf);
    memset(r, 0, sizeof *r);
}
