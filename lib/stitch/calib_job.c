/* The calibration job (yuvstitch --calibrate, gt_stitch_calibrate): read
 * one frame per camera (PNG/JPEG, Y4M or raw YUV, all brought to yuv444p at
 * one size) while the CUDA context starts, calibrate
 * (gt_stitch_calibrate_frames), report, write the rig file (atomically),
 * the matches and the preview with the seams and footprints. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/output.h"
#include "common/timer.h"
#include "io/image.h"
#include "io/yuv.h"
#include "stitch/calib_priv.h"
#include "stitch/proj.h"

#define CAL_DEG (3.14159265358979323846 / 180.0)

/* one input as a yuv444p frame (*w, *h); PNG/JPEG by their signature */
static gt_status read_input(const gt_stitch_calib_opts *o, const char *path, uint8_t **frame, int *w, int *h)
{
    *frame = NULL;
    unsigned char sig[8] = {0};
    size_t got = 0;
    if (strcmp(path, "-")) {
        FILE *f = fopen(path, "rb");
        if (!f) return gt_fail(GT_ERR_RUNTIME, "cannot open '%s'", path);
        got = fread(sig, 1, sizeof sig, f);
        fclose(f);
    }
    bool image = (got >= 8 && !memcmp(sig, "\x89PNG\r\n\x1a\n", 8)) || (got >= 3 && sig[0] == 0xff && sig[1] == 0xd8);
    if (image) {
        gt_image img;
        GT_TRY(gt_image_read(path, 3, 0, &img));
        *w = img.w, *h = img.h;
        *frame = gt_malloc_array((size_t)img.w * img.h, 3, "frame");
        gt_status st = *frame ? gt_rgb_to_yuv(img.data, img.w, img.h, GT_BT601, GT_RANGE_LIMITED, *frame, GT_PIX_YUV444P)
                              : GT_ERR_RUNTIME;
        gt_image_free(&img);
        return st;
    }
    gt_yuv_reader *r;
    GT_TRY(gt_yuv_open(path, o->w, o->h, o->fmt, &r));
    *w = gt_yuv_width(r), *h = gt_yuv_height(r);
    gt_pixfmt f = gt_yuv_pixfmt(r);
    uint8_t *buf = gt_malloc(gt_yuv_frame_bytes(r), "frame");
    *frame = gt_malloc_array((size_t)*w * *h, 3, "frame");
    gt_status st = buf && *frame ? GT_OK : GT_ERR_RUNTIME;
    bool ok = true;
    for (long k = 0; k <= o->frame && !st && ok; k++) st = gt_yuv_read_frame(r, buf, &ok);
    if (!st && !ok)
        st = gt_fail(GT_ERR_DATA, "'%s' has %ld frames, frame %ld was asked for", path, gt_yuv_frames_read(r), o->frame);
    if (!st) st = gt_yuv_convert(buf, f, *frame, GT_PIX_YUV444P, *w, *h);
    gt_yuv_close(r);
    free(buf);
    if (st) {
        free(*frame);
        *frame = NULL;
    }
    return st;
}

static void *prepare_main(void *arg)
{
    const gt_stitch_calib_opts *o = arg;
    gt_device_prepare(o->device, o->gpu);
    return NULL;
}

