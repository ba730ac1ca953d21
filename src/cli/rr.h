/* The rr command's options and inputs, shared by rr.c (options, the fit, the run) and rr_io.c
 * (reading the inputs, the log lines and the summary table of a fit). */
#ifndef TG_CLI_RR_H
#define TG_CLI_RR_H
#include "cli/cli.h"

/** The options. */
typedef struct {
    const char *pheno, *pheno_names, *pheno_col_nums, *test_bfile, *precisions;
    const char *covar, *covar_names, *covar_col_nums, *test_covar;
    double lambda, tol, accuracy;
    int64_t max_iter, tile;
    int scale, cholesky;
    unsigned allowed; /* bit set of --precisions; 0: by the workers (tg_cli_default_precisions) */
    tg_prec diag;
    tg_cli_common c;
} rr_opts;

/** The inputs: the filesets, the selected phenotypes y (n × k) and their names, and the line
 * buffer of the iteration log (line_len fits every name). */
typedef struct {
    tg_bed bed, test;
    tg_pheno ph;
    tg_covar cv, tcv; /* --covar's design (n_cols 0 without), --test-covar's */
    int *cols, k;
    char **names, *line;
    size_t line_len;
    double *y;
} rr_data;

/** The context of rr_on_progress. */
typedef struct {
    tg_log *log;
    char **names;
    char *line;
    size_t len;
} progress_ctx;

/** Reads --bfile, the selected --pheno columns (at least 2 values each), --covar, --test-bfile
 * and --test-covar. */
tg_status rr_load(const rr_opts *o, rr_data *d, tg_log *log, tg_error *err);
/** A tg_cg_progress_fn (ctx: a progress_ctx): every iteration's residuals to the log file,
 * every 10th (and the first) to stderr too. */
void rr_on_progress(void *vctx, int iter, int64_t nphen, const double *relres);
/** Writes PREFIX.cg.tsv or PREFIX.rr.tsv: one line per phenotype. */
tg_status rr_write_summary(const rr_opts *o, int k, char **names, const tg_rr_result *r,
                           tg_error *err);
/** Logs what the fit did: excluded SNPs, the ranks, times, the map or the iterations. */
void rr_log_fit(const rr_opts *o, const rr_data *d, const tg_rr_result *r, tg_log *log);
#endif
