/* tilegwas snpmm: Z·L or Zᵀ·L for the centered genotype matrix Z of a PLINK fileset and a
 * dense matrix L read from a text file (one row per SNP, or per sample with --transpose). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *help =
    "usage: tilegwas snpmm (--bfile|--pfile PREFIX | --vcf|--bcf FILE) --matrix FILE --out PREFIX\n"
    "                      [options]\n"
    "Multiplies the centered genotype matrix Z (samples x SNPs; Z = x - 2p, x the A1 count,\n"
    "p the A1 frequency over non-missing calls; a missing call counts as 2p, i.e. 0 in Z)\n"
    "by the matrix in FILE: Z*L, one output line per sample, or with --transpose Z'*L, one\n"
    "output line per SNP. Writes PREFIX.snpmm.tsv and PREFIX.log.\n\n"
    "options:\n"
    "  --matrix FILE    L: whitespace-separated numbers, 1 to 64 columns; one line per SNP in\n"
    "                   .bim order (Z*L) or, with --transpose, per sample in .fam order.\n"
    "                   Optional header: a first line whose first field is not a number names\n"
    "                   the columns; leading columns named SNP (or ID), or the SNP key of\n"
    "                   the outputs (#CHROM POS ID REF ALT A1, then A1_FREQ N, skipped: rr's\n"
    "                   beta.tsv gives Z*beta) for Z*L, FID IID (or IID) for Z'*L, are IDs\n"
    "                   and must match the .bim/.fam line by line.\n"
    "                   Without a header every field is a value.\n"
    "  --transpose      compute Z'*L (L has one line per sample)\n"
    "  --scale          scale SNP j by 1/sqrt(2p(1-p)) (standardized genotypes)\n"
    "  --float          single precision (FP32 arrays and accumulation) instead of "
    "double;\n"
    "                   a product beyond FP32's range (3.4e38) is an error, nothing written\n"
    TG_CLI_INPUT_HELP TG_CLI_COMMON_HELP "  --help           this text\n\n"
    "Monomorphic and all-missing SNPs have a zero column in Z (counted in the log).\n"
    "Output: header FID IID NAMES (Z*L) or #CHROM POS ID REF ALT A1 A1_FREQ N NAMES (Z'*L;\n"
    "A1_FREQ and N, the frequency p and the non-missing calls of the SNP), NAMES from the\n"
    "header of FILE or COL1..COLk.\n";

typedef struct {
    const char *matrix;
    int transpose, scale, fp32;
    tg_cli_common c;
} mm_opts;

/* Returns TG_OK, an error, or -1 after printing the help. */
static int parse_options(int argc, char **argv, mm_opts *o, tg_error *err) {
    enum { O_MATRIX = 1, O_TRANSPOSE, O_SCALE, O_FLOAT, O_HELP };
    static const struct option opts[] = {{"matrix", required_argument, 0, O_MATRIX},
                                         {"transpose", no_argument, 0, O_TRANSPOSE},
                                         {"scale", no_argument, 0, O_SCALE},
                                         {"float", no_argument, 0, O_FLOAT},
                                         {"help", no_argument, 0, O_HELP},
                                         TG_CLI_INPUT_OPTIONS,
                                         TG_CLI_COMMON_OPTIONS,
                                         {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    tg_cli_common_init(&o->c);
    int c;
    tg_status st = TG_OK;
    opterr = 0;
    optind = 1;
    while (!st && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_MATRIX: o->matrix = optarg; break;
        case O_TRANSPOSE: o->transpose = 1; break;
        case O_SCALE: o->scale = 1; break;
        case O_FLOAT: o->fp32 = 1; break;
        case O_HELP: fputs(help, stdout); return -1;
        case '?':
        case ':': st = tg_cli_bad_option(argv, err); break;
        default: st = tg_cli_common_option(&o->c, c, optarg, argv, err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, err);
    if (st) return st;
    if ((st = tg_cli_input_check(&o->c, err))) return st;
    if (!o->matrix) return tg_error_set(err, TG_ERR_ARG, "--matrix is required (see --help)");
    return TG_OK;
}

static tg_status write_output(const mm_opts *o, const tg_bed *bed, const tg_geno *g,
                              const tg_values *mx, const void *res, tg_prec prec, tg_error *err) {
    FILE *f;
    char *path;
    tg_snp_stats *stats = NULL; /* the A1_FREQ and N of Z'L's rows: those that centred Z */
    if (o->transpose) {
        if (!(stats = tg_malloc_n(bed->n_snps, 1, sizeof *stats, err)))
            return TG_ERR_NOMEM;
        tg_geno_stats(g, stats);
    }
    tg_status st = tg_out_open(o->c.out, ".snpmm.tsv", &f, &path, err);
    if (st) {
        free(stats);
        return st;
    }
    const int64_t rows = o->transpose ? bed->n_snps : bed->n_samples;
    fputs(o->transpose ? TG_SNP_KEY_HEADER TG_SNP_STATS_HEADER : "FID\tIID", f);
    for (int c = 0; c < mx->k; c++) fprintf(f, "\t%s", mx->names[c]);
    fputc('\n', f);
    for (int64_t r = 0; r < rows; r++) {
        if (o->transpose) {
            tg_snp_key_write(f, &bed->snps[r]);
            tg_snp_stats_write(f, &stats[r]);
        } else {
            fprintf(f, "%s\t%s", bed->samples[r].fid, bed->samples[r].iid);
        }
        for (int c = 0; c < mx->k; c++) {
            double x = tg_prec_load(prec, res, (size_t)(r + c * rows));
            char buf[32];
            if (prec == TG_FP32)
                snprintf(buf, sizeof buf, "%.9g", x);
            else
                tg_text_format_double(x, buf);
            fprintf(f, "\t%s", buf);
        }
        fputc('\n', f);
    }
    st = tg_out_close(f, path, err);
    free(path);
    free(stats);
    return st;
}

/* The run's peak host memory, for tg_cli_memory: the 5codes genotypes (0.4 bytes a call, a
 * rank holding its samples), L as read (fp64) and in the product's precision, the result. */
static tg_status check_memory(const mm_opts *o, const tg_bed *bed, int k, size_t es,
                              tg_log *log, tg_error *err) {
    const double n = (double)bed->n_samples, m = (double)bed->n_snps,
                 gb = 0.4 * n * m / tg_runtime_nranks(),
                 lb = (8.0 + (double)es) * k * (o->transpose ? n : m),
                 rb = (double)es * k * (o->transpose ? m : n), mib = 1024.0 * 1024.0;
    char terms[256];
    snprintf(terms, sizeof terms, "genotypes %.0f MiB, L %.0f MiB, result %.0f MiB", gb / mib,
             lb / mib, rb / mib);
    return tg_cli_memory(&o->c, log, gb + lb + rb, terms, err);
}

/* What the products hold on a GPU (once the runtime has started, which finds the GPUs). */
static tg_status check_gpu_memory(const tg_bed *bed, int k, size_t es, tg_log *log,
                                  tg_error *err) {
    double all, task;
    tg_geno_device_bytes(bed->n_samples / tg_runtime_nranks(), bed->n_snps, k, es, &all, &task);
    return tg_cli_gpu_memory(log, all, task, "the genotype blocks, L and the result", "use "
                             "fewer SNPs or samples per run, or more MPI ranks", err);
}

/* --float: a product beyond fp32's range is inf or NaN: refused, naming where, rather than
 * written as a result */
static tg_status check_finite(const mm_opts *o, const tg_bed *bed, const tg_values *mx,
                              const void *res, tg_prec prec, int64_t rows, tg_error *err) {
    for (int c = 0; c < mx->k; c++)
        for (int64_t r = 0; r < rows; r++) {
            double x = tg_prec_load(prec, res, (size_t)(r + c * rows));
            if (isfinite(x)) continue;
            char where[160];
            if (o->transpose)
                snprintf(where, sizeof where, "SNP %s", TG_ESC(bed->snps[r].id));
            else
                snprintf(where, sizeof where, "sample '%s %s'", TG_ESC(bed->samples[r].fid),
                         TG_ESC(bed->samples[r].iid));
            return tg_error_set(err, TG_ERR_NUMERIC, "%s, column %s of %s: the product is %g, "
                                "beyond %s's range (largest %g)%s: no output written", where,
                                TG_ESC(mx->names[c]), o->matrix, x, tg_prec_name(prec),
                                prec == TG_FP32 ? 3.4028234663852886e38 : 1.7976931348623157e308,
                                prec == TG_FP32 ? "; without --float the product is in fp64" : "");
        }
    return TG_OK;
}

int tg_cmd_snpmm(int argc, char **argv) {
    mm_opts o;
    tg_error err = {0};
    tg_log *log = NULL;
    tg_bed bed = {0};
    tg_values mx = {0};
    tg_geno *g = NULL;
    void *in = NULL, *res = NULL;
    int rc = 0, started = 0;
    int st = parse_options(argc, argv, &o, &err);
    if (st < 0) return 0;
    if (st) return tg_cli_fail_options("snpmm", &err);
    if ((st = tg_cli_check_outputs(&o.c, &err))) return tg_cli_fail("snpmm", NULL, &err);
    if ((st = tg_log_open(&log, o.c.out, argc, argv, &err)))
        return tg_cli_fail("snpmm", NULL, &err);
    tg_log_set_quiet(log, o.c.quiet);
    const tg_prec prec = o.fp32 ? TG_FP32 : TG_FP64;
    double t = tg_now();
    if ((st = tg_cli_input_open(&o.c, log, &bed, &err))) goto fail;
    t = tg_now();
    if ((st = tg_values_read(o.matrix, &bed, o.transpose, &mx, &err))) goto fail;
    tg_log_printf(log, "%s: %d column%s%s (%.2f s)", o.matrix, mx.k, mx.k == 1 ? "" : "s",
                  mx.nid ? ", IDs checked" : "", tg_now() - t);
    if ((rc = tg_cli_ranks_agree("snpmm", log, &o.c, &bed, NULL, NULL, &o.matrix, 1)))
        goto cleanup;
    const int64_t nt = o.transpose ? bed.n_samples : bed.n_snps,
                  nr = o.transpose ? bed.n_snps : bed.n_samples;
    size_t es = tg_prec_size(prec);
    if ((st = check_memory(&o, &bed, mx.k, es, log, &err))) goto fail;
    tg_cli_progress_on(&o.c); /* from the genotypes' pass on */
    t = tg_now();
    if ((st = tg_geno_from_bed(&bed, o.scale, &g, &err))) goto fail;
    int64_t first, rows;
    tg_geno_local(g, &first, &rows);
    if (tg_runtime_nranks() > 1)
        tg_log_printf(log, "%d MPI ranks: each holds the genotypes of its own samples (rank 0: "
                      "samples 1 to %lld of %lld)", tg_runtime_nranks(), (long long)rows,
                      (long long)bed.n_samples);
    tg_log_printf(log, "5codes genotypes prepared (%.2f GB%s, %.2f s)%s",
                  0.4e-9 * (double)rows * (double)bed.n_snps,
                  tg_runtime_nranks() > 1 ? " on rank 0" : "", tg_now() - t,
                  o.scale ? ", columns scaled by 1/sqrt(2p(1-p))" : "");
    if (tg_geno_excluded(g))
        tg_log_printf(log, "warning: %lld monomorphic or all-missing SNP%s: zero column%s in Z",
                      (long long)tg_geno_excluded(g), tg_geno_excluded(g) == 1 ? "" : "s",
                      tg_geno_excluded(g) == 1 ? "" : "s");
    if (!(in = tg_malloc_n(nt, mx.k, es, &err)) || !(res = tg_malloc_n(nr, mx.k, es, &err)))
        goto fail;
    for (int64_t e = 0; e < nt * mx.k; e++) tg_prec_store(prec, in, (size_t)e, mx.v[e]);
    t = tg_now();
    if ((st = tg_runtime_start(&o.c.rt, &err))) goto fail;
    started = 1;
    if ((st = check_gpu_memory(&bed, mx.k, es, log, &err))) goto fail;
    tg_cli_trace_start(&o.c);
    char desc[1024];
    tg_runtime_describe(desc, sizeof desc);
    tg_log_printf(log, "runtime: %s (%.2f s)", desc, tg_now() - t);
    t = tg_now();
    if ((st = tg_geno_mul(g, o.transpose, mx.k, prec, in, nt, res, nr, &err)) ||
        (st = tg_cli_trace_stop(&o.c, "snpmm", log, &err)))
        goto fail;
    double dt = tg_now() - t;
    tg_log_printf(log,
                  "product %s (%s, k = %d): %.3f s, %.2f GFLOP/s (2nmk flops, with the "
                  "first transfer to the devices)",
                  o.transpose ? "Z'*L" : "Z*L", tg_prec_name(prec), mx.k, dt,
                  2e-9 * (double)bed.n_samples * (double)bed.n_snps * mx.k / dt);
    t = tg_now();
    if (tg_runtime_rank() == 0 &&
        ((st = check_finite(&o, &bed, &mx, res, prec, nr, &err)) ||
         (st = write_output(&o, &bed, g, &mx, res, prec, &err))))
        goto fail;
    tg_log_printf(log, "wrote %s.snpmm.tsv%s (%.2f s)", o.c.out, o.c.zst ? ".zst" : "",
                  tg_now() - t); /* rank 0 */
    tg_cli_log_traffic(log);
    goto cleanup;
fail:
    rc = tg_cli_fail("snpmm", log, &err);
cleanup:
    tg_cli_progress_off();
    tg_geno_free(g); /* before the runtime stops: it unregisters its blocks */
    if (started) tg_runtime_stop();
    free(in);
    free(res);
    tg_values_free(&mx);
    tg_bed_close(&bed);
    tg_log_close(log);
    return rc;
}
