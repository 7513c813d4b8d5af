/* COLMAP sparse models (io/colmap.h): round trips txt <-> bin (the 2-D
 * points and tracks kept, and skipped), the folder reader's choice of
 * files, and broken models: every truncation of each binary file, bad
 * counts, unknown models, bad parameter counts, bad numbers, sizes,
 * duplicate ids and names, images of missing cameras; each GT_ERR_DATA
 * with the place (file: byte N, or file:line) and the words expected. */
#include "io_test_util.h"

#include <math.h>
#include <sys/stat.h>

#include "gt_test.h"
#include "io/colmap.h"

static char *dupstr(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    strcpy(d, s);
    return d;
}

/* Four cameras of four models, three images (2-D points 0, 3 and 2; ids not
 * in order; one name in a folder), four points (tracks of 0..3). */
static void make_model(gt_colmap_model *m)
{
    memset(m, 0, sizeof *m);
    m->ncameras = 4;
    m->cameras = calloc(4, sizeof *m->cameras);
    m->cameras[0] = (gt_colmap_camera){.id = 1, .model = GT_COLMAP_PINHOLE, .width = 640, .height = 480, .nparams = 4,
                                       .params = {500.25, 510.5, 320.5, 240.125}};
    m->cameras[1] = (gt_colmap_camera){.id = 3, .model = GT_COLMAP_OPENCV, .width = 800, .height = 600, .nparams = 8,
                                       .params = {700, 701, 400, 300, -0.1, 0.01, 1e-3, -2e-4}};
    m->cameras[2] = (gt_colmap_camera){.id = 7, .model = GT_COLMAP_FULL_OPENCV, .width = 100, .height = 80,
                                       .nparams = 12, .params = {90, 91, 50, 40, 1, 2, 3, 4, 5, 6, 7, 8}};
    m->cameras[3] = (gt_colmap_camera){.id = 2, .model = GT_COLMAP_SIMPLE_RADIAL, .width = 33, .height = 17,
                                       .nparams = 4, .params = {30, 16.5, 8.5, 0.1 / 3}};
    m->nimages = 3;
    m->images = calloc(3, sizeof *m->images);
    const char *names[3] = {"b.jpg", "a.png", "sub dir/c.jpg"};
    const uint32_t ids[3] = {5, 2, 9}, cams[3] = {1, 3, 7};
    for (int i = 0; i < 3; i++) {
        gt_colmap_image *im = &m->images[i];
        im->id = ids[i], im->camera_id = cams[i], im->name = dupstr(names[i]);
        double q[4] = {1, 0.1 * i, -0.2, 0.3 + i};
        double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        for (int k = 0; k < 4; k++) im->qvec[k] = q[k] / n;
        im->tvec[0] = 1.0 / 3 + i, im->tvec[1] = -2e-17, im->tvec[2] = 1e300;
        im->npoints2d = i == 0 ? 0 : (uint64_t)i + 1;
        im->xy = calloc(2 * (im->npoints2d + 1), sizeof *im->xy);
        im->point3d_id = calloc(im->npoints2d + 1, sizeof *im->point3d_id);
        for (uint64_t k = 0; k < im->npoints2d; k++) {
            im->xy[2 * k] = 10.5 + (double)k, im->xy[2 * k + 1] = 0.1 * (double)k;
            im->point3d_id[k] = k == 1 ? -1 : (int64_t)(10 + k);
        }
    }
    assert_int_equal(gt_colmap_points_alloc(&m->points, 4, true), GT_OK);
    gt_colmap_points *p = &m->points;
    p->n = 4;
    const uint64_t pid[4] = {10, 11, 12, 100};
    for (size_t i = 0; i < 4; i++) {
        p->id[i] = pid[i];
        for (int k = 0; k < 3; k++) p->xyz[3 * i + k] = (double)i - 1.0 / (k + 3);
        p->rgb[3 * i] = (uint8_t)(60 * i), p->rgb[3 * i + 1] = 255, p->rgb[3 * i + 2] = 0;
        p->error[i] = i == 3 ? -1 : 0.5 * (double)i;
        p->track_len[i] = i;
        p->track[i] = calloc(2 * i + 1, sizeof(uint32_t));
        for (size_t k = 0; k < i; k++) p->track[i][2 * k] = ids[k % 3], p->track[i][2 * k + 1] = (uint32_t)k;
    }
}

