/* A COLMAP capture's views (gs_capture.h): the model folder and the images
 * folder, the lenses and their undistorted cameras, the views sorted by
 * name with their cameras at the chosen resolution, the held-out split. */
#include "gs/gs_capture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/path.h"
#include "io/image.h"
#include "io/nerf_transforms.h"

void gt_gs_capture_opts_init(gt_gs_capture_opts *o)
{
    o->resolution = 0;
    o->auto_width = GT_GS_AUTO_WIDTH;
    o->test_every = 8;
}

/* The model folder: DIR/sparse/0, else DIR/sparse. */
static gt_status find_model(gt_gs_capture *cap)
{
    char *s0 = gt_path_join(cap->dir, "sparse/0"), *s = gt_path_join(cap->dir, "sparse");
    if (!s0 || !s) {
        free(s0), free(s);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    if (gt_path_is_dir(s0)) cap->model_dir = s0, free(s);
    else if (gt_path_is_dir(s)) cap->model_dir = s, free(s0);
    else {
        free(s0), free(s);
        return gt_fail(GT_ERR_DATA,
                       "'%s' is not a capture: it has no sparse/0/ or sparse/ folder (a COLMAP model: cameras, "
                       "images and points3D, .bin or .txt) and no transforms_train.json or transforms.json (NeRF)",
                       cap->dir);
    }
    return GT_OK;
}

static gt_status unsupported(const gt_gs_capture *cap, const gt_colmap_camera *c, const char *image)
{
    return gt_fail(GT_ERR_DATA,
                   "camera %u (image '%s') is a %s camera: gsrender takes PINHOLE and SIMPLE_PINHOLE cameras and "
                   "undistorts SIMPLE_RADIAL, RADIAL and OPENCV ones; undistort the capture first: colmap "
                   "image_undistorter --image_path %s/images --input_path %s --output_path OUT (or pycolmap's "
                   "undistort_images(OUT, '%s', '%s/images')), then train on OUT",
                   c->id, image, gt_colmap_model_name(c->model), cap->dir, cap->model_dir, cap->model_dir, cap->dir);
}

/* The first registered image of model m that folder dir lacks, or NULL. */
static const char *first_missing(const char *dir, const gt_colmap_model *m)
{
    for (size_t i = 0; i < m->nimages; i++) {
        char *p = gt_path_join(dir, m->images[i].name);
        bool there = p && gt_path_is_file(p);
        free(p);
        if (!there) return m->images[i].name;
    }
    return NULL;
}

/* images_N/ that lacks a registered photograph which images/ holds (LLFF's
 * images_8/image000.png beside images/IMG_4026.JPG) gives way to images/,
 * downscaled as it loads. */
static gt_status images_n_or_full(gt_gs_capture *cap)
{
    const char *miss = first_missing(cap->image_dir, &cap->model);
    if (!miss) return GT_OK;
    char *full = gt_path_join(cap->dir, "images");
    if (!full) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    if (!gt_path_is_dir(full) || first_missing(full, &cap->model)) {
        free(full); /* the loader names the photograph images_N/ lacks */
        return GT_OK;
    }
    gt_notice("'%s' has no '%s' (its names are not the model's): the photographs of images/ are downscaled %dx "
              "as they load instead", cap->image_dir, miss, cap->resolution);
    free(cap->image_dir);
    cap->image_dir = full;
    cap->images_n = false;
    return GT_OK;
}

/* Lens L at the size of its first photograph (image, in images/) when that
 * is of another size but the camera's shape (gs_capture.h); any other
 * photograph is left to the checks as it loads. */
static void scale_to_photographs(const gt_gs_capture *cap, const char *image, gt_gs_capture_lens *L)
{
    char *path = gt_path_join(cap->image_dir, image);
    int w = 0, h = 0;
    bool read = path && gt_image_size(path, &w, &h) == GT_OK;
    free(path);
    if (!read || (w == L->width && h == L->height)) return;
    double s = (double)L->width / w;
    if (!(fabs(L->height / s - h) < 1)) return;
    double sx = (double)w / L->width, sy = (double)h / L->height;
    L->lens.fx *= sx, L->lens.cx *= sx, L->lens.fy *= sy, L->lens.cy *= sy;
    L->width = w, L->height = h;
}

/* The lens entry of COLMAP camera c, made on first use. */
static gt_status lens_of(gt_gs_capture *cap, const gt_colmap_camera *c, const char *image, int *out)
{
    for (int k = 0; k < cap->nlenses; k++)
        if (cap->lenses[k].camera_id == c->id) {
            *out = k;
            return GT_OK;
        }
    gt_gs_capture_lens L = {.camera_id = c->id, .model = c->model, .width = c->width, .height = c->height,
                            .colmap_width = c->width, .colmap_height = c->height};
    if (!gt_gs_lens_from_colmap(c, &L.lens)) return unsupported(cap, c, image);
    if (!(L.lens.fx > 0) || !(L.lens.fy > 0))
        return gt_fail(GT_ERR_DATA, "camera %u (%s): focal lengths %g, %g are not positive (%s)", c->id,
                       gt_colmap_model_name(c->model), L.lens.fx, L.lens.fy, cap->model.cameras_path);
    if (!cap->images_n) scale_to_photographs(cap, image, &L);
    L.distorted = !gt_gs_model_is_pinhole(c->model);
    if (L.distorted) {
        if (gt_gs_undistort_camera(&L.lens, L.width, L.height, &L.pinhole) != GT_OK) {
            gt_errmsg_prefix("camera %u (%s, %s)", c->id, gt_colmap_model_name(c->model), cap->model.cameras_path);
            return GT_ERR_DATA;
        }
    } else {
        L.pinhole = (gt_gs_pinhole){L.width, L.height, L.lens.fx, L.lens.fy, L.lens.cx, L.lens.cy};
    }
    gt_gs_capture_lens *nl = realloc(cap->lenses, sizeof *nl * (size_t)(cap->nlenses + 1));
    if (!nl) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    cap->lenses = nl;
    cap->lenses[cap->nlenses] = L;
    *out = cap->nlenses++;
    return GT_OK;
}

/* Python's round(v) for v >= 0: halves to even. */
static int round_even(double v)
{
    double f = floor(v), d = v - f;
    if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0)) f += 1;
    return (int)f;
}

