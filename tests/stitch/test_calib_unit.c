/* Calibration stages (CPU reference), each against what it must compute:
 * the rig file's chroma gains (round trip, errors, their effect on the
 * plan), FAST/Harris/orientation on constructed images, detection that is
 * deterministic and survives a 90-degree turn, Hamming matching, the DLT,
 * seeded RANSAC with outliers, Levenberg-Marquardt, the chain and the
 * panorama frame (and its refusals), the plane's polish and its bound on
 * the features' error, gains from overlaps, the streaming
 * update, and the dense refinement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calib_views.h"

/* ------------------------------------------------------------ rig */

static void test_rig_gains_roundtrip(void **state)
{
    (void)state;
    gt_stitch_rig rig;
    memset(&rig, 0, sizeof rig);
    rig.pano_w = 640, rig.pano_h = 480, rig.ncam = 2;
    gt_rng r = {3};
    for (int i = 0; i < 2; i++) {
        double H[9] = {1 + gt_rng_range(&r, -0.1, 0.1), gt_rng_range(&r, -0.1, 0.1), gt_rng_range(&r, 0, 300),
                       gt_rng_range(&r, -0.1, 0.1), 1 + gt_rng_range(&r, -0.1, 0.1), gt_rng_range(&r, -50, 50),
                       gt_rng_range(&r, -1e-4, 1e-4), gt_rng_range(&r, -1e-4, 1e-4), 1};
        memcpy(rig.cam[i].H, H, sizeof H);
        rig.cam[i].gain = (float)gt_rng_range(&r, 0.5, 2);
        rig.cam[i].gain_u = (float)gt_rng_range(&r, 0.5, 2);
        rig.cam[i].gain_v = (float)gt_rng_range(&r, 0.5, 2);
    }
    char path[] = "/tmp/gt_rig_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    GT_ASSERT_OK(gt_stitch_rig_write(f, &rig));
    fclose(f);
    gt_stitch_rig back;
    GT_ASSERT_OK(gt_stitch_rig_load(path, &back));
    unlink(path);
    assert_int_equal(back.ncam, 2);
    assert_int_equal(back.pano_w, 640);
    for (int i = 0; i < 2; i++) {
        assert_memory_equal(back.cam[i].H, rig.cam[i].H, sizeof rig.cam[i].H); /* %.17g round-trips */
        assert_true(back.cam[i].gain == rig.cam[i].gain);
        assert_true(back.cam[i].gain_u == rig.cam[i].gain_u);
        assert_true(back.cam[i].gain_v == rig.cam[i].gain_v);
    }
    gt_stitch_rig_free(&back);
    /* errors name the keyword and the line */
    const char *bad[][2] = {{"panorama 10 10\ncamera\nH 1 0 0 0 1 0 0 0 1\ngain_u 0\n", "gain_u 0 out of range (0, 100] (t:4)"},
                            {"panorama 10 10\ngain_v 2\n", "'gain_v' before the first 'camera' (t:2)"},
                            {"panorama 10 10\ncamera\nH 1 0 0 0 1 0 0 0 1\ngain_v\n", "unexpected end of file, expected gain_v (t:4)"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        FILE *m = fmemopen((void *)bad[k][0], strlen(bad[k][0]), "r");
        gt_stitch_rig x;
        assert_int_equal(gt_stitch_rig_parse(m, "t", &x), GT_ERR_DATA);
        fclose(m);
        if (!strstr(gt_errmsg(), bad[k][1])) fail_msg("message '%s' lacks '%s'", gt_errmsg(), bad[k][1]);
    }
}

/* Y' = g Y, U' = 128 + gu (U - 128), V likewise, exactly */
static void test_plan_chroma_gains(void **state)
{
    (void)state;
    gt_stitch_rig rig;
    memset(&rig, 0, sizeof rig);
    rig.pano_w = rig.pano_h = 8, rig.ncam = 1;
    const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(rig.cam[0].H, I, sizeof I);
    memcpy(rig.cam[0].Hinv, I, sizeof I);
    rig.cam[0].gain = 1.5f, rig.cam[0].gain_u = 2.0f, rig.cam[0].gain_v = 0.5f;
    uint8_t in[3 * 64], out[3 * 64];
    memset(in, 100, 64), memset(in + 64, 90, 64), memset(in + 128, 170, 64);
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    o.blend = GT_BLEND_NONE;
    gt_stitch_plan plan;
    GT_ASSERT_OK(gt_stitch_plan_build(&rig, 8, 8, GT_PIX_YUV444P, &o, &plan));
    const uint8_t *ins[1] = {in};
    GT_ASSERT_OK(gt_stitch_frame_cpu(&plan, ins, out));
    assert_int_equal(out[27], 150);
    assert_int_equal(out[64 + 27], 52);
    assert_int_equal(out[128 + 27], 149);
    /* and gt_stitch_plan_set_gains changes them */
    float g[3][GT_STITCH_MAX_CAMS] = {{1}, {1}, {1}};
    gt_stitch_plan_set_gains(&plan, g);
    GT_ASSERT_OK(gt_stitch_frame_cpu(&plan, ins, out));
    assert_int_equal(out[27], 100);
    assert_int_equal(out[64 + 27], 90);
    assert_int_equal(out[128 + 27], 170);
    gt_stitch_plan_free(&plan);
}

/* ------------------------------------------------------------ detection */

static void test_fast_harris(void **state)
{
    (void)state;
    enum { W = 64 };
    uint8_t img[W * W];
    for (int y = 0; y < W; y++)
        for (int x = 0; x < W; x++) img[y * W + x] = x >= 32 && y >= 32 ? 200 : 40;
    assert_true(gt_cm_fast9(img, W, 32, 32, 20));  /* the square's corner */
    assert_false(gt_cm_fast9(img, W, 16, 16, 20)); /* flat */
    assert_false(gt_cm_fast9(img, W, 32, 48, 20)); /* a straight edge: 7 of 16 brighter at most */
    assert_true(gt_cm_harris(img, W, 32, 32) > 0);
    assert_true(gt_cm_harris(img, W, 32, 48) < 0); /* edges respond negatively */
    assert_int_equal(gt_cm_harris(img, W, 16, 16), 0);
    /* sub-pixel: the vertex of a parabola */
    assert_true(fabs(gt_cm_subpixel(9, 10, 5) + 1.0 / 3.0) < 1e-15); /* towards the larger side */
    assert_true(gt_cm_subpixel(10, 10, 10) == 0.0);
}

/* a ramp rising towards angle a has its centroid, and so its bin, at a */
static void test_orientation(void **state)
{
    (void)state;
    const gt_calib_tables *T = gt_calib_tables_get();
    enum { W = 41 };
    uint8_t img[W * W];
    for (int k = 0; k < GT_CM_ANGLES; k++) {
        double a = 2 * 3.14159265358979323846 * (k + 0.5) / GT_CM_ANGLES;
        for (int y = 0; y < W; y++)
            for (int x = 0; x < W; x++) img[y * W + x] = stitch_q(128 + 4 * ((x - 20) * cos(a) + (y - 20) * sin(a)));
        assert_int_equal(gt_cm_orientation(T, img, W, 20, 20), k);
    }
    /* the pattern stays in its disk */
    for (int k = 0; k < GT_CM_ANGLES; k++)
        for (int i = 0; i < GT_CM_PAIRS; i++)
            for (int q = 0; q < 2; q++) {
                int x = T->pat[k][i][2 * q], y = T->pat[k][i][2 * q + 1];
                assert_true(x * x + y * y <= (GT_CM_RADIUS + 1) * (GT_CM_RADIUS + 1));
            }
}

static uint8_t *ci_view(int cam, int w, int h)
{
    cv_spec s;
    cv_spec_ci(&s, w, h);
    s.n = cam + 1;
    photo_t ph;
    photo_load(s.photo, &ph);
    uint8_t *fr[CV_MAX];
    assert_int_equal(cv_render(&s, &ph, fr), 0);
    for (int i = 0; i < cam; i++) free(fr[i]);
    photo_free(&ph);
    return fr[cam];
}

static void test_detect_rotation(void **state)
{
    (void)state;
    enum { W = 256, H = 192 };
    uint8_t *v = ci_view(0, W, H), *rot = malloc(W * H);
    /* turned by 90 degrees: (x, y) -> (H - 1 - y, x) in an H x W image */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) rot[x * H + (H - 1 - y)] = v[y * W + x];
    gt_calib_detect_opts o;
    gt_calib_detect_opts_init(&o);
    gt_calib_feat a, a2, b;
    GT_ASSERT_OK(gt_calib_detect_cpu(v, W, H, W, &o, &a));
    GT_ASSERT_OK(gt_calib_detect_cpu(v, W, H, W, &o, &a2));
    assert_int_equal(a.n, a2.n); /* deterministic */
    assert_memory_equal(a.kp, a2.kp, sizeof *a.kp * a.n);
    assert_memory_equal(a.desc, a2.desc, (size_t)GT_CALIB_DESC * a.n);
    GT_ASSERT_OK(gt_calib_detect_cpu(rot, H, W, H, &o, &b));
    gt_calib_match *m;
    int n, good = 0;
    GT_ASSERT_OK(gt_calib_match_features(&a, &b, 0.8, &m, &n));
    for (int k = 0; k < n; k++) {
        const gt_calib_kp *p = &a.kp[m[k].a], *q = &b.kp[m[k].b];
        good += hypot(q->x - (H - 1 - p->y), q->y - p->x) < 1.5;
    }
    printf("%d and %d keypoints, %d matches, %d where the turn puts them\n", a.n, b.n, n, good);
    assert_true(n >= 100);
    assert_true(good >= 0.8 * n);
    free(m);
    gt_calib_feat_free(&a), gt_calib_feat_free(&a2), gt_calib_feat_free(&b);
    free(v), free(rot);
}

