/* The preconditioner framework and the preconditioned Krylov solvers on the
 * CPU (krylov_prec.c): names and defaults, Jacobi's set-up and apply, each
 * method against the unpreconditioned reference (solvers.c) where the two
 * are the same algorithm, convergence on the nonsymmetric test problems with
 * the true residual within tol, and honest failure on a singular,
 * inconsistent system and on a preconditioner that fails. */
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

/* b = A*1 */
static double *rhs_ones(const gt_csr *a)
{
    double *one = malloc((size_t)a->nrows * 8), *b = malloc((size_t)a->nrows * 8);
    for (int64_t i = 0; i < a->nrows; i++) one[i] = 1;
    gt_csr_spmv(a, one, b);
    free(one);
    return b;
}

static double max_err_ones(const double *x, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(x[i] - 1));
    return e;
}

/* solve A x = A*1 from 0 with method m and preconditioner k; returns x */
static double *solve(const gt_csr *a, gt_solve_method m, gt_precond_kind k, double tol, int restart,
                     gt_solve_result *res)
{
    gt_precond p;
    GT_ASSERT_OK(gt_precond_create_cpu(a, k, NULL, &p));
    double *b = rhs_ones(a), *x = calloc((size_t)a->nrows, 8);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = m, o.tol = tol;
    GT_ASSERT_OK(gt_solve_prec_cpu(a, &p, b, x, &o, restart, res));
    gt_precond_destroy(&p);
    free(b);
    return x;
}

static void test_names_defaults(void **st)
{
    (void)st;
    for (int k = 0; k < GT_PRECOND_NKINDS; k++) {
        gt_precond_kind got;
        GT_ASSERT_OK(gt_precond_parse("--precond", gt_precond_name((gt_precond_kind)k), &got));
        assert_int_equal(got, k);
    }
    gt_precond_kind got;
    assert_int_equal(gt_precond_parse("--precond", "ilu1", &got), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "--precond"));
    gt_precond_opts o;
    gt_precond_opts_init(&o);
    assert_true(o.amg_theta == 0.08 && o.amg_max_levels == 25 && o.amg_coarse_size == 300);
    assert_true(o.amg_smoother == GT_AMG_SMOOTH_CHEBYSHEV && o.amg_sweeps == 1);
    assert_true(fabs(o.amg_omega - 4.0 / 3.0) < 1e-15);
    assert_string_equal(gt_solve_method_name(GT_SOLVE_GMRES), "gmres");
    assert_string_equal(gt_solve_method_name(GT_SOLVE_AMG), "amg");
}

static void test_jacobi_apply_and_zero_diag(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_convdiff3d(4, 100, &a));
    gt_precond p;
    GT_ASSERT_OK(gt_precond_create_cpu(&a, GT_PRECOND_JACOBI, NULL, &p));
    assert_int_equal(p.kind, GT_PRECOND_JACOBI);
    assert_false(p.on_gpu);
    assert_true(p.setup_ms >= 0 && p.levels == 1 && p.complexity == 1.0 && p.summary[0]);
    int64_t n = a.nrows;
    double *r = malloc((size_t)n * 8), *z = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) r[i] = (double)(i % 7) - 3;
    GT_ASSERT_OK(p.apply(p.ctx, r, z, NULL));
    for (int64_t i = 0; i < n; i++) {
        double d = 0;
        for (int64_t q = a.ptr[i]; q < a.ptr[i + 1]; q++)
            if (a.col[q] == i) d = a.val[q];
        assert_true(fabs(z[i] * d - r[i]) <= 1e-14 * fabs(r[i]) + 1e-300);
    }
    gt_precond_destroy(&p);
    /* a zero diagonal in row 3 (1-based) */
    for (int64_t q = a.ptr[2]; q < a.ptr[3]; q++)
        if (a.col[q] == 2) a.val[q] = 0;
    assert_int_equal(gt_precond_create_cpu(&a, GT_PRECOND_JACOBI, NULL, &p), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "row 3"));
    /* AMG divides by the diagonal too (its smoother and prolongator) */
    assert_int_equal(gt_precond_create_cpu(&a, GT_PRECOND_AMG, NULL, &p), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "row 3"));
    free(r), free(z), gt_csr_free(&a);
}

