/* CUDA side of lib/stitch: kernel launchers (warp.cu, multiband.cu) and the
 * streaming stitcher (pipeline.cu). C-callable; streams are void*. */
#ifndef GT_KERNELS_STITCH_CU_H
#define GT_KERNELS_STITCH_CU_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_SK_MAX_CAMS 16

typedef struct gt_sk_view {
    long long off;
    int pitch, step, w, h;
} gt_sk_view;

/* Everything a kernel needs about one plane (passed by value). */
typedef struct gt_sk_plane {
    gt_sk_view in, out;
    int ncam;
    long long in_bytes;             /* bytes of one camera frame (camera i at in + i*in_bytes) */
    float P[GT_SK_MAX_CAMS][9];     /* homographies (ray == 0) */
    int ray;                        /* stitched through rays (lib/stitch/stitch_proj.h): */
    const float *tab;               /*   the plane's tables on the device (A, D per column, B, C per row) */
    const float *cam;               /*   ncam x 16 camera parameters on the device */
    float gain[GT_SK_MAX_CAMS];     /* sample * gain + bias (stitch.h) */
    float bias[GT_SK_MAX_CAMS];
    float black;
} gt_sk_plane;

/* Per-camera boxes (inclusive; empty when x0 > x1) of one pyramid level:
 * multiband computes camera i's pyramid only in blocks that meet its box and
 * leaves the rest of its buffers untouched (see pipeline.cu for why the
 * result is exactly that of the full-panorama computation). */
typedef struct gt_sk_boxes {
    int x0[GT_SK_MAX_CAMS], y0[GT_SK_MAX_CAMS], x1[GT_SK_MAX_CAMS], y1[GT_SK_MAX_CAMS];
} gt_sk_boxes;

/* direct (weight == NULL: owner map) or feather (normalised weights ncam x n)
 * for a planar plane: one thread per output sample */
gt_status gt_sk_warp_blend_plane(const gt_sk_plane *pl, const uint8_t *in, const uint8_t *owner,
                                 const float *weight, uint8_t *out, void *stream);
/* the same for a packed 4:2:2 frame, one thread per 4-byte macro-pixel;
 * pl[0..2] the Y, U, V planes, uyvy selects the byte order */
gt_status gt_sk_warp_blend_packed(const gt_sk_plane pl[3], int uyvy, const uint8_t *in,
                                  const uint8_t *const owner[3], const float *const weight[3],
                                  uint8_t *out, void *stream);
/* multiband level 0: dst[i*n + j] = gain_i * sample of camera i, all cameras,
 * written in the 32x8 blocks that meet box i (all blocks: boxes == NULL) */
gt_status gt_sk_warp_float(const gt_sk_plane *pl, const uint8_t *in, const gt_sk_boxes *boxes, float *dst,
                           void *stream);

/* Burt-Adelson on float levels; `count` images of size w x h stored back to
 * back (src stride w*h, dst stride ((w+1)/2)*((h+1)/2)). */
/* Only output tiles of image i that meet dst box i are written (boxes == NULL: all). */
gt_status gt_sk_reduce(const float *src, int w, int h, float *dst, int count, const gt_sk_boxes *boxes,
                       void *stream);
/* dst level (w x h) from coarse level (cw x ch):
 * blend mode (fine_g != NULL): dst[j] = sum_i fmaf order of w_i*(G_i[j] - expand(C_i)[j])
 *   with fine_g, coarse, weights holding ncam images each; coarse == NULL for the top level;
 *   where blocks that do not meet box i (boxes: where weight i is nonzero) skip camera i;
 * collapse mode (fine_g == NULL): dst[j] = dst[j] + expand(coarse)[j]. */
gt_status gt_sk_level(const float *fine_g, const float *coarse, const float *weights, int ncam, float *dst,
                      int w, int h, int cw, int ch, const gt_sk_boxes *boxes, void *stream);
/* The multiband mask pyramids of one plane (mask_pyramid.cu) into m, level k
 * at m + off[k] * ncam (camera i's lw[k] x lh[k] image after it), zeroed by
 * the caller: level 0 one-hot from the owner map (lw[0] x lh[0]), levels
 * 1..levels-1 reduced in the tiles that meet nonzero[k] (where camera i's
 * weight is nonzero) and normalised over the cameras; bit for bit the CPU
 * plan's pyramids. */
gt_status gt_sk_mask_pyramid(const uint8_t *owner, int ncam, int levels, const int *lw, const int *lh,
                             const size_t *off, const gt_sk_boxes *nonzero, float *m, void *stream);
/* store level 0: out sample = owner == 255 ? black : quant(src) */
gt_status gt_sk_store(const gt_sk_plane *pl, const float *src, const uint8_t *owner, uint8_t *out,
                      void *stream);

#ifdef __cplusplus
}
#endif
#endif
