/* The CUDA marching cubes' index logic, run on the host against the CPU
 * reference's numbering. kernels/mc/mc_words.h holds the functions the
 * kernels compile: the slab geometry, per-word vertex and triangle counts,
 * packed and separate word offsets, word coordinates (32- and 64-bit
 * division), the decode of a word's r-th vertex, and the vertex numbers of a
 * voxel's corners. Here they run over a volume packed to in bits (the
 * layout mc_words.h defines) word by word, and build the slab's mesh, which
 * must equal gt_mc_slab_cpu's: the same vertices in the same order, bit for
 * bit (both place them with mc_math.h, so a difference is a wrong point or
 * axis), and the same triangles. Random volumes of odd sizes (noise,
 * iso-valued corners, NaNs), one slab and two, a vertex base near 2^31
 * (32-bit modular vertex numbers), flipped and left-handed geometry.
 * What this cannot see is how the kernels spread words over threads and
 * shared memory: tests/mc/test_mc_gpu compares the GPU with the CPU. Runs
 * without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "kernels/mc/mc_words.h"
#include "mc/mc.h"
#include "mc/mc_math.h"

typedef struct {
    int two_scans; /* never pack the counts */
    int wide;      /* 64-bit word coordinates (as for slabs past 2^32 words) */
} variant;

/* one slab [z0, z1) through mc_words.h, appended to out (vertex numbers
 * from vbase; out->nvert is advanced by the slab's own vertices) */
static void emulate(const float *vol, const gt_mc_geom *G, int64_t z0, int64_t z1, uint64_t vbase, variant var,
                    gt_mc_mesh *out)
{
    const int64_t X = G->dims[0], Y = G->dims[1], Z = G->dims[2];
    gt_mcw_geo g;
    uint64_t nwc, nown;
    gt_mcw_geo_init(&g, G, vol, 0, z0, z1, var.two_scans, &nwc, &nown);
    if (var.wide) g.small = 0;
    const int64_t kb = z1 + 2 < Z ? z1 + 2 : Z;
    uint32_t *bits = calloc((size_t)((kb - z0) * Y * g.W) + 1, sizeof *bits);
    for (int64_t k = z0; k < kb; k++)
        for (int64_t j = 0; j < Y; j++)
            for (int64_t i = 0; i < X; i++)
                if (vol[(k * Y + j) * X + i] >= G->isof) /* NaN: out */
                    bits[((k - z0) * Y + j) * g.W + i / 32] |= 1u << (i % 32);
    const gt_mc_table *tab = gt_mc_table_get();
    uint64_t *offV = calloc(nwc + 1, sizeof *offV), *offT = calloc(nwc + 1, sizeof *offT);
    for (uint64_t x = 0; x < nwc; x++) {
        unsigned nv, nt;
        gt_mcw_word_counts(bits, &g, x, tab->ntri, &nv, &nt);
        if (g.packed) offV[x] = (uint64_t)nv | (uint64_t)nt << 32;
        else offV[x] = nv, offT[x] = nt;
    }
    uint64_t sv = 0, st = 0; /* exclusive scans over nwc + 1 entries, as the driver's */
    for (uint64_t x = 0; x <= nwc; x++) {
        uint64_t a = offV[x], b = offT[x];
        offV[x] = sv, offT[x] = st;
        sv += a, st += b;
    }
    const uint64_t vown = gt_mcw_offv(&g, offV, nown), ntri = gt_mcw_offt(&g, offV, offT, nwc);
    GT_ASSERT_OK(gt_mc_mesh_reserve(out, (size_t)vown, (size_t)ntri, G->normals));
    float *xyz = out->xyz + 3 * out->nvert, *nrm = G->normals ? out->nrm + 3 * out->nvert : NULL;
    int32_t *tris = out->tris + 3 * out->ntri;
    char *seen = calloc((size_t)vown + 1, 1);
    for (uint64_t x = 0; x < nown; x++) {
        int64_t w, j, k;
        gt_mcw_coords(&g, x, &w, &j, &k);
        const gt_mcw_prow pr = gt_mcw_point_row(bits, &g, j, k, w);
        const uint64_t v0 = gt_mcw_offv(&g, offV, x);
        assert_int_equal(v0 + gt_mcw_vcount(&pr), gt_mcw_offv(&g, offV, x + 1));
        for (unsigned r = 0; r < gt_mcw_vcount(&pr); r++) {
            unsigned b;
            int a;
            gt_mcw_vertex_at(pr.xe, pr.ye, pr.ze, r, &b, &a);
            const int64_t i = 32 * w + b;
            assert_true(i < X && a >= 0 && a < 3);
            assert_false(seen[v0 + r]);
            seen[v0 + r] = 1;
            const float f0 = gt_mc_at(g.vol, X, Y, g.zb, i, j, k);
            const float f1 = gt_mc_at(g.vol, X, Y, g.zb, i + (a == 0), j + (a == 1), k + (a == 2));
            gt_mc_vertex(g.vol, X, Y, Z, g.zb, g.origin, g.dir, g.dinv, g.nsign, g.iso, i, j, k, a, f0, f1,
                         xyz + 3 * (v0 + r), nrm ? nrm + 3 * (v0 + r) : NULL);
        }
        if (!gt_mcw_is_voxrow(&g, j, k)) continue;
        const gt_mcw_vrows vr = gt_mcw_voxel_rows(bits, &g, j, k, w);
        uint32_t ne = gt_mcw_nonempty(&g, &vr, w), m[12], base[8], mn;
        uint64_t t = gt_mcw_offt(&g, offV, offT, x);
        if (ne) gt_mcw_corner_rows(bits, &g, offV, vbase, x, w, j, k, m, base, &mn, 1);
        while (ne) {
            const unsigned b = (unsigned)(gt_mcw_ffs(ne) - 1);
            ne &= ne - 1u;
            const unsigned cube = gt_mcw_cube(&vr, b);
            for (int q = 0; q < tab->ntri[cube]; q++, t++) {
                int32_t idx[3];
                for (int c = 0; c < 3; c++)
                    idx[c] = (int32_t)gt_mcw_corner_vertex(m, base, &mn, 1, tab->tri[cube][3 * q + c], b);
                tris[3 * t] = idx[0];
                tris[3 * t + 1] = g.reverse ? idx[2] : idx[1];
                tris[3 * t + 2] = g.reverse ? idx[1] : idx[2];
            }
        }
        assert_int_equal(t, gt_mcw_offt(&g, offV, offT, x + 1));
    }
    for (uint64_t v = 0; v < vown; v++) assert_true(seen[v]);
    out->nvert += (size_t)vown;
    out->ntri += (size_t)ntri;
    free(seen);
    free(offV);
    free(offT);
    free(bits);
}

