/* gcta_grm PREFIX: reads a GRM in GCTA's binary format, written from its description (GCTA
 * 1.1+, "--make-grm"): PREFIX.grm.id holds one sample per line (FID, IID); PREFIX.grm.bin the
 * lower triangle of the matrix with its diagonal, row by row (row i: entries 1..i), as
 * little-endian 4-byte floats; PREFIX.grm.N.bin the same layout of the number of SNPs used for
 * each pair. Prints "i j N value" per entry (1-based, as plink2 --make-grm-list lists them)
 * and exits 1, saying why on stderr, when the three files do not agree in size. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *open_file(const char *prefix, const char *suffix) {
    char path[4096];
    snprintf(path, sizeof path, "%s%s", prefix, suffix);
    FILE *f = fopen(path, "rb");
    if (!f) fprintf(stderr, "gcta_grm: cannot open %s\n", path);
    return f;
}

static long file_size(FILE *f) {
    fseek(f, 0, SEEK_END);
    long s = ftell(f);
    fseek(f, 0, SEEK_SET);
    return s;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gcta_grm PREFIX\n");
        return 2;
    }
    FILE *id = open_file(argv[1], ".grm.id"), *v = open_file(argv[1], ".grm.bin"),
         *c = open_file(argv[1], ".grm.N.bin");
    if (!id || !v || !c) return 1;
    long n = 0;
    for (int ch; (ch = fgetc(id)) != EOF;) n += ch == '\n';
    long want = n * (n + 1) / 2 * 4;
    if (file_size(v) != want || file_size(c) != want) {
        fprintf(stderr, "gcta_grm: %ld samples in .grm.id: .grm.bin and .grm.N.bin should hold "
                "%ld bytes, they hold %ld and %ld\n", n, want, file_size(v), file_size(c));
        return 1;
    }
    for (long i = 0; i < n; i++)
        for (long j = 0; j <= i; j++) {
            unsigned char b[4], d[4];
            if (fread(b, 1, 4, v) != 4 || fread(d, 1, 4, c) != 4) return 1;
            /* little-endian on any host */
            uint32_t ub = b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24,
                     ud = d[0] | d[1] << 8 | d[2] << 16 | (uint32_t)d[3] << 24;
            float fv, fn;
            memcpy(&fv, &ub, 4);
            memcpy(&fn, &ud, 4);
            printf("%ld\t%ld\t%.0f\t%.9g\n", i + 1, j + 1, fn, fv);
        }
    return 0;
}
