/* common/mapout: the parallel mmap appender writes exactly the bytes appended
 * (mixed small and large appends, segment boundaries, every mode), leaves the
 * file at the exact size, falls back to plain writes where its read-ahead
 * finds no room (and reports the error where the data finds none), and
 * declines what it cannot map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/mapout.h"
#include "gt_test.h"

static const size_t sizes[] = {6, (3u << 20) / 2, 6, (3u << 20) / 2 + 17, 10, 300000, (2u << 20) + 1, 5, 4096, 4095,
                               (1u << 20), 1, (5u << 20) + 3};
#define NS (sizeof sizes / sizeof sizes[0])

/* limit: RLIMIT_FSIZE in bytes while appending (0: none); returns the
 * status of the first failing append, or of close */
static gt_status run_limited(const char *mode, int threads, size_t seg, rlim_t limit)
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
    gt_mapout *m = gt_mapout_open(fd, (off_t)(sizeof hdr - 1), threads, seg);
    if (!m) fail_msg("gt_mapout_open declined a regular read-write file in %s", path);
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    if (limit) {
        struct rlimit lim = {limit, old.rlim_max};
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    }
    size_t at = sizeof hdr - 1;
    gt_status st = GT_OK;
    for (size_t i = 0; i < NS && !st; i++) {
        st = gt_mapout_write(m, want + at, sizes[i], path);
        if (st) break;
        at += sizes[i];
        assert_true(gt_mapout_offset(m) == (off_t)at);
    }
    gt_status cst = gt_mapout_close(m, !st, path);
    if (!st) st = cst;
    if (limit) assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    if (st) {
        close(fd);
        unlink(path);
        free(want);
        unsetenv("GT_MAPOUT_MODE");
        return st;
    }
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
    return GT_OK;
}

static void run_mode(const char *mode, int threads, size_t seg)
{
    GT_ASSERT_OK(run_limited(mode, threads, seg, 0));
}

static void test_bytes_exact(void **state)
{
    (void)state;
    const char *modes[3] = {"mmap", "pwrite", "auto"};
    for (int fa = 0; fa < 2; fa++) { /* space by sparse growth + populate, or by fallocate */
        if (fa) setenv("GT_MAPOUT_FALLOCATE", "1", 1);
        for (int k = 0; k < 3; k++) {
            run_mode(modes[k], 1, 0);
            run_mode(modes[k], 3, 3 * 4096); /* segments smaller than an append */
            run_mode(modes[k], 8, (size_t)1 << 20);
        }
    }
    unsetenv("GT_MAPOUT_FALLOCATE");
}

/* The filler maps and grows the file ahead of the data (64 MiB steps when
 * sparse, a segment at a time with fallocate). A file size limit just above
 * the data stops the read-ahead but not the data: the appender must finish
 * with plain writes, bytes exact. A limit below the data is a write error
 * naming EFBIG, never a SIGBUS or SIGXFSZ. */
static void test_fallback(void **state)
{
    (void)state;
    size_t total = 11;
    for (size_t i = 0; i < NS; i++) total += sizes[i];
    void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
    for (int fa = 0; fa < 2; fa++) {
        if (fa) setenv("GT_MAPOUT_FALLOCATE", "1", 1);
        GT_ASSERT_OK(run_limited("mmap", 3, (size_t)1 << 20, (rlim_t)total + 100));
        GT_ASSERT_OK(run_limited("mmap", 1, 3 * 4096, (rlim_t)total + 100));
        GT_ASSERT_OK(run_limited("auto", 3, (size_t)1 << 20, (rlim_t)total + 100));
        gt_status st = run_limited("mmap", 3, (size_t)1 << 20, (rlim_t)(total / 2));
        assert_int_equal(st, GT_ERR_RUNTIME);
        if (!strstr(gt_errmsg(), "too large")) fail_msg("expected EFBIG, got: %s", gt_errmsg());
    }
    unsetenv("GT_MAPOUT_FALLOCATE");
    signal(SIGXFSZ, old);
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
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
