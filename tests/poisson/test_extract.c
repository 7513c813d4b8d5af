/* The extraction's mesh is the canonical one of poisson.h, checked on the
 * CPU: vertices numbered by strictly increasing edge key, each on a crossed
 * edge of the Kuhn split at the stated interpolation (to the bit), every
 * vertex used, triangles in cell key order and each made of edges of its
 * cell, every undirected edge in exactly two triangles on closed inputs; the
 * marching-tetrahedra table cuts each tetrahedron between its inside and
 * outside corners with normals towards the outside; an iso outside chi's
 * range gives an empty mesh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/log.h"
#include "pr_testutil.h"

static double chi_at(const gt_pr_state *s, const uint32_t c[3])
{
    int D = s->oct.depth;
    double q[3];
    for (int a = 0; a < 3; a++) q[a] = ldexp((double)c[a], -D);
    return gt_pr_eval_levels(&s->oct, q, s->coef, 0, D);
}

static void check_canonical(const gt_pr_state *s, const gt_pr_params *p, int closed, const char *what)
{
    const int D = s->oct.depth;
    const uint32_t res = 1u << D;
    gt_pr_mesh m;
    memset(&m, 0, sizeof m);
    uint64_t *k = NULL;
    GT_ASSERT_OK(gt_pr_extract_mesh_keys_cpu(s, p, &m, &k));
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
        double va = chi_at(s, lo), vb = chi_at(s, up);
        assert_true((va < s->iso) != (vb < s->iso));
        double tt = (s->iso - va) / (vb - va);
        if (!(tt >= 0)) tt = 0;
        if (tt > 1) tt = 1;
        for (int a = 0; a < 3; a++) {
            double u = ldexp(lo[a] + tt * ((double)up[a] - lo[a]), -D);
            float want = (float)((u - 0.5) * s->side + s->center[a]);
            assert_true(m.xyz[3 * v + a] == want);
        }
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
    check_canonical(&s, &p, 1, "sphere");
    gt_pr_state_free(&s);
    pr_sample_torus(&g, n, 1.0, 0.4, x, nn);
    pr_solve_cpu(&in, 6, 1.1, &s, &p);
    check_canonical(&s, &p, 1, "torus");
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
    check_canonical(&s, &p, 1, "sphere with a hole");
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
    check_canonical(&s, &p, 0, "random points");
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}

static void test_iso_outside(void **state)
{
    (void)state;
    pr_check_iso_outside(gt_pr_extract_cpu, 24, 2000, 4);
}

/* each case cuts the tetrahedron's inside-outside edges only, all of them,
 * with normals (on the edge midpoints) towards the outside corners */
static void test_mt_table(void **state)
{
    (void)state;
    gt_pr_mt_case tab[6][16];
    gt_pr_mt_table(tab);
    for (int t = 0; t < 6; t++)
        for (int msk = 0; msk < 16; msk++) {
            const gt_pr_mt_case *c = &tab[t][msk];
            int in[8] = {0}, nin = 0;
            double cin[3] = {0, 0, 0}, cout[3] = {0, 0, 0};
            for (int k = 0; k < 4; k++) {
                int cc = gt_pr_kuhn_tet[t][k];
                in[cc] = (msk >> k) & 1;
                nin += in[cc];
            }
            for (int k = 0; k < 4; k++) {
                int cc = gt_pr_kuhn_tet[t][k];
                for (int a = 0; a < 3; a++) {
                    if (in[cc]) cin[a] += ((cc >> a) & 1) / (double)nin;
                    else cout[a] += ((cc >> a) & 1) / (double)(4 - nin);
                }
            }
            int want = nin == 0 || nin == 4 ? 0 : nin == 2 ? 2 : 1;
            assert_int_equal(c->ntri, want);
            int seen = 0; /* bit per distinct local edge used */
            for (int r = 0; r < c->ntri; r++) {
                double mid[3][3];
                for (int q = 0; q < 3; q++) {
                    int e = c->v[r][q], a0 = e & 7, b0 = a0 | e >> 3;
                    assert_int_equal(a0 & (e >> 3), 0);
                    assert_true((e >> 3) != 0);
                    int ina = -1, inb = -1;
                    for (int k = 0; k < 4; k++) {
                        if (gt_pr_kuhn_tet[t][k] == a0) ina = in[a0];
                        if (gt_pr_kuhn_tet[t][k] == b0) inb = in[b0];
                    }
                    assert_true(ina >= 0 && inb >= 0 && ina != inb);
                    for (int li = 0; li < 19; li++)
                        if (gt_pr_cell_edge[li] == e) seen |= 1 << li;
                    for (int a = 0; a < 3; a++) mid[q][a] = 0.5 * (((a0 >> a) & 1) + ((b0 >> a) & 1));
                }
                double u1[3], u2[3];
                for (int a = 0; a < 3; a++) { u1[a] = mid[1][a] - mid[0][a]; u2[a] = mid[2][a] - mid[0][a]; }
                double nrm[3] = {u1[1] * u2[2] - u1[2] * u2[1], u1[2] * u2[0] - u1[0] * u2[2], u1[0] * u2[1] - u1[1] * u2[0]};
                double dot = 0;
                for (int a = 0; a < 3; a++) dot += nrm[a] * (cout[a] - cin[a]);
                assert_true(dot > 0);
            }
            assert_int_equal(__builtin_popcount((unsigned)seen), nin * (4 - nin));
        }
}

int main(void)
{
    gt_set_verbosity(1); /* the extraction's counts (rounds, grown cells) in the log */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mt_table),    cmocka_unit_test(test_sphere_torus), cmocka_unit_test(test_hole),
        cmocka_unit_test(test_noisy),       cmocka_unit_test(test_iso_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
