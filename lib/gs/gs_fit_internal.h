/* What the files of the gsrender --fit job share (not an API):
 *   gs_fit.c        the job: inputs, device, the run, outputs
 *   gs_fit_state.c  the training state on the GPU or the CPU: set-up, the
 *                   resize after a change of count, release
 *   gs_fit_loop.c   the iterations: a training step, the density control
 *                   steps, the schedule, the log and the progress bar
 *   gs_fit_eval.c   the held-out views' PSNR and SSIM, the metrics file,
 *                   the PLYs saved on the way */
#ifndef GT_GS_FIT_INTERNAL_H
#define GT_GS_FIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/output.h"
#include "common/timer.h"
#include "gs/gs_fit.h"
#include "gt_config.h"

#if GT_HAVE_CUDA
#include "kernels/gs/gs_fit_cuda.h"
#endif

/* One training iteration not yet logged: the GPU path fetches the loss
 * sums of several iterations at once (known false until then); the count
 * is the one after the iteration's density control. */
#define FIT_PENDING_MAX 64
typedef struct fit_pending {
    int it, cam;
    size_t gaussians;
    double seconds;
    bool known;
    gt_gs_loss loss;
    double psnr;
} fit_pending;

typedef struct fit_ctx {
    const gt_gs_fit_job *j;
    gt_gs_camera *cams;
    int ncams;
    int *train, ntrain, *test, ntest;
    float **img;    /* planar float images per camera (the CPU path's; freed once on the GPU) */
    unsigned char **img8; /* planar 8-bit images (a capture loaded for the GPU), or NULL */
    gt_gs_raw raw;  /* host parameters: the CPU path's state, the GPU path's at start and end */
    int max_deg;
    int sh_start;   /* the degree at iteration 1 (j->sh_start, or the scene's) */
    bool gpu;
    int max_w, max_h;
    double extent;  /* the scene extent of the learning rates (training cameras) */
    int dens_until;
    /* CPU state */
    gt_gs_raw grad, m, v;
    float *rgb, *dl;
    gt_gs_grad_stats stats; /* --densify: host (CPU path) or device (GPU path) arrays */
#if GT_HAVE_CUDA
    gt_gs_raw dr, dg, dm, dv;
    float *dimg, *drgb, *ddl, *dtarget; /* dtarget: the view's image as floats (8-bit storage) */
    unsigned char *dimg8;
    size_t *img_off;
    gt_gs_diff *diff;
    gt_gs_cu_loss *loss;
    size_t img_bytes, work_bytes; /* besides the per-Gaussian state and the renderer's workspace */
#endif
    fit_pending pend[FIT_PENDING_MAX];
    int npend;
    size_t bytes, peak_bytes;
    gt_timings tm;
    gt_timer timer;
    /* what the loop reports */
    gt_out *log;     /* --log CSV (or NULL) */
    gt_out *metrics; /* --metrics CSV (or NULL) */
    int span, nfirst, nlast;
    double sfirst, slast, ema, last_psnr, t0;
    gt_gs_fit_result *res;
} fit_ctx;

/* gs_fit_state.c */
size_t gs_fit_count(const fit_ctx *c);
gt_status gs_fit_split_views(fit_ctx *c);
gt_status gs_fit_setup(fit_ctx *c);
/* After the density control changed the count: gradients, statistics and
 * the renderer's workspace of the new size (the GPU path's parameters and
 * moments are already replaced). */
gt_status gs_fit_resized(fit_ctx *c);
/* The current parameters into c->raw (the GPU path downloads them). */
gt_status gs_fit_download(fit_ctx *c);
void gs_fit_release(fit_ctx *c);
void gs_fit_stage_start(fit_ctx *c);
void gs_fit_stage_stop(fit_ctx *c, const char *name);

/* gs_fit_loop.c */
gt_status gs_fit_train(fit_ctx *c);

/* gs_fit_eval.c */
/* The held-out views at iteration it (0: before training): mean PSNR into
 * *mean_psnr, each view's PSNR and SSIM into the metrics file. */
gt_status gs_fit_evaluate(fit_ctx *c, int it, int deg, double *mean_psnr, double *mean_ssim);
/* Whether `it` is in the list (n entries). */
bool gs_fit_in_list(const int *list, int n, int it);
/* The PLY of --save-at for iteration it: OUT with "-<it>" before ".ply". */
gt_status gs_fit_save_at(fit_ctx *c, int it);

#endif
