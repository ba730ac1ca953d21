/* Phenotype files (src/io/pheno.c). The files are written here with fprintf from known values
 * (not with tg_pheno_write), rows shuffled and some samples left out, and every value read is
 * compared with the value written for that sample; then a write → read round trip, a file of
 * 100 000 shuffled rows (hash matching at scale), a FIFO, and bad inputs, each of which must name
 * the file and the line and leave a zeroed tg_pheno. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/rng.h"
#include "tap.h"
#include "tilegwas.h"

static char tmpdir[64];
static char path[128];

/* Writes tmpdir/pheno.txt from a printf format; returns its path. */
static const char *put(const char *fmt, ...) {
    snprintf(path, sizeof path, "%s/pheno.txt", tmpdir);
    FILE *f = fopen(path, "w");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
    return path;
}

typedef struct {
    int64_t n;
    tg_sample *s;
    char *names; /* the ID strings */
} samples;

/* n samples in families of 2: FID "F<i/2>", IID "I<i%2>", so IIDs repeat across families. */
static samples make_samples(int64_t n) {
    samples x = {n, calloc((size_t)n, sizeof(tg_sample)), malloc((size_t)n * 48)};
    for (int64_t i = 0; i < n; i++) {
        char *fid = x.names + i * 48, *iid = fid + 24;
        snprintf(fid, 24, "F%" PRId64, i / 2);
        snprintf(iid, 24, "I%" PRId64, i % 2);
        x.s[i] = (tg_sample){.fid = fid, .iid = iid, .father = "0", .mother = "0"};
    }
    return x;
}

static void shuffle(int64_t *a, int64_t n, tg_rng *r) {
    for (int64_t k = n - 1; k > 0; k--) {
        int64_t j = (int64_t)tg_rng_below(r, (uint64_t)k + 1), t = a[k];
        a[k] = a[j], a[j] = t;
    }
}

static int same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static int zeroed(const tg_pheno *p) {
    return !p->names && !p->values && !p->n_cols && !p->n_samples;
}

/* The file of tmpdir/pheno.txt must be refused with a message naming it and containing @p s. */
static void expect_fail(const samples *x, const char *s, const char *what) {
    tg_pheno p;
    memset(&p, 0x7f, sizeof p);
    tg_error err = {0};
    tg_status st = tg_pheno_read(path, x->s, x->n, &p, &err);
    int good = st == TG_ERR_FORMAT && strstr(err.msg, path) && strstr(err.msg, s) && zeroed(&p);
    ok(good, "%s: %s", what, err.msg);
    if (!good) diag("status %d, wanted '%s'", st, s);
    if (st == TG_OK) tg_pheno_free(&p);
}

/* A header file with 3 columns: 30 of 40 samples in shuffled order, missing codes spread
 * over the values, the other 10 samples absent. */
