/* Streaming line reader for text files that may be compressed, internal to src/io: plain text,
 * gzip (zlib; several members, as bgzip writes, read as one stream) or zstd (libzstd; several
 * frames likewise), told apart by their first bytes, never by the name alone. Memory is a fixed
 * input buffer and an output buffer as long as the longest line, whatever the file's size; a
 * pipe or FIFO works, since nothing is sought. A compressed stream that is corrupt or ends
 * inside a member/frame is an error naming the file and the last line decoded intact: the
 * reader never returns a silently short file. */
#ifndef TG_LINES_H
#define TG_LINES_H
#include <stdint.h>
#include <stdio.h>

#include "tilegwas.h"

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
/** Closes the file and frees the buffers (also after a failed open). */
void tg_lines_close(tg_lines *r);
#endif
