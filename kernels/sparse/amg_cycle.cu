// AMG on the GPU, the V-cycle (twin of lib/sparse/amg_cycle.c and
// amg_smoother.c): a CSR SpMV with a thread or a subwarp per row (y = alpha A x + beta z,
// which also forms residuals and adds corrections), the smoothers as small
// elementwise kernels around it, the restriction and prolongation as SpMVs
// with R and P, the coarsest level as a dense product with its inverse.
// Everything is queued on one stream: no host synchronisation, so the cycle
// can be captured in a CUDA graph.
#include <cuda_runtime.h>

#include <stdlib.h>

#include "kernels/sparse/amg_cu_impl.cuh"

namespace {

constexpr int B = 256;

template <int V>
__global__ void k_spmv(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                       const double *__restrict__ val, const double *__restrict__ x, double *y, double alpha,
                       double beta, const double *z)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t i = t / V;
    int lane = (int)(t % V);
    if (i >= n) return; // whole subwarps leave together
    double s = 0;
    for (int64_t p = ptr[i] + lane, e = ptr[i + 1]; p < e; p += V) s += val[p] * __ldg(x + col[p]);
    unsigned mask = (V == 32) ? 0xffffffffu : (((1u << V) - 1u) << ((threadIdx.x % 32) / V * V));
    for (int o = V / 2; o > 0; o /= 2) s += __shfl_down_sync(mask, s, o, V);
    if (lane == 0) y[i] = beta != 0 ? alpha * s + beta * z[i] : alpha * s;
}

__global__ void k_cheb_start(int64_t n, const double *__restrict__ b, const double *__restrict__ t,
                             const double *__restrict__ dinv, double *__restrict__ r, double *__restrict__ d,
                             double *__restrict__ x, double theta, bool x_zero)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        double ri = (x_zero ? b[i] : t[i]) * dinv[i], di = ri / theta;
        r[i] = ri, d[i] = di;
        x[i] = x_zero ? di : x[i] + di;
    }
}

__global__ void k_cheb_step(int64_t n, const double *__restrict__ dinv, const double *__restrict__ t,
                            const double *__restrict__ r, const double *__restrict__ d, double *__restrict__ x,
                            double c1, double c2)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        double ri = r[i] - dinv[i] * t[i];
        x[i] += c1 * d[i] + c2 * ri;
    }
}

__global__ void k_l1(int64_t n, const double *__restrict__ b, const double *__restrict__ t,
                     const double *__restrict__ l1inv, double *__restrict__ x, bool x_zero)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B)
        x[i] = x_zero ? l1inv[i] * b[i] : x[i] + l1inv[i] * t[i];
}

__global__ void k_l1_setup(int64_t n, const int64_t *__restrict__ ptr, const double *__restrict__ val, double *l1inv)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        double s = 0;
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) s += fabs(val[p]);
        l1inv[i] = 1.0 / s;
    }
}

__global__ void k_gs_colour(int64_t m, const int32_t *__restrict__ rows, const int64_t *__restrict__ ptr,
                            const int32_t *__restrict__ col, const double *__restrict__ val,
                            const double *__restrict__ dinv, const double *__restrict__ b, double *x)
{
    for (int64_t q = (int64_t)blockIdx.x * B + threadIdx.x; q < m; q += (int64_t)gridDim.x * B) {
        int32_t i = rows[q];
        double s = b[i];
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++)
            if (col[p] != i) s -= val[p] * x[col[p]];
        x[i] = s * dinv[i];
    }
}

void smooth(const amg_dlevel *l, gt_amg_smoother kind, int sweeps, const double *b, double *x, bool x_zero, bool post,
            cudaStream_t st)
{
    int64_t n = l->a.n;
    unsigned g = gt_grid((size_t)n, B);
    for (int s = 0; s < sweeps; s++, x_zero = false) {
        if (kind == GT_AMG_SMOOTH_L1JACOBI) {
            if (!x_zero) amg_cu_spmv(&l->a, l->vw, x, l->t, -1.0, 1.0, b, st);
            k_l1<<<g, B, 0, st>>>(n, b, l->t, l->l1inv, x, x_zero);
        } else if (kind == GT_AMG_SMOOTH_MCGS) {
            if (x_zero) cudaMemsetAsync(x, 0, (size_t)n * 8, st);
            for (int32_t kk = 0; kk < l->ncolours; kk++) {
                int32_t k = post ? l->ncolours - 1 - kk : kk;
                int64_t o = l->colour_ptr_h[k], m = l->colour_ptr_h[k + 1] - o;
                if (m > 0)
                    k_gs_colour<<<gt_grid((size_t)m, B), B, 0, st>>>(m, l->colour_rows + o, l->a.ptr, l->a.col, l->a.val,
                                                                     l->dinv, b, x);
            }
        } else {
            double theta, c1, c2;
            amg_cu_cheb_coeffs(l->rho, false, &theta, &c1, &c2);
            if (!x_zero) amg_cu_spmv(&l->a, l->vw, x, l->t, -1.0, 1.0, b, st);
            k_cheb_start<<<g, B, 0, st>>>(n, b, l->t, l->dinv, l->sr, l->sd, x, theta, x_zero);
            amg_cu_spmv(&l->a, l->vw, l->sd, l->t, 1.0, 0.0, nullptr, st);
            k_cheb_step<<<g, B, 0, st>>>(n, l->dinv, l->t, l->sr, l->sd, x, c1, c2);
        }
    }
}

} // namespace

