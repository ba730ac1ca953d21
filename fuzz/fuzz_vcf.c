/* Harness of the VCF/BCF reader (src/io/vcf.c through htslib): an input is one file, VCF or
 * BCF, plain or BGZF (htslib tells them by their bytes), opened as `--vcf` opens it
 * (tg_input_open, one reader thread), again with --id-delim _, and as `--bcf` (one of the two
 * formats is refused at once). */
#include <limits.h>
#include <stdio.h>

#include "fuzz.h"

static void read_as(const char *path, tg_input_format format, char id_delim) {
    tg_input_opts o;
    tg_bed bed;
    tg_error err;
    tg_input_opts_init(&o);
    o.format = format;
    o.path = path;
    o.id_delim = id_delim;
    o.threads = 1;
    tg_status st = tg_input_open(&o, &bed, NULL, &err);
    tgf_check(st, &err);
    if (st) return;
    tgf_use_bed(&bed);
    tg_bed_close(&bed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[PATH_MAX];
    tgf_put("in.vcf", data, size, path);
    read_as(path, TG_INPUT_VCF, 0);
    read_as(path, TG_INPUT_VCF, '_');
    read_as(path, TG_INPUT_BCF, 0);
    return 0;
}
