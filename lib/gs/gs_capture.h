/* A COLMAP capture as the training input of gsrender --fit, laid out as
 * the reference 3DGS trainer (graphdeco gaussian-splatting,
 * scene/dataset_readers.py) and gsplat (examples/datasets/colmap.py) read
 * it:
 *
 *   DIR/images/<name>          the photographs, named as in the model
 *   DIR/images_N/<name>        optional, the same at 1/N size (N = 2, 4, 8)
 *   DIR/sparse/0/              the model: cameras, images, points3D
 *                              (.bin, else .txt; io/colmap.h); also
 *                              DIR/sparse/ holding them directly
 *
 * or, without sparse/, a NeRF capture (io/nerf_transforms.h: the
 * reference's Blender scenes, transforms_train.json and _test.json, whose
 * split is the files' while test_every > 0; instant-ngp and nerfstudio's
 * transforms.json), read as a model of the same kind, its photographs
 * named relative to DIR (no images_N/).
 *
 *   gs_capture.c         the views: cameras, names, split, resolution
 *   gs_capture_images.c  the photographs, loaded in parallel
 *   gs_capture_init.c    the initial Gaussians from points3D
 *
 * Views. One per registered image, sorted by its name in the model (the
 * order the reference and gsplat use, byte order, the extension included
 * as gsplat sorts; the reference sorts by the name without extension,
 * which orders the same names the same way unless one name is another's
 * prefix). View i is held out for testing when test_every > 0 and
 * i % test_every == 0 (the reference's llffhold, gsplat's test_every).
 * Each view's gt_gs_camera: R (world -> camera, row-major) from the
 * normalised qvec, t = tvec, campos = -R^T t, the image's name without its
 * extension (as the reference's cameras.json img_name; folders in the name
 * kept), and the intrinsics:
 *  - SIMPLE_PINHOLE, PINHOLE: the model's (cx, cy in COLMAP's convention,
 *    as gt_gs_camera keeps them);
 *  - SIMPLE_RADIAL, RADIAL, OPENCV: the pinhole camera COLMAP's
 *    image_undistorter would make of the camera (gs_undistort.h), the
 *    photographs undistorted to it as they load;
 *  - any other model: GT_ERR_DATA naming it and how to undistort the
 *    capture with COLMAP or pycolmap.
 * A camera whose photographs in DIR/images/ are of another size than the
 * model says but of its shape (its first photograph's size is the camera's
 * over a factor s, each side rounded either way: the reference's tandt_db,
 * truck's camera 1957x1091 and its photographs 979x546) is scaled to them:
 * size the photograph's, fx, cx by its width over the camera's, fy, cy by
 * its height over the camera's, as gsplat scales them and the reference
 * keeps the field of view; "the camera's size" below is then that size.
 * Resolution N (1, 2, 4, 8; the reference's -r): the camera's size becomes
 * round(W/N) x round(H/N) (Python's round, halves to even, as the reference
 * computes it) and fx, fy, cx, cy scale by the new size over the old. The
 * photographs come from DIR/images_N/ when that folder exists and holds
 * every registered photograph by its name (else, when images/ holds them,
 * from images/ with a notice: LLFF's images_8/ renames them; each must
 * be the COLMAP camera's size / N, rounded either way at a half: the
 * reference's convert.py makes images_N with ImageMagick, which rounds
 * halves up; one a pixel larger is area-averaged to the view's size; a
 * distorted camera's photographs there are undistorted straight into the
 * view's camera), else from DIR/images/ at full size, undistorted at full
 * size when distorted, then area-averaged down (gs_pixels.h). Unlike the
 * reference's default (-r -1), -r 1 keeps photographs wider than 1600
 * pixels at their size. */
#ifndef GT_GS_CAPTURE_H
#define GT_GS_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "gs/gs.h"
#include "gs/gs_grad.h"
#include "gs/gs_undistort.h"
#include "io/colmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The reference trainer's default: photographs wider than this are trained
 * at this width (their height scaled alike). */
#define GT_GS_AUTO_WIDTH 1600

typedef struct gt_gs_capture_opts {
    /* 0 (default): the reference's -r -1: a camera wider than auto_width is
     * scaled to auto_width wide, the others kept; 1, 2, 4, 8: the size / N
     * (rounded half to even, as the reference), from images_N/ where the
     * capture has it; 16 or more: that width in pixels (the reference's
     * -r W; a camera narrower keeps its size) */
    int resolution;
    int auto_width; /* GT_GS_AUTO_WIDTH (default) */
    int test_every; /* 8 (default); 0: no held-out views */
} gt_gs_capture_opts;
void gt_gs_capture_opts_init(gt_gs_capture_opts *o);

/* One COLMAP camera of the capture: its lens at full size and the pinhole
 * camera its views are trained as (at full size, before the resolution). */
typedef struct gt_gs_capture_lens {
    uint32_t camera_id;
    int model;               /* gt_colmap_model_id */
    int width, height;       /* the photographs' full size: the COLMAP camera's, or
                              * its photographs' when they are of another size at its shape */
    int colmap_width, colmap_height; /* the COLMAP camera's */
    bool distorted;          /* undistorted as the images load */
    gt_gs_lens lens;
    gt_gs_pinhole pinhole;   /* the undistorted camera, full size */
} gt_gs_capture_lens;

