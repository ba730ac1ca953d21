/* The KRR Build phase (the paper's Algorithms 2 and 5, section V-B.1): a cohort's genotypes as
 * int8 encoding panels of nb samples (geno/panels.h, from the one pass; with several MPI ranks
 * panel p is read and held by rank p mod R alone, and StarPU-MPI sends it to the ranks whose
 * tiles need it), the INT8 dot-product
 * tiles of two cohorts (tg_kernel_gram: one gram task per stored tile) and the kernel matrix
 * from them (tg_kernel_apply: one fused kernel-function task per tile), or with the dot products
 * in the same task when they are not kept (tg_kernel_apply without C). The kernel formulas are
 * in include/tilegwas.h; the codelets in codelets/distance.* and codelets/kernelfn.*. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/cholesky.h"
#include "base/parallel.h"
#include "codelets/distance.h"
#include "codelets/kernelfn.h"
#include "geno/panels.h"
#include "runtime/runtime.h"
#include "tile/matrix.h"

/* Encodings are padded with zeros to a multiple of this (INT8 GEMM tiles on tensor cores). */
enum { ENC_ALIGN = 16 };

struct tg_kgeno {
    tg_kernel kind;
    int64_t n, n_snps, enc_len, enc_pad;
    int nb, np, ncov;
    double *freq;
    int64_t imputed;
    double c0, c1;       /* the kernel's constants (struct tg_kernelfn_arg) */
    int8_t **enc;        /* np panels: enc_pad × rows, one sample per column */
    double **terms;      /* np panels: rows × (1 + ncov), s_i then the confounders */
    tg_handle *he, *ht;
};

static const char *const kernel_names[] = {"gaussian", "ibs", "linear"};

const char *tg_kernel_name(tg_kernel k) {
    return (unsigned)k < sizeof kernel_names / sizeof *kernel_names ? kernel_names[k] : "invalid";
}

tg_status tg_kernel_parse(const char *name, tg_kernel *k, tg_error *err) {
    for (int i = 0; i < (int)(sizeof kernel_names / sizeof *kernel_names); i++)
        if (name && !strcmp(name, kernel_names[i])) {
            *k = (tg_kernel)i;
            return TG_OK;
        }
    return tg_error_set(err, TG_ERR_ARG, "unknown kernel '%s': expected gaussian, ibs or linear",
                        name ? name : "(null)");
}

int64_t tg_kgeno_n(const tg_kgeno *g) { return g->n; }
const double *tg_kgeno_freq(const tg_kgeno *g) { return g->freq; }
int64_t tg_kgeno_imputed(const tg_kgeno *g) { return g->imputed; }

static int64_t panel_rows(const tg_kgeno *g, int p) {
    return p == g->np - 1 ? g->n - (int64_t)p * g->nb : g->nb;
}

/* The rank that reads, encodes and holds panel p (every panel with one rank). */
static int panel_owner(int p) { return p % tg_runtime_nranks(); }
static int mine(int p) { return panel_owner(p) == tg_runtime_rank(); }

void tg_kgeno_free(tg_kgeno *g) {
    if (!g) return;
    for (int p = 0; p < g->np; p++) {
        if (g->he && g->he[p]) tg_handle_free(g->he[p]);
        if (g->ht && g->ht[p]) tg_handle_free(g->ht[p]);
        if (g->enc) tg_host_free(g->enc[p]);
        if (g->terms) tg_host_free(g->terms[p]);
    }
    free(g->he);
    free(g->ht);
    free(g->enc);
    free(g->terms);
    free(g->freq);
    free(g);
}

/* ---- per-sample terms: parallel over panels */

/* A compensated (Neumaier) sum: the linear kernel's s_i and Σδ² are ~N_S/12 and cancel to
 * ~√N_S, and Σp(1−p) scales every entry, so their errors must stay near one ulp, not ~√N_S. */
