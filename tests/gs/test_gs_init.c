/* The initial Gaussians of a capture (gs/gs_capture.h, gs/gs_knn.h) and the
 * training images' resampling (gs/gs_pixels.h): exact k nearest neighbours
 * against brute force (random, clustered and duplicate points; the small
 * counts), the initial parameters against a case computed by hand, and
 * area averaging against hand-computed weights. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gt_test.h"
#include "gs/gs_capture.h"
#include "gs/gs_fit.h"
#include "gs/gs_knn.h"
#include "gs/gs_pixels.h"
#include "common/timer.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Mean of the k smallest squared distances from point q to the others,
 * summed in ascending order as the tree's search sums them. */
static float brute(const float *p, size_t n, size_t q, int k)
{
    double *d = malloc(sizeof(double) * (n ? n : 1));
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        if (j == q) continue;
        double dx = (double)p[3 * q] - p[3 * j], dy = (double)p[3 * q + 1] - p[3 * j + 1],
               dz = (double)p[3 * q + 2] - p[3 * j + 2];
        d[m++] = dx * dx + dy * dy + dz * dz;
    }
    qsort(d, m, sizeof *d, cmp_d);
    size_t kk = m < (size_t)k ? m : (size_t)k;
    double s = 0;
    for (size_t i = 0; i < kk; i++) s += d[i];
    free(d);
    return kk ? (float)(s / kk) : 0.0f;
}

static void test_knn_brute(void **state)
{
    (void)state;
    gt_rng rng = {42};
    const size_t n = 4000;
    float *p = malloc(sizeof(float) * 3 * n), *o = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) {
        if (i < 2000) /* uniform in a box */
            for (int k = 0; k < 3; k++) p[3 * i + k] = (float)gt_rng_range(&rng, -5, 5);
        else if (i < 3500) /* a thin cluster on a plane far away */
            p[3 * i] = (float)gt_rng_range(&rng, 100, 100.5), p[3 * i + 1] = 7,
            p[3 * i + 2] = (float)gt_rng_range(&rng, -0.5, 0);
        else /* copies of earlier points */
            memcpy(p + 3 * i, p + 3 * (i - 1500), 3 * sizeof(float));
    }
    const int ks[4] = {1, 3, 7, 16};
    for (int t = 0; t < 4; t++) {
        GT_ASSERT_OK(gt_gs_knn_mean_sq(p, n, ks[t], o));
        for (size_t q = 0; q < n; q++) {
            float b = brute(p, n, q, ks[t]);
            if (o[q] != b) fail_msg("k %d point %zu: tree %.9g, brute force %.9g", ks[t], q, o[q], b);
        }
    }
    /* the small counts: 1 point (no neighbour), 2, 3 (fewer than k others) */
    for (size_t m = 1; m <= 4; m++) {
        GT_ASSERT_OK(gt_gs_knn_mean_sq(p, m, 3, o));
        for (size_t q = 0; q < m; q++) assert_true(o[q] == brute(p, m, q, 3));
    }
    assert_int_equal(gt_gs_knn_mean_sq(p, n, 0, o), GT_ERR_USAGE);
    assert_int_equal(gt_gs_knn_mean_sq(p, n, 17, o), GT_ERR_USAGE);
    p[7] = NAN;
    assert_int_equal(gt_gs_knn_mean_sq(p, n, 3, o), GT_ERR_DATA);
    free(p), free(o);
}

