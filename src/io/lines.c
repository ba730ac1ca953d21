/* Streaming line reader over plain, gzip and zstd text. See lines.h. */
#include "io/lines.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
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

static tg_status not_regular(const char *path, mode_t m, tg_error *err) {
    const char *what = S_ISDIR(m)    ? "a folder"
                       : S_ISFIFO(m) ? "a FIFO (named pipe)"
                       : S_ISCHR(m)  ? "a character device"
                       : S_ISBLK(m)  ? "a block device"
                       : S_ISSOCK(m) ? "a socket"
                                     : "of an unknown type";
    return tg_error_set(err, TG_ERR_IO, "cannot read %s: it is %s, not a regular file (inputs "
                        "are read from files, as plink2 reads them: save the data to a file, "
                        "compressed with gzip or zstd if you like, and give that)", path, what);
}

tg_status tg_file_open(const char *path, int *fd, tg_error *err) {
    struct stat sb;
    tg_status st = TG_OK;
    /* non-blocking: opening a FIFO for reading would wait for a writer, maybe forever */
    if ((*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        return tg_error_set(err, TG_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    if (fstat(*fd, &sb) != 0)
        st = tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = not_regular(path, sb.st_mode, err);
    else if (fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK) != 0)
        st = tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    if (st) {
        close(*fd);
        *fd = -1;
    }
    return st;
}

tg_status tg_file_check(const char *path, tg_error *err) {
    struct stat sb;
    if (stat(path, &sb) != 0)
        return tg_error_set(err, TG_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    return S_ISREG(sb.st_mode) ? TG_OK : not_regular(path, sb.st_mode, err);
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

tg_status tg_lines_open(tg_lines *r, const char *path, tg_error *err) {
    memset(r, 0, sizeof *r);
    r->path = path;
    int fd;
    tg_status st = tg_file_open(path, &fd, err);
    if (st) return st;
    if (!(r->f = fdopen(fd, "rb"))) {
        close(fd);
        return tg_error_set(err, TG_ERR_NOMEM, "cannot read %s: %s", path, strerror(errno));
    }
    r->cap = OUT_START;
    if (!(r->in = tg_malloc(IN_SIZE, err)) || !(r->buf = tg_malloc(r->cap, err)))
        return TG_ERR_NOMEM;
    if ((st = fill_in(r, err))) return st;
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

/* UTF-8's byte order mark, which some editors put first: skipped where the text starts, so
 * that it does not become part of the first FID or chromosome */
static const char bom[] = "\xef\xbb\xbf";

static tg_status long_line(const char *path, long long line, tg_error *err) {
    return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: no line break in its first %zu MiB "
                        "(a binary file where text was expected?)", path, line, TG_LINE_MAX >> 20);
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
            if (r->line_no++ == 0 && !strncmp(l, bom, 3)) l += 3;
            if (l[strspn(l, " \t\r\v\f")]) {
                *line = l;
                return TG_OK;
            }
            continue;
        }
        if (r->eof) return TG_OK;
        if (r->len - r->beg >= TG_LINE_MAX) return long_line(r->path, r->line_no + 1, err);
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

tg_status tg_lines_read_all(const char *path, char **text, size_t *len, tg_error *err) {
    tg_lines r;
    struct stat sb;
    char *buf = NULL;
    size_t n = 0, cap = OUT_START, line_start = 0;
    long long line = 1;
    tg_status st = tg_lines_open(&r, path, err);
    /* a plain file's size is known: one block, and a short read proves the end */
    if (!st && r.kind == TG_LINES_TEXT && fstat(fileno(r.f), &sb) == 0)
        cap = (size_t)sb.st_size + 2;
    if (!st && !(buf = tg_malloc(cap, err))) st = TG_ERR_NOMEM;
    while (!st) {
        if (n - line_start >= TG_LINE_MAX) {
            st = long_line(path, line, err);
            break;
        }
        if (n + 1 == cap) { /* full but for the NUL: a compressed file, or one that grew */
            char *b = realloc(buf, 2 * cap);
            if (!b) {
                st = tg_error_set(err, TG_ERR_NOMEM, "out of memory reading %s", path);
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t got;
        if ((st = produce(&r, buf + n, cap - 1 - n, &got, err)) || !got) break;
        for (const char *p = buf + n; (p = memchr(p, '\n', (size_t)(buf + n + got - p))); p++)
            line++, line_start = (size_t)(p + 1 - buf);
        n += got;
    }
    if (!st) {
        buf[n] = '\0';
        if (!strncmp(buf, bom, 3)) memmove(buf, buf + 3, (n -= 3) + 1);
        *text = buf;
        *len = n;
        buf = NULL;
    }
    free(buf);
    tg_lines_close(&r);
    return st;
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
