/* gsrender: render a 3D Gaussian Splatting scene (the reference
 * rasterizer's forward pass) to PNG, a PNG sequence or a Y4M stream.
 * Options go into a gt_gs_job; lib/gs/gs_job.c does the work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/guard.h"
#include "common/log.h"
#include "common/trace.h"
#include "common/status.h"
#include "gs/gs.h"
#include "gs/gs_fit.h"

static const char *USAGE =
    "Usage: gsrender [options] SCENE -o OUT\n"
    "       gsrender --fit CAPTURE [options] [SCENE] -o OUT.ply\n"
    "Render a 3D Gaussian Splatting scene (the reference PLY of 3DGS training,\n"
    "or a .splat file) with the reference rasterizer's forward pass.\n"
    "\n"
    "Output:\n"
    "  -o, --output FILE       PNG for one view; for --orbit a pattern with one %d\n"
    "                          (frame_%04d.png), or a .y4m file, or - (Y4M on stdout);\n"
    "                          never an input\n"
    "      --out-format png|y4m  what OUT is (png: a view or pattern, y4m: an orbit\n"
    "                          stream), to write under a name whose extension says\n"
    "                          another format (refused otherwise)\n"
    "      --alpha             write RGBA PNGs (alpha = 1 - final transmittance)\n"
    "      --depth FILE        expected depth of one view: .pfm (float, metres of the\n"
    "                          scene) or .pgm (16-bit, 65535 = the largest depth)\n"
    "      --fps N             frame rate written to the Y4M header (default 30)\n"
    "      --png-level N       PNG compression 0..9: 0 stores, 1 (default) fastest\n"
    "                          (igzip in bands on all cores), 2..9 libdeflate's\n"
    "                          levels, mostly smaller files, slower\n"
    "Camera (one of):\n"
    "      --cameras FILE      cameras.json of the reference training\n"
    "      --view NAME|N|all   camera by img_name, else by index from 0 (default 0);\n"
    "                          all: every camera in order, a sequence written like\n"
    "                          an orbit's (a pattern, a .y4m file or -)\n"
    "      --eye X,Y,Z --target X,Y,Z [--up X,Y,Z] [--fovy DEG] [--size WxH]\n"
    "                          look-at camera (defaults: up 0,1,0, fovy 50, 1280x720)\n"
    "      --orbit N           N views on a circle around --target (default: the\n"
    "                          scene's centre, the median position), axis --up;\n"
    "                          with --cameras (a capture's): around the point they\n"
    "                          look at, at their median distance, height and fovy\n"
    "      --orbit-radius R    default 2.5 x the scene's radius (75th percentile of\n"
    "                          the distances to the centre)\n"
    "      --orbit-elevation D degrees above the orbit plane (default 20)\n"
    "      --frames A:B        render frames A to B-1 (from 0) of the orbit or of\n"
    "                          --view all's cameras, as the whole run does (A: to\n"
    "                          the end, :B from 0); slices joined\n"
    "                          (scripts/batch/join-parts) are the whole run\n"
    "  With none of these: orbit view 0 of the defaults.\n"
    "Rendering:\n"
    "      --background R,G,B  background colour in [0,1] (default 0,0,0)\n"
    "  -w, --white-background  the same as --background 1,1,1 (the reference's -w)\n"
    "      --sh-degree N       use SH up to degree N (0..3; default: the scene's)\n"
    "      --scale-modifier F  multiply every Gaussian's scale by F (default 1)\n"
    "      --antialias         Mip-Splatting/gsplat opacity-compensated 2-D filter\n"
    "                          (--antialiasing: the reference's name)\n"
    "      --tile-binning exact|square  GPU binning of Gaussians to 16x16 tiles: the\n"
    "                          tiles where alpha can reach 1/255 (default), or the\n"
    "                          reference's bounding square (same image, slower)\n"
    "      --sh-precision half|float  GPU: SH coefficients on the device as halves\n"
    "                          (default; half the bytes per frame, colours within\n"
    "                          ~1e-3) or floats\n"
    "Training from photographs (--fit; the reference training's loss, Adam and\n"
    "density control):\n"
    "      --fit CAPTURE       train on a COLMAP capture (CAPTURE/images/ and\n"
    "                          CAPTURE/sparse/0/ as the reference trainer and gsplat\n"
    "                          read them), from its points3D (or from SCENE when\n"
    "                          given); -o: the 3DGS PLY; its views are written\n"
    "                          beside it as OUT.cameras.json (all) and OUT.test.json\n"
    "                          (the held-out ones), which gsrender renders from;\n"
    "                          also a NeRF capture (transforms_train.json and\n"
    "                          transforms_test.json, the reference's Blender scenes,\n"
    "                          with -w for NeRF-synthetic; or nerfstudio's\n"
    "                          transforms.json)\n"
    "      --fit IMAGES --cameras FILE SCENE\n"
    "                          refine SCENE on the images of a cameras.json (PNG/\n"
    "                          JPEG named by img_name in IMAGES); the number of\n"
    "                          Gaussians fixed unless --densify or --mcmc\n"
    "      --iterations N      training iterations (default 30000 for a capture,\n"
    "                          2000 to refine a scene)\n"
    "      --log FILE          CSV: iteration,loss,l1,ssim,psnr,seconds,test_psnr,\n"
    "                          gaussians\n"
    "      --test-views LIST   hold out these cameras (img_names or indices, commas)\n"
    "      --test-every N      hold out every Nth view from 0 (views of a capture in\n"
    "                          name order; default 8 for a capture, as the\n"
    "                          reference's llffhold, else 0; 0: none)\n"
    "      --eval-every K      PSNR of the held-out views every K iterations (always\n"
    "                          at the start and the end)\n"
    "      --eval-at LIST      ... and at these iterations (e.g. 7000,30000)\n"
    "      --metrics FILE      CSV: iteration,view,psnr,ssim,gaussians of every\n"
    "                          held-out view at every evaluation, and their mean\n"
    "      --save-at LIST      write OUT-<iteration>.ply at these iterations\n"
    "      --seed S            seed of the camera order (default 0)\n"
    "  -r, --resolution F      cameras and images downscaled by F (1, 2, 4, 8;\n"
    "                          images_F/ of a capture when there), or to a width\n"
    "                          of F pixels (16 or more); default: a capture's\n"
    "                          photographs wider than 1600 are trained 1600 wide\n"
    "      --sh-start D        SH degree at the first iteration (default: 0 when\n"
    "                          training from a capture's points, the reference's\n"
    "                          schedule; else the scene's, as the reference starts a\n"
    "                          scene loaded from a PLY); one degree more every 1000\n"
    "                          iterations, up\n"
    "                          to the scene's, capped by --sh-degree\n"
    "      --position-lr-steps N  steps over which the position learning rate\n"
    "                          decays 1.6e-4 -> 1.6e-6 (x the scene extent; default\n"
    "                          30000, the reference's position_lr_max_steps)\n"
    "      --position-lr-init X, --position-lr-final X, --feature-lr X,\n"
    "      --feature-rest-lr X, --opacity-lr X, --scaling-lr X, --rotation-lr X\n"
    "                          Adam's learning rates (the reference's names and\n"
    "                          defaults: 1.6e-4, 1.6e-6, 0.0025, feature-lr/20,\n"
    "                          0.025, 0.005, 0.001)\n"
    "      --lambda-dssim X    weight of D-SSIM in the loss, (1 - X) L1 + X (1 - SSIM)\n"
    "                          (default 0.2, the reference's)\n"
    "      --densify           the reference's adaptive density control (the default\n"
    "                          for a capture; --no-densify: none): clone\n"
    "                          small and split large Gaussians whose mean screen\n"
    "                          gradient is at least the threshold, prune nearly\n"
    "                          transparent ones, reset opacities periodically\n"
    "      --densify-from-iter N (500), --densify-until-iter N (half of\n"
    "                          --iterations, at most 15000), --densification-interval N\n"
    "                          (100), --densify-grad-threshold X (0.0002),\n"
    "                          --percent-dense X (0.01), --opacity-reset-interval N\n"
    "                          (3000; 0: never), --min-opacity X (0.005)\n"
    "      --max-gaussians N   never grow beyond N Gaussians (the largest\n"
    "                          gradients densify first)\n"
    "      --mcmc              the MCMC strategy instead (Kheradmand et al. 2024,\n"
    "                          gsplat's MCMCStrategy): nearly transparent Gaussians\n"
    "                          relocated onto opaque ones and 5% growth every\n"
    "                          --densification-interval, position noise and\n"
    "                          opacity and scale regularisers every iteration\n"
    "      --cap-max N (1000000), --noise-lr X (5e5), --opacity-reg X (0.01),\n"
    "      --scale-reg X (0.01)  its count cap, noise and regularisers\n"
    "      --init-opacity X (0.1), --init-scale X (1)  the Gaussians made from the\n"
    "                          capture's points: their opacity, and their scale\n"
    "                          as a multiple of the distance to their 3 nearest\n"
    "                          neighbours (the reference's; gsplat's MCMC recipe:\n"
    "                          0.5 and 0.1)\n"
    "  --background is the render's and what image alpha is composited over.\n"
    "\n" GT_COMMON_HELP
    "\nExit status: 0 ok, 1 runtime error, 2 usage, 3 bad input data, 4 GPU error.\n";

enum {
    O_CAMERAS = GT_OPT_TOOL_BASE, O_VIEW, O_EYE, O_TARGET, O_UP, O_FOVY, O_SIZE, O_ORBIT, O_ORADIUS,
    O_OELEV, O_FRAMES, O_BG, O_SHDEG, O_SCALE, O_ALPHA, O_DEPTH, O_AA, O_FPS, O_BINNING, O_OUTFMT,
    O_FIT, O_ITERS, O_LOG, O_TESTV, O_TESTN, O_EVAL, O_SEED, O_SHSTART, O_PNGLEVEL, O_SHPREC, O_POSSTEPS,
    O_LR_POS0, O_LR_POS1, O_LR_FEAT, O_LR_REST, O_LR_OPAC, O_LR_SCALE, O_LR_ROT, O_DENS, O_DENS_FROM,
    O_DENS_UNTIL, O_DENS_EVERY, O_DENS_GRAD, O_DENS_PCT, O_DENS_RESET, O_DENS_MINOP, O_DENS_MAX, O_MCMC,
    O_MCMC_NOISE, O_MCMC_OPREG, O_MCMC_SCREG, O_METRICS, O_EVAL_AT, O_SAVE_AT, O_NO_DENS, O_LAMBDA,
    O_INIT_OPA, O_INIT_SCALE
};

static bool no_densify; /* --no-densify */

