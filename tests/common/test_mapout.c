/* common/mapout: the parallel mmap appender writes exactly the bytes appended
 * (mixed small and large appends, chunk boundaries, every mode), leaves the
 * file at the exact size, and declines what it cannot map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/mapout.h"
#include "gt_test.h"

static const size_t sizes[] = {6, (3u << 20) / 2, 6, (3u << 20) / 2 + 17, 10, 300000, (2u << 20) + 1, 5, 4096, 4095,
                               (1u << 20), 1, (5u << 20) + 3};
#define NS (sizeof sizes / sizeof sizes[0])

static void run_mode(const char *mode, int threads, size_t chunk)
{
    setenv("GT_MAPOUT_MODE", mode, 1);
    char path[] = "/tmp/gt_mapout_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char hdr[] = "HEADER 123\n";
    assert_int_equal(write(fd, hdr, sizeof hdr - 1), (ssize_t)(sizeof hdr - 1));
    size_t total = sizeof hdr - 1;
    for (size_t i = 0; i < NS; i++) total += sizes[i];
    unsigned char *want = malloc(total);
    memcpy(want, hdr, sizeof hdr - 1);
    gt_rng r = {77 + (uint64_t)threads};
    for (size_t i = sizeof hdr - 1; i < total; i++) want[i] = (unsigned char)(gt_rng_u64(&r) >> 56);
    gt_mapout *m = gt_mapout_open(fd, (off_t)(sizeof hdr - 1), threads, chunk);
    if (!m) fail_msg("gt_mapout_open declined a regular read-write file in %s", path);
    size_t at = sizeof hdr - 1;
    for (size_t i = 0; i < NS; i++) {
        GT_ASSERT_OK(gt_mapout_write(m, want + at, sizes[i], path));
        at += sizes[i];
        assert_true(gt_mapout_offset(m) == (off_t)at);
    }
    GT_ASSERT_OK(gt_mapout_close(m, 1, path));
    struct stat sb;
    assert_int_equal(fstat(fd, &sb), 0);
    assert_true((size_t)sb.st_size == total); /* chunks reserved beyond are cut off */
    unsigned char *got = malloc(total);
    assert_int_equal(pread(fd, got, total, 0), (ssize_t)total);
    size_t bad = total;
    for (size_t i = 0; i < total && bad == total; i++)
        if (got[i] != want[i]) bad = i;
    if (bad != total) fail_msg("mode %s, %d threads: byte %zu differs", mode, threads, bad);
    close(fd);
    unlink(path);
    free(want);
    free(got);
    unsetenv("GT_MAPOUT_MODE");
}

static void test_bytes_exact(void **state)
{
    (void)state;
    const char *modes[3] = {"mmap", "pwrite", "auto"};
    for (int fa = 0; fa < 2; fa++) { /* space by sparse growth + populate, or by fallocate */
        if (fa) setenv("GT_MAPOUT_FALLOCATE", "1", 1);
        for (int k = 0; k < 3; k++) {
            run_mode(modes[k], 1, 0);
            run_mode(modes[k], 3, 3 * 4096); /* chunks smaller than an append */
            run_mode(modes[k], 8, (size_t)1 << 20);
        }
    }
    unsetenv("GT_MAPOUT_FALLOCATE");
}

static void test_declines(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_null(gt_mapout_open(p[1], 0, 2, 0)); /* a pipe */
    close(p[0]);
    close(p[1]);
    char path[] = "/tmp/gt_mapout_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    fd = open(path, O_WRONLY); /* MAP_SHARED writes need read-write */
    assert_null(gt_mapout_open(fd, 0, 2, 0));
    close(fd);
    fd = open(path, O_RDWR);
    assert_null(gt_mapout_open(fd, 5, 2, 0)); /* not at the end: appends only */
    struct stat sb;
    assert_int_equal(fstat(fd, &sb), 0);
    assert_true(sb.st_size == 0); /* declining changed nothing */
    close(fd);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_exact),
        cmocka_unit_test(test_declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
