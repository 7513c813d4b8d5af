/* The stitching plan: per-plane matrices, camera regions, distance
 * transforms, seams (owner maps), feather weights and multiband mask
 * pyramids, computed once from the rig before the first frame.
 *
 * Work on per-camera boxes. A camera covers a fraction of the panorama, so
 * everything that is zero outside its footprint is computed inside a box:
 *   - region: the box of its footprint (the camera's corners mapped through
 *     H, convex while every corner maps in front, w > 0), with a margin of
 *     3 pixels whose outer ring must test outside (else the whole panorama);
 *   - distance transform: on that box; the ring is outside, so the nearest
 *     outside pixel of any pixel in the box lies in the box (clamping a
 *     point to a box that holds p brings it no farther from p) and the
 *     distances equal the whole panorama's, bit for bit;
 *   - mask pyramid level k: zero outside the box of the owner's samples
 *     grown by the reduce's support ([2x-2, 2x+2], reflect-101 stays inside
 *     it), reduced there with the same arithmetic; normalised where the
 *     camera's level is nonzero (adding a zero leaves a sum as it is), and
 *     not at level 0, whose masks are one-hot (x / 1 = x).
 * tests/stitch/test_stitch_plan.c holds the whole-panorama computation and
 * checks that the plan equals it bit for bit. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/timer.h"
#include "io/yuv.h"
#include "stitch/proj.h"
#include "stitch/stitch.h"
#include "stitch/stitch_math.h"
#include "stitch/stitch_priv.h"

void gt_stitch_plan_opts_init(gt_stitch_plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->blend = GT_BLEND_MULTIBAND;
    o->bands = 5;
    o->feather_alpha = 0.01f;
}

void gt_stitch_plan_free(gt_stitch_plan *plan)
{
    if (!plan) return;
    for (int p = 0; p < 3; p++) {
        free(plan->plane[p].owner);
        free(plan->plane[p].weight);
        free(plan->plane[p].tab);
        for (int k = 0; k < GT_STITCH_MAX_BANDS; k++) free(plan->plane[p].mbw[k]);
    }
    free(plan->owner_luma);
    free(plan->dist_luma);
    memset(plan, 0, sizeof *plan);
}

void gt_stitch_plan_set_gains(gt_stitch_plan *plan, const float gains[3][GT_STITCH_MAX_CAMS])
{
    for (int p = 0; p < 3; p++)
        for (int i = 0; i < plan->ncam; i++) {
            plan->plane[p].gain[i] = gains[p][i];
            plan->plane[p].bias[i] = p == 0 ? 0.0f : plan->plane[p].black * (1.0f - gains[p][i]);
        }
}

static void plane_matrix(const double Hinv[9], const gt_plane_view *pp, const gt_plane_view *cp, float P[9])
{
    double Sp[9] = {pp->sx, 0, pp->ox, 0, pp->sy, pp->oy, 0, 0, 1};
    double Sci[9] = {1.0 / cp->sx, 0, -cp->ox / cp->sx, 0, 1.0 / cp->sy, -cp->oy / cp->sy, 0, 0, 1};
    double T[9], M[9];
    gt_stitch_h_mul(Hinv, Sp, T);
    gt_stitch_h_mul(Sci, T, M);
    /* normalise so the largest entry of the last row is 1-ish: keeps floats
     * tame; by |M[8]|, which keeps the sign of w (Hinv maps the camera's
     * points to w > 0; M[8] < 0 when the panorama's origin lies behind the
     * camera, as on a wide plane) */
    double s = fabs(M[8]) > 0 ? fabs(M[8]) : 1.0;
    for (int k = 0; k < 9; k++) P[k] = (float)(M[k] / s);
}

/* ------------------------------------------------------------ boxes */

typedef struct {
    int x0, y0, x1, y1; /* inclusive; x1 < x0 or y1 < y0: empty */
} box;

/* boxes of fewer samples are worked on by one thread: the mask pyramids'
 * coarse levels would otherwise cost more in forks and barriers than work */
