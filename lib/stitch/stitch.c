/* Seams, distance transforms, feather weights, Burt-Adelson pyramids, the
 * stitching plan and the CPU reference of the per-frame work. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/timer.h"
#include "stitch/stitch.h"
#include "stitch/stitch_math.h"

static const char *fmt_name(gt_pixfmt f)
{
    static const char *n[] = {"yuyv422", "uyvy422", "yuv420p", "nv12", "yuv422p", "yuv444p"};
    return (unsigned)f < 6 ? n[f] : "?";
}

gt_status gt_stitch_planes(gt_pixfmt f, int w, int h, gt_plane_view pv[3])
{
    memset(pv, 0, 3 * sizeof *pv);
    if (w < 1 || h < 1) return gt_fail(GT_ERR_USAGE, "invalid frame size %dx%d", w, h);
    int packed = f == GT_PIX_YUYV422 || f == GT_PIX_UYVY422;
    if ((packed || f == GT_PIX_YUV422P || f == GT_PIX_YUV420P || f == GT_PIX_NV12) && (w & 1))
        return gt_fail(GT_ERR_USAGE, "width %d is odd: %s needs an even width", w, fmt_name(f));
    if ((f == GT_PIX_YUV420P || f == GT_PIX_NV12) && (h & 1))
        return gt_fail(GT_ERR_USAGE, "height %d is odd: %s needs an even height", h, fmt_name(f));
    size_t ls = (size_t)w * h;
    for (int p = 0; p < 3; p++) {
        pv[p].sx = pv[p].sy = 1;
        pv[p].w = w;
        pv[p].h = h;
    }
    switch (f) {
    case GT_PIX_YUYV422:
    case GT_PIX_UYVY422: {
        int yo = f == GT_PIX_YUYV422 ? 0 : 1, uo = f == GT_PIX_YUYV422 ? 1 : 0;
        pv[0] = (gt_plane_view){(size_t)yo, 2 * w, 2, w, h, 1, 1, 0, 0};
        pv[1] = (gt_plane_view){(size_t)uo, 2 * w, 4, w / 2, h, 2, 1, 0, 0};
        pv[2] = (gt_plane_view){(size_t)uo + 2, 2 * w, 4, w / 2, h, 2, 1, 0, 0};
        break;
    }
    case GT_PIX_YUV422P:
        pv[0] = (gt_plane_view){0, w, 1, w, h, 1, 1, 0, 0};
        pv[1] = (gt_plane_view){ls, w / 2, 1, w / 2, h, 2, 1, 0, 0};
        pv[2] = (gt_plane_view){ls + ls / 2, w / 2, 1, w / 2, h, 2, 1, 0, 0};
        break;
    case GT_PIX_YUV420P:
        pv[0] = (gt_plane_view){0, w, 1, w, h, 1, 1, 0, 0};
        pv[1] = (gt_plane_view){ls, w / 2, 1, w / 2, h / 2, 2, 2, 0, 0.5f};
        pv[2] = (gt_plane_view){ls + ls / 4, w / 2, 1, w / 2, h / 2, 2, 2, 0, 0.5f};
        break;
    case GT_PIX_NV12:
        pv[0] = (gt_plane_view){0, w, 1, w, h, 1, 1, 0, 0};
        pv[1] = (gt_plane_view){ls, w, 2, w / 2, h / 2, 2, 2, 0, 0.5f};
        pv[2] = (gt_plane_view){ls + 1, w, 2, w / 2, h / 2, 2, 2, 0, 0.5f};
        break;
    case GT_PIX_YUV444P:
        for (int p = 0; p < 3; p++) pv[p] = (gt_plane_view){ls * p, w, 1, w, h, 1, 1, 0, 0};
        break;
    default:
        return gt_fail(GT_ERR_USAGE, "unsupported pixel format");
    }
    return GT_OK;
}

static size_t frame_bytes(gt_pixfmt f, int w, int h)
{
    size_t ls = (size_t)w * h;
    switch (f) {
    case GT_PIX_YUYV422:
    case GT_PIX_UYVY422:
    case GT_PIX_YUV422P: return 2 * ls;
    case GT_PIX_YUV420P:
    case GT_PIX_NV12: return ls + ls / 2;
    case GT_PIX_YUV444P: return 3 * ls;
    default: return 0;
    }
}

/* ------------------------------------------------------------ distance transform */

