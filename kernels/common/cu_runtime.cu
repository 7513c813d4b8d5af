// CUDA runtime helpers behind kernels/common/cu_runtime.h, and the CUDA
// status conversion behind cu_check.h (the libraries' are in
// cu_lib_status.cu, so that a program links cuBLAS and cuSPARSE only where
// it calls them: loading them costs a tenth of a second at every start).
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "common/alloc.h"
#include "common/device.h"
#include "common/pin_prefault.h"
#include "kernels/common/cu_check.h"
#include "kernels/common/cu_runtime.h"

gt_status gt_cu_fail(const char *kind, const char *reason, const char *call, const char *file, int line, bool oom)
{
    // an allocation the library or the runtime made for itself: its size is not known here
    if (oom)
        return gt_fail(GT_ERR_GPU, "out of GPU memory: %s could not allocate in %s: %s (%s:%d)", kind, call,
                       reason, gt_src_path(file), line);
    return gt_fail(GT_ERR_GPU, "%s error in %s: %s (%s:%d)", kind, call, reason, gt_src_path(file), line);
}

gt_status gt_cu_status_from(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess) return GT_OK;
    cudaGetLastError(); // clear a sticky non-fatal error so later calls can proceed
    return gt_cu_fail("CUDA", cudaGetErrorString(e), call, file, line,
                    e == cudaErrorMemoryAllocation);
}

extern "C" int gt_cu_device_count(char *why, size_t why_len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        if (why) {
            if (e == cudaErrorInsufficientDriver)
                snprintf(why, why_len, "no NVIDIA driver, or one older than this CUDA runtime");
            else if (e == cudaErrorNoDevice)
                snprintf(why, why_len, "no CUDA device found");
            else
                snprintf(why, why_len, "%s", cudaGetErrorString(e));
        }
        cudaGetLastError();
        return 0;
    }
    if (n == 0 && why) snprintf(why, why_len, "no CUDA device found");
    return n;
}

extern "C" gt_status gt_cu_set_device(int gpu)
{
    GT_CU(cudaSetDevice(gpu));
    GT_CU(cudaFree(nullptr)); // create the context now, so its cost is not charged to a stage
    return GT_OK;
}

extern "C" gt_status gt_cu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    GT_CU(cudaMemGetInfo(free_bytes, total_bytes));
    return GT_OK;
}

extern "C" void gt_cu_device_name(char *buf, size_t len)
{
    int dev = 0;
    cudaDeviceProp p;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
        cudaGetLastError();
        snprintf(buf, len, "unknown GPU");
        return;
    }
    snprintf(buf, len, "%s (sm_%d%d, %d SMs, %.1f GiB)", p.name, p.major, p.minor,
             p.multiProcessorCount, (double)p.totalGlobalMem / (1024.0 * 1024 * 1024));
}

extern "C" int gt_cu_compute_mode(void)
{
    int dev = 0, mode = -1;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, dev) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return mode;
}

extern "C" gt_status gt_cu_sync(void)
{
    GT_CU(cudaDeviceSynchronize());
    return GT_OK;
}

// ---- accounted device memory
static std::mutex mem_mu;
static std::unordered_map<void *, size_t> *mem_sizes;
static size_t mem_cur, mem_peak;

extern "C" gt_status gt_cu_malloc_at(void **ptr, size_t bytes, const char *what, const char *file, int line)
{
    *ptr = nullptr;
    if (bytes == 0) bytes = 1;
    GT_TRY(gt_alloc_hook_check(GT_ALLOC_DEVICE, bytes, what, file, line));
    cudaError_t e = cudaMalloc(ptr, bytes);
    if (e != cudaSuccess) {
        *ptr = nullptr;
        cudaGetLastError();
        if (e != cudaErrorMemoryAllocation) // e.g. a sticky fault of an earlier kernel
            return gt_fail(GT_ERR_GPU, "CUDA error in cudaMalloc of %zu bytes for %s: %s (%s:%d)", bytes,
                           what ? what : "data", cudaGetErrorString(e), gt_src_path(file), line);
        size_t fr = 0, tot = 0;
        char detail[96] = "";
        if (cudaMemGetInfo(&fr, &tot) == cudaSuccess)
            snprintf(detail, sizeof detail, "%.1f MiB free of %.1f MiB on the GPU", fr / 1048576.0,
                     tot / 1048576.0);
        cudaGetLastError();
        return gt_gpu_oom_fail(GT_ALLOC_DEVICE, bytes, what, file, line, detail);
    }
    std::lock_guard<std::mutex> g(mem_mu);
    if (!mem_sizes) mem_sizes = new std::unordered_map<void *, size_t>();
    (*mem_sizes)[*ptr] = bytes;
    mem_cur += bytes;
    if (mem_cur > mem_peak) mem_peak = mem_cur;
    return GT_OK;
}

