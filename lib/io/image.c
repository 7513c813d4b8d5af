/* Images (see image.h): PNG in through stb_image, out through png_write.c,
 * JPEG through stb, 16-bit PGM and PFM.
 *
 * Readers take the whole input into memory first (so "-" and pipes work) and
 * check the dimensions stb reports before decoding: at most 1 GiB of decoded
 * samples. PFM data is read as it arrives, so a header that lies about the
 * size fails at the end of the data without a giant allocation. Broken input
 * is GT_ERR_DATA: "<what> (<file>)" for PNG (stb does not say where), "<what>
 * (<file>: byte <offset>)" for PFM. */
#include "io/image.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"

#define MAX_DECODED_BYTES ((size_t)1 << 30)

#if defined(GT_HAVE_STB_SYSTEM)
/* stb declares static functions it does not define in our configuration, and
 * gcc reports its inlined internals; both only after the whole file is read,
 * so these two stay off for this file (our code above and below is checked
 * by the other warnings, and was checked with them on before adding stb). */
#pragma GCC diagnostic ignored "-Wunused-function"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_FAILURE_USERMSG
#include <stb_image.h>
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>
#pragma GCC diagnostic pop
#define HAVE_STB 1
#else
#define HAVE_STB 0
#endif

#if HAVE_STB
static bool is_png(const unsigned char *b, size_t n)
{
    return n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0;
}

/* PNG and JPEG only: stb's other decoders are not fuzzed here, and its PNM
 * header parser overflows a signed int on long numbers (found by
 * fuzz_image). */
static bool is_png_or_jpeg(const unsigned char *b, size_t n)
{
    return is_png(b, n) || (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff);
}
#endif

