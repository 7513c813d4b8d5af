// The stationary methods on the GPU (the Krylov driver is krylov.cu;
// krylov.cuh holds what the methods share): weighted Jacobi and Richardson
// (one kernel an iteration, x double-buffered) and multicolour Gauss-Seidel
// (one kernel per colour, rows of a colour do not couple, then a residual
// kernel; CSR only).
//
// Launch shape: one thread per row, BLOCK threads a block; the reducing
// kernels run grid-stride over as many blocks as fit on the device at once
// (Grids), a colour's kernel one thread per row of the colour.
#include <cuda_runtime.h>

#include "kernels/sparse/krylov.cuh"

namespace gt_krylov {
namespace {

// Jacobi (mode 0: c_i = omega dinv_i) / Richardson (mode 1: c_i = tau):
// r = b - A x_k, x_{k+1} = x_k + c r; records |r| of x_k (k >= 1).
template <typename T, int F>
__global__ void k_jacobi(Mat<T> A, const T *b, T *const *xbuf, const T *dinv, double c, int mode, Sc *sc,
                         double *part)
{
    if (sc->flag) return;
    long long it = sc->iter;
    const T *xs = xbuf[it & 1];
    T *xd = xbuf[(it + 1) & 1];
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double d[1] = {0};
    for (; i < A.n; i += (int64_t)gridDim.x * blockDim.x) {
        T ax = row_apply<T, F>(A, i, [&](int64_t j) { return __ldg(xs + j); });
        T ri = b[i] - ax;
        xd[i] = xs[i] + (mode == 0 ? (T)c * dinv[i] : (T)c) * ri;
        d[0] += (double)ri * (double)ri;
    }
    double tot[1];
    if (reduce_last<1>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        sc->iter = it + 1;
        if (it >= 1) record(sc, tot[0]);
    }
}

// one colour of Gauss-Seidel: rows of one colour do not couple
template <typename T>
__global__ void k_gs_colour(Mat<T> A, const int32_t *rows, int64_t count, const T *b, T *x, const T *dinv,
                            T omega, const Sc *sc)
{
    if (sc->flag) return;
    int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    int64_t i = rows[k];
    T s = b[i];
    for (int64_t p = A.ptr[i], e = A.ptr[i + 1]; p < e; p++) {
        int64_t j = A.col[p];
        if (j != i) s -= A.val[p] * x[j];
    }
    x[i] = ((T)1 - omega) * x[i] + omega * s * dinv[i];
}

template <typename T, int F>
__global__ void k_resid(Mat<T> A, const T *b, const T *x, Sc *sc, double *part)
{
    if (sc->flag) return;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double d[1] = {0};
    for (; i < A.n; i += (int64_t)gridDim.x * blockDim.x) {
        T ri = b[i] - row_apply<T, F>(A, i, [&](int64_t j) { return __ldg(x + j); });
        d[0] += (double)ri * (double)ri;
    }
    double tot[1];
    if (reduce_last<1>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        sc->iter++;
        record(sc, tot[0]);
    }
}

} // namespace

template <typename T>
void jacobi_iter(Solver<T> &S)
{
    const int mode = S.o->method == GT_SOLVE_JACOBI ? 0 : 1;
    if (S.F == F_DIA) KRYLOV_LAUNCH(S, (k_jacobi<T, F_DIA>), S.A, S.b, S.xbuf, S.dinv, S.c, mode, S.sc, S.part);
    else if (S.F == F_ELL) KRYLOV_LAUNCH(S, (k_jacobi<T, F_ELL>), S.A, S.b, S.xbuf, S.dinv, S.c, mode, S.sc, S.part);
    else KRYLOV_LAUNCH(S, (k_jacobi<T, F_CSR>), S.A, S.b, S.xbuf, S.dinv, S.c, mode, S.sc, S.part);
}

template <typename T>
void gs_iter(Solver<T> &S)
{
    for (size_t k = 0; !S.dry && k + 1 < S.colstart.size(); k++) {
        int64_t cnt = S.colstart[k + 1] - S.colstart[k];
        if (cnt == 0) continue;
        k_gs_colour<T><<<gt_grid((size_t)cnt, BLOCK, 0x7fffffffu), BLOCK, 0, S.st>>>(
            S.A, S.colrows + S.colstart[k], cnt, S.b, S.x, S.dinv, (T)S.o->omega, S.sc);
    }
    KRYLOV_LAUNCH(S, (k_resid<T, F_CSR>), S.A, S.b, S.x, S.sc, S.part);
}

template void jacobi_iter<float>(Solver<float> &);
template void jacobi_iter<double>(Solver<double> &);

template void gs_iter<float>(Solver<float> &);
template void gs_iter<double>(Solver<double> &);

} // namespace gt_krylov
