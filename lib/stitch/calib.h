/* Rig calibration from the cameras' own frames (yuvstitch --calibrate):
 * features, matches, homographies, the chain to a reference camera, exposure
 * gains, and the job that runs them and writes a rig file.
 *
 * Stages, one file each in lib/stitch:
 *   calib_detect.c  image pyramid, FAST-9 corners ranked by their Harris
 *                   response, intensity-centroid orientation, steered BRIEF
 *                   (ORB-like) 256-bit descriptors; kernels/stitch/
 *                   calib_detect.cu computes the same on the GPU
 *   calib_match.c   Hamming matching, ratio test, cross check
 *   calib_ransac.c  normalised DLT, RANSAC (seeded, deterministic),
 *                   Levenberg-Marquardt on the inliers' reprojection error
 *   calib_align.c   dense refinement of each accepted pair on the luma of
 *                   its overlap (features are good to about a pixel; the
 *                   whole overlap pins the far corners down)
 *   calib_chain.c   all pairs, a spanning tree of the strongest pairs from
 *                   the reference camera, optional global refinement, the
 *                   panorama frame
 *   calib_gain.c    exposure gains: least squares on overlap means (Y, and
 *                   U and V about 128), also used by streaming --gain-update
 *   calib.c         the job: inputs, stages, report, rig file, preview
 *
 * Coordinates are full-resolution luma pixels with pixel centres at
 * integers, as in the rig file. Cameras are numbered from 0 here and from 1
 * in messages. */
#ifndef GT_STITCH_CALIB_H
#define GT_STITCH_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/device.h"
#include "common/status.h"
#include "stitch/calib_math.h"
#include "stitch/stitch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_CALIB_DESC 32 /* descriptor bytes */
#define GT_CALIB_MAX_LEVELS 6

/* ------------------------------------------------------------ detection */

typedef struct gt_calib_kp {
    float x, y;      /* level-0 position (sub-pixel) */
    int32_t lx, ly;  /* integer position at its level */
    int64_t score;   /* Harris response at its level */
    int32_t level;
    int32_t angle;   /* orientation bin 0..GT_CM_ANGLES-1 */
} gt_calib_kp;

typedef struct gt_calib_feat {
    int n;
    gt_calib_kp *kp;
    uint8_t *desc; /* n * GT_CALIB_DESC */
} gt_calib_feat;

typedef struct gt_calib_detect_opts {
    int max_features;   /* per image, default 2000 */
    int levels;         /* pyramid levels; 0: as many as fit (at most GT_CALIB_MAX_LEVELS) */
    int fast_threshold; /* 0: from the image's contrast (gt_calib_fast_threshold) */
} gt_calib_detect_opts;

void gt_calib_detect_opts_init(gt_calib_detect_opts *o);

/* The orientation boundaries and the steered pattern (computed once, the
 * same for the CPU and the GPU; a fixed seed makes the pattern). */
const gt_calib_tables *gt_calib_tables_get(void);

/* Levels used for a w x h image (each level at least 2 * GT_CM_BORDER + 16
 * pixels on its short side). */
int gt_calib_levels(int w, int h, int want);
/* FAST threshold for an image: 4 % of the spread between its 5th and 95th
 * luma percentiles, in 3..20 (darker, lower-contrast views get a lower one). */
int gt_calib_fast_threshold(const uint8_t *y, int w, int h, int pitch);

/* A candidate corner (local maximum of the response at its level). */
typedef struct gt_calib_cand {
    int32_t x, y, level, pad;
    int64_t score;
    float fx, fy; /* level-0 sub-pixel position */
} gt_calib_cand;
/* Keep at most o->max_features of the candidates, spread over levels (quota
 * halving with each level, unused quota passed on) and over an 8x8 grid per
 * level, best response first; ties by level, y, x. The order of `c` does not
 * matter (it is sorted in place). kp gets positions; angles are filled by the
 * describer. */
int gt_calib_select(gt_calib_cand *c, int n, int levels, const int *lw, const int *lh, int max_features,
                    gt_calib_kp *kp);

/* CPU reference (OpenMP): features of a w x h luma plane. */
gt_status gt_calib_detect_cpu(const uint8_t *y, int w, int h, int pitch, const gt_calib_detect_opts *o,
                              gt_calib_feat *f);
/* The same on the current CUDA GPU (GT_ERR_GPU without CUDA). */
gt_status gt_calib_detect_gpu(const uint8_t *y, int w, int h, int pitch, const gt_calib_detect_opts *o,
                              gt_calib_feat *f);
