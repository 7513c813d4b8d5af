// Shared by the GPU Krylov solvers (C++ only): the device-side solver state
// (Sc: scalars, flags and the residual history the host reads once per chunk
// of iterations), the matrix view of the three formats a solve runs on
// (Mat: CSR, ELL, DIA), the row product, the grid reductions that finish in
// the kernel's last block, and the host-side Solver that holds the vectors
// and launches an iteration. The kernels of each method are in their own
// file, each with a launcher that queues one iteration:
//   krylov_cg.cu          CG / Jacobi-PCG (fused one-kernel and two-kernel)
//   krylov_bicgstab.cu    BiCGStab
//   krylov_stationary.cu  weighted Jacobi / Richardson, multicolour Gauss-Seidel
//   krylov.cu             the driver: set-up, the CUDA graph of a chunk of
//                         iterations, the host's checks, the result.
#ifndef GT_KERNELS_SPARSE_KRYLOV_CUH
#define GT_KERNELS_SPARSE_KRYLOV_CUH

#include <cuda_runtime.h>

#include <math.h>
#include <utility>
#include <vector>

#include "kernels/common/cu_check.h"
#include "kernels/sparse/sparse_cu.h"

namespace gt_krylov {

constexpr int BLOCK = 256;
constexpr int CH = 64; // most iterations per host check (history ring size)

enum { F_CSR = 0, F_ELL = 1, F_DIA = 2 };
enum { FL_RUN = 0, FL_CONV, FL_NOTSPD, FL_NAN, FL_BREAK, FL_MAXIT };

struct Sc {
    double rz, pq, alpha, beta, bb, tol2, rho, omega, rr;
    double ss; // BiCGStab: s's of this iteration (omega's near-zero test)
    long long iter, kdone, maxiter;
    int flag, breakwhy;
    unsigned int counter;
    double bad; // the offending value (p'Ap) for messages
    double hist[CH];
};

template <typename T>
struct Mat {
    int64_t n, ncols;
    const int64_t *ptr;
    const int32_t *col;
    const T *val;
    int64_t width;
    const int32_t *ecol;
    const T *eval;
    int64_t ndiag;
    const int32_t *doff;
    const T *dval;
};

// sum_j a_ij * xf(j) for row i
template <typename T, int F, typename XF>
__device__ __forceinline__ T row_apply(const Mat<T> &A, int64_t i, XF xf)
{
    T s = 0;
    if (F == F_DIA) {
        for (int64_t d = 0; d < A.ndiag; d++) {
            int64_t j = i + __ldg(A.doff + d);
            if (j >= 0 && j < A.ncols) s += A.dval[(size_t)d * (size_t)A.n + (size_t)i] * xf(j);
        }
    } else if (F == F_ELL) {
        for (int64_t k = 0; k < A.width; k++) {
            size_t p = (size_t)k * (size_t)A.n + (size_t)i;
            int32_t c = A.ecol[p];
            if (c >= 0) s += A.eval[p] * xf(c);
        }
    } else {
        for (int64_t p = A.ptr[i], e = A.ptr[i + 1]; p < e; p++) s += A.val[p] * xf(A.col[p]);
    }
    return s;
}

__device__ __forceinline__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// The block's sum of v[k] for each k, in thread 0's out (sh: the warps'
// sums). Every thread of the block must call it.
template <int NV>
__device__ __forceinline__ void block_sums(const double (&v)[NV], double (&sh)[NV][BLOCK / 32], double (&out)[NV])
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int k = 0; k < NV; k++) {
        double s = warp_sum(v[k]);
        if (lane == 0) sh[k][w] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int k = 0; k < NV; k++) {
            double s = 0;
            for (int ww = 0; ww < BLOCK / 32; ww++) s += sh[k][ww];
            out[k] = s;
        }
}

