/* lib/common: option parsers, common options, timings table, atomic output,
 * progress (disabled when not a TTY), device choice without a GPU. */
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

#include "common/cli.h"
#include "common/device.h"
#include "common/log.h"
#include "common/output.h"
#include "common/progress.h"
#include "common/timer.h"

static void test_parse_numbers(void **state)
{
    (void)state;
    long l;
    int i;
    double d;
    assert_int_equal(gt_parse_long("--n", "42", 0, 100, &l), GT_OK);
    assert_int_equal(l, 42);
    assert_int_equal(gt_parse_long("--n", "-1", 0, 100, &l), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "--n"));
    assert_non_null(strstr(gt_errmsg(), "out of range"));
    assert_int_equal(gt_parse_int("--n", "12abc", 0, 100, &i), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "'12abc'"));
    assert_int_equal(gt_parse_int("--n", "", 0, 100, &i), GT_ERR_USAGE);
    assert_int_equal(gt_parse_long("--n", "99999999999999999999", 0, 100, &l), GT_ERR_USAGE);
    assert_int_equal(gt_parse_double("--iso", "0.5", -1, 1, &d), GT_OK);
    assert_true(d == 0.5);
    assert_int_equal(gt_parse_double("--iso", "nan", -1, 1, &d), GT_ERR_USAGE);
    assert_int_equal(gt_parse_double("--iso", "inf", -1e300, 1e300, &d), GT_ERR_USAGE);
    assert_int_equal(gt_parse_double("--iso", "2", -1, 1, &d), GT_ERR_USAGE);
    assert_int_equal(gt_parse_double("--iso", "1e-3x", -1, 1, &d), GT_ERR_USAGE);
}

static void test_parse_wxh_vec_enum(void **state)
{
    (void)state;
    int w, h;
    assert_int_equal(gt_parse_wxh("--size", "1920x1080", 16384, &w, &h), GT_OK);
    assert_int_equal(w, 1920);
    assert_int_equal(h, 1080);
    assert_int_equal(gt_parse_wxh("--size", "0x10", 16384, &w, &h), GT_ERR_USAGE);
    assert_int_equal(gt_parse_wxh("--size", "10x", 16384, &w, &h), GT_ERR_USAGE);
    assert_int_equal(gt_parse_wxh("--size", "10*10", 16384, &w, &h), GT_ERR_USAGE);
    assert_int_equal(gt_parse_wxh("--size", "20000x10", 16384, &w, &h), GT_ERR_USAGE);

    double v[3];
    assert_int_equal(gt_parse_vec("--eye", "1,-2.5,3e2", 3, v), GT_OK);
    assert_true(v[0] == 1 && v[1] == -2.5 && v[2] == 300);
    assert_int_equal(gt_parse_vec("--eye", "1,2", 3, v), GT_ERR_USAGE);
    assert_int_equal(gt_parse_vec("--eye", "1,2,3,4", 3, v), GT_ERR_USAGE);
    assert_int_equal(gt_parse_vec("--eye", "1,,3", 3, v), GT_ERR_USAGE);

    long iv[3];
    assert_int_equal(gt_parse_ivec("--dims", "64,32,16", 3, 1, 1 << 20, iv), GT_OK);
    assert_true(iv[0] == 64 && iv[1] == 32 && iv[2] == 16);
    assert_int_equal(gt_parse_ivec("--dims", "64,0,16", 3, 1, 1 << 20, iv), GT_ERR_USAGE);

    static const char *const names[] = {"cg", "pcg", "bicgstab"};
    int e;
    assert_int_equal(gt_parse_enum("--method", "pcg", names, 3, &e), GT_OK);
    assert_int_equal(e, 1);
    assert_int_equal(gt_parse_enum("--method", "gmres", names, 3, &e), GT_ERR_USAGE);
    assert_string_equal(gt_errmsg(),
                        "invalid value 'gmres' for --method: expected cg, pcg or bicgstab");

    /* a path option given twice is refused, naming both values */
    const char *out = NULL;
    assert_int_equal(gt_parse_path_once("-o", "a.ply", &out), GT_OK);
    assert_string_equal(out, "a.ply");
    assert_int_equal(gt_parse_path_once("-o", "b.ply", &out), GT_ERR_USAGE);
    assert_string_equal(out, "a.ply");
    assert_non_null(strstr(gt_errmsg(), "-o given twice ('a.ply' and 'b.ply')"));
    const char *other = NULL;
    assert_int_equal(gt_parse_path_once("--rig", "", &other), GT_ERR_USAGE);
    assert_null(other);
}

static void test_common_options(void **state)
{
    (void)state;
    gt_common_opts o;
    gt_common_opts_init(&o);
    assert_int_equal(gt_common_option(&o, GT_OPT_DEVICE, "cpu"), GT_CLI_HANDLED);
    assert_int_equal(o.device, GT_DEVICE_CPU);
    assert_int_equal(gt_common_option(&o, GT_OPT_DEVICE, "gpu"), GT_CLI_ERROR);
    assert_string_equal(gt_errmsg(),
                        "invalid value 'gpu' for --device: expected auto, cuda or cpu");
    assert_int_equal(gt_common_option(&o, GT_OPT_GPU, "3"), GT_CLI_HANDLED);
    assert_int_equal(o.gpu, 3);
    assert_int_equal(gt_common_option(&o, GT_OPT_TIMINGS, NULL), GT_CLI_HANDLED);
    assert_true(o.timings);
    assert_int_equal(gt_common_option(&o, 'v', NULL), GT_CLI_HANDLED);
    assert_int_equal(gt_common_option(&o, 'v', NULL), GT_CLI_HANDLED);
    assert_int_equal(o.verbosity, 2);
    assert_int_equal(gt_common_option(&o, 'q', NULL), GT_CLI_HANDLED);
    assert_int_equal(o.verbosity, -1);
    assert_int_equal(gt_common_option(&o, 'x', NULL), GT_CLI_NOT_COMMON);
    gt_set_verbosity(0);
}

