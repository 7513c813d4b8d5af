/* IC(0) / ILU(0) on the GPU against the CPU reference: the factors (GPU
 * factorisation sync-free and level by level, host factorisation + upload)
 * and the apply (sync-free and level-scheduled solves, called directly and
 * captured into a CUDA graph) on random, stencil, convection-diffusion and
 * tetrahedral-mesh matrices, to 1e-12 relative; the breakdown and bad-input
 * errors; and the set-up and apply times of every variant on the 7-point
 * 160^3 Laplacian and a 405k-row tetrahedral-mesh matrix, in lattice and in
 * random order (printed: the figures behind the defaults;
 * GT_ILU_BENCH_SMALL=1 shrinks them, e.g. under compute-sanitizer). Skips
 * (77) without a GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_config.h"
#include "gt_test.h"
#include "ilu0_testutil.h"
#include "sparse/ilu0.h"
#include "sparse/laplace.h"
#include "sparse/sparse.h"
#include "sparse_testutil.h"
#if GT_HAVE_CUDA
#include "common/timer.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/ilu0_cu.h"
#include "kernels/sparse/sparse_cu.h"

static const char *const solve_name[2] = {"sync-free", "levels"};
static const char *const factor_name[3] = {"gpu-syncfree", "gpu-levels", "host"};

static double max_rel_diff(int64_t n, const double *x, const double *ref)
{
    double m = 0, e = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(ref[i])), e = fmax(e, fabs(x[i] - ref[i]));
    return m > 0 ? e / m : e;
}

/* every variant: factors and two applies (two epochs of the ready flags)
   against the CPU */
static void check_matrix(const gt_csr *a, bool ic, const char *what)
{
    gt_ilu0 F;
    GT_ASSERT_OK(gt_ilu0_factor(a, ic, &F));
    int64_t n = a->nrows;
    gt_rng rng = {21};
    double *r[2], *ref[2], *z = malloc((size_t)n * 8), *fv = malloc((size_t)a->nnz * 8 + 8);
    for (int k = 0; k < 2; k++) {
        r[k] = malloc((size_t)n * 8), ref[k] = malloc((size_t)n * 8);
        for (int64_t i = 0; i < n; i++) r[k][i] = gt_rng_range(&rng, -1, 1);
        gt_ilu0_solve(&F, r[k], ref[k]);
    }
    gt_spd d;
    GT_ASSERT_OK(gt_cu_spd_upload(a, 8, &d));
    double *dr = NULL, *dz = NULL;
    GT_ASSERT_OK(gt_cu_malloc((void **)&dr, (size_t)n * 8 + 8, "r"));
    GT_ASSERT_OK(gt_cu_malloc((void **)&dz, (size_t)n * 8 + 8, "z"));
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < 3; f++) {
            gt_cu_ilu0_opts o = {(gt_ilu_solve_scheme)s, (gt_ilu_factor_where)f};
            gt_precond p;
            GT_ASSERT_OK(gt_cu_ilu0_create_ex(&d, a, ic, &o, &p));
            assert_true(p.on_gpu);
            assert_int_equal(p.kind, ic ? GT_PRECOND_IC0 : GT_PRECOND_ILU0);
            GT_ASSERT_OK(gt_cu_ilu0_download(&p, fv));
            double fm = 0, fe = 0;
            for (int64_t q = 0; q < a->nnz; q++)
                fm = fmax(fm, fabs(F.f.val[q])), fe = fmax(fe, fabs(fv[q] - F.f.val[q]));
            if (fe > 1e-12 * fm)
                fail_msg("%s %s %s/%s: factors differ by %g (max %g)", what, ic ? "ic0" : "ilu0", solve_name[s],
                         factor_name[f], fe, fm);
            for (int k = 0; k < 2; k++) {
                GT_ASSERT_OK(gt_cu_memcpy_h2d(dr, r[k], (size_t)n * 8, NULL));
                GT_ASSERT_OK(p.apply(p.ctx, dr, dz, NULL));
                GT_ASSERT_OK(gt_cu_sync());
                GT_ASSERT_OK(gt_cu_memcpy_d2h(z, dz, (size_t)n * 8, NULL));
                double e = max_rel_diff(n, z, ref[k]);
                if (!(e <= 1e-12))
                    fail_msg("%s %s %s/%s apply %d: GPU vs CPU %g", what, ic ? "ic0" : "ilu0", solve_name[s],
                             factor_name[f], k, e);
            }
            /* captured into a graph (as the solvers do) and replayed */
            GT_ASSERT_OK(gt_cu_memcpy_h2d(dr, r[1], (size_t)n * 8, NULL));
            GT_ASSERT_OK(gt_cu_memset(dz, 0, (size_t)n * 8, NULL));
            GT_ASSERT_OK(gt_cu_ilu0_apply_captured(&p, dr, dz));
            GT_ASSERT_OK(gt_cu_memcpy_d2h(z, dz, (size_t)n * 8, NULL));
            double e = max_rel_diff(n, z, ref[1]);
            if (!(e <= 1e-12))
                fail_msg("%s %s %s/%s captured apply: GPU vs CPU %g", what, ic ? "ic0" : "ilu0", solve_name[s],
                         factor_name[f], e);
            if (s == 0 && f == 0) printf("%-28s %s n %lld: %s", what, ic ? "ic0 " : "ilu0", (long long)n, p.summary);
            p.destroy(p.ctx);
        }
    gt_cu_free(dr), gt_cu_free(dz);
    gt_cu_spd_free(&d);
    for (int k = 0; k < 2; k++) free(r[k]), free(ref[k]);
    free(z), free(fv);
    gt_ilu0_free(&F);
}

