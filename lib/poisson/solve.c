/* Basis, adaptive splatting, divergence and the cascadic screened-Poisson
 * solve on the octree, CPU reference. Each sample's normal goes to the levels
 * around its splat depth (gt_pr_sample_depth: PoissonRecon's, from the
 * sampling density at levels F..D-2), so the field V has functions of every
 * level from F to D.
 *
 * chi(q) = sum over all nodes o of x_o F_o(q), F_o the tensor product of
 * centred quadratic B-splines of the node's level. The energy
 *   E(chi) = int |grad chi - V|^2 + alpha' A sum_p chi(p)^2,  alpha' = alpha 2^D
 * (screening as in Kazhdan & Hoppe 2013, scaled so both terms weigh alike at
 * depth D; A the samples' mean area, the same weight for every point as in
 * PoissonRecon: screen_area, but for strays, gt_pr_screen_weight; at the
 * levels below D - 1 the weight halves with each level,
 * gt_pr_screen_level; at D - 1 and D each sample's own area, clamped,
 * instead of A, gt_pr_screen_own) is minimised coarse to fine from the
 * full depth F (the first complete level, PoissonRecon's base depth; the
 * coarser levels' functions reach far past the cube and are left out, at
 * 0): at level d the coarser levels are fixed and their contribution moves
 * to the right-hand side; the level's system (125-point Laplacian stencil
 * + point screening) is solved by CG, over the functions the samples reach
 * (GT_PR_T_FN, set with the extraction tree: gt_pr_fn_active); the others
 * stay 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/progress.h"
#include "gt_config.h"
#include "poisson/poisson.h"
#include "poisson/pr_adapt.h"
#include "poisson/pr_bspline.h"
#include "poisson/solve_internal.h"
#if GT_HAVE_CUDA
#include "kernels/poisson/pr_gpu.h"
#endif

/* A sample's area is w^2 / W(p) times the mean over positions of
 * sum_k B(t-k)^2 = int B^2 = 11/20, the factor by which the B-spline density
 * estimate W of a flat, uniformly sampled surface exceeds samples per w^2;
 * with it the indicator's jump across the surface is 1. */
#define KAPPA GT_PR_KAPPA
/* Screening target: with the basis decaying away from the data chi tends to
 * 0 far outside and to -1 inside, so the samples are pulled to -1/2. */
#define TARGET GT_PR_TARGET

static inline void node_xyz(const gt_pr_octree *o, size_t v, int64_t c[3])
{
    gt_pr_cell_of(o->key[v], c);
}
void gt_pr_state_free(gt_pr_state *s)
{
    gt_pr_octree_free(&s->oct);
    free(s->u); free(s->n); free(s->area); free(s->sw); free(s->wdens); free(s->coef); free(s->rhs);
    free(s->rgb); free(s->cdens); free(s->tree);
#if GT_HAVE_CUDA
    gt_pr_dev_state_free(s->dev);
#endif
    memset(s, 0, sizeof *s);
}

/* Node of `level` containing sorted point p: walk up from its depth-D leaf. */
static int32_t *leaf_of_points(const gt_pr_octree *o)
{
    int32_t *leaf = gt_malloc_array(o->npts, sizeof *leaf, "point leaves");
    if (!leaf) return NULL;
    for (size_t v = o->level_start[o->depth]; v < o->level_start[o->depth + 1]; v++)
        for (uint32_t k = 0; k < o->pt_count[v]; k++) leaf[o->pt_start[v] + k] = (int32_t)v;
    return leaf;
}
/* w[27 k + j]: the level's function of neighbour j of point k's node at
 * the point (0 where there is no such node; gt_pr_eval_node's terms), kept
 * for the level's right-hand side and CG iterations */
static void point_weights(const gt_pr_octree *o, int level, const int32_t *lnode, const float *u, size_t N,
                          double *w)
{
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < N; k++)
        for (int j = 0; j < 27; j++) {
            const int32_t nb = o->nbr[27 * (size_t)lnode[k] + j];
            double f = 0.0;
            if (nb >= 0) {
                int64_t c[3];
                node_xyz(o, (size_t)nb, c);
                f = gt_pr_basis(level, c, u + 3 * k);
            }
            w[27 * k + j] = f;
        }
}
/* sum over the points in the 27 neighbour cells of node v of F_v(p) pv(p)
 * sw(p) (NULL: 1), F_v(p) from the kept values w: a point in v's neighbour
 * cell i sees v as its node's neighbour 26 - i; square: F_v(p)^2 instead of
 * F_v(p) (the screening's diagonal) */
