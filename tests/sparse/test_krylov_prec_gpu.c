/* GPU vs CPU for the preconditioned solvers (kernels/sparse/krylov_prec.cu
 * against lib/sparse/krylov_prec.c): each method with the "none" and
 * Jacobi preconditioners (IC(0)/ILU(0) too), in CSR and DIA, reaches the same outcome in the
 * same iterations (+-2) and the same x (1e-6 relative); the singular,
 * inconsistent system fails on the GPU too; a zero diagonal is refused;
 * BiCGStab's omega ~ 0 breakdown ends the GPU solves (plain and
 * preconditioned) at the CPU's iteration with "omega" in the message, and a
 * single-precision "converged" always has its true residual within 10 tol.
 * Skips (77) without a GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "sparse/krylov_prec.h"
#include "sparse/laplace.h"
#include "sparse/precond.h"
#include "sparse/problems.h"
#include "sparse/sparse.h"
#include "sparse_testutil.h"
#include "sparse/sparse_gpu.h"

static void compare(const gt_csr *a, const double *b, gt_solve_method m, gt_precond_kind k, gt_sp_format f,
                    const char *what, bool expect_conv)
{
    int64_t n = a->nrows;
    double *xc = calloc((size_t)n, 8), *xg = calloc((size_t)n, 8);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = m, o.tol = 1e-9, o.maxiter = 3000;
    gt_precond p;
    GT_ASSERT_OK(gt_precond_create_cpu(a, k, NULL, &p));
    gt_solve_result rc, rg;
    GT_ASSERT_OK(gt_solve_prec_cpu(a, &p, b, xc, &o, 0, &rc));
    gt_precond_destroy(&p);
    gt_precond info;
    double ms = -1;
    gt_status s = gt_solve_gpu_prec(a, f, k, NULL, b, xg, &o, 0, &rg, &info, &ms);
    if (s != GT_OK) fail_msg("%s: %s", what, gt_errmsg());
    assert_int_equal(info.kind, k);
    assert_true(info.on_gpu && info.setup_ms >= 0 && info.summary[0] && ms >= 0);
    assert_null(info.ctx);
    if (rc.outcome != rg.outcome || llabs(rc.iters - rg.iters) > 2)
        fail_msg("%s %s+%s (%s): cpu outcome %d after %lld, gpu %d after %lld (%s)", what,
                 gt_solve_method_name(m), gt_precond_name(k), gt_sp_format_name(f), rc.outcome,
                 (long long)rc.iters, rg.outcome, (long long)rg.iters, rg.msg);
    if (expect_conv) {
        assert_int_equal(rg.outcome, GT_SOLVE_CONVERGED);
        assert_true(rg.true_relres <= 1e-8);
        double d = 0, sc = 0;
        for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(xg[i] - xc[i])), sc = fmax(sc, fabs(xc[i]));
        if (!(d <= 1e-6 * sc))
            fail_msg("%s %s+%s: |x_gpu - x_cpu| = %g (scale %g)", what, gt_solve_method_name(m),
                     gt_precond_name(k), d, sc);
    } else {
        assert_true(rg.outcome != GT_SOLVE_CONVERGED && rg.msg[0]);
    }
    free(xc), free(xg);
}

static double *rhs_ones(const gt_csr *a)
{
    double *one = malloc((size_t)a->nrows * 8), *b = malloc((size_t)a->nrows * 8);
    for (int64_t i = 0; i < a->nrows; i++) one[i] = 1;
    gt_csr_spmv(a, one, b);
    free(one);
    return b;
}

static void test_methods_match_cpu(void **st)
{
    (void)st;
    gt_csr lap, cd;
    GT_ASSERT_OK(gt_laplacian(7, 16, 16, 16, &lap));
    GT_ASSERT_OK(gt_convdiff3d(16, 100, &cd));
    double *bl = rhs_ones(&lap), *bc = rhs_ones(&cd);
    const gt_sp_format fs[2] = {GT_SP_CSR, GT_SP_DIA};
    for (int fi = 0; fi < 2; fi++)
        for (int k = 0; k < 2; k++) {
            gt_precond_kind pk = (gt_precond_kind)k;
            compare(&lap, bl, GT_SOLVE_PCG, pk, fs[fi], "laplacian", true);
            compare(&lap, bl, GT_SOLVE_GMRES, pk, fs[fi], "laplacian", true);
            compare(&cd, bc, GT_SOLVE_BICGSTAB, pk, fs[fi], "convdiff Pe 100", true);
            compare(&cd, bc, GT_SOLVE_GMRES, pk, fs[fi], "convdiff Pe 100", true);
            if (pk == GT_PRECOND_JACOBI) compare(&cd, bc, GT_SOLVE_RICHARDSON, pk, fs[fi], "convdiff Pe 100", true);
        }
    /* the incomplete factorisations (sp-ilu's GPU apply on the solver's stream) */
    for (int fi = 0; fi < 2; fi++) {
        compare(&lap, bl, GT_SOLVE_PCG, GT_PRECOND_IC0, fs[fi], "laplacian", true);
        compare(&cd, bc, GT_SOLVE_GMRES, GT_PRECOND_ILU0, fs[fi], "convdiff Pe 100", true);
        compare(&cd, bc, GT_SOLVE_BICGSTAB, GT_PRECOND_ILU0, fs[fi], "convdiff Pe 100", true);
    }
    free(bl), free(bc), gt_csr_free(&lap), gt_csr_free(&cd);
}

