// The GPU twin of lib/sparse/krylov_prec.c: PCG, right-preconditioned
// BiCGStab and GMRES(m), preconditioned Richardson, driven from the host
// with device vectors (double), SpMV through gt_cu_spmv and the
// preconditioner's apply on the solver's stream. PCG, BiCGStab and
// Richardson keep their scalars on the device (tiny one-block kernels compute
// alpha, beta, ... from block-ordered partial sums, and set a flag that
// freezes the later kernels once the method stops), so the host reads the
// state once per check_every iterations and replays the residual history
// through the same stopping rules as the CPU. GMRES reads one Hessenberg
// column per iteration (classical Gram-Schmidt twice, CGS2, in three
// kernels) and does the Givens rotations and the small triangular solve on
// the host, as the CPU does.
// One file (~650 lines, over the project's ~600): the four methods share the
// device state (Dev: stream, partial sums, preconditioner call), the
// reduction kernels and the vectors; GMRES's 120 lines alone would need all
// of them declared across files.
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "common/timer.h"
#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/sparse_cu.h"
#include "sparse/krylov_prec.h"
#include "sparse/solve_track.h"

namespace {

constexpr int B = 256;
constexpr unsigned GMAX = 1024; // blocks of the partial sums
constexpr int CH = 64;          // residual history ring (check_every <= 64)

enum { RUN = 0, CONV, NOTSPD, NOTSPD_M, FNAN, BRK_RHO, BRK_OMEGA, BRK_RV, MAXIT };
enum { OP_PCG_INIT, OP_PCG_ALPHA, OP_RES, OP_PCG_BETA, OP_BI_RHO, OP_BI_ALPHA, OP_BI_S, OP_BI_OMEGA };

struct PSc {
    double bb, tol; // ||b||^2 (1 when b = 0), the relative tolerance
    double rz, alpha, beta, rho, omega, val;
    double ss; // BiCGStab: s's of this iteration (omega's near-zero test)
    long long iter, maxiter;
    int flag, half;
    double hist[CH];
};

// The block's sum of v in thread 0 (every thread must call it).
__device__ double block_sum(double v)
{
    __shared__ double sh[B / 32];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < B / 32; w++) s += sh[w];
    __syncthreads();
    return s;
}

#define ROWS(i, n) for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < (n); i += (int64_t)gridDim.x * B)
#define FROZEN(sc) ((sc) && (sc)->flag != RUN)

// part[slot*g + block] = a.b (and c.d in slot+1 when c)
__global__ void k_dots(const PSc *sc, int64_t n, const double *a, const double *b, const double *c, const double *d,
                       double *part)
{
    if (FROZEN(sc)) return;
    double s0 = 0, s1 = 0;
    ROWS(i, n)
    {
        s0 += a[i] * b[i];
        if (c) s1 += c[i] * d[i];
    }
    s0 = block_sum(s0);
    if (c) s1 = block_sum(s1);
    if (threadIdx.x == 0) {
        part[blockIdx.x] = s0;
        if (c) part[gridDim.x + blockIdx.x] = s1;
    }
}

__device__ void record(PSc *sc, double rr)
{
    long long k = ++sc->iter;
    double rel = sqrt(rr / sc->bb); // the host's stopping rules see this same value
    sc->hist[(k - 1) % CH] = rel;
    if (!isfinite(rr)) sc->flag = FNAN;
    else if (rel <= sc->tol) sc->flag = CONV;
    else if (k >= sc->maxiter) sc->flag = MAXIT;
}

