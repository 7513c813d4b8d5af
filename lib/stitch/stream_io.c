/* The yuvstitch job's stages on the host (stream_internal.h): the path checks,
 * the inputs (opened, read in parallel, skipped to the first frame), the
 * rig's masks and checks, the plan, the output and the first frame's
 * preview, and the gain updates. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/guard.h"
#include "common/log.h"
#include "common/pin_prefault.h"
#include "stitch/stream_internal.h"

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcasecmp(s + a - b, suf) == 0;
}

/* Before any work: no output replaces an input (the rig, a stream, a mask
 * the rig names) or another output, the output directories exist, and the
 * names' extensions fit what is written. */
gt_status sj_check_paths(const job_ctx *c)
{
    const gt_stitch_job *j = c->j;
    gt_guard g;
    gt_guard_init(&g);
    char what[64], path[4096];
    gt_guard_input(&g, j->rig, "--rig");
    for (int i = 0; i < j->ninputs; i++) {
        snprintf(what, sizeof what, "input %d", i + 1);
        gt_guard_input(&g, j->inputs[i], what);
    }
    for (int i = 0; i < c->rig.ncam; i++) {
        snprintf(what, sizeof what, "the mask of camera %d", i + 1);
        gt_guard_input(&g, c->rig.cam[i].mask_path, what);
    }
    /* the container: named, or the name's (y4m, yuv/raw), else the inputs' */
    const char *fmt = j->out_y4m >= 0 ? NULL : ends_with(j->output, ".y4m") ? "y4m" : "raw";
    gt_guard_output(&g, j->output, "-o", fmt, "--out-format");
    gt_guard_output(&g, j->preview, "--preview", "png", NULL);
    struct stat sb;
    if (j->save_masks && stat(j->save_masks, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) {
            gt_guard_free(&g);
            return gt_fail(GT_ERR_USAGE, "--save-masks '%s' is not a directory", j->save_masks);
        }
        for (int i = 0; i < c->rig.ncam; i++) {
            snprintf(path, sizeof path, "%s/mask_%d.png", j->save_masks, i + 1);
            gt_guard_output(&g, path, "--save-masks", "png", NULL);
        }
    }
    gt_status st = gt_guard_check(&g);
    gt_guard_free(&g);
    return st;
}

gt_status sj_save_masks(const gt_stitch_plan *plan, const char *dir)
{
    if (mkdir(dir, 0777) && errno != EEXIST)
        return gt_fail(GT_ERR_RUNTIME, "cannot create '%s': %s", dir, strerror(errno));
    size_t n = (size_t)plan->pano_w * plan->pano_h;
    uint8_t *m = malloc(n);
    if (!m) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_status st = GT_OK;
    for (int i = 0; i < plan->ncam && !st; i++) {
        for (size_t j = 0; j < n; j++) m[j] = plan->owner_luma[j] == i ? 255 : 0;
        char path[4096];
        snprintf(path, sizeof path, "%s/mask_%d.png", dir, i + 1);
        st = gt_png_write(path, plan->pano_w, plan->pano_h, 1, m);
    }
    free(m);
    return st;
}

/* --start past the end of input i, which holds `n` frames */
gt_status sj_past_end(const job_ctx *c, int i, long n)
{
    char range[48] = "";
    if (n > 0) snprintf(range, sizeof range, " (0..%ld)", n - 1);
    return gt_fail(GT_ERR_USAGE, "--start %ld is past the end of input %d ('%s'), which has %ld frames%s",
                   c->j->start, i + 1, c->j->inputs[i], n, range);
}

/* Read frame `frame` (of the output) of every input into bufs. *got false
 * at the end (shortest stream); with strict, unequal ends are an error. */
