/* PNG writer (see image.h: gt_png_encode, gt_png_write_image). Threads
 * filter bands of rows at once into one buffer; the deflating is a packaged
 * library's, chosen by level:
 *
 *  - level 1, the default: ISA-L's igzip (Debian libisal), stateless, on
 *    the same threads as the filtering, each band its own piece of the one
 *    deflate stream: a band ends with a full flush (byte-aligned, history
 *    reset) and the last with the final block, so the pieces concatenate
 *    pigz style. A band starts with an empty window (a few hundred bytes
 *    lost per band).
 *  - levels 0 and 2..9: libdeflate at that level (0 stores) over the whole
 *    image in one call. libdeflate compresses a whole buffer into a complete
 *    stream and cannot end a piece without its final block, so these levels
 *    run on one core: smaller files, slower.
 *
 * libdeflate also gives the Adler-32 and the chunks' CRC-32. Measured on
 * photographs and renders against the hand-written run-length encoder this
 * replaced and zlib's level 1: scripts/bench/RESULTS.md (PNG writer).
 *
 * Filters: each row takes Sub or Up, whichever gives the smaller sum of
 * |signed byte| (libpng's minimum-sum heuristic over two filters; Paeth and
 * Average cost more and gain little at a fast level). */
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/image.h"

#define MIN_BAND_BYTES ((size_t)256 * 1024) /* a band at least this much raw data */
#define MAX_THREADS 16
#define MAX_CHUNK ((size_t)1 << 30)         /* IDAT data per chunk (PNG allows 2^31-1) */
#define MAX_PIECE ((size_t)1 << 30)         /* input per igzip call (its counts are 32-bit) */
#define IGZIP_LEVEL 2

typedef struct {
    const uint8_t *src;   /* the image */
    size_t src_row;       /* bytes per source row */
    int w, channels, src_channels, bps; /* bps: bytes per sample (1 or 2) */
    int y0, y1;           /* rows of this band */
    bool deflate;         /* deflate the band here (igzip), else only filter */
    bool last;
    uint8_t *filt;        /* this band's filtered rows in the image's buffer */
    uint8_t *out;         /* igzip output */
    size_t out_len;
    int err;              /* igzip error or -1 out of memory */
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

/* The band's rows, filtered, into b->filt. */
static bool filter_band(band *b)
{
    const size_t bpp = (size_t)b->channels * (size_t)b->bps;
    const size_t rb = (size_t)b->w * bpp;
    uint8_t *rows = malloc(3 * (rb + 1));
    if (!rows) return false;
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
        uint8_t *dst = b->filt + (size_t)(y - b->y0) * (rb + 1); /* Sub is made here, Up beside */
        const uint8_t *f = filter_row(cur, prev, rb, bpp, dst, up);
        if (f != dst) memcpy(dst, f, rb + 1);
        prev = cur;
    }
    free(rows);
    return true;
}

/* The band's filtered rows through igzip: pieces of at most MAX_PIECE,
 * each ended by a full flush, the image's last by the final block. */
static void deflate_band(band *b)
{
    const size_t raw = (size_t)(b->y1 - b->y0) * ((size_t)b->w * b->channels * b->bps + 1);
    const size_t pieces = raw / MAX_PIECE + 1;
    /* stored blocks at worst: 5 bytes a 64 KiB block, a header, the flush */
    const size_t cap = raw + 5 * (raw / 65535 + 1) + pieces * (ISAL_DEF_MAX_HDR_SIZE + 16);
    uint8_t *lvl = malloc(ISAL_DEF_LVL2_DEFAULT);
    b->out = malloc(cap);
    if (!lvl || !b->out) {
        free(lvl);
        b->err = -1;
        return;
    }
    size_t done = 0, out = 0;
    do {
        const size_t n = raw - done < MAX_PIECE ? raw - done : MAX_PIECE;
        const bool end = done + n == raw;
        struct isal_zstream z;
        isal_deflate_stateless_init(&z);
        z.level = IGZIP_LEVEL;
        z.level_buf = lvl;
        z.level_buf_size = ISAL_DEF_LVL2_DEFAULT;
        z.next_in = b->filt + done;
        z.avail_in = (uint32_t)n;
        z.next_out = b->out + out;
        z.avail_out = (uint32_t)(cap - out > 0xffffffffu ? 0xffffffffu : cap - out);
        z.end_of_stream = end && b->last;
        z.flush = z.end_of_stream ? NO_FLUSH : FULL_FLUSH;
        int rc = isal_deflate_stateless(&z);
        if (rc != COMP_OK) {
            b->err = rc;
            break;
        }
        out += z.total_out;
        done += n;
    } while (done < raw);
    b->out_len = out;
    free(lvl);
}