static double gather_points_w(const gt_pr_octree *o, size_t v, const double *w, const double *pv, const float *sw,
                              bool square)
{
    double s = 0.0;
    for (int i = 0; i < 27; i++) {
        int32_t nb = o->nbr[27 * v + i];
        if (nb < 0) continue;
        uint32_t st = o->pt_start[nb], cn = o->pt_count[nb];
        for (uint32_t k = st; k < st + cn; k++) {
            double f = w[27 * (size_t)k + 26 - i];
            if (f == 0.0) continue;
            s += f * (square ? f : 1.0) * (pv ? pv[k] : 1.0) * (sw ? (double)sw[k] : 1.0);
        }
    }
    return s;
}
/* The screening's weight per sample below level D - 1, the same for every
 * sample: the mean of their areas (PoissonRecon: pointWeight times the mean
 * sample weight), each weighted by the sample's own factor sw
 * (gt_pr_screen_weight, set here: below 1 for a sample far sparser than the
 * median, a stray; pr_bspline.h says why), as it screens. At levels D - 1
 * and D each sample's own area, clamped, over that mean (own:
 * gt_pr_screen_own).
 * Each sample's own area at every level let an isolated point, whose area
 * is that of a coarse node, pin chi to the iso-value around it: 2,000
 * outliers about a sphere of 100,000 points grew 330 closed blobs. */
static double screen_area(const float *area, size_t n, float *sw, float *own)
{
    uint32_t hist[GT_PR_AREA_BINS] = {0};
    for (size_t k = 0; k < n; k++) hist[gt_pr_area_bin(area[k])]++;
    const double cap = gt_pr_area_cap(hist, n);
    double s = 0.0, w = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s, w)
    for (size_t k = 0; k < n; k++) {
        sw[k] = gt_pr_screen_weight(area[k], cap);
        s += gt_pr_screen_area(area[k], cap);
        w += (double)sw[k];
    }
    const double mean = w > 0.0 ? s / w : 0.0;
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < n; k++) own[k] = gt_pr_screen_own(area[k], cap, mean);
    return mean;
}
/* gt_pr_eval_node at point k (node: its level-d node) from the kept values */
static double eval_point_w(const gt_pr_octree *o, int32_t node, const double *wk, const double *x)
{
    double s = 0.0;
    for (int j = 0; j < 27; j++) {
        int32_t nb = o->nbr[27 * (size_t)node + j];
        if (nb < 0) continue;
        s += x[nb] * wk[j];
    }
    return s;
}

/* a.b summed in blocks of DOT_BLOCK in parallel, the blocks' sums added in
 * order: the same value whatever the number of threads */
#define DOT_BLOCK 4096
static double dot_blocked(const double *a, const double *b, size_t n, double *part)
{
    const long nb = (long)((n + DOT_BLOCK - 1) / DOT_BLOCK);
#pragma omp parallel for schedule(static)
    for (long k = 0; k < nb; k++) {
        const size_t q1 = (size_t)(k + 1) * DOT_BLOCK < n ? (size_t)(k + 1) * DOT_BLOCK : n;
        double acc = 0.0;
        for (size_t q = (size_t)k * DOT_BLOCK; q < q1; q++) acc += a[q] * b[q];
        part[k] = acc;
    }
    double sum = 0.0;
    for (long k = 0; k < nb; k++) sum += part[k];
    return sum;
}

gt_status gt_pr_colors_cpu(gt_pr_state *s)
{
    const gt_pr_octree *o = &s->oct;
    const size_t NN = o->nnodes;
    const int Dw = s->density_depth;
    free(s->cdens);
    s->cdens = gt_calloc(3 * NN, sizeof *s->cdens, "colours");
    if (!s->cdens) return GT_ERR_RUNTIME;
    for (size_t v = o->level_start[Dw]; v < o->level_start[Dw + 1]; v++) {
        int64_t c[3];
        node_xyz(o, v, c);
        for (int i = 0; i < 27; i++) {
            int32_t nb = o->nbr[27 * v + i];
            if (nb < 0) continue;
            for (uint32_t k = o->pt_start[nb]; k < o->pt_start[nb] + o->pt_count[nb]; k++) {
                double f = gt_pr_basis(Dw, c, s->u + 3 * (size_t)k);
                for (int a = 0; a < 3; a++) s->cdens[a * NN + v] += f * s->rgb[3 * (size_t)k + a];
            }
        }
    }
    return GT_OK;
}

