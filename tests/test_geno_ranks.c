/* The genotype products, the ridge CG, its Jacobi diagonal, the fitted values and the GRM on
 * any number of MPI ranks (tests/mpi_snpmm.sh runs this on 2 and 4 ranks with one TG_SEED, so
 * every rank makes the same data; `make check` runs it on one), against a dense double reference
 * written here from the definitions: each rank's share of the samples, p equal to the
 * reference bit for bit, Z·Λ (rank 0: every row; the others: their own) and Zᵀ·Λ̃ within 1e-12
 * (FP32: its error bound), Zᵀ·Λ̃ with the same bits on every rank, small blocks (7 samples, 11
 * SNPs: several per rank, partial ones) and default ones; the Jacobi diagonal within 1e-13; CG
 * converged, β solving the normal equations to 1e-8 and the same bits and iterations on every
 * rank; fitted values and the GRM on rank 0 within 1e-12. Every rank prints the same plan. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/snpmm.h"
#include "base/hash.h"
#include "common.h"
#include "runtime/runtime.h"
#include "tap.h"

enum { N = 211, M = 97, K = 3 };

/* p (the expression tg_geno uses) and the dense Z (N × M) by the definition. */
static void dense_z(const int8_t *g, int scale, double *p, double *z) {
    for (int64_t j = 0; j < M; j++) {
        int64_t obs = 0, sum = 0;
        for (int64_t i = 0; i < N; i++)
            if (g[i + j * N] != TG_GENO_MISSING) obs++, sum += g[i + j * N];
        p[j] = obs ? (double)sum / (2.0 * (double)obs) : NAN;
        double w = !(p[j] > 0 && p[j] < 1) ? 0 : scale ? 1 / sqrt(2 * p[j] * (1 - p[j])) : 1;
        for (int64_t i = 0; i < N; i++)
            z[i + j * N] = g[i + j * N] == TG_GENO_MISSING || !w ? 0 : (g[i + j * N] - 2 * p[j]) * w;
    }
}

/* out (rows × k) = Z·in (trans 0, rows N) or Zᵀ·in (trans 1, rows M) */
static void ref_mul(const double *z, int trans, const double *in, double *out) {
    const int64_t rows = trans ? M : N, inner = trans ? N : M;
    for (int64_t c = 0; c < K; c++)
        for (int64_t r = 0; r < rows; r++) {
            double s = 0;
            for (int64_t t = 0; t < inner; t++)
                s += (trans ? z[t + r * N] : z[r + t * N]) * in[t + c * inner];
            out[r + c * rows] = s;
        }
}

/* max |a − b| over rows [r0, r1) of k columns (ld lda, ldb) divided by max |b| */
static double rel_max(const double *a, int64_t lda, const double *b, int64_t ldb, int64_t r0,
                      int64_t r1, int64_t k) {
    double d = 0, s = 0;
    for (int64_t c = 0; c < k; c++)
        for (int64_t r = r0; r < r1; r++) {
            d = fmax(d, fabs(a[r + c * lda] - b[r + c * ldb]));
            s = fmax(s, fabs(b[r + c * ldb]));
        }
    return s > 0 ? d / s : d;
}

/* The largest |a − b| / bnd over rows [r0, r1) of k columns of N or M rows (trans 0 or 1), bnd
 * the per-element error bound's sum Σ_t w_t(2 + 2p_t)|in_t| (test_snpmm.c) */
static double fp32_ratio(const double *a, const double *b, int trans, const double *in,
                         const double *p, int scale, int64_t r0, int64_t r1) {
    const int64_t rows = trans ? M : N, inner = trans ? N : M;
    double worst = 0;
    for (int64_t c = 0; c < K; c++)
        for (int64_t r = r0; r < r1; r++) {
            double bnd = 0;
            for (int64_t t = 0; t < inner; t++) {
                double pj = p[trans ? r : t], w = !(pj > 0 && pj < 1) ? 0
                                                   : scale          ? 1 / sqrt(2 * pj * (1 - pj))
                                                                    : 1;
                if (w) bnd += w * (2 + 2 * pj) * fabs(in[t + c * inner]); /* p may be NAN */
            }
            double d = fabs(a[r + c * rows] - b[r + c * rows]);
            worst = fmax(worst, bnd > 0 ? d / bnd : d > 0 ? INFINITY : 0);
        }
    return worst;
}

