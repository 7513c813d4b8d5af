/* GPU: every CUB wrapper of kernels/common/cu_prim.h against a CPU result on
 * random inputs of several sizes, including 0, 1 and sizes that are not
 * multiples of any block size. Skips (77) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "gt_test.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"

static const size_t sizes[] = {0, 1, 2, 31, 255, 1000, 1025, 4099, 100003, 1u << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void *dev_copy(const void *h, size_t bytes)
{
    void *d = NULL;
    GT_ASSERT_OK(gt_cu_malloc(&d, bytes, "test"));
    GT_ASSERT_OK(gt_cu_memcpy_h2d(d, h, bytes, NULL));
    return d;
}
static void *dev_alloc(size_t bytes)
{
    void *d = NULL;
    GT_ASSERT_OK(gt_cu_malloc(&d, bytes, "test"));
    GT_ASSERT_OK(gt_cu_memset(d, 0xAB, bytes, NULL)); /* poison */
    return d;
}
static void host_get(void *h, const void *d, size_t bytes)
{
    GT_ASSERT_OK(gt_cu_memcpy_d2h(h, d, bytes, NULL));
}

static void test_scans(void **state)
{
    (void)state;
    gt_rng r = {1};
    for (size_t si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        uint32_t *a = malloc((n + 1) * 4), *got = malloc((n + 1) * 4);
        uint64_t *b = malloc((n + 1) * 8), *got64 = malloc((n + 1) * 8);
        for (size_t i = 0; i < n; i++) {
            a[i] = (uint32_t)(gt_rng_u64(&r) % 1000);
            b[i] = gt_rng_u64(&r) % 5000000000ull; /* sums exceed 2^32 */
        }
        uint32_t *da = dev_copy(a, n * 4 + 4), *dout = dev_alloc(n * 4 + 4);
        uint64_t *db = dev_copy(b, n * 8 + 8), *dout64 = dev_alloc(n * 8 + 8);
        for (int incl = 0; incl < 2; incl++) {
            if (incl) {
                GT_ASSERT_OK(gt_cu_scan_inclusive_u32(da, dout, n, NULL, NULL));
                GT_ASSERT_OK(gt_cu_scan_inclusive_u64(db, dout64, n, NULL, NULL));
            } else {
                GT_ASSERT_OK(gt_cu_scan_exclusive_u32(da, dout, n, NULL, NULL));
                GT_ASSERT_OK(gt_cu_scan_exclusive_u64(db, dout64, n, NULL, NULL));
            }
            host_get(got, dout, n * 4);
            host_get(got64, dout64, n * 8);
            uint32_t s = 0;
            uint64_t s64 = 0;
            for (size_t i = 0; i < n; i++) {
                if (incl) { s += a[i]; s64 += b[i]; }
                assert_int_equal(got[i], s);
                assert_true(got64[i] == s64);
                if (!incl) { s += a[i]; s64 += b[i]; }
            }
        }
        /* in place */
        GT_ASSERT_OK(gt_cu_scan_exclusive_u32(da, da, n, NULL, NULL));
        host_get(got, da, n * 4);
        uint32_t s = 0;
        for (size_t i = 0; i < n; i++) { assert_int_equal(got[i], s); s += a[i]; }
        gt_cu_free(da); gt_cu_free(dout); gt_cu_free(db); gt_cu_free(dout64);
        free(a); free(got); free(b); free(got64);
    }
}

typedef struct { uint64_t k; uint32_t v; } kv;
static int cmp_kv(const void *x, const void *y)
{
    const kv *a = x, *b = y;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    return a->v < b->v ? -1 : a->v > b->v; /* values are original positions: stability */
}

static void check_sort(size_t n, int bits64, int b0, int b1, gt_rng *r)
{
    kv *ref = malloc((n + 1) * sizeof *ref);
    uint64_t *k64 = malloc((n + 1) * 8), *o64 = malloc((n + 1) * 8);
    uint32_t *k32 = malloc((n + 1) * 4), *o32 = malloc((n + 1) * 4);
    uint32_t *v = malloc((n + 1) * 4), *ov = malloc((n + 1) * 4);
    uint64_t mask = (b1 - b0 >= 64) ? ~0ull : (((1ull << (b1 - b0)) - 1) << b0);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = gt_rng_u64(r);
        if (i % 7 == 0 && i) k = k64[i - 1]; /* duplicates */
        if (!bits64) k &= 0xffffffffull;
        k &= mask; /* keys confined to the sorted bits */
        k64[i] = k;
        k32[i] = (uint32_t)k;
        v[i] = (uint32_t)i;
        ref[i].k = k;
        ref[i].v = (uint32_t)i;
    }
    qsort(ref, n, sizeof *ref, cmp_kv);
    uint32_t *dv = dev_copy(v, n * 4 + 4), *dov = dev_alloc(n * 4 + 4);
    if (bits64) {
        uint64_t *dk = dev_copy(k64, n * 8 + 8), *dok = dev_alloc(n * 8 + 8);
        GT_ASSERT_OK(gt_cu_sort_pairs_u64(dk, dok, dv, dov, n, b0, b1, NULL, NULL));
        host_get(o64, dok, n * 8);
        gt_cu_free(dk); gt_cu_free(dok);
    } else {
        uint32_t *dk = dev_copy(k32, n * 4 + 4), *dok = dev_alloc(n * 4 + 4);
        GT_ASSERT_OK(gt_cu_sort_pairs_u32(dk, dok, dv, dov, n, b0, b1, NULL, NULL));
        host_get(o32, dok, n * 4);
        for (size_t i = 0; i < n; i++) o64[i] = o32[i];
        gt_cu_free(dk); gt_cu_free(dok);
    }
    host_get(ov, dov, n * 4);
    for (size_t i = 0; i < n; i++) {
        assert_true(o64[i] == ref[i].k);
        assert_int_equal(ov[i], ref[i].v);
    }
    gt_cu_free(dv); gt_cu_free(dov);
    free(ref); free(k64); free(o64); free(k32); free(o32); free(v); free(ov);
}

