/* GPU solve of the screened Poisson system on the device octree: the driver
 * of the same stages as gt_pr_solve_cpu (lib/poisson/solve.c), whose
 * kernels are in pr_points.cu, pr_divergence.cu and pr_level.cu
 * (pr_solve_stages.h says what each holds): sample density at depths F..D-2,
 * each sample's splat depth and area, B-spline splat of the normals into
 * levels F..D, divergence scattered into the 125-neighbourhoods of the
 * sources' ancestors and gathered by the finer targets, then
 * per level, coarse to fine: the right-hand side with the coarser levels'
 * Laplacian and screening moved over, and CG on the 125-point stencil plus
 * point screening. The integral tables and stencils are computed on the
 * host by the CPU's code (gt_pr_cross_fill, gt_pr_stencil125). */
#include <cuda_runtime.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/progress.h"
#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_gpu_internal.h"
#include "kernels/poisson/pr_solve_stages.h"
#include "poisson/pr_bspline.h"

typedef struct {
    double *tM, *tG; /* integral tables (first: freed with the rest) */
    float *u, *nrm, *area, *sdepth, *sw, *own;
    int *any;
    unsigned *lvmask;
    uint8_t *flag;
    uint32_t *src, *hist;
    int32_t *leaf, *lnode;
    double *wdens, *rhs, *coef, *vf, *ptval, *b, *r, *pp, *ap, *z, *dinv, *scal;
    pr_cg_state *cg;
} bufs_t;

static void free_bufs(bufs_t *m)
{
    void **p = (void **)m;
    for (size_t i = 0; i < sizeof *m / sizeof(void *); i++) gt_cu_free(p[i]);
    memset(m, 0, sizeof *m);
}

/* tables for a level-df function against levels 0..dmax (dmax <= df):
 * uploaded into m->tM/m->tG (grown as needed), offsets in T */
static gt_status make_tables(int df, int dmax, int a, int b, bufs_t *m, size_t *cap, xtab *T)
{
    size_t total = 0;
    for (int dg = 0; dg <= dmax; dg++) {
        T->off[dg] = total;
        total += ((size_t)1 << (df - dg)) * 5;
    }
    if (total > *cap) {
        gt_cu_free(m->tM);
        gt_cu_free(m->tG);
        m->tM = m->tG = NULL;
        GT_TRY(gt_cu_malloc((void **)&m->tM, total * sizeof(double), "integral tables"));
        GT_TRY(gt_cu_malloc((void **)&m->tG, total * sizeof(double), "integral tables"));
        *cap = total;
    }
    double *hM = (double *)gt_malloc_array(total, sizeof(double), "integral tables");
    double *hG = (double *)gt_malloc_array(total, sizeof(double), "integral tables");
    if (!hM || !hG) { free(hM); free(hG); return GT_ERR_RUNTIME; }
    for (int dg = 0; dg <= dmax; dg++) {
        gt_pr_cross_fill(df, dg, 0, 0, hM + T->off[dg]);
        gt_pr_cross_fill(df, dg, a, b, hG + T->off[dg]);
    }
    gt_status st = gt_cu_memcpy_h2d(m->tM, hM, total * sizeof(double), NULL);
    if (st == GT_OK) st = gt_cu_memcpy_h2d(m->tG, hG, total * sizeof(double), NULL);
    /* the copies are synchronous for pageable memory with the NULL stream only
     * up to staging: sync before the host buffers go */
    if (st == GT_OK) st = gt_cu_sync();
    free(hM);
    free(hG);
    T->M = m->tM;
    T->G = m->tG;
    return st;
}

