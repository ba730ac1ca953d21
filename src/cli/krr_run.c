/* tilegwas krr, the run: reads the inputs, fits with tg_krr_fit (or loads a model, solving new
 * phenotypes with its factor), predicts the test cohort with tg_krr_predict, and writes
 * PREFIX.pred.tsv, PREFIX.krr.tsv, the precision map, the model folder and the log (whose
 * lines come from the library's reports). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/krr.h"

/* Columns of a test cohort's file with the training names (each must be there). */
static tg_status match_columns(const char *file, const tg_pheno *ph, const char *const *names,
                               int k, int **cols, tg_error *err) {
    if (!(*cols = tg_malloc_n(k, 1, sizeof **cols, err))) return TG_ERR_NOMEM;
    for (int c = 0; c < k; c++) {
        (*cols)[c] = -1;
        for (int t = 0; t < ph->n_cols && (*cols)[c] < 0; t++)
            if (!strcmp(ph->names[t], names[c])) (*cols)[c] = t;
        if ((*cols)[c] < 0)
            return tg_error_set(err, TG_ERR_ARG, "%s has no column %s (a training column)", file,
                                names[c]);
    }
    return TG_OK;
}

/* The columns @p cols[0..k) of @p ph (n rows) as an n × k array. */
static tg_status select_columns(const tg_pheno *ph, const int *cols, int k, int64_t n,
                                double **out, tg_error *err) {
    if (!(*out = tg_malloc_n(n, k, sizeof **out, err))) return TG_ERR_NOMEM;
    for (int c = 0; c < k; c++)
        memcpy(*out + c * n, ph->values + (size_t)cols[c] * (size_t)n, (size_t)n * sizeof **out);
    return TG_OK;
}

/* Train/test split (tg_krr_split_make), its errors named by the files and options. */
static tg_status split(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err) {
    const int64_t n = d->train->n_samples;
    tg_krr_split *s = &d->split;
    tg_status st = tg_krr_split_make(n, d->k, d->y, n, o->test_bfile ? NAN : o->test_frac,
                                     (uint64_t)o->seed, s, err);
    if (st) return st;
    int64_t held = 0; /* held-out samples missing a covariate: nothing to predict them with */
    for (int64_t i = 0; i < s->ntest; i++)
        if (!(d->cv.n_cols && isnan(d->cv.values[s->test[i]]))) s->test[held++] = s->test[i];
    if (held < s->ntest)
        tg_log_printf(log, "%lld held-out sample(s) missing a covariate not predicted",
                      (long long)(s->ntest - held));
    s->ntest = held;
    if (!o->test_bfile) d->ntest = s->ntest;
    if (s->empty_pheno >= 0) /* named, not just "no training sample" */
        return tg_error_set(err, TG_ERR_ARG, "%s: phenotype %s has no value for the training "
                            "samples of %s", o->pheno ? o->pheno : "the .fam",
                            d->names[s->empty_pheno], o->c.in.path);
    if (d->ntest == 0 || s->candidates == 0)
        return tg_error_set(err, TG_ERR_ARG, "--test-frac %g of %lld samples leaves %s",
                            o->test_frac, (long long)n,
                            d->ntest ? "no training sample" : "no test sample");
    if (s->ntrain < 2)
        return tg_error_set(err, TG_ERR_ARG, "%lld training sample(s) with every phenotype "
                            "observed: at least 2 are needed", (long long)s->ntrain);
    if (d->k > s->ntrain)
        return tg_error_set(err, TG_ERR_ARG, "%d phenotypes but %lld training samples: more "
                            "phenotypes than samples", d->k, (long long)s->ntrain);
    if (s->dropped)
        tg_log_printf(log, "warning: %lld training sample(s) dropped: a selected phenotype is "
                      "missing", (long long)s->dropped);
    tg_log_printf(log, "split: %lld training, %lld test samples%s", (long long)s->ntrain,
                  (long long)d->ntest, o->test_bfile ? "" : " (--test-frac)");
    return TG_OK;
}