void gt_calib_feat_free(gt_calib_feat *f);

/* ------------------------------------------------------------ matching */

typedef struct gt_calib_match {
    int a, b;  /* keypoint indices in the first and the second image */
    int dist;  /* Hamming distance */
} gt_calib_match;

/* Nearest neighbours by Hamming distance, both ways: a match (a, b) is kept
 * when b is a's nearest with d1 < ratio * d2 (second nearest), and a is b's
 * nearest. Ties go to the lower index. *m is malloc'ed (free it). */
gt_status gt_calib_match_features(const gt_calib_feat *fa, const gt_calib_feat *fb, double ratio, gt_calib_match **m,
                         int *n);

/* ------------------------------------------------------------ homographies */

/* Random numbers for RANSAC: splitmix64, deterministic from a seed. */
typedef struct gt_calib_rng {
    uint64_t s;
} gt_calib_rng;
uint64_t gt_calib_rng_next(gt_calib_rng *r);

/* H (row-major, H[8] = 1) mapping a[i] to b[i] (x, y pairs) by the
 * normalised DLT on n >= 4 points; GT_ERR_DATA when degenerate. */
gt_status gt_calib_dlt(const double *a, const double *b, int n, double H[9]);

typedef struct gt_calib_ransac_opts {
    double threshold;   /* inlier distance in the second image, px (default 3) */
    int max_iters;      /* default 4000 */
    double confidence;  /* default 0.999 */
    uint64_t seed;
    int lm_iters;       /* Levenberg-Marquardt iterations (default 30; 0 skips) */
} gt_calib_ransac_opts;
void gt_calib_ransac_opts_init(gt_calib_ransac_opts *o);

/* RANSAC over the n correspondences a[i] -> b[i], then the DLT of all
 * inliers and Levenberg-Marquardt on their symmetric transfer error.
 * inlier[i] (may be NULL) marks the final inliers; *ninl their count.
 * GT_ERR_DATA when fewer than 4 correspondences or no model. */
gt_status gt_calib_ransac(const double *a, const double *b, int n, const gt_calib_ransac_opts *o, double H[9],
                          unsigned char *inlier, int *ninl);

/* Levenberg-Marquardt on sum |H a - b|^2 + |H^-1 b - a|^2 from H (updated). */
void gt_calib_refine_lm(const double *a, const double *b, int n, int iters, double H[9]);

/* Solve the n x n system A x = b in place (x in b; partial pivoting);
 * -1 when singular. */
int gt_calib_solve(double *A, double *b, int n);

/* Levenberg-Marquardt on np parameters x (updated) of m residuals:
 * f(x, r, ctx) fills r and returns |r|^2 (INFINITY where x is invalid);
 * forward-difference Jacobian, dense normal equations. */
typedef double (*gt_calib_resid_fn)(const double *x, double *r, void *ctx);
gt_status gt_calib_lm(int np, double *x, size_t m, gt_calib_resid_fn f, void *ctx, int iters);

/* Dense refinement of H (camera i -> camera j, both w x h luma with one
 * pitch): Gauss-Newton/LM with Huber weights on the luma differences of
 * the overlap under an exposure model I_j = a I_i + b (calib_align.c). */
gt_status gt_calib_align(const uint8_t *yi, const uint8_t *yj, int w, int h, int pitch, double H[9], int iters);

/* Sub-pixel refinement of n inlier matches (pa in camera i, pb in camera j,
 * xy pairs, luma planes yi, yj of w x h with one pitch, H camera i -> j):
 * each pb moved to where the luma patch around its pa, carried through H,
 * aligns best (shift and exposure, Gauss-Newton); matches that do not
 * align (correlation below 0.8, a shift beyond 3 px, a flat patch) are
 * dropped. Returns the number kept, compacted at the front (calib_refine.c). */
int gt_calib_refine_matches(const uint8_t *yi, const uint8_t *yj, int w, int h, int pitch, const double H[9],
                            double *pa, double *pb, int n);

/* Distance of H a to b. */
double gt_calib_transfer(const double H[9], const double a[2], const double b[2]);

/* ------------------------------------------------------------ the rig */