/* 1-D squared distance transform of f (n samples) into d (Felzenszwalb &
 * Huttenlocher 2012); v, z scratch of n and n+1. Double precision: q*q
 * must be exact for widths up to 65536 (float loses it past 4096). */
static void edt1d(const double *f, int n, double *d, int *v, double *z)
{
    int k = 0;
    v[0] = 0;
    z[0] = -INFINITY;
    z[1] = INFINITY;
    for (int q = 1; q < n; q++) {
        double s;
        for (;;) {
            int p = v[k];
            s = ((f[q] + (double)q * q) - (f[p] + (double)p * p)) / (2.0 * (q - p));
            if (s <= z[k] && k > 0) {
                k--;
                continue;
            }
            break;
        }
        if (s <= z[k]) { /* k == 0 and the new parabola hides the first one */
            v[0] = q;
            z[0] = -INFINITY;
            z[1] = INFINITY;
            continue;
        }
        k++;
        v[k] = q;
        z[k] = s;
        z[k + 1] = INFINITY;
    }
    k = 0;
    for (int q = 0; q < n; q++) {
        while (z[k + 1] < q) k++;
        double dq = (double)(q - v[k]);
        d[q] = dq * dq + f[v[k]];
    }
}

/* gt_stitch_edt with the caller's workspace sq (w*h doubles): the plan
 * reuses one for every camera instead of faulting in a fresh one each time */
static gt_status edt_with(const uint8_t *inside, int w, int h, float far, float *dist, double *sq)
{
    const double BIG = 1e12; /* > any squared distance (2 * 65536^2), exact in double */
    enum { CB = 8 };         /* columns per block: one 64-byte line of doubles per row */
    int n = w > h ? w : h;
    size_t N = (size_t)w * h;
    int any_out = 0;
#pragma omp parallel for schedule(static) reduction(| : any_out)
    for (size_t i = 0; i < N; i++) {
        sq[i] = inside[i] ? BIG : 0.0;
        any_out |= !inside[i];
    }
    if (!any_out) {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < N; i++) dist[i] = far;
        return GT_OK;
    }
    int oom = 0;
#pragma omp parallel reduction(| : oom)
    {
        double *f = malloc((size_t)n * CB * sizeof(double)), *d = malloc((size_t)n * sizeof(double));
        double *z = malloc(((size_t)n + 1) * sizeof(double));
        int *v = malloc((size_t)n * sizeof(int));
        bool ok = f && d && z && v;
        if (!ok) oom = 1;
        /* columns, CB at a time so that each row is read as one cache line
         * (a column with no outside pixel stays BIG; the row pass fixes it) */
#pragma omp for schedule(static)
        for (int x0 = 0; x0 < w; x0 += CB) {
            if (!ok) continue;
            int nb = w - x0 < CB ? w - x0 : CB;
            for (int y = 0; y < h; y++)
                for (int j = 0; j < nb; j++) f[(size_t)j * h + y] = sq[(size_t)y * w + x0 + j];
            for (int j = 0; j < nb; j++) {
                edt1d(f + (size_t)j * h, h, d, v, z);
                memcpy(f + (size_t)j * h, d, (size_t)h * sizeof(double));
            }
            for (int y = 0; y < h; y++)
                for (int j = 0; j < nb; j++) {
                    double e = f[(size_t)j * h + y];
                    sq[(size_t)y * w + x0 + j] = e > BIG ? BIG : e;
                }
        }
#pragma omp for schedule(static)
        for (int y = 0; y < h; y++) {
            if (!ok) continue;
            memcpy(f, sq + (size_t)y * w, (size_t)w * sizeof(double));
            edt1d(f, w, d, v, z);
            for (int x = 0; x < w; x++) dist[(size_t)y * w + x] = (float)sqrt(d[x]);
        }
        free(f), free(d), free(z), free(v);
    }
    if (oom) return gt_fail(GT_ERR_RUNTIME, "out of memory in the distance transform");
    return GT_OK;
}

