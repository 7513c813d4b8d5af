/* chi at the corners of the depth-D cells, on the GPU: one thread per corner,
 * descending the octree like the CPU's eval_levels (lib/poisson/extract.c):
 * at each level the 27 neighbours of the cell holding the corner, from the
 * node's table where the cell exists, else by binary search of the level's
 * sorted keys. */
#include <cuda_runtime.h>

#include <math.h>
#include <string.h>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_runtime.h"
#include "kernels/poisson/pr_gpu.h"
#include "kernels/poisson/pr_gpu_internal.h"

__device__ __forceinline__ double e_bspline(double t)
{
    double a = fabs(t);
    if (a < 0.5) return 0.75 - t * t;
    if (a < 1.5) return 0.5 * (1.5 - a) * (1.5 - a);
    return 0.0;
}
__device__ __forceinline__ uint64_t e_spread3(uint32_t v)
{
    uint64_t x = v & 0x1fffffu;
    x = (x | x << 32) & 0x1f00000000ffffull;
    x = (x | x << 16) & 0x1f0000ff0000ffull;
    x = (x | x << 8) & 0x100f00f00f00f00full;
    x = (x | x << 4) & 0x10c30c30c30c30c3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}
struct eval_args {
    const uint64_t *key;
    const int32_t *child, *nbr;
    const double *coef;
    unsigned long long level_start[GT_PR_MAX_DEPTH + 2];
    int depth;
};
__device__ int32_t e_find(const eval_args &A, int level, int64_t x, int64_t y, int64_t z)
{
    int64_t r = (int64_t)1 << level;
    if (x < 0 || y < 0 || z < 0 || x >= r || y >= r || z >= r) return -1;
    uint64_t k = e_spread3((uint32_t)x) | e_spread3((uint32_t)y) << 1 | e_spread3((uint32_t)z) << 2;
    size_t lo = A.level_start[level], hi = A.level_start[level + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (A.key[mid] < k) lo = mid + 1; else hi = mid;
    }
    return (lo < A.level_start[level + 1] && A.key[lo] == k) ? (int32_t)lo : -1;
}
__global__ void k_eval_corners(const eval_args A, const uint32_t *cxyz, size_t n, double *out)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const int D = A.depth;
        double q[3];
        for (int a = 0; a < 3; a++) q[a] = ldexp((double)cxyz[3 * i + a], -D);
        int inside = 1;
        for (int a = 0; a < 3; a++) inside &= q[a] >= 0 && q[a] < 1;
        int32_t node = inside ? 0 : -1;
        double sum = 0.0;
        for (int d = 0; d <= D; d++) {
            double sc = ldexp(1.0, d);
            int64_t c[3];
            for (int a = 0; a < 3; a++) c[a] = (int64_t)floor(q[a] * sc);
            for (int j = 0; j < 27; j++) {
                int64_t nc[3] = {c[0] + j % 3 - 1, c[1] + (j / 3) % 3 - 1, c[2] + j / 9 - 1};
                int32_t t = node >= 0 ? A.nbr[27 * (size_t)node + j] : e_find(A, d, nc[0], nc[1], nc[2]);
                if (t < 0) continue;
                double f = 1.0;
                for (int a = 0; a < 3; a++) f *= e_bspline(q[a] * sc - (double)nc[a] - 0.5);
                sum += A.coef[t] * f;
            }
            if (d < D) {
                if (node >= 0 && A.child[node] >= 0) {
                    int cb = 0;
                    for (int a = 0; a < 3; a++) {
                        int64_t cc = (int64_t)floor(q[a] * sc * 2.0);
                        if (cc < 0) cc = 0;
                        cb |= (int)(cc & 1) << a;
                    }
                    node = A.child[node] + cb;
                } else {
                    node = -1;
                }
            }
        }
        out[i] = sum;
    }
}

static gt_status run(const gt_pr_state *s, const uint32_t *cxyz, size_t n, double *out, void **b)
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
    A.depth = o->depth;
    for (int l = 0; l <= o->depth + 1; l++) A.level_start[l] = o->level_start[l];
    if (n) {
        k_eval_corners<<<gt_grid(n, 256), 256>>>(A, (const uint32_t *)b[4], n, (double *)b[5]);
        GT_CU_LAUNCH("k_eval_corners");
    }
    GT_TRY(gt_cu_memcpy_d2h(out, b[5], n * sizeof(double), NULL));
    return GT_OK;
}

extern "C" gt_status gt_pr_eval_corners_cuda(const gt_pr_state *s, const uint32_t *cxyz, size_t n, double *out)
{
    void *b[6] = {0, 0, 0, 0, 0, 0};
    gt_status st = run(s, cxyz, n, out, b);
    for (int i = 0; i < 6; i++) gt_cu_free(b[i]);
    return st;
}
