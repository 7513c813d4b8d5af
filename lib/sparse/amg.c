/* AMG driver: the levels of the smoothed-aggregation hierarchy built stage
 * by stage (amg_*.c), the -v summary, and the CPU preconditioner of
 * lib/sparse/precond.h whose apply is one V-cycle. Coarsening stops at
 * amg_max_levels, at or below amg_coarse_size rows, or when aggregation no
 * longer reduces the size; a coarsest level above GT_AMG_MAX_DENSE rows is an
 * error. A level whose strength graph is empty (theta above every coupling)
 * is aggregated with theta 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/timer.h"
#include "sparse/amg.h"

const char *gt_amg_stage_name(gt_amg_stage s)
{
    static const char *const n[GT_AMG_NSTAGES] = {"strength", "aggregate", "prolong", "galerkin", "smoother", "coarse"};
    return (unsigned)s < GT_AMG_NSTAGES ? n[s] : "?";
}

static void level_free(gt_amg_level *l)
{
    gt_csr_free(&l->a), gt_csr_free(&l->p), gt_csr_free(&l->r);
    free(l->agg), free(l->dinv), free(l->l1inv), free(l->colour_rows), free(l->colour_ptr);
    free(l->x), free(l->b), free(l->t), free(l->sr), free(l->sd);
    memset(l, 0, sizeof *l);
}

void gt_amg_free(gt_amg *h)
{
    for (int l = 0; l < h->nlevels; l++) level_free(&h->lev[l]);
    free(h->lev), free(h->cfact), free(h->cpiv);
    memset(h, 0, sizeof *h);
}

static gt_status csr_copy(const gt_csr *a, gt_csr *c)
{
    *c = (gt_csr){.nrows = a->nrows, .ncols = a->ncols, .nnz = a->nnz};
    c->ptr = gt_malloc_array((size_t)a->nrows + 1, 8, "amg matrix rows");
    c->col = gt_malloc_array((size_t)(a->nnz ? a->nnz : 1), 4, "amg matrix columns");
    c->val = gt_malloc_array((size_t)(a->nnz ? a->nnz : 1), 8, "amg matrix values");
    if (!c->ptr || !c->col || !c->val) return gt_csr_free(c), GT_ERR_RUNTIME;
    memcpy(c->ptr, a->ptr, ((size_t)a->nrows + 1) * 8);
    memcpy(c->col, a->col, (size_t)a->nnz * 4);
    memcpy(c->val, a->val, (size_t)a->nnz * 8);
    return GT_OK;
}

/* One coarsening step on level l: S, aggregates, rho, P, R, A_{l+1}.
   *stop when the aggregation would not reduce the size. */
static gt_status coarsen(gt_amg *h, int l, bool *stop)
{
    gt_amg_level *L = &h->lev[l];
    int64_t n = L->a.nrows;
    double theta = gt_amg_level_theta(h->opts.amg_theta, l), t2 = 0;
    L->agg = gt_malloc_array((size_t)(n ? n : 1), 4, "amg aggregates");
    if (!L->agg) return GT_ERR_RUNTIME;
    for (;;) {
        double t0 = gt_now_ms();
        gt_csr s;
        GT_TRY(gt_amg_strength(&L->a, theta, &s));
        double t1 = gt_now_ms();
        gt_status st = gt_amg_aggregate(&s, gt_amg_level_dist(l), L->agg, &L->nagg, NULL);
        gt_csr_free(&s);
        GT_TRY(st);
        t2 = gt_now_ms();
        h->stage_ms[GT_AMG_ST_STRENGTH] += t1 - t0, h->stage_ms[GT_AMG_ST_AGGREGATE] += t2 - t1;
        /* theta above every coupling (the 27-point Laplacian's 1/26 < 0.08):
           no strong connection at all; coarsen with all of them instead */
        if (L->nagg < n || theta <= GT_AMG_THETA_FLOOR) break;
        theta = GT_AMG_THETA_FLOOR;
    }
    if (L->nagg >= n || L->nagg == 0) {
        free(L->agg), L->agg = NULL, L->nagg = 0;
        *stop = true;
        return GT_OK;
    }
    L->rho = gt_amg_rho(&L->a, L->dinv);
    double w = L->rho > 0 ? h->opts.amg_omega / L->rho : 0;
    GT_TRY(gt_amg_prolong(&L->a, L->dinv, L->agg, L->nagg, w, &L->p));
    GT_TRY(gt_csr_transpose(&L->p, &L->r));
    double t3 = gt_now_ms();
    gt_amg_level *C = &h->lev[l + 1];
    GT_TRY(gt_amg_galerkin(&L->a, &L->p, &L->r, &C->a));
    double t4 = gt_now_ms();
    h->stage_ms[GT_AMG_ST_PROLONG] += t3 - t2, h->stage_ms[GT_AMG_ST_GALERKIN] += t4 - t3;
    *stop = false;
    return GT_OK;
}

