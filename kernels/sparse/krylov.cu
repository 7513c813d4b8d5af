// GPU iterative solvers: the driver. Set-up on the device (b, x0, 1/diag,
// the Gauss-Seidel colouring, r0 = b - A x0 and the initial dot products),
// then chunks of iterations of the chosen method (krylov_cg.cu,
// krylov_bicgstab.cu, krylov_stationary.cu; krylov.cuh holds what they
// share), each chunk captured once as a CUDA graph on one stream; the host
// reads the device scalars (flag, residual history) once per chunk, reports
// the iterations, stops on convergence, breakdown or stagnation, and copies
// x back. Scalars live on the device; every reduction finishes in its
// kernel's last block (fixed order, deterministic for a given device).
//
// Launch shape: the set-up kernels take one thread per row (BLOCK threads);
// k_init, a reduction, runs grid-stride over as many blocks as fit on the
// device at once (Grids), like the methods' kernels.
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/krylov.cuh"
#include "kernels/sparse/sparse_cu.h"

namespace gt_krylov {
namespace {

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
    // (threads: one pass over every entry, 71 ms on one core for the 28.6M of 7-point 160^3)
    std::vector<double> dinv((size_t)n, 0.0);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = host->ptr[i]; p < host->ptr[i + 1]; p++)
            if (host->col[p] == i && host->val[p] != 0) dinv[(size_t)i] = 1.0 / host->val[p];
    double *stage;
    GT_TRY(B.get((void **)&stage, (size_t)n * 8, "staging"));
    const double *srcs[3] = {hb, hx, dinv.data()};
    T *dsts[3] = {S.b, S.x, S.dinv};
    for (int k = 0; k < 3; k++) {
        GT_TRY(gt_cu_copy_locked(stage, srcs[k], (size_t)n * 8, true, st));
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

    int chunk = o->check_every < 1 ? 16 : (o->check_every > CH ? CH : o->check_every);
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
        if (h.breakwhy == 3)
            snprintf(res->msg, sizeof res->msg,
                     "BiCGStab breakdown at iteration %lld (omega = t's/t't ~ 0: A s is orthogonal to s to "
                     "rounding; residual %.3g): try --method gmres or a preconditioner", h.kdone, res->relres);
        else
            snprintf(res->msg, sizeof res->msg, "BiCGStab breakdown at iteration %lld (%s = 0)", h.kdone,
                     h.breakwhy == 1 ? "r0'v" : "rho");
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
    GT_TRY(gt_cu_copy_locked(hx, stage, (size_t)n * 8, false, st));
    return GT_OK;
}

} // namespace
} // namespace gt_krylov

extern "C" gt_status gt_cu_solve(gt_spd *d, gt_sp_format f, const gt_csr *host, const double *b, double *x,
                                 const gt_solve_opts *o, gt_solve_result *res)
{
    if (d->nrows != d->ncols) return gt_fail(GT_ERR_DATA, "the matrix is not square");
    if (d->prec == 4) return gt_krylov::solve<float>(d, f, host, b, x, o, res);
    return gt_krylov::solve<double>(d, f, host, b, x, o, res);
}