/* One camera pair's result. */
typedef struct gt_calib_pair {
    int i, j;           /* cameras, i < j */
    int matches, inliers;
    bool used;          /* accepted: a plausible H (set by the caller) and
                         * enough inliers (checked by gt_calib_chain) */
    bool tree;          /* an edge of the chain to the reference */
    double H[9];        /* camera i -> camera j */
    double rms, max;    /* reprojection error of the inliers (i -> j), px */
    int n;              /* correspondences for the global refinement (xy pairs
                         * in pa, pb): the feature inliers, or after the dense
                         * refinement points of the overlap and their images */
    double *pa, *pb;
    int nf;             /* the feature inliers (xy pairs in fa, fb), kept for --matches */
    double *fa, *fb;
} gt_calib_pair;

typedef struct gt_calib_chain_opts {
    int reference;      /* camera index, -1: the middle one */
    int min_inliers;    /* default 20 */
    bool global;        /* refine all accepted pairs together */
    int max_side;       /* panorama side cap (default 16384) */
    double max_area_ratio; /* panorama area cap / the cameras' summed area (default 4) */
} gt_calib_chain_opts;
void gt_calib_chain_opts_init(gt_calib_chain_opts *o);

/* Whether a pair is accepted: inliers >= min_inliers and >= 8 + 0.3 matches. */
bool gt_calib_pair_ok(const gt_calib_pair *p, int min_inliers);

/* The maximum spanning tree of the accepted pairs (by inliers) grown from
 * camera ref (Prim's algorithm): order[0] = ref, then the cameras in the
 * order they join; via[c] is the pair that joined camera c (-1 for ref).
 * Marks pairs' used (accepted) and tree. GT_ERR_DATA naming a camera that
 * no accepted pair reaches, its best pair and the fix. */
gt_status gt_calib_tree(gt_calib_pair *pairs, int npairs, int ncam, const gt_calib_chain_opts *o, int ref, int order[],
                        int via[]);

/* From the pairs (all i < j of n cameras), place every camera relative to
 * the reference: a maximum spanning tree of accepted pairs by inliers, then
 * (global) Levenberg-Marquardt over all accepted pairs. Hc[i]: camera i ->
 * reference camera. GT_ERR_DATA naming a camera that cannot be placed and
 * its best pair. */
gt_status gt_calib_chain(gt_calib_pair *pairs, int npairs, int ncam, const gt_calib_chain_opts *o,
                         double Hc[][9]);

/* The global refinement of the homographies Hc (camera -> a common plane)
 * over the correspondences (pa, pb) of every accepted pair,
 * Levenberg-Marquardt on the symmetric transfer error, camera ref held
 * (what --global-refine runs). */
gt_status gt_calib_refine_homographies(const gt_calib_pair *pairs, int npairs, int ncam, int ref, double Hc[][9]);
/* The same on two sets of correspondences together: each pair's (pa, pb)
 * weighted wp and its feature inliers (fa, fb) weighted wf (a weight of 0
 * leaves its set out; gt_calib_refine_homographies is wp = 1, wf = 0). */
gt_status gt_calib_refine_homographies_joint(const gt_calib_pair *pairs, int npairs, int ncam, int ref, double wp,
                                             double wf, double Hc[][9]);

/* The feature inliers' (fa, fb) RMS error and largest error under
 * homographies Hc (camera -> a common plane), both ways, over the accepted
 * pairs (*rms, *max may be NULL); with set_pairs every accepted pair's rms
 * and max are set too. */
gt_status gt_calib_feature_rms(gt_calib_pair *pairs, int npairs, double Hc[][9], bool set_pairs, double *rms,
                               double *max);

/* How far the overlaps' points may pull a plane's homographies off the
 * features (gt_calib_polish_homographies): the features' RMS error at most
 * GT_CALIB_POLISH_MAX_RMS px (the accuracy asked of a calibrated rig), or
 * GT_CALIB_POLISH_BOUND_REL above that of the homographies fitted to the
 * features alone where that is more; the overlaps' points keep at least
 * the weight GT_CALIB_POLISH_MIN_WEIGHT, for they hold what the features
 * leave loose (on test_calib_photo's 24-degree views the corners land
 * 0.2-0.4 px from the truth with the points at full weight, 0.6 px at 1/16,
 * 5 px, 30 px at worst, from the features alone). */
#define GT_CALIB_POLISH_MAX_RMS 1.0
#define GT_CALIB_POLISH_BOUND_REL 0.05
#define GT_CALIB_POLISH_MIN_WEIGHT (1.0 / 16)

