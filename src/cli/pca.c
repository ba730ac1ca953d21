/* tilegwas pca: the top principal components of the standardised GRM, written as plink2 --pca
 * writes PREFIX.eigenvec and PREFIX.eigenval. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *help =
    "usage: tilegwas pca (--bfile|--pfile PREFIX | --vcf|--bcf FILE) [--pca [K] [approx]]\n"
    "                    --out PREFIX [options]\n"
    "The top K principal components of the samples: eigenvectors and eigenvalues of the\n"
    "relationship matrix G = Z Z' / m, Z the genotypes centred by 2p (p the A1 frequency over\n"
    "non-missing calls) and divided by sqrt(2p(1-p)), missing calls mean-imputed, over the\n"
    "SNPs on chromosomes 1-22 (m of them, monomorphic ones counted; the others are left out,\n"
    "as plink2 leaves them out). This is plink2 --pca meanimpute (and --pca approx); plink2's\n"
    "default exact --pca divides each pair by the SNPs both samples have called instead,\n"
    "which is the same without missing calls.\n"
    "Outputs (plink2's layout): PREFIX.eigenvec, a header '#FID IID PC1 ... PCK' ('#IID ...'\n"
    "for a .psam or VCF without family IDs) and a line per sample of its unit-length\n"
    "eigenvector entries; PREFIX.eigenval, one eigenvalue per line, largest first; 6\n"
    "significant digits as plink2 prints them. PCs have an arbitrary sign. PREFIX.log.\n\n"
    "options:\n"
    "  --pca [K] [approx]  K PCs (default 10). Exact (G formed; its top K by block Krylov\n"
    "                   when they converge to rounding level, else by LAPACK dsyevr) up to\n"
    "                   5000 samples, approximate above, or always with 'approx' (plink2's\n"
    "                   word): randomized block Krylov on the genotype products, G never\n"
    "                   formed, run until every top-K residual |Gv - lv| is below 1e-6 l1\n"
    "                   (the log gives it); 'exact' (tilegwas's word) forms G at any size;\n"
    "                   'meanimpute' (plink2's) is accepted: both modes impute by the mean\n"
    "  --seed S         approx: seed of the random start (default 1)\n"
    "  --help           this text\n" TG_CLI_INPUT_HELP TG_CLI_COMMON_HELP;

/* plink2 writes the FID column when the sample file has one: a .fam always, a .psam or a
 * VCF only with family IDs (which tilegwas reads as "0" otherwise). */
static int fid_column(const tg_bed *bed) {
    if (!bed->format || !strcmp(bed->format, "bed")) return 1;
    for (int64_t i = 0; i < bed->n_samples; i++)
        if (strcmp(bed->samples[i].fid, "0")) return 1;
    return 0;
}

/* plink2's dtoa_g: %g, 6 significant digits, a zero without its sign. */
static void put_g(FILE *f, double v) { fprintf(f, "%g", v == 0 ? 0.0 : v); }

static tg_status write_outputs(const char *prefix, const tg_bed *bed, int k, const double *vec,
                               const double *val, tg_error *err) {
    FILE *f;
    char *path = NULL;
    const int64_t n = bed->n_samples;
    const int fid = fid_column(bed);
    tg_status st = tg_out_open(prefix, ".eigenvec", &f, &path, err);
    if (st) return st;
    fputs(fid ? "#FID\tIID" : "#IID", f);
    for (int j = 1; j <= k; j++) fprintf(f, "\tPC%d", j);
    fputc('\n', f);
    for (int64_t i = 0; i < n; i++) {
        if (fid) fprintf(f, "%s\t", bed->samples[i].fid);
        fputs(bed->samples[i].iid, f);
        for (int j = 0; j < k; j++) {
            fputc('\t', f);
            put_g(f, vec[i + j * n]);
        }
        fputc('\n', f);
    }
    st = tg_out_close(f, path, err);
    free(path);
    if (st || (st = tg_out_open(prefix, ".eigenval", &f, &path, err))) return st;
    for (int j = 0; j < k; j++) {
        put_g(f, val[j]);
        fputc('\n', f);
    }
    st = tg_out_close(f, path, err);
    free(path);
    return st;
}

/* Whether K is formed (exact), and, on one rank, from the GRM's block-row tiles (a quarter of
 * the genotype products' flops, GPUs included) rather than by tg_pca's products. */
