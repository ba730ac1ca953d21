/* Host allocation: memory that GPUs reach by DMA, from StarPU (pinned when it runs CUDA
 * workers). */
#include "runtime/runtime.h"

void *tg_host_alloc(size_t bytes, tg_error *err) {
    void *p = NULL;
    if (starpu_malloc(&p, bytes ? bytes : 1)) {
        tg_error_set(err, TG_ERR_NOMEM, "out of memory: %zu bytes of host memory", bytes);
        return NULL;
    }
    return p;
}

void tg_host_free(void *p) {
    if (p) starpu_free(p);
}
