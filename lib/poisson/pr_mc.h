/* The per-cell math of the surface extraction (marching cubes on the depth-D
 * cells, defined in poisson.h), shared verbatim by the CPU reference
 * (lib/poisson/extract.c) and the CUDA kernels (kernels/poisson/pr_extract.cu):
 * corner keys, a cube edge's local code, crossed edges, mixed faces, the root
 * of chi - iso on an edge and the vertex position.
 *
 * The meshes of both paths must be equal, so the root and the position are
 * computed without contraction into fused multiply-adds on both sides: nvcc
 * contracts by default, hence the explicitly rounded operations on the device
 * (C11 in ISO mode does not contract: -std=c11 implies -ffp-contract=off). */
#ifndef GT_PR_MC_H
#define GT_PR_MC_H

#include <math.h>
#include <stdint.h>

#include "common/hostdev.h"
#include "mc/mc_math.h"
#include "poisson/poisson.h"
#include "poisson/pr_morton.h"

/* the key of corner c (bits x, y, z) of the cell (x, y, z) */
GT_HD uint64_t gt_pr_corner_key(uint32_t x, uint32_t y, uint32_t z, int c)
{
    return gt_pr_key(x + (c & 1), y + ((c >> 1) & 1), z + ((c >> 2) & 1));
}
/* the local code (GT_PR_LEDGE: lower corner, direction mask) of edge e of a
 * cube in marching cubes' numbering (mc_math.h, gt_mc_edge_start), so that
 * the case table of lib/mc names the poisson cell's edges */
GT_HD int gt_pr_mc_edge_code(int e)
{
    int ax;
    unsigned ox, oy, oz;
    gt_mc_edge_start(e, &ax, &ox, &oy, &oz);
    return GT_PR_LEDGE((int)(ox | oy << 1 | oz << 2), 1 << ax);
}
/* is the local edge `code` (GT_PR_LEDGE) crossed in a cell of mask m? */
GT_HD int gt_pr_edge_crossed(int m, int code)
{
    int a = code & 7, b = a | code >> 3;
    return ((m >> a) ^ (m >> b)) & 1;
}
/* does the face (axis a, side 0/1) of a cell of mask m have mixed corners? */
GT_HD int gt_pr_face_mixed(int m, int a, int side)
{
    int cnt = 0;
    for (int c = 0; c < 8; c++)
        if (((c >> a) & 1) == side) cnt += (m >> c) & 1;
    return cnt != 0 && cnt != 4;
}

/* a + b, a - b, a * b, a / b rounded to nearest, never fused */
GT_HD double gt_pr_add_rn(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}
GT_HD double gt_pr_sub_rn(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}
GT_HD double gt_pr_mul_rn(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
GT_HD double gt_pr_div_rn(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __ddiv_rn(a, b);
#else
    return a / b;
#endif
}

GT_HD double gt_pr_sqrt_rn(double a)
{
#ifdef __CUDA_ARCH__
    return __dsqrt_rn(a);
#else
    return sqrt(a);
#endif
}

/* Where chi = iso on a cube edge of the depth-D grid, as a fraction t of the
 * edge from its lower end: chi restricted to such an edge is one quadratic
 * polynomial (every level's B-splines have their knots on the depth-D grid
 * points, none inside the edge), so its values va, vm, vb at the ends and the
 * middle give it exactly, and t is the root of that quadratic in [0, 1]
 * (exactly one there: the ends are on either side of iso). Clamped to
 * [0, 1]; the linear interpolation of va and vb when the root is not a
 * number (0 when that is not one either). */
GT_HD double gt_pr_edge_root(double va, double vm, double vb, double iso)
{
    const double c = gt_pr_sub_rn(va, iso), gm = gt_pr_sub_rn(vm, iso), g1 = gt_pr_sub_rn(vb, iso);
    double t = gt_pr_div_rn(c, gt_pr_sub_rn(c, g1)); /* linear */
    /* g(t) = c + b t + a t^2 through (0, c), (1/2, gm), (1, g1) */
    const double a = gt_pr_sub_rn(gt_pr_mul_rn(2.0, gt_pr_add_rn(c, g1)), gt_pr_mul_rn(4.0, gm));
    const double b = gt_pr_sub_rn(gt_pr_sub_rn(gt_pr_mul_rn(4.0, gm), gt_pr_mul_rn(3.0, c)), g1);
    if (a != 0.0) {
        double disc = gt_pr_sub_rn(gt_pr_mul_rn(b, b), gt_pr_mul_rn(gt_pr_mul_rn(4.0, a), c));
        if (disc < 0.0) disc = 0.0; /* rounding: a sign change has a real root */
        const double sq = gt_pr_sqrt_rn(disc);
        const double q = gt_pr_mul_rn(-0.5, gt_pr_add_rn(b, b >= 0.0 ? sq : -sq));
        if (q != 0.0) {
            /* the two roots (stable forms); the one nearer [0, 1] */
            const double r1 = gt_pr_div_rn(q, a), r2 = gt_pr_div_rn(c, q);
            const double d1 = r1 < 0.0 ? -r1 : r1 > 1.0 ? r1 - 1.0 : 0.0;
            const double d2 = r2 < 0.0 ? -r2 : r2 > 1.0 ? r2 - 1.0 : 0.0;
            const double r = d1 < d2 ? r1 : d2 < d1 ? r2 : (fabs(r1 - t) <= fabs(r2 - t) ? r1 : r2);
            if (r == r) t = r; /* not NaN */
        }
    }
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    return t;
}

/* The vertex at fraction t of the edge from corner lo to corner up: in
 * unit-cube coordinates u = ldexp(lo + t (up - lo), -D), stored as
 * (float)((u - 0.5) side + center) */
GT_HD void gt_pr_edge_vertex(const uint32_t lo[3], const uint32_t up[3], double tt, int D, double side,
                             const double center[3], float *xyz)
{
    for (int a = 0; a < 3; a++) {
        double pa = (double)lo[a], pb = (double)up[a];
        double u = ldexp(gt_pr_add_rn(pa, gt_pr_mul_rn(tt, gt_pr_sub_rn(pb, pa))), -D);
        xyz[a] = (float)gt_pr_add_rn(gt_pr_mul_rn(gt_pr_sub_rn(u, 0.5), side), center[a]);
    }
}

#endif