static int exact_mode(const tg_pca_opts *po, int64_t n) {
    return po->mode == TG_PCA_EXACT || (po->mode == TG_PCA_AUTO && n <= TG_PCA_EXACT_MAX);
}
static int by_tiles(const tg_pca_opts *po, int64_t n) {
    return exact_mode(po, n) && tg_runtime_nranks() == 1;
}

/* The peak, for tg_cli_memory: by tiles, K (n² doubles), the INT8 encodings (a byte a call)
 * and two block rows; else the 5codes genotypes (0.4 bytes a call, a rank its samples), then
 * exact, K on rank 0, or approximate, the basis Q and its products W (n × b·blocks doubles
 * each, b = k + max(k, 10)). On a GPU: the panels and two block rows, or the products'
 * blocks. */
static tg_status check_memory(const tg_pca_opts *po, const tg_cli_common *c, const tg_bed *bed,
                              tg_log *log, tg_error *err) {
    const double n = (double)bed->n_samples, m = (double)bed->n_snps,
                 ranks = tg_runtime_nranks(), mib = 1048576,
                 b = po->k + (po->k > 10 ? po->k : 10), cols = b * po->max_blocks;
    const int tiles = by_tiles(po, bed->n_samples), approx = !exact_mode(po, bed->n_samples);
    const tg_grm_opts go = {.kind = TG_GRM_STANDARDISED, .meanimpute = 1};
    const double nb = tg_grm_block_rows(&go), gb = tiles ? n * m : 0.4 * n * m / ranks;
    const double kb = approx ? 2 * 8 * n / ranks * (cols < n ? cols : n)
                      : tg_runtime_rank() == 0 ? 8 * n * n + (tiles ? 2 * 8 * nb * n : 0) : 0;
    char terms[128];
    snprintf(terms, sizeof terms, "genotypes %.0f MiB, %s %.0f MiB", gb / mib,
             approx ? "the Krylov basis and its products" : "K", kb / mib);
    tg_status st = tg_cli_memory(c, log, gb + kb, terms, err);
    double all = n * m + 2 * 8 * nb * n, task = 2 * nb * m + 8 * nb * nb;
    if (!tiles)
        tg_geno_device_bytes(bed->n_samples / tg_runtime_nranks(), bed->n_snps, (int64_t)b, 8,
                             &all, &task);
    if (!st) st = tg_cli_gpu_memory(log, all, task, tiles ? "genotype panels and two block "
                                    "rows" : "the genotype products' blocks", "use fewer "
                                    "SNPs or samples per run, or more MPI ranks", err);
    return st;
}

/* The log's account of the SNPs: @p dropped off the autosomes, @p left kept, @p zero of them
 * monomorphic or all-missing; an error naming the fileset when every one is. */
static tg_status log_snps(const tg_bed *bed, int64_t dropped, int64_t left, int64_t zero,
                          tg_log *log, tg_error *err) {
    if (dropped)
        tg_log_printf(log, "%lld variants not on chromosomes 1-22 left out (as plink2 --pca "
                      "does); %lld left", (long long)dropped, (long long)left);
    if (zero == left)
        return tg_error_set(err, TG_ERR_ARG, "%s: every one of the %lld autosomal variants is "
                            "monomorphic or all-missing: no PC to find", bed->prefix,
                            (long long)left);
    if (zero)
        tg_log_printf(log, "%lld monomorphic or all-missing SNP(s) contribute 0 (still counted "
                      "in m, as plink2 counts them)", (long long)zero);
    return TG_OK;
}

/* How the exact mode's eigenpairs were found (tg_pca_eig). */
static void log_eig(tg_log *log, const tg_pca_report *rep, int k) {
    if (!rep->blocks)
        tg_log_printf(log, "exact PCA: LAPACK dsyevr %.3f s", rep->seconds_dense);
    else if (!rep->lapack)
        tg_log_printf(log, "exact PCA: block Krylov on the matrix, %d blocks of %d columns, "
                      "%.3f s; largest residual |Gv - lv| / l1 of the top %d: %.3g (at most "
                      "%g: equal to LAPACK's to rounding)", rep->blocks, rep->block,
                      rep->seconds_krylov, k, rep->residual, TG_PCA_EXACT_TOL);
    else
        tg_log_printf(log, "exact PCA: block Krylov on the matrix stopped at residual %.3g "
                      "after %d blocks of %d columns (%.3f s: the top %d eigenvalues lie too "
                      "close together), then LAPACK dsyevr %.3f s", rep->residual, rep->blocks,
                      rep->block, rep->seconds_krylov, k,
                      rep->seconds_dense - rep->seconds_krylov);
}

