/* The GPU allocation test hook and the out-of-memory message (common/device.h),
 * without a GPU: parsing GT_FAIL_DEVICE_ALLOC / GT_COUNT_DEVICE_ALLOC, which
 * allocation fails, the message's form, the retry hint, and the process-wide
 * hook as the allocators see it (in forked children, since the variables are
 * read once per process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/device.h"
#include "common/log.h"
#include "common/status.h"

static void test_parse(void **state)
{
    (void)state;
    static const struct {
        const char *fail, *count;
        unsigned long fail_at;
        bool count_on;
    } cases[] = {
        {NULL, NULL, 0, false}, {"3", "1", 3, true},     {"0", "0", 0, false},
        {"", "", 0, false},     {"007", "yes", 7, true}, {"4294967297", NULL, 4294967297ul, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gt_alloc_hook h = {99, !cases[i].count_on};
        assert_int_equal(gt_alloc_hook_parse(cases[i].fail, cases[i].count, &h), GT_OK);
        assert_int_equal(h.fail_at, cases[i].fail_at);
        assert_int_equal(h.count, cases[i].count_on);
    }
}

static void test_parse_refuses_what_is_not_a_number(void **state)
{
    (void)state;
    static const char *const bad[] = {"abc", "-1", "3x", " 3", "+3", "1e3", "2.5",
                                      "99999999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gt_alloc_hook h = {99, true};
        assert_int_equal(gt_alloc_hook_parse(bad[i], NULL, &h), GT_ERR_USAGE);
        assert_non_null(strstr(gt_errmsg(), "GT_FAIL_DEVICE_ALLOC"));
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        assert_non_null(strstr(gt_errmsg(), quoted));
    }
}

static void test_only_the_nth_fails(void **state)
{
    (void)state;
    gt_alloc_hook h = {3, false};
    for (unsigned long k = 1; k <= 100; k++) assert_int_equal(gt_alloc_hook_fails(&h, k), k == 3);
    h.fail_at = 1;
    assert_true(gt_alloc_hook_fails(&h, 1));
    assert_false(gt_alloc_hook_fails(&h, 2));
    h.fail_at = 0;
    for (unsigned long k = 0; k <= 100; k++) assert_false(gt_alloc_hook_fails(&h, k));
}

static void test_message(void **state)
{
    (void)state;
    gt_status s = gt_gpu_oom_fail(GT_ALLOC_DEVICE, 3u << 20, "sort keys", "../kernels/gs/gs_raster.cu", 522,
                                  "12.0 MiB free of 80.0 MiB on the GPU");
    assert_int_equal(s, GT_ERR_GPU);
    assert_string_equal(gt_errmsg(), "out of GPU memory: 3145728 bytes (3.0 MiB) for sort keys "
                                     "(kernels/gs/gs_raster.cu:522; 12.0 MiB free of 80.0 MiB on the GPU)");
    assert_true(gt_gpu_oom(s));
    s = gt_gpu_oom_fail(GT_ALLOC_PINNED, 1536, "input frames", "kernels/stitch/pipeline.cu", 7, NULL);
    assert_string_equal(gt_errmsg(),
                        "out of pinned host memory: 1536 bytes (1.5 KiB) for input frames (kernels/stitch/pipeline.cu:7)");
    assert_true(gt_gpu_oom(s));
    s = gt_gpu_oom_fail(GT_ALLOC_DEVICE, (size_t)5 << 30, NULL, NULL, 0, "injected");
    assert_string_equal(gt_errmsg(), "out of GPU memory: 5368709120 bytes (5.00 GiB) for data (injected)");
    /* other GPU failures, and other statuses with the same words, are not it */
    assert_false(gt_gpu_oom(gt_fail(GT_ERR_GPU, "CUDA error in cudaMalloc: an illegal memory access")));
    assert_false(gt_gpu_oom(gt_fail(GT_ERR_RUNTIME, "out of GPU memory: but a runtime status")));
}

static void test_hint(void **state)
{
    (void)state;
    gt_gpu_oom_fail(GT_ALLOC_DEVICE, 4096, "mc vertices", "kernels/mc/mc_extract.cu", 756, "detail");
    gt_gpu_oom_hint("retry with --max-gpu-mem %s", "64M");
    assert_string_equal(gt_errmsg(), "out of GPU memory: 4096 bytes (4.0 KiB) for mc vertices "
                                     "(kernels/mc/mc_extract.cu:756; detail); retry with --max-gpu-mem 64M");
    assert_true(gt_gpu_oom(GT_ERR_GPU));
}

static void test_src_path(void **state)
{
    (void)state;
    assert_string_equal(gt_src_path("../kernels/mc/x.cu"), "kernels/mc/x.cu");
    assert_string_equal(gt_src_path("../../kernels/mc/x.cu"), "kernels/mc/x.cu");
    assert_string_equal(gt_src_path("kernels/mc/x.cu"), "kernels/mc/x.cu");
    assert_string_equal(gt_src_path(NULL), "?");
}

