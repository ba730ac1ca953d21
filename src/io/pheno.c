/* Phenotype and covariate files (PLINK style: FID IID, or IID, then value columns), read into
 * columns aligned to a sample list, and written back with a header.
 *
 * Format read: whitespace-separated, plain or compressed (io/lines.c streams it); an optional
 * header line FID IID (or #FID IID) naming the value columns, or #IID (or IID) naming them in a
 * file whose rows carry no FID, otherwise the columns are PHENO1..PHENOk; every line has the
 * same number of fields; missing values are -9, NA, NaN (any case) and '.'. Rows are matched
 * through the hash map of idmap.c (O(n) in all): by FID+IID, or with an IID-only header by IID
 * alone through a second map whose keys have an empty FID. Rows of samples that the list lacks
 * are skipped and counted, as plink2 and REGENIE do (a phenotype file usually covers a cohort,
 * the genotypes a subset). */
#define _GNU_SOURCE /* strverscmp */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io/idmap.h"
#include "io/lines.h"
#include "io/out.h"
#include "tilegwas.h"

void tg_pheno_free(tg_pheno *ph) {
    for (int c = 0; c < ph->n_cols; c++) {
        if (ph->names) free(ph->names[c]);
        if (!ph->levels || !ph->levels[c]) continue;
        for (int l = 0; l < ph->n_levels[c]; l++) free(ph->levels[c][l]);
        free(ph->levels[c]);
    }
    free(ph->names);
    free(ph->values);
    free(ph->n_levels);
    free(ph->levels);
    memset(ph, 0, sizeof *ph);
}

tg_pheno_opts tg_pheno_defaults(void) {
    return (tg_pheno_opts){.col_nums = NULL, .names = NULL, .categorical = 0};
}

/* The shape of a file, from its first line. */
typedef struct {
    const char *path;
    int nf;     /* fields on every line */
    int lead;   /* ID fields: 2 (FID IID) or 1 (IID, after an IID-only header) */
    int header; /* the first line names the columns */
    char **f;   /* the first line's fields (its header names while that line lasts) */
} shape;

/* Whether the token at @p s (up to whitespace) is @p w, in any case. */
static int token_is(const char *s, const char *w) {
    size_t n = strlen(w);
    return strncasecmp(s, w, n) == 0 && (!s[n] || strchr(" \t\r\v\f", s[n]));
}

/* Adds file column @p c (0-based) to the selection; a column chosen twice is refused. */
static tg_status choose(const shape *sh, const char *spec, int c, int *cols, int *k,
                        tg_error *err) {
    for (int a = 0; a < *k; a++)
        if (cols[a] == c)
            return tg_error_set(err, TG_ERR_ARG, "%s: column %d is chosen twice in '%s'",
                                sh->path, c + 1, spec);
    cols[(*k)++] = c;
    return TG_OK;
}

/* The value column named @p name, or -1. */
static int named(const shape *sh, const char *name) {
    for (int c = sh->lead; c < sh->nf; c++)
        if (strcmp(sh->f[c], name) == 0) return c;
    return -1;
}

/* One item of a name selection: a name, or "first-last" over consecutive columns. */
static tg_status choose_name(const shape *sh, const char *spec, char *t, int *cols, int *k,
                             tg_error *err) {
    int c = named(sh, t);
    if (c >= 0) return choose(sh, spec, c, cols, k, err);
    for (char *d = strchr(t + 1, '-'); d; d = strchr(d + 1, '-')) {
        *d = '\0';
        int a = named(sh, t), b = named(sh, d + 1);
        *d = '-';
        if (a < 0 || b < 0) continue;
        if (a > b)
            return tg_error_set(err, TG_ERR_ARG, "%s: the range '%s' in '%s' runs backwards",
                                sh->path, t, spec);
        tg_status st = TG_OK;
        for (c = a; c <= b && !st; c++) st = choose(sh, spec, c, cols, k, err);
        return st;
    }
    char list[256] = "";
    for (int j = sh->lead, l = 0; j < sh->nf && l < (int)sizeof list - 1; j++)
        l += snprintf(list + l, sizeof list - (size_t)l, "%s%s", l ? " " : "", sh->f[j]);
    return tg_error_set(err, TG_ERR_ARG, "%s has no column named '%s' (its columns: %s)",
                        sh->path, t, list);
}

