/* Output files under --out PREFIX and the run log PREFIX.log. See out.h for the rules. */
#define _GNU_SOURCE /* fopencookie */
#include "io/out.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "base/cpus.h"
#include "config.h"

struct tg_log {
    FILE *f;
    int quiet;
    int muted; /* a rank other than 0: no file, nothing on stderr */
    int failed;
    long first_out; /* the sequence number of the first output opened after the log */
    double t0;
};

enum { OUT_OPEN = 1, OUT_DONE, OUT_GONE };

/* One output file. Nodes are never freed nor reused while the process runs: the signal handler
 * walks the list in whichever thread the signal lands, so nothing it reads may change under it
 * but the atomic state, and a temporary's name is never overwritten. The FILE is a cookie
 * stream over the node: the node sees every byte, compresses it or not, and keeps the first
 * write error's errno for the message. */
typedef struct out_file {
    struct out_file *next; /* the output opened before this one */
    long seq;
    _Atomic int state;
    FILE *f;
    int fd;         /* the temporary file */
    int err;        /* errno of the first failed write; 0: none */
    ZSTD_CCtx *z;   /* NULL: written as it is */
    void *zbuf;     /* compressed bytes on their way to fd */
    size_t zcap;
    char *path;     /* the final name */
    char tmp[];     /* the temporary name */
} out_file;

static out_file *_Atomic outs; /* newest first */
static pthread_mutex_t outs_lock = PTHREAD_MUTEX_INITIALIZER;
static long n_outs;
static int zst_level, zst_workers;
static volatile sig_atomic_t log_fd = -1; /* the log, for the signal handler's end line */

static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
enum { NCAUGHT = sizeof caught / sizeof caught[0] };

/* Async-signal-safe: unlink, write, sigaction and raise only. */
static void on_signal(int sig) {
    static const char *const line[NCAUGHT] = {
        "did not finish: stopped by SIGINT; unfinished outputs removed\n",
        "did not finish: stopped by SIGTERM; unfinished outputs removed\n",
        "did not finish: stopped by SIGHUP; unfinished outputs removed\n"};
    int saved = errno;
    for (out_file *o = atomic_load(&outs); o; o = o->next)
        if (atomic_load(&o->state) == OUT_OPEN) unlink(o->tmp);
    for (int k = 0; k < NCAUGHT; k++) {
        if (caught[k] != sig) continue;
        if (log_fd >= 0) {
            size_t n = 0;
            while (line[k][n]) n++;
            ssize_t w = write(log_fd, line[k], n);
            (void)w; /* nothing more to do about a log that cannot be written */
        }
        /* the default action, whoever handled the signal before: the process ends with it,
         * as its parent expects (a handler chained to might return and let the run go on
         * without its outputs), once this handler returns */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigaction(sig, &dfl, NULL);
        raise(sig);
    }
    errno = saved;
}

/* Removes the temporaries of outputs still open (at exit, or when the log closes); returns
 * how many, logging each in @p log. */
static int remove_unfinished(tg_log *log) {
    int n = 0;
    pthread_mutex_lock(&outs_lock);
    for (out_file *o = atomic_load(&outs); o; o = o->next) {
        int open = OUT_OPEN;
        if (!atomic_compare_exchange_strong(&o->state, &open, OUT_GONE)) continue;
        unlink(o->tmp);
        n++;
        if (log && log->f) fprintf(log->f, "removed the unfinished %s\n", o->path);
    }
    pthread_mutex_unlock(&outs_lock);
    return n;
}

static void remove_at_exit(void) { remove_unfinished(NULL); }

static void install_handlers(void) {
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < NCAUGHT; k++) sigaddset(&sa.sa_mask, caught[k]);
    for (int k = 0; k < NCAUGHT; k++) {
        struct sigaction was;
        /* an ignored signal stays ignored (nohup's SIGHUP) */
        if (sigaction(caught[k], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
            sigaction(caught[k], &sa, NULL);
    }
    /* past a file size limit (ulimit -f) a write fails with EFBIG, reported and cleaned up
     * like a full disk, instead of SIGXFSZ ending the process with a core dump */
    signal(SIGXFSZ, SIG_IGN);
    atexit(remove_at_exit);
}

static void install_once(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_handlers);
}

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
    /* "dir/", "dir/." would write the hidden files dir/.log, dir/.rel: ask for a name, as
     * a prefix is the start of file names, not a folder */
    const char *slash = strrchr(prefix, '/'), *base = slash ? slash + 1 : prefix;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return tg_error_set(err, TG_ERR_ARG, "--%s %s: the prefix names a folder, not files "
                            "in it (the outputs would be hidden files such as %s.log): add a "
                            "name, e.g. --%s %s%stilegwas",
                            opt, prefix, prefix, opt, prefix, *base ? "/" : "");
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

