/* Harness of the matrix reader (src/io/values.c, tg_values_read: snpmm --matrix): an input is a
 * .fam and a .bim (fuzz.h, tgf_fileset) and the matrix file, read with a row per SNP and with
 * a row per sample. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[PATH_MAX];
    tgf_parts in;
    tg_bed bed;
    tg_error err;
    tgf_split(data, size, 3, &in);
    if (tgf_fileset(&in, 0, 1, &bed)) return 0;
    tgf_put("in.tsv", in.p[2], in.n[2], path);
    for (int by_sample = 0; by_sample < 2; by_sample++) {
        tg_values t;
        tg_status st = tg_values_read(path, &bed, by_sample, &t, &err);
        tgf_check(st, &err);
        if (st) continue;
        if (t.rows != (by_sample ? bed.n_samples : bed.n_snps) || t.k < 1 ||
            t.k > TG_VALUES_MAX_COLS || t.nid < 0 || t.nid > 2)
            abort();
        for (int c = 0; c < t.k; c++)
            if (!t.names[c][0]) abort();
        for (int64_t k = 0; k < t.rows * t.k; k++)
            if (!isfinite(t.v[k])) abort();
        tg_values_free(&t);
    }
    tg_bed_close(&bed);
    return 0;
}
