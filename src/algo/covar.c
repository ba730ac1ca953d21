/* The design of a covariate file (tg_covar_make): numeric columns as they are, categorical ones
 * expanded to indicators of every level but the first (the reference), then the columns that
 * are constant, or collinear with the columns before them, over the samples with every
 * covariate left out by the Gram–Schmidt of algo/fixed.c, the intercept first; and another
 * cohort's design built alike (tg_covar_apply), its levels matched by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/fixed.h"
#include "tilegwas.h"

void tg_covar_free(tg_covar *cv) {
    for (int j = 0; cv->names && j < cv->n_cols; j++) free(cv->names[j]);
    for (int j = 0; cv->dropped && j < cv->n_dropped; j++) free(cv->dropped[j]);
    for (int s = 0; cv->src_names && s < cv->n_src; s++) {
        free(cv->src_names[s]);
        for (int l = 0; cv->src_levels[s] && l < cv->src_nlevels[s]; l++)
            free(cv->src_levels[s][l]);
        free(cv->src_levels[s]);
    }
    free(cv->names);
    free(cv->values);
    free(cv->dropped);
    free(cv->src);
    free(cv->level);
    free(cv->src_names);
    free(cv->src_nlevels);
    free(cv->src_levels);
    memset(cv, 0, sizeof *cv);
}

/* A column's name: the file column's, or NAME=LEVEL for an indicator. */
static char *column_name(const tg_covar *cv, int s, int l, tg_error *err) {
    const char *name = cv->src_names[s];
    size_t len = strlen(name) + (l >= 0 ? strlen(cv->src_levels[s][l]) + 1 : 0) + 1;
    char *t = tg_malloc(len, err);
    if (t) snprintf(t, len, l >= 0 ? "%s=%s" : "%s", name, l >= 0 ? cv->src_levels[s][l] : "");
    return t;
}

/* The file columns of @p ph (names and levels) into cv's src_* fields, and the candidate design
 * columns: each numeric column, each level but the first of a categorical one. */
static tg_status expand(const tg_pheno *ph, tg_covar *cv, tg_error *err) {
    const int ns = ph->n_cols;
    int nc = 0;
    cv->n_src = ns;
    if (!(cv->src_names = tg_calloc_n(ns, 1, sizeof *cv->src_names, err)) ||
        !(cv->src_nlevels = tg_calloc_n(ns, 1, sizeof *cv->src_nlevels, err)) ||
        !(cv->src_levels = tg_calloc_n(ns, 1, sizeof *cv->src_levels, err)))
        return TG_ERR_NOMEM;
    for (int s = 0; s < ns; s++) {
        const int L = ph->n_levels ? ph->n_levels[s] : 0;
        if (!(cv->src_names[s] = tg_strdup(ph->names[s], err)) ||
            (L && !(cv->src_levels[s] = tg_calloc_n(L, 1, sizeof **cv->src_levels, err))))
            return TG_ERR_NOMEM;
        for (int l = 0; l < L; l++, cv->src_nlevels[s]++)
            if (!(cv->src_levels[s][l] = tg_strdup(ph->levels[s][l], err))) return TG_ERR_NOMEM;
        nc += L ? L - 1 : 1;
    }
    if (!(cv->src = tg_malloc_n(nc, 1, sizeof *cv->src, err)) ||
        !(cv->level = tg_malloc_n(nc, 1, sizeof *cv->level, err)))
        return TG_ERR_NOMEM;
    for (int s = 0; s < ns; s++) {
        const int L = cv->src_nlevels[s];
        if (!L) { /* numeric: the column itself, level −1 */
            cv->src[cv->n_cols] = s;
            cv->level[cv->n_cols++] = -1;
        }
        for (int l = 1; l < L; l++) {
            cv->src[cv->n_cols] = s;
            cv->level[cv->n_cols++] = l;
        }
    }
    return TG_OK;
}

