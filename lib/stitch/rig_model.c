/* What a rig means beyond its text: completing and checking the projection
 * and the rotation-model cameras (H from R and K for a plane), the mapping
 * between panorama and camera positions for either model, the stitcher's
 * checks against the inputs (sizes, folded, mirrored or stretched views),
 * and writing a rig back as text. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/status.h"
#include "stitch/proj.h"
#include "stitch/stitch.h"
#include "stitch/stitch_priv.h"

#define DEG (3.14159265358979323846 / 180.0)

/* a message at the camera's rig line when it has one */
static gt_status cam_fail(const char *name, const gt_stitch_cam *c, const char *fmt, const char *what)
{
    if (name && c->line > 0) return gt_fail_at(GT_ERR_DATA, name, c->line, fmt, what);
    return gt_fail(GT_ERR_DATA, fmt, what);
}

/* camera c of a plane rig without distortion: H = A R^T K^-1, A the plane's
 * pixel map of (dx, dy, dz) */
static gt_status plane_h(const gt_stitch_rig *rig, gt_stitch_cam *c)
{
    const gt_stitch_proj *pj = &rig->proj;
    double a = tan(pj->left * DEG), b = tan(pj->right * DEG), t = tan(pj->top * DEG), e = tan(pj->bottom * DEG);
    double W = rig->pano_w, Hh = rig->pano_h;
    double A[9] = {W / (b - a), 0, -a * W / (b - a) - 0.5, 0, -Hh / (e - t), -t * Hh / (e - t) - 0.5, 0, 0, 1};
    double Ki[9] = {1 / c->f, 0, -c->cx / c->f, 0, 1 / c->f, -c->cy / c->f, 0, 0, 1}, Rt[9], T[9];
    gt_mat3_transpose(c->R, Rt);
    gt_stitch_h_mul(Rt, Ki, T);
    gt_stitch_h_mul(A, T, c->H);
    /* scaled by |h8|, not h8: (X, Y, 1) dz keeps the sign of dz, the ray's
     * side of the plane, which the stitcher's tests of "in front" read */
    double h8 = fabs(c->H[8]);
    if (h8 > 1e-300)
        for (int k = 0; k < 9; k++) c->H[k] /= h8;
    return gt_stitch_h_invert(c->H, c->Hinv);
}