/* The extraction tree's flags (pr_adapt.h) of every node, from the data
 * bits the splat left in t (gt_pr_splat_node): leaves from the full depth F down,
 * nodes with children above level T (gt_pr_coarse_top) subdivided, virt
 * as gt_pr_tree_sub says; and the functions in the solve (GT_PR_T_FN:
 * every one up to level F, and with dense; else gt_pr_fn_active). The
 * CUDA path runs the same steps per level (pr_divergence.cu). */
static void tree_build(const gt_pr_octree *o, int F, int T, int virt, bool dense, uint8_t *t)
{
    const int D = o->depth;
    /* 1. data and subdivision, finest level first */
    for (int l = D; l >= 0; l--) {
        const long v0 = (long)o->level_start[l], v1 = (long)o->level_start[l + 1];
#pragma omp parallel for schedule(static)
        for (long v = v0; v < v1; v++) {
            uint8_t f = gt_pr_tree_data(o->child, t, (size_t)v);
            if (l < D) f |= gt_pr_tree_sub(o->child, o->nbr, t, (size_t)v, l, T, virt);
            t[v] = f;
        }
    }
    /* 2. balance by subdividing the parent's neighbours, finest level first
     * (serial: neighbours are shared) */
    for (int l = D - 1; l > F; l--)
        for (size_t v = o->level_start[l]; v < o->level_start[l + 1]; v++) {
            if (!(t[v] & GT_PR_T_SUB)) continue;
            const int32_t par = o->parent[v];
            t[par] |= GT_PR_T_SUB;
            for (int i = 0; i < 27; i++) {
                const int32_t q = o->nbr[27 * (size_t)par + i];
                if (q >= 0 && o->child[q] >= 0) t[q] |= GT_PR_T_SUB;
            }
        }
    /* 3. balance where subdividing could not give it, coarsest level first */
    for (int l = F + 1; l < D; l++) {
        const long v0 = (long)o->level_start[l], v1 = (long)o->level_start[l + 1];
#pragma omp parallel for schedule(static)
        for (long v = v0; v < v1; v++) {
            if (!(t[v] & GT_PR_T_SUB)) continue;
            const int32_t par = o->parent[v];
            if (!gt_pr_tree_keep(o->nbr, t, par, o->key[par], l - 1, virt)) t[v] &= (uint8_t)~GT_PR_T_SUB;
        }
    }
    /* 4. the leaves above level D: the coarse blocks */
    for (int l = F; l < D; l++) {
        const long v0 = (long)o->level_start[l], v1 = (long)o->level_start[l + 1];
#pragma omp parallel for schedule(static)
        for (long v = v0; v < v1; v++)
            if (!(t[v] & GT_PR_T_SUB) && (l == F || (t[o->parent[v]] & GT_PR_T_SUB))) t[v] |= GT_PR_T_LEAF;
    }
    /* 5. the functions in the solve (data bits of step 1) */
    for (int l = 0; l <= D; l++) {
        const long v0 = (long)o->level_start[l], v1 = (long)o->level_start[l + 1];
#pragma omp parallel for schedule(static)
        for (long v = v0; v < v1; v++)
            if (l <= F || dense || gt_pr_fn_active(o->parent, o->child, o->nbr, o->key, t, (size_t)v)) t[v] |= GT_PR_T_FN;
    }
}

