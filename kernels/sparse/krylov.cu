// GPU solvers: CG / Jacobi-PCG (one fused kernel per iteration by default, or
// the two-kernel variant), BiCGStab (5 kernels), weighted Jacobi / Richardson
// (1 kernel), multicolour Gauss-Seidel (a kernel per colour + a residual
// kernel). Scalars live on the device; every reduction finishes in its
// kernel's last block (fixed order, deterministic for a given device); the
// reduction kernels run grid-stride loops over as many blocks as fit on the
// device at once, so the last block adds a few thousand partials, not one
// per 256 rows; the host looks at the state once per chunk of iterations,
// which runs as one CUDA graph on one stream.
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_runtime.h"
#include "kernels/sparse/sparse_cu.h"

namespace {

constexpr int BLOCK = 256;
constexpr int CH = 64; // most iterations per host check (history ring size)

enum { F_CSR = 0, F_ELL = 1, F_DIA = 2 };
enum { FL_RUN = 0, FL_CONV, FL_NOTSPD, FL_NAN, FL_BREAK, FL_MAXIT };

struct Sc {
    double rz, pq, alpha, beta, bb, tol2, rho, omega, rr;
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

// Block sums of NV values go to part[k*gridDim.x + block]; the last block to
// finish adds them in block order and returns true (tot valid in thread 0).
// Every thread of the block must call it.
template <int NV>
__device__ bool reduce_last(const double (&v)[NV], double *part, unsigned int *counter, double (&tot)[NV])
{
    __shared__ double sh[NV][BLOCK / 32];
    __shared__ bool last;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int k = 0; k < NV; k++) {
        double s = warp_sum(v[k]);
        if (lane == 0) sh[k][w] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 0; k < NV; k++) {
            double s = 0;
            for (int ww = 0; ww < BLOCK / 32; ww++) s += sh[k][ww];
            part[(size_t)k * gridDim.x + blockIdx.x] = s;
        }
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
    for (int k = 0; k < NV; k++) {
        double s = warp_sum(acc[k]);
        if (lane == 0) sh[k][w] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 0; k < NV; k++) {
            double s = 0;
            for (int ww = 0; ww < BLOCK / 32; ww++) s += sh[k][ww];
            tot[k] = s;
        }
        *counter = 0;
    }
    return true;
}

__device__ void record(Sc *sc, double rr)
{
    long long k = sc->kdone + 1;
    sc->hist[(k - 1) % CH] = sqrt(rr / sc->bb);
    sc->kdone = k;
    sc->rr = rr;
    if (!isfinite(rr)) sc->flag = FL_NAN;
    else if (rr <= sc->tol2 * sc->bb) sc->flag = FL_CONV;
    else if (k >= sc->maxiter) sc->flag = FL_MAXIT;
}

// r = b - q; z = dinv r (or r); rh = r; p0 = p1 = v = 0; rz = r.z, rr = r.r
template <typename T>
__global__ void k_init(int64_t n, const T *b, const T *q, T *r, T *z, const T *dinv, T *rh, T *p0, T *p1,
                       T *v, Sc *sc, double *part)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double d[2] = {0, 0};
    for (; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T ri = b[i] - q[i];
        T zi = dinv ? dinv[i] * ri : ri;
        r[i] = ri;
        if (z != r) z[i] = zi;
        rh[i] = ri, p0[i] = 0, p1[i] = 0, v[i] = 0;
        d[0] += (double)ri * (double)zi, d[1] += (double)ri * (double)ri;
    }
    double tot[2];
    if (reduce_last<2>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        sc->rz = sc->rho = tot[0];
        sc->rr = tot[1];
        sc->beta = 0, sc->alpha = 1, sc->omega = 1;
        sc->iter = 0, sc->kdone = 0;
        sc->flag = !isfinite(tot[1]) ? FL_NAN : (tot[1] <= sc->tol2 * sc->bb ? FL_CONV : FL_RUN);
    }
}