gt_status gt_stitch_edt(const uint8_t *inside, int w, int h, float far, float *dist)
{
    double *sq = gt_malloc_array((size_t)w * h, sizeof(double), "distance transform");
    if (!sq) return GT_ERR_RUNTIME;
    gt_status st = edt_with(inside, w, h, far, dist, sq);
    free(sq);
    return st;
}

/* ------------------------------------------------------------ pyramids */

int gt_stitch_levels(int w, int h, int bands)
{
    if (bands < 1) bands = 1;
    if (bands > GT_STITCH_MAX_BANDS) bands = GT_STITCH_MAX_BANDS;
    int L = 1;
    while (L < bands && w >= 4 && h >= 4) {
        w = (w + 1) / 2;
        h = (h + 1) / 2;
        L++;
    }
    return L;
}

/* horizontal reduce of one row: out[x] from r[2x-2 .. 2x+2] (reflect-101) */
static inline float reduce_at(const float *r, int w, int c)
{
    return gt_sm_reduce5(r[gt_sm_reflect(c - 2, w)], r[gt_sm_reflect(c - 1, w)], r[c < w ? c : w - 1],
                         r[gt_sm_reflect(c + 1, w)], r[gt_sm_reflect(c + 2, w)]);
}
static void reduce_row(const float *r, int w, float *out, int ow)
{
    int hi = (w - 3) / 2; /* the last x whose taps are all inside */
    if (ow > 0) out[0] = reduce_at(r, w, 0);
    for (int x = 1; x <= hi && x < ow; x++) {
        const float *q = r + 2 * x;
        out[x] = gt_sm_reduce5(q[-2], q[-1], q[0], q[1], q[2]);
    }
    for (int x = hi + 1 > 1 ? hi + 1 : 1; x < ow; x++) out[x] = reduce_at(r, w, 2 * x);
}

void gt_stitch_reduce(const float *src, int w, int h, float *dst)
{
    int ow = (w + 1) / 2, oh = (h + 1) / 2;
    /* rows, then columns; each thread keeps the horizontally reduced source
     * rows of its window (2y-2 .. 2y+2) in a ring of 5, keyed by row: the
     * rows of one window are distinct mod 5, and consecutive windows share 3 */
#pragma omp parallel
    {
        float *ring = malloc((size_t)5 * ow * sizeof(float));
        if (!ring) abort(); /* small; callers size-check */
        int key[5] = {-1, -1, -1, -1, -1};
#pragma omp for schedule(static)
        for (int y = 0; y < oh; y++) {
            const float *t[5];
            for (int k = 0; k < 5; k++) {
                int row = gt_sm_reflect(2 * y - 2 + k, h), slot = row % 5;
                if (key[slot] != row) {
                    reduce_row(src + (size_t)row * w, w, ring + (size_t)slot * ow, ow);
                    key[slot] = row;
                }
                t[k] = ring + (size_t)slot * ow;
            }
            float *o = dst + (size_t)y * ow;
            for (int x = 0; x < ow; x++) o[x] = gt_sm_reduce5(t[0][x], t[1][x], t[2][x], t[3][x], t[4][x]);
        }
        free(ring);
    }
}

/* fine sample i of an expansion from a coarse line g of n samples */
static inline float expand_at(const float *g, long stride, int n, int i)
{
    int k = i >> 1;
    if (i & 1) return gt_sm_expand_odd(g[gt_sm_reflect(k, n) * stride], g[gt_sm_reflect(k + 1, n) * stride]);
    return gt_sm_expand_even(g[gt_sm_reflect(k - 1, n) * stride], g[gt_sm_reflect(k, n) * stride],
                             g[gt_sm_reflect(k + 1, n) * stride]);
}

void gt_stitch_expand(const float *src, int w, int h, float *dst, int ow, int oh)
{
    float *tmp = malloc((size_t)ow * h * sizeof(float));
    if (!tmp) abort();
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++)
        for (int x = 0; x < ow; x++) tmp[(size_t)y * ow + x] = expand_at(src + (size_t)y * w, 1, w, x);
