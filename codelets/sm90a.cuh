// Hopper's sm_90a code (wgmma) and the question whether the current device runs it; the opt-in
// to a kernel's dynamic shared memory. Everything is in an unnamed namespace: each CUDA file
// that includes it compiles its own copy.
#ifndef TG_CODELETS_SM90A_CUH
#define TG_CODELETS_SM90A_CUH
#include <atomic>

#include "runtime/cuda.h"

// Device code for sm_90a only (the other targets' copies of such kernels trap).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TG_SM90A 1
#else
#define TG_SM90A 0
#endif

namespace {

// The current device, for per-device caches (64 entries).
int device_index() {
    int dev;
    TG_CUDA_CHECK(cudaGetDevice(&dev));
    if (dev >= 64) STARPU_ABORT_MSG("CUDA device %d; at most 64 are supported", dev);
    return dev;
}

// cudaFuncSetAttribute for a kernel's dynamic shared memory, once per device, whichever thread
// launches on it.
template <class K> void smem_attribute(K *kern, int bytes, std::atomic<uint64_t> &done) {
    const uint64_t bit = 1ull << device_index();
    if (done.load() & bit) return;
    TG_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    done |= bit;
}

__device__ __forceinline__ unsigned smem_u32(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

#if TG_SM90A
// mbarriers in shared memory (addresses from smem_u32): a stage's copies landed, or its readers
// are done with it
__device__ __forceinline__ void mbar_init(unsigned bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mbar_wait(unsigned bar, int parity) {
    asm volatile("{\n.reg .pred p;\nW_%=:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra W_%=;\n}\n" ::"r"(bar), "r"(parity)
                 : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_expect(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
// @p bytes (a multiple of 16, both addresses 16-byte aligned) global → shared by the TMA unit;
// completes that many of `bar`'s transaction bytes.
__device__ __forceinline__ void bulk_load(unsigned dst, const void *src, unsigned bytes,
                                          unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];\n" ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
#endif

__device__ int sm90a_flag;
__global__ void sm90a_probe() { sm90a_flag = TG_SM90A; }

// Whether the current device runs the sm_90a code: compute capability 9.0 is not enough, since
// the driver may have JIT-compiled the compute_90 PTX instead (CUDA_FORCE_PTX_JIT), where the
// wgmma kernels trap. Asked by running a probe, once per device (on the legacy stream, which
// StarPU's non-blocking worker streams do not wait for; no allocation, so no device-wide sync).
bool wgmma_ok() {
    static std::atomic<int> known[64]; // 0 unknown, 1 no, 2 yes
    const int dev = device_index();
    std::atomic<int> &k = known[dev];
    if (!k.load()) {
        int major, flag = 0;
        TG_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
        if (major == 9) {
            sm90a_probe<<<1, 1>>>();
            TG_CUDA_CHECK(cudaGetLastError());
            TG_CUDA_CHECK(cudaMemcpyFromSymbol(&flag, sm90a_flag, sizeof flag));
        }
        k = flag ? 2 : 1;
    }
    return k.load() == 2;
}

} // namespace
#endif
