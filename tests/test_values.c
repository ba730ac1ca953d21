/* Dense matrices in text files (src/io/values.c, tg_values_read). Files are written here by
 * hand (fixed text, or fprintf of known values with %.17g) against a fileset built in memory,
 * and every value read is compared with the value written; then bad inputs, each of which must
 * name the file and the line (and the column of a bad value) and leave a zeroed tg_values. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"
#include "tilegwas.h"

static char tmpdir[64];
static char path[128];

#define put(...) put_text(path, sizeof path, tmpdir, "values.txt", __VA_ARGS__)

/* 3 samples (FID f1 f1 f2, IID a b a) and 4 SNPs rs1..rs4, as tg_bed_open would fill them. */
static tg_sample samples[3] = {{.fid = "f1", .iid = "a"}, {.fid = "f1", .iid = "b"},
                               {.fid = "f2", .iid = "a"}};
static tg_snp snps[4] = {{.id = "rs1"}, {.id = "rs2"}, {.id = "rs3"}, {.id = "rs4"}};
static tg_bed bed = {.prefix = "fs", .n_samples = 3, .n_snps = 4, .samples = samples,
                     .snps = snps};

static int zeroed(const tg_values *t) { return !t->rows && !t->k && !t->nid && !t->names && !t->v; }

/* A file that must fail with TG_ERR_FORMAT, a message naming the file and holding @p want. */
static void bad(const char *desc, int by_sample, const char *want, const char *text) {
    tg_values t;
    tg_error err = {0};
    tg_status st = tg_values_read(put("%s", text), &bed, by_sample, &t, &err);
    ok(st == TG_ERR_FORMAT && strstr(err.msg, path) && strstr(err.msg, want) && zeroed(&t),
       "%s: %s", desc, err.msg);
}

/* Every column of @p t equals want (rows × k column-major), names name0, name1, ... */
static int same_values(const tg_values *t, const double *want, int64_t rows, int k) {
    if (t->rows != rows || t->k != k) return 0;
    for (int64_t e = 0; e < rows * k; e++)
        if (t->v[e] != want[e]) return 0;
    return 1;
}

