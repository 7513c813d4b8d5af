/* GPU solve of the screened Poisson system on the device octree: the same
 * stages and arithmetic as gt_pr_solve_cpu (lib/poisson/solve.c): sample
 * density at depth D-2 and sample areas, B-spline splat of the normals at
 * depth D, divergence scattered into the 125-neighbourhoods of the fine
 * nodes' ancestors (double atomics), then per level, coarse to fine: the
 * right-hand side with the coarser levels' Laplacian and screening moved
 * over, and CG on the 125-point stencil plus point screening. One thread
 * per node or per point; 125-neighbours from the parent's 27 via the LUTs. */
#include <cuda_runtime.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/progress.h"
#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "kernels/common/cu_runtime.h"
#include "kernels/poisson/pr_gpu_internal.h"
#include "poisson/pr_morton.h"

__constant__ uint8_t c_lutp125[8][125];
__constant__ uint8_t c_lutc125[8][125];
__constant__ double c_stencil[125];

/* 1D integral tables between a level-df function and the functions of a
 * coarser level dg around its ancestor, as in lib/poisson/solve.c: for each
 * dg, 2^(df-dg) rows of 5 values, M = (value, value) and G = (a, b)
 * derivatives; computed on the host by the same code as the CPU's. */
struct xtab {
    const double *M, *G;
    unsigned long long off[GT_PR_MAX_DEPTH + 1];
};

#define GRID_LOOP(i, n) for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

__device__ __forceinline__ double d_bspline(double t)
{
    double a = fabs(t);
    if (a < 0.5) return 0.75 - t * t;
    if (a < 1.5) return 0.5 * (1.5 - a) * (1.5 - a);
    return 0.0;
}
__device__ __forceinline__ double d_dbspline(double t)
{
    double a = fabs(t);
    if (a < 0.5) return -2.0 * t;
    if (a < 1.5) return t > 0 ? -(1.5 - a) : (1.5 - a);
    return 0.0;
}
__device__ __forceinline__ void d_xyz(const uint64_t *key, size_t v, int64_t c[3])
{
    uint64_t k = key[v];
    c[0] = gt_pr_compact3(k);
    c[1] = gt_pr_compact3(k >> 1);
    c[2] = gt_pr_compact3(k >> 2);
}
__device__ __forceinline__ double d_basis(int level, const int64_t c[3], const float *p)
{
    double s = ldexp(1.0, level), r = 1.0;
    for (int a = 0; a < 3; a++) r *= d_bspline((double)p[a] * s - (double)c[a] - 0.5);
    return r;
}
__device__ __forceinline__ int32_t d_nbr125(const gt_pr_dev_octree o, int32_t node, int i)
{
    if (node == 0) return i == 62 ? 0 : -1;
    int32_t p = o.parent[node];
    int c = (int)(o.key[node] & 7);
    int32_t pn = o.nbr[27 * (size_t)p + c_lutp125[c][i]];
    if (pn < 0) return -1;
    int32_t ch = o.child[pn];
    return ch < 0 ? -1 : ch + c_lutc125[c][i];
}
__device__ double d_eval_point(const gt_pr_dev_octree o, int level, int32_t node, const float *p, const double *x,
                               size_t xoff)
{
    double s = 0.0;
    for (int i = 0; i < 27; i++) {
        int32_t nb = o.nbr[27 * (size_t)node + i];
        if (nb < 0) continue;
        int64_t c[3];
        d_xyz(o.key, (size_t)nb, c);
        s += x[nb - xoff] * d_basis(level, c, p);
    }
    return s;
}

/* Visit the (up to) 125 same-level neighbours of `node` within +-2 cells,
 * f(t, i) with i = (dx+2) + 5(dy+2) + 25(dz+2): they are children of the
 * parent's 27 neighbours (the rule behind the 125-LUTs), so walking those 27
 * and their 8 consecutive children reads 2 x 27 links and contiguous
 * children instead of 125 x 4 dependent loads, and siblings share them. */