/* The test cohort of --test-bfile, its phenotypes and confounders. */
static tg_status open_test(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err) {
    tg_status st = tg_cli_test_open(&o->c, log, o->test_bfile, d->train, &d->test, err);
    if (st) return st;
    d->ntest = d->test.n_samples;
    if (o->test_pheno &&
        ((st = tg_cli_pheno_read(log, o->test_pheno, NULL, d->test.samples, d->ntest, &d->tph, err)) ||
         (st = match_columns(o->test_pheno, &d->tph, d->names, d->k, &d->tcols, err))))
        return st;
    if (o->test_covar)
        st = tg_cli_covariates(log, o->test_covar, NULL, NULL, d->test.samples, d->ntest, &d->cv,
                               &d->tcv, err);
    return st;
}

/* The test phenotypes (NAN where absent, or where a covariate is: no prediction), for the
 * metrics. */
static tg_status test_values(krr_data *d, tg_error *err) {
    const int64_t nt = d->ntest, n = d->train->n_samples;
    if (!(d->ytest = tg_malloc_n(nt, d->k, sizeof *d->ytest, err)))
        return TG_ERR_NOMEM;
    for (int c = 0; c < d->k; c++)
        for (int64_t i = 0; i < nt; i++)
            d->ytest[i + c * nt] = d->split.test ? d->y[d->split.test[i] + c * n]
                                   : d->tcols && !(d->tcv.n_cols && isnan(d->tcv.values[i]))
                                       ? d->tph.values[i + d->tcols[c] * nt]
                                       : NAN;
    return TG_OK;
}

/* Inputs: a fit's, or a saved model's (which fixes the options) and --pheno's. */
static tg_status read_inputs(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err) {
    double t0 = tg_now();
    tg_status st;
    if (o->load_model) {
        if ((st = tg_krr_model_load(o->load_model, &d->model, err))) return st;
        krr_log_model(o, d, tg_now() - t0, log);
        d->train = tg_krr_model_describe(d->model)->bed;
    } else if (!(st = tg_cli_input_open(&o->c, log, &d->bed, err))) {
        d->train = &d->bed;
    }
    const int64_t n = d->train ? d->train->n_samples : 0;
    /* a fit without --pheno takes the .fam's column 6; a loaded model, its saved phenotypes */
    const int have_ph = o->pheno || !o->load_model;
    const char *src = o->pheno ? o->pheno : "the .fam";
    if (!st && have_ph &&
        !(st = tg_cli_phenotypes(log, o->pheno, o->pheno_col_nums, d->train, &d->ph, err)) &&
        !(st = tg_cli_columns(src, "pheno-name", o->pheno_names, &d->ph, &d->pcols, &d->k, err)))
        st = select_columns(&d->ph, d->pcols, d->k, n, &d->y, err);
    if (!st && o->covar)
        st = tg_cli_covariates(log, o->covar, o->covar_names, o->covar_col_nums,
                               d->train->samples, n, NULL, &d->cv, err);
    if (st) return st;
    /* a sample missing a covariate is left out of the training as if its phenotypes were */
    for (int64_t i = 0; i < n && d->cv.n_cols; i++)
        for (int c = 0; c < d->k && isnan(d->cv.values[i]); c++) d->y[i + c * n] = NAN;
    if (!have_ph) d->k = tg_krr_model_describe(d->model)->k;
    if (!(d->names = tg_malloc_n(d->k, 1, sizeof *d->names, err))) return TG_ERR_NOMEM;
    for (int c = 0; c < d->k; c++)
        d->names[c] = have_ph ? d->ph.names[d->pcols[c]]
                               : tg_krr_model_describe(d->model)->names[c];
    if (have_ph)
        tg_log_printf(log, "%s: %d phenotype(s) used", src, d->k);
    if (o->test_bfile && (st = open_test(o, d, log, err))) return st;
    if (o->load_model)
        tg_log_printf(log, "%lld training samples (the model's), %lld test samples",
                      (long long)tg_krr_model_describe(d->model)->n, (long long)d->ntest);
    else if ((st = split(o, d, log, err)))
        return st;
    if ((st = test_values(d, err))) return st;
    tg_log_printf(log, "read inputs: %.3f s", tg_now() - t0);
    return TG_OK;
}

