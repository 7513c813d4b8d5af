/* chi at a grid point (a depth-D corner, an edge's middle) on the device, shared by pr_eval.cu and
 * pr_extract.cu: the descent of pr_bspline.h (gt_pr_eval_descent), the same
 * function as the CPU's gt_pr_eval_levels. C++ only. */
#ifndef GT_KERNELS_PR_EVAL_DEV_CUH
#define GT_KERNELS_PR_EVAL_DEV_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "poisson/poisson.h"
#include "poisson/pr_bspline.h"

struct eval_args {
    const uint64_t *key;
    const int32_t *child, *nbr;
    const double *coef;
    size_t level_start[GT_PR_MAX_DEPTH + 2];
    int lmin, depth; /* the levels with coefficients (gt_pr_state.coef_lmin) */
};
/* chi at grid point (cx, cy, cz) in units of 2^-bits of the unit cube */
static __device__ double e_eval_grid(const eval_args &A, uint32_t cx, uint32_t cy, uint32_t cz, int bits)
{
    const double q[3] = {ldexp((double)cx, -bits), ldexp((double)cy, -bits), ldexp((double)cz, -bits)};
    return gt_pr_eval_descent(A.key, A.child, A.nbr, A.level_start, q, A.coef, A.lmin, A.depth);
}
/* chi at corner (cx, cy, cz) in units of the finest cell */
static __device__ double e_eval_corner(const eval_args &A, uint32_t cx, uint32_t cy, uint32_t cz)
{
    return e_eval_grid(A, cx, cy, cz, A.depth);
}

#endif