/* ------------------------------------------------------------ matching */

static void test_match_synthetic(void **state)
{
    (void)state;
    enum { N = 200, X = 50 };
    gt_calib_feat a = {N, calloc(N, sizeof(gt_calib_kp)), malloc(N * GT_CALIB_DESC)};
    gt_calib_feat b = {N + X, calloc(N + X, sizeof(gt_calib_kp)), malloc((N + X) * GT_CALIB_DESC)};
    gt_rng r = {5};
    int perm[N];
    for (int i = 0; i < N; i++) perm[i] = i;
    for (int i = N - 1; i > 0; i--) {
        int j = (int)(gt_rng_u64(&r) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (size_t k = 0; k < (size_t)(N + X) * GT_CALIB_DESC; k++) b.desc[k] = (uint8_t)(gt_rng_u64(&r) >> 56);
    for (int i = 0; i < N; i++) { /* a's i is b's perm[i] with up to 10 bits flipped */
        memcpy(a.desc + i * GT_CALIB_DESC, b.desc + perm[i] * GT_CALIB_DESC, GT_CALIB_DESC);
        int flips = (int)(gt_rng_u64(&r) % 11);
        for (int f = 0; f < flips; f++) {
            int bit = (int)(gt_rng_u64(&r) % 256);
            a.desc[i * GT_CALIB_DESC + bit / 8] ^= (uint8_t)(1 << (bit % 8));
        }
    }
    gt_calib_match *m;
    int n;
    GT_ASSERT_OK(gt_calib_match_features(&a, &b, 0.8, &m, &n));
    assert_int_equal(n, N);
    for (int k = 0; k < n; k++) assert_int_equal(m[k].b, perm[m[k].a]);
    free(m);
    /* an ambiguous pair (two equal candidates) fails the ratio test */
    memcpy(b.desc + (N + 1) * GT_CALIB_DESC, b.desc + perm[0] * GT_CALIB_DESC, GT_CALIB_DESC);
    GT_ASSERT_OK(gt_calib_match_features(&a, &b, 0.8, &m, &n));
    assert_int_equal(n, N - 1);
    for (int k = 0; k < n; k++) assert_true(m[k].a != 0);
    free(m);
    gt_calib_feat_free(&a), gt_calib_feat_free(&b);
}

/* ------------------------------------------------------------ homographies */

static void apply_h(const double H[9], const double *a, double *b)
{
    double w = H[6] * a[0] + H[7] * a[1] + H[8];
    b[0] = (H[0] * a[0] + H[1] * a[1] + H[2]) / w;
    b[1] = (H[3] * a[0] + H[4] * a[1] + H[5]) / w;
}

static const double HT[9] = {0.92, 0.21, 37.5, -0.18, 1.05, -12.25, 2.1e-4, -1.3e-4, 1};

static double max_err(const double H[9], int n, const double *a)
{
    double e = 0;
    for (int i = 0; i < n; i++) {
        double t[2];
        apply_h(HT, a + 2 * i, t);
        e = fmax(e, gt_calib_transfer(H, a + 2 * i, t));
    }
    return e;
}

static void test_dlt_ransac_lm(void **state)
{
    (void)state;
    enum { N = 300 };
    double a[2 * N], b[2 * N], bn[2 * N];
    gt_rng r = {9};
    unsigned char truth[N], in[N];
    for (int i = 0; i < N; i++) {
        a[2 * i] = gt_rng_range(&r, 0, 640), a[2 * i + 1] = gt_rng_range(&r, 0, 480);
        apply_h(HT, a + 2 * i, b + 2 * i);
        truth[i] = i % 10 >= 4; /* 40 % outliers */
        if (truth[i]) {
            bn[2 * i] = b[2 * i] + 0.5 * cv_gauss(&r), bn[2 * i + 1] = b[2 * i + 1] + 0.5 * cv_gauss(&r);
        } else {
            bn[2 * i] = gt_rng_range(&r, 0, 640), bn[2 * i + 1] = gt_rng_range(&r, 0, 480);
        }
    }
    double H[9], H2[9];
    GT_ASSERT_OK(gt_calib_dlt(a, b, N, H)); /* exact data: exact model */
    assert_true(max_err(H, N, a) < 1e-8);
    gt_calib_ransac_opts o;
    gt_calib_ransac_opts_init(&o);
    int k, k2;
    GT_ASSERT_OK(gt_calib_ransac(a, bn, N, &o, H, in, &k));
    GT_ASSERT_OK(gt_calib_ransac(a, bn, N, &o, H2, NULL, &k2));
    assert_memory_equal(H, H2, sizeof H); /* the same seed, the same model */
    assert_int_equal(k, k2);
    int tp = 0, fp = 0;
    for (int i = 0; i < N; i++) tp += in[i] && truth[i], fp += in[i] && !truth[i];
    printf("RANSAC: %d inliers (%d true of 180, %d outliers), model within %.3f px\n", k, tp, fp, max_err(H, N, a));
    assert_true(tp >= 175 && fp <= 2);
    assert_true(max_err(H, N, a) < 0.5);
    o.seed = 12345;
    GT_ASSERT_OK(gt_calib_ransac(a, bn, N, &o, H2, NULL, &k2));
    assert_true(max_err(H2, N, a) < 0.5);
    /* LM does not increase the symmetric transfer error of the DLT fit */
    double sa[2 * N], sb[2 * N];
    int m = 0;
    for (int i = 0; i < N; i++)
        if (truth[i]) memcpy(sa + 2 * m, a + 2 * i, 2 * sizeof(double)), memcpy(sb + 2 * m, bn + 2 * i, 2 * sizeof(double)), m++;
    double D[9], L[9];
    GT_ASSERT_OK(gt_calib_dlt(sa, sb, m, D));
    memcpy(L, D, sizeof D);
    gt_calib_refine_lm(sa, sb, m, 30, L);
    double cd = 0, cl = 0, Di[9], Li[9];
    gt_stitch_h_invert(D, Di), gt_stitch_h_invert(L, Li);
    for (int i = 0; i < m; i++) {
        double e1 = gt_calib_transfer(D, sa + 2 * i, sb + 2 * i), e2 = gt_calib_transfer(Di, sb + 2 * i, sa + 2 * i);
        double f1 = gt_calib_transfer(L, sa + 2 * i, sb + 2 * i), f2 = gt_calib_transfer(Li, sb + 2 * i, sa + 2 * i);
        cd += e1 * e1 + e2 * e2, cl += f1 * f1 + f2 * f2;
    }
    printf("symmetric transfer error: DLT %.4f, LM %.4f\n", cd, cl);
    assert_true(cl <= cd);
    /* too few, degenerate */
    assert_int_equal(gt_calib_ransac(a, b, 3, &o, H, NULL, &k), GT_ERR_DATA);
    double col[12] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}; /* collinear: every sample is degenerate */
    assert_int_equal(gt_calib_ransac(col, col, 6, &o, H, NULL, &k), GT_ERR_DATA);
}

/* ------------------------------------------------------------ chain and frame */

static void pair_from(gt_calib_pair *p, int i, int j, const double Hc[][9], int inliers)
{
    memset(p, 0, sizeof *p);
    p->i = i, p->j = j, p->inliers = inliers, p->matches = inliers + 5, p->used = true;
    double Hji[9];
    gt_stitch_h_invert(Hc[j], Hji);
    gt_stitch_h_mul(Hji, Hc[i], p->H);
}

static void test_chain_frame(void **state)
{
    (void)state;
    /* three cameras 320x240, camera 2 the reference */
    const double Hc[3][9] = {{0.95, 0.05, -250, -0.04, 1, 10, -1e-4, 0, 1}, {1, 0, 0, 0, 1, 0, 0, 0, 1},
                             {1.05, -0.05, 240, 0.03, 1, -8, 1.2e-4, 0, 1}};
    gt_calib_pair p[3];
    pair_from(&p[0], 0, 1, Hc, 80);
    pair_from(&p[1], 0, 2, Hc, 3);
    pair_from(&p[2], 1, 2, Hc, 60);
    gt_calib_chain_opts o;
    gt_calib_chain_opts_init(&o);
    double out[GT_STITCH_MAX_CAMS][9];
    GT_ASSERT_OK(gt_calib_chain(p, 3, 3, &o, out));
    assert_true(p[0].tree && p[2].tree && !p[1].tree && !p[1].used);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 9; k++) assert_true(fabs(out[i][k] / out[i][8] - Hc[i][k]) < 1e-9 * (1 + fabs(Hc[i][k])));
    int w[3] = {320, 320, 320}, h[3] = {240, 240, 240};
    gt_stitch_rig rig;
    memset(&rig, 0, sizeof rig);
    GT_ASSERT_OK(gt_calib_frame(out, 3, w, h, &o, &rig));
    assert_int_equal(rig.pano_w % 2, 0);
    assert_int_equal(rig.pano_h % 2, 0);
    assert_true(rig.cam[1].H[0] == 1 && rig.cam[1].H[1] == 0 && rig.cam[1].H[6] == 0); /* a translation */
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 4; c++) {
            double q[2] = {c & 1 ? 319 : 0, c & 2 ? 239 : 0}, u[2];
            apply_h(rig.cam[i].H, q, u);
            assert_true(u[0] >= -1e-9 && u[1] >= -1e-9 && u[0] <= rig.pano_w - 1 && u[1] <= rig.pano_h - 1);
        }
    /* a camera without a good pair is refused, naming it and its best pair */
    pair_from(&p[2], 1, 2, Hc, 12);
    assert_int_equal(gt_calib_chain(p, 3, 3, &o, out), GT_ERR_DATA);
    if (!strstr(gt_errmsg(), "camera 3 cannot be placed: its best pair 2-3 has 12 inliers of 17 matches"))
        fail_msg("message: %s", gt_errmsg());
    /* a view turned edge-on to the reference: degenerate */
    double Hd[2][9] = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {1, 0, 0, 0, 1, 0, -0.01, 0, 1}};
    assert_int_equal(gt_calib_frame(Hd, 2, w, h, &o, &rig), GT_ERR_DATA);
    if (!strstr(gt_errmsg(), "maps to infinity")) fail_msg("message: %s", gt_errmsg());
    double Hs[2][9] = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {1, 0, 0, 0, 1, 0, -0.0029, 0, 1}};
    assert_int_equal(gt_calib_frame(Hs, 2, w, h, &o, &rig), GT_ERR_DATA);
    if (!strstr(gt_errmsg(), "more than the cap")) fail_msg("message: %s", gt_errmsg());
}

