/* The KRR model's folder (krr --save-model, --load-model): the files and their format, written
 * after a fit and read back, checked line by line, before a prediction or a solve with the
 * saved factor (which is read only then, with the runtime started). See include/tilegwas.h,
 * and docs/USER-GUIDE.md for the format. */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "algo/krr.h"
#include "base/hash.h"
#include "io/idmap.h"
#include "io/out.h"

/* The model's files, written in this order into a fresh folder beside DIR that then takes
 * DIR's place in one rename (tg_krr_model_save): a model folder is whole or absent. */
enum { F_FACTOR, F_TRAIN, F_SNPS, F_PHENO, F_WEIGHTS, F_MODEL, NFILES };
static const char *const model_files[NFILES] = {"factor.bin", "train.tsv", "snps.tsv",
                                                "pheno.tsv", "weights.tsv", "model.tsv"};

/* model.tsv: one line per key, in this order, after the header "key\tvalue"; model_xxh64 (the
 * checksum of every byte before its line) is the last line. */
enum {
    K_VERSION, K_KERNEL, K_GAMMA, K_ALPHA, K_TILE, K_DIAG, K_NTRAIN, K_NSNPS, K_NPHENO, K_BFILE,
    K_ABS, K_BED_SIZE, K_BED_MTIME, K_BIM_HASH, K_FAM_HASH, K_SUM, /* then one per file */
    K_SUM_MODEL = K_SUM + F_MODEL, NKEYS
};
static const char *const model_keys[NKEYS] = {
    "tilegwas_krr_model", "kernel", "gamma", "alpha", "tile", "diag", "n_train", "n_snps",
    "n_pheno", "train_bfile", "train_bfile_abs", "train_bed_size", "train_bed_mtime",
    "train_bim_xxh64", "train_fam_xxh64", "factor_xxh64", "train_xxh64", "snps_xxh64",
    "pheno_xxh64", "weights_xxh64", "model_xxh64"};
/* what a valid value is, for messages */
static const char *const model_values[NKEYS] = {
    "2 (the format version this tilegwas reads)", "gaussian, ibs or linear",
    "a positive number (NA for the ibs and linear kernels)", "a number >= 0",
    "an integer in [1, 65536]", "fp32 or fp64", "an integer >= 2", "an integer >= 1",
    "an integer in [1, n_train]", "a path", "an absolute path", "an integer >= 0",
    "SECONDS.NANOSECONDS"};
enum { MODEL_VERSION = 2 };
#define HASH_VALUE "16 hexadecimal digits"
/* snps.tsv's columns: the SNP key (TG_SNP_KEY_HEADER), then A1_FREQ in full, a parameter of the
 * model (no N: the model keeps the frequencies, not the calls) */
enum { SNP_COLS = 7 };

/* factor.bin: the magic, n, nb, nt (int64), then per lower tile, by columns (j, then i ≥ j):
 * precision (int64, a tg_prec), scale (double), byte count (int64); then the tiles' bytes in
 * that order, each column-major without padding, in the machine's byte order. */
static const char factor_magic[8] = "TGKRRL1"; /* and its NUL */
enum { FACTOR_HEAD = 8 + 3 * 8, FACTOR_ENTRY = 3 * 8 };

static tg_status model_path(const char *dir, int file, char *buf, tg_error *err) {
    if (snprintf(buf, PATH_MAX, "%s/%s", dir, model_files[file]) >= PATH_MAX)
        return tg_error_set(err, TG_ERR_ARG, "model folder %s: path too long", dir);
    return TG_OK;
}

/* A checksum that differs from the one model.tsv recorded: the file is refused. */
static tg_status sum_mismatch(const char *path, int file, uint64_t got, uint64_t want,
                              tg_error *err) {
    return tg_error_set(err, TG_ERR_FORMAT, "%s: checksum %016llx, but model.tsv recorded %s "
                        "%016llx: the file is damaged or was changed after the save", path,
                        (unsigned long long)got, model_keys[K_SUM + file],
                        (unsigned long long)want);
}

/* What tells whether a training fileset changed, cheaply: the .bed's size and modification
 * time (hashing it would cost a pass over the genotypes) and hashes of the .bim and the .fam
 * (whose order is the .bed's: reordered samples would take other samples' genotypes). */
typedef struct {
    int64_t bed_size, mtime_s, mtime_ns;
    uint64_t bim_hash, fam_hash;
} fileset_id;

