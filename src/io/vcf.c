/* Placeholder until the htslib reader lands: the option exists, the format is refused. */
#include "io/vcf.h"

tg_status tg_vcf_read(const tg_input_opts *o, tg_bed *bed, tg_input_report *rep, tg_error *err) {
    (void)bed, (void)rep;
    return tg_error_set(err, TG_ERR_ARG, "%s: reading VCF/BCF is not built in yet", o->path);
}
