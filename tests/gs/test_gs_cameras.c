/* cameras.json through cJSON: gt_gs_cameras_write then gt_gs_cameras_read
 * gives the cameras back (sizes, focal lengths, principal point, rotation
 * and centre exactly; the translation within rounding), the written file
 * has the reference's keys in its order, cx/cy only where they are not the
 * centre, and the reader takes cx/cy. Broken files: test_cameras_broken. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/output.h"
#include "gs_testutil.h"

static char tmpdir[] = "/tmp/gt_cams_XXXXXX";

static void cameras_sample(gt_gs_camera c[4])
{
    double eye[3] = {0.3, -1.7, 4.1}, tgt[3] = {0.1, 0.2, -0.3}, up[3] = {0, -1, 0};
    assert_int_equal(gt_gs_camera_lookat(&c[0], eye, tgt, up, 47.0, 1920, 1080), GT_OK);
    snprintf(c[0].name, sizeof c[0].name, "look \"at\" \\ caf\xc3\xa9");
    double centre[3] = {1, 2, 3};
    assert_int_equal(gt_gs_camera_orbit(&c[1], centre, up, 3.7, 20.0, 5, 17, 60.0, 641, 479), GT_OK);
    /* a c2w rotation about an oblique axis, printed with few digits elsewhere */
    double a = 0.7, s = sin(a), co = cos(a), k[3] = {0.48, 0.6, 0.64}; /* unit axis */
    double rot[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double cross = 0;
            if (i != j) {
                int m = 3 - i - j;
                cross = ((j == (i + 1) % 3) ? -1 : 1) * k[m];
            }
            rot[3 * i + j] = co * (i == j) + s * cross + (1 - co) * k[i] * k[j];
        }
    double pos[3] = {-12.25, 1e-3, 7.5e4};
    gt_gs_camera_from_c2w(&c[2], 7, 16384, 1e-3f, 3.25e4f, pos, rot);
    snprintf(c[2].name, sizeof c[2].name, "IMG_0042");
    c[3] = c[2];
    c[3].cx = 3.125f;      /* off the centre: written, read back */
    c[3].cy = 8191.75f;
    snprintf(c[3].name, sizeof c[3].name, "off-centre");
}

static void test_round_trip(void **state)
{
    (void)state;
    gt_gs_camera c[4], *r = NULL;
    cameras_sample(c);
    char path[256];
    snprintf(path, sizeof path, "%s/cameras.json", tmpdir);
    GT_ASSERT_OK(gt_gs_cameras_write(path, c, 4));
    int n = 0;
    GT_ASSERT_OK(gt_gs_cameras_read(path, &r, &n));
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r[i].width, c[i].width);
        assert_int_equal(r[i].height, c[i].height);
        assert_true(r[i].fx == c[i].fx && r[i].fy == c[i].fy);
        assert_true(r[i].cx == c[i].cx && r[i].cy == c[i].cy);
        assert_string_equal(r[i].name, c[i].name);
        for (int k = 0; k < 9; k++) assert_true(r[i].R[k] == c[i].R[k]);
        double scale = 0;
        for (int k = 0; k < 3; k++) {
            assert_true(r[i].campos[k] == c[i].campos[k]);
            scale = fmax(scale, fabs(c[i].campos[k]));
        }
        /* t = -R campos, recomputed by the reader in double from float R */
        for (int k = 0; k < 3; k++) assert_true(fabs(r[i].t[k] - c[i].t[k]) <= 1e-6 * (scale + 1));
    }
    free(r);
    /* no temporary file left beside it */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", tmpdir);
    assert_int_equal(system(cmd), 0);
}

/* The reference's keys in its order (id, img_name, width, height, position,
 * rotation, fy, fx), then cx, cy only for the off-centre camera. */
static void test_layout(void **state)
{
    (void)state;
    gt_gs_camera c[4];
    cameras_sample(c);
    char path[256];
    snprintf(path, sizeof path, "%s/layout.json", tmpdir);
    GT_ASSERT_OK(gt_gs_cameras_write(path, c, 4));
    unsigned char *text;
    size_t len;
    GT_ASSERT_OK(gt_in_read_all(path, &text, &len));
    cJSON *root = cJSON_ParseWithLength((const char *)text, len);
    assert_non_null(root);
    assert_true(cJSON_IsArray(root));
    static const char *keys[] = {"id", "img_name", "width", "height", "position", "rotation", "fy", "fx",
                                 "cx", "cy"};
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, root)
    {
        int nk = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, o)
        {
            assert_true(nk < 10);
            assert_string_equal(it->string, keys[nk]);
            nk++;
        }
        assert_int_equal(nk, i == 3 ? 10 : 8);
        assert_int_equal(cJSON_GetObjectItem(o, "id")->valueint, i);
        const cJSON *rot = cJSON_GetObjectItem(o, "rotation");
        /* rows of camera-to-world: row r is column r of R (world -> camera) */
        for (int rr = 0; rr < 3; rr++)
            for (int cc = 0; cc < 3; cc++)
                assert_true((float)cJSON_GetArrayItem(cJSON_GetArrayItem(rot, rr), cc)->valuedouble ==
                            c[i].R[3 * cc + rr]);
        i++;
    }
    assert_int_equal(i, 4);
    cJSON_Delete(root);
    free(text);
}

static void test_read_principal_point(void **state)
{
    (void)state;
    const char *json = "[{\"width\": 64, \"height\": 48, \"position\": [0, 0, -4],"
                       " \"rotation\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], \"fy\": 50, \"fx\": 51,"
                       " \"cx\": 30.25, \"cy\": 20},\n"
                       " {\"width\": 65, \"height\": 49, \"position\": [0, 0, -4],"
                       " \"rotation\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], \"fy\": 50, \"fx\": 51}]";
    gt_gs_camera *c;
    int n;
    GT_ASSERT_OK(gt_gs_cameras_parse(json, strlen(json), "c.json", &c, &n));
    assert_int_equal(n, 2);
    assert_true(c[0].cx == 30.25f && c[0].cy == 20.0f);
    assert_true(c[1].cx == 32.5f && c[1].cy == 24.5f);
    free(c);
}

static void test_write_errors(void **state)
{
    (void)state;
    gt_gs_camera c[4];
    cameras_sample(c);
    char path[256];
    snprintf(path, sizeof path, "%s/no/such/dir/cameras.json", tmpdir);
    assert_int_equal(gt_gs_cameras_write(path, c, 4), GT_ERR_RUNTIME);
    assert_non_null(strstr(gt_errmsg(), "no/such/dir"));
    /* an empty list is an empty array, which reads back as no cameras */
    snprintf(path, sizeof path, "%s/empty.json", tmpdir);
    GT_ASSERT_OK(gt_gs_cameras_write(path, c, 0));
    gt_gs_camera *r = NULL;
    int n = -1;
    GT_ASSERT_OK(gt_gs_cameras_read(path, &r, &n));
    assert_int_equal(n, 0);
    free(r);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_read_principal_point),
        cmocka_unit_test(test_write_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
