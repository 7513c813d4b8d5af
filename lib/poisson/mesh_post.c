/* Per-vertex outputs computed on the host from a finished mesh (either
 * device's): density (B-spline weighted samples per density-depth node),
 * colours, trimming by density, and chi sampled on a regular grid. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "poisson/poisson.h"

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

gt_status gt_pr_mesh_post(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out)
{
    const gt_pr_octree *o = &s->oct;
    const int D = o->depth;
    gt_status st = GT_OK;
    /* density per vertex (samples per density-depth node, B-spline weighted) */
    if (p->want_density || p->trim > 0) {
        out->density = gt_malloc_array(out->nvert ? out->nvert : 1, sizeof(float), "density");
        if (!out->density) { st = GT_ERR_RUNTIME; goto done; }
#pragma omp parallel for schedule(dynamic, 1024)
        for (size_t v = 0; v < out->nvert; v++) {
            double q[3];
            for (int a = 0; a < 3; a++) q[a] = (out->xyz[3 * v + a] - s->center[a]) / s->side + 0.5;
            out->density[v] = (float)gt_pr_eval_levels(o, q, s->wdens, s->density_depth, s->density_depth);
        }
    }
    if (p->want_colors && s->cdens) {
        out->rgb = gt_malloc_array(out->nvert ? out->nvert : 1, 3 * sizeof(float), "colours");
        if (!out->rgb) { st = GT_ERR_RUNTIME; goto done; }
        size_t NN = o->nnodes;
#pragma omp parallel for schedule(dynamic, 1024)
        for (size_t v = 0; v < out->nvert; v++) {
            double q[3];
            for (int a = 0; a < 3; a++) q[a] = (out->xyz[3 * v + a] - s->center[a]) / s->side + 0.5;
            double w = gt_pr_eval_levels(o, q, s->wdens, s->density_depth, s->density_depth);
            for (int a = 0; a < 3; a++) {
                double c = w > 0 ? gt_pr_eval_levels(o, q, s->cdens + a * NN, s->density_depth, s->density_depth) / w : 0;
                out->rgb[3 * v + a] = (float)(c < 0 ? 0 : c > 255 ? 255 : c);
            }
        }
    }
    if (p->trim > 0 && out->nvert > 0) {
        float *tmp = gt_malloc_array(out->nvert, sizeof(float), "trim");
        int32_t *remap = gt_malloc_array(out->nvert, sizeof(int32_t), "trim");
        if (!tmp || !remap) { free(tmp); free(remap); st = GT_ERR_RUNTIME; goto done; }
        memcpy(tmp, out->density, out->nvert * sizeof(float));
        qsort(tmp, out->nvert, sizeof(float), cmp_float);
        size_t qi = (size_t)(p->trim * (double)out->nvert);
        if (qi >= out->nvert) qi = out->nvert - 1;
        float thr = tmp[qi];
        size_t nt = 0;
        for (size_t t = 0; t < out->ntri; t++) {
            int keep = 1;
            for (int k = 0; k < 3; k++) keep &= out->density[out->tri[3 * t + k]] >= thr;
            if (keep) {
                memmove(out->tri + 3 * nt, out->tri + 3 * t, 3 * sizeof(int32_t));
                nt++;
            }
        }
        out->ntri = nt;
        for (size_t v = 0; v < out->nvert; v++) remap[v] = -1;
        size_t nv = 0;
        for (size_t t = 0; t < 3 * nt; t++) {
            int32_t v = out->tri[t];
            if (remap[v] < 0) {
                remap[v] = (int32_t)nv;
                nv++;
            }
        }
        /* compact in index order of first use */
        float *nx = gt_malloc_array(nv ? nv : 1, 3 * sizeof(float), "trim");
        float *nd = gt_malloc_array(nv ? nv : 1, sizeof(float), "trim");
        if (!nx || !nd) { free(nx); free(nd); free(tmp); free(remap); st = GT_ERR_RUNTIME; goto done; }
        for (size_t v = 0; v < out->nvert; v++)
            if (remap[v] >= 0) {
                memcpy(nx + 3 * (size_t)remap[v], out->xyz + 3 * v, 3 * sizeof(float));
                nd[remap[v]] = out->density[v];
                if (out->rgb) memmove(out->rgb + 3 * (size_t)remap[v], out->rgb + 3 * v, 3 * sizeof(float));
            }
        for (size_t t = 0; t < 3 * nt; t++) out->tri[t] = remap[out->tri[t]];
        free(out->xyz);
        free(out->density);
        out->xyz = nx;
        out->density = nd;
        out->nvert = nv;
        free(tmp);
        free(remap);
    }
    if (p->volume_depth > 0) {
        int vd = p->volume_depth < D ? p->volume_depth : D;
        int n = 1 << vd;
        out->vol_n = n;
        out->vol = gt_malloc_array((size_t)n * n * n, sizeof(float), "volume");
        if (!out->vol) { st = GT_ERR_RUNTIME; goto done; }
#pragma omp parallel for schedule(dynamic, 1)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) {
                    double q[3] = {(i + 0.5) / n, (j + 0.5) / n, (k + 0.5) / n};
                    out->vol[(size_t)i + (size_t)n * ((size_t)j + (size_t)n * k)] = (float)gt_pr_eval_levels(o, q, s->coef, s->coef_lmin, D);
                }
        out->vol_spacing = s->side / n;
        for (int a = 0; a < 3; a++) out->vol_origin[a] = s->center[a] - 0.5 * s->side + 0.5 * out->vol_spacing;
    }
done:
    if (st != GT_OK) gt_pr_mesh_free(out);
    return st;
}