/* ------------------------------------------------------------ the plane's polish */

/* pair i-j of the cameras Hc (camera -> plane, 320x240 views): nf feature inliers at random in the overlap, their
 * images through the truth plus Gaussian noise of sigma px; the overlap's points on a grid, their images through
 * the truth moved by the overlap's own "dense" error: a stretch of `bias` px across the view (what a dense
 * alignment shows where the scene is not one plane seen from one centre) */
static void polish_pair(gt_calib_pair *p, int i, int j, const double Hc[][9], int nf, double sigma, double bias,
                        gt_rng *r)
{
    pair_from(p, i, j, Hc, nf);
    p->fa = malloc(sizeof(double) * 2 * nf), p->fb = malloc(sizeof(double) * 2 * nf);
    p->pa = malloc(sizeof(double) * 2 * 576), p->pb = malloc(sizeof(double) * 2 * 576);
    for (int k = 0; k < nf;) {
        double a[2] = {gt_rng_range(r, 0, 319), gt_rng_range(r, 0, 239)}, b[2];
        apply_h(p->H, a, b);
        if (b[0] < 0 || b[1] < 0 || b[0] > 319 || b[1] > 239) continue;
        p->fa[2 * k] = a[0], p->fa[2 * k + 1] = a[1];
        p->fb[2 * k] = b[0] + sigma * cv_gauss(r), p->fb[2 * k + 1] = b[1] + sigma * cv_gauss(r);
        k++;
    }
    p->nf = nf;
    for (int gy = 0; gy < 24; gy++)
        for (int gx = 0; gx < 24; gx++) {
            double a[2] = {(gx + 0.5) * 319 / 24, (gy + 0.5) * 239 / 24}, b[2];
            apply_h(p->H, a, b);
            if (b[0] < 0 || b[1] < 0 || b[0] > 319 || b[1] > 239) continue;
            p->pa[2 * p->n] = a[0], p->pa[2 * p->n + 1] = a[1];
            p->pb[2 * p->n] = b[0] + bias * (b[0] / 319 - 0.5), p->pb[2 * p->n + 1] = b[1] + bias * (b[1] / 239 - 0.5);
            p->n++;
        }
}

