/* Unit tests (CPU): the seed's worked examples as exact arrays, conversions,
 * SpMV of every format against a dense product, analysis, auto choice,
 * colouring and every CPU solver. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "sparse/laplace.h"
#include "sparse/sparse.h"
#include "sparse_testutil.h"

/* Seed, 5x5 with NNZ = 11 */
static const double A5[25] = {1, 2, 0, 11, 0, 0, 3, 4, 0, 0, 0, 5, 6, 7, 0, 0, 0, 0, 8, 0, 0, 0, 0, 9, 10};
/* Seed, 4x4 */
static const double A4[16] = {1, 7, 0, 0, 0, 2, 8, 0, 5, 0, 3, 9, 0, 6, 0, 4};

static void test_seed_5x5(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(5, 5, A5, &a));
    assert_int_equal(a.nnz, 11);
    gt_coo c;
    GT_ASSERT_OK(gt_csr_to_coo(&a, &c));
    const int32_t row[11] = {0, 0, 0, 1, 1, 2, 2, 2, 3, 4, 4}, col[11] = {0, 1, 3, 1, 2, 1, 2, 3, 3, 3, 4};
    const double val[11] = {1, 2, 11, 3, 4, 5, 6, 7, 8, 9, 10};
    for (int k = 0; k < 11; k++) {
        assert_int_equal(c.row[k], row[k]);
        assert_int_equal(c.col[k], col[k]);
        assert_true(c.val[k] == val[k]);
    }
    /* ELL (lecture table; '*' = padding: col -1, val 0), rows i, slot k */
    const int32_t ecol[5][3] = {{0, 1, 3}, {1, 2, -1}, {1, 2, 3}, {3, -1, -1}, {3, 4, -1}};
    const double evl[5][3] = {{1, 2, 11}, {3, 4, 0}, {5, 6, 7}, {8, 0, 0}, {9, 10, 0}};
    gt_ell e;
    GT_ASSERT_OK(gt_csr_to_ell(&a, &e));
    assert_int_equal(e.width, 3);
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 3; k++) {
            assert_int_equal(e.col[k * 5 + i], ecol[i][k]);
            assert_true(e.val[k * 5 + i] == evl[i][k]);
        }
    /* DIA: offsets -1 0 1 3, rows as in the lecture */
    gt_dia d;
    GT_ASSERT_OK(gt_csr_to_dia(&a, 0, &d));
    assert_int_equal(d.ndiag, 4);
    const int32_t off[4] = {-1, 0, 1, 3};
    const double dv[5][4] = {{0, 1, 2, 11}, {0, 3, 4, 0}, {5, 6, 7, 0}, {0, 8, 0, 0}, {9, 10, 0, 0}};
    for (int k = 0; k < 4; k++) assert_int_equal(d.offsets[k], off[k]);
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 4; k++) assert_true(d.val[k * 5 + i] == dv[i][k]);
    gt_coo_free(&c), gt_ell_free(&e), gt_dia_free(&d), gt_csr_free(&a);
}

