/* Case-control classes of a fileset's samples (tg_epi_classes) from a phenotype file's column
 * or from the .fam's column 6: the input of the epistasis search. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegwas.h"

/* "A column B", malloc'd: the source named in tg_epi_classes' messages. */
static char *source_name(const char *a, const char *b, tg_error *err) {
    size_t len = strlen(a) + strlen(b) + sizeof " column ";
    char *s = tg_malloc(len, err);
    if (s) snprintf(s, len, "%s column %s", a, b);
    return s;
}

tg_status tg_epi_classes_bed(const tg_bed *bed, const char *pheno, const char *pheno_name,
                            int8_t *cls, tg_error *err) {
    char *source = NULL;
    double *v = NULL;
    tg_pheno ph = {0};
    tg_status st = TG_OK;
    if (!pheno) {
        char fam[] = ".fam";
        char *prefix = tg_malloc(strlen(bed->prefix) + sizeof fam, err);
        if (prefix) sprintf(prefix, "%s%s", bed->prefix, fam);
        if (!prefix || !(source = source_name(prefix, "6", err)) ||
            !(v = tg_malloc_n(bed->n_samples, 1, sizeof *v, err)))
            st = TG_ERR_NOMEM;
        free(prefix);
        for (int64_t i = 0; !st && i < bed->n_samples; i++) v[i] = bed->samples[i].pheno;
        if (!st) st = tg_epi_classes(bed->samples, v, bed->n_samples, source, cls, err);
        goto done;
    }
    if ((st = tg_pheno_read(pheno, bed->samples, bed->n_samples, &ph, err))) goto done;
    int col = 0;
    if (pheno_name) {
        while (col < ph.n_cols && strcmp(ph.names[col], pheno_name)) col++;
        if (col == ph.n_cols) {
            st = tg_error_set(err, TG_ERR_ARG, "%s: no column named %s", pheno, pheno_name);
            goto done;
        }
    }
    if (!(source = source_name(pheno, ph.names[col], err))) {
        st = TG_ERR_NOMEM;
        goto done;
    }
    st = tg_epi_classes(bed->samples, ph.values + (size_t)col * (size_t)ph.n_samples,
                        ph.n_samples, source, cls, err);
done:
    tg_pheno_free(&ph);
    free(v);
    free(source);
    return st;
}