/* One item of a number selection: "n" or "a-b", file columns counted from 1. */
static tg_status choose_number(const shape *sh, const char *spec, const char *t, int *cols,
                               int *k, tg_error *err) {
    char *e;
    long a = strtol(t, &e, 10), b = a;
    if (e != t && *e == '-') {
        const char *u = e + 1;
        b = strtol(u, &e, 10);
        if (e == u) e = (char *)t; /* "3-": not a range */
    }
    if (e == t || *e || a < 1)
        return tg_error_set(err, TG_ERR_ARG,
                            "%s: column numbers '%s': '%s' is not a number or a range such as "
                            "3-5",
                            sh->path, spec, t);
    if (a > b)
        return tg_error_set(err, TG_ERR_ARG, "%s: the range '%s' in '%s' runs backwards",
                            sh->path, t, spec);
    if (a <= sh->lead || b > sh->nf)
        return tg_error_set(err, TG_ERR_ARG,
                            "%s: column numbers '%s': '%s' is outside the value columns, %d to %d "
                            "(%s is column 1)",
                            sh->path, spec, t, sh->lead + 1, sh->nf, sh->lead == 2 ? "FID" : "IID");
    tg_status st = TG_OK;
    for (long c = a; c <= b && !st; c++) st = choose(sh, spec, (int)c - 1, cols, k, err);
    return st;
}

/* The file columns to read (0-based), in the order @p o gives them; all value columns without
 * a selection. @p cols has room for every column. */
static tg_status select_columns(const shape *sh, const tg_pheno_opts *o, int *cols, int *k,
                                tg_error *err) {
    *k = 0;
    if (o->col_nums && o->names)
        return tg_error_set(err, TG_ERR_ARG,
                            "%s: columns chosen both by number ('%s') and by name ('%s'): choose "
                            "one way",
                            sh->path, o->col_nums, o->names);
    const char *spec = o->col_nums ? o->col_nums : o->names;
    if (!spec) {
        for (int c = sh->lead; c < sh->nf; c++) cols[(*k)++] = c;
        return TG_OK;
    }
    if (o->names && !sh->header)
        return tg_error_set(err, TG_ERR_ARG,
                            "%s has no header line, so its columns cannot be chosen by name "
                            "('%s'); choose them by number",
                            sh->path, spec);
    char *copy = tg_strdup(spec, err), *save = NULL;
    if (!copy) return TG_ERR_NOMEM;
    tg_status st = TG_OK;
    for (char *t = strtok_r(copy, ", \t", &save); t && !st; t = strtok_r(NULL, ", \t", &save))
        st = o->names ? choose_name(sh, spec, t, cols, k, err)
                      : choose_number(sh, spec, t, cols, k, err);
    free(copy);
    if (!st && *k == 0)
        st = tg_error_set(err, TG_ERR_ARG, "%s: no column chosen by '%s'", sh->path, spec);
    return st;
}

/* Column names from the header fields, or PHENO<k> by the value column's place. */
static tg_status set_names(tg_pheno *p, const shape *sh, const int *cols, tg_error *err) {
    p->names = tg_calloc_n(p->n_cols, 1, sizeof *p->names, err);
    if (!p->names) return TG_ERR_NOMEM;
    for (int c = 0; c < p->n_cols; c++) {
        char gen[32];
        snprintf(gen, sizeof gen, "PHENO%d", cols[c] - sh->lead + 1);
        if (!(p->names[c] = tg_strdup(sh->header ? sh->f[cols[c]] : gen, err))) return TG_ERR_NOMEM;
    }
    return TG_OK;
}

/* A value cell: a number, or a missing code (those of tg_text_parse_value, and '.'). */
static int parse_cell(const char *s, double *v) {
    if (strcmp(s, ".") == 0) {
        *v = NAN;
        return 1;
    }
    return tg_text_parse_value(s, v);
}

