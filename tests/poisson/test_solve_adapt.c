/* The adaptive solve's function set (pr_adapt.h, gt_pr_fn_active), on the
 * CPU:
 *  - the rule, checked against a search by cell coordinates: a node above
 *    the full depth is in the solve exactly when a node of its level within
 *    2 cells (gt_pr_find) has splatted data in its subtree; the functions
 *    left out keep coefficient 0;
 *  - points too sparse for the depth (a sphere thinning 40-fold at depth
 *    7) leave depth-D functions out on the sparse side and keep them on the
 *    dense side; the mesh stays closed and oriented, a sphere's topology,
 *    and no farther from the sphere than the dense solve's. (Thinning
 *    100-fold, as until every sample's screening weight became the same
 *    (poisson.h, gt_pr_screen_level), the sparse pole holds under one sample
 *    per level-5 cell, and the adaptive solve, which has no finer functions
 *    there, ends a little farther than the dense one: max 0.575 against
 *    0.524 cells, mean 0.026 against 0.025. RESULTS.md, 2026-11-29,
 *    eighteenth);
 *  - points dense enough for the depth keep every function: the solution
 *    equals the dense solve's bit for bit;
 *  - the mesh is as symmetric as the points: points symmetric under z -> -z
 *    about the cube's middle plane (a thin disk whose faces lie near cell
 *    boundaries, thinning 20-fold along x, so that part of it splats
 *    between depths D - 1 and D) give two faces equally far from their
 *    planes;
 *  - samples exactly on a cell boundary give data to the cells on both
 *    sides of theirs alike (gt_pr_splat_node: a share, not a non-zero
 *    weight). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "poisson/pr_adapt.h"
#include "pr_testutil.h"

static void solve(const gt_pr_input *in, int depth, int K, bool dense, gt_pr_state *s, gt_pr_params *p)
{
    pr_solve_cpu_kd(in, depth, 1.1, K, dense, s, p);
    assert_non_null(s->tree);
}

/* every node's GT_PR_T_FN against the search by coordinates; returns the
 * number of depth-D nodes left out */
static size_t check_rule(const gt_pr_state *s, int F)
{
    const gt_pr_octree *o = &s->oct;
    const int D = o->depth;
    size_t out_D = 0;
    for (int l = 0; l <= D; l++)
        for (size_t v = o->level_start[l]; v < o->level_start[l + 1]; v++) {
            int want = l <= F;
            if (!want) {
                uint32_t x, y, z;
                gt_pr_demorton(o->key[v], &x, &y, &z);
                for (int i = 0; i < 125 && !want; i++) {
                    int32_t u = gt_pr_find(o, l, (int64_t)x + i % 5 - 2, (int64_t)y + (i / 5) % 5 - 2, (int64_t)z + i / 25 - 2);
                    want = u >= 0 && (s->tree[u] & GT_PR_T_DATA);
                }
            }
            const int got = (s->tree[v] & GT_PR_T_FN) != 0;
            if (got != want) print_message("level %d node %zu: in the solve %d, by the rule %d\n", l, v, got, want);
            assert_int_equal(got, want);
            if (!got) {
                assert_true(s->coef[v] == 0.0);
                out_D += l == D;
            }
        }
    return out_D;
}