gt_status gt_pr_solve_cpu(gt_pr_state *s, const gt_pr_params *p, gt_timings *tm)
{
    gt_pr_octree *o = &s->oct;
    const int D = o->depth, F = gt_pr_full_depth(p);
    const size_t N = o->npts, NN = o->nnodes;
    gt_status st = GT_OK;
    double t0 = gt_now_ms();
    int32_t *leaf = leaf_of_points(o);
    double *ptval = gt_malloc_array(N, sizeof *ptval, "point values"); /* chi - TARGET */
    double *uval = gt_malloc_array(N, sizeof *uval, "point values");
    int32_t *lnode = gt_malloc_array(N, sizeof *lnode, "point nodes");
    s->coef = gt_calloc(NN, sizeof *s->coef, "coefficients");
    s->rhs = gt_calloc(NN, sizeof *s->rhs, "rhs");
    s->wdens = gt_calloc(NN, sizeof *s->wdens, "density");
    s->area = gt_malloc_array(N, sizeof *s->area, "areas");
    s->sw = gt_malloc_array(N, sizeof *s->sw, "screening weights");
    double *vf = gt_calloc(3 * NN, sizeof *vf, "vector field"); /* every node's splatted normal */
    float *sdepth = gt_malloc_array(N, sizeof *sdepth, "splat depths");
    bool has_src[GT_PR_MAX_DEPTH + 1] = {false};
    size_t nmax = 0;
    for (int l = 0; l <= D; l++)
        if (o->level_start[l + 1] - o->level_start[l] > nmax) nmax = o->level_start[l + 1] - o->level_start[l];
    double *r = gt_malloc_array(nmax, sizeof *r, "cg"), *pp = gt_malloc_array(nmax, sizeof *pp, "cg");
    double *ap = gt_malloc_array(nmax, sizeof *ap, "cg"), *b = gt_malloc_array(nmax, sizeof *b, "cg");
    double *z = gt_malloc_array(nmax, sizeof *z, "cg"), *dinv = gt_malloc_array(nmax, sizeof *dinv, "cg");
    double *part = gt_malloc_array(nmax / DOT_BLOCK + 1, sizeof *part, "cg");
    double *pw = gt_malloc_array(N, 27 * sizeof *pw, "point weights");
    float *own = gt_malloc_array(N ? N : 1, sizeof *own, "own screening weights"); /* gt_pr_screen_own */
    /* the tree's flags (while not kept in s->tree): the splat's data bits,
     * then tree_build's */
    uint8_t *fl = gt_calloc(NN ? NN : 1, 1, "extraction tree");
    if (!leaf || !ptval || !uval || !lnode || !s->coef || !s->rhs || !s->wdens || !s->area || !s->sw || !vf || !sdepth || !r ||
        !pp || !ap || !b || !z || !dinv || !part || !pw || !own || !fl) {
        st = GT_ERR_RUNTIME;
        goto done;
    }

    for (size_t k = 0; k < N; k++) ptval[k] = -TARGET;
    /* 1. sampling density at levels dlo..Dw, each sample's splat depth
     * (PoissonRecon's: where a node holds samples_per_node samples) and area */
    const int Dw = D >= 2 ? D - 2 : 0, dlo = Dw < F ? Dw : F;
    s->density_depth = Dw;
    for (int l = dlo; l <= Dw; l++) {
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < N; k++) lnode[k] = gt_pr_up(o, leaf[k], D - l);
        point_weights(o, l, lnode, s->u, N, pw);
        const long v0 = (long)o->level_start[l], v1 = (long)o->level_start[l + 1];
#pragma omp parallel for schedule(dynamic, 1024)
        for (long v = v0; v < v1; v++) s->wdens[v] = gather_points_w(o, (size_t)v, pw, NULL, NULL, false);
    }
    if (s->rgb && (st = gt_pr_colors_cpu(s)) != GT_OK) goto done;
    size_t n_sparse = 0; /* samples that splat no deeper than D - 2 (gt_pr_coarse_levels) */
    {
        double spn = p->samples_per_node > 0 ? p->samples_per_node : 1e-9;
#pragma omp parallel for schedule(static) reduction(+ : n_sparse)
        for (size_t k = 0; k < N; k++) {
            int32_t nd = gt_pr_up(o, leaf[k], D - Dw);
            double dep = gt_pr_sample_depth(o->key, o->nbr, o->parent, nd, Dw, F, s->u + 3 * k, s->wdens, KAPPA * spn);
            sdepth[k] = (float)dep;
            n_sparse += (double)sdepth[k] <= (double)(D - 2);
            s->area[k] = gt_pr_sample_area(dep, spn);
        }
    }
    /* 2. splat the normals into the functions of levels F..D, each sample
     * at the two levels around its depth */
    for (int l = F; l <= D; l++) {
        const double inv_w3 = ldexp(1.0, 3 * l);
        const long v0 = (long)o->level_start[l], v1 = (long)o->level_start[l + 1];
        int any = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(| : any)
        for (long v = v0; v < v1; v++) {
            double acc[3];
            fl[v] = gt_pr_splat_node(o->key, o->nbr, o->pt_start, o->pt_count, l, F, D, (size_t)v, s->u, s->n, s->area,
                                     sdepth, acc)
                        ? GT_PR_T_DATA
                        : 0;
            for (int a = 0; a < 3; a++) vf[3 * v + a] = acc[a] * inv_w3;
            if (acc[0] != 0 || acc[1] != 0 || acc[2] != 0) any = 1;
        }
        has_src[l] = any != 0;
    }
    /* the extraction tree and the functions in the solve (pr_adapt.h);
     * the tree is kept for the extraction when it has coarse blocks */
    s->coarse_levels = gt_pr_coarse_levels(p, n_sparse, N);
    gt_info("splat: %zu of %zu samples no deeper than depth %d: --coarse-levels %d", n_sparse, N, D - 2,
            s->coarse_levels);
    const int T = gt_pr_coarse_top(p, s->coarse_levels);
    tree_build(o, F, T, gt_pr_tree_virtual(s->coarse_levels), p->dense_solve, fl);
    if (T < D) {
        s->tree = fl;
        fl = NULL;
    }
    const uint8_t *fn = s->tree ? s->tree : fl; /* GT_PR_T_FN */
    if (tm) gt_timings_add(tm, "splat", gt_now_ms() - t0);
    t0 = gt_now_ms();
    /* 3. divergence (divergence.c) */
    st = gt_pr_divergence_cpu(o, F, vf, has_src, s->rhs);
    if (st != GT_OK) goto done;
    if (tm) gt_timings_add(tm, "divergence", gt_now_ms() - t0);

    /* 4. cascadic solve */
    t0 = gt_now_ms();
    s->coef_lmin = F;
    s->alpha = p->point_weight * ldexp(1.0, D) * screen_area(s->area, N, s->sw, own);
    double tol = p->cg_tol > 0 ? p->cg_tol : (p->solver == GT_PR_SOLVER_CG ? 1e-7 : 0.0);
    gt_progress prog;
    if (p->progress) gt_progress_start(&prog, "solve", D + 1 - F);
    for (int d = F; d <= D; d++) {
        size_t s0 = o->level_start[d], n = o->level_start[d + 1] - s0;
        /* the screening weight halves per level below D - 1 (poisson.h says
         * why; an earlier try of 2^d per level, each sample weighted by its
         * own area, let unevenly sampled surfaces leak to the cube's
         * boundary) */
        const double alpha = s->alpha * gt_pr_screen_level(d, D);
        const float *wl = gt_pr_screen_own_level(d, D) ? own : s->sw; /* each sample's weight */
        double stencil[125];
        gt_pr_stencil125(d, stencil);
        double *cM[GT_PR_MAX_DEPTH + 1] = {0}, *cG[GT_PR_MAX_DEPTH + 1] = {0};
        for (int dc = F; dc < d; dc++) {
            cM[dc] = gt_pr_cross_table(d, dc, 0, 0);
            cG[dc] = gt_pr_cross_table(d, dc, 1, 1);
            if (!cM[dc] || !cG[dc]) st = GT_ERR_RUNTIME;
        }
        if (st != GT_OK) {
            for (int dc = F; dc < d; dc++) { free(cM[dc]); free(cG[dc]); }
            goto done;
        }
        /* the points' level-d nodes and their functions' values there */
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < N; k++) lnode[k] = gt_pr_up(o, leaf[k], D - d);
        point_weights(o, d, lnode, s->u, N, pw);
        /* right-hand side: divergence - coarser Laplacian - coarser screening */
