/* The extraction's coarse blocks (pr_adapt.h), on the CPU:
 *  - crack-free by construction, tested apart from the solver: random fields
 *    on grids of blocks, each block coarse or not at random; depth-D cells
 *    by lib/mc's table as extract.c uses it, coarse blocks by their loops;
 *    every mesh edge must lie in exactly two triangles with opposite
 *    directions (closed, manifold along edges, oriented). Random signs make
 *    every face case occur: ambiguous faces, split and unsplit block edges,
 *    loops of 2, and loops without a fan root (the added vertex).
 *  - on a reconstruction whose samples thin out 20-fold across the surface:
 *    fewer vertices than the uniform mesh; closed, oriented, the sphere's
 *    Euler characteristic and volume; every edge vertex is the uniform
 *    mesh's vertex of the same depth-D edge, at the same position; every
 *    vertex used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/log.h"
#include "mc/mc.h"
#include "poisson/pr_adapt.h"
#include "poisson/pr_mc.h"
#include "pr_testutil.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* a mesh under construction: triangles by edge key (added vertices get keys
 * above every edge key), numbered at the end */
typedef struct {
    uint64_t *tk; /* 3 per triangle */
    size_t nt, cap;
    uint64_t next_added;
} keymesh;

static void km_tri(keymesh *m, uint64_t a, uint64_t b, uint64_t c)
{
    if (m->nt == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 1024;
        m->tk = realloc(m->tk, 3 * m->cap * sizeof *m->tk);
    }
    m->tk[3 * m->nt] = a;
    m->tk[3 * m->nt + 1] = b;
    m->tk[3 * m->nt + 2] = c;
    m->nt++;
}

/* number the keys; bad edges of the result (pr_check_closed_manifold) */
static long km_check(keymesh *m, long *euler)
{
    size_t n = 3 * m->nt;
    uint64_t *u = malloc((n ? n : 1) * sizeof *u);
    memcpy(u, m->tk, n * sizeof *u);
    qsort(u, n, sizeof *u, cmp_u64);
    size_t nu = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || u[i] != u[i - 1]) u[nu++] = u[i];
    gt_pr_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    mesh.nvert = nu;
    mesh.ntri = m->nt;
    mesh.tri = malloc((n ? n : 1) * sizeof *mesh.tri);
    for (size_t i = 0; i < n; i++) {
        uint64_t *at = bsearch(&m->tk[i], u, nu, sizeof *u, cmp_u64);
        mesh.tri[i] = (int32_t)(at - u);
    }
    long bad = pr_check_closed_manifold(&mesh, euler);
    free(mesh.tri);
    free(u);
    return bad;
}

/* G blocks per axis; node field f on the (2G + 1)^3 grid (index i + R j +
 * R^2 k), positive on the grid's boundary so the surface stays inside;
 * coarse[b] per block (index X + G Y + G^2 Z) */
