/* gt_sp_analyze (parallel over rows) against a plain serial reference on
 * random matrices: symmetric and not, symmetric in structure but not in
 * value, equal counts above and below the diagonal but a different pattern,
 * symmetric within the tolerance but not bit for bit,
 * rows empty and dense, zero and negative diagonals; for 1, 3 and 8 threads,
 * and gt_sp_analyze_sym told the answer. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "sparse_testutil.h"

static double find(const gt_csr *a, int64_t i, int64_t j, bool *f)
{
    for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
        if (a->col[p] == j) return *f = true, a->val[p];
    return *f = false, 0.0;
}

static void reference(const gt_csr *a, gt_sp_info *r)
{
    memset(r, 0, sizeof *r);
    int64_t n = a->nrows;
    r->row_min = INT64_MAX, r->zero_diag_row = -1;
    bool sym = a->nrows == a->ncols, dd = sym && n > 0, pd = dd;
    char *seen = calloc((size_t)(n + a->ncols), 1);
    for (int64_t i = 0; i < n; i++) {
        int64_t len = a->ptr[i + 1] - a->ptr[i];
        if (len < r->row_min) r->row_min = len;
        if (len > r->row_max) r->row_max = len;
        r->empty_rows += len == 0;
        double diag = 0, off = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int64_t j = a->col[p];
            if (j == i) diag = a->val[p];
            else off += fabs(a->val[p]);
            if (!seen[j - i + n - 1]) seen[j - i + n - 1] = 1, r->ndiag++;
            bool f;
            double t = sym ? find(a, j, i, &f) : 0;
            if (sym && (!f || fabs(t - a->val[p]) > 1e-12 * (fabs(t) + fabs(a->val[p])))) sym = false;
        }
        if (i < a->ncols && diag == 0.0 && r->zero_diag_row < 0) r->zero_diag_row = i;
        if (!(fabs(diag) > off)) dd = false;
        if (!(diag > 0)) pd = false;
    }
    free(seen);
    r->symmetric = sym, r->diag_dominant = dd, r->positive_diagonal = pd;
}

static void check(const gt_csr *a, int expect_sym)
{
    gt_sp_info r;
    reference(a, &r);
    if (expect_sym >= 0) assert_int_equal(r.symmetric, expect_sym); /* the case is what it claims */
    static const int threads[] = {1, 3, 8};
    for (int t = 0; t < 3; t++) {
#ifdef _OPENMP
        omp_set_num_threads(threads[t]);
#endif
        gt_sp_info in;
        GT_ASSERT_OK(gt_sp_analyze(a, &in));
        assert_int_equal(in.symmetric, r.symmetric);
        assert_int_equal(in.diag_dominant, r.diag_dominant);
        assert_int_equal(in.positive_diagonal, r.positive_diagonal);
        assert_int_equal(in.zero_diag_row, r.zero_diag_row);
        assert_int_equal(in.ndiag, r.ndiag);
        assert_int_equal(in.row_min, r.row_min);
        assert_int_equal(in.row_max, r.row_max);
        assert_int_equal(in.empty_rows, r.empty_rows);
        /* the HYB split, from the row pass's histogram, as gt_hyb_width and a
           plain count give it */
        int64_t w = gt_hyb_width(a), hc = 0;
        for (int64_t i = 0; i < a->nrows; i++)
            if (a->ptr[i + 1] - a->ptr[i] > w) hc += a->ptr[i + 1] - a->ptr[i] - w;
        assert_int_equal(in.hyb_width, w);
        assert_int_equal(in.hyb_coo_nnz, hc);
        if (r.symmetric) {
            GT_ASSERT_OK(gt_sp_analyze_sym(a, true, &in));
            assert_true(in.symmetric);
        }
    }
}

/* a + a^T (+ diag): symmetric */
static void symmetrize(const gt_csr *a, double diag, gt_csr *out)
{
    int64_t n = a->nrows, k = 0, cap = 2 * a->nnz + n;
    int32_t *ri = malloc((size_t)cap * 4), *ci = malloc((size_t)cap * 4);
    double *v = malloc((size_t)cap * 8);
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            ri[k] = (int32_t)i, ci[k] = a->col[p], v[k++] = a->val[p];
            ri[k] = a->col[p], ci[k] = (int32_t)i, v[k++] = a->val[p];
        }
    for (int64_t i = 0; i < n && diag != 0; i++) ri[k] = ci[k] = (int32_t)i, v[k++] = diag;
    if (gt_csr_from_triplets(n, n, k, ri, ci, v, out) != GT_OK) abort();
    free(ri), free(ci), free(v);
}

static void test_against_reference(void **s)
{
    (void)s;
    gt_rng rng = {2024};
    for (int variant = 0; variant < 5; variant++)
        for (int64_t n = 1; n < 3000; n = n * 3 + 1) {
            gt_csr a, b;
            sp_random(&rng, n, n, 4.0 / (double)n, variant, &a);
            check(&a, -1);
            symmetrize(&a, variant == 1 ? 0.0 : 50.0, &b);
            check(&b, 1);
            /* one off-diagonal value changed within the 1e-12 tolerance: still
               symmetric, though not bit for bit (the exact hashes differ) */
            for (int64_t i = n / 3, done = 0; i < n && !done; i++)
                for (int64_t p = b.ptr[i]; p < b.ptr[i + 1] && !done; p++)
                    if (b.col[p] != i) b.val[p] *= 1.0 + 1e-14, done = 1;
            check(&b, 1);
            /* one off-diagonal value changed: symmetric in structure only */
            for (int64_t i = n / 2, done = 0; i < n && !done; i++)
                for (int64_t p = b.ptr[i]; p < b.ptr[i + 1] && !done; p++)
                    if (b.col[p] != i) b.val[p] *= 1.0 + 1e-9, done = 1;
            if (b.nnz > n) check(&b, 0);
            gt_csr_free(&a), gt_csr_free(&b);
        }
}

/* As many entries above the diagonal as below, symmetric in count only:
 * (0,1) and (2,1) give one above and one below, with no mirrors. */
static void test_counts_agree_pattern_differs(void **s)
{
    (void)s;
    int32_t r[] = {0, 1, 2, 0, 2}, c[] = {0, 1, 2, 1, 1};
    double v[] = {4, 4, 4, -1, -1};
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_triplets(3, 3, 5, r, c, v, &a));
    check(&a, 0);
    gt_csr_free(&a);
}

/* Rows longer than the row pass's histogram holds (255 entries): every row
 * of a dense 300 x 300 matrix, so the HYB width comes from gt_hyb_width's
 * own pass; and a mix of short rows with a few long ones. */
static void test_long_rows(void **s)
{
    (void)s;
    gt_rng rng = {77};
    gt_csr a;
    sp_random(&rng, 300, 300, 0.97, 0, &a);
    check(&a, -1);
    gt_csr_free(&a);
    sp_random(&rng, 6000, 6000, 3.0 / 6000.0, 1, &a); /* variant 1: one dense row */
    check(&a, -1);
    gt_csr_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_counts_agree_pattern_differs),
        cmocka_unit_test(test_long_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