extern "C" void gt_cu_free(void *ptr)
{
    if (!ptr) return;
    {
        std::lock_guard<std::mutex> g(mem_mu);
        if (mem_sizes) {
            auto it = mem_sizes->find(ptr);
            if (it != mem_sizes->end()) {
                mem_cur -= it->second;
                mem_sizes->erase(it);
            }
        }
    }
    cudaFree(ptr);
}

extern "C" size_t gt_cu_current_bytes(void) { return mem_cur; }
extern "C" size_t gt_cu_peak_bytes(void) { return mem_peak; }
extern "C" void gt_cu_reset_peak(void) { mem_peak = mem_cur; }

static std::atomic<size_t> pinned_live; // blocks from gt_cu_pinned_alloc not yet freed

extern "C" void gt_cu_held(size_t *device_bytes, size_t *device_blocks, size_t *pinned_blocks)
{
    std::lock_guard<std::mutex> g(mem_mu);
    *device_bytes = mem_cur;
    *device_blocks = mem_sizes ? mem_sizes->size() : 0;
    *pinned_blocks = pinned_live.load();
}

extern "C" gt_status gt_cu_memcpy_h2d(void *dst, const void *src, size_t bytes, void *stream)
{
    if (!bytes) return GT_OK;
    GT_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream));
    if (!stream) GT_CU(cudaStreamSynchronize(0));
    return GT_OK;
}

extern "C" gt_status gt_cu_memcpy_d2h(void *dst, const void *src, size_t bytes, void *stream)
{
    if (!bytes) return GT_OK;
    GT_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream));
    if (!stream) GT_CU(cudaStreamSynchronize(0));
    return GT_OK;
}

extern "C" gt_status gt_cu_memcpy_d2d(void *dst, const void *src, size_t bytes, void *stream)
{
    if (!bytes) return GT_OK;
    GT_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
    return GT_OK;
}

extern "C" gt_status gt_cu_memset(void *dst, int value, size_t bytes, void *stream)
{
    if (!bytes) return GT_OK;
    GT_CU(cudaMemsetAsync(dst, value, bytes, (cudaStream_t)stream));
    return GT_OK;
}

extern "C" gt_status gt_cu_stream_create(void **stream)
{
    cudaStream_t s;
    GT_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = (void *)s;
    return GT_OK;
}

extern "C" void gt_cu_stream_destroy(void *stream)
{
    if (stream) cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" gt_status gt_cu_stream_sync(void *stream)
{
    GT_CU(cudaStreamSynchronize((cudaStream_t)stream));
    return GT_OK;
}

// Blocks of 4 MiB and more come from gt_malloc_huge and are registered
// (cudaHostRegister) instead of cudaMallocHost: page-locking 2 MiB pages
// instead of 4 KiB ones. The set holds those, for gt_cu_pinned_free.
static std::mutex pin_mu;
static std::unordered_set<void *> *pin_registered;

static void *pinned_registered(size_t bytes)
{
    if (bytes < ((size_t)4 << 20) || gt_hugepages_off()) return nullptr;
    void *p = gt_pin_take_prefaulted(bytes); // faulted in while the context started
    if (!p) p = gt_malloc_huge(bytes, "pinned host memory");
    if (!p) {
        gt_errmsg_clear(); // the fallback below reports its own failure
        return nullptr;
    }
    if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess) {
        cudaGetLastError();
        free(p);
        return nullptr;
    }
    std::lock_guard<std::mutex> g(pin_mu);
    if (!pin_registered) pin_registered = new std::unordered_set<void *>();
    pin_registered->insert(p);
    return p;
}

