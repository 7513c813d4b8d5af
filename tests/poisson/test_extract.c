/* The extraction's mesh is the canonical one of poisson.h, checked on the
 * CPU: vertices numbered by strictly increasing edge key, each on a crossed
 * cube edge at the root of chi - iso (chi evaluated there is iso up to
 * rounding: the quadratic along the edge is exact) and at the stated position
 * (to the bit), every vertex used, triangles in cell key order and each made
 * of edges of its cell, every undirected edge in exactly two triangles with
 * consistent orientation on closed inputs, the Euler characteristic of the
 * surface's topology and a positive enclosed volume (normals outward); the
 * case table cuts exactly the crossed edges; an iso outside chi's range gives
 * an empty mesh. These are the uniform mesh's (every depth-D cell,
 * p->uniform_mesh); test_adapt.c checks the coarse blocks'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/log.h"
#include "mc/mc.h"
#include "poisson/pr_mc.h"
#include "pr_testutil.h"

static double chi_at(const gt_pr_state *s, const uint32_t c[3])
{
    int D = s->oct.depth;
    double q[3];
    for (int a = 0; a < 3; a++) q[a] = ldexp((double)c[a], -D);
    return gt_pr_eval_levels(&s->oct, q, s->coef, 0, D);
}

/* chi at fraction t of the edge lo -> up */
static double chi_on_edge(const gt_pr_state *s, const uint32_t lo[3], const uint32_t up[3], double t)
{
    int D = s->oct.depth;
    double q[3];
    for (int a = 0; a < 3; a++) q[a] = ldexp(lo[a] + t * ((double)up[a] - lo[a]), -D);
    return gt_pr_eval_levels(&s->oct, q, s->coef, 0, D);
}

/* the volume enclosed by a closed mesh (divergence theorem; > 0 when the
 * normals point out) */
static double signed_volume(const gt_pr_mesh *m)
{
    double v = 0;
    for (size_t t = 0; t < m->ntri; t++) {
        const float *a = m->xyz + 3 * m->tri[3 * t], *b = m->xyz + 3 * m->tri[3 * t + 1],
                    *c = m->xyz + 3 * m->tri[3 * t + 2];
        v += ((double)a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) -
              (double)a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
              (double)a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0])) / 6.0;
    }
    return v;
}

/* closed: 0 open allowed, else the mesh must be closed with Euler
 * characteristic `euler_want` and enclose about `vol_want` (within 10%) */
