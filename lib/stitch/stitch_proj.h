/* The per-sample mapping of a rotation-model rig (yuvstitch rig 2 with a
 * cylindrical or spherical panorama, or a lens with radial distortion),
 * shared verbatim by the CPU reference (lib/stitch) and the CUDA warp
 * (kernels/stitch/warp.cu): panorama sample -> ray -> camera sample.
 *
 * Rays. Every sample (x, y) of a panorama plane has the ray
 *     d = (A[x] B[y], C[y], D[x] B[y])
 * in the panorama's frame (x right, y down, z forward), from per-column
 * (A, D) and per-row (B, C) tables that the host computes once in double
 * precision at the sample's luma position and rounds to float
 * (gt_stitch_proj_tables, proj.c):
 *     spherical    A = sin lon  D = cos lon  B = cos lat  C = -sin lat
 *     cylindrical  A = sin lon  D = cos lon  B = 1        C = -tan(elevation)
 *     plane        A = tan a    D = 1        B = 1        C = -tan(e)
 * so that every trigonometric function is evaluated once per row or column
 * on the host, and the per-sample work below is multiplies, fused
 * multiply-adds and IEEE divisions only: the CPU and the GPU compute the
 * same bits (as stitch_math.h does for homographies).
 *
 * Camera. 16 floats per camera and plane (GT_SP_*): R, the rotation from the
 * panorama's frame to the camera's (row-major), the focal lengths and the
 * principal point in samples of the camera's plane (a chroma plane's are
 * the luma ones through the plane's sampling, folded in by the host), the
 * radial distortion k1, k2 of the normalised coordinates
 *     (x, y) (1 + k1 r^2 + k2 r^4),  r^2 = x^2 + y^2,
 * and r2max, the largest r^2 that maps into the view (beyond it a distortion
 * polynomial can turn back and show far-away rays inside the image). */
#ifndef GT_STITCH_PROJ_H
#define GT_STITCH_PROJ_H

#include <math.h>

#include "common/hostdev.h"

enum {
    GT_SP_R = 0,   /* 9 entries */
    GT_SP_FX = 9,
    GT_SP_FY = 10,
    GT_SP_CX = 11,
    GT_SP_CY = 12,
    GT_SP_K1 = 13,
    GT_SP_K2 = 14,
    GT_SP_R2MAX = 15,
    GT_SP_N = 16
};

/* Camera plane position (*u, *v) of the ray (A B, C, D B) for camera c.
 * Returns 0, with (*u, *v) far outside, when the ray points behind the
 * camera or beyond r2max. */
GT_HD int gt_sp_map(const float *c, float A, float D, float B, float C, float *u, float *v)
{
    float dx = A * B, dz = D * B;
    float z = fmaf(c[6], dx, fmaf(c[7], C, c[8] * dz));
    if (!(z > 1e-6f)) {
        *u = -1e30f;
        *v = -1e30f;
        return 0;
    }
    float x = fmaf(c[0], dx, fmaf(c[1], C, c[2] * dz)) / z;
    float y = fmaf(c[3], dx, fmaf(c[4], C, c[5] * dz)) / z;
    float r2 = fmaf(x, x, y * y);
    if (!(r2 <= c[GT_SP_R2MAX])) {
        *u = -1e30f;
        *v = -1e30f;
        return 0;
    }
    float s = fmaf(r2, fmaf(r2, c[GT_SP_K2], c[GT_SP_K1]), 1.0f);
    *u = fmaf(c[GT_SP_FX] * s, x, c[GT_SP_CX]);
    *v = fmaf(c[GT_SP_FY] * s, y, c[GT_SP_CY]);
    return 1;
}

#endif
