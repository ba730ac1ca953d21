/* tilegwas grm: the genomic relationship matrix in plink2's --make-rel layouts (triangle,
 * square, square0 × text, bin, bin4) or GCTA's .grm.bin/.grm.N.bin, rows streamed a block at a
 * time as they are computed (tg_grm_rows → tg_grm_out_rows). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *help =
    "usage: tilegwas grm (--bfile|--pfile PREFIX | --vcf|--bcf FILE) --out PREFIX [options]\n"
    "Writes the genomic relationship matrix of all samples as plink2 --make-rel does (by\n"
    "default as its default: the standardised kind, lower triangle, text) or --make-grm-bin\n"
    "(--grm-format gcta). With Z = x - 2p (x the A1 count, p its frequency over the calls;\n"
    "a missing call 0) the kinds are:\n"
    "  standardised  sum_k Z_ik Z_jk / (2p_k(1-p_k)) / N_ij  (plink2 --make-rel, GCTA)\n"
    "  centred       sum_k Z_ik Z_jk / N_ij                  (plink2 --make-rel cov)\n"
    "  vanraden      sum_k Z_ik Z_jk / sum_k 2p_k(1-p_k)     (VanRaden 2008, breeders' G)\n"
    "N_ij: the SNPs both samples have called (plink2's default), or with --meanimpute every\n"
    "SNP of the input. Monomorphic and all-missing SNPs add 0 and are counted in N_ij.\n"
    "Outputs:\n"
    "  PREFIX.rel       text: row i holds its entries 1..i (triangle), 1..n (square), or\n"
    "                   1..i then zeros (square0); tab-separated, 6 significant digits\n"
    "  PREFIX.rel.bin   bin (float64) or bin4 (float32), little-endian, the same entries\n"
    "  PREFIX.rel.id    #FID IID, one line per sample in input order\n"
    "  PREFIX.grm.bin, PREFIX.grm.N.bin, PREFIX.grm.id  with gcta: float32 lower triangle\n"
    "                   with the diagonal, row by row; its pair counts N_ij as float32; FID\n"
    "                   IID without a header\n"
    "  PREFIX.log\n\n"
    "options:\n"
    "  --grm-kind K     standardised (default), centred or vanraden\n"
    "  --grm-format F   comma-separated: a layout triangle|square|square0 and an encoding\n"
    "                   text|bin|bin4 (default triangle,text; bin and bin4 alone are square,\n"
    "                   as in plink2), or gcta\n"
    "  --meanimpute     divide by every SNP, not by those both samples called (plink2's\n"
    "                   'meanimpute'; without missing calls the two are equal)\n"
    "  --cov            --grm-kind centred (plink2's 'cov')\n"
    "  --bin            --grm-format square,bin\n"
    "  --help           this text\n" TG_CLI_INPUT_HELP TG_CLI_COMMON_HELP;

struct format {
    tg_grm_shape shape;
    tg_grm_encoding enc;
};

/* the --grm-format words, in tg_grm_shape and tg_grm_encoding order */
static const char *const shapes[] = {"triangle", "square", "square0"},
                         *const encs[] = {"text", "bin", "bin4", "gcta"};

/* The index of the word p[0..len) in @p words (n of them), or −1. */
static int word(const char *p, size_t len, const char *const *words, int n) {
    for (int i = 0; i < n; i++)
        if (len == strlen(words[i]) && !strncmp(p, words[i], len)) return i;
    return -1;
}

