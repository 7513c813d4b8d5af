/* The reference training's photometric loss on the CPU (the oracle of
 * kernels/gs/gs_fit.cu): (1-lambda) L1 + lambda (1 - SSIM) and its gradient
 * with respect to the rendered image, in double precision.
 *
 * SSIM map S = A1 A2 / (B1 B2) from the windowed moments mu_x = W*x,
 * mu_y = W*y, e_xx = W*(x x), e_yy = W*(y y), e_xy = W*(x y) (W: the
 * separable 11x11 Gaussian, zero padding):
 *   A1 = 2 mu_x mu_y + C1, A2 = 2 (e_xy - mu_x mu_y) + C2,
 *   B1 = mu_x^2 + mu_y^2 + C1, B2 = (e_xx - mu_x^2) + (e_yy - mu_y^2) + C2.
 * With G = dL/dS = -lambda / N (N = 3 w h) at every pixel,
 *   dL/dx = W^T(G dS/dmu_x) + 2 x W^T(G dS/de_xx) + y W^T(G dS/de_xy),
 * and W^T = W (a symmetric window with zero padding), where
 *   dS/dmu_x = (2 mu_y (A2 - A1) - 2 mu_x S (B2 - B1)) / (B1 B2),
 *   dS/de_xx = -S / B2,  dS/de_xy = 2 A1 / (B1 B2). */
#include <math.h>
#include <stdlib.h>

#include "gs/gs_fit.h"

void gt_gs_ssim_window(float win[GT_GS_SSIM_WIN])
{
    double g[GT_GS_SSIM_WIN], s = 0;
    for (int k = 0; k < GT_GS_SSIM_WIN; k++) {
        double d = k - GT_GS_SSIM_WIN / 2;
        g[k] = exp(-d * d / (2.0 * GT_GS_SSIM_SIGMA * GT_GS_SSIM_SIGMA));
        s += g[k];
    }
    for (int k = 0; k < GT_GS_SSIM_WIN; k++) win[k] = (float)(g[k] / s);
}

/* out = W * in ("same" size, zero padding), through tmp. */
static void conv_sep(const double *in, double *tmp, double *out, int w, int h, const double *win)
{
    const int r = GT_GS_SSIM_WIN / 2;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double s = 0;
            for (int k = -r; k <= r; k++)
                if (x + k >= 0 && x + k < w) s += win[k + r] * in[(size_t)y * w + x + k];
            tmp[(size_t)y * w + x] = s;
        }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double s = 0;
            for (int k = -r; k <= r; k++)
                if (y + k >= 0 && y + k < h) s += win[k + r] * tmp[(size_t)(y + k) * w + x];
            out[(size_t)y * w + x] = s;
        }
}

gt_status gt_gs_loss_cpu(const float *x, const float *y, int w, int h, double lambda, gt_gs_loss *out,
                         float *dl_dx)
{
    size_t np = (size_t)w * h, n = 3 * np;
    double *buf = malloc(sizeof(double) * np * 12);
    if (!buf) return gt_fail(GT_ERR_RUNTIME, "out of memory (SSIM of a %dx%d image)", w, h);
    double *in = buf, *tmp = buf + np, *mx = buf + 2 * np, *my = buf + 3 * np, *exx = buf + 4 * np,
           *eyy = buf + 5 * np, *exy = buf + 6 * np, *gm = buf + 7 * np, *gxx = buf + 8 * np,
           *gxy = buf + 9 * np, *cv = buf + 10 * np, *cv2 = buf + 11 * np;
    float wf[GT_GS_SSIM_WIN];
    double win[GT_GS_SSIM_WIN];
    gt_gs_ssim_window(wf);
    for (int k = 0; k < GT_GS_SSIM_WIN; k++) win[k] = wf[k];
    const double C1 = GT_GS_SSIM_C1, C2 = GT_GS_SSIM_C2, G = -lambda / (double)n;
    double l1 = 0, ssim = 0;
    for (int c = 0; c < 3; c++) {
        const float *xc = x + c * np, *yc = y + c * np;
        for (size_t i = 0; i < np; i++) in[i] = xc[i];
        conv_sep(in, tmp, mx, w, h, win);
        for (size_t i = 0; i < np; i++) in[i] = yc[i];
        conv_sep(in, tmp, my, w, h, win);
        for (size_t i = 0; i < np; i++) in[i] = (double)xc[i] * xc[i];
        conv_sep(in, tmp, exx, w, h, win);
        for (size_t i = 0; i < np; i++) in[i] = (double)yc[i] * yc[i];
        conv_sep(in, tmp, eyy, w, h, win);
        for (size_t i = 0; i < np; i++) in[i] = (double)xc[i] * yc[i];
        conv_sep(in, tmp, exy, w, h, win);
        for (size_t i = 0; i < np; i++) {
            double m1 = mx[i], m2 = my[i];
            double A1 = 2 * m1 * m2 + C1, A2 = 2 * (exy[i] - m1 * m2) + C2;
            double B1 = m1 * m1 + m2 * m2 + C1, B2 = (exx[i] - m1 * m1) + (eyy[i] - m2 * m2) + C2;
            double S = A1 * A2 / (B1 * B2);
            ssim += S;
            gm[i] = G * (2 * m2 * (A2 - A1) - 2 * m1 * S * (B2 - B1)) / (B1 * B2);
            gxx[i] = G * (-S / B2);
            gxy[i] = G * (2 * A1 / (B1 * B2));
            l1 += fabs((double)xc[i] - yc[i]);
        }
        if (!dl_dx) continue;
        float *dc = dl_dx + c * np;
        conv_sep(gm, tmp, cv, w, h, win);
        conv_sep(gxx, tmp, cv2, w, h, win);
        for (size_t i = 0; i < np; i++) cv[i] += 2.0 * xc[i] * cv2[i];
        conv_sep(gxy, tmp, cv2, w, h, win);
        double gl1 = (1.0 - lambda) / (double)n;
        for (size_t i = 0; i < np; i++) {
            double d = (double)xc[i] - yc[i];
            double s = d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0; /* torch.sign */
            dc[i] = (float)(cv[i] + yc[i] * cv2[i] + gl1 * s);
        }
    }
    free(buf);
    out->l1 = l1 / (double)n;
    out->ssim = ssim / (double)n;
    out->loss = (1.0 - lambda) * out->l1 + lambda * (1.0 - out->ssim);
    return GT_OK;
}

double gt_gs_psnr(const float *x, const float *y, size_t n)
{
    double se = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)x[i] - y[i];
        se += d * d;
    }
    if (se <= 0) return INFINITY;
    return 10.0 * log10((double)n / se);
}