struct csum {
    double hi, lo;
};
static void csum_add(struct csum *s, double x) {
    double t = s->hi + x;
    s->lo += fabs(s->hi) >= fabs(x) ? (s->hi - t) + x : (x - t) + s->hi;
    s->hi = t;
}
/* Adds x·y with the product's rounding error (fma gives it exactly). */
static void csum_add_prod(struct csum *s, double x, double y) {
    double p = x * y;
    csum_add(s, p);
    s->lo += fma(x, y, -p);
}
static double csum_value(const struct csum *s) { return s->hi + s->lo; }

struct term_job {
    tg_kgeno *g;
    const double *covar;
    int64_t ldc;
    const double *off; /* linear: 2p − round(2p), 0 where p is NAN */
};

static void term_panel(void *ctx, int64_t p) {
    const struct term_job *jb = ctx;
    const tg_kgeno *g = jb->g;
    if (!mine((int)p)) return;
    const int64_t rows = panel_rows(g, (int)p);
    for (int64_t c = 0; c < rows; c++) {
        const int8_t *e = g->enc[p] + c * g->enc_pad;
        double s;
        if (g->kind == TG_KERNEL_LINEAR) { /* e·δ is exact: e is an integer in −2..2 */
            struct csum cs = {0, 0};
            for (int64_t k = 0; k < g->n_snps; k++) csum_add(&cs, e[k] * jb->off[k]);
            s = csum_value(&cs);
        } else {
            int64_t q = 0;
            for (int64_t k = 0; k < g->enc_len; k++) q += e[k] * e[k];
            s = (double)q;
        }
        double *t = g->terms[p];
        t[c] = s;
        for (int l = 0; l < g->ncov; l++)
            t[c + (1 + l) * rows] = jb->covar[(int64_t)p * g->nb + c + l * jb->ldc];
    }
}

static tg_status check_create(const tg_bed *bed, const int64_t *rows, int64_t n, tg_kernel kind,
                              const double *freq, const double *covar, int ncov, int64_t ldc,
                              int nb, tg_error *err) {
    if (!bed || n < 1 || nb < 1)
        return tg_error_set(err, TG_ERR_ARG, "kernel genotypes: %lld samples in panels of %d: "
                            "need a fileset, at least one sample and a positive panel size",
                            (long long)n, nb);
    if ((unsigned)kind > TG_KERNEL_LINEAR)
        return tg_error_set(err, TG_ERR_ARG, "kernel genotypes: invalid kernel %d", (int)kind);
    if (bed->n_snps < 1)
        return tg_error_set(err, TG_ERR_ARG, "%s: no SNPs to build a kernel from", bed->prefix);
    tg_status st = tg_bed_check_rows(bed, rows, n, err);
    if (st) return st;
    if (ncov < 0 || (ncov > 0 && (!covar || ldc < n)))
        return tg_error_set(err, TG_ERR_ARG, "kernel genotypes: %d confounders, leading dimension "
                            "%lld for %lld samples", ncov, (long long)ldc, (long long)n);
    if (ncov > 0 && kind != TG_KERNEL_GAUSSIAN)
        return tg_error_set(err, TG_ERR_ARG, "confounders are only used by the gaussian kernel, "
                            "not by the %s kernel", tg_kernel_name(kind));
    for (int l = 0; l < ncov; l++)
        for (int64_t r = 0; r < n; r++)
            if (!isfinite(covar[r + l * ldc])) {
                const tg_sample *s = &bed->samples[rows ? rows[r] : r];
                return tg_error_set(err, TG_ERR_ARG, "confounder column %d of sample %s %s: %g "
                                    "(confounders must be finite; drop or impute such samples)",
                                    l + 1, s->fid, s->iid, covar[r + l * ldc]);
            }
    for (int64_t j = 0; freq && j < bed->n_snps; j++)
        if (!isnan(freq[j]) && !(freq[j] >= 0 && freq[j] <= 1))
            return tg_error_set(err, TG_ERR_ARG, "%s: A1 frequency %g of SNP %s is outside [0, 1]",
                                bed->prefix, freq[j], bed->snps[j].id);
    if (!tg_runtime_started())
        return tg_error_set(err, TG_ERR_RUNTIME, "kernel genotypes: the runtime is not started");
    return TG_OK;
}