/* --grm-format: at most one layout and one encoding, or gcta alone. */
static tg_status parse_format(const char *arg, struct format *f, tg_error *err) {
    int shape = -1, enc = -1;
    const char *p = arg;
    while (*p) {
        size_t len = strcspn(p, ",");
        int s = word(p, len, shapes, 3), e = word(p, len, encs, 4);
        int hit = (s >= 0 && shape < 0) || (e >= 0 && enc < 0);
        if (s >= 0) shape = s;
        if (e >= 0) enc = e;
        if (!hit)
            return tg_error_set(err, TG_ERR_ARG, "--grm-format %s: '%.*s' is not a layout "
                                "(triangle, square, square0) or an encoding (text, bin, bin4, "
                                "gcta), or names a second one", arg, (int)len, p);
        p += len + (p[len] == ',');
    }
    if (enc == TG_GRM_GCTA && shape > TG_GRM_TRIANGLE)
        return tg_error_set(err, TG_ERR_ARG, "--grm-format %s: GCTA's .grm.bin is a lower "
                            "triangle, not %s", arg, shapes[shape]);
    if (enc < 0) enc = TG_GRM_TEXT;
    /* plink2: text is a triangle unless asked, bin and bin4 a square */
    if (shape < 0) shape = enc == TG_GRM_TEXT || enc == TG_GRM_GCTA ? 0 : 1;
    f->shape = (tg_grm_shape)shape;
    f->enc = (tg_grm_encoding)enc;
    return TG_OK;
}

