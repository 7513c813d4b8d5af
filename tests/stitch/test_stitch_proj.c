/* Projections and rotation-model rigs (CPU): the projections and the
 * camera model invert themselves, rig files of version 2 round-trip, the
 * ray path and the homography path stitch a plane rig alike, and views cut
 * from a real equirectangular photograph with known rotations stitch back
 * into it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "stitch/proj.h"
#include "stitch_sphere.h"

static void test_proj_roundtrip(void **state)
{
    (void)state;
    gt_rng r = {11};
    const gt_stitch_proj pjs[] = {{GT_PROJ_SPHERICAL, -180, 180, 90, -90}, {GT_PROJ_SPHERICAL, -30, 250, 40, -65},
                                  {GT_PROJ_CYLINDRICAL, -180, 180, 60, -60}, {GT_PROJ_CYLINDRICAL, 10, 100, 20, -50},
                                  {GT_PROJ_PLANE, -60, 50, 35, -40}};
    for (size_t k = 0; k < sizeof pjs / sizeof *pjs; k++) {
        char why[256];
        assert_true(gt_proj_valid(&pjs[k], why, sizeof why));
        int W = 1000, H = 420;
        double worst = 0;
        for (int t = 0; t < 2000; t++) {
            double X = gt_rng_range(&r, -0.49, W - 0.51), Y = gt_rng_range(&r, -0.49, H - 0.51), d[3], X2, Y2;
            gt_proj_ray(&pjs[k], W, H, X, Y, d);
            assert_float_equal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2], 1.0, 1e-12);
            assert_true(gt_proj_pixel(&pjs[k], W, H, d, &X2, &Y2));
            worst = fmax(worst, fmax(fabs(X2 - X), fabs(Y2 - Y)));
        }
        if (worst > 1e-7) fail_msg("%s: ray and pixel disagree by %.3g px", gt_proj_name(pjs[k].kind), worst);
    }
    /* the full sphere: the centre column looks forward, the top row up, the
     * left edge backward, longitudes grow to the right */
    gt_stitch_proj sp = sphere_proj();
    double d[3];
    gt_proj_ray(&sp, 360, 180, 179.5, 89.5, d);
    assert_float_equal(d[2], 1, 1e-12);
    gt_proj_ray(&sp, 360, 180, 269.5, 89.5, d); /* lon 90: right */
    assert_float_equal(d[0], 1, 1e-12);
    gt_proj_ray(&sp, 360, 180, 179.5, -0.5, d); /* the top edge: up is -y */
    assert_float_equal(d[1], -1, 1e-12);
    char why[256];
    gt_stitch_proj bad = {GT_PROJ_CYLINDRICAL, -180, 180, 90, -60};
    assert_false(gt_proj_valid(&bad, why, sizeof why));
    gt_stitch_proj bad2 = {GT_PROJ_PLANE, -100, 50, 30, -30};
    assert_false(gt_proj_valid(&bad2, why, sizeof why));
}

static void test_camera_roundtrip(void **state)
{
    (void)state;
    gt_rng r = {5};
    const double ks[3][2] = {{0, 0}, {-0.12, 0.03}, {0.08, -0.01}};
    for (int k = 0; k < 3; k++) {
        gt_stitch_cam c;
        memset(&c, 0, sizeof c);
        sphere_rotation(40, -12, 7, c.R);
        c.rot = true, c.f = 700, c.w = 1280, c.h = 720, c.cx = 641.3, c.cy = 357.8, c.k1 = ks[k][0], c.k2 = ks[k][1];
        assert_true(gt_cam_distortion_ok(&c));
        double worst = 0;
        for (int t = 0; t < 2000; t++) {
            double u = gt_rng_range(&r, 0, c.w - 1), v = gt_rng_range(&r, 0, c.h - 1), d[3], u2, v2;
            gt_cam_ray(&c, u, v, d);
            assert_true(gt_cam_pixel(&c, d, &u2, &v2));
            worst = fmax(worst, fmax(fabs(u2 - u), fabs(v2 - v)));
        }
        if (worst > 1e-6) fail_msg("k1 %g k2 %g: camera ray and pixel disagree by %.3g px", c.k1, c.k2, worst);
        /* behind the camera: no pixel */
        double axis[3] = {0, 0, 1}, back[3], Rt[9], u, v;
        gt_mat3_transpose(c.R, Rt);
        gt_mat3_vec(Rt, axis, back);
        for (int j = 0; j < 3; j++) back[j] = -back[j];
        assert_false(gt_cam_pixel(&c, back, &u, &v));
    }
    /* a distortion that turns back inside the view */
    gt_stitch_cam c;
    memset(&c, 0, sizeof c);
    c.f = 500, c.w = 1920, c.h = 1080, c.cx = 959.5, c.cy = 539.5, c.k1 = -0.9;
    assert_false(gt_cam_distortion_ok(&c));
}

