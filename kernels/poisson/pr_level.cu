/* One level of the GPU's cascadic solve (stage 4 of gt_pr_solve_cpu): the
 * right-hand side with the coarser levels' Laplacian moved over, the
 * level's 125-point stencil, and the CG vector updates and dot products
 * (the screening terms are scattered from the points: pr_points.cu).
 *
 * Launch shape: one thread per node of the level (grid-stride, PR_BLOCK
 * threads); the 125 neighbours are visited as the children of the parent's
 * 27 (for_nbr125), so siblings in a warp share those loads; the CG's stencil
 * product takes one thread per octet of siblings (k_stencil_octet). Dot
 * products reduce in blocks of PR_BLOCK, at most 1024 blocks, into device
 * scalars; the CG's iteration reads its alpha and beta from the device
 * (pr_cg_tail), so that the host queues iterations without waiting. */
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_solve_stages.h"
#include "poisson/pr_adapt.h"
#include "poisson/pr_bspline.h"

__constant__ double c_stencil[125];

/* Visit the (up to) 125 same-level neighbours of `node` within +-2 cells,
 * f(t, i) with i = (dx+2) + 5(dy+2) + 25(dz+2): they are children of the
 * parent's 27 neighbours (the rule behind the 125-LUTs), so walking those 27
 * and their 8 consecutive children reads 2 x 27 links and contiguous
 * children instead of 125 x 4 dependent loads, and siblings share them.
 * The masked walk visits only offsets whose bit dx + 2 of mx (likewise y, z)
 * is set and reads no parent neighbour none of whose children qualify: the
 * coarser levels' couplings reach few of the 125. */
template <class F>
__device__ __forceinline__ void for_nbr125_masked(const gt_pr_dev_octree &o, int32_t node, unsigned mx, unsigned my,
                                                  unsigned mz, F f)
{
    if (node == 0) {
        if ((mx >> 2) & (my >> 2) & (mz >> 2) & 1u) f(0, 62);
        return;
    }
    const int32_t P = o.parent[node];
    const int c = (int)(o.key[node] & 7);
    const int cx = c & 1, cy = (c >> 1) & 1, cz = c >> 2;
    /* child cc of parent neighbour j sits at offset 2j + cc - c, mask bit
     * 2(j + 1) + cc - c: bit 2(j + 1) + cc of m << c (offsets outside -2..2
     * fall on bits the 5-bit masks do not have) */
    const unsigned ex = mx << cx, ey = my << cy, ez = mz << cz;
    for (int j = 0; j < 27; j++) {
        const int jx = j % 3 - 1, jy = (j / 3) % 3 - 1, jz = j / 9 - 1;
        const unsigned bx = (ex >> (2 * (jx + 1))) & 3u, by = (ey >> (2 * (jy + 1))) & 3u, bz = (ez >> (2 * (jz + 1))) & 3u;
        if (!bx || !by || !bz) continue;
        const int32_t pn = o.nbr[27 * (size_t)P + j];
        if (pn < 0) continue;
        const int32_t ch = o.child[pn];
        if (ch < 0) continue;
#pragma unroll
        for (int cc = 0; cc < 8; cc++) {
            if (!((bx >> (cc & 1)) & (by >> ((cc >> 1) & 1)) & (bz >> (cc >> 2)) & 1u)) continue;
            const int dx = 2 * jx + (cc & 1) - cx, dy = 2 * jy + ((cc >> 1) & 1) - cy, dz = 2 * jz + (cc >> 2) - cz;
            f(ch + cc, (dx + 2) + 5 * (dy + 2) + 25 * (dz + 2));
        }
    }
}
template <class F>
__device__ __forceinline__ void for_nbr125(const gt_pr_dev_octree &o, int32_t node, F f)
{
    for_nbr125_masked(o, node, 31u, 31u, 31u, f);
}

/* the block's sums of s[0..K) added into out[0..K) (every thread calls it) */
template <int K>
__device__ __forceinline__ void block_sums_add(double (&s)[K], double *const (&out)[K])
{
    __shared__ double part[K][32];
#pragma unroll
    for (int k = 0; k < K; k++) {
        for (int off = 16; off > 0; off >>= 1) s[k] += __shfl_down_sync(0xffffffffu, s[k], off);
        if ((threadIdx.x & 31) == 0) part[k][threadIdx.x >> 5] = s[k];
    }
    __syncthreads();
    if (threadIdx.x < 32) {
#pragma unroll
        for (int k = 0; k < K; k++) {
            double v = threadIdx.x < (blockDim.x >> 5) ? part[k][threadIdx.x] : 0.0;
            for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
            if (threadIdx.x == 0) atomicAdd(out[k], v);
        }
    }
}

/* block partial sums of a.b added into *out (zeroed by the caller); skip
 * as pr_stencil's */
