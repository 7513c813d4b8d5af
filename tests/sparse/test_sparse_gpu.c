/* GPU vs CPU: every SpMV kernel in single and double precision on random
 * matrices (empty rows, a dense row, rectangular, power-law rows), the
 * Laplacians and real matrices; the GPU conversions against the CPU ones
 * (exact arrays); every GPU solver against the CPU reference. Skips (77)
 * without a GPU. */
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "sparse/laplace.h"
#include "sparse/reorder.h"
#include "sparse/sparse.h"
#include "sparse/sparse_gpu.h"
#include "sparse_testutil.h"

/* ||y_gpu - y_cpu||_inf relative to max_i sum_j |a_ij x_j| (the scale of the
   rounding errors): double <= 1e-12, single <= 1e-5. */
static void check_spmv(const gt_csr *a, const char *what, bool single)
{
    gt_rng rng = {99};
    int64_t n = a->nrows, m = a->ncols;
    double *x = malloc((size_t)(m + 1) * 8), *y = malloc((size_t)(n + 1) * 8), *ref = malloc((size_t)(n + 1) * 8);
    float *xf = malloc((size_t)(m + 1) * 4);
    double *yf = malloc((size_t)(n + 1) * 8);
    double *xr = malloc((size_t)(m + 1) * 8);
    for (int64_t j = 0; j < m; j++) x[j] = gt_rng_range(&rng, -1, 1), xf[j] = (float)x[j], xr[j] = xf[j];
    double scale = 0;
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) s += fabs(a->val[p] * x[a->col[p]]);
        if (s > scale) scale = s;
    }
    if (scale == 0) scale = 1;
    gt_csr_spmv(a, x, ref);
    /* single: the exact (double) product of the float-rounded matrix and x,
       so the check measures the GPU's float accumulation only */
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) s += (double)(float)a->val[p] * xr[a->col[p]];
        yf[i] = s;
    }
    for (int k = 0; k < GT_SPMV_K_N; k++) {
        if (k == GT_SPMV_K_DIA && a->nrows != a->ncols) continue; /* DIA kernels: square */
        for (int prec = single ? 4 : 8; prec <= 8; prec += 4) {
            gt_status s = gt_spmv_gpu(a, (gt_spmv_kind)k, prec, prec == 8 ? x : xr, y);
            if (s == GT_ERR_RUNTIME && k == GT_SPMV_K_DIA) continue; /* too many diagonals */
            if (s != GT_OK) fail_msg("%s %s prec %d: %s", what, gt_spmv_kind_name(k), prec, gt_errmsg());
            double tol = prec == 8 ? 1e-12 : 1e-5;
            for (int64_t i = 0; i < n; i++) {
                double r = prec == 8 ? ref[i] : yf[i];
                if (fabs(y[i] - r) > tol * scale)
                    fail_msg("%s %s prec %d row %lld: gpu %.17g cpu %.17g (scale %g)", what,
                             gt_spmv_kind_name(k), prec, (long long)i, y[i], r, scale);
            }
        }
    }
    free(x), free(y), free(ref), free(xf), free(yf), free(xr);
}

static void test_spmv_random(void **st)
{
    (void)st;
    gt_rng rng = {5};
    const int64_t shapes[][2] = {{1, 1}, {33, 33}, {1000, 700}, {700, 1000}, {5000, 5000}, {20000, 20000}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int variant = 0; variant < 5; variant++) {
            gt_csr a;
            double dens = shapes[s][1] > 2000 ? 10.0 / (double)shapes[s][1] : 0.05;
            sp_random(&rng, shapes[s][0], shapes[s][1], dens, variant, &a);
            char what[64];
            snprintf(what, sizeof what, "random %lldx%lld v%d", (long long)shapes[s][0], (long long)shapes[s][1], variant);
            check_spmv(&a, what, true);
            gt_csr_free(&a);
        }
    /* one very long row (merge path and COO spanning many threads/warps) */
    gt_csr a;
    sp_random(&rng, 3, 200000, 0.0, 1, &a);
    check_spmv(&a, "long row", false); /* float sums of 2e5 terms exceed 1e-5 */
    gt_csr_free(&a);
}

static void test_spmv_laplacians(void **st)
{
    (void)st;
    const int pts[5] = {3, 5, 7, 9, 27};
    const int64_t g[5][3] = {{100000, 1, 1}, {300, 200, 1}, {40, 30, 20}, {300, 200, 1}, {40, 30, 20}};
    for (int k = 0; k < 5; k++) {
        gt_csr a;
        GT_ASSERT_OK(gt_laplacian(pts[k], g[k][0], g[k][1], g[k][2], &a));
        char what[32];
        snprintf(what, sizeof what, "laplace %d-pt", pts[k]);
        check_spmv(&a, what, true);
        gt_csr_free(&a);
    }
}