// CG kernel A: pnew = z + beta pold (on the fly for neighbours), q = A pnew,
// pq = pnew.q, alpha = rz / pq.
template <typename T, int F>
__global__ void k_cg_a(Mat<T> A, const T *z, T *const *pbuf, T *q, Sc *sc, double *part)
{
    if (sc->flag) return;
    long long it = sc->iter;
    const T *pold = pbuf[it & 1];
    T *pnew = pbuf[(it + 1) & 1];
    T beta = (T)sc->beta;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double d[1] = {0};
    for (; i < A.n; i += (int64_t)gridDim.x * blockDim.x) {
        T qi = row_apply<T, F>(A, i, [&](int64_t j) { return __ldg(z + j) + beta * __ldg(pold + j); });
        T pi = z[i] + beta * pold[i];
        pnew[i] = pi;
        q[i] = qi;
        d[0] += (double)pi * (double)qi;
    }
    double tot[1];
    if (reduce_last<1>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        double pq = tot[0];
        sc->pq = pq;
        if (!(pq > 0)) {
            sc->flag = isnan(pq) ? FL_NAN : FL_NOTSPD;
            sc->bad = pq;
            sc->kdone = sc->kdone; // unchanged: the iteration did not complete
        } else {
            sc->alpha = sc->rz / pq;
        }
    }
}

// CG kernel B: x += alpha p; r -= alpha q; z = dinv r; rz, rr; beta.
template <typename T>
__global__ void k_cg_b(int64_t n, T *x, T *r, T *z, const T *dinv, T *const *pbuf, const T *q, Sc *sc,
                       double *part)
{
    if (sc->flag) return;
    long long it = sc->iter;
    const T *p = pbuf[(it + 1) & 1];
    T alpha = (T)sc->alpha;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double d[2] = {0, 0};
    for (; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        x[i] += alpha * p[i];
        T ri = r[i] - alpha * q[i];
        r[i] = ri;
        T zi = ri;
        if (dinv) {
            zi = dinv[i] * ri;
            z[i] = zi;
        }
        d[0] += (double)ri * (double)zi, d[1] += (double)ri * (double)ri;
    }
    double tot[2];
    if (reduce_last<2>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        sc->beta = tot[0] / sc->rz;
        sc->rz = tot[0];
        sc->iter = it + 1;
        record(sc, tot[1]);
    }
}

// One fused kernel per CG iteration (the default). Kernel k (k >= 0) reads
// r_{k-1}, q_{k-1} = A p_{k-1}, p_{k-1} (buffers k & 1) and writes r_k, q_k,
// p_k (the other buffers):
//   r_k = r_{k-1} - alpha_{k-1} q_{k-1}     z_k = D r_k (PCG) or r_k
//   p_k = z_k + beta_{k-1} p_{k-1}          q_k = A p_k
//   x_k = x_{k-1} + alpha_{k-1} p_{k-1}     (x in place, row i only)
// where the values at the neighbours j of row i are formed on the fly from
// r_{k-1}, q_{k-1}, p_{k-1} at j (the same operations as at row i, with
// explicit fma, so every block sees the same p_k). One grid reduction gives
// p_k.q_k, r_k.z_k, r_k.r_k, z_k.q_k and q_k.D q_k: r_k.r_k is the residual
// of x_k (checked here, so iteration counts match plain CG), alpha_k =
// r.z / p.q, and r_{k+1}.z_{k+1} = r.z - 2 alpha z.q + alpha^2 q.D q gives
// beta_k one step ahead (extrapolated from the exact r_k.z_k, so it carries
// only one step's rounding). Kernel 0 starts from r_{-1} = r_0 and
// q_{-1} = p_{-1} = 0. Bytes per row: the matrix once, r, q, p, x read and
// written (8 vectors; PCG also reads D).
template <int N>
struct Offs {
    int32_t o[N > 0 ? N : 1];
};

__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }

template <typename T, int F, int ND, bool PRE>
__global__ void __launch_bounds__(BLOCK) k_cg1(Mat<T> A, Offs<ND> off, T *const *bufs, T *x, const T *dinv, Sc *sc,
                                               double *part)
{
    if (sc->flag) return;
    long long it = sc->iter;
    int c = (int)(it & 1);
    const T *r0 = bufs[c], *q0 = bufs[2 + c], *p0 = bufs[4 + c];
    T *r1 = bufs[1 - c], *q1 = bufs[3 - c], *p1 = bufs[5 - c];
    const T alpha = (T)sc->alpha, beta = (T)sc->beta, nalpha = -alpha;
    // p_k at any row j, from the previous vectors
    auto pv = [&](int64_t j) -> T {
        T rj = fma(nalpha, __ldg(q0 + j), __ldg(r0 + j));
        T zj = PRE ? mul_rn(__ldg(dinv + j), rj) : rj;
        return fma(beta, __ldg(p0 + j), zj);
    };
    double d[5] = {0, 0, 0, 0, 0};
    const int64_t n = A.n, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        T qi = 0;
        if (F == F_DIA && ND > 0) {
            T a[ND > 0 ? ND : 1];
#pragma unroll
            for (int k = 0; k < ND; k++) a[k] = __ldg(A.dval + (size_t)k * (size_t)n + (size_t)i);
#pragma unroll
            for (int k = 0; k < ND; k++) {
                int64_t j = i + off.o[k];
                bool ok = j >= 0 && j < A.ncols;
                T v = pv(ok ? j : i);
                qi += ok ? a[k] * v : (T)0;
            }
        } else {
            qi = row_apply<T, F>(A, i, pv);
        }
        T ri = fma(nalpha, __ldg(q0 + i), __ldg(r0 + i));
        T di = PRE ? __ldg(dinv + i) : (T)1;
        T zi = PRE ? mul_rn(di, ri) : ri;
        T pold = __ldg(p0 + i);
        T pi = fma(beta, pold, zi);
        x[i] = fma(alpha, pold, x[i]);
        r1[i] = ri;
        p1[i] = pi;
        q1[i] = qi;
        double dq = (double)qi;
        d[0] += (double)pi * dq;
        d[1] += (double)ri * (double)zi;
        d[2] += (double)ri * (double)ri;
        d[3] += (double)zi * dq;
        d[4] += PRE ? dq * (double)di * dq : dq * dq;
    }
    double tot[5];
    if (reduce_last<5>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        if (it >= 1) record(sc, tot[2]); // the residual of x_k
        if (sc->flag == FL_RUN) {
            double pq = tot[0], rz = tot[1];
            sc->pq = pq;
            if (!(pq > 0)) {
                sc->flag = isnan(pq) ? FL_NAN : FL_NOTSPD;
                sc->bad = pq;
            } else {
                double a = rz / pq;
                double rzn = rz - 2 * a * tot[3] + a * a * tot[4];
                sc->alpha = a;
                sc->beta = rzn > 0 ? rzn / rz : 0;
                sc->rz = rz;
            }
        }
        sc->iter = it + 1;
    }
}

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
        } else {
            sc->omega = tot[1] > 0 ? tot[0] / tot[1] : 0;
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

template <typename T>
__global__ void k_from_double(int64_t n, const double *in, T *out)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (T)in[i];
}
template <typename T>
__global__ void k_to_double(int64_t n, const T *in, double *out)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (double)in[i];
}

struct Buffers {
    std::vector<void *> ptrs;
    ~Buffers()
    {
        for (void *p : ptrs)
            if (p) gt_cu_free(p);
    }
    gt_status get(void **p, size_t bytes, const char *what)
    {
        *p = nullptr;
        GT_TRY(gt_cu_malloc(p, bytes ? bytes : 8, what));
        ptrs.push_back(*p);
        return GT_OK;
    }
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
#define LAUNCH(kern, ...)                                         \
    do {                                                          \
        auto kp_ = kern;                                          \
        unsigned g_ = grid(kp_);                                  \
        if (!dry) kp_<<<g_, BLOCK, 0, st>>>(__VA_ARGS__);         \
    } while (0)