static void report(FILE *f, const gt_stitch_calib_result *r, int ncam, bool placed, bool preview)
{
    for (int i = 0; i < ncam; i++) fprintf(f, "camera %d: %d features\n", i + 1, r->nfeat[i]);
    for (int q = 0; q < r->npairs; q++) {
        const gt_calib_pair *p = &r->pairs[q];
        fprintf(f, "pair %d-%d: %d matches, %d inliers", p->i + 1, p->j + 1, p->matches, p->inliers);
        if (p->inliers > 0) fprintf(f, ", reprojection error RMS %.3f px, max %.3f px", p->rms, p->max);
        fprintf(f, "%s\n", p->tree ? " (chain)" : p->used ? " (accepted)" : " (not used)");
    }
    if (!placed) return;
    const gt_stitch_rig *g = &r->rig;
    if (r->rotation) {
        if (r->polished) {
            fprintf(f, "bundle adjustment: %ld inlier matches, reprojection error RMS %.3f px (chained rotations %.3f px); "
                    "a plane: its homographies polished by the dense refinement, RMS %.3f px, max %.3f px",
                    r->nmatch, r->rms_ba, r->rms_init, r->rms, r->max);
            if (r->polish_weight < 1)
                fprintf(f, " (the overlaps' points weighted %g of a feature's, so that the features stay within "
                        "max(%g px, %g %% above their own fit's %.3f px))",
                        r->polish_weight, GT_CALIB_POLISH_MAX_RMS, 100 * GT_CALIB_POLISH_BOUND_REL, r->rms_feat);
            fprintf(f, "\n");
        } else {
            fprintf(f, "bundle adjustment: %ld inlier matches, reprojection error RMS %.3f px (chained rotations %.3f px), "
                    "max %.3f px\n", r->nmatch, r->rms, r->rms_init, r->max);
        }
        for (int i = 0; i < ncam; i++) {
            gt_stitch_cam cc;
            memset(&cc, 0, sizeof cc);
            memcpy(cc.R, r->cams[i].R, sizeof cc.R);
            cc.f = r->cams[i].f, cc.k1 = r->cams[i].k1, cc.k2 = r->cams[i].k2;
            const gt_stitch_cam *c = &cc;
            const double *z = c->R + 6, *x = c->R; /* optical axis and x axis in the panorama's frame */
            double yaw = atan2(z[0], z[2]) / CAL_DEG, pitch = asin(fmax(-1, fmin(1, -z[1]))) / CAL_DEG;
            /* roll: the x axis against the level direction perpendicular to the axis */
            double lv[3] = {z[2], 0, -z[0]}, n = hypot(lv[0], lv[2]);
            double roll = n > 1e-9 ? atan2(-x[1], (x[0] * lv[0] + x[2] * lv[2]) / n) / CAL_DEG : 0;
            fprintf(f, "camera %d: focal %.2f px, yaw %.2f, pitch %.2f, roll %.2f degrees", i + 1, c->f, yaw, pitch, roll);
            if (c->k1 != 0 || c->k2 != 0) fprintf(f, ", distortion %.5f %.5f", c->k1, c->k2);
            if (r->cams[i].dcx != 0 || r->cams[i].dcy != 0)
                fprintf(f, ", principal point %+.2f %+.2f px off the centre", r->cams[i].dcx, r->cams[i].dcy);
            fprintf(f, "\n");
        }
        fprintf(f, "projection %s %.2f %.2f %.2f %.2f (left right top bottom, degrees)\n", gt_proj_name(g->proj.kind),
                g->proj.left, g->proj.right, g->proj.top, g->proj.bottom);
    }
    fprintf(f, "reference camera %d, panorama %dx%d\n", r->reference + 1, g->pano_w, g->pano_h);
    if (preview) {
        fprintf(f, "preview footprints:");
        for (int i = 0; i < ncam; i++) {
            const uint8_t *c = gt_stitch_palette(i);
            fprintf(f, " %d #%02x%02x%02x", i + 1, c[0], c[1], c[2]);
        }
        fprintf(f, " (seams red)\n");
    }
    const char *nm[3] = {"Y", "U", "V"};
    for (int p = 0; p < 3; p++) {
        fprintf(f, "gains %s:", nm[p]);
        for (int i = 0; i < ncam; i++)
            fprintf(f, " %.4f", p == 0 ? g->cam[i].gain : p == 1 ? g->cam[i].gain_u : g->cam[i].gain_v);
        fprintf(f, "\n");
    }
}

