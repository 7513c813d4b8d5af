/* The splat of the normals into the functions of levels F..D (each sample at
 * the two levels around its splat depth) and the divergence of the splatted
 * field against every node's basis function, on the GPU (stages 2 and 3 of
 * gt_pr_solve_cpu; the arithmetic is pr_bspline.h's).
 *
 * Launch shape: the splat takes one thread per node of a level (a gather over
 * the points of its 27 neighbour cells: no atomics). The divergence takes
 * one lane per node of a source level with a nonzero vector (listed first by
 * a stream compaction) and scatters into the 125-neighbourhoods of its
 * ancestors with double atomics; lanes with the same ancestor at a level
 * (consecutive, as the nodes are key-sorted) are summed by a segmented
 * shuffle scan first, so the coarse levels' few targets do not take one
 * atomic per fine node, and a warp visits only the 125-indices its rows
 * reach (gt_pr_rows_mask: far above the sources, few). The finer targets of a
 * coarse source gather instead (one thread per target, no atomics): a
 * source's finer targets are the descendants of 125 nodes, too many to
 * scatter to. */
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_solve_stages.h"
#include "poisson/pr_adapt.h"
#include "poisson/pr_bspline.h"

__constant__ uint8_t c_lutp125[8][125];
__constant__ uint8_t c_lutc125[8][125];

/* 125-neighbour i of `node` from its parent's 27 (the 125-LUTs), or -1 */
__device__ __forceinline__ int32_t d_nbr125(const gt_pr_dev_octree o, int32_t node, int i)
{
    if (node == 0) return i == 62 ? 0 : -1;
    int32_t p = o.parent[node];
    int c = (int)(o.key[node] & 7);
    return gt_pr_nbr_rule(o.nbr, o.child, p, c_lutp125[c], c_lutc125[c], i);
}

__global__ void k_splat(const gt_pr_dev_octree o, int l, int F, int D, size_t s0, size_t n, const float *u,
                        const float *nrm, const float *area, const float *depth, double inv_w3, double *vf, uint8_t *t,
                        int *any)
{
    GRID_LOOP(q, n)
    {
        double acc[3];
        t[q] = gt_pr_splat_node(o.key, o.nbr, o.pt_start, o.pt_count, l, F, D, s0 + q, u, nrm, area, depth, acc)
                   ? GT_PR_T_DATA
                   : 0;
        for (int a = 0; a < 3; a++) vf[3 * q + a] = acc[a] * inv_w3;
        if (acc[0] != 0.0 || acc[1] != 0.0 || acc[2] != 0.0) *any = 1; /* benign: all write 1 */
    }
}

/* The same splat with a warp per node, its lanes over the points of each of
 * the 27 cells: at the coarse levels a node's cells hold thousands of points,
 * which one thread would walk alone while the rest of the grid waits. */
__global__ void k_splat_warp(const gt_pr_dev_octree o, int l, int F, int D, size_t s0, size_t n, const float *u,
                             const float *nrm, const float *area, const float *depth, double inv_w3, double *vf,
                             uint8_t *t, int *any)
{
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const size_t nwarps = ((size_t)gridDim.x * blockDim.x) >> 5;
    for (size_t q = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5; q < n; q += nwarps) {
        const size_t v = s0 + q;
        int64_t c[3];
        gt_pr_cell_of(o.key[v], c);
        double acc[3] = {0.0, 0.0, 0.0};
        int share = 0;
        for (int i = 0; i < 27; i++) {
            const int32_t nb = o.nbr[27 * v + i];
            if (nb < 0) continue;
            const uint32_t k1 = o.pt_start[nb] + o.pt_count[nb];
            for (uint32_t k = o.pt_start[nb] + (uint32_t)lane; k < k1; k += 32)
                share |= gt_pr_splat_point(l, F, D, c, k, u, nrm, area, depth, acc);
        }
        for (int off = 16; off > 0; off >>= 1)
            for (int a = 0; a < 3; a++) acc[a] += __shfl_xor_sync(FULL, acc[a], off);
        share = __any_sync(FULL, share);
        if (lane == 0) {
            t[q] = share ? GT_PR_T_DATA : 0;
            for (int a = 0; a < 3; a++) vf[3 * q + a] = acc[a] * inv_w3;
            if (acc[0] != 0.0 || acc[1] != 0.0 || acc[2] != 0.0) *any = 1;
        }
    }
}