gt_status gt_stitch_rig_finish_named(gt_stitch_rig *rig, const char *name)
{
    char why[256];
    if (rig->version < 2) {
        rig->version = 1;
        rig->ray = false;
        rig->proj.kind = GT_PROJ_PLANE;
        for (int i = 0; i < rig->ncam; i++)
            if (rig->cam[i].rot) return gt_fail(GT_ERR_DATA, "camera %d has R: rotation-model cameras need rig version 2", i + 1);
        return GT_OK;
    }
    bool any_rot = false, any_h = false, any_dist = false;
    for (int i = 0; i < rig->ncam; i++) {
        gt_stitch_cam *c = &rig->cam[i];
        any_rot |= c->rot;
        any_h |= !c->rot;
        any_dist |= c->rot && (c->k1 != 0 || c->k2 != 0);
    }
    bool given = rig->proj_line > 0 || rig->proj.kind != GT_PROJ_PLANE || rig->proj.right > rig->proj.left;
    if (any_rot && !given) {
        const gt_stitch_cam *c = &rig->cam[0];
        while (!c->rot) c++;
        snprintf(why, sizeof why, "camera %d", (int)(c - rig->cam) + 1);
        return cam_fail(name, c, "%s: rotation-model cameras need a 'projection' line", why);
    }
    if (given && !gt_proj_valid(&rig->proj, why, sizeof why)) {
        if (name && rig->proj_line > 0) return gt_fail_at(GT_ERR_DATA, name, rig->proj_line, "projection: %s", why);
        return gt_fail(GT_ERR_DATA, "projection: %s", why);
    }
    for (int i = 0; i < rig->ncam; i++) {
        gt_stitch_cam *c = &rig->cam[i];
        snprintf(why, sizeof why, "camera %d", i + 1);
        if (!c->rot) {
            if (rig->proj.kind != GT_PROJ_PLANE)
                return cam_fail(name, c, "%s has H, which only a plane projection takes: give it size, focal and R", why);
            if (any_dist)
                return cam_fail(name, c, "%s has H but another camera has a distortion (stitched through rays): give every "
                                "camera size, focal and R", why);
            continue;
        }
        double T[9], err = 0, Rt[9];
        gt_mat3_transpose(c->R, Rt);
        gt_stitch_h_mul(c->R, Rt, T);
        for (int k = 0; k < 9; k++) err = fmax(err, fabs(T[k] - (k % 4 == 0)));
        double det = c->R[0] * (c->R[4] * c->R[8] - c->R[5] * c->R[7]) - c->R[1] * (c->R[3] * c->R[8] - c->R[5] * c->R[6]) +
                     c->R[2] * (c->R[3] * c->R[7] - c->R[4] * c->R[6]);
        if (!(err < 1e-6) || !(det > 0)) {
            char m[600];
            snprintf(m, sizeof m, "%s: R is not a rotation (|R R^T - I| = %.3g, det %.6g)", why, err, det);
            return cam_fail(name, c, "%s", m);
        }
        if (isnan(c->cx)) c->cx = (c->w - 1) / 2.0;
        if (isnan(c->cy)) c->cy = (c->h - 1) / 2.0;
        if (!gt_cam_distortion_ok(c)) {
            char m[600];
            snprintf(m, sizeof m, "%s: distortion %g %g turns back before the view's corners (the lens model folds the image): "
                     "check the coefficients", why, c->k1, c->k2);
            return cam_fail(name, c, "%s", m);
        }
    }
    rig->ray = any_rot && (rig->proj.kind != GT_PROJ_PLANE || any_dist);
    (void)any_h;
    if (!rig->ray)
        for (int i = 0; i < rig->ncam; i++) {
            gt_stitch_cam *c = &rig->cam[i];
            if (!c->rot) continue;
            if (plane_h(rig, c)) {
                snprintf(why, sizeof why, "camera %d", i + 1);
                return cam_fail(name, c, "%s: its view cannot be put on the plane (singular homography)", why);
            }
        }
    return GT_OK;
}

gt_status gt_stitch_rig_finish(gt_stitch_rig *rig) { return gt_stitch_rig_finish_named(rig, rig->path); }

/* ------------------------------------------------------------ mapping */

static bool through_h(const gt_stitch_rig *rig, int i) { return !rig->ray || !rig->cam[i].rot; }

int gt_stitch_rig_to_cam(const gt_stitch_rig *rig, int i, double X, double Y, double *u, double *v)
{
    const gt_stitch_cam *c = &rig->cam[i];
    if (through_h(rig, i)) {
        const double *H = c->Hinv;
        double w = H[6] * X + H[7] * Y + H[8];
        if (!(w > 1e-12)) return 0;
        *u = (H[0] * X + H[1] * Y + H[2]) / w;
        *v = (H[3] * X + H[4] * Y + H[5]) / w;
        return 1;
    }
    double d[3];
    gt_proj_ray(&rig->proj, rig->pano_w, rig->pano_h, X, Y, d);
    return gt_cam_pixel(c, d, u, v);
}

int gt_stitch_rig_to_pano(const gt_stitch_rig *rig, int i, double u, double v, double *X, double *Y)
{
    const gt_stitch_cam *c = &rig->cam[i];
    if (through_h(rig, i)) {
        const double *H = c->H;
        double w = H[6] * u + H[7] * v + H[8];
        if (!(w > 1e-12)) return 0;
        *X = (H[0] * u + H[1] * v + H[2]) / w;
        *Y = (H[3] * u + H[4] * v + H[5]) / w;
        return 1;
    }
    double d[3];
    gt_cam_ray(c, u, v, d);
    return gt_proj_pixel(&rig->proj, rig->pano_w, rig->pano_h, d, X, Y);
}

