/* Volumes: NRRD round trips for every voxel type, hand-made NRRD variants
 * (NRRD0001 spacings big endian, gzip + space directions + iso, detached
 * header with line/byte skip, uchar without endian), headerless raw, slab
 * streaming, pipes, and the broken-input folder. */
#include "io_test_util.h"

#include <math.h>
#include <stdint.h>

#include "gt_test.h"
#include "io/volume.h"

static const char *td(void)
{
    const char *t = getenv("GT_TESTDATA");
    return t ? t : "testdata";
}

static const char *tdfile(const char *name)
{
    static char b[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(b[k], sizeof b[k], "%s/io/volume/%s", td(), name);
    return b[k];
}

static void fill_random(gt_volume *v, gt_rng *rng)
{
    size_t n = (size_t)(v->info.dims[0] * v->info.dims[1] * v->info.dims[2]) * gt_voltype_size(v->info.type);
    unsigned char *p = v->data;
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)gt_rng_u64(rng);
    if (v->info.type == GT_VOL_FLOAT32 || v->info.type == GT_VOL_FLOAT64) /* avoid NaN payload questions: finite values */
        for (size_t i = 0; i < n / gt_voltype_size(v->info.type); i++) {
            if (v->info.type == GT_VOL_FLOAT32) ((float *)v->data)[i] = (float)gt_rng_range(rng, -1e3, 1e3);
            else ((double *)v->data)[i] = gt_rng_range(rng, -1e3, 1e3);
        }
}

static void test_nrrd_roundtrip_all_types(void **state)
{
    (void)state;
    gt_rng rng = {3};
    for (int t = 0; t <= GT_VOL_FLOAT64; t++) {
        gt_volume v;
        memset(&v, 0, sizeof v);
        v.info.dims[0] = 5;
        v.info.dims[1] = 4;
        v.info.dims[2] = 3 + t;
        v.info.type = (gt_voltype)t;
        for (int a = 0; a < 3; a++) {
            for (int c = 0; c < 3; c++) v.info.dir[a][c] = gt_rng_range(&rng, -2, 2);
            v.info.origin[a] = gt_rng_range(&rng, -100, 100);
        }
        size_t n = (size_t)(5 * 4 * (3 + t)) * gt_voltype_size(v.info.type);
        v.data = malloc(n);
        fill_random(&v, &rng);
        const char *kv[] = {"iso:=0.123456789012345678", "note:=hello"};
        const char *p = io_tmp("rt.nrrd");
        GT_ASSERT_OK(gt_nrrd_write(p, &v, kv, 2));
        gt_volume r;
        GT_ASSERT_OK(gt_nrrd_read(p, &r));
        assert_int_equal(r.info.type, t);
        for (int a = 0; a < 3; a++) {
            assert_int_equal(r.info.dims[a], v.info.dims[a]);
            assert_true(r.info.origin[a] == v.info.origin[a]); /* %.17g round trips exactly */
            for (int c = 0; c < 3; c++) assert_true(r.info.dir[a][c] == v.info.dir[a][c]);
        }
        assert_true(r.info.has_iso);
        assert_true(r.info.iso == 0.123456789012345678);
        assert_false(r.info.gzip);
        assert_true(r.info.data_offset > 0);
        assert_memory_equal(r.data, v.data, n);
        gt_volume_free(&r);
        /* the same through gt_volume_read (content sniffing) and a pipe */
        int saved;
        pid_t pid = io_stdin_from_pipe(p, &saved);
        gt_status st = gt_volume_read("-", NULL, -1, NULL, NULL, &r);
        io_stdin_restore(pid, saved);
        GT_ASSERT_OK(st);
        assert_int_equal(r.info.data_offset, -1);
        assert_memory_equal(r.data, v.data, n);
        gt_volume_free(&r);
        gt_volume_free(&v);
    }
}

static void check_ramp(const gt_volume *v)
{
    assert_int_equal(v->info.dims[0], 4);
    assert_int_equal(v->info.dims[1], 3);
    assert_int_equal(v->info.dims[2], 2);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 4; i++) assert_true(gt_volume_get(v, i, j, k) == i + 10 * j + 100 * k);
}

