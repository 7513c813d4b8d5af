/* Surface extraction on the GPU, the coarse blocks' stage (pr_adapt.h;
 * the CPU's in lib/poisson/extract.c): where the extraction tree stops
 * above depth D, a leaf block's cells make nothing, and the block makes its
 * own loops from chi at its 27 lattice points, their crossings bisected
 * down to depth-D edges (so that they meet the fine cells' vertices) and
 * their triangles, with an added vertex where a loop has no root.
 * pr_extract.cu calls the launchers below between its growth and its mesh
 * stages; the per-block math is lib/poisson/pr_adapt.h's, the CPU's. */
#include <cuda_runtime.h>

#include "kernels/poisson/pr_eval_dev.cuh"
#include "kernels/poisson/pr_extract_stages.h"
#include "poisson/pr_adapt.h"
#include "poisson/pr_mc.h"
#include "poisson/pr_morton.h"
#include "poisson/pr_sort.h"

namespace {

/* the cells inside coarse blocks make nothing (gt_pr_in_coarse_block) */
__global__ void k_drop_coarse(const eval_args A, const uint64_t *cells, uint8_t *mask, size_t n, const pr_blocks B)
{
    GRID_LOOP(i, n) {
        if (gt_pr_in_coarse_block(A.key, A.level_start, B.tree, A.depth, cells[i])) mask[i] = 0;
    }
}

__device__ int d_node_level(const eval_args &A, size_t node)
{
    int l = 0;
    while (l < A.depth && node >= A.level_start[l + 1]) l++;
    return l;
}
/* block b's lowest corner and lattice spacing (gt_pr_block_geom) */
__device__ void d_block_geom(const eval_args &A, const pr_blocks &B, size_t b, uint32_t base[3], uint32_t *h)
{
    const size_t node = B.node[b];
    gt_pr_block_geom(A.key[node], d_node_level(A, node), A.depth, base, h);
}

/* chi at every block's 27 lattice points: from the corner set where a cell
 * has the point as a corner, else evaluated (extract.c) */
__global__ void k_block_values(const eval_args A, const pr_blocks B, const uint64_t *ck, const double *cv, size_t nc,
                               double *val)
{
    GRID_LOOP(i, 27 * B.nb) {
        const size_t b = i / 27;
        const int q = (int)(i % 27);
        uint32_t base[3], h;
        d_block_geom(A, B, b, base, &h);
        uint32_t c[3];
        gt_pr_block_point(base, h, q, c);
        const uint64_t k = gt_pr_key(c[0], c[1], c[2]);
        const size_t at = gt_pr_lower_bound(ck, nc, k);
        val[i] = at < nc && ck[at] == k ? cv[at] : e_eval_corner(A, c[0], c[1], c[2]);
    }
}
/* does the surface cross block b (lattice points on both sides)? */
__global__ void k_block_crossed(const pr_blocks B, const double *val, double iso, uint8_t *flag)
{
    GRID_LOOP(b, B.nb) {
        int nin = 0;
        for (int q = 0; q < 27; q++) nin += val[27 * b + q] < iso;
        flag[b] = nin != 0 && nin != 27;
    }
}

/* block b's loops (extract.c's block_poly) */
__device__ void d_block_poly(const eval_args &A, const pr_blocks &B, size_t b, const double *val, double iso,
                             gt_pr_block_poly *P)
{
    const size_t node = B.node[b];
    const uint32_t ncm = gt_pr_block_nc(A.nbr + 27 * node, B.tree, A.key[node], d_node_level(A, node), B.virt);
    gt_pr_block_loops(val + 27 * b, ncm, iso, P);
}

/* per block: loop vertices, triangles (at ns + b) and added vertices */
__global__ void k_block_counts(const eval_args A, const pr_blocks B, const double *val, double iso, size_t ns,
                               uint64_t *ecnt, uint64_t *tcnt, uint64_t *acnt)
{
    GRID_LOOP(b, B.nb) {
        gt_pr_block_poly P;
        d_block_poly(A, B, b, val, iso, &P);
        uint64_t nt = 0, na = 0;
        for (int l = 0; l < P.nloop; l++) {
            const int r = gt_pr_block_loop_root(&P, l);
            nt += (uint64_t)gt_pr_block_loop_ntri(&P, l, r);
            na += r < 0;
        }
        ecnt[ns + b] = (uint64_t)P.nv;
        tcnt[ns + b] = nt;
        acnt[b] = na;
    }
}

/* the blocks' crossings bisected down to depth-D edges: their keys into ek
 * (at the block's edge offset) and bk (from the first block's) */
__global__ void k_block_keys(const eval_args A, const pr_blocks B, const double *val, double iso, size_t ns,
                             const uint64_t *eoff, uint64_t *ek, uint64_t *bk)
{
    GRID_LOOP(b, B.nb) {
        gt_pr_block_poly P;
        d_block_poly(A, B, b, val, iso, &P);
        uint32_t base[3], h;
        d_block_geom(A, B, b, base, &h);
        uint64_t j = eoff[ns + b];
        for (int q = 0; q < P.nv; q++, j++) {
            gt_pr_cross_edge e = gt_pr_cross_edge_of(P.cross[q], base, h);
            while (e.m > 1) {
                uint32_t mid[3];
                gt_pr_cross_mid(&e, mid);
                gt_pr_cross_step(&e, e_eval_corner(A, mid[0], mid[1], mid[2]), iso);
            }
            const uint64_t k = gt_pr_cross_key(&e);
            ek[j] = k;
            bk[j - eoff[ns]] = k;
        }
    }
}

/* the blocks' triangles, and their added vertices (after the nv edge
 * vertices, whose positions are in xyz) */
__global__ void k_block_tris(const eval_args A, const pr_blocks B, const double *val, double iso, size_t ns,
                             const uint64_t *eoff, const uint64_t *toff, const uint64_t *aoff, const uint64_t *bk,
                             const uint64_t *E, size_t nv, float *xyz, int32_t *tri)
{
    GRID_LOOP(b, B.nb) {
        gt_pr_block_poly P;
        d_block_poly(A, B, b, val, iso, &P);
        uint64_t k = toff[ns + b], a = nv + aoff[b];
        const uint64_t j0 = eoff[ns + b] - eoff[ns];
        int32_t id[GT_PR_BLOCK_MAXSEG];
        for (int q = 0; q < P.nv; q++) id[q] = (int32_t)gt_pr_lower_bound(E, nv, bk[j0 + q]); /* present */
        for (int l = 0; l < P.nloop; l++) {
            const int r = gt_pr_block_loop_root(&P, l), nt = gt_pr_block_loop_ntri(&P, l, r);
            const int ls = P.lstart[l];
            for (int t = 0; t < nt; t++, k++) {
                int q3[3];
                gt_pr_block_loop_tri(&P, l, r, t, q3);
                for (int q = 0; q < 3; q++) tri[3 * k + q] = q3[q] < 0 ? (int32_t)a : id[ls + q3[q]];
            }
            if (r < 0) {
                const int n = P.lstart[l + 1] - ls;
                double sum[3] = {0, 0, 0};
                for (int q = 0; q < n; q++)
                    for (int c = 0; c < 3; c++) sum[c] = __dadd_rn(sum[c], (double)xyz[3 * (size_t)id[ls + q] + c]);
                for (int c = 0; c < 3; c++) xyz[3 * a + c] = (float)__ddiv_rn(sum[c], (double)n);
                a++;
            }
        }
    }
}

__global__ void k_iota_leaf(const uint8_t *tree, size_t n, uint64_t *idx, uint8_t *flag)
{
    GRID_LOOP(i, n) {
        idx[i] = i;
        flag[i] = (tree[i] & GT_PR_T_LEAF) ? 1 : 0;
    }
}

} // namespace

