/* The path guard (common/guard.h): outputs never replace inputs, whatever the
 * spelling of the path; missing directories and format/extension mismatches
 * are named before any work. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/guard.h"
#include "common/log.h"

static char dir[256];

static void path(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void write_file(const char *name, const char *text)
{
    char p[512];
    path(p, sizeof p, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gt_guard_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    write_file("a.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\n");
    write_file("b.mtx", "%%MatrixMarket matrix array real general\n1 1\n2\n");
    char p[512];
    path(p, sizeof p, "sub");
    mkdir(p, 0777);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* one input, one output: the status of the check */
static gt_status check1(const char *in, const char *out)
{
    gt_guard g;
    gt_guard_init(&g);
    gt_guard_input(&g, in, "the matrix");
    gt_guard_output(&g, out, "-o", "mtx", "--out-format");
    gt_status st = gt_guard_check(&g);
    gt_guard_free(&g);
    return st;
}

static void test_same_path_refused_naming_both(void **state)
{
    (void)state;
    char a[512];
    path(a, sizeof a, "a.mtx");
    assert_int_equal(check1(a, a), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "-o"));
    assert_non_null(strstr(gt_errmsg(), "the matrix"));
    assert_non_null(strstr(gt_errmsg(), "a.mtx"));
    assert_non_null(strstr(gt_errmsg(), "never replaces an input"));
}

static void test_other_file_allowed(void **state)
{
    (void)state;
    char a[512], b[512], n[512];
    path(a, sizeof a, "a.mtx");
    path(b, sizeof b, "b.mtx");
    path(n, sizeof n, "new.mtx");
    assert_int_equal(check1(a, b), GT_OK); /* an existing output that is not an input is replaced */
    assert_int_equal(check1(a, n), GT_OK); /* a new file cannot clash with an input */
    /* a device is written in place, never replaced: reading it is no clash */
    assert_int_equal(check1("/dev/null", "/dev/null"), GT_OK);
}

static void test_hard_link_refused(void **state)
{
    (void)state;
    char a[512], l[512];
    path(a, sizeof a, "a.mtx");
    path(l, sizeof l, "hard.mtx");
    unlink(l);
    assert_int_equal(link(a, l), 0);
    assert_int_equal(check1(a, l), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "hard.mtx"));
    assert_non_null(strstr(gt_errmsg(), "a.mtx"));
    unlink(l);
}

static void test_symlink_refused_both_ways(void **state)
{
    (void)state;
    char a[512], l[512];
    path(a, sizeof a, "a.mtx");
    path(l, sizeof l, "soft.mtx");
    unlink(l);
    assert_int_equal(symlink("a.mtx", l), 0);
    assert_int_equal(check1(a, l), GT_ERR_USAGE); /* output through the link */
    assert_int_equal(check1(l, a), GT_ERR_USAGE); /* input through the link */
    unlink(l);
}

static void test_other_spellings_refused(void **state)
{
    (void)state;
    char a[512], b[512];
    path(a, sizeof a, "a.mtx");
    path(b, sizeof b, "sub/../a.mtx");
    assert_int_equal(check1(a, b), GT_ERR_USAGE);
    path(b, sizeof b, "./a.mtx");
    assert_int_equal(check1(a, b), GT_ERR_USAGE);
    path(b, sizeof b, "sub/.././/a.mtx");
    assert_int_equal(check1(b, a), GT_ERR_USAGE);
    /* relative to the working directory */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(check1("a.mtx", "./a.mtx"), GT_ERR_USAGE);
    assert_int_equal(check1("./a.mtx", a), GT_ERR_USAGE);
    assert_int_equal(check1("a.mtx", "b.mtx"), GT_OK);
    assert_int_equal(chdir(cwd), 0);
}

