/* The per-Gaussian and per-pixel math of the 3DGS forward pass (Kerbl et al.
 * 2023, diff-gaussian-rasterization), written once for the CPU reference
 * (lib/gs/gs_core.c) and the CUDA rasterizer (kernels/gs/gs_raster.cu):
 *
 *   gs_rotmat     rotation matrix of a unit quaternion
 *   gs_cov3       3-D covariance  Sigma = R(q) diag(s*mod)^2 R(q)^T
 *   gs_view       world -> camera space
 *   gs_cov2       EWA: 2-D covariance J W Sigma W^T J^T, the Jacobian J
 *                 taken at the mean clamped to 1.3x the field of view
 *   gs_filter     the +0.3 pixel low-pass filter (and the determinants)
 *   gs_aa_scale   Mip-Splatting opacity compensation sqrt(det0 / det)
 *   gs_radius     3 sigma of the larger eigenvalue, in pixels
 *   gs_tile_rect  the reference's bounding square in tiles
 *   gs_conic      inverse 2-D covariance
 *   gs_sh_eval    colour from SH degrees 0-3, +0.5, clamped at 0
 *   gs_power, gs_alpha   the Gaussian's exponent and alpha at a pixel
 *   gs_to8        float in [0,1] -> 8 bits
 *
 * Float throughout, on both paths. The two paths compute the same
 * expressions; what differs is how the compilers round them: nvcc contracts
 * a*b+c into one fused multiply-add where gcc (-std=c11) rounds twice, and
 * three functions use the GPU's fast intrinsics as the reference rasterizer
 * does (gs_exp: __expf; gs_view_dir: rsqrtf; gs_to8: __saturatef), marked
 * below. gs_det2 is the exception, rounded step by step on both (the exact
 * tile culling of gs_cull.h relies on bit-identical determinants).
 * tests/gs/test_gs_gpu.c bounds the difference these make in the image.
 * Their derivatives (the backward pass) are gs_math_grad.h. */
#ifndef GT_GS_MATH_H
#define GT_GS_MATH_H

#include <math.h>

#include "common/hostdev.h"

#include "gs/gs_const.h"

#ifdef __CUDA_ARCH__ /* device code only: host compilers would warn */
#define GS_UNROLL _Pragma("unroll")
#else
#define GS_UNROLL
#endif

/* v clamped to [lo, hi] (lo <= hi): a max, then a min */
GT_HD int gs_clampi(int v, int lo, int hi)
{
    int t = v > lo ? v : lo;
    return t < hi ? t : hi;
}

/* a*c - b*b rounded step by step (never fused), so that every caller gets
 * bit-identical results. */
GT_HD float gs_det2(float a, float b, float c)
{
#ifdef __CUDA_ARCH__
    return __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, b));
#else
    volatile float ac = a * c, bb = b * b;
    return ac - bb;
#endif
}

/* The logistic function: an opacity from its logit (the 3DGS PLY's
 * stored value). */
GT_HD float gs_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* Unit quaternion (w x y z) in place; a zero or non-finite one becomes the
 * identity. For the scene readers (the renderers take unit quaternions). */
GT_HD void gs_quat_normalize(float q[4])
{
    float l = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(l > 0.0f) || !isfinite(l)) {
        q[0] = 1.0f;
        q[1] = q[2] = q[3] = 0.0f;
        return;
    }
    for (int k = 0; k < 4; k++) q[k] /= l;
}

/* Rotation matrix (row-major) of the unit quaternion q (w x y z). */
GT_HD void gs_rotmat(const float *q, float Rq[9])
{
    float qr = q[0], qx = q[1], qy = q[2], qz = q[3];
    Rq[0] = 1.f - 2.f * (qy * qy + qz * qz);
    Rq[1] = 2.f * (qx * qy - qr * qz);
    Rq[2] = 2.f * (qx * qz + qr * qy);
    Rq[3] = 2.f * (qx * qy + qr * qz);
    Rq[4] = 1.f - 2.f * (qx * qx + qz * qz);
    Rq[5] = 2.f * (qy * qz - qr * qx);
    Rq[6] = 2.f * (qx * qz - qr * qy);
    Rq[7] = 2.f * (qy * qz + qr * qx);
    Rq[8] = 1.f - 2.f * (qx * qx + qy * qy);
}

