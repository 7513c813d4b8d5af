/* COLMAP captures (gs/gs_capture.h) on synthetic captures (gs_capture_gen.h):
 * views sorted by name and the llffhold split, the cameras (pose from the
 * quaternion, intrinsics, names), -r with and without images_N, wide
 * photographs scaled to a width (the default's 1600, -r W), the
 * photographs' checks (missing, wrong size), photographs of another size
 * than the model's camera but of its shape (the camera scaled to them),
 * models refused with the way to undistort, folders that are not captures; undistortion of SIMPLE_RADIAL,
 * RADIAL and OPENCV photographs against the analytic pinhole image; and
 * the lens math (projection and its inverse). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gs_capture_gen.h"
#include "gt_test.h"
#include "gs/gs_capture.h"

static char tmpdir[256];

static const char *tmp(const char *name)
{
    static char buf[8][512];
    static int k;
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/gt_captest_XXXXXX");
        if (!mkdtemp(tmpdir)) abort();
    }
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void expect_data(gt_status st, const char *w1, const char *w2)
{
    if (st != GT_ERR_DATA || !strstr(gt_errmsg(), w1) || (w2 && !strstr(gt_errmsg(), w2)))
        fail_msg("status %d, message '%s'; wanted 3 with '%s' and '%s'", st, gt_errmsg(), w1, w2 ? w2 : "");
}

/* The model index of a view (capgen_write's ids are 100 + i). */
static int gen_index(const gt_gs_view *v)
{
    return (int)v->image_id - 100;
}

static void test_views_split(void **state)
{
    (void)state;
    capgen g;
    capgen_defaults(&g);
    g.nviews = 17;
    char d[512];
    snprintf(d, sizeof d, "%s", tmp("split"));
    assert_int_equal(capgen_write(&g, d), 0);
    gt_gs_capture cap;
    GT_ASSERT_OK(gt_gs_capture_open(d, NULL, &cap));
    assert_int_equal(cap.nviews, 17);
    for (int i = 0; i < 17; i++) {
        char want[64];
        snprintf(want, sizeof want, "view_%03d", i);
        assert_string_equal(cap.views[i].cam.name, want); /* sorted, without the extension */
        assert_int_equal(cap.views[i].test, i % 8 == 0);
        char path[700];
        snprintf(path, sizeof path, "%s/images/%s.png", d, want);
        assert_string_equal(cap.views[i].path, path);
    }
    assert_int_equal(cap.ntest, 3), assert_int_equal(cap.ntrain, 14);
    gt_gs_camera *cams;
    int n;
    GT_ASSERT_OK(gt_gs_capture_cameras(&cap, true, &cams, &n));
    assert_int_equal(n, 3);
    assert_string_equal(cams[1].name, "view_008");
    free(cams);
    GT_ASSERT_OK(gt_gs_capture_cameras(&cap, false, &cams, &n));
    assert_int_equal(n, 14);
    assert_string_equal(cams[0].name, "view_001");
    free(cams);
    gt_gs_capture_free(&cap);
    gt_gs_capture_opts o;
    gt_gs_capture_opts_init(&o);
    o.test_every = 0;
    GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
    assert_int_equal(cap.ntest, 0), assert_int_equal(cap.ntrain, 17);
    gt_gs_capture_free(&cap);
    o.test_every = 5;
    GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
    assert_int_equal(cap.ntest, 4); /* 0, 5, 10, 15 */
    assert_true(cap.views[15].test && !cap.views[16].test);
    gt_gs_capture_free(&cap);
    o.resolution = 3;
    assert_int_equal(gt_gs_capture_open(d, &o, &cap), GT_ERR_USAGE);
}

