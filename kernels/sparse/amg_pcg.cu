// Host-data runs of the GPU AMG for the GPU test and the benchmark: upload
// A, build the preconditioner (timed, synchronised), download the hierarchy,
// time V-cycles with CUDA events, and a plain AMG-PCG loop (one host sync per
// iteration for the dot products; the library's solver is sp-krylov's).
#include <cuda_runtime.h>

#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "common/timer.h"
#include "kernels/sparse/amg_cu.h"
#include "kernels/sparse/amg_cu_impl.cuh"

namespace {

constexpr int B = 256;

__global__ void k_dot(int64_t n, const double *__restrict__ x, const double *__restrict__ y, double *out)
{
    __shared__ double sh[B];
    double s = 0;
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) s += x[i] * y[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int o = B / 2; o > 0; o /= 2) {
        if (threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, sh[0]);
}

__global__ void k_axpy2(int64_t n, double alpha, const double *__restrict__ p, const double *__restrict__ q,
                        double *__restrict__ x, double *__restrict__ r)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B)
        x[i] += alpha * p[i], r[i] -= alpha * q[i];
}

__global__ void k_xpby(int64_t n, const double *__restrict__ z, double beta, double *__restrict__ p)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) p[i] = z[i] + beta * p[i];
}

gt_status dot(int64_t n, const double *x, const double *y, double *tmp, double *out, cudaStream_t st)
{
    GT_CU(cudaMemsetAsync(tmp, 0, 8, st));
    k_dot<<<gt_grid((size_t)n, B, 1024), B, 0, st>>>(n, x, y, tmp);
    GT_CU(cudaMemcpyAsync(out, tmp, 8, cudaMemcpyDeviceToHost, st));
    GT_CU(cudaStreamSynchronize(st));
    return GT_OK;
}

struct dvecs {
    double *v[7] = {};
    ~dvecs()
    {
        for (double *p : v) gt_cu_free(p);
    }
};

gt_status create(const gt_csr *a, const gt_precond_opts *o, gt_spd *d, gt_precond *p, gt_amg_gpu_result *res)
{
    memset(d, 0, sizeof *d);
    GT_TRY(gt_cu_spd_upload(a, 8, d));
    GT_CU(cudaDeviceSynchronize());
    gt_precond_opts oo = *o;
    oo.verbose = true;
    double t0 = gt_now_ms();
    gt_status s = gt_cu_amg_create(d, a, &oo, p);
    if (s != GT_OK) return gt_cu_spd_free(d), s;
    res->setup_ms = gt_now_ms() - t0;
    gt_cu_amg_stage_ms(p, res->stage_ms);
    memcpy(res->summary, p->summary, sizeof res->summary);
    return GT_OK;
}

} // namespace

extern "C" gt_status gt_cu_amg_run(const gt_csr *a, const gt_precond_opts *o, gt_amg *h, const double *r, double *z,
                                   int reps, gt_amg_gpu_result *res)
{
    memset(res, 0, sizeof *res);
    gt_spd d;
    gt_precond p;
    GT_TRY(create(a, o, &d, &p, res));
    int64_t n = a->nrows;
    dvecs v;
    gt_status s = h ? gt_cu_amg_download(&p, h) : GT_OK;
    if (s == GT_OK && r) s = gt_cu_malloc((void **)&v.v[0], (size_t)n * 8, "amg test vector");
    if (s == GT_OK && r) s = gt_cu_malloc((void **)&v.v[1], (size_t)n * 8, "amg test vector");
    if (s == GT_OK && r) {
        cudaStream_t st = nullptr;
        cudaError_t e = cudaStreamCreate(&st);
        if (e == cudaSuccess) e = cudaMemcpy(v.v[0], r, (size_t)n * 8, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) s = gt_cu_status_from(e, "cudaMemcpy", __FILE__, __LINE__);
        if (s == GT_OK) s = p.apply(p.ctx, v.v[0], v.v[1], st);
        if (s == GT_OK) {
            e = cudaMemcpyAsync(z, v.v[1], (size_t)n * 8, cudaMemcpyDeviceToHost, st);
            if (e == cudaSuccess) e = cudaStreamSynchronize(st);
            if (e != cudaSuccess) s = gt_cu_status_from(e, "amg v-cycle", __FILE__, __LINE__);
        }
        // the direct V-cycle's output, to compare the replayed graph's with
        // (the same hierarchy: a second set-up may differ in the last bits of
        // its atomically summed weights)
        double *z1 = nullptr;
        if (s == GT_OK && reps > 0 && z) {
            z1 = (double *)gt_malloc((size_t)n * 8, "amg direct v-cycle");
            if (!z1) s = GT_ERR_RUNTIME;
            else memcpy(z1, z, (size_t)n * 8);
        }
        if (s == GT_OK && reps > 0) {
            cudaEvent_t e0, e1;
            cudaEventCreate(&e0), cudaEventCreate(&e1);
            cudaEventRecord(e0, st);
            for (int k = 0; k < reps && s == GT_OK; k++) s = p.apply(p.ctx, v.v[0], v.v[1], st);
            cudaEventRecord(e1, st);
            e = cudaEventSynchronize(e1);
            float ms = 0;
            cudaEventElapsedTime(&ms, e0, e1);
            res->vcycle_ms = ms / reps;
            cudaEventDestroy(e0), cudaEventDestroy(e1);
            if (e != cudaSuccess && s == GT_OK) s = gt_cu_status_from(e, "amg v-cycle", __FILE__, __LINE__);
            // z from the last of them (past the first few, a replayed CUDA graph)
            if (s == GT_OK) e = cudaMemcpy(z, v.v[1], (size_t)n * 8, cudaMemcpyDeviceToHost);
            if (e != cudaSuccess && s == GT_OK) s = gt_cu_status_from(e, "cudaMemcpy", __FILE__, __LINE__);
            if (s == GT_OK && z1)
                for (int64_t i = 0; i < n; i++) res->graph_diff = fmax(res->graph_diff, fabs(z[i] - z1[i]));
        }
        free(z1);
        if (st) cudaStreamDestroy(st);
    }
    p.destroy(p.ctx);
    gt_cu_spd_free(&d);
    return s;
}