/* 3-D covariance Sigma = Rq diag(v)^2 Rq^T, v = mod * scale, of the unit
 * quaternion q (w x y z); S gets the upper triangle xx xy xz yy yz zz. */
GT_HD void gs_cov3(const float *q, const float *scale, float mod, float S[6])
{
    float Rq[9];
    gs_rotmat(q, Rq);
    float sc[3];
    for (int k = 0; k < 3; k++) {
        float v = mod * scale[k];
        sc[k] = v * v;
    }
    int idx = 0;
    for (int a = 0; a < 3; a++)
        for (int b = a; b < 3; b++)
            S[idx++] = Rq[3 * a] * sc[0] * Rq[3 * b] + Rq[3 * a + 1] * sc[1] * Rq[3 * b + 1] +
                       Rq[3 * a + 2] * sc[2] * Rq[3 * b + 2];
}

/* Camera-space position v = R m + t of the world point m (R row-major). */
GT_HD void gs_view(const float R[9], const float t[3], float mx, float my, float mz, float v[3])
{
    v[0] = R[0] * mx + R[1] * my + R[2] * mz + t[0];
    v[1] = R[3] * mx + R[4] * my + R[5] * mz + t[1];
    v[2] = R[6] * mx + R[7] * my + R[8] * mz + t[2];
}

/* The limits of x/z and y/z at which the EWA Jacobian is clamped: lim =
 * {left, right, top, bottom} as positive tangents, x/z in [-lim[0], lim[1]].
 * A camera of size W x H, focal lengths fx, fy and principal point cx, cy
 * (COLMAP's convention, W/2 for a centred one) sees x/z from -cx/fx to
 * (W - cx)/fx; each side is widened by 0.3 of the half width W/(2 fx), as
 * the reference (1.3 tan(fov/2) for its centred cameras, the same floats
 * here when cx = W/2) and gsplat (off-centre principal points) do. */
GT_HD void gs_frustum_lims(float W, float H, float fx, float fy, float cx, float cy, float lim[4])
{
    const float tanx = W / (2.0f * fx), tany = H / (2.0f * fy);
    const float ox = (0.5f * W - cx) / fx, oy = (0.5f * H - cy) / fy; /* 0 when centred */
    lim[0] = 1.3f * tanx - ox;
    lim[1] = 1.3f * tanx + ox;
    lim[2] = 1.3f * tany - oy;
    lim[3] = 1.3f * tany + oy;
}

/* EWA splatting: the 2-D image-space covariance (a b; b c) of the Gaussian
 * with 3-D covariance S (gs_cov3's order) at camera-space (tx, ty, tz),
 * given as txtz = tx/tz, tytz = ty/tz. The affine approximation J of the
 * projection is taken at the mean clamped to the view widened by 30 % of
 * its half width on each side (gs_frustum_lims), as the reference does, so
 * that Gaussians far outside the view do not blow up. No filter yet.
 * gs_ewa_T: the rows T0, T1 of T = J W (W = R) that gs_cov2 uses. */
GT_HD void gs_ewa_T(const float R[9], float fx, float fy, const float lim[4], float txtz, float tytz,
                    float tz, float T0[3], float T1[3])
{
    float cx = fminf(lim[1], fmaxf(-lim[0], txtz)) * tz;
    float cy = fminf(lim[3], fmaxf(-lim[2], tytz)) * tz;
    float j00 = fx / tz, j02 = -(fx * cx) / (tz * tz);
    float j11 = fy / tz, j12 = -(fy * cy) / (tz * tz);
    for (int k = 0; k < 3; k++) {
        T0[k] = j00 * R[k] + j02 * R[6 + k];
        T1[k] = j11 * R[3 + k] + j12 * R[6 + k];
    }
}

