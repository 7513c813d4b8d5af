/* Evaluation of a per-node B-spline expansion at a point of the unit cube
 * (chi from the coefficients, or the sample density from the splat weights):
 * the descent of pr_bspline.h, which the GPU's evaluation runs too. */
#include "poisson/poisson.h"
#include "poisson/pr_bspline.h"

double gt_pr_eval_levels(const gt_pr_octree *o, const double q[3], const double *arr, int lmin, int lmax)
{
    return gt_pr_eval_descent(o->key, o->child, o->nbr, o->level_start, q, arr, lmin, lmax);
}
