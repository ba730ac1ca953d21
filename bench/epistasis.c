/* bench/epistasis: speed of the exhaustive epistasis search, in the paper's metric
 * (combinations × samples per second, loading the data and every transfer included) and as
 * tensor TOPS (2^k AND+POPC cells per combination and sample, counted as 2 operations) against
 * the binary tensor-core ceiling measured in the same run on the same GPU (the faster of a
 * register-only mma.sync stream and, on Hopper, wgmma on resident operands); the GEMM alone is
 * timed too, for each tile shape. The data are random genotypes (MAF uniform in [0.05, 0.5],
 * half cases) written to a temporary PLINK fileset. With --plink, the same order-2 search by
 * plink1.9 --fast-epistasis is timed on the same files (CPU comparison).
 * --round-step S runs every S-th round only: a sample of a search too long to run whole (the
 * rate of the whole search without running it). --set-every E scans the set of SNPs 0, E, 2E,
 * ... (tg_epi_opts.set): the rate counts the combinations evaluated, those holding one.
 * --missing F makes each call missing with probability F (the rounds with valid planes).
 * --repeat R runs the search R times on the same files (writing them takes longer than an
 * order-2 search), each timed and printed.
 * usage: bench/epistasis [--order K] [--snps M] [--samples N] [--block B] [--max-rounds R]
 *                        [--round-step S] [--set-every E] [--missing F] [--repeat R]
 *                        [--ncpu N] [--ngpu N] [--sched S] [--gemm] [--plink PATH] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "bench/common.h"
#include "codelets/epistasis.h"
#include "codelets/epistasis_hooks.h"
#include "io/out.h"
#include "runtime/runtime.h"
#include "tilegwas.h"

/* Sets each call of PREFIX.bed missing (code 01) with probability f, in place. */
static void add_missing(const char *prefix, int64_t n, int64_t m, double f) {
    char path[128];
    snprintf(path, sizeof path, "%s.bed", prefix);
    FILE *fp = fopen(path, "r+b");
    if (!fp) die(path, NULL);
    const size_t bps = (size_t)(n + 3) / 4;
    unsigned char *row = malloc(bps);
    if (!row) die("add_missing", NULL);
    tg_rng rng;
    tg_rng_seed(&rng, 2027);
    for (int64_t j = 0; j < m; j++) {
        const long at = 3 + (long)(j * (int64_t)bps);
        if (fseek(fp, at, SEEK_SET) || fread(row, 1, bps, fp) != bps) die(path, NULL);
        for (int64_t i = 0; i < n; i++) {
            const unsigned sh = 2 * (unsigned)(i % 4);
            if (tg_rng_uniform(&rng) < f)
                row[i / 4] = (unsigned char)((row[i / 4] & ~(3u << sh)) | 1u << sh);
        }
        if (fseek(fp, at, SEEK_SET) || fwrite(row, 1, bps, fp) != bps) die(path, NULL);
    }
    if (fclose(fp)) die(path, NULL);
    free(row);
}

int main(int argc, char **argv) {
    tg_blas_restart_if_generic(argv);
    int order = 4, block = 0, gemm = 0, repeat = 1;
    int64_t m = 1024, n = 262144, set_every = 0;
    double missing = 0;
    uint64_t max_rounds = 0, round_step = 0;
    const char *plink = NULL;
    tg_runtime_opts rt = tg_runtime_defaults();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--gemm")) gemm = 1;
        else if (!v) goto usage;
        else if (!strcmp(a, "--order")) order = atoi(argv[++i]);
        else if (!strcmp(a, "--snps")) m = atoll(argv[++i]);
        else if (!strcmp(a, "--samples")) n = atoll(argv[++i]);
        else if (!strcmp(a, "--block")) block = atoi(argv[++i]);
        else if (!strcmp(a, "--max-rounds")) max_rounds = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--round-step")) round_step = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--set-every")) set_every = atoll(argv[++i]);
        else if (!strcmp(a, "--missing")) missing = atof(argv[++i]);
        else if (!strcmp(a, "--repeat")) repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--ncpu")) rt.ncpu = atoi(argv[++i]);
        else if (!strcmp(a, "--ngpu")) rt.ngpu = atoi(argv[++i]);
        else if (!strcmp(a, "--sched")) rt.sched = argv[++i];
        else if (!strcmp(a, "--plink")) plink = argv[++i];
        else goto usage;
    }
    if (order < 2 || order > 4 || m < order || n < 2 || set_every < 0 || !(missing >= 0) ||
        missing >= 1 || repeat < 1)
        goto usage;

    tg_error err = {0};
    if (tg_runtime_start(&rt, &err)) die(NULL, &err);
    char desc[512];
    tg_runtime_describe(desc, sizeof desc);
    printf("# %s\n", desc);
    double ceiling = 0;
