/* Input checks of a thin-plate spline fit (gt_tps_check_points): enough
 * points, finite, no two coincident, and an affine part the points
 * determine (the spread along the principal axes of their scatter matrix,
 * by a small Jacobi eigen solver). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "tps/tps.h"

typedef struct { double x[3]; size_t i; } pt_idx;
static int cmp_pt(const void *a, const void *b)
{
    const pt_idx *p = a, *q = b;
    for (int d = 0; d < 3; d++) {
        if (p->x[d] < q->x[d]) return -1;
        if (p->x[d] > q->x[d]) return 1;
    }
    return p->i < q->i ? -1 : (p->i > q->i);
}


/* eigenvalues of the leading k x k block (k = 2 or 3) of symmetric S
 * (cyclic Jacobi; S is destroyed) */
static void sym3_eig(double S[3][3], int k, double ev[3])
{
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = 0.0, tot = 0.0;
        for (int p = 0; p < k; p++)
            for (int q = 0; q < k; q++) {
                tot += S[p][q] * S[p][q];
                if (p != q) off += S[p][q] * S[p][q];
            }
        if (off <= 1e-32 * tot) break;
        for (int p = 0; p < k - 1; p++)
            for (int q = p + 1; q < k; q++) {
                if (S[p][q] == 0.0) continue;
                double th = (S[q][q] - S[p][p]) / (2.0 * S[p][q]);
                double t = copysign(1.0, th) / (fabs(th) + sqrt(th * th + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), sn = t * c;
                for (int r = 0; r < k; r++) { /* columns p, q */
                    double a = S[r][p], b = S[r][q];
                    S[r][p] = c * a - sn * b;
                    S[r][q] = sn * a + c * b;
                }
                for (int r = 0; r < k; r++) { /* rows p, q */
                    double a = S[p][r], b = S[q][r];
                    S[p][r] = c * a - sn * b;
                    S[q][r] = sn * a + c * b;
                }
            }
    }
    for (int d = 0; d < 3; d++) ev[d] = d < k ? fmax(S[d][d], 0.0) : 0.0;
}

gt_status gt_tps_check_points(const double *src, size_t n, bool *planar)
{
    if (n < 5)
        return gt_fail(GT_ERR_DATA, "a thin-plate spline needs at least 5 control points, got %zu", n);
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(src[i]))
            return gt_fail(GT_ERR_DATA, "control point %zu has a NaN or infinite coordinate",
                           i / 3 + 1);
    pt_idx *p = gt_malloc_array(n, sizeof *p, "point sort");
    if (!p) return GT_ERR_RUNTIME;
    for (size_t i = 0; i < n; i++) {
        memcpy(p[i].x, src + 3 * i, sizeof p[i].x);
        p[i].i = i;
    }
    qsort(p, n, sizeof *p, cmp_pt);
    for (size_t i = 1; i < n; i++)
        if (!memcmp(p[i].x, p[i - 1].x, sizeof p[i].x)) {
            gt_status s = gt_fail(GT_ERR_DATA,
                                  "control points %zu and %zu coincide (%.9g %.9g %.9g): the "
                                  "spline is undetermined; remove duplicates",
                                  p[i - 1].i + 1, p[i].i + 1, p[i].x[0], p[i].x[1], p[i].x[2]);
            free(p);
            return s;
        }
    free(p);
    bool pl = true; /* every z equal: planar (2-D) input */
    for (size_t i = 1; i < n && pl; i++) pl = src[3 * i + 2] == src[2];
    /* spread of the points along the principal axes: sqrt of the
     * eigenvalues of the scatter matrix (z dropped for planar input) */
    double mu[3] = {0, 0, 0}, S[3][3] = {{0}};
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) mu[d] += src[3 * i + d] / (double)n;
    for (size_t i = 0; i < n; i++)
        for (int p = 0; p < 3; p++)
            for (int q = 0; q < 3; q++)
                S[p][q] += (src[3 * i + p] - mu[p]) * (src[3 * i + q] - mu[q]);
    double ev[3];
    sym3_eig(S, pl ? 2 : 3, ev);
    int dim = pl ? 2 : 3, rank = 0;
    double emax = fmax(ev[0], fmax(ev[1], pl ? 0.0 : ev[2]));
    for (int d = 0; d < dim; d++)
        if (ev[d] > 1e-13 * emax) rank++; /* spread above ~3e-7 of the largest (rounding: 1e-16) */
    if (rank < 2)
        return gt_fail(GT_ERR_DATA,
                       "the control points are collinear: the affine part of the spline is "
                       "undetermined (need points spanning a plane for 2-D data with constant "
                       "z, or a volume for 3-D data)");
    if (rank < dim)
        return gt_fail(GT_ERR_DATA,
                       "the control points are coplanar (but not all at one z): the affine part "
                       "of the spline is undetermined; rotate 2-D data into a plane z = "
                       "constant, or add points off the plane");
    if (planar) *planar = pl;
    return GT_OK;
}
