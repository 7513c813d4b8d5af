/* Octree invariants of the CPU reference: Morton round trip, the LUTs
 * against their geometric definition, children = the 8 keys with the
 * parent's prefix, links, point ranges, and the LUT neighbour tables against
 * a brute-force search on random octrees (32- and 64-bit key depths). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "poisson/pr_bspline.h"
#include "pr_testutil.h"

static void test_morton_roundtrip(void **state)
{
    (void)state;
    gt_rng g = {1};
    for (int i = 0; i < 10000; i++) {
        uint32_t x = (uint32_t)(gt_rng_u64(&g) & 0x1fffff), y = (uint32_t)(gt_rng_u64(&g) & 0x1fffff),
                 z = (uint32_t)(gt_rng_u64(&g) & 0x1fffff), a, b, c;
        uint64_t k = gt_pr_morton(x, y, z);
        gt_pr_demorton(k, &a, &b, &c);
        assert_true(a == x && b == y && c == z);
        /* bit layout: bit 3i is x_i */
        for (int bit = 0; bit < 21; bit++) assert_int_equal((k >> (3 * bit)) & 1, (x >> bit) & 1);
    }
}

/* LUT definition: for child c of parent P (cell coords 2P+b) the neighbour at
 * offset d is the cell 2P+b+d; its parent is P + (parent offset) and its child
 * bits are its coordinates mod 2. Checked with plain integer coordinates. */
static void test_luts_definition(void **state)
{
    (void)state;
    gt_pr_luts_init();
    for (int c = 0; c < 8; c++)
        for (int r = 1; r <= 2; r++) {
            int w = 2 * r + 1;
            for (int i = 0; i < w * w * w; i++) {
                int d[3] = {i % w - r, (i / w) % w - r, i / (w * w) - r};
                int P = 5; /* any parent coordinate away from 0 */
                int pi = r == 1 ? gt_pr_lut_parent[c][i] : gt_pr_lut_parent125[c][i];
                int ci = r == 1 ? gt_pr_lut_child[c][i] : gt_pr_lut_child125[c][i];
                assert_true(pi >= 0 && pi < 27 && ci >= 0 && ci < 8);
                for (int a = 0; a < 3; a++) {
                    int x = 2 * P + ((c >> a) & 1) + d[a];
                    int po = (a == 0 ? pi % 3 : a == 1 ? (pi / 3) % 3 : pi / 9) - 1;
                    assert_int_equal(x / 2, P + po);
                    assert_int_equal(x % 2, (ci >> a) & 1);
                }
            }
        }
    /* the centre entry is the node itself */
    for (int c = 0; c < 8; c++) {
        assert_int_equal(gt_pr_lut_parent[c][13], 13);
        assert_int_equal(gt_pr_lut_child[c][13], c);
    }
}

static float *random_points(gt_rng *g, size_t n, int clusters)
{
    float *u = malloc(3 * n * sizeof(float));
    double cc[8][3];
    for (int k = 0; k < clusters; k++)
        for (int a = 0; a < 3; a++) cc[k][a] = gt_rng_range(g, 0.2, 0.8);
    for (size_t i = 0; i < n; i++) {
        int k = (int)(gt_rng_u64(g) % (uint64_t)clusters);
        for (int a = 0; a < 3; a++) {
            double v = cc[k][a] + 0.15 * (gt_rng_uniform(g) + gt_rng_uniform(g) - 1.0);
            u[3 * i + a] = (float)(v < 0 ? 0 : v > 0.999 ? 0.999 : v);
        }
    }
    return u;
}

