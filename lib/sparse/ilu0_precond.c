/* IC(0) / ILU(0) as a CPU preconditioner (sparse/precond.h): the factors
 * from gt_ilu0_factor, applied by the two triangular sweeps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/timer.h"
#include "sparse/ilu0.h"

static gt_status apply(void *ctx, const double *r, double *z, void *stream)
{
    (void)stream;
    gt_ilu0_solve(ctx, r, z);
    return GT_OK;
}

static void destroy(void *ctx)
{
    gt_ilu0_free(ctx);
    free(ctx);
}

gt_status gt_precond_ilu0_cpu(const gt_csr *a, bool ic, gt_precond *p)
{
    double t0 = gt_now_ms();
    memset(p, 0, sizeof *p);
    gt_ilu0 *f = gt_calloc(1, sizeof *f, "ILU(0) preconditioner");
    if (!f) return GT_ERR_RUNTIME;
    gt_status st = gt_ilu0_factor(a, ic, f);
    if (st != GT_OK) {
        free(f);
        return st;
    }
    gt_precond_set(p, ic ? GT_PRECOND_IC0 : GT_PRECOND_ILU0, a->nrows, false, f, apply, destroy);
    p->setup_ms = gt_now_ms() - t0;
    snprintf(p->summary, sizeof p->summary,
             "%s on the CPU: %s on A's pattern, %lld nonzeros (no fill); triangular solves of %lld (lower) "
             "and %lld (upper) levels; set-up %.3f ms\n",
             ic ? "ic0" : "ilu0", ic ? "L L^T" : "L U", (long long)f->f.nnz, (long long)f->lower.nlevels,
             (long long)f->upper.nlevels, p->setup_ms);
    return GT_OK;
}
