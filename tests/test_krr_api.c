/* The KRR workflow through the public header alone (tilegwas.h, linked with libtilegwas.a):
 * tg_krr_split_make, tg_krr_fit, tg_krr_predict, tg_krr_model_save / _load / _solve, on a
 * small simulated fileset with missing calls, against naive double code written here: training
 * frequencies, imputation by the nearest integer to 2p, the Gaussian kernel, (K + αI)w = y − ȳ
 * by a plain Cholesky, predictions K_t·w + ȳ.
 *  - all-fp64 map: predictions within 1e-10 relatively (both are backward stable solves of a
 *    system with κ ≤ 1 + N/α ≈ 140, so they differ by ~κ·N·u₆₄ ≈ 1e-12);
 *  - the default map from --pred-tol τ = 1e-3 with fp32 and fp16 allowed, on a localized kernel
 *    so that tiles are lowered: the library promises weights within its reported bound ≤ τ of
 *    fp64's (first-order: ‖ΔA‖ ≤ (NT + 1)·eps_map·‖A‖_F changes (K + αI)⁻¹ by ≤ ‖ΔA‖/α), and
 *    predictions within τ (they barely cancel here);
 *  - save → load → predict gives the fit's predictions (the files hold exact decimal copies of
 *    the weights and frequencies), and a solve with the saved factor reproduces them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tilegwas.h"

enum { NS = 96, NSNP = 120, NB = 16 };

static uint64_t lcg_state;
static double unif(void) { /* 53 random bits of a 64-bit LCG (Knuth's MMIX constants) */
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg_state >> 11) * 0x1p-53;
}

static double rel_err(const double *x, const double *ref, int64_t n) {
    double d = 0, r = 0;
    for (int64_t i = 0; i < n; i++) d += (x[i] - ref[i]) * (x[i] - ref[i]), r += ref[i] * ref[i];
    return sqrt(d / r);
}

static int8_t geno[NS * NSNP];
static double y[NS], g[NS * NSNP]; /* g: imputed counts, as the reference reads them */

/* Writes the fileset: A1 counts with 3% missing calls; phenotype y from 4 SNPs plus noise, a
 * few missing. */
static int make_data(const char *prefix) {
    static tg_sample s[NS];
    static tg_snp v[NSNP];
    static char ids[NS][16], sids[NSNP][16], zero[] = "0", a1[] = "A", a2[] = "C";
    for (int j = 0; j < NSNP; j++) {
        double f = 0.1 + 0.8 * unif();
        for (int i = 0; i < NS; i++)
            geno[i + j * NS] = unif() < 0.03 ? TG_GENO_MISSING
                                             : (int8_t)((unif() < f) + (unif() < f));
        snprintf(sids[j], sizeof sids[j], "snp%d", j);
        v[j] = (tg_snp){zero, sids[j], 0, j + 1, a1, a2};
    }
    for (int i = 0; i < NS; i++) {
        snprintf(ids[i], sizeof ids[i], "S%d", i);
        s[i] = (tg_sample){ids[i], ids[i], zero, zero, 0, NAN};
        y[i] = 0.3 * unif();
        for (int j = 0; j < 4; j++) y[i] += geno[i + j * NS] == 1 ? 1 : 0;
        if (i % 31 == 5) y[i] = NAN;
    }
    tg_error err = {0};
    if (tg_bed_write(prefix, s, NS, v, NSNP, geno, NS, &err)) diag("%s", err.msg);
    return err.status == TG_OK;
}