/* One coarsening step on grid level l (amg_grid.h): rho by Gershgorin, the
   trilinear P, R, A_{l+1} = R A P. mask: the slots of A_l's stencil.
   *stop when the grid no longer shrinks. */
static gt_status coarsen_grid(gt_amg *h, int l, uint32_t mask, bool *stop)
{
    gt_amg_level *L = &h->lev[l];
    gt_amg_grid c = gt_amg_grid_coarse(L->grid);
    int64_t nc = gt_amg_grid_size(c);
    *stop = nc >= L->a.nrows;
    if (*stop) return GT_OK;
    double t0 = gt_now_ms();
    gt_amg_grid_end_weights(&L->a, &L->grid);
    L->rho = gt_amg_grid_rho(&L->a, L->dinv);
    L->nagg = nc;
    GT_TRY(gt_amg_grid_prolong(L->grid, &L->p));
    GT_TRY(gt_csr_transpose(&L->p, &L->r));
    double t1 = gt_now_ms();
    gt_amg_level *C = &h->lev[l + 1];
    GT_TRY(gt_amg_grid_galerkin(&L->a, L->grid, mask, &C->a));
    C->grid = c;
    h->stage_ms[GT_AMG_ST_PROLONG] += t1 - t0, h->stage_ms[GT_AMG_ST_GALERKIN] += gt_now_ms() - t1;
    return GT_OK;
}

gt_status gt_amg_grid_verdict(const gt_amg_grid_info *gi, const gt_precond_opts *o, bool *grid)
{
    *grid = false;
    if (o->amg_coarsening == GT_AMG_COARSEN_AGGREGATION) return GT_OK;
    if (o->amg_coarsening == GT_AMG_COARSEN_AUTO) {
        *grid = gt_amg_grid_choose(gi, o->amg_smoother);
        return GT_OK;
    }
    if (gi->g.nx == 0)
        return gt_fail(GT_ERR_DATA, "amg: grid coarsening: the matrix is not a stencil on a grid (some entry couples "
                       "rows that are not neighbours on any nx x ny x nz grid); use --amg-coarsening aggregation");
    if (o->amg_smoother != GT_AMG_SMOOTH_CHEBYSHEV)
        return gt_fail(GT_ERR_USAGE, "amg: grid coarsening takes the Chebyshev smoother");
    *grid = true;
    return GT_OK;
}

gt_status gt_amg_grid_decide(const gt_csr *a, const gt_precond_opts *o, gt_amg_grid_info *gi, bool *grid)
{
    memset(gi, 0, sizeof *gi);
    *grid = false;
    if (o->amg_coarsening == GT_AMG_COARSEN_AGGREGATION) return GT_OK;
    GT_TRY(gt_amg_grid_detect(a, gi));
    return gt_amg_grid_verdict(gi, o, grid);
}