/* --eval-at / --save-at: iterations separated by commas. */
static gt_status parse_iterations(const char *opt, const char *arg, int *out, int *n)
{
    *n = 0;
    const char *s = arg;
    while (*s) {
        char item[24];
        size_t l = strcspn(s, ",");
        if (l == 0 || l >= sizeof item) return gt_usage_error("%s '%s': give iterations separated by commas", opt, arg);
        if (*n >= GT_GS_FIT_MAX_AT) return gt_usage_error("%s '%s': at most %d iterations", opt, arg, GT_GS_FIT_MAX_AT);
        memcpy(item, s, l), item[l] = 0;
        GT_TRY(gt_parse_int(opt, item, 1, 100000000, &out[(*n)++]));
        s += l + (s[l] == ',');
    }
    return *n ? GT_OK : gt_usage_error("%s: give at least one iteration", opt);
}

/* --frames A:B, A: or :B (frames A to B-1; a missing A is 0, a missing B the
 * orbit's end); the job checks the range against --orbit. */
static gt_status parse_frames(gt_gs_job *j, const char *arg)
{
    const char *colon = strchr(arg, ':');
    if (!colon || !strcmp(arg, ":") || strchr(colon + 1, ':'))
        return gt_usage_error("--frames '%s': give A:B (frames A to B-1 from 0), A: or :B", arg);
    char a[32] = "0";
    size_t na = (size_t)(colon - arg);
    if (na >= sizeof a) return gt_usage_error("--frames '%s': give A:B with whole numbers A < B", arg);
    if (na) memcpy(a, arg, na), a[na] = 0;
    j->frame_end = -1;
    if (gt_parse_int("--frames", a, 0, 1000000, &j->frame_first) != GT_OK ||
        (colon[1] && gt_parse_int("--frames", colon + 1, 0, 1000000, &j->frame_end) != GT_OK))
        return gt_usage_error("--frames '%s': give A:B with whole numbers 0 <= A < B", arg);
    if (j->frame_end >= 0 && j->frame_end <= j->frame_first)
        return gt_usage_error("--frames '%s': an empty range (A:B renders frames A to B-1; B > A)", arg);
    j->have_frames = true;
    return GT_OK;
}

