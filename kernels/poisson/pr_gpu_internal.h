/* Device-side octree shared by the .cu files of kernels/poisson (C++ only). */
#ifndef GT_KERNELS_PR_GPU_INTERNAL_H
#define GT_KERNELS_PR_GPU_INTERNAL_H

#include <stdint.h>

#include "common/status.h"
#include "common/timer.h"
#include "poisson/poisson.h"

typedef struct gt_pr_dev_octree {
    uint64_t *key;
    int32_t *parent, *child, *nbr;
    uint32_t *pt_start, *pt_count, *order;
} gt_pr_dev_octree;

/* Build on the device from device unit-cube points; h gets the sizes and
 * level starts (its arrays are not filled: see download). */
gt_status gt_pr_dev_octree_build(const float *d_u, size_t n, int depth, gt_pr_dev_octree *d, gt_pr_octree *h,
                                 gt_timings *tm);
gt_status gt_pr_dev_octree_download(const gt_pr_dev_octree *d, gt_pr_octree *h);
void gt_pr_dev_octree_free(gt_pr_dev_octree *d);
/* Density, splat, divergence and cascadic solve on the device (pr_solve.cu);
 * s->oct (host copy) and s->n (sorted normals) must be set; fills s->coef,
 * s->wdens, s->area, s->iso, s->alpha, s->density_depth. */
gt_status gt_pr_dev_solve(const gt_pr_dev_octree *d, const float *d_u_unsorted, gt_pr_state *s, const gt_pr_params *p,
                          gt_timings *tm);

#endif
