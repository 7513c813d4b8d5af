/* The stages of the GPU solve (C++ only), shared by the driver
 * (pr_solve.cu) and the files that hold each stage's kernels:
 *   pr_points.cu     per-point work: key order, each point's node at a
 *                    level, density and screening scattered from the
 *                    points, sample areas, chi at the samples;
 *   pr_divergence.cu the splat of the normals and the divergence;
 *   pr_level.cu      one level's system: right-hand side, stencil, CG.
 * A kernel can only be launched from the file that defines it (no
 * relocatable device code), so each stage file exports host launchers.
 * Every kernel is a grid-stride loop over nodes or points in blocks of
 * PR_BLOCK threads (gt_grid), as the work per element is small and
 * uniform; the warp-level kernels (point scatter, divergence) give each
 * lane one element and combine lanes of one target before their atomics. */
#ifndef GT_KERNELS_PR_SOLVE_STAGES_H
#define GT_KERNELS_PR_SOLVE_STAGES_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "common/status.h"
#include "kernels/common/cu_check.h"
#include "kernels/poisson/pr_gpu_internal.h"

#define PR_BLOCK 256
#define GRID_LOOP(i, n) for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)
#define LAUNCH(kernel, n, ...)                                      \
    do {                                                       \
        kernel<<<gt_grid((n), PR_BLOCK), PR_BLOCK>>>(__VA_ARGS__);           \
        GT_CU_LAUNCH(#kernel);                                 \
    } while (0)

/* 1D integral tables between a level-df function and the functions of a
 * coarser level dg around its ancestor (gt_pr_cross_fill): for each dg,
 * 2^(df-dg) rows of 5 values from off[dg], M = (value, value) and G = (a, b)
 * derivatives; computed on the host by the same code as the CPU's. */
struct xtab {
    const double *M, *G;
    unsigned long long off[GT_PR_MAX_DEPTH + 1];
};

/* Runs of equal keys among a warp's lanes (key-sorted elements, so a coarse
 * target's contributions are consecutive): lane `first` heads my run, and
 * the run's sum ends in its last lane (tail). */
struct pr_seg {
    int first;
    bool tail, singles;
};
__device__ __forceinline__ pr_seg pr_seg_of(int32_t key, int lane)
{
    const unsigned FULL = 0xffffffffu;
    const int32_t prev = __shfl_up_sync(FULL, key, 1);
    const int32_t next = __shfl_down_sync(FULL, key, 1);
    const bool head = lane == 0 || prev != key;
    pr_seg s;
    s.tail = lane == 31 || next != key;
    const unsigned H = __ballot_sync(FULL, head);
    s.first = 31 - __clz(H & (FULL >> (31 - lane)));
    s.singles = H == FULL;
    return s;
}
/* v summed over the lanes of my run up to mine (inclusive segmented scan) */
__device__ __forceinline__ double pr_seg_sum(double v, const pr_seg &s, int lane)
{
    if (!s.singles)
        for (int off = 1; off < 32; off <<= 1) {
            const double y = __shfl_up_sync(0xffffffffu, v, off);
            if (lane - off >= s.first) v += y;
        }
    return v;
}

/* pr_points.cu. Modes of the point scatter: weight 1 (density), sw * val
 * (screening of the coarser levels' values), sw * (the level's functions
 * with coefficients val at the point) (one application of the screening),
 * sw with the function's value squared (the screening's diagonal); sw: the
 * samples' screening weights (NULL: 1). */
enum { PR_SCATTER_ONE = 0, PR_SCATTER_VAL = 1, PR_SCATTER_PP = 2, PR_SCATTER_SQ = 3 };
gt_status pr_gather_sorted(const float *src, const uint32_t *order, float *dst, size_t n);
gt_status pr_leaves(const gt_pr_dev_octree &o, size_t s0, size_t n, int32_t *leaf);
gt_status pr_up(const int32_t *parent, const int32_t *leaf, int levels, int32_t *out, size_t n);
gt_status pr_point_scatter(int mode, const gt_pr_dev_octree &o, int d, const int32_t *lnode, const float *u,
                           const float *sw, const double *val, size_t voff, double scale, double *out,
                           size_t ooff, size_t N, size_t nlevel,
                           const int *skip = nullptr); /* nlevel: the level's node count; skip: as pr_stencil's */
/* gt_pr_sample_depth and gt_pr_sample_area of each point (lnode: its level-Dw node) */
gt_status pr_sample_depths(const gt_pr_dev_octree &o, int Dw, int F, const int32_t *lnode, const float *u,
                           const double *w, double spn, float *depth, float *area, size_t n);
/* hist (host, GT_PR_AREA_BINS) gets the n areas' counts per gt_pr_area_bin
 * (d_hist: GT_PR_AREA_BINS of device scratch) */
gt_status pr_area_histogram(const float *area, size_t n, uint32_t *d_hist, uint32_t *hist);
/* sw[k] = gt_pr_screen_weight(area[k], cap), sa[k] = gt_pr_screen_area(area[k], cap) */
gt_status pr_screen_weights(const float *area, size_t n, double cap, float *sw, double *sa);
/* own[k] = gt_pr_screen_own(area[k], cap, mean): the weights at D - 1 and D */
gt_status pr_screen_own(const float *area, size_t n, double cap, double mean, float *own);
gt_status pr_ptval_add(const gt_pr_dev_octree &o, int d, const int32_t *lnode, const float *u, const double *coef,
                       double *ptval, size_t N);
gt_status pr_fill(double *a, double v, size_t n);

/* pr_divergence.cu */
/* *mask: bit l set when some of the N samples has a share at level l
 * (gt_pr_splat_weight of its depth; d_mask: two unsigned of scratch) */
/* the extraction tree's flags of every node (pr_adapt.h) in t, from the
 * data bits pr_splat left there: leaves from the full depth F, nodes
 * above level T subdivided where they have children, virt as
 * gt_pr_tree_sub says; the functions in the solve (GT_PR_T_FN), all of
 * them with dense */
gt_status pr_tree_build(const gt_pr_dev_octree &o, const size_t *level_start, int D, int F, int T, int virt,
                        int dense, uint8_t *t);
gt_status pr_splat_levels(const float *depth, size_t N, int F, int D, unsigned *d_mask, unsigned *mask,
                          size_t *n_sparse); /* n_sparse: the samples that splat no deeper than D - 2 */
/* the splat into the level-l nodes [s0, s0 + n) (gt_pr_splat_node), vf[3 q]
 * for node s0 + q, its data bit in t[q] (GT_PR_T_DATA or 0), and *any = 1
 * when one of the vectors is nonzero (N: the number of points, which picks
 * a thread or a warp per node) */
gt_status pr_splat(const gt_pr_dev_octree &o, int l, int F, int D, size_t s0, size_t n, size_t N, const float *u,
                   const float *nrm, const float *area, const float *depth, double inv_w3, double *vf, uint8_t *t,
                   int *any);
/* the level-lf nodes [s0, s0 + n) with vectors vf scattered into the
 * 125-neighbourhoods of their ancestors at levels F..lf; those with a
 * nonzero vector are listed first (flag, src: scratch of n each) */
gt_status pr_divergence(const gt_pr_dev_octree &o, int lf, int F, size_t s0, size_t n, const double *vf, const xtab &T,
                        uint8_t *flag, uint32_t *src, double *rhs);
/* the level-d nodes [s0, s0 + n) gather the vectors (vf: every node's) of
 * the 125-neighbourhoods of their ancestors at the levels lf < d (>= F) with
 * bit lf of srcmask; T: the tables of level d against the coarser levels,
 * M (value, value) and G (derivative of the level-d function, value) */
gt_status pr_div_gather(const gt_pr_dev_octree &o, int d, int F, size_t s0, size_t n, const double *vf, const xtab &T,
                        unsigned srcmask, double *rhs);

/* pr_level.cu */
gt_status pr_level_stencil(int d); /* the level's 125-point stencil to constant memory */
/* the coarser levels F..d-1's Laplacian moved to the right-hand side */
gt_status pr_rhs(const gt_pr_dev_octree &o, int d, int F, size_t s0, size_t n, const double *rhs, const double *coef,
                 const xtab &T, double *b);
/* skip (may be NULL): a device flag; when set, the launch does nothing */
gt_status pr_stencil(const gt_pr_dev_octree &o, size_t s0, size_t n, const double *pp, double *ap,
                     const int *skip = nullptr);
/* Jacobi-preconditioned CG: dinv = 1 / (centre + dinv) in place (dinv holds
 * the screening's diagonal) for the functions in the solve (fl: the level's
 * tree flags, GT_PR_T_FN); the others get dinv 0 and b 0, and dinv 0 keeps
 * their r, z, pp and x at 0 in pr_cg_tail; z = dinv r */
gt_status pr_jacobi_inv(double *dinv, double *b, const uint8_t *fl, double centre, size_t n);
gt_status pr_mul(double *z, const double *dinv, const double *r, size_t n);
/* a.b through a device scalar (one small copy back) */
gt_status pr_ddot(const double *a, const double *b, size_t n, double *d_scal, double *out);

/* A level's CG on the device without the host in the loop: the kernels sum
 * the dot products into this state and read alpha and beta from it, and
 * pr_cg_tail's last kernel evaluates gt_pr_solve_cpu's loop condition for
 * the next iteration (done = 1 when it fails or p.Ap <= 0), so the host
 * queues iterations ahead and reads the state back only to see whether the
 * loop ended; iterations queued past the end do nothing. */
typedef struct pr_cg_state {
    double rz, pap, rz_next, rr_next; /* r.z; p.Ap, the new r.z and r.r as the kernels sum them */
    double rr, bb, ext, tol2;         /* r.r, |b|^2; the stops (squared relative residuals): ext past
                                       * `iters`, tol2 throughout (0: none) */
    int it, iters, iters_max, done;
} pr_cg_state;
/* the iteration after ap = (L + S) pp: p.Ap; x += al pp, r -= al ap,
 * z = dinv r with r.z and r.r; pp = z + be pp; the state's step */
gt_status pr_cg_tail(pr_cg_state *st, double *x, double *r, double *z, double *pp, const double *ap,
                     const double *dinv, size_t n);

#endif
