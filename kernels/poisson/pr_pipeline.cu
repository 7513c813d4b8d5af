/* GPU front end of the reconstruction: from the points normalised on the
 * host (gt_pr_points_make), the octree, neighbours, density, splat,
 * divergence and the cascadic solve on the GPU (see gt_pr_prepare_cuda in
 * pr_gpu.h); the solution stays on the device for the extraction
 * (pr_extract.cu). */
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_gpu.h"
#include "kernels/poisson/pr_gpu_internal.h"

extern "C" void gt_pr_dev_state_free(void *dev)
{
    gt_pr_dev_state *ds = (gt_pr_dev_state *)dev;
    if (!ds) return;
    gt_pr_dev_octree_free(&ds->oct);
    gt_cu_free(ds->coef);
    gt_cu_free(ds->tree);
    free(ds);
}

extern "C" gt_status gt_pr_prepare_cuda(gt_pr_points *pts, const gt_pr_params *p, gt_timings *tm, gt_pr_state *s)
{
    memset(s, 0, sizeof *s);
    memcpy(s->center, pts->center, sizeof s->center);
    s->side = pts->side;
    const float *u = pts->u, *nn = pts->nrm, *rgb = pts->rgb;
    const size_t m = pts->m;
    /* memory check: per point keys, order, coordinates, normals, areas and
     * values (~100 bytes); per node key, links, ranges, 27 neighbours and the
     * solver's vectors (~210 bytes); at most min(40 m, 8^l) nodes at level l
     * (the octree holds the cells within 2 of a sample's: about 40 nodes per
     * sample of a surface; isolated points make up to 216) */
    size_t freeb = 0, totb = 0;
    gt_status st = gt_cu_mem_info(&freeb, &totb);
    if (st == GT_OK) {
        double need[GT_PR_MAX_DEPTH + 1];
        double acc = (double)m * 100.0;
        for (int l = 0; l <= GT_PR_MAX_DEPTH; l++) {
            double nl = ldexp(1.0, 3 * l);
            if (nl > 40.0 * m) nl = 40.0 * m;
            acc += 210.0 * nl;
            need[l] = acc;
        }
        if (need[p->depth] > 0.9 * (double)freeb) {
            int fits = 0;
            for (int l = 1; l <= GT_PR_MAX_DEPTH; l++)
                if (need[l] <= 0.9 * (double)freeb) fits = l;
            gt_pr_points_free(pts);
            return gt_fail(GT_ERR_GPU, "depth %d on %zu points may need %.1f GiB of GPU memory, %.1f GiB free: "
                           "depth %d fits (or use --device cpu)", p->depth, m, need[p->depth] / 1073741824.0,
                           freeb / 1073741824.0, fits);
        }
    }
    float *d_u = NULL, *d_n = NULL;
    st = gt_cu_malloc((void **)&d_u, m * 3 * sizeof(float), "points");
    if (st == GT_OK) st = gt_cu_malloc((void **)&d_n, m * 3 * sizeof(float), "normals");
    if (st == GT_OK) st = gt_cu_memcpy_h2d(d_u, u, m * 3 * sizeof(float), NULL);
    if (st == GT_OK) st = gt_cu_memcpy_h2d(d_n, nn, m * 3 * sizeof(float), NULL);
    gt_pr_dev_state *ds = (gt_pr_dev_state *)calloc(1, sizeof *ds);
    if (!ds && st == GT_OK) st = gt_fail(GT_ERR_RUNTIME, "out of memory (device state)");
    if (st == GT_OK) st = gt_pr_dev_octree_build(d_u, m, p->depth, gt_pr_full_depth(p), &ds->oct, &s->oct, tm);
    /* the extraction runs on the device octree; the host needs a copy only
     * for the per-vertex density, colours, trimming and the chi volume (and
     * when the caller asks for it: the tests compare it with the CPU's) */
    const bool need_host = p->host_state || p->want_density || p->trim > 0 || p->want_colors || p->volume_depth > 0;
    if (st == GT_OK && need_host) {
        double t1 = gt_now_ms();
        st = gt_pr_dev_octree_download(&ds->oct, &s->oct);
        if (st == GT_OK) st = gt_pr_sort_points(s, u, nn, rgb);
        if (tm) gt_timings_add(tm, "octree to host", gt_now_ms() - t1);
    }
    if (st == GT_OK) st = gt_pr_dev_solve(&ds->oct, d_u, d_n, s, p, tm, &ds->coef, &ds->tree);
    gt_cu_free(d_u);
    gt_cu_free(d_n);
    s->dev = ds;
    if (st == GT_OK && s->rgb) st = gt_pr_colors_cpu(s);
    s->eval_on_gpu = true;
    gt_pr_points_free(pts);
    if (st != GT_OK) gt_pr_state_free(s);
    return st;
}