/* --fit's options into the fit job (true when c is one of them). */
static bool set_fit_option(gt_gs_fit_job *f, int c, const char *arg, gt_status *st)
{
    long seed = 0;
    switch (c) {
    case O_FIT: *st = gt_parse_path_once("--fit", arg, &f->images); return true;
    case O_ITERS: *st = gt_parse_int("--iterations", arg, 1, 100000000, &f->iterations); return true;
    case O_LOG: *st = gt_parse_path_once("--log", arg, &f->log); return true;
    case O_METRICS: *st = gt_parse_path_once("--metrics", arg, &f->metrics); return true;
    case O_EVAL_AT: *st = parse_iterations("--eval-at", arg, f->eval_at, &f->n_eval_at); return true;
    case O_SAVE_AT: *st = parse_iterations("--save-at", arg, f->save_at, &f->n_save_at); return true;
    case O_TESTV: f->test_views = arg; return true;
    case O_TESTN: *st = gt_parse_int("--test-every", arg, 0, 1000000, &f->test_every); return true;
    case O_EVAL: *st = gt_parse_int("--eval-every", arg, 1, 100000000, &f->eval_every); return true;
    case O_SHSTART: *st = gt_parse_int("--sh-start", arg, 0, 3, &f->sh_start); return true;
    case O_POSSTEPS:
        *st = gt_parse_int("--position-lr-steps", arg, 1, 100000000, &f->rates.pos_steps);
        return true;
    case O_LR_POS0: *st = gt_parse_double("--position-lr-init", arg, 0, 1, &f->rates.pos_init); return true;
    case O_LR_POS1: *st = gt_parse_double("--position-lr-final", arg, 0, 1, &f->rates.pos_final); return true;
    case O_LR_FEAT: *st = gt_parse_double("--feature-lr", arg, 0, 1, &f->rates.sh_dc); return true;
    case O_LR_REST: *st = gt_parse_double("--feature-rest-lr", arg, 1e-30, 1, &f->rates.sh_rest); return true;
    case O_LR_OPAC: *st = gt_parse_double("--opacity-lr", arg, 0, 1, &f->rates.opacity); return true;
    case O_LR_SCALE: *st = gt_parse_double("--scaling-lr", arg, 0, 1, &f->rates.scale); return true;
    case O_LR_ROT: *st = gt_parse_double("--rotation-lr", arg, 0, 1, &f->rates.rot); return true;
    case O_LAMBDA: *st = gt_parse_double("--lambda-dssim", arg, 0, 1, &f->lambda); return true;
    case O_INIT_OPA:
        *st = gt_parse_double("--init-opacity", arg, 1e-6, 1 - 1e-6, &f->init.opacity);
        return true;
    case O_INIT_SCALE:
        *st = gt_parse_double("--init-scale", arg, 1e-6, 1e6, &f->init.scale);
        return true;
    case O_DENS: f->densify.on = true; return true;
    case O_NO_DENS: no_densify = true; return true;
    case O_DENS_FROM:
        *st = gt_parse_int("--densify-from-iter", arg, 0, 100000000, &f->densify.from_iter);
        return true;
    case O_DENS_UNTIL:
        *st = gt_parse_int("--densify-until-iter", arg, 0, 100000000, &f->densify.until_iter);
        return true;
    case O_DENS_EVERY:
        *st = gt_parse_int("--densification-interval", arg, 1, 100000000, &f->densify.interval);
        return true;
    case O_DENS_GRAD:
        *st = gt_parse_double("--densify-grad-threshold", arg, 0, 1e30, &f->densify.grad_threshold);
        return true;
    case O_DENS_PCT: *st = gt_parse_double("--percent-dense", arg, 0, 1e30, &f->densify.percent_dense); return true;
    case O_DENS_RESET:
        *st = gt_parse_int("--opacity-reset-interval", arg, 0, 100000000, &f->densify.opacity_reset);
        return true;
    case O_DENS_MINOP: *st = gt_parse_double("--min-opacity", arg, 0, 1, &f->densify.min_opacity); return true;
    case O_MCMC: f->densify.mcmc = true; return true;
    case O_MCMC_NOISE: *st = gt_parse_double("--noise-lr", arg, 0, 1e30, &f->densify.noise_lr); return true;
    case O_MCMC_OPREG: *st = gt_parse_double("--opacity-reg", arg, 0, 1e30, &f->densify.opacity_reg); return true;
    case O_MCMC_SCREG: *st = gt_parse_double("--scale-reg", arg, 0, 1e30, &f->densify.scale_reg); return true;
    case O_DENS_MAX: {
        long mx = 0;
        *st = gt_parse_long(c == O_DENS_MAX ? "--max-gaussians" : "--cap-max", arg, 1, 4294967295L, &mx);
        f->densify.max_gaussians = (size_t)mx;
        return true;
    }
    case O_SEED:
        *st = gt_parse_long("--seed", arg, 0, 2147483647L, &seed);
        f->seed = (uint64_t)seed;
        return true;
    case 'r':
        *st = gt_parse_int("--resolution", arg, 1, GT_GS_MAX_SIZE, &f->downscale);
        if (*st == GT_OK && f->downscale < 16 && (f->downscale > 8 || (f->downscale & (f->downscale - 1))))
            *st = gt_usage_error("--resolution %s: give 1, 2, 4 or 8 (a factor), or a width of 16 pixels or more",
                                 arg);
        return true;
    }
    return false;
}

