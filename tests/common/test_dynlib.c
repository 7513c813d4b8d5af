/* The on-first-use loader (common/dynlib.h): a library that is not there, or
 * lacks an entry point, is a GT_ERR_GPU with a message naming it (never a
 * crash, never a half-filled table); one that is there fills every slot with
 * an address that works; /proc/self/maps tells what is mapped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/dynlib.h"

typedef double (*fn_d_d)(double);

static void missing_library_names_every_try(void **state)
{
    (void)state;
    const char *const names[] = {"libgt_no_such_solver.so.12", "libgt_no_such_solver.so", NULL};
    void *slot = (void *)&slot;
    const gt_dynsym syms[] = {{"cusolverDnCreate", &slot}};
    void *h = (void *)&h;
    assert_int_equal(gt_dynlib_load("cuSOLVER", names, syms, 1, &h), GT_ERR_GPU);
    const char *m = gt_errmsg();
    const char *want = "cuSOLVER not found (libgt_no_such_solver.so.12: ";
    assert_true(strncmp(m, want, strlen(want)) == 0);
    assert_non_null(strstr(m, "; libgt_no_such_solver.so: "));
    assert_ptr_equal(slot, (void *)&slot); /* untouched */
    assert_ptr_equal(h, (void *)&h);
}

static void missing_symbol_names_it_and_writes_nothing(void **state)
{
    (void)state;
    const char *const names[] = {"libm.so.6", NULL};
    void *a = NULL, *b = NULL;
    const gt_dynsym syms[] = {{"cos", &a}, {"gt_no_such_entry_point", &b}};
    assert_int_equal(gt_dynlib_load("libm", names, syms, 2, NULL), GT_ERR_GPU);
    assert_non_null(strstr(gt_errmsg(), "libm: libm.so.6 has no gt_no_such_entry_point ("));
    assert_null(a); /* the one that resolved is not written either */
    assert_null(b);
}

static void present_library_fills_the_slots(void **state)
{
    (void)state;
    /* the second name is tried only when the first fails */
    const char *const names[] = {"libgt_no_such_lib.so.1", "libm.so.6", NULL};
    void *c = NULL, *s = NULL, *h = NULL;
    const gt_dynsym syms[] = {{"cos", &c}, {"sqrt", &s}};
    assert_int_equal(gt_dynlib_load("libm", names, syms, 2, &h), GT_OK);
    assert_non_null(h);
    assert_non_null(c);
    fn_d_d sq;
    memcpy(&sq, &s, sizeof sq);
    assert_true(sq(9.0) == 3.0);
    assert_true(gt_dynlib_mapped("libm"));
}

static void no_names_is_an_error(void **state)
{
    (void)state;
    const char *const names[] = {NULL};
    assert_int_equal(gt_dynlib_load("cuBLAS", names, NULL, 0, NULL), GT_ERR_GPU);
    assert_string_equal(gt_errmsg(), "cuBLAS not found (no library name given)");
}

static void mapped_sees_only_what_is_mapped(void **state)
{
    (void)state;
    assert_true(gt_dynlib_mapped("libc"));
    assert_false(gt_dynlib_mapped("libgt_never_mapped"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_library_names_every_try),
        cmocka_unit_test(missing_symbol_names_it_and_writes_nothing),
        cmocka_unit_test(present_library_fills_the_slots),
        cmocka_unit_test(no_names_is_an_error),
        cmocka_unit_test(mapped_sees_only_what_is_mapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
