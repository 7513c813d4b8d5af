/* The synthetic 360-degree rig with ground truth (issue 53), on the CPU:
 * eight views cut with known rotations and exposures from a real
 * equirectangular photograph (stitch_sphere.h, 4.4 times its density),
 * calibrated with the rotation model (features, sub-pixel matches, the ray
 * bundle adjustment, horizon straightening): every camera placed, each
 * rotation within 0.1 degree of the truth, the full 360 x 180 spherical
 * panorama chosen, the re-stitched panorama's samples within 0.5 px of
 * their place in the photograph wherever a camera sees, its luma >= 40 dB
 * PSNR against the photograph after the estimated gains. A panning rig of
 * portrait cameras gets a cylinder and is refused a plane; a camera that
 * sees only sky is refused by name; a lens's distortion is estimated or
 * taken as given; a camera hidden inside another's view owns no pixel and
 * is refused by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "stitch/calib.h"
#include "stitch_sphere.h"

/* views of spec s as yuv444p frames, with Gaussian noise of sigma 1 */
static void render_all(const photo_t *src, const sphere_spec *s, uint8_t **fr)
{
    gt_rng r = {2024};
    size_t n = (size_t)s->w * s->h * 3;
    for (int i = 0; i < s->n; i++) {
        fr[i] = malloc(n);
        sphere_render(src, s, i, GT_PIX_YUV444P, fr[i]);
        for (size_t k = 0; k < n; k++) {
            double u = gt_rng_uniform(&r) + 1e-12, v = gt_rng_uniform(&r);
            fr[i][k] = stitch_q(fr[i][k] + sqrt(-2 * log(u)) * cos(2 * 3.14159265358979 * v));
        }
    }
}

/* the largest angle (degrees) between a calibrated camera's rotation and the truth's */
static double worst_rotation(const sphere_spec *s, const gt_calib_cam *cams)
{
    double worst = 0;
    for (int i = 0; i < s->n; i++) {
        gt_stitch_cam t;
        sphere_cam(s, i, &t);
        double Rt[9], E[9];
        gt_mat3_transpose(t.R, Rt);
        gt_stitch_h_mul(cams[i].R, Rt, E);
        worst = fmax(worst, gt_rot_angle_deg(E));
    }
    return worst;
}

static void calib_opts(gt_stitch_calib_opts *o)
{
    gt_stitch_calib_opts_init(o);
    o->device = GT_DEVICE_CPU;
    o->chain.reference = 0; /* the truth's heading and exposure */
}

