/* Dense refinement of a pair's homography (after RANSAC and the
 * Levenberg-Marquardt fit of the feature inliers): feature positions are
 * only good to about a pixel, and a homography fitted to them in an overlap
 * strip extrapolates that error to the far corners of the view. Here the
 * luma of the whole overlap decides: Gauss-Newton with Levenberg-Marquardt
 * damping on
 *     sum_x  rho( I_j(H x) - (a I_i(x) + b) )
 * over the 8 parameters of the normalised H and an exposure model a, b
 * (so that cameras of different exposure align), rho the Huber loss at
 * twice a robust scale of the residuals (parallax, moving objects and
 * clipping weigh less). Samples x are camera i's pixels on a grid (at most
 * about 150000) that H maps inside camera j; large views start at half
 * resolution. Partial sums are taken in fixed chunks and added in order, so
 * the result does not depend on the number of threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "stitch/calib.h"

typedef struct {
    const uint8_t *img;
    int w, h, pitch;
} gray_t;

static inline float bilin(const gray_t *g, float u, float v)
{
    int x0 = (int)floorf(u), y0 = (int)floorf(v);
    float fx = u - x0, fy = v - y0;
    const uint8_t *r0 = g->img + (size_t)y0 * g->pitch + x0, *r1 = r0 + g->pitch;
    float top = r0[0] + fx * (r0[1] - r0[0]), bot = r1[0] + fx * (r1[1] - r1[0]);
    return top + fy * (bot - top);
}

enum { NP = 10, NT = NP * (NP + 1) / 2, CHUNK = 1024 };

typedef struct {
    gray_t a, b;
    double Ti[9], Tj[9], Tji[9]; /* normalisations of camera i and j pixels, Tj^-1 */
    float *xs;                   /* sample positions in camera i (x, y) and I_i there */
    int n;
} align_t;

/* residuals and (with J) normal-equation sums at parameters p (Hn 0..7, a, b);
 * returns the robust cost, sums in S[NT + NP] (upper triangle, then J^T r) */
static double accumulate(const align_t *A, const double *p, double scale, double *S, float *res, int *inside)
{
    int nchunk = (A->n + CHUNK - 1) / CHUNK;
    double *part = calloc((size_t)nchunk * (NT + NP + 2), sizeof(double));
    if (!part) return INFINITY;
    const double s = A->Tji[0], cx = A->Tji[2], cy = A->Tji[5]; /* u = s un + c */
#pragma omp parallel for schedule(static)
    for (int c = 0; c < nchunk; c++) {
        double *P = part + (size_t)c * (NT + NP + 2);
        int e = (c + 1) * CHUNK < A->n ? (c + 1) * CHUNK : A->n;
        for (int k = c * CHUNK; k < e; k++) {
            const float *x = A->xs + 3 * (size_t)k;
            double xn = A->Ti[0] * x[0] + A->Ti[2], yn = A->Ti[4] * x[1] + A->Ti[5];
            double D = p[6] * xn + p[7] * yn + 1;
            if (!(D > 1e-6)) {
                if (res) res[k] = NAN;
                continue;
            }
            double ux = (p[0] * xn + p[1] * yn + p[2]) / D, uy = (p[3] * xn + p[4] * yn + p[5]) / D;
            float u = (float)(s * ux + cx), v = (float)(s * uy + cy);
            if (!(u >= 1 && v >= 1 && u <= A->b.w - 3 && v <= A->b.h - 3)) {
                if (res) res[k] = NAN;
                continue;
            }
            float Ij = bilin(&A->b, u, v);
            double r = Ij - (p[8] * x[2] + p[9]);
            if (res) res[k] = (float)r;
            double ar = fabs(r), wgt = ar <= scale ? 1.0 : scale / ar;
            P[NT + NP] += ar <= scale ? 0.5 * r * r : scale * (ar - 0.5 * scale);
            P[NT + NP + 1] += 1;
            if (!S) continue;
            double gx = 0.5 * (bilin(&A->b, u + 1, v) - bilin(&A->b, u - 1, v));
            double gy = 0.5 * (bilin(&A->b, u, v + 1) - bilin(&A->b, u, v - 1));
            double ax = s * gx / D, ay = s * gy / D;
            double J[NP] = {ax * xn, ax * yn, ax, ay * xn, ay * yn, ay, -(ax * ux + ay * uy) * xn,
                            -(ax * ux + ay * uy) * yn, -x[2], -1};
            int t = 0;
            for (int q = 0; q < NP; q++) {
                double wq = wgt * J[q];
                for (int m = q; m < NP; m++) P[t++] += wq * J[m];
                P[NT + q] += wq * r;
            }
        }
    }
    double cost = 0, cnt = 0;
    if (S) memset(S, 0, (NT + NP) * sizeof(double));
    for (int c = 0; c < nchunk; c++) {
        const double *P = part + (size_t)c * (NT + NP + 2);
        if (S)
            for (int t = 0; t < NT + NP; t++) S[t] += P[t];
        cost += P[NT + NP];
        cnt += P[NT + NP + 1];
    }
    free(part);
    if (inside) *inside = (int)cnt;
    return cost;
}

