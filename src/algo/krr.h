/* The KRR model as src/algo/krr.c (fit, predict) and src/algo/krr_model.c (its folder: save,
 * load, solve with the saved factor) share it; the public calls are in include/tilegwas.h. */
#ifndef TG_ALGO_KRR_H
#define TG_ALGO_KRR_H
#include "tilegwas.h"

struct tg_krr_model {
    tg_krr_model_info info; /* points into the fields below */
    tg_bed bed;             /* a loaded model's training fileset (info.bed: the fit's otherwise) */
    int owns_bed;
    char *bfile;            /* the training fileset as given */
    int64_t *rows;
    char **names;
    double *mean;
    double *fixed_alpha;    /* (1 + nfixed) × k, with fixed effects */
    double *cmean, *csd;    /* ncov: the kernel confounders' training mean and deviation */
    double *gamma, *alpha;
    double *w;              /* per pair (g-major), n × k weights */
    tg_prec *wprec;         /* per pair: the precision they were solved in (the factor's diagonal) */
    double *freq;           /* a loaded model's training frequencies (NULL: those of gtr) */
    tg_kgeno *gtr;          /* the training genotypes (a loaded model: made by the first predict) */
    tg_matrix *L;           /* the factor, when kept or loaded */
    tg_prec ldiag;          /* its diagonal tiles' precision */
    char *dir;              /* a loaded model's folder: factor.bin is read on first use */
    tg_prec *tprec;         /* loaded: factor.bin's lower tiles by columns: precision */
    double *tscale;         /*   and scale */
    uint64_t factor_sum;    /* loaded: factor.bin's checksum (model.tsv), checked when read */
};

/* The training frequencies the model's genotypes are encoded with. */
const double *tg_krr_model_freq(const tg_krr_model *m);
/* Points m->info at the fields. */
void tg_krr_model_sync(tg_krr_model *m);
/* The phenotypes' names @p names[0..k) and training means into the model (replacing any). */
tg_status tg_krr_model_set_pheno(tg_krr_model *m, int k, const char *const *names,
                                 tg_error *err);
/* y (sample rows[i]'s phenotype c at y[rows[i] + c·ldy]) less its fixed effects into @p yc
 * (n × k): the training means, and with @p fx (n × m->info.nfixed, the training samples'
 * covariates) the covariates' effects; m->mean receives the intercepts, m->fixed_alpha every
 * effect. */
tg_status tg_krr_centre(tg_krr_model *m, const double *y, int64_t ldy, const double *fx,
                        double *yc, tg_error *err);
/* The factor of a loaded model, read from its folder when not yet read. */
tg_status tg_krr_model_read_factor(tg_krr_model *m, tg_krr_solve_report *rep, tg_error *err);
#endif
