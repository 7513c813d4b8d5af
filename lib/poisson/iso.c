/* The iso-value on the CPU: the weighted average of chi at the points (each
 * point's sw, 1 but for strays), summed per
 * depth-D leaf (pr_iso.h, which says why not at the leaves' means as
 * PoissonRecon does); the CUDA path computes the same
 * (kernels/poisson/pr_iso.cu). */
#include <stdlib.h>

#include "common/alloc.h"
#include "poisson/poisson.h"
#include "poisson/pr_iso.h"

gt_status gt_pr_iso_cpu(gt_pr_state *s)
{
    const gt_pr_octree *o = &s->oct;
    const int D = o->depth;
    const size_t s0 = o->level_start[D], n = o->level_start[D + 1] - s0;
    double *val = gt_malloc_array(n ? n : 1, 2 * sizeof *val, "iso samples"); /* per leaf: sum, weight */
    if (!val) return GT_ERR_RUNTIME;
#pragma omp parallel for schedule(dynamic, 256)
    for (long i = 0; i < (long)n; i++) {
        size_t v = s0 + (size_t)i;
        val[2 * i] = val[2 * i + 1] = 0;
        if (!o->pt_count[v]) continue;
        val[2 * i] = gt_pr_leaf_chi_sum(o->key, o->child, o->nbr, o->level_start, s->coef_lmin, D, s->coef, s->u, s->sw,
                                        o->pt_start[v], o->pt_count[v], &val[2 * i + 1]);
    }
    double sum = 0, w = 0;
    for (size_t i = 0; i < n; i++) {
        sum += val[2 * i];
        w += val[2 * i + 1];
    }
    free(val);
    s->iso = w > 0 ? sum / w : 0.0;
    return GT_OK;
}
