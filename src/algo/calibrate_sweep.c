/* The sweeps of tg_calibrate: the sizes calibrated per worker kind and the workloads run at
 * each (KRR through the library's workflow, RR by the tile Cholesky, epistasis rounds, genotype
 * products) on random filesets written once per run. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "algo/calibrate.h"
#include "base/rng.h"
#include "io/out.h"

/* Sizes per worker kind: tile edges of the Cholesky and build kernels (every other size follows
 * from them) and epistasis sample counts. Verification runs the geometric means of neighbours,
 * sizes the calibration never ran. */
static const int cpu_tiles[] = {64, 128, 256, 512, 0}, cpu_samples[] = {1024, 4096, 16384, 0};
/* CPU workers of a node with GPUs: also the GPUs' smallest tile size, at which the scheduler
 * weighs a core against a GPU (2048 took 51 s a repetition on the H100 node's cores) */
static const int cpu_gpu_node_tiles[] = {64, 128, 256, 512, 1024, 0};
static const int gpu_tiles[] = {256, 512, 1024, 2048, 4096, 0},
                 gpu_samples[] = {8192, 32768, 131072, 0};
static const int quick_tiles[] = {32, 64, 128, 0}, quick_samples[] = {256, 1024, 0};

const int *tg_calibrate_tiles(tg_worker_kind kind, int quick, int ngpu) {
    if (quick) return quick_tiles;
    if (kind == TG_WORKER_CUDA) return gpu_tiles;
    return ngpu ? cpu_gpu_node_tiles : cpu_tiles;
}

const int *tg_calibrate_samples(tg_worker_kind kind, int quick) {
    return quick ? quick_samples : kind == TG_WORKER_CPU ? cpu_samples : gpu_samples;
}

static int count(const int *v) {
    int n = 0;
    while (v[n]) n++;
    return n;
}

void tg_calibrate_between(const int *v, int *out, int mult) {
    int n = count(v), k = 0;
    for (int i = 0; i + 1 < n; i++) {
        int m = (int)(sqrt((double)v[i] * v[i + 1]) / mult + 0.5) * mult;
        out[k++] = m > v[i] ? m : v[i] + mult;
    }
    out[k] = 0;
}

/* A random fileset PREFIX = dir/name, written once per run. */
static tg_status fileset(const tg_calibrate_pass *s, const char *name, int64_t n, int64_t m,
                         tg_bed *bed, tg_error *err) {
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s/%s_%lld_%lld", s->dir, name, (long long)n, (long long)m);
    char bedpath[PATH_MAX + 8];
    snprintf(bedpath, sizeof bedpath, "%s.bed", prefix);
    tg_status st = access(bedpath, R_OK) == 0 ? TG_OK
                                               : tg_bed_write_random(prefix, n, m, 12345, err);
    return st ? st : tg_bed_open(prefix, bed, err);
}

/* KRR at tile edge nb through the library's workflow (tg_krr_fit, tg_krr_predict): each
 * forced precision map's factorisation with fused builds of K and K_t (dot products in the
 * kernel's task), then an adaptive map over two γ, whose kernels come from kept dot products of
 * both cohorts; the solve and the prediction of a test cohort every time. */
