/* The GRM by blocks of rows (tg_grm_rows, tg_grm_lower: tile tasks) against a naive double
 * reference on random genotypes with missing calls, a monomorphic and an all-missing SNP, for
 * every kind, both divisors (pairwise counts, meanimpute), tile sizes that do and do not divide n
 * (16, 7, 53: the INT8 and the FP64 paths, diagonal and off-diagonal tiles, square rows), and
 * SNPs past the codelets' chunks (4,500: 1,024 a chunk on CPUs, 4,096 on GPUs). Everything runs
 * on CPU workers; then, when there is a GPU, again on the CUDA workers alone, against the same
 * reference and against the CPU's matrices (within 1e-12 of the largest entry; the pair counts
 * equal). TG_REQUIRE_GPU=1 makes a missing GPU a failure. Also the files' "%.6g" formatter
 * (tg_format_g6) against printf's on a million values, rounding ties and decade edges included. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codelets/grm.h"
#include "common.h"
#include "geno/pass.h"
#include "io/grm_out.h"
#include "runtime/runtime.h"
#include "tap.h"

/* the data sets: samples, SNPs, missing calls */
static const struct {
    int64_t n, m;
    int missing;
} sets[] = {{53, 97, 0}, {53, 97, 1}, {70, 4500, 1}};
enum { NSETS = 3, NKINDS = TG_GRM_VANRADEN + 1, NRUNS = 5 };
static const int nbs[NRUNS - 1] = {0, 7, 16, 53}; /* rows per block; run 4 is tg_grm_lower */
/* the CPU pass's matrices and counts, for the GPU pass */
static double *cpu_k[NSETS][NKINDS][2][NRUNS], *cpu_c[NSETS][NKINDS][2][NRUNS];

/* The definition, term by term: p over the calls, Z = x − 2p (0 where missing), the kinds'
 * weights and divisors (tilegwas.h, tg_grm_kind). K and the counts C are n × n, column-major. */
static void naive(const int8_t *g, int64_t n, int64_t m, tg_grm_kind kind, int meanimpute,
                  double *K, double *C) {
    double var = 0;
    memset(K, 0, (size_t)(n * n) * sizeof *K);
    memset(C, 0, (size_t)(n * n) * sizeof *C);
    for (int64_t k = 0; k < m; k++) {
        const int8_t *x = g + k * n;
        double a = 0, obs = 0;
        for (int64_t i = 0; i < n; i++)
            if (x[i] != TG_GENO_MISSING) a += x[i], obs++;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                C[i + j * n] += x[i] != TG_GENO_MISSING && x[j] != TG_GENO_MISSING;
        double p = obs > 0 ? a / (2 * obs) : NAN;
        if (!(p > 0 && p < 1)) continue;
        var += 2 * p * (1 - p);
        double w = kind == TG_GRM_STANDARDISED ? 1 / (2 * p * (1 - p)) : 1;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                if (x[i] != TG_GENO_MISSING && x[j] != TG_GENO_MISSING)
                    K[i + j * n] += w * (x[i] - 2 * p) * (x[j] - 2 * p);
    }
    for (int64_t e = 0; e < n * n; e++) {
        if (meanimpute) C[e] = (double)m;
        K[e] /= kind == TG_GRM_VANRADEN ? var : C[e];
    }
}

struct rows {
    int64_t n;
    int square;
    double *K, *C; /* n × n column-major: what the callback received */
    int64_t next;  /* rows must come in order, each once */
    int order_ok;
};

static tg_status take(void *ctx, int64_t r0, int64_t r1, const double *k, const double *nobs,
                      int64_t ld, tg_error *err) {
    struct rows *s = ctx;
    (void)err;
    s->order_ok &= r0 == s->next && r1 > r0;
    s->next = r1;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t j = 0; j < (s->square ? s->n : r + 1); j++) {
            s->K[r + j * s->n] = k[j + (r - r0) * ld];
            if (nobs) s->C[r + j * s->n] = nobs[j + (r - r0) * ld];
        }
    return TG_OK;
}