/* The polish of a plane's homographies Hc (updated; camera -> a common
 * plane, camera ref held) on two kinds of correspondences of every accepted
 * pair: the feature inliers (fa, fb), and the points of its overlap under
 * its densely refined homography (pa, pb: the luma of the whole overlap,
 * which pins the far corners of narrow views down better than features
 * clustered in part of it). Where the scene is not one plane seen from one
 * centre (parallax, a folded page) the two disagree, and the overlap's
 * points, more numerous, can pull the homographies off what the features
 * show; so they are weighted: 1 (a point counts as a feature inlier) while
 * the features' RMS error stays within the bound above, else halved until
 * it does (down to GT_CALIB_POLISH_MIN_WEIGHT), each weight's refinement
 * starting from the last one's homographies. *weight gets the weight,
 * *rms_feat the RMS error of the features' own fit (NAN when the bound did
 * not need it); either may be NULL. */
gt_status gt_calib_polish_homographies(gt_calib_pair *pairs, int npairs, int ncam, int ref, double Hc[][9],
                                       double *weight, double *rms_feat);

/* Panorama frame: translate so that every camera's warped corners are at
 * non-negative coordinates; the rig's H and size. GT_ERR_DATA when a corner
 * maps to infinity or the panorama exceeds the caps. */
gt_status gt_calib_frame(double Hc[][9], int ncam, const int *w, const int *h, const gt_calib_chain_opts *o,
                         gt_stitch_rig *rig);

/* ------------------------------------------------------------ the rotation model */

/* A camera turning about the rig's centre (calib_rot.c, calib_ba.c): R
 * (panorama frame -> camera frame), focal length f, radial distortion k1,
 * k2, principal point (dcx, dcy) pixels off the frame's centre. */
typedef struct gt_calib_cam {
    double R[9];
    double f, k1, k2;
    double dcx, dcy;
} gt_calib_cam;

/* c as a rig camera of w x h frames (principal point ((w-1)/2 + dcx,
 * (h-1)/2 + dcy)). */
void gt_calib_cam_model(const gt_calib_cam *c, int w, int h, gt_stitch_cam *s);

/* The lens the rotation model's adjustment estimates (one lens for all
 * cameras). AUTO: the adjustment with the rotations and focal lengths
 * alone, then with k1, k2 and then with the principal point, each kept
 * only when it lowers the inliers' RMS error clearly (by 5 % and 0.02 px)
 * with plausible values (a monotonic lens over the frame, the principal
 * point within 10 % of the frame's size of its centre); NONE: k1, k2 as
 * given, the principal point at the centre; DISTORTION: k1, k2 always;
 * FULL: k1, k2 and the principal point always. */
typedef enum gt_calib_lens {
    GT_CALIB_LENS_AUTO = 0,
    GT_CALIB_LENS_NONE,
    GT_CALIB_LENS_DISTORTION,
    GT_CALIB_LENS_FULL,
} gt_calib_lens;
/* gt_calib_bundle's lens parameters (a bit mask) */
enum { GT_CALIB_BA_K = 1, GT_CALIB_BA_CENTRE = 2 };

typedef struct gt_calib_rot_opts {
    double focal;       /* focal length in pixels of every camera (0: estimated from the homographies) */
    double k1, k2;      /* the lens's radial distortion, given (default 0 0) */
    bool distortion;    /* estimate k1, k2 (one pair for all cameras) in the adjustment */
    int lens;           /* a gt_calib_lens: which lens parameters the adjustment estimates */
    int projection;     /* -1: chosen from the field of view, else a gt_proj_kind */
    int pano_width;     /* 0: the cameras' own resolution */
    bool no_wave;       /* keep the reference camera's roll and pitch (no horizon straightening) */
    int ba_iters;       /* Levenberg-Marquardt iterations (default 100) */
} gt_calib_rot_opts;
void gt_calib_rot_opts_init(gt_calib_rot_opts *o);

/* Focal lengths from a homography H between two views of a rotating camera
 * (pixel coordinates centred on the principal points): from H's rows the
 * first view's (*fi), from its columns the second's (*fj), as the stitching
 * literature derives them from the rows and columns of K_j^-1 H K_i being
 * those of a rotation. Returns a bit mask: 1 when *fi is valid, 2 when *fj. */
int gt_calib_focal_from_h(const double H[9], double *fi, double *fj);

/* Initial cameras: one focal length (o->focal, else the median of the
 * accepted pairs' estimates, else the frame's width), principal points at
 * the centres (w x h frames), rotations chained from the reference (R =
 * I) along the spanning tree (gt_calib_tree), each edge's rotation the one
 * nearest K^-1 H K. */
