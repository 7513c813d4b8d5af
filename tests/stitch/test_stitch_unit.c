/* lib/stitch CPU tests: rig parser, homography helpers, distance transform,
 * pyramids, packed vs planar 4:2:2, and the ground truth by construction. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "stitch/stitch_math.h"
#include "stitch_synth.h"

/* ------------------------------------------------------------ rig parser */

static gt_status parse_str(const char *text, gt_stitch_rig *rig)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    gt_status st = gt_stitch_rig_parse(f, "t.rig", rig);
    fclose(f);
    return st;
}

static void test_rig_parse_ok(void **state)
{
    (void)state;
    gt_stitch_rig rig;
    const char *t = "# two cameras\n"
                    "panorama 640 240\n\n"
                    "camera\n"
                    "  H 1 0 10\n    0 1 -5\n    0 0 1   # translation\n"
                    "  gain 1.25\n"
                    "camera\n"
                    "  H 2 0 0 0 2 0 0 0 2\n"
                    "  mask masks/cam 1.png\n";
    GT_ASSERT_OK(parse_str(t, &rig));
    assert_int_equal(rig.pano_w, 640);
    assert_int_equal(rig.pano_h, 240);
    assert_int_equal(rig.ncam, 2);
    assert_true(rig.cam[0].H[2] == 10 && rig.cam[0].H[5] == -5);
    assert_true(fabs(rig.cam[0].Hinv[2] + 10) < 1e-12);
    assert_true(fabs(rig.cam[0].gain - 1.25f) < 1e-6);
    assert_null(rig.cam[0].mask_path);
    assert_string_equal(rig.cam[1].mask_path, "masks/cam 1.png");
    assert_true(fabs(rig.cam[1].Hinv[0] - 0.5) < 1e-12);
    gt_stitch_rig_free(&rig);
}

static void expect_error(const char *text, const char *needle)
{
    gt_stitch_rig rig;
    gt_status st = parse_str(text, &rig);
    assert_int_equal(st, GT_ERR_DATA);
    if (!strstr(gt_errmsg(), needle)) fail_msg("message '%s' lacks '%s'", gt_errmsg(), needle);
}

static void test_rig_parse_errors(void **state)
{
    (void)state;
    expect_error("panorama 10 10\ncamera\nH 1 0 0 0 1 0 0 0 1\nfoo 3\n", "unknown keyword 'foo' (expected rig, panorama, projection, camera, H, size, focal, centre, R, distortion, mask, gain, gain_u or gain_v) (t.rig:4)");
    expect_error("panorama 10 10\ncamera\nH 1 2 3 2 4 6 0 0 1\n", "singular homography");
    expect_error("panorama 10 10\ncamera\nH 1 2 3 2 4 6 0 0 1\n", "(t.rig:3)");
    expect_error("panorama 10 10\ncamera\nH 1 0 0 0 1 x 0 0 1\n", "bad H entry 'x' (expected a number) (t.rig:3)");
    expect_error("panorama 10 10\ncamera\nH 1 0 0 0 1\n", "unexpected end of file");
    expect_error("panorama 10 10\ncamera\ngain 1\ncamera\nH 1 0 0 0 1 0 0 0 1\n", "camera 1 has no H (t.rig:2)");
    expect_error("camera\nH 1 0 0 0 1 0 0 0 1\n", "no 'panorama W H' line");
    expect_error("panorama 10 10\n", "no cameras");
    expect_error("panorama 10.5 10\n", "(t.rig:1)");
    expect_error("panorama 10 10\ncamera\nH 1 0 0 0 1 0 0 0 1\ngain -1\n", "gain -1 out of range (0, 100] (t.rig:4)");
    expect_error("gain 2\n", "'gain' before the first 'camera' (t.rig:1)");
}

/* ------------------------------------------------------------ homographies */

static void apply(const double H[9], double x, double y, double *u, double *v)
{
    double w = H[6] * x + H[7] * y + H[8];
    *u = (H[0] * x + H[1] * y + H[2]) / w;
    *v = (H[3] * x + H[4] * y + H[5]) / w;
}

