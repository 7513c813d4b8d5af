/* IC(0) and ILU(0) on the CPU: the factors reproduce A on its pattern, IC(0)
 * of a tridiagonal SPD matrix is its Cholesky factor, the apply solves
 * L U z = r, the level sets respect the dependencies, bad input gives the
 * promised errors, and the preconditioners cut the iterations of small
 * PCG / BiCGStab loops. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "ilu0_testutil.h"
#include "sparse/ilu0.h"
#include "sparse/laplace.h"
#include "sparse/sparse.h"
#include "sparse_testutil.h"

/* max over A's pattern of |(L U)_ij - a_ij| / max|a| <= 1e-12 */
static void check_product(const gt_csr *a, bool ic, const char *what)
{
    gt_ilu0 F;
    GT_ASSERT_OK(gt_ilu0_factor(a, ic, &F));
    int64_t n = a->nrows;
    double *L = malloc((size_t)(n * n) * 8), *U = malloc((size_t)(n * n) * 8);
    ilu_dense_factors(&F, L, U);
    double amax = 0;
    for (int64_t p = 0; p < a->nnz; p++) amax = fmax(amax, fabs(a->val[p]));
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int32_t j = a->col[p];
            double s = 0;
            for (int64_t k = 0; k <= (i < j ? i : j); k++) s += L[i * n + k] * U[k * n + j];
            if (fabs(s - a->val[p]) > 1e-12 * amax)
                fail_msg("%s %s: (LU)(%lld,%d) = %.17g, a = %.17g", what, ic ? "ic0" : "ilu0", (long long)i, j, s,
                         a->val[p]);
        }
    /* IC(0): U is L^T exactly */
    if (ic)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) assert_true(U[i * n + j] == L[j * n + i]);
    free(L), free(U);
    gt_ilu0_free(&F);
}

static void test_product_on_pattern(void **st)
{
    (void)st;
    gt_rng rng = {16};
    for (int t = 0; t < 6; t++) {
        int64_t n = 20 + 30 * t;
        gt_csr a;
        sp_diag_dominant(&rng, n, 0.05 + 0.02 * t, &a);
        check_product(&a, false, "random diagonally dominant");
        gt_csr_free(&a);
        ilu_sym_dd(&rng, n, 0.04 + 0.02 * t, &a);
        check_product(&a, true, "random symmetric");
        check_product(&a, false, "random symmetric");
        gt_csr_free(&a);
    }
    gt_csr a;
    GT_ASSERT_OK(gt_laplacian(5, 13, 11, 1, &a));
    check_product(&a, true, "laplacian 5-point");
    check_product(&a, false, "laplacian 5-point");
    gt_csr_free(&a);
    GT_ASSERT_OK(gt_laplacian(9, 9, 8, 1, &a));
    check_product(&a, true, "laplacian 9-point");
    gt_csr_free(&a);
    ilu_convdiff2d(12, 9, 5, 2, &a);
    check_product(&a, false, "convection-diffusion");
    gt_csr_free(&a);
}

/* no fill for a tridiagonal matrix: IC(0) = Cholesky (dense reference) */
static void test_ic0_tridiagonal_is_cholesky(void **st)
{
    (void)st;
    gt_rng rng = {3};
    int64_t n = 40;
    double *A = calloc((size_t)(n * n), 8), *C = calloc((size_t)(n * n), 8);
    for (int64_t i = 0; i < n; i++) {
        A[i * n + i] = gt_rng_range(&rng, 2.5, 4);
        if (i > 0) A[i * n + i - 1] = A[(i - 1) * n + i] = gt_rng_range(&rng, -1, 1);
    }
    for (int64_t j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (int64_t k = 0; k < j; k++) d -= C[j * n + k] * C[j * n + k];
        C[j * n + j] = sqrt(d);
        for (int64_t i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (int64_t k = 0; k < j; k++) s -= C[i * n + k] * C[j * n + k];
            C[i * n + j] = s / C[j * n + j];
        }
    }
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(n, n, A, &a));
    gt_ilu0 F;
    GT_ASSERT_OK(gt_ilu0_factor(&a, true, &F));
    double *L = malloc((size_t)(n * n) * 8), *U = malloc((size_t)(n * n) * 8);
    ilu_dense_factors(&F, L, U);
    for (int64_t k = 0; k < n * n; k++)
        if (fabs(L[k] - C[k]) > 1e-14 * fabs(C[k]) + 1e-300)
            fail_msg("entry %lld: ic0 %.17g cholesky %.17g", (long long)k, L[k], C[k]);
    free(A), free(C), free(L), free(U), gt_ilu0_free(&F), gt_csr_free(&a);
}