static void test_sparse_sphere(void **state)
{
    (void)state;
    const size_t n = 40000;
    const int D = 7;
    gt_rng g = {32};
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0.1, -0.3, 0.2};
    pr_sample_sphere_uneven(&g, n, 1.0, c, 40.0, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    for (int K = 1; K <= 2; K++) {
        gt_pr_state sa, sd;
        gt_pr_params pa, pd;
        solve(&in, D, K, false, &sa, &pa);
        solve(&in, D, K, true, &sd, &pd);
        const size_t nD = sa.oct.level_start[D + 1] - sa.oct.level_start[D];
        const size_t outD = check_rule(&sa, gt_pr_full_depth(&pa));
        print_message("--coarse-levels %d: %zu of %zu depth-%d functions left out\n", K, outD, nD, D);
        /* the sparse side leaves them out, the dense side keeps them */
        assert_true(outD > nD / 10);
        assert_true(outD < nD);
        /* the dense solve keeps all */
        for (size_t v = 0; v < sd.oct.nnodes; v++) assert_true(sd.tree[v] & GT_PR_T_FN);
        gt_pr_mesh ma, md;
        memset(&ma, 0, sizeof ma);
        memset(&md, 0, sizeof md);
        GT_ASSERT_OK(gt_pr_extract_cpu(&sa, &pa, &ma));
        GT_ASSERT_OK(gt_pr_extract_cpu(&sd, &pd, &md));
        long euler;
        assert_int_equal(pr_check_closed_manifold(&ma, &euler), 0);
        assert_int_equal(euler, 2);
        double mean_a, max_a, mean_d, max_d;
        pr_sphere_dist(&ma, c, 1.0, &mean_a, &max_a);
        pr_sphere_dist(&md, c, 1.0, &mean_d, &max_d);
        const double cell = 2.2 / ldexp(1.0, D); /* the cube's side (scale 1.1) over 2^D, about */
        print_message("adaptive solve: %zu vertices, distance to the sphere mean %.3g max %.3g cells; dense solve: "
                      "%zu vertices, mean %.3g max %.3g cells\n",
                      ma.nvert, mean_a / cell, max_a / cell, md.nvert, mean_d / cell, max_d / cell);
        assert_true(mean_a <= mean_d * 1.05 + 1e-12);
        assert_true(max_a <= max_d * 1.05 + 1e-12);
        gt_pr_mesh_free(&ma);
        gt_pr_mesh_free(&md);
        gt_pr_state_free(&sa);
        gt_pr_state_free(&sd);
    }
    free(x);
    free(nn);
}

static void test_dense_sphere(void **state)
{
    (void)state;
    const size_t n = 40000;
    const int D = 6;
    gt_rng g = {33};
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0, 0, 0};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_state sa, sd;
    gt_pr_params pa, pd;
    solve(&in, D, 1, false, &sa, &pa);
    solve(&in, D, 1, true, &sd, &pd);
    assert_int_equal(check_rule(&sa, gt_pr_full_depth(&pa)), 0);
    assert_int_equal(sa.oct.nnodes, sd.oct.nnodes);
    for (size_t v = 0; v < sa.oct.nnodes; v++) {
        assert_true(sa.tree[v] & GT_PR_T_FN);
        assert_true(sa.coef[v] == sd.coef[v]);
    }
    assert_true(sa.iso == sd.iso);
    gt_pr_state_free(&sa);
    gt_pr_state_free(&sd);
    free(x);
    free(nn);
}

/* n points (n even) of a disk of radius R and thickness 2 rho about the
 * plane z = 0, in pairs mirrored in z; caps and rounded rim by area; the
 * density grows `ratio`-fold from -x to +x */
static void sample_disk_mirrored(gt_rng *g, size_t n, double R, double rho, double ratio, float *xyz, float *nrm)
{
    const double a_cap = M_PI * R * R, a_rim = 2 * M_PI * rho * (M_PI * R + 2 * rho);
    size_t i = 0;
    while (i < n) {
        double p[3], d[3];
        const double ph = gt_rng_range(g, 0, 2 * M_PI);
        if (gt_rng_uniform(g) * (2 * a_cap + a_rim) < 2 * a_cap) {
            const double q = R * sqrt(gt_rng_uniform(g));
            p[0] = q * cos(ph), p[1] = q * sin(ph), p[2] = rho;
            d[0] = 0, d[1] = 0, d[2] = 1;
        } else {
            const double th = gt_rng_range(g, -M_PI / 2, M_PI / 2);
            if (gt_rng_uniform(g) * (R + rho) > R + rho * cos(th)) continue;
            d[0] = cos(th) * cos(ph), d[1] = cos(th) * sin(ph), d[2] = sin(th);
            p[0] = R * cos(ph) + rho * d[0], p[1] = R * sin(ph) + rho * d[1], p[2] = rho * d[2];
        }
        if (gt_rng_uniform(g) > pow(ratio, (p[0] / (R + rho) - 1) / 2)) continue;
        for (int s = 0; s < 2; s++, i++)
            for (int a = 0; a < 3; a++) {
                xyz[3 * i + a] = (float)(a == 2 && s ? -p[a] : p[a]);
                nrm[3 * i + a] = (float)(a == 2 && s ? -d[a] : d[a]);
            }
    }
}

