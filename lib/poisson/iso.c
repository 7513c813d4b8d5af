/* The iso-value on the CPU: the average of chi at the points, summed per
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
    double *val = gt_malloc_array(n ? n : 1, sizeof *val, "iso samples");
    if (!val) return GT_ERR_RUNTIME;
#pragma omp parallel for schedule(dynamic, 256)
    for (long i = 0; i < (long)n; i++) {
        size_t v = s0 + (size_t)i;
        val[i] = 0;
        if (!o->pt_count[v]) continue;
        val[i] = gt_pr_leaf_chi_sum(o->key, o->child, o->nbr, o->level_start, s->coef_lmin, D, s->coef, s->u, o->pt_start[v],
                                    o->pt_count[v]);
    }
    double sum = 0, w = 0;
    for (size_t i = 0; i < n; i++) {
        sum += val[i];
        w += o->pt_count[s0 + i];
    }
    free(val);
    s->iso = w > 0 ? sum / w : 0.0;
    return GT_OK;
}