static void test_spmv_real(void **st)
{
    (void)st;
    const char *names[] = {"poisson4009_sub1000.mtx", "poisson4009.mtx", "bcsstk13.mtx"};
    int found = 0;
    for (int k = 0; k < 3; k++) {
        gt_csr a;
        if (!sp_real_matrix(names[k], &a)) continue;
        found++;
        check_spmv(&a, names[k], true);
        gt_csr_free(&a);
    }
    assert_true(found >= 1); /* testdata's copy at least */
}

static void test_convert(void **st)
{
    (void)st;
    gt_rng rng = {17};
    for (int variant = 0; variant < 5; variant++) {
        gt_csr a;
        sp_random(&rng, 6000, 6000, 0.001, variant, &a);
        gt_coo c1 = {0}, c2 = {0};
        gt_ell e1 = {0}, e2 = {0};
        gt_dia d1 = {0}, d2 = {0};
        gt_hyb h1 = {0}, h2 = {0};
        GT_ASSERT_OK(gt_csr_to_coo(&a, &c1));
        GT_ASSERT_OK(gt_sp_convert_gpu(&a, GT_SP_COO, -1, &c2, NULL, NULL, NULL));
        assert_int_equal(c1.nnz, c2.nnz);
        assert_memory_equal(c1.row, c2.row, (size_t)c1.nnz * 4);
        assert_memory_equal(c1.col, c2.col, (size_t)c1.nnz * 4);
        assert_memory_equal(c1.val, c2.val, (size_t)c1.nnz * 8);
        GT_ASSERT_OK(gt_csr_to_ell(&a, &e1));
        GT_ASSERT_OK(gt_sp_convert_gpu(&a, GT_SP_ELL, -1, NULL, &e2, NULL, NULL));
        assert_int_equal(e1.width, e2.width);
        assert_memory_equal(e1.col, e2.col, (size_t)e1.width * 6000 * 4);
        assert_memory_equal(e1.val, e2.val, (size_t)e1.width * 6000 * 8);
        GT_ASSERT_OK(gt_csr_to_hyb(&a, -1, &h1));
        GT_ASSERT_OK(gt_sp_convert_gpu(&a, GT_SP_HYB, -1, NULL, NULL, NULL, &h2));
        assert_int_equal(h1.ell.width, h2.ell.width); /* Bell & Garland width, device histogram */
        assert_int_equal(h1.coo.nnz, h2.coo.nnz);
        assert_memory_equal(h1.ell.col, h2.ell.col, (size_t)h1.ell.width * 6000 * 4);
        assert_memory_equal(h1.coo.row, h2.coo.row, (size_t)h1.coo.nnz * 4);
        assert_memory_equal(h1.coo.col, h2.coo.col, (size_t)h1.coo.nnz * 4);
        assert_memory_equal(h1.coo.val, h2.coo.val, (size_t)h1.coo.nnz * 8);
        if (variant == 2) { /* banded: DIA is reasonable */
            GT_ASSERT_OK(gt_csr_to_dia(&a, 0, &d1));
            GT_ASSERT_OK(gt_sp_convert_gpu(&a, GT_SP_DIA, -1, NULL, NULL, &d2, NULL));
            assert_int_equal(d1.ndiag, d2.ndiag);
            assert_memory_equal(d1.offsets, d2.offsets, (size_t)d1.ndiag * 4);
            assert_memory_equal(d1.val, d2.val, (size_t)d1.ndiag * 6000 * 8);
        }
        gt_coo_free(&c1), gt_coo_free(&c2), gt_ell_free(&e1), gt_ell_free(&e2);
        gt_dia_free(&d1), gt_dia_free(&d2), gt_hyb_free(&h1), gt_hyb_free(&h2), gt_csr_free(&a);
    }
    /* the lecture's 4x4: DIA offsets [-2 0 1] from the GPU too */
    const double A4[16] = {1, 7, 0, 0, 0, 2, 8, 0, 5, 0, 3, 9, 0, 6, 0, 4};
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(4, 4, A4, &a));
    gt_dia d = {0};
    GT_ASSERT_OK(gt_sp_convert_gpu(&a, GT_SP_DIA, -1, NULL, NULL, &d, NULL));
    assert_int_equal(d.ndiag, 3);
    assert_int_equal(d.offsets[0], -2), assert_int_equal(d.offsets[1], 0), assert_int_equal(d.offsets[2], 1);
    const double ddata[12] = {0, 0, 5, 6, 1, 2, 3, 4, 7, 8, 9, 0};
    for (int k = 0; k < 12; k++) assert_true(d.val[k] == ddata[k]);
    gt_dia_free(&d), gt_csr_free(&a);
}

