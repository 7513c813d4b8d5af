/* Point text: exact round trip (shortest round-trip numbers, written in
 * parallel chunks), separators and comments, PLY sniffing
 * (also through a pipe), and the broken-input folder. */
#include "io_test_util.h"

#include <math.h>

#include "gt_test.h"
#include "io/ply.h"
#include "io/points.h"

static const char *tdfile(const char *name)
{
    static char b[1024];
    const char *t = getenv("GT_TESTDATA");
    snprintf(b, sizeof b, "%s/io/points/%s", t ? t : "testdata", name);
    return b;
}

static void test_roundtrip(void **state)
{
    (void)state;
    gt_rng rng = {11};
    size_t n = 50000; /* several chunks of rows */
    double *p = malloc(n * 3 * sizeof *p);
    for (size_t i = 0; i < 3 * n; i++) p[i] = gt_rng_range(&rng, -1e6, 1e6) * pow(10, (double)(i % 40) - 20);
    p[0] = -0.0;
    p[1] = 5e-324;
    p[2] = 1.7976931348623157e308;
    const char *f = io_tmp("pts.txt");
    GT_ASSERT_OK(gt_points_write(f, p, n));
    double *q;
    size_t m;
    GT_ASSERT_OK(gt_points_read(f, &q, &m));
    assert_int_equal(m, n);
    assert_memory_equal(p, q, n * 3 * sizeof *p); /* the text is exact */
    free(q);
    GT_ASSERT_OK(gt_points_read_any(f, &q, &m));
    assert_int_equal(m, n);
    assert_memory_equal(p, q, n * 3 * sizeof *p);
    free(q);
    free(p);
}

static void test_mixed_separators(void **state)
{
    (void)state;
    double *q;
    size_t m;
    GT_ASSERT_OK(gt_points_read(tdfile("mixed.txt"), &q, &m));
    double want[] = {1, 2, 3, 4.5, -0.5, 6, 7, 8, 0, -0.0, 1e300, -2.5e-3};
    assert_int_equal(m, 4);
    assert_memory_equal(q, want, sizeof want);
    free(q);
    /* empty file: zero points, not an error */
    const char *f = io_tmp("empty.txt");
    io_write_text(f, "# nothing\n\n");
    GT_ASSERT_OK(gt_points_read(f, &q, &m));
    assert_int_equal(m, 0);
    free(q);
}

static void test_read_any_ply_and_pipe(void **state)
{
    (void)state;
    float xyz[] = {1, 2, 3, -4, 5.5f, 6};
    const char *f = io_tmp("p.ply");
    GT_ASSERT_OK(gt_ply_write_trimesh(f, 2, xyz, NULL, 0, NULL, NULL, 0, NULL, GT_PLY_BINARY_LE));
    double *q;
    size_t m;
    GT_ASSERT_OK(gt_points_read_any(f, &q, &m));
    assert_int_equal(m, 2);
    for (int i = 0; i < 6; i++) assert_true(q[i] == xyz[i]);
    free(q);
    int saved;
    pid_t pid = io_stdin_from_pipe(f, &saved);
    gt_status st = gt_points_read_any("-", &q, &m);
    io_stdin_restore(pid, saved);
    GT_ASSERT_OK(st);
    assert_int_equal(m, 2);
    assert_true(q[4] == 5.5);
    free(q);
    pid = io_stdin_from_pipe(tdfile("mixed.txt"), &saved);
    st = gt_points_read_any("-", &q, &m);
    io_stdin_restore(pid, saved);
    GT_ASSERT_OK(st);
    assert_int_equal(m, 4);
    free(q);
    /* a PLY without z */
    const char *g = io_tmp("noz.ply");
    io_write_text(g, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nend_header\n1 2\n");
    assert_int_equal(gt_points_read_any(g, &q, &m), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "noz.ply"));
}

/* Numbers are read in place (io/numtext's gt_scan_double): what strtod
 * accepted as a whole token is accepted, a token with anything after its
 * number is refused and named. */
static void test_token_syntax(void **state)
{
    (void)state;
    const char *f = io_tmp("syntax.txt");
    io_write_text(f, "0x1p3 .5 -2e-3\n1e5,2,3 # c\n+1\t-0 5.\n 7E+1 , 0.00000000000000000000000000000123 8\r\n");
    double *q;
    size_t m;
    GT_ASSERT_OK(gt_points_read(f, &q, &m));
    assert_int_equal(m, 4);
    const double want[12] = {8, 0.5, -2e-3, 1e5, 2, 3, 1, -0.0, 5, 70, 1.23e-30, 8};
    assert_memory_equal(q, want, sizeof want);
    free(q);
    static const char *bad[][2] = {
        {"1 2 3\n1.5abc 2 3\n", "not a number: '1.5abc' ("},
        {"1e 2 3\n", "not a number: '1e' ("},
        {"1 2-3\n", "not a number: '2-3' ("},
        {"1 2 3.0.0\n", "not a number: '3.0.0' ("},
        {"1 inf 3\n", "non-finite coordinate 'inf' ("},
        {"1 2 1e999\n", "non-finite coordinate '1e999' ("},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        io_write_text(f, bad[i][0]);
        assert_int_equal(gt_points_read(f, &q, &m), GT_ERR_DATA);
        if (!strstr(gt_errmsg(), bad[i][1])) fail_msg("'%s': message '%s'", bad[i][0], gt_errmsg());
        if (!strstr(gt_errmsg(), "syntax.txt:")) fail_msg("no file:line in '%s'", gt_errmsg());
    }
}

