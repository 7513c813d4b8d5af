/* Raw YUV and Y4M streams (see yuv.h).
 *
 * Y4M reading rules: the header line is "YUV4MPEG2" followed by tags W<width>
 * H<height> F<num>:<den> I<p|t|b|m|?> A<num>:<den> C<colourspace> X<anything>
 * (unknown tags are ignored, as the format asks); C420jpeg, C420mpeg2,
 * C420paldv and C420 map to yuv420p (the chroma siting differs, the layout
 * does not), C422 to yuv422p, C444 to yuv444p; mono and high-bit-depth
 * colourspaces are rejected. No C tag means 4:2:0. Each frame starts with a
 * "FRAME" line whose parameters are ignored. Header lines are capped at
 * 4 KiB, dimensions at 32768 and frames at 1 GiB, so a lying header cannot make
 * the caller allocate a giant frame buffer. Errors are GT_ERR_DATA with
 * "<what> (<file>: byte <offset>)"; errors inside a stream name the frame
 * (counted from 1). Reading never seeks, so pipes work. */
#include "io/yuv.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/mapout.h"
#include "common/output.h"

#define Y4M_MAGIC "YUV4MPEG2"
#define Y4M_MAX_LINE 4096
#define Y4M_MAX_DIM 32768
#define MAX_FRAME_BYTES ((size_t)1 << 30)

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

