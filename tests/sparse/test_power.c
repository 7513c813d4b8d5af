/* Power iteration and Richardson's default step (CPU): the estimate against
 * closed-form spectra (1D Laplacian, D P), the step against the Gershgorin
 * one where Gershgorin is loose, and Richardson converging with it. */
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

/* 1D Laplacian tridiag(-1, 2, -1): lambda_max = 2 + 2 cos(pi/(n+1)). The
   Rayleigh quotient is a lower bound that the iteration brings close. */
static void test_power_laplacian_1d(void **st)
{
    (void)st;
    const int64_t sizes[3] = {10, 50, 400};
    for (int k = 0; k < 3; k++) {
        int64_t n = sizes[k];
        gt_csr a;
        GT_ASSERT_OK(gt_laplacian(3, n, 1, 1, &a));
        double lmax = 2 + 2 * cos(M_PI / (double)(n + 1)), est = 0;
        GT_ASSERT_OK(gt_power_estimate(&a, NULL, GT_POWER_ITERS, &est));
        if (!(est <= lmax * (1 + 1e-12) && est >= 0.98 * lmax))
            fail_msg("n %lld: estimate %.17g, lambda_max %.17g", (long long)n, est, lmax);
        /* the step converges: tau < 2 / lambda_max */
        double tau = 0;
        GT_ASSERT_OK(gt_richardson_tau_power(&a, &tau));
        assert_true(tau > 0 && tau < 2 / lmax);
        gt_csr_free(&a);
    }
}

/* Nonsymmetric A = D P (P a cyclic permutation): sigma(A) = |d|, so the
   estimate of lambda_max(A^T A) is close to max d^2, never above it. */
static void test_power_nonsymmetric(void **st)
{
    (void)st;
    const int64_t n = 40;
    int32_t ri[40], ci[40];
    double v[40], dmax = 0;
    for (int64_t i = 0; i < n; i++) {
        ri[i] = (int32_t)i, ci[i] = (int32_t)((i + 1) % n), v[i] = 0.5 + 2.5 * (double)((i * 7) % n) / (double)(n - 1);
        dmax = fmax(dmax, v[i]);
    }
    gt_csr a, at;
    GT_ASSERT_OK(gt_csr_from_triplets(n, n, n, ri, ci, v, &a));
    GT_ASSERT_OK(gt_csr_transpose(&a, &at));
    assert_int_equal(at.nnz, n);
    for (int64_t i = 0; i < n; i++) { /* A^T[j][i] = A[i][j] */
        assert_int_equal(at.ptr[(i + 1) % n + 1] - at.ptr[(i + 1) % n], 1);
        assert_int_equal(at.col[at.ptr[(i + 1) % n]], i);
    }
    double est = 0;
    GT_ASSERT_OK(gt_power_estimate(&a, &at, GT_POWER_ITERS, &est));
    if (!(est <= dmax * dmax * (1 + 1e-12) && est >= 0.98 * dmax * dmax))
        fail_msg("estimate %.17g, sigma_max^2 %.17g", est, dmax * dmax);
    gt_csr_free(&a), gt_csr_free(&at);
}

/* Shifted graph Laplacian: Gershgorin's upper bound is loose, the power step
   is larger than the Gershgorin one, stays below 2/lambda_max (the estimate
   is below lambda_max, and Richardson converges), in fewer iterations. */
static void test_power_tau_richardson(void **st)
{
    (void)st;
    gt_rng rng = {77};
    gt_csr a;
    sp_graph_laplacian(&rng, 600, 16, 1.0, &a);
    double est = 0;
    GT_ASSERT_OK(gt_power_estimate(&a, NULL, GT_POWER_ITERS, &est));
    /* lambda_max from many more iterations (the Rayleigh quotient only grows
       towards it) */
    double ref = 0;
    GT_ASSERT_OK(gt_power_estimate(&a, NULL, 3000, &ref));
    assert_true(est <= ref * (1 + 1e-12) && est >= 0.95 * ref);
    double tau_g = gt_richardson_tau(&a), tau_p = 0;
    GT_ASSERT_OK(gt_richardson_tau_power(&a, &tau_p));
    if (!(tau_p > tau_g && tau_p < 2 / ref)) fail_msg("tau power %g, Gershgorin %g, 2/lmax %g", tau_p, tau_g, 2 / ref);
    int64_t n = a.nrows;
    double *one = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *x = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) one[i] = 1 + 0.01 * (double)(i % 13);
    gt_csr_spmv(&a, one, b);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = GT_SOLVE_RICHARDSON, o.tol = 1e-8, o.maxiter = 100000;
    gt_solve_result rp, rg;
    GT_ASSERT_OK(gt_solve_cpu(&a, b, x, &o, &rp)); /* tau omitted: the power step */
    assert_int_equal(rp.outcome, GT_SOLVE_CONVERGED);
    assert_true(rp.tau == tau_p);
    assert_true(rp.true_relres <= 1e-7);
    memset(x, 0, (size_t)n * 8);
    o.tau = tau_g;
    GT_ASSERT_OK(gt_solve_cpu(&a, b, x, &o, &rg));
    assert_int_equal(rg.outcome, GT_SOLVE_CONVERGED);
    if (!(rp.iters < rg.iters)) fail_msg("power step %lld iterations, Gershgorin %lld", (long long)rp.iters, (long long)rg.iters);
    free(one), free(b), free(x), gt_csr_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_laplacian_1d),
        cmocka_unit_test(test_power_nonsymmetric),
        cmocka_unit_test(test_power_tau_richardson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
