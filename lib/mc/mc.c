/* Marching cubes dispatch: whole-volume and slab-streamed extraction on the
 * CPU reference or the CUDA path, and the soup conversion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_config.h"
#include "common/device.h"
#include "common/log.h"
#include "common/progress.h"
#include "mc/mc.h"
#include "mc/mc_stream.h"
#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#include "kernels/mc/mc_cuda.h"
#endif

gt_status gt_mc_read_host(void *ctx, int64_t z0, int64_t nz, float *dst)
{
    const gt_mc_host_volume *s = ctx;
    memcpy(dst, s->vol + (size_t)z0 * s->plane, (size_t)nz * s->plane * sizeof(float));
    return GT_OK;
}

gt_status gt_mc_extract(gt_device_kind dev, const float *vol, const int64_t dims[3],
                        const gt_mc_params *p, gt_mc_mesh *m, gt_timings *tm)
{
    gt_mc_geom g;
    GT_TRY(gt_mc_geom_init(&g, dims, p));
    if (dims[0] < 2 || dims[1] < 2 || dims[2] < 2) return GT_OK; /* no voxels: empty mesh */
    if (dev != GT_DEVICE_CUDA) {
        gt_timer t;
        gt_timer_start(&t, false, NULL);
        gt_status st = gt_mc_slab_cpu(vol, 0, dims[2], 0, dims[2], &g, m);
        if (tm) gt_timings_add(tm, "extract (cpu)", gt_timer_stop(&t));
        return st;
    }
    gt_mc_host_volume src = {vol, (size_t)(dims[0] * dims[1])};
    return gt_mc_extract_stream(dev, dims, gt_mc_read_host, &src, p, 0, dims[2], m, tm);
}

/* planes per slab so that the working set fits in `budget` */
static int64_t planes_for(size_t budget, size_t per_plane, int64_t Z)
{
    if (budget == 0) return Z;
    int64_t P = (int64_t)(budget / (per_plane ? per_plane : 1)) - 3;
    if (P < 1) P = 1;
    return P > Z ? Z : P;
}

#if GT_HAVE_CUDA
/* After the GPU ran out of memory with slabs of P planes: the --max-gpu-mem
 * that gives slabs of half as many (the budget planes_for reads back), or
 * why none helps. */
void gt_mc_slab_hint(const gt_mc_geom *g, int64_t P)
{
    if (P <= 1) {
        gt_gpu_oom_hint("z-slabs of one plane of %lldx%lld voxels are the smallest: no --max-gpu-mem helps; "
                        "use --device cpu", (long long)g->dims[0], (long long)g->dims[1]);
        return;
    }
    const size_t per = gt_mc_cuda_base_bytes(g, 1) * 2;
    const int64_t half = P / 2;
    const size_t want = per * (size_t)(half + 3);
    char v[32];
    if (want >= ((size_t)16 << 20)) snprintf(v, sizeof v, "%zuM", (want + ((size_t)1 << 20) - 1) >> 20);
    else snprintf(v, sizeof v, "%zuK", (want + 1023) >> 10);
    gt_gpu_oom_hint("retry with --max-gpu-mem %s (z-slabs of %lld planes instead of %lld), or --device cpu", v,
                    (long long)half, (long long)P);
}

/* Bring planes [nb, ne) to the device for a slab: the planes the last slab
 * already holds stay there; the rest are read piece by piece into pinned
 * staging slots, each piece's copy running while the next one is read. The
 * timings say what overlapped: "read (overlaps upload)" is the time in the
 * reader, "upload wait" the time the host waited for copies (a free slot,
 * then the last piece). */
