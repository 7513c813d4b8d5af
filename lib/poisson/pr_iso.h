/* The iso-value's samples, shared by the CPU reference (lib/poisson/iso.c)
 * and the CUDA kernel (kernels/poisson/pr_iso.cu): as PoissonRecon does, the
 * points of one depth-D leaf make one sample, at their mean position, with
 * their number as its weight; the iso-value is the weighted average of chi
 * at the samples. */
#ifndef GT_PR_ISO_H
#define GT_PR_ISO_H

#include <stddef.h>
#include <stdint.h>

#include "common/hostdev.h"

/* the mean position q of the count sorted points from start (u: 3 floats
 * per point, unit-cube coordinates), summed in double in point order */
GT_HD void gt_pr_leaf_sample(const float *u, uint32_t start, uint32_t count, double q[3])
{
    double s[3] = {0.0, 0.0, 0.0};
    for (uint32_t k = start; k < start + count; k++)
        for (int a = 0; a < 3; a++) s[a] += (double)u[3 * (size_t)k + a];
    for (int a = 0; a < 3; a++) q[a] = count ? s[a] / (double)count : 0.0;
}

#endif
