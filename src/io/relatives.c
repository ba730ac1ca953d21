/* Known relatives, as pairs of samples with their relatedness, from
 *  - a KING table: plink2 --make-king-table's .kin0, "#FID1 IID1 FID2 IID2 NSNP HETHET IBS0
 *    KINSHIP" (or "#IID1 IID2 ..." without FIDs), its columns found by name;
 *  - GCTA's sparse GRM (fastGWA's): PREFIX.grm.id, then PREFIX.grm.sp "i j value".
 * The pairs kept are those of listed samples at least the cutoff (a kin0 without
 * --king-table-filter lists every pair of the cohort: the reader streams it through
 * io/lines.c and keeps only those). Pairs naming a sample the list lacks (not genotyped,
 * removed by --keep/--remove) are skipped and counted, as the phenotype reader skips its rows. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/idmap.h"
#include "io/lines.h"
#include "tilegwas.h"

void tg_relatives_free(tg_relatives *k) {
    free(k->pair_i);
    free(k->pair_j);
    free(k->pair_k);
    memset(k, 0, sizeof *k);
}

enum { C_FID1, C_IID1, C_FID2, C_IID2, C_KIN, NCOL };
static const char *const col_name[NCOL] = {"FID1", "IID1", "FID2", "IID2", "KINSHIP"};

/* The header's columns into col[] (-1 where absent) and its width into *nf. */
static tg_status read_header(tg_lines *r, int col[NCOL], int *nf, tg_error *err) {
    char *line, *f[64];
    tg_status st = tg_lines_next(r, &line, err);
    if (st) return st;
    if (!line)
        return tg_error_set(err, TG_ERR_FORMAT, "%s is empty: expected a KING table (plink2 "
                            "--make-king-table's .kin0)", r->path);
    *nf = tg_text_split(line, f, 64);
    for (int c = 0; c < NCOL; c++) col[c] = -1;
    for (int i = 0; i < *nf && i < 64; i++)
        for (int c = 0; c < NCOL; c++)
            if (!strcasecmp(f[i] + (i == 0 && f[i][0] == '#'), col_name[c])) col[c] = i;
    if (col[C_IID1] < 0 || col[C_IID2] < 0 || col[C_KIN] < 0 ||
        (col[C_FID1] < 0) != (col[C_FID2] < 0))
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: expected a header naming the "
                            "columns IID1, IID2 and KINSHIP, and FID1 with FID2 or neither "
                            "(plink2 --make-king-table's .kin0: #FID1 IID1 FID2 IID2 NSNP "
                            "HETHET IBS0 KINSHIP)", r->path, (long long)r->line_no);
    return TG_OK;
}

/* The sample of a row's FID, IID (fid NULL: by IID alone): its index, -1 if not listed. */
static tg_status find(const tg_idlookup *m, const tg_sample *samples, const char *path,
                      int64_t line, const char *fid, const char *iid, int64_t *i,
                      tg_error *err) {
    *i = fid ? tg_idmap_find(&m->full, fid, iid) : tg_idmap_find(&m->by_iid, "", iid);
    if (!fid && *i >= 0 && m->twin[*i] >= 0) {
        const tg_sample *a = &samples[*i], *b = &samples[m->twin[*i]];
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: IID '%s' is that of two samples "
                            "of the sample list, '%s %s' and '%s %s' (FID IID); a table with "
                            "FID1 and FID2 would tell them apart", path, (long long)line,
                            TG_ESC(iid), TG_ESC(a->fid), TG_ESC(a->iid), TG_ESC(b->fid),
                            TG_ESC(b->iid));
    }
    return TG_OK;
}

/* Pair p's samples, the smaller first, for the search for pairs listed twice. */
typedef struct {
    int64_t a, b, line;
} pair_key;

static int cmp_key(const void *x, const void *y) {
    const pair_key *p = x, *q = y;
    if (p->a != q->a) return (p->a > q->a) - (p->a < q->a);
    if (p->b != q->b) return (p->b > q->b) - (p->b < q->b);
    return (p->line > q->line) - (p->line < q->line);
}

