/* Output files under --out PREFIX and the run log PREFIX.log. */
#include "io/out.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

struct tg_log {
    FILE *f;
    int quiet;
    int muted; /* a rank other than 0: no file, nothing on stderr */
    double t0;
};

double tg_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

tg_status tg_out_check_prefix(const char *prefix, tg_error *err) {
    return tg_out_check_option("out", prefix, err);
}

tg_status tg_out_check_option(const char *opt, const char *prefix, tg_error *err) {
    if (!prefix || !*prefix)
        return tg_error_set(err, TG_ERR_ARG, "--%s: empty output prefix", opt);
    if (tg_runtime_rank() != 0) return TG_OK; /* rank 0 alone writes */
    char *copy = tg_strdup(prefix, err);
    if (!copy) return TG_ERR_NOMEM;
    /* dirname() of "out/x" is "out"; of "x" is "." */
    const char *dir = dirname(copy);
    tg_status st = TG_OK;
    if (access(dir, W_OK | X_OK) != 0)
        st = tg_error_set(err, TG_ERR_IO, "--%s %s: folder '%s' is not writable: %s", opt,
                          prefix, dir, strerror(errno));
    free(copy);
    return st;
}

tg_status tg_out_open(const char *prefix, const char *suffix, FILE **f, char **path,
                      tg_error *err) {
    size_t len = strlen(prefix) + strlen(suffix) + 1;
    char *p = tg_malloc(len, err);
    if (!p) return TG_ERR_NOMEM;
    snprintf(p, len, "%s%s", prefix, suffix);
    *f = fopen(p, "w");
    if (!*f) {
        tg_status st = tg_error_set(err, TG_ERR_IO, "cannot write %s: %s", p, strerror(errno));
        free(p);
        return st;
    }
    if (path)
        *path = p;
    else
        free(p);
    return TG_OK;
}

tg_status tg_out_close(FILE *f, const char *path, tg_error *err) {
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return tg_error_set(err, TG_ERR_IO, "error writing %s: %s", path ? path : "output",
                            strerror(errno ? errno : EIO));
    return TG_OK;
}

tg_status tg_log_open(tg_log **log, const char *prefix, int argc, char **argv, tg_error *err) {
    tg_log *l = tg_calloc(1, sizeof *l, err);
    if (!l) return TG_ERR_NOMEM;
    l->t0 = tg_now();
    /* every rank runs the same command: rank 0 alone logs, the others would repeat it */
    l->muted = tg_runtime_rank() != 0;
    if (prefix && !l->muted) {
        tg_status st = tg_out_open(prefix, ".log", &l->f, NULL, err);
        if (st) {
            free(l);
            return st;
        }
    }
    char host[256] = "?", date[64] = "?";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
    if (l->f) {
        fprintf(l->f, "tilegwas %s\nstarted %s on %s\ncommand:", PACKAGE_VERSION, date, host);
        for (int i = 0; i < argc; i++) fprintf(l->f, " %s", argv[i]);
        fputc('\n', l->f);
        fflush(l->f);
    }
    *log = l;
    return TG_OK;
}

static void log_v(tg_log *log, int to_stderr, const char *fmt, va_list ap) {
    /* one write per line: under mpiexec the ranks' stderr are merged by the chunk, and a line
     * written in parts can be split by another rank's line */
    char line[8192];
    vsnprintf(line, sizeof line, fmt, ap);
    if (log && log->f) {
        fprintf(log->f, "%s\n", line);
        fflush(log->f);
    }
    if (to_stderr) fprintf(stderr, "%s\n", line);
}

void tg_log_printf(tg_log *log, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_v(log, !(log && (log->quiet || log->muted)), fmt, ap);
    va_end(ap);
}

void tg_log_file_only(tg_log *log, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_v(log, 0, fmt, ap);
    va_end(ap);
}

void tg_log_set_quiet(tg_log *log, int quiet) {
    if (log) log->quiet = quiet;
}

void tg_log_close(tg_log *log) {
    if (!log) return;
    if (log->f) {
        fprintf(log->f, "total time %.3f s\n", tg_now() - log->t0);
        fclose(log->f);
    }
    free(log);
}
