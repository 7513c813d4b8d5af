/* Smoothed-aggregation AMG, CPU reference (lib/sparse/amg*.c): the
 * aggregates cover every row once and are connected in the strength graph;
 * T^T T = I; P times the aggregate sizes is the smoothed constant; A_c is
 * symmetric and equals a dense P^T A P; the V-cycle is a symmetric operator
 * that cuts the error of 2-D/3-D Laplacians by a bounded factor per cycle; AMG-PCG
 * converges in at most 20 iterations on the 40^3 Laplacian (and on an
 * unstructured tetrahedral mesh, the 27-point stencil and a random graph);
 * the coarse LU path and bad input. */
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
#include "sparse_testutil.h"
#include "amg_testmesh.h"

static double dot(const double *x, const double *y, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* every row in exactly one aggregate, every aggregate non-empty and
   connected through S (a search restricted to the aggregate) */
static void check_aggregates(const gt_csr *s, const int32_t *agg, int64_t nagg, const char *what)
{
    int64_t n = s->nrows;
    int64_t *size = calloc((size_t)(nagg > 0 ? nagg : 1), 8);
    for (int64_t i = 0; i < n; i++) {
        if (agg[i] < 0 || agg[i] >= nagg) fail_msg("%s: row %lld has aggregate %d of %lld", what, (long long)i, agg[i], (long long)nagg);
        size[agg[i]]++;
    }
    for (int64_t k = 0; k < nagg; k++)
        if (size[k] == 0) fail_msg("%s: aggregate %lld is empty", what, (long long)k);
    char *seen = calloc((size_t)(n > 0 ? n : 1), 1), *start = calloc((size_t)(nagg > 0 ? nagg : 1), 1);
    int32_t *stack = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
        if (start[agg[i]]) continue;
        start[agg[i]] = 1;
        int64_t top = 0, reached = 0;
        stack[top++] = (int32_t)i, seen[i] = 1;
        while (top) {
            int32_t u = stack[--top];
            reached++;
            for (int64_t p = s->ptr[u]; p < s->ptr[u + 1]; p++) {
                int32_t w = s->col[p];
                if (agg[w] == agg[i] && !seen[w]) seen[w] = 1, stack[top++] = w;
            }
        }
        if (reached != size[agg[i]])
            fail_msg("%s: aggregate %d not connected (%lld of %lld rows reached)", what, agg[i], (long long)reached,
                     (long long)size[agg[i]]);
    }
    free(size), free(seen), free(start), free(stack);
}

typedef struct { const char *name; gt_csr a; } named;

static int make_matrices(named *m)
{
    gt_rng r = {7};
    int k = 0;
    m[k].name = "laplace2d-5pt 30x30";
    GT_ASSERT_OK(gt_laplacian(5, 30, 30, 1, &m[k++].a));
    m[k].name = "laplace3d-7pt 12^3";
    GT_ASSERT_OK(gt_laplacian(7, 12, 12, 12, &m[k++].a));
    m[k].name = "laplace3d-27pt 9^3";
    GT_ASSERT_OK(gt_laplacian(27, 9, 9, 9, &m[k++].a));
    m[k].name = "graph 3000";
    gt_test_graph_spd(&r, 3000, 12, &m[k++].a);
    m[k].name = "tet mesh 12";
    GT_ASSERT_OK(gt_test_tet_laplacian(12, &m[k++].a));
    return k;
}

static void test_aggregates(void **st)
{
    (void)st;
    named m[8];
    int nm = make_matrices(m);
    const double thetas[3] = {0.0, 0.08, 0.5};
    for (int k = 0; k < nm; k++)
        for (int t = 0; t < 3; t++) {
            gt_csr s;
            GT_ASSERT_OK(gt_amg_strength(&m[k].a, thetas[t], &s));
            /* S symmetric, no diagonal */
            gt_csr st2;
            GT_ASSERT_OK(gt_csr_transpose(&s, &st2));
            assert_int_equal(st2.nnz, s.nnz);
            for (int64_t i = 0; i <= s.nrows; i++) assert_int_equal(st2.ptr[i], s.ptr[i]);
            for (int64_t p = 0; p < s.nnz; p++) assert_int_equal(st2.col[p], s.col[p]);
            for (int64_t i = 0; i < s.nrows; i++)
                for (int64_t p = s.ptr[i]; p < s.ptr[i + 1]; p++) assert_int_not_equal(s.col[p], i);
            for (int dist = 1; dist <= 2; dist++) {
                int32_t *agg = malloc((size_t)s.nrows * 4);
                int64_t nagg = 0;
                int rounds = 0;
                GT_ASSERT_OK(gt_amg_aggregate(&s, dist, agg, &nagg, &rounds));
                char what[96];
                snprintf(what, sizeof what, "%s theta %g MIS-%d", m[k].name, thetas[t], dist);
                check_aggregates(&s, agg, nagg, what);
                /* roots are distance-dist independent: aggregates of a
                   connected strength graph hold more than one row on average */
                if (s.nnz == 0) assert_int_equal(nagg, s.nrows); /* 27-point at 0.08: all weak, singletons */
                else if (thetas[t] < 0.5 && nagg * (dist == 2 ? 3 : 2) >= s.nrows)
                    fail_msg("%s: %lld aggregates of %lld rows", what, (long long)nagg, (long long)s.nrows);
                assert_true(rounds >= 1 && rounds < 100);
                /* deterministic: the same again */
                int32_t *agg2 = malloc((size_t)s.nrows * 4);
                int64_t nagg2 = 0;
                GT_ASSERT_OK(gt_amg_aggregate(&s, dist, agg2, &nagg2, NULL));
                assert_int_equal(nagg2, nagg);
                assert_memory_equal(agg, agg2, (size_t)s.nrows * 4);
                free(agg), free(agg2);
            }
            gt_csr_free(&s), gt_csr_free(&st2);
        }
    for (int k = 0; k < nm; k++) gt_csr_free(&m[k].a);
}