static void test_two_new_outputs_one_file(void **state)
{
    (void)state;
    char a[512], o1[512], o2[512];
    path(a, sizeof a, "a.mtx");
    path(o1, sizeof o1, "out.mtx");
    path(o2, sizeof o2, "sub/../out.mtx");
    gt_guard g;
    gt_guard_init(&g);
    gt_guard_input(&g, a, "the matrix");
    gt_guard_output(&g, o1, "-o", "mtx", NULL);
    gt_guard_output(&g, o2, "--history", "text", NULL);
    assert_int_equal(gt_guard_check(&g), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "same file"));
    assert_non_null(strstr(gt_errmsg(), "--history"));
    gt_guard_free(&g);
    /* different names: fine */
    path(o2, sizeof o2, "sub/out.mtx");
    gt_guard_init(&g);
    gt_guard_output(&g, o1, "-o", "mtx", NULL);
    gt_guard_output(&g, o2, "--history", NULL, NULL);
    assert_int_equal(gt_guard_check(&g), GT_OK);
    gt_guard_free(&g);
}

/* run a check with fd 0 and fd 1 replaced */
static gt_status check_std(int in_fd, int out_fd, const char *in, const char *out)
{
    int s0 = dup(0), s1 = dup(1);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    gt_status st = check1(in, out);
    dup2(s0, 0);
    dup2(s1, 1);
    close(s0);
    close(s1);
    return st;
}

static void test_dash_exempt_unless_a_regular_file(void **state)
{
    (void)state;
    char a[512], o[512];
    path(a, sizeof a, "a.mtx");
    path(o, sizeof o, "o.mtx");
    int p[2];
    assert_int_equal(pipe(p), 0);
    /* pipes on both ends: nothing to compare */
    assert_int_equal(check_std(p[0], p[1], "-", "-"), GT_OK);
    assert_int_equal(check_std(p[0], p[1], a, "-"), GT_OK);
    /* standard input is a.mtx and the output is a.mtx */
    int fa = open(a, O_RDONLY);
    assert_true(fa >= 0);
    assert_int_equal(check_std(fa, p[1], "-", a), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "standard input"));
    assert_int_equal(check_std(fa, p[1], "-", o), GT_OK);
    /* standard output appends to a.mtx, which is also read */
    int fw = open(a, O_WRONLY | O_APPEND);
    assert_true(fw >= 0);
    assert_int_equal(check_std(p[0], fw, a, "-"), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "standard output"));
    close(fa);
    close(fw);
    close(p[0]);
    close(p[1]);
}

static void test_two_stdin_inputs_refused(void **state)
{
    (void)state;
    gt_guard g;
    gt_guard_init(&g);
    gt_guard_input(&g, "-", "the matrix");
    gt_guard_input(&g, "-", "-b");
    assert_int_equal(gt_guard_check(&g), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "standard input"));
    gt_guard_free(&g);
    gt_guard_init(&g);
    gt_guard_output(&g, "-", "-o", NULL, NULL);
    gt_guard_output(&g, "-", "--preview", NULL, NULL);
    assert_int_equal(gt_guard_check(&g), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "--preview"));
    gt_guard_free(&g);
}

static void test_missing_directory_and_directories(void **state)
{
    (void)state;
    char a[512], o[512];
    path(a, sizeof a, "a.mtx");
    path(o, sizeof o, "nodir/x.mtx");
    assert_int_equal(check1(a, o), GT_ERR_RUNTIME);
    assert_non_null(strstr(gt_errmsg(), "does not exist"));
    assert_non_null(strstr(gt_errmsg(), "nodir"));
    path(o, sizeof o, "a.mtx/x.mtx"); /* a file used as a directory */
    assert_int_equal(check1(a, o), GT_ERR_RUNTIME);
    assert_non_null(strstr(gt_errmsg(), "not a directory"));
    path(o, sizeof o, "sub");
    assert_int_equal(check1(a, o), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "is a directory"));
    path(o, sizeof o, "newdir/");
    assert_int_equal(check1(a, o), GT_ERR_RUNTIME);
}