/* PCG with the Jacobi object is the reference's Jacobi-PCG; BiCGStab with
   "none" is the reference's BiCGStab: same iterations, same x. */
static void test_same_as_reference(void **st)
{
    (void)st;
    gt_csr a, c;
    GT_ASSERT_OK(gt_laplacian(7, 10, 10, 10, &a));
    GT_ASSERT_OK(gt_convdiff3d(10, 30, &c));
    const gt_csr *mats[2] = {&a, &c};
    const gt_solve_method ms[2] = {GT_SOLVE_PCG, GT_SOLVE_BICGSTAB};
    const gt_precond_kind ks[2] = {GT_PRECOND_JACOBI, GT_PRECOND_NONE};
    for (int t = 0; t < 2; t++) {
        const gt_csr *m = mats[t];
        gt_solve_result rp, rr;
        double *xp = solve(m, ms[t], ks[t], 1e-10, 0, &rp);
        double *b = rhs_ones(m), *xr = calloc((size_t)m->nrows, 8);
        gt_solve_opts o;
        gt_solve_opts_init(&o);
        o.method = ms[t], o.tol = 1e-10;
        GT_ASSERT_OK(gt_solve_cpu(m, b, xr, &o, &rr));
        assert_int_equal(rp.outcome, GT_SOLVE_CONVERGED);
        assert_int_equal(rr.outcome, GT_SOLVE_CONVERGED);
        if (rp.iters != rr.iters)
            fail_msg("%s: %lld iterations, reference %lld", gt_solve_method_name(ms[t]), (long long)rp.iters,
                     (long long)rr.iters);
        for (int64_t i = 0; i < m->nrows; i++) assert_true(fabs(xp[i] - xr[i]) <= 1e-9);
        free(xp), free(xr), free(b);
    }
    gt_csr_free(&a), gt_csr_free(&c);
}

/* Every method converges on convection-diffusion (Pe 10, 100, 1000) with
   the true residual within tol, and x near the exact all-ones solution. */
static void test_convdiff_converges(void **st)
{
    (void)st;
    const double pes[3] = {10, 100, 1000};
    for (int pi = 0; pi < 3; pi++) {
        gt_csr a;
        GT_ASSERT_OK(gt_convdiff3d(12, pes[pi], &a));
        const gt_solve_method ms[3] = {GT_SOLVE_GMRES, GT_SOLVE_BICGSTAB, GT_SOLVE_RICHARDSON};
        for (int mi = 0; mi < 3; mi++)
            for (int k = 0; k < 2; k++) {
                if (ms[mi] == GT_SOLVE_RICHARDSON && k == 0) continue; /* x += r: diverges */
                gt_solve_result r;
                double *x = solve(&a, ms[mi], (gt_precond_kind)k, 1e-8, 0, &r);
                if (r.outcome != GT_SOLVE_CONVERGED || !(r.true_relres <= 1e-8))
                    fail_msg("Pe %g %s+%s: outcome %d after %lld, true residual %g (%s)", pes[pi],
                             gt_solve_method_name(ms[mi]), gt_precond_name((gt_precond_kind)k), r.outcome,
                             (long long)r.iters, r.true_relres, r.msg);
                assert_true(max_err_ones(x, a.nrows) < 1e-4);
                free(x);
            }
        gt_csr_free(&a);
    }
}

/* GMRES(m) with m >= n is full GMRES: at most n iterations in exact
   arithmetic; a short restart still converges here, with more iterations. */