/* the k-th smallest of v[0..n) (quickselect; v is reordered) */
static float select_k(float *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        float piv = v[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < piv) i++;
            while (v[j] > piv) j--;
            if (i <= j) {
                float t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return v[k];
    }
    return v[k];
}

/* robust scale: 1.4826 * median |r| (at least 1 level) */
static double robust_scale(const align_t *A, const double *p, float *res)
{
    accumulate(A, p, 1e30, NULL, res, NULL);
    int m = 0;
    for (int k = 0; k < A->n; k++)
        if (!isnan(res[k])) res[m++] = fabsf(res[k]);
    if (m == 0) return 1;
    return fmax(1.4826 * select_k(res, m, m / 2), 1.0);
}

/* one resolution: refine p in place */
static gt_status refine(align_t *A, double *p, int iters)
{
    float *res = gt_malloc_array((size_t)A->n + 1, sizeof(float), "alignment residuals");
    if (!res) return GT_ERR_RUNTIME;
    double lambda = 1e-4;
    for (int it = 0; it < iters; it++) {
        double scale = 2 * robust_scale(A, p, res), S[NT + NP];
        int inside;
        double cost = accumulate(A, p, scale, S, NULL, &inside);
        if (inside < 64 || !isfinite(cost)) break;
        double JtJ[NP * NP];
        for (int q = 0, t = 0; q < NP; q++)
            for (int m = q; m < NP; m++, t++) JtJ[q * NP + m] = JtJ[m * NP + q] = S[t];
        int improved = 0;
        double step_norm = 0;
        for (int tries = 0; tries < 8 && !improved; tries++) {
            double M[NP * NP], d[NP], pt[NP];
            memcpy(M, JtJ, sizeof M);
            for (int q = 0; q < NP; q++) {
                M[q * NP + q] *= 1 + lambda;
                d[q] = -S[NT + q];
            }
            if (gt_calib_solve(M, d, NP)) {
                lambda *= 10;
                continue;
            }
            for (int q = 0; q < NP; q++) pt[q] = p[q] + d[q];
            int in2;
            double c2 = accumulate(A, pt, scale, NULL, NULL, &in2);
            /* compare per sample: the overlap may gain or lose a few */
            if (in2 >= 64 && c2 / in2 < cost / inside) {
                improved = 1;
                memcpy(p, pt, sizeof pt);
                lambda = fmax(lambda / 10, 1e-8);
                step_norm = 0;
                for (int q = 0; q < 8; q++) step_norm = fmax(step_norm, fabs(d[q]));
            } else {
                lambda *= 10;
            }
        }
        if (!improved || step_norm < 1e-7) break;
    }
    free(res);
    return GT_OK;
}

/* samples of camera i on a grid that H maps inside camera j (margin m) */
static gt_status make_samples(align_t *A, const double H[9], int step, int m)
{
    int w = A->a.w, h = A->a.h;
    size_t cap = (size_t)((w + step - 1) / step) * ((h + step - 1) / step);
    A->xs = gt_malloc_array(cap + 1, 3 * sizeof(float), "alignment samples");
    if (!A->xs) return GT_ERR_RUNTIME;
    A->n = 0;
    for (int y = 2; y < h - 2; y += step)
        for (int x = 2; x < w - 2; x += step) {
            double d = H[6] * x + H[7] * y + H[8];
            if (!(d > 0)) continue;
            double u = (H[0] * x + H[1] * y + H[2]) / d, v = (H[3] * x + H[4] * y + H[5]) / d;
            if (u < m || v < m || u > A->b.w - 1 - m || v > A->b.h - 1 - m) continue;
            float *s = A->xs + 3 * (size_t)A->n++;
            s[0] = (float)x, s[1] = (float)y, s[2] = A->a.img[(size_t)y * A->a.pitch + x];
        }
    return GT_OK;
}

