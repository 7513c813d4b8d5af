/* Undistorting photographs of COLMAP's SIMPLE_RADIAL, RADIAL and OPENCV
 * cameras to pinhole ones, as COLMAP's image_undistorter does
 * (src/colmap/image/undistortion.cc, UndistortCamera with its defaults
 * blank_pixels 0, min_scale 0.2, max_scale 2, no ROI, no max_image_size):
 *
 *  - the pinhole camera keeps the focal lengths and starts from the
 *    distorted camera's size and principal point;
 *  - the distorted image's border pixel centres are lifted (through the
 *    inverse distortion) and projected by that pinhole camera; the scale
 *    per axis is the one at which the undistorted image just fits inside
 *    that border (no output pixel samples outside the photograph: COLMAP's
 *    "no blank pixels"), clamped to [0.2, 2];
 *  - width and height are scaled by it (truncated to an integer, at least
 *    1) and the principal point by the new size over the old.
 * The image is then resampled bilinearly at the distorted position of each
 * output pixel centre (COLMAP's WarpImageBetweenCameras). */
#ifndef GT_GS_UNDISTORT_H
#define GT_GS_UNDISTORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "gs/gs_distort.h"
#include "io/colmap.h"
#include "io/image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pinhole camera in COLMAP's pixel convention. */
typedef struct gt_gs_pinhole {
    int width, height;
    double fx, fy, cx, cy;
} gt_gs_pinhole;

/* Whether image_undistorter's resampling is needed for a model, and the
 * ones gsrender undistorts itself. */
bool gt_gs_model_is_pinhole(int colmap_model);
bool gt_gs_model_undistortable(int colmap_model);
/* The lens of a SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL or OPENCV
 * camera; false for the other models. */
bool gt_gs_lens_from_colmap(const gt_colmap_camera *c, gt_gs_lens *l);

/* The undistorted pinhole camera of lens l on a w x h image (see above).
 * GT_ERR_DATA when the border cannot be lifted (the distortion folds over
 * inside the image: coefficients no camera has). */
gt_status gt_gs_undistort_camera(const gt_gs_lens *l, int w, int h, gt_gs_pinhole *out);

/* The output image of pinhole t from img (any channels, 8 or 16 bit;
 * alpha composited over bg), whose camera is l (at img's size): bilinear
 * samples at the distorted positions of t's pixel centres, clamped to the
 * edge pixels, into exactly one of out (planar RGB floats, 3 * t->width *
 * t->height) or out8 (the same as bytes, gs_pixels.h's rounding).
 * Returns the number of output pixels whose sample lies outside the image
 * (more than half a pixel beyond its border pixels' centres): 0 for a
 * camera from gt_gs_undistort_camera; (size_t)-1 when memory runs out. */
size_t gt_gs_undistort_image(const gt_image *img, const gt_gs_lens *l, const gt_gs_pinhole *t, const float bg[3],
                             float *out, uint8_t *out8);

#ifdef __cplusplus
}
#endif
#endif
