/* The CUDA runtime behind plain C functions (gpu_runtime.h): device query
 * and choice, accounted device memory, copies, streams, pinned host memory,
 * events, the scratch arena, and CUDA errors as statuses. C11 over the
 * runtime's C API; built in CUDA builds only. */
#include "common/gpu_runtime.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/device.h"
#include "common/pin_prefault.h"


gt_status gt_cu_fail(const char *kind, const char *reason, const char *call, const char *file, int line, bool oom)
{
    /* an allocation the library or the runtime made for itself: its size is not known here */
    if (oom)
        return gt_fail(GT_ERR_GPU, "out of GPU memory: %s could not allocate in %s: %s (%s:%d)", kind, call,
                       reason, gt_src_path(file), line);
    return gt_fail(GT_ERR_GPU, "%s error in %s: %s (%s:%d)", kind, call, reason, gt_src_path(file), line);
}

gt_status gt_cu_status_from(int cuda_error, const char *call, const char *file, int line)
{
    cudaError_t e = (cudaError_t)cuda_error;
    if (e == cudaSuccess) return GT_OK;
    cudaGetLastError(); /* clear a sticky non-fatal error so later calls can proceed */
    return gt_cu_fail("CUDA", cudaGetErrorString(e), call, file, line, e == cudaErrorMemoryAllocation);
}

int gt_cu_device_count(char *why, size_t why_len)
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

gt_status gt_cu_set_device(int gpu)
{
    GT_CU(cudaSetDevice(gpu));
    GT_CU(cudaFree(NULL)); /* create the context now, so its cost is not charged to a stage */
    return GT_OK;
}

gt_status gt_cu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    GT_CU(cudaMemGetInfo(free_bytes, total_bytes));
    return GT_OK;
}

void gt_cu_device_name(char *buf, size_t len)
{
    int dev = 0;
    struct cudaDeviceProp p;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
        cudaGetLastError();
        snprintf(buf, len, "unknown GPU");
        return;
    }
    snprintf(buf, len, "%s (sm_%d%d, %d SMs, %.1f GiB)", p.name, p.major, p.minor, p.multiProcessorCount,
             (double)p.totalGlobalMem / (1024.0 * 1024 * 1024));
}

int gt_cu_compute_mode(void)
{
    int dev = 0, mode = -1;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, dev) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return mode;
}

gt_status gt_cu_sync(void)
{
    GT_CU(cudaDeviceSynchronize());
    return GT_OK;
}

/* ---- pointer -> size, for the accounting (open addressing, linear probing) */

typedef struct {
    uintptr_t *key; /* 0: empty; 1: removed */
    size_t *val;
    size_t cap, live, used; /* used: live + removed */
} ptr_map;

static size_t slot_of(uintptr_t k, size_t cap)
{
    k ^= k >> 33; /* pointers are aligned: mix the high bits into the low */
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static bool map_grow(ptr_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    while (m->live * 2 >= cap) cap *= 2;
    uintptr_t *key = calloc(cap, sizeof *key);
    size_t *val = malloc(cap * sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i] > 1) {
            size_t s = slot_of(m->key[i], cap);
            while (key[s]) s = (s + 1) & (cap - 1);
            key[s] = m->key[i];
            val[s] = m->val[i];
        }
    free(m->key);
    free(m->val);
    m->key = key;
    m->val = val;
    m->cap = cap;
    m->used = m->live;
    return true;
}

/* false when out of memory (the pointer is then not recorded) */
static bool map_put(ptr_map *m, const void *p, size_t v)
{
    if ((m->used + 1) * 4 >= m->cap * 3 && !map_grow(m)) return false;
    size_t s = slot_of((uintptr_t)p, m->cap);
    while (m->key[s] > 1) s = (s + 1) & (m->cap - 1);
    if (m->key[s] == 0) m->used++;
    m->key[s] = (uintptr_t)p;
    m->val[s] = v;
    m->live++;
    return true;
}

/* removes p; false when it is not there */
static bool map_take(ptr_map *m, const void *p, size_t *v)
{
    if (!m->cap) return false;
    for (size_t s = slot_of((uintptr_t)p, m->cap); m->key[s]; s = (s + 1) & (m->cap - 1))
        if (m->key[s] == (uintptr_t)p) {
            *v = m->val[s];
            m->key[s] = 1;
            m->live--;
            return true;
        }
    return false;
}

/* ---- accounted device memory */
static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static ptr_map mem_sizes;
static size_t mem_cur, mem_peak;

