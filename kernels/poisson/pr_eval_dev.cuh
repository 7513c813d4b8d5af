/* chi at a depth-D corner on the device, shared by pr_eval.cu and
 * pr_extract.cu: the same descent as the CPU's gt_pr_eval_levels (at each
 * level the 27 neighbours of the cell holding the corner, from the node's
 * table where the cell exists, else by binary search of the level's sorted
 * keys). C++ only. */
#ifndef GT_KERNELS_PR_EVAL_DEV_CUH
#define GT_KERNELS_PR_EVAL_DEV_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "poisson/pr_morton.h"
#include "poisson/poisson.h"

static __device__ __forceinline__ double e_bspline(double t)
{
    double a = fabs(t);
    if (a < 0.5) return 0.75 - t * t;
    if (a < 1.5) return 0.5 * (1.5 - a) * (1.5 - a);
    return 0.0;
}
struct eval_args {
    const uint64_t *key;
    const int32_t *child, *nbr;
    const double *coef;
    unsigned long long level_start[GT_PR_MAX_DEPTH + 2];
    int depth;
};
static __device__ int32_t e_find(const eval_args &A, int level, int64_t x, int64_t y, int64_t z)
{
    int64_t r = (int64_t)1 << level;
    if (x < 0 || y < 0 || z < 0 || x >= r || y >= r || z >= r) return -1;
    uint64_t k = gt_pr_spread3((uint32_t)x) | gt_pr_spread3((uint32_t)y) << 1 | gt_pr_spread3((uint32_t)z) << 2;
    size_t lo = A.level_start[level], hi = A.level_start[level + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (A.key[mid] < k) lo = mid + 1; else hi = mid;
    }
    return (lo < A.level_start[level + 1] && A.key[lo] == k) ? (int32_t)lo : -1;
}
/* chi at corner (cx, cy, cz) in units of the finest cell */
static __device__ double e_eval_corner(const eval_args &A, uint32_t cx, uint32_t cy, uint32_t cz)
{
    const int D = A.depth;
    const uint32_t cxyz[3] = {cx, cy, cz};
    double q[3];
    for (int a = 0; a < 3; a++) q[a] = ldexp((double)cxyz[a], -D);
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
    return sum;
}

#endif