static void test_sorts(void **state)
{
    (void)state;
    gt_rng r = {2};
    for (size_t si = 0; si < NSIZES; si++) {
        check_sort(sizes[si], 0, 0, 32, &r);
        check_sort(sizes[si], 1, 0, 64, &r);
        check_sort(sizes[si], 1, 0, 45, &r); /* partial bit range, as gsrender uses */
        check_sort(sizes[si], 0, 4, 20, &r);
    }
    /* bad bit range is an error, not a crash */
    assert_int_equal(gt_cu_sort_pairs_u32(NULL, NULL, NULL, NULL, 10, 0, 40, NULL, NULL),
                     GT_ERR_RUNTIME);
}

static void test_select(void **state)
{
    (void)state;
    gt_rng r = {3};
    for (size_t si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        uint32_t *a = malloc((n + 1) * 4), *got = malloc((n + 1) * 4);
        uint64_t *b = malloc((n + 1) * 8), *got64 = malloc((n + 1) * 8);
        uint8_t *f = malloc(n + 1);
        for (size_t i = 0; i < n; i++) {
            a[i] = (uint32_t)gt_rng_u64(&r);
            b[i] = gt_rng_u64(&r);
            f[i] = (uint8_t)(gt_rng_u64(&r) % 3 == 0 ? (1 + gt_rng_u64(&r) % 200) : 0);
        }
        uint32_t *da = dev_copy(a, n * 4 + 4), *dout = dev_alloc(n * 4 + 4);
        uint64_t *db = dev_copy(b, n * 8 + 8), *dout64 = dev_alloc(n * 8 + 8);
        uint8_t *df = dev_copy(f, n + 1);
        size_t c32 = 99, c64 = 99, ci = 99;
        GT_ASSERT_OK(gt_cu_select_flagged_u32(da, df, dout, n, &c32, NULL, NULL));
        host_get(got, dout, c32 * 4);
        GT_ASSERT_OK(gt_cu_select_flagged_u64(db, df, dout64, n, &c64, NULL, NULL));
        host_get(got64, dout64, c64 * 8);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (f[i]) {
                assert_true(k < c32);
                assert_int_equal(got[k], a[i]);
                assert_true(got64[k] == b[i]);
                k++;
            }
        assert_int_equal(k, c32);
        assert_int_equal(k, c64);
        GT_ASSERT_OK(gt_cu_select_flagged_index(df, dout, n, &ci, NULL, NULL));
        assert_int_equal(ci, k);
        host_get(got, dout, ci * 4);
        k = 0;
        for (size_t i = 0; i < n; i++)
            if (f[i]) assert_int_equal(got[k++], i);
        gt_cu_free(da); gt_cu_free(dout); gt_cu_free(db); gt_cu_free(dout64); gt_cu_free(df);
        free(a); free(got); free(b); free(got64); free(f);
    }
}