static void assert_models_equal(const gt_colmap_model *a, const gt_colmap_model *b, bool pts2d, bool tracks)
{
    assert_int_equal(a->ncameras, b->ncameras);
    for (size_t i = 0; i < a->ncameras; i++) {
        const gt_colmap_camera *x = &a->cameras[i], *y = &b->cameras[i];
        assert_int_equal(x->id, y->id);
        assert_int_equal(x->model, y->model);
        assert_int_equal(x->width, y->width);
        assert_int_equal(x->height, y->height);
        assert_int_equal(x->nparams, y->nparams);
        assert_memory_equal(x->params, y->params, sizeof(double) * (size_t)x->nparams);
    }
    assert_int_equal(a->nimages, b->nimages);
    for (size_t i = 0; i < a->nimages; i++) {
        const gt_colmap_image *x = &a->images[i], *y = &b->images[i];
        assert_int_equal(x->id, y->id);
        assert_int_equal(x->camera_id, y->camera_id);
        assert_string_equal(x->name, y->name);
        assert_memory_equal(x->qvec, y->qvec, sizeof x->qvec);
        assert_memory_equal(x->tvec, y->tvec, sizeof x->tvec);
        if (pts2d) {
            assert_int_equal(x->npoints2d, y->npoints2d);
            assert_non_null(y->xy);
            assert_memory_equal(x->xy, y->xy, 2 * sizeof(double) * x->npoints2d);
            assert_memory_equal(x->point3d_id, y->point3d_id, sizeof(int64_t) * x->npoints2d);
        } else {
            assert_null(y->xy);
        }
    }
    const gt_colmap_points *p = &a->points, *q = &b->points;
    assert_int_equal(p->n, q->n);
    assert_memory_equal(p->id, q->id, p->n * sizeof *p->id);
    assert_memory_equal(p->xyz, q->xyz, 3 * p->n * sizeof *p->xyz);
    assert_memory_equal(p->rgb, q->rgb, 3 * p->n);
    assert_memory_equal(p->error, q->error, p->n * sizeof *p->error);
    if (tracks) {
        assert_memory_equal(p->track_len, q->track_len, p->n * sizeof *p->track_len);
        for (size_t i = 0; i < p->n; i++) assert_memory_equal(p->track[i], q->track[i], 8 * p->track_len[i]);
    } else {
        assert_null(q->track);
    }
}

static const char *mkdir_tmp(const char *name)
{
    const char *d = io_tmp(name);
    mkdir(d, 0755);
    return d;
}

static const gt_colmap_read_opts KEEP = {.keep_points2d = true, .keep_tracks = true};

