/* The KRR model's folder (krr --save-model, --load-model): the files and their format, written
 * after a fit and read back, checked line by line, before a prediction or a solve with the
 * saved factor (which is read only then, with the runtime started). See include/tilegwas.h,
 * and docs/USER-GUIDE.md for the format. */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "algo/krr.h"
#include "base/hash.h"
#include "io/idmap.h"
#include "io/out.h"

/* The model's files, in the order a save writes and renames them: model.tsv last, so that a folder
 * with a model.tsv holds a whole model unless a save was cut off between two renames. */
enum { F_FACTOR, F_TRAIN, F_SNPS, F_PHENO, F_WEIGHTS, F_MODEL, NFILES };
static const char *const model_files[NFILES] = {"factor.bin", "train.tsv", "snps.tsv",
                                                "pheno.tsv", "weights.tsv", "model.tsv"};

/* model.tsv: one line per key, in this order, after the header "key\tvalue". */
enum {
    K_VERSION, K_KERNEL, K_GAMMA, K_ALPHA, K_TILE, K_DIAG, K_NTRAIN, K_NSNPS, K_NPHENO, K_BFILE,
    K_ABS, K_BED_SIZE, K_BED_MTIME, K_BIM_HASH, NKEYS
};
static const char *const model_keys[NKEYS] = {
    "tilegwas_krr_model", "kernel", "gamma", "alpha", "tile", "diag", "n_train", "n_snps",
    "n_pheno", "train_bfile", "train_bfile_abs", "train_bed_size", "train_bed_mtime",
    "train_bim_fnv1a"};
/* what a valid value is, for messages */
static const char *const model_values[NKEYS] = {
    "1 (the only format version)", "gaussian, ibs or linear",
    "a positive number (NA for the ibs and linear kernels)", "a number >= 0",
    "an integer in [1, 65536]", "fp32 or fp64", "an integer >= 2", "an integer >= 1",
    "an integer in [1, n_train]", "a path", "an absolute path", "an integer >= 0",
    "SECONDS.NANOSECONDS", "16 hexadecimal digits"};
enum { MODEL_VERSION = 1 };

/* factor.bin: the magic, n, nb, nt (int64), then per lower tile, by columns (j, then i ≥ j):
 * precision (int64, a tg_prec), scale (double), byte count (int64); then the tiles' bytes in
 * that order, each column-major without padding, in the machine's byte order. */
static const char factor_magic[8] = "TGKRRL1"; /* and its NUL */
enum { FACTOR_HEAD = 8 + 3 * 8, FACTOR_ENTRY = 3 * 8 };

static tg_status model_path(const char *dir, int file, const char *suffix, char *buf,
                            tg_error *err) {
    if (snprintf(buf, PATH_MAX, "%s/%s%s", dir, model_files[file], suffix) >= PATH_MAX)
        return tg_error_set(err, TG_ERR_ARG, "model folder %s: path too long", dir);
    return TG_OK;
}

/* What tells whether a training fileset changed, cheaply: the .bed's size and modification
 * time (hashing it would cost a pass over the genotypes) and a hash of the .bim. */
typedef struct {
    int64_t bed_size, mtime_s, mtime_ns;
    uint64_t bim_hash; /* 64-bit FNV-1a of its bytes */
} fileset_id;

