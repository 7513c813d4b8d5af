/* Calibration from frames in memory (gt_stitch_calibrate_frames): the
 * luma planes, features (GPU or CPU), every pair's matches and homography
 * (calib_pairs.c), then the camera model:
 *   rotation (default)  sub-pixel matches, rotations and focal lengths
 *                       chained and adjusted together (calib_rot.c,
 *                       calib_ba.c), horizon straightening, the projection
 *                       and panorama (calib_pano.c); a rig the plane holds
 *                       without distortion then has its homographies
 *                       polished by the pairs' dense refinement (as the
 *                       homography model does), which pins narrow views
 *                       down better than their features can, as far as
 *                       it keeps the features' error within a bound
 *                       (gt_calib_polish_homographies);
 *   homography          each pair densely refined, the chain of homographies
 *                       to the reference (calib_chain.c);
 * then the checks that no camera is lost and the gains. The job around it
 * (files, report, preview) is calib_job.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/timer.h"
#include "stitch/calib_priv.h"
#include "stitch/proj.h"

void gt_stitch_calib_opts_init(gt_stitch_calib_opts *o)
{
    memset(o, 0, sizeof *o);
    o->fmt = -1;
    gt_calib_detect_opts_init(&o->det);
    o->ratio = 0.8;
    gt_calib_ransac_opts_init(&o->ransac);
    gt_calib_chain_opts_init(&o->chain);
    gt_calib_rot_opts_init(&o->rot);
    o->device = GT_DEVICE_AUTO;
}

void gt_stitch_calib_result_free(gt_stitch_calib_result *r)
{
    for (int p = 0; p < r->npairs; p++) {
        free(r->pairs[p].pa);
        free(r->pairs[p].pb);
        free(r->pairs[p].fa);
        free(r->pairs[p].fb);
    }
    gt_stitch_rig_free(&r->rig);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------ calibrate */

/* matches the adjusted rig does not explain within RANSAC's inlier threshold (a wrong match that the pair's
 * homography let through, a moving object, parallax) leave, and the rig is adjusted again without them */
static gt_status drop_rounds(gt_stitch_calib_result *res, int ncam, int w, int h, const gt_stitch_calib_opts *o,
                             int lens, gt_calib_cam *cams, int *drop)
{
    for (int round = 0; round < 3; round++) {
        int d = gt_calib_drop_outliers(res->pairs, res->npairs, w, h, cams, o->ransac.threshold);
        if (!d) break;
        *drop += d;
        GT_TRY(gt_calib_bundle(res->pairs, res->npairs, ncam, w, h, res->reference, lens, o->rot.ba_iters, cams));
    }
    return GT_OK;
}

/* a lens the automatic choice may keep: monotonic over the frame, its centre within 10 % of the frame's */
static bool lens_plausible(const gt_calib_cam *c, int w, int h)
{
    gt_stitch_cam s;
    gt_calib_cam_model(c, w, h, &s);
    return gt_cam_distortion_ok(&s) && fabs(c->dcx) <= 0.1 * w && fabs(c->dcy) <= 0.1 * h;
}

/* GT_CALIB_LENS_AUTO: from the adjusted cameras without a lens model (the inliers they explain), the
 * adjustment with k1, k2 and then with the principal point, each kept when it lowers the inliers' RMS
 * error by 5 % and 0.02 px with a plausible lens; the GT_CALIB_BA_* bits kept */
static gt_status choose_lens(gt_stitch_calib_result *res, int ncam, int w, int h, const gt_stitch_calib_opts *o,
                             gt_calib_cam *cams, int *lens)
{
    double best;
    gt_calib_reproj(res->pairs, res->npairs, w, h, cams, false, &best, NULL, NULL);
    const int step[2] = {GT_CALIB_BA_K, GT_CALIB_BA_CENTRE};
    for (int k = 0; k < 2; k++) {
        gt_calib_cam t[GT_STITCH_MAX_CAMS];
        memcpy(t, cams, sizeof(gt_calib_cam) * ncam);
        int bits = *lens | step[k];
        GT_TRY(gt_calib_bundle(res->pairs, res->npairs, ncam, w, h, res->reference, bits, o->rot.ba_iters, t));
        double rms;
        gt_calib_reproj(res->pairs, res->npairs, w, h, t, false, &rms, NULL, NULL);
        bool ok = lens_plausible(&t[0], w, h) && rms < 0.95 * best && best - rms > 0.02;
        gt_info("calibrate: the lens's %s: RMS %.3f -> %.3f px (k1 %.4f k2 %.4f, centre %+.1f %+.1f px): %s",
                k ? "principal point" : "distortion", best, rms, t[0].k1, t[0].k2, t[0].dcx, t[0].dcy,
                ok ? "kept" : "not kept");
        if (!ok) continue;
        memcpy(cams, t, sizeof(gt_calib_cam) * ncam);
        best = rms, *lens = bits;
    }
    return GT_OK;
}

