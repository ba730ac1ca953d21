/* Harness of the KRR model folder's reader (src/algo/krr_model.c, tg_krr_model_load: krr
 * --load-model): an input is model.tsv, train.tsv, snps.tsv, pheno.tsv, weights.tsv and
 * factor.bin (fuzz.h). The training fileset they name is fixed, fuzz/model-train.* copied into
 * the folder with a fixed modification time, and "@TRAIN@" in model.tsv stands for its
 * absolute prefix, so that a mutated model is read past the check that its fileset is
 * unchanged. The checksums in model.tsv (each file's, the training .bim's and .fam's, and
 * model.tsv's own on its last line) are written again for the bytes given, so that a mutation
 * reaches the parsers behind them rather than only the checksum's refusal. (The factor's tiles
 * are read only with the runtime started: not here.) */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/hash.h"
#include "fuzz.h"

static const char *const model_files[] = {"model.tsv", "train.tsv", "snps.tsv", "pheno.tsv",
                                          "weights.tsv", "factor.bin"};
enum { NFILES = sizeof model_files / sizeof *model_files };

static uint64_t xxh64(const void *p, size_t n) {
    tg_xxh64 h;
    tg_xxh64_init(&h);
    tg_xxh64_add(&h, p, n);
    return tg_xxh64_value(&h);
}

static uint64_t train_hash[3]; /* of model-train.bed, .bim, .fam */

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
        train_hash[e] = xxh64(buf, n);
        snprintf(name, sizeof name, "train.%s", ext[e]);
        tgf_put(name, buf, n, dst);
        const struct timespec t[2] = {{1700000000, 123456789}, {1700000000, 123456789}};
        if (e == 0 && utimensat(AT_FDCWD, dst, t, 0)) abort();
    }
}

/* model.tsv with each "@TRAIN@" replaced by the training fileset's absolute prefix and each
 * checksum line's value by the checksum of what it names (@p sum: the other files' XXH64) */
static void put_model_tsv(const uint8_t *p, size_t n, const uint64_t *sum) {
    static const char mark[] = "@TRAIN@";
    static const char *const keys[] = {"train_bim_xxh64\t", "train_fam_xxh64\t", "train_xxh64\t",
                                       "snps_xxh64\t", "pheno_xxh64\t", "weights_xxh64\t",
                                       "factor_xxh64\t"};
    const uint64_t values[] = {train_hash[1], train_hash[2], sum[1], sum[2], sum[3], sum[4],
                               sum[5]};
    const size_t ml = sizeof mark - 1;
    char prefix[PATH_MAX], path[PATH_MAX];
    const size_t pl = (size_t)snprintf(prefix, sizeof prefix, "%s/train", tgf_dir());
    /* room for every mark replaced and every line given a 16-digit value and its key */
    char *out = malloc(n / ml * pl + 2 * n + 64), *o = out;
    if (!out) abort();
    for (size_t i = 0; i < n;) {
        size_t k = 0, kl = 0;
        while (k < sizeof keys / sizeof *keys &&
               (n - i < (kl = strlen(keys[k])) || memcmp(p + i, keys[k], kl)))
            k++;
        if (k < sizeof keys / sizeof *keys) { /* the key, then the checksum, then the next line */
            memcpy(o, p + i, kl);
            o += kl;
            o += sprintf(o, "%016llx", (unsigned long long)values[k]);
            while (i < n && p[i] != '\n') i++;
            continue;
        }
        if (n - i >= 12 && !memcmp(p + i, "model_xxh64\t", 12)) { /* of every byte before it */
            const uint64_t h = xxh64(out, (size_t)(o - out));
            o += sprintf(o, "model_xxh64\t%016llx", (unsigned long long)h);
            while (i < n && p[i] != '\n') i++;
            continue;
        }
        while (i < n && p[i] != '\n') {
            if (n - i >= ml && !memcmp(p + i, mark, ml)) {
                memcpy(o, prefix, pl);
                o += pl;
                i += ml;
            } else {
                *o++ = (char)p[i++];
            }
        }
        if (i < n) *o++ = (char)p[i++]; /* the newline */
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
    uint64_t sum[NFILES];
    for (int k = 1; k < NFILES; k++) sum[k] = xxh64(in.p[k], in.n[k]);
    put_model_tsv(in.p[0], in.n[0], sum);
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