static void test_sphere_ground_truth(void **state)
{
    (void)state;
    photo_t src;
    sphere_load(4, &src); /* 512 x 256 */
    sphere_spec s;
    sphere_spec_ring(&s, 8, 640, 480, 90, 0);
    for (int i = 0; i < s.n; i++) s.roll[i] = 0; /* level x axes: the straightened horizon is the truth's */
    uint8_t *fr[SPH_MAX];
    render_all(&src, &s, fr);
    gt_stitch_calib_opts o;
    calib_opts(&o);
    o.rot.pano_width = src.w;
    gt_stitch_calib_result res;
    GT_ASSERT_OK(gt_stitch_calibrate_frames((const uint8_t *const *)fr, s.n, s.w, s.h, GT_PIX_YUV444P, &o, &res));
    const gt_stitch_rig *rig = &res.rig;
    assert_int_equal(rig->ncam, s.n);
    assert_int_equal(rig->proj.kind, GT_PROJ_SPHERICAL);
    assert_true(rig->proj.left == -180 && rig->proj.right == 180 && rig->proj.top == 90 && rig->proj.bottom == -90);
    assert_int_equal(rig->pano_w, src.w);
    assert_int_equal(rig->pano_h, src.h);
    printf("bundle adjustment: %ld matches, RMS %.3f px (chained %.3f px), max %.3f px\n", res.nmatch, res.rms,
           res.rms_init, res.max);
    assert_true(res.rms <= 1.0);
    double worst = worst_rotation(&s, res.cams);
    for (int i = 0; i < s.n; i++) {
        assert_float_equal(rig->cam[i].f, s.f, 0.01 * s.f);
        for (int p = 0; p < 3; p++) { /* gains against the truth's, within 3 % */
            double g = p == 0 ? rig->cam[i].gain : p == 1 ? rig->cam[i].gain_u : rig->cam[i].gain_v;
            double truth = s.gain[0][p] / s.gain[i][p];
            if (fabs(g / truth - 1) > 0.03) fail_msg("camera %d plane %d: gain %.4f, truth %.4f", i + 1, p, g, truth);
        }
    }
    printf("largest rotation error %.4f degrees\n", worst);
    if (worst > 0.1) fail_msg("a rotation is %.4f degrees off (at most 0.1)", worst);
    /* every panorama pixel a camera sees: where the rig samples it against where the photograph has it */
    gt_stitch_cam truth[SPH_MAX];
    for (int i = 0; i < s.n; i++) sphere_cam(&s, i, &truth[i]);
    gt_stitch_proj sp = sphere_proj();
    double px = 0;
    for (int y = 0; y < rig->pano_h; y++)
        for (int x = 0; x < rig->pano_w; x++)
            for (int i = 0; i < s.n; i++) {
                double u, v, d[3], X, Y;
                if (!gt_stitch_rig_to_cam(rig, i, x, y, &u, &v) || u < 0 || v < 0 || u > s.w - 1 || v > s.h - 1) continue;
                gt_cam_ray(&truth[i], u, v, d);
                gt_proj_pixel(&sp, rig->pano_w, rig->pano_h, d, &X, &Y);
                double dx = fabs(X - x);
                if (dx > rig->pano_w / 2.0) dx = rig->pano_w - dx;
                px = fmax(px, hypot(dx, Y - y));
            }
    printf("re-stitched samples within %.4f px of the photograph's\n", px);
    if (px > 0.5) fail_msg("a sample lands %.3f px from its place (at most 0.5)", px);
    /* the panorama again, multi-band with the estimated gains */
    gt_stitch_plan_opts po;
    gt_stitch_plan_opts_init(&po);
    gt_stitch_plan plan;
    GT_ASSERT_OK(gt_stitch_plan_build(rig, s.w, s.h, GT_PIX_YUV444P, &po, &plan));
    GT_ASSERT_OK(gt_stitch_plan_check_owners(&plan, rig, NULL));
    uint8_t *out = malloc(plan.out_bytes);
    GT_ASSERT_OK(gt_stitch_frame_cpu(&plan, (const uint8_t *const *)fr, out));
    double se = 0;
    long n = 0;
    for (size_t j = 0; j < (size_t)src.w * src.h; j++) {
        if (plan.owner_luma[j] == 255) continue;
        double d = out[j] - src.c[0][j];
        se += d * d, n++;
    }
    double psnr = 10 * log10(255.0 * 255.0 / (se / n));
    printf("luma PSNR %.2f dB against the photograph over %ld pixels\n", psnr, n);
    if (psnr < 40) fail_msg("PSNR %.2f dB < 40 dB", psnr);
    free(out);
    gt_stitch_plan_free(&plan);
    gt_stitch_calib_result_free(&res);
    for (int i = 0; i < s.n; i++) free(fr[i]);
    photo_free(&src);
}

/* five portrait cameras panning 167 degrees (the handheld case):
 * all placed on a cylinder; a plane is refused, naming a camera */
