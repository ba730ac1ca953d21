/* Errors and checked allocation: library code fills a tg_error and returns; only the CLI prints. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegwas.h"

tg_status tg_error_set(tg_error *err, tg_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
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

char *tg_strdup(const char *s, tg_error *err) {
    char *p = strdup(s);
    if (!p) tg_error_set(err, TG_ERR_NOMEM, "out of memory copying a string");
    return p;
}
