/* Multi-camera YUV stitching: rig files, seams, feather and multi-band
 * (Burt-Adelson) blending, and the CPU reference of the per-frame work.
 *
 * Geometry. H_i maps camera-i luma pixel coordinates to panorama luma pixel
 * coordinates (pixel centres at integers, full resolution). A panorama sample
 * is filled by mapping its position back through H_i^-1 and sampling the
 * camera plane bilinearly.
 *
 * Planes. Every format is handled as three planes (Y, U, V) seen through a
 * strided view, so packed and planar layouts share one code path. A sample
 * (px, py) of a plane sits at luma position (px*sx + ox, py*sy + oy):
 *   Y             sx=1 sy=1 ox=0 oy=0
 *   4:2:2 chroma  sx=2 sy=1 ox=0 oy=0   (co-sited with the left luma of a pair)
 *   4:2:0 chroma  sx=2 sy=2 ox=0 oy=0.5 (left, vertically between two rows:
 *                                        MPEG-2 / ffmpeg "left" siting)
 * so the plane-to-plane map is P_i = S^-1 H_i^-1 S with S = [[sx,0,ox],
 * [0,sy,oy],[0,0,1]]. For packed 4:2:2 chroma this is the seed's macro-pixel
 * homography H_i' = s H_i s^-1, s = diag(1/2, 1, 1), inverted.
 *
 * Arithmetic (identical on CPU and GPU, see stitch_math.h): float32, every
 * multiply-add an explicit fmaf, divisions IEEE; final value v is stored as
 * clamp(floor(v + 0.5), 0, 255). The two paths agree to within 1 per sample
 * (in practice bit-exactly).
 *
 * Gains: per camera, luma Y' = g*Y and chroma about its neutral value,
 * U' = 128 + gu*(U - 128), V' = 128 + gv*(V - 128) (each 1 by default); one
 * fmaf per sample, s*gain + bias with bias = 0 for Y and 128*(1 - g) for U, V.
 * Pixels no camera covers are black: Y=16, U=V=128. */
#ifndef GT_STITCH_H
#define GT_STITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/device.h"
#include "common/status.h"
#include "io/yuv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_STITCH_MAX_CAMS 16
#define GT_STITCH_MAX_BANDS 12

/* The panorama's projection (rig files of version 2). The extent is in
 * degrees: the longitudes of the panorama's left and right edges and the
 * elevations of its top and bottom edges, positive up (for the plane, the
 * angles of those edges seen from the centre along the axes, within
 * (-90, 90)). Pixel centres at integers: luma sample x of a panorama W wide
 * is at the fraction (x + 0.5) / W of the way from left to right, linear in
 * longitude (cylindrical, spherical) or in tan (plane); rows likewise from
 * top to bottom, linear in elevation (spherical) or in tan (cylindrical,
 * plane). A full equirectangular panorama is spherical -180 180 90 -90. */
typedef enum { GT_PROJ_PLANE = 0, GT_PROJ_CYLINDRICAL = 1, GT_PROJ_SPHERICAL = 2 } gt_proj_kind;
typedef struct gt_stitch_proj {
    gt_proj_kind kind;
    double left, right, top, bottom;
} gt_stitch_proj;

typedef struct gt_stitch_cam {
    double H[9];      /* camera -> panorama, row-major (planar rigs) */
    double Hinv[9];   /* panorama -> camera */
    /* the rotation model (rig 2): a camera at the panorama's centre */
    bool rot;         /* R, f, cx, cy, k1, k2, w, h given */
    double R[9];      /* panorama frame -> camera frame (x right, y down, z forward), row-major */
    double f;         /* focal length, luma pixels */
    double cx, cy;    /* principal point, luma pixels (centres at integers) */
    double k1, k2;    /* radial distortion of the normalised coordinates */
    int w, h;         /* the frames this camera model is for */
    char *mask_path;  /* NULL: seams from footprints; relative paths are resolved against the rig's folder */
    float gain;       /* luma gain, default 1 */
    float gain_u, gain_v; /* chroma gains about 128, default 1 */
    long line;        /* rig line of the camera, for messages */
} gt_stitch_cam;

typedef struct gt_stitch_rig {
    int version;      /* 1 (homographies) or 2 */
    int pano_w, pano_h;
    gt_stitch_proj proj; /* version 1: plane */
    bool ray;         /* stitched through rays (stitch_proj.h): a cylindrical or spherical
                       * panorama or a distorted lens; otherwise through H (a plane without
                       * distortion: rotation-model cameras get H = the plane's K R^T K_i^-1) */
    int ncam;
    gt_stitch_cam cam[GT_STITCH_MAX_CAMS];
    char *path;
    long proj_line;   /* rig line of 'projection' (0: none) */
} gt_stitch_rig;