/* T^T T = I; P c = 1 - w D^-1 A 1 where c_k = sqrt(|aggregate k|) (T c = 1) */
static void test_prolongator(void **st)
{
    (void)st;
    named m[8];
    int nm = make_matrices(m);
    for (int k = 0; k < nm; k++) {
        const gt_csr *a = &m[k].a;
        int64_t n = a->nrows;
        gt_csr s, t, tt, tt_t, p;
        GT_ASSERT_OK(gt_amg_strength(a, 0.08, &s));
        int32_t *agg = malloc((size_t)n * 4);
        int64_t nagg;
        GT_ASSERT_OK(gt_amg_aggregate(&s, 2, agg, &nagg, NULL));
        GT_ASSERT_OK(gt_amg_tentative(n, agg, nagg, &t));
        GT_ASSERT_OK(gt_csr_transpose(&t, &tt));
        GT_ASSERT_OK(gt_amg_spgemm(&tt, &t, &tt_t));
        assert_int_equal(tt_t.nnz, nagg); /* diagonal */
        for (int64_t i = 0; i < nagg; i++) {
            assert_int_equal(tt_t.ptr[i + 1] - tt_t.ptr[i], 1);
            assert_int_equal(tt_t.col[tt_t.ptr[i]], i);
            assert_true(fabs(tt_t.val[tt_t.ptr[i]] - 1) < 1e-14);
        }
        double *dinv = malloc((size_t)n * 8), *one = malloc((size_t)n * 8), *a1 = malloc((size_t)n * 8),
               *c = calloc((size_t)nagg, 8), *pc = malloc((size_t)n * 8);
        GT_ASSERT_OK(gt_amg_dinv(a, dinv));
        double rho = gt_amg_rho(a, dinv);
        assert_true(rho > 0.5 && rho <= 2.0 + 1e-9); /* rho(D^-1 A) of a diagonally dominant matrix <= 2 */
        double w = 4.0 / 3.0 / rho;
        GT_ASSERT_OK(gt_amg_prolong(a, dinv, agg, nagg, w, &p));
        assert_int_equal(p.ncols, nagg);
        for (int64_t i = 0; i < n; i++) {
            one[i] = 1;
            c[agg[i]] += 1;
            for (int64_t q = p.ptr[i] + 1; q < p.ptr[i + 1]; q++) assert_true(p.col[q - 1] < p.col[q]);
        }
        for (int64_t j = 0; j < nagg; j++) c[j] = sqrt(c[j]);
        gt_csr_spmv(a, one, a1);
        gt_csr_spmv(&p, c, pc);
        for (int64_t i = 0; i < n; i++) {
            double want = 1 - w * dinv[i] * a1[i];
            if (fabs(pc[i] - want) > 1e-12) fail_msg("%s row %lld: P c %.17g want %.17g", m[k].name, (long long)i, pc[i], want);
        }
        free(agg), free(dinv), free(one), free(a1), free(c), free(pc);
        gt_csr_free(&s), gt_csr_free(&t), gt_csr_free(&tt), gt_csr_free(&tt_t), gt_csr_free(&p);
        gt_csr_free(&m[k].a);
    }
}

