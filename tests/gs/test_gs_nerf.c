/* NeRF "transforms" captures (io/nerf_transforms.h) opened as captures
 * (gs/gs_capture.h): a synthetic COLMAP capture (gs_capture_gen.h) written
 * again as a Blender scene (transforms_train.json + transforms_test.json,
 * OpenGL camera-to-world matrices, camera_angle_x, file paths without an
 * extension) and as a nerfstudio transforms.json (fl_x, fl_y, cx, cy, w, h,
 * OPENCV distortion, ply_file_path) gives the same views as the COLMAP
 * capture: poses, intrinsics and photographs; the split is the files'; the
 * points are the PLY's, else the reference's random cube; broken files are
 * exit 3 naming the file and the frame. */
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
#include "io/io_test_util.h"
#include "gs/gs_capture.h"
#include "io/nerf_transforms.h"

/* The camera-to-world matrix in OpenGL axes of a COLMAP pose. */
static void gl_c2w(const double q_in[4], const double t[3], double M[16])
{
    double n = sqrt(q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] + q_in[3] * q_in[3]);
    double w = q_in[0] / n, x = q_in[1] / n, y = q_in[2] / n, z = q_in[3] / n;
    const double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                         2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                         2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memset(M, 0, 16 * sizeof *M);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) M[4 * i + j] = R[3 * j + i] * (j == 0 ? 1 : -1); /* R^T, y z negated */
        M[4 * i + 3] = -(R[i] * t[0] + R[3 + i] * t[1] + R[6 + i] * t[2]);         /* -R^T t */
    }
    M[15] = 1;
}

static void write_frame(FILE *f, const gt_colmap_image *im, const char *path, const char *extra, bool last)
{
    double M[16];
    gl_c2w(im->qvec, im->tvec, M);
    fprintf(f, "  {\"file_path\": \"%s\",%s \"transform_matrix\": [", path, extra ? extra : "");
    for (int i = 0; i < 4; i++)
        fprintf(f, "[%.17g, %.17g, %.17g, %.17g]%s", M[4 * i], M[4 * i + 1], M[4 * i + 2], M[4 * i + 3],
                i < 3 ? ", " : "");
    fprintf(f, "]}%s\n", last ? "" : ",");
}

/* The COLMAP capture of g in dir, and its model. */
static void colmap_capture(capgen *g, const char *dir, gt_colmap_model *m)
{
    assert_int_equal(capgen_write(g, dir), 0);
    assert_int_equal(capgen_model(g, m), 0);
}

static void link_photo(const char *cdir, const char *name, const char *ndir, const char *as)
{
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s/images/%s", cdir, name);
    snprintf(b, sizeof b, "%s/%s", ndir, as);
    assert_int_equal(symlink(a, b), 0);
}

static void same_views(const gt_gs_capture *a, const gt_gs_capture *b, double tol)
{
    assert_int_equal(a->nviews, b->nviews);
    for (int i = 0; i < a->nviews; i++) {
        const gt_gs_camera *p = &a->views[i].cam, *q = &b->views[i].cam;
        assert_int_equal(p->width, q->width), assert_int_equal(p->height, q->height);
        for (int k = 0; k < 9; k++) assert_float_equal(p->R[k], q->R[k], 1e-6);
        for (int k = 0; k < 3; k++) assert_float_equal(p->t[k], q->t[k], 1e-5);
        assert_float_equal(p->fx, q->fx, tol), assert_float_equal(p->fy, q->fy, tol);
        assert_float_equal(p->cx, q->cx, tol), assert_float_equal(p->cy, q->cy, tol);
    }
}

/* A Blender scene (the reference's readNerfSyntheticInfo): fx = fy from
 * camera_angle_x, the centre at w/2, h/2, names without an extension, the
 * split from the files, the random cube without points3d.ply. */
