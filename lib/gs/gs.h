/* 3D Gaussian Splatting: scenes, cameras and the forward rasterizer of the
 * reference implementation (Kerbl et al. 2023, diff-gaussian-rasterization).
 *
 * Conventions (those of the reference training code):
 *  - camera space: x right, y down, z forward (COLMAP/OpenCV);
 *  - pixel centres at integer coordinates: a view-space point (x,y,z) lands
 *    on pixel u = fx*x/z + (W-1)/2, v = fy*y/z + (H-1)/2;
 *  - SH coefficients per Gaussian: K = (deg+1)^2 RGB triples, coefficient
 *    major: sh[(i*K + k)*3 + c].
 * The CPU path (gs_core.c) is the oracle: the reference algorithm per
 * pixel, with the reference's bounding-square tile binning; the
 * per-Gaussian and per-pixel math of both paths is gs_math.h. The CUDA path
 * bins Gaussians to tiles by the exact ellipse/tile overlap of the region
 * where alpha >= 1/255, which skips only Gaussians that cannot change a pixel
 * of the tile, so both give the same image up to float rounding. */
#ifndef GT_GS_H
#define GT_GS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/device.h"
#include "common/status.h"
#include "gs/gs_const.h"
#include "common/timer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_GS_TILE GS_TILE
#define GT_GS_MAX_SIZE 16384
#define GT_GS_NEAR GS_NEAR

/* SH basis constants of the reference (real SH, degrees 0-3). */
#define GT_GS_SH_C0 GS_SH_C0
#define GT_GS_SH_C1 GS_SH_C1
extern const float gt_gs_sh_c2[5];
extern const float gt_gs_sh_c3[7];

typedef struct gt_gs_scene {
    size_t n;
    int sh_degree; /* 0..3 */
    int sh_k;      /* (sh_degree+1)^2 */
    float *pos;    /* n*3 */
    float *scale;  /* n*3, linear (exp of the PLY's log scales) */
    float *rot;    /* n*4, w x y z, normalized */
    float *opacity;/* n, in [0,1] (sigmoid of the PLY's logit) */
    float *sh;     /* n*sh_k*3 */
} gt_gs_scene;

gt_status gt_gs_scene_alloc(gt_gs_scene *s, size_t n, int sh_degree);
void gt_gs_scene_free(gt_gs_scene *s);
/* Standard 3DGS PLY (gs_ply.c). */
gt_status gt_gs_scene_read_ply(const char *path, gt_gs_scene *s);
/* Compact .splat (32 bytes per Gaussian: pos f32x3, scale f32x3, RGBA u8x4,
 * rot u8x4 as (q*128+128), w x y z); SH degree 0. */
gt_status gt_gs_scene_read_splat(const char *path, gt_gs_scene *s);
/* By extension: ".splat" -> splat, else PLY. */
gt_status gt_gs_scene_read(const char *path, gt_gs_scene *s);
/* Centre (per-axis median of the positions) and extent (75th percentile of
 * the distances to it): robust to far floaters and background Gaussians. */
void gt_gs_scene_bounds(const gt_gs_scene *s, float centre[3], float *extent);

typedef struct gt_gs_camera {
    int width, height;
    float fx, fy;      /* focal lengths in pixels */
    float cx, cy;      /* principal point in pixels, COLMAP's convention (the
                          top-left pixel's centre at 0.5, 0.5): width/2,
                          height/2 for a centred camera, which is what the
                          constructors below set */
    float R[9];        /* world -> camera rotation, row-major */
    float t[3];        /* world -> camera translation: p_cam = R p + t */
    float campos[3];   /* camera centre in world */
    char name[128];    /* img_name from cameras.json, or "" */
} gt_gs_camera;

/* From the reference cameras.json entry: position (centre) and rotation
 * (camera-to-world, rows). */
void gt_gs_camera_from_c2w(gt_gs_camera *c, int w, int h, float fx, float fy, const double pos[3],
                           const double rot_rows[9]);
/* Look-at camera; GT_ERR_USAGE when eye == target or up is parallel to the
 * view direction, fovy outside (0,180), size outside [1, GT_GS_MAX_SIZE]. */
gt_status gt_gs_camera_lookat(gt_gs_camera *c, const double eye[3], const double target[3],
                              const double up[3], double fovy_deg, int w, int h);
/* Camera i of n on an orbit around `centre` (radius, elevation in degrees
 * above the plane orthogonal to `up`). */