GT_HD void gs_cov2(const float R[9], float fx, float fy, const float lim[4], float txtz, float tytz, float tz,
                   const float S[6], float cov[3])
{
    /* T = J W (2 x 3), then T Sigma T^T */
    float T0[3], T1[3];
    gs_ewa_T(R, fx, fy, lim, txtz, tytz, tz, T0, T1);
    float u0[3], u1[3];
    u0[0] = S[0] * T0[0] + S[1] * T0[1] + S[2] * T0[2];
    u0[1] = S[1] * T0[0] + S[3] * T0[1] + S[4] * T0[2];
    u0[2] = S[2] * T0[0] + S[4] * T0[1] + S[5] * T0[2];
    u1[0] = S[0] * T1[0] + S[1] * T1[1] + S[2] * T1[2];
    u1[1] = S[1] * T1[0] + S[3] * T1[1] + S[4] * T1[2];
    u1[2] = S[2] * T1[0] + S[4] * T1[1] + S[5] * T1[2];
    cov[0] = T0[0] * u0[0] + T0[1] * u0[1] + T0[2] * u0[2];
    cov[1] = T0[0] * u1[0] + T0[1] * u1[1] + T0[2] * u1[2];
    cov[2] = T1[0] * u1[0] + T1[1] * u1[1] + T1[2] * u1[2];
}

/* The reference's low-pass filter: +0.3 on the diagonal, so that every
 * Gaussian covers about a pixel. Returns the determinant of the filtered
 * covariance (gs_det2); *det0 gets that of the unfiltered one. */
GT_HD float gs_filter(float cov[3], float *det0)
{
    *det0 = cov[0] * cov[2] - cov[1] * cov[1];
    cov[0] += 0.3f;
    cov[2] += 0.3f;
    return gs_det2(cov[0], cov[1], cov[2]);
}

/* Antialias (Mip-Splatting / gsplat): opacity factor that keeps the
 * integral of a Gaussian the filter widened. */
GT_HD float gs_aa_scale(float det0, float det)
{
    return sqrtf(fmaxf(0.0f, det0 / det));
}

/* Screen-space radius: 3 sigma along the larger eigenvalue of (a b; b c). */
GT_HD float gs_radius(float a, float c, float det)
{
    float mid = 0.5f * (a + c);
    float disc = sqrtf(fmaxf(0.1f, mid * mid - det));
    return ceilf(3.0f * sqrtf(fmaxf(mid + disc, mid - disc)));
}

/* Pixel coordinate of the mean: focal * (t/z) + centre, where centre is
 * the principal point minus 0.5 (pixel centres at integers here, at
 * half-integers in COLMAP's convention): 0.5 (size - 1) for a centred
 * camera, as the reference. */
GT_HD float gs_pixel(float focal, float t_over_z, float centre)
{
    return focal * t_over_z + centre;
}

/* The reference's bounding square of half side `radius` around (px, py),
 * in tiles: r = x0, y0, x1, y1 (exclusive), clamped to the gx x gy grid.
 * Returns the number of tiles (0: the Gaussian is off screen). */
GT_HD int gs_tile_rect(float px, float py, float radius, int gx, int gy, int r[4])
{
    r[0] = gs_clampi((int)((px - radius) / GS_TILE), 0, gx);
    r[1] = gs_clampi((int)((py - radius) / GS_TILE), 0, gy);
    r[2] = gs_clampi((int)((px + radius + GS_TILE - 1) / GS_TILE), 0, gx);
    r[3] = gs_clampi((int)((py + radius + GS_TILE - 1) / GS_TILE), 0, gy);
    return (r[2] - r[0]) * (r[3] - r[1]);
}

/* Inverse of the filtered covariance (a b; b c) with determinant det. */
GT_HD void gs_conic(float a, float b, float c, float det, float conic[3])
{
    float dinv = 1.0f / det;
    conic[0] = c * dinv;
    conic[1] = -b * dinv;
    conic[2] = a * dinv;
}