static void norm_of(int w, int h, double T[9])
{
    double s = 2.0 / (w > h ? w : h);
    double t[9] = {s, 0, -s * (w - 1) / 2.0, 0, s, -s * (h - 1) / 2.0, 0, 0, 1};
    memcpy(T, t, sizeof t);
}

/* 2x2 box reduction (pixel centres move: x_half = (x - 0.5) / 2) */
static uint8_t *half(const uint8_t *src, int w, int h, int pitch)
{
    int hw = w / 2, hh = h / 2;
    uint8_t *d = gt_malloc_array((size_t)hw, (size_t)hh, "alignment pyramid");
    if (!d) return NULL;
    for (int y = 0; y < hh; y++)
        for (int x = 0; x < hw; x++) {
            const uint8_t *s = src + (size_t)2 * y * pitch + 2 * x;
            d[(size_t)y * hw + x] = (uint8_t)((s[0] + s[1] + s[pitch] + s[pitch + 1] + 2) >> 2);
        }
    return d;
}

static gt_status align_level(const gray_t *a, const gray_t *b, double H[9], int iters, double gain[2])
{
    align_t A;
    memset(&A, 0, sizeof A);
    A.a = *a, A.b = *b;
    norm_of(a->w, a->h, A.Ti);
    norm_of(b->w, b->h, A.Tj);
    GT_TRY(gt_stitch_h_invert(A.Tj, A.Tji));
    int step = 1;
    while ((double)a->w * a->h / ((double)step * step) > 150000.0 * 2.5) step++;
    GT_TRY(make_samples(&A, H, step, 4));
    gt_status st = GT_OK;
    if (A.n >= 500) {
        double Tii[9], M[9], Hn[9], p[NP];
        gt_stitch_h_invert(A.Ti, Tii);
        gt_stitch_h_mul(A.Tj, H, M);
        gt_stitch_h_mul(M, Tii, Hn);
        for (int k = 0; k < 8; k++) p[k] = Hn[k] / Hn[8];
        p[8] = gain[0], p[9] = gain[1];
        st = refine(&A, p, iters);
        if (!st) {
            double Hq[9] = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], 1};
            gt_stitch_h_mul(A.Tji, Hq, M);
            gt_stitch_h_mul(M, A.Ti, Hn);
            if (fabs(Hn[8]) > 1e-12 && isfinite(Hn[0])) {
                for (int k = 0; k < 9; k++) H[k] = Hn[k] / Hn[8];
                gain[0] = p[8], gain[1] = p[9];
            }
        }
    }
    free(A.xs);
    return st;
}

gt_status gt_calib_align(const uint8_t *yi, const uint8_t *yj, int w, int h, int pitch, double H[9], int iters)
{
    double gain[2] = {1, 0};
    if (w >= 800 || h >= 800) {
        uint8_t *hi = half(yi, w, h, pitch), *hj = half(yj, w, h, pitch);
        gt_status st = hi && hj ? GT_OK : GT_ERR_RUNTIME;
        if (!st) {
            /* x_half = (x - 0.5) / 2: H_half = S H S^-1 */
            double S[9] = {0.5, 0, -0.25, 0, 0.5, -0.25, 0, 0, 1}, Si[9] = {2, 0, 0.5, 0, 2, 0.5, 0, 0, 1}, T[9], Hh[9];
            gt_stitch_h_mul(S, H, T);
            gt_stitch_h_mul(T, Si, Hh);
            gray_t a = {hi, w / 2, h / 2, w / 2}, b = {hj, w / 2, h / 2, w / 2};
            st = align_level(&a, &b, Hh, iters, gain);
            if (!st) {
                gt_stitch_h_mul(Si, Hh, T);
                gt_stitch_h_mul(T, S, H);
                for (int k = 0; k < 9; k++) H[k] /= H[8];
            }
        }
        free(hi), free(hj);
        GT_TRY(st);
    }
    gray_t a = {yi, w, h, pitch}, b = {yj, w, h, pitch};
    return align_level(&a, &b, H, iters, gain);
}
