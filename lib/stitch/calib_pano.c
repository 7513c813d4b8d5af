/* The panorama of a rotation-model rig (gt_calib_frame_rot, calib.h): the
 * cameras' coverage in longitude (a union of arcs on the circle) and
 * latitude, the projection that holds it, its extent and size. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stitch/calib.h"
#include "stitch/proj.h"

#define DEG (3.14159265358979323846 / 180.0)
#define PLANE_MAX_ANGLE 55.0  /* a plane when every camera lies within this of the centre (stretch <= 3x) */
#define CYL_MAX_ELEVATION 55.0 /* cylindrical while the cameras stay within this of the horizon */
#define FULL_CIRCLE 300.0      /* degrees of coverage taken as all around: the full 360 x 180 */

enum { S = 32 }; /* border samples per side */

/* ray of border sample k (0 .. 4S-1) of a w x h view */
static void border_ray(const gt_stitch_cam *c, int k, double d[3])
{
    int e = k / S, w = c->w, h = c->h;
    double t = (double)(k % S) / S;
    double u = e == 0 ? t * (w - 1) : e == 1 ? w - 1 : e == 2 ? (1 - t) * (w - 1) : 0;
    double v = e == 0 ? 0 : e == 1 ? t * (h - 1) : e == 2 ? h - 1 : (1 - t) * (h - 1);
    gt_cam_ray(c, u, v, d);
}

static double lon_of(const double d[3]) { return atan2(d[0], d[2]) / DEG; }
static double lat_of(const double d[3]) { return atan2(-d[1], hypot(d[0], d[2])) / DEG; }
static double wrap180(double a)
{
    while (a > 180) a -= 360;
    while (a <= -180) a += 360;
    return a;
}

/* whether camera c sees straight up (pole -1) or down (+1) */
static bool sees_pole(const gt_stitch_cam *c, int pole)
{
    double d[3] = {0, pole, 0}, u, v;
    return gt_cam_pixel(c, d, &u, &v) && u >= 0 && v >= 0 && u <= c->w - 1 && v <= c->h - 1;
}

typedef struct {
    double a, b; /* arc from a to b (b >= a, b - a <= 360) */
} arc;

static int cmp_arc(const void *x, const void *y)
{
    double a = ((const arc *)x)->a, b = ((const arc *)y)->a;
    return a < b ? -1 : a > b;
}

/* the largest gap between the arcs on the circle: its start in *g0, its
 * length returned (0 when they cover the circle) */
static double largest_gap(arc *arcs, int n, double *g0)
{
    double wrapend = -INFINITY; /* [0, wrapend] is covered by arcs crossing 360 */
    for (int i = 0; i < n; i++) {
        double s = fmod(arcs[i].a, 360);
        if (s < 0) s += 360;
        arcs[i].b += s - arcs[i].a;
        arcs[i].a = s;
        wrapend = fmax(wrapend, arcs[i].b - 360);
    }
    qsort(arcs, (size_t)n, sizeof *arcs, cmp_arc);
    double best = 0, end = fmax(arcs[0].b, wrapend);
    *g0 = 0;
    for (int i = 1; i <= n; i++) { /* i == n: the gap before the first arc, one lap on */
        double a = i < n ? arcs[i].a : arcs[0].a + 360;
        if (a > end && a - end > best) best = a - end, *g0 = end;
        if (i < n) end = fmax(end, arcs[i].b);
    }
    return best;
}

