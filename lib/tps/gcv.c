/* Generalised cross-validation for the smoothing parameter: the score of a
 * lambda from the spectrum of Q2^T K Q2, and its minimisation over a log
 * grid refined by golden section (tps.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "tps/tps.h"

void gt_tps_gcv_free(gt_tps_gcv *g)
{
    free(g->lambda);
    free(g->score);
    memset(g, 0, sizeof *g);
}

double gt_tps_gcv_score(const double *d, const double *z, size_t m, size_t n, double lambda)
{
    double num = 0.0, tr = 0.0;
    for (size_t i = 0; i < m; i++) {
        double di = d[i] > 0.0 ? d[i] : 0.0;
        double f = lambda / (di + lambda);
        double z2 = z[i] * z[i] + z[i + m] * z[i + m] + z[i + 2 * m] * z[i + 2 * m];
        num += f * f * z2;
        tr += f;
    }
    double nn = (double)n;
    if (tr <= 0.0) return INFINITY;
    return (num / (3.0 * nn)) / ((tr / nn) * (tr / nn));
}

static int cmp_dbl2(const void *a, const void *b)
{
    const double *p = a, *q = b;
    return (p[0] > q[0]) - (p[0] < q[0]);
}

gt_status gt_tps_gcv_choose(const double *d, const double *z, size_t m, size_t n,
                            gt_tps_gcv *curve, double *lambda)
{
    double dmax = 0.0;
    for (size_t i = 0; i < m; i++) dmax = fmax(dmax, d[i]);
    if (!(dmax > 0.0)) return gt_fail(GT_ERR_DATA, "GCV: Q2^T K Q2 has no positive eigenvalue");
    enum { NGRID = 81, NGOLD = 60 };
    /* log grid over [1e-10, 1e4] * largest eigenvalue */
    double lo = log(dmax * 1e-10), hi = log(dmax * 1e4);
    double pts[(NGRID + NGOLD) * 2];
    int np = 0, best = 0;
    for (int k = 0; k < NGRID; k++) {
        double ll = lo + (hi - lo) * k / (NGRID - 1);
        pts[2 * np] = exp(ll);
        pts[2 * np + 1] = gt_tps_gcv_score(d, z, m, n, exp(ll));
        if (pts[2 * np + 1] < pts[2 * best + 1]) best = np;
        np++;
    }
    double step = (hi - lo) / (NGRID - 1);
    double a = log(pts[2 * best]) - step, b = log(pts[2 * best]) + step;
    const double gr = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
    double f1 = gt_tps_gcv_score(d, z, m, n, exp(x1)), f2 = gt_tps_gcv_score(d, z, m, n, exp(x2));
    for (int it = 0; it < NGOLD && b - a > 1e-9; it++) {
        if (f1 <= f2) {
            b = x2; x2 = x1; f2 = f1;
            x1 = b - gr * (b - a);
            f1 = gt_tps_gcv_score(d, z, m, n, exp(x1));
            pts[2 * np] = exp(x1); pts[2 * np + 1] = f1;
        } else {
            a = x1; x1 = x2; f1 = f2;
            x2 = a + gr * (b - a);
            f2 = gt_tps_gcv_score(d, z, m, n, exp(x2));
            pts[2 * np] = exp(x2); pts[2 * np + 1] = f2;
        }
        np++;
    }
    double xb = 0.5 * (a + b), fb = gt_tps_gcv_score(d, z, m, n, exp(xb));
    if (pts[2 * best + 1] < fb) { /* the grid point itself (edge of the range) */
        xb = log(pts[2 * best]);
        fb = pts[2 * best + 1];
    }
    *lambda = exp(xb);
    if (curve) {
        qsort(pts, (size_t)np, 2 * sizeof(double), cmp_dbl2);
        curve->lambda = gt_malloc_array((size_t)np, sizeof(double), "GCV curve");
        curve->score = gt_malloc_array((size_t)np, sizeof(double), "GCV curve");
        if (!curve->lambda || !curve->score) {
            gt_tps_gcv_free(curve);
            return GT_ERR_RUNTIME;
        }
        for (int k = 0; k < np; k++) {
            curve->lambda[k] = pts[2 * k];
            curve->score[k] = pts[2 * k + 1];
        }
        curve->npts = np;
        curve->best_lambda = *lambda;
        curve->best_score = fb;
    }
    return GT_OK;
}
