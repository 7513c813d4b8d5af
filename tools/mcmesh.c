/* mcmesh: marching cubes with shared vertices (an indexed, watertight mesh)
 * from a NRRD or raw volume, on the GPU (CPU reference with --device cpu).
 *   mcmesh [options] VOLUME -o MESH.ply
 * Options go into a gt_mc_job; lib/mc/mc_job.c does the work. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/log.h"
#include "common/trace.h"
#include "mc/mc.h"

static const char usage_text[] =
    "Usage: mcmesh [options] VOLUME -o MESH.ply\n"
    "Extract the isosurface of a volume as an indexed triangle mesh (marching cubes\n"
    "with shared vertices: one vertex per intersected grid edge; closed and manifold\n"
    "where the surface does not reach the volume's border). VOLUME is NRRD or raw\n"
    "(with --dims and --type); '-' reads stdin. Corners with value >= iso are inside;\n"
    "NaN is outside. Triangles face toward decreasing values (--flip reverses).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE       output PLY ('-' = stdout; required); never the input\n"
    "      --out-format ply    write PLY even where FILE's extension names another\n"
    "                          format (refused otherwise)\n"
    "  -i, --iso V             iso value (required unless the NRRD has a key 'iso')\n"
    "      --normals           write per-vertex normals (minus the field gradient)\n"
    "      --flip              reverse the orientation (triangles and normals)\n"
    "      --soup              write a triangle soup (3 vertices per triangle)\n"
    "      --ascii             ascii PLY (default binary little endian)\n"
    "      --max-gpu-mem SIZE  device memory budget, e.g. 512M, 2G; larger volumes\n"
    "                          are streamed from the file in z-slabs (same mesh)\n"
    "Raw input:\n"
    "      --dims X,Y,Z        volume size in voxels (x fastest)\n"
    "      --type T            uint8|int8|uint16|int16|uint32|int32|float32|float64\n"
    "      --spacing SX,SY,SZ  voxel spacing (default 1,1,1)\n"
    "      --origin X,Y,Z      world position of voxel (0,0,0) (default 0,0,0)\n" GT_COMMON_HELP
    "\n"
    "Exit status: 0 ok (also for an empty mesh), 1 runtime failure, 2 usage,\n"
    "3 bad input data, 4 GPU unavailable or out of memory.\n";

enum {
    OPT_NORMALS = GT_OPT_TOOL_BASE,
    OPT_FLIP,
    OPT_SOUP,
    OPT_ASCII,
    OPT_MAXMEM,
    OPT_DIMS,
    OPT_TYPE,
    OPT_SPACING,
    OPT_ORIGIN,
    OPT_OUTFMT
};

static gt_status parse_size(const char *opt, const char *s, size_t *out)
{
    char *end;
    double v = strtod(s, &end);
    double mul = 1;
    if (end != s) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mul = 1024.0; end++; break;
        case 'M': mul = 1048576.0; end++; break;
        case 'G': mul = 1073741824.0; end++; break;
        case 'T': mul = 1099511627776.0; end++; break;
        default: break;
        }
        if (toupper((unsigned char)*end) == 'B' || toupper((unsigned char)*end) == 'I') end++;
    }
    if (end == s || *end || !isfinite(v) || v * mul < 1 || v * mul > 1e18)
        return gt_fail(GT_ERR_USAGE, "%s: '%s' is not a size in bytes (e.g. 512M, 2G)", opt, s);
    *out = (size_t)(v * mul);
    return GT_OK;
}

/* One option of mcmesh's own: -1 to go on, else the exit code. */
static int set_option(gt_mc_job *j, int c, const char *arg)
{
    gt_status st = GT_OK;
    switch (c) {
    case 'h': fputs(usage_text, stdout); return 0;
    case 'o': st = gt_parse_path_once("-o", arg, &j->output); break;
    case 'i': st = gt_parse_double("--iso", arg, -INFINITY, INFINITY, &j->iso); j->have_iso = true; break;
    case OPT_NORMALS: j->normals = true; break;
    case OPT_FLIP: j->flip = true; break;
    case OPT_SOUP: j->soup = true; break;
    case OPT_ASCII: j->ascii = true; break;
    case OPT_MAXMEM: st = parse_size("--max-gpu-mem", arg, &j->max_gpu_mem); break;
    case OPT_DIMS: {
        long d[3] = {0, 0, 0};
        st = gt_parse_ivec("--dims", arg, 3, 1, 1L << 40, d);
        for (int a = 0; a < 3; a++) j->dims[a] = d[a];
        j->have_dims = true;
        break;
    }
    case OPT_TYPE: st = gt_mc_job_set_type(j, "--type", arg); break;
    case OPT_SPACING:
        st = gt_parse_vec("--spacing", arg, 3, j->spacing);
        if (st == GT_OK && (j->spacing[0] <= 0 || j->spacing[1] <= 0 || j->spacing[2] <= 0))
            st = gt_fail(GT_ERR_USAGE, "--spacing: '%s': spacings must be positive", arg);
        j->have_spacing = true;
        break;
    case OPT_ORIGIN: st = gt_parse_vec("--origin", arg, 3, j->origin); j->have_origin = true; break;
    default: fprintf(stderr, "Try 'mcmesh --help'.\n"); return gt_exit_code(GT_ERR_USAGE);
    }
    return st != GT_OK ? gt_report(st) : -1;
}

