/* Projections, the rotation-model camera and small rotation helpers on the
 * host (proj.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stitch/proj.h"

#define DEG (3.14159265358979323846 / 180.0)

const char *gt_proj_name(gt_proj_kind k)
{
    return k == GT_PROJ_SPHERICAL ? "spherical" : k == GT_PROJ_CYLINDRICAL ? "cylindrical" : "plane";
}

int gt_proj_valid(const gt_stitch_proj *pj, char *why, size_t n)
{
    double L = pj->left, R = pj->right, T = pj->top, B = pj->bottom;
    if (!(isfinite(L) && isfinite(R) && isfinite(T) && isfinite(B))) return snprintf(why, n, "a non-finite extent"), 0;
    if (!(R > L)) return snprintf(why, n, "right %g is not right of left %g", R, L), 0;
    if (!(T > B)) return snprintf(why, n, "top %g is not above bottom %g", T, B), 0;
    switch (pj->kind) {
    case GT_PROJ_SPHERICAL:
        if (R - L > 360 || L < -360 || R > 360)
            return snprintf(why, n, "longitudes %g..%g: at most 360 degrees within -360..360", L, R), 0;
        if (T > 90 || B < -90) return snprintf(why, n, "elevations %g..%g beyond -90..90", B, T), 0;
        return 1;
    case GT_PROJ_CYLINDRICAL:
        if (R - L > 360 || L < -360 || R > 360)
            return snprintf(why, n, "longitudes %g..%g: at most 360 degrees within -360..360", L, R), 0;
        if (!(T < 90 && B > -90)) return snprintf(why, n, "elevations %g..%g must lie strictly within -90..90", B, T), 0;
        return 1;
    case GT_PROJ_PLANE:
        if (!(L > -90 && R < 90 && T < 90 && B > -90))
            return snprintf(why, n, "a plane's edges must lie strictly within -90..90 degrees"), 0;
        return 1;
    }
    return snprintf(why, n, "unknown projection"), 0;
}

/* fraction t in (0, 1) of a panorama edge-to-edge -> column / row quantities */
static void column_at(const gt_stitch_proj *pj, double t, double *A, double *D)
{
    if (pj->kind == GT_PROJ_PLANE) {
        double a = tan(pj->left * DEG), b = tan(pj->right * DEG);
        *A = a + t * (b - a);
        *D = 1;
        return;
    }
    double lon = (pj->left + t * (pj->right - pj->left)) * DEG;
    *A = sin(lon);
    *D = cos(lon);
}

static void row_at(const gt_stitch_proj *pj, double s, double *B, double *C)
{
    if (pj->kind == GT_PROJ_SPHERICAL) {
        double lat = (pj->top + s * (pj->bottom - pj->top)) * DEG;
        *B = cos(lat);
        *C = -sin(lat);
        return;
    }
    double a = tan(pj->top * DEG), b = tan(pj->bottom * DEG);
    *B = 1;
    *C = -(a + s * (b - a));
}

void gt_proj_ray(const gt_stitch_proj *pj, int W, int H, double X, double Y, double d[3])
{
    double A, D, B, C;
    column_at(pj, (X + 0.5) / W, &A, &D);
    row_at(pj, (Y + 0.5) / H, &B, &C);
    d[0] = A * B, d[1] = C, d[2] = D * B;
    double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (int k = 0; k < 3; k++) d[k] /= n;
}

int gt_proj_pixel(const gt_stitch_proj *pj, int W, int H, const double d[3], double *X, double *Y)
{
    double t, s;
    if (pj->kind == GT_PROJ_PLANE) {
        if (!(d[2] > 1e-12 * (fabs(d[0]) + fabs(d[1])))) return 0;
        double a = tan(pj->left * DEG), b = tan(pj->right * DEG);
        double c = tan(pj->top * DEG), e = tan(pj->bottom * DEG);
        t = (d[0] / d[2] - a) / (b - a);
        s = (-d[1] / d[2] - c) / (e - c);
    } else {
        double rho = hypot(d[0], d[2]);
        double lon = atan2(d[0], d[2]) / DEG;
        while (lon < pj->left) lon += 360;
        while (lon >= pj->left + 360) lon -= 360;
        t = (lon - pj->left) / (pj->right - pj->left);
        if (pj->kind == GT_PROJ_SPHERICAL) {
            double lat = atan2(-d[1], rho) / DEG;
            s = (lat - pj->top) / (pj->bottom - pj->top);
        } else {
            if (!(rho > 1e-12 * fabs(d[1]))) return 0;
            double c = tan(pj->top * DEG), e = tan(pj->bottom * DEG);
            s = (-d[1] / rho - c) / (e - c);
        }
    }
    *X = t * W - 0.5;
    *Y = s * H - 0.5;
    return isfinite(*X) && isfinite(*Y);
}