static tg_status check_twice(const tg_relatives *k, const int64_t *line, const tg_sample *samples,
                             const char *path, tg_error *err) {
    pair_key *key = tg_malloc_n(k->npairs, 1, sizeof *key, err);
    if (!key && k->npairs) return TG_ERR_NOMEM;
    for (int64_t p = 0; p < k->npairs; p++) {
        const int64_t i = k->pair_i[p], j = k->pair_j[p];
        key[p] = (pair_key){i < j ? i : j, i < j ? j : i, line[p]};
    }
    qsort(key, (size_t)k->npairs, sizeof *key, cmp_key);
    tg_status st = TG_OK;
    for (int64_t p = 1; p < k->npairs && !st; p++)
        if (key[p].a == key[p - 1].a && key[p].b == key[p - 1].b) {
            const tg_sample *a = &samples[key[p].a], *b = &samples[key[p].b];
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: the pair '%s %s' and '%s %s' "
                              "(FID IID) again, first on line %lld: expected each pair once",
                              path, (long long)key[p].line, TG_ESC(a->fid), TG_ESC(a->iid),
                              TG_ESC(b->fid), TG_ESC(b->iid), (long long)key[p - 1].line);
        }
    free(key);
    return st;
}

/* Appends pair (i, j, relatedness v) from line @p ln, growing the arrays by half. */
static tg_status add_pair(tg_relatives *k, int64_t **line, int64_t *cap, int64_t i, int64_t j,
                          double v, int64_t ln, const char *path, tg_error *err) {
    if (k->npairs == *cap) {
        const int64_t c = *cap ? *cap + *cap / 2 : 1024;
        int64_t *pi = realloc(k->pair_i, (size_t)c * sizeof *pi);
        if (pi) k->pair_i = pi;
        int64_t *pj = realloc(k->pair_j, (size_t)c * sizeof *pj);
        if (pj) k->pair_j = pj;
        double *pk = realloc(k->pair_k, (size_t)c * sizeof *pk);
        if (pk) k->pair_k = pk;
        int64_t *pl = realloc(*line, (size_t)c * sizeof *pl);
        if (pl) *line = pl;
        if (!pi || !pj || !pk || !pl)
            return tg_error_set(err, TG_ERR_NOMEM, "reading %s: out of memory for %lld pairs",
                                path, (long long)c);
        *cap = c;
    }
    k->pair_i[k->npairs] = i;
    k->pair_j[k->npairs] = j;
    k->pair_k[k->npairs] = v;
    (*line)[k->npairs++] = ln;
    return TG_OK;
}

tg_status tg_kin0_read(const char *path, const tg_sample *samples, int64_t n_samples,
                       double min_kinship, tg_relatives *k, tg_error *err) {
    memset(k, 0, sizeof *k);
    tg_lines r = {0};
    tg_idlookup map = {0};
    int col[NCOL], nf = 0;
    int64_t *line_of = NULL, cap = 0;
    char **f = NULL, *line;
    tg_status st = tg_lines_open(&r, path, err);
    if (!st) st = read_header(&r, col, &nf, err);
    const int by_fid = !st && col[C_FID1] >= 0;
    if (!st && !(f = tg_malloc_n(nf, 1, sizeof *f, err))) st = TG_ERR_NOMEM;
    if (!st) st = tg_idlookup_init(&map, path, samples, n_samples, !by_fid, err);
    while (!st && !(st = tg_lines_next(&r, &line, err)) && line) {
        const int64_t ln = r.line_no;
        const int got = tg_text_split(line, f, nf);
        double kin;
        if (got != nf) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: expected %d columns as the "
                              "header's, found %d", path, (long long)ln, nf, got);
            break;
        }
        if (!tg_text_parse_double(f[col[C_KIN]], &kin) || kin > 0.75) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: KINSHIP '%s': expected a "
                              "number of at most 0.75", path, (long long)ln,
                              TG_ESC(f[col[C_KIN]]));
            break;
        }
        int64_t i, j;
        if ((st = find(&map, samples, path, ln, by_fid ? f[col[C_FID1]] : NULL, f[col[C_IID1]],
                       &i, err)) ||
            (st = find(&map, samples, path, ln, by_fid ? f[col[C_FID2]] : NULL, f[col[C_IID2]],
                       &j, err)))
            break;
        if (i < 0 || j < 0) {
            if (!k->skipped++)
                snprintf(k->first_skipped, sizeof k->first_skipped, "line %lld: %s%s%s",
                         (long long)ln, by_fid ? TG_ESC(f[col[i < 0 ? C_FID1 : C_FID2]]) : "",
                         by_fid ? " " : "", TG_ESC(f[col[i < 0 ? C_IID1 : C_IID2]]));
            continue;
        }
        if (i == j) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: sample '%s %s' (FID IID) "
                              "paired with itself: expected two samples", path, (long long)ln,
                              TG_ESC(samples[i].fid), TG_ESC(samples[i].iid));
            break;
        }
        if (kin < min_kinship)
            k->below++;
        else
            st = add_pair(k, &line_of, &cap, i, j, 2 * kin, ln, path, err);
    }
    if (!st) st = check_twice(k, line_of, samples, path, err);
    if (st) tg_relatives_free(k);
    free(line_of);
    free(f);
    tg_idlookup_free(&map);
    tg_lines_close(&r);
    return st;
}

