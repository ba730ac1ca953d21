/* The command-line tool: one function per command, shared option parsing and error reporting.
 * Commands print; the library does not. */
#ifndef TG_CLI_H
#define TG_CLI_H
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "io/out.h"
#include "tilegwas.h"

/** Each command: tilegwas NAME [options]; returns the process exit status. */
typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} tg_command;

int tg_cmd_info(int argc, char **argv);
int tg_cmd_simulate(int argc, char **argv);
int tg_cmd_rr(int argc, char **argv);
int tg_cmd_assoc(int argc, char **argv);
int tg_cmd_grm(int argc, char **argv);
int tg_cmd_pca(int argc, char **argv);
int tg_cmd_epistasis(int argc, char **argv);
int tg_cmd_snpmm(int argc, char **argv);
int tg_cmd_krr(int argc, char **argv);
int tg_cmd_calibrate(int argc, char **argv);

/** Prints "tilegwas CMD: error: MSG" on stderr ("tilegwas: error: MSG" for a NULL @p cmd), and
 * in the log if open; with several MPI ranks "error: rank R: MSG". Returns exit code 1 (2 for
 * usage errors, TG_ERR_ARG). */
int tg_cli_error(const char *cmd, tg_log *log, const tg_error *err);
/** A fatal error: tg_cli_error(), then with several MPI ranks every rank ends at once
 * (MPI_Abort), since the others may wait for this one in a collective; returns the exit code
 * with one rank. */
int tg_cli_fail(const char *cmd, tg_log *log, const tg_error *err);
/** An error in the options alone (TG_ERR_ARG before any file is read): every rank has it, since
 * main checked that all have the same arguments, so rank 0 prints it as one rank would and
 * every rank returns the exit code. Other errors (out of memory) go to tg_cli_fail(). */
int tg_cli_fail_options(const char *cmd, const tg_error *err);
/** An error every rank reaches alike, at the same point and with no rank waiting for another
 * (one derived from values that are the same on every rank): rank 0 prints it as one rank would
 * (and logs it), every rank returns the exit code. */
int tg_cli_fail_alike(const char *cmd, tg_log *log, const tg_error *err);

/** Parses an integer option value in [lo, hi]; the error names the option and the value. */
tg_status tg_cli_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out,
                     tg_error *err);
/** The error for getopt_long's '?' or ':' result (call with opterr = 0). */
tg_status tg_cli_bad_option(char **argv, tg_error *err);
/** After getopt_long: an error naming the first word that is not an option, if any (the
 * commands take options only). */
tg_status tg_cli_no_operand(int argc, char **argv, tg_error *err);
/** --precisions: a comma-separated list of fp64, fp32, fp16, fp8 into a bit set (1 << tg_prec). */
tg_status tg_cli_precisions(const char *list, unsigned *allowed, tg_error *err);
/** The names of the precisions in bit set @p set, comma-separated, into @p buf. */
void tg_cli_precision_names(unsigned set, char *buf, size_t len);
/** The precisions off-diagonal tiles may take when --precisions is not given (call with the
 * runtime started): down to fp16 when GPUs run the tiles; fp32 at the lowest on CPUs, where
 * fp16 and fp8 tiles are widened in every task and save memory, not time. Logs the choice
 * with @p with_gpus (the list with GPUs) and @p without (without). */
unsigned tg_cli_default_precisions(tg_log *log, unsigned with_gpus, unsigned without);
/** Parses a floating-point option value in [lo, hi] (NAN-free). */
tg_status tg_cli_double(const char *opt, const char *s, double lo, double hi, double *out,
                        tg_error *err);

/** Writes PREFIX SUFFIX (rank 0's job): one line per SNP of @p bed, keyed as every SNP row
 * (TG_SNP_KEY_HEADER) with its A1 frequency and calls from @p stats, or with @p stats NULL one
 * line per sample (FID IID); then its @p k values (column-major, leading dimension the line
 * count) under @p names, in the fewest digits that read back exactly, NA for NAN. */
