/* Views cut from a real equirectangular photograph (testdata/stitch/
 * equirect_rocks.jpg, see LICENSE-photos there) by rotation-model cameras
 * with known orientations, focal lengths, distortion and exposures: the
 * ground truth of the wide-rig tests, bench and demo. A view's sample at
 * camera luma position q shows the photograph along the ray of q (the
 * distortion undone exactly, proj.c), read with Keys bicubic interpolation
 * (longitudes wrap around, latitudes clamp), Y times the camera's gain and
 * U, V about 128 times its chroma gains. Frames are in any format. */
#ifndef GT_STITCH_SPHERE_H
#define GT_STITCH_SPHERE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stitch/proj.h"
#include "stitch/stitch.h"
#include "stitch_photo.h"

#define SPH_MAX 16
#define SPH_DEG (3.14159265358979323846 / 180.0)

/* The photograph at 1 / `down` of its size (box average), as Y, U, V. */
static inline void sphere_load(int down, photo_t *p)
{
    photo_load("equirect_rocks.jpg", p);
    if (down <= 1) return;
    int w = p->w / down, h = p->h / down;
    for (int k = 0; k < 3; k++) {
        double *d = malloc(sizeof(double) * w * h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double s = 0;
                for (int j = 0; j < down; j++)
                    for (int i = 0; i < down; i++) s += p->c[k][(size_t)(y * down + j) * p->w + x * down + i];
                d[(size_t)y * w + x] = s / (down * down);
            }
        free(p->c[k]);
        p->c[k] = d;
    }
    p->w = w, p->h = h;
}

/* the photograph's plane k at pixel (x, y): longitudes wrap, rows clamp */
static inline double sphere_px(const photo_t *p, int k, int x, int y)
{
    x %= p->w;
    if (x < 0) x += p->w;
    y = y < 0 ? 0 : y >= p->h ? p->h - 1 : y;
    return p->c[k][(size_t)y * p->w + x];
}

static inline double sphere_at(const photo_t *p, int k, double x, double y)
{
    int x0 = (int)floor(x), y0 = (int)floor(y);
    double v = 0;
    for (int j = -1; j <= 2; j++) {
        double row = 0;
        for (int i = -1; i <= 2; i++) row += photo_keys(x - (x0 + i)) * sphere_px(p, k, x0 + i, y0 + j);
        v += photo_keys(y - (y0 + j)) * row;
    }
    return v;
}

/* the photograph's projection: the whole sphere */
static inline gt_stitch_proj sphere_proj(void)
{
    gt_stitch_proj pj = {GT_PROJ_SPHERICAL, -180, 180, 90, -90};
    return pj;
}

/* The photograph's value of plane k along ray d. */
static inline double sphere_ray(const photo_t *p, int k, const double d[3])
{
    gt_stitch_proj pj = sphere_proj();
    double X, Y;
    gt_proj_pixel(&pj, p->w, p->h, d, &X, &Y);
    return sphere_at(p, k, X, Y);
}

/* R (panorama -> camera) of a camera turned by yaw (right), pitch (up) and
 * roll (clockwise as seen by it), degrees: R = (Ry(yaw) Rx(pitch) Rz(roll))^T */
static inline void sphere_rotation(double yaw, double pitch, double roll, double R[9])
{
    double a = yaw * SPH_DEG, b = pitch * SPH_DEG, c = roll * SPH_DEG, T[9], C[9];
    double Ry[9] = {cos(a), 0, sin(a), 0, 1, 0, -sin(a), 0, cos(a)};
    double Rx[9] = {1, 0, 0, 0, cos(b), -sin(b), 0, sin(b), cos(b)};
    double Rz[9] = {cos(c), -sin(c), 0, sin(c), cos(c), 0, 0, 0, 1};
    gt_stitch_h_mul(Rx, Rz, T);
    gt_stitch_h_mul(Ry, T, C);
    gt_mat3_transpose(C, R);
}

/* A truth rig of rotation-model cameras. */
typedef struct {
    int n, w, h;
    double f, k1, k2;
    double dcx, dcy; /* the principal point off the frame's centre (pixels) */
    double yaw[SPH_MAX], pitch[SPH_MAX], roll[SPH_MAX];
    double gain[SPH_MAX][3];
} sphere_spec;