/* Four points on the x and y axes, distances computed by hand. */
static void test_init_values(void **state)
{
    (void)state;
    const double xyz[12] = {0, 0, 0, 1, 0, 0, 3, 0, 0, 0, 2, 0};
    const uint8_t rgb[12] = {255, 0, 128, 0, 0, 0, 255, 255, 255, 51, 102, 204};
    /* squared distances to the three others: p0 1, 9, 4; p1 1, 4, 5;
     * p2 9, 4, 13; p3 4, 5, 13 */
    const double d2[4] = {14.0 / 3, 10.0 / 3, 26.0 / 3, 22.0 / 3};
    gt_gs_raw r;
    const gt_gs_init_opts ref = GT_GS_INIT_REFERENCE;
    GT_ASSERT_OK(gt_gs_init_from_points(xyz, rgb, 4, 3, &ref, &r));
    assert_int_equal(r.n, 4), assert_int_equal(r.sh_degree, 3), assert_int_equal(r.sh_k, 16);
    const double C0 = 0.28209479177387814;
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 3; k++) {
            assert_float_equal(r.pos[3 * i + k], xyz[3 * i + k], 0);
            assert_float_equal(r.log_scale[3 * i + k], 0.5 * log(d2[i]), 1e-6);
            assert_float_equal(r.sh[(size_t)i * 48 + k], (rgb[3 * i + k] / 255.0 - 0.5) / C0, 1e-6);
        }
        for (int k = 3; k < 48; k++) assert_float_equal(r.sh[(size_t)i * 48 + k], 0, 0);
        assert_float_equal(r.rot[4 * i], 1, 0);
        for (int k = 1; k < 4; k++) assert_float_equal(r.rot[4 * i + k], 0, 0);
        assert_float_equal(r.logit_opacity[i], -2.1972245773362196, 1e-6);
    }
    assert_float_equal(r.sh[0], 1.7724538509055159, 1e-6); /* (1 - 0.5) / C0 */
    gt_gs_raw_free(&r);
    /* points at one place: the squared distance is clamped at 1e-7 */
    const double same[9] = {1, 2, 3, 1, 2, 3, 1, 2, 3};
    GT_ASSERT_OK(gt_gs_init_from_points(same, rgb, 3, 0, &ref, &r));
    assert_int_equal(r.sh_k, 1);
    assert_float_equal(r.log_scale[0], 0.5 * log(1e-7), 1e-6);
    gt_gs_raw_free(&r);
    assert_int_equal(gt_gs_init_from_points(xyz, rgb, 0, 3, &ref, &r), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "no 3-D points to start from"));
    /* gsplat's MCMC recipe: opacity 0.5 (logit 0), scales 0.1 x the distances */
    const gt_gs_init_opts mcmc = {0.5, 0.1};
    GT_ASSERT_OK(gt_gs_init_from_points(xyz, rgb, 4, 3, &mcmc, &r));
    for (int i = 0; i < 4; i++) {
        assert_float_equal(r.logit_opacity[i], 0, 1e-7);
        for (int k = 0; k < 3; k++) assert_float_equal(r.log_scale[3 * i + k], 0.5 * log(d2[i]) + log(0.1), 1e-6);
    }
    gt_gs_raw_free(&r);
    const gt_gs_init_opts bad[3] = {{0, 1}, {1, 1}, {0.5, 0}};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(gt_gs_init_from_points(xyz, rgb, 4, 3, &bad[k], &r), GT_ERR_USAGE);
        assert_non_null(strstr(gt_errmsg(), "expected 0 < opacity < 1, scale > 0"));
    }
}

/* Area averaging: 5 -> 2 pixels weights each output 2.5 inputs (1, 1, 0.5
 * and 0.5, 1, 1); 4 -> 2 is the 2 x 2 box; sizes kept give the bytes. */
static void test_pixels(void **state)
{
    (void)state;
    uint8_t d[5 * 4 * 3];
    for (int i = 0; i < 5 * 4; i++)
        for (int c = 0; c < 3; c++) d[3 * i + c] = (uint8_t)(10 * i + 50 * c);
    gt_image im = {.w = 5, .h = 4, .channels = 3, .bits = 8, .data = d};
    const float bg[3] = {0, 0, 0};
    float out[2 * 2 * 3];
    GT_ASSERT_OK(gt_gs_pixels_planar(&im, 2, 2, bg, out));
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 2; y++) {
            double r0 = 0, r1 = 0;
            for (int j = 2 * y; j < 2 * y + 2; j++) {
                const uint8_t *row = d + 3 * 5 * j + c;
                r0 += row[0] + row[3] + 0.5 * row[6];
                r1 += 0.5 * row[6] + row[9] + row[12];
            }
            assert_float_equal(out[(c * 2 + y) * 2], r0 / 5 / 255, 1e-6);
            assert_float_equal(out[(c * 2 + y) * 2 + 1], r1 / 5 / 255, 1e-6);
        }
    im.w = 4; /* 4 x 4 -> 2 x 2: the box filter (rows of 5 read as 4: any bytes do) */
    GT_ASSERT_OK(gt_gs_pixels_planar(&im, 2, 2, bg, out));
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 2; x++) {
                double s = 0;
                for (int j = 0; j < 2; j++)
                    for (int i = 0; i < 2; i++) s += d[3 * (4 * (2 * y + j) + 2 * x + i) + c];
                assert_float_equal(out[(c * 2 + y) * 2 + x], s / 4 / 255, 1e-7);
            }
    uint8_t b[5 * 4 * 3];
    im.w = 5;
    gt_gs_pixsrc src = {.img = &im, .w = 5, .h = 4, .bg = bg};
    GT_ASSERT_OK(gt_gs_pixels_resample(&src, 5, 4, NULL, b));
    for (int i = 0; i < 20; i++)
        for (int c = 0; c < 3; c++) assert_int_equal(b[c * 20 + i], d[3 * i + c]);
    assert_int_equal(gt_gs_pixels_resample(&src, 6, 4, NULL, b), GT_ERR_USAGE);
    /* alpha over the background: grey + alpha 0.25 over (1, 0, 0.5) */
    uint8_t ga[2] = {200, 64};
    gt_image g = {.w = 1, .h = 1, .channels = 2, .bits = 8, .data = ga};
    const float bg2[3] = {1, 0, 0.5f};
    GT_ASSERT_OK(gt_gs_pixels_planar(&g, 1, 1, bg2, out));
    double a = 64 / 255.0, v = 200 / 255.0;
    assert_float_equal(out[0], v * a + 1 * (1 - a), 1e-7);
    assert_float_equal(out[1], v * a, 1e-7);
    assert_float_equal(out[2], v * a + 0.5 * (1 - a), 1e-7);
}