    template <int FF, int ND, bool PRE>
    void launch_cg1(const Offs<ND> &of)
    {
        LAUNCH((k_cg1<T, FF, ND, PRE>), A, of, cgbuf, x, dinv, sc, part);
    }
    template <int FF, bool PRE>
    void launch_cg1_nd()
    {
        if constexpr (FF == F_DIA) {
            if (nd == 7) return launch_cg1<FF, 7, PRE>(off7);
            if (nd == 27) return launch_cg1<FF, 27, PRE>(off27);
        }
        launch_cg1<FF, 0, PRE>(Offs<0>{});
    }

    template <int FF>
    gt_status launch_iter_f()
    {
        bool pre = o->method == GT_SOLVE_PCG;
        switch (o->method) {
        case GT_SOLVE_CG:
        case GT_SOLVE_PCG:
            if (o->cg_kernels == 2) {
                LAUNCH((k_cg_a<T, FF>), A, z, pbuf, q, sc, part);
                LAUNCH((k_cg_b<T>), n, x, r, z, pre ? dinv : nullptr, pbuf, q, sc, part);
            } else if (pre) {
                launch_cg1_nd<FF, true>();
            } else {
                launch_cg1_nd<FF, false>();
            }
            break;
        case GT_SOLVE_BICGSTAB:
            LAUNCH((k_bi_p<T>), n, r, p[0], v, sc);
            LAUNCH((k_bi_spmv<T, FF>), A, p[0], v, rh, 0, sc, part);
            LAUNCH((k_bi_s<T>), n, r, v, p[0], s, x, sc, part);
            LAUNCH((k_bi_spmv<T, FF>), A, s, t, rh, 1, sc, part);
            LAUNCH((k_bi_u<T>), n, s, t, rh, r, x, sc, part);
            break;
        case GT_SOLVE_JACOBI:
        case GT_SOLVE_RICHARDSON:
            LAUNCH((k_jacobi<T, FF>), A, b, xbuf, dinv, c, o->method == GT_SOLVE_JACOBI ? 0 : 1, sc, part);
            break;
        case GT_SOLVE_GS:
            for (size_t k = 0; !dry && k + 1 < colstart.size(); k++) {
                int64_t cnt = colstart[k + 1] - colstart[k];
                if (cnt == 0) continue;
                k_gs_colour<T><<<gt_grid((size_t)cnt, BLOCK, 0x7fffffffu), BLOCK, 0, st>>>(
                    A, colrows + colstart[k], cnt, b, x, dinv, (T)o->omega, sc);
            }
            LAUNCH((k_resid<T, F_CSR>), A, b, x, sc, part);
            break;
        default:
            break;
        }
        if (!dry) GT_CU_LAUNCH("solver iteration");
        return GT_OK;
    }
#undef LAUNCH
    gt_status launch_iter()
    {
        if (F == F_DIA) return launch_iter_f<F_DIA>();
        if (F == F_ELL) return launch_iter_f<F_ELL>();
        return launch_iter_f<F_CSR>();
    }
};

