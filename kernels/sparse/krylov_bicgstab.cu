// BiCGStab on the GPU (the Krylov driver is krylov.cu; krylov.cuh holds
// what the methods share): five kernels an iteration, p update, SpMV with
// r0'v, s and its norm (converged at the half step), SpMV with t's two dot
// products, and the x, r update with rho; breakdowns set the flag (omega's
// near-zero test as the CPU's, gt_bicg_tiny in lib/sparse/solve_track.h).
//
// Launch shape: one thread per row, BLOCK threads a block, grid-stride over
// as many blocks as fit on the device at once (Grids), each reduction
// finishing in its kernel's last block.
#include <cuda_runtime.h>

#include "kernels/sparse/krylov.cuh"

namespace gt_krylov {
namespace {

// BiCGStab
template <typename T>
__global__ void k_bi_p(int64_t n, const T *r, T *p, const T *v, const Sc *sc)
{
    if (sc->flag) return;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += (int64_t)gridDim.x * blockDim.x) p[i] = r[i] + (T)sc->beta * (p[i] - (T)sc->omega * v[i]);
}

// y = A s; mode 0: d0 = rh.y -> alpha = rho / d0;  mode 1: d0 = y.s, d1 = y.y -> omega
template <typename T, int F>
__global__ void k_bi_spmv(Mat<T> A, const T *src, T *y, const T *rh, int mode, Sc *sc, double *part)
{
    if (sc->flag) return;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double d[2] = {0, 0};
    for (; i < A.n; i += (int64_t)gridDim.x * blockDim.x) {
        T yi = row_apply<T, F>(A, i, [&](int64_t j) { return __ldg(src + j); });
        y[i] = yi;
        if (mode == 0) d[0] += (double)rh[i] * (double)yi;
        else d[0] += (double)yi * (double)src[i], d[1] += (double)yi * (double)yi;
    }
    double tot[2];
    if (reduce_last<2>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        if (mode == 0) {
            if (tot[0] == 0 || !isfinite(tot[0])) {
                sc->flag = isfinite(tot[0]) ? FL_BREAK : FL_NAN;
                sc->breakwhy = 1;
            } else {
                sc->alpha = sc->rho / tot[0];
            }
        } else if (fabs(tot[0]) <= (sizeof(T) == 4 ? 1e-6 : 1e-14) * sqrt(tot[1]) * sqrt(sc->ss)) {
            // omega ~ 0: A s orthogonal to s to rounding (x has its alpha p
            // already); the iteration counted with s's residual, as the CPU
            sc->iter++;
            record(sc, sc->ss);
            if (sc->flag == FL_RUN || sc->flag == FL_MAXIT) sc->flag = FL_BREAK, sc->breakwhy = 3;
        } else {
            sc->omega = tot[0] / tot[1];
        }
    }
}

// s = r - alpha v (s stored in r's place is not possible: s separate); x += alpha p; ss
template <typename T>
__global__ void k_bi_s(int64_t n, const T *r, const T *v, const T *p, T *s, T *x, Sc *sc, double *part)
{
    if (sc->flag) return;
    T alpha = (T)sc->alpha;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double d[1] = {0};
    for (; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T si = r[i] - alpha * v[i];
        s[i] = si;
        x[i] += alpha * p[i];
        d[0] += (double)si * (double)si;
    }
    double tot[1];
    if (reduce_last<1>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        sc->ss = tot[0];
        if (tot[0] <= sc->tol2 * sc->bb) {
            sc->iter++;
            record(sc, tot[0]); // converged at the half step
        }
    }
}

template <typename T>
__global__ void k_bi_u(int64_t n, const T *s, const T *t, const T *rh, T *r, T *x, Sc *sc, double *part)
{
    if (sc->flag) return;
    T omega = (T)sc->omega;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double d[2] = {0, 0};
    for (; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        x[i] += omega * s[i];
        T ri = s[i] - omega * t[i];
        r[i] = ri;
        d[0] += (double)rh[i] * (double)ri, d[1] += (double)ri * (double)ri;
    }
    double tot[2];
    if (reduce_last<2>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        double rho = tot[0];
        sc->beta = (rho / sc->rho) * (sc->alpha / sc->omega);
        sc->iter++;
        record(sc, tot[1]);
        if (sc->flag == FL_RUN && (rho == 0 || sc->omega == 0)) {
            sc->flag = FL_BREAK;
            sc->breakwhy = rho == 0 ? 2 : 3;
        }
        sc->rho = rho;
    }
}

template <typename T, int FF>
void bicgstab_iter_f(Solver<T> &S)
{
    KRYLOV_LAUNCH(S, (k_bi_p<T>), S.n, S.r, S.p[0], S.v, S.sc);
    KRYLOV_LAUNCH(S, (k_bi_spmv<T, FF>), S.A, S.p[0], S.v, S.rh, 0, S.sc, S.part);
    KRYLOV_LAUNCH(S, (k_bi_s<T>), S.n, S.r, S.v, S.p[0], S.s, S.x, S.sc, S.part);
    KRYLOV_LAUNCH(S, (k_bi_spmv<T, FF>), S.A, S.s, S.t, S.rh, 1, S.sc, S.part);
    KRYLOV_LAUNCH(S, (k_bi_u<T>), S.n, S.s, S.t, S.rh, S.r, S.x, S.sc, S.part);
}

} // namespace

template <typename T>
void bicgstab_iter(Solver<T> &S)
{
    if (S.F == F_DIA) bicgstab_iter_f<T, F_DIA>(S);
    else if (S.F == F_ELL) bicgstab_iter_f<T, F_ELL>(S);
    else bicgstab_iter_f<T, F_CSR>(S);
}

template void bicgstab_iter<float>(Solver<float> &);
template void bicgstab_iter<double>(Solver<double> &);

} // namespace gt_krylov