gt_status gt_calib_frame_rot(gt_calib_cam *cams, int ncam, int w, int h, const gt_calib_rot_opts *o,
                             const gt_calib_chain_opts *co, gt_stitch_rig *rig)
{
    gt_stitch_cam sc[GT_STITCH_MAX_CAMS];
    arc arcs[GT_STITCH_MAX_CAMS];
    double lat0 = 90, lat1 = -90;
    bool north = false, south = false;
    for (int i = 0; i < ncam; i++) {
        gt_calib_cam_model(&cams[i], w, h, &sc[i]);
        double axis[3];
        gt_cam_ray(&sc[i], (w - 1) / 2.0, (h - 1) / 2.0, axis);
        double lc = lon_of(axis), lo = 0, hi = 0;
        for (int k = 0; k < 4 * S; k++) {
            double d[3];
            border_ray(&sc[i], k, d);
            double dl = wrap180(lon_of(d) - lc), la = lat_of(d);
            lo = fmin(lo, dl), hi = fmax(hi, dl);
            lat0 = fmin(lat0, la), lat1 = fmax(lat1, la);
        }
        bool n = sees_pole(&sc[i], -1), s = sees_pole(&sc[i], 1);
        north |= n, south |= s;
        arcs[i] = n || s ? (arc){lc - 180, lc + 180} : (arc){lc + lo, lc + hi};
    }
    if (north) lat1 = 90;
    if (south) lat0 = -90;
    double g0, gap = largest_gap(arcs, ncam, &g0), cover = 360 - gap;
    bool full = cover >= FULL_CIRCLE;
    /* the coverage's centre longitude */
    double mid = full ? 0 : wrap180(g0 + gap + cover / 2);
    int kind = o->projection;
    /* the plane: every border ray's angle from the centre direction (mid, level) */
    double worst = 0;
    int worst_cam = 0;
    double cdir[3] = {sin(mid * DEG), 0, cos(mid * DEG)};
    for (int i = 0; i < ncam; i++)
        for (int k = 0; k < 4 * S; k++) {
            double d[3];
            border_ray(&sc[i], k, d);
            double a = acos(fmax(-1, fmin(1, d[0] * cdir[0] + d[1] * cdir[1] + d[2] * cdir[2]))) / DEG;
            if (a > worst) worst = a, worst_cam = i;
        }
    if (kind < 0) {
        if (!full && worst <= PLANE_MAX_ANGLE) kind = GT_PROJ_PLANE;
        else if (!full && lat1 <= CYL_MAX_ELEVATION && lat0 >= -CYL_MAX_ELEVATION) kind = GT_PROJ_CYLINDRICAL;
        else kind = GT_PROJ_SPHERICAL;
    }
    if (kind == GT_PROJ_PLANE && (full || worst >= 80))
        return gt_fail(GT_ERR_DATA,
                       "a plane cannot hold camera %d: it sees %.0f degrees from the panorama's centre (a plane "
                       "stretches %.0fx there; the cameras cover %.0f degrees around): use --projection "
                       "cylindrical or spherical",
                       worst_cam + 1, worst, 1 / pow(cos(fmin(worst, 89.9) * DEG), 2), cover);
    if (kind == GT_PROJ_CYLINDRICAL && (lat1 >= 80 || lat0 <= -80))
        return gt_fail(GT_ERR_DATA,
                       "a cylinder cannot hold the cameras: they see up to %.0f degrees %s the horizon: use "
                       "--projection spherical",
                       fmax(lat1, -lat0), lat1 >= -lat0 ? "above" : "below");
    /* turn the frame about the vertical so that the plane's centre is ahead */
    if (kind == GT_PROJ_PLANE && mid != 0) {
        double a = mid * DEG, Ry[9] = {cos(a), 0, sin(a), 0, 1, 0, -sin(a), 0, cos(a)};
        for (int i = 0; i < ncam; i++) {
            double R[9];
            gt_stitch_h_mul(cams[i].R, Ry, R); /* rays d' = Ry^T d */
            memcpy(cams[i].R, R, sizeof R);
            gt_calib_cam_model(&cams[i], w, h, &sc[i]);
        }
        mid = 0;
    }
    gt_stitch_proj pj = {(gt_proj_kind)kind, 0, 0, 0, 0};
    if (kind == GT_PROJ_PLANE) {
        double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
        for (int i = 0; i < ncam; i++)
            for (int k = 0; k < 4 * S; k++) {
                double d[3];
                border_ray(&sc[i], k, d);
                x0 = fmin(x0, d[0] / d[2]), x1 = fmax(x1, d[0] / d[2]);
                y0 = fmin(y0, -d[1] / d[2]), y1 = fmax(y1, -d[1] / d[2]);
            }
        pj.left = atan(x0) / DEG, pj.right = atan(x1) / DEG, pj.bottom = atan(y0) / DEG, pj.top = atan(y1) / DEG;
    } else if (full) {
        pj.left = -180, pj.right = 180;
        pj.top = kind == GT_PROJ_SPHERICAL ? 90 : lat1, pj.bottom = kind == GT_PROJ_SPHERICAL ? -90 : lat0;
    } else {
        pj.left = g0 + gap, pj.right = g0 + gap + cover;
        while (pj.left > 180) pj.left -= 360, pj.right -= 360;
        while (pj.left < -180 - 1e-9) pj.left += 360, pj.right += 360;
        if (pj.right > 360) pj.left -= 360, pj.right -= 360;
        pj.top = lat1, pj.bottom = lat0;
    }
    /* pixels per radian (plane: per unit of tan): the size asked for, else the median focal length */
    double fs[GT_STITCH_MAX_CAMS];
    for (int i = 0; i < ncam; i++) fs[i] = cams[i].f;
    for (int a = 0; a < ncam; a++)
        for (int b = a + 1; b < ncam; b++)
            if (fs[b] < fs[a]) {
                double t = fs[a];
                fs[a] = fs[b], fs[b] = t;
            }
    double scale = ncam % 2 ? fs[ncam / 2] : 0.5 * (fs[ncam / 2 - 1] + fs[ncam / 2]);
    double span_x = kind == GT_PROJ_PLANE ? tan(pj.right * DEG) - tan(pj.left * DEG) : (pj.right - pj.left) * DEG;
    double span_y = kind == GT_PROJ_SPHERICAL ? (pj.top - pj.bottom) * DEG : tan(pj.top * DEG) - tan(pj.bottom * DEG);
    if (o->pano_width > 0) scale = o->pano_width / span_x;
    double W = o->pano_width > 0 ? o->pano_width : 2 * ceil(span_x * scale / 2), H = 2 * ceil(span_y * scale / 2);
    if (full && kind == GT_PROJ_SPHERICAL) H = 2 * ceil(W / 4); /* 2:1, as 360 players expect */
    if (W < 2 || H < 2 || W > co->max_side || H > co->max_side)
        return gt_fail(GT_ERR_DATA,
                       "the %s panorama would be %.0fx%.0f pixels, beyond 2..%d a side: give --pano-width", 
                       gt_proj_name(pj.kind), W, H, co->max_side);
    memset(rig, 0, sizeof *rig);
    rig->version = 2;
    rig->pano_w = (int)W, rig->pano_h = (int)H;
    rig->proj = pj;
    rig->ncam = ncam;
    for (int i = 0; i < ncam; i++) {
        rig->cam[i] = sc[i];
        rig->cam[i].gain = rig->cam[i].gain_u = rig->cam[i].gain_v = 1.0f;
    }
    return gt_stitch_rig_finish(rig);
}