/* gsrender --fit's images (gs_fit_images.c) at -r 2 of cameras of odd
 * width: 45 -> round(22.5) = 22 pixels, area-averaged from the full-size
 * photograph (a box filter of 2 would leave one column out); 47 -> 24
 * (a box filter of 2 makes 23, and was refused). */
static void test_fit_images_odd(void **state)
{
    (void)state;
    char dir[] = "/tmp/gt_fitimg_XXXXXX";
    assert_non_null(mkdtemp(dir));
    uint8_t d[45 * 30 * 3];
    for (int i = 0; i < 45 * 30 * 3; i++) d[i] = (uint8_t)(i * 37);
    char path[100];
    snprintf(path, sizeof path, "%s/cam0.png", dir);
    GT_ASSERT_OK(gt_png_write(path, 45, 30, 3, d));
    gt_gs_camera c = {.width = 45, .height = 30, .fx = 40, .fy = 40, .cx = 22.5f, .cy = 15};
    snprintf(c.name, sizeof c.name, "cam0");
    const float bg[3] = {0, 0, 0};
    float **rgb;
    GT_ASSERT_OK(gt_gs_fit_images_read(dir, &c, 1, bg, 2, &rgb));
    assert_int_equal(c.width, 22), assert_int_equal(c.height, 15);
    gt_image im = {.w = 45, .h = 30, .channels = 3, .bits = 8, .data = d};
    float *want = malloc(sizeof(float) * 3 * 22 * 15);
    GT_ASSERT_OK(gt_gs_pixels_planar(&im, 22, 15, bg, want));
    assert_memory_equal(rgb[0], want, sizeof(float) * 3 * 22 * 15);
    /* the last output column covers input columns 42 (1/22 of it), 43 and
     * 44: x from 21 * 45/22 to 45 */
    for (int y = 0; y < 15; y++) {
        double acc = 0;
        for (int j = 2 * y; j < 2 * y + 2; j++)
            acc += d[(j * 45 + 42) * 3] / 22.0 + d[(j * 45 + 43) * 3] + d[(j * 45 + 44) * 3];
        assert_float_equal(rgb[0][y * 22 + 21], acc / (45.0 / 22 * 2) / 255, 1e-6);
    }
    free(want);
    gt_gs_fit_images_free(rgb, 1);
    /* 47 -> round(23.5) = 24, one more than 47 / 2 */
    snprintf(path, sizeof path, "%s/cam1.png", dir);
    GT_ASSERT_OK(gt_png_write(path, 47, 30, 3, d));
    c = (gt_gs_camera){.width = 47, .height = 30, .fx = 40, .fy = 40, .cx = 23.5f, .cy = 15};
    snprintf(c.name, sizeof c.name, "cam1");
    GT_ASSERT_OK(gt_gs_fit_images_read(dir, &c, 1, bg, 2, &rgb));
    assert_int_equal(c.width, 24), assert_int_equal(c.height, 15);
    assert_float_equal(c.fx, 40.0 * 24 / 47, 1e-5);
    gt_gs_fit_images_free(rgb, 1);
    unlink(path);
    snprintf(path, sizeof path, "%s/cam0.png", dir);
    unlink(path);
    rmdir(dir);
}

/* Timing of the neighbour search on 1M random points (printed, not checked). */
static void test_knn_time(void **state)
{
    (void)state;
    const size_t n = 1000000;
    float *p = malloc(sizeof(float) * 3 * n), *o = malloc(sizeof(float) * n);
    gt_rng rng = {9};
    for (size_t i = 0; i < 3 * n; i++) p[i] = (float)gt_rng_uniform(&rng);
    double t0 = gt_now_ms();
    GT_ASSERT_OK(gt_gs_knn_mean_sq(p, n, 3, o));
    printf("3 nearest neighbours of 1M uniform random points: %.3f s\n", (gt_now_ms() - t0) / 1000);
    /* spot checks against brute force */
    for (size_t q = 0; q < n; q += n / 7) assert_true(o[q] == brute(p, n, q, 3));
    free(p), free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_knn_brute), cmocka_unit_test(test_init_values), cmocka_unit_test(test_pixels),
        cmocka_unit_test(test_fit_images_odd), cmocka_unit_test(test_knn_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