#pragma omp parallel for schedule(static)
    for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++) dst[(size_t)y * ow + x] = expand_at(tmp + x, ow, h, y);
    free(tmp);
}

/* ------------------------------------------------------------ plan */

void gt_stitch_plan_opts_init(gt_stitch_plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->blend = GT_BLEND_MULTIBAND;
    o->bands = 5;
    o->feather_alpha = 0.01f;
}

void gt_stitch_plan_free(gt_stitch_plan *plan)
{
    if (!plan) return;
    for (int p = 0; p < 3; p++) {
        free(plan->plane[p].owner);
        free(plan->plane[p].weight);
        for (int k = 0; k < GT_STITCH_MAX_BANDS; k++) free(plan->plane[p].mbw[k]);
    }
    free(plan->owner_luma);
    free(plan->dist_luma);
    memset(plan, 0, sizeof *plan);
}

static void plane_matrix(const double Hinv[9], const gt_plane_view *pp, const gt_plane_view *cp, float P[9])
{
    double Sp[9] = {pp->sx, 0, pp->ox, 0, pp->sy, pp->oy, 0, 0, 1};
    double Sci[9] = {1.0 / cp->sx, 0, -cp->ox / cp->sx, 0, 1.0 / cp->sy, -cp->oy / cp->sy, 0, 0, 1};
    double T[9], M[9];
    gt_stitch_h_mul(Hinv, Sp, T);
    gt_stitch_h_mul(Sci, T, M);
    /* normalise so the largest entry of the last row is 1-ish: keeps floats tame */
    double s = fabs(M[8]) > 0 ? M[8] : 1.0;
    for (int k = 0; k < 9; k++) P[k] = (float)(M[k] / s);
}

/* bounding box of the nonzero samples of m (w x h): {x0, y0, x1, y1}, or
 * {0, 0, -1, -1} when there are none */
static void nonzero_box(const float *m, int w, int h, int box[4])
{
    int x0 = w, y0 = h, x1 = -1, y1 = -1;
#pragma omp parallel for schedule(static) reduction(min : x0, y0) reduction(max : x1, y1)
    for (int y = 0; y < h; y++) {
        const float *r = m + (size_t)y * w;
        int lo = 0;
        while (lo < w && r[lo] == 0.0f) lo++;
        if (lo == w) continue;
        int hi = w - 1;
        while (r[hi] == 0.0f) hi--;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
        if (lo < x0) x0 = lo;
        if (hi > x1) x1 = hi;
    }
    if (x1 < 0) x0 = y0 = 0, x1 = y1 = -1;
    box[0] = x0, box[1] = y0, box[2] = x1, box[3] = y1;
}