static tg_status fileset_identify(const char *prefix, fileset_id *id, tg_error *err) {
    char path[PATH_MAX];
    struct stat sb;
    if (snprintf(path, sizeof path, "%s.bed", prefix) >= (int)sizeof path)
        return tg_error_set(err, TG_ERR_ARG, "%s: path too long", prefix);
    if (stat(path, &sb))
        return tg_error_set(err, TG_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    *id = (fileset_id){.bed_size = sb.st_size, .mtime_s = sb.st_mtim.tv_sec,
                       .mtime_ns = sb.st_mtim.tv_nsec};
    int64_t bytes;
    snprintf(path, sizeof path, "%s.bim", prefix);
    tg_status st = tg_file_hash(path, &bytes, &id->bim_hash, err);
    snprintf(path, sizeof path, "%s.fam", prefix);
    return st ? st : tg_file_hash(path, &bytes, &id->fam_hash, err);
}

/* PREFIX with its folder made absolute (realpath), into @p abs (PATH_MAX bytes); the files
 * themselves may be links, which are kept. */
static tg_status absolute_prefix(const char *prefix, char *abs, tg_error *err) {
    char *d = tg_strdup(prefix, err), *b = tg_strdup(prefix, err), real[PATH_MAX];
    tg_status st = TG_OK;
    if (!d || !b)
        st = TG_ERR_NOMEM;
    else if (!realpath(dirname(d), real))
        st = tg_error_set(err, TG_ERR_IO, "%s: cannot resolve its folder: %s", prefix,
                          strerror(errno));
    else if (snprintf(abs, PATH_MAX, "%s/%s", strcmp(real, "/") ? real : "", basename(b)) >=
             PATH_MAX)
        st = tg_error_set(err, TG_ERR_ARG, "%s: path too long", prefix);
    free(d);
    free(b);
    return st;
}

/* DIR split into its parent folder and its name (trailing slashes dropped), PATH_MAX each. */
static tg_status split_dir(const char *dir, char *parent, char *name, tg_error *err) {
    char copy[PATH_MAX];
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    if (len >= sizeof copy)
        return tg_error_set(err, TG_ERR_ARG, "--save-model %s: path too long", dir);
    memcpy(copy, dir, len);
    copy[len] = '\0';
    snprintf(name, PATH_MAX, "%s", basename(copy));
    snprintf(parent, PATH_MAX, "%s", dirname(copy));
    if (!strcmp(name, "/") || !strcmp(name, ".") || !strcmp(name, ".."))
        return tg_error_set(err, TG_ERR_ARG, "--save-model %s: name a folder for the model "
                            "(e.g. %s/model)", dir, dir);
    return TG_OK;
}

/* Whether folder @p dir holds a model's files and nothing else (1), nothing (0), or anything
 * else (-1, and @p other its first other entry). */
static int model_folder(const char *dir, char *other, size_t size) {
    DIR *dp = opendir(dir);
    int files = 0, bad = 0;
    for (struct dirent *e; dp && !bad && (e = readdir(dp));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int fi = 0;
        while (fi < NFILES && strcmp(e->d_name, model_files[fi])) fi++;
        if (fi == NFILES) bad = 1, snprintf(other, size, "%s", e->d_name);
        files++;
    }
    if (dp) closedir(dp);
    return bad || !dp ? -1 : files > 0;
}

tg_status tg_krr_model_check_dir(const char *dir, tg_error *err) {
    char parent[PATH_MAX], name[PATH_MAX], other[256] = "";
    struct stat sb;
    tg_status st = split_dir(dir, parent, name, err);
    if (st) return st;
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return tg_error_set(err, TG_ERR_ARG, "--save-model %s: not a folder", dir);
    if (stat(dir, &sb) == 0 && model_folder(dir, other, sizeof other) < 0)
        return tg_error_set(err, TG_ERR_ARG, "--save-model %s: the folder holds '%s', which is "
                            "no file of a tilegwas model: refusing to replace it", dir,
                            TG_ESC(other));
    if (stat(dir, &sb) && errno != ENOENT)
        return tg_error_set(err, TG_ERR_IO, "--save-model %s: %s", dir, strerror(errno));
    /* the model is written beside DIR, then renamed into its place */
    if (access(parent, W_OK | X_OK))
        return tg_error_set(err, TG_ERR_IO, "--save-model %s: folder %s is not writable: %s",
                            dir, parent, strerror(errno));
    return TG_OK;
}

/* Bytes written to a model file and hashed on the way. */
typedef struct {
    FILE *f;
    tg_xxh64 h;
    int ok;
} hashed_out;

static void put(hashed_out *o, const void *p, size_t n) {
    tg_xxh64_add(&o->h, p, n);
    o->ok = o->ok && fwrite(p, 1, n, o->f) == n;
}

/* The factor: header, tile table, tiles (see factor_magic); @p bytes receives the tiles'. */
static tg_status write_factor(const tg_krr_model *m, hashed_out *o, int64_t *bytes,
                              tg_error *err) {
    const tg_matrix *L = m->L;
    const int nb = m->info.nb;
    int64_t n, head[3];
    int nt;
    tg_matrix_size(L, &n, NULL, &nt, NULL);
    head[0] = n, head[1] = nb, head[2] = nt;
    void *buf = tg_malloc_n(nb, nb, sizeof(double), err);
    tg_status st = buf ? TG_OK : TG_ERR_NOMEM;
    put(o, factor_magic, sizeof factor_magic);
    put(o, head, sizeof head);
    *bytes = 0;
    for (int j = 0; j < nt && o->ok; j++)
        for (int i = j; i < nt && o->ok; i++) {
            int rows, cols;
            tg_matrix_tile_dims(L, i, j, &rows, &cols);
            int64_t prec = tg_matrix_tile_prec(L, i, j),
                    size = (int64_t)rows * cols * (int64_t)tg_prec_size((tg_prec)prec);
            double scale = tg_matrix_tile_scale(L, i, j);
            put(o, &prec, sizeof prec);
            put(o, &scale, sizeof scale);
            put(o, &size, sizeof size);
            *bytes += size;
        }
    for (int j = 0; j < nt && o->ok && !st; j++)
        for (int i = j; i < nt && o->ok && !st; i++) {
            int rows, cols;
            tg_matrix_tile_dims(L, i, j, &rows, &cols);
            size_t size = (size_t)rows * cols * tg_prec_size(tg_matrix_tile_prec(L, i, j));
            if (!(st = tg_matrix_tile_read(L, i, j, buf, err))) put(o, buf, size);
        }
    free(buf);
    return st;
}

static void write_model_tsv(const tg_krr_model *m, const char *abs, const fileset_id *id,
                            const uint64_t *sum, FILE *f) {
    const tg_krr_model_info *i = &m->info;
    char g[32] = "NA", a[32];
    if (i->kernel == TG_KERNEL_GAUSSIAN) tg_text_format_double(m->gamma[0], g);
    tg_text_format_double(m->alpha[0], a);
    const char *const *k = model_keys;
    fprintf(f, "key\tvalue\n%s\t%d\n%s\t%s\n%s\t%s\n%s\t%s\n", k[K_VERSION], MODEL_VERSION,
            k[K_KERNEL], tg_kernel_name(i->kernel), k[K_GAMMA], g, k[K_ALPHA], a);
    fprintf(f, "%s\t%lld\n%s\t%s\n%s\t%lld\n%s\t%lld\n%s\t%d\n", k[K_TILE], (long long)i->nb,
            k[K_DIAG], tg_prec_name(m->ldiag), k[K_NTRAIN], (long long)i->n, k[K_NSNPS],
            (long long)i->bed->n_snps, k[K_NPHENO], i->k);
    fprintf(f, "%s\t%s\n%s\t%s\n%s\t%lld\n%s\t%lld.%09lld\n%s\t%016llx\n%s\t%016llx\n",
            k[K_BFILE], m->bfile, k[K_ABS], abs, k[K_BED_SIZE], (long long)id->bed_size,
            k[K_BED_MTIME], (long long)id->mtime_s, (long long)id->mtime_ns, k[K_BIM_HASH],
            (unsigned long long)id->bim_hash, k[K_FAM_HASH], (unsigned long long)id->fam_hash);
    for (int fi = 0; fi < F_MODEL; fi++)
        fprintf(f, "%s\t%016llx\n", k[K_SUM + fi], (unsigned long long)sum[fi]);
}

/* The text files: train.tsv, snps.tsv, pheno.tsv, weights.tsv (numbers that read back
 * exactly), and model.tsv but for its checksum line. */
static void write_model_text(int file, const tg_krr_model *m, FILE *f) {
    char num[32];
    const tg_krr_model_info *i = &m->info;
    const tg_sample *samples = i->bed->samples;
    const int64_t nr = i->n, *train = m->rows;
    switch (file) {
    case F_TRAIN:
        fputs("FID\tIID\n", f);
        for (int64_t r = 0; r < nr; r++)
            fprintf(f, "%s\t%s\n", samples[train[r]].fid, samples[train[r]].iid);
        break;
    case F_SNPS: {
        const double *freq = tg_krr_model_freq(m);
        fputs(TG_SNP_KEY_HEADER "\tA1_FREQ\n", f);
        for (int64_t j = 0; j < i->bed->n_snps; j++) {
            if (isnan(freq[j])) strcpy(num, "NA");
            else tg_text_format_double(freq[j], num);
            tg_snp_key_write(f, &i->bed->snps[j]);
            fprintf(f, "\t%s\n", num);
        }
        break;
    }
    case F_PHENO:
        fputs("pheno\tmean\n", f);
        for (int c = 0; c < i->k; c++) {
            tg_text_format_double(m->mean[c], num);
            fprintf(f, "%s\t%s\n", m->names[c], num);
        }
        break;
    default: /* F_WEIGHTS */
        fputs("FID\tIID", f);
        for (int c = 0; c < i->k; c++) fprintf(f, "\t%s", m->names[c]);
        fputc('\n', f);
        for (int64_t r = 0; r < nr; r++) {
            fprintf(f, "%s\t%s", samples[train[r]].fid, samples[train[r]].iid);
            for (int c = 0; c < i->k; c++) {
                tg_text_format_double(m->w[r + c * nr], num);
                fprintf(f, "\t%s", num);
            }
            fputc('\n', f);
        }
    }
}

/* Removes folder @p dir holding a model's files (and nothing else, as model_folder checked). */
static void remove_model_folder(const char *dir) {
    char path[PATH_MAX];
    for (int fi = 0; fi < NFILES; fi++)
        if (!model_path(dir, fi, path, NULL)) unlink(path);
    rmdir(dir);
}

/* The written folder @p tmp into @p dir's place: a rename when DIR is missing (or empty), else
 * an exchange of the two (renameat2), so that a reader of DIR finds the old model or the new,
 * whole, at every instant; the old one, now at @p tmp, is removed. Two saves racing into one DIR
 * each exchange a whole model in: the last one stays. */
static tg_status move_into_place(const char *tmp, const char *dir, const char *parent,
                                 const char *name, tg_error *err) {
    char other[256] = "", old[PATH_MAX];
    if (rename(tmp, dir) == 0) return TG_OK;
    if (errno != ENOTEMPTY && errno != EEXIST)
        return tg_error_set(err, TG_ERR_IO, "--save-model %s: cannot rename %s to it: %s", dir,
                            tmp, strerror(errno));
    if (model_folder(dir, other, sizeof other) < 0) /* taken by other files since the check */
        return tg_error_set(err, TG_ERR_ARG, "--save-model %s: the folder holds '%s', which is "
                            "no file of a tilegwas model: refusing to replace it", dir,
                            TG_ESC(other));
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
        remove_model_folder(tmp);
        return TG_OK;
    }
    if (errno != EINVAL && errno != ENOSYS)
        return tg_error_set(err, TG_ERR_IO, "--save-model %s: cannot exchange it with %s: %s",
                            dir, tmp, strerror(errno));
    /* a file system without the exchange (NFS): the old model moved aside first; a reader in
     * between finds no model, never a mixed one */
    if (snprintf(old, PATH_MAX, "%s/.%s.old-XXXXXX", parent, name) >= PATH_MAX || !mkdtemp(old))
        return tg_error_set(err, TG_ERR_IO, "--save-model %s: cannot create a folder beside it: "
                            "%s", dir, strerror(errno));
    if (rename(dir, old) || rename(tmp, dir)) {
        tg_status st = tg_error_set(err, TG_ERR_IO, "--save-model %s: cannot rename %s to it: "
                                    "%s", dir, tmp, strerror(errno));
        rename(old, dir); /* the old model back when the new one could not take its place */
        rmdir(old);
        return st;
    }
    remove_model_folder(old);
    return TG_OK;
}

