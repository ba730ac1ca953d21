/* Genotype matrix products against a naive double reference written here from the definition
 * (Z_ij = (x_ij − 2p_j)·w_j, 0 when missing), on random genotypes with missing calls, sizes that
 * are not multiples of 4, 5 or 32, small blocks (many tasks, block edges) and default ones,
 * k = 1, 3, 10, 20, 64, both orientations, FP64 and FP32, scaled and not, with a monomorphic, an
 * all-missing and an all-heterozygous SNP, and inputs whose columns are far apart in magnitude.
 * Runs once with CPU workers only (twice where the CPU has AMX tiles: their products, then the
 * lookup kernel's) and, where CUDA workers exist, twice with the GPU only (its FP64 products
 * from the 2-bit tiles it makes, then from the 5codes) and once with both (TG_REQUIRE_GPU=1: a
 * GPU must exist).
 *
 * Bounds: FP64: ‖out − ref‖_F ≤ 1e-12·‖ref‖_F. Both precisions, per element:
 *   |out − ref| ≤ (N + 10)·u·Σ_t w_t·(2 + 2p_t)·|in_t|   (N the inner dimension, u = 2^-53/2^-24)
 * the worst-case bound of a sum of N + 10 rounded terms each at most w_t(x + 2p_t)|in_t|
 * (x ≤ 2): it holds in any summation order (tables, atomics). Also: a .bed written to disk gives
 * the same frequencies and products as the int8 array; repeated products give identical results;
 * bad arguments are refused with messages naming what is wrong. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/snpmm.h"
#include "codelets/fivecodes_amx.h"
#include "common.h"
#include "runtime/runtime.h"
#include "tap.h"

typedef struct {
    int64_t n, m;
    int8_t *g;     /* n × m */
    double *p, *w; /* reference frequency and scale (w = 0 for an excluded SNP) */
    int64_t excluded;
} data;

static void make_data(data *d, int64_t n, int64_t m, int scale, tg_rng *r) {
    d->n = n;
    d->m = m;
    d->g = malloc((size_t)(n * m));
    d->p = malloc((size_t)m * sizeof *d->p);
    d->w = malloc((size_t)m * sizeof *d->w);
    for (int64_t j = 0; j < m; j++) {
        double f = 0.02 + 0.96 * tg_rng_uniform(r), miss = j % 3 ? 0.05 : 0.3;
        for (int64_t i = 0; i < n; i++) {
            int8_t v = (int8_t)((tg_rng_uniform(r) < f) + (tg_rng_uniform(r) < f));
            if (tg_rng_uniform(r) < miss) v = TG_GENO_MISSING;
            d->g[i + j * n] = v;
        }
    }
    /* special SNPs: monomorphic with missing calls, all missing, all heterozygous */
    if (m > 3)
        for (int64_t i = 0; i < n; i++) {
            d->g[i + 1 * n] = i % 7 ? 2 : TG_GENO_MISSING;
            d->g[i + 2 * n] = TG_GENO_MISSING;
            d->g[i + 3 * n] = 1;
        }
    d->excluded = 0;
    for (int64_t j = 0; j < m; j++) {
        int64_t obs = 0, sum = 0;
        for (int64_t i = 0; i < n; i++)
            if (d->g[i + j * n] >= 0) {
                obs++;
                sum += d->g[i + j * n];
            }
        d->p[j] = obs ? sum / (2.0 * obs) : NAN;
        int ex = obs == 0 || d->p[j] == 0 || d->p[j] == 1;
        d->excluded += ex;
        d->w[j] = ex ? 0 : scale ? 1 / sqrt(2 * d->p[j] * (1 - d->p[j])) : 1;
    }
}

static void free_data(data *d) {
    free(d->g);
    free(d->p);
    free(d->w);
}

/* ref (rows × k) = Z·in or Zᵀ·in; bnd = Σ w(2 + 2p)|in| per element */
static void reference(const data *d, int trans, int k, const double *in, int64_t ldin, double *ref,
                      double *bnd) {
    int64_t rows = trans ? d->m : d->n;
    for (int64_t c = 0; c < k; c++)
        for (int64_t r = 0; r < rows; r++) {
            double s = 0, b = 0;
            int64_t nt = trans ? d->n : d->m;
            for (int64_t t = 0; t < nt; t++) {
                int64_t i = trans ? t : r, j = trans ? r : t;
                int8_t x = d->g[i + j * d->n];
                double z = d->w[j] == 0 || x < 0 ? 0 : (x - 2 * d->p[j]) * d->w[j];
                double v = in[t + c * ldin];
                s += z * v;
                if (d->w[j] != 0) b += d->w[j] * (2 + 2 * d->p[j]) * fabs(v);
            }
            ref[r + c * rows] = s;
            bnd[r + c * rows] = b;
        }
}