static gt_status read_pts(const char *path)
{
    double *q;
    size_t m;
    gt_status st = gt_points_read_any(path, &q, &m);
    if (st == GT_OK) free(q);
    return st;
}

/* gt_points_read_table: k = kmin or kmax values per line into float
 * properties named by names; the same count on every line; a PLY passes
 * through gt_ply_read */
static void test_read_table(void **state)
{
    (void)state;
    static const char *const cols[] = {"x", "y", "z", "nx", "ny", "nz", "red", "green", "blue"};
    const char *f = io_tmp("t.npts");
    FILE *fp = fopen(f, "w");
    fputs("# PoissonRecon-style oriented points\n1 2 3 0 0 1\n\n-1.5,2.25,3e-3, 1,0,0  # comma separated\n", fp);
    fclose(fp);
    gt_ply_mesh m;
    GT_ASSERT_OK(gt_points_read_table(f, cols, 6, 9, 3, &m));
    assert_int_equal(m.nvert, 2);
    assert_int_equal(m.nprops, 6);
    assert_string_equal(m.props[3].name, "nx");
    assert_true(m.vdata[0] == 1.0f && m.vdata[5] == 1.0f);
    assert_true(m.vdata[6] == -1.5f && m.vdata[7] == 2.25f && m.vdata[8] == 3e-3f && m.vdata[9] == 1.0f);
    gt_ply_free(&m);
    fp = fopen(f, "w");
    fputs("0 0 0 0 0 1 255 128 0\n", fp);
    fclose(fp);
    GT_ASSERT_OK(gt_points_read_table(f, cols, 6, 9, 3, &m));
    assert_int_equal(m.nprops, 9);
    assert_int_equal(gt_ply_find(&m, "green"), 7);
    assert_true(m.vdata[7] == 128.0f);
    gt_ply_free(&m);
    /* counts: 3 (no normals), 7, a line shorter than the first, too many */
    static const char *const bad[] = {"1 2 3\n", "1 2 3 4 5 6 7\n", "1 2 3 4 5 6\n1 2 3 4 5\n",
                                      "1 2 3 4 5 6 7 8 9 10\n", "", "# nothing\n"};
    static const char *const msg[] = {"expected 6 or 9 numbers", "expected 6 or 9 numbers", "on the first",
                                      "more than 9 numbers", "it is empty", "no point text"};
    for (int i = 0; i < 6; i++) {
        fp = fopen(f, "w");
        fputs(bad[i], fp);
        fclose(fp);
        assert_int_equal(gt_points_read_table(f, cols, 6, 9, 3, &m), GT_ERR_DATA);
        if (!strstr(gt_errmsg(), msg[i])) fail_msg("case %d: '%s' lacks '%s'", i, gt_errmsg(), msg[i]);
    }
    /* a PLY goes through the PLY reader */
    const char *g = io_tmp("t.ply");
    fp = fopen(g, "w");
    fputs("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
          "property float nx\nproperty float ny\nproperty float nz\nend_header\n4 5 6 0 1 0\n", fp);
    fclose(fp);
    GT_ASSERT_OK(gt_points_read_table(g, cols, 6, 9, 3, &m));
    assert_int_equal(m.nvert, 1);
    assert_true(m.vdata[0] == 4.0f && m.vdata[4] == 1.0f);
    gt_ply_free(&m);
}

/* Points far from 0 (UTM: x 4.1e6, where floats lie 0.5 apart) keep their
 * detail when the file has it (text, float64 PLY, ascii PLY digits): x y z
 * relative to an origin; float32 files and small coordinates as before. */
static const double far_pts[3][3] = {{4100000.125, 5300000.5, 12.25},
                                     {4100000.376, 5299999.998, 12.5},
                                     {4100001.001, 5300000.25, -3.75}};

static void write_far_ply(const char *path, const char *fmt, const char *type)
{
    FILE *fp = fopen(path, "wb");
    fprintf(fp, "ply\nformat %s 1.0\nelement vertex 3\nproperty %s x\nproperty %s y\nproperty %s z\n"
                "property float nx\nproperty float ny\nproperty float nz\nend_header\n", fmt, type, type, type);
    for (int i = 0; i < 3; i++) {
        const float n[3] = {0, 0, 1};
        if (strcmp(fmt, "ascii") == 0) {
            fprintf(fp, "%.17g %.17g %.17g 0 0 1\n", far_pts[i][0], far_pts[i][1], far_pts[i][2]);
        } else if (strcmp(type, "double") == 0) {
            fwrite(far_pts[i], sizeof(double), 3, fp); /* the tests run on little-endian hosts */
            fwrite(n, sizeof(float), 3, fp);
        } else {
            const float f[3] = {(float)far_pts[i][0], (float)far_pts[i][1], (float)far_pts[i][2]};
            fwrite(f, sizeof(float), 3, fp);
            fwrite(n, sizeof(float), 3, fp);
        }
    }
    fclose(fp);
}

