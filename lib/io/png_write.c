/* Fast PNG writer (see image.h: gt_png_encode, gt_png_write_image): the
 * image is cut into bands of rows that threads filter and deflate at once,
 * pigz style. Each band is its own raw deflate stream ended by a sync flush
 * (a byte-aligned, non-final empty stored block), the last by a final
 * block, so the bands concatenate into one zlib stream whose Adler-32 is
 * the bands' checksums joined by adler32_combine. A band starts with an
 * empty window (a few hundred bytes of compression lost per band).
 *
 * Filters: each row takes Sub or Up, whichever gives the smaller sum of
 * |signed byte| (libpng's minimum-sum heuristic over two filters; Paeth and
 * Average cost more and gain little on rendered images at a fast level).
 * Level 1, the default, is deflate_rle.c: literals and runs of one byte
 * (what zlib's Z_RLE strategy finds) with a dynamic Huffman table per
 * 128 KB, several times zlib's speed for files of the same size (zlib's
 * Z_RLE at level 1 ran at ~75 MB/s per core on a 1080p render, a fifth of
 * stb_image_write's CPU time). Levels 2..9 are zlib's LZ77 at that level;
 * 0 stores. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/deflate_rle.h"
#include "io/image.h"

#if defined(GT_HAVE_ZLIB) && GT_HAVE_ZLIB
#include <zlib.h>

#define MIN_BAND_BYTES ((size_t)256 * 1024) /* a band at least this much raw data */
#define MAX_THREADS 16
#define MAX_CHUNK ((size_t)1 << 30)         /* IDAT data per chunk (PNG allows 2^31-1) */

typedef struct {
    const uint8_t *src;   /* the image */
    size_t src_row;       /* bytes per source row */
    int w, channels, src_channels, bps; /* bps: bytes per sample (1 or 2) */
    int y0, y1;           /* rows of this band */
    int level, strategy;
    bool last;
    uint8_t *out;         /* deflate output */
    size_t out_len;
    uLong adler;          /* of the filtered rows */
    size_t raw_len;
    int err;              /* zlib error or -1 out of memory */
} band;

/* Row y as PNG samples (packed, big endian): the first `channels` samples of
 * each source pixel. */
static void pack_row(const band *b, int y, uint8_t *dst)
{
    const uint8_t *s = b->src + (size_t)y * b->src_row;
    const int w = b->w, c = b->channels, sc = b->src_channels;
    if (b->bps == 1) {
        if (c == sc) {
            memcpy(dst, s, (size_t)w * c);
            return;
        }
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) dst[(size_t)x * c + k] = s[(size_t)x * sc + k];
        return;
    }
    const uint16_t *s16 = (const uint16_t *)(const void *)s;
    for (int x = 0; x < w; x++)
        for (int k = 0; k < c; k++) {
            uint16_t v = s16[(size_t)x * sc + k];
            dst[2 * ((size_t)x * c + k)] = (uint8_t)(v >> 8);
            dst[2 * ((size_t)x * c + k) + 1] = (uint8_t)(v & 0xff);
        }
}

/* sum of |signed byte|, in 32-bit partial sums the compiler vectorises */
static uint64_t abs_sum(const uint8_t *f, size_t n)
{
    uint64_t s = 0;
    for (size_t a = 0; a < n; a += (size_t)1 << 16) {
        const size_t e = n - a < ((size_t)1 << 16) ? n : a + ((size_t)1 << 16);
        uint32_t t = 0;
        for (size_t i = a; i < e; i++) {
            const int v = (int8_t)f[i];
            t += (uint32_t)(uint8_t)(v < 0 ? -v : v);
        }
        s += t;
    }
    return s;
}

/* Filter one row (rb bytes, bpp bytes per pixel) into out[0] (type) and
 * out[1..rb]; sub and up are scratch rows of rb + 1 bytes. */
static const uint8_t *filter_row(const uint8_t *cur, const uint8_t *prev, size_t rb, size_t bpp, uint8_t *sub,
                                 uint8_t *up)
{
    sub[0] = 1;
    up[0] = 2;
    for (size_t i = 0; i < bpp && i < rb; i++) sub[1 + i] = cur[i];
    for (size_t i = bpp; i < rb; i++) sub[1 + i] = (uint8_t)(cur[i] - cur[i - bpp]);
    if (!prev) return sub; /* the first row: Up is None, Sub is never worse on smooth rows */
    for (size_t i = 0; i < rb; i++) up[1 + i] = (uint8_t)(cur[i] - prev[i]);
    return abs_sum(up + 1, rb) < abs_sum(sub + 1, rb) ? up : sub;
}