/* Rig file (text, '#' comments, blank lines ignored, keywords case-sensitive):
 *   rig 2                   optional first line: the format version (1 when absent);
 *                           the keywords marked [2] need it
 *   panorama W H
 *   projection KIND L R T B [2] plane, cylindrical or spherical and the extent
 *                           (gt_stitch_proj; default plane, no extent needed
 *                           for homographies)
 *   camera                  starts a camera (at most 16)
 *   H h00 h01 h02 h10 h11 h12 h20 h21 h22   (the 9 numbers may span lines)
 *   size W H            [2] the camera's frame size (the stitcher checks the inputs)
 *   focal F             [2] focal length in pixels
 *   centre CX CY        [2] principal point (default ((W-1)/2, (H-1)/2))
 *   R r00 r01 ... r22   [2] rotation, panorama frame -> camera frame
 *   distortion K1 K2    [2] radial distortion (default 0 0)
 *   mask PATH               optional, PNG of panorama size, nonzero = owned
 *   gain G                  optional, > 0
 *   gain_u G, gain_v G      optional chroma gains, > 0
 * A camera has H (a plane only) or size, focal and R. Errors are
 * GT_ERR_DATA "<what> (<file>:<line>)"; a singular H, an R that is not a
 * rotation, a distortion that folds the view within its corners are errors. */
gt_status gt_stitch_rig_parse(FILE *f, const char *name, gt_stitch_rig *rig);
gt_status gt_stitch_rig_load(const char *path, gt_stitch_rig *rig);
void gt_stitch_rig_free(gt_stitch_rig *rig);
/* Write a rig as text (version 1 when rig->version is 1, else 2), numbers
 * with enough digits to read back the same. */
gt_status gt_stitch_rig_write(FILE *f, const gt_stitch_rig *rig);
/* Complete a rig made in code (or parsed): check the projection and every
 * rotation-model camera, derive H and Hinv for a plane without distortion,
 * set rig->ray. GT_ERR_DATA naming the camera (and its rig line when it has
 * one). */
gt_status gt_stitch_rig_finish(gt_stitch_rig *rig);
/* The mapping of camera i in double precision (host): panorama luma
 * position (X, Y) -> camera luma position (*u, *v), and back. 0 when the
 * camera does not see that direction (behind it, or beyond its lens's
 * range) or the panorama cannot show the camera's point. */
int gt_stitch_rig_to_cam(const gt_stitch_rig *rig, int i, double X, double Y, double *u, double *v);
int gt_stitch_rig_to_pano(const gt_stitch_rig *rig, int i, double u, double v, double *X, double *Y);
/* The stitcher's checks of a rig against its inputs (in_w x in_h), before
 * the plan: a camera whose 'size' differs from the inputs; under a planar
 * homography, a camera whose view folds (a point at or past the horizon),
 * is mirrored, or is stretched more than GT_STITCH_MAX_STRETCH (the largest
 * magnification over its image over the smallest). GT_ERR_DATA naming the
 * camera, its rig line and the fix. */
#define GT_STITCH_MAX_STRETCH 8.0
gt_status gt_stitch_rig_check(const gt_stitch_rig *rig, const char *name, int in_w, int in_h);
/* The stretch of camera i's homography (see gt_stitch_rig_check): INFINITY
 * when it folds or mirrors. */
double gt_stitch_h_stretch(const double H[9], int w, int h);

/* Inverse of a 3x3 (double); GT_ERR_DATA when |det| is tiny relative to the
 * entries (condition check), message "singular homography". */
gt_status gt_stitch_h_invert(const double H[9], double Hinv[9]);
/* C = A * B */
void gt_stitch_h_mul(const double A[9], const double B[9], double C[9]);
/* The macro-pixel homography for packed 4:2:2: s H s^-1, s = diag(1/2,1,1). */
void gt_stitch_h_macro(const double H[9], double Hm[9]);

/* Exact Euclidean distance transform (Felzenszwalb-Huttenlocher): for every
 * pixel with inside[p] != 0, the distance to the nearest pixel with inside == 0;
 * 0 for outside pixels. The image border is not a boundary (pixels beyond it
 * count as inside); if no pixel is outside, every distance is `far`. */
gt_status gt_stitch_edt(const uint8_t *inside, int w, int h, float far, float *dist);

typedef enum { GT_BLEND_NONE = 0, GT_BLEND_FEATHER = 1, GT_BLEND_MULTIBAND = 2 } gt_blend_mode;