static void test_inputs_must_open(void **state)
{
    (void)state;
    char n[512], d[512], o[512];
    path(n, sizeof n, "nope.mtx");
    path(d, sizeof d, "sub");
    path(o, sizeof o, "o.mtx");
    assert_int_equal(check1(n, o), GT_ERR_RUNTIME);
    assert_non_null(strstr(gt_errmsg(), "cannot open"));
    assert_non_null(strstr(gt_errmsg(), "nope.mtx"));
    assert_int_equal(check1(d, o), GT_ERR_RUNTIME);
    assert_non_null(strstr(gt_errmsg(), "directory"));
}

static void test_format_against_extension(void **state)
{
    (void)state;
    assert_int_equal(gt_guard_format("scene.ply", "-o", "png", "--out-format"), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "PLY"));
    assert_non_null(strstr(gt_errmsg(), "PNG"));
    assert_non_null(strstr(gt_errmsg(), "--out-format png"));
    assert_int_equal(gt_guard_format("x.PLY", "-o", "png", NULL), GT_ERR_USAGE); /* any case */
    assert_null(strstr(gt_errmsg(), "--out-format"));
    assert_int_equal(gt_guard_format("x.png", "-o", "png", NULL), GT_OK);
    assert_int_equal(gt_guard_format("x.Png", "-o", "png", NULL), GT_OK);
    assert_int_equal(gt_guard_format("x", "-o", "png", NULL), GT_OK);          /* no extension */
    assert_int_equal(gt_guard_format("x.weird", "-o", "png", NULL), GT_OK);    /* unknown */
    assert_int_equal(gt_guard_format("dir.ply/x", "-o", "png", NULL), GT_OK);  /* a directory's dot */
    assert_int_equal(gt_guard_format(".ply", "-o", "png", NULL), GT_OK);       /* a hidden name */
    assert_int_equal(gt_guard_format("-", "-o", "png", NULL), GT_OK);
    assert_int_equal(gt_guard_format("x.ply", "-o", NULL, NULL), GT_OK);       /* format named by the user */
    assert_int_equal(gt_guard_format("p.txt", "-o", "tps", NULL), GT_OK);
    assert_int_equal(gt_guard_format("p.tps", "-o", "tps", NULL), GT_OK);
    assert_int_equal(gt_guard_format("w.tps", "-o", "points", NULL), GT_ERR_USAGE);
    assert_int_equal(gt_guard_format("v.raw", "-o", "raw", NULL), GT_OK);
    assert_int_equal(gt_guard_format("v.raw", "-o", "nrrd", NULL), GT_ERR_USAGE);
    assert_int_equal(gt_guard_format("v.nhdr", "--volume", "nrrd", NULL), GT_ERR_USAGE);
    assert_int_equal(gt_guard_format("a.y4m", "-o", "raw", NULL), GT_ERR_USAGE);
    assert_int_equal(gt_guard_format("x.mtx", "-o", "mtx", NULL), GT_OK);
    assert_int_equal(gt_guard_format("x.json", "-o", "mtx", NULL), GT_ERR_USAGE);
    /* through the guard: the format check comes after the same-file check */
    gt_guard g;
    gt_guard_init(&g);
    gt_guard_output(&g, "frame_%04d.jpg", "-o", "png", "--out-format");
    assert_int_equal(gt_guard_check(&g), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "JPEG"));
    gt_guard_free(&g);
}

int main(void)
{
    gt_set_progname("test_guard");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_path_refused_naming_both),
        cmocka_unit_test(test_other_file_allowed),
        cmocka_unit_test(test_hard_link_refused),
        cmocka_unit_test(test_symlink_refused_both_ways),
        cmocka_unit_test(test_other_spellings_refused),
        cmocka_unit_test(test_two_new_outputs_one_file),
        cmocka_unit_test(test_dash_exempt_unless_a_regular_file),
        cmocka_unit_test(test_two_stdin_inputs_refused),
        cmocka_unit_test(test_missing_directory_and_directories),
        cmocka_unit_test(test_inputs_must_open),
        cmocka_unit_test(test_format_against_extension),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