tg_status tg_cli_write_values(const char *prefix, const char *suffix, const tg_bed *bed,
                              const tg_snp_stats *stats, int k, char *const *names,
                              const double *v, tg_error *err);
/** Columns of @p ph (read from @p file) named in the comma-separated @p list, in that order, or
 * all of them when @p list is NULL; errors name --@p opt. *cols is malloc'd. */
tg_status tg_cli_columns(const char *file, const char *opt, const char *list, const tg_pheno *ph,
                         int **cols, int *k, tg_error *err);

/** Options every compute command shares: --out, --sched, --ncpu, --ngpu, --quiet, --trace;
 * and, for the commands that read genotypes, the input options (TG_CLI_INPUT_OPTIONS). */
typedef struct {
    const char *out;
    tg_runtime_opts rt;
    int quiet;
    const char *trace; /* NULL: no trace */
    int64_t memory;    /* --memory, in bytes (0: what the machine has, tg_mem_available) */
    int zst;           /* --zst: text outputs compressed */
    int zst_level;     /* --zst-level; 0: not given */
    tg_input_opts in;  /* in.path NULL: no genotype input given */
} tg_cli_common;

/** getopt_long entries of the common options (values 1000..1099); end with {0}. */
#define TG_CLI_COMMON_OPTIONS                                                                    \
    {"out", required_argument, 0, 1000}, {"sched", required_argument, 0, 1001},                  \
        {"ncpu", required_argument, 0, 1002}, {"ngpu", required_argument, 0, 1003},              \
        {"quiet", no_argument, 0, 1004}, {"trace", required_argument, 0, 1005},                  \
        {"threads", required_argument, 0, 1002}, {"memory", required_argument, 0, 1006},        \
        {"zst", no_argument, 0, 1007}, {"zst-level", required_argument, 0, 1008}
/** getopt_long entries of the genotype input options (values 1100..1199): one format, then
 * plink2's selection and QC flags, spelled as plink2 spells them. */
#define TG_CLI_INPUT_OPTIONS                                                                     \
    {"bfile", required_argument, 0, 1100}, {"pfile", required_argument, 0, 1101},                \
        {"vcf", required_argument, 0, 1102}, {"bcf", required_argument, 0, 1103},               \
        {"id-delim", required_argument, 0, 1104}, {"keep", required_argument, 0, 1110},         \
        {"remove", required_argument, 0, 1111}, {"extract", required_argument, 0, 1112},        \
        {"exclude", required_argument, 0, 1113}, {"chr", required_argument, 0, 1114},           \
        {"autosome", no_argument, 0, 1115}, {"from-bp", required_argument, 0, 1116},            \
        {"to-bp", required_argument, 0, 1117}, {"mind", required_argument, 0, 1120},            \
        {"geno", required_argument, 0, 1121}, {"hwe", required_argument, 0, 1122},              \
        {"maf", required_argument, 0, 1123}, {"max-maf", required_argument, 0, 1124},           \
        {"mac", required_argument, 0, 1125}
/** Help text of the genotype input options. */
#define TG_CLI_INPUT_HELP                                                                        \
    "genotype input (one of; plink2's flags):\n"                                                \
    "  --bfile PREFIX   PLINK 1 fileset PREFIX.bed/.bim/.fam\n"                                 \
    "  --pfile PREFIX   PLINK 2 fileset PREFIX.pgen/.pvar/.psam (hard calls)\n"                 \
    "  --vcf FILE       VCF, plain or bgzipped (GT hard calls)\n"                               \
    "  --bcf FILE       BCF (GT hard calls)\n"                                                  \
    "  --id-delim C     VCF/BCF sample IDs are FID C IID (default: FID 0, IID the whole ID)\n"  \
    "selection and QC, applied once in plink2's order, each step counted in the log:\n"        \
    "  --keep FILE      only the samples listed (FID IID per line; an IID alone means FID 0)\n" \
    "  --remove FILE    all but the samples listed\n"                                           \
    "  --extract FILE   only the variants whose IDs are listed ('--extract range FILE': CHR\n"  \
    "                   START END lines)\n"                                                     \
    "  --exclude FILE   all but the variants listed (also 'range')\n"                           \
    "  --chr LIST       only these chromosomes (e.g. 1-4,22,X)\n"                              \
    "  --autosome       only chromosomes 1-22\n"                                                \
    "  --from-bp N, --to-bp N  only positions N.. / ..N (with one --chr)\n"                     \
    "  --mind F         remove samples with a missing-call rate above F\n"                      \
    "  --geno F         remove variants with a missing-call rate above F\n"                     \
    "  --hwe P          remove variants whose Hardy-Weinberg exact test p-value is below P\n"   \
    "  --maf F, --max-maf F  remove variants with a minor allele frequency below / above F\n"   \
    "  --mac N          remove variants with a minor allele count below N\n"
