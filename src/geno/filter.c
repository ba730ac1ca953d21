/* Placeholder until the filters land: no selection or QC flag is accepted yet. */
#include "geno/filter.h"


tg_status tg_input_filter(tg_bed *bed, const tg_input_opts *o, tg_input_report *rep,
                          tg_error *err) {
    (void)bed, (void)rep;
    if (tg_input_filters(o))
        return tg_error_set(err, TG_ERR_ARG, "selection and QC flags are not built in yet");
    return TG_OK;
}
