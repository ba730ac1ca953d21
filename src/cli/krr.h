/* The krr command's options and data, shared by src/cli/krr.c (options), src/cli/krr_run.c
 * (inputs and the library calls) and src/cli/krr_out.c (outputs and log lines). */
#ifndef TG_CLI_KRR_H
#define TG_CLI_KRR_H
#include "cli/cli.h"

/* The options as parsed (with --load-model the model fixes the fit's). */
typedef struct {
    const char *pheno, *pheno_names, *pheno_col_nums, *covar, *covar_names, *covar_col_nums,
        *test_bfile, *test_pheno, *test_covar, *map_path, *save_model, *load_model;
    int covar_kernel; /* --covar-kernel: the covariates are gaussian-kernel confounders */
    const char *fit_opt; /* the first option given that --load-model refuses */
    tg_kernel kernel;
    double *gamma, *alpha, test_frac, eps, band;
    double pred_tol; /* --pred-tol: the map's eps from it and α, unless --accuracy is given */
    int eps_given;   /* --accuracy given: it sets eps, --pred-tol is not used */
    int diag_given;  /* --diag given: the map keeps it (else --pred-tol may lower fp64 to fp32) */
    int ngamma, nalpha, png;
    int64_t seed, nb;
    unsigned allowed;
    tg_prec diag;
    tg_krr_build build;
    tg_cli_common c;
} krr_opts;

/* Everything a run reads and gets, freed at one place (krr_run.c). */
typedef struct {
    tg_bed bed, test;     /* bed: a fit's training fileset */
    const tg_bed *train;  /* the training fileset: &bed, or the loaded model's */
    tg_pheno ph, tph;
    tg_covar cv, tcv;     /* --covar's design (n_cols 0 without), --test-covar's */
    int *pcols, k, *tcols;
    const char **names;
    double *y;            /* the k selected phenotypes of every training .fam sample */
    double *ytest;        /* ntest × k test phenotypes (NAN: none) */
    tg_krr_split split;   /* training samples; held-out ones with --test-frac */
    int64_t ntest;
    tg_krr_model *model;
    tg_krr_fit_report fit;
    tg_krr_predict_report pr;
    double solve_seconds; /* --load-model --pheno: the solve with the saved factor */
    double *pred;         /* ntest × (pairs · k) */
    char *stats;          /* the krr.tsv lines after its header */
    size_t stats_len;
} krr_data;

/* krr_out.c: the log lines of a loaded model, of a solve with its factor, of a fit that
 * failed (what it did before), of the predictions with their metrics (which also go to
 * d->stats); PREFIX.pred.tsv and PREFIX.krr.tsv. */
void krr_log_model(const krr_opts *o, const krr_data *d, double seconds, tg_log *log);
void krr_log_solve(const krr_data *d, const tg_krr_solve_report *r, tg_log *log);
void krr_log_fit_failed(const krr_opts *o, const krr_data *d, tg_log *log);
tg_status krr_log_predictions(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err);
tg_status krr_write_pred(const krr_opts *o, const krr_data *d, tg_error *err);
tg_status krr_write_stats(const krr_opts *o, const krr_data *d, tg_error *err);

/* Reads the inputs, fits (or loads) the model, predicts the test cohort and writes the
 * outputs and the log; returns the exit code. */
int krr_run(const krr_opts *o, tg_log *log);
#endif