static void test_handmade_variants(void **state)
{
    (void)state;
    gt_volume v;
    GT_ASSERT_OK(gt_nrrd_read(tdfile("be_int16_spacings.nrrd"), &v));
    assert_int_equal(v.info.type, GT_VOL_INT16);
    assert_true(v.info.big_endian);
    check_ramp(&v);
    assert_true(v.info.dir[0][0] == 0.5 && v.info.dir[1][1] == 0.25 && v.info.dir[2][2] == 2);
    assert_true(v.info.dir[0][1] == 0 && v.info.dir[2][0] == 0);
    gt_volume_free(&v);

    GT_ASSERT_OK(gt_nrrd_read(tdfile("float_gzip.nrrd"), &v));
    assert_int_equal(v.info.type, GT_VOL_FLOAT32);
    assert_true(v.info.gzip);
    assert_true(v.info.has_iso && v.info.iso == 42.5);
    assert_true(v.info.dir[0][1] == 1 && v.info.dir[1][0] == 1 && v.info.dir[2][2] == -2);
    assert_true(v.info.origin[0] == 1.5 && v.info.origin[1] == -2 && v.info.origin[2] == 3);
    check_ramp(&v);
    gt_volume_free(&v);

    GT_ASSERT_OK(gt_nrrd_read(tdfile("detached.nhdr"), &v));
    assert_int_equal(v.info.type, GT_VOL_UINT16);
    assert_non_null(strstr(v.info.data_path, "detached.raw"));
    assert_int_equal(v.info.data_offset, 19); /* two skipped lines (15 bytes) + byte skip 4 */
    assert_true(v.info.dir[0][0] == 1 && v.info.dir[1][1] == 1 && v.info.dir[2][2] == 1);
    check_ramp(&v);
    gt_volume_free(&v);

    GT_ASSERT_OK(gt_volume_read(tdfile("uchar.nrrd"), NULL, -1, NULL, NULL, &v));
    assert_int_equal(v.info.type, GT_VOL_UINT8);
    check_ramp(&v);
    gt_volume_free(&v);

    /* gzip through a pipe */
    int saved;
    pid_t pid = io_stdin_from_pipe(tdfile("float_gzip.nrrd"), &saved);
    gt_status st = gt_nrrd_read("-", &v);
    io_stdin_restore(pid, saved);
    GT_ASSERT_OK(st);
    check_ramp(&v);
    gt_volume_free(&v);
}

static void test_raw(void **state)
{
    (void)state;
    int64_t dims[3] = {4, 3, 2};
    double sp[3] = {1, 2, 3}, org[3] = {-1, 0, 1};
    gt_volume v;
    GT_ASSERT_OK(gt_raw_read(tdfile("plain_4x3x2_uint16.raw"), dims, GT_VOL_UINT16, sp, org, false, &v));
    check_ramp(&v);
    assert_true(v.info.dir[1][1] == 2 && v.info.origin[0] == -1);
    gt_volume_free(&v);
    GT_ASSERT_OK(gt_volume_read(tdfile("plain_4x3x2_uint16.raw"), dims, GT_VOL_UINT16, NULL, NULL, &v));
    check_ramp(&v);
    gt_volume_free(&v);
    /* big endian reading swaps */
    GT_ASSERT_OK(gt_raw_read(tdfile("plain_4x3x2_uint16.raw"), dims, GT_VOL_UINT16, NULL, NULL, true, &v));
    assert_true(gt_volume_get(&v, 1, 0, 0) == 256);
    gt_volume_free(&v);
    /* no dims: usage error naming --dims */
    assert_int_equal(gt_volume_read(tdfile("plain_4x3x2_uint16.raw"), NULL, -1, NULL, NULL, &v), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "--dims"));
    /* wrong sizes: too small a file, too large a file; also on a pipe */
    int64_t big[3] = {4, 3, 3}, small[3] = {4, 3, 1};
    assert_int_equal(gt_raw_read(tdfile("plain_4x3x2_uint16.raw"), big, GT_VOL_UINT16, NULL, NULL, false, &v),
                     GT_ERR_DATA);
    io_check_place(gt_errmsg(), tdfile("plain_4x3x2_uint16.raw"));
    assert_int_equal(gt_raw_read(tdfile("plain_4x3x2_uint16.raw"), small, GT_VOL_UINT16, NULL, NULL, false, &v),
                     GT_ERR_DATA);
    io_check_place(gt_errmsg(), tdfile("plain_4x3x2_uint16.raw"));
    int saved;
    pid_t pid = io_stdin_from_pipe(tdfile("plain_4x3x2_uint16.raw"), &saved);
    gt_status st = gt_raw_read("-", big, GT_VOL_UINT16, NULL, NULL, false, &v);
    io_stdin_restore(pid, saved);
    assert_int_equal(st, GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "<stdin>: byte 48"));
    /* zero / negative dims are usage errors */
    int64_t zero[3] = {4, 0, 2};
    assert_int_equal(gt_raw_read(tdfile("plain_4x3x2_uint16.raw"), zero, GT_VOL_UINT16, NULL, NULL, false, &v),
                     GT_ERR_USAGE);
}