/* ------------------------------------------------------------ checks */

double gt_stitch_h_stretch(const double H[9], int w, int h)
{
    double smax = 0, smin = INFINITY;
    for (int k = 0; k < 9; k++) {
        double u = (k % 3) * (w - 1) / 2.0, v = (k / 3) * (h - 1) / 2.0;
        double z = H[6] * u + H[7] * v + H[8];
        double n = fabs(H[6]) * w + fabs(H[7]) * h + fabs(H[8]);
        if (!(z > 1e-9 * n)) return INFINITY; /* at or past the horizon: the view folds */
        double x = (H[0] * u + H[1] * v + H[2]) / z, y = (H[3] * u + H[4] * v + H[5]) / z;
        double a = (H[0] - x * H[6]) / z, b = (H[1] - x * H[7]) / z, c = (H[3] - y * H[6]) / z, d = (H[4] - y * H[7]) / z;
        double det = a * d - b * c;
        if (!(det > 0)) return INFINITY; /* mirrored (or degenerate) */
        /* singular values of [[a, b], [c, d]] */
        double s1 = a * a + b * b + c * c + d * d, q = sqrt(fmax(s1 * s1 - 4 * det * det, 0));
        double hi = sqrt((s1 + q) / 2), lo = det / hi;
        smax = fmax(smax, hi);
        smin = fmin(smin, lo);
    }
    return smax / smin;
}

gt_status gt_stitch_rig_check(const gt_stitch_rig *rig, const char *name, int in_w, int in_h)
{
    char m[512];
    for (int i = 0; i < rig->ncam; i++) {
        const gt_stitch_cam *c = &rig->cam[i];
        if (c->w && (c->w != in_w || c->h != in_h)) {
            snprintf(m, sizeof m, "camera %d is calibrated for %dx%d frames but the inputs are %dx%d: calibrate the rig at "
                     "the inputs' size", i + 1, c->w, c->h, in_w, in_h);
            return cam_fail(name, c, "%s", m);
        }
        if (rig->ray) continue;
        double s = gt_stitch_h_stretch(c->H, in_w, in_h);
        if (isinf(s)) {
            snprintf(m, sizeof m, "camera %d: its homography folds its view (a point of it maps to the horizon or "
                     "beyond) or mirrors it, so that a plane cannot show it: calibrate again with a cylindrical or "
                     "spherical projection (yuvstitch --calibrate --projection spherical)", i + 1);
            return cam_fail(name, c, "%s", m);
        }
        if (s > GT_STITCH_MAX_STRETCH) {
            snprintf(m, sizeof m, "camera %d: its homography stretches its view %.1fx (the largest magnification over "
                     "its image against the smallest; at most %gx): a plane cannot hold this camera; calibrate again "
                     "with a cylindrical or spherical projection (yuvstitch --calibrate --projection spherical)",
                     i + 1, s, GT_STITCH_MAX_STRETCH);
            return cam_fail(name, c, "%s", m);
        }
    }
    return GT_OK;
}

gt_status gt_stitch_plan_check_owners(const gt_stitch_plan *plan, const gt_stitch_rig *rig, const char *name)
{
    size_t np = (size_t)plan->pano_w * plan->pano_h, owned[GT_STITCH_MAX_CAMS] = {0};
    for (size_t j = 0; j < np; j++)
        if (plan->owner_luma[j] < plan->ncam) owned[plan->owner_luma[j]]++;
    for (int i = 0; i < plan->ncam; i++) {
        if (owned[i]) continue;
        char m[700];
        snprintf(m, sizeof m,
                 "camera %d owns no pixel of the %dx%d panorama: nothing it sees would be shown (its view lies "
                 "outside the panorama's %s extent, or other cameras are nearer everywhere it looks%s): calibrate "
                 "the rig again (another --projection, more overlap between neighbours)%s",
                 i + 1, rig->pano_w, rig->pano_h, gt_proj_name(rig->proj.kind),
                 rig->cam[i].mask_path ? ", or its mask excludes it" : "", rig->cam[i].mask_path ? " or fix its mask" : "");
        return cam_fail(name, &rig->cam[i], "%s", m);
    }
    return GT_OK;
}

