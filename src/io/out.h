/* Outputs of a command: files PREFIX.<suffix> under --out PREFIX, the run log PREFIX.log
 * (command line, version, devices, timings). The one header of src/io that the command-line
 * tool includes beside tilegwas.h: the log and the output files are the commands' own.
 *
 * Every output is written under a temporary name in its folder, PATH.tmp-PID, and renamed to
 * PATH by tg_out_close once all of it was written, flushed and synced without error: a reader
 * never sees a partial PATH. A failed close, an exit with the output still open, and SIGINT,
 * SIGTERM or SIGHUP remove the temporary (SIGKILL leaves it, never PATH). The log is the
 * exception: it is written as the run goes, and its end line says whether the run finished.
 * It is also the run's lock: a second run on the same prefix refuses to start. */
#ifndef TG_OUT_H
#define TG_OUT_H
#include <stdint.h>
#include <stdio.h>

#include "tilegwas.h"

typedef struct tg_log tg_log;

/** Opens PREFIX.log and locks it (a POSIX record lock, which the kernel drops when the process
 * ends, however it ends): while another process holds it the error names that process and
 * nothing is written. Then truncates the log and writes the header: program version, date,
 * host and the command line. A NULL prefix gives a log that only echoes to stderr. On an MPI
 * rank other than 0 the log is muted: no file, nothing on stderr. */
tg_status tg_log_open(tg_log **log, const char *prefix, int argc, char **argv, tg_error *err);
/** Writes one line (a newline is added) to the log file and, unless quiet, to stderr. */
void tg_log_printf(tg_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Writes one line to the log file only. */
void tg_log_file_only(tg_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tg_log_set_quiet(tg_log *log, int quiet);
/** Marks the run as failed (the CLI's error path): the end line says it did not finish. */
void tg_log_failed(tg_log *log);
/** Removes the outputs still being written, then ends the log: a "wrote PATH" line per output
 * completed since it opened, and "total time T s" or, after tg_log_failed or with outputs left
 * unfinished, "did not finish: ...". Closes the log (releasing the lock). NULL is accepted. */
void tg_log_close(tg_log *log);

/** Opens PREFIX SUFFIX (e.g. ".pheno") for writing, under its temporary name; the error names
 * the path. With tg_out_set_zstd on, a text output is zstd-compressed and its name gets ".zst";
 * binary outputs (a name ending in .bin, .bed or .png), a .bed's .bim and .fam, and files
 * inside a folder (a suffix with a '/': a saved model) are written as they are. On success
 * *path (if non-NULL) receives a malloc'ed copy of the final path. */
tg_status tg_out_open(const char *prefix, const char *suffix, FILE **f, char **path, tg_error *err);
/** Closes an output file: flushes, syncs and renames it to its final name, or, on a write
 * error (disk full, ...), removes it and reports the error naming the path. */
tg_status tg_out_close(FILE *f, const char *path, tg_error *err);
/** Prints rows [r0, r1) of a table to @p f (tg_out_rows). */
typedef void (*tg_out_rows_fn)(void *ctx, FILE *f, int64_t r0, int64_t r1);
/** Writes rows [0, @p n) of a table to the output @p f: blocks of @p block rows printed by
 * @p fn concurrently on every core (tg_parallel_for; one thread when called from inside such
 * a loop), each into a memory stream of its own, and written in order, so that the bytes are
 * those of @p fn printing every row to @p f. @p path names the file in the error. */
tg_status tg_out_rows(FILE *f, const char *path, int64_t n, int64_t block, tg_out_rows_fn fn,
                      void *ctx, tg_error *err);
/** Runs @p fn(ctx, i) for i in [0, @p n) on every core (tg_parallel_for): independent outputs
 * written at once, each by one thread (a tg_out_rows inside runs on that thread). Returns the
 * threads of the loop: 1 for one output, else those of the pool (tg_parallel_threads). */
int tg_out_each(int64_t n, void (*fn)(void *ctx, int64_t i), void *ctx);
/** Closes an output file and removes it (the caller's own error path). */
void tg_out_discard(FILE *f);
/** Text outputs opened from now on: zstd at @p level (1..22; 0: not compressed) with
 * @p workers compression threads (≤ 0: one per usable CPU, tg_cpus_get). */
void tg_out_set_zstd(int level, int workers);
/** Checks before any work that PREFIX's folder exists and is writable (on MPI rank 0, the one
 * that writes), and that PREFIX names files in it (not "dir/", whose files would be hidden). */
tg_status tg_out_check_prefix(const char *prefix, tg_error *err);
/** Checks that PREFIX's folder has @p bytes free for @p what (e.g. "the .bed of N samples ×
 * M SNPs"), before a long run would fill it (TG_ERR_IO naming both sizes; rank 0 only). */
tg_status tg_out_check_space(const char *prefix, double bytes, const char *what,
                             tg_error *err);
/** tg_out_check_prefix for the prefix given by option --@p opt (named in the error). */
tg_status tg_out_check_option(const char *opt, const char *prefix, tg_error *err);

/** Seconds on a monotonic clock. */
double tg_now(void);

#endif