/* Allocates this rank's panels; the encodings zeroed, since the padding must read 0. */
static tg_status alloc_panels(tg_kgeno *g, tg_error *err) {
    if (!(g->enc = tg_calloc_n(g->np, 1, sizeof *g->enc, err)) ||
        !(g->terms = tg_calloc_n(g->np, 1, sizeof *g->terms, err)) ||
        !(g->he = tg_calloc_n(g->np, 1, sizeof *g->he, err)) ||
        !(g->ht = tg_calloc_n(g->np, 1, sizeof *g->ht, err)))
        return TG_ERR_NOMEM;
    for (int p = 0; p < g->np; p++) {
        if (!mine(p)) continue;
        size_t rows = (size_t)panel_rows(g, p), eb, tb;
        /* pinned when CUDA is in use, so panels reach the GPUs by DMA */
        if (tg_size_mul(panel_rows(g, p), g->enc_pad, 1, &eb, NULL) ||
            tg_size_mul(panel_rows(g, p), 1 + g->ncov, sizeof(double), &tb, NULL) ||
            !(g->enc[p] = tg_host_alloc(eb, NULL)) || !(g->terms[p] = tg_host_alloc(tb, NULL)))
            return tg_error_set(err, TG_ERR_NOMEM, "out of memory for a genotype panel of %zu "
                                "samples × %lld encodings", rows, (long long)g->enc_pad);
        memset(g->enc[p], 0, eb);
    }
    return TG_OK;
}

tg_status tg_kgeno_create(const tg_bed *bed, const int64_t *rows, int64_t n, tg_kernel kind,
                          const double *freq, const double *covar, int ncov, int64_t ldc, int nb,
                          tg_kgeno **out, tg_error *err) {
    *out = NULL;
    tg_status st = check_create(bed, rows, n, kind, freq, covar, ncov, ldc, nb, err);
    if (st) return st;
    tg_kgeno *g = tg_calloc(1, sizeof *g, err);
    if (!g) return TG_ERR_NOMEM;
    g->kind = kind;
    g->n = n;
    g->n_snps = bed->n_snps;
    g->enc_len = (kind == TG_KERNEL_IBS ? 2 : 1) * g->n_snps;
    g->enc_pad = (g->enc_len + ENC_ALIGN - 1) / ENC_ALIGN * ENC_ALIGN;
    g->nb = nb;
    g->np = (int)((n + nb - 1) / nb);
    g->ncov = ncov;
    double *off = NULL;
    tg_geno_source *src = NULL;
    tg_geno_range *ranges = NULL;
    int64_t *first = NULL;
    if (!(off = tg_malloc_n(g->n_snps, 1, sizeof *off, err)) ||
        !(ranges = tg_malloc_n(g->np, 1, sizeof *ranges, err)) ||
        !(first = tg_malloc_n(g->np, 1, sizeof *first, err))) {
        st = TG_ERR_NOMEM;
        goto fail;
    }
    if ((st = alloc_panels(g, err)) || (st = tg_geno_source_bed(bed, &src, err)) ||
        (st = tg_geno_source_select(src, rows, n, NULL, bed->n_snps, err)))
        goto fail;
    /* this rank's panels, in order, are the rows the pass reads (every panel with one rank) */
    int nr = 0;
    for (int64_t p = 0, at = 0; p < g->np; p++)
        if (mine((int)p)) {
            ranges[nr++] = (tg_geno_range){p * nb, p * nb + panel_rows(g, (int)p)};
            first[p] = at;
            at += panel_rows(g, (int)p);
        }
    /* one pass: with one rank (or the training frequencies given) each chunk of SNPs is
     * counted and encoded at once; several ranks count their panels' samples first, then
     * encode (integer sums over the ranks: every rank's p is one rank's, bit for bit) */
    tg_kpanels kp = {kind, n, g->enc_pad, nb, g->np, g->enc, first};
    const tg_geno_encoder enc = {tg_kpanels_chunk, &kp, TG_KPANELS_SNPS, 1};
    tg_geno_counts cnt;
    if ((st = tg_geno_pass(src, ranges, nr, 1, freq, &enc, &cnt, err))) goto fail;
    g->freq = cnt.freq;
    cnt.freq = NULL;
    g->imputed = cnt.missing; /* every missing call is imputed */
    tg_geno_counts_free(&cnt);

    /* the kernel's constants; linear: SNPs without a frequency are 0 everywhere and left out
     * of Σp(1−p) */
    struct csum c0 = {0, 0}, var = {0, 0};
    for (int64_t k = 0; k < g->n_snps; k++) {
        double p = g->freq[k];
        off[k] = isnan(p) ? 0 : 2 * p - tg_geno_nearest_2p(p); /* exact (Sterbenz) */
        csum_add_prod(&c0, off[k], off[k]);
        if (!isnan(p)) { /* p(1 − p) = p − p² */
            csum_add(&var, p);
            csum_add_prod(&var, -p, p);
        }
    }
    if (kind == TG_KERNEL_IBS) g->c1 = 1 / (2.0 * (double)g->n_snps);
    if (kind == TG_KERNEL_LINEAR) {
        if (!(csum_value(&var) > 0)) {
            st = tg_error_set(err, TG_ERR_ARG, "%s: every SNP is monomorphic or missing: the "
                              "linear kernel (scaled by 1/Σ2p(1−p)) is undefined", bed->prefix);
            goto fail;
        }
        g->c0 = csum_value(&c0);
        g->c1 = 1 / (2 * csum_value(&var));
    }
    struct term_job tj = {g, covar, ldc, off};
    tg_parallel_for(g->np, term_panel, &tj);
    free(off);
    free(ranges);
    free(first);
    tg_geno_source_free(src);

    /* other ranks' panels (NULL here): the runtime allocates them where this rank receives them */
    for (int p = 0; p < g->np; p++) {
        uint32_t r = (uint32_t)panel_rows(g, p);
        tg_handle_matrix(&g->he[p], g->enc[p], (uint32_t)g->enc_pad, (uint32_t)g->enc_pad, r, 1);
        tg_handle_matrix(&g->ht[p], g->terms[p], r, r, (uint32_t)(1 + ncov), sizeof(double));
        tg_runtime_register(g->he[p], panel_owner(p));
        tg_runtime_register(g->ht[p], panel_owner(p));
    }
    *out = g;
    return TG_OK;
fail:
    free(off);
    free(ranges);
    free(first);
    tg_geno_source_free(src);
    tg_kgeno_free(g);
    return st;
}

