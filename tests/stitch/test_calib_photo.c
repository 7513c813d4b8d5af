/* Calibration on real content (issue 21): views cut from real photographs
 * (calib_views.h) with known homographies (a rotating rig: neighbours 20 to
 * 30 degrees apart, 20-40 % overlap), exposures 1.5 stops apart, colour
 * casts, noise and JPEG artefacts. The calibrated rig (CPU reference) must
 *  - put every camera's corners within 0.5 px of the truth on average (in
 *    the reference camera's view),
 *  - recover the gains (Y, U, V) within 3 % of the truth,
 *  - and stitch a panorama whose luma PSNR against the ground truth is at
 *    least 3 dB better with the gains than without (both printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calib_views.h"

enum { VW = 256, VH = 192 };

typedef struct {
    const char *photo;
    double f0;
} scene_t;
static const scene_t scenes[] = {{"scene_astronaut.jpg", 330}, {"scene_chelsea.jpg", 285}};

/* the CI rig over scene k, and its photograph */
static void scene_load(size_t k, cv_spec *s, photo_t *ph)
{
    cv_spec_ci(s, VW, VH);
    s->photo = scenes[k].photo;
    s->f0 = scenes[k].f0;
    photo_load(s->photo, ph);
}

/* the views are what the issue asks for */
static void test_views(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof scenes / sizeof *scenes; k++) {
        cv_spec s;
        photo_t ph;
        scene_load(k, &s, &ph);
        assert_true(cv_margin(&s, ph.w, ph.h) > 3); /* every view inside the photograph */
        for (int i = 0; i + 1 < s.n; i++) {
            double a = cv_angle(&s, i, i + 1);
            /* overlap: share of camera i's pixels that camera i+1 sees */
            double M[9];
            cv_rel(&s, ph.w, ph.h, i, i + 1, M);
            long in = 0;
            for (int y = 0; y < VH; y++)
                for (int x = 0; x < VW; x++) {
                    double wz = M[6] * x + M[7] * y + M[8], u = (M[0] * x + M[1] * y + M[2]) / wz,
                           v = (M[3] * x + M[4] * y + M[5]) / wz;
                    in += u >= 0 && v >= 0 && u <= VW - 1 && v <= VH - 1;
                }
            double ov = (double)in / (VW * VH);
            printf("%s: cameras %d-%d %.1f degrees apart, overlap %.0f %%\n", s.photo, i + 1, i + 2, a, 100 * ov);
            assert_true(a >= 20 && a <= 30);
            assert_true(ov >= 0.2 && ov <= 0.4);
        }
        double lo = 1e9, hi = 0;
        for (int i = 0; i < s.n; i++) lo = fmin(lo, s.gain[i][0]), hi = fmax(hi, s.gain[i][0]);
        double stops = log2(hi / lo);
        printf("%s: exposures %.2f stops apart\n", s.photo, stops);
        assert_true(stops >= 1.49 && stops <= 1.51);
        photo_free(&ph);
    }
}

/* luma PSNR of the stitched panorama against the ground truth: the
 * photograph seen through the reference camera (exposure of the reference),
 * on panorama pixels at least 3 px inside a camera's footprint */
