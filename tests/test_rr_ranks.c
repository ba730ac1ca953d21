/* What a rank reads in the ridge regression by the tile Cholesky, on any number of MPI ranks
 * (tests/mpi_krr.sh runs this on 2 and 4 ranks with one TG_SEED, so every rank makes the same
 * data; `make check` runs it on one). A fileset of 150 samples × 75 SNPs (5% missing calls, a
 * monomorphic SNP), every 7th sample dropped, SNP panels of 16:
 *  - the genotypes a rank decodes are exactly its share of the kept samples for every SNP and
 *    every kept sample of the SNPs of its panels (panel J on rank J mod R), each read through
 *    a source that marks what it returns: with R ranks a rank reads about 2/R − 1/R² of them;
 *  - tg_ridge_chol_bed (the kept rows, and every sample with rows NULL) and tg_ridge_chol (the
 *    same genotypes as an int8 array) give the β of that counted run, bit for bit (one path);
 *  - its training genotype matrix holds the rank's share and the frequencies of the kept
 *    samples, bit for bit;
 *  - every rank has the same β;
 *  - a row outside the .fam is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/rr.h"
#include "common.h"
#include "geno/source.h"
#include "runtime/runtime.h"
#include "tap.h"

enum { N = 150, M = 75, NB = 16, NPHEN = 2 };

static int8_t geno[N * M];
static char dir[64], prefix[80];

/* A source that marks every (sample, SNP) it returns, then reads the .bed rows. */
typedef struct {
    tg_geno_source *rows;
    int64_t n;
    uint8_t *seen; /* n × M */
} marking;

static void marking_source(const void *ctx, int64_t i0, int64_t ni, int64_t j0, int64_t nj,
                           int8_t *buf, int64_t ld) {
    const marking *k = ctx;
    for (int64_t j = j0; j < j0 + nj; j++)
        for (int64_t i = i0; i < i0 + ni; i++)
            __atomic_store_n(&k->seen[i + j * k->n], 1, __ATOMIC_RELAXED);
    tg_geno_source_read(k->rows, i0, ni, j0, nj, buf, ld);
}