/* L (U z) reproduces r: ||LUz - r||_inf <= 1e-12 ||r||_inf * cond scale */
static void check_apply(const gt_csr *a, bool ic, const char *what)
{
    gt_precond p;
    GT_ASSERT_OK(gt_precond_ilu0_cpu(a, ic, &p));
    assert_int_equal(p.kind, ic ? GT_PRECOND_IC0 : GT_PRECOND_ILU0);
    assert_false(p.on_gpu);
    assert_true(p.setup_ms >= 0);
    assert_non_null(strstr(p.summary, "levels"));
    gt_ilu0 *F = p.ctx;
    int64_t n = a->nrows;
    gt_rng rng = {7};
    double *r = malloc((size_t)n * 8), *z = malloc((size_t)n * 8), *y = malloc((size_t)n * 8),
           *w = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) r[i] = gt_rng_range(&rng, -1, 1);
    GT_ASSERT_OK(p.apply(p.ctx, r, z, NULL));
    /* w = L (U z) with the factors in f */
    const gt_csr *f = &F->f;
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t q = F->diag[i]; q < f->ptr[i + 1]; q++) s += f->val[q] * z[f->col[q]];
        y[i] = s;
    }
    double rmax = 0, err = 0;
    for (int64_t i = 0; i < n; i++) {
        double s = F->ic ? f->val[F->diag[i]] * y[i] : y[i];
        for (int64_t q = f->ptr[i]; q < F->diag[i]; q++) s += f->val[q] * y[f->col[q]];
        w[i] = s;
        rmax = fmax(rmax, fabs(r[i]));
        err = fmax(err, fabs(w[i] - r[i]));
    }
    if (err > 1e-11 * rmax) fail_msg("%s: ||LUz - r|| = %g (||r|| %g)", what, err, rmax);
    /* in place gives the same */
    memcpy(w, r, (size_t)n * 8);
    gt_ilu0_solve(F, w, w);
    for (int64_t i = 0; i < n; i++) assert_true(w[i] == z[i]);
    free(r), free(z), free(y), free(w);
    p.destroy(p.ctx);
}

static void test_apply_solves(void **st)
{
    (void)st;
    gt_rng rng = {5};
    gt_csr a;
    sp_diag_dominant(&rng, 500, 0.01, &a);
    check_apply(&a, false, "random");
    gt_csr_free(&a);
    ilu_sym_dd(&rng, 400, 0.01, &a);
    check_apply(&a, true, "random symmetric");
    gt_csr_free(&a);
    GT_ASSERT_OK(gt_laplacian(7, 9, 8, 7, &a));
    check_apply(&a, true, "7-point");
    check_apply(&a, false, "7-point");
    gt_csr_free(&a);
    ilu_convdiff2d(30, 20, 50, 10, &a);
    check_apply(&a, false, "convection-diffusion");
    gt_csr_free(&a);
}

/* every row once; every row's dependencies on strictly earlier levels; each
   level but the first has a row depending on the level before (the sets are
   as shallow as the dependencies allow) */
static void check_levels(const gt_csr *a)
{
    gt_ilu0 F;
    GT_ASSERT_OK(gt_ilu0_factor(a, false, &F));
    int64_t n = a->nrows;
    int32_t *lev = malloc((size_t)n * 4);
    for (int u = 0; u < 2; u++) {
        const gt_levels *lv = u ? &F.upper : &F.lower;
        for (int64_t i = 0; i < n; i++) lev[i] = -1;
        assert_int_equal(lv->ptr[0], 0);
        assert_int_equal(lv->ptr[lv->nlevels], n);
        for (int64_t l = 0; l < lv->nlevels; l++) {
            assert_true(lv->ptr[l + 1] > lv->ptr[l]);
            for (int64_t t = lv->ptr[l]; t < lv->ptr[l + 1]; t++) {
                assert_int_equal(lev[lv->rows[t]], -1);
                lev[lv->rows[t]] = (int32_t)l;
            }
        }
        char *deep = calloc((size_t)lv->nlevels + 1, 1);
        for (int64_t i = 0; i < n; i++) {
            int64_t b = u ? F.diag[i] + 1 : a->ptr[i], e = u ? a->ptr[i + 1] : F.diag[i];
            for (int64_t p = b; p < e; p++) {
                assert_true(lev[a->col[p]] < lev[i]);
                if (lev[a->col[p]] == lev[i] - 1) deep[lev[i]] = 1;
            }
        }
        for (int64_t l = 1; l < lv->nlevels; l++) assert_true(deep[l]);
        free(deep);
    }
    free(lev);
    gt_ilu0_free(&F);
}

