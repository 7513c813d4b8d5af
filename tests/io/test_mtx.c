/* Matrix Market reader/writer: round trips and the reading rules of mtx.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/status.h"
#include "gt_test.h"
#include "io/mtx.h"
#include "io_test_util.h"

/* temporary files in one folder per run (io_test_util.h) */
#define tpath io_tmp

static const char *put(const char *name, const char *text)
{
    const char *p = tpath(name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* Random COO with duplicates, written, read back: sorted, duplicates summed,
 * values bit-exact (%.17g round-trips doubles). */
static void test_coo_round_trip(void **state)
{
    (void)state;
    gt_rng rng = {42};
    enum { R = 37, C = 23, N = 400 };
    int32_t row[N], col[N];
    double val[N];
    static double dense[R][C];
    memset(dense, 0, sizeof dense);
    static int present[R][C];
    memset(present, 0, sizeof present);
    for (int k = 0; k < N; k++) {
        row[k] = (int32_t)(gt_rng_u64(&rng) % R);
        col[k] = (int32_t)(gt_rng_u64(&rng) % C);
        val[k] = gt_rng_range(&rng, -1e6, 1e6) * (k % 7 == 0 ? 1e-300 : 1.0);
        dense[row[k]][col[k]] += val[k];
        present[row[k]][col[k]] = 1;
    }
    const char *p = tpath("rt.mtx");
    GT_ASSERT_OK(gt_mtx_write_coo(p, R, C, N, row, col, val, "random test\nsecond line"));
    gt_mtx m;
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    assert_int_equal(m.nrows, R);
    assert_int_equal(m.ncols, C);
    assert_false(m.is_array);
    assert_int_equal(m.symmetry, GT_MTX_GENERAL);
    int64_t distinct = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) distinct += present[i][j];
    assert_int_equal(m.nnz, distinct);
    for (int64_t k = 0; k < m.nnz; k++) {
        if (k > 0)
            assert_true(m.row[k - 1] < m.row[k] ||
                        (m.row[k - 1] == m.row[k] && m.col[k - 1] < m.col[k]));
        assert_true(present[m.row[k]][m.col[k]]);
    }
    gt_mtx_free(&m);

    /* exact round trip of distinct sorted entries */
    int32_t r2[3] = {0, 1, 4}, c2[3] = {2, 0, 4};
    double v2[3] = {0.1, -1.0 / 3.0, 6.02214076e23};
    GT_ASSERT_OK(gt_mtx_write_coo(p, 5, 5, 3, r2, c2, v2, NULL));
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    assert_int_equal(m.nnz, 3);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(m.row[k], r2[k]);
        assert_int_equal(m.col[k], c2[k]);
        assert_memory_equal(&m.val[k], &v2[k], sizeof(double));
    }
    gt_mtx_free(&m);
}

static void test_duplicates_summed(void **state)
{
    (void)state;
    const char *p = put("dup.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                   "3 3 4\n2 2 1.5\n1 3 1\n2 2 2.25\n3 1 -4\n");
    gt_mtx m;
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    assert_int_equal(m.nnz, 3);
    assert_int_equal(m.row[0], 0);
    assert_int_equal(m.col[0], 2);
    assert_int_equal(m.row[1], 1);
    assert_int_equal(m.col[1], 1);
    assert_true(m.val[1] == 3.75);
    assert_int_equal(m.row[2], 2);
    assert_true(m.val[2] == -4.0);
    gt_mtx_free(&m);
}

static void test_symmetric_expanded(void **state)
{
    (void)state;
    const char *p = put("sym.mtx", "%%MatrixMarket matrix coordinate real symmetric\n% c\n\n"
                                   "3 3 4\n1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n");
    gt_mtx m;
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    assert_int_equal(m.symmetry, GT_MTX_SYMMETRIC);
    assert_int_equal(m.nnz, 6);
    double d[3][3] = {{0}};
    for (int64_t k = 0; k < m.nnz; k++) d[m.row[k]][m.col[k]] = m.val[k];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) assert_true(d[i][j] == d[j][i]);
    assert_true(d[0][1] == -1.0 && d[1][2] == -1.0 && d[2][2] == 2.0);
    gt_mtx_free(&m);

    p = put("skew.mtx", "%%MatrixMarket matrix coordinate integer skew-symmetric\n"
                        "3 3 2\n2 1 5\n3 1 -7\n");
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    assert_int_equal(m.symmetry, GT_MTX_SKEW);
    assert_int_equal(m.field, GT_MTX_INTEGER);
    assert_int_equal(m.nnz, 4);
    memset(d, 0, sizeof d);
    for (int64_t k = 0; k < m.nnz; k++) d[m.row[k]][m.col[k]] = m.val[k];
    assert_true(d[1][0] == 5.0 && d[0][1] == -5.0 && d[2][0] == -7.0 && d[0][2] == 7.0);
    gt_mtx_free(&m);
}