/* the largest |a − b| over the lower triangle (the whole matrix with @p square) */
static double maxdiff(const double *a, const double *b, int64_t n, int square) {
    double d = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = square ? 0 : j; i < n; i++) {
            double e = fabs(a[i + j * n] - b[i + j * n]);
            if (e > d || isnan(e)) d = e;
        }
    return d;
}

/* The largest |a − b| relative to the largest |b| over what a run gives. */
static double reldiff(const double *a, const double *b, int64_t n, int square) {
    double big = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = square ? 0 : j; i < n; i++)
            if (fabs(b[i + j * n]) > big) big = fabs(b[i + j * n]);
    return maxdiff(a, b, n, square) / (big > 0 ? big : 1);
}

/* Set @p set's checks; on the GPU pass (@p gpu) also against the CPU pass's results, which the
 * CPU pass keeps. */
static void check_matrix(const tg_bed *bed, const int8_t *g, int set, int gpu) {
    const int64_t N = sets[set].n, M = sets[set].m;
    const char *pass = gpu ? "GPU" : "CPU";
    double *R = malloc(N * N * sizeof *R), *RC = malloc(N * N * sizeof *RC);
    for (int kind = 0; kind < NKINDS; kind++)
        for (int mi = 0; mi <= 1; mi++) {
            naive(g, N, M, (tg_grm_kind)kind, mi, R, RC);
            for (int t = 0; t < NRUNS; t++) {
                double *K = calloc(N * N, sizeof *K), *C = calloc(N * N, sizeof *C);
                tg_grm_opts o = {.kind = (tg_grm_kind)kind, .meanimpute = mi, .square = t == 1,
                                 .counts = 1, .nb = t < NRUNS - 1 ? nbs[t] : 11};
                struct rows s = {N, o.square, K, C, 0, 1};
                tg_grm_info info;
                tg_error err = {0};
                tg_status st;
                if (t < NRUNS - 1) {
                    st = tg_grm_rows(bed, &o, take, &s, &info, &err);
                    s.order_ok &= s.next == N;
                } else { /* the in-memory form the pca command takes: no counts */
                    st = tg_grm_lower(bed, &o, K, N, &info, &err);
                }
                double d = st ? INFINITY : maxdiff(K, R, N, o.square),
                       dc = st ? INFINITY : t < NRUNS - 1 ? maxdiff(C, RC, N, o.square) : 0;
                ok(!st && s.order_ok && d <= 1e-13 && dc == 0,
                   "%s: %lld x %lld, %s, %s, %s calls, %s%d rows%s (%s path): max |K - naive| "
                   "%.3g, counts %s %s", pass, (long long)N, (long long)M,
                   tg_grm_kind_name((tg_grm_kind)kind), mi ? "meanimpute" : "pairwise",
                   sets[set].missing ? "missing" : "no missing",
                   t == NRUNS - 1 ? "tg_grm_lower, " : "", tg_grm_block_rows(&o),
                   o.square ? ", square" : "", info.integer ? "INT8" : "FP64", d,
                   dc == 0 ? "equal" : "differ", err.msg);
                double **ck = &cpu_k[set][kind][mi][t], **cc = &cpu_c[set][kind][mi][t];
                if (!gpu) {
                    *ck = K;
                    *cc = C;
                    continue;
                }
                double rd = st || !*ck ? INFINITY : reldiff(K, *ck, N, o.square),
                       cd = st || !*cc ? INFINITY : maxdiff(C, *cc, N, o.square);
                ok(rd <= 1e-12 && cd == 0, "GPU = CPU: max |K_gpu - K_cpu| / max |K_cpu| %.3g, "
                   "counts %s", rd, cd == 0 ? "equal" : "differ");
                free(K);
                free(C);
            }
        }
    free(R);
    free(RC);
}

/* tg_format_g6(x) = printf("%.6g", x); returns the mismatches (the first few printed) */
static long g6_mismatches(double x, long bad) {
    char a[40], b[40];
    int la = tg_format_g6(x, a);
    a[la] = 0;
    snprintf(b, sizeof b, "%.6g", x);
    if (!strcmp(a, b)) return bad;
    if (bad < 5) diag("%.17g: '%s', printf '%s'", x, a, b);
    return bad + 1;
}

