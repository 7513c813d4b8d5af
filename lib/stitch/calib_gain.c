/* Exposure and colour gains (OpenCV's GainCompensator model, per plane):
 * for every pair of cameras i, j that see the same panorama points, the
 * mean m_ij of camera i there and m_ji of camera j; the gains minimise
 *     sum_ij N_ij (g_i m_ij - g_j m_ji)^2 / mbar_ij^2  +  eps sum_i (g_i - 1)^2
 * (N_ij samples, mbar_ij = (m_ij + m_ji) / 2 makes each pair's term
 * dimensionless; eps, 1e-4 of the mean N for Y and 1e-3 for chroma, only
 * holds cameras that nothing constrains near 1), with the reference
 * camera's gain fixed to 1. Y is compared as is (Y' = g Y), U and V by their
 * mean distance from 128 (U' = 128 + g (U - 128)), which a scene's colours
 * of both signs do not cancel. Samples near clipping (Y >= 250 or
 * Y <= 17 in either camera) are left out.
 *
 * The points are sites on a grid of the panorama prepared once from the
 * geometry (gt_stitch_gains_create), so that streaming (--gain-update N) can
 * re-estimate from the current frames in a few milliseconds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "stitch/calib.h"
#include "stitch/stitch_math.h"

typedef struct {
    float ui, vi, uj, vj; /* luma positions in cameras i and j */
} site_t;

struct gt_stitch_gains {
    int ncam;
    size_t in_bytes;
    gt_plane_view pv[3];
    int npair;
    int pi[GT_STITCH_MAX_CAMS * GT_STITCH_MAX_CAMS], pj[GT_STITCH_MAX_CAMS * GT_STITCH_MAX_CAMS];
    size_t off[GT_STITCH_MAX_CAMS * GT_STITCH_MAX_CAMS + 1];
    site_t *site;
};

void gt_stitch_gains_destroy(gt_stitch_gains *g)
{
    if (!g) return;
    free(g->site);
    free(g);
}

gt_status gt_stitch_gains_create(const gt_stitch_rig *rig, int in_w, int in_h, gt_pixfmt fmt, int step,
                                 gt_stitch_gains **out)
{
    *out = NULL;
    gt_stitch_gains *g = gt_calloc(1, sizeof *g, "gain estimator");
    if (!g) return GT_ERR_RUNTIME;
    gt_status st = gt_stitch_planes(fmt, in_w, in_h, g->pv);
    if (st) {
        free(g);
        return st;
    }
    g->ncam = rig->ncam;
    g->in_bytes = gt_pixfmt_frame_bytes(fmt, in_w, in_h);
    int W = rig->pano_w, H = rig->pano_h, N = rig->ncam;
    if (step <= 0) step = (int)ceil(sqrt((double)W * H / 200000.0));
    if (step < 1) step = 1;
    int gw = (W + step - 1) / step, gh = (H + step - 1) / step;
    /* per grid point the cameras that see it (luma position with a 2 px
     * margin, so that chroma and bilinear taps stay inside) */
    float *uv = gt_malloc_array((size_t)gw * gh * N, 2 * sizeof(float), "gain sites");
    unsigned char *in = gt_malloc_array((size_t)gw * gh, (size_t)N, "gain sites");
    if (!uv || !in) {
        free(uv), free(in), free(g);
        return GT_ERR_RUNTIME;
    }
#pragma omp parallel for schedule(static)
    for (int r = 0; r < gh; r++)
        for (int c = 0; c < gw; c++)
            for (int i = 0; i < N; i++) {
                double x = c * step + 0.5 * (step - 1), y = r * step + 0.5 * (step - 1), u, v;
                size_t k = ((size_t)r * gw + c) * N + i;
                in[k] = 0;
                if (!gt_stitch_rig_to_cam(rig, i, x, y, &u, &v)) continue;
                uv[2 * k] = (float)u, uv[2 * k + 1] = (float)v;
                in[k] = u >= 2 && v >= 2 && u <= in_w - 3 && v <= in_h - 3;
            }
    size_t total = 0;
    size_t cnt[GT_STITCH_MAX_CAMS][GT_STITCH_MAX_CAMS] = {{0}};
    for (size_t p = 0; p < (size_t)gw * gh; p++)
        for (int i = 0; i < N; i++)
            if (in[p * N + i])
                for (int j = i + 1; j < N; j++)
                    if (in[p * N + j]) cnt[i][j]++, total++;
    g->site = gt_malloc_array(total + 1, sizeof(site_t), "gain sites");
    if (!g->site) {
        free(uv), free(in), free(g);
        return GT_ERR_RUNTIME;
    }
    size_t fill[GT_STITCH_MAX_CAMS][GT_STITCH_MAX_CAMS];
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            if (cnt[i][j]) {
                int q = g->npair++;
                g->pi[q] = i, g->pj[q] = j;
                g->off[q + 1] = g->off[q] + cnt[i][j];
                fill[i][j] = g->off[q];
            }
    for (size_t p = 0; p < (size_t)gw * gh; p++)
        for (int i = 0; i < N; i++)
            if (in[p * N + i])
                for (int j = i + 1; j < N; j++)
                    if (in[p * N + j]) {
                        size_t ki = p * N + i, kj = p * N + j;
                        g->site[fill[i][j]++] = (site_t){uv[2 * ki], uv[2 * ki + 1], uv[2 * kj], uv[2 * kj + 1]};
                    }
    free(uv), free(in);
    *out = g;
    return GT_OK;
}

