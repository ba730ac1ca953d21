/* Harness of the PLINK 2 reader (src/io/pgen.c through pgenlib): an input is a .psam, a .pvar
 * and a .pgen (fuzz.h), opened as `--pfile` opens them (tg_input_open, one reader thread). */
#include <limits.h>
#include <stdio.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const names[] = {"in.psam", "in.pvar", "in.pgen"};
    char path[PATH_MAX], prefix[PATH_MAX];
    tgf_parts in;
    tg_input_opts o;
    tg_bed bed;
    tg_error err;
    tgf_split(data, size, 3, &in);
    for (int k = 0; k < 3; k++) tgf_put(names[k], in.p[k], in.n[k], path);
    snprintf(prefix, sizeof prefix, "%s/in", tgf_dir());
    tg_input_opts_init(&o);
    o.format = TG_INPUT_PGEN;
    o.path = prefix;
    o.threads = 1;
    tg_status st = tg_input_open(&o, &bed, NULL, &err);
    tgf_check(st, &err);
    if (st) return 0;
    tgf_use_bed(&bed);
    tg_bed_close(&bed);
    return 0;
}
