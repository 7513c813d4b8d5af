/* The gsrender --fit job: read the cameras, the photographs and the
 * scene to start from (a COLMAP capture, gs_capture.h: its views, its
 * photographs undistorted as they load, its points3D as the reference
 * starts from them; or a cameras.json, a folder of images and a PLY),
 * choose the device, train (gs_fit_loop.c) on the state of gs_fit_state.c,
 * write the refined scene, the cameras beside it, the log and the metrics.
 * The CPU path (--device cpu) is the same loop over gt_gs_backward_cpu. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/output.h"
#include "gs/gs_capture.h"
#include "gs/gs_fit_internal.h"

#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#endif

void gt_gs_fit_job_init(gt_gs_fit_job *j)
{
    memset(j, 0, sizeof *j);
    j->iterations = 0;
    j->test_every = -1;
    j->sh_max = 3;
    j->init = GT_GS_INIT_REFERENCE;
    j->sh_degree = -1;
    j->sh_start = -1;
    j->downscale = 0;
    j->lambda = GT_GS_LAMBDA_DSSIM;
    gt_gs_fit_rates_default(&j->rates);
    gt_gs_densify_opts_default(&j->densify);
    gt_gs_params_init(&j->render);
    j->device = GT_DEVICE_AUTO;
}

static gt_status read_scene(const char *path, gt_gs_raw *r)
{
    gt_gs_scene s;
    memset(&s, 0, sizeof s);
    gt_status st = gt_gs_scene_read(path, &s);
    if (st == GT_OK) st = gt_gs_raw_from_scene(&s, r);
    gt_gs_scene_free(&s);
    return st;
}

void gt_gs_fit_job_defaults(gt_gs_fit_job *j, bool no_densify)
{
    bool from_points = !j->cameras && !j->scene;
    if (j->iterations == 0) j->iterations = j->cameras ? 2000 : 30000;
    if (j->test_every < 0) j->test_every = j->cameras ? 0 : 8;
    if (from_points && j->sh_start < 0) j->sh_start = 0; /* the reference's schedule from points */
    if (!j->cameras && !no_densify && !j->densify.mcmc) j->densify.on = true;
}

/* Cameras, images and the starting scene of a cameras.json fit. */
static gt_status read_json_inputs(fit_ctx *c)
{
    const gt_gs_fit_job *j = c->j;
    if (j->downscale > 8)
        return gt_fail(GT_ERR_USAGE, "--resolution %d (a width in pixels) is for a COLMAP capture; with a "
                                     "cameras.json give 1, 2, 4 or 8", j->downscale);
    GT_TRY(gt_gs_cameras_read(j->cameras, &c->cams, &c->ncams));
    GT_TRY(gs_fit_split_views(c));
    GT_TRY(read_scene(j->scene, &c->raw));
    return gt_gs_fit_images_read(j->images, c->cams, c->ncams, j->render.bg, j->downscale, &c->img);
}

/* A COLMAP capture: its views in name order (the held-out ones every
 * test_every-th, as gs_fit_split_views counts them), its photographs (as
 * bytes for the GPU, which keeps them so; floats for the CPU), and the
 * Gaussians of its points3D unless a scene is given. */
