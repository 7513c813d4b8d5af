/* Large host -> device copies through page-locked staging (CUDA builds).
 * A copy from ordinary (pageable) memory goes through the driver's own
 * staging at a few GB/s (a 1M-Gaussian scene, 236 MB: 35-38 ms on the H100
 * machine); gt_staged_upload copies chunks into two pinned buffers with
 * several host threads while the copy engine uploads the previous chunk. */
#ifndef GT_COMMON_STAGED_COPY_H
#define GT_COMMON_STAGED_COPY_H

#include <stddef.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copy bytes from host src to device dst, queued on stream (a cudaStream_t,
 * not NULL); returns when the copy is complete. Copies below
 * GT_STAGED_MIN_BYTES go straight from src. */
#define GT_STAGED_MIN_BYTES ((size_t)16 << 20)
gt_status gt_staged_upload(void *dst, const void *src, size_t bytes, void *stream);
/* The same for count floats uploaded as IEEE halves (gt_f32_to_f16: round
 * to nearest even), converted by the host threads while they stage: half
 * the bytes through the copy engine. */
gt_status gt_staged_upload_f16(void *dst, const float *src, size_t count, void *stream);

/* memcpy by up to 8 threads in 512 KB pieces (one thread copies a few GB/s,
 * and first touches of fresh pages fault one at a time): for large copies
 * out of pinned buffers. */
void gt_par_memcpy(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
