/* CPU reference of marching cubes: analytic shapes (sphere, torus, gyroid),
 * watertightness and manifoldness on random volumes (many seeds), iso-valued
 * corners and NaNs, thin volumes, slab streaming == one pass, orientation,
 * flip, normals, the derived case table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "mc/mc.h"
#include "mc_check.h"

typedef double (*field_fn)(double x, double y, double z, const void *ctx);

static float *make_field(const int64_t d[3], field_fn f, const void *ctx)
{
    float *v = malloc((size_t)(d[0] * d[1] * d[2]) * sizeof(float));
    for (int64_t k = 0; k < d[2]; k++)
        for (int64_t j = 0; j < d[1]; j++)
            for (int64_t i = 0; i < d[0]; i++)
                v[(k * d[1] + j) * d[0] + i] = (float)f((double)i, (double)j, (double)k, ctx);
    return v;
}

static gt_mc_mesh extract(const float *v, const int64_t d[3], const gt_mc_params *p)
{
    gt_mc_mesh m;
    memset(&m, 0, sizeof m);
    GT_ASSERT_OK(gt_mc_extract(GT_DEVICE_CPU, v, d, p, &m, NULL));
    return m;
}

/* ---- sphere: f = R - |x - c| (in = inside), grid spacing h */
typedef struct { double c, R, h; } sph;
static double f_sphere(double x, double y, double z, const void *ctx)
{
    const sph *s = ctx;
    x = x * s->h - s->c, y = y * s->h - s->c, z = z * s->h - s->c;
    return s->R - sqrt(x * x + y * y + z * z);
}

static void test_sphere(void **state)
{
    (void)state;
    double prev_aerr = 1e9, prev_verr = 1e9;
    const double R = 1.0;
    for (int n = 12; n <= 48; n *= 2) {
        sph s = {1.5, R, 3.0 / (n - 1)};
        int64_t d[3] = {n, n, n};
        float *v = make_field(d, f_sphere, &s);
        gt_mc_params p;
        gt_mc_params_init(&p, 0.0);
        p.normals = true;
        for (int a = 0; a < 3; a++) p.dir[a][a] = s.h;
        gt_mc_mesh m = extract(v, d, &p);
        size_t ne = 0;
        assert_int_equal(mc_check_closed(&m, &ne), 0);
        assert_int_equal(mc_duplicate_positions(&m), 0);
        long chi = (long)m.nvert - (long)ne + (long)m.ntri;
        assert_int_equal(chi, 2);
        /* every vertex within one grid spacing of the sphere (linear
         * interpolation of |x| along an edge errs by O(h^2/R)) */
        for (size_t i = 0; i < m.nvert; i++) {
            double x = m.xyz[3 * i] - s.c, y = m.xyz[3 * i + 1] - s.c, z = m.xyz[3 * i + 2] - s.c;
            double r = sqrt(x * x + y * y + z * z);
            assert_true(fabs(r - R) < s.h);
            /* normals point toward decreasing values: outward */
            double dot = (m.nrm[3 * i] * x + m.nrm[3 * i + 1] * y + m.nrm[3 * i + 2] * z) / r;
            assert_true(dot > 0.95);
        }
        double A, V;
        mc_area_volume(&m, &A, &V);
        double aerr = fabs(A - 4 * M_PI) / (4 * M_PI), verr = fabs(V - 4.0 / 3 * M_PI) / (4.0 / 3 * M_PI);
        /* positive volume: triangles wound outward; errors shrink as h does */
        assert_true(V > 0);
        assert_true(aerr < prev_aerr && verr < prev_verr);
        assert_true(aerr < 0.06 && verr < 0.06);
        prev_aerr = aerr;
        prev_verr = verr;
        gt_mc_mesh_free(&m);
        free(v);
    }
    /* second order: at n = 48 (h = 0.064) both within 1% */
    assert_true(prev_aerr < 0.01 && prev_verr < 0.01);
}

/* ---- torus, chi 0 */
static double f_torus(double x, double y, double z, const void *ctx)
{
    (void)ctx;
    x -= 15, y -= 15, z -= 8.3;
    double q = sqrt(x * x + y * y) - 9.0;
    return 3.5 - sqrt(q * q + z * z);
}

static void test_torus(void **state)
{
    (void)state;
    int64_t d[3] = {31, 30, 17};
    float *v = make_field(d, f_torus, NULL);
    gt_mc_params p;
    gt_mc_params_init(&p, 0.0);
    gt_mc_mesh m = extract(v, d, &p);
    size_t ne = 0;
    assert_int_equal(mc_check_closed(&m, &ne), 0);
    assert_int_equal((long)m.nvert - (long)ne + (long)m.ntri, 0);
    double A, V;
    mc_area_volume(&m, &A, &V);
    /* area 4 pi^2 R r, volume 2 pi^2 R r^2; coarse grid: 5% */
    assert_true(fabs(A - 4 * M_PI * M_PI * 9 * 3.5) / (4 * M_PI * M_PI * 9 * 3.5) < 0.05);
    assert_true(fabs(V - 2 * M_PI * M_PI * 9 * 3.5 * 3.5) / (2 * M_PI * M_PI * 9 * 3.5 * 3.5) < 0.05);
    gt_mc_mesh_free(&m);
    free(v);
}