/* ---- the dot products and the kernel */

static tg_status check_pair(const tg_kgeno *a, const tg_kgeno *b, tg_error *err) {
    if (!a || !b) return tg_error_set(err, TG_ERR_ARG, "kernel build: NULL cohort");
    if (a->kind != b->kind)
        return tg_error_set(err, TG_ERR_ARG, "kernel build: cohorts prepared for the %s and the %s "
                            "kernels", tg_kernel_name(a->kind), tg_kernel_name(b->kind));
    if (a->n_snps != b->n_snps)
        return tg_error_set(err, TG_ERR_ARG, "kernel build: the cohorts have %lld and %lld SNPs: "
                            "they must be genotyped on the same SNPs", (long long)a->n_snps,
                            (long long)b->n_snps);
    if (a->nb != b->nb)
        return tg_error_set(err, TG_ERR_ARG, "kernel build: panels of %d and %d samples", a->nb,
                            b->nb);
    if (a->ncov != b->ncov)
        return tg_error_set(err, TG_ERR_ARG, "kernel build: %d and %d confounders", a->ncov,
                            b->ncov);
    /* imputation and the linear kernel's centering must use one set of frequencies */
    if (a != b && memcmp(a->freq, b->freq, (size_t)a->n_snps * sizeof *a->freq))
        return tg_error_set(err, TG_ERR_ARG, "kernel build: the cohorts use different A1 "
                            "frequencies: prepare the test cohort with the training cohort's "
                            "(tg_kgeno_freq)");
    return TG_OK;
}

/* After a build's tasks are submitted: the encoding panels a rank received for them are dropped
 * once those tasks are done (StarPU-MPI would keep them until tg_kgeno_free, through the
 * factorisation); a later build sends them again. The per-sample terms are small: kept. */
