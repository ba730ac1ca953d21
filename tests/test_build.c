/* The KRR Build phase: tg_kgeno_create, tg_kernel_gram, tg_kernel_apply against a naive
 * reference written here from the kernels' definitions, on the imputed genotypes (missing calls
 * → the nearest integer to the training 2p, an SNP without training calls → 0 everywhere):
 * gaussian exp(−γ(‖g_i − g_j‖² + ‖x_i − x_j‖²)) with 3 confounders x, ibs
 * 1 − Σ|g_i − g_j|/(2N_S), linear (VanRaden) Σ(g_i − 2p)(g_j − 2p)/(2Σp(1−p)) in long double.
 * A training cohort of 203 samples and a test cohort of 61 (rows picked at random from one .bed
 * of 264), 157 SNPs with 5% missing calls, one SNP missing in every training sample, one
 * monomorphic; panels of 64 samples. Checks: the frequencies and the imputed count; the INT32
 * dot products equal the integer ones exactly (symmetric and test × train); K + αI (symmetric)
 * and the test × train K in fp64 (relative Frobenius error ≤ 1e-15) and fp32 (≤ 6e-8: one
 * rounding, u = 2⁻²⁴); a single sample; bad input. Everything runs on CPU workers; then, when
 * there is a GPU, again on the CUDA workers alone, against the same reference and against the CPU's tiles
 * (per entry within 2 ulp in fp64, 1 ulp in fp32: the two exp). In each pass, K + αI built
 * directly in its map's precisions (tg_krr_build_factor) against the build in fp64 lowered
 * afterwards. TG_REQUIRE_GPU=1 makes a missing GPU a failure. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "common.h"
#include "tap.h"
#include "tilegwas.h"

enum { NTOT = 264, NTR = 203, NTE = 61, M = 157, NB = 64, NCOV = 3, SNP_NOTRAIN = 5,
       SNP_MONO = 9 };

static int8_t geno[NTOT * M];         /* A1 counts or TG_GENO_MISSING, sample-major columns */
static double covar[NTOT * NCOV];     /* confounders of every .fam sample */
static int64_t rows_tr[NTR], rows_te[NTE];
static double freq_ref[M];
static char tmpdir[64], prefix[128], prefix_short[128];
static const char *pass = "CPU";

/* Genotypes: SNP_MONO all 0 (a few missing), SNP_NOTRAIN missing in every training sample but
 * called in the test samples, the rest Hardy-Weinberg draws with p ~ U[0.05, 0.5] and 5%
 * missing calls; confounders N(0, 3²). Training and test rows are a random split. */