static tg_status run_krr(const tg_calibrate_pass *s, int nb, tg_error *err) {
    const int64_t n = 3 * (int64_t)nb + nb / 2, snps = nb < 128 ? 256 : 2 * nb, nt = nb + nb / 2;
    tg_bed bed;
    tg_status st = fileset(s, "krr", n + nt, snps, &bed, err);
    if (st) return st;
    int64_t *rows = tg_malloc_n(n + nt, 1, sizeof *rows, NULL);
    double *y = tg_malloc_n(n, 4, sizeof *y, NULL), *pred = tg_malloc_n(nt, 8, sizeof *pred, NULL);
    if (!rows || !y || !pred) st = tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
    for (int64_t i = 0; !st && i < n + nt; i++) rows[i] = i;
    tg_rng rng;
    tg_rng_seed(&rng, 7);
    for (int64_t i = 0; !st && i < 4 * n; i++) y[i] = tg_rng_normal(&rng);
    const double gammas[2] = {1.0 / (double)snps, 2.0 / (double)snps},
                 alpha = 1 + 0.1 * sqrt((double)n);
    static const char *const names[4] = {"y1", "y2", "y3", "y4"};
    /* every precision the adaptive map can choose (FP16 and FP8 tiles below FP32 diagonals: the
     * FP16 panel solve and its scaled copy of L⁻¹, tg_trsm_fp16 and tg_half_scaled_fp32) */
    static const struct {
        tg_prec diag;
        unsigned low;
    } maps[] = {{TG_FP64, 0}, {TG_FP32, 0}, {TG_FP32, 1u << TG_FP16}, {TG_FP32, 1u << TG_FP8_E4M3},
                {TG_FP64, 1u << TG_FP32 | 1u << TG_FP16}};
    const size_t nmaps = sizeof maps / sizeof *maps;
    for (size_t k = 0; k < nmaps && !st; k++) {
        const int last = k + 1 == nmaps; /* adaptive, two γ */
        tg_krr_opts o = tg_krr_defaults();
        o.gamma = gammas, o.ngamma = last ? 2 : 1;
        o.alpha = &alpha, o.nalpha = 1;
        o.nb = nb;
        o.diag = maps[k].diag;
        o.diag_fixed = 1;
        o.allowed = maps[k].low ? maps[k].low : 1u << maps[k].diag;
        o.band = last ? -1 : 0;
        o.accuracy = 1e-6;
        tg_krr_model *m = NULL;
        if (!(st = tg_krr_fit(&bed, rows, n, 4, y, n, names, &o, &m, NULL, err)))
            st = tg_krr_predict(m, &bed, rows + n, nt, NULL, 0, pred, nt, NULL, err);
        tg_krr_model_free(m);
    }
    free(pred);
    free(y);
    free(rows);
    tg_bed_close(&bed);
    return st;
}

/* RR by the tile Cholesky at SNP tile edge nb: X'X by INT8 panels, FP64 and FP32 factors. */
static tg_status run_rr(int nb, tg_error *err) {
    const int64_t n = 2 * (int64_t)nb, m = 3 * (int64_t)nb + nb / 2;
    int8_t *x = tg_malloc_n(n, m, 1, NULL);
    double *y = tg_malloc_n(n, 1, sizeof *y, NULL), *beta = tg_malloc_n(m, 1, sizeof *beta, NULL),
           mu;
    tg_status st = TG_OK;
    if (!x || !y || !beta) st = tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
    tg_rng rng;
    tg_rng_seed(&rng, 11);
    for (int64_t i = 0; !st && i < n * m; i++) x[i] = (int8_t)(tg_rng_u64(&rng) % 3);
    for (int64_t i = 0; !st && i < n; i++) y[i] = tg_rng_normal(&rng);
    for (int d = 0; d < 2 && !st; d++) {
        tg_ridge_chol_opts o = tg_ridge_chol_defaults();
        o.lambda = (double)n;
        o.nb = nb;
        o.chol.diag = d ? TG_FP32 : TG_FP64;
        o.chol.allowed = 1u << o.chol.diag;
        st = tg_ridge_chol(x, n, m, n, 1, 1, y, n, &o, beta, m, &mu, NULL, err);
    }
    free(beta);
    free(y);
    free(x);
    return st;
}

/* Epistasis rounds of every order and score-independent kernel on @p n samples. */
static tg_status run_epi(const tg_calibrate_pass *s, int n, int quick, tg_error *err) {
    /* [order][GPU, CPU, quick]: the default blocks on GPUs; smaller on CPUs, where a round of
     * the default blocks takes minutes */
    static const int blocks[3][3] = {{1024, 256, 128}, {256, 64, 32}, {64, 32, 16}};
    tg_status st = TG_OK;
    for (int k = 2; k <= 4 && !st; k++) {
        int b = blocks[k - 2][quick ? 2 : s->kind == TG_WORKER_CPU];
        /* three blocks: at least C(3 + k − 1, k) ≥ 10 rounds */
        tg_bed bed;
        if ((st = fileset(s, "epi", n, 3 * b, &bed, err))) break;
        int8_t *cls = tg_malloc_n(n, 1, 1, NULL);
        if (!cls) st = tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
        for (int i = 0; !st && i < n; i++) cls[i] = i >= n / 2;
        tg_epi_opts o = tg_epi_defaults();
        o.order = k;
        o.block = b;
        tg_epi_report rep = {0};
        if (!st) st = tg_epistasis(&bed, cls, &o, &rep, err);
        tg_epi_report_free(&rep);
        free(cls);
        tg_bed_close(&bed);
    }
    return st;
}

