/* AMG, the smoothers of one level on A x = b:
 *  - Chebyshev (default): per sweep the degree-2 Chebyshev polynomial in
 *    D^-1 A on [rho/10, 1.1 rho] (rho the level's estimate of rho(D^-1 A)),
 *    by the three-term recurrence (Saad, Alg. 12.1);
 *  - l1-Jacobi: x += D_l1^-1 (b - A x), D_l1 = diag(sum_j |a_ij|), which
 *    converges for SPD A without a damping factor;
 *  - multicolour Gauss-Seidel: rows of one colour (gt_sp_colour) do not
 *    couple and are updated together; the post-smoother runs the colours in
 *    reverse, so the V-cycle stays symmetric for PCG.
 * The polynomial smoothers are the same operator before and after the
 * coarse correction. */
#include <math.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "sparse/amg.h"

gt_status gt_amg_smoother_setup(gt_amg_level *l, gt_amg_smoother kind)
{
    const gt_csr *a = &l->a;
    int64_t n = a->nrows;
    if (kind == GT_AMG_SMOOTH_L1JACOBI) {
        l->l1inv = gt_malloc_array((size_t)(n ? n : 1), 8, "amg l1 norms");
        if (!l->l1inv) return GT_ERR_RUNTIME;
        for (int64_t i = 0; i < n; i++) {
            double s = 0;
            for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) s += fabs(a->val[p]);
            l->l1inv[i] = 1.0 / s;
        }
    } else if (kind == GT_AMG_SMOOTH_MCGS) {
        int32_t *c = gt_malloc_array((size_t)(n ? n : 1), 4, "amg colours");
        if (!c) return GT_ERR_RUNTIME;
        gt_status s = gt_sp_colour(a, c, &l->ncolours);
        if (s != GT_OK) return free(c), s;
        l->colour_ptr = gt_calloc((size_t)l->ncolours + 2, 8, "amg colour offsets");
        l->colour_rows = gt_malloc_array((size_t)(n ? n : 1), 4, "amg colour rows");
        if (!l->colour_ptr || !l->colour_rows) return free(c), GT_ERR_RUNTIME;
        for (int64_t i = 0; i < n; i++) l->colour_ptr[c[i] + 2]++;
        for (int32_t k = 0; k < l->ncolours; k++) l->colour_ptr[k + 2] += l->colour_ptr[k + 1];
        for (int64_t i = 0; i < n; i++) l->colour_rows[l->colour_ptr[c[i] + 1]++] = (int32_t)i;
        free(c);
    }
    return GT_OK;
}

/* t = b - A x (x_zero: b) */
static void residual(const gt_csr *a, const double *b, const double *x, bool x_zero, double *t)
{
    for (int64_t i = 0; i < a->nrows; i++) {
        double s = b[i];
        if (!x_zero)
            for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) s -= a->val[p] * x[a->col[p]];
        t[i] = s;
    }
}

static void chebyshev(const gt_amg_level *l, const double *b, double *x, bool x_zero)
{
    const gt_csr *a = &l->a;
    int64_t n = a->nrows;
    bool grid = l->grid.nx != 0;
    double hi = (grid ? GT_AMG_GRID_CHEB_HI : GT_AMG_CHEB_HI) * l->rho,
           lo = (grid ? GT_AMG_GRID_CHEB_LO : GT_AMG_CHEB_LO) * l->rho;
    double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta, rk = 1.0 / sigma;
    double *r = l->sr, *d = l->sd, *t = l->t;
    residual(a, b, x, x_zero, r);
    for (int64_t i = 0; i < n; i++) r[i] *= l->dinv[i], d[i] = r[i] / theta;
    /* degree 2: x += d; r -= D^-1 A d; d = c1 d + c2 r; x += d */
    for (int64_t i = 0; i < n; i++) x[i] = x_zero ? d[i] : x[i] + d[i];
    gt_csr_spmv(a, d, t);
    double rn = 1.0 / (2 * sigma - rk), c1 = rn * rk, c2 = 2 * rn / delta;
    for (int64_t i = 0; i < n; i++) {
        double ri = r[i] - l->dinv[i] * t[i];
        x[i] += c1 * d[i] + c2 * ri;
    }
}

static void l1jacobi(const gt_amg_level *l, const double *b, double *x, bool x_zero)
{
    residual(&l->a, b, x, x_zero, l->t);
    for (int64_t i = 0; i < l->a.nrows; i++) x[i] = (x_zero ? 0 : x[i]) + l->l1inv[i] * l->t[i];
}

static void mcgs(const gt_amg_level *l, const double *b, double *x, bool x_zero, bool reverse)
{
    const gt_csr *a = &l->a;
    if (x_zero)
        for (int64_t i = 0; i < a->nrows; i++) x[i] = 0;
    for (int32_t kk = 0; kk < l->ncolours; kk++) {
        int32_t k = reverse ? l->ncolours - 1 - kk : kk;
        for (int64_t q = l->colour_ptr[k]; q < l->colour_ptr[k + 1]; q++) {
            int32_t i = l->colour_rows[q];
            double s = b[i];
            for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
                if (a->col[p] != i) s -= a->val[p] * x[a->col[p]];
            x[i] = s * l->dinv[i];
        }
    }
}

void gt_amg_smooth(const gt_amg_level *l, gt_amg_smoother kind, int sweeps, const double *b, double *x,
                   bool x_zero, bool post)
{
    for (int s = 0; s < sweeps; s++, x_zero = false) {
        if (kind == GT_AMG_SMOOTH_L1JACOBI) l1jacobi(l, b, x, x_zero);
        else if (kind == GT_AMG_SMOOTH_MCGS) mcgs(l, b, x, x_zero, post);
        else chebyshev(l, b, x, x_zero);
    }
}
