/* Harness of plink2's selection files (src/io/select.c, src/io/snpset.c): an input is a .fam and
 * a .bim (fuzz.h, tgf_fileset), a --keep file, an --extract file, an --extract range file, an
 * epistasis --set file and a --chr argument. Each is read by its reader, then the fileset is
 * opened again with all of them as a command's selection (tg_input_open). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "io/select.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char keep[PATH_MAX], extract[PATH_MAX], range[PATH_MAX], set[PATH_MAX], chr[256];
    tgf_parts in;
    tg_bed bed, sel;
    tg_error err;
    tg_status st;
    tgf_split(data, size, 7, &in);
    if (tgf_fileset(&in, 0, 1, &bed)) return 0;
    tgf_put("in.keep", in.p[2], in.n[2], keep);
    tgf_put("in.extract", in.p[3], in.n[3], extract);
    tgf_put("in.range", in.p[4], in.n[4], range);
    tgf_put("in.set", in.p[5], in.n[5], set);
    const size_t nc = in.n[6] < sizeof chr - 1 ? in.n[6] : sizeof chr - 1;
    if (nc) memcpy(chr, in.p[6], nc);
    chr[nc] = '\0';
    chr[strcspn(chr, "\n")] = '\0';
    uint8_t *hit = calloc((size_t)(bed.n_samples + bed.n_snps), 1);
    if (!hit) abort();
    tgf_check(tg_sample_list_mark(keep, &bed, hit, &err), &err);
    tgf_check(tg_snp_ids_mark(extract, &bed, hit + bed.n_samples, &err), &err);
    tgf_check(tg_snp_ranges_mark(range, &bed, hit + bed.n_samples, &err), &err);
    for (int64_t k = 0; k < bed.n_samples + bed.n_snps; k++)
        if (hit[k] > 1) abort();
    free(hit);
    int64_t *idx = NULL, n = 0;
    if (!(st = tg_snp_set_read(set, &bed, &idx, &n, &err)))
        for (int64_t k = 0; k < n; k++)
            if (idx[k] < 0 || idx[k] >= bed.n_snps) abort();
    tgf_check(st, &err);
    free(idx);
    tg_input_opts o;
    tg_input_opts_init(&o);
    o.path = bed.prefix;
    o.keep = in.n[2] ? keep : NULL;
    o.extract = in.n[3] ? extract : NULL;
    o.exclude = in.n[4] ? range : NULL; /* --exclude range */
    o.exclude_range = 1;
    o.chr = *chr ? chr : NULL;
    if (!(st = tg_input_open(&o, &sel, NULL, &err))) {
        if (sel.n_samples > bed.n_samples || sel.n_snps > bed.n_snps) abort();
        tgf_use_bed(&sel);
        tg_bed_close(&sel);
    }
    tgf_check(st, &err);
    tg_bed_close(&bed);
    return 0;
}