static void test_rotations(void **state)
{
    (void)state;
    gt_rng r = {3};
    for (int t = 0; t < 200; t++) {
        double w[3], R[9], w2[3];
        for (int k = 0; k < 3; k++) w[k] = gt_rng_range(&r, -1.7, 1.7);
        gt_rot_exp(w, R);
        gt_rot_log(R, w2);
        for (int k = 0; k < 3; k++) assert_float_equal(w[k], w2[k], 1e-9);
        double M[9], Rn[9];
        for (int k = 0; k < 9; k++) M[k] = 2.5 * (R[k] + gt_rng_range(&r, -1e-3, 1e-3));
        assert_int_equal(gt_rot_nearest(M, Rn), 0);
        for (int k = 0; k < 9; k++) assert_float_equal(Rn[k], R[k], 3e-3);
        double T[9], Rt[9];
        gt_mat3_transpose(Rn, Rt);
        gt_stitch_h_mul(Rn, Rt, T);
        for (int k = 0; k < 9; k++) assert_float_equal(T[k], (k % 4 == 0) ? 1.0 : 0.0, 1e-12);
    }
}

/* a rig 2 with every field */
static void random_rig(gt_rng *r, gt_proj_kind kind, gt_stitch_rig *rig)
{
    memset(rig, 0, sizeof *rig);
    rig->version = 2;
    rig->pano_w = 2 * (200 + (int)(gt_rng_uniform(r) * 900)), rig->pano_h = 2 * (100 + (int)(gt_rng_uniform(r) * 400));
    rig->proj = (gt_stitch_proj){kind, -170 + gt_rng_uniform(r), 160 + gt_rng_uniform(r), 50 + gt_rng_uniform(r),
                                 -60 - gt_rng_uniform(r)};
    if (kind == GT_PROJ_PLANE) rig->proj.left = -70, rig->proj.right = 65;
    rig->ncam = 5;
    for (int i = 0; i < rig->ncam; i++) {
        gt_stitch_cam *c = &rig->cam[i];
        sphere_rotation(gt_rng_range(r, -40, 40), gt_rng_range(r, -20, 20), gt_rng_range(r, -10, 10), c->R);
        c->rot = true;
        c->w = 640, c->h = 480;
        c->f = gt_rng_range(r, 300, 900);
        c->cx = gt_rng_range(r, 300, 340), c->cy = gt_rng_range(r, 220, 260);
        c->k1 = i % 2 ? gt_rng_range(r, -0.1, 0.1) : 0;
        c->k2 = i % 2 ? gt_rng_range(r, -0.01, 0.01) : 0;
        c->gain = (float)gt_rng_range(r, 0.5, 2), c->gain_u = (float)gt_rng_range(r, 0.8, 1.2), c->gain_v = 1.0f;
        if (i == 2) c->mask_path = strdup("masks/cam 3.png");
    }
    GT_ASSERT_OK(gt_stitch_rig_finish(rig));
}

/* write a rig into memory */
static char *rig_text(const gt_stitch_rig *rig)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    GT_ASSERT_OK(gt_stitch_rig_write(f, rig));
    fclose(f);
    return buf;
}