static void assert_same(const gt_mc_mesh *ref, const gt_mc_mesh *emu, int64_t tri_offset, const char *what)
{
    if (ref->nvert != emu->nvert || ref->ntri != emu->ntri)
        fail_msg("%s: V %zu/%zu T %zu/%zu", what, ref->nvert, emu->nvert, ref->ntri, emu->ntri);
    if (ref->nvert && memcmp(ref->xyz, emu->xyz, 3 * ref->nvert * sizeof(float)))
        fail_msg("%s: vertex positions differ", what);
    if (ref->nvert && (ref->nrm != NULL) != (emu->nrm != NULL)) fail_msg("%s: normals", what);
    if (ref->nvert && ref->nrm && memcmp(ref->nrm, emu->nrm, 3 * ref->nvert * sizeof(float)))
        fail_msg("%s: normals differ", what);
    for (size_t t = 0; t < 3 * ref->ntri; t++)
        if ((int64_t)emu->tris[t] - tri_offset != ref->tris[t])
            fail_msg("%s: triangle %zu corner %zu: %lld, CPU %d", what, t / 3, t % 3,
                     (long long)emu->tris[t] - tri_offset, ref->tris[t]);
}

static float *volume(const int64_t d[3], uint64_t seed, int kind)
{
    gt_rng r = {seed};
    size_t n = (size_t)(d[0] * d[1] * d[2]);
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        double u = gt_rng_range(&r, -1, 1);
        if (kind == 1) u = floor(u * 1.5 + 0.5); /* iso-valued corners */
        if (kind == 2 && u > 0.85) u = NAN;
        v[i] = (float)u;
    }
    return v;
}