static void test_stream_slabs(void **state)
{
    (void)state;
    gt_volume_stream *s;
    GT_ASSERT_OK(gt_volume_stream_open(tdfile("float_gzip.nrrd"), NULL, -1, NULL, NULL, &s));
    const gt_volume_info *in = gt_volume_stream_info(s);
    assert_int_equal(in->dims[2], 2);
    float slab[12];
    GT_ASSERT_OK(gt_volume_stream_read(s, 1, 1, slab)); /* skips z=0 */
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 4; i++) assert_true(slab[i + 4 * j] == i + 10 * j + 100);
    assert_int_equal(gt_volume_stream_read(s, 0, 1, slab), GT_ERR_USAGE); /* backwards */
    gt_volume_stream_close(s);

    int64_t dims[3] = {4, 3, 2};
    GT_ASSERT_OK(gt_volume_stream_open(tdfile("plain_4x3x2_uint16.raw"), dims, GT_VOL_UINT16, NULL, NULL, &s));
    uint16_t u[12];
    GT_ASSERT_OK(gt_volume_stream_read(s, 0, 1, u));
    assert_int_equal(u[5], 1 + 10);
    GT_ASSERT_OK(gt_volume_stream_read(s, 1, 1, u));
    assert_int_equal(u[11], 3 + 20 + 100);
    assert_int_equal(gt_volume_stream_read(s, 2, 1, u), GT_ERR_USAGE); /* past the end */
    gt_volume_stream_close(s);
}

static void test_types(void **state)
{
    (void)state;
    gt_voltype t;
    GT_ASSERT_OK(gt_voltype_parse("--type", "float", &t));
    assert_int_equal(t, GT_VOL_FLOAT32);
    GT_ASSERT_OK(gt_voltype_parse("--type", "unsigned short", &t));
    assert_int_equal(t, GT_VOL_UINT16);
    GT_ASSERT_OK(gt_voltype_parse("--type", "int16", &t));
    assert_int_equal(t, GT_VOL_INT16);
    assert_int_equal(gt_voltype_parse("--type", "float16", &t), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "--type"));
    for (int i = 0; i <= GT_VOL_FLOAT64; i++) {
        GT_ASSERT_OK(gt_voltype_parse(NULL, gt_voltype_name((gt_voltype)i), &t));
        assert_int_equal(t, i);
    }
    assert_int_equal(gt_voltype_size(GT_VOL_FLOAT64), 8);
}

static gt_status read_nrrd_path(const char *path)
{
    gt_volume v;
    gt_status st = gt_nrrd_read(path, &v);
    if (st == GT_OK) gt_volume_free(&v);
    return st;
}

static void test_broken_folder(void **state)
{
    (void)state;
    int n = io_check_broken_dir(tdfile("broken"), read_nrrd_path, getenv("GT_VERBOSE") != NULL);
    assert_true(n >= 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nrrd_roundtrip_all_types),
        cmocka_unit_test(test_handmade_variants),
        cmocka_unit_test(test_raw),
        cmocka_unit_test(test_stream_slabs),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_broken_folder),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