/** Handles option value @p opt (1100..1199) of the input set; @p argv for plink2's two-word
 * '--extract range FILE'. */
tg_status tg_cli_input_option(tg_cli_common *c, int opt, const char *arg, char **argv,
                              tg_error *err);
/** After parsing: one genotype input was given, and the flags fit it. */
tg_status tg_cli_input_check(const tg_cli_common *c, tg_error *err);
/** Opens the genotype input into @p bed (tg_input_open) and logs what was read and what each
 * selection and QC step removed; first starts making the GPUs' contexts that the runtime @p c
 * asks for (tg_runtime_prepare), which its start then finds made. */
tg_status tg_cli_input_open(const tg_cli_common *c, tg_log *log, tg_bed *bed, tg_error *err);

/** Opens the test cohort --test-bfile @p path and gives it the variants of @p train (the
 * training cohort after its selection and QC: tg_input_match_snps), logging how many of its
 * own were left out; errors start with "--test-bfile PATH". */
tg_status tg_cli_test_open(const tg_cli_common *c, tg_log *log, const char *path,
                           const tg_bed *train, tg_bed *test, tg_error *err);

/** With several MPI ranks, after reading the inputs and before the first collective of the work
 * (collective itself; nothing with one rank): every rank hashes what it read, the fileset
 * @p bed as the work sees it (after selection and QC: variant rows, sample rows, genotype
 * bytes), the test fileset @p test of --test-bfile @p test_path (NULL: none), the files of
 * @p c's selection flags and @p files[0..nfiles) (NULL entries: options not given), and the
 * ranks compare the sizes and hashes in one collective (tg_runtime_differing_rank). Returns 0
 * when every rank read the same (logged); else rank 0 has printed and logged one line naming
 * the ranks and the first input that differs, and every rank gets exit status 2. */
int tg_cli_ranks_agree(const char *cmd, tg_log *log, const tg_cli_common *c, const tg_bed *bed,
                       const char *test_path, const tg_bed *test, const char *const *files,
                       int nfiles);

/** Help text of the common options. */
#define TG_CLI_COMMON_HELP                                                                       \
    "  --out PREFIX     output prefix (default: tilegwas)\n"                                    \
    "  --sched NAME     StarPU scheduler (default: dmdas)\n"                                    \
    "  --ncpu N         CPU workers (default: all cores not driving a GPU, less one with GPUs;\n" \
    "                   --threads N is the same, as plink2 spells it)\n"                          \
    "  --ngpu N         GPUs (default: all; 0 = CPU only)\n"                                    \
    "  --quiet          log to PREFIX.log only\n"                                               \
    "  --zst            zstd-compress the text outputs, named PREFIX.SUFFIX.zst (plink2's\n"    \
    "                   'zs'), on --threads or every usable core; binary outputs (.bin,\n"      \
    "                   .png) are never compressed\n"                                           \
    "  --zst-level N    with --zst: the zstd level, 1 (fastest) to 22 (smallest; default 3)\n"  \
    "  --trace T        every task's worker and times to T.trace.tsv, a Gantt chart to\n"       \
    "                   T.gantt.png (rank 0's tasks with several MPI ranks)\n"                   \
    "  --memory MiB     host memory the run may take (default: what the machine has: the\n"    \
    "                   least of MemAvailable, the cgroup's limit and ulimit -v); a run whose\n"\
    "                   estimate (in the log) exceeds it is refused before it allocates\n"

