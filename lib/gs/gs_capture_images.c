/* The photographs of a capture's views (gs_capture.h): decoded through
 * io/image.h, checked against their camera's size, undistorted when the
 * camera is distorted (gs_undistort.h), area-averaged to the view's size
 * (gs_pixels.h), as planar floats or bytes. All views load in parallel:
 * each thread decodes and converts one photograph at a time. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "gs/gs_capture.h"
#include "gs/gs_pixels.h"
#include "io/image.h"

/* Whether a photograph of s pixels a side fits a camera side of full/N
 * pixels: rounded with halves to even (the reference) or up (COLMAP,
 * ImageMagick). */
static bool side_ok(int s, int full, int r)
{
    double v = (double)full / r;
    int even = (int)nearbyint(v), up = (int)floor(v + 0.5);
    return s == even || s == up;
}

static gt_status size_error(const gt_gs_capture *cap, const gt_gs_view *v, const gt_image *img)
{
    const gt_gs_capture_lens *L = &cap->lenses[v->lens];
    if (cap->images_n)
        return gt_fail(GT_ERR_DATA,
                       "image '%s' is %dx%d but its camera %u is %dx%d, so %s/ should hold it at %dx%d "
                       "(the size / %d, rounded)",
                       v->path, img->w, img->h, L->camera_id, L->width, L->height, cap->image_dir,
                       (int)nearbyint((double)L->width / cap->resolution),
                       (int)nearbyint((double)L->height / cap->resolution), cap->resolution);
    if (gt_gs_lens_rescaled(L))
        return gt_fail(GT_ERR_DATA, "image '%s' is %dx%d but the photographs of its camera %u (%dx%d in the model) "
                       "are %dx%d", v->path, img->w, img->h, L->camera_id, L->colmap_width, L->colmap_height,
                       L->width, L->height);
    return gt_fail(GT_ERR_DATA, "image '%s' is %dx%d but its camera %u is %dx%d", v->path, img->w, img->h,
                   L->camera_id, L->width, L->height);
}

gt_status gt_gs_capture_load_view(const gt_gs_capture *cap, int i, const float bg[3], gt_gs_pixfmt fmt, void *out)
{
    if (i < 0 || i >= cap->nviews) return gt_fail(GT_ERR_USAGE, "view %d of %d", i, cap->nviews);
    const gt_gs_view *v = &cap->views[i];
    const gt_gs_capture_lens *L = &cap->lenses[v->lens];
    const int w = v->cam.width, h = v->cam.height;
    float *outf = fmt == GT_GS_PIX_F32 ? out : NULL;
    uint8_t *out8 = fmt == GT_GS_PIX_U8 ? out : NULL;
    struct stat sb;
    if (stat(v->path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return gt_fail(GT_ERR_DATA, "image '%s' of view '%s' is missing", v->path, v->cam.name);
    gt_image img;
    gt_status rs = gt_image_read(v->path, 0, 1, &img);
    if (rs != GT_OK) {
        gt_errmsg_prefix("view '%s'", v->cam.name);
        return rs;
    }
    bool ok = cap->images_n ? side_ok(img.w, L->width, cap->resolution) && side_ok(img.h, L->height, cap->resolution)
                            : img.w == L->width && img.h == L->height;
    if (!ok) {
        gt_status st = size_error(cap, v, &img);
        gt_image_free(&img);
        return st;
    }
    gt_status st = GT_OK;
    gt_gs_pixsrc src = {.img = &img, .w = img.w, .h = img.h, .bg = bg};
    float *warped = NULL;
    if (L->distorted) {
        /* the lens at the photograph's size; the pinhole camera to warp to:
         * the view's own (from images_N, or at full size), else the
         * full-size one, averaged down after */
        gt_gs_lens l = L->lens;
        double sx = (double)img.w / L->width, sy = (double)img.h / L->height;
        l.fx *= sx, l.cx *= sx, l.fy *= sy, l.cy *= sy;
        gt_gs_pinhole t = L->pinhole;
        if (cap->images_n || (w == t.width && h == t.height)) {
            t = (gt_gs_pinhole){w, h, v->cam.fx, v->cam.fy, v->cam.cx, v->cam.cy};
            size_t r = gt_gs_undistort_image(&img, &l, &t, bg, outf, out8);
            gt_image_free(&img);
            return r == (size_t)-1 ? gt_fail(GT_ERR_RUNTIME, "out of memory (undistorting)") : GT_OK;
        }
        warped = gt_malloc_array((size_t)t.width * t.height, 3 * sizeof(float), "undistorted image");
        if (!warped) st = GT_ERR_RUNTIME;
        else {
            if (gt_gs_undistort_image(&img, &l, &t, bg, warped, NULL) == (size_t)-1)
                st = gt_fail(GT_ERR_RUNTIME, "out of memory (undistorting)");
            src = (gt_gs_pixsrc){.rgb = warped, .w = t.width, .h = t.height};
        }
    }
    if (st == GT_OK) st = gt_gs_pixels_resample(&src, w, h, outf, out8);
    free(warped);
    gt_image_free(&img);
    return st;
}

void gt_gs_capture_images_free(void **img, int n)
{
    if (!img) return;
    for (int i = 0; i < n; i++) free(img[i]);
    free(img);
}

gt_status gt_gs_capture_load_images(const gt_gs_capture *cap, const float bg[3], gt_gs_pixfmt fmt, void ***out)
{
    *out = NULL;
    const int n = cap->nviews;
    void **img = gt_calloc((size_t)n, sizeof *img, "training images");
    gt_status *sts = gt_calloc((size_t)n, sizeof *sts, "training images");
    char **msg = gt_calloc((size_t)n, sizeof *msg, "training images");
    if (!img || !sts || !msg) {
        free(img), free(sts), free(msg);
        return GT_ERR_RUNTIME;
    }
    const size_t px = fmt == GT_GS_PIX_F32 ? sizeof(float) : 1;
    atomic_int failed = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        if (atomic_load(&failed)) continue;
        const gt_gs_camera *c = &cap->views[i].cam;
        gt_status st = GT_OK;
        img[i] = malloc(3 * (size_t)c->width * (size_t)c->height * px);
        if (!img[i]) st = gt_fail(GT_ERR_RUNTIME, "out of memory (image '%s')", cap->views[i].path);
        else st = gt_gs_capture_load_view(cap, i, bg, fmt, img[i]);
        if (st != GT_OK) {
            sts[i] = st;
            msg[i] = strdup(gt_errmsg());
            atomic_store(&failed, 1);
        }
    }
    gt_status st = GT_OK;
    for (int i = 0; i < n && st == GT_OK; i++)
        if (sts[i] != GT_OK) st = gt_fail(sts[i], "%s", msg[i] ? msg[i] : "cannot load a training image");
    for (int i = 0; i < n; i++) free(msg[i]);
    free(sts), free(msg);
    if (st != GT_OK) {
        gt_gs_capture_images_free(img, n);
        return st;
    }
    *out = img;
    return GT_OK;
}
