/* The iso-value's samples, shared by the CPU reference (lib/poisson/iso.c)
 * and the CUDA kernel (kernels/poisson/pr_iso.cu): the iso-value is the
 * average of chi over the points themselves, each weighted by its sw (1 but
 * for strays, pr_bspline.h: gt_pr_screen_weight), summed per depth-D leaf
 * (gt_pr_leaf_chi_sum).
 *
 * Not PoissonRecon's rule, which evaluates chi once per leaf at the mean of
 * its points (weighted by their number): on a curved
 * surface that mean lies off the surface, on the concave side, by the
 * sagitta of the patch the leaf cuts out (about L^2 / (24 r) for a patch L
 * across of radius of curvature r), where chi is lower (inside) or higher,
 * and the iso-value moves with it. On the torus of issue 17 (tube radius 2
 * finest cells) chi at the leaf means averaged 0.0097 below its average at
 * the points, with dchi/dn = 0.46 per cell: the level set sat 0.021 cells
 * inside the samples (0.024 at the mesh's vertices), PoissonRecon's 0.020
 * for the same reason. The points lie on the surface, so chi averaged at
 * them is the value the level set through them has. */
#ifndef GT_PR_ISO_H
#define GT_PR_ISO_H

#include <stddef.h>
#include <stdint.h>

#include "common/hostdev.h"
#include "poisson/pr_bspline.h"

/* sum over the count sorted points from start of chi at the point (the
 * descent of pr_bspline.h over levels lmin..depth with coefficients coef)
 * times the point's weight sw (gt_pr_screen_weight; a stray's is below 1),
 * in point order; *wsum gets the sum of those weights */
GT_HD double gt_pr_leaf_chi_sum(const uint64_t *key, const int32_t *child, const int32_t *nbr,
                                const size_t *level_start, int lmin, int depth, const double *coef, const float *u,
                                const float *sw, uint32_t start, uint32_t count, double *wsum)
{
    double s = 0.0, w = 0.0;
    for (uint32_t k = start; k < start + count; k++) {
        const double q[3] = {(double)u[3 * (size_t)k], (double)u[3 * (size_t)k + 1], (double)u[3 * (size_t)k + 2]};
        s += (double)sw[k] * gt_pr_eval_descent(key, child, nbr, level_start, q, coef, lmin, depth);
        w += (double)sw[k];
    }
    *wsum = w;
    return s;
}

#endif