/* The polish keeps the overlaps' points at full weight where they agree with the features, and where they do not
 * it lowers their weight until the features' RMS error is within the bound (GT_CALIB_POLISH_*): the largest weight
 * of the halving steps that is, or the least weight */
static void test_polish_bound(void **state)
{
    (void)state;
    const double Hc[3][9] = {{0.98, 0.03, -150, -0.02, 1, 6, -6e-5, 0, 1}, {1, 0, 0, 0, 1, 0, 0, 0, 1},
                             {1.02, -0.03, 140, 0.02, 1, -5, 7e-5, 0, 1}};
    const struct {
        double sigma, bias;
        bool within; /* the full weight within the bound */
    } cases[] = {{0.3, 0, true}, {0.3, 6, false}, {0.9, 4, false}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        gt_rng r = {11 + c};
        gt_calib_pair p[2];
        polish_pair(&p[0], 0, 1, Hc, 120, cases[c].sigma, cases[c].bias, &r);
        polish_pair(&p[1], 1, 2, Hc, 120, cases[c].sigma, cases[c].bias, &r);
        double H1[3][9], H[3][9], e1, e, ef, wgt;
        memcpy(H1, Hc, sizeof H1);
        GT_ASSERT_OK(gt_calib_refine_homographies_joint(p, 2, 3, 1, 1.0, 1.0, H1)); /* the full weight */
        GT_ASSERT_OK(gt_calib_feature_rms(p, 2, H1, false, &e1, NULL));
        memcpy(H, Hc, sizeof H);
        GT_ASSERT_OK(gt_calib_polish_homographies(p, 2, 3, 1, H, &wgt, &ef));
        GT_ASSERT_OK(gt_calib_feature_rms(p, 2, H, false, &e, NULL));
        double bound = isnan(ef) ? GT_CALIB_POLISH_MAX_RMS
                                 : fmax(GT_CALIB_POLISH_MAX_RMS, (1 + GT_CALIB_POLISH_BOUND_REL) * ef);
        printf("polish: noise %.1f px, the overlaps' error %.0f px: the full weight's features RMS %.3f px; weight "
               "%.4g, RMS %.3f px (the features alone %.3f px, bound %.3f px)\n",
               cases[c].sigma, cases[c].bias, e1, wgt, e, ef, bound);
        if (cases[c].within) { /* they agree: the overlaps' points as features, the features' error that of noise */
            assert_true(e1 <= GT_CALIB_POLISH_MAX_RMS);
            assert_true(wgt == 1.0 && isnan(ef));
            assert_true(fabs(e - e1) < 1e-6);
        } else { /* they disagree: without the bound the features would be off */
            assert_true(e1 > bound);
            assert_true(wgt < 1.0 && wgt >= GT_CALIB_POLISH_MIN_WEIGHT && !isnan(ef));
            assert_true(e <= bound || wgt == GT_CALIB_POLISH_MIN_WEIGHT);
            assert_true(e < e1);
            /* the largest of the halving steps: twice the weight is beyond the bound */
            double H2[3][9], e2;
            memcpy(H2, Hc, sizeof H2);
            GT_ASSERT_OK(gt_calib_refine_homographies_joint(p, 2, 3, 1, 2 * wgt, 1.0, H2));
            GT_ASSERT_OK(gt_calib_feature_rms(p, 2, H2, false, &e2, NULL));
            assert_true(e2 > bound);
        }
        for (int q = 0; q < 2; q++) free(p[q].fa), free(p[q].fb), free(p[q].pa), free(p[q].pb);
    }
}