/* The reference: imputation with the training frequencies, kernel, Cholesky, predictions. */
static void reference(const tg_krr_split *s, double gamma, double alpha, double *w, double *pred) {
    const int64_t n = s->ntrain, nt = s->ntest;
    for (int j = 0; j < NSNP; j++) {
        double sum = 0, obs = 0;
        for (int64_t i = 0; i < n; i++) {
            int8_t x = geno[s->train[i] + j * NS];
            if (x != TG_GENO_MISSING) sum += x, obs++;
        }
        double imp = obs ? floor(sum / obs + 0.5) : 0; /* nearest integer to 2p, halves up */
        for (int i = 0; i < NS; i++)
            g[i + j * NS] = geno[i + j * NS] == TG_GENO_MISSING ? imp : geno[i + j * NS];
    }
    double *a = malloc((size_t)(n * n) * sizeof *a), mean = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < n; k++) {
            double d = 0;
            for (int j = 0; j < NSNP; j++)
                d += pow(g[s->train[i] + j * NS] - g[s->train[k] + j * NS], 2);
            a[i + k * n] = exp(-gamma * d) + (i == k ? alpha : 0);
        }
    for (int64_t i = 0; i < n; i++) mean += y[s->train[i]] / (double)n;
    for (int64_t i = 0; i < n; i++) w[i] = y[s->train[i]] - mean;
    for (int64_t j = 0; j < n; j++) { /* A = L·Lᵀ in the lower triangle */
        for (int64_t k = 0; k < j; k++) a[j + j * n] -= a[j + k * n] * a[j + k * n];
        a[j + j * n] = sqrt(a[j + j * n]);
        for (int64_t i = j + 1; i < n; i++) {
            for (int64_t k = 0; k < j; k++) a[i + j * n] -= a[i + k * n] * a[j + k * n];
            a[i + j * n] /= a[j + j * n];
        }
    }
    for (int64_t i = 0; i < n; i++) { /* L·z = y − ȳ, then Lᵀ·w = z */
        for (int64_t k = 0; k < i; k++) w[i] -= a[i + k * n] * w[k];
        w[i] /= a[i + i * n];
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        for (int64_t k = i + 1; k < n; k++) w[i] -= a[k + i * n] * w[k];
        w[i] /= a[i + i * n];
    }
    for (int64_t t = 0; t < nt; t++) {
        pred[t] = mean;
        for (int64_t i = 0; i < n; i++) {
            double d = 0;
            for (int j = 0; j < NSNP; j++)
                d += pow(g[s->test[t] + j * NS] - g[s->train[i] + j * NS], 2);
            pred[t] += exp(-gamma * d) * w[i];
        }
    }
    free(a);
}

/* Fits with @p o, predicts the held-out samples, compares with the reference. */
static tg_krr_model *fit_check(const tg_bed *bed, const tg_krr_split *s, tg_krr_opts *o,
                               const char *what, double *pred) {
    static const char *const names[] = {"y"};
    const int64_t n = s->ntrain, nt = s->ntest;
    double *wref = malloc((size_t)n * sizeof *wref), *pref = malloc((size_t)nt * sizeof *pref),
           *w = malloc((size_t)n * sizeof *w);
    reference(s, o->gamma[0], o->alpha[0], wref, pref);
    tg_krr_model *m = NULL;
    tg_krr_fit_report rep = {0};
    tg_error err = {0};
    tg_status st = tg_krr_fit(bed, s->train, n, 1, y, NS, names, o, &m, &rep, &err);
    if (!st) st = tg_krr_predict(m, bed, s->test, nt, NULL, 0, pred, nt, NULL, &err);
    if (!st) st = tg_krr_model_weights(m, 0, 0, w, n, &err);
    if (st) diag("%s: %s", what, err.msg);
    const tg_chol_report *c = &rep.pair[0].chol;
    double ep = rel_err(pred, pref, nt), ew = rel_err(w, wref, n);
    int64_t low = c->tiles[TG_FP32] + c->tiles[TG_FP16];
    if (o->pred_tol > 0 && o->allowed != 1u << TG_FP64)
        ok(!st && low > 0 && c->bound <= o->pred_tol && ew <= c->bound && ep <= o->pred_tol,
           "%s: tiles fp64 %lld fp32 %lld fp16 %lld, weights vs double %.3g <= bound %.3g, "
           "predictions %.3g <= τ %g", what, (long long)c->tiles[TG_FP64],
           (long long)c->tiles[TG_FP32], (long long)c->tiles[TG_FP16], ew, c->bound, ep,
           o->pred_tol);
    else
        ok(!st && low == 0 && ep <= 1e-10 && ew <= 1e-10,
           "%s: all fp64, predictions vs double %.3g, weights %.3g <= 1e-10", what, ep, ew);
    tg_krr_fit_report_free(&rep);
    free(wref), free(pref), free(w);
    if (st) tg_krr_model_free(m);
    return st ? NULL : m;
}