/* Pose and intrinsics of every view against the generator's. */
static void test_cameras(void **state)
{
    (void)state;
    capgen g;
    capgen_defaults(&g);
    g.binary = false; /* through the text model, with the numbers written exactly */
    g.sparse0 = false; /* DIR/sparse holding the files */
    char d[512];
    snprintf(d, sizeof d, "%s", tmp("cams"));
    assert_int_equal(capgen_write(&g, d), 0);
    gt_gs_capture cap;
    GT_ASSERT_OK(gt_gs_capture_open(d, NULL, &cap));
    assert_non_null(strstr(cap.model_dir, "/sparse"));
    for (int i = 0; i < cap.nviews; i++) {
        const gt_gs_camera *c = &cap.views[i].cam;
        double q[4], t[3];
        capgen_pose(&g, gen_index(&cap.views[i]), q, t);
        assert_int_equal(c->width, 48), assert_int_equal(c->height, 36);
        assert_float_equal(c->fx, 40, 0), assert_float_equal(c->fy, 41, 0);
        assert_float_equal(c->cx, 24.5, 0), assert_float_equal(c->cy, 17.75, 0);
        /* the camera centre is on the generator's circle, and R maps the
         * direction to the origin onto +z */
        double r = hypot(c->campos[0], c->campos[2]);
        assert_float_equal(r, 4, 1e-5);
        assert_float_equal(c->campos[1], -0.5, 1e-5);
        for (int k = 0; k < 3; k++) assert_float_equal(c->t[k], t[k], 1e-6);
        double f[3] = {-c->campos[0], -c->campos[1], -c->campos[2]}, fn = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
        double z = (c->R[6] * f[0] + c->R[7] * f[1] + c->R[8] * f[2]) / fn;
        assert_float_equal(z, 1, 1e-6);
        /* R p + t of the centre is 0 */
        for (int k = 0; k < 3; k++)
            assert_float_equal(c->R[3 * k] * c->campos[0] + c->R[3 * k + 1] * c->campos[1] + c->R[3 * k + 2] * c->campos[2] + c->t[k], 0, 1e-5);
    }
    gt_gs_capture_free(&cap);
    /* SIMPLE_PINHOLE: one focal length */
    g.model = GT_COLMAP_SIMPLE_PINHOLE;
    g.params[0] = 33, g.params[1] = 20, g.params[2] = 15;
    snprintf(d, sizeof d, "%s", tmp("cams_sp"));
    assert_int_equal(capgen_write(&g, d), 0);
    GT_ASSERT_OK(gt_gs_capture_open(d, NULL, &cap));
    const gt_gs_camera *c = &cap.views[0].cam;
    assert_float_equal(c->fx, 33, 0), assert_float_equal(c->fy, 33, 0);
    assert_float_equal(c->cx, 20, 0), assert_float_equal(c->cy, 15, 0);
    gt_gs_capture_free(&cap);
}

/* The exact area average of a 8-bit photograph's pixels over output pixel
 * (x, y) of a w x h image, from continuous coordinates. */
static double area_mean(const gt_image *im, int c, int w, int h, int x, int y)
{
    double x0 = (double)x * im->w / w, x1 = (double)(x + 1) * im->w / w;
    double y0 = (double)y * im->h / h, y1 = (double)(y + 1) * im->h / h;
    double s = 0;
    for (int j = (int)floor(y0); j < (int)ceil(y1); j++)
        for (int i = (int)floor(x0); i < (int)ceil(x1); i++) {
            double ox = fmin(x1, i + 1) - fmax(x0, i), oy = fmin(y1, j + 1) - fmax(y0, j);
            s += ox * oy * ((const uint8_t *)im->data)[((size_t)j * im->w + i) * 3 + c] / 255.0;
        }
    return s / ((x1 - x0) * (y1 - y0));
}

/* A capture of 45x30 photographs (fx 40, fy 41, centre 22.5, 15) in
 * tmp(name), for the resolution tests. */
static void write_45x30(capgen *g, const char *name, char d[512])
{
    capgen_defaults(g);
    g->width = 45, g->height = 30;
    g->params[2] = 22.5, g->params[3] = 15;
    snprintf(d, 512, "%s", tmp(name));
    assert_int_equal(capgen_write(g, d), 0);
}

/* The views of a 45x30 capture opened at w x h: intrinsics scaled alike,
 * and every other photograph area-averaged from the full-size one. */
