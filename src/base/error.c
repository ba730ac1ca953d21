/* Errors and checked allocation: library code fills a tg_error and returns; only the CLI prints.
 * Messages quote bytes from input files escaped (tg_esc), so that they stay one line. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegwas.h"

/* The length of the UTF-8 character at @p s (at most @p n bytes) when it is one that prints: 1
 * for printable ASCII, 2-4 for a well-formed sequence that is not a C1 control (U+0080-U+009F,
 * which terminals obey); 0 for anything else. */
static size_t printable_char(const unsigned char *s, size_t n) {
    if (s[0] >= 0x20 && s[0] < 0x7f) return 1;
    size_t len = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
                 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (!len || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if ((s[0] == 0xc2 && s[1] < 0xa0) || (s[0] == 0xe0 && s[1] < 0xa0) ||
        (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90) ||
        (s[0] == 0xf4 && s[1] > 0x8f))
        return 0; /* C1 controls, overlong forms, surrogates, beyond U+10FFFF */
    return len;
}

/* @p n bytes of @p s into @p out (@p cap bytes, NUL-terminated), escaped, at most @p chars
 * characters (an escape counts as one); returns the bytes of @p s consumed. */
static size_t escape(const char *s, size_t n, char *out, size_t cap, size_t chars) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0;
    for (size_t c = 0; i < n && c < chars; c++) {
        size_t len = printable_char(u + i, n - i);
        if (o + (len ? len : 4) >= cap) break;
        if (len) memcpy(out + o, u + i, len), o += len, i += len;
        else o += (size_t)snprintf(out + o, cap - o, "\\x%02x", u[i++]);
    }
    out[o] = '\0';
    return i;
}

const char *tg_esc(const char *s, char *buf) {
    if (!s) return "(null)";
    size_t n = strlen(s), used = escape(s, n, buf, TG_ESC_SIZE - 32, TG_ESC_CHARS);
    if (used < n) /* cut: say how long the value was */
        snprintf(buf + strlen(buf), 32, "… (%zu bytes)", n);
    return buf;
}

tg_status tg_error_set(tg_error *err, tg_status st, const char *fmt, ...) {
    if (err) {
        char raw[sizeof err->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        /* whatever a message quotes, it prints as one line */
        escape(raw, strlen(raw), err->msg, sizeof err->msg, sizeof err->msg);
        err->status = st;
    }
    return st;
}

void *tg_malloc(size_t size, tg_error *err) {
    void *p = malloc(size ? size : 1);
    if (!p) tg_error_set(err, TG_ERR_NOMEM, "out of memory allocating %zu bytes", size);
    return p;
}

void *tg_calloc(size_t n, size_t size, tg_error *err) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) tg_error_set(err, TG_ERR_NOMEM, "out of memory allocating %zu × %zu bytes", n, size);
    return p;
}

tg_status tg_size_mul(int64_t n1, int64_t n2, size_t size, size_t *bytes, tg_error *err) {
    size_t b;
    if (n1 < 0 || n2 < 0)
        return tg_error_set(err, TG_ERR_NOMEM, "cannot allocate %lld × %lld × %zu bytes: negative"
                            " count", (long long)n1, (long long)n2, size);
    if (__builtin_mul_overflow((uint64_t)n1, (uint64_t)n2, &b) ||
        __builtin_mul_overflow(b, size, &b) || b > PTRDIFF_MAX)
        return tg_error_set(err, TG_ERR_NOMEM, "cannot allocate %lld × %lld × %zu bytes: they"
                            " exceed the address space", (long long)n1, (long long)n2, size);
    *bytes = b;
    return TG_OK;
}

void *tg_malloc_n(int64_t n1, int64_t n2, size_t size, tg_error *err) {
    size_t b = 0;
    return tg_size_mul(n1, n2, size, &b, err) ? NULL : tg_malloc(b, err);
}

void *tg_calloc_n(int64_t n1, int64_t n2, size_t size, tg_error *err) {
    size_t b = 0;
    return tg_size_mul(n1, n2, size, &b, err) ? NULL : tg_calloc(b, 1, err);
}

char *tg_strdup(const char *s, tg_error *err) {
    char *p = strdup(s);
    if (!p) tg_error_set(err, TG_ERR_NOMEM, "out of memory copying a string");
    return p;
}