/* pure Neumann with an inconsistent b: no method converges on the GPU */
static void test_singular_gpu(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_neumann_laplacian2d(8, 8, &a));
    double *b = malloc((size_t)a.nrows * 8);
    for (int64_t i = 0; i < a.nrows; i++) b[i] = 1.0 + (i == 0);
    const gt_solve_method ms[3] = {GT_SOLVE_GMRES, GT_SOLVE_BICGSTAB, GT_SOLVE_PCG};
    for (int mi = 0; mi < 3; mi++) {
        double *x = calloc((size_t)a.nrows, 8);
        gt_solve_opts o;
        gt_solve_opts_init(&o);
        o.method = ms[mi], o.maxiter = 5000;
        gt_solve_result r;
        GT_ASSERT_OK(gt_solve_gpu_prec(&a, GT_SP_CSR, GT_PRECOND_JACOBI, NULL, b, x, &o, 0, &r, NULL, NULL));
        if (r.outcome == GT_SOLVE_CONVERGED || !r.msg[0])
            fail_msg("%s: outcome %d, true residual %g", gt_solve_method_name(ms[mi]), r.outcome, r.true_relres);
        free(x);
    }
    free(b), gt_csr_free(&a);
}

static void test_zero_diagonal_gpu(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_convdiff3d(4, 10, &a));
    for (int64_t q = a.ptr[4]; q < a.ptr[5]; q++)
        if (a.col[q] == 4) a.val[q] = 0;
    double *b = rhs_ones(&a), *x = calloc((size_t)a.nrows, 8);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = GT_SOLVE_GMRES;
    gt_solve_result r;
    assert_int_equal(gt_solve_gpu_prec(&a, GT_SP_CSR, GT_PRECOND_JACOBI, NULL, b, x, &o, 0, &r, NULL, NULL),
                     GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "row 5"));
    free(b), free(x), gt_csr_free(&a);
}

/* blocks [[e, c], [-c, e]], e = 4e-15 (as test_krylov_prec.c): t's ~ 0 */
static void test_bicgstab_omega_gpu(void **st)
{
    (void)st;
    enum { K = 20, N = 2 * K };
    gt_csr a;
    sp_rotation_blocks(K, &a);
    double *b = rhs_ones(&a), *x = calloc(N, 8);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = GT_SOLVE_BICGSTAB;
    gt_solve_result rc, rg, rp;
    GT_ASSERT_OK(gt_solve_cpu(&a, b, x, &o, &rc));
    memset(x, 0, N * 8);
    GT_ASSERT_OK(gt_solve_gpu(&a, GT_SP_CSR, 8, b, x, &o, &rg, NULL));
    memset(x, 0, N * 8);
    GT_ASSERT_OK(gt_solve_gpu_prec(&a, GT_SP_CSR, GT_PRECOND_NONE, NULL, b, x, &o, 0, &rp, NULL, NULL));
    assert_int_equal(rc.outcome, GT_SOLVE_BREAKDOWN);
    if (rg.outcome != GT_SOLVE_BREAKDOWN || !strstr(rg.msg, "omega") || rg.iters != rc.iters)
        fail_msg("gpu bicgstab: outcome %d after %lld (cpu %lld): %s", rg.outcome, (long long)rg.iters,
                 (long long)rc.iters, rg.msg);
    if (rp.outcome != GT_SOLVE_BREAKDOWN || !strstr(rp.msg, "omega") || rp.iters != rc.iters)
        fail_msg("gpu bicgstab+none: outcome %d after %lld (cpu %lld): %s", rp.outcome, (long long)rp.iters,
                 (long long)rc.iters, rp.msg);
    free(b), free(x), gt_csr_free(&a);
    /* single precision below its accuracy: never a "converged" above 10 tol */
    GT_ASSERT_OK(gt_convdiff3d(32, 100, &a));
    b = rhs_ones(&a), x = calloc((size_t)a.nrows, 8);
    o.tol = 1e-7;
    GT_ASSERT_OK(gt_solve_gpu(&a, GT_SP_CSR, 4, b, x, &o, &rg, NULL));
    if (rg.outcome == GT_SOLVE_CONVERGED ? !(rg.true_relres <= 10 * o.tol) : !rg.msg[0])
        fail_msg("single: outcome %d, true residual %g, '%s'", rg.outcome, rg.true_relres, rg.msg);
    free(b), free(x), gt_csr_free(&a);
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_methods_match_cpu),
        cmocka_unit_test(test_singular_gpu),
        cmocka_unit_test(test_zero_diagonal_gpu),
        cmocka_unit_test(test_bicgstab_omega_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