static void header_file(const samples *x, tg_rng *r) {
    static const char *miss[] = {"-9", "NA", "nan", "NaN", "-9.0", "na"};
    const int64_t n = x->n, present = 30;
    int64_t *order = malloc((size_t)n * sizeof *order);
    double *want = malloc((size_t)n * 3 * sizeof *want);
    for (int64_t i = 0; i < n; i++) order[i] = i;
    shuffle(order, n, r);
    for (int64_t k = 0; k < 3 * n; k++) want[k] = NAN;
    put("FID IID height bmi\tage\n");
    FILE *f = fopen(path, "a");
    for (int64_t k = 0; k < present; k++) {
        int64_t i = order[k];
        fprintf(f, "%s\t%s", x->s[i].fid, x->s[i].iid);
        for (int c = 0; c < 3; c++) {
            if (tg_rng_below(r, 5) == 0) {
                fprintf(f, " %s", miss[tg_rng_below(r, 6)]);
            } else {
                want[i + c * n] = tg_rng_normal(r) * 10;
                fprintf(f, "  %.17g", want[i + c * n]);
            }
        }
        fprintf(f, k % 2 ? "\r\n" : "\n");
        if (k == 10) fprintf(f, "\n \t\n"); /* blank lines in the middle */
    }
    fprintf(f, "\n\n");
    fclose(f);
    tg_pheno p;
    tg_error err = {0};
    tg_status st = tg_pheno_read(path, x->s, n, &p, &err);
    ok(st == TG_OK && p.n_cols == 3 && p.n_samples == n && strcmp(p.names[0], "height") == 0 &&
           strcmp(p.names[1], "bmi") == 0 && strcmp(p.names[2], "age") == 0,
       "header: 3 named columns, n_samples = list size (%s)", st ? err.msg : "ok");
    if (st == TG_OK) {
        int good = 1, absent = 1;
        for (int64_t k = 0; k < 3 * n; k++) good &= same(p.values[k], want[k]);
        for (int64_t k = present; k < n; k++)
            for (int c = 0; c < 3; c++) absent &= isnan(p.values[order[k] + c * n]);
        ok(good, "shuffled rows matched by FID+IID; -9, -9.0, NA, na, nan, NaN read as missing");
        ok(absent, "the 10 samples absent from the file are NAN");

        /* round trip through tg_pheno_write */
        char out[160];
        snprintf(out, sizeof out, "%s/out.pheno", tmpdir);
        tg_pheno q;
        st = tg_pheno_write(out, x->s, &p, &err);
        FILE *g = fopen(out, "r");
        char head[64] = "", row[256] = "";
        if (g) {
            if (!fgets(head, sizeof head, g) || !fgets(row, sizeof row, g)) head[0] = '\0';
            fclose(g);
        }
        ok(st == TG_OK && strcmp(head, "FID\tIID\theight\tbmi\tage\n") == 0 &&
               (!isnan(p.values[0]) || strstr(row, "\tNA")),
           "write: tab-separated header, NA for missing");
        st = tg_pheno_read(out, x->s, n, &q, &err);
        good = st == TG_OK && q.n_cols == 3 && strcmp(q.names[1], "bmi") == 0;
        for (int64_t k = 0; good && k < 3 * n; k++) good &= same(q.values[k], p.values[k]);
        ok(good, "write → read round trip is exact (%s)", st ? err.msg : "ok");
        if (st == TG_OK) tg_pheno_free(&q);
        tg_pheno_free(&p);
    }
    free(order);
    free(want);
}

static void no_header(const samples *x) {
    tg_pheno p;
    tg_error err = {0};
    put("F1 I1 1.5 -9\nF0 I0 NA 2e3\n");
    tg_status st = tg_pheno_read(path, x->s, x->n, &p, &err);
    ok(st == TG_OK && p.n_cols == 2 && strcmp(p.names[0], "PHENO1") == 0 &&
           strcmp(p.names[1], "PHENO2") == 0 && p.values[3] == 1.5 && isnan(p.values[3 + x->n]) &&
           isnan(p.values[0]) && p.values[0 + x->n] == 2000 && isnan(p.values[1]),
       "no header: PHENO1, PHENO2; values of F1 I1 and F0 I0 in .fam order");
    if (st == TG_OK) tg_pheno_free(&p);
    put("#FID\tIID\ty\nF0 I1 7\n");
    st = tg_pheno_read(path, x->s, x->n, &p, &err);
    ok(st == TG_OK && p.n_cols == 1 && strcmp(p.names[0], "y") == 0 && p.values[1] == 7,
       "#FID IID header");
    if (st == TG_OK) tg_pheno_free(&p);
}

/* 100 000 shuffled rows, values a function of the sample index. */
static void large(tg_rng *r) {
    const int64_t n = 100000;
    samples x = make_samples(n);
    int64_t *order = malloc((size_t)n * sizeof *order);
    for (int64_t i = 0; i < n; i++) order[i] = i;
    shuffle(order, n, r);
    put("");
    FILE *f = fopen(path, "w");
    for (int64_t k = 0; k < n; k++)
        fprintf(f, "%s %s %" PRId64 "\n", x.s[order[k]].fid, x.s[order[k]].iid, order[k] * 3);
    fclose(f);
    tg_pheno p;
    tg_error err = {0};
    tg_status st = tg_pheno_read(path, x.s, n, &p, &err);
    int good = st == TG_OK;
    for (int64_t i = 0; good && i < n; i++) good &= p.values[i] == (double)(i * 3);
    ok(good, "100000 shuffled rows matched (%s)", st ? err.msg : "ok");
    if (st == TG_OK) tg_pheno_free(&p);
    free(order);
    free(x.s);
    free(x.names);
}