/* GPU CG/PCG variant under test: 1 fused kernel per iteration, 2 kernels,
   3 split (p stored; CSR and ELL), 0 the default choice */
static int g_cg_kernels = 1;

/* GPU solver vs CPU solver: both converge; solutions agree to the
   tolerance's scale; Krylov iteration counts within 10% (+2) in double. */
static void solve_pair(const gt_csr *a, gt_solve_method m, gt_sp_format f, int prec, double omega)
{
    int64_t n = a->nrows;
    double *one = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *xc = calloc((size_t)n, 8),
           *xg = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) one[i] = 1;
    gt_csr_spmv(a, one, b);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = m, o.omega = omega, o.maxiter = 20000, o.cg_kernels = g_cg_kernels;
    o.tol = prec == 8 ? 1e-9 : 1e-5;
    gt_solve_result rc, rg;
    GT_ASSERT_OK(gt_solve_cpu(a, b, xc, &o, &rc));
    GT_ASSERT_OK(gt_solve_gpu(a, f, prec, b, xg, &o, &rg, NULL));
    if (rc.outcome != GT_SOLVE_CONVERGED) fail_msg("cpu %s: %s", gt_solve_method_name(m), rc.msg);
    if (rg.outcome != GT_SOLVE_CONVERGED)
        fail_msg("gpu %s %s prec %d: %s", gt_solve_method_name(m), gt_sp_format_name(f), prec, rg.msg);
    /* the recurrence may drift from the true residual in single precision */
    assert_true(rg.true_relres <= (prec == 8 ? 1e-8 : 1e-3));
    if (prec == 8 && m != GT_SOLVE_GS) {
        long long d = llabs((long long)rg.iters - (long long)rc.iters);
        if (d > rc.iters / 10 + 2)
            fail_msg("%s %s (%d kernels): gpu %lld iterations, cpu %lld", gt_solve_method_name(m),
                     gt_sp_format_name(f), g_cg_kernels, (long long)rg.iters, (long long)rc.iters);
    }
    double err = 0;
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(xg[i] - xc[i]));
    /* both solutions are within (condition number x tol) of all-ones */
    if (err > (prec == 8 ? 1e-5 : 5e-2))
        fail_msg("%s %s prec %d: max |x_gpu - x_cpu| = %g", gt_solve_method_name(m), gt_sp_format_name(f), prec, err);
    free(one), free(b), free(xc), free(xg);
}

static void test_solvers(void **st)
{
    (void)st;
    gt_csr lap, lap3, dd;
    GT_ASSERT_OK(gt_laplacian(5, 30, 20, 1, &lap));
    GT_ASSERT_OK(gt_laplacian(7, 12, 10, 8, &lap3));
    gt_rng rng = {23};
    sp_diag_dominant(&rng, 3000, 0.002, &dd);
    const gt_sp_format fmts[3] = {GT_SP_DIA, GT_SP_ELL, GT_SP_CSR};
    for (int m = 0; m < GT_SOLVE_GMRES; m++) /* gmres, amg: test_krylov_prec_gpu.c */
        for (int fi = 0; fi < 3; fi++)
            for (int prec = 4; prec <= 8; prec += 4) {
                bool slow = m == GT_SOLVE_JACOBI || m == GT_SOLVE_RICHARDSON || m == GT_SOLVE_GS;
                if (!slow || prec == 8) solve_pair(&lap, (gt_solve_method)m, fmts[fi], prec, m == GT_SOLVE_JACOBI ? 0.8 : 1.0);
                if (!slow) solve_pair(&lap3, (gt_solve_method)m, fmts[fi], prec, 1.0);
                if (m != GT_SOLVE_CG && m != GT_SOLVE_PCG) solve_pair(&dd, (gt_solve_method)m, fmts[fi], prec, 1.0);
            }
    gt_csr_free(&lap), gt_csr_free(&lap3), gt_csr_free(&dd);
}

/* CG and PCG in both GPU variants (fused one-kernel, two-kernel) against the
   CPU, in every format, on matrices whose DIA form takes each fused DIA path:
   5 diagonals (offsets read from memory), 7 and 27 (offsets as kernel
   parameters); also a system larger than one wave of blocks (grid-stride
   loops, several rows per thread; double only). */