/* cv->values from the file columns' values v (n × n_src, a level's index in a categorical
 * column; NAN missing), a sample missing any covariate a NAN row; counts those samples. */
static tg_status fill(tg_covar *cv, int64_t n, const double *v, tg_error *err) {
    if (!(cv->values = tg_malloc_n(n, cv->n_cols, sizeof *cv->values, err)))
        return TG_ERR_NOMEM;
    cv->n_samples = n;
    cv->n_missing = 0;
    for (int64_t i = 0; i < n; i++) {
        int all = 1;
        for (int s = 0; s < cv->n_src; s++) all &= !isnan(v[i + s * n]);
        cv->n_missing += !all;
        for (int j = 0; j < cv->n_cols; j++) {
            const double x = v[i + cv->src[j] * n];
            cv->values[i + j * n] = !all ? NAN : cv->level[j] < 0 ? x : x == cv->level[j];
        }
    }
    return TG_OK;
}

/* Keeps the columns tg_fixed_basis kept, naming the others in cv->dropped. */
static tg_status drop_columns(tg_covar *cv, tg_error *err) {
    const int64_t n = cv->n_samples;
    const int p = cv->n_cols + 1;
    double *Q = tg_malloc_n(n, p, sizeof *Q, err),
           *R = tg_malloc_n(p, p, sizeof *R, err);
    int *kept = tg_malloc_n(p, 1, sizeof *kept, err), *why = tg_malloc_n(p, 1, sizeof *why, err);
    tg_status st = !Q || !R || !kept || !why ? TG_ERR_NOMEM : TG_OK;
    if (st) goto done;
    tg_fixed_basis(n, NULL, cv->values, n, cv->n_cols, Q, n, R, p, kept, why);
    int k = 0;
    for (int j = 0; j < cv->n_cols; j++) {
        char *name = column_name(cv, cv->src[j], cv->level[j], err);
        if (!name) {
            st = TG_ERR_NOMEM;
            goto done;
        }
        if (why[j + 1] == TG_FIXED_KEPT) {
            memmove(cv->values + k * n, cv->values + j * n, (size_t)n * sizeof *cv->values);
            cv->src[k] = cv->src[j];
            cv->level[k] = cv->level[j];
            cv->names[k++] = name;
            continue;
        }
        size_t len = strlen(name) + 64;
        char *d = tg_malloc(len, err);
        if (d)
            snprintf(d, len, "%s (%s)", name, why[j + 1] == TG_FIXED_CONSTANT
                                                  ? "constant"
                                                  : "collinear with the columns before it");
        free(name);
        if (!d) {
            st = TG_ERR_NOMEM;
            goto done;
        }
        cv->dropped[cv->n_dropped++] = d;
    }
    cv->n_cols = k;
done:
    free(Q);
    free(R);
    free(kept);
    free(why);
    return st;
}

tg_status tg_covar_make(const tg_pheno *ph, const char *path, tg_covar *cv, tg_error *err) {
    memset(cv, 0, sizeof *cv);
    tg_status st = expand(ph, cv, err);
    if (!st && (!(cv->names = tg_calloc_n(cv->n_cols + 1, 1, sizeof *cv->names, err)) ||
                !(cv->dropped = tg_calloc_n(cv->n_cols + cv->n_src, 1, sizeof *cv->dropped,
                                          err))))
        st = TG_ERR_NOMEM;
    for (int s = 0; s < cv->n_src && !st; s++) /* no indicator: nothing to estimate */
        if (cv->src_nlevels[s] == 1) {
            size_t len = strlen(cv->src_names[s]) + 64;
            if (!(cv->dropped[cv->n_dropped] = tg_malloc(len, err))) st = TG_ERR_NOMEM;
            else
                snprintf(cv->dropped[cv->n_dropped++], len, "%s (one level, %s)",
                         cv->src_names[s], cv->src_levels[s][0]);
        }
    if (!st) st = fill(cv, ph->n_samples, ph->values, err);
    if (!st && cv->n_missing == cv->n_samples)
        st = tg_error_set(err, TG_ERR_ARG, "%s: no sample of the genotypes has every covariate",
                          path);
    if (!st) st = drop_columns(cv, err);
    if (st) tg_covar_free(cv);
    return st;
}