/** Progress of a long phase on a stream (stderr): "LABEL: DONE/TOTAL UNIT (P%), RATE UNIT/s,
 * T elapsed, ETA T" (the last line of a phase says "done" instead of the ETA). On a terminal
 * (@p tty) one line rewritten with \r at most every 0.1 s; otherwise whole lines, at most one
 * every 2 s; always a last whole line. Thread-safe (the library's hook may call it from a
 * StarPU worker). The clock is injectable for tests. */
typedef struct {
    FILE *out;
    int tty, silent;
    double (*clock)(void);
    double every; /* seconds between two lines of a phase */
    pthread_mutex_t lock;
    char label[64], unit[32];
    int64_t done, total;
    double t0, last; /* the phase's start and its last line */
    int active;      /* a phase is running */
    int open;        /* a \r line is on the terminal without its newline */
} tg_cli_progress;
void tg_cli_progress_init(tg_cli_progress *p, FILE *out, int tty, int silent,
                          double (*clock)(void));
/** Starts a phase (ending the running one with its last line). */
void tg_cli_progress_start(tg_cli_progress *p, const char *label, int64_t total,
                           const char *unit);
/** @p done of the phase's total; done ≥ total ends the phase with its last line. */
void tg_cli_progress_update(tg_cli_progress *p, int64_t done);
/** Ends the running phase, if any, with its last line. */
void tg_cli_progress_end(tg_cli_progress *p);
/** A tg_progress_fn (ctx: a tg_cli_progress): a new phase name, total or a smaller done
 * starts a new phase; a total of −1 starts one whose total comes with its next call. */
void tg_cli_progress_hook(void *ctx, const char *phase, const char *unit, int64_t done,
                          int64_t total);
/** The command's reporter: stderr, \r only when stderr is a terminal, silent with --quiet and
 * on MPI ranks other than 0; set as the library's progress hook. */
tg_cli_progress *tg_cli_progress_on(const tg_cli_common *c);
/** Unsets the hook and ends the running phase. */
void tg_cli_progress_off(void);
/** Ends a \r line left open, so that an error message starts a line of its own. */
void tg_cli_progress_interrupt(void);

/** --grid PxQ: the process grid of the tiled matrices; P·Q must equal the MPI rank count. */
tg_status tg_cli_grid(const char *s, tg_runtime_opts *rt, tg_error *err);
/** Help text of --grid. */
#define TG_CLI_GRID_HELP                                                                         \
    "  --grid PxQ       MPI process grid of the tiles: tile (i, j) on rank (i mod P)*Q +\n"       \
    "                   (j mod Q); P*Q must equal the rank count (default: the squarest,\n"      \
    "                   P >= Q)\n"

void tg_cli_common_init(tg_cli_common *c);
/** Logs the started runtime (tg_runtime_describe) and, when @p ro kept CPU workers away from
 * the GPUs by default, why. */
void tg_cli_log_runtime(tg_log *log, const tg_runtime_opts *ro);
/** A command's estimate of its peak host memory, @p need bytes (@p terms: its main terms, for
 * the log), logged against --memory or tg_mem_available() and refused (TG_ERR_NOMEM, both
 * figures in the message) when it exceeds it; called before the command allocates. */
tg_status tg_cli_memory(const tg_cli_common *c, tg_log *log, double need, const char *terms,
                        tg_error *err);
/** A command's estimate of what its GPU tasks hold, in bytes: @p data on each GPU in all and
 * @p task for the largest task (@p terms: the main terms, for the log), logged against
 * tg_runtime_gpu_memory() (nothing without GPUs). More data than a GPU holds runs, slower,
 * as StarPU moves it in and out; tasks whose data StarPU cannot hold at once (about five of
 * the largest) are refused (TG_ERR_NOMEM) with @p smaller, what the user can do about it. */