// Block sums of NV values go to part[k*gridDim.x + block]; the last block to
// finish adds them in block order and returns true (tot valid in thread 0).
// Every thread of the block must call it.
template <int NV>
__device__ bool reduce_last(const double (&v)[NV], double *part, unsigned int *counter, double (&tot)[NV])
{
    __shared__ double sh[NV][BLOCK / 32];
    __shared__ bool last;
    double bs[NV];
    block_sums(v, sh, bs);
    if (threadIdx.x == 0) {
        for (int k = 0; k < NV; k++) part[(size_t)k * gridDim.x + blockIdx.x] = bs[k];
        __threadfence();
        unsigned int t = atomicAdd(counter, 1u);
        last = (t == gridDim.x - 1);
    }
    __syncthreads();
    if (!last) return false;
    __threadfence();
    double acc[NV];
    for (int k = 0; k < NV; k++) acc[k] = 0;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK)
        for (int k = 0; k < NV; k++) acc[k] += __ldcg(part + (size_t)k * gridDim.x + b);
    block_sums(acc, sh, tot);
    if (threadIdx.x == 0) *counter = 0;
    return true;
}

__device__ inline void record(Sc *sc, double rr)
{
    long long k = sc->kdone + 1;
    sc->hist[(k - 1) % CH] = sqrt(rr / sc->bb);
    sc->kdone = k;
    sc->rr = rr;
    if (!isfinite(rr)) sc->flag = FL_NAN;
    else if (rr <= sc->tol2 * sc->bb) sc->flag = FL_CONV;
    else if (k >= sc->maxiter) sc->flag = FL_MAXIT;
}

template <int N>
struct Offs {
    int32_t o[N > 0 ? N : 1];
};

// Blocks for a grid-stride reduction kernel: as many as fit on the device at
// once (at most one per 256 rows). Computed before graph capture.
struct Grids {
    std::vector<std::pair<const void *, unsigned>> cache;
    int64_t n = 0;
    int sms = 1;
    unsigned get(const void *fn)
    {
        for (auto &e : cache)
            if (e.first == fn) return e.second;
        int nb = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, BLOCK, 0) != cudaSuccess || nb < 1) nb = 1;
        (void)cudaGetLastError();
        if (nb > 2048 / BLOCK) nb = 2048 / BLOCK;
        unsigned g = gt_grid((size_t)n, BLOCK, (unsigned)(nb * sms));
        cache.push_back({fn, g});
        return g;
    }
};

template <typename T> struct Solver;
// One iteration of each method family, for the solver's format (F); the
// driver checks the launches. Instantiated for float and double.
template <typename T> void cg_iter(Solver<T> &S);
template <typename T> void bicgstab_iter(Solver<T> &S);
template <typename T> void jacobi_iter(Solver<T> &S);
template <typename T> void gs_iter(Solver<T> &S);

template <typename T>
struct Solver {
    gt_spd *d;
    Mat<T> A;
    int F;
    int nd; // DIA: 7 or 27 (offsets as kernel parameters), else 0
    Offs<7> off7;
    Offs<27> off27;
    int64_t n;
    Grids G;
    cudaStream_t st;
    const gt_solve_opts *o;
    T *b, *x, *r, *z, *p[2], *q, *dinv, *rh, *v, *s, *t, *x2;
    T **pbuf, **xbuf, **cgbuf;
    Sc *sc;
    double *part;
    int32_t *colrows;
    std::vector<int64_t> colstart;
    double c;
    bool dry; // only compute the grids

    template <typename K>
    unsigned grid(K fn)
    {
        return G.get((const void *)fn);
    }
    gt_status launch_iter()
    {
        switch (o->method) {
        case GT_SOLVE_CG:
        case GT_SOLVE_PCG: cg_iter(*this); break;
        case GT_SOLVE_BICGSTAB: bicgstab_iter(*this); break;
        case GT_SOLVE_JACOBI:
        case GT_SOLVE_RICHARDSON: jacobi_iter(*this); break;
        case GT_SOLVE_GS: gs_iter(*this); break;
        default: break;
        }
        if (!dry) GT_CU_LAUNCH("solver iteration");
        return GT_OK;
    }
};

// Queue kernel `kern` on S's stream with the grid of its occupancy (only the
// grid when S.dry: the occupancy queries run before the graph capture).
#define KRYLOV_LAUNCH(S, kern, ...)                                 \
    do {                                                            \
        auto kp_ = kern;                                            \
        unsigned g_ = (S).grid(kp_);                                \
        if (!(S).dry) kp_<<<g_, BLOCK, 0, (S).st>>>(__VA_ARGS__);   \
    } while (0)

} // namespace gt_krylov

#endif