static void test_homography_inverse_and_macro(void **state)
{
    (void)state;
    gt_rng r = {7};
    for (int t = 0; t < 50; t++) {
        double H[9], Hi[9], Hm[9];
        for (int k = 0; k < 9; k++) H[k] = gt_rng_range(&r, -1, 1);
        H[0] += 3, H[4] += 3, H[8] += 3;
        H[6] *= 1e-3, H[7] *= 1e-3;
        GT_ASSERT_OK(gt_stitch_h_invert(H, Hi));
        double I[9];
        gt_stitch_h_mul(H, Hi, I);
        for (int k = 0; k < 9; k++) assert_true(fabs(I[k] - (k % 4 == 0)) < 1e-9);
        /* macro-pixel homography: Hm maps camera macro coords (x/2, y) to
         * panorama macro coords (u/2, v) */
        gt_stitch_h_macro(H, Hm);
        double x = gt_rng_range(&r, 0, 1920), y = gt_rng_range(&r, 0, 1080), u, v, mu, mv;
        apply(H, x, y, &u, &v);
        apply(Hm, x / 2, y, &mu, &mv);
        assert_true(fabs(mu - u / 2) < 1e-6 * (1 + fabs(u)));
        assert_true(fabs(mv - v) < 1e-6 * (1 + fabs(v)));
    }
    double S[9] = {1, 2, 3, 2, 4, 6, 1, 1, 1}, Si[9];
    assert_int_equal(gt_stitch_h_invert(S, Si), GT_ERR_DATA);
    double Z[9] = {0};
    assert_int_equal(gt_stitch_h_invert(Z, Si), GT_ERR_DATA);
}

/* chroma siting: for packed 4:2:2 the U plane's matrix is the inverse
 * macro-pixel homography, sample (mx, y) at luma (2mx, y) */
static void test_plane_matrices(void **state)
{
    (void)state;
    gt_stitch_rig rig;
    synth_rig(&rig, 200, 80, 96, 100, 0);
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    o.blend = GT_BLEND_NONE;
    gt_stitch_plan plan;
    GT_ASSERT_OK(gt_stitch_plan_build(&rig, 96, 100, GT_PIX_YUYV422, &o, &plan));
    double Hm[9], Hmi[9];
    gt_stitch_h_macro(rig.cam[2].H, Hm);
    GT_ASSERT_OK(gt_stitch_h_invert(Hm, Hmi));
    const float *P = plan.plane[1].P[2];
    for (int y = 0; y < 80; y += 13)
        for (int mx = 0; mx < 100; mx += 17) {
            double u, v;
            apply(Hmi, mx, y, &u, &v);
            double w = P[6] * mx + P[7] * y + P[8];
            double pu = (P[0] * mx + P[1] * y + P[2]) / w, pv = (P[3] * mx + P[4] * y + P[5]) / w;
            assert_true(fabs(pu - u) < 1e-3 && fabs(pv - v) < 1e-3);
        }
    gt_stitch_plan_free(&plan);
    /* 4:2:0: chroma sample (cx, cy) is at luma (2cx, 2cy + 0.5) */
    GT_ASSERT_OK(gt_stitch_plan_build(&rig, 96, 100, GT_PIX_YUV420P, &o, &plan));
    P = plan.plane[2].P[1];
    for (int cy = 0; cy < 40; cy += 7)
        for (int cx = 0; cx < 100; cx += 11) {
            double u, v;
            apply(rig.cam[1].Hinv, 2.0 * cx, 2.0 * cy + 0.5, &u, &v);
            double w = P[6] * cx + P[7] * cy + P[8];
            double pu = (P[0] * cx + P[1] * cy + P[2]) / w, pv = (P[3] * cx + P[4] * cy + P[5]) / w;
            assert_true(fabs(pu - u / 2) < 1e-3 && fabs(pv - (v - 0.5) / 2) < 1e-3);
        }
    gt_stitch_plan_free(&plan);
}

/* ------------------------------------------------------------ distance transform */

