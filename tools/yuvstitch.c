/* yuvstitch: stitch N camera streams into one panorama (perspective warp,
 * direct / feather / multi-band blending in YUV), on the GPU or the CPU. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/guard.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/status.h"
#include "common/timer.h"
#include "io/image.h"
#include "io/yuv.h"
#include "stitch/calib.h"
#include "stitch/stitch.h"

static const char *usage_text =
    "Usage: yuvstitch --rig RIG [options] IN_1 ... IN_N -o OUT\n"
    "       yuvstitch --calibrate [options] CAM_1 ... CAM_N -o RIG\n"
    "Stitch N camera streams (raw YUV or Y4M; files, FIFOs or '-') into one\n"
    "panorama stream, warping each through its homography and blending in YUV;\n"
    "or calibrate the rig file from one synchronised frame per camera.\n"
    "\n"
    "Input and output:\n"
    "  -r, --rig RIG           rig file: panorama size, per camera H (camera->panorama),\n"
    "                          optional mask PNG and gain (see yuvstitch(1))\n"
    "  -s, --size WxH          size of raw inputs\n"
    "  -f, --pix-fmt FMT       raw input format: yuyv422, uyvy422, yuv420p, nv12, yuv422p\n"
    "  -o, --output OUT        output stream ('-' for stdout); never an input\n"
    "      --out-format raw|y4m  output container (default: y4m for OUT ending in .y4m,\n"
    "                          raw for .yuv or .raw, else y4m when an input is Y4M);\n"
    "                          also to write under a name that says another format\n"
    "  -n, --frames N          stop after N frames\n"
    "      --strict            an input that ends before the others is an error\n"
    "                          (default: stop cleanly at the shortest stream)\n"
    "\n"
    "Blending:\n"
    "  -b, --blend MODE        none, feather or multiband (default multiband)\n"
    "      --bands N           multi-band levels, 1..12 (default 5)\n"
    "      --feather-alpha A   feather ramp slope, weight = min(1, A*distance)\n"
    "                          (default 0.01: a 100-pixel ramp)\n"
    "\n"
    "Inspection:\n"
    "      --preview PNG       write the first stitched frame as an RGB PNG\n"
    "      --matrix bt601|bt709  preview colour matrix (default bt601)\n"
    "      --range limited|full  preview input range (default limited)\n"
    "      --save-masks DIR    write the seam masks (mask_<i>.png, 255 = owned) to DIR\n"
    "      --gain-update N     re-estimate the gains every N frames from the overlaps\n"
    "                          (cameras with auto-exposure), each step half-way\n"
    "\n"
    "Calibration (--calibrate; inputs PNG/JPEG, Y4M or raw YUV with --size/--pix-fmt):\n"
    "      --calibrate         write the rig (homographies, panorama size, gains) to -o\n"
    "      --reference N       camera whose view the panorama keeps (default: the middle)\n"
    "      --frame K           frame of video inputs to use (default 0, the first)\n"
    "      --preview PNG       the stitched panorama with the seams in red\n"
    "      --features N        features per camera (default 2000)\n"
    "      --min-inliers N     inliers a pair needs (default 20)\n"
    "      --seed S            RANSAC seed (default 1; the same seed, the same rig)\n"
    "      --global-refine     refine all overlapping pairs together (rotating rigs)\n"
    "      --no-gains          write gains of 1\n"
    "\n" GT_COMMON_HELP;

enum {
    OPT_OUTFMT = GT_OPT_TOOL_BASE,
    OPT_STRICT,
    OPT_BANDS,
    OPT_ALPHA,
    OPT_PREVIEW,
    OPT_MATRIX,
    OPT_RANGE,
    OPT_SAVEMASKS,
    OPT_GAINUPD,
    OPT_CALIBRATE,
    OPT_REFERENCE,
    OPT_FRAME,
    OPT_FEATURES,
    OPT_MININL,
    OPT_SEED,
    OPT_GLOBAL,
    OPT_NOGAINS,
};

typedef struct {
    const char *rig, *out, *preview, *save_masks;
    int w, h, fmt, out_y4m; /* out_y4m: -1 auto */
    long frames;
    bool strict;
    int gain_update;
    bool calibrate;
    gt_stitch_calib_opts cal;
    gt_stitch_plan_opts po;
    int matrix, range;
    gt_common_opts common;
    char **inputs;
    int ninputs;
} opts_t;