static double pano_psnr(const cv_spec *s, const photo_t *ph, const gt_stitch_rig *rig, int ref, uint8_t **frames,
                        bool gains)
{
    gt_stitch_rig r = *rig;
    if (!gains)
        for (int i = 0; i < r.ncam; i++) r.cam[i].gain = r.cam[i].gain_u = r.cam[i].gain_v = 1.0f;
    gt_stitch_plan plan;
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    GT_ASSERT_OK(gt_stitch_plan_build(&r, s->w, s->h, GT_PIX_YUV444P, &o, &plan));
    uint8_t *out = malloc(plan.out_bytes);
    GT_ASSERT_OK(gt_stitch_frame_cpu(&plan, (const uint8_t *const *)frames, out));
    double Href[9], Rinv[9], G[9];
    cv_h(s, ph->w, ph->h, ref, Href);
    gt_stitch_h_invert(rig->cam[ref].H, Rinv);
    gt_stitch_h_mul(Href, Rinv, G); /* panorama -> photograph */
    int W = plan.pano_w, Hh = plan.pano_h;
    double se = 0;
    long n = 0;
    for (int y = 0; y < Hh; y++)
        for (int x = 0; x < W; x++) {
            float d = 0;
            for (int i = 0; i < plan.ncam; i++) d = fmaxf(d, plan.dist_luma[(size_t)W * Hh * i + (size_t)y * W + x]);
            if (d < 3) continue;
            double wz = G[6] * x + G[7] * y + G[8], X = (G[0] * x + G[1] * y + G[2]) / wz,
                   Y = (G[3] * x + G[4] * y + G[5]) / wz;
            double t = stitch_q(photo_at(ph, 0, X, Y) * s->gain[ref][0]);
            double e = out[(size_t)y * W + x] - t;
            se += e * e;
            n++;
        }
    gt_stitch_plan_free(&plan);
    free(out);
    assert_true(n > 1000);
    return 10 * log10(255.0 * 255.0 / (se / n));
}

static void test_recovers(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof scenes / sizeof *scenes; k++) {
        cv_spec s;
        photo_t ph;
        scene_load(k, &s, &ph);
        uint8_t *frames[CV_MAX];
        assert_int_equal(cv_render(&s, &ph, frames), 0);
        gt_stitch_calib_opts o;
        gt_stitch_calib_opts_init(&o);
        o.device = GT_DEVICE_CPU;
        /* the default, the rotation model: these narrow rigs (24 degrees)
         * get a plane, whose homographies are polished by the dense
         * refinement (test_calib_sphere.c holds wide rigs to their truth) */
        gt_stitch_calib_result res;
        GT_ASSERT_OK(gt_stitch_calibrate_frames((const uint8_t *const *)frames, s.n, s.w, s.h, GT_PIX_YUV444P, &o, &res));
        int ref = res.reference;
        assert_int_equal(ref, 1); /* the middle one of 4 by default */
        for (int q = 0; q < res.npairs; q++) {
            const gt_calib_pair *p = &res.pairs[q];
            printf("%s pair %d-%d: %d matches, %d inliers, RMS %.3f px, max %.3f px%s\n", s.photo, p->i + 1, p->j + 1,
                   p->matches, p->inliers, p->rms, p->max, p->tree ? " (chain)" : p->used ? "" : " (not used)");
        }
        double worst, err = cv_corner_error(&s, &ph, &res.rig, ref, &worst);
        printf("%s: mean corner reprojection error %.3f px (worst corner %.3f px); the plane's polish: the "
               "overlaps' points weighted %g, the features' RMS %.3f px\n",
               s.photo, err, worst, res.polish_weight, res.rms);
        assert_true(err <= 0.5);
        /* views of one photograph: the overlaps agree with the features, and keep their full weight (the corners
         * come from them: the features alone put them 5 px off) */
        assert_true(res.polished && res.polish_weight == 1.0 && res.rms <= GT_CALIB_POLISH_MAX_RMS);
        for (int p = 0; p < 3; p++)
            for (int i = 0; i < s.n; i++) {
                const gt_stitch_cam *c = &res.rig.cam[i];
                double g = p == 0 ? c->gain : p == 1 ? c->gain_u : c->gain_v, t = cv_gain_truth(&s, ref, i, p);
                printf("%s: camera %d gain %c %.4f, truth %.4f (%+.2f %%)\n", s.photo, i + 1, "YUV"[p], g, t,
                       100 * (g / t - 1));
                assert_true(fabs(g / t - 1) <= 0.03);
            }
        double before = pano_psnr(&s, &ph, &res.rig, ref, frames, false);
        double after = pano_psnr(&s, &ph, &res.rig, ref, frames, true);
        printf("%s: panorama luma PSNR %.2f dB without gains, %.2f dB with (%+.2f dB)\n", s.photo, before, after,
               after - before);
        assert_true(after >= before + 3);
        gt_stitch_calib_result_free(&res);
        for (int i = 0; i < s.n; i++) free(frames[i]);
        photo_free(&ph);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_recovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