static void test_rig_roundtrip(void **state)
{
    (void)state;
    gt_rng r = {17};
    for (int kind = 0; kind < 3; kind++)
        for (int t = 0; t < 4; t++) {
            gt_stitch_rig a, b;
            random_rig(&r, (gt_proj_kind)kind, &a);
            char *txt = rig_text(&a);
            FILE *f = fmemopen(txt, strlen(txt), "r");
            GT_ASSERT_OK(gt_stitch_rig_parse(f, "mem", &b));
            fclose(f);
            assert_int_equal(b.version, 2);
            assert_int_equal(b.pano_w, a.pano_w);
            assert_int_equal(b.pano_h, a.pano_h);
            assert_int_equal(b.proj.kind, a.proj.kind);
            assert_true(b.proj.left == a.proj.left && b.proj.right == a.proj.right && b.proj.top == a.proj.top &&
                        b.proj.bottom == a.proj.bottom);
            assert_int_equal(b.ray, a.ray);
            assert_int_equal(b.ncam, a.ncam);
            for (int i = 0; i < a.ncam; i++) {
                const gt_stitch_cam *p = &a.cam[i], *q = &b.cam[i];
                assert_true(q->rot);
                assert_memory_equal(p->R, q->R, sizeof p->R);
                assert_true(p->f == q->f && p->cx == q->cx && p->cy == q->cy && p->k1 == q->k1 && p->k2 == q->k2);
                assert_int_equal(p->w, q->w);
                assert_int_equal(p->h, q->h);
                assert_true(p->gain == q->gain && p->gain_u == q->gain_u && p->gain_v == q->gain_v);
                if (p->mask_path) assert_string_equal(p->mask_path, q->mask_path);
                else assert_null(q->mask_path);
                if (!a.ray) assert_memory_equal(p->H, q->H, sizeof p->H); /* derived the same way */
            }
            char *txt2 = rig_text(&b);
            assert_string_equal(txt, txt2);
            free(txt), free(txt2);
            gt_stitch_rig_free(&a);
            gt_stitch_rig_free(&b);
        }
    /* version 1 stays version 1, written as before (no 'rig' line) */
    gt_stitch_rig v1;
    char path[4096];
    snprintf(path, sizeof path, "%s/stitch/rig2.txt", getenv("GT_TESTDATA") ? getenv("GT_TESTDATA") : "testdata");
    GT_ASSERT_OK(gt_stitch_rig_load(path, &v1));
    assert_int_equal(v1.version, 1);
    assert_false(v1.ray);
    char *txt = rig_text(&v1);
    assert_non_null(strstr(txt, "panorama 560 240\ncamera\n  H 1 0 0\n"));
    assert_null(strstr(txt, "rig"));
    free(txt);
    gt_stitch_rig_free(&v1);
}

/* a plane rig of rotation-model cameras stitches the same through its
 * derived homographies and through rays */
static void test_plane_ray_vs_h(void **state)
{
    (void)state;
    photo_t src;
    sphere_load(4, &src);
    sphere_spec s;
    sphere_spec_ring(&s, 12, 256, 192, 50, 0);
    s.n = 3; /* three neighbours around yaw 0 */
    s.yaw[0] = -30, s.yaw[1] = 0, s.yaw[2] = 30;
    gt_stitch_proj pj = {GT_PROJ_PLANE, -58, 58, 28, -45};
    gt_stitch_rig rh;
    sphere_truth_rig(&s, pj, 700, 400, &rh);
    GT_ASSERT_OK(gt_stitch_rig_finish(&rh));
    assert_false(rh.ray);
    const gt_pixfmt fmts[] = {GT_PIX_YUV444P, GT_PIX_YUYV422, GT_PIX_YUV420P, GT_PIX_NV12};
    for (size_t q = 0; q < sizeof fmts / sizeof *fmts; q++) {
        uint8_t *in[3];
        size_t ib = gt_pixfmt_frame_bytes(fmts[q], s.w, s.h);
        for (int i = 0; i < s.n; i++) {
            in[i] = malloc(ib);
            sphere_render(&src, &s, i, fmts[q], in[i]);
        }
        gt_stitch_plan_opts po;
        gt_stitch_plan_opts_init(&po);
        po.blend = GT_BLEND_NONE;
        gt_stitch_plan ph, pr;
        GT_ASSERT_OK(gt_stitch_plan_build(&rh, s.w, s.h, fmts[q], &po, &ph));
        gt_stitch_rig rr = rh;
        rr.ray = true;
        GT_ASSERT_OK(gt_stitch_plan_build(&rr, s.w, s.h, fmts[q], &po, &pr));
        uint8_t *oh = malloc(ph.out_bytes), *orr = malloc(pr.out_bytes);
        GT_ASSERT_OK(gt_stitch_frame_cpu(&ph, (const uint8_t *const *)in, oh));
        GT_ASSERT_OK(gt_stitch_frame_cpu(&pr, (const uint8_t *const *)in, orr));
        long same_owner = 0, differ = 0, owners_differ = 0;
        for (int p = 0; p < 3; p++) {
            const gt_stitch_plane *a = &ph.plane[p], *b = &pr.plane[p];
            for (int y = 0; y < a->out.h; y++)
                for (int x = 0; x < a->out.w; x++) {
                    size_t j = (size_t)y * a->out.w + x, o = a->out.off + (size_t)y * a->out.pitch + (size_t)x * a->out.step;
                    if (a->owner[j] != b->owner[j]) {
                        owners_differ++;
                        continue;
                    }
                    same_owner++;
                    if (abs((int)oh[o] - (int)orr[o]) > 1) differ++;
                }
        }
        if (differ || owners_differ > same_owner / 500)
            fail_msg("%s: %ld samples differ by more than 1, %ld of %ld samples have another owner", gt_pixfmt_name(fmts[q]),
                     differ, owners_differ, same_owner + owners_differ);
        free(oh), free(orr);
        gt_stitch_plan_free(&ph);
        gt_stitch_plan_free(&pr);
        for (int i = 0; i < s.n; i++) free(in[i]);
    }
    gt_stitch_rig_free(&rh);
    photo_free(&src);
}

