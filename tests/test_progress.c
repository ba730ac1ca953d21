/* Progress of long phases.
 * The CLI's reporter (src/cli/progress.c) on a fake clock: without a terminal only whole lines
 * (no \r), at most one per 2 s, and a last line with done = total; on a terminal \r lines at
 * most every 0.1 s ending with one newline; the rate and the ETA on each line equal done /
 * elapsed and (total − done) / rate computed here; counts past 100,000 with SI prefixes; a
 * phase announced with total −1 keeps its start; silent prints nothing.
 * The library's hook (tg_progress_set) on real runs: the phases of tg_ridge_chol (xtx,
 * cholesky, solve, after the genotypes' pass over its m SNPs), the encoding and tg_geno_mul,
 * and tg_grm come in order, each first with total −1, done never
 * decreasing, done = total only in its last call; snpmm's total is 2·n·m·k; the solve's total
 * equals the flops of the tasks StarPU recorded for it; no hook, no call. */
#include <stdint.h>
#include <string.h>

#include "cli/cli.h"
#include "runtime/runtime.h"
#include "tap.h"

/* ------------------------------------------------------------------ the reporter */

static double fake_now;
static double fake_clock(void) { return fake_now; }

/* The text written to @p f since the start, NUL-terminated into @p buf. */
static const char *text(FILE *f, char *buf, size_t len) {
    fflush(f);
    long at = ftell(f);
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = 0;
    fseek(f, at, SEEK_SET);
    return buf;
}

