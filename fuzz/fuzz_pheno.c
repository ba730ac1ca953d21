/* Harness of the phenotype reader (src/io/pheno.c, tg_pheno_read_opts): an input is a .fam and
 * a .bim (the samples: fuzz.h, tgf_fileset), the phenotype file (plain, gzip or zstd) and a
 * column choice: a line "name LIST" (--pheno-name) or "col-nums LIST" (--pheno-col-nums), or
 * nothing (every column). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[PATH_MAX], choice[256];
    tgf_parts in;
    tg_bed bed;
    tg_pheno ph;
    tg_error err;
    tgf_split(data, size, 4, &in);
    if (tgf_fileset(&in, 0, 1, &bed)) return 0;
    tgf_put("in.pheno", in.p[2], in.n[2], path);
    tg_pheno_opts o = tg_pheno_defaults();
    tgf_columns(&in, 3, &o, choice);
    tg_status st = tg_pheno_read_opts(path, bed.samples, bed.n_samples, &o, &ph, &err);
    tgf_check(st, &err);
    if (!st) {
        if (ph.n_samples != bed.n_samples || ph.n_cols < 1 || ph.n_skipped < 0) abort();
        for (int c = 0; c < ph.n_cols; c++)
            if (!ph.names[c][0]) abort();
        for (int64_t k = 0; k < ph.n_samples * ph.n_cols; k++)
            if (isinf(ph.values[k])) abort(); /* infinities are refused */
        tg_pheno_free(&ph);
    }
    tg_bed_close(&bed);
    return 0;
}