/* the rotation model: cameras from the pairs, adjusted, the panorama */
static gt_status rotation_model(gt_stitch_calib_result *res, int ncam, int w, int h, const gt_stitch_calib_opts *o)
{
    double t5 = gt_now_ms();
    gt_calib_cam *cams = res->cams;
    res->rotation = true;
    GT_TRY(gt_calib_rot_init(res->pairs, res->npairs, ncam, w, h, &o->chain, &o->rot, res->reference, cams));
    gt_calib_reproj(res->pairs, res->npairs, w, h, cams, false, &res->rms_init, NULL, NULL);
    int mode = o->rot.distortion ? GT_CALIB_LENS_DISTORTION : o->rot.lens;
    int lens = mode == GT_CALIB_LENS_DISTORTION ? GT_CALIB_BA_K
               : mode == GT_CALIB_LENS_FULL     ? GT_CALIB_BA_K | GT_CALIB_BA_CENTRE
                                                : 0;
    /* the lens joins once the rotations and focal lengths have settled: from the chained rotations a lens
     * model can run off to a wrong minimum */
    GT_TRY(gt_calib_bundle(res->pairs, res->npairs, ncam, w, h, res->reference, 0, o->rot.ba_iters, cams));
    if (lens) GT_TRY(gt_calib_bundle(res->pairs, res->npairs, ncam, w, h, res->reference, lens, o->rot.ba_iters, cams));
    int drop = 0;
    GT_TRY(drop_rounds(res, ncam, w, h, o, lens, cams, &drop));
    if (mode == GT_CALIB_LENS_AUTO) {
        GT_TRY(choose_lens(res, ncam, w, h, o, cams, &lens));
        if (lens) { /* the inliers again, as the chosen lens sees them: from RANSAC's */
            for (int q = 0; q < res->npairs; q++) {
                gt_calib_pair *p = &res->pairs[q];
                if (!p->used) continue;
                memcpy(p->pa, p->fa, sizeof(double) * 2 * (size_t)p->nf);
                memcpy(p->pb, p->fb, sizeof(double) * 2 * (size_t)p->nf);
                p->n = p->nf;
            }
            drop = 0;
            GT_TRY(gt_calib_bundle(res->pairs, res->npairs, ncam, w, h, res->reference, lens, o->rot.ba_iters, cams));
            GT_TRY(drop_rounds(res, ncam, w, h, o, lens, cams, &drop));
        }
    }
    res->lens = lens;
    if (drop) {
        gt_info("calibrate: %d matches more than %.2f px off the adjusted rig dropped", drop, o->ransac.threshold);
        for (int q = 0; q < res->npairs; q++) { /* --matches writes what the adjustment used */
            gt_calib_pair *p = &res->pairs[q];
            if (!p->used) continue;
            memcpy(p->fa, p->pa, sizeof(double) * 2 * (size_t)p->n);
            memcpy(p->fb, p->pb, sizeof(double) * 2 * (size_t)p->n);
            p->nf = p->n;
        }
    }
    if (!o->rot.no_wave) gt_calib_wave(cams, ncam, res->reference);
    gt_calib_reproj(res->pairs, res->npairs, w, h, cams, true, &res->rms, &res->max, &res->nmatch);
    res->rms_ba = res->rms;
    res->ms_ba = gt_now_ms() - t5;
    gt_info("calibrate: rotations and bundle adjustment %.1f ms (RMS %.3f -> %.3f px)", res->ms_ba, res->rms_init,
            res->rms);
    return gt_calib_frame_rot(cams, ncam, w, h, &o->rot, &o->chain, &res->rig);
}

/* dense refinement of every accepted pair's homography (parallel inside),
 * and the overlap's points as its correspondences (pa, pb) */
static gt_status dense_pairs(gt_stitch_calib_result *res, const uint8_t *const *Y, int w, int h, int pitch,
                             const gt_stitch_calib_opts *o)
{
    for (int q = 0; q < res->npairs; q++) {
        gt_calib_pair *p = &res->pairs[q];
        if (!p->used || !gt_calib_pair_ok(p, o->chain.min_inliers)) continue;
        double H[9];
        memcpy(H, p->H, sizeof H);
        GT_TRY(gt_calib_align(Y[p->i], Y[p->j], w, h, pitch, H, 30));
        if (gt_calib_sane(H, w, h)) memcpy(p->H, H, sizeof H);
        GT_TRY(gt_calib_final_pair(p, w, h));
    }
    return GT_OK;
}