/* A_c symmetric and equal to the dense triple product */
static void test_galerkin(void **st)
{
    (void)st;
    gt_rng r = {3};
    gt_csr mats[2];
    GT_ASSERT_OK(gt_laplacian(9, 11, 9, 1, &mats[0]));
    gt_test_graph_spd(&r, 300, 10, &mats[1]);
    for (int k = 0; k < 2; k++) {
        gt_csr *a = &mats[k];
        gt_precond_opts o;
        gt_precond_opts_init(&o);
        o.amg_coarsening = GT_AMG_COARSEN_AGGREGATION;
        o.amg_coarse_size = 10;
        o.amg_max_levels = 2;
        gt_amg h;
        GT_ASSERT_OK(gt_amg_setup(a, &o, &h));
        assert_int_equal(h.nlevels, 2);
        const gt_csr *p = &h.lev[0].p, *ac = &h.lev[1].a;
        int64_t n = a->nrows, m = p->ncols;
        assert_int_equal(ac->nrows, m);
        double *pd = calloc((size_t)(n * m), 8), *apd = calloc((size_t)(n * m), 8), *acd = calloc((size_t)(m * m), 8);
        for (int64_t i = 0; i < n; i++)
            for (int64_t q = p->ptr[i]; q < p->ptr[i + 1]; q++) pd[i * m + p->col[q]] = p->val[q];
        for (int64_t i = 0; i < n; i++)
            for (int64_t q = a->ptr[i]; q < a->ptr[i + 1]; q++)
                for (int64_t j = 0; j < m; j++) apd[i * m + j] += a->val[q] * pd[(int64_t)a->col[q] * m + j];
        double scale = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < m; j++) {
                double s = 0;
                for (int64_t t = 0; t < n; t++) s += pd[t * m + i] * apd[t * m + j];
                acd[i * m + j] = s, scale = fmax(scale, fabs(s));
            }
        for (int64_t i = 0; i < m; i++) {
            for (int64_t q = ac->ptr[i]; q < ac->ptr[i + 1]; q++) acd[i * m + ac->col[q]] -= ac->val[q];
            for (int64_t q = ac->ptr[i] + 1; q < ac->ptr[i + 1]; q++) assert_true(ac->col[q - 1] < ac->col[q]);
        }
        for (int64_t i = 0; i < m * m; i++)
            if (fabs(acd[i]) > 1e-13 * scale) fail_msg("matrix %d: A_c differs from P^T A P by %g", k, acd[i]);
        /* symmetric */
        gt_csr act;
        GT_ASSERT_OK(gt_csr_transpose(ac, &act));
        assert_int_equal(act.nnz, ac->nnz);
        for (int64_t q = 0; q < ac->nnz; q++) {
            assert_int_equal(act.col[q], ac->col[q]);
            assert_true(fabs(act.val[q] - ac->val[q]) <= 1e-13 * scale);
        }
        gt_csr_free(&act);
        free(pd), free(apd), free(acd);
        gt_amg_free(&h);
        gt_csr_free(a);
    }
}

/* A-norm error reduction of the stationary iteration x += M^-1 (b - A x) */
static double cycle_factor(const gt_csr *a, const gt_precond_opts *o, int cycles, gt_amg *keep)
{
    gt_amg h;
    if (gt_amg_setup(a, o, &h) != GT_OK) fail_msg("setup: %s", gt_errmsg());
    int64_t n = a->nrows;
    gt_rng r = {11};
    double *e = malloc((size_t)n * 8), *ae = malloc((size_t)n * 8), *z = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) e[i] = gt_rng_range(&r, -1, 1);
    double worst = 0, prev = 0;
    for (int c = 0; c <= cycles; c++) {
        gt_csr_spmv(a, e, ae); /* b = 0: residual = -A e */
        double en = sqrt(dot(e, ae, n));
        if (c > 1) worst = fmax(worst, en / prev); /* skip the first (rough start) */
        prev = en;
        for (int64_t i = 0; i < n; i++) ae[i] = -ae[i];
        gt_amg_vcycle(&h, ae, z);
        for (int64_t i = 0; i < n; i++) e[i] += z[i];
    }
    free(e), free(ae), free(z);
    if (keep) *keep = h;
    else gt_amg_free(&h);
    return worst;
}

