// CG and Jacobi-preconditioned CG on the GPU (the Krylov driver is
// krylov.cu; krylov.cuh holds what the methods share). Variants
// (gt_solve_opts.cg_kernels): one fused kernel per iteration (k_cg1; the
// default for DIA), the classic two kernels (k_cg_a, k_cg_b), and the split
// pair with p stored (k_pcg_update, k_pcg_spmv; the default for CSR and
// ELL). Scalars stay on the device; each kernel's reduction ends in its last
// block.
//
// Launch shape: one thread per row (a subwarp per row for CSR in the fused
// and split kernels, csr_row.cuh), BLOCK threads a block, grid-stride over
// as many blocks as fit on the device at once (Grids: the occupancy), so
// the last block of a reduction adds a few thousand partials, not one per
// 256 rows. DIA matrices with 7 or 27 diagonals get the offsets as kernel
// parameters and the diagonal loop unrolled.
#include <cuda_runtime.h>

#include "kernels/sparse/csr_row.cuh"
#include "kernels/sparse/krylov.cuh"

namespace gt_krylov {
namespace {

// The end of a (Jacobi-)PCG iteration, in the last block's thread 0, from
// the grid's sums tot = (p.q, r.z, r.r, z.q, q.D q): the residual of x_k
// recorded (from iteration 1), alpha_k = r.z / p.q and beta_k from
// r_{k+1}.z_{k+1} = r.z - 2 alpha z.q + alpha^2 q.D q (one step ahead), or
// the flag for a p.q that is not positive (NaN, or A not SPD).
__device__ inline void cg_finish(Sc *sc, long long it, const double (&tot)[5])
{
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
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }

// One fused iteration's view of the vectors (k_cg1, k_cg1_csr): the previous
// r, q, p (ping-pong by the iteration's parity) and the next ones, with
// p_k formed at any row from the previous vectors, and row i's own updates
// and dot products once its q_k = (A p_k)_i is known.
template <typename T, bool PRE>
struct cg1_step {
    const T *r0, *q0, *p0, *dinv;
    T *r1, *q1, *p1;
    T alpha, beta, nalpha;
    __device__ cg1_step(T *const *bufs, const T *dinv_, const Sc *sc)
    {
        int c = (int)(sc->iter & 1);
        r0 = bufs[c], q0 = bufs[2 + c], p0 = bufs[4 + c];
        r1 = bufs[1 - c], q1 = bufs[3 - c], p1 = bufs[5 - c];
        dinv = dinv_;
        alpha = (T)sc->alpha, beta = (T)sc->beta, nalpha = -alpha;
    }
    __device__ __forceinline__ T p_at(int64_t j) const
    {
        T rj = fma(nalpha, __ldg(q0 + j), __ldg(r0 + j));
        T zj = PRE ? mul_rn(__ldg(dinv + j), rj) : rj;
        return fma(beta, __ldg(p0 + j), zj);
    }
    __device__ __forceinline__ void finish_row(int64_t i, T qi, T *x, double (&d)[5]) const
    {
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
};

template <typename T, int F, int ND, bool PRE>
__global__ void __launch_bounds__(BLOCK) k_cg1(Mat<T> A, Offs<ND> off, T *const *bufs, T *x, const T *dinv, Sc *sc,
                                               double *part)
{
    if (sc->flag) return;
    long long it = sc->iter;
    const cg1_step<T, PRE> st(bufs, dinv, sc);
    auto pv = [&](int64_t j) -> T { return st.p_at(j); };
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
        st.finish_row(i, qi, x, d);
    }
    double tot[5];
    if (reduce_last<5>(d, part, &sc->counter, tot) && threadIdx.x == 0) cg_finish(sc, it, tot);
}

// The split (Jacobi-)PCG of CSR and ELL matrices (the default there): the
// fused kernel above forms p_k at every neighbour from r, q, p (and D) of the
// previous step, four gathers per nonzero, cheap on a stencil's neighbours
// but not on an unstructured matrix's. Here p_k is stored, so the product
// gathers one vector, in two kernels per iteration k:
//   k_pcg_update  r_k = r_{k-1} - alpha q_{k-1}, z_k = D r_k, x_k = x_{k-1} +
//                 alpha p_{k-1}, p_k = z_k + beta p_{k-1} (all row i only, in
//                 place); r.z (exact) and r.r (the residual of x_k, checked).
//   k_pcg_spmv    q_k = A p_k (CSR: a subwarp per row, csr_row.cuh; ELL: a
//                 thread per row); p.q, z.q and q.D q give alpha_k = r.z / p.q
//                 and beta_k from r_{k+1}.z_{k+1} = r.z - 2 alpha z.q +
//                 alpha^2 q.D q, one step ahead as in k_cg1.
// Iteration 0 starts from q_{-1} = p_{-1} = 0 (zeroed by k_init). Bytes per
// iteration: the matrix once, p gathered (from cache when reordered), r, D
// and q in the product; x, p, r, q, D read and x, r, p written in the update.
template <typename T, bool PRE>
__global__ void __launch_bounds__(BLOCK) k_pcg_update(int64_t n, T *x, T *r, T *p, const T *q, const T *dinv,
                                                      Sc *sc, double *part)
{
    if (sc->flag) return;
    long long it = sc->iter;
    const T alpha = (T)sc->alpha, beta = (T)sc->beta;
    double d[2] = {0, 0};
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T pi = p[i];
        x[i] = fma(alpha, pi, x[i]);
        T ri = fma(-alpha, __ldg(q + i), r[i]);
        T zi = PRE ? __ldg(dinv + i) * ri : ri;
        r[i] = ri;
        p[i] = fma(beta, pi, zi);
        d[0] += (double)ri * (double)zi, d[1] += (double)ri * (double)ri;
    }
    double tot[2];
    if (reduce_last<2>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        if (it >= 1) record(sc, tot[1]); // the residual of x_k
        sc->rz = tot[0];
    }
}

template <typename T, int F, int V, bool PRE>
__global__ void __launch_bounds__(BLOCK) k_pcg_spmv(Mat<T> A, const T *__restrict__ p, T *__restrict__ q,
                                                    const T *__restrict__ r, const T *__restrict__ dinv, Sc *sc,
                                                    double *part)
{
    if (sc->flag) return;
    double d[3] = {0, 0, 0}; // p.q, z.q, q.D q
    auto dots = [&](int64_t i, T qi) {
        q[i] = qi;
        double dq = (double)qi;
        T ri = __ldg(r + i);
        T di = PRE ? __ldg(dinv + i) : (T)1;
        T zi = PRE ? di * ri : ri;
        d[0] += (double)__ldg(p + i) * dq;
        d[1] += (double)zi * dq;
        d[2] += PRE ? dq * (double)di * dq : dq * dq;
    };
    if constexpr (F == F_CSR) {
        const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const int lane = (int)(t % V);
        const int64_t nsub = (int64_t)gridDim.x * blockDim.x / V;
        // a subwarp's rows are uniform over its lanes (i steps by whole subwarps)
        for (int64_t i = t / V; i < A.n; i += nsub) {
            T qi = gt_csr_row::row_sum<T, V>(A.col, A.val, p, __ldg(A.ptr + i), __ldg(A.ptr + i + 1), lane);
            if (lane == 0) dots(i, qi);
        }
    } else {
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < A.n;
             i += (int64_t)gridDim.x * blockDim.x)
            dots(i, row_apply<T, F>(A, i, [&](int64_t j) { return __ldg(p + j); }));
    }
    double tot[3];
    if (reduce_last<3>(d, part, &sc->counter, tot) && threadIdx.x == 0) {
        double pq = tot[0], rz = sc->rz;
        sc->pq = pq;
        if (!(pq > 0)) {
            sc->flag = isnan(pq) ? FL_NAN : FL_NOTSPD;
            sc->bad = pq;
        } else {
            double a = rz / pq;
            double rzn = rz - 2 * a * tot[1] + a * a * tot[2];
            sc->alpha = a;
            sc->beta = rzn > 0 ? rzn / rz : 0;
        }
        sc->iter = sc->iter + 1;
    }
}

