/* End-to-end reconstruction on the CPU against surfaces with known answers
 * (sphere, torus, a closed triangle mesh), robustness cases, and input
 * errors. Depth 5 keeps each case well under a second.
 *
 * Tolerances: with the unit cube 1.1x the data's extent and depth D, a cell is
 * h = 1.1 * extent / 2^D. The issue asks for mean distance within h and max
 * within 2h; those are the bounds asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "poisson/pr_bspline.h"
#include "pr_testutil.h"

typedef double (*dist_fn)(const float *p, const void *ctx);

static void run(const gt_pr_input *in, int depth, gt_pr_mesh *m)
{
    gt_pr_params p;
    gt_pr_params_default(&p);
    p.depth = depth;
    GT_ASSERT_OK(gt_poisson_reconstruct(in, &p, GT_DEVICE_CPU, NULL, m));
}

static void check_surface(const gt_pr_mesh *m, long euler_want, double h, dist_fn dist, const void *ctx,
                          double mean_tol, double max_tol)
{
    long euler = 0;
    long bad = pr_check_closed_manifold(m, &euler);
    assert_int_equal(bad, 0);
    assert_int_equal(euler, euler_want);
    double md = 0, mx = 0;
    for (size_t v = 0; v < m->nvert; v++) {
        double d = dist(m->xyz + 3 * v, ctx);
        md += d;
        if (d > mx) mx = d;
    }
    md /= (double)m->nvert;
    print_message("  %zu verts, %zu tris, mean dist %.3g h, max %.3g h\n", m->nvert, m->ntri, md / h, mx / h);
    assert_true(md < mean_tol * h);
    assert_true(mx < max_tol * h);
}

static double sphere_dist(const float *p, const void *ctx)
{
    const double *c = ctx; /* cx cy cz r */
    double r = 0;
    for (int a = 0; a < 3; a++) r += (p[a] - c[a]) * (p[a] - c[a]);
    return fabs(sqrt(r) - c[3]);
}
static double torus_dist(const float *p, const void *ctx)
{
    (void)ctx;
    return pr_torus_dist(p, 1.0, 0.4);
}

static void test_sphere(void **state)
{
    (void)state;
    gt_rng g = {11};
    size_t n = 4000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[4] = {0.3, -1.0, 2.0, 1.0};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_mesh m;
    run(&in, 5, &m);
    check_surface(&m, 2, 2.2 / 32, sphere_dist, c, 1.0, 2.0);
    gt_pr_mesh_free(&m);
    free(x);
    free(nn);
}

