/* yuvstitch: stitch N camera streams into one panorama (perspective warp,
 * direct / feather / multi-band blending in YUV), on the GPU or the CPU; or
 * calibrate the rig from the cameras' frames. Options go into a
 * gt_stitch_job (lib/stitch/stream_job.c streams) or a gt_stitch_calib_opts
 * (lib/stitch/calib.c calibrates). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/guard.h"
#include "common/log.h"
#include "common/trace.h"
#include "common/status.h"
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
    "      --start N           begin at input frame N (from 0; files are seeked, pipes\n"
    "                          read and dropped); past the end of an input: exit 2\n"
    "  -n, --frames N          stop after N frames (with --start: a slice of the\n"
    "                          streams; slices joined are the whole run's frames)\n"
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
    "      --preview PNG       write the first stitched frame as an RGB PNG, every\n"
    "                          camera's footprint outlined in its colour\n"
    "      --matrix bt601|bt709  preview colour matrix (default bt601)\n"
    "      --range limited|full  preview input range (default limited)\n"
    "      --save-masks DIR    write the seam masks (mask_<i>.png, 255 = owned) to DIR\n"
    "      --gain-update N     re-estimate the gains every N frames from the overlaps\n"
    "                          (cameras with auto-exposure), each step half-way\n"
    "\n"
    "Calibration (--calibrate; inputs PNG/JPEG, Y4M or raw YUV with --size/--pix-fmt):\n"
    "      --calibrate         write the rig (cameras, projection, panorama size, gains) to -o\n"
    "      --model rotation|homography  cameras turning about one centre (default: rotation,\n"
    "                          focal length and rotation per camera, adjusted together)\n"
    "                          or a homography per camera onto a plane (planar scenes)\n"
    "      --projection auto|plane|cylindrical|spherical  the panorama's projection\n"
    "                          (default auto: from the cameras' field of view; spherical\n"
    "                          = equirectangular, the full 360x180 for rigs all around)\n"
    "      --pano-width W      panorama width in pixels, even (default: the cameras' resolution)\n"
    "      --focal F           the cameras' focal length in pixels (default: estimated)\n"
    "      --distortion K1,K2  the lens's radial distortion, held (default: --lens auto)\n"
    "      --estimate-distortion  estimate K1, K2 (one lens for all cameras; --lens distortion)\n"
    "      --lens auto|none|distortion|full  the lens the adjustment estimates (one for all\n"
    "                          cameras): auto (default) keeps K1, K2 and then the principal\n"
    "                          point when each lowers the error clearly; none: the pinhole\n"
    "                          (K1, K2 as given); distortion: K1, K2; full: both\n"
    "      --no-wave           keep the reference camera's roll and pitch (no horizon\n"
    "                          straightening)\n"
    "      --matches FILE      write the inlier matches of every accepted pair (text)\n"
    "      --reference N       camera whose view the panorama keeps (default: the middle)\n"
    "      --frame K           frame of video inputs to use (default 0, the first)\n"
    "      --preview PNG       the stitched panorama, seams in red, footprints outlined\n"
    "      --features N        features per camera (default 2000)\n"
    "      --min-inliers N     inliers a pair needs (default 20)\n"
    "      --seed S            RANSAC seed (default 1; the same seed, the same rig)\n"
    "      --global-refine     homography model: refine all overlapping pairs together\n"
    "      --no-gains          write gains of 1\n"
    "\n" GT_COMMON_HELP;

enum {
    OPT_OUTFMT = GT_OPT_TOOL_BASE,
    OPT_START,
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
    OPT_MODEL,
    OPT_PROJECTION,
    OPT_PANOW,
    OPT_FOCAL,
    OPT_DISTORTION,
    OPT_ESTDIST,
    OPT_NOWAVE,
    OPT_MATCHES,
    OPT_LENS,
};

typedef struct {
    gt_stitch_job job;       /* streaming; its inputs, output and preview serve --calibrate too */
    bool calibrate;
    gt_stitch_calib_opts cal;
    bool lens_set, dist_given; /* --lens given; --distortion given (held unless --lens says otherwise) */
    gt_common_opts common;
} opts_t;

