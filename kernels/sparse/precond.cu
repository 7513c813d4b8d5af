// gt_cu_precond_create: the GPU preconditioners' dispatch (precond.h), with
// the identity for "none" and the synchronised set-up time.
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "common/timer.h"
#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/amg_cu.h"
#include "kernels/sparse/ilu0_cu.h"
#include "kernels/sparse/precond_cu.h"
#include "kernels/sparse/sparse_cu.h"
#include "sparse/precond_kinds.h"

namespace {

gt_status none_apply(void *ctx, const double *r, double *z, void *stream)
{
    int64_t n = *(const int64_t *)ctx;
    GT_CU(cudaMemcpyAsync(z, r, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
    return GT_OK;
}

} // namespace

extern "C" gt_status gt_cu_precond_create(const gt_spd *d, const gt_csr *host, gt_precond_kind k,
                                          const gt_precond_opts *o, gt_precond *p)
{
    gt_precond_opts def;
    if (!o) {
        gt_precond_opts_init(&def);
        o = &def;
    }
    gt_precond_init_fields(p, k, host->nrows, true);
    if (d->prec != 8 || d->nrows != host->nrows || host->nrows != host->ncols)
        return gt_fail(GT_ERR_USAGE, "a GPU preconditioner needs the square matrix in double precision");
    GT_TRY(gt_cu_sync());
    double t0 = gt_now_ms();
    gt_status s;
    switch (k) {
    case GT_PRECOND_NONE: {
        int64_t *n = (int64_t *)malloc(sizeof *n);
        if (!n) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        *n = host->nrows;
        p->ctx = n, p->apply = none_apply, p->destroy = free;
        snprintf(p->summary, sizeof p->summary, "no preconditioner");
        s = GT_OK;
        break;
    }
    case GT_PRECOND_JACOBI: s = gt_cu_precond_jacobi(host, p); break;
    case GT_PRECOND_IC0:
    case GT_PRECOND_ILU0: s = gt_cu_ilu0_create(d, host, k == GT_PRECOND_IC0, p); break;
    case GT_PRECOND_AMG: s = gt_cu_amg_create(d, host, o, p); break;
    default: s = gt_precond_unavailable(k, "on the GPU "); break;
    }
    if (s == GT_OK) s = gt_cu_sync();
    if (s != GT_OK) {
        gt_precond_destroy(p);
        return s;
    }
    p->setup_ms = gt_now_ms() - t0;
    return GT_OK;
}
