/* Pixel formats (see yuv.h): names, frame sizes and size checks, and the
 * conversions of a whole frame: between formats (chroma averaged down or
 * replicated up) and to and from packed RGB for previews. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "io/yuv.h"

static const char *const pix_names[GT_PIX_COUNT] = {"yuyv422", "uyvy422", "yuv420p",
                                                    "nv12",    "yuv422p", "yuv444p"};

const char *gt_pixfmt_name(gt_pixfmt f)
{
    return (f >= 0 && f < GT_PIX_COUNT) ? pix_names[f] : "unknown";
}

gt_status gt_pixfmt_parse(const char *opt, const char *s, gt_pixfmt *f)
{
    for (int i = 0; i < GT_PIX_COUNT; i++)
        if (s && strcmp(s, pix_names[i]) == 0) {
            *f = (gt_pixfmt)i;
            return GT_OK;
        }
    return gt_fail(GT_ERR_USAGE,
                   "%s: unknown pixel format '%s' (expected yuyv422, uyvy422, yuv420p, nv12, yuv422p or yuv444p)",
                   opt ? opt : "--pix-fmt", s ? s : "");
}

/* chroma subsampling of a format */
static void subsampling(gt_pixfmt f, int *sx, int *sy)
{
    *sx = (f == GT_PIX_YUV444P) ? 1 : 2;
    *sy = (f == GT_PIX_YUV420P || f == GT_PIX_NV12) ? 2 : 1;
}

gt_status gt_pixfmt_check_size(gt_pixfmt f, int w, int h)
{
    if (f < 0 || f >= GT_PIX_COUNT) return gt_fail(GT_ERR_USAGE, "unknown pixel format %d", (int)f);
    if (w <= 0 || h <= 0)
        return gt_fail(GT_ERR_USAGE, "frame size %dx%d: width and height must be positive", w, h);
    int sx, sy;
    subsampling(f, &sx, &sy);
    if (sx == 2 && w % 2)
        return gt_fail(GT_ERR_USAGE, "width %d must be even for %s", w, pix_names[f]);
    if (sy == 2 && h % 2)
        return gt_fail(GT_ERR_USAGE, "height %d must be even for %s", h, pix_names[f]);
    if (gt_pixfmt_frame_bytes(f, w, h) == 0)
        return gt_fail(GT_ERR_USAGE, "frame size %dx%d too large", w, h);
    return GT_OK;
}

size_t gt_pixfmt_frame_bytes(gt_pixfmt f, int w, int h)
{
    if (f < 0 || f >= GT_PIX_COUNT || w <= 0 || h <= 0) return 0;
    int sx, sy;
    subsampling(f, &sx, &sy);
    if ((sx == 2 && w % 2) || (sy == 2 && h % 2)) return 0;
    size_t luma, chroma, total;
    if (!gt_mul_size((size_t)w, (size_t)h, &luma)) return 0;
    chroma = luma / (size_t)(sx * sy);
    if (!gt_mul_size(chroma, 2, &total) || __builtin_add_overflow(total, luma, &total)) return 0;
    return total;
}

/* ------------------------------------------------------------ sample access */

/* Where component c (0 Y, 1 U, 2 V) of a frame lives: sample (x, y) at
 * off + y*stride + x*step, x/y in the component's own resolution. */
typedef struct {
    size_t off, stride, step;
} comp_loc;

