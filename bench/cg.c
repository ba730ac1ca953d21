/* bench/cg: ridge CG (SNP-BLUP) at the paper's small population size: time per iteration and
 * iterations to the tolerance, against a ceiling measured in the same run: the two bare products
 * (Z·P and Zᵀ·Q with the same column count, on tg_host_alloc buffers as the solver's; also
 * shown on pageable buffers) an iteration cannot be faster than. Genotypes are
 * random (Hardy-Weinberg, p ~ U[0.05, 0.5], no missing calls), generated in memory; phenotypes
 * y = Zβ* + e with h² = 0.5 (β* ~ N(0, 1/m), Z scaled). λ = m(1 − h²)/h² = m, the SNP-BLUP
 * choice, which keeps Z̃ᵀZ̃ + λI well conditioned (eigenvalues of ZᵀZ/n for independent SNPs lie
 * in [(1 − √(m/n))², (1 + √(m/n))²]: κ ≈ 6 at n = 102,000, m = 50,241).
 * usage: bench/cg [--n N] [--m M] [--k K] [--tol T] [--ncpu C] [--ngpu G] [--no-jacobi]
 *        (default 102000 × 50241, 10 phenotypes, tol 1e-8, every worker) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "base/rng.h"
#include "io/out.h"
#include "tilegwas.h"

/* Four genotypes per random word: two 8-bit uniform draws each against p (resolution 1/256). */
static void make_geno(int64_t n, int64_t m, int8_t *g, uint64_t seed) {
    tg_rng r;
    tg_rng_seed(&r, seed);
    for (int64_t j = 0; j < m; j++) {
        unsigned t = (unsigned)(256 * (0.05 + 0.45 * tg_rng_uniform(&r)));
        int8_t *col = g + j * n;
        for (int64_t i = 0; i < n; i += 4) {
            uint64_t w = tg_rng_u64(&r);
            for (int64_t a = 0; a < 4 && i + a < n; a++, w >>= 16)
                col[i + a] = (int8_t)(((w & 0xff) < t) + (((w >> 8) & 0xff) < t));
        }
    }
}

static void progress(void *ctx, int iter, int64_t nphen, const double *relres) {
    double worst = 0;
    for (int64_t c = 0; c < nphen; c++)
        if (!isnan(relres[c]) && relres[c] > worst) worst = relres[c];
    if (iter % 10 == 0 || iter == 1)
        fprintf(stderr, "iteration %d: largest residual %.3e\n", iter, worst);
}

