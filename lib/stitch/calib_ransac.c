/* Homographies from point correspondences for the calibration:
 *  - the normalised DLT (Hartley: each point set moved to its centroid and
 *    scaled to a mean distance of sqrt 2; the null vector of A^T A by Jacobi
 *    rotations), and a 4-point solve (8x8 elimination) for RANSAC samples;
 *  - RANSAC with a seeded splitmix64 generator (the same seed, the same
 *    result), adaptive iteration count, degenerate (collinear) samples
 *    skipped, the best consensus refitted on all its inliers until stable;
 *  - Levenberg-Marquardt on the symmetric transfer error of the inliers
 *    (|H a - b|^2 + |H^-1 b - a|^2), 8 parameters of the normalised H with
 *    a forward-difference Jacobian. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "stitch/calib.h"

void gt_calib_ransac_opts_init(gt_calib_ransac_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threshold = 3.0;
    o->max_iters = 4000;
    o->confidence = 0.999;
    o->seed = 1;
    o->lm_iters = 30;
}

static void apply(const double H[9], double x, double y, double *u, double *v)
{
    double w = H[6] * x + H[7] * y + H[8];
    *u = (H[0] * x + H[1] * y + H[2]) / w;
    *v = (H[3] * x + H[4] * y + H[5]) / w;
}

double gt_calib_transfer(const double H[9], const double a[2], const double b[2])
{
    double u, v;
    apply(H, a[0], a[1], &u, &v);
    return hypot(u - b[0], v - b[1]);
}

/* similarity T with T p: centroid to 0, mean distance sqrt 2 */
static void normaliser(const double *p, int n, double T[9])
{
    double cx = 0, cy = 0, d = 0;
    for (int i = 0; i < n; i++) cx += p[2 * i], cy += p[2 * i + 1];
    cx /= n, cy /= n;
    for (int i = 0; i < n; i++) d += hypot(p[2 * i] - cx, p[2 * i + 1] - cy);
    d /= n;
    double s = d > 0 ? sqrt(2.0) / d : 1.0;
    double t[9] = {s, 0, -s * cx, 0, s, -s * cy, 0, 0, 1};
    memcpy(T, t, sizeof t);
}

static void scale_h(double H[9])
{
    double s = fabs(H[8]) > 1e-300 ? H[8] : 1.0;
    for (int k = 0; k < 9; k++) H[k] /= s;
}

/* H = Tb^-1 Hn Ta */
static int denormalise(const double Hn[9], const double Ta[9], const double Tb[9], double H[9])
{
    double Tbi[9], M[9];
    if (gt_stitch_h_invert(Tb, Tbi)) return -1;
    gt_stitch_h_mul(Tbi, Hn, M);
    gt_stitch_h_mul(M, Ta, H);
    if (!(fabs(H[8]) > 1e-12)) return -1;
    scale_h(H);
    for (int k = 0; k < 9; k++)
        if (!isfinite(H[k])) return -1;
    return 0;
}

/* eigenvector of the smallest eigenvalue of the symmetric 9x9 M (Jacobi) */
static void smallest_eigvec(double M[81], double v[9])
{
    double V[81] = {0};
    for (int i = 0; i < 9; i++) V[i * 9 + i] = 1;
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0;
        for (int p = 0; p < 9; p++)
            for (int q = p + 1; q < 9; q++) off += M[p * 9 + q] * M[p * 9 + q];
        if (off < 1e-30) break;
        for (int p = 0; p < 9; p++)
            for (int q = p + 1; q < 9; q++) {
                double apq = M[p * 9 + q];
                if (fabs(apq) < 1e-300) continue;
                double th = (M[q * 9 + q] - M[p * 9 + p]) / (2 * apq);
                double t = (th >= 0 ? 1.0 : -1.0) / (fabs(th) + sqrt(th * th + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 9; k++) { /* columns p, q */
                    double mkp = M[k * 9 + p], mkq = M[k * 9 + q];
                    M[k * 9 + p] = c * mkp - s * mkq;
                    M[k * 9 + q] = s * mkp + c * mkq;
                }
                for (int k = 0; k < 9; k++) { /* rows p, q */
                    double mpk = M[p * 9 + k], mqk = M[q * 9 + k];
                    M[p * 9 + k] = c * mpk - s * mqk;
                    M[q * 9 + k] = s * mpk + c * mqk;
                }
                for (int k = 0; k < 9; k++) {
                    double vkp = V[k * 9 + p], vkq = V[k * 9 + q];
                    V[k * 9 + p] = c * vkp - s * vkq;
                    V[k * 9 + q] = s * vkp + c * vkq;
                }
            }
    }
    int m = 0;
    for (int i = 1; i < 9; i++)
        if (M[i * 9 + i] < M[m * 9 + m]) m = i;
    for (int k = 0; k < 9; k++) v[k] = V[k * 9 + m];
}

