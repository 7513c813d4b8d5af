/* COLMAP sparse models: the cameras, images and points3D of a
 * reconstruction, each as .bin or .txt (COLMAP's own formats, as its
 * reconstruction_io and scripts/python/read_write_model.py define them), in
 * a neutral representation (no Gaussian-splatting types).
 *
 *   colmap.c        model table, the folder reader and the cross-checks
 *   colmap_bin.c    the binary readers (streamed: images.bin and points3D.bin
 *                   can be hundreds of MB)
 *   colmap_txt.c    the text readers
 *   colmap_write.c  the writers (.txt and .bin, atomic)
 *
 * Binary layout (little endian): each file starts with a uint64 count;
 *   camera:  u32 id, i32 model id, u64 width, u64 height, f64 params[n(model)]
 *   image:   u32 id, f64 qw qx qy qz, f64 tx ty tz, u32 camera id,
 *            NUL-terminated name, u64 n2d, n2d x (f64 x, f64 y, i64 point3D id)
 *   point:   u64 id, f64 x y z, u8 r g b, f64 error, u64 track length,
 *            length x (u32 image id, u32 point2D index)
 * Text: one record per line, '#' comments; images take two lines (the pose,
 * then the 2-D points "X Y POINT3D_ID ..."), points one line "ID X Y Z R G B
 * ERROR IMAGE_ID POINT2D_IDX ...".
 *
 * Broken input is GT_ERR_DATA naming the place: "<what> (<file>:<line>)" in
 * text, "<what> (<file>: byte <offset>)" in binary: truncated records (the
 * offset of the field that runs past the end), counts that the file cannot
 * hold, bytes after the last record, unknown model ids or names, a
 * parameter count other than the model's, non-finite numbers, sizes of 0 or
 * above 2^31-1, duplicate ids or image names, an image of a camera the model
 * does not define, RGB outside 0..255. */
#ifndef GT_IO_COLMAP_H
#define GT_IO_COLMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* COLMAP's camera model ids (src/colmap/sensor/models.h). */
typedef enum gt_colmap_model_id {
    GT_COLMAP_SIMPLE_PINHOLE = 0,       /* f, cx, cy */
    GT_COLMAP_PINHOLE = 1,              /* fx, fy, cx, cy */
    GT_COLMAP_SIMPLE_RADIAL = 2,        /* f, cx, cy, k */
    GT_COLMAP_RADIAL = 3,               /* f, cx, cy, k1, k2 */
    GT_COLMAP_OPENCV = 4,               /* fx, fy, cx, cy, k1, k2, p1, p2 */
    GT_COLMAP_OPENCV_FISHEYE = 5,       /* fx, fy, cx, cy, k1, k2, k3, k4 */
    GT_COLMAP_FULL_OPENCV = 6,          /* fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, k5, k6 */
    GT_COLMAP_FOV = 7,                  /* fx, fy, cx, cy, omega */
    GT_COLMAP_SIMPLE_RADIAL_FISHEYE = 8,/* f, cx, cy, k */
    GT_COLMAP_RADIAL_FISHEYE = 9,       /* f, cx, cy, k1, k2 */
    GT_COLMAP_THIN_PRISM_FISHEYE = 10,  /* fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, sx1, sy1 */
    GT_COLMAP_RAD_TAN_THIN_PRISM_FISHEYE = 11, /* fx, fy, cx, cy, k0..k5, p0, p1, s0..s3 */
    GT_COLMAP_SIMPLE_DIVISION = 12,     /* f, cx, cy, k */
    GT_COLMAP_DIVISION = 13,            /* fx, fy, cx, cy, k */
    GT_COLMAP_SIMPLE_FISHEYE = 14,      /* f, cx, cy */
    GT_COLMAP_FISHEYE = 15,             /* fx, fy, cx, cy */
    GT_COLMAP_EUCM = 16,                /* fx, fy, cx, cy, alpha, beta */
    GT_COLMAP_EQUIRECTANGULAR = 17,     /* w, h */
    GT_COLMAP_NMODELS
} gt_colmap_model_id;

#define GT_COLMAP_MAX_PARAMS 16
#define GT_COLMAP_MAX_NAME 4096 /* bytes of an image name, with its NUL */

/* The model's name ("PINHOLE"), or NULL for an unknown id. */
const char *gt_colmap_model_name(int model);
/* The number of parameters of a model, 0 for an unknown id. */
int gt_colmap_model_nparams(int model);
/* The id of a model name (exact, upper case as COLMAP writes it), -1 when unknown. */
int gt_colmap_model_from_name(const char *name);

