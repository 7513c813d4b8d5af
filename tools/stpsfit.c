/* stpsfit: fit a smoothed thin-plate spline through point pairs, and apply it
 * to points, meshes and volumes. See man/man1/stpsfit.1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/log.h"
#include "common/timer.h"
#include "io/ply.h"
#include "io/points.h"
#include "io/volume.h"
#include "tps/tps.h"
#include "tps/warp.h"

static const char *usage_text =
    "Usage: stpsfit [options] SOURCE TARGET -o PARAMS\n"
    "       stpsfit [options] --params PARAMS --apply POINTS -o WARPED\n"
    "       stpsfit [options] --params INVERSE --apply-volume IN.nrrd -o OUT.nrrd\n"
    "Fit the smoothed thin-plate spline f with f(SOURCE_k) ~ TARGET_k, or apply one.\n"
    "SOURCE, TARGET, POINTS: PLY (vertex x,y,z) or point text (x y z per line; x y\n"
    "means z = 0). SOURCE and TARGET hold the same number n >= 5 of points.\n"
    "\n"
    "Fitting:\n"
    "  -o, --output FILE       where to write (parameter file, points, mesh or volume)\n"
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

enum { OPT_APPLY_VOLUME = GT_OPT_TOOL_BASE, OPT_ASCII };

static gt_status read_pts(const char *path, double **xyz, size_t *n)
{
    gt_status s = gt_points_read_any(path, xyz, n);
    return s;
}

static gt_status do_fit(const char *src_path, const char *dst_path, const char *out,
                        const gt_tps_fit_opts *fo, gt_timings *tm)
{
    double *src = NULL, *dst = NULL;
    size_t n = 0, m = 0;
    gt_tps t;
    gt_tps_init(&t);
    gt_tps_gcv curve = {0};
    gt_tps_fit_opts o = *fo;
    if (o.gcv) o.gcv_out = &curve;
    double t0 = gt_now_ms();
    gt_status s = read_pts(src_path, &src, &n);
    if (s == GT_OK) s = read_pts(dst_path, &dst, &m);
    gt_timings_add(tm, "read", gt_now_ms() - t0);
    if (s == GT_OK && n != m)
        s = gt_fail(GT_ERR_DATA, "SOURCE '%s' has %zu points but TARGET '%s' has %zu: they must pair up",
                    src_path, n, dst_path, m);
    if (s == GT_OK) {
        s = gt_tps_fit(src, dst, n, &o, &t);
        if (s != GT_OK && s != GT_ERR_GPU) gt_errmsg_prefix("%s -> %s", src_path, dst_path);
    }
    if (s == GT_OK && o.gcv) {
        if (gt_verbosity() >= 1) {
            fprintf(stderr, "# GCV curve: lambda score\n");
            for (int i = 0; i < curve.npts; i++)
                fprintf(stderr, "%.9g %.9g\n", curve.lambda[i], curve.score[i]);
        }
        gt_notice("lambda chosen by GCV: %.9g (GCV score %.6g)", t.lambda, curve.best_score);
    }
    if (s == GT_OK) {
        double t2 = gt_now_ms();
        s = gt_tps_write(out, &t);
        gt_timings_add(tm, "write", gt_now_ms() - t2);
    }
    gt_tps_gcv_free(&curve);
    gt_tps_free(&t);
    free(src);
    free(dst);
    return s;
}

static bool is_ply(const char *path)
{
    if (!strcmp(path, "-")) return false;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char b[4] = {0};
    size_t k = fread(b, 1, 4, f);
    fclose(f);
    return k == 4 && !memcmp(b, "ply", 3) && (b[3] == '\n' || b[3] == '\r');
}

static gt_status do_apply(const char *params, const char *in, const char *out,
                          gt_device_kind dev, bool ascii, gt_timings *tm)
{
    gt_tps t;
    GT_TRY(gt_tps_read(params, &t));
    gt_status s = GT_OK;
    double t0 = gt_now_ms();
    if (is_ply(in)) {
        gt_ply_mesh m;
        memset(&m, 0, sizeof m);
        s = gt_ply_read(in, &m);
        gt_timings_add(tm, "read", gt_now_ms() - t0);
        int cx = -1, cy = -1, cz = -1;
        if (s == GT_OK) {
            cx = gt_ply_find(&m, "x");
            cy = gt_ply_find(&m, "y");
            cz = gt_ply_find(&m, "z");
            if (cx < 0 || cy < 0)
                s = gt_fail(GT_ERR_DATA, "%s: the vertex element has no x and y properties", in);
        }
        double *p = NULL;
        if (s == GT_OK && m.nvert > 0) {
            p = malloc(m.nvert * 3 * sizeof(double));
            if (!p) s = gt_fail(GT_ERR_RUNTIME, "out of memory for %zu points", m.nvert);
        }
        if (s == GT_OK && m.nvert > 0) {
            const int np = m.nprops;
            for (size_t v = 0; v < m.nvert; v++) {
                p[3 * v] = m.vdata[v * np + cx];
                p[3 * v + 1] = m.vdata[v * np + cy];
                p[3 * v + 2] = cz >= 0 ? m.vdata[v * np + cz] : 0.0;
            }
            s = gt_tps_eval(&t, p, m.nvert, p, dev, tm);
            if (s == GT_OK)
                for (size_t v = 0; v < m.nvert; v++) {
                    m.vdata[v * np + cx] = (float)p[3 * v];
                    m.vdata[v * np + cy] = (float)p[3 * v + 1];
                    if (cz >= 0) m.vdata[v * np + cz] = (float)p[3 * v + 2];
                }
        }
        if (s == GT_OK) {
            double t2 = gt_now_ms();
            s = gt_ply_write(out, &m, ascii ? GT_PLY_ASCII : m.format);
            gt_timings_add(tm, "write", gt_now_ms() - t2);
        }
        free(p);
        gt_ply_free(&m);
    } else {
        double *p = NULL;
        size_t n = 0;
        s = gt_points_read(in, &p, &n);
        gt_timings_add(tm, "read", gt_now_ms() - t0);
        if (s == GT_OK) s = gt_tps_eval(&t, p, n, p, dev, tm);
        if (s == GT_OK) {
            double t2 = gt_now_ms();
            s = gt_points_write(out, p, n);
            gt_timings_add(tm, "write", gt_now_ms() - t2);
        }
        free(p);
    }
    gt_tps_free(&t);
    return s;
}

static gt_status do_volume(const char *params, const char *in, const char *out,
                           gt_device_kind dev, gt_timings *tm)
{
    gt_tps t;
    GT_TRY(gt_tps_read(params, &t));
    gt_volume v, w;
    memset(&v, 0, sizeof v);
    memset(&w, 0, sizeof w);
    double t0 = gt_now_ms();
    gt_status s = gt_nrrd_read(in, &v);
    gt_timings_add(tm, "read", gt_now_ms() - t0);
    if (s == GT_OK) s = gt_tps_warp_volume(&t, &v, &w, dev, tm);
    if (s == GT_OK) {
        double t2 = gt_now_ms();
        s = gt_nrrd_write(out, &w, NULL, 0);
        gt_timings_add(tm, "write", gt_now_ms() - t2);
    }
    gt_volume_free(&v);
    free(w.data);
    gt_tps_free(&t);
    return s;
}

int main(int argc, char **argv)
{
    gt_set_progname("stpsfit");
    gt_common_opts co;
    gt_common_opts_init(&co);
    const char *out = NULL, *params = NULL, *apply = NULL, *apply_vol = NULL;
    gt_tps_fit_opts fo = {0};
    bool ascii = false;
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},
        {"lambda", required_argument, 0, 'l'},
        {"kernel", required_argument, 0, 'k'},
        {"params", required_argument, 0, 'p'},
        {"apply", required_argument, 0, 'a'},
        {"apply-volume", required_argument, 0, OPT_APPLY_VOLUME},
        {"ascii", no_argument, 0, OPT_ASCII},
        GT_COMMON_LONGOPTS,
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:l:k:p:a:" GT_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        gt_cli_result cr = gt_common_option(&co, c, optarg);
        if (cr == GT_CLI_HANDLED) continue;
        if (cr == GT_CLI_EXIT_OK) return 0;
        if (cr == GT_CLI_ERROR) return gt_report(GT_ERR_USAGE);
        switch (c) {
        case 'h': fputs(usage_text, stdout); return 0;
        case 'o': out = optarg; break;
        case 'l':
            if (!strcmp(optarg, "gcv")) {
                fo.gcv = true;
            } else {
                fo.gcv = false;
                if (gt_parse_double("--lambda", optarg, 0.0, INFINITY, &fo.lambda) != GT_OK ||
                    !isfinite(fo.lambda))
                    return gt_report(gt_usage_error(
                        "--lambda: '%s' is not a finite number >= 0 or 'gcv'", optarg));
            }
            break;
        case 'k': {
            static const char *const names[] = {"r2logr", "r"};
            int k;
            if (gt_parse_enum("--kernel", optarg, names, 2, &k) != GT_OK)
                return gt_report(GT_ERR_USAGE);
            fo.kernel = (gt_tps_kernel)k;
            break;
        }
        case 'p': params = optarg; break;
        case 'a': apply = optarg; break;
        case OPT_APPLY_VOLUME: apply_vol = optarg; break;
        case OPT_ASCII: ascii = true; break;
        default:
            return gt_report(gt_usage_error("try 'stpsfit --help'"));
        }
    }
    int nargs = argc - optind;
    if (!out) return gt_report(gt_usage_error("no output given (-o FILE); try 'stpsfit --help'"));
    if (apply && apply_vol)
        return gt_report(gt_usage_error("--apply and --apply-volume cannot be combined"));
    if ((apply || apply_vol) && !params)
        return gt_report(gt_usage_error("--apply/--apply-volume need --params FILE"));
    if (params && !apply && !apply_vol)
        return gt_report(gt_usage_error("--params needs --apply POINTS or --apply-volume IN"));
    if (params && nargs != 0)
        return gt_report(gt_usage_error("unexpected operand '%s' with --params", argv[optind]));
    if (!params && nargs != 2)
        return gt_report(gt_usage_error("expected SOURCE and TARGET (got %d operands); try "
                                        "'stpsfit --help'", nargs));
    gt_device_kind dev;
    gt_status s = gt_device_choose(co.device, co.gpu, &dev);
    if (s != GT_OK) return gt_report(s);
    gt_timings tm;
    gt_timings_init(&tm);
    fo.device = dev;
    fo.timings = &tm;
    if (apply) s = do_apply(params, apply, out, dev, ascii, &tm);
    else if (apply_vol) s = do_volume(params, apply_vol, out, dev, &tm);
    else s = do_fit(argv[optind], argv[optind + 1], out, &fo, &tm);
    if (co.timings) gt_timings_print(&tm, stderr, dev == GT_DEVICE_CPU ? "stpsfit (cpu)" : "stpsfit (cuda)");
    gt_device_shutdown();
    if (s != GT_OK) return gt_report(s);
    return 0;
}
