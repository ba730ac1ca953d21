/* Selection files and chromosome codes: see select.h. */
#include "io/select.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/hash.h"
#include "io/idmap.h"
#include "io/lines.h"

static const char *strip_chr(const char *s) {
    return strncasecmp(s, "chr", 3) == 0 && s[3] ? s + 3 : s;
}

int tg_chrom_code(const char *s) {
    s = strip_chr(s);
    if (s[0] >= '0' && s[0] <= '9') {
        char *end;
        long v = strtol(s, &end, 10);
        return !*end && v >= 1 && v <= TG_CHR_MT ? (int)v : 0;
    }
    static const struct { const char *name; int code; } alias[] = {
        {"X", TG_CHR_X}, {"Y", TG_CHR_Y}, {"XY", TG_CHR_XY}, {"MT", TG_CHR_MT}, {"M", TG_CHR_MT}};
    for (size_t k = 0; k < sizeof alias / sizeof alias[0]; k++)
        if (strcasecmp(s, alias[k].name) == 0) return alias[k].code;
    return 0;
}

/* Whether SNP chromosome @p chrom is code @p code (human) or the other code @p name. */
static int chrom_is(const char *chrom, int code, const char *name) {
    int c = tg_chrom_code(chrom);
    return code ? c == code : !c && strcmp(strip_chr(chrom), strip_chr(name)) == 0;
}

tg_status tg_chr_set_parse(tg_chr_set *c, const char *arg, tg_error *err) {
    memset(c, 0, sizeof *c);
    tg_status st = TG_ERR_NOMEM;
    size_t len = strlen(arg);
    if (!(c->text = tg_strdup(arg, err)) ||
        !(c->names = tg_calloc(len / 2 + 1, sizeof *c->names, err)))
        goto fail;
    for (char *item = c->text, *next; item; item = next) {
        if ((next = strchr(item, ','))) *next++ = '\0';
        st = TG_ERR_ARG;
        if (!*item) {
            tg_error_set(err, st, "--chr '%s': an empty code", arg);
            goto fail;
        }
        c->ncodes++;
        char *dash = strchr(item, '-');
        int lo = tg_chrom_code(item), hi = lo;
        if (dash) {
            *dash = '\0';
            lo = tg_chrom_code(item);
            hi = tg_chrom_code(dash + 1);
            if (!lo || !hi || hi < lo) {
                tg_error_set(err, st, "--chr '%s': the range %s-%s needs two human chromosome "
                             "codes (1-22, X, Y, XY, MT) in that order", arg, item, dash + 1);
                goto fail;
            }
        }
        if (lo)
            for (int k = lo; k <= hi; k++) c->human[k] = 1;
        else
            c->names[c->nnames++] = item;
    }
    return TG_OK;
fail:
    tg_chr_set_free(c);
    return st;
}

int tg_chr_set_has(const tg_chr_set *c, const char *chrom) {
    int code = tg_chrom_code(chrom);
    if (code) return c->human[code];
    for (int k = 0; k < c->nnames; k++)
        if (chrom_is(chrom, 0, c->names[k])) return 1;
    return 0;
}

void tg_chr_set_free(tg_chr_set *c) {
    free(c->names);
    free(c->text);
    memset(c, 0, sizeof *c);
}

/* ---- --keep / --remove */

/* What the IDs of a sample file's lines are: told by its header, or per line without one. */
enum { IDS_PER_LINE, IDS_FID_IID, IDS_IID };

