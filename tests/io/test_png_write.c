/* The PNG encoder (png_write.c: igzip in bands at the default level,
 * libdeflate at the others): files decode through stb (gt_image_read) to
 * the samples written, for 8 and 16 bits, 1..4 channels, odd sizes, one band
 * or several (each band its own piece of the deflate stream), every level;
 * on a photograph the default level's file is no larger than zlib's level 1
 * on the same filtered rows would make it, and libdeflate reads the stream
 * back with its Adler-32; RGBA pixels written as RGB; bad arguments refused
 * without a file. interop_png.py checks the files with python's zlib. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libdeflate.h>
#if defined(GT_HAVE_ZLIB)
#include <zlib.h>
#endif

#include "common/status.h"
#include "gt_test.h"
#include "io/image.h"
#include "io_test_util.h"

#define tpath io_tmp

/* half noise, half smooth ramps, so that rows take both filters and the
 * deflate output has both literals and matches */
static void *make_pixels(int w, int h, int ch, int bits, uint64_t seed)
{
    gt_rng rng = {seed};
    size_t n = (size_t)w * h * ch;
    if (bits == 8) {
        uint8_t *p = malloc(n);
        for (size_t i = 0; i < n; i++) {
            size_t y = i / ((size_t)w * ch), x = (i / ch) % (size_t)w;
            p[i] = (y % 4 < 2) ? (uint8_t)gt_rng_u64(&rng) : (uint8_t)(x * 3 + y + i % ch * 40);
        }
        return p;
    }
    uint16_t *p = malloc(n * 2);
    for (size_t i = 0; i < n; i++) {
        size_t y = i / ((size_t)w * ch), x = (i / ch) % (size_t)w;
        p[i] = (y % 4 < 2) ? (uint16_t)gt_rng_u64(&rng) : (uint16_t)(x * 700 + y * 13 + i % ch);
    }
    return p;
}

static void check_file(const char *p, int w, int h, int ch, int bits, const void *px)
{
    gt_image img;
    GT_ASSERT_OK(gt_image_read(p, 0, 1, &img));
    assert_int_equal(img.w, w);
    assert_int_equal(img.h, h);
    assert_int_equal(img.channels, ch);
    assert_int_equal(img.bits, bits);
    assert_memory_equal(img.data, px, (size_t)w * h * ch * (bits / 8));
    gt_image_free(&img);
}

static void test_round_trips(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1}, {13, 7}, {1, 301}, {301, 1}, {97, 64}, {640, 37}};
    static const int threads[] = {1, 3, 16, 0};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int bits = 8; bits <= 16; bits += 8)
            for (int ch = 1; ch <= 4; ch++)
                for (size_t ti = 0; ti < sizeof threads / sizeof *threads; ti++) {
                    int w = sizes[si][0], h = sizes[si][1];
                    void *px = make_pixels(w, h, ch, bits, 11 + si * 7 + (size_t)ch);
                    gt_image img = {w, h, ch, bits, px};
                    const char *p = tpath("rt.png");
                    GT_ASSERT_OK(gt_png_write_image(p, &img, 0, (int)(si + ti) % 3 == 0 ? 9 : -1));
                    check_file(p, w, h, ch, bits, px);
                    uint8_t *png;
                    size_t len;
                    GT_ASSERT_OK(gt_png_encode(&img, 0, 1, threads[ti], &png, &len));
                    FILE *f = fopen(p, "wb");
                    assert_non_null(f);
                    assert_int_equal(fwrite(png, 1, len, f), len);
                    fclose(f);
                    free(png);
                    check_file(p, w, h, ch, bits, px);
                    free(px);
                }
}

static void test_levels(void **state)
{
    (void)state;
    const int w = 200, h = 150;
    uint8_t *px = make_pixels(w, h, 3, 8, 3);
    gt_image img = {w, h, 3, 8, px};
    size_t stored = 0, best = 0;
    for (int level = 0; level <= 9; level++) {
        const char *p = tpath("lv.png");
        uint8_t *png;
        size_t len;
        GT_ASSERT_OK(gt_png_encode(&img, 0, level, 2, &png, &len));
        if (level == 0) stored = len;
        if (level == 9) best = len;
        FILE *f = fopen(p, "wb");
        assert_int_equal(fwrite(png, 1, len, f), len);
        fclose(f);
        free(png);
        check_file(p, w, h, 3, 8, px);
    }
    /* level 0 stores (more than the raw samples), 9 compresses the ramps */
    assert_true(stored > (size_t)w * h * 3);
    assert_true(best < stored * 3 / 4);
    free(px);
}