gt_status gt_cu_malloc_at(void **ptr, size_t bytes, const char *what, const char *file, int line)
{
    *ptr = NULL;
    if (bytes == 0) bytes = 1;
    GT_TRY(gt_alloc_hook_check(GT_ALLOC_DEVICE, bytes, what, file, line));
    cudaError_t e = cudaMalloc(ptr, bytes);
    if (e != cudaSuccess) {
        *ptr = NULL;
        cudaGetLastError();
        if (e != cudaErrorMemoryAllocation) /* e.g. a sticky fault of an earlier kernel */
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
    pthread_mutex_lock(&mem_mu);
    bool ok = map_put(&mem_sizes, *ptr, bytes);
    if (ok) {
        mem_cur += bytes;
        if (mem_cur > mem_peak) mem_peak = mem_cur;
    }
    pthread_mutex_unlock(&mem_mu);
    if (!ok) {
        cudaFree(*ptr);
        *ptr = NULL;
        return gt_fail(GT_ERR_RUNTIME, "out of host memory recording a GPU allocation for %s (%s:%d)",
                       what ? what : "data", gt_src_path(file), line);
    }
    return GT_OK;
}

void gt_cu_free(void *ptr)
{
    if (!ptr) return;
    size_t bytes;
    pthread_mutex_lock(&mem_mu);
    if (map_take(&mem_sizes, ptr, &bytes)) mem_cur -= bytes;
    pthread_mutex_unlock(&mem_mu);
    cudaFree(ptr);
}

size_t gt_cu_current_bytes(void)
{
    pthread_mutex_lock(&mem_mu);
    size_t b = mem_cur;
    pthread_mutex_unlock(&mem_mu);
    return b;
}

size_t gt_cu_peak_bytes(void)
{
    pthread_mutex_lock(&mem_mu);
    size_t b = mem_peak;
    pthread_mutex_unlock(&mem_mu);
    return b;
}

void gt_cu_reset_peak(void)
{
    pthread_mutex_lock(&mem_mu);
    mem_peak = mem_cur;
    pthread_mutex_unlock(&mem_mu);
}

static atomic_size_t pinned_live; /* blocks from gt_cu_pinned_alloc not yet freed */

void gt_cu_held(size_t *device_bytes, size_t *device_blocks, size_t *pinned_blocks)
{
    pthread_mutex_lock(&mem_mu);
    *device_bytes = mem_cur;
    *device_blocks = mem_sizes.live;
    pthread_mutex_unlock(&mem_mu);
    *pinned_blocks = atomic_load(&pinned_live);
}

/* ---- copies, streams */

gt_status gt_cu_memcpy_h2d(void *dst, const void *src, size_t bytes, void *stream)
{
    if (!bytes) return GT_OK;
    GT_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream));
    if (!stream) GT_CU(cudaStreamSynchronize(0));
    return GT_OK;
}

gt_status gt_cu_memcpy_d2h(void *dst, const void *src, size_t bytes, void *stream)
{
    if (!bytes) return GT_OK;
    GT_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream));
    if (!stream) GT_CU(cudaStreamSynchronize(0));
    return GT_OK;
}

gt_status gt_cu_memcpy_d2d(void *dst, const void *src, size_t bytes, void *stream)
{
    if (!bytes) return GT_OK;
    GT_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
    return GT_OK;
}

gt_status gt_cu_memset(void *dst, int value, size_t bytes, void *stream)
{
    if (!bytes) return GT_OK;
    GT_CU(cudaMemsetAsync(dst, value, bytes, (cudaStream_t)stream));
    return GT_OK;
}

gt_status gt_cu_stream_create(void **stream)
{
    cudaStream_t s;
    GT_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = (void *)s;
    return GT_OK;
}

void gt_cu_stream_destroy(void *stream)
{
    if (stream) cudaStreamDestroy((cudaStream_t)stream);
}

gt_status gt_cu_stream_sync(void *stream)
{
    GT_CU(cudaStreamSynchronize((cudaStream_t)stream));
    return GT_OK;
}

/* ---- pinned host memory
 * Blocks of 4 MiB and more come from gt_malloc_huge and are registered
 * (cudaHostRegister) instead of cudaMallocHost: page-locking 2 MiB pages
 * instead of 4 KiB ones. The map holds those, for gt_cu_pinned_free. */
static pthread_mutex_t pin_mu = PTHREAD_MUTEX_INITIALIZER;
static ptr_map pin_registered;

static void *pinned_registered(size_t bytes)
{
    if (bytes < ((size_t)4 << 20) || gt_hugepages_off()) return NULL;
    void *p = gt_pin_take_prefaulted(bytes); /* faulted in while the context started */
    if (!p) p = gt_malloc_huge(bytes, "pinned host memory");
    if (!p) {
        gt_errmsg_clear(); /* the fallback below reports its own failure */
        return NULL;
    }
    if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess) {
        cudaGetLastError();
        free(p);
        return NULL;
    }
    pthread_mutex_lock(&pin_mu);
    bool ok = map_put(&pin_registered, p, bytes);
    pthread_mutex_unlock(&pin_mu);
    if (!ok) {
        cudaHostUnregister(p);
        free(p);
        return NULL;
    }
    return p;
}