gt_status sj_read_set(job_ctx *c, uint8_t **bufs, long frame, bool *got)
{
    const gt_stitch_job *j = c->j;
    int ended = 0, first_ended = -1, n = c->plan.ncam;
    double t0 = gt_now_ms();
    /* the cameras are read in parallel (separate streams); messages are
     * thread-local, so a failing reader's message is carried back */
    gt_status sts[GT_STITCH_MAX_CAMS];
    bool gots[GT_STITCH_MAX_CAMS];
    char msgs[GT_STITCH_MAX_CAMS][512];
#pragma omp parallel for schedule(static, 1) num_threads(n)
    for (int i = 0; i < n; i++) {
        gots[i] = false;
        sts[i] = gt_yuv_read_frame(c->rd[i], bufs[i], &gots[i]);
        if (sts[i]) snprintf(msgs[i], sizeof msgs[i], "%s", gt_errmsg());
    }
    for (int i = 0; i < n; i++) {
        if (sts[i]) return gt_fail(sts[i], "input %d ('%s'): %s", i + 1, j->inputs[i], msgs[i]);
        if (!gots[i]) {
            ended++;
            if (first_ended < 0) first_ended = i;
        }
    }
    gt_timings_add(&c->tm, "I/O wait (read)", gt_now_ms() - t0);
    *got = ended == 0;
    long at = j->start + frame; /* frames of the input before the end */
    if (ended && frame == 0 && j->start > 0) return sj_past_end(c, first_ended, at);
    if (ended && ended < c->plan.ncam) {
        if (j->strict)
            return gt_fail(GT_ERR_DATA, "input %d ('%s') ended after %ld frames while others continue (--strict)",
                           first_ended + 1, j->inputs[first_ended], at);
        gt_notice("input %d ('%s') ended after %ld frames: stopping at the shortest stream", first_ended + 1,
                  j->inputs[first_ended], at);
    }
    return GT_OK;
}

gt_status sj_emit(job_ctx *c, const uint8_t *frame, long k)
{
    const gt_stitch_job *j = c->j;
    GT_TRY(gt_yuv_write_frame(c->wr, frame));
    if (k == 0 && j->preview) {
        size_t n = (size_t)c->plan.pano_w * c->plan.pano_h * 3;
        uint8_t *rgb = malloc(n);
        if (!rgb) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        gt_status st = gt_yuv_to_rgb(frame, c->plan.fmt, c->plan.pano_w, c->plan.pano_h, j->matrix, j->range, rgb);
        if (!st) gt_stitch_draw_footprints(&c->plan, rgb);
        if (!st) st = gt_png_write(j->preview, c->plan.pano_w, c->plan.pano_h, 3, rgb);
        free(rgb);
        GT_TRY(st);
    }
    return GT_OK;
}

/* gain_update: re-estimate from frame k's inputs before it is stitched */
gt_status sj_update_gains(job_ctx *c, uint8_t *const *bufs, long k)
{
    if (!c->j->gain_update) return GT_OK;
    double t0 = gt_now_ms();
    bool changed;
    GT_TRY(gt_stitch_gain_update_frame(&c->gu, &c->plan, (const uint8_t *const *)bufs, k, &changed));
    if (changed && c->gpu) gt_stitch_gpu_set_gains(c->gpu);
    if (changed) gt_timings_add(&c->tm, "gain update (CPU)", gt_now_ms() - t0);
    return GT_OK;
}

/* Open every input; all must have one size and a format the stitcher takes. */
gt_status sj_open_inputs(job_ctx *c)
{
    const gt_stitch_job *j = c->j;
    for (int i = 0; i < j->ninputs; i++) {
        gt_status st = gt_yuv_open(j->inputs[i], j->w, j->h, j->fmt, &c->rd[i]);
        if (st) {
            gt_errmsg_prefix("input %d", i + 1);
            return st;
        }
        c->any_y4m |= gt_yuv_is_y4m(c->rd[i]);
        int w = gt_yuv_width(c->rd[i]), h = gt_yuv_height(c->rd[i]);
        gt_pixfmt f = gt_yuv_pixfmt(c->rd[i]);
        if (f == GT_PIX_YUV444P)
            return gt_fail(GT_ERR_DATA,
                           "input %d ('%s'): yuv444p is not supported (use yuyv422, uyvy422, yuv420p, nv12 or yuv422p)",
                           i + 1, j->inputs[i]);
        if (i > 0 && (w != gt_yuv_width(c->rd[0]) || h != gt_yuv_height(c->rd[0]) || f != gt_yuv_pixfmt(c->rd[0])))
            return gt_fail(GT_ERR_DATA, "input %d ('%s') is %dx%d %s but input 1 is %dx%d %s: all cameras must match",
                           i + 1, j->inputs[i], w, h, gt_pixfmt_name(f), gt_yuv_width(c->rd[0]),
                           gt_yuv_height(c->rd[0]), gt_pixfmt_name(gt_yuv_pixfmt(c->rd[0])));
    }
    return GT_OK;
}

