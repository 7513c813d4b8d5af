// AMG on a grid, the V-cycle's work on a grid level (the GPU twin of
// lib/sparse/amg_cycle.c and the Chebyshev smoother of amg_smoother.c on
// levels whose A is a stencil, amg_grid.h). A level is read as its DIA form
// (nd slots of n values, no column indices), and the smoother's vector
// updates ride on its products:
//   pre-smoothing from x = 0   one pass: A (D^-1 b / theta) formed on the fly
//   a sweep from x != 0        two passes: the residual and D^-1 r / theta,
//                              then A d with the Chebyshev update of x
//   residual, restriction      b - A x, then R = P^T as a 3x3x3 stencil
//   prolongation               x += P x_c, a thread per fine point
// so the finest level of a 7-point matrix costs four passes over its seven
// value arrays a cycle. Every expression is the CPU's, in the CPU's order
// (the slots in order are a sorted CSR row), but for k_pre's 1/theta.
#include <cuda_runtime.h>

#include "kernels/sparse/amg_cu_impl.cuh"

namespace {

constexpr int B = 256;

struct dia_view {
    int64_t n;
    int nd;
    amg_offs off;
    const double *v;
};

dia_view view(const amg_dlevel *L)
{
    return dia_view{L->a.n, L->nd, amg_grid_offsets(L), L->dia};
}

// sum_k a_ik f(i + off_k) in slot order (the loop over a runtime nd: its
// unrolled forms, 7 and 27 known when compiling, ran slower on the large
// levels, 121 against 85 us and 108 against 33 us for the residual on the
// 160^3 Laplacian's levels 0 and 1, and faster only on levels of a few
// thousand rows)
template <class F> __device__ __forceinline__ double row(const dia_view &A, int64_t i, F f)
{
    double s = 0;
    for (int k = 0; k < A.nd; k++) {
        int64_t j = i + A.off.o[k];
        if (j >= 0 && j < A.n) s += A.v[(int64_t)k * A.n + i] * f(j);
    }
    return s;
}

// Chebyshev from x = 0: d = D^-1 b / theta, x = d + c1 d + c2 (D^-1 b - D^-1 A d)
// (the neighbours' d by a product with 1/theta: seven divisions a row
// otherwise, equal to rounding)
__global__ void k_pre(dia_view A, const double *__restrict__ b, const double *__restrict__ dinv, double *__restrict__ x,
                      double theta, double c1, double c2)
{
    double rt = 1.0 / theta;
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < A.n; i += (int64_t)gridDim.x * B) {
        double t = row(A, i, [&](int64_t j) { return b[j] * dinv[j] * rt; });
        double ri = b[i] * dinv[i], di = ri / theta;
        x[i] = di + (c1 * di + c2 * (ri - dinv[i] * t));
    }
}

// a sweep from x != 0, first half: r = D^-1 (b - A x), d = r / theta
__global__ void k_sweep1(dia_view A, const double *__restrict__ b, const double *__restrict__ x,
                         const double *__restrict__ dinv, double *__restrict__ r, double *__restrict__ d, double theta)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < A.n; i += (int64_t)gridDim.x * B) {
        double t = b[i] - row(A, i, [&](int64_t j) { return x[j]; });
        double ri = t * dinv[i];
        r[i] = ri, d[i] = ri / theta;
    }
}

// second half: x += d, then x += c1 d + c2 (r - D^-1 A d)
__global__ void k_sweep2(dia_view A, const double *__restrict__ dinv, const double *__restrict__ r,
                         const double *__restrict__ d, double *__restrict__ x, double c1, double c2)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < A.n; i += (int64_t)gridDim.x * B) {
        double t = row(A, i, [&](int64_t j) { return d[j]; });
        double xi = x[i] + d[i];
        x[i] = xi + (c1 * d[i] + c2 * (r[i] - dinv[i] * t));
    }
}

__global__ void k_resid(dia_view A, const double *__restrict__ b, const double *__restrict__ x, double *__restrict__ t)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < A.n; i += (int64_t)gridDim.x * B)
        t[i] = b[i] - row(A, i, [&](int64_t j) { return x[j]; });
}

