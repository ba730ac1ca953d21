/* Host allocation: memory that GPUs reach by DMA, from StarPU (pinned when it runs CUDA
 * workers), large buffers pinned once filled (tg_host_alloc_large), and the staging buffer. */
#include <pthread.h>
#include <stdlib.h>

#include "base/mem.h"
#include "runtime/internal.h"

/* The largest staging buffer kept: pinned memory is taken from the host's for good. */
#define STAGE_MAX ((size_t)256 << 20)

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
    tg_advise_huge(p, len);
    return p;
}

int tg_host_pin(void *p, size_t bytes) {
    return tg_runtime_ngpu() > 0 && starpu_memory_pin(p, bytes) == 0;
}

void tg_host_unpin(void *p, size_t bytes) { starpu_memory_unpin(p, bytes); }

int tg_host_pinned(const void *p) {
#ifdef TG_USE_CUDA
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError(); /* not a pointer CUDA knows: pageable */
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
#else
    (void)p;
    return 0;
#endif
}

static struct {
    pthread_mutex_t lock;
    void *p;
    size_t bytes;
    int taken;
} stage = {.lock = PTHREAD_MUTEX_INITIALIZER};

void *tg_host_stage_take(size_t bytes) {
    if (tg_runtime_ngpu() == 0 || bytes > STAGE_MAX) return NULL;
    void *p = NULL;
    pthread_mutex_lock(&stage.lock);
    if (!stage.taken) {
        if (stage.bytes < bytes) {
            tg_host_free(stage.p);
            tg_error err;
            stage.p = tg_host_alloc(bytes, &err);
            stage.bytes = stage.p ? bytes : 0;
        }
        if ((p = stage.p)) stage.taken = 1;
    }
    pthread_mutex_unlock(&stage.lock);
    return p;
}

void tg_host_stage_give(void) {
    pthread_mutex_lock(&stage.lock);
    stage.taken = 0;
    pthread_mutex_unlock(&stage.lock);
}

void tg_host_stage_release(void) {
    pthread_mutex_lock(&stage.lock);
    tg_host_free(stage.p);
    stage.p = NULL;
    stage.bytes = 0;
    pthread_mutex_unlock(&stage.lock);
}