void gt_proj_tables(const gt_stitch_proj *pj, int W, int H, const gt_plane_view *pv, float *tab)
{
    int pw = pv->w, ph = pv->h;
    for (int x = 0; x < pw; x++) {
        double A, D;
        column_at(pj, (x * (double)pv->sx + pv->ox + 0.5) / W, &A, &D);
        tab[x] = (float)A;
        tab[pw + x] = (float)D;
    }
    for (int y = 0; y < ph; y++) {
        double B, C;
        row_at(pj, (y * (double)pv->sy + pv->oy + 0.5) / H, &B, &C);
        tab[2 * pw + y] = (float)B;
        tab[2 * pw + ph + y] = (float)C;
    }
}

/* ------------------------------------------------------------ the camera */

void gt_mat3_transpose(const double A[9], double T[9])
{
    double t[9] = {A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8]};
    memcpy(T, t, sizeof t);
}

void gt_mat3_vec(const double A[9], const double x[3], double y[3])
{
    double t[3];
    for (int r = 0; r < 3; r++) t[r] = A[3 * r] * x[0] + A[3 * r + 1] * x[1] + A[3 * r + 2] * x[2];
    memcpy(y, t, sizeof t);
}

double gt_cam_r2max(const gt_stitch_cam *c)
{
    /* g(r) = r (1 + k1 r^2 + k2 r^4) turns where g' = 1 + 3 k1 s + 5 k2 s^2 = 0, s = r^2 */
    double a = 5 * c->k2, b = 3 * c->k1, best = 1e30;
    if (a == 0) {
        if (b < 0) best = -1 / b;
    } else {
        double disc = b * b - 4 * a;
        if (disc >= 0) {
            double q = sqrt(disc), s1 = (-b - q) / (2 * a), s2 = (-b + q) / (2 * a);
            if (s1 > 0) best = fmin(best, s1);
            if (s2 > 0) best = fmin(best, s2);
        }
    }
    return best;
}

static double distort(const gt_stitch_cam *c, double r2) { return 1 + r2 * (c->k1 + r2 * c->k2); }

int gt_cam_distortion_ok(const gt_stitch_cam *c)
{
    if (c->k1 == 0 && c->k2 == 0) return 1;
    double r2m = gt_cam_r2max(c);
    double far = 0;
    for (int k = 0; k < 4; k++) {
        double u = k & 1 ? c->w - 1 : 0, v = k & 2 ? c->h - 1 : 0;
        double x = (u - c->cx) / c->f, y = (v - c->cy) / c->f;
        far = fmax(far, sqrt(x * x + y * y));
    }
    if (r2m >= 1e30) return 1;
    /* the largest distorted radius the lens reaches while increasing */
    double rmax = sqrt(r2m) * distort(c, r2m);
    return rmax > far;
}

int gt_cam_pixel(const gt_stitch_cam *c, const double d[3], double *u, double *v)
{
    double q[3];
    gt_mat3_vec(c->R, d, q);
    if (!(q[2] > 1e-12 * (fabs(q[0]) + fabs(q[1])))) return 0;
    double x = q[0] / q[2], y = q[1] / q[2], r2 = x * x + y * y;
    if (r2 > gt_cam_r2max(c)) return 0;
    double s = distort(c, r2);
    *u = c->f * s * x + c->cx;
    *v = c->f * s * y + c->cy;
    return 1;
}

void gt_cam_ray(const gt_stitch_cam *c, double u, double v, double d[3])
{
    double xd = (u - c->cx) / c->f, yd = (v - c->cy) / c->f, rd = sqrt(xd * xd + yd * yd), sc = 1;
    if ((c->k1 != 0 || c->k2 != 0) && rd > 0) {
        double r = rd, lim = sqrt(fmin(gt_cam_r2max(c), 1e300));
        for (int it = 0; it < 50; it++) {
            double r2 = r * r, g = r * distort(c, r2) - rd, dg = 1 + r2 * (3 * c->k1 + 5 * c->k2 * r2);
            if (!(dg > 0)) break;
            double nr = r - g / dg;
            if (nr > lim) nr = 0.5 * (r + lim);
            if (nr < 0) nr = 0.5 * r;
            if (fabs(nr - r) < 1e-15 * (1 + r)) {
                r = nr;
                break;
            }
            r = nr;
        }
        sc = r / rd;
    }
    double q[3] = {xd * sc, yd * sc, 1}, Rt[9];
    gt_mat3_transpose(c->R, Rt);
    gt_mat3_vec(Rt, q, d);
    double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (int k = 0; k < 3; k++) d[k] /= n;
}