static tg_status write_ids(const char *prefix, int gcta, const tg_bed *bed, tg_error *err) {
    FILE *f;
    char *path = NULL;
    tg_status st = tg_out_open(prefix, gcta ? ".grm.id" : ".rel.id", &f, &path, err);
    if (st) return st;
    if (!gcta) fputs("#FID\tIID\n", f);
    for (int64_t i = 0; i < bed->n_samples; i++)
        fprintf(f, "%s\t%s\n", bed->samples[i].fid, bed->samples[i].iid);
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

/* The product path for several MPI ranks (tg_grm: the genotype products over each rank's
 * samples; meanimpute, standardised or centred only), on every rank; rank 0 writes. */
static int products_fit(const tg_grm_opts *o) {
    return o->kind != TG_GRM_VANRADEN && o->meanimpute;
}

static tg_status products_grm(const tg_bed *bed, const tg_grm_opts *o, tg_grm_out *out,
                              tg_error *err) {
    const int64_t n = bed->n_samples;
    const int root = tg_runtime_rank() == 0;
    if (!products_fit(o))
        return tg_error_set(err, TG_ERR_ARG, "on several MPI ranks the GRM is the standardised "
                            "or centred kind with --meanimpute only");
    tg_geno *geno = NULL;
    double *k = NULL, *nobs = NULL;
    tg_status st = tg_geno_from_bed(bed, o->kind == TG_GRM_STANDARDISED, &geno, err);
    if (!st && root &&
        (!(k = tg_malloc_n(n, n, sizeof *k, err)) ||
         !(nobs = tg_malloc_n(n, 1, sizeof *nobs, err))))
        st = TG_ERR_NOMEM;
    if (!st) st = tg_grm(geno, k, n, err);
    /* K is symmetric: its columns are its rows; N is m for every pair (meanimpute) */
    for (int64_t r = 0; !st && root && r < n; r++) {
        for (int64_t j = 0; j < n; j++) nobs[j] = (double)bed->n_snps;
        st = tg_grm_out_rows(out, r, r + 1, k + r * n, nobs, n, err);
    }
    tg_geno_free(geno);
    free(k);
    free(nobs);
    return st;
}

static tg_status compute(const tg_cli_common *c, const tg_bed *bed, const tg_grm_opts *o,
                         const struct format *f, tg_log *log, tg_error *err) {
    const int root = tg_runtime_rank() == 0, ranks = tg_runtime_nranks() > 1;
    tg_grm_out *out = NULL;
    tg_grm_info info = {0};
    double t0 = tg_now();
    if (ranks)
        tg_log_printf(log, "%d MPI ranks: each holds the genotypes of its own samples; rank 0 "
                      "gathers and writes the matrix", tg_runtime_nranks());
    /* one rank: the block rows' tile tasks, on the GPUs when there are (a quarter of the
     * products' flops: docs/DESIGN-NOTES.md); several ranks: the products */
    const int products = ranks;
    /* the peak: through the products, K on rank 0 and the 5codes genotypes (0.4 bytes a call, a
     * rank its samples); by block rows, the INT8 encodings and called indicators (a byte each a
     * call) and two blocks of rows in flight (8 bytes an entry, 4 for an INT32 tile, 8 for the
     * counts given to GCTA's N) */
    const double n = (double)bed->n_samples, calls = n * (double)bed->n_snps,
                 nb = tg_grm_block_rows(o);
    const double kb = products ? (root ? 8 * n * n : 0) : 2 * nb * n * (o->counts ? 20 : 12),
                 gb = products ? 0.4 * calls / tg_runtime_nranks() : 2 * calls;
    char terms[128];
    snprintf(terms, sizeof terms, "%s %.0f MiB, genotypes %.0f MiB", products ? "K" : "blocks",
             kb / 1048576, gb / 1048576);
    tg_status st = tg_cli_memory(c, log, kb + gb, terms, err);
    /* on a GPU: the encodings (and indicators), two block rows of tiles; a task, a tile from
     * two panels. Through the products: their blocks, K's n columns in products */
    const double pan = o->counts ? 2 : 1;
    double all = pan * calls + kb, most = 2 * pan * nb * (double)bed->n_snps + 8 * nb * nb;
    if (products) tg_geno_device_bytes(bed->n_samples / tg_runtime_nranks(), bed->n_snps,
                                       bed->n_samples, 8, &all, &most);
    if (!st) st = tg_cli_gpu_memory(log, all, most, products ? "the genotype products' blocks" :
                                    "genotype panels and two block rows", "use fewer SNPs "
                                    "per run (--extract, --chr)", err);
    if (!st && root) st = tg_grm_out_open(c->out, f->shape, f->enc, bed->n_samples, &out, err);
    if (!st && products)
        st = products_grm(bed, o, out, err);
    else if (!st)
        st = tg_grm_rows(bed, o, tg_grm_out_rows, out, &info, err);
    if (root) {
        tg_status cs = tg_grm_out_close(out, st != TG_OK, st ? NULL : err);
        if (!st) st = cs;
    }
    if (!st && root) st = write_ids(c->out, f->enc == TG_GRM_GCTA, bed, err);
    if (st) return st;
    const char *gcta = f->enc == TG_GRM_GCTA ? ".grm.bin, .grm.N.bin and " : "";
    if (products) {
        tg_log_printf(log, "the matrix from the genotype products (several MPI ranks)");
    } else {
        tg_log_printf(log, "%lld SNPs (%lld polymorphic), %lld missing calls; divided by %s",
                      (long long)info.m, (long long)info.used, (long long)info.missing,
                      info.denom > 0 ? "one number for every pair" : "the SNPs each pair called");
        tg_log_printf(log, "read and encoded genotypes: %.3f s; %s products (tasks on %d CUDA "
                      "and %d CPU workers), formatting and writing, overlapped: %.3f s",
                      info.read_s, info.integer ? "exact INT8 Gram" : "FP64 tile",
                      tg_runtime_ngpu(), tg_runtime_ncpu(), info.products_s);
    }
    const char *z = c->zst ? ".zst" : ""; /* on the text files */
    tg_log_printf(log, "wrote %s%s%s%s and %s%s%s (%.3f s in all)", c->out,
                  *gcta ? "" : f->enc == TG_GRM_TEXT ? ".rel" : ".rel.bin",
                  !*gcta && f->enc == TG_GRM_TEXT ? z : "", gcta, c->out,
                  *gcta ? ".grm.id" : ".rel.id", z, tg_now() - t0);
    return TG_OK;
}

static int run(const tg_grm_opts *o, const struct format *f, const tg_cli_common *c,
               tg_log *log) {
    tg_error err = {0};
    tg_bed bed = {0};
    tg_status st = tg_cli_input_open(c, log, &bed, &err);
    if (st) return tg_cli_fail("grm", log, &err);
    int rc = tg_cli_ranks_agree("grm", log, c, &bed, NULL, NULL, NULL, 0);
    if (rc) {
        tg_bed_close(&bed);
        return rc;
    }
    if ((st = tg_runtime_start(&c->rt, &err))) {
        tg_bed_close(&bed);
        return tg_cli_fail("grm", log, &err);
    }
    tg_cli_trace_start(c);
    tg_cli_progress_on(c);
    tg_cli_log_runtime(log, &c->rt);
    tg_log_printf(log, "GRM: %s, %s; %s %s", tg_grm_kind_name(o->kind),
                  o->meanimpute ? "missing calls mean-imputed, divided by every SNP"
                                : "divided by the SNPs both samples called",
                  shapes[f->shape], encs[f->enc]);
    if (!(st = compute(c, &bed, o, f, log, &err))) st = tg_cli_trace_stop(c, "grm", log, &err);
    if (!st) tg_cli_log_traffic(log);
    tg_cli_progress_off();
    /* the error first: with several ranks it ends them all, where stopping would wait for them */
    rc = st ? tg_cli_fail("grm", log, &err) : 0;
    tg_runtime_stop();
    tg_bed_close(&bed);
    return rc;
}

int tg_cmd_grm(int argc, char **argv) {
    enum { O_COV = 1, O_BIN, O_KIND, O_FORMAT, O_MEANIMPUTE, O_HELP };
    static const struct option opts[] = {
        {"cov", no_argument, 0, O_COV}, {"bin", no_argument, 0, O_BIN},
        {"grm-kind", required_argument, 0, O_KIND},
        {"grm-format", required_argument, 0, O_FORMAT},
        {"meanimpute", no_argument, 0, O_MEANIMPUTE}, {"help", no_argument, 0, O_HELP},
        TG_CLI_INPUT_OPTIONS, TG_CLI_COMMON_OPTIONS, {0, 0, 0, 0}};
    tg_cli_common c;
    tg_cli_common_init(&c);
    tg_error err = {0};
    tg_grm_opts o = {.kind = TG_GRM_STANDARDISED};
    struct format f = {TG_GRM_TRIANGLE, TG_GRM_TEXT};
    int o_kind = 0, o_format = 0, opt;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case O_COV:
        case O_KIND:
            if (o_kind++)
                st = tg_error_set(&err, TG_ERR_ARG, "--grm-kind and --cov: give one, once");
            else if (opt == O_COV)
                o.kind = TG_GRM_CENTRED;
            else
                st = tg_grm_kind_parse(optarg, &o.kind, &err);
            break;
        case O_BIN:
        case O_FORMAT:
            if (o_format++)
                st = tg_error_set(&err, TG_ERR_ARG, "--grm-format and --bin: give one, once");
            else
                st = parse_format(opt == O_BIN ? "square,bin" : optarg, &f, &err);
            break;
        case O_MEANIMPUTE: o.meanimpute = 1; break;
        case O_HELP: fputs(help, stdout); return 0;
        case '?':
        case ':': st = tg_cli_bad_option(argv, &err); break;
        default: st = tg_cli_common_option(&c, opt, optarg, argv, &err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, &err);
    if (!st) st = tg_cli_input_check(&c, &err);
    if (st) return tg_cli_fail_options("grm", &err);
    o.square = f.shape == TG_GRM_SQUARE;
    o.counts = f.enc == TG_GRM_GCTA;
    if ((st = tg_cli_check_outputs(&c, &err))) return tg_cli_fail("grm", NULL, &err);
    tg_log *log = NULL;
    if (tg_log_open(&log, c.out, argc, argv, &err)) return tg_cli_fail("grm", NULL, &err);
    tg_log_set_quiet(log, c.quiet);
    int rc = run(&o, &f, &c, log);
    tg_log_close(log);
    return rc;
}
