/* An isosurface straight to a PLY file (gt_mc_extract_stream_ply, mc.h).
 * When the CUDA path extracted the whole volume in one pass, the mesh is
 * still on the device: it is fed to the piecewise PLY writer
 * (gt_ply_write_trisrc) through a double-buffered pinned download
 * (kernels/common/cu_fetch.h), so that piece k+1 crosses the bus while
 * piece k is formatted and written. Otherwise (CPU, or slabs) the host mesh
 * is written as it is. */
#include <stdlib.h>
#include <string.h>

#include "gt_config.h"
#include "common/device.h"
#include "mc/mc.h"
#include "mc/mc_stream.h"
#if GT_HAVE_CUDA
#include "kernels/common/cu_fetch.h"
#include "kernels/mc/mc_cuda.h"
#endif

#if GT_HAVE_CUDA
#define PIECE_ROWS ((size_t)1 << 20) /* 12 MB per array and piece */

/* rows per piece; GT_PLY_PIECE_ROWS overrides it (tests: many small pieces) */
static size_t piece_rows(void)
{
    const char *e = getenv("GT_PLY_PIECE_ROWS");
    long long n = e ? atoll(e) : 0;
    return n > 0 ? (size_t)n : PIECE_ROWS;
}

enum { PH_VERTS, PH_TRIS };

static gt_status dev_verts(void *ctx, size_t v0, size_t n, const float **xyz, const float **nrm, const float **extra)
{
    void *h[GT_CU_FETCH_MAX_ARRAYS] = {NULL};
    GT_TRY(gt_cu_fetch_get(ctx, PH_VERTS, v0, n, h));
    *xyz = h[0];
    *nrm = h[1];
    *extra = NULL;
    return GT_OK;
}

static gt_status dev_tris(void *ctx, size_t t0, size_t n, const int32_t **tris)
{
    void *h[GT_CU_FETCH_MAX_ARRAYS] = {NULL};
    GT_TRY(gt_cu_fetch_get(ctx, PH_TRIS, t0, n, h));
    *tris = h[0];
    return GT_OK;
}

/* the device mesh of cu to path; destroys cu. Out of memory for the pinned
 * buffers gets mcmesh's --max-gpu-mem advice: slabs come to the host one by
 * one and need none. */
static gt_status write_from_device(gt_mc_cuda *cu, const gt_mc_geom *g, const char *path, gt_ply_format fmt,
                                   gt_mc_ply_result *out, gt_timings *tm)
{
    const float *xyz, *nrm;
    const int32_t *tris;
    uint64_t nv, nt;
    void *stream;
    gt_mc_cuda_results(cu, &xyz, &nrm, &tris, &nv, &nt, &stream);
    out->nvert = (size_t)nv;
    out->ntri = (size_t)nt;
    out->overlapped = true;
    gt_cu_fetch_phase ph[2] = {
        {.narr = 2, .d = {xyz, nrm}, .row_bytes = {12, 12}, .rows = (size_t)nv},
        {.narr = 1, .d = {tris}, .row_bytes = {12}, .rows = (size_t)nt},
    };
    double t0 = gt_now_ms();
    gt_cu_fetch *f = NULL;
    const size_t rows = piece_rows();
    gt_status st = gt_cu_fetch_create(ph, 2, rows, stream, &f);
    if (st == GT_OK) {
        gt_ply_trisrc src = {.nvert = (size_t)nv, .ntri = (size_t)nt, .normals = nrm != NULL, .chunk = rows,
                             .verts = dev_verts, .tris = dev_tris, .ctx = f};
        st = gt_ply_write_trisrc(path, &src, fmt);
        out->download_wait_ms = gt_cu_fetch_wait_ms(f);
        out->download_bytes = gt_cu_fetch_bytes(f);
    } else if (gt_gpu_oom(st)) {
        gt_mc_slab_hint(g, g->dims[2]);
    }
    gt_cu_fetch_destroy(f);
    gt_mc_cuda_destroy(cu);
    if (tm) gt_timings_add(tm, "download+write (overlapped)", gt_now_ms() - t0);
    return st;
}
#endif

gt_status gt_mc_extract_stream_ply(gt_device_kind dev, const int64_t dims[3], gt_mc_read_fn read, void *ctx,
                                   const gt_mc_params *p, size_t max_mem, int64_t slab_planes, const char *path,
                                   gt_ply_format fmt, gt_mc_ply_result *out, gt_timings *tm)
{
    memset(out, 0, sizeof *out);
    gt_mc_mesh m;
    memset(&m, 0, sizeof m);
    void *keep = NULL;
    double t0 = gt_now_ms();
    gt_status st = gt_mc_extract_stream_keep(dev, dims, read, ctx, p, max_mem, slab_planes, &m, tm,
                                             GT_HAVE_CUDA ? &keep : NULL);
    out->extract_ms = gt_now_ms() - t0;
    if (st != GT_OK) {
        gt_mc_mesh_free(&m);
        return st;
    }
#if GT_HAVE_CUDA
    if (keep) {
        gt_mc_geom g;
        st = gt_mc_geom_init(&g, dims, p);
        if (st != GT_OK) {
            gt_mc_cuda_destroy(keep);
            return st;
        }
        return write_from_device(keep, &g, path, fmt, out, tm);
    }
#endif
    out->nvert = m.nvert;
    out->ntri = m.ntri;
    double t1 = gt_now_ms();
    st = gt_ply_write_trimesh(path, m.nvert, m.xyz, p->normals ? m.nrm : NULL, 0, NULL, NULL, m.ntri, m.tris, fmt);
    if (tm) gt_timings_add(tm, "file I/O", gt_now_ms() - t1);
    gt_mc_mesh_free(&m);
    return st;
}