static void test_edt_exact(void **state)
{
    (void)state;
    gt_rng r = {11};
    int w = 37, h = 23;
    uint8_t in[37 * 23];
    float d[37 * 23];
    for (int t = 0; t < 5; t++) {
        double density = 0.02 + 0.1 * t;
        for (int i = 0; i < w * h; i++) in[i] = gt_rng_uniform(&r) > density;
        in[5] = 0;
        GT_ASSERT_OK(gt_stitch_edt(in, w, h, 1e6f, d));
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                long best = 1L << 40; /* squared, exact */
                for (int yy = 0; yy < h; yy++)
                    for (int xx = 0; xx < w; xx++)
                        if (!in[yy * w + xx]) {
                            long dd = (long)(x - xx) * (x - xx) + (long)(y - yy) * (y - yy);
                            if (dd < best) best = dd;
                        }
                /* exact: the float nearest the square root of the integer */
                assert_true(d[y * w + x] == (float)sqrt((double)best));
            }
    }
    memset(in, 1, sizeof in);
    GT_ASSERT_OK(gt_stitch_edt(in, w, h, 99.0f, d));
    assert_true(d[0] == 99.0f && d[w * h - 1] == 99.0f);
}

/* ------------------------------------------------------------ pyramids */

static void test_pyramid(void **state)
{
    (void)state;
    int w = 37, h = 22;
    float a[37 * 22], r[19 * 11], e[37 * 22];
    for (int i = 0; i < w * h; i++) a[i] = 42.5f;
    gt_stitch_reduce(a, w, h, r);
    for (int i = 0; i < 19 * 11; i++) assert_true(fabsf(r[i] - 42.5f) < 1e-5f);
    gt_stitch_expand(r, 19, 11, e, w, h);
    for (int i = 0; i < w * h; i++) assert_true(fabsf(e[i] - 42.5f) < 1e-5f);
    /* a linear ramp is reproduced by expand in the interior (the kernel is
     * an interpolator for linear functions) */
    for (int y = 0; y < 11; y++)
        for (int x = 0; x < 19; x++) r[y * 19 + x] = 3.0f * x + 5.0f * y;
    gt_stitch_expand(r, 19, 11, e, w, h);
    for (int y = 2; y < h - 2; y++)
        for (int x = 2; x < w - 2; x++) assert_true(fabsf(e[y * w + x] - (1.5f * x + 2.5f * y)) < 1e-4f);
    /* an impulse spreads as [1 4 6 4 1]/16 x [1 4 6 4 1]/16 */
    memset(a, 0, sizeof a);
    a[10 * w + 16] = 256.0f;
    gt_stitch_reduce(a, w, h, r);
    assert_true(fabsf(r[5 * 19 + 8] - 36.0f) < 1e-5f);  /* 6*6 */
    assert_true(fabsf(r[5 * 19 + 9] - 6.0f) < 1e-5f);   /* 6*1 (offset 2 -> tap 1) */
    assert_int_equal(gt_stitch_levels(1920, 1080, 5), 5);
    assert_int_equal(gt_stitch_levels(8, 8, 5), 3); /* 8, 4, 2 */
}

/* the reduce against its definition written out: horizontal 5-tap pass over
 * every row with reflect-101 at the borders, then the vertical pass; the same
 * float operations, so equal to the bit, at sizes where the borders meet */
static void test_reduce_definition(void **state)
{
    (void)state;
    static const int sz[] = {1, 2, 3, 4, 5, 6, 7, 8, 13, 37};
    gt_rng g = {5};
    for (int a = 0; a < 10; a++)
        for (int b = 0; b < 10; b++) {
            int w = sz[a], h = sz[b], ow = (w + 1) / 2, oh = (h + 1) / 2;
            float *src = malloc(sizeof(float) * w * h), *got = malloc(sizeof(float) * ow * oh);
            float *tmp = malloc(sizeof(float) * ow * h);
            for (int i = 0; i < w * h; i++) src[i] = (float)gt_rng_uniform(&g) * 255.0f;
            gt_stitch_reduce(src, w, h, got);
            for (int y = 0; y < h; y++)
                for (int x = 0; x < ow; x++) {
                    float t[5];
                    for (int k = 0; k < 5; k++) t[k] = src[y * w + gt_sm_reflect(2 * x - 2 + k, w)];
                    tmp[y * ow + x] = gt_sm_reduce5(t[0], t[1], t[2], t[3], t[4]);
                }
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++) {
                    float t[5];
                    for (int k = 0; k < 5; k++) t[k] = tmp[gt_sm_reflect(2 * y - 2 + k, h) * ow + x];
                    float want = gt_sm_reduce5(t[0], t[1], t[2], t[3], t[4]);
                    if (got[y * ow + x] != want)
                        fail_msg("reduce %dx%d at (%d,%d): %.9g, definition %.9g", w, h, x, y, got[y * ow + x], want);
                }
            free(src), free(got), free(tmp);
        }
}