static void test_roundtrip(void **state)
{
    (void)state;
    gt_colmap_model m, b, t, b2;
    make_model(&m);
    char bdir[512], tdir[512], b2dir[512];
    snprintf(bdir, sizeof bdir, "%s", mkdir_tmp("rt_bin"));
    snprintf(tdir, sizeof tdir, "%s", mkdir_tmp("rt_txt"));
    snprintf(b2dir, sizeof b2dir, "%s", mkdir_tmp("rt_bin2"));
    GT_ASSERT_OK(gt_colmap_write(bdir, &m, true));
    GT_ASSERT_OK(gt_colmap_read(bdir, &KEEP, &b));
    assert_models_equal(&m, &b, true, true);
    /* bin -> txt -> bin: the same model, the same bytes */
    GT_ASSERT_OK(gt_colmap_write(tdir, &b, false));
    GT_ASSERT_OK(gt_colmap_read(tdir, &KEEP, &t));
    assert_models_equal(&m, &t, true, true);
    GT_ASSERT_OK(gt_colmap_write(b2dir, &t, true));
    const char *parts[3] = {"cameras.bin", "images.bin", "points3D.bin"};
    for (int k = 0; k < 3; k++) {
        char x[600], y[600];
        snprintf(x, sizeof x, "%s/%s", bdir, parts[k]), snprintf(y, sizeof y, "%s/%s", b2dir, parts[k]);
        GT_ASSERT_SAME_FILE(x, y);
    }
    GT_ASSERT_OK(gt_colmap_read(b2dir, &KEEP, &b2));
    assert_models_equal(&m, &b2, true, true);
    gt_colmap_free(&b2), gt_colmap_free(&t), gt_colmap_free(&b);
    /* without the optional parts: the same records, 2-D points and tracks
     * parsed past (the counts are still right) */
    GT_ASSERT_OK(gt_colmap_read(bdir, NULL, &b));
    assert_models_equal(&m, &b, false, false);
    for (size_t i = 0; i < m.nimages; i++) assert_int_equal(b.images[i].npoints2d, m.images[i].npoints2d);
    for (size_t i = 0; i < m.points.n; i++) assert_int_equal(b.points.track_len[i], m.points.track_len[i]);
    gt_colmap_free(&b);
    GT_ASSERT_OK(gt_colmap_read(tdir, NULL, &t));
    assert_models_equal(&m, &t, false, false);
    for (size_t i = 0; i < m.nimages; i++) assert_int_equal(t.images[i].npoints2d, m.images[i].npoints2d);
    gt_colmap_free(&t);
    /* skip_points */
    gt_colmap_read_opts sp = {.skip_points = true};
    GT_ASSERT_OK(gt_colmap_read(bdir, &sp, &b));
    assert_int_equal(b.points.n, 0);
    assert_int_equal(b.nimages, 3);
    gt_colmap_free(&b);
    gt_colmap_free(&m);
}

/* .bin is taken over .txt; each part on its own; a folder without one part
 * names it. */
static void test_folder(void **state)
{
    (void)state;
    gt_colmap_model m, r;
    make_model(&m);
    char d[512];
    snprintf(d, sizeof d, "%s", mkdir_tmp("both"));
    GT_ASSERT_OK(gt_colmap_write(d, &m, false));
    m.cameras[0].width = 1234; /* the binary one differs */
    GT_ASSERT_OK(gt_colmap_write(d, &m, true));
    GT_ASSERT_OK(gt_colmap_read(d, NULL, &r));
    assert_int_equal(r.cameras[0].width, 1234);
    assert_non_null(strstr(r.cameras_path, "cameras.bin"));
    gt_colmap_free(&r);
    char p[600];
    snprintf(p, sizeof p, "%s/images.bin", d);
    assert_int_equal(unlink(p), 0);
    GT_ASSERT_OK(gt_colmap_read(d, NULL, &r)); /* images.txt, the others .bin */
    assert_non_null(strstr(r.images_path, "images.txt"));
    assert_non_null(strstr(r.points_path, "points3D.bin"));
    gt_colmap_free(&r);
    snprintf(p, sizeof p, "%s/images.txt", d);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(gt_colmap_read(d, NULL, &r), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "has no images.bin or images.txt"));
    assert_non_null(strstr(gt_errmsg(), d));
    const char *e = mkdir_tmp("empty");
    assert_int_equal(gt_colmap_read(e, NULL, &r), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "holds no COLMAP model"));
    assert_non_null(strstr(gt_errmsg(), e));
    assert_int_equal(gt_colmap_read(io_tmp("no_such_folder"), NULL, &r), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "does not exist"));
    gt_colmap_free(&m);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n + 1);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* Reading path fails with GT_ERR_DATA, the place and the words. */
