/* AMG, the V-cycle (the CPU reference of the preconditioner's apply): from
 * x = 0 on level 0, pre-smooth, restrict the residual with R = P^T, recurse,
 * prolong and add the correction, post-smooth; the coarsest level is solved
 * with its dense factor. With the same polynomial smoother (or Gauss-Seidel
 * colours reversed) before and after, the cycle is a symmetric operator. */
#include <string.h>

#include "sparse/amg.h"

static void cycle(const gt_amg *h, int l, const double *b, double *x)
{
    const gt_amg_level *L = &h->lev[l];
    if (l == h->nlevels - 1) {
        gt_amg_coarse_solve(h->nc, h->cfact, h->cpiv, b, x);
        return;
    }
    const gt_precond_opts *o = &h->opts;
    gt_amg_smooth(L, o->amg_smoother, o->amg_sweeps, b, x, true, false);
    /* t = b - A x; b_c = R t */
    gt_csr_spmv(&L->a, x, L->t);
    for (int64_t i = 0; i < L->a.nrows; i++) L->t[i] = b[i] - L->t[i];
    const gt_amg_level *C = &h->lev[l + 1];
    gt_csr_spmv(&L->r, L->t, C->b);
    cycle(h, l + 1, C->b, C->x);
    /* x += P x_c */
    gt_csr_spmv(&L->p, C->x, L->t);
    for (int64_t i = 0; i < L->a.nrows; i++) x[i] += L->t[i];
    gt_amg_smooth(L, o->amg_smoother, o->amg_sweeps, b, x, false, true);
}

void gt_amg_vcycle(const gt_amg *h, const double *r, double *z)
{
    cycle(h, 0, r, z);
}