static inline float sample_plane(const gt_plane_view *pv, const uint8_t *frame, float u, float v)
{
    return gt_sm_bilinear(frame + pv->off, pv->pitch, pv->step, pv->w, pv->h, (u - pv->ox) / pv->sx,
                          (v - pv->oy) / pv->sy);
}

/* sums over pair q's sites: s[0..2] camera i (Y, |U-128|, |V-128|), s[3..5]
 * camera j, s[6] count */
static void pair_sums(const gt_stitch_gains *g, const uint8_t *const *frames, int q, double s[7])
{
    const uint8_t *fi = frames[g->pi[q]], *fj = frames[g->pj[q]];
    double a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0, n = 0;
#pragma omp parallel for schedule(static) reduction(+ : a0, a1, a2, b0, b1, b2, n)
    for (size_t k = g->off[q]; k < g->off[q + 1]; k++) {
        const site_t *t = &g->site[k];
        float yi = sample_plane(&g->pv[0], fi, t->ui, t->vi), yj = sample_plane(&g->pv[0], fj, t->uj, t->vj);
        if (yi >= 250 || yj >= 250 || yi <= 17 || yj <= 17) continue;
        a0 += yi, b0 += yj;
        a1 += fabsf(sample_plane(&g->pv[1], fi, t->ui, t->vi) - 128.0f);
        b1 += fabsf(sample_plane(&g->pv[1], fj, t->uj, t->vj) - 128.0f);
        a2 += fabsf(sample_plane(&g->pv[2], fi, t->ui, t->vi) - 128.0f);
        b2 += fabsf(sample_plane(&g->pv[2], fj, t->uj, t->vj) - 128.0f);
        n += 1;
    }
    s[0] = a0, s[1] = a1, s[2] = a2, s[3] = b0, s[4] = b1, s[5] = b2, s[6] = n;
}

gt_status gt_stitch_gains_overlap(gt_stitch_gains *g, const uint8_t *const *frames, int i, int j, double m[3],
                                  double mm[3], long *n)
{
    int a = i < j ? i : j, b = i < j ? j : i;
    for (int p = 0; p < 3; p++) m[p] = mm[p] = 0;
    *n = 0;
    for (int q = 0; q < g->npair; q++) {
        if (g->pi[q] != a || g->pj[q] != b) continue;
        double s[7];
        pair_sums(g, frames, q, s);
        if (s[6] <= 0) return GT_OK;
        for (int p = 0; p < 3; p++) {
            m[p] = (i == a ? s[p] : s[3 + p]) / s[6];
            mm[p] = (i == a ? s[3 + p] : s[p]) / s[6];
        }
        *n = (long)s[6];
    }
    return GT_OK;
}

