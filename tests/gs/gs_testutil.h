/* Shared helpers for the gs tests: random scenes and cameras, comparisons. */
#ifndef GS_TESTUTIL_H
#define GS_TESTUTIL_H

#include <math.h>
#include <string.h>

#include "gs/gs.h"
#include "gt_test.h"

static inline double gs_gauss(gt_rng *r)
{
    double u = gt_rng_uniform(r) + 1e-12, v = gt_rng_uniform(r);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* n Gaussians in [-1,1]^3, anisotropic scales log-uniform in [smin, smax],
 * random rotations, opacities in [0.05, 1], SH of degree deg. */
static inline gt_status gs_random_scene(gt_gs_scene *s, size_t n, int deg, double smin, double smax,
                                        uint64_t seed)
{
    GT_TRY(gt_gs_scene_alloc(s, n, deg));
    gt_rng r = {seed};
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            s->pos[3 * i + k] = (float)gt_rng_range(&r, -1, 1);
            s->scale[3 * i + k] = (float)exp(gt_rng_range(&r, log(smin), log(smax)));
        }
        double q[4], l = 0;
        for (int k = 0; k < 4; k++) {
            q[k] = gs_gauss(&r);
            l += q[k] * q[k];
        }
        l = sqrt(l);
        for (int k = 0; k < 4; k++) s->rot[4 * i + k] = (float)(q[k] / l);
        s->opacity[i] = (float)gt_rng_range(&r, 0.05, 1.0);
        for (int k = 0; k < s->sh_k; k++)
            for (int c = 0; c < 3; c++)
                s->sh[(i * s->sh_k + k) * 3 + c] =
                    (float)(k == 0 ? gt_rng_range(&r, -1.5, 1.5) : gt_rng_range(&r, -0.3, 0.3));
    }
    return GT_OK;
}

/* Look-at camera from a random point at distance dist from the origin. */
static inline gt_status gs_random_camera(gt_gs_camera *c, double dist, int w, int h, uint64_t seed)
{
    gt_rng r = {seed};
    double e[3], l = 0;
    for (int k = 0; k < 3; k++) {
        e[k] = gs_gauss(&r);
        l += e[k] * e[k];
    }
    l = sqrt(l);
    for (int k = 0; k < 3; k++) e[k] *= dist / l;
    double t[3] = {gt_rng_range(&r, -0.3, 0.3), gt_rng_range(&r, -0.3, 0.3), gt_rng_range(&r, -0.3, 0.3)};
    double up[3] = {0, 1, 0};
    if (fabs(e[1] - t[1]) > 0.95 * dist) up[0] = 1, up[1] = 0;
    gt_status st = gt_gs_camera_lookat(c, e, t, up, gt_rng_range(&r, 40, 75), w, h);
    /* a principal point off the centre, as real (COLMAP) cameras have it:
     * up to 8 % of the size either way */
    c->cx += (float)(gt_rng_range(&r, -0.08, 0.08) * w);
    c->cy += (float)(gt_rng_range(&r, -0.08, 0.08) * h);
    return st;
}

#endif
