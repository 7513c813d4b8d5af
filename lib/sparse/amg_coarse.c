/* AMG, the coarsest level: A made dense and factored once, Cholesky
 * A = L L^T when every pivot is positive, else LU with partial pivoting
 * (P A = L U); a zero pivot is a singular coarse operator (GT_ERR_DATA).
 * Row-major n x n; the GPU factors the same way in one thread block. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "sparse/amg.h"

/* Row-oriented (Cholesky-Crout): L[i][j] = (A[i][j] - L[i][:j].L[j][:j]) / L[j][j],
   the inner products over contiguous row prefixes. */
static bool cholesky(int64_t n, double *l)
{
    for (int64_t i = 0; i < n; i++) {
        double *li = l + i * n;
        for (int64_t j = 0; j <= i; j++) {
            const double *lj = l + j * n;
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* four chains: not latency-bound */
            int64_t p = 0;
            for (; p + 4 <= j; p += 4)
                s0 += li[p] * lj[p], s1 += li[p + 1] * lj[p + 1], s2 += li[p + 2] * lj[p + 2], s3 += li[p + 3] * lj[p + 3];
            for (; p < j; p++) s0 += li[p] * lj[p];
            double s = li[j] - ((s0 + s1) + (s2 + s3));
            if (j < i) li[j] = s / lj[j];
            else if (!(s > 0) || !isfinite(s)) return false;
            else li[i] = sqrt(s);
        }
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) l[i * n + j] = 0;
    return true;
}

static bool lu(int64_t n, double *u, int32_t *piv)
{
    for (int64_t i = 0; i < n; i++) piv[i] = (int32_t)i;
    for (int64_t k = 0; k < n; k++) {
        int64_t m = k;
        for (int64_t i = k + 1; i < n; i++)
            if (fabs(u[i * n + k]) > fabs(u[m * n + k])) m = i;
        if (!(fabs(u[m * n + k]) > 0)) return false;
        if (m != k) {
            for (int64_t j = 0; j < n; j++) {
                double t = u[k * n + j];
                u[k * n + j] = u[m * n + j], u[m * n + j] = t;
            }
            int32_t t = piv[k];
            piv[k] = piv[m], piv[m] = t;
        }
        for (int64_t i = k + 1; i < n; i++) {
            double f = u[i * n + k] / u[k * n + k];
            u[i * n + k] = f;
            for (int64_t j = k + 1; j < n; j++) u[i * n + j] -= f * u[k * n + j];
        }
    }
    return true;
}

gt_status gt_amg_coarse_factor(const gt_csr *a, double **fact, int32_t **piv)
{
    int64_t n = a->nrows;
    size_t nn;
    if (!gt_mul_size((size_t)n, (size_t)n, &nn)) return gt_fail(GT_ERR_RUNTIME, "amg: coarse level too large");
    double *f = gt_calloc(nn ? nn : 1, 8, "amg coarse matrix");
    if (!f) return GT_ERR_RUNTIME;
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) f[i * n + a->col[p]] += a->val[p];
    *piv = NULL;
    if (cholesky(n, f)) {
        *fact = f;
        return GT_OK;
    }
    for (int64_t i = 0; i < n; i++) /* start again from A for LU */
        for (int64_t j = 0; j < n; j++) f[i * n + j] = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) f[i * n + a->col[p]] += a->val[p];
    int32_t *pv = gt_malloc_array((size_t)(n ? n : 1), 4, "amg coarse pivots");
    if (!pv) return free(f), GT_ERR_RUNTIME;
    if (!lu(n, f, pv)) {
        free(f), free(pv);
        return gt_fail(GT_ERR_DATA, "amg: the coarsest operator (%lld rows) is singular", (long long)n);
    }
    *fact = f, *piv = pv;
    return GT_OK;
}

void gt_amg_coarse_solve(int64_t n, const double *f, const int32_t *piv, const double *b, double *x)
{
    /* forward: L y = (P) b, then back: L^T x = y (Cholesky) or U x = y (LU) */
    for (int64_t i = 0; i < n; i++) {
        double s = piv ? b[piv[i]] : b[i];
        for (int64_t j = 0; j < i; j++) s -= f[i * n + j] * x[j];
        x[i] = piv ? s : s / f[i * n + i];
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (int64_t j = i + 1; j < n; j++) s -= (piv ? f[i * n + j] : f[j * n + i]) * x[j];
        x[i] = s / f[i * n + i];
    }
}