/* PREFIX.grm.id's rows as indices into @p samples (-1: not listed), into *row, *nrow. */
static tg_status read_grm_id(const char *path, const tg_sample *samples, int64_t n,
                             int64_t **row, int64_t *nrow, tg_error *err) {
    tg_lines r = {0};
    tg_idlookup map = {0};
    int64_t cap = 0, next = 0, *seen = tg_calloc_n(n, 1, sizeof *seen, err);
    char *line, *f[2];
    tg_status st = seen ? tg_lines_open(&r, path, err) : TG_ERR_NOMEM;
    if (!st) st = tg_idlookup_init(&map, path, samples, n, 0, err);
    *nrow = 0;
    while (!st && !(st = tg_lines_next(&r, &line, err)) && line) {
        const int got = tg_text_split(line, f, 2);
        if (got != 2) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: expected FID and IID, found "
                              "%d column(s)", path, (long long)r.line_no, got);
            break;
        }
        const int64_t i = tg_idmap_find_near(&map.full, f[0], f[1], next);
        next = i + 1;
        if (i >= 0 && seen[i]) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: sample '%s %s' (FID IID) "
                              "again, first on line %lld", path, (long long)r.line_no,
                              TG_ESC(f[0]), TG_ESC(f[1]), (long long)seen[i]);
            break;
        }
        if (i >= 0) seen[i] = r.line_no;
        if (*nrow == cap) {
            cap = cap ? cap + cap / 2 : 1024;
            int64_t *p = realloc(*row, (size_t)cap * sizeof *p);
            if (!p) {
                st = tg_error_set(err, TG_ERR_NOMEM, "reading %s: out of memory", path);
                break;
            }
            *row = p;
        }
        (*row)[(*nrow)++] = i;
    }
    if (!st && !*nrow) st = tg_error_set(err, TG_ERR_FORMAT, "%s is empty: expected FID IID "
                                         "lines (GCTA's .grm.id)", path);
    free(seen);
    tg_idlookup_free(&map);
    tg_lines_close(&r);
    return st;
}

tg_status tg_grm_sparse_read(const char *prefix, const tg_sample *samples, int64_t n_samples,
                             double min_grm, tg_relatives *k, tg_error *err) {
    memset(k, 0, sizeof *k);
    const size_t len = strlen(prefix) + 8;
    char *id = tg_malloc(len, err), *sp = tg_malloc(len, err), *line, *f[3];
    int64_t *row = NULL, nrow = 0, *line_of = NULL, cap = 0;
    tg_lines r = {0};
    tg_status st = id && sp ? TG_OK : TG_ERR_NOMEM;
    if (!st) {
        snprintf(id, len, "%s.grm.id", prefix);
        snprintf(sp, len, "%s.grm.sp", prefix);
        st = read_grm_id(id, samples, n_samples, &row, &nrow, err);
    }
    if (!st) st = tg_lines_open(&r, sp, err);
    while (!st && !(st = tg_lines_next(&r, &line, err)) && line) {
        const int64_t ln = r.line_no;
        const int got = tg_text_split(line, f, 3);
        int64_t a, b;
        double v;
        if (got != 3 || !tg_text_parse_int64(f[0], &a) || !tg_text_parse_int64(f[1], &b) ||
            a < 0 || a >= nrow || b < 0 || b >= nrow || !tg_text_parse_double(f[2], &v) ||
            v > 1.5) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: expected 'i j value', i and "
                              "j rows 0 to %lld of %s and a value of at most 1.5, found "
                              "'%s%s%s%s%s'", sp, (long long)ln, (long long)nrow - 1, id,
                              TG_ESC(f[0]), got > 1 ? " " : "", got > 1 ? TG_ESC(f[1]) : "",
                              got > 2 ? " " : "", got > 2 ? TG_ESC(f[2]) : "");
            break;
        }
        if (a == b) continue; /* the diagonal: each sample's own, which the tests have */
        if (row[a] < 0 || row[b] < 0) {
            if (!k->skipped++)
                snprintf(k->first_skipped, sizeof k->first_skipped, "line %lld: row %lld of %s",
                         (long long)ln, (long long)(row[a] < 0 ? a : b), id);
            continue;
        }
        if (v < min_grm)
            k->below++;
        else
            st = add_pair(k, &line_of, &cap, row[a], row[b], v, ln, sp, err);
    }
    if (!st) st = check_twice(k, line_of, samples, sp, err);
    if (st) tg_relatives_free(k);
    tg_lines_close(&r);
    free(line_of);
    free(row);
    free(id);
    free(sp);
    return st;
}