static void test_levels(void **st)
{
    (void)st;
    gt_rng rng = {11};
    gt_csr a;
    sp_diag_dominant(&rng, 300, 0.01, &a);
    check_levels(&a);
    gt_csr_free(&a);
    /* natural ordering of an nx x ny x nz grid: row (x, y, z) sits on level
       x + y + z in both solves */
    GT_ASSERT_OK(gt_laplacian(7, 6, 5, 4, &a));
    check_levels(&a);
    gt_ilu0 F;
    GT_ASSERT_OK(gt_ilu0_factor(&a, true, &F));
    assert_int_equal(F.lower.nlevels, 6 + 5 + 4 - 2);
    assert_int_equal(F.upper.nlevels, 6 + 5 + 4 - 2);
    gt_ilu0_free(&F);
    gt_csr_free(&a);
    /* a diagonal matrix: one level */
    GT_ASSERT_OK(gt_laplacian(3, 1, 1, 1, &a));
    GT_ASSERT_OK(gt_ilu0_factor(&a, false, &F));
    assert_int_equal(F.lower.nlevels, 1);
    gt_ilu0_free(&F);
    gt_csr_free(&a);
}

static void expect_error(const double *dense, int64_t n, bool ic, const char *want1, const char *want2)
{
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(n, n, dense, &a));
    gt_precond p;
    gt_status s = gt_precond_ilu0_cpu(&a, ic, &p);
    if (s != GT_ERR_DATA) fail_msg("%s: status %d, want GT_ERR_DATA", want1, (int)s);
    if (!strstr(gt_errmsg(), want1) || (want2 && !strstr(gt_errmsg(), want2)))
        fail_msg("message \"%s\" lacks \"%s\" / \"%s\"", gt_errmsg(), want1, want2 ? want2 : "");
    gt_csr_free(&a);
}