static tg_status fileset_identify(const char *prefix, fileset_id *id, tg_error *err) {
    char path[PATH_MAX];
    struct stat sb;
    FILE *f = NULL;
    tg_status st = TG_OK;
    if (snprintf(path, sizeof path, "%s.bed", prefix) >= (int)sizeof path) {
        st = tg_error_set(err, TG_ERR_ARG, "%s: path too long", prefix);
        goto cleanup;
    }
    if (stat(path, &sb)) {
        st = tg_error_set(err, TG_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        goto cleanup;
    }
    *id = (fileset_id){.bed_size = sb.st_size, .mtime_s = sb.st_mtim.tv_sec,
                       .mtime_ns = sb.st_mtim.tv_nsec, .bim_hash = TG_FNV1A_INIT};
    snprintf(path, sizeof path, "%s.bim", prefix);
    if (!(f = fopen(path, "rb"))) {
        st = tg_error_set(err, TG_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        goto cleanup;
    }
    unsigned char buf[1 << 16];
    for (size_t got; (got = fread(buf, 1, sizeof buf, f)) > 0;)
        id->bim_hash = tg_fnv1a(id->bim_hash, buf, got);
    if (ferror(f)) st = tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", path, strerror(errno));
cleanup:
    if (f) fclose(f);
    return st;
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

tg_status tg_krr_model_check_dir(const char *dir, tg_error *err) {
    char path[PATH_MAX], head[64] = "", want[64];
    DIR *dp = NULL;
    FILE *f = NULL;
    int empty = 1;
    tg_status st = TG_OK;
    if (mkdir(dir, 0777) == 0) goto cleanup;
    if (errno != EEXIST || !(dp = opendir(dir))) {
        st = tg_error_set(err, TG_ERR_IO, "--save-model %s: %s", dir, strerror(errno));
        goto cleanup;
    }
    for (struct dirent *e; empty && (e = readdir(dp));)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    if ((st = model_path(dir, F_MODEL, "", path, err))) goto cleanup;
    /* a model: model.tsv starts with its header and the format line */
    if (!empty && (f = fopen(path, "r"))) head[fread(head, 1, sizeof head - 1, f)] = '\0';
    snprintf(want, sizeof want, "key\tvalue\n%s\t", model_keys[K_VERSION]);
    if (!empty && strncmp(head, want, strlen(want)))
        st = tg_error_set(err, TG_ERR_ARG, "--save-model %s: the folder is not empty and holds "
                          "no tilegwas model (%s): refusing to write into it", dir, path);
    else if (access(dir, W_OK | X_OK))
        st = tg_error_set(err, TG_ERR_IO, "--save-model %s: not writable: %s", dir,
                          strerror(errno));
cleanup:
    if (f) fclose(f);
    if (dp) closedir(dp);
    return st;
}

/* The factor: header, tile table, tiles (see factor_magic); @p bytes receives the tiles'. */
static tg_status write_factor(const tg_krr_model *m, FILE *f, const char *path, int64_t *bytes,
                              tg_error *err) {
    const tg_matrix *L = m->L;
    const int nb = m->info.nb;
    int64_t n, head[3];
    int nt;
    tg_matrix_size(L, &n, NULL, &nt, NULL);
    head[0] = n, head[1] = nb, head[2] = nt;
    void *buf = tg_malloc((size_t)nb * (size_t)nb * sizeof(double), err);
    tg_status st = buf ? TG_OK : TG_ERR_NOMEM;
    int ok = fwrite(factor_magic, sizeof factor_magic, 1, f) == 1 &&
             fwrite(head, sizeof head, 1, f) == 1;
    *bytes = 0;
    for (int j = 0; j < nt && ok; j++)
        for (int i = j; i < nt && ok; i++) {
            int rows, cols;
            tg_matrix_tile_dims(L, i, j, &rows, &cols);
            int64_t prec = tg_matrix_tile_prec(L, i, j),
                    size = (int64_t)rows * cols * (int64_t)tg_prec_size((tg_prec)prec);
            double scale = tg_matrix_tile_scale(L, i, j);
            ok = fwrite(&prec, sizeof prec, 1, f) == 1 && fwrite(&scale, sizeof scale, 1, f) == 1 &&
                 fwrite(&size, sizeof size, 1, f) == 1;
            *bytes += size;
        }
    for (int j = 0; j < nt && ok && !st; j++)
        for (int i = j; i < nt && ok && !st; i++) {
            int rows, cols;
            tg_matrix_tile_dims(L, i, j, &rows, &cols);
            size_t size = (size_t)rows * cols * tg_prec_size(tg_matrix_tile_prec(L, i, j));
            if (!(st = tg_matrix_tile_read(L, i, j, buf, err))) ok = fwrite(buf, size, 1, f) == 1;
        }
    if (!ok && !st) /* a full disk stops the save at once, not after the whole factor */
        st = tg_error_set(err, TG_ERR_IO, "error writing %s: %s", path, strerror(errno));
    free(buf);
    return st;
}

static void write_model_tsv(const tg_krr_model *m, const char *abs, const fileset_id *id,
                            FILE *f) {
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
    fprintf(f, "%s\t%s\n%s\t%s\n%s\t%lld\n%s\t%lld.%09lld\n%s\t%016llx\n", k[K_BFILE], m->bfile,
            k[K_ABS], abs, k[K_BED_SIZE], (long long)id->bed_size, k[K_BED_MTIME],
            (long long)id->mtime_s, (long long)id->mtime_ns, k[K_BIM_HASH],
            (unsigned long long)id->bim_hash);
}

/* The text files: train.tsv, snps.tsv, pheno.tsv, weights.tsv (numbers that read back
 * exactly; a write error is found when the file is closed). */
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
        fputs("SNP\tA1\tA2\tfreq\n", f);
        for (int64_t j = 0; j < i->bed->n_snps; j++) {
            const tg_snp *s = &i->bed->snps[j];
            if (isnan(freq[j])) strcpy(num, "NA");
            else tg_text_format_double(freq[j], num);
            fprintf(f, "%s\t%s\t%s\t%s\n", s->id, s->a1, s->a2, num);
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

tg_status tg_krr_model_save(const tg_krr_model *m, const char *dir, int64_t *factor_bytes,
                            tg_error *err) {
    const char *given = m->bfile;
    char abs[PATH_MAX], path[PATH_MAX], *tmp[NFILES] = {0};
    fileset_id id;
    int64_t bytes = 0;
    if (!m->L || m->info.ngamma * m->info.nalpha != 1)
        return tg_error_set(err, TG_ERR_ARG, "KRR model save: the model has no factor (fit one "
                            "gamma and one alpha with keep_factor, or solve a loaded model)");
    tg_status st = absolute_prefix(m->info.bed->prefix, abs, err);
    if (!st) st = fileset_identify(abs, &id, err);
    if (!st && (strpbrk(given, "\t\n\r") || strpbrk(abs, "\t\n\r")))
        st = tg_error_set(err, TG_ERR_ARG, "--save-model: the training fileset's path %s has a "
                          "tab or a line break, which model.tsv cannot hold", abs);
    for (int fi = 0; fi < NFILES && !st; fi++) {
        FILE *f;
        char suffix[32];
        snprintf(suffix, sizeof suffix, "/%s.tmp", model_files[fi]);
        if ((st = tg_out_open(dir, suffix, &f, &tmp[fi], err))) break;
        if (fi == F_FACTOR) st = write_factor(m, f, tmp[fi], &bytes, err);
        else if (fi == F_MODEL) write_model_tsv(m, abs, &id, f);
        else write_model_text(fi, m, f);
        if (st) fclose(f); /* the error is the write's */
        else st = tg_out_close(f, tmp[fi], err);
    }
    for (int fi = 0; fi < NFILES && !st; fi++)
        if (!(st = model_path(dir, fi, "", path, err)) && rename(tmp[fi], path))
            st = tg_error_set(err, TG_ERR_IO, "cannot rename %s to %s: %s", tmp[fi], path,
                              strerror(errno));
    for (int fi = 0; fi < NFILES; fi++) {
        if (st && tmp[fi]) unlink(tmp[fi]); /* no partial files left (renamed ones are gone) */
        free(tmp[fi]);
    }
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
                              "'%.64s', expected '%s'", t->path, (long long)t->line_no, c + 1,
                              f[c], want[c]);
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
 * training fileset's absolute prefix @p abs, SNP count and identity. */
static tg_status read_model_tsv(const char *path, tg_krr_model *m, char *abs, int64_t *nsnps,
                                fileset_id *id, tg_error *err) {
    tg_text t;
    const char *val[NKEYS] = {0};
    long long at[NKEYS] = {0};
    tg_status st = tg_text_read(&t, path, err);
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
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: %s '%.64s'", path,
                              (long long)t.line_no, !tab ? "expected KEY<tab>VALUE, found"
                              : k == NKEYS ? "unknown key" : "second line of key", line);
        else
            val[k] = tab + 1, at[k] = (long long)t.line_no;
    }
    for (int k = 0; k < NKEYS && !st; k++)
        if (!val[k]) st = tg_error_set(err, TG_ERR_FORMAT, "%s: no %s line", path, model_keys[k]);
    if (!st && (!(m->gamma = tg_calloc(1, sizeof *m->gamma, err)) ||
                !(m->alpha = tg_calloc(1, sizeof *m->alpha, err)) ||
                !(m->bfile = tg_strdup(val[K_BFILE], err))))
        st = TG_ERR_NOMEM;
    m->info.ngamma = m->info.nalpha = 1;
    for (int k = 0; k < NKEYS && !st; k++) {
        const char *v = val[k];
        int64_t x = 0;
        char *end = NULL;
        int good = 1;
        switch (k) {
        case K_VERSION: good = tg_text_parse_int64(v, &x) && x == MODEL_VERSION; break;
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
            good = !tg_prec_parse(v, &m->info.diag, NULL) && (m->info.diag == TG_FP64 || m->info.diag == TG_FP32);
            break;
        case K_NTRAIN: good = tg_text_parse_int64(v, &m->info.n) && m->info.n >= 2; break;
        case K_NSNPS: good = tg_text_parse_int64(v, nsnps) && *nsnps >= 1; break;
        case K_NPHENO:
            good = tg_text_parse_int64(v, &x) && x >= 1 && x <= m->info.n;
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
        default: /* K_BIM_HASH */
            id->bim_hash = strtoull(v, &end, 16);
            good = strlen(v) == 16 && strspn(v, "0123456789abcdef") == 16 && *end == '\0';
        }
        if (!good)
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: %s '%.64s' is not %s", path,
                              at[k], model_keys[k], v, model_values[k]);
    }
    tg_text_free(&t);
    return st;
}

/* One of train.tsv (into m->rows: rows of the training .fam), snps.tsv (m->freq; the SNPs
 * must be the training .bim's), pheno.tsv (m->names, m->mean), weights.tsv (m->w; its rows
 * the training samples in order). */
static tg_status read_model_text(int file, const char *path, tg_krr_model *m, tg_error *err) {
    static const char *const heads[NFILES][4] = {[F_TRAIN] = {"FID", "IID"},
                                                 [F_SNPS] = {"SNP", "A1", "A2", "freq"},
                                                 [F_PHENO] = {"pheno", "mean"},
                                                 [F_WEIGHTS] = {"FID", "IID"}};
    const int64_t nr = m->info.n, nlines = file == F_SNPS    ? m->bed.n_snps
                                           : file == F_PHENO ? m->info.k
                                                             : nr;
    const int nf = file == F_SNPS ? 4 : file == F_WEIGHTS ? 2 + m->info.k : 2;
    tg_text t = {0};
    tg_idmap map = {0};
    const char **want = tg_malloc((size_t)nf * sizeof *want, err);
    char **f = tg_malloc((size_t)nf * sizeof *f, err);
    int nomem = !want || !f;
    switch (file) {
    case F_TRAIN:
        nomem |= !(m->rows = tg_malloc((size_t)nr * sizeof *m->rows, err)) ||
                 tg_idmap_init(&map, m->bed.samples, m->bed.n_samples, err);
        break;
    case F_SNPS: nomem |= !(m->freq = tg_malloc((size_t)nlines * sizeof *m->freq, err)); break;
    case F_PHENO:
        nomem |= !(m->names = tg_calloc((size_t)m->info.k, sizeof *m->names, err)) ||
                 !(m->mean = tg_malloc((size_t)m->info.k * sizeof *m->mean, err));
        break;
    default: nomem |= !(m->w = tg_malloc((size_t)(nr * m->info.k) * sizeof *m->w, err));
    }
    tg_status st = nomem ? TG_ERR_NOMEM : TG_OK;
    for (int c = 0; c < nf && !st; c++) want[c] = c < 2 || file != F_WEIGHTS ? heads[file][c]
                                                                             : m->names[c - 2];
    for (int64_t i = 0; file == F_TRAIN && !st && i < m->bed.n_samples; i++)
        tg_idmap_insert(&map, i); /* the .fam's IDs are unique (tg_bed_open) */
    if (!st) st = tg_text_read(&t, path, err);
    if (!st) st = model_header(&t, f, want, nf, err);
    for (int64_t i = 0; i < nlines && !st; i++) {
        if ((st = model_line(&t, f, nf, err))) break;
        const long long ln = (long long)t.line_no;
        const tg_sample *s = file == F_WEIGHTS ? &m->bed.samples[m->rows[i]] : NULL;
        const tg_snp *snp = file == F_SNPS ? &m->bed.snps[i] : NULL;
        switch (file) {
        case F_TRAIN:
            if ((m->rows[i] = tg_idmap_find(&map, f[0], f[1])) < 0)
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: sample '%.64s %.64s' (FID "
                                  "IID) is not in %s.fam", path, ln, f[0], f[1], m->bed.prefix);
            break;
        case F_SNPS:
            if (strcmp(f[0], snp->id) || strcmp(f[1], snp->a1) || strcmp(f[2], snp->a2))
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: SNP %.64s (A1 %.16s, A2 "
                                  "%.16s), but SNP %lld of %s.bim is %s (A1 %s, A2 %s)", path,
                                  ln, f[0], f[1], f[2], (long long)i + 1, m->bed.prefix,
                                  snp->id, snp->a1, snp->a2);
            else if (!strcmp(f[3], "NA"))
                m->freq[i] = NAN;
            else if (!tg_text_parse_double(f[3], &m->freq[i]) || m->freq[i] < 0 || m->freq[i] > 1)
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: frequency '%.64s' is not NA "
                                  "or a number in [0, 1]", path, ln, f[3]);
            break;
        case F_PHENO:
            if (!(m->names[i] = tg_strdup(f[0], err)))
                st = TG_ERR_NOMEM;
            else if (!tg_text_parse_double(f[1], &m->mean[i]))
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: mean '%.64s' is not a "
                                  "number", path, ln, f[1]);
            break;
        default: /* F_WEIGHTS */
            if (strcmp(f[0], s->fid) || strcmp(f[1], s->iid))
                st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: sample '%.64s %.64s', but "
                                  "training sample %lld (train.tsv) is '%s %s'", path, ln, f[0],
                                  f[1], (long long)i + 1, s->fid, s->iid);
            for (int c = 0; c < m->info.k && !st; c++)
                if (!tg_text_parse_double(f[2 + c], &m->w[i + c * nr]))
                    st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: column %d: '%.64s' is "
                                      "not a number", path, ln, 3 + c, f[2 + c]);
        }
    }
    if (!st) st = model_end(&t, err);
    tg_text_free(&t);
    tg_idmap_free(&map);
    free(want);
    free(f);
    return st;
}

