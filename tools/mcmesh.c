/* mcmesh: marching cubes with shared vertices (an indexed, watertight mesh)
 * from a NRRD or raw volume, on the GPU (CPU reference with --device cpu).
 *   mcmesh [options] VOLUME -o MESH.ply */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/log.h"
#include "common/output.h"
#include "common/timer.h"
#include "io/ply.h"
#include "io/volume.h"
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
    "  -o, --output FILE       output PLY ('-' = stdout; required)\n"
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
    OPT_ORIGIN
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

typedef struct reader {
    gt_volume_stream *s;
    gt_voltype type;
    size_t plane;
    void *raw;
    size_t raw_cap;
    double vmin, vmax;
    size_t nans;
} reader;

static gt_status read_planes(void *ctx, int64_t z0, int64_t nz, float *dst)
{
    reader *r = ctx;
    const size_t n = (size_t)nz * r->plane, es = gt_voltype_size(r->type);
    if (r->type != GT_VOL_FLOAT32 && n * es > r->raw_cap) {
        free(r->raw);
        r->raw = malloc(n * es);
        if (!r->raw) return gt_fail(GT_ERR_RUNTIME, "out of memory (%zu bytes)", n * es);
        r->raw_cap = n * es;
    }
    void *buf = r->type == GT_VOL_FLOAT32 ? (void *)dst : r->raw;
    GT_TRY(gt_volume_stream_read(r->s, z0, nz, buf));
    for (size_t i = 0; i < n; i++) {
        double v;
        switch (r->type) {
        case GT_VOL_UINT8: v = ((const uint8_t *)buf)[i]; break;
        case GT_VOL_INT8: v = ((const int8_t *)buf)[i]; break;
        case GT_VOL_UINT16: v = ((const uint16_t *)buf)[i]; break;
        case GT_VOL_INT16: v = ((const int16_t *)buf)[i]; break;
        case GT_VOL_UINT32: v = ((const uint32_t *)buf)[i]; break;
        case GT_VOL_INT32: v = ((const int32_t *)buf)[i]; break;
        case GT_VOL_FLOAT32: v = dst[i]; break;
        default: v = ((const double *)buf)[i]; break;
        }
        if (r->type != GT_VOL_FLOAT32) dst[i] = (float)v;
        if (v != v) r->nans++;
        else {
            if (v < r->vmin) r->vmin = v;
            if (v > r->vmax) r->vmax = v;
        }
    }
    return GT_OK;
}

