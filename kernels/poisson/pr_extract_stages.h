/* The stages of the GPU surface extraction that live in their own files,
 * and the launch shape they share (C++ only, kernels/poisson): pr_extract.cu
 * grows the cells and builds the mesh; pr_extract_blocks.cu handles the
 * coarse blocks between the two. */
#ifndef GT_KERNELS_PR_EXTRACT_STAGES_H
#define GT_KERNELS_PR_EXTRACT_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "kernels/common/cu_check.h"
#include "kernels/poisson/pr_eval_dev.cuh"

/* Every kernel is a grid-stride loop, one thread per element, in blocks of
 * BLK; LAUNCH skips an empty grid and checks the launch. */
static const unsigned BLK = 256;
#define GRID_LOOP(i, n) \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)
#define LAUNCH(kern, n, ...)                               \
    do {                                                   \
        if ((n) > 0) {                                     \
            kern<<<gt_grid((n), BLK), BLK>>>(__VA_ARGS__); \
            GT_CU_LAUNCH(#kern);                           \
        }                                                  \
    } while (0)

/* coarse blocks (pr_adapt.h): nb node indices (level, then key order) */
struct pr_blocks {
    const uint64_t *node;
    size_t nb;
    const uint8_t *tree;
    int virt; /* gt_pr_tree_virtual */
};

/* idx[i] = i and flag[i] = whether node i is a leaf of the extraction tree,
 * for i < n (the nodes above depth D) */
gt_status pr_blocks_leaves(const uint8_t *tree, size_t n, uint64_t *idx, uint8_t *flag);
/* the cells inside coarse blocks make nothing: their masks to 0 */
gt_status pr_blocks_drop_cells(const eval_args &A, const uint64_t *cells, uint8_t *mask, size_t n, const pr_blocks &B);
/* chi at every block's 27 lattice points into val (27 per block): from the
 * corner set (ck, cv; nc) where a cell has the point as a corner, else
 * evaluated */
gt_status pr_blocks_values(const eval_args &A, const pr_blocks &B, const uint64_t *ck, const double *cv, size_t nc,
                           double *val);
/* flag[b]: whether the surface crosses block b (lattice points on both sides) */
gt_status pr_blocks_crossed(const pr_blocks &B, const double *val, double iso, uint8_t *flag);
/* per block b: loop vertices (ecnt[ns + b]), triangles (tcnt[ns + b]) and
 * added vertices (acnt[b]) */
gt_status pr_blocks_counts(const eval_args &A, const pr_blocks &B, const double *val, double iso, size_t ns,
                           uint64_t *ecnt, uint64_t *tcnt, uint64_t *acnt);
/* the blocks' crossings bisected down to depth-D edges: their keys into ek
 * (at the block's edge offset eoff[ns + b]) and bk (from the first block's) */
gt_status pr_blocks_keys(const eval_args &A, const pr_blocks &B, const double *val, double iso, size_t ns,
                         const uint64_t *eoff, uint64_t *ek, uint64_t *bk);
/* the blocks' triangles (at toff[ns + b]) and their added vertices (from
 * nv + aoff[b]; the nv edge vertices E, whose positions are in xyz, first) */
gt_status pr_blocks_tris(const eval_args &A, const pr_blocks &B, const double *val, double iso, size_t ns,
                         const uint64_t *eoff, const uint64_t *toff, const uint64_t *aoff, const uint64_t *bk,
                         const uint64_t *E, size_t nv, float *xyz, int32_t *tri);

#endif
