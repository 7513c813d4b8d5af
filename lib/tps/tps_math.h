/* The per-element math of thin-plate splines, written once for the CPU
 * reference (lib/tps) and the CUDA kernels (kernels/tps):
 *
 *   tps_u            the kernel U as a function of r^2
 *   tps_u_at         U(|p - c|) for a point and a control point
 *   tps_affine_plus  f(p) = a0 + A^T p + s, given the kernel sum s
 *   tps_eval_point   f(p) for one point: the sum over the control points in
 *                    order, then tps_affine_plus (the CPU reference; the GPU
 *                    kernel sums the same terms in the same order, tiled)
 *   tps_voxel_world, tps_world_index, tps_trilinear
 *                    the volume warp: voxel -> world, world -> continuous
 *                    index, trilinear sample (0 outside)
 *
 * Double precision on both paths. What differs is the rounding of the same
 * expressions: nvcc contracts a*b+c into one fused multiply-add where gcc
 * (-std=c11) rounds twice, and log/sqrt come from different libraries;
 * tests/tps/test_gpu_tps.c bounds the effect (about n eps sum|terms|). */
#ifndef GT_TPS_MATH_H
#define GT_TPS_MATH_H

#include <math.h>
#include <stddef.h>

#include "common/hostdev.h"

/* kernel codes, as gt_tps_kernel (tps.h) */
#define TPS_KERNEL_R2LOGR 0
#define TPS_KERNEL_R 1

/* U from r^2: 0.5 r^2 log r^2 = r^2 log r (U(0) = 0), or -r. */
GT_HD double tps_u(int kernel, double r2)
{
    if (kernel == TPS_KERNEL_R) return -sqrt(r2);
    return r2 > 0.0 ? 0.5 * r2 * log(r2) : 0.0;
}

/* U(|p - c|) for p = (x, y, z), c = (cx, cy, cz). */
GT_HD double tps_u_at(int kernel, double x, double y, double z, double cx, double cy, double cz)
{
    double dx = x - cx, dy = y - cy, dz = z - cz;
    return tps_u(kernel, dx * dx + dy * dy + dz * dz);
}

/* f = a0 + x ax + y ay + z az + s, with a 4x3 row-major (constant, then the
 * x, y, z rows) and s the kernel sum sum_k w_k U(|p - c_k|). */
GT_HD void tps_affine_plus(const double *a, double x, double y, double z, const double s[3], double f[3])
{
    for (int c = 0; c < 3; c++) f[c] = a[c] + a[3 + c] * x + a[6 + c] * y + a[9 + c] * z + s[c];
}

/* f(p) of the spline with n control points c and weights w (n*3 row-major)
 * and affine part a (tps_affine_plus). */
GT_HD void tps_eval_point(int kernel, size_t n, const double *c, const double *w, const double *a,
                          double x, double y, double z, double f[3])
{
    double s[3] = {0.0, 0.0, 0.0};
    for (size_t k = 0; k < n; k++) {
        double u = tps_u_at(kernel, x, y, z, c[3 * k], c[3 * k + 1], c[3 * k + 2]);
        s[0] += w[3 * k] * u;
        s[1] += w[3 * k + 1] * u;
        s[2] += w[3 * k + 2] * u;
    }
    tps_affine_plus(a, x, y, z, s, f);
}

/* World position q = o + i M[0..2] + j M[3..5] + k M[6..8] of voxel (i, j, k)
 * (row a of M: the space direction of axis a). */
GT_HD void tps_voxel_world(const double *M, const double *o, double i, double j, double k, double q[3])
{
    for (int c = 0; c < 3; c++) q[c] = o[c] + i * M[c] + j * M[3 + c] + k * M[6 + c];
}

/* Continuous voxel index Minv (q - o) of world position q (Minv row-major,
 * the inverse of the matrix with the space directions as columns). */
GT_HD void tps_world_index(const double *Minv, const double *o, const double *q, double idx[3])
{
    double r0 = q[0] - o[0], r1 = q[1] - o[1], r2 = q[2] - o[2];
    idx[0] = Minv[0] * r0 + Minv[1] * r1 + Minv[2] * r2;
    idx[1] = Minv[3] * r0 + Minv[4] * r1 + Minv[5] * r2;
    idx[2] = Minv[6] * r0 + Minv[7] * r1 + Minv[8] * r2;
}

/* Trilinear sample of the float volume f (d0 x d1 x d2, x fastest) at
 * continuous index (x, y, z); 0 outside. A sample within 1e-6 voxel of the
 * grid counts as on it (the warp's rounding must not drop the border of an
 * identity warp). */
GT_HD double tps_trilinear(const float *f, long long d0, long long d1, long long d2, double x, double y,
                           double z)
{
    const double e = 1e-6;
    if (!(x >= -e && y >= -e && z >= -e && x <= d0 - 1 + e && y <= d1 - 1 + e && z <= d2 - 1 + e))
        return 0.0;
    x = fmin(fmax(x, 0.0), (double)(d0 - 1));
    y = fmin(fmax(y, 0.0), (double)(d1 - 1));
    z = fmin(fmax(z, 0.0), (double)(d2 - 1));
    long long i = (long long)x, j = (long long)y, k = (long long)z;
    if (i > d0 - 2) i = d0 - 2 < 0 ? 0 : d0 - 2;
    if (j > d1 - 2) j = d1 - 2 < 0 ? 0 : d1 - 2;
    if (k > d2 - 2) k = d2 - 2 < 0 ? 0 : d2 - 2;
    double fx = x - i, fy = y - j, fz = z - k;
    long long i1 = i + 1 < d0 ? i + 1 : i, j1 = j + 1 < d1 ? j + 1 : j, k1 = k + 1 < d2 ? k + 1 : k;
#define TPS_V(a, b, c) (double)f[(a) + d0 * ((b) + d1 * (c))]
    double c00 = TPS_V(i, j, k) * (1 - fx) + TPS_V(i1, j, k) * fx;
    double c10 = TPS_V(i, j1, k) * (1 - fx) + TPS_V(i1, j1, k) * fx;
    double c01 = TPS_V(i, j, k1) * (1 - fx) + TPS_V(i1, j, k1) * fx;
    double c11 = TPS_V(i, j1, k1) * (1 - fx) + TPS_V(i1, j1, k1) * fx;
#undef TPS_V
    double c0 = c00 * (1 - fy) + c10 * fy, c1 = c01 * (1 - fy) + c11 * fy;
    return c0 * (1 - fz) + c1 * fz;
}

#endif
