/* Prefaulted host blocks (common/pin_prefault.h): a block is taken once, by
 * its exact size, with every page already resident (mincore); sizes below
 * 4 MiB give none; the release frees what was not taken. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/pin_prefault.h"

/* pages of [p, p + bytes) resident in memory, of how many */
static size_t resident(void *p, size_t bytes, size_t *pages)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
    size_t len = (uintptr_t)p + bytes - a, n = (len + pg - 1) / pg, r = 0;
    unsigned char *v = malloc(n);
    assert_non_null(v);
    assert_int_equal(mincore((void *)a, len, v), 0);
    for (size_t k = 0; k < n; k++) r += v[k] & 1;
    free(v);
    *pages = n;
    return r;
}

static void test_take_by_size(void **st)
{
    (void)st;
    size_t a = (size_t)9 << 20, b = ((size_t)6 << 20) + 12345;
    gt_pin_prefault(a);
    gt_pin_prefault(b);
    assert_null(gt_pin_take_prefaulted(a + 1)); /* exact sizes only */
    void *pb = gt_pin_take_prefaulted(b), *pa = gt_pin_take_prefaulted(a);
    assert_non_null(pa);
    assert_non_null(pb);
    assert_null(gt_pin_take_prefaulted(a)); /* taken once */
    size_t n, r = resident(pa, a, &n);
    assert_int_equal(r, n);
    r = resident(pb, b, &n);
    assert_int_equal(r, n);
    free(pa);
    free(pb);
}

static void test_small_none(void **st)
{
    (void)st;
    gt_pin_prefault((size_t)1 << 20); /* pinned with cudaMallocHost, not prefaulted */
    assert_null(gt_pin_take_prefaulted((size_t)1 << 20));
}

static void test_release(void **st)
{
    (void)st;
    for (int i = 0; i < 20; i++) gt_pin_prefault((size_t)4 << 20); /* more than it keeps: the rest freed */
    gt_pin_prefault_release();
    assert_null(gt_pin_take_prefaulted((size_t)4 << 20));
}

int main(void)
{
    unsetenv("GT_NO_HUGEPAGE");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take_by_size),
        cmocka_unit_test(test_small_none),
        cmocka_unit_test(test_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
