/* Shared by the files of the CPU solve (solve.c: the driver, density and
 * splat, the cascadic CG; divergence.c: the right-hand side; basis.c: the
 * integral tables). */
#ifndef GT_POISSON_SOLVE_INTERNAL_H
#define GT_POISSON_SOLVE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "poisson/poisson.h"
#include "poisson/pr_bspline.h"

/* The ancestor of node v `levels` levels up. */
static inline int32_t gt_pr_up(const gt_pr_octree *o, int32_t v, int levels)
{
    while (levels-- > 0) v = o->parent[v];
    return v;
}

/* The integral tables' rows between a node of cell c and the functions
 * around its ancestor anc, `shift` levels up. */
static inline void gt_pr_anc_rows(const gt_pr_octree *o, const double *tM, const double *tG, const int64_t c[3],
                                  int32_t anc, int shift, double M[3][5], double G[3][5])
{
    int64_t ca[3];
    gt_pr_cell_of(o->key[anc], ca);
    gt_pr_cross_rows(tM, tG, c, ca, shift, M, G);
}

/* gt_pr_cross_fill's table in a new array (the caller frees it); NULL
 * when out of memory (message set). */
double *gt_pr_cross_table(int df, int dg, int a, int b);

/* rhs[t] += the divergence at every node t of levels F..D from vf (3
 * doubles a node: its splatted normal); has_src[l]: whether level l has any
 * nonzero vector. */
gt_status gt_pr_divergence_cpu(const gt_pr_octree *o, int F, const double *vf, const bool *has_src, double *rhs);

#endif