template <typename T>
gt_status solve(gt_spd *d, gt_sp_format f, const gt_csr *host, const double *hb, double *hx,
                const gt_solve_opts *o, gt_solve_result *res)
{
    Buffers B;
    Solver<T> S{};
    S.d = d, S.o = o, S.n = d->nrows;
    int64_t n = d->nrows;
    const unsigned gfull = gt_grid((size_t)n, BLOCK, 0x7fffffffu);
    {
        int dev = 0, sms = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)
            sms = 1;
        (void)cudaGetLastError();
        S.G.n = n, S.G.sms = sms;
    }
    S.F = (f == GT_SP_DIA && d->has_dia) ? F_DIA : ((f == GT_SP_ELL && d->has_ell && !d->hyb) ? F_ELL : F_CSR);
    if (o->method == GT_SOLVE_GS) S.F = F_CSR;
    Mat<T> A = {n, d->ncols, d->ptr, d->col, (const T *)d->val, d->ewidth, d->ecol, (const T *)d->eval,
                d->ndiag, d->doff, (const T *)d->dval};
    S.A = A;
    size_t vb = (size_t)n * sizeof(T);
    T **vecs[] = {&S.b, &S.x, &S.r, &S.q, &S.dinv, &S.rh, &S.v, &S.s, &S.t, &S.p[0], &S.p[1], &S.x2};
    for (T **vp : vecs) GT_TRY(B.get((void **)vp, vb, "solver vectors"));
    S.z = o->method == GT_SOLVE_PCG ? nullptr : S.r;
    if (!S.z) GT_TRY(B.get((void **)&S.z, vb, "solver vectors"));
    GT_TRY(B.get((void **)&S.pbuf, 2 * sizeof(T *), "solver pointers"));
    GT_TRY(B.get((void **)&S.xbuf, 2 * sizeof(T *), "solver pointers"));
    GT_TRY(B.get((void **)&S.sc, sizeof(Sc), "solver scalars"));
    GT_TRY(B.get((void **)&S.cgbuf, 6 * sizeof(T *), "solver pointers"));
    // the most blocks any reduction kernel runs, times the most values it reduces
    GT_TRY(B.get((void **)&S.part, (size_t)S.G.sms * (2048 / BLOCK) * 5 * sizeof(double), "solver partial sums"));
    void *stv = nullptr;
    GT_TRY(gt_cu_stream_create(&stv));
    S.st = (cudaStream_t)stv;
    struct StreamGuard {
        void *s;
        ~StreamGuard() { gt_cu_stream_destroy(s); }
    } sg{stv};
    cudaStream_t st = S.st;

    // host-side setup: b, x0, 1/diag, colouring
    std::vector<double> dinv((size_t)n, 0.0);
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = host->ptr[i]; p < host->ptr[i + 1]; p++)
            if (host->col[p] == i && host->val[p] != 0) dinv[(size_t)i] = 1.0 / host->val[p];
    double *stage;
    GT_TRY(B.get((void **)&stage, (size_t)n * 8, "staging"));
    const double *srcs[3] = {hb, hx, dinv.data()};
    T *dsts[3] = {S.b, S.x, S.dinv};
    for (int k = 0; k < 3; k++) {
        GT_CU(cudaMemcpyAsync(stage, srcs[k], (size_t)n * 8, cudaMemcpyHostToDevice, st));
        k_from_double<T><<<gfull, BLOCK, 0, st>>>(n, stage, dsts[k]);
        GT_CU_LAUNCH("from double");
    }
    T *hp[2] = {S.p[0], S.p[1]};
    T *hxb[2] = {S.x, S.x2};
    GT_CU(cudaMemcpyAsync(S.pbuf, hp, sizeof hp, cudaMemcpyHostToDevice, st));
    GT_CU(cudaMemcpyAsync(S.xbuf, hxb, sizeof hxb, cudaMemcpyHostToDevice, st));
    // fused CG: r, q, p double-buffered; q_{-1} = v and p_{-1} = p[0] are zeroed by k_init
    T *hcg[6] = {S.r, S.s, S.v, S.q, S.p[0], S.p[1]};
    GT_CU(cudaMemcpyAsync(S.cgbuf, hcg, sizeof hcg, cudaMemcpyHostToDevice, st));
    S.nd = 0;
    if (S.F == F_DIA && (d->ndiag == 7 || d->ndiag == 27)) {
        int32_t *dst = d->ndiag == 7 ? S.off7.o : S.off27.o;
        GT_CU(cudaMemcpyAsync(dst, d->doff, (size_t)d->ndiag * 4, cudaMemcpyDeviceToHost, st));
        GT_CU(cudaStreamSynchronize(st));
        S.nd = (int)d->ndiag;
    }
    if (o->method == GT_SOLVE_GS) {
        std::vector<int32_t> colour((size_t)n);
        int32_t nc = 0;
        GT_TRY(gt_sp_colour(host, colour.data(), &nc));
        res->ncolours = nc;
        S.colstart.assign((size_t)nc + 1, 0);
        for (int64_t i = 0; i < n; i++) S.colstart[(size_t)colour[(size_t)i] + 1]++;
        for (int32_t k = 0; k < nc; k++) S.colstart[(size_t)k + 1] += S.colstart[(size_t)k];
        std::vector<int64_t> next(S.colstart.begin(), S.colstart.end() - 1);
        std::vector<int32_t> rows((size_t)n);
        for (int64_t i = 0; i < n; i++) rows[(size_t)next[(size_t)colour[(size_t)i]]++] = (int32_t)i;
        GT_TRY(B.get((void **)&S.colrows, (size_t)n * 4, "colour rows"));
        GT_CU(cudaMemcpyAsync(S.colrows, rows.data(), (size_t)n * 4, cudaMemcpyHostToDevice, st));
        GT_CU(cudaStreamSynchronize(st));
    }
    S.c = o->method == GT_SOLVE_JACOBI ? o->omega : res->tau;

    Sc h;
    memset(&h, 0, sizeof h);
    double bb = 0;
    for (int64_t i = 0; i < n; i++) bb += hb[i] * hb[i];
    h.bb = bb > 0 ? bb : 1.0;
    h.tol2 = o->tol * o->tol;
    h.maxiter = o->maxiter;
    GT_CU(cudaMemcpyAsync(S.sc, &h, sizeof h, cudaMemcpyHostToDevice, st));
    // r0 = b - A x0 with the plain SpMV of the solver's format
    gt_spmv_kernel k0 = S.F == F_DIA ? GT_SPMV_DIA : (S.F == F_ELL ? GT_SPMV_ELL : GT_SPMV_CSR_SCALAR);
    GT_TRY(gt_cu_spmv(d, k0, S.x, S.q, st));
    k_init<T><<<S.grid(k_init<T>), BLOCK, 0, st>>>(n, S.b, S.q, S.r, S.z, o->method == GT_SOLVE_PCG ? S.dinv : nullptr, S.rh,
                                     S.p[0], S.p[1], S.v, S.sc, S.part);
    GT_CU_LAUNCH("init");
    // BiCGStab uses p[0] only and needs v = 0, p = 0 (done by init)

    int chunk = o->check_every < 1 ? 1 : (o->check_every > CH ? CH : o->check_every);
    cudaGraphExec_t exec = nullptr;
    cudaGraph_t graph = nullptr;
    S.dry = true; // the grids (occupancy queries) before the capture
    GT_TRY(S.launch_iter());
    S.dry = false;
    if (cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
        gt_status ls = GT_OK;
        for (int k = 0; k < chunk && ls == GT_OK; k++) ls = S.launch_iter();
        cudaError_t e = cudaStreamEndCapture(st, &graph);
        if (ls == GT_OK && e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
        if (e != cudaSuccess || ls != GT_OK) {
            if (exec) cudaGraphExecDestroy(exec);
            exec = nullptr;
        }
        if (graph) cudaGraphDestroy(graph);
        (void)cudaGetLastError(); // a failed capture falls back to plain launches
    }
    struct GraphGuard {
        cudaGraphExec_t e;
        ~GraphGuard()
        {
            if (e) cudaGraphExecDestroy(e);
        }
    } gg{exec};

    GT_CU(cudaStreamSynchronize(st));
    cudaEvent_t ev0, ev1;
    GT_CU(cudaEventCreate(&ev0));
    GT_CU(cudaEventCreate(&ev1));
    GT_CU(cudaEventRecord(ev0, st));
    long long seen = 0;
    double best = INFINITY;
    long long best_it = 0, window = o->stagnation > 0 ? o->stagnation : 1000;
    bool stagnated = false;
    for (;;) {
        GT_CU(cudaMemcpyAsync(&h, S.sc, sizeof h, cudaMemcpyDeviceToHost, st));
        GT_CU(cudaStreamSynchronize(st));
        for (long long k = seen + 1; k <= h.kdone; k++) {
            double rel = h.hist[(k - 1) % CH];
            if (o->on_iter) o->on_iter(o->ctx, k, rel);
            res->relres = rel;
            if (rel < best * (1 - 1e-3)) best = rel, best_it = k;
            else if (k - best_it >= window && !stagnated && h.flag == FL_RUN) stagnated = true;
        }
        seen = h.kdone;
        if (h.flag != FL_RUN || stagnated) break;
        if (exec) GT_CU(cudaGraphLaunch(exec, st));
        else
            for (int k = 0; k < chunk; k++) GT_TRY(S.launch_iter());
    }
    GT_CU(cudaEventRecord(ev1, st));
    GT_CU(cudaEventSynchronize(ev1));
    float lms = 0;
    GT_CU(cudaEventElapsedTime(&lms, ev0, ev1));
    cudaEventDestroy(ev0), cudaEventDestroy(ev1);
    res->loop_ms = lms;
    res->iters = h.kdone;
    if (h.kdone == 0) res->relres = sqrt(h.rr / h.bb);
    switch (h.flag) {
    case FL_CONV: res->outcome = GT_SOLVE_CONVERGED; break;
    case FL_NOTSPD:
        res->outcome = GT_SOLVE_NOT_SPD;
        res->iters = h.kdone + 1;
        snprintf(res->msg, sizeof res->msg,
                 "the matrix is not positive definite (p'Ap = %.3g <= 0 at iteration %lld); "
                 "CG needs an SPD matrix: try --method bicgstab",
                 h.bad, (long long)h.kdone + 1);
        break;
    case FL_NAN:
        res->outcome = GT_SOLVE_NAN;
        snprintf(res->msg, sizeof res->msg, "the residual became NaN/Inf at iteration %lld", h.kdone + 1);
        break;
    case FL_BREAK:
        res->outcome = GT_SOLVE_BREAKDOWN;
        snprintf(res->msg, sizeof res->msg, "BiCGStab breakdown at iteration %lld (%s = 0)", h.kdone,
                 h.breakwhy == 1 ? "r0'v" : (h.breakwhy == 2 ? "rho" : "omega"));
        break;
    case FL_MAXIT:
        res->outcome = GT_SOLVE_MAXITER;
        snprintf(res->msg, sizeof res->msg, "not converged after %lld iterations (residual %.3g > tol %.3g)",
                 h.kdone, res->relres, o->tol);
        break;
    default:
        res->outcome = GT_SOLVE_STAGNATION;
        snprintf(res->msg, sizeof res->msg, "stagnation: no progress for %lld iterations (residual %.3g)",
                 window, res->relres);
        break;
    }
    // the solution: Jacobi/Richardson keep x_k in buffer k & 1
    const T *xs = S.x;
    if (o->method == GT_SOLVE_JACOBI || o->method == GT_SOLVE_RICHARDSON) xs = (h.kdone & 1) ? S.x2 : S.x;
    k_to_double<T><<<gfull, BLOCK, 0, st>>>(n, xs, stage);
    GT_CU_LAUNCH("to double");
    GT_CU(cudaMemcpyAsync(hx, stage, (size_t)n * 8, cudaMemcpyDeviceToHost, st));
    GT_CU(cudaStreamSynchronize(st));
    return GT_OK;
}

} // namespace

extern "C" gt_status gt_cu_solve(gt_spd *d, gt_sp_format f, const gt_csr *host, const double *b, double *x,
                                 const gt_solve_opts *o, gt_solve_result *res)
{
    if (d->nrows != d->ncols) return gt_fail(GT_ERR_DATA, "the matrix is not square");
    if (d->prec == 4) return solve<float>(d, f, host, b, x, o, res);
    return solve<double>(d, f, host, b, x, o, res);
}
