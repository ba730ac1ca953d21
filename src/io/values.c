/* Dense matrices in text files whose rows follow a fileset: one line per SNP (.bim order) or
 * per sample (.fam order), an optional header naming the columns, optional ID columns checked
 * line by line (snpmm --matrix). The data lines are read on every core, in pieces; a file
 * they find wrong is read again line by line, which names its first error. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/parallel.h"
#include "io/idmap.h"

enum { KEY_COLS = 6 }; /* #CHROM POS ID REF ALT A1 */
/* the most fields a line is split into: 8 ID columns, the values, one more to count too many */
enum { MAX_FIELDS = KEY_COLS + 2 + TG_VALUES_MAX_COLS + 1 };

static int is_number(const char *s) {
    char *end;
    strtod(s, &end); /* nan and inf spellings count as numbers here: refused below by name */
    return end != s && !*end;
}

static int id_name(const char *s, const char *want) {
    if (*s == '#') s++;
    return !strcasecmp(s, want);
}

/* The SNP key of the outputs (TG_SNP_KEY_HEADER), and the columns that may follow it. */
static const char *const key_names[KEY_COLS] = {"#CHROM", "POS", "ID", "REF", "ALT", "A1"};
static const char *const key_stats[2] = {"A1_FREQ", "N"};

/* The header's ID columns: SNP or ID, or the SNP key (with A1_FREQ N), for SNP rows; FID IID or
 * IID for sample rows. */
static int id_columns(char **f, int nf, int by_sample) {
    if (!by_sample) {
        int key = 0, stats = 0;
        while (key < KEY_COLS && key < nf && !strcmp(f[key], key_names[key])) key++;
        if (key < KEY_COLS) return id_name(f[0], "SNP") || id_name(f[0], "ID");
        while (stats < 2 && KEY_COLS + stats < nf && !strcmp(f[KEY_COLS + stats], key_stats[stats]))
            stats++;
        return KEY_COLS + (stats == 2 ? 2 : 0);
    }
    if (id_name(f[0], "FID") && nf > 1 && id_name(f[1], "IID")) return 2;
    return id_name(f[0], "IID");
}

/* Checks the key fields of data row r against SNP r of the fileset. */
static tg_status check_key(const char *path, int64_t ln, char **f, const tg_bed *bed, int64_t r,
                           tg_error *err) {
    const tg_snp *s = &bed->snps[r];
    char pos[24];
    snprintf(pos, sizeof pos, "%lld", (long long)s->pos);
    const char *key[KEY_COLS] = {s->chrom, pos, s->id, s->a2, s->a1, s->a1};
    for (int c = 0; c < KEY_COLS; c++)
        if (strcmp(f[c], key[c]))
            return tg_error_set(err, TG_ERR_FORMAT,
                                "%s line %lld: %s '%s' but SNP %lld of %s.bim (%s) has %s %s "
                                "(rows must follow the .bim order)", path, (long long)ln,
                                key_names[c], f[c], (long long)r + 1, bed->prefix, s->id,
                                key_names[c], key[c]);
    return TG_OK;
}

/* Checks the ID fields of data row r against the fileset. */
static tg_status check_ids(const char *path, int64_t ln, char **f, int nid, const tg_bed *bed,
                           int by_sample, int64_t r, tg_error *err) {
    if (nid >= KEY_COLS) return check_key(path, ln, f, bed, r, err);
    const char *unit = by_sample ? "sample" : "SNP", *ext = by_sample ? "fam" : "bim";
    const char *id = by_sample ? bed->samples[r].iid : bed->snps[r].id, *idf = f[nid - 1];
    if (!strcmp(idf, id) && (nid < 2 || !strcmp(f[0], bed->samples[r].fid))) return TG_OK;
    return tg_error_set(err, TG_ERR_FORMAT,
                        "%s line %lld: %s '%s%s%s' but %s %lld of %s.%s is '%s%s%s' (rows must "
                        "follow the .%s order)",
                        path, (long long)ln, unit, nid == 2 ? f[0] : "", nid == 2 ? " " : "", idf,
                        unit, (long long)r + 1, bed->prefix, ext,
                        nid == 2 ? bed->samples[r].fid : "", nid == 2 ? " " : "", id, ext);
}