#define PAR_MIN (1 << 16)

static bool box_empty(box b) { return b.x1 < b.x0 || b.y1 < b.y0; }
static box box_clip(box b, int w, int h)
{
    box r = {b.x0 < 0 ? 0 : b.x0, b.y0 < 0 ? 0 : b.y0, b.x1 > w - 1 ? w - 1 : b.x1, b.y1 > h - 1 ? h - 1 : b.y1};
    return r;
}

/* The box of a footprint's bounds lo..hi (x, y) grown by margin and
 * clipped to the panorama; empty when it lies beyond the margin */
static box grow_clip(double lo[2], double hi[2], int W, int Hh, int margin)
{
    /* far off the panorama: keep the numbers in int range */
    if (hi[0] < -margin || hi[1] < -margin || lo[0] > W + margin || lo[1] > Hh + margin) return (box){0, 0, -1, -1};
    lo[0] = fmax(lo[0], -margin - 1.0), lo[1] = fmax(lo[1], -margin - 1.0);
    hi[0] = fmin(hi[0], W + margin + 1.0), hi[1] = fmin(hi[1], Hh + margin + 1.0);
    box b = {(int)floor(lo[0]) - margin, (int)floor(lo[1]) - margin, (int)ceil(hi[0]) + margin,
             (int)ceil(hi[1]) + margin};
    return box_clip(b, W, Hh);
}

/* Panorama box of camera (H: camera -> panorama) with a cw x ch luma plane:
 * its corners' bounding box grown by `margin`; the whole panorama when a
 * corner maps behind (the footprint is then unbounded). */
static box footprint_box(const double H[9], int cw, int ch, int W, int Hh, int margin)
{
    box all = {0, 0, W - 1, Hh - 1};
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int c = 0; c < 4; c++) {
        double u = c & 1 ? cw - 1 : 0, v = c & 2 ? ch - 1 : 0;
        double w = H[6] * u + H[7] * v + H[8];
        if (!(w > 1e-12)) return all;
        double x = (H[0] * u + H[1] * v + H[2]) / w, y = (H[3] * u + H[4] * v + H[5]) / w;
        lo[0] = fmin(lo[0], x), hi[0] = fmax(hi[0], x);
        lo[1] = fmin(lo[1], y), hi[1] = fmax(hi[1], y);
    }
    return grow_clip(lo, hi, W, Hh, margin);
}

/* Panorama box of rotation-model camera i of a rig stitched through rays:
 * its border sampled densely (a straight edge of the view is a curve in the
 * panorama), the whole width when the curve crosses the panorama's
 * longitude seam or the camera sees a pole (then also up to that edge), the
 * whole panorama when a border point cannot be shown; grown by `margin`.
 * The plan's ring test catches a box that still misses the footprint. */
static box footprint_box_ray(const gt_stitch_rig *rig, int i, int cw, int ch, int W, int Hh, int margin)
{
    enum { S = 512 };
    box all = {0, 0, W - 1, Hh - 1};
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY}, first = 0, prev = 0;
    bool wrap = false;
    for (int k = 0; k < 4 * S; k++) {
        int e = k / S;
        double t = (double)(k % S) / S, u, v, X, Y;
        u = e == 0 ? t * (cw - 1) : e == 1 ? cw - 1 : e == 2 ? (1 - t) * (cw - 1) : 0;
        v = e == 0 ? 0 : e == 1 ? t * (ch - 1) : e == 2 ? ch - 1 : (1 - t) * (ch - 1);
        if (!gt_stitch_rig_to_pano(rig, i, u, v, &X, &Y)) return all;
        if (k == 0) first = X;
        else if (fabs(X - prev) > W / 2.0) wrap = true;
        prev = X;
        lo[0] = fmin(lo[0], X), hi[0] = fmax(hi[0], X);
        lo[1] = fmin(lo[1], Y), hi[1] = fmax(hi[1], Y);
    }
    if (fabs(first - prev) > W / 2.0) wrap = true;
    for (int pole = -1; pole <= 1; pole += 2) { /* (0, -1, 0) is up */
        double d[3] = {0, pole, 0}, u, v;
        if (gt_cam_pixel(&rig->cam[i], d, &u, &v) && u >= 0 && v >= 0 && u <= cw - 1 && v <= ch - 1) {
            wrap = true;
            if (pole < 0) lo[1] = -margin - 1.0;
            else hi[1] = Hh + margin + 1.0;
        }
    }
    if (wrap) lo[0] = -margin - 1.0, hi[0] = W + margin + 1.0;
    return grow_clip(lo, hi, W, Hh, margin);
}