static gt_status parse(int argc, char **argv, opts_t *o, bool *exit_ok)
{
    static const struct option lo[] = {
        {"rig", required_argument, 0, 'r'},
        {"size", required_argument, 0, 's'},
        {"pix-fmt", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},
        {"out-format", required_argument, 0, OPT_OUTFMT},
        {"frames", required_argument, 0, 'n'},
        {"strict", no_argument, 0, OPT_STRICT},
        {"blend", required_argument, 0, 'b'},
        {"bands", required_argument, 0, OPT_BANDS},
        {"feather-alpha", required_argument, 0, OPT_ALPHA},
        {"preview", required_argument, 0, OPT_PREVIEW},
        {"matrix", required_argument, 0, OPT_MATRIX},
        {"range", required_argument, 0, OPT_RANGE},
        {"save-masks", required_argument, 0, OPT_SAVEMASKS},
        {"gain-update", required_argument, 0, OPT_GAINUPD},
        {"calibrate", no_argument, 0, OPT_CALIBRATE},
        {"reference", required_argument, 0, OPT_REFERENCE},
        {"frame", required_argument, 0, OPT_FRAME},
        {"features", required_argument, 0, OPT_FEATURES},
        {"min-inliers", required_argument, 0, OPT_MININL},
        {"seed", required_argument, 0, OPT_SEED},
        {"global-refine", no_argument, 0, OPT_GLOBAL},
        {"no-gains", no_argument, 0, OPT_NOGAINS},
        GT_COMMON_LONGOPTS,
        {0, 0, 0, 0},
    };
    static const char *blends[] = {"none", "feather", "multiband"};
    static const char *outfmts[] = {"raw", "y4m"};
    static const char *matrices[] = {"bt601", "bt709"};
    static const char *ranges[] = {"limited", "full"};
    memset(o, 0, sizeof *o);
    o->fmt = -1;
    o->out_y4m = -1;
    o->frames = -1;
    gt_stitch_plan_opts_init(&o->po);
    gt_stitch_calib_opts_init(&o->cal);
    gt_common_opts_init(&o->common);
    *exit_ok = false;
    int c, v;
    double d;
    while ((c = getopt_long(argc, argv, "r:s:f:o:n:b:" GT_COMMON_SHORTOPTS, lo, NULL)) != -1) {
        switch (gt_common_option(&o->common, c, optarg)) {
        case GT_CLI_HANDLED: continue;
        case GT_CLI_EXIT_OK: *exit_ok = true; return GT_OK;
        case GT_CLI_ERROR: return GT_ERR_USAGE;
        default: break;
        }
        switch (c) {
        case 'h': fputs(usage_text, stdout); *exit_ok = true; return GT_OK;
        case 'r': GT_TRY(gt_parse_path_once("--rig", optarg, &o->rig)); break;
        case 's': GT_TRY(gt_parse_wxh("--size", optarg, 65536, &o->w, &o->h)); break;
        case 'f': {
            gt_pixfmt f;
            GT_TRY(gt_pixfmt_parse("--pix-fmt", optarg, &f));
            o->fmt = (int)f;
            break;
        }
        case 'o': GT_TRY(gt_parse_path_once("-o", optarg, &o->out)); break;
        case OPT_OUTFMT: GT_TRY(gt_parse_enum("--out-format", optarg, outfmts, 2, &o->out_y4m)); break;
        case 'n': GT_TRY(gt_parse_long("--frames", optarg, 0, 1L << 40, &o->frames)); break;
        case OPT_STRICT: o->strict = true; break;
        case 'b': GT_TRY(gt_parse_enum("--blend", optarg, blends, 3, &v)); o->po.blend = (gt_blend_mode)v; break;
        case OPT_BANDS: GT_TRY(gt_parse_int("--bands", optarg, 1, GT_STITCH_MAX_BANDS, &o->po.bands)); break;
        case OPT_ALPHA:
            GT_TRY(gt_parse_double("--feather-alpha", optarg, 1e-6, 1e6, &d));
            o->po.feather_alpha = (float)d;
            break;
        case OPT_PREVIEW: GT_TRY(gt_parse_path_once("--preview", optarg, &o->preview)); break;
        case OPT_MATRIX: GT_TRY(gt_parse_enum("--matrix", optarg, matrices, 2, &o->matrix)); break;
        case OPT_RANGE: GT_TRY(gt_parse_enum("--range", optarg, ranges, 2, &o->range)); break;
        case OPT_SAVEMASKS: GT_TRY(gt_parse_path_once("--save-masks", optarg, &o->save_masks)); break;
        case OPT_GAINUPD: GT_TRY(gt_parse_int("--gain-update", optarg, 1, 1 << 30, &o->gain_update)); break;
        case OPT_CALIBRATE: o->calibrate = true; break;
        case OPT_REFERENCE:
            GT_TRY(gt_parse_int("--reference", optarg, 1, GT_STITCH_MAX_CAMS, &o->cal.chain.reference));
            o->cal.chain.reference--;
            break;
        case OPT_FRAME: GT_TRY(gt_parse_long("--frame", optarg, 0, 1L << 40, &o->cal.frame)); break;
        case OPT_FEATURES: GT_TRY(gt_parse_int("--features", optarg, 16, 100000, &o->cal.det.max_features)); break;
        case OPT_MININL: GT_TRY(gt_parse_int("--min-inliers", optarg, 8, 100000, &o->cal.chain.min_inliers)); break;
        case OPT_SEED: {
            long sd;
            GT_TRY(gt_parse_long("--seed", optarg, 0, 1L << 62, &sd));
            o->cal.ransac.seed = (uint64_t)sd;
            break;
        }
        case OPT_GLOBAL: o->cal.chain.global = true; break;
        case OPT_NOGAINS: o->cal.no_gains = true; break;
        default: return gt_usage_error("unknown option (see --help)");
        }
    }
    if (o->calibrate && o->rig) return gt_usage_error("--calibrate writes a rig: give it with -o, not --rig");
    if (!o->rig && !o->calibrate) return gt_usage_error("missing --rig RIG (or --calibrate)");
    if (!o->out) return gt_usage_error("missing -o OUT");
    if (optind >= argc) return gt_usage_error(o->calibrate ? "no camera frames" : "no input streams");
    o->inputs = argv + optind;
    o->ninputs = argc - optind;
    int nstdin = 0;
    for (int i = 0; i < o->ninputs; i++) nstdin += !strcmp(o->inputs[i], "-");
    if (nstdin > 1) return gt_usage_error("only one input can be '-'");
    if ((o->w || o->fmt >= 0) && (!o->w || o->fmt < 0))
        return gt_usage_error("raw inputs need both --size and --pix-fmt");
    return GT_OK;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcasecmp(s + a - b, suf) == 0;
}