/* bit l of *mask: some sample has a share at level l (gt_pr_splat_weight) */
/* mask[0]: the levels with a share of some sample; mask[1]: the samples
 * that splat no deeper than D - 2 */
__global__ void k_splat_levels(const float *depth, size_t N, int F, int D, unsigned *mask)
{
    unsigned m = 0, c = 0;
    GRID_LOOP(k, N)
    {
        for (int l = F; l <= D; l++)
            if (gt_pr_splat_weight((double)depth[k], F, D, l) != 0.0) m |= 1u << l;
        c += (double)depth[k] <= (double)(D - 2);
    }
    for (int off = 16; off > 0; off >>= 1) {
        m |= __shfl_xor_sync(0xffffffffu, m, off);
        c += __shfl_xor_sync(0xffffffffu, c, off);
    }
    if ((threadIdx.x & 31) == 0 && m) atomicOr(mask, m);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(mask + 1, c);
}

/* The finer targets' share of the divergence: node t of level d takes
 * v_f . int grad F_t F_f from the nodes f with a vector in the
 * 125-neighbourhood of each ancestor (levels lf in srcmask) */
__global__ void k_div_gather(const gt_pr_dev_octree o, int d, int F, size_t s0, size_t n, const double *__restrict__ vf,
                             const xtab T, unsigned srcmask, double *rhs)
{
    GRID_LOOP(q, n)
    {
        const int32_t v = (int32_t)(s0 + q);
        int64_t co[3];
        gt_pr_cell_of(o.key[(size_t)v], co);
        double acc = 0.0;
        int32_t anc = v;
        for (int lf = d - 1; lf >= F; lf--) {
            anc = o.parent[anc];
            if (!((srcmask >> lf) & 1u)) continue;
            double M[3][5], G[3][5];
            int64_t ca[3];
            gt_pr_cell_of(o.key[(size_t)anc], ca);
            gt_pr_cross_rows(T.M + T.off[lf], T.G + T.off[lf], co, ca, d - lf, M, G);
            const unsigned m3 = gt_pr_rows_mask3(M, G);
            for (int i = 0; i < 125; i++) {
                if (!gt_pr_mask_has(m3, i)) continue;
                const int32_t f = d_nbr125(o, anc, i);
                if (f < 0) continue;
                const double vv[3] = {vf[3 * (size_t)f], vf[3 * (size_t)f + 1], vf[3 * (size_t)f + 2]};
                if (vv[0] == 0 && vv[1] == 0 && vv[2] == 0) continue;
                acc += gt_pr_div_term(vv, M, G, i);
            }
        }
        rhs[v] += acc;
    }
}

/* Divergence: every depth-D node f with a nonzero splatted vector scatters
 * v_f . int grad F_t F_f into the 125-neighbourhood t of each of its
 * ancestors. */
__global__ void k_nonzero(const double *__restrict__ vf, size_t n, uint8_t *flag)
{
    GRID_LOOP(q, n) flag[q] = vf[3 * q] != 0.0 || vf[3 * q + 1] != 0.0 || vf[3 * q + 2] != 0.0;
}

/* src: the level's nodes with a nonzero vector (level-local indices, in key
 * order), so that a warp's lanes all carry one */
