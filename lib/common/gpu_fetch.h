/* Piecewise downloads from device arrays into pinned host buffers, double
 * buffered: while the caller works on piece k (formats and writes it), the
 * copy of piece k+1 runs on the fetcher's stream. The pieces are read in
 * phases (a mesh: the vertex arrays, then the triangle array), each over
 * 1..3 device arrays of the same row count; gt_cu_fetch_get asks for rows
 * [i0, i0+n) of one phase, in increasing order, and the fetcher guesses the
 * next piece as the n rows after (the next phase's first rows at a phase's
 * end). A piece's host pointers stay valid until the next gt_cu_fetch_get.
 * Pinned memory comes from gt_cu_pinned_alloc (counted, and failed by the
 * test hook, like every device allocation). Implemented in gpu_fetch.c, over
 * the CUDA runtime (CUDA builds only); io/ply_gpu.h makes a PLY writer's
 * source of a device mesh with it. */
#ifndef GT_GPU_FETCH_H
#define GT_GPU_FETCH_H

#include <stddef.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_CU_FETCH_MAX_PHASES 4
#define GT_CU_FETCH_MAX_ARRAYS 3

typedef struct gt_cu_fetch_phase {
    int narr;
    const void *d[GT_CU_FETCH_MAX_ARRAYS]; /* device arrays (NULL: not fetched) */
    size_t row_bytes[GT_CU_FETCH_MAX_ARRAYS];
    size_t rows;
} gt_cu_fetch_phase;

typedef struct gt_cu_fetch gt_cu_fetch;

/* Pieces of at most piece_rows rows (buffers: 2 per array of the widest
 * phase, piece_rows * row_bytes each). The first piece's copy starts here,
 * on a stream of the fetcher's own, after the work already queued on
 * `after` (the stream that made the arrays; NULL: the legacy stream). */
gt_status gt_cu_fetch_create(const gt_cu_fetch_phase *phases, int nphases, size_t piece_rows, void *after,
                             gt_cu_fetch **out);
/* Host copies of rows [i0, i0+n) of phase ph's arrays in host[0..narr) (NULL
 * for an array given as NULL); n <= piece_rows. Waits for the copy. */
gt_status gt_cu_fetch_get(gt_cu_fetch *f, int ph, size_t i0, size_t n, void **host);
/* Milliseconds the callers of gt_cu_fetch_get waited for copies, and the
 * bytes copied. */
double gt_cu_fetch_wait_ms(const gt_cu_fetch *f);
size_t gt_cu_fetch_bytes(const gt_cu_fetch *f);
/* Waits for copies still running, frees the buffers. */
void gt_cu_fetch_destroy(gt_cu_fetch *f);

#ifdef __cplusplus
}
#endif
#endif