/* --matches: the feature inliers of every accepted pair, as text */
static gt_status write_matches(const char *path, const gt_stitch_calib_result *r, int n, int w, int h)
{
    gt_out out;
    GT_TRY(gt_out_open(&out, path));
    FILE *f = out.fp;
    fprintf(f, "# yuvstitch --calibrate: the inlier matches of the accepted pairs\n"
               "# cameras N W H, then per pair 'pair I J M' and M lines 'x_I y_I x_J y_J'\n"
               "# (luma pixels, pixel centres at integers, cameras from 1)\n");
    fprintf(f, "cameras %d %d %d\n", n, w, h);
    for (int q = 0; q < r->npairs; q++) {
        const gt_calib_pair *p = &r->pairs[q];
        if (!p->used || !p->nf) continue;
        fprintf(f, "pair %d %d %d\n", p->i + 1, p->j + 1, p->nf);
        for (int t = 0; t < p->nf; t++)
            fprintf(f, "%.9g %.9g %.9g %.9g\n", p->fa[2 * t], p->fa[2 * t + 1], p->fb[2 * t], p->fb[2 * t + 1]);
    }
    if (ferror(f)) {
        gt_out_abort(&out);
        return gt_fail(GT_ERR_RUNTIME, "write error ('%s')", path);
    }
    return gt_out_commit(&out);
}

/* stitched panorama (multi-band, CPU reference or GPU) as RGB with the
 * seams drawn in red and every camera's footprint outlined in a colour of
 * its own (the legend on the report) */
static gt_status write_preview(const char *path, const gt_stitch_rig *rig, uint8_t *const *frames, int w, int h,
                               gt_device_kind dev)
{
    gt_stitch_plan plan;
    gt_stitch_plan_opts po;
    gt_stitch_plan_opts_init(&po);
    GT_TRY(gt_stitch_plan_build(rig, w, h, GT_PIX_YUV444P, &po, &plan));
    size_t np = (size_t)plan.pano_w * plan.pano_h;
    uint8_t *out = gt_malloc(plan.out_bytes, "preview"), *rgb = gt_malloc_array(np, 3, "preview");
    gt_status st = out && rgb ? GT_OK : GT_ERR_RUNTIME;
    gt_stitch_gpu *g = NULL;
    if (!st && dev == GT_DEVICE_CUDA && !(st = gt_stitch_gpu_create(&plan, &g)))
        st = gt_stitch_gpu_frame(g, (const uint8_t *const *)frames, out);
    else if (!st)
        st = gt_stitch_frame_cpu(&plan, (const uint8_t *const *)frames, out);
    gt_stitch_gpu_destroy(g);
    if (!st) st = gt_yuv_to_rgb(out, GT_PIX_YUV444P, plan.pano_w, plan.pano_h, GT_BT601, GT_RANGE_LIMITED, rgb);
    if (!st) {
        int W = plan.pano_w, H = plan.pano_h;
        const uint8_t *ow = plan.owner_luma;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                size_t j = (size_t)y * W + x;
                int a = ow[j], b = x + 1 < W ? ow[j + 1] : a, c = y + 1 < H ? ow[j + W] : a;
                if (a == 255 || ((b == a || b == 255) && (c == a || c == 255))) continue;
                rgb[3 * j] = 255, rgb[3 * j + 1] = 0, rgb[3 * j + 2] = 0;
            }
        gt_stitch_draw_footprints(&plan, rgb);
        st = gt_png_write(path, W, H, 3, rgb);
    }
    free(out), free(rgb);
    gt_stitch_plan_free(&plan);
    return st;
}