static int same(const double *a, const double *b, size_t count) {
    return !memcmp(a, b, count * sizeof *a);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    tap_plan(7);
    for (int j = 0; j < M; j++) {
        double p = 0.05 + 0.45 * tg_rng_uniform(&r);
        for (int i = 0; i < N; i++) {
            int8_t x = (int8_t)((tg_rng_uniform(&r) < p) + (tg_rng_uniform(&r) < p));
            if (j == 5) x = 1;
            if (tg_rng_uniform(&r) < 0.05) x = TG_GENO_MISSING;
            geno[i + j * N] = x;
        }
    }
    int64_t rows[N], n = 0;
    for (int64_t i = 0; i < N; i++)
        if (i % 7 != 3) rows[n++] = i;
    double *y = malloc(sizeof(double) * N * NPHEN), *yk = malloc(sizeof(double) * N * NPHEN);
    for (int i = 0; i < N * NPHEN; i++) y[i] = tg_rng_uniform(&r) - 0.5;
    for (int c = 0; c < NPHEN; c++)
        for (int64_t k = 0; k < n; k++) yk[k + c * n] = y[rows[k] + c * N];
    int8_t *gk = malloc((size_t)n * M);
    for (int j = 0; j < M; j++)
        for (int64_t k = 0; k < n; k++) gk[k + j * n] = geno[rows[k] + j * N];

    tg_error err = {0};
    tg_bed bed;
    snprintf(dir, sizeof dir, "/tmp/tg-rr-ranks-XXXXXX");
    if (!mkdtemp(dir)) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    snprintf(prefix, sizeof prefix, "%s/g", dir);
    tg_runtime_opts o = tg_runtime_defaults();
    o.ngpu = 0;
    o.ncpu = 1;
    if (write_bed(prefix, geno, N, M, &err) || tg_bed_open(prefix, &bed, &err) || tg_runtime_start(&o, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    const int R = tg_runtime_nranks(), me = tg_runtime_rank();
    tg_ridge_chol_opts ro = tg_ridge_chol_defaults();
    ro.lambda = 20;
    ro.nb = NB;
    ro.chol.allowed = 1u << TG_FP64;
    double beta[M * NPHEN], b2[M * NPHEN], mu[NPHEN], mu2[NPHEN];

    marking mk = {NULL, n, calloc((size_t)n * M, 1)};
    tg_geno_source *marked = NULL;
    tg_status st = tg_geno_source_bed(&bed, &mk.rows, &err);
    if (!st) st = tg_geno_source_select(mk.rows, rows, n, NULL, M, &err);
    if (!st) st = tg_geno_source_new(marking_source, &mk, n, M, "marked", &marked, &err);
    if (!st)
        st = tg_ridge_chol_source(marked, 1, NPHEN, yk, n, &ro, beta, M, mu, NULL, NULL, &err);
    tg_geno_source_free(marked);
    tg_geno_source_free(mk.rows);
    int64_t first, count, wrong = 0, read = 0;
    tg_runtime_split(n, me, &first, &count);
    for (int64_t j = 0; j < M; j++)
        for (int64_t i = 0; i < n; i++) {
            int want = (i >= first && i < first + count) || (j / NB) % R == me;
            wrong += mk.seen[i + j * n] != want;
            read += mk.seen[i + j * n];
        }
    ok(!st && !wrong && (R == 1 || read < n * M), "rank %d of %d read its %lld samples and the "
       "SNPs of its panels: %.3f of the genotypes, %lld read otherwise than that (%s)", me, R,
       (long long)count, (double)read / (double)(n * M), (long long)wrong, st ? err.msg : "ok");

    tg_geno *train = NULL;
    st = tg_ridge_chol_bed(&bed, rows, n, 1, NPHEN, yk, n, &ro, b2, M, mu2, NULL, &train, &err);
    ok(!st && same(beta, b2, M * NPHEN) && same(mu, mu2, NPHEN),
       "tg_ridge_chol_bed on the kept rows: the same β bit for bit (%s)", st ? err.msg : "ok");

    int good = !st && train;
    if (good) {
        int64_t f, c;
        tg_geno_local(train, &f, &c);
        good = f == first && c == count && tg_geno_n(train) == n;
        for (int j = 0; good && j < M; j++) {
            int64_t obs = 0, sum = 0;
            for (int64_t k = 0; k < n; k++)
                if (gk[k + j * n] != TG_GENO_MISSING) obs++, sum += gk[k + j * n];
            double p = obs ? (double)sum / (2.0 * (double)obs) : NAN;
            good = !memcmp(&p, &tg_geno_freq(train)[j], sizeof p);
        }
    }
    ok(good, "its training genotypes: this rank's %lld samples, the kept samples' frequencies "
       "bit for bit", (long long)count);
    tg_geno_free(train);

    st = tg_ridge_chol(gk, n, M, n, 1, NPHEN, yk, n, &ro, b2, M, mu2, NULL, &err);
    ok(!st && same(beta, b2, M * NPHEN) && same(mu, mu2, NPHEN),
       "tg_ridge_chol on the same genotypes as an int8 array: the same β bit for bit (%s)",
       st ? err.msg : "ok");

    /* every sample: the .bed read in ranges, against the whole array */
    double b3[M * NPHEN];
    st = tg_ridge_chol_bed(&bed, NULL, N, 0, NPHEN, y, N, &ro, b2, M, mu2, NULL, NULL, &err);
    tg_status st3 = st ? st : tg_ridge_chol(geno, N, M, N, 0, NPHEN, y, N, &ro, b3, M, mu, NULL,
                                            &err);
    ok(!st3 && same(b2, b3, M * NPHEN),
       "every sample (rows NULL, centered): tg_ridge_chol_bed equals tg_ridge_chol (%s)",
       st3 ? err.msg : "ok");

    /* the same β on every rank: rank 0 compares, the verdict is summed */
    double *all = malloc(sizeof(double) * M * NPHEN * (size_t)R);
    tg_runtime_gather(beta, sizeof beta, all);
    int64_t differ = 0;
    for (int q = 1; me == 0 && q < R; q++) differ += !same(all, all + q * M * NPHEN, M * NPHEN);
    tg_runtime_sum_int64(&differ, 1);
    ok(!differ, "every rank has rank 0's β (%lld differ)", (long long)differ);
    free(all);

    rows[n - 1] = N;
    st = tg_ridge_chol_bed(&bed, rows, n, 1, NPHEN, yk, n, &ro, b2, M, mu2, NULL, NULL, &err);
    ok(st == TG_ERR_ARG && strstr(err.msg, "outside the .fam"), "a row outside the .fam: %s",
       err.msg);

    tg_runtime_stop();
    tg_bed_close(&bed);
    const char *ext[] = {".bed", ".bim", ".fam"};
    for (int e = 0; e < 3; e++) {
        char path[96];
        snprintf(path, sizeof path, "%s%s", prefix, ext[e]);
        unlink(path);
    }
    rmdir(dir);
    free(mk.seen);
    free(gk);
    free(y);
    free(yk);
    return tap_done();
}