/* --calibrate's own options into o->cal. */
static gt_status set_calib_option(opts_t *o, int c, const char *arg)
{
    gt_stitch_calib_opts *cal = &o->cal;
    long sd;
    switch (c) {
    case OPT_CALIBRATE: o->calibrate = true; return GT_OK;
    case OPT_REFERENCE:
        GT_TRY(gt_parse_int("--reference", arg, 1, GT_STITCH_MAX_CAMS, &cal->chain.reference));
        cal->chain.reference--;
        return GT_OK;
    case OPT_FRAME: return gt_parse_long("--frame", arg, 0, 1L << 40, &cal->frame);
    case OPT_FEATURES: return gt_parse_int("--features", arg, 16, 100000, &cal->det.max_features);
    case OPT_MININL: return gt_parse_int("--min-inliers", arg, 8, 100000, &cal->chain.min_inliers);
    case OPT_SEED:
        GT_TRY(gt_parse_long("--seed", arg, 0, 1L << 62, &sd));
        cal->ransac.seed = (uint64_t)sd;
        return GT_OK;
    case OPT_GLOBAL: cal->chain.global = true; return GT_OK;
    case OPT_NOGAINS: cal->no_gains = true; return GT_OK;
    case OPT_MODEL: {
        static const char *models[] = {"rotation", "homography"};
        int v;
        GT_TRY(gt_parse_enum("--model", arg, models, 2, &v));
        cal->model = (gt_calib_model)v;
        return GT_OK;
    }
    case OPT_PROJECTION: {
        static const char *projs[] = {"plane", "cylindrical", "spherical", "auto"};
        int v;
        GT_TRY(gt_parse_enum("--projection", arg, projs, 4, &v));
        cal->rot.projection = v == 3 ? -1 : v;
        return GT_OK;
    }
    case OPT_PANOW:
        GT_TRY(gt_parse_int("--pano-width", arg, 2, 65536, &cal->rot.pano_width));
        if (cal->rot.pano_width % 2) return gt_usage_error("--pano-width %d: give an even width (4:2:2 and 4:2:0 need one)", cal->rot.pano_width);
        return GT_OK;
    case OPT_FOCAL: return gt_parse_double("--focal", arg, 1, 1e7, &cal->rot.focal);
    case OPT_DISTORTION: {
        char *end;
        double k1 = strtod(arg, &end), k2 = 0;
        if (end == arg || *end != ',' || (k2 = strtod(end + 1, &end), *end) || !isfinite(k1) || !isfinite(k2) ||
            fabs(k1) > 10 || fabs(k2) > 10)
            return gt_usage_error("--distortion '%s': give K1,K2 (numbers within -10..10)", arg);
        cal->rot.k1 = k1, cal->rot.k2 = k2;
        o->dist_given = true;
        return GT_OK;
    }
    case OPT_ESTDIST: cal->rot.distortion = true; return GT_OK;
    case OPT_LENS: {
        static const char *lenses[] = {"auto", "none", "distortion", "full"};
        o->lens_set = true;
        return gt_parse_enum("--lens", arg, lenses, 4, &cal->rot.lens);
    }
    case OPT_NOWAVE: cal->rot.no_wave = true; return GT_OK;
    case OPT_MATCHES: return gt_parse_path_once("--matches", arg, &cal->matches);
    default: return gt_usage_error("unknown option (see --help)");
    }
}

/* One of yuvstitch's own options into the job (or, for --calibrate's,
 * set_calib_option). */