static void test_pan_cylinder(void **state)
{
    (void)state;
    photo_t src;
    sphere_load(2, &src);
    sphere_spec s;
    sphere_spec_ring(&s, 5, 320, 480, 47, 0);
    for (int i = 0; i < 5; i++) s.yaw[i] = -60 + 30 * i, s.roll[i] = 0;
    uint8_t *fr[SPH_MAX];
    render_all(&src, &s, fr);
    gt_stitch_calib_opts o;
    calib_opts(&o);
    o.chain.reference = 2;
    gt_stitch_calib_result res;
    GT_ASSERT_OK(gt_stitch_calibrate_frames((const uint8_t *const *)fr, s.n, s.w, s.h, GT_PIX_YUV444P, &o, &res));
    assert_int_equal(res.rig.proj.kind, GT_PROJ_CYLINDRICAL);
    assert_true(res.rig.proj.right - res.rig.proj.left > 160);
    printf("pan: %s %.1f..%.1f, panorama %dx%d, RMS %.3f px\n", gt_proj_name(res.rig.proj.kind), res.rig.proj.left,
           res.rig.proj.right, res.rig.pano_w, res.rig.pano_h, res.rms);
    gt_stitch_calib_result_free(&res);
    o.rot.projection = GT_PROJ_PLANE;
    assert_int_equal(gt_stitch_calibrate_frames((const uint8_t *const *)fr, s.n, s.w, s.h, GT_PIX_YUV444P, &o, &res),
                     GT_ERR_DATA);
    printf("plane: %s\n", gt_errmsg());
    assert_non_null(strstr(gt_errmsg(), "a plane cannot hold camera"));
    assert_non_null(strstr(gt_errmsg(), "--projection cylindrical or spherical"));
    gt_stitch_calib_result_free(&res);
    /* a sixth camera looking straight up at the sky matches no other */
    s.n = 6;
    s.yaw[5] = 0, s.pitch[5] = 80, s.roll[5] = 0;
    s.gain[5][0] = s.gain[5][1] = s.gain[5][2] = 1;
    fr[5] = malloc((size_t)s.w * s.h * 3);
    sphere_render(&src, &s, 5, GT_PIX_YUV444P, fr[5]);
    o.rot.projection = -1;
    assert_int_equal(gt_stitch_calibrate_frames((const uint8_t *const *)fr, s.n, s.w, s.h, GT_PIX_YUV444P, &o, &res),
                     GT_ERR_DATA);
    printf("sky: %s\n", gt_errmsg());
    assert_non_null(strstr(gt_errmsg(), "camera 6 cannot be placed"));
    gt_stitch_calib_result_free(&res);
    for (int i = 0; i < s.n; i++) free(fr[i]);
    photo_free(&src);
}

/* a lens with barrel distortion: estimated (one k1, k2 for the rig) from
 * the matches with the rotations, asked for or chosen by the default
 * (--lens auto: it lowers the error clearly), or given and held; each
 * places every camera within 0.1 degree and reprojects the inliers within
 * 0.5 px, where ignoring the distortion does not */
static void test_distortion(void **state)
{
    (void)state;
    photo_t src;
    sphere_load(4, &src);
    sphere_spec s;
    sphere_spec_ring(&s, 6, 480, 360, 100, 0);
    s.k1 = -0.08, s.k2 = 0.01;
    for (int i = 0; i < s.n; i++) s.roll[i] = 0;
    uint8_t *fr[SPH_MAX];
    render_all(&src, &s, fr);
    for (int mode = 0; mode < 4; mode++) { /* estimated, given, ignored, chosen */
        gt_stitch_calib_opts o;
        calib_opts(&o);
        o.rot.distortion = mode == 0;
        if (mode == 1) o.rot.k1 = s.k1, o.rot.k2 = s.k2;
        if (mode == 1 || mode == 2) o.rot.lens = GT_CALIB_LENS_NONE;
        gt_stitch_calib_result res;
        GT_ASSERT_OK(gt_stitch_calibrate_frames((const uint8_t *const *)fr, s.n, s.w, s.h, GT_PIX_YUV444P, &o, &res));
        double worst = worst_rotation(&s, res.cams);
        printf("distortion %s: k1 %.4f k2 %.4f (truth %.4f %.4f), RMS %.3f px, largest rotation error %.4f degrees\n",
               mode == 0 ? "estimated" : mode == 1 ? "given" : mode == 2 ? "ignored" : "chosen", res.cams[0].k1, res.cams[0].k2, s.k1, s.k2,
               res.rms, worst);
        if (mode != 2) {
            assert_true(res.rig.ray); /* a distorted lens is stitched through rays */
            if (mode == 3) assert_true(res.lens & GT_CALIB_BA_K);
            assert_true(worst <= 0.1);
            assert_true(res.rms <= 0.5);
            assert_float_equal(res.cams[0].k1, s.k1, 0.01);
        } else {
            assert_true(res.rms > 0.5); /* the lens model matters */
        }
        gt_stitch_calib_result_free(&res);
    }
    for (int i = 0; i < s.n; i++) free(fr[i]);
    photo_free(&src);
}