/* ------------------------------------------------------------ stitching */

typedef struct {
    synth_scene scene;
    gt_stitch_rig rig;
    int cw, ch;
    uint8_t *cam[4];
} scene_set;

static void make_set_w(scene_set *s, gt_pixfmt f, const double exposure[4], int cw)
{
    synth_init(&s->scene, 2024);
    s->cw = cw, s->ch = 160;
    synth_rig(&s->rig, 400, 128, s->cw, s->ch, 0);
    gt_plane_view pv[3];
    gt_stitch_planes(f, s->cw, s->ch, pv);
    size_t bytes = f == GT_PIX_YUV420P || f == GT_PIX_NV12 ? (size_t)s->cw * s->ch * 3 / 2 : (size_t)s->cw * s->ch * 2;
    for (int i = 0; i < 4; i++) {
        s->cam[i] = malloc(bytes);
        synth_render(&s->scene, s->rig.cam[i].H, exposure[i], f, s->cw, s->ch, s->cam[i]);
    }
}
static void make_set(scene_set *s, gt_pixfmt f, const double exposure[4])
{
    make_set_w(s, f, exposure, 160);
}
static void free_set(scene_set *s)
{
    for (int i = 0; i < 4; i++) free(s->cam[i]);
}

static int g_bands = 5;
static void stitch(scene_set *s, gt_pixfmt f, gt_blend_mode b, uint8_t **out, gt_stitch_plan *plan)
{
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    o.blend = b;
    o.bands = g_bands;
    GT_ASSERT_OK(gt_stitch_plan_build(&s->rig, s->cw, s->ch, f, &o, plan));
    *out = malloc(plan->out_bytes);
    const uint8_t *in[4] = {s->cam[0], s->cam[1], s->cam[2], s->cam[3]};
    GT_ASSERT_OK(gt_stitch_frame_cpu(plan, in, *out));
}

/* Ground truth: views with exposures e_i and rig gains 1/e_i stitch back to
 * the scene. Where one camera covers, error = bilinear interpolation of a
 * smooth scene + twice 8-bit quantisation (the second scaled by 1/e_i), far
 * below the 38 dB (RMS 3.2) bound. */
static void test_ground_truth_psnr(void **state)
{
    (void)state;
    const double e[4] = {0.85, 1.0, 1.15, 0.92};
    scene_set s;
    make_set(&s, GT_PIX_YUV422P, e);
    for (int i = 0; i < 4; i++) s.rig.cam[i].gain = (float)(1.0 / e[i]);
    const gt_blend_mode modes[3] = {GT_BLEND_NONE, GT_BLEND_FEATHER, GT_BLEND_MULTIBAND};
    int W = s.rig.pano_w, H = s.rig.pano_h;
    for (int m = 0; m < 3; m++) {
        gt_stitch_plan plan;
        uint8_t *out;
        stitch(&s, GT_PIX_YUV422P, modes[m], &out, &plan);
        double se = 0, seall = 0;
        long n = 0, nall = 0;
        for (int y = 1; y < H - 1; y++)
            for (int x = 1; x < W - 1; x++) {
                int cover = 0;
                for (int i = 0; i < 4; i++) cover += plan.dist_luma[(size_t)W * H * i + (size_t)y * W + x] > 0;
                double yuv[3];
                synth_eval(&s.scene, x, y, yuv);
                double d = (double)out[(size_t)y * W + x] - stitch_q(yuv[0]);
                seall += d * d;
                nall++;
                if (cover == 1) {
                    se += d * d;
                    n++;
                }
            }
        double psnr = 10 * log10(255.0 * 255.0 / (se / n)), psnr_all = 10 * log10(255.0 * 255.0 / (seall / nall));
        printf("blend %d: luma PSNR %.2f dB on %ld single-camera pixels, %.2f dB overall\n", m, psnr, n, psnr_all);
        assert_true(n > W * H / 4);
        assert_true(psnr >= 38.0);
        gt_stitch_plan_free(&plan);
        free(out);
    }
    free_set(&s);
}

