/* Power iteration for Richardson's step: an estimate of lambda_max(A)
 * (symmetric A) or sigma_max(A)^2 = lambda_max(A^T A) (otherwise), from a
 * fixed pseudo-random start so that the CPU and GPU paths (kernels/sparse/
 * power.cu) iterate the same vectors, and the step it gives combined with the
 * Gershgorin bounds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/sparse.h"

double gt_power_start(int64_t i)
{
    uint32_t h = (uint32_t)i * 2654435761u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return (double)(h >> 8) / 16777216.0 - 0.5; /* exact in float and double */
}

gt_status gt_csr_transpose(const gt_csr *a, gt_csr *out)
{
    int32_t *rows = malloc((size_t)(a->nnz ? a->nnz : 1) * sizeof *rows);
    if (!rows) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) rows[p] = (int32_t)i;
    gt_status s = gt_csr_from_triplets(a->ncols, a->nrows, a->nnz, a->col, rows, a->val, out);
    free(rows);
    return s;
}

gt_status gt_power_estimate(const gt_csr *a, const gt_csr *at, int iters, double *est)
{
    int64_t n = a->ncols;
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v), *w = malloc((size_t)(a->nrows ? a->nrows : 1) * sizeof *w),
           *y = at ? malloc((size_t)(n ? n : 1) * sizeof *y) : NULL;
    if (!v || !w || (at && !y)) {
        free(v), free(w), free(y);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    for (int64_t i = 0; i < n; i++) v[i] = gt_power_start(i);
    double lam = 0;
    for (int k = 0; k < iters; k++) {
        /* y = B v (B = A or A^T A); lam = v.y / v.v; v = y / |y| */
        gt_csr_spmv(a, v, w);
        double *yy = w;
        if (at) gt_csr_spmv(at, w, y), yy = y;
        double vy = 0, yn = 0, vv = 0;
        for (int64_t i = 0; i < n; i++) vy += v[i] * yy[i], yn += yy[i] * yy[i], vv += v[i] * v[i];
        lam = vv > 0 ? vy / vv : 0;
        if (!(yn > 0) || !isfinite(yn)) break;
        double s = 1.0 / sqrt(yn);
        for (int64_t i = 0; i < n; i++) v[i] = yy[i] * s;
    }
    *est = lam;
    free(v), free(w), free(y);
    return GT_OK;
}

double gt_richardson_tau_bound(const gt_csr *a, bool symmetric, double est)
{
    /* Gershgorin: every eigenvalue lies in a disc centred a_ii with radius R_i,
       so Re(lambda) >= lo = min(a_ii - R_i) and |lambda| <= hi = max(a_ii + R_i)
       (positive diagonal). lo > 0: tau = 2/(lo + hi), the optimal step for
       the bounds. Otherwise, symmetric with a positive diagonal (SPD
       candidates such as Laplacians, where lo = 0): tau = 1.9/hi < 2/lmax,
       which converges for SPD matrices. Else 1/max row sum. */
    double lo = INFINITY, hi = 0, rowmax = 0;
    bool posdiag = true;
    for (int64_t i = 0; i < a->nrows; i++) {
        double d = 0, r = 0, s = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            s += fabs(a->val[p]);
            if (a->col[p] == i) d = a->val[p];
            else r += fabs(a->val[p]);
        }
        if (d - r < lo) lo = d - r;
        if (d + r > hi) hi = d + r;
        if (s > rowmax) rowmax = s;
        if (!(d > 0)) posdiag = false;
    }
    /* the power estimate (symmetric: lambda_max from below; otherwise
       sigma_max >= |lambda|) with a safety factor, where it is tighter */
    double up = est > 0 ? GT_POWER_SAFETY * (symmetric ? est : sqrt(est)) : INFINITY;
    if (up < hi) hi = up;
    if (up < rowmax) rowmax = up;
    if (lo > 0 && hi < lo) hi = lo;
    if (lo > 0 && hi > 0) return 2.0 / (lo + hi);
    if (symmetric && posdiag && hi > 0) return 1.9 / hi;
    return rowmax > 0 ? 1.0 / rowmax : 1.0;
}

gt_status gt_richardson_tau_power(const gt_csr *a, double *tau)
{
    gt_sp_info in;
    GT_TRY(gt_sp_analyze(a, &in));
    gt_csr at = {0};
    if (!in.symmetric) GT_TRY(gt_csr_transpose(a, &at));
    double est = 0;
    gt_status s = gt_power_estimate(a, in.symmetric ? NULL : &at, GT_POWER_ITERS, &est);
    gt_csr_free(&at);
    if (s == GT_OK) *tau = gt_richardson_tau_bound(a, in.symmetric, est);
    return s;
}