/* the float test of the plan's region at panorama pixel (x, y): camera i of
 * the luma plane maps it into its view */
static inline uint8_t in_footprint(const gt_stitch_plane *pl, int i, int in_w, int in_h, int x, int y)
{
    float u, v;
    int ok = pl->ray ? gt_sp_map(pl->cam[i], pl->tab[x], pl->tab[pl->out.w + x], pl->tab[2 * pl->out.w + y],
                                 pl->tab[2 * pl->out.w + pl->out.h + y], &u, &v)
                     : gt_sm_project(pl->P[i], (float)x, (float)y, &u, &v);
    return ok && u >= 0 && v >= 0 && u <= (float)(in_w - 1) && v <= (float)(in_h - 1);
}

/* Row y's footprint in exact arithmetic with P's values: the x where
 * w > 0, 0 <= u w <= (in_w - 1) w and 0 <= v w <= (in_h - 1) w, each linear
 * in x, so an interval [*lo, *hi] (empty: *lo > *hi). */
static void row_interval(const float *P, int in_w, int in_h, int y, double *lo, double *hi)
{
    double p[9], yy = y;
    for (int k = 0; k < 9; k++) p[k] = P[k];
    double wa = p[6], wb = p[7] * yy + p[8], ua = p[0], ub = p[1] * yy + p[2], va = p[3], vb = p[4] * yy + p[5];
    double c[5][2] = {{wa, wb},
                      {ua, ub},
                      {(in_w - 1) * wa - ua, (in_w - 1) * wb - ub},
                      {va, vb},
                      {(in_h - 1) * wa - va, (in_h - 1) * wb - vb}}; /* a x + b >= 0 */
    *lo = -INFINITY, *hi = INFINITY;
    for (int k = 0; k < 5; k++) {
        double a = c[k][0], b = c[k][1];
        if (a > 0) *lo = fmax(*lo, -b / a);
        else if (a < 0) *hi = fmin(*hi, -b / a);
        else if (b < 0) *lo = INFINITY, *hi = -INFINITY;
    }
}

/* Camera region (footprint and mask) over box b into r (box-sized). With
 * `tame` (the box holds the footprint of a camera whose corners all map in
 * front, and w varies by less than 4x over the box, so the float test is
 * off its exact value by far less than a pixel), the float test is
 * evaluated only within EDGE pixels of each row's exact interval: inside
 * and outside beyond those are certain. */
static void region_in(const gt_stitch_plane *pl, int i, int in_w, int in_h, const uint8_t *mask, int W, box b, bool tame,
                      uint8_t *r)
{
    const float *P = pl->P[i];
    enum { EDGE = 4 };
    int bw = b.x1 - b.x0 + 1;
#pragma omp parallel for schedule(static)
    for (int y = b.y0; y <= b.y1; y++) {
        uint8_t *o = r + (size_t)(y - b.y0) * bw - b.x0;
        const uint8_t *m = mask ? mask + (size_t)y * W : NULL;
        double lo = -INFINITY, hi = INFINITY;
        if (tame) row_interval(P, in_w, in_h, y, &lo, &hi);
        for (int x = b.x0; x <= b.x1; x++) {
            double xd = x;
            uint8_t in;
            if (tame && (xd < lo - EDGE || xd > hi + EDGE)) in = 0;
            else if (tame && xd > lo + EDGE && xd < hi - EDGE) in = 1;
            else in = in_footprint(pl, i, in_w, in_h, x, y);
            o[x] = in && (!m || m[x]);
        }
    }
}

