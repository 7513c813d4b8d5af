/* The iso-value on the GPU, as the CPU's gt_pr_iso_cpu (lib/poisson/iso.c):
 * one thread per depth-D leaf writes the weighted sum of chi at its points
 * (gt_pr_leaf_chi_sum, pr_iso.h) and their weights' sum; two CUB sums give
 * the weighted average over the points. */
#include <cuda_runtime.h>

#include <string.h>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_eval_dev.cuh"
#include "kernels/poisson/pr_gpu_internal.h"
#include "poisson/pr_iso.h"

namespace {

__global__ void k_leaf_samples(const eval_args A, const uint32_t *pt_start, const uint32_t *pt_count,
                               const float *u, const float *sw, size_t s0, size_t n, double *val, double *w)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t cnt = pt_count[s0 + i];
        double v = 0.0, ws = 0.0;
        if (cnt)
            v = gt_pr_leaf_chi_sum(A.key, A.child, A.nbr, A.level_start, A.lmin, A.depth, A.coef, u, sw, pt_start[s0 + i],
                                   cnt, &ws);
        val[i] = v;
        w[i] = ws;
    }
}

gt_status run(const eval_args &A, const gt_pr_dev_octree *o, const float *d_u, const float *d_sw, size_t s0,
              size_t n, double *val, double *w, double *iso)
{
    double sum = 0, wsum = 0;
    if (n) {
        k_leaf_samples<<<gt_grid(n, 256), 256>>>(A, o->pt_start, o->pt_count, d_u, d_sw, s0, n, val, w);
        GT_CU_LAUNCH("k_leaf_samples");
        GT_TRY(gt_cu_reduce_sum_f64(val, n, &sum, NULL, NULL));
        GT_TRY(gt_cu_reduce_sum_f64(w, n, &wsum, NULL, NULL));
    }
    *iso = wsum > 0 ? sum / wsum : 0.0;
    return GT_OK;
}

} // namespace

gt_status gt_pr_dev_iso(const gt_pr_dev_octree *o, const size_t *level_start, int lmin, int depth, const float *d_u,
                        const float *d_sw, const double *d_coef, double *iso)
{
    eval_args A;
    memset(&A, 0, sizeof A);
    A.key = o->key;
    A.child = o->child;
    A.nbr = o->nbr;
    A.coef = d_coef;
    A.lmin = lmin;
    A.depth = depth;
    for (int l = 0; l <= depth + 1; l++) A.level_start[l] = level_start[l];
    const size_t s0 = level_start[depth], n = level_start[depth + 1] - s0;
    double *val = NULL, *w = NULL;
    gt_status st = gt_cu_malloc((void **)&val, (n ? n : 1) * sizeof(double), "iso samples");
    if (st == GT_OK) st = gt_cu_malloc((void **)&w, (n ? n : 1) * sizeof(double), "iso samples");
    if (st == GT_OK) st = run(A, o, d_u, d_sw, s0, n, val, w, iso);
    gt_cu_free(val);
    gt_cu_free(w);
    return st;
}
