/* Poisson reconstruction pipeline: input checks, normalisation to the unit
 * cube, and the dispatch between the CPU reference and the CUDA path. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "gt_config.h"
#include "poisson/poisson.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#if GT_HAVE_CUDA
#include "kernels/poisson/pr_gpu.h"
#endif

void gt_pr_params_default(gt_pr_params *p)
{
    memset(p, 0, sizeof *p);
    p->depth = 8;
    p->full_depth = 5;
    p->point_weight = 4.0;
    p->samples_per_node = 1.5;
    p->scale = 1.1;
    p->iters = 0;
    p->solver = GT_PR_SOLVER_MULTIGRID;
    p->finest_residual = GT_PR_FINEST_RESIDUAL;
    p->trim = 0.0;
    p->coarse_levels = GT_PR_COARSE_LEVELS;
}

void gt_pr_mesh_free(gt_pr_mesh *m)
{
    free(m->xyz); free(m->density); free(m->rgb); free(m->tri); free(m->vol);
#if GT_HAVE_CUDA
    gt_pr_dev_mesh_free(m->dev);
#endif
    memset(m, 0, sizeof *m);
}

/* A unit coordinate u exactly on a boundary of the depth-D cells (u 2^D an
 * integer) lies in two cells; floor (the octree's and the splat's rule)
 * gives it the one above. Such a sample goes instead to the cell its
 * normal's component n points into: one float below when n < 0. Then the
 * cells of a face and of its mirror image are mirror images too (floor
 * puts the samples of a face whose normal points up in the cell outside
 * it, and those of the mirrored face, normal down, in the cell inside),
 * and the octree's depth-D nodes and the solve's functions around the two
 * faces match. Only points exactly on a boundary move, and by one float. */
static float boundary_tie(float u, float n, int depth)
{
    if (!(n < 0) || !(u > 0)) return u;
    const float k = ldexpf(u, depth);
    return k == floorf(k) ? nextafterf(u, 0.0f) : u;
}

/* The three passes over the points (flags and box; covariance; compaction
 * into unit-cube coordinates) run on all cores: min, max and the counts are
 * exact in any order, and the compaction writes each thread's contiguous
 * block at its prefix, so the output is the serial one. Only the covariance
 * sums, used for the coplanarity test alone, depend on the thread count. */