#pragma omp parallel for schedule(dynamic, 1024)
        for (size_t q = 0; q < n; q++) {
            size_t v = s0 + q;
            if (!(fn[v] & GT_PR_T_FN)) { /* not in the solve */
                b[q] = 0.0;
                continue;
            }
            double acc = s->rhs[v];
            int64_t cv[3];
            node_xyz(o, v, cv);
            int32_t anc = o->parent[v];
            for (int dc = d - 1; dc >= F; dc--, anc = o->parent[anc]) {
                double M[3][5], G[3][5];
                gt_pr_anc_rows(o, cM[dc], cG[dc], cv, anc, d - dc, M, G);
                const unsigned m3 = gt_pr_rows_mask3(M, G);
                for (int i = 0; i < 125; i++) {
                    if (!gt_pr_mask_has(m3, i)) continue;
                    int32_t t = gt_pr_nbr125(o, anc, i);
                    if (t >= 0) acc -= gt_pr_lap_term(M, G, i) * s->coef[t];
                }
                if (dc == F) break;
            }
            if (alpha > 0) acc -= alpha * gather_points_w(o, v, pw, ptval, wl, false);
            b[q] = acc;
        }
        for (int dc = F; dc < d; dc++) { free(cM[dc]); free(cG[dc]); }
        /* CG on (L_d + S_d) x = b, x0 = 0; the level's 125-neighbour table is
         * gathered once */
        int32_t *n125 = gt_malloc_array(n, 125 * sizeof(int32_t), "level neighbours");
        if (!n125) { st = GT_ERR_RUNTIME; goto done; }
