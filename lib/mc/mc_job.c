/* The mcmesh job: a NRRD or raw volume file in, its isosurface out as a PLY
 * mesh, streamed from the file in z-slabs on the chosen device, with the
 * program's messages, --timings report and atomic output.
 * gt_mc_extract_job (mc.h) is the entry point; tools/mcmesh.c only parses
 * options into a gt_mc_job. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_config.h"
#include "common/alloc.h"
#include "common/guard.h"
#include "common/log.h"
#include "common/output.h"
#include "common/timer.h"
#include "common/trace.h"
#include "io/ply.h"
#include "io/volume.h"
#include "mc/mc.h"
#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#endif

void gt_mc_job_init(gt_mc_job *j)
{
    memset(j, 0, sizeof *j);
    j->type = -1;
    j->spacing[0] = j->spacing[1] = j->spacing[2] = 1;
    j->device = GT_DEVICE_AUTO;
}

/* Reads planes from the volume stream as float32 and keeps the data range
 * (for the empty-mesh notice). */
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
    /* one pass over the planes: convert and keep the range; several threads
     * for large pieces (one core scans a 512^3 float32 volume in ~0.1 s) */
    double lo = r->vmin, hi = r->vmax;
    size_t nans = 0;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi) reduction(+ : nans) if (n >= ((size_t)1 << 20))
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
        if (v != v) nans++;
        else {
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    r->vmin = lo;
    r->vmax = hi;
    r->nans += nans;
    return GT_OK;
}

/* Open the volume stream and settle the iso value (the job's, else the
 * NRRD's "iso" key); *info outlives the stream. */
static gt_status open_volume(const gt_mc_job *j, reader *r, gt_volume_info *info, double *iso, gt_timings *tm)
{
    double t0 = gt_now_ms();
    r->vmin = INFINITY;
    r->vmax = -INFINITY;
    gt_status st = gt_volume_stream_open(j->input, j->have_dims ? j->dims : NULL, j->type,
                                         j->have_spacing ? j->spacing : NULL, j->have_origin ? j->origin : NULL,
                                         &r->s);
    gt_timings_add(tm, "file I/O", gt_now_ms() - t0);
    if (st != GT_OK) return st;
    *info = *gt_volume_stream_info(r->s);
    *iso = j->iso;
    if (!j->have_iso) {
        if (!info->has_iso) st = gt_fail(GT_ERR_USAGE, "no iso value: give --iso V (the input has no 'iso' key)");
        else if (!isfinite(info->iso))
            st = gt_fail(GT_ERR_DATA, "the iso key of '%s' is not a finite number", gt_in_name(j->input));
        *iso = info->iso;
    }
    if (st != GT_OK) {
        gt_volume_stream_close(r->s);
        r->s = NULL;
        return st;
    }
    r->type = info->type;
    r->plane = (size_t)info->dims[0] * (size_t)info->dims[1];
    return GT_OK;
}

/* Whether to read the whole volume while the CUDA context starts (its
 * ~0.2 s are otherwise idle; the streamed read can only begin once pinned
 * staging exists): a seekable file (not a pipe or gzip data, whose sizes
 * nothing vouches for), a GPU that may be used, and the volume as float32
 * in at most PREFETCH_MAX bytes and a quarter of the host's memory. A larger
 * volume takes longer to read than the context to start, so it gains little
 * and would lose the streamed read's overlap with the GPU's work (and hold
 * the whole volume in host memory). GT_MC_NO_PREFETCH=1 streams as before
 * (to compare). */
#define PREFETCH_MAX ((size_t)2 << 30)
static bool want_prefetch(const gt_mc_job *j, const gt_volume_info *info, size_t *bytes)
{
    if (!GT_HAVE_CUDA || j->device == GT_DEVICE_CPU || info->data_offset < 0 || info->gzip) return false;
    const char *e = getenv("GT_MC_NO_PREFETCH");
    if (e && *e && strcmp(e, "0") != 0) return false;
    if (!gt_mul3_size((size_t)info->dims[0], (size_t)info->dims[1], (size_t)info->dims[2], bytes) ||
        !gt_mul_size(*bytes, sizeof(float), bytes) || *bytes == 0)
        return false;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 && *bytes <= PREFETCH_MAX && *bytes <= (size_t)pages / 4 * (size_t)psz;
}

/* The whole volume as float32 in huge pages (NULL: not wanted, or no
 * memory for it: then the extraction streams it); *st the read's error. */