static void test_gmres_restart(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_convdiff3d(4, 50, &a)); /* n = 64 */
    gt_solve_result full, m5;
    double *x1 = solve(&a, GT_SOLVE_GMRES, GT_PRECOND_NONE, 1e-10, 200, &full);
    double *x2 = solve(&a, GT_SOLVE_GMRES, GT_PRECOND_NONE, 1e-10, 5, &m5);
    assert_int_equal(full.outcome, GT_SOLVE_CONVERGED);
    assert_int_equal(m5.outcome, GT_SOLVE_CONVERGED);
    assert_true(full.iters <= a.nrows);
    assert_true(m5.iters >= full.iters);
    assert_true(full.true_relres <= 1e-10 && m5.true_relres <= 1e-10);
    free(x1), free(x2), gt_csr_free(&a);
}

/* The rotated anisotropic problem: Jacobi-preconditioned GMRES and PCG
   reach tol; unpreconditioned Richardson with a tiny maxiter stops honestly. */
static void test_aniso(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_rotated_aniso2d(24, 1e-3, 30, &a));
    gt_sp_info in;
    GT_ASSERT_OK(gt_sp_analyze(&a, &in));
    assert_true(in.symmetric);
    gt_solve_result r;
    double *x = solve(&a, GT_SOLVE_PCG, GT_PRECOND_JACOBI, 1e-8, 0, &r);
    assert_int_equal(r.outcome, GT_SOLVE_CONVERGED);
    assert_true(r.true_relres <= 1e-7);
    free(x);
    x = solve(&a, GT_SOLVE_GMRES, GT_PRECOND_JACOBI, 1e-8, 40, &r);
    assert_int_equal(r.outcome, GT_SOLVE_CONVERGED);
    assert_true(r.true_relres <= 1e-8);
    free(x), gt_csr_free(&a);
}

/* Pure Neumann: consistent b (sums to 0) converges; inconsistent b (A*1 + 1)
   ends in a non-converged outcome with a message, for every method. */
static void test_singular(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_neumann_laplacian2d(8, 8, &a));
    int64_t n = a.nrows;
    double *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.tol = 1e-8;
    o.maxiter = 5000;
    gt_precond p;
    GT_ASSERT_OK(gt_precond_create_cpu(&a, GT_PRECOND_JACOBI, NULL, &p));
    gt_solve_result r;
    /* consistent: b = A v for a v with no constant part */
    double *v = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) v[i] = sin(0.3 * (double)i);
    gt_csr_spmv(&a, v, b);
    memset(x, 0, (size_t)n * 8);
    o.method = GT_SOLVE_GMRES;
    GT_ASSERT_OK(gt_solve_prec_cpu(&a, &p, b, x, &o, 0, &r));
    assert_int_equal(r.outcome, GT_SOLVE_CONVERGED);
    assert_true(r.true_relres <= 1e-8);
    /* inconsistent */
    for (int64_t i = 0; i < n; i++) b[i] = 1.0 + (i == 0 ? 1.0 : 0.0);
    const gt_solve_method ms[4] = {GT_SOLVE_GMRES, GT_SOLVE_BICGSTAB, GT_SOLVE_PCG, GT_SOLVE_RICHARDSON};
    for (int mi = 0; mi < 4; mi++)
        for (int k = 0; k < 2; k++) {
            gt_precond q;
            GT_ASSERT_OK(gt_precond_create_cpu(&a, (gt_precond_kind)k, NULL, &q));
            memset(x, 0, (size_t)n * 8);
            o.method = ms[mi];
            GT_ASSERT_OK(gt_solve_prec_cpu(&a, &q, b, x, &o, 0, &r));
            gt_precond_destroy(&q);
            if (r.outcome == GT_SOLVE_CONVERGED || !r.msg[0])
                fail_msg("%s+%s on an inconsistent system: outcome %d, true residual %g, msg '%s'",
                         gt_solve_method_name(ms[mi]), gt_precond_name((gt_precond_kind)k), r.outcome,
                         r.true_relres, r.msg);
            assert_true(r.true_relres > 1e-8);
        }
    /* full GMRES (restart >= n) on it: a nearly singular Hessenberg matrix,
       yet the true residual never ends above the start (x = 0: 1) */
    memset(x, 0, (size_t)n * 8);
    o.method = GT_SOLVE_GMRES;
    GT_ASSERT_OK(gt_solve_prec_cpu(&a, &p, b, x, &o, 100, &r));
    assert_true(r.outcome != GT_SOLVE_CONVERGED && r.msg[0]);
    if (!(r.true_relres <= 1.0)) fail_msg("full GMRES on a singular system: true residual %g > 1", r.true_relres);
    gt_precond_destroy(&p);
    free(b), free(x), free(v), gt_csr_free(&a);
}

