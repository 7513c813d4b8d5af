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

#endif