gt_status gt_gs_camera_orbit(gt_gs_camera *c, const double centre[3], const double up[3],
                             double radius, double elev_deg, int i, int n, double fovy_deg, int w,
                             int h);

/* The orbit that goes around where n cameras look (a capture's): centre
 * the point nearest to all their optical axes (least squares), radius the
 * median distance of their centres from it, elev_deg their median elevation
 * above the plane through it orthogonal to up (unit), fovy_deg the first
 * camera's vertical field of view. false (nothing set) when the axes are
 * nearly parallel (a forward-facing capture has no such point) or n < 2. */
bool gt_gs_cameras_orbit(const gt_gs_camera *c, int n, const double up[3], double centre[3], double *radius,
                         double *elev_deg, double *fovy_deg);

/* cameras.json of the reference training (array of objects with id,
 * img_name, width, height, position, rotation, fx, fy; optional cx, cy, the
 * principal point in pixels, else width/2, height/2), parsed by cJSON. A
 * malformed file (its line and column) or an entry a renderer cannot use
 * (size, focal lengths, a rotation that is not orthonormal, a position or
 * principal point outside float range; the entry's index, img_name and
 * line) is GT_ERR_DATA. */
gt_status gt_gs_cameras_read(const char *path, gt_gs_camera **cams, int *ncams);
/* Parse the JSON text (path used for messages). */
gt_status gt_gs_cameras_parse(const char *text, size_t len, const char *path, gt_gs_camera **cams,
                              int *ncams);
/* Write n cameras to path ("-": stdout) as the reference's cameras.json
 * (id = index, img_name = name, width, height, position = campos, rotation
 * = camera-to-world rows, fy, fx; cx and cy only where they are not
 * width/2, height/2), atomically; numbers as the shortest text that reads
 * back as the same float, so gt_gs_cameras_read gives the cameras back. */
gt_status gt_gs_cameras_write(const char *path, const gt_gs_camera *cams, int n);

typedef struct gt_gs_params {
    float bg[3];          /* background colour (0..1) */
    int sh_degree;        /* cap; -1 or >= scene degree: use the scene's */
    float scale_modifier; /* 1 */
    bool antialias;       /* Mip-Splatting/gsplat opacity compensation */
    bool square_binning;  /* GPU: bin into the reference's bounding square
                             instead of the exact ellipse/tile overlap (same
                             image, more pairs; for comparisons) */
    bool sh_half;         /* GPU renderer: SH coefficients kept as IEEE halves on
                             the device (default): half the bytes uploaded and read
                             per frame; colours within ~1e-3 of the float ones */
    bool ref_grad;        /* backward pass (gs_grad.h) as diff-gaussian-rasterization's
                             rather than the exact derivative: the gradient passes
                             through alpha's 0.99 clamp, and the z-derivative of the
                             EWA Jacobian's clamped entries is the reference's (for
                             comparisons with it) */
} gt_gs_params;
void gt_gs_params_init(gt_gs_params *p);

/* Render result: rgb W*H*3 (row-major, top row first), alpha W*H (1 - final
 * transmittance), depth W*H (sum of view depth * alpha_i * T_i, not
 * normalized: divide by alpha for the expected depth of the covered part). */
typedef struct gt_gs_image {
    int w, h;
    float *rgb;
    float *alpha;
    float *depth;
    uint8_t *rgba8; /* w*h*4: rgb clamped to [0,1], *255, rounded; alpha likewise */
} gt_gs_image;
gt_status gt_gs_image_alloc(gt_gs_image *im, int w, int h);
void gt_gs_image_free(gt_gs_image *im);

/* ---- per-Gaussian math shared by the CPU reference and the tests ---- */
/* Projected Gaussian (the reference's preprocess output). */
typedef struct gt_gs_proj {
    float x, y;          /* pixel position */
    float depth;         /* view-space z */
    float conic[3];      /* inverse 2-D covariance a, b, c */
    float opacity;       /* opacity (times the antialias compensation) */
    float rgb[3];
    int radius;          /* 0: culled */
    int rect[4];         /* tile rect x0, y0, x1, y1 (exclusive) */
} gt_gs_proj;
/* Colour from SH for unit direction dir (camera to mean), degree deg,
 * coefficients sh[k*3 + c]; +0.5, clamped at 0. */
void gt_gs_sh_eval(int deg, const float *sh, const float dir[3], float rgb[3]);
/* Preprocess Gaussian i of s for camera c (the reference's preprocessCUDA). */
void gt_gs_preprocess_one(const gt_gs_scene *s, size_t i, const gt_gs_camera *c,
                          const gt_gs_params *p, int sh_deg, gt_gs_proj *out);