gt_status gt_stitch_rig_check_owners(const gt_stitch_rig *rig, int in_w, int in_h, int max_w)
{
    gt_stitch_rig r = *rig;
    double s = rig->pano_w > max_w ? (double)max_w / rig->pano_w : 1;
    r.pano_w = 2 * (int)ceil(rig->pano_w * s / 2), r.pano_h = 2 * (int)ceil(rig->pano_h * s / 2);
    double sx = (double)r.pano_w / rig->pano_w, sy = (double)r.pano_h / rig->pano_h;
    for (int i = 0; i < r.ncam; i++) {
        r.cam[i].mask_path = NULL;
        if (rig->ray && r.cam[i].rot) continue;
        double S[9] = {sx, 0, 0.5 * sx - 0.5, 0, sy, 0.5 * sy - 0.5, 0, 0, 1};
        gt_stitch_h_mul(S, rig->cam[i].H, r.cam[i].H);
        GT_TRY(gt_stitch_h_invert(r.cam[i].H, r.cam[i].Hinv));
    }
    r.path = NULL;
    gt_stitch_plan_opts po;
    gt_stitch_plan_opts_init(&po);
    po.blend = GT_BLEND_NONE;
    gt_stitch_plan plan;
    GT_TRY(gt_stitch_plan_build(&r, in_w, in_h, GT_PIX_YUV444P, &po, &plan));
    gt_status st = gt_stitch_plan_check_owners(&plan, rig, NULL);
    gt_stitch_plan_free(&plan);
    return st;
}

/* ------------------------------------------------------------ writing */

static void write_mat(FILE *f, const char *kw, const double *M)
{
    fprintf(f, "  %s %.17g %.17g %.17g\n    %.17g %.17g %.17g\n    %.17g %.17g %.17g\n", kw, M[0], M[1], M[2], M[3], M[4],
            M[5], M[6], M[7], M[8]);
}

gt_status gt_stitch_rig_write(FILE *f, const gt_stitch_rig *rig)
{
    bool v2 = rig->version >= 2;
    if (v2) fprintf(f, "rig 2\n");
    fprintf(f, "panorama %d %d\n", rig->pano_w, rig->pano_h);
    bool any_rot = false;
    for (int i = 0; i < rig->ncam; i++) any_rot |= rig->cam[i].rot;
    const gt_stitch_proj *pj = &rig->proj;
    if (v2 && (any_rot || pj->kind != GT_PROJ_PLANE || rig->proj_line > 0))
        fprintf(f, "projection %s %.17g %.17g %.17g %.17g\n", gt_proj_name(pj->kind), pj->left, pj->right, pj->top,
                pj->bottom);
    for (int i = 0; i < rig->ncam; i++) {
        const gt_stitch_cam *c = &rig->cam[i];
        fprintf(f, "camera\n");
        if (v2 && c->rot) {
            fprintf(f, "  size %d %d\n  focal %.17g\n  centre %.17g %.17g\n", c->w, c->h, c->f, c->cx, c->cy);
            write_mat(f, "R", c->R);
            if (c->k1 != 0 || c->k2 != 0) fprintf(f, "  distortion %.17g %.17g\n", c->k1, c->k2);
        } else {
            write_mat(f, "H", c->H);
        }
        if (c->mask_path) fprintf(f, "  mask %s\n", c->mask_path);
        fprintf(f, "  gain %.9g\n  gain_u %.9g\n  gain_v %.9g\n", c->gain > 0 ? c->gain : 1.0,
                c->gain_u > 0 ? c->gain_u : 1.0, c->gain_v > 0 ? c->gain_v : 1.0);
    }
    return ferror(f) ? gt_fail(GT_ERR_RUNTIME, "write error") : GT_OK;
}