tg_status tg_sample_list_mark(const char *path, const tg_bed *bed, uint8_t *hit, tg_error *err) {
    tg_lines t;
    tg_idmap map = {0};
    tg_status st = tg_lines_open(&t, path, err);
    if (st) goto done;
    if ((st = tg_idmap_init(&map, bed->samples, bed->n_samples, err))) goto done;
    int64_t dup, next = 0; /* next: where a list in the .fam's order has its next sample */
    tg_idmap_insert_all(&map, bed->n_samples, &dup); /* the .fam's IDs are unique */
    int mode = IDS_PER_LINE, header_seen = 0;
    for (char *line; !(st = tg_lines_next(&t, &line, err)) && line;) {
        char *f[2];
        int nf = tg_text_split(line, f, 2);
        if (!header_seen && f[0][0] == '#') {
            /* plink2: '#' lines before the first data line are comments, except the header */
            if (strcmp(f[0], "#IID") == 0) {
                mode = IDS_IID;
            } else if (strcmp(f[0], "#FID") == 0) {
                if (nf < 2 || strcmp(f[1], "IID") != 0) {
                    st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: a #FID header needs IID "
                                      "as its second column", path, (long long)t.line_no);
                    goto done;
                }
                mode = IDS_FID_IID;
            } else {
                continue;
            }
            header_seen = 1;
            continue;
        }
        header_seen = 1;
        if (mode == IDS_FID_IID && nf < 2) {
            st = tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: expected FID and IID (the "
                              "header says #FID IID)", path, (long long)t.line_no);
            goto done;
        }
        int iid_only = mode == IDS_IID || (mode == IDS_PER_LINE && nf == 1);
        int64_t i = iid_only ? tg_idmap_find_near(&map, "0", f[0], next)
                             : tg_idmap_find_near(&map, f[0], f[1], next);
        if (i >= 0) hit[i] = 1;
        next = i + 1;
    }
done:
    tg_idmap_free(&map);
    tg_lines_close(&t);
    return st;
}

/* ---- --extract / --exclude by ID */

static uint64_t id_hash(const char *s) { return tg_fnv1a(TG_FNV1A_INIT, s, strlen(s)); }

tg_status tg_snp_index_build(tg_snp_index *h, const tg_bed *bed, tg_error *err) {
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)bed->n_snps) cap <<= 1;
    h->bed = bed;
    if (!(h->slot = tg_malloc_n((int64_t)cap, 1, sizeof *h->slot, err))) return TG_ERR_NOMEM;
    memset(h->slot, 0xff, cap * sizeof *h->slot);
    h->mask = cap - 1;
    for (int64_t j = 0; j < bed->n_snps; j++) {
        uint64_t k = id_hash(bed->snps[j].id) & h->mask;
        while (h->slot[k] >= 0) k = (k + 1) & h->mask;
        h->slot[k] = j;
    }
    return TG_OK;
}

int64_t tg_snp_index_next(const tg_snp_index *h, const char *id, uint64_t *at) {
    uint64_t k = *at == UINT64_MAX ? id_hash(id) & h->mask : (*at + 1) & h->mask;
    for (; h->slot[k] >= 0; k = (k + 1) & h->mask)
        if (strcmp(h->bed->snps[h->slot[k]].id, id) == 0) {
            *at = k;
            return h->slot[k];
        }
    return -1;
}

void tg_snp_index_free(tg_snp_index *h) {
    free(h->slot);
    h->slot = NULL;
}

/* Cuts the next whitespace-separated word of *p in place; NULL at the end of the line. */
static char *next_word(char **p) {
    char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    if (!*s) return NULL;
    char *w = s;
    while (*s && *s != ' ' && *s != '\t' && *s != '\r') s++;
    if (*s) *s++ = '\0';
    *p = s;
    return w;
}

tg_status tg_snp_ids_mark(const char *path, const tg_bed *bed, uint8_t *hit, tg_error *err) {
    tg_lines t;
    tg_snp_index h = {0};
    tg_status st = tg_lines_open(&t, path, err);
    if (!st && !(st = tg_snp_index_build(&h, bed, err)))
        for (char *line; !(st = tg_lines_next(&t, &line, err)) && line;)
            for (char *w; (w = next_word(&line));) {
                uint64_t at = UINT64_MAX;
                for (int64_t j; (j = tg_snp_index_next(&h, w, &at)) >= 0;) hit[j] = 1;
            }
    tg_snp_index_free(&h);
    tg_lines_close(&t);
    return st;
}

/* ---- --extract range / --exclude range */

typedef struct {
    int code;   /* human code, or 0 with name */
    char *name; /* the file's code, "chr" prefix kept (chrom_is strips it) */
    int64_t lo, hi;
} range;