static void test_cg_variants(void **st)
{
    (void)st;
    gt_csr m[4];
    GT_ASSERT_OK(gt_laplacian(5, 40, 25, 1, &m[0]));
    GT_ASSERT_OK(gt_laplacian(7, 13, 11, 9, &m[1]));
    GT_ASSERT_OK(gt_laplacian(27, 11, 10, 9, &m[2]));
    GT_ASSERT_OK(gt_laplacian(7, 90, 80, 70, &m[3])); /* 504000 rows */
    const gt_sp_format fmts[3] = {GT_SP_DIA, GT_SP_ELL, GT_SP_CSR};
    for (int kern = 1; kern <= 3; kern++) {
        g_cg_kernels = kern;
        for (int k = 0; k < 4; k++)
            for (int fi = 0; fi < (k == 3 ? 1 : 3); fi++)
                for (int prec = k == 3 ? 8 : 4; prec <= 8; prec += 4)
                    for (int meth = GT_SOLVE_CG; meth <= GT_SOLVE_PCG; meth++)
                        solve_pair(&m[k], (gt_solve_method)meth, fmts[fi], prec, 1.0);
    }
    g_cg_kernels = 1;
    for (int k = 0; k < 4; k++) gt_csr_free(&m[k]);
}

/* The fused and the two-kernel CG reach the same iterate count and nearly
   the same x as each other on a 7-point Laplacian (both follow plain CG). */
static void test_cg_fused_matches_two_kernel(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_laplacian(7, 30, 28, 26, &a));
    int64_t n = a.nrows;
    double *b = malloc((size_t)n * 8), *x1 = calloc((size_t)n, 8), *x2 = calloc((size_t)n, 8);
    gt_rng rng = {41};
    for (int64_t i = 0; i < n; i++) b[i] = gt_rng_range(&rng, -1, 1);
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = GT_SOLVE_CG, o.tol = 1e-10;
    gt_solve_result r1, r2;
    o.cg_kernels = 1;
    GT_ASSERT_OK(gt_solve_gpu(&a, GT_SP_DIA, 8, b, x1, &o, &r1, NULL));
    o.cg_kernels = 2;
    GT_ASSERT_OK(gt_solve_gpu(&a, GT_SP_DIA, 8, b, x2, &o, &r2, NULL));
    assert_int_equal(r1.outcome, GT_SOLVE_CONVERGED);
    assert_int_equal(r2.outcome, GT_SOLVE_CONVERGED);
    if (llabs((long long)(r1.iters - r2.iters)) > 1)
        fail_msg("fused %lld iterations, two-kernel %lld", (long long)r1.iters, (long long)r2.iters);
    assert_true(r1.true_relres <= 1e-9);
    double err = 0, xm = 0;
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(x1[i] - x2[i])), xm = fmax(xm, fabs(x2[i]));
    if (err > 1e-7 * xm) fail_msg("max |x_fused - x_2k| = %g (max |x| %g)", err, xm);
    free(b), free(x1), free(x2), gt_csr_free(&a);
}

/* The unstructured matrices the CSR subwarp kernels are for: the tet-mesh
   Laplacian in random numbering and in RCM order (every SpMV kernel, and CG
   and Jacobi-PCG in CSR and ELL with the split, fused and default variants
   against the CPU), and rows of about 40 and 60 entries (subwarps of 32 and
   two rounds). Also a system larger than one wave of blocks (rows per
   subwarp > 1 in the grid-stride loop). */
static void test_unstructured(void **st)
{
    (void)st;
    gt_csr t, r;
    GT_ASSERT_OK(gt_tetmesh_laplacian(24, 0.2, 3, true, &t));
    int32_t *perm = malloc((size_t)t.nrows * 4);
    GT_ASSERT_OK(gt_rcm(&t, true, perm));
    GT_ASSERT_OK(gt_csr_permute(&t, perm, &r));
    free(perm);
    check_spmv(&t, "tetmesh 24 random order", true);
    check_spmv(&r, "tetmesh 24 rcm", true);
    gt_rng rng = {77};
    for (int len = 40; len <= 60; len += 20) {
        gt_csr a;
        sp_random(&rng, 3000, 3000, (double)len / 3000.0, 0, &a);
        check_spmv(&a, len == 40 ? "rows of ~40" : "rows of ~60", true);
        gt_csr_free(&a);
    }
    const int kerns[3] = {0, 3, 1};
    const gt_sp_format fmts[2] = {GT_SP_CSR, GT_SP_ELL};
    for (int k = 0; k < 3; k++) {
        g_cg_kernels = kerns[k];
        for (int fi = 0; fi < 2; fi++)
            for (int prec = 4; prec <= 8; prec += 4)
                for (int meth = GT_SOLVE_CG; meth <= GT_SOLVE_PCG; meth++) {
                    solve_pair(&t, (gt_solve_method)meth, fmts[fi], prec, 1.0);
                    solve_pair(&r, (gt_solve_method)meth, fmts[fi], prec, 1.0);
                }
    }
    gt_csr big;
    GT_ASSERT_OK(gt_tetmesh_laplacian(64, 0.2, 4, true, &big)); /* 262144 rows */
    g_cg_kernels = 0;
    solve_pair(&big, GT_SOLVE_PCG, GT_SP_CSR, 8, 1.0);
    g_cg_kernels = 1;
    gt_csr_free(&t), gt_csr_free(&r), gt_csr_free(&big);
}