/* factor.bin's header and tile table against model.tsv, and its size against the table (a
 * truncated file is found here, before any work); keeps the table in m->tprec, m->tscale. */
static tg_status read_factor_table(const char *path, tg_krr_model *m, tg_error *err) {
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
    if (!(m->tprec = tg_malloc((size_t)ntiles * sizeof *m->tprec, err)) ||
        !(m->tscale = tg_malloc((size_t)ntiles * sizeof *m->tscale, err))) {
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
            m->tprec[t] = (tg_prec)p;
            want += size;
        }
    if (!st && (fstat(fileno(f), &sb) || sb.st_size != want))
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
    fileset_id saved = {0}, now;
    tg_krr_model *m = tg_calloc(1, sizeof *m, err);
    *out = NULL;
    if (!m) return TG_ERR_NOMEM;
    tg_status st;
    if ((st = model_path(dir, F_MODEL, "", path, err)) ||
        (st = read_model_tsv(path, m, abs, &nsnps, &saved, err)) ||
        (st = fileset_identify(abs, &now, err)))
        goto cleanup;
    const char *changed = now.bed_size != saved.bed_size ? ".bed size"
                          : now.mtime_s != saved.mtime_s || now.mtime_ns != saved.mtime_ns
                              ? ".bed modification time"
                          : now.bim_hash != saved.bim_hash ? ".bim content"
                                                           : NULL;
    if (changed) {
        st = tg_error_set(err, TG_ERR_ARG, "training fileset %s changed since the model was "
                          "saved (%s): the model no longer matches it", abs, changed);
        goto cleanup;
    }
    if ((st = tg_bed_open(abs, &m->bed, err))) goto cleanup;
    m->owns_bed = 1;
    tg_krr_model_sync(m);
    if (m->bed.n_snps != nsnps) {
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: n_snps %lld, but %s.bim has %lld", path,
                          (long long)nsnps, abs, (long long)m->bed.n_snps);
        goto cleanup;
    }
    if (m->info.n > m->bed.n_samples) { /* before the arrays sized by it (n_train 2^61 wrapped) */
        st = tg_error_set(err, TG_ERR_FORMAT, "%s: n_train %lld, but %s.fam has %lld samples",
                          path, (long long)m->info.n, abs, (long long)m->bed.n_samples);
        goto cleanup;
    }
    for (int fi = F_TRAIN; fi <= F_WEIGHTS && !st; fi++)
        if (!(st = model_path(dir, fi, "", path, err))) st = read_model_text(fi, path, m, err);
    if (!st && !(st = model_path(dir, F_FACTOR, "", path, err)))
        st = read_factor_table(path, m, err);
    if (!st && (!(m->dir = tg_strdup(dir, err)) ||
                !(m->wprec = tg_malloc(sizeof *m->wprec, err))))
        st = TG_ERR_NOMEM;
    if (!st) {
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
    tg_status st = m->dir ? model_path(m->dir, F_FACTOR, "", path, err)
                          : tg_error_set(err, TG_ERR_ARG, "KRR model: no factor kept or saved");
    if (st || (st = tg_matrix_create(&m->L, m->info.n, m->info.n, nb, nb, TG_SYM_LOWER,
                                     m->ldiag, 0, 0, err)))
        goto cleanup;
    if (!(buf = tg_malloc((size_t)nb * (size_t)nb * sizeof(double), err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    tg_matrix_size(m->L, NULL, NULL, &nt, NULL);
    if (!(f = fopen(path, "rb")) ||
        fseek(f, FACTOR_HEAD + FACTOR_ENTRY * (long)nt * (nt + 1) / 2, SEEK_SET)) {
        st = tg_error_set(err, TG_ERR_IO, "cannot read %s: %s", path, strerror(errno));
        goto cleanup;
    }
    for (int j = 0; j < nt && !st; j++)
        for (int i = j; i < nt && !st; i++, t++) {
            int rows, cols;
            tg_matrix_tile_dims(m->L, i, j, &rows, &cols);
            size_t size = (size_t)rows * cols * tg_prec_size(m->tprec[t]);
            if (fread(buf, size, 1, f) != 1)
                st = tg_error_set(err, TG_ERR_FORMAT, "%s: ends within tile (%d, %d)", path, i,
                                  j);
            else if ((st = tg_matrix_tile_write(m->L, i, j, m->tprec[t], m->tscale[t], buf,
                                                err))) {
                tg_error e = *err;
                st = tg_error_set(err, st, "%s: %s", path, e.msg);
            }
            rep->tiles[m->tprec[t]]++;
            rep->bytes += (int64_t)size;
        }
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
    if (!st && (!(yc = tg_malloc((size_t)(n * k) * sizeof *yc, err)) ||
                !(w = tg_malloc((size_t)(n * k) * sizeof *w, err))))
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
