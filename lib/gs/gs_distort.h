/* Lens distortion of COLMAP's SIMPLE_RADIAL, RADIAL and OPENCV camera
 * models (src/colmap/sensor/models.h), in one form that holds all three:
 * the OPENCV model's fx, fy, cx, cy, k1, k2, p1, p2 (SIMPLE_RADIAL: fx = fy
 * = f, k2 = p1 = p2 = 0; RADIAL: fx = fy = f, p1 = p2 = 0; a pinhole: all
 * coefficients 0). Pixel coordinates are COLMAP's: the top-left pixel's
 * centre at (0.5, 0.5).
 *
 * For normalised coordinates (u, v) = (X/Z, Y/Z), r2 = u^2 + v^2:
 *   radial = k1 r2 + k2 r2^2
 *   u' = u + u radial + 2 p1 u v + p2 (r2 + 2 u^2)
 *   v' = v + v radial + 2 p2 u v + p1 (r2 + 2 v^2)
 *   x = fx u' + cx,  y = fy v' + cy.
 * Lifting a pixel back (gt_gs_lens_unproject) inverts the distortion by
 * Newton's method with the analytic Jacobian (COLMAP iterates with a
 * numerical one; both converge to the same point). Double precision, pure
 * functions: both the CPU and a CUDA kernel can include this. */
#ifndef GT_GS_DISTORT_H
#define GT_GS_DISTORT_H

#include <math.h>
#include <stdbool.h>

#include "common/hostdev.h"

typedef struct gt_gs_lens {
    double fx, fy, cx, cy;
    double k1, k2, p1, p2;
} gt_gs_lens;

/* Distorted normalised coordinates of (u, v), and (with J non-NULL) the
 * Jacobian d(u', v')/d(u, v), row-major. */
GT_HD void gt_gs_lens_distort(const gt_gs_lens *l, double u, double v, double *ud, double *vd, double *J)
{
    double u2 = u * u, v2 = v * v, uv = u * v, r2 = u2 + v2;
    double radial = l->k1 * r2 + l->k2 * r2 * r2;
    *ud = u + u * radial + 2.0 * l->p1 * uv + l->p2 * (r2 + 2.0 * u2);
    *vd = v + v * radial + 2.0 * l->p2 * uv + l->p1 * (r2 + 2.0 * v2);
    if (J) {
        double dr = 2.0 * (l->k1 + 2.0 * l->k2 * r2); /* d radial / d r2, times 2 */
        J[0] = 1.0 + radial + u * dr * u + 2.0 * l->p1 * v + 6.0 * l->p2 * u;
        J[1] = u * dr * v + 2.0 * l->p1 * u + 2.0 * l->p2 * v;
        J[2] = v * dr * u + 2.0 * l->p2 * v + 2.0 * l->p1 * u;
        J[3] = 1.0 + radial + v * dr * v + 2.0 * l->p2 * u + 6.0 * l->p1 * v;
    }
}

/* Pixel of the normalised point (u, v). */
GT_HD void gt_gs_lens_project(const gt_gs_lens *l, double u, double v, double *x, double *y)
{
    double ud, vd;
    gt_gs_lens_distort(l, u, v, &ud, &vd, 0);
    *x = l->fx * ud + l->cx;
    *y = l->fy * vd + l->cy;
}

/* Normalised point of pixel (x, y): Newton on distort(u, v) = (x', y'),
 * from (x', y'). False when it does not converge (a singular Jacobian, or
 * not within 100 steps); (u, v) is then the last iterate. */
GT_HD bool gt_gs_lens_unproject(const gt_gs_lens *l, double x, double y, double *u, double *v)
{
    double xd = (x - l->cx) / l->fx, yd = (y - l->cy) / l->fy;
    double cu = xd, cv = yd;
    bool ok = false;
    for (int it = 0; it < 100; it++) {
        double du, dv, J[4];
        gt_gs_lens_distort(l, cu, cv, &du, &dv, J);
        double ex = du - xd, ey = dv - yd;
        double det = J[0] * J[3] - J[1] * J[2];
        if (!(fabs(det) > 1e-12)) break;
        double sx = (J[3] * ex - J[1] * ey) / det, sy = (J[0] * ey - J[2] * ex) / det;
        cu -= sx, cv -= sy;
        if (sx * sx + sy * sy < 1e-28) {
            ok = true;
            break;
        }
    }
    *u = cu, *v = cv;
    return ok && isfinite(cu) && isfinite(cv);
}

#endif
