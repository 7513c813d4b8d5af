/* Rendering a camera view for the stitch tests, shared by the procedural
 * scene (stitch_synth.h) and the photographs (stitch_photo.h): sample (px, py)
 * of plane k of a frame (format f, w x h) sits at camera luma position q and
 * shows the source at H q (full-resolution coordinates), luma times
 * `exposure` (chroma by gains about 128 with stitch_render_view_g), rounded
 * to 8 bits. */
#ifndef GT_STITCH_RENDER_H
#define GT_STITCH_RENDER_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stitch/stitch.h"

/* the largest |a[i] - b[i]| over n bytes, and where (*where) */
static inline int stitch_max_diff(const uint8_t *a, const uint8_t *b, size_t n, size_t *where)
{
    int m = 0;
    for (size_t i = 0; i < n; i++) {
        int d = abs((int)a[i] - (int)b[i]);
        if (d > m) m = d, *where = i;
    }
    return m;
}

/* Frame src (format fs, w x h) as format fd into dst, when the two formats'
 * planes sample the same luma positions (4:2:2 packed or planar; 4:2:0
 * planar or NV12): a rendered view is then the same samples in another
 * order, so it is rendered once and repacked. false (dst untouched) when
 * the planes differ in size or position. */
static inline bool stitch_repack(const uint8_t *src, gt_pixfmt fs, uint8_t *dst, gt_pixfmt fd, int w, int h)
{
    gt_plane_view a[3], b[3];
    if (gt_stitch_planes(fs, w, h, a) != GT_OK || gt_stitch_planes(fd, w, h, b) != GT_OK) return false;
    for (int k = 0; k < 3; k++)
        if (a[k].w != b[k].w || a[k].h != b[k].h || a[k].sx != b[k].sx || a[k].sy != b[k].sy ||
            a[k].ox != b[k].ox || a[k].oy != b[k].oy)
            return false;
    for (int k = 0; k < 3; k++)
        for (int y = 0; y < a[k].h; y++)
            for (int x = 0; x < a[k].w; x++)
                dst[b[k].off + (size_t)y * b[k].pitch + (size_t)x * b[k].step] =
                    src[a[k].off + (size_t)y * a[k].pitch + (size_t)x * a[k].step];
    return true;
}

/* 8-bit rounding and clamping of a sample value */
static inline uint8_t stitch_q(double v)
{
    v = floor(v + 0.5);
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* the source's plane-k value at (X, Y) */
typedef double (*stitch_sample_fn)(const void *src, int k, double X, double Y);

/* the same with a gain per plane: Y times g[0], U and V about 128 (U' = 128 +
 * g[1] (U - 128), V likewise with g[2]) */
static inline void stitch_render_view_g(stitch_sample_fn sample, const void *src, const double H[9], const double g[3],
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
                frame[pv[k].off + (size_t)py * pv[k].pitch + (size_t)px * pv[k].step] =
                    stitch_q(k == 0 ? v * g[0] : 128 + g[k] * (v - 128));
            }
}

static inline void stitch_render_view(stitch_sample_fn sample, const void *src, const double H[9], double exposure,
                                      gt_pixfmt f, int w, int h, uint8_t *frame)
{
    const double g[3] = {exposure, 1, 1};
    stitch_render_view_g(sample, src, H, g, f, w, h, frame);
}
/* Smooth a W x H image in place with the binomial [1 4 6 4 1]/16 (rows,
 * then columns; edges clamped): the seam measures look at what remains
 * visible at low frequency, not at 8-bit noise. */
static inline void stitch_smooth5(double *D, int W, int H)
{
    double *T = malloc(sizeof(double) * W * H);
    static const double k5[5] = {1 / 16.0, 4 / 16.0, 6 / 16.0, 4 / 16.0, 1 / 16.0};
    for (int pass = 0; pass < 2; pass++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                double a = 0;
                for (int k = -2; k <= 2; k++) {
                    int xx = pass ? x : x + k, yy = pass ? y + k : y;
                    xx = xx < 0 ? 0 : xx >= W ? W - 1 : xx;
                    yy = yy < 0 ? 0 : yy >= H ? H - 1 : yy;
                    a += k5[k + 2] * D[(size_t)yy * W + xx];
                }
                T[(size_t)y * W + x] = a;
            }
        memcpy(D, T, sizeof(double) * W * H);
    }
    free(T);
}
#endif
