/* The per-point stages of the GPU solve (pr_solve_stages.h): the points in
 * key order, each point's node at a level, the density and screening terms
 * scattered from the points, the samples' splat depths and areas, and chi
 * at the samples. The
 * arithmetic is pr_bspline.h's, as in the CPU's gt_pr_solve_cpu.
 *
 * Launch shape: one thread per point (grid-stride, PR_BLOCK threads). The
 * scatter takes one lane per point, in key order, so that a warp's points
 * of one node are combined by a segmented shuffle scan before the atomics:
 * at the coarse levels a node-side loop would walk all points in one
 * thread, and a coarse node gets one atomic per warp, not one per point. */
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "kernels/poisson/pr_solve_stages.h"
#include "poisson/pr_bspline.h"

/* Screening and density terms as a scatter from the points: for every point
 * k (in key order, so the points of one node are consecutive) with level-d
 * node lnode[k], the 27 level-d nodes t around that node get
 *   out[t - ooff] += scale * w_k * F_t(p_k),
 * w_k = 1 (MODE_ONE), area_k val[k] (MODE_VAL) or area_k sum_t' pp[t'] F_t'(p_k)
 * (MODE_PP: the level's functions with coefficients pp at the point, i.e.
 * one application of the screening matrix without a per-point array);
 * MODE_SQ adds scale * area_k * F_t(p_k)^2 (the screening matrix's diagonal).
 * The same sums as the CPU's node-side gather over the 27 neighbour cells. */
enum { MODE_ONE = PR_SCATTER_ONE, MODE_VAL = PR_SCATTER_VAL, MODE_PP = PR_SCATTER_PP, MODE_SQ = PR_SCATTER_SQ };
template <int MODE>
__global__ void k_point_scatter(const gt_pr_dev_octree o, int d, const int32_t *__restrict__ lnode,
                                const float *__restrict__ u, const float *__restrict__ area,
                                const double *__restrict__ val, size_t voff, double scale, double *out, size_t ooff,
                                size_t N, const int *skip)
{
    if (skip && *skip) return;
    const int lane = threadIdx.x & 31;
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t nwarps = ((size_t)gridDim.x * blockDim.x) >> 5;
    const double sc = ldexp(1.0, d);
    for (size_t base = warp * 32; base < N; base += nwarps * 32) {
        const size_t k = base + lane;
        const bool act = k < N;
        const int32_t node = act ? lnode[k] : -1;
        double f[3][3]; /* basis value along each axis at neighbour offset -1, 0, 1 */
        if (act) {
            int64_t c[3];
            gt_pr_cell_of(o.key[(size_t)node], c);
            for (int a = 0; a < 3; a++) {
                const double pa = (double)u[3 * k + a] * sc;
                for (int j = 0; j < 3; j++) f[a][j] = gt_pr_bspline(pa - (double)(c[a] + j - 1) - 0.5);
            }
        } else {
            for (int a = 0; a < 3; a++)
                for (int j = 0; j < 3; j++) f[a][j] = 0.0;
        }
        double w = 0.0;
        if (act) {
            if (MODE == MODE_ONE) {
                w = scale;
            } else if (MODE == MODE_VAL) {
                w = scale * (double)area[k] * val[k];
            } else if (MODE == MODE_SQ) {
                w = scale * (double)area[k];
            } else {
                double uv = 0.0;
                for (int i = 0; i < 27; i++) {
                    const int32_t t = o.nbr[27 * (size_t)node + i];
                    if (t >= 0) uv += val[t - voff] * (f[0][i % 3] * f[1][(i / 3) % 3] * f[2][i / 9]);
                }
                w = scale * (double)area[k] * uv;
            }
        }
        const pr_seg sg = pr_seg_of(node, lane);
        for (int i = 0; i < 27; i++) {
            const int32_t t = act ? o.nbr[27 * (size_t)node + i] : -1;
            const double ft = f[0][i % 3] * f[1][(i / 3) % 3] * f[2][i / 9];
            const double v = pr_seg_sum(w * (MODE == MODE_SQ ? ft * ft : ft), sg, lane);
            if (act && sg.tail && t >= 0 && v != 0.0) atomicAdd(&out[t - ooff], v);
        }
    }
}