/* Exact PCA on one rank: K's lower triangle from the GRM's tiles over the autosomes
 * (standardised, mean-imputed: tg_pca's K), then tg_pca_eig. */
static tg_status exact_tiles(const tg_bed *bed, int k, double *vec, double *val, tg_log *log,
                             tg_error *err) {
    const int64_t n = bed->n_samples;
    int64_t *snps = NULL, m, dropped;
    double *K = NULL;
    tg_grm_info info = {0};
    tg_status st = tg_pca_snps(bed, &snps, &m, &dropped, err);
    if (st) return st;
    if (!(K = tg_malloc_n(n, n, sizeof *K, err))) {
        free(snps);
        return TG_ERR_NOMEM;
    }
    const tg_grm_opts o = {.kind = TG_GRM_STANDARDISED, .meanimpute = 1, .snps = snps,
                           .nsnps = m};
    double t0 = tg_now();
    st = tg_grm_lower(bed, &o, K, n, &info, err);
    double tk = tg_now() - t0;
    if (!st) st = log_snps(bed, dropped, m, info.m - info.used, log, err);
    tg_pca_report rep = {0};
    if (!st) st = tg_pca_eig(K, n, k, vec, val, &rep, err);
    if (!st)
        tg_log_printf(log, "exact PCA: relationship matrix %.3f s (GRM tiles: reading %.3f s, "
                      "products %.3f s)", tk, info.read_s, info.products_s);
    if (!st) log_eig(log, &rep, k);
    free(K);
    free(snps);
    return st;
}

/* tg_pca on the genotype products: approx, or exact on several ranks. */
static tg_status products(const tg_pca_opts *po, const tg_bed *bed, double *vec, double *val,
                          tg_log *log, tg_error *err) {
    tg_geno *geno = NULL;
    tg_pca_report rep = {0};
    int64_t dropped;
    double t0 = tg_now();
    tg_status st = tg_pca_geno(bed, &geno, &dropped, err);
    if (st) return st;
    st = log_snps(bed, dropped, tg_geno_m(geno), tg_geno_excluded(geno), log, err);
    if (!st) tg_log_printf(log, "read and prepared genotypes: %.3f s", tg_now() - t0);
    if (!st) st = tg_pca(geno, po, vec, val, &rep, err);
    if (!st && rep.approx)
        tg_log_printf(log, "approximate PCA (%s): block Krylov, %d blocks of %d columns, %lld "
                      "genotype products (%.3f s), dense algebra %.3f s; largest residual "
                      "|Gv - lv| / l1 of the top %d: %.3g%s", po->mode == TG_PCA_APPROX ?
                      "--pca approx" : "more than 5000 samples", rep.blocks, rep.block,
                      (long long)rep.products, rep.seconds_products, rep.seconds_dense, po->k,
                      rep.residual, rep.converged ? "" : " (above the 1e-6 aimed at: the "
                      "basis reached its size limit; the trailing PCs are approximate)");
    else if (!st && tg_runtime_rank() == 0) {
        tg_log_printf(log, "exact PCA: relationship matrix %.3f s (genotype products)",
                      rep.seconds_products);
        log_eig(log, &rep, po->k);
    }
    tg_geno_free(geno);
    return st;
}