gt_status gt_yuv_to_rgb(const void *frame, gt_pixfmt f, int w, int h, gt_yuv_matrix m,
                        gt_yuv_range r, uint8_t *rgb)
{
    GT_TRY(check_args(f, w, h));
    double kr, kb;
    coefs(m, &kr, &kb);
    double kg = 1.0 - kr - kb;
    double yo = r == GT_RANGE_FULL ? 0.0 : 16.0, ys = r == GT_RANGE_FULL ? 255.0 : 219.0;
    double cs = r == GT_RANGE_FULL ? 255.0 : 224.0;
    comp_loc l[3];
    locate(f, w, h, l);
    int sx, sy;
    subsampling(f, &sx, &sy);
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
    double kr, kb;
    coefs(m, &kr, &kb);
    double kg = 1.0 - kr - kb;
    double yo = r == GT_RANGE_FULL ? 0.0 : 16.0, ys = r == GT_RANGE_FULL ? 255.0 : 219.0;
    double cs = r == GT_RANGE_FULL ? 255.0 : 224.0;
    comp_loc l[3];
    locate(f, w, h, l);
    int sx, sy;
    subsampling(f, &sx, &sy);
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

/* ------------------------------------------------------------ reader */

struct gt_yuv_reader {
    FILE *f;
    char *name;
    int w, h;
    gt_pixfmt fmt;
    bool y4m;
    int fps_num, fps_den;
    size_t frame_bytes;
    long frames;
    long long off;          /* bytes consumed so far */
    unsigned char pre[16];  /* bytes read while sniffing, handed out first */
    size_t npre, ppre;
};

/* read up to n bytes; returns the count (short only at EOF or error) */
static size_t rd(gt_yuv_reader *r, void *buf, size_t n)
{
    size_t got = 0;
    unsigned char *b = buf;
    while (got < n && r->ppre < r->npre) b[got++] = r->pre[r->ppre++];
    if (got < n) got += fread(b + got, 1, n - got, r->f);
    r->off += (long long)got;
    return got;
}

static int rd_byte(gt_yuv_reader *r)
{
    unsigned char c;
    return rd(r, &c, 1) == 1 ? c : EOF;
}

static gt_status read_error(gt_yuv_reader *r)
{
    return gt_fail(GT_ERR_RUNTIME, "read error on '%s': %s", gt_in_name(r->name), strerror(errno));
}

/* Read the rest of a text line (after the magic) into buf, without '\n'. */
static gt_status read_line(gt_yuv_reader *r, char *buf, size_t cap, const char *what)
{
    size_t n = 0;
    for (;;) {
        int c = rd_byte(r);
        if (c == EOF) {
            if (ferror(r->f)) return read_error(r);
            return gt_fail_at_byte(GT_ERR_DATA, r->name, r->off, "%s ends before its newline", what);
        }
        if (c == '\n') break;
        if (c == 0) return gt_fail_at_byte(GT_ERR_DATA, r->name, r->off - 1, "NUL byte in %s", what);
        if (n + 1 >= cap)
            return gt_fail_at_byte(GT_ERR_DATA, r->name, r->off, "%s longer than %zu bytes", what, cap - 1);
        buf[n++] = (char)c;
    }
    buf[n] = 0;
    return GT_OK;
}

static bool parse_int(const char *s, const char **end, long *v)
{
    char *e;
    errno = 0;
    if (!(*s >= '0' && *s <= '9')) return false;
    long x = strtol(s, &e, 10);
    if (errno == ERANGE) return false;
    *v = x;
    *end = e;
    return true;
}

static bool parse_ratio(const char *s, long *n, long *d)
{
    const char *e;
    if (!parse_int(s, &e, n) || *e != ':') return false;
    if (!parse_int(e + 1, &e, d)) return false;
    return *e == 0;
}

static gt_status parse_y4m_header(gt_yuv_reader *r)
{
    char line[Y4M_MAX_LINE];
    long long base = r->off, hdr_start = 0;
    GT_TRY(read_line(r, line, sizeof line, "Y4M header"));
    long w = -1, h = -1, fn = 25, fd = 1;
    int fmt = GT_PIX_YUV420P;
    char *save = NULL;
    for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        const char *e;
        long v, a, b;
        hdr_start = base + (t - line); /* byte offset of the tag, for messages */
        switch (t[0]) {
        case 'W':
        case 'H':
            if (!parse_int(t + 1, &e, &v) || *e)
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start, "bad Y4M %s tag '%.40s'",
                                       t[0] == 'W' ? "width" : "height", t);
            if (v <= 0 || v > Y4M_MAX_DIM)
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "Y4M %s %ld out of range 1..%d", t[0] == 'W' ? "width" : "height", v,
                                       Y4M_MAX_DIM);
            if (t[0] == 'W') w = v;
            else h = v;
            break;
        case 'F':
            if (!parse_ratio(t + 1, &a, &b) || a <= 0 || b <= 0 || a > INT_MAX || b > INT_MAX)
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "bad Y4M frame rate '%.40s' (expected F<num>:<den>, both positive)", t);
            fn = a;
            fd = b;
            break;
        case 'A':
            if (!parse_ratio(t + 1, &a, &b))
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "bad Y4M aspect ratio '%.40s' (expected A<num>:<den>)", t);
            break;
        case 'I':
            if (!strchr("ptbm?", t[1]) || t[1] == 0 || t[2])
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "bad Y4M interlacing tag '%.40s' (expected Ip, It, Ib or Im)", t);
            break;
        case 'C':
            if (strcmp(t, "C420jpeg") == 0 || strcmp(t, "C420mpeg2") == 0 ||
                strcmp(t, "C420paldv") == 0 || strcmp(t, "C420") == 0)
                fmt = GT_PIX_YUV420P;
            else if (strcmp(t, "C422") == 0) fmt = GT_PIX_YUV422P;
            else if (strcmp(t, "C444") == 0) fmt = GT_PIX_YUV444P;
            else if (strncmp(t, "Cmono", 5) == 0)
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "Y4M colourspace '%.40s' (greyscale) is not supported; use 4:2:0, 4:2:2 or 4:4:4", t);
            else
                return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start,
                                       "Y4M colourspace '%.40s' is not supported (C420jpeg, C420mpeg2, C420paldv, C420, C422, C444)",
                                       t);
            break;
        default: /* X extensions and unknown tags are ignored */
            break;
        }
    }
    hdr_start = 0;
    if (w < 0 || h < 0)
        return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start, "Y4M header lacks the %s tag",
                               w < 0 ? "W (width)" : "H (height)");
    if (gt_pixfmt_check_size((gt_pixfmt)fmt, (int)w, (int)h) != GT_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", gt_errmsg()); /* the message buffer is reused */
        return gt_fail_at_byte(GT_ERR_DATA, r->name, hdr_start, "Y4M frame size: %s", why);
    }
    r->w = (int)w;
    r->h = (int)h;
    r->fmt = (gt_pixfmt)fmt;
    r->fps_num = (int)fn;
    r->fps_den = (int)fd;
    return GT_OK;
}

