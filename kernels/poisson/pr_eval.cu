/* chi at grid points (the corners of the depth-D cells, the middles of their
 * edges), on the GPU: one thread per point,
 * descending the octree like the CPU's gt_pr_eval_levels (lib/poisson/eval.c):
 * at each level the 27 neighbours of the cell holding the point, from the
 * node's table where the cell exists, else by binary search of the level's
 * sorted keys (pr_eval_dev.cuh). */
#include <cuda_runtime.h>

#include <math.h>
#include <string.h>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_eval_dev.cuh"
#include "kernels/poisson/pr_gpu.h"
#include "kernels/poisson/pr_gpu_internal.h"

__global__ void k_eval_grid(const eval_args A, const uint32_t *cxyz, size_t n, int bits, double *out)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = e_eval_grid(A, cxyz[3 * i], cxyz[3 * i + 1], cxyz[3 * i + 2], bits);
}

static gt_status run(const gt_pr_state *s, const uint32_t *cxyz, size_t n, int bits, double *out, void **b)
{
    const gt_pr_octree *o = &s->oct;
    size_t NN = o->nnodes;
    const gt_pr_dev_state *ds = (const gt_pr_dev_state *)s->dev;
    if (!ds || !ds->coef) {
        /* no device-resident state (a CPU-solved one): upload */
        GT_TRY(gt_cu_malloc(&b[0], NN * sizeof(uint64_t), "octree keys"));
        GT_TRY(gt_cu_malloc(&b[1], NN * sizeof(int32_t), "octree children"));
        GT_TRY(gt_cu_malloc(&b[2], 27 * NN * sizeof(int32_t), "octree neighbours"));
        GT_TRY(gt_cu_malloc(&b[3], NN * sizeof(double), "coefficients"));
        GT_TRY(gt_cu_memcpy_h2d(b[0], o->key, NN * sizeof(uint64_t), NULL));
        GT_TRY(gt_cu_memcpy_h2d(b[1], o->child, NN * sizeof(int32_t), NULL));
        GT_TRY(gt_cu_memcpy_h2d(b[2], o->nbr, 27 * NN * sizeof(int32_t), NULL));
        GT_TRY(gt_cu_memcpy_h2d(b[3], s->coef, NN * sizeof(double), NULL));
    }
    GT_TRY(gt_cu_malloc(&b[4], 3 * n * sizeof(uint32_t) + 4, "corners"));
    GT_TRY(gt_cu_malloc(&b[5], n * sizeof(double) + 8, "corner values"));
    GT_TRY(gt_cu_memcpy_h2d(b[4], cxyz, 3 * n * sizeof(uint32_t), NULL));
    eval_args A;
    memset(&A, 0, sizeof A);
    A.key = ds && ds->coef ? ds->oct.key : (const uint64_t *)b[0];
    A.child = ds && ds->coef ? ds->oct.child : (const int32_t *)b[1];
    A.nbr = ds && ds->coef ? ds->oct.nbr : (const int32_t *)b[2];
    A.coef = ds && ds->coef ? ds->coef : (const double *)b[3];
    A.lmin = s->coef_lmin;
    A.depth = o->depth;
    for (int l = 0; l <= o->depth + 1; l++) A.level_start[l] = o->level_start[l];
    if (n) {
        k_eval_grid<<<gt_grid(n, 256), 256>>>(A, (const uint32_t *)b[4], n, bits, (double *)b[5]);
        GT_CU_LAUNCH("k_eval_grid");
    }
    GT_TRY(gt_cu_memcpy_d2h(out, b[5], n * sizeof(double), NULL));
    return GT_OK;
}

extern "C" gt_status gt_pr_eval_grid_cuda(const gt_pr_state *s, const uint32_t *cxyz, size_t n, int bits, double *out)
{
    void *b[6] = {0, 0, 0, 0, 0, 0};
    gt_status st = run(s, cxyz, n, bits, out, b);
    for (int i = 0; i < 6; i++) gt_cu_free(b[i]);
    return st;
}
