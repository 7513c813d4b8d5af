/* The per-cell math of the surface extraction (marching tetrahedra on the
 * Kuhn split of the depth-D cells, defined in poisson.h), shared verbatim by
 * the CPU reference (lib/poisson/extract.c) and the CUDA kernels
 * (kernels/poisson/pr_extract.cu): corner keys, a tetrahedron's inside mask,
 * crossed edges, mixed faces and the vertex position.
 *
 * The meshes of both paths must be equal, so the vertex position is computed
 * without contraction into fused multiply-adds on both sides: nvcc contracts
 * by default, hence the explicitly rounded operations on the device (C11 in
 * ISO mode does not contract: -std=c11 implies -ffp-contract=off). */
#ifndef GT_PR_MT_H
#define GT_PR_MT_H

#include <math.h>
#include <stdint.h>

#include "common/hostdev.h"
#include "poisson/pr_morton.h"

/* the key of corner c (bits x, y, z) of the cell (x, y, z) */
GT_HD uint64_t gt_pr_corner_key(uint32_t x, uint32_t y, uint32_t z, int c)
{
    return gt_pr_key(x + (c & 1), y + ((c >> 1) & 1), z + ((c >> 2) & 1));
}
/* inside mask of tetrahedron t (bit k: its corner k) from the cell's mask m;
 * tet: gt_pr_kuhn_tet or the device's copy */
GT_HD int gt_pr_tet_mask(int m, const uint8_t (*tet)[4], int t)
{
    int sub = 0;
    for (int k = 0; k < 4; k++) sub |= ((m >> tet[t][k]) & 1) << k;
    return sub;
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

/* The vertex on the edge from corner lo to corner up (values va, vb): at
 * t = (iso - va) / (vb - va) clamped to [0, 1] (0 when not a number), in
 * unit-cube coordinates u = ldexp(lo + t (up - lo), -D), stored as
 * (float)((u - 0.5) side + center) */
GT_HD void gt_pr_mt_vertex(const uint32_t lo[3], const uint32_t up[3], double va, double vb, double iso, int D,
                           double side, const double center[3], float *xyz)
{
    double tt = gt_pr_div_rn(gt_pr_sub_rn(iso, va), gt_pr_sub_rn(vb, va));
    if (!(tt >= 0)) tt = 0;
    if (tt > 1) tt = 1;
    for (int a = 0; a < 3; a++) {
        double pa = (double)lo[a], pb = (double)up[a];
        double u = ldexp(gt_pr_add_rn(pa, gt_pr_mul_rn(tt, gt_pr_sub_rn(pb, pa))), -D);
        xyz[a] = (float)gt_pr_add_rn(gt_pr_mul_rn(gt_pr_sub_rn(u, 0.5), side), center[a]);
    }
}

#endif
