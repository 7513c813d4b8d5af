/* Refining a scene against posed photographs (gsrender --fit): the
 * reference training's loss, optimiser and schedules (graphdeco
 * gaussian-splatting, train.py, arguments/__init__.py, utils/loss_utils.py)
 * and, with --densify, its adaptive density control (clone, split, prune,
 * opacity reset) or, with --mcmc, the MCMC strategy of Kheradmand et al.
 * 2024 (relocation, growth, position noise, regularisers).
 *
 *   gs_fit_loss.c     loss (1-lambda) L1 + lambda (1 - SSIM) and dL/dimage, CPU
 *   gs_fit_adam.c     Adam, learning rates, SH degree schedule, scene extent
 *   gs_fit_images.c   the training images named by the cameras
 *   gs_fit_densify.c  clone, split and prune (the reference's densification);
 *                     MCMC's relocation and growth
 *   gs_fit_mcmc.h     MCMC's per-Gaussian noise and regularisers (CPU and GPU)
 *   gs_ply_write.c    raw parameters -> standard 3DGS PLY
 *   gs_fit.c          the job (gs_fit_internal.h: gs_fit_state.c, gs_fit_loop.c,
 *                     gs_fit_eval.c: the state, the iterations, the held-out
 *                     views)
 *   kernels/gs/gs_fit.cu      loss, SSIM and Adam on the GPU
 *   kernels/gs/gs_densify.cu  the density control on the GPU
 * Images are planar float RGB (gs_grad.h): channel c of pixel (x, y) at
 * (c*h + y)*w + x. */
#ifndef GT_GS_FIT_H
#define GT_GS_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/device.h"
#include "common/status.h"
#include "gs/gs.h"
#include "gs/gs_grad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- loss (gs_fit_loss.c) ----
 * SSIM as utils/loss_utils.py: per channel, an 11x11 Gaussian window
 * (sigma 1.5, normalised) applied with zero padding ("same" size),
 * C1 = 0.01^2, C2 = 0.03^2, the mean of the SSIM map over channels and
 * pixels. L1: the mean absolute difference. */
#define GT_GS_SSIM_WIN 11
#define GT_GS_SSIM_SIGMA 1.5
#define GT_GS_SSIM_C1 (0.01 * 0.01)
#define GT_GS_SSIM_C2 (0.03 * 0.03)
#define GT_GS_LAMBDA_DSSIM 0.2

typedef struct gt_gs_loss {
    double loss; /* (1-lambda) l1 + lambda (1 - ssim) */
    double l1;
    double ssim;
} gt_gs_loss;

/* The normalised 1-D window (GT_GS_SSIM_WIN taps). */
void gt_gs_ssim_window(float win[GT_GS_SSIM_WIN]);
/* Loss of the rendered x against the target y (planar 3*w*h); dl_dx (may be
 * NULL) gets dLoss/dx. */
gt_status gt_gs_loss_cpu(const float *x, const float *y, int w, int h, double lambda, gt_gs_loss *out,
                         float *dl_dx);
/* PSNR in dB of x against y (n values in [0,1]): 10 log10(1/MSE). */
double gt_gs_psnr(const float *x, const float *y, size_t n);

/* ---- optimiser (gs_fit_adam.c) ---- */
typedef struct gt_gs_fit_rates {
    double pos_init, pos_final; /* times the scene extent, exponential decay */
    int pos_steps;              /* over this many steps (then pos_final) */
    double sh_dc, sh_rest, opacity, scale, rot; /* sh_rest 0: sh_dc / 20 */
} gt_gs_fit_rates;
/* The reference's: position 1.6e-4 -> 1.6e-6 over 30000 steps (its
 * position_lr_max_steps, whatever the number of iterations), SH DC 0.0025,
 * SH rest 0.0025/20, opacity 0.025 (the current reference; versions before
 * 2024 used 0.05), scaling 0.005, rotation 0.001. */
