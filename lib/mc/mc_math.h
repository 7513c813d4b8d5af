/* The per-element math of marching cubes, shared verbatim by the CPU
 * reference (lib/mc: mc_cpu.c, mc_table.c) and the CUDA kernels
 * (kernels/mc): the numbering of a cube's edges, where a vertex lies on its
 * edge, its position in world space and its normal (minus the interpolated
 * central-difference gradient). The case table itself is built once, on the
 * host (mc_table.c), and the kernels upload that one copy.
 *
 * Pure functions of their arguments: no arrays indexed at run time, so that
 * the kernels keep everything in registers. Positions and normals are
 * computed in double from the float samples; nvcc contracts into FMAs and
 * gcc (C11) does not, which the GPU test's 1e-5 relative tolerance covers
 * (the topology and numbering are exact on both sides). */
#ifndef GT_MC_MATH_H
#define GT_MC_MATH_H

#include <math.h>
#include <stdint.h>

#include "common/hostdev.h"
#include "mc/mc.h"

/* loops over the three axes are unrolled on the device (the kernels keep no
 * arrays indexed at run time, so nothing goes to local memory) */
#ifdef __CUDA_ARCH__
#define GT_MC_UNROLL _Pragma("unroll")
#else
#define GT_MC_UNROLL
#endif

/* Edge e of a cube (0..11): axis ax = e >> 2; along the two other axes
 * u < v its lower point is offset by (e & 1, (e >> 1) & 1). The offsets of
 * that point along x, y, z. */
GT_HD void gt_mc_edge_start(int e, int *ax, unsigned *ox, unsigned *oy, unsigned *oz)
{
    *ax = e >> 2;
    const unsigned lo = (unsigned)e & 1u, hi = ((unsigned)e >> 1) & 1u;
    *ox = *ax == 0 ? 0u : lo;                             /* x is u unless the axis is x */
    *oy = *ax == 0 ? lo : *ax == 2 ? hi : 0u;             /* y is u (axis x) or v (axis z) */
    *oz = *ax == 2 ? 0u : hi;                             /* z is v unless the axis is z */
}

/* a read-only load (through the read-only cache on the GPU) */
#ifdef __CUDA_ARCH__
#define GT_MC_LDG(p) __ldg(p)
#else
#define GT_MC_LDG(p) (*(p))
#endif
/* the value at point (i, j, k) of planes from zb of an X x Y x .. volume */
GT_HD float gt_mc_at(const float *vol, int64_t X, int64_t Y, int64_t zb, int64_t i, int64_t j, int64_t k)
{
    return GT_MC_LDG(vol + ((k - zb) * Y + j) * X + i);
}

/* Where the vertex lies on an edge with end values v0, v1: t = (iso - v0) /
 * (v1 - v0) clamped to [GT_MC_TMIN, 1 - GT_MC_TMIN]; 0.5 when a value is not
 * finite or both are equal. */
GT_HD double gt_mc_edge_t(float v0, float v1, double iso)
{
    const double a = v0, b = v1;
    if (!isfinite(a) || !isfinite(b) || a == b) return 0.5;
    double t = (iso - a) / (b - a);
    if (!(t >= GT_MC_TMIN)) t = GT_MC_TMIN;
    if (t > 1.0 - GT_MC_TMIN) t = 1.0 - GT_MC_TMIN;
    return t;
}

/* Central difference along axis a at point (i, j, k) (one-sided at the
 * border; 0 when the axis has one point). */
GT_HD double gt_mc_grad1(const float *vol, int64_t X, int64_t Y, int64_t Z, int64_t zb, int64_t i, int64_t j,
                         int64_t k, int a)
{
    const int64_t n = a == 0 ? X : a == 1 ? Y : Z;
    const int64_t p = a == 0 ? i : a == 1 ? j : k;
    if (n < 2) return 0.0;
    const int64_t lo = p > 0 ? p - 1 : p, hi = p + 1 < n ? p + 1 : p;
    const int64_t dl = lo - p, dh = hi - p;
    const double vlo = gt_mc_at(vol, X, Y, zb, i + (a == 0 ? dl : 0), j + (a == 1 ? dl : 0), k + (a == 2 ? dl : 0));
    const double vhi = gt_mc_at(vol, X, Y, zb, i + (a == 0 ? dh : 0), j + (a == 1 ? dh : 0), k + (a == 2 ? dh : 0));
    return (vhi - vlo) / (double)(hi - lo);
}

/* The vertex of the edge from point (i, j, k) along axis a, whose end
 * values v0, v1 the caller has read: its world position origin + D^T g (g
 * the grid position) into xyz and, when nrm is not NULL, its normal: nsign
 * times the normalised world gradient (D^{-1} times the grid gradient
 * interpolated along the edge), 0 where the gradient vanishes. */
GT_HD void gt_mc_vertex(const float *vol, int64_t X, int64_t Y, int64_t Z, int64_t zb, const double origin[3],
                        const double dir[3][3], const double dinv[3][3], double nsign, double iso, int64_t i,
                        int64_t j, int64_t k, int a, float v0, float v1, float *xyz, float *nrm)
{
    const double t = gt_mc_edge_t(v0, v1, iso);
    const double gx = a == 0 ? (double)i + t : (double)i;
    const double gy = a == 1 ? (double)j + t : (double)j;
    const double gz = a == 2 ? (double)k + t : (double)k;
    GT_MC_UNROLL
    for (int c = 0; c < 3; c++) xyz[c] = (float)(origin[c] + gx * dir[0][c] + gy * dir[1][c] + gz * dir[2][c]);
    if (!nrm) return;
    const int64_t i1 = i + (a == 0), j1 = j + (a == 1), k1 = k + (a == 2);
    double gg[3];
    GT_MC_UNROLL
    for (int c = 0; c < 3; c++)
        gg[c] = (1.0 - t) * gt_mc_grad1(vol, X, Y, Z, zb, i, j, k, c) + t * gt_mc_grad1(vol, X, Y, Z, zb, i1, j1, k1, c);
    double w[3], n2 = 0;
    GT_MC_UNROLL
    for (int c = 0; c < 3; c++) {
        w[c] = dinv[c][0] * gg[0] + dinv[c][1] * gg[1] + dinv[c][2] * gg[2];
        n2 += w[c] * w[c];
    }
    const double sc = (n2 > 0 && isfinite(n2)) ? nsign / sqrt(n2) : 0.0;
    GT_MC_UNROLL
    for (int c = 0; c < 3; c++) nrm[c] = (float)(w[c] * sc);
}

#endif