static gt_status failing_apply(void *ctx, const double *r, double *z, void *stream)
{
    (void)ctx, (void)r, (void)z, (void)stream;
    return gt_fail(GT_ERR_DATA, "zero pivot at row 7");
}

/* A preconditioner that fails in apply stops the solve as a breakdown with
   its message. */
static void test_failing_precond(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_convdiff3d(4, 10, &a));
    gt_precond p;
    memset(&p, 0, sizeof p);
    p.kind = GT_PRECOND_ILU0, p.n = a.nrows, p.apply = failing_apply;
    double *b = rhs_ones(&a), *x = calloc((size_t)a.nrows, 8);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    const gt_solve_method ms[4] = {GT_SOLVE_GMRES, GT_SOLVE_BICGSTAB, GT_SOLVE_PCG, GT_SOLVE_AMG};
    for (int mi = 0; mi < 4; mi++) {
        gt_solve_result r;
        o.method = ms[mi];
        GT_ASSERT_OK(gt_solve_prec_cpu(&a, &p, b, x, &o, 0, &r));
        assert_int_equal(r.outcome, GT_SOLVE_BREAKDOWN);
        assert_non_null(strstr(r.msg, "zero pivot at row 7"));
        assert_non_null(strstr(r.msg, "ilu0"));
    }
    free(b), free(x), gt_csr_free(&a);
}

/* The generated problems: Pe = 0 is the 7-point Laplacian; Pe > 0 is
   nonsymmetric with nonnegative row sums (weak diagonal dominance);
   Neumann rows sum to 0. */
static void test_problems(void **st)
{
    (void)st;
    gt_csr c0, l7, c1, nm;
    GT_ASSERT_OK(gt_convdiff3d(5, 0, &c0));
    GT_ASSERT_OK(gt_laplacian(7, 5, 5, 5, &l7));
    assert_int_equal(c0.nnz, l7.nnz);
    for (int64_t q = 0; q < c0.nnz; q++) assert_true(c0.col[q] == l7.col[q] && c0.val[q] == l7.val[q]);
    GT_ASSERT_OK(gt_convdiff3d(5, 500, &c1));
    gt_sp_info in;
    GT_ASSERT_OK(gt_sp_analyze(&c1, &in));
    assert_false(in.symmetric);
    for (int64_t i = 0; i < c1.nrows; i++) {
        double s = 0;
        for (int64_t q = c1.ptr[i]; q < c1.ptr[i + 1]; q++) s += c1.val[q];
        assert_true(s >= -1e-12);
    }
    GT_ASSERT_OK(gt_neumann_laplacian2d(6, 4, &nm));
    for (int64_t i = 0; i < nm.nrows; i++) {
        double s = 0;
        for (int64_t q = nm.ptr[i]; q < nm.ptr[i + 1]; q++) s += nm.val[q];
        assert_true(s == 0);
    }
    gt_csr_free(&c0), gt_csr_free(&l7), gt_csr_free(&c1), gt_csr_free(&nm);
}

static double entry(const gt_csr *a, int64_t i, int64_t j)
{
    for (int64_t q = a->ptr[i]; q < a->ptr[i + 1]; q++)
        if (a->col[q] == j) return a->val[q];
    return 0;
}

