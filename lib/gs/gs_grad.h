/* Differentiable rendering for refining a scene (gsrender --fit): the
 * rasterizer's backward pass, the reference's mathematics
 * (diff-gaussian-rasterization's backward.cu): dL/d(colour, opacity, 2-D
 * mean, conic) per pixel replayed back to front from the forward's saved
 * per-pixel state (last contributor, final transmittance), then through the
 * EWA projection and the SH evaluation to the trained parameters.
 *
 * Trained parameters are the raw ones of the 3DGS PLY (gt_gs_raw): position,
 * log-scale, unnormalised quaternion (w x y z), logit opacity, SH
 * coefficients (layout of gt_gs_scene.sh). Gradients have the same layout.
 * Images of this API are planar float RGB: channel c of pixel (x, y) at
 * (c*h + y)*w + x, top row first; the background is p->bg.
 *
 *   lib/gs/gs_backward.c    CPU reference (forward and backward, double
 *                           accumulation) and the raw <-> scene conversion
 *   kernels/gs/gs_backward.cu  the GPU forward-with-state and backward */
#ifndef GT_GS_GRAD_H
#define GT_GS_GRAD_H

#include <stddef.h>

#include "gs/gs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_gs_raw {
    size_t n;
    int sh_degree, sh_k; /* sh_k = (sh_degree+1)^2 */
    float *pos;           /* 3n */
    float *log_scale;     /* 3n */
    float *rot;           /* 4n, w x y z, not necessarily normalised */
    float *logit_opacity; /* n */
    float *sh;            /* n*sh_k*3 */
} gt_gs_raw;
/* The opacity and scale multiplier of Gaussians made from points
 * (gt_gs_init_from_points, gs_capture.h). */
typedef struct gt_gs_init_opts {
    double opacity; /* GT_GS_INIT_OPACITY: the reference's 0.1 */
    double scale;   /* GT_GS_INIT_SCALE: 1 x the neighbours' distance */
} gt_gs_init_opts;
#define GT_GS_INIT_OPACITY 0.1
#define GT_GS_INIT_SCALE 1.0
#define GT_GS_INIT_REFERENCE ((gt_gs_init_opts){GT_GS_INIT_OPACITY, GT_GS_INIT_SCALE})

/* Host arrays, zeroed. */
gt_status gt_gs_raw_alloc(gt_gs_raw *r, size_t n, int sh_degree);
void gt_gs_raw_free(gt_gs_raw *r);
void gt_gs_raw_zero(gt_gs_raw *r);
/* The five parameter groups as arrays and their lengths in floats: pos,
 * log_scale, rot, logit_opacity, sh (the order of the optimiser's groups). */
void gt_gs_raw_groups(const gt_gs_raw *r, float *a[5], size_t len[5]);
/* scene (activated values) <-> raw parameters (log, logit; quaternion as is). */
gt_status gt_gs_raw_from_scene(const gt_gs_scene *s, gt_gs_raw *r);
gt_status gt_gs_raw_to_scene(const gt_gs_raw *r, gt_gs_scene *s);

/* CPU reference forward from raw parameters: rgb (3*w*h planar). sh_deg: the
 * degree used (<= r->sh_degree). */
gt_status gt_gs_forward_cpu(const gt_gs_raw *r, int sh_deg, const gt_gs_camera *c, const gt_gs_params *p,
                            float *rgb);
/* Densification statistics (gsrender --fit --densify, gs_fit_densify.c):
 * per Gaussian, the sum over views of |dL/d(2-D mean)| in normalised device
 * coordinates (the reference's "viewspace point" gradient: the pixel-space
 * gradient times W/2 and H/2) and the number of views that saw it (touched
 * a tile). Host arrays for the CPU backward, device arrays for the GPU's;
 * n floats each. */
typedef struct gt_gs_grad_stats {
    float *grad2d;
    float *seen;
} gt_gs_grad_stats;

/* CPU reference backward: renders as gt_gs_forward_cpu (rgb, may be NULL)
 * and adds dL/dparameters for the upstream gradient dl_drgb (3*w*h planar)
 * into grad (allocated like r; the caller zeroes it); stats (may be NULL)
 * gets this view's densification statistics added. */
gt_status gt_gs_backward_cpu(const gt_gs_raw *r, int sh_deg, const gt_gs_camera *c, const gt_gs_params *p,
                             const float *dl_drgb, float *rgb, gt_gs_raw *grad, gt_gs_grad_stats *stats);

/* GPU: a workspace for one scene size and the largest image; every array of
 * the gt_gs_raw arguments is a device pointer. The work is queued on
 * `stream` (a cudaStream_t; NULL: the default stream). */
typedef struct gt_gs_diff gt_gs_diff;
gt_status gt_gs_diff_create(size_t n, int sh_degree, int max_w, int max_h, void *stream, gt_gs_diff **d);
/* The workspace for n Gaussians (after the density control changed the
 * count): the per-Gaussian buffers grow (a quarter beyond n) when they are
 * too small, never shrink; the rest is kept. */
gt_status gt_gs_diff_resize(gt_gs_diff *d, size_t n);
/* Forward, keeping what the backward needs; rgb: device, 3*w*h planar. */
gt_status gt_gs_diff_forward(gt_gs_diff *d, const gt_gs_raw *dev_r, int sh_deg, const gt_gs_camera *c,
                             const gt_gs_params *p, float *dev_rgb);
/* Backward of the last forward: adds dL/dparameters into dev_grad and,
 * with dev_stats (device arrays; may be NULL), the view's densification
 * statistics. */
gt_status gt_gs_diff_backward(gt_gs_diff *d, const float *dev_dl_drgb, gt_gs_raw *dev_grad,
                              gt_gs_grad_stats *dev_stats);
/* Device bytes held by the workspace. */
size_t gt_gs_diff_bytes(const gt_gs_diff *d);
void gt_gs_diff_destroy(gt_gs_diff *d);

#ifdef __cplusplus
}
#endif
#endif