static void test_seed_4x4(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(4, 4, A4, &a));
    const int64_t ptr[5] = {0, 2, 4, 7, 9};
    const int32_t ind[9] = {0, 1, 1, 2, 0, 2, 3, 1, 3};
    const double data[9] = {1, 7, 2, 8, 5, 3, 9, 6, 4};
    for (int i = 0; i < 5; i++) assert_int_equal(a.ptr[i], ptr[i]);
    for (int k = 0; k < 9; k++) assert_int_equal(a.col[k], ind[k]), assert_true(a.val[k] == data[k]);
    gt_coo c;
    GT_ASSERT_OK(gt_csr_to_coo(&a, &c));
    const int32_t crow[9] = {0, 0, 1, 1, 2, 2, 2, 3, 3};
    for (int k = 0; k < 9; k++)
        assert_int_equal(c.row[k], crow[k]), assert_int_equal(c.col[k], ind[k]), assert_true(c.val[k] == data[k]);
    /* ELL flattened column-major: data [1 2 5 6 7 8 3 4 * * 9 *], indices [0 1 0 1 1 2 2 3 * * 3 *] */
    gt_ell e;
    GT_ASSERT_OK(gt_csr_to_ell(&a, &e));
    const double edata[12] = {1, 2, 5, 6, 7, 8, 3, 4, 0, 0, 9, 0};
    const int32_t eind[12] = {0, 1, 0, 1, 1, 2, 2, 3, -1, -1, 3, -1};
    assert_int_equal(e.width, 3);
    for (int k = 0; k < 12; k++) assert_int_equal(e.col[k], eind[k]), assert_true(e.val[k] == edata[k]);
    /* DIA: offsets [-2 0 1], data [* * 5 6 1 2 3 4 7 8 9 *] */
    gt_dia d;
    GT_ASSERT_OK(gt_csr_to_dia(&a, 0, &d));
    const int32_t off[3] = {-2, 0, 1};
    const double ddata[12] = {0, 0, 5, 6, 1, 2, 3, 4, 7, 8, 9, 0};
    assert_int_equal(d.ndiag, 3);
    for (int k = 0; k < 3; k++) assert_int_equal(d.offsets[k], off[k]);
    for (int k = 0; k < 12; k++) assert_true(d.val[k] == ddata[k]);
    gt_coo_free(&c), gt_ell_free(&e), gt_dia_free(&d), gt_csr_free(&a);
}

static void check_all_formats(const gt_csr *a, gt_rng *rng)
{
    int64_t n = a->nrows, m = a->ncols;
    double *x = malloc((size_t)(m + 1) * sizeof *x), *y = calloc((size_t)n + 1, sizeof *y),
           *ref = calloc((size_t)n + 1, sizeof *ref);
    float *xf = malloc((size_t)(m + 1) * sizeof *xf), *yf = calloc((size_t)n + 1, sizeof *yf);
    for (int64_t j = 0; j < m; j++) x[j] = gt_rng_range(rng, -1, 1), xf[j] = (float)x[j];
    /* reference: plain row sums in long double */
    double scale = 0;
    for (int64_t i = 0; i < n; i++) {
        long double s = 0, sa = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
            s += (long double)a->val[p] * x[a->col[p]], sa += fabsl((long double)a->val[p] * x[a->col[p]]);
        ref[i] = (double)s;
        if ((double)sa > scale) scale = (double)sa;
    }
    if (scale == 0) scale = 1;
    gt_coo c;
    gt_ell e;
    gt_dia d;
    gt_hyb h;
    GT_ASSERT_OK(gt_csr_to_coo(a, &c));
    GT_ASSERT_OK(gt_csr_to_ell(a, &e));
    GT_ASSERT_OK(gt_csr_to_dia(a, 0, &d));
    GT_ASSERT_OK(gt_csr_to_hyb(a, -1, &h));
    for (int f = 0; f < GT_SP_NFORMATS; f++) {
        switch (f) {
        case GT_SP_COO: gt_coo_spmv(&c, x, y), gt_coo_spmv_f32(&c, xf, yf); break;
        case GT_SP_CSR: gt_csr_spmv(a, x, y), gt_csr_spmv_f32(a, xf, yf); break;
        case GT_SP_ELL: gt_ell_spmv(&e, x, y), gt_ell_spmv_f32(&e, xf, yf); break;
        case GT_SP_DIA: gt_dia_spmv(&d, x, y), gt_dia_spmv_f32(&d, xf, yf); break;
        case GT_SP_HYB: gt_hyb_spmv(&h, x, y), gt_hyb_spmv_f32(&h, xf, yf); break;
        }
        /* double: summation order differs by format: <= 1e-13 of the row's |a||x| */
        for (int64_t i = 0; i < n; i++) {
            if (fabs(y[i] - ref[i]) > 1e-13 * scale) fail_msg("%s row %lld: %g vs %g", gt_sp_format_name(f), (long long)i, y[i], ref[i]);
            if (fabs(yf[i] - ref[i]) > 1e-5 * scale) fail_msg("%s f32 row %lld", gt_sp_format_name(f), (long long)i);
        }
    }
    /* round trips back to CSR */
    gt_csr b;
    GT_ASSERT_OK(gt_ell_to_csr(&e, &b));
    assert_true(sp_csr_equal(a, &b, true));
    gt_csr_free(&b);
    GT_ASSERT_OK(gt_hyb_to_csr(&h, &b));
    assert_true(sp_csr_equal(a, &b, true));
    gt_csr_free(&b);
    GT_ASSERT_OK(gt_dia_to_csr(&d, &b));
    assert_true(sp_csr_equal(a, &b, false)); /* DIA drops explicit zeros */
    gt_csr_free(&b);
    gt_coo_free(&c), gt_ell_free(&e), gt_dia_free(&d), gt_hyb_free(&h);
    free(x), free(y), free(ref), free(xf), free(yf);
}

