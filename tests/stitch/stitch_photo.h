/* Real photographs for the stitch ground-truth tests (testdata/stitch/
 * photo_*.png, see LICENSE-photos there): the photograph is the panorama;
 * four cameras with known homographies see it through overlapping
 * perspective views at twice its resolution (as a rig whose panorama is
 * scaled down), rendered with Keys bicubic interpolation of the photograph
 * (interpolating: the views agree with the photo at its pixel centres) and
 * scaled by a per-camera exposure. */
#ifndef GT_STITCH_PHOTO_H
#define GT_STITCH_PHOTO_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_test.h"
#include "io/image.h"
#include "stitch/stitch.h"
#include "stitch_render.h"

#define PHOTO_N 3
static const char *const photo_names[PHOTO_N] = {"photo_coffee.png", "photo_chelsea.png", "photo_astronaut.png"};

typedef struct {
    int w, h;
    double *c[3]; /* Y, U, V at every pixel: BT.601, limited range, unquantised */
} photo_t;

/* Load testdata/stitch/<name> ($GT_TESTDATA or ./testdata) as Y, U, V planes. */
static inline void photo_load(const char *name, photo_t *p)
{
    const char *td = getenv("GT_TESTDATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/stitch/%s", td ? td : "testdata", name);
    gt_image img;
    if (gt_image_read(path, 3, 0, &img) != GT_OK) fail_msg("cannot read %s: %s", path, gt_errmsg());
    p->w = img.w, p->h = img.h;
    size_t n = (size_t)img.w * img.h;
    for (int k = 0; k < 3; k++) p->c[k] = malloc(sizeof(double) * n);
    const uint8_t *rgb = img.data;
    const double kr = 0.299, kb = 0.114, kg = 1 - kr - kb;
    for (size_t i = 0; i < n; i++) {
        double R = rgb[3 * i] / 255.0, G = rgb[3 * i + 1] / 255.0, B = rgb[3 * i + 2] / 255.0;
        double Y = kr * R + kg * G + kb * B;
        p->c[0][i] = 16 + 219 * Y;
        p->c[1][i] = 128 + 224 * (B - Y) / (2 * (1 - kb));
        p->c[2][i] = 128 + 224 * (R - Y) / (2 * (1 - kr));
    }
    gt_image_free(&img);
}

static inline void photo_free(photo_t *p)
{
    for (int k = 0; k < 3; k++) free(p->c[k]);
}

/* the photograph's component k at pixel (x, y) (clamped to the image) */
static inline double photo_px(const photo_t *p, int k, int x, int y)
{
    x = x < 0 ? 0 : x >= p->w ? p->w - 1 : x;
    y = y < 0 ? 0 : y >= p->h ? p->h - 1 : y;
    return p->c[k][(size_t)y * p->w + x];
}

static inline double photo_keys(double t) /* Keys cubic, a = -0.5 */
{
    t = fabs(t);
    return t < 1 ? (1.5 * t - 2.5) * t * t + 1 : t < 2 ? ((-0.5 * t + 2.5) * t - 4) * t + 2 : 0;
}

static inline double photo_at(const photo_t *p, int k, double x, double y)
{
    int x0 = (int)floor(x), y0 = (int)floor(y);
    double v = 0;
    for (int j = -1; j <= 2; j++) {
        double wy = photo_keys(y - (y0 + j)), row = 0;
        for (int i = -1; i <= 2; i++) row += photo_keys(x - (x0 + i)) * photo_px(p, k, x0 + i, y0 + j);
        v += wy * row;
    }
    return v;
}

static inline double photo_sample(const void *src, int k, double X, double Y)
{
    return photo_at((const photo_t *)src, k, X, Y);
}
/* Render camera frame (format f, w x h) of the photograph seen through H
 * (see stitch_render.h); luma times exposure. */
static inline void photo_render(const photo_t *p, const double H[9], double exposure, gt_pixfmt f, int w, int h,
                                uint8_t *frame)
{
    stitch_render_view(photo_sample, p, H, exposure, f, w, h, frame);
}

/* Four cameras of cw x ch (PHOTO_CW x PHOTO_CH) over a pw x ph panorama at
 * half their resolution, mild perspective, shear and rotation each,
 * overlapping by about `overlap` panorama pixels. */
#define PHOTO_CH 360
static inline void photo_rig(gt_stitch_rig *rig, int pw, int ph, int overlap, int *cw)
{
    memset(rig, 0, sizeof *rig);
    rig->pano_w = pw, rig->pano_h = ph, rig->ncam = 4;
    const double s = 0.5;
    double span = (pw + 3.0 * overlap) / 4.0; /* panorama width each camera covers */
    *cw = 2 * (int)ceil(span / s / 2);
    double step = (pw - *cw * s) / 3.0;
    for (int i = 0; i < 4; i++) {
        double p = (i % 2 ? 1 : -1) * 1.2e-4, sh = (i - 1.5) * 0.02;
        double H[9] = {s * (1.0 + 0.01 * i), s * sh, i * step, -0.01 * s * (i - 1.5), s, -(PHOTO_CH * s - ph) / 2.0,
                       p, 0.5 * p, 1.0};
        memcpy(rig->cam[i].H, H, sizeof H);
        gt_stitch_h_invert(H, rig->cam[i].Hinv);
        rig->cam[i].gain = 1.0f;
    }
}
#endif