/* Whether every rank holds the same @p bytes at @p p (collective; checked on rank 0). */
static int same_everywhere(const void *p, size_t bytes) {
    uint64_t h = tg_fnv1a(TG_FNV1A_INIT, p, bytes), *all = NULL;
    if (tg_runtime_rank() == 0) all = malloc((size_t)tg_runtime_nranks() * sizeof *all);
    tg_runtime_gather(&h, sizeof h, all);
    int same = 1;
    for (int r = 0; all && r < tg_runtime_nranks(); r++) same &= all[r] == h;
    free(all);
    return same;
}

/* The products of one genotype matrix (blocks rb × sb, 0 for the defaults). */
static void check_products(const int8_t *g, const double *z, const double *p, int scale,
                           int64_t rb, int64_t sb, tg_rng *r) {
    tg_error err = {0};
    tg_geno *geno = NULL;
    const int rank = tg_runtime_rank();
    char what[64];
    snprintf(what, sizeof what, "scale %d, blocks %lld × %lld", scale, (long long)rb,
             (long long)sb);
    tg_status st = tg_geno_from_int8_blocks(g, N, M, N, scale, rb, sb, &geno, &err);
    int64_t i0 = 0, nl = 0, w0, wn;
    if (!st) tg_geno_local(geno, &i0, &nl);
    tg_runtime_split(N, rank, &w0, &wn);
    ok(!st && i0 == w0 && nl == wn && memcmp(tg_geno_freq(geno), p, M * sizeof *p) == 0,
       "%s: rank %d holds samples %lld..%lld, p equals the reference bit for bit %s", what, rank,
       (long long)i0, (long long)(i0 + nl - 1), err.msg);
    if (st) {
        for (int t = 0; t < 5; t++) ok(0, "%s: no genotypes", what);
        return;
    }
    double *in = malloc(sizeof(double) * N * K), *out = malloc(sizeof(double) * N * K),
           *ref = malloc(sizeof(double) * N * K);
    float *inf = malloc(sizeof(float) * N * K), *outf = malloc(sizeof(float) * N * K);
    for (int trans = 0; trans <= 1; trans++) {
        const int64_t rows = trans ? M : N, inner = trans ? N : M;
        for (int64_t e = 0; e < inner * K; e++) inf[e] = (float)(in[e] = tg_rng_normal(r));
        ref_mul(z, trans, in, ref);
        /* rank 0 receives every row of Z·Λ, the others hold theirs */
        int64_t r0 = trans || rank == 0 ? 0 : i0, r1 = trans || rank == 0 ? rows : i0 + nl;
        st = tg_geno_mul(geno, trans, K, TG_FP64, in, inner, out, rows, &err);
        double e = st ? INFINITY : rel_max(out, rows, ref, rows, r0, r1, K);
        ok(e <= 1e-12, "%s: %s FP64 rows %lld..%lld within %.2g ≤ 1e-12 %s", what,
           trans ? "Zᵀ·Λ̃" : "Z·Λ", (long long)r0, (long long)r1 - 1, e, err.msg);
        if (trans)
            ok(same_everywhere(out, sizeof(double) * M * K),
               "%s: Zᵀ·Λ̃ has the same bits on every rank", what);
        st = tg_geno_mul(geno, trans, K, TG_FP32, inf, inner, outf, rows, &err);
        for (int64_t e2 = 0; e2 < rows * K; e2++) out[e2] = outf[e2];
        e = st ? INFINITY : fp32_ratio(out, ref, trans, in, p, scale, r0, r1) / 0x1p-24;
        ok(e <= (double)(inner + 10), "%s: %s FP32 within %.3g·2⁻²⁴·Σ_t w_t(2 + 2p_t)|in_t| ≤ "
           "(%lld + 10)·2⁻²⁴·Σ %s", what, trans ? "Zᵀ·Λ̃" : "Z·Λ", e, (long long)inner, err.msg);
    }
    tg_geno_free(geno);
    free(in);
    free(out);
    free(ref);
    free(inf);
    free(outf);
}