/* Whether the fit builds in the map's precisions (tg_krr_in_map with the fit's options). */
static int in_map(const krr_opts *o, int64_t n) {
    tg_krr_opts ko = tg_krr_defaults();
    ko.diag = o->diag;
    ko.build = o->build;
    int nb = o->nb ? (int)o->nb : tg_krr_tile(n, NULL);
    return tg_krr_in_map(&ko, n, nb, o->ngamma * o->nalpha > 1, NULL, NULL, NULL);
}

/* Bytes per entry of the least accurate storage among @p allowed (0: by the workers) and the
 * diagonal's @p el bytes; FP8 tiles are stored in FP16. */
static double least_storage(unsigned allowed, double el) {
    if (!allowed) allowed = tg_krr_precisions(NULL);
    if (allowed & (1u << TG_FP16 | 1u << TG_FP8_E4M3)) return 2;
    return allowed & 1u << TG_FP32 ? 4 : el;
}

/* The run's peak host memory, for tg_cli_memory: the lower tiles of K + αI at the diagonal's
 * precision (fp64 unless --diag fp32: the map may keep every tile so; built in the map's
 * precisions, at least the least accurate one's storage: the map is not known yet), the
 * test-training kernel K_t (fp64 at most), the INT8 genotype panels of both cohorts, and the
 * weights, phenotypes and predictions; the tiles are shared among the MPI ranks. A prediction
 * from a saved model reads no factor. */
static tg_status check_memory(const krr_opts *o, const krr_data *d, tg_log *log, tg_error *err) {
    const tg_krr_model_info *i = o->load_model ? tg_krr_model_describe(d->model) : NULL;
    const double n = i ? (double)i->n : (double)d->split.ntrain, nt = (double)d->ntest,
                 m = (double)d->train->n_snps, k = d->k, ranks = tg_runtime_nranks(),
                 pairs = i ? 1 : (double)o->ngamma * o->nalpha,
                 el = (i ? i->diag == TG_FP32 : o->diag_given && o->diag == TG_FP32) ? 4 : 8,
                 kel = !i && in_map(o, (int64_t)n) ? least_storage(o->allowed, el) : el,
                 kb = !i || o->pheno ? kel * n * (n + 1) / 2 / ranks : 0, ktb = 8 * nt * n / ranks,
                 gb = (n + nt) * m, vb = 8 * k * (n * (pairs + 3) + nt * (pairs + 1)),
                 mib = 1024.0 * 1024.0;
    char terms[256];
    snprintf(terms, sizeof terms, "K %.0f MiB%s, K_t %.0f MiB, genotypes %.0f MiB, vectors "
             "%.0f MiB", kb / mib, kel < el ? " at least (in its map's precisions)" : "",
             ktb / mib, gb / mib, vb / mib);
    tg_status st = tg_cli_memory(&o->c, log, kb + ktb + gb + vb, terms, err);
    if (st) return st;
    /* on the GPUs: the tiles, shared among them, and both cohorts' INT8 panels; a task: an
     * update's three tiles, or a kernel tile built from two panels */
    const double nb = i ? i->nb : o->nb ? (double)o->nb : tg_krr_tile((int64_t)n, NULL),
                 gpus = tg_runtime_ngpu() > 0 ? tg_runtime_ngpu() : 1,
                 tiles = (kb + ktb) / gpus, upd = 3 * 8 * nb * nb, bld = 2 * nb * m + 8 * nb * nb;
    snprintf(terms, sizeof terms, "tiles %.0f MiB, genotypes %.0f MiB", tiles / mib, gb / mib);
    return tg_cli_gpu_memory(log, tiles + gb, upd > bld ? upd : bld, terms,
                             "use a smaller --tile", err);
}

