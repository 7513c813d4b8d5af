/* gt_omp_leave_core: OpenMP teams beside the CUDA start thread leave it a
 * core, unless the user set OMP_NUM_THREADS; gt_omp_restore puts the team
 * size back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/device.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static void test_leaves_one_core(void **state)
{
    (void)state;
#ifdef _OPENMP
    const char *env = getenv("OMP_NUM_THREADS");
    int cores = omp_get_num_procs();
    omp_set_num_threads(cores);
    int prev = gt_omp_leave_core();
    assert_int_equal(prev, cores);
    int want = (env && *env) || cores < 2 ? cores : cores - 1;
    assert_int_equal(omp_get_max_threads(), want);
    int team = 0;
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
    }
    assert_true(team <= want);
    gt_omp_restore(prev);
    assert_int_equal(omp_get_max_threads(), cores);
#else
    skip();
#endif
}

static void test_smaller_team_kept(void **state)
{
    (void)state;
#ifdef _OPENMP
    /* a team already smaller than the cores (the user's, or a caller's
     * cap) is left as it is */
    if (omp_get_num_procs() < 3) skip();
    omp_set_num_threads(2);
    int prev = gt_omp_leave_core();
    assert_int_equal(prev, 2);
    assert_int_equal(omp_get_max_threads(), 2);
    gt_omp_restore(prev);
#else
    skip();
#endif
}

static void test_user_setting_wins(void **state)
{
    (void)state;
#ifdef _OPENMP
    /* OMP_NUM_THREADS is read here, at each call */
    setenv("OMP_NUM_THREADS", "64", 1);
    int cores = omp_get_num_procs();
    omp_set_num_threads(cores);
    int prev = gt_omp_leave_core();
    assert_int_equal(omp_get_max_threads(), cores);
    gt_omp_restore(prev);
    unsetenv("OMP_NUM_THREADS");
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaves_one_core),
        cmocka_unit_test(test_smaller_team_kept),
        cmocka_unit_test(test_user_setting_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
