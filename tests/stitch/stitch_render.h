/* Rendering a camera view for the stitch tests, shared by the procedural
 * scene (stitch_synth.h) and the photographs (stitch_photo.h): sample (px, py)
 * of plane k of a frame (format f, w x h) sits at camera luma position q and
 * shows the source at H q (full-resolution coordinates), luma times
 * `exposure`, rounded to 8 bits. */
#ifndef GT_STITCH_RENDER_H
#define GT_STITCH_RENDER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "stitch/stitch.h"

/* 8-bit rounding and clamping of a sample value */
static inline uint8_t stitch_q(double v)
{
    v = floor(v + 0.5);
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* the source's plane-k value at (X, Y) */
typedef double (*stitch_sample_fn)(const void *src, int k, double X, double Y);

static inline void stitch_render_view(stitch_sample_fn sample, const void *src, const double H[9], double exposure,
                                      gt_pixfmt f, int w, int h, uint8_t *frame)
{
    gt_plane_view pv[3];
    gt_stitch_planes(f, w, h, pv);
    for (int k = 0; k < 3; k++)
        for (int py = 0; py < pv[k].h; py++)
            for (int px = 0; px < pv[k].w; px++) {
                double x = px * pv[k].sx + pv[k].ox, y = py * pv[k].sy + pv[k].oy;
                double wz = H[6] * x + H[7] * y + H[8];
                double X = (H[0] * x + H[1] * y + H[2]) / wz, Y = (H[3] * x + H[4] * y + H[5]) / wz;
                double v = sample(src, k, X, Y);
                frame[pv[k].off + (size_t)py * pv[k].pitch + (size_t)px * pv[k].step] = stitch_q(k == 0 ? v * exposure : v);
            }
}
#endif
