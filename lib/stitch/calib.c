/* The calibration job (yuvstitch --calibrate): read one frame per camera
 * (PNG/JPEG, Y4M or raw YUV, all brought to yuv444p at one size), detect
 * features (GPU or CPU), match every pair of cameras, fit each pair's
 * homography (RANSAC, then Levenberg-Marquardt), chain the cameras to the
 * reference, choose the panorama frame, estimate the exposure gains, report
 * per pair, and write the rig file (atomically) and a preview with the
 * seams. */
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
#include "stitch/calib.h"

void gt_stitch_calib_opts_init(gt_stitch_calib_opts *o)
{
    memset(o, 0, sizeof *o);
    o->fmt = -1;
    gt_calib_detect_opts_init(&o->det);
    o->ratio = 0.8;
    gt_calib_ransac_opts_init(&o->ransac);
    gt_calib_chain_opts_init(&o->chain);
    o->device = GT_DEVICE_AUTO;
}

void gt_stitch_calib_result_free(gt_stitch_calib_result *r)
{
    for (int p = 0; p < r->npairs; p++) {
        free(r->pairs[p].pa);
        free(r->pairs[p].pb);
    }
    gt_stitch_rig_free(&r->rig);
    memset(r, 0, sizeof *r);
}

gt_status gt_stitch_rig_write(FILE *f, const gt_stitch_rig *rig)
{
    fprintf(f, "panorama %d %d\n", rig->pano_w, rig->pano_h);
    for (int i = 0; i < rig->ncam; i++) {
        const gt_stitch_cam *c = &rig->cam[i];
        fprintf(f, "camera\n  H %.17g %.17g %.17g\n    %.17g %.17g %.17g\n    %.17g %.17g %.17g\n", c->H[0], c->H[1],
                c->H[2], c->H[3], c->H[4], c->H[5], c->H[6], c->H[7], c->H[8]);
        if (c->mask_path) fprintf(f, "  mask %s\n", c->mask_path);
        fprintf(f, "  gain %.9g\n  gain_u %.9g\n  gain_v %.9g\n", c->gain > 0 ? c->gain : 1.0,
                c->gain_u > 0 ? c->gain_u : 1.0, c->gain_v > 0 ? c->gain_v : 1.0);
    }
    return ferror(f) ? gt_fail(GT_ERR_RUNTIME, "write error") : GT_OK;
}

/* ------------------------------------------------------------ pairs */

/* whether H (camera i -> camera j, cameras w x h) is a plausible view
 * change: every corner in front, the warped area within 1/16..16 */
static bool sane(const double H[9], int w, int h)
{
    double cx[4] = {0, w - 1.0, w - 1.0, 0}, cy[4] = {0, 0, h - 1.0, h - 1.0}, u[4], v[4];
    for (int k = 0; k < 4; k++) {
        double d = H[6] * cx[k] + H[7] * cy[k] + H[8];
        if (!(d > 1e-6)) return false;
        u[k] = (H[0] * cx[k] + H[1] * cy[k] + H[2]) / d;
        v[k] = (H[3] * cx[k] + H[4] * cy[k] + H[5]) / d;
    }
    double a = 0;
    for (int k = 0; k < 4; k++) a += u[k] * v[(k + 1) % 4] - u[(k + 1) % 4] * v[k];
    a = 0.5 * a / ((w - 1.0) * (h - 1.0));
    return a > 1.0 / 16 && a < 16;
}

static inline int hamming32(const uint8_t *a, const uint8_t *b)
{
    int d = 0;
    for (int k = 0; k < GT_CALIB_DESC; k += 8) {
        uint64_t x, y;
        memcpy(&x, a + k, 8);
        memcpy(&y, b + k, 8);
        d += __builtin_popcountll(x ^ y);
    }
    return d;
}

/* Guided matching: with a first H, pair each keypoint of i with the keypoint
 * of j nearest in descriptor among those within `radius` px of where H puts
 * it, both ways (mutual), distance at most maxd of 256 (unrelated
 * descriptors differ in about 128 bits). This recovers the true matches
 * that the ratio test dropped among noisy features. m has room for fi->n. */