gt_status gt_amg_setup(const gt_csr *a, const gt_precond_opts *o, gt_amg *h)
{
    memset(h, 0, sizeof *h);
    if (a->nrows != a->ncols || a->nrows == 0)
        return gt_fail(GT_ERR_DATA, "amg: the matrix must be square and not empty (%lld x %lld)",
                       (long long)a->nrows, (long long)a->ncols);
    h->opts = *o;
    if (h->opts.amg_max_levels < 1) h->opts.amg_max_levels = 1;
    if (h->opts.amg_sweeps < 1) h->opts.amg_sweeps = 1;
    double t0 = gt_now_ms();
    h->lev = gt_calloc((size_t)h->opts.amg_max_levels, sizeof *h->lev, "amg levels");
    if (!h->lev) return GT_ERR_RUNTIME;
    h->nlevels = 1;
    gt_amg_grid_info gi;
    bool grid;
    gt_status s = gt_amg_grid_decide(a, &h->opts, &gi, &grid);
    h->stage_ms[GT_AMG_ST_STRENGTH] += gt_now_ms() - t0;
    if (s == GT_OK) s = csr_copy(a, &h->lev[0].a);
    if (grid) h->lev[0].grid = gi.g;
    for (int l = 0; s == GT_OK; l++) {
        gt_amg_level *L = &h->lev[l];
        int64_t n = L->a.nrows;
        L->dinv = gt_malloc_array((size_t)n, 8, "amg diagonal");
        if (!L->dinv) s = GT_ERR_RUNTIME;
        else s = gt_amg_dinv(&L->a, L->dinv);
        if (s != GT_OK) {
            if (l > 0) gt_errmsg_prefix("amg level %d", l);
            break;
        }
        if (l + 1 >= h->opts.amg_max_levels || n <= h->opts.amg_coarse_size) {
            if (!grid || gt_amg_grid_last(n, h->opts.amg_coarse_size) || l + 1 >= h->opts.amg_max_levels) break;
        }
        bool stop = false;
        h->nlevels = l + 2; /* so that gt_amg_free frees the next level on failure */
        s = grid ? coarsen_grid(h, l, l == 0 ? gi.mask : (1u << GT_AMG_GRID_SLOTS) - 1, &stop) : coarsen(h, l, &stop);
        if (stop) h->nlevels = l + 1;
        if (stop || s != GT_OK) break;
    }
    for (int l = 0; s == GT_OK && l < h->nlevels; l++) {
        gt_amg_level *L = &h->lev[l];
        size_t n = (size_t)L->a.nrows;
        double **v[5] = {&L->x, &L->b, &L->t, &L->sr, &L->sd};
        for (int k = 0; k < 5 && s == GT_OK; k++)
            if (!(*v[k] = gt_malloc_array(n, 8, "amg work vectors"))) s = GT_ERR_RUNTIME;
        if (s == GT_OK && l < h->nlevels - 1) {
            double t1 = gt_now_ms();
            if (h->opts.amg_smoother == GT_AMG_SMOOTH_CHEBYSHEV && L->rho <= 0) L->rho = gt_amg_rho(&L->a, L->dinv);
            s = gt_amg_smoother_setup(L, h->opts.amg_smoother);
            h->stage_ms[GT_AMG_ST_SMOOTHER] += gt_now_ms() - t1;
        }
    }
    if (s == GT_OK && h->lev[h->nlevels - 1].a.nrows > GT_AMG_MAX_DENSE)
        s = gt_fail(GT_ERR_DATA, "amg: coarsening stopped at %lld rows on level %d, too many for the dense coarse solve "
                    "(at most %d; more levels or a smaller theta may help)",
                    (long long)h->lev[h->nlevels - 1].a.nrows, h->nlevels - 1, GT_AMG_MAX_DENSE);
    if (s == GT_OK) {
        double t1 = gt_now_ms();
        gt_amg_level *C = &h->lev[h->nlevels - 1];
        h->nc = C->a.nrows;
        s = gt_amg_coarse_factor(&C->a, &h->cfact, &h->cpiv);
        h->stage_ms[GT_AMG_ST_COARSE] += gt_now_ms() - t1;
    }
    if (s != GT_OK) {
        gt_amg_free(h);
        return s;
    }
    h->setup_ms = gt_now_ms() - t0;
    return GT_OK;
}

