/* CUDA path of the Poisson reconstruction (extern "C"; called by lib/poisson).
 * Same algorithm as the CPU reference in lib/poisson. */
#ifndef GT_KERNELS_PR_GPU_H
#define GT_KERNELS_PR_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/timer.h"
#include "poisson/poisson.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Build the octree on the GPU from unit-cube points (n*3 floats, host) and
 * copy it back into `o` (host arrays, same layout as gt_pr_octree_build_cpu). */
gt_status gt_pr_octree_build_cuda(const float *ucoords, size_t n, int depth, int full_depth, gt_pr_octree *o,
                                  gt_timings *tm);

/* Full GPU front end from the normalised points: octree, density, splat,
 * divergence and the cascadic solve on the GPU; fills `s` (host copies) like
 * gt_pr_prepare_cpu followed by gt_pr_solve_cpu, and frees pts' arrays as
 * gt_pr_prepare_cpu does. */
gt_status gt_pr_prepare_cuda(gt_pr_points *pts, const gt_pr_params *p, gt_timings *tm, gt_pr_state *s);

/* chi at n grid points cxyz (3 per point, in units of 2^-bits of the unit
 * cube: bits = depth for the depth-D corners, depth + 1 for the middles of
 * their edges) of the solved state s, into out: the same descent as the
 * CPU's evaluation (neighbour tables where the cell exists, binary search of
 * the level's sorted keys where it does not). */
gt_status gt_pr_eval_grid_cuda(const gt_pr_state *s, const uint32_t *cxyz, size_t n, int bits, double *out);
/* Release the device-resident octree and solution of a state (s->dev). */
void gt_pr_dev_state_free(void *dev);

/* The extraction's mesh (gt_pr_extract_mesh_cpu, defined in poisson.h) on
 * the GPU, from a device-resident octree: d_key (sorted per level), d_child
 * (first of 8 children or -1), d_nbr (27 per node) and d_coef (chi's
 * coefficient per node) on the device; level_start (host, depth + 2 entries)
 * and depth as in gt_pr_octree; d_tree: the extraction tree's flags per
 * node (gt_pr_state.tree), or NULL for the uniform mesh, and its mode
 * (gt_pr_tree_virtual).
 * Fills out->nvert, ntri, xyz, tri (host arrays that gt_pr_mesh_free frees)
 * and iso; on failure sets none of them.
 * keep: leave xyz and tri on the device instead, in out->dev (gt_pr_mesh_free
 * frees it; gt_pr_dev_mesh_get reads it). */
gt_status gt_pr_extract_dev(const uint64_t *d_key, const int32_t *d_child, const int32_t *d_nbr,
                            const double *d_coef, const uint8_t *d_tree, int tree_virtual, const size_t *level_start,
                            int lmin, int depth, double iso, const double center[3], double side, bool keep,
                            gt_pr_mesh *out);
/* A mesh left on the device: its arrays (nvert*3 floats, ntri*3 ints, on
 * the device, complete) and their release. */
void gt_pr_dev_mesh_get(const void *dev, const float **xyz, const int32_t **tri);
void gt_pr_dev_mesh_free(void *dev);

/* The counterpart of gt_pr_extract_cpu: uploads s's octree and coefficients,
 * runs gt_pr_extract_dev, then gt_pr_mesh_post on the host. */
gt_status gt_pr_extract_cuda(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out);

#ifdef __cplusplus
}
#endif
#endif
