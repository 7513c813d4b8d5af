/* GPU vs CPU: the same octree (keys, links, neighbours, point ranges and
 * order, exactly) on random clustered points at 32-bit (depth <= 10) and
 * 64-bit (depth 11, 12) key depths and on the bunny; then the whole
 * reconstruction on both devices (see compare_recon: the same chi and mesh
 * when solved to convergence, an equally good chi with the default solver,
 * the same functions left out of the adaptive solve);
 * the GPU extraction
 * (gt_pr_extract_cuda) against the CPU's (gt_pr_extract_cpu) from one
 * CPU-solved state: the same vertex count, the same triangles in the same
 * order, positions within 1e-6 of the cube's side, on spheres, a torus, a
 * thin torus (marching cubes' ambiguous faces), noisy points, a sphere with a hole (growth over many rounds), the bunny,
 * and an iso outside chi's range (empty mesh); and the whole pipeline on the
 * GPU gives a closed mesh. Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/ply.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_gpu.h"
#include "poisson/pr_adapt.h"
#include "pr_testutil.h"

static float *random_points(gt_rng *g, size_t n)
{
    float *u = malloc(3 * n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        /* a noisy shell: a surface-like set, as in use */
        double z = gt_rng_range(g, -1, 1), ph = gt_rng_range(g, 0, 6.283185307), s = sqrt(1 - z * z);
        double r = 0.35 + 0.01 * gt_rng_uniform(g);
        double d[3] = {s * cos(ph), s * sin(ph), z};
        for (int a = 0; a < 3; a++) u[3 * i + a] = (float)(0.5 + r * d[a]);
    }
    return u;
}

static void same_octree(const gt_pr_octree *a, const gt_pr_octree *b)
{
    assert_int_equal(a->nnodes, b->nnodes);
    assert_int_equal(a->npts, b->npts);
    for (int l = 0; l <= a->depth + 1; l++) assert_int_equal(a->level_start[l], b->level_start[l]);
    size_t t = a->nnodes;
    assert_memory_equal(a->key, b->key, t * sizeof(uint64_t));
    assert_memory_equal(a->parent, b->parent, t * sizeof(int32_t));
    assert_memory_equal(a->child, b->child, t * sizeof(int32_t));
    assert_memory_equal(a->nbr, b->nbr, 27 * t * sizeof(int32_t));
    assert_memory_equal(a->pt_start, b->pt_start, t * sizeof(uint32_t));
    assert_memory_equal(a->pt_count, b->pt_count, t * sizeof(uint32_t));
    assert_memory_equal(a->order, b->order, a->npts * sizeof(uint32_t));
}

static void test_octree_same(void **state)
{
    (void)state;
    gt_rng g = {77};
    int depths[] = {3, 6, 9, 10, 11, 12, 6};
    int full[] = {0, 5, 5, 2, 5, 4, 6};
    size_t ns[] = {1000, 20000, 100000, 300000, 300000, 200000, 5};
    for (int t = 0; t < 7; t++) {
        float *u = random_points(&g, ns[t]);
        gt_pr_octree c, d;
        GT_ASSERT_OK(gt_pr_octree_build_cpu(u, ns[t], depths[t], full[t], &c));
        GT_ASSERT_OK(gt_pr_octree_build_cuda(u, ns[t], depths[t], full[t], &d, NULL));
        print_message("depth %d, %zu points: %zu nodes\n", depths[t], ns[t], c.nnodes);
        same_octree(&c, &d);
        gt_pr_octree_free(&c);
        gt_pr_octree_free(&d);
        free(u);
    }
}

/* the extraction's coarse blocks of a solved state (leaves above depth D) */
static size_t count_coarse(const gt_pr_state *s)
{
    if (!s->tree) return 0;
    size_t n = 0;
    for (size_t v = 0; v < s->oct.nnodes; v++) n += (s->tree[v] & GT_PR_T_LEAF) != 0;
    return n;
}

/* largest |a - b| over the nodes */
static double max_diff(const double *a, const double *b, size_t n)
{
    double e = 0;
    for (size_t v = 0; v < n; v++)
        if (fabs(a[v] - b[v]) > e) e = fabs(a[v] - b[v]);
    return e;
}