void gt_gs_fit_rates_default(gt_gs_fit_rates *r);
/* The SH rest rate: sh_rest, or the reference's sh_dc / 20 when it is 0. */
double gt_gs_fit_rest_lr(const gt_gs_fit_rates *r);
#define GT_GS_ADAM_BETA1 0.9
#define GT_GS_ADAM_BETA2 0.999
#define GT_GS_ADAM_EPS 1e-15
/* The position learning rate of (1-based) step `step` of max_steps: the
 * reference's get_expon_lr_func (log-linear from pos_init to pos_final,
 * no delay) times extent. */
double gt_gs_fit_pos_lr(const gt_gs_fit_rates *r, int step, int max_steps, double extent);
/* The SH degree active at (1-based) iteration `iter`: 0, one more every
 * 1000 iterations, at most max_deg. */
int gt_gs_fit_sh_degree(int iter, int max_deg);
/* cameras_extent of the reference (getNerfppNorm): 1.1 x the largest
 * distance of a camera centre from the centres' mean; 1 when it is 0. */
double gt_gs_cameras_extent(const gt_gs_camera *c, int n);

/* Adam step t (1-based) as torch.optim.Adam: m, v updated in place, p -=
 * lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps). With period > 0 the array
 * is SH coefficients of `period` floats per Gaussian (K*3): its first 3
 * (DC) use lr, the rest lr_rest. */
void gt_gs_adam_cpu(float *p, const float *g, float *m, float *v, size_t n, double lr, double lr_rest,
                    int period, int t);

/* ---- adaptive density control (gs_fit_densify.c) ----
 * The reference's names and defaults (arguments/__init__.py
 * OptimizationParams, train.py): statistics are gathered at iterations
 * it < until (the backward's gt_gs_grad_stats); densification runs when
 * also from_iter < it and it % interval == 0, on the statistics since the
 * last one; the opacities are capped at 0.01 when it < until and
 * it % opacity_reset == 0, and on a white background also at from_iter. */
typedef struct gt_gs_densify_opts {
    bool on;               /* --densify */
    int from_iter;         /* 500 */
    int until_iter;        /* -1: half of the iterations, at most the reference's 15000 */
    int interval;          /* 100 */
    double grad_threshold; /* 0.0002 (NDC units, the reference's) */
    double percent_dense;  /* 0.01 (of the scene extent) */
    int opacity_reset;     /* 3000 (0: never) */
    double min_opacity;    /* 0.005 */
    size_t max_gaussians;  /* 0: no cap (--max-gaussians; with mcmc: --cap-max) */
    /* the MCMC strategy instead (--mcmc): relocation and growth at the
     * densification steps, position noise and the regularisers every step */
    bool mcmc;
    double noise_lr;       /* 5e5 (times the position learning rate) */
    double opacity_reg;    /* 0.01 */
    double scale_reg;      /* 0.01 */
} gt_gs_densify_opts;
void gt_gs_densify_opts_default(gt_gs_densify_opts *o);
/* The end of the densification window (exclusive) for a run of
 * `iterations`: until_iter, else half of them, at most 15000. */
int gt_gs_densify_until(const gt_gs_densify_opts *o, int iterations);
typedef struct gt_gs_densify_count {
    size_t n_before, n_after, cloned, split, pruned;
    size_t capped;           /* candidates left out by max_gaussians */
    size_t relocated, added; /* MCMC */
} gt_gs_densify_count;
/* One densify-and-prune: r and the Adam moments m, v (laid out like r) are
 * replaced by arrays of the new count (the old ones freed); stats are r's
 * accumulated statistics (n entries each, not modified); extent is the
 * scene extent of the learning rates (gt_gs_cameras_extent); prune_big
 * also prunes Gaussians whose largest axis exceeds 0.1 x extent; seed is
 * the step's stream of draws for the split children (gs_densify_math.h).
 * The CPU reference of gt_gs_cu_densify_prune. */