static void check_format(tg_rng *r) {
    long bad = 0, n = 0;
    for (; n < 1000000; n++) { /* random magnitudes 1e-15..1e15, both signs */
        double x = (1 + 9 * tg_rng_uniform(r)) * pow(10, floor(30 * tg_rng_uniform(r)) - 15);
        bad = g6_mismatches(tg_rng_uniform(r) < 0.5 ? -x : x, bad);
    }
    /* halves at the 6th digit (exact in binary: printf's tie rule decides), the decimal edges
     * of the two styles, and values a few ulps around 6-digit rounding points */
    static const double edge[] = {0, 1, -1, 0.5, 1.5, 2.5, 1234565, 1234575, 0.0001, 9.999995e-5,
                                  0.00099999949, 999999, 999999.5, 999999.4999, 1e6, 100000,
                                  9.999995, 9.9999949999, 1e-5, 123456.5, 0.125, 1e-30, 1e30,
                                  -0.0, 3.0517578125e-05, 1e100, 1e-300, NAN, INFINITY};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++, n++) bad = g6_mismatches(edge[i], bad);
    for (int d = 100000; d < 1000000; d += 7919)
        for (int e = -8; e <= 8; e++) {
            double x = (d + 0.5) * pow(10, e - 5);
            bad = g6_mismatches(nextafter(x, 0), bad);
            bad = g6_mismatches(x, bad);
            bad = g6_mismatches(nextafter(x, 1e300), bad);
            n += 3;
        }
    ok(bad == 0, "tg_format_g6 = printf %%.6g on %ld values: %ld differ", n, bad);
}

/* tg_grm_opts.snps: the SNPs of odd index and SNP 2, against the naive GRM of
 * those columns alone, standardised and mean-imputed (what the pca command asks for). */
static void check_subset(const tg_bed *bed, const int8_t *g, int set, const char *pass) {
    const int64_t N = sets[set].n, M = sets[set].m;
    int64_t *snps = malloc(M * sizeof *snps), m = 0;
    int8_t *sub = malloc(N * M);
    for (int64_t j = 0; j < M; j++)
        if (j % 2 || j == 2) {
            memcpy(sub + m * N, g + j * N, (size_t)N);
            snps[m++] = j;
        }
    double *R = malloc(N * N * sizeof *R), *RC = malloc(N * N * sizeof *RC),
           *K = calloc(N * N, sizeof *K);
    naive(sub, N, m, TG_GRM_STANDARDISED, 1, R, RC);
    tg_grm_opts o = {.kind = TG_GRM_STANDARDISED, .meanimpute = 1, .snps = snps, .nsnps = m};
    tg_grm_info info;
    tg_error err = {0};
    tg_status st = tg_grm_lower(bed, &o, K, N, &info, &err);
    double d = st ? INFINITY : maxdiff(K, R, N, 0);
    ok(!st && info.m == m && d <= 1e-13, "%s: %lld of %lld SNPs selected (opts.snps): %lld "
       "counted, max |K - naive of those SNPs| %.3g %s", pass, (long long)m, (long long)M,
       (long long)info.m, d, err.msg);
    snps[1] = M; /* past the last SNP: refused */
    st = tg_grm_lower(bed, &o, K, N, &info, &err);
    ok(st == TG_ERR_ARG, "%s: a SNP index past the fileset's is refused: %s", pass, err.msg);
    free(snps);
    free(sub);
    free(R);
    free(RC);
    free(K);
}

/* Every set's checks with the runtime as it is started. */
static void all_sets(tg_rng *r, int gpu) {
    tg_error err = {0};
    for (int set = 0; set < NSETS; set++) {
        const int64_t N = sets[set].n, M = sets[set].m;
        int8_t *g = malloc(N * M);
        /* the same genotypes on both passes */
        tg_rng_seed(r, 2024 + (uint64_t)set);
        make_geno(r, N, M, 0.05, 0.5, sets[set].missing ? 0.08 : 0, g);
        for (int64_t i = 0; i < N; i++) g[i + 3 * N] = 2; /* monomorphic */
        if (sets[set].missing)
            for (int64_t i = 0; i < N; i++) g[i + 5 * N] = TG_GENO_MISSING; /* all missing */
        char prefix[] = "/tmp/tg_grm_XXXXXX";
        tg_bed bed = {0};
        if (write_bed_tmp(prefix, g, N, M, &err) || tg_bed_open(prefix, &bed, &err)) {
            ok(0, "fileset: %s", err.msg);
            free(g);
            break;
        }
        check_matrix(&bed, g, set, gpu);
        check_subset(&bed, g, set, gpu ? "GPU" : "CPU");
        tg_bed_close(&bed);
        remove_bed(prefix);
        free(g);
    }
}