/* gsrender --fit: the render options that apply (cameras, background, SH
 * degree cap, antialias, device) into the fit job, the others refused. */
static int run_fit(gt_gs_fit_job *f, const gt_gs_job *j, bool fit_opts_only_set)
{
    if (!f->images) {
        if (fit_opts_only_set)
            return gt_report(gt_usage_error("--iterations, --log, --test-views, --test-every, --eval-every, --seed, "
                                            "--sh-start, the learning rates, the densification options and -r go "
                                            "with --fit"));
        return -1;
    }
    if (j->orbit || j->view || j->have_eye || j->have_target || j->depth || j->alpha || j->have_frames ||
        j->have_size || j->render.scale_modifier != 1.0f)
        return gt_report(gt_usage_error("--fit trains against the cameras of --cameras: --view, --orbit, --eye, "
                                        "--target, --size, --frames, --depth, --alpha and --scale-modifier do "
                                        "not apply"));
    if (j->cameras && !j->scene)
        return gt_report(gt_usage_error("--fit IMAGES --cameras FILE refines a SCENE: give its PLY (a COLMAP "
                                        "capture needs no --cameras)"));
    gt_gs_densify_opts dd, *fd = &f->densify;
    gt_gs_densify_opts_default(&dd);
    if (fd->on && fd->mcmc) return gt_report(gt_usage_error("--densify or --mcmc: one densification strategy"));
    if (no_densify && (fd->on || fd->mcmc))
        return gt_report(gt_usage_error("--no-densify with --%s: one or the other", fd->on ? "densify" : "mcmc"));
    f->cameras = j->cameras;
    f->scene = j->scene;
    gt_gs_fit_job_defaults(f, no_densify);
    if (!fd->on && !fd->mcmc &&
        (fd->from_iter != dd.from_iter || fd->until_iter != dd.until_iter || fd->interval != dd.interval ||
         fd->min_opacity != dd.min_opacity || fd->max_gaussians != dd.max_gaussians))
        return gt_report(gt_usage_error("--densify-from-iter, --densify-until-iter, --densification-interval, "
                                        "--min-opacity and --max-gaussians (--cap-max) go with --densify or --mcmc"));
    if (!fd->on && (fd->grad_threshold != dd.grad_threshold || fd->percent_dense != dd.percent_dense ||
                    fd->opacity_reset != dd.opacity_reset))
        return gt_report(gt_usage_error("--densify-grad-threshold, --percent-dense and --opacity-reset-interval "
                                        "go with --densify"));
    if (!fd->mcmc && (fd->noise_lr != dd.noise_lr || fd->opacity_reg != dd.opacity_reg ||
                      fd->scale_reg != dd.scale_reg))
        return gt_report(gt_usage_error("--noise-lr, --opacity-reg and --scale-reg go with --mcmc"));
    if (j->scene && (f->init.opacity != GT_GS_INIT_OPACITY || f->init.scale != GT_GS_INIT_SCALE))
        return gt_report(gt_usage_error("--init-opacity and --init-scale set the Gaussians made from a capture's "
                                        "points: not with a SCENE to start from"));
    if ((f->rates.pos_init == 0) != (f->rates.pos_final == 0))
        return gt_report(gt_usage_error("--position-lr-init and --position-lr-final: both 0 (positions fixed) or "
                                        "both above 0 (the rate decays log-linearly between them)"));
    f->output = j->output;
    f->render = j->render;
    f->sh_degree = j->render.sh_degree;
    f->device = j->device;
    f->gpu = j->gpu;
    f->timings = j->timings;
    gt_guard g;
    gt_guard_init(&g);
    gt_guard_input(&g, f->scene, "the scene");
    gt_guard_input(&g, f->cameras, "--cameras");
    gt_guard_output(&g, f->output, "-o", "ply", NULL);
    gt_guard_output(&g, f->log, "--log", NULL, NULL);
    gt_guard_output(&g, f->metrics, "--metrics", NULL, NULL);
    /* what the fit writes beside OUT: a capture's views, the --save-at PLYs */
    char *beside[2 + GT_GS_FIT_MAX_AT] = {NULL};
    int nb = 0;
    if (!f->cameras) {
        beside[nb++] = gt_gs_fit_beside(f->output, ".cameras.json");
        beside[nb++] = gt_gs_fit_beside(f->output, ".test.json");
    }
    for (int k = 0; k < f->n_save_at; k++) {
        char suffix[24];
        snprintf(suffix, sizeof suffix, "-%d.ply", f->save_at[k]);
        beside[nb++] = gt_gs_fit_beside(f->output, suffix);
    }
    for (int k = 0; k < nb; k++) gt_guard_output(&g, beside[k], k < 2 && !f->cameras ? "-o's cameras" : "--save-at",
                                                 NULL, NULL);
    gt_status st = gt_guard_check(&g);
    for (int k = 0; k < nb; k++) free(beside[k]);
    gt_guard_free(&g);
    if (st == GT_OK) st = gt_gs_fit_run(f, NULL);
    gt_device_shutdown();
    return gt_report(st);
}