static void check_scaled_views(const gt_gs_capture *cap, int w, int h)
{
    const gt_gs_camera *c = &cap->views[0].cam;
    assert_int_equal(c->width, w), assert_int_equal(c->height, h);
    assert_float_equal(c->fx, 40.0 * w / 45, 1e-5), assert_float_equal(c->fy, 41.0 * h / 30, 1e-5);
    assert_float_equal(c->cx, 22.5 * w / 45, 1e-5), assert_float_equal(c->cy, 15.0 * h / 30, 1e-5);
    float bg[3] = {0, 0, 0};
    void **img;
    GT_ASSERT_OK(gt_gs_capture_load_images(cap, bg, GT_GS_PIX_F32, &img));
    for (int v = 0; v < cap->nviews; v += 2) {
        gt_image full;
        GT_ASSERT_OK(gt_image_read(cap->views[v].path, 0, 0, &full));
        const float *p = img[v];
        for (int ch = 0; ch < 3; ch++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    assert_float_equal(p[((size_t)ch * h + y) * w + x], area_mean(&full, ch, w, h, x, y), 1e-6);
        gt_image_free(&full);
    }
    gt_gs_capture_images_free(img, cap->nviews);
}

static void test_resolution(void **state)
{
    (void)state;
    capgen g;
    char d[512];
    write_45x30(&g, "res", d);
    gt_gs_capture_opts o;
    gt_gs_capture_opts_init(&o);
    /* sizes as Python's round: 22.5 -> 22, 7.5 -> 8, 5.625 -> 6, 3.75 -> 4 */
    const int r[3] = {2, 4, 8}, ws[3] = {22, 11, 6}, hs[3] = {15, 8, 4};
    float bg[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        o.resolution = r[k];
        gt_gs_capture cap;
        GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
        assert_false(cap.images_n);
        check_scaled_views(&cap, ws[k], hs[k]);
        gt_gs_capture_free(&cap);
    }
    /* images_2/ taken when present, at either rounding of 22.5 (22 or 23) */
    for (int up = 0; up < 2; up++) {
        assert_int_equal(capgen_write_images_n(&g, d, 2, 22 + up, 15), 0);
        o.resolution = 2;
        gt_gs_capture cap;
        GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
        assert_true(cap.images_n);
        assert_non_null(strstr(cap.views[0].path, "/images_2/"));
        uint8_t *b = malloc(3 * 22 * 15);
        GT_ASSERT_OK(gt_gs_capture_load_view(&cap, 1, bg, GT_GS_PIX_U8, b));
        gt_image small;
        GT_ASSERT_OK(gt_image_read(cap.views[1].path, 0, 0, &small));
        for (int ch = 0; ch < 3; ch++)
            for (int y = 0; y < 15; y++)
                for (int x = 0; x < 22; x++) {
                    double want = up ? area_mean(&small, ch, 22, 15, x, y)
                                     : ((const uint8_t *)small.data)[(y * 22 + x) * 3 + ch] / 255.0;
                    assert_true(fabs(b[(ch * 15 + y) * 22 + x] - want * 255) <= 0.5 + 1e-9);
                }
        gt_image_free(&small);
        free(b);
        gt_gs_capture_free(&cap);
    }
    /* images_2/ that names its photographs apart from the model (LLFF's
     * image000.png): images/ averaged down instead; a photograph missing
     * from both folders keeps images_2/, whose loader names it */
    {
        char a[1024], b[1024], fa[1024], fb[1040];
        o.resolution = 2;
        gt_gs_capture c0;
        GT_ASSERT_OK(gt_gs_capture_open(d, &o, &c0));
        assert_true(c0.images_n);
        snprintf(a, sizeof a, "%s", c0.views[0].path);
        gt_gs_capture_free(&c0);
        snprintf(b, sizeof b, "%s/images_2/image000.png", d);
        assert_int_equal(rename(a, b), 0);
        gt_gs_capture cap;
        GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
        assert_false(cap.images_n);
        assert_non_null(strstr(cap.views[0].path, "/images/"));
        snprintf(fa, sizeof fa, "%s", cap.views[0].path);
        check_scaled_views(&cap, 22, 15);
        gt_gs_capture_free(&cap);
        snprintf(fb, sizeof fb, "%s.moved", fa);
        assert_int_equal(rename(fa, fb), 0);
        GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
        assert_true(cap.images_n);
        void **img;
        expect_data(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_U8, &img), "images_2/", NULL);
        gt_gs_capture_free(&cap);
        assert_int_equal(rename(fb, fa), 0);
        assert_int_equal(rename(b, a), 0);
    }
    /* a photograph of another size in images_2/ */
    assert_int_equal(capgen_write_images_n(&g, d, 2, 21, 15), 0);
    gt_gs_capture cap;
    GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
    void **img;
    expect_data(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_U8, &img), "is 21x15 but its camera 1 is 45x30",
                "images_2/ should hold it at 22x15");
    gt_gs_capture_free(&cap);
}

