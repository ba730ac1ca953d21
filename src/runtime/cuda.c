/* Per-worker CUDA library handles: cuBLAS (StarPU's), cuBLASLt and cuSOLVER, and the device
 * attributes CUDA codelets ask for. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/hash.h"
#include "runtime/internal.h"

int tg_cuda_device_count(void) {
    int n = 0;
#ifdef TG_USE_CUDA
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
#endif
    return n;
}

uint64_t tg_cuda_devices_signature(void) {
    uint64_t h = TG_FNV1A_INIT;
#ifdef TG_USE_CUDA
    for (int d = 0, n = tg_cuda_device_count(); d < n; d++) {
        char bus[32] = "";
        cudaDeviceGetPCIBusId(bus, sizeof bus, d);
        h = tg_fnv1a(h, bus, sizeof bus);
    }
#endif
    return h;
}

#ifdef TG_USE_CUDA
/* tg_runtime_prepare's thread: each device's primary context, which StarPU's workers then find
 * made (CUDA's first call and a context take tenths of a second: docs/PERFORMANCE.md) */
static struct {
    pthread_t thread;
    int started, devices; /* devices: the first ones, or all (-1) */
} warm;

static void *warm_devices(void *arg) {
    (void)arg;
    int n = tg_cuda_device_count();
    for (int d = 0; d < n && (warm.devices < 0 || d < warm.devices); d++)
        if (cudaSetDevice(d) == cudaSuccess) (void)cudaFree(0);
    return NULL;
}
#endif

void tg_runtime_prepare(const tg_runtime_opts *opts) {
#ifdef TG_USE_CUDA
    const int ngpu = opts ? opts->ngpu : -1;
    if (warm.started || tg_runtime_started() || ngpu == 0 || getenv("STARPU_WORKERS_CUDAID") ||
        tg_runtime_launcher_rank())
        return;
    warm.devices = ngpu;
    warm.started = !pthread_create(&warm.thread, NULL, warm_devices, NULL);
#else
    (void)opts;
#endif
}

void tg_runtime_prepare_wait(void) {
#ifdef TG_USE_CUDA
    if (warm.started) pthread_join(warm.thread, NULL);
    warm.started = 0;
#endif
}

int tg_cuda_rank_devices(const tg_node *node, int *dev, int max) {
    int ndev = tg_cuda_device_count(), n = 0;
    if (node->nranks == 1 || !node->same_gpus) {
        for (int d = 0; d < ndev && n < max; d++) dev[n++] = d;
        return n;
    }
    if (!ndev || !max) return 0;
    if (node->nranks <= ndev) {
        for (int d = node->index; d < ndev && n < max; d += node->nranks) dev[n++] = d;
        return n;
    }
    /* more ranks than devices: each StarPU would take the whole device's memory as its own and
     * fail its allocations once the other ranks hold theirs, so each sharer gets its part */
    dev[n++] = node->index % ndev;
    int sharers = node->nranks / ndev + (node->index % ndev < node->nranks % ndev);
#ifdef TG_USE_CUDA
    char var[64];
    snprintf(var, sizeof var, "STARPU_LIMIT_CUDA_%d_MEM", dev[0]);
    struct cudaDeviceProp p;
    if (!getenv(var) && !getenv("STARPU_LIMIT_CUDA_MEM") &&
        cudaGetDeviceProperties(&p, dev[0]) == cudaSuccess) {
        char mib[32]; /* 5% of the device left to CUDA's contexts and libraries */
        snprintf(mib, sizeof mib, "%zu", p.totalGlobalMem / 20 * 19 / sharers >> 20);
        setenv(var, mib, 1);
    }
#else
    (void)sharers;
#endif
    return n;
}

#ifdef TG_USE_CUDA
#include <starpu_cublas_v2.h>
/* Library handles of each CUDA worker, created on its thread when the runtime starts (bound to
 * the worker's stream, which StarPU re-creates at every start) and destroyed when it stops. */
static cublasLtHandle_t lt_handles[STARPU_NMAXWORKERS];
static cusolverDnHandle_t solver_handles[STARPU_NMAXWORKERS];

static void handles_create(void *arg) {
    (void)arg;
    int w = starpu_worker_get_id_check();
    if (cublasLtCreate(&lt_handles[w]) != CUBLAS_STATUS_SUCCESS)
        STARPU_ABORT_MSG("cublasLtCreate failed on worker %d", w);
    if (cusolverDnCreate(&solver_handles[w]) != CUSOLVER_STATUS_SUCCESS ||
        cusolverDnSetStream(solver_handles[w], starpu_cuda_get_local_stream()) !=
            CUSOLVER_STATUS_SUCCESS)
        STARPU_ABORT_MSG("cusolverDnCreate failed on worker %d", w);
    /* GEMMs with FP16 output (tile updates, the FP16 panel solve) sum their split-K partials in
     * FP32, never in FP16 */
    if (cublasSetMathMode(starpu_cublas_get_local_handle(),
                          CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) !=
        CUBLAS_STATUS_SUCCESS)
        STARPU_ABORT_MSG("cublasSetMathMode failed on worker %d", w);
}

static void handles_destroy(void *arg) {
    (void)arg;
    int w = starpu_worker_get_id_check();
    cublasLtDestroy(lt_handles[w]);
    cusolverDnDestroy(solver_handles[w]);
}

cublasHandle_t tg_cublas_handle(void) { return starpu_cublas_get_local_handle(); }
cublasLtHandle_t tg_cublaslt_handle(void) { return lt_handles[starpu_worker_get_id_check()]; }
cusolverDnHandle_t tg_cusolver_handle(void) { return solver_handles[starpu_worker_get_id_check()]; }

/* Attributes of the calling worker's device, asked once per worker (each touches its own). */
enum { ATTR_SMEM_OPTIN, ATTR_SMS, NATTR };
static int worker_attr(int which) {
    static const enum cudaDeviceAttr attr[NATTR] = {cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                                    cudaDevAttrMultiProcessorCount};
    static int value[STARPU_NMAXWORKERS][NATTR];
    int w = starpu_worker_get_id_check();
    if (!value[w][which]) {
        int dev;
        TG_CUDA_CHECK(cudaGetDevice(&dev));
        TG_CUDA_CHECK(cudaDeviceGetAttribute(&value[w][which], attr[which], dev));
    }
    return value[w][which];
}
size_t tg_cuda_smem_optin(void) { return (size_t)worker_attr(ATTR_SMEM_OPTIN); }
int tg_cuda_sm_count(void) { return worker_attr(ATTR_SMS); }

void tg_cuda_handles_create(void) {
    if (starpu_cuda_worker_get_count() > 0) {
        starpu_cublas_init();
        starpu_execute_on_each_worker(handles_create, NULL, STARPU_CUDA);
    }
}

void tg_cuda_handles_destroy(void) {
    if (starpu_cuda_worker_get_count() > 0) {
        starpu_execute_on_each_worker(handles_destroy, NULL, STARPU_CUDA);
        starpu_cublas_shutdown();
    }
}
#else
void tg_cuda_handles_create(void) {}
void tg_cuda_handles_destroy(void) {}
#endif
