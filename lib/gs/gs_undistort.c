/* The undistorted camera and image of a distorted photograph
 * (gs_undistort.h). */
#include "gs/gs_undistort.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "gs/gs_pixels.h"

bool gt_gs_model_is_pinhole(int m)
{
    return m == GT_COLMAP_SIMPLE_PINHOLE || m == GT_COLMAP_PINHOLE;
}

bool gt_gs_model_undistortable(int m)
{
    return m == GT_COLMAP_SIMPLE_RADIAL || m == GT_COLMAP_RADIAL || m == GT_COLMAP_OPENCV;
}

bool gt_gs_lens_from_colmap(const gt_colmap_camera *c, gt_gs_lens *l)
{
    const double *p = c->params;
    *l = (gt_gs_lens){0};
    switch (c->model) {
    case GT_COLMAP_SIMPLE_PINHOLE:
        *l = (gt_gs_lens){.fx = p[0], .fy = p[0], .cx = p[1], .cy = p[2]};
        return true;
    case GT_COLMAP_PINHOLE:
        *l = (gt_gs_lens){.fx = p[0], .fy = p[1], .cx = p[2], .cy = p[3]};
        return true;
    case GT_COLMAP_SIMPLE_RADIAL:
        *l = (gt_gs_lens){.fx = p[0], .fy = p[0], .cx = p[1], .cy = p[2], .k1 = p[3]};
        return true;
    case GT_COLMAP_RADIAL:
        *l = (gt_gs_lens){.fx = p[0], .fy = p[0], .cx = p[1], .cy = p[2], .k1 = p[3], .k2 = p[4]};
        return true;
    case GT_COLMAP_OPENCV:
        *l = (gt_gs_lens){.fx = p[0], .fy = p[1], .cx = p[2], .cy = p[3], .k1 = p[4], .k2 = p[5], .p1 = p[6],
                          .p2 = p[7]};
        return true;
    default:
        return false;
    }
}

/* The pinhole image position of distorted pixel (x, y); false when it
 * cannot be lifted. */