static void *band_main(void *arg)
{
    band *b = arg;
    if (!filter_band(b)) b->err = -1;
    else if (b->deflate) deflate_band(b);
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
    uint32_t crc = libdeflate_crc32(0, type, 4);
    if (na) crc = libdeflate_crc32(crc, a, na);
    if (nb) crc = libdeflate_crc32(crc, b, nb);
    if (na) put(o, a, na);
    if (nb) put(o, b, nb);
    uint8_t c[4];
    put32(c, crc);
    put(o, c, 4);
}

/* IDAT chunks of at most MAX_CHUNK over n bytes of the zlib stream;
 * `head` (nh bytes) rides at the front of the first. */
static void idat(buf *o, const uint8_t *head, size_t nh, const uint8_t *d, size_t n)
{
    do {
        size_t k = n > MAX_CHUNK ? MAX_CHUNK : n;
        chunk(o, "IDAT", head, nh, d, k);
        head = NULL;
        nh = 0;
        d += k;
        n -= k;
    } while (n > 0);
}

/* Level 0, 2..9: the whole filtered image through libdeflate's zlib
 * format (header, deflate, Adler-32) into *z. */
static gt_status deflate_whole(const uint8_t *filt, size_t raw, int level, uint8_t **z, size_t *zlen)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    if (!c) return gt_fail(GT_ERR_RUNTIME, "out of memory (PNG encoder, libdeflate level %d)", level);
    size_t cap = libdeflate_zlib_compress_bound(c, raw);
    *z = malloc(cap);
    *zlen = *z ? libdeflate_zlib_compress(c, filt, raw, *z, cap) : 0;
    libdeflate_free_compressor(c);
    if (!*zlen) {
        free(*z);
        *z = NULL;
        return gt_fail(GT_ERR_RUNTIME, "out of memory (PNG encoder)"); /* the bound holds */
    }
    return GT_OK;
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
    uint8_t *filt = malloc(raw);
    if (!filt) return gt_fail(GT_ERR_RUNTIME, "out of memory (PNG encoder: %zu bytes of rows)", raw);

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
        b->filt = filt + (size_t)b->y0 * (rb + 1);
        b->deflate = level == 1;
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
    for (int i = 0; i < nb && st == GT_OK; i++)
        if (bands[i].err)
            st = bands[i].err == -1 ? gt_fail(GT_ERR_RUNTIME, "out of memory (PNG encoder)")
                                    : gt_fail(GT_ERR_RUNTIME, "PNG: deflate failed (igzip error %d)", bands[i].err);
    uint8_t *z = NULL;
    size_t zlen = 0;
    if (st == GT_OK && level != 1) st = deflate_whole(filt, raw, level, &z, &zlen);
    buf o = {0};
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
        if (z) {
            idat(&o, NULL, 0, z, zlen);
        } else {
            /* zlib header: deflate, 32K window, no dictionary; FLEVEL 0
             * (fastest); the bands' pieces; the Adler-32 of all rows */
            static const uint8_t zh[2] = {0x78, 0x01};
            for (int i = 0; i < nb; i++) idat(&o, i ? NULL : zh, i ? 0 : 2, bands[i].out, bands[i].out_len);
            uint8_t ad[4];
            put32(ad, libdeflate_adler32(1, filt, raw));
            chunk(&o, "IDAT", ad, 4, NULL, 0);
        }
        chunk(&o, "IEND", NULL, 0, NULL, 0);
        if (o.oom) st = gt_fail(GT_ERR_RUNTIME, "out of memory (PNG file)");
    }
    for (int i = 0; i < nb; i++) free(bands[i].out);
    free(filt);
    free(z);
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
