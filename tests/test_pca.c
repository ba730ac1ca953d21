/* tg_pca_eig (the exact mode's eigenpairs) against LAPACK dsyevd on the full matrix, for three
 * spectra: top eigenvalues well apart above a flat bulk (block Krylov must converge and be
 * taken), a Wishart matrix of one population's kind (its top eigenvalues crowd at the bulk's
 * edge: Krylov must give up and dsyevr answer), and a matrix too small for Krylov. Values to
 * 1e-11 of λ₁, vectors up to sign to 1e-8 (dsyevd's own accuracy is ~n·ε·λ₁ / gap). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tilegwas.h"

/* K = U·diag(d)·Uᵀ, U orthogonal: a product of 4 Householder reflections of random vectors. */
static void planted(tg_rng *r, int n, const double *d, double *K) {
    double *u = malloc((size_t)n * n * sizeof *u), *v = malloc((size_t)n * sizeof *v);
    memset(u, 0, (size_t)n * n * sizeof *u);
    for (int i = 0; i < n; i++) u[i + (size_t)i * n] = 1;
    for (int h = 0; h < 4; h++) {
        double nn = 0;
        for (int i = 0; i < n; i++) nn += (v[i] = tg_rng_normal(r)) * v[i];
        for (int j = 0; j < n; j++) { /* column j of U ← (I − 2vvᵀ/vᵀv)·column j */
            double dot = cblas_ddot(n, v, 1, u + (size_t)j * n, 1);
            cblas_daxpy(n, -2 * dot / nn, v, 1, u + (size_t)j * n, 1);
        }
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int l = 0; l < n; l++) s += u[i + (size_t)l * n] * d[l] * u[j + (size_t)l * n];
            K[i + (size_t)j * n] = s;
        }
    free(v);
    free(u);
}

/* K = Z·Zᵀ/m, Z standardised 0/1/2 genotypes of one population (frequencies U[0.05, 0.5]). */
static void wishart(tg_rng *r, int n, int m, double *K) {
    double *z = malloc((size_t)n * m * sizeof *z);
    for (int j = 0; j < m; j++) {
        double p = 0.05 + 0.45 * tg_rng_uniform(r), sd = sqrt(2 * p * (1 - p));
        for (int i = 0; i < n; i++) {
            int g = (tg_rng_uniform(r) < p) + (tg_rng_uniform(r) < p);
            z[i + (size_t)j * n] = (g - 2 * p) / sd;
        }
    }
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, m, 1.0 / m, z, n, 0, K, n);
    free(z);
}

/* tg_pca_eig on a copy of K against dsyevd; @p route: 0 dsyevr alone, 1 Krylov, 2 Krylov then
 * dsyevr. */
static void check(const char *what, const double *K, int n, int k, int route) {
    double *a = malloc((size_t)n * n * sizeof *a), *w = malloc((size_t)n * sizeof *w),
           *vec = malloc((size_t)n * k * sizeof *vec), *val = malloc((size_t)k * sizeof *val);
    memcpy(a, K, (size_t)n * n * sizeof *a);
    tg_pca_report rep = {0};
    tg_error err = {0};
    tg_status st = tg_pca_eig(a, n, k, vec, val, &rep, &err);
    ok(st == TG_OK, "%s: tg_pca_eig %s", what, st ? err.msg : "ran");
    int got = !rep.blocks ? 0 : rep.lapack ? 2 : 1;
    ok(got == route, "%s: route %d (0 dsyevr, 1 Krylov, 2 both) as expected %d; %d blocks of %d, "
       "residual %.3g", what, got, route, rep.blocks, rep.block, rep.residual);
    memcpy(a, K, (size_t)n * n * sizeof *a);
    ok(LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, w) == 0, "%s: reference dsyevd", what);
    double dv = 0, dx = 0;
    for (int j = 0; j < k; j++) {
        const double *ref = a + (size_t)(n - 1 - j) * n, *v = vec + (size_t)j * n;
        dv = fmax(dv, fabs(val[j] - w[n - 1 - j]) / w[n - 1]);
        double sign = cblas_ddot(n, ref, 1, v, 1) < 0 ? -1 : 1, e = 0;
        for (int i = 0; i < n; i++) e = fmax(e, fabs(sign * v[i] - ref[i]));
        dx = fmax(dx, e);
    }
    ok(dv <= 1e-11, "%s: top %d eigenvalues within %.2g of dsyevd's (relative to λ₁)", what, k,
       dv);
    ok(dx <= 1e-8, "%s: eigenvectors within %.2g of dsyevd's, up to sign", what, dx);
    free(val);
    free(vec);
    free(w);
    free(a);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, 11);
    const int n = 1000, k = 10;
    double *K = malloc((size_t)n * n * sizeof *K), *d = malloc((size_t)n * sizeof *d);
    /* eleven separated values (λ₁₁ makes the gap after the top 10 as real data's structure
     * does), then a bulk in [0.5, 1.5] */
    for (int i = 0; i < n; i++) d[i] = i <= k ? 40.0 - 3 * i : 0.5 + tg_rng_uniform(&r);
    planted(&r, n, d, K);
    check("separated top 10", K, n, k, 1);
    wishart(&r, n, 3 * n, K);
    check("one population (Wishart)", K, n, k, 2);
    check("one population, k = 3", K, n, 3, 2);
    wishart(&r, 60, 180, K);
    check("n = 60: dsyevr alone", K, 60, 5, 0);
    free(d);
    free(K);
    tap_plan(tap_n);
    return tap_done();
}
