/* The threaded bulk reader (lib/io/reader_bulk.c) against plain fread of
 * the same bytes: gt_rd_bytes_bulk after an odd-length header, then the
 * reader's sequential calls where it left off; raw uint8/int16/float32 and
 * big-endian NRRD volumes larger than one 8 MiB chunk; a file that shrinks
 * after its size was checked (the short-data error, exit 3); stdin as a pipe
 * and as a regular file. GT_READ_THREADS forces 4 threads even on one core. */
#include "io_test_util.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "gt_test.h"
#include "io/reader.h"
#include "io/volume.h"

static unsigned char *random_bytes(size_t n, uint64_t seed)
{
    unsigned char *p = malloc(n);
    assert_non_null(p);
    gt_rng rng = {seed};
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t v = gt_rng_u64(&rng);
        memcpy(p + i, &v, 8);
    }
    for (size_t i = n & ~(size_t)7; i < n; i++) p[i] = (unsigned char)gt_rng_u64(&rng);
    return p;
}

/* the file's bytes [off, off+n) through stdio */
static unsigned char *fread_at(const char *path, long off, size_t n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, off, SEEK_SET), 0);
    unsigned char *p = malloc(n ? n : 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, n, f), n);
    fclose(f);
    return p;
}

static void test_reader_bulk_after_header(void **state)
{
    (void)state;
    /* 3 header lines (37 bytes), 21 MiB + 12345 bytes (not a chunk multiple), 100-byte tail */
    const size_t head = 37, body = (21u << 20) + 12345, tail = 100;
    unsigned char *all = random_bytes(head + body + tail, 7);
    memcpy(all, "line one\nsecond line here\nthird.....\n", head);
    const char *p = io_tmp("bulk.bin");
    io_write_file(p, all, head + body + tail);
    const char *counts[] = {"4", "1", "3"};
    for (int c = 0; c < 3; c++) {
        setenv("GT_READ_THREADS", counts[c], 1);
        gt_reader r;
        GT_ASSERT_OK(gt_rd_open(&r, p));
        char *line;
        for (int i = 0; i < 3; i++) GT_ASSERT_OK(gt_rd_line(&r, &line, NULL));
        assert_string_equal(line, "third.....");
        assert_int_equal(gt_rd_offset(&r), (long long)head);
        unsigned char *got = malloc(body);
        assert_int_equal(gt_rd_bytes_bulk(&r, got, body), body);
        assert_false(r.err);
        assert_int_equal(gt_rd_offset(&r), (long long)(head + body));
        unsigned char *want = fread_at(p, (long)head, body);
        assert_memory_equal(got, want, body);
        /* the sequential reader goes on where the bulk read stopped */
        unsigned char t[200];
        assert_int_equal(gt_rd_bytes(&r, t, 200), tail);
        assert_memory_equal(t, all + head + body, tail);
        /* at the end: a short count, no error */
        assert_int_equal(gt_rd_bytes_bulk(&r, got, body), 0);
        assert_false(r.err);
        gt_rd_close(&r);
        free(got);
        free(want);
    }
    unsetenv("GT_READ_THREADS");
    free(all);
}

/* a headerless raw file of X*Y*Z voxels of type t, read back and compared with fread */
static void check_raw(gt_voltype t, int64_t Z, uint64_t seed)
{
    int64_t dims[3] = {256, 128, Z};
    const size_t n = (size_t)(256 * 128 * Z) * gt_voltype_size(t);
    unsigned char *data = random_bytes(n, seed);
    const char *p = io_tmp("bulk.raw");
    io_write_file(p, data, n);
    gt_volume v;
    GT_ASSERT_OK(gt_raw_read(p, dims, t, NULL, NULL, false, &v));
    unsigned char *want = fread_at(p, 0, n);
    assert_memory_equal(v.data, want, n);
    gt_volume_free(&v);
    free(want);
    free(data);
}

static void test_raw_types(void **state)
{
    (void)state;
    setenv("GT_READ_THREADS", "4", 1);
    check_raw(GT_VOL_UINT8, 300, 1);   /* 9.4 MiB */
    check_raw(GT_VOL_INT16, 171, 2);   /* 10.7 MiB */
    check_raw(GT_VOL_FLOAT32, 161, 3); /* 20.1 MiB, three chunks */
    unsetenv("GT_READ_THREADS");
}