tg_status tg_krr_model_save(const tg_krr_model *m, const char *dir, int64_t *factor_bytes,
                            tg_error *err) {
    char abs[PATH_MAX], path[PATH_MAX], parent[PATH_MAX], name[PATH_MAX], tmp[PATH_MAX];
    uint64_t sum[NFILES];
    fileset_id id;
    int64_t bytes = 0;
    int made = 0;
    if (!m->L || m->info.ngamma * m->info.nalpha != 1)
        return tg_error_set(err, TG_ERR_ARG, "KRR model save: the model has no factor (fit one "
                            "gamma and one alpha with keep_factor, or solve a loaded model)");
    tg_status st = split_dir(dir, parent, name, err);
    if (!st) st = absolute_prefix(m->info.bed->prefix, abs, err);
    if (!st) st = fileset_identify(abs, &id, err);
    if (!st && (strpbrk(m->bfile, "\t\n\r") || strpbrk(abs, "\t\n\r")))
        st = tg_error_set(err, TG_ERR_ARG, "--save-model: the training fileset's path %s has a "
                          "tab or a line break, which model.tsv cannot hold", abs);
    if (!st && snprintf(tmp, sizeof tmp, "%s/.%s.tmp-XXXXXX", parent, name) >= (int)sizeof tmp)
        st = tg_error_set(err, TG_ERR_ARG, "--save-model %s: path too long", dir);
    if (!st && !(made = mkdtemp(tmp) != NULL))
        st = tg_error_set(err, TG_ERR_IO, "--save-model %s: cannot create a folder beside it "
                          "(%s): %s", dir, tmp, strerror(errno));
    if (!st) { /* mkdtemp's 0700 would hide the model from the group: mkdir's mode instead */
        mode_t mask = umask(0);
        umask(mask);
        chmod(tmp, 0777 & ~mask);
    }
    for (int fi = 0; fi < NFILES && !st; fi++) {
        hashed_out o = {.ok = 1};
        char *text = NULL;
        size_t len = 0;
        FILE *mem = NULL;
        tg_xxh64_init(&o.h);
        if ((st = model_path(tmp, fi, path, err))) break;
        if (!(o.f = fopen(path, "wb"))) {
            st = tg_error_set(err, TG_ERR_IO, "--save-model %s: cannot create %s: %s", dir,
                              model_files[fi], strerror(errno));
            break;
        }
        if (fi == F_FACTOR) {
            st = write_factor(m, &o, &bytes, err);
        } else if (!(mem = open_memstream(&text, &len))) { /* the text, hashed, then written */
            st = tg_error_set(err, TG_ERR_NOMEM, "out of memory writing %s", model_files[fi]);
        } else {
            if (fi == F_MODEL) write_model_tsv(m, abs, &id, sum, mem);
            else write_model_text(fi, m, mem);
            if (fclose(mem)) {
                st = tg_error_set(err, TG_ERR_NOMEM, "out of memory writing %s", model_files[fi]);
            } else {
                put(&o, text, len);
                if (fi == F_MODEL) /* its own checksum, of every byte before it */
                    fprintf(o.f, "%s\t%016llx\n", model_keys[K_SUM_MODEL],
                            (unsigned long long)tg_xxh64_value(&o.h));
            }
            free(text);
        }
        sum[fi] = tg_xxh64_value(&o.h);
        if ((fclose(o.f) || !o.ok) && !st) /* a full disk: the model's name, the file's name */
            st = tg_error_set(err, TG_ERR_IO, "--save-model %s: error writing %s: %s", dir,
                              model_files[fi], strerror(errno));
    }
    if (!st) st = move_into_place(tmp, dir, parent, name, err);
    if (st && made) remove_model_folder(tmp); /* nothing half written left */
    if (!st && factor_bytes) *factor_bytes = bytes;
    return st;
}

