/* Sub-pixel refinement of a pair's inlier matches (the rotation model's
 * input, gt_calib_refine_matches in calib.h). A keypoint's position is good
 * to about a pixel at its pyramid level, so to several pixels for the
 * coarse levels' corners; the bundle adjustment would inherit that. Here
 * each match (a in camera i, b in camera j) is moved in camera j to where
 * the luma around a looks best: the patch of camera i around a, carried
 * into camera j through the pair's homography H (re-centred on b), is
 * aligned by Gauss-Newton on
 *     sum_x ( I_j(q(x) + t) - (alpha I_i(a + x) + beta) )^2
 * over the shift t and an exposure model alpha, beta, at full resolution
 * with bilinear sampling. A match is kept when the alignment converges
 * within RADIUS pixels of b with a normalised correlation of at least
 * MIN_NCC; the others are dropped (occlusions, parallax, flat patches). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stitch/calib.h"

enum { HALF = 7, SIDE = 2 * HALF + 1, NPIX = SIDE * SIDE, ITERS = 12 };
#define RADIUS 3.0
#define MIN_NCC 0.8

static inline double bilin(const uint8_t *img, int w, int h, int pitch, double u, double v, int *ok)
{
    if (!(u >= 0 && v >= 0 && u <= w - 1.001 && v <= h - 1.001)) {
        *ok = 0;
        return 0;
    }
    int x0 = (int)u, y0 = (int)v;
    double fx = u - x0, fy = v - y0;
    const uint8_t *r0 = img + (size_t)y0 * pitch + x0, *r1 = r0 + pitch;
    double top = r0[0] + fx * (r0[1] - r0[0]), bot = r1[0] + fx * (r1[1] - r1[0]);
    return top + fy * (bot - top);
}

static void map_h(const double H[9], double x, double y, double *u, double *v)
{
    double w = H[6] * x + H[7] * y + H[8];
    *u = (H[0] * x + H[1] * y + H[2]) / w;
    *v = (H[3] * x + H[4] * y + H[5]) / w;
}

/* one match: b refined in place; 0 to drop it */
static int refine_one(const uint8_t *yi, const uint8_t *yj, int w, int h, int pitch, const double H[9], const double *a,
                      double *b)
{
    double T[NPIX], qx[NPIX], qy[NPIX], ha[2];
    int ok = 1;
    map_h(H, a[0], a[1], &ha[0], &ha[1]);
    if (!(H[6] * a[0] + H[7] * a[1] + H[8] > 0)) return 0;
    double tm = 0;
    for (int y = -HALF, k = 0; y <= HALF; y++)
        for (int x = -HALF; x <= HALF; x++, k++) {
            T[k] = bilin(yi, w, h, pitch, a[0] + x, a[1] + y, &ok);
            double u, v;
            map_h(H, a[0] + x, a[1] + y, &u, &v);
            qx[k] = u - ha[0], qy[k] = v - ha[1]; /* the patch's offsets in camera j */
            tm += T[k];
        }
    if (!ok) return 0;
    tm /= NPIX;
    double tv = 0;
    for (int k = 0; k < NPIX; k++) tv += (T[k] - tm) * (T[k] - tm);
    if (tv < NPIX * 4.0) return 0; /* flat: nothing to align on */
    double t[2] = {b[0], b[1]}, al = 1, be = 0;
    for (int it = 0; it < ITERS; it++) {
        double A[16] = {0}, g[4] = {0};
        for (int k = 0; k < NPIX; k++) {
            double u = t[0] + qx[k], v = t[1] + qy[k];
            double I = bilin(yj, w, h, pitch, u, v, &ok);
            double gx = 0.5 * (bilin(yj, w, h, pitch, u + 1, v, &ok) - bilin(yj, w, h, pitch, u - 1, v, &ok));
            double gy = 0.5 * (bilin(yj, w, h, pitch, u, v + 1, &ok) - bilin(yj, w, h, pitch, u, v - 1, &ok));
            if (!ok) return 0;
            double r = I - (al * T[k] + be), J[4] = {gx, gy, -T[k], -1};
            for (int p = 0; p < 4; p++) {
                g[p] += J[p] * r;
                for (int q = 0; q < 4; q++) A[4 * p + q] += J[p] * J[q];
            }
        }
        for (int p = 0; p < 4; p++) g[p] = -g[p];
        if (gt_calib_solve(A, g, 4)) return 0;
        t[0] += g[0], t[1] += g[1], al += g[2], be += g[3];
        if (hypot(t[0] - b[0], t[1] - b[1]) > RADIUS || !(al > 0.2 && al < 5)) return 0;
        if (fabs(g[0]) + fabs(g[1]) < 1e-3) break;
    }
    /* the correlation of the aligned patches */
    double sm = 0, s2 = 0, st = 0, I[NPIX];
    for (int k = 0; k < NPIX; k++) {
        I[k] = bilin(yj, w, h, pitch, t[0] + qx[k], t[1] + qy[k], &ok);
        sm += I[k];
    }
    if (!ok) return 0;
    sm /= NPIX;
    for (int k = 0; k < NPIX; k++) s2 += (I[k] - sm) * (I[k] - sm), st += (I[k] - sm) * (T[k] - tm);
    if (!(st / sqrt(s2 * tv + 1e-12) >= MIN_NCC)) return 0;
    b[0] = t[0], b[1] = t[1];
    return 1;
}

int gt_calib_refine_matches(const uint8_t *yi, const uint8_t *yj, int w, int h, int pitch, const double H[9],
                            double *pa, double *pb, int n)
{
    unsigned char *keep = malloc((size_t)n + 1);
    if (!keep) return n;
#pragma omp parallel for schedule(dynamic, 64)
    for (int k = 0; k < n; k++) keep[k] = (unsigned char)refine_one(yi, yj, w, h, pitch, H, pa + 2 * k, pb + 2 * k);
    int m = 0;
    for (int k = 0; k < n; k++)
        if (keep[k]) {
            pa[2 * m] = pa[2 * k], pa[2 * m + 1] = pa[2 * k + 1];
            pb[2 * m] = pb[2 * k], pb[2 * m + 1] = pb[2 * k + 1];
            m++;
        }
    free(keep);
    return m;
}