__global__ void k_gather_sorted(const float *src, const uint32_t *order, float *dst, size_t n)
{
    GRID_LOOP(k, n)
    {
        size_t i = order[k];
        for (int a = 0; a < 3; a++) dst[3 * k + a] = src[3 * i + a];
    }
}
__global__ void k_leaf(const gt_pr_dev_octree o, size_t s0, size_t n, int32_t *leaf)
{
    GRID_LOOP(q, n)
    {
        size_t v = s0 + q;
        for (uint32_t k = 0; k < o.pt_count[v]; k++) leaf[o.pt_start[v] + k] = (int32_t)v;
    }
}
__global__ void k_up(const int32_t *parent, const int32_t *leaf, int levels, int32_t *out, size_t n)
{
    GRID_LOOP(k, n)
    {
        int32_t v = leaf[k];
        for (int l = 0; l < levels; l++) v = parent[v];
        out[k] = v;
    }
}
/* each sample's splat depth from the densities, and its area */
__global__ void k_sample_depth(const gt_pr_dev_octree o, int Dw, int F, const int32_t *lnode, const float *u,
                               const double *w, double spn, float *depth, float *area, size_t n)
{
    GRID_LOOP(k, n)
    {
        const double dep = gt_pr_sample_depth(o.key, o.nbr, o.parent, lnode[k], Dw, F, u + 3 * k, w, GT_PR_KAPPA * spn);
        depth[k] = (float)dep;
        area[k] = gt_pr_sample_area(dep, spn);
    }
}
__global__ void k_ptval_add(const gt_pr_dev_octree o, int d, const int32_t *lnode, const float *u, const double *coef,
                            double *ptval, size_t N)
{
    GRID_LOOP(k, N) ptval[k] += gt_pr_eval_node(o.key, o.nbr, d, lnode[k], u + 3 * k, coef);
}
__global__ void k_fill(double *a, double v, size_t n)
{
    GRID_LOOP(k, n) a[k] = v;
}

gt_status pr_gather_sorted(const float *src, const uint32_t *order, float *dst, size_t n)
{
    LAUNCH(k_gather_sorted, n, src, order, dst, n);
    return GT_OK;
}
gt_status pr_leaves(const gt_pr_dev_octree &o, size_t s0, size_t n, int32_t *leaf)
{
    LAUNCH(k_leaf, n, o, s0, n, leaf);
    return GT_OK;
}
gt_status pr_up(const int32_t *parent, const int32_t *leaf, int levels, int32_t *out, size_t n)
{
    LAUNCH(k_up, n, parent, leaf, levels, out, n);
    return GT_OK;
}
gt_status pr_point_scatter(int mode, const gt_pr_dev_octree &o, int d, const int32_t *lnode, const float *u,
                           const float *area, const double *val, size_t voff, double scale, double *out,
                           size_t ooff, size_t N, const int *skip)
{
    if (mode == MODE_ONE) LAUNCH(k_point_scatter<MODE_ONE>, N, o, d, lnode, u, area, val, voff, scale, out, ooff, N, skip);
    else if (mode == MODE_VAL) LAUNCH(k_point_scatter<MODE_VAL>, N, o, d, lnode, u, area, val, voff, scale, out, ooff, N, skip);
    else if (mode == MODE_PP) LAUNCH(k_point_scatter<MODE_PP>, N, o, d, lnode, u, area, val, voff, scale, out, ooff, N, skip);
    else LAUNCH(k_point_scatter<MODE_SQ>, N, o, d, lnode, u, area, val, voff, scale, out, ooff, N, skip);
    return GT_OK;
}
gt_status pr_sample_depths(const gt_pr_dev_octree &o, int Dw, int F, const int32_t *lnode, const float *u,
                           const double *w, double spn, float *depth, float *area, size_t n)
{
    LAUNCH(k_sample_depth, n, o, Dw, F, lnode, u, w, spn, depth, area, n);
    return GT_OK;
}
gt_status pr_ptval_add(const gt_pr_dev_octree &o, int d, const int32_t *lnode, const float *u, const double *coef,
                       double *ptval, size_t N)
{
    LAUNCH(k_ptval_add, N, o, d, lnode, u, coef, ptval, N);
    return GT_OK;
}
gt_status pr_fill(double *a, double v, size_t n)
{
    LAUNCH(k_fill, n, a, v, n);
    return GT_OK;
}