/* The next line of a model file split into exactly @p nf fields (tokens). */
static tg_status model_line(tg_text *t, char **f, int nf, tg_error *err) {
    char *line = tg_text_next_line(t);
    if (!line)
        return tg_error_set(err, TG_ERR_FORMAT, "%s ends after line %lld: more lines expected",
                            t->path, (long long)t->line_no);
    int k = tg_text_split(line, f, nf);
    if (k != nf)
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: %d fields, expected %d", t->path,
                            (long long)t->line_no, k, nf);
    return TG_OK;
}

/* The header line of a model file: exactly the fields @p want. */
static tg_status model_header(tg_text *t, char **f, const char *const *want, int nf,
                              tg_error *err) {
    tg_status st = model_line(t, f, nf, err);
    for (int c = 0; c < nf && !st; c++)
        if (strcmp(f[c], want[c]))
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: column %d of the header is "
                              "'%s', expected '%s'", t->path, (long long)t->line_no, c + 1,
                              TG_ESC(f[c]), TG_ESC(want[c]));
    return st;
}

/* No line after the last expected one. */
static tg_status model_end(tg_text *t, tg_error *err) {
    if (tg_text_next_line(t))
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: more lines than the model has",
                            t->path, (long long)t->line_no);
    return TG_OK;
}

/* model.tsv into the model's options (they are the fit's), m->info.n, m->info.k, m->bfile, the
 * training fileset's absolute prefix @p abs, SNP count and identity, and the files' checksums
 * @p sum; its own checksum checked. */