static void test_errors(void **st)
{
    (void)st;
    /* ILU(0): u_22 = 1 - 1*1 = 0 */
    const double sing[9] = {1, 1, 0, 1, 1, 0, 0, 0, 1};
    expect_error(sing, 3, false, "ILU(0) breaks down at row 2", "pivot 0");
    /* IC(0) on an indefinite matrix: l_22^2 = 1 - 4 < 0 */
    const double indef[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
    expect_error(indef, 3, true, "IC(0) breaks down at row 2: pivot -3",
                 "not positive definite, or try --precond ilu0/jacobi");
    /* a negative diagonal in row 3 */
    const double negd[9] = {2, 0, 0, 0, 2, 0, 0, 0, -1};
    expect_error(negd, 3, true, "IC(0) breaks down at row 3", NULL);
    /* missing diagonal */
    const double nodiag[9] = {2, 1, 0, 1, 0, 1, 0, 1, 2};
    expect_error(nodiag, 3, false, "row 2 has no diagonal entry", NULL);
    expect_error(nodiag, 3, true, "row 2 has no diagonal entry", NULL);
    /* NaN and infinity, named by row */
    const double nan3[9] = {2, 0, 0, 0, 2, 0, NAN, 0, 2};
    expect_error(nan3, 3, false, "not a finite number (row 3)", NULL);
    const double inf2[9] = {2, 0, 0, 0, 2, INFINITY, 0, 0, 2};
    expect_error(inf2, 3, true, "not a finite number (row 2)", NULL);
    /* IC(0) of a structurally nonsymmetric matrix */
    const double nsym[9] = {2, 0, 0, 1, 2, 0, 0, 0, 2};
    expect_error(nsym, 3, true, "symmetric", "try --precond ilu0");
    const double nsym2[9] = {2, 0, 1, 0, 2, 0, 0, 0, 2};
    expect_error(nsym2, 3, true, "entry (1, 3) has no mirror", NULL);
    /* the same faults in a matrix large enough for the parallel check */
    gt_csr big;
    GT_ASSERT_OK(gt_laplacian(5, 400, 400, 1, &big));
    gt_precond q;
    double keep = big.val[big.ptr[150000] + 1];
    big.val[big.ptr[150000] + 1] = NAN;
    assert_int_equal(gt_precond_ilu0_cpu(&big, false, &q), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "not a finite number (row 150001)"));
    big.val[big.ptr[150000] + 1] = keep;
    GT_ASSERT_OK(gt_precond_ilu0_cpu(&big, true, &q));
    q.destroy(q.ctx);
    for (int drop = 0; drop < 2; drop++) {
        gt_coo c;
        GT_ASSERT_OK(gt_csr_to_coo(&big, &c));
        /* drop (1000, 1001) (0-based): the lower (1001, 1000) has no mirror;
           drop (1001, 1000): the upper (1000, 1001) has none */
        int64_t k = 0;
        for (int64_t e = 0; e < c.nnz; e++) {
            int32_t r = drop ? 1001 : 1000, cc = drop ? 1000 : 1001;
            if (c.row[e] == r && c.col[e] == cc) continue;
            c.row[k] = c.row[e], c.col[k] = c.col[e], c.val[k++] = c.val[e];
        }
        gt_csr cut;
        GT_ASSERT_OK(gt_csr_from_triplets(c.nrows, c.ncols, k, c.row, c.col, c.val, &cut));
        gt_coo_free(&c);
        assert_int_equal(gt_precond_ilu0_cpu(&cut, true, &q), GT_ERR_DATA);
        if (!strstr(gt_errmsg(), drop ? "entry (1001, 1002) has no mirror" : "entry (1002, 1001) has no mirror"))
            fail_msg("drop %d: %s", drop, gt_errmsg());
        GT_ASSERT_OK(gt_precond_ilu0_cpu(&cut, false, &q));
        q.destroy(q.ctx);
        gt_csr_free(&cut);
    }
    gt_csr_free(&big);
    /* ILU(0) takes the same nonsymmetric one */
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(3, 3, nsym, &a));
    gt_precond p;
    GT_ASSERT_OK(gt_precond_ilu0_cpu(&a, false, &p));
    p.destroy(p.ctx);
    gt_csr_free(&a);
}

/* ------------------------------------------------- small Krylov loops */
static double dot(int64_t n, const double *x, const double *y)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* PCG (p NULL: CG) to ||r|| <= 1e-8 ||b||; returns the iterations (-1: none) */
static int pcg(const gt_csr *a, const gt_precond *p, const double *b, double *x)
{
    int64_t n = a->nrows;
    double *r = malloc((size_t)n * 8), *z = malloc((size_t)n * 8), *d = malloc((size_t)n * 8),
           *q = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) x[i] = 0, r[i] = b[i];
    double bb = sqrt(dot(n, b, b));
    if (p) p->apply(p->ctx, r, z, NULL);
    else memcpy(z, r, (size_t)n * 8);
    memcpy(d, z, (size_t)n * 8);
    double rz = dot(n, r, z);
    int it = -1;
    for (int k = 1; k <= 5000; k++) {
        gt_csr_spmv(a, d, q);
        double alpha = rz / dot(n, d, q);
        for (int64_t i = 0; i < n; i++) x[i] += alpha * d[i], r[i] -= alpha * q[i];
        if (sqrt(dot(n, r, r)) <= 1e-8 * bb) {
            it = k;
            break;
        }
        if (p) p->apply(p->ctx, r, z, NULL);
        else memcpy(z, r, (size_t)n * 8);
        double rz1 = dot(n, r, z);
        for (int64_t i = 0; i < n; i++) d[i] = z[i] + rz1 / rz * d[i];
        rz = rz1;
    }
    free(r), free(z), free(d), free(q);
    return it;
}