gt_status gt_calib_dlt(const double *a, const double *b, int n, double H[9])
{
    if (n < 4) return gt_fail(GT_ERR_DATA, "a homography needs 4 correspondences, got %d", n);
    double Ta[9], Tb[9], M[81] = {0};
    normaliser(a, n, Ta);
    normaliser(b, n, Tb);
    for (int i = 0; i < n; i++) {
        double x, y, u, v;
        x = Ta[0] * a[2 * i] + Ta[2], y = Ta[4] * a[2 * i + 1] + Ta[5];
        u = Tb[0] * b[2 * i] + Tb[2], v = Tb[4] * b[2 * i + 1] + Tb[5];
        double r1[9] = {x, y, 1, 0, 0, 0, -u * x, -u * y, -u};
        double r2[9] = {0, 0, 0, x, y, 1, -v * x, -v * y, -v};
        for (int p = 0; p < 9; p++)
            for (int q = 0; q < 9; q++) M[p * 9 + q] += r1[p] * r1[q] + r2[p] * r2[q];
    }
    double h[9];
    smallest_eigvec(M, h);
    if (denormalise(h, Ta, Tb, H)) return gt_fail(GT_ERR_DATA, "degenerate correspondences (no homography)");
    return GT_OK;
}

/* solve the n x n system A x = b in place (partial pivoting); -1 if singular */
int gt_calib_solve(double *A, double *b, int n)
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r * n + c]) > fabs(A[p * n + c])) p = r;
        if (!(fabs(A[p * n + c]) > 1e-14)) return -1;
        if (p != c) {
            for (int k = 0; k < n; k++) {
                double t = A[c * n + k];
                A[c * n + k] = A[p * n + k];
                A[p * n + k] = t;
            }
            double t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        for (int r = c + 1; r < n; r++) {
            double f = A[r * n + c] / A[c * n + c];
            if (f == 0) continue;
            for (int k = c; k < n; k++) A[r * n + k] -= f * A[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        double s = b[c];
        for (int k = c + 1; k < n; k++) s -= A[c * n + k] * b[k];
        b[c] = s / A[c * n + c];
    }
    return 0;
}

/* four points (normalised coordinates) -> Hn with Hn[8] = 1 */
static int four_point(const double x[8], const double u[8], double Hn[9])
{
    double A[64], r[8];
    for (int i = 0; i < 4; i++) {
        double X = x[2 * i], Y = x[2 * i + 1], U = u[2 * i], V = u[2 * i + 1];
        double a1[8] = {X, Y, 1, 0, 0, 0, -U * X, -U * Y}, a2[8] = {0, 0, 0, X, Y, 1, -V * X, -V * Y};
        memcpy(A + 16 * i, a1, sizeof a1);
        memcpy(A + 16 * i + 8, a2, sizeof a2);
        r[2 * i] = U;
        r[2 * i + 1] = V;
    }
    if (gt_calib_solve(A, r, 8)) return -1;
    memcpy(Hn, r, 8 * sizeof(double));
    Hn[8] = 1;
    return 0;
}

/* twice the signed area of the triangle p q r */
static double area2(const double *p, const double *q, const double *r)
{
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]);
}

static int collinear(const double *p, const int idx[4])
{
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++)
            for (int c = b + 1; c < 4; c++)
                if (fabs(area2(p + 2 * idx[a], p + 2 * idx[b], p + 2 * idx[c])) < 1e-3) return 1;
    return 0;
}

static int count_inliers(const double H[9], const double *a, const double *b, int n, double thr,
                         unsigned char *mask, double *cost)
{
    int k = 0;
    double c = 0, t2 = thr * thr;
    for (int i = 0; i < n; i++) {
        double u, v, w = H[6] * a[2 * i] + H[7] * a[2 * i + 1] + H[8];
        int in = 0;
        if (w > 1e-12) {
            apply(H, a[2 * i], a[2 * i + 1], &u, &v);
            double d2 = (u - b[2 * i]) * (u - b[2 * i]) + (v - b[2 * i + 1]) * (v - b[2 * i + 1]);
            in = d2 < t2;
            c += in ? d2 : t2;
        } else {
            c += t2;
        }
        if (mask) mask[i] = (unsigned char)in;
        k += in;
    }
    if (cost) *cost = c;
    return k;
}

