/* Helpers shared by the C test programs (common.h): one copy of what several tests need. */
#include "common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void make_geno(tg_rng *r, int64_t n, int64_t m, double p_lo, double p_hi, double miss, int8_t *g) {
    for (int64_t j = 0; j < m; j++) {
        double p = p_lo + (p_hi - p_lo) * tg_rng_uniform(r);
        for (int64_t i = 0; i < n; i++) {
            int8_t x = (int8_t)((tg_rng_uniform(r) < p) + (tg_rng_uniform(r) < p));
            if (miss > 0 && tg_rng_uniform(r) < miss) x = TG_GENO_MISSING;
            g[i + j * n] = x;
        }
    }
}

tg_status write_bed(const char *prefix, const int8_t *g, int64_t n, int64_t m, tg_error *err) {
    static char zero[] = "0", a[] = "A", c[] = "C";
    tg_sample *s = calloc((size_t)n, sizeof *s);
    tg_snp *v = calloc((size_t)m, sizeof *v);
    char(*ids)[24] = calloc((size_t)(n + m), sizeof *ids);
    tg_status st = TG_ERR_NOMEM;
    if (s && v && ids) {
        for (int64_t i = 0; i < n; i++) {
            snprintf(ids[i], sizeof ids[i], "S%lld", (long long)i);
            s[i] = (tg_sample){ids[i], ids[i], zero, zero, 0, NAN};
        }
        for (int64_t j = 0; j < m; j++) {
            snprintf(ids[n + j], sizeof ids[n + j], "v%lld", (long long)j);
            v[j] = (tg_snp){zero, ids[n + j], 0, j + 1, a, c};
        }
        st = tg_bed_write(prefix, s, n, v, m, g, n, err);
    } else {
        tg_error_set(err, st, "write_bed: out of memory");
    }
    free(s);
    free(v);
    free(ids);
    return st;
}

tg_status write_bed_tmp(char *prefix, const int8_t *g, int64_t n, int64_t m, tg_error *err) {
    int fd = mkstemp(prefix);
    if (fd < 0) return tg_error_set(err, TG_ERR_IO, "mkstemp %s failed", prefix);
    close(fd);
    return write_bed(prefix, g, n, m, err);
}

void remove_bed(const char *prefix) {
    const char *ext[] = {"", ".bed", ".bim", ".fam"};
    char path[4096];
    for (int e = 0; e < 4; e++) {
        snprintf(path, sizeof path, "%s%s", prefix, ext[e]);
        remove(path);
    }
}

const char *put_text(char *path, size_t len, const char *dir, const char *name, const char *fmt,
                     ...) {
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
    return path;
}

double *rand_mat(int64_t rows, int64_t cols, double lo, double hi, tg_rng *r) {
    double *x = malloc((size_t)rows * (size_t)cols * sizeof *x);
    for (int64_t k = 0; k < rows * cols; k++) x[k] = lo + (hi - lo) * tg_rng_uniform(r);
    return x;
}

double fro(const double *x, size_t n) {
    double s = 0;
    for (size_t k = 0; k < n; k++) s += x[k] * x[k];
    return sqrt(s);
}

double fro_diff(const double *x, const double *y, size_t n) {
    double s = 0;
    for (size_t k = 0; k < n; k++) s += (x[k] - y[k]) * (x[k] - y[k]);
    return sqrt(s);
}

int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

tg_matrix *tiled(const double *a, int64_t m, int64_t n, int mb, int nb, tg_shape shape, tg_prec p) {
    tg_matrix *A = NULL;
    tg_error err;
    if (tg_matrix_create(&A, m, n, mb, nb, shape, p, 0, 0, &err) ||
        tg_matrix_from_dense(A, a, m, &err)) {
        printf("Bail out! %s\n", err.msg);
        exit(1);
    }
    return A;
}

long double chi2_sf_closed(int df, long double x) {
    const long double y = x / 2;
    long double q = df % 2 ? erfcl(sqrtl(y)) : 0;
    /* the terms y^p / Γ(p + 1), p = j (even df) or j − 1/2 (odd df, j ≥ 1) */
    for (int j = df % 2; j < df / 2 + df % 2; j++) {
        const long double p = df % 2 ? j - 0.5L : j;
        q += expl(-y + p * logl(y) - lgammal(p + 1));
    }
    return q;
}

char *fmt_str(const char *fmt, ...) {
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return strdup(buf);
}

int gpu_count(void) {
    tg_runtime_opts o = tg_runtime_defaults();
    tg_error err = {0};
    int n = 0;
    if (tg_have_cuda() && tg_runtime_start(&o, &err) == TG_OK) {
        n = tg_runtime_ngpu();
        tg_runtime_stop();
    }
    return n;
}