static void solve_both(const gt_pr_input *in, const gt_pr_params *p, gt_pr_state *sc, gt_pr_state *sg)
{
    gt_pr_points pc, pg;
    GT_ASSERT_OK(gt_pr_points_make(in, p, NULL, &pc));
    GT_ASSERT_OK(gt_pr_prepare_cpu(&pc, p, NULL, sc));
    GT_ASSERT_OK(gt_pr_solve_cpu(sc, p, NULL));
    GT_ASSERT_OK(gt_pr_points_make(in, p, NULL, &pg));
    GT_ASSERT_OK(gt_pr_prepare_cuda(&pg, p, NULL, sg));
    same_octree(&sc->oct, &sg->oct);
}

/* The GPU sums in atomics (dot products, point scatters), so its rounding
 * differs from the CPU's and from run to run. Solved to convergence (CG,
 * relative residual 1e-10 per level) both must give the same chi (1e-6 of
 * the largest coefficient) and the same mesh. With the default solver (24
 * CG iterations per level, not converged) the two iterates drift apart by
 * what the iterations leave unsolved (observed on the H100: 5e-5 to 1.1e-3
 * of the largest coefficient between runs), so there the GPU must be as
 * good an approximation as the CPU: no farther from the converged chi than
 * 3x the CPU's distance (+1e-4 of the largest), and the same iso within
 * 1e-5. */
static void compare_recon(const gt_pr_input *in, int depth, int full_depth)
{
    gt_pr_params p;
    gt_pr_params_default(&p);
    p.depth = depth;
    if (full_depth >= 0) p.full_depth = full_depth;
    p.host_state = true;
    p.solver = GT_PR_SOLVER_CG;
    p.cg_tol = 1e-10;
    p.iters = 5000;
    gt_pr_state cc, cg;
    solve_both(in, &p, &cc, &cg);
    size_t n = cc.oct.nnodes;
    double mx = 0;
    for (size_t v = 0; v < n; v++)
        if (fabs(cc.coef[v]) > mx) mx = fabs(cc.coef[v]);
    double err = max_diff(cc.coef, cg.coef, n);
    print_message("depth %d, converged: max |coef| %.3g, max diff %.3g, iso %.9g vs %.9g\n", depth, mx, err, cc.iso,
                  cg.iso);
    assert_true(err <= 1e-6 * mx);
    assert_true(fabs(cc.iso - cg.iso) <= 1e-6 * fabs(cc.iso));
    /* the same extraction tree */
    assert_true((cc.tree == NULL) == (cg.tree == NULL));
    if (cc.tree) {
        assert_memory_equal(cc.tree, cg.tree, cc.oct.nnodes);
        /* the functions left out of the solve (GT_PR_T_FN) stay at 0 */
        size_t out = 0;
        for (size_t v = 0; v < n; v++)
            if (!(cg.tree[v] & GT_PR_T_FN)) {
                assert_true(cg.coef[v] == 0.0);
                out++;
            }
        print_message("depth %d: %zu coarse blocks, %zu functions left out of the solve, of %zu nodes\n", depth,
                      count_coarse(&cc), out, cc.oct.nnodes);
    }
    gt_pr_mesh mc = {0}, mg = {0};
    GT_ASSERT_OK(gt_pr_extract_cpu(&cc, &p, &mc));
    GT_ASSERT_OK(gt_pr_extract_cpu(&cg, &p, &mg));
    assert_int_equal(mc.nvert, mg.nvert);
    assert_int_equal(mc.ntri, mg.ntri);
    assert_memory_equal(mc.tri, mg.tri, 3 * mc.ntri * sizeof(int32_t));
    gt_pr_mesh_free(&mc);
    gt_pr_mesh_free(&mg);

    gt_pr_params q;
    gt_pr_params_default(&q);
    q.depth = depth;
    if (full_depth >= 0) q.full_depth = full_depth;
    q.host_state = true;
    gt_pr_state dc, dg;
    solve_both(in, &q, &dc, &dg);
    double ec = max_diff(dc.coef, cc.coef, n), eg = max_diff(dg.coef, cc.coef, n);
    print_message("depth %d, default solver: CPU %.3g, GPU %.3g from the converged chi (GPU-CPU %.3g), iso %.9g vs "
                  "%.9g\n",
                  depth, ec, eg, max_diff(dc.coef, dg.coef, n), dc.iso, dg.iso);
    assert_true(eg <= 3 * ec + 1e-4 * mx);
    assert_true(fabs(dc.iso - dg.iso) <= 1e-5 * fabs(dc.iso));
    gt_pr_state_free(&cc);
    gt_pr_state_free(&cg);
    gt_pr_state_free(&dc);
    gt_pr_state_free(&dg);
}