template <class F>
__device__ __forceinline__ void for_nbr125(const gt_pr_dev_octree &o, int32_t node, F f)
{
    if (node == 0) {
        f(0, 62);
        return;
    }
    const int32_t P = o.parent[node];
    const int c = (int)(o.key[node] & 7);
    const int cx = c & 1, cy = (c >> 1) & 1, cz = c >> 2;
    for (int j = 0; j < 27; j++) {
        const int32_t pn = o.nbr[27 * (size_t)P + j];
        if (pn < 0) continue;
        const int32_t ch = o.child[pn];
        if (ch < 0) continue;
        const int jx = j % 3 - 1, jy = (j / 3) % 3 - 1, jz = j / 9 - 1;
#pragma unroll
        for (int cc = 0; cc < 8; cc++) {
            const int dx = 2 * jx + (cc & 1) - cx, dy = 2 * jy + ((cc >> 1) & 1) - cy, dz = 2 * jz + (cc >> 2) - cz;
            if (dx < -2 || dx > 2 || dy < -2 || dy > 2 || dz < -2 || dz > 2) continue;
            f(ch + cc, (dx + 2) + 5 * (dy + 2) + 25 * (dz + 2));
        }
    }
}

/* Screening and density terms as a scatter from the points: for every point
 * k (in key order, so the points of one node are consecutive) with level-d
 * node lnode[k], the 27 level-d nodes t around that node get
 *   out[t - ooff] += scale * w_k * F_t(p_k),
 * w_k = 1 (MODE_ONE), area_k val[k] (MODE_VAL) or area_k sum_t' pp[t'] F_t'(p_k)
 * (MODE_PP: the level's functions with coefficients pp at the point, i.e.
 * one application of the screening matrix without a per-point array).
 * The same sums as the CPU's node-side gather over the 27 neighbour cells,
 * but one thread per point: at the coarse levels a node-side loop would walk
 * all the points in one thread. Points of one node within a warp are summed
 * by a segmented shuffle scan first, so a coarse node gets one atomic per
 * warp, not one per point. */