static void test_blender(void **state)
{
    (void)state;
    capgen g;
    capgen_defaults(&g);
    g.nviews = 6, g.width = 48, g.height = 36;
    g.params[0] = g.params[1] = 40, g.params[2] = 24, g.params[3] = 18;
    char cdir[512], ndir[512];
    snprintf(cdir, sizeof cdir, "%s", io_tmp("blender_colmap"));
    snprintf(ndir, sizeof ndir, "%s", io_tmp("blender"));
    gt_colmap_model m;
    colmap_capture(&g, cdir, &m);
    mkdir(ndir, 0755);
    char sub[1024];
    snprintf(sub, sizeof sub, "%s/train", ndir), mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/test", ndir), mkdir(sub, 0755);
    const double angle = 2 * atan(48 / (2.0 * 40));
    const char *files[2] = {"transforms_train.json", "transforms_test.json"};
    for (int s = 0; s < 2; s++) {
        snprintf(sub, sizeof sub, "%s/%s", ndir, files[s]);
        FILE *f = fopen(sub, "w");
        assert_non_null(f);
        fprintf(f, "{\"camera_angle_x\": %.17g, \"frames\": [\n", angle);
        for (int i = s; i < g.nviews; i += 2) { /* train: even images, test: odd */
            char path[64], as[64];
            snprintf(path, sizeof path, "./%s/r_%d", s ? "test" : "train", i);
            snprintf(as, sizeof as, "%s/r_%d.png", s ? "test" : "train", i);
            link_photo(cdir, m.images[i].name, ndir, as);
            write_frame(f, &m.images[i], path, NULL, i + 2 >= g.nviews);
        }
        fprintf(f, "]}\n");
        fclose(f);
    }
    assert_true(gt_nerf_is_capture(ndir));
    gt_gs_capture_opts o;
    gt_gs_capture_opts_init(&o);
    gt_gs_capture nc;
    GT_ASSERT_OK(gt_gs_capture_open(ndir, &o, &nc));
    assert_int_equal(nc.nviews, 6), assert_int_equal(nc.ntest, 3), assert_int_equal(nc.ntrain, 3);
    for (int i = 0; i < nc.nviews; i++) {
        const gt_gs_view *v = &nc.views[i];
        bool test = strncmp(v->cam.name, "test/", 5) == 0;
        assert_true(test == v->test);
        assert_true(strncmp(v->cam.name, test ? "test/r_" : "train/r_", test ? 7 : 8) == 0);
    }
    /* the same cameras as the COLMAP capture's views, matched by photograph */
    for (int i = 0; i < nc.nviews; i++) {
        int k = atoi(strrchr(nc.views[i].cam.name, '_') + 1);
        gt_gs_camera want;
        const gt_colmap_image *im = &m.images[k];
        gt_gs_camera_from_pose(&want, im->qvec, im->tvec, 48, 36, 40, 40, 24, 18);
        const gt_gs_camera *c = &nc.views[i].cam;
        for (int j = 0; j < 9; j++) assert_float_equal(c->R[j], want.R[j], 1e-6);
        for (int j = 0; j < 3; j++) assert_float_equal(c->t[j], want.t[j], 1e-5);
        assert_float_equal(c->fx, 40, 1e-4), assert_float_equal(c->fy, 40, 1e-4);
        assert_float_equal(c->cx, 24, 1e-6), assert_float_equal(c->cy, 18, 1e-6);
    }
    /* the photographs load (through the names with .png added) */
    float bg[3] = {1, 1, 1};
    void **img;
    GT_ASSERT_OK(gt_gs_capture_load_images(&nc, bg, GT_GS_PIX_U8, &img));
    gt_gs_capture_images_free(img, nc.nviews);
    /* no points3d.ply: the reference's cube of random grey points */
    const gt_colmap_points *p = &nc.model.points;
    assert_int_equal(p->n, GT_NERF_RANDOM_POINTS);
    double lo = 1e9, hi = -1e9;
    for (size_t i = 0; i < 3 * p->n; i++) lo = fmin(lo, p->xyz[i]), hi = fmax(hi, p->xyz[i]);
    assert_true(lo >= -1.3 && lo < -1.29 && hi <= 1.3 && hi > 1.29);
    assert_int_equal(p->rgb[0], 127);
    gt_gs_capture_free(&nc);
    /* --test-every 0: every frame trains (the reference without --eval) */
    o.test_every = 0;
    GT_ASSERT_OK(gt_gs_capture_open(ndir, &o, &nc));
    assert_int_equal(nc.ntest, 0), assert_int_equal(nc.ntrain, 6);
    gt_gs_capture_free(&nc);
    gt_colmap_free(&m);
}

