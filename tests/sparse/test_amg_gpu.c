/* GPU AMG against the CPU reference (suite gpu; skips, 77, without a GPU):
 * the same levels and the same aggregates exactly, the same P and A_c within
 * 1e-12 relative, the same V-cycle output within 1e-10 relative, for each
 * smoother on Laplacians and an unstructured graph; AMG-PCG on the GPU
 * converges like the CPU's; a zero diagonal is a data error. Prints the
 * set-up time of every stage. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "sparse/amg.h"
#include "sparse/laplace.h"
#include "sparse/sparse.h"
#include "amg_testmesh.h"

/* same pattern, values within tol * max |value| */
static void same_csr(const gt_csr *g, const gt_csr *c, double tol, const char *what, int l)
{
    if (g->nrows != c->nrows || g->ncols != c->ncols || g->nnz != c->nnz)
        fail_msg("%s level %d: gpu %lldx%lld nnz %lld, cpu %lldx%lld nnz %lld", what, l, (long long)g->nrows,
                 (long long)g->ncols, (long long)g->nnz, (long long)c->nrows, (long long)c->ncols, (long long)c->nnz);
    double scale = 0, err = 0;
    for (int64_t i = 0; i <= c->nrows; i++)
        if (g->ptr[i] != c->ptr[i]) fail_msg("%s level %d: row %lld starts differ", what, l, (long long)i);
    for (int64_t p = 0; p < c->nnz; p++) {
        if (g->col[p] != c->col[p]) fail_msg("%s level %d: column at %lld differs", what, l, (long long)p);
        scale = fmax(scale, fabs(c->val[p]));
        err = fmax(err, fabs(g->val[p] - c->val[p]));
    }
    if (err > tol * scale) fail_msg("%s level %d: max difference %.3g of %.3g", what, l, err, scale);
}

static void compare_with(const gt_csr *a, const char *name, gt_amg_smoother sm, int64_t coarse,
                         gt_amg_coarsening co, int sweeps)
{
    gt_precond_opts o;
    gt_precond_opts_init(&o);
    o.amg_smoother = sm;
    o.amg_coarse_size = coarse;
    o.amg_coarsening = co;
    o.amg_sweeps = sweeps;
    gt_amg hc, hg;
    GT_ASSERT_OK(gt_amg_setup(a, &o, &hc));
    int64_t n = a->nrows;
    double *r = malloc((size_t)n * 8), *zc = malloc((size_t)n * 8), *zg = malloc((size_t)n * 8);
    gt_rng rng = {17};
    for (int64_t i = 0; i < n; i++) r[i] = gt_rng_range(&rng, -1, 1);
    gt_amg_gpu_result res;
    gt_status s = gt_amg_gpu_run(a, &o, &hg, r, zg, 0, &res);
    if (s != GT_OK) fail_msg("%s: %s", name, gt_errmsg());
    print_message("%s smoother %d: %d levels; gpu set-up %.2f ms:", name, (int)sm, hg.nlevels, res.setup_ms);
    for (int k = 0; k < GT_AMG_NSTAGES; k++) print_message(" %s %.2f", gt_amg_stage_name((gt_amg_stage)k), res.stage_ms[k]);
    print_message("\n");
    assert_int_equal(hg.nlevels, hc.nlevels);
    assert_int_equal(hg.nc, hc.nc);
    for (int l = 0; l < hc.nlevels; l++) {
        same_csr(&hg.lev[l].a, &hc.lev[l].a, 1e-12, name, l);
        const gt_amg_grid *gg = &hg.lev[l].grid, *gc = &hc.lev[l].grid;
        if (gg->nx != gc->nx || gg->ny != gc->ny || gg->nz != gc->nz)
            fail_msg("%s level %d: grid gpu %lldx%lldx%lld cpu %lldx%lldx%lld", name, l, (long long)gg->nx,
                     (long long)gg->ny, (long long)gg->nz, (long long)gc->nx, (long long)gc->ny, (long long)gc->nz);
        if (l == hc.nlevels - 1) break;
        assert_int_equal(hg.lev[l].nagg, hc.lev[l].nagg);
        if (gc->nx) { /* grid level: the end weights and the Gershgorin rho; no aggregates or P on the GPU */
            for (int d = 0; d < 3; d++)
                if (fabs(gg->wend[d] - gc->wend[d]) > 1e-12)
                    fail_msg("%s level %d: end weight %d gpu %.17g cpu %.17g", name, l, d, gg->wend[d], gc->wend[d]);
            if (fabs(hg.lev[l].rho - hc.lev[l].rho) > 1e-12 * hc.lev[l].rho)
                fail_msg("%s level %d: rho gpu %.17g cpu %.17g", name, l, hg.lev[l].rho, hc.lev[l].rho);
            continue;
        }
        if (memcmp(hg.lev[l].agg, hc.lev[l].agg, (size_t)hc.lev[l].a.nrows * 4) != 0)
            fail_msg("%s level %d: the aggregates differ", name, l);
        if (fabs(hg.lev[l].rho - hc.lev[l].rho) > 1e-10 * hc.lev[l].rho)
            fail_msg("%s level %d: rho gpu %.17g cpu %.17g", name, l, hg.lev[l].rho, hc.lev[l].rho);
        same_csr(&hg.lev[l].p, &hc.lev[l].p, 1e-12, name, l);
    }
    gt_amg_vcycle(&hc, r, zc);
    double err = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(zg[i] - zc[i])), scale = fmax(scale, fabs(zc[i]));
    if (err > 1e-10 * scale) fail_msg("%s smoother %d: V-cycle differs by %.3g of %.3g", name, (int)sm, err, scale);
    if (co == GT_AMG_COARSEN_GRID) {
        /* 16 more applies: the later ones a replayed CUDA graph, the same output
           as the direct V-cycle over the same hierarchy (a new set-up, as here,
           may differ from the first in the last bits of its atomically summed
           weights: so against the CPU as above, and against its own direct one) */
        double *z2 = malloc((size_t)n * 8);
        GT_ASSERT_OK(gt_amg_gpu_run(a, &o, NULL, r, z2, 16, &res));
        double d = 0;
        for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(z2[i] - zc[i]));
        if (d > 1e-10 * scale) fail_msg("%s: the graph's V-cycle differs from the CPU's by %.3g of %.3g", name, d, scale);
        if (!(res.graph_diff <= 1e-14 * scale))
            fail_msg("%s: the graph's V-cycle differs from the direct one by %.3g of %.3g", name, res.graph_diff, scale);
        free(z2);
    }
    gt_amg_free(&hc), gt_amg_free(&hg);
    free(r), free(zc), free(zg);
}