gt_status gt_stitch_plan_build(const gt_stitch_rig *rig, int in_w, int in_h, gt_pixfmt fmt,
                               const gt_stitch_plan_opts *o, gt_stitch_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    gt_plane_view ip[3], op[3];
    GT_TRY(gt_stitch_planes(fmt, in_w, in_h, ip));
    GT_TRY(gt_stitch_planes(fmt, rig->pano_w, rig->pano_h, op));
    int W = rig->pano_w, H = rig->pano_h, N = rig->ncam;
    size_t NP = (size_t)W * H;
    plan->ncam = N;
    plan->in_w = in_w;
    plan->in_h = in_h;
    plan->pano_w = W;
    plan->pano_h = H;
    plan->fmt = fmt;
    plan->blend = o->blend;
    plan->bands = o->bands;
    plan->feather_alpha = o->feather_alpha;
    plan->in_bytes = frame_bytes(fmt, in_w, in_h);
    plan->out_bytes = frame_bytes(fmt, W, H);
    for (int p = 0; p < 3; p++) {
        gt_stitch_plane *pl = &plan->plane[p];
        pl->in = ip[p];
        pl->out = op[p];
        pl->black = p == 0 ? 16.0f : 128.0f;
        for (int i = 0; i < N; i++) plane_matrix(rig->cam[i].Hinv, &op[p], &ip[p], pl->P[i]);
    }
    float gains[3][GT_STITCH_MAX_CAMS];
    for (int i = 0; i < N; i++) { /* 0: not set (a rig made in code), 1 */
        const gt_stitch_cam *c = &rig->cam[i];
        gains[0][i] = c->gain > 0 ? c->gain : 1.0f;
        gains[1][i] = c->gain_u > 0 ? c->gain_u : 1.0f;
        gains[2][i] = c->gain_v > 0 ? c->gain_v : 1.0f;
    }
    gt_stitch_plan_set_gains(plan, gains);
    gt_status st = GT_OK;
    uint8_t *region = gt_malloc(NP, "camera region");
    double *sq = gt_malloc_array(NP, sizeof(double), "distance transform");
    plan->dist_luma = gt_malloc_array(NP * N, sizeof(float), "distance maps");
    plan->owner_luma = gt_malloc(NP, "owner map");
    /* full-resolution feather weights, only for feather */
    float *wl = o->blend == GT_BLEND_FEATHER ? gt_malloc_array(NP * N, sizeof(float), "feather weights") : NULL;
    if (!region || !sq || !plan->dist_luma || !plan->owner_luma || (o->blend == GT_BLEND_FEATHER && !wl)) {
        st = GT_ERR_RUNTIME;
        goto done;
    }
    double t0 = gt_now_ms(), t_region = 0, t_edt = 0;
    /* regions (footprint of the camera, intersected with its mask) and distances */
    const float *PL;
    for (int i = 0; i < N; i++) {
        PL = plan->plane[0].P[i];
#pragma omp parallel for schedule(static)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float u, v;
                int ok = gt_sm_project(PL, (float)x, (float)y, &u, &v);
                size_t j = (size_t)y * W + x;
                region[j] = ok && u >= 0 && v >= 0 && u <= (float)(in_w - 1) && v <= (float)(in_h - 1) &&
                            (!o->masks[i] || o->masks[i][j]);
            }
        double te = gt_now_ms();
        t_region += te - t0;
        if ((st = edt_with(region, W, H, (float)(W + H), plan->dist_luma + NP * i, sq))) goto done;
        t0 = gt_now_ms();
        t_edt += t0 - te;
    }
    /* seams: owner = camera farthest inside its region (ties: lowest index) */
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < NP; j++) {
        int best = 255;
        float bd = 0;
        float sum = 0;
        for (int i = 0; i < N; i++) {
            float d = plan->dist_luma[NP * i + j];
            if (d > bd) {
                bd = d;
                best = i;
            }
            if (wl) {
                float w = fminf(1.0f, o->feather_alpha * d);
                wl[NP * i + j] = w;
                sum += w;
            }
        }
        plan->owner_luma[j] = (uint8_t)best;
        if (wl)
            for (int i = 0; i < N; i++) wl[NP * i + j] = sum > 0 ? wl[NP * i + j] / sum : 0.0f;
    }
    double t_seams = gt_now_ms() - t0;
    t0 = gt_now_ms();
    /* per-plane owner maps, weights and mask pyramids (chroma takes the luma
     * value at the top-left luma sample of its block) */
    for (int p = 0; p < 3; p++) {
        gt_stitch_plane *pl = &plan->plane[p];
        int pw = pl->out.w, ph = pl->out.h, sx = (int)pl->out.sx, sy = (int)pl->out.sy;
        size_t n = (size_t)pw * ph;
        pl->owner = gt_malloc(n, "owner map");
        if (!pl->owner) {
            st = GT_ERR_RUNTIME;
            goto done;
        }
#pragma omp parallel for schedule(static)
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) pl->owner[(size_t)y * pw + x] = plan->owner_luma[(size_t)y * sy * W + (size_t)x * sx];
        if (o->blend == GT_BLEND_FEATHER) {
            pl->weight = gt_malloc_array(n * N, sizeof(float), "feather weights");
            if (!pl->weight) {
                st = GT_ERR_RUNTIME;
                goto done;
            }
            for (int i = 0; i < N; i++)
#pragma omp parallel for schedule(static)
                for (int y = 0; y < ph; y++)
                    for (int x = 0; x < pw; x++)
                        pl->weight[n * i + (size_t)y * pw + x] = wl[NP * i + (size_t)y * sy * W + (size_t)x * sx];
        }
        if (o->blend == GT_BLEND_MULTIBAND) {
            int L = gt_stitch_levels(pw, ph, o->bands);
            pl->levels = L;
            pl->lw[0] = pw;
            pl->lh[0] = ph;
            for (int k = 1; k < L; k++) {
                pl->lw[k] = (pl->lw[k - 1] + 1) / 2;
                pl->lh[k] = (pl->lh[k - 1] + 1) / 2;
            }
            for (int k = 0; k < L; k++) {
                pl->mbw[k] = gt_malloc_array((size_t)pl->lw[k] * pl->lh[k] * N, sizeof(float), "mask pyramid");
                if (!pl->mbw[k]) {
                    st = GT_ERR_RUNTIME;
                    goto done;
                }
            }
            for (int i = 0; i < N; i++) {
                float *m0 = pl->mbw[0] + n * i;
#pragma omp parallel for schedule(static)
                for (size_t j = 0; j < n; j++) m0[j] = pl->owner[j] == i ? 1.0f : 0.0f;
                for (int k = 1; k < L; k++) {
                    size_t nk1 = (size_t)pl->lw[k - 1] * pl->lh[k - 1], nk = (size_t)pl->lw[k] * pl->lh[k];
                    gt_stitch_reduce(pl->mbw[k - 1] + nk1 * i, pl->lw[k - 1], pl->lh[k - 1], pl->mbw[k] + nk * i);
                }
            }
            for (int k = 0; k < L; k++) {
                size_t nk = (size_t)pl->lw[k] * pl->lh[k];
#pragma omp parallel for schedule(static)
                for (size_t j = 0; j < nk; j++) {
                    float s = 0;
                    for (int i = 0; i < N; i++) s += pl->mbw[k][nk * i + j];
                    for (int i = 0; i < N; i++) pl->mbw[k][nk * i + j] = s > 0 ? pl->mbw[k][nk * i + j] / s : 0.0f;
                }
            }
            for (int k = 0; k < L; k++)
                for (int i = 0; i < N; i++) nonzero_box(pl->mbw[k] + (size_t)pl->lw[k] * pl->lh[k] * i, pl->lw[k], pl->lh[k], pl->mbbox[k][i]);
        }
    }
    gt_info("plan: regions %.1f ms, distance transforms %.1f ms, seams and weights %.1f ms, planes (owners, weights, "
            "mask pyramids) %.1f ms",
            t_region, t_edt, t_seams, gt_now_ms() - t0);