gt_status gt_calib_rot_init(gt_calib_pair *pairs, int npairs, int ncam, int w, int h, const gt_calib_chain_opts *co,
                            const gt_calib_rot_opts *o, int ref, gt_calib_cam *cams);

/* Bundle adjustment of the ray error over the inliers of every accepted pair
 * (Levenberg-Marquardt, dense normal equations): for a match (a in camera i,
 * b in camera j) the residual sqrt(f_i f_j) (ray_i(a) - ray_j(b)), rays in
 * the panorama's frame; parameters are each camera's rotation (but the
 * reference's) and focal length, and (lens, GT_CALIB_BA_* bits) one k1, k2
 * and one principal point offset for all. */
gt_status gt_calib_bundle(const gt_calib_pair *pairs, int npairs, int ncam, int w, int h, int ref, int lens,
                          int iters, gt_calib_cam *cams);

/* Reprojection error of the inliers under the cameras: each match's ray
 * from camera i projected into camera j and back, in pixels; RMS and
 * largest over all accepted pairs (*rms, *max, may be NULL; *n matches).
 * With set_pairs, every accepted pair's rms and max are set too. */
void gt_calib_reproj(gt_calib_pair *pairs, int npairs, int w, int h, const gt_calib_cam *cams, bool set_pairs,
                     double *rms, double *max, long *n);

/* Drop the accepted pairs' matches whose reprojection error (either way)
 * exceeds thresh pixels under the cameras; the number dropped. */
int gt_calib_drop_outliers(gt_calib_pair *pairs, int npairs, int w, int h, const gt_calib_cam *cams, double thresh);

/* Horizon straightening (wave correction): turn the panorama's frame so
 * that its up axis is the direction most nearly perpendicular to every
 * camera's x axis (the rig turned about a vertical axis keeps its x axes
 * level), and its forward axis the reference camera's heading. */
void gt_calib_wave(gt_calib_cam *cams, int ncam, int ref);

/* The panorama of a rotation-model rig: the projection (o->projection or
 * chosen: a plane when every camera lies within 55 degrees of the
 * coverage's centre, else cylindrical when they stay within 55 degrees of
 * the horizon and do not see all around, else spherical, the full 360 x 180
 * when the cameras cover 300 degrees or more), its extent over the cameras'
 * views, the size (o->pano_width, else the cameras' resolution) and the rig
 * (version 2, gains 1). GT_ERR_DATA when the projection asked for cannot
 * hold a camera (naming it) or the size exceeds max_side. */
gt_status gt_calib_frame_rot(gt_calib_cam *cams, int ncam, int w, int h, const gt_calib_rot_opts *o,
                             const gt_calib_chain_opts *co, gt_stitch_rig *rig);

/* ------------------------------------------------------------ gains */

/* Overlap sampling prepared from a geometry: camera i's frames (format fmt,
 * in_w x in_h) seen through rig->cam[i].H. Sites on a grid of the panorama
 * (`step` px, 0: about 200000 sites) where two cameras see the scene. */
typedef struct gt_stitch_gains gt_stitch_gains;
gt_status gt_stitch_gains_create(const gt_stitch_rig *rig, int in_w, int in_h, gt_pixfmt fmt, int step,
                                 gt_stitch_gains **g);
void gt_stitch_gains_destroy(gt_stitch_gains *g);
/* Estimate gains from one frame per camera: g[p][i] for plane p (Y, U, V).
 * Y: least squares on the overlap means of Y (Y' = g Y), chroma: on the
 * overlap means of |U - 128| (U' = 128 + g (U - 128)); samples near clipping
 * (Y >= 250 or Y <= 17) are left out. Normalised so that camera `ref` has
 * gain 1 (ref < 0: the geometric mean of each plane's gains is 1).
 * Cameras without overlaps keep 1. *pairs gets the number of overlapping
 * pairs used (may be NULL). */
gt_status gt_stitch_gains_estimate(gt_stitch_gains *g, const uint8_t *const *frames, int ref,
                                   float gains[3][GT_STITCH_MAX_CAMS], int *pairs);
/* Mean overlap values (plane p, pair i-j as seen by i) for reports and tests:
 * m[p] = mean in camera i, mm[p] = mean in camera j, *n samples. */
gt_status gt_stitch_gains_overlap(gt_stitch_gains *g, const uint8_t *const *frames, int i, int j, double m[3],
                                  double mm[3], long *n);

/* Streaming re-estimation (--gain-update N): every `every` frames estimate
 * from the current frames and move each gain a fraction `alpha` towards the
 * estimate, keeping the geometric mean of the rig's gains per plane. */