/* nerfstudio's transforms.json: fl_x, fl_y, cx, cy, w, h and OPENCV
 * distortion for the file, ply_file_path, paths with their extension: the
 * COLMAP capture's views exactly (the lens undistorted alike), its points. */
static void test_nerfstudio(void **state)
{
    (void)state;
    capgen g;
    capgen_defaults(&g);
    g.model = GT_COLMAP_OPENCV;
    g.params[4] = 0.05, g.params[5] = -0.01, g.params[6] = 0.001, g.params[7] = -0.002;
    char cdir[512], ndir[512], path[1024];
    snprintf(cdir, sizeof cdir, "%s", io_tmp("ns_colmap"));
    snprintf(ndir, sizeof ndir, "%s", io_tmp("ns"));
    gt_colmap_model m;
    colmap_capture(&g, cdir, &m);
    mkdir(ndir, 0755);
    snprintf(path, sizeof path, "%s/images", ndir), mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/transforms.json", ndir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"camera_model\": \"OPENCV\", \"fl_x\": %.17g, \"fl_y\": %.17g, \"cx\": %.17g, \"cy\": %.17g, "
               "\"w\": %d, \"h\": %d, \"k1\": %.17g, \"k2\": %.17g, \"p1\": %.17g, \"p2\": %.17g,\n"
               "\"ply_file_path\": \"sparse_pc.ply\", \"frames\": [\n",
            g.params[0], g.params[1], g.params[2], g.params[3], g.width, g.height, g.params[4], g.params[5],
            g.params[6], g.params[7]);
    for (int i = 0; i < g.nviews; i++) {
        char as[300];
        snprintf(as, sizeof as, "images/%s", m.images[i].name);
        link_photo(cdir, m.images[i].name, ndir, as);
        write_frame(f, &m.images[i], as, NULL, i + 1 == g.nviews);
    }
    fprintf(f, "]}\n");
    fclose(f);
    /* the points as nerfstudio writes them: x y z float, red green blue uchar */
    snprintf(path, sizeof path, "%s/sparse_pc.ply", ndir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "ply\nformat ascii 1.0\nelement vertex %zu\nproperty float x\nproperty float y\nproperty float z\n"
               "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n", m.points.n);
    for (size_t i = 0; i < m.points.n; i++)
        fprintf(f, "%.9g %.9g %.9g %u %u %u\n", m.points.xyz[3 * i], m.points.xyz[3 * i + 1],
                m.points.xyz[3 * i + 2], m.points.rgb[3 * i], m.points.rgb[3 * i + 1], m.points.rgb[3 * i + 2]);
    fclose(f);
    gt_gs_capture_opts o;
    gt_gs_capture_opts_init(&o);
    gt_gs_capture cc, nc;
    GT_ASSERT_OK(gt_gs_capture_open(cdir, &o, &cc));
    GT_ASSERT_OK(gt_gs_capture_open(ndir, &o, &nc));
    same_views(&cc, &nc, 1e-4);
    assert_int_equal(nc.ntest, cc.ntest); /* no split of its own: every 8th by name */
    assert_int_equal(nc.nlenses, 1);
    assert_true(nc.lenses[0].distorted);
    assert_int_equal(nc.model.points.n, m.points.n);
    for (size_t i = 0; i < m.points.n; i++) {
        for (int k = 0; k < 3; k++) assert_float_equal(nc.model.points.xyz[3 * i + k], m.points.xyz[3 * i + k], 1e-6);
        for (int k = 0; k < 3; k++) assert_int_equal(nc.model.points.rgb[3 * i + k], m.points.rgb[3 * i + k]);
    }
    /* the photographs undistorted as the COLMAP capture's */
    float bg[3] = {0, 0, 0};
    void **a, **b;
    GT_ASSERT_OK(gt_gs_capture_load_images(&cc, bg, GT_GS_PIX_U8, &a));
    GT_ASSERT_OK(gt_gs_capture_load_images(&nc, bg, GT_GS_PIX_U8, &b));
    size_t bytes = 3 * (size_t)cc.views[0].cam.width * cc.views[0].cam.height;
    for (int i = 0; i < cc.nviews; i++) assert_memory_equal(a[i], b[i], bytes);
    gt_gs_capture_images_free(a, cc.nviews), gt_gs_capture_images_free(b, nc.nviews);
    gt_gs_capture_free(&cc), gt_gs_capture_free(&nc);
    gt_colmap_free(&m);
}

