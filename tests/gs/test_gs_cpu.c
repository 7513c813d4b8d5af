/* CPU reference renderer: analytic checks (projection, centre colour,
 * radius, footprint), culling, order independence, SH against a direct
 * evaluation of the real spherical harmonics, camera conventions,
 * cameras.json parsing. */
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gs_testutil.h"

static const double IDENT[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* One Gaussian of degree-0 colour col. */
static void one_gaussian(gt_gs_scene *s, const float p[3], float scale, float op, const float col[3])
{
    GT_ASSERT_OK(gt_gs_scene_alloc(s, 1, 0));
    memcpy(s->pos, p, 3 * sizeof(float));
    for (int k = 0; k < 3; k++) s->scale[k] = scale;
    s->rot[0] = 1;
    s->rot[1] = s->rot[2] = s->rot[3] = 0;
    s->opacity[0] = op;
    for (int c = 0; c < 3; c++) s->sh[c] = (col[c] - 0.5f) / GT_GS_SH_C0;
}

static void identity_camera(gt_gs_camera *c, int w, int h, float f)
{
    double pos[3] = {0, 0, 0};
    gt_gs_camera_from_c2w(c, w, h, f, f, pos, IDENT);
}

/* one isotropic Gaussian facing the camera: pinhole pixel, centre colour
 * o*c + (1-o)*bg, radius ceil(3 sqrt(lambda_max)) of J S J^T + 0.3 I, and
 * the footprint at a neighbour pixel */
static void test_single_gaussian(void **state)
{
    (void)state;
    const int W = 65, H = 49;
    const float f = 60.0f;
    const float P[3] = {0.2f, -0.2f, 4.0f}, col[3] = {0.9f, 0.3f, 0.6f};
    const float s0 = 0.05f, o = 0.8f;
    gt_gs_scene s;
    one_gaussian(&s, P, s0, o, col);
    gt_gs_camera cam;
    identity_camera(&cam, W, H, f);
    gt_gs_params prm;
    gt_gs_params_init(&prm);
    prm.bg[0] = 0.1f, prm.bg[1] = 0.2f, prm.bg[2] = 0.7f;
    gt_gs_image im;
    GT_ASSERT_OK(gt_gs_image_alloc(&im, W, H));
    GT_ASSERT_OK(gt_gs_render_cpu(&s, &cam, &prm, &im));
    /* pinhole: u = f x/z + (W-1)/2 = 3 + 32, v = f y/z + (H-1)/2 = -3 + 24 */
    int u = 35, v = 21;
    size_t pc = (size_t)v * W + u;
    for (int c = 0; c < 3; c++) assert_float_equal(im.rgb[3 * pc + c], o * col[c] + (1 - o) * prm.bg[c], 1e-5);
    assert_float_equal(im.alpha[pc], o, 1e-6);
    assert_float_equal(im.depth[pc], o * P[2], 1e-5);
    /* centre is the maximum of alpha */
    for (size_t i = 0; i < (size_t)W * H; i++) assert_true(im.alpha[i] <= im.alpha[pc] + 1e-7);
    /* 2-D covariance in double: J = [[f/z,0,-f x/z^2],[0,f/z,-f y/z^2]], S = s0^2 I */
    double z = P[2], j00 = f / z, j02 = -f * P[0] / (z * z), j11 = f / z, j12 = -f * P[1] / (z * z);
    double a = s0 * s0 * (j00 * j00 + j02 * j02) + 0.3, b = s0 * s0 * (j02 * j12),
           cc = s0 * s0 * (j11 * j11 + j12 * j12) + 0.3;
    double mid = 0.5 * (a + cc), det = a * cc - b * b;
    double lmax = mid + sqrt(fmax(0.1, mid * mid - det));
    gt_gs_proj pr;
    gt_gs_preprocess_one(&s, 0, &cam, &prm, 0, &pr);
    assert_int_equal(pr.radius, (int)ceil(3.0 * sqrt(lmax)));
    assert_float_equal(pr.x, 35.0f, 1e-4);
    assert_float_equal(pr.y, 21.0f, 1e-4);
    /* footprint two pixels to the right: alpha = o exp(-0.5 d^T cov^-1 d), d = (2, 0) */
    double ex = o * exp(-0.5 * 4.0 * cc / det);
    assert_float_equal(im.alpha[pc + 2], ex, 1e-5);
    /* far away from the footprint: pure background */
    for (int c = 0; c < 3; c++) assert_float_equal(im.rgb[c], prm.bg[c], 0);
    gt_gs_image_free(&im);
    gt_gs_scene_free(&s);
}

/* behind the camera or before the near plane: nothing; empty scene: background */
static void test_culled_and_empty(void **state)
{
    (void)state;
    const float col[3] = {1, 1, 1};
    const float zs[3] = {-3.0f, 0.15f, 0.2f};
    gt_gs_camera cam;
    identity_camera(&cam, 40, 30, 30);
    gt_gs_params prm;
    gt_gs_params_init(&prm);
    prm.bg[0] = 0.25f, prm.bg[1] = 0.5f, prm.bg[2] = 0.75f;
    gt_gs_image im;
    GT_ASSERT_OK(gt_gs_image_alloc(&im, 40, 30));
    for (int k = 0; k <= 3; k++) {
        gt_gs_scene s;
        if (k < 3) {
            float P[3] = {0, 0, zs[k]};
            one_gaussian(&s, P, 0.5f, 0.99f, col); /* large: would cover the image */
        } else {
            GT_ASSERT_OK(gt_gs_scene_alloc(&s, 0, 0));
        }
        GT_ASSERT_OK(gt_gs_render_cpu(&s, &cam, &prm, &im));
        for (size_t i = 0; i < 40 * 30; i++) {
            for (int c = 0; c < 3; c++) assert_true(im.rgb[3 * i + c] == prm.bg[c]);
            assert_true(im.alpha[i] == 0.0f);
        }
        gt_gs_scene_free(&s);
    }
    /* just past the near plane it does draw */
    gt_gs_scene s;
    float P[3] = {0, 0, 0.25f};
    one_gaussian(&s, P, 0.01f, 0.9f, col);
    GT_ASSERT_OK(gt_gs_render_cpu(&s, &cam, &prm, &im));
    assert_true(im.alpha[15 * 40 + 20] > 0.5f);
    gt_gs_scene_free(&s);
    gt_gs_image_free(&im);
}

/* shuffling the Gaussians does not change the image */
static void test_order_independent(void **state)
{
    (void)state;
    gt_gs_scene s, t;
    GT_ASSERT_OK(gs_random_scene(&s, 400, 3, 0.01, 0.2, 11));
    GT_ASSERT_OK(gt_gs_scene_alloc(&t, s.n, 3));
    size_t *perm = malloc(s.n * sizeof *perm);
    for (size_t i = 0; i < s.n; i++) perm[i] = i;
    gt_rng r = {5};
    for (size_t i = s.n - 1; i > 0; i--) {
        size_t j = gt_rng_u64(&r) % (i + 1), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (size_t i = 0; i < s.n; i++) {
        size_t j = perm[i];
        memcpy(t.pos + 3 * i, s.pos + 3 * j, 3 * sizeof(float));
        memcpy(t.scale + 3 * i, s.scale + 3 * j, 3 * sizeof(float));
        memcpy(t.rot + 4 * i, s.rot + 4 * j, 4 * sizeof(float));
        t.opacity[i] = s.opacity[j];
        memcpy(t.sh + i * 48, s.sh + j * 48, 48 * sizeof(float));
    }
    gt_gs_camera cam;
    GT_ASSERT_OK(gs_random_camera(&cam, 3.0, 70, 50, 3));
    gt_gs_params prm;
    gt_gs_params_init(&prm);
    gt_gs_image a, b;
    GT_ASSERT_OK(gt_gs_image_alloc(&a, 70, 50));
    GT_ASSERT_OK(gt_gs_image_alloc(&b, 70, 50));
    GT_ASSERT_OK(gt_gs_render_cpu(&s, &cam, &prm, &a));
    GT_ASSERT_OK(gt_gs_render_cpu(&t, &cam, &prm, &b));
    double cover = 0;
    for (size_t i = 0; i < 70 * 50; i++) {
        for (int c = 0; c < 3; c++) assert_float_equal(a.rgb[3 * i + c], b.rgb[3 * i + c], 1e-6);
        cover += a.alpha[i];
    }
    assert_true(cover > 0.2 * 70 * 50); /* the scene is actually in view */
    free(perm);
    gt_gs_image_free(&a);
    gt_gs_image_free(&b);
    gt_gs_scene_free(&s);
    gt_gs_scene_free(&t);
}

/* real SH with the Condon-Shortley phase, from associated Legendre
 * functions: an evaluation independent of the reference's polynomials */
static double legendre(int l, int m, double x)
{
    double pmm = 1.0, somx2 = sqrt((1 - x) * (1 + x)), fact = 1.0;
    for (int i = 1; i <= m; i++) {
        pmm *= -fact * somx2;
        fact += 2.0;
    }
    if (l == m) return pmm;
    double pmmp1 = x * (2 * m + 1) * pmm;
    if (l == m + 1) return pmmp1;
    double pll = 0;
    for (int ll = m + 2; ll <= l; ll++) {
        pll = ((2 * ll - 1) * x * pmmp1 - (ll + m - 1) * pmm) / (ll - m);
        pmm = pmmp1;
        pmmp1 = pll;
    }
    return pll;
}

static double fact(int n)
{
    double r = 1;
    for (int i = 2; i <= n; i++) r *= i;
    return r;
}

static double real_sh(int l, int m, const double d[3])
{
    double theta = acos(fmax(-1.0, fmin(1.0, d[2]))), phi = atan2(d[1], d[0]);
    int am = abs(m);
    double K = sqrt((2 * l + 1) / (4 * M_PI) * fact(l - am) / fact(l + am));
    double P = legendre(l, am, cos(theta));
    if (m == 0) return K * P;
    if (m > 0) return sqrt(2.0) * K * cos(m * phi) * P;
    return sqrt(2.0) * K * sin(am * phi) * P;
}

static void test_sh_against_direct(void **state)
{
    (void)state;
    gt_rng r = {77};
    for (int deg = 0; deg <= 3; deg++)
        for (int trial = 0; trial < 200; trial++) {
            float sh[48];
            for (int k = 0; k < 48; k++) sh[k] = (float)gt_rng_range(&r, -1, 1);
            for (int c = 0; c < 3; c++) sh[c] = 6.0f; /* keep the result above the clamp */
            double d[3], l = 0;
            for (int k = 0; k < 3; k++) {
                d[k] = gs_gauss(&r);
                l += d[k] * d[k];
            }
            l = sqrt(l);
            float df[3];
            for (int k = 0; k < 3; k++) df[k] = (float)(d[k] /= l);
            float got[3];
            gt_gs_sh_eval(deg, sh, df, got);
            for (int c = 0; c < 3; c++) {
                double want = 0.5;
                int k = 0;
                for (int ll = 0; ll <= deg; ll++)
                    for (int m = -ll; m <= ll; m++, k++) want += sh[3 * k + c] * real_sh(ll, m, d);
                assert_true(want > 0);
                /* float evaluation of <= 16 terms of size <= 6: 1e-5 */
                assert_float_equal(got[c], want, 1e-5);
            }
        }
    /* the clamp at 0 */
    float sh[3] = {-5, -5, -5}, d[3] = {0, 0, 1}, got[3];
    gt_gs_sh_eval(0, sh, d, got);
    for (int c = 0; c < 3; c++) assert_true(got[c] == 0.0f);
}

static void argmax_alpha(const gt_gs_image *im, int *u, int *v)
{
    size_t best = 0;
    for (size_t i = 1; i < (size_t)im->w * im->h; i++)
        if (im->alpha[i] > im->alpha[best]) best = i;
    *u = (int)(best % im->w);
    *v = (int)(best / im->w);
}

/* Gaussians on the corners of the cube [-1,1]^3, each rendered alone, seen
 * from a look-at camera and from a cameras.json camera: each lands where the
 * camera geometry says. */
static void test_camera_conventions(void **state)
{
    (void)state;
    const int W = 101, H = 81;
    const float col[3] = {1, 1, 1};
    gt_gs_params prm;
    gt_gs_params_init(&prm);
    gt_gs_image im;
    GT_ASSERT_OK(gt_gs_image_alloc(&im, W, H));
    /* look-at from (0,0,-5) toward the origin, y up, fovy 60: camera right
     * is world -x, image down is world -y, forward is +z. */
    gt_gs_camera la;
    double eye[3] = {0, 0, -5}, tgt[3] = {0, 0, 0}, up[3] = {0, 1, 0};
    GT_ASSERT_OK(gt_gs_camera_lookat(&la, eye, tgt, up, 60.0, W, H));
    double fl = H / (2.0 * tan(M_PI / 6));
    assert_float_equal(la.fy, fl, 1e-3);
    /* cameras.json: camera at (5,0,0) looking along -x, image down = world
     * -y, so image right = world -z; c2w rotation columns are those axes */
    const char *json = "[{\"id\": 0, \"img_name\": \"side\", \"width\": 101, \"height\": 81,"
                       " \"position\": [5.0, 0.0, 0.0],"
                       " \"rotation\": [[0, 0, -1], [0, -1, 0], [-1, 0, 0]],"
                       " \"fy\": 70.0, \"fx\": 70.0}]";
    gt_gs_camera *jc;
    int nc;
    GT_ASSERT_OK(gt_gs_cameras_parse(json, strlen(json), "cams.json", &jc, &nc));
    assert_int_equal(nc, 1);
    assert_string_equal(jc[0].name, "side");
    for (int corner = 0; corner < 8; corner++) {
        float P[3] = {corner & 1 ? 1.f : -1.f, corner & 2 ? 1.f : -1.f, corner & 4 ? 1.f : -1.f};
        gt_gs_scene s;
        one_gaussian(&s, P, 0.02f, 0.9f, col);
        int u, v;
        GT_ASSERT_OK(gt_gs_render_cpu(&s, &la, &prm, &im));
        argmax_alpha(&im, &u, &v);
        /* view coords: x = -X, y = -Y, z = Z + 5 */
        double eu = fl * (-P[0]) / (P[2] + 5) + (W - 1) / 2.0, ev = fl * (-P[1]) / (P[2] + 5) + (H - 1) / 2.0;
        assert_true(fabs(u - eu) <= 1.0 && fabs(v - ev) <= 1.0);
        GT_ASSERT_OK(gt_gs_render_cpu(&s, &jc[0], &prm, &im));
        argmax_alpha(&im, &u, &v);
        /* view coords: x = -Z, y = -Y, z = 5 - X */
        eu = 70.0 * (-P[2]) / (5 - P[0]) + (W - 1) / 2.0;
        ev = 70.0 * (-P[1]) / (5 - P[0]) + (H - 1) / 2.0;
        assert_true(fabs(u - eu) <= 1.0 && fabs(v - ev) <= 1.0);
        gt_gs_scene_free(&s);
    }
    free(jc);
    gt_gs_image_free(&im);
}

/* A principal point moved by one tile (16 pixels) right and down moves
 * the image with it: the shifted render at (x + 16, y + 16) is the
 * centred one at (x, y). Small Gaussians, so that none reaches the
 * compared pixels from beyond the EWA clamp, which moves with the view. */
static void test_principal_point_shift(void **state)
{
    (void)state;
    const int W = 96, H = 80, S = GT_GS_TILE;
    gt_gs_scene s;
    GT_ASSERT_OK(gs_random_scene(&s, 4000, 2, 0.01, 0.05, 41));
    gt_gs_camera a;
    double eye[3] = {0.2, -0.3, -3.5}, tgt[3] = {0, 0, 0}, up[3] = {0, 1, 0};
    GT_ASSERT_OK(gt_gs_camera_lookat(&a, eye, tgt, up, 55.0, W, H));
    assert_float_equal(a.cx, W / 2.0, 0);
    assert_float_equal(a.cy, H / 2.0, 0);
    gt_gs_camera b = a;
    b.cx += (float)S, b.cy += (float)S;
    gt_gs_params prm;
    gt_gs_params_init(&prm);
    gt_gs_image ia, ib;
    GT_ASSERT_OK(gt_gs_image_alloc(&ia, W, H));
    GT_ASSERT_OK(gt_gs_image_alloc(&ib, W, H));
    GT_ASSERT_OK(gt_gs_render_cpu(&s, &a, &prm, &ia));
    GT_ASSERT_OK(gt_gs_render_cpu(&s, &b, &prm, &ib));
    double worst = 0, cover = 0, moved = 0;
    for (int y = 0; y + S < H; y++)
        for (int x = 0; x + S < W; x++) {
            size_t i = (size_t)y * W + x, j = (size_t)(y + S) * W + x + S;
            for (int c = 0; c < 3; c++) {
                worst = fmax(worst, fabs(ia.rgb[3 * i + c] - ib.rgb[3 * j + c]));
                moved = fmax(moved, fabs(ia.rgb[3 * i + c] - ib.rgb[3 * i + c]));
            }
            cover += ia.alpha[i];
        }
    print_message("shifted principal point: max difference %.3g (unshifted pixels differ by up to %.3g), cover %.2f\n", worst,
                  moved, cover / ((W - S) * (H - S)));
    assert_true(cover > 0.2 * (W - S) * (H - S)); /* the scene fills the view */
    assert_true(moved > 0.05);                    /* the image did move */
    assert_true(worst < 1e-4);
    gt_gs_image_free(&ia);
    gt_gs_image_free(&ib);
    gt_gs_scene_free(&s);
}

/* The orbit of a ring of cameras looking at a point: that point, the
 * ring's radius, its elevation and the cameras' field of view come back;
 * cameras all looking the same way have no such point. */
static void test_cameras_orbit(void **state)
{
    (void)state;
    const double centre[3] = {0.4, -1.2, 2.0}, up[3] = {0, 1, 0};
    gt_gs_camera cam[12];
    for (int i = 0; i < 12; i++) /* radius 3.5, 25 degrees up, fovy 40 */
        GT_ASSERT_OK(gt_gs_camera_orbit(&cam[i], centre, up, 3.5, 25.0, i, 12, 40.0, 64, 48));
    cam[5].campos[0] += 0.01f; /* not exactly a ring */
    double c[3], r, el, fovy;
    assert_true(gt_gs_cameras_orbit(cam, 12, up, c, &r, &el, &fovy));
    for (int k = 0; k < 3; k++) assert_float_equal(c[k], centre[k], 2e-3);
    assert_float_equal(r, 3.5, 2e-3);
    assert_float_equal(el, 25.0, 0.05);
    assert_float_equal(fovy, 40.0, 1e-3);
    /* a forward-facing capture: every camera looks along +z */
    for (int i = 0; i < 12; i++) {
        double eye[3] = {0.1 * i, 0.05 * (i % 3), 0}, tgt[3] = {0.1 * i, 0.05 * (i % 3), 5};
        GT_ASSERT_OK(gt_gs_camera_lookat(&cam[i], eye, tgt, up, 50, 64, 48));
    }
    assert_false(gt_gs_cameras_orbit(cam, 12, up, c, &r, &el, &fovy));
}

/* --antialias: the centre alpha is o * sqrt(det(cov)/det(cov + 0.3 I)) */
static void test_antialias_compensation(void **state)
{
    (void)state;
    const float P[3] = {0, 0, 5}, col[3] = {1, 1, 1};
    const float s0 = 0.02f, o = 0.9f, f = 50;
    gt_gs_scene s;
    one_gaussian(&s, P, s0, o, col);
    gt_gs_camera cam;
    identity_camera(&cam, 21, 21, f);
    gt_gs_params prm;
    gt_gs_params_init(&prm);
    prm.antialias = true;
    gt_gs_image im;
    GT_ASSERT_OK(gt_gs_image_alloc(&im, 21, 21));
    GT_ASSERT_OK(gt_gs_render_cpu(&s, &cam, &prm, &im));
    double k = (f * s0 / P[2]) * (f * s0 / P[2]); /* on-axis: cov = k I */
    double want = o * sqrt(k * k / ((k + 0.3) * (k + 0.3)));
    assert_float_equal(im.alpha[10 * 21 + 10], want, 1e-5);
    prm.antialias = false;
    GT_ASSERT_OK(gt_gs_render_cpu(&s, &cam, &prm, &im));
    assert_float_equal(im.alpha[10 * 21 + 10], o, 1e-6);
    gt_gs_image_free(&im);
    gt_gs_scene_free(&s);
}

static void test_cameras_json_errors(void **state)
{
    (void)state;
    gt_gs_camera *c;
    int n;
    const char *bad[] = {
        "{\"not\": \"an array\"}",
        "[{\"width\": 10, \"height\": 10, \"position\": [0,0,0], \"fx\": 1, \"fy\": 1}]",
        "[{\"width\": 10, \"height\": 10, \"position\": [0,0], \"rotation\": [[1,0,0],[0,1,0],[0,0,1]], \"fx\": 1, \"fy\": 1}]",
        "[{\"width\": 0, \"height\": 10, \"position\": [0,0,0], \"rotation\": [[1,0,0],[0,1,0],[0,0,1]], \"fx\": 1, \"fy\": 1}]",
        "[{\"width\": 10, \"height\": 10, \"position\": [0,0,0], \"rotation\": [[1,0,0],[0,1,0],[0,0,1]], \"fx\": 1, \"fy\": 1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(gt_gs_cameras_parse(bad[i], strlen(bad[i]), "c.json", &c, &n), GT_ERR_DATA);
        assert_non_null(strstr(gt_errmsg(), "c.json"));
    }
    assert_int_equal(gt_gs_cameras_parse(bad[1], strlen(bad[1]), "c.json", &c, &n), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "rotation"));
    /* extra keys of any type are skipped; several entries */
    const char *ok = "[{\"id\": 0, \"extra\": {\"a\": [1, true, null]}, \"width\": 4, \"height\": 3,"
                     " \"position\": [1,2,3], \"rotation\": [[1,0,0],[0,1,0],[0,0,1]], \"fx\": 2, \"fy\": 2},\n"
                     " {\"id\": 1, \"img_name\": \"b\", \"width\": 5, \"height\": 6, \"position\": [0,0,0],"
                     " \"rotation\": [[1,0,0],[0,1,0],[0,0,1]], \"fx\": 2e1, \"fy\": 2.5E1}]";
    GT_ASSERT_OK(gt_gs_cameras_parse(ok, strlen(ok), "c.json", &c, &n));
    assert_int_equal(n, 2);
    assert_int_equal(c[1].width, 5);
    assert_float_equal(c[1].fy, 25.0f, 0);
    assert_float_equal(c[0].t[2], -3.0f, 0);
    free(c);
    /* look-at errors */
    gt_gs_camera cam;
    double e[3] = {1, 2, 3}, up[3] = {0, 1, 0}, upx[3] = {0, 0, 1};
    assert_int_equal(gt_gs_camera_lookat(&cam, e, e, up, 50, 10, 10), GT_ERR_USAGE);
    double t[3] = {1, 2, 5};
    assert_int_equal(gt_gs_camera_lookat(&cam, e, t, upx, 50, 10, 10), GT_ERR_USAGE);
    assert_int_equal(gt_gs_camera_lookat(&cam, e, t, up, 50, 0, 10), GT_ERR_USAGE);
    assert_int_equal(gt_gs_camera_lookat(&cam, e, t, up, 50, 10, 16385), GT_ERR_USAGE);
}

/* orbit cameras all look at the centre from the requested radius */
static void test_orbit(void **state)
{
    (void)state;
    double c[3] = {1, 2, 3}, up[3] = {0, 0, 2};
    for (int i = 0; i < 12; i++) {
        gt_gs_camera cam;
        GT_ASSERT_OK(gt_gs_camera_orbit(&cam, c, up, 4.0, 30.0, i, 12, 50, 32, 24));
        double d[3], l = 0;
        for (int k = 0; k < 3; k++) {
            d[k] = cam.campos[k] - c[k];
            l += d[k] * d[k];
        }
        assert_float_equal(sqrt(l), 4.0, 1e-5);
        assert_float_equal(d[2] / 4.0, sin(M_PI / 6), 1e-5); /* elevation above the up plane */
        /* the centre is straight ahead: view x, y = 0 */
        double vx = cam.R[0] * c[0] + cam.R[1] * c[1] + cam.R[2] * c[2] + cam.t[0];
        double vy = cam.R[3] * c[0] + cam.R[4] * c[1] + cam.R[5] * c[2] + cam.t[1];
        double vz = cam.R[6] * c[0] + cam.R[7] * c[1] + cam.R[8] * c[2] + cam.t[2];
        assert_float_equal(vx, 0, 1e-5);
        assert_float_equal(vy, 0, 1e-5);
        assert_float_equal(vz, 4.0, 1e-5);
    }
}

/* .splat: 32-byte records decode to position, scale, colour, opacity and a
 * unit quaternion; a size that is not a multiple of 32 is an error */
static void test_splat_reader(void **state)
{
    (void)state;
    char path[] = "/tmp/gs_test_XXXXXX.splat";
    int fd = mkstemps(path, 6);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    float v[6] = {1.5f, -2.0f, 3.25f, 0.1f, 0.2f, 0.3f};
    unsigned char rgba[4] = {255, 128, 0, 204}, rot[4] = {128 + 64, 128, 128, 128 + 64};
    for (int k = 0; k < 2; k++) {
        fwrite(v, sizeof v, 1, f);
        fwrite(rgba, 4, 1, f);
        fwrite(rot, 4, 1, f);
    }
    fclose(f);
    gt_gs_scene s;
    GT_ASSERT_OK(gt_gs_scene_read_splat(path, &s));
    assert_int_equal(s.n, 2);
    assert_int_equal(s.sh_degree, 0);
    for (int k = 0; k < 3; k++) {
        assert_float_equal(s.pos[3 + k], v[k], 0);
        assert_float_equal(s.scale[3 + k], v[3 + k], 0);
    }
    assert_float_equal(s.opacity[1], 0.8f, 1e-6);
    /* colour through the degree-0 SH: C0 * dc + 0.5 = byte / 255 */
    for (int c = 0; c < 3; c++) assert_float_equal(GT_GS_SH_C0 * s.sh[3 + c] + 0.5f, rgba[c] / 255.0f, 1e-6);
    assert_float_equal(s.rot[4], sqrtf(0.5f), 1e-6);
    assert_float_equal(s.rot[7], sqrtf(0.5f), 1e-6);
    gt_gs_scene_free(&s);
    f = fopen(path, "ab");
    fputc(0, f);
    fclose(f);
    assert_int_equal(gt_gs_scene_read_splat(path, &s), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "multiple of 32"));
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_gaussian),      cmocka_unit_test(test_culled_and_empty),
        cmocka_unit_test(test_order_independent),    cmocka_unit_test(test_sh_against_direct),
        cmocka_unit_test(test_camera_conventions),   cmocka_unit_test(test_antialias_compensation),
        cmocka_unit_test(test_cameras_json_errors),  cmocka_unit_test(test_orbit),
        cmocka_unit_test(test_splat_reader),         cmocka_unit_test(test_principal_point_shift), cmocka_unit_test(test_cameras_orbit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