gt_status gt_yuv_open(const char *path, int w, int h, int fmt, gt_yuv_reader **out)
{
    *out = NULL;
    gt_status st;
    gt_yuv_reader *r = gt_calloc(1, sizeof *r, "YUV reader");
    if (!r) return GT_ERR_RUNTIME;
    r->name = strdup(path ? path : "-");
    r->f = gt_in_open(path, &st);
    if (!r->f || !r->name) {
        if (r->f) {
            gt_in_close(r->f);
            st = gt_fail(GT_ERR_RUNTIME, "out of memory");
        }
        free(r->name);
        free(r);
        return st;
    }
    r->fps_num = 25;
    r->fps_den = 1;
    /* sniff the magic without seeking: keep the bytes for a raw stream */
    size_t magic = strlen(Y4M_MAGIC) + 1;
    r->npre = fread(r->pre, 1, magic, r->f);
    if (r->npre < magic && ferror(r->f)) {
        st = read_error(r);
        goto fail;
    }
    if (r->npre == magic && memcmp(r->pre, Y4M_MAGIC " ", magic) == 0) {
        r->ppre = r->npre;
        r->off = (long long)magic;
        r->y4m = true;
        st = parse_y4m_header(r);
        if (st != GT_OK) goto fail;
    } else {
        if (r->npre == magic && memcmp(r->pre, Y4M_MAGIC "\n", magic) == 0) {
            st = gt_fail_at_byte(GT_ERR_DATA, r->name, (long long)magic - 1, "Y4M header has no tags (W and H are required)");
            goto fail;
        }
        if (fmt < 0 || w <= 0 || h <= 0) {
            st = gt_fail(GT_ERR_USAGE, "'%s' is raw YUV (no YUV4MPEG2 header): give its size and pixel format",
                         gt_in_name(path));
            goto fail;
        }
        if ((st = gt_pixfmt_check_size((gt_pixfmt)fmt, w, h)) != GT_OK) goto fail;
        r->w = w;
        r->h = h;
        r->fmt = (gt_pixfmt)fmt;
    }
    r->frame_bytes = gt_pixfmt_frame_bytes(r->fmt, r->w, r->h);
    if (r->frame_bytes > MAX_FRAME_BYTES) {
        st = r->y4m ? gt_fail_at_byte(GT_ERR_DATA, r->name, 0, "Y4M frame of %zu bytes is larger than the 1 GiB limit", r->frame_bytes)
                    : gt_fail(GT_ERR_USAGE, "frame of %zu bytes is larger than the 1 GiB limit", r->frame_bytes);
        goto fail;
    }
    *out = r;
    return GT_OK;
fail:
    gt_yuv_close(r);
    return st;
}

int gt_yuv_width(const gt_yuv_reader *r) { return r->w; }
int gt_yuv_height(const gt_yuv_reader *r) { return r->h; }
gt_pixfmt gt_yuv_pixfmt(const gt_yuv_reader *r) { return r->fmt; }
bool gt_yuv_is_y4m(const gt_yuv_reader *r) { return r->y4m; }
void gt_yuv_rate(const gt_yuv_reader *r, int *num, int *den)
{
    *num = r->fps_num;
    *den = r->fps_den;
}
size_t gt_yuv_frame_bytes(const gt_yuv_reader *r) { return r->frame_bytes; }
long gt_yuv_frames_read(const gt_yuv_reader *r) { return r->frames; }

gt_status gt_yuv_read_frame(gt_yuv_reader *r, void *buf, bool *got)
{
    *got = false;
    long fno = r->frames + 1;
    if (r->y4m) {
        char mark[5];
        long long at = r->off;
        size_t n = rd(r, mark, 5);
        if (n == 0) {
            if (ferror(r->f)) return read_error(r);
            return GT_OK; /* clean end between frames */
        }
        if (n < 5 || memcmp(mark, "FRAME", n) != 0) {
            if (ferror(r->f)) return read_error(r);
            if (memcmp(mark, "FRAME", n) == 0)
                return gt_fail_at_byte(GT_ERR_DATA, r->name, at, "FRAME marker of frame %ld cut short", fno);
            return gt_fail_at_byte(GT_ERR_DATA, r->name, at, "expected a FRAME marker at frame %ld", fno);
        }
        int c = rd_byte(r);
        if (c == ' ') {
            char params[Y4M_MAX_LINE];
            gt_status st = read_line(r, params, sizeof params, "FRAME line");
            if (st != GT_OK) {
                gt_errmsg_prefix("frame %ld", fno);
                return st;
            }
        } else if (c != '\n') {
            if (c == EOF && ferror(r->f)) return read_error(r);
            return gt_fail_at_byte(GT_ERR_DATA, r->name, at,
                                   c == EOF ? "FRAME marker of frame %ld cut short"
                                            : "bad FRAME marker at frame %ld",
                                   fno);
        }
    }
    long long at = r->off;
    size_t n = rd(r, buf, r->frame_bytes);
    if (n < r->frame_bytes) {
        if (ferror(r->f)) return read_error(r);
        if (n == 0 && !r->y4m) return GT_OK; /* clean end of a raw stream */
        return gt_fail_at_byte(GT_ERR_DATA, r->name, at + (long long)n,
                               "stream ends inside frame %ld (%zu of %zu bytes)", fno, n, r->frame_bytes);
    }
    r->frames++;
    *got = true;
    return GT_OK;
}

