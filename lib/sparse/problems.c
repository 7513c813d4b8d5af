/* Stencil test problems for the preconditioned solvers (problems.h): each is
 * assembled as triplets on a structured grid, then gt_csr_from_triplets. */
#include <math.h>
#include <stdlib.h>

#include "sparse/problems.h"

typedef struct {
    int64_t n, cap;
    int32_t *r, *c;
    double *v;
} trip;

static gt_status trip_init(trip *t, int64_t cap)
{
    t->n = 0, t->cap = cap;
    t->r = malloc((size_t)cap * sizeof *t->r);
    t->c = malloc((size_t)cap * sizeof *t->c);
    t->v = malloc((size_t)cap * sizeof *t->v);
    if (t->r && t->c && t->v) return GT_OK;
    free(t->r), free(t->c), free(t->v);
    return gt_fail(GT_ERR_RUNTIME, "out of memory");
}

static void put(trip *t, int64_t i, int64_t j, double v)
{
    if (v == 0) return;
    t->r[t->n] = (int32_t)i, t->c[t->n] = (int32_t)j, t->v[t->n] = v;
    t->n++;
}

static gt_status trip_done(trip *t, int64_t n, gt_csr *out)
{
    gt_status s = gt_csr_from_triplets(n, n, t->n, t->r, t->c, t->v, out);
    free(t->r), free(t->c), free(t->v);
    return s;
}

static gt_status grid_check(int64_t n, int dim)
{
    double cells = pow((double)n, dim);
    if (n < 1 || cells > (double)INT32_MAX / 2)
        return gt_fail(GT_ERR_USAGE, "grid size %lld out of range", (long long)n);
    return GT_OK;
}

/* The velocity at grid point c (dim coordinates, 0..n-1) of the unit square
 * or cube, |w| <= 1. */
static void flow_at(gt_flow flow, int dim, const int64_t *c, double h, double *w)
{
    if (flow == GT_FLOW_UNIFORM) {
        double wl = dim == 3 ? sqrt(1 + 0.25 + 0.0625) : sqrt(1 + 0.25);
        w[0] = 1 / wl, w[1] = 0.5 / wl, w[2] = 0.25 / wl;
        return;
    }
    if (flow == GT_FLOW_DIAGONAL) {
        w[0] = w[1] = 1 / sqrt((double)dim), w[2] = dim == 3 ? w[0] : 0;
        return;
    }
    /* recirculating: X, Y in (-1, 1); w = (Y (1 - X^2), -X (1 - Y^2), 0), the
       IFISS field halved so that max |w| = 1 (at X = 0, Y = +-1) */
    double X = 2 * (double)(c[0] + 1) * h - 1, Y = 2 * (double)(c[1] + 1) * h - 1;
    w[0] = Y * (1 - X * X), w[1] = -X * (1 - Y * Y), w[2] = 0;
}

gt_status gt_convdiff(int dim, int64_t n, double peclet, gt_flow flow, gt_csr *out)
{
    if (dim != 2 && dim != 3) return gt_fail(GT_ERR_USAGE, "convection-diffusion in %d dimensions", dim);
    if (flow != GT_FLOW_UNIFORM && flow != GT_FLOW_RECIRC && flow != GT_FLOW_DIAGONAL)
        return gt_fail(GT_ERR_USAGE, "unknown flow field");
    GT_TRY(grid_check(n, dim));
    if (!(peclet >= 0) || !isfinite(peclet)) return gt_fail(GT_ERR_USAGE, "Peclet number %g out of range", peclet);
    int64_t nz = dim == 3 ? n : 1, N = n * n * nz;
    trip t;
    GT_TRY(trip_init(&t, N * (2 * dim + 1)));
    double h = 1.0 / (double)(n + 1);
    int64_t stride[3] = {1, n, n * n};
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < n; y++)
            for (int64_t x = 0; x < n; x++) {
                int64_t i = (z * n + y) * n + x, c[3] = {x, y, z};
                double w[3], diag = 2 * dim;
                flow_at(flow, dim, c, h, w);
                for (int d = 0; d < dim; d++) {
                    /* upwind: w > 0 takes the lower neighbour, w < 0 the upper */
                    double cv = peclet * h * fabs(w[d]), lo = -1, hi = -1;
                    diag += cv;
                    if (w[d] > 0) lo -= cv;
                    else hi -= cv;
                    if (c[d] > 0) put(&t, i, i - stride[d], lo);
                    if (c[d] < n - 1) put(&t, i, i + stride[d], hi);
                }
                put(&t, i, i, diag);
            }
    return trip_done(&t, N, out);
}

gt_status gt_convdiff3d(int64_t n, double peclet, gt_csr *out)
{
    return gt_convdiff(3, n, peclet, GT_FLOW_UNIFORM, out);
}

gt_status gt_rotated_aniso2d(int64_t n, double eps, double theta_deg, gt_csr *out)
{
    GT_TRY(grid_check(n, 2));
    if (!(eps > 0) || !isfinite(eps)) return gt_fail(GT_ERR_USAGE, "anisotropy %g out of range", eps);
    double th = theta_deg * acos(-1.0) / 180, cs = cos(th), sn = sin(th);
    double kxx = cs * cs + eps * sn * sn, kyy = sn * sn + eps * cs * cs, kxy = (1 - eps) * cs * sn;
    trip t;
    GT_TRY(trip_init(&t, n * n * 9));
    for (int64_t y = 0; y < n; y++)
        for (int64_t x = 0; x < n; x++) {
            int64_t i = y * n + x;
            put(&t, i, i, 2 * (kxx + kyy));
            if (x > 0) put(&t, i, i - 1, -kxx);
            if (x < n - 1) put(&t, i, i + 1, -kxx);
            if (y > 0) put(&t, i, i - n, -kyy);
            if (y < n - 1) put(&t, i, i + n, -kyy);
            /* -2 kxy u_xy, u_xy = (u_NE - u_NW - u_SE + u_SW) / 4h^2 */
            if (x < n - 1 && y < n - 1) put(&t, i, i + n + 1, -kxy / 2);
            if (x > 0 && y > 0) put(&t, i, i - n - 1, -kxy / 2);
            if (x > 0 && y < n - 1) put(&t, i, i + n - 1, kxy / 2);
            if (x < n - 1 && y > 0) put(&t, i, i - n + 1, kxy / 2);
        }
    return trip_done(&t, n * n, out);
}

gt_status gt_neumann_laplacian2d(int64_t nx, int64_t ny, gt_csr *out)
{
    GT_TRY(grid_check(nx > ny ? nx : ny, 2));
    if (ny < 1) return gt_fail(GT_ERR_USAGE, "grid size %lld out of range", (long long)ny);
    trip t;
    GT_TRY(trip_init(&t, nx * ny * 5));
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            int64_t i = y * nx + x, deg = 0;
            if (x > 0) put(&t, i, i - 1, -1), deg++;
            if (x < nx - 1) put(&t, i, i + 1, -1), deg++;
            if (y > 0) put(&t, i, i - nx, -1), deg++;
            if (y < ny - 1) put(&t, i, i + nx, -1), deg++;
            put(&t, i, i, (double)deg);
        }
    return trip_done(&t, nx * ny, out);
}
