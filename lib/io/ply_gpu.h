/* A triangle mesh in GPU memory as a source for gt_ply_write_trisrc (io/ply.h),
 * downloaded piece by piece while the writer formats the piece before
 * (common/gpu_fetch.h). CUDA builds only. */
#ifndef GT_IO_PLY_GPU_H
#define GT_IO_PLY_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "common/gpu_fetch.h"
#include "io/ply.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A fetcher (*f, the caller destroys it after the write) whose phase 0 is the
 * vertices (d_xyz, and d_nrm when not NULL: nvert * 3 floats each) and
 * phase 1 the triangles (ntri * 3 ints), in pieces of a million rows
 * (GT_PLY_PIECE_ROWS overrides that: tests), and *src set up to read it. The
 * arrays are complete after the work queued on `after` (a stream; NULL: the
 * legacy stream). */
gt_status gt_ply_trisrc_gpu(const float *d_xyz, const float *d_nrm, size_t nvert, const int32_t *d_tris,
                            size_t ntri, void *after, gt_cu_fetch **f, gt_ply_trisrc *src);

#ifdef __cplusplus
}
#endif
#endif