/* gt_convdiff: the uniform 3-D flow is gt_convdiff3d; Pe = 0 in 2-D is the
   5-point Laplacian; the recirculating flow gives an M-matrix (positive
   diagonal, off-diagonals <= 0, row sums >= 0) whose upwind side turns with
   the flow: on the middle row (y = 1/2) w points up (+y) left of the centre
   and down right of it, so the larger coupling is to the row below on the
   left and to the row above on the right; on the middle column w_x > 0
   above the centre. */
static void test_recirc_problem(void **st)
{
    (void)st;
    gt_csr u3, c3, l5, r0, rc;
    GT_ASSERT_OK(gt_convdiff(3, 5, 300, GT_FLOW_UNIFORM, &u3));
    GT_ASSERT_OK(gt_convdiff3d(5, 300, &c3));
    assert_int_equal(u3.nnz, c3.nnz);
    for (int64_t q = 0; q < u3.nnz; q++) assert_true(u3.col[q] == c3.col[q] && u3.val[q] == c3.val[q]);
    const int64_t n = 9, mid = 4;
    GT_ASSERT_OK(gt_convdiff(2, n, 0, GT_FLOW_RECIRC, &r0));
    GT_ASSERT_OK(gt_laplacian(5, n, n, 1, &l5));
    assert_int_equal(r0.nnz, l5.nnz);
    for (int64_t q = 0; q < r0.nnz; q++) assert_true(r0.col[q] == l5.col[q] && r0.val[q] == l5.val[q]);
    GT_ASSERT_OK(gt_convdiff(2, n, 100, GT_FLOW_RECIRC, &rc));
    gt_sp_info in;
    GT_ASSERT_OK(gt_sp_analyze(&rc, &in));
    assert_false(in.symmetric);
    for (int64_t i = 0; i < rc.nrows; i++) {
        double s = 0;
        for (int64_t q = rc.ptr[i]; q < rc.ptr[i + 1]; q++) {
            s += rc.val[q];
            if (rc.col[q] == i) assert_true(rc.val[q] > 0);
            else assert_true(rc.val[q] <= 0);
        }
        assert_true(s >= -1e-12);
    }
    int64_t left = mid * n + 1, right = mid * n + n - 2, top = (n - 2) * n + mid, centre = mid * n + mid;
    assert_true(entry(&rc, left, left - n) < entry(&rc, left, left + n));    /* w_y > 0 */
    assert_true(entry(&rc, right, right + n) < entry(&rc, right, right - n)); /* w_y < 0 */
    assert_true(entry(&rc, top, top - 1) < entry(&rc, top, top + 1));         /* w_x > 0 */
    assert_true(entry(&rc, centre, centre - 1) == -1 && entry(&rc, centre, centre + n) == -1); /* w = 0 */
    assert_int_equal(gt_convdiff(4, n, 1, GT_FLOW_RECIRC, &rc), GT_ERR_USAGE);
    gt_csr_free(&u3), gt_csr_free(&c3), gt_csr_free(&l5), gt_csr_free(&r0), gt_csr_free(&rc);
}

/* BiCGStab's breakdowns end the solve as such, never as "converged": on
   blocks [[e, c], [-c, e]] (c = 1 + k/8, e = 4e-15: a field of values on the
   imaginary axis to rounding) the minimal-residual step has t's ~ 0 (omega
   ~ 0), plain and preconditioned; on a skew-symmetric tridiagonal matrix
   with integer entries r0'v = r0'A r0 is exactly 0. GMRES solves both. */
