/* The CUDA runtime behind plain C functions: the one place below every
 * user of the GPU (lib/common, lib/<domain>, kernels/<domain>) that calls
 * the runtime's device, memory, stream and event API. Implemented in
 * gpu_runtime.c (C11 over cuda_runtime_api.h); built and included only in
 * CUDA builds (GT_HAVE_CUDA). Streams and events are passed as void* (a
 * cudaStream_t, a cudaEvent_t), so that this header needs no CUDA header. */
#ifndef GT_GPU_RUNTIME_H
#define GT_GPU_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A CUDA error (a cudaError_t) as a status: GT_OK for success; else
 * GT_ERR_GPU with "CUDA error in <call>: <reason> (file:line)", or the
 * out-of-memory message for cudaErrorMemoryAllocation. */
gt_status gt_cu_status_from(int cuda_error, const char *call, const char *file, int line);
/* Return conv(code, ...) from the enclosing function when `call` gives a
 * nonzero code (every CUDA library's success is 0); GT_CU for the runtime. */
#define GT_CHECK_CALL(conv, call)                                          \
    do {                                                                   \
        int gt_e_ = (int)(call);                                           \
        if (gt_e_ != 0) return conv(gt_e_, #call, __FILE__, __LINE__);     \
    } while (0)
#define GT_CU(call) GT_CHECK_CALL(gt_cu_status_from, call)
/* "<kind> error in <call>: <reason> (file:line)", or the out-of-memory
 * message when oom; GT_ERR_GPU (also for the CUDA libraries' statuses). */
gt_status gt_cu_fail(const char *kind, const char *reason, const char *call, const char *file, int line,
                     bool oom);

int gt_cu_device_count(char *why, size_t why_len);
gt_status gt_cu_set_device(int gpu);
gt_status gt_cu_mem_info(size_t *free_bytes, size_t *total_bytes);
void gt_cu_device_name(char *buf, size_t len);
/* The current GPU's compute mode (cudaComputeMode: 0 Default, 2 Prohibited,
 * 3 Exclusive Process); -1 when it cannot be read. */
int gt_cu_compute_mode(void);
gt_status gt_cu_sync(void);

/* Device memory with accounting: gt_cu_peak_bytes() is the most that was held
 * at once through these calls since the last gt_cu_reset_peak(). On failure
 * *ptr is NULL and the message is the one of gt_gpu_oom_fail
 * (common/device.h), naming `what`, the size and the calling file:line; the
 * test hook GT_FAIL_DEVICE_ALLOC described there can fail any of them. */
gt_status gt_cu_malloc_at(void **ptr, size_t bytes, const char *what, const char *file, int line);
#define gt_cu_malloc(ptr, bytes, what) gt_cu_malloc_at((ptr), (bytes), (what), __FILE__, __LINE__)
void gt_cu_free(void *ptr);
size_t gt_cu_current_bytes(void);
/* What is held now through gt_cu_malloc (bytes, blocks) and
 * gt_cu_pinned_alloc (blocks): all zero at a clean exit. */
void gt_cu_held(size_t *device_bytes, size_t *device_blocks, size_t *pinned_blocks);
size_t gt_cu_peak_bytes(void);
void gt_cu_reset_peak(void);

gt_status gt_cu_memcpy_h2d(void *dst, const void *src, size_t bytes, void *stream);
gt_status gt_cu_memcpy_d2h(void *dst, const void *src, size_t bytes, void *stream);
gt_status gt_cu_memcpy_d2d(void *dst, const void *src, size_t bytes, void *stream);
gt_status gt_cu_memset(void *dst, int value, size_t bytes, void *stream);

gt_status gt_cu_stream_create(void **stream);
void gt_cu_stream_destroy(void *stream);
gt_status gt_cu_stream_sync(void *stream);

/* Page-locked host memory for streaming transfers (counted by the same test
 * hook as device memory). Blocks of 4 MiB and more are huge-page memory
 * (gt_malloc_huge) registered with cudaHostRegister, which page-locks 2 MiB
 * pages instead of 4 KiB ones; smaller blocks, and any the registration
 * refuses, come from cudaMallocHost. gt_cu_pinned_free frees either. */
gt_status gt_cu_pinned_alloc_at(void **ptr, size_t bytes, const char *what, const char *file, int line);
#define gt_cu_pinned_alloc(ptr, bytes, what) gt_cu_pinned_alloc_at((ptr), (bytes), (what), __FILE__, __LINE__)
void gt_cu_pinned_free(void *ptr);
/* Page-lock existing host memory for the GPU's copies (cudaHostRegister):
 * copies from it then run at the bus's speed and asynchronously. On the GPU
 * machine 512 MiB in huge pages registers in 10-14 ms where cudaMallocHost
 * of as much takes 0.27 s. Failure (e.g. a locked-memory limit) is not an
 * error: false, and the memory stays pageable (copies work, slower). */
bool gt_cu_host_register(void *ptr, size_t bytes);
void gt_cu_host_unregister(void *ptr);
/* A copy between a large pageable host array and the device, page-locked
 * for it where it can be (8 MiB and more): from pageable memory the copy
 * runs at ~7 GB/s on the GPU machine, page-locked at ~55 GB/s, and locking
 * costs ~2 ms per 100 MB (twice that in 4 KiB pages). Queued on stream,
 * then synchronised. to_device: src is the host array, else dst is. */
gt_status gt_cu_copy_locked(void *dst, const void *src, size_t bytes, bool to_device, void *stream);

/* Events for ordering host work after queued GPU work (no timing). */
gt_status gt_cu_event_create(void **ev);
void gt_cu_event_destroy(void *ev);
gt_status gt_cu_event_record(void *ev, void *stream);
gt_status gt_cu_event_sync(void *ev);

/* Event timer pair (used by gt_timer): 0 on success. */
int gt_cu_event_pair_start(void *ev[2], void *stream);
double gt_cu_event_pair_stop(void *ev[2], void *stream);

/* A reusable device scratch buffer that only grows (by at least 1.5x), so
 * that hot paths do not cudaMalloc per call: the CUB wrappers of
 * kernels/common/cu_prim.h take one (NULL there: the process-wide arena).
 * Not thread-safe; one per stream of work. Growing frees the old buffer
 * after a device sync, so data in it does not survive a reserve. */
typedef struct gt_arena {
    void *ptr;
    size_t cap;
} gt_arena;

void gt_arena_init(gt_arena *a);
void gt_arena_release(gt_arena *a);
gt_status gt_arena_reserve(gt_arena *a, size_t bytes, void **ptr);
gt_arena *gt_default_arena(void);

#ifdef __cplusplus
}
#endif
#endif
