/* The hand-off of a program's release at exit (common/release.h): opt-in
 * (GT_DEFER_RELEASE) and only on a GPU in Default compute mode; armed, the
 * program exits at once with its status; a helper keeps the kept files open
 * until the program is gone (and the linger after it), and closes every
 * other file at its start, so that a reader of the program's output sees its
 * end when the program exits. Without a kept file, the ordinary exit runs.
 * A FIFO stands for the driver's files: its reader sees the end of file when
 * the last process holding its write end lets go. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/release.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* whether fd's writers have all gone: POLLHUP within wait_ms */
static bool hung_up(int fd, int wait_ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, wait_ms) <= 0) return false;
    if (!(p.revents & POLLHUP)) {
        char buf[256];
        while (read(fd, buf, sizeof buf) > 0) {
        }
        return hung_up(fd, wait_ms);
    }
    return true;
}

static int open_files(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++) n += fcntl(fd, F_GETFD) != -1;
    return n;
}

static void exit_hands_kept_files_to_helper(void **state)
{
    (void)state;
    char dir[] = "/tmp/gt-release-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/driver", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int keep_r = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(keep_r >= 0);
    int out[2];
    assert_int_equal(pipe(out), 0);
    const unsigned linger = 3000; /* long beside a loaded machine's delays: the checks allow 1 s */

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(keep_r);
        close(out[0]);
        dup2(out[1], STDOUT_FILENO);
        close(out[1]);
        int w = open(fifo, O_WRONLY);
        if (w < 0) _exit(90);
        fputs("written before the exit\n", stdout); /* buffered: the hand-off flushes it */
        gt_release_exit(7, fifo, linger);
        _exit(91); /* not reached when the hand-off works */
    }
    close(out[1]);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    double t0 = now_ms();
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 7);
    /* the program's output is complete and ends now: the helper closed its copy */
    char buf[64] = {0};
    ssize_t got = 0, r;
    while ((r = read(out[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0) got += r;
    assert_string_equal(buf, "written before the exit\n");
    /* the kept file is still held: by the helper, for the linger */
    assert_false(hung_up(keep_r, 0));
    assert_true(now_ms() - t0 < linger - 1000); /* (the check above was in time to mean it) */
    /* and let go after it */
    assert_true(hung_up(keep_r, 20000));
    assert_true(now_ms() - t0 >= linger - 1000);
    close(keep_r);
    close(out[0]);
    unlink(fifo);
    rmdir(dir);
}

static void nothing_kept_returns_and_leaves_no_file(void **state)
{
    (void)state;
    int before = open_files();
    assert_int_equal(gt_release_exit(3, "/gt/no/such/prefix", 0), -1);
    assert_int_equal(open_files(), before);
}

static void clear_env(void)
{
    unsetenv("LD_PRELOAD");
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("NVTX_INJECTION64_PATH");
    unsetenv("GT_DEFER_RELEASE");
}

/* opt-in: only GT_DEFER_RELEASE (not "0") asks for it, and a tool that
 * watches the process's release vetoes it */
static void wanted_follows_the_environment(void **state)
{
    (void)state;
    clear_env();
    assert_false(gt_release_wanted());
    setenv("GT_DEFER_RELEASE", "0", 1);
    assert_false(gt_release_wanted());
    setenv("GT_DEFER_RELEASE", "", 1);
    assert_false(gt_release_wanted());
    setenv("GT_DEFER_RELEASE", "1", 1);
    assert_true(gt_release_wanted());
    setenv("LD_PRELOAD", "libsanitizer.so", 1);
    assert_false(gt_release_wanted());
    unsetenv("LD_PRELOAD");
    setenv("CUDA_INJECTION64_PATH", "/opt/tool/libinject.so", 1);
    assert_false(gt_release_wanted());
    unsetenv("CUDA_INJECTION64_PATH");
    setenv("NVTX_INJECTION64_PATH", "libsanitizer-collection.so", 1); /* as compute-sanitizer does */
    assert_false(gt_release_wanted());
    clear_env();
}

/* in a child: arm with the given environment value and compute mode; the
 * exit status says whether it armed (1) or not (0) */
static int armed_in_child(const char *defer, int compute_mode)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        clear_env();
        if (defer) setenv("GT_DEFER_RELEASE", defer, 1);
        gt_release_arm(compute_mode);
        _exit(gt_release_armed() ? 1 : 0);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    return WEXITSTATUS(ws);
}

/* by default nothing is armed; asked for, only on a GPU in Default mode
 * (not Exclusive Process 3, Prohibited 2, nor a mode that could not be read) */
static void arm_needs_the_request_and_default_mode(void **state)
{
    (void)state;
    assert_int_equal(armed_in_child(NULL, GT_COMPUTE_MODE_DEFAULT), 0);
    assert_int_equal(armed_in_child("0", GT_COMPUTE_MODE_DEFAULT), 0);
    assert_int_equal(armed_in_child("1", GT_COMPUTE_MODE_DEFAULT), 1);
    assert_int_equal(armed_in_child("1", 3), 0);
    assert_int_equal(armed_in_child("1", 2), 0);
    assert_int_equal(armed_in_child("1", -1), 0);
}

static int g_report_fd = -1;

static void earlier_handler(void)
{
    char c = gt_release_armed() ? 'A' : 'S';
    (void)!write(g_report_fd, &c, 1);
}

/* armed, with no driver file open (no GPU here): the handler steps aside,
 * and the exit handlers registered before it run, with the status */
static void armed_without_driver_files_exits_as_usual(void **state)
{
    (void)state;
    int rep[2];
    assert_int_equal(pipe(rep), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(rep[0]);
        g_report_fd = rep[1];
        clear_env();
        setenv("GT_DEFER_RELEASE", "1", 1);
        atexit(earlier_handler);
        gt_release_arm(GT_COMPUTE_MODE_DEFAULT);
        if (!gt_release_armed()) _exit(92);
        exit(5);
    }
    close(rep[1]);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 5);
    char c = 0;
    assert_int_equal(read(rep[0], &c, 1), 1);
    assert_int_equal(c, 'S');
    close(rep[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exit_hands_kept_files_to_helper),
        cmocka_unit_test(nothing_kept_returns_and_leaves_no_file),
        cmocka_unit_test(wanted_follows_the_environment),
        cmocka_unit_test(arm_needs_the_request_and_default_mode),
        cmocka_unit_test(armed_without_driver_files_exits_as_usual),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
