/* The held-out views of gsrender --fit: each rendered with the current
 * parameters, clamped to [0, 1] as the reference's evaluation does, and
 * scored against its photograph: PSNR (10 log10(1 / MSE) over the view's
 * pixels and channels) and SSIM (the training loss's: 11x11 Gaussian
 * window, sigma 1.5; on the GPU with the loss kernels). --metrics gets a row
 * per view and evaluation; --save-at writes the parameters as a PLY on the
 * way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "gs/gs_fit_internal.h"

#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#endif

bool gs_fit_in_list(const int *list, int n, int it)
{
    for (int k = 0; k < n; k++)
        if (list[k] == it) return true;
    return false;
}

/* PSNR and SSIM of view cam. */
static gt_status score_view(fit_ctx *c, int cam, int deg, double *psnr, double *ssim)
{
    const gt_gs_camera *cm = &c->cams[cam];
    size_t n3 = 3 * (size_t)cm->width * cm->height;
    if (c->gpu) {
#if GT_HAVE_CUDA
        GT_TRY(gt_gs_diff_forward(c->diff, &c->dr, deg, cm, &c->j->render, c->drgb));
        GT_TRY(gt_gs_cu_clamp01(c->drgb, n3, NULL));
        const float *target = c->dimg ? c->dimg + c->img_off[cam] : c->dtarget;
        if (!c->dimg) GT_TRY(gt_gs_cu_u8_to_float(c->dimg8 + c->img_off[cam], c->dtarget, n3, NULL));
        double sse;
        GT_TRY(gt_gs_cu_loss_eval(c->loss, c->drgb, target, cm->width, cm->height, c->j->lambda, NULL));
        GT_TRY(gt_gs_cu_loss_fetch(c->loss, NULL, NULL, ssim, &sse));
        *psnr = sse > 0 ? 10.0 * log10((double)n3 / sse) : INFINITY;
        return GT_OK;
#endif
    }
    GT_TRY(gt_gs_forward_cpu(&c->raw, deg, cm, &c->j->render, c->rgb));
    for (size_t i = 0; i < n3; i++) c->rgb[i] = fminf(1.0f, fmaxf(0.0f, c->rgb[i]));
    gt_gs_loss l;
    GT_TRY(gt_gs_loss_cpu(c->rgb, c->img[cam], cm->width, cm->height, c->j->lambda, &l, NULL));
    *ssim = l.ssim;
    *psnr = gt_gs_psnr(c->rgb, c->img[cam], n3);
    return GT_OK;
}

gt_status gs_fit_evaluate(fit_ctx *c, int it, int deg, double *mean_psnr, double *mean_ssim)
{
    double sp = 0, ss = 0;
    FILE *mf = c->metrics ? c->metrics->fp : NULL;
    size_t n = gs_fit_count(c);
    for (int t = 0; t < c->ntest; t++) {
        int cam = c->test[t];
        double p, s;
        GT_TRY(score_view(c, cam, deg, &p, &s));
        sp += p, ss += s;
        if (mf) fprintf(mf, "%d,%s,%.4f,%.5f,%zu\n", it, c->cams[cam].name, p, s, n);
    }
    *mean_psnr = c->ntest ? sp / c->ntest : NAN;
    *mean_ssim = c->ntest ? ss / c->ntest : NAN;
    if (mf && c->ntest) fprintf(mf, "%d,mean,%.4f,%.5f,%zu\n", it, *mean_psnr, *mean_ssim, n);
    return GT_OK;
}

gt_status gs_fit_save_at(fit_ctx *c, int it)
{
    char suffix[24];
    snprintf(suffix, sizeof suffix, "-%d.ply", it);
    char *path = gt_gs_fit_beside(c->j->output, suffix);
    if (!path) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_status st = gs_fit_download(c);
    if (st == GT_OK) st = gt_gs_raw_write_ply(path, &c->raw);
    if (st == GT_OK) gt_info("iteration %d: %zu Gaussians saved to %s", it, c->raw.n, path);
    free(path);
    return st;
}
