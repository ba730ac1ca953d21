/* Phenotype and covariate files (PLINK style: FID IID then value columns), read into columns
 * aligned to a sample list by FID+IID, and written back with a header.
 *
 * Format read: whitespace-separated; an optional header line whose first two fields are FID
 * (or #FID) and IID names the value columns, otherwise they are PHENO1..PHENOk; every line has
 * the same number of fields; missing values are -9, NA or NaN (any case), and samples without
 * a line stay NAN. Rows are matched through the FID+IID hash map of idmap.c: O(n) in all. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/idmap.h"
#include "tilegwas.h"

void tg_pheno_free(tg_pheno *ph) {
    if (ph->names)
        for (int c = 0; c < ph->n_cols; c++) free(ph->names[c]);
    free(ph->names);
    free(ph->values);
    memset(ph, 0, sizeof *ph);
}

/* Column names from the header fields, or PHENO1..PHENOk. */
static tg_status set_names(tg_pheno *p, char **header, tg_error *err) {
    p->names = tg_calloc((size_t)p->n_cols, sizeof *p->names, err);
    if (!p->names) return TG_ERR_NOMEM;
    for (int c = 0; c < p->n_cols; c++) {
        char gen[32];
        snprintf(gen, sizeof gen, "PHENO%d", c + 1);
        if (!(p->names[c] = tg_strdup(header ? header[c] : gen, err))) return TG_ERR_NOMEM;
    }
    return TG_OK;
}

tg_status tg_pheno_read(const char *path, const tg_sample *samples, int64_t n_samples, tg_pheno *ph,
                        tg_error *err) {
    tg_text t = {0};
    tg_idmap map = {0};
    tg_pheno p = {0};
    int64_t *seen = NULL; /* seen[i]: file line of sample i, 0 while not seen */
    char **f = NULL;
    memset(ph, 0, sizeof *ph);
    tg_status st = tg_text_read(&t, path, err);
    if (st) goto cleanup;
    char *line = tg_text_next_line(&t);
    if (!line) {
        st = tg_error_set(err, TG_ERR_FORMAT,
                          "%s is empty: expected lines of FID IID and one or more values", path);
        goto cleanup;
    }
    int nf = tg_text_split(line, NULL, 0); /* counts, leaving the line whole */
    if (nf < 3) {
        st = tg_error_set(err, TG_ERR_FORMAT,
                          "%s line %lld: expected FID, IID and at least one value column, found "
                          "%d columns",
                          path, (long long)t.line_no, nf);
        goto cleanup;
    }
    if (!(f = tg_malloc((size_t)nf * sizeof *f, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    tg_text_split(line, f, nf);
    int header =
        (strcmp(f[0], "FID") == 0 || strcmp(f[0], "#FID") == 0) && strcmp(f[1], "IID") == 0;
    p.n_samples = n_samples;
    p.n_cols = nf - 2;
    if ((st = set_names(&p, header ? f + 2 : NULL, err))) goto cleanup;
    p.values = tg_malloc((size_t)n_samples * (size_t)p.n_cols * sizeof *p.values, err);
    seen = tg_calloc((size_t)n_samples, sizeof *seen, err);
    if (!p.values || !seen || (st = tg_idmap_init(&map, samples, n_samples, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    for (int64_t k = 0; k < n_samples * p.n_cols; k++) p.values[k] = NAN;
    for (int64_t i = 0; i < n_samples; i++) {
        int64_t d = tg_idmap_insert(&map, i);
        if (d >= 0) {
            st = tg_error_set(err, TG_ERR_ARG,
                              "reading %s: the sample list has sample '%.64s %.64s' (FID IID) "
                              "twice (samples %lld and %lld)",
                              path, samples[i].fid, samples[i].iid, (long long)d, (long long)i);
            goto cleanup;
        }
    }
    int64_t rows = 0;
    int split = !header; /* a first line of data is split already */
    if (header) line = tg_text_next_line(&t);
    for (; line; line = tg_text_next_line(&t), rows++, split = 0) {
        long long ln = (long long)t.line_no;
        int k = split ? nf : tg_text_split(line, f, nf);
        if (k != nf) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: expected %d columns (FID IID and %d values), found %d",
                              path, ln, nf, nf - 2, k);
            goto cleanup;
        }
        int64_t i = tg_idmap_find(&map, f[0], f[1]);
        if (i < 0) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: sample '%.64s %.64s' (FID IID) is not in the sample "
                              "list (.fam)",
                              path, ln, f[0], f[1]);
            goto cleanup;
        }
        if (seen[i]) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: duplicate sample '%.64s %.64s' (FID IID), first on "
                              "line %lld",
                              path, ln, f[0], f[1], (long long)seen[i]);
            goto cleanup;
        }
        seen[i] = ln;
        for (int c = 0; c < p.n_cols; c++)
            if (!tg_text_parse_value(f[c + 2], &p.values[i + c * n_samples])) {
                st = tg_error_set(err, TG_ERR_FORMAT,
                                  "%s line %lld: column %d (%.64s): '%.64s' is not a number or a "
                                  "missing code (-9, NA)",
                                  path, ln, c + 3, p.names[c], f[c + 2]);
                goto cleanup;
            }
    }
    if (rows == 0) {
        st = tg_error_set(err, TG_ERR_FORMAT, "%s has a header line but no data lines", path);
        goto cleanup;
    }
    *ph = p;
    memset(&p, 0, sizeof p); /* now owned by *ph */
cleanup:
    tg_pheno_free(&p);
    tg_idmap_free(&map);
    tg_text_free(&t);
    free(seen);
    free(f);
    return st;
}

tg_status tg_pheno_write(const char *path, const tg_sample *samples, const tg_pheno *ph,
                         tg_error *err) {
    for (int c = 0; c < ph->n_cols; c++)
        if (!tg_text_is_token(ph->names[c]))
            return tg_error_set(err, TG_ERR_ARG,
                                "writing %s: column name '%.64s' is empty or contains whitespace",
                                path, ph->names[c] ? ph->names[c] : "(null)");
    FILE *f = fopen(path, "w");
    if (!f) return tg_error_set(err, TG_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    fputs("FID\tIID", f);
    for (int c = 0; c < ph->n_cols; c++) fprintf(f, "\t%s", ph->names[c]);
    fputc('\n', f);
    char buf[32];
    for (int64_t i = 0; i < ph->n_samples; i++) {
        fprintf(f, "%s\t%s", samples[i].fid, samples[i].iid);
        for (int c = 0; c < ph->n_cols; c++) {
            double v = ph->values[i + c * ph->n_samples];
            if (isnan(v))
                strcpy(buf, "NA");
            else
                tg_text_format_double(v, buf);
            fprintf(f, "\t%s", buf);
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (!bad) return TG_OK;
    tg_status st = tg_error_set(err, TG_ERR_IO, "error writing %s: %s", path, strerror(errno));
    unlink(path); /* no half-written file left behind */
    return st;
}
