/* Exact k nearest neighbours of every point of a cloud, for the initial
 * scales of Gaussians made from points (gs_capture_init.c): the reference
 * trainer takes the mean squared distance to the 3 nearest other points
 * (simple-knn's distCUDA2, which searches approximately, among neighbours
 * in Morton order); gsplat takes sklearn's exact neighbours. This is exact.
 *
 * A k-d tree over a permutation of the points (median splits on the axis
 * of largest extent, built with OpenMP tasks; leaves of at most 8 points),
 * queried for all points in parallel, in tree order so that consecutive
 * queries touch the same nodes. */
#ifndef GT_GS_KNN_H
#define GT_GS_KNN_H

#include <stddef.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_GS_KNN_MAX_K 16

/* out[i] = the mean of the squared distances from point i to its k nearest
 * other points (xyz: 3 floats per point; distances in double, rounded to
 * float at the end). With fewer than k other points, the mean over those
 * there are; 0 for a single point. Points at the same position are each
 * other's neighbours at distance 0. k in 1..GT_GS_KNN_MAX_K, n < 2^32. */
gt_status gt_gs_knn_mean_sq(const float *xyz, size_t n, int k, float *out);

#ifdef __cplusplus
}
#endif
#endif