static void check_octree(const gt_pr_octree *o, const float *u, int full_depth)
{
    const int D = o->depth;
    /* the levels up to the full depth are complete */
    for (int l = 0; l <= full_depth; l++)
        assert_int_equal(o->level_start[l + 1] - o->level_start[l], (size_t)1 << (3 * l));
    /* at D and at every level between the full depth and D, every cell
     * within 2 cells of a point's is a node (a sample's 27 neighbours at the
     * level where it splats are nodes) */
    for (int l = full_depth + 1 < D ? full_depth + 1 : D; l <= D; l++) {
        const int64_t rl = (int64_t)1 << l;
        for (size_t k = 0; k < o->npts; k += 5) {
            int64_t c[3];
            for (int a = 0; a < 3; a++) c[a] = (int64_t)((double)u[3 * k + a] * (double)rl);
            for (int i = 0; i < 125; i++) {
                int64_t q[3] = {c[0] + i % 5 - 2, c[1] + (i / 5) % 5 - 2, c[2] + i / 25 - 2};
                if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= rl || q[1] >= rl || q[2] >= rl) continue;
                assert_true(gt_pr_find(o, l, q[0], q[1], q[2]) >= 0);
            }
        }
    }
    /* the point ranges of a level's nonempty nodes tile the sorted points in
     * key order */
    for (int l = 0; l <= D; l++) {
        uint32_t next = 0;
        for (size_t v = o->level_start[l]; v < o->level_start[l + 1]; v++) {
            if (o->pt_count[v] == 0) continue;
            assert_int_equal(o->pt_start[v], next);
            next += o->pt_count[v];
        }
        assert_int_equal(next, o->npts);
    }
    assert_int_equal(o->level_start[0], 0);
    assert_int_equal(o->level_start[1], 1);
    assert_int_equal(o->parent[0], -1);
    assert_int_equal(o->pt_count[0], o->npts);
    for (int l = 0; l <= D; l++) {
        for (size_t v = o->level_start[l]; v < o->level_start[l + 1]; v++) {
            if (v > o->level_start[l]) assert_true(o->key[v] > o->key[v - 1]); /* sorted, unique */
            assert_true(o->key[v] < ((uint64_t)1 << (3 * l)));
            if (l > 0) {
                int32_t p = o->parent[v];
                assert_true(p >= (int32_t)o->level_start[l - 1] && p < (int32_t)o->level_start[l]);
                assert_int_equal(o->key[v] >> 3, o->key[p]);
            }
            int32_t ch = o->child[v];
            uint32_t sum = 0;
            if (ch >= 0) {
                assert_true(l < D);
                for (int c = 0; c < 8; c++) {
                    assert_int_equal(o->key[ch + c], o->key[v] << 3 | (uint64_t)c);
                    assert_int_equal(o->parent[ch + c], (int32_t)v);
                    sum += o->pt_count[ch + c];
                }
                assert_int_equal(sum, o->pt_count[v]);
            } else if (l < D) {
                assert_int_equal(o->pt_count[v], 0); /* a node with points is refined to depth D */
            }
            /* the points in range lie in the node's cell */
            uint32_t x, y, z;
            gt_pr_demorton(o->key[v], &x, &y, &z);
            for (uint32_t k = o->pt_start[v]; k < o->pt_start[v] + o->pt_count[v]; k++) {
                const float *p = u + 3 * (size_t)o->order[k];
                uint32_t cell[3] = {x, y, z};
                for (int a = 0; a < 3; a++) assert_int_equal((uint32_t)((double)p[a] * (1 << l)), cell[a]);
            }
            /* neighbours vs brute force */
            for (int i = 0; i < 27; i++) {
                int32_t bf = gt_pr_find(o, l, (int64_t)x + i % 3 - 1, (int64_t)y + (i / 3) % 3 - 1, (int64_t)z + i / 9 - 1);
                assert_int_equal(o->nbr[27 * v + i], bf);
            }
            for (int i = 0; i < 125; i += 7) {
                int32_t bf = gt_pr_find(o, l, (int64_t)x + i % 5 - 2, (int64_t)y + (i / 5) % 5 - 2, (int64_t)z + i / 25 - 2);
                assert_int_equal(gt_pr_nbr125(o, (int32_t)v, i), bf);
            }
        }
    }
    /* order is a permutation */
    uint8_t *seen = calloc(o->npts, 1);
    for (size_t k = 0; k < o->npts; k++) {
        assert_true(o->order[k] < o->npts && !seen[o->order[k]]);
        seen[o->order[k]] = 1;
    }
    free(seen);
}

static void test_random_octrees(void **state)
{
    (void)state;
    gt_rng g = {42};
    int depths[] = {1, 3, 5, 6, 11, 7};
    int full[] = {0, 2, 5, 3, 5, 0};
    size_t ns[] = {50, 300, 2000, 5000, 3000, 1};
    for (int t = 0; t < 6; t++) {
        float *u = random_points(&g, ns[t], 1 + t % 5);
        gt_pr_octree o;
        GT_ASSERT_OK(gt_pr_octree_build_cpu(u, ns[t], depths[t], full[t], &o));
        check_octree(&o, u, full[t]);
        gt_pr_octree_free(&o);
        free(u);
    }
}