static void test_spmv_random(void **st)
{
    (void)st;
    gt_rng rng = {42};
    const int64_t shapes[][2] = {{1, 1}, {7, 7}, {50, 30}, {30, 50}, {200, 200}, {513, 257}, {1000, 1000}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        for (int variant = 0; variant < 3; variant++) {
            gt_csr a;
            sp_random(&rng, shapes[s][0], shapes[s][1], 0.05, variant, &a);
            check_all_formats(&a, &rng);
            gt_csr_free(&a);
        }
    }
}

static void test_laplacians(void **st)
{
    (void)st;
    gt_rng rng = {7};
    const int pts[5] = {3, 5, 7, 9, 27};
    const int64_t g = 9;
    for (int k = 0; k < 5; k++) {
        gt_csr a;
        GT_ASSERT_OK(gt_laplacian(pts[k], g, g, g, &a));
        int64_t n = a.nrows;
        int64_t expect;
        switch (pts[k]) { /* the number of neighbour pairs inside the grid */
        case 3: expect = 3 * g - 2; break;
        case 5: expect = 5 * g * g - 4 * g; break;
        case 7: expect = 7 * g * g * g - 6 * g * g; break;
        case 9: expect = (3 * g - 2) * (3 * g - 2); break;
        default: expect = (3 * g - 2) * (3 * g - 2) * (3 * g - 2); break;
        }
        assert_int_equal(a.nnz, expect);
        gt_sp_info in;
        GT_ASSERT_OK(gt_sp_analyze(&a, &in));
        assert_true(in.symmetric);
        assert_int_equal(in.ndiag, pts[k]);
        char why[256];
        assert_int_equal(gt_sp_choose_format(&in, why, sizeof why), GT_SP_DIA);
        (void)n;
        check_all_formats(&a, &rng);
        gt_csr_free(&a);
    }
}

static void test_auto_choice(void **st)
{
    (void)st;
    gt_rng rng = {3};
    gt_csr a;
    /* power-law rows: uneven -> CSR */
    sp_random(&rng, 3000, 3000, 0.002, 3, &a);
    gt_sp_info in;
    GT_ASSERT_OK(gt_sp_analyze(&a, &in));
    char why[256];
    assert_int_equal(gt_sp_choose_format(&in, why, sizeof why), GT_SP_CSR);
    gt_csr_free(&a);
    /* every row exactly 5 random entries: ELL */
    sp_random(&rng, 3000, 3000, 0, 4, &a);
    GT_ASSERT_OK(gt_sp_analyze(&a, &in));
    assert_int_equal(gt_sp_choose_format(&in, why, sizeof why), GT_SP_ELL);
    assert_int_equal(in.bytes[GT_SP_ELL][1], (size_t)in.row_max * 3000 * 12);
    assert_int_equal(in.bytes[GT_SP_COO][0], (size_t)in.nnz * 12);
    gt_csr_free(&a);
}