extern "C" gt_status gt_cu_amg_pcg(const gt_csr *a, const gt_precond_opts *o, const double *b, double *x, double tol,
                                   int maxit, gt_amg_gpu_result *res)
{
    memset(res, 0, sizeof *res);
    gt_spd d;
    gt_precond p;
    double t0 = gt_now_ms();
    GT_TRY(create(a, o, &d, &p, res));
    int64_t n = a->nrows;
    size_t nb = (size_t)n * 8;
    dvecs v;
    gt_status s = GT_OK;
    for (int k = 0; k < 6 && s == GT_OK; k++) s = gt_cu_malloc((void **)&v.v[k], k == 5 ? 8 : nb, "amg pcg vectors");
    double *dx = v.v[0], *r = v.v[1], *z = v.v[2], *pp = v.v[3], *q = v.v[4], *tmp = v.v[5];
    cudaStream_t st = nullptr;
    if (s == GT_OK) {
        cudaError_t e = cudaStreamCreate(&st);
        if (e == cudaSuccess) e = cudaMemcpy(r, b, nb, cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemset(dx, 0, nb);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) s = gt_cu_status_from(e, "cudaMemcpy", __FILE__, __LINE__);
    }
    amg_dcsr A;
    A.n = n, A.m = n, A.nnz = a->nnz, A.ptr = d.ptr, A.col = d.col, A.val = (double *)d.val, A.borrowed = true;
    int vw = amg_cu_vec_width(&A);
    double t1 = gt_now_ms(), bn = 0, rz = 0, rr = 0;
    int it = 0;
    if (s == GT_OK) s = dot(n, r, r, tmp, &bn, st);
    bn = sqrt(bn);
    if (s == GT_OK) s = p.apply(p.ctx, r, z, st);
    if (s == GT_OK) s = cudaMemcpyAsync(pp, z, nb, cudaMemcpyDeviceToDevice, st) == cudaSuccess ? GT_OK : GT_ERR_GPU;
    if (s == GT_OK) s = dot(n, r, z, tmp, &rz, st);
    unsigned g = gt_grid((size_t)n, B);
    while (s == GT_OK && it < maxit) {
        amg_cu_spmv(&A, vw, pp, q, 1.0, 0.0, nullptr, st);
        double pq = 0;
        s = dot(n, pp, q, tmp, &pq, st);
        if (s != GT_OK) break;
        double alpha = rz / pq;
        k_axpy2<<<g, B, 0, st>>>(n, alpha, pp, q, dx, r);
        it++;
        s = dot(n, r, r, tmp, &rr, st);
        if (s != GT_OK || sqrt(rr) <= tol * bn || !isfinite(rr)) break;
        s = p.apply(p.ctx, r, z, st);
        double rz2 = 0;
        if (s == GT_OK) s = dot(n, r, z, tmp, &rz2, st);
        if (s != GT_OK) break;
        k_xpby<<<g, B, 0, st>>>(n, z, rz2 / rz, pp);
        rz = rz2;
    }
    if (s == GT_OK) {
        cudaError_t e = cudaMemcpy(x, dx, nb, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) s = gt_cu_status_from(e, "cudaMemcpy", __FILE__, __LINE__);
    }
    res->pcg_iters = it;
    res->pcg_ms = gt_now_ms() - t1;
    res->pcg_relres = bn > 0 ? sqrt(rr) / bn : 0;
    (void)t0;
    if (st) cudaStreamDestroy(st);
    p.destroy(p.ctx);
    gt_cu_spd_free(&d);
    return s;
}