/* One plane of a frame in memory: sample (x, y) is at
 * base[off + y*pitch + x*step]. */
typedef struct gt_plane_view {
    size_t off;
    int pitch, step;
    int w, h;
    float sx, sy, ox, oy; /* luma position of sample (px,py): (px*sx+ox, py*sy+oy) */
} gt_plane_view;

/* The three plane views (Y, U, V) of format f at w x h. */
gt_status gt_stitch_planes(gt_pixfmt f, int w, int h, gt_plane_view pv[3]);

/* Per-plane data of a plan. */
typedef struct gt_stitch_plane {
    gt_plane_view in, out;     /* camera plane, panorama plane */
    float P[GT_STITCH_MAX_CAMS][9]; /* panorama plane -> camera plane (homographies) */
    /* rays (rig->ray, stitch_proj.h): the panorama plane's tables (A, D per
     * column, B, C per row) and each camera's parameters for this plane */
    bool ray;
    float *tab;
    float cam[GT_STITCH_MAX_CAMS][16];
    /* direct: owner per panorama sample (0..ncam-1, 255 = none) */
    uint8_t *owner;
    /* feather: normalized weights ncam x (w*h), sum 1 where covered; camera
     * i's are 0 outside the box wbox[i] = {x0, y0, x1, y1} (x1 < x0: all 0),
     * so the GPU's copy moves only those */
    float *weight;
    int wbox[GT_STITCH_MAX_CAMS][4];
    /* multiband: levels, sizes, normalized mask pyramids per level:
     * mbw[k] holds ncam x (lw[k]*lh[k]) */
    int levels;
    int lw[GT_STITCH_MAX_BANDS], lh[GT_STITCH_MAX_BANDS];
    float *mbw[GT_STITCH_MAX_BANDS];
    /* bounding box {x0, y0, x1, y1} of camera i's nonzero weights at level k
     * (x1 < x0: none), for the GPU's footprint restriction */
    int mbbox[GT_STITCH_MAX_BANDS][GT_STITCH_MAX_CAMS][4];
    float black;               /* 16 for Y, 128 for U/V */
    float gain[GT_STITCH_MAX_CAMS]; /* gains for this plane: sample * gain + bias */
    float bias[GT_STITCH_MAX_CAMS]; /* 0 for Y, 128 * (1 - gain) for U and V */
} gt_stitch_plane;

/* Everything computed once from the rig for given input size/format. */
typedef struct gt_stitch_plan {
    int ncam;
    int in_w, in_h, pano_w, pano_h;
    gt_pixfmt fmt;
    gt_blend_mode blend;
    int bands;
    float feather_alpha;
    size_t in_bytes, out_bytes; /* one camera frame, one panorama frame */
    gt_stitch_plane plane[3];
    uint8_t *owner_luma;        /* panorama-size owner map (for --save-masks) */
    float *dist_luma;           /* ncam x pano: distance to region border */
} gt_stitch_plan;

typedef struct gt_stitch_plan_opts {
    gt_blend_mode blend;
    int bands;            /* multiband, default 5 */
    float feather_alpha;  /* default 0.01 */
    /* masks[i]: panorama-size 8-bit masks (nonzero = owned) or NULL */
    const uint8_t *masks[GT_STITCH_MAX_CAMS];
} gt_stitch_plan_opts;

void gt_stitch_plan_opts_init(gt_stitch_plan_opts *o);
/* Build the plan: footprints, regions, distance transforms, seams (owner
 * map), feather weights, mask pyramids. */
gt_status gt_stitch_plan_build(const gt_stitch_rig *rig, int in_w, int in_h, gt_pixfmt fmt,
                               const gt_stitch_plan_opts *o, gt_stitch_plan *plan);
void gt_stitch_plan_free(gt_stitch_plan *plan);
/* Set the per-plane gains (gains[0] Y, [1] U, [2] V, per camera) and their
 * biases; the GPU stitcher takes them with gt_stitch_gpu_set_gains. */
void gt_stitch_plan_set_gains(gt_stitch_plan *plan, const float gains[3][GT_STITCH_MAX_CAMS]);

/* Every camera must own panorama samples: GT_ERR_DATA naming the first
 * that owns none (its rig line when `name` is the rig file) and the fix. */
gt_status gt_stitch_plan_check_owners(const gt_stitch_plan *plan, const gt_stitch_rig *rig, const char *name);
/* The same check on a copy of the rig scaled to a panorama at most max_w
 * wide (no masks), for calibration before any plan exists. */
gt_status gt_stitch_rig_check_owners(const gt_stitch_rig *rig, int in_w, int in_h, int max_w);