static void drop_received(const tg_kgeno *a, const tg_kgeno *b) {
    for (int p = 0; p < a->np; p++) tg_runtime_flush(a->he[p]);
    for (int p = 0; b != a && p < b->np; p++) tg_runtime_flush(b->he[p]);
}

/* The kernel's parameters and the build precision. */
static tg_status check_kernel(const tg_kgeno *a, double gamma, double alpha, tg_prec prec,
                              tg_error *err) {
    if (a->kind == TG_KERNEL_GAUSSIAN && !(gamma > 0 && isfinite(gamma)))
        return tg_error_set(err, TG_ERR_ARG, "gaussian kernel: gamma %g must be positive", gamma);
    if (!(alpha >= 0 && isfinite(alpha)))
        return tg_error_set(err, TG_ERR_ARG, "alpha %g must be finite and ≥ 0", alpha);
    if (prec != TG_FP64 && prec != TG_FP32)
        return tg_error_set(err, TG_ERR_ARG, "kernel build: %s tiles: the kernel is built in fp64 "
                            "or fp32", tg_prec_name(prec));
    return TG_OK;
}

double tg_kernel_ops(const tg_kgeno *a, const tg_kgeno *b) {
    double pairs = a == b ? (double)a->n * (a->n + 1) / 2 : (double)a->n * b->n;
    return 2 * pairs * (double)a->enc_len;
}

tg_status tg_kernel_gram(const tg_kgeno *a, const tg_kgeno *b, tg_matrix **C, double *ops,
                         tg_error *err) {
    *C = NULL;
    tg_status st = check_pair(a, b, err);
    if (st) return st;
    int sym = a == b;
    tg_matrix *c;
    if ((st = tg_matrix_create(&c, a->n, b->n, a->nb, a->nb, sym ? TG_SYM_LOWER : TG_GENERAL,
                               TG_INT32, 0, 0, err)))
        return st;
    tg_phase *ph = tg_phase_open("gram", "op", -1);
    for (int j = 0; j < c->nt; j++)
        for (int i = sym ? j : 0; i < c->mt; i++)
            if (tg_insert_gram(a->he[i], b->he[j], tg_tile(c, i, j), 0)) {
                tg_phase_close(ph);
                tg_matrix_destroy(c);
                return tg_error_set(err, TG_ERR_RUNTIME, "cannot submit the gram task of tile "
                                    "(%d, %d)", i, j);
            }
    tg_phase_close(ph);
    drop_received(a, b);
    if (ops) *ops = tg_kernel_ops(a, b);
    *C = c;
    return TG_OK;
}

/* Writes the kernel of @p a and @p b into K's tiles (each in its tile's precision): from the dot
 * products @p C, or computing them in the same task when C is NULL. */
static tg_status fill(const tg_matrix *C, const tg_kgeno *a, const tg_kgeno *b, double gamma,
                      double alpha, tg_matrix *k, tg_error *err) {
    int sym = a == b;
    struct tg_kernelfn_arg arg = {a->kind, TG_FP64, a->ncov, 0, gamma, alpha, a->c0, a->c1};
    tg_phase *ph = tg_phase_open("kernel", "op", -1);
    for (int j = 0; j < k->nt; j++)
        for (int i = sym ? j : 0; i < k->mt; i++) {
            arg.diag = sym && i == j;
            arg.prec = k->prec[tg_tile_index(k, i, j)];
            if (C ? tg_insert_kernelfn(&arg, tg_tile(C, i, j), a->ht[i], b->ht[j], tg_tile(k, i, j), 0)
                  : tg_insert_kernelgram(&arg, a->he[i], b->he[j], a->ht[i], b->ht[j],
                                         tg_tile(k, i, j), 0)) {
                tg_phase_close(ph);
                return tg_error_set(err, TG_ERR_RUNTIME, "cannot submit the kernel task of tile "
                                    "(%d, %d)", i, j);
            }
        }
    tg_phase_close(ph);
    if (!C) drop_received(a, b);
    return TG_OK;
}