/* A disk 2 rho = 8 finest cells thick, its points in pairs mirrored in z
 * (sample_disk_mirrored, density 20-fold along x): the two faces' mean
 * offsets from their planes (outward positive, in cells, the vertices away
 * from the rim, by fifths of x) must be alike, as the points are mirror
 * images. The cube (scale 1.1 of the longest side, about 2 (R + rho),
 * centred on the points' box) puts the faces 4 cells from the cube's centre
 * plane. With `on_boundaries`, four more points at the rim's extremes in x
 * and y make that side exact and the faces lie exactly on cell boundaries
 * (every cap sample at z cell 68.0 or 60.0 of 128): floor alone puts the
 * top face's samples in the cells outside it and the bottom face's in the
 * cells inside, and the octree's depth-D nodes about them differ
 * (RESULTS.md, 2026-11-29, twenty-third); the normal's side of the
 * boundary (boundary_tie in poisson.c) keeps them mirror images. Without
 * them the side comes from the sampled rim and the faces lie within 2e-4
 * cells of the boundaries, not on them. */
static void mirrored_disk(bool on_boundaries)
{
    const size_t n = 60000, extra = on_boundaries ? 4 : 0;
    const int D = 7;
    const double R = 1.0, k = 8.0 * 1.1 * 2 / ldexp(1.0, D), rho = k * R / (2 - k), cell = 1.1 * 2 * (R + rho) / ldexp(1.0, D);
    gt_rng g = {34};
    float *x = malloc(12 * (n + extra)), *nn = malloc(12 * (n + extra));
    sample_disk_mirrored(&g, n, R, rho, 20.0, x, nn);
    for (size_t e = 0; e < extra; e++) {
        const int a = (int)(e / 2), sg = e % 2 ? -1 : 1;
        for (int b = 0; b < 3; b++) {
            x[3 * (n + e) + b] = b == a ? (float)(sg * (R + rho)) : 0.0f;
            nn[3 * (n + e) + b] = b == a ? (float)sg : 0.0f;
        }
    }
    gt_pr_input in = {n + extra, x, nn, NULL};
    if (on_boundaries) { /* the caps' samples in unit coordinates, as normalised */
        gt_pr_params q;
        gt_pr_params_default(&q);
        q.depth = D;
        gt_pr_points pts;
        GT_ASSERT_OK(gt_pr_points_make(&in, &q, NULL, &pts));
        size_t top = 0, bottom = 0;
        for (size_t i = 0; i < pts.m; i++) {
            if (fabsf(pts.nrm[3 * i + 2]) != 1.0f) continue;
            const double c = ldexp(pts.u[3 * i + 2], D);
            top += c == 68.0, bottom += c < 60.0 && c > 60.0 - 1e-5;
        }
        print_message("cap samples: %zu exactly on z cell boundary 68, %zu one float below 60\n", top, bottom);
        assert_true(top > n / 4 && bottom == top);
        gt_pr_points_free(&pts);
    }
    gt_pr_state s;
    gt_pr_params p;
    solve(&in, D, 1, false, &s, &p);
    gt_pr_mesh m;
    memset(&m, 0, sizeof m);
    GT_ASSERT_OK(gt_pr_extract_cpu(&s, &p, &m));
    long euler;
    assert_int_equal(pr_check_closed_manifold(&m, &euler), 0);
    double off[2][5] = {{0}}, worst = 0;
    size_t cnt[2][5] = {{0}};
    for (size_t v = 0; v < m.nvert; v++) {
        const double px = m.xyz[3 * v], py = m.xyz[3 * v + 1], pz = m.xyz[3 * v + 2];
        if (hypot(px, py) > R - 3 * cell) continue;
        const int side = pz < 0, fifth = (int)((px + R) / (2 * R) * 5);
        if (fifth < 0 || fifth > 4) continue;
        off[side][fifth] += ((side ? -pz : pz) - rho) / cell;
        cnt[side][fifth]++;
    }
    for (int f = 0; f < 5; f++) {
        assert_true(cnt[0][f] > 0 && cnt[1][f] > 0);
        const double top = off[0][f] / (double)cnt[0][f], bottom = off[1][f] / (double)cnt[1][f];
        print_message("x fifth %d: top face %+.5f, bottom face %+.5f cells (%zu, %zu vertices)\n", f, top, bottom,
                      cnt[0][f], cnt[1][f]);
        if (fabs(top - bottom) > worst) worst = fabs(top - bottom);
    }
    print_message("faces' offsets differ by %.2g cells at most\n", worst);
    assert_true(worst < 1e-3);
    gt_pr_mesh_free(&m);
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}

