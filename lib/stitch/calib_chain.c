/* From pairwise homographies to a rig: every camera placed relative to the
 * reference camera along a maximum spanning tree of the accepted pairs
 * (weighted by inliers, grown from the reference with Prim's algorithm, so
 * each camera hangs on its strongest path), an optional global
 * Levenberg-Marquardt over the inliers of all accepted pairs (for rotating
 * rigs whose loop closes, or cameras seen by several others), and the
 * panorama frame: a translation so that every warped corner is at
 * non-negative coordinates, an even size (for 4:2:2 and 4:2:0 streams), with
 * caps against degenerate chains. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "stitch/calib.h"

void gt_calib_chain_opts_init(gt_calib_chain_opts *o)
{
    memset(o, 0, sizeof *o);
    o->reference = -1;
    o->min_inliers = 20;
    o->max_side = 16384;
    o->max_area_ratio = 4.0;
}

bool gt_calib_pair_ok(const gt_calib_pair *p, int min_inliers)
{
    return p->inliers >= min_inliers && p->inliers >= 8 + 0.3 * p->matches;
}

static void normalise9(double H[9])
{
    double d = H[8];
    if (fabs(d) > 1e-300)
        for (int k = 0; k < 9; k++) H[k] /= d;
}

/* ------------------------------------------------------------ global refinement */

/* camera c (not the reference) is Hc0[c] S^-1 (I + D_c) S, S scaling its
 * pixel coordinates to about [-1, 1]; the parameters are D_c's first 8
 * entries (D_c[8] = 0) */
typedef struct {
    const gt_calib_pair *pairs;
    int npairs, ncam, ref;
    double wp, wf; /* weights of the correspondences (pa, pb) and of the feature inliers (fa, fb); 0: left out */
    int slot[GT_STITCH_MAX_CAMS]; /* parameter block of a camera, -1 for the reference */
    double H0[GT_STITCH_MAX_CAMS][9], S[GT_STITCH_MAX_CAMS][9], Si[GT_STITCH_MAX_CAMS][9];
} global_ctx;

static int camera_h(const global_ctx *c, const double *x, int cam, double H[9])
{
    if (c->slot[cam] < 0) {
        memcpy(H, c->H0[cam], 9 * sizeof(double));
        return 0;
    }
    const double *d = x + 8 * c->slot[cam];
    double D[9] = {1 + d[0], d[1], d[2], d[3], 1 + d[4], d[5], d[6], d[7], 1}, T[9], U[9];
    gt_stitch_h_mul(D, c->S[cam], T);
    gt_stitch_h_mul(c->Si[cam], T, U);
    gt_stitch_h_mul(c->H0[cam], U, H);
    return 0;
}

static double global_resid(const double *x, double *r, void *ctx)
{
    const global_ctx *c = ctx;
    double H[GT_STITCH_MAX_CAMS][9], Hi[GT_STITCH_MAX_CAMS][9], cost = 0;
    for (int i = 0; i < c->ncam; i++) {
        camera_h(c, x, i, H[i]);
        if (gt_stitch_h_invert(H[i], Hi[i])) return INFINITY;
    }
    size_t k = 0;
    for (int p = 0; p < c->npairs; p++) {
        const gt_calib_pair *q = &c->pairs[p];
        if (!q->used) continue;
        double Mij[9], Mji[9];
        gt_stitch_h_mul(Hi[q->j], H[q->i], Mij);
        gt_stitch_h_mul(Hi[q->i], H[q->j], Mji);
        for (int set = 0; set < 2; set++) {
            double s = sqrt(set ? c->wf : c->wp);
            int n = set ? q->nf : q->n;
            if (!(s > 0)) continue;
            for (int t = 0; t < n; t++) {
                const double *a = (set ? q->fa : q->pa) + 2 * t, *b = (set ? q->fb : q->pb) + 2 * t;
                double w1 = Mij[6] * a[0] + Mij[7] * a[1] + Mij[8], w2 = Mji[6] * b[0] + Mji[7] * b[1] + Mji[8];
                double e[4] = {(Mij[0] * a[0] + Mij[1] * a[1] + Mij[2]) / w1 - b[0],
                               (Mij[3] * a[0] + Mij[4] * a[1] + Mij[5]) / w1 - b[1],
                               (Mji[0] * b[0] + Mji[1] * b[1] + Mji[2]) / w2 - a[0],
                               (Mji[3] * b[0] + Mji[4] * b[1] + Mji[5]) / w2 - a[1]};
                for (int u = 0; u < 4; u++) {
                    r[k++] = s * e[u];
                    cost += s * s * e[u] * e[u];
                }
            }
        }
    }
    return isfinite(cost) ? cost : INFINITY;
}