static void test_recon_same(void **state)
{
    (void)state;
    gt_rng g = {78};
    size_t n = 5000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0.1, 0.2, 0.3};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    compare_recon(&in, 5, -1);
    /* points thinning out 20-fold: coarse blocks on the sparse side */
    pr_sample_sphere_uneven(&g, n, 1.0, c, 20.0, x, nn);
    compare_recon(&in, 6, -1);
    free(x);
    free(nn);
    float *bx = NULL, *bn = NULL;
    size_t bnum = pr_read_points(pr_testdata("bunny_8k.ply"), &bx, &bn);
    assert_int_equal(bnum, 8000);
    gt_pr_input bi = {bnum, bx, bn, NULL};
    compare_recon(&bi, 6, -1);
    /* with the full depth at 2 the samples splat at the levels 2..6 around
     * their adaptive depths (the bunny's 8k samples are sparse for depth 6),
     * and the divergence comes from several levels, scattered and gathered */
    compare_recon(&bi, 6, 2);
    /* sparse for depth 8: no depth-8 function in the solve (GT_PR_T_FN) */
    compare_recon(&bi, 8, -1);
    free(bx);
    free(bn);
}

/* GPU extraction == CPU extraction from the same state */
static void compare_extract(gt_pr_state *s, const gt_pr_params *p, const char *what)
{
    gt_pr_mesh mc, mg;
    memset(&mc, 0, sizeof mc);
    memset(&mg, 0, sizeof mg);
    GT_ASSERT_OK(gt_pr_extract_cpu(s, p, &mc));
    GT_ASSERT_OK(gt_pr_extract_cuda(s, p, &mg));
    double err = 0;
    if (mc.nvert == mg.nvert)
        for (size_t i = 0; i < 3 * mc.nvert; i++) {
            double e = fabs((double)mc.xyz[i] - (double)mg.xyz[i]);
            if (e > err) err = e;
        }
    print_message("%s (depth %d): cpu %zu vertices %zu triangles, gpu %zu %zu, max position diff %.3g side\n", what,
                  s->oct.depth, mc.nvert, mc.ntri, mg.nvert, mg.ntri, err / s->side);
    assert_int_equal(mc.nvert, mg.nvert);
    assert_int_equal(mc.ntri, mg.ntri);
    if (mc.ntri) assert_memory_equal(mc.tri, mg.tri, 3 * mc.ntri * sizeof(int32_t));
    assert_true(err <= 1e-6 * s->side);
    assert_true(mc.iso == mg.iso);
    if (p->want_density) {
        assert_non_null(mc.density);
        assert_non_null(mg.density);
        double mx = 0, de = 0;
        for (size_t v = 0; v < mc.nvert; v++) {
            if (fabs(mc.density[v]) > mx) mx = fabs(mc.density[v]);
            double e = fabs((double)mc.density[v] - (double)mg.density[v]);
            if (e > de) de = e;
        }
        assert_true(de <= 1e-4 * mx);
    }
    gt_pr_mesh_free(&mc);
    gt_pr_mesh_free(&mg);
}

