/* tilegwas: dispatch to one command per sub-command name, after the checks every MPI rank
 * makes before any command runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "config.h"

static const tg_command commands[] = {
    {"simulate", tg_cmd_simulate, "write a synthetic dataset with planted signals"},
    {"info", tg_cmd_info, "summarise a PLINK fileset, or show the build and devices"},
    /* workload commands (one line each) */
    {"rr", tg_cmd_rr, "ridge regression / SNP-BLUP on all SNPs (--solver cg)"},
    {"assoc", tg_cmd_assoc, "association tests per SNP: ridge with LOCO, then score tests"},
    {"grm", tg_cmd_grm, "genomic relationship matrix ZZ'/m (plink2 --make-rel meanimpute)"},
    {"pca", tg_cmd_pca, "top principal components (plink2 --pca: exact, or block Krylov)"},
    {"epistasis", tg_cmd_epistasis, "exhaustive search of SNP pairs/triples/quads (case-control)"},
    {"snpmm", tg_cmd_snpmm, "genotype matrix products Z*L and Z'*L (5codes CPU, GPU)"},
    {"krr", tg_cmd_krr, "kernel ridge regression: build, mixed-precision Cholesky, predict"},
    {"calibrate", tg_cmd_calibrate, "calibrate the performance models of every kernel here"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
    fprintf(f,
            "tilegwas %s: GWAS kernels on all CPU cores and GPUs (StarPU)\n\n"
            "usage: tilegwas COMMAND [options]   (tilegwas COMMAND --help for its options)\n\n"
            "commands:\n",
            PACKAGE_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

/* FNV-1a (64 bits) of the arguments after the program name, each with its terminating NUL so
 * that "ab c" and "a bc" differ. The program's path may differ between nodes. */
static uint64_t args_hash(int argc, char **argv) {
    uint64_t h = TG_HASH_INIT;
    for (int i = 1; i < argc; i++) h = tg_hash(h, argv[i], strlen(argv[i]) + 1);
    return h;
}

/* Under mpiexec every rank runs main: ranks started with other arguments would run other work
 * and wait for each other forever. Every rank learns which one differs; that one says so. */
static int same_args(int argc, char **argv) {
    uint64_t mine = args_hash(argc, argv), all[tg_runtime_nranks()];
    int bad = tg_runtime_differing_rank(&mine, 1, all);
    if (bad < 0) return 1;
    tg_error err;
    tg_error_set(&err, TG_ERR_ARG,
                 "started with other arguments than rank 0: every rank must run the same command "
                 "(check the mpiexec command line)");
    if (tg_runtime_rank() == bad) tg_cli_error(NULL, NULL, &err);
    return 0;
}

int main(int argc, char **argv) {
    /* before anything starts: the restart keeps no state */
    tg_blas_restart_if_generic(argv);
    /* MPI first: a rank must know its rank before it prints or writes anything */
    tg_error err;
    /* every rank refuses alike (the thread level is agreed on): rank 0 says it once */
    if (tg_runtime_init_mpi(&err)) return tg_cli_fail_alike(NULL, NULL, &err);
    if (!same_args(argc, argv)) return 2;
    /* only rank 0 prints results (help, info): the other ranks would repeat them */
    if (tg_runtime_rank() > 0 && !freopen("/dev/null", "w", stdout)) {
        tg_error_set(&err, TG_ERR_IO, "cannot send the output of rank %d to /dev/null",
                     tg_runtime_rank());
        return tg_cli_fail(NULL, NULL, &err);
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tilegwas %s\n", PACKAGE_VERSION);
        return 0;
    }
    /* Test hook (tests/mpi_epistasis.sh): TG_TEST_FAIL_RANK=R makes rank R fail at once, as on
     * a bad option, while the other ranks run the command: every rank must then end. */
    const char *fail_rank = getenv("TG_TEST_FAIL_RANK");
    char rank[16];
    snprintf(rank, sizeof rank, "%d", tg_runtime_rank());
    if (fail_rank && !strcmp(fail_rank, rank)) {
        tg_error_set(&err, TG_ERR_ARG, "TG_TEST_FAIL_RANK=%s: this rank fails on purpose (a test "
                     "hook)", fail_rank);
        return tg_cli_fail(argv[1], NULL, &err);
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            const int rc = commands[i].run(argc - 1, argv + 1);
            tg_runtime_prepare_wait(); /* a command that failed before the runtime started */
            return rc;
        }
    tg_error_set(&err, TG_ERR_ARG, "unknown command '%s' (tilegwas --help lists them)", argv[1]);
    return tg_cli_fail_options(NULL, &err);
}
