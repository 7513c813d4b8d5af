/* The gsrender --fit job: read the cameras, the photographs and the
 * scene to start from, choose the device, train (gs_fit_loop.c) on the
 * state of gs_fit_state.c, write the refined scene, the log and the
 * metrics. The CPU path (--device cpu) is the same loop over
 * gt_gs_backward_cpu, for tests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/output.h"
#include "gs/gs_fit_priv.h"

#if GT_HAVE_CUDA
#include "kernels/common/cu_runtime.h"
#endif

void gt_gs_fit_job_init(gt_gs_fit_job *j)
{
    memset(j, 0, sizeof *j);
    j->iterations = 2000;
    j->sh_degree = -1;
    j->sh_start = -1;
    j->downscale = 1;
    j->lambda = GT_GS_LAMBDA_DSSIM;
    gt_gs_fit_rates_default(&j->rates);
    gt_gs_densify_opts_default(&j->densify);
    gt_gs_params_init(&j->render);
    j->device = GT_DEVICE_AUTO;
}

/* Cameras, images and the starting scene of a cameras.json fit. */
static gt_status read_inputs(fit_ctx *c)
{
    const gt_gs_fit_job *j = c->j;
    gt_gs_scene s;
    memset(&s, 0, sizeof s);
    GT_TRY(gt_gs_cameras_read(j->cameras, &c->cams, &c->ncams));
    GT_TRY(gs_fit_split_views(c));
    gt_status st = gt_gs_scene_read(j->scene, &s);
    if (st == GT_OK) st = gt_gs_fit_images_read(j->images, c->cams, c->ncams, j->render.bg, j->downscale, &c->img);
    if (st == GT_OK) st = gt_gs_raw_from_scene(&s, &c->raw);
    gt_gs_scene_free(&s);
    return st;
}

static gt_status run(fit_ctx *c, gt_gs_fit_result *res)
{
    const gt_gs_fit_job *j = c->j;
    GT_TRY(read_inputs(c));
    c->max_deg = c->raw.sh_degree;
    if (j->sh_degree >= 0 && j->sh_degree < c->max_deg) c->max_deg = j->sh_degree;
    c->sh_start = j->sh_start >= 0 ? j->sh_start : c->max_deg;
    for (int i = 0; i < c->ncams; i++) {
        if (c->cams[i].width > c->max_w) c->max_w = c->cams[i].width;
        if (c->cams[i].height > c->max_h) c->max_h = c->cams[i].height;
    }
    gt_device_kind dev = GT_DEVICE_CPU;
    GT_TRY(gt_device_choose(j->device, j->gpu, &dev));
    c->gpu = dev == GT_DEVICE_CUDA;
#if !GT_HAVE_CUDA
    c->gpu = false;
#endif
    GT_TRY(gs_fit_setup(c));
    res->gaussians_start = c->raw.n;
    gt_out log, metrics;
    memset(&log, 0, sizeof log);
    memset(&metrics, 0, sizeof metrics);
    gt_status st = GT_OK;
    if (j->log) st = gt_out_open(&log, j->log), c->log = &log;
    if (st == GT_OK && j->metrics) {
        st = gt_out_open(&metrics, j->metrics), c->metrics = &metrics;
        if (st == GT_OK) fprintf(metrics.fp, "iteration,view,psnr,ssim,gaussians\n");
    }
    if (st == GT_OK) st = gs_fit_train(c);
    res->gaussians_end = gs_fit_count(c);
    if (st == GT_OK) st = gs_fit_download(c);
    if (st == GT_OK) st = gt_gs_raw_write_ply(j->output, &c->raw);
    if (st == GT_OK && j->log) st = gt_out_commit(&log);
    else gt_out_abort(&log);
    if (st == GT_OK && j->metrics) st = gt_out_commit(&metrics);
    else gt_out_abort(&metrics);
    return st;
}

gt_status gt_gs_fit_run(const gt_gs_fit_job *j, gt_gs_fit_result *res_out)
{
    gt_gs_fit_result res;
    memset(&res, 0, sizeof res);
    res.psnr_test_start = res.psnr_test_end = res.ssim_test_end = NAN;
    if (!j->scene || !j->images || !j->cameras || !j->output)
        return gt_fail(GT_ERR_USAGE, "--fit needs IMAGES, --cameras, a SCENE and -o OUT");
    if (j->iterations < 1) return gt_fail(GT_ERR_USAGE, "--iterations must be at least 1");
    fit_ctx c;
    memset(&c, 0, sizeof c);
    c.j = j;
    c.res = &res;
    gt_timings_init(&c.tm);
    gt_status st = run(&c, &res);
    if (st == GT_OK)
        gt_info("%d iterations in %.2f s (%.2f ms each): loss %.5f -> %.5f (means of the first and last tenth)",
                res.iterations, res.seconds, 1000 * res.seconds / res.iterations, res.first_loss, res.last_loss);
    if (st == GT_OK && c.ntest)
        gt_info("held-out PSNR %.2f -> %.2f dB, SSIM %.4f", res.psnr_test_start, res.psnr_test_end, res.ssim_test_end);
    if (st == GT_OK && j->timings)
        gt_timings_print(&c.tm, stderr, c.gpu ? "gsrender --fit timings (GPU)" : "gsrender --fit timings (CPU)");
    res.device_bytes = c.peak_bytes;
    if (st == GT_OK && (j->densify.on || j->densify.mcmc))
        gt_info("Gaussians: %zu -> %zu (densification); peak memory counted %.1f MB", res.gaussians_start,
                res.gaussians_end, c.peak_bytes / 1e6);
    gs_fit_release(&c);
    if (res_out) *res_out = res;
    return st;
}