/* The fit (its log lines even when it fails), or the loaded model with new phenotypes solved. */
static tg_status fit(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err) {
    if (o->load_model) {
        tg_krr_solve_report r = {0};
        if (!o->pheno) return TG_OK;
        tg_status st = tg_krr_model_solve(d->model, d->k, d->y, d->train->n_samples,
                                          d->names, &r, err);
        if (st == TG_ERR_ARG) { /* a missing value: name the file */
            tg_error e = *err;
            return tg_error_set(err, st, "%s: %s", o->pheno, e.msg);
        }
        if (!st) krr_log_solve(d, &r, log);
        d->solve_seconds = r.solve_seconds;
        return st;
    }
    tg_krr_opts ko = tg_krr_defaults();
    ko.kernel = o->kernel;
    ko.gamma = o->gamma, ko.ngamma = o->ngamma;
    ko.alpha = o->alpha, ko.nalpha = o->nalpha;
    ko.covar = d->cv.values, ko.ncov = d->cv.n_cols, ko.ldc = d->train->n_samples;
    ko.fixed = !o->covar_kernel;
    ko.nb = (int)o->nb;
    ko.pred_tol = o->pred_tol;
    ko.accuracy = o->eps_given ? o->eps : 0;
    ko.allowed = o->allowed;
    ko.diag = o->diag;
    ko.diag_fixed = o->diag_given;
    ko.band = o->band;
    ko.keep_factor = o->save_model != NULL;
    ko.build = o->build;
    tg_status st = tg_krr_fit(d->train, d->split.train, d->split.ntrain, d->k, d->y,
                              d->train->n_samples, d->names, &ko, &d->model, &d->fit, err);
    if (st) krr_log_fit_failed(o, d, log);
    return st;
}

/* Predictions of the test cohort, with every column's metrics in the log and d->stats. */
static tg_status predict(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err) {
    const tg_krr_model_info *i = tg_krr_model_describe(d->model);
    const int ncol = i->ngamma * i->nalpha * d->k;
    if (!(d->pred = tg_malloc_n(d->ntest, ncol, sizeof *d->pred, err)))
        return TG_ERR_NOMEM;
    const tg_bed *test = o->test_bfile ? &d->test : d->train;
    const double *x = o->test_bfile ? d->tcv.values : d->cv.values;
    int64_t ldx = o->test_bfile ? d->ntest : d->train->n_samples;
    tg_status st = tg_krr_predict(d->model, test, d->split.test, d->ntest, x, ldx, d->pred,
                                  d->ntest, &d->pr, err);
    if (!st) st = krr_log_predictions(o, d, log, err);
    return st;
}

static void free_data(krr_data *d) {
    tg_krr_model_free(d->model);
    tg_krr_fit_report_free(&d->fit);
    tg_krr_predict_report_free(&d->pr);
    tg_krr_split_free(&d->split);
    free(d->stats);
    free(d->pred);
    free(d->ytest);
    free(d->y);
    free(d->names);
    free(d->tcols);
    free(d->pcols);
    tg_covar_free(&d->tcv);
    tg_covar_free(&d->cv);
    tg_pheno_free(&d->tph);
    tg_pheno_free(&d->ph);
    tg_bed_close(&d->test);
    tg_bed_close(&d->bed);
}