/* ---- gyroid inside a box (outside the box: out) so that it is closed */
static double f_gyroid(double x, double y, double z, const void *ctx)
{
    const int *n = ctx;
    if (x < 1 || y < 1 || z < 1 || x > n[0] - 2 || y > n[1] - 2 || z > n[2] - 2) return -1.0;
    double s = 2 * M_PI / 12.0;
    x *= s, y *= s, z *= s;
    return 0.9 - fabs(sin(x) * cos(y) + sin(y) * cos(z) + sin(z) * cos(x)); /* thickened sheet */
}

static void test_gyroid(void **state)
{
    (void)state;
    int n[3] = {37, 29, 33};
    int64_t d[3] = {37, 29, 33};
    float *v = make_field(d, f_gyroid, n);
    gt_mc_params p;
    gt_mc_params_init(&p, 0.0);
    gt_mc_mesh m = extract(v, d, &p);
    size_t ne = 0;
    assert_true(m.ntri > 1000);
    assert_int_equal(mc_check_closed(&m, &ne), 0);
    assert_int_equal(mc_duplicate_positions(&m), 0);
    /* Euler characteristic of a closed orientable surface is even */
    long chi = (long)m.nvert - (long)ne + (long)m.ntri;
    assert_int_equal(labs(chi) % 2, 0);
    double A, V;
    mc_area_volume(&m, &A, &V);
    assert_true(V > 0);
    gt_mc_mesh_free(&m);
    free(v);
}

/* ---- random volumes: kind 0 uniform, 1 values in {-1,0,1} (iso-valued
 * corners), 2 with NaNs; border planes out so the surface is closed */
static float *noise(const int64_t d[3], uint64_t seed, int kind)
{
    gt_rng r = {seed};
    size_t n = (size_t)(d[0] * d[1] * d[2]);
    float *v = malloc(n * sizeof(float));
    for (int64_t k = 0; k < d[2]; k++)
        for (int64_t j = 0; j < d[1]; j++)
            for (int64_t i = 0; i < d[0]; i++) {
                float x;
                double u = gt_rng_range(&r, -1, 1);
                if (kind == 1) x = (float)floor(u * 1.5 + 0.5);
                else if (kind == 2 && u > 0.8) x = NAN;
                else x = (float)u;
                if (i == 0 || j == 0 || k == 0 || i == d[0] - 1 || j == d[1] - 1 || k == d[2] - 1)
                    x = kind == 2 && (i + j + k) % 3 == 0 ? NAN : -1.0f;
                v[(k * d[1] + j) * d[0] + i] = x;
            }
    return v;
}

static void test_noise_watertight(void **state)
{
    (void)state;
    long total_tris = 0;
    for (int kind = 0; kind < 3; kind++)
        for (uint64_t seed = 1; seed <= 40; seed++) {
            int64_t d[3] = {5 + (int64_t)(seed % 7), 4 + (int64_t)(seed % 5), 6 + (int64_t)(seed % 3)};
            float *v = noise(d, seed * 7919 + (uint64_t)kind, kind);
            gt_mc_params p;
            gt_mc_params_init(&p, 0.0);
            gt_mc_mesh m = extract(v, d, &p);
            size_t ne = 0;
            int rc = mc_check_closed(&m, &ne);
            if (rc) fail_msg("kind %d seed %llu: mesh not closed/manifold (code %d)", kind, (unsigned long long)seed, rc);
            assert_int_equal(mc_duplicate_positions(&m), 0);
            /* closed orientable surfaces: chi even */
            assert_int_equal(labs((long)m.nvert - (long)ne + (long)m.ntri) % 2, 0);
            total_tris += (long)m.ntri;
            gt_mc_mesh_free(&m);
            free(v);
        }
    assert_true(total_tris > 10000); /* the check saw real work */
}

/* every one of the 256 cases appears in the random volumes above; check the
 * table itself: only crossed edges used, each crossed edge used */