done:
    free(region);
    free(sq);
    free(wl);
    if (st) gt_stitch_plan_free(plan);
    return st;
}

void gt_stitch_plan_set_gains(gt_stitch_plan *plan, const float gains[3][GT_STITCH_MAX_CAMS])
{
    for (int p = 0; p < 3; p++)
        for (int i = 0; i < plan->ncam; i++) {
            plan->plane[p].gain[i] = gains[p][i];
            plan->plane[p].bias[i] = p == 0 ? 0.0f : plan->plane[p].black * (1.0f - gains[p][i]);
        }
}

/* ------------------------------------------------------------ CPU frame */

static inline float sample_cam(const gt_stitch_plane *pl, const uint8_t *in, int i, float x, float y)
{
    return gt_sm_sample(pl->P[i], in + pl->in.off, pl->in.pitch, pl->in.step, pl->in.w, pl->in.h, pl->gain + i,
                        pl->bias + i, x, y);
}

static gt_status multiband_plane(const gt_stitch_plan *plan, const gt_stitch_plane *pl,
                                 const uint8_t *const *in, uint8_t *out)
{
    int L = pl->levels, N = plan->ncam;
    size_t total = 0, off[GT_STITCH_MAX_BANDS];
    for (int k = 0; k < L; k++) {
        off[k] = total;
        total += (size_t)pl->lw[k] * pl->lh[k];
    }
    float *G = gt_malloc_array(total, sizeof(float), "pyramid");
    float *B = gt_calloc(total, sizeof(float), "pyramid");
    float *E = gt_malloc_array((size_t)pl->lw[0] * pl->lh[0], sizeof(float), "pyramid");
    if (!G || !B || !E) {
        free(G), free(B), free(E);
        return GT_ERR_RUNTIME;
    }
    for (int i = 0; i < N; i++) {
#pragma omp parallel for schedule(static)
        for (int y = 0; y < pl->lh[0]; y++)
            for (int x = 0; x < pl->lw[0]; x++)
                G[(size_t)y * pl->lw[0] + x] = sample_cam(pl, in[i], i, (float)x, (float)y);
        for (int k = 1; k < L; k++) gt_stitch_reduce(G + off[k - 1], pl->lw[k - 1], pl->lh[k - 1], G + off[k]);
        for (int k = 0; k < L; k++) {
            size_t nk = (size_t)pl->lw[k] * pl->lh[k];
            const float *w = pl->mbw[k] + nk * i, *g = G + off[k];
            float *b = B + off[k];
            if (k == L - 1) {
#pragma omp parallel for schedule(static)
                for (size_t j = 0; j < nk; j++) b[j] = fmaf(w[j], g[j], b[j]);
            } else {
                gt_stitch_expand(G + off[k + 1], pl->lw[k + 1], pl->lh[k + 1], E, pl->lw[k], pl->lh[k]);
#pragma omp parallel for schedule(static)
                for (size_t j = 0; j < nk; j++) b[j] = fmaf(w[j], g[j] - E[j], b[j]);
            }
        }
    }
    for (int k = L - 2; k >= 0; k--) {
        size_t nk = (size_t)pl->lw[k] * pl->lh[k];
        gt_stitch_expand(B + off[k + 1], pl->lw[k + 1], pl->lh[k + 1], E, pl->lw[k], pl->lh[k]);
        float *b = B + off[k];
#pragma omp parallel for schedule(static)
        for (size_t j = 0; j < nk; j++) b[j] = b[j] + E[j];
    }
#pragma omp parallel for schedule(static)
    for (int y = 0; y < pl->out.h; y++)
        for (int x = 0; x < pl->out.w; x++) {
            size_t j = (size_t)y * pl->out.w + x;
            out[pl->out.off + (size_t)y * pl->out.pitch + (size_t)x * pl->out.step] =
                pl->owner[j] == 255 ? (uint8_t)pl->black : gt_sm_quant(B[j]);
        }
    free(G), free(B), free(E);
    return GT_OK;
}