typedef struct gt_stitch_gain_update {
    gt_stitch_gains *g;
    int every;
    float alpha;
    float cur[3][GT_STITCH_MAX_CAMS];
    double logmean[3];
    long updates;
} gt_stitch_gain_update;
gt_status gt_stitch_gain_update_init(gt_stitch_gain_update *u, const gt_stitch_rig *rig, const gt_stitch_plan *plan,
                                     int every, float alpha);
/* Frame k: re-estimate when k % every == 0; *changed when the plan's gains
 * were updated. */
gt_status gt_stitch_gain_update_frame(gt_stitch_gain_update *u, gt_stitch_plan *plan, const uint8_t *const *frames,
                                      long k, bool *changed);
void gt_stitch_gain_update_free(gt_stitch_gain_update *u);

/* ------------------------------------------------------------ the job */

/* The camera model: cameras turning about one centre (rig 2: R, focal,
 * projection), or a homography per camera onto a plane (rig 1; planar
 * scenes, or cameras that move). */
typedef enum { GT_CALIB_ROTATION = 0, GT_CALIB_HOMOGRAPHY = 1 } gt_calib_model;

typedef struct gt_stitch_calib_opts {
    const char *const *inputs; /* PNG/JPEG, Y4M or raw YUV, one per camera */
    int ninputs;
    int w, h, fmt;             /* raw inputs: size and format (fmt -1: not raw) */
    long frame;                /* frame of a video input to use (0: the first) */
    const char *out;           /* rig file ("-": stdout) */
    const char *preview;       /* PNG of the stitched panorama with the seams, or NULL */
    gt_calib_detect_opts det;
    double ratio;              /* matching ratio test (default 0.8) */
    gt_calib_ransac_opts ransac;
    gt_calib_chain_opts chain;
    gt_calib_model model;      /* rotation (default) or homography */
    gt_calib_rot_opts rot;     /* the rotation model's options */
    const char *matches;       /* file for the inlier matches of every accepted pair, or NULL */
    bool no_gains;             /* write gains of 1 */
    gt_device_kind device;
    int gpu;
    FILE *report;              /* the per-pair report, NULL: none */
    bool timings;
} gt_stitch_calib_opts;
void gt_stitch_calib_opts_init(gt_stitch_calib_opts *o);

/* What a calibration found (for the caller and tests). */
typedef struct gt_stitch_calib_result {
    gt_stitch_rig rig;
    int reference;
    int npairs;
    gt_calib_pair pairs[GT_STITCH_MAX_CAMS * (GT_STITCH_MAX_CAMS - 1) / 2];
    int nfeat[GT_STITCH_MAX_CAMS];
    gt_device_kind device;     /* where detection ran */
    /* the rotation model: the cameras, and the reprojection error of the
     * inliers (px) from the chained rotations and after the adjustment */
    gt_calib_cam cams[GT_STITCH_MAX_CAMS];
    double rms_init, rms, max; /* rms, max: the final rig's (the adjustment's, or the polished homographies') */
    double rms_ba;             /* the adjustment's RMS */
    long nmatch;
    double ms_ba;              /* the adjustment's time */
    bool rotation;             /* the rotation model ran (cams, rms_init, rms_ba are set) */
    int lens;                  /* the lens parameters the adjustment estimated (GT_CALIB_BA_* bits) */
    bool polished;             /* a plane's homographies polished by the dense refinement (rms, max: theirs) */
    double rms_feat;           /* polished: the RMS error of the homographies fitted to the feature inliers alone
                                * (NAN where the bound did not need it) */
    double polish_weight;      /* polished: the weight the overlaps' points kept (1: each as a feature inlier) */
} gt_stitch_calib_result;
void gt_stitch_calib_result_free(gt_stitch_calib_result *r);

/* Calibrate from frames in memory: frames[i] in format fmt at w x h (all
 * cameras alike). Fills res (rig with H, size, gains). Errors: GT_ERR_DATA
 * for views that do not overlap enough or a degenerate chain. */
gt_status gt_stitch_calibrate_frames(const uint8_t *const *frames, int ncam, int w, int h, gt_pixfmt fmt,
                                     const gt_stitch_calib_opts *o, gt_stitch_calib_result *res);

/* The whole job: read one frame per input, calibrate, report on o->report,
 * write the rig file atomically and the preview. */
gt_status gt_stitch_calibrate(const gt_stitch_calib_opts *o);

#ifdef __cplusplus
}
#endif
#endif
