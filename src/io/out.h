/* Outputs of a command: files PREFIX.<suffix> under --out PREFIX, the run log PREFIX.log
 * (command line, version, devices, timings). The one header of src/io that the command-line
 * tool includes beside tilegwas.h: the log and the output files are the commands' own. */
#ifndef TG_OUT_H
#define TG_OUT_H
#include <stdint.h>
#include <stdio.h>

#include "tilegwas.h"

typedef struct tg_log tg_log;

/** Opens PREFIX.log (truncating it) and writes the header: program version, date, host and
 * the command line. A NULL prefix gives a log that only echoes to stderr. On an MPI rank other
 * than 0 the log is muted: no file, nothing on stderr. */
tg_status tg_log_open(tg_log **log, const char *prefix, int argc, char **argv, tg_error *err);
/** Writes one line (a newline is added) to the log file and, unless quiet, to stderr. */
void tg_log_printf(tg_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Writes one line to the log file only. */
void tg_log_file_only(tg_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tg_log_set_quiet(tg_log *log, int quiet);
/** Writes the total run time and closes the log. NULL is accepted. */
void tg_log_close(tg_log *log);

/** Opens PREFIX SUFFIX (e.g. ".pheno") for writing; the error names the path. On success *path
 * (if non-NULL) receives a malloc'ed copy of the path. */
tg_status tg_out_open(const char *prefix, const char *suffix, FILE **f, char **path, tg_error *err);
/** Closes an output file and reports a write error (disk full, ...) naming the path. */
tg_status tg_out_close(FILE *f, const char *path, tg_error *err);
/** Checks before any work that PREFIX's folder exists and is writable (on MPI rank 0, the one
 * that writes). */
tg_status tg_out_check_prefix(const char *prefix, tg_error *err);
/** tg_out_check_prefix for the prefix given by option --@p opt (named in the error). */
tg_status tg_out_check_option(const char *opt, const char *prefix, tg_error *err);

/** Seconds on a monotonic clock. */
double tg_now(void);

#endif
