/* Harness of the KRR model folder's reader (src/algo/krr_model.c, tg_krr_model_load: krr
 * --load-model): an input is model.tsv, train.tsv, snps.tsv, pheno.tsv, weights.tsv and
 * factor.bin (fuzz.h). The training fileset they name is fixed, fuzz/model-train.* copied into
 * the folder with a fixed modification time, and "@TRAIN@" in model.tsv stands for its
 * absolute prefix, so that a mutated model is read past the check that its fileset is
 * unchanged. (The factor's tiles are read only with the runtime started: not here.) */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static const char *const model_files[] = {"model.tsv", "train.tsv", "snps.tsv", "pheno.tsv",
                                          "weights.tsv", "factor.bin"};
enum { NFILES = sizeof model_files / sizeof *model_files };

/* fuzz/model-train.{bed,bim,fam} as DIR/train.*, the .bed's time that of the seeds' model.tsv */
static void copy_training_fileset(void) {
    static const char *const ext[] = {"bed", "bim", "fam"};
    for (int e = 0; e < 3; e++) {
        char src[PATH_MAX], dst[PATH_MAX], name[16], buf[1 << 16];
        snprintf(src, sizeof src, "%s/fuzz/model-train.%s", TGF_SRCDIR, ext[e]);
        FILE *f = fopen(src, "rb");
        size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (!f || ferror(f) || !feof(f)) {
            fprintf(stderr, "fuzz: cannot read %s (whole, under 64 KiB)\n", src);
            abort();
        }
        fclose(f);
        snprintf(name, sizeof name, "train.%s", ext[e]);
        tgf_put(name, buf, n, dst);
        const struct timespec t[2] = {{1700000000, 123456789}, {1700000000, 123456789}};
        if (e == 0 && utimensat(AT_FDCWD, dst, t, 0)) abort();
    }
}

/* model.tsv with each "@TRAIN@" replaced by the training fileset's absolute prefix */
static void put_model_tsv(const uint8_t *p, size_t n) {
    static const char mark[] = "@TRAIN@";
    const size_t ml = sizeof mark - 1;
    char prefix[PATH_MAX], path[PATH_MAX];
    const size_t pl = (size_t)snprintf(prefix, sizeof prefix, "%s/train", tgf_dir());
    char *out = malloc(n / ml * pl + n + 1), *o = out;
    if (!out) abort();
    for (size_t i = 0; i < n;)
        if (n - i >= ml && !memcmp(p + i, mark, ml)) {
            memcpy(o, prefix, pl);
            o += pl;
            i += ml;
        } else {
            *o++ = (char)p[i++];
        }
    tgf_put(model_files[0], out, (size_t)(o - out), path);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    char path[PATH_MAX];
    tgf_parts in;
    tg_krr_model *m;
    tg_error err;
    if (!ready) copy_training_fileset(), ready = 1;
    tgf_split(data, size, NFILES, &in);
    put_model_tsv(in.p[0], in.n[0]);
    for (int k = 1; k < NFILES; k++) tgf_put(model_files[k], in.p[k], in.n[k], path);
    tg_status st = tg_krr_model_load(tgf_dir(), &m, &err);
    tgf_check(st, &err);
    if (st) return 0;
    const tg_krr_model_info *info = tg_krr_model_describe(m);
    double *w = malloc((size_t)(info->n * info->k) * sizeof *w);
    if (!w || info->n < 2 || info->k < 1) abort();
    for (int64_t i = 0; i < info->n; i++)
        if (info->rows[i] < 0 || info->rows[i] >= info->bed->n_samples) abort();
    st = tg_krr_model_weights(m, 0, 0, w, info->n, &err);
    tgf_check(st, &err);
    free(w);
    tg_krr_model_free(m);
    return 0;
}