void gt_gs_camera_from_pose(gt_gs_camera *c, const double q_in[4], const double t[3], int w, int h, double fx,
                            double fy, double cx, double cy)
{
    memset(c, 0, sizeof *c);
    c->width = w, c->height = h;
    c->fx = (float)fx, c->fy = (float)fy, c->cx = (float)cx, c->cy = (float)cy;
    double n = sqrt(q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] + q_in[3] * q_in[3]);
    double qw = q_in[0] / n, x = q_in[1] / n, y = q_in[2] / n, z = q_in[3] / n;
    const double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - qw * z),     2 * (x * z + qw * y),
                         2 * (x * y + qw * z),     1 - 2 * (x * x + z * z), 2 * (y * z - qw * x),
                         2 * (x * z - qw * y),     2 * (y * z + qw * x),     1 - 2 * (x * x + y * y)};
    for (int k = 0; k < 9; k++) c->R[k] = (float)R[k];
    for (int k = 0; k < 3; k++) {
        c->t[k] = (float)t[k];
        c->campos[k] = (float)-(R[k] * t[0] + R[3 + k] * t[1] + R[6 + k] * t[2]);
    }
}

/* The view of image im with lens L at the capture's resolution: the size /
 * r rounded half to even, or scaled to width_to wide as the reference does
 * it (scale = width / width_to, the sides int(side / scale)). */
