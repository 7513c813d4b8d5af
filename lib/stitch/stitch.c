/* Plane views, distance transforms, Burt-Adelson pyramids and the CPU
 * reference of the per-frame work (the plan is built in plan.c). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/timer.h"
#include "stitch/stitch.h"
#include "stitch/stitch_math.h"
#include "stitch/stitch_priv.h"

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

gt_status gt_stitch_edt_ws(const uint8_t *inside, int w, int h, float far, float *dist, double *sq)
{
    const double BIG = 1e12; /* > any squared distance (2 * 65536^2), exact in double */
    enum { CB = 64 };        /* columns per block of the column scans */
    const int NONE = 1 << 30; /* no outside pixel on that side of the column */
    size_t N = (size_t)w * h;
    int any_out = 0;
#pragma omp parallel for schedule(static) reduction(| : any_out)
    for (size_t i = 0; i < N; i++) any_out |= !inside[i];
    if (!any_out) {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < N; i++) dist[i] = far;
        return GT_OK;
    }
    int oom = 0;
#pragma omp parallel reduction(| : oom)
    {
        double *d = malloc((size_t)w * sizeof(double)), *z = malloc(((size_t)w + 1) * sizeof(double));
        int *v = malloc((size_t)w * sizeof(int));
        bool ok = d && z && v;
        if (!ok) oom = 1;
        /* columns: the 1-D transform of a 0 / BIG column is the squared
         * distance to the column's nearest outside pixel (BIG where it has
         * none), found exactly by a scan down and a scan up, CB columns at a
         * time, row by row */
#pragma omp for schedule(static)
        for (int x0 = 0; x0 < w; x0 += CB) {
            int nb = w - x0 < CB ? w - x0 : CB, run[CB];
            for (int j = 0; j < nb; j++) run[j] = NONE;
            for (int y = 0; y < h; y++) {
                const uint8_t *in = inside + (size_t)y * w + x0;
                double *o = sq + (size_t)y * w + x0;
                for (int j = 0; j < nb; j++) {
                    run[j] = in[j] ? (run[j] < NONE ? run[j] + 1 : NONE) : 0;
                    o[j] = (double)run[j];
                }
            }
            for (int j = 0; j < nb; j++) run[j] = NONE;
            for (int y = h - 1; y >= 0; y--) {
                const uint8_t *in = inside + (size_t)y * w + x0;
                double *o = sq + (size_t)y * w + x0;
                for (int j = 0; j < nb; j++) {
                    run[j] = in[j] ? (run[j] < NONE ? run[j] + 1 : NONE) : 0;
                    double m = o[j] < (double)run[j] ? o[j] : (double)run[j];
                    o[j] = m >= (double)NONE ? BIG : m * m;
                }
            }
        }
#pragma omp for schedule(static)
        for (int y = 0; y < h; y++) {
            if (!ok) continue;
            edt1d(sq + (size_t)y * w, w, d, v, z);
            for (int x = 0; x < w; x++) dist[(size_t)y * w + x] = (float)sqrt(d[x]);
        }
        free(d), free(z), free(v);
    }
    if (oom) return gt_fail(GT_ERR_RUNTIME, "out of memory in the distance transform");
    return GT_OK;
}

