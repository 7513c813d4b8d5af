/* Synthetic scenes for the stitch tests: a procedural natural-looking image
 * (1/f octaves of smooth noise, soft-edged blobs: a stand-in for a
 * photograph, evaluated analytically so that camera views can be rendered
 * without resampling loss), a 4-camera rig cutting it into overlapping
 * perspective views, and format helpers. */
#ifndef GT_STITCH_SYNTH_H
#define GT_STITCH_SYNTH_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gt_test.h"
#include "stitch/stitch.h"
#include "stitch_render.h"

typedef struct {
    double fx[24], fy[24], ph[24], amp[24];
    int nw;
    double bx[12], by[12], br[12], bv[12], bu[12], bvv[12];
    int nb;
} synth_scene;

static inline void synth_init(synth_scene *s, uint64_t seed)
{
    gt_rng r = {seed};
    s->nw = 24;
    for (int k = 0; k < s->nw; k++) {
        double lambda = 96.0 / pow(1.35, k % 8); /* 96 .. ~12 px */
        double th = gt_rng_range(&r, 0, 2 * M_PI);
        s->fx[k] = cos(th) / lambda * 2 * M_PI;
        s->fy[k] = sin(th) / lambda * 2 * M_PI;
        s->ph[k] = gt_rng_range(&r, 0, 2 * M_PI);
        s->amp[k] = 0.35 * lambda / 3.0 * gt_rng_range(&r, 0.5, 1.0);
    }
    s->nb = 12;
    for (int k = 0; k < s->nb; k++) {
        s->bx[k] = gt_rng_range(&r, 0, 400);
        s->by[k] = gt_rng_range(&r, 0, 140);
        s->br[k] = gt_rng_range(&r, 6, 24);
        s->bv[k] = gt_rng_range(&r, -40, 40);
        s->bu[k] = gt_rng_range(&r, -20, 20);
        s->bvv[k] = gt_rng_range(&r, -20, 20);
    }
}

/* Y, U, V (floating, before quantisation) of the scene at (x, y) */
static inline void synth_eval(const synth_scene *s, double x, double y, double yuv[3])
{
    double Y = 110, U = 128, V = 128;
    for (int k = 0; k < s->nw; k++) {
        double a = s->amp[k] * sin(s->fx[k] * x + s->fy[k] * y + s->ph[k]);
        Y += a;
        if (k % 3 == 0) U += 0.3 * a;
        if (k % 3 == 1) V += 0.3 * a;
    }
    for (int k = 0; k < s->nb; k++) {
        double d = hypot(x - s->bx[k], y - s->by[k]) - s->br[k];
        double t = 1.0 / (1.0 + exp(d / 2.5)); /* soft edge, ~2.5 px */
        Y += s->bv[k] * t;
        U += s->bu[k] * t;
        V += s->bvv[k] * t;
    }
    yuv[0] = Y, yuv[1] = U, yuv[2] = V;
}

static inline double synth_sample(const void *src, int k, double X, double Y)
{
    double yuv[3];
    synth_eval((const synth_scene *)src, X, Y, yuv);
    return yuv[k];
}
/* Render a frame of format f, w x h, where sample positions map through
 * M (frame luma coords -> scene coords); luma scaled by `exposure`. */
static inline void synth_render(const synth_scene *s, const double M[9], double exposure, gt_pixfmt f, int w, int h,
                                uint8_t *frame)
{
    stitch_render_view(synth_sample, s, M, exposure, f, w, h, frame);
}

/* A rig of 4 cameras (cw x ch each) over a pw x ph panorama, with mild
 * perspective, overlapping by about `overlap` pixels. */
static inline void synth_rig(gt_stitch_rig *rig, int pw, int ph, int cw, int ch, int overlap)
{
    memset(rig, 0, sizeof *rig);
    rig->pano_w = pw;
    rig->pano_h = ph;
    rig->ncam = 4;
    double step = (pw - cw) / 3.0;
    (void)overlap;
    for (int i = 0; i < 4; i++) {
        double tx = i * step, ty = -(ch - ph) / 2.0;
        double p = (i % 2 ? 1 : -1) * 1.5e-4, sh = (i - 1.5) * 0.02;
        double H[9] = {1.0 + 0.01 * i, sh, tx, -0.01 * (i - 1.5), 1.0, ty, p, 0.5 * p, 1.0};
        memcpy(rig->cam[i].H, H, sizeof H);
        gt_stitch_h_invert(H, rig->cam[i].Hinv);
        rig->cam[i].gain = 1.0f;
    }
}
#endif
