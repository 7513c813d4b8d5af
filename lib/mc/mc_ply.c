/* An isosurface straight to a PLY file (gt_mc_extract_stream_ply, mc.h).
 * When the CUDA path extracted the whole volume in one pass, the mesh is
 * still on the device: it is fed to the piecewise PLY writer
 * (gt_ply_write_trisrc) through a double-buffered pinned download
 * (io/ply_gpu.h over common/gpu_fetch.h), so that piece k+1 crosses the
 * bus while piece k is formatted and written. Otherwise (CPU, or slabs) the host mesh
 * is written as it is. */
#include <string.h>

#include "gt_config.h"
#include "common/device.h"
#include "mc/mc.h"
#include "mc/mc_stream.h"
#if GT_HAVE_CUDA
#include "io/ply_gpu.h"
#include "kernels/mc/mc_cuda.h"
#endif

#if GT_HAVE_CUDA
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
    double t0 = gt_now_ms();
    gt_cu_fetch *f = NULL;
    gt_ply_trisrc src;
    gt_status st = gt_ply_trisrc_gpu(xyz, nrm, (size_t)nv, tris, (size_t)nt, stream, &f, &src);
    if (st == GT_OK) {
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
