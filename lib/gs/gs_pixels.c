/* Decoded photographs to the fit's planar RGB, with area-averaging
 * downscaling (gs_pixels.h). */
#include "gs/gs_pixels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gt_gs_pixel_rgb(const gt_image *img, int x, int y, const float bg[3], double rgb[3])
{
    int ch = img->channels;
    size_t i = ((size_t)y * img->w + (size_t)x) * ch;
    double scale = img->bits == 16 ? 1.0 / 65535.0 : 1.0 / 255.0;
    double s[4] = {0, 0, 0, 0};
    for (int c = 0; c < ch; c++)
        s[c] = (img->bits == 16 ? ((const uint16_t *)img->data)[i + c] : ((const uint8_t *)img->data)[i + c]) * scale;
    double a = 1.0;
    if (ch <= 2) rgb[0] = rgb[1] = rgb[2] = s[0];
    else rgb[0] = s[0], rgb[1] = s[1], rgb[2] = s[2];
    if (ch == 2) a = s[1];
    if (ch == 4) a = s[3];
    for (int c = 0; c < 3; c++) rgb[c] = rgb[c] * a + bg[c] * (1.0 - a);
}

/* Row y of the source, composited, as sw*3 interleaved doubles. */
static void src_row(const gt_gs_pixsrc *s, int y, double *row)
{
    if (s->rgb) {
        const size_t np = (size_t)s->w * s->h;
        const float *r = s->rgb + (size_t)y * s->w;
        for (int x = 0; x < s->w; x++)
            for (int c = 0; c < 3; c++) row[3 * x + c] = r[(size_t)c * np + (size_t)x];
        return;
    }
    for (int x = 0; x < s->w; x++) gt_gs_pixel_rgb(s->img, x, y, s->bg, row + 3 * (size_t)x);
}

static long gcd(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b, b = t;
    }
    return a;
}

/* Area weights of n outputs over sn inputs: output k covers inputs
 * first[k] .. first[k]+count[k]-1 with integer weights wt[k*stride + i]
 * (overlaps in units of gcd(sn, n)/n input pixels; their sum is *total for
 * every output: sn/gcd). */
typedef struct axis {
    int *first, *count, stride;
    long *wt;
    long total;
} axis;

static bool axis_make(axis *a, int sn, int n)
{
    long g = gcd(sn, n);
    a->stride = sn / n + 2;
    a->total = sn / g;
    a->first = malloc(sizeof(int) * (size_t)n);
    a->count = malloc(sizeof(int) * (size_t)n);
    a->wt = malloc(sizeof(long) * (size_t)n * (size_t)a->stride);
    if (!a->first || !a->count || !a->wt) return false;
    for (int k = 0; k < n; k++) {
        long lo = (long)k * sn, hi = (long)(k + 1) * sn; /* in units of 1/n input pixel */
        int i0 = (int)(lo / n), i1 = (int)((hi + n - 1) / n);
        a->first[k] = i0;
        a->count[k] = i1 - i0;
        for (int i = i0; i < i1; i++) {
            long s = (long)i * n > lo ? (long)i * n : lo, e = (long)(i + 1) * n < hi ? (long)(i + 1) * n : hi;
            a->wt[(size_t)k * a->stride + (size_t)(i - i0)] = (e - s) / g;
        }
    }
    return true;
}

static void axis_free(axis *a)
{
    free(a->first), free(a->count), free(a->wt);
}

static void put(float *out, uint8_t *out8, size_t at, double v)
{
    if (out) out[at] = (float)v;
    else out8[at] = gt_gs_to_byte(v);
}

gt_status gt_gs_pixels_resample(const gt_gs_pixsrc *src, int w, int h, float *out, uint8_t *out8)
{
    const int sw = src->w, sh = src->h;
    if (w < 1 || h < 1 || w > sw || h > sh || (!out) == (!out8))
        return gt_fail(GT_ERR_USAGE, "cannot resample a %dx%d image to %dx%d", sw, sh, w, h);
    const size_t np = (size_t)w * h;
    const gt_image *img = src->img;
    if (w == sw && h == sh) { /* the size as it is: a conversion */
        if (out8 && img && img->bits == 8 && img->channels == 3) {
            const uint8_t *d = img->data; /* the bytes as they are */
            for (size_t p = 0; p < np; p++)
                for (int c = 0; c < 3; c++) out8[(size_t)c * np + p] = d[3 * p + (size_t)c];
        } else if (src->rgb) {
            for (size_t k = 0; k < 3 * np; k++) put(out, out8, k, src->rgb[k]);
        } else {
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    double rgb[3];
                    gt_gs_pixel_rgb(img, x, y, src->bg, rgb);
                    for (int c = 0; c < 3; c++) put(out, out8, (size_t)c * np + (size_t)y * w + x, rgb[c]);
                }
        }
        return GT_OK;
    }
    double *row = malloc(sizeof(double) * 3 * (size_t)sw), *acc = malloc(sizeof(double) * 3 * (size_t)w);
    axis ax = {0}, ay = {0};
    bool ok = row && acc && axis_make(&ax, sw, w) && axis_make(&ay, sh, h);
    if (!ok) {
        free(row), free(acc), axis_free(&ax), axis_free(&ay);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (resampling a %dx%d image)", sw, sh);
    }
    const double norm = (double)ax.total * (double)ay.total;
    for (int y = 0; y < h; y++) {
        memset(acc, 0, sizeof(double) * 3 * (size_t)w);
        for (int j = 0; j < ay.count[y]; j++) {
            double wy = (double)ay.wt[(size_t)y * ay.stride + (size_t)j];
            src_row(src, ay.first[y] + j, row);
            for (int x = 0; x < w; x++) {
                double hx[3] = {0, 0, 0};
                const long *wx = ax.wt + (size_t)x * ax.stride;
                const double *r = row + 3 * (size_t)ax.first[x];
                for (int i = 0; i < ax.count[x]; i++)
                    for (int c = 0; c < 3; c++) hx[c] += (double)wx[i] * r[3 * i + c];
                for (int c = 0; c < 3; c++) acc[3 * x + c] += wy * hx[c];
            }
        }
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) put(out, out8, (size_t)c * np + (size_t)y * w + x, acc[3 * x + c] / norm);
    }
    free(row), free(acc), axis_free(&ax), axis_free(&ay);
    return GT_OK;
}

gt_status gt_gs_pixels_planar(const gt_image *img, int w, int h, const float bg[3], float *out)
{
    gt_gs_pixsrc s = {.img = img, .w = img->w, .h = img->h, .bg = bg};
    return gt_gs_pixels_resample(&s, w, h, out, NULL);
}