int main(int argc, char **argv)
{
    gt_set_progname("mcmesh");
    gt_trace("main entry");
    gt_common_opts co;
    gt_common_opts_init(&co);
    gt_mc_job j;
    gt_mc_job_init(&j);
    int outfmt = -1;
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},
        {"iso", required_argument, 0, 'i'},
        {"normals", no_argument, 0, OPT_NORMALS},
        {"flip", no_argument, 0, OPT_FLIP},
        {"soup", no_argument, 0, OPT_SOUP},
        {"ascii", no_argument, 0, OPT_ASCII},
        {"max-gpu-mem", required_argument, 0, OPT_MAXMEM},
        {"dims", required_argument, 0, OPT_DIMS},
        {"type", required_argument, 0, OPT_TYPE},
        {"spacing", required_argument, 0, OPT_SPACING},
        {"origin", required_argument, 0, OPT_ORIGIN},
        {"out-format", required_argument, 0, OPT_OUTFMT},
        GT_COMMON_LONGOPTS,
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:i:" GT_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        gt_cli_result cr = gt_common_option(&co, c, optarg);
        if (cr == GT_CLI_HANDLED) continue;
        if (cr == GT_CLI_EXIT_OK) return 0;
        if (cr == GT_CLI_ERROR) return gt_report(GT_ERR_USAGE);
        if (c == OPT_OUTFMT) {
            static const char *const outfmts[] = {"ply"};
            if (gt_parse_enum("--out-format", optarg, outfmts, 1, &outfmt) != GT_OK) return gt_report(GT_ERR_USAGE);
            continue;
        }
        int rc = set_option(&j, c, optarg);
        if (rc >= 0) return rc;
    }
    if (optind >= argc) return gt_report(gt_usage_error("no input volume (try 'mcmesh --help')"));
    if (optind + 1 < argc) return gt_report(gt_usage_error("one input volume expected, got '%s' too", argv[optind + 1]));
    if (!j.output) return gt_report(gt_usage_error("no output: give -o MESH.ply ('-' for stdout)"));
    j.input = argv[optind];
    gt_status gs = gt_mc_job_check_paths(&j, outfmt >= 0);
    if (gs != GT_OK) return gt_report(gs);
    j.device = co.device;
    j.gpu = co.gpu;
    j.timings = co.timings;
    gt_status st = gt_mc_extract_job(&j);
    if (st != GT_OK) return gt_report(st);
    gt_device_shutdown();
    return 0;
}