static gt_status upload_overlapped(gt_mc_cuda *cu, gt_mc_read_fn read, void *ctx, int64_t nb, int64_t ne,
                                   gt_timings *tm)
{
    int64_t z;
    GT_TRY(gt_mc_cuda_stage_begin(cu, nb, ne - nb, &z));
    const int64_t sp = gt_mc_cuda_stage_planes(cu);
    double t_read = 0, t_wait = 0;
    gt_status st = GT_OK;
    while (z < ne && st == GT_OK) {
        const int64_t k = ne - z < sp ? ne - z : sp;
        float *h;
        double t0 = gt_now_ms();
        st = gt_mc_cuda_stage_buffer(cu, &h);
        double t1 = gt_now_ms();
        t_wait += t1 - t0;
        if (st != GT_OK) break;
        st = read(ctx, z, k, h);
        t_read += gt_now_ms() - t1;
        if (st == GT_OK) st = gt_mc_cuda_stage_upload(cu, h, z, k);
        z += k;
    }
    double t2 = gt_now_ms();
    if (st == GT_OK) st = gt_mc_cuda_stage_wait(cu);
    t_wait += gt_now_ms() - t2;
    if (tm) {
        gt_timings_add(tm, "read (overlaps upload)", t_read);
        gt_timings_add(tm, "upload wait", t_wait);
    }
    return st;
}
#endif

/* The streamed extraction; with keep (CUDA builds) and the whole volume in
 * one pass on CUDA, the slab's results are left on the device and the
 * context handed over in *keep instead of downloaded into m. */
gt_status gt_mc_extract_stream_keep(gt_device_kind dev, const int64_t dims[3], gt_mc_read_fn read, void *ctx,
                                    const gt_mc_params *p, size_t max_mem, int64_t slab_planes, gt_mc_mesh *m,
                                    gt_timings *tm, void **keep)
{
    if (keep) *keep = NULL;
    gt_mc_geom g;
    GT_TRY(gt_mc_geom_init(&g, dims, p));
    /* no voxels: an empty mesh (edge crossings alone make no triangles) */
    if (dims[0] < 2 || dims[1] < 2 || dims[2] < 2) return GT_OK;
    const int64_t Z = dims[2];
    const size_t plane = (size_t)dims[0] * (size_t)dims[1];
    int64_t P = slab_planes;
#if GT_HAVE_CUDA
    gt_mc_cuda *cu = NULL;
#endif
    if (dev == GT_DEVICE_CUDA) {
#if GT_HAVE_CUDA
        if (P <= 0) {
            size_t freeb = 0, total = 0;
            GT_TRY(gt_cu_mem_info(&freeb, &total));
            size_t budget = max_mem ? max_mem : freeb - freeb / 8;
            /* volume planes take at most half; the rest is for the mesh */
            size_t per = gt_mc_cuda_base_bytes(&g, 1) * 2;
            P = planes_for(budget, per, Z);
            if (max_mem && gt_mc_cuda_base_bytes(&g, 3) * 2 > max_mem)
                return gt_fail(GT_ERR_USAGE, "--max-gpu-mem: %zu bytes cannot hold 4 planes of %lldx%lld voxels",
                               max_mem, (long long)dims[0], (long long)dims[1]);
        }
#else
        return gt_fail(GT_ERR_GPU, "built without CUDA");
#endif
    } else if (P <= 0) {
        P = planes_for(max_mem, plane * (sizeof(float) + 9), Z);
    }
    if (P > Z) P = Z;
    int64_t cap = P + 3 < Z ? P + 3 : Z;
    /* the CPU reads into a host buffer (a volume already in host memory is
     * read in place); the GPU path reads into pinned staging slots and
     * keeps the slab only on the device */
    const gt_mc_host_volume *hv = read == gt_mc_read_host ? ctx : NULL;
    float *buf = NULL;
    if (dev != GT_DEVICE_CUDA && !hv) {
        size_t bufbytes = (size_t)cap * plane * sizeof(float);
        buf = malloc(bufbytes ? bufbytes : 1);
        if (!buf) return gt_fail(GT_ERR_RUNTIME, "out of memory (%lld planes of %zu voxels)", (long long)cap, plane);
    }
    gt_status st = GT_OK;
    gt_progress prog;
    gt_progress_start(&prog, P < Z ? "z-slabs" : "extract", (double)Z);
#if GT_HAVE_CUDA
    if (dev == GT_DEVICE_CUDA) {
        st = gt_mc_cuda_create(&g, cap, &cu);
        if (st != GT_OK) goto done;
    }
#endif
    if (P < Z) gt_info("processing %lld z-slabs of %lld planes", (long long)((Z + P - 1) / P), (long long)P);
    int64_t lb = 0, le = 0; /* planes held in buf */
    for (int64_t z0 = 0; z0 < Z; z0 += P) {
        gt_progress_update(&prog, (double)z0, NULL);
        int64_t z1 = z0 + P < Z ? z0 + P : Z;
        int64_t nb = z0 > 0 ? z0 - 1 : 0, ne = z1 + 2 < Z ? z1 + 2 : Z;
#if GT_HAVE_CUDA
        if (dev == GT_DEVICE_CUDA) {
            uint64_t nv = 0, nt = 0;
            if (hv) /* straight from the caller's memory */
                st = gt_mc_cuda_upload(cu, hv->vol + (size_t)nb * plane, nb, ne - nb, tm);
            else
                st = upload_overlapped(cu, read, ctx, nb, ne, tm);
            if (st == GT_OK) st = gt_mc_cuda_slab(cu, z0, z1, m->nvert, &nv, &nt, tm);
            if (st == GT_OK && keep && P >= Z) {
                *keep = cu; /* the caller downloads and frees it */
                cu = NULL;
            } else if (st == GT_OK) {
                st = gt_mc_cuda_download(cu, m, tm);
            }
            if (st != GT_OK) goto done;
            continue;
        }
#endif
        if (hv) {
            gt_timer t;
            gt_timer_start(&t, false, NULL);
            st = gt_mc_slab_cpu(hv->vol + (size_t)nb * plane, nb, ne - nb, z0, z1, &g, m);
            if (tm) gt_timings_add(tm, "extract (cpu)", gt_timer_stop(&t));
            if (st != GT_OK) goto done;
            continue;
        }
        if (nb > lb && le > nb) memmove(buf, buf + (size_t)(nb - lb) * plane, (size_t)(le - nb) * plane * sizeof(float));
        if (le < nb) le = nb; /* not reached: slabs overlap */
        int64_t have = le - nb;
        lb = nb;
        if (ne > le) {
            gt_timer t;
            gt_timer_start(&t, false, NULL);
            st = read(ctx, le, ne - le, buf + (size_t)have * plane);
            if (tm) gt_timings_add(tm, "file I/O", gt_timer_stop(&t));
            if (st != GT_OK) goto done;
            le = ne;
        }
        gt_timer t;
        gt_timer_start(&t, false, NULL);
        st = gt_mc_slab_cpu(buf, nb, ne - nb, z0, z1, &g, m);
        if (tm) gt_timings_add(tm, "extract (cpu)", gt_timer_stop(&t));
        if (st != GT_OK) goto done;
    }
    gt_progress_update(&prog, (double)Z, NULL);
done:
    gt_progress_end(&prog);
#if GT_HAVE_CUDA
    if (cu) gt_mc_cuda_destroy(cu);
    if (dev == GT_DEVICE_CUDA && gt_gpu_oom(st)) gt_mc_slab_hint(&g, P);
#endif
    free(buf);
    return st;
}

