/* One camera pair of the calibration (calib_priv.h): the homography from
 * the ratio-tested matches, guided matching, RANSAC and Levenberg-Marquardt,
 * the plausibility of the result for either camera model, and the dense
 * refinement's correspondences. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "stitch/calib_priv.h"

/* whether H (camera i -> camera j, cameras w x h) is a plausible view
 * change: every corner in front, the warped area within 1/16..16 */
bool gt_calib_sane(const double H[9], int w, int h)
{
    double cx[4] = {0, w - 1.0, w - 1.0, 0}, cy[4] = {0, 0, h - 1.0, h - 1.0}, u[4], v[4];
    for (int k = 0; k < 4; k++) {
        double d = H[6] * cx[k] + H[7] * cy[k] + H[8];
        if (!(d > 1e-6)) return false;
        u[k] = (H[0] * cx[k] + H[1] * cy[k] + H[2]) / d;
        v[k] = (H[3] * cx[k] + H[4] * cy[k] + H[5]) / d;
    }
    double a = 0;
    for (int k = 0; k < 4; k++) a += u[k] * v[(k + 1) % 4] - u[(k + 1) % 4] * v[k];
    a = 0.5 * a / ((w - 1.0) * (h - 1.0));
    return a > 1.0 / 16 && a < 16;
}

/* for the rotation model, where a turn of the rig sends part of one view
 * to infinity in the other: H plausible over the pair's inliers (n points
 * a), in front (w > 0), not mirrored and with a local scale within 1/8..8
 * at every one */
static bool sane_over(const double H[9], const double *a, int n)
{
    for (int k = 0; k < n; k++) {
        double x = a[2 * k], y = a[2 * k + 1], w = H[6] * x + H[7] * y + H[8];
        if (!(w > 0)) return false;
        double u = (H[0] * x + H[1] * y + H[2]) / w, v = (H[3] * x + H[4] * y + H[5]) / w;
        double j00 = (H[0] - u * H[6]) / w, j01 = (H[1] - u * H[7]) / w, j10 = (H[3] - v * H[6]) / w,
               j11 = (H[4] - v * H[7]) / w, det = j00 * j11 - j01 * j10;
        if (!(det > 1.0 / 64 && det < 64)) return false;
    }
    return n > 0;
}

static inline int hamming32(const uint8_t *a, const uint8_t *b)
{
    int d = 0;
    for (int k = 0; k < GT_CALIB_DESC; k += 8) {
        uint64_t x, y;
        memcpy(&x, a + k, 8);
        memcpy(&y, b + k, 8);
        d += __builtin_popcountll(x ^ y);
    }
    return d;
}

/* Guided matching: with a first H, pair each keypoint of i with the keypoint
 * of j nearest in descriptor among those within `radius` px of where H puts
 * it, both ways (mutual), distance at most maxd of 256 (unrelated
 * descriptors differ in about 128 bits). This recovers the true matches
 * that the ratio test dropped among noisy features. m has room for fi->n. */
