/* GPU front end of the reconstruction: normalise on the host, octree and
 * neighbours on the GPU; the solve follows the CPU reference (see
 * gt_pr_prepare_cuda in pr_gpu.h). */
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "kernels/common/cu_check.h"
#include "kernels/common/cu_runtime.h"
#include "kernels/poisson/pr_gpu.h"
#include "kernels/poisson/pr_gpu_internal.h"

extern "C" gt_status gt_pr_prepare_cuda(const gt_pr_input *in, const gt_pr_params *p, gt_timings *tm, gt_pr_state *s,
                                        size_t *skipped_nonfinite, size_t *skipped_zero)
{
    memset(s, 0, sizeof *s);
    float *u = NULL, *nn = NULL;
    size_t m = 0;
    double t0 = gt_now_ms();
    GT_TRY(gt_pr_normalize(in, p->scale, &u, &nn, NULL, &m, s->center, &s->side, skipped_nonfinite, skipped_zero));
    if (tm) gt_timings_add(tm, "normalise", gt_now_ms() - t0);
    /* memory check: keys, order, ranges and about 8 nodes (each ~132 bytes with
     * its 27 neighbours) per point at most at the finest level */
    size_t freeb = 0, totb = 0;
    gt_status st = gt_cu_mem_info(&freeb, &totb);
    if (st == GT_OK) {
        size_t need = m * (12 + 16 + 8 + 8 + 16) + m * 8 * 2 * 140;
        if (need > freeb) {
            free(u);
            free(nn);
            return gt_fail(GT_ERR_GPU, "depth %d on %zu points needs up to %.1f GiB of GPU memory, %.1f GiB free; "
                           "use fewer points or --device cpu", p->depth, m, need / 1073741824.0, freeb / 1073741824.0);
        }
    }
    float *d_u = NULL;
    st = gt_cu_malloc((void **)&d_u, m * 3 * sizeof(float), "points");
    if (st == GT_OK) st = gt_cu_memcpy_h2d(d_u, u, m * 3 * sizeof(float), NULL);
    gt_pr_dev_octree d;
    memset(&d, 0, sizeof d);
    if (st == GT_OK) st = gt_pr_dev_octree_build(d_u, m, p->depth, &d, &s->oct, tm);
    if (st == GT_OK) st = gt_pr_dev_octree_download(&d, &s->oct);
    gt_pr_dev_octree_free(&d);
    gt_cu_free(d_u);
    if (st == GT_OK) {
        s->u = (float *)gt_malloc_array(m, 3 * sizeof(float), "sorted points");
        s->n = (float *)gt_malloc_array(m, 3 * sizeof(float), "sorted normals");
        if (!s->u || !s->n) st = GT_ERR_RUNTIME;
    }
    if (st == GT_OK) {
        for (size_t k = 0; k < m; k++) {
            uint32_t i = s->oct.order[k];
            memcpy(s->u + 3 * k, u + 3 * (size_t)i, 3 * sizeof(float));
            memcpy(s->n + 3 * k, nn + 3 * (size_t)i, 3 * sizeof(float));
        }
        st = gt_pr_solve_cpu(s, p, tm);
    }
    free(u);
    free(nn);
    if (st != GT_OK) gt_pr_state_free(s);
    return st;
}
