/* Harness of the covariate reader (src/io/pheno.c with categorical columns) and the design built
 * from it (src/algo/covar.c): an input is a .fam and a .bim (fuzz.h, tgf_fileset), a covariate
 * file, a second one (a test cohort's, given the first's design by tg_covar_apply, as krr and
 * rr read --test-covar) and a column choice as in fuzz_pheno.c. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* A design's shape: its columns named, its values finite or NAN rows. */
static void check_design(const tg_covar *cv, int64_t n) {
    if (cv->n_samples != n || cv->n_cols < 0 || cv->n_missing < 0 || cv->n_missing > n) abort();
    for (int c = 0; c < cv->n_cols; c++)
        if (!cv->names[c][0]) abort();
    for (int64_t k = 0; k < n * cv->n_cols; k++)
        if (isinf(cv->values[k])) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[PATH_MAX], path2[PATH_MAX], choice[256];
    tgf_parts in;
    tg_bed bed;
    tg_pheno ph = {0}, ph2 = {0};
    tg_covar cv = {0}, cv2 = {0};
    tg_error err;
    tgf_split(data, size, 5, &in);
    if (tgf_fileset(&in, 0, 1, &bed)) return 0;
    tgf_put("in.covar", in.p[2], in.n[2], path);
    tgf_put("test.covar", in.p[3], in.n[3], path2);
    tg_pheno_opts o = tg_pheno_defaults();
    tgf_columns(&in, 4, &o, choice);
    o.categorical = 1;
    tg_status st = tg_pheno_read_opts(path, bed.samples, bed.n_samples, &o, &ph, &err);
    tgf_check(st, &err);
    if (!st) {
        st = tg_covar_make(&ph, path, &cv, &err);
        tgf_check(st, &err);
    }
    if (!st) {
        check_design(&cv, bed.n_samples);
        st = tg_pheno_read_opts(path2, bed.samples, bed.n_samples, &o, &ph2, &err);
        tgf_check(st, &err);
    }
    if (!st) {
        st = tg_covar_apply(&cv, &ph2, path2, &cv2, &err);
        tgf_check(st, &err);
        if (!st && (check_design(&cv2, bed.n_samples), cv2.n_cols != cv.n_cols)) abort();
    }
    tg_covar_free(&cv2);
    tg_covar_free(&cv);
    tg_pheno_free(&ph2);
    tg_pheno_free(&ph);
    tg_bed_close(&bed);
    return 0;
}