/* Level 1: the band's filtered rows into one buffer, then deflate_rle. */
static void band_rle(band *b)
{
    const size_t bpp = (size_t)b->channels * (size_t)b->bps;
    const size_t rb = (size_t)b->w * bpp;
    const size_t raw = (rb + 1) * (size_t)(b->y1 - b->y0);
    uint8_t *filt = malloc(raw), *rows = malloc(3 * (rb + 1));
    size_t cap = gt_deflate_rle_bound(raw);
    b->out = malloc(cap);
    if (!filt || !rows || !b->out) {
        free(filt);
        free(rows);
        b->err = -1;
        return;
    }
    /* rows straight from the image where they are its samples, else packed */
    const bool direct = b->bps == 1 && b->channels == b->src_channels;
    uint8_t *pk[2] = {rows, rows + (rb + 1)}, *up = rows + 2 * (rb + 1);
    const uint8_t *prev = NULL;
    if (b->y0 > 0) {
        if (direct) prev = b->src + (size_t)(b->y0 - 1) * b->src_row;
        else pack_row(b, b->y0 - 1, pk[1]), prev = pk[1];
    }
    for (int y = b->y0, which = 0; y < b->y1; y++, which ^= 1) { /* prev packed into pk[which ^ 1] */
        const uint8_t *cur = b->src + (size_t)y * b->src_row;
        if (!direct) pack_row(b, y, pk[which]), cur = pk[which];
        uint8_t *dst = filt + (size_t)(y - b->y0) * (rb + 1); /* Sub is made here, Up beside */
        const uint8_t *f = filter_row(cur, prev, rb, bpp, dst, up);
        if (f != dst) memcpy(dst, f, rb + 1);
        prev = cur;
    }
    b->adler = adler32(0L, Z_NULL, 0);
    for (size_t off = 0; off < raw; off += MAX_CHUNK)
        b->adler = adler32(b->adler, filt + off, (uInt)(raw - off < MAX_CHUNK ? raw - off : MAX_CHUNK));
    b->raw_len = raw;
    b->out_len = gt_deflate_rle(filt, raw, b->last, b->out, cap);
    if (b->out_len == 0) b->err = -1; /* out of memory (the bound holds) */
    free(filt);
    free(rows);
}

