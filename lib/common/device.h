/* Where work runs: the CUDA GPU or the CPU reference.  `auto` picks CUDA when
 * a usable GPU is present and falls back to the CPU with a one-line notice.
 * `cuda` without a GPU is GT_ERR_GPU (exit 4). Setting the environment
 * variable GT_NO_GPU=1 hides every GPU (to test the fallback on a GPU host). */
#ifndef GT_DEVICE_H
#define GT_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_device_kind { GT_DEVICE_AUTO = 0, GT_DEVICE_CUDA = 1, GT_DEVICE_CPU = 2 } gt_device_kind;

const char *gt_device_name(gt_device_kind k); /* "auto", "cuda", "cpu" */

/* Resolve `requested` to CUDA or CPU; on CUDA also makes GPU `gpu` current.
 * The notice for the auto fallback goes through gt_notice (silenced by -q). */
gt_status gt_device_choose(gt_device_kind requested, int gpu, gt_device_kind *chosen);

/* Start the CUDA context of GPU `gpu` (the slow part of gt_device_choose,
 * 0.1-0.3 s) and report nothing: for a thread that overlaps it with host
 * work. The current device is per thread, so the main thread still calls
 * gt_device_choose, which then finds the context ready and reports errors. */
void gt_device_prepare(gt_device_kind requested, int gpu);

/* Number of usable CUDA GPUs (0 when built without CUDA, when no driver or GPU
 * is present, or when GT_NO_GPU is set); `why` (may be NULL) gets a reason
 * when the count is 0. */
int gt_gpu_count(char *why, size_t why_len);

/* Free and total memory of the current GPU, in bytes. */
gt_status gt_gpu_mem_info(size_t *free_bytes, size_t *total_bytes);

/* Release libcore's process-wide GPU resources (the default scratch arena);
 * programs call it before exit so that leak checkers see a clean exit. */
void gt_device_shutdown(void);

/* Name of the current GPU, or "" */
void gt_gpu_describe(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
