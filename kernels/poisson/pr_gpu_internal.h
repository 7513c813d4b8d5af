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
gt_status gt_pr_dev_octree_build(const float *d_u, size_t n, int depth, int full_depth, gt_pr_dev_octree *d, gt_pr_octree *h,
                                 gt_timings *tm);
gt_status gt_pr_dev_octree_download(const gt_pr_dev_octree *d, gt_pr_octree *h);
void gt_pr_dev_octree_free(gt_pr_dev_octree *d);
/* Density, splat, divergence and cascadic solve on the device (pr_solve.cu)
 * from the unsorted unit-cube points and normals on the device; s->oct needs
 * the sizes and level starts. Sets s->iso, s->alpha, s->density_depth and
 * returns the coefficients (device, one per node) and the extraction tree's
 * flags (device, one per node, or NULL; poisson.h's s->tree); the caller
 * frees both. When the host octree was downloaded (s->oct.key != NULL) it
 * also fills the host copies s->coef, s->wdens, s->area, s->sw and s->tree. */
gt_status gt_pr_dev_solve(const gt_pr_dev_octree *d, const float *d_u_unsorted, const float *d_n_unsorted,
                          gt_pr_state *s, const gt_pr_params *p, gt_timings *tm, double **d_coef, uint8_t **d_tree);

/* The iso-value (gt_pr_iso_cpu's) from the device octree, the key-sorted
 * unit-cube points d_u, their weights d_sw (gt_pr_state's sw) and the
 * coefficients d_coef (pr_iso.cu). */
gt_status gt_pr_dev_iso(const gt_pr_dev_octree *o, const size_t *level_start, int lmin, int depth, const float *d_u,
                        const float *d_sw, const double *d_coef, double *iso);

/* What stays on the device from the solve to the extraction (gt_pr_state.dev). */
typedef struct gt_pr_dev_state {
    gt_pr_dev_octree oct;
    double *coef;
    uint8_t *tree;   /* the extraction tree's flags per node, or NULL */
} gt_pr_dev_state;

#endif