/* ---- the launchers (pr_extract_stages.h) */

gt_status pr_blocks_leaves(const uint8_t *tree, size_t n, uint64_t *idx, uint8_t *flag)
{
    LAUNCH(k_iota_leaf, n, tree, n, idx, flag);
    return GT_OK;
}

gt_status pr_blocks_drop_cells(const eval_args &A, const uint64_t *cells, uint8_t *mask, size_t n, const pr_blocks &B)
{
    LAUNCH(k_drop_coarse, n, A, cells, mask, n, B);
    return GT_OK;
}

gt_status pr_blocks_values(const eval_args &A, const pr_blocks &B, const uint64_t *ck, const double *cv, size_t nc,
                           double *val)
{
    LAUNCH(k_block_values, 27 * B.nb, A, B, ck, cv, nc, val);
    return GT_OK;
}

gt_status pr_blocks_crossed(const pr_blocks &B, const double *val, double iso, uint8_t *flag)
{
    LAUNCH(k_block_crossed, B.nb, B, val, iso, flag);
    return GT_OK;
}

gt_status pr_blocks_counts(const eval_args &A, const pr_blocks &B, const double *val, double iso, size_t ns,
                           uint64_t *ecnt, uint64_t *tcnt, uint64_t *acnt)
{
    LAUNCH(k_block_counts, B.nb, A, B, val, iso, ns, ecnt, tcnt, acnt);
    return GT_OK;
}

gt_status pr_blocks_keys(const eval_args &A, const pr_blocks &B, const double *val, double iso, size_t ns,
                         const uint64_t *eoff, uint64_t *ek, uint64_t *bk)
{
    LAUNCH(k_block_keys, B.nb, A, B, val, iso, ns, eoff, ek, bk);
    return GT_OK;
}

gt_status pr_blocks_tris(const eval_args &A, const pr_blocks &B, const double *val, double iso, size_t ns,
                         const uint64_t *eoff, const uint64_t *toff, const uint64_t *aoff, const uint64_t *bk,
                         const uint64_t *E, size_t nv, float *xyz, int32_t *tri)
{
    LAUNCH(k_block_tris, B.nb, A, B, val, iso, ns, eoff, toff, aoff, bk, E, nv, xyz, tri);
    return GT_OK;
}
