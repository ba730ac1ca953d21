/* tilegwas: dispatch to one command per sub-command name. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "config.h"

static const tg_command commands[] = {
    {"simulate", tg_cmd_simulate, "write a synthetic dataset with planted signals"},
    {"info", tg_cmd_info, "summarise a PLINK fileset, or show the build and devices"},
    /* workload commands (one line each) */
    {"rr", tg_cmd_rr, "ridge regression / SNP-BLUP on all SNPs (--solver cg)"},
    {"grm", tg_cmd_grm, "genomic relationship matrix ZZ'/m (plink2 --make-rel meanimpute)"},
    {"epistasis", tg_cmd_epistasis, "exhaustive search of SNP pairs/triples/quads (case-control)"},
    {"snpmm", tg_cmd_snpmm, "genotype matrix products Z*L and Z'*L (5codes CPU, GPU)"},
    {"krr", tg_cmd_krr, "kernel ridge regression: build, mixed-precision Cholesky, predict"},
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

int main(int argc, char **argv) {
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
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tilegwas: error: unknown command '%s' (tilegwas --help lists them)\n", argv[1]);
    return 2;
}