/* Reads the first line that is not a comment into @p sh (its fields stay in @p r's buffer
 * until the next line is read). */
static tg_status read_shape(tg_lines *r, shape *sh, char **line, tg_error *err) {
    tg_status st;
    for (;;) {
        if ((st = tg_lines_next(r, line, err))) return st;
        if (!*line)
            return tg_error_set(err, TG_ERR_FORMAT,
                                "%s is empty: expected lines of FID IID and one or more values",
                                sh->path);
        const char *t = *line + strspn(*line, " \t\r\v\f");
        /* plink2 skips '#' lines before the first line, except a #FID / #IID header */
        if (t[0] != '#' || token_is(t + 1, "FID") || token_is(t + 1, "IID")) break;
    }
    sh->nf = tg_text_split(*line, NULL, 0); /* counts, leaving the line whole */
    if (!(sh->f = tg_malloc_n(sh->nf, 1, sizeof *sh->f, err))) return TG_ERR_NOMEM;
    tg_text_split(*line, sh->f, sh->nf);
    const char *f0 = sh->f[0] + (sh->f[0][0] == '#');
    sh->lead = token_is(f0, "IID") ? 1 : 2;
    sh->header = sh->lead == 1 || (token_is(f0, "FID") && sh->nf > 1 && token_is(sh->f[1], "IID"));
    if (sh->nf < sh->lead + 1)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s line %lld: expected %s and at least one value column, found %d "
                            "columns",
                            sh->path, (long long)r->line_no, sh->lead == 2 ? "FID, IID" : "IID",
                            sh->nf);
    return TG_OK;
}

/* A row's sample for messages: "FID IID", or "IID" after an IID-only header. */
enum { ROW_ID = 140 };
static const char *row_id(char buf[ROW_ID], char **f, int iid_only) {
    if (iid_only)
        snprintf(buf, ROW_ID, "%s", TG_ESC(f[0]));
    else
        snprintf(buf, ROW_ID, "%s %s", TG_ESC(f[0]), TG_ESC(f[1]));
    return buf;
}