static void test_bicgstab_breakdowns(void **st)
{
    (void)st;
    enum { K = 20, N = 2 * K };
    int32_t r[4 * K], c[4 * K];
    double v[4 * K];
    gt_csr rot, skew;
    sp_rotation_blocks(K, &rot);
    int64_t q = 0;
    for (int32_t i = 0; i < N; i++) {
        if (i > 0) r[q] = i, c[q] = i - 1, v[q++] = -1;
        if (i < N - 1) r[q] = i, c[q] = i + 1, v[q++] = 1;
    }
    GT_ASSERT_OK(gt_csr_from_triplets(N, N, q, r, c, v, &skew));
    const gt_csr *mats[2] = {&rot, &skew};
    const char *why[2] = {"omega", "r0'v = 0"};
    for (int mi = 0; mi < 2; mi++) {
        const gt_csr *a = mats[mi];
        double *b = rhs_ones(a), *x = calloc(N, 8);
        gt_solve_opts o;
        gt_solve_opts_init(&o);
        o.method = GT_SOLVE_BICGSTAB;
        gt_solve_result res;
        GT_ASSERT_OK(gt_solve_cpu(a, b, x, &o, &res));
        if (res.outcome != GT_SOLVE_BREAKDOWN || !strstr(res.msg, why[mi]))
            fail_msg("matrix %d: outcome %d, '%s'", mi, res.outcome, res.msg);
        assert_true(res.true_relres > 1e-3);
        assert_true(res.iters <= 2);
        free(x);
        gt_solve_result rp, rg;
        double *xp = solve(a, GT_SOLVE_BICGSTAB, GT_PRECOND_NONE, 1e-8, 0, &rp);
        assert_int_equal(rp.outcome, GT_SOLVE_BREAKDOWN);
        assert_non_null(strstr(rp.msg, why[mi]));
        double *xg = solve(a, GT_SOLVE_GMRES, GT_PRECOND_NONE, 1e-10, 0, &rg);
        assert_int_equal(rg.outcome, GT_SOLVE_CONVERGED);
        assert_true(rg.true_relres <= 1e-10 && max_err_ones(xg, N) < 1e-6);
        free(b), free(xp), free(xg);
    }
    gt_csr_free(&rot), gt_csr_free(&skew);
}

/* The incomplete factorisations through the framework: ILU(0) cuts GMRES's
   and BiCGStab's iterations on convection-diffusion and IC(0) PCG's on the
   anisotropic problem, against Jacobi, with the true residual within tol. */
static void test_ilu_through_framework(void **st)
{
    (void)st;
    gt_csr cd, an;
    GT_ASSERT_OK(gt_convdiff3d(12, 100, &cd));
    GT_ASSERT_OK(gt_rotated_aniso2d(32, 1e-3, 30, &an));
    struct {
        const gt_csr *a;
        gt_solve_method m;
        gt_precond_kind k;
    } cases[3] = {{&cd, GT_SOLVE_GMRES, GT_PRECOND_ILU0},
                  {&cd, GT_SOLVE_BICGSTAB, GT_PRECOND_ILU0},
                  {&an, GT_SOLVE_PCG, GT_PRECOND_IC0}};
    for (int c = 0; c < 3; c++) {
        gt_solve_result rf, rj;
        double *xf = solve(cases[c].a, cases[c].m, cases[c].k, 1e-8, 0, &rf);
        double *xj = solve(cases[c].a, cases[c].m, GT_PRECOND_JACOBI, 1e-8, 0, &rj);
        assert_int_equal(rf.outcome, GT_SOLVE_CONVERGED);
        assert_int_equal(rj.outcome, GT_SOLVE_CONVERGED);
        assert_true(rf.true_relres <= 1e-8);
        if (!(2 * rf.iters < rj.iters))
            fail_msg("%s+%s: %lld iterations, with Jacobi %lld", gt_solve_method_name(cases[c].m),
                     gt_precond_name(cases[c].k), (long long)rf.iters, (long long)rj.iters);
        free(xf), free(xj);
    }
    gt_csr_free(&cd), gt_csr_free(&an);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_defaults),     cmocka_unit_test(test_jacobi_apply_and_zero_diag),
        cmocka_unit_test(test_same_as_reference),  cmocka_unit_test(test_convdiff_converges),
        cmocka_unit_test(test_gmres_restart),      cmocka_unit_test(test_aniso),
        cmocka_unit_test(test_singular),           cmocka_unit_test(test_failing_precond),
        cmocka_unit_test(test_problems),           cmocka_unit_test(test_ilu_through_framework),
        cmocka_unit_test(test_recirc_problem),     cmocka_unit_test(test_bicgstab_breakdowns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