template <typename T, int FF, bool PRE>
void launch_pcg_split(Solver<T> &S)
{
    T *p = S.p[0], *q = S.v; // zeroed by k_init: p_{-1} = q_{-1} = 0
    KRYLOV_LAUNCH(S, (k_pcg_update<T, PRE>), S.n, S.x, S.r, p, q, S.dinv, S.sc, S.part);
    if constexpr (FF == F_CSR) {
        switch (S.d->csr_vec_width) {
        case 2: KRYLOV_LAUNCH(S, (k_pcg_spmv<T, FF, 2, PRE>), S.A, p, q, S.r, S.dinv, S.sc, S.part); break;
        case 4: KRYLOV_LAUNCH(S, (k_pcg_spmv<T, FF, 4, PRE>), S.A, p, q, S.r, S.dinv, S.sc, S.part); break;
        case 8: KRYLOV_LAUNCH(S, (k_pcg_spmv<T, FF, 8, PRE>), S.A, p, q, S.r, S.dinv, S.sc, S.part); break;
        case 16: KRYLOV_LAUNCH(S, (k_pcg_spmv<T, FF, 16, PRE>), S.A, p, q, S.r, S.dinv, S.sc, S.part); break;
        default: KRYLOV_LAUNCH(S, (k_pcg_spmv<T, FF, 32, PRE>), S.A, p, q, S.r, S.dinv, S.sc, S.part); break;
        }
    } else {
        KRYLOV_LAUNCH(S, (k_pcg_spmv<T, FF, 1, PRE>), S.A, p, q, S.r, S.dinv, S.sc, S.part);
    }
}