static void compare(const gt_csr *a, const char *name, gt_amg_smoother sm, int64_t coarse)
{
    compare_with(a, name, sm, coarse, GT_AMG_COARSEN_AGGREGATION, 1);
}

static void test_hierarchy_and_cycle(void **st)
{
    (void)st;
    gt_csr m[6];
    const char *names[6] = {"laplace2d 64^2", "laplace3d 24^3", "laplace3d-27pt 16^3", "graph 20000", "tet mesh 24",
                            "laplace3d 64^3"};
    GT_ASSERT_OK(gt_laplacian(5, 64, 64, 1, &m[0]));
    GT_ASSERT_OK(gt_laplacian(7, 24, 24, 24, &m[1]));
    GT_ASSERT_OK(gt_laplacian(27, 16, 16, 16, &m[2]));
    gt_rng r = {9};
    gt_test_graph_spd(&r, 20000, 14, &m[3]);
    GT_ASSERT_OK(gt_test_tet_laplacian(24, &m[4]));
    GT_ASSERT_OK(gt_laplacian(7, 64, 64, 64, &m[5]));
    for (int k = 0; k < 6; k++) {
        compare(&m[k], names[k], GT_AMG_SMOOTH_CHEBYSHEV, k == 5 ? 2000 : 50);
        if (k < 5) {
            compare(&m[k], names[k], GT_AMG_SMOOTH_L1JACOBI, 50);
            compare(&m[k], names[k], GT_AMG_SMOOTH_MCGS, 50);
        }
        gt_csr_free(&m[k]);
    }
}

/* Grid coarsening (amg_grid.h): the GPU's levels, end weights, rho and
   V-cycle (its fused DIA kernels) against the CPU's on 7-, 27-, 5- and
   9-point stencils of even and odd sizes, variable coefficients with
   near-Neumann faces, the lattice-ordered tetrahedral mesh, two sweeps */