/* ---- the process-wide hook, in a child with the given environment; the
 * child's exit code says which check failed (0: all passed) and its stderr
 * comes back in err */
typedef int (*child_fn)(void);

static int in_child(child_fn fn, const char *fail, const char *count, char *err, size_t errlen)
{
    int pfd[2];
    if (pipe(pfd) != 0) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        if (fail) setenv("GT_FAIL_DEVICE_ALLOC", fail, 1);
        else unsetenv("GT_FAIL_DEVICE_ALLOC");
        if (count) setenv("GT_COUNT_DEVICE_ALLOC", count, 1);
        else unsetenv("GT_COUNT_DEVICE_ALLOC");
        gt_set_progname("hooktest");
        exit(fn()); /* exit, not _exit: the count is printed by an atexit handler */
    }
    close(pfd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < errlen && (r = read(pfd[0], err + n, errlen - 1 - n)) > 0) n += (size_t)r;
    err[n] = 0;
    close(pfd[0]);
    int ws = 0;
    if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws)) return -1;
    return WEXITSTATUS(ws);
}

static int child_third_fails(void)
{
    if (gt_alloc_hook_check(GT_ALLOC_DEVICE, 100, "first", "a.cu", 1) != GT_OK) return 10;
    if (gt_alloc_hook_check(GT_ALLOC_PINNED, 200, "second", "a.cu", 2) != GT_OK) return 11;
    gt_errmsg_clear();
    if (gt_alloc_hook_check(GT_ALLOC_DEVICE, 300, "third", "../kernels/a.cu", 3) != GT_ERR_GPU) return 12;
    if (strcmp(gt_errmsg(), "out of GPU memory: 300 bytes (0.3 KiB) for third (kernels/a.cu:3; allocation 3 "
                            "of the run, failed by GT_FAIL_DEVICE_ALLOC=3)") != 0)
        return 13;
    if (gt_alloc_hook_check(GT_ALLOC_DEVICE, 400, "fourth", "a.cu", 4) != GT_OK) return 14;
    unsigned long d = 0, p = 0;
    gt_alloc_hook_counts(&d, &p);
    if (d != 3 || p != 1) return 15;
    return 0;
}

static int child_pinned_counts_too(void)
{
    if (gt_alloc_hook_check(GT_ALLOC_PINNED, 8, "a", "a.cu", 1) != GT_OK) return 20;
    if (gt_alloc_hook_check(GT_ALLOC_PINNED, 8, "b", "a.cu", 2) != GT_ERR_GPU) return 21;
    if (strncmp(gt_errmsg(), "out of pinned host memory: 8 bytes", 34) != 0) return 22;
    return 0;
}

static int child_five(void)
{
    for (int i = 0; i < 5; i++)
        if (gt_alloc_hook_check(GT_ALLOC_DEVICE, 8, "x", "a.cu", i + 1) != GT_OK) return 30 + i;
    unsigned long d = 0, p = 0;
    gt_alloc_hook_counts(&d, &p);
    return d == 0 && p == 0 ? 0 : 40; /* nothing counted while the hook is off */
}

static int child_bad_value(void)
{
    gt_fail(GT_ERR_DATA, "an earlier message");
    if (gt_alloc_hook_check(GT_ALLOC_DEVICE, 8, "x", "a.cu", 1) != GT_ERR_USAGE) return 50;
    if (!strstr(gt_errmsg(), "GT_FAIL_DEVICE_ALLOC='two'")) return 51;
    if (gt_alloc_hook_check(GT_ALLOC_DEVICE, 8, "x", "a.cu", 2) != GT_ERR_USAGE) return 52; /* every one */
    return 0;
}

static void test_env_third_allocation_fails_and_count_printed(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(in_child(child_third_fails, "3", "1", err, sizeof err), 0);
    /* CUDA builds add what the CUDA allocators still hold: nothing here */
    static const char *const line = "hooktest: GPU allocations: 4 (3 device, 1 pinned host)";
    assert_memory_equal(err, line, strlen(line));
    if (strcmp(err + strlen(line), "\n") != 0)
        assert_string_equal(err + strlen(line), "; held at exit: 0 bytes in 0 device blocks, 0 pinned blocks\n");
    assert_int_equal(in_child(child_pinned_counts_too, "2", NULL, err, sizeof err), 0);
    assert_string_equal(err, ""); /* no count asked for */
}

static void test_env_unset_or_zero_is_off(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(in_child(child_five, NULL, NULL, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(in_child(child_five, "0", "0", err, sizeof err), 0);
    assert_string_equal(err, "");
}

static void test_env_bad_value_fails_every_allocation(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(in_child(child_bad_value, "two", NULL, err, sizeof err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_refuses_what_is_not_a_number),
        cmocka_unit_test(test_only_the_nth_fails),
        cmocka_unit_test(test_message),
        cmocka_unit_test(test_hint),
        cmocka_unit_test(test_src_path),
        cmocka_unit_test(test_env_third_allocation_fails_and_count_printed),
        cmocka_unit_test(test_env_unset_or_zero_is_off),
        cmocka_unit_test(test_env_bad_value_fails_every_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