static void expect_data(gt_status st, const char *w1, const char *w2)
{
    if (st != GT_ERR_DATA || !strstr(gt_errmsg(), w1) || (w2 && !strstr(gt_errmsg(), w2)))
        fail_msg("status %d, message '%s'; wanted 3 with '%s' and '%s'", st, gt_errmsg(), w1, w2 ? w2 : "");
}

/* Broken transforms: exit 3 naming the file and the frame. */
static void test_broken(void **state)
{
    (void)state;
    char d[512], p[1024];
    snprintf(d, sizeof d, "%s", io_tmp("broken"));
    mkdir(d, 0755);
    snprintf(p, sizeof p, "%s/transforms.json", d);
    gt_gs_capture cap;
    const char *I4 = "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]";
    struct {
        const char *json, *w1, *w2;
    } cases[] = {
        {"{\"frames\": [", "not valid JSON", "transforms.json"},
        {"{\"fl_x\": 10}", "no \"frames\" array", "transforms.json"},
        {"{\"fl_x\": 10, \"w\": 8, \"h\": 8, \"frames\": []}", "no frames", NULL},
        {"{\"fl_x\": 10, \"w\": 8, \"h\": 8, \"frames\": [{\"transform_matrix\": [[1]]}]}", "frame 0: no \"file_path\"",
         "transforms.json"},
        {"{\"fl_x\": 10, \"w\": 8, \"h\": 8, \"frames\": [{\"file_path\": \"a.png\", \"transform_matrix\": [[1,0]]}]}",
         "frame 0: \"transform_matrix\" is not a 4x4", NULL},
        {"{\"fl_x\": 10, \"w\": 8, \"h\": 8, \"frames\": [{\"file_path\": \"a.png\", \"transform_matrix\": "
         "[[-1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}",
         "is not a rotation", NULL},
        {NULL, "no intrinsics", NULL},
        {NULL, "unknown camera_model", "BOGUS"},
        {NULL, "photograph's size", "frame 0"},
    };
    char buf[512];
    snprintf(buf, sizeof buf, "{\"w\": 8, \"h\": 8, \"frames\": [{\"file_path\": \"a.png\", \"transform_matrix\": %s}]}",
             I4);
    char *no_intr = strdup(buf);
    snprintf(buf, sizeof buf,
             "{\"camera_model\": \"BOGUS\", \"fl_x\": 9, \"w\": 8, \"h\": 8, \"frames\": [{\"file_path\": \"a.png\", "
             "\"transform_matrix\": %s}]}",
             I4);
    char *bogus = strdup(buf);
    snprintf(buf, sizeof buf, "{\"camera_angle_x\": 0.5, \"frames\": [{\"file_path\": \"a.png\", \"transform_matrix\": %s}]}",
             I4);
    char *nosize = strdup(buf); /* a.png does not exist: its size cannot be read */
    cases[6].json = no_intr, cases[7].json = bogus, cases[8].json = nosize;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        io_write_text(p, cases[k].json);
        expect_data(gt_gs_capture_open(d, NULL, &cap), cases[k].w1, cases[k].w2);
    }
    free(no_intr), free(bogus), free(nosize);
    /* a folder that is neither: the message names both layouts */
    unlink(p);
    expect_data(gt_gs_capture_open(d, NULL, &cap), "no sparse/0/", "transforms_train.json");
    /* a fisheye named by camera_model is refused by name, with how to undistort */
    snprintf(buf, sizeof buf,
             "{\"camera_model\": \"OPENCV_FISHEYE\", \"fl_x\": 9, \"w\": 8, \"h\": 8, \"frames\": [{\"file_path\": "
             "\"a.png\", \"transform_matrix\": %s}]}",
             I4);
    io_write_text(p, buf);
    expect_data(gt_gs_capture_open(d, NULL, &cap), "OPENCV_FISHEYE", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_blender), cmocka_unit_test(test_nerfstudio),
                                       cmocka_unit_test(test_broken)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