/* the float test can be skipped away from the footprint's edges (see
 * region_in): the box is bounded and w over it within a factor of 4 */
static bool tame_box(const float *P, box b, box all)
{
    if (b.x0 == all.x0 && b.y0 == all.y0 && b.x1 == all.x1 && b.y1 == all.y1) return false;
    double lo = INFINITY, hi = 0;
    for (int c = 0; c < 4; c++) {
        double x = c & 1 ? b.x1 : b.x0, y = c & 2 ? b.y1 : b.y0;
        double w = (double)P[6] * x + (double)P[7] * y + (double)P[8];
        if (!(w > 0)) return false;
        lo = fmin(lo, w), hi = fmax(hi, w);
    }
    return hi <= 4 * lo;
}

/* the box's edges that are not panorama borders are all outside */
static bool ring_outside(const uint8_t *r, box b, int W, int Hh)
{
    int bw = b.x1 - b.x0 + 1, bh = b.y1 - b.y0 + 1;
    for (int x = 0; x < bw; x++)
        if ((b.y0 > 0 && r[x]) || (b.y1 < Hh - 1 && r[(size_t)(bh - 1) * bw + x])) return false;
    for (int y = 0; y < bh; y++)
        if ((b.x0 > 0 && r[(size_t)y * bw]) || (b.x1 < W - 1 && r[(size_t)y * bw + bw - 1])) return false;
    return true;
}

/* boxes of the samples owned by each camera in an owner map (w x h) */
static void owner_boxes(const uint8_t *owner, int w, int h, int N, box *ob)
{
    for (int i = 0; i < N; i++) ob[i] = (box){w, h, -1, -1};
#pragma omp parallel
    {
        box t[GT_STITCH_MAX_CAMS];
        for (int i = 0; i < N; i++) t[i] = (box){w, h, -1, -1};
#pragma omp for schedule(static)
        for (int y = 0; y < h; y++) {
            const uint8_t *r = owner + (size_t)y * w;
            for (int x = 0; x < w; x++) {
                int i = r[x];
                if (i >= N) continue;
                if (x < t[i].x0) t[i].x0 = x;
                if (x > t[i].x1) t[i].x1 = x;
                if (y < t[i].y0) t[i].y0 = y;
                if (y > t[i].y1) t[i].y1 = y;
            }
        }
#pragma omp critical
        for (int i = 0; i < N; i++) {
            if (t[i].x0 < ob[i].x0) ob[i].x0 = t[i].x0;
            if (t[i].y0 < ob[i].y0) ob[i].y0 = t[i].y0;
            if (t[i].x1 > ob[i].x1) ob[i].x1 = t[i].x1;
            if (t[i].y1 > ob[i].y1) ob[i].y1 = t[i].y1;
        }
    }
}

/* bounding box of the nonzero samples of m (w wide) inside b: {x0, y0, x1,
 * y1}, or {0, 0, -1, -1} when there are none */
static void nonzero_box(const float *m, int w, box b, int out[4])
{
    int x0 = b.x1 + 1, y0 = b.y1 + 1, x1 = -1, y1 = -1;
    if (!box_empty(b)) {
        bool par = (long)(b.x1 - b.x0 + 1) * (b.y1 - b.y0 + 1) >= PAR_MIN;
#pragma omp parallel for schedule(static) reduction(min : x0, y0) reduction(max : x1, y1) if (par)
        for (int y = b.y0; y <= b.y1; y++) {
            const float *r = m + (size_t)y * w;
            int lo = b.x0;
            while (lo <= b.x1 && r[lo] == 0.0f) lo++;
            if (lo > b.x1) continue;
            int hi = b.x1;
            while (r[hi] == 0.0f) hi--;
            if (y < y0) y0 = y;
            if (y > y1) y1 = y;
            if (lo < x0) x0 = lo;
            if (hi > x1) x1 = hi;
        }
    }
    if (x1 < 0) x0 = y0 = 0, x1 = y1 = -1;
    out[0] = x0, out[1] = y0, out[2] = x1, out[3] = y1;
}

