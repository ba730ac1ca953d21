/* The layer above the runtime and the codelets: the runtime's start registers the codelets once
 * StarPU runs, with the scheduling buckets the codelet families describe, so that neither the
 * runtime calls into the codelets nor the codelets start the runtime. */
#include "codelets/codelets.h"
#include "runtime/runtime.h"

tg_status tg_runtime_start(const tg_runtime_opts *opts, tg_error *err) {
    tg_status st = tg_runtime_open(opts, &tg_codelet_buckets, err);
    if (st) return st;
    tg_codelets_init();
    return TG_OK;
}

void tg_runtime_stop(void) { tg_runtime_close(); }
