/* Bundle adjustment of a rotating rig (gt_calib_bundle, calib.h): the ray
 * error of every inlier match, Levenberg-Marquardt on the dense normal
 * equations (at most 16 cameras: 4 parameters each, 2 more for the lens).
 *
 * For a match (a in camera i, b in camera j) the residual is
 *     e = s (r_i - r_j),  s = sqrt(f_i f_j),
 * r the unit ray of a pixel in the panorama's frame, r = R^T n(K^-1 p)
 * with the distortion undone; s turns the angle into pixels. A camera's
 * rotation moves by R <- R exp([w]x), under which r <- exp(-[w]x) r, so
 * de/dw_i = s [r_i]x and de/dw_j = -s [r_j]x exactly; the focal lengths,
 * the distortion and the principal point by central differences of the
 * rays. The reference camera's
 * rotation is fixed (the frame's gauge). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "stitch/calib.h"
#include "stitch/proj.h"

enum { MAXP = 4 * GT_STITCH_MAX_CAMS + 4 };

typedef struct {
    int ncam, ref, w, h;
    bool dist, centre;
    int rot[GT_STITCH_MAX_CAMS]; /* first rotation parameter, -1: fixed */
    int foc[GT_STITCH_MAX_CAMS];
    int kd;                      /* k1 (k2 after it), -1: fixed */
    int kc;                      /* the principal point's dcx (dcy after it), -1: fixed */
    int np;
} layout;

/* unit ray (panorama frame) of pixel (u, v) of camera c */
static void ray(const layout *L, const gt_calib_cam *c, double u, double v, double r[3])
{
    gt_stitch_cam s;
    gt_calib_cam_model(c, L->w, L->h, &s);
    gt_cam_ray(&s, u, v, r);
}

/* the derivative of the ray of p by the parameter *x of m (a copy of the camera), step h */
static void ray_dx(const layout *L, gt_calib_cam *m, double *x, double h, const double *p, double dr[3])
{
    double x0 = *x, a[3], b[3];
    *x = x0 + h;
    ray(L, m, p[0], p[1], a);
    *x = x0 - h;
    ray(L, m, p[0], p[1], b);
    *x = x0;
    for (int k = 0; k < 3; k++) dr[k] = (a[k] - b[k]) / (2 * h);
}

/* the ray and its derivatives by f, k1, k2 and the principal point (central differences) */
static void ray_d(const layout *L, const gt_calib_cam *c, const double *p, double r[3], double drf[3], double drk[2][3],
                  double drc[2][3])
{
    gt_calib_cam m = *c;
    ray(L, c, p[0], p[1], r);
    ray_dx(L, &m, &m.f, 1e-6 * c->f, p, drf);
    if (L->dist) {
        ray_dx(L, &m, &m.k1, 1e-6, p, drk[0]);
        ray_dx(L, &m, &m.k2, 1e-6, p, drk[1]);
    }
    if (L->centre) {
        ray_dx(L, &m, &m.dcx, 1e-3, p, drc[0]);
        ray_dx(L, &m, &m.dcy, 1e-3, p, drc[1]);
    }
}

/* cost, and (JtJ, g = J^T e) when JtJ is not NULL */
static double accumulate(const layout *L, const gt_calib_pair *pairs, int npairs, const gt_calib_cam *cams, double *JtJ,
                         double *g)
{
    int np = L->np;
    double cost = 0;
    if (JtJ) memset(JtJ, 0, sizeof(double) * np * np), memset(g, 0, sizeof(double) * np);
    for (int q = 0; q < npairs; q++) {
        const gt_calib_pair *pr = &pairs[q];
        if (!pr->used) continue;
        const gt_calib_cam *ci = &cams[pr->i], *cj = &cams[pr->j];
        double s = sqrt(ci->f * cj->f);
        for (int t = 0; t < pr->n; t++) {
            double ri[3], rj[3], dfi[3], dfj[3], dki[2][3], dkj[2][3], dci[2][3], dcj[2][3];
            if (!JtJ) {
                ray(L, ci, pr->pa[2 * t], pr->pa[2 * t + 1], ri);
                ray(L, cj, pr->pb[2 * t], pr->pb[2 * t + 1], rj);
            } else {
                ray_d(L, ci, pr->pa + 2 * t, ri, dfi, dki, dci);
                ray_d(L, cj, pr->pb + 2 * t, rj, dfj, dkj, dcj);
            }
            double e[3];
            for (int k = 0; k < 3; k++) {
                e[k] = s * (ri[k] - rj[k]);
                cost += e[k] * e[k];
            }
            if (!JtJ) continue;
            /* the nonzero columns of this match's 3 rows */
            int col[14], nc = 0;
            double J[3][14];
            if (L->rot[pr->i] >= 0) { /* s [ri]x */
                const double X[3][3] = {{0, -ri[2], ri[1]}, {ri[2], 0, -ri[0]}, {-ri[1], ri[0], 0}};
                for (int c = 0; c < 3; c++, nc++) {
                    col[nc] = L->rot[pr->i] + c;
                    for (int k = 0; k < 3; k++) J[k][nc] = s * X[k][c];
                }
            }
            if (L->rot[pr->j] >= 0) {
                const double X[3][3] = {{0, -rj[2], rj[1]}, {rj[2], 0, -rj[0]}, {-rj[1], rj[0], 0}};
                for (int c = 0; c < 3; c++, nc++) {
                    col[nc] = L->rot[pr->j] + c;
                    for (int k = 0; k < 3; k++) J[k][nc] = -s * X[k][c];
                }
            }
            col[nc] = L->foc[pr->i];
            for (int k = 0; k < 3; k++) J[k][nc] = e[k] / (2 * ci->f) + s * dfi[k];
            nc++;
            col[nc] = L->foc[pr->j];
            for (int k = 0; k < 3; k++) J[k][nc] = e[k] / (2 * cj->f) - s * dfj[k];
            nc++;
            if (L->dist)
                for (int c = 0; c < 2; c++, nc++) {
                    col[nc] = L->kd + c;
                    for (int k = 0; k < 3; k++) J[k][nc] = s * (dki[c][k] - dkj[c][k]);
                }
            if (L->centre)
                for (int c = 0; c < 2; c++, nc++) {
                    col[nc] = L->kc + c;
                    for (int k = 0; k < 3; k++) J[k][nc] = s * (dci[c][k] - dcj[c][k]);
                }
            for (int a = 0; a < nc; a++) {
                double ga = 0;
                for (int k = 0; k < 3; k++) ga += J[k][a] * e[k];
                g[col[a]] += ga;
                for (int b = 0; b < nc; b++) {
                    double v = 0;
                    for (int k = 0; k < 3; k++) v += J[k][a] * J[k][b];
                    JtJ[col[a] * np + col[b]] += v;
                }
            }
        }
    }
    return cost;
}