double gt_amg_operator_complexity(const gt_amg *h)
{
    double s = 0;
    for (int l = 0; l < h->nlevels; l++) s += (double)h->lev[l].a.nnz;
    return h->nlevels ? s / (double)h->lev[0].a.nnz : 0;
}

double gt_amg_grid_complexity(const gt_amg *h)
{
    double s = 0;
    for (int l = 0; l < h->nlevels; l++) s += (double)h->lev[l].a.nrows;
    return h->nlevels ? s / (double)h->lev[0].a.nrows : 0;
}

void gt_amg_summary(const gt_amg *h, const char *where, char *buf, size_t len)
{
    static const char *const sm[] = {"chebyshev", "l1-jacobi", "mc-gauss-seidel"};
    size_t k = 0;
#define PUT(...) (k < len ? (void)(k += (size_t)snprintf(buf + k, len - k, __VA_ARGS__)) : (void)0)
    const gt_amg_grid *g = h->nlevels ? &h->lev[0].grid : NULL;
    char co[96];
    if (g && g->nx) snprintf(co, sizeof co, "grid %lldx%lldx%lld", (long long)g->nx, (long long)g->ny, (long long)g->nz);
    else snprintf(co, sizeof co, "aggregation, theta %g", h->opts.amg_theta);
    PUT("amg (%s): %d levels, coarsening %s, smoother %s x%d, coarsest %s\n", where, h->nlevels, co,
        sm[(unsigned)h->opts.amg_smoother < 3 ? h->opts.amg_smoother : 0], h->opts.amg_sweeps,
        h->coarse_inverse ? "dense inverse" : h->cpiv ? "dense LU" : "dense Cholesky");
    PUT("  level %12s %14s %8s\n", "rows", "nnz", "nnz/row");
    for (int l = 0; l < h->nlevels; l++) {
        const gt_csr *a = &h->lev[l].a;
        PUT("  %5d %12lld %14lld %8.2f\n", l, (long long)a->nrows, (long long)a->nnz,
            a->nrows ? (double)a->nnz / (double)a->nrows : 0.0);
    }
    PUT("  operator complexity %.3f, grid complexity %.3f\n", gt_amg_operator_complexity(h),
        gt_amg_grid_complexity(h));
    PUT("  setup %.2f ms:", h->setup_ms);
    for (int s = 0; s < GT_AMG_NSTAGES; s++) PUT(" %s %.2f", gt_amg_stage_name((gt_amg_stage)s), h->stage_ms[s]);
    PUT("\n");
#undef PUT
    if (len) buf[len - 1] = 0;
}

static gt_status amg_apply(void *ctx, const double *r, double *z, void *stream)
{
    (void)stream;
    gt_amg_vcycle(ctx, r, z);
    return GT_OK;
}

static void amg_destroy(void *ctx)
{
    if (!ctx) return;
    gt_amg_free(ctx);
    free(ctx);
}

gt_status gt_amg_precond_cpu(const gt_csr *a, const gt_precond_opts *o, gt_precond *p)
{
    gt_amg *h = gt_calloc(1, sizeof *h, "amg hierarchy");
    if (!h) return GT_ERR_RUNTIME;
    gt_status s = gt_amg_setup(a, o, h);
    if (s != GT_OK) return free(h), s;
    memset(p, 0, sizeof *p);
    gt_precond_set(p, GT_PRECOND_AMG, a->nrows, false, h, amg_apply, amg_destroy);
    p->setup_ms = h->setup_ms;
    p->complexity = gt_amg_operator_complexity(h);
    p->levels = h->nlevels;
    if (o->verbose) gt_amg_summary(h, "cpu", p->summary, sizeof p->summary);
    return GT_OK;
}

const gt_amg *gt_amg_precond_hierarchy(const gt_precond *p)
{
    return p->kind == GT_PRECOND_AMG && !p->on_gpu ? p->ctx : NULL;
}