static void make_data(tg_rng *r) {
    int64_t perm[NTOT];
    for (int64_t i = 0; i < NTOT; i++) perm[i] = i;
    for (int64_t i = NTOT - 1; i > 0; i--) {
        int64_t k = (int64_t)tg_rng_below(r, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
    memcpy(rows_tr, perm, sizeof rows_tr);
    memcpy(rows_te, perm + NTR, sizeof rows_te);
    char train[NTOT] = {0};
    for (int i = 0; i < NTR; i++) train[rows_tr[i]] = 1;
    for (int j = 0; j < M; j++) {
        double p = 0.05 + 0.45 * tg_rng_uniform(r);
        for (int i = 0; i < NTOT; i++) {
            int8_t x = (int8_t)((tg_rng_uniform(r) < p) + (tg_rng_uniform(r) < p));
            if (j == SNP_MONO) x = 0;
            if (tg_rng_uniform(r) < 0.05 || (j == SNP_NOTRAIN && train[i])) x = TG_GENO_MISSING;
            geno[i + j * NTOT] = x;
        }
    }
    for (int k = 0; k < NTOT * NCOV; k++) covar[k] = 3 * tg_rng_normal(r);
    for (int j = 0; j < M; j++) {
        int64_t s = 0, obs = 0;
        for (int i = 0; i < NTR; i++) {
            int8_t x = geno[rows_tr[i] + j * NTOT];
            if (x != TG_GENO_MISSING) s += x, obs++;
        }
        freq_ref[j] = obs ? (double)s / (2.0 * obs) : NAN;
    }
}

/* The imputed genotype of .fam sample i at SNP j (training frequencies). */
static int gval(int64_t i, int j) {
    if (isnan(freq_ref[j])) return 0;
    int8_t x = geno[i + j * NTOT];
    return x == TG_GENO_MISSING ? (int)floor(2 * freq_ref[j] + 0.5) : x;
}

/* The integer dot product of the encodings of samples i and k: g, ([g ≥ 1], [g ≥ 2]) for ibs,
 * g − round(2p) for linear. */
static int64_t dot_ref(tg_kernel kind, int64_t i, int64_t k) {
    int64_t s = 0;
    for (int j = 0; j < M; j++) {
        int a = gval(i, j), b = gval(k, j);
        if (kind == TG_KERNEL_IBS) {
            s += (a >= 1) * (b >= 1) + (a >= 2) * (b >= 2);
        } else {
            int r = kind == TG_KERNEL_LINEAR && !isnan(freq_ref[j])
                        ? (int)floor(2 * freq_ref[j] + 0.5)
                        : 0;
            s += (a - r) * (b - r);
        }
    }
    return s;
}

static double dist2(int64_t i, int64_t k) {
    double d = 0;
    for (int j = 0; j < M; j++) d += (gval(i, j) - gval(k, j)) * (gval(i, j) - gval(k, j));
    for (int l = 0; l < NCOV; l++) {
        double t = covar[i + l * NTOT] - covar[k + l * NTOT];
        d += t * t;
    }
    return d;
}

static double kernel_ref(tg_kernel kind, double gamma, int64_t i, int64_t k) {
    if (kind == TG_KERNEL_GAUSSIAN) return exp(-gamma * dist2(i, k));
    if (kind == TG_KERNEL_IBS) {
        int s = 0;
        for (int j = 0; j < M; j++) s += abs(gval(i, j) - gval(k, j));
        return 1 - s / (2.0 * M);
    }
    long double num = 0, den = 0;
    for (int j = 0; j < M; j++) {
        if (isnan(freq_ref[j])) continue;
        long double tp = 2.0L * freq_ref[j];
        num += (gval(i, j) - tp) * (gval(k, j) - tp);
        den += (long double)freq_ref[j] * (1 - freq_ref[j]);
    }
    return (double)(num / (2 * den));
}

/* The 1/mean of the gaussian distances between distinct training samples: K neither ~0 nor ~1. */
static double gamma_for_data(void) {
    double s = 0;
    for (int i = 0; i < NTR; i++)
        for (int k = 0; k < i; k++) s += dist2(rows_tr[i], rows_tr[k]);
    return 1 / (s / (NTR * (NTR - 1) / 2.0));
}

static double *dense(const tg_matrix *A, int64_t m, int64_t n) {
    double *a = calloc((size_t)(m * n), sizeof *a);
    tg_error err = {0};
    if (tg_matrix_to_dense(A, a, m, &err)) diag("to_dense: %s", err.msg);
    return a;
}

/* The cohort of rows[0..n) for kind, confounders copied with a leading dimension > n. */
static tg_status cohort(tg_kernel kind, const int64_t *rows, int64_t n, const double *freq,
                        const tg_bed *bed, tg_kgeno **g, tg_error *err) {
    int ncov = kind == TG_KERNEL_GAUSSIAN ? NCOV : 0;
    int64_t ldc = n + 5;
    double *x = malloc((size_t)(ldc * NCOV) * sizeof *x);
    for (int l = 0; l < NCOV; l++)
        for (int64_t r = 0; r < n; r++) x[r + l * ldc] = covar[rows[r] + l * NTOT];
    tg_status st =
        tg_kgeno_create(bed, rows, n, kind, freq, ncov ? x : NULL, ncov, ldc, NB, g, err);
    free(x);
    return st;
}

/* Kernel matrices kept from the CPU pass, to compare the GPU's with: [kind][prec][sym, rect]. */
static double *cpu_k[3][2][2];

/* Entries of got within ulps units in the last place of want (precision p). */
static int within_ulps(const double *got, const double *want, int64_t m, int64_t n, int sym,
                       tg_prec p, double ulps, double *worst) {
    int bits = p == TG_FP64 ? 52 : 23, good = 1;
    *worst = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = sym ? j : 0; i < m; i++) {
            double a = got[i + j * m], b = want[i + j * m], mag = fmax(fabs(a), fabs(b));
            double ulp = mag > 0 ? ldexp(1, ilogb(mag) - bits) : 0, d = fabs(a - b);
            if (ulp > 0 && d / ulp > *worst) *worst = d / ulp;
            if (d > ulps * ulp) good = 0;
        }
    return good;
}

/* One kernel: train and test cohorts, exact dot products, K in fp64 and fp32. */
static void kernel_tests(tg_kernel kind, const tg_bed *bed, double gamma, int gpu) {
    const char *kn = tg_kernel_name(kind);
    tg_error err = {0};
    tg_kgeno *tr = NULL, *te = NULL;
    if (!ok(cohort(kind, rows_tr, NTR, NULL, bed, &tr, &err) == TG_OK &&
                cohort(kind, rows_te, NTE, tg_kgeno_freq(tr), bed, &te, &err) == TG_OK,
            "%s: training and test cohorts prepared (%s)", kn, pass)) {
        diag("%s", err.msg);
        tg_kgeno_free(tr);
        return;
    }
    int freq_ok = 1;
    for (int j = 0; j < M; j++) {
        double f = tg_kgeno_freq(tr)[j];
        freq_ok &= isnan(freq_ref[j]) ? isnan(f) : f == freq_ref[j];
    }
    int64_t miss_tr = 0, miss_te = 0;
    for (int j = 0; j < M; j++) {
        for (int i = 0; i < NTR; i++) miss_tr += geno[rows_tr[i] + j * NTOT] == TG_GENO_MISSING;
        for (int i = 0; i < NTE; i++) miss_te += geno[rows_te[i] + j * NTOT] == TG_GENO_MISSING;
    }
    ok(freq_ok && tg_kgeno_n(tr) == NTR && tg_kgeno_imputed(tr) == miss_tr &&
           tg_kgeno_imputed(te) == miss_te,
       "%s: training frequencies (NAN for the uncalled SNP) and %lld + %lld imputed calls", kn,
       (long long)miss_tr, (long long)miss_te);

    /* the dot products, exact */
    tg_matrix *cs = NULL, *cr = NULL;
    double ops = 0, ops_r = 0;
    tg_status s1 = tg_kernel_gram(tr, tr, &cs, &ops, &err);
    tg_status s2 = s1 ? s1 : tg_kernel_gram(te, tr, &cr, &ops_r, &err);
    if (!ok(s1 == TG_OK && s2 == TG_OK, "%s: gram submitted", kn)) {
        diag("%s", err.msg);
        goto done;
    }
    double *c = dense(cs, NTR, NTR), *crd = dense(cr, NTE, NTR);
    int64_t bad = 0, bad_r = 0;
    for (int j = 0; j < NTR; j++) {
        for (int i = j; i < NTR; i++)
            bad += c[i + j * NTR] != dot_ref(kind, rows_tr[i], rows_tr[j]);
        for (int i = 0; i < NTE; i++)
            bad_r += crd[i + j * NTE] != dot_ref(kind, rows_te[i], rows_tr[j]);
    }
    double len = (kind == TG_KERNEL_IBS ? 2.0 : 1.0) * M;
    ok(bad == 0 && ops == 2 * (NTR * (NTR + 1) / 2.0) * len,
       "%s: INT32 dot products of the %d training samples exact (%lld wrong), ops %.0f", kn, NTR,
       (long long)bad, ops);
    ok(bad_r == 0 && ops_r == 2.0 * NTE * NTR * len,
       "%s: test × training dot products exact (%lld wrong)", kn, (long long)bad_r);
    free(c);
    free(crd);

    /* K + αI and the test × training K */
    const double alpha = 0.375;
    static const tg_prec precs[2] = {TG_FP64, TG_FP32};
    for (int pi = 0; pi < 2; pi++) {
        tg_prec p = precs[pi];
        double tol = p == TG_FP64 ? 1e-15 : 6e-8;
        for (int rect = 0; rect < 2; rect++) {
            tg_matrix *K = NULL;
            const tg_kgeno *a = rect ? te : tr;
            int64_t m = rect ? NTE : NTR;
            const int64_t *ra = rect ? rows_te : rows_tr;
            const char *what = rect ? "test × train" : "K + αI";
            if (!ok(tg_kernel_apply(rect ? cr : cs, a, tr, gamma, alpha, p, &K, &err) == TG_OK,
                    "%s %s %s: kernel submitted", kn, tg_prec_name(p), what)) {
                diag("%s", err.msg);
                continue;
            }
            double *k = dense(K, m, NTR), e2 = 0, r2 = 0, diag_dev = 0;
            for (int j = 0; j < NTR; j++)
                for (int i = rect ? 0 : j; i < m; i++) {
                    double want = kernel_ref(kind, gamma, ra[i], rows_tr[j]) +
                                  (!rect && i == j ? alpha : 0);
                    e2 += (k[i + j * m] - want) * (k[i + j * m] - want);
                    r2 += want * want;
                    if (!rect && i == j && kind != TG_KERNEL_LINEAR)
                        diag_dev = fmax(diag_dev, fabs(k[i + j * m] - (1 + alpha)));
                }
            double rel = sqrt(e2 / r2);
            ok(rel <= tol, "%s %s %s: relative error %.3g <= %.3g vs the naive reference (%s)", kn,
               tg_prec_name(p), what, rel, tol, pass);
            /* without kept dot products (each task computes its own): the same integers,
             * the same kernel function, so the same bits */
            tg_matrix *Kf = NULL;
            tg_status sf = tg_kernel_apply(NULL, a, tr, gamma, alpha, p, &Kf, &err);
            double *kf = sf ? NULL : dense(Kf, m, NTR);
            int64_t differ = 0;
            for (int j = 0; kf && j < NTR; j++)
                for (int i = rect ? 0 : j; i < m; i++) differ += kf[i + j * m] != k[i + j * m];
            ok(kf && differ == 0, "%s %s %s: built with the dot products in each task = from "
               "the kept ones (%lld differ; %s)", kn, tg_prec_name(p), what, (long long)differ,
               sf ? err.msg : pass);
            free(kf);
            tg_matrix_destroy(Kf);
            if (!rect && kind != TG_KERNEL_LINEAR)
                ok(diag_dev == 0, "%s %s: the diagonal is exactly 1 + α", kn, tg_prec_name(p));
            if (!gpu) {
                cpu_k[kind][pi][rect] = k;
            } else if (cpu_k[kind][pi][rect]) {
                double worst = 0, ulps = kind == TG_KERNEL_GAUSSIAN ? (p == TG_FP64 ? 2 : 1) : 0;
                ok(within_ulps(k, cpu_k[kind][pi][rect], m, NTR, !rect, p, ulps, &worst),
                   "%s %s %s: GPU within %.0f ulp of the CPU (worst %.2g)", kn, tg_prec_name(p),
                   what, ulps, worst);
                free(k);
            } else {
                free(k);
            }
            tg_matrix_destroy(K);
        }
    }
done:
    tg_matrix_destroy(cs);
    tg_matrix_destroy(cr);
    tg_kgeno_free(te);
    tg_kgeno_free(tr);
}

static void bad_input_tests(const tg_bed *bed, const tg_bed *bed_short) {
    tg_error err = {0};
    tg_kernel k;
    ok(tg_kernel_parse("ibs", &k, &err) == TG_OK && k == TG_KERNEL_IBS &&
           !strcmp(tg_kernel_name(TG_KERNEL_LINEAR), "linear") &&
           tg_kernel_parse("rbf", &k, &err) == TG_ERR_ARG && strstr(err.msg, "gaussian"),
       "kernel names: parse and print; an unknown one lists the names: %s", err.msg);

    tg_kgeno *tr = NULL, *g = NULL;
    tg_matrix *C = NULL, *K = NULL;
    if (cohort(TG_KERNEL_GAUSSIAN, rows_tr, NTR, NULL, bed, &tr, &err) ||
        tg_kernel_gram(tr, tr, &C, NULL, &err)) {
        ok(0, "gaussian cohort for the bad-input tests: %s", err.msg);
        tg_kgeno_free(tr);
        return;
    }
    double gammas[] = {0, -1, NAN};
    for (int t = 0; t < 3; t++) {
        tg_status st = tg_kernel_apply(C, tr, tr, gammas[t], 0.5, TG_FP64, &K, &err);
        ok(st == TG_ERR_ARG && !K && strstr(err.msg, "gamma"), "gamma %g refused: %s", gammas[t],
           err.msg);
    }
    tg_status st = tg_kernel_apply(C, tr, tr, 0.01, -0.5, TG_FP64, &K, &err);
    ok(st == TG_ERR_ARG && !K && strstr(err.msg, "alpha"), "alpha -0.5 refused: %s", err.msg);
    st = tg_kernel_apply(C, tr, tr, 0.01, 0.5, TG_FP16, &K, &err);
    ok(st == TG_ERR_ARG && !K, "fp16 kernel tiles refused: %s", err.msg);

    /* a NAN confounder: sample 17 of the cohort, column 2 */
    double x[NTR * NCOV];
    for (int l = 0; l < NCOV; l++)
        for (int r = 0; r < NTR; r++) x[r + l * NTR] = covar[rows_tr[r] + l * NTOT];
    x[17 + NTR] = NAN;
    char want[64];
    snprintf(want, sizeof want, "column 2 of sample S%lld S%lld", (long long)rows_tr[17],
             (long long)rows_tr[17]);
    st = tg_kgeno_create(bed, rows_tr, NTR, TG_KERNEL_GAUSSIAN, NULL, x, NCOV, NTR, NB, &g, &err);
    ok(st == TG_ERR_ARG && !g && strstr(err.msg, want), "NAN confounder named (%s): %s", want,
       err.msg);
    for (int kind = TG_KERNEL_IBS; kind <= TG_KERNEL_LINEAR; kind++) {
        st = tg_kgeno_create(bed, rows_tr, NTR, (tg_kernel)kind, NULL, covar, NCOV, NTOT, NB, &g,
                             &err);
        ok(st == TG_ERR_ARG && !g && strstr(err.msg, "confounder"),
           "confounders with the %s kernel refused: %s", tg_kernel_name((tg_kernel)kind), err.msg);
    }

    /* a test cohort on another SNP set, then one not using the training frequencies */
    st = tg_kgeno_create(bed_short, rows_te, NTE, TG_KERNEL_GAUSSIAN, NULL, covar, NCOV, NTOT, NB,
                         &g, &err);
    tg_matrix *C2 = NULL;
    char counts[64];
    snprintf(counts, sizeof counts, "%d and %d SNPs", M - 1, M);
    tg_status st2 = st ? st : tg_kernel_gram(g, tr, &C2, NULL, &err);
    ok(st == TG_OK && st2 == TG_ERR_ARG && !C2 && strstr(err.msg, counts),
       "mismatched SNP counts refused (%s): %s", counts, err.msg);
    tg_kgeno_free(g);
    g = NULL;
    st = cohort(TG_KERNEL_GAUSSIAN, rows_te, NTE, NULL, bed, &g, &err);
    st2 = st ? st : tg_kernel_gram(g, tr, &C2, NULL, &err);
    ok(st == TG_OK && st2 == TG_ERR_ARG && !C2 && strstr(err.msg, "frequencies"),
       "a test cohort with its own frequencies refused: %s", err.msg);
    tg_kgeno_free(g);

    /* every sample of the .fam (rows NULL): frequencies over all of them */
    g = NULL;
    st = tg_kgeno_create(bed, NULL, NTOT, TG_KERNEL_IBS, NULL, NULL, 0, 0, NB, &g, &err);
    int fok = st == TG_OK;
    for (int j = 0; fok && j < M; j++) {
        int64_t s = 0, obs = 0;
        for (int i = 0; i < NTOT; i++)
            if (geno[i + j * NTOT] != TG_GENO_MISSING) s += geno[i + j * NTOT], obs++;
        fok = tg_kgeno_freq(g)[j] == (double)s / (2.0 * obs);
    }
    ok(fok && tg_kgeno_n(g) == NTOT, "every .fam sample (rows NULL): frequencies over all %d",
       NTOT);
    tg_kgeno_free(g);

    /* one sample: K + αI is the 1 × 1 matrix 1 + α */
    g = NULL;
    tg_matrix *C1 = NULL, *K1 = NULL;
    double k1 = 0;
    st = cohort(TG_KERNEL_GAUSSIAN, rows_te, 1, tg_kgeno_freq(tr), bed, &g, &err);
    if (!st) st = tg_kernel_gram(g, g, &C1, NULL, &err);
    if (!st) st = tg_kernel_apply(C1, g, g, 0.01, 0.5, TG_FP64, &K1, &err);
    if (!st) st = tg_matrix_to_dense(K1, &k1, 1, &err);
    ok(st == TG_OK && k1 == 1.5, "one sample: K + αI = 1 + α (%g) %s", k1, st ? err.msg : "");
    tg_matrix_destroy(K1);
    tg_matrix_destroy(C1);
    tg_kgeno_free(g);
    tg_matrix_destroy(C);
    tg_kgeno_free(tr);
}

/* One factorisation both ways: K + αI built in @p build then lowered (tg_kernel_apply,
 * tg_krr_factor), and built in the map's precisions (tg_krr_build_factor). */
struct both {
    tg_status st[2];
    tg_chol_report rep[2];
    tg_prec map[2][NTR];  /* nt² ≤ 16 tiles */
    double *l[2];
    char msg[2][sizeof(tg_error){0}.msg];
};

static void factor_both(const tg_kgeno *tr, double gamma, double alpha, tg_prec build,
                        tg_chol_opts co, struct both *b) {
    for (int w = 0; w < 2; w++) {
        tg_error err = {0};
        tg_matrix *K = NULL;
        co.map_out = b->map[w];
        b->st[w] = w ? tg_krr_build_factor(tr, gamma, alpha, build, &co, &K, &b->rep[w], &err)
                     : tg_kernel_apply(NULL, tr, tr, gamma, alpha, build, &K, &err);
        if (!w && !b->st[w]) b->st[w] = tg_krr_factor(K, NULL, tr, gamma, alpha, &co, &b->rep[w],
                                                      &err);
        b->l[w] = b->st[w] ? NULL : dense(K, NTR, NTR);
        snprintf(b->msg[w], sizeof b->msg[w], "%s", b->st[w] ? err.msg : "ok");
        tg_matrix_destroy(K);
    }
}

/* Entries of the lower triangles of the two factors that differ. */
static int64_t factor_differ(const struct both *b) {
    int64_t differ = 0;
    for (int j = 0; j < NTR; j++)
        for (int i = j; i < NTR; i++) differ += b->l[0][i + j * NTR] != b->l[1][i + j * NTR];
    return differ;
}

/* K + αI built directly in the map's precisions gives the map, the bound and the factor of the
 * build in fp64 lowered afterwards, bit for bit (one rounding of the same double either way; one
 * kind of worker per pass): on the adaptive map from a tolerance (a localized kernel, so tiles
 * go to fp32, fp16, fp8) and through recoveries (band 0 in fp16 with a small α: the map is
 * raised and the tiles built again in the raised precisions). */
static void in_map_tests(const tg_bed *bed, double gamma) {
    tg_error err = {0};
    tg_kgeno *tr = NULL;
    if (cohort(TG_KERNEL_GAUSSIAN, rows_tr, NTR, NULL, bed, &tr, &err)) {
        ok(0, "in the map's precisions: cohort (%s)", err.msg);
        return;
    }
    const int nt = (NTR + NB - 1) / NB;
    struct both b;
    tg_chol_opts co = tg_chol_defaults();
    co.tol = 1e-3;
    co.lower_diag = 1;
    co.allowed = 1u << TG_FP32 | 1u << TG_FP16 | 1u << TG_FP8_E4M3;
    factor_both(tr, 24 * gamma, 4, TG_FP64, co, &b);
    int same_map = !memcmp(b.map[0], b.map[1], (size_t)nt * nt * sizeof b.map[0][0]);
    int64_t low = b.rep[1].tiles[TG_FP16] + b.rep[1].tiles[TG_FP8_E4M3];
    ok(!b.st[0] && !b.st[1] && same_map && low > 0 && b.rep[0].norm == b.rep[1].norm &&
           b.rep[0].bound == b.rep[1].bound && factor_differ(&b) == 0,
       "in the map's precisions, map from a tolerance: the same map (%lld fp16/fp8 tiles, diag "
       "%s), norm and bound, factor bit for bit (%s; %s / %s)", (long long)low,
       tg_prec_name(b.rep[1].diag), pass, b.msg[0], b.msg[1]);
    free(b.l[0]), free(b.l[1]);

    co = tg_chol_defaults();
    co.band = 0;
    co.diag = TG_FP32;
    co.allowed = 1u << TG_FP16;
    factor_both(tr, 0.01 * gamma, 1e-4, TG_FP32, co, &b);
    int same_retries = b.rep[0].retries == b.rep[1].retries;
    for (int k = 0; same_retries && k < b.rep[0].retries; k++) {
        const tg_chol_retry *x = &b.rep[0].retry[k], *y = &b.rep[1].retry[k];
        same_retries = x->tile == y->tile && x->from == y->from && x->to == y->to &&
                       x->raised == y->raised;
    }
    same_map = !memcmp(b.map[0], b.map[1], (size_t)nt * nt * sizeof b.map[0][0]);
    ok(!b.st[0] && !b.st[1] && b.rep[1].retries >= 1 && same_retries && same_map &&
           factor_differ(&b) == 0,
       "in the map's precisions, band 0 fp16 at alpha 1e-4: the same %d recoveries (first from "
       "%s to %s) and final map, factor bit for bit (%s; %s / %s)", b.rep[1].retries,
       tg_prec_name(b.rep[1].retry[0].from), tg_prec_name(b.rep[1].retry[0].to), pass,
       b.msg[0], b.msg[1]);
    free(b.l[0]), free(b.l[1]);

    /* a map that takes more than max_bytes: refused before any tile is built */
    tg_matrix *K = NULL;
    tg_chol_report rep;
    co = tg_chol_defaults();
    co.max_bytes = 8.0 * NTR * NTR / 2; /* less than the lower tiles in fp64 */
    tg_status st = tg_krr_build_factor(tr, gamma, 0.375, TG_FP64, &co, &K, &rep, &err);
    ok(st == TG_ERR_NOMEM && !K && strstr(err.msg, "MiB allowed"),
       "in the map's precisions, a map over max_bytes refused: %s", err.msg);
    tg_kgeno_free(tr);
}

static void all_kernels(const tg_bed *bed, double gamma, int gpu) {
    for (int kind = TG_KERNEL_GAUSSIAN; kind <= TG_KERNEL_LINEAR; kind++)
        kernel_tests((tg_kernel)kind, bed, gamma, gpu);
    in_map_tests(bed, gamma);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    make_data(&r);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tg-build-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    snprintf(prefix, sizeof prefix, "%s/g", tmpdir);
    snprintf(prefix_short, sizeof prefix_short, "%s/short", tmpdir);
    tg_error err = {0};
    tg_bed bed, bed_short;
    if (write_bed(prefix, geno, NTOT, M, &err) || write_bed(prefix_short, geno, NTOT, M - 1, &err) ||
        tg_bed_open(prefix, &bed, &err) || tg_bed_open(prefix_short, &bed_short, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    double gamma = gamma_for_data();
    diag("gamma %.4g (1 / mean distance)", gamma);

    tg_runtime_opts o = tg_runtime_defaults();
    o.ngpu = 0;
    if (tg_runtime_start(&o, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    all_kernels(&bed, gamma, 0);
    bad_input_tests(&bed, &bed_short);
    tg_runtime_stop();

    /* the CUDA workers alone, when there are any */
    o = tg_runtime_defaults();
    const int ngpu = gpu_count();
    if (ngpu > 0) {
        o.ncpu = 0;
        pass = "GPU only";
        if (ok(tg_runtime_start(&o, &err) == TG_OK, "restart with CUDA workers only")) {
            all_kernels(&bed, gamma, 1);
            tg_runtime_stop();
        } else {
            diag("%s", err.msg);
        }
    }
    if (getenv("TG_REQUIRE_GPU") && atoi(getenv("TG_REQUIRE_GPU")))
        ok(ngpu > 0, "the build ran on CUDA workers (TG_REQUIRE_GPU is set)");

    for (int k = 0; k < 3; k++)
        for (int p = 0; p < 2; p++)
            for (int s = 0; s < 2; s++) free(cpu_k[k][p][s]);
    tg_bed_close(&bed);
    tg_bed_close(&bed_short);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) diag("could not remove %s", tmpdir);
    tap_plan(tap_n);
    return tap_done();
}