static void test_words_match_cpu(void **state)
{
    (void)state;
    const int64_t dims[][3] = {{33, 5, 4}, {61, 3, 3}, {2, 2, 2},  {1, 4, 4},  {4, 1, 4},  {4, 4, 1},
                               {31, 2, 5}, {32, 3, 3}, {64, 3, 3}, {91, 2, 2}, {59, 4, 3}, {30, 3, 2},
                               {29, 3, 3}, {520, 2, 2}, {516, 3, 2}, {96, 7, 5}, {33, 33, 9}};
    const variant vars[] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    int cases = 0;
    for (size_t c = 0; c < sizeof dims / sizeof dims[0]; c++)
        for (int kind = 0; kind < 3; kind++) {
            const int64_t *d = dims[c];
            float *vol = volume(d, 77 + 3 * c + (uint64_t)kind, kind);
            gt_mc_params p;
            gt_mc_params_init(&p, 0.0);
            p.normals = (c + (size_t)kind) % 2 == 0;
            p.flip = kind == 1;
            if (c % 3 == 0) p.dir[2][2] = -1.5; /* left-handed: winding reversed */
            p.dir[1][0] = 0.25;
            p.origin[1] = 2;
            gt_mc_geom G;
            GT_ASSERT_OK(gt_mc_geom_init(&G, d, &p));
            const int64_t Z = d[2], zh = Z / 2;
            /* the whole volume, then two slabs numbered on from the first */
            gt_mc_mesh ref1, ref2;
            memset(&ref1, 0, sizeof ref1);
            memset(&ref2, 0, sizeof ref2);
            GT_ASSERT_OK(gt_mc_slab_cpu(vol, 0, Z, 0, Z, &G, &ref1));
            if (zh > 0) {
                GT_ASSERT_OK(gt_mc_slab_cpu(vol, 0, Z, 0, zh, &G, &ref2));
                GT_ASSERT_OK(gt_mc_slab_cpu(vol, 0, Z, zh, Z, &G, &ref2));
            }
            for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
                char what[160];
                snprintf(what, sizeof what, "%lldx%lldx%lld kind %d two_scans %d wide %d", (long long)d[0],
                         (long long)d[1], (long long)d[2], kind, vars[k].two_scans, vars[k].wide);
                gt_mc_mesh e;
                memset(&e, 0, sizeof e);
                emulate(vol, &G, 0, Z, 0, vars[k], &e);
                assert_same(&ref1, &e, 0, what);
                gt_mc_mesh_free(&e);
                /* numbered from a base near 2^31: 32-bit sums of the bases */
                const uint64_t big = (1ull << 31) - 3 * (uint64_t)(d[0] * d[1] * d[2]) - 1;
                memset(&e, 0, sizeof e);
                emulate(vol, &G, 0, Z, big, vars[k], &e);
                assert_same(&ref1, &e, (int64_t)big, what);
                gt_mc_mesh_free(&e);
                if (zh > 0) {
                    memset(&e, 0, sizeof e);
                    emulate(vol, &G, 0, zh, 0, vars[k], &e);
                    emulate(vol, &G, zh, Z, e.nvert, vars[k], &e);
                    assert_same(&ref2, &e, 0, what);
                    gt_mc_mesh_free(&e);
                }
                cases++;
            }
            gt_mc_mesh_free(&ref1);
            gt_mc_mesh_free(&ref2);
            free(vol);
        }
    assert_int_equal(cases, 17 * 3 * 4);
}

/* the vertex decode on masks worked out by hand from the numbering (a
 * point's vertices follow the lower points' and go in axis order) */
static void test_vertex_decode_by_hand(void **state)
{
    (void)state;
    unsigned b;
    int a;
    /* point 0 has crossed x and z edges: its vertices 0, 1 are on axes 0, 2 */
    gt_mcw_vertex_at(1u, 0u, 1u, 1, &b, &a);
    assert_int_equal(b, 0);
    assert_int_equal(a, 2);
    /* point 3 with a y edge after point 0's x edge: vertex 1 is point 3, axis 1 */
    gt_mcw_vertex_at(1u, 8u, 0u, 1, &b, &a);
    assert_int_equal(b, 3);
    assert_int_equal(a, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_match_cpu),
        cmocka_unit_test(test_vertex_decode_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