static tg_status read_model_tsv(const char *path, tg_krr_model *m, char *abs, int64_t *nsnps,
                                fileset_id *id, uint64_t *sum, tg_error *err) {
    tg_text t;
    const char *val[NKEYS] = {0};
    long long at[NKEYS] = {0};
    tg_status st = tg_text_read(&t, path, err);
    if (st) return st;
    /* the checksum line is the last: its checksum is of every byte before it */
    const char *last = t.end;
    while (last > t.text && (last[-1] == '\n' || last[-1] == '\r')) last--;
    while (last > t.text && last[-1] != '\n') last--;
    tg_xxh64 h;
    tg_xxh64_init(&h);
    tg_xxh64_add(&h, t.text, (size_t)(last - t.text));
    const uint64_t own = tg_xxh64_value(&h);
    int header = 1;
    for (char *line; !st && (line = tg_text_next_line(&t));) {
        size_t len = strlen(line);
        while (len && line[len - 1] == '\r') line[--len] = '\0'; /* CRLF */
        char *tab = strchr(line, '\t');
        int k = 0;
        if (header) {
            if (strcmp(line, "key\tvalue"))
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: expected the header "
                                  "'key<tab>value'", path, (long long)t.line_no);
            header = 0;
            continue;
        }
        if (tab) *tab = '\0';
        while (tab && k < NKEYS && strcmp(line, model_keys[k])) k++;
        if (!tab || k == NKEYS || val[k])
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: %s '%s'", path,
                              (long long)t.line_no, !tab ? "expected KEY<tab>VALUE, found"
                              : k == NKEYS ? "unknown key" : "second line of key",
                              TG_ESC(line));
        else
            val[k] = tab + 1, at[k] = (long long)t.line_no;
    }
    /* the format version first: an older model has other keys */
    int64_t version = 0;
    if (!st && val[K_VERSION] &&
        (!tg_text_parse_int64(val[K_VERSION], &version) || version != MODEL_VERSION))
        st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: model format %s, but this tilegwas "
                          "reads format %d%s", path, at[K_VERSION],
                          TG_ESC(val[K_VERSION]), MODEL_VERSION,
                          version == 1 ? " (format 1 has no checksums and no SNP positions: save "
                                         "the model again)"
                                       : "");
    for (int k = 0; k < NKEYS && !st; k++)
        if (!val[k]) st = tg_error_set(err, TG_ERR_FORMAT, "%s: no %s line", path, model_keys[k]);
    if (!st && val[K_SUM_MODEL] - strlen(model_keys[K_SUM_MODEL]) - 1 != last)
        st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: %s must be the last line", path,
                          at[K_SUM_MODEL], model_keys[K_SUM_MODEL]);
    if (!st && (!(m->gamma = tg_calloc(1, sizeof *m->gamma, err)) ||
                !(m->alpha = tg_calloc(1, sizeof *m->alpha, err)) ||
                !(m->bfile = tg_strdup(val[K_BFILE], err))))
        st = TG_ERR_NOMEM;
    m->info.ngamma = m->info.nalpha = 1;
    for (int k = 0; k < NKEYS && !st; k++) {
        const char *v = val[k];
        int64_t x = 0;
        int good = 1;
        switch (k) {
        case K_VERSION: break; /* checked above */
        case K_KERNEL: good = !tg_kernel_parse(v, &m->info.kernel, NULL); break;
        case K_GAMMA:
            good = m->info.kernel == TG_KERNEL_GAUSSIAN
                       ? tg_text_parse_double(v, &m->gamma[0]) && m->gamma[0] > 0
                       : !strcmp(v, "NA");
            break;
        case K_ALPHA: good = tg_text_parse_double(v, &m->alpha[0]) && m->alpha[0] >= 0; break;
        case K_TILE:
            good = tg_text_parse_int64(v, &x) && x >= 1 && x <= 1 << 16;
            m->info.nb = (int)x;
            break;
        case K_DIAG:
            good = !tg_prec_parse(v, &m->info.diag, NULL) &&
                   (m->info.diag == TG_FP64 || m->info.diag == TG_FP32);
            break;
        case K_NTRAIN: good = tg_text_parse_int64(v, &m->info.n) && m->info.n >= 2; break;
        case K_NSNPS: good = tg_text_parse_int64(v, nsnps) && *nsnps >= 1; break;
        case K_NPHENO:
            good = tg_text_parse_int64(v, &x) && x >= 1 && x <= m->info.n && x < INT_MAX / 2;
            m->info.k = (int)x;
            break;
        case K_BFILE: good = *v != '\0'; break;
        case K_ABS:
            good = *v == '/' && snprintf(abs, PATH_MAX, "%s", v) < PATH_MAX;
            break;
        case K_BED_SIZE: good = tg_text_parse_int64(v, &id->bed_size) && id->bed_size >= 0; break;
        case K_BED_MTIME: { /* SECONDS.NANOSECONDS */
            char sec[32], *dot = NULL;
            good = snprintf(sec, sizeof sec, "%s", v) < (int)sizeof sec &&
                   (dot = strchr(sec, '.')) && strlen(dot + 1) == 9;
            if (good) *dot = '\0';
            good = good && tg_text_parse_int64(sec, &id->mtime_s) &&
                   tg_text_parse_int64(dot + 1, &id->mtime_ns) && id->mtime_ns >= 0;
            break;
        }
        default: { /* a hash */
            char *end = NULL;
            uint64_t x64 = strtoull(v, &end, 16);
            good = strlen(v) == 16 && strspn(v, "0123456789abcdef") == 16 && *end == '\0';
            if (k == K_BIM_HASH) id->bim_hash = x64;
            else if (k == K_FAM_HASH) id->fam_hash = x64;
            else sum[k - K_SUM] = x64;
        }
        }
        if (!good)
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: %s '%s' is not %s", path,
                              at[k], model_keys[k], TG_ESC(v),
                              k < K_BIM_HASH ? model_values[k] : HASH_VALUE);
    }
    if (!st && own != sum[F_MODEL]) st = sum_mismatch(path, F_MODEL, own, sum[F_MODEL], err);
    tg_text_free(&t);
    return st;
}

/* One of train.tsv (into m->rows: rows of the training .fam), snps.tsv (m->freq; the SNPs
 * must be the training .bim's), pheno.tsv (m->names, m->mean), weights.tsv (m->w; its rows
 * the training samples in order). */