static gt_status read_capture(fit_ctx *c, bool gpu)
{
    const gt_gs_fit_job *j = c->j;
    gt_gs_capture cap;
    gt_gs_capture_opts o;
    gt_gs_capture_opts_init(&o);
    o.resolution = j->downscale;
    o.test_every = j->test_every;
    GT_TRY(gt_gs_capture_open(j->images, &o, &cap));
    gt_status st = GT_OK;
    c->cams = malloc(sizeof *c->cams * (size_t)cap.nviews);
    if (!c->cams) st = gt_fail(GT_ERR_RUNTIME, "out of memory (cameras)");
    for (int i = 0; st == GT_OK && i < cap.nviews; i++) c->cams[i] = cap.views[i].cam;
    c->ncams = cap.nviews;
    if (st == GT_OK) st = gs_fit_split_views(c);
    int distorted = 0;
    for (int k = 0; k < cap.nlenses; k++) distorted += cap.lenses[k].distorted;
    if (st == GT_OK)
        gt_info("%s: %d views (%d camera model(s)%s), %zu points; images from %s", j->images, cap.nviews,
                cap.nlenses, distorted ? ", undistorted as they load" : "", cap.model.points.n, cap.image_dir);
    for (int k = 0; st == GT_OK && k < cap.nlenses; k++) {
        const gt_gs_capture_lens *L = &cap.lenses[k];
        if (!gt_gs_lens_rescaled(L)) continue;
        gt_notice("camera %u is %dx%d in the model but its photographs are %dx%d: trained at their size, its "
                  "intrinsics scaled, as the reference trainer and gsplat do", L->camera_id, L->colmap_width,
                  L->colmap_height, L->width, L->height);
        break;
    }
    if (st == GT_OK && cap.scaled > 0 && cap.auto_width)
        gt_notice("%d of %d photographs are wider than %d pixels: trained at %d wide, as the reference trainer "
                "does (-r 1 keeps their size)", cap.scaled, cap.nviews, cap.width_to, cap.width_to);
    else if (st == GT_OK && cap.scaled > 0)
        gt_info("%d of %d views scaled to %d pixels wide (-r %d)", cap.scaled, cap.nviews, cap.width_to,
                cap.width_to);
    if (st == GT_OK)
        st = j->scene ? read_scene(j->scene, &c->raw) : gt_gs_capture_init(&cap, j->sh_max, &j->init, &c->raw);
    if (st == GT_OK && gpu) st = gt_gs_capture_load_images(&cap, j->render.bg, GT_GS_PIX_U8, (void ***)&c->img8);
    else if (st == GT_OK) st = gt_gs_capture_load_images(&cap, j->render.bg, GT_GS_PIX_F32, (void ***)&c->img);
    gt_gs_capture_free(&cap);
    return st;
}

char *gt_gs_fit_beside(const char *out, const char *suffix)
{
    size_t l = strlen(out);
    if (l >= 4 && !strcmp(out + l - 4, ".ply")) l -= 4;
    char *p = malloc(l + strlen(suffix) + 1);
    if (p) memcpy(p, out, l), strcpy(p + l, suffix);
    return p;
}

/* The views as cameras.json beside OUT: all of them (OUT.cameras.json) and
 * the held-out ones (OUT.test.json), so that gsrender renders the result
 * from them (--view NAME, --view all). */
static gt_status write_cameras(const fit_ctx *c)
{
    const char *out = c->j->output;
    char *all = gt_gs_fit_beside(out, ".cameras.json"), *test = gt_gs_fit_beside(out, ".test.json");
    gt_gs_camera *held = malloc(sizeof *held * (size_t)(c->ntest ? c->ntest : 1));
    gt_status st = all && test && held ? GT_OK : gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int t = 0; st == GT_OK && t < c->ntest; t++) held[t] = c->cams[c->test[t]];
    if (st == GT_OK) st = gt_gs_cameras_write(all, c->cams, c->ncams);
    if (st == GT_OK && c->ntest) st = gt_gs_cameras_write(test, held, c->ntest);
    if (st == GT_OK)
        gt_info("cameras: %s (%d views)%s%s", all, c->ncams, c->ntest ? ", held out: " : "", c->ntest ? test : "");
    free(all), free(test), free(held);
    return st;
}

static gt_status run(fit_ctx *c, gt_gs_fit_result *res)
{
    const gt_gs_fit_job *j = c->j;
    gt_device_kind dev = GT_DEVICE_CPU;
    GT_TRY(gt_device_choose(j->device, j->gpu, &dev));
    c->gpu = dev == GT_DEVICE_CUDA;
#if !GT_HAVE_CUDA
    c->gpu = false;
#endif
    GT_TRY(j->cameras ? read_json_inputs(c) : read_capture(c, c->gpu));
    c->max_deg = c->raw.sh_degree;
    if (j->sh_degree >= 0 && j->sh_degree < c->max_deg) c->max_deg = j->sh_degree;
    c->sh_start = j->sh_start >= 0 ? j->sh_start : c->max_deg;
    for (int i = 0; i < c->ncams; i++) {
        if (c->cams[i].width > c->max_w) c->max_w = c->cams[i].width;
        if (c->cams[i].height > c->max_h) c->max_h = c->cams[i].height;
    }
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
    if (st == GT_OK && !j->cameras) st = write_cameras(c);
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
    if (!j->images || !j->output || (j->cameras && !j->scene))
        return gt_fail(GT_ERR_USAGE, "--fit needs a capture (or IMAGES, --cameras and a SCENE) and -o OUT");
    if (j->iterations < 1) return gt_fail(GT_ERR_USAGE, "--iterations must be at least 1");
    if (j->test_every < 0) return gt_fail(GT_ERR_USAGE, "--test-every must be 0 or more");
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