gt_status gt_stitch_gains_estimate(gt_stitch_gains *g, const uint8_t *const *frames, int ref,
                                   float gains[3][GT_STITCH_MAX_CAMS], int *pairs)
{
    int N = g->ncam;
    for (int p = 0; p < 3; p++)
        for (int i = 0; i < GT_STITCH_MAX_CAMS; i++) gains[p][i] = 1.0f;
    double S[GT_STITCH_MAX_CAMS * GT_STITCH_MAX_CAMS][7];
    int used = 0;
    double nmean = 0;
    for (int q = 0; q < g->npair; q++) {
        pair_sums(g, frames, q, S[q]);
        if (S[q][6] >= 16) used++, nmean += S[q][6];
    }
    if (pairs) *pairs = used;
    if (!used) return GT_OK;
    nmean /= used;
    int fix = ref >= 0 && ref < N ? ref : 0;
    for (int p = 0; p < 3; p++) {
        double A[GT_STITCH_MAX_CAMS * GT_STITCH_MAX_CAMS] = {0}, b[GT_STITCH_MAX_CAMS];
        double eps = (p == 0 ? 1e-4 : 1e-3) * nmean, floor_m = p == 0 ? 16.0 : 4.0;
        for (int i = 0; i < N; i++) A[i * N + i] = eps, b[i] = eps;
        for (int q = 0; q < g->npair; q++) {
            double n = S[q][6];
            if (n < 16) continue;
            int i = g->pi[q], j = g->pj[q];
            double mi = S[q][p] / n, mj = S[q][3 + p] / n, mbar = fmax(0.5 * (mi + mj), floor_m);
            double w = n / (mbar * mbar);
            A[i * N + i] += w * mi * mi;
            A[j * N + j] += w * mj * mj;
            A[i * N + j] -= w * mi * mj;
            A[j * N + i] -= w * mi * mj;
        }
        double big = 1e6 * (nmean + 1);
        A[fix * N + fix] += big;
        b[fix] += big;
        if (gt_calib_solve(A, b, N)) return gt_fail(GT_ERR_RUNTIME, "gain system is singular");
        double lm = 0;
        for (int i = 0; i < N; i++) {
            b[i] = fmin(fmax(b[i], 0.05), 20.0);
            lm += log(b[i]);
        }
        double s = ref >= 0 && ref < N ? 1.0 / b[ref] : exp(-lm / N);
        for (int i = 0; i < N; i++) gains[p][i] = (float)(b[i] * s);
    }
    return GT_OK;
}

/* ------------------------------------------------------------ streaming */

gt_status gt_stitch_gain_update_init(gt_stitch_gain_update *u, const gt_stitch_rig *rig, const gt_stitch_plan *plan,
                                     int every, float alpha)
{
    memset(u, 0, sizeof *u);
    u->every = every;
    u->alpha = alpha;
    int step = (int)ceil(sqrt((double)plan->pano_w * plan->pano_h / 50000.0));
    GT_TRY(gt_stitch_gains_create(rig, plan->in_w, plan->in_h, plan->fmt, step, &u->g));
    for (int p = 0; p < 3; p++) {
        double l = 0;
        for (int i = 0; i < plan->ncam; i++) {
            u->cur[p][i] = plan->plane[p].gain[i];
            l += log(u->cur[p][i]);
        }
        u->logmean[p] = l / plan->ncam;
    }
    return GT_OK;
}

gt_status gt_stitch_gain_update_frame(gt_stitch_gain_update *u, gt_stitch_plan *plan, const uint8_t *const *frames,
                                      long k, bool *changed)
{
    *changed = false;
    if (u->every <= 0 || k % u->every) return GT_OK;
    float est[3][GT_STITCH_MAX_CAMS];
    int pairs;
    GT_TRY(gt_stitch_gains_estimate(u->g, frames, -1, est, &pairs));
    if (!pairs) return GT_OK;
    for (int p = 0; p < 3; p++) {
        double s = exp(u->logmean[p]);
        for (int i = 0; i < plan->ncam; i++) u->cur[p][i] += u->alpha * ((float)(est[p][i] * s) - u->cur[p][i]);
    }
    gt_stitch_plan_set_gains(plan, u->cur);
    u->updates++;
    *changed = true;
    return GT_OK;
}

void gt_stitch_gain_update_free(gt_stitch_gain_update *u)
{
    gt_stitch_gains_destroy(u->g);
    memset(u, 0, sizeof *u);
}
