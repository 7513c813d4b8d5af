/* Exact tile culling of a projected Gaussian, shared by the CUDA kernels
 * (kernels/gs/gs_raster.cu) and the CPU tests (the CPU reference bins into
 * the reference's bounding square, gs_tile_rect in gs_math.h).
 *
 * A Gaussian with opacity o changes a pixel only where alpha = o e^power >=
 * 1/255, i.e. power >= -ln(255 o): inside the ellipse
 *     u^T Sigma^-1 u <= tau2 = 2 ln(255 o)
 * around its centre (u = pixel - centre, Sigma the 2-D covariance with the
 * +0.3 filter). For tile row ty the function returns the columns [lo, hi) of
 * tiles whose pixel centres (widened by GS_CULL_PAD) meet that ellipse,
 * within the reference's bounding-square columns [x0, x1). The ellipse's
 * left boundary x(uy) = k uy - hw(uy) is convex in uy and the right one
 * concave, so over the row's band their extremes are at the band-clamped
 * uy of the ellipse's leftmost/rightmost points. */
#ifndef GT_GS_CULL_H
#define GT_GS_CULL_H

#include <math.h>

#include "common/hostdev.h"
#include "gs/gs_math.h" /* GS_TILE, gs_det2 */

/* Margins: the ellipse is taken for alpha >= (1/255) e^-GS_CULL_MARGIN and
 * the tile's pixel-centre box is widened by GS_CULL_PAD pixels, so float
 * rounding can never drop a contributing Gaussian. */
#define GS_CULL_MARGIN 0.05f
#define GS_CULL_PAD 0.5f

/* tau2 for opacity o: 2 (ln(255 o) + margin); <= 0: never visible */
GT_HD float gs_cull_tau2(float o)
{
    return 2.0f * (logf(255.0f * o) + GS_CULL_MARGIN);
}

GT_HD void gs_row_span(float px, float py, float a, float b, float c, float det, float tau2, int ty,
                       int x0, int x1, int *lo, int *hi)
{
    *lo = x0;
    *hi = x0;
    float ylo = (float)(ty * GS_TILE) - py - GS_CULL_PAD;
    float yhi = (float)(ty * GS_TILE + GS_TILE - 1) - py + GS_CULL_PAD;
    float Y = sqrtf(tau2 * c);
    ylo = fmaxf(ylo, -Y);
    yhi = fminf(yhi, Y);
    if (ylo > yhi) return;
    float k = b / c;
    float s = sqrtf(det / c);
    float ur = b * sqrtf(tau2 / a); /* uy of the rightmost point */
    float uyr = fminf(fmaxf(ur, ylo), yhi);
    float uyl = fminf(fmaxf(-ur, ylo), yhi);
    float xmax = k * uyr + sqrtf(fmaxf(0.0f, tau2 - uyr * uyr / c)) * s + GS_CULL_PAD;
    float xmin = k * uyl - sqrtf(fmaxf(0.0f, tau2 - uyl * uyl / c)) * s - GS_CULL_PAD;
    float flo = ceilf((px + xmin - (float)(GS_TILE - 1)) / (float)GS_TILE);
    float fhi = floorf((px + xmax) / (float)GS_TILE) + 1.0f;
    flo = fminf(fmaxf(flo, (float)x0), (float)x1);
    fhi = fminf(fmaxf(fhi, (float)x0), (float)x1);
    if (fhi > flo) {
        *lo = (int)flo;
        *hi = (int)fhi;
    }
}

#endif
