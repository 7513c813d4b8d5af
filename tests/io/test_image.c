/* Images: PNG (8-bit round trips, 16-bit input), 16-bit PGM and PFM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/status.h"
#include "gt_test.h"
#include "io/image.h"
#include "io_test_util.h"

/* temporary files in one folder per run (io_test_util.h) */
#define tpath io_tmp

static void test_png_round_trip(void **state)
{
    (void)state;
    gt_rng rng = {5};
    const int w = 13, h = 7;
    for (int ch = 1; ch <= 4; ch++) {
        size_t n = (size_t)w * h * ch;
        uint8_t *px = malloc(n);
        for (size_t i = 0; i < n; i++) px[i] = (uint8_t)gt_rng_u64(&rng);
        const char *p = tpath("rt.png");
        GT_ASSERT_OK(gt_png_write(p, w, h, ch, px));
        gt_image img;
        GT_ASSERT_OK(gt_image_read(p, 0, 1, &img));
        assert_int_equal(img.w, w);
        assert_int_equal(img.h, h);
        assert_int_equal(img.channels, ch);
        assert_int_equal(img.bits, 8); /* 8-bit file stays 8-bit even with want16 */
        assert_memory_equal(img.data, px, n);
        gt_image_free(&img);
        /* channel conversion: to RGBA keeps colour, alpha 255 where none */
        GT_ASSERT_OK(gt_image_read(p, 4, 0, &img));
        assert_int_equal(img.channels, 4);
        const uint8_t *d = img.data;
        for (int i = 0; i < w * h; i++) {
            if (ch >= 3) assert_memory_equal(d + 4 * i, px + (size_t)ch * i, 3);
            else assert_true(d[4 * i] == px[(size_t)ch * i] && d[4 * i + 2] == px[(size_t)ch * i]);
            assert_int_equal(d[4 * i + 3], (ch == 2 || ch == 4) ? px[(size_t)ch * i + ch - 1] : 255);
        }
        gt_image_free(&img);
        free(px);
    }
}

static void test_png16_in(void **state)
{
    (void)state;
    const char *td = getenv("GT_TESTDATA");
    if (!td) td = "testdata";
    char p[1024];
    const struct {
        const char *name;
        int w, h, ch;
    } files[] = {{"gray16.png", 9, 5, 1}, {"rgba16.png", 7, 3, 4}};
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/io/image/%s", td, files[k].name);
        gt_image img;
        GT_ASSERT_OK(gt_image_read(p, 0, 1, &img));
        assert_int_equal(img.bits, 16);
        assert_int_equal(img.w, files[k].w);
        assert_int_equal(img.h, files[k].h);
        assert_int_equal(img.channels, files[k].ch);
        const uint16_t *d = img.data;
        for (int y = 0; y < img.h; y++)
            for (int x = 0; x < img.w; x++)
                for (int c = 0; c < img.channels; c++) /* formula of make_png16.py */
                    assert_int_equal(d[((size_t)y * img.w + x) * img.channels + c],
                                     (x * 4099 + y * 771 + c * 12345) & 0xffff);
        gt_image_free(&img);
        /* without want16: 8-bit, the high byte */
        GT_ASSERT_OK(gt_image_read(p, 0, 0, &img));
        assert_int_equal(img.bits, 8);
        assert_int_equal(((uint8_t *)img.data)[img.channels], ((1 * 4099) & 0xffff) >> 8); /* pixel (1,0) */
        gt_image_free(&img);
    }
}

static void test_pgm16(void **state)
{
    (void)state;
    const int w = 5, h = 3;
    uint16_t px[15];
    for (int i = 0; i < 15; i++) px[i] = (uint16_t)(i * 4567 + 1);
    const char *p = tpath("d.pgm");
    GT_ASSERT_OK(gt_pgm16_write(p, w, h, px));
    FILE *f = fopen(p, "rb");
    int rw, rh, mx;
    assert_int_equal(fscanf(f, "P5 %d %d %d", &rw, &rh, &mx), 3);
    assert_int_equal(fgetc(f), '\n');
    assert_int_equal(rw, w);
    assert_int_equal(rh, h);
    assert_int_equal(mx, 65535);
    for (int i = 0; i < 15; i++) {
        int hi = fgetc(f), lo = fgetc(f);
        assert_int_equal((hi << 8) | lo, px[i]); /* big endian */
    }
    assert_int_equal(fgetc(f), EOF);
    fclose(f);
}

static void test_pfm_round_trip(void **state)
{
    (void)state;
    gt_rng rng = {8};
    const int w = 6, h = 5;
    for (int ch = 1; ch <= 3; ch += 2) {
        float px[6 * 5 * 3];
        for (int i = 0; i < w * h * ch; i++) px[i] = (float)gt_rng_range(&rng, -1e5, 1e5);
        px[0] = 1.0f / 0.0f; /* depth maps use inf for "no surface" */
        const char *p = tpath("d.pfm");
        GT_ASSERT_OK(gt_pfm_write(p, w, h, ch, px));
        int rw, rh, rc;
        float *d;
        GT_ASSERT_OK(gt_pfm_read(p, &rw, &rh, &rc, &d));
        assert_int_equal(rw, w);
        assert_int_equal(rh, h);
        assert_int_equal(rc, ch);
        assert_memory_equal(d, px, sizeof(float) * w * h * ch);
        free(d);
        /* the file stores the bottom row first */
        FILE *f = fopen(p, "rb");
        for (int nl = 0; nl < 3;) { /* skip the three header lines */
            int c = fgetc(f);
            assert_int_not_equal(c, EOF);
            nl += c == '\n';
        }
        float first;
        assert_int_equal(fread(&first, 4, 1, f), 1);
        fclose(f);
        assert_true(first == px[(size_t)(h - 1) * w * ch]);
    }
    /* big-endian file (positive scale) */
    const char *p = tpath("be.pfm");
    FILE *f = fopen(p, "wb");
    fputs("Pf\n2 1\n1.0\n", f);
    const unsigned char be[8] = {0x3f, 0x80, 0, 0, 0xc0, 0x00, 0, 0}; /* 1.0, -2.0 */
    fwrite(be, 1, 8, f);
    fclose(f);
    int rw, rh, rc;
    float *d;
    GT_ASSERT_OK(gt_pfm_read(p, &rw, &rh, &rc, &d));
    assert_true(d[0] == 1.0f && d[1] == -2.0f);
    free(d);
}

static void test_write_failures_leave_nothing(void **state)
{
    (void)state;
    uint8_t px[4] = {0};
    assert_int_not_equal(gt_png_write("/nonexistent-dir/a.png", 2, 2, 1, px), GT_OK);
    const char *p = tpath("bad.png");
    unlink(p);
    assert_int_not_equal(gt_png_write(p, 2, 2, 5, px), GT_OK);
    assert_int_not_equal(access(p, F_OK), 0);
    float fp[4] = {0};
    assert_int_not_equal(gt_pfm_write(p, 2, 1, 2, fp), GT_OK);
    assert_int_not_equal(access(p, F_OK), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_png_round_trip),
        cmocka_unit_test(test_png16_in),
        cmocka_unit_test(test_pgm16),
        cmocka_unit_test(test_pfm_round_trip),
        cmocka_unit_test(test_write_failures_leave_nothing),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