/* Wide photographs as the reference trains them by default (-r -1: wider
 * than 1600 -> 1600 wide; here auto_width 30 on 45x30 photographs), and
 * -r W (a width): scale = width / W, sides int(side / scale), the
 * intrinsics scaled alike, the photographs area-averaged; narrower
 * cameras, and -r 1, keep their size. */
static void test_width(void **state)
{
    (void)state;
    capgen g;
    char d[512];
    write_45x30(&g, "width", d);
    gt_gs_capture_opts o;
    gt_gs_capture_opts_init(&o);
    assert_int_equal(o.resolution, 0), assert_int_equal(o.auto_width, GT_GS_AUTO_WIDTH);
    /* (resolution, auto_width) -> size: 45 / (45 / 30) = 30, 30 / 1.5 = 20;
     * 45 / (45 / 18) = 18, 30 / 2.5 = 12; 45 / (45 / 17) = 17, 30 / (45 / 17)
     * = 11.33 -> 11; narrower than 1600 or 45, and -r 1: as they are */
    const int res[6] = {0, 18, 17, 0, 1, 45}, aw[6] = {30, 30, 30, 1600, 30, 30};
    const int ws[6] = {30, 18, 17, 45, 45, 45}, hs[6] = {20, 12, 11, 30, 30, 30};
    for (int k = 0; k < 6; k++) {
        o.resolution = res[k], o.auto_width = aw[k];
        gt_gs_capture cap;
        GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
        assert_int_equal(cap.scaled, ws[k] < 45 ? cap.nviews : 0);
        assert_int_equal(cap.auto_width, res[k] == 0);
        check_scaled_views(&cap, ws[k], hs[k]);
        gt_gs_capture_free(&cap);
    }
    /* 9 to 15 are neither a factor nor a width */
    o.resolution = 12;
    gt_gs_capture cap;
    assert_int_equal(gt_gs_capture_open(d, &o, &cap), GT_ERR_USAGE);
}

static void test_bad_photographs(void **state)
{
    (void)state;
    capgen g;
    capgen_defaults(&g);
    char d[512], p[700];
    snprintf(d, sizeof d, "%s", tmp("badimg"));
    assert_int_equal(capgen_write(&g, d), 0);
    float bg[3] = {1, 1, 1};
    gt_gs_capture cap;
    void **img;
    GT_ASSERT_OK(gt_gs_capture_open(d, NULL, &cap));
    GT_ASSERT_OK(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_U8, &img));
    /* bytes: an 8-bit photograph at its size gives its own bytes */
    gt_image ph;
    GT_ASSERT_OK(gt_image_read(cap.views[2].path, 0, 0, &ph));
    const uint8_t *b = img[2];
    for (int k = 0; k < 48 * 36; k++)
        for (int c = 0; c < 3; c++) assert_int_equal(b[c * 48 * 36 + k], ((uint8_t *)ph.data)[3 * k + c]);
    gt_image_free(&ph);
    gt_gs_capture_images_free(img, cap.nviews);
    /* the wrong size */
    snprintf(p, sizeof p, "%s/images/view_003.png", d);
    capgen g2 = g;
    assert_int_equal(capgen_photo(&g2, 0, 40, 36, p), 0);
    expect_data(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_F32, &img), "view_003.png' is 40x36 but its camera 1 is 48x36", NULL);
    /* unreadable */
    FILE *f = fopen(p, "w");
    fputs("not a PNG", f);
    fclose(f);
    expect_data(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_F32, &img), "view_003.png", "not a PNG or JPEG");
    /* missing */
    unlink(p);
    expect_data(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_F32, &img), "view_003.png' of view 'view_003' is missing", NULL);
    gt_gs_capture_free(&cap);
}