static void check_canonical(const gt_pr_state *s, const gt_pr_params *p, int closed, long euler_want,
                            double vol_want, const char *what)
{
    const int D = s->oct.depth;
    const uint32_t res = 1u << D;
    gt_pr_mesh m;
    memset(&m, 0, sizeof m);
    uint64_t *k = NULL;
    /* the uniform mesh (no coarse blocks: test_adapt.c checks those) */
    gt_pr_params pu = *p;
    pu.uniform_mesh = true;
    GT_ASSERT_OK(gt_pr_extract_mesh_keys_cpu(s, &pu, &m, &k));
    print_message("%s: depth %d, %zu vertices, %zu triangles\n", what, D, m.nvert, m.ntri);
    assert_true(m.ntri > 0);
    /* vertices: increasing keys, crossed edges, the stated position */
    for (size_t v = 0; v < m.nvert; v++) {
        if (v > 0) assert_true(k[v - 1] < k[v]);
        int mask = (int)(k[v] & 7);
        assert_true(mask != 0);
        uint32_t lo[3], up[3];
        gt_pr_demorton(k[v] >> 3, lo, lo + 1, lo + 2);
        for (int a = 0; a < 3; a++) {
            up[a] = lo[a] + ((mask >> a) & 1);
            assert_true(up[a] <= res);
        }
        assert_int_equal(__builtin_popcount((unsigned)mask), 1); /* a cube edge */
        double va = chi_at(s, lo), vb = chi_at(s, up);
        assert_true((va < s->iso) != (vb < s->iso));
        double tt = gt_pr_edge_root(va, chi_on_edge(s, lo, up, 0.5), vb, s->iso);
        /* the root: chi there is iso (to rounding of the evaluation) */
        double g = chi_on_edge(s, lo, up, tt) - s->iso;
        if (fabs(g) > 1e-9 * fabs(vb - va) + 1e-13) {
            print_message("vertex %zu: chi - iso = %g at t = %.17g (ends %g %g)\n", v, g, tt, va - s->iso,
                          vb - s->iso);
            fail();
        }
        float want[3];
        gt_pr_edge_vertex(lo, up, tt, D, s->side, s->center, want);
        for (int a = 0; a < 3; a++) assert_true(m.xyz[3 * v + a] == want[a]);
    }
    /* triangles: cell of a triangle = per-axis least lower end of its edges
     * (corner 0 of the cell is an end of one of them); non-decreasing keys,
     * and every edge is one of the cell's 19 */
    uint8_t *used = calloc(m.nvert ? m.nvert : 1, 1);
    uint64_t prev = 0;
    for (size_t t = 0; t < m.ntri; t++) {
        uint32_t lo[3][3], cell[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
        for (int j = 0; j < 3; j++) {
            int32_t v = m.tri[3 * t + j];
            assert_true(v >= 0 && (size_t)v < m.nvert);
            used[v] = 1;
            gt_pr_demorton(k[v] >> 3, lo[j], lo[j] + 1, lo[j] + 2);
            for (int a = 0; a < 3; a++)
                if (lo[j][a] < cell[a]) cell[a] = lo[j][a];
        }
        for (int j = 0; j < 3; j++) {
            int a_loc = 0, mask = (int)(k[m.tri[3 * t + j]] & 7);
            for (int a = 0; a < 3; a++) {
                uint32_t d = lo[j][a] - cell[a];
                assert_true(d <= 1);
                a_loc |= (int)d << a;
            }
            assert_int_equal(a_loc & mask, 0);
        }
        uint64_t ck = gt_pr_morton(cell[0], cell[1], cell[2]);
        assert_true(ck >= prev);
        prev = ck;
    }
    for (size_t v = 0; v < m.nvert; v++) assert_true(used[v]);
    free(used);
    if (closed) {
        long euler;
        assert_int_equal(pr_check_closed_manifold(&m, &euler), 0);
        double vol = signed_volume(&m);
        print_message("%s: Euler characteristic %ld, volume %.4g (expected about %.4g)\n", what, euler, vol, vol_want);
        assert_int_equal(euler, euler_want);
        assert_true(fabs(vol - vol_want) <= 0.1 * vol_want);
    }
    free(k);
    gt_pr_mesh_free(&m);
}

static void test_sphere_torus(void **state)
{
    (void)state;
    gt_rng g = {21};
    size_t n = 6000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0.2, -0.4, 1.0};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_state s;
    gt_pr_params p;
    pr_solve_cpu(&in, 5, 1.1, &s, &p);
    check_canonical(&s, &p, 1, 2, 4.0 / 3.0 * M_PI, "sphere");
    gt_pr_state_free(&s);
    pr_sample_torus(&g, n, 1.0, 0.4, x, nn);
    pr_solve_cpu(&in, 6, 1.1, &s, &p);
    check_canonical(&s, &p, 1, 0, 2 * M_PI * M_PI * 1.0 * 0.4 * 0.4, "torus");
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}

/* a sphere with a cap missing: the surface leaves the fine nodes' band and
 * the cells must grow to close it */
static void test_hole(void **state)
{
    (void)state;
    gt_rng g = {22};
    size_t n = 6000, m = 0;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0, 0, 0};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    for (size_t i = 0; i < n; i++)
        if (x[3 * i + 2] <= 0.7) {
            memmove(x + 3 * m, x + 3 * i, 12);
            memmove(nn + 3 * m, nn + 3 * i, 12);
            m++;
        }
    gt_pr_input in = {m, x, nn, NULL};
    gt_pr_state s;
    gt_pr_params p;
    pr_solve_cpu(&in, 5, 1.4, &s, &p);
    /* closed over the hole somewhere between the cut plane and the sphere */
    check_canonical(&s, &p, 1, 2, 4.0 / 3.0 * M_PI, "sphere with a hole");
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}

/* a thin torus (tube radius about a cell): chi's level set has saddles on
 * cell faces, so faces with diagonal inside corners (marching cubes'
 * ambiguous case) occur; the mesh must still be closed, manifold and
 * oriented outward (its Euler characteristic even: closed and orientable) */