/* Unit direction of (dx, dy, dz), the camera centre -> mean vector that
 * the SH are evaluated at. GPU: times rsqrtf (the reference's
 * normalisation); CPU: divided by sqrtf. */
GT_HD void gs_view_dir(float dx, float dy, float dz, float d[3])
{
#ifdef __CUDA_ARCH__
    float il = rsqrtf(dx * dx + dy * dy + dz * dz);
    d[0] = dx * il;
    d[1] = dy * il;
    d[2] = dz * il;
#else
    float l = sqrtf(dx * dx + dy * dy + dz * dz);
    d[0] = dx / l;
    d[1] = dy / l;
    d[2] = dz / l;
#endif
}

/* Colour from SH of degree deg (0-3) in unit direction (x, y, z);
 * coefficients sh[k*3 + c]; +0.5 and clamped at 0, as the reference. */
GT_HD void gs_sh_eval(int deg, const float *sh, float x, float y, float z, float rgb[3])
{
    float xx = x * x, yy = y * y, zz = z * z, xy = x * y, yz = y * z, xz = x * z;
    GS_UNROLL
    for (int ch = 0; ch < 3; ch++) {
        const float *s = sh + ch;
        float r = GS_SH_C0 * s[0];
        if (deg > 0) {
            r = r - GS_SH_C1 * y * s[3] + GS_SH_C1 * z * s[6] - GS_SH_C1 * x * s[9];
            if (deg > 1) {
                r = r + GS_SH_C2_0 * xy * s[12] + GS_SH_C2_1 * yz * s[15] +
                    GS_SH_C2_2 * (2.0f * zz - xx - yy) * s[18] + GS_SH_C2_3 * xz * s[21] +
                    GS_SH_C2_4 * (xx - yy) * s[24];
                if (deg > 2) {
                    r = r + GS_SH_C3_0 * y * (3.0f * xx - yy) * s[27] + GS_SH_C3_1 * xy * z * s[30] +
                        GS_SH_C3_2 * y * (4.0f * zz - xx - yy) * s[33] +
                        GS_SH_C3_3 * z * (2.0f * zz - 3.0f * xx - 3.0f * yy) * s[36] +
                        GS_SH_C3_4 * x * (4.0f * zz - xx - yy) * s[39] +
                        GS_SH_C3_5 * z * (xx - yy) * s[42] +
                        GS_SH_C3_6 * x * (xx - 3.0f * yy) * s[45];
                }
            }
        }
        r += 0.5f;
        rgb[ch] = fmaxf(r, 0.0f);
    }
}

/* The Gaussian's exponent at a pixel (dx, dy) = mean - pixel, from its
 * conic (a b c); > 0 only through rounding (the pixel is then skipped). */
GT_HD float gs_power(float a, float b, float c, float dx, float dy)
{
    return -0.5f * (a * dx * dx + c * dy * dy) - b * dx * dy;
}

/* e^x. GPU: the fast __expf of the reference rasterizer; CPU: expf. */
GT_HD float gs_exp(float x)
{
#ifdef __CUDA_ARCH__
    return __expf(x);
#else
    return expf(x);
#endif
}

/* alpha = min(0.99, opacity G) of the Gaussian's value G = e^power at the
 * pixel (the backward keeps G for its gradient); the caller skips it below
 * GS_ALPHA_MIN. */
GT_HD float gs_alpha_of(float opacity, float G)
{
    return fminf(0.99f, opacity * G);
}

/* alpha = min(0.99, opacity e^power) */
GT_HD float gs_alpha(float opacity, float power)
{
    return gs_alpha_of(opacity, gs_exp(power));
}

/* 8-bit value of v: clamped to [0, 1], * 255, rounded. GPU: __saturatef
 * (NaN -> 0). */
GT_HD unsigned char gs_to8(float v)
{
#ifdef __CUDA_ARCH__
    return (unsigned char)(__saturatef(v) * 255.0f + 0.5f);
#else
    v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    return (unsigned char)(v * 255.0f + 0.5f);
#endif
}

#endif
