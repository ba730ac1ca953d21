/* tg_snp_set_read: a file of SNP IDs (whitespace-separated, any number a line, plain or
 * compressed: src/io/lines.c) as indices into a fileset's .bim, through a hash table of the
 * .bim's IDs (open addressing, FNV-1a). */
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "io/lines.h"

tg_status tg_snp_set_read(const char *path, const tg_bed *bed, int64_t **set, int64_t *n,
                          tg_error *err) {
    const int64_t m = bed->n_snps;
    int64_t size = 16, count = 0;
    while (size < 2 * m) size *= 2;
    int64_t *slot = malloc((size_t)size * sizeof *slot), *out = NULL;
    int8_t *seen = calloc((size_t)(m ? m : 1), 1);
    tg_lines r = {0};
    tg_status st = slot && seen ? tg_lines_open(&r, path, err)
                                : tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory for the "
                                               ".bim's IDs", path);
    if (st) {
        tg_lines_close(&r);
        free(slot);
        free(seen);
        return st;
    }
    memset(slot, 0xff, (size_t)size * sizeof *slot);
    for (int64_t j = 0; j < m; j++) { /* a repeated .bim ID keeps its first SNP */
        const char *id = bed->snps[j].id;
        int64_t h = (int64_t)(tg_fnv1a(TG_FNV1A_INIT, id, strlen(id)) & (uint64_t)(size - 1));
        while (slot[h] >= 0 && strcmp(bed->snps[slot[h]].id, id)) h = (h + 1) & (size - 1);
        if (slot[h] < 0) slot[h] = j;
    }
    if (!(out = malloc((size_t)(m ? m : 1) * sizeof *out)))
        st = tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory for the set", path);
    char *line;
    while (!st && !(st = tg_lines_next(&r, &line, err)) && line) {
        for (char *tok = strtok(line, " \t\r"); tok && !st; tok = strtok(NULL, " \t\r")) {
            int64_t h = (int64_t)(tg_fnv1a(TG_FNV1A_INIT, tok, strlen(tok)) & (uint64_t)(size - 1));
            while (slot[h] >= 0 && strcmp(bed->snps[slot[h]].id, tok)) h = (h + 1) & (size - 1);
            if (slot[h] < 0)
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: SNP %s is not in %s.bim", path,
                                  (long long)r.line_no, tok, bed->prefix);
            else if (!seen[slot[h]]) /* a repeated ID counts once */
                seen[slot[h]] = 1, out[count++] = slot[h];
        }
    }
    if (!st && !count) st = tg_error_set(err, TG_ERR_FORMAT, "%s: no SNP ID", path);
    tg_lines_close(&r);
    free(slot);
    free(seen);
    if (st) {
        free(out);
        return st;
    }
    *set = out;
    *n = count;
    return TG_OK;
}
