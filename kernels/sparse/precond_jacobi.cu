// The Jacobi preconditioner on the GPU: z = D^-1 r, one kernel on the
// solver's stream. D^-1 comes from the host matrix (the same checks and
// message as the CPU version, lib/sparse/precond_jacobi.c) and is uploaded.
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/precond_cu.h"
#include "sparse/precond_kinds.h"

namespace {

struct JacobiCtx {
    int64_t n;
    double *dinv; // device
};

__global__ void k_jacobi_apply(int64_t n, const double *__restrict__ dinv, const double *__restrict__ r,
                               double *__restrict__ z)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        z[i] = dinv[i] * r[i];
}

gt_status jacobi_apply(void *ctx, const double *r, double *z, void *stream)
{
    const JacobiCtx *c = (const JacobiCtx *)ctx;
    if (c->n == 0) return GT_OK;
    k_jacobi_apply<<<gt_grid((size_t)c->n, 256, 4096), 256, 0, (cudaStream_t)stream>>>(c->n, c->dinv, r, z);
    GT_CU_LAUNCH("jacobi apply");
    return GT_OK;
}

void jacobi_destroy(void *ctx)
{
    JacobiCtx *c = (JacobiCtx *)ctx;
    if (c->dinv) gt_cu_free(c->dinv);
    free(c);
}

} // namespace

gt_status gt_cu_precond_jacobi(const gt_csr *host, gt_precond *p)
{
    int64_t n = host->nrows;
    double *h = (double *)malloc((size_t)(n ? n : 1) * sizeof *h);
    JacobiCtx *c = (JacobiCtx *)calloc(1, sizeof *c);
    if (!h || !c) {
        free(h), free(c);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    c->n = n;
    gt_status s = gt_precond_inv_diag(host, h);
    if (s == GT_OK) s = gt_cu_malloc((void **)&c->dinv, (size_t)(n ? n : 1) * sizeof(double), "Jacobi D^-1");
    if (s == GT_OK) s = gt_cu_memcpy_h2d(c->dinv, h, (size_t)n * sizeof(double), NULL);
    free(h);
    if (s != GT_OK) {
        jacobi_destroy(c);
        return s;
    }
    gt_precond_set(p, GT_PRECOND_JACOBI, n, true, c, jacobi_apply, jacobi_destroy);
    snprintf(p->summary, sizeof p->summary, "Jacobi: z = D^-1 r on the GPU (%lld rows)", (long long)n);
    return GT_OK;
}