gt_status gt_calib_refine_homographies(const gt_calib_pair *pairs, int npairs, int ncam, int ref, double Hc[][9])
{
    return gt_calib_refine_homographies_joint(pairs, npairs, ncam, ref, 1.0, 0.0, Hc);
}

gt_status gt_calib_refine_homographies_joint(const gt_calib_pair *pairs, int npairs, int ncam, int ref, double wp,
                                             double wf, double Hc[][9])
{
    global_ctx c;
    memset(&c, 0, sizeof c);
    c.pairs = pairs, c.npairs = npairs, c.ncam = ncam, c.ref = ref, c.wp = wp, c.wf = wf;
    int np = 0;
    size_t m = 0;
    for (int i = 0; i < ncam; i++) {
        c.slot[i] = i == ref ? -1 : np++;
        memcpy(c.H0[i], Hc[i], sizeof c.H0[i]);
        /* scale from the camera's inlier spread (its coordinates are pixels) */
        double s = 1e-3;
        for (int p = 0; p < npairs; p++) {
            const gt_calib_pair *q = &pairs[p];
            if (!q->used || (q->i != i && q->j != i)) continue;
            for (int set = 0; set < 2; set++) {
                const double *pts = set ? (q->i == i ? q->fa : q->fb) : (q->i == i ? q->pa : q->pb);
                int n = (set ? wf : wp) > 0 ? (set ? q->nf : q->n) : 0;
                for (int t = 0; t < n; t++) s = fmax(s, fmax(fabs(pts[2 * t]), fabs(pts[2 * t + 1])));
            }
        }
        double S[9] = {1 / s, 0, 0, 0, 1 / s, 0, 0, 0, 1}, Si[9] = {s, 0, 0, 0, s, 0, 0, 0, 1};
        memcpy(c.S[i], S, sizeof S);
        memcpy(c.Si[i], Si, sizeof Si);
    }
    for (int p = 0; p < npairs; p++)
        if (pairs[p].used) m += 4 * ((wp > 0 ? (size_t)pairs[p].n : 0) + (wf > 0 ? (size_t)pairs[p].nf : 0));
    if (np == 0 || m == 0) return GT_OK;
    double *x = gt_calloc((size_t)np * 8, sizeof(double), "global refinement");
    if (!x) return GT_ERR_RUNTIME;
    gt_status st = gt_calib_lm(8 * np, x, m, global_resid, &c, 50);
    if (!st)
        for (int i = 0; i < ncam; i++) {
            camera_h(&c, x, i, Hc[i]);
            normalise9(Hc[i]);
        }
    free(x);
    return st;
}

gt_status gt_calib_feature_rms(gt_calib_pair *pairs, int npairs, double Hc[][9], bool set_pairs, double *rms,
                               double *max)
{
    double se = 0, mx = 0;
    long n = 0;
    for (int q = 0; q < npairs; q++) {
        gt_calib_pair *p = &pairs[q];
        if (!p->used) continue;
        double Hi[9], Hji[9], Hij[9];
        if (gt_stitch_h_invert(Hc[p->j], Hi)) return gt_fail(GT_ERR_DATA, "camera %d: singular homography", p->j + 1);
        gt_stitch_h_mul(Hi, Hc[p->i], Hji); /* i -> j */
        if (gt_stitch_h_invert(Hji, Hij))
            return gt_fail(GT_ERR_DATA, "pair %d-%d: singular homography", p->i + 1, p->j + 1);
        double pse = 0, pmx = 0;
        for (int t = 0; t < p->nf; t++) {
            double e1 = gt_calib_transfer(Hji, p->fa + 2 * t, p->fb + 2 * t);
            double e2 = gt_calib_transfer(Hij, p->fb + 2 * t, p->fa + 2 * t);
            pse += e1 * e1 + e2 * e2, pmx = fmax(pmx, fmax(e1, e2));
        }
        if (set_pairs && p->nf) p->rms = sqrt(pse / (2.0 * p->nf)), p->max = pmx;
        se += pse, mx = fmax(mx, pmx), n += p->nf;
    }
    if (rms) *rms = n ? sqrt(se / (2.0 * n)) : 0;
    if (max) *max = mx;
    return GT_OK;
}

