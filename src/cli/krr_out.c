/* tilegwas krr, the outputs: the log lines written from the library's reports (phase times and
 * rates, precision maps and their bounds, recoveries, the metrics of every column) and the
 * files PREFIX.pred.tsv and PREFIX.krr.tsv. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/krr.h"

/* "gamma G, " for the gaussian kernel (the others have no γ). */
static void gamma_words(tg_kernel kernel, double gamma, char *buf, size_t size) {
    buf[0] = '\0';
    if (kernel == TG_KERNEL_GAUSSIAN) snprintf(buf, size, "gamma %g, ", gamma);
}

/* The shortest of %.15g..%.17g that reads back as @p v (0.0005, not 0.00050000000000000001). */
static void exact(char *buf, size_t size, double v) {
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static double rate(double ops, double seconds) {
    return ops * 1e-12 / (seconds > 0 ? seconds : 1e-9);
}

void krr_log_model(const krr_opts *o, const krr_data *d, double seconds, tg_log *log) {
    const tg_krr_model_info *i = tg_krr_model_describe(d->model);
    char g[40] = "";
    if (i->kernel == TG_KERNEL_GAUSSIAN) snprintf(g, sizeof g, ", gamma %g", i->gamma[0]);
    tg_log_printf(log, "model %s: %s kernel%s, alpha %g, tile %d, diag %s; %lld training "
                  "samples of %s (unchanged since the fit), %lld SNPs; %d phenotype(s) saved; "
                  "read and checked (checksums; factor.bin's when read) in %.3f s",
                  o->load_model, tg_kernel_name(i->kernel), g, i->alpha[0], i->nb,
                  tg_prec_name(i->diag), (long long)i->n, i->bed->prefix,
                  (long long)i->bed->n_snps, i->k, seconds);
}

void krr_log_solve(const krr_data *d, const tg_krr_solve_report *r, tg_log *log) {
    tg_log_printf(log, "read the saved factor (tiles fp64 %lld, fp32 %lld, fp16 %lld, fp8 "
                  "%lld; %.1f MB): %.3f s", (long long)r->tiles[TG_FP64],
                  (long long)r->tiles[TG_FP32], (long long)r->tiles[TG_FP16],
                  (long long)r->tiles[TG_FP8_E4M3], r->bytes * 1e-6, r->read_seconds);
    tg_log_printf(log, "solved %d phenotype%s with the saved factor (no factorisation): %.3f s",
                  d->k, d->k > 1 ? "s" : "", r->solve_seconds);
}

/* The tile size and precisions chosen by the workers. */
static void log_choices(const tg_krr_fit_report *f, tg_log *log) {
    if (f->nb_why) tg_log_printf(log, "tile size %d (%s)", f->nb, f->nb_why);
    if (f->in_map_why) {
        char mem[64] = "unknown";
        if (f->memory_bytes > 0)
            snprintf(mem, sizeof mem, "%.0f MiB", f->memory_bytes / (1024.0 * 1024.0));
        tg_log_printf(log, "build-precision %s (%s: %.0f MiB against %s)",
                      f->in_map ? "map" : "diag", f->in_map_why,
                      f->diag_bytes / (1024.0 * 1024.0), mem);
    }
    if (f->allowed_why) {
        char names[64];
        tg_cli_precision_names(f->allowed, names, sizeof names);
        tg_log_printf(log, "precisions %s (%s)", names, f->allowed_why);
    }
}

/* The factorisation's map, its bound and its recoveries. */
static void log_factor(const krr_opts *o, const char *gs, double alpha, const tg_chol_report *r,
                       tg_log *log) {
    for (int k = 0; k < r->retries; k++) {
        const tg_chol_retry *t = &r->retry[k];
        tg_log_printf(log, "%salpha %g: tile Cholesky: tile (%d, %d) not positive definite under "
                      "the map (tiles fp64 %lld, fp32 %lld, fp16 %lld, fp8 %lld); raised %lld "
                      "tiles of %s or less to %s; refactoring", gs, alpha, t->tile, t->tile,
                      (long long)t->tiles[TG_FP64], (long long)t->tiles[TG_FP32],
                      (long long)t->tiles[TG_FP16], (long long)t->tiles[TG_FP8_E4M3],
                      (long long)t->raised, tg_prec_name(t->from), tg_prec_name(t->to));
    }
    char from[96];
    if (o->band >= 0) snprintf(from, sizeof from, "--band %g", o->band);
    else if (o->eps_given) snprintf(from, sizeof from, "--accuracy %g", r->eps);
    else snprintf(from, sizeof from, "eps %.3g from --pred-tol %g", r->eps, o->pred_tol);
    tg_log_printf(log, "%salpha %g: precision map (%s): tiles fp64 %lld, fp32 %lld, fp16 %lld, "
                  "fp8 %lld, diag %s; |K + alpha I|_F %.6g; weights and predictions within "
                  "(NT + 1) eps_map |K + alpha I|_F / alpha = %.3g relatively of fp64's "
                  "(eps_map %.3g)%s",
                  gs, alpha, from, (long long)r->tiles[TG_FP64], (long long)r->tiles[TG_FP32],
                  (long long)r->tiles[TG_FP16], (long long)r->tiles[TG_FP8_E4M3],
                  tg_prec_name(r->diag), r->norm, r->bound, r->eps_map,
                  r->retries ? " after the recoveries above" : "");
}

/* A kernel's line: its time, and its rate when it computed its dot products. */
static void log_kernel(const char *what, int from_kept, int in_map, double seconds, double ops,
                       tg_log *log) {
    if (in_map)
        tg_log_printf(log, "%s in the map's precisions (dot products and kernel function; the "
                      "map's statistics pass is in the precision map's time): %.3f s, %.4g "
                      "tera int ops, %.3f Tops/s", what, seconds, ops * 1e-12, rate(ops, seconds));
    else if (from_kept)
        tg_log_printf(log, "%s from the kept dot products: %.3f s", what, seconds);
    else
        tg_log_printf(log, "%s (dot products and kernel function): %.3f s, %.4g tera int ops, "
                      "%.3f Tops/s", what, seconds, ops * 1e-12, rate(ops, seconds));
}

/* Pair @p p of the fit: its kernel, its map, and with @p predict the times of its phases. */
static void log_pair(const krr_opts *o, const krr_data *d, int p, const double *predict,
                     tg_log *log) {
    const tg_krr_pair_report *r = &d->fit.pair[p];
    const tg_chol_report *c = &r->chol;
    char gs[40], what[96];
    gamma_words(o->kernel, r->gamma, gs, sizeof gs); /* a fit's: the model may not be there */
    snprintf(what, sizeof what, "%salpha %g: kernel", gs, r->alpha);
    if (r->stage >= 1)
        log_kernel(what, r->from_kept, d->fit.in_map, r->kernel_seconds, r->kernel_ops, log);
    if (r->stage >= 2) log_factor(o, gs, r->alpha, c, log);
    if (!predict) return;
    double n = (double)d->split.ntrain, n3 = n * n * n / 3;
    char retry[64] = "";
    if (c->retries)
        snprintf(retry, sizeof retry, "; %d recover%s %.3f s", c->retries,
                 c->retries > 1 ? "ies" : "y", c->retry_seconds);
    tg_log_printf(log, "%salpha %g: precision map %.3f s; factor %.3f s, %.3f TFLOP/s (N^3/3)%s; "
                  "solve %.3f s; predict %.3f s", gs, r->alpha, c->map_seconds,
                  c->factor_seconds, rate(n3, c->factor_seconds), retry, r->solve_seconds,
                  *predict);
}

/* The genotype panels of both cohorts and the dot products kept for reuse. */
static void log_build(const krr_data *d, tg_log *log) {
    const tg_krr_fit_report *f = &d->fit;
    const tg_krr_predict_report *p = &d->pr;
    int64_t itr = f->imputed + p->train_imputed, ite = p->imputed;
    if (itr || ite)
        tg_log_printf(log, "missing calls imputed by the nearest integer to 2p: %lld training, "
                      "%lld test", (long long)itr, (long long)ite);
    tg_log_printf(log, "build (%s kernel): genotype panels %.3f s",
                  tg_kernel_name(tg_krr_model_describe(d->model)->kernel),
                  f->panel_seconds + p->panel_seconds);
    double ops = f->gram_ops + p->gram_ops, t = f->gram_seconds + p->gram_seconds;
    if (ops > 0)
        tg_log_printf(log, "dot products kept for reuse (%s): %.3f s, %.4g tera int ops, %.3f "
                      "Tops/s", f->gram_ops > 0 && p->gram_ops > 0 ? "train x train, test x train"
                                : f->gram_ops > 0 ? "train x train" : "test x train",
                      t, ops * 1e-12, rate(ops, t));
}

void krr_log_fit_failed(const krr_opts *o, const krr_data *d, tg_log *log) {
    log_choices(&d->fit, log);
    for (int p = 0; p < d->fit.npairs; p++) log_pair(o, d, p, NULL, log);
}

/* Appends one printf-formatted line to d->stats. */
static tg_status add_stats(krr_data *d, tg_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tg_status add_stats(krr_data *d, tg_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = realloc(d->stats, d->stats_len + (size_t)len + 1);
    if (!s) return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
    d->stats = s;
    va_start(ap, fmt);
    vsnprintf(s + d->stats_len, (size_t)len + 1, fmt, ap);
    va_end(ap);
    d->stats_len += (size_t)len;
    return TG_OK;
}

/* Pair @p p's columns of d->pred: each phenotype's MSPE and r to the log and d->stats
 * (@p seconds: the pair's phases). */
static tg_status pair_metrics(krr_data *d, int p, double seconds, tg_log *log, tg_error *err) {
    const tg_krr_model_info *i = tg_krr_model_describe(d->model);
    const int64_t nt = d->ntest, ntrain = i->n;
    const double gamma = i->gamma[p / i->nalpha], alpha = i->alpha[p % i->nalpha];
    char gcol[32] = "NA", as[32]; /* γ in krr.tsv: gaussian only */
    if (i->kernel == TG_KERNEL_GAUSSIAN) exact(gcol, sizeof gcol, gamma);
    exact(as, sizeof as, alpha);
    for (int c = 0; c < d->k; c++) {
        const double *pc = d->pred + (size_t)(p * d->k + c) * (size_t)nt;
        double mspe, r;
        int64_t nobs;
        tg_pred_metrics(d->ytest + (size_t)c * nt, pc, nt, &mspe, &r, &nobs);
        tg_log_printf(log, "  %s: test MSPE %.6g, Pearson r %.4f (%lld observed test values)",
                      d->names[c], mspe, r, (long long)nobs);
        char ms[32] = "NA", rs[32] = "NA"; /* no test values, or r undefined */
        if (!isnan(mspe)) snprintf(ms, sizeof ms, "%.6e", mspe);
        if (!isnan(r)) snprintf(rs, sizeof rs, "%.6f", r);
        tg_status st = add_stats(d, err, "%s\t%s\t%s\t%lld\t%lld\t%s\t%s\t%.3f\n", d->names[c],
                                 gcol, as, (long long)ntrain, (long long)nobs, ms, rs, seconds);
        if (st) return st;
    }
    return TG_OK;
}

tg_status krr_log_predictions(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err) {
    const tg_krr_model_info *i = tg_krr_model_describe(d->model);
    const tg_krr_predict_report *pr = &d->pr;
    tg_status st = TG_OK;
    if (!o->load_model) log_choices(&d->fit, log);
    log_build(d, log);
    for (int g = 0; g < i->ngamma && !st; g++) {
        log_kernel(i->ngamma > 1 ? "test-train kernel for this gamma" : "test-train kernel",
                   i->ngamma > 1, 0, pr->kernel_seconds[g], pr->kernel_ops[g], log);
        for (int a = 0; a < i->nalpha && !st; a++) {
            const int p = g * i->nalpha + a;
            double seconds = pr->seconds[p] + d->solve_seconds;
            if (o->load_model) {
                tg_log_printf(log, "predict %.3f s", pr->seconds[p]);
            } else {
                log_pair(o, d, p, &pr->seconds[p], log);
                seconds += d->fit.pair[p].seconds;
            }
            st = pair_metrics(d, p, seconds, log, err);
        }
    }
    return st;
}

static void column_name(const tg_krr_model_info *i, const char *pheno, int g, int a, char *buf,
                        size_t len) {
    if (i->ngamma * i->nalpha == 1)
        snprintf(buf, len, "%s", pheno);
    else if (i->kernel == TG_KERNEL_GAUSSIAN)
        snprintf(buf, len, "%s_g%g_a%g", pheno, i->gamma[g], i->alpha[a]);
    else
        snprintf(buf, len, "%s_a%g", pheno, i->alpha[a]);
}

tg_status krr_write_pred(const krr_opts *o, const krr_data *d, tg_error *err) {
    const tg_krr_model_info *i = tg_krr_model_describe(d->model);
    FILE *f;
    char *path = NULL, num[32], name[512];
    tg_status st = tg_out_open(o->c.out, ".pred.tsv", &f, &path, err);
    if (st) return st;
    int ncol = i->ngamma * i->nalpha * d->k;
    fputs("FID\tIID", f);
    for (int g = 0; g < i->ngamma; g++)
        for (int a = 0; a < i->nalpha; a++)
            for (int c = 0; c < d->k; c++) {
                column_name(i, d->names[c], g, a, name, sizeof name);
                fprintf(f, "\t%s", name);
            }
    fputc('\n', f);
    for (int64_t r = 0; r < d->ntest; r++) {
        const tg_sample *s = d->split.test ? &d->train->samples[d->split.test[r]]
                                           : &d->test.samples[r];
        fprintf(f, "%s\t%s", s->fid, s->iid);
        for (int c = 0; c < ncol; c++) {
            const double v = d->pred[r + c * d->ntest];
            if (isnan(v)) /* a covariate missing: no prediction */
                strcpy(num, "NA");
            else
                tg_text_format_double(v, num);
            fprintf(f, "\t%s", num);
        }
        fputc('\n', f);
    }
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

tg_status krr_write_stats(const krr_opts *o, const krr_data *d, tg_error *err) {
    FILE *f;
    char *path = NULL;
    tg_status st = tg_out_open(o->c.out, ".krr.tsv", &f, &path, err);
    if (st) return st;
    fputs("pheno\tgamma\talpha\tn_train\tn_test\tMSPE\tpearson_r\tseconds\n", f);
    fputs(d->stats ? d->stats : "", f);
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}