/* Whole input into memory (works for pipes). */
static gt_status slurp(const char *path, unsigned char **data, size_t *len)
{
    gt_status st;
    FILE *f = gt_in_open(path, &st);
    if (!f) return st;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    while (b) {
        if (n == cap) {
            if (cap >= MAX_DECODED_BYTES) {
                free(b);
                gt_in_close(f);
                return gt_fail_at(GT_ERR_DATA, path, 0, "image file larger than 1 GiB");
            }
            unsigned char *nb = realloc(b, cap * 2);
            if (!nb) break;
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (!b) {
        gt_in_close(f);
        return gt_fail(GT_ERR_RUNTIME, "out of memory reading '%s'", gt_in_name(path));
    }
    if (ferror(f)) {
        int e = errno;
        free(b);
        gt_in_close(f);
        return gt_fail(GT_ERR_RUNTIME, "read error on '%s': %s", gt_in_name(path), strerror(e));
    }
    gt_in_close(f);
    *data = b;
    *len = n;
    return GT_OK;
}

gt_status gt_image_read(const char *path, int desired_channels, int want16, gt_image *img)
{
    memset(img, 0, sizeof *img);
    if (desired_channels < 0 || desired_channels > 4)
        return gt_fail(GT_ERR_USAGE, "image channels %d: expected 0 (as in the file) to 4",
                       desired_channels);
#if HAVE_STB
    unsigned char *buf = NULL;
    size_t len = 0;
    GT_TRY(slurp(path, &buf, &len));
    if (len == 0) {
        free(buf);
        return gt_fail_at(GT_ERR_DATA, path, 0, "empty image file");
    }
    if (len > (size_t)0x7fffffff) {
        free(buf);
        return gt_fail_at(GT_ERR_DATA, path, 0, "image file too large");
    }
    if (!is_png_or_jpeg(buf, len)) {
        free(buf);
        return gt_fail_at_byte(GT_ERR_DATA, path, 0, "not a PNG or JPEG image");
    }
    /* stb trusts PNG chunk lengths and reallocates to them before reading:
     * walk the chunks first so that a lying length is an error, not a
     * gigabyte allocation (found by fuzz_image) */
    uint64_t idat_bytes = 0;
    if (is_png(buf, len)) {
        size_t at = 8;
        while (at + 8 <= len) {
            uint32_t clen = (uint32_t)buf[at] << 24 | (uint32_t)buf[at + 1] << 16 |
                            (uint32_t)buf[at + 2] << 8 | buf[at + 3];
            if ((uint64_t)clen + 12 > (uint64_t)(len - at)) {
                gt_status st = gt_fail_at_byte(GT_ERR_DATA, path, (long long)at,
                                               "PNG chunk '%.4s' of %u bytes runs past the end of the file",
                                               (const char *)buf + at + 4, clen);
                free(buf);
                return st;
            }
            if (clen == 0 && memcmp(buf + at + 4, "IDAT", 4) == 0) {
                /* legal but useless; stb does pointer arithmetic on NULL for
                 * it (UB, found by fuzz_image): drop the chunk */
                memmove(buf + at, buf + at + 12, len - at - 12);
                len -= 12;
                continue;
            }
            if (memcmp(buf + at + 4, "IDAT", 4) == 0) idat_bytes += clen;
            int end = memcmp(buf + at + 4, "IEND", 4) == 0;
            at += (size_t)clen + 12;
            if (end) break;
        }
    }
    int w, h, comp;
    if (!stbi_info_from_memory(buf, (int)len, &w, &h, &comp)) {
        /* stbi_info tries every format and keeps the last one's reason; for a
         * PNG ask the PNG decoder, which checks the header (sizes, depth,
         * colour type) before it allocates anything */
        const char *why = stbi_failure_reason();
        if (is_png(buf, len)) {
            int x, y, c;
            stbi_uc *d = stbi_load_from_memory(buf, (int)len, &x, &y, &c, 0);
            stbi_image_free(d);
            why = stbi_failure_reason();
        }
        gt_status st = gt_fail_at(GT_ERR_DATA, path, 0, "cannot read image: %s", why);
        free(buf);
        return st;
    }
    int is16 = want16 && stbi_is_16_bit_from_memory(buf, (int)len);
    int ch = desired_channels ? desired_channels : comp;
    size_t bytes;
    if (w <= 0 || h <= 0 || !gt_mul3_size((size_t)w, (size_t)h, (size_t)ch * (is16 ? 2 : 1), &bytes) ||
        bytes > MAX_DECODED_BYTES) {
        free(buf);
        return gt_fail_at(GT_ERR_DATA, path, 0, "image of %d x %d x %d samples is larger than the 1 GiB limit",
                          w, h, ch);
    }
    if (is_png(buf, len)) {
        /* deflate expands at most 1032:1, so the compressed data bounds the
         * image it can hold: a header promising more is lying, and stb would
         * allocate the promised size up front (found by fuzz_image) */
        int file16 = stbi_is_16_bit_from_memory(buf, (int)len);
        uint64_t raw = (uint64_t)h * (1 + (uint64_t)w * (uint64_t)comp * (file16 ? 2 : 1));
        if (raw > 1032 * idat_bytes + 65536) {
            free(buf);
            return gt_fail_at(GT_ERR_DATA, path, 0,
                              "PNG of %d x %d pixels needs %llu bytes of image data, more than its "
                              "%llu compressed bytes can hold",
                              w, h, (unsigned long long)raw, (unsigned long long)idat_bytes);
        }
    }
    int fw, fh, fc;
    void *data = is16 ? (void *)stbi_load_16_from_memory(buf, (int)len, &fw, &fh, &fc, desired_channels)
                      : (void *)stbi_load_from_memory(buf, (int)len, &fw, &fh, &fc, desired_channels);
    free(buf);
    if (!data) return gt_fail_at(GT_ERR_DATA, path, 0, "cannot decode image: %s", stbi_failure_reason());
    img->w = fw;
    img->h = fh;
    img->channels = desired_channels ? desired_channels : fc;
    img->bits = is16 ? 16 : 8;
    img->data = data;
    return GT_OK;
#else
    (void)want16;
    return gt_fail(GT_ERR_RUNTIME, "cannot read '%s': built without stb_image", gt_in_name(path));
#endif
}

#if HAVE_STB
static int cb_read(void *f, char *data, int size)
{
    return (int)fread(data, 1, (size_t)size, f);
}

static void cb_skip(void *f, int n)
{
    fseek(f, n, SEEK_CUR);
}

static int cb_eof(void *f)
{
    return feof((FILE *)f);
}
#endif

gt_status gt_image_size(const char *path, int *w, int *h)
{
#if HAVE_STB
    FILE *f = fopen(path, "rb");
    if (!f) return gt_fail(GT_ERR_DATA, "cannot open '%s': %s", path, strerror(errno));
    unsigned char head[8];
    bool known = is_png_or_jpeg(head, fread(head, 1, sizeof head, f));
    int comp, ok = 0;
    if (known && fseek(f, 0, SEEK_SET) == 0) {
        const stbi_io_callbacks cb = {cb_read, cb_skip, cb_eof};
        ok = stbi_info_from_callbacks(&cb, f, w, h, &comp);
    }
    fclose(f);
    if (!known) return gt_fail_at_byte(GT_ERR_DATA, path, 0, "not a PNG or JPEG image");
    if (!ok || *w <= 0 || *h <= 0)
        return gt_fail_at(GT_ERR_DATA, path, 0, "cannot read image: %s", stbi_failure_reason());
    return GT_OK;
#else
    (void)w, (void)h;
    return gt_fail(GT_ERR_RUNTIME, "cannot read '%s': built without stb_image", path);
#endif
}

void gt_image_free(gt_image *img)
{
    if (!img) return;
#if HAVE_STB
    stbi_image_free(img->data);
#else
    free(img->data);
#endif
    memset(img, 0, sizeof *img);
}

static gt_status check_dims(int w, int h, int channels, int lo, int hi, size_t sample)
{
    size_t b;
    if (w <= 0 || h <= 0 || channels < lo || channels > hi ||
        !gt_mul3_size((size_t)w, (size_t)h, (size_t)channels * sample, &b))
        return gt_fail(GT_ERR_RUNTIME, "cannot write a %d x %d image with %d channels", w, h, channels);
    return GT_OK;
}

#if HAVE_STB
static void file_sink(void *ctx, void *data, int size)
{
    gt_out *o = ctx;
    if (size > 0) fwrite(data, 1, (size_t)size, o->fp); /* errors surface at commit */
}
#endif

/* JPEG at a quality 1..100, through stb_image_write */
static gt_status stb_jpeg_write(const char *path, int w, int h, int channels, const uint8_t *data,
                                int quality)
{
    GT_TRY(check_dims(w, h, channels, 1, 4, 1));
    if ((size_t)w * (size_t)channels > 0x7fffffff)
        return gt_fail(GT_ERR_RUNTIME, "JPEG row of %d x %d bytes too long", w, channels);
#if HAVE_STB
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    if (!stbi_write_jpg_to_func(file_sink, &o, w, h, channels, data, quality)) {
        gt_out_abort(&o);
        return gt_fail(GT_ERR_RUNTIME, "cannot encode JPEG '%s'", path);
    }
    return gt_out_commit(&o);
#else
    (void)data;
    (void)quality;
    return gt_fail(GT_ERR_RUNTIME, "cannot write JPEG '%s': built without stb_image_write", path);
#endif
}

gt_status gt_png_write(const char *path, int w, int h, int channels, const uint8_t *data)
{
    GT_TRY(check_dims(w, h, channels, 1, 4, 1));
    gt_image img = {w, h, channels, 8, (void *)(uintptr_t)data};
    return gt_png_write_image(path, &img, 0, -1); /* png_write.c */
}

gt_status gt_jpeg_write(const char *path, int w, int h, int channels, const uint8_t *data, int quality)
{
    if (quality < 1 || quality > 100) return gt_fail(GT_ERR_USAGE, "JPEG quality %d is not in 1..100", quality);
    return stb_jpeg_write(path, w, h, channels, data, quality);
}

gt_status gt_pgm16_write(const char *path, int w, int h, const uint16_t *data)
{
    GT_TRY(check_dims(w, h, 1, 1, 1, 2));
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    fprintf(o.fp, "P5\n%d %d\n65535\n", w, h);
    unsigned char *row = gt_malloc((size_t)w * 2, "PGM row");
    if (!row) {
        gt_out_abort(&o);
        return GT_ERR_RUNTIME;
    }
    for (int y = 0; y < h; y++) {
        const uint16_t *s = data + (size_t)y * (size_t)w;
        for (int x = 0; x < w; x++) { /* PGM samples are big endian */
            row[2 * x] = (unsigned char)(s[x] >> 8);
            row[2 * x + 1] = (unsigned char)(s[x] & 0xff);
        }
        if (fwrite(row, 2, (size_t)w, o.fp) != (size_t)w) break;
    }
    free(row);
    return gt_out_commit(&o);
}

static bool host_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

static void swap4(void *p, size_t n)
{
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++, b += 4) {
        unsigned char t = b[0];
        b[0] = b[3];
        b[3] = t;
        t = b[1];
        b[1] = b[2];
        b[2] = t;
    }
}

gt_status gt_pfm_write(const char *path, int w, int h, int channels, const float *data)
{
    GT_TRY(check_dims(w, h, channels, 1, 3, 4));
    if (channels == 2) return gt_fail(GT_ERR_RUNTIME, "PFM holds 1 or 3 channels, not 2");
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    fprintf(o.fp, "%s\n%d %d\n-1.0\n", channels == 3 ? "PF" : "Pf", w, h);
    size_t rn = (size_t)w * (size_t)channels;
    float *row = gt_malloc(rn * sizeof(float), "PFM row");
    if (!row) {
        gt_out_abort(&o);
        return GT_ERR_RUNTIME;
    }
    for (int y = h - 1; y >= 0; y--) { /* bottom row first */
        memcpy(row, data + (size_t)y * rn, rn * sizeof(float));
        if (!host_le()) swap4(row, rn);
        if (fwrite(row, sizeof(float), rn, o.fp) != rn) break;
    }
    free(row);
    return gt_out_commit(&o);
}

/* PFM header token: skips whitespace, reads up to 63 non-space bytes. */
static int pfm_token(FILE *f, long long *off, char *tok, long long *at)
{
    int c;
    while ((c = getc(f)) != EOF && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) (*off)++;
    *at = *off;
    int n = 0;
    while (c != EOF && !(c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
        if (n == 63) return -1;
        tok[n++] = (char)c;
        (*off)++;
        c = getc(f);
    }
    tok[n] = 0;
    if (c != EOF) (*off)++; /* the single whitespace byte after the token */
    return n;
}

gt_status gt_pfm_read(const char *path, int *w, int *h, int *channels, float **data)
{
    *data = NULL;
    *w = *h = *channels = 0;
    gt_status st;
    FILE *f = gt_in_open(path, &st);
    if (!f) return st;
    long long off = 0, at = 0;
    char tok[64];
    long dims[2];
    double scale = 0;
    int ch = 0;
    float *buf = NULL;
    const char *what[] = {"width", "height"};
    int n = pfm_token(f, &off, tok, &at);
    if (n <= 0 || (strcmp(tok, "PF") != 0 && strcmp(tok, "Pf") != 0)) {
        st = gt_fail_at_byte(GT_ERR_DATA, path, 0, "not a PFM file (expected 'PF' or 'Pf')");
        goto out;
    }
    ch = tok[1] == 'F' ? 3 : 1;
    for (int i = 0; i < 2; i++) {
        n = pfm_token(f, &off, tok, &at);
        char *e;
        errno = 0;
        long v = n > 0 ? strtol(tok, &e, 10) : 0;
        if (n <= 0 || *e || errno == ERANGE || tok[0] == '+') {
            st = gt_fail_at_byte(GT_ERR_DATA, path, at, "bad PFM %s '%s'", what[i], n > 0 ? tok : "");
            goto out;
        }
        if (v <= 0 || v > 1000000) {
            st = gt_fail_at_byte(GT_ERR_DATA, path, at, "PFM %s %ld out of range 1..1000000", what[i], v);
            goto out;
        }
        dims[i] = v;
    }
    n = pfm_token(f, &off, tok, &at);
    {
        char *e;
        scale = n > 0 ? strtod(tok, &e) : 0;
        if (n <= 0 || *e || !isfinite(scale) || scale == 0) {
            st = gt_fail_at_byte(GT_ERR_DATA, path, at,
                                 "bad PFM scale '%s' (a non-zero number; negative means little endian)",
                                 n > 0 ? tok : "");
            goto out;
        }
    }
    size_t rn = (size_t)dims[0] * (size_t)ch, total;
    if (!gt_mul_size(rn, (size_t)dims[1], &total) || total > MAX_DECODED_BYTES / sizeof(float)) {
        st = gt_fail_at_byte(GT_ERR_DATA, path, at, "PFM image %ld x %ld is larger than the 1 GiB limit",
                             dims[0], dims[1]);
        goto out;
    }
    /* rows arrive bottom first; grow the buffer as they come */
    size_t cap = 0, got = 0;
    while (got < total) {
        if (got == cap) {
            size_t nc = cap ? cap * 2 : (rn > 65536 ? rn : 65536);
            if (nc > total) nc = total;
            float *nb = realloc(buf, nc * sizeof(float));
            if (!nb) {
                st = gt_fail(GT_ERR_RUNTIME, "out of memory reading '%s'", gt_in_name(path));
                goto out;
            }
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + got, sizeof(float), cap - got, f);
        got += r;
        if (r == 0) break;
    }
    if (got < total) {
        if (ferror(f)) {
            st = gt_fail(GT_ERR_RUNTIME, "read error on '%s': %s", gt_in_name(path), strerror(errno));
        } else {
            st = gt_fail_at_byte(GT_ERR_DATA, path, off + (long long)(got * sizeof(float)),
                                 "PFM data ends after %zu of %zu samples (%ld x %ld x %d)", got, total,
                                 dims[0], dims[1], ch);
        }
        goto out;
    }
    if ((scale < 0) != host_le()) swap4(buf, total);
    /* flip to top-to-bottom */
    for (size_t y = 0; y < (size_t)dims[1] / 2; y++) {
        float *a = buf + y * rn, *b = buf + ((size_t)dims[1] - 1 - y) * rn;
        for (size_t i = 0; i < rn; i++) {
            float t = a[i];
            a[i] = b[i];
            b[i] = t;
        }
    }
    *w = (int)dims[0];
    *h = (int)dims[1];
    *channels = ch;
    *data = buf;
    buf = NULL;
    st = GT_OK;
out:
    free(buf);
    gt_in_close(f);
    return st;
}