static void test_hyb_width(void **st)
{
    (void)st;
    /* 9000 rows: 6000 of length 4, 3000 of length 10. need = max(4096, 3000) = 4096
       rows with >= K entries: K <= 4 gives 9000, K in 5..10 gives 3000 -> K = 4 */
    int64_t n = 9000, nnz = 6000 * 4 + 3000 * 10;
    int32_t *r = malloc((size_t)nnz * 4), *c = malloc((size_t)nnz * 4);
    int64_t p = 0;
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < (i % 3 == 0 ? 10 : 4); k++) r[p] = (int32_t)i, c[p] = (int32_t)((i + 37 * k) % n), p++;
    assert_int_equal(p, nnz);
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_triplets(n, n, nnz, r, c, NULL, &a));
    assert_int_equal(gt_hyb_width(&a), 4);
    gt_hyb h;
    GT_ASSERT_OK(gt_csr_to_hyb(&a, -1, &h));
    assert_int_equal(h.coo.nnz, 3000 * 6);
    gt_hyb_free(&h), gt_csr_free(&a), free(r), free(c);
}

static void test_triplets_checks(void **st)
{
    (void)st;
    int32_t r[3] = {0, 1, 0}, c[3] = {1, 0, 1};
    double v[3] = {1, 2, 3};
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_triplets(2, 2, 3, r, c, v, &a));
    assert_int_equal(a.nnz, 2); /* duplicate (0,1) summed */
    assert_true(a.val[0] == 4.0);
    gt_csr_free(&a);
    c[2] = 5;
    assert_int_equal(gt_csr_from_triplets(2, 2, 3, r, c, v, &a), GT_ERR_DATA);
}

static void test_colouring(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_laplacian(27, 6, 5, 4, &a));
    int32_t *col = malloc((size_t)a.nrows * 4), nc;
    GT_ASSERT_OK(gt_sp_colour(&a, col, &nc));
    assert_true(nc >= 8 && nc <= 27); /* 27-point stencil needs at least 8 colours */
    for (int64_t i = 0; i < a.nrows; i++)
        for (int64_t p = a.ptr[i]; p < a.ptr[i + 1]; p++)
            if (a.col[p] != i) assert_int_not_equal(col[i], col[a.col[p]]);
    free(col), gt_csr_free(&a);
}

static void solve_and_check(const gt_csr *a, gt_solve_method m, double omega)
{
    int64_t n = a->nrows;
    double *one = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *x = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) one[i] = 1;
    gt_csr_spmv(a, one, b);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = m, o.tol = 1e-9, o.maxiter = 20000, o.omega = omega;
    gt_solve_result r;
    GT_ASSERT_OK(gt_solve_cpu(a, b, x, &o, &r));
    if (r.outcome != GT_SOLVE_CONVERGED) fail_msg("%s: %s", gt_solve_method_name(m), r.msg);
    assert_true(r.true_relres <= 2e-9);
    assert_true(r.iters >= 1);
    free(one), free(b), free(x);
}

static void test_solvers(void **st)
{
    (void)st;
    gt_csr lap, dd;
    GT_ASSERT_OK(gt_laplacian(5, 12, 10, 1, &lap));
    gt_rng rng = {11};
    sp_diag_dominant(&rng, 300, 0.02, &dd);
    for (int m = 0; m < GT_SOLVE_NMETHODS; m++) {
        if (m == GT_SOLVE_AMG) continue; /* the AMG preconditioner: tests beside its own code */
        solve_and_check(&lap, (gt_solve_method)m, m == GT_SOLVE_JACOBI ? 0.8 : 1.0);
        if (m != GT_SOLVE_CG && m != GT_SOLVE_PCG) solve_and_check(&dd, (gt_solve_method)m, 1.0);
    }
    gt_csr_free(&lap), gt_csr_free(&dd);
}