#pragma omp parallel for schedule(static)
        for (size_t q = 0; q < n; q++)
            for (int i = 0; i < 125; i++) {
                int32_t t = gt_pr_nbr125(o, (int32_t)(s0 + q), i);
                n125[125 * q + i] = t >= 0 ? t - (int32_t)s0 : -1;
            }
        double *x = s->coef + s0;
        /* Jacobi preconditioner: the stencil's centre plus the screening's
         * diagonal, which is large where the points are and zero away from
         * them (unpreconditioned, the finest level's CG left the surface
         * unconverged by 0.1 cell in the bunny's open base) */
#pragma omp parallel for schedule(static)
        for (size_t q = 0; q < n; q++)
            dinv[q] = !(fn[s0 + q] & GT_PR_T_FN) ? 0.0
                      : 1.0 / (stencil[62] + (alpha > 0 ? alpha * gather_points_w(o, s0 + q, pw, NULL, wl, true) : 0.0));
        memcpy(r, b, n * sizeof *r);
#pragma omp parallel for schedule(static)
        for (size_t q = 0; q < n; q++) pp[q] = dinv[q] * b[q];
        double rr = dot_blocked(r, r, n, part), bb = rr;
        double rz = dot_blocked(r, pp, n, part);
        int it = 0;
        const int iters = gt_pr_level_iters(p, d, F, D), iters_max = gt_pr_level_iters_max(p, d, F, D);
        const double stop = gt_pr_level_residual(p, d, F, D), ext = stop * stop;
        for (; it < iters_max && rz > 0 && (tol == 0 || rr > tol * tol * bb) && (it < iters || rr > ext * bb); it++) {
            /* ap = L pp + S pp */
            if (alpha > 0) {
#pragma omp parallel for schedule(static)
                for (size_t k = 0; k < N; k++) uval[k] = eval_point_w(o, lnode[k], pw + 27 * k, pp - s0);
            }
#pragma omp parallel for schedule(dynamic, 1024)
            for (size_t q = 0; q < n; q++) {
                size_t v = s0 + q;
                double acc = 0;
                if (!(fn[v] & GT_PR_T_FN)) { /* its row left out: r, z, pp and x stay 0 there */
                    ap[q] = 0.0;
                    continue;
                }
                const int32_t *nq = n125 + 125 * q;
                for (int i = 0; i < 125; i++)
                    if (nq[i] >= 0) acc += stencil[i] * pp[nq[i]];
                if (alpha > 0) acc += alpha * gather_points_w(o, v, pw, uval, wl, false);
                ap[q] = acc;
            }
            const double pap = dot_blocked(pp, ap, n, part);
            if (!(pap > 0)) break;
            const double al = rz / pap;
#pragma omp parallel for schedule(static)
            for (size_t q = 0; q < n; q++) {
                x[q] += al * pp[q];
                r[q] -= al * ap[q];
                z[q] = dinv[q] * r[q];
            }
            if (tol > 0 || it + 1 >= iters) rr = dot_blocked(r, r, n, part);
            const double rz2 = dot_blocked(r, z, n, part), be = rz2 / rz;
            rz = rz2;
#pragma omp parallel for schedule(static)
            for (size_t q = 0; q < n; q++) pp[q] = z[q] + be * pp[q];
        }
        free(n125);
        if (tol == 0 && it > 0 && it < iters) rr = dot_blocked(r, r, n, part);
        gt_info("solve: level %d, %zu nodes: %d CG iterations, residual %.3g of the right-hand side's", d, n, it,
                bb > 0 ? sqrt(rr / bb) : 0.0);
        /* the level's contribution at the samples */
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < N; k++) ptval[k] += eval_point_w(o, lnode[k], pw + 27 * k, s->coef);
        if (p->progress) gt_progress_update(&prog, d + 1 - F, NULL);
    }
    if (p->progress) gt_progress_end(&prog);
    if ((st = gt_pr_iso_cpu(s)) != GT_OK) goto done;
    if (tm) gt_timings_add(tm, "solve", gt_now_ms() - t0);
done:
    free(leaf); free(ptval); free(uval); free(lnode); free(vf); free(sdepth); free(r); free(pp); free(ap); free(b);
    free(fl);
    free(z); free(dinv); free(part);
    free(pw);
    free(own);
    return st;
}

double gt_pr_eval(const gt_pr_state *s, const double q[3])
{
    return gt_pr_eval_levels(&s->oct, q, s->coef, s->coef_lmin, s->oct.depth);
}
