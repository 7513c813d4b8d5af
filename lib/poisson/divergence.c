/* The divergence of the splatted normal field, CPU reference (the
 * right-hand side of the cascadic solve, solve.c; the GPU's is
 * kernels/poisson/pr_divergence.cu): b_t = sum over the nodes f with a
 * splatted vector v_f of v_f . int F_f grad F_t, for every node t of levels
 * F..D, the integrals from the tables of basis.c. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "poisson/poisson.h"
#include "poisson/pr_bspline.h"
#include "poisson/solve_internal.h"

/* The divergence's scatter from the sources of level lf into the
 * 125-neighbourhoods of their ancestors at level d (<= lf), in parallel and
 * in an order that does not depend on the thread count: the sources come in
 * runs sharing an ancestor (key order), the runs are coloured by their
 * ancestor's cell mod 5 on each axis, and the colours go one after the
 * other; two ancestors of one colour are at least 5 cells apart on some
 * axis, so their neighbourhoods (+-2) are disjoint and no target is written
 * by two threads, and each target gets its terms colour by colour, run by
 * run, in key order. */
static gt_status scatter_level(const gt_pr_octree *o, int lf, int d, const double *vf, const double *tM,
                               const double *tG, double *rhs)
{
    const size_t v0 = o->level_start[lf], n = o->level_start[lf + 1] - v0;
    size_t *run = gt_malloc_array(n + 1, sizeof *run, "divergence runs");       /* first source of each run */
    size_t *order = gt_malloc_array(n + 1, sizeof *order, "divergence runs");   /* runs by colour */
    uint8_t *col = gt_malloc_array(n + 1, 1, "divergence runs");
    if (!run || !order || !col) {
        free(run); free(order); free(col);
        return GT_ERR_RUNTIME;
    }
    size_t nr = 0, cstart[126] = {0};
    int32_t prev = -1;
    for (size_t q = 0; q < n; q++) {
        const int32_t a = gt_pr_up(o, (int32_t)(v0 + q), lf - d);
        if (a == prev) continue;
        int64_t c[3];
        gt_pr_cell_of(o->key[a], c);
        run[nr] = q;
        col[nr] = (uint8_t)(c[0] % 5 + 5 * (c[1] % 5) + 25 * (c[2] % 5));
        cstart[col[nr] + 1]++;
        nr++;
        prev = a;
    }
    run[nr] = n;
    for (int c = 0; c < 125; c++) cstart[c + 1] += cstart[c];
    {
        size_t fill[125];
        memcpy(fill, cstart, sizeof fill);
        for (size_t r = 0; r < nr; r++) order[fill[col[r]]++] = r;
    }
    for (int c = 0; c < 125; c++) {
        const long r0 = (long)cstart[c], r1 = (long)cstart[c + 1];
#pragma omp parallel for schedule(dynamic, 16)
        for (long k = r0; k < r1; k++) {
            const size_t r = order[k];
            const int32_t anc = gt_pr_up(o, (int32_t)(v0 + run[r]), lf - d);
            for (size_t q = run[r]; q < run[r + 1]; q++) {
                const double *vv = vf + 3 * (v0 + q);
                if (vv[0] == 0 && vv[1] == 0 && vv[2] == 0) continue;
                int64_t cf[3];
                gt_pr_cell_of(o->key[v0 + q], cf);
                double M[3][5], G[3][5];
                gt_pr_anc_rows(o, tM, tG, cf, anc, lf - d, M, G);
                const unsigned m3 = gt_pr_rows_mask3(M, G);
                for (int i = 0; i < 125; i++) {
                    if (!gt_pr_mask_has(m3, i)) continue; /* every term exactly zero */
                    const int32_t t = gt_pr_nbr125(o, anc, i);
                    if (t >= 0) rhs[t] += gt_pr_div_term(vv, M, G, i);
                }
            }
        }
    }
    free(run);
    free(order);
    free(col);
    return GT_OK;
}

gt_status gt_pr_divergence_cpu(const gt_pr_octree *o, int F, const double *vf, const bool *has_src, double *rhs)
{
    const int D = o->depth;
    gt_status st = GT_OK;
    /* b_t = sum_f v_f . int F_f grad F_t over the nodes f
     * with a splatted vector, (a) scattered from every such f (level lf)
     * into the 125-neighbourhoods of its ancestors at levels F..lf
     * (scatter_level), (b) for the finer t (level d > lf), gathered by t
     * from the 125-neighbourhoods of its own ancestors */
    for (int lf = F; st == GT_OK && lf <= D; lf++) {
        if (!has_src[lf]) continue;
        for (int d = lf; st == GT_OK && d >= F; d--) {
            double *tM = gt_pr_cross_table(lf, d, 0, 0), *tG = gt_pr_cross_table(lf, d, 0, 1);
            st = tM && tG ? scatter_level(o, lf, d, vf, tM, tG, rhs) : GT_ERR_RUNTIME;
            free(tM);
            free(tG);
        }
    }
    for (int d = F + 1; st == GT_OK && d <= D; d++) {
        double *tabM[GT_PR_MAX_DEPTH + 1] = {0}, *tabG[GT_PR_MAX_DEPTH + 1] = {0};
        for (int lf = F; lf < d; lf++) {
            tabM[lf] = gt_pr_cross_table(d, lf, 0, 0);
            tabG[lf] = gt_pr_cross_table(d, lf, 1, 0);
            if (!tabM[lf] || !tabG[lf]) st = GT_ERR_RUNTIME;
        }
        const long v0 = (long)o->level_start[d], v1 = st == GT_OK ? (long)o->level_start[d + 1] : v0;
#pragma omp parallel for schedule(dynamic, 1024)
        for (long v = v0; v < v1; v++) {
            int64_t co[3];
            gt_pr_cell_of(o->key[v], co);
            double acc = 0.0;
            int32_t anc = (int32_t)v;
            for (int lf = d - 1; lf >= F; lf--) {
                anc = o->parent[anc];
                if (!has_src[lf]) continue;
                double M[3][5], G[3][5];
                gt_pr_anc_rows(o, tabM[lf], tabG[lf], co, anc, d - lf, M, G);
                const unsigned m3 = gt_pr_rows_mask3(M, G);
                for (int i = 0; i < 125; i++) {
                    if (!gt_pr_mask_has(m3, i)) continue;
                    int32_t f = gt_pr_nbr125(o, anc, i);
                    if (f < 0) continue;
                    const double *vv = vf + 3 * (size_t)f;
                    if (vv[0] == 0 && vv[1] == 0 && vv[2] == 0) continue;
                    acc += gt_pr_div_term(vv, M, G, i);
                }
            }
            rhs[v] += acc;
        }
        for (int lf = F; lf < d; lf++) { free(tabM[lf]); free(tabG[lf]); }
    }
    return st;
}