/* ------------------------------------------------------------ gains */

static void test_gains(void **state)
{
    (void)state;
    /* two views of the photograph side by side, 100 px of overlap */
    photo_t ph;
    photo_load("scene_chelsea.jpg", &ph);
    enum { W = 200, H = 150 };
    gt_stitch_rig rig;
    memset(&rig, 0, sizeof rig);
    rig.pano_w = 300, rig.pano_h = H, rig.ncam = 2;
    const double e[2][3] = {{1.0, 1.0, 1.0}, {0.5, 1.2, 0.85}};
    uint8_t *fr[2];
    for (int i = 0; i < 2; i++) {
        double Hp[9] = {1, 0, 60 + 100.0 * i, 0, 1, 70, 0, 0, 1}, Hr[9] = {1, 0, 100.0 * i, 0, 1, 0, 0, 0, 1};
        memcpy(rig.cam[i].H, Hr, sizeof Hr);
        gt_stitch_h_invert(Hr, rig.cam[i].Hinv);
        fr[i] = malloc(3 * W * H);
        stitch_render_view_g(photo_sample, &ph, Hp, e[i], GT_PIX_YUV444P, W, H, fr[i]);
    }
    gt_stitch_gains *g;
    GT_ASSERT_OK(gt_stitch_gains_create(&rig, W, H, GT_PIX_YUV444P, 0, &g));
    float gains[3][GT_STITCH_MAX_CAMS];
    int pairs;
    GT_ASSERT_OK(gt_stitch_gains_estimate(g, (const uint8_t *const *)fr, 0, gains, &pairs));
    assert_int_equal(pairs, 1);
    for (int p = 0; p < 3; p++) {
        printf("gain %c: %.4f %.4f (truth 1 %.4f)\n", "YUV"[p], gains[p][0], gains[p][1], e[0][p] / e[1][p]);
        assert_true(gains[p][0] == 1.0f);
        assert_true(fabs(gains[p][1] / (e[0][p] / e[1][p]) - 1) < 0.01);
    }
    GT_ASSERT_OK(gt_stitch_gains_estimate(g, (const uint8_t *const *)fr, -1, gains, NULL));
    for (int p = 0; p < 3; p++) assert_true(fabs(log(gains[p][0]) + log(gains[p][1])) < 1e-5); /* geometric mean 1 */
    gt_stitch_gains_destroy(g);
    /* streaming: every 2nd frame half-way towards the estimate, the geometric
     * mean of the rig's gains kept */
    rig.cam[0].gain = rig.cam[1].gain = 1.0f;
    gt_stitch_plan plan;
    gt_stitch_plan_opts po;
    gt_stitch_plan_opts_init(&po);
    po.blend = GT_BLEND_FEATHER;
    GT_ASSERT_OK(gt_stitch_plan_build(&rig, W, H, GT_PIX_YUV444P, &po, &plan));
    gt_stitch_gain_update u;
    GT_ASSERT_OK(gt_stitch_gain_update_init(&u, &rig, &plan, 2, 0.5f));
    bool changed;
    for (long k = 0; k < 40; k++) {
        GT_ASSERT_OK(gt_stitch_gain_update_frame(&u, &plan, (const uint8_t *const *)fr, k, &changed));
        assert_true(changed == (k % 2 == 0));
    }
    double ratio = plan.plane[0].gain[1] / plan.plane[0].gain[0];
    printf("streaming: gains %.4f %.4f after %ld updates\n", plan.plane[0].gain[0], plan.plane[0].gain[1], u.updates);
    assert_true(fabs(ratio / 2.0 - 1) < 0.01);
    assert_true(fabs(plan.plane[0].gain[0] * plan.plane[0].gain[1] - 1) < 1e-3);
    assert_true(fabs(plan.plane[1].bias[1] - 128 * (1 - plan.plane[1].gain[1])) < 1e-3);
    gt_stitch_gain_update_free(&u);
    gt_stitch_plan_free(&plan);
    free(fr[0]), free(fr[1]);
    photo_free(&ph);
}

