// IC(0) / ILU(0) preconditioners on the GPU: the set-up (host checks and,
// where needed, level sets; the factorisation on the GPU, sync-free or
// level by level, or on the host followed by an upload), the apply
// (ilu0_solve.cu) and the tear-down.
//
// The GPU factorisation runs a thread per row (row i reads the finished
// rows k < i of its pattern), with the CPU's
// operations in the CPU's order and explicit rounding (__dmul_rn, __dsub_rn:
// no fused multiply-adds), so its factors match gt_ilu0_factor's to the last
// bit wherever the host compiler does not contract either. A breakdown is
// recorded as the smallest failing row (rows after a failed one may fail as
// well, but all rows before the smallest are sound, as on the CPU).
#include <cuda_runtime.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timer.h"
#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/ilu0.cuh"
#include "sparse/ilu0.h"

namespace gt_ilu {
namespace {

// ILU(0), IKJ: l_ik = a_ik / u_kk, then row i -= l_ik * upper(row k) on row
// i's pattern (both rows sorted: a merge)
__global__ void __launch_bounds__(BLOCK) k_ilu_level(int64_t cnt, const int32_t *__restrict__ rows,
                                                      const int64_t *__restrict__ ptr,
                                                      const int32_t *__restrict__ col, double *val,
                                                      const int64_t *__restrict__ diag, unsigned long long *bad)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= cnt) return;
    const int64_t i = rows[t], ei = ptr[i + 1];
    for (int64_t p = ptr[i]; p < diag[i]; p++) {
        const int32_t k = col[p];
        const double lik = val[p] / val[diag[k]];
        val[p] = lik;
        int64_t pi = p + 1;
        for (int64_t q = diag[k] + 1, ek = ptr[k + 1]; q < ek && pi < ei; q++) {
            const int32_t j = col[q];
            while (pi < ei && col[pi] < j) pi++;
            if (pi < ei && col[pi] == j) val[pi] = __dsub_rn(val[pi], __dmul_rn(lik, val[q]));
        }
    }
    const double piv = val[diag[i]];
    if (piv == 0.0 || !isfinite(piv)) atomicMin(bad, (unsigned long long)i);
}

// IC(0) on the lower pattern: l_ik = (a_ik - sum_{j<k} l_ij l_kj) / l_kk,
// l_ii = sqrt(a_ii - sum l_ij^2); a failing pivot is left in place of l_ii
__global__ void __launch_bounds__(BLOCK) k_ic_level(int64_t cnt, const int32_t *__restrict__ rows,
                                                     const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                                                     double *val, const int64_t *__restrict__ diag,
                                                     unsigned long long *bad)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= cnt) return;
    const int64_t i = rows[t], b = ptr[i], di = diag[i];
    for (int64_t p = b; p < di; p++) {
        const int32_t k = col[p];
        double s = val[p];
        int64_t pi = b, pk = ptr[k];
        const int64_t ek = diag[k];
        while (pi < p && pk < ek) {
            const int32_t ci = col[pi], ck = col[pk];
            if (ci == ck) s = __dsub_rn(s, __dmul_rn(val[pi++], val[pk++]));
            else if (ci < ck) pi++;
            else pk++;
        }
        val[p] = s / val[ek];
    }
    double d = val[di];
    for (int64_t p = b; p < di; p++) d = __dsub_rn(d, __dmul_rn(val[p], val[p]));
    if (!(d > 0.0) || !isfinite(d)) {
        val[di] = d;
        atomicMin(bad, (unsigned long long)i);
        return;
    }
    val[di] = sqrt(d);
}

// The same two factorisations sync-free: a thread per row, rows taken in
// ascending order from an atomic counter (every row waited for belongs to a
// running thread, as in the sync-free solves), each row waiting on the
// ready flag of every row k it reads; rows of other threads are read past
// the L1 cache (__ldcg). A failed row still raises its flag (its dependents
// compute garbage, but the smallest failing row is a true breakdown).
__device__ __forceinline__ void wait_row(const int *ready, int32_t k)
{
    const volatile int *f = ready + k;
    while (*f == 0) {
    }
    __threadfence();
}
__device__ __forceinline__ void publish_row(int *ready, int64_t i)
{
    __threadfence();
    *(volatile int *)(ready + i) = 1;
}