/* camera i of the spec as a rig camera (gains 1: the truth's exposure is in
 * the views) */
static inline void sphere_cam(const sphere_spec *s, int i, gt_stitch_cam *c)
{
    memset(c, 0, sizeof *c);
    c->rot = true;
    sphere_rotation(s->yaw[i], s->pitch[i], s->roll[i], c->R);
    c->f = s->f, c->k1 = s->k1, c->k2 = s->k2;
    c->w = s->w, c->h = s->h;
    c->cx = (s->w - 1) / 2.0 + s->dcx, c->cy = (s->h - 1) / 2.0 + s->dcy;
    c->gain = c->gain_u = c->gain_v = 1.0f;
}

/* The truth as a rig 2: a spherical W x H panorama over `pj`. */
static inline void sphere_truth_rig(const sphere_spec *s, gt_stitch_proj pj, int W, int H, gt_stitch_rig *rig)
{
    memset(rig, 0, sizeof *rig);
    rig->version = 2;
    rig->pano_w = W, rig->pano_h = H;
    rig->proj = pj;
    rig->ncam = s->n;
    for (int i = 0; i < s->n; i++) sphere_cam(s, i, &rig->cam[i]);
}

/* Render camera i's view (format f) into frame. */
static inline void sphere_render(const photo_t *p, const sphere_spec *s, int i, gt_pixfmt f, uint8_t *frame)
{
    gt_stitch_cam c;
    sphere_cam(s, i, &c);
    gt_plane_view pv[3];
    gt_stitch_planes(f, s->w, s->h, pv);
    for (int k = 0; k < 3; k++)
#pragma omp parallel for schedule(static)
        for (int py = 0; py < pv[k].h; py++)
            for (int px = 0; px < pv[k].w; px++) {
                double d[3];
                gt_cam_ray(&c, px * pv[k].sx + pv[k].ox, py * pv[k].sy + pv[k].oy, d);
                double v = sphere_ray(p, k, d), g = s->gain[i][k];
                frame[pv[k].off + (size_t)py * pv[k].pitch + (size_t)px * pv[k].step] =
                    stitch_q(k == 0 ? v * g : 128 + g * (v - 128));
            }
}

/* The wide-rig preset: n cameras of w x h around the horizon, looking 10
 * degrees down, 360 / n degrees apart, with a horizontal field of view of
 * hfov degrees, small rolls and pitches, and exposures up to half a stop
 * darker than camera 1's (factors 0.71 .. 1, colour casts of a few %);
 * with `down` > 0, two more looking down at the ground (pitch -65, yaws 0
 * and 180). */
static inline void sphere_spec_ring(sphere_spec *s, int n, int w, int h, double hfov, int down)
{
    memset(s, 0, sizeof *s);
    s->n = n + (down ? 2 : 0);
    s->w = w, s->h = h;
    s->f = (w / 2.0) / tan(hfov / 2 * SPH_DEG);
    static const double dp[SPH_MAX] = {0, 1.5, -2, 0.8, -1, 2, -1.5, 0.5, 1, -0.7, 1.2, -1.8, 0.3, 2.2, -0.4, 1.1};
    static const double dr[SPH_MAX] = {0, 2, -1.5, 3, -2.5, 1, 0.5, -3, 1.7, -0.8, 2.4, -1.1, 0.9, -2.2, 1.4, -0.3};
    /* darker than camera 1 by up to half a stop: no view clips what camera 1 shows */
    static const double ex[SPH_MAX] = {1, 0.82, 0.94, 0.74, 0.88, 0.71, 0.97, 0.79, 0.9, 0.76, 0.85, 0.93, 0.72, 0.8, 0.96, 0.87};
    for (int i = 0; i < s->n; i++) {
        bool ground = i >= n;
        s->yaw[i] = ground ? (i == n ? 0 : 180) : 360.0 * i / n;
        if (s->yaw[i] > 180) s->yaw[i] -= 360;
        s->pitch[i] = ground ? -65 : -10 + dp[i];
        s->roll[i] = dr[i];
        s->gain[i][0] = ex[i];
        s->gain[i][1] = 1 + 0.03 * sin(i * 1.3);
        s->gain[i][2] = 1 - 0.03 * cos(i * 0.9);
    }
    s->gain[0][1] = s->gain[0][2] = 1; /* camera 1 is the truth's exposure */
}

#endif