static void test_rgba_as_rgb(void **state)
{
    (void)state;
    const int w = 33, h = 21;
    uint8_t *rgba = make_pixels(w, h, 4, 8, 9);
    uint8_t *rgb = malloc((size_t)w * h * 3);
    for (size_t i = 0; i < (size_t)w * h; i++) memcpy(rgb + 3 * i, rgba + 4 * i, 3);
    gt_image img = {w, h, 3, 8, rgba};
    const char *p = tpath("drop.png");
    GT_ASSERT_OK(gt_png_write_image(p, &img, 4, -1));
    check_file(p, w, h, 3, 8, rgb);
    /* 16-bit too */
    uint16_t *rgba16 = make_pixels(w, h, 4, 16, 10);
    uint16_t *rgb16 = malloc((size_t)w * h * 6);
    for (size_t i = 0; i < (size_t)w * h; i++) memcpy(rgb16 + 3 * i, rgba16 + 4 * i, 6);
    gt_image img16 = {w, h, 3, 16, rgba16};
    GT_ASSERT_OK(gt_png_write_image(p, &img16, 4, 1));
    check_file(p, w, h, 3, 16, rgb16);
    free(rgba);
    free(rgb);
    free(rgba16);
    free(rgb16);
}

static void test_refusals(void **state)
{
    (void)state;
    uint8_t px[16] = {0};
    const char *p = tpath("bad.png");
    unlink(p);
    gt_image img = {2, 2, 1, 8, px};
    assert_int_equal(gt_png_write_image(p, &img, 0, 10), GT_ERR_USAGE);
    img.bits = 12;
    assert_int_not_equal(gt_png_write_image(p, &img, 0, -1), GT_OK);
    img.bits = 8;
    img.channels = 5;
    assert_int_not_equal(gt_png_write_image(p, &img, 0, -1), GT_OK);
    img.channels = 4;
    assert_int_not_equal(gt_png_write_image(p, &img, 3, -1), GT_OK); /* fewer source samples than written */
    img.w = 0;
    assert_int_not_equal(gt_png_write_image(p, &img, 0, -1), GT_OK);
    assert_int_not_equal(access(p, F_OK), 0);
    img.w = 2;
    assert_int_not_equal(gt_png_write_image("/nonexistent-dir/a.png", &img, 0, -1), GT_OK);
}

/* The zlib stream of a PNG's IDAT chunks (malloc'ed). */
static uint8_t *idat_stream(const uint8_t *png, size_t len, size_t *n)
{
    uint8_t *z = malloc(len);
    assert_non_null(z);
    size_t pos = 8;
    *n = 0;
    while (pos + 12 <= len) {
        size_t k = (size_t)png[pos] << 24 | (size_t)png[pos + 1] << 16 | (size_t)png[pos + 2] << 8 | png[pos + 3];
        if (!memcmp(png + pos + 4, "IDAT", 4)) memcpy(z + *n, png + pos + 8, k), *n += k;
        pos += k + 12;
    }
    return z;
}

/* A photograph (testdata/stitch/photo_astronaut.png): the default level, in
 * one band and in several, gives a zlib stream that libdeflate inflates (its
 * Adler-32 checked) to the stored file's rows, no longer than zlib's level 1
 * makes of those rows. */
static void test_photo_size(void **state)
{
    (void)state;
    char path[1024];
    const char *td = getenv("GT_TESTDATA");
    snprintf(path, sizeof path, "%s/stitch/photo_astronaut.png", td ? td : "testdata");
    gt_image img;
    GT_ASSERT_OK(gt_image_read(path, 3, 0, &img));
    const size_t raw = ((size_t)img.w * 3 + 1) * (size_t)img.h;
    uint8_t *png, *rows = malloc(raw), *back = malloc(raw);
    size_t len, zn;
    GT_ASSERT_OK(gt_png_encode(&img, 0, 0, 1, &png, &len));
    uint8_t *z = idat_stream(png, len, &zn);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    assert_int_equal(libdeflate_zlib_decompress(d, z, zn, rows, raw, NULL), LIBDEFLATE_SUCCESS);
    free(png);
    free(z);
    size_t zlib1 = 0;
#if defined(GT_HAVE_ZLIB)
    uLongf zl = (uLongf)compressBound((uLong)raw);
    uint8_t *zo = malloc(zl);
    assert_int_equal(compress2(zo, &zl, rows, (uLong)raw, 1), Z_OK);
    zlib1 = zl;
    free(zo);
#endif
    static const int threads[] = {1, 4};
    for (int i = 0; i < 2; i++) {
        GT_ASSERT_OK(gt_png_encode(&img, 0, -1, threads[i], &png, &len));
        z = idat_stream(png, len, &zn);
        assert_int_equal(libdeflate_zlib_decompress(d, z, zn, back, raw, NULL), LIBDEFLATE_SUCCESS);
        assert_memory_equal(back, rows, raw);
        print_message("photo %dx%d, %d band(s): %zu bytes of zlib stream (zlib level 1: %zu)\n", img.w, img.h,
                      threads[i], zn, zlib1);
        if (zlib1) assert_true(zn <= zlib1);
        free(png);
        free(z);
    }
    libdeflate_free_decompressor(d);
    free(rows);
    free(back);
    gt_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_photo_size),
        cmocka_unit_test(test_rgba_as_rgb),
        cmocka_unit_test(test_refusals),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