#ifdef TG_USE_CUDA
    if (tg_runtime_ngpu() > 0) {
        ceiling = tg_epi_bench_ceiling();
        printf("binary mma ceiling (register-only m16n8k256 and.popc): %.0f TOPS\n", ceiling);
        int64_t wbad = 0;
        double wc = tg_epi_bench_ceiling_wgmma(&wbad);
        if (wc > 0) {
            printf("binary wgmma ceiling (m64n256k256 and.popc, operands resident in shared "
                   "memory): %.0f TOPS%s\n", wc, wbad ? ", WRONG RESULTS" : "");
            if (wc > ceiling && !wbad) ceiling = wc;
        }
        if (gemm) {
            /* the order-4 round at B = 64 with complete data: 4·64² + 4·64 + 1 rows a side */
            int64_t rows = 16641, words = (n / 128 + 3) & ~(int64_t)3;
            for (int sh = 0; tg_epi_bench_gemm_shape(sh); sh++) {
                int64_t bad = 0;
                double t = tg_epi_bench_gemm(rows, rows, words, 5, sh, &bad);
                if (t == 0) {
                    printf("AND+POPC GEMM %s: not on this GPU\n", tg_epi_bench_gemm_shape(sh));
                    continue;
                }
                printf("AND+POPC GEMM %s, %lld × %lld rows × %lld bits × 2 classes: %.0f TOPS "
                       "(%.2f of the ceiling)%s\n",
                       tg_epi_bench_gemm_shape(sh), (long long)rows, (long long)rows,
                       (long long)words * 64, t, t / ceiling, bad ? ", WRONG RESULTS" : "");
            }
        }
    }
#endif

    char dir[] = "/tmp/tg-bench-epi-XXXXXX", prefix[64];
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(prefix, sizeof prefix, "%s/data", dir);
    double t0 = tg_now();
    tg_error werr = {0};
    if (tg_bed_write_random(prefix, n, m, 2026, &werr)) {
        fprintf(stderr, "bench/epistasis: %s\n", werr.msg);
        return 1;
    }
    if (missing > 0) add_missing(prefix, n, m, missing);
    printf("data: %lld SNPs × %lld samples (missing calls: %g) written in %.1f s\n", (long long)m,
           (long long)n, missing, tg_now() - t0);

    tg_bed bed;
    if (tg_bed_open(prefix, &bed, &err)) die(NULL, &err);
    int8_t *cls = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) cls[i] = i < n / 2 ? 0 : 1;
    tg_epi_opts o = tg_epi_defaults();
    o.order = order;
    o.block = block;
    o.max_rounds = max_rounds;
    o.round_step = round_step;
    int64_t *set = malloc((size_t)m * sizeof *set);
    for (int64_t j = 0; set_every && j < m; j += set_every) set[o.nset++] = j;
    if (set_every) {
        o.set = set;
        printf("set: every %lld-th SNP, %lld SNPs\n", (long long)set_every, (long long)o.nset);
    }
    double t = 0; /* the last search's */
    uint64_t combinations = 0;
    for (int r = 0; r < repeat; r++) {
        tg_epi_report rep;
        t0 = tg_now();
        if (tg_epistasis(&bed, cls, &o, &rep, &err)) die(NULL, &err);
        t = tg_now() - t0;
        double cs = (double)rep.combinations * (double)n / t;
        double tops = cs * (1 << order) * 2 / 1e12;
        const int64_t step = round_step > 1 ? (int64_t)round_step : 1;
        char sampled[64] = "";
        if (step > 1)
            snprintf(sampled, sizeof sampled, " (every %lld-th of %lld)", (long long)step,
                     (long long)rep.rounds);
        printf("order %d, %lld SNPs × %lld samples, block %d, %lld rounds%s, "
               "%llu combinations: %.2f s (planes %.2f s, search %.2f s)\n",
               order, (long long)m, (long long)n, rep.block,
               (long long)((rep.rounds + step - 1) / step), sampled,
               (unsigned long long)rep.combinations, t, rep.seconds_planes, rep.seconds_search);
        printf("rate: %.2f tera combinations·samples/s; tensor %.0f TOPS", cs / 1e12, tops);
        if (ceiling > 0) printf(" (%.2f of the binary tensor-core ceiling)", tops / ceiling);
        printf("\nbest: SNPs");
        for (int q = 0; q < order && rep.nhit > 0; q++)
            printf(" %lld", (long long)rep.hits[0].snp[q]);
        printf(", score %.6g\n", rep.nhit > 0 ? rep.hits[0].score : NAN);
        combinations = rep.combinations;
        tg_epi_report_free(&rep);
    }
    tg_bed_close(&bed);
    free(cls);
    free(set);
    tg_runtime_stop();

    if (plink && order == 2) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "%s --bfile %s --fast-epistasis --epi1 1 --threads %d --allow-no-sex --out %s/plink"
                 " >/dev/null 2>&1",
                 plink, prefix, rt.ncpu > 0 ? rt.ncpu : (int)sysconf(_SC_NPROCESSORS_ONLN), dir);
        t0 = tg_now();
        int rc = system(cmd);
        double tp = tg_now() - t0;
        printf("plink1.9 --fast-epistasis (%s): %.2f s, %.3f tera pairs·samples/s; tilegwas is "
               "%.1f× faster\n",
               rc ? "FAILED" : "ok", tp, (double)combinations * n / tp / 1e12, tp / t);
    }
    snprintf(prefix, sizeof prefix, "rm -rf %s", dir);
    if (system(prefix)) fprintf(stderr, "bench/epistasis: could not remove %s\n", dir);
    return 0;
usage:
    fprintf(stderr, "usage: %s [--order K] [--snps M] [--samples N] [--block B] [--max-rounds R] "
                    "[--round-step S] [--set-every E] [--missing F] [--repeat R] [--ncpu N] "
                    "[--ngpu N] [--sched S] [--gemm] [--plink PATH]\n",
            argv[0]);
    return 2;
}