/* A plane of rotation-model cameras without distortion: its homographies
 * (H = A R^T K^-1) polished by the global refinement of the homography
 * model over every accepted pair (gt_calib_polish_homographies), the
 * reference held, on the sub-pixel feature inliers and the overlaps' points
 * under each pair's densely refined homography, the latter weighted so
 * that the features' RMS error stays within the stated bound; the cameras
 * keep H only (a rig of version 1). The feature inliers' RMS error is then
 * that of the homographies (both ways). */
static gt_status polish_plane(gt_stitch_calib_result *res, int ncam, const uint8_t *const *Y, int w, int h, int pitch,
                              const gt_stitch_calib_opts *o)
{
    double t0 = gt_now_ms();
    GT_TRY(dense_pairs(res, Y, w, h, pitch, o));
    double Hc[GT_STITCH_MAX_CAMS][9];
    for (int i = 0; i < ncam; i++) memcpy(Hc[i], res->rig.cam[i].H, sizeof Hc[i]);
    GT_TRY(gt_calib_polish_homographies(res->pairs, res->npairs, ncam, res->reference, Hc, &res->polish_weight,
                                        &res->rms_feat));
    gt_stitch_rig *rig = &res->rig;
    for (int i = 0; i < ncam; i++) {
        gt_stitch_cam *c = &rig->cam[i];
        memcpy(c->H, Hc[i], sizeof c->H);
        c->rot = false;
        c->w = 0, c->h = 0, c->f = 0, c->cx = c->cy = NAN;
    }
    rig->version = 1; /* homographies only: any yuvstitch reads it */
    GT_TRY(gt_stitch_rig_finish(rig));
    for (int i = 0; i < ncam; i++) memcpy(Hc[i], rig->cam[i].H, sizeof Hc[i]);
    GT_TRY(gt_calib_feature_rms(res->pairs, res->npairs, Hc, true, &res->rms, &res->max));
    res->polished = true;
    gt_info("calibrate: the plane's homographies polished by the dense refinement %.1f ms (the overlaps' points "
            "weighted %.4g: RMS %.3f px)", gt_now_ms() - t0, res->polish_weight, res->rms);
    return GT_OK;
}