/* The scale of input value (t, c) in check_magnitudes: columns of tiny, huge and zero values,
 * one whose values alternate between 1e-150 and 1e150, and a plain one */
static double magnitude(int64_t t, int64_t c) {
    static const double col[] = {1e-300, 1e300, 0, -1, 1};
    return col[c % 5] >= 0 ? col[c % 5] : t % 2 ? 1e-150 : 1e150;
}

/* One product on the running workers, checked; returns 1 when good. With @p mags the input's
 * values are scaled by magnitude(). */
static int check_product_in(tg_geno *g, const data *d, int trans, int k, tg_prec prec,
                            tg_rng *r, int mags, const char *what) {
    int64_t nt = trans ? d->n : d->m, rows = trans ? d->m : d->n;
    int64_t ldin = nt + 3, ldout = rows + 2;
    double *in = malloc((size_t)(ldin * k) * sizeof *in),
           *ref = malloc((size_t)(rows * k) * sizeof *ref),
           *bnd = malloc((size_t)(rows * k) * sizeof *bnd);
    size_t es = tg_prec_size(prec);
    void *inp = malloc((size_t)(ldin * k) * es), *out = malloc((size_t)(ldout * k) * es);
    for (int64_t e = 0; e < ldin * k; e++) {
        double x = tg_rng_normal(r) * (mags ? magnitude(e % ldin, e / ldin) : 1);
        tg_prec_store(prec, inp, (size_t)e, x);
        in[e] = tg_prec_load(prec, inp, (size_t)e); /* the reference sees the rounded input */
    }
    for (int64_t e = 0; e < ldout * k; e++) tg_prec_store(prec, out, (size_t)e, -777.0);
    reference(d, trans, k, in, ldin, ref, bnd);
    tg_error err = {0};
    tg_status st = tg_geno_mul(g, trans, k, prec, inp, ldin, out, ldout, &err);
    double u = prec == TG_FP64 ? 0x1p-53 : 0x1p-24, num = 0, den = 0, worst = 0;
    int64_t bad = 0, gap_bad = 0;
    for (int64_t c = 0; c < k; c++) {
        for (int64_t i = 0; i < rows; i++) {
            double got = tg_prec_load(prec, out, (size_t)(i + c * ldout)), want = ref[i + c * rows];
            double e = fabs(got - want), lim = (double)(nt + 10) * u * bnd[i + c * rows];
            num += e * e;
            den += want * want;
            if (!(e <= lim)) {
                if (bad++ < 3)
                    diag("%s: row %" PRId64 " col %" PRId64 ": got %.17g want %.17g (bound %.3g)",
                         what, i, c, got, want, lim);
            } else if (lim > 0 && e / lim > worst) {
                worst = e / lim;
            }
        }
        for (int64_t i = rows; i < ldout; i++) /* rows past the matrix stay untouched */
            gap_bad += tg_prec_load(prec, out, (size_t)(i + c * ldout)) != -777.0;
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    /* with @p mags the norms overflow: the elements' bounds alone */
    int good = st == TG_OK && bad == 0 && gap_bad == 0 &&
               (prec != TG_FP64 || mags || rel <= 1e-12);
    ok(good, "%s: rel. error %.2e, worst error/bound %.2e%s%s", what, rel, worst, st ? ": " : "",
       st ? err.msg : "");
    free(in);
    free(ref);
    free(bnd);
    free(inp);
    free(out);
    return good;
}

static int check_product(tg_geno *g, const data *d, int trans, int k, tg_prec prec, tg_rng *r,
                         const char *what) {
    return check_product_in(g, d, trans, k, prec, r, 0, what);
}

/* Scaled random genotypes of n × m in @p d, prepared with the default blocks (a check names
 * the preparation); NULL, @p d freed, when it fails. */
static tg_geno *prepare_scaled(const char *workers, data *d, int64_t n, int64_t m, tg_rng *r) {
    make_data(d, n, m, 1, r);
    tg_geno *g = NULL;
    tg_error err = {0};
    if (!ok(tg_geno_from_int8(d->g, d->n, d->m, d->n, 1, &g, &err) == TG_OK, "%s: prepared: %s",
            workers, err.msg)) {
        free_data(d);
        return NULL;
    }
    return g;
}

/* Columns far apart in magnitude, and one whose values are: the CPU's AMX products scale each
 * column by its largest value (FP64 only: FP32 has no 1e300). */
static void check_magnitudes(const char *workers, tg_rng *r) {
    data d;
    tg_geno *g = prepare_scaled(workers, &d, 1037, 1203, r);
    if (!g) return;
    for (int trans = 0; trans < 2; trans++) {
        char what[160];
        snprintf(what, sizeof what, "%s: %s 1037x1203 k=10, columns of 1e-300, 1e300, 0, "
                 "1e+-150 and 1", workers, trans ? "Z'L" : "ZL");
        check_product_in(g, &d, trans, 10, TG_FP64, r, 1, what);
    }
    tg_geno_free(g);
    free_data(&d);
}

typedef struct {
    int64_t n, m, rb, sb;
} shape;

static void run_all(const char *workers, tg_rng *r) {
    /* shapes 5 to 8: default blocks (one; three of 1536, 1024 and 940 samples; the same of
     * SNPs), several CUDA thread blocks and splits; 3500 × 11 also passes the CPU kernel's
     * accumulator chunk of 1,024 rows at k = 64 in FP64. The CPU kernel's entries (64-byte
     * vectors, 16-byte tail vectors) in FP64: k = 1 (0, 1), 3 (0, 2), 10 (1, 1), 12 (1, 2),
     * 18 (2, 1), 20 (2, 2), 64 (8, 0). The last two: Λ's offsets summed over chunks of 8,192
     * rows in either orientation. */
    static const shape shapes[] = {{1, 7, 0, 0},         {37, 23, 0, 0},     {203, 157, 64, 33},
                                   {131, 611, 40, 101},  {1037, 1203, 0, 0}, {3500, 300, 0, 0},
                                   {300, 3500, 0, 0},    {3500, 11, 0, 0},
                                   {19, 16500, 0, 0},    {16500, 19, 0, 0}};
    static const int ks[] = {1, 3, 10, 12, 18, 20, 64};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int scale = 0; scale < 2; scale++) {
            const shape *sh = &shapes[s];
            data d;
            make_data(&d, sh->n, sh->m, scale, r);
            tg_geno *g = NULL;
            tg_error err = {0};
            if (!ok(tg_geno_from_int8_blocks(d.g, d.n, d.m, d.n, scale, sh->rb, sh->sb, &g, &err) ==
                        TG_OK,
                    "%s: %" PRId64 " x %" PRId64 " prepared", workers, d.n, d.m)) {
                diag("%s", err.msg);
                free_data(&d);
                continue;
            }
            int fgood = tg_geno_excluded(g) == d.excluded;
            for (int64_t j = 0; j < d.m; j++) {
                double a = tg_geno_freq(g)[j], b = d.p[j];
                fgood &= (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-15;
            }
            ok(fgood, "%s: %" PRId64 " x %" PRId64 ": frequencies, %" PRId64 " excluded", workers,
               d.n, d.m, d.excluded);
            for (int trans = 0; trans < 2; trans++) {
                /* blocks of units of 512 rows, or of the size asked for, adding up to the rows;
                 * when more than one: 2 units on average at least, 16 at most, the first no
                 * smaller than the last but one (sizes shrink along the product) */
                int64_t rows = trans ? d.m : d.n, size = trans ? sh->sb : sh->rb;
                int64_t unit = size > 0 ? size : 512, nb = tg_geno_nblocks(g, trans);
                int64_t hi = 0, first = 0, before_last = 0,
                        good = tg_geno_block_start(g, trans, 0) == 0 &&
                               tg_geno_block_start(g, trans, nb) == rows;
                for (int64_t b = 0; b < nb; b++) {
                    int64_t a0 = tg_geno_block_start(g, trans, b),
                            len = tg_geno_block_start(g, trans, b + 1) - a0;
                    good &= len > 0 && (a0 % unit == 0);
                    hi = len > hi ? len : hi;
                    if (b == 0) first = len;
                    if (b + 2 == nb) before_last = len;
                }
                if (size == 0 && nb > 1)
                    good &= 2 * nb <= (rows + unit - 1) / unit && hi <= 16 * unit &&
                            (nb < 3 || first >= before_last);
                if (size == 0 && rows == 3500) /* 7 units: 3 + 2 + 2 */
                    good &= nb == 3 && tg_geno_block_start(g, trans, 1) == 1536;
                ok(good, "%s: %" PRId64 " x %" PRId64 ": %" PRId64 " blocks of %s", workers, d.n,
                   d.m, nb, trans ? "SNPs" : "samples");
            }
            for (int trans = 0; trans < 2; trans++)
                for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                    for (int pi = 0; pi < 2; pi++) {
                        /* k = 64 on the smaller shapes only: the reference is n·m·k */
                        if (ks[ki] == 64 && d.n * d.m > 40000) continue;
                        char what[160];
                        snprintf(what, sizeof what, "%s: %s %" PRId64 "x%" PRId64 " k=%d %s%s",
                                 workers, trans ? "Z'L" : "ZL", d.n, d.m, ks[ki],
                                 pi ? "fp32" : "fp64", scale ? " scaled" : "");
                        check_product(g, &d, trans, ks[ki], pi ? TG_FP32 : TG_FP64, r, what);
                    }
            /* the products split along their inner dimension (the default only with GPUs):
             * parts of 640 table rows (four chunks of the GPU kernels' 5codes, five of their
             * 2-bit tiles), any kind of worker taking any part of a block */
            tg_geno_set_part_rows(g, 640);
            for (int trans = 0; trans < 2; trans++)
                for (int ki = 0; ki < 3; ki++)
                    for (int pi = 0; pi < 2; pi++) {
                        const int kp = (int[]){1, 10, 20}[ki];
                        char what[160];
                        snprintf(what, sizeof what, "%s: %s %" PRId64 "x%" PRId64 " k=%d %s%s, "
                                 "%" PRId64 " parts", workers, trans ? "Z'L" : "ZL", d.n, d.m,
                                 kp, pi ? "fp32" : "fp64", scale ? " scaled" : "",
                                 ((trans ? d.n : d.m) + 639) / 640);
                        check_product(g, &d, trans, kp, pi ? TG_FP32 : TG_FP64, r, what);
                    }
            tg_geno_free(g);
            free_data(&d);
        }
}

/* Zᵀ·Λ̃ over enough samples that the library splits it with a GPU running (snpmm.c, part_end:
 * a first part of 131,200 table rows, then 168,800, the later part the longer), FP64 and FP32:
 * one part with CPU workers only. */
static void check_default_parts(const char *workers, tg_rng *r) {
    data d;
    tg_geno *g = prepare_scaled(workers, &d, 300000, 24, r);
    if (!g) return;
    for (int pi = 0; pi < 2; pi++) {
        char what[160];
        snprintf(what, sizeof what, "%s: Z'L 300000x24 k=10 %s, the library's parts", workers,
                 pi ? "fp32" : "fp64");
        check_product(g, &d, 1, 10, pi ? TG_FP32 : TG_FP64, r, what);
    }
    tg_geno_free(g);
    free_data(&d);
}

/* The same product twice gives identical bits (the handles are reused), and a .bed gives what
 * the int8 array gives. */
static void check_bed_and_repeat(tg_rng *r) {
    data d;
    make_data(&d, 57, 44, 1, r);
    char dir[] = "/tmp/tg_snpmm_XXXXXX";
    if (!mkdtemp(dir)) {
        ok(0, "temporary folder");
        return;
    }
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s/g", dir);
    tg_error err = {0};
    tg_bed bed;
    tg_geno *ga = NULL, *gb = NULL;
    int good = write_bed(prefix, d.g, d.n, d.m, &err) == TG_OK &&
               tg_bed_open(prefix, &bed, &err) == TG_OK;
    if (good) {
        good = tg_geno_from_bed(&bed, 1, &gb, &err) == TG_OK &&
               tg_geno_from_int8(d.g, d.n, d.m, d.n, 1, &ga, &err) == TG_OK;
        tg_bed_close(&bed);
    }
    if (!ok(good, ".bed written and prepared: %s", good ? "" : err.msg)) return;
    ok(!memcmp(tg_geno_freq(ga), tg_geno_freq(gb), (size_t)d.m * sizeof(double)) &&
           tg_geno_excluded(ga) == tg_geno_excluded(gb),
       ".bed and int8 array: same frequencies and exclusions");
    /* the keyed rows' A1_FREQ, missing rate and N, from the preparation's counts: the
     * definition's, counted here from the array */
    tg_snp_stats *st = malloc((size_t)d.m * sizeof *st);
    tg_geno_stats(gb, st);
    int64_t stats_bad = 0;
    for (int64_t j = 0; j < d.m; j++) {
        int64_t obs = 0, a1 = 0;
        for (int64_t i = 0; i < d.n; i++) {
            const int8_t x = d.g[i + j * d.n];
            obs += x >= 0;
            a1 += x > 0 ? x : 0;
        }
        const double p = tg_a1_freq(a1, obs);
        stats_bad += st[j].n_obs != obs || st[j].missing != (double)(d.n - obs) / (double)d.n ||
                     !(st[j].freq == p || (isnan(p) && isnan(st[j].freq)));
    }
    ok(stats_bad == 0, "tg_geno_stats: A1 frequency, missing rate and calls of every SNP "
                       "(%lld wrong of %lld)", (long long)stats_bad, (long long)d.m);
    free(st);
    for (int trans = 0; trans < 2; trans++) {
        int64_t nt = trans ? d.n : d.m, rows = trans ? d.m : d.n, k = 5;
        double *in = malloc((size_t)(nt * k) * sizeof *in),
               *o[3] = {malloc((size_t)(rows * k) * 8), malloc((size_t)(rows * k) * 8),
                        malloc((size_t)(rows * k) * 8)};
        for (int64_t e = 0; e < nt * k; e++) in[e] = tg_rng_normal(r);
        int failed = tg_geno_mul(ga, trans, k, TG_FP64, in, nt, o[0], rows, &err) ||
                     tg_geno_mul(ga, trans, k, TG_FP64, in, nt, o[1], rows, &err) ||
                     tg_geno_mul(gb, trans, k, TG_FP64, in, nt, o[2], rows, &err);
        /* CPU workers only: the same arithmetic in the same order, so the same bits */
        size_t bytes = (size_t)(rows * k) * sizeof(double);
        ok(!failed && !memcmp(o[0], o[1], bytes) && !memcmp(o[0], o[2], bytes),
           "%s: repeated product and .bed give the same bits as the int8 array",
           trans ? "Z'L" : "ZL");
        free(in);
        for (int q = 0; q < 3; q++) free(o[q]);
    }
    tg_geno_free(ga);
    tg_geno_free(gb);
    remove_bed(prefix);
    rmdir(dir);
    free_data(&d);
}

static void check_bad_input(tg_rng *r) {
    data d;
    make_data(&d, 20, 16400, 0, r); /* Λ's offsets: two chunks of 8,192 rows and a part */
    tg_geno *g = NULL;
    tg_error err = {0};
    /* bad values in several chunks of SNPs, prepared in parallel: the first in SNP order named */
    d.g[5 + 97 * d.n] = 3;
    d.g[2 + 45 * d.n] = 5;
    d.g[9 + 45 * d.n] = 4;
    ok(tg_geno_from_int8(d.g, d.n, d.m, d.n, 0, &g, &err) == TG_ERR_ARG &&
           strstr(err.msg, "sample 2 at SNP 45 is 5"),
       "bad genotypes refused, the first one named: %s", err.msg);
    d.g[5 + 97 * d.n] = d.g[2 + 45 * d.n] = d.g[9 + 45 * d.n] = 1;
    ok(tg_geno_from_int8(d.g, d.n, d.m, d.n - 1, 0, &g, &err) == TG_ERR_ARG, "ld < n refused: %s",
       err.msg);
    ok(tg_geno_from_int8(d.g, 0, d.m, 1, 0, &g, &err) == TG_ERR_ARG, "n = 0 refused: %s", err.msg);
    if (tg_geno_from_int8(d.g, d.n, d.m, d.n, 0, &g, &err)) {
        ok(0, "prepare: %s", err.msg);
        free_data(&d);
        return;
    }
    double *in = calloc((size_t)d.m * 2, sizeof *in), out[20 * 2];
    const int64_t ld = d.m;
    ok(tg_geno_mul(g, 0, 0, TG_FP64, in, ld, out, 20, &err) == TG_ERR_ARG &&
           strstr(err.msg, "0 columns"),
       "k = 0 refused: %s", err.msg);
    ok(tg_geno_mul(g, 0, 65, TG_FP64, in, ld, out, 20, &err) == TG_ERR_ARG, "k = 65 refused: %s",
       err.msg);
    ok(tg_geno_mul(g, 0, 2, TG_FP16, in, ld, out, 20, &err) == TG_ERR_ARG &&
           strstr(err.msg, "fp16"),
       "fp16 refused: %s", err.msg);
    ok(tg_geno_mul(g, 0, 2, TG_FP64, in, ld - 1, out, 20, &err) == TG_ERR_ARG,
       "ldin < m refused: %s", err.msg);
    ok(tg_geno_mul(g, 2, 2, TG_FP64, in, ld, out, 20, &err) == TG_ERR_ARG, "trans 2 refused: %s",
       err.msg);
    in[3 + 1 * ld] = NAN;
    in[16390 + 0 * ld] = INFINITY;
    ok(tg_geno_mul(g, 0, 2, TG_FP64, in, ld, out, 20, &err) == TG_ERR_ARG &&
           strstr(err.msg, "row 16390") && strstr(err.msg, "column 0"),
       "infinity in the first column's last chunk named first: %s", err.msg);
    in[16390] = 0;
    ok(tg_geno_mul(g, 0, 2, TG_FP64, in, ld, out, 20, &err) == TG_ERR_ARG &&
           strstr(err.msg, "row 3") && strstr(err.msg, "column 1"),
       "NaN in the input names its row and column: %s", err.msg);
    /* in parts: a bad value in the third part is found after the first two were submitted */
    tg_geno_set_part_rows(g, 1600);
    in[3 + 1 * ld] = 0;
    in[4000 + 1 * ld] = -INFINITY;
    ok(tg_geno_mul(g, 0, 2, TG_FP64, in, ld, out, 20, &err) == TG_ERR_ARG &&
           strstr(err.msg, "row 4000") && strstr(err.msg, "column 1"),
       "in parts of 1,600 rows, -inf in the third part named: %s", err.msg);
    free(in);
    tg_geno_free(g);
    free_data(&d);
}

int main(void) {
    tg_rng r;
    tg_rng_seed(&r, tap_seed());
    tg_error err = {0};

    /* before any runtime: a product is refused */
    {
        int8_t g[6] = {0, 1, 2, 1, 0, 2};
        tg_geno *x = NULL;
        double in[2] = {1, 2}, out[3];
        ok(tg_geno_from_int8(g, 3, 2, 3, 0, &x, &err) == TG_OK &&
               tg_geno_mul(x, 0, 1, TG_FP64, in, 2, out, 3, &err) == TG_ERR_RUNTIME,
           "product without a runtime refused: %s", err.msg);
        tg_geno_free(x);
    }

    tg_runtime_opts o = tg_runtime_defaults();
    if (tg_runtime_start(&o, &err)) {
        ok(0, "runtime: %s", err.msg);
        return tap_done();
    }
    int ngpu = tg_runtime_ngpu();
    tg_runtime_stop();
    if (getenv("TG_REQUIRE_GPU")) ok(ngpu > 0, "a CUDA worker exists (TG_REQUIRE_GPU is set)");

    struct {
        const char *name;
        int ncpu, ngpu;
    } configs[] = {{"cpu", -1, 0}, {"gpu", 0, 1}, {"cpu+gpu", -1, -1}};
    for (int c = 0; c < (ngpu ? 3 : 1); c++) {
        o = tg_runtime_defaults();
        o.ncpu = configs[c].ncpu;
        o.ngpu = configs[c].ngpu;
        if (!ok(tg_runtime_start(&o, &err) == TG_OK, "%s runtime started", configs[c].name)) {
            diag("%s", err.msg);
            continue;
        }
        /* on a CPU with AMX tiles, its CPU products and then the lookup kernel's; on the GPU
         * alone, its products from the 2-bit tiles and then from the 5codes */
        const int amx = tg_fc_amx_available(), rounds = c == 0 ? 1 + amx : c == 1 ? 2 : 1;
        for (int round = 0; round < rounds; round++) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", configs[c].name,
                     rounds == 1 ? ""
                     : c == 0    ? (round ? " (lookups)" : " (AMX)")
                                 : (round ? " (5codes)" : " (tiles)"));
            tg_fc_amx_use(c != 0 || round == 0);
            tg_geno_gpu_tiles_use(c != 1 || round == 0);
            run_all(name, &r);
            check_default_parts(name, &r);
            check_magnitudes(name, &r);
        }
        tg_fc_amx_use(1);
        tg_geno_gpu_tiles_use(1);
        if (c == 0) {
            check_bed_and_repeat(&r);
            check_bad_input(&r);
        }
        tg_runtime_stop();
    }
    tap_plan(tap_n);
    return tap_done();
}
