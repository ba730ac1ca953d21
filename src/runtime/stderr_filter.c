/* A filter on stderr for the time of one call: what a library prints there that the log already
 * says (StarPU-MPI's table of transfers at its shutdown) is dropped, everything else passes. */
#define _GNU_SOURCE /* fopencookie, memmem */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/internal.h"

static const char *dropped; /* the marker of the writes to drop, while the filter is on */

/* Writes to file descriptor 2 at once, except the writes that carry the marker. */
static ssize_t filtered(void *cookie, const char *buf, size_t len) {
    (void)cookie;
    if (memmem(buf, len, dropped, strlen(dropped))) return (ssize_t)len;
    for (size_t at = 0; at < len;) {
        ssize_t w = write(2, buf + at, len - at);
        if (w <= 0) break;
        at += (size_t)w;
    }
    return (ssize_t)len;
}

/* While @p fn runs, stderr is an unbuffered stream that passes every other write (an error, an
 * assertion) to descriptor 2 as it comes: each fprintf is one write. */
void tg_stderr_filtered(const char *marker, int (*fn)(void)) {
    FILE *real = stderr, *quiet;
    dropped = marker;
    if ((quiet = fopencookie(NULL, "w", (cookie_io_functions_t){.write = filtered}))) {
        setvbuf(quiet, NULL, _IONBF, 0);
        stderr = quiet;
    }
    fn();
    if (quiet) {
        stderr = real;
        fclose(quiet);
    }
}