static int guided(const gt_calib_feat *fi, const gt_calib_feat *fj, const double H[9], double radius, int maxd,
                  gt_calib_match *m)
{
    int *best_i = malloc(sizeof(int) * ((size_t)fi->n + 1)), *best_j = malloc(sizeof(int) * ((size_t)fj->n + 1));
    int *dj = malloc(sizeof(int) * ((size_t)fj->n + 1));
    double *pu = malloc(sizeof(double) * 2 * ((size_t)fi->n + 1));
    if (!best_i || !best_j || !dj || !pu) {
        free(best_i), free(best_j), free(dj), free(pu);
        return 0;
    }
    for (int b = 0; b < fj->n; b++) best_j[b] = -1, dj[b] = 1 << 20;
    double r2 = radius * radius;
    for (int a = 0; a < fi->n; a++) {
        double x = fi->kp[a].x, y = fi->kp[a].y, d = H[6] * x + H[7] * y + H[8];
        pu[2 * a] = d > 0 ? (H[0] * x + H[1] * y + H[2]) / d : -1e30;
        pu[2 * a + 1] = d > 0 ? (H[3] * x + H[4] * y + H[5]) / d : -1e30;
        int bb = -1, bd = maxd + 1;
        for (int b = 0; b < fj->n; b++) {
            double dx = fj->kp[b].x - pu[2 * a], dy = fj->kp[b].y - pu[2 * a + 1];
            if (dx * dx + dy * dy > r2) continue;
            int hd = hamming32(fi->desc + (size_t)a * GT_CALIB_DESC, fj->desc + (size_t)b * GT_CALIB_DESC);
            if (hd < bd) bd = hd, bb = b;
            if (hd < dj[b] || (hd == dj[b] && a < best_j[b])) dj[b] = hd, best_j[b] = a;
        }
        best_i[a] = bb;
    }
    int n = 0;
    for (int a = 0; a < fi->n; a++) {
        int b = best_i[a];
        if (b >= 0 && best_j[b] == a) m[n++] = (gt_calib_match){a, b, dj[b]};
    }
    free(best_i), free(best_j), free(dj), free(pu);
    return n;
}

gt_status gt_calib_fit_pair(const gt_calib_feat *fi, const gt_calib_feat *fj, const gt_calib_match *m0, int nm0,
                            const gt_stitch_calib_opts *o, const uint8_t *yi, const uint8_t *yj, int w, int h,
                            int pitch, uint64_t seed, gt_calib_pair *p)
{
    p->matches = nm0;
    if (nm0 < 4) return GT_OK;
    /* a first model from the ratio-tested matches, then guided matching */
    gt_calib_ransac_opts ro = o->ransac;
    ro.seed = seed;
    {
        double *a = gt_malloc_array((size_t)nm0, 4 * sizeof(double), "pair points");
        if (!a) return GT_ERR_RUNTIME;
        for (int k = 0; k < nm0; k++) {
            a[2 * k] = fi->kp[m0[k].a].x, a[2 * k + 1] = fi->kp[m0[k].a].y;
            a[2 * (size_t)nm0 + 2 * k] = fj->kp[m0[k].b].x, a[2 * (size_t)nm0 + 2 * k + 1] = fj->kp[m0[k].b].y;
        }
        int ninl;
        gt_status rs = gt_calib_ransac(a, a + 2 * (size_t)nm0, nm0, &ro, p->H, NULL, &ninl);
        free(a);
        if (rs || ninl < 6) return GT_OK;
    }
    gt_calib_match *m = gt_malloc_array((size_t)fi->n + 1, sizeof *m, "guided matches");
    if (!m) return GT_ERR_RUNTIME;
    int nm = guided(fi, fj, p->H, 2 * ro.threshold, 64, m);
    if (nm < nm0) { /* keep the ratio-tested matches */
        memcpy(m, m0, (size_t)nm0 * sizeof *m);
        nm = nm0;
    }
    p->matches = nm;
    double *a = gt_malloc_array((size_t)nm, 4 * sizeof(double), "pair points");
    unsigned char *in = gt_malloc((size_t)nm, "pair inliers");
    if (!a || !in) {
        free(a), free(in), free(m);
        return GT_ERR_RUNTIME;
    }
    double *b = a + 2 * (size_t)nm;
    for (int k = 0; k < nm; k++) {
        a[2 * k] = fi->kp[m[k].a].x, a[2 * k + 1] = fi->kp[m[k].a].y;
        b[2 * k] = fj->kp[m[k].b].x, b[2 * k + 1] = fj->kp[m[k].b].y;
    }
    /* the rotation model: every match to sub-pixel accuracy through the first
     * model before the final RANSAC, which then keeps the true matches that
     * a coarse level's keypoint put more than its threshold off (the views
     * of a wide rig overlap where their perspective differs most); a match
     * whose patches do not align is not counted */
    if (o->model == GT_CALIB_ROTATION && yi && yj) {
        nm = gt_calib_refine_matches(yi, yj, w, h, pitch, p->H, a, b, nm);
        p->matches = nm;
    }
    if (nm >= 4 && gt_calib_ransac(a, b, nm, &ro, p->H, in, &p->inliers) == GT_OK) {
        p->pa = malloc(sizeof(double) * 2 * (size_t)p->inliers + 1);
        p->pb = malloc(sizeof(double) * 2 * (size_t)p->inliers + 1);
        if (!p->pa || !p->pb) {
            free(a), free(in), free(m);
            return gt_fail(GT_ERR_RUNTIME, "out of memory (pair inliers)");
        }
        double se = 0, mx = 0;
        for (int k = 0; k < nm; k++)
            if (in[k]) {
                memcpy(p->pa + 2 * p->n, a + 2 * k, 2 * sizeof(double));
                memcpy(p->pb + 2 * p->n, b + 2 * k, 2 * sizeof(double));
                p->n++;
                double e = gt_calib_transfer(p->H, a + 2 * k, b + 2 * k);
                se += e * e;
                mx = fmax(mx, e);
            }
        p->rms = p->n ? sqrt(se / p->n) : 0;
        p->max = mx;
        if (o->model == GT_CALIB_ROTATION) {
            /* the sign of H as the inliers see it: w > 0 */
            double x = p->pa[0], y = p->pa[1];
            if (p->n && p->H[6] * x + p->H[7] * y + p->H[8] < 0)
                for (int k = 0; k < 9; k++) p->H[k] = -p->H[k];
            p->used = sane_over(p->H, p->pa, p->n);
        } else {
            p->used = gt_calib_sane(p->H, w, h);
        }
        p->fa = malloc(sizeof(double) * 2 * (size_t)p->n + 1);
        p->fb = malloc(sizeof(double) * 2 * (size_t)p->n + 1);
        if (!p->fa || !p->fb) {
            free(a), free(in), free(m);
            return gt_fail(GT_ERR_RUNTIME, "out of memory (pair inliers)");
        }
        memcpy(p->fa, p->pa, sizeof(double) * 2 * (size_t)p->n);
        memcpy(p->fb, p->pb, sizeof(double) * 2 * (size_t)p->n);
        p->nf = p->n;
    }
    free(a), free(in), free(m);
    return GT_OK;
}

