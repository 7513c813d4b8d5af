/* CUDA 3DGS rasterizer (gs_raster.cu) behind a C interface for lib/gs. */
#ifndef GT_KERNELS_GS_CUDA_H
#define GT_KERNELS_GS_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/timer.h"
#include "gs/gs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_gs_cu gt_gs_cu;


/* Upload a scene: pos n*3, scale n*3 (linear), rot n*4 (w x y z, unit),
 * opacity n, sh n*sh_k*3. The 3-D covariances (scale * modifier) are
 * computed once here. exact_binning: duplicate into the tiles the alpha >=
 * 1/255 ellipse touches (else every tile of the reference's bounding
 * square; same image, more pairs). sh_half: keep the SH coefficients as
 * IEEE halves on the device (rounded to nearest; half the bytes uploaded
 * and read per frame, colours within ~1e-3 of the float ones). */
gt_status gt_gs_cu_create(size_t n, int sh_k, const float *pos, const float *scale, const float *rot,
                          const float *opacity, const float *sh, float scale_modifier,
                          int antialias, int exact_binning, int sh_half, gt_gs_cu **out);
/* Render one view. Host outputs may be NULL (not downloaded): rgb w*h*3,
 * alpha w*h, depth w*h, rgba8 w*h*4. *pairs gets the (Gaussian, tile)
 * pair count. */
gt_status gt_gs_cu_render(gt_gs_cu *g, const gt_gs_camera *cam, int sh_deg, const float bg[3],
                          float *rgb, float *alpha, float *depth, uint8_t *rgba8, gt_timings *tm,
                          size_t *pairs);
void gt_gs_cu_destroy(gt_gs_cu *g);
/* For output kernels (gs_output.cu): keep_rgb on makes gt_gs_cu_render
 * write the float image on the device even when rgb is NULL, and with every
 * host output NULL gt_gs_cu_render returns with the frame's work queued on
 * gt_gs_cu_stream and nothing downloaded. gt_gs_cu_device_rgb: that image
 * (w*h*3 floats; valid after a render, until the next one grows it). */
void gt_gs_cu_keep_rgb(gt_gs_cu *g, int on);
const float *gt_gs_cu_device_rgb(const gt_gs_cu *g);
void *gt_gs_cu_stream(const gt_gs_cu *g);

#ifdef __cplusplus
}
#endif
#endif