/* returns the state's coarse blocks (the extraction's, pr_adapt.h) */
static size_t extract_case_k(const gt_pr_input *in, int depth, double scale, bool density, int K, const char *what)
{
    gt_pr_params p;
    gt_pr_state s;
    pr_solve_cpu_k(in, depth, scale, K, &s, &p);
    p.want_density = density; /* a post-processing option: the solve does not read it */
    size_t nb = count_coarse(&s);
    print_message("%s: %zu coarse blocks\n", what, nb);
    compare_extract(&s, &p, what);
    gt_pr_state_free(&s);
    return nb;
}
static size_t extract_case(const gt_pr_input *in, int depth, double scale, bool density, const char *what)
{
    return extract_case_k(in, depth, scale, density, GT_PR_COARSE_LEVELS, what);
}

static void test_extract_same(void **state)
{
    (void)state;
    gt_rng g = {79};
    size_t n = 20000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0.3, -0.2, 0.1};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    extract_case(&in, 4, 1.1, false, "sphere");
    extract_case(&in, 5, 1.1, true, "sphere, density");
    pr_sample_torus(&g, n, 1.0, 0.4, x, nn);
    extract_case(&in, 6, 1.1, false, "torus");
    /* a thin tube (radius about a cell at depth 5): marching cubes' ambiguous faces */
    pr_sample_torus(&g, n, 1.0, 0.08, x, nn);
    extract_case(&in, 5, 1.1, false, "thin torus");
    /* noisy: positions and normals perturbed */
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    for (size_t i = 0; i < 3 * n; i++) {
        x[i] += (float)gt_rng_range(&g, -0.02, 0.02);
        nn[i] += (float)gt_rng_range(&g, -0.4, 0.4);
    }
    extract_case(&in, 7, 1.1, false, "noisy sphere");
    /* random points, random normals: a ragged surface meeting the cube's boundary */
    for (size_t i = 0; i < 3 * n; i++) {
        x[i] = (float)gt_rng_range(&g, -1, 1);
        nn[i] = (float)gt_rng_range(&g, -1, 1);
    }
    extract_case(&in, 5, 1.1, false, "random points");
    /* a cap missing: growth over many rounds closes it */
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (x[3 * i + 2] - c[2] <= 0.7) {
            memmove(x + 3 * m, x + 3 * i, 12);
            memmove(nn + 3 * m, nn + 3 * i, 12);
            m++;
        }
    gt_pr_input ih = {m, x, nn, NULL};
    extract_case(&ih, 6, 1.4, false, "sphere with a hole");
    /* points thinning out 20-fold: coarse blocks beside depth-D cells */
    pr_sample_sphere_uneven(&g, n, 1.0, c, 20.0, x, nn);
    assert_true(extract_case(&in, 7, 1.1, false, "uneven sphere") > 0);
    assert_true(extract_case(&in, 6, 1.1, true, "uneven sphere, density") > 0);
    /* sparse for the depth: blocks several levels above D */
    pr_sample_sphere_uneven(&g, 6000, 1.0, c, 100.0, x, nn);
    gt_pr_input is = {6000, x, nn, NULL};
    assert_true(extract_case_k(&is, 8, 1.1, false, 12, "sparse uneven sphere, --coarse-levels 12") > 0);
    assert_true(extract_case_k(&is, 8, 1.1, false, 2, "sparse uneven sphere, --coarse-levels 2") > 0);
    free(x);
    free(nn);
    float *bx = NULL, *bn = NULL;
    size_t bnum = pr_read_points(pr_testdata("bunny_8k.ply"), &bx, &bn);
    assert_int_equal(bnum, 8000);
    gt_pr_input bi = {bnum, bx, bn, NULL};
    extract_case(&bi, 7, 1.1, false, "bunny");
    extract_case(&bi, 8, 1.1, false, "bunny");
    free(bx);
    free(bn);
}

/* iso outside chi's range: no cell is mixed, an empty mesh on both */
static void test_extract_empty(void **state)
{
    (void)state;
    pr_check_iso_outside(gt_pr_extract_cuda, 80, 3000, 5);
}

