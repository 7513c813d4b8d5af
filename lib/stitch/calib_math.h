/* Per-pixel and per-keypoint arithmetic of the calibration's feature
 * detector, shared verbatim by the CPU reference (calib_detect.c) and the
 * CUDA kernels (kernels/stitch/calib_detect.cu). Everything that decides a
 * keypoint or a descriptor bit is integer arithmetic (pyramid, FAST test,
 * Harris response, intensity centroid, orientation bin, BRIEF comparisons),
 * and the one floating-point step (the sub-pixel offset) is a single IEEE
 * double division of exactly converted integers, so both paths produce the
 * same keypoints and the same descriptors bit for bit.
 *
 * Images are 8-bit, row-major with a pitch; (x, y) is the pixel, callers keep
 * every access inside the image (GT_CM_BORDER from each edge for the
 * keypoint tests, reflect-101 indices for the filters). */
#ifndef GT_CALIB_MATH_H
#define GT_CALIB_MATH_H

#include <stdint.h>

#include "common/hostdev.h"

#define GT_CM_ANGLES 32       /* orientation bins of 11.25 degrees */
#define GT_CM_PAIRS 256       /* BRIEF comparisons: 32-byte descriptors */
#define GT_CM_RADIUS 15       /* orientation disk and pattern radius */
#define GT_CM_BORDER 18       /* keypoints stay this far from every edge */

/* Orientation sector boundaries and the steered BRIEF pattern, computed once
 * on the host (gt_calib_tables_init) and handed to both paths. Boundary k is
 * the integer direction (bx[k], by[k]) ~ 2^14 (cos, sin)(2 pi k / 32);
 * pat[k][i] = {x1, y1, x2, y2} is pair i rotated to the centre of bin k. */
typedef struct gt_calib_tables {
    int32_t bx[GT_CM_ANGLES + 1], by[GT_CM_ANGLES + 1];
    int8_t pat[GT_CM_ANGLES][GT_CM_PAIRS][4];
} gt_calib_tables;

/* reflect-101 index into [0, n), n >= 2 (|i| < n) */
GT_HD int gt_cm_reflect(int i, int n)
{
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
    return i;
}

/* 5x5 binomial ([1 4 6 4 1] outer product, sum 256) at (cx, cy) of a w x h
 * image, reflect-101 borders, rounded: the pyramid's reduce (taken at even
 * positions, so level l pixel x sits at level 0 position x * 2^l) and the
 * descriptors' smoothing. */
GT_HD uint8_t gt_cm_binomial5(const uint8_t *img, int pitch, int w, int h, int cx, int cy)
{
    const int k[5] = {1, 4, 6, 4, 1};
    int acc = 0;
    for (int j = 0; j < 5; j++) {
        const uint8_t *row = img + (long long)gt_cm_reflect(cy + j - 2, h) * pitch;
        int r = 0;
        for (int i = 0; i < 5; i++) r += k[i] * row[gt_cm_reflect(cx + i - 2, w)];
        acc += k[j] * r;
    }
    return (uint8_t)((acc + 128) >> 8);
}

/* FAST-9 on the 16-pixel Bresenham circle of radius 3: 9 contiguous circle
 * pixels all brighter than p + t or all darker than p - t. */
GT_HD int gt_cm_fast9(const uint8_t *img, int pitch, int x, int y, int t)
{
    const int cx[16] = {0, 1, 2, 3, 3, 3, 2, 1, 0, -1, -2, -3, -3, -3, -2, -1};
    const int cy[16] = {-3, -3, -2, -1, 0, 1, 2, 3, 3, 3, 2, 1, 0, -1, -2, -3};
    const uint8_t *c = img + (long long)y * pitch + x;
    int p = c[0], hi = p + t, lo = p - t;
    /* any 9-arc holds at least two of the four compass pixels */
    int nb = 0, nd = 0;
    for (int k = 0; k < 16; k += 4) {
        int v = c[cy[k] * pitch + cx[k]];
        nb += v > hi;
        nd += v < lo;
    }
    if (nb < 2 && nd < 2) return 0;
    uint32_t mb = 0, md = 0;
    for (int k = 0; k < 16; k++) {
        int v = c[cy[k] * pitch + cx[k]];
        mb |= (uint32_t)(v > hi) << k;
        md |= (uint32_t)(v < lo) << k;
    }
    for (int pass = 0; pass < 2; pass++) {
        uint32_t m = pass ? md : mb;
        m |= m << 16;
        uint32_t r = m;
        for (int s = 1; s < 9; s++) r &= m >> s;
        if (r & 0xFFFFu) return 1;
    }
    return 0;
}

