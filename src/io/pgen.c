/* Placeholder until the pgenlib reader lands: the option exists, the format is refused. */
#include "io/pgen.h"

tg_status tg_pgen_read(const tg_input_opts *o, tg_bed *bed, tg_input_report *rep, tg_error *err) {
    (void)bed, (void)rep;
    return tg_error_set(err, TG_ERR_ARG, "%s: reading .pgen is not built in yet", o->path);
}
