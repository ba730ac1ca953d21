/* tg_snp_set_read: a file of SNP IDs (whitespace-separated, any number a line, plain or
 * compressed: src/io/lines.c) as indices into a fileset's .bim, through the .bim's ID index
 * (io/select.h). */
#include <stdlib.h>
#include <string.h>

#include "io/lines.h"
#include "io/select.h"

tg_status tg_snp_set_read(const char *path, const tg_bed *bed, int64_t **set, int64_t *n,
                          tg_error *err) {
    const int64_t m = bed->n_snps;
    int64_t count = 0, *out = NULL;
    int8_t *seen = NULL;
    tg_snp_index h = {0};
    tg_lines r = {0};
    tg_status st = tg_lines_open(&r, path, err);
    if (!st && !(st = tg_snp_index_build(&h, bed, err)) &&
        (!(seen = tg_calloc_n(m ? m : 1, 1, 1, NULL)) ||
         !(out = tg_malloc_n(m ? m : 1, 1, sizeof *out, NULL))))
        st = tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory for the set", path);
    char *line;
    while (!st && !(st = tg_lines_next(&r, &line, err)) && line) {
        for (char *tok = strtok(line, " \t\r"); tok && !st; tok = strtok(NULL, " \t\r")) {
            uint64_t at = UINT64_MAX;
            int64_t j = tg_snp_index_next(&h, tok, &at); /* a repeated .bim ID: its first SNP */
            if (j < 0)
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: SNP %s is not in %s.bim", path,
                                  (long long)r.line_no, tok, bed->prefix);
            else if (!seen[j]) /* a repeated ID counts once */
                seen[j] = 1, out[count++] = j;
        }
    }
    if (!st && !count) st = tg_error_set(err, TG_ERR_FORMAT, "%s: no SNP ID", path);
    tg_lines_close(&r);
    tg_snp_index_free(&h);
    free(seen);
    if (st) {
        free(out);
        return st;
    }
    *set = out;
    *n = count;
    return TG_OK;
}