gt_status gt_mc_extract_stream(gt_device_kind dev, const int64_t dims[3], gt_mc_read_fn read,
                               void *ctx, const gt_mc_params *p, size_t max_mem,
                               int64_t slab_planes, gt_mc_mesh *m, gt_timings *tm)
{
    return gt_mc_extract_stream_keep(dev, dims, read, ctx, p, max_mem, slab_planes, m, tm, NULL);
}

gt_status gt_mc_mesh_to_soup(const gt_mc_mesh *m, gt_mc_mesh *soup)
{
    memset(soup, 0, sizeof *soup);
    GT_TRY(gt_mc_mesh_reserve(soup, 3 * m->ntri, m->ntri, m->nrm != NULL));
    for (size_t t = 0; t < m->ntri; t++)
        for (int w = 0; w < 3; w++) {
            size_t v = (size_t)m->tris[3 * t + w], o = 3 * t + (size_t)w;
            memcpy(soup->xyz + 3 * o, m->xyz + 3 * v, 3 * sizeof(float));
            if (m->nrm) memcpy(soup->nrm + 3 * o, m->nrm + 3 * v, 3 * sizeof(float));
            soup->tris[o] = (int32_t)o;
        }
    soup->nvert = 3 * m->ntri;
    soup->ntri = m->ntri;
    return GT_OK;
}

size_t gt_mc_device_peak_bytes(void)
{
#if GT_HAVE_CUDA
    return gt_cu_peak_bytes();
#else
    return 0;
#endif
}
