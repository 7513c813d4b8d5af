/* stpsfit: fit a smoothed thin-plate spline through point pairs, and apply it
 * to points, meshes and volumes. See man/man1/stpsfit.1. Options go into a
 * gt_tps_job; lib/tps/tps_job.c does the work. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/log.h"
#include "common/trace.h"
#include "tps/tps.h"

static const char *usage_text =
    "Usage: stpsfit [options] SOURCE TARGET -o PARAMS\n"
    "       stpsfit [options] --params PARAMS --apply POINTS -o WARPED\n"
    "       stpsfit [options] --params INVERSE --apply-volume IN.nrrd -o OUT.nrrd\n"
    "Fit the smoothed thin-plate spline f with f(SOURCE_k) ~ TARGET_k, or apply one.\n"
    "SOURCE, TARGET, POINTS: PLY (vertex x,y,z) or point text (x y z per line; x y\n"
    "means z = 0). SOURCE and TARGET hold the same number n >= 5 of points.\n"
    "\n"
    "Fitting:\n"
    "  -o, --output FILE       where to write (parameter file, points, mesh or volume);\n"
    "                          never an input\n"
    "      --out-format F      tps|ply|points|nrrd: the format this mode writes, where\n"
    "                          FILE's extension names another (refused otherwise)\n"
    "  -l, --lambda L|gcv      smoothing lambda >= 0 (default 0: exact interpolation),\n"
    "                          or gcv: choose it by generalized cross-validation\n"
    "                          (-v prints the GCV curve)\n"
    "  -k, --kernel r2logr|r   U(r) = r^2 log r (default) or U(r) = -r\n"
    "Applying:\n"
    "  -p, --params FILE       a parameter file written by stpsfit\n"
    "  -a, --apply POINTS      evaluate f at POINTS; a PLY mesh keeps its other vertex\n"
    "                          properties and faces; point text gives point text\n"
    "      --apply-volume IN   resample the NRRD volume IN through f (trilinear): f must\n"
    "                          map output positions to input positions (the inverse warp)\n"
    "      --ascii             write PLY as ascii (default: the input's format)\n"
    "\n" GT_COMMON_HELP
    "\n"
    "Exit status: 0 ok, 1 runtime error, 2 usage, 3 bad input data, 4 GPU unavailable.\n";

enum { OPT_APPLY_VOLUME = GT_OPT_TOOL_BASE, OPT_ASCII, OPT_OUTFMT };

static const char *const outfmts[] = {"tps", "ply", "points", "nrrd"};

typedef struct {
    gt_tps_job job;
    const char *apply, *apply_vol;
    int outfmt; /* --out-format: index in outfmts, -1 from the name */
} opts;

/* One of stpsfit's own options. */
static gt_status set_option(opts *o, int c, const char *arg)
{
    gt_tps_job *j = &o->job;
    switch (c) {
    case 'o': return gt_parse_path_once("-o", arg, &j->output);
    case 'l':
        if (!strcmp(arg, "gcv")) {
            j->gcv = true;
        } else {
            j->gcv = false;
            if (gt_parse_double("--lambda", arg, 0.0, INFINITY, &j->lambda) != GT_OK || !isfinite(j->lambda))
                return gt_usage_error("--lambda: '%s' is not a finite number >= 0 or 'gcv'", arg);
        }
        break;
    case 'k': {
        static const char *const names[] = {"r2logr", "r"};
        int k;
        if (gt_parse_enum("--kernel", arg, names, 2, &k) != GT_OK) return GT_ERR_USAGE;
        j->kernel = (gt_tps_kernel)k;
        break;
    }
    case 'p': return gt_parse_path_once("--params", arg, &j->params);
    case 'a': return gt_parse_path_once("--apply", arg, &o->apply);
    case OPT_APPLY_VOLUME: return gt_parse_path_once("--apply-volume", arg, &o->apply_vol);
    case OPT_ASCII: j->ascii = true; break;
    case OPT_OUTFMT: return gt_parse_enum("--out-format", arg, outfmts, 4, &o->outfmt);
    default: return gt_usage_error("try 'stpsfit --help'");
    }
    return GT_OK;
}