/* ------------------------------------------------------------ steps */

/* Regions and distance transforms of every camera into plan->dist_luma
 * (zeroed); cb[i] gets the box outside which camera i's distances are 0. */
static gt_status regions_and_distances(gt_stitch_plan *plan, const gt_stitch_rig *rig, const gt_stitch_plan_opts *o,
                                       box *cb, double *t_region, double *t_edt)
{
    int W = plan->pano_w, Hh = plan->pano_h, N = plan->ncam;
    size_t NP = (size_t)W * Hh;
    box all = {0, 0, W - 1, Hh - 1};
    for (int i = 0; i < N; i++) { /* from Hinv, which the region test uses (as the frames do) */
        double Hf[9];
        if (plan->plane[0].ray) cb[i] = footprint_box_ray(rig, i, plan->in_w, plan->in_h, W, Hh, 3);
        else cb[i] = gt_stitch_h_invert(rig->cam[i].Hinv, Hf) ? all : footprint_box(Hf, plan->in_w, plan->in_h, W, Hh, 3);
    }
    /* panorama-sized (a box may grow to the whole panorama); only the boxes' pages are touched */
    uint8_t *region = gt_malloc(NP, "camera region");
    double *sq = gt_malloc_array(NP, sizeof(double), "distance transform");
    float *dist = gt_malloc_array(NP, sizeof(float), "distance map");
    gt_status st = region && sq && dist ? GT_OK : GT_ERR_RUNTIME;
    for (int i = 0; i < N && !st; i++) {
        double t0 = gt_now_ms();
        const gt_stitch_plane *l0 = &plan->plane[0];
        if (box_empty(cb[i])) continue;
        bool tame = !l0->ray && tame_box(l0->P[i], cb[i], all);
        region_in(l0, i, plan->in_w, plan->in_h, o->masks[i], W, cb[i], tame, region);
        if (!ring_outside(region, cb[i], W, Hh)) { /* not bounded by its corners: the whole panorama */
            gt_info("plan: camera %d: region reaches its corner box's edge, computed on the whole panorama", i + 1);
            cb[i] = all;
            region_in(l0, i, plan->in_w, plan->in_h, o->masks[i], W, cb[i], false, region);
        }
        double t1 = gt_now_ms();
        *t_region += t1 - t0;
        box b = cb[i];
        int bw = b.x1 - b.x0 + 1, bh = b.y1 - b.y0 + 1;
        if ((st = gt_stitch_edt_ws(region, bw, bh, (float)(W + Hh), dist, sq))) break;
        float *d = plan->dist_luma + NP * i;
#pragma omp parallel for schedule(static)
        for (int y = 0; y < bh; y++)
            memcpy(d + (size_t)(b.y0 + y) * W + b.x0, dist + (size_t)y * bw, (size_t)bw * sizeof(float));
        *t_edt += gt_now_ms() - t1;
    }
    free(region);
    free(sq);
    free(dist);
    return st;
}

/* owner = camera farthest inside its region (ties: lowest index), over each
 * camera's box only (its distances are 0 elsewhere) */
static void seams(gt_stitch_plan *plan, const box *cb)
{
    int W = plan->pano_w, Hh = plan->pano_h, N = plan->ncam;
    size_t NP = (size_t)W * Hh;
#pragma omp parallel
    {
        float *bd = malloc((size_t)W * sizeof(float));
        if (!bd) abort(); /* one row */
#pragma omp for schedule(static)
        for (int y = 0; y < Hh; y++) {
            uint8_t *ow = plan->owner_luma + (size_t)y * W;
            memset(ow, 255, (size_t)W);
            for (int x = 0; x < W; x++) bd[x] = 0;
            for (int i = 0; i < N; i++) {
                if (box_empty(cb[i]) || y < cb[i].y0 || y > cb[i].y1) continue;
                const float *d = plan->dist_luma + NP * i + (size_t)y * W;
                for (int x = cb[i].x0; x <= cb[i].x1; x++)
                    if (d[x] > bd[x]) {
                        bd[x] = d[x];
                        ow[x] = (uint8_t)i;
                    }
            }
        }
        free(bd);
    }
}