static void test_basis_integrals(void **state)
{
    (void)state;
    /* partition of unity and the known 1D mass/stiffness of the quadratic B-spline */
    for (double x = -2; x < 2; x += 0.01) {
        double s = 0;
        for (int j = -4; j <= 4; j++) s += gt_pr_bspline(x - j);
        assert_true(fabs(s - 1.0) < 1e-12);
    }
    /* int B^2 = 11/20, int B B(.-1) = 13/60, int B B(.-2) = 1/120 at level 0 */
    assert_true(fabs(gt_pr_integral1d(0, 0, 0, 0, 0, 0) - 11.0 / 20) < 1e-12);
    assert_true(fabs(gt_pr_integral1d(0, 0, 0, 0, 1, 0) - 13.0 / 60) < 1e-12);
    assert_true(fabs(gt_pr_integral1d(0, 0, 0, 0, 2, 0) - 1.0 / 120) < 1e-12);
    /* int B'^2 = 1, int B' B'(.-1) = -1/3, int B'B'(.-2) = -1/6; rows of the stiffness sum to 0 */
    assert_true(fabs(gt_pr_integral1d(0, 0, 1, 0, 0, 1) - 1.0) < 1e-12);
    assert_true(fabs(gt_pr_integral1d(0, 0, 1, 0, 1, 1) + 1.0 / 3) < 1e-12);
    assert_true(fabs(gt_pr_integral1d(0, 0, 1, 0, 2, 1) + 1.0 / 6) < 1e-12);
    /* cross-level: the coarse spline is the sum of fine ones (1,3,3,1)/4, so its
     * integral against a fine function matches the combination */
    for (int64_t i = -1; i < 5; i++) {
        double direct = gt_pr_integral1d(3, i, 1, 2, 1, 1);
        double comb = 0;
        const double w[4] = {0.25, 0.75, 0.75, 0.25};
        for (int k = 0; k < 4; k++) comb += w[k] * gt_pr_integral1d(3, i, 1, 3, 2 * 1 - 1 + k, 1);
        assert_true(fabs(direct - comb) < 1e-9 * (1 + fabs(direct)));
    }
}

/* A sample's split between levels (gt_pr_splat_weight): shares >= 0 that
 * sum to 1, only at the two levels around the clamped depth, continuous in
 * the depth (no jump where it crosses an integer); its area
 * (gt_pr_sample_area) at depth Dw + log4(W / (kappa spn)) is
 * kappa w_Dw^2 / W. */
static void test_splat_depth(void **state)
{
    (void)state;
    const int F = 3, D = 8;
    double prev[GT_PR_MAX_DEPTH + 1] = {0};
    for (int step = 0; step <= 1000; step++) {
        const double dep = 1.5 + 8.0 * step / 1000.0; /* 1.5 .. 9.5: both clamps */
        double sum = 0, w[GT_PR_MAX_DEPTH + 1];
        int nz = 0;
        for (int l = 0; l <= GT_PR_MAX_DEPTH; l++) {
            w[l] = gt_pr_splat_weight(dep, F, D, l);
            assert_true(w[l] >= 0.0 && w[l] <= 1.0);
            if (w[l] > 0) {
                nz++;
                const double dc = dep < F ? F : dep > D ? D : dep;
                assert_true(l >= F && l <= D && fabs(l - dc) < 1.0 + 1e-12);
            }
            sum += w[l];
            if (step > 0) assert_true(fabs(w[l] - prev[l]) <= 8.0 / 1000.0 + 1e-12);
            prev[l] = w[l];
        }
        assert_true(nz >= 1 && nz <= 2);
        assert_true(fabs(sum - 1.0) < 1e-12);
    }
    assert_true(gt_pr_splat_weight(6.0, F, D, 6) == 1.0 && gt_pr_splat_weight(6.0, F, D, 5) == 0.0);
    assert_true(fabs(gt_pr_splat_weight(6.25, F, D, 7) - 0.25) < 1e-12);
    assert_true(fabs(gt_pr_splat_weight(6.25, F, D, 6) - 0.75) < 1e-12);
    for (double W = 1.5; W < 200; W *= 1.7) {
        const int Dw = 6;
        const double spn = 1.5, dep = Dw + log(W / (GT_PR_KAPPA * spn)) / log(4.0);
        const double want = GT_PR_KAPPA * ldexp(1.0, -2 * Dw) / W;
        assert_true(fabs(gt_pr_sample_area(dep, spn) / want - 1.0) < 1e-6);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_morton_roundtrip),
        cmocka_unit_test(test_luts_definition),
        cmocka_unit_test(test_random_octrees),
        cmocka_unit_test(test_basis_integrals),
        cmocka_unit_test(test_splat_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