/* Natural order of level names (strverscmp: "a2" before "a10", "2" before "10"). */
static int level_cmp(const void *a, const void *b) {
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* One categorical column from its cells' texts (NULL: missing): the distinct texts, sorted, are
 * its levels, and each value the index of its level. */
static tg_status set_levels(tg_pheno *p, int c, char **text, tg_error *err) {
    const int64_t n = p->n_samples;
    char **sorted = tg_malloc_n(n, 1, sizeof *sorted, err);
    if (!sorted) return TG_ERR_NOMEM;
    int64_t k = 0, u = 0;
    for (int64_t i = 0; i < n; i++)
        if (text[i]) sorted[k++] = text[i];
    qsort(sorted, (size_t)k, sizeof *sorted, level_cmp);
    for (int64_t a = 0; a < k; a++)
        if (!u || strcmp(sorted[u - 1], sorted[a])) sorted[u++] = sorted[a];
    tg_status st = TG_OK;
    if (!(p->levels[c] = tg_calloc_n(u + 1, 1, sizeof **p->levels, err))) st = TG_ERR_NOMEM;
    for (int64_t l = 0; l < u && !st; l++, p->n_levels[c]++)
        if (!(p->levels[c][l] = tg_strdup(sorted[l], err))) st = TG_ERR_NOMEM;
    for (int64_t i = 0; i < n && !st; i++) {
        char **at = text[i] ? bsearch(&text[i], p->levels[c], (size_t)u, sizeof *at, level_cmp)
                            : NULL;
        p->values[i + c * n] = at ? (double)(at - p->levels[c]) : NAN;
    }
    free(sorted);
    return st;
}

/* The second pass over a file with categorical columns (those with p->n_levels[c] set by the
 * first pass, which checked the file's lines and samples): their cells as text, then their
 * levels. A cell that reads as a missing code is missing; any other (a number too) a level. */
static tg_status read_levels(const char *path, const tg_sample *samples, int64_t n, int iid_only,
                             const int *cols, tg_pheno *p, tg_error *err) {
    tg_lines r = {0};
    tg_idlookup map = {0};
    shape sh = {.path = path};
    char *line, **text = tg_calloc_n(n, p->n_cols, sizeof *text, err);
    tg_status st = TG_ERR_NOMEM;
    if (!text || !(p->levels = tg_calloc_n(p->n_cols, 1, sizeof *p->levels, err))) goto done;
    if ((st = tg_lines_open(&r, path, err)) || (st = read_shape(&r, &sh, &line, err)) ||
        (st = tg_idlookup_init(&map, path, samples, n, iid_only, err)) ||
        (sh.header && (st = tg_lines_next(&r, &line, err))))
        goto done;
    int64_t next = 0; /* where a file in the sample list's order has its next row */
    for (int split = !sh.header; line; split = 0) {
        if (!split) tg_text_split(line, sh.f, sh.nf);
        int64_t i = iid_only ? tg_idmap_find(&map.by_iid, "", sh.f[0])
                             : tg_idmap_find_near(&map.full, sh.f[0], sh.f[1], next);
        next = i + 1;
        for (int c = 0; c < p->n_cols && i >= 0; c++) {
            double v;
            const char *cell = sh.f[cols[c]];
            if (!p->n_levels[c] || (parse_cell(cell, &v) && isnan(v))) continue;
            if (!(text[i + c * n] = tg_strdup(cell, err))) goto done;
        }
        if ((st = tg_lines_next(&r, &line, err))) goto done;
    }
    for (int c = 0; c < p->n_cols && !st; c++)
        if (p->n_levels[c]) {
            p->n_levels[c] = 0; /* counts the levels as they are set */
            st = set_levels(p, c, text + c * n, err);
        }
done:
    for (int64_t k = 0; text && k < n * p->n_cols; k++) free(text[k]);
    free(text);
    tg_idlookup_free(&map);
    tg_lines_close(&r);
    free(sh.f);
    return st;
}

tg_status tg_pheno_read(const char *path, const tg_sample *samples, int64_t n_samples, tg_pheno *ph,
                        tg_error *err) {
    tg_pheno_opts o = tg_pheno_defaults();
    return tg_pheno_read_opts(path, samples, n_samples, &o, ph, err);
}

tg_status tg_pheno_read_opts(const char *path, const tg_sample *samples, int64_t n_samples,
                             const tg_pheno_opts *opts, tg_pheno *ph, tg_error *err) {
    tg_lines r = {0};
    tg_idlookup map = {0};
    shape sh = {.path = path};
    tg_pheno p = {0};
    int64_t *seen = NULL; /* seen[i]: file line of sample i, 0 while not seen */
    int *cols = NULL;
    char *line, first_skipped[ROW_ID] = "";
    long long first_skipped_line = 0;
    memset(ph, 0, sizeof *ph);
    tg_status st = tg_lines_open(&r, path, err);
    if (st || (st = read_shape(&r, &sh, &line, err))) goto cleanup;
    const int iid_only = sh.lead == 1;
    if (!(cols = tg_malloc_n(sh.nf, 1, sizeof *cols, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    if ((st = select_columns(&sh, opts, cols, &p.n_cols, err))) goto cleanup;
    p.n_samples = n_samples;
    if ((st = set_names(&p, &sh, cols, err))) goto cleanup;
    p.values = tg_malloc_n(n_samples, p.n_cols, sizeof *p.values, err);
    seen = tg_calloc_n(n_samples, 1, sizeof *seen, err);
    if (!p.values || !seen) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    if ((st = tg_idlookup_init(&map, path, samples, n_samples, iid_only, err))) goto cleanup;
    for (int64_t k = 0; k < n_samples * p.n_cols; k++) p.values[k] = NAN;
    int64_t rows = 0, next = 0; /* next: where a file in the sample list's order has its row */
    int split = !sh.header; /* a first line of data is split already */
    if (sh.header && (st = tg_lines_next(&r, &line, err))) goto cleanup;
    char **f = sh.f;
    const char *ids = iid_only ? "IID" : "FID IID";
    for (; line; rows++, split = 0) {
        long long ln = (long long)r.line_no;
        int k = split ? sh.nf : tg_text_split(line, f, sh.nf);
        if (k != sh.nf) {
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: expected %d columns (%s and %d values), found %d",
                              path, ln, sh.nf, ids, sh.nf - sh.lead, k);
            goto cleanup;
        }
        int64_t i = iid_only ? tg_idmap_find(&map.by_iid, "", f[0])
                             : tg_idmap_find_near(&map.full, f[0], f[1], next);
        next = i + 1;
        if (i < 0) { /* not genotyped: skipped, as plink2 does */
            if (!p.n_skipped++) {
                row_id(first_skipped, f, iid_only);
                first_skipped_line = ln;
            }
        } else if (iid_only && map.twin[i] >= 0) {
            const tg_sample *a = &samples[i], *b = &samples[map.twin[i]];
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: IID '%s' is that of two samples of the sample "
                              "list, '%s %s' and '%s %s' (FID IID); a FID IID header "
                              "and FIDs on the rows would tell them apart",
                              path, ln, TG_ESC(f[0]), TG_ESC(a->fid), TG_ESC(a->iid),
                              TG_ESC(b->fid), TG_ESC(b->iid));
            goto cleanup;
        } else if (seen[i]) {
            char id[ROW_ID];
            st = tg_error_set(err, TG_ERR_FORMAT,
                              "%s line %lld: duplicate sample '%s' (%s), first on line %lld", path,
                              ln, row_id(id, f, iid_only), ids, (long long)seen[i]);
            goto cleanup;
        } else {
            seen[i] = ln;
            for (int c = 0; c < p.n_cols; c++) {
                double *v = &p.values[i + c * n_samples];
                if (parse_cell(f[cols[c]], v)) continue;
                *v = NAN;
                if (opts->categorical) { /* its levels come from a second pass */
                    if (!p.n_levels &&
                        !(p.n_levels = tg_calloc_n(p.n_cols, 1, sizeof *p.n_levels, err))) {
                        st = TG_ERR_NOMEM;
                        goto cleanup;
                    }
                    p.n_levels[c] = 1;
                    continue;
                }
                st = tg_error_set(err, TG_ERR_FORMAT,
                                  "%s line %lld: column %d (%s): '%s' is not a number or "
                                  "a missing code (-9, NA, nan, .)",
                                  path, ln, cols[c] + 1, TG_ESC(p.names[c]),
                                  TG_ESC(f[cols[c]]));
                goto cleanup;
            }
        }
        if ((st = tg_lines_next(&r, &line, err))) goto cleanup;
    }
    if (rows == 0) {
        st = tg_error_set(err, TG_ERR_FORMAT, "%s has a header line but no data lines", path);
        goto cleanup;
    }
    if (p.n_skipped == rows) {
        st = tg_error_set(err, TG_ERR_FORMAT,
                          "%s: none of its %lld samples is in the sample list (.fam), the first "
                          "being '%s' (%s) on line %lld",
                          path, (long long)rows, first_skipped, ids, first_skipped_line);
        goto cleanup;
    }
    if (p.n_levels && (st = read_levels(path, samples, n_samples, iid_only, cols, &p, err)))
        goto cleanup;
    *ph = p;
    memset(&p, 0, sizeof p); /* now owned by *ph */
cleanup:
    tg_pheno_free(&p);
    tg_idlookup_free(&map);
    tg_lines_close(&r);
    free(sh.f);
    free(seen);
    free(cols);
    return st;
}

tg_status tg_pheno_write(const char *path, const tg_sample *samples, const tg_pheno *ph,
                         tg_error *err) {
    for (int c = 0; c < ph->n_cols; c++)
        if (!tg_text_is_token(ph->names[c]))
            return tg_error_set(err, TG_ERR_ARG,
                                "writing %s: column name '%s' is empty or contains whitespace",
                                path, TG_ESC(ph->names[c]));
    FILE *f;
    char *out;
    tg_status st = tg_out_open(path, "", &f, &out, err);
    if (st) return st;
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
    st = tg_out_close(f, out, err);
    free(out);
    return st;
}