__global__ void __launch_bounds__(BLOCK) k_ilu_syncfree(int64_t n, const int64_t *__restrict__ ptr,
                                                         const int32_t *__restrict__ col, double *val,
                                                         const int64_t *__restrict__ diag, int *ready,
                                                         unsigned *next, unsigned long long *bad)
{
    const unsigned t = atomicAdd(next, 1u);
    if ((int64_t)t >= n) return;
    const int64_t i = t, ei = ptr[i + 1];
    for (int64_t p = ptr[i]; p < diag[i]; p++) {
        const int32_t k = col[p];
        wait_row(ready, k);
        const double lik = val[p] / __ldcg(val + diag[k]);
        val[p] = lik;
        int64_t pi = p + 1;
        for (int64_t q = diag[k] + 1, ek = ptr[k + 1]; q < ek && pi < ei; q++) {
            const int32_t j = col[q];
            while (pi < ei && col[pi] < j) pi++;
            if (pi < ei && col[pi] == j) val[pi] = __dsub_rn(val[pi], __dmul_rn(lik, __ldcg(val + q)));
        }
    }
    const double piv = val[diag[i]];
    if (piv == 0.0 || !isfinite(piv)) atomicMin(bad, (unsigned long long)i);
    publish_row(ready, i);
}

__global__ void __launch_bounds__(BLOCK) k_ic_syncfree(int64_t n, const int64_t *__restrict__ ptr,
                                                        const int32_t *__restrict__ col, double *val,
                                                        const int64_t *__restrict__ diag, int *ready,
                                                        unsigned *next, unsigned long long *bad)
{
    const unsigned t = atomicAdd(next, 1u);
    if ((int64_t)t >= n) return;
    const int64_t i = t, b = ptr[i], di = diag[i];
    for (int64_t p = b; p < di; p++) {
        const int32_t k = col[p];
        wait_row(ready, k);
        double s = val[p];
        int64_t pi = b, pk = ptr[k];
        const int64_t ek = diag[k];
        while (pi < p && pk < ek) {
            const int32_t ci = col[pi], ck = col[pk];
            if (ci == ck) s = __dsub_rn(s, __dmul_rn(val[pi++], __ldcg(val + pk++)));
            else if (ci < ck) pi++;
            else pk++;
        }
        val[p] = s / __ldcg(val + ek);
    }
    double d = val[di];
    for (int64_t p = b; p < di; p++) d = __dsub_rn(d, __dmul_rn(val[p], val[p]));
    if (!(d > 0.0) || !isfinite(d)) {
        val[di] = d;
        atomicMin(bad, (unsigned long long)i);
    } else {
        val[di] = sqrt(d);
    }
    publish_row(ready, i);
}

// IC(0): the upper part of row j gets L^T: for each l_ij (j < i), the entry
// (j, i) found by binary search in row j's upper part (the pattern is
// symmetric: checked on the host)
__global__ void k_ic_transpose(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                               double *val, const int64_t *__restrict__ diag)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int64_t p = ptr[i]; p < diag[i]; p++) {
        const int32_t j = col[p];
        int64_t lo = diag[j] + 1, hi = ptr[j + 1] - 1;
        while (lo < hi) {
            int64_t m = (lo + hi) >> 1;
            if (col[m] < i) lo = m + 1;
            else hi = m;
        }
        val[lo] = val[p];
    }
}

void ctx_free(Ctx *c)
{
    if (!c) return;
    void *dev[] = {c->val, c->diag, c->ready, c->sync, c->rbuf, c->zbuf};
    for (void *d : dev) gt_cu_free(d);
    if (c->exec) cudaGraphExecDestroy(c->exec);
    for (int u = 0; u < 2; u++) {
        free(c->lptr[u]);
        gt_cu_free(c->lrows[u]);
    }
    free(c);
}

gt_status upload_levels(Ctx *c, int u, gt_levels *lv)
{
    c->nlev[u] = lv->nlevels;
    c->lptr[u] = lv->ptr;
    lv->ptr = nullptr;
    GT_TRY(gt_cu_malloc((void **)&c->lrows[u], (size_t)c->n * sizeof(int32_t) + 4, "ILU(0) level sets"));
    return gt_cu_memcpy_h2d(c->lrows[u], lv->rows, (size_t)c->n * sizeof(int32_t), nullptr);
}

