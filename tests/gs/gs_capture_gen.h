/* Synthetic COLMAP captures for the capture tests (and gen_capture.c): a
 * model of one camera (any of the models gsrender reads), views on a circle
 * looking at the origin, random coloured 3-D points, and photographs whose
 * pixels are an analytic pattern of the normalised camera coordinates
 * (u, v) = (X/Z, Y/Z) of the pixel's ray: a distorted camera's photograph is
 * made by lifting each pixel centre through the inverse distortion, so the
 * undistorted image that gsrender should make is known exactly, pixel for
 * pixel, without a resampling of our own in between. */
#ifndef GS_CAPTURE_GEN_H
#define GS_CAPTURE_GEN_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/rng.h"
#include "gs/gs.h"
#include "gs/gs_capture.h"
#include "gs/gs_distort.h"
#include "gs/gs_undistort.h"
#include "io/colmap.h"
#include "io/image.h"

struct capgen;
/* Writes the photograph of model image i (pose m->images[i]) at w x h to path. */
typedef int (*capgen_photo_fn)(const struct capgen *g, const gt_colmap_model *m, int i, int w, int h,
                               const char *path);

typedef struct capgen {
    int nviews;
    int width, height;       /* the camera's (the photographs' full size) */
    int model;               /* a gt_colmap_model_id */
    double params[GT_COLMAP_MAX_PARAMS];
    size_t npoints;          /* random points in [-1, 1]^3 */
    bool binary;             /* .bin, else .txt */
    bool sparse0;            /* DIR/sparse/0, else DIR/sparse */
    bool png16;              /* 16-bit PNG photographs (else 8-bit) */
    const char *ext;         /* ".png" (default) */
    uint64_t seed;
    capgen_photo_fn photo;   /* NULL: the analytic pattern (capgen_photo) */
} capgen;

static inline void capgen_defaults(capgen *g)
{
    memset(g, 0, sizeof *g);
    g->nviews = 5, g->width = 48, g->height = 36;
    g->model = GT_COLMAP_PINHOLE;
    g->params[0] = 40, g->params[1] = 41, g->params[2] = 24.5, g->params[3] = 17.75;
    g->npoints = 50;
    g->binary = true, g->sparse0 = true;
    g->ext = ".png";
    g->seed = 7;
}

/* The pattern: RGB in [0.15, 0.85] of normalised coordinates, a different
 * phase per view; smooth (a period of about 0.45 in u and v). */
static inline void capgen_pattern(int view, double u, double v, double rgb[3])
{
    const double w = 2 * M_PI / 0.45;
    rgb[0] = 0.5 + 0.35 * sin(w * u + 0.7 * view);
    rgb[1] = 0.5 + 0.35 * sin(w * v - 0.3 * view);
    rgb[2] = 0.5 + 0.35 * sin(w * 0.7 * (u + v) + 1.1 * view);
}

/* The name of view i (the order of the ids is not that of the names). */
static inline void capgen_name(const capgen *g, int i, char *buf, size_t n)
{
    snprintf(buf, n, "view_%03d%s", (i * 7) % g->nviews, g->ext ? g->ext : ".png");
}

/* World -> camera pose of view i: on a circle of radius 4 around the y
 * axis, looking at the origin (x right, y down, z forward). */
static inline void capgen_pose(const capgen *g, int i, double q[4], double t[3])
{
    double a = 2 * M_PI * i / g->nviews;
    double C[3] = {4 * sin(a), -0.5, -4 * cos(a)};
    double f[3] = {-C[0], -C[1], -C[2]};
    double fn = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int k = 0; k < 3; k++) f[k] /= fn;
    double down[3] = {0, 1, 0};
    double r[3] = {down[1] * f[2] - down[2] * f[1], down[2] * f[0] - down[0] * f[2], down[0] * f[1] - down[1] * f[0]};
    double rn = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    for (int k = 0; k < 3; k++) r[k] /= rn;
    double d[3] = {f[1] * r[2] - f[2] * r[1], f[2] * r[0] - f[0] * r[2], f[0] * r[1] - f[1] * r[0]};
    double R[9] = {r[0], r[1], r[2], d[0], d[1], d[2], f[0], f[1], f[2]}; /* rows: camera axes in world */
    for (int k = 0; k < 3; k++) t[k] = -(R[3 * k] * C[0] + R[3 * k + 1] * C[1] + R[3 * k + 2] * C[2]);
    /* rotation matrix -> quaternion (w x y z) */
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = sqrt(tr + 1.0) * 2;
        q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = sqrt(1.0 + R[0] - R[4] - R[8]) * 2;
        q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = sqrt(1.0 + R[4] - R[0] - R[8]) * 2;
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
    } else {
        double s = sqrt(1.0 + R[8] - R[0] - R[4]) * 2;
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
    }
}