__global__ void k_dot(const double *__restrict__ a, const double *__restrict__ b, size_t n, double *out,
                      const int *skip)
{
    if (skip && *skip) return;
    double s[1] = {0.0};
    GRID_LOOP(i, n) s[0] += a[i] * b[i];
    block_sums_add<1>(s, {out});
}

/* b = divergence - the coarser levels' Laplacian applied to their solution
 * (the coarser screening is scattered from the points afterwards) */
__global__ void k_rhs(const gt_pr_dev_octree o, int d, int F, size_t s0, size_t n, const double *rhs, const double *coef,
                      const xtab T, double *b)
{
    GRID_LOOP(q, n)
    {
        size_t v = s0 + q;
        double acc = rhs[v];
        int64_t cv[3];
        gt_pr_cell_of(o.key[v], cv);
        int32_t anc = o.parent[v];
        for (int dc = d - 1; dc >= F; dc--) {
            int64_t ca[3];
            gt_pr_cell_of(o.key[(size_t)anc], ca);
            double M[3][5], G[3][5];
            gt_pr_cross_rows(T.M + T.off[dc], T.G + T.off[dc], cv, ca, d - dc, M, G);
            for_nbr125_masked(o, anc, gt_pr_rows_mask(M, G, 0), gt_pr_rows_mask(M, G, 1), gt_pr_rows_mask(M, G, 2),
                              [&](int32_t t, int i) { acc -= gt_pr_lap_term(M, G, i) * coef[t]; });
            if (dc == F) break;
            anc = o.parent[anc];
        }
        b[q] = acc;
    }
}
/* ap = L pp, the level's 125-point Laplacian stencil (pp, ap level-local) */
__global__ void k_stencil(const gt_pr_dev_octree o, size_t s0, size_t n, const double *__restrict__ pp,
                          double *__restrict__ ap, const int *skip)
{
    if (skip && *skip) return;
    GRID_LOOP(q, n)
    {
        double acc = 0;
        for_nbr125(o, (int32_t)(s0 + q), [&](int32_t t, int i) { acc += c_stencil[i] * pp[t - s0]; });
        ap[q] = acc;
    }
}
/* The same product over a level >= 1, whose nodes come as the 8 children of
 * each parent (child c at 8m + c, bits x, y, z of c): one thread per octet
 * walks the parent's 27 neighbours' children once (the 6^3 block around the
 * octet) and adds each value into the children within +-2 of it. Each link
 * and each pp value is loaded once per octet instead of once per child, and
 * the stencil index is the same across a warp (a constant-cache broadcast,
 * where a thread per node indexes it by its own child position). Every
 * child's terms are added in k_stencil's order (neighbour j, then child cc):
 * the same ap, bit for bit. */
__global__ void k_stencil_octet(const gt_pr_dev_octree o, size_t s0, size_t n8, const double *__restrict__ pp,
                                double *__restrict__ ap, const int *skip)
{
    if (skip && *skip) return;
    GRID_LOOP(m, n8)
    {
        const size_t c0 = s0 + 8 * m;
        const int32_t P = o.parent[c0];
        double acc[8];
#pragma unroll
        for (int k = 0; k < 8; k++) acc[k] = 0.0;
        for (int j = 0; j < 27; j++) {
            const int32_t pn = o.nbr[27 * (size_t)P + j];
            if (pn < 0) continue;
            const int32_t ch = o.child[pn];
            if (ch < 0) continue;
            const int jx = j % 3 - 1, jy = (j / 3) % 3 - 1, jz = j / 9 - 1;
#pragma unroll
            for (int cc = 0; cc < 8; cc++) {
                const double v = pp[(size_t)ch + (size_t)cc - s0];
                const int X = 2 * jx + (cc & 1), Y = 2 * jy + ((cc >> 1) & 1), Z = 2 * jz + (cc >> 2);
#pragma unroll
                for (int k = 0; k < 8; k++) {
                    const int dx = X - (k & 1), dy = Y - ((k >> 1) & 1), dz = Z - (k >> 2);
                    if (dx < -2 || dx > 2 || dy < -2 || dy > 2 || dz < -2 || dz > 2) continue;
                    acc[k] += c_stencil[(dx + 2) + 5 * (dy + 2) + 25 * (dz + 2)] * v;
                }
            }
        }
#pragma unroll
        for (int k = 0; k < 8; k++) ap[8 * m + k] = acc[k];
    }
}
__global__ void k_jacobi_inv(double *dinv, double *b, const uint8_t *fl, double centre, size_t n)
{
    GRID_LOOP(q, n)
    {
        if (fl[q] & GT_PR_T_FN) {
            dinv[q] = 1.0 / (centre + dinv[q]);
        } else {
            dinv[q] = 0.0;
            b[q] = 0.0;
        }
    }
}
__global__ void k_mul(double *z, const double *dinv, const double *r, size_t n)
{
    GRID_LOOP(q, n) z[q] = dinv[q] * r[q];
}