static void test_solver_failures(void **st)
{
    (void)st;
    /* indefinite symmetric: CG must say not SPD and suggest bicgstab */
    const double ind[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(3, 3, ind, &a));
    double b[3] = {1, -1, 1}, x[3] = {0, 0, 0};
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = GT_SOLVE_CG;
    gt_solve_result r;
    GT_ASSERT_OK(gt_solve_cpu(&a, b, x, &o, &r));
    assert_int_equal(r.outcome, GT_SOLVE_NOT_SPD);
    assert_non_null(strstr(r.msg, "bicgstab"));
    gt_csr_free(&a);
    /* zero diagonal: Jacobi names the (1-based) row */
    const double zd[4] = {1, 1, 1, 0};
    GT_ASSERT_OK(gt_csr_from_dense(2, 2, zd, &a));
    assert_int_equal(gt_solve_check(&a, 2, GT_SOLVE_JACOBI), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "row 2"));
    assert_int_equal(gt_solve_check(&a, 3, GT_SOLVE_BICGSTAB), GT_ERR_DATA);
    assert_int_equal(gt_solve_check(&a, 2, GT_SOLVE_BICGSTAB), GT_OK);
    gt_csr_free(&a);
    GT_ASSERT_OK(gt_csr_from_dense(2, 3, (double[]){1, 0, 0, 0, 1, 0}, &a));
    assert_int_equal(gt_solve_check(&a, 2, GT_SOLVE_CG), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "not square"));
    gt_csr_free(&a);
    /* max iterations */
    GT_ASSERT_OK(gt_laplacian(5, 20, 20, 1, &a));
    double *bb = malloc(400 * 8), *xx = calloc(400, 8);
    for (int i = 0; i < 400; i++) bb[i] = 1;
    o.method = GT_SOLVE_JACOBI, o.maxiter = 5;
    GT_ASSERT_OK(gt_solve_cpu(&a, bb, xx, &o, &r));
    assert_int_equal(r.outcome, GT_SOLVE_MAXITER);
    assert_int_equal(r.iters, 5);
    free(bb), free(xx), gt_csr_free(&a);
}

static void test_gs_reference(void **st)
{
    (void)st;
    /* One GS sweep on a 2x2 system by hand: [[4 1][1 3]] x = [1 2], x0 = 0:
       x0 = 1/4, x1 = (2 - 1/4)/3 */
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(2, 2, (double[]){4, 1, 1, 3}, &a));
    double b[2] = {1, 2}, x[2] = {0, 0};
    gt_gs_sweep(&a, b, x, 1.0);
    assert_true(fabs(x[0] - 0.25) < 1e-15 && fabs(x[1] - 1.75 / 3) < 1e-15);
    gt_csr_free(&a);
}

static void test_real_matrices(void **st)
{
    (void)st;
    gt_rng rng = {31};
    gt_csr a;
    /* testdata's principal submatrix of poisson4009: formats agree */
    if (!sp_real_matrix("poisson4009_sub1000.mtx", &a)) fail_msg("testdata/sparse/poisson4009_sub1000.mtx missing");
    assert_int_equal(a.nrows, 1000);
    gt_sp_info in;
    GT_ASSERT_OK(gt_sp_analyze(&a, &in));
    assert_true(in.symmetric);
    check_all_formats(&a, &rng);
    gt_csr_free(&a);
    /* bcsstk13 (shared data, when present): PCG reaches 1e-8 */
    if (sp_real_matrix("bcsstk13.mtx", &a)) {
        assert_int_equal(a.nrows, 2003);
        solve_and_check(&a, GT_SOLVE_PCG, 1.0);
        gt_csr_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_5x5),      cmocka_unit_test(test_seed_4x4),
        cmocka_unit_test(test_spmv_random),   cmocka_unit_test(test_laplacians),
        cmocka_unit_test(test_auto_choice),   cmocka_unit_test(test_hyb_width),
        cmocka_unit_test(test_triplets_checks), cmocka_unit_test(test_colouring),
        cmocka_unit_test(test_solvers),       cmocka_unit_test(test_solver_failures),
        cmocka_unit_test(test_gs_reference),  cmocka_unit_test(test_real_matrices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