/* The photograph of view i at w x h (a camera scaled from the full size
 * when w, h differ from it, as images_N holds it), as 8 or 16-bit RGB. */
static inline int capgen_photo(const capgen *g, int i, int w, int h, const char *path)
{
    gt_colmap_camera c = {.model = g->model, .width = g->width, .height = g->height,
                          .nparams = gt_colmap_model_nparams(g->model)};
    memcpy(c.params, g->params, sizeof c.params);
    gt_gs_lens l;
    if (!gt_gs_lens_from_colmap(&c, &l)) {
        /* another model: the pattern through a pinhole of its first
         * parameters (it is refused before its pixels matter) */
        l = (gt_gs_lens){.fx = g->params[0], .fy = g->params[0], .cx = g->width / 2.0, .cy = g->height / 2.0};
    }
    double sx = (double)w / g->width, sy = (double)h / g->height;
    l.fx *= sx, l.cx *= sx, l.fy *= sy, l.cy *= sy;
    gt_image im = {.w = w, .h = h, .channels = 3, .bits = g->png16 ? 16 : 8};
    im.data = malloc((size_t)w * h * 3 * (g->png16 ? 2 : 1));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double u, v, rgb[3];
            gt_gs_lens_unproject(&l, x + 0.5, y + 0.5, &u, &v);
            capgen_pattern(i, u, v, rgb);
            for (int k = 0; k < 3; k++) {
                size_t at = ((size_t)y * w + x) * 3 + k;
                if (g->png16) ((uint16_t *)im.data)[at] = (uint16_t)lrint(rgb[k] * 65535);
                else ((uint8_t *)im.data)[at] = (uint8_t)lrint(rgb[k] * 255);
            }
        }
    int rc = gt_png_write_image(path, &im, 3, 1) == GT_OK ? 0 : -1;
    free(im.data);
    return rc;
}

/* A photograph rendered (CPU reference) from Gaussians at the model's
 * points (linear scale 0.08, opacity 0.9, their colours as SH DC) on a
 * black background, so that a fit can learn the views: the undistorted
 * pinhole camera's image, then, for a distorted camera, that image sampled
 * (bilinear) at each pixel's undistorted position. */
static inline int capgen_photo_render(const capgen *g, const gt_colmap_model *m, int i, int w, int h,
                                      const char *path)
{
    gt_gs_lens l;
    if (!gt_gs_lens_from_colmap(&m->cameras[0], &l)) return capgen_photo(g, i, w, h, path);
    double sx = (double)w / g->width, sy = (double)h / g->height;
    l.fx *= sx, l.cx *= sx, l.fy *= sy, l.cy *= sy;
    gt_gs_pinhole t = {w, h, l.fx, l.fy, l.cx, l.cy};
    bool distorted = !gt_gs_model_is_pinhole(g->model);
    if (distorted && gt_gs_undistort_camera(&l, w, h, &t) != GT_OK) return -1;
    const gt_colmap_points *p = &m->points;
    gt_gs_scene sc;
    if (gt_gs_scene_alloc(&sc, p->n, 0) != GT_OK) return -1;
    for (size_t k = 0; k < p->n; k++) {
        for (int c = 0; c < 3; c++) {
            sc.pos[3 * k + c] = (float)p->xyz[3 * k + c];
            sc.scale[3 * k + c] = 0.08f;
            sc.sh[3 * k + c] = (float)((p->rgb[3 * k + c] / 255.0 - 0.5) / GT_GS_SH_C0);
        }
        sc.rot[4 * k] = 1, sc.rot[4 * k + 1] = sc.rot[4 * k + 2] = sc.rot[4 * k + 3] = 0;
        sc.opacity[k] = 0.9f;
    }
    gt_gs_camera c;
    gt_gs_camera_from_pose(&c, m->images[i].qvec, m->images[i].tvec, t.width, t.height, t.fx, t.fy, t.cx, t.cy);
    gt_gs_params prm;
    gt_gs_params_init(&prm);
    gt_gs_image out;
    int rc = -1;
    if (gt_gs_image_alloc(&out, t.width, t.height) == GT_OK && gt_gs_render_cpu(&sc, &c, &prm, &out) == GT_OK) {
        uint8_t *b = malloc((size_t)w * h * 3);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double px = x + 0.5, py = y + 0.5; /* the pinhole pixel seen by distorted pixel (x, y) */
                if (distorted) {
                    double u, v;
                    gt_gs_lens_unproject(&l, x + 0.5, y + 0.5, &u, &v);
                    px = t.fx * u + t.cx, py = t.fy * v + t.cy;
                }
                double fx = fmin(fmax(px - 0.5, 0), t.width - 1), fy = fmin(fmax(py - 0.5, 0), t.height - 1);
                int i0 = (int)fx, j0 = (int)fy, i1 = i0 + 1 < t.width ? i0 + 1 : i0, j1 = j0 + 1 < t.height ? j0 + 1 : j0;
                double a = fx - i0, bb = fy - j0;
                for (int k = 0; k < 3; k++) {
                    const float *r = out.rgb;
                    double top = (1 - a) * r[3 * ((size_t)j0 * t.width + i0) + k] + a * r[3 * ((size_t)j0 * t.width + i1) + k];
                    double bot = (1 - a) * r[3 * ((size_t)j1 * t.width + i0) + k] + a * r[3 * ((size_t)j1 * t.width + i1) + k];
                    double v = (1 - bb) * top + bb * bot;
                    b[((size_t)y * w + x) * 3 + k] = (uint8_t)lrint(fmin(fmax(v, 0), 1) * 255);
                }
            }
        rc = gt_png_write(path, w, h, 3, b) == GT_OK ? 0 : -1;
        free(b);
    }
    gt_gs_image_free(&out);
    gt_gs_scene_free(&sc);
    return rc;
}