static gt_status gt_pr_normalize(const gt_pr_input *in, double scale, int depth, float **u_out, float **n_out,
                                 float **rgb_out, size_t *n_out_count, double center[3], double *side,
                                 size_t *skipped_nonfinite, size_t *skipped_zero)
{
    const size_t n = in->n;
    size_t m = 0, bad = 0, zero = 0;
    double lo0 = INFINITY, lo1 = INFINITY, lo2 = INFINITY, hi0 = -INFINITY, hi1 = -INFINITY, hi2 = -INFINITY;
    uint8_t *keep = gt_malloc(n ? n : 1, "point flags");
    if (!keep) return GT_ERR_RUNTIME;
#pragma omp parallel for schedule(static) reduction(+ : m, bad, zero) reduction(min : lo0, lo1, lo2) \
    reduction(max : hi0, hi1, hi2) if (n >= 65536)
    for (size_t i = 0; i < n; i++) {
        const float *p = in->xyz + 3 * i, *q = in->nrm + 3 * i;
        keep[i] = 0;
        int fin = 1;
        for (int a = 0; a < 3; a++) fin &= isfinite(p[a]) && isfinite(q[a]);
        if (!fin) { bad++; continue; }
        double l2 = (double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2];
        if (!(l2 > 1e-24)) { zero++; continue; }
        keep[i] = 1;
        m++;
        lo0 = fmin(lo0, p[0]); lo1 = fmin(lo1, p[1]); lo2 = fmin(lo2, p[2]);
        hi0 = fmax(hi0, p[0]); hi1 = fmax(hi1, p[1]); hi2 = fmax(hi2, p[2]);
    }
    const double lo[3] = {lo0, lo1, lo2}, hi[3] = {hi0, hi1, hi2};
    *skipped_nonfinite = bad;
    *skipped_zero = zero;
    if (m < GT_PR_MIN_POINTS) {
        free(keep);
        if (zero > 0 && m == 0)
            return gt_fail(GT_ERR_DATA, "all %zu points have zero normals", n);
        return gt_fail(GT_ERR_DATA, "too few usable points: %zu (need at least %d; %zu non-finite, %zu zero normals skipped)",
                       m, GT_PR_MIN_POINTS, bad, zero);
    }
    double ext = 0;
    for (int a = 0; a < 3; a++) {
        center[a] = 0.5 * (lo[a] + hi[a]);
        if (hi[a] - lo[a] > ext) ext = hi[a] - lo[a];
    }
    if (!(ext > 0) || ext < 1e-7 * (fabs(center[0]) + fabs(center[1]) + fabs(center[2]))) {
        free(keep);
        return gt_fail(GT_ERR_DATA, "all %zu points are coincident", m);
    }
    /* coplanar: the covariance is (nearly) singular; one pass of sums about
     * the box centre (shifted, so the cancellation stays small) */
    {
        double s0 = 0, s1 = 0, s2 = 0, s00 = 0, s01 = 0, s02 = 0, s11 = 0, s12 = 0, s22 = 0;
        const double c0 = center[0], c1 = center[1], c2 = center[2];
#pragma omp parallel for schedule(static) reduction(+ : s0, s1, s2, s00, s01, s02, s11, s12, s22) if (n >= 65536)
        for (size_t i = 0; i < n; i++) {
            if (!keep[i]) continue;
            const double d0 = in->xyz[3 * i] - c0, d1 = in->xyz[3 * i + 1] - c1, d2 = in->xyz[3 * i + 2] - c2;
            s0 += d0; s1 += d1; s2 += d2;
            s00 += d0 * d0; s01 += d0 * d1; s02 += d0 * d2;
            s11 += d1 * d1; s12 += d1 * d2; s22 += d2 * d2;
        }
        const double S1[3] = {s0, s1, s2};
        const double S2[3][3] = {{s00, s01, s02}, {s01, s11, s12}, {s02, s12, s22}};
        double C[3][3];
        for (int a = 0; a < 3; a++)
            for (int b = a; b < 3; b++) C[a][b] = C[b][a] = S2[a][b] / (double)m - S1[a] * S1[b] / ((double)m * m);
        double det = C[0][0] * (C[1][1] * C[2][2] - C[1][2] * C[2][1]) - C[0][1] * (C[1][0] * C[2][2] - C[1][2] * C[2][0]) +
                     C[0][2] * (C[1][0] * C[2][1] - C[1][1] * C[2][0]);
        double tr = (C[0][0] + C[1][1] + C[2][2]) / 3.0;
        if (!(det > 1e-9 * tr * tr * tr)) {
            free(keep);
            return gt_fail(GT_ERR_DATA, "all %zu points are coplanar (or collinear): a surface needs a volume to enclose", m);
        }
    }
    *side = ext * (scale > 1.0 ? scale : 1.0);
    float *u = gt_malloc_array(m, 3 * sizeof(float), "unit coords");
    float *nn = gt_malloc_array(m, 3 * sizeof(float), "normals");
    float *rgb = (in->rgb && rgb_out) ? gt_malloc_array(m, 3 * sizeof(float), "colours") : NULL;
    if (!u || !nn || (in->rgb && rgb_out && !rgb)) { free(u); free(nn); free(rgb); free(keep); return GT_ERR_RUNTIME; }
    const double inv_side = 1.0 / *side;
    /* the kept points of each thread's block, then each block at its prefix */
    enum { MAXT = 256 };
    size_t cnt[MAXT + 1] = {0};
#pragma omp parallel if (n >= 65536)
    {
        size_t nt = 1, t = 0;
#ifdef _OPENMP
        nt = (size_t)omp_get_num_threads();
        t = (size_t)omp_get_thread_num();
#endif
        if (nt > MAXT) nt = MAXT; /* threads past MAXT idle */
        const size_t b0 = n * t / nt, b1 = t < nt ? n * (t + 1) / nt : b0;
        size_t c = 0;
        for (size_t i = b0; i < b1; i++) c += keep[i];
        if (t < nt) cnt[t + 1] = c;
#pragma omp barrier
        size_t j = 0;
        for (size_t k = 0; k <= t && k < nt; k++) j += cnt[k];
        for (size_t i = b0; i < b1; i++) {
            if (!keep[i]) continue;
            const float *q = in->nrm + 3 * i;
            double il = 1.0 / sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2]);
            for (int a = 0; a < 3; a++) {
                double v = (in->xyz[3 * i + a] - center[a]) * inv_side + 0.5;
                if (v < 0) v = 0;
                if (v > 0.99999994) v = 0.99999994;
                nn[3 * j + a] = (float)(q[a] * il);
                u[3 * j + a] = boundary_tie((float)v, nn[3 * j + a], depth);
                if (rgb) rgb[3 * j + a] = in->rgb[3 * i + a];
            }
            j++;
        }
    }
    free(keep);
    *u_out = u;
    *n_out = nn;
    if (rgb_out) *rgb_out = rgb;
    *n_out_count = m;
    return GT_OK;
}

gt_status gt_pr_points_make(const gt_pr_input *in, const gt_pr_params *p, gt_timings *tm, gt_pr_points *out)
{
    memset(out, 0, sizeof *out);
    double t0 = gt_now_ms();
    GT_TRY(gt_pr_normalize(in, p->scale, p->depth, &out->u, &out->nrm, p->want_colors ? &out->rgb : NULL, &out->m,
                           out->center, &out->side, &out->skipped_nonfinite, &out->skipped_zero));
    if (tm) gt_timings_add(tm, "normalise", gt_now_ms() - t0);
    /* Far from the origin 32-bit floats are coarse (at a UTM easting of
     * 4e6 they lie 0.5 apart): points given as floats there (a float32
     * file, say) were rounded so when read. Said where it
     * costs a tenth of a finest cell or more. Points given relative to an
     * origin among them (doubles, read by gt_points_read_table) are small
     * numbers here and keep their detail. */
    double far = 0.0;
    for (int a = 0; a < 3; a++) far = fmax(far, fabs(out->center[a]) + 0.5 * out->side);
    const double ulp = ldexp(1.0, ilogb(far) - 23), cell = out->side / ldexp(1.0, p->depth);
    if (ulp >= 0.1 * cell)
        gt_warn("the points lie far from the origin (coordinates up to %.6g, a box %.6g across): as 32-bit floats "
                "they are %.3g apart there, %.2g of a depth-%d cell; give x, y, z as doubles (float64 PLY "
                "properties or text) or move them near the origin for the full detail",
                far, out->side, ulp, ulp / cell, p->depth);
    return GT_OK;
}

