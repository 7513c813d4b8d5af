/* Arithmetic shared verbatim by the CPU reference (lib/stitch) and the CUDA
 * kernels (kernels/stitch), so that both compute the same numbers: float32,
 * every multiply-add an explicit fmaf (correctly rounded on both sides, no
 * compiler contraction can change it), IEEE division. */
#ifndef GT_STITCH_MATH_H
#define GT_STITCH_MATH_H

#include <math.h>
#include <stdint.h>

#include "common/hostdev.h"
#include "stitch/stitch_proj.h"

/* Map (x, y) through the 3x3 row-major P. Returns 0 when the point lies
 * behind the camera (w <= 1e-8): then (*u, *v) are set far outside. */
GT_HD int gt_sm_project(const float *P, float x, float y, float *u, float *v)
{
    float w = fmaf(P[6], x, fmaf(P[7], y, P[8]));
    if (!(w > 1e-8f)) {
        *u = -1e30f;
        *v = -1e30f;
        return 0;
    }
    *u = fmaf(P[0], x, fmaf(P[1], y, P[2])) / w;
    *v = fmaf(P[3], x, fmaf(P[4], y, P[5])) / w;
    return 1;
}

/* Bilinear sample of an 8-bit strided plane at (u, v), coordinates clamped
 * to [0, w-1] x [0, h-1] (edge replication). */
GT_HD float gt_sm_bilinear(const uint8_t *base, int pitch, int step, int w, int h, float u, float v)
{
    u = fminf(fmaxf(u, 0.0f), (float)(w - 1));
    v = fminf(fmaxf(v, 0.0f), (float)(h - 1));
    int x0 = (int)floorf(u), y0 = (int)floorf(v);
    int x1 = x0 + 1 < w ? x0 + 1 : w - 1;
    int y1 = y0 + 1 < h ? y0 + 1 : h - 1;
    float fx = u - (float)x0, fy = v - (float)y0;
    const uint8_t *r0 = base + (long long)y0 * pitch;
    const uint8_t *r1 = base + (long long)y1 * pitch;
    float a = (float)r0[(long long)x0 * step], b = (float)r0[(long long)x1 * step];
    float c = (float)r1[(long long)x0 * step], d = (float)r1[(long long)x1 * step];
    float top = fmaf(fx, b - a, a);
    float bot = fmaf(fx, d - c, c);
    return fmaf(fy, bot - top, top);
}

/* Camera sample at panorama position (x, y): mapped through P into the
 * camera's plane (gt_sm_project), sampled bilinearly, then the camera's
 * exposure model for this plane: s * gain[0] + bias[0] (luma: bias 0; chroma:
 * gain g and bias 128 (1 - g), i.e. 128 + g (s - 128)). base, pitch, step, w,
 * h: the camera's plane. (Gain and bias are passed by address and read after
 * the sample, as the kernels always read them; passed by value, nvcc
 * schedules the warp kernels' loads differently.) */
GT_HD float gt_sm_sample(const float *P, const uint8_t *base, int pitch, int step, int w, int h,
                         const float *gain, const float *bias, float x, float y)
{
    float u, v;
    gt_sm_project(P, x, y, &u, &v);
    float s = gt_sm_bilinear(base, pitch, step, w, h, u, v);
    return fmaf(s, *gain, *bias);
}

/* gt_sm_sample for a rig stitched through rays (stitch_proj.h): camera c's
 * sample at panorama plane sample (x, y), tab the plane's tables (pw columns,
 * ph rows). */
GT_HD float gt_sm_sample_ray(const float *c, const float *tab, int pw, int ph, const uint8_t *base, int pitch,
                             int step, int w, int h, const float *gain, const float *bias, int x, int y)
{
    float u, v;
    gt_sp_map(c, tab[x], tab[pw + x], tab[2 * pw + y], tab[2 * pw + ph + y], &u, &v);
    float s = gt_sm_bilinear(base, pitch, step, w, h, u, v);
    return fmaf(s, *gain, *bias);
}

/* Final store: clamp(floor(v + 0.5), 0, 255). */
GT_HD uint8_t gt_sm_quant(float v)
{
    float r = floorf(v + 0.5f);
    r = fminf(fmaxf(r, 0.0f), 255.0f);
    return (uint8_t)r;
}

/* Reflect-101 index (n >= 1). */
GT_HD int gt_sm_reflect(int i, int n)
{
    if (n == 1) return 0;
    while (i < 0 || i >= n) {
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
    }
    return i;
}

/* Reduce taps a b c d e -> (a + e + 4(b + d) + 6c) / 16 */
GT_HD float gt_sm_reduce5(float a, float b, float c, float d, float e)
{
    return fmaf(6.0f, c, fmaf(4.0f, b + d, a + e)) * 0.0625f;
}
/* Expand, even output: (a + 6b + c) / 8; odd output: (b + c) / 2 */
GT_HD float gt_sm_expand_even(float a, float b, float c)
{
    return fmaf(6.0f, b, a + c) * 0.125f;
}
GT_HD float gt_sm_expand_odd(float b, float c)
{
    return (b + c) * 0.5f;
}

#endif
