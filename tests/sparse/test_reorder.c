/* Unit tests (CPU): the tetrahedral-mesh Laplacian generator, reverse
 * Cuthill-McKee, the symmetric permutation and the solve job's --reorder. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gt_test.h"
#include "io/mtx.h"
#include "sparse/laplace.h"
#include "sparse/reorder.h"
#include "sparse/sparse.h"

static double entry(const gt_csr *a, int64_t i, int64_t j)
{
    for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
        if (a->col[p] == j) return a->val[p];
    return 0;
}

static int64_t bandwidth(const gt_csr *a)
{
    gt_locality l;
    gt_sp_locality(a, &l);
    return l.bandwidth;
}

/* Without jitter the Kuhn mesh's P1 Laplacian is h times the 7-point stencil
   (the face and body diagonals couple with weight 0). */
static void test_tetmesh_regular(void **st)
{
    (void)st;
    int64_t n = 6;
    gt_csr t, l;
    GT_ASSERT_OK(gt_tetmesh_laplacian(n, 0.0, 1, false, &t));
    GT_ASSERT_OK(gt_laplacian(7, n, n, n, &l));
    assert_int_equal(t.nrows, n * n * n);
    double h = 1.0 / (double)(n + 1);
    gt_rng r = {7};
    double x[216], y1[216], y2[216];
    for (int k = 0; k < 216; k++) x[k] = gt_rng_range(&r, -1, 1);
    gt_csr_spmv(&t, x, y1);
    gt_csr_spmv(&l, x, y2);
    for (int k = 0; k < 216; k++) assert_true(fabs(y1[k] - h * y2[k]) < 1e-13);
    /* interior node: itself and 14 neighbours */
    int64_t c = (2 * n + 2) * n + 2;
    assert_int_equal(t.ptr[c + 1] - t.ptr[c], 15);
    gt_csr_free(&t), gt_csr_free(&l);
}

/* Jittered and permuted: symmetric, positive definite on random vectors, 15
   entries in interior rows, and the permuted matrix is the unpermuted one
   renumbered (same diagonal values as a multiset, same row lengths). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void test_tetmesh_jittered(void **st)
{
    (void)st;
    int64_t n = 9, N = n * n * n;
    gt_csr a, u;
    GT_ASSERT_OK(gt_tetmesh_laplacian(n, 0.2, 42, true, &a));
    GT_ASSERT_OK(gt_tetmesh_laplacian(n, 0.2, 42, false, &u));
    assert_int_equal(a.nnz, u.nnz);
    int64_t full = 0;
    for (int64_t i = 0; i < N; i++) {
        full += a.ptr[i + 1] - a.ptr[i] == 15;
        assert_true(a.ptr[i + 1] - a.ptr[i] <= 15);
        for (int64_t p = a.ptr[i]; p < a.ptr[i + 1]; p++)
            assert_true(fabs(a.val[p] - entry(&a, a.col[p], i)) <= 1e-15 * fabs(a.val[p]));
        assert_true(entry(&a, i, i) > 0);
    }
    assert_int_equal(full, (n - 2) * (n - 2) * (n - 2));
    /* some diagonal-edge couplings are nonzero (the jitter moved them off 0) */
    gt_rng r = {3};
    double *x = malloc((size_t)N * 8), *y = malloc((size_t)N * 8);
    for (int t = 0; t < 5; t++) {
        for (int64_t k = 0; k < N; k++) x[k] = gt_rng_range(&r, -1, 1);
        gt_csr_spmv(&a, x, y);
        double q = 0;
        for (int64_t k = 0; k < N; k++) q += x[k] * y[k];
        assert_true(q > 0);
    }
    double *da = malloc((size_t)N * 8), *du = malloc((size_t)N * 8);
    for (int64_t i = 0; i < N; i++) da[i] = entry(&a, i, i), du[i] = entry(&u, i, i);
    qsort(da, (size_t)N, 8, cmp_double);
    qsort(du, (size_t)N, 8, cmp_double);
    for (int64_t i = 0; i < N; i++) assert_true(da[i] == du[i]);
    /* the random numbering spreads the entries: the unpermuted one is banded */
    assert_true(bandwidth(&u) <= n * n + n + 1);
    assert_true(bandwidth(&a) > N / 2);
    free(x), free(y), free(da), free(du);
    gt_csr_free(&a), gt_csr_free(&u);
}

/* B = P A P^T entry by entry, and P is a permutation. */
static void check_permuted(const gt_csr *a, const int32_t *perm, const gt_csr *b)
{
    assert_true(gt_is_permutation(perm, a->nrows));
    assert_int_equal(b->nnz, a->nnz);
    for (int64_t k = 0; k < b->nrows; k++) {
        assert_int_equal(b->ptr[k + 1] - b->ptr[k], a->ptr[perm[k] + 1] - a->ptr[perm[k]]);
        for (int64_t p = b->ptr[k]; p < b->ptr[k + 1]; p++) {
            if (p > b->ptr[k]) assert_true(b->col[p] > b->col[p - 1]);
            assert_true(b->val[p] == entry(a, perm[k], perm[b->col[p]]));
        }
    }
}