/* Column s of @p like (its levels) read from column c of @p ph: the training level of each of
 * ph's values into v (NAN missing). */
static tg_status match_column(const tg_covar *like, int s, const tg_pheno *ph, int c,
                              const char *path, double *v, tg_error *err) {
    const int64_t n = ph->n_samples;
    const int L = like->src_nlevels[s], Lp = ph->n_levels ? ph->n_levels[c] : 0;
    const char *name = like->src_names[s];
    if (!L && Lp)
        return tg_error_set(err, TG_ERR_ARG, "%s: covariate %s is categorical ('%s', ...), "
                            "numeric in the training covariates", path, name, ph->levels[c][0]);
    for (int64_t i = 0; i < n; i++) {
        const double x = ph->values[i + c * n];
        v[i] = x;
        if (!L || isnan(x)) continue;
        /* a training level, by name (a numeric column's values against the levels' numbers) */
        char num[32];
        if (!Lp) tg_text_format_double(x, num);
        const char *text = Lp ? ph->levels[c][(int)x] : num;
        int l = 0;
        while (l < L && strcmp(like->src_levels[s][l], text) &&
               (Lp || strtod(like->src_levels[s][l], NULL) != x))
            l++;
        if (l == L)
            return tg_error_set(err, TG_ERR_ARG, "%s: covariate %s of sample %lld is '%s', not "
                                "one of the training levels (%s%s)", path, name, (long long)i + 1,
                                text, like->src_levels[s][0], L > 1 ? ", ..." : "");
        v[i] = l;
    }
    return TG_OK;
}

tg_status tg_covar_apply(const tg_covar *like, const tg_pheno *ph, const char *path, tg_covar *cv,
                         tg_error *err) {
    memset(cv, 0, sizeof *cv);
    const int64_t n = ph->n_samples;
    double *v = tg_malloc_n(n, like->n_src, sizeof *v, err);
    tg_status st = v ? TG_OK : TG_ERR_NOMEM;
    for (int s = 0; s < like->n_src && !st; s++) {
        int used = 0, c = 0; /* a file column whose design columns were all left out is not read */
        for (int j = 0; j < like->n_cols; j++) used |= like->src[j] == s;
        if (!used) {
            for (int64_t i = 0; i < n; i++) v[i + s * n] = 0;
            continue;
        }
        while (c < ph->n_cols && strcmp(ph->names[c], like->src_names[s])) c++;
        st = c == ph->n_cols ? tg_error_set(err, TG_ERR_ARG, "%s has no covariate column %s (the "
                                            "training covariates have it)", path,
                                            like->src_names[s])
                             : match_column(like, s, ph, c, path, v + s * n, err);
    }
    /* the same file columns and design columns as @p like */
    if (!st) {
        tg_pheno names = {.n_cols = like->n_src, .names = like->src_names,
                          .n_levels = like->src_nlevels, .levels = like->src_levels};
        st = expand(&names, cv, err);
    }
    if (!st) {
        cv->n_cols = like->n_cols;
        memcpy(cv->src, like->src, (size_t)like->n_cols * sizeof *cv->src);
        memcpy(cv->level, like->level, (size_t)like->n_cols * sizeof *cv->level);
        if (!(cv->names = tg_calloc_n(cv->n_cols + 1, 1, sizeof *cv->names, err)))
            st = TG_ERR_NOMEM;
        for (int j = 0; j < cv->n_cols && !st; j++)
            if (!(cv->names[j] = tg_strdup(like->names[j], err))) st = TG_ERR_NOMEM;
    }
    if (!st) st = fill(cv, n, v, err);
    free(v);
    if (st) tg_covar_free(cv);
    return st;
}