static void test_table(void **state)
{
    (void)state;
    const gt_mc_table *t = gt_mc_table_get();
    assert_int_equal(t->bad_cases, 0);
    assert_int_equal(t->ntri[0], 0);
    assert_int_equal(t->ntri[255], 0);
    for (int c = 0; c < 256; c++) {
        unsigned crossed = 0, used = 0;
        for (int e = 0; e < 12; e++) {
            int a = e >> 2, u = a == 0 ? 1 : 0, w = a == 2 ? 1 : 2, o[3] = {0, 0, 0};
            o[u] = e & 1;
            o[w] = (e >> 1) & 1;
            int c0 = o[0] + 2 * o[1] + 4 * o[2], c1 = c0 + (1 << a);
            if (((c >> c0) & 1) != ((c >> c1) & 1)) crossed |= 1u << e;
        }
        for (int q = 0; q < 3 * t->ntri[c]; q++) used |= 1u << t->tri[c][q];
        assert_int_equal(used, crossed);
        /* complement: same number of triangles is not required (rule is not
         * symmetric), but both must be non-empty together */
        assert_int_equal(t->ntri[c] == 0, t->ntri[255 - c] == 0);
    }
}

/* ---- slab streaming gives the same mesh as one pass */
typedef struct { const float *v; size_t plane; int64_t last; } memsrc;
static gt_status rd(void *ctx, int64_t z0, int64_t nz, float *dst)
{
    memsrc *s = ctx;
    if (z0 < s->last) return gt_fail(GT_ERR_RUNTIME, "read went backwards");
    s->last = z0 + nz;
    memcpy(dst, s->v + (size_t)z0 * s->plane, (size_t)nz * s->plane * sizeof(float));
    return GT_OK;
}

static void test_slabs(void **state)
{
    (void)state;
    int64_t d[3] = {9, 7, 13};
    for (int kind = 0; kind < 2; kind++) {
        float *v = noise(d, 99 + (uint64_t)kind, kind);
        /* remove the closing border on one side so the surface meets the border */
        for (int64_t i = 0; i < d[0] * d[1]; i++) v[i] = (float)((i % 3) - 1);
        gt_mc_params p;
        gt_mc_params_init(&p, 0.0);
        p.normals = true;
        gt_mc_mesh one = extract(v, d, &p);
        assert_true(one.ntri > 0);
        for (int64_t P = 1; P <= d[2]; P++) {
            gt_mc_mesh m;
            memset(&m, 0, sizeof m);
            memsrc s = {v, (size_t)(d[0] * d[1]), 0};
            GT_ASSERT_OK(gt_mc_extract_stream(GT_DEVICE_CPU, d, rd, &s, &p, 0, P, &m, NULL));
            assert_int_equal(m.nvert, one.nvert);
            assert_int_equal(m.ntri, one.ntri);
            assert_memory_equal(m.tris, one.tris, one.ntri * 3 * sizeof(int32_t));
            assert_memory_equal(m.xyz, one.xyz, one.nvert * 3 * sizeof(float));
            assert_memory_equal(m.nrm, one.nrm, one.nvert * 3 * sizeof(float));
            gt_mc_mesh_free(&m);
        }
        /* from a memory budget: a few planes per slab */
        gt_mc_mesh m;
        memset(&m, 0, sizeof m);
        memsrc s = {v, (size_t)(d[0] * d[1]), 0};
        GT_ASSERT_OK(gt_mc_extract_stream(GT_DEVICE_CPU, d, rd, &s, &p, 6 * 63 * 13, 0, &m, NULL));
        assert_int_equal(m.ntri, one.ntri);
        assert_memory_equal(m.tris, one.tris, one.ntri * 3 * sizeof(int32_t));
        gt_mc_mesh_free(&m);
        gt_mc_mesh_free(&one);
        free(v);
    }
}

/* ---- thin volumes and out-of-range iso */
static void test_degenerate(void **state)
{
    (void)state;
    const int64_t dims[][3] = {{1, 6, 6}, {6, 1, 6}, {6, 6, 1}, {1, 1, 1}, {2, 2, 2}, {2, 7, 2}, {33, 2, 3}};
    for (size_t c = 0; c < sizeof dims / sizeof dims[0]; c++) {
        float *v = noise(dims[c], 5 + c, 0);
        gt_rng r = {c};
        for (int64_t i = 0; i < dims[c][0] * dims[c][1] * dims[c][2]; i++) v[i] = (float)gt_rng_range(&r, -1, 1);
        gt_mc_params p;
        gt_mc_params_init(&p, 0.0);
        p.normals = true;
        gt_mc_mesh m = extract(v, dims[c], &p);
        bool thin = dims[c][0] < 2 || dims[c][1] < 2 || dims[c][2] < 2;
        if (thin) {
            assert_int_equal(m.ntri, 0);
            assert_int_equal(m.nvert, 0);
        }
        /* every triangle edge used once (border) or twice, consistent directions */
        for (size_t t = 0; t < 3 * m.ntri; t++) assert_true(m.tris[t] >= 0 && (size_t)m.tris[t] < m.nvert);
        for (size_t i = 0; i < 3 * m.nvert; i++) assert_true(isfinite(m.xyz[i]) && isfinite(m.nrm[i]));
        gt_mc_mesh_free(&m);
        /* iso above the data: empty */
        gt_mc_params_init(&p, 5.0);
        m = extract(v, dims[c], &p);
        assert_int_equal(m.nvert, 0);
        assert_int_equal(m.ntri, 0);
        gt_mc_mesh_free(&m);
        free(v);
    }
    /* non-finite iso is a usage error */
    gt_mc_params p;
    gt_mc_params_init(&p, NAN);
    gt_mc_mesh m;
    memset(&m, 0, sizeof m);
    float one = 0;
    int64_t d1[3] = {1, 1, 1};
    assert_int_equal(gt_mc_extract(GT_DEVICE_CPU, &one, d1, &p, &m, NULL), GT_ERR_USAGE);
}