/* Photographs of another size than their COLMAP camera but of its shape
 * (the reference's tandt_db: truck's camera 1957x1091, its photographs
 * 979x546): the camera scaled to them, as the reference (through the field
 * of view) and gsplat do; a photograph of another shape is still refused. */
static void test_photographs_smaller(void **state)
{
    (void)state;
    capgen g;
    capgen_defaults(&g);
    g.nviews = 4;
    char d[512], p[700];
    snprintf(d, sizeof d, "%s", tmp("smaller"));
    assert_int_equal(capgen_write(&g, d), 0);
    for (int i = 0; i < g.nviews; i++) { /* 48x36 -> 24x18 */
        snprintf(p, sizeof p, "%s/images/view_%03d.png", d, i);
        assert_int_equal(capgen_photo(&g, i, 24, 18, p), 0);
    }
    gt_gs_capture_opts o;
    gt_gs_capture_opts_init(&o);
    float bg[3] = {0, 0, 0};
    const int r[2] = {1, 2};
    for (int k = 0; k < 2; k++) {
        o.resolution = r[k];
        gt_gs_capture cap;
        GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
        assert_int_equal(cap.lenses[0].width, 24), assert_int_equal(cap.lenses[0].height, 18);
        assert_int_equal(cap.lenses[0].colmap_width, 48), assert_int_equal(cap.lenses[0].colmap_height, 36);
        const gt_gs_camera *c = &cap.views[1].cam;
        assert_int_equal(c->width, 24 / r[k]), assert_int_equal(c->height, 18 / r[k]);
        assert_float_equal(c->fx, 20.0 / r[k], 1e-5), assert_float_equal(c->fy, 20.5 / r[k], 1e-5);
        assert_float_equal(c->cx, 12.25 / r[k], 1e-5), assert_float_equal(c->cy, 8.875 / r[k], 1e-5);
        void **img;
        GT_ASSERT_OK(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_U8, &img));
        if (r[k] == 1) { /* at its size: its own bytes */
            gt_image ph;
            GT_ASSERT_OK(gt_image_read(cap.views[1].path, 0, 0, &ph));
            const uint8_t *b = img[1];
            for (int q = 0; q < 24 * 18; q++)
                for (int ch = 0; ch < 3; ch++)
                    assert_int_equal(b[ch * 24 * 18 + q], ((uint8_t *)ph.data)[3 * q + ch]);
            gt_image_free(&ph);
        }
        gt_gs_capture_images_free(img, cap.nviews);
        gt_gs_capture_free(&cap);
    }
    /* another photograph at the model's size, or of another shape */
    o.resolution = 1;
    const int wh[2][2] = {{48, 36}, {24, 36}};
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/images/view_002.png", d);
        assert_int_equal(capgen_photo(&g, 2, wh[k][0], wh[k][1], p), 0);
        gt_gs_capture cap;
        GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
        void **img;
        char want[128];
        snprintf(want, sizeof want, "view_002.png' is %dx%d but", wh[k][0], wh[k][1]);
        expect_data(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_U8, &img), want,
                    "camera 1 (48x36 in the model) are 24x18");
        gt_gs_capture_free(&cap);
    }
    /* the first photograph of another shape: the camera kept, that one refused */
    snprintf(p, sizeof p, "%s/images/view_000.png", d);
    assert_int_equal(capgen_photo(&g, 0, 24, 36, p), 0);
    gt_gs_capture cap;
    GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
    assert_int_equal(cap.lenses[0].width, 48);
    void **img;
    expect_data(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_U8, &img),
                "view_000.png' is 24x36 but its camera 1 is 48x36", NULL);
    gt_gs_capture_free(&cap);
}

