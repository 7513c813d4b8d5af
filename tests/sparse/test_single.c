/* The CPU solvers in single precision (gt_solve_cpu_prec 4) against double on
 * well-conditioned systems: every method converges, x agrees with the double
 * solution to 1e-5 relative, and the result is really computed in float
 * (it differs from the double one). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "sparse/sparse.h"
#include "sparse_testutil.h"

static void single_vs_double(const gt_csr *a, gt_solve_method m)
{
    int64_t n = a->nrows;
    double *xt = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *xs = calloc((size_t)n, 8),
           *xd = calloc((size_t)n, 8);
    gt_rng rng = {3};
    for (int64_t i = 0; i < n; i++) xt[i] = gt_rng_range(&rng, 0.5, 1.5);
    gt_csr_spmv(a, xt, b);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = m, o.maxiter = 20000;
    gt_solve_result rs, rd;
    o.tol = 1e-12;
    GT_ASSERT_OK(gt_solve_cpu_prec(a, 8, b, xd, &o, &rd));
    o.tol = 1e-6;
    GT_ASSERT_OK(gt_solve_cpu_prec(a, 4, b, xs, &o, &rs));
    if (rd.outcome != GT_SOLVE_CONVERGED) fail_msg("double %s: %s", gt_solve_method_name(m), rd.msg);
    if (rs.outcome != GT_SOLVE_CONVERGED) fail_msg("single %s: %s", gt_solve_method_name(m), rs.msg);
    double err = 0, xm = 0;
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(xs[i] - xd[i])), xm = fmax(xm, fabs(xd[i]));
    if (err > 1e-5 * xm) fail_msg("%s: single vs double max diff %g (max |x| %g)", gt_solve_method_name(m), err, xm);
    if (!(err > 1e-12 * xm)) fail_msg("%s: single result equals the double one (%g)", gt_solve_method_name(m), err);
    /* every float x is a float */
    for (int64_t i = 0; i < n; i++) assert_true((double)(float)xs[i] == xs[i]);
    assert_true(rs.true_relres <= 1e-5);
    free(xt), free(b), free(xs), free(xd);
}

static void test_single_all_methods(void **st)
{
    (void)st;
    gt_rng rng = {8};
    gt_csr spd, dd;
    sp_graph_laplacian(&rng, 2000, 8, 6.0, &spd); /* SPD, lambda in [6, ~25] */
    sp_graph_laplacian(&rng, 2000, 8, 6.0, &dd);
    for (int64_t i = 0; i < dd.nrows; i++) /* not symmetric, still dominant by >= 6 */
        for (int64_t p = dd.ptr[i]; p < dd.ptr[i + 1]; p++)
            if (dd.col[p] > i) dd.val[p] *= 0.5;
    for (int m = 0; m < GT_SOLVE_GMRES; m++) { /* gmres and amg run in double only */
        single_vs_double(&spd, (gt_solve_method)m);
        if (m != GT_SOLVE_CG && m != GT_SOLVE_PCG) single_vs_double(&dd, (gt_solve_method)m);
    }
    gt_csr_free(&spd), gt_csr_free(&dd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_all_methods),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