void gt_yuv_close(gt_yuv_reader *r)
{
    if (!r) return;
    if (r->f) gt_in_close(r->f);
    free(r->name);
    free(r);
}

/* ------------------------------------------------------------ writer */

struct gt_yuv_writer {
    gt_out o;
    bool y4m;
    int w, h;
    gt_pixfmt fmt, file_fmt;
    size_t in_bytes, out_bytes;
    uint8_t *tmp;
    gt_mapout *map; /* regular-file output: parallel mmap appends (else stdio) */
};

/* Regular files get the mmap appender (see common/mapout.h): on tmpfs one
 * write() of a 15 MB frame is bound by a single core allocating, zeroing
 * and copying pages. Pipes, terminals and stdout keep stdio, and so does
 * everything when GT_NO_MMAP_WRITE is set (tests compare the two). */
static void try_map(gt_yuv_writer *wr)
{
    const char *no = getenv("GT_NO_MMAP_WRITE");
    if (wr->o.is_stdout || (no && *no && strcmp(no, "0") != 0)) return;
    if (fflush(wr->o.fp) != 0) return; /* the stdio path reports it */
    off_t at = ftello(wr->o.fp);
    if (at < 0) return;
    wr->map = gt_mapout_open(fileno(wr->o.fp), at, 0, 0);
}

gt_status gt_yuv_create(const char *path, bool y4m, int w, int h, gt_pixfmt fmt, int fps_num,
                        int fps_den, gt_yuv_writer **out)
{
    *out = NULL;
    GT_TRY(gt_pixfmt_check_size(fmt, w, h));
    if (y4m && (fps_num <= 0 || fps_den <= 0))
        return gt_fail(GT_ERR_USAGE, "frame rate %d/%d: both must be positive", fps_num, fps_den);
    gt_yuv_writer *wr = gt_calloc(1, sizeof *wr, "YUV writer");
    if (!wr) return GT_ERR_RUNTIME;
    wr->y4m = y4m;
    wr->w = w;
    wr->h = h;
    wr->fmt = fmt;
    wr->file_fmt = fmt;
    if (y4m) {
        if (fmt == GT_PIX_NV12) wr->file_fmt = GT_PIX_YUV420P;
        else if (fmt == GT_PIX_YUYV422 || fmt == GT_PIX_UYVY422) wr->file_fmt = GT_PIX_YUV422P;
    }
    wr->in_bytes = gt_pixfmt_frame_bytes(fmt, w, h);
    wr->out_bytes = gt_pixfmt_frame_bytes(wr->file_fmt, w, h);
    if (wr->file_fmt != fmt && !(wr->tmp = gt_malloc(wr->out_bytes, "frame conversion buffer"))) {
        free(wr);
        return GT_ERR_RUNTIME;
    }
    gt_status st = gt_out_open(&wr->o, path);
    if (st != GT_OK) {
        free(wr->tmp);
        free(wr);
        return st;
    }
    if (y4m) {
        const char *cs = wr->file_fmt == GT_PIX_YUV420P   ? "420jpeg"
                         : wr->file_fmt == GT_PIX_YUV422P ? "422"
                                                          : "444";
        fprintf(wr->o.fp, "YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 C%s\n", w, h, fps_num, fps_den, cs);
    }
    try_map(wr);
    *out = wr;
    return GT_OK;
}

gt_status gt_yuv_write_frame(gt_yuv_writer *wr, const void *frame)
{
    const void *data = frame;
    if (wr->tmp) {
        GT_TRY(gt_yuv_convert(frame, wr->fmt, wr->tmp, wr->file_fmt, wr->w, wr->h));
        data = wr->tmp;
    }
    if (wr->map) {
        if (wr->y4m) GT_TRY(gt_mapout_write(wr->map, "FRAME\n", 6, wr->o.path));
        return gt_mapout_write(wr->map, data, wr->out_bytes, wr->o.path);
    }
    if ((wr->y4m && fputs("FRAME\n", wr->o.fp) == EOF) ||
        fwrite(data, 1, wr->out_bytes, wr->o.fp) != wr->out_bytes)
        return gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s", wr->o.path, strerror(errno));
    return GT_OK;
}

gt_status gt_yuv_finish(gt_yuv_writer *wr, bool ok)
{
    if (!wr) return GT_OK;
    gt_status st = GT_OK;
    if (wr->map) {
        st = gt_mapout_close(wr->map, ok, wr->o.path);
        if (st) ok = false;
    }
    if (ok) st = gt_out_commit(&wr->o);
    else gt_out_abort(&wr->o);
    free(wr->tmp);
    free(wr);
    return st;
}