gt_status factor_gpu(Ctx *c, const gt_spd *d, double *fact_ms)
{
    double t0 = gt_now_ms();
    GT_TRY(gt_cu_memcpy_d2d(c->val, d->val, (size_t)c->nnz * sizeof(double), nullptr));
    unsigned long long *bad = nullptr;
    GT_TRY(gt_cu_malloc((void **)&bad, sizeof *bad, "ILU(0) breakdown flag"));
    struct Free {
        void *p;
        ~Free() { gt_cu_free(p); }
    } fb{bad};
    GT_TRY(gt_cu_memset(bad, 0xff, sizeof *bad, nullptr));
    if (c->o.factor == GT_ILU_FACTOR_GPU_SYNCFREE) {
        // the ready flags and counter of the solves, cleared again below
        unsigned g = gt_grid((size_t)c->n, BLOCK, 0x7fffffffu);
        if (c->ic) k_ic_syncfree<<<g, BLOCK>>>(c->n, c->ptr, c->col, c->val, c->diag, c->ready, &c->sync->next[0], bad);
        else k_ilu_syncfree<<<g, BLOCK>>>(c->n, c->ptr, c->col, c->val, c->diag, c->ready, &c->sync->next[0], bad);
        GT_CU_LAUNCH("ilu0 factor sync-free");
        GT_TRY(gt_cu_memset(c->ready, 0, (size_t)c->n * sizeof(int), nullptr));
        GT_TRY(gt_cu_memset(c->sync, 0, sizeof(Sync), nullptr));
    }
    for (int64_t l = 0; c->o.factor == GT_ILU_FACTOR_GPU_LEVELS && l < c->nlev[0]; l++) {
        int64_t b = c->lptr[0][l], cnt = c->lptr[0][l + 1] - b;
        unsigned g = gt_grid((size_t)cnt, BLOCK, 0x7fffffffu);
        if (c->ic) k_ic_level<<<g, BLOCK>>>(cnt, c->lrows[0] + b, c->ptr, c->col, c->val, c->diag, bad);
        else k_ilu_level<<<g, BLOCK>>>(cnt, c->lrows[0] + b, c->ptr, c->col, c->val, c->diag, bad);
        GT_CU_LAUNCH("ilu0 factor level");
    }
    unsigned long long hb = 0;
    GT_TRY(gt_cu_memcpy_d2h(&hb, bad, sizeof hb, nullptr));
    if (hb != ~0ull) {
        int64_t row = (int64_t)hb, dp = 0;
        double piv = 0;
        GT_TRY(gt_cu_memcpy_d2h(&dp, c->diag + row, sizeof dp, nullptr));
        GT_TRY(gt_cu_memcpy_d2h(&piv, c->val + dp, sizeof piv, nullptr));
        return gt_ilu0_breakdown(c->ic, row, piv);
    }
    if (c->ic) {
        k_ic_transpose<<<gt_grid((size_t)c->n, BLOCK, 0x7fffffffu), BLOCK>>>(c->n, c->ptr, c->col, c->val,
                                                                             c->diag);
        GT_CU_LAUNCH("ic0 transpose");
    }
    GT_TRY(gt_cu_sync());
    *fact_ms = gt_now_ms() - t0;
    return GT_OK;
}

gt_status apply(void *ctx, const double *r, double *z, void *stream)
{
    return solve((Ctx *)ctx, r, z, (cudaStream_t)stream);
}

void destroy(void *ctx)
{
    ctx_free((Ctx *)ctx);
}

// lanes per row: the next power of two >= the mean entries of a triangle
int lanes(const gt_csr *a)
{
    double mean = a->nrows ? (double)(a->nnz - a->nrows) / (2.0 * (double)a->nrows) : 1;
    int w = 2;
    while (w < 32 && w < mean) w *= 2;
    return w;
}