static int guided(const gt_calib_feat *fi, const gt_calib_feat *fj, const double H[9], double radius, int maxd,
                  gt_calib_match *m)
{
    int *best_i = malloc(sizeof(int) * ((size_t)fi->n + 1)), *best_j = malloc(sizeof(int) * ((size_t)fj->n + 1));
    int *dj = malloc(sizeof(int) * ((size_t)fj->n + 1));
    double *pu = malloc(sizeof(double) * 2 * ((size_t)fi->n + 1));
    if (!best_i || !best_j || !dj || !pu) {
        free(best_i), free(best_j), free(dj), free(pu);
        return 0;
    }
    for (int b = 0; b < fj->n; b++) best_j[b] = -1, dj[b] = 1 << 20;
    double r2 = radius * radius;
    for (int a = 0; a < fi->n; a++) {
        double x = fi->kp[a].x, y = fi->kp[a].y, d = H[6] * x + H[7] * y + H[8];
        pu[2 * a] = d > 0 ? (H[0] * x + H[1] * y + H[2]) / d : -1e30;
        pu[2 * a + 1] = d > 0 ? (H[3] * x + H[4] * y + H[5]) / d : -1e30;
        int bb = -1, bd = maxd + 1;
        for (int b = 0; b < fj->n; b++) {
            double dx = fj->kp[b].x - pu[2 * a], dy = fj->kp[b].y - pu[2 * a + 1];
            if (dx * dx + dy * dy > r2) continue;
            int hd = hamming32(fi->desc + (size_t)a * GT_CALIB_DESC, fj->desc + (size_t)b * GT_CALIB_DESC);
            if (hd < bd) bd = hd, bb = b;
            if (hd < dj[b] || (hd == dj[b] && a < best_j[b])) dj[b] = hd, best_j[b] = a;
        }
        best_i[a] = bb;
    }
    int n = 0;
    for (int a = 0; a < fi->n; a++) {
        int b = best_i[a];
        if (b >= 0 && best_j[b] == a) m[n++] = (gt_calib_match){a, b, dj[b]};
    }
    free(best_i), free(best_j), free(dj), free(pu);
    return n;
}

static gt_status fit_pair(const gt_calib_feat *fi, const gt_calib_feat *fj, const gt_calib_match *m0, int nm0,
                          const gt_stitch_calib_opts *o, int w, int h, uint64_t seed, gt_calib_pair *p)
{
    p->matches = nm0;
    if (nm0 < 4) return GT_OK;
    /* a first model from the ratio-tested matches, then guided matching */
    gt_calib_ransac_opts ro = o->ransac;
    ro.seed = seed;
    {
        double *a = gt_malloc_array((size_t)nm0, 4 * sizeof(double), "pair points");
        if (!a) return GT_ERR_RUNTIME;
        for (int k = 0; k < nm0; k++) {
            a[2 * k] = fi->kp[m0[k].a].x, a[2 * k + 1] = fi->kp[m0[k].a].y;
            a[2 * (size_t)nm0 + 2 * k] = fj->kp[m0[k].b].x, a[2 * (size_t)nm0 + 2 * k + 1] = fj->kp[m0[k].b].y;
        }
        int ninl;
        gt_status rs = gt_calib_ransac(a, a + 2 * (size_t)nm0, nm0, &ro, p->H, NULL, &ninl);
        free(a);
        if (rs || ninl < 6) return GT_OK;
    }
    gt_calib_match *m = gt_malloc_array((size_t)fi->n + 1, sizeof *m, "guided matches");
    if (!m) return GT_ERR_RUNTIME;
    int nm = guided(fi, fj, p->H, 2 * ro.threshold, 64, m);
    if (nm < nm0) { /* keep the ratio-tested matches */
        memcpy(m, m0, (size_t)nm0 * sizeof *m);
        nm = nm0;
    }
    p->matches = nm;
    double *a = gt_malloc_array((size_t)nm, 4 * sizeof(double), "pair points");
    unsigned char *in = gt_malloc((size_t)nm, "pair inliers");
    if (!a || !in) {
        free(a), free(in), free(m);
        return GT_ERR_RUNTIME;
    }
    double *b = a + 2 * (size_t)nm;
    for (int k = 0; k < nm; k++) {
        a[2 * k] = fi->kp[m[k].a].x, a[2 * k + 1] = fi->kp[m[k].a].y;
        b[2 * k] = fj->kp[m[k].b].x, b[2 * k + 1] = fj->kp[m[k].b].y;
    }
    if (gt_calib_ransac(a, b, nm, &ro, p->H, in, &p->inliers) == GT_OK) {
        p->pa = malloc(sizeof(double) * 2 * (size_t)p->inliers + 1);
        p->pb = malloc(sizeof(double) * 2 * (size_t)p->inliers + 1);
        if (!p->pa || !p->pb) {
            free(a), free(in), free(m);
            return gt_fail(GT_ERR_RUNTIME, "out of memory (pair inliers)");
        }
        double se = 0, mx = 0;
        for (int k = 0; k < nm; k++)
            if (in[k]) {
                memcpy(p->pa + 2 * p->n, a + 2 * k, 2 * sizeof(double));
                memcpy(p->pb + 2 * p->n, b + 2 * k, 2 * sizeof(double));
                p->n++;
                double e = gt_calib_transfer(p->H, a + 2 * k, b + 2 * k);
                se += e * e;
                mx = fmax(mx, e);
            }
        p->rms = p->n ? sqrt(se / p->n) : 0;
        p->max = mx;
        p->used = sane(p->H, w, h);
    }
    free(a), free(in), free(m);
    return GT_OK;
}

/* after the dense refinement: the feature inliers' error under the final H
 * (for the report), then points of the overlap and their images as the
 * pair's correspondences for the global refinement */
