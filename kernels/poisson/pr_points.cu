/* The per-point stages of the GPU solve (pr_solve_stages.h): the points in
 * key order, each point's node at a level, the density and screening terms
 * scattered from the points, the samples' splat depths, areas and
 * screening weights, and chi at the samples. The
 * arithmetic is pr_bspline.h's, as in the CPU's gt_pr_solve_cpu.
 *
 * Launch shape: one thread per point (grid-stride, PR_BLOCK threads); the
 * scatter takes a run of consecutive points per lane, in key order (see
 * k_point_scatter): at the coarse levels a node-side loop would walk all
 * points in one thread, and a coarse node gets a few atomics per warp, not
 * one per point. */
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "kernels/poisson/pr_solve_stages.h"
#include "poisson/pr_bspline.h"

/* Screening and density terms as a scatter from the points: for every point
 * k (in key order, so the points of one node are consecutive) with level-d
 * node lnode[k], the 27 level-d nodes t around that node get
 *   out[t - ooff] += scale * w_k * F_t(p_k),
 * w_k = 1 (MODE_ONE), sw_k val[k] (MODE_VAL) or sw_k sum_t' pp[t'] F_t'(p_k)
 * (MODE_PP: the level's functions with coefficients pp at the point, i.e.
 * one application of the screening matrix without a per-point array);
 * MODE_SQ adds scale * sw_k * F_t(p_k)^2 (the screening matrix's diagonal).
 * sw_k: the sample's screening weight (gt_pr_screen_weight; NULL: 1).
 * The same sums as the CPU's node-side gather over the 27 neighbour cells.
 *
 * Two shapes, by the level's points per node:
 * - k_point_scatter_lane (the fine levels, a few points per node): a lane
 *   per point; the lanes of one node are joined by the warp's segmented
 *   scan before the atomics.
 * - k_point_scatter_runs (the coarse levels, tens to thousands of points
 *   per node): each lane takes `run` consecutive points and sums them in
 *   registers while they stay in one node (MODE_PP reads the node's 27
 *   coefficients once per node, not once per point); a finished node goes
 *   out with atomics, each lane's last, open node through the segmented
 *   scan: one scan per `run` points instead of one per point. At the fine
 *   levels its register sums and extra atomics cost more than they save
 *   (1M points at depth 10: 227 against 153 us per call). */
enum { MODE_ONE = PR_SCATTER_ONE, MODE_VAL = PR_SCATTER_VAL, MODE_PP = PR_SCATTER_PP, MODE_SQ = PR_SCATTER_SQ };

/* the 27 level-d functions around cell c at point k: one B-spline value per
 * axis and neighbour offset -1, 0, 1 (sc = 2^d) */
__device__ __forceinline__ void point_axes(const float *u, size_t k, double sc, const int64_t c[3], double f[3][3])
{
#pragma unroll
    for (int a = 0; a < 3; a++) {
        const double pa = (double)u[3 * k + a] * sc;
#pragma unroll
        for (int j = 0; j < 3; j++) f[a][j] = gt_pr_bspline(pa - (double)(c[a] + j - 1) - 0.5);
    }
}
/* neighbour i's function value from point_axes' f */
__device__ __forceinline__ double basis27(const double f[3][3], int i)
{
    return f[0][i % 3] * f[1][(i / 3) % 3] * f[2][i / 9];
}
/* w_k of the mode (uv: MODE_PP's value of the level's functions with the
 * coefficients pp at the point) */
template <int MODE>
__device__ __forceinline__ double point_weight(double scale, const float *sw, const double *val, size_t k, double uv)
{
    const double a = sw ? (double)sw[k] : 1.0;
    if (MODE == MODE_ONE) return scale;
    if (MODE == MODE_VAL) return scale * a * val[k];
    if (MODE == MODE_SQ) return scale * a;
    return scale * a * uv;
}

__device__ __forceinline__ void flush27(const gt_pr_dev_octree &o, int32_t node, double acc[27], double *out, size_t ooff)
{
#pragma unroll
    for (int i = 0; i < 27; i++) {
        if (acc[i] != 0.0) {
            const int32_t t = o.nbr[27 * (size_t)node + i];
            if (t >= 0) atomicAdd(&out[t - ooff], acc[i]);
        }
        acc[i] = 0.0;
    }
}