static void locate(gt_pixfmt f, int w, int h, comp_loc loc[3])
{
    int sx, sy;
    subsampling(f, &sx, &sy);
    size_t cw = (size_t)(w / sx), ch = (size_t)(h / sy), luma = (size_t)w * (size_t)h;
    switch (f) {
    case GT_PIX_YUYV422:
        loc[0] = (comp_loc){0, (size_t)w * 2, 2};
        loc[1] = (comp_loc){1, (size_t)w * 2, 4};
        loc[2] = (comp_loc){3, (size_t)w * 2, 4};
        break;
    case GT_PIX_UYVY422:
        loc[0] = (comp_loc){1, (size_t)w * 2, 2};
        loc[1] = (comp_loc){0, (size_t)w * 2, 4};
        loc[2] = (comp_loc){2, (size_t)w * 2, 4};
        break;
    case GT_PIX_NV12:
        loc[0] = (comp_loc){0, (size_t)w, 1};
        loc[1] = (comp_loc){luma, cw * 2, 2};
        loc[2] = (comp_loc){luma + 1, cw * 2, 2};
        break;
    default: /* planar */
        loc[0] = (comp_loc){0, (size_t)w, 1};
        loc[1] = (comp_loc){luma, cw, 1};
        loc[2] = (comp_loc){luma + cw * ch, cw, 1};
        break;
    }
}

static gt_status check_args(gt_pixfmt f, int w, int h)
{
    return gt_pixfmt_check_size(f, w, h) == GT_OK ? GT_OK : GT_ERR_RUNTIME; /* message kept */
}

gt_status gt_yuv_convert(const void *src, gt_pixfmt sf, void *dst, gt_pixfmt df, int w, int h)
{
    GT_TRY(check_args(sf, w, h));
    GT_TRY(check_args(df, w, h));
    const uint8_t *s = src;
    uint8_t *d = dst;
    if (sf == df) {
        memmove(d, s, gt_pixfmt_frame_bytes(sf, w, h));
        return GT_OK;
    }
    comp_loc ls[3], ld[3];
    locate(sf, w, h, ls);
    locate(df, w, h, ld);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            d[ld[0].off + (size_t)y * ld[0].stride + (size_t)x * ld[0].step] =
                s[ls[0].off + (size_t)y * ls[0].stride + (size_t)x * ls[0].step];
    int ssx, ssy, dsx, dsy;
    subsampling(sf, &ssx, &ssy);
    subsampling(df, &dsx, &dsy);
    int cw = w / dsx, ch = h / dsy, n = dsx * dsy;
    /* each destination chroma sample covers a dsx x dsy box of pixels; it is
     * the mean of the source chroma over that box (replication when the
     * source is finer in no direction, averaging where it is finer) */
    for (int c = 1; c <= 2; c++)
        for (int cy = 0; cy < ch; cy++)
            for (int cx = 0; cx < cw; cx++) {
                int sum = 0;
                for (int by = 0; by < dsy; by++)
                    for (int bx = 0; bx < dsx; bx++) {
                        int px = cx * dsx + bx, py = cy * dsy + by;
                        sum += s[ls[c].off + (size_t)(py / ssy) * ls[c].stride +
                                 (size_t)(px / ssx) * ls[c].step];
                    }
                d[ld[c].off + (size_t)cy * ld[c].stride + (size_t)cx * ld[c].step] =
                    (uint8_t)((sum + n / 2) / n);
            }
    return GT_OK;
}

/* ------------------------------------------------------------ colour */

static void coefs(gt_yuv_matrix m, double *kr, double *kb)
{
    if (m == GT_BT709) {
        *kr = 0.2126;
        *kb = 0.0722;
    } else {
        *kr = 0.299;
        *kb = 0.114;
    }
}

static uint8_t clamp8(double v)
{
    v = v + 0.5;
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}

gt_status gt_yuv_colour_of(gt_pixfmt f, int w, int h, gt_yuv_matrix m, gt_yuv_range r, gt_yuv_colour *c)
{
    GT_TRY(gt_pixfmt_check_size(f, w, h));
    coefs(m, &c->kr, &c->kb);
    c->kg = 1.0 - c->kr - c->kb;
    c->yo = r == GT_RANGE_FULL ? 0.0 : 16.0;
    c->ys = r == GT_RANGE_FULL ? 255.0 : 219.0;
    c->cs = r == GT_RANGE_FULL ? 255.0 : 224.0;
    comp_loc l[3];
    locate(f, w, h, l);
    for (int k = 0; k < 3; k++) c->off[k] = l[k].off, c->stride[k] = l[k].stride, c->step[k] = l[k].step;
    c->bytes = gt_pixfmt_frame_bytes(f, w, h);
    subsampling(f, &c->sx, &c->sy);
    return GT_OK;
}