/* Previews: camera i's colour (RGB), and every camera's footprint (the
 * border of its region) outlined in its colour on the panorama's RGB
 * image (pano_w x pano_h). */
const uint8_t *gt_stitch_palette(int i);
void gt_stitch_draw_footprints(const gt_stitch_plan *plan, uint8_t *rgb);

/* CPU reference: stitch one frame set (in[i]: plan->in_bytes each) into out
 * (plan->out_bytes). */
gt_status gt_stitch_frame_cpu(const gt_stitch_plan *plan, const uint8_t *const *in, uint8_t *out);

/* Burt-Adelson primitives on float images (CPU reference; exposed for tests).
 * Reduce: [1 4 6 4 1]/16 rows then columns, reflect-101 borders,
 * output ((w+1)/2) x ((h+1)/2). Expand: to (ow x oh) with the same kernel
 * (weights 1 6 1 / 8 at even, 4 4 / 8 at odd positions), rows then columns. */
void gt_stitch_reduce(const float *src, int w, int h, float *dst);
void gt_stitch_expand(const float *src, int w, int h, float *dst, int ow, int oh);

/* Number of pyramid levels actually used for a w x h plane given `bands`. */
int gt_stitch_levels(int w, int h, int bands);

/* GPU streaming stitcher (CUDA builds; GT_ERR_GPU otherwise). */
typedef struct gt_stitch_gpu gt_stitch_gpu;
gt_status gt_stitch_gpu_create(const gt_stitch_plan *plan, gt_stitch_gpu **g);
/* gt_stitch_gpu_create in two steps, so that the first overlaps the plan's
 * building: _prealloc makes what does not depend on the plan (the pinned and
 * device frame buffers of ncam inputs of in_bytes and one output of
 * out_bytes, streams, events; on the calling thread's current GPU, e.g. the
 * thread that started the CUDA context), _create_from completes `pre` with a
 * plan of those sizes into *g (GT_ERR_USAGE if they differ). _create_from
 * takes `pre` over: on failure it is released. */
gt_status gt_stitch_gpu_prealloc(int ncam, size_t in_bytes, size_t out_bytes, gt_stitch_gpu **pre);
gt_status gt_stitch_gpu_create_from(gt_stitch_gpu *pre, const gt_stitch_plan *plan, gt_stitch_gpu **g);
/* Fault in the host memory of the pinned buffers gt_stitch_gpu_prealloc
 * asks for with these sizes (common/pin_prefault.h), on a thread that would
 * otherwise wait for the CUDA context: they are then only page-locked. */
void gt_stitch_gpu_prefault(int ncam, size_t in_bytes, size_t out_bytes);
/* Synchronous: one frame set in, one panorama out (for tests). */
gt_status gt_stitch_gpu_frame(gt_stitch_gpu *g, const uint8_t *const *in, uint8_t *out);
/* Pinned staging buffers for streaming: slots 0 .. GT_STITCH_SLOTS-1. Three,
 * so that the writer always has the next frame queued while the main thread
 * reads and submits a third. */
#define GT_STITCH_SLOTS 3
uint8_t *gt_stitch_gpu_in_buf(gt_stitch_gpu *g, int slot, int cam);
uint8_t *gt_stitch_gpu_out_buf(gt_stitch_gpu *g, int slot);
/* Asynchronous: enqueue upload+stitch+download of slot; wait for completion. */
gt_status gt_stitch_gpu_submit(gt_stitch_gpu *g, int slot);
gt_status gt_stitch_gpu_wait(gt_stitch_gpu *g, int slot);
/* Take the plan's gains and biases (after gt_stitch_plan_set_gains) for the
 * frames submitted from now on. */
void gt_stitch_gpu_set_gains(gt_stitch_gpu *g);
/* Mean per-stage GPU times so far (ms): upload, warp, blend, download. */
void gt_stitch_gpu_stage_ms(gt_stitch_gpu *g, double ms[4], long *frames);
/* The GPU's multiband mask pyramid of plane p, level k (ncam images of
 * lw[k] x lh[k] floats, the layout of the plan's mbw[k]) copied into out:
 * for the tests that hold it to the plan's. GT_ERR_USAGE when the plan does
 * not blend multiband or p, k are out of range. */
gt_status gt_stitch_gpu_masks(gt_stitch_gpu *g, int p, int k, float *out);
void gt_stitch_gpu_destroy(gt_stitch_gpu *g);
/* The measurement behind the ray warp (kernels/stitch/warp_map.cu): the
 * multiband float warp of a ray plan's three planes per frame, ms[0] with
 * each sample's camera position computed in the kernel (the stitcher's
 * way), ms[1] read from a per-sample map computed beforehand; on random
 * frames, `iters` frames each. GT_ERR_USAGE for other plans. */