static int count_char(const char *s, char c) {
    int n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

/* Parses "LABEL: D/T UNIT (P%), R UNIT/s, Es elapsed, ETA As" (or "done"); returns the fields
 * read. */
static int parse(const char *line, double *done, double *total, double *pct, double *rate,
                 double *elapsed, double *eta) {
    char unit[32], unit2[40];
    *eta = -1;
    int n = sscanf(line, "%*[^:]: %lf/%lf %31s (%lf%%), %lf %39[^,], %lfs elapsed, ETA %lfs",
                   done, total, unit, pct, rate, unit2, elapsed, eta);
    return n;
}

static void test_reporter(void) {
    char buf[8192];
    FILE *f = tmpfile();
    tg_cli_progress p;

    /* not a terminal: whole lines, at most one per 2 s */
    tg_cli_progress_init(&p, f, 0, 0, fake_clock);
    fake_now = 100;
    tg_cli_progress_start(&p, "build", 1000, "tiles");
    for (int s = 1; s <= 18; s++) { /* every 0.5 s, 40 tiles more */
        fake_now = 100 + 0.5 * s;
        tg_cli_progress_update(&p, 40 * s);
    }
    text(f, buf, sizeof buf);
    int lines = count_char(buf, '\n');
    ok(lines == 4 && !strchr(buf, '\r'),
       "not a terminal, 9 s of updates every 0.5 s: 4 whole lines (one per 2 s), no \\r (%d)",
       lines);
    /* the fourth line, at 8 s: 640 tiles, rate 640 / 8, ETA (1000 − 640) / rate */
    const char *l4 = buf;
    for (int i = 0; i < 3; i++) l4 = strchr(l4, '\n') + 1;
    double d, t, pct, r, el, eta, rate = 640 / 8.0;
    int nf = parse(l4, &d, &t, &pct, &r, &el, &eta);
    ok(nf == 8 && d == 640 && t == 1000 && fabs(pct - 64) < 0.05 && fabs(r - rate) < 0.05 &&
           fabs(el - 8) < 0.05 && fabs(eta - (1000 - 640) / rate) < 0.05,
       "line at 8 s: 640/1000 (64.0%%), rate done/elapsed = %g tiles/s, ETA (total-done)/rate "
       "= %g s: %.*s", rate, (1000 - 640) / rate, (int)(strchr(l4, '\n') - l4), l4);
    fake_now = 110;
    tg_cli_progress_update(&p, 1000);
    text(f, buf, sizeof buf);
    const char *last = strrchr(buf, '\n');
    while (last > buf && last[-1] != '\n') last--;
    nf = parse(last, &d, &t, &pct, &r, &el, &eta);
    ok(count_char(buf, '\n') == 5 && d == 1000 && t == 1000 && strstr(last, ", done\n") &&
           fabs(r - 100) < 0.05,
       "done = total ends the phase at once with a last line, done/total 1000/1000, 100 "
       "tiles/s over 10 s: %s", last);
    fake_now = 111;
    tg_cli_progress_update(&p, 1000);
    tg_cli_progress_end(&p);
    ok(count_char(text(f, buf, sizeof buf), '\n') == 5, "nothing after the phase's last line");
    fclose(f);

    /* a terminal: \r lines every 0.1 s at most, one newline at the end */
    f = tmpfile();
    tg_cli_progress_init(&p, f, 1, 0, fake_clock);
    fake_now = 0;
    tg_cli_progress_start(&p, "cholesky", 5000000000, "flop");
    for (int s = 1; s <= 16; s++) { /* every 1/16 s (exact in binary) */
        fake_now = s / 16.0;
        tg_cli_progress_update(&p, 250000000LL * s);
    }
    text(f, buf, sizeof buf);
    int cr = count_char(buf, '\r');
    ok(cr == 8 && count_char(buf, '\n') == 0,
       "terminal, 1 s of updates every 1/16 s: 8 \\r lines (every second update: 0.1 s apart "
       "at least), no newline yet (%d)", cr);
    /* at 1 s: 4G of 5G, 4 Gflop/s, ETA 1G / 4G/s = 0.25 s, to one decimal */
    ok(strstr(buf, "\rcholesky: 4G/5G flop (80.0%), 4 Gflop/s, 1.0s elapsed, ETA 0.2s\033[K") != NULL,
       "SI prefixes past 100,000 and in the rate: 4G/5G flop at 1 s, 4 Gflop/s, ETA 0.25 s");
    tg_cli_progress_end(&p);
    text(f, buf, sizeof buf);
    size_t len = strlen(buf);
    ok(len > 0 && buf[len - 1] == '\n' && count_char(buf, '\n') == 1 &&
           strstr(strrchr(buf, '\r'), "4G/5G flop") && strstr(strrchr(buf, '\r'), ", done"),
       "end(): the last \\r line with its figures and one newline");
    fclose(f);

    /* the hook: total −1 starts the clock, the total comes later; a new name, a new phase */
    f = tmpfile();
    tg_cli_progress_init(&p, f, 0, 0, fake_clock);
    fake_now = 10;
    tg_cli_progress_hook(&p, "gram", "op", 0, -1);
    fake_now = 14;
    tg_cli_progress_hook(&p, "gram", "op", 3000, 6000);
    fake_now = 15;
    tg_cli_progress_hook(&p, "kernel", "op", 10, 100);
    fake_now = 16;
    tg_cli_progress_hook(&p, "kernel", "op", 100, 100);
    text(f, buf, sizeof buf);
    const char *k = strstr(buf, "kernel");
    nf = parse(buf, &d, &t, &pct, &r, &el, &eta);
    ok(nf == 8 && d == 3000 && t == 6000 && fabs(el - 4) < 0.05 && fabs(r - 750) < 0.05 && k,
       "total -1 keeps the start: gram 3000/6000 after 4 s, 750 op/s; then kernel: %s", buf);
    const char *gl = strstr(buf, "\ngram");
    ok(gl && gl < k && strstr(gl, "3000/6000") && strstr(gl, ", done") &&
           strstr(k, "kernel: 100/100 op") && count_char(buf, '\n') == 3,
       "a new phase name ends the running one with its last line (3 lines)");
    fclose(f);

    f = tmpfile();
    tg_cli_progress_init(&p, f, 0, 1, fake_clock);
    tg_cli_progress_start(&p, "grm", 10, "products");
    fake_now = 100;
    tg_cli_progress_update(&p, 5);
    tg_cli_progress_hook(&p, "grm", "products", 10, 10);
    tg_cli_progress_end(&p);
    ok(count_char(text(f, buf, sizeof buf), '\n') == 0 && !*buf, "silent: nothing written");
    fclose(f);
}

/* ------------------------------------------------------------------ the library's hook */

#define MAXCALLS 100000
static struct call {
    const char *phase;
    int64_t done, total;
} calls[MAXCALLS];
static int ncalls;

static void record(void *ctx, const char *phase, const char *unit, int64_t done, int64_t total) {
    (void)ctx;
    (void)unit;
    if (ncalls < MAXCALLS) calls[ncalls++] = (struct call){phase, done, total};
}

/* The calls from @p from on form the phases @p names in this order, each well formed; the last
 * totals are stored in @p totals. */
static int phases_ok(int from, const char *const *names, int n, int64_t *totals) {
    int c = from, good = 1;
    for (int q = 0; q < n && good; q++) {
        if (c >= ncalls || strcmp(calls[c].phase, names[q]) || calls[c].total != -1) {
            diag("phase %s: no first call with total -1 (call %d)", names[q], c);
            return 0;
        }
        int64_t prev = 0;
        for (c++; c < ncalls && !strcmp(calls[c].phase, names[q]); c++) {
            const struct call *x = &calls[c];
            int last = c + 1 == ncalls || strcmp(calls[c + 1].phase, names[q]);
            if (x->done < prev || x->total < 0 || (x->done == x->total) != last) {
                diag("phase %s, call %d: done %lld, total %lld", names[q], c, (long long)x->done,
                     (long long)x->total);
                good = 0;
            }
            prev = x->done;
            totals[q] = x->total;
        }
    }
    return good && c == ncalls;
}

static void test_library(void) {
    tg_error err;
    tg_runtime_opts o = tg_runtime_defaults();
    o.ngpu = 0;
    if (tg_runtime_start(&o, &err)) {
        ok(0, "runtime start: %s", err.msg);
        return;
    }
    uint64_t seed = tap_seed();
    tg_rng rng;
    tg_rng_seed(&rng, seed);
    const int64_t n = 300, m = 700, k = 3;
    int8_t *g = malloc((size_t)(n * m));
    double *y = malloc((size_t)n * sizeof *y), *beta = malloc((size_t)m * sizeof *beta), mu;
    double *in = malloc((size_t)(m * k) * sizeof *in), *out = malloc((size_t)(n * k) * sizeof *out);
    double *K = malloc((size_t)(n * n) * sizeof *K);
    for (int64_t i = 0; i < n * m; i++) g[i] = (int8_t)(tg_rng_u64(&rng) % 3);
    for (int64_t i = 0; i < n; i++) y[i] = tg_rng_normal(&rng);
    for (int64_t i = 0; i < m * k; i++) in[i] = tg_rng_normal(&rng);

    tg_ridge_chol_opts ro = tg_ridge_chol_defaults();
    ro.lambda = 10;
    ro.nb = 128;
    ro.chol.allowed = 1u << TG_FP64;
    tg_status st = tg_ridge_chol(g, n, m, n, 1, 1, y, n, &ro, beta, m, &mu, NULL, &err);
    ok(st == TG_OK && ncalls == 0, "no hook: no call (%s)", st ? err.msg : "ok");

    tg_progress_set(record, NULL);
    st = tg_ridge_chol(g, n, m, n, 1, 1, y, n, &ro, beta, m, &mu, NULL, &err);
    static const char *const rr_phases[] = {"genotypes", "xtx", "cholesky", "solve"};
    int64_t tot[4] = {0};
    int good = phases_ok(0, rr_phases, 4, tot);
    ok(st == TG_OK && good && tot[0] == m,
       "ridge by Cholesky: genotypes (m SNPs), xtx, cholesky, solve in order, each from total -1 "
       "to done = total in its last call only (%d calls)", ncalls);
    ok(tot[2] >= m * m * m / 3, "cholesky counts at least m^3/3 flops (%lld)", (long long)tot[2]);

    tg_geno *geno = NULL;
    int from = ncalls;
    st = tg_geno_from_int8(g, n, m, n, 1, &geno, &err);
    if (!st) st = tg_geno_mul(geno, 0, k, TG_FP64, in, m, out, n, &err);
    static const char *const mul_phase[] = {"genotypes", "snpmm"};
    good = phases_ok(from, mul_phase, 2, tot);
    ok(st == TG_OK && good && tot[0] == m && tot[1] == 2 * n * m * k,
       "encoding then snpmm: m = %lld SNPs (%lld), then one phase of 2nmk = %lld flops (%lld)",
       (long long)m, (long long)tot[0], (long long)(2 * n * m * k), (long long)tot[1]);

    from = ncalls;
    if (!st) st = tg_grm(geno, K, n, &err);
    static const char *const grm_phase[] = {"grm"};
    good = phases_ok(from, grm_phase, 1, tot);
    ok(st == TG_OK && good && tot[0] == 2 * ((n + 63) / 64),
       "grm: one phase of 2*ceil(n/64) = %lld products (%lld), with no phase of its own products",
       (long long)(2 * ((n + 63) / 64)), (long long)tot[0]);
    tg_geno_free(geno);

    /* the solve's flops against StarPU's records of its tasks */
    tg_matrix *A = NULL, *B = NULL;
    double *a = malloc((size_t)(n * n) * sizeof *a);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) a[i + j * n] = (i == j ? n : 0) + 1.0 / (1 + i + j);
    if (!(st = tg_matrix_create(&A, n, n, 64, 64, TG_SYM_LOWER, TG_FP64, 0, 0, &err)) &&
        !(st = tg_matrix_from_dense(A, a, n, &err)) &&
        !(st = tg_matrix_create(&B, n, 2, 64, 2, TG_GENERAL, TG_FP64, 0, 0, &err)) &&
        !(st = tg_matrix_from_dense(B, a, n, &err)))
        st = tg_cholesky(A, NULL, NULL, &err);
    tg_runtime_wait_all();
    from = ncalls;
    tg_record_start(0);
    if (!st) st = tg_chol_solve(A, B, &err);
    size_t nrec = 0;
    tg_task_record *rec = tg_record_stop(&nrec);
    double work = 0;
    for (size_t i = 0; i < nrec; i++) work += rec[i].work;
    static const char *const solve_phase[] = {"solve"};
    good = phases_ok(from, solve_phase, 1, tot);
    ok(st == TG_OK && good && nrec > 0 &&
           (double)tot[0] == work,
       "solve: the total is the flops of the %zu tasks recorded (%.0f, hook %lld)", nrec, work,
       (long long)tot[0]);
    free(rec);
    tg_progress_set(NULL, NULL);
    tg_matrix_destroy(A);
    tg_matrix_destroy(B);
    tg_runtime_stop();
    free(a);
    free(K);
    free(in);
    free(out);
    free(g);
    free(y);
    free(beta);
}

int main(void) {
    tap_plan(16);
    test_reporter();
    test_library();
    return tap_done();
}