/* after the dense refinement: the feature inliers' error under the final H
 * (for the report), then points of the overlap and their images as the
 * pair's correspondences for the global refinement */
gt_status gt_calib_final_pair(gt_calib_pair *p, int w, int h)
{
    double se = 0, mx = 0;
    for (int k = 0; k < p->n; k++) {
        double e = gt_calib_transfer(p->H, p->pa + 2 * k, p->pb + 2 * k);
        se += e * e;
        mx = fmax(mx, e);
    }
    p->rms = p->n ? sqrt(se / p->n) : 0;
    p->max = mx;
    enum { G = 24 };
    double *a = malloc(sizeof(double) * 2 * G * G), *b = malloc(sizeof(double) * 2 * G * G);
    if (!a || !b) {
        free(a), free(b);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (pair points)");
    }
    int n = 0;
    for (int gy = 0; gy < G; gy++)
        for (int gx = 0; gx < G; gx++) {
            double x[2] = {(gx + 0.5) * (w - 1) / G, (gy + 0.5) * (h - 1) / G};
            double d = p->H[6] * x[0] + p->H[7] * x[1] + p->H[8];
            if (!(d > 0)) continue;
            double u = (p->H[0] * x[0] + p->H[1] * x[1] + p->H[2]) / d, v = (p->H[3] * x[0] + p->H[4] * x[1] + p->H[5]) / d;
            if (u < 0 || v < 0 || u > w - 1 || v > h - 1) continue;
            a[2 * n] = x[0], a[2 * n + 1] = x[1], b[2 * n] = u, b[2 * n + 1] = v;
            n++;
        }
    if (n < 8) { /* a sliver of overlap: keep the features */
        free(a), free(b);
        return GT_OK;
    }
    free(p->pa), free(p->pb);
    p->pa = a, p->pb = b, p->n = n;
    return GT_OK;
}

