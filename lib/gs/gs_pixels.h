/* Training images as the fit keeps them: decoded photographs (io/image.h:
 * 1-4 channels, 8 or 16 bit) to planar RGB (channel c of pixel (x, y) at
 * (c*h + y)*w + x), alpha composited over a background, and resampled to a
 * smaller size by area averaging: each output pixel is the mean of the
 * source area it covers (a box filter of f x f pixels for a size ratio f;
 * fractional weights at the edges of the areas when the ratio is not an
 * integer, as for a camera whose size the reference rounds, 535 / 2 ->
 * 268). Output as floats in [0,1] or as bytes (round(v * 255)): an 8-bit
 * photograph taken at its size gives its bytes back exactly. */
#ifndef GT_GS_PIXELS_H
#define GT_GS_PIXELS_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "io/image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A source image: a decoded photograph (img, composited over bg), or
 * planar float RGB (rgb, already composited) of w x h. */
typedef struct gt_gs_pixsrc {
    const gt_image *img;
    const float *rgb;
    int w, h;
    const float *bg; /* 3 floats, for img's alpha */
} gt_gs_pixsrc;

/* A value in [0,1] as a byte: round(v * 255), clamped. */
static inline uint8_t gt_gs_to_byte(double v)
{
    return (uint8_t)(v <= 0 ? 0 : v >= 1 ? 255 : (int)(v * 255.0 + 0.5));
}

/* The RGB of pixel (x, y) of img, alpha composited over bg, in [0,1]. */
void gt_gs_pixel_rgb(const gt_image *img, int x, int y, const float bg[3], double rgb[3]);

/* src resampled to w x h (at most its size; GT_ERR_USAGE otherwise) into
 * exactly one of out (3*w*h planar floats) or out8 (3*w*h planar bytes). */
gt_status gt_gs_pixels_resample(const gt_gs_pixsrc *src, int w, int h, float *out, uint8_t *out8);

/* A decoded image to planar float RGB of w x h (see above). */
gt_status gt_gs_pixels_planar(const gt_image *img, int w, int h, const float bg[3], float *out);

#ifdef __cplusplus
}
#endif
#endif