/* multicolour GS (GPU) and sequential GS (CPU) reach the same solution */
static void test_gs_multicolour(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_laplacian(27, 10, 9, 8, &a));
    solve_pair(&a, GT_SOLVE_GS, GT_SP_CSR, 8, 1.0);
    gt_csr_free(&a);
}

/* Richardson's default step: the GPU power iteration (A symmetric; A^T A
   with A^T uploaded otherwise) gives the CPU's tau, and both converge. */
static void test_richardson_power_tau_gpu(void **st)
{
    (void)st;
    gt_rng rng = {31};
    gt_csr m[2];
    sp_graph_laplacian(&rng, 3000, 12, 1.0, &m[0]); /* symmetric */
    sp_diag_dominant(&rng, 3000, 0.002, &m[1]);     /* not symmetric */
    for (int k = 0; k < 2; k++) {
        int64_t n = m[k].nrows;
        double *one = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *x = calloc((size_t)n, 8);
        for (int64_t i = 0; i < n; i++) one[i] = 1;
        gt_csr_spmv(&m[k], one, b);
        gt_solve_opts o;
        gt_solve_opts_init(&o);
        o.method = GT_SOLVE_RICHARDSON, o.tol = 1e-8, o.maxiter = 50000;
        gt_solve_result rc, rg;
        GT_ASSERT_OK(gt_solve_cpu(&m[k], b, x, &o, &rc));
        assert_int_equal(rc.outcome, GT_SOLVE_CONVERGED);
        for (int prec = 4; prec <= 8; prec += 4) {
            memset(x, 0, (size_t)n * 8);
            o.tol = prec == 8 ? 1e-8 : 1e-5;
            GT_ASSERT_OK(gt_solve_gpu(&m[k], GT_SP_CSR, prec, b, x, &o, &rg, NULL));
            if (fabs(rg.tau - rc.tau) > (prec == 8 ? 1e-9 : 1e-4) * rc.tau)
                fail_msg("matrix %d prec %d: gpu tau %.17g, cpu tau %.17g", k, prec, rg.tau, rc.tau);
            if (rg.outcome != GT_SOLVE_CONVERGED) fail_msg("matrix %d prec %d: %s", k, prec, rg.msg);
        }
        free(one), free(b), free(x);
        gt_csr_free(&m[k]);
    }
}

static void test_not_spd_gpu(void **st)
{
    (void)st;
    const double ind[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(3, 3, ind, &a));
    double b[3] = {1, -1, 1}, x[3] = {0, 0, 0};
    gt_solve_opts o;
    gt_solve_opts_init(&o);
    o.method = GT_SOLVE_CG;
    gt_solve_result r;
    for (int kern = 1; kern <= 3; kern++) {
        o.cg_kernels = kern;
        x[0] = x[1] = x[2] = 0;
        GT_ASSERT_OK(gt_solve_gpu(&a, GT_SP_CSR, 8, b, x, &o, &r, NULL));
        assert_int_equal(r.outcome, GT_SOLVE_NOT_SPD);
        assert_non_null(strstr(r.msg, "bicgstab"));
    }
    gt_csr_free(&a);
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spmv_random), cmocka_unit_test(test_spmv_laplacians),
        cmocka_unit_test(test_spmv_real),   cmocka_unit_test(test_convert),
        cmocka_unit_test(test_solvers),     cmocka_unit_test(test_gs_multicolour),
        cmocka_unit_test(test_cg_variants), cmocka_unit_test(test_cg_fused_matches_two_kernel),
        cmocka_unit_test(test_richardson_power_tau_gpu),
        cmocka_unit_test(test_not_spd_gpu), cmocka_unit_test(test_unstructured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