/* A random symmetric renumbering of a */
static void shuffle(const gt_csr *a, uint64_t seed, gt_csr *out)
{
    int32_t *p = malloc((size_t)a->nrows * 4);
    for (int64_t k = 0; k < a->nrows; k++) p[k] = (int32_t)k;
    gt_rng r = {seed};
    for (int64_t k = a->nrows - 1; k > 0; k--) {
        int64_t j = (int64_t)(gt_rng_u64(&r) % (uint64_t)(k + 1));
        int32_t t = p[k];
        p[k] = p[j], p[j] = t;
    }
    GT_ASSERT_OK(gt_csr_permute(a, p, out));
    check_permuted(a, p, out);
    free(p);
}

static void rcm_of(const gt_csr *a, bool sym, gt_csr *out)
{
    int32_t *p = malloc((size_t)a->nrows * 4);
    GT_ASSERT_OK(gt_rcm(a, sym, p));
    GT_ASSERT_OK(gt_csr_permute(a, p, out));
    check_permuted(a, p, out);
    free(p);
}

static void test_rcm_banded(void **st)
{
    (void)st;
    /* a path (tridiagonal) shuffled: RCM finds bandwidth 1 again */
    gt_csr l, s, r;
    GT_ASSERT_OK(gt_laplacian(3, 500, 1, 1, &l));
    shuffle(&l, 11, &s);
    assert_true(bandwidth(&s) > 100);
    rcm_of(&s, true, &r);
    assert_int_equal(bandwidth(&r), 1);
    gt_csr_free(&l), gt_csr_free(&s), gt_csr_free(&r);
    /* 2-D 5-point 30x30 shuffled: bandwidth back within that of the lexicographic order's 2x */
    GT_ASSERT_OK(gt_laplacian(5, 30, 30, 1, &l));
    shuffle(&l, 12, &s);
    rcm_of(&s, true, &r);
    assert_true(bandwidth(&r) <= 2 * bandwidth(&l));
    assert_true(bandwidth(&r) < bandwidth(&s));
    gt_csr_free(&l), gt_csr_free(&s), gt_csr_free(&r);
    /* the tet mesh's own locality measure improves */
    GT_ASSERT_OK(gt_tetmesh_laplacian(12, 0.2, 5, true, &s));
    rcm_of(&s, true, &r);
    gt_locality a0, a1;
    gt_sp_locality(&s, &a0);
    gt_sp_locality(&r, &a1);
    assert_true(a1.bandwidth < a0.bandwidth / 4);
    assert_true(a1.mean_dist < a0.mean_dist / 4);
    gt_csr_free(&s), gt_csr_free(&r);
}

/* Two components (two paths) and a nonsymmetric pattern (an upper
   bidiagonal: RCM must use A + A^T). */
static void test_rcm_components_unsym(void **st)
{
    (void)st;
    int64_t n = 200;
    int32_t ri[400], ci[400];
    double v[400];
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        ri[k] = (int32_t)i, ci[k] = (int32_t)i, v[k++] = 2;
        if (i + 1 < n && i != n / 2 - 1) ri[k] = (int32_t)i, ci[k] = (int32_t)i + 1, v[k++] = -1;
    }
    gt_csr a, s, r;
    GT_ASSERT_OK(gt_csr_from_triplets(n, n, k, ri, ci, v, &a));
    shuffle(&a, 99, &s);
    rcm_of(&s, false, &r);
    assert_int_equal(bandwidth(&r), 1);
    gt_csr_free(&a), gt_csr_free(&s), gt_csr_free(&r);
}

static void test_vec_permute(void **st)
{
    (void)st;
    int32_t p[5] = {3, 0, 4, 1, 2};
    double v[5] = {10, 11, 12, 13, 14}, w[5], u[5];
    gt_vec_permute(v, p, 5, w);
    assert_true(w[0] == 13 && w[1] == 10 && w[2] == 14 && w[3] == 11 && w[4] == 12);
    gt_vec_unpermute(w, p, 5, u);
    for (int k = 0; k < 5; k++) assert_true(u[k] == v[k]);
    int32_t bad[3] = {0, 2, 2};
    assert_false(gt_is_permutation(bad, 3));
}

/* The job with --reorder rcm against none: the same x (to the solver's
   tolerance) in the file's order, and auto's choice on a scrambled mesh. */
static void solve_to(const gt_sparse_matrix *m, int reorder, const char *path, gt_sparse_result *res)
{
    gt_sparse_job job;
    gt_sparse_job_init(&job);
    job.device = GT_DEVICE_CPU;
    job.progress = false;
    job.reorder = reorder;
    job.output = path;
    job.solve.tol = 1e-10;
    job.method = GT_SOLVE_PCG;
    GT_ASSERT_OK(gt_sparse_solve(m, &job, NULL, res));
}