/* the table's x y z against far_pts: the largest error */
static double far_error(const gt_ply_mesh *m)
{
    double e = 0;
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 3; a++)
            e = fmax(e, fabs((m->origin ? m->origin[a] : 0.0) + m->vdata[i * m->nprops + a] - far_pts[i][a]));
    return e;
}

static void test_far_from_origin(void **state)
{
    (void)state;
    static const char *const cols[] = {"x", "y", "z", "nx", "ny", "nz", "red", "green", "blue"};
    gt_ply_mesh m;
    /* text, float64 binary, ascii declared float: detail kept, origins the
     * first point's x and y rounded (z is near 0: none) */
    const char *t = io_tmp("far.npts");
    FILE *fp = fopen(t, "w");
    for (int i = 0; i < 3; i++) fprintf(fp, "%.17g %.17g %.17g 0 0 1\n", far_pts[i][0], far_pts[i][1], far_pts[i][2]);
    fclose(fp);
    const char *bd = io_tmp("far_d.ply"), *af = io_tmp("far_af.ply"), *bf = io_tmp("far_f.ply");
    write_far_ply(bd, "binary_little_endian", "double");
    write_far_ply(af, "ascii", "float");
    write_far_ply(bf, "binary_little_endian", "float");
    const char *const kept[] = {t, bd, af};
    for (int k = 0; k < 3; k++) {
        GT_ASSERT_OK(gt_points_read_table(kept[k], cols, 6, 9, 3, &m));
        assert_non_null(m.origin);
        assert_true(m.origin[0] == 4100000.0 && m.origin[1] == 5300000.0 && m.origin[2] == 0.0);
        if (far_error(&m) > 1e-6) fail_msg("%s: x y z off by %g", kept[k], far_error(&m));
        assert_true(m.vdata[5] == 1.0f); /* nz as it was */
        gt_ply_free(&m);
        /* not asked: floats as before, 0.5 apart out there */
        GT_ASSERT_OK(gt_points_read_table(kept[k], cols, 6, 9, 0, &m));
        assert_null(m.origin);
        assert_true(far_error(&m) > 0.05);
        gt_ply_free(&m);
    }
    /* float32 in the file: nothing to keep */
    GT_ASSERT_OK(gt_points_read_table(bf, cols, 6, 9, 3, &m));
    assert_null(m.origin);
    gt_ply_free(&m);
    /* gt_points_read_any: a float64 PLY's points to float precision about
     * the first point (exact for this one) */
    double *q;
    size_t n;
    GT_ASSERT_OK(gt_points_read_any(bd, &q, &n));
    assert_int_equal(n, 3);
    for (int i = 0; i < 9; i++)
        if (fabs(q[i] - far_pts[i / 3][i % 3]) > 1e-6) fail_msg("read_any, value %d: %.9f", i, q[i]);
    assert_true(q[0] == far_pts[0][0]);
    free(q);
    /* a mesh computed relative to an origin, written with it in double
     * (binary and ascii), reads back as the sums */
    const double origin[3] = {4100000.0, 5300000.0, 0.0};
    float rel[9];
    for (int i = 0; i < 9; i++) rel[i] = (float)(far_pts[i / 3][i % 3] - origin[i % 3]);
    const int32_t tri[3] = {0, 1, 2};
    const gt_ply_format fmts[2] = {GT_PLY_BINARY_LE, GT_PLY_ASCII};
    for (int k = 0; k < 2; k++) {
        const char *o = io_tmp("far_mesh.ply");
        GT_ASSERT_OK(gt_ply_write_trimesh_at(o, origin, 3, rel, NULL, 0, NULL, NULL, 1, tri, fmts[k]));
        GT_ASSERT_OK(gt_points_read_any(o, &q, &n));
        assert_int_equal(n, 3);
        for (int i = 0; i < 9; i++)
            if (fabs(q[i] - far_pts[i / 3][i % 3]) > 1e-6) fail_msg("format %d, value %d: %.9f", k, i, q[i]);
        free(q);
        gt_ply_mesh w;
        GT_ASSERT_OK(gt_ply_read(o, &w));
        assert_int_equal(w.props[0].type, GT_PLY_FLOAT64);
        assert_int_equal(w.nface, 1);
        gt_ply_free(&w);
    }
}

static void test_broken_folder(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tdfile("broken"));
    int n = io_check_broken_dir(dir, read_pts, getenv("GT_VERBOSE") != NULL);
    assert_true(n >= 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_mixed_separators),
        cmocka_unit_test(test_far_from_origin),
        cmocka_unit_test(test_read_any_ply_and_pipe),
        cmocka_unit_test(test_token_syntax),
        cmocka_unit_test(test_read_table),
        cmocka_unit_test(test_broken_folder),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
