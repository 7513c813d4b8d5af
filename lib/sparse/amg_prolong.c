/* AMG set-up, stage 3: the prolongator. T is the tentative prolongator of
 * the constant near-null space: T[i][agg[i]] = 1/sqrt(|aggregate|), so
 * T^T T = I. P = (I - w D^-1 A) T smooths it by one damped Jacobi step with
 * w = omega / rho(D^-1 A); rho comes from power iterations on the symmetric
 * D^-1/2 A D^-1/2. Row i of P is formed directly from row i of A (no
 * product): its columns are the aggregates of row i's columns (and agg[i]).
 * Each output column's value starts from the T term and adds the row's
 * entries in their order (the GPU runs this loop on short rows; on long
 * rows it forms A T by its hash product and then scales and adds T: the
 * same pattern, values equal up to rounding). */
#include <math.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "sparse/amg.h"

static gt_status agg_scale(int64_t n, const int32_t *agg, int64_t nagg, double **out)
{
    double *sc = gt_calloc((size_t)(nagg ? nagg : 1), sizeof *sc, "amg aggregate sizes");
    if (!sc) return GT_ERR_RUNTIME;
    for (int64_t i = 0; i < n; i++) sc[agg[i]] += 1;
    for (int64_t k = 0; k < nagg; k++) sc[k] = 1.0 / sqrt(sc[k]);
    *out = sc;
    return GT_OK;
}

gt_status gt_amg_tentative(int64_t n, const int32_t *agg, int64_t nagg, gt_csr *t)
{
    double *sc = NULL;
    GT_TRY(agg_scale(n, agg, nagg, &sc));
    int32_t *ri = gt_malloc_array((size_t)(n ? n : 1), 4, "amg tentative rows");
    double *v = gt_malloc_array((size_t)(n ? n : 1), 8, "amg tentative values");
    if (!ri || !v) return free(sc), free(ri), free(v), GT_ERR_RUNTIME;
    for (int64_t i = 0; i < n; i++) ri[i] = (int32_t)i, v[i] = sc[agg[i]];
    gt_status s = gt_csr_from_triplets(n, nagg, n, ri, agg, v, t);
    free(sc), free(ri), free(v);
    return s;
}

double gt_amg_rho(const gt_csr *a, const double *dinv)
{
    /* power iteration on B = D^-1 A in the D inner product (B is self-adjoint
       there): y = A v, lam = v.y / v.Dv, v = D^-1 y / |D^-1 y|_D */
    int64_t n = a->nrows;
    double *v = malloc((size_t)(n ? n : 1) * 8), *y = malloc((size_t)(n ? n : 1) * 8);
    if (!v || !y) return free(v), free(y), 2.0; /* Gershgorin-like fallback for a Laplacian */
    for (int64_t i = 0; i < n; i++) v[i] = gt_power_start(i);
    double lam = 0;
    for (int k = 0; k < GT_AMG_POWER_ITERS; k++) {
        gt_csr_spmv(a, v, y);
        double vy = 0, vdv = 0, nn = 0;
        for (int64_t i = 0; i < n; i++) {
            vy += v[i] * y[i], vdv += v[i] * v[i] / dinv[i];
            double z = y[i] * dinv[i];
            nn += z * y[i];
        }
        lam = vdv > 0 ? vy / vdv : 0;
        if (!(nn > 0) || !isfinite(nn)) break;
        double s = 1.0 / sqrt(nn);
        for (int64_t i = 0; i < n; i++) v[i] = y[i] * dinv[i] * s;
    }
    free(v), free(y);
    return lam;
}

gt_status gt_amg_prolong(const gt_csr *a, const double *dinv, const int32_t *agg, int64_t nagg, double w, gt_csr *p)
{
    int64_t n = a->nrows;
    double *sc = NULL;
    GT_TRY(agg_scale(n, agg, nagg, &sc));
    int64_t *ptr = gt_malloc_array((size_t)n + 1, 8, "amg prolongator rows");
    if (!ptr) return free(sc), GT_ERR_RUNTIME;
    /* pass 1: distinct aggregates per row (agg[i] and those of the columns) */
    ptr[0] = 0;
    for (int64_t i = 0; i < n; i++)
        ptr[i + 1] = ptr[i] + gt_amg_prolong_row_len(a->col, a->ptr[i], a->ptr[i + 1], agg, agg[i]);
    int32_t *col = gt_malloc_array((size_t)(ptr[n] ? ptr[n] : 1), 4, "amg prolongator columns");
    double *val = gt_malloc_array((size_t)(ptr[n] ? ptr[n] : 1), 8, "amg prolongator values");
    if (!col || !val) return free(sc), free(ptr), free(col), free(val), GT_ERR_RUNTIME;
    /* pass 2: values, then the row sorted by column */
    for (int64_t i = 0; i < n; i++)
        gt_amg_prolong_row(a->col, a->val, a->ptr[i], a->ptr[i + 1], agg, sc, agg[i], -w * dinv[i], col + ptr[i],
                           val + ptr[i]);
    free(sc);
    *p = (gt_csr){.nrows = n, .ncols = nagg, .nnz = ptr[n], .ptr = ptr, .col = col, .val = val};
    return GT_OK;
}