/* Harris response 25 * det(M) - trace(M)^2 (k = 1/25 = 0.04) of the
 * structure tensor M summed over the 7x7 window at (x, y), gradients by
 * central differences. Exact in int64 (|value| < 2^50). */
GT_HD int64_t gt_cm_harris(const uint8_t *img, int pitch, int x, int y)
{
    int64_t sxx = 0, syy = 0, sxy = 0;
    for (int dy = -3; dy <= 3; dy++) {
        const uint8_t *r = img + (long long)(y + dy) * pitch + x;
        for (int dx = -3; dx <= 3; dx++) {
            int gx = (int)r[dx + 1] - (int)r[dx - 1];
            int gy = (int)r[dx + pitch] - (int)r[dx - pitch];
            sxx += gx * gx;
            syy += gy * gy;
            sxy += gx * gy;
        }
    }
    int64_t tr = sxx + syy;
    return 25 * (sxx * syy - sxy * sxy) - tr * tr;
}

/* Sub-pixel offset in (-0.5, 0.5) of a maximum s0 between neighbours sm
 * (at -1) and sp (at +1): the vertex of the parabola through the three. */
GT_HD double gt_cm_subpixel(int64_t sm, int64_t s0, int64_t sp)
{
    int64_t den = 2 * (sm - 2 * s0 + sp);
    if (den >= 0) return 0.0;
    double d = (double)(sm - sp) / (double)den;
    return d > 0.5 ? 0.5 : d < -0.5 ? -0.5 : d;
}

/* Intensity centroid (m10, m01) over the disk of radius GT_CM_RADIUS and the
 * orientation bin of the direction (m10, m01): the k with the direction on
 * or after boundary k and before boundary k + 1 (0 for a zero vector). */
GT_HD int gt_cm_orientation(const gt_calib_tables *t, const uint8_t *img, int pitch, int x, int y)
{
    const int R = GT_CM_RADIUS;
    int64_t m10 = 0, m01 = 0;
    for (int dy = -R; dy <= R; dy++) {
        const uint8_t *r = img + (long long)(y + dy) * pitch + x;
        int rs = 0, rx = 0;
        for (int dx = -R; dx <= R; dx++) {
            if (dx * dx + dy * dy > R * R) continue;
            rs += r[dx];
            rx += dx * r[dx];
        }
        m10 += rx;
        m01 += (int64_t)dy * rs;
    }
    for (int k = 0; k < GT_CM_ANGLES; k++) {
        int64_t c0 = (int64_t)t->bx[k] * m01 - (int64_t)t->by[k] * m10;
        int64_t c1 = (int64_t)t->bx[k + 1] * m01 - (int64_t)t->by[k + 1] * m10;
        if (c0 >= 0 && c1 < 0) return k;
    }
    return 0;
}

/* One descriptor byte (pairs 8b .. 8b+7) at (x, y) of the smoothed image:
 * bit i set when the first point of the pair is darker than the second. */
GT_HD uint8_t gt_cm_brief_byte(const gt_calib_tables *t, int bin, int b, const uint8_t *sm, int pitch, int x,
                              int y)
{
    const uint8_t *c = sm + (long long)y * pitch + x;
    uint8_t v = 0;
    for (int i = 0; i < 8; i++) {
        const int8_t *p = t->pat[bin][8 * b + i];
        v |= (uint8_t)((c[p[1] * pitch + p[0]] < c[p[3] * pitch + p[2]]) << i);
    }
    return v;
}

#endif