static void test_vcycle_reduces_error(void **st)
{
    (void)st;
    gt_csr a2, a3;
    GT_ASSERT_OK(gt_laplacian(5, 64, 64, 1, &a2));
    GT_ASSERT_OK(gt_laplacian(7, 24, 24, 24, &a3));
    const gt_amg_smoother sm[3] = {GT_AMG_SMOOTH_CHEBYSHEV, GT_AMG_SMOOTH_L1JACOBI, GT_AMG_SMOOTH_MCGS};
    const double limit[3] = {0.45, 0.8, 0.65};
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < 2; d++) {
            gt_precond_opts o;
            gt_precond_opts_init(&o);
            o.amg_coarsening = GT_AMG_COARSEN_AGGREGATION;
            o.amg_smoother = sm[k];
            o.amg_coarse_size = 50;
            gt_amg h;
            double f = cycle_factor(d ? &a3 : &a2, &o, 12, &h);
            print_message("smoother %d, %s: %d levels, factor %.3f per V-cycle\n", k, d ? "3-D" : "2-D", h.nlevels, f);
            assert_true(h.nlevels >= 3);
            /* measured (12 cycles): Chebyshev 0.37/0.30, l1-Jacobi 0.73/0.69,
               Gauss-Seidel 0.57/0.49 (2-D/3-D); the large MIS-2 aggregates
               keep these above pyamg's; PCG below is the use that counts */
            assert_true(f < limit[k]);
            gt_amg_free(&h);
        }
    gt_csr_free(&a2), gt_csr_free(&a3);
}

/* (M^-1 u, v) = (u, M^-1 v), needed by PCG */
static void test_vcycle_symmetric(void **st)
{
    (void)st;
    gt_rng r = {5};
    gt_csr a;
    gt_test_graph_spd(&r, 4000, 12, &a);
    int64_t n = a.nrows;
    const gt_amg_smoother sm[3] = {GT_AMG_SMOOTH_CHEBYSHEV, GT_AMG_SMOOTH_L1JACOBI, GT_AMG_SMOOTH_MCGS};
    double *u = malloc((size_t)n * 8), *v = malloc((size_t)n * 8), *mu = malloc((size_t)n * 8), *mv = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) u[i] = gt_rng_range(&r, -1, 1), v[i] = gt_rng_range(&r, -1, 1);
    for (int k = 0; k < 3; k++) {
        gt_precond_opts o;
        gt_precond_opts_init(&o);
        o.amg_smoother = sm[k];
        o.amg_sweeps = 2;
        o.amg_coarse_size = 30;
        gt_amg h;
        GT_ASSERT_OK(gt_amg_setup(&a, &o, &h));
        assert_true(h.nlevels >= 3);
        gt_amg_vcycle(&h, u, mu);
        gt_amg_vcycle(&h, v, mv);
        double x = dot(mu, v, n), y = dot(u, mv, n);
        if (fabs(x - y) > 1e-10 * fabs(x)) fail_msg("smoother %d: (Mu,v) %.17g (u,Mv) %.17g", k, x, y);
        assert_true(dot(mu, u, n) > 0);
        gt_amg_free(&h);
    }
    free(u), free(v), free(mu), free(mv);
    gt_csr_free(&a);
}

/* PCG with the AMG preconditioner (gt_precond interface) */
static int pcg(const gt_csr *a, const gt_precond *pc, const double *b, double *x, double tol, int maxit)
{
    int64_t n = a->nrows;
    double *r = malloc((size_t)n * 8), *z = malloc((size_t)n * 8), *p = malloc((size_t)n * 8), *q = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) x[i] = 0, r[i] = b[i];
    double bn = sqrt(dot(b, b, n));
    GT_ASSERT_OK(pc->apply(pc->ctx, r, z, NULL));
    memcpy(p, z, (size_t)n * 8);
    double rz = dot(r, z, n);
    int it = 0;
    while (it < maxit) {
        gt_csr_spmv(a, p, q);
        double alpha = rz / dot(p, q, n);
        for (int64_t i = 0; i < n; i++) x[i] += alpha * p[i], r[i] -= alpha * q[i];
        it++;
        if (sqrt(dot(r, r, n)) <= tol * bn) break;
        GT_ASSERT_OK(pc->apply(pc->ctx, r, z, NULL));
        double rz2 = dot(r, z, n);
        for (int64_t i = 0; i < n; i++) p[i] = z[i] + rz2 / rz * p[i];
        rz = rz2;
    }
    free(r), free(z), free(p), free(q);
    return it;
}

/* AMG-PCG on A x = A 1 from x = 0 to 1e-8: iterations, *err = max |x_i - 1| */
static int pcg_ones(const gt_csr *a, const gt_precond *pc, int maxit, double *err)
{
    int64_t n = a->nrows;
    double *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8), *one = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) one[i] = 1;
    gt_csr_spmv(a, one, b);
    int it = pcg(a, pc, b, x, 1e-8, maxit);
    *err = 0;
    for (int64_t i = 0; i < n; i++) *err = fmax(*err, fabs(x[i] - 1));
    free(b), free(x), free(one);
    return it;
}