__global__ void k_divergence(const gt_pr_dev_octree o, int D, int F, size_t s0, const uint32_t *__restrict__ src,
                             size_t n, const double *__restrict__ vf, const xtab T,
                             double *rhs) /* D: the sources' level */
{
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t nwarps = ((size_t)gridDim.x * blockDim.x) >> 5;
    for (size_t base = warp * 32; base < n; base += nwarps * 32) {
        const size_t q = base + lane;
        const bool act = q < n;
        const size_t sq = act ? src[q] : 0;
        double vv[3] = {0.0, 0.0, 0.0};
        if (act)
            for (int a = 0; a < 3; a++) vv[a] = vf[3 * sq + a];
        const bool nz = vv[0] != 0 || vv[1] != 0 || vv[2] != 0;
        if (!__any_sync(FULL, nz)) continue;
        int64_t cf[3] = {0, 0, 0};
        if (act) gt_pr_cell_of(o.key[s0 + sq], cf);
        int32_t anc = act ? (int32_t)(s0 + sq) : -1;
        for (int d = D; d >= F; d--) {
            double M[3][5], G[3][5];
            if (act) {
                int64_t ca[3];
                gt_pr_cell_of(o.key[(size_t)anc], ca);
                gt_pr_cross_rows(T.M + T.off[d], T.G + T.off[d], cf, ca, D - d, M, G);
            } else {
                for (int a = 0; a < 3; a++)
                    for (int k = 0; k < 5; k++) M[a][k] = G[a][k] = 0.0;
            }
            const pr_seg sg = pr_seg_of(anc, lane);
            /* the 125-indices some lane's rows reach (the others' terms are
             * all zero): far above the sources, few of them */
            unsigned m3 = 0;
            if (act && nz) m3 = gt_pr_rows_mask3(M, G);
            for (int off = 16; off > 0; off >>= 1) m3 |= __shfl_xor_sync(FULL, m3, off);
            for (int i = 0; i < 125; i++) {
                if (!gt_pr_mask_has(m3, i)) continue; /* m3 is the warp's: all lanes skip alike */
                const double val = pr_seg_sum(gt_pr_div_term(vv, M, G, i), sg, lane);
                if (act && sg.tail && val != 0.0) {
                    const int32_t t = d_nbr125(o, anc, i);
                    if (t >= 0) atomicAdd(&rhs[t], val);
                }
            }
            if (d == F) break;
            if (act) anc = o.parent[anc];
        }
    }
}

/* the extraction tree's steps (pr_adapt.h; lib/poisson/solve.c's
 * tree_build), one level of n nodes from s0 per launch */
__global__ void k_tree_data(const int32_t *child, const int32_t *nbr, size_t s0, size_t n, int l, int D, int T, int virt,
                            uint8_t *t)
{
    GRID_LOOP(q, n) {
        uint8_t f = gt_pr_tree_data(child, t, s0 + q);
        if (l < D) f |= gt_pr_tree_sub(child, nbr, t, s0 + q, l, T, virt);
        t[s0 + q] = f;
    }
}
/* the parent and its neighbours subdivided (every writer stores the same
 * bit: the races are benign) */
__global__ void k_tree_mark(const gt_pr_dev_octree o, size_t s0, size_t n, uint8_t *t)
{
    GRID_LOOP(q, n) {
        if (!(t[s0 + q] & GT_PR_T_SUB)) continue;
        const int32_t par = o.parent[s0 + q];
        t[par] |= GT_PR_T_SUB;
        for (int i = 0; i < 27; i++) {
            const int32_t nb = o.nbr[27 * (size_t)par + i];
            if (nb >= 0 && o.child[nb] >= 0) t[nb] |= GT_PR_T_SUB;
        }
    }
}
__global__ void k_tree_keep(const gt_pr_dev_octree o, size_t s0, size_t n, int l, int virt, uint8_t *t)
{
    GRID_LOOP(q, n) {
        if (!(t[s0 + q] & GT_PR_T_SUB)) continue;
        const int32_t par = o.parent[s0 + q];
        if (!gt_pr_tree_keep(o.nbr, t, par, o.key[par], l - 1, virt)) t[s0 + q] &= (uint8_t)~GT_PR_T_SUB;
    }
}
__global__ void k_tree_leaf(const int32_t *parent, size_t s0, size_t n, int l, int F, uint8_t *t)
{
    GRID_LOOP(q, n) {
        const uint8_t f = t[s0 + q];
        if (!(f & GT_PR_T_SUB) && (l == F || (t[parent[s0 + q]] & GT_PR_T_SUB))) t[s0 + q] = f | GT_PR_T_LEAF;
    }
}
/* the functions in the solve: every one with all (level up to F, or the
 * dense solve), else gt_pr_fn_active's */
__global__ void k_tree_fn(const gt_pr_dev_octree o, size_t s0, size_t n, int all, uint8_t *t)
{
    GRID_LOOP(q, n) {
        if (all || gt_pr_fn_active(o.parent, o.child, o.nbr, o.key, t, s0 + q)) t[s0 + q] |= GT_PR_T_FN;
    }
}