/* Which job the options ask for, and its operands. */
static gt_status check_operands(opts *o, int nargs, char **args)
{
    gt_tps_job *j = &o->job;
    if (!j->output) return gt_usage_error("no output given (-o FILE); try 'stpsfit --help'");
    if (o->apply && o->apply_vol) return gt_usage_error("--apply and --apply-volume cannot be combined");
    if ((o->apply || o->apply_vol) && !j->params)
        return gt_usage_error("--apply/--apply-volume need --params FILE");
    if (j->params && !o->apply && !o->apply_vol)
        return gt_usage_error("--params needs --apply POINTS or --apply-volume IN");
    if (j->params && nargs != 0) return gt_usage_error("unexpected operand '%s' with --params", args[0]);
    if (!j->params && nargs != 2)
        return gt_usage_error("expected SOURCE and TARGET (got %d operands); try "
                              "'stpsfit --help'", nargs);
    j->input = o->apply ? o->apply : o->apply_vol;
    if (!j->params) j->source = args[0], j->target = args[1];
    return GT_OK;
}

/* Before any work: the paths (gt_tps_job_check_paths), and a named
 * --out-format that is not what the mode writes. */
static gt_status check_paths(const opts *o)
{
    const gt_tps_mode mode = o->apply ? GT_TPS_APPLY : o->apply_vol ? GT_TPS_APPLY_VOLUME : GT_TPS_FIT;
    const char *fmt = gt_tps_job_output_format(&o->job, mode);
    if (o->outfmt >= 0 && strcmp(outfmts[o->outfmt], fmt) != 0)
        return gt_usage_error("--out-format %s: this mode writes %s", outfmts[o->outfmt],
                              !strcmp(fmt, "tps")    ? "a parameter file (tps)"
                              : !strcmp(fmt, "ply")  ? "a PLY (the --apply input is PLY)"
                              : !strcmp(fmt, "nrrd") ? "a NRRD volume (nrrd)"
                                                     : "point text (the --apply input is point text)");
    return gt_tps_job_check_paths(&o->job, mode, o->outfmt >= 0);
}

int main(int argc, char **argv)
{
    gt_set_progname("stpsfit");
    gt_trace("main entry");
    gt_common_opts co;
    gt_common_opts_init(&co);
    opts o = {0};
    o.outfmt = -1;
    gt_tps_job_init(&o.job);
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},
        {"lambda", required_argument, 0, 'l'},
        {"kernel", required_argument, 0, 'k'},
        {"params", required_argument, 0, 'p'},
        {"apply", required_argument, 0, 'a'},
        {"apply-volume", required_argument, 0, OPT_APPLY_VOLUME},
        {"ascii", no_argument, 0, OPT_ASCII},
        {"out-format", required_argument, 0, OPT_OUTFMT},
        GT_COMMON_LONGOPTS,
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:l:k:p:a:" GT_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        gt_cli_result cr = gt_common_option(&co, c, optarg);
        if (cr == GT_CLI_HANDLED) continue;
        if (cr == GT_CLI_EXIT_OK) return 0;
        if (cr == GT_CLI_ERROR) return gt_report(GT_ERR_USAGE);
        if (c == 'h') {
            fputs(usage_text, stdout);
            return 0;
        }
        gt_status st = set_option(&o, c, optarg);
        if (st != GT_OK) return gt_report(st);
    }
    gt_status s = check_operands(&o, argc - optind, argv + optind);
    if (s == GT_OK) s = check_paths(&o);
    if (s != GT_OK) return gt_report(s);
    o.job.device = co.device;
    o.job.gpu = co.gpu;
    o.job.timings = co.timings;
    if (o.apply) s = gt_tps_apply_job(&o.job);
    else if (o.apply_vol) s = gt_tps_apply_volume_job(&o.job);
    else s = gt_tps_fit_job(&o.job);
    gt_device_shutdown();
    if (s != GT_OK) return gt_report(s);
    return 0;
}