void amg_cu_cheb_coeffs(double rho, bool grid, double *theta, double *c1, double *c2)
{
    double hi = (grid ? GT_AMG_GRID_CHEB_HI : GT_AMG_CHEB_HI) * rho,
           lo = (grid ? GT_AMG_GRID_CHEB_LO : GT_AMG_CHEB_LO) * rho;
    double delta = 0.5 * (hi - lo);
    *theta = 0.5 * (hi + lo);
    double sigma = *theta / delta, rk = 1.0 / sigma, rn = 1.0 / (2 * sigma - rk);
    *c1 = rn * rk, *c2 = 2 * rn / delta;
}

void amg_cu_cycle(const amg_dhier *h, int l, const double *b, double *x, cudaStream_t st)
{
    const amg_dlevel *L = &h->lev[l];
    if (l == h->nlevels - 1) {
        amg_cu_coarse_apply(h->nc, h->cinv, b, x, st);
        return;
    }
    if (L->g.nx) {
        amg_cu_grid_level(h, l, b, x, st);
        return;
    }
    const gt_precond_opts *o = &h->opts;
    smooth(L, o->amg_smoother, o->amg_sweeps, b, x, true, false, st);
    amg_cu_spmv(&L->a, L->vw, x, L->t, -1.0, 1.0, b, st);
    const amg_dlevel *C = &h->lev[l + 1];
    amg_cu_spmv(&L->r, amg_cu_vec_width(&L->r), L->t, C->b, 1.0, 0.0, nullptr, st);
    amg_cu_cycle(h, l + 1, C->b, C->x, st);
    amg_cu_spmv(&L->p, amg_cu_vec_width(&L->p), C->x, x, 1.0, 1.0, x, st);
    smooth(L, o->amg_smoother, o->amg_sweeps, b, x, false, true, st);
}

// A thread per row up to 8 entries a row (the 7-point Laplacian's finest
// level and its P): on 7-point 100^3 the sparse SpMV's csr-scalar ran at
// 2330 GB/s against csr-vector's 1718 (scripts/bench/RESULTS.md, issue 2).
int amg_cu_vec_width(const amg_dcsr *a)
{
    double mean = a->n ? (double)a->nnz / (double)a->n : 1;
    return mean <= 8 ? 1 : mean <= 16 ? 16 : 32;
}

void amg_cu_spmv(const amg_dcsr *a, int vw, const double *x, double *y, double alpha, double beta, const double *z,
                 cudaStream_t st)
{
    unsigned g = gt_grid((size_t)a->n * vw, B);
    switch (vw) {
    case 1: k_spmv<1><<<g, B, 0, st>>>(a->n, a->ptr, a->col, a->val, x, y, alpha, beta, z); break;
    case 4: k_spmv<4><<<g, B, 0, st>>>(a->n, a->ptr, a->col, a->val, x, y, alpha, beta, z); break;
    case 8: k_spmv<8><<<g, B, 0, st>>>(a->n, a->ptr, a->col, a->val, x, y, alpha, beta, z); break;
    case 16: k_spmv<16><<<g, B, 0, st>>>(a->n, a->ptr, a->col, a->val, x, y, alpha, beta, z); break;
    default: k_spmv<32><<<g, B, 0, st>>>(a->n, a->ptr, a->col, a->val, x, y, alpha, beta, z); break;
    }
}

gt_status amg_cu_smoother_setup(amg_dlevel *l, const gt_csr *host_a, gt_amg_smoother kind, cudaStream_t st)
{
    int64_t n = l->a.n;
    if (kind == GT_AMG_SMOOTH_L1JACOBI) {
        GT_TRY(gt_cu_malloc((void **)&l->l1inv, (size_t)n * 8, "amg l1 norms"));
        k_l1_setup<<<gt_grid((size_t)n, B), B, 0, st>>>(n, l->a.ptr, l->a.val, l->l1inv);
        GT_CU_LAUNCH("k_l1_setup");
    } else if (kind == GT_AMG_SMOOTH_MCGS) {
        // the colouring of the CPU reference (gt_sp_colour), on the host copy
        gt_amg_level tmp{};
        tmp.a = *host_a;
        GT_TRY(gt_amg_smoother_setup(&tmp, kind));
        l->ncolours = tmp.ncolours;
        l->colour_ptr_h = tmp.colour_ptr;
        gt_status s = gt_cu_malloc((void **)&l->colour_rows, (size_t)(n ? n : 1) * 4, "amg colour rows");
        if (s == GT_OK) {
            cudaError_t e = cudaMemcpyAsync(l->colour_rows, tmp.colour_rows, (size_t)n * 4, cudaMemcpyHostToDevice, st);
            if (e == cudaSuccess) e = cudaStreamSynchronize(st);
            if (e != cudaSuccess) s = gt_cu_status_from(e, "cudaMemcpyAsync", __FILE__, __LINE__);
        }
        free(tmp.colour_rows);
        return s;
    }
    return GT_OK;
}

gt_status amg_cu_vcycle(const amg_dhier *h, const double *r, double *z, cudaStream_t st)
{
    amg_cu_cycle(h, 0, r, z, st);
    GT_CU_LAUNCH("amg v-cycle");
    return GT_OK;
}