/* Seam visibility with uncompensated gains: gradient energy of the
 * (binomially smoothed) error image D = stitched - scene in a band of +-2 px
 * around the seams. A hard seam is a step in D; blending spreads it.
 * Multi-band must beat both. Feather here ramps over the whole overlap (its
 * best case); 7 bands put the lowest band's transition (2^6 = 64x coarser)
 * well beyond the 30-px overlap, which is what multi-band is for (with 5
 * bands the coarsest transition is about the overlap's width and the two tie). */
static void test_multiband_hides_seams(void **state)
{
    (void)state;
    const double e[4] = {0.8, 1.1, 0.9, 1.2};
    scene_set s;
    make_set_w(&s, GT_PIX_YUV422P, e, 124); /* overlaps of about 30 px */
    /* a low-contrast scene (walls, sky): the gain steps dominate */
    for (int k = 0; k < s.scene.nw; k++) s.scene.amp[k] *= 0.15;
    for (int k = 0; k < s.scene.nb; k++) s.scene.bv[k] *= 0.15;
    for (int i = 0; i < 4; i++) synth_render(&s.scene, s.rig.cam[i].H, e[i], GT_PIX_YUV422P, s.cw, s.ch, s.cam[i]);
    int W = s.rig.pano_w, H = s.rig.pano_h;
    const gt_blend_mode modes[3] = {GT_BLEND_NONE, GT_BLEND_FEATHER, GT_BLEND_MULTIBAND};
    double energy[3];
    double *D = malloc(sizeof(double) * W * H);
    for (int m = 0; m < 3; m++) {
        gt_stitch_plan plan;
        uint8_t *out;
        g_bands = 7;
        stitch(&s, GT_PIX_YUV422P, modes[m], &out, &plan);
        g_bands = 5;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                double yuv[3];
                synth_eval(&s.scene, x, y, yuv);
                D[y * W + x] = out[y * W + x] - yuv[0];
            }
        stitch_smooth5(D, W, H); /* seams: what remains visible at low frequency */
        double E = 0;
        for (int y = 3; y < H - 3; y++)
            for (int x = 3; x < W - 3; x++) {
                int near = 0, uncovered = 0;
                for (int dy = -2; dy <= 2; dy++)
                    for (int dx = -2; dx <= 2; dx++) {
                        uint8_t a = plan.owner_luma[(y + dy) * W + x + dx], b = plan.owner_luma[(y + dy) * W + x + dx + 1];
                        near |= a != b;
                        uncovered |= a == 255 || b == 255;
                    }
                if (!near || uncovered) continue;
                double gx = D[y * W + x + 1] - D[y * W + x], gy = D[(y + 1) * W + x] - D[y * W + x];
                E += gx * gx + gy * gy;
            }
        energy[m] = E;
        gt_stitch_plan_free(&plan);
        free(out);
    }
    printf("seam gradient energy: direct %.0f feather %.0f multiband %.0f\n", energy[0], energy[1], energy[2]);
    assert_true(energy[2] < energy[1]);
    assert_true(energy[2] < energy[0]);
    free(D);
    free_set(&s);
}

/* Packed 4:2:2 against planar 4:2:2 of the same frames: same panorama within 1. */
static void test_packed_vs_planar(void **state)
{
    (void)state;
    const double e[4] = {1, 1, 1, 1};
    const gt_blend_mode modes[3] = {GT_BLEND_NONE, GT_BLEND_FEATHER, GT_BLEND_MULTIBAND};
    const gt_pixfmt packed[2] = {GT_PIX_YUYV422, GT_PIX_UYVY422};
    scene_set sp;
    make_set(&sp, GT_PIX_YUV422P, e);
    for (int f = 0; f < 2; f++) {
        scene_set sk;
        make_set(&sk, packed[f], e);
        for (int m = 0; m < 3; m++) {
            gt_stitch_plan p1, p2;
            uint8_t *o1, *o2;
            stitch(&sp, GT_PIX_YUV422P, modes[m], &o1, &p1);
            stitch(&sk, packed[f], modes[m], &o2, &p2);
            gt_plane_view a[3], b[3];
            gt_stitch_planes(GT_PIX_YUV422P, p1.pano_w, p1.pano_h, a);
            gt_stitch_planes(packed[f], p1.pano_w, p1.pano_h, b);
            int maxd = 0;
            for (int p = 0; p < 3; p++)
                for (int y = 0; y < a[p].h; y++)
                    for (int x = 0; x < a[p].w; x++) {
                        int d = abs((int)o1[a[p].off + (size_t)y * a[p].pitch + (size_t)x * a[p].step] -
                                    (int)o2[b[p].off + (size_t)y * b[p].pitch + (size_t)x * b[p].step]);
                        if (d > maxd) maxd = d;
                    }
            assert_true(maxd <= 1);
            gt_stitch_plan_free(&p1);
            gt_stitch_plan_free(&p2);
            free(o1);
            free(o2);
        }
        free_set(&sk);
    }
    free_set(&sp);
}