gt_status pr_tree_build(const gt_pr_dev_octree &o, const size_t *level_start, int D, int F, int T, int virt, int dense,
                        uint8_t *t)
{
    for (int l = D; l >= 0; l--) {
        size_t s0 = level_start[l], n = level_start[l + 1] - s0;
        if (n) LAUNCH(k_tree_data, n, o.child, o.nbr, s0, n, l, D, T, virt, t);
    }
    for (int l = D - 1; l > F; l--) {
        size_t s0 = level_start[l], n = level_start[l + 1] - s0;
        if (n) LAUNCH(k_tree_mark, n, o, s0, n, t);
    }
    for (int l = F + 1; l < D; l++) {
        size_t s0 = level_start[l], n = level_start[l + 1] - s0;
        if (n) LAUNCH(k_tree_keep, n, o, s0, n, l, virt, t);
    }
    for (int l = F; l < D; l++) {
        size_t s0 = level_start[l], n = level_start[l + 1] - s0;
        if (n) LAUNCH(k_tree_leaf, n, o.parent, s0, n, l, F, t);
    }
    for (int l = 0; l <= D; l++) {
        size_t s0 = level_start[l], n = level_start[l + 1] - s0;
        if (n) LAUNCH(k_tree_fn, n, o, s0, n, l <= F || dense, t);
    }
    return GT_OK;
}

gt_status pr_splat_levels(const float *depth, size_t N, int F, int D, unsigned *d_mask, unsigned *mask,
                          size_t *n_sparse)
{
    unsigned h[2];
    GT_TRY(gt_cu_memset(d_mask, 0, sizeof h, NULL));
    if (N) LAUNCH(k_splat_levels, N, depth, N, F, D, d_mask);
    GT_TRY(gt_cu_memcpy_d2h(h, d_mask, sizeof h, NULL));
    *mask = h[0];
    *n_sparse = h[1];
    return GT_OK;
}

gt_status pr_splat(const gt_pr_dev_octree &o, int l, int F, int D, size_t s0, size_t n, size_t N, const float *u,
                   const float *nrm, const float *area, const float *depth, double inv_w3, double *vf, uint8_t *t,
                   int *any)
{
    if (n == 0) return GT_OK;
    /* a warp per node where the nodes' cells hold many points (27 cells of
     * 4 points on average: a lane's worth each) */
    if (N >= 4 * n) {
        const size_t threads = n * 32;
        k_splat_warp<<<gt_grid(threads, PR_BLOCK), PR_BLOCK>>>(o, l, F, D, s0, n, u, nrm, area, depth, inv_w3, vf, t,
                                                               any);
        GT_CU_LAUNCH("k_splat_warp");
    } else {
        LAUNCH(k_splat, n, o, l, F, D, s0, n, u, nrm, area, depth, inv_w3, vf, t, any);
    }
    return GT_OK;
}

gt_status pr_divergence(const gt_pr_dev_octree &o, int D, int F, size_t s0, size_t n, const double *vf, const xtab &T,
                        uint8_t *flag, uint32_t *src, double *rhs)
{
    gt_pr_luts_init();
    GT_CU(cudaMemcpyToSymbol(c_lutp125, gt_pr_lut_parent125, sizeof gt_pr_lut_parent125));
    GT_CU(cudaMemcpyToSymbol(c_lutc125, gt_pr_lut_child125, sizeof gt_pr_lut_child125));
    LAUNCH(k_nonzero, n, vf, n, flag);
    size_t ns = 0;
    GT_TRY(gt_cu_select_flagged_index(flag, src, n, &ns, NULL, NULL));
    if (ns) LAUNCH(k_divergence, ns, o, D, F, s0, src, ns, vf, T, rhs);
    return GT_OK;
}

gt_status pr_div_gather(const gt_pr_dev_octree &o, int d, int F, size_t s0, size_t n, const double *vf, const xtab &T,
                        unsigned srcmask, double *rhs)
{
    gt_pr_luts_init();
    GT_CU(cudaMemcpyToSymbol(c_lutp125, gt_pr_lut_parent125, sizeof gt_pr_lut_parent125));
    GT_CU(cudaMemcpyToSymbol(c_lutc125, gt_pr_lut_child125, sizeof gt_pr_lut_child125));
    LAUNCH(k_div_gather, n, o, d, F, s0, n, vf, T, srcmask, rhs);
    return GT_OK;
}
