/* Evaluation of a per-node B-spline expansion at a point of the unit cube
 * (chi from the coefficients, or the sample density from the splat weights). */
#include <math.h>

#include "poisson/poisson.h"

double gt_pr_eval_levels(const gt_pr_octree *o, const double q[3], const double *arr, int lmin, int lmax)
{
    double sum = 0.0;
    /* cells outside the unit cube have no node: search (and find nothing) */
    int inside = 1;
    for (int a = 0; a < 3; a++) inside &= q[a] >= 0 && q[a] < 1;
    int32_t node = inside ? 0 : -1;
    for (int d = 0; d <= lmax; d++) {
        double sc = ldexp(1.0, d);
        int64_t c[3];
        for (int a = 0; a < 3; a++) c[a] = (int64_t)floor(q[a] * sc);
        if (d >= lmin) {
            for (int i = 0; i < 27; i++) {
                int64_t nc[3] = {c[0] + i % 3 - 1, c[1] + (i / 3) % 3 - 1, c[2] + i / 9 - 1};
                int32_t t = node >= 0 ? o->nbr[27 * (size_t)node + i] : gt_pr_find(o, d, nc[0], nc[1], nc[2]);
                if (t < 0) continue;
                double f = 1.0;
                for (int a = 0; a < 3; a++) f *= gt_pr_bspline(q[a] * sc - (double)nc[a] - 0.5);
                sum += arr[t] * f;
            }
        }
        if (d < lmax) {
            if (node >= 0 && o->child[node] >= 0) {
                int cb = 0;
                for (int a = 0; a < 3; a++) {
                    int64_t cc = (int64_t)floor(q[a] * sc * 2.0);
                    if (cc < 0) cc = 0;
                    cb |= (int)(cc & 1) << a;
                }
                node = o->child[node] + cb;
            } else {
                node = -1;
            }
        }
    }
    return sum;
}