static void test_big_endian_nrrd(void **state)
{
    (void)state;
    setenv("GT_READ_THREADS", "4", 1);
    const gt_voltype types[] = {GT_VOL_INT16, GT_VOL_FLOAT32};
    const char *names[] = {"short", "float"};
    for (int k = 0; k < 2; k++) {
        const size_t es = gt_voltype_size(types[k]), nvox = 256u * 128u * 90u, n = nvox * es;
        unsigned char *le = random_bytes(n, 10 + (uint64_t)k);
        if (types[k] == GT_VOL_FLOAT32) /* finite values, so that equality is bytewise */
            for (size_t i = 0; i < nvox; i++) {
                float f = (float)((double)i * 0.25 - 1000.0);
                memcpy(le + 4 * i, &f, 4);
            }
        unsigned char *be = malloc(n);
        for (size_t i = 0; i < nvox; i++)
            for (size_t b = 0; b < es; b++) be[i * es + b] = le[i * es + es - 1 - b];
        char hdr[256];
        int hl = snprintf(hdr, sizeof hdr,
                          "NRRD0004\ntype: %s\ndimension: 3\nsizes: 256 128 90\nendian: big\nencoding: raw\n\n",
                          names[k]);
        const char *p = io_tmp("bulk_be.nrrd");
        FILE *f = fopen(p, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(hdr, 1, (size_t)hl, f), (size_t)hl);
        assert_int_equal(fwrite(be, 1, n, f), n);
        assert_int_equal(fclose(f), 0);
        gt_volume v;
        GT_ASSERT_OK(gt_nrrd_read(p, &v));
        assert_int_equal(v.info.type, types[k]);
        assert_memory_equal(v.data, le, n);
        gt_volume_free(&v);
        free(le);
        free(be);
    }
    unsetenv("GT_READ_THREADS");
}

static void test_short_file(void **state)
{
    (void)state;
    setenv("GT_READ_THREADS", "4", 1);
    int64_t dims[3] = {256, 256, 64}; /* 16 MiB float32 */
    const size_t n = 256u * 256u * 64u * 4u;
    unsigned char *data = random_bytes(n, 5);
    const char *p = io_tmp("bulk_short.raw");
    io_write_file(p, data, n);
    /* the file shrinks between the size check (open) and the read */
    gt_volume_stream *s;
    GT_ASSERT_OK(gt_volume_stream_open(p, dims, GT_VOL_FLOAT32, NULL, NULL, &s));
    assert_int_equal(truncate(p, (off_t)(n - 3 * 256 * 256 * 4 - 10)), 0);
    unsigned char *buf = malloc(n);
    assert_int_equal(gt_volume_stream_read(s, 0, 64, buf), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "data ends after"));
    assert_non_null(strstr(gt_errmsg(), "in slice z=60 of 64"));
    io_check_place(gt_errmsg(), p);
    gt_volume_stream_close(s);
    /* the data read before the end is the file's */
    assert_memory_equal(buf, data, 60u * 256u * 256u * 4u);
    /* a file already short when opened: named before anything is allocated */
    gt_volume v;
    assert_int_equal(gt_raw_read(p, dims, GT_VOL_FLOAT32, NULL, NULL, false, &v), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "volume data needs 16777216 bytes"));
    free(buf);
    free(data);
    unsetenv("GT_READ_THREADS");
}

static void test_stdin(void **state)
{
    (void)state;
    setenv("GT_READ_THREADS", "4", 1);
    int64_t dims[3] = {256, 256, 40}; /* 10 MiB int16 */
    const size_t n = 256u * 256u * 40u * 2u;
    unsigned char *data = random_bytes(n, 9);
    const char *p = io_tmp("bulk_stdin.raw");
    io_write_file(p, data, n);
    /* a pipe: the sequential path */
    int saved;
    pid_t pid = io_stdin_from_pipe(p, &saved);
    gt_volume v;
    gt_status st = gt_raw_read("-", dims, GT_VOL_INT16, NULL, NULL, false, &v);
    io_stdin_restore(pid, saved);
    GT_ASSERT_OK(st);
    assert_memory_equal(v.data, data, n);
    gt_volume_free(&v);
    /* stdin redirected from the regular file: the threaded path */
    int fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    saved = dup(0);
    dup2(fd, 0);
    close(fd);
    clearerr(stdin);
    st = gt_raw_read("-", dims, GT_VOL_INT16, NULL, NULL, false, &v);
    dup2(saved, 0);
    close(saved);
    clearerr(stdin);
    GT_ASSERT_OK(st);
    assert_memory_equal(v.data, data, n);
    gt_volume_free(&v);
    free(data);
    unsetenv("GT_READ_THREADS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_bulk_after_header),
        cmocka_unit_test(test_raw_types),
        cmocka_unit_test(test_big_endian_nrrd),
        cmocka_unit_test(test_short_file),
        cmocka_unit_test(test_stdin),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