void gt_cam_params(const gt_stitch_cam *c, const gt_plane_view *pv, float out[GT_SP_N])
{
    for (int k = 0; k < 9; k++) out[GT_SP_R + k] = (float)c->R[k];
    out[GT_SP_FX] = (float)(c->f / pv->sx);
    out[GT_SP_FY] = (float)(c->f / pv->sy);
    out[GT_SP_CX] = (float)((c->cx - pv->ox) / pv->sx);
    out[GT_SP_CY] = (float)((c->cy - pv->oy) / pv->sy);
    out[GT_SP_K1] = (float)c->k1;
    out[GT_SP_K2] = (float)c->k2;
    double r2 = gt_cam_r2max(c);
    out[GT_SP_R2MAX] = r2 >= 1e30 ? 1e30f : (float)r2;
}

/* ------------------------------------------------------------ rotations */

void gt_rot_exp(const double w[3], double R[9])
{
    double th = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    double a, b; /* sin(th)/th, (1-cos th)/th^2, by series near 0 */
    if (th < 1e-5) {
        a = 1 - th * th / 6;
        b = 0.5 - th * th / 24;
    } else {
        a = sin(th) / th;
        b = (1 - cos(th)) / (th * th);
    }
    double x = w[0], y = w[1], z = w[2];
    double K[9] = {0, -z, y, z, 0, -x, -y, x, 0};
    double K2[9] = {-(y * y + z * z), x * y, x * z, x * y, -(x * x + z * z), y * z, x * z, y * z, -(x * x + y * y)};
    for (int k = 0; k < 9; k++) R[k] = (k % 4 == 0 ? 1 : 0) + a * K[k] + b * K2[k];
}

void gt_rot_log(const double R[9], double w[3])
{
    double c = (R[0] + R[4] + R[8] - 1) / 2;
    c = c > 1 ? 1 : c < -1 ? -1 : c;
    double th = acos(c);
    double v[3] = {R[7] - R[5], R[2] - R[6], R[3] - R[1]};
    if (th < 1e-6) {
        for (int k = 0; k < 3; k++) w[k] = 0.5 * v[k];
        return;
    }
    if (th > 3.14159265358979323846 - 1e-4) {
        /* near pi: the axis from the largest diagonal of (R + I) / 2 */
        int k = R[0] > R[4] ? (R[0] > R[8] ? 0 : 2) : (R[4] > R[8] ? 1 : 2);
        double ax[3];
        ax[k] = sqrt(fmax((R[4 * k] + 1) / 2, 0));
        for (int j = 0; j < 3; j++)
            if (j != k) ax[j] = (R[3 * k + j] + R[3 * j + k]) / (4 * ax[k]);
        double n = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
        double sg = ax[0] * v[0] + ax[1] * v[1] + ax[2] * v[2] < 0 ? -1 : 1;
        for (int j = 0; j < 3; j++) w[j] = sg * th * ax[j] / n;
        return;
    }
    double s = th / (2 * sin(th));
    for (int k = 0; k < 3; k++) w[k] = s * v[k];
}

static double det3(const double A[9])
{
    return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) + A[2] * (A[3] * A[7] - A[4] * A[6]);
}

int gt_rot_nearest(const double M[9], double R[9])
{
    double d = det3(M);
    if (!(d > 0) || !isfinite(d)) return -1;
    double X[9], s = cbrt(d);
    for (int k = 0; k < 9; k++) X[k] = M[k] / s;
    /* Newton's iteration for the polar factor: X <- (X + X^-T) / 2 */
    for (int it = 0; it < 30; it++) {
        double dt = det3(X), Xit[9];
        if (!(fabs(dt) > 1e-300)) return -1;
        /* X^-T = cofactor matrix / det */
        Xit[0] = (X[4] * X[8] - X[5] * X[7]) / dt, Xit[1] = -(X[3] * X[8] - X[5] * X[6]) / dt;
        Xit[2] = (X[3] * X[7] - X[4] * X[6]) / dt, Xit[3] = -(X[1] * X[8] - X[2] * X[7]) / dt;
        Xit[4] = (X[0] * X[8] - X[2] * X[6]) / dt, Xit[5] = -(X[0] * X[7] - X[1] * X[6]) / dt;
        Xit[6] = (X[1] * X[5] - X[2] * X[4]) / dt, Xit[7] = -(X[0] * X[5] - X[2] * X[3]) / dt;
        Xit[8] = (X[0] * X[4] - X[1] * X[3]) / dt;
        double ch = 0;
        for (int k = 0; k < 9; k++) {
            double n = 0.5 * (X[k] + Xit[k]);
            ch = fmax(ch, fabs(n - X[k]));
            X[k] = n;
        }
        if (ch < 1e-15) break;
    }
    memcpy(R, X, sizeof X);
    return 0;
}

double gt_rot_angle_deg(const double R[9])
{
    double c = (R[0] + R[4] + R[8] - 1) / 2;
    return acos(c > 1 ? 1 : c < -1 ? -1 : c) / DEG;
}