static void test_job_reorder(void **st)
{
    (void)st;
    char dir[] = "/tmp/gt_reorder_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p0[64], p1[64], p2[64];
    snprintf(p0, sizeof p0, "%s/x0.mtx", dir);
    snprintf(p1, sizeof p1, "%s/x1.mtx", dir);
    snprintf(p2, sizeof p2, "%s/x2.mtx", dir);
    gt_sparse_matrix m;
    memset(&m, 0, sizeof m);
    /* 66^3 unknowns would be auto's size; a 20^3 mesh exercises the mapping */
    GT_ASSERT_OK(gt_tetmesh_laplacian(20, 0.2, 8, true, &m.a));
    GT_ASSERT_OK(gt_sp_analyze(&m.a, &m.info));
    m.path = strdup("tetmesh");
    gt_sparse_result r0, r1, r2;
    solve_to(&m, GT_REORDER_NONE, p0, &r0);
    solve_to(&m, GT_REORDER_RCM, p1, &r1);
    solve_to(&m, GT_REORDER_AUTO, p2, &r2);
    assert_false(r0.reordered);
    assert_true(r1.reordered);
    assert_false(r2.reordered); /* x is 64 KB: fits in cache in any order */
    double *x0, *x1;
    int64_t n0 = 0, n1 = 0;
    GT_ASSERT_OK(gt_mtx_read_vector(p0, &x0, &n0));
    GT_ASSERT_OK(gt_mtx_read_vector(p1, &x1, &n1));
    assert_int_equal(n0, m.a.nrows);
    assert_int_equal(n1, m.a.nrows);
    for (int64_t i = 0; i < n0; i++) {
        assert_true(fabs(x0[i] - 1) < 1e-7);
        assert_true(fabs(x1[i] - x0[i]) < 1e-7);
    }
    assert_true(abs((int)(r1.solve.iters - r0.solve.iters)) <= 2);
    free(x0), free(x1);
    unlink(p0), unlink(p1), unlink(p2), rmdir(dir);
    gt_sparse_matrix_free(&m);
    /* auto on a scrambled mesh with x over 1 MB reorders */
    gt_csr big;
    GT_ASSERT_OK(gt_tetmesh_laplacian(52, 0.2, 9, true, &big));
    gt_locality l;
    gt_sp_locality(&big, &l);
    char why[300];
    assert_true(gt_reorder_pays(&big, &l, why, sizeof why));
    int32_t *perm;
    gt_csr pb;
    GT_ASSERT_OK(gt_reorder_apply(&big, true, GT_REORDER_AUTO, &perm, &pb, why, sizeof why));
    assert_non_null(perm);
    assert_non_null(strstr(why, "reorder rcm"));
    gt_locality l2;
    gt_sp_locality(&pb, &l2);
    assert_true(l2.near > 0.5);
    free(perm), gt_csr_free(&pb);
    /* and a banded one (the 7-point 110^3 Laplacian) is left alone */
    gt_csr lap;
    GT_ASSERT_OK(gt_laplacian(7, 110, 110, 110, &lap));
    GT_ASSERT_OK(gt_reorder_apply(&lap, true, GT_REORDER_AUTO, &perm, &pb, why, sizeof why));
    assert_null(perm);
    assert_non_null(strstr(why, "reorder none"));
    gt_csr_free(&lap), gt_csr_free(&big);
}

/* A 27-point stencil on 70x70 planes has only its own plane's 9 entries
   within 4096 columns (the planes above and below are 4900 +- 71 away), so
   the locality rule alone would reorder it; the job keeps the DIA order. */
static void test_job_keeps_dia(void **st)
{
    (void)st;
    gt_sparse_matrix m;
    memset(&m, 0, sizeof m);
    GT_ASSERT_OK(gt_laplacian(27, 70, 70, 28, &m.a)); /* 137200 rows: x over 1 MB */
    GT_ASSERT_OK(gt_sp_analyze(&m.a, &m.info));
    m.path = strdup("lap27");
    gt_locality l;
    gt_sp_locality(&m.a, &l);
    char why[300];
    assert_true(l.near < 0.4);
    assert_true(gt_reorder_pays(&m.a, &l, why, sizeof why));
    gt_sparse_job job;
    gt_sparse_job_init(&job);
    job.device = GT_DEVICE_CPU;
    job.progress = false;
    job.solve.maxiter = 2;
    gt_sparse_result res;
    gt_status s = gt_sparse_solve(&m, &job, NULL, &res);
    assert_int_equal(s, GT_ERR_RUNTIME); /* 2 iterations: not converged */
    assert_true(res.solved);
    assert_int_equal(res.format, GT_SP_DIA);
    assert_false(res.reordered);
    gt_sparse_matrix_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tetmesh_regular),   cmocka_unit_test(test_tetmesh_jittered),
        cmocka_unit_test(test_rcm_banded),        cmocka_unit_test(test_rcm_components_unsym),
        cmocka_unit_test(test_vec_permute),       cmocka_unit_test(test_job_reorder),
        cmocka_unit_test(test_job_keeps_dia),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
