/* Host allocation: memory that GPUs reach by DMA, from StarPU (pinned when it runs CUDA
 * workers), and large buffers pinned once filled (tg_host_alloc_large). */
#include <stdlib.h>
#include <sys/mman.h>

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

void *tg_host_alloc_large(size_t bytes, tg_error *err) {
    enum { HUGE_PAGE = 2 << 20 };
    const size_t len = bytes ? (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE : HUGE_PAGE;
    void *p = len >= bytes ? aligned_alloc(HUGE_PAGE, len) : NULL;
    if (!p) {
        tg_error_set(err, TG_ERR_NOMEM, "out of memory: %zu bytes of host memory", bytes);
        return NULL;
    }
    (void)madvise(p, len, MADV_HUGEPAGE); /* a request: where huge pages are off, plain pages */
    return p;
}

int tg_host_pin(void *p, size_t bytes) {
    return tg_runtime_ngpu() > 0 && starpu_memory_pin(p, bytes) == 0;
}

void tg_host_unpin(void *p, size_t bytes) { starpu_memory_unpin(p, bytes); }