/* The SH degree used: the scene's, capped by p->sh_degree when >= 0. */
int gt_gs_effective_degree(const gt_gs_scene *s, const gt_gs_params *p);
/* Fill im->rgba8 from rgb and alpha. */
void gt_gs_image_to_rgba8(gt_gs_image *im);

/* CPU reference renderer (OpenMP over tiles). */
gt_status gt_gs_render_cpu(const gt_gs_scene *s, const gt_gs_camera *c, const gt_gs_params *p,
                           gt_gs_image *out);

/* CUDA renderer: a context holds the scene on the device and buffers that
 * are reused from frame to frame (they grow, never shrink). */
typedef struct gt_gs_gpu gt_gs_gpu;
gt_status gt_gs_gpu_create(const gt_gs_scene *s, const gt_gs_params *p, gt_gs_gpu **g);
/* What gt_gs_gpu_render downloads into `out`. */
enum { GT_GS_OUT_FLOAT = 1, GT_GS_OUT_AUX = 2, GT_GS_OUT_RGBA8 = 4 };
/* Render; `tm` (may be NULL) accumulates the stage times preprocess,
 * duplicate, sort, ranges, blend, download. `what`: GT_GS_OUT_* flags (rgb
 * floats, alpha+depth floats, rgba8). */
gt_status gt_gs_gpu_render(gt_gs_gpu *g, const gt_gs_camera *c, gt_gs_image *out, int what,
                           gt_timings *tm);
/* Y4M output on the GPU (kernels/gs/gs_output.cu): each frame converted to
 * YUV on the device from its float image (as gt_rgb_to_yuv converts the
 * rgba8 image, byte for byte) and downloaded on a second stream into one of
 * GT_GS_GPU_YUV_SLOTS pinned host frames, overlapping the next frame's
 * render. gt_gs_gpu_yuv_start: frames of w x h in pixel format fmt (a
 * gt_pixfmt of io/yuv.h), matrix and range (gt_yuv_matrix, gt_yuv_range).
 * gt_gs_gpu_render_yuv: render c and queue its conversion and download into
 * `slot`; returns before the download ends; the slot's last frame must have
 * been taken. gt_gs_gpu_yuv_frame (any thread): wait for slot's frame;
 * valid until the slot is rendered into again. */
#define GT_GS_GPU_YUV_SLOTS 2
gt_status gt_gs_gpu_yuv_start(gt_gs_gpu *g, int w, int h, int fmt, int matrix, int range);
gt_status gt_gs_gpu_render_yuv(gt_gs_gpu *g, const gt_gs_camera *c, int slot, gt_timings *tm);
gt_status gt_gs_gpu_yuv_frame(gt_gs_gpu *g, int slot, const uint8_t **frame, double *download_ms);
/* Number of (Gaussian, tile) pairs of the last frame. */
size_t gt_gs_gpu_last_pairs(const gt_gs_gpu *g);
void gt_gs_gpu_destroy(gt_gs_gpu *g);
/* Most device memory held at once since the process started (0 without CUDA). */
size_t gt_gs_gpu_peak_bytes(void);

/* Dispatch: CUDA (gt_gs_gpu for one frame) or the CPU reference. */
gt_status gt_gs_render(bool use_gpu, const gt_gs_scene *s, const gt_gs_camera *c,
                       const gt_gs_params *p, gt_gs_image *out, gt_timings *tm);