static void test_pattern(void **state)
{
    (void)state;
    const char *p = put("pat.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                                   "2 4 3\r\n1 4\r\n2 1\r\n1 4\r\n");
    gt_mtx m;
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    assert_int_equal(m.field, GT_MTX_PATTERN);
    assert_int_equal(m.nnz, 2);
    assert_true(m.val[0] == 1.0 && m.val[1] == 1.0);
    assert_int_equal(m.col[0], 3);
    gt_mtx_free(&m);
}

static void test_array(void **state)
{
    (void)state;
    const char *p = put("arr.mtx", "%%MatrixMarket matrix array real general\n2 3\n"
                                   "1\n2\n3\n4\n5\n6\n");
    gt_mtx m;
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    assert_true(m.is_array);
    for (int k = 0; k < 6; k++) assert_true(m.dense[k] == k + 1);
    gt_mtx_free(&m);

    p = put("arrsym.mtx", "%%MatrixMarket matrix array real symmetric\n3 3\n"
                          "1\n2\n3\n4\n5\n6\n");
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    double want[9] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
    for (int k = 0; k < 9; k++) assert_true(m.dense[k] == want[k]);
    gt_mtx_free(&m);

    p = put("arrskew.mtx", "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n"
                           "1\n2\n3\n");
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    double wsk[9] = {0, 1, 2, -1, 0, 3, -2, -3, 0};
    for (int k = 0; k < 9; k++) assert_true(m.dense[k] == wsk[k]);
    gt_mtx_free(&m);
}

static void test_vector_round_trip(void **state)
{
    (void)state;
    gt_rng rng = {7};
    double v[50];
    for (int k = 0; k < 50; k++) v[k] = gt_rng_range(&rng, -10, 10) / 3.0;
    const char *p = tpath("vec.mtx");
    GT_ASSERT_OK(gt_mtx_write_vector(p, v, 50, "x"));
    double *w;
    int64_t n;
    GT_ASSERT_OK(gt_mtx_read_vector(p, &w, &n));
    assert_int_equal(n, 50);
    assert_memory_equal(v, w, sizeof v);
    free(w);

    /* coordinate n x 1: missing entries are 0 */
    p = put("cvec.mtx", "%%MatrixMarket matrix coordinate real general\n4 1 2\n2 1 3.5\n4 1 -1\n");
    GT_ASSERT_OK(gt_mtx_read_vector(p, &w, &n));
    assert_int_equal(n, 4);
    assert_true(w[0] == 0 && w[1] == 3.5 && w[2] == 0 && w[3] == -1);
    free(w);

    p = put("notvec.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
    assert_int_equal(gt_mtx_read_vector(p, &w, &n), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "notvec.mtx"));
}

static void test_atomic_write_fails_cleanly(void **state)
{
    (void)state;
    int32_t r = 0, c = 0;
    double v = 1;
    assert_int_not_equal(gt_mtx_write_coo("/nonexistent-dir/x.mtx", 1, 1, 1, &r, &c, &v, NULL), GT_OK);
    /* bad index in memory: nothing written */
    const char *p = tpath("bad_out.mtx");
    unlink(p);
    r = 5;
    assert_int_not_equal(gt_mtx_write_coo(p, 2, 2, 1, &r, &c, &v, NULL), GT_OK);
    assert_int_not_equal(access(p, F_OK), 0);
}

static void test_real_data(void **state)
{
    (void)state;
    const char *p = "/work/shared/data/matrices/bcsstk13.mtx";
    if (access(p, R_OK) != 0) skip();
    gt_mtx m;
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    /* 42943 lower-triangle entries of which 2003 on the diagonal */
    assert_int_equal(m.nrows, 2003);
    assert_int_equal(m.nnz, 2 * 42943 - 2003);
    gt_mtx_free(&m);
}

/* Found by fuzz_mtx (out of memory): 1.5e9 rows, one entry. Valid, so it
 * reads as one entry without an O(rows) sort array; as a vector it is a
 * lying size line and is refused rather than allocated. */
static void test_fuzz_huge_rows(void **state)
{
    (void)state;
    const char *td = getenv("GT_TESTDATA");
    char p[1024];
    snprintf(p, sizeof p, "%s/io/mtx/fuzz_oom_huge_rows.mtx", td ? td : "testdata");
    gt_mtx m;
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    assert_int_equal(m.nrows, 1500000000);
    assert_int_equal(m.nnz, 1);
    gt_mtx_free(&m);
    /* found by fuzz_mtx (UBSan: memcpy from NULL): many rows, no entries */
    snprintf(p, sizeof p, "%s/io/mtx/fuzz_ubsan_no_entries.mtx", td ? td : "testdata");
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    assert_int_equal(m.nnz, 0);
    gt_mtx_free(&m);
    const char *q = put("hugevec.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                       "1500000000 1 2\n7 1 1\n1 1 2\n");
    double *v;
    int64_t n;
    assert_int_equal(gt_mtx_read_vector(q, &v, &n), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "implausible"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coo_round_trip),
        cmocka_unit_test(test_duplicates_summed),
        cmocka_unit_test(test_symmetric_expanded),
        cmocka_unit_test(test_pattern),
        cmocka_unit_test(test_array),
        cmocka_unit_test(test_vector_round_trip),
        cmocka_unit_test(test_atomic_write_fails_cleanly),
        cmocka_unit_test(test_real_data),
        cmocka_unit_test(test_fuzz_huge_rows),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