static gt_status make_view(gt_gs_capture *cap, const gt_colmap_image *im, int lens, gt_gs_view *v)
{
    const gt_gs_capture_lens *L = &cap->lenses[lens];
    const gt_gs_pinhole *p = &L->pinhole;
    int r = cap->resolution;
    int w = r > 1 ? round_even((double)p->width / r) : p->width;
    int h = r > 1 ? round_even((double)p->height / r) : p->height;
    if (cap->width_to > 0 && p->width > cap->width_to) {
        double scale = (double)p->width / cap->width_to;
        w = (int)(p->width / scale), h = (int)(p->height / scale);
        cap->scaled++;
    }
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    if (w > GT_GS_MAX_SIZE || h > GT_GS_MAX_SIZE)
        return gt_fail(GT_ERR_DATA, "image '%s': %dx%d is larger than %d pixels a side", im->name, w, h,
                       GT_GS_MAX_SIZE);
    double sx = (double)w / p->width, sy = (double)h / p->height;
    gt_gs_camera *c = &v->cam;
    gt_gs_camera_from_pose(c, im->qvec, im->tvec, w, h, p->fx * sx, p->fy * sy, p->cx * sx, p->cy * sy);
    const char *dot = strrchr(im->name, '.'), *slash = strrchr(im->name, '/');
    size_t stem = dot && (!slash || dot > slash) && dot != im->name ? (size_t)(dot - im->name) : strlen(im->name);
    if (stem >= sizeof c->name)
        return gt_fail(GT_ERR_DATA, "image '%s': a name longer than %zu bytes (%s)", im->name, sizeof c->name - 1,
                       cap->model.images_path);
    memcpy(c->name, im->name, stem);
    c->name[stem] = 0;
    v->path = gt_path_join(cap->image_dir, im->name);
    if (!v->path) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    v->colmap_name = im->name;
    v->image_id = im->id;
    v->lens = lens;
    return GT_OK;
}

static int cmp_view(const void *a, const void *b)
{
    const gt_gs_view *x = a, *y = b;
    return strcmp(x->colmap_name, y->colmap_name);
}

