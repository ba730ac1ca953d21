/* The genotype input options every command with genotypes shares: the format and plink2's
 * selection and QC flags, parsed into a tg_input_opts; opening it and logging what each step
 * removed. */
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *const format_flag[] = {"--bfile", "--pfile", "--vcf", "--bcf"};

static tg_status set_format(tg_cli_common *c, tg_input_format f, const char *path,
                            tg_error *err) {
    if (c->in.path)
        return tg_error_set(err, TG_ERR_ARG, "%s and %s: give one genotype input",
                            format_flag[c->in.format], format_flag[f]);
    c->in.format = f;
    c->in.path = path;
    return TG_OK;
}

/* plink2's "--extract range FILE": the modifier, then the file as the next word. */
static tg_status id_or_range(const char *opt, const char *arg, char **argv, const char **file,
                             int *range, tg_error *err) {
    if (strcmp(arg, "range") != 0) {
        *file = arg;
        return TG_OK;
    }
    if (!argv[optind] || argv[optind][0] == '-')
        return tg_error_set(err, TG_ERR_ARG, "--%s range: expected a file after 'range'", opt);
    *file = argv[optind++];
    *range = 1;
    return TG_OK;
}

static tg_status fraction(const char *opt, const char *arg, double *out, tg_error *err) {
    return tg_cli_double(opt, arg, 0, 1, out, err);
}

tg_status tg_cli_input_option(tg_cli_common *c, int opt, const char *arg, char **argv,
                              tg_error *err) {
    int64_t v;
    tg_status st = TG_OK;
    tg_input_opts *in = &c->in;
    switch (opt) {
    case 1100: return set_format(c, TG_INPUT_BED, arg, err);
    case 1101: return set_format(c, TG_INPUT_PGEN, arg, err);
    case 1102: return set_format(c, TG_INPUT_VCF, arg, err);
    case 1103: return set_format(c, TG_INPUT_BCF, arg, err);
    case 1104:
        if (strlen(arg) != 1 || arg[0] == ' ')
            return tg_error_set(err, TG_ERR_ARG, "--id-delim '%s': expected one character "
                                "(plink2's default, '_', is written --id-delim _)", arg);
        in->id_delim = arg[0];
        return TG_OK;
    case 1110: in->keep = arg; break;
    case 1111: in->remove = arg; break;
    case 1112: return id_or_range("extract", arg, argv, &in->extract, &in->extract_range, err);
    case 1113: return id_or_range("exclude", arg, argv, &in->exclude, &in->exclude_range, err);
    case 1114: in->chr = arg; break;
    case 1115: in->autosome = 1; break;
    case 1116:
        if (!(st = tg_cli_int("from-bp", arg, 0, INT64_MAX / 2, &v, err))) in->from_bp = v;
        break;
    case 1117:
        if (!(st = tg_cli_int("to-bp", arg, 0, INT64_MAX / 2, &v, err))) in->to_bp = v;
        break;
    case 1120: return fraction("mind", arg, &in->mind, err);
    case 1121: return fraction("geno", arg, &in->geno, err);
    case 1122: return tg_cli_double("hwe", arg, 0, 1, &in->hwe, err);
    case 1123: return tg_cli_double("maf", arg, 0, 0.5, &in->maf, err);
    case 1124: return tg_cli_double("max-maf", arg, 0, 0.5, &in->max_maf, err);
    case 1125:
        if (!(st = tg_cli_int("mac", arg, 1, INT64_MAX / 2, &v, err))) in->mac = v;
        break;
    default: st = tg_error_set(err, TG_ERR_ARG, "unknown option");
    }
    return st;
}

tg_status tg_cli_input_check(const tg_cli_common *c, tg_error *err) {
    if (!c->in.path)
        return tg_error_set(err, TG_ERR_ARG, "a genotype input is required: --bfile PREFIX, "
                            "--pfile PREFIX, --vcf FILE or --bcf FILE");
    if (c->in.id_delim && c->in.format != TG_INPUT_VCF && c->in.format != TG_INPUT_BCF)
        return tg_error_set(err, TG_ERR_ARG, "--id-delim goes with --vcf or --bcf (a %s "
                            "fileset has FID and IID columns)", format_flag[c->in.format]);
    return TG_OK;
}

static void log_step(tg_log *log, const tg_input_step *s) {
    if (s->samples_removed)
        tg_log_printf(log, "%s: %lld sample%s removed, %lld remaining", s->flag,
                      (long long)s->samples_removed, s->samples_removed == 1 ? "" : "s",
                      (long long)s->samples_left);
    if (s->snps_removed)
        tg_log_printf(log, "%s: %lld variant%s removed, %lld remaining", s->flag,
                      (long long)s->snps_removed, s->snps_removed == 1 ? "" : "s",
                      (long long)s->snps_left);
    if (!s->samples_removed && !s->snps_removed) tg_log_printf(log, "%s: nothing removed", s->flag);
}

/* The folder of --out (malloc'ed), where a converted or filtered fileset spills, as plink2
 * keeps its temporary files beside its outputs. */
static char *out_dir(const tg_cli_common *c, tg_error *err) {
    char *copy = tg_strdup(c->out, err), *dir = copy ? tg_strdup(dirname(copy), err) : NULL;
    free(copy);
    return dir;
}

tg_status tg_cli_test_open(const tg_cli_common *c, tg_log *log, const char *path,
                           const tg_bed *train, tg_bed *test, tg_error *err) {
    char *dir = out_dir(c, err);
    if (!dir) return TG_ERR_NOMEM;
    int64_t dropped = 0;
    tg_status st = tg_bed_open(path, test, err);
    if (!st && (st = tg_input_match_snps(train, test, dir, &dropped, err))) {
        tg_error e = *err;
        tg_error_set(err, st, "--test-bfile %s", e.msg);
    }
    free(dir);
    if (st) return st;
    if (dropped)
        tg_log_printf(log, "--test-bfile %s: %lld variant%s not among the training variants left "
                      "out", path, (long long)dropped, dropped == 1 ? "" : "s");
    return TG_OK;
}

tg_status tg_cli_input_open(const tg_cli_common *c, tg_log *log, tg_bed *bed, tg_error *err) {
    /* every command that reads a fileset starts the runtime next: the GPUs' contexts are made
     * while it reads */
    tg_runtime_prepare(&c->rt);
    tg_input_opts o = c->in;
    tg_input_report rep;
    char *dir = out_dir(c, err);
    if (!dir) return TG_ERR_NOMEM;
    o.tmp_dir = dir;
    o.threads = c->rt.ncpu > 0 ? c->rt.ncpu : 0;
    double t0 = tg_now();
    tg_status st = tg_input_open(&o, bed, &rep, err);
    free(dir);
    if (st) return st;
    /* the terminal gets what changed the input (as plink2 prints it); the log, everything */
    tg_log_file_only(log, "%s %s: %lld samples, %lld variants (%.2f s)", format_flag[o.format],
                     o.path, (long long)rep.samples_read, (long long)rep.snps_read, tg_now() - t0);
    for (int k = 0; k < rep.nnotes; k++) tg_log_printf(log, "%s", rep.notes[k]);
    for (int k = 0; k < rep.nsteps; k++) log_step(log, &rep.steps[k]);
    if (rep.nsteps)
        tg_log_printf(log, "%lld samples and %lld variants remaining after selection and QC",
                      (long long)bed->n_samples, (long long)bed->n_snps);
    return TG_OK;
}