static tg_status read_model_text(int file, const char *path, uint64_t sum, tg_krr_model *m,
                                tg_error *err) {
    static const char *const heads[NFILES][SNP_COLS] = {
        [F_TRAIN] = {"FID", "IID"},
        [F_SNPS] = {"#CHROM", "POS", "ID", "REF", "ALT", "A1", "A1_FREQ"},
        [F_PHENO] = {"pheno", "mean"},
        [F_WEIGHTS] = {"FID", "IID"}};
    const int64_t nr = m->info.n, nlines = file == F_SNPS    ? m->bed.n_snps
                                           : file == F_PHENO ? m->info.k
                                                             : nr;
    const int nf = file == F_SNPS ? SNP_COLS : file == F_WEIGHTS ? 2 + m->info.k : 2;
    tg_text t = {0};
    tg_idmap map = {0};
    const char **want = NULL;
    char **f = NULL;
    /* the whole file against its checksum, and its line count, before any array is sized by
     * model.tsv's counts */
    tg_status st = tg_text_read(&t, path, err);
    if (!st) {
        tg_xxh64 h;
        tg_xxh64_init(&h);
        tg_xxh64_add(&h, t.text, (size_t)(t.end - t.text));
        if (tg_xxh64_value(&h) != sum) st = sum_mismatch(path, file, tg_xxh64_value(&h), sum, err);
    }
    int64_t lines = st ? 0 : tg_text_count_lines(&t);
    if (!st && lines != nlines + 1)
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: %lld lines, but model.tsv describes %lld (a "
                          "header and %lld %s)", path, (long long)lines, (long long)nlines + 1,
                          (long long)nlines, file == F_SNPS ? "SNPs" : file == F_PHENO
                                                                      ? "phenotypes"
                                                                      : "training samples");
    if (st) goto cleanup;
    want = tg_malloc_n(nf, 1, sizeof *want, err);
    f = tg_malloc_n(nf, 1, sizeof *f, err);
    int nomem = !want || !f;
    switch (file) {
    case F_TRAIN:
        nomem |= !(m->rows = tg_malloc_n(nr, 1, sizeof *m->rows, err)) ||
                 tg_idmap_init(&map, m->bed.samples, m->bed.n_samples, err);
        break;
    case F_SNPS: nomem |= !(m->freq = tg_malloc_n(nlines, 1, sizeof *m->freq, err)); break;
    case F_PHENO:
        nomem |= !(m->names = tg_calloc_n(m->info.k, 1, sizeof *m->names, err)) ||
                 !(m->mean = tg_malloc_n(m->info.k, 1, sizeof *m->mean, err));
        break;
    default: nomem |= !(m->w = tg_malloc_n(nr, m->info.k, sizeof *m->w, err));
    }
    st = nomem ? TG_ERR_NOMEM : TG_OK;
    for (int c = 0; c < nf && !st; c++) want[c] = c < 2 || file != F_WEIGHTS ? heads[file][c]
                                                                             : m->names[c - 2];
    int64_t dup, next = 0; /* next: where rows in the .fam's order have the next one */
    if (file == F_TRAIN && !st) /* the .fam's IDs are unique (tg_bed_open) */
        tg_idmap_insert_all(&map, m->bed.n_samples, &dup);
    if (!st) st = model_header(&t, f, want, nf, err);
    for (int64_t i = 0; i < nlines && !st; i++) {
        if ((st = model_line(&t, f, nf, err))) break;
        const long long ln = (long long)t.line_no;
        const tg_sample *s = file == F_WEIGHTS ? &m->bed.samples[m->rows[i]] : NULL;
        const tg_snp *snp = file == F_SNPS ? &m->bed.snps[i] : NULL;
        switch (file) {
        case F_TRAIN:
            m->rows[i] = tg_idmap_find_near(&map, f[0], f[1], next);
            next = m->rows[i] + 1;
            if (m->rows[i] < 0)
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: sample '%s %s' (FID IID) "
                                  "is not in %s.fam", path, ln, TG_ESC(f[0]), TG_ESC(f[1]),
                                  m->bed.prefix);
            break;
        case F_SNPS: {
            char pos[24];
            snprintf(pos, sizeof pos, "%lld", (long long)snp->pos);
            const char *key[SNP_COLS - 1] = {snp->chrom, pos, snp->id, snp->a2, snp->a1, snp->a1};
            for (int c = 0; c < SNP_COLS - 1 && !st; c++)
                if (strcmp(f[c], key[c]))
                    st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: %s '%s', but SNP %lld "
                                      "of %s.bim (%s) has %s %s", path, ln, want[c], TG_ESC(f[c]),
                                      (long long)i + 1, m->bed.prefix, TG_ESC(snp->id), want[c],
                                      TG_ESC(key[c]));
            if (st) break;
            if (!strcmp(f[SNP_COLS - 1], "NA"))
                m->freq[i] = NAN;
            else if (!tg_text_parse_double(f[SNP_COLS - 1], &m->freq[i]) || m->freq[i] < 0 ||
                     m->freq[i] > 1)
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: A1_FREQ '%s' is not NA "
                                  "or a number in [0, 1]", path, ln, TG_ESC(f[SNP_COLS - 1]));
            break;
        }
        case F_PHENO:
            if (!(m->names[i] = tg_strdup(f[0], err)))
                st = TG_ERR_NOMEM;
            else if (!tg_text_parse_double(f[1], &m->mean[i]))
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: mean '%s' is not a number",
                                  path, ln, TG_ESC(f[1]));
            break;
        default: /* F_WEIGHTS */
            if (strcmp(f[0], s->fid) || strcmp(f[1], s->iid))
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: sample '%s %s', but "
                                  "training sample %lld (train.tsv) is '%s %s'", path, ln,
                                  TG_ESC(f[0]), TG_ESC(f[1]), (long long)i + 1, TG_ESC(s->fid),
                                  TG_ESC(s->iid));
            for (int c = 0; c < m->info.k && !st; c++)
                if (!tg_text_parse_double(f[2 + c], &m->w[i + c * nr]))
                    st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: column %d: '%s' is not "
                                      "a number", path, ln, 3 + c, TG_ESC(f[2 + c]));
        }
    }
    if (!st) st = model_end(&t, err);
cleanup:
    tg_text_free(&t);
    tg_idmap_free(&map);
    free(want);
    free(f);
    return st;
}

/* factor.bin's header and tile table against model.tsv, and its size against the table (a
 * truncated file is found here, before any work); keeps the table in m->tprec, m->tscale. Its
 * checksum is checked when the tiles are read (tg_krr_model_read_factor): a prediction does not
 * read the factor. */