/* cams moved by the step d */
static void apply(const layout *L, const gt_calib_cam *from, const double *d, gt_calib_cam *to)
{
    for (int i = 0; i < L->ncam; i++) {
        to[i] = from[i];
        if (L->rot[i] >= 0) {
            double E[9];
            gt_rot_exp(d + L->rot[i], E);
            gt_stitch_h_mul(from[i].R, E, to[i].R);
        }
        to[i].f = from[i].f + d[L->foc[i]];
        if (L->dist) to[i].k1 = from[i].k1 + d[L->kd], to[i].k2 = from[i].k2 + d[L->kd + 1];
        if (L->centre) to[i].dcx = from[i].dcx + d[L->kc], to[i].dcy = from[i].dcy + d[L->kc + 1];
    }
}

static bool plausible(const layout *L, const gt_calib_cam *c)
{
    for (int i = 0; i < L->ncam; i++) {
        if (!(c[i].f > 0.05 * L->w) || !(c[i].f < 100.0 * L->w)) return false;
        if (!(fabs(c[i].dcx) <= 0.5 * L->w) || !(fabs(c[i].dcy) <= 0.5 * L->h)) return false;
        if (L->dist) {
            gt_stitch_cam s;
            gt_calib_cam_model(&c[i], L->w, L->h, &s);
            if (!gt_cam_distortion_ok(&s)) return false;
        }
    }
    return true;
}

gt_status gt_calib_bundle(const gt_calib_pair *pairs, int npairs, int ncam, int w, int h, int ref, int lens,
                          int iters, gt_calib_cam *cams)
{
    layout L;
    memset(&L, 0, sizeof L);
    bool distortion = lens & GT_CALIB_BA_K;
    L.ncam = ncam, L.ref = ref, L.w = w, L.h = h, L.dist = distortion, L.centre = lens & GT_CALIB_BA_CENTRE;
    for (int i = 0; i < ncam; i++) {
        L.rot[i] = i == ref ? -1 : L.np;
        L.np += i == ref ? 0 : 3;
        L.foc[i] = L.np++;
    }
    L.kd = distortion ? L.np : -1;
    if (distortion) L.np += 2;
    L.kc = L.centre ? L.np : -1;
    if (L.centre) L.np += 2;
    int np = L.np;
    double *JtJ = gt_malloc_array((size_t)np * np * 2 + 3 * (size_t)np, sizeof(double), "bundle adjustment");
    if (!JtJ) return GT_ERR_RUNTIME;
    double *A = JtJ + np * np, *g = A + np * np, *d = g + np, *diag = d + np;
    gt_calib_cam cur[GT_STITCH_MAX_CAMS], tri[GT_STITCH_MAX_CAMS];
    memcpy(cur, cams, sizeof(gt_calib_cam) * ncam);
    double cost = accumulate(&L, pairs, npairs, cur, NULL, NULL), lambda = 1e-4;
    for (int it = 0; it < iters && cost > 0; it++) {
        accumulate(&L, pairs, npairs, cur, JtJ, g);
        for (int a = 0; a < np; a++) diag[a] = fmax(JtJ[a * np + a], 1e-12);
        bool improved = false;
        double c2 = cost;
        for (int tries = 0; tries < 12 && !improved; tries++) {
            memcpy(A, JtJ, sizeof(double) * np * np);
            for (int a = 0; a < np; a++) {
                A[a * np + a] += lambda * diag[a];
                d[a] = -g[a];
            }
            if (gt_calib_solve(A, d, np)) {
                lambda *= 10;
                continue;
            }
            apply(&L, cur, d, tri);
            c2 = plausible(&L, tri) ? accumulate(&L, pairs, npairs, tri, NULL, NULL) : INFINITY;
            if (c2 < cost) {
                improved = true;
                memcpy(cur, tri, sizeof(gt_calib_cam) * ncam);
                lambda = fmax(lambda / 10, 1e-12);
            } else {
                lambda *= 10;
            }
        }
        if (!improved) break;
        double rel = (cost - c2) / cost;
        cost = c2;
        if (rel < 1e-12) break;
    }
    /* keep the rotations exactly orthonormal */
    for (int i = 0; i < ncam; i++) {
        double R[9];
        gt_rot_nearest(cur[i].R, R);
        cams[i] = cur[i];
        memcpy(cams[i].R, R, sizeof R);
    }
    free(JtJ);
    return GT_OK;
}