/* Before any work: no output replaces an input (the rig, a stream, a mask
 * the rig names; with --calibrate (rig NULL) a camera frame) or another
 * output, the output directories exist, and the names' extensions fit what
 * is written. */
static gt_status check_paths(const opts_t *o, const gt_stitch_rig *rig)
{
    gt_guard g;
    gt_guard_init(&g);
    char what[64], path[4096];
    gt_guard_input(&g, o->rig, "--rig");
    for (int i = 0; i < o->ninputs; i++) {
        snprintf(what, sizeof what, "%s %d", rig ? "input" : "camera", i + 1);
        gt_guard_input(&g, o->inputs[i], what);
    }
    for (int i = 0; rig && i < rig->ncam; i++) {
        snprintf(what, sizeof what, "the mask of camera %d", i + 1);
        gt_guard_input(&g, rig->cam[i].mask_path, what);
    }
    /* the container: named, or the name's (y4m, yuv/raw), else the inputs' */
    const char *fmt = !rig ? "rig" : o->out_y4m >= 0 ? NULL : ends_with(o->out, ".y4m") ? "y4m" : "raw";
    gt_guard_output(&g, o->out, "-o", fmt, rig ? "--out-format" : NULL);
    gt_guard_output(&g, o->preview, "--preview", "png", NULL);
    struct stat sb;
    if (rig && o->save_masks && stat(o->save_masks, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) {
            gt_guard_free(&g);
            return gt_usage_error("--save-masks '%s' is not a directory", o->save_masks);
        }
        for (int i = 0; i < rig->ncam; i++) {
            snprintf(path, sizeof path, "%s/mask_%d.png", o->save_masks, i + 1);
            gt_guard_output(&g, path, "--save-masks", "png", NULL);
        }
    }
    gt_status st = gt_guard_check(&g);
    gt_guard_free(&g);
    return st;
}