/* feather: full-resolution weights min(1, alpha d) normalised over the cameras */
static void feather_weights(const gt_stitch_plan *plan, float *wl)
{
    size_t NP = (size_t)plan->pano_w * plan->pano_h;
    int N = plan->ncam;
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < NP; j++) {
        float sum = 0;
        for (int i = 0; i < N; i++) {
            float w = fminf(1.0f, plan->feather_alpha * plan->dist_luma[NP * i + j]);
            wl[NP * i + j] = w;
            sum += w;
        }
        for (int i = 0; i < N; i++) wl[NP * i + j] = sum > 0 ? wl[NP * i + j] / sum : 0.0f;
    }
}

/* the multiband mask pyramids of plane pl (owner map set), on boxes */
static gt_status mask_pyramids(gt_stitch_plane *pl, int N, int bands)
{
    int pw = pl->out.w, ph = pl->out.h;
    size_t n = (size_t)pw * ph;
    int L = gt_stitch_levels(pw, ph, bands);
    pl->levels = L;
    pl->lw[0] = pw;
    pl->lh[0] = ph;
    for (int k = 1; k < L; k++) {
        pl->lw[k] = (pl->lw[k - 1] + 1) / 2;
        pl->lh[k] = (pl->lh[k - 1] + 1) / 2;
    }
    for (int k = 0; k < L; k++)
        if (!(pl->mbw[k] = gt_calloc((size_t)pl->lw[k] * pl->lh[k] * N, sizeof(float), "mask pyramid")))
            return GT_ERR_RUNTIME;
    /* win[k][i]: where camera i's level k may be nonzero */
    box win[GT_STITCH_MAX_BANDS][GT_STITCH_MAX_CAMS];
    owner_boxes(pl->owner, pw, ph, N, win[0]);
    for (int i = 0; i < N; i++) {
        /* the unnormalised pyramid of the one-hot mask: level 0 inside the
         * owner's box, each level from the one above (the masks are
         * normalised per level afterwards) */
        box b = win[0][i];
        if (!box_empty(b)) {
            float *m0 = pl->mbw[0] + n * i;
#pragma omp parallel for schedule(static)
            for (int y = b.y0; y <= b.y1; y++)
                for (int x = b.x0; x <= b.x1; x++) m0[(size_t)y * pw + x] = pl->owner[(size_t)y * pw + x] == i ? 1.0f : 0.0f;
        }
        for (int k = 1; k < L; k++) {
            /* outputs whose taps [2x-2, 2x+2] meet the finer level's box */
            if (!box_empty(b)) b = box_clip((box){(b.x0 - 2) >> 1, (b.y0 - 2) >> 1, (b.x1 + 2) >> 1, (b.y1 + 2) >> 1},
                                           pl->lw[k], pl->lh[k]);
            win[k][i] = b;
            if (box_empty(b)) continue;
            int rb[4] = {b.x0, b.y0, b.x1, b.y1};
            size_t nk1 = (size_t)pl->lw[k - 1] * pl->lh[k - 1], nk = (size_t)pl->lw[k] * pl->lh[k];
            gt_stitch_reduce_box(pl->mbw[k - 1] + nk1 * i, pl->lw[k - 1], pl->lh[k - 1], pl->mbw[k] + nk * i, rb);
        }
    }
    for (int k = 0; k < L; k++) {
        int w = pl->lw[k], h = pl->lh[k];
        size_t nk = (size_t)w * h;
        float *m = pl->mbw[k];
        if (k > 0) { /* normalise (level 0 is one-hot: already normalised), row by row over the
                      * cameras' boxes: the sum adds the cameras in order, as over the whole level */
            int y0 = h, y1 = -1;
            for (int i = 0; i < N; i++)
                if (!box_empty(win[k][i])) {
                    y0 = win[k][i].y0 < y0 ? win[k][i].y0 : y0;
                    y1 = win[k][i].y1 > y1 ? win[k][i].y1 : y1;
                }
#pragma omp parallel if (nk >= PAR_MIN)
            {
                float *sum = malloc((size_t)w * sizeof(float));
                if (!sum) abort(); /* one row */
#pragma omp for schedule(static)
                for (int y = y0; y <= y1; y++) {
                    for (int x = 0; x < w; x++) sum[x] = 0;
                    for (int i = 0; i < N; i++) {
                        box b = win[k][i];
                        if (box_empty(b) || y < b.y0 || y > b.y1) continue;
                        const float *r = m + nk * i + (size_t)y * w;
                        for (int x = b.x0; x <= b.x1; x++) sum[x] += r[x];
                    }
                    for (int i = 0; i < N; i++) {
                        box b = win[k][i];
                        if (box_empty(b) || y < b.y0 || y > b.y1) continue;
                        float *r = m + nk * i + (size_t)y * w;
                        for (int x = b.x0; x <= b.x1; x++) r[x] = sum[x] > 0 ? r[x] / sum[x] : 0.0f;
                    }
                }
                free(sum);
            }
        }
        for (int i = 0; i < N; i++) {
            if (k == 0) { /* ones exactly on the owner's samples, whose box win[0][i] is */
                box b = box_empty(win[0][i]) ? (box){0, 0, -1, -1} : win[0][i];
                int *o = pl->mbbox[0][i];
                o[0] = b.x0, o[1] = b.y0, o[2] = b.x1, o[3] = b.y1;
                continue;
            }
            nonzero_box(m + nk * i, w, win[k][i], pl->mbbox[k][i]);
        }
    }
    return GT_OK;
}