tg_status tg_out_check_space(const char *prefix, double bytes, const char *what,
                             tg_error *err) {
    if (tg_runtime_rank() != 0) return TG_OK;
    char *copy = tg_strdup(prefix, err);
    if (!copy) return TG_ERR_NOMEM;
    const char *dir = dirname(copy);
    struct statvfs v;
    tg_status st = TG_OK;
    if (statvfs(dir, &v) == 0 && (double)v.f_bavail * (double)v.f_frsize < bytes)
        st = tg_error_set(err, TG_ERR_IO, "--out %s: %s takes %.1f GB; folder '%s' has %.1f GB "
                          "free", prefix, what, bytes / 1e9, dir,
                          (double)v.f_bavail * (double)v.f_frsize / 1e9);
    free(copy);
    return st;
}

void tg_out_set_zstd(int level, int workers) {
    if (workers <= 0) {
        tg_cpus c;
        tg_cpus_get(&c);
        workers = c.usable > 0 ? c.usable : 1;
    }
    zst_level = level;
    zst_workers = workers;
}

/* Binary outputs are never compressed (plink2 compresses text only), nor the .bim/.fam of a
 * .bed (PLINK 1 reads them plain), nor the files of a saved model (a suffix naming a file in a
 * folder), which tilegwas alone reads back. @p name: the whole name (some callers give it as
 * the prefix, with an empty suffix). */
static int is_text(const char *name, const char *suffix) {
    static const char *const binary[] = {".bin", ".bed", ".png", ".bim", ".fam"};
    size_t n = strlen(name);
    if (strchr(suffix, '/')) return 0;
    for (size_t k = 0; k < sizeof binary / sizeof *binary; k++) {
        size_t b = strlen(binary[k]);
        if (n >= b && !strcmp(name + n - b, binary[k])) return 0;
    }
    return 1;
}

static int write_all(out_file *o, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (!o->err) o->err = w < 0 ? errno : EIO;
            errno = o->err;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Compresses @p n bytes (ZSTD_e_continue) or ends the frame (ZSTD_e_end) and writes what
 * comes out. */
static int zst_feed(out_file *o, const char *buf, size_t n, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in = {buf, n, 0};
    for (;;) {
        ZSTD_outBuffer out = {o->zbuf, o->zcap, 0};
        size_t left = ZSTD_compressStream2(o->z, &out, &in, mode);
        if (ZSTD_isError(left)) {
            if (!o->err) o->err = EIO;
            errno = o->err;
            return -1;
        }
        if (write_all(o, o->zbuf, out.pos)) return -1;
        if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0) return 0;
    }
}

/* glibc's cookie calls: write returns the bytes taken, 0 on an error (errno set) */
static ssize_t out_write(void *cookie, const char *buf, size_t n) {
    out_file *o = cookie;
    int bad = o->z ? zst_feed(o, buf, n, ZSTD_e_continue) : write_all(o, buf, n);
    return bad ? 0 : (ssize_t)n;
}

/* fclose: ends the zstd frame; the descriptor stays open for fsync */
static int out_cookie_close(void *cookie) {
    out_file *o = cookie;
    int bad = o->z && !o->err && zst_feed(o, NULL, 0, ZSTD_e_end);
    ZSTD_freeCCtx(o->z);
    free(o->zbuf);
    o->z = NULL;
    o->zbuf = NULL;
    return bad ? -1 : 0;
}

static tg_status zst_start(out_file *o, tg_error *err) {
    o->zcap = ZSTD_CStreamOutSize();
    if (!(o->zbuf = tg_malloc(o->zcap, err))) return TG_ERR_NOMEM;
    if (!(o->z = ZSTD_createCCtx()) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(o->z, ZSTD_c_compressionLevel, zst_level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(o->z, ZSTD_c_checksumFlag, 1)))
        return tg_error_set(err, TG_ERR_NOMEM, "writing %s: zstd cannot start", o->path);
    /* a libzstd built without threads refuses workers: it compresses in this thread */
    ZSTD_CCtx_setParameter(o->z, ZSTD_c_nbWorkers, zst_workers);
    return TG_OK;
}