int main(int argc, char **argv)
{
    gt_set_progname("mcmesh");
    gt_common_opts co;
    gt_common_opts_init(&co);
    const char *out = NULL;
    bool have_iso = false, have_dims = false, have_spacing = false, have_origin = false, soup = false,
         ascii = false;
    double iso = 0, spacing[3] = {1, 1, 1}, origin[3] = {0, 0, 0};
    long dimsl[3] = {0, 0, 0};
    int type = -1;
    size_t maxmem = 0;
    gt_mc_params p;
    gt_mc_params_init(&p, 0.0);
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
        GT_COMMON_LONGOPTS,
        {0, 0, 0, 0}};
    int c;
    gt_status st = GT_OK;
    while ((c = getopt_long(argc, argv, "o:i:" GT_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        gt_cli_result cr = gt_common_option(&co, c, optarg);
        if (cr == GT_CLI_HANDLED) continue;
        if (cr == GT_CLI_EXIT_OK) return 0;
        if (cr == GT_CLI_ERROR) return gt_report(GT_ERR_USAGE);
        switch (c) {
        case 'h': fputs(usage_text, stdout); return 0;
        case 'o': out = optarg; break;
        case 'i': st = gt_parse_double("--iso", optarg, -INFINITY, INFINITY, &iso); have_iso = true; break;
        case OPT_NORMALS: p.normals = true; break;
        case OPT_FLIP: p.flip = true; break;
        case OPT_SOUP: soup = true; break;
        case OPT_ASCII: ascii = true; break;
        case OPT_MAXMEM: st = parse_size("--max-gpu-mem", optarg, &maxmem); break;
        case OPT_DIMS: st = gt_parse_ivec("--dims", optarg, 3, 1, 1L << 40, dimsl); have_dims = true; break;
        case OPT_TYPE: {
            gt_voltype t;
            st = gt_voltype_parse("--type", optarg, &t);
            type = (int)t;
            break;
        }
        case OPT_SPACING:
            st = gt_parse_vec("--spacing", optarg, 3, spacing);
            if (st == GT_OK && (spacing[0] <= 0 || spacing[1] <= 0 || spacing[2] <= 0))
                st = gt_fail(GT_ERR_USAGE, "--spacing: '%s': spacings must be positive", optarg);
            have_spacing = true;
            break;
        case OPT_ORIGIN: st = gt_parse_vec("--origin", optarg, 3, origin); have_origin = true; break;
        default: fprintf(stderr, "Try 'mcmesh --help'.\n"); return gt_exit_code(GT_ERR_USAGE);
        }
        if (st != GT_OK) return gt_report(st);
    }
    if (optind >= argc) return gt_report(gt_usage_error("no input volume (try 'mcmesh --help')"));
    if (optind + 1 < argc) return gt_report(gt_usage_error("one input volume expected, got '%s' too", argv[optind + 1]));
    if (!out) return gt_report(gt_usage_error("no output: give -o MESH.ply ('-' for stdout)"));
    const char *in = argv[optind];

    gt_device_kind dev;
    st = gt_device_choose(co.device, co.gpu, &dev);
    if (st != GT_OK) return gt_report(st);

    gt_timings tm;
    gt_timings_init(&tm);
    double t0 = gt_now_ms();
    int64_t dims64[3] = {dimsl[0], dimsl[1], dimsl[2]};
    reader r;
    memset(&r, 0, sizeof r);
    r.vmin = INFINITY;
    r.vmax = -INFINITY;
    st = gt_volume_stream_open(in, have_dims ? dims64 : NULL, type, have_spacing ? spacing : NULL,
                               have_origin ? origin : NULL, &r.s);
    gt_timings_add(&tm, "file I/O", gt_now_ms() - t0);
    if (st != GT_OK) return gt_report(st);
    const gt_volume_info vinfo = *gt_volume_stream_info(r.s); /* outlives the stream */
    const gt_volume_info *info = &vinfo;
    if (!have_iso) {
        if (!info->has_iso) {
            gt_volume_stream_close(r.s);
            return gt_report(gt_usage_error("no iso value: give --iso V (the input has no 'iso' key)"));
        }
        iso = info->iso;
        if (!isfinite(iso)) {
            gt_volume_stream_close(r.s);
            return gt_report(gt_fail(GT_ERR_DATA, "the iso key of '%s' is not a finite number", gt_in_name(in)));
        }
    }
    p.iso = iso;
    memcpy(p.dir, info->dir, sizeof p.dir);
    memcpy(p.origin, info->origin, sizeof p.origin);
    r.type = info->type;
    r.plane = (size_t)info->dims[0] * (size_t)info->dims[1];
    gt_info("%lldx%lldx%lld %s, iso %.9g, on %s", (long long)info->dims[0], (long long)info->dims[1],
            (long long)info->dims[2], gt_voltype_name(info->type), iso, gt_device_name(dev));
    if (maxmem && dev != GT_DEVICE_CUDA) gt_info("--max-gpu-mem applies to the GPU; streaming on the CPU too");

    gt_mc_mesh m;
    memset(&m, 0, sizeof m);
    double t1 = gt_now_ms();
    st = gt_mc_extract_stream(dev, info->dims, read_planes, &r, &p, maxmem, 0, &m, &tm);
    double total_ms = gt_now_ms() - t1;
    gt_volume_stream_close(r.s);
    free(r.raw);
    if (st != GT_OK) {
        gt_mc_mesh_free(&m);
        return gt_report(st);
    }
    if (r.nans) gt_info("%zu NaN voxels (treated as outside)", r.nans);
    if (m.ntri == 0) {
        if (info->dims[0] < 2 || info->dims[1] < 2 || info->dims[2] < 2)
            gt_notice("empty mesh: the volume is thinner than 2 voxels along an axis (%lldx%lldx%lld)",
                      (long long)info->dims[0], (long long)info->dims[1], (long long)info->dims[2]);
        else if (r.vmin > r.vmax)
            gt_notice("empty mesh: the volume has no finite values");
        else if (iso > r.vmax || iso <= r.vmin)
            gt_notice("empty mesh: iso %.9g is outside the data range [%.9g, %.9g]", iso, r.vmin, r.vmax);
        else
            gt_notice("empty mesh: no grid edge crosses iso %.9g", iso);
    }
    gt_mc_mesh soupm;
    memset(&soupm, 0, sizeof soupm);
    gt_mc_mesh *w = &m;
    if (soup) {
        st = gt_mc_mesh_to_soup(&m, &soupm);
        if (st != GT_OK) {
            gt_mc_mesh_free(&m);
            return gt_report(st);
        }
        w = &soupm;
    }
    double t2 = gt_now_ms();
    st = gt_ply_write_trimesh(out, w->nvert, w->xyz, p.normals ? w->nrm : NULL, 0, NULL, NULL, w->ntri,
                              w->tris, ascii ? GT_PLY_ASCII : GT_PLY_BINARY_LE);
    gt_timings_add(&tm, "file I/O", gt_now_ms() - t2);
    gt_info("%zu vertices, %zu triangles", m.nvert, m.ntri);
    gt_mc_mesh_free(&m);
    gt_mc_mesh_free(&soupm);
    if (st != GT_OK) return gt_report(st);
    if (co.timings) {
        gt_timings_print(&tm, stderr, "mcmesh stages");
        fprintf(stderr, "extraction (incl. slab reads) %.3f ms; total %.3f ms\n", total_ms, gt_now_ms() - t0);
        if (dev == GT_DEVICE_CUDA)
            fprintf(stderr, "peak device memory: %.1f MiB\n", gt_mc_device_peak_bytes() / 1048576.0);
    }
    gt_device_shutdown();
    return 0;
}