static void test_pcg_40cubed(void **st)
{
    (void)st;
    gt_csr a;
    GT_ASSERT_OK(gt_laplacian(7, 40, 40, 40, &a));
    int64_t n = a.nrows;
    gt_precond_opts o;
    gt_precond_opts_init(&o);
    o.amg_coarsening = GT_AMG_COARSEN_AGGREGATION;
    o.verbose = true;
    gt_precond pc;
    GT_ASSERT_OK(gt_amg_precond_cpu(&a, &o, &pc));
    assert_non_null(strstr(pc.summary, "coarsening aggregation"));
    assert_int_equal(pc.kind, GT_PRECOND_AMG);
    assert_false(pc.on_gpu);
    assert_true(pc.levels >= 3);
    assert_true(pc.complexity > 1.0 && pc.complexity < 2.0);
    assert_non_null(strstr(pc.summary, "operator complexity"));
    assert_non_null(gt_amg_precond_hierarchy(&pc));
    print_message("%s", pc.summary);
    double *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8), *one = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) one[i] = 1;
    gt_csr_spmv(&a, one, b);
    int it = pcg(&a, &pc, b, x, 1e-8, 100);
    double err = 0;
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(x[i] - 1));
    print_message("AMG-PCG 40^3: %d iterations, max error %.2e\n", it, err);
    assert_true(it <= 12); /* the brief's bound is 20; 9 measured */
    assert_true(err < 1e-6);
    pc.destroy(pc.ctx);
    /* the unstructured graph converges too */
    gt_rng r = {9};
    gt_csr g;
    gt_test_graph_spd(&r, 20000, 14, &g);
    GT_ASSERT_OK(gt_amg_precond_cpu(&g, &o, &pc));
    gt_csr_spmv(&g, one, b);
    it = pcg(&g, &pc, b, x, 1e-8, 200);
    print_message("AMG-PCG graph 20000: %d iterations\n", it);
    assert_true(it <= 30);
    pc.destroy(pc.ctx);
    /* the unstructured tetrahedral mesh (positive off-diagonals) */
    gt_csr tet;
    GT_ASSERT_OK(gt_test_tet_laplacian(30, &tet));
    GT_ASSERT_OK(gt_amg_precond_cpu(&tet, &o, &pc));
    gt_csr_spmv(&tet, one, b);
    it = pcg(&tet, &pc, b, x, 1e-8, 200);
    print_message("AMG-PCG tet mesh 30 (%lld rows): %d levels, complexity %.2f, %d iterations\n", (long long)tet.nrows,
                  pc.levels, pc.complexity, it);
    assert_true(it <= 18); /* 14 measured */
    pc.destroy(pc.ctx);
    gt_csr_free(&tet);
    /* 27-point: theta 0.08 is above every coupling (1/26); the level falls
       back to theta 0 and still coarsens */
    gt_csr a27;
    GT_ASSERT_OK(gt_laplacian(27, 20, 20, 20, &a27));
    GT_ASSERT_OK(gt_amg_precond_cpu(&a27, &o, &pc));
    assert_true(pc.levels >= 2);
    gt_csr_spmv(&a27, one, b);
    it = pcg(&a27, &pc, b, x, 1e-8, 200);
    print_message("AMG-PCG 27-point 20^3: %d levels, %d iterations\n", pc.levels, it);
    assert_true(it <= 20);
    pc.destroy(pc.ctx);
    gt_csr_free(&a27);
    free(b), free(x), free(one);
    gt_csr_free(&a), gt_csr_free(&g);
}

/* ------------------------------------------------ grid coarsening */
/* gt_laplacian with the couplings along x scaled by sx (anisotropy) */
static void scale_x(gt_csr *a, int64_t nx, double sx)
{
    for (int64_t i = 0; i < a->nrows; i++) {
        double off = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
            if (a->col[p] != i && (a->col[p] == i - 1 || a->col[p] == i + 1) && i / nx == a->col[p] / nx)
                a->val[p] *= sx;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
            if (a->col[p] != i) off += fabs(a->val[p]);
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
            if (a->col[p] == i) a->val[p] = off + 1e-3;
    }
}