static tg_status read_factor_table(const char *path, tg_krr_model *m, tg_error *err) {
    /* n ≤ the training .fam's samples (tg_krr_model_load): nt² cannot overflow */
    const int64_t n = m->info.n, nb = m->info.nb, nt = (n + nb - 1) / nb, ntiles = nt * (nt + 1) / 2;
    char magic[sizeof factor_magic];
    int64_t head[3], want = FACTOR_HEAD + FACTOR_ENTRY * ntiles, t = 0;
    struct stat sb;
    tg_status st = TG_OK;
    FILE *f = fopen(path, "rb");
    if (!f) {
        st = tg_error_set(err, TG_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        goto cleanup;
    }
    /* the table's size, from model.tsv, against the file's before it is allocated */
    if (fstat(fileno(f), &sb) || sb.st_size < want) {
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: %lld bytes, fewer than the header and tile "
                          "table of %lld tiles (%lld bytes) that model.tsv describes (truncated or "
                          "damaged)", path, (long long)sb.st_size, (long long)ntiles,
                          (long long)want);
        goto cleanup;
    }
    if (!(m->tprec = tg_malloc_n(ntiles, 1, sizeof *m->tprec, err)) ||
        !(m->tscale = tg_malloc_n(ntiles, 1, sizeof *m->tscale, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    if (fread(magic, sizeof magic, 1, f) != 1 || memcmp(magic, factor_magic, sizeof magic) ||
        fread(head, sizeof head, 1, f) != 1) {
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: not a tilegwas factor (no %s header)", path,
                          factor_magic);
        goto cleanup;
    }
    if (head[0] != n || head[1] != nb || head[2] != nt) {
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: a factor of %lld rows in %lld tiles of %lld, "
                          "but model.tsv has n_train %lld and tile %lld", path,
                          (long long)head[0], (long long)head[2], (long long)head[1],
                          (long long)n, (long long)nb);
        goto cleanup;
    }
    for (int64_t j = 0; j < nt && !st; j++)
        for (int64_t i = j; i < nt && !st; i++, t++) {
            int64_t p, size, rows = i == nt - 1 ? n - i * nb : nb, cols = j == nt - 1 ? n - j * nb
                                                                                    : nb;
            if (fread(&p, sizeof p, 1, f) != 1 ||
                fread(&m->tscale[t], sizeof *m->tscale, 1, f) != 1 ||
                fread(&size, sizeof size, 1, f) != 1)
                st = tg_error_set(err, TG_ERR_FORMAT, "%s: ends within its tile table "
                                  "(truncated)", path);
            else if (i == j ? p != m->info.diag : p < TG_FP64 || p > TG_FP8_E4M3)
                st = tg_error_set(err, TG_ERR_FORMAT, "%s: tile (%lld, %lld) has precision code "
                                  "%lld, expected %s", path, (long long)i, (long long)j,
                                  (long long)p, i == j ? tg_prec_name(m->info.diag)
                                                       : "0-3 (fp64, fp32, fp16, fp8)");
            else if (size != rows * cols * (int64_t)tg_prec_size((tg_prec)p))
                st = tg_error_set(err, TG_ERR_FORMAT, "%s: tile (%lld, %lld) has %lld bytes, "
                                  "expected %lld × %lld %s", path, (long long)i, (long long)j,
                                  (long long)size, (long long)rows, (long long)cols,
                                  tg_prec_name((tg_prec)p));
            else /* a size that matched: the sum stays below the file's n² × 8 bytes */
                m->tprec[t] = (tg_prec)p, want += size;
        }
    if (!st && sb.st_size != want)
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: %lld bytes, its header and tile table "
                          "describe %lld (truncated or damaged)", path, (long long)sb.st_size,
                          (long long)want);
cleanup:
    if (f) fclose(f);
    return st;
}

tg_status tg_krr_model_load(const char *dir, tg_krr_model **out, tg_error *err) {
    char path[PATH_MAX], abs[PATH_MAX];
    int64_t nsnps = 0;
    uint64_t sum[NFILES] = {0};
    fileset_id saved = {0}, now;
    tg_krr_model *m = tg_calloc(1, sizeof *m, err);
    *out = NULL;
    if (!m) return TG_ERR_NOMEM;
    tg_status st;
    if ((st = model_path(dir, F_MODEL, path, err)) ||
        (st = read_model_tsv(path, m, abs, &nsnps, &saved, sum, err)) ||
        (st = fileset_identify(abs, &now, err)))
        goto cleanup;
    const char *changed = now.bed_size != saved.bed_size ? ".bed size"
                          : now.mtime_s != saved.mtime_s || now.mtime_ns != saved.mtime_ns
                              ? ".bed modification time"
                          : now.bim_hash != saved.bim_hash ? ".bim content"
                          : now.fam_hash != saved.fam_hash
                              ? ".fam content: other samples, or the same in another order"
                              : NULL;
    if (changed) {
        st = tg_error_set(err, TG_ERR_ARG, "training fileset %s changed since the model was "
                          "saved (%s): the model no longer matches it", abs, changed);
        goto cleanup;
    }
    if ((st = tg_bed_open(abs, &m->bed, err))) goto cleanup;
    m->owns_bed = 1;
    tg_krr_model_sync(m);
    /* the sizes model.tsv gives, against the files, before anything is sized by them */
    if (m->bed.n_snps != nsnps || m->info.n > m->bed.n_samples) {
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: n_snps %lld and n_train %lld, but %s has %lld "
                          "SNPs and %lld samples", path, (long long)nsnps, (long long)m->info.n,
                          abs, (long long)m->bed.n_snps, (long long)m->bed.n_samples);
        goto cleanup;
    }
    char opt[PATH_MAX + 8];
    snprintf(opt, sizeof opt, "%s: tile", path);
    if ((st = tg_tile_check(opt, m->info.n, m->info.nb, err))) goto cleanup;
    for (int fi = F_TRAIN; fi <= F_WEIGHTS && !st; fi++)
        if (!(st = model_path(dir, fi, path, err)))
            st = read_model_text(fi, path, sum[fi], m, err);
    if (!st && !(st = model_path(dir, F_FACTOR, path, err)))
        st = read_factor_table(path, m, err);
    if (!st && (!(m->dir = tg_strdup(dir, err)) ||
                !(m->wprec = tg_malloc(sizeof *m->wprec, err))))
        st = TG_ERR_NOMEM;
    if (!st) {
        m->factor_sum = sum[F_FACTOR];
        m->wprec[0] = m->ldiag = m->info.diag;
        tg_krr_model_sync(m);
        *out = m;
    }