/* save → load → predict, and a solve with the saved factor, against the fit's predictions. */
static void model_files(tg_krr_model *m, const tg_bed *bed, const tg_krr_split *s,
                        const double *pred) {
    char dir[] = "/tmp/tg-krr-api-XXXXXX", path[64];
    double *p = malloc((size_t)s->ntest * sizeof *p), *q = malloc((size_t)s->ntest * sizeof *q);
    static const char *const names[] = {"y"};
    tg_krr_model *l = NULL;
    tg_error err = {0};
    tg_status st = mkdtemp(dir) ? TG_OK : tg_error_set(&err, TG_ERR_IO, "mkdtemp");
    if (!st) st = tg_krr_model_check_dir(dir, &err);
    if (!st) st = tg_krr_model_save(m, dir, NULL, &err);
    if (!st) st = tg_krr_model_load(dir, &l, &err);
    if (!st) st = tg_krr_predict(l, bed, s->test, s->ntest, NULL, 0, p, s->ntest, NULL, &err);
    if (st) diag("model files: %s", err.msg);
    double e = st ? INFINITY : rel_err(p, pred, s->ntest);
    ok(!st && e <= 1e-15, "save -> load -> predict: predictions vs the fit's %.3g <= 1e-15", e);
    if (!st) st = tg_krr_model_solve(l, 1, y, NS, names, NULL, &err);
    if (!st) st = tg_krr_predict(l, bed, s->test, s->ntest, NULL, 0, q, s->ntest, NULL, &err);
    if (st) diag("solve with the saved factor: %s", err.msg);
    e = st ? INFINITY : rel_err(q, pred, s->ntest);
    ok(!st && e <= 1e-12, "the same phenotype solved with the saved factor: predictions vs the "
       "fit's %.3g <= 1e-12", e);
    tg_krr_model_free(l);
    static const char *const files[] = {"model.tsv", "train.tsv", "snps.tsv", "pheno.tsv",
                                        "weights.tsv", "factor.bin"};
    for (int f = 0; f < 6; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        unlink(path);
    }
    rmdir(dir);
    free(p), free(q);
}

int main(void) {
    lcg_state = tap_seed();
    char prefix[] = "/tmp/tg-krr-api-XXXXXX", path[64];
    int fd = mkstemp(prefix);
    if (fd < 0 || close(fd) || !make_data(prefix)) {
        printf("Bail out! cannot write the fileset\n");
        return 1;
    }
    tg_error err = {0};
    tg_bed bed;
    tg_runtime_opts ro = tg_runtime_defaults();
    if (tg_bed_open(prefix, &bed, &err) || tg_runtime_start(&ro, &err)) {
        printf("Bail out! %s\n", err.msg);
        return 1;
    }
    tg_krr_split s;
    tg_status st = tg_krr_split_make(NS, 1, y, NS, 0.25, 7, &s, &err);
    int64_t nan = 0, intest = 0;
    for (int i = 0; i < NS; i++) nan += isnan(y[i]);
    for (int64_t i = 0; !st && i < s.ntest; i++) intest += isnan(y[s.test[i]]);
    ok(!st && s.ntest == 24 && s.ntrain + s.ntest + s.dropped == NS && s.dropped == nan - intest,
       "split: %lld test (round(0.25 N)), %lld training, %lld dropped (a missing phenotype)",
       (long long)s.ntest, (long long)s.ntrain, (long long)s.dropped);
    /* 1/median distance ≈ 1/(N_S·E|g_i − g_j|²) ≈ 1/(0.8·N_S) */
    double gamma = 1.0 / (0.8 * NSNP), alpha = 0.5, p64[NS], plow[NS];
    tg_krr_opts o = tg_krr_defaults();
    o.gamma = &gamma, o.ngamma = 1, o.alpha = &alpha, o.nalpha = 1, o.nb = NB;
    o.allowed = 1u << TG_FP64, o.diag_fixed = 1, o.keep_factor = 1;
    tg_krr_model *m = fit_check(&bed, &s, &o, "gaussian, fp64 map", p64);
    if (m) model_files(m, &bed, &s, p64);
    tg_krr_model_free(m);
    double gl = 4 * gamma; /* localized: small off-diagonal tiles, which the map lowers */
    o = tg_krr_defaults();
    o.gamma = &gl, o.ngamma = 1, o.alpha = &alpha, o.nalpha = 1, o.nb = NB;
    o.allowed = 1u << TG_FP32 | 1u << TG_FP16;
    tg_krr_model_free(fit_check(&bed, &s, &o, "gaussian, map from pred_tol 1e-3", plow));
    tg_krr_split_free(&s);
    tg_runtime_stop();
    tg_bed_close(&bed);
    static const char *const ext[] = {"", ".bed", ".bim", ".fam"};
    for (int e = 0; e < 4; e++) {
        snprintf(path, sizeof path, "%s%s", prefix, ext[e]);
        unlink(path);
    }
    tap_plan(tap_n);
    return tap_done();
}