static gt_status final_pair(gt_calib_pair *p, int w, int h)
{
    double se = 0, mx = 0;
    for (int k = 0; k < p->n; k++) {
        double e = gt_calib_transfer(p->H, p->pa + 2 * k, p->pb + 2 * k);
        se += e * e;
        mx = fmax(mx, e);
    }
    p->rms = p->n ? sqrt(se / p->n) : 0;
    p->max = mx;
    enum { G = 24 };
    double *a = malloc(sizeof(double) * 2 * G * G), *b = malloc(sizeof(double) * 2 * G * G);
    if (!a || !b) {
        free(a), free(b);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (pair points)");
    }
    int n = 0;
    for (int gy = 0; gy < G; gy++)
        for (int gx = 0; gx < G; gx++) {
            double x[2] = {(gx + 0.5) * (w - 1) / G, (gy + 0.5) * (h - 1) / G};
            double d = p->H[6] * x[0] + p->H[7] * x[1] + p->H[8];
            if (!(d > 0)) continue;
            double u = (p->H[0] * x[0] + p->H[1] * x[1] + p->H[2]) / d, v = (p->H[3] * x[0] + p->H[4] * x[1] + p->H[5]) / d;
            if (u < 0 || v < 0 || u > w - 1 || v > h - 1) continue;
            a[2 * n] = x[0], a[2 * n + 1] = x[1], b[2 * n] = u, b[2 * n + 1] = v;
            n++;
        }
    if (n < 8) { /* a sliver of overlap: keep the features */
        free(a), free(b);
        return GT_OK;
    }
    free(p->pa), free(p->pb);
    p->pa = a, p->pb = b, p->n = n;
    return GT_OK;
}

/* ------------------------------------------------------------ calibrate */

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
            fst[q] = fit_pair(&feat[res->pairs[q].i], &feat[res->pairs[q].j], mt[q], nm[q], o, w, h,
                              o->ransac.seed + 0x9E3779B97F4A7C15ull * (uint64_t)q, &res->pairs[q]);
        for (int q = 0; q < res->npairs && !st; q++)
            if (fst[q]) st = gt_fail(fst[q], "out of memory (pairs)");
    }
    double t3 = gt_now_ms();
    /* dense refinement of the accepted pairs (parallel inside) */
    for (int q = 0; q < res->npairs && !st; q++) {
        gt_calib_pair *p = &res->pairs[q];
        if (!p->used || !gt_calib_pair_ok(p, o->chain.min_inliers)) continue;
        double H[9];
        memcpy(H, p->H, sizeof H);
        if ((st = gt_calib_align(Y[p->i], Y[p->j], w, h, pitch, H, 30))) break;
        if (sane(H, w, h)) memcpy(p->H, H, sizeof H);
        st = final_pair(p, w, h);
    }
    free(luma);
    for (int i = 0; i < ncam; i++) gt_calib_feat_free(&feat[i]);
    double t4 = gt_now_ms();
    gt_info("calibrate: matching %.1f ms, RANSAC %.1f ms, dense refinement %.1f ms", t2 - t1, t3 - t2, t4 - t3);
    if (st) return st;
    double Hc[GT_STITCH_MAX_CAMS][9];
    res->reference = o->chain.reference >= 0 ? o->chain.reference : (ncam - 1) / 2;
    GT_TRY(gt_calib_chain(res->pairs, res->npairs, ncam, &o->chain, Hc));
    int ws[GT_STITCH_MAX_CAMS], hs[GT_STITCH_MAX_CAMS];
    for (int i = 0; i < ncam; i++) ws[i] = w, hs[i] = h;
    GT_TRY(gt_calib_frame(Hc, ncam, ws, hs, &o->chain, &res->rig));
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

/* ------------------------------------------------------------ the job */

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

static void report(FILE *f, const gt_stitch_calib_result *r, int ncam, bool placed)
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
    fprintf(f, "reference camera %d, panorama %dx%d\n", r->reference + 1, g->pano_w, g->pano_h);
    const char *nm[3] = {"Y", "U", "V"};
    for (int p = 0; p < 3; p++) {
        fprintf(f, "gains %s:", nm[p]);
        for (int i = 0; i < ncam; i++)
            fprintf(f, " %.4f", p == 0 ? g->cam[i].gain : p == 1 ? g->cam[i].gain_u : g->cam[i].gain_v);
        fprintf(f, "\n");
    }
}

/* stitched panorama (multi-band, CPU reference or GPU) as RGB with the
 * seams drawn in red */
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
        if (o->report && (res.npairs || placed)) report(o->report, &res, n, placed);
    }
    if (!st) {
        double t3 = gt_now_ms();
        gt_out out;
        st = gt_out_open(&out, o->out);
        if (!st) {
            fprintf(out.fp, "# yuvstitch --calibrate: %d cameras, reference camera %d\n", n, res.reference + 1);
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