gt_status gt_stitch_gpu_bench_warp(const gt_stitch_plan *plan, int iters, double ms[2]);

/* ---- the yuvstitch job (stream_job.c): what the program does, as one call ----
 * Fill a gt_stitch_job (defaults from gt_stitch_job_init: all frames, the
 * container from the output's name, multiband blending of 5 bands, BT.601
 * limited-range preview, device auto) and call gt_stitch_stream. The job
 * loads the rig and its masks, checks the paths (no output replaces an input
 * or another output, output folders exist, names fit what is written: the
 * program's refusals, GT_ERR_USAGE or GT_ERR_RUNTIME), opens the inputs
 * (files, FIFOs or "-"; raw ones need w, h and fmt), builds the plan while
 * the CUDA context starts on a thread, then streams: the cameras are read in
 * parallel, each frame set is stitched on the GPU (three pinned slots in
 * flight) or the CPU reference, and a writer thread writes the panorama
 * frames in order, atomically (no partial file on failure). It draws the
 * "stitching" progress bar on a terminal and, with `timings`, prints the
 * stage table and the frame rates on stderr, all as yuvstitch does.
 *
 *     const char *cams[2] = {"left.y4m", "right.y4m"};
 *     gt_stitch_job j;
 *     gt_stitch_job_init(&j);
 *     j.rig = "rig.txt";                   // gt_stitch_rig_parse's format
 *     j.inputs = cams, j.ninputs = 2;      // one per camera of the rig
 *     j.output = "pano.y4m";               // or "-" (stdout), or "pano.yuv" (raw)
 *     j.plan.blend = GT_BLEND_FEATHER;
 *     long n;
 *     if (gt_stitch_stream(&j, &n) != GT_OK) fprintf(stderr, "%s\n", gt_errmsg());
 *
 *     // frames 300..399 of raw streams, e.g. one slice of a job split
 *     // over GPUs; the slices' outputs, joined, are the whole run's
 *     j.w = 1920, j.h = 1080, j.fmt = GT_PIX_NV12;
 *     j.start = 300, j.frames = 100;
 *     gt_status st = gt_stitch_stream(&j, NULL);
 *
 * Frames: from input frame `start` (counted from 0; regular files are
 * seeked, pipes read and dropped) for `frames` frames or to the end of the
 * shortest input (a notice), or of the first to end with `strict` (an error,
 * GT_ERR_DATA). A `start` at or past the end of an input is GT_ERR_USAGE
 * naming the input and its length. With gain_update, a slice estimates its
 * gains afresh from its own first frame, so joined slices differ from one
 * run where the gains move. */
typedef struct gt_stitch_job {
    const char *rig;              /* rig file (gt_stitch_rig_load) */
    const char *const *inputs;    /* one stream per camera: raw YUV or Y4M, a file, FIFO or "-" */
    int ninputs;                  /* must be the rig's camera count (GT_ERR_USAGE) */
    int w, h, fmt;                /* raw inputs: size and gt_pixfmt (fmt -1: Y4M inputs only) */
    const char *output;           /* panorama stream; "-" = stdout */
    int out_y4m;                  /* 1 Y4M, 0 raw; -1: from the name (.y4m Y4M, .yuv/.raw raw),
                                     else Y4M when an input is */
    long start;                   /* first input frame, from 0 */
    long frames;                  /* frames to stitch; -1: to the end */
    bool strict;                  /* an input that ends before the others is an error */
    gt_stitch_plan_opts plan;     /* blend, bands, feather_alpha; masks[i] for cameras
                                     whose rig line names none (NULL: from footprints) */
    const char *preview;          /* PNG of the first stitched frame, or NULL */
    gt_yuv_matrix matrix;         /* the preview's colour matrix */
    gt_yuv_range range;           /* and input range */
    const char *save_masks;       /* folder for mask_<i>.png (255 = owned), or NULL */
    int gain_update;              /* re-estimate the gains every N frames; 0: never */
    gt_device_kind device;        /* auto, cuda or cpu */
    int gpu;                      /* CUDA device index */
    bool timings;                 /* stage table and frame rates on stderr */
} gt_stitch_job;
void gt_stitch_job_init(gt_stitch_job *j);
/* Run the job; *frames (may be NULL) gets the number of panorama frames
 * written. */
gt_status gt_stitch_stream(const gt_stitch_job *j, long *frames);

#ifdef __cplusplus
}
#endif
#endif