cleanup:
    if (st) tg_krr_model_free(m);
    return st;
}

tg_status tg_krr_model_read_factor(tg_krr_model *m, tg_krr_solve_report *rep, tg_error *err) {
    if (m->L) return TG_OK;
    double t0 = tg_now();
    const int nb = m->info.nb;
    char path[PATH_MAX];
    int64_t t = 0;
    void *buf = NULL;
    FILE *f = NULL;
    int nt = 0;
    tg_xxh64 h;
    tg_xxh64_init(&h);
    tg_status st = m->dir ? model_path(m->dir, F_FACTOR, path, err)
                          : tg_error_set(err, TG_ERR_ARG, "KRR model: no factor kept or saved");
    if (st || (st = tg_matrix_create(&m->L, m->info.n, m->info.n, nb, nb, TG_SYM_LOWER,
                                     m->ldiag, 0, 0, err)))
        goto cleanup;
    if (!(buf = tg_malloc_n(nb, nb, sizeof(double), err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    tg_matrix_size(m->L, NULL, NULL, &nt, NULL);
    if (!(f = fopen(path, "rb"))) {
        st = tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", path, strerror(errno));
        goto cleanup;
    }
    /* the header and table (read at the load) go into the checksum only */
    for (int64_t left = FACTOR_HEAD + FACTOR_ENTRY * (int64_t)nt * (nt + 1) / 2, k; left > 0;
         left -= k) {
        k = left < (int64_t)nb * nb * 8 ? left : (int64_t)nb * nb * 8;
        if (fread(buf, (size_t)k, 1, f) != 1) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s: ends within its tile table", path);
            goto cleanup;
        }
        tg_xxh64_add(&h, buf, (size_t)k);
    }
    for (int j = 0; j < nt && !st; j++)
        for (int i = j; i < nt && !st; i++, t++) {
            int rows, cols;
            tg_matrix_tile_dims(m->L, i, j, &rows, &cols);
            size_t size = (size_t)rows * cols * tg_prec_size(m->tprec[t]);
            if (fread(buf, size, 1, f) != 1) {
                st = tg_error_set(err, TG_ERR_FORMAT, "%s: ends within tile (%d, %d)", path, i,
                                  j);
            } else if ((st = tg_matrix_tile_write(m->L, i, j, m->tprec[t], m->tscale[t], buf,
                                                  err))) {
                tg_error e = *err;
                st = tg_error_set(err, st, "%s: %s", path, e.msg);
            }
            tg_xxh64_add(&h, buf, size);
            rep->tiles[m->tprec[t]]++;
            rep->bytes += (int64_t)size;
        }
    /* a damaged byte anywhere, or a factor of another save, is refused before it is used */
    if (!st && (fgetc(f) != EOF || tg_xxh64_value(&h) != m->factor_sum))
        st = sum_mismatch(path, F_FACTOR, tg_xxh64_value(&h), m->factor_sum, err);
    rep->read_seconds = tg_now() - t0;
cleanup:
    if (st) { /* read again on a later call, not used half read */
        tg_matrix_destroy(m->L);
        m->L = NULL;
    }
    if (f) fclose(f);
    free(buf);
    return st;
}

tg_status tg_krr_model_solve(tg_krr_model *m, int k, const double *y, int64_t ldy,
                             const char *const *names, tg_krr_solve_report *report,
                             tg_error *err) {
    tg_krr_solve_report own;
    tg_krr_solve_report *rep = report ? report : &own;
    const int64_t n = m->info.n;
    *rep = (tg_krr_solve_report){0};
    /* the factor is for exactly the model's training samples: each needs every value */
    for (int c = 0; c < k; c++)
        for (int64_t i = 0; i < n; i++)
            if (isnan(y[m->rows[i] + c * ldy])) {
                const tg_sample *s = &m->info.bed->samples[m->rows[i]];
                return tg_error_set(err, TG_ERR_ARG, "training sample '%s %s' (FID IID) has no "
                                    "value of %s: the saved factor is for exactly the %lld "
                                    "training samples of the model", s->fid, s->iid, names[c],
                                    (long long)n);
            }
    if (m->info.ngamma * m->info.nalpha != 1 || k < 1 || k > n)
        return tg_error_set(err, TG_ERR_ARG, "KRR model solve: %d phenotypes for %lld training "
                            "samples, or a model of several pairs", k, (long long)n);
    tg_matrix *B = NULL;
    double *yc = NULL, *w = NULL;
    tg_status st = tg_krr_model_read_factor(m, rep, err);
    if (!st && (!(yc = tg_malloc_n(n, k, sizeof *yc, err)) ||
                !(w = tg_malloc_n(n, k, sizeof *w, err))))
        st = TG_ERR_NOMEM;
    if (!st) st = tg_krr_model_set_pheno(m, k, names, err);
    if (st) goto cleanup;
    double t0 = tg_now();
    if (!(st = tg_krr_centre(m, y, ldy, NULL, yc, err)) &&
        !(st = tg_matrix_create(&B, n, k, m->info.nb, k, TG_GENERAL, m->ldiag, 0, 0, err)) &&
        !(st = tg_matrix_from_dense(B, yc, n, err)) && !(st = tg_chol_solve(m->L, B, err)) &&
        !(st = tg_matrix_to_dense(B, w, n, err))) {
        free(m->w);
        m->w = w, w = NULL;
        m->wprec[0] = m->ldiag;
        rep->solve_seconds = tg_now() - t0;
    }
cleanup:
    tg_matrix_destroy(B);
    free(w);
    free(yc);
    return st;
}