gt_status gt_calib_polish_homographies(gt_calib_pair *pairs, int npairs, int ncam, int ref, double Hc[][9],
                                       double *weight, double *rms_feat)
{
    double H0[GT_STITCH_MAX_CAMS][9], Hf[GT_STITCH_MAX_CAMS][9];
    memcpy(H0, Hc, sizeof(double) * 9 * ncam);
    double ef = NAN, e, bound = GT_CALIB_POLISH_MAX_RMS, lambda = 1;
    for (;;) { /* each weight from the last one's homographies */
        GT_TRY(gt_calib_refine_homographies_joint(pairs, npairs, ncam, ref, lambda, 1.0, Hc));
        GT_TRY(gt_calib_feature_rms(pairs, npairs, Hc, false, &e, NULL));
        gt_info("calibrate: the plane's polish, the overlaps' points weighted %.4g: the features' RMS %.3f px%s", lambda,
                e, e <= bound ? "" : " (beyond the bound)");
        if (e <= bound || lambda <= GT_CALIB_POLISH_MIN_WEIGHT) break;
        if (isnan(ef)) { /* the features alone, once: the bound */
            memcpy(Hf, H0, sizeof(double) * 9 * ncam);
            GT_TRY(gt_calib_refine_homographies_joint(pairs, npairs, ncam, ref, 0.0, 1.0, Hf));
            GT_TRY(gt_calib_feature_rms(pairs, npairs, Hf, false, &ef, NULL));
            bound = fmax(GT_CALIB_POLISH_MAX_RMS, ef * (1 + GT_CALIB_POLISH_BOUND_REL));
            gt_info("calibrate: the plane's homographies fitted to the features alone: RMS %.3f px, the bound %.3f px",
                    ef, bound);
            if (e <= bound) break;
        }
        lambda /= 2;
    }
    if (weight) *weight = lambda;
    if (rms_feat) *rms_feat = ef;
    return GT_OK;
}

/* ------------------------------------------------------------ the chain */

gt_status gt_calib_tree(gt_calib_pair *pairs, int npairs, int ncam, const gt_calib_chain_opts *o, int ref, int order[],
                        int via[])
{
    if (ref < 0 || ref >= ncam) return gt_fail(GT_ERR_USAGE, "--reference %d: there are %d cameras", ref + 1, ncam);
    bool placed[GT_STITCH_MAX_CAMS] = {false};
    for (int p = 0; p < npairs; p++) {
        pairs[p].used = gt_calib_pair_ok(&pairs[p], o->min_inliers) && pairs[p].used;
        pairs[p].tree = false;
    }
    placed[ref] = true;
    order[0] = ref;
    via[ref] = -1;
    for (int added = 1; added < ncam; added++) {
        int bp = -1;
        for (int p = 0; p < npairs; p++) {
            const gt_calib_pair *q = &pairs[p];
            if (!q->used || placed[q->i] == placed[q->j]) continue;
            if (bp < 0 || q->inliers > pairs[bp].inliers) bp = p;
        }
        if (bp < 0) {
            /* name an unplaced camera and its strongest pair */
            int cam = -1;
            for (int i = 0; i < ncam && cam < 0; i++)
                if (!placed[i]) cam = i;
            int best = -1;
            for (int p = 0; p < npairs; p++) {
                const gt_calib_pair *q = &pairs[p];
                if ((q->i == cam || q->j == cam) && (best < 0 || q->inliers > pairs[best].inliers)) best = p;
            }
            if (best < 0)
                return gt_fail(GT_ERR_DATA, "camera %d cannot be placed: it has no pair with another camera", cam + 1);
            const gt_calib_pair *q = &pairs[best];
            return gt_fail(GT_ERR_DATA,
                           "camera %d cannot be placed: its best pair %d-%d has %d inliers of %d matches (at least "
                           "%d, and 8 + 0.3 x matches, are needed): do the views overlap? (more overlap between "
                           "neighbouring cameras, or --min-inliers)",
                           cam + 1, q->i + 1, q->j + 1, q->inliers, q->matches, o->min_inliers);
        }
        gt_calib_pair *q = &pairs[bp];
        q->tree = true;
        int to = placed[q->i] ? q->j : q->i;
        placed[to] = true;
        order[added] = to;
        via[to] = bp;
    }
    return GT_OK;
}