static int run(const tg_pca_opts *po, const tg_cli_common *c, tg_log *log) {
    tg_error err = {0};
    tg_bed bed = {0};
    double *vec = NULL, *val = NULL;
    double t0 = tg_now();
    int rc;
    tg_status st = tg_cli_input_open(c, log, &bed, &err);
    if (st) return tg_cli_fail("pca", log, &err);
    if ((rc = tg_cli_ranks_agree("pca", log, c, &bed, NULL, NULL, NULL, 0))) {
        tg_bed_close(&bed);
        return rc;
    }
    const int64_t n = bed.n_samples;
    const int root = tg_runtime_rank() == 0;
    if (po->k > n) {
        tg_error_set(&err, TG_ERR_ARG, "--pca %d: only %lld samples (at most one PC per "
                     "sample)", po->k, (long long)n);
        tg_bed_close(&bed);
        return tg_cli_fail_alike("pca", log, &err);
    }
    if (root && (!(vec = tg_malloc_n(n, po->k, sizeof *vec, &err)) ||
                 !(val = tg_malloc_n(po->k, 1, sizeof *val, &err)))) {
        free(vec);
        tg_bed_close(&bed);
        return tg_cli_fail("pca", log, &err);
    }
    if ((st = tg_runtime_start(&c->rt, &err))) {
        free(val);
        free(vec);
        tg_bed_close(&bed);
        return tg_cli_fail("pca", log, &err);
    }
    tg_cli_trace_start(c);
    tg_cli_progress_on(c);
    tg_cli_log_runtime(log, &c->rt);
    if ((st = check_memory(po, c, &bed, log, &err)) ||
        (st = by_tiles(po, n) ? exact_tiles(&bed, po->k, vec, val, log, &err)
                              : products(po, &bed, vec, val, log, &err)) ||
        (st = tg_cli_trace_stop(c, "pca", log, &err)))
        goto done;
    tg_log_printf(log, "PCA: %.3f s", tg_now() - t0);
    if (root && (st = write_outputs(c->out, &bed, po->k, vec, val, &err))) goto done;
    tg_log_printf(log, "wrote %s.eigenvec%s and %s.eigenval%s", c->out, c->zst ? ".zst" : "",
                  c->out, c->zst ? ".zst" : "");
    tg_cli_log_traffic(log);
done:
    tg_cli_progress_off();
    rc = st ? tg_cli_fail("pca", log, &err) : 0;
    tg_runtime_stop();
    free(val);
    free(vec);
    tg_bed_close(&bed);
    return rc;
}

/* plink2's '--pca [count] [approx]': the words after --pca up to the next option. */
static tg_status pca_words(char **argv, int argc, tg_pca_opts *po, tg_error *err) {
    for (; optind < argc && strncmp(argv[optind], "--", 2); optind++) {
        const char *w = argv[optind];
        int64_t k;
        if (!strcmp(w, "approx")) po->mode = TG_PCA_APPROX;
        else if (!strcmp(w, "meanimpute")) continue; /* what both modes compute */
        else if (!strcmp(w, "exact")) po->mode = TG_PCA_EXACT;
        else if (w[0] >= '0' && w[0] <= '9') {
            tg_status st = tg_cli_int("pca", w, 1, 1 << 20, &k, err);
            if (st) return st;
            po->k = (int)k;
        } else
            return tg_error_set(err, TG_ERR_ARG, "--pca '%s': expected a PC count, 'approx', "
                                "'exact' or 'meanimpute' (plink2's other modifiers, such as "
                                "variant weights, are not supported)", w);
    }
    return TG_OK;
}

int tg_cmd_pca(int argc, char **argv) {
    enum { O_PCA = 1, O_SEED, O_HELP };
    static const struct option opts[] = {
        {"pca", no_argument, 0, O_PCA}, {"seed", required_argument, 0, O_SEED},
        {"help", no_argument, 0, O_HELP}, TG_CLI_INPUT_OPTIONS, TG_CLI_COMMON_OPTIONS,
        {0, 0, 0, 0}};
    tg_cli_common c;
    tg_cli_common_init(&c);
    tg_pca_opts po = tg_pca_defaults();
    tg_error err = {0};
    int64_t seed;
    int o;
    tg_status st = TG_OK;
    opterr = 0;
    while (!st && (o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case O_PCA: st = pca_words(argv, argc, &po, &err); break;
        case O_SEED:
            if (!(st = tg_cli_int("seed", optarg, 0, INT64_MAX / 2, &seed, &err)))
                po.seed = (uint64_t)seed;
            break;
        case O_HELP: fputs(help, stdout); return 0;
        case '?':
        case ':': st = tg_cli_bad_option(argv, &err); break;
        default: st = tg_cli_common_option(&c, o, optarg, argv, &err);
        }
    }
    if (!st) st = tg_cli_no_operand(argc, argv, &err);
    if (!st) st = tg_cli_input_check(&c, &err);
    if (st) return tg_cli_fail_options("pca", &err);
    if ((st = tg_cli_check_outputs(&c, &err))) return tg_cli_fail("pca", NULL, &err);
    tg_log *log = NULL;
    if (tg_log_open(&log, c.out, argc, argv, &err)) return tg_cli_fail("pca", NULL, &err);
    tg_log_set_quiet(log, c.quiet);
    int rc = run(&po, &c, log);
    tg_log_close(log);
    return rc;
}