static void good_files(tg_rng *r) {
    tg_values t;
    tg_error err = {0};
    /* no header: every field a value, columns COL1.., CRLF and a blank line */
    const double v1[8] = {1, -2.5, 3e-3, 4, 0.5, 6, -7, 1e10};
    tg_status st = tg_values_read(put("1 0.5\r\n-2.5\t6\n\n3e-3   -7\n4 1e10\n"), &bed, 0, &t, &err);
    ok(!st && same_values(&t, v1, 4, 2) && t.nid == 0 && !strcmp(t.names[0], "COL1") &&
           !strcmp(t.names[1], "COL2") && t.pieces == 1,
       "no header: 4 SNP rows x 2 columns read (one piece), names COL1 COL2 %s", err.msg);
    tg_values_free(&t);
    ok(zeroed(&t), "tg_values_free zeroes");

    /* SNP header with IDs: random values written at full precision read back exactly */
    double v2[12];
    char text[2048];
    int at = snprintf(text, sizeof text, "#snp\tx\ty\tz\n");
    for (int i = 0; i < 4; i++) {
        at += snprintf(text + at, sizeof text - (size_t)at, "rs%d", i + 1);
        for (int c = 0; c < 3; c++) {
            v2[i + 4 * c] = tg_rng_normal(r) * pow(10, (double)tg_rng_below(r, 20) - 10);
            at += snprintf(text + at, sizeof text - (size_t)at, "\t%.17g", v2[i + 4 * c]);
        }
        at += snprintf(text + at, sizeof text - (size_t)at, "\n");
    }
    st = tg_values_read(put("%s", text), &bed, 0, &t, &err);
    ok(!st && same_values(&t, v2, 4, 3) && t.nid == 1 && !strcmp(t.names[2], "z"),
       "header #snp x y z: the ID column checked, 12 random values exact %s", err.msg);
    tg_values_free(&t);

    /* a header without ID columns names the values */
    const double v3[4] = {1, 2, 3, 4};
    st = tg_values_read(put("w\n1\n2\n3\n4\n"), &bed, 0, &t, &err);
    ok(!st && same_values(&t, v3, 4, 1) && t.nid == 0 && !strcmp(t.names[0], "w"),
       "header 'w': no ID column, one value column named w %s", err.msg);
    tg_values_free(&t);

    /* sample rows: FID IID, and IID alone */
    const double v4[3] = {0.25, -1, 8};
    st = tg_values_read(put("FID IID q\nf1 a 0.25\nf1 b -1\nf2 a 8\n"), &bed, 1, &t, &err);
    ok(!st && same_values(&t, v4, 3, 1) && t.nid == 2 && !strcmp(t.names[0], "q"),
       "sample rows with FID IID: 3 values %s", err.msg);
    tg_values_free(&t);
    st = tg_values_read(put("iid q\na 0.25\nb -1\na 8\n"), &bed, 1, &t, &err);
    ok(!st && same_values(&t, v4, 3, 1) && t.nid == 1, "sample rows with IID: 3 values %s",
       err.msg);
    tg_values_free(&t);

    /* TG_VALUES_MAX_COLS columns is the most */
    at = 0;
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < TG_VALUES_MAX_COLS; c++)
            at += snprintf(text + at, sizeof text - (size_t)at, "%d%c", i * 100 + c,
                           c + 1 < TG_VALUES_MAX_COLS ? ' ' : '\n');
    st = tg_values_read(put("%s", text), &bed, 0, &t, &err);
    ok(!st && t.k == TG_VALUES_MAX_COLS && t.v[3 + 4 * 63] == 363,
       "%d columns read (last value %g) %s", TG_VALUES_MAX_COLS, st ? NAN : t.v[3 + 4 * 63],
       err.msg);
    tg_values_free(&t);
}

/* A file long enough to be read in pieces on every core (1.4 MB: pieces of 64 KiB at least):
 * its values, then an error deep in it, named by line as the line-by-line reading names it. */
static void long_files(tg_rng *r) {
    enum { M = 30000, K = 3 };
    tg_snp *many = calloc(M, sizeof *many);
    char (*ids)[16] = calloc(M, sizeof *ids);
    double *want = malloc(sizeof(double) * M * K);
    for (int64_t j = 0; j < M; j++) {
        snprintf(ids[j], sizeof ids[j], "s%lld", (long long)j + 1);
        many[j].id = ids[j];
        for (int c = 0; c < K; c++) want[j + c * M] = tg_rng_uniform(r) - 0.5;
    }
    const tg_bed big = {.prefix = "big", .n_samples = 3, .n_snps = M, .samples = samples,
                        .snps = many};
    const int64_t bad_row = 21345; /* its line: the header, the rows before, the blank lines */
    const int64_t bad_line = 1 + bad_row + 1 + bad_row / 1000;
    for (int form = 0; form < 4; form++) { /* IDs + header, values only; then a bad value, then
                                            * one line too many */
        snprintf(path, sizeof path, "%s/long.txt", tmpdir);
        FILE *f = fopen(path, "w");
        if (form != 1) fprintf(f, "SNP a b c\n");
        for (int64_t j = 0; j < M + (form == 3); j++) {
            if (j % 1000 == 999) fprintf(f, " \t\n"); /* blank lines, skipped */
            if (form != 1) fprintf(f, "%s ", j < M ? ids[j] : "extra");
            for (int c = 0; c < K; c++)
                if (form == 2 && j == bad_row && c == 1)
                    fprintf(f, "x%s", c + 1 < K ? " " : "");
                else
                    fprintf(f, "%.17g%s", j < M ? want[j + c * M] : 0.0, c + 1 < K ? " " : "");
            fprintf(f, j % 7 ? "\n" : "\r\n");
        }
        fclose(f);
        tg_values t;
        tg_error err = {0};
        tg_status st = tg_values_read(path, &big, 0, &t, &err);
        char line[64];
        snprintf(line, sizeof line, "line %lld, column 3 (b)", (long long)bad_line);
        if (form < 2)
            ok(!st && same_values(&t, want, M, K) && t.nid == (form == 0) && t.pieces > 1,
               "%d rows read in %d pieces %s, CRLF and blank lines among them: the values "
               "written (%s)", M, t.pieces, form ? "without a header" : "with IDs",
               st ? err.msg : "ok");
        else if (form == 2)
            ok(st == TG_ERR_FORMAT && strstr(err.msg, line) && zeroed(&t),
               "a bad value at data row %lld of %d: %s", (long long)bad_row + 1, M, err.msg);
        else
            ok(st == TG_ERR_FORMAT && strstr(err.msg, "more data lines than the 30000 SNPs") &&
                   zeroed(&t), "one data line too many: %s", err.msg);
        if (!st) tg_values_free(&t);
    }
    unlink(path);
    free(want);
    free(ids);
    free(many);
}