int main(int argc, char **argv) {
    tg_blas_restart_if_generic(argv);
    int64_t n = 102000, m = 50241, k = 10;
    double tol = 1e-8;
    int jacobi = 1;
    tg_runtime_opts ro = tg_runtime_defaults();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--m") && i + 1 < argc) m = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--k") && i + 1 < argc) k = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--tol") && i + 1 < argc) tol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--ncpu") && i + 1 < argc) ro.ncpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ngpu") && i + 1 < argc) ro.ngpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-jacobi")) jacobi = 0;
        else {
            fprintf(stderr, "usage: %s [--n N] [--m M] [--k K] [--tol T] [--ncpu C] [--ngpu G] "
                    "[--no-jacobi]\n", argv[0]);
            return 2;
        }
    }
    if (n < 2 || m < 1 || k < 1 || k > 64) {
        fprintf(stderr, "need n ≥ 2, m ≥ 1, 1 ≤ k ≤ 64\n");
        return 2;
    }
    tg_error err = {0};
    tg_geno *geno = NULL;
    int8_t *g = malloc((size_t)(n * m));
    const size_t nk = (size_t)(n * k) * sizeof(double), mk = (size_t)(m * k) * sizeof(double);
    double *y = malloc(nk), *bs = malloc(mk), *beta = malloc(mk), *d = malloc(mk), *q = malloc(nk);
    tg_cg_pheno *pr = calloc((size_t)k, sizeof *pr);
    if (!g || !y || !bs || !beta || !d || !q || !pr) {
        fprintf(stderr, "out of memory for n %lld × m %lld\n", (long long)n, (long long)m);
        return 1;
    }
    double t0 = tg_now();
    make_geno(n, m, g, 1);
    printf("genotypes: %lld × %lld random, %.1f s\n", (long long)n, (long long)m, tg_now() - t0);
    if (tg_runtime_start(&ro, &err)) goto fail;
    char desc[2048];
    tg_runtime_describe(desc, sizeof desc);
    printf("runtime: %s\n", desc);
    t0 = tg_now();
    if (tg_geno_from_int8(g, n, m, n, 1, &geno, &err)) goto fail;
    printf("tg_geno_from_int8: %.2f s\n", tg_now() - t0);

    tg_rng r;
    tg_rng_seed(&r, 2);
    for (int64_t j = 0; j < m * k; j++) bs[j] = tg_rng_normal(&r) / sqrt((double)m);
    if (tg_geno_mul(geno, 0, k, TG_FP64, bs, m, y, n, &err)) goto fail;
    for (int64_t i = 0; i < n * k; i++) y[i] += tg_rng_normal(&r);

    /* ceiling: the iteration's two products alone, best of 5 after a warm-up (the first moves
     * the genotypes to the devices), from pageable memory and from tg_host_alloc's (as the
     * solver's operands) */
    double *hp = tg_host_alloc(mk, &err), *hq = hp ? tg_host_alloc(nk, &err) : NULL,
           *hb = hq ? tg_host_alloc(mk, &err) : NULL, best = INFINITY, best_pageable = INFINITY;
    if (!hb) goto fail;
    memcpy(hp, bs, mk);
    for (int pinned = 0; pinned < 2; pinned++)
        for (int rep = 0; rep < 6; rep++) {
            t0 = tg_now();
            if (tg_geno_mul(geno, 0, k, TG_FP64, pinned ? hp : bs, m, pinned ? hq : q, n, &err) ||
                tg_geno_mul(geno, 1, k, TG_FP64, pinned ? hq : q, n, pinned ? hb : beta, m, &err))
                goto fail;
            double t = tg_now() - t0;
            if (rep && pinned) best = fmin(best, t);
            if (rep && !pinned) best_pageable = fmin(best_pageable, t);
        }
    tg_host_free(hp), tg_host_free(hq), tg_host_free(hb);
    double bytes = 2.0 * (double)n * (double)m / 4; /* 2-bit genotypes read once per product */
    printf("ceiling: Z·P + Zᵀ·Q (k = %lld) %.2f ms from tg_host_alloc memory (%.2f ms from "
           "pageable memory), %.1f GB/s of 2-bit genotypes\n",
           (long long)k, 1e3 * best, 1e3 * best_pageable, 1e-9 * bytes / best);

    t0 = tg_now();
    if (jacobi && tg_ridge_jacobi_int8(g, n, geno, 1, k, y, n, d, m, &err)) goto fail;
    printf("Jacobi diagonal: %s, %.2f s\n", jacobi ? "exact" : "none", tg_now() - t0);
    tg_cg_opts o = tg_cg_defaults();
    o.lambda = (double)m;
    o.tol = tol;
    o.jacobi = jacobi ? d : NULL;
    o.ldj = m;
    o.progress = progress;
    tg_cg_report rep = {.pheno = pr};
    tg_status st = tg_ridge_cg(geno, k, y, n, &o, beta, m, &rep, &err);
    if (st && st != TG_ERR_NUMERIC) goto fail;
    int imin = rep.iterations, imax = 0;
    double worst = 0;
    for (int64_t c = 0; c < k; c++) {
        imin = pr[c].iterations < imin ? pr[c].iterations : imin;
        imax = pr[c].iterations > imax ? pr[c].iterations : imax;
        worst = fmax(worst, pr[c].true_relres);
    }
    /* each iteration costs one product pair; the right-hand side (one product) and the final
     * residual check (one pair) add 1.5 pairs */
    double per_iter = rep.seconds / (rep.iterations + 1.5);
    printf("cg: n %lld, m %lld, k %lld, lambda %g, tol %g: iterations %d..%d per phenotype, "
           "%s; worst recomputed residual %.2e\n",
           (long long)n, (long long)m, (long long)k, o.lambda, tol, imin, imax,
           st ? "NOT CONVERGED" : "all converged", worst);
    printf("cg: %.3f s total, %.2f ms per iteration (products %.2f ms), %.1f GB/s; ceiling ratio "
           "%.2f (bare products / iteration)\n",
           rep.seconds, 1e3 * per_iter, 1e3 * rep.seconds_products / (rep.iterations + 1.5),
           1e-9 * bytes / per_iter, best / per_iter);
    tg_geno_free(geno);
    tg_runtime_stop();
    free(g), free(y), free(bs), free(beta), free(d), free(q), free(pr);
    return st ? 1 : 0;
fail:
    fprintf(stderr, "bench/cg: %s\n", err.msg);
    return 1;
}