static float *prefetch(const gt_mc_job *j, const gt_volume_info *info, reader *r, gt_timings *tm, gt_status *st)
{
    size_t bytes;
    *st = GT_OK;
    if (!want_prefetch(j, info, &bytes)) return NULL;
    float *v = gt_malloc_huge(bytes, "the volume");
    if (!v) {
        gt_errmsg_clear();
        return NULL;
    }
    double t0 = gt_now_ms();
    *st = read_planes(r, 0, info->dims[2], v);
    gt_timings_add(tm, "read (whole volume, while CUDA starts)", gt_now_ms() - t0);
    free(r->raw); /* the conversion's buffer: the streamed reads are done */
    r->raw = NULL;
    r->raw_cap = 0;
    gt_trace("volume read");
    if (*st != GT_OK) {
        free(v);
        return NULL;
    }
    return v;
}

static void release_volume(float *v, bool registered)
{
#if GT_HAVE_CUDA
    if (registered) gt_cu_host_unregister(v);
#else
    (void)registered;
#endif
    free(v);
}

/* Why a mesh has no triangles, as a notice. */
static void explain_empty(const gt_volume_info *info, const reader *r, double iso)
{
    if (info->dims[0] < 2 || info->dims[1] < 2 || info->dims[2] < 2)
        gt_notice("empty mesh: the volume is thinner than 2 voxels along an axis (%lldx%lldx%lld)",
                  (long long)info->dims[0], (long long)info->dims[1], (long long)info->dims[2]);
    else if (r->vmin > r->vmax)
        gt_notice("empty mesh: the volume has no finite values");
    else if (iso > r->vmax || iso <= r->vmin)
        gt_notice("empty mesh: iso %.9g is outside the data range [%.9g, %.9g]", iso, r->vmin, r->vmax);
    else
        gt_notice("empty mesh: no grid edge crosses iso %.9g", iso);
}

/* The PLY of a host mesh (the soup; indexed meshes go through
 * gt_mc_extract_stream_ply); takes m. */
static gt_status write_mesh(const gt_mc_job *j, gt_mc_mesh *m, gt_timings *tm)
{
    gt_status st = GT_OK;
    gt_mc_mesh soupm;
    memset(&soupm, 0, sizeof soupm);
    gt_mc_mesh *w = m;
    if (j->soup) {
        st = gt_mc_mesh_to_soup(m, &soupm);
        if (st != GT_OK) {
            gt_mc_mesh_free(m);
            return st;
        }
        w = &soupm;
    }
    double t2 = gt_now_ms();
    st = gt_ply_write_trimesh(j->output, w->nvert, w->xyz, j->normals ? w->nrm : NULL, 0, NULL, NULL, w->ntri,
                              w->tris, j->ascii ? GT_PLY_ASCII : GT_PLY_BINARY_LE);
    gt_timings_add(tm, "file I/O", gt_now_ms() - t2);
    gt_info("%zu vertices, %zu triangles", m->nvert, m->ntri);
    gt_mc_mesh_free(m);
    gt_mc_mesh_free(&soupm);
    return st;
}