static gt_status set_option(opts_t *o, int c, const char *arg)
{
    static const char *blends[] = {"none", "feather", "multiband"};
    static const char *outfmts[] = {"raw", "y4m"};
    static const char *matrices[] = {"bt601", "bt709"};
    static const char *ranges[] = {"limited", "full"};
    gt_stitch_job *j = &o->job;
    int v;
    double d;
    gt_pixfmt f;
    switch (c) {
    case 'r': return gt_parse_path_once("--rig", arg, &j->rig);
    case 's': return gt_parse_wxh("--size", arg, 65536, &j->w, &j->h);
    case 'f':
        GT_TRY(gt_pixfmt_parse("--pix-fmt", arg, &f));
        j->fmt = (int)f;
        return GT_OK;
    case 'o': return gt_parse_path_once("-o", arg, &j->output);
    case OPT_OUTFMT: return gt_parse_enum("--out-format", arg, outfmts, 2, &j->out_y4m);
    case OPT_START: return gt_parse_long("--start", arg, 0, 1L << 40, &j->start);
    case 'n': return gt_parse_long("--frames", arg, 0, 1L << 40, &j->frames);
    case OPT_STRICT: j->strict = true; return GT_OK;
    case 'b':
        GT_TRY(gt_parse_enum("--blend", arg, blends, 3, &v));
        j->plan.blend = (gt_blend_mode)v;
        return GT_OK;
    case OPT_BANDS: return gt_parse_int("--bands", arg, 1, GT_STITCH_MAX_BANDS, &j->plan.bands);
    case OPT_ALPHA:
        GT_TRY(gt_parse_double("--feather-alpha", arg, 1e-6, 1e6, &d));
        j->plan.feather_alpha = (float)d;
        return GT_OK;
    case OPT_PREVIEW: return gt_parse_path_once("--preview", arg, &j->preview);
    case OPT_MATRIX:
        GT_TRY(gt_parse_enum("--matrix", arg, matrices, 2, &v));
        j->matrix = (gt_yuv_matrix)v;
        return GT_OK;
    case OPT_RANGE:
        GT_TRY(gt_parse_enum("--range", arg, ranges, 2, &v));
        j->range = (gt_yuv_range)v;
        return GT_OK;
    case OPT_SAVEMASKS: return gt_parse_path_once("--save-masks", arg, &j->save_masks);
    case OPT_GAINUPD: return gt_parse_int("--gain-update", arg, 1, 1 << 30, &j->gain_update);
    default: return set_calib_option(o, c, arg);
    }
}

/* What the options must say together, and the inputs. */
static gt_status check_args(int argc, char **argv, opts_t *o)
{
    gt_stitch_job *j = &o->job;
    if (o->calibrate && j->rig) return gt_usage_error("--calibrate writes a rig: give it with -o, not --rig");
    if (!j->rig && !o->calibrate) return gt_usage_error("missing --rig RIG (or --calibrate)");
    if (o->calibrate && j->start > 0)
        return gt_usage_error("--start is for streaming; --calibrate reads one frame (--frame K)");
    const gt_calib_rot_opts *ro = &o->cal.rot;
    bool rot_opts = ro->projection >= 0 || ro->pano_width || ro->focal > 0 || ro->k1 != 0 || ro->k2 != 0 ||
                    ro->distortion || ro->no_wave || o->lens_set;
    if (o->dist_given && !o->lens_set) o->cal.rot.lens = GT_CALIB_LENS_NONE; /* the lens given is held */
    if (!o->calibrate && (rot_opts || o->cal.matches || o->cal.model != GT_CALIB_ROTATION))
        return gt_usage_error("--model, --projection, --pano-width, --focal, --distortion, --estimate-distortion, "
                              "--lens, --no-wave and --matches are for --calibrate (a rig file carries its projection)");
    if (o->cal.model == GT_CALIB_HOMOGRAPHY && rot_opts)
        return gt_usage_error("--projection, --pano-width, --focal, --distortion, --estimate-distortion, --lens and --no-wave "
                              "are for the rotation model (--model homography makes a plane of homographies)");
    if (o->cal.model == GT_CALIB_ROTATION && o->cal.chain.global)
        return gt_usage_error("--global-refine is for --model homography (the rotation model always adjusts every pair)");
    if (!j->output) return gt_usage_error("missing -o OUT");
    if (optind >= argc) return gt_usage_error(o->calibrate ? "no camera frames" : "no input streams");
    j->inputs = (const char *const *)(argv + optind);
    j->ninputs = argc - optind;
    int nstdin = 0;
    for (int i = 0; i < j->ninputs; i++) nstdin += !strcmp(j->inputs[i], "-");
    if (nstdin > 1) return gt_usage_error("only one input can be '-'");
    if ((j->w || j->fmt >= 0) && (!j->w || j->fmt < 0))
        return gt_usage_error("raw inputs need both --size and --pix-fmt");
    j->device = o->common.device;
    j->gpu = o->common.gpu;
    j->timings = o->common.timings;
    return GT_OK;
}