/* L's photographs are of another size than its COLMAP camera (L scaled to them). */
static inline bool gt_gs_lens_rescaled(const gt_gs_capture_lens *L)
{
    return L->width != L->colmap_width || L->height != L->colmap_height;
}

typedef struct gt_gs_view {
    gt_gs_camera cam;        /* what the view is trained against */
    char *path;              /* the photograph (malloc'ed) */
    const char *colmap_name; /* the image's name in the model (points into model) */
    uint32_t image_id;
    int lens;                /* index into gt_gs_capture.lenses */
    bool test;               /* held out */
} gt_gs_view;

typedef struct gt_gs_capture {
    char *dir;               /* DIR as given */
    char *model_dir;         /* DIR/sparse/0 or DIR/sparse */
    char *image_dir;         /* DIR/images or DIR/images_N */
    int resolution;          /* the factor: 1, 2, 4, 8 (1 for a width) */
    int width_to;            /* > 0: cameras wider are scaled to it */
    bool auto_width;         /* width_to is the default's (opts.resolution 0) */
    int scaled;              /* views width_to scaled */
    bool images_n;           /* the photographs come from DIR/images_N */
    int nviews, ntrain, ntest;
    gt_gs_view *views;       /* sorted by name */
    int nlenses;
    gt_gs_capture_lens *lenses;
    gt_colmap_model model;   /* as read (points3D for the initial Gaussians) */
} gt_gs_capture;

/* Read the capture's model and make its views (no photograph is read). A
 * folder that is not a capture, a model that cannot be read, a camera model
 * that is not supported, a name longer than a gt_gs_camera holds, or a
 * model without registered images is GT_ERR_DATA naming what is wrong; a
 * resolution other than 0, 1, 2, 4, 8 or 16 and more, or a negative
 * test_every, GT_ERR_USAGE.
 * o may be NULL (the defaults). */
gt_status gt_gs_capture_open(const char *dir, const gt_gs_capture_opts *o, gt_gs_capture *cap);
void gt_gs_capture_free(gt_gs_capture *cap);

/* A camera from a COLMAP pose (qvec w x y z, normalised here; tvec) and
 * pinhole intrinsics (COLMAP's pixel convention): R row-major from the
 * quaternion, t = tvec, campos = -R^T t; name empty. */
void gt_gs_camera_from_pose(gt_gs_camera *c, const double qvec[4], const double tvec[3], int w, int h, double fx,
                            double fy, double cx, double cy);

/* The cameras of the training views (test = false) or of the held-out ones
 * (test = true), in view order, in a malloc'ed array (NULL when there are
 * none). */
gt_status gt_gs_capture_cameras(const gt_gs_capture *cap, bool test, gt_gs_camera **cams, int *n);

/* ---- the photographs (gs_capture_images.c) ----
 * Planar RGB of the view camera's size (channel c of pixel (x, y) at
 * (c*h + y)*w + x), alpha composited over bg, as floats in [0,1] or as bytes
 * (round(v * 255)); bytes are what the GPU fit keeps on the device (a
 * quarter of the memory and of the upload; an 8-bit photograph loaded at
 * its size gives its own bytes). A photograph that is missing, unreadable
 * or of another size than its camera (the lens's width x height) is
 * GT_ERR_DATA naming the file and both sizes. */
typedef enum gt_gs_pixfmt { GT_GS_PIX_F32 = 0, GT_GS_PIX_U8 = 1 } gt_gs_pixfmt;
/* View i into out (3*w*h floats or bytes of the view's camera, the
 * caller's). */
gt_status gt_gs_capture_load_view(const gt_gs_capture *cap, int i, const float bg[3], gt_gs_pixfmt fmt, void *out);
/* Every view, in parallel (OpenMP, one photograph per thread: the JPEG
 * decoding is most of the time): (*img)[i] malloc'ed per view. On failure
 * nothing is returned; views not started yet are not loaded, and the
 * message is that of the first view (in view order) among those that
 * failed. */
gt_status gt_gs_capture_load_images(const gt_gs_capture *cap, const float bg[3], gt_gs_pixfmt fmt, void ***img);
void gt_gs_capture_images_free(void **img, int n);

/* ---- the initial Gaussians (gs_capture_init.c) ----
 * As the reference's create_from_pcd: a Gaussian per point at its
 * position, SH DC (rgb/255 - 0.5) / C0 and the higher SH 0 up to
 * sh_degree, log scale log(scale x sqrt(max(d2, 1e-7))) on all three axes
 * with d2 the mean squared distance to the 3 nearest other points
 * (gs_knn.h, exact where distCUDA2 is approximate), rotation (1, 0, 0, 0),
 * opacity logit(opacity). The reference's: opacity 0.1, scale 1 (gsplat's
 * init_opa, init_scale; its MCMC recipe 0.5 and 0.1). No points:
 * GT_ERR_DATA ("no 3-D points to start from"); opacity outside (0, 1) or
 * scale not above 0: GT_ERR_USAGE (gt_gs_init_opts: gs_grad.h). */
gt_status gt_gs_init_from_points(const double *xyz, const uint8_t *rgb, size_t n, int sh_degree,
                                 const gt_gs_init_opts *o, gt_gs_raw *r);
/* The capture's points3D (sh_degree 0..3; the reference's default 3). */
gt_status gt_gs_capture_init(const gt_gs_capture *cap, int sh_degree, const gt_gs_init_opts *o, gt_gs_raw *r);

#ifdef __cplusplus
}
#endif
#endif