/* One of gsrender's own options into the job. */
static gt_status set_option(gt_gs_job *j, int c, const char *arg)
{
    gt_status st = GT_OK;
    double v3[3];
    switch (c) {
    case 'o': st = gt_parse_path_once("-o", arg, &j->output); break;
    case O_CAMERAS: st = gt_parse_path_once("--cameras", arg, &j->cameras); break;
    case O_VIEW: j->view = arg; break;
    case O_EYE: st = gt_parse_vec("--eye", arg, 3, j->eye), j->have_eye = true; break;
    case O_TARGET: st = gt_parse_vec("--target", arg, 3, j->target), j->have_target = true; break;
    case O_UP: st = gt_parse_vec("--up", arg, 3, j->up), j->have_up = true; break;
    case O_FOVY: st = gt_parse_double("--fovy", arg, 1e-3, 179.0, &j->fovy), j->have_fovy = true; break;
    case O_SIZE:
        st = gt_parse_wxh("--size", arg, GT_GS_MAX_SIZE, &j->width, &j->height), j->have_size = true;
        break;
    case O_ORBIT: st = gt_parse_int("--orbit", arg, 1, 1000000, &j->orbit); break;
    case O_ORADIUS:
        st = gt_parse_double("--orbit-radius", arg, 1e-9, 1e12, &j->orbit_radius), j->have_radius = true;
        break;
    case O_OELEV:
        st = gt_parse_double("--orbit-elevation", arg, -89.9, 89.9, &j->orbit_elevation), j->have_elevation = true;
        break;
    case O_FRAMES: st = parse_frames(j, arg); break;
    case O_BG:
        st = gt_parse_vec("--background", arg, 3, v3);
        for (int k = 0; k < 3 && st == GT_OK; k++) {
            if (v3[k] < 0 || v3[k] > 1)
                st = gt_usage_error("--background '%s': components must be in [0, 1]", arg);
            j->render.bg[k] = (float)v3[k];
        }
        break;
    case O_SHDEG: st = gt_parse_int("--sh-degree", arg, 0, 3, &j->render.sh_degree); break;
    case O_SCALE: {
        double d;
        st = gt_parse_double("--scale-modifier", arg, 1e-6, 1e6, &d);
        j->render.scale_modifier = (float)d;
        break;
    }
    case O_ALPHA: j->alpha = true; break;
    case O_DEPTH: st = gt_parse_path_once("--depth", arg, &j->depth); break;
    case O_AA: j->render.antialias = true; break;
    case 'w': j->render.bg[0] = j->render.bg[1] = j->render.bg[2] = 1.0f; break;
    case O_FPS: st = gt_parse_int("--fps", arg, 1, 1000, &j->fps); break;
    case O_PNGLEVEL: st = gt_parse_int("--png-level", arg, 0, 9, &j->png_level); break;
    case O_BINNING: {
        static const char *const names[] = {"exact", "square"};
        int k = 0;
        st = gt_parse_enum("--tile-binning", arg, names, 2, &k);
        j->render.square_binning = k == 1;
        break;
    }
    case O_SHPREC: {
        static const char *const names[] = {"half", "float"};
        int k = 0;
        st = gt_parse_enum("--sh-precision", arg, names, 2, &k);
        j->render.sh_half = k == 0;
        break;
    }
    default: st = gt_usage_error("try 'gsrender --help'");
    }
    return st;
}