static gt_status solve(const gt_pr_dev_octree *dptr, const float *d_u_unsorted, const float *d_n_unsorted, gt_pr_state *s,
                       const gt_pr_params *p, gt_timings *tm, bufs_t *m, double **d_coef, uint8_t **d_tree)
{
    const gt_pr_dev_octree o = *dptr;
    const gt_pr_octree *h = &s->oct;
    const int D = h->depth, F = gt_pr_full_depth(p);
    const size_t N = h->npts, NN = h->nnodes;
    gt_timer tmr, sub;
    gt_timer_start(&tmr, true, NULL);
    size_t nmax = 0;
    for (int l = 0; l <= D; l++)
        if (h->level_start[l + 1] - h->level_start[l] > nmax) nmax = h->level_start[l + 1] - h->level_start[l];
    const size_t nD = h->level_start[D + 1] - h->level_start[D];
    GT_TRY(gt_cu_malloc((void **)&m->u, 3 * N * sizeof(float), "sorted points"));
    GT_TRY(gt_cu_malloc((void **)&m->nrm, 3 * N * sizeof(float), "sorted normals"));
    GT_TRY(gt_cu_malloc((void **)&m->area, N * sizeof(float), "areas"));
    GT_TRY(gt_cu_malloc((void **)&m->sw, N * sizeof(float), "screening weights"));
    GT_TRY(gt_cu_malloc((void **)&m->own, N * sizeof(float), "own screening weights"));
    GT_TRY(gt_cu_malloc((void **)&m->hist, GT_PR_AREA_BINS * sizeof(uint32_t), "area histogram"));
    GT_TRY(gt_cu_malloc((void **)&m->leaf, N * sizeof(int32_t), "leaves"));
    GT_TRY(gt_cu_malloc((void **)&m->lnode, N * sizeof(int32_t), "point nodes"));
    GT_TRY(gt_cu_malloc((void **)&m->wdens, NN * sizeof(double), "density"));
    GT_TRY(gt_cu_malloc((void **)&m->rhs, NN * sizeof(double), "rhs"));
    GT_TRY(gt_cu_malloc((void **)&m->coef, NN * sizeof(double), "coefficients"));
    GT_TRY(gt_cu_malloc((void **)&m->vf, 3 * NN * sizeof(double), "vector field"));
    GT_TRY(gt_cu_malloc((void **)&m->sdepth, N * sizeof(float), "splat depths"));
    GT_TRY(gt_cu_malloc((void **)&m->any, (GT_PR_MAX_DEPTH + 1) * sizeof(int), "level flags"));
    GT_TRY(gt_cu_malloc((void **)&m->lvmask, 2 * sizeof(unsigned), "level flags"));
    GT_TRY(gt_cu_memset(m->any, 0, (GT_PR_MAX_DEPTH + 1) * sizeof(int), NULL));
    GT_TRY(gt_cu_malloc((void **)&m->ptval, N * sizeof(double), "point values"));
    GT_TRY(gt_cu_malloc((void **)&m->scal, 4 * sizeof(double), "cg scalars"));
    GT_TRY(gt_cu_malloc((void **)&m->cg, sizeof(pr_cg_state), "cg state"));
    GT_TRY(gt_cu_malloc((void **)&m->b, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_malloc((void **)&m->r, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_malloc((void **)&m->pp, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_malloc((void **)&m->ap, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_malloc((void **)&m->z, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_malloc((void **)&m->dinv, nmax * sizeof(double), "cg"));
    GT_TRY(gt_cu_malloc((void **)&m->flag, nmax, "divergence sources"));
    GT_TRY(gt_cu_malloc((void **)&m->src, nmax * sizeof(uint32_t), "divergence sources"));
    GT_TRY(gt_cu_memset(m->wdens, 0, NN * sizeof(double), NULL));
    GT_TRY(gt_cu_memset(m->rhs, 0, NN * sizeof(double), NULL));
    GT_TRY(gt_cu_memset(m->coef, 0, NN * sizeof(double), NULL));
    /* points and normals in key order */
    GT_TRY(pr_gather_sorted(d_u_unsorted, o.order, m->u, N));
    GT_TRY(pr_gather_sorted(d_n_unsorted, o.order, m->nrm, N));
    GT_TRY(pr_leaves(o, h->level_start[D], nD, m->leaf));

    /* 1. density at levels dlo..Dw, each sample's splat depth and area */
    const int Dw = D >= 2 ? D - 2 : 0, dlo = Dw < F ? Dw : F;
    s->density_depth = Dw;
    for (int l = dlo; l <= Dw; l++) {
        GT_TRY(pr_up(o.parent, m->leaf, D - l, m->lnode, N));
        GT_TRY(pr_point_scatter(PR_SCATTER_ONE, o, l, m->lnode, m->u, NULL, NULL, 0, 1.0, m->wdens, 0, N,
                                h->level_start[l + 1] - h->level_start[l]));
    }
    {
        double spn = p->samples_per_node > 0 ? p->samples_per_node : 1e-9;
        GT_TRY(pr_sample_depths(o, Dw, F, m->lnode, m->u, m->wdens, spn, m->sdepth, m->area, N));
    }
    /* 2. splat into the levels F..D; a level that no sample's depth reaches
     * gets zeros without a pass over its nodes' points (dense inputs reach
     * only the finest two or three) */
    int any[GT_PR_MAX_DEPTH + 1] = {0};
    unsigned reach = 0;
    size_t n_sparse = 0; /* samples that splat no deeper than D - 2 (gt_pr_coarse_levels) */
    GT_TRY(pr_splat_levels(m->sdepth, N, F, D, m->lvmask, &reach, &n_sparse));
    /* the extraction tree's flags (pr_adapt.h): first the splat's data bits */
    GT_TRY(gt_cu_malloc((void **)d_tree, NN + 1, "extraction tree"));
    GT_TRY(gt_cu_memset(*d_tree, 0, NN + 1, NULL));
    for (int l = F; l <= D; l++) {
        size_t s0 = h->level_start[l], nl = h->level_start[l + 1] - s0;
        if (reach & (1u << l))
            GT_TRY(pr_splat(o, l, F, D, s0, nl, N, m->u, m->nrm, m->area, m->sdepth, ldexp(1.0, 3 * l),
                            m->vf + 3 * s0, *d_tree + s0, m->any + l));
        else
            GT_TRY(gt_cu_memset(m->vf + 3 * s0, 0, 3 * nl * sizeof(double), NULL));
    }
    GT_TRY(gt_cu_memcpy_d2h(any, m->any, sizeof any, NULL));
    /* the extraction tree and the functions in the solve (pr_adapt.h); the
     * tree is kept for the extraction when it has coarse blocks */
    s->coarse_levels = gt_pr_coarse_levels(p, n_sparse, N);
    gt_info("splat: %zu of %zu samples no deeper than depth %d: --coarse-levels %d", n_sparse, N, D - 2,
            s->coarse_levels);
    const int top = gt_pr_coarse_top(p, s->coarse_levels);
    GT_TRY(pr_tree_build(o, h->level_start, D, F, top, gt_pr_tree_virtual(s->coarse_levels), p->dense_solve,
                         *d_tree));
    const uint8_t *fl = *d_tree; /* GT_PR_T_FN */
    if (top < D) {
        if (h->key) {
            s->tree = (uint8_t *)gt_malloc_array(NN + 1, 1, "extraction tree");
            if (!s->tree) return GT_ERR_RUNTIME;
            GT_TRY(gt_cu_memcpy_d2h(s->tree, *d_tree, NN, NULL));
        }
    }
    if (tm) gt_timings_add(tm, "splat (gpu)", gt_timer_stop(&tmr));
    gt_timer_start(&tmr, true, NULL);
    /* 3. divergence: scattered from each source level into its ancestors'
     * neighbourhoods, gathered by the finer targets */
    size_t tcap = 0;
    xtab T;
    memset(&T, 0, sizeof T);
    unsigned srcmask = 0;
    for (int lf = F; lf <= D; lf++) {
        if (!any[lf]) continue;
        srcmask |= 1u << lf;
        size_t s0 = h->level_start[lf], nl = h->level_start[lf + 1] - s0;
        GT_TRY(make_tables(lf, lf, 0, 1, m, &tcap, &T));
        GT_TRY(pr_divergence(o, lf, F, s0, nl, m->vf + 3 * s0, T, m->flag, m->src, m->rhs));
    }
    for (int d = F + 1; d <= D; d++) {
        if (!(srcmask & ((1u << d) - 1u))) continue;
        size_t s0 = h->level_start[d], nl = h->level_start[d + 1] - s0;
        GT_TRY(make_tables(d, d - 1, 1, 0, m, &tcap, &T));
        GT_TRY(pr_div_gather(o, d, F, s0, nl, m->vf, T, srcmask, m->rhs));
    }
    if (tm) gt_timings_add(tm, "divergence (gpu)", gt_timer_stop(&tmr));
    gt_timer_start(&tmr, true, NULL);

    /* 4. cascadic solve */
    /* the screening's weight per sample: below D - 1 the samples' mean
     * area, the same for every sample, each area weighted by the sample's
     * factor sw (below 1 for the samples far sparser than the median:
     * solve.c, screen_area); at D - 1 and D each sample's own area, clamped,
     * over that mean (own). ptval holds the weighted areas until it is
     * filled below */
    double area_sum = 0.0, sw_sum = 0.0;
    {
        uint32_t hist[GT_PR_AREA_BINS];
        GT_TRY(pr_area_histogram(m->area, N, m->hist, hist));
        const double cap = gt_pr_area_cap(hist, N);
        GT_TRY(pr_screen_weights(m->area, N, cap, m->sw, m->ptval));
        GT_TRY(gt_cu_reduce_sum_f64(m->ptval, N, &area_sum, gt_default_arena(), NULL));
        GT_TRY(gt_cu_reduce_sum_f32(m->sw, N, &sw_sum, gt_default_arena(), NULL));
        GT_TRY(pr_screen_own(m->area, N, cap, sw_sum > 0.0 ? area_sum / sw_sum : 0.0, m->own));
    }
    s->alpha = p->point_weight * ldexp(1.0, D) * (sw_sum > 0.0 ? area_sum / sw_sum : 0.0);
    const double tol = p->cg_tol > 0 ? p->cg_tol : (p->solver == GT_PR_SOLVER_CG ? 1e-7 : 0.0);
    GT_TRY(pr_fill(m->ptval, -GT_PR_TARGET, N));
    gt_progress prog;
    if (p->progress) gt_progress_start(&prog, "solve", D + 1 - F);
    for (int d = F; d <= D; d++) {
        size_t s0 = h->level_start[d], n = h->level_start[d + 1] - s0;
        const double alpha = s->alpha * gt_pr_screen_level(d, D); /* per level, as solve.c */
        const float *wl = gt_pr_screen_own_level(d, D) ? m->own : m->sw; /* each sample's weight */
        GT_TRY(pr_level_stencil(d));
        GT_TRY(pr_up(o.parent, m->leaf, D - d, m->lnode, N));
        if (d > F) GT_TRY(make_tables(d, d - 1, 1, 1, m, &tcap, &T));
        gt_timer_start(&sub, true, NULL);
        GT_TRY(pr_rhs(o, d, F, s0, n, m->rhs, m->coef, T, m->b));
        if (alpha > 0)
            GT_TRY(pr_point_scatter(PR_SCATTER_VAL, o, d, m->lnode, m->u, wl, m->ptval, 0, -alpha, m->b, s0, N, n));
        if (tm) gt_timings_add(tm, "solve: right-hand sides", gt_timer_stop(&sub));
        gt_timer_start(&sub, true, NULL);
        double *x = m->coef + s0;
        /* Jacobi-preconditioned CG, as gt_pr_solve_cpu: the diagonal is the
         * stencil's centre plus the screening's sum over the points */
        GT_TRY(gt_cu_memset(m->dinv, 0, n * sizeof(double), NULL));
        if (alpha > 0)
            GT_TRY(pr_point_scatter(PR_SCATTER_SQ, o, d, m->lnode, m->u, wl, NULL, 0, alpha, m->dinv, s0, N, n));
        GT_TRY(pr_jacobi_inv(m->dinv, m->b, fl + s0, gt_pr_stencil_centre(d), n));
        GT_TRY(gt_cu_memcpy_d2d(m->r, m->b, n * sizeof(double), NULL));
        GT_TRY(pr_mul(m->pp, m->dinv, m->b, n));
        double rr, bb, rz;
        GT_TRY(pr_ddot(m->r, m->r, n, m->scal, &rr));
        GT_TRY(pr_ddot(m->r, m->pp, n, m->scal, &rz));
        bb = rr;
        /* gt_pr_solve_cpu's loop, its condition evaluated on the device
         * (pr_cg_state): the level's count queued at once, then four
         * iterations at a time while the residual stop goes on */
        const double stop = gt_pr_level_residual(p, d, F, D);
        pr_cg_state h = {};
        h.rz = rz, h.rr = rr, h.bb = bb, h.ext = stop * stop, h.tol2 = tol * tol;
        h.iters = gt_pr_level_iters(p, d, F, D), h.iters_max = gt_pr_level_iters_max(p, d, F, D);
        h.done = !(h.iters_max > 0 && rz > 0 && (tol == 0 || rr > h.tol2 * bb) && (h.iters > 0 || rr > h.ext * bb));
        if (!h.done) {
            GT_TRY(gt_cu_memcpy_h2d(m->cg, &h, sizeof h, NULL));
            for (int queued = 0; !h.done && queued < h.iters_max;) {
                int k = queued < h.iters ? h.iters - queued : 4;
                if (k > h.iters_max - queued) k = h.iters_max - queued;
                for (int j = 0; j < k; j++) {
                    GT_TRY(pr_stencil(o, s0, n, m->pp, m->ap, &m->cg->done));
                    if (alpha > 0)
                        GT_TRY(pr_point_scatter(PR_SCATTER_PP, o, d, m->lnode, m->u, wl, m->pp, s0, alpha, m->ap,
                                                s0, N, n, &m->cg->done));
                    GT_TRY(pr_cg_tail(m->cg, x, m->r, m->z, m->pp, m->ap, m->dinv, n));
                }
                queued += k;
                GT_TRY(gt_cu_memcpy_d2h(&h, m->cg, sizeof h, NULL));
            }
        }
        const int it = h.it;
        if (it > 0) rr = h.rr;
        if (tm) gt_timings_add(tm, "solve: cg", gt_timer_stop(&sub));
        gt_info("solve: level %d, %zu nodes: %d CG iterations, residual %.3g of the right-hand side's", d, n, it,
                bb > 0 ? sqrt(rr / bb) : 0.0);
        GT_TRY(pr_ptval_add(o, d, m->lnode, m->u, m->coef, m->ptval, N));
        if (p->progress) gt_progress_update(&prog, d + 1 - F, NULL);
    }
    if (p->progress) gt_progress_end(&prog);
    s->coef_lmin = F;
    GT_TRY(gt_pr_dev_iso(&o, h->level_start, F, D, m->u, m->sw, m->coef, &s->iso));
    if (tm) gt_timings_add(tm, "solve (gpu)", gt_timer_stop(&tmr));
    /* the solution stays on the device for the extraction; host copies of
     * what the host-side stages read when the host octree was downloaded */
    if (h->key) {
        s->coef = (double *)gt_malloc_array(NN, sizeof(double), "coefficients");
        s->wdens = (double *)gt_malloc_array(NN, sizeof(double), "density");
        s->area = (float *)gt_malloc_array(N, sizeof(float), "areas");
        s->sw = (float *)gt_malloc_array(N, sizeof(float), "screening weights");
        if (!s->coef || !s->wdens || !s->area || !s->sw) return GT_ERR_RUNTIME;
        GT_TRY(gt_cu_memcpy_d2h(s->coef, m->coef, NN * sizeof(double), NULL));
        GT_TRY(gt_cu_memcpy_d2h(s->wdens, m->wdens, NN * sizeof(double), NULL));
        GT_TRY(gt_cu_memcpy_d2h(s->area, m->area, N * sizeof(float), NULL));
        GT_TRY(gt_cu_memcpy_d2h(s->sw, m->sw, N * sizeof(float), NULL));
    }
    *d_coef = m->coef;
    m->coef = NULL;
    if (top >= D) { /* no coarse blocks: the tree was for the solve only */
        gt_cu_free(*d_tree);
        *d_tree = NULL;
    }
    return GT_OK;
}

gt_status gt_pr_dev_solve(const gt_pr_dev_octree *d, const float *d_u_unsorted, const float *d_n_unsorted,
                          gt_pr_state *s, const gt_pr_params *p, gt_timings *tm, double **d_coef, uint8_t **d_tree)
{
    bufs_t m;
    memset(&m, 0, sizeof m);
    *d_coef = NULL;
    *d_tree = NULL;
    gt_status st = solve(d, d_u_unsorted, d_n_unsorted, s, p, tm, &m, d_coef, d_tree);
    free_bufs(&m);
    return st;
}
