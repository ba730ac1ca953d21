/* The krr command's options and state, shared by src/cli/krr.c (the command) and
 * src/cli/krr_model.c (its model folder: --save-model, --load-model). */
#ifndef TG_CLI_KRR_H
#define TG_CLI_KRR_H
#include "cli/cli.h"

/* The options as parsed; with --load-model, krr_model_read sets the fit's from the model. */
typedef struct {
    const char *bfile, *pheno, *pheno_names, *covar, *covar_names, *test_bfile, *test_pheno,
        *test_covar, *map_path, *save_model, *load_model;
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
    tg_cli_common c;
} krr_opts;

/* Everything the command allocates, freed at one place. */
typedef struct {
    tg_bed bed, test;
    tg_pheno ph, tph, cov, tcov;
    int *pcols, k, *ccols, ncov, *tcols, *tccols;
    char **names;
    int64_t *train, ntrain, *rows_test, ntest; /* rows_test: bed rows (--test-frac) or NULL */
    double *y, *mean, *ytest, *xtr, *xte, *pred;
    tg_kgeno *gtr, *gte;
    tg_matrix *C, *Ct;
    tg_prec *map;
    char *stats; /* the krr.tsv lines after its header */
    size_t stats_len;
    /* --save-model, --load-model */
    double *w;            /* the weights W (n_train × k): kept to save, or read from the model */
    tg_matrix *L;         /* the factor: kept to save, or read from the model (--pheno) */
    tg_prec ldiag;        /* the precision of L's diagonal tiles (a recovery may raise it) */
    double *freq;         /* loaded: the training A1 frequencies; NULL: computed by the fit */
    char *train_given;    /* loaded: the training fileset as given to the fit */
    char **mnames;        /* loaded: the saved phenotypes' names (mk) */
    int mk;
    tg_prec *tprec;       /* loaded: factor.bin's tiles, lower tiles by columns: precision */
    double *tscale;       /*   and scale */
} krr_data;

/** --save-model DIR, before any work: creates DIR when missing; an existing DIR must be a
 * writable folder, empty or holding a model (which the save replaces, never other files). */
tg_status krr_model_check_dir(const char *dir, tg_error *err);
/** --load-model: reads and checks every file of the model in o->load_model (the factor's tiles
 * are only read by krr_model_load_factor), reopens the training fileset into d->bed, which must
 * be unchanged since the save, and sets the options, d->ntrain, d->train, d->freq, the saved
 * phenotypes (d->mk, d->mnames; without --pheno also d->mean, d->w) as the fit had them. */
tg_status krr_model_read(krr_opts *o, krr_data *d, tg_log *log, tg_error *err);
/** --load-model --pheno: the saved factor into d->L, tile by tile in its precisions and scales
 * (needs the runtime). */
tg_status krr_model_load_factor(const krr_opts *o, krr_data *d, tg_log *log, tg_error *err);
/** --save-model: d->L, d->w, the training samples, SNPs and frequencies (those of d->gtr), the
 * phenotypes' names and means into o->save_model, each file written as NAME.tmp and renamed
 * into place once all are, model.tsv last. */
tg_status krr_model_save(const krr_opts *o, const krr_data *d, tg_log *log, tg_error *err);
#endif