/* the whole pipeline on the GPU: a closed sphere */
static void test_pipeline_closed(void **state)
{
    (void)state;
    gt_rng g = {81};
    size_t n = 20000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0, 0, 0};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_params p;
    gt_pr_params_default(&p);
    p.depth = 7;
    gt_pr_mesh m;
    GT_ASSERT_OK(gt_poisson_reconstruct(&in, &p, GT_DEVICE_CUDA, NULL, &m));
    long euler;
    assert_int_equal(pr_check_closed_manifold(&m, &euler), 0);
    assert_int_equal(euler, 2);
    gt_pr_mesh_free(&m);
    free(x);
    free(nn);
}

/* mesh_on_device: the mesh stays on the device and gt_pr_write_mesh_ply
 * writes it in pieces (small ones and the default) with the same bytes as
 * the same mesh brought to the host and written by gt_ply_write_trimesh;
 * with density asked for it comes to the host as before */
static void test_mesh_on_device_write(void **state)
{
    (void)state;
    gt_rng g = {83};
    size_t n = 30000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0, 0, 0};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_params p;
    gt_pr_params_default(&p);
    p.depth = 7;
    p.mesh_on_device = true;
    size_t db, nb, pinned0;
    gt_cu_held(&db, &nb, &pinned0);
    gt_pr_mesh m;
    GT_ASSERT_OK(gt_poisson_reconstruct(&in, &p, GT_DEVICE_CUDA, NULL, &m));
    assert_non_null(m.dev);
    assert_null(m.xyz);
    assert_true(m.nvert > 3000);
    char dir[] = "/tmp/gt_prply_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pa[3][300], pb[300];
    const char *pieces[] = {"1000", "997", NULL};
    for (int k = 0; k < 3; k++) {
        snprintf(pa[k], sizeof pa[k], "%s/dev%d.ply", dir, k);
        if (pieces[k]) setenv("GT_PLY_PIECE_ROWS", pieces[k], 1);
        else unsetenv("GT_PLY_PIECE_ROWS");
        double wait = -1;
        GT_ASSERT_OK(gt_pr_write_mesh_ply(pa[k], &p, &m, &wait));
        assert_true(wait >= 0);
        if (k) GT_ASSERT_SAME_FILE(pa[0], pa[k]);
    }
    snprintf(pb, sizeof pb, "%s/host.ply", dir);
    unsetenv("GT_PLY_PIECE_ROWS");
    GT_ASSERT_OK(gt_pr_mesh_to_host(&m));
    assert_null(m.dev);
    assert_non_null(m.xyz);
    GT_ASSERT_OK(gt_ply_write_trimesh(pb, m.nvert, m.xyz, NULL, 0, NULL, NULL, m.ntri, m.tri, GT_PLY_BINARY_LE));
    GT_ASSERT_SAME_FILE(pa[0], pb);
    long euler;
    assert_int_equal(pr_check_closed_manifold(&m, &euler), 0);
    gt_pr_mesh_free(&m);
    /* density wanted: the host needs the vertices */
    p.want_density = true;
    GT_ASSERT_OK(gt_poisson_reconstruct(&in, &p, GT_DEVICE_CUDA, NULL, &m));
    assert_null(m.dev);
    assert_non_null(m.xyz);
    assert_non_null(m.density);
    gt_pr_mesh_free(&m);
    size_t pinned1;
    gt_cu_held(&db, &nb, &pinned1);
    assert_int_equal(pinned1, pinned0);
    for (int k = 0; k < 3; k++) unlink(pa[k]);
    unlink(pb);
    rmdir(dir);
    free(x);
    free(nn);
}

int main(void)
{
    gt_test_require_gpu();
    /* GT_TEST_SKIP=PATTERN: leave out the tests whose names match (cmocka's
     * skip filter; e.g. the long octree comparison when rerunning the rest) */
    if (getenv("GT_TEST_SKIP")) cmocka_set_skip_filter(getenv("GT_TEST_SKIP"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_octree_same),
        cmocka_unit_test(test_recon_same),
        cmocka_unit_test(test_extract_same),
        cmocka_unit_test(test_extract_empty),
        cmocka_unit_test(test_pipeline_closed),
        cmocka_unit_test(test_mesh_on_device_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
