/* GPU calibration features against the CPU reference (suite gpu; exit 77
 * without a GPU): gt_calib_detect_gpu must give the same keypoints (position,
 * level, response, orientation) and the same descriptors, bit for bit, as
 * gt_calib_detect_cpu: both compute them with calib_math.h's integer
 * arithmetic and one IEEE division, and the selection is the same host code.
 * On real views (the CI rig), on noise, on odd sizes and on a 1920x1080
 * view; and a whole calibration with features on the GPU writes the same rig
 * as the CPU's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calib_views.h"
#include "common/timer.h"

static void same_features(const uint8_t *y, int w, int h, int pitch, const char *what)
{
    gt_calib_detect_opts o;
    gt_calib_detect_opts_init(&o);
    gt_calib_feat c, g;
    double t0 = gt_now_ms();
    GT_ASSERT_OK(gt_calib_detect_cpu(y, w, h, pitch, &o, &c));
    double t1 = gt_now_ms();
    GT_ASSERT_OK(gt_calib_detect_gpu(y, w, h, pitch, &o, &g));
    double t2 = gt_now_ms();
    printf("%s %dx%d: %d keypoints on the CPU (%.1f ms), %d on the GPU (%.1f ms)\n", what, w, h, c.n, t1 - t0, g.n,
           t2 - t1);
    assert_int_equal(c.n, g.n);
    assert_true(c.n > 0);
    int bad = 0;
    for (int k = 0; k < c.n; k++) {
        const gt_calib_kp *a = &c.kp[k], *b = &g.kp[k];
        if (a->x != b->x || a->y != b->y || a->lx != b->lx || a->ly != b->ly || a->level != b->level ||
            a->score != b->score || a->angle != b->angle ||
            memcmp(c.desc + (size_t)k * GT_CALIB_DESC, g.desc + (size_t)k * GT_CALIB_DESC, GT_CALIB_DESC)) {
            if (bad++ < 5)
                printf("  keypoint %d differs: CPU (%.3f, %.3f) level %d angle %d, GPU (%.3f, %.3f) level %d angle %d\n",
                       k, a->x, a->y, a->level, a->angle, b->x, b->y, b->level, b->angle);
        }
    }
    assert_int_equal(bad, 0);
    gt_calib_feat_free(&c);
    gt_calib_feat_free(&g);
}

static void test_real_views(void **state)
{
    (void)state;
    cv_spec s;
    cv_spec_ci(&s, 256, 192);
    photo_t ph;
    photo_load(s.photo, &ph);
    uint8_t *fr[CV_MAX];
    assert_int_equal(cv_render(&s, &ph, fr), 0);
    for (int i = 0; i < s.n; i++) same_features(fr[i], s.w, s.h, s.w, "CI view");
    /* a whole calibration: the same rig */
    gt_stitch_calib_opts o;
    gt_stitch_calib_opts_init(&o);
    gt_stitch_calib_result rc, rg;
    o.device = GT_DEVICE_CPU;
    GT_ASSERT_OK(gt_stitch_calibrate_frames((const uint8_t *const *)fr, s.n, s.w, s.h, GT_PIX_YUV444P, &o, &rc));
    o.device = GT_DEVICE_CUDA;
    GT_ASSERT_OK(gt_stitch_calibrate_frames((const uint8_t *const *)fr, s.n, s.w, s.h, GT_PIX_YUV444P, &o, &rg));
    assert_int_equal(rg.device, GT_DEVICE_CUDA);
    assert_int_equal(rc.rig.pano_w, rg.rig.pano_w);
    assert_int_equal(rc.rig.pano_h, rg.rig.pano_h);
    for (int i = 0; i < s.n; i++) {
        assert_memory_equal(rc.rig.cam[i].H, rg.rig.cam[i].H, sizeof rc.rig.cam[i].H);
        assert_true(rc.rig.cam[i].gain == rg.rig.cam[i].gain);
    }
    gt_stitch_calib_result_free(&rc);
    gt_stitch_calib_result_free(&rg);
    for (int i = 0; i < s.n; i++) free(fr[i]);
    photo_free(&ph);
}

static void test_noise_and_sizes(void **state)
{
    (void)state;
    const int sizes[][2] = {{333, 257}, {52, 52}, {640, 100}, {1920, 1080}};
    gt_rng r = {11};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int w = sizes[k][0], h = sizes[k][1], pitch = w + 7;
        uint8_t *img = malloc((size_t)pitch * h);
        for (size_t i = 0; i < (size_t)pitch * h; i++) img[i] = (uint8_t)(gt_rng_u64(&r) >> 56);
        same_features(img, w, h, pitch, "noise");
        free(img);
    }
}

static void test_1080p_view(void **state)
{
    (void)state;
    cv_spec s;
    cv_spec_ci(&s, 1920, 1080);
    s.n = 1, s.jpeg = 0, s.f0 = 330, s.f = 2500, s.yaw[0] = -14, s.pitch[0] = -9;
    photo_t ph;
    photo_load(s.photo, &ph);
    uint8_t *fr[CV_MAX];
    assert_int_equal(cv_render(&s, &ph, fr), 0);
    same_features(fr[0], s.w, s.h, s.w, "1080p view");
    free(fr[0]);
    photo_free(&ph);
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_views),
        cmocka_unit_test(test_noise_and_sizes),
        cmocka_unit_test(test_1080p_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