/* ------------------------------------------------------------ dense refinement */

static void test_align(void **state)
{
    (void)state;
    cv_spec s;
    cv_spec_ci(&s, 256, 192);
    s.n = 2;
    photo_t ph;
    photo_load(s.photo, &ph);
    uint8_t *fr[CV_MAX];
    assert_int_equal(cv_render(&s, &ph, fr), 0);
    double T[9], H[9], P[9] = {1.002, 0.004, 1.5, -0.003, 0.998, -1.2, 0, 0, 1};
    cv_rel(&s, ph.w, ph.h, 0, 1, T);
    gt_stitch_h_mul(P, T, H); /* the truth moved by 1-2 px */
    double err0 = 0, err1 = 0;
    double cx[4] = {0, 255, 255, 0}, cy[4] = {0, 0, 191, 191};
    for (int k = 0; k < 4; k++) {
        double a[2] = {cx[k], cy[k]}, t[2];
        apply_h(T, a, t);
        err0 += gt_calib_transfer(H, a, t) / 4;
    }
    GT_ASSERT_OK(gt_calib_align(fr[0], fr[1], 256, 192, 256, H, 30));
    for (int k = 0; k < 4; k++) {
        double a[2] = {cx[k], cy[k]}, t[2];
        apply_h(T, a, t);
        err1 += gt_calib_transfer(H, a, t) / 4;
    }
    printf("dense refinement: mean corner error %.3f px -> %.3f px (exposures 0.95 and 0.6)\n", err0, err1);
    assert_true(err1 < 0.3);
    free(fr[0]), free(fr[1]);
    photo_free(&ph);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rig_gains_roundtrip), cmocka_unit_test(test_plan_chroma_gains),
        cmocka_unit_test(test_fast_harris),         cmocka_unit_test(test_orientation),
        cmocka_unit_test(test_detect_rotation),     cmocka_unit_test(test_match_synthetic),
        cmocka_unit_test(test_dlt_ransac_lm),       cmocka_unit_test(test_chain_frame),
        cmocka_unit_test(test_polish_bound),        cmocka_unit_test(test_gains),
        cmocka_unit_test(test_align),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
