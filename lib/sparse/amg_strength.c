/* AMG set-up, stage 1: the diagonal and the strength-of-connection graph
 * S = { (i, j), i != j : |a_ij| >= theta sqrt(|a_ii a_jj|) } (symmetric for
 * symmetric A; theta 0 keeps every off-diagonal nonzero, as pyamg does). */
#include <math.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "sparse/amg.h"

gt_status gt_amg_dinv(const gt_csr *a, double *dinv)
{
    for (int64_t i = 0; i < a->nrows; i++) {
        double d = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
            if (a->col[p] == i) d += a->val[p];
        if (d == 0 || !isfinite(d))
            return gt_fail(GT_ERR_DATA, "amg: %s diagonal in row %lld", d == 0 ? "zero or missing" : "non-finite",
                           (long long)i + 1);
        dinv[i] = 1.0 / d;
    }
    return GT_OK;
}

gt_status gt_amg_strength(const gt_csr *a, double theta, gt_csr *s)
{
    int64_t n = a->nrows;
    double *d = gt_malloc_array((size_t)(n ? n : 1), sizeof *d, "amg strength diagonal");
    int64_t *ptr = gt_malloc_array((size_t)n + 1, sizeof *ptr, "amg strength rows");
    if (!d || !ptr) return free(d), free(ptr), GT_ERR_RUNTIME;
    gt_status st = gt_amg_dinv(a, d);
    if (st != GT_OK) return free(d), free(ptr), st;
    for (int64_t i = 0; i < n; i++) d[i] = 1.0 / d[i];
    ptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t c = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int32_t j = a->col[p];
            c += j != i && gt_amg_strong(a->val[p], d[i], d[j], theta);
        }
        ptr[i + 1] = ptr[i] + c;
    }
    int32_t *col = gt_malloc_array((size_t)(ptr[n] ? ptr[n] : 1), sizeof *col, "amg strength columns");
    double *val = gt_malloc_array((size_t)(ptr[n] ? ptr[n] : 1), sizeof *val, "amg strength values");
    if (!col || !val) return free(d), free(ptr), free(col), free(val), GT_ERR_RUNTIME;
    for (int64_t i = 0; i < n; i++) {
        int64_t q = ptr[i];
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int32_t j = a->col[p];
            if (j != i && gt_amg_strong(a->val[p], d[i], d[j], theta)) col[q] = j, val[q++] = a->val[p];
        }
    }
    free(d);
    *s = (gt_csr){.nrows = n, .ncols = n, .nnz = ptr[n], .ptr = ptr, .col = col, .val = val};
    return GT_OK;
}