/* Before any work: no output (each frame of a pattern, --depth) replaces an
 * input or another output, directories exist, names fit what is written. */
static gt_status check_paths(const gt_gs_job *j, int outfmt)
{
    bool pat = false, seq = j->orbit || gt_gs_job_all_views(j);
    if (seq) gt_gs_frame_pattern(j->output, &pat);
    bool y4m = seq && !pat;
    if (outfmt >= 0 && outfmt != (y4m ? 1 : 0))
        return gt_usage_error("--out-format %s: this command writes %s", outfmt ? "y4m" : "png",
                              y4m ? "a Y4M stream (png is for a view or a frame pattern)"
                                  : "PNG (y4m is for an --orbit or --view all stream)");
    int total = j->orbit;
    if (pat && !j->orbit) { /* --view all: the frames are the cameras */
        gt_gs_camera *cams = NULL;
        gt_status st = gt_gs_cameras_read(j->cameras, &cams, &total);
        free(cams);
        if (st != GT_OK) return st;
    }
    const char *fmt = outfmt >= 0 ? NULL : y4m ? "y4m" : "png";
    gt_guard g;
    gt_guard_init(&g);
    gt_guard_input(&g, j->scene, "the scene");
    gt_guard_input(&g, j->cameras, "--cameras");
    if (pat) {
        char path[4096];
        int first = 0, end = 0; /* no cameras: the job says so */
        if (total > 0) GT_TRY(gt_gs_job_frames(j, total, &first, &end));
        for (int f = first; f < end; f++) {
            snprintf(path, sizeof path, j->output, f);
            gt_guard_output(&g, path, "-o", fmt, "--out-format");
        }
    } else {
        gt_guard_output(&g, j->output, "-o", fmt, "--out-format");
    }
    size_t dl = j->depth ? strlen(j->depth) : 0;
    gt_guard_output(&g, j->depth, "--depth", dl >= 4 && !strcasecmp(j->depth + dl - 4, ".pfm") ? "pfm" : "pgm", NULL);
    gt_status st = gt_guard_check(&g);
    gt_guard_free(&g);
    return st;
}