static void test_grid_detect(void **st)
{
    (void)st;
    static const struct {
        int pts;
        int64_t nx, ny, nz;
        int slots;
    } c[] = {{7, 20, 13, 9, 7},  {27, 10, 7, 5, 27}, {5, 17, 11, 1, 5}, {9, 12, 9, 1, 9},
             {3, 50, 1, 1, 3},   {7, 2, 5, 4, 7},    {27, 3, 3, 3, 27}, {7, 160, 3, 2, 7}};
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        gt_csr a;
        GT_ASSERT_OK(gt_laplacian(c[k].pts, c[k].nx, c[k].ny, c[k].nz, &a));
        gt_amg_grid_info gi;
        GT_ASSERT_OK(gt_amg_grid_detect(&a, &gi));
        if (gi.g.nx * gi.g.ny * gi.g.nz != a.nrows || gi.g.nx != c[k].nx || gi.g.ny != c[k].ny)
            fail_msg("%d-point %lldx%lldx%lld: found %lldx%lldx%lld", c[k].pts, (long long)c[k].nx,
                     (long long)c[k].ny, (long long)c[k].nz, (long long)gi.g.nx, (long long)gi.g.ny, (long long)gi.g.nz);
        assert_int_equal(__builtin_popcount(gi.mask), c[k].slots);
        assert_true(gi.symmetric);
        assert_true(gt_amg_grid_choose(&gi, GT_AMG_SMOOTH_CHEBYSHEV));
        assert_false(gt_amg_grid_choose(&gi, GT_AMG_SMOOTH_L1JACOBI));
        /* 20:1 anisotropy along x: found, not chosen */
        if (c[k].pts == 7 && c[k].nx > 2) {
            scale_x(&a, c[k].nx, 20);
            GT_ASSERT_OK(gt_amg_grid_detect(&a, &gi));
            assert_int_equal(gi.g.nx, c[k].nx);
            assert_true(gi.axis[0] > 10 * gi.axis[1]);
            assert_false(gt_amg_grid_choose(&gi, GT_AMG_SMOOTH_CHEBYSHEV));
        }
        /* one coupling made nonsymmetric */
        a.val[a.ptr[a.nrows / 2]] *= 1.5;
        GT_ASSERT_OK(gt_amg_grid_detect(&a, &gi));
        assert_false(gi.symmetric);
        assert_false(gt_amg_grid_choose(&gi, GT_AMG_SMOOTH_CHEBYSHEV));
        gt_csr_free(&a);
    }
    /* not on a grid: the tetrahedral mesh, a random graph, a 7-point
       Laplacian with one far coupling added */
    gt_csr t, g, l;
    GT_ASSERT_OK(gt_test_tet_laplacian(12, &t)); /* lattice order: on the 11^3 grid, 15 of the 27 slots */
    {
        gt_amg_grid_info gi;
        GT_ASSERT_OK(gt_amg_grid_detect(&t, &gi));
        assert_int_equal(gi.g.nx, 11);
        assert_int_equal(__builtin_popcount(gi.mask), 15);
        gt_csr_free(&t);
    }
    GT_ASSERT_OK(gt_tetmesh_laplacian(11, 0.2, 1, true, &t)); /* numbered in a random order */
    gt_rng r = {4};
    gt_test_graph_spd(&r, 2000, 8, &g);
    const gt_csr *none[2] = {&t, &g};
    for (int k = 0; k < 2; k++) {
        gt_amg_grid_info gi;
        GT_ASSERT_OK(gt_amg_grid_detect(none[k], &gi));
        assert_int_equal(gi.g.nx, 0);
    }
    GT_ASSERT_OK(gt_laplacian(7, 8, 8, 8, &l));
    int32_t *ri = malloc((size_t)(l.nnz + 2) * 4), *ci = malloc((size_t)(l.nnz + 2) * 4);
    double *v = malloc((size_t)(l.nnz + 2) * 8);
    int64_t q = 0;
    for (int64_t i = 0; i < l.nrows; i++)
        for (int64_t p = l.ptr[i]; p < l.ptr[i + 1]; p++) ri[q] = (int32_t)i, ci[q] = l.col[p], v[q++] = l.val[p];
    ri[q] = 0, ci[q] = 100, v[q++] = -0.1;
    ri[q] = 100, ci[q] = 0, v[q++] = -0.1;
    gt_csr far;
    GT_ASSERT_OK(gt_csr_from_triplets(l.nrows, l.ncols, q, ri, ci, v, &far));
    gt_amg_grid_info gi;
    GT_ASSERT_OK(gt_amg_grid_detect(&far, &gi));
    assert_int_equal(gi.g.nx, 0);
    /* forcing the grid on it is a data error naming the option */
    gt_precond_opts o;
    gt_precond_opts_init(&o);
    o.amg_coarsening = GT_AMG_COARSEN_GRID;
    gt_amg h;
    assert_int_equal(gt_amg_setup(&far, &o, &h), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "aggregation"));
    /* and the grid with another smoother is a usage error */
    o.amg_smoother = GT_AMG_SMOOTH_L1JACOBI;
    assert_int_equal(gt_amg_setup(&l, &o, &h), GT_ERR_USAGE);
    free(ri), free(ci), free(v);
    gt_csr_free(&t), gt_csr_free(&g), gt_csr_free(&l), gt_csr_free(&far);
}

/* P reproduces functions linear in each coordinate at every fine point
   whose interpolation is complete; A_c = R A P equals the SpGEMM product of
   the same P (dense comparison), on odd and even sizes, 2-D and 3-D */