/* start: pass over the first `start` frames of every input */
gt_status sj_skip_to_start(job_ctx *c)
{
    const gt_stitch_job *j = c->j;
    if (j->start <= 0) return GT_OK;
    double t0 = gt_now_ms();
    for (int i = 0; i < j->ninputs; i++) {
        long n;
        gt_status st = gt_yuv_skip_frames(c->rd[i], j->start, &n);
        if (st) {
            gt_errmsg_prefix("input %d ('%s')", i + 1, j->inputs[i]);
            return st;
        }
        if (n < j->start) return sj_past_end(c, i, n);
    }
    gt_timings_add(&c->tm, "start: skip to the first frame", gt_now_ms() - t0);
    return GT_OK;
}

/* The rig's masks (8-bit gray, panorama size) into the plan options. */
gt_status sj_load_masks(job_ctx *c)
{
    c->po = c->j->plan;
    for (int i = 0; i < c->rig.ncam; i++) {
        const char *mp = c->rig.cam[i].mask_path;
        if (!mp) continue;
        gt_image *mi = &c->masks[i];
        GT_TRY(gt_image_read(mp, 1, 0, mi));
        if (mi->w != c->rig.pano_w || mi->h != c->rig.pano_h) {
            return gt_fail_at(GT_ERR_DATA, c->j->rig, c->rig.cam[i].line,
                              "mask '%s' of camera %d is %dx%d, the panorama is %dx%d", mp, i + 1, mi->w, mi->h,
                              c->rig.pano_w, c->rig.pano_h);
        }
        c->po.masks[i] = mi->data;
    }
    return GT_OK;
}

/* Seams, weights and pyramids (CPU); the masks to save and the gain
 * estimator. */
gt_status sj_build_plan(job_ctx *c)
{
    const gt_stitch_job *j = c->j;
    int w = gt_yuv_width(c->rd[0]), h = gt_yuv_height(c->rd[0]);
    gt_pixfmt fmt = gt_yuv_pixfmt(c->rd[0]);
    /* a camera the rig's homography folds, mirrors or stretches past use,
     * or calibrated for other frames: an error before any work */
    GT_TRY(gt_stitch_rig_check(&c->rig, j->rig, w, h));
    double t_plan = gt_now_ms();
    /* the CUDA thread creates the context meanwhile: leave it a core */
    int omp_prev = c->dev_th_started ? gt_omp_leave_core() : 0;
    gt_status st = gt_stitch_plan_build(&c->rig, w, h, fmt, &c->po, &c->plan);
    if (c->dev_th_started) gt_omp_restore(omp_prev);
    if (st) {
        gt_errmsg_prefix("rig '%s' with %dx%d %s inputs", j->rig, w, h, gt_pixfmt_name(fmt));
        return st == GT_ERR_USAGE ? GT_ERR_DATA : st;
    }
    gt_timings_add(&c->tm, "start: plan (seams, weights, CPU)", gt_now_ms() - t_plan);
    if (j->save_masks) GT_TRY(sj_save_masks(&c->plan, j->save_masks)); /* also to look at a camera out of sight: */
    GT_TRY(gt_stitch_plan_check_owners(&c->plan, &c->rig, j->rig));     /* never stitched without it */
    if (j->gain_update) GT_TRY(gt_stitch_gain_update_init(&c->gu, &c->rig, &c->plan, j->gain_update, 0.5f));
    return GT_OK;
}

/* The output stream: the container named, else the name's, else Y4M when an
 * input is; the first input's frame rate. */
gt_status sj_create_output(job_ctx *c)
{
    const gt_stitch_job *j = c->j;
    bool y4m = j->out_y4m >= 0                ? j->out_y4m == 1
               : ends_with(j->output, ".y4m") ? true
               : ends_with(j->output, ".yuv") || ends_with(j->output, ".raw") ? false
                                              : c->any_y4m;
    int fn = 25, fd = 1;
    gt_yuv_rate(c->rd[0], &fn, &fd);
    return gt_yuv_create(j->output, y4m, c->plan.pano_w, c->plan.pano_h, c->plan.fmt, fn, fd, &c->wr);
}