gt_status gt_stitch_calibrate_frames(const uint8_t *const *frames, int ncam, int w, int h, gt_pixfmt fmt,
                                     const gt_stitch_calib_opts *o, gt_stitch_calib_result *res)
{
    memset(res, 0, sizeof *res);
    if (ncam < 2 || ncam > GT_STITCH_MAX_CAMS)
        return gt_fail(GT_ERR_USAGE, "calibration needs 2 to %d cameras, got %d", GT_STITCH_MAX_CAMS, ncam);
    gt_plane_view pv[3];
    GT_TRY(gt_stitch_planes(fmt, w, h, pv));
    gt_device_kind dev = o->device;
    if (dev == GT_DEVICE_AUTO) GT_TRY(gt_device_choose(GT_DEVICE_AUTO, o->gpu, &dev));
    res->device = dev;
    gt_calib_feat feat[GT_STITCH_MAX_CAMS];
    memset(feat, 0, sizeof feat);
    gt_status st = GT_OK;
    /* luma planes, contiguous rows (packed formats are copied out) */
    const uint8_t *Y[GT_STITCH_MAX_CAMS];
    uint8_t *luma = NULL;
    int pitch = pv[0].pitch;
    if (pv[0].step != 1) {
        if (!(luma = gt_malloc_array((size_t)w * h, (size_t)ncam, "luma"))) return GT_ERR_RUNTIME;
        pitch = w;
    }
    for (int i = 0; i < ncam; i++) {
        Y[i] = frames[i] + pv[0].off;
        if (!luma) continue;
        uint8_t *d = luma + (size_t)w * h * i;
        for (int r = 0; r < h; r++)
            for (int c = 0; c < w; c++) d[(size_t)r * w + c] = Y[i][(size_t)r * pv[0].pitch + (size_t)c * pv[0].step];
        Y[i] = d;
    }
    double t0 = gt_now_ms();
    for (int i = 0; i < ncam && !st; i++) {
        st = dev == GT_DEVICE_CUDA ? gt_calib_detect_gpu(Y[i], w, h, pitch, &o->det, &feat[i])
                                   : gt_calib_detect_cpu(Y[i], w, h, pitch, &o->det, &feat[i]);
        if (st) gt_errmsg_prefix("camera %d", i + 1);
        res->nfeat[i] = feat[i].n;
    }
    double t1 = gt_now_ms();
    gt_info("calibrate: features %.1f ms (%s)", t1 - t0, dev == GT_DEVICE_CUDA ? "cuda" : "cpu");
    /* every pair: matches, then the fits in parallel */
    gt_calib_match *mt[GT_STITCH_MAX_CAMS * (GT_STITCH_MAX_CAMS - 1) / 2] = {0};
    int nm[GT_STITCH_MAX_CAMS * (GT_STITCH_MAX_CAMS - 1) / 2] = {0};
    for (int i = 0; i < ncam && !st; i++)
        for (int j = i + 1; j < ncam && !st; j++) {
            int q = res->npairs++;
            res->pairs[q].i = i, res->pairs[q].j = j;
            st = gt_calib_match_features(&feat[i], &feat[j], o->ratio, &mt[q], &nm[q]);
        }
    double t2 = gt_now_ms();
    gt_status fst[GT_STITCH_MAX_CAMS * (GT_STITCH_MAX_CAMS - 1) / 2] = {GT_OK};
    if (!st) {
#pragma omp parallel for schedule(dynamic, 1)
        for (int q = 0; q < res->npairs; q++)
            fst[q] = gt_calib_fit_pair(&feat[res->pairs[q].i], &feat[res->pairs[q].j], mt[q], nm[q], o,
                                       Y[res->pairs[q].i], Y[res->pairs[q].j], w, h, pitch,
                                       o->ransac.seed + 0x9E3779B97F4A7C15ull * (uint64_t)q, &res->pairs[q]);
        for (int q = 0; q < res->npairs && !st; q++)
            if (fst[q]) st = gt_fail(fst[q], "out of memory (pairs)");
    }
    double t3 = gt_now_ms();
    for (int i = 0; i < ncam; i++) gt_calib_feat_free(&feat[i]);
    /* the homography model: dense refinement of the accepted pairs */
    if (!st && o->model == GT_CALIB_HOMOGRAPHY) st = dense_pairs(res, Y, w, h, pitch, o);
    double t4 = gt_now_ms();
    gt_info("calibrate: matching %.1f ms, %s %.1f ms, dense refinement %.1f ms", t2 - t1,
            o->model == GT_CALIB_ROTATION ? "sub-pixel matches and RANSAC" : "RANSAC", t3 - t2, t4 - t3);
    res->reference = o->chain.reference >= 0 ? o->chain.reference : (ncam - 1) / 2;
    if (!st && res->reference >= ncam)
        st = gt_fail(GT_ERR_USAGE, "--reference %d: there are %d cameras", res->reference + 1, ncam);
    if (!st && o->model == GT_CALIB_HOMOGRAPHY) {
        double Hc[GT_STITCH_MAX_CAMS][9];
        int ws[GT_STITCH_MAX_CAMS], hs[GT_STITCH_MAX_CAMS];
        for (int i = 0; i < ncam; i++) ws[i] = w, hs[i] = h;
        st = gt_calib_chain(res->pairs, res->npairs, ncam, &o->chain, Hc);
        if (!st) st = gt_calib_frame(Hc, ncam, ws, hs, &o->chain, &res->rig);
    } else if (!st) {
        st = rotation_model(res, ncam, w, h, o);
        if (!st && res->rig.proj.kind == GT_PROJ_PLANE && !res->rig.ray) st = polish_plane(res, ncam, Y, w, h, pitch, o);
    }
    free(luma);
    if (st) return st;
    /* never a rig that stitches a camera out of sight */
    GT_TRY(gt_stitch_rig_check(&res->rig, NULL, w, h));
    GT_TRY(gt_stitch_rig_check_owners(&res->rig, w, h, 1024));
    if (!o->no_gains) {
        gt_stitch_gains *g;
        float gains[3][GT_STITCH_MAX_CAMS];
        GT_TRY(gt_stitch_gains_create(&res->rig, w, h, fmt, 0, &g));
        st = gt_stitch_gains_estimate(g, frames, res->reference, gains, NULL);
        gt_stitch_gains_destroy(g);
        GT_TRY(st);
        for (int i = 0; i < ncam; i++) {
            res->rig.cam[i].gain = gains[0][i];
            res->rig.cam[i].gain_u = gains[1][i];
            res->rig.cam[i].gain_v = gains[2][i];
        }
    }
    gt_info("calibrate: chain, frame and gains %.1f ms", gt_now_ms() - t3);
    return GT_OK;
}