gt_status gt_stitch_calibrate(const gt_stitch_calib_opts *o)
{
    int n = o->ninputs;
    if (n < 2 || n > GT_STITCH_MAX_CAMS)
        return gt_fail(GT_ERR_USAGE, "--calibrate needs 2 to %d inputs, got %d", GT_STITCH_MAX_CAMS, n);
    gt_timings tm;
    gt_timings_init(&tm);
    double t0 = gt_now_ms();
    pthread_t th;
    bool th_on = o->device != GT_DEVICE_CPU && pthread_create(&th, NULL, prepare_main, (void *)o) == 0;
    uint8_t *frames[GT_STITCH_MAX_CAMS] = {0};
    int ws[GT_STITCH_MAX_CAMS], hs[GT_STITCH_MAX_CAMS];
    gt_status sts[GT_STITCH_MAX_CAMS];
    char msgs[GT_STITCH_MAX_CAMS][512];
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        sts[i] = read_input(o, o->inputs[i], &frames[i], &ws[i], &hs[i]);
        if (sts[i]) snprintf(msgs[i], sizeof msgs[i], "%s", gt_errmsg());
    }
    gt_status st = GT_OK;
    for (int i = 0; i < n && !st; i++)
        if (sts[i]) st = gt_fail(sts[i], "input %d ('%s'): %s", i + 1, o->inputs[i], msgs[i]);
    for (int i = 1; i < n && !st; i++)
        if (ws[i] != ws[0] || hs[i] != hs[0])
            st = gt_fail(GT_ERR_DATA, "input %d ('%s') is %dx%d but input 1 is %dx%d: all cameras must match", i + 1,
                         o->inputs[i], ws[i], hs[i], ws[0], hs[0]);
    double t1 = gt_now_ms();
    gt_timings_add(&tm, "read inputs", t1 - t0);
    if (th_on) pthread_join(th, NULL);
    gt_stitch_calib_opts oo = *o;
    if (!st) {
        st = gt_device_choose(o->device, o->gpu, &oo.device);
        gt_timings_add(&tm, "device", gt_now_ms() - t1);
    }
    gt_stitch_calib_result res;
    memset(&res, 0, sizeof res);
    double t2 = gt_now_ms();
    if (!st) {
        st = gt_stitch_calibrate_frames((const uint8_t *const *)frames, n, ws[0], hs[0], GT_PIX_YUV444P, &oo, &res);
        gt_timings_add(&tm, oo.device == GT_DEVICE_CUDA ? "calibrate (features on the GPU)" : "calibrate (CPU)",
                       gt_now_ms() - t2);
        bool placed = !st;
        if (o->report && (res.npairs || placed)) report(o->report, &res, n, placed, o->preview != NULL);
    }
    if (!st) {
        double t3 = gt_now_ms();
        gt_out out;
        st = gt_out_open(&out, o->out);
        if (!st) {
            fprintf(out.fp, "# yuvstitch --calibrate: %d cameras, reference camera %d\n", n, res.reference + 1);
            if (res.rotation)
                fprintf(out.fp, "# bundle adjustment: %ld inlier matches, reprojection error RMS %.3f px, max %.3f px%s\n",
                        res.nmatch, res.rms, res.max,
                        res.polished ? " (the plane's homographies, polished by the dense refinement)" : "");
            for (int q = 0; q < res.npairs; q++) {
                const gt_calib_pair *p = &res.pairs[q];
                if (p->used)
                    fprintf(out.fp, "# pair %d-%d: %d matches, %d inliers, RMS %.3f px, max %.3f px%s\n", p->i + 1,
                            p->j + 1, p->matches, p->inliers, p->rms, p->max, p->tree ? " (chain)" : "");
            }
            st = gt_stitch_rig_write(out.fp, &res.rig);
            if (st) {
                gt_out_abort(&out);
                gt_errmsg_prefix("'%s'", o->out);
            } else {
                st = gt_out_commit(&out);
            }
        }
        gt_timings_add(&tm, "write the rig", gt_now_ms() - t3);
    }
    if (!st && o->matches) st = write_matches(o->matches, &res, n, ws[0], hs[0]);
    if (!st && o->preview) {
        double t4 = gt_now_ms();
        st = write_preview(o->preview, &res.rig, frames, ws[0], hs[0], oo.device);
        gt_timings_add(&tm, "preview (plan, stitch, PNG)", gt_now_ms() - t4);
    }
    gt_stitch_calib_result_free(&res);
    for (int i = 0; i < n; i++) free(frames[i]);
    if (o->timings) {
        gt_timings_print(&tm, stderr, "yuvstitch --calibrate stages");
        fprintf(stderr, "calibration of %d cameras: %.1f ms\n", n, gt_now_ms() - t0);
    }
    return st;
}
