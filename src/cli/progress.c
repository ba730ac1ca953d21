/* Progress lines on stderr for the long phases of the commands (the library's hook,
 * tg_progress_set, and the epistasis search's): done/total, percent, rate, elapsed time and
 * ETA. On a terminal one line is rewritten in place (\r) up to ten times a second; otherwise
 * (a SLURM log, a file) a whole line every two seconds, so that logs stay readable. Every
 * phase ends with a whole line. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

void tg_cli_progress_init(tg_cli_progress *p, FILE *out, int tty, int silent,
                          double (*clock)(void)) {
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = tty;
    p->silent = silent;
    p->clock = clock;
    p->every = tty ? 0.1 : 2.0;
    pthread_mutex_init(&p->lock, NULL);
}

/* v as three digits and an SI prefix ("" below 1,000, then k, M, G, ...). */
static void si(double v, double *mant, const char **prefix) {
    static const char *const pre[] = {"", "k", "M", "G", "T", "P", "E"};
    int e = 0;
    while (v >= 999.5 && e < 6) v /= 1e3, e++;
    *mant = v;
    *prefix = pre[e];
}

/* A count: exact below 100,000, else 123k, 4.56G. */
static void fmt_count(double v, char *buf, size_t len) {
    double m;
    const char *pre;
    si(v, &m, &pre);
    if (v < 1e5) snprintf(buf, len, "%.0f", v);
    else snprintf(buf, len, "%.3g%s", m, pre);
}

/* A rate, followed by the unit: "4.2 " or "12.3 G". */
static void fmt_rate(double v, char *buf, size_t len) {
    double m;
    const char *pre;
    si(v, &m, &pre);
    snprintf(buf, len, "%.3g %s", m, pre);
}

/* Seconds as 12.3s, 4m05s or 2h07m. */
static void fmt_time(double s, char *buf, size_t len) {
    if (s < 60) snprintf(buf, len, "%.1fs", s);
    else if (s < 3600) snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

/* Writes the phase's line; @p final ends it with a newline and no ETA. */
static void print_line(tg_cli_progress *p, double now, int final) {
    char done[32], total[32], rate[32], elapsed[32], eta[48] = "ETA ?";
    double dt = now - p->t0, r = dt > 0 ? (double)p->done / dt : 0;
    fmt_count((double)p->done, done, sizeof done);
    fmt_count((double)p->total, total, sizeof total);
    fmt_rate(r, rate, sizeof rate);
    fmt_time(dt, elapsed, sizeof elapsed);
    if (final) snprintf(eta, sizeof eta, "done");
    else if (r > 0) {
        char t[32];
        fmt_time((double)(p->total - p->done) / r, t, sizeof t);
        snprintf(eta, sizeof eta, "ETA %s", t);
    }
    double pct = p->total > 0 ? 100.0 * (double)p->done / (double)p->total : 100.0;
    fprintf(p->out, "%s%s: %s/%s %s (%.1f%%), %s%s/s, %s elapsed, %s%s", p->tty ? "\r" : "",
            p->label, done, total, p->unit, pct, rate, p->unit, elapsed, eta,
            p->tty ? "\033[K" : "");
    p->open = p->tty && !final;
    if (!p->open) fputc('\n', p->out);
    fflush(p->out);
    p->last = now;
}

static void end_locked(tg_cli_progress *p) {
    if (p->active && p->total >= 0) print_line(p, p->clock(), 1); /* −1: nothing to show */
    p->active = 0;
}

static void start_locked(tg_cli_progress *p, const char *label, int64_t total, const char *unit) {
    end_locked(p);
    snprintf(p->label, sizeof p->label, "%s", label);
    snprintf(p->unit, sizeof p->unit, "%s", unit);
    p->total = total;
    p->done = 0;
    p->t0 = p->last = p->clock();
    p->active = 1;
}

static void update_locked(tg_cli_progress *p, int64_t done) {
    if (!p->active) return;
    p->done = done;
    if (p->total < 0) return; /* the total is to come */
    if (done >= p->total) end_locked(p);
    else if (p->clock() - p->last >= p->every) print_line(p, p->clock(), 0);
}

void tg_cli_progress_start(tg_cli_progress *p, const char *label, int64_t total,
                           const char *unit) {
    if (p->silent) return;
    pthread_mutex_lock(&p->lock);
    start_locked(p, label, total, unit);
    pthread_mutex_unlock(&p->lock);
}

void tg_cli_progress_update(tg_cli_progress *p, int64_t done) {
    if (p->silent) return;
    pthread_mutex_lock(&p->lock);
    update_locked(p, done);
    pthread_mutex_unlock(&p->lock);
}

void tg_cli_progress_end(tg_cli_progress *p) {
    if (p->silent) return;
    pthread_mutex_lock(&p->lock);
    end_locked(p);
    pthread_mutex_unlock(&p->lock);
}

void tg_cli_progress_hook(void *ctx, const char *phase, const char *unit, int64_t done,
                          int64_t total) {
    tg_cli_progress *p = ctx;
    if (p->silent) return;
    pthread_mutex_lock(&p->lock);
    int same = p->active && !strcmp(p->label, phase) && done >= p->done;
    if (same && p->total < 0) p->total = total; /* the total counted since the phase began */
    /* another phase, or the same one again (several γ: "kernel" once each) */
    if (!same || total != p->total) start_locked(p, phase, total, unit);
    update_locked(p, done);
    pthread_mutex_unlock(&p->lock);
}

/* The commands' reporter (one command per process). */
static tg_cli_progress cmd_progress = {.silent = 1};

tg_cli_progress *tg_cli_progress_on(const tg_cli_common *c) {
    tg_cli_progress_init(&cmd_progress, stderr, isatty(2), c->quiet || tg_runtime_rank() != 0,
                         tg_now);
    if (!cmd_progress.silent) tg_progress_set(tg_cli_progress_hook, &cmd_progress);
    return &cmd_progress;
}

void tg_cli_progress_off(void) {
    tg_progress_set(NULL, NULL);
    tg_cli_progress_end(&cmd_progress);
}

void tg_cli_progress_interrupt(void) {
    tg_cli_progress *p = &cmd_progress;
    if (p->silent) return;
    pthread_mutex_lock(&p->lock);
    if (p->open) fputc('\n', p->out);
    p->open = 0;
    pthread_mutex_unlock(&p->lock);
}