/* y: standard normal with every 5th value of phenotype 2 missing (K × N) */
static void make_pheno(tg_rng *r, const double *z, double *y) {
    for (int64_t c = 0; c < K; c++) {
        for (int64_t i = 0; i < N; i++) y[i + c * N] = tg_rng_normal(r);
        for (int64_t j = 0; j < M; j++) {
            double b = tg_rng_normal(r) / sqrt((double)M);
            for (int64_t i = 0; i < N; i++) y[i + c * N] += z[i + j * N] * b;
        }
        for (int64_t i = 0; c == 1 && i < N; i += 5) y[i + c * N] = NAN;
    }
}

/* ‖(Z̃ᵀZ̃ + λI)β − Z̃ᵀỹ‖ / ‖Z̃ᵀỹ‖ of phenotype column c, Z̃ and ỹ centered over its observed
 * samples; also diag(Z̃ᵀZ̃) into d. */
static double normal_residual(const double *z, const double *yc, const double *beta,
                              double lambda, double *d) {
    double ym = 0, no = 0, *u = calloc(N, sizeof *u), *cm = malloc(M * sizeof *cm);
    for (int64_t i = 0; i < N; i++)
        if (!isnan(yc[i])) ym += yc[i], no++;
    ym /= no;
    for (int64_t j = 0; j < M; j++) {
        double s = 0;
        for (int64_t i = 0; i < N; i++)
            if (!isnan(yc[i])) s += z[i + j * N];
        cm[j] = s / no;
    }
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; !isnan(yc[i]) && j < M; j++) u[i] += (z[i + j * N] - cm[j]) * beta[j];
    double rr = 0, bb = 0;
    for (int64_t j = 0; j < M; j++) {
        double a = 0, b = 0, dd = 0;
        for (int64_t i = 0; i < N; i++) {
            if (isnan(yc[i])) continue;
            double zt = z[i + j * N] - cm[j];
            a += zt * u[i];
            b += zt * (yc[i] - ym);
            dd += zt * zt;
        }
        d[j] = dd;
        rr += (a + lambda * beta[j] - b) * (a + lambda * beta[j] - b);
        bb += b * b;
    }
    free(u);
    free(cm);
    return sqrt(rr / bb);
}