static void test_timings(void **state)
{
    (void)state;
    gt_timings tm;
    gt_timings_init(&tm);
    gt_timings_add(&tm, "sort", 1.5);
    gt_timings_add(&tm, "scan", 0.25);
    gt_timings_add(&tm, "sort", 2.5);
    assert_int_equal(tm.n, 2);
    assert_true(gt_timings_get(&tm, "sort") == 4.0);
    assert_int_equal(tm.stage[0].count, 2);
    gt_timer t;
    gt_timer_start(&t, false, NULL);
    usleep(2000);
    double ms = gt_timer_stop(&t);
    assert_true(ms >= 1.5 && ms < 1000.0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gt_timings_print(&tm, f, "timings");
    fclose(f);
    assert_non_null(strstr(buf, "sort"));
    assert_non_null(strstr(buf, "4.000"));
    free(buf);
}

static int count_dir_entries(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1) n = -1;
        pclose(p);
    }
    return n;
}

static void test_atomic_output(void **state)
{
    (void)state;
    char dir[] = "/tmp/gt_out_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/result.txt", dir);

    /* commit: the file appears complete, no temporary left */
    gt_out o;
    assert_int_equal(gt_out_open(&o, path), GT_OK);
    assert_int_equal(access(path, F_OK), -1); /* not visible before commit */
    fprintf(o.fp, "hello\n");
    assert_int_equal(gt_out_commit(&o), GT_OK);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[32] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "hello\n");
    assert_int_equal(count_dir_entries(dir), 1);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true((st.st_mode & 0044) != 0); /* readable by others under a usual umask */

    /* abort: the old file stays untouched, no temporary left */
    assert_int_equal(gt_out_open(&o, path), GT_OK);
    fprintf(o.fp, "partial");
    gt_out_abort(&o);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "hello\n");
    assert_int_equal(count_dir_entries(dir), 1);

    /* unwritable directory: a clear message naming the path */
    assert_int_equal(gt_out_open(&o, "/nonexistent-dir/x.ply"), GT_ERR_RUNTIME);
    assert_non_null(strstr(gt_errmsg(), "/nonexistent-dir/x.ply"));

    unlink(path);
    rmdir(dir);
}

/* a FIFO (like a device) is written in place: renaming a temporary file over
 * it would replace it with a regular file */
static void test_output_fifo_written_in_place(void **state)
{
    (void)state;
    char dir[] = "/tmp/gt_fifo_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/pipe", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    int rd = open(path, O_RDONLY | O_NONBLOCK); /* a reader, so the writer's open does not block */
    assert_true(rd >= 0);
    gt_out o;
    assert_int_equal(gt_out_open(&o, path), GT_OK);
    fprintf(o.fp, "through the pipe\n");
    assert_int_equal(gt_out_commit(&o), GT_OK);
    char buf[64] = "";
    ssize_t n = read(rd, buf, sizeof buf - 1);
    assert_int_equal(n, 17);
    assert_string_equal(buf, "through the pipe\n");
    close(rd);
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    assert_int_equal(count_dir_entries(dir), 1); /* no temporary file beside it */
    unlink(path);
    rmdir(dir);
}

static void test_input_open(void **state)
{
    (void)state;
    gt_status st;
    assert_null(gt_in_open("/nonexistent/file.mtx", &st));
    assert_int_equal(st, GT_ERR_RUNTIME);
    assert_non_null(strstr(gt_errmsg(), "cannot open '/nonexistent/file.mtx'"));
    assert_true(gt_in_open("-", &st) == stdin);
    assert_string_equal(gt_in_name("-"), "<stdin>");
}

static void test_progress_silent_without_tty(void **state)
{
    (void)state;
    setenv("GT_PROGRESS", "0", 1);
    gt_progress p;
    gt_progress_start(&p, "iterations", 10);
    assert_false(p.active);
    gt_progress_update(&p, 5, NULL);
    gt_progress_end(&p);
    setenv("GT_PROGRESS", "1", 1);
    gt_progress_start(&p, "iterations", 10);
    assert_true(p.active);
    gt_progress_end(&p);
    unsetenv("GT_PROGRESS");
}

static void test_device_choice_without_gpu(void **state)
{
    (void)state;
    setenv("GT_NO_GPU", "1", 1);
    gt_device_kind k = GT_DEVICE_CUDA;
    assert_int_equal(gt_device_choose(GT_DEVICE_AUTO, 0, &k), GT_OK);
    assert_int_equal(k, GT_DEVICE_CPU);
    assert_int_equal(gt_device_choose(GT_DEVICE_CUDA, 0, &k), GT_ERR_GPU);
    assert_non_null(strstr(gt_errmsg(), "no CUDA GPU is available"));
    assert_int_equal(gt_device_choose(GT_DEVICE_CPU, 0, &k), GT_OK);
    assert_int_equal(k, GT_DEVICE_CPU);
    unsetenv("GT_NO_GPU");
}

int main(void)
{
    gt_set_progname("test_cli");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_numbers),
        cmocka_unit_test(test_parse_wxh_vec_enum),
        cmocka_unit_test(test_common_options),
        cmocka_unit_test(test_timings),
        cmocka_unit_test(test_atomic_output),
        cmocka_unit_test(test_output_fifo_written_in_place),
        cmocka_unit_test(test_input_open),
        cmocka_unit_test(test_progress_silent_without_tty),
        cmocka_unit_test(test_device_choice_without_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