static gt_status save_masks(const gt_stitch_plan *plan, const char *dir)
{
    if (mkdir(dir, 0777) && errno != EEXIST) return gt_fail(GT_ERR_RUNTIME, "cannot create '%s': %s", dir, strerror(errno));
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

typedef struct {
    opts_t o;
    gt_stitch_rig rig;
    gt_yuv_reader *rd[GT_STITCH_MAX_CAMS];
    gt_image masks[GT_STITCH_MAX_CAMS];
    gt_stitch_plan plan;
    gt_stitch_gpu *gpu;
    gt_stitch_gain_update gu;
    pthread_t dev_th;
    bool dev_th_started;
    gt_yuv_writer *wr;
    uint8_t *cpu_in[GT_STITCH_MAX_CAMS], *cpu_out[2];
    gt_timings tm;
    /* the writer thread: frames are posted in order, at most GT_STITCH_SLOTS
     * in flight (they live in the output slots) */
    struct {
        pthread_t th;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        bool started, stop;
        const uint8_t *q[GT_STITCH_SLOTS];
        long posted, written;
        gt_status st;
        char msg[1024];
        double ms, idle_ms;
    } w;
} run_t;

/* Read one frame of every input into bufs. *got false at the end (shortest
 * stream); with --strict, unequal ends are an error. */
static gt_status read_set(run_t *r, uint8_t **bufs, long frame, bool *got)
{
    int ended = 0, first_ended = -1, n = r->plan.ncam;
    double t0 = gt_now_ms();
    /* the cameras are read in parallel (separate streams); messages are
     * thread-local, so a failing reader's message is carried back */
    gt_status sts[GT_STITCH_MAX_CAMS];
    bool gots[GT_STITCH_MAX_CAMS];
    char msgs[GT_STITCH_MAX_CAMS][512];
#pragma omp parallel for schedule(static, 1) num_threads(n)
    for (int i = 0; i < n; i++) {
        gots[i] = false;
        sts[i] = gt_yuv_read_frame(r->rd[i], bufs[i], &gots[i]);
        if (sts[i]) snprintf(msgs[i], sizeof msgs[i], "%s", gt_errmsg());
    }
    for (int i = 0; i < n; i++) {
        if (sts[i])
            return gt_fail(sts[i], "input %d ('%s'): %s", i + 1, r->o.inputs[i], msgs[i]);
        if (!gots[i]) {
            ended++;
            if (first_ended < 0) first_ended = i;
        }
    }
    gt_timings_add(&r->tm, "I/O wait (read)", gt_now_ms() - t0);
    *got = ended == 0;
    if (ended && ended < r->plan.ncam) {
        if (r->o.strict)
            return gt_fail(GT_ERR_DATA, "input %d ('%s') ended after %ld frames while others continue (--strict)",
                           first_ended + 1, r->o.inputs[first_ended], frame);
        gt_notice("input %d ('%s') ended after %ld frames: stopping at the shortest stream", first_ended + 1,
                  r->o.inputs[first_ended], frame);
    }
    return GT_OK;
}

static gt_status emit(run_t *r, const uint8_t *frame, long k)
{
    GT_TRY(gt_yuv_write_frame(r->wr, frame));
    if (k == 0 && r->o.preview) {
        size_t n = (size_t)r->plan.pano_w * r->plan.pano_h * 3;
        uint8_t *rgb = malloc(n);
        if (!rgb) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        gt_status st = gt_yuv_to_rgb(frame, r->plan.fmt, r->plan.pano_w, r->plan.pano_h, (gt_yuv_matrix)r->o.matrix,
                                     (gt_yuv_range)r->o.range, rgb);
        if (!st) st = gt_png_write(r->o.preview, r->plan.pano_w, r->plan.pano_h, 3, rgb);
        free(rgb);
        GT_TRY(st);
    }
    return GT_OK;
}

static void *writer_main(void *arg)
{
    run_t *r = arg;
    pthread_mutex_lock(&r->w.mu);
    for (;;) {
        double ti = gt_now_ms();
        while (r->w.written == r->w.posted && !r->w.stop) pthread_cond_wait(&r->w.cv, &r->w.mu);
        if (r->w.written > 0) r->w.idle_ms += gt_now_ms() - ti; /* starved: nothing queued */
        if (r->w.written == r->w.posted || r->w.st) break; /* stopped and drained, or failed */
        long k = r->w.written;
        const uint8_t *buf = r->w.q[k % GT_STITCH_SLOTS];
        pthread_mutex_unlock(&r->w.mu);
        double t0 = gt_now_ms();
        gt_status st = emit(r, buf, k);
        double dt = gt_now_ms() - t0;
        pthread_mutex_lock(&r->w.mu);
        r->w.ms += dt;
        if (st) {
            r->w.st = st;
            snprintf(r->w.msg, sizeof r->w.msg, "%s", gt_errmsg());
        } else {
            r->w.written++;
        }
        pthread_cond_broadcast(&r->w.cv);
        if (st) break;
    }
    pthread_mutex_unlock(&r->w.mu);
    return NULL;
}

static gt_status writer_start(run_t *r)
{
    pthread_mutex_init(&r->w.mu, NULL);
    pthread_cond_init(&r->w.cv, NULL);
    if (pthread_create(&r->w.th, NULL, writer_main, r)) return gt_fail(GT_ERR_RUNTIME, "cannot start the writer thread");
    r->w.started = true;
    return GT_OK;
}

static gt_status writer_error(run_t *r)
{
    return gt_fail(r->w.st, "%s", r->w.msg);
}

/* hand frame k (posted in order) to the writer */
static gt_status writer_post(run_t *r, const uint8_t *buf, long k)
{
    pthread_mutex_lock(&r->w.mu);
    gt_status st = r->w.st;
    if (!st) {
        r->w.q[k % GT_STITCH_SLOTS] = buf;
        r->w.posted = k + 1;
        pthread_cond_broadcast(&r->w.cv);
    }
    pthread_mutex_unlock(&r->w.mu);
    return st ? writer_error(r) : GT_OK;
}

/* wait until frame k has been written (its slot can be reused) */
static gt_status writer_wait(run_t *r, long k)
{
    if (k < 0) return GT_OK;
    double t0 = gt_now_ms();
    pthread_mutex_lock(&r->w.mu);
    while (r->w.written <= k && !r->w.st) pthread_cond_wait(&r->w.cv, &r->w.mu);
    gt_status st = r->w.st;
    pthread_mutex_unlock(&r->w.mu);
    gt_timings_add(&r->tm, "wait for writer", gt_now_ms() - t0);
    return st ? writer_error(r) : GT_OK;
}

/* stop (after draining what was posted) and join; the writer's status */
static gt_status writer_stop(run_t *r)
{
    if (!r->w.started) return GT_OK;
    pthread_mutex_lock(&r->w.mu);
    r->w.stop = true;
    pthread_cond_broadcast(&r->w.cv);
    pthread_mutex_unlock(&r->w.mu);
    pthread_join(r->w.th, NULL);
    r->w.started = false;
    pthread_mutex_destroy(&r->w.mu);
    pthread_cond_destroy(&r->w.cv);
    return r->w.st ? writer_error(r) : GT_OK;
}

static void *device_prepare_main(void *arg)
{
    const opts_t *o = arg;
    gt_device_prepare(o->common.device, o->common.gpu);
    return NULL;
}

static void join_device_prepare(run_t *r)
{
    if (r->dev_th_started) pthread_join(r->dev_th, NULL);
    r->dev_th_started = false;
}

/* --gain-update: re-estimate from frame k's inputs before it is stitched */
static gt_status update_gains(run_t *r, uint8_t *const *bufs, long k)
{
    if (!r->o.gain_update) return GT_OK;
    double t0 = gt_now_ms();
    bool changed;
    GT_TRY(gt_stitch_gain_update_frame(&r->gu, &r->plan, (const uint8_t *const *)bufs, k, &changed));
    if (changed && r->gpu) gt_stitch_gpu_set_gains(r->gpu);
    if (changed) gt_timings_add(&r->tm, "gain update (CPU)", gt_now_ms() - t0);
    return GT_OK;
}

static gt_status run(run_t *r, long *nframes)
{
    opts_t *o = &r->o;
    double t_run = gt_now_ms();
    /* the CUDA context starts (0.1-0.3 s) while the host reads the rig and
     * builds the plan; joined before the device is chosen */
    if (pthread_create(&r->dev_th, NULL, device_prepare_main, o) == 0) r->dev_th_started = true;
    GT_TRY(gt_stitch_rig_load(o->rig, &r->rig));
    if (r->rig.ncam != o->ninputs)
        return gt_fail(GT_ERR_USAGE, "the rig '%s' has %d cameras but %d inputs were given", o->rig, r->rig.ncam,
                       o->ninputs);
    GT_TRY(check_paths(o, &r->rig));
    bool any_y4m = false;
    for (int i = 0; i < o->ninputs; i++) {
        gt_status st = gt_yuv_open(o->inputs[i], o->w, o->h, o->fmt, &r->rd[i]);
        if (st) {
            gt_errmsg_prefix("input %d", i + 1);
            return st;
        }
        any_y4m |= gt_yuv_is_y4m(r->rd[i]);
        int w = gt_yuv_width(r->rd[i]), h = gt_yuv_height(r->rd[i]);
        gt_pixfmt f = gt_yuv_pixfmt(r->rd[i]);
        if (f == GT_PIX_YUV444P)
            return gt_fail(GT_ERR_DATA, "input %d ('%s'): yuv444p is not supported (use yuyv422, uyvy422, yuv420p, nv12 or yuv422p)",
                           i + 1, o->inputs[i]);
        if (i > 0 && (w != gt_yuv_width(r->rd[0]) || h != gt_yuv_height(r->rd[0]) || f != gt_yuv_pixfmt(r->rd[0])))
            return gt_fail(GT_ERR_DATA, "input %d ('%s') is %dx%d %s but input 1 is %dx%d %s: all cameras must match",
                           i + 1, o->inputs[i], w, h, gt_pixfmt_name(f), gt_yuv_width(r->rd[0]),
                           gt_yuv_height(r->rd[0]), gt_pixfmt_name(gt_yuv_pixfmt(r->rd[0])));
    }
    int w = gt_yuv_width(r->rd[0]), h = gt_yuv_height(r->rd[0]);
    gt_pixfmt fmt = gt_yuv_pixfmt(r->rd[0]);
    for (int i = 0; i < r->rig.ncam; i++) {
        const char *mp = r->rig.cam[i].mask_path;
        if (!mp) continue;
        gt_image *mi = &r->masks[i], img;
        GT_TRY(gt_image_read(mp, 1, 0, mi));
        img = *mi;
        if (img.w != r->rig.pano_w || img.h != r->rig.pano_h) {
            return gt_fail_at(GT_ERR_DATA, o->rig, r->rig.cam[i].line, "mask '%s' of camera %d is %dx%d, the panorama is %dx%d",
                              mp, i + 1, img.w, img.h, r->rig.pano_w, r->rig.pano_h);
        }
        r->o.po.masks[i] = img.data; /* 8-bit gray, w*h */
    }
    double t_plan = gt_now_ms();
    gt_status st = gt_stitch_plan_build(&r->rig, w, h, fmt, &o->po, &r->plan);
    if (st) {
        gt_errmsg_prefix("rig '%s' with %dx%d %s inputs", o->rig, w, h, gt_pixfmt_name(fmt));
        return st == GT_ERR_USAGE ? GT_ERR_DATA : st;
    }
    double plan_ms = gt_now_ms() - t_plan;
    gt_timings_add(&r->tm, "start: plan (seams, weights, CPU)", plan_ms);
    if (o->save_masks) GT_TRY(save_masks(&r->plan, o->save_masks));
    if (o->gain_update) GT_TRY(gt_stitch_gain_update_init(&r->gu, &r->rig, &r->plan, o->gain_update, 0.5f));
    double t_dev = gt_now_ms();
    join_device_prepare(r);
    gt_device_kind dev;
    GT_TRY(gt_device_choose(o->common.device, o->common.gpu, &dev));
    double dev_ms = gt_now_ms() - t_dev;
    gt_timings_add(&r->tm, "start: device (rest of CUDA start)", dev_ms);
    bool y4m = o->out_y4m >= 0               ? o->out_y4m == 1
               : ends_with(o->out, ".y4m")   ? true
               : ends_with(o->out, ".yuv") || ends_with(o->out, ".raw") ? false
                                             : any_y4m;
    int fn = 25, fd = 1;
    gt_yuv_rate(r->rd[0], &fn, &fd);
    GT_TRY(gt_yuv_create(o->out, y4m, r->plan.pano_w, r->plan.pano_h, fmt, fn, fd, &r->wr));
    gt_progress pr;
    gt_progress_start(&pr, "stitching", o->frames > 0 ? (double)o->frames : 0);
    double t_start = gt_now_ms(), t_setup = 0;
    /* the whole run, from the rig to the last byte; streaming starts once the
     * GPU plan and buffers are ready */
    gt_timings_add(&r->tm, "start: rig, inputs, output, other", t_start - t_run - plan_ms - dev_ms);
    long k = 0;
    char extra[64];
    GT_TRY(writer_start(r));
    if (dev == GT_DEVICE_CUDA) {
        GT_TRY(gt_stitch_gpu_create(&r->plan, &r->gpu));
        t_setup = gt_now_ms() - t_start;
        gt_timings_add(&r->tm, "start: GPU plan, pinned buffers", t_setup);
        /* frame k in slot k % GT_STITCH_SLOTS: while k is on the GPU, k-1 is
         * queued for the writer behind k-2 (being written) and k+1 is read */
        long submitted = 0;
        bool eof = false;
        for (;;) {
            bool got = false;
            int slot = (int)(submitted % GT_STITCH_SLOTS);
            if (!eof && (o->frames < 0 || submitted < o->frames)) {
                GT_TRY(gt_stitch_gpu_wait(r->gpu, slot)); /* slot's inputs free (its last frame is done) */
                uint8_t *bufs[GT_STITCH_MAX_CAMS];
                for (int i = 0; i < r->plan.ncam; i++) bufs[i] = gt_stitch_gpu_in_buf(r->gpu, slot, i);
                GT_TRY(read_set(r, bufs, submitted, &got));
                eof = !got;
                if (got) GT_TRY(update_gains(r, bufs, submitted));
                if (got) {
                    /* the download overwrites this slot's output: its last frame must be written */
                    GT_TRY(writer_wait(r, submitted - GT_STITCH_SLOTS));
                    double ts = gt_now_ms();
                    GT_TRY(gt_stitch_gpu_submit(r->gpu, slot));
                    gt_timings_add(&r->tm, "submit (host)", gt_now_ms() - ts);
                    submitted++;
                }
            }
            if (k < submitted - (got ? 1 : 0)) {
                int ps = (int)(k % GT_STITCH_SLOTS);
                double tw = gt_now_ms();
                GT_TRY(gt_stitch_gpu_wait(r->gpu, ps));
                gt_timings_add(&r->tm, "wait for GPU", gt_now_ms() - tw);
                GT_TRY(writer_post(r, gt_stitch_gpu_out_buf(r->gpu, ps), k));
                k++;
                snprintf(extra, sizeof extra, "%.1f fps", k / ((gt_now_ms() - t_start) / 1000.0));
                gt_progress_update(&pr, (double)k, extra);
            }
            if (!got && k == submitted) break;
        }
        double ms[4];
        long nf;
        gt_stitch_gpu_stage_ms(r->gpu, ms, &nf);
        static const char *names[4] = {"upload (GPU)", "warp (GPU)", "blend (GPU)", "download (GPU)"};
        for (int s = 0; s < 4; s++)
            for (long f = 0; f < nf; f++) gt_timings_add(&r->tm, names[s], ms[s]);
    } else {
        for (int i = 0; i < r->plan.ncam; i++)
            if (!(r->cpu_in[i] = malloc(r->plan.in_bytes))) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        for (int s = 0; s < 2; s++)
            if (!(r->cpu_out[s] = malloc(r->plan.out_bytes))) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        while (o->frames < 0 || k < o->frames) {
            bool got;
            GT_TRY(read_set(r, r->cpu_in, k, &got));
            if (!got) break;
            GT_TRY(update_gains(r, r->cpu_in, k));
            GT_TRY(writer_wait(r, k - 2));
            double t0 = gt_now_ms();
            GT_TRY(gt_stitch_frame_cpu(&r->plan, (const uint8_t *const *)r->cpu_in, r->cpu_out[k & 1]));
            gt_timings_add(&r->tm, "warp+blend (CPU)", gt_now_ms() - t0);
            GT_TRY(writer_post(r, r->cpu_out[k & 1], k));
            k++;
            snprintf(extra, sizeof extra, "%.1f fps", k / ((gt_now_ms() - t_start) / 1000.0));
            gt_progress_update(&pr, (double)k, extra);
        }
    }
    GT_TRY(writer_stop(r));
    for (long f = 0; f < k; f++) gt_timings_add(&r->tm, "write (writer thread)", r->w.ms / k);
    for (long f = 0; f < k; f++) gt_timings_add(&r->tm, "writer idle (queue empty)", r->w.idle_ms / k);
    gt_progress_end(&pr);
    gt_yuv_writer *wr = r->wr;
    r->wr = NULL;
    double t_fin = gt_now_ms();
    GT_TRY(gt_yuv_finish(wr, true));
    gt_timings_add(&r->tm, "end: close the output", gt_now_ms() - t_fin);
    double total = gt_now_ms() - t_run, startup = t_start + t_setup - t_run;
    *nframes = k;
    if (o->common.timings) {
        gt_timings_print(&r->tm, stderr, "yuvstitch stages (per-frame means in the 'mean' column)");
        /* overall: everything from reading the rig to closing the output;
         * streaming: the frames alone, after the one-time start */
        fprintf(stderr,
                "frames %ld, wall %.1f ms, %.1f frames/s overall (%s); start %.1f ms (rig, plan, CUDA, buffers), "
                "streaming %.1f frames/s\n",
                k, total, k > 0 ? k / (total / 1000.0) : 0.0, dev == GT_DEVICE_CUDA ? "cuda" : "cpu", startup,
                k > 0 && total > startup ? k / ((total - startup) / 1000.0) : 0.0);
    }
    if (k == 0) gt_notice("no frames were stitched (an input is empty)");
    return GT_OK;
}

int main(int argc, char **argv)
{
    static run_t r;
    gt_set_progname("yuvstitch");
    gt_timings_init(&r.tm);
    bool exit_ok;
    gt_status st = parse(argc, argv, &r.o, &exit_ok);
    if (st) return gt_report(st);
    if (exit_ok) return 0;
    if (r.o.calibrate) {
        if ((st = check_paths(&r.o, NULL)) != GT_OK) return gt_report(st);
        gt_stitch_calib_opts *c = &r.o.cal;
        c->inputs = (const char *const *)r.o.inputs;
        c->ninputs = r.o.ninputs;
        c->w = r.o.w, c->h = r.o.h, c->fmt = r.o.fmt;
        c->out = r.o.out;
        c->preview = r.o.preview;
        c->device = r.o.common.device;
        c->gpu = r.o.common.gpu;
        c->report = r.o.common.verbosity >= 0 ? stderr : NULL;
        c->timings = r.o.common.timings;
        st = gt_stitch_calibrate(c);
        gt_device_shutdown();
        return st ? gt_report(st) : 0;
    }
    long n = 0;
    st = run(&r, &n);
    join_device_prepare(&r); /* run failed before the join */
    if (r.w.started) {
        char keep[1024];
        snprintf(keep, sizeof keep, "%s", gt_errmsg());
        writer_stop(&r);
        gt_fail(st, "%s", keep);
    }
    if (r.wr) gt_yuv_finish(r.wr, false);
    gt_stitch_gpu_destroy(r.gpu);
    gt_stitch_gain_update_free(&r.gu);
    gt_stitch_plan_free(&r.plan);
    for (int i = 0; i < GT_STITCH_MAX_CAMS; i++) {
        if (r.rd[i]) gt_yuv_close(r.rd[i]);
        if (r.masks[i].data) gt_image_free(&r.masks[i]);
        free(r.cpu_in[i]);
    }
    free(r.cpu_out[0]);
    free(r.cpu_out[1]);
    gt_stitch_rig_free(&r.rig);
    if (st) return gt_report(st);
    return 0;
}