gt_status gt_stitch_frame_cpu(const gt_stitch_plan *plan, const uint8_t *const *in, uint8_t *out)
{
    for (int p = 0; p < 3; p++) {
        const gt_stitch_plane *pl = &plan->plane[p];
        if (plan->blend == GT_BLEND_MULTIBAND) {
            GT_TRY(multiband_plane(plan, pl, in, out));
            continue;
        }
        int pw = pl->out.w, ph = pl->out.h;
        size_t n = (size_t)pw * ph;
#pragma omp parallel for schedule(static)
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                size_t j = (size_t)y * pw + x;
                uint8_t *o = out + pl->out.off + (size_t)y * pl->out.pitch + (size_t)x * pl->out.step;
                if (plan->blend == GT_BLEND_NONE) {
                    int i = pl->owner[j];
                    *o = i == 255 ? (uint8_t)pl->black : gt_sm_quant(sample_cam(pl, in[i], i, (float)x, (float)y));
                } else {
                    float acc = 0;
                    int any = 0;
                    for (int i = 0; i < plan->ncam; i++) {
                        float w = pl->weight[n * i + j];
                        if (w > 0) {
                            acc = fmaf(w, sample_cam(pl, in[i], i, (float)x, (float)y), acc);
                            any = 1;
                        }
                    }
                    *o = any ? gt_sm_quant(acc) : (uint8_t)pl->black;
                }
            }
    }
    return GT_OK;
}

