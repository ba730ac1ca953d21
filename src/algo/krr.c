/* The KRR workflow (the KRR paper's Build, Associate and Predict phases, Algorithms 2-4): the
 * train/test split, centring, the (γ, α) grid of fits (the training kernel from one set of
 * INT32 dot products reused by every pair, K + αI factored under the precision map, all
 * phenotypes solved at once), and the predictions of a test cohort from the test-train kernel
 * (built once per γ). The model's folder is src/algo/krr_model.c. */
#include "algo/krr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/fixed.h"
#include "base/rng.h"
#include "io/out.h"
#include "runtime/runtime.h"

tg_krr_opts tg_krr_defaults(void) {
    return (tg_krr_opts){.kernel = TG_KERNEL_GAUSSIAN, .pred_tol = 1e-3, .diag = TG_FP64,
                         .band = -1};
}

/* GEMM tiles below 2048 waste a GPU; 512 keeps a CPU run's cores busy; from 32,768 samples
 * tiles of 4096 halve the GPU's idle time between its tasks (docs/SCHEDULING.md). */
int tg_krr_tile(int64_t n, const char **why) {
    int gpus = tg_runtime_ngpu() > 0, big = n >= 32768;
    if (why) *why = !gpus ? "CPU only" : big ? "GPUs in use, 32,768 samples or more" : "GPUs in use";
    return gpus ? (big ? 4096 : 2048) : 512;
}

/* The bytes of the lower tiles of an n × n matrix in tiles of nb, @p el bytes an entry, per
 * rank. */
static double lower_bytes(int64_t n, int nb, double el) {
    int64_t nt = (n + nb - 1) / nb;
    return el * (double)nb * nb * (double)(nt * (nt + 1) / 2) / tg_runtime_nranks();
}

int tg_krr_in_map(const tg_krr_opts *o, int64_t n, int nb, int keep_gram, const char **why,
                  double *diag_bytes, double *memory_bytes) {
    double need = lower_bytes(n, nb, (double)(tg_prec_size(o->diag) +
                                              (keep_gram ? sizeof(int32_t) : 0)));
    int gpus = tg_runtime_ngpu();
    double have = gpus ? (double)tg_runtime_gpu_memory() * gpus : (double)tg_mem_available(NULL);
    if (diag_bytes) *diag_bytes = need;
    if (memory_bytes) *memory_bytes = have > 0 ? have : -1;
    if (why) *why = NULL;
    if (o->build != TG_KRR_BUILD_AUTO) return o->build == TG_KRR_BUILD_MAP;
    int map = have > 0 && need > 0.75 * have;
    if (why)
        *why = !map    ? "K in the diagonal precision fits"
               : gpus ? "K in the diagonal precision would take over 3/4 of the GPUs' memory"
                      : "K in the diagonal precision would take over 3/4 of the available memory";
    return map;
}

unsigned tg_krr_precisions(const char **why) {
    return tg_precisions_by_workers(1u << TG_FP32 | 1u << TG_FP16 | 1u << TG_FP8_E4M3,
                                    1u << TG_FP32, why);
}