static void test_not_supported(void **state)
{
    (void)state;
    capgen g;
    capgen_defaults(&g);
    g.model = GT_COLMAP_OPENCV_FISHEYE;
    g.nviews = 2;
    char d[512];
    snprintf(d, sizeof d, "%s", tmp("fisheye"));
    assert_int_equal(capgen_write(&g, d), 0);
    gt_gs_capture cap;
    expect_data(gt_gs_capture_open(d, NULL, &cap), "is a OPENCV_FISHEYE camera", "colmap image_undistorter --image_path");
    assert_non_null(strstr(gt_errmsg(), "pycolmap"));
    /* folders that are not captures */
    const char *e = tmp("empty");
    mkdir(e, 0755);
    expect_data(gt_gs_capture_open(e, NULL, &cap), "is not a capture: it has no sparse/0/", "transforms.json");
    expect_data(gt_gs_capture_open(tmp("nothing"), NULL, &cap), "does not exist", NULL);
    capgen_defaults(&g);
    snprintf(d, sizeof d, "%s", tmp("noimages"));
    assert_int_equal(capgen_write(&g, d), 0);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -r '%s/images'", d);
    assert_int_equal(system(cmd), 0);
    expect_data(gt_gs_capture_open(d, NULL, &cap), "has no images/ folder", NULL);
    /* a sparse folder with nothing in it */
    snprintf(d, sizeof d, "%s", tmp("emptysparse"));
    mkdir(d, 0755);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/sparse/0'", d);
    assert_int_equal(system(cmd), 0);
    expect_data(gt_gs_capture_open(d, NULL, &cap), "holds no COLMAP model", "sparse/0");
}

static void test_no_points(void **state)
{
    (void)state;
    capgen g;
    capgen_defaults(&g);
    g.npoints = 0;
    char d[512];
    snprintf(d, sizeof d, "%s", tmp("nopoints"));
    assert_int_equal(capgen_write(&g, d), 0);
    gt_gs_capture cap;
    GT_ASSERT_OK(gt_gs_capture_open(d, NULL, &cap));
    gt_gs_raw r;
    const gt_gs_init_opts ref = GT_GS_INIT_REFERENCE;
    expect_data(gt_gs_capture_init(&cap, 3, &ref, &r), "points3D.bin' has no 3-D points to start from", "PLY");
    gt_gs_capture_free(&cap);
}

/* Undistortion: the photographs of a distorted camera, made from the
 * analytic pattern through the inverse distortion (16-bit), undistorted by
 * the loader, against the pattern at the undistorted camera's pixel
 * centres. The error left is bilinear interpolation's on a pattern of a
 * period of about 45 pixels and 16-bit quantisation: at most 0.004, 0.001
 * on average, on interior pixels (a sampling half a pixel off would be
 * 0.02). At -r 2, with the area averaging, at most 0.01. */