gt_status gt_gs_capture_open(const char *dir, const gt_gs_capture_opts *o, gt_gs_capture *cap)
{
    memset(cap, 0, sizeof *cap);
    gt_gs_capture_opts def;
    gt_gs_capture_opts_init(&def);
    if (!o) o = &def;
    const int res = o->resolution;
    if (!(res == 0 || res == 1 || res == 2 || res == 4 || res == 8 || res >= 16))
        return gt_fail(GT_ERR_USAGE, "resolution %d: expected 1, 2, 4 or 8 (a factor) or a width of 16 or more", res);
    if (res == 0 && o->auto_width < 1) return gt_fail(GT_ERR_USAGE, "auto_width %d: expected 1 or more", o->auto_width);
    if (o->test_every < 0) return gt_fail(GT_ERR_USAGE, "test_every %d: expected 0 (none) or more", o->test_every);
    if (!gt_path_is_dir(dir))
        return gt_fail(GT_ERR_DATA, "the capture folder '%s' does not exist or is not a folder", dir);
    cap->resolution = res >= 1 && res <= 8 ? res : 1;
    cap->width_to = res == 0 ? o->auto_width : res >= 16 ? res : 0;
    cap->auto_width = res == 0;
    gt_status st = GT_OK;
    if (!(cap->dir = strdup(dir))) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_nerf_split split = {false, NULL};
    char *sparse = gt_path_join(dir, "sparse");
    const bool nerf = st == GT_OK && sparse && !gt_path_is_dir(sparse) && gt_nerf_is_capture(dir);
    free(sparse);
    if (nerf) {
        bool random = false;
        st = gt_nerf_read(dir, &cap->model, &split, &random);
        if (st == GT_OK && (!(cap->model_dir = strdup(dir)) || !(cap->image_dir = strdup(dir))))
            st = gt_fail(GT_ERR_RUNTIME, "out of memory");
        if (st == GT_OK && random)
            gt_notice("%s: no points (points3d.ply, ply_file_path): starting from %d random points in [-%g, %g]^3, "
                      "as the reference does for a Blender scene", dir, GT_NERF_RANDOM_POINTS, GT_NERF_RANDOM_EXTENT,
                      GT_NERF_RANDOM_EXTENT);
    }
    if (st == GT_OK && !nerf) st = find_model(cap);
    if (st == GT_OK && !nerf) st = gt_colmap_read(cap->model_dir, NULL, &cap->model);
    if (st == GT_OK && !nerf) {
        char sub[16];
        snprintf(sub, sizeof sub, "images_%d", cap->resolution);
        cap->image_dir = gt_path_join(dir, cap->resolution > 1 ? sub : "images");
        cap->images_n = cap->resolution > 1 && cap->image_dir && gt_path_is_dir(cap->image_dir);
        if (cap->image_dir && cap->resolution > 1 && !cap->images_n) {
            free(cap->image_dir);
            cap->image_dir = gt_path_join(dir, "images");
        }
        if (!cap->image_dir) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
        else if (!gt_path_is_dir(cap->image_dir))
            st = gt_fail(GT_ERR_DATA, "the capture '%s' has no images/ folder ('%s' is not a folder)", dir,
                         cap->image_dir);
        else if (cap->images_n)
            st = images_n_or_full(cap);
    }
    const gt_colmap_model *m = &cap->model;
    if (st == GT_OK && m->nimages == 0)
        st = gt_fail(GT_ERR_DATA, "the model '%s' has no registered images", m->images_path);
    if (st == GT_OK && m->nimages > (size_t)INT32_MAX) st = gt_fail(GT_ERR_DATA, "too many images");
    if (st == GT_OK && !(cap->views = gt_calloc(m->nimages, sizeof *cap->views, "views"))) st = GT_ERR_RUNTIME;
    for (size_t i = 0; i < m->nimages && st == GT_OK; i++) {
        const gt_colmap_image *im = &m->images[i];
        int lens = 0;
        st = lens_of(cap, gt_colmap_find_camera(m, im->camera_id), im->name, &lens);
        if (st == GT_OK) st = make_view(cap, im, lens, &cap->views[i]);
        cap->nviews = (int)i + 1;
    }
    if (st != GT_OK) {
        free(split.test);
        gt_gs_capture_free(cap);
        return st;
    }
    qsort(cap->views, (size_t)cap->nviews, sizeof *cap->views, cmp_view);
    for (int i = 0; i < cap->nviews; i++) {
        /* a NeRF capture's own split (transforms_test.json) where it has one */
        cap->views[i].test = o->test_every > 0 && (split.given ? split.test[cap->views[i].image_id - 1]
                                                               : i % o->test_every == 0);
        if (cap->views[i].test) cap->ntest++;
        else cap->ntrain++;
    }
    free(split.test);
    return GT_OK;
}

void gt_gs_capture_free(gt_gs_capture *cap)
{
    if (!cap) return;
    for (int i = 0; i < cap->nviews; i++) free(cap->views[i].path);
    free(cap->views), free(cap->lenses), free(cap->dir), free(cap->model_dir), free(cap->image_dir);
    gt_colmap_free(&cap->model);
    memset(cap, 0, sizeof *cap);
}

gt_status gt_gs_capture_cameras(const gt_gs_capture *cap, bool test, gt_gs_camera **cams, int *n)
{
    *cams = NULL;
    *n = test ? cap->ntest : cap->ntrain;
    if (*n == 0) return GT_OK;
    if (!(*cams = gt_malloc_array((size_t)*n, sizeof **cams, "cameras"))) return GT_ERR_RUNTIME;
    int k = 0;
    for (int i = 0; i < cap->nviews; i++)
        if (cap->views[i].test == test) (*cams)[k++] = cap->views[i].cam;
    return GT_OK;
}