static void check_ridge_grm(const int8_t *g, const double *z, int scale, tg_rng *r) {
    tg_error err = {0};
    tg_geno *geno = NULL;
    const int rank0 = tg_runtime_rank() == 0;
    double *y = malloc(sizeof(double) * N * K), *d = malloc(sizeof(double) * M * K),
           *dref = malloc(sizeof(double) * M), *beta = malloc(sizeof(double) * M * K),
           *pred = malloc(sizeof(double) * N * K), *kk = rank0 ? malloc(sizeof(double) * N * N)
                                                             : NULL;
    make_pheno(r, z, y);
    const double lambda = 15, tol = 1e-10;
    tg_status st = tg_geno_from_int8_blocks(g, N, M, N, scale, 7, 11, &geno, &err);
    if (!st) st = tg_ridge_jacobi_int8(g, N, geno, scale, K, y, N, d, M, &err);
    tg_cg_pheno pr[K];
    tg_cg_report rep = {.pheno = pr};
    tg_cg_opts o = tg_cg_defaults();
    o.lambda = lambda;
    o.tol = tol;
    o.jacobi = d;
    o.ldj = M;
    if (!st) st = tg_ridge_cg(geno, K, y, N, &o, beta, M, &rep, &err);
    double worst = 0, dworst = 0;
    int conv = !st;
    for (int c = 0; c < K; c++) {
        worst = fmax(worst, normal_residual(z, y + c * N, beta + c * M, lambda, dref));
        dworst = fmax(dworst, rel_max(d + c * M, M, dref, M, 0, M, 1));
        conv &= pr[c].converged && pr[c].true_relres <= 100 * tol;
    }
    ok(conv && dworst <= 1e-13, "scale %d: Jacobi diagonal within %.2g ≤ 1e-13 %s", scale, dworst,
       err.msg);
    ok(conv && worst <= 1e-8, "scale %d: CG converged in %d iterations, β solves the normal "
       "equations within %.2g ≤ 1e-8", scale, rep.iterations, worst);
    int its[K + 1] = {rep.iterations};
    for (int c = 0; c < K; c++) its[c + 1] = pr[c].iterations;
    ok(same_everywhere(beta, sizeof(double) * M * K) && same_everywhere(its, sizeof its),
       "scale %d: β and the iteration counts have the same bits on every rank", scale);

    double mu[K];
    if (!st) st = tg_ridge_predict(geno, K, y, N, beta, M, pred, N, mu, &err);
    double e = 0;
    for (int c = 0; rank0 && !st && c < K; c++) { /* ŷ = μ + Zβ, μ = mean_O(y − Zβ) */
        double zb[N], s = 0, no = 0;
        for (int64_t i = 0; i < N; i++) {
            zb[i] = 0;
            for (int64_t j = 0; j < M; j++) zb[i] += z[i + j * N] * beta[j + c * M];
            if (!isnan(y[i + c * N])) s += y[i + c * N] - zb[i], no++;
        }
        for (int64_t i = 0; i < N; i++) zb[i] += s / no;
        e = fmax(e, rel_max(pred + c * N, N, zb, N, 0, N, 1));
    }
    ok(!st && e <= 1e-12, "scale %d: fitted values on rank 0 within %.2g ≤ 1e-12 %s", scale, e,
       err.msg);

    if (!st) st = tg_grm(geno, kk, N, &err);
    e = 0;
    for (int64_t j = 0; rank0 && !st && j < N; j++)
        for (int64_t i = 0; i < N; i++) {
            double want = 0;
            for (int64_t s = 0; s < M; s++) want += z[i + s * N] * z[j + s * N];
            e = fmax(e, fabs(kk[i + j * N] - want / M));
        }
    ok(!st && e <= 1e-13, "scale %d: GRM on rank 0 within %.2g ≤ 1e-13 %s", scale, e, err.msg);
    tg_geno_free(geno);
    free(y);
    free(d);
    free(dref);
    free(beta);
    free(pred);
    free(kk);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    tg_error err = {0};
    tg_runtime_opts o = tg_runtime_defaults();
    o.ngpu = 0;
    o.ncpu = 1;
    tap_plan(2 * (2 * 6 + 5));
    if (tg_runtime_start(&o, &err)) {
        ok(0, "runtime start: %s", err.msg);
        return tap_done();
    }
    int8_t *g = malloc(N * M);
    double *z = malloc(sizeof(double) * N * M), *p = malloc(sizeof(double) * M);
    /* SNP 0 monomorphic with missing calls, SNP 1 all missing, the rest random with 5% missing
     * calls */
    make_geno(&r, N, M, 0.05, 0.95, 0.05, g);
    for (int64_t i = 0; i < N; i++) g[i] = i % 9 ? 2 : TG_GENO_MISSING, g[i + N] = TG_GENO_MISSING;
    for (int scale = 0; scale <= 1; scale++) {
        dense_z(g, scale, p, z);
        check_products(g, z, p, scale, 7, 11, &r);
        check_products(g, z, p, scale, 0, 0, &r);
        check_ridge_grm(g, z, scale, &r);
    }
    free(g);
    free(z);
    free(p);
    tg_runtime_stop();
    return tap_done();
}