static void test_grid_galerkin(void **st)
{
    (void)st;
    static const struct {
        int pts;
        int64_t nx, ny, nz;
    } c[] = {{7, 9, 8, 7}, {27, 7, 6, 5}, {5, 15, 10, 1}, {9, 8, 11, 1}, {3, 21, 1, 1}, {7, 2, 3, 6}};
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        gt_csr a;
        GT_ASSERT_OK(gt_laplacian(c[k].pts, c[k].nx, c[k].ny, c[k].nz, &a));
        /* variable coefficients keep the test from passing on symmetry alone */
        gt_rng r = {(uint64_t)k + 1};
        for (int64_t i = 0; i < a.nrows; i++)
            for (int64_t p = a.ptr[i]; p < a.ptr[i + 1]; p++) a.val[p] *= 1 + 0.5 * gt_rng_range(&r, 0, 1);
        gt_amg_grid f = {c[k].nx, c[k].ny, c[k].nz, {0.5, 0.5, 0.5}};
        gt_amg_grid_end_weights(&a, &f);
        for (int d = 0; d < 3; d++) assert_true(f.wend[d] >= 0.5 && f.wend[d] <= 1);
        gt_amg_grid cg = gt_amg_grid_coarse(f);
        gt_csr p, rt, ac, ref;
        GT_ASSERT_OK(gt_amg_grid_prolong(f, &p));
        int64_t n = a.nrows, m = p.ncols;
        assert_int_equal(m, cg.nx * cg.ny * cg.nz);
        double *lin = malloc((size_t)m * 8), *pl = malloc((size_t)n * 8);
        for (int64_t I = 0; I < m; I++)
            lin[I] = 1 + 2.0 * (double)(I % cg.nx * 2) - 3.0 * (double)(I / cg.nx % cg.ny * 2) +
                     0.5 * (double)(I / (cg.nx * cg.ny) * 2);
        gt_csr_spmv(&p, lin, pl);
        for (int64_t i = 0; i < n; i++) {
            int64_t x = i % f.nx, y = i / f.nx % f.ny, z = i / (f.nx * f.ny);
            bool full = (x % 2 == 0 || x + 1 < f.nx) && (y % 2 == 0 || y + 1 < f.ny) && (z % 2 == 0 || z + 1 < f.nz);
            double want = 1 + 2.0 * (double)x - 3.0 * (double)y + 0.5 * (double)z;
            if (full && fabs(pl[i] - want) > 1e-12 * (1 + fabs(want)))
                fail_msg("P at (%lld,%lld,%lld): %g, linear %g", (long long)x, (long long)y, (long long)z, pl[i], want);
        }
        free(lin), free(pl);
        GT_ASSERT_OK(gt_csr_transpose(&p, &rt));
        GT_ASSERT_OK(gt_amg_galerkin(&a, &p, &rt, &ref));
        gt_amg_grid_info gi;
        GT_ASSERT_OK(gt_amg_grid_detect(&a, &gi));
        assert_int_equal(gi.g.nx, f.nx);
        GT_ASSERT_OK(gt_amg_grid_galerkin(&a, f, gi.mask, &ac));
        assert_int_equal(ac.nrows, m);
        double *d = calloc((size_t)(m * m), 8);
        double scale = 0;
        for (int64_t i = 0; i < m; i++) {
            for (int64_t q = ref.ptr[i]; q < ref.ptr[i + 1]; q++)
                d[i * m + ref.col[q]] += ref.val[q], scale = fmax(scale, fabs(ref.val[q]));
            for (int64_t q = ac.ptr[i]; q < ac.ptr[i + 1]; q++) {
                d[i * m + ac.col[q]] -= ac.val[q];
                if (q > ac.ptr[i]) assert_true(ac.col[q - 1] < ac.col[q]);
            }
        }
        for (int64_t i = 0; i < m * m; i++)
            if (fabs(d[i]) > 1e-13 * scale)
                fail_msg("%d-point %lldx%lldx%lld: R A P differs from the SpGEMM's by %g of %g", c[k].pts,
                         (long long)f.nx, (long long)f.ny, (long long)f.nz, d[i], scale);
        /* the stencil of the coarse level is found on the coarse grid */
        GT_ASSERT_OK(gt_amg_grid_detect(&ac, &gi));
        assert_true(m < 2 || gi.g.nx * gi.g.ny * gi.g.nz == m);
        free(d);
        gt_csr_free(&a), gt_csr_free(&p), gt_csr_free(&rt), gt_csr_free(&ac), gt_csr_free(&ref);
    }
}

/* AMG-PCG with grid coarsening: the hierarchy, its -v line, and the
   iterations on Laplacians (2-D, 3-D, 27-point, odd sizes) and on a
   variable-coefficient one */