static bool undistorted_px(const gt_gs_lens *l, const gt_gs_pinhole *t, double x, double y, double *ux, double *uy)
{
    double u, v;
    if (!gt_gs_lens_unproject(l, x, y, &u, &v)) return false;
    *ux = t->fx * u + t->cx, *uy = t->fy * v + t->cy;
    return true;
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

gt_status gt_gs_undistort_camera(const gt_gs_lens *l, int w, int h, gt_gs_pinhole *out)
{
    gt_gs_pinhole t = {w, h, l->fx, l->fy, l->cx, l->cy};
    /* the undistorted x of the left and right borders, the y of the top and bottom */
    double lmin = DBL_MAX, lmax = -DBL_MAX, rmin = DBL_MAX, rmax = -DBL_MAX;
    double tmin = DBL_MAX, tmax = -DBL_MAX, bmin = DBL_MAX, bmax = -DBL_MAX;
    double x, y;
    for (int r = 0; r < h; r++) {
        if (!undistorted_px(l, &t, 0.5, r + 0.5, &x, &y)) goto fold;
        lmin = fmin(lmin, x), lmax = fmax(lmax, x);
        if (!undistorted_px(l, &t, w - 0.5, r + 0.5, &x, &y)) goto fold;
        rmin = fmin(rmin, x), rmax = fmax(rmax, x);
    }
    for (int c = 0; c < w; c++) {
        if (!undistorted_px(l, &t, c + 0.5, 0.5, &x, &y)) goto fold;
        tmin = fmin(tmin, y), tmax = fmax(tmax, y);
        if (!undistorted_px(l, &t, c + 0.5, h - 0.5, &x, &y)) goto fold;
        bmin = fmin(bmin, y), bmax = fmax(bmax, y);
    }
    {
        const double cx = t.cx, cy = t.cy;
        /* blank_pixels = 0: the scale of "no blank pixels" alone */
        double sx = fmax(cx / (cx - lmax), (w - 0.5 - cx) / (rmin - cx));
        double sy = fmax(cy / (cy - tmax), (h - 0.5 - cy) / (bmin - cy));
        if (!(sx > 0) || !(sy > 0) || !isfinite(sx) || !isfinite(sy)) goto fold;
        sx = clampd(1.0 / sx, 0.2, 2.0), sy = clampd(1.0 / sy, 0.2, 2.0);
        int nw = (int)fmax(1.0, sx * w), nh = (int)fmax(1.0, sy * h);
        t.cx = cx * nw / w, t.cy = cy * nh / h;
        t.width = nw, t.height = nh;
    }
    *out = t;
    return GT_OK;
fold:
    return gt_fail(GT_ERR_DATA,
                   "the distortion (k1 %g, k2 %g, p1 %g, p2 %g) cannot be inverted at the image border: not a "
                   "lens COLMAP would fit",
                   l->k1, l->k2, l->p1, l->p2);
}

size_t gt_gs_undistort_image(const gt_image *img, const gt_gs_lens *l, const gt_gs_pinhole *t, const float bg[3],
                             float *out, uint8_t *out8)
{
    const int W = img->w, H = img->h;
    const size_t np = (size_t)t->width * t->height;
    const bool rgb8 = img->bits == 8 && img->channels == 3; /* the common case, read directly */
    const uint8_t *d8 = img->data;
    size_t outside = 0;
    double *ucol = malloc(sizeof(double) * (size_t)t->width);
    if (!ucol) return (size_t)-1;
    for (int x = 0; x < t->width; x++) ucol[x] = (x + 0.5 - t->cx) / t->fx;
    for (int y = 0; y < t->height; y++) {
        double v = (y + 0.5 - t->cy) / t->fy;
        for (int x = 0; x < t->width; x++) {
            double sx, sy;
            gt_gs_lens_project(l, ucol[x], v, &sx, &sy);
            /* pixel (i, j) has its centre at (i + 0.5, j + 0.5) */
            double fx = sx - 0.5, fy = sy - 0.5;
            if (!(fx >= -0.5 - 1e-6 && fx <= W - 0.5 + 1e-6 && fy >= -0.5 - 1e-6 && fy <= H - 0.5 + 1e-6)) outside++;
            fx = clampd(fx, 0, W - 1), fy = clampd(fy, 0, H - 1);
            int i0 = (int)fx, j0 = (int)fy;
            int i1 = i0 + 1 < W ? i0 + 1 : i0, j1 = j0 + 1 < H ? j0 + 1 : j0;
            double rgb[3];
            if (rgb8) {
                float a = (float)(fx - i0), b = (float)(fy - j0);
                const uint8_t *p00 = d8 + 3 * ((size_t)j0 * W + i0), *p10 = d8 + 3 * ((size_t)j0 * W + i1);
                const uint8_t *p01 = d8 + 3 * ((size_t)j1 * W + i0), *p11 = d8 + 3 * ((size_t)j1 * W + i1);
                for (int c = 0; c < 3; c++) {
                    float top = p00[c] + a * (float)(p10[c] - p00[c]), bot = p01[c] + a * (float)(p11[c] - p01[c]);
                    rgb[c] = (top + b * (bot - top)) * (1.0f / 255.0f);
                }
            } else {
                double a = fx - i0, b = fy - j0;
                double p00[3], p10[3], p01[3], p11[3];
                gt_gs_pixel_rgb(img, i0, j0, bg, p00), gt_gs_pixel_rgb(img, i1, j0, bg, p10);
                gt_gs_pixel_rgb(img, i0, j1, bg, p01), gt_gs_pixel_rgb(img, i1, j1, bg, p11);
                for (int c = 0; c < 3; c++)
                    rgb[c] = (1 - b) * ((1 - a) * p00[c] + a * p10[c]) + b * ((1 - a) * p01[c] + a * p11[c]);
            }
            size_t at = (size_t)y * t->width + x;
            for (int c = 0; c < 3; c++) {
                if (out) out[(size_t)c * np + at] = (float)rgb[c];
                else out8[(size_t)c * np + at] = gt_gs_to_byte(rgb[c]);
            }
        }
    }
    free(ucol);
    return outside;
}
