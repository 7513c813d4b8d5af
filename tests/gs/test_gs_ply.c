/* Reading the standard 3DGS PLY: field mapping (f_rest channel-major into
 * per-coefficient RGB triples, sigmoid opacity, exp scale, normalized w x y z
 * quaternion), SH degree from the f_rest count, any property order, and
 * clear errors for PLYs that are not 3DGS scenes. Needs lib/io's PLY
 * reader. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gs/gs.h"
#include "gt_test.h"

/* write a binary little-endian PLY with the given float properties; value
 * of property p of vertex v = val(v, name) */
static void write_ply(const char *path, int nv, const char *const *names, int np,
                      float (*val)(int v, const char *name))
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fprintf(f, "ply\nformat binary_little_endian 1.0\nelement vertex %d\n", nv);
    for (int p = 0; p < np; p++) fprintf(f, "property float %s\n", names[p]);
    fprintf(f, "end_header\n");
    for (int v = 0; v < nv; v++)
        for (int p = 0; p < np; p++) {
            float x = val(v, names[p]);
            fwrite(&x, 4, 1, f); /* the test machines are little endian */
        }
    fclose(f);
}

static float val(int v, const char *name)
{
    int k;
    if (sscanf(name, "f_rest_%d", &k) == 1) return 100.0f + k + 1000.0f * v;
    if (sscanf(name, "f_dc_%d", &k) == 1) return 10.0f + k + 1000.0f * v;
    if (!strcmp(name, "opacity")) return v == 0 ? 0.0f : 2.0f;
    if (sscanf(name, "scale_%d", &k) == 1) return logf(0.1f * (k + 1));
    if (!strcmp(name, "rot_0")) return 2.0f;
    if (!strncmp(name, "rot_", 4)) return 0.0f;
    if (!strcmp(name, "x")) return 1.0f + v;
    if (!strcmp(name, "y")) return 2.0f;
    if (!strcmp(name, "z")) return 3.0f;
    return 0.0f;
}

static void tmp_path(char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/gs_ply_test_%d.ply", (int)getpid());
}

static void test_fields_and_degree(void **state)
{
    (void)state;
    char path[256];
    tmp_path(path, sizeof path);
    for (int deg = 0; deg <= 3; deg++) {
        const char *names[80];
        char rest[45][24];
        int np = 0;
        /* a non-standard order: opacity and rot first, normals missing */
        names[np++] = "opacity";
        names[np++] = "rot_0"; names[np++] = "rot_1"; names[np++] = "rot_2"; names[np++] = "rot_3";
        names[np++] = "x"; names[np++] = "y"; names[np++] = "z";
        names[np++] = "f_dc_0"; names[np++] = "f_dc_1"; names[np++] = "f_dc_2";
        int nrest = 3 * ((deg + 1) * (deg + 1) - 1);
        for (int k = 0; k < nrest; k++) {
            snprintf(rest[k], sizeof rest[k], "f_rest_%d", k);
            names[np++] = rest[k];
        }
        names[np++] = "scale_0"; names[np++] = "scale_1"; names[np++] = "scale_2";
        write_ply(path, 2, names, np, val);
        gt_gs_scene s;
        GT_ASSERT_OK(gt_gs_scene_read_ply(path, &s));
        assert_int_equal(s.n, 2);
        assert_int_equal(s.sh_degree, deg);
        int K = (deg + 1) * (deg + 1);
        assert_int_equal(s.sh_k, K);
        for (int v = 0; v < 2; v++) {
            assert_float_equal(s.pos[3 * v], 1.0f + v, 0);
            assert_float_equal(s.opacity[v], 1.0 / (1.0 + exp(-(v == 0 ? 0.0 : 2.0))), 1e-6);
            for (int k = 0; k < 3; k++) assert_float_equal(s.scale[3 * v + k], 0.1f * (k + 1), 1e-6);
            assert_float_equal(s.rot[4 * v], 1.0f, 0);
            for (int c = 0; c < 3; c++) {
                assert_float_equal(s.sh[(v * K) * 3 + c], 10.0f + c + 1000.0f * v, 0);
                /* f_rest is channel-major: f_rest_{c*(K-1) + j} is coefficient 1+j of channel c */
                for (int j = 0; j < K - 1; j++)
                    assert_float_equal(s.sh[(v * K + 1 + j) * 3 + c], 100.0f + c * (K - 1) + j + 1000.0f * v, 0);
            }
        }
        gt_gs_scene_free(&s);
    }
    remove(path);
}

static void test_not_a_scene(void **state)
{
    (void)state;
    char path[256];
    tmp_path(path, sizeof path);
    const char *pts[] = {"x", "y", "z", "nx", "ny", "nz"};
    write_ply(path, 3, pts, 6, val);
    gt_gs_scene s;
    assert_int_equal(gt_gs_scene_read_ply(path, &s), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "not a 3D Gaussian Splatting scene"));
    assert_non_null(strstr(gt_errmsg(), "f_dc_0"));
    /* 5 f_rest: no SH degree has that many */
    const char *odd[] = {"x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "f_rest_0", "f_rest_1", "f_rest_2",
                         "f_rest_3", "f_rest_4", "opacity", "scale_0", "scale_1", "scale_2", "rot_0",
                         "rot_1", "rot_2", "rot_3"};
    write_ply(path, 1, odd, 19, val);
    assert_int_equal(gt_gs_scene_read_ply(path, &s), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "f_rest"));
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fields_and_degree),
                                       cmocka_unit_test(test_not_a_scene)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