// b_c = R t: coarse point I gathers the fine points 2I-1..2I+1 of each dimension
__global__ void k_restrict(gt_amg_grid f, gt_amg_grid c, const double *__restrict__ t, double *__restrict__ bc)
{
    int64_t nc = gt_amg_grid_size(c);
    for (int64_t I = (int64_t)blockIdx.x * B + threadIdx.x; I < nc; I += (int64_t)gridDim.x * B) {
        int64_t cx, cy, cz;
        gt_amg_grid_xyz(c, I, &cx, &cy, &cz);
        double s = 0;
        for (int64_t fz = 2 * cz - 1; fz <= 2 * cz + 1; fz++) {
            if (fz < 0 || fz >= f.nz) continue;
            double wz = gt_amg_grid_rweight(fz, cz, f.nz, f.wend[2]);
            for (int64_t fy = 2 * cy - 1; fy <= 2 * cy + 1; fy++) {
                if (fy < 0 || fy >= f.ny) continue;
                double wy = gt_amg_grid_rweight(fy, cy, f.ny, f.wend[1]);
                for (int64_t fx = 2 * cx - 1; fx <= 2 * cx + 1; fx++) {
                    if (fx < 0 || fx >= f.nx) continue;
                    double wx = gt_amg_grid_rweight(fx, cx, f.nx, f.wend[0]);
                    s += wx * wy * wz * t[fx + f.nx * (fy + f.ny * fz)];
                }
            }
        }
        bc[I] = s;
    }
}

// x += P x_c
__global__ void k_prolong(gt_amg_grid f, gt_amg_grid c, const double *__restrict__ xc, double *__restrict__ x)
{
    int64_t n = gt_amg_grid_size(f);
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        int64_t X[2], Y[2], Z[2];
        double wx[2], wy[2], wz[2];
        int64_t fx, fy, fz;
        gt_amg_grid_xyz(f, i, &fx, &fy, &fz);
        int kx = gt_amg_grid_interp1(fx, c.nx, f.wend[0], X, wx), ky = gt_amg_grid_interp1(fy, c.ny, f.wend[1], Y, wy),
            kz = gt_amg_grid_interp1(fz, c.nz, f.wend[2], Z, wz);
        double s = 0;
        for (int az = 0; az < kz; az++)
            for (int ay = 0; ay < ky; ay++)
                for (int ax = 0; ax < kx; ax++) s += wx[ax] * wy[ay] * wz[az] * xc[X[ax] + c.nx * (Y[ay] + c.ny * Z[az])];
        x[i] += s;
    }
}

} // namespace

void amg_cu_grid_level(const amg_dhier *h, int l, const double *b, double *x, cudaStream_t st)
{
    const amg_dlevel *L = &h->lev[l], *C = &h->lev[l + 1];
    dia_view A = view(L);
    unsigned g = gt_grid((size_t)A.n, B), gc = gt_grid((size_t)C->a.n, B);
    double theta, c1, c2;
    amg_cu_cheb_coeffs(L->rho, true, &theta, &c1, &c2);
    int sweeps = h->opts.amg_sweeps;
    k_pre<<<g, B, 0, st>>>(A, b, L->dinv, x, theta, c1, c2);
    for (int s = 1; s < sweeps; s++) {
        k_sweep1<<<g, B, 0, st>>>(A, b, x, L->dinv, L->sr, L->sd, theta);
        k_sweep2<<<g, B, 0, st>>>(A, L->dinv, L->sr, L->sd, x, c1, c2);
    }
    k_resid<<<g, B, 0, st>>>(A, b, x, L->t);
    k_restrict<<<gc, B, 0, st>>>(L->g, C->g, L->t, C->b);
    amg_cu_cycle(h, l + 1, C->b, C->x, st);
    k_prolong<<<g, B, 0, st>>>(L->g, C->g, C->x, x);
    for (int s = 0; s < sweeps; s++) {
        k_sweep1<<<g, B, 0, st>>>(A, b, x, L->dinv, L->sr, L->sd, theta);
        k_sweep2<<<g, B, 0, st>>>(A, L->dinv, L->sr, L->sd, x, c1, c2);
    }
}