static void test_gpu_vs_cpu(void **st)
{
    (void)st;
    gt_rng rng = {16};
    gt_csr a;
    for (int t = 0; t < 3; t++) {
        sp_diag_dominant(&rng, 500 + 1500 * t, 0.004 + 0.004 * t, &a);
        check_matrix(&a, false, "random nonsymmetric");
        gt_csr_free(&a);
        ilu_sym_dd(&rng, 700 + 2000 * t, 0.003 + 0.003 * t, &a);
        check_matrix(&a, true, "random symmetric");
        check_matrix(&a, false, "random symmetric");
        gt_csr_free(&a);
    }
    GT_ASSERT_OK(gt_laplacian(7, 30, 25, 20, &a));
    check_matrix(&a, true, "7-point 30x25x20");
    check_matrix(&a, false, "7-point 30x25x20");
    gt_csr_free(&a);
    GT_ASSERT_OK(gt_laplacian(27, 16, 16, 16, &a));
    check_matrix(&a, true, "27-point 16^3");
    gt_csr_free(&a);
    ilu_convdiff2d(200, 150, 100, 10, &a);
    check_matrix(&a, false, "convection-diffusion 200x150");
    gt_csr_free(&a);
    ilu_tet_lattice(&rng, 24, false, &a);
    check_matrix(&a, true, "tet mesh 24^3");
    gt_csr_free(&a);
    ilu_tet_lattice(&rng, 24, true, &a);
    check_matrix(&a, true, "tet mesh 24^3 shuffled");
    check_matrix(&a, false, "tet mesh 24^3 shuffled");
    gt_csr_free(&a);
}

static void expect_gpu_error(const double *dense, int64_t n, bool ic, const char *want)
{
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(n, n, dense, &a));
    size_t held = 0, blocks0 = 0, blocks = 0, pinned = 0;
    gt_cu_held(&held, &blocks0, &pinned);
    gt_spd d;
    GT_ASSERT_OK(gt_cu_spd_upload(&a, 8, &d));
    for (int f = 0; f < 3; f++) {
        gt_cu_ilu0_opts o = {GT_ILU_SOLVE_SYNCFREE, (gt_ilu_factor_where)f};
        gt_precond p;
        gt_status s = gt_cu_ilu0_create_ex(&d, &a, ic, &o, &p);
        if (s != GT_ERR_DATA || !strstr(gt_errmsg(), want))
            fail_msg("%s: status %d message \"%s\", want \"%s\"", factor_name[f], (int)s, gt_errmsg(), want);
    }
    gt_cu_spd_free(&d);
    gt_csr_free(&a);
    gt_cu_held(&held, &blocks, &pinned);
    assert_int_equal(blocks, blocks0); /* nothing leaks on the error paths */
}