int main(int argc, char **argv)
{
    gt_set_progname("gsrender");
    gt_trace("main entry");
    gt_gs_job j;
    gt_gs_job_init(&j);
    gt_common_opts co;
    gt_common_opts_init(&co);
    int outfmt = -1; /* --out-format: -1 from the name, 0 png, 1 y4m */
    gt_gs_fit_job fit; /* --fit */
    gt_gs_fit_job_init(&fit);
    bool fit_opts = false;
    static const struct option lo[] = {
        {"output", required_argument, 0, 'o'},
        {"cameras", required_argument, 0, O_CAMERAS},
        {"view", required_argument, 0, O_VIEW},
        {"eye", required_argument, 0, O_EYE},
        {"target", required_argument, 0, O_TARGET},
        {"up", required_argument, 0, O_UP},
        {"fovy", required_argument, 0, O_FOVY},
        {"size", required_argument, 0, O_SIZE},
        {"orbit", required_argument, 0, O_ORBIT},
        {"orbit-radius", required_argument, 0, O_ORADIUS},
        {"orbit-elevation", required_argument, 0, O_OELEV},
        {"frames", required_argument, 0, O_FRAMES},
        {"background", required_argument, 0, O_BG},
        {"sh-degree", required_argument, 0, O_SHDEG},
        {"scale-modifier", required_argument, 0, O_SCALE},
        {"alpha", no_argument, 0, O_ALPHA},
        {"depth", required_argument, 0, O_DEPTH},
        {"antialias", no_argument, 0, O_AA},
        {"antialiasing", no_argument, 0, O_AA},
        {"white-background", no_argument, 0, 'w'},
        {"fps", required_argument, 0, O_FPS},
        {"png-level", required_argument, 0, O_PNGLEVEL},
        {"tile-binning", required_argument, 0, O_BINNING},
        {"sh-precision", required_argument, 0, O_SHPREC},
        {"out-format", required_argument, 0, O_OUTFMT},
        {"fit", required_argument, 0, O_FIT},
        {"iterations", required_argument, 0, O_ITERS},
        {"log", required_argument, 0, O_LOG},
        {"metrics", required_argument, 0, O_METRICS},
        {"eval-at", required_argument, 0, O_EVAL_AT},
        {"save-at", required_argument, 0, O_SAVE_AT},
        {"test-views", required_argument, 0, O_TESTV},
        {"test-every", required_argument, 0, O_TESTN},
        {"eval-every", required_argument, 0, O_EVAL},
        {"seed", required_argument, 0, O_SEED},
        {"sh-start", required_argument, 0, O_SHSTART},
        {"position-lr-steps", required_argument, 0, O_POSSTEPS},
        {"position-lr-init", required_argument, 0, O_LR_POS0},
        {"position-lr-final", required_argument, 0, O_LR_POS1},
        {"feature-lr", required_argument, 0, O_LR_FEAT},
        {"feature-rest-lr", required_argument, 0, O_LR_REST},
        {"densify", no_argument, 0, O_DENS},
        {"no-densify", no_argument, 0, O_NO_DENS},
        {"densify-from-iter", required_argument, 0, O_DENS_FROM},
        {"densify-until-iter", required_argument, 0, O_DENS_UNTIL},
        {"densification-interval", required_argument, 0, O_DENS_EVERY},
        {"densify-grad-threshold", required_argument, 0, O_DENS_GRAD},
        {"percent-dense", required_argument, 0, O_DENS_PCT},
        {"opacity-reset-interval", required_argument, 0, O_DENS_RESET},
        {"min-opacity", required_argument, 0, O_DENS_MINOP},
        {"max-gaussians", required_argument, 0, O_DENS_MAX},
        {"cap-max", required_argument, 0, O_DENS_MAX},
        {"mcmc", no_argument, 0, O_MCMC},
        {"noise-lr", required_argument, 0, O_MCMC_NOISE},
        {"opacity-reg", required_argument, 0, O_MCMC_OPREG},
        {"scale-reg", required_argument, 0, O_MCMC_SCREG},
        {"opacity-lr", required_argument, 0, O_LR_OPAC},
        {"scaling-lr", required_argument, 0, O_LR_SCALE},
        {"rotation-lr", required_argument, 0, O_LR_ROT},
        {"lambda-dssim", required_argument, 0, O_LAMBDA},
        {"init-opacity", required_argument, 0, O_INIT_OPA},
        {"init-scale", required_argument, 0, O_INIT_SCALE},
        {"resolution", required_argument, 0, 'r'},
        GT_COMMON_LONGOPTS,
        {0, 0, 0, 0}};
    int c;
    gt_status st = GT_OK;
    while (st == GT_OK && (c = getopt_long(argc, argv, "o:r:w" GT_COMMON_SHORTOPTS, lo, NULL)) != -1) {
        gt_cli_result cr = gt_common_option(&co, c, optarg);
        if (cr == GT_CLI_HANDLED) continue;
        if (cr == GT_CLI_EXIT_OK) return 0;
        if (cr == GT_CLI_ERROR) return gt_report(GT_ERR_USAGE);
        if (c == 'h') {
            fputs(USAGE, stdout);
            return 0;
        }
        if (c == O_OUTFMT) {
            static const char *const names[] = {"png", "y4m"};
            st = gt_parse_enum("--out-format", optarg, names, 2, &outfmt);
            continue;
        }
        if (set_fit_option(&fit, c, optarg, &st)) {
            fit_opts = true;
            continue;
        }
        st = set_option(&j, c, optarg);
    }
    if (st != GT_OK) return gt_report(st);
    bool capture = fit.images && !j.cameras; /* --fit CAPTURE: the scene to start from is optional */
    if (optind + 1 < argc || (optind + 1 != argc && !capture))
        return gt_report(gt_usage_error(optind >= argc ? "missing SCENE (try 'gsrender --help')"
                                                       : "one SCENE expected (try 'gsrender --help')"));
    j.scene = optind < argc ? argv[optind] : NULL;
    if (!j.output) return gt_report(gt_usage_error("missing -o OUT (try 'gsrender --help')"));
    j.device = co.device;
    j.gpu = co.gpu;
    j.timings = co.timings;
    int fit_rc = run_fit(&fit, &j, fit_opts);
    if (fit_rc >= 0) return fit_rc;
    st = gt_gs_job_check(&j); /* a valid pattern before the guard expands it */
    if (st == GT_OK) st = check_paths(&j, outfmt);
    if (st != GT_OK) return gt_report(st);
    /* the job checks the options that go together (gt_gs_job_check) first */
    st = j.orbit ? gt_gs_render_orbit(&j) : gt_gs_render_view(&j);
    gt_device_shutdown();
    return gt_report(st);
}
