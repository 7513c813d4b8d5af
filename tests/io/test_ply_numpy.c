/* Interop: numpy (through /usr/bin/python3 and ply_numpy_check.py, an
 * independent reader) parses the binary PLY we write, LE and BE, mixed
 * property types, and gets the same numbers. Skips (77) without numpy. */
#include "io_test_util.h"

#include <stdint.h>

#include "gt_test.h"
#include "io/ply.h"

static void test_numpy_reads_ours(void **state)
{
    (void)state;
    gt_rng rng = {9};
    const char *names[] = {"x", "y", "z", "red", "green", "blue", "quality", "label"};
    gt_ply_type types[] = {GT_PLY_FLOAT32, GT_PLY_FLOAT32, GT_PLY_FLOAT32, GT_PLY_UINT8,
                           GT_PLY_UINT8,   GT_PLY_UINT8,   GT_PLY_FLOAT64, GT_PLY_INT16};
    size_t nv = 500, nf = 700;
    gt_ply_mesh m;
    GT_ASSERT_OK(gt_ply_mesh_alloc(&m, nv, 8, names, types));
    for (size_t v = 0; v < nv; v++) {
        float *r = m.vdata + v * 8;
        for (int i = 0; i < 3; i++) r[i] = (float)gt_rng_range(&rng, -5, 5);
        for (int i = 3; i < 6; i++) r[i] = (float)(gt_rng_u64(&rng) % 256);
        r[6] = (float)gt_rng_range(&rng, 0, 1);
        r[7] = (float)((int)(gt_rng_u64(&rng) % 2000) - 1000);
    }
    m.nface = nf;
    m.face_start = malloc((nf + 1) * sizeof *m.face_start);
    m.face_idx = malloc(nf * 3 * sizeof *m.face_idx);
    for (size_t f = 0; f <= nf; f++) m.face_start[f] = (uint32_t)(3 * f);
    for (size_t i = 0; i < 3 * nf; i++) m.face_idx[i] = (int32_t)(gt_rng_u64(&rng) % nv);
    double *exp = malloc((nv * 8 + nf * 3) * sizeof *exp);
    for (size_t i = 0; i < nv * 8; i++) exp[i] = m.vdata[i];
    for (size_t i = 0; i < nf * 3; i++) exp[nv * 8 + i] = m.face_idx[i];
    const char *ep = io_tmp("expected.f64");
    io_write_file(ep, exp, (nv * 8 + nf * 3) * sizeof *exp);
    const char *src = getenv("GT_SOURCE_DIR");
    for (int fmt = 1; fmt < 3; fmt++) {
        const char *p = io_tmp("np.ply");
        GT_ASSERT_OK(gt_ply_write(p, &m, (gt_ply_format)fmt));
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/io/ply_numpy_check.py' '%s' '%s'", src ? src : ".", p,
                 ep);
        int rc = system(cmd);
        if (rc != 0) fail_msg("numpy check failed for format %d", fmt);
    }
    free(exp);
    gt_ply_free(&m);
}

int main(void)
{
    if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
        printf("SKIP: /usr/bin/python3 with numpy not available\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_numpy_reads_ours)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