gt_status gt_gs_densify_prune(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_grad_stats *stats,
                              const gt_gs_densify_opts *o, double extent, bool prune_big, uint64_t seed,
                              gt_gs_densify_count *out);
/* MCMC (gs_fit_mcmc.h has the per-Gaussian noise and regularisers): the
 * dead Gaussians (opacity <= min_opacity) become copies of live ones drawn
 * by opacity, then the count grows by 5 % (at most max_gaussians, else
 * GT_GS_MCMC_CAP, gsplat's cap_max) the same way; r, m, v replaced when
 * they grow. */
#define GT_GS_MCMC_CAP 1000000
gt_status gt_gs_mcmc_relocate(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_densify_opts *o, uint64_t seed,
                              gt_gs_densify_count *out);
/* The count after a relocation step of n: 5 % more, at most the cap. */
size_t gt_gs_mcmc_target(size_t n, const gt_gs_densify_opts *o);
/* The streams of a relocation step's draws (which 0: relocation, 1:
 * growth), for the CPU and the GPU alike. */
uint64_t gt_gs_mcmc_stream(uint64_t seed, int which);
/* The paper's sharing of one Gaussian's opacity o among N copies of it:
 * each gets 1 - (1 - o)^(1/N) and its scale times *scale_factor (N clamped
 * to 1..51, as gsplat); gs_densify_math.h's gs_mcmc_share. */
void gt_gs_mcmc_share(double o, int N, double *o_new, double *scale_factor);
/* CPU: the regularisers' gradients added to g, and the position noise of
 * step `step` added to r's positions (scaler: noise_lr x position rate). */
void gt_gs_mcmc_reg_cpu(const gt_gs_raw *r, double opacity_reg, double scale_reg, gt_gs_raw *g);
void gt_gs_mcmc_noise_cpu(gt_gs_raw *r, double scaler, uint64_t seed, uint64_t step);

/* The reference's reset_opacity on logits: every opacity at most
 * max_opacity (0.01). (The caller zeroes the opacities' Adam moments.) */
void gt_gs_opacity_cap(float *logit_opacity, size_t n, double max_opacity);

/* ---- training images (gs_fit_images.c) ---- */
/* Read the image of each camera from directory `dir` (img_name as is, else
 * with .png, .jpg, .jpeg and the upper-case forms added): PNG or JPEG, 8 or
 * 16 bit, grey or RGB, with alpha composited over bg. rgb[i] gets a
 * malloc'ed planar 3*w*h float image in [0,1]. The size must be the
 * camera's; with downscale > 1 (the reference's --resolution 2, 4, 8) the
 * cameras are scaled down by it (size rounded, focal lengths divided) and an
 * image of the original size is box-filtered, one of the new size taken as
 * it is. A missing, unreadable or mis-sized image is GT_ERR_DATA naming the
 * camera and the path. Image files in dir that no camera names are listed
 * with -v. */
gt_status gt_gs_fit_images_read(const char *dir, gt_gs_camera *cams, int ncams, const float bg[3],
                                int downscale, float ***rgb);
void gt_gs_fit_images_free(float **rgb, int ncams);

/* ---- output (gs_ply_write.c) ---- */
/* Standard 3DGS PLY (binary little endian: x y z nx ny nz f_dc_0..2
 * f_rest_* opacity scale_0..2 rot_0..3, the raw values), written
 * atomically. */
gt_status gt_gs_raw_write_ply(const char *path, const gt_gs_raw *r);

/* ---- the job (gs_fit.c) ---- */
/* Two inputs: a COLMAP capture (cameras NULL: images is the capture's
 * folder, gs_capture.h; scene, when given, is where to start instead of
 * its points3D; the cameras are written beside the output as
 * OUT.cameras.json, the held-out ones as OUT.test.json), or a cameras.json,
 * the folder of its images and a scene to refine. gt_gs_fit_job_defaults
 * fills what depends on which (iterations, held-out views, SH schedule,
 * densification). */
