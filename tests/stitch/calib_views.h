/* Views for the calibration tests, cut from a real photograph (stitch_photo.h)
 * with known homographies: the photograph is the image plane of a camera of
 * focal length f0 at the origin, and camera i of the rig turns about the same
 * centre by yaw, pitch and roll (a rotating rig), focal f, so that
 *     H_i = K0 R_i K_i^-1      (camera i pixel -> photograph pixel)
 * and camera i -> camera j is H_j^-1 H_i. Each view is rendered with the
 * photograph's Keys bicubic interpolant (stitch_render.h), Y times an
 * exposure and U, V about 128 times colour factors, then Gaussian noise and,
 * optionally, JPEG artefacts (each plane through a grayscale JPEG at a
 * quality, so that the exposure model is not clipped by an RGB round trip).
 * Frames are yuv444p. */
#ifndef GT_CALIB_VIEWS_H
#define GT_CALIB_VIEWS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/image.h"
#include "stitch/calib.h"
#include "stitch_photo.h"

#define CV_MAX 8

typedef struct {
    const char *photo;        /* testdata/stitch/<photo> */
    int n, w, h;              /* cameras and view size */
    double f0, f;             /* focal lengths of the photograph and of the views */
    double yaw[CV_MAX], pitch[CV_MAX], roll[CV_MAX]; /* degrees */
    double gain[CV_MAX][3];   /* applied to the views: Y factor, U and V factors about 128 */
    double noise;             /* Gaussian sigma per sample */
    int jpeg;                 /* quality, 0: none */
    uint64_t seed;
} cv_spec;

/* The CI rig: 4 cameras of w x h over scene_astronaut.jpg, 14 degrees of yaw
 * apart (about 33 % overlap), rolls 0 18 -6 10 (neighbours 23 to 29 degrees
 * apart in all), exposures 1.5 stops apart, colour casts, noise and JPEG. */
static inline void cv_spec_ci(cv_spec *s, int w, int h)
{
    memset(s, 0, sizeof *s);
    s->photo = "scene_astronaut.jpg";
    s->n = 4, s->w = w, s->h = h;
    s->f0 = 330;
    s->f = 600.0 * w / 256;
    const double yaw[4] = {-21, -7, 7, 22}, pitch[4] = {0, 3, -2, 1}, roll[4] = {0, 18, -6, 10};
    const double g[4][3] = {{0.95, 1.0, 1.0}, {0.6, 0.9, 1.1}, {0.336, 1.1, 0.92}, {0.5, 1.05, 0.97}};
    for (int i = 0; i < 4; i++) {
        s->yaw[i] = yaw[i], s->pitch[i] = pitch[i], s->roll[i] = roll[i];
        memcpy(s->gain[i], g[i], sizeof g[i]);
    }
    s->noise = 1.0;
    s->jpeg = 90;
    s->seed = 7;
}

/* R = Rz(roll) Ry(yaw) Rx(pitch), row-major */
static inline void cv_rotation(const cv_spec *s, int i, double R[9])
{
    const double d = 3.14159265358979323846 / 180;
    double a = s->yaw[i] * d, b = s->pitch[i] * d, c = s->roll[i] * d;
    double Ry[9] = {cos(a), 0, sin(a), 0, 1, 0, -sin(a), 0, cos(a)};
    double Rx[9] = {1, 0, 0, 0, cos(b), -sin(b), 0, sin(b), cos(b)};
    double Rz[9] = {cos(c), -sin(c), 0, sin(c), cos(c), 0, 0, 0, 1};
    double T[9];
    gt_stitch_h_mul(Ry, Rx, T);
    gt_stitch_h_mul(Rz, T, R);
}

/* angle in degrees between the orientations of cameras i and j */
static inline double cv_angle(const cv_spec *s, int i, int j)
{
    double Ri[9], Rj[9], tr = 0;
    cv_rotation(s, i, Ri);
    cv_rotation(s, j, Rj);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) tr += Ri[r * 3 + c] * Rj[r * 3 + c]; /* trace(Ri^T Rj) */
    double x = (tr - 1) / 2;
    return acos(x > 1 ? 1 : x < -1 ? -1 : x) * 180 / 3.14159265358979323846;
}

/* camera i -> photograph (pw x ph) */
static inline void cv_h(const cv_spec *s, int pw, int ph, int i, double H[9])
{
    double K0[9] = {s->f0, 0, (pw - 1) / 2.0, 0, s->f0, (ph - 1) / 2.0, 0, 0, 1};
    double Ki[9] = {1 / s->f, 0, -(s->w - 1) / (2.0 * s->f), 0, 1 / s->f, -(s->h - 1) / (2.0 * s->f), 0, 0, 1};
    double R[9], T[9];
    cv_rotation(s, i, R);
    gt_stitch_h_mul(R, Ki, T);
    gt_stitch_h_mul(K0, T, H);
    for (int k = 0; k < 9; k++) H[k] /= H[8];
}