tg_status tg_krr_split_make(int64_t n, int k, const double *y, int64_t ldy, double test_frac,
                            uint64_t seed, tg_krr_split *s, tg_error *err) {
    *s = (tg_krr_split){.empty_pheno = -1};
    char *is_test = tg_calloc_n(n + 1, 1, 1, err);
    int64_t *perm = NULL;
    tg_status st = TG_OK;
    if (!is_test || !(s->train = tg_malloc_n(n, 1, sizeof *s->train, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    if (!isnan(test_frac)) { /* the first round(F·n) of a seeded shuffle */
        if (!(perm = tg_malloc_n(n, 1, sizeof *perm, err)) ||
            !(s->test = tg_malloc_n(n, 1, sizeof *s->test, err))) {
            st = TG_ERR_NOMEM;
            goto cleanup;
        }
        tg_rng r;
        tg_rng_seed(&r, seed);
        for (int64_t i = 0; i < n; i++) perm[i] = i;
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)tg_rng_below(&r, (uint64_t)i + 1), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        int64_t nt = (int64_t)llround(test_frac * (double)n);
        for (int64_t i = 0; i < nt; i++) is_test[perm[i]] = 1;
        for (int64_t i = 0; i < n; i++)
            if (is_test[i]) s->test[s->ntest++] = i;
    }
    for (int64_t i = 0; i < n; i++) {
        if (is_test[i]) continue;
        s->candidates++;
        int all = 1;
        for (int c = 0; c < k; c++) all &= !isnan(y[i + c * ldy]);
        if (all) s->train[s->ntrain++] = i;
        else s->dropped++;
    }
    for (int c = 0; c < k && s->candidates && s->empty_pheno < 0; c++) {
        int64_t obs = 0;
        for (int64_t i = 0; i < n; i++) obs += !is_test[i] && !isnan(y[i + c * ldy]);
        if (!obs) s->empty_pheno = c;
    }
cleanup:
    free(perm);
    free(is_test);
    if (st) tg_krr_split_free(s);
    return st;
}

void tg_krr_split_free(tg_krr_split *s) {
    free(s->train);
    free(s->test);
    s->train = s->test = NULL;
}

void tg_krr_fit_report_free(tg_krr_fit_report *r) {
    if (!r) return;
    free(r->pair);
    free(r->map);
    r->pair = NULL;
    r->map = NULL;
}

void tg_krr_predict_report_free(tg_krr_predict_report *r) {
    if (!r) return;
    free(r->kernel_seconds);
    free(r->kernel_ops);
    free(r->seconds);
    r->kernel_seconds = r->kernel_ops = r->seconds = NULL;
}

const double *tg_krr_model_freq(const tg_krr_model *m) {
    return m->gtr ? tg_kgeno_freq(m->gtr) : m->freq;
}

void tg_krr_model_sync(tg_krr_model *m) {
    tg_krr_model_info *i = &m->info;
    i->gamma = m->gamma, i->alpha = m->alpha, i->bfile = m->bfile, i->rows = m->rows;
    i->names = (const char *const *)m->names, i->mean = m->mean;
    i->fixed_alpha = i->nfixed ? m->fixed_alpha : NULL;
    if (m->owns_bed) i->bed = &m->bed;
}

const tg_krr_model_info *tg_krr_model_describe(const tg_krr_model *m) { return &m->info; }

tg_status tg_krr_model_set_pheno(tg_krr_model *m, int k, const char *const *names,
                                 tg_error *err) {
    for (int c = 0; m->names && c < m->info.k; c++) free(m->names[c]);
    free(m->names);
    free(m->mean);
    free(m->fixed_alpha);
    m->mean = m->fixed_alpha = NULL;
    m->info.k = 0;
    if (!(m->names = tg_calloc_n(k, 1, sizeof *m->names, err)) ||
        !(m->mean = tg_calloc_n(k, 1, sizeof *m->mean, err)) ||
        !(m->fixed_alpha = tg_calloc_n(k, 1 + m->info.nfixed, sizeof *m->fixed_alpha,
                                     err)))
        return TG_ERR_NOMEM;
    m->info.k = k;
    tg_krr_model_sync(m);
    for (int c = 0; c < k; c++)
        if (!(m->names[c] = tg_strdup(names[c], err))) return TG_ERR_NOMEM;
    return TG_OK;
}

tg_status tg_krr_centre(tg_krr_model *m, const double *y, int64_t ldy, const double *fx,
                        double *yc, tg_error *err) {
    const int64_t n = m->info.n;
    const int p = 1 + m->info.nfixed;
    double *Q = tg_malloc_n(n, p, sizeof *Q, err), *R = tg_calloc_n(p, p, sizeof *R, err),
           t[p], a[p];
    int kept[p];
    if (!Q || !R) {
        free(Q);
        free(R);
        return TG_ERR_NOMEM;
    }
    /* C = QR over the training samples (the intercept first, always kept: n ≥ 2); y − Cα =
     * y − Q·Qᵀy, its intercept's part the mean, subtracted exactly */
    const int r = tg_fixed_basis(n, NULL, fx, n, p - 1, Q, n, R, p, kept, NULL);
    for (int c = 0; c < m->info.k; c++) {
        const double *v = y + c * ldy;
        double mean = 0;
        for (int64_t i = 0; i < n; i++) mean += v[m->rows[i]] / (double)n;
        t[0] = mean * R[0];
        for (int l = 1; l < r; l++) {
            t[l] = 0;
            for (int64_t i = 0; i < n; i++) t[l] += Q[i + l * n] * (v[m->rows[i]] - mean);
        }
        for (int64_t i = 0; i < n; i++) {
            double e = v[m->rows[i]] - mean;
            for (int l = 1; l < r; l++) e -= Q[i + l * n] * t[l];
            yc[i + c * n] = e;
        }
        for (int l = r - 1; l >= 0; l--) { /* R a = t */
            a[l] = t[l];
            for (int u = l + 1; u < r; u++) a[l] -= R[l + u * p] * a[u];
            a[l] /= R[l + l * p];
        }
        double *fa = m->fixed_alpha + c * p;
        for (int j = 0; j < p; j++) fa[j] = 0;
        for (int l = 0; l < r; l++) fa[kept[l]] = a[l];
        m->mean[c] = p == 1 ? mean : fa[0]; /* without covariates, the mean as computed */
    }
    free(Q);
    free(R);
    return TG_OK;
}

tg_status tg_krr_model_weights(const tg_krr_model *m, int g, int a, double *w, int64_t ldw,
                               tg_error *err) {
    const tg_krr_model_info *i = &m->info;
    if (!m->w || g < 0 || g >= i->ngamma || a < 0 || a >= i->nalpha || ldw < i->n)
        return tg_error_set(err, TG_ERR_ARG, "KRR weights: no pair (%d, %d) of %d × %d, or "
                            "leading dimension %lld < %lld", g, a, i->ngamma, i->nalpha,
                            (long long)ldw, (long long)i->n);
    const double *src = m->w + (size_t)(g * i->nalpha + a) * (size_t)(i->n * i->k);
    for (int c = 0; c < i->k; c++)
        memcpy(w + c * ldw, src + c * i->n, (size_t)i->n * sizeof *w);
    return TG_OK;
}

void tg_krr_model_free(tg_krr_model *m) {
    if (!m) return;
    tg_matrix_destroy(m->L);
    tg_kgeno_free(m->gtr);
    for (int c = 0; m->names && c < m->info.k; c++) free(m->names[c]);
    free(m->names);
    free(m->mean);
    free(m->fixed_alpha);
    free(m->cmean);
    free(m->csd);
    free(m->rows);
    free(m->bfile);
    free(m->gamma);
    free(m->alpha);
    free(m->w);
    free(m->wprec);
    free(m->freq);
    free(m->dir);
    free(m->tprec);
    free(m->tscale);
    if (m->owns_bed) tg_bed_close(&m->bed);
    free(m);
}

/* "gamma G, " for the gaussian kernel (the others have no γ), for messages. */
static void gamma_words(const tg_krr_model *m, double gamma, char *buf, size_t size) {
    buf[0] = '\0';
    if (m->info.kernel == TG_KERNEL_GAUSSIAN) snprintf(buf, size, "gamma %g, ", gamma);
}

/* The model's options and arrays (no genotypes yet). */
static tg_status model_new(const tg_bed *bed, const int64_t *rows, int64_t n, int k,
                           const char *const *names, const tg_krr_opts *o, tg_krr_model **out,
                           tg_error *err) {
    tg_krr_model *m = tg_calloc(1, sizeof *m, err);
    if (!m) return TG_ERR_NOMEM;
    *out = m;
    const int gauss = o->kernel == TG_KERNEL_GAUSSIAN, ng = gauss ? o->ngamma : 1;
    m->info = (tg_krr_model_info){.kernel = o->kernel, .ngamma = ng, .nalpha = o->nalpha,
                                  .diag = o->diag, .ncov = o->fixed ? 0 : o->ncov,
                                  .nfixed = o->fixed ? o->ncov : 0, .bed = bed, .n = n};
    const int64_t npairs = (int64_t)ng * o->nalpha; /* ints */
    size_t nw; /* npairs × k weight columns */
    if (tg_size_mul(npairs, k, 1, &nw, err)) return TG_ERR_NOMEM;
    if (!(m->bfile = tg_strdup(bed->prefix, err)) ||
        !(m->rows = tg_malloc_n(n, 1, sizeof *m->rows, err)) ||
        !(m->gamma = tg_calloc_n(ng, 1, sizeof *m->gamma, err)) ||
        !(m->alpha = tg_malloc_n(o->nalpha, 1, sizeof *m->alpha, err)) ||
        !(m->w = tg_malloc_n(nw, n, sizeof *m->w, err)) ||
        !(m->wprec = tg_malloc_n(npairs, 1, sizeof *m->wprec, err)))
        return TG_ERR_NOMEM;
    for (int64_t i = 0; i < n; i++) m->rows[i] = rows ? rows[i] : i;
    for (int g = 0; gauss && g < ng; g++) m->gamma[g] = o->gamma[g];
    memcpy(m->alpha, o->alpha, (size_t)o->nalpha * sizeof *m->alpha);
    return tg_krr_model_set_pheno(m, k, names, err);
}

static tg_status check_fit(int64_t n, int k, const tg_krr_opts *o, tg_error *err) {
    if (n < 2)
        return tg_error_set(err, TG_ERR_ARG, "%lld training sample(s) with every phenotype "
                            "observed: at least 2 are needed", (long long)n);
    if (k < 1 || k > n)
        return tg_error_set(err, TG_ERR_ARG, "%d phenotypes but %lld training samples: more "
                            "phenotypes than samples", k, (long long)n);
    if (o->nalpha < 1 || (o->kernel == TG_KERNEL_GAUSSIAN && o->ngamma < 1))
        return tg_error_set(err, TG_ERR_ARG, "KRR fit: no %s", o->nalpha < 1 ? "alpha" : "gamma");
    if (o->keep_factor && (o->nalpha > 1 || (o->kernel == TG_KERNEL_GAUSSIAN && o->ngamma > 1)))
        return tg_error_set(err, TG_ERR_ARG, "KRR fit: the factor is kept for one gamma and "
                            "one alpha only");
    if (o->ncov && !o->fixed && o->kernel != TG_KERNEL_GAUSSIAN)
        return tg_error_set(err, TG_ERR_ARG, "KRR fit: confounders apply to the gaussian "
                            "kernel only, not %s", tg_kernel_name(o->kernel));
    return TG_OK;
}

/* @p x's values of samples rows[0..n) (x: sample rows[i]'s column c at x[rows[i] + c·ldx])
 * as an n × nc array; NULL (and no error) when nc is 0. */
static tg_status gather(const double *x, int64_t ldx, int nc, const int64_t *rows, int64_t n,
                        double **out, tg_error *err) {
    *out = NULL;
    if (!nc) return TG_OK;
    if (!(*out = tg_malloc_n(n, nc, sizeof **out, err))) return TG_ERR_NOMEM;
    for (int c = 0; c < nc; c++)
        for (int64_t i = 0; i < n; i++) (*out)[i + c * n] = x[(rows ? rows[i] : i) + c * ldx];
    return TG_OK;
}

/* Kernel confounders standardised: the training samples' @p x (n × ncov) to mean 0 and
 * variance 1, their mean and deviation kept in @p m; with @p train 0, another cohort's by them. A
 * constant confounder keeps deviation 1 (its distances are 0 among the training samples). */
static tg_status standardise(tg_krr_model *m, int train, double *x, int64_t n, tg_error *err) {
    const int nc = m->info.ncov;
    if (train && nc && (!(m->cmean = tg_malloc_n(nc, 1, sizeof *m->cmean, err)) ||
                        !(m->csd = tg_malloc_n(nc, 1, sizeof *m->csd, err))))
        return TG_ERR_NOMEM;
    for (int c = 0; c < nc; c++) {
        double *v = x + c * n;
        if (train) {
            double s = 0, ss = 0;
            for (int64_t i = 0; i < n; i++) s += v[i];
            m->cmean[c] = s / (double)n;
            for (int64_t i = 0; i < n; i++) ss += (v[i] - m->cmean[c]) * (v[i] - m->cmean[c]);
            m->csd[c] = ss > 0 ? sqrt(ss / (double)(n - 1)) : 1;
        }
        for (int64_t i = 0; i < n; i++) v[i] = (v[i] - m->cmean[c]) / m->csd[c];
    }
    return TG_OK;
}

/* One (γ, α): K + αI (from the kept dot products @p C, or with them; with @p in_map in the map's
 * precisions), the factorisation under the map, the solve of every phenotype, the weights into
 * the model. */
static tg_status fit_pair(tg_krr_model *m, const tg_matrix *C, const double *yc,
                          const tg_krr_opts *o, const tg_chol_opts *co, int in_map, int g, int a,
                          tg_krr_pair_report *r, tg_error *err) {
    const int64_t n = m->info.n;
    const int k = m->info.k, pair = g * m->info.nalpha + a;
    double t0 = tg_now(), gamma = m->gamma[g], alpha = m->alpha[a];
    tg_matrix *K = NULL, *B = NULL;
    *r = (tg_krr_pair_report){.gamma = gamma, .alpha = alpha, .from_kept = C != NULL};
    tg_status st = TG_OK;
    if (in_map) {
        st = tg_krr_build_factor(m->gtr, gamma, alpha, o->diag, co, &K, &r->chol, err);
        if (!st || st == TG_ERR_NUMERIC) r->stage = 2;
        r->kernel_seconds = r->chol.build_seconds;
        r->kernel_ops = tg_kernel_ops(m->gtr, m->gtr);
    } else if (!(st = tg_kernel_apply(C, m->gtr, m->gtr, gamma, alpha, o->diag, &K, err))) {
        tg_runtime_wait_all(); /* so that the phases' times are the work's */
        r->kernel_seconds = tg_now() - t0;
        r->kernel_ops = C ? 0 : tg_kernel_ops(m->gtr, m->gtr);
        r->stage = 1;
        st = tg_krr_factor(K, C, m->gtr, gamma, alpha, co, &r->chol, err);
        if (!st || st == TG_ERR_NUMERIC) r->stage = 2; /* a map was made */
    }
    double t2 = tg_now();
    /* the solve in the factor's diagonal precision (a recovery may have raised it) */
    if (!st && !(st = tg_matrix_create(&B, n, k, m->info.nb, k, TG_GENERAL, r->chol.diag, 0, 0,
                                       err)) &&
        !(st = tg_matrix_from_dense(B, yc, n, err)) && !(st = tg_chol_solve(K, B, err)))
        st = tg_matrix_to_dense(B, m->w + (size_t)pair * (size_t)(n * k), n, err);
    if (!st) {
        r->stage = 3;
        r->solve_seconds = tg_now() - t2;
        m->wprec[pair] = r->chol.diag;
        if (o->keep_factor) { /* one (γ, α): this is the factor */
            m->L = K;
            m->ldiag = r->chol.diag;
            K = NULL;
        }
    }
    tg_matrix_destroy(B);
    tg_matrix_destroy(K);
    r->seconds = tg_now() - t0;
    if (st) { /* name the pair; the Cholesky's message names the tile and suggests a larger α */
        tg_error e = *err;
        char gs[40];
        gamma_words(m, gamma, gs, sizeof gs);
        return tg_error_set(err, st, "%salpha %g: %s", gs, alpha, e.msg);
    }
    return TG_OK;
}

/* The training genotypes, and their dot products kept when several pairs reuse them (every
 * pair rebuilds K + αI, which the factorisation overwrites). */
static tg_status fit_build(tg_krr_model *m, const tg_krr_opts *o, tg_matrix **C,
                           tg_krr_fit_report *rep, tg_error *err) {
    double *x = NULL, t0 = tg_now();
    const int nc = m->info.ncov;
    tg_status st = gather(o->covar, o->ldc, nc, m->rows, m->info.n, &x, err);
    if (!st) st = standardise(m, 1, x, m->info.n, err);
    if (!st)
        st = tg_kgeno_create(m->info.bed, m->rows, m->info.n, o->kernel, NULL, x, nc, m->info.n,
                             m->info.nb, &m->gtr, err);
    free(x);
    if (st) return st;
    double t1 = tg_now();
    rep->panel_seconds = t1 - t0;
    rep->imputed = tg_kgeno_imputed(m->gtr);
    if (m->info.ngamma * m->info.nalpha > 1 && !rep->in_map) {
        if ((st = tg_kernel_gram(m->gtr, m->gtr, C, NULL, err))) return st;
        tg_runtime_wait_all();
        rep->gram_seconds = tg_now() - t1;
        rep->gram_ops = tg_kernel_ops(m->gtr, m->gtr);
    }
    return TG_OK;
}

tg_status tg_krr_fit(const tg_bed *bed, const int64_t *rows, int64_t n, int k, const double *y,
                     int64_t ldy, const char *const *names, const tg_krr_opts *o,
                     tg_krr_model **model, tg_krr_fit_report *report, tg_error *err) {
    tg_krr_fit_report own = {0}, *rep = report ? report : &own;
    tg_krr_model *m = NULL;
    tg_matrix *C = NULL;
    double *yc = NULL;
    *rep = (tg_krr_fit_report){0};
    *model = NULL;
    tg_status st = check_fit(n, k, o, err);
    if (st || (st = model_new(bed, rows, n, k, names, o, &m, err))) goto cleanup;
    const int npairs = m->info.ngamma * m->info.nalpha;
    rep->nb = m->info.nb = o->nb ? o->nb : tg_krr_tile(n, &rep->nb_why);
    if ((st = tg_tile_check("--tile", n, rep->nb, err))) goto cleanup;
    rep->allowed = o->allowed ? o->allowed : tg_krr_precisions(&rep->allowed_why);
    rep->map_nt = (int)((n + rep->nb - 1) / rep->nb);
    rep->in_map = tg_krr_in_map(o, n, rep->nb, npairs > 1, &rep->in_map_why, &rep->diag_bytes,
                                &rep->memory_bytes);
    /* FP8 tiles need FP8 copies of each panel beside K: where K at FP16 (their storage) fills
     * the GPUs, StarPU has to evict K for them, and at N = 262,144 on one H100 that
     * factorisation did not end where the FP16 one did (docs/PERFORMANCE.md) */
    if (rep->in_map && tg_runtime_ngpu() > 0 && rep->allowed >> TG_FP8_E4M3 & 1u &&
        lower_bytes(n, rep->nb, 2) > 0.75 * rep->memory_bytes) {
        rep->allowed &= ~(1u << TG_FP8_E4M3);
        rep->allowed_why = "fp8 left out: K at fp16 would take over 3/4 of the GPUs' memory, and "
                           "fp8 tiles need panel copies beside it";
    }
    if (!(yc = tg_malloc_n(n, k, sizeof *yc, err)) ||
        !(rep->pair = tg_calloc_n(npairs, 1, sizeof *rep->pair, err)) ||
        !(rep->map = tg_malloc_n(rep->map_nt, rep->map_nt, sizeof *rep->map, err))) {
        st = TG_ERR_NOMEM;
        goto cleanup;
    }
    double *fx = NULL;
    if (!(st = gather(o->covar, o->ldc, m->info.nfixed, m->rows, n, &fx, err)))
        st = tg_krr_centre(m, y, ldy, fx, yc, err);
    free(fx);
    if (st || (st = fit_build(m, o, &C, rep, err))) goto cleanup;
    tg_chol_opts co = tg_chol_defaults();
    co.eps = o->accuracy;
    co.tol = o->accuracy > 0 ? 0 : o->pred_tol;
    co.lower_diag = !o->diag_fixed;
    co.allowed = rep->allowed;
    co.diag = o->diag;
    co.band = o->band;
    co.map_out = rep->map;
    /* built in the map's precisions because K would not fit otherwise: a map that does not fit
     * the memory it can live in either, the GPUs' and the host's (StarPU evicts tiles from one
     * to the other), is an error before the build, not a run without end (the default map at
     * 249,037 samples, ~240 GB against one H100's 72 and the host's 128: docs/PERFORMANCE.md) */
    const int64_t host = tg_runtime_ngpu() > 0 ? tg_mem_available(NULL) : 0;
    if (rep->in_map && rep->memory_bytes > 0 && host >= 0)
        co.max_bytes = rep->memory_bytes + (double)host;
    for (int p = 0; p < npairs && !st; p++, rep->npairs++)
        st = fit_pair(m, C, yc, o, &co, rep->in_map, p / m->info.nalpha, p % m->info.nalpha,
                      &rep->pair[p], err);
cleanup:
    tg_matrix_destroy(C);
    free(yc);
    if (st) tg_krr_model_free(m);
    else *model = m;
    if (!report) tg_krr_fit_report_free(&own);
    return st;
}

tg_status tg_krr_check_test(const tg_bed *train, const tg_bed *test, tg_error *err) {
    if (test->n_snps != train->n_snps)
        return tg_error_set(err, TG_ERR_ARG, "%s: %lld SNPs, %s.bim has %lld", test->prefix,
                            (long long)test->n_snps, train->prefix, (long long)train->n_snps);
    for (int64_t j = 0; j < train->n_snps; j++) {
        const tg_snp *a = &train->snps[j], *b = &test->snps[j];
        if (strcmp(a->id, b->id) || strcmp(a->a1, b->a1))
            return tg_error_set(err, TG_ERR_ARG, "%s: SNP %lld of the .bim is %s (A1 %s), the "
                                "training SNP is %s (A1 %s): the same SNPs in the same order "
                                "with the same A1 are needed", test->prefix, (long long)j + 1,
                                b->id, b->a1, a->id, a->a1);
    }
    return TG_OK;
}

/* The genotypes of both cohorts (the training ones once, for a loaded model), and the
 * test-train dot products kept when several γ reuse them. */
static tg_status predict_build(tg_krr_model *m, const tg_bed *test, const int64_t *rows,
                               int64_t n, const double *covar, int64_t ldc, tg_kgeno **gte,
                               tg_matrix **Ct, tg_krr_predict_report *rep, tg_error *err) {
    const tg_krr_model_info *i = &m->info;
    double t0 = tg_now(), *x = NULL;
    tg_status st = tg_krr_check_test(i->bed, test, err);
    if (!st && !m->gtr) { /* loaded: the saved frequencies, so that its rows are the factor's */
        st = tg_kgeno_create(i->bed, m->rows, i->n, i->kernel, m->freq, NULL, 0, i->n, i->nb,
                             &m->gtr, err);
        if (!st) rep->train_imputed = tg_kgeno_imputed(m->gtr);
    }
    if (!st) st = gather(covar, ldc, i->ncov, rows, n, &x, err);
    if (!st) st = standardise(m, 0, x, n, err);
    if (!st)
        st = tg_kgeno_create(test, rows, n, i->kernel, tg_kgeno_freq(m->gtr), x, i->ncov, n,
                             i->nb, gte, err);
    free(x);
    if (st) return st;
    double t1 = tg_now();
    rep->panel_seconds = t1 - t0;
    rep->imputed = tg_kgeno_imputed(*gte);
    if (i->ngamma > 1) {
        if ((st = tg_kernel_gram(*gte, m->gtr, Ct, NULL, err))) return st;
        tg_runtime_wait_all();
        rep->gram_seconds = tg_now() - t1;
        rep->gram_ops = tg_kernel_ops(*gte, m->gtr);
    }
    return TG_OK;
}

/* Pair @p p's predictions K_t·W + C_t·α (the mean without covariates; @p fx n × nfixed the
 * cohort's covariates, a NAN row giving NAN) into @p pred (n × k, leading dimension ldp). */
static tg_status predict_pair(const tg_krr_model *m, const tg_matrix *Kt, int64_t n, int p,
                              const double *fx, double *pred, int64_t ldp, tg_error *err) {
    const tg_krr_model_info *i = &m->info;
    tg_matrix *B = NULL;
    tg_status st = tg_matrix_create(&B, i->n, i->k, i->nb, i->k, TG_GENERAL, m->wprec[p], 0, 0,
                                    err);
    if (!st) st = tg_matrix_from_dense(B, m->w + (size_t)p * (size_t)(i->n * i->k), i->n, err);
    if (!st) st = tg_krr_predict_tiles(Kt, B, pred, ldp, err);
    tg_matrix_destroy(B);
    if (st) return st;
    for (int64_t r = 0; r < n * i->k; r++)
        if (!isfinite(pred[r % n + r / n * ldp])) {
            char gs[40];
            gamma_words(m, m->gamma[p / i->nalpha], gs, sizeof gs);
            return tg_error_set(err, TG_ERR_NUMERIC, "%salpha %g: predictions are not finite: "
                                "K + alpha·I is too ill-conditioned for this precision map; use "
                                "a larger --alpha or a smaller --accuracy", gs,
                                m->alpha[p % i->nalpha]);
        }
    for (int c = 0; c < i->k; c++) {
        const double *fa = m->fixed_alpha + c * (1 + i->nfixed);
        for (int64_t r = 0; r < n; r++)
            pred[r + c * ldp] += m->mean[c] + (i->nfixed ? tg_fixed_row(fx, n, i->nfixed, r, fa) - fa[0] : 0);
    }
    return TG_OK;
}

tg_status tg_krr_predict(tg_krr_model *m, const tg_bed *test, const int64_t *rows, int64_t n,
                         const double *covar, int64_t ldc, double *pred, int64_t ldp,
                         tg_krr_predict_report *report, tg_error *err) {
    const tg_krr_model_info *i = &m->info;
    tg_krr_predict_report own = {0}, *rep = report ? report : &own;
    const int npairs = i->ngamma * i->nalpha;
    tg_kgeno *gte = NULL;
    tg_matrix *Ct = NULL, *Kt = NULL;
    double *fx = NULL;
    *rep = (tg_krr_predict_report){.ngamma = i->ngamma, .nalpha = i->nalpha};
    tg_status st = TG_OK;
    if (ldp < n)
        st = tg_error_set(err, TG_ERR_ARG, "KRR predict: leading dimension %lld < %lld rows",
                          (long long)ldp, (long long)n);
    else if (!(rep->kernel_seconds = tg_calloc_n(i->ngamma, 1, sizeof(double), err)) ||
             !(rep->kernel_ops = tg_calloc_n(i->ngamma, 1, sizeof(double), err)) ||
             !(rep->seconds = tg_calloc_n(npairs, 1, sizeof(double), err)))
        st = TG_ERR_NOMEM;
    if (!st) st = predict_build(m, test, rows, n, covar, ldc, &gte, &Ct, rep, err);
    if (!st) st = gather(covar, ldc, i->nfixed, rows, n, &fx, err);
    for (int g = 0; g < i->ngamma && !st; g++) {
        double t0 = tg_now();
        if ((st = tg_kernel_apply(Ct, gte, m->gtr, m->gamma[g], 0, i->diag, &Kt, err))) break;
        tg_runtime_wait_all();
        rep->kernel_seconds[g] = tg_now() - t0;
        rep->kernel_ops[g] = Ct ? 0 : tg_kernel_ops(gte, m->gtr);
        for (int a = 0; a < i->nalpha && !st; a++) {
            const int p = g * i->nalpha + a;
            double t1 = tg_now();
            st = predict_pair(m, Kt, n, p, fx, pred + (size_t)p * (size_t)i->k * (size_t)ldp, ldp,
                              err);
            rep->seconds[p] = tg_now() - t1;
        }
        tg_matrix_destroy(Kt);
        Kt = NULL;
    }
    tg_matrix_destroy(Kt);
    tg_matrix_destroy(Ct);
    tg_kgeno_free(gte);
    free(fx);
    if (!report) tg_krr_predict_report_free(&own);
    return st;
}