static void test_ambiguous(void **state)
{
    (void)state;
    gt_rng g = {27};
    size_t n = 8000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    pr_sample_torus(&g, n, 1.0, 0.08, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_state s;
    gt_pr_params p;
    pr_solve_cpu(&in, 5, 1.1, &s, &p);
    /* ambiguous faces of the grid (inside: chi < iso) */
    const uint32_t r = 1u << s.oct.depth, r1 = r + 1;
    uint8_t *ins = malloc((size_t)r1 * r1 * r1);
    for (uint32_t k = 0; k < r1; k++)
        for (uint32_t j = 0; j < r1; j++)
            for (uint32_t i = 0; i < r1; i++) {
                uint32_t cc[3] = {i, j, k};
                ins[((size_t)k * r1 + j) * r1 + i] = chi_at(&s, cc) < s.iso;
            }
    long amb = 0;
    for (int a = 0; a < 3; a++)
        for (uint32_t k = 0; k < r1; k++)
            for (uint32_t j = 0; j < r1; j++)
                for (uint32_t i = 0; i < r1; i++) {
                    uint32_t q[3] = {i, j, k};
                    int u = a == 0 ? 1 : 0, v = a == 2 ? 1 : 2;
                    if (q[u] + 1 >= r1 || q[v] + 1 >= r1) continue;
                    int f[4];
                    for (int w = 0; w < 4; w++) {
                        uint32_t t[3] = {q[0], q[1], q[2]};
                        t[u] += w & 1;
                        t[v] += w >> 1;
                        f[w] = ins[((size_t)t[2] * r1 + t[1]) * r1 + t[0]];
                    }
                    amb += f[0] == f[3] && f[1] == f[2] && f[0] != f[1];
                }
    free(ins);
    print_message("thin torus: %ld ambiguous faces in the grid\n", amb);
    assert_true(amb > 0);
    gt_pr_mesh m;
    memset(&m, 0, sizeof m);
    GT_ASSERT_OK(gt_pr_extract_mesh_cpu(&s, &p, &m));
    long euler;
    assert_int_equal(pr_check_closed_manifold(&m, &euler), 0);
    double vol = signed_volume(&m);
    print_message("thin torus: %zu vertices, Euler characteristic %ld, volume %.4g (the torus %.4g)\n", m.nvert,
                  euler, vol, 2 * M_PI * M_PI * 0.08 * 0.08);
    assert_true(vol > 0);
    assert_true(euler % 2 == 0);
    gt_pr_mesh_free(&m);
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}

/* noisy points and normals: no closedness asserted (the surface may meet
 * the cube's boundary) */
static void test_noisy(void **state)
{
    (void)state;
    gt_rng g = {23};
    size_t n = 3000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    for (size_t i = 0; i < 3 * n; i++) {
        x[i] = (float)gt_rng_range(&g, -1, 1);
        nn[i] = (float)gt_rng_range(&g, -1, 1);
    }
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_state s;
    gt_pr_params p;
    pr_solve_cpu(&in, 4, 1.1, &s, &p);
    check_canonical(&s, &p, 0, 0, 0, "random points");
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}

static void test_iso_outside(void **state)
{
    (void)state;
    pr_check_iso_outside(gt_pr_extract_cpu, 24, 2000, 4);
}

/* the marching cubes table as the extraction reads it: every case's
 * triangles use crossed edges only and every crossed edge (each in a
 * triangle), no case needs the fallback, and a cube edge's local code names
 * the edge of mc_math.h's numbering (lower corner, one axis) */
static void test_mc_cases(void **state)
{
    (void)state;
    const gt_mc_table *T = gt_mc_table_get();
    assert_int_equal(T->bad_cases, 0);
    for (int e = 0; e < 12; e++) {
        int code = gt_pr_mc_edge_code(e), ax;
        unsigned o[3];
        gt_mc_edge_start(e, &ax, &o[0], &o[1], &o[2]);
        assert_int_equal(code >> 3, 1 << ax);
        assert_int_equal(code & 7, (int)(o[0] | o[1] << 1 | o[2] << 2));
        assert_int_equal((code & 7) & (code >> 3), 0);
    }
    for (int m = 0; m < 256; m++) {
        unsigned crossed = 0, used = 0;
        for (int e = 0; e < 12; e++)
            if (gt_pr_edge_crossed(m, gt_pr_mc_edge_code(e))) crossed |= 1u << e;
        for (int r = 0; r < T->ntri[m]; r++)
            for (int q = 0; q < 3; q++) used |= 1u << T->tri[m][3 * r + q];
        assert_int_equal(used, crossed);
        assert_int_equal(T->ntri[m] == 0, m == 0 || m == 255);
    }
}

/* chi is one quadratic along a depth-D edge (the B-splines' knots are on
 * the grid points): the quadratic through the ends and the middle predicts
 * chi at a quarter and three quarters, on edges of fine and grown cells */
static void test_edge_quadratic(void **state)
{
    (void)state;
    gt_rng g = {25};
    size_t n = 4000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0, 0, 0};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_state s;
    gt_pr_params p;
    pr_solve_cpu(&in, 5, 1.3, &s, &p);
    const uint32_t res = 1u << s.oct.depth;
    double worst = 0, scale = 0;
    for (int k = 0; k < 3000; k++) {
        uint32_t lo[3], up[3];
        int ax = k % 3;
        for (int a = 0; a < 3; a++) lo[a] = (uint32_t)gt_rng_range(&g, 0, a == ax ? res - 1 : res);
        for (int a = 0; a < 3; a++) up[a] = lo[a] + (a == ax);
        double v0 = chi_on_edge(&s, lo, up, 0), vm = chi_on_edge(&s, lo, up, 0.5), v1 = chi_on_edge(&s, lo, up, 1);
        for (int h = 1; h <= 3; h += 2) {
            double t = 0.25 * h;
            double qd = v0 * (1 - t) * (1 - 2 * t) + vm * 4 * t * (1 - t) + v1 * t * (2 * t - 1);
            double e = fabs(chi_on_edge(&s, lo, up, t) - qd);
            if (e > worst) worst = e;
            if (fabs(v1 - v0) > scale) scale = fabs(v1 - v0);
        }
    }
    print_message("quadratic along edges: worst error %.3g, largest change along an edge %.3g\n", worst, scale);
    assert_true(scale > 0);
    assert_true(worst <= 1e-12 * scale + 1e-14);
    /* and the root on a made-up quadratic: g(t) = (t - 0.3)(t + 2) */
    double r = gt_pr_edge_root((0 - 0.3) * (0 + 2), (0.5 - 0.3) * (0.5 + 2), (1 - 0.3) * (1 + 2), 0.0);
    assert_true(fabs(r - 0.3) <= 1e-15);
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}