static void check_undistort(int model, const double *params, int np, const char *name)
{
    capgen g;
    capgen_defaults(&g);
    g.model = model;
    g.width = 120, g.height = 90;
    g.png16 = true;
    g.nviews = 3;
    memcpy(g.params, params, sizeof(double) * (size_t)np);
    char d[512];
    snprintf(d, sizeof d, "%s", tmp(name));
    assert_int_equal(capgen_write(&g, d), 0);
    gt_gs_capture cap;
    GT_ASSERT_OK(gt_gs_capture_open(d, NULL, &cap));
    assert_int_equal(cap.nlenses, 1);
    const gt_gs_capture_lens *L = &cap.lenses[0];
    assert_true(L->distorted);
    const gt_gs_pinhole *t = &L->pinhole;
    /* COLMAP's choice keeps the focal lengths, and scales the principal point with the size */
    assert_float_equal(t->fx, L->lens.fx, 0), assert_float_equal(t->fy, L->lens.fy, 0);
    assert_float_equal(t->cx, L->lens.cx * t->width / 120.0, 1e-12);
    printf("%s: %dx%d -> %dx%d, c %.4f %.4f\n", name, 120, 90, t->width, t->height, t->cx, t->cy);
    float bg[3] = {0, 0, 0};
    void **img;
    GT_ASSERT_OK(gt_gs_capture_load_images(&cap, bg, GT_GS_PIX_F32, &img));
    double worst = 0, sum = 0;
    long n = 0;
    for (int v = 0; v < cap.nviews; v++) {
        const gt_gs_camera *c = &cap.views[v].cam;
        assert_int_equal(c->width, t->width), assert_int_equal(c->height, t->height);
        const float *p = img[v];
        for (int y = 1; y < c->height - 1; y++)
            for (int x = 1; x < c->width - 1; x++) {
                double rgb[3];
                capgen_pattern(gen_index(&cap.views[v]), (x + 0.5 - t->cx) / t->fx, (y + 0.5 - t->cy) / t->fy, rgb);
                for (int ch = 0; ch < 3; ch++) {
                    double e = fabs(p[((size_t)ch * c->height + y) * c->width + x] - rgb[ch]);
                    worst = fmax(worst, e), sum += e, n++;
                }
            }
    }
    printf("%s: interior max |error| %.5f, mean %.6f\n", name, worst, sum / n);
    assert_true(worst < 0.004);
    assert_true(sum / n < 0.001);
    /* no blank pixels with the chosen camera; a wider one has some */
    gt_image ph;
    GT_ASSERT_OK(gt_image_read(cap.views[0].path, 0, 1, &ph));
    float *out = malloc(sizeof(float) * 3 * (size_t)(t->width + 20) * (size_t)(t->height + 20));
    assert_int_equal(gt_gs_undistort_image(&ph, &L->lens, t, bg, out, NULL), 0);
    gt_gs_pinhole wide = *t;
    wide.width += 12, wide.height += 10, wide.cx += 6, wide.cy += 5;
    assert_true(gt_gs_undistort_image(&ph, &L->lens, &wide, bg, out, NULL) > 0);
    free(out);
    gt_image_free(&ph);
    gt_gs_capture_images_free(img, cap.nviews);
    /* -r 2: undistorted at full size, then area-averaged: close to the
     * pattern at the half-size camera's pixel centres (the averaging of a
     * smooth pattern moves it a little more) */
    gt_gs_capture_free(&cap);
    gt_gs_capture_opts o;
    gt_gs_capture_opts_init(&o);
    o.resolution = 2;
    GT_ASSERT_OK(gt_gs_capture_open(d, &o, &cap));
    const gt_gs_camera *c = &cap.views[0].cam;
    assert_int_equal(c->width, (int)nearbyint(t->width / 2.0));
    float *h = malloc(sizeof(float) * 3 * (size_t)c->width * c->height);
    GT_ASSERT_OK(gt_gs_capture_load_view(&cap, 0, bg, GT_GS_PIX_F32, h));
    worst = 0;
    for (int y = 1; y < c->height - 1; y++)
        for (int x = 1; x < c->width - 1; x++) {
            double rgb[3];
            capgen_pattern(gen_index(&cap.views[0]), (x + 0.5 - c->cx) / c->fx, (y + 0.5 - c->cy) / c->fy, rgb);
            for (int ch = 0; ch < 3; ch++)
                worst = fmax(worst, fabs(h[((size_t)ch * c->height + y) * c->width + x] - rgb[ch]));
        }
    printf("%s at -r 2: interior max |error| %.5f\n", name, worst);
    assert_true(worst < 0.01);
    free(h);
    gt_gs_capture_free(&cap);
}

static void test_undistort(void **state)
{
    (void)state;
    const double sr[4] = {100, 60, 45, -0.12};                          /* barrel */
    const double rad[5] = {100, 61, 44, 0.08, 0.02};                    /* pincushion */
    const double cv[8] = {100, 103, 59.5, 45.5, -0.05, 0.01, 0.002, -0.003};
    check_undistort(GT_COLMAP_SIMPLE_RADIAL, sr, 4, "simple_radial");
    check_undistort(GT_COLMAP_RADIAL, rad, 5, "radial");
    check_undistort(GT_COLMAP_OPENCV, cv, 8, "opencv");
}

/* The generator's rendered captures: a distorted one, undistorted as it
 * loads, against the same Gaussians rendered straight into the undistorted
 * camera (two bilinear resamplings apart). */