enum { MODE_ONE = 0, MODE_VAL = 1, MODE_PP = 2 };
template <int MODE>
__global__ void k_point_scatter(const gt_pr_dev_octree o, int d, const int32_t *__restrict__ lnode,
                                const float *__restrict__ u, const float *__restrict__ area,
                                const double *__restrict__ val, size_t voff, double scale, double *out, size_t ooff,
                                size_t N)
{
    const unsigned FULL = 0xffffffffu;
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
            d_xyz(o.key, (size_t)node, c);
            for (int a = 0; a < 3; a++) {
                const double pa = (double)u[3 * k + a] * sc;
                for (int j = 0; j < 3; j++) f[a][j] = d_bspline(pa - (double)(c[a] + j - 1) - 0.5);
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
            } else {
                double uv = 0.0;
                for (int i = 0; i < 27; i++) {
                    const int32_t t = o.nbr[27 * (size_t)node + i];
                    if (t >= 0) uv += val[t - voff] * (f[0][i % 3] * f[1][(i / 3) % 3] * f[2][i / 9]);
                }
                w = scale * (double)area[k] * uv;
            }
        }
        /* segments: runs of equal nodes; s = first lane of mine */
        const int32_t prev = __shfl_up_sync(FULL, node, 1);
        const int32_t next = __shfl_down_sync(FULL, node, 1);
        const bool head = lane == 0 || prev != node;
        const bool tail = lane == 31 || next != node;
        const unsigned H = __ballot_sync(FULL, head);
        const int s = 31 - __clz(H & (FULL >> (31 - lane)));
        const bool singles = H == FULL;
        for (int i = 0; i < 27; i++) {
            const int32_t t = act ? o.nbr[27 * (size_t)node + i] : -1;
            double v = w * (f[0][i % 3] * f[1][(i / 3) % 3] * f[2][i / 9]);
            if (!singles)
                for (int off = 1; off < 32; off <<= 1) {
                    const double y = __shfl_up_sync(FULL, v, off);
                    if (lane - off >= s) v += y;
                }
            if (act && tail && t >= 0 && v != 0.0) atomicAdd(&out[t - ooff], v);
        }
    }
}
/* block partial sums of a.b added into *out (zeroed by the caller) */
__global__ void k_dot(const double *__restrict__ a, const double *__restrict__ b, size_t n, double *out)
{
    __shared__ double part[32];
    double s = 0.0;
    GRID_LOOP(i, n) s += a[i] * b[i];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0;
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
        if (threadIdx.x == 0) atomicAdd(out, s);
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
__global__ void k_area(const gt_pr_dev_octree o, int Dw, const int32_t *lnode, const float *u, const double *w,
                       double w2, double spn, float *area, size_t n)
{
    GRID_LOOP(k, n)
    {
        double W = d_eval_point(o, Dw, lnode[k], u + 3 * k, w, 0);
        area[k] = (float)(GT_PR_KAPPA * w2 / (W > spn ? W : spn));
    }
}
__global__ void k_splat(const gt_pr_dev_octree o, int D, size_t s0, size_t n, const float *u, const float *nrm,
                        const float *area, double inv_w3, double *vf)
{
    GRID_LOOP(q, n)
    {
        size_t v = s0 + q;
        int64_t c[3];
        d_xyz(o.key, v, c);
        double acc[3] = {0, 0, 0};
        for (int i = 0; i < 27; i++) {
            int32_t nb = o.nbr[27 * v + i];
            if (nb < 0) continue;
            for (uint32_t k = o.pt_start[nb]; k < o.pt_start[nb] + o.pt_count[nb]; k++) {
                double f = d_basis(D, c, u + 3 * (size_t)k) * (double)area[k];
                for (int a = 0; a < 3; a++) acc[a] += f * (double)nrm[3 * (size_t)k + a];
            }
        }
        for (int a = 0; a < 3; a++) vf[3 * q + a] = acc[a] * inv_w3;
    }
}
/* Divergence: every depth-D node f with a nonzero splatted vector scatters
 * v_f . int grad F_t F_f into the 125-neighbourhood t of each of its
 * ancestors. One lane per fine node; lanes with the same ancestor at a level
 * (consecutive, as the nodes are key-sorted) are summed by a segmented
 * shuffle scan first, so the coarse levels' few targets do not take one
 * atomic per fine node. */
__global__ void k_divergence(const gt_pr_dev_octree o, int D, size_t s0, size_t n, const double *__restrict__ vf,
                             const xtab T, double *rhs)
{
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t nwarps = ((size_t)gridDim.x * blockDim.x) >> 5;
    for (size_t base = warp * 32; base < n; base += nwarps * 32) {
        const size_t q = base + lane;
        const bool act = q < n;
        double vv[3] = {0.0, 0.0, 0.0};
        if (act)
            for (int a = 0; a < 3; a++) vv[a] = vf[3 * q + a];
        const bool nz = vv[0] != 0 || vv[1] != 0 || vv[2] != 0;
        if (!__any_sync(FULL, nz)) continue;
        int64_t cf[3] = {0, 0, 0};
        if (act) d_xyz(o.key, s0 + q, cf);
        int32_t anc = act ? (int32_t)(s0 + q) : -1;
        for (int d = D; d >= 0; d--) {
            double M[3][5], G[3][5];
            if (act) {
                int64_t ca[3];
                d_xyz(o.key, (size_t)anc, ca);
                for (int a = 0; a < 3; a++) {
                    size_t r = (size_t)(cf[a] - (ca[a] << (D - d)));
                    for (int k = 0; k < 5; k++) {
                        M[a][k] = T.M[T.off[d] + r * 5 + k];
                        G[a][k] = T.G[T.off[d] + r * 5 + k];
                    }
                }
            } else {
                for (int a = 0; a < 3; a++)
                    for (int k = 0; k < 5; k++) M[a][k] = G[a][k] = 0.0;
            }
            const int32_t prev = __shfl_up_sync(FULL, anc, 1);
            const int32_t next = __shfl_down_sync(FULL, anc, 1);
            const bool head = lane == 0 || prev != anc;
            const bool tail = lane == 31 || next != anc;
            const unsigned H = __ballot_sync(FULL, head);
            const int sl = 31 - __clz(H & (FULL >> (31 - lane)));
            const bool singles = H == FULL;
            for (int i = 0; i < 125; i++) {
                const int32_t t = act ? d_nbr125(o, anc, i) : -1;
                const int kx = i % 5, ky = (i / 5) % 5, kz = i / 25;
                double val = vv[0] * G[0][kx] * M[1][ky] * M[2][kz] + vv[1] * M[0][kx] * G[1][ky] * M[2][kz] +
                             vv[2] * M[0][kx] * M[1][ky] * G[2][kz];
                if (!singles)
                    for (int off = 1; off < 32; off <<= 1) {
                        const double y = __shfl_up_sync(FULL, val, off);
                        if (lane - off >= sl) val += y;
                    }
                if (tail && t >= 0 && val != 0.0) atomicAdd(&rhs[t], val);
            }
            if (d == 0) break;
            if (act) anc = o.parent[anc];
        }
    }
}
/* b = divergence - the coarser levels' Laplacian applied to their solution
 * (the coarser screening is scattered from the points afterwards) */
__global__ void k_rhs(const gt_pr_dev_octree o, int d, size_t s0, size_t n, const double *rhs, const double *coef,
                      const xtab T, double *b)
{
    GRID_LOOP(q, n)
    {
        size_t v = s0 + q;
        double acc = rhs[v];
        int64_t cv[3];
        d_xyz(o.key, v, cv);
        int32_t anc = o.parent[v];
        for (int dc = d - 1; dc >= 0; dc--) {
            int64_t ca[3];
            d_xyz(o.key, (size_t)anc, ca);
            double M[3][5], G[3][5];
            for (int a = 0; a < 3; a++) {
                size_t r = (size_t)(cv[a] - (ca[a] << (d - dc)));
                for (int k = 0; k < 5; k++) {
                    M[a][k] = T.M[T.off[dc] + r * 5 + k];
                    G[a][k] = T.G[T.off[dc] + r * 5 + k];
                }
            }
            for_nbr125(o, anc, [&](int32_t t, int i) {
                const int kx = i % 5, ky = (i / 5) % 5, kz = i / 25;
                const double L = G[0][kx] * M[1][ky] * M[2][kz] + M[0][kx] * G[1][ky] * M[2][kz] +
                                 M[0][kx] * M[1][ky] * G[2][kz];
                acc -= L * coef[t];
            });
            if (dc == 0) break;
            anc = o.parent[anc];
        }
        b[q] = acc;
    }
}
/* ap = L pp, the level's 125-point Laplacian stencil (pp, ap level-local) */
__global__ void k_stencil(const gt_pr_dev_octree o, size_t s0, size_t n, const double *__restrict__ pp,
                          double *__restrict__ ap)
{
    GRID_LOOP(q, n)
    {
        double acc = 0;
        for_nbr125(o, (int32_t)(s0 + q), [&](int32_t t, int i) { acc += c_stencil[i] * pp[t - s0]; });
        ap[q] = acc;
    }
}
__global__ void k_update_xr(double *x, double *r, const double *pp, const double *ap, double al, size_t n)
{
    GRID_LOOP(q, n)
    {
        x[q] += al * pp[q];
        r[q] -= al * ap[q];
    }
}
__global__ void k_update_p(double *pp, const double *r, double be, size_t n)
{
    GRID_LOOP(q, n) pp[q] = r[q] + be * pp[q];
}
__global__ void k_ptval_add(const gt_pr_dev_octree o, int d, const int32_t *lnode, const float *u, const double *coef,
                            double *ptval, size_t N)
{
    GRID_LOOP(k, N) ptval[k] += d_eval_point(o, d, lnode[k], u + 3 * k, coef, 0);
}
__global__ void k_fill(double *a, double v, size_t n)
{
    GRID_LOOP(k, n) a[k] = v;
}

#define PR_BLOCK 256
#define LAUNCH(kernel, n, ...)                                      \
    do {                                                       \
        kernel<<<gt_grid((n), PR_BLOCK), PR_BLOCK>>>(__VA_ARGS__);           \
        GT_CU_LAUNCH(#kernel);                                 \
    } while (0)

typedef struct {
    double *tM, *tG; /* integral tables (first: freed with the rest) */
    float *u, *nrm, *area;
    int32_t *leaf, *lnode;
    double *wdens, *rhs, *coef, *vf, *ptval, *b, *r, *pp, *ap, *scal;
} bufs_t;

static void free_bufs(bufs_t *m)
{
    void **p = (void **)m;
    for (size_t i = 0; i < sizeof *m / sizeof(void *); i++) gt_cu_free(p[i]);
    memset(m, 0, sizeof *m);
}

/* tables for a level-df function against levels 0..dmax (dmax <= df):
 * uploaded into m->tM/m->tG (grown as needed), offsets in T */
static gt_status make_tables(int df, int dmax, int a, int b, bufs_t *m, size_t *cap, xtab *T)
{
    size_t total = 0;
    for (int dg = 0; dg <= dmax; dg++) {
        T->off[dg] = total;
        total += ((size_t)1 << (df - dg)) * 5;
    }
    if (total > *cap) {
        gt_cu_free(m->tM);
        gt_cu_free(m->tG);
        m->tM = m->tG = NULL;
        GT_TRY(gt_cu_malloc((void **)&m->tM, total * sizeof(double), "integral tables"));
        GT_TRY(gt_cu_malloc((void **)&m->tG, total * sizeof(double), "integral tables"));
        *cap = total;
    }
    double *hM = (double *)gt_malloc_array(total, sizeof(double), "integral tables");
    double *hG = (double *)gt_malloc_array(total, sizeof(double), "integral tables");
    if (!hM || !hG) { free(hM); free(hG); return GT_ERR_RUNTIME; }
    for (int dg = 0; dg <= dmax; dg++) {
        size_t rows = (size_t)1 << (df - dg);
        for (size_t r = 0; r < rows; r++)
            for (int k = 0; k < 5; k++) {
                hM[T->off[dg] + r * 5 + k] = gt_pr_integral1d(df, (int64_t)r, 0, dg, k - 2, 0);
                hG[T->off[dg] + r * 5 + k] = gt_pr_integral1d(df, (int64_t)r, a, dg, k - 2, b);
            }
    }
    gt_status st = gt_cu_memcpy_h2d(m->tM, hM, total * sizeof(double), NULL);
    if (st == GT_OK) st = gt_cu_memcpy_h2d(m->tG, hG, total * sizeof(double), NULL);
    /* the copies are synchronous for pageable memory with the NULL stream only
     * up to staging: sync before the host buffers go */
    if (st == GT_OK) st = gt_cu_sync();
    free(hM);
    free(hG);
    T->M = m->tM;
    T->G = m->tG;
    return st;
}

static gt_status dsum(const double *a, size_t n, double *out)
{
    return gt_cu_reduce_sum_f64(a, n, out, NULL, NULL);
}
/* a.b through a device scalar (one small copy back) */
static gt_status ddot(const double *a, const double *b, size_t n, double *d_scal, double *out)
{
    GT_TRY(gt_cu_memset(d_scal, 0, sizeof(double), NULL));
    if (n) {
        int grid = (int)gt_grid(n, PR_BLOCK);
        if (grid > 1024) grid = 1024;
        k_dot<<<grid, PR_BLOCK>>>(a, b, n, d_scal);
        GT_CU_LAUNCH("k_dot");
    }
    return gt_cu_memcpy_d2h(out, d_scal, sizeof(double), NULL);
}

static gt_status solve(const gt_pr_dev_octree *dptr, const float *d_u_unsorted, const float *d_n_unsorted, gt_pr_state *s,
                       const gt_pr_params *p, gt_timings *tm, bufs_t *m, double **d_coef)
{
    const gt_pr_dev_octree o = *dptr;
    const gt_pr_octree *h = &s->oct;
    const int D = h->depth;
    const size_t N = h->npts, NN = h->nnodes;
    gt_timer tmr, sub;
    gt_timer_start(&tmr, true, NULL);
    gt_pr_luts_init();
    GT_CU(cudaMemcpyToSymbol(c_lutp125, gt_pr_lut_parent125, sizeof gt_pr_lut_parent125));
    GT_CU(cudaMemcpyToSymbol(c_lutc125, gt_pr_lut_child125, sizeof gt_pr_lut_child125));
    size_t nmax = 0;
    for (int l = 0; l <= D; l++)
        if (h->level_start[l + 1] - h->level_start[l] > nmax) nmax = h->level_start[l + 1] - h->level_start[l];
    const size_t nD = h->level_start[D + 1] - h->level_start[D];
    GT_TRY(gt_cu_malloc((void **)&m->u, 3 * N * sizeof(float), "sorted points"));
    GT_TRY(gt_cu_malloc((void **)&m->nrm, 3 * N * sizeof(float), "sorted normals"));
    GT_TRY(gt_cu_malloc((void **)&m->area, N * sizeof(float), "areas"));
    GT_TRY(gt_cu_malloc((void **)&m->leaf, N * sizeof(int32_t), "leaves"));
    GT_TRY(gt_cu_malloc((void **)&m->lnode, N * sizeof(int32_t), "point nodes"));
    GT_TRY(gt_cu_malloc((void **)&m->wdens, NN * sizeof(double), "density"));
    GT_TRY(gt_cu_malloc((void **)&m->rhs, NN * sizeof(double), "rhs"));
    GT_TRY(gt_cu_malloc((void **)&m->coef, NN * sizeof(double), "coefficients"));
    GT_TRY(gt_cu_malloc((void **)&m->vf, 3 * nD * sizeof(double), "vector field"));
    GT_TRY(gt_cu_malloc((void **)&m->ptval, N * sizeof(double), "point values"));
    GT_TRY(gt_cu_malloc((void **)&m->scal, 4 * sizeof(double), "cg scalars"));
    GT_TRY(gt_cu_malloc((void **)&m->b, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_malloc((void **)&m->r, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_malloc((void **)&m->pp, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_malloc((void **)&m->ap, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_memset(m->wdens, 0, NN * sizeof(double), NULL));
    GT_TRY(gt_cu_memset(m->rhs, 0, NN * sizeof(double), NULL));
    GT_TRY(gt_cu_memset(m->coef, 0, NN * sizeof(double), NULL));
    /* points and normals in key order */
    LAUNCH(k_gather_sorted, N, d_u_unsorted, o.order, m->u, N);
    LAUNCH(k_gather_sorted, N, d_n_unsorted, o.order, m->nrm, N);
    LAUNCH(k_leaf, nD, o, h->level_start[D], nD, m->leaf);

    /* 1. density and areas */
    const int Dw = D >= 2 ? D - 2 : 0;
    s->density_depth = Dw;
    {
        LAUNCH(k_up, N, o.parent, m->leaf, D - Dw, m->lnode, N);
        LAUNCH(k_point_scatter<MODE_ONE>, N, o, Dw, m->lnode, m->u, NULL, NULL, 0, 1.0, m->wdens, 0, N);
        double spn = p->samples_per_node > 0 ? p->samples_per_node : 1e-9;
        LAUNCH(k_area, N, o, Dw, m->lnode, m->u, m->wdens, ldexp(1.0, -2 * Dw), spn, m->area, N);
    }
    /* 2. splat */
    LAUNCH(k_splat, nD, o, D, h->level_start[D], nD, m->u, m->nrm, m->area, ldexp(1.0, 3 * D), m->vf);
    if (tm) gt_timings_add(tm, "splat (gpu)", gt_timer_stop(&tmr));
    gt_timer_start(&tmr, true, NULL);
    /* 3. divergence */
    size_t tcap = 0;
    xtab T;
    memset(&T, 0, sizeof T);
    GT_TRY(make_tables(D, D, 0, 1, m, &tcap, &T));
    LAUNCH(k_divergence, nD, o, D, h->level_start[D], nD, m->vf, T, m->rhs);
    if (tm) gt_timings_add(tm, "divergence (gpu)", gt_timer_stop(&tmr));
    gt_timer_start(&tmr, true, NULL);

    /* 4. cascadic solve */
    s->alpha = p->point_weight * ldexp(1.0, D);
    const double alpha = s->alpha;
    const int iters = p->iters > 0 ? p->iters : (p->solver == GT_PR_SOLVER_CG ? 200 : 24);
    const double tol = p->cg_tol > 0 ? p->cg_tol : (p->solver == GT_PR_SOLVER_CG ? 1e-7 : 0.0);
    LAUNCH(k_fill, N, m->ptval, -GT_PR_TARGET, N);
    gt_progress prog;
    if (p->progress) gt_progress_start(&prog, "solve", D + 1);
    for (int d = 0; d <= D; d++) {
        size_t s0 = h->level_start[d], n = h->level_start[d + 1] - s0;
        double stencil[125];
        for (int i = 0; i < 125; i++) {
            int k[3] = {i % 5 - 2, (i / 5) % 5 - 2, i / 25 - 2};
            double M[3], G[3];
            for (int a = 0; a < 3; a++) {
                M[a] = gt_pr_integral1d(d, 0, 0, d, k[a], 0);
                G[a] = gt_pr_integral1d(d, 0, 1, d, k[a], 1);
            }
            stencil[i] = G[0] * M[1] * M[2] + M[0] * G[1] * M[2] + M[0] * M[1] * G[2];
        }
        GT_CU(cudaMemcpyToSymbol(c_stencil, stencil, sizeof stencil));
        LAUNCH(k_up, N, o.parent, m->leaf, D - d, m->lnode, N);
        if (d > 0) GT_TRY(make_tables(d, d - 1, 1, 1, m, &tcap, &T));
        gt_timer_start(&sub, true, NULL);
        LAUNCH(k_rhs, n, o, d, s0, n, m->rhs, m->coef, T, m->b);
        if (alpha > 0)
            LAUNCH(k_point_scatter<MODE_VAL>, N, o, d, m->lnode, m->u, m->area, m->ptval, 0, -alpha, m->b, s0, N);
        if (tm) gt_timings_add(tm, "solve: right-hand sides", gt_timer_stop(&sub));
        gt_timer_start(&sub, true, NULL);
        double *x = m->coef + s0;
        GT_TRY(gt_cu_memcpy_d2d(m->r, m->b, n * sizeof(double), NULL));
        GT_TRY(gt_cu_memcpy_d2d(m->pp, m->b, n * sizeof(double), NULL));
        double rr, bb;
        GT_TRY(ddot(m->r, m->r, n, m->scal, &rr));
        bb = rr;
        for (int it = 0; it < iters && rr > 0 && rr > tol * tol * bb; it++) {
            LAUNCH(k_stencil, n, o, s0, n, m->pp, m->ap);
            if (alpha > 0)
                LAUNCH(k_point_scatter<MODE_PP>, N, o, d, m->lnode, m->u, m->area, m->pp, s0, alpha, m->ap, s0, N);
            double pap;
            GT_TRY(ddot(m->pp, m->ap, n, m->scal, &pap));
            if (!(pap > 0)) break;
            double al = rr / pap, rr2;
            LAUNCH(k_update_xr, n, x, m->r, m->pp, m->ap, al, n);
            GT_TRY(ddot(m->r, m->r, n, m->scal, &rr2));
            double be = rr2 / rr;
            rr = rr2;
            LAUNCH(k_update_p, n, m->pp, m->r, be, n);
        }
        if (tm) gt_timings_add(tm, "solve: cg", gt_timer_stop(&sub));
        LAUNCH(k_ptval_add, N, o, d, m->lnode, m->u, m->coef, m->ptval, N);
        if (p->progress) gt_progress_update(&prog, d + 1, NULL);
    }
    if (p->progress) gt_progress_end(&prog);
    double sum;
    GT_TRY(dsum(m->ptval, N, &sum));
    s->iso = sum / (double)N + GT_PR_TARGET;
    if (tm) gt_timings_add(tm, "solve (gpu)", gt_timer_stop(&tmr));
    /* the solution stays on the device for the extraction; host copies of
     * what the host-side stages read when the host octree was downloaded */
    if (h->key) {
        s->coef = (double *)gt_malloc_array(NN, sizeof(double), "coefficients");
        s->wdens = (double *)gt_malloc_array(NN, sizeof(double), "density");
        s->area = (float *)gt_malloc_array(N, sizeof(float), "areas");
        if (!s->coef || !s->wdens || !s->area) return GT_ERR_RUNTIME;
        GT_TRY(gt_cu_memcpy_d2h(s->coef, m->coef, NN * sizeof(double), NULL));
        GT_TRY(gt_cu_memcpy_d2h(s->wdens, m->wdens, NN * sizeof(double), NULL));
        GT_TRY(gt_cu_memcpy_d2h(s->area, m->area, N * sizeof(float), NULL));
    }
    *d_coef = m->coef;
    m->coef = NULL;
    return GT_OK;
}

gt_status gt_pr_dev_solve(const gt_pr_dev_octree *d, const float *d_u_unsorted, const float *d_n_unsorted,
                          gt_pr_state *s, const gt_pr_params *p, gt_timings *tm, double **d_coef)
{
    bufs_t m;
    memset(&m, 0, sizeof m);
    *d_coef = NULL;
    gt_status st = solve(d, d_u_unsorted, d_n_unsorted, s, p, tm, &m, d_coef);
    free_bufs(&m);
    return st;
}