/* Reads the values of data row r (fields f) into column-major t->v of t->rows rows. */
static tg_status read_row(const char *path, int64_t ln, char **f, tg_values *t, int64_t r,
                          tg_error *err) {
    for (int c = 0; c < t->k; c++) {
        const char *s = f[t->nid + c];
        double x;
        if (!tg_text_parse_double(s, &x)) /* refuses what is_number does, and non-finite */
            return tg_error_set(err, TG_ERR_FORMAT,
                                "%s line %lld, column %d (%s): '%s' is not a finite number%s",
                                path, (long long)ln, t->nid + c + 1, t->names[c], s,
                                !t->nid && c == 0 && !is_number(s)
                                    ? " (ID columns need a header line naming them)"
                                    : "");
        t->v[r + c * t->rows] = x;
    }
    return TG_OK;
}

/* The header (or the first data line): ID columns, value columns and their names. */
static tg_status read_header(const char *path, int64_t ln, char **f, int nf, int header,
                             int by_sample, tg_values *t, tg_error *err) {
    t->nid = header ? id_columns(f, nf, by_sample) : 0;
    t->k = nf - t->nid;
    if (t->k < 1)
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: no value columns (k = 0)", path,
                            (long long)ln);
    if (t->k > TG_VALUES_MAX_COLS)
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: %d value columns, at most %d",
                            path, (long long)ln, t->k, TG_VALUES_MAX_COLS);
    if (!(t->names = tg_calloc_n(t->k, 1, sizeof *t->names, err))) return TG_ERR_NOMEM;
    for (int c = 0; c < t->k; c++) {
        char buf[32];
        snprintf(buf, sizeof buf, "COL%d", c + 1);
        if (!(t->names[c] = tg_strdup(header ? f[t->nid + c] : buf, err))) return TG_ERR_NOMEM;
    }
    return TG_OK;
}

/* The data lines on every core: the text after the header cut into pieces at line ends, each
 * piece's lines counted, then read into their rows. */
typedef struct {
    const char *path;
    const tg_bed *bed;
    int by_sample, nf;
    tg_values *t;
    char **start; /* pieces + 1 bounds, each piece whole lines */
    int64_t *row; /* pieces + 1: a piece's first row, then the total */
    int failed;   /* a piece found a line it could not read */
} piece_job;

static void piece_count(void *ctx, int64_t p) {
    piece_job *jb = ctx;
    const tg_text view = {.cur = jb->start[p], .end = jb->start[p + 1]};
    jb->row[p + 1] = tg_text_count_lines(&view);
}

static void piece_read(void *ctx, int64_t p) {
    piece_job *jb = ctx;
    tg_text view = {.path = jb->path, .cur = jb->start[p], .end = jb->start[p + 1]};
    char *f[MAX_FIELDS], *line;
    tg_error err;
    const int nid = jb->t->nid;
    for (int64_t r = jb->row[p]; (line = tg_text_next_line(&view)); r++)
        if (tg_text_split(line, f, MAX_FIELDS) != jb->nf ||
            (nid && check_ids(jb->path, 0, f, nid, jb->bed, jb->by_sample, r, &err)) ||
            read_row(jb->path, 0, f, jb->t, r, &err)) {
            __atomic_store_n(&jb->failed, 1, __ATOMIC_RELAXED);
            return;
        }
}

/* Reads the data lines from txt's position, rows @p r0 .. @p want − 1, on every core; nonzero
 * when they are not that many rows that read (the serial reading then says why). */
static int read_pieces(tg_text *txt, const char *path, const tg_bed *bed, int by_sample, int nf,
                       int64_t r0, int64_t want, tg_values *t) {
    enum { PIECE = 1 << 16 }; /* bytes a piece at least */
    const int64_t len = txt->end - txt->cur, threads = tg_parallel_threads();
    int64_t np = len / PIECE < 4 * threads ? len / PIECE : 4 * threads;
    if (np < 1) np = 1;
    char *start[np + 1];
    int64_t row[np + 1];
    start[0] = txt->cur;
    for (int64_t p = 1; p < np; p++) { /* each piece ends after a line end (or is empty) */
        char *at = txt->cur + len * p / np, *nl;
        if (at < start[p - 1]) at = start[p - 1];
        nl = memchr(at, '\n', (size_t)(txt->end - at));
        start[p] = nl ? nl + 1 : txt->end;
    }
    start[np] = txt->end;
    piece_job jb = {path, bed, by_sample, nf, t, start, row, 0};
    row[0] = r0;
    tg_parallel_for(np, piece_count, &jb);
    for (int64_t p = 0; p < np; p++) row[p + 1] += row[p];
    if (row[np] != want) return 1;
    tg_parallel_for(np, piece_read, &jb);
    t->pieces = (int)np;
    return jb.failed;
}