gt_status create(const gt_spd *d, const gt_csr *host, bool ic, const gt_cu_ilu0_opts *o, gt_precond *p)
{
    double t0 = gt_now_ms();
    memset(p, 0, sizeof *p);
    if (d->prec != 8 || d->nrows != host->nrows || d->nnz != host->nnz)
        return gt_fail(GT_ERR_RUNTIME, "%s on the GPU needs the double-precision CSR of the same matrix",
                       ic ? "IC(0)" : "ILU(0)");
    Ctx *c = (Ctx *)calloc(1, sizeof *c);
    if (!c) return gt_fail(GT_ERR_RUNTIME, "out of memory (ILU(0) preconditioner)");
    struct G {
        Ctx *c;
        ~G() { ctx_free(c); }
    } g{c};
    c->ic = ic;
    c->o = *o;
    c->n = host->nrows, c->nnz = host->nnz;
    c->ptr = d->ptr, c->col = d->col;
    c->width = lanes(host);
    int64_t n = c->n;
    GT_TRY(gt_cu_malloc((void **)&c->val, (size_t)c->nnz * sizeof(double) + 8, "ILU(0) factors"));
    GT_TRY(gt_cu_malloc((void **)&c->diag, (size_t)n * sizeof(int64_t) + 8, "ILU(0) diagonal"));
    GT_TRY(gt_cu_malloc((void **)&c->ready, (size_t)2 * n * sizeof(int) + 8, "ILU(0) ready flags"));
    GT_TRY(gt_cu_malloc((void **)&c->sync, sizeof(Sync), "ILU(0) counters"));
    GT_TRY(gt_cu_memset(c->ready, 0, (size_t)2 * n * sizeof(int), nullptr));
    GT_TRY(gt_cu_memset(c->sync, 0, sizeof(Sync), nullptr));
    double fact_ms = 0;
    const char *where;
    if (o->factor == GT_ILU_FACTOR_HOST) {
        gt_ilu0 F;
        GT_TRY(gt_ilu0_factor(host, ic, &F));
        gt_status st = gt_cu_memcpy_h2d(c->val, F.f.val, (size_t)c->nnz * sizeof(double), nullptr);
        if (st == GT_OK) st = gt_cu_memcpy_h2d(c->diag, F.diag, (size_t)n * sizeof(int64_t), nullptr);
        if (st == GT_OK && o->solve == GT_ILU_SOLVE_LEVELS) st = upload_levels(c, 0, &F.lower);
        if (st == GT_OK && o->solve == GT_ILU_SOLVE_LEVELS) st = upload_levels(c, 1, &F.upper);
        fact_ms = F.ms;
        gt_ilu0_free(&F);
        GT_TRY(st);
        where = "on the host, uploaded";
    } else {
        int64_t *diag = (int64_t *)malloc((size_t)n * sizeof(int64_t) + 8);
        if (!diag) return gt_fail(GT_ERR_RUNTIME, "out of memory (ILU(0) diagonal)");
        gt_status st = gt_ilu0_check(host, ic, diag);
        gt_levels lv[2];
        memset(lv, 0, sizeof lv);
        for (int u = 0; u < 2 && st == GT_OK; u++)
            if ((u == 0 && o->factor == GT_ILU_FACTOR_GPU_LEVELS) || o->solve == GT_ILU_SOLVE_LEVELS)
                st = gt_ilu0_levels(host, diag, u == 1, &lv[u]);
        if (st == GT_OK) st = gt_cu_memcpy_h2d(c->diag, diag, (size_t)n * sizeof(int64_t), nullptr);
        free(diag);
        for (int u = 0; u < 2 && st == GT_OK; u++)
            if (lv[u].ptr) st = upload_levels(c, u, &lv[u]);
        gt_levels_free(&lv[0]);
        gt_levels_free(&lv[1]);
        GT_TRY(st);
        GT_TRY(factor_gpu(c, d, &fact_ms));
        where = o->factor == GT_ILU_FACTOR_GPU_LEVELS ? "on the GPU, level by level" : "on the GPU, sync-free";
        // the sync-free solves need no level sets: free the lower ones
        if (o->solve == GT_ILU_SOLVE_SYNCFREE && c->lptr[0]) {
            free(c->lptr[0]);
            gt_cu_free(c->lrows[0]);
            c->lptr[0] = nullptr, c->lrows[0] = nullptr;
        }
    }
    GT_TRY(prepare(c));
    GT_TRY(gt_cu_sync());
    gt_precond_set(p, ic ? GT_PRECOND_IC0 : GT_PRECOND_ILU0, n, true, c, apply, destroy);
    p->setup_ms = gt_now_ms() - t0;
    char lev[96] = "";
    if (o->solve == GT_ILU_SOLVE_LEVELS)
        snprintf(lev, sizeof lev, " over %lld + %lld levels (one CUDA graph)", (long long)c->nlev[0], (long long)c->nlev[1]);
    snprintf(p->summary, sizeof p->summary,
             "%s on the GPU: %s on A's pattern, %lld nonzeros (no fill), factorised %s (%.3f ms); triangular "
             "solves %s%s, %d lanes per row; set-up %.3f ms\n",
             ic ? "ic0" : "ilu0", ic ? "L L^T" : "L U", (long long)c->nnz, where, fact_ms,
             o->solve == GT_ILU_SOLVE_LEVELS ? "level-scheduled" : "sync-free", lev, c->width, p->setup_ms);
    g.c = nullptr;
    return GT_OK;
}

} // namespace
} // namespace gt_ilu