/* the iso-value is the plain mean of chi over the points; PoissonRecon's
 * rule (the points grouped by their depth-D cell, here by sorting cell keys,
 * one sample per cell at the points' mean weighted by their number) gives
 * another value: on a curved surface a cell's mean lies off the surface
 * (pr_iso.h) */
typedef struct { uint64_t key; uint32_t i; } pr_pt_cell;
static int pt_cell_cmp(const void *a, const void *b)
{
    const pr_pt_cell *x = a, *y = b;
    return x->key != y->key ? (x->key > y->key) - (x->key < y->key) : (x->i > y->i) - (x->i < y->i);
}
static void test_iso_samples(void **state)
{
    (void)state;
    gt_rng g = {26};
    size_t n = 5000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    pr_sample_torus(&g, n, 1.0, 0.4, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_state s;
    gt_pr_params p;
    pr_solve_cpu(&in, 5, 1.1, &s, &p);
    const int D = s.oct.depth;
    size_t N = s.oct.npts;
    pr_pt_cell *pc = malloc(N * sizeof *pc);
    for (size_t k = 0; k < N; k++) {
        uint32_t cc[3];
        for (int a = 0; a < 3; a++) cc[a] = (uint32_t)floor(ldexp((double)s.u[3 * k + a], D));
        pc[k].key = gt_pr_morton(cc[0], cc[1], cc[2]);
        pc[k].i = (uint32_t)k;
    }
    qsort(pc, N, sizeof *pc, pt_cell_cmp);
    double sum = 0, plain = 0;
    size_t cells = 0;
    for (size_t k = 0; k < N;) {
        size_t j = k;
        double q[3] = {0, 0, 0};
        while (j < N && pc[j].key == pc[k].key) {
            for (int a = 0; a < 3; a++) q[a] += s.u[3 * pc[j].i + a];
            j++;
        }
        for (int a = 0; a < 3; a++) q[a] /= (double)(j - k);
        sum += (double)(j - k) * gt_pr_eval(&s, q);
        cells++;
        k = j;
    }
    for (size_t k = 0; k < N; k++) {
        double q[3] = {s.u[3 * k], s.u[3 * k + 1], s.u[3 * k + 2]};
        plain += gt_pr_eval(&s, q);
    }
    double leafmeans = sum / (double)N;
    plain /= (double)N;
    print_message("iso %.12g, plain mean over points %.12g, at the cells' means (%zu cells) %.12g\n", s.iso, plain,
                  cells, leafmeans);
    assert_true(cells < N);
    assert_true(fabs(s.iso - plain) <= 1e-12 * fabs(plain));
    assert_true(fabs(s.iso - leafmeans) > 1e-9 * fabs(plain));
    free(pc);
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}

int main(void)
{
    gt_set_verbosity(1); /* the extraction's counts (rounds, grown cells) in the log */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mc_cases), cmocka_unit_test(test_edge_quadratic), cmocka_unit_test(test_sphere_torus),
        cmocka_unit_test(test_hole), cmocka_unit_test(test_ambiguous),     cmocka_unit_test(test_noisy),          cmocka_unit_test(test_iso_outside),
        cmocka_unit_test(test_iso_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