/* The model of the capture (points first, then the images' poses). */
static inline int capgen_model(const capgen *g, gt_colmap_model *m)
{
    memset(m, 0, sizeof *m);
    m->ncameras = 1;
    m->cameras = calloc(1, sizeof *m->cameras);
    m->cameras[0] = (gt_colmap_camera){.id = 1, .model = g->model, .width = g->width, .height = g->height,
                                       .nparams = gt_colmap_model_nparams(g->model)};
    memcpy(m->cameras[0].params, g->params, sizeof g->params);
    uint64_t s = g->seed;
    if (gt_colmap_points_alloc(&m->points, g->npoints, false) != GT_OK) return -1;
    m->points.n = g->npoints;
    for (size_t i = 0; i < g->npoints; i++) {
        m->points.id[i] = i + 1;
        for (int k = 0; k < 3; k++) m->points.xyz[3 * i + k] = 2 * gt_rng_unit(&s) - 1;
        for (int k = 0; k < 3; k++) m->points.rgb[3 * i + k] = (uint8_t)(gt_splitmix64(&s) & 255);
        m->points.error[i] = 0.5;
        m->points.track_len[i] = 0;
    }
    m->nimages = (size_t)g->nviews;
    m->images = calloc(m->nimages, sizeof *m->images);
    for (int i = 0; i < g->nviews; i++) {
        gt_colmap_image *im = &m->images[i];
        char name[256];
        capgen_name(g, i, name, sizeof name);
        im->id = (uint32_t)(100 + i), im->camera_id = 1, im->name = strdup(name);
        capgen_pose(g, i, im->qvec, im->tvec);
    }
    return 0;
}

static inline int capgen_photo_any(const capgen *g, const gt_colmap_model *m, int i, int w, int h, const char *path)
{
    return g->photo ? g->photo(g, m, i, w, h, path) : capgen_photo(g, i, w, h, path);
}

/* Write the capture into dir (created): the model and images/. */
static inline int capgen_write(const capgen *g, const char *dir)
{
    char path[1024];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/images", dir), mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/sparse", dir), mkdir(path, 0755);
    char model_dir[1024];
    snprintf(model_dir, sizeof model_dir, g->sparse0 ? "%s/sparse/0" : "%s/sparse", dir);
    mkdir(model_dir, 0755);
    gt_colmap_model m;
    int rc = capgen_model(g, &m);
    for (int i = 0; i < g->nviews && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/images/%s", dir, m.images[i].name);
        rc = capgen_photo_any(g, &m, i, g->width, g->height, path);
    }
    if (rc == 0 && gt_colmap_write(model_dir, &m, g->binary) != GT_OK) rc = -1;
    gt_colmap_free(&m);
    return rc;
}

/* DIR/images_N/ with every photograph at w x h. */
static inline int capgen_write_images_n(const capgen *g, const char *dir, int n, int w, int h)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/images_%d", dir, n), mkdir(path, 0755);
    gt_colmap_model m;
    int rc = capgen_model(g, &m);
    for (int i = 0; i < g->nviews && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/images_%d/%s", dir, n, m.images[i].name);
        rc = capgen_photo_any(g, &m, i, w, h, path);
    }
    gt_colmap_free(&m);
    return rc;
}

#endif