gt_status gt_calib_ransac(const double *a, const double *b, int n, const gt_calib_ransac_opts *o, double H[9],
                          unsigned char *inlier, int *ninl)
{
    *ninl = 0;
    if (n < 4) return gt_fail(GT_ERR_DATA, "%d correspondences (a homography needs at least 4)", n);
    double Ta[9], Tb[9];
    normaliser(a, n, Ta);
    normaliser(b, n, Tb);
    double *na = gt_malloc_array((size_t)n, 4 * sizeof(double), "RANSAC points");
    unsigned char *mask = gt_malloc((size_t)n, "RANSAC inliers");
    double *sa = gt_malloc_array((size_t)n, 4 * sizeof(double), "RANSAC points");
    if (!na || !mask || !sa) {
        free(na), free(mask), free(sa);
        return GT_ERR_RUNTIME;
    }
    double *nb = na + 2 * (size_t)n;
    for (int i = 0; i < n; i++) {
        na[2 * i] = Ta[0] * a[2 * i] + Ta[2], na[2 * i + 1] = Ta[4] * a[2 * i + 1] + Ta[5];
        nb[2 * i] = Tb[0] * b[2 * i] + Tb[2], nb[2 * i + 1] = Tb[4] * b[2 * i + 1] + Tb[5];
    }
    gt_calib_rng rng = {o->seed};
    int best = 0;
    double best_cost = INFINITY, bestH[9] = {0};
    long iters = o->max_iters > 0 ? o->max_iters : 4000, it;
    for (it = 0; it < iters; it++) {
        int idx[4];
        for (int k = 0; k < 4; k++) {
            int again;
            do {
                idx[k] = (int)(gt_calib_rng_next(&rng) % (uint64_t)n);
                again = 0;
                for (int q = 0; q < k; q++) again |= idx[q] == idx[k];
            } while (again);
        }
        if (collinear(na, idx) || collinear(nb, idx)) continue;
        double x[8], u[8], Hn[9], Hc[9];
        for (int k = 0; k < 4; k++) {
            x[2 * k] = na[2 * idx[k]], x[2 * k + 1] = na[2 * idx[k] + 1];
            u[2 * k] = nb[2 * idx[k]], u[2 * k + 1] = nb[2 * idx[k] + 1];
        }
        if (four_point(x, u, Hn) || denormalise(Hn, Ta, Tb, Hc)) continue;
        double cost;
        int k = count_inliers(Hc, a, b, n, o->threshold, NULL, &cost);
        if (k > best || (k == best && cost < best_cost)) {
            best = k;
            best_cost = cost;
            memcpy(bestH, Hc, sizeof bestH);
            double w = (double)k / n, p4 = w * w * w * w;
            if (p4 >= 1) {
                iters = it + 1;
            } else if (p4 > 0) {
                double need = log(1 - o->confidence) / log(1 - p4);
                if (need < iters) iters = (long)ceil(need);
            }
        }
    }
    if (best < 4) {
        free(na), free(mask), free(sa);
        return gt_fail(GT_ERR_DATA, "no homography found (%d correspondences)", n);
    }
    /* refit on the consensus until it stops changing */
    memcpy(H, bestH, sizeof bestH);
    int k = count_inliers(H, a, b, n, o->threshold, mask, NULL);
    for (int round = 0; round < 5; round++) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (mask[i]) {
                memcpy(sa + 2 * m, a + 2 * i, 2 * sizeof(double));
                memcpy(sa + 2 * (size_t)n + 2 * m, b + 2 * i, 2 * sizeof(double));
                m++;
            }
        double Hn[9];
        if (m < 4 || gt_calib_dlt(sa, sa + 2 * (size_t)n, m, Hn)) break;
        if (o->lm_iters > 0) gt_calib_refine_lm(sa, sa + 2 * (size_t)n, m, o->lm_iters, Hn);
        int k2 = count_inliers(Hn, a, b, n, o->threshold, NULL, NULL);
        if (k2 < k) break;
        memcpy(H, Hn, sizeof Hn);
        int same = k2 == k;
        k = count_inliers(H, a, b, n, o->threshold, mask, NULL);
        if (same) break;
    }
    if (inlier) memcpy(inlier, mask, (size_t)n);
    *ninl = k;
    free(na), free(mask), free(sa);
    return GT_OK;
}

/* residuals r (4 per point) of H: H a - b and H^-1 b - a; cost = |r|^2 */
static double residuals(const double H[9], const double *a, const double *b, int n, double *r)
{
    double Hi[9], c = 0;
    if (gt_stitch_h_invert(H, Hi)) return INFINITY;
    for (int i = 0; i < n; i++) {
        double u, v, x, y;
        apply(H, a[2 * i], a[2 * i + 1], &u, &v);
        apply(Hi, b[2 * i], b[2 * i + 1], &x, &y);
        double e[4] = {u - b[2 * i], v - b[2 * i + 1], x - a[2 * i], y - a[2 * i + 1]};
        for (int k = 0; k < 4; k++) {
            if (r) r[4 * i + k] = e[k];
            c += e[k] * e[k];
        }
    }
    return isfinite(c) ? c : INFINITY;
}