/* PSNR of the stitched luma against the photograph where a camera owns the
 * sample; the photograph is sampled at the panorama's own pixel centres */
static double luma_psnr(const photo_t *src, const gt_stitch_plan *plan, const uint8_t *out, long *n)
{
    const gt_stitch_plane *l = &plan->plane[0];
    double se = 0;
    *n = 0;
    for (int y = 0; y < l->out.h; y++)
        for (int x = 0; x < l->out.w; x++) {
            if (l->owner[(size_t)y * l->out.w + x] == 255) continue;
            double ref = src->c[0][(size_t)y * src->w + x], v = out[l->out.off + (size_t)y * l->out.pitch + x];
            se += (v - ref) * (v - ref);
            (*n)++;
        }
    return 10 * log10(255.0 * 255.0 / (se / (double)*n));
}

/* Views of the photograph by a ring of cameras looking all around (one
 * behind the panorama's seam), stitched with the true rig into a full
 * equirectangular panorama of the photograph's size: the photograph again
 * wherever a camera sees it, every camera owning samples. */
static void test_sphere_truth(void **state)
{
    (void)state;
    photo_t src;
    sphere_load(4, &src); /* 512 x 256 */
    sphere_spec s;
    sphere_spec_ring(&s, 8, 640, 480, 90, 0); /* 4.4 times the photograph's density at the views' centres */
    gt_stitch_rig rig;
    sphere_truth_rig(&s, sphere_proj(), src.w, src.h, &rig);
    for (int i = 0; i < s.n; i++) { /* the gains that undo the exposures */
        rig.cam[i].gain = (float)(1 / s.gain[i][0]);
        rig.cam[i].gain_u = (float)(1 / s.gain[i][1]);
        rig.cam[i].gain_v = (float)(1 / s.gain[i][2]);
    }
    GT_ASSERT_OK(gt_stitch_rig_finish(&rig));
    assert_true(rig.ray);
    uint8_t *in[SPH_MAX];
    for (int i = 0; i < s.n; i++) {
        in[i] = malloc((size_t)s.w * s.h * 3);
        sphere_render(&src, &s, i, GT_PIX_YUV444P, in[i]);
    }
    for (int b = 0; b < 3; b++) {
        gt_stitch_plan_opts po;
        gt_stitch_plan_opts_init(&po);
        po.blend = (gt_blend_mode)b;
        gt_stitch_plan plan;
        GT_ASSERT_OK(gt_stitch_plan_build(&rig, s.w, s.h, GT_PIX_YUV444P, &po, &plan));
        long owned[SPH_MAX] = {0};
        for (size_t j = 0; j < (size_t)src.w * src.h; j++)
            if (plan.owner_luma[j] < s.n) owned[plan.owner_luma[j]]++;
        for (int i = 0; i < s.n; i++)
            if (owned[i] < 1000) fail_msg("camera %d owns %ld samples", i + 1, owned[i]);
        /* the camera behind (yaw 180) owns both ends of the rows */
        uint8_t back = plan.owner_luma[(size_t)110 * src.w], back2 = plan.owner_luma[(size_t)110 * src.w + src.w - 1];
        assert_int_equal(back, 4);
        assert_int_equal(back2, 4);
        uint8_t *out = malloc(plan.out_bytes);
        GT_ASSERT_OK(gt_stitch_frame_cpu(&plan, (const uint8_t *const *)in, out));
        long n;
        double psnr = luma_psnr(&src, &plan, out, &n);
        printf("blend %d: luma PSNR %.2f dB against the photograph over %ld samples (%.0f %% of the sphere)\n", b, psnr,
               n, 100.0 * n / ((double)src.w * src.h));
        if (psnr < 40) fail_msg("blend %d: PSNR %.2f dB < 40 dB", b, psnr);
        free(out);
        gt_stitch_plan_free(&plan);
    }
    for (int i = 0; i < s.n; i++) free(in[i]);
    gt_stitch_rig_free(&rig);
    photo_free(&src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proj_roundtrip), cmocka_unit_test(test_camera_roundtrip),
        cmocka_unit_test(test_rotations),      cmocka_unit_test(test_rig_roundtrip),
        cmocka_unit_test(test_plane_ray_vs_h), cmocka_unit_test(test_sphere_truth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
