/* Outputs on every core (out.h). Tables (tg_out_rows): blocks of rows, each printed into a
 * memory stream of its own by the threads of tg_parallel_for, then written in order by the
 * caller. The row functions print with stdio as they would to the file, so the bytes are those
 * of a serial writer. Independent outputs at once (tg_out_each): the CLI's way to the loop. */
#define _GNU_SOURCE /* open_memstream under strict C modes */
#include <stdio.h>
#include <stdlib.h>

#include "base/parallel.h"
#include "io/out.h"

enum { BATCH_BLOCKS = 4 }; /* blocks per thread in a batch: the uneven ones even out */

typedef struct {
    tg_out_rows_fn fn;
    void *ctx;
    int64_t n, block, b0; /* the batch's first block */
    char **buf;
    size_t *len;
    int bad; /* a stream could not be opened or grow */
} job;

static void format_block(void *arg, int64_t c) {
    job *j = arg;
    const int64_t r0 = (j->b0 + c) * j->block, r1 = r0 + j->block < j->n ? r0 + j->block : j->n;
    FILE *f = open_memstream(&j->buf[c], &j->len[c]);
    int bad = !f;
    if (f) {
        j->fn(j->ctx, f, r0, r1);
        bad = ferror(f);
        bad |= fclose(f) != 0;
    }
    if (bad) __atomic_store_n(&j->bad, 1, __ATOMIC_RELAXED); /* from several threads */
}

tg_status tg_out_rows(FILE *f, const char *path, int64_t n, int64_t block, tg_out_rows_fn fn,
                      void *ctx, tg_error *err) {
    const int64_t blocks = (n + block - 1) / block,
                  batch = (int64_t)tg_parallel_threads() * BATCH_BLOCKS;
    job j = {fn, ctx, n, block, 0, tg_calloc((size_t)batch, sizeof *j.buf, err),
             tg_calloc((size_t)batch, sizeof *j.len, err), 0};
    tg_status st = j.buf && j.len ? TG_OK : TG_ERR_NOMEM;
    for (; j.b0 < blocks && !st; j.b0 += batch) {
        const int64_t nb = blocks - j.b0 < batch ? blocks - j.b0 : batch;
        tg_parallel_for(nb, format_block, &j);
        for (int64_t c = 0; c < nb; c++) {
            /* a failed write shows at tg_out_close, which names the error */
            if (!j.bad) fwrite(j.buf[c], 1, j.len[c], f);
            free(j.buf[c]);
            j.buf[c] = NULL;
        }
        if (j.bad)
            st = tg_error_set(err, TG_ERR_NOMEM, "out of memory formatting rows %lld to %lld of "
                              "%s", (long long)(j.b0 * block + 1),
                              (long long)((j.b0 + nb) * block < n ? (j.b0 + nb) * block : n),
                              path);
    }
    free(j.buf);
    free(j.len);
    return st;
}

int tg_out_each(int64_t n, void (*fn)(void *ctx, int64_t i), void *ctx) {
    tg_parallel_for(n, fn, ctx);
    return n > 1 ? tg_parallel_threads() : 1;
}