static gt_status parse(int argc, char **argv, opts_t *o, bool *exit_ok)
{
    static const struct option lo[] = {
        {"rig", required_argument, 0, 'r'},
        {"size", required_argument, 0, 's'},
        {"pix-fmt", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},
        {"out-format", required_argument, 0, OPT_OUTFMT},
        {"start", required_argument, 0, OPT_START},
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
        {"model", required_argument, 0, OPT_MODEL},
        {"projection", required_argument, 0, OPT_PROJECTION},
        {"pano-width", required_argument, 0, OPT_PANOW},
        {"focal", required_argument, 0, OPT_FOCAL},
        {"distortion", required_argument, 0, OPT_DISTORTION},
        {"estimate-distortion", no_argument, 0, OPT_ESTDIST},
        {"lens", required_argument, 0, OPT_LENS},
        {"no-wave", no_argument, 0, OPT_NOWAVE},
        {"matches", required_argument, 0, OPT_MATCHES},
        GT_COMMON_LONGOPTS,
        {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    gt_stitch_job_init(&o->job);
    gt_stitch_calib_opts_init(&o->cal);
    gt_common_opts_init(&o->common);
    *exit_ok = false;
    int c;
    while ((c = getopt_long(argc, argv, "r:s:f:o:n:b:" GT_COMMON_SHORTOPTS, lo, NULL)) != -1) {
        switch (gt_common_option(&o->common, c, optarg)) {
        case GT_CLI_HANDLED: continue;
        case GT_CLI_EXIT_OK: *exit_ok = true; return GT_OK;
        case GT_CLI_ERROR: return GT_ERR_USAGE;
        default: break;
        }
        if (c == 'h') {
            fputs(usage_text, stdout);
            *exit_ok = true;
            return GT_OK;
        }
        GT_TRY(set_option(o, c, optarg));
    }
    return check_args(argc, argv, o);
}

/* --calibrate: before any work, no output replaces a camera frame or the
 * other output (the rig job checks its own paths); then the job. */
static gt_status calibrate(opts_t *o)
{
    const gt_stitch_job *j = &o->job;
    gt_guard g;
    gt_guard_init(&g);
    char what[64];
    for (int i = 0; i < j->ninputs; i++) {
        snprintf(what, sizeof what, "camera %d", i + 1);
        gt_guard_input(&g, j->inputs[i], what);
    }
    gt_guard_output(&g, j->output, "-o", "rig", NULL);
    gt_guard_output(&g, j->preview, "--preview", "png", NULL);
    gt_guard_output(&g, o->cal.matches, "--matches", NULL, NULL);
    gt_status st = gt_guard_check(&g);
    gt_guard_free(&g);
    GT_TRY(st);
    gt_stitch_calib_opts *c = &o->cal;
    c->inputs = j->inputs;
    c->ninputs = j->ninputs;
    c->w = j->w, c->h = j->h, c->fmt = j->fmt;
    c->out = j->output;
    c->preview = j->preview;
    c->device = j->device;
    c->gpu = j->gpu;
    c->report = o->common.verbosity >= 0 ? stderr : NULL;
    c->timings = j->timings;
    st = gt_stitch_calibrate(c);
    gt_device_shutdown();
    return st;
}

int main(int argc, char **argv)
{
    static opts_t o;
    gt_set_progname("yuvstitch");
    gt_trace("main entry");
    bool exit_ok;
    gt_status st = parse(argc, argv, &o, &exit_ok);
    if (st) return gt_report(st);
    if (exit_ok) return 0;
    st = o.calibrate ? calibrate(&o) : gt_stitch_stream(&o.job, NULL);
    return st ? gt_report(st) : 0;
}