/* camera i -> camera j, the truth */
static inline void cv_rel(const cv_spec *s, int pw, int ph, int i, int j, double M[9])
{
    double Hi[9], Hj[9], Hji[9];
    cv_h(s, pw, ph, i, Hi);
    cv_h(s, pw, ph, j, Hj);
    gt_stitch_h_invert(Hj, Hji);
    gt_stitch_h_mul(Hji, Hi, M);
}

/* smallest distance of a view's footprint to the photograph's border (negative:
 * the view sees beyond the photograph) */
static inline double cv_margin(const cv_spec *s, int pw, int ph)
{
    double m = 1e30;
    for (int i = 0; i < s->n; i++) {
        double H[9];
        cv_h(s, pw, ph, i, H);
        for (int k = 0; k <= 64; k++)
            for (int e = 0; e < 4; e++) {
                double t = k / 64.0, x = e == 0 ? t * (s->w - 1) : e == 1 ? s->w - 1 : e == 2 ? (1 - t) * (s->w - 1) : 0;
                double y = e == 0 ? 0 : e == 1 ? t * (s->h - 1) : e == 2 ? s->h - 1 : (1 - t) * (s->h - 1);
                double wz = H[6] * x + H[7] * y + H[8], X = (H[0] * x + H[1] * y + H[2]) / wz,
                       Y = (H[3] * x + H[4] * y + H[5]) / wz;
                m = fmin(m, fmin(fmin(X, pw - 1 - X), fmin(Y, ph - 1 - Y)));
            }
    }
    return m;
}

static inline double cv_gauss(gt_rng *r)
{
    double u = gt_rng_uniform(r) + 1e-12, v = gt_rng_uniform(r);
    return sqrt(-2 * log(u)) * cos(2 * 3.14159265358979323846 * v);
}

/* a w x h plane through a grayscale JPEG of quality q (a temporary file) */
static inline int cv_jpeg_plane(uint8_t *p, int w, int h, int q)
{
    char path[] = "/tmp/gt_calib_jpeg_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    close(fd);
    gt_image img;
    int bad = gt_jpeg_write(path, w, h, 1, p, q) || gt_image_read(path, 1, 0, &img);
    unlink(path);
    if (bad) return -1;
    memcpy(p, img.data, (size_t)w * h);
    gt_image_free(&img);
    return 0;
}

/* Render the views (frames[i]: yuv444p, malloc'ed); 0 on success. */
static inline int cv_render(const cv_spec *s, const photo_t *ph, uint8_t **frames)
{
    gt_rng rng = {s->seed};
    size_t np = (size_t)s->w * s->h;
    for (int i = 0; i < s->n; i++) {
        double H[9];
        cv_h(s, ph->w, ph->h, i, H);
        frames[i] = malloc(3 * np);
        stitch_render_view_g(photo_sample, ph, H, s->gain[i], GT_PIX_YUV444P, s->w, s->h, frames[i]);
        if (s->noise > 0)
            for (size_t k = 0; k < 3 * np; k++) frames[i][k] = stitch_q(frames[i][k] + s->noise * cv_gauss(&rng));
        if (s->jpeg)
            for (int p = 0; p < 3; p++)
                if (cv_jpeg_plane(frames[i] + p * np, s->w, s->h, s->jpeg)) return -1;
    }
    return 0;
}

/* Mean distance, over the corners of every camera but the reference, between
 * where the rig and the truth put them in the reference camera's view. */
static inline double cv_corner_error(const cv_spec *s, const photo_t *ph, const gt_stitch_rig *rig, int ref,
                                     double *worst)
{
    double sum = 0, mx = 0;
    int n = 0;
    double Rref_inv[9];
    gt_stitch_h_invert(rig->cam[ref].H, Rref_inv);
    for (int i = 0; i < s->n; i++) {
        if (i == ref) continue;
        double T[9], E[9];
        cv_rel(s, ph->w, ph->h, i, ref, T);
        gt_stitch_h_mul(Rref_inv, rig->cam[i].H, E);
        double cx[4] = {0, s->w - 1.0, s->w - 1.0, 0}, cy[4] = {0, 0, s->h - 1.0, s->h - 1.0};
        for (int k = 0; k < 4; k++) {
            double a[2] = {cx[k], cy[k]}, t[2], wz = T[6] * a[0] + T[7] * a[1] + T[8];
            t[0] = (T[0] * a[0] + T[1] * a[1] + T[2]) / wz;
            t[1] = (T[3] * a[0] + T[4] * a[1] + T[5]) / wz;
            double e = gt_calib_transfer(E, a, t);
            sum += e, n++;
            mx = fmax(mx, e);
        }
    }
    if (worst) *worst = mx;
    return sum / n;
}

/* gain truth for camera i, plane p: what brings it back to the reference */
static inline double cv_gain_truth(const cv_spec *s, int ref, int i, int p)
{
    return s->gain[ref][p] / s->gain[i][p];
}

#endif