static void test_mirrored_disk(void **state)
{
    (void)state;
    mirrored_disk(false);
}

static void test_mirrored_disk_on_boundaries(void **state)
{
    (void)state;
    mirrored_disk(true);
}

/* Samples exactly on a cell boundary (a flat patch at z = 1/2 in unit
 * coordinates, the bottom face of the depth-D cells of z index 2^(D-1)):
 * a node has data when a sample of one of its 27 cells has a share at its
 * level, also where the sample's B-spline weight there is 0 (the nodes one
 * cell above the samples' cells), so the cells just below and just above
 * the samples' cells have data alike; with data from non-zero splat
 * weights only, the nodes above would have none. */
static void test_data_on_boundary(void **state)
{
    (void)state;
    const int D = 6;
    const size_t m = 4000;
    gt_rng g = {34};
    gt_pr_points pts;
    memset(&pts, 0, sizeof pts);
    pts.m = m;
    pts.u = malloc(12 * m);
    pts.nrm = malloc(12 * m);
    pts.side = 1.0;
    for (size_t i = 0; i < m; i++) {
        pts.u[3 * i] = (float)(0.3 + 0.4 * gt_rng_uniform(&g));
        pts.u[3 * i + 1] = (float)(0.3 + 0.4 * gt_rng_uniform(&g));
        pts.u[3 * i + 2] = 0.5f;
        pts.nrm[3 * i] = pts.nrm[3 * i + 1] = 0.0f;
        pts.nrm[3 * i + 2] = 1.0f;
    }
    gt_pr_params p;
    gt_pr_params_default(&p);
    p.depth = D;
    p.coarse_levels = 1; /* the tree is kept (gt_pr_state.tree) */
    gt_pr_state s;
    GT_ASSERT_OK(gt_pr_prepare_cpu(&pts, &p, NULL, &s));
    GT_ASSERT_OK(gt_pr_solve_cpu(&s, &p, NULL));
    const gt_pr_octree *o = &s.oct;
    const uint32_t zc = 1u << (D - 1); /* the samples' cells */
    size_t below = 0, above = 0, at = 0;
    assert_non_null(s.tree);
    for (size_t v = o->level_start[D]; v < o->level_start[D + 1]; v++) {
        uint32_t x, y, z;
        gt_pr_demorton(o->key[v], &x, &y, &z);
        if (!(s.tree[v] & GT_PR_T_DATA)) continue;
        below += z == zc - 1;
        at += z == zc;
        above += z == zc + 1;
        assert_true(z + 1 >= zc && z <= zc + 1);
    }
    print_message("depth-%d nodes with data: %zu below the samples' cells, %zu at, %zu above\n", D, below, at, above);
    assert_true(at > 0);
    assert_int_equal(below, at);
    assert_int_equal(above, at);
    gt_pr_state_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sparse_sphere),
        cmocka_unit_test(test_dense_sphere),
        cmocka_unit_test(test_mirrored_disk),
        cmocka_unit_test(test_mirrored_disk_on_boundaries),
        cmocka_unit_test(test_data_on_boundary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