/* right-preconditioned BiCGStab: A M^-1 u = b, x = M^-1 u */
static int bicgstab(const gt_csr *a, const gt_precond *pc, const double *b, double *x)
{
    int64_t n = a->nrows;
    double *r = malloc((size_t)n * 8), *rh = malloc((size_t)n * 8), *p = calloc((size_t)n, 8),
           *v = calloc((size_t)n, 8), *s = malloc((size_t)n * 8), *t = malloc((size_t)n * 8),
           *ph = malloc((size_t)n * 8), *sh = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) x[i] = 0, r[i] = rh[i] = b[i];
    double bb = sqrt(dot(n, b, b)), rho = 1, alpha = 1, omega = 1;
    int it = -1;
    for (int k = 1; k <= 5000; k++) {
        double rho1 = dot(n, rh, r), beta = rho1 / rho * alpha / omega;
        rho = rho1;
        for (int64_t i = 0; i < n; i++) p[i] = r[i] + beta * (p[i] - omega * v[i]);
        if (pc) pc->apply(pc->ctx, p, ph, NULL);
        else memcpy(ph, p, (size_t)n * 8);
        gt_csr_spmv(a, ph, v);
        alpha = rho / dot(n, rh, v);
        for (int64_t i = 0; i < n; i++) s[i] = r[i] - alpha * v[i];
        if (pc) pc->apply(pc->ctx, s, sh, NULL);
        else memcpy(sh, s, (size_t)n * 8);
        gt_csr_spmv(a, sh, t);
        omega = dot(n, t, s) / dot(n, t, t);
        for (int64_t i = 0; i < n; i++) x[i] += alpha * ph[i] + omega * sh[i], r[i] = s[i] - omega * t[i];
        if (sqrt(dot(n, r, r)) <= 1e-8 * bb) {
            it = k;
            break;
        }
    }
    free(r), free(rh), free(p), free(v), free(s), free(t), free(ph), free(sh);
    return it;
}

/* true residual of the returned x */
static double relres(const gt_csr *a, const double *b, const double *x)
{
    int64_t n = a->nrows;
    double *q = malloc((size_t)n * 8);
    gt_csr_spmv(a, x, q);
    for (int64_t i = 0; i < n; i++) q[i] = b[i] - q[i];
    double r = sqrt(dot(n, q, q) / dot(n, b, b));
    free(q);
    return r;
}

static void test_fewer_iterations(void **st)
{
    (void)st;
    gt_rng rng = {1};
    gt_csr a;
    GT_ASSERT_OK(gt_laplacian(5, 60, 50, 1, &a));
    int64_t n = a.nrows;
    double *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) b[i] = gt_rng_range(&rng, -1, 1);
    gt_precond p;
    GT_ASSERT_OK(gt_precond_ilu0_cpu(&a, true, &p));
    int i0 = pcg(&a, NULL, b, x), i1 = pcg(&a, &p, b, x);
    print_message("2-D Laplacian 60x50: CG %d iterations, IC(0)-PCG %d\n", i0, i1);
    assert_true(i1 > 0 && i0 > 0);
    assert_true(relres(&a, b, x) < 1e-7);
    assert_true(2 * i1 < i0);
    p.destroy(p.ctx);
    gt_csr_free(&a);
    free(b), free(x);

    ilu_convdiff2d(60, 50, 20, 5, &a);
    n = a.nrows;
    b = malloc((size_t)n * 8), x = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) b[i] = gt_rng_range(&rng, -1, 1);
    GT_ASSERT_OK(gt_precond_ilu0_cpu(&a, false, &p));
    i0 = bicgstab(&a, NULL, b, x);
    i1 = bicgstab(&a, &p, b, x);
    print_message("convection-diffusion 60x50 Pe 20: BiCGStab %d iterations, with ILU(0) %d\n", i0, i1);
    assert_true(i1 > 0);
    assert_true(relres(&a, b, x) < 1e-7);
    assert_true(i0 < 0 || 2 * i1 < i0);
    p.destroy(p.ctx);
    gt_csr_free(&a);
    free(b), free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_product_on_pattern), cmocka_unit_test(test_ic0_tridiagonal_is_cholesky),
        cmocka_unit_test(test_apply_solves),       cmocka_unit_test(test_levels),
        cmocka_unit_test(test_errors),             cmocka_unit_test(test_fewer_iterations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