/* Genotype products, both orientations, FP64 and FP32, k = 1, 16, 64 columns. */
static tg_status run_snpmm(int nb, tg_error *err) {
    /* row and SNP blocks stop growing with nb beyond 1024: larger inputs only take longer to
     * make, the products are split into the same blocks */
    int e = nb < 1024 ? nb : 1024;
    const int64_t n = 16 * (int64_t)e + 3, m = 4 * (int64_t)e + 1, len = (n > m ? n : m) * 64;
    int8_t *x = tg_malloc_n(n, m, 1, NULL);
    double *in = tg_malloc_n(len, 1, sizeof *in, NULL),
           *out = tg_malloc_n(len, 1, sizeof *out, NULL);
    float *in32 = tg_malloc_n(len, 1, sizeof *in32, NULL),
          *out32 = tg_malloc_n(len, 1, sizeof *out32, NULL);
    tg_geno *g = NULL;
    tg_status st = TG_OK;
    if (!x || !in || !out || !in32 || !out32)
        st = tg_error_set(err, TG_ERR_NOMEM, "calibrate: out of memory");
    tg_rng rng;
    tg_rng_seed(&rng, 13);
    for (int64_t i = 0; !st && i < n * m; i++) x[i] = (int8_t)(tg_rng_u64(&rng) % 3);
    for (int64_t i = 0; !st && i < len; i++) in32[i] = (float)(in[i] = tg_rng_normal(&rng));
    if (!st) st = tg_geno_from_int8(x, n, m, n, 0, &g, err);
    static const int ks[] = {1, 16, 64};
    for (int p = 0; p < 2 && !st; p++)
        for (int trans = 0; trans < 2 && !st; trans++)
            for (int c = 0; c < 3 && !st; c++)
                st = tg_geno_mul(g, trans, ks[c], p ? TG_FP32 : TG_FP64, p ? (void *)in32 : in,
                                 trans ? n : m, p ? (void *)out32 : out, trans ? m : n, err);
    tg_geno_free(g);
    free(out32);
    free(in32);
    free(out);
    free(in);
    free(x);
    return st;
}

tg_status tg_calibrate_sweep(const tg_calibrate_pass *s, const tg_calibrate_opts *o,
                             tg_error *err) {
    const unsigned w = o->workloads;
    const char *kind = s->kind == TG_WORKER_CPU ? "CPU" : "GPU";
    tg_status st = TG_OK;
    for (int r = 0; r < s->reps && !st; r++) {
        for (int i = 0; s->tiles[i] && !st; i++) {
            double t0 = tg_now();
            int nb = s->tiles[i];
            if ((w & TG_CALIBRATE_KRR) && (st = run_krr(s, nb, err))) break;
            if ((w & TG_CALIBRATE_RR) && (st = run_rr(nb, err))) break;
            if ((w & TG_CALIBRATE_SNPMM) && (st = run_snpmm(nb, err))) break;
            tg_calibrate_log(o, 0, "  %s tile %d: %.2f s", kind, nb, tg_now() - t0);
        }
        for (int i = 0; (w & TG_CALIBRATE_EPISTASIS) && s->samples[i] && !st; i++) {
            double t0 = tg_now();
            if ((st = run_epi(s, s->samples[i], o->quick, err))) break;
            tg_calibrate_log(o, 0, "  %s epistasis %d samples: %.2f s", kind, s->samples[i],
                             tg_now() - t0);
        }
    }
    return st;
}