static void bad_files(void) {
    bad("empty file", 0, "empty file", "\n\n");
    bad("a short line", 0, "line 3: 1 fields, expected 2", "1 2\n3 4\n5\n6 7\n");
    bad("a long line", 0, "line 2: 3 fields, expected 2", "1 2\n3 4 5\n5 6\n7 8\n");
    bad("text among the values (the column counted in the file)", 0, "line 4, column 3 (y): 'abc' is not a finite number",
        "SNP x y\nrs1 1 2\nrs2 3 4\nrs3 5 abc\nrs4 7 8\n");
    bad("an infinity", 0, "line 1, column 1 (COL1): 'inf'", "inf\n1\n2\n3\n");
    bad("a NaN", 0, "line 2, column 1 (COL1): 'nan'", "1\nnan\n2\n3\n");
    bad("IDs without a header", 0, "(ID columns need a header line naming them)",
        "1 2\nrs2 3\n");
    bad("a SNP out of order", 0, "line 3: SNP 'rs3' but SNP 2 of fs.bim is 'rs2'",
        "SNP v\nrs1 1\nrs3 2\nrs2 3\nrs4 4\n");
    bad("a sample out of order", 1, "line 3: sample 'f2 a' but sample 2 of fs.fam is 'f1 b'",
        "FID IID v\nf1 a 1\nf2 a 2\nf1 b 3\n");
    bad("too many lines", 0, "line 5: more data lines than the 4 SNPs of fs", "1\n2\n3\n4\n5\n");
    bad("too few lines", 1, "2 data lines, expected 3 (one per sample of fs)", "1\n2\n");
    bad("no value column", 0, "line 1: no value columns", "SNP\nrs1\n");
    char wide[1024];
    int at = 0;
    for (int c = 0; c <= TG_VALUES_MAX_COLS; c++)
        at += snprintf(wide + at, sizeof wide - (size_t)at, "%d ", c);
    snprintf(wide + at, sizeof wide - (size_t)at, "\n");
    bad("65 columns", 0, "line 1: 65 value columns, at most 64", wide);

    /* a line whose first byte is NUL (fuzz/fuzz_values: its first field was read from the stack) */
    tg_values t;
    tg_error err = {0};
    tg_status st = tg_values_read(put("\n%c 9\n1\n2\n3\n4\n", 0), &bed, 0, &t, &err);
    ok(st == TG_ERR_FORMAT && strstr(err.msg, "line 2: a NUL byte before any field") && zeroed(&t),
       "a NUL byte first on a line: %s", err.msg);
    snprintf(path, sizeof path, "%s/none.txt", tmpdir);
    st = tg_values_read(path, &bed, 0, &t, &err);
    ok(st == TG_ERR_IO && strstr(err.msg, path) && zeroed(&t), "missing file: %s", err.msg);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tg_values_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    tap_plan(26);
    good_files(&r);
    long_files(&r);
    bad_files();
    unlink(path);
    snprintf(path, sizeof path, "%s/values.txt", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    return tap_done();
}