gt_status gt_stitch_edt(const uint8_t *inside, int w, int h, float far, float *dist)
{
    double *sq = gt_malloc_array((size_t)w * h, sizeof(double), "distance transform");
    if (!sq) return GT_ERR_RUNTIME;
    gt_status st = gt_stitch_edt_ws(inside, w, h, far, dist, sq);
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
/* The reduce's rows, where the build's baseline has no FMA instruction (x86-64
 * without -mfma), also as an FMA clone picked at run time: fmaf is a libm
 * call otherwise. fmaf is correctly rounded either way, so both clones give
 * the same bits. */
#if defined(__x86_64__) && !defined(__FMA__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define GT_FMA_CLONES __attribute__((target_clones("fma", "default")))
#endif
#endif
#ifndef GT_FMA_CLONES
#define GT_FMA_CLONES
#endif

/* horizontal reduce of one row for outputs x0..x1: out[x - x0] */
GT_FMA_CLONES static void reduce_row(const float *r, int w, float *out, int x0, int x1)
{
    int hi = (w - 3) / 2; /* the last x whose taps are all inside */
    int a = x0 > 1 ? x0 : 1, b = x1 < hi ? x1 : hi;
    for (int x = x0; x <= x1 && x < a; x++) out[x - x0] = reduce_at(r, w, 2 * x);
    for (int x = a; x <= b; x++) {
        const float *q = r + 2 * x;
        out[x - x0] = gt_sm_reduce5(q[-2], q[-1], q[0], q[1], q[2]);
    }
    for (int x = (b + 1 > a ? b + 1 : a); x <= x1; x++) out[x - x0] = reduce_at(r, w, 2 * x);
}

/* vertical reduce of five reduced rows into o (n samples) */
GT_FMA_CLONES static void reduce_cols(const float *const t[5], float *o, int n)
{
    for (int x = 0; x < n; x++) o[x] = gt_sm_reduce5(t[0][x], t[1][x], t[2][x], t[3][x], t[4][x]);
}

void gt_stitch_reduce_box(const float *src, int w, int h, float *dst, const int box[4])
{
    int ow = (w + 1) / 2, x0 = box[0], y0 = box[1], x1 = box[2], y1 = box[3], bw = x1 - x0 + 1;
    if (x1 < x0 || y1 < y0) return;
    /* rows, then columns; each thread keeps the horizontally reduced source
     * rows of its window (2y-2 .. 2y+2) in a ring of 5, keyed by row: the
     * rows of one window are distinct mod 5, and consecutive windows share 3;
     * small outputs (coarse levels) on one thread, cheaper than a fork */
#pragma omp parallel if ((long)bw * (y1 - y0 + 1) >= 16384)
    {
        float *ring = malloc((size_t)5 * bw * sizeof(float));
        if (!ring) abort(); /* small; callers size-check */
        int key[5] = {-1, -1, -1, -1, -1};
#pragma omp for schedule(static)
        for (int y = y0; y <= y1; y++) {
            const float *t[5];
            for (int k = 0; k < 5; k++) {
                int row = gt_sm_reflect(2 * y - 2 + k, h), slot = row % 5;
                if (key[slot] != row) {
                    reduce_row(src + (size_t)row * w, w, ring + (size_t)slot * bw, x0, x1);
                    key[slot] = row;
                }
                t[k] = ring + (size_t)slot * bw;
            }
            reduce_cols(t, dst + (size_t)y * ow + x0, bw);
        }
        free(ring);
    }
}

void gt_stitch_reduce(const float *src, int w, int h, float *dst)
{
    int box[4] = {0, 0, (w + 1) / 2 - 1, (h + 1) / 2 - 1};
    gt_stitch_reduce_box(src, w, h, dst, box);
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

/* ------------------------------------------------------------ CPU frame */

static inline float sample_cam(const gt_stitch_plane *pl, const uint8_t *in, int i, int x, int y)
{
    if (pl->ray)
        return gt_sm_sample_ray(pl->cam[i], pl->tab, pl->out.w, pl->out.h, in + pl->in.off, pl->in.pitch, pl->in.step,
                                pl->in.w, pl->in.h, pl->gain + i, pl->bias + i, x, y);
    return gt_sm_sample(pl->P[i], in + pl->in.off, pl->in.pitch, pl->in.step, pl->in.w, pl->in.h, pl->gain + i,
                        pl->bias + i, (float)x, (float)y);
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
                G[(size_t)y * pl->lw[0] + x] = sample_cam(pl, in[i], i, x, y);
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
                    *o = i == 255 ? (uint8_t)pl->black : gt_sm_quant(sample_cam(pl, in[i], i, x, y));
                } else {
                    float acc = 0;
                    int any = 0;
                    for (int i = 0; i < plan->ncam; i++) {
                        float w = pl->weight[n * i + j];
                        if (w > 0) {
                            acc = fmaf(w, sample_cam(pl, in[i], i, x, y), acc);
                            any = 1;
                        }
                    }
                    *o = any ? gt_sm_quant(acc) : (uint8_t)pl->black;
                }
            }
    }
    return GT_OK;
}