tg_status tg_out_open(const char *prefix, const char *suffix, FILE **f, char **path,
                      tg_error *err) {
    install_once();
    *f = NULL;
    size_t len = strlen(prefix) + strlen(suffix) + sizeof ".zst";
    char *p = tg_malloc(len, err), *copy = NULL;
    out_file *o = p ? tg_calloc(1, sizeof *o + len + 32, err) : NULL;
    if (!o || (path && !(copy = tg_malloc(len, err)))) {
        free(p);
        free(o);
        return TG_ERR_NOMEM;
    }
    snprintf(p, len, "%s%s", prefix, suffix);
    const int zst = zst_level > 0 && is_text(p, suffix);
    if (zst) strcat(p, ".zst");
    snprintf(o->tmp, len + 32, "%s.tmp-%ld", p, (long)getpid());
    o->path = p;
    o->fd = -1;
    atomic_init(&o->state, OUT_OPEN);
    /* in the list before the file exists, so that no signal can leave it behind */
    pthread_mutex_lock(&outs_lock);
    o->seq = n_outs++;
    o->next = atomic_load(&outs);
    atomic_store(&outs, o);
    pthread_mutex_unlock(&outs_lock);
    tg_status st = TG_OK;
    static const cookie_io_functions_t io = {.write = out_write, .close = out_cookie_close};
    if ((o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0)
        st = tg_error_set(err, TG_ERR_IO, "cannot write %s: %s", p, strerror(errno));
    else if (zst)
        st = zst_start(o, err);
    if (!st && !(o->f = fopencookie(o, "w", io)))
        st = tg_error_set(err, TG_ERR_NOMEM, "cannot write %s: %s", p, strerror(errno));
    if (st) {
        atomic_store(&o->state, OUT_GONE);
        if (o->fd >= 0) {
            unlink(o->tmp);
            close(o->fd);
        }
        ZSTD_freeCCtx(o->z);
        free(o->zbuf);
        free(copy);
        return st;
    }
    *f = o->f;
    if (path) *path = strcpy(copy, p);
    return TG_OK;
}

/* The open output written through @p f (the newest, should a closed one's FILE have had the
 * same address). */
static out_file *find(FILE *f) {
    out_file *o;
    pthread_mutex_lock(&outs_lock);
    for (o = atomic_load(&outs); o; o = o->next)
        if (o->f == f && atomic_load(&o->state) == OUT_OPEN) break;
    pthread_mutex_unlock(&outs_lock);
    return o;
}

/* Closes the stream and the file, synced if @p sync; returns the errno of the first failure,
 * 0 if none. */
static int finish(out_file *o, int sync) {
    int e = 0;
    if (fflush(o->f)) e = o->err ? o->err : errno ? errno : EIO;
    if (!e && ferror(o->f)) e = o->err ? o->err : EIO;
    if (fclose(o->f) && !e) e = o->err ? o->err : errno ? errno : EIO;
    /* synced before the rename: after a crash the final name has its whole content or is
     * the previous file, never an empty one */
    if (!e && sync && fsync(o->fd)) e = errno;
    if (close(o->fd) && !e) e = errno;
    o->f = NULL;
    o->fd = -1;
    return e;
}

tg_status tg_out_close(FILE *f, const char *path, tg_error *err) {
    out_file *o = find(f);
    if (!o)
        return tg_error_set(err, TG_ERR_ARG, "closing %s: not an output of tg_out_open",
                            path ? path : "a file");
    int e = finish(o, 1);
    tg_status st = TG_OK;
    if (e)
        st = tg_error_set(err, TG_ERR_IO, "error writing %s: %s", o->path, strerror(e));
    else if (rename(o->tmp, o->path))
        st = tg_error_set(err, TG_ERR_IO, "cannot rename %s to %s: %s", o->tmp, o->path,
                          strerror(errno));
    if (st) unlink(o->tmp);
    atomic_store(&o->state, st ? OUT_GONE : OUT_DONE);
    return st;
}

void tg_out_discard(FILE *f) {
    out_file *o = find(f);
    if (!o) return;
    atomic_store(&o->state, OUT_GONE);
    unlink(o->tmp);
    finish(o, 0);
}

/* Opens PREFIX.log without truncating it, so that a run refused for the lock leaves the
 * running one's log alone, and takes the lock. */
static tg_status lock_log(const char *prefix, FILE **f, char *warning, size_t wlen,
                          tg_error *err) {
    size_t len = strlen(prefix) + sizeof ".log";
    char *p = tg_malloc(len, err);
    if (!p) return TG_ERR_NOMEM;
    snprintf(p, len, "%s.log", prefix);
    tg_status st = TG_OK;
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    int locked = fd >= 0 && fcntl(fd, F_SETLK, &lk) == 0;
    if (fd < 0) {
        st = tg_error_set(err, TG_ERR_IO, "cannot write %s: %s", p, strerror(errno));
    } else if (!locked && (errno == EACCES || errno == EAGAIN)) {
        char who[48] = "";
        if (fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK && lk.l_pid > 0)
            snprintf(who, sizeof who, " (process %ld)", (long)lk.l_pid);
        st = tg_error_set(err, TG_ERR_IO, "%s is locked by another tilegwas run%s on prefix "
                          "%s: two runs would mix their outputs; wait for it to end, or give "
                          "another --out", p, who, prefix);
    } else if (!locked) {
        /* a file system without locks (some NFS and Lustre mounts): run, and say so */
        snprintf(warning, wlen, "warning: cannot lock %s (%s): a second run on this prefix "
                 "would not be refused", p, strerror(errno));
    }
    if (!st && (ftruncate(fd, 0) != 0 || !(*f = fdopen(fd, "w"))))
        st = tg_error_set(err, TG_ERR_IO, "cannot write %s: %s", p, strerror(errno));
    if (st && fd >= 0) close(fd);
    free(p);
    return st;
}

tg_status tg_log_open(tg_log **log, const char *prefix, int argc, char **argv, tg_error *err) {
    tg_log *l = tg_calloc(1, sizeof *l, err);
    if (!l) return TG_ERR_NOMEM;
    install_once();
    l->t0 = tg_now();
    /* every rank runs the same command: rank 0 alone logs, the others would repeat it */
    l->muted = tg_runtime_rank() != 0;
    char warning[512] = "";
    if (prefix && !l->muted) {
        tg_status st = lock_log(prefix, &l->f, warning, sizeof warning, err);
        if (st) {
            free(l);
            return st;
        }
        log_fd = fileno(l->f);
    }
    pthread_mutex_lock(&outs_lock);
    l->first_out = n_outs;
    pthread_mutex_unlock(&outs_lock);
    char host[256] = "?", date[64] = "?";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
    if (l->f) {
        fprintf(l->f, "tilegwas %s\nstarted %s on %s\ncommand:", PACKAGE_VERSION, date, host);
        for (int i = 0; i < argc; i++) fprintf(l->f, " %s", argv[i]);
        fputc('\n', l->f);
        if (*warning) fprintf(l->f, "%s\n", warning);
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

void tg_log_failed(tg_log *log) {
    if (log) log->failed = 1;
}

/* "wrote PATH" for each output completed since the log opened, oldest first. */
static void log_completed(tg_log *log) {
    pthread_mutex_lock(&outs_lock);
    long n = n_outs - log->first_out;
    const out_file **done = n > 0 ? calloc((size_t)n, sizeof *done) : NULL;
    for (const out_file *o = atomic_load(&outs); done && o && o->seq >= log->first_out;
         o = o->next)
        if (atomic_load(&o->state) == OUT_DONE) done[o->seq - log->first_out] = o;
    for (long k = 0; k < n && done; k++)
        if (done[k]) fprintf(log->f, "wrote %s\n", done[k]->path);
    pthread_mutex_unlock(&outs_lock);
    free(done);
}

void tg_log_close(tg_log *log) {
    if (!log) return;
    int unfinished = remove_unfinished(log);
    if (log->f) {
        log_completed(log);
        double t = tg_now() - log->t0;
        if (log->failed || unfinished)
            fprintf(log->f, "did not finish: %s after %.3f s\n",
                    log->failed ? "failed (error above)" : "outputs left unfinished", t);
        else
            fprintf(log->f, "total time %.3f s\n", t);
        log_fd = -1;
        fclose(log->f);
    }
    free(log);
}
