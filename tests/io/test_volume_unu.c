/* Interop with teem's unu: unu reads the NRRD we write (unu minmax, unu
 * save to gzip and to big endian) and we read what unu writes (those files,
 * plus unu make with spacings, attached and as a detached header).
 * Skips (77) when unu is not installed. */
#include "io_test_util.h"

#include <stdint.h>

#include "gt_test.h"
#include "io/volume.h"

static const char *unu = "unu"; /* Debian names it teem-unu */

static int run(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0) fail_msg("command failed (%d): %s", rc, cmd);
    return rc;
}

static void same_data(const gt_volume *a, const gt_volume *b)
{
    assert_int_equal(a->info.type, b->info.type);
    for (int i = 0; i < 3; i++) assert_int_equal(a->info.dims[i], b->info.dims[i]);
    size_t n = (size_t)(a->info.dims[0] * a->info.dims[1] * a->info.dims[2]) * gt_voltype_size(a->info.type);
    assert_memory_equal(a->data, b->data, n);
}

static void test_unu_reads_ours_and_we_read_unu(void **state)
{
    (void)state;
    gt_rng rng = {5};
    gt_volume v;
    memset(&v, 0, sizeof v);
    v.info.dims[0] = 7;
    v.info.dims[1] = 5;
    v.info.dims[2] = 3;
    v.info.type = GT_VOL_FLOAT32;
    for (int a = 0; a < 3; a++) v.info.dir[a][a] = 0.5 * (a + 1);
    v.info.origin[0] = 10;
    float *d = malloc(7 * 5 * 3 * sizeof *d);
    for (int i = 0; i < 105; i++) d[i] = (float)(int)gt_rng_range(&rng, -1000, 1000); /* integers: exact in %g */
    d[17] = -4321;
    d[33] = 4321;
    v.data = d;
    const char *ours = io_tmp("ours.nrrd");
    GT_ASSERT_OK(gt_nrrd_write(ours, &v, NULL, 0));

    /* unu reads ours */
    char cmd[4096];
    const char *mm = io_tmp("minmax.txt");
    snprintf(cmd, sizeof cmd, "%s minmax '%s' > '%s'", unu, ours, mm);
    run(cmd);
    FILE *f = fopen(mm, "r");
    assert_non_null(f);
    char buf[512] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    const char *pmin = strstr(buf, "min:"), *pmax = strstr(buf, "max:");
    assert_non_null(pmin);
    assert_non_null(pmax);
    assert_true(atof(pmin + 4) == -4321.0);
    assert_true(atof(pmax + 4) == 4321.0);

    /* unu re-saves ours as gzip and as big endian raw: we read both */
    const char *gz = io_tmp("unu_gz.nrrd"), *be = io_tmp("unu_be.nrrd");
    snprintf(cmd, sizeof cmd, "%s save -f nrrd -e gzip -i '%s' -o '%s'", unu, ours, gz);
    run(cmd);
    snprintf(cmd, sizeof cmd, "%s save -f nrrd -e raw -en big -i '%s' -o '%s'", unu, ours, be);
    run(cmd);
    gt_volume r;
    GT_ASSERT_OK(gt_nrrd_read(gz, &r));
    same_data(&v, &r);
    assert_true(r.info.gzip);
    for (int a = 0; a < 3; a++) assert_true(r.info.dir[a][a] == v.info.dir[a][a]);
    assert_true(r.info.origin[0] == 10);
    gt_volume_free(&r);
    GT_ASSERT_OK(gt_nrrd_read(be, &r));
    assert_true(r.info.big_endian);
    same_data(&v, &r);
    gt_volume_free(&r);

    /* unu make from raw data: attached and detached header, with spacings */
    uint16_t raw[4 * 3 * 2];
    for (int i = 0; i < 24; i++) raw[i] = (uint16_t)(i * 1000 + 7);
    const char *rawp = io_tmp("data.raw");
    io_write_file(rawp, raw, sizeof raw);
    const char *made = io_tmp("made.nrrd"), *nhdr = io_tmp("made.nhdr");
    snprintf(cmd, sizeof cmd, "%s make -i '%s' -t ushort -s 4 3 2 -sp 1 2 3 -e raw -en little -o '%s'", unu, rawp, made);
    run(cmd);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s make -h -i ./data.raw -t ushort -s 4 3 2 -sp 1 2 3 -e raw -en little -o made.nhdr",
             io_tmpdir, unu);
    run(cmd);
    for (int k = 0; k < 2; k++) {
        GT_ASSERT_OK(gt_nrrd_read(k ? nhdr : made, &r));
        assert_int_equal(r.info.type, GT_VOL_UINT16);
        assert_memory_equal(r.data, raw, sizeof raw);
        assert_true(r.info.dir[0][0] == 1 && r.info.dir[1][1] == 2 && r.info.dir[2][2] == 3);
        gt_volume_free(&r);
    }
    free(d);
}

int main(void)
{
    if (system("command -v unu >/dev/null 2>&1") != 0) unu = "teem-unu";
    if (system("command -v teem-unu >/dev/null 2>&1") != 0 && strcmp(unu, "teem-unu") == 0) {
        printf("SKIP: unu (teem) not installed\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unu_reads_ours_and_we_read_unu),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