// The scalar step OP from the partial sums of slots 0 and 1 (one block).
template <int OP>
__global__ void k_fin(PSc *sc, const double *part, unsigned g)
{
    if (sc->flag != RUN) return;
    double a = 0, b = 0;
    for (unsigned k = threadIdx.x; k < g; k += B) {
        a += part[k];
        if (OP == OP_BI_OMEGA) b += part[g + k];
    }
    a = block_sum(a);
    if (OP == OP_BI_OMEGA) b = block_sum(b);
    if (threadIdx.x != 0) return;
    switch (OP) {
    case OP_PCG_INIT: sc->rz = a; break;
    case OP_PCG_ALPHA:
        if (isnan(a)) sc->flag = FNAN;
        else if (!(a > 0)) sc->flag = NOTSPD, sc->val = a;
        else sc->alpha = sc->rz / a;
        break;
    case OP_RES: record(sc, a); break;
    case OP_PCG_BETA:
        if (!(a > 0)) sc->flag = NOTSPD_M, sc->val = a;
        else sc->beta = a / sc->rz, sc->rz = a;
        break;
    case OP_BI_RHO:
        if (a == 0) sc->flag = BRK_RHO;
        else if (sc->omega == 0) sc->flag = BRK_OMEGA;
        else sc->beta = (a / sc->rho) * (sc->alpha / sc->omega), sc->rho = a;
        break;
    case OP_BI_ALPHA:
        if (a == 0) sc->flag = BRK_RV;
        else sc->alpha = sc->rho / a;
        break;
    case OP_BI_S:
        sc->ss = a;
        if (sqrt(a / sc->bb) <= sc->tol) {
            long long k = ++sc->iter;
            sc->hist[(k - 1) % CH] = sqrt(a / sc->bb);
            sc->flag = CONV, sc->half = 1;
        }
        break;
    case OP_BI_OMEGA: // omega ~ 0 is a breakdown (gt_bicg_tiny, lib/sparse/solve_track.h); x gets alpha ph
        if (fabs(a) <= GT_BICG_TINY * sqrt(b) * sqrt(sc->ss)) sc->flag = BRK_OMEGA, sc->half = 1, sc->val = sqrt(sc->ss / sc->bb);
        else sc->omega = a / b;
        break;
    }
}