template <int MODE>
__global__ void k_point_scatter_lane(const gt_pr_dev_octree o, int d, const int32_t *__restrict__ lnode,
                                const float *__restrict__ u, const float *__restrict__ sw,
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
        double f[3][3] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
        double w = 0.0;
        if (act) {
            int64_t c[3];
            gt_pr_cell_of(o.key[(size_t)node], c);
            point_axes(u, k, sc, c, f);
            double uv = 0.0;
            if (MODE == MODE_PP)
                for (int i = 0; i < 27; i++) {
                    const int32_t t = o.nbr[27 * (size_t)node + i];
                    if (t >= 0) uv += val[t - voff] * basis27(f, i);
                }
            w = point_weight<MODE>(scale, sw, val, k, uv);
        }
        const pr_seg sg = pr_seg_of(node, lane);
        for (int i = 0; i < 27; i++) {
            const int32_t t = act ? o.nbr[27 * (size_t)node + i] : -1;
            const double ft = basis27(f, i);
            const double v = pr_seg_sum(w * (MODE == MODE_SQ ? ft * ft : ft), sg, lane);
            if (act && sg.tail && t >= 0 && v != 0.0) atomicAdd(&out[t - ooff], v);
        }
    }
}

template <int MODE>
__global__ void k_point_scatter_runs(const gt_pr_dev_octree o, int d, const int32_t *__restrict__ lnode,
                                const float *__restrict__ u, const float *__restrict__ sw,
                                const double *__restrict__ val, size_t voff, double scale, double *out, size_t ooff,
                                size_t N, int run, const int *skip)
{
    if (skip && *skip) return;
    const int lane = threadIdx.x & 31;
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t nwarps = ((size_t)gridDim.x * blockDim.x) >> 5;
    const size_t span = 32 * (size_t)run;
    const double sc = ldexp(1.0, d);
    for (size_t base = warp * span; base < N; base += nwarps * span) {
        const size_t k0 = base + (size_t)lane * run, k1 = k0 + run < N ? k0 + run : N;
        int32_t cur = -1;
        int64_t c[3] = {0, 0, 0};
        double acc[27], pv[27];
#pragma unroll
        for (int i = 0; i < 27; i++) acc[i] = pv[i] = 0.0;
        for (size_t k = k0; k < k1; k++) {
            const int32_t node = lnode[k];
            if (node != cur) {
                if (cur >= 0) flush27(o, cur, acc, out, ooff);
                cur = node;
                gt_pr_cell_of(o.key[(size_t)node], c);
                if (MODE == MODE_PP) {
#pragma unroll
                    for (int i = 0; i < 27; i++) {
                        const int32_t t = o.nbr[27 * (size_t)node + i];
                        pv[i] = t >= 0 ? val[t - voff] : 0.0;
                    }
                }
            }
            double f[3][3];
            point_axes(u, k, sc, c, f);
            double uv = 0.0;
            if (MODE == MODE_PP) {
#pragma unroll
                for (int i = 0; i < 27; i++) uv += pv[i] * basis27(f, i);
            }
            const double w = point_weight<MODE>(scale, sw, val, k, uv);
#pragma unroll
            for (int i = 0; i < 27; i++) {
                const double ft = basis27(f, i);
                acc[i] += w * (MODE == MODE_SQ ? ft * ft : ft);
            }
        }
        /* the lanes' open nodes: lanes without points carry -1 and zeros */
        const pr_seg sg = pr_seg_of(cur, lane);
#pragma unroll
        for (int i = 0; i < 27; i++) {
            const double v = pr_seg_sum(acc[i], sg, lane);
            if (cur >= 0 && sg.tail && v != 0.0) {
                const int32_t t = o.nbr[27 * (size_t)cur + i];
                if (t >= 0) atomicAdd(&out[t - ooff], v);
            }
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
/* the areas' counts per gt_pr_area_bin, a block's in shared memory first */
__global__ void k_area_hist(const float *area, size_t n, uint32_t *hist)
{
    __shared__ uint32_t h[GT_PR_AREA_BINS];
    for (int i = threadIdx.x; i < GT_PR_AREA_BINS; i += blockDim.x) h[i] = 0;
    __syncthreads();
    GRID_LOOP(k, n) atomicAdd(&h[gt_pr_area_bin(area[k])], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < GT_PR_AREA_BINS; i += blockDim.x)
        if (h[i]) atomicAdd(&hist[i], h[i]);
}
__global__ void k_screen_weights(const float *area, size_t n, double cap, float *sw, double *sa)
{
    GRID_LOOP(k, n)
    {
        sw[k] = gt_pr_screen_weight(area[k], cap);
        sa[k] = gt_pr_screen_area(area[k], cap);
    }
}
__global__ void k_screen_own(const float *area, size_t n, double cap, double mean, float *own)
{
    GRID_LOOP(k, n) own[k] = gt_pr_screen_own(area[k], cap, mean);
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
/* run 1: a lane per point (k_point_scatter_lane), else runs of `run` points */
template <int M>
static gt_status scatter_launch(int run, const gt_pr_dev_octree &o, int d, const int32_t *lnode, const float *u,
                                const float *sw, const double *val, size_t voff, double scale, double *out,
                                size_t ooff, size_t N, const int *skip)
{
    if (run == 1) {
        k_point_scatter_lane<M><<<gt_grid(N, PR_BLOCK), PR_BLOCK>>>(o, d, lnode, u, sw, val, voff, scale, out, ooff,
                                                                    N, skip);
        GT_CU_LAUNCH("k_point_scatter_lane");
    } else {
        k_point_scatter_runs<M><<<gt_grid((N + run - 1) / run, PR_BLOCK), PR_BLOCK>>>(o, d, lnode, u, sw, val, voff,
                                                                                      scale, out, ooff, N, run, skip);
        GT_CU_LAUNCH("k_point_scatter_runs");
    }
    return GT_OK;
}

gt_status pr_point_scatter(int mode, const gt_pr_dev_octree &o, int d, const int32_t *lnode, const float *u,
                           const float *sw, const double *val, size_t voff, double scale, double *out,
                           size_t ooff, size_t N, size_t nlevel, const int *skip)
{
    if (N == 0) return GT_OK;
    /* points per lane: one below 4 points per node of the level, else about
     * the points per node, at most 16 */
    const size_t ppn = nlevel ? N / nlevel : N;
    const int run = ppn < 4 ? 1 : ppn >= 16 ? 16 : (int)ppn;
    if (mode == MODE_ONE) return scatter_launch<MODE_ONE>(run, o, d, lnode, u, sw, val, voff, scale, out, ooff, N, skip);
    if (mode == MODE_VAL) return scatter_launch<MODE_VAL>(run, o, d, lnode, u, sw, val, voff, scale, out, ooff, N, skip);
    if (mode == MODE_PP) return scatter_launch<MODE_PP>(run, o, d, lnode, u, sw, val, voff, scale, out, ooff, N, skip);
    return scatter_launch<MODE_SQ>(run, o, d, lnode, u, sw, val, voff, scale, out, ooff, N, skip);
}
gt_status pr_sample_depths(const gt_pr_dev_octree &o, int Dw, int F, const int32_t *lnode, const float *u,
                           const double *w, double spn, float *depth, float *area, size_t n)
{
    LAUNCH(k_sample_depth, n, o, Dw, F, lnode, u, w, spn, depth, area, n);
    return GT_OK;
}
gt_status pr_area_histogram(const float *area, size_t n, uint32_t *d_hist, uint32_t *hist)
{
    GT_CU(cudaMemset(d_hist, 0, GT_PR_AREA_BINS * sizeof(uint32_t)));
    if (n) {
        const size_t g = gt_grid(n, PR_BLOCK);
        k_area_hist<<<g < 1024 ? g : 1024, PR_BLOCK>>>(area, n, d_hist);
        GT_CU_LAUNCH("k_area_hist");
    }
    GT_CU(cudaMemcpy(hist, d_hist, GT_PR_AREA_BINS * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    return GT_OK;
}
gt_status pr_screen_weights(const float *area, size_t n, double cap, float *sw, double *sa)
{
    LAUNCH(k_screen_weights, n, area, n, cap, sw, sa);
    return GT_OK;
}
gt_status pr_screen_own(const float *area, size_t n, double cap, double mean, float *own)
{
    LAUNCH(k_screen_own, n, area, n, cap, mean, own);
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
