/* bench/filter: the cost of selection and QC (tg_input_open with plink2's flags) against reading
 * the input: opening the .bed/.bim/.fam alone, and opening it plus one pass over every genotype
 * byte (tg_bed_stats, the per-SNP summary `tilegwas info` prints). Best of R runs, warm cache.
 * usage: bench/filter PREFIX [--keep F] [--mind X] [--geno X] [--hwe X] [--maf X] [--reps R] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/out.h"
#include "tilegwas.h"

static double best_of(int reps, tg_input_opts *o, int stats, tg_error *err) {
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        tg_bed b;
        double t0 = tg_now();
        if (tg_input_open(o, &b, NULL, err)) return NAN;
        if (stats) {
            tg_snp_stats *s = malloc((size_t)b.n_snps * sizeof *s);
            tg_bed_stats(&b, s);
            free(s);
        }
        double t = tg_now() - t0;
        tg_bed_close(&b);
        if (t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench/filter PREFIX [--keep F] [--mind X] [--geno X] [--hwe X] "
                        "[--maf X] [--reps R]\n");
        return 2;
    }
    tg_input_opts o, plain;
    tg_input_opts_init(&o);
    o.path = argv[1];
    int reps = 5;
    for (int k = 2; k + 1 < argc; k += 2) {
        const char *f = argv[k], *v = argv[k + 1];
        if (!strcmp(f, "--keep")) o.keep = v;
        else if (!strcmp(f, "--mind")) o.mind = atof(v);
        else if (!strcmp(f, "--geno")) o.geno = atof(v);
        else if (!strcmp(f, "--hwe")) o.hwe = atof(v);
        else if (!strcmp(f, "--maf")) o.maf = atof(v);
        else if (!strcmp(f, "--reps")) reps = atoi(v);
        else return fprintf(stderr, "unknown option %s\n", f), 2;
    }
    plain = o;
    tg_input_opts_init(&plain);
    plain.path = o.path;
    tg_error err;
    double open = best_of(reps, &plain, 0, &err), read = best_of(reps, &plain, 1, &err);
    double filt = best_of(reps, &o, 0, &err);
    if (isnan(open) || isnan(read) || isnan(filt)) return fprintf(stderr, "%s\n", err.msg), 1;
    printf("open %.3f s\topen+read every byte %.3f s\topen+selection and QC %.3f s (QC alone "
           "%.3f s)\n", open, read, filt, filt - open);
    return 0;
}