/* ---- flip, left-handed directions, iso exactly on corner values */
static void test_orientation(void **state)
{
    (void)state;
    sph s = {1.5, 1.0, 3.0 / 20};
    int64_t d[3] = {21, 21, 21};
    float *v = make_field(d, f_sphere, &s);
    gt_mc_params p;
    gt_mc_params_init(&p, 0.0);
    p.normals = true;
    gt_mc_mesh a = extract(v, d, &p);
    p.flip = true;
    gt_mc_mesh b = extract(v, d, &p);
    assert_int_equal(a.ntri, b.ntri);
    for (size_t t = 0; t < a.ntri; t++) {
        assert_int_equal(a.tris[3 * t], b.tris[3 * t]);
        assert_int_equal(a.tris[3 * t + 1], b.tris[3 * t + 2]);
    }
    for (size_t i = 0; i < 3 * a.nvert; i++) assert_true(a.nrm[i] == -b.nrm[i]);
    double A, V, A2, V2;
    mc_area_volume(&a, &A, &V);
    mc_area_volume(&b, &A2, &V2);
    assert_true(V > 0 && V2 < 0);
    /* mirrored x axis (negative determinant): still outward */
    p.flip = false;
    p.dir[0][0] = -1;
    gt_mc_mesh c = extract(v, d, &p);
    mc_area_volume(&c, &A2, &V2);
    assert_true(V2 > 0);
    gt_mc_mesh_free(&a);
    gt_mc_mesh_free(&b);
    gt_mc_mesh_free(&c);
    free(v);
}

static void test_iso_on_values(void **state)
{
    (void)state;
    /* integer data with iso equal to data values: no zero-length edges, closed */
    int64_t d[3] = {12, 11, 10};
    for (uint64_t seed = 1; seed <= 20; seed++) {
        float *v = noise(d, seed, 1);
        for (int64_t i = 0; i < d[0] * d[1] * d[2]; i++) v[i] += 1.0f; /* {0,1,2}, border 0 */
        gt_mc_params p;
        gt_mc_params_init(&p, 1.0);
        gt_mc_mesh m = extract(v, d, &p);
        size_t ne = 0;
        assert_int_equal(mc_check_closed(&m, &ne), 0);
        assert_int_equal(mc_duplicate_positions(&m), 0);
        for (size_t t = 0; t < m.ntri; t++)
            for (int w = 0; w < 3; w++) {
                const float *x = m.xyz + 3 * m.tris[3 * t + w], *y = m.xyz + 3 * m.tris[3 * t + (w + 1) % 3];
                assert_true(x[0] != y[0] || x[1] != y[1] || x[2] != y[2]);
            }
        gt_mc_mesh_free(&m);
        free(v);
    }
}

/* a real shape: a shell around the Stanford bunny (testdata/mc/bunny_dist.nrrd) */
static void test_bunny_shell(void **state)
{
    (void)state;
    int64_t d[3] = {56, 56, 46};
    float *v = mc_load_u8_nrrd("bunny_dist.nrrd", 56 * 56 * 46);
    if (!v) fail_msg("testdata/mc/bunny_dist.nrrd missing or wrong size");
    gt_mc_params p;
    gt_mc_params_init(&p, 48.0); /* the file's iso key; integer data: many iso-valued corners */
    p.normals = true;
    gt_mc_mesh m = extract(v, d, &p);
    size_t ne = 0;
    assert_true(m.ntri > 5000);
    assert_int_equal(mc_check_closed(&m, &ne), 0);
    assert_int_equal(mc_duplicate_positions(&m), 0);
    assert_int_equal(labs((long)m.nvert - (long)ne + (long)m.ntri) % 2, 0);
    gt_mc_mesh_free(&m);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_sphere),
        cmocka_unit_test(test_torus),
        cmocka_unit_test(test_gyroid),
        cmocka_unit_test(test_noise_watertight),
        cmocka_unit_test(test_iso_on_values),
        cmocka_unit_test(test_slabs),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_orientation),
        cmocka_unit_test(test_bunny_shell),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