tg_status tg_cli_gpu_memory(tg_log *log, double data, double task, const char *terms,
                            const char *smaller, tg_error *err);
/** Logs what the probe measured (tg_probe_describe: codelets without a model, the log file
 * only) and, with several MPI ranks, what the ranks exchanged: the bytes StarPU-MPI sent
 * (tg_runtime_describe_comm, a collective: every rank calls this at the same point) and the
 * bytes of our own MPI sums (tg_runtime_describe_sums). */
void tg_cli_log_traffic(tg_log *log);
/** tg_pheno_read_opts of the columns @p col_nums (NULL: all), and a log line counting the rows
 * of samples not in @p samples that it skipped (plink2 and REGENIE skip them too). */
tg_status tg_cli_pheno_read(tg_log *log, const char *path, const char *col_nums,
                            const tg_sample *samples, int64_t n, tg_pheno *ph, tg_error *err);
/** The covariate options fit together: --covar-name or --covar-col-nums (not both) need
 * --covar; --test-covar needs --covar and --test-bfile, and --covar with --test-bfile needs it. */
tg_status tg_cli_covar_check(const char *covar, const char *names, const char *col_nums,
                             const char *test_bfile, const char *test_covar, tg_error *err);
/** Writes PREFIX.alpha.tsv: the fixed effects @p alpha ((1 + cv->n_cols) × k), a line per
 * design column (the intercept first), a column per phenotype. */
tg_status tg_cli_write_alpha(const char *prefix, int k, const char *const *names,
                             const tg_covar *cv, const double *alpha, tg_error *err);
/** Covariates for fixed effects (--covar FILE with --covar-name / --covar-col-nums): the file's
 * columns, categorical ones too, into the design @p cv of @p samples (tg_covar_make; with
 * @p like, another cohort's design built alike, tg_covar_apply). Logs the columns used, each
 * categorical column's reference level, the columns left out (a warning each) and the samples
 * missing a covariate. */
tg_status tg_cli_covariates(tg_log *log, const char *path, const char *names, const char *col_nums,
                            const tg_sample *samples, int64_t n, const tg_covar *like,
                            tg_covar *cv, tg_error *err);
/** The phenotypes of a command, as plink2 takes them: the columns @p col_nums (plink2's
 * --pheno-col-nums; NULL: all) of the file @p path, or without a file the .fam's column 6 of
 * @p bed as PHENO1 (an error when it holds no value). */
tg_status tg_cli_phenotypes(tg_log *log, const char *path, const char *col_nums, const tg_bed *bed,
                            tg_pheno *ph, tg_error *err);
/** With several MPI ranks, logs the process grid: where tile (i, j)@p tiles lives and which
 * rank makes panel p (@p panels, e.g. "genotype panel p read"). */
void tg_cli_log_grid(tg_log *log, const char *tiles, const char *panels);
/** Handles option value @p opt of the common set (1000..1099) or of the input set
 * (1100..1199, tg_cli_input_option, which needs @p argv); returns TG_ERR_ARG with a message for
 * a bad value. */
tg_status tg_cli_common_option(tg_cli_common *c, int opt, const char *arg, char **argv,
                               tg_error *err);

/** Checks before any work that the folders of --out and --trace are writable (on rank 0), and
 * turns on --zst for the outputs to come. */
tg_status tg_cli_check_outputs(const tg_cli_common *c, tg_error *err);
/** With --trace, starts recording tasks; call right after tg_runtime_start (collective with
 * several MPI ranks, as every rank records). */
void tg_cli_trace_start(const tg_cli_common *c);
/** With --trace, stops recording and, on rank 0, writes T.trace.tsv and T.gantt.png and logs
 * them; call before tg_runtime_stop (collective, as tg_cli_trace_start). */
tg_status tg_cli_trace_stop(const tg_cli_common *c, const char *cmd, tg_log *log, tg_error *err);
#endif