static void *band_main(void *arg)
{
    band *b = arg;
    if (b->level == 1) {
        band_rle(b);
        return NULL;
    }
    const size_t bpp = (size_t)b->channels * (size_t)b->bps;
    const size_t rb = (size_t)b->w * bpp;
    const size_t raw = (rb + 1) * (size_t)(b->y1 - b->y0);
    uint8_t *rows = malloc(4 * (rb + 1));
    z_stream z;
    memset(&z, 0, sizeof z);
    if (!rows) {
        b->err = -1;
        return NULL;
    }
    uint8_t *cur = rows, *prev = rows + (rb + 1), *sub = rows + 2 * (rb + 1), *up = rows + 3 * (rb + 1);
    int zr = deflateInit2(&z, b->level, Z_DEFLATED, -15, 8, b->strategy);
    if (zr != Z_OK) {
        free(rows);
        b->err = zr;
        return NULL;
    }
    size_t cap = deflateBound(&z, (uLong)raw) + 64;
    b->out = malloc(cap);
    if (!b->out) {
        deflateEnd(&z);
        free(rows);
        b->err = -1;
        return NULL;
    }
    z.next_out = b->out;
    z.avail_out = (uInt)(cap > 0xffffffffu ? 0xffffffffu : cap);
    b->adler = adler32(0L, Z_NULL, 0);
    bool have_prev = b->y0 > 0;
    if (have_prev) pack_row(b, b->y0 - 1, prev);
    for (int y = b->y0; y < b->y1 && zr == Z_OK; y++) {
        pack_row(b, y, cur);
        const uint8_t *f = filter_row(cur, have_prev ? prev : NULL, rb, bpp, sub, up);
        have_prev = true;
        uint8_t *t = cur;
        cur = prev;
        prev = t;
        b->adler = adler32(b->adler, f, (uInt)(rb + 1));
        z.next_in = (Bytef *)(uintptr_t)f;
        z.avail_in = (uInt)(rb + 1);
        bool end = y + 1 == b->y1;
        int flush = !end ? Z_NO_FLUSH : b->last ? Z_FINISH : Z_SYNC_FLUSH;
        zr = deflate(&z, flush);
        if (zr == Z_STREAM_END) zr = Z_OK;
        if (zr == Z_OK && (z.avail_in != 0 || z.avail_out == 0)) zr = Z_BUF_ERROR; /* deflateBound was wrong */
    }
    b->out_len = (size_t)(z.next_out - b->out);
    b->raw_len = raw;
    deflateEnd(&z);
    free(rows);
    if (zr != Z_OK) b->err = zr;
    return NULL;
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/* growable byte buffer for the file */
typedef struct {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} buf;

static void put(buf *o, const void *d, size_t n)
{
    if (o->oom) return;
    if (o->len + n > o->cap) {
        size_t c = o->cap ? o->cap : 4096;
        while (c < o->len + n) c *= 2;
        uint8_t *q = realloc(o->p, c);
        if (!q) {
            o->oom = true;
            return;
        }
        o->p = q;
        o->cap = c;
    }
    memcpy(o->p + o->len, d, n);
    o->len += n;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* one chunk: length, type, data (given in pieces), CRC */
static void chunk(buf *o, const char *type, const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    uint8_t hd[8];
    put32(hd, (uint32_t)(na + nb));
    memcpy(hd + 4, type, 4);
    put(o, hd, 8);
    uLong crc = crc32(0L, (const Bytef *)type, 4);
    if (na) crc = crc32(crc, a, (uInt)na);
    if (nb) crc = crc32(crc, b, (uInt)nb);
    if (na) put(o, a, na);
    if (nb) put(o, b, nb);
    uint8_t c[4];
    put32(c, (uint32_t)crc);
    put(o, c, 4);
}

gt_status gt_png_encode(const gt_image *img, int src_channels, int level, int threads, uint8_t **png, size_t *len)
{
    *png = NULL;
    *len = 0;
    if (!img || img->w <= 0 || img->h <= 0 || img->channels < 1 || img->channels > 4 ||
        (img->bits != 8 && img->bits != 16) || !img->data)
        return gt_fail(GT_ERR_RUNTIME, "cannot write a PNG of %d x %d with %d channels of %d bits", img ? img->w : 0,
                       img ? img->h : 0, img ? img->channels : 0, img ? img->bits : 0);
    if (src_channels <= 0) src_channels = img->channels;
    if (src_channels < img->channels || src_channels > 4)
        return gt_fail(GT_ERR_RUNTIME, "PNG: %d source channels cannot give %d", src_channels, img->channels);
    if (level < -1 || level > 9) return gt_fail(GT_ERR_USAGE, "PNG level %d is not in 0..9", level);
    if (level < 0) level = GT_PNG_LEVEL_DEFAULT;
    const int bps = img->bits / 8;
    size_t rb, src_row, raw;
    if (!gt_mul3_size((size_t)img->w, (size_t)img->channels, (size_t)bps, &rb) || rb >= 0x7fffffff ||
        !gt_mul3_size((size_t)img->w, (size_t)src_channels, (size_t)bps, &src_row) ||
        !gt_mul_size(rb + 1, (size_t)img->h, &raw))
        return gt_fail(GT_ERR_RUNTIME, "cannot write a PNG of %d x %d: too large", img->w, img->h);

    int nb = threads;
    if (nb <= 0) { /* one band per core, each of at least MIN_BAND_BYTES */
        nb = cpu_count();
        size_t by_size = raw / MIN_BAND_BYTES;
        if ((size_t)nb > by_size) nb = by_size < 1 ? 1 : (int)by_size;
    }
    if (nb > img->h) nb = img->h;
    if (nb > MAX_THREADS) nb = MAX_THREADS;
    band bands[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    bool started[MAX_THREADS];
    for (int i = 0; i < nb; i++) {
        band *b = &bands[i];
        memset(b, 0, sizeof *b);
        b->src = img->data;
        b->src_row = src_row;
        b->w = img->w;
        b->channels = img->channels;
        b->src_channels = src_channels;
        b->bps = bps;
        b->y0 = (int)((long long)img->h * i / nb);
        b->y1 = (int)((long long)img->h * (i + 1) / nb);
        b->level = level;
        b->strategy = Z_DEFAULT_STRATEGY;
        b->last = i == nb - 1;
        started[i] = false;
    }
    for (int i = 1; i < nb; i++) started[i] = pthread_create(&th[i], NULL, band_main, &bands[i]) == 0;
    band_main(&bands[0]);
    for (int i = 1; i < nb; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        else band_main(&bands[i]); /* no thread: do it here */
    }

    gt_status st = GT_OK;
    buf o = {0};
    for (int i = 0; i < nb && st == GT_OK; i++)
        if (bands[i].err)
            st = bands[i].err == -1 ? gt_fail(GT_ERR_RUNTIME, "out of memory (PNG encoder)")
                                    : gt_fail(GT_ERR_RUNTIME, "PNG: deflate failed (zlib error %d)", bands[i].err);
    if (st == GT_OK) {
        static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
        static const uint8_t ctype[5] = {0, 0, 4, 2, 6};
        put(&o, sig, 8);
        uint8_t ih[13];
        put32(ih, (uint32_t)img->w);
        put32(ih + 4, (uint32_t)img->h);
        ih[8] = (uint8_t)img->bits;
        ih[9] = ctype[img->channels];
        ih[10] = ih[11] = ih[12] = 0;
        chunk(&o, "IHDR", ih, 13, NULL, 0);
        /* zlib header: deflate, 32K window, no dictionary; FLEVEL 0 (fastest) */
        const uint8_t zh[2] = {0x78, 0x01};
        uLong adler = bands[0].adler;
        for (int i = 1; i < nb; i++) adler = adler32_combine(adler, bands[i].adler, (z_off_t)bands[i].raw_len);
        for (int i = 0; i < nb; i++) {
            const uint8_t *d = bands[i].out;
            size_t n = bands[i].out_len;
            bool first = true;
            do { /* chunks of at most MAX_CHUNK; the zlib header rides with the first */
                size_t k = n > MAX_CHUNK ? MAX_CHUNK : n;
                chunk(&o, "IDAT", i == 0 && first ? zh : NULL, i == 0 && first ? 2 : 0, d, k);
                d += k;
                n -= k;
                first = false;
            } while (n > 0);
        }
        uint8_t ad[4];
        put32(ad, (uint32_t)adler);
        chunk(&o, "IDAT", ad, 4, NULL, 0);
        chunk(&o, "IEND", NULL, 0, NULL, 0);
        if (o.oom) st = gt_fail(GT_ERR_RUNTIME, "out of memory (PNG file)");
    }
    for (int i = 0; i < nb; i++) free(bands[i].out);
    if (st != GT_OK) {
        free(o.p);
        return st;
    }
    *png = o.p;
    *len = o.len;
    return GT_OK;
}

gt_status gt_png_write_image(const char *path, const gt_image *img, int src_channels, int level)
{
    uint8_t *png;
    size_t n;
    GT_TRY(gt_png_encode(img, src_channels, level, 0, &png, &n));
    gt_out o;
    gt_status st = gt_out_open(&o, path);
    if (st == GT_OK) {
        fwrite(png, 1, n, o.fp); /* errors surface at commit */
        st = gt_out_commit(&o);
    }
    free(png);
    return st;
}

bool gt_png_fast_available(void)
{
    return true;
}

#else /* no zlib: image.c writes PNGs through stb_image_write */

gt_status gt_png_encode(const gt_image *img, int src_channels, int level, int threads, uint8_t **png, size_t *len)
{
    (void)img;
    (void)src_channels;
    (void)level;
    (void)threads;
    *png = NULL;
    *len = 0;
    return gt_fail(GT_ERR_RUNTIME, "PNG encoder: built without zlib");
}

gt_status gt_png_write_image(const char *path, const gt_image *img, int src_channels, int level)
{
    (void)src_channels;
    (void)level;
    if (img->bits != 8) return gt_fail(GT_ERR_RUNTIME, "cannot write a 16-bit PNG '%s': built without zlib", path);
    if (src_channels > 0 && src_channels != img->channels)
        return gt_fail(GT_ERR_RUNTIME, "cannot write PNG '%s' from %d-sample pixels: built without zlib", path,
                       src_channels);
    return gt_png_write(path, img->w, img->h, img->channels, img->data); /* stb's encoder */
}

bool gt_png_fast_available(void)
{
    return false;
}
#endif