static void test_torus(void **state)
{
    (void)state;
    gt_rng g = {12};
    size_t n = 8000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    pr_sample_torus(&g, n, 1.0, 0.4, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_mesh m;
    run(&in, 5, &m);
    check_surface(&m, 0, 1.1 * 2.8 / 32, torus_dist, NULL, 1.0, 2.0);
    gt_pr_mesh_free(&m);
    free(x);
    free(nn);
}

/* The CPU path sums in an order that does not depend on the thread count
 * (blocked dot products, the divergence scatter by colours): the same points
 * give the same mesh, byte for byte, with 1, 2 and 5 threads. Depth 7 over
 * full depth 5, so that the scatter, the finer levels' gathers and the
 * cascade all run. */
static void test_threads_same(void **state)
{
    (void)state;
    gt_rng g = {21};
    size_t n = 20000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    pr_sample_torus(&g, n, 1.0, 0.3, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_params p;
    gt_pr_params_default(&p);
    p.depth = 7;
    static const int threads[] = {1, 2, 5};
    gt_pr_mesh m[3];
    for (int t = 0; t < 3; t++) {
#ifdef _OPENMP
        omp_set_num_threads(threads[t]);
#endif
        GT_ASSERT_OK(gt_poisson_reconstruct(&in, &p, GT_DEVICE_CPU, NULL, &m[t]));
    }
    assert_true(m[0].nvert > 1000);
    for (int t = 1; t < 3; t++) {
        assert_int_equal(m[t].nvert, m[0].nvert);
        assert_int_equal(m[t].ntri, m[0].ntri);
        assert_true(m[t].iso == m[0].iso);
        assert_memory_equal(m[t].xyz, m[0].xyz, 3 * m[0].nvert * sizeof(float));
        assert_memory_equal(m[t].tri, m[0].tri, 3 * m[0].ntri * sizeof(int32_t));
    }
#ifdef _OPENMP
    omp_set_num_threads(omp_get_num_procs());
#endif
    for (int t = 0; t < 3; t++) gt_pr_mesh_free(&m[t]);
    free(x);
    free(nn);
}

/* closed triangle mesh: an ellipsoid triangulated by latitude/longitude;
 * points area-uniform on the triangles with face normals, distance to the
 * triangles themselves */
typedef struct { int nt; float (*t)[3][3]; } trimesh;
static double seg_pt(const double *p, const double *a, const double *b)
{
    double ab[3], ap[3], t = 0, l2 = 0, d = 0;
    for (int k = 0; k < 3; k++) { ab[k] = b[k] - a[k]; ap[k] = p[k] - a[k]; t += ab[k] * ap[k]; l2 += ab[k] * ab[k]; }
    t = l2 > 0 ? t / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    for (int k = 0; k < 3; k++) d += (ap[k] - t * ab[k]) * (ap[k] - t * ab[k]);
    return sqrt(d);
}
static double tri_dist(const float *pf, const float tv[3][3])
{
    double p[3] = {pf[0], pf[1], pf[2]}, a[3], b[3], c[3];
    for (int k = 0; k < 3; k++) { a[k] = tv[0][k]; b[k] = tv[1][k]; c[k] = tv[2][k]; }
    double e0[3], e1[3], n[3], ap[3];
    for (int k = 0; k < 3; k++) { e0[k] = b[k] - a[k]; e1[k] = c[k] - a[k]; ap[k] = p[k] - a[k]; }
    n[0] = e0[1] * e1[2] - e0[2] * e1[1]; n[1] = e0[2] * e1[0] - e0[0] * e1[2]; n[2] = e0[0] * e1[1] - e0[1] * e1[0];
    double nl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (nl > 0) {
        double dn = (ap[0] * n[0] + ap[1] * n[1] + ap[2] * n[2]) / nl, q[3];
        for (int k = 0; k < 3; k++) q[k] = p[k] - dn * n[k] / nl;
        /* barycentric inside test */
        double s[3];
        const double *v[3] = {a, b, c};
        int inside = 1;
        for (int e = 0; e < 3; e++) {
            const double *u = v[e], *w = v[(e + 1) % 3];
            double uw[3], uq[3], cr[3];
            for (int k = 0; k < 3; k++) { uw[k] = w[k] - u[k]; uq[k] = q[k] - u[k]; }
            cr[0] = uw[1] * uq[2] - uw[2] * uq[1]; cr[1] = uw[2] * uq[0] - uw[0] * uq[2]; cr[2] = uw[0] * uq[1] - uw[1] * uq[0];
            s[e] = cr[0] * n[0] + cr[1] * n[1] + cr[2] * n[2];
            if (s[e] < 0) inside = 0;
        }
        if (inside) return fabs(dn);
    }
    double d = seg_pt(p, a, b), d2 = seg_pt(p, b, c), d3 = seg_pt(p, c, a);
    return fmin(d, fmin(d2, d3));
}
static double mesh_dist(const float *p, const void *ctx)
{
    const trimesh *tm = ctx;
    double best = INFINITY;
    for (int t = 0; t < tm->nt; t++) {
        double d = tri_dist(p, tm->t[t]);
        if (d < best) best = d;
    }
    return best;
}

static void test_closed_mesh(void **state)
{
    (void)state;
    const int NU = 24, NV = 12;
    const double ax[3] = {1.2, 0.8, 0.6};
    trimesh tm;
    tm.t = malloc(sizeof *tm.t * 2 * NU * NV);
    tm.nt = 0;
    for (int j = 0; j < NV; j++)
        for (int i = 0; i < NU; i++) {
            double P[4][3];
            for (int k = 0; k < 4; k++) {
                int ii = i + (k == 1 || k == 2), jj = j + (k >= 2);
                double th = M_PI * jj / NV, ph = 2 * M_PI * ii / NU;
                P[k][0] = ax[0] * sin(th) * cos(ph); P[k][1] = ax[1] * sin(th) * sin(ph); P[k][2] = ax[2] * cos(th);
            }
            int q[2][3] = {{0, 2, 1}, {0, 3, 2}};
            for (int h = 0; h < 2; h++) {
                if ((j == 0 && h == 1) || (j == NV - 1 && h == 0)) continue; /* degenerate at the poles */
                for (int k = 0; k < 3; k++)
                    for (int a = 0; a < 3; a++) tm.t[tm.nt][k][a] = (float)P[q[h][k]][a];
                tm.nt++;
            }
        }
    /* sample */
    gt_rng g = {13};
    size_t n = 6000;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double *area = malloc(sizeof(double) * tm.nt), tot = 0;
    for (int t = 0; t < tm.nt; t++) {
        double e0[3], e1[3];
        for (int a = 0; a < 3; a++) { e0[a] = tm.t[t][1][a] - tm.t[t][0][a]; e1[a] = tm.t[t][2][a] - tm.t[t][0][a]; }
        double cx = e0[1] * e1[2] - e0[2] * e1[1], cy = e0[2] * e1[0] - e0[0] * e1[2], cz = e0[0] * e1[1] - e0[1] * e1[0];
        tot += area[t] = sqrt(cx * cx + cy * cy + cz * cz);
    }
    for (size_t i = 0; i < n; i++) {
        double r = gt_rng_uniform(&g) * tot;
        int t = 0;
        while (t < tm.nt - 1 && r > area[t]) r -= area[t++];
        double r1 = sqrt(gt_rng_uniform(&g)), r2 = gt_rng_uniform(&g);
        double e0[3], e1[3];
        for (int a = 0; a < 3; a++) {
            e0[a] = tm.t[t][1][a] - tm.t[t][0][a];
            e1[a] = tm.t[t][2][a] - tm.t[t][0][a];
            x[3 * i + a] = (float)((1 - r1) * tm.t[t][0][a] + r1 * (1 - r2) * tm.t[t][1][a] + r1 * r2 * tm.t[t][2][a]);
        }
        double cr[3] = {e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2], e0[0] * e1[1] - e0[1] * e1[0]};
        /* outward: away from the centre */
        double s = cr[0] * x[3 * i] + cr[1] * x[3 * i + 1] + cr[2] * x[3 * i + 2] < 0 ? -1 : 1;
        for (int a = 0; a < 3; a++) nn[3 * i + a] = (float)(s * cr[a]);
    }
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_mesh m;
    run(&in, 5, &m);
    check_surface(&m, 2, 1.1 * 2.4 / 32, mesh_dist, &tm, 1.0, 2.0);
    gt_pr_mesh_free(&m);
    free(x); free(nn); free(area); free(tm.t);
}

/* robustness on the sphere: noisy normals, uneven sampling, a hole, duplicates */
static void test_robustness(void **state)
{
    (void)state;
    double c[4] = {0, 0, 0, 1.0};
    for (int kase = 0; kase < 4; kase++) {
        gt_rng g = {(uint64_t)(100 + kase)};
        size_t n = 4000, m = 0;
        float *x = malloc(24 * n), *nn = malloc(24 * n);
        float *sx = malloc(12 * n), *sn = malloc(12 * n);
        pr_sample_sphere(&g, n, 1.0, c, sx, sn);
        for (size_t i = 0; i < n; i++) {
            if (kase == 1 && sx[3 * i] < 0 && gt_rng_uniform(&g) < 0.85) continue; /* uneven: x<0 sparse */
            if (kase == 2 && sx[3 * i + 2] > 0.8) continue;                         /* hole: a cap missing */
            memcpy(x + 3 * m, sx + 3 * i, 12);
            memcpy(nn + 3 * m, sn + 3 * i, 12);
            if (kase == 0) { /* noisy normals: ~25 degrees */
                double l = 0;
                for (int a = 0; a < 3; a++) { nn[3 * m + a] += (float)gt_rng_range(&g, -0.4, 0.4); l += nn[3 * m + a] * nn[3 * m + a]; }
                for (int a = 0; a < 3; a++) nn[3 * m + a] /= (float)sqrt(l);
            }
            m++;
            if (kase == 3) { memcpy(x + 3 * m, sx + 3 * i, 12); memcpy(nn + 3 * m, sn + 3 * i, 12); m++; }
        }
        gt_pr_input in = {m, x, nn, NULL};
        gt_pr_mesh mesh;
        gt_pr_params p;
        gt_pr_params_default(&p);
        p.depth = 5;
        /* the surface closes over the hole beyond the data's box: give the cube room */
        if (kase == 2) p.scale = 1.4;
        GT_ASSERT_OK(gt_poisson_reconstruct(&in, &p, GT_DEVICE_CPU, NULL, &mesh));
        print_message("case %d (%zu points)\n", kase, m);
        /* hole: the surface is still closed; it bulges over the missing cap, so
         * only closedness and the distance on the sampled part are bounded */
        if (kase == 2) {
            long euler;
            assert_int_equal(pr_check_closed_manifold(&mesh, &euler), 0);
            assert_int_equal(euler, 2);
            double md = 0;
            size_t cnt = 0;
            for (size_t v = 0; v < mesh.nvert; v++)
                if (mesh.xyz[3 * v + 2] < 0.6) { md += sphere_dist(mesh.xyz + 3 * v, c); cnt++; }
            assert_true(md / (double)cnt < 1.4 * 2 / 32);
        } else {
            check_surface(&mesh, 2, 2.2 / 32, sphere_dist, c, 1.0, 2.0);
        }
        gt_pr_mesh_free(&mesh);
        free(x); free(nn); free(sx); free(sn);
    }
}

/* points i0..i1-1 of x, nn: strays uniform in the box +-b with random unit
 * normals, as a scan's stray returns */
static void add_strays(gt_rng *g, size_t i0, size_t i1, double b, float *x, float *nn)
{
    for (size_t i = i0; i < i1; i++) {
        double l = 0;
        for (int a = 0; a < 3; a++) {
            x[3 * i + a] = (float)gt_rng_range(g, -b, b);
            nn[3 * i + a] = (float)gt_rng_range(g, -1, 1);
            l += (double)nn[3 * i + a] * nn[3 * i + a];
        }
        for (int a = 0; a < 3; a++) nn[3 * i + a] /= (float)sqrt(l);
    }
}

/* n points of the unit sphere (*x, *nn: malloc'd) followed by no strays
 * (add_strays) in the box [-b, b]^3 */
static void sphere_with_strays(gt_rng *g, size_t n, size_t no, double b, float **x, float **nn)
{
    const double c[4] = {0, 0, 0, 1.0};
    *x = malloc(12 * (n + no)), *nn = malloc(12 * (n + no));
    assert_true(*x && *nn);
    pr_sample_sphere(g, n, 1.0, c, *x, *nn);
    add_strays(g, n, n + no, b, *x, *nn);
}

/* outliers: a sphere's points and 2 % more, uniform in the box around it
 * with random normals, as a scan's stray returns. Below D - 1 every sample's
 * screening weight the same, halved per level (gt_pr_screen_level); at D - 1
 * and D each sample's own area, clamped at 8x the median (gt_pr_screen_own):
 * the outliers get no surface of their own, every vertex stays on the sphere.
 * (Unclamped own areas at D - 1 and D grew blobs here: Euler 14.)
 * (With a weight of each sample's area at every level, an isolated sample,
 * sparse and so of large area, pinned chi to the iso-value around it: here
 * closed blobs about the outliers, Euler characteristic 154. With the same
 * weight at every level, 2,000 outliers about 100,000 points at depth 8
 * left bubbles inside.) */
static void test_outliers(void **state)
{
    (void)state;
    const double c[4] = {0, 0, 0, 1.0};
    const size_t n = 20000, no = 400;
    gt_rng g = {77};
    float *x, *nn;
    sphere_with_strays(&g, n, no, 1.2, &x, &nn);
    gt_pr_input in = {n + no, x, nn, NULL};
    gt_pr_mesh mesh;
    run(&in, 7, &mesh);
    /* a cell: 1.1 x the box's 2.4 / 2^7 */
    check_surface(&mesh, 2, 1.1 * 2.4 / 128, sphere_dist, c, 0.25, 1.0);
    gt_pr_mesh_free(&mesh);
    free(x);
    free(nn);
}

/* 0.1 % strays inside the box of a densely sampled sphere (depth 7): each
 * is far sparser than the surface's samples, so it stands for a large area;
 * the screening's weight (the mean area, solve.c: screen_area) must not
 * follow them, and most must screen with little weight
 * (gt_pr_screen_weight), the sphere's samples with their full weight. With
 * the plain mean (every sample's weight 1) the strays raised it by 7.6 %
 * here (now 0.6 %); 2 % strays about a bumpy sphere of 1M points at depth
 * 10 raised it, and the strays inside pulled chi to the iso-value there:
 * closed bubbles inside the surface. */
static void test_strays_screening(void **state)
{
    (void)state;
    const size_t n = 100000, no = 100;
    gt_rng g = {3};
    float *x, *nn;
    sphere_with_strays(&g, n, no, 0.99, &x, &nn); /* inside the sphere's box: the unit cube is the same */
    gt_pr_input clean = {n, x, nn, NULL}, strays = {n + no, x, nn, NULL};
    gt_pr_state s0, s1;
    gt_pr_params p;
    pr_solve_cpu(&clean, 7, 1.1, &s0, &p);
    pr_solve_cpu(&strays, 7, 1.1, &s1, &p);
    size_t low = 0, below1 = 0;
    for (size_t k = 0; k < n + no; k++) {
        low += s1.sw[k] < 0.5f;
        below1 += s1.sw[k] < 1.0f;
    }
    print_message("  screening weight with %zu strays / without: %.4f; samples weighing < 1: %zu, < 0.5: %zu\n", no,
                  s1.alpha / s0.alpha, below1, low);
    assert_true(fabs(s1.alpha / s0.alpha - 1.0) < 0.03);
    assert_true(below1 <= no); /* the sphere's samples keep their weight */
    assert_true(low >= no / 2);
    gt_pr_state_free(&s0);
    gt_pr_state_free(&s1);
    free(x);
    free(nn);
}

/* gt_pr_area_cap: GT_PR_AREA_CAP times the lower edge of the median's bin,
 * whatever a few strays far above it; gt_pr_screen_weight: 1 up to the cap,
 * (cap / area)^2 beyond; gt_pr_screen_area: that weight times the area */
static void test_screen_weight(void **state)
{
    (void)state;
    uint32_t hist[GT_PR_AREA_BINS] = {0};
    const size_t n = 1000;
    for (size_t k = 0; k < n; k++) {
        /* 97 % between 1.0 and 1.15 (one bin: [1, 1.25)), 3 % at 1e6 */
        const float a = k < 970 ? 1.0f + 0.15f * (float)k / 970.0f : 1e6f;
        hist[gt_pr_area_bin(a)]++;
    }
    assert_int_equal(hist[gt_pr_area_bin(1.0f)], 970);
    const double cap = gt_pr_area_cap(hist, n);
    assert_true(fabs(cap - GT_PR_AREA_CAP) < 1e-12);
    /* the median's bin, not the mean's: a 40 % share of strays moves nothing */
    for (size_t k = 0; k < GT_PR_AREA_BINS; k++) hist[k] = 0;
    hist[gt_pr_area_bin(1.1f)] = 600;
    hist[gt_pr_area_bin(1e6f)] = 400;
    assert_true(fabs(gt_pr_area_cap(hist, n) - GT_PR_AREA_CAP) < 1e-12);
    assert_true(gt_pr_area_cap(hist, 0) == 0.0);
    assert_true(gt_pr_screen_weight(1.0f, cap) == 1.0f);
    assert_true(gt_pr_screen_weight((float)cap, cap) == 1.0f);
    assert_true(fabs(gt_pr_screen_weight((float)(2 * cap), cap) - 0.25f) < 1e-6f);
    assert_true(fabs(gt_pr_screen_area((float)(2 * cap), cap) - 0.5 * cap) < 1e-9 * cap);
    assert_true(gt_pr_screen_area(1.5f, cap) == 1.5);
}

/* the bunny (a real scan, open at the bottom): the reconstruction closes it */
static void test_bunny_closed(void **state)
{
    (void)state;
    float *x = NULL, *nn = NULL;
    size_t n = pr_read_points(pr_testdata("bunny_8k.ply"), &x, &nn);
    assert_int_equal(n, 8000);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_mesh m;
    run(&in, 5, &m);
    long euler;
    assert_int_equal(pr_check_closed_manifold(&m, &euler), 0);
    /* closed; its genus at depth 5 is not asserted (ears may touch) */
    assert_true(euler <= 2 && euler % 2 == 0);
    gt_pr_mesh_free(&m);
    free(x);
    free(nn);
}

/* The default solve is converged: the bunny's points (open at the base,
 * where the surface is the solve's smooth interpolation across the hole)
 * at depth 7, the default schedule against CG run to a relative residual of
 * 1e-10 at every level, on the same octree. At each vertex of the default's
 * mesh the converged surface is |chi_c - iso_c - (chi - iso)| / |grad chi_c|
 * away (first order): at most 1e-3 cell, issue 17's bound. (Unpreconditioned,
 * the finest level's 12 iterations left 0.1 cell at depth 8; preconditioned,
 * a fixed 24 there left 0.0064 here; the finest level's residual stop
 * GT_PR_FINEST_RESIDUAL leaves 5e-5.) */
static void test_default_converged(void **state)
{
    (void)state;
    float *x = NULL, *nn = NULL;
    size_t n = pr_read_points(pr_testdata("bunny_8k.ply"), &x, &nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_state sa, sb;
    gt_pr_params p;
    pr_solve_cpu(&in, 7, 1.1, &sa, &p);
    gt_pr_mesh m;
    memset(&m, 0, sizeof m);
    GT_ASSERT_OK(gt_pr_extract_cpu(&sa, &p, &m));
    gt_pr_params_default(&p);
    p.depth = 7;
    p.solver = GT_PR_SOLVER_CG;
    p.iters = 2000;
    p.cg_tol = 1e-10;
    gt_pr_points pts;
    GT_ASSERT_OK(gt_pr_points_make(&in, &p, NULL, &pts));
    GT_ASSERT_OK(gt_pr_prepare_cpu(&pts, &p, NULL, &sb));
    GT_ASSERT_OK(gt_pr_solve_cpu(&sb, &p, NULL));
    assert_int_equal(sa.oct.nnodes, sb.oct.nnodes);
    const double cells = 128, e = 0.25 / cells;
    double mx = 0, mean = 0;
    for (size_t v = 0; v < m.nvert; v++) {
        double q[3], g = 0;
        for (int c = 0; c < 3; c++) q[c] = (m.xyz[3 * v + c] - sa.center[c]) / sa.side + 0.5;
        for (int c = 0; c < 3; c++) {
            double q1[3] = {q[0], q[1], q[2]}, q2[3] = {q[0], q[1], q[2]};
            q1[c] += e;
            q2[c] -= e;
            const double dc = (gt_pr_eval(&sb, q1) - gt_pr_eval(&sb, q2)) / (2 * e);
            g += dc * dc;
        }
        const double fa = gt_pr_eval(&sa, q) - sa.iso, fb = gt_pr_eval(&sb, q) - sb.iso;
        const double d = fabs(fb - fa) / sqrt(g) * cells;
        mean += d / (double)m.nvert;
        if (d > mx) mx = d;
    }
    print_message("  %zu vertices: the converged surface lies at most %.3g cell (mean %.3g) from the default's\n",
                  m.nvert, mx, mean);
    assert_true(m.nvert > 10000);
    assert_true(mx <= 1e-3);
    gt_pr_mesh_free(&m);
    gt_pr_state_free(&sa);
    gt_pr_state_free(&sb);
    free(x);
    free(nn);
}

static void test_errors(void **state)
{
    (void)state;
    gt_rng g = {5};
    size_t n = 500;
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0, 0, 0};
    gt_pr_params p;
    gt_pr_params_default(&p);
    p.depth = 4;
    gt_pr_mesh m;
    gt_pr_input in = {10, x, nn, NULL};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    assert_int_equal(gt_poisson_reconstruct(&in, &p, GT_DEVICE_CPU, NULL, &m), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "too few"));
    /* NaN points are skipped and counted */
    in.n = n;
    x[0] = NAN;
    x[4] = INFINITY;
    GT_ASSERT_OK(gt_poisson_reconstruct(&in, &p, GT_DEVICE_CPU, NULL, &m));
    assert_int_equal(m.skipped_nonfinite, 2);
    gt_pr_mesh_free(&m);
    /* zero normals everywhere */
    float *z = calloc(3 * n, sizeof(float));
    gt_pr_input iz = {n, x, z, NULL};
    assert_int_equal(gt_poisson_reconstruct(&iz, &p, GT_DEVICE_CPU, NULL, &m), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "zero normals"));
    /* coincident */
    for (size_t i = 0; i < 3 * n; i++) z[i] = 1.0f;
    gt_pr_input ic = {n, z, nn, NULL};
    assert_int_equal(gt_poisson_reconstruct(&ic, &p, GT_DEVICE_CPU, NULL, &m), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "coincident"));
    /* coplanar (tilted plane) */
    for (size_t i = 0; i < n; i++) {
        double a = gt_rng_uniform(&g), b = gt_rng_uniform(&g);
        z[3 * i] = (float)a; z[3 * i + 1] = (float)b; z[3 * i + 2] = (float)(0.5 * a - 0.25 * b);
    }
    assert_int_equal(gt_poisson_reconstruct(&ic, &p, GT_DEVICE_CPU, NULL, &m), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "coplanar"));
    free(z);
    free(x);
    free(nn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sphere),       cmocka_unit_test(test_torus),
        cmocka_unit_test(test_closed_mesh),  cmocka_unit_test(test_robustness), cmocka_unit_test(test_outliers),
        cmocka_unit_test(test_strays_screening), cmocka_unit_test(test_screen_weight),
        cmocka_unit_test(test_bunny_closed), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_threads_same), cmocka_unit_test(test_default_converged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