gt_status gt_yuv_to_rgb(const void *frame, gt_pixfmt f, int w, int h, gt_yuv_matrix m,
                        gt_yuv_range r, uint8_t *rgb)
{
    GT_TRY(check_args(f, w, h));
    gt_yuv_colour c;
    GT_TRY(gt_yuv_colour_of(f, w, h, m, r, &c));
    const double kr = c.kr, kg = c.kg, kb = c.kb, yo = c.yo, ys = c.ys, cs = c.cs;
    const comp_loc l[3] = {{c.off[0], c.stride[0], c.step[0]}, {c.off[1], c.stride[1], c.step[1]},
                           {c.off[2], c.stride[2], c.step[2]}};
    const int sx = c.sx, sy = c.sy;
    const uint8_t *s = frame;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double Y = (s[l[0].off + (size_t)y * l[0].stride + (size_t)x * l[0].step] - yo) / ys;
            size_t cx = (size_t)(x / sx), cy = (size_t)(y / sy);
            double cb = (s[l[1].off + cy * l[1].stride + cx * l[1].step] - 128.0) / cs;
            double cr = (s[l[2].off + cy * l[2].stride + cx * l[2].step] - 128.0) / cs;
            double R = Y + 2.0 * (1.0 - kr) * cr;
            double B = Y + 2.0 * (1.0 - kb) * cb;
            double G = (Y - kr * R - kb * B) / kg;
            uint8_t *o = rgb + ((size_t)y * (size_t)w + (size_t)x) * 3;
            o[0] = clamp8(R * 255.0);
            o[1] = clamp8(G * 255.0);
            o[2] = clamp8(B * 255.0);
        }
    return GT_OK;
}

gt_status gt_rgb_to_yuv(const uint8_t *rgb, int w, int h, gt_yuv_matrix m, gt_yuv_range r,
                        void *frame, gt_pixfmt f)
{
    GT_TRY(check_args(f, w, h));
    gt_yuv_colour c;
    GT_TRY(gt_yuv_colour_of(f, w, h, m, r, &c));
    const double kr = c.kr, kg = c.kg, kb = c.kb, yo = c.yo, ys = c.ys, cs = c.cs;
    const comp_loc l[3] = {{c.off[0], c.stride[0], c.step[0]}, {c.off[1], c.stride[1], c.step[1]},
                           {c.off[2], c.stride[2], c.step[2]}};
    const int sx = c.sx, sy = c.sy;
    uint8_t *d = frame;
    for (int cy = 0; cy < h / sy; cy++)
        for (int cx = 0; cx < w / sx; cx++) {
            double cb = 0, cr = 0;
            for (int by = 0; by < sy; by++)
                for (int bx = 0; bx < sx; bx++) {
                    int x = cx * sx + bx, y = cy * sy + by;
                    const uint8_t *p = rgb + ((size_t)y * (size_t)w + (size_t)x) * 3;
                    double R = p[0] / 255.0, G = p[1] / 255.0, B = p[2] / 255.0;
                    double Y = kr * R + kg * G + kb * B;
                    d[l[0].off + (size_t)y * l[0].stride + (size_t)x * l[0].step] = clamp8(yo + ys * Y);
                    cb += (B - Y) / (2.0 * (1.0 - kb));
                    cr += (R - Y) / (2.0 * (1.0 - kr));
                }
            cb /= sx * sy;
            cr /= sx * sy;
            d[l[1].off + (size_t)cy * l[1].stride + (size_t)cx * l[1].step] = clamp8(128.0 + cs * cb);
            d[l[2].off + (size_t)cy * l[2].stride + (size_t)cx * l[2].step] = clamp8(128.0 + cs * cr);
        }
    return GT_OK;
}
