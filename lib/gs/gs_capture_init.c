/* The initial Gaussians of a capture, from its 3-D points, as the
 * reference's GaussianModel.create_from_pcd makes them (gs_capture.h). */
#include <math.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "gs/gs_capture.h"
#include "gs/gs_knn.h"

gt_status gt_gs_init_from_points(const double *xyz, const uint8_t *rgb, size_t n, int sh_degree,
                                 const gt_gs_init_opts *o, gt_gs_raw *r)
{
    if (n == 0) return gt_fail(GT_ERR_DATA, "no 3-D points to start from: give a PLY to start from");
    if (sh_degree < 0 || sh_degree > 3) return gt_fail(GT_ERR_USAGE, "SH degree %d: expected 0..3", sh_degree);
    if (!(o->opacity > 0 && o->opacity < 1) || !(o->scale > 0) || !isfinite(o->scale))
        return gt_fail(GT_ERR_USAGE, "initial opacity %g and scale %g: expected 0 < opacity < 1, scale > 0",
                       o->opacity, o->scale);
    float *d2 = gt_malloc_array(n, sizeof *d2, "nearest-neighbour distances");
    if (!d2) return GT_ERR_RUNTIME;
    gt_status st = gt_gs_raw_alloc(r, n, sh_degree);
    if (st == GT_OK) {
        for (size_t i = 0; i < 3 * n; i++) r->pos[i] = (float)xyz[i];
        st = gt_gs_knn_mean_sq(r->pos, n, 3, d2);
    }
    if (st != GT_OK) {
        free(d2);
        gt_gs_raw_free(r);
        return st;
    }
    const float logit = (float)log(o->opacity / (1.0 - o->opacity));
    const size_t K3 = (size_t)r->sh_k * 3;
    for (size_t i = 0; i < n; i++) {
        float s = (float)log(o->scale * sqrt(fmax((double)d2[i], 1e-7)));
        for (int k = 0; k < 3; k++) r->log_scale[3 * i + k] = s;
        r->rot[4 * i] = 1.0f, r->rot[4 * i + 1] = r->rot[4 * i + 2] = r->rot[4 * i + 3] = 0.0f;
        r->logit_opacity[i] = logit;
        for (int c = 0; c < 3; c++)
            r->sh[i * K3 + (size_t)c] = (float)((rgb[3 * i + c] / 255.0 - 0.5) / GT_GS_SH_C0);
        /* the higher coefficients stay 0 (gt_gs_raw_alloc zeroes) */
    }
    free(d2);
    return GT_OK;
}

gt_status gt_gs_capture_init(const gt_gs_capture *cap, int sh_degree, const gt_gs_init_opts *o, gt_gs_raw *r)
{
    const gt_colmap_points *p = &cap->model.points;
    if (p->n == 0)
        return gt_fail(GT_ERR_DATA, "'%s' has no 3-D points to start from: give a PLY to start from",
                       cap->model.points_path ? cap->model.points_path : cap->model_dir);
    return gt_gs_init_from_points(p->xyz, p->rgb, p->n, sh_degree, o, r);
}