gt_status gt_mc_extract_job(const gt_mc_job *j)
{
    if (!j->input || !j->output) return gt_fail(GT_ERR_USAGE, "gt_mc_extract_job: no input or no output given");
    /* the CUDA start overlaps opening the volume (its header; the data is
     * streamed by the extraction) */
    gt_device_prep prep;
    gt_device_prepare_start(&prep, j->device, j->gpu, NULL);
    gt_timings tm;
    gt_timings_init(&tm);
    double t0 = gt_now_ms(), iso;
    reader r;
    memset(&r, 0, sizeof r);
    gt_volume_info info;
    gt_status st0 = open_volume(j, &r, &info, &iso, &tm);
    gt_trace("input read (volume header)");
    float *pre = st0 == GT_OK ? prefetch(j, &info, &r, &tm, &st0) : NULL;
    gt_device_kind dev;
    if (st0 == GT_OK) st0 = gt_device_prepare_finish(&prep, &dev);
    gt_device_prepare_join(&prep);
    if (st0 != GT_OK) {
        gt_volume_stream_close(r.s);
        free(r.raw);
        free(pre);
        return st0;
    }
    /* the prefetched volume is the source; on the GPU page-locked, so that
     * each slab goes up in one copy at the bus's speed */
    gt_mc_host_volume hv = {pre, r.plane};
    gt_mc_read_fn rd = pre ? gt_mc_read_host : read_planes;
    void *rctx = pre ? (void *)&hv : (void *)&r;
    bool registered = false;
#if GT_HAVE_CUDA
    if (pre && dev == GT_DEVICE_CUDA) {
        double t1 = gt_now_ms();
        registered = gt_cu_host_register(pre, r.plane * (size_t)info.dims[2] * sizeof(float));
        gt_timings_add(&tm, "register the volume", gt_now_ms() - t1);
        if (!registered) gt_info("the volume could not be page-locked: uploading it from pageable memory");
    }
#endif
    gt_trace(dev == GT_DEVICE_CUDA ? "first kernel" : "computing on the CPU");
    gt_mc_params p;
    gt_mc_params_init(&p, iso);
    p.normals = j->normals;
    p.flip = j->flip;
    memcpy(p.dir, info.dir, sizeof p.dir);
    memcpy(p.origin, info.origin, sizeof p.origin);
    gt_info("%lldx%lldx%lld %s, iso %.9g, on %s", (long long)info.dims[0], (long long)info.dims[1],
            (long long)info.dims[2], gt_voltype_name(info.type), iso, gt_device_name(dev));
    if (j->max_gpu_mem && dev != GT_DEVICE_CUDA) gt_info("--max-gpu-mem applies to the GPU; streaming on the CPU too");
    size_t budget = j->max_gpu_mem;
    if (!budget && dev != GT_DEVICE_CUDA && (info.data_offset < 0 || info.gzip)) {
        /* a pipe or gzip data: nothing vouched for the sizes, so the CPU
         * streams slabs (same mesh) rather than allocating the whole volume
         * up front; data that ends early is then named, with both sizes */
        budget = (size_t)1 << 30;
        gt_info("streaming the volume in slabs of at most 1 GiB (a pipe or gzip data)");
    }

    const gt_ply_format fmt = j->ascii ? GT_PLY_ASCII : GT_PLY_BINARY_LE;
    double total_ms;
    gt_status st;
    gt_mc_ply_result res;
    memset(&res, 0, sizeof res);
    if (!j->soup) {
        /* extraction and write in one: on the GPU the mesh goes to the file
         * in pieces, downloads overlapping the write */
        st = gt_mc_extract_stream_ply(dev, info.dims, rd, rctx, &p, budget, 0, j->output, fmt, &res, &tm);
        total_ms = res.extract_ms;
        gt_trace("job done");
        gt_volume_stream_close(r.s);
        free(r.raw);
        release_volume(pre, registered);
        if (st != GT_OK) return st;
        if (r.nans) gt_info("%zu NaN voxels (treated as outside)", r.nans);
        if (res.ntri == 0) explain_empty(&info, &r, iso);
        gt_info("%zu vertices, %zu triangles", res.nvert, res.ntri);
    } else {
        gt_mc_mesh m;
        memset(&m, 0, sizeof m);
        double t1 = gt_now_ms();
        st = gt_mc_extract_stream(dev, info.dims, rd, rctx, &p, budget, 0, &m, &tm);
        total_ms = gt_now_ms() - t1;
        gt_trace("job done");
        gt_volume_stream_close(r.s);
        free(r.raw);
        release_volume(pre, registered);
        if (st != GT_OK) {
            gt_mc_mesh_free(&m);
            return st;
        }
        if (r.nans) gt_info("%zu NaN voxels (treated as outside)", r.nans);
        if (m.ntri == 0) explain_empty(&info, &r, iso);
        GT_TRY(write_mesh(j, &m, &tm));
    }
    gt_trace("output written");
    if (j->timings) {
        gt_timings_print(&tm, stderr, "mcmesh stages");
        if (res.overlapped)
            fprintf(stderr, "download+write overlapped: %.1f MB came down in pieces (double-buffered, pinned when it takes more than one); "
                    "the writer waited %.3f ms for them\n", res.download_bytes / 1e6, res.download_wait_ms);
        fprintf(stderr, "extraction (incl. slab reads) %.3f ms; total %.3f ms\n", total_ms, gt_now_ms() - t0);
        if (dev == GT_DEVICE_CUDA)
            fprintf(stderr, "peak device memory: %.1f MiB\n", gt_mc_device_peak_bytes() / 1048576.0);
    }
    return GT_OK;
}

gt_status gt_mc_job_set_type(gt_mc_job *j, const char *opt, const char *name)
{
    gt_voltype t;
    GT_TRY(gt_voltype_parse(opt, name, &t));
    j->type = (int)t;
    return GT_OK;
}

gt_status gt_mc_job_check_paths(const gt_mc_job *j, bool format_given)
{
    char datafile[1024];
    gt_volume_data_file(j->input, datafile, sizeof datafile);
    gt_guard g;
    gt_guard_init(&g);
    gt_guard_input(&g, j->input, "the volume");
    gt_guard_input(&g, datafile[0] ? datafile : NULL, "the NRRD's data file");
    gt_guard_output(&g, j->output, "-o", format_given ? NULL : "ply", "--out-format");
    gt_status st = gt_guard_check(&g);
    gt_guard_free(&g);
    return st;
}