static void stress_mesh(int G, const double *f, const uint8_t *coarse, keymesh *m, int *stats)
{
    const int R = 2 * G + 1;
    const gt_mc_table *mc = gt_mc_table_get();
    /* depth-D cells outside coarse blocks */
    for (int z = 0; z < 2 * G; z++)
        for (int y = 0; y < 2 * G; y++)
            for (int x = 0; x < 2 * G; x++) {
                if (coarse[x / 2 + G * (y / 2) + G * G * (z / 2)]) continue;
                int msk = 0;
                for (int c = 0; c < 8; c++) {
                    int cx = x + (c & 1), cy = y + ((c >> 1) & 1), cz = z + ((c >> 2) & 1);
                    msk |= (f[cx + R * cy + R * R * cz] < 0.0) << c;
                }
                for (int t = 0; t < mc->ntri[msk]; t++) {
                    uint64_t k[3];
                    for (int q = 0; q < 3; q++) {
                        int code = gt_pr_mc_edge_code(mc->tri[msk][3 * t + q]);
                        k[q] = GT_PR_EKEY(gt_pr_corner_key((uint32_t)x, (uint32_t)y, (uint32_t)z, code & 7), code >> 3);
                    }
                    km_tri(m, k[0], k[1], k[2]);
                }
            }
    /* coarse blocks */
    for (int Z = 0; Z < G; Z++)
        for (int Y = 0; Y < G; Y++)
            for (int X = 0; X < G; X++) {
                if (!coarse[X + G * Y + G * G * Z]) continue;
                double v[27];
                for (int k = 0; k < 3; k++)
                    for (int j = 0; j < 3; j++)
                        for (int i = 0; i < 3; i++)
                            v[i + 3 * j + 9 * k] = f[(2 * X + i) + R * (2 * Y + j) + R * R * (2 * Z + k)];
                uint32_t ncm = 0;
                for (int i = 0; i < 27; i++) {
                    if (i == 13) continue;
                    int q[3] = {X + i % 3 - 1, Y + (i / 3) % 3 - 1, Z + i / 9 - 1};
                    int out = q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= G || q[1] >= G || q[2] >= G;
                    if (out || !coarse[q[0] + G * q[1] + G * G * q[2]]) ncm |= 1u << i;
                }
                gt_pr_block_poly P;
                gt_pr_block_loops(v, ncm, 0.0, &P);
                const uint32_t base[3] = {2 * (uint32_t)X, 2 * (uint32_t)Y, 2 * (uint32_t)Z};
                uint64_t key[GT_PR_BLOCK_MAXSEG];
                for (int q = 0; q < P.nv; q++) {
                    gt_pr_cross_edge e = gt_pr_cross_edge_of(P.cross[q], base, 1);
                    while (e.m > 1) {
                        uint32_t mid[3];
                        gt_pr_cross_mid(&e, mid);
                        gt_pr_cross_step(&e, f[mid[0] + R * mid[1] + R * R * mid[2]], 0.0);
                    }
                    key[q] = gt_pr_cross_key(&e);
                }
                for (int l = 0; l < P.nloop; l++) {
                    const int r = gt_pr_block_loop_root(&P, l), nt = gt_pr_block_loop_ntri(&P, l, r);
                    const int n = P.lstart[l + 1] - P.lstart[l];
                    stats[n < 8 ? n : 8]++;
                    if (r < 0) stats[9]++;
                    uint64_t added = m->next_added++;
                    for (int t = 0; t < nt; t++) {
                        int q3[3];
                        uint64_t k[3];
                        gt_pr_block_loop_tri(&P, l, r, t, q3);
                        for (int q = 0; q < 3; q++) k[q] = q3[q] < 0 ? added : key[P.lstart[l] + q3[q]];
                        km_tri(m, k[0], k[1], k[2]);
                    }
                }
            }
}

static void test_block_stress(void **state)
{
    (void)state;
    gt_rng g = {4242};
    const int G = 4, R = 2 * G + 1;
    double *f = malloc((size_t)R * R * R * sizeof *f);
    uint8_t coarse[64];
    int stats[10] = {0};
    long trials = 0;
    for (int trial = 0; trial < 3000; trial++) {
        /* fields: random signs; smooth blobs with noise; sparse inside points */
        const int kind = trial % 3;
        const double pc = trial % 5 == 0 ? 1.0 : trial % 5 == 1 ? 0.0 : 0.5;
        for (int b = 0; b < G * G * G; b++) coarse[b] = gt_rng_uniform(&g) < pc;
        for (int k = 0; k < R; k++)
            for (int j = 0; j < R; j++)
                for (int i = 0; i < R; i++) {
                    double val;
                    if (i == 0 || j == 0 || k == 0 || i == R - 1 || j == R - 1 || k == R - 1) val = 1.0;
                    else if (kind == 0) val = gt_rng_range(&g, -1, 1);
                    else if (kind == 1) {
                        double dx = i - G, dy = j - G, dz = k - G;
                        val = sqrt(dx * dx + dy * dy + dz * dz) - 2.5 + gt_rng_range(&g, -1, 1);
                    } else val = gt_rng_uniform(&g) < 0.2 ? -1.0 : 1.0;
                    f[i + R * j + R * R * k] = val;
                }
        keymesh m;
        memset(&m, 0, sizeof m);
        m.next_added = (uint64_t)1 << 62;
        stress_mesh(G, f, coarse, &m, stats);
        long euler;
        long bad = km_check(&m, &euler);
        if (bad) print_message("trial %d (kind %d): %ld bad edges of %zu triangles\n", trial, kind, bad, m.nt);
        assert_int_equal(bad, 0);
        free(m.tk);
        trials++;
    }
    print_message("%ld grids closed and oriented; coarse loops of 2..7, 8+ vertices: %d %d %d %d %d %d %d; "
                  "fans around an added vertex: %d\n",
                  trials, stats[2], stats[3], stats[4], stats[5], stats[6], stats[7], stats[8], stats[9]);
    /* the stress reached the rare cases */
    assert_true(stats[2] > 0);
    assert_true(stats[8] > 0);
    assert_true(stats[9] > 0);
    free(f);
}