/* ------------------------------------------------------------ the plan */

gt_status gt_stitch_plan_build(const gt_stitch_rig *rig, int in_w, int in_h, gt_pixfmt fmt,
                               const gt_stitch_plan_opts *o, gt_stitch_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    gt_plane_view ip[3], op[3];
    GT_TRY(gt_stitch_planes(fmt, in_w, in_h, ip));
    GT_TRY(gt_stitch_planes(fmt, rig->pano_w, rig->pano_h, op));
    int W = rig->pano_w, H = rig->pano_h, N = rig->ncam;
    size_t NP = (size_t)W * H;
    plan->ncam = N;
    plan->in_w = in_w;
    plan->in_h = in_h;
    plan->pano_w = W;
    plan->pano_h = H;
    plan->fmt = fmt;
    plan->blend = o->blend;
    plan->bands = o->bands;
    plan->feather_alpha = o->feather_alpha;
    plan->in_bytes = gt_pixfmt_frame_bytes(fmt, in_w, in_h);
    plan->out_bytes = gt_pixfmt_frame_bytes(fmt, W, H);
    for (int p = 0; p < 3; p++) {
        gt_stitch_plane *pl = &plan->plane[p];
        pl->in = ip[p];
        pl->out = op[p];
        pl->black = p == 0 ? 16.0f : 128.0f;
        pl->ray = rig->ray;
        if (!rig->ray) {
            for (int i = 0; i < N; i++) plane_matrix(rig->cam[i].Hinv, &op[p], &ip[p], pl->P[i]);
            continue;
        }
        if (!(pl->tab = gt_malloc_array(2 * ((size_t)op[p].w + op[p].h), sizeof(float), "projection tables"))) {
            gt_stitch_plan_free(plan);
            return GT_ERR_RUNTIME;
        }
        gt_proj_tables(&rig->proj, W, H, &op[p], pl->tab);
        for (int i = 0; i < N; i++) gt_cam_params(&rig->cam[i], &ip[p], pl->cam[i]);
    }
    float gains[3][GT_STITCH_MAX_CAMS];
    for (int i = 0; i < N; i++) { /* 0: not set (a rig made in code), 1 */
        const gt_stitch_cam *c = &rig->cam[i];
        gains[0][i] = c->gain > 0 ? c->gain : 1.0f;
        gains[1][i] = c->gain_u > 0 ? c->gain_u : 1.0f;
        gains[2][i] = c->gain_v > 0 ? c->gain_v : 1.0f;
    }
    gt_stitch_plan_set_gains(plan, gains);
    gt_status st = GT_OK;
    plan->dist_luma = gt_calloc(NP * N, sizeof(float), "distance maps");
    plan->owner_luma = gt_malloc(NP, "owner map");
    /* full-resolution feather weights, only for feather */
    float *wl = o->blend == GT_BLEND_FEATHER ? gt_malloc_array(NP * N, sizeof(float), "feather weights") : NULL;
    if (!plan->dist_luma || !plan->owner_luma || (o->blend == GT_BLEND_FEATHER && !wl)) {
        st = GT_ERR_RUNTIME;
        goto done;
    }
    double t_region = 0, t_edt = 0;
    box cb[GT_STITCH_MAX_CAMS];
    if ((st = regions_and_distances(plan, rig, o, cb, &t_region, &t_edt))) goto done;
    double t0 = gt_now_ms();
    seams(plan, cb);
    if (wl) feather_weights(plan, wl);
    double t_seams = gt_now_ms() - t0;
    t0 = gt_now_ms();
    double t_pyr = 0;
    /* per-plane owner maps, weights and mask pyramids (chroma takes the luma
     * value at the top-left luma sample of its block) */
    for (int p = 0; p < 3; p++) {
        gt_stitch_plane *pl = &plan->plane[p];
        int pw = pl->out.w, ph = pl->out.h, sx = (int)pl->out.sx, sy = (int)pl->out.sy;
        size_t n = (size_t)pw * ph;
        pl->owner = gt_malloc(n, "owner map");
        if (!pl->owner) {
            st = GT_ERR_RUNTIME;
            goto done;
        }
#pragma omp parallel for schedule(static)
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) pl->owner[(size_t)y * pw + x] = plan->owner_luma[(size_t)y * sy * W + (size_t)x * sx];
        if (o->blend == GT_BLEND_FEATHER) {
            pl->weight = gt_malloc_array(n * N, sizeof(float), "feather weights");
            if (!pl->weight) {
                st = GT_ERR_RUNTIME;
                goto done;
            }
            for (int i = 0; i < N; i++) {
#pragma omp parallel for schedule(static)
                for (int y = 0; y < ph; y++)
                    for (int x = 0; x < pw; x++)
                        pl->weight[n * i + (size_t)y * pw + x] = wl[NP * i + (size_t)y * sy * W + (size_t)x * sx];
                /* the samples whose luma sample (x sx, y sy) lies in cb[i],
                 * outside which camera i's distances, hence weights, are 0 */
                int *wb = pl->wbox[i];
                box b = cb[i];
                wb[0] = 0, wb[1] = 0, wb[2] = -1, wb[3] = -1;
                if (box_empty(b)) continue;
                wb[0] = (b.x0 + sx - 1) / sx, wb[1] = (b.y0 + sy - 1) / sy;
                wb[2] = b.x1 / sx < pw - 1 ? b.x1 / sx : pw - 1, wb[3] = b.y1 / sy < ph - 1 ? b.y1 / sy : ph - 1;
            }
        }
        double tp = gt_now_ms();
        if (o->blend == GT_BLEND_MULTIBAND && (st = mask_pyramids(pl, N, o->bands))) goto done;
        t_pyr += gt_now_ms() - tp;
    }
    gt_info("plan: regions %.1f ms, distance transforms %.1f ms, seams and weights %.1f ms, planes (owners, weights, "
            "mask pyramids) %.1f ms, of which mask pyramids %.1f ms",
            t_region, t_edt, t_seams, gt_now_ms() - t0, t_pyr);
done:
    free(wl);
    if (st) gt_stitch_plan_free(plan);
    return st;
}