static void test_grid_pcg(void **st)
{
    (void)st;
    static const struct {
        int pts;
        int64_t nx, ny, nz;
        int maxit;
    } c[] = {{7, 40, 40, 40, 10}, {7, 37, 23, 19, 10}, {27, 20, 20, 20, 10}, {5, 200, 150, 1, 10}, {7, 48, 48, 48, 12}};
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        gt_csr a;
        GT_ASSERT_OK(gt_laplacian(c[k].pts, c[k].nx, c[k].ny, c[k].nz, &a));
        if (k == 4) { /* coefficients varying smoothly by a factor of 10 over the cube */
            for (int64_t i = 0; i < a.nrows; i++) {
                double off = 0;
                for (int64_t p = a.ptr[i]; p < a.ptr[i + 1]; p++) {
                    int64_t j = a.col[p], lo = i < j ? i : j;
                    if (j == i) continue;
                    double x = (double)(lo % 48) / 47;
                    a.val[p] *= pow(10.0, x);
                    off += fabs(a.val[p]);
                }
                for (int64_t p = a.ptr[i]; p < a.ptr[i + 1]; p++)
                    if (a.col[p] == i) a.val[p] = off * 1.0001;
            }
        }
        gt_precond_opts o;
        gt_precond_opts_init(&o);
        o.verbose = true;
        gt_precond pc;
        GT_ASSERT_OK(gt_amg_precond_cpu(&a, &o, &pc));
        const gt_amg *h = gt_amg_precond_hierarchy(&pc);
        assert_int_equal(h->lev[0].grid.nx, c[k].nx);
        assert_non_null(strstr(pc.summary, "coarsening grid"));
        assert_true(h->lev[h->nlevels - 1].a.nrows <= o.amg_coarse_size);
        for (int l = 0; l + 1 < h->nlevels; l++) assert_null(h->lev[l].agg);
        double err;
        int it = pcg_ones(&a, &pc, 100, &err);
        print_message("grid AMG-PCG %d-point %lldx%lldx%lld: %d levels, complexity %.2f, %d iterations, error %.1e\n",
                      c[k].pts, (long long)c[k].nx, (long long)c[k].ny, (long long)c[k].nz, pc.levels, pc.complexity,
                      it, err);
        assert_true(it <= c[k].maxit);
        assert_true(err < 1e-5);
        pc.destroy(pc.ctx);
        gt_csr_free(&a);
    }
}

/* The coarse LU path (nonsymmetric, not SPD) and bad input */
static void test_coarse_and_errors(void **st)
{
    (void)st;
    const double d[16] = {0, 2, 0, 1, 1, 0, 3, 0, 0, 1, 1, 1, 2, 0, 0, -1};
    gt_csr a;
    GT_ASSERT_OK(gt_csr_from_dense(4, 4, d, &a));
    double *f = NULL;
    int32_t *piv = NULL;
    GT_ASSERT_OK(gt_amg_coarse_factor(&a, &f, &piv));
    assert_non_null(piv); /* a_00 = 0: not Cholesky */
    double x[4] = {1, -2, 0.5, 3}, b[4], y[4];
    gt_csr_spmv(&a, x, b);
    gt_amg_coarse_solve(4, f, piv, b, y);
    for (int i = 0; i < 4; i++) assert_true(fabs(y[i] - x[i]) < 1e-13);
    free(f), free(piv);
    gt_csr_free(&a);
    /* singular */
    const double s[4] = {1, 1, 1, 1};
    GT_ASSERT_OK(gt_csr_from_dense(2, 2, s, &a));
    assert_int_equal(gt_amg_coarse_factor(&a, &f, &piv), GT_ERR_DATA);
    gt_csr_free(&a);
    /* zero diagonal: the row is named */
    gt_csr l;
    GT_ASSERT_OK(gt_laplacian(5, 10, 10, 1, &l));
    for (int64_t p = l.ptr[41]; p < l.ptr[42]; p++)
        if (l.col[p] == 41) l.val[p] = 0;
    gt_precond_opts o;
    gt_precond_opts_init(&o);
    gt_precond pc;
    assert_int_equal(gt_amg_precond_cpu(&l, &o, &pc), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "row 42"));
    gt_csr_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aggregates),          cmocka_unit_test(test_prolongator),
        cmocka_unit_test(test_galerkin),            cmocka_unit_test(test_vcycle_reduces_error),
        cmocka_unit_test(test_vcycle_symmetric),    cmocka_unit_test(test_pcg_40cubed),
        cmocka_unit_test(test_coarse_and_errors),   cmocka_unit_test(test_grid_detect),
        cmocka_unit_test(test_grid_galerkin),       cmocka_unit_test(test_grid_pcg),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