// PCG: x += alpha p, r -= alpha q; slot 0 = r.r
__global__ void k_pcg_xr(const PSc *sc, int64_t n, double *x, double *r, const double *p, const double *q,
                         double *part)
{
    if (FROZEN(sc)) return;
    double al = sc->alpha, s = 0;
    ROWS(i, n)
    {
        x[i] += al * p[i];
        double ri = r[i] - al * q[i];
        r[i] = ri, s += ri * ri;
    }
    s = block_sum(s);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

__global__ void k_pcg_p(const PSc *sc, int64_t n, double *p, const double *z)
{
    if (FROZEN(sc)) return;
    double be = sc->beta;
    ROWS(i, n) p[i] = z[i] + be * p[i];
}

__global__ void k_bi_p(const PSc *sc, int64_t n, double *p, const double *r, const double *v)
{
    if (FROZEN(sc)) return;
    double be = sc->beta, om = sc->omega;
    ROWS(i, n) p[i] = r[i] + be * (p[i] - om * v[i]);
}

// s = r - alpha v; slot 0 = s.s
__global__ void k_bi_s(const PSc *sc, int64_t n, double *s, const double *r, const double *v, double *part)
{
    if (FROZEN(sc)) return;
    double al = sc->alpha, a = 0;
    ROWS(i, n)
    {
        double si = r[i] - al * v[i];
        s[i] = si, a += si * si;
    }
    a = block_sum(a);
    if (threadIdx.x == 0) part[blockIdx.x] = a;
}

// x += alpha ph + omega sh; r = s - omega t; slot 0 = r.r
__global__ void k_bi_xr(const PSc *sc, int64_t n, double *x, double *r, const double *ph, const double *sh,
                        const double *s, const double *t, double *part)
{
    if (FROZEN(sc)) return;
    double al = sc->alpha, om = sc->omega, a = 0;
    ROWS(i, n)
    {
        x[i] += al * ph[i] + om * sh[i];
        double ri = s[i] - om * t[i];
        r[i] = ri, a += ri * ri;
    }
    a = block_sum(a);
    if (threadIdx.x == 0) part[blockIdx.x] = a;
}

// x += alpha ph (BiCGStab's half step, once, after the loop)
__global__ void k_half(const PSc *sc, int64_t n, double *x, const double *ph)
{
    double al = sc->alpha;
    ROWS(i, n) x[i] += al * ph[i];
}

// x += c z
__global__ void k_axpy(const PSc *sc, int64_t n, double c, double *x, const double *z)
{
    if (FROZEN(sc)) return;
    ROWS(i, n) x[i] += c * z[i];
}

// r = b - q; slot 0 = r.r
__global__ void k_resid(const PSc *sc, int64_t n, const double *b, const double *q, double *r, double *part)
{
    if (FROZEN(sc)) return;
    double a = 0;
    ROWS(i, n)
    {
        double ri = b[i] - q[i];
        r[i] = ri, a += ri * ri;
    }
    a = block_sum(a);
    if (threadIdx.x == 0) part[blockIdx.x] = a;
}

// y = c x
__global__ void k_scale(int64_t n, double c, const double *x, double *y)
{
    ROWS(i, n) y[i] = c * x[i];
}

// part[i*g + block] = V_i . w for i < nv; slot nv = w.w when ww
__global__ void k_mdot(int64_t n, const double *V, int nv, const double *w, bool ww, double *part)
{
    for (int k = 0; k < nv + (ww ? 1 : 0); k++) {
        const double *vk = k < nv ? V + (size_t)k * (size_t)n : w;
        double s = 0;
        ROWS(i, n) s += vk[i] * w[i];
        s = block_sum(s);
        if (threadIdx.x == 0) part[(size_t)k * gridDim.x + blockIdx.x] = s;
    }
}

// out[k] = sum of slot k (one block per slot)
__global__ void k_mfin(const double *part, unsigned g, double *out)
{
    double a = 0;
    for (unsigned b = threadIdx.x; b < g; b += B) a += part[(size_t)blockIdx.x * g + b];
    a = block_sum(a);
    if (threadIdx.x == 0) out[blockIdx.x] = a;
}

// sub: w -= sum_i c[i] V_i; else w = sum_i c[i] V_i
__global__ void k_vcomb(int64_t n, const double *V, int nv, const double *c, double *w, bool sub)
{
    ROWS(i, n)
    {
        double s = 0;
        for (int k = 0; k < nv; k++) s += c[k] * V[(size_t)k * (size_t)n + i];
        w[i] = sub ? w[i] - s : s;
    }
}

struct Dev {
    const gt_spd *d;
    gt_spmv_kernel kern;
    const gt_precond *m;
    cudaStream_t st;
    int64_t n;
    unsigned g;
    PSc *sc;
    double *part, *hbuf;
    std::vector<double *> bufs;
    ~Dev()
    {
        for (double *p : bufs) gt_cu_free(p);
        if (sc) gt_cu_free(sc);
        if (st) cudaStreamDestroy(st);
    }
    gt_status vec(double **p, size_t count = 1)
    {
        GT_TRY(gt_cu_malloc((void **)p, (size_t)n * count * sizeof(double), "solver vector"));
        bufs.push_back(*p);
        return GT_OK;
    }
    gt_status spmv(const double *x, double *y) { return gt_cu_spmv(d, kern, x, y, st); }
    // a failure of apply: a GPU error as it is, any other a breakdown (res)
    gt_status prec(const double *r, double *z, gt_solve_result *res, long long it, bool *ok)
    {
        gt_status s = m->apply(m->ctx, r, z, st);
        *ok = s == GT_OK;
        if (s == GT_OK || s == GT_ERR_GPU) return s;
        res->outcome = GT_SOLVE_BREAKDOWN;
        res->iters = it;
        snprintf(res->msg, sizeof res->msg, "the %s preconditioner failed at iteration %lld: %s",
                 gt_precond_name(m->kind), it, gt_errmsg());
        return GT_OK;
    }
    gt_status read_sc(PSc *h)
    {
        GT_CU(cudaMemcpyAsync(h, sc, sizeof *h, cudaMemcpyDeviceToHost, st));
        GT_CU(cudaStreamSynchronize(st));
        return GT_OK;
    }
    // ||b - A x||^2 into r (host value; synchronises)
    gt_status resid(const double *b, const double *x, double *r, double *q, double *rr)
    {
        GT_TRY(spmv(x, q));
        k_resid<<<g, B, 0, st>>>(nullptr, n, b, q, r, part);
        k_mfin<<<1, B, 0, st>>>(part, g, hbuf);
        GT_CU_LAUNCH("residual");
        GT_CU(cudaMemcpyAsync(rr, hbuf, sizeof *rr, cudaMemcpyDeviceToHost, st));
        GT_CU(cudaStreamSynchronize(st));
        return GT_OK;
    }
};

// The per-iteration launches of the device-scalar methods.
struct Vecs {
    double *b, *x, *r, *z, *p, *q, *rh, *v, *s, *t, *ph, *sh;
};

gt_status pcg_iter(Dev &D, Vecs &V, gt_solve_result *res, bool *ok)
{
    unsigned g = D.g;
    int64_t n = D.n;
    GT_TRY(D.spmv(V.p, V.q));
    k_dots<<<g, B, 0, D.st>>>(D.sc, n, V.p, V.q, nullptr, nullptr, D.part);
    k_fin<OP_PCG_ALPHA><<<1, B, 0, D.st>>>(D.sc, D.part, g);
    k_pcg_xr<<<g, B, 0, D.st>>>(D.sc, n, V.x, V.r, V.p, V.q, D.part);
    k_fin<OP_RES><<<1, B, 0, D.st>>>(D.sc, D.part, g);
    GT_CU_LAUNCH("pcg");
    GT_TRY(D.prec(V.r, V.z, res, 0, ok));
    if (!*ok) return GT_OK;
    k_dots<<<g, B, 0, D.st>>>(D.sc, n, V.r, V.z, nullptr, nullptr, D.part);
    k_fin<OP_PCG_BETA><<<1, B, 0, D.st>>>(D.sc, D.part, g);
    k_pcg_p<<<g, B, 0, D.st>>>(D.sc, n, V.p, V.z);
    GT_CU_LAUNCH("pcg");
    return GT_OK;
}

gt_status bicgstab_iter(Dev &D, Vecs &V, gt_solve_result *res, bool *ok)
{
    unsigned g = D.g;
    int64_t n = D.n;
    k_dots<<<g, B, 0, D.st>>>(D.sc, n, V.rh, V.r, nullptr, nullptr, D.part);
    k_fin<OP_BI_RHO><<<1, B, 0, D.st>>>(D.sc, D.part, g);
    k_bi_p<<<g, B, 0, D.st>>>(D.sc, n, V.p, V.r, V.v);
    GT_CU_LAUNCH("bicgstab");
    GT_TRY(D.prec(V.p, V.ph, res, 0, ok));
    if (!*ok) return GT_OK;
    GT_TRY(D.spmv(V.ph, V.v));
    k_dots<<<g, B, 0, D.st>>>(D.sc, n, V.rh, V.v, nullptr, nullptr, D.part);
    k_fin<OP_BI_ALPHA><<<1, B, 0, D.st>>>(D.sc, D.part, g);
    k_bi_s<<<g, B, 0, D.st>>>(D.sc, n, V.s, V.r, V.v, D.part);
    k_fin<OP_BI_S><<<1, B, 0, D.st>>>(D.sc, D.part, g);
    GT_CU_LAUNCH("bicgstab");
    GT_TRY(D.prec(V.s, V.sh, res, 0, ok));
    if (!*ok) return GT_OK;
    GT_TRY(D.spmv(V.sh, V.t));
    k_dots<<<g, B, 0, D.st>>>(D.sc, n, V.t, V.s, V.t, V.t, D.part);
    k_fin<OP_BI_OMEGA><<<1, B, 0, D.st>>>(D.sc, D.part, g);
    k_bi_xr<<<g, B, 0, D.st>>>(D.sc, n, V.x, V.r, V.ph, V.sh, V.s, V.t, D.part);
    k_fin<OP_RES><<<1, B, 0, D.st>>>(D.sc, D.part, g);
    GT_CU_LAUNCH("bicgstab");
    return GT_OK;
}

gt_status richardson_iter(Dev &D, Vecs &V, double tau, gt_solve_result *res, bool *ok)
{
    GT_TRY(D.prec(V.r, V.z, res, 0, ok));
    if (!*ok) return GT_OK;
    k_axpy<<<D.g, B, 0, D.st>>>(D.sc, D.n, tau, V.x, V.z);
    GT_CU_LAUNCH("richardson");
    GT_TRY(D.spmv(V.x, V.q));
    k_resid<<<D.g, B, 0, D.st>>>(D.sc, D.n, V.b, V.q, V.r, D.part);
    k_fin<OP_RES><<<1, B, 0, D.st>>>(D.sc, D.part, D.g);
    GT_CU_LAUNCH("richardson");
    return GT_OK;
}

// The chunked loop of PCG, BiCGStab and Richardson; the state on the device.
gt_status scalar_methods(Dev &D, Vecs &V, const gt_solve_opts *o, double bn, gt_solve_result *res)
{
    int64_t n = D.n;
    unsigned g = D.g;
    PSc h;
    memset(&h, 0, sizeof h);
    h.bb = bn * bn, h.tol = o->tol, h.maxiter = o->maxiter;
    h.rho = h.alpha = h.omega = 1;
    GT_CU(cudaMemcpyAsync(D.sc, &h, sizeof h, cudaMemcpyHostToDevice, D.st));
    bool ok = true;
    double tau = o->tau > 0 ? o->tau : 1.0;
    if (o->method == GT_SOLVE_PCG) {
        GT_TRY(D.prec(V.r, V.z, res, 0, &ok));
        if (!ok) return GT_OK;
        GT_CU(cudaMemcpyAsync(V.p, V.z, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice, D.st));
        k_dots<<<g, B, 0, D.st>>>(D.sc, n, V.r, V.z, nullptr, nullptr, D.part);
        k_fin<OP_PCG_INIT><<<1, B, 0, D.st>>>(D.sc, D.part, g);
        GT_CU_LAUNCH("pcg init");
    } else if (o->method == GT_SOLVE_BICGSTAB) {
        GT_CU(cudaMemcpyAsync(V.rh, V.r, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice, D.st));
        GT_CU(cudaMemsetAsync(V.p, 0, (size_t)n * sizeof(double), D.st));
        GT_CU(cudaMemsetAsync(V.v, 0, (size_t)n * sizeof(double), D.st));
    } else {
        res->tau = tau;
    }
    // chunks of 16 iterations between host checks, but one under AMG, IC0 or
    // ILU0: a chunk's iterations past convergence skip their own kernels
    // (device flag) but not the preconditioner's apply, and on 7-point 160^3
    // the AMG V-cycles queued past its 11 iterations cost more than 11 syncs
    const bool cheap = D.m->kind == GT_PRECOND_NONE || D.m->kind == GT_PRECOND_JACOBI;
    int ce = o->check_every > 0 ? o->check_every : cheap ? 16 : 1;
    if (ce > CH) ce = CH;
    gt_solve_track tr = {INFINITY, 0, o->stagnation > 0 ? o->stagnation : 1000};
    long long seen = 0;
    bool stop = false;
    for (;;) {
        for (int c = 0; c < ce && ok; c++) {
            if (o->method == GT_SOLVE_PCG) GT_TRY(pcg_iter(D, V, res, &ok));
            else if (o->method == GT_SOLVE_BICGSTAB) GT_TRY(bicgstab_iter(D, V, res, &ok));
            else GT_TRY(richardson_iter(D, V, tau, res, &ok));
        }
        GT_TRY(D.read_sc(&h));
        for (long long k = seen + 1; k <= h.iter && !stop; k++)
            stop = gt_solve_step_done(o, res, &tr, k, h.hist[(k - 1) % CH]);
        seen = h.iter;
        if (!ok || stop || h.flag != RUN) break;
    }
    if (h.half) {
        k_half<<<g, B, 0, D.st>>>(D.sc, n, V.x, V.ph);
        GT_CU_LAUNCH("bicgstab half step");
    }
    if (!ok || stop) return GT_OK;
    long long it = h.iter + 1;
    res->iters = it;
    switch (h.flag) {
    case CONV: /* the host's rules agree (same values); kept for safety */
        res->outcome = GT_SOLVE_CONVERGED, res->iters = h.iter;
        break;
    case MAXIT:
        res->outcome = GT_SOLVE_MAXITER, res->iters = h.iter;
        snprintf(res->msg, sizeof res->msg, "not converged after %lld iterations", h.iter);
        break;
    case NOTSPD:
        res->outcome = GT_SOLVE_NOT_SPD;
        snprintf(res->msg, sizeof res->msg,
                 "the matrix is not positive definite (p'Ap = %.3g <= 0 at iteration %lld); "
                 "PCG needs an SPD matrix: try --method gmres", h.val, it);
        break;
    case NOTSPD_M:
        res->outcome = GT_SOLVE_NOT_SPD;
        snprintf(res->msg, sizeof res->msg,
                 "the preconditioner is not positive definite (r'z = %.3g <= 0 at iteration %lld); "
                 "PCG needs an SPD preconditioner: try --method gmres", h.val, h.iter);
        res->iters = h.iter;
        break;
    case FNAN:
        res->outcome = GT_SOLVE_NAN;
        snprintf(res->msg, sizeof res->msg, "p'Ap became NaN at iteration %lld", it);
        break;
    default:
        res->outcome = GT_SOLVE_BREAKDOWN;
        if (h.flag == BRK_OMEGA && h.half)
            snprintf(res->msg, sizeof res->msg,
                     "BiCGStab breakdown at iteration %lld (omega = t's/t't ~ 0: A M^-1 s is orthogonal to s to "
                     "rounding; residual %.3g): try --method gmres", it, h.val);
        else
            snprintf(res->msg, sizeof res->msg, "BiCGStab breakdown at iteration %lld (%s = 0)", it,
                     h.flag == BRK_RHO ? "rho" : h.flag == BRK_OMEGA ? "omega" : "r0'v");
        break;
    }
    return GT_OK;
}

gt_status gmres(Dev &D, Vecs &X, double *Vb, double *w, const gt_solve_opts *o, int mr, double bn,
                gt_solve_result *res)
{
    int64_t n = D.n;
    unsigned g = D.g;
    int ld = mr + 1;
    std::vector<double> h((size_t)ld * mr), cs(ld), sn(ld), gv(ld), y(ld), col(3 * (size_t)ld + 3);
    gt_solve_track tr = {INFINITY, 0, o->stagnation > 0 ? o->stagnation : 1000};
    long long it = 0;
    bool ok = true;
    double rr;
    GT_TRY(D.resid(X.b, X.x, X.r, X.q, &rr));
    double beta = sqrt(rr), prev = INFINITY;
    double *h1 = D.hbuf, *h2 = D.hbuf + ld + 1, *hn2 = D.hbuf + 2 * (ld + 1);
    for (;;) {
        if (beta / bn <= o->tol) {
            res->outcome = GT_SOLVE_CONVERGED;
            break;
        }
        if (it > 0 && beta >= prev * (1 - 1e-9)) {
            res->outcome = GT_SOLVE_STAGNATION, res->iters = it;
            snprintf(res->msg, sizeof res->msg,
                     "stagnation: a GMRES restart cycle ending at iteration %lld did not reduce the residual (%.3g)",
                     it, beta / bn);
            break;
        }
        if (it >= o->maxiter) {
            res->outcome = GT_SOLVE_MAXITER, res->iters = it;
            snprintf(res->msg, sizeof res->msg, "not converged after %lld iterations (residual %.3g > tol %.3g)", it,
                     beta / bn, o->tol);
            break;
        }
        prev = beta;
        k_scale<<<g, B, 0, D.st>>>(n, 1.0 / beta, X.r, Vb);
        GT_CU_LAUNCH("gmres v0");
        std::fill(gv.begin(), gv.end(), 0.0);
        gv[0] = beta;
        int k = 0;
        bool stop = false, happy = false;
        for (int j = 0; j < mr; j++) {
            double *vj = Vb + (size_t)j * n, *vn = Vb + (size_t)(j + 1) * n;
            GT_TRY(D.prec(vj, X.z, res, it, &ok));
            if (!ok) {
                stop = true;
                break;
            }
            GT_TRY(D.spmv(X.z, w));
            // CGS2: h = V^T w, w -= V h, twice; |w| before and after
            k_mdot<<<g, B, 0, D.st>>>(n, Vb, j + 1, w, true, D.part);
            k_mfin<<<j + 2, B, 0, D.st>>>(D.part, g, h1);
            k_vcomb<<<g, B, 0, D.st>>>(n, Vb, j + 1, h1, w, true);
            k_mdot<<<g, B, 0, D.st>>>(n, Vb, j + 1, w, false, D.part);
            k_mfin<<<j + 1, B, 0, D.st>>>(D.part, g, h2);
            k_vcomb<<<g, B, 0, D.st>>>(n, Vb, j + 1, h2, w, true);
            k_mdot<<<g, B, 0, D.st>>>(n, Vb, 0, w, true, D.part);
            k_mfin<<<1, B, 0, D.st>>>(D.part, g, hn2);
            GT_CU_LAUNCH("gmres arnoldi");
            GT_CU(cudaMemcpyAsync(col.data(), D.hbuf, 3 * (size_t)(ld + 1) * sizeof(double), cudaMemcpyDeviceToHost,
                                  D.st));
            GT_CU(cudaStreamSynchronize(D.st));
            double *hc = h.data() + (size_t)j * ld;
            for (int i = 0; i <= j; i++) hc[i] = col[i] + col[ld + 1 + i];
            double w0 = sqrt(col[j + 1]), hn = sqrt(fmax(col[2 * (ld + 1)], 0.0));
            hc[j + 1] = hn;
            gt_gmres_givens(h.data(), ld, j, cs.data(), sn.data(), gv.data());
            k = j + 1;
            it++;
            happy = !(hn > 1e-14 * w0);
            if (gt_solve_step_done(o, res, &tr, it, fabs(gv[j + 1]) / bn)) {
                stop = true;
                break;
            }
            if (happy) break;
            k_scale<<<g, B, 0, D.st>>>(n, 1.0 / hn, w, vn);
            GT_CU_LAUNCH("gmres v");
        }
        if (res->outcome == GT_SOLVE_NAN || !ok) break;
        if (k > 0) {
            gt_gmres_back_solve(h.data(), ld, k, gv.data(), y.data());
            GT_CU(cudaMemcpyAsync(h1, y.data(), (size_t)k * sizeof(double), cudaMemcpyHostToDevice, D.st));
            k_vcomb<<<g, B, 0, D.st>>>(n, Vb, k, h1, X.s, false);
            GT_CU_LAUNCH("gmres update");
            GT_TRY(D.prec(X.s, X.z, res, it, &ok));
            if (!ok) break;
            k_axpy<<<g, B, 0, D.st>>>(nullptr, n, 1.0, X.x, X.z);
            GT_CU_LAUNCH("gmres update");
        }
        GT_TRY(D.resid(X.b, X.x, X.r, X.q, &rr));
        beta = sqrt(rr);
        if (k > 0 && ok && !(beta <= prev)) { // worse than the cycle's start: undo (as the CPU)
            k_axpy<<<g, B, 0, D.st>>>(nullptr, n, -1.0, X.x, X.z);
            GT_CU_LAUNCH("gmres undo");
            GT_TRY(D.resid(X.b, X.x, X.r, X.q, &rr));
            beta = sqrt(rr);
        }
        if (stop && res->outcome != GT_SOLVE_CONVERGED) break;
        /* an invariant Krylov space whose least-squares residual is above tol:
           b has a part outside the range of A M^-1 */
        if (happy && k > 0 && fabs(gv[k]) / bn > o->tol && beta / bn > o->tol) {
            res->outcome = GT_SOLVE_BREAKDOWN, res->iters = it;
            snprintf(res->msg, sizeof res->msg,
                     "GMRES breakdown at iteration %lld: the Krylov space is invariant but the residual is %.3g, "
                     "above tol: A is singular and b is not in its range (an inconsistent system)",
                     it, beta / bn);
            break;
        }
    }
    res->relres = beta / bn;
    return GT_OK;
}

} // namespace