/* --lens auto on views of an ideal lens keeps no lens parameter (no k1, k2
 * or principal point fitted to the noise); on views whose principal point
 * is off the centre it finds that point within 1.5 px, and keeps the
 * rotations within 0.1 degree and the inliers within 0.5 px, where the
 * pinhole at the centre does not */
static void test_lens_auto(void **state)
{
    (void)state;
    photo_t src;
    sphere_load(4, &src);
    for (int off = 0; off < 2; off++) {
        sphere_spec s;
        sphere_spec_ring(&s, 6, 480, 360, 100, 0);
        if (off) s.dcx = 14, s.dcy = -11;
        for (int i = 0; i < s.n; i++) s.roll[i] = 0; /* level x axes: the straightened horizon is the truth's */
        uint8_t *fr[SPH_MAX];
        render_all(&src, &s, fr);
        for (int mode = 0; mode < 2; mode++) { /* auto, none */
            gt_stitch_calib_opts o;
            calib_opts(&o);
            if (mode) o.rot.lens = GT_CALIB_LENS_NONE;
            gt_stitch_calib_result res;
            GT_ASSERT_OK(gt_stitch_calibrate_frames((const uint8_t *const *)fr, s.n, s.w, s.h, GT_PIX_YUV444P, &o, &res));
            double worst = worst_rotation(&s, res.cams);
            printf("principal point %+.0f %+.0f, --lens %s: kept %d, k1 %.4f k2 %.4f, centre %+.2f %+.2f, RMS %.3f px, "
                   "rotation error %.4f degrees\n",
                   s.dcx, s.dcy, mode ? "none" : "auto", res.lens, res.cams[0].k1, res.cams[0].k2, res.cams[0].dcx,
                   res.cams[0].dcy, res.rms, worst);
            if (mode == 1) {
                if (off) assert_true(res.rms > 0.5);
            } else if (!off) {
                assert_int_equal(res.lens, 0);
                assert_true(res.rms <= 0.5);
            } else {
                assert_true(res.lens & GT_CALIB_BA_CENTRE);
                assert_float_equal(res.cams[0].dcx, s.dcx, 1.5);
                assert_float_equal(res.cams[0].dcy, s.dcy, 1.5);
                assert_true(worst <= 0.1);
                assert_true(res.rms <= 0.5);
            }
            gt_stitch_calib_result_free(&res);
        }
        for (int i = 0; i < s.n; i++) free(fr[i]);
    }
    photo_free(&src);
}

/* a narrow camera inside a wide one's view owns no pixel: refused by name */
static void test_hidden_camera(void **state)
{
    (void)state;
    sphere_spec s;
    sphere_spec_ring(&s, 4, 320, 240, 100, 0);
    gt_stitch_rig rig;
    sphere_truth_rig(&s, sphere_proj(), 512, 256, &rig);
    rig.ncam = 5;
    rig.cam[4] = rig.cam[1];
    rig.cam[4].f = rig.cam[1].f * 3; /* the same direction, a third of the field of view */
    GT_ASSERT_OK(gt_stitch_rig_finish(&rig));
    assert_int_equal(gt_stitch_rig_check_owners(&rig, 320, 240, 512), GT_ERR_DATA);
    printf("%s\n", gt_errmsg());
    assert_non_null(strstr(gt_errmsg(), "camera 5 owns no pixel"));
    rig.ncam = 4;
    GT_ASSERT_OK(gt_stitch_rig_check_owners(&rig, 320, 240, 512));
    gt_stitch_rig_free(&rig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sphere_ground_truth),
        cmocka_unit_test(test_pan_cylinder),
        cmocka_unit_test(test_distortion),
        cmocka_unit_test(test_lens_auto),
        cmocka_unit_test(test_hidden_camera),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