/* ---- the gsrender job (gs_job.c): what the program does, as one call ----
 * Fill a gt_gs_job (defaults from gt_gs_job_init: the look-at camera's
 * defaults up 0,1,0, fovy 50, 1280x720; orbit elevation 20; 30 fps; device
 * auto) and call gt_gs_render_view (orbit = 0) or gt_gs_render_orbit
 * (orbit = N frames). The job reads the scene and cameras, renders on the
 * chosen device, writes the outputs atomically (no partial file on failure),
 * draws the "frames" progress bar on a terminal and, with `timings`, prints
 * the stage table and the frame rate on stderr, all as gsrender does.
 *
 *     gt_gs_job j;
 *     gt_gs_job_init(&j);
 *     j.scene = "scene.ply";
 *     j.cameras = "cameras.json";
 *     j.view = "00001";                    // img_name, or an index "3"
 *     j.output = "view.png";
 *     j.depth = "view.pfm";                // optional
 *     if (gt_gs_render_view(&j) != GT_OK) fprintf(stderr, "%s\n", gt_errmsg());
 *
 *     gt_gs_job_init(&j);
 *     j.scene = "scene.ply";
 *     j.orbit = 120;                       // frames around the scene's centre
 *     j.output = "orbit.y4m";              // or "frame_%04d.png", or "-"
 *     j.width = 640, j.height = 360, j.have_size = true;
 *     gt_status st = gt_gs_render_orbit(&j);
 *
 * Camera of a view (one of): cameras + view; have_eye + have_target (a look-at
 * camera from eye, target, up, fovy, width x height); neither: view 0 of the
 * default orbit. The orbit circles `target` (have_target; else the scene's
 * centre, the median position) around the axis `up` (have_up; else the
 * cameras' mean up, else 0,1,0) at orbit_radius (<= 0: 2.5 x the scene's
 * radius) and orbit_elevation degrees. Size: width x height when have_size,
 * else the first camera's when cameras are given, else the defaults.
 * View "all" renders the cameras of `cameras` in order as a sequence (output
 * as for an orbit; a Y4M stream needs the cameras one size).
 * A slice (have_frames): frames frame_first..frame_end-1 of the N-frame
 * orbit or of the camera list, each rendered and numbered as in the whole
 * run, so that slices rendered apart (on other GPUs or machines) and joined
 * are the whole run:
 * PNGs by their global number, Y4M streams each with the same header, their
 * frames after it concatenated (scripts/batch/join-parts). */
typedef struct gt_gs_job {
    const char *scene;    /* 3DGS PLY or .splat */
    const char *output;   /* view: PNG; orbit: a pattern with one %d (frame_%04d.png),
                             a .y4m file or "-" (Y4M on stdout) */
    const char *cameras;  /* cameras.json of the reference training, or NULL */
    const char *view;     /* camera of `cameras`: img_name, else index (NULL: "0"); "all":
                             every camera in order, a sequence like an orbit's */
    const char *depth;    /* view only: expected depth, .pfm (float) or .pgm (16-bit), or NULL */
    bool alpha;           /* RGBA PNGs (alpha = 1 - final transmittance) */
    int png_level;        /* PNG compression 0..9 (gt_png_encode's level; gt_gs_job_init:
                             -1, the default 1, fastest) */
    bool have_eye, have_target, have_up, have_size;
    double eye[3], target[3], up[3];
    double fovy;          /* degrees */
    int width, height;
    int orbit;            /* frames (gt_gs_render_orbit); 0 for gt_gs_render_view */
    bool have_frames;     /* render only frames frame_first..frame_end-1 (orbit or view all) */
    int frame_first;      /* from 0; the orbit angle and a pattern's number stay global */
    int frame_end;        /* exclusive; < 0: to the orbit's end (gt_gs_job_init: -1) */
    double orbit_radius;  /* <= 0: 2.5 x the scene's radius */
    double orbit_elevation; /* degrees above the orbit plane */
    bool have_elevation, have_fovy, have_radius; /* set by the user (else, with cameras, from them) */
    int fps;              /* frame rate in the Y4M header */
    gt_gs_params render;  /* background, SH degree, scale modifier, antialias, binning */
    gt_device_kind device;/* auto, cuda or cpu */
    int gpu;              /* CUDA device index */
    bool timings;         /* stage table and frame rate on stderr */
} gt_gs_job;
void gt_gs_job_init(gt_gs_job *j);
/* GT_ERR_USAGE with the program's message when the fields contradict each
 * other (eye without target, cameras and eye, view without cameras, depth with
 * an orbit or not .pfm/.pgm, an orbit output that is neither a pattern nor
 * .y4m nor "-", a view to "-", a frame slice without an orbit, empty or past
 * its end); the render functions call it first. */
gt_status gt_gs_job_check(const gt_gs_job *j);
/* Whether s is a frame pattern: no % conversion but one %d (%4d, %04d) and
 * %%; *has says whether it holds the %d. */
bool gt_gs_frame_pattern(const char *s, bool *has);
/* Whether the job renders every camera of `cameras` (view "all"). */
bool gt_gs_job_all_views(const gt_gs_job *j);
/* The frames of a sequence of `total` (the orbit's frames, or the cameras
 * for view "all") the job renders, first..end-1: all of them without
 * have_frames; GT_ERR_USAGE naming the range when it is empty or past total. */
gt_status gt_gs_job_frames(const gt_gs_job *j, int total, int *first, int *end);
gt_status gt_gs_render_view(const gt_gs_job *j);
gt_status gt_gs_render_orbit(const gt_gs_job *j);

#ifdef __cplusplus
}
#endif
#endif