/* Without masks the seams split overlaps where the distances to the two
 * footprints' borders are equal; with masks, ownership follows them. */
static void test_seams_and_masks(void **state)
{
    (void)state;
    gt_stitch_rig rig;
    memset(&rig, 0, sizeof rig);
    rig.pano_w = 100, rig.pano_h = 20, rig.ncam = 2;
    double H0[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, H1[9] = {1, 0, 40, 0, 1, 0, 0, 0, 1};
    memcpy(rig.cam[0].H, H0, sizeof H0);
    memcpy(rig.cam[1].H, H1, sizeof H1);
    for (int i = 0; i < 2; i++) gt_stitch_h_invert(rig.cam[i].H, rig.cam[i].Hinv), rig.cam[i].gain = 1;
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    o.blend = GT_BLEND_FEATHER;
    gt_stitch_plan plan;
    /* cameras 60 wide: cam0 covers x 0..59, cam1 40..99: overlap 40..59, seam at ~49.5 */
    GT_ASSERT_OK(gt_stitch_plan_build(&rig, 60, 20, GT_PIX_YUV422P, &o, &plan));
    assert_int_equal(plan.owner_luma[10 * 100 + 45], 0);
    assert_int_equal(plan.owner_luma[10 * 100 + 54], 1);
    int seam = -1;
    for (int x = 0; x < 99; x++)
        if (plan.owner_luma[10 * 100 + x] != plan.owner_luma[10 * 100 + x + 1]) seam = x;
    assert_true(seam == 49 || seam == 50);
    /* feather weights sum to one and ramp across the overlap */
    size_t n = 100 * 20;
    for (size_t j = 0; j < n; j++) assert_true(fabsf(plan.plane[0].weight[j] + plan.plane[0].weight[n + j] - 1) < 1e-5f);
    assert_true(plan.plane[0].weight[10 * 100 + 42] > plan.plane[0].weight[10 * 100 + 57]);
    gt_stitch_plan_free(&plan);
    /* a mask giving camera 1 everything from x = 45 */
    uint8_t *m0 = calloc(n, 1), *m1 = calloc(n, 1);
    for (int y = 0; y < 20; y++)
        for (int x = 0; x < 100; x++) m0[y * 100 + x] = x < 45, m1[y * 100 + x] = x >= 45;
    o.masks[0] = m0, o.masks[1] = m1;
    o.blend = GT_BLEND_NONE;
    GT_ASSERT_OK(gt_stitch_plan_build(&rig, 60, 20, GT_PIX_YUV422P, &o, &plan));
    assert_int_equal(plan.owner_luma[10 * 100 + 44], 0);
    assert_int_equal(plan.owner_luma[10 * 100 + 45], 1);
    gt_stitch_plan_free(&plan);
    free(m0), free(m1);
}

static void test_odd_width(void **state)
{
    (void)state;
    gt_plane_view pv[3];
    assert_int_equal(gt_stitch_planes(GT_PIX_YUYV422, 101, 10, pv), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "odd"));
    assert_int_equal(gt_stitch_planes(GT_PIX_NV12, 100, 11, pv), GT_ERR_USAGE);
    GT_ASSERT_OK(gt_stitch_planes(GT_PIX_YUV444P, 101, 11, pv));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rig_parse_ok),
        cmocka_unit_test(test_rig_parse_errors),
        cmocka_unit_test(test_homography_inverse_and_macro),
        cmocka_unit_test(test_plane_matrices),
        cmocka_unit_test(test_edt_exact),
        cmocka_unit_test(test_pyramid),
        cmocka_unit_test(test_reduce_definition),
        cmocka_unit_test(test_seams_and_masks),
        cmocka_unit_test(test_odd_width),
        cmocka_unit_test(test_ground_truth_psnr),
        cmocka_unit_test(test_multiband_hides_seams),
        cmocka_unit_test(test_packed_vs_planar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