static void test_gpu_errors(void **st)
{
    (void)st;
    const double sing[9] = {1, 1, 0, 1, 1, 0, 0, 0, 1};
    expect_gpu_error(sing, 3, false, "ILU(0) breaks down at row 2: pivot 0");
    const double indef[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
    expect_gpu_error(indef, 3, true, "IC(0) breaks down at row 2: pivot -3 (the matrix is not positive definite");
    const double nan3[9] = {2, 0, 0, 0, 2, 0, NAN, 0, 2};
    expect_gpu_error(nan3, 3, false, "(row 3)");
    const double nodiag[9] = {2, 1, 0, 1, 0, 1, 0, 1, 2};
    expect_gpu_error(nodiag, 3, true, "row 2 has no diagonal entry");
}

/* the figures: set-up (upload excluded: the solver has the matrix on the
   device already) and the mean apply time, for each variant */
static void bench(const gt_csr *a, bool ic, const char *what)
{
    int64_t n = a->nrows;
    gt_spd d;
    GT_ASSERT_OK(gt_cu_spd_upload(a, 8, &d));
    double *dr = NULL, *dz = NULL;
    GT_ASSERT_OK(gt_cu_malloc((void **)&dr, (size_t)n * 8 + 8, "r"));
    GT_ASSERT_OK(gt_cu_malloc((void **)&dz, (size_t)n * 8 + 8, "z"));
    GT_ASSERT_OK(gt_cu_memset(dr, 0, (size_t)n * 8, NULL));
    gt_ilu0 F;
    GT_ASSERT_OK(gt_ilu0_factor(a, ic, &F));
    printf("%s %s: n %lld, nnz %lld, levels %lld (lower) %lld (upper); CPU factorisation %.1f ms\n", what,
           ic ? "ic0" : "ilu0", (long long)n, (long long)a->nnz, (long long)F.lower.nlevels,
           (long long)F.upper.nlevels, F.ms);
    gt_rng rng = {5};
    double *r = malloc((size_t)n * 8), *ref = malloc((size_t)n * 8), *z = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) r[i] = gt_rng_range(&rng, -1, 1);
    double t0 = gt_now_ms();
    gt_ilu0_solve(&F, r, ref);
    double cpu_apply = gt_now_ms() - t0;
    GT_ASSERT_OK(gt_cu_memcpy_h2d(dr, r, (size_t)n * 8, NULL));
    for (int f = 0; f < 3; f++)
        for (int s = 0; s < 2; s++) {
            gt_cu_ilu0_opts o = {(gt_ilu_solve_scheme)s, (gt_ilu_factor_where)f};
            gt_precond p;
            GT_ASSERT_OK(gt_cu_ilu0_create_ex(&d, a, ic, &o, &p));
            GT_ASSERT_OK(p.apply(p.ctx, dr, dz, NULL)); /* warm-up */
            GT_ASSERT_OK(gt_cu_sync());
            const int reps = 20;
            t0 = gt_now_ms();
            for (int k = 0; k < reps; k++) GT_ASSERT_OK(p.apply(p.ctx, dr, dz, NULL));
            GT_ASSERT_OK(gt_cu_sync());
            double ms = (gt_now_ms() - t0) / reps;
            GT_ASSERT_OK(gt_cu_memcpy_d2h(z, dz, (size_t)n * 8, NULL));
            double e = max_rel_diff(n, z, ref);
            printf("  %-12s %-9s set-up %8.2f ms  apply %8.3f ms  (CPU apply %.1f ms)  GPU vs CPU %.1e\n",
                   factor_name[f], solve_name[s], p.setup_ms, ms, cpu_apply, e);
            assert_true(e <= 1e-12);
            p.destroy(p.ctx);
        }
    free(r), free(ref), free(z);
    gt_ilu0_free(&F);
    gt_cu_free(dr), gt_cu_free(dz);
    gt_cu_spd_free(&d);
}

static void test_gpu_timings(void **st)
{
    (void)st;
    gt_csr a;
    gt_rng rng = {74};
    int64_t m = getenv("GT_ILU_BENCH_SMALL") ? 40 : 160;
    GT_ASSERT_OK(gt_laplacian(7, m, m, m, &a));
    bench(&a, true, "7-point Laplacian");
    gt_csr_free(&a);
    int64_t t = getenv("GT_ILU_BENCH_SMALL") ? 20 : 74;
    ilu_tet_lattice(&rng, t, false, &a);
    bench(&a, true, "tet mesh (lattice order)");
    bench(&a, false, "tet mesh (lattice order)");
    gt_csr_free(&a);
    ilu_tet_lattice(&rng, t, true, &a);
    bench(&a, true, "tet mesh (random order)");
    gt_csr_free(&a);
}
#endif

int main(void)
{
#if GT_HAVE_CUDA
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_vs_cpu),
        cmocka_unit_test(test_gpu_errors),
        cmocka_unit_test(test_gpu_timings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    printf("SKIP: built without CUDA\n");
    return 77;
#endif
}
