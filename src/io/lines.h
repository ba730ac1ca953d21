/* Streaming line reader for text files that may be compressed, internal to src/io: plain text,
 * gzip (zlib; several members, as bgzip writes, read as one stream) or zstd (libzstd; several
 * frames likewise), told apart by their first bytes, never by the name alone. Memory is a fixed
 * input buffer and an output buffer as long as the longest line, whatever the file's size. A
 * compressed stream that is corrupt or ends inside a member/frame is an error naming the file
 * and the last line decoded intact: the reader never returns a silently short file.
 * Every input is opened through tg_file_open: regular files only (a FIFO nobody writes would
 * block, /dev/zero never ends), lines of at most TG_LINE_MAX bytes, and a UTF-8 byte order mark
 * at the start of the text skipped, as plink2 does. */
#ifndef TG_LINES_H
#define TG_LINES_H
#include <stdint.h>
#include <stdio.h>

#include "tilegwas.h"

/* The longest line read: 256 MiB. Longer, and the file is not the text it should be (a binary
 * file, a compressed stream of one endless line), rather than a buffer growing without end. */
#define TG_LINE_MAX ((size_t)1 << 28)

/** Opens @p path for reading, refusing anything but a regular file (without blocking on a
 * FIFO): "cannot read PATH: it is a FIFO (named pipe), not a regular file ...". */
tg_status tg_file_open(const char *path, int *fd, tg_error *err);
/** tg_file_open's check for inputs opened by another library (htslib): the file named is a
 * regular file, following symbolic links. */
tg_status tg_file_check(const char *path, tg_error *err);

typedef enum { TG_LINES_TEXT, TG_LINES_GZIP, TG_LINES_ZSTD } tg_lines_kind;

typedef struct {
    const char *path; /* for messages; not owned */
    FILE *f;
    tg_lines_kind kind;
    void *dec;                /* z_stream or ZSTD_DStream */
    unsigned char *in;        /* raw bytes read from f */
    size_t in_len, in_pos;    /* bytes in `in`, the first not yet consumed */
    int in_eof;               /* f is at its end */
    int open_frame;           /* compressed: inside a gzip member / zstd frame */
    int pending;              /* the decoder filled the output: it may hold more */
    char *buf;                /* decoded text; unread lines are buf[beg, len) */
    size_t cap, beg, len, scan; /* scan: where the search for the next newline resumes */
    int eof;                  /* everything decoded */
    int64_t line_no;          /* 1-based number of the line last returned */
} tg_lines;

/** Opens @p path and finds its kind. Errors: "cannot open PATH: reason"; a name ending in .gz
 * or .zst whose bytes are not gzip / zstd, and bzip2 or xz data (not read), are TG_ERR_FORMAT. */
tg_status tg_lines_open(tg_lines *r, const char *path, tg_error *err);
/** Sets *line to the next line that is not blank (only spaces, tabs, CR), NUL-terminated, with
 * r->line_no its number in the file, or to NULL at the end. The line stays valid, and may be
 * modified, until the next call. */
tg_status tg_lines_next(tg_lines *r, char **line, tg_error *err);
/** All of @p path's text, decoded, into *text (malloc'ed, NUL-terminated, *len bytes): the
 * whole-file readers' (tg_text_read) way in, with the same checks as tg_lines_next. */
tg_status tg_lines_read_all(const char *path, char **text, size_t *len, tg_error *err);
/** Closes the file and frees the buffers (also after a failed open). */
void tg_lines_close(tg_lines *r);
#endif