/* The GRM's probe on cores (codelets/probes.c): its task must do the work it reports, or the
 * prior it gives StarPU is wrong: with codes 1 and weights 1 every entry S(j, i), j ≤ i, it
 * computes is the SNP count. The block tiles (tg_cl_grm) borrow its rate. */
static void check_probe(void) {
    struct starpu_codelet *cl = &tg_cl_grm_sym;
    tg_probe_task pt = {0};
    if (!ok(!tg_probe_build(cl, 1, STARPU_CPU_WORKER, NULL, &pt), "the %s probe builds its CPU "
            "tile", cl->name))
        return;
    pt.task->synchronous = 1;
    pt.task->destroy = 0;
    starpu_data_handle_t e = STARPU_TASK_GET_HANDLE(pt.task, 0),
                         s = STARPU_TASK_GET_HANDLE(pt.task, 2);
    const double k = (double)starpu_matrix_get_nx(e), n = (double)starpu_matrix_get_ny(e),
                 work = k * n * (n + 1);
    int64_t bad = -1;
    if (starpu_task_submit(pt.task) == 0) {
        starpu_data_acquire(s, STARPU_R);
        const double *v = (const double *)starpu_matrix_get_local_ptr(s);
        const int64_t ld = starpu_matrix_get_local_ld(s), nn = (int64_t)n;
        bad = 0;
        for (int64_t i = 0; i < nn; i++)
            for (int64_t j = 0; j <= i; j++) bad += v[i * ld + j] != k;
        starpu_data_release(s);
    }
    ok(bad == 0 && pt.task->flops == work, "the %s probe's %.0f × %.0f tile over %.0f SNPs: "
       "%lld entries not %.0f, work %.4g as reported %.4g", cl->name, n, n, k, (long long)bad, k,
       work, pt.task->flops);
    pt.release(pt.ctx);
    starpu_task_destroy(pt.task);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, 2024);
    check_format(&r);
    tg_runtime_opts ro = tg_runtime_defaults();
    ro.ngpu = 0;
    tg_error err = {0};
    if (tg_runtime_start(&ro, &err)) {
        ok(0, "runtime start: %s", err.msg);
        tap_plan(tap_n);
        return tap_done();
    }
    check_probe();
    /* the pass in tiles of 5 samples, which cross the blocks of 7, 16 and 53 rows (the CLI's
     * tests read in one tile: grm_vs_plink2.sh) */
    tg_geno_pass_tile_bytes(64 * 5);
    all_sets(&r, 0);
    tg_runtime_stop();
    /* the CUDA workers alone, when there are any */
    ro = tg_runtime_defaults();
    const int ngpu = gpu_count();
    if (ngpu > 0) {
        ro.ncpu = 0;
        if (ok(tg_runtime_start(&ro, &err) == TG_OK, "restart with CUDA workers only %s",
               err.msg)) {
            all_sets(&r, 1);
            tg_runtime_stop();
        }
    }
    if (getenv("TG_REQUIRE_GPU") && atoi(getenv("TG_REQUIRE_GPU")))
        ok(ngpu > 0, "the GRM ran on CUDA workers (TG_REQUIRE_GPU is set)");
    for (int set = 0; set < NSETS; set++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (int mi = 0; mi <= 1; mi++)
                for (int t = 0; t < NRUNS; t++) {
                    free(cpu_k[set][kind][mi][t]);
                    free(cpu_c[set][kind][mi][t]);
                }
    tap_plan(tap_n);
    return tap_done();
}