extern "C" gt_status gt_cu_ilu0_create_ex(const gt_spd *d, const gt_csr *host, bool ic, const gt_cu_ilu0_opts *o,
                                          gt_precond *p)
{
    /* measured on the H200 (test_ilu0_gpu's table): the sync-free
     * factorisation has the shortest set-up (7-point 160^3: 32 ms against
     * 59 level by level and 618 on the host; tet mesh 405k: 9 / 17 / 99 ms),
     * but the sync-free solves are slow where rows wait in long chains
     * (apply 149 ms on 160^3 against 4.0 ms level-scheduled; tet mesh 12.9 vs
     * 1.5 ms in lattice order, 0.64 vs 0.32 ms randomly numbered): the
     * level-scheduled solves whatever the order */
    gt_cu_ilu0_opts def = {GT_ILU_SOLVE_LEVELS, GT_ILU_FACTOR_GPU_SYNCFREE};
    return gt_ilu::create(d, host, ic, o ? o : &def, p);
}

extern "C" gt_status gt_cu_ilu0_create(const gt_spd *d, const gt_csr *host, bool ic, gt_precond *p)
{
    return gt_cu_ilu0_create_ex(d, host, ic, nullptr, p);
}

extern "C" gt_status gt_cu_ilu0_download(const gt_precond *p, double *val)
{
    const gt_ilu::Ctx *c = (const gt_ilu::Ctx *)p->ctx;
    GT_TRY(gt_cu_sync());
    return gt_cu_memcpy_d2h(val, c->val, (size_t)c->nnz * sizeof(double), nullptr);
}

// apply captured into a CUDA graph on a stream of its own, as the solvers
// capture their iterations, then run once and waited for
extern "C" gt_status gt_cu_ilu0_apply_captured(const gt_precond *p, const double *r, double *z)
{
    cudaStream_t s;
    GT_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g = nullptr;
    cudaGraphExec_t x = nullptr;
    gt_status st = gt_cu_status_from(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
                                     "cudaStreamBeginCapture", __FILE__, __LINE__);
    if (st == GT_OK) {
        gt_status as = p->apply(p->ctx, r, z, s);
        cudaError_t e = cudaStreamEndCapture(s, &g);
        st = as != GT_OK ? as : gt_cu_status_from(e, "cudaStreamEndCapture", __FILE__, __LINE__);
    }
    if (st == GT_OK) st = gt_cu_status_from(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate", __FILE__, __LINE__);
    for (int k = 0; k < 2 && st == GT_OK; k++)
        st = gt_cu_status_from(cudaGraphLaunch(x, s), "cudaGraphLaunch", __FILE__, __LINE__);
    if (st == GT_OK) st = gt_cu_status_from(cudaStreamSynchronize(s), "cudaStreamSynchronize", __FILE__, __LINE__);
    if (x) cudaGraphExecDestroy(x);
    if (g) cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    return st;
}