typedef struct gt_gs_fit_job {
    const char *scene;   /* 3DGS PLY or .splat to refine (capture: optional start) */
    const char *images;  /* directory of the training images, or the capture */
    const char *cameras; /* cameras.json of the reference training (NULL: a capture) */
    const char *output;  /* refined 3DGS PLY */
    const char *log;     /* CSV: iteration,loss,l1,ssim,psnr,seconds (or NULL) */
    const char *test_views; /* comma-separated img_names or indices held out (or NULL) */
    int test_every;      /* hold out every Nth camera from 0 (llffhold; 0: none) */
    int iterations;      /* 30000 from a capture's points, 2000 to refine a scene */
    int sh_max;          /* the SH degree of Gaussians made from points3D (3) */
    gt_gs_init_opts init; /* their opacity and scale (0.1, 1: the reference's) */
    int sh_degree;       /* cap on the scene's degree (-1: the scene's) */
    int sh_start;        /* the degree at iteration 1; -1 (default): the scene's, as
                            the reference's trainer starts a scene loaded from a PLY
                            (load_ply); 0: its schedule for training from points */
    int eval_every;      /* PSNR on the held-out views every K iterations (0: start and end) */
    int downscale;       /* the reference's -r: 0 (default: a capture's photographs
                            wider than 1600 trained 1600 wide), 1, 2, 4, 8 (a
                            factor), 16 or more (a width, captures only) */
    uint64_t seed;
    double lambda;       /* D-SSIM weight, 0.2 */
    gt_gs_fit_rates rates;
    gt_gs_densify_opts densify;
    gt_gs_params render; /* background, antialias */
    gt_device_kind device;
    int gpu;
    bool timings;        /* per-stage table (forward, loss, backward, adam, eval) on stderr */
    const char *metrics; /* CSV: iteration,view,psnr,ssim,gaussians for every held-out view at
                            every evaluation, and a "mean" row (or NULL) */
#define GT_GS_FIT_MAX_AT 64
    int eval_at[GT_GS_FIT_MAX_AT], n_eval_at; /* evaluate also at these iterations */
    int save_at[GT_GS_FIT_MAX_AT], n_save_at; /* write OUT-<iteration>.ply at these */
} gt_gs_fit_job;
void gt_gs_fit_job_init(gt_gs_fit_job *j);
/* After the options: the defaults that depend on the input (a capture
 * trained from its points as the reference trains: 30000 iterations,
 * every 8th view held out, SH from degree 0, densification unless
 * no_densify or MCMC; a scene refined: 2000 iterations, no view held out,
 * SH from the scene's degree). Fields the caller set are kept. */
void gt_gs_fit_job_defaults(gt_gs_fit_job *j, bool no_densify);
/* A file the fit writes beside OUT: OUT without its ".ply", then `suffix`
 * (".cameras.json", ".test.json", "-7000.ply"); malloc'ed, NULL when out of
 * memory. */
char *gt_gs_fit_beside(const char *out, const char *suffix);
/* What one training iteration reports (for callers and tests). */
typedef struct gt_gs_fit_result {
    int iterations;
    double first_loss, last_loss;  /* means over the first / last 10% of iterations */
    double psnr_test_start, psnr_test_end; /* mean over held-out views (NAN: none) */
    double ssim_test_end;
    double seconds;
    size_t gaussians_start, gaussians_end; /* counts before and after (densification) */
    size_t device_bytes;            /* counted parameters, gradients, Adam state, images */
} gt_gs_fit_result;
/* Read, train, write the output; res may be NULL. */
gt_status gt_gs_fit_run(const gt_gs_fit_job *j, gt_gs_fit_result *res);

#ifdef __cplusplus
}
#endif
#endif