// The fused kernel on CSR with a subwarp of V lanes per row (csr_row.cuh):
// the row product as in k_cg1 (p_k at each neighbour formed on the fly),
// the row's own updates and dot products by lane 0.
template <typename T, int V, bool PRE>
__global__ void __launch_bounds__(BLOCK) k_cg1_csr(Mat<T> A, T *const *bufs, T *x, const T *dinv, Sc *sc,
                                                   double *part)
{
    if (sc->flag) return;
    long long it = sc->iter;
    const cg1_step<T, PRE> st(bufs, dinv, sc);
    auto pv = [&](int64_t j) -> T { return st.p_at(j); };
    double d[5] = {0, 0, 0, 0, 0};
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = (int)(t % V);
    const int64_t nsub = (int64_t)gridDim.x * blockDim.x / V;
    for (int64_t i = t / V; i < A.n; i += nsub) {
        T qi = gt_csr_row::row_sum_f<T, V>(A.col, A.val, __ldg(A.ptr + i), __ldg(A.ptr + i + 1), lane, pv);
        if (lane != 0) continue;
        st.finish_row(i, qi, x, d);
    }
    double tot[5];
    if (reduce_last<5>(d, part, &sc->counter, tot) && threadIdx.x == 0) cg_finish(sc, it, tot);
}

template <typename T, bool PRE>
void launch_cg1_csr(Solver<T> &S)
{
    switch (S.d->csr_vec_width) {
    case 2: KRYLOV_LAUNCH(S, (k_cg1_csr<T, 2, PRE>), S.A, S.cgbuf, S.x, S.dinv, S.sc, S.part); break;
    case 4: KRYLOV_LAUNCH(S, (k_cg1_csr<T, 4, PRE>), S.A, S.cgbuf, S.x, S.dinv, S.sc, S.part); break;
    case 8: KRYLOV_LAUNCH(S, (k_cg1_csr<T, 8, PRE>), S.A, S.cgbuf, S.x, S.dinv, S.sc, S.part); break;
    case 16: KRYLOV_LAUNCH(S, (k_cg1_csr<T, 16, PRE>), S.A, S.cgbuf, S.x, S.dinv, S.sc, S.part); break;
    default: KRYLOV_LAUNCH(S, (k_cg1_csr<T, 32, PRE>), S.A, S.cgbuf, S.x, S.dinv, S.sc, S.part); break;
    }
}

template <typename T, int FF, int ND, bool PRE>
void launch_cg1(Solver<T> &S, const Offs<ND> &of)
{
    KRYLOV_LAUNCH(S, (k_cg1<T, FF, ND, PRE>), S.A, of, S.cgbuf, S.x, S.dinv, S.sc, S.part);
}
template <typename T, int FF, bool PRE>
void launch_cg1_nd(Solver<T> &S)
{
    if constexpr (FF == F_DIA) {
        if (S.nd == 7) return launch_cg1<T, FF, 7, PRE>(S, S.off7);
        if (S.nd == 27) return launch_cg1<T, FF, 27, PRE>(S, S.off27);
    }
    if constexpr (FF == F_CSR) return launch_cg1_csr<T, PRE>(S); // a subwarp per row
    launch_cg1<T, FF, 0, PRE>(S, Offs<0>{});
}
template <typename T, int FF>
void cg_iter_f(Solver<T> &S)
{
    const bool pre = S.o->method == GT_SOLVE_PCG;
    // 0 (default): split for CSR and ELL, fused for DIA; 1 fused; 2 classic; 3 split
    int kern = S.o->cg_kernels;
    if (kern == 0) kern = FF == F_DIA ? 1 : 3;
    if constexpr (FF != F_DIA) {
        if (kern == 3) {
            if (pre) launch_pcg_split<T, FF, true>(S);
            else launch_pcg_split<T, FF, false>(S);
            return;
        }
    }
    if (kern == 2) {
        KRYLOV_LAUNCH(S, (k_cg_a<T, FF>), S.A, S.z, S.pbuf, S.q, S.sc, S.part);
        KRYLOV_LAUNCH(S, (k_cg_b<T>), S.n, S.x, S.r, S.z, pre ? S.dinv : nullptr, S.pbuf, S.q, S.sc, S.part);
    } else if (pre) {
        launch_cg1_nd<T, FF, true>(S);
    } else {
        launch_cg1_nd<T, FF, false>(S);
    }
}

} // namespace

template <typename T>
void cg_iter(Solver<T> &S)
{
    if (S.F == F_DIA) cg_iter_f<T, F_DIA>(S);
    else if (S.F == F_ELL) cg_iter_f<T, F_ELL>(S);
    else cg_iter_f<T, F_CSR>(S);
}

template void cg_iter<float>(Solver<float> &);
template void cg_iter<double>(Solver<double> &);

} // namespace gt_krylov