tg_status tg_kernel_apply(const tg_matrix *C, const tg_kgeno *a, const tg_kgeno *b, double gamma,
                          double alpha, tg_prec prec, tg_matrix **K, tg_error *err) {
    *K = NULL;
    tg_status st = check_pair(a, b, err);
    if (st) return st;
    int sym = a == b;
    if (C && (C->m != a->n || C->n != b->n || C->mb != a->nb || C->nb != a->nb ||
              C->shape != (sym ? TG_SYM_LOWER : TG_GENERAL) || C->prec[0] != TG_INT32))
        return tg_error_set(err, TG_ERR_ARG, "kernel build: the dot products are not those of "
                            "these cohorts (tg_kernel_gram)");
    if ((st = check_kernel(a, gamma, alpha, prec, err))) return st;
    tg_matrix *k;
    if ((st = tg_matrix_create(&k, a->n, b->n, a->nb, a->nb, sym ? TG_SYM_LOWER : TG_GENERAL,
                               prec, 0, 0, err)))
        return st;
    if ((st = fill(C, a, b, gamma, alpha, k, err))) {
        tg_matrix_destroy(k);
        return st;
    }
    *K = k;
    return TG_OK;
}

/* What a refill of K + αI needs: tg_kernel_apply's arguments. */
struct refill {
    const tg_matrix *C;
    const tg_kgeno *g;
    double gamma, alpha;
};

static tg_status refill(void *ctx, tg_matrix *K, tg_error *err) {
    const struct refill *f = ctx;
    return fill(f->C, f->g, f->g, f->gamma, f->alpha, K, err);
}

tg_status tg_krr_factor(tg_matrix *K, const tg_matrix *C, const tg_kgeno *g, double gamma,
                        double alpha, const tg_chol_opts *o, tg_chol_report *r, tg_error *err) {
    if (K->m != g->n || K->shape != TG_SYM_LOWER || K->mb != g->nb)
        return tg_error_set(err, TG_ERR_ARG, "KRR factorisation: K is not the training kernel of "
                            "these genotypes (tg_kernel_apply(C, g, g, ...))");
    struct refill f = {C, g, gamma, alpha};
    tg_chol_opts co = o ? *o : tg_chol_defaults();
    co.shift = alpha; /* K is positive semi-definite: λ_min(K + αI) ≥ α */
    co.refill = refill;
    co.refill_ctx = &f;
    return tg_cholesky(K, &co, r, err);
}

/* tg_krr_build_factor's statistics pass: tile (i, j) of K + αI in K's build precision, reduced
 * where it is computed. */
static int measure(void *ctx, const tg_matrix *K, int i, int j, tg_handle out) {
    const struct refill *f = ctx;
    const tg_kgeno *g = f->g;
    struct tg_kernelfn_arg arg = {g->kind, K->prec[tg_tile_index(K, i, j)], g->ncov, i == j,
                                  f->gamma, f->alpha, g->c0, g->c1};
    return tg_insert_kernelstats(&arg, g->he[i], g->he[j], g->ht[i], g->ht[j], out, 0);
}

tg_status tg_krr_build_factor(const tg_kgeno *g, double gamma, double alpha, tg_prec prec,
                              const tg_chol_opts *o, tg_matrix **K, tg_chol_report *r,
                              tg_error *err) {
    *K = NULL;
    tg_status st = check_pair(g, g, err);
    if (st || (st = check_kernel(g, gamma, alpha, prec, err))) return st;
    tg_matrix *k;
    if ((st = tg_matrix_create(&k, g->n, g->n, g->nb, g->nb, TG_SYM_LOWER, prec, 0, 0, err)))
        return st;
    struct refill f = {NULL, g, gamma, alpha};
    tg_chol_opts co = o ? *o : tg_chol_defaults();
    co.shift = alpha;
    co.refill = refill;
    co.refill_ctx = &f;
    if ((st = tg_cholesky_measured(k, &co, measure, &f, r, err))) {
        tg_matrix_destroy(k);
        return st;
    }
    *K = k;
    return TG_OK;
}