extern "C" gt_status gt_cu_pinned_alloc_at(void **ptr, size_t bytes, const char *what, const char *file, int line)
{
    *ptr = nullptr;
    if (bytes == 0) bytes = 1;
    GT_TRY(gt_alloc_hook_check(GT_ALLOC_PINNED, bytes, what, file, line));
    if ((*ptr = pinned_registered(bytes)) != nullptr) {
        pinned_live++;
        return GT_OK;
    }
    cudaError_t e = cudaMallocHost(ptr, bytes);
    if (e != cudaSuccess) {
        *ptr = nullptr;
        cudaGetLastError();
        if (e != cudaErrorMemoryAllocation)
            return gt_fail(GT_ERR_GPU, "CUDA error in cudaMallocHost of %zu bytes for %s: %s (%s:%d)", bytes,
                           what ? what : "data", cudaGetErrorString(e), gt_src_path(file), line);
        return gt_gpu_oom_fail(GT_ALLOC_PINNED, bytes, what, file, line, cudaGetErrorString(e));
    }
    pinned_live++;
    return GT_OK;
}

extern "C" void gt_cu_pinned_free(void *ptr)
{
    if (!ptr) return;
    pinned_live--;
    bool reg = false;
    {
        std::lock_guard<std::mutex> g(pin_mu);
        if (pin_registered && pin_registered->erase(ptr)) reg = true;
    }
    if (reg) {
        if (cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
        free(ptr);
    } else {
        cudaFreeHost(ptr);
    }
}

extern "C" bool gt_cu_host_register(void *ptr, size_t bytes)
{
    if (!ptr || !bytes) return false;
    if (cudaHostRegister(ptr, bytes, cudaHostRegisterDefault) == cudaSuccess) return true;
    cudaGetLastError();
    return false;
}

extern "C" void gt_cu_host_unregister(void *ptr)
{
    if (ptr && cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
}

extern "C" gt_status gt_cu_copy_locked(void *dst, const void *src, size_t bytes, bool to_device, void *stream)
{
    void *host = to_device ? const_cast<void *>(src) : dst;
    cudaStream_t st = (cudaStream_t)stream;
    const bool reg = bytes >= ((size_t)8 << 20) && gt_cu_host_register(host, bytes);
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st);
    cudaError_t e2 = cudaStreamSynchronize(st);
    if (reg) gt_cu_host_unregister(host);
    GT_CU(e);
    GT_CU(e2);
    return GT_OK;
}

extern "C" gt_status gt_cu_event_create(void **ev)
{
    cudaEvent_t e;
    GT_CU(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    *ev = (void *)e;
    return GT_OK;
}

extern "C" void gt_cu_event_destroy(void *ev)
{
    if (ev) cudaEventDestroy((cudaEvent_t)ev);
}

extern "C" gt_status gt_cu_event_record(void *ev, void *stream)
{
    GT_CU(cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)stream));
    return GT_OK;
}

extern "C" gt_status gt_cu_event_sync(void *ev)
{
    GT_CU(cudaEventSynchronize((cudaEvent_t)ev));
    return GT_OK;
}

extern "C" int gt_cu_event_pair_start(void *ev[2], void *stream)
{
    cudaEvent_t a, b;
    if (cudaEventCreate(&a) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    if (cudaEventCreate(&b) != cudaSuccess) {
        cudaGetLastError();
        cudaEventDestroy(a);
        return -1;
    }
    cudaEventRecord(a, (cudaStream_t)stream);
    ev[0] = (void *)a;
    ev[1] = (void *)b;
    return 0;
}

extern "C" double gt_cu_event_pair_stop(void *ev[2], void *stream)
{
    cudaEvent_t a = (cudaEvent_t)ev[0], b = (cudaEvent_t)ev[1];
    float ms = 0.f;
    cudaEventRecord(b, (cudaStream_t)stream);
    if (cudaEventSynchronize(b) != cudaSuccess || cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        cudaGetLastError();
        ms = -1.f;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return (double)ms;
}