/* The outputs (rank 0) and the model folder. */
static tg_status write_outputs(const krr_opts *o, const krr_data *d, tg_log *log,
                               tg_error *err) {
    double t0 = tg_now();
    tg_status st;
    if (tg_runtime_rank() == 0 &&
        ((st = krr_write_pred(o, d, err)) || (st = krr_write_stats(o, d, err)) ||
         (o->map_path && (st = tg_precmap_write(o->map_path, o->png, d->fit.map,
                                                d->fit.map_nt, d->fit.nb, d->split.ntrain,
                                                err))) ||
         (d->cv.n_cols && !o->covar_kernel &&
          (st = tg_cli_write_alpha(o->c.out, d->k, d->names, &d->cv,
                                   tg_krr_model_describe(d->model)->fixed_alpha, err)))))
        return st;
    const int alpha = d->cv.n_cols && !o->covar_kernel;
    const char *z = o->c.zst ? ".zst" : "";
    tg_log_printf(log, "wrote %s.pred.tsv%s, %s.krr.tsv%s%s%s%s%s%s%s (%.3f s)", o->c.out, z,
                  o->c.out, z, o->map_path ? ", " : "", o->map_path ? o->map_path : "",
                  alpha ? ", " : "", alpha ? o->c.out : "", alpha ? ".alpha.tsv" : "",
                  alpha ? z : "", tg_now() - t0);
    if (o->save_model) {
        int64_t bytes = 0;
        t0 = tg_now();
        if ((st = tg_krr_model_save(d->model, o->save_model, &bytes, err))) return st;
        tg_log_printf(log, "saved the model to %s (factor %.1f MB): %.3f s", o->save_model,
                      bytes * 1e-6, tg_now() - t0);
    }
    return TG_OK;
}

int krr_run(const krr_opts *o, tg_log *log) {
    krr_data d = {0};
    tg_error err = {0};
    /* a --save-model folder that cannot take the model is an error before the work */
    tg_status st = o->save_model ? tg_krr_model_check_dir(o->save_model, &err) : TG_OK;
    if (st || (st = read_inputs(o, &d, log, &err))) {
        int rc = tg_cli_fail("krr", log, &err);
        free_data(&d);
        return rc;
    }
    /* --load-model runs on one rank only (krr.c): with several, the training fileset is d.bed */
    const char *files[] = {o->pheno, o->covar, o->test_pheno, o->test_covar};
    int differ = tg_cli_ranks_agree("krr", log, &o->c, &d.bed, o->test_bfile,
                                    o->test_bfile ? &d.test : NULL, files, 4);
    if (differ) {
        free_data(&d);
        return differ;
    }
    /* the factorisation's CPU workers never got a task on the H100 node, and slowed it */
    tg_runtime_opts ro = o->c.rt;
    ro.cpus_help_gpus = 0;
    if ((st = tg_runtime_start(&ro, &err))) {
        int rc = tg_cli_fail("krr", log, &err);
        free_data(&d);
        return rc;
    }
    tg_cli_trace_start(&o->c);
    tg_cli_progress_on(&o->c);
    tg_cli_log_runtime(log, &ro);
    tg_cli_log_grid(log, "", "genotype panel p read");
    /* after the runtime's start, whose threads and buffers take address space (ulimit -v) */
    if (!(st = check_memory(o, &d, log, &err)) && !(st = fit(o, &d, log, &err)) &&
        !(st = predict(o, &d, log, &err)) && !(st = tg_cli_trace_stop(&o->c, "krr", log, &err)) &&
        !(st = write_outputs(o, &d, log, &err)))
        tg_cli_log_traffic(log);
    tg_cli_progress_off();
    /* the error first: with several ranks it ends them all, where stopping would wait for them;
     * except numerical failures (not SPD, predictions not finite), which every rank reaches
     * alike: the Cholesky's info is summed over the ranks, the predictions gathered on all */
    int rc = !st ? 0 : st == TG_ERR_NUMERIC ? tg_cli_fail_alike("krr", log, &err)
                                            : tg_cli_fail("krr", log, &err);
    /* the model's tiles and genotype panels go before the runtime */
    tg_krr_model_free(d.model);
    d.model = NULL;
    tg_runtime_stop();
    free_data(&d);
    return rc;
}
