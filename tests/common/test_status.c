#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/status.h"

static void test_fail_at_formats_place(void **state)
{
    (void)state;
    gt_status s = gt_fail_at(GT_ERR_DATA, "a.ply", 12, "bad token '%s'", "x");
    assert_int_equal(s, GT_ERR_DATA);
    assert_string_equal(gt_errmsg(), "bad token 'x' (a.ply:12)");
    gt_fail_at(GT_ERR_DATA, "-", 3, "oops");
    assert_string_equal(gt_errmsg(), "oops (<stdin>:3)");
    gt_fail_at_byte(GT_ERR_DATA, "v.nrrd", 4096, "truncated");
    assert_string_equal(gt_errmsg(), "truncated (v.nrrd: byte 4096)");
}

static void test_exit_codes(void **state)
{
    (void)state;
    assert_int_equal(gt_exit_code(GT_OK), 0);
    assert_int_equal(gt_exit_code(GT_ERR_RUNTIME), 1);
    assert_int_equal(gt_exit_code(GT_ERR_USAGE), 2);
    assert_int_equal(gt_exit_code(GT_ERR_DATA), 3);
    assert_int_equal(gt_exit_code(GT_ERR_GPU), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fail_at_formats_place),
        cmocka_unit_test(test_exit_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