/* pr_cg_tail's kernels: x += al pp, r -= al ap, z = dinv r and pp = z + be pp
 * with alpha and beta from the state, the new r.z and r.r summed on the
 * way; each does nothing
 * once the loop is done or p.Ap <= 0 (gt_pr_solve_cpu's break) */
__global__ void k_cg_xrz(pr_cg_state *st, double *x, double *r, double *z, const double *__restrict__ pp,
                         const double *__restrict__ ap, const double *__restrict__ dinv, size_t n)
{
    if (st->done || !(st->pap > 0)) return;
    const double al = st->rz / st->pap;
    double s[2] = {0.0, 0.0};
    GRID_LOOP(q, n)
    {
        x[q] += al * pp[q];
        const double dq = dinv[q];
        const double rq = dq != 0.0 ? r[q] - al * ap[q] : 0.0, zq = dq * rq; /* dinv 0: not in the solve */
        r[q] = rq;
        z[q] = zq;
        s[0] += rq * zq;
        s[1] += rq * rq;
    }
    block_sums_add<2>(s, {&st->rz_next, &st->rr_next});
}
__global__ void k_cg_p(pr_cg_state *st, double *pp, const double *__restrict__ z, size_t n)
{
    if (st->done || !(st->pap > 0)) return;
    const double be = st->rz_next / st->rz;
    GRID_LOOP(q, n) pp[q] = z[q] + be * pp[q];
}
/* one thread: the iteration's scalars, then the loop's condition */
__global__ void k_cg_step(pr_cg_state *st)
{
    if (st->done) return;
    if (!(st->pap > 0)) {
        st->done = 1;
        return;
    }
    st->rz = st->rz_next, st->rr = st->rr_next, st->it++;
    st->pap = st->rz_next = st->rr_next = 0.0;
    const double bb = st->bb;
    st->done = !(st->it < st->iters_max && st->rz > 0 && (st->tol2 == 0 || st->rr > st->tol2 * bb) &&
                 (st->it < st->iters || st->rr > st->ext * bb));
}

gt_status pr_level_stencil(int d)
{
    double stencil[125];
    gt_pr_stencil125(d, stencil);
    GT_CU(cudaMemcpyToSymbol(c_stencil, stencil, sizeof stencil));
    return GT_OK;
}
gt_status pr_rhs(const gt_pr_dev_octree &o, int d, int F, size_t s0, size_t n, const double *rhs, const double *coef,
                 const xtab &T, double *b)
{
    LAUNCH(k_rhs, n, o, d, F, s0, n, rhs, coef, T, b);
    return GT_OK;
}
gt_status pr_stencil(const gt_pr_dev_octree &o, size_t s0, size_t n, const double *pp, double *ap, const int *skip)
{
    if (s0 > 0 && n % 8 == 0) LAUNCH(k_stencil_octet, n / 8, o, s0, n / 8, pp, ap, skip);
    else LAUNCH(k_stencil, n, o, s0, n, pp, ap, skip); /* the root */
    return GT_OK;
}
gt_status pr_jacobi_inv(double *dinv, double *b, const uint8_t *fl, double centre, size_t n)
{
    LAUNCH(k_jacobi_inv, n, dinv, b, fl, centre, n);
    return GT_OK;
}
gt_status pr_mul(double *z, const double *dinv, const double *r, size_t n)
{
    LAUNCH(k_mul, n, z, dinv, r, n);
    return GT_OK;
}
gt_status pr_ddot(const double *a, const double *b, size_t n, double *d_scal, double *out)
{
    GT_TRY(gt_cu_memset(d_scal, 0, sizeof(double), NULL));
    if (n) {
        int grid = (int)gt_grid(n, PR_BLOCK);
        if (grid > 1024) grid = 1024;
        k_dot<<<grid, PR_BLOCK>>>(a, b, n, d_scal, nullptr);
        GT_CU_LAUNCH("k_dot");
    }
    return gt_cu_memcpy_d2h(out, d_scal, sizeof(double), NULL);
}
gt_status pr_cg_tail(pr_cg_state *st, double *x, double *r, double *z, double *pp, const double *ap,
                     const double *dinv, size_t n)
{
    const unsigned grid = gt_grid(n, PR_BLOCK, 1024); /* few atomics per sum */
    k_dot<<<grid, PR_BLOCK>>>(pp, ap, n, &st->pap, &st->done);
    GT_CU_LAUNCH("k_dot");
    k_cg_xrz<<<grid, PR_BLOCK>>>(st, x, r, z, pp, ap, dinv, n);
    GT_CU_LAUNCH("k_cg_xrz");
    LAUNCH(k_cg_p, n, st, pp, z, n);
    k_cg_step<<<1, 1>>>(st);
    GT_CU_LAUNCH("k_cg_step");
    return GT_OK;
}