/* A FIFO, as bash's --pheno <(...) gives: no size known in advance, the buffer must grow. */
static void from_pipe(const samples *x) {
    snprintf(path, sizeof path, "%s/fifo", tmpdir);
    if (mkfifo(path, 0600) != 0) {
        ok(0, "mkfifo %s", path);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = fopen(path, "w");
        fprintf(f, "FID IID %s\n", "y");
        for (int rep = 0; rep < 500; rep++) fprintf(f, "%*s\n", 100, ""); /* 50 kB of blanks */
        for (int64_t i = 0; i < x->n; i++)
            fprintf(f, "%s %s %d\n", x->s[i].fid, x->s[i].iid, (int)i);
        fclose(f);
        _exit(0);
    }
    tg_pheno p;
    tg_error err = {0};
    tg_status st = tg_pheno_read(path, x->s, x->n, &p, &err);
    waitpid(pid, NULL, 0);
    int good = st == TG_OK;
    for (int64_t i = 0; good && i < x->n; i++) good &= p.values[i] == (double)i;
    ok(good, "read from a FIFO (%s)", st ? err.msg : "ok");
    if (st == TG_OK) tg_pheno_free(&p);
    unlink(path);
}

static void bad_inputs(const samples *x) {
    put("FID IID a b\nF0 I0 1 2\nF1 I0 1 2\nF9 I9 1 2\n");
    expect_fail(x, "line 4: sample 'F9 I9' (FID IID) is not in the sample list", "unknown ID");
    put("FID IID a b\nF0 I0 1 2\n\nF1 I0 1 2\nF0 I0 3 4\n");
    expect_fail(x, "line 5: duplicate sample 'F0 I0' (FID IID), first on line 2", "duplicate ID");
    put("FID IID a b\nF0 I0 1 2\nF1 I0 1 2\nF1 I1 1 x2\n");
    expect_fail(x, "line 4: column 4 (b): 'x2' is not a number", "non-numeric value");
    put("F0 I0 1 2\nF1 I1 1 inf\n");
    expect_fail(x, "line 2: column 4 (PHENO2): 'inf'", "infinite value");
    put("FID IID a b\nF0 I0 1 2\nF1 I0 1\n");
    expect_fail(x, "line 3: expected 4 columns (FID IID and 2 values), found 3", "short line");
    put("F0 I0 1 2\nF1 I0 1 2 3\n");
    expect_fail(x, "line 2: expected 4 columns (FID IID and 2 values), found 5", "long line");
    put("");
    expect_fail(x, "is empty", "empty file");
    put("\n \r\n\n");
    expect_fail(x, "is empty", "file of blank lines");
    put("FID IID a\n\n");
    expect_fail(x, "header line but no data lines", "header only");
    put("\nF0 I0\nF1 I1\n");
    expect_fail(x, "line 2: expected FID, IID and at least one value column, found 2",
                "no value column");

    tg_pheno p;
    tg_error err = {0};
    snprintf(path, sizeof path, "%s/none.txt", tmpdir);
    tg_status st = tg_pheno_read(path, x->s, x->n, &p, &err);
    ok(st == TG_ERR_IO && strstr(err.msg, "cannot open") && strstr(err.msg, path) && zeroed(&p),
       "missing file: %s", err.msg);

    /* a sample list with a repeated ID is the caller's error */
    put("F0 I0 1\n");
    tg_sample two[2] = {x->s[0], x->s[0]};
    st = tg_pheno_read(path, two, 2, &p, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "twice") && zeroed(&p),
       "duplicate in the sample list: %s", err.msg);

    /* write: a column name with a space would break the header */
    double v[40] = {0};
    char *names[1] = {"body mass"};
    tg_pheno w = {.n_samples = x->n, .n_cols = 1, .names = names, .values = v};
    snprintf(path, sizeof path, "%s/w.txt", tmpdir);
    st = tg_pheno_write(path, x->s, &w, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "'body mass'"), "write refuses a name with a space: %s",
       err.msg);
    snprintf(path, sizeof path, "%s/nodir/w.txt", tmpdir);
    names[0] = "bmi";
    st = tg_pheno_write(path, x->s, &w, &err);
    ok(st == TG_ERR_IO && strstr(err.msg, path), "write into a missing folder: %s", err.msg);
}

int main(void) {
    tg_rng r;
    uint64_t seed = tap_seed();
    tg_rng_seed(&r, seed);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_pheno.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp failed\n");
        return 1;
    }
    samples x = make_samples(40);
    header_file(&x, &r);
    no_header(&x);
    large(&r);
    from_pipe(&x);
    bad_inputs(&x);
    free(x.s);
    free(x.names);
    static const char *files[] = {"pheno.txt", "out.pheno"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[k]);
        unlink(path);
    }
    rmdir(tmpdir);
    tap_plan(tap_n);
    return tap_done();
}