static void test_grid_gpu(void **st)
{
    (void)st;
    gt_csr m[10];
    const char *names[10] = {"grid laplace3d 24^3", "grid laplace3d 37x23x19", "grid 27pt 16^3", "grid laplace2d 64x50",
                             "grid 9pt 33x40", "grid varcoef 32^3", "grid tet mesh 20", "grid laplace3d 64^3",
                             "grid laplace3d 2x9x30 (nx < 3)", "grid 9pt 40x2 (ny < 3)"};
    GT_ASSERT_OK(gt_laplacian(7, 24, 24, 24, &m[0]));
    GT_ASSERT_OK(gt_laplacian(7, 37, 23, 19, &m[1]));
    GT_ASSERT_OK(gt_laplacian(27, 16, 16, 16, &m[2]));
    GT_ASSERT_OK(gt_laplacian(5, 64, 50, 1, &m[3]));
    GT_ASSERT_OK(gt_laplacian(9, 33, 40, 1, &m[4]));
    GT_ASSERT_OK(gt_laplacian(7, 32, 32, 32, &m[5]));
    for (int64_t i = 0; i < m[5].nrows; i++) { /* coefficients 1..10 along x, row sums ~0 */
        double off = 0;
        for (int64_t p = m[5].ptr[i]; p < m[5].ptr[i + 1]; p++) {
            int64_t j = m[5].col[p];
            if (j == i) continue;
            m[5].val[p] *= pow(10.0, (double)((i < j ? i : j) % 32) / 31);
            off += fabs(m[5].val[p]);
        }
        for (int64_t p = m[5].ptr[i]; p < m[5].ptr[i + 1]; p++)
            if (m[5].col[p] == i) m[5].val[p] = off * 1.0001;
    }
    GT_ASSERT_OK(gt_test_tet_laplacian(20, &m[6]));
    GT_ASSERT_OK(gt_laplacian(7, 64, 64, 64, &m[7]));
    GT_ASSERT_OK(gt_laplacian(7, 2, 9, 30, &m[8]));
    GT_ASSERT_OK(gt_laplacian(9, 40, 2, 1, &m[9]));
    for (int k = 0; k < 10; k++) {
        compare_with(&m[k], names[k], GT_AMG_SMOOTH_CHEBYSHEV, k == 7 ? 2000 : k >= 8 ? 10 : 50, GT_AMG_COARSEN_GRID, 1);
        if (k < 2) compare_with(&m[k], names[k], GT_AMG_SMOOTH_CHEBYSHEV, 50, GT_AMG_COARSEN_GRID, 2);
        gt_csr_free(&m[k]);
    }
}

static void test_pcg_gpu(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_laplacian(7, 40, 40, 40, &a));
    int64_t n = a.nrows;
    double *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8), *one = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) one[i] = 1;
    gt_csr_spmv(&a, one, b);
    gt_precond_opts o;
    gt_precond_opts_init(&o);
    gt_amg_gpu_result res;
    GT_ASSERT_OK(gt_amg_gpu_pcg(&a, &o, b, x, 1e-8, 100, &res));
    double err = 0;
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(x[i] - 1));
    print_message("GPU AMG-PCG 40^3: %d iterations, relres %.2e, max error %.2e, set-up %.2f ms, solve %.2f ms\n%s",
                  res.pcg_iters, res.pcg_relres, err, res.setup_ms, res.pcg_ms, res.summary);
    assert_true(res.pcg_iters <= 10); /* auto takes the grid: the CPU reference takes 8 (aggregation 10) */
    assert_non_null(strstr(res.summary, "coarsening grid 40x40x40"));
    assert_true(res.pcg_relres <= 1e-8);
    assert_true(err < 1e-6);
    free(b), free(x), free(one);
    gt_csr_free(&a);
}

static void test_bad_input_gpu(void **st)
{
    (void)st;
    gt_csr l;
    GT_ASSERT_OK(gt_laplacian(5, 10, 10, 1, &l));
    for (int64_t p = l.ptr[41]; p < l.ptr[42]; p++)
        if (l.col[p] == 41) l.val[p] = 0;
    gt_precond_opts o;
    gt_precond_opts_init(&o);
    gt_amg_gpu_result res;
    assert_int_equal(gt_amg_gpu_run(&l, &o, NULL, NULL, NULL, 0, &res), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "row 42"));
    gt_csr_free(&l);
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hierarchy_and_cycle),
        cmocka_unit_test(test_grid_gpu),
        cmocka_unit_test(test_pcg_gpu),
        cmocka_unit_test(test_bad_input_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