gt_status gt_calib_chain(gt_calib_pair *pairs, int npairs, int ncam, const gt_calib_chain_opts *o, double Hc[][9])
{
    int ref = o->reference >= 0 ? o->reference : (ncam - 1) / 2;
    int order[GT_STITCH_MAX_CAMS], via[GT_STITCH_MAX_CAMS];
    GT_TRY(gt_calib_tree(pairs, npairs, ncam, o, ref, order, via));
    const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(Hc[ref], I, sizeof I);
    for (int k = 1; k < ncam; k++) {
        int to = order[k];
        const gt_calib_pair *q = &pairs[via[to]];
        int from = q->i == to ? q->j : q->i;
        double Hto_from[9]; /* camera `to` -> camera `from` */
        if (to == q->i) {
            memcpy(Hto_from, q->H, sizeof Hto_from);
        } else if (gt_stitch_h_invert(q->H, Hto_from)) {
            return gt_fail(GT_ERR_DATA, "pair %d-%d: singular homography", q->i + 1, q->j + 1);
        }
        gt_stitch_h_mul(Hc[from], Hto_from, Hc[to]);
        normalise9(Hc[to]);
    }
    if (o->global) GT_TRY(gt_calib_refine_homographies(pairs, npairs, ncam, ref, Hc));
    return GT_OK;
}

gt_status gt_calib_frame(double Hc[][9], int ncam, const int *w, const int *h, const gt_calib_chain_opts *o,
                         gt_stitch_rig *rig)
{
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY, area = 0;
    for (int i = 0; i < ncam; i++) {
        area += (double)w[i] * h[i];
        /* the border, not only the corners: a camera is convex, its image too
         * as long as no point of it reaches the horizon */
        for (int k = 0; k < 4; k++)
            for (int s = 0; s <= 16; s++) {
                double t = s / 16.0, cx[4] = {t * (w[i] - 1), w[i] - 1, (1 - t) * (w[i] - 1), 0},
                       cy[4] = {0, t * (h[i] - 1), h[i] - 1, (1 - t) * (h[i] - 1)};
                const double *H = Hc[i];
                double d = H[6] * cx[k] + H[7] * cy[k] + H[8];
                double scale = fabs(H[6]) * w[i] + fabs(H[7]) * h[i] + fabs(H[8]);
                if (!(d > 1e-3 * scale))
                    return gt_fail(GT_ERR_DATA,
                                   "camera %d: its point (%.0f, %.0f) maps to infinity in the reference camera's "
                                   "view: the chain is degenerate (a view turned 90 degrees or more from the "
                                   "reference); try another --reference",
                                   i + 1, cx[k], cy[k]);
                double u = (H[0] * cx[k] + H[1] * cy[k] + H[2]) / d, v = (H[3] * cx[k] + H[4] * cy[k] + H[5]) / d;
                x0 = fmin(x0, u), y0 = fmin(y0, v), x1 = fmax(x1, u), y1 = fmax(y1, v);
            }
    }
    double fx = floor(x0), fy = floor(y0);
    double W = ceil(x1) - fx + 1, Hh = ceil(y1) - fy + 1;
    W += fmod(W, 2), Hh += fmod(Hh, 2); /* even: 4:2:2 and 4:2:0 streams need it */
    if (!(W <= o->max_side && Hh <= o->max_side && W * Hh <= o->max_area_ratio * area))
        return gt_fail(GT_ERR_DATA,
                       "the panorama would be %.0fx%.0f pixels, more than the cap (%d a side, %g times the "
                       "cameras' %.0f pixels): the chain is degenerate (a camera is nearly edge-on to the "
                       "reference); check the pairs and try another --reference",
                       W, Hh, o->max_side, o->max_area_ratio, area);
    rig->pano_w = (int)W;
    rig->pano_h = (int)Hh;
    rig->ncam = ncam;
    const double T[9] = {1, 0, -fx, 0, 1, -fy, 0, 0, 1};
    for (int i = 0; i < ncam; i++) {
        gt_stitch_cam *c = &rig->cam[i];
        gt_stitch_h_mul(T, Hc[i], c->H);
        normalise9(c->H);
        GT_TRY(gt_stitch_h_invert(c->H, c->Hinv));
        if (!(c->gain > 0)) c->gain = 1.0f;
        if (!(c->gain_u > 0)) c->gain_u = 1.0f;
        if (!(c->gain_v > 0)) c->gain_v = 1.0f;
    }
    return GT_OK;
}