static int range_cmp(const void *a, const void *b) {
    const range *x = a, *y = b;
    if (x->code != y->code) return x->code < y->code ? -1 : 1;
    if (!x->code) {
        int c = strcmp(strip_chr(x->name), strip_chr(y->name));
        if (c) return c;
    }
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Whether (chrom, pos) lies in one of the n sorted, disjoint ranges r: the last range starting
 * at or before pos, if it is on that chromosome. */
static int in_ranges(const range *r, int64_t n, const char *chrom, int64_t pos) {
    range key = {tg_chrom_code(chrom), (char *)chrom, pos, pos};
    int64_t lo = 0, hi = n; /* first range after key */
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (range_cmp(&r[mid], &key) <= 0) lo = mid + 1; else hi = mid;
    }
    return lo > 0 && chrom_is(chrom, r[lo - 1].code, r[lo - 1].name) && r[lo - 1].hi >= pos;
}

static tg_status parse_range(const tg_lines *t, char *line, range *r, tg_error *err) {
    char *f[3];
    if (tg_text_split(line, f, 3) < 3)
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: expected CHR START END",
                            t->path, (long long)t->line_no);
    if (!tg_text_parse_int64(f[1], &r->lo) || r->lo < 0 || !tg_text_parse_int64(f[2], &r->hi) ||
        r->hi < 0)
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: range '%s %s': positions must be "
                            "non-negative integers", t->path, (long long)t->line_no, f[1], f[2]);
    if (r->hi < r->lo)
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: range end %lld is before its "
                            "start %lld", t->path, (long long)t->line_no, (long long)r->hi,
                            (long long)r->lo);
    r->code = tg_chrom_code(f[0]);
    r->name = tg_strdup(f[0], err);
    return r->name ? TG_OK : TG_ERR_NOMEM;
}

/* Reads the ranges of @p path into *r (n of them, room for cap). */
static tg_status read_ranges(const char *path, range **r, int64_t *n, tg_error *err) {
    tg_lines t;
    int64_t cap = 0;
    tg_status st = tg_lines_open(&t, path, err);
    for (char *line; !st && !(st = tg_lines_next(&t, &line, err)) && line;) {
        while (*line == ' ' || *line == '\t') line++;
        if (*line == '#') continue;
        if (*n == cap) {
            range *g = realloc(*r, (size_t)(cap = 2 * cap + 64) * sizeof *g);
            if (!g) {
                st = tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory for its ranges", path);
                break;
            }
            *r = g;
        }
        if (!(st = parse_range(&t, line, &(*r)[*n], err))) (*n)++;
    }
    tg_lines_close(&t);
    return st;
}

tg_status tg_snp_ranges_mark(const char *path, const tg_bed *bed, uint8_t *hit, tg_error *err) {
    range *r = NULL, *u = NULL;
    int64_t n = 0;
    tg_status st = read_ranges(path, &r, &n, err);
    if (!st && !(u = tg_malloc_n(n + 1, 1, sizeof *u, err))) st = TG_ERR_NOMEM;
    if (!st) {
        if (n) qsort(r, (size_t)n, sizeof *r, range_cmp); /* r is NULL without a range */
        /* overlapping ranges of a chromosome merged into u (names still r's), so that one range
         * answers each lookup */
        int64_t m = 0;
        for (int64_t k = 0; k < n; k++) {
            range *last = m ? &u[m - 1] : NULL;
            if (last && last->code == r[k].code &&
                (r[k].code || chrom_is(r[k].name, 0, last->name)) && r[k].lo <= last->hi) {
                if (r[k].hi > last->hi) last->hi = r[k].hi;
            } else {
                u[m++] = r[k];
            }
        }
        for (int64_t j = 0; j < bed->n_snps; j++)
            if (in_ranges(u, m, bed->snps[j].chrom, bed->snps[j].pos)) hit[j] = 1;
    }
    for (int64_t k = 0; k < n; k++) free(r[k].name);
    free(u);
    free(r);
    return st;
}