void gt_pr_points_free(gt_pr_points *pts)
{
    free(pts->u);
    free(pts->nrm);
    free(pts->rgb);
    pts->u = pts->nrm = pts->rgb = NULL;
}

gt_status gt_pr_prepare_cpu(gt_pr_points *pts, const gt_pr_params *p, gt_timings *tm, gt_pr_state *s)
{
    memset(s, 0, sizeof *s);
    memcpy(s->center, pts->center, sizeof s->center);
    s->side = pts->side;
    double t0 = gt_now_ms();
    gt_status st = gt_pr_octree_build_cpu(pts->u, pts->m, p->depth, gt_pr_full_depth(p), &s->oct);
    if (st == GT_OK) {
        st = gt_pr_sort_points(s, pts->u, pts->nrm, pts->rgb);
        if (st != GT_OK) gt_pr_state_free(s);
    }
    gt_pr_points_free(pts);
    if (st != GT_OK) return st;
    if (tm) gt_timings_add(tm, "octree", gt_now_ms() - t0);
    return GT_OK;
}

gt_status gt_pr_sort_points(gt_pr_state *s, const float *u, const float *nn, const float *rgb)
{
    size_t m = s->oct.npts;
    /* points in key order */
    s->u = gt_malloc_array(m, 3 * sizeof(float), "sorted points");
    s->n = gt_malloc_array(m, 3 * sizeof(float), "sorted normals");
    s->rgb = rgb ? gt_malloc_array(m, 3 * sizeof(float), "sorted colours") : NULL;
    if (!s->u || !s->n || (rgb && !s->rgb)) return GT_ERR_RUNTIME;
    for (size_t k = 0; k < m; k++) {
        uint32_t i = s->oct.order[k];
        memcpy(s->u + 3 * k, u + 3 * (size_t)i, 3 * sizeof(float));
        memcpy(s->n + 3 * k, nn + 3 * (size_t)i, 3 * sizeof(float));
        if (rgb) memcpy(s->rgb + 3 * k, rgb + 3 * (size_t)i, 3 * sizeof(float));
    }
    return GT_OK;
}

gt_status gt_poisson_reconstruct_points(gt_pr_points *pts, const gt_pr_params *p, gt_device_kind dev,
                                        gt_timings *tm, gt_pr_mesh *out)
{
    memset(out, 0, sizeof *out);
    gt_pr_state s;
    gt_status st;
    if (dev == GT_DEVICE_CUDA) {
#if GT_HAVE_CUDA
        st = gt_pr_prepare_cuda(pts, p, tm, &s);
#else
        gt_pr_points_free(pts);
        return gt_fail(GT_ERR_GPU, "built without CUDA");
#endif
    } else {
        st = gt_pr_prepare_cpu(pts, p, tm, &s);
    }
    if (st != GT_OK) return st;
    if (dev != GT_DEVICE_CUDA) {
        st = gt_pr_solve_cpu(&s, p, tm);
        if (st != GT_OK) { gt_pr_state_free(&s); return st; }
    }
    double t0 = gt_now_ms();
    if (dev == GT_DEVICE_CUDA) {
#if GT_HAVE_CUDA
        st = gt_pr_extract_cuda(&s, p, out);
        if (tm) gt_timings_add(tm, "extract (gpu)", gt_now_ms() - t0);
#endif
    } else {
        st = gt_pr_extract_cpu(&s, p, out);
        if (tm) gt_timings_add(tm, "extract", gt_now_ms() - t0);
    }
    out->nnodes = s.oct.nnodes;
    memcpy(out->origin, pts->origin, sizeof out->origin);
    out->skipped_nonfinite = pts->skipped_nonfinite;
    out->skipped_zero_normal = pts->skipped_zero;
    gt_pr_state_free(&s);
    return st;
}

gt_status gt_poisson_reconstruct(const gt_pr_input *in, const gt_pr_params *p, gt_device_kind dev,
                                 gt_timings *tm, gt_pr_mesh *out)
{
    memset(out, 0, sizeof *out);
    gt_pr_points pts;
    GT_TRY(gt_pr_points_make(in, p, tm, &pts));
    gt_status st = gt_poisson_reconstruct_points(&pts, p, dev, tm, out);
    gt_pr_points_free(&pts);
    return st;
}