static void test_reduce(void **state)
{
    (void)state;
    gt_rng r = {4};
    for (size_t si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        float *a = malloc((n + 1) * 4);
        double *b = malloc((n + 1) * 8);
        uint32_t *c = malloc((n + 1) * 4);
        double sa = 0, sb = 0, sabs = 0;
        uint64_t sc = 0;
        float mn = INFINITY, mx = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            a[i] = (float)gt_rng_range(&r, -10, 10);
            b[i] = gt_rng_range(&r, -1e3, 1e3);
            c[i] = (uint32_t)gt_rng_u64(&r); /* sum overflows 32 bits */
            sa += a[i];
            sabs += fabs(a[i]);
            sb += b[i];
            sc += c[i];
            if (a[i] < mn) mn = a[i];
            if (a[i] > mx) mx = a[i];
        }
        float *da = dev_copy(a, n * 4 + 4);
        double *dbb = dev_copy(b, n * 8 + 8);
        uint32_t *dc = dev_copy(c, n * 4 + 4);
        double ra, rb;
        uint64_t rc;
        float rmn, rmx;
        GT_ASSERT_OK(gt_cu_reduce_sum_f32(da, n, &ra, NULL, NULL));
        GT_ASSERT_OK(gt_cu_reduce_sum_f64(dbb, n, &rb, NULL, NULL));
        GT_ASSERT_OK(gt_cu_reduce_sum_u32(dc, n, &rc, NULL, NULL));
        GT_ASSERT_OK(gt_cu_reduce_min_f32(da, n, &rmn, NULL, NULL));
        GT_ASSERT_OK(gt_cu_reduce_max_f32(da, n, &rmx, NULL, NULL));
        /* float inputs summed in double on both sides: only the order differs */
        assert_true(fabs(ra - sa) <= 1e-12 * (sabs + 1));
        assert_true(fabs(rb - sb) <= 1e-9 * (1e3 * (double)n + 1));
        assert_true(rc == sc);
        if (n) {
            assert_true(rmn == mn);
            assert_true(rmx == mx);
        } else {
            assert_true(rmn > 1e38f && rmx < -1e38f);
        }
        gt_cu_free(da); gt_cu_free(dbb); gt_cu_free(dc);
        free(a); free(b); free(c);
    }
}

static void test_rle(void **state)
{
    (void)state;
    gt_rng r = {5};
    for (size_t si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        uint32_t *a = malloc((n + 1) * 4), *u = malloc((n + 1) * 4), *cnt = malloc((n + 1) * 4);
        uint64_t *b = malloc((n + 1) * 8), *u64 = malloc((n + 1) * 8);
        uint32_t cur = 0;
        for (size_t i = 0; i < n; i++) {
            if (gt_rng_u64(&r) % 4 == 0) cur += 1 + (uint32_t)(gt_rng_u64(&r) % 3);
            a[i] = cur;
            b[i] = ((uint64_t)cur << 33) | 7;
        }
        uint32_t *da = dev_copy(a, n * 4 + 4), *du = dev_alloc(n * 4 + 4), *dcnt = dev_alloc(n * 4 + 4);
        uint64_t *db = dev_copy(b, n * 8 + 8), *du64 = dev_alloc(n * 8 + 8);
        size_t runs = 99, runs64 = 99;
        GT_ASSERT_OK(gt_cu_rle_u32(da, du, dcnt, n, &runs, NULL, NULL));
        host_get(u, du, runs * 4);
        host_get(cnt, dcnt, runs * 4);
        size_t k = 0;
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j < n && a[j] == a[i]) j++;
            assert_true(k < runs);
            assert_int_equal(u[k], a[i]);
            assert_int_equal(cnt[k], j - i);
            k++;
            i = j;
        }
        assert_int_equal(k, runs);
        GT_ASSERT_OK(gt_cu_rle_u64(db, du64, dcnt, n, &runs64, NULL, NULL));
        assert_int_equal(runs64, runs);
        host_get(u64, du64, runs64 * 8);
        for (size_t i = 0; i < runs64; i++) assert_true(u64[i] == (((uint64_t)u[i] << 33) | 7));
        gt_cu_free(da); gt_cu_free(du); gt_cu_free(dcnt); gt_cu_free(db); gt_cu_free(du64);
        free(a); free(u); free(cnt); free(b); free(u64);
    }
}

static void test_arena_and_accounting(void **state)
{
    (void)state;
    gt_arena a;
    gt_arena_init(&a);
    void *p1, *p2;
    size_t before = gt_cu_current_bytes();
    GT_ASSERT_OK(gt_arena_reserve(&a, 1000, &p1));
    GT_ASSERT_OK(gt_arena_reserve(&a, 500, &p2));
    assert_ptr_equal(p1, p2); /* no reallocation for a smaller request */
    GT_ASSERT_OK(gt_arena_reserve(&a, 1 << 20, &p2));
    assert_true(a.cap >= (1u << 20));
    assert_true(gt_cu_current_bytes() >= before + (1u << 20));
    assert_true(gt_cu_peak_bytes() >= gt_cu_current_bytes());
    gt_arena_release(&a);
    assert_int_equal(gt_cu_current_bytes(), before);
    /* an impossible allocation is a GPU-out-of-memory status, not a crash
     * (skipped under compute-sanitizer, which reports the refused cudaMalloc) */
    if (getenv("GT_UNDER_SANITIZER")) return;
    void *huge = NULL;
    assert_int_equal(gt_cu_malloc(&huge, (size_t)1 << 50, "huge"), GT_ERR_GPU);
    assert_non_null(strstr(gt_errmsg(), "out of GPU memory"));
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scans),   cmocka_unit_test(test_sorts),
        cmocka_unit_test(test_select),  cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_rle),     cmocka_unit_test(test_arena_and_accounting),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gt_arena_release(gt_default_arena());
    return rc;
}
