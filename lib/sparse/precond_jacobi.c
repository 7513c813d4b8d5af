/* The Jacobi preconditioner on the CPU, z = D^-1 r, and the inverse
 * diagonal it shares with the GPU version (kernels/sparse/precond_jacobi.cu). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sparse/precond_kinds.h"

gt_status gt_precond_inv_diag(const gt_csr *a, double *dinv)
{
    for (int64_t i = 0; i < a->nrows; i++) {
        double d = 0;
        for (int64_t q = a->ptr[i]; q < a->ptr[i + 1]; q++)
            if (a->col[q] == i) d += a->val[q];
        if (d == 0 || !isfinite(d))
            return gt_fail(GT_ERR_DATA, "%s diagonal at row %lld: the Jacobi preconditioner divides by it",
                           d == 0 ? "zero or missing" : "non-finite", (long long)i + 1);
        dinv[i] = 1.0 / d;
    }
    return GT_OK;
}

typedef struct {
    int64_t n;
    double *dinv;
} jacobi_ctx;

static gt_status jacobi_apply(void *ctx, const double *r, double *z, void *stream)
{
    (void)stream;
    const jacobi_ctx *c = ctx;
    for (int64_t i = 0; i < c->n; i++) z[i] = c->dinv[i] * r[i];
    return GT_OK;
}

static void jacobi_destroy(void *ctx)
{
    jacobi_ctx *c = ctx;
    free(c->dinv);
    free(c);
}

gt_status gt_precond_jacobi_cpu(const gt_csr *a, gt_precond *p)
{
    jacobi_ctx *c = calloc(1, sizeof *c);
    if (c) c->dinv = malloc((size_t)(a->nrows ? a->nrows : 1) * sizeof *c->dinv);
    if (!c || !c->dinv) {
        if (c) free(c);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    c->n = a->nrows;
    gt_status s = gt_precond_inv_diag(a, c->dinv);
    if (s != GT_OK) {
        jacobi_destroy(c);
        return s;
    }
    gt_precond_set(p, GT_PRECOND_JACOBI, a->nrows, false, c, jacobi_apply, jacobi_destroy);
    snprintf(p->summary, sizeof p->summary, "Jacobi: z = D^-1 r (%lld rows)", (long long)a->nrows);
    return GT_OK;
}