static void test_rendered_capture(void **state)
{
    (void)state;
    capgen g;
    capgen_defaults(&g);
    g.model = GT_COLMAP_OPENCV;
    g.width = 80, g.height = 60, g.nviews = 3, g.npoints = 200;
    const double cv[8] = {64, 64, 40, 30, -0.05, 0.01, 0.001, -0.001};
    memcpy(g.params, cv, sizeof cv);
    g.photo = capgen_photo_render;
    char d[512], d2[512];
    snprintf(d, sizeof d, "%s", tmp("render_cv"));
    assert_int_equal(capgen_write(&g, d), 0);
    gt_gs_capture a, b;
    GT_ASSERT_OK(gt_gs_capture_open(d, NULL, &a));
    const gt_gs_pinhole *t = &a.lenses[0].pinhole;
    capgen p = g;
    p.model = GT_COLMAP_PINHOLE;
    p.width = t->width, p.height = t->height;
    p.params[0] = t->fx, p.params[1] = t->fy, p.params[2] = t->cx, p.params[3] = t->cy;
    snprintf(d2, sizeof d2, "%s", tmp("render_pin"));
    assert_int_equal(capgen_write(&p, d2), 0);
    GT_ASSERT_OK(gt_gs_capture_open(d2, NULL, &b));
    float bg[3] = {0, 0, 0};
    void **ia, **ib;
    GT_ASSERT_OK(gt_gs_capture_load_images(&a, bg, GT_GS_PIX_F32, &ia));
    GT_ASSERT_OK(gt_gs_capture_load_images(&b, bg, GT_GS_PIX_F32, &ib));
    for (int v = 0; v < a.nviews; v++) {
        int w = t->width, h = t->height;
        double se = 0, sum = 0;
        long n = 0;
        for (int c = 0; c < 3; c++)
            for (int y = 2; y < h - 2; y++)
                for (int x = 2; x < w - 2; x++) {
                    size_t k = ((size_t)c * h + y) * w + x;
                    double e = ((float *)ia[v])[k] - ((float *)ib[v])[k];
                    se += e * e, sum += ((float *)ib[v])[k], n++;
                }
        double psnr = 10 * log10(1.0 / (se / n));
        printf("rendered view %d: undistorted against rendered in the pinhole camera %.2f dB (mean %.3f)\n", v, psnr,
               sum / n);
        assert_true(sum / n > 0.05); /* not an empty picture */
        assert_true(psnr > 30);
    }
    gt_gs_capture_images_free(ia, a.nviews), gt_gs_capture_images_free(ib, b.nviews);
    gt_gs_capture_free(&a), gt_gs_capture_free(&b);
}

/* project then unproject is the identity; the Jacobian matches differences */
static void test_lens_math(void **state)
{
    (void)state;
    const gt_gs_lens lenses[3] = {{100, 100, 60, 45, -0.12, 0, 0, 0},
                                  {100, 100, 61, 44, 0.08, 0.02, 0, 0},
                                  {100, 103, 59.5, 45.5, -0.05, 0.01, 0.002, -0.003}};
    gt_rng rng = {3};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 2000; i++) {
            double u = gt_rng_range(&rng, -0.7, 0.7), v = gt_rng_range(&rng, -0.6, 0.6), x, y, u2, v2;
            gt_gs_lens_project(&lenses[k], u, v, &x, &y);
            assert_true(gt_gs_lens_unproject(&lenses[k], x, y, &u2, &v2));
            assert_float_equal(u2, u, 1e-12), assert_float_equal(v2, v, 1e-12);
            double ud, vd, J[4], a, b, c, e, hh = 1e-6;
            gt_gs_lens_distort(&lenses[k], u, v, &ud, &vd, J);
            gt_gs_lens_distort(&lenses[k], u + hh, v, &a, &b, NULL);
            gt_gs_lens_distort(&lenses[k], u - hh, v, &c, &e, NULL);
            assert_float_equal(J[0], (a - c) / (2 * hh), 1e-7), assert_float_equal(J[2], (b - e) / (2 * hh), 1e-7);
            gt_gs_lens_distort(&lenses[k], u, v + hh, &a, &b, NULL);
            gt_gs_lens_distort(&lenses[k], u, v - hh, &c, &e, NULL);
            assert_float_equal(J[1], (a - c) / (2 * hh), 1e-7), assert_float_equal(J[3], (b - e) / (2 * hh), 1e-7);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_split), cmocka_unit_test(test_cameras),   cmocka_unit_test(test_resolution), cmocka_unit_test(test_width),
        cmocka_unit_test(test_bad_photographs), cmocka_unit_test(test_photographs_smaller),
        cmocka_unit_test(test_not_supported), cmocka_unit_test(test_no_points),
        cmocka_unit_test(test_undistort),   cmocka_unit_test(test_lens_math), cmocka_unit_test(test_rendered_capture),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    if (tmpdir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    }
    return r;
}
