/* Harness of the PLINK 1 reader (src/io/plink.c, tg_bed_open): an input is a .fam, a .bim and a
 * .bed (fuzz.h); an opened fileset is decoded and its statistics taken, under the sanitizers. */
#include <limits.h>
#include <stdio.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const names[] = {"in.fam", "in.bim", "in.bed"};
    char path[PATH_MAX];
    tgf_parts in;
    tg_bed bed;
    tg_error err;
    tgf_split(data, size, 3, &in);
    for (int k = 0; k < 3; k++) tgf_put(names[k], in.p[k], in.n[k], path);
    snprintf(path, sizeof path, "%s/in", tgf_dir());
    tg_status st = tg_bed_open(path, &bed, &err);
    tgf_check(st, &err);
    if (st) return 0;
    tgf_use_bed(&bed);
    tg_bed_close(&bed);
    return 0;
}