/* ------------------------------------------------------------ Levenberg-Marquardt */

gt_status gt_calib_lm(int np, double *x, size_t m, gt_calib_resid_fn f, void *ctx, int iters)
{
    double *r = malloc(m * sizeof(double)), *r2 = malloc(m * sizeof(double));
    double *J = gt_malloc_array((size_t)np * m, sizeof(double), "Levenberg-Marquardt Jacobian");
    double *JtJ = malloc((size_t)np * np * sizeof(double)), *A = malloc((size_t)np * np * sizeof(double));
    double *g = malloc((size_t)np * 3 * sizeof(double));
    if (!r || !r2 || !J || !JtJ || !A || !g) {
        free(r), free(r2), free(J), free(JtJ), free(A), free(g);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (Levenberg-Marquardt)");
    }
    double *d = g + np, *xt = g + 2 * np;
    double cost = f(x, r, ctx), lambda = 1e-3;
    for (int it = 0; it < iters && isfinite(cost) && cost > 0; it++) {
        int bad = 0;
        for (int p = 0; p < np && !bad; p++) {
            memcpy(xt, x, (size_t)np * sizeof(double));
            double step = 1e-7 * fmax(fabs(x[p]), 1e-2);
            xt[p] += step;
            if (!isfinite(f(xt, r2, ctx))) bad = 1;
            for (size_t k = 0; k < m && !bad; k++) J[p * m + k] = (r2[k] - r[k]) / step;
        }
        if (bad) break;
        for (int p = 0; p < np; p++) {
            for (int q = p; q < np; q++) {
                double s = 0;
                for (size_t k = 0; k < m; k++) s += J[p * m + k] * J[q * m + k];
                JtJ[p * np + q] = JtJ[q * np + p] = s;
            }
            double s = 0;
            for (size_t k = 0; k < m; k++) s += J[p * m + k] * r[k];
            g[p] = s;
        }
        int improved = 0;
        for (int tries = 0; tries < 10 && !improved; tries++) {
            memcpy(A, JtJ, (size_t)np * np * sizeof(double));
            for (int p = 0; p < np; p++) {
                A[p * np + p] += lambda * (JtJ[p * np + p] + 1e-12);
                d[p] = -g[p];
            }
            if (gt_calib_solve(A, d, np)) {
                lambda *= 10;
                continue;
            }
            for (int p = 0; p < np; p++) xt[p] = x[p] + d[p];
            double c2 = f(xt, r2, ctx);
            if (c2 < cost) {
                improved = 1;
                double rel = (cost - c2) / cost;
                memcpy(x, xt, (size_t)np * sizeof(double));
                memcpy(r, r2, m * sizeof(double));
                cost = c2;
                if (lambda > 1e-9) lambda /= 10;
                if (rel < 1e-10) it = iters;
            } else {
                lambda *= 10;
            }
        }
        if (!improved) break;
    }
    free(r), free(r2), free(J), free(JtJ), free(A), free(g);
    return GT_OK;
}

/* one pair: parameters are the normalised Hn = Tb H Ta^-1 (Hn[8] = 1) */
typedef struct {
    const double *a, *b;
    int n;
    double Ta[9], Tb[9];
} lm_pair;

static double pair_resid(const double *x, double *r, void *ctx)
{
    const lm_pair *c = ctx;
    double Hn[9], H[9];
    memcpy(Hn, x, 8 * sizeof(double));
    Hn[8] = 1;
    if (denormalise(Hn, c->Ta, c->Tb, H)) return INFINITY;
    return residuals(H, c->a, c->b, c->n, r);
}

void gt_calib_refine_lm(const double *a, const double *b, int n, int iters, double H[9])
{
    if (n < 5) return;
    lm_pair c = {a, b, n, {0}, {0}};
    double Tai[9], M[9], Hn[9];
    normaliser(a, n, c.Ta);
    normaliser(b, n, c.Tb);
    if (gt_stitch_h_invert(c.Ta, Tai)) return;
    gt_stitch_h_mul(c.Tb, H, M);
    gt_stitch_h_mul(M, Tai, Hn);
    if (!(fabs(Hn[8]) > 1e-12)) return;
    scale_h(Hn);
    double before = residuals(H, a, b, n, NULL);
    if (gt_calib_lm(8, Hn, 4 * (size_t)n, pair_resid, &c, iters)) return;
    double Hd[9];
    if (denormalise(Hn, c.Ta, c.Tb, Hd)) return;
    if (residuals(Hd, a, b, n, NULL) <= before) memcpy(H, Hd, sizeof Hd);
}