typedef struct gt_colmap_camera {
    uint32_t id;
    int model;       /* gt_colmap_model_id */
    int width, height;
    int nparams;     /* gt_colmap_model_nparams(model) */
    double params[GT_COLMAP_MAX_PARAMS];
    long long where; /* where the record starts: line (text) or byte offset (binary) */
} gt_colmap_camera;

typedef struct gt_colmap_image {
    uint32_t id;
    double qvec[4];  /* world -> camera rotation, w x y z */
    double tvec[3];  /* world -> camera translation */
    uint32_t camera_id;
    char *name;      /* path relative to the images folder (malloc'ed) */
    uint64_t npoints2d; /* as in the file */
    double *xy;      /* 2 per 2-D point, or NULL when not kept */
    int64_t *point3d_id; /* per 2-D point (-1: none), or NULL when not kept */
    long long where;
} gt_colmap_image;

/* 3-D points, one array per field. */
typedef struct gt_colmap_points {
    size_t n;
    uint64_t *id;
    double *xyz;        /* 3n */
    uint8_t *rgb;       /* 3n */
    double *error;      /* n */
    uint64_t *track_len;/* n */
    uint32_t **track;   /* n pointers to 2*track_len (image id, point2D index), or NULL when not kept */
    long long *where;   /* n */
} gt_colmap_points;

typedef struct gt_colmap_model {
    size_t ncameras, nimages;
    gt_colmap_camera *cameras;
    gt_colmap_image *images;
    gt_colmap_points points;
    /* the files read (malloc'ed; NULL for a part not read) */
    char *cameras_path, *images_path, *points_path;
} gt_colmap_model;

typedef struct gt_colmap_read_opts {
    bool keep_points2d; /* keep the images' 2-D points (xy, point3d_id) */
    bool keep_tracks;   /* keep the points' tracks */
    bool skip_points;   /* do not read points3D */
} gt_colmap_read_opts;

/* Read the model in folder dir: cameras, images and points3D, each from its
 * .bin when it exists, else its .txt; then the cross-checks (duplicate ids
 * and names, images of missing cameras). A part with neither file is
 * GT_ERR_DATA naming the folder and the two names looked for. opts may be
 * NULL (keep nothing optional). On failure m is left empty. */
gt_status gt_colmap_read(const char *dir, const gt_colmap_read_opts *opts, gt_colmap_model *m);
void gt_colmap_free(gt_colmap_model *m);

/* One file into m (its part replaced): by the extension (.bin or .txt) and
 * the base name (cameras, images, points3D). No cross-checks. */
gt_status gt_colmap_read_file(const char *path, const gt_colmap_read_opts *opts, gt_colmap_model *m);
gt_status gt_colmap_read_cameras_bin(const char *path, gt_colmap_model *m);
gt_status gt_colmap_read_images_bin(const char *path, bool keep_points2d, gt_colmap_model *m);
gt_status gt_colmap_read_points_bin(const char *path, bool keep_tracks, gt_colmap_model *m);
gt_status gt_colmap_read_cameras_txt(const char *path, gt_colmap_model *m);
gt_status gt_colmap_read_images_txt(const char *path, bool keep_points2d, gt_colmap_model *m);
gt_status gt_colmap_read_points_txt(const char *path, bool keep_tracks, gt_colmap_model *m);
/* The cross-checks gt_colmap_read runs: duplicate camera, image and point
 * ids, duplicate image names, an image whose camera is missing. */
gt_status gt_colmap_check(const gt_colmap_model *m);

/* The camera of an id, or NULL (a binary search when the ids are sorted,
 * else a scan). */
const gt_colmap_camera *gt_colmap_find_camera(const gt_colmap_model *m, uint32_t id);

/* Write cameras, images and points3D into folder dir (which must exist) as
 * .txt (binary = false; numbers that read back exactly) or .bin, each file
 * atomically. 2-D points and tracks are written where they were kept; a
 * record read without them is written with none. */
gt_status gt_colmap_write(const char *dir, const gt_colmap_model *m, bool binary);

/* Internal to the readers: release one part. */
void gt_colmap_free_cameras(gt_colmap_model *m);
void gt_colmap_free_images(gt_colmap_model *m);
void gt_colmap_free_points(gt_colmap_model *m);
/* Allocate the point arrays for n points (tracks when keep_tracks). */
gt_status gt_colmap_points_alloc(gt_colmap_points *p, size_t n, bool keep_tracks);

#ifdef __cplusplus
}
#endif
#endif