extern "C" gt_status gt_cu_solve_prec(const gt_spd *d, gt_spmv_kernel kern, const gt_precond *m, const double *b,
                                      double *x, const gt_solve_opts *o, int restart, gt_solve_result *res)
{
    memset(res, 0, sizeof *res);
    if (d->prec != 8 || !m->on_gpu || m->n != d->nrows || d->nrows != d->ncols)
        return gt_fail(GT_ERR_USAGE, "the GPU preconditioned solvers need a square double matrix and a GPU "
                                     "preconditioner of its size");
    if (!gt_solve_method_takes_precond(o->method))
        return gt_fail(GT_ERR_USAGE, "%s takes no preconditioner", gt_solve_method_name(o->method));
    Dev D;
    D.d = d, D.kern = kern, D.m = m, D.st = nullptr, D.n = d->nrows, D.sc = nullptr;
    D.g = gt_grid((size_t)D.n, B, GMAX);
    // a blocking stream: work a preconditioner queues on the legacy default stream stays ordered
    GT_CU(cudaStreamCreate(&D.st));
    int64_t n = D.n;
    int mr = restart > 0 ? restart : GT_GMRES_RESTART;
    if (mr > n) mr = (int)n;
    Vecs V;
    double **vecs[12] = {&V.b, &V.x, &V.r, &V.z, &V.p, &V.q, &V.rh, &V.v, &V.s, &V.t, &V.ph, &V.sh};
    for (double **pv : vecs) GT_TRY(D.vec(pv));
    double *Vb = nullptr, *w = nullptr;
    if (o->method == GT_SOLVE_GMRES) {
        GT_TRY(D.vec(&Vb, (size_t)mr + 1));
        GT_TRY(D.vec(&w));
    }
    size_t slots = (size_t)(o->method == GT_SOLVE_GMRES ? mr + 2 : 2);
    GT_TRY(gt_cu_malloc((void **)&D.part, slots * D.g * sizeof(double), "partial sums"));
    D.bufs.push_back(D.part);
    GT_TRY(gt_cu_malloc((void **)&D.hbuf, 3 * ((size_t)mr + 2) * sizeof(double), "Hessenberg column"));
    D.bufs.push_back(D.hbuf);
    GT_TRY(gt_cu_malloc((void **)&D.sc, sizeof(PSc), "solver scalars"));
    GT_TRY(gt_cu_copy_locked(V.b, b, (size_t)n * sizeof(double), true, D.st));
    GT_TRY(gt_cu_copy_locked(V.x, x, (size_t)n * sizeof(double), true, D.st));
    double bn = 0;
    for (int64_t i = 0; i < n; i++) bn += b[i] * b[i];
    bn = sqrt(bn);
    if (bn == 0) bn = 1;
    GT_CU(cudaStreamSynchronize(D.st));
    double rr;
    GT_TRY(D.resid(V.b, V.x, V.r, V.q, &rr));
    // loop_ms: from the initial residual to the last iteration, without the
    // transfers around it, as the unpreconditioned solvers time theirs
    double t0 = gt_now_ms();
    res->relres = sqrt(rr) / bn;
    gt_status s = GT_OK;
    if (res->relres <= o->tol) res->outcome = GT_SOLVE_CONVERGED;
    else if (!isfinite(res->relres)) {
        res->outcome = GT_SOLVE_NAN;
        snprintf(res->msg, sizeof res->msg, "the initial residual is NaN/Inf");
    } else if (o->method == GT_SOLVE_GMRES)
        s = gmres(D, V, Vb, w, o, mr, bn, res);
    else
        s = scalar_methods(D, V, o, bn, res);
    if (s != GT_OK) return s;
    GT_CU(cudaStreamSynchronize(D.st));
    res->loop_ms = gt_now_ms() - t0;
    GT_TRY(gt_cu_copy_locked(x, V.x, (size_t)n * sizeof(double), false, D.st));
    return GT_OK;
}