/* @p pieces: the data lines on every core (a wrong file is then read again without). */
static tg_status read_values(tg_text *txt, const char *path, const tg_bed *bed, int by_sample,
                             int pieces, tg_values *t, tg_error *err) {
    const int64_t want = by_sample ? bed->n_samples : bed->n_snps;
    const char *unit = by_sample ? "sample" : "SNP";
    char *f[MAX_FIELDS];
    char *line = tg_text_next_line(txt);
    if (!line) return tg_error_set(err, TG_ERR_FORMAT, "%s: empty file", path);
    int nf = tg_text_split(line, f, MAX_FIELDS);
    if (nf == 0) /* a line that is not blank, no field: a NUL byte first */
        return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: a NUL byte before any field (not "
                            "a text file?)", path, (long long)txt->line_no);
    const int header = !is_number(f[0]);
    t->rows = want;
    tg_status st = read_header(path, txt->line_no, f, nf, header, by_sample, t, err);
    if (st) return st;
    if (!(t->v = tg_malloc_n(want, t->k, sizeof *t->v, err))) return TG_ERR_NOMEM;
    if (pieces) { /* a first line of data is row 0 */
        if (!header && (want < 1 || read_row(path, txt->line_no, f, t, 0, err)))
            return TG_ERR_FORMAT;
        return read_pieces(txt, path, bed, by_sample, nf, !header, want, t) ? TG_ERR_FORMAT
                                                                            : TG_OK;
    }
    /* f holds the fields of the current line (the first one is split already) */
    int got = nf;
    if (header && (line = tg_text_next_line(txt))) got = tg_text_split(line, f, MAX_FIELDS);
    int64_t r = 0;
    for (; line; r++) {
        const int64_t ln = txt->line_no;
        if (r >= want)
            return tg_error_set(err, TG_ERR_FORMAT,
                                "%s line %lld: more data lines than the %lld %ss of %s", path,
                                (long long)ln, (long long)want, unit, bed->prefix);
        if (got != nf)
            return tg_error_set(err, TG_ERR_FORMAT, "%s line %lld: %d fields, expected %d", path,
                                (long long)ln, got, nf);
        if ((t->nid && (st = check_ids(path, ln, f, t->nid, bed, by_sample, r, err))) ||
            (st = read_row(path, ln, f, t, r, err)))
            return st;
        if ((line = tg_text_next_line(txt))) got = tg_text_split(line, f, MAX_FIELDS);
    }
    if (r != want)
        return tg_error_set(err, TG_ERR_FORMAT,
                            "%s: %lld data lines, expected %lld (one per %s of %s)", path,
                            (long long)r, (long long)want, unit, bed->prefix);
    return TG_OK;
}

tg_status tg_values_read(const char *path, const tg_bed *bed, int by_sample, tg_values *t,
                         tg_error *err) {
    tg_text txt;
    tg_status st = TG_ERR_FORMAT;
    /* on every core first; a file that does not read so is read again line by line */
    for (int pieces = 1; pieces >= 0 && st == TG_ERR_FORMAT; pieces--) {
        memset(t, 0, sizeof *t);
        if ((st = tg_text_read(&txt, path, err))) return st;
        st = read_values(&txt, path, bed, by_sample, pieces, t, err);
        tg_text_free(&txt);
        if (st) tg_values_free(t);
    }
    return st;
}

void tg_values_free(tg_values *t) {
    for (int c = 0; t->names && c < t->k; c++) free(t->names[c]);
    free(t->names);
    free(t->v);
    memset(t, 0, sizeof *t);
}