static void expect_fail(gt_status st, const char *path, long long byte, long line, const char *words)
{
    char place[1400];
    if (byte >= 0) snprintf(place, sizeof place, "(%s: byte %lld)", path, byte);
    else if (line > 0) snprintf(place, sizeof place, "(%s:%ld)", path, line);
    else place[0] = 0;
    if (st != GT_ERR_DATA || !strstr(gt_errmsg(), place) || !strstr(gt_errmsg(), words))
        fail_msg("status %d, message '%s'; wanted 3, '%s' and '%s'", st, gt_errmsg(), place, words);
}

static gt_status read_one(const char *path, bool keep)
{
    gt_colmap_model m = {0};
    gt_colmap_read_opts o = {.keep_points2d = keep, .keep_tracks = keep};
    gt_status st = gt_colmap_read_file(path, &o, &m);
    gt_colmap_free(&m);
    return st;
}

/* Every proper prefix of each binary file fails with "truncated" (or, for
 * the 8-byte count cut short, the count) at a byte offset inside the file. */
static void test_bin_truncated(void **state)
{
    (void)state;
    gt_colmap_model m;
    make_model(&m);
    char d[512];
    snprintf(d, sizeof d, "%s", mkdir_tmp("trunc_src"));
    GT_ASSERT_OK(gt_colmap_write(d, &m, true));
    const char *parts[3] = {"cameras.bin", "images.bin", "points3D.bin"};
    for (int k = 0; k < 3; k++) {
        char src[600];
        snprintf(src, sizeof src, "%s/%s", d, parts[k]);
        size_t n;
        unsigned char *b = slurp(src, &n);
        char dst[600];
        snprintf(dst, sizeof dst, "%s/%s", mkdir_tmp("trunc"), parts[k]);
        for (size_t len = 0; len < n; len++) {
            io_write_file(dst, b, len);
            for (int keep = 0; keep < 2; keep++) {
                gt_status st = read_one(dst, keep);
                const char *msg = gt_errmsg();
                char place[1400];
                snprintf(place, sizeof place, "(%s: byte ", dst);
                const char *at = strstr(msg, place);
                if (st != GT_ERR_DATA || !at || (!strstr(msg, "truncated") && !strstr(msg, "more than the file")))
                    fail_msg("%s cut to %zu bytes: status %d, '%s'", parts[k], len, st, msg);
                long long off = atoll(at + strlen(place));
                if (off < 0 || (size_t)off > len) fail_msg("%s cut to %zu: offset %lld", parts[k], len, off);
            }
        }
        /* a byte more: data after the last record */
        unsigned char *c = malloc(n + 1);
        memcpy(c, b, n);
        c[n] = 0;
        io_write_file(dst, c, n + 1);
        expect_fail(read_one(dst, false), dst, (long long)n, 0, "data after the last");
        free(c), free(b);
    }
    gt_colmap_free(&m);
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Single-field corruptions of the binary files, each at its offset. */
static void test_bin_broken(void **state)
{
    (void)state;
    gt_colmap_model m;
    make_model(&m);
    char d[512];
    snprintf(d, sizeof d, "%s", mkdir_tmp("bbroken"));
    GT_ASSERT_OK(gt_colmap_write(d, &m, true));
    char cam[600], img[600], pts[600], out[600];
    snprintf(cam, sizeof cam, "%s/cameras.bin", d), snprintf(img, sizeof img, "%s/images.bin", d);
    snprintf(pts, sizeof pts, "%s/points3D.bin", d);
    size_t nc, ni, np;
    unsigned char *c = slurp(cam, &nc), *im = slurp(img, &ni), *p = slurp(pts, &np);
    unsigned char *x = malloc(nc + ni + np);
    const char *o = mkdir_tmp("bbroken_out");
    snprintf(out, sizeof out, "%s/cameras.bin", o);
    /* camera 1 record at byte 8: id, model (12), width (16), height (24), params (32) */
    memcpy(x, c, nc), put_le(x + 12, 99, 4), io_write_file(out, x, nc);
    expect_fail(read_one(out, false), out, 12, 0, "unknown camera model id 99");
    memcpy(x, c, nc), put_le(x + 16, 0, 8), io_write_file(out, x, nc);
    expect_fail(read_one(out, false), out, 16, 0, "size 0x480");
    memcpy(x, c, nc), put_le(x + 24, (uint64_t)1 << 40, 8), io_write_file(out, x, nc);
    expect_fail(read_one(out, false), out, 16, 0, "outside 1..");
    double nan = NAN;
    memcpy(x, c, nc), memcpy(x + 32 + 8, &nan, 8), io_write_file(out, x, nc);
    expect_fail(read_one(out, false), out, 32, 0, "camera 1: parameter 2 is not a finite number");
    memcpy(x, c, nc), put_le(x, 1000, 8), io_write_file(out, x, nc);
    expect_fail(read_one(out, false), out, 0, 0, "count of 1000 cameras is more than the file holds");
    memcpy(x, c, nc), put_le(x, 3, 8), io_write_file(out, x, nc);
    expect_fail(read_one(out, false), out, -1, 0, "data after the last of the 3 cameras");
    /* a model changed to one with fewer parameters: the file no longer parses as it should */
    memcpy(x, c, nc), put_le(x + 12, GT_COLMAP_SIMPLE_PINHOLE, 4), io_write_file(out, x, nc);
    assert_int_equal(read_one(out, false), GT_ERR_DATA);

    snprintf(out, sizeof out, "%s/images.bin", o);
    /* image 1 at byte 8: id, qvec (12..44), tvec (44..68), camera id (68), name (72) "b.jpg\0", n2d (78) */
    memcpy(x, im, ni), memset(x + 12, 0, 32), io_write_file(out, x, ni);
    expect_fail(read_one(out, false), out, 8, 0, "image 5: the rotation quaternion is zero");
    double inf = INFINITY;
    memcpy(x, im, ni), memcpy(x + 52, &inf, 8), io_write_file(out, x, ni);
    expect_fail(read_one(out, false), out, 8, 0, "image 5: translation component 2 is not a finite number");
    memcpy(x, im, ni), put_le(x + 78, (uint64_t)1 << 60, 8), io_write_file(out, x, ni);
    expect_fail(read_one(out, false), out, 86, 0, "has 1152921504606846976 2-D points of 24 bytes");
    memcpy(x, im, ni), x[72] = 0, io_write_file(out, x, ni);
    expect_fail(read_one(out, false), out, 8, 0, "image 5 has an empty name");
    memcpy(x, im, ni), memset(x + 72, 'a', ni - 72), io_write_file(out, x, ni);
    expect_fail(read_one(out, false), out, -1, 0, "truncated: the file ends in the name of image record 1 of 3");

    snprintf(out, sizeof out, "%s/points3D.bin", o);
    /* point 1 at byte 8: id, xyz (16..40), rgb (40), error (43), track length (51), track (59) */
    memcpy(x, p, np), memcpy(x + 24, &nan, 8), io_write_file(out, x, np);
    expect_fail(read_one(out, false), out, 8, 0, "3-D point 10: position is not finite");
    memcpy(x, p, np), memcpy(x + 43, &inf, 8), io_write_file(out, x, np);
    expect_fail(read_one(out, false), out, 8, 0, "3-D point 10: error is not a finite number");
    memcpy(x, p, np), put_le(x + 51, 1000000, 8), io_write_file(out, x, np);
    expect_fail(read_one(out, true), out, 59, 0, "has a track of 1000000 elements");
    free(x), free(c), free(im), free(p);
    gt_colmap_free(&m);
}

/* A folder with the three text files given. */
static const char *text_model(const char *name, const char *cams, const char *imgs, const char *pts)
{
    static char d[512];
    snprintf(d, sizeof d, "%s", mkdir_tmp(name));
    char p[600];
    snprintf(p, sizeof p, "%s/cameras.txt", d), io_write_text(p, cams);
    snprintf(p, sizeof p, "%s/images.txt", d), io_write_text(p, imgs);
    snprintf(p, sizeof p, "%s/points3D.txt", d), io_write_text(p, pts);
    return d;
}

static const char *CAMS = "# comment\n\n1 PINHOLE 64 48 50 50 32 24\n2 SIMPLE_RADIAL 64 48 50 32 24 0.01\n";
static const char *IMGS = "# two lines per image\n1 1 0 0 0 0 0 0 1 a.png\n1 2 3 4.5 6 -1\n"
                          "2 1 0 0 0 1 0 0 2 b.png\n\n";
static const char *PTS = "3 0 0 1 255 0 10 0.5 1 0 2 1\n4 1 1 1 0 0 0 0.5\n";

static void check_text(const char *name, const char *cams, const char *imgs, const char *pts, const char *file,
                       long line, const char *words)
{
    const char *d = text_model(name, cams, imgs, pts);
    char path[700];
    snprintf(path, sizeof path, "%s/%s", d, file);
    gt_colmap_model m;
    gt_status st = gt_colmap_read(d, NULL, &m);
    expect_fail(st, path, -1, line, words);
}

static void test_text_broken(void **state)
{
    (void)state;
    gt_colmap_model m;
    const char *d = text_model("tgood", CAMS, IMGS, PTS);
    GT_ASSERT_OK(gt_colmap_read(d, &KEEP, &m));
    assert_int_equal(m.ncameras, 2), assert_int_equal(m.nimages, 2), assert_int_equal(m.points.n, 2);
    assert_int_equal(m.images[0].npoints2d, 2), assert_int_equal(m.images[1].npoints2d, 0);
    assert_int_equal(m.images[0].point3d_id[1], -1);
    assert_int_equal(m.points.track_len[0], 2), assert_int_equal(m.points.track[0][3], 1);
    assert_int_equal(m.cameras[1].model, GT_COLMAP_SIMPLE_RADIAL);
    gt_colmap_free(&m);

    check_text("t1", "1 PINHOLE 64 48 50 50 32\n", IMGS, PTS, "cameras.txt", 1, "model PINHOLE takes 4 parameters, not 3");
    check_text("t2", "\n1 PINHOLE 64 48 50 50 32 24 1\n", IMGS, PTS, "cameras.txt", 2, "takes 4 parameters, not 5");
    check_text("t3", "1 PINHOLE_X 64 48 50 50 32 24\n", IMGS, PTS, "cameras.txt", 1, "unknown camera model 'PINHOLE_X'");
    check_text("t4", "1 PINHOLE 64 48 50 fifty 32 24\n", IMGS, PTS, "cameras.txt", 1,
               "the camera parameter 'fifty' is not a number");
    check_text("t5", "1 PINHOLE 64 48 50 nan 32 24\n", IMGS, PTS, "cameras.txt", 1, "parameter 2 is not a finite");
    check_text("t6", "1 PINHOLE 0 48 50 50 32 24\n", IMGS, PTS, "cameras.txt", 1, "size 0x48");
    check_text("t7", "1 PINHOLE -64 48 50 50 32 24\n", IMGS, PTS, "cameras.txt", 1, "width '-64' is not a non-negative");
    check_text("t8", "1 PINHOLE 64 48 50 50 32 24\n#\n1 PINHOLE 64 48 50 50 32 24\n", IMGS, PTS, "cameras.txt", 3,
               "duplicate camera id 1 (the first on line 1)");
    check_text("t9", CAMS, "1 1 0 0 0 0 0 0 3 a.png\n\n", PTS, "images.txt", 1,
               "image 1 refers to camera 3, which");
    check_text("t10", CAMS, "1 1 0 0 0 0 0 0 1 a.png\n1 2 3 4\n", PTS, "images.txt", 2,
               "4 values, not a multiple of 3");
    check_text("t11", CAMS, "1 1 0 0 0 0 0 0 1 a.png\n1 2 x\n", PTS, "images.txt", 2, "'x'");
    check_text("t12", CAMS, "1 1 0 0 0 0 0 0 1\n\n", PTS, "images.txt", 1, "the line ends before the NAME");
    check_text("t13", CAMS, "1 0 0 0 0 0 0 0 1 a.png\n\n", PTS, "images.txt", 1, "quaternion is zero");
    check_text("t14", CAMS, "1 1 0 0 0 0 0 0 1 a.png\n\n1 1 0 0 0 0 0 0 1 b.png\n\n", PTS, "images.txt", 3,
               "duplicate image id 1 (the first on line 1)");
    check_text("t15", CAMS, "1 1 0 0 0 0 0 0 1 a.png\n\n2 1 0 0 0 0 0 0 1 a.png\n\n", PTS, "images.txt", 3,
               "images 1 and 2 have the same name 'a.png'");
    check_text("t16", CAMS, "1 1 0 0 0 inf 0 0 1 a.png\n\n", PTS, "images.txt", 1, "translation component 1");
    check_text("t17", CAMS, IMGS, "3 0 0 1 256 0 10 0.5\n", "points3D.txt", 1, "the R '256' is out of range");
    check_text("t18", CAMS, IMGS, "3 0 0 1 255 0 10 0.5 1\n", "points3D.txt", 1, "the track has 1 values");
    check_text("t19", CAMS, IMGS, "# x\n3 0 0 1 255 0 10 0.5\n3 0 0 1 255 0 10 0.5\n", "points3D.txt", 3,
               "duplicate 3-D point id 3 (the first on line 2)");
    check_text("t20", CAMS, IMGS, "3 0 0 1 255 0 10\n", "points3D.txt", 1, "the line ends before the ERROR");
    check_text("t21", CAMS, IMGS, "3 0 -nan 1 255 0 10 1\n", "points3D.txt", 1, "position is not finite");
    check_text("t22", CAMS, IMGS, "3 0 0 1 255 0 10 1 1 -2\n", "points3D.txt", 1, "not a non-negative integer");
}

/* testdata/io/colmap: a model written by hand (.txt) and its .bin (the
 * fuzz seeds): the values as written, and the same model from both. */
static void test_testdata(void **state)
{
    (void)state;
    const char *td = getenv("GT_TESTDATA");
    char d[1024], p[1100];
    snprintf(d, sizeof d, "%s/io/colmap", td ? td : "testdata");
    gt_colmap_model b, t;
    GT_ASSERT_OK(gt_colmap_read(d, &KEEP, &b)); /* the .bin files */
    assert_non_null(strstr(b.cameras_path, ".bin"));
    t = (gt_colmap_model){0};
    const char *parts[3] = {"cameras", "images", "points3D"};
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/%s.txt", d, parts[k]);
        GT_ASSERT_OK(gt_colmap_read_file(p, &KEEP, &t));
    }
    assert_models_equal(&t, &b, true, true);
    assert_int_equal(t.ncameras, 2);
    assert_int_equal(t.cameras[1].model, GT_COLMAP_OPENCV);
    assert_float_equal(t.cameras[1].params[6], 0.001, 0);
    assert_int_equal(t.nimages, 2);
    assert_string_equal(t.images[1].name, "dir/b.jpg");
    assert_int_equal(t.images[0].npoints2d, 2), assert_int_equal(t.images[0].point3d_id[1], -1);
    assert_float_equal(t.images[0].xy[2], 20.5, 0);
    assert_int_equal(t.images[1].npoints2d, 1), assert_int_equal(t.images[1].point3d_id[0], 4);
    assert_int_equal(t.points.n, 2), assert_int_equal(t.points.track_len[0], 2);
    assert_int_equal(t.points.rgb[0], 255), assert_float_equal(t.points.error[1], 0.5, 0);
    gt_colmap_free(&b), gt_colmap_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),   cmocka_unit_test(test_folder),      cmocka_unit_test(test_bin_truncated),
        cmocka_unit_test(test_bin_broken),  cmocka_unit_test(test_text_broken), cmocka_unit_test(test_testdata),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return r;
}