static int cmp_vk(const void *a, const void *b) { return cmp_u64(a, b); }

/* chi at fraction t of the depth-D edge lo -> up */
static double chi_on_edge(const gt_pr_state *s, const uint32_t lo[3], const uint32_t up[3], double t)
{
    int D = s->oct.depth;
    double q[3];
    for (int a = 0; a < 3; a++) q[a] = ldexp(lo[a] + t * ((double)up[a] - lo[a]), -D);
    return gt_pr_eval_levels(&s->oct, q, s->coef, s->coef_lmin, D);
}

/* n points on a sphere thinning out `ratio`-fold, depth D, coarse blocks up
 * to K levels above D: checks of the file's header comment */
static void uneven_case(size_t n, double ratio, int D, int K, uint64_t seed)
{
    gt_rng g = {seed};
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0.1, -0.3, 0.2};
    pr_sample_sphere_uneven(&g, n, 1.0, c, ratio, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_state s;
    gt_pr_params p;
    pr_solve_cpu_k(&in, D, 1.1, K, &s, &p);
    assert_non_null(s.tree);
    size_t nblk[GT_PR_MAX_DEPTH + 1] = {0};
    for (int l = 0; l < D; l++)
        for (size_t v = s.oct.level_start[l]; v < s.oct.level_start[l + 1]; v++) nblk[l] += (s.tree[v] & GT_PR_T_LEAF) != 0;
    gt_pr_params pu = p;
    pu.uniform_mesh = true;
    gt_pr_mesh ma, mu;
    memset(&ma, 0, sizeof ma);
    memset(&mu, 0, sizeof mu);
    uint64_t *ka = NULL, *ku = NULL;
    GT_ASSERT_OK(gt_pr_extract_mesh_keys_cpu(&s, &p, &ma, &ka));
    GT_ASSERT_OK(gt_pr_extract_mesh_keys_cpu(&s, &pu, &mu, &ku));
    print_message("%zu points thinning %g-fold, depth %d, --coarse-levels %d: %zu vertices, %zu triangles (uniform "
                  "mesh: %zu, %zu); coarse blocks at depths %d..%d: %zu %zu %zu %zu\n",
                  n, ratio, D, K, ma.nvert, ma.ntri, mu.nvert, mu.ntri, D - 1, D - 4, nblk[D - 1], nblk[D - 2],
                  D >= 3 ? nblk[D - 3] : 0, D >= 4 ? nblk[D - 4] : 0);
    /* the sparse side is cut from coarse blocks */
    assert_true((double)ma.nvert < 0.9 * (double)mu.nvert);
    long euler;
    assert_int_equal(pr_check_closed_manifold(&ma, &euler), 0);
    assert_int_equal(euler, 2);
    double vol = 0;
    for (size_t t = 0; t < ma.ntri; t++) {
        const float *a = ma.xyz + 3 * ma.tri[3 * t], *b = ma.xyz + 3 * ma.tri[3 * t + 1], *q = ma.xyz + 3 * ma.tri[3 * t + 2];
        vol += ((double)a[0] * ((double)b[1] * q[2] - (double)b[2] * q[1]) -
                (double)a[1] * ((double)b[0] * q[2] - (double)b[2] * q[0]) +
                (double)a[2] * ((double)b[0] * q[1] - (double)b[1] * q[0])) / 6.0;
    }
    print_message("Euler characteristic %ld, volume %.4f (sphere %.4f)\n", euler, vol, 4.0 / 3.0 * M_PI);
    assert_true(fabs(vol - 4.0 / 3.0 * M_PI) < 0.05 * 4.0 / 3.0 * M_PI);
    /* edge vertices: increasing keys, each at the root of chi on its depth-D
     * edge, and where the uniform mesh has that edge, its vertex at the same
     * position; the added ones (key UINT64_MAX) after them, few */
    size_t nedge = 0, shared = 0;
    while (nedge < ma.nvert && ka[nedge] != UINT64_MAX) nedge++;
    for (size_t v = nedge; v < ma.nvert; v++) assert_true(ka[v] == UINT64_MAX);
    print_message("%zu edge vertices, %zu added\n", nedge, ma.nvert - nedge);
    assert_true(ma.nvert - nedge < ma.nvert / 50 + 1);
    for (size_t v = 0; v < nedge; v++) {
        if (v > 0) assert_true(ka[v - 1] < ka[v]);
        uint64_t *at = bsearch(&ka[v], ku, mu.nvert, sizeof *ku, cmp_vk);
        if (at) {
            size_t u = (size_t)(at - ku);
            for (int a = 0; a < 3; a++) assert_true(ma.xyz[3 * v + a] == mu.xyz[3 * u + a]);
            shared++;
            continue;
        }
        int mask = (int)(ka[v] & 7);
        uint32_t lo[3], up[3];
        gt_pr_demorton(ka[v] >> 3, lo, lo + 1, lo + 2);
        for (int a = 0; a < 3; a++) up[a] = lo[a] + ((mask >> a) & 1);
        double va = chi_on_edge(&s, lo, up, 0), vb = chi_on_edge(&s, lo, up, 1);
        assert_true((va < s.iso) != (vb < s.iso));
        double tt = gt_pr_edge_root(va, chi_on_edge(&s, lo, up, 0.5), vb, s.iso);
        assert_true(fabs(chi_on_edge(&s, lo, up, tt) - s.iso) <= 1e-9 * fabs(vb - va) + 1e-13);
    }
    print_message("%zu of them the uniform mesh's\n", shared);
    uint8_t *used = calloc(ma.nvert, 1);
    for (size_t t = 0; t < 3 * ma.ntri; t++) used[ma.tri[t]] = 1;
    for (size_t v = 0; v < ma.nvert; v++) assert_true(used[v]);
    free(used);
    /* every vertex near the sphere: as near as the uniform mesh's (the
     * reconstruction's own accuracy from so few samples is not at issue) */
    double worst[2], mean[2];
    pr_sphere_dist(&ma, c, 1.0, &mean[0], &worst[0]);
    pr_sphere_dist(&mu, c, 1.0, &mean[1], &worst[1]);
    print_message("farthest vertex from the sphere: %.4f (uniform mesh: %.4f)\n", worst[0], worst[1]);
    assert_true(worst[0] <= worst[1] + 0.01);
    free(ka);
    free(ku);
    gt_pr_mesh_free(&ma);
    gt_pr_mesh_free(&mu);
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}

static void test_uneven_sphere(void **state)
{
    (void)state;
    uneven_case(30000, 20.0, 7, GT_PR_COARSE_LEVELS, 31);
    /* sparse for the depth, 100-fold: blocks several levels above D */
    uneven_case(6000, 100.0, 8, 12, 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_stress),
        cmocka_unit_test(test_uneven_sphere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