gt_status gt_cu_pinned_alloc_at(void **ptr, size_t bytes, const char *what, const char *file, int line)
{
    *ptr = NULL;
    if (bytes == 0) bytes = 1;
    GT_TRY(gt_alloc_hook_check(GT_ALLOC_PINNED, bytes, what, file, line));
    if ((*ptr = pinned_registered(bytes)) != NULL) {
        atomic_fetch_add(&pinned_live, 1);
        return GT_OK;
    }
    cudaError_t e = cudaMallocHost(ptr, bytes);
    if (e != cudaSuccess) {
        *ptr = NULL;
        cudaGetLastError();
        if (e != cudaErrorMemoryAllocation)
            return gt_fail(GT_ERR_GPU, "CUDA error in cudaMallocHost of %zu bytes for %s: %s (%s:%d)", bytes,
                           what ? what : "data", cudaGetErrorString(e), gt_src_path(file), line);
        return gt_gpu_oom_fail(GT_ALLOC_PINNED, bytes, what, file, line, cudaGetErrorString(e));
    }
    atomic_fetch_add(&pinned_live, 1);
    return GT_OK;
}

void gt_cu_pinned_free(void *ptr)
{
    if (!ptr) return;
    atomic_fetch_sub(&pinned_live, 1);
    size_t bytes;
    pthread_mutex_lock(&pin_mu);
    bool reg = map_take(&pin_registered, ptr, &bytes);
    pthread_mutex_unlock(&pin_mu);
    if (reg) {
        if (cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
        free(ptr);
    } else {
        cudaFreeHost(ptr);
    }
}

bool gt_cu_host_register(void *ptr, size_t bytes)
{
    if (!ptr || !bytes) return false;
    if (cudaHostRegister(ptr, bytes, cudaHostRegisterDefault) == cudaSuccess) return true;
    cudaGetLastError();
    return false;
}

void gt_cu_host_unregister(void *ptr)
{
    if (ptr && cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
}

gt_status gt_cu_copy_locked(void *dst, const void *src, size_t bytes, bool to_device, void *stream)
{
    void *host = to_device ? (void *)(uintptr_t)src : dst;
    cudaStream_t st = (cudaStream_t)stream;
    const bool reg = bytes >= ((size_t)8 << 20) && gt_cu_host_register(host, bytes);
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st);
    cudaError_t e2 = cudaStreamSynchronize(st);
    if (reg) gt_cu_host_unregister(host);
    GT_CU(e);
    GT_CU(e2);
    return GT_OK;
}

/* ---- events */

gt_status gt_cu_event_create(void **ev)
{
    cudaEvent_t e;
    GT_CU(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    *ev = (void *)e;
    return GT_OK;
}

void gt_cu_event_destroy(void *ev)
{
    if (ev) cudaEventDestroy((cudaEvent_t)ev);
}

gt_status gt_cu_event_record(void *ev, void *stream)
{
    GT_CU(cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)stream));
    return GT_OK;
}

gt_status gt_cu_event_sync(void *ev)
{
    GT_CU(cudaEventSynchronize((cudaEvent_t)ev));
    return GT_OK;
}

int gt_cu_event_pair_start(void *ev[2], void *stream)
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

double gt_cu_event_pair_stop(void *ev[2], void *stream)
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

/* ---- scratch arena */

void gt_arena_init(gt_arena *a)
{
    a->ptr = NULL;
    a->cap = 0;
}

void gt_arena_release(gt_arena *a)
{
    if (a->ptr) {
        cudaDeviceSynchronize();
        gt_cu_free(a->ptr);
    }
    a->ptr = NULL;
    a->cap = 0;
}

gt_status gt_arena_reserve(gt_arena *a, size_t bytes, void **ptr)
{
    if (bytes <= a->cap && a->ptr) {
        *ptr = a->ptr;
        return GT_OK;
    }
    /* grow by at least 1.5x so that a sequence of slightly larger requests
     * does not reallocate every time */
    size_t want = bytes < a->cap + a->cap / 2 ? a->cap + a->cap / 2 : bytes;
    if (want < 4096) want = 4096;
    if (a->ptr) {
        GT_CU(cudaDeviceSynchronize()); /* work queued on the old buffer must finish */
        gt_cu_free(a->ptr);
        a->ptr = NULL;
        a->cap = 0;
    }
    GT_TRY(gt_cu_malloc(&a->ptr, want, "scratch arena"));
    a->cap = want;
    *ptr = a->ptr;
    return GT_OK;
}

static gt_arena default_arena;

gt_arena *gt_default_arena(void)
{
    return &default_arena;
}
