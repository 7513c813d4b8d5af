/* GPU marching cubes against the CPU reference: same counts, same triangles
 * (as index-triple sets after canonical rotation; the order is expected to be
 * equal too), positions and normals within 1e-5 relative (both compute in
 * double from the same float inputs; the only difference is the order of
 * floating-point operations). Random fields (with iso-valued corners and
 * NaNs), analytic ones, sizes not multiples of the warp width, thin volumes,
 * slab mode == one pass. Skips (77) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gt_test.h"
#include "common/gpu_runtime.h"
#include "kernels/mc/mc_cuda.h"
#include "mc/mc.h"
#include "mc_check.h"

static float *field(const int64_t d[3], uint64_t seed, int kind)
{
    gt_rng r = {seed};
    size_t n = (size_t)(d[0] * d[1] * d[2]);
    float *v = malloc(n * sizeof(float));
    for (int64_t k = 0; k < d[2]; k++)
        for (int64_t j = 0; j < d[1]; j++)
            for (int64_t i = 0; i < d[0]; i++) {
                double u = gt_rng_range(&r, -1, 1), x;
                if (kind == 0) x = u;                                      /* noise */
                else if (kind == 1) x = floor(u * 1.5 + 0.5);              /* iso-valued corners */
                else if (kind == 2) x = u > 0.85 ? NAN : u;                /* NaNs */
                else {                                                     /* gyroid */
                    double s = 2 * M_PI / 17.0;
                    x = sin(i * s) * cos(j * s) + sin(j * s) * cos(k * s) + sin(k * s) * cos(i * s);
                }
                v[(k * d[1] + j) * d[0] + i] = (float)x;
            }
    return v;
}

static void compare(const float *v, const int64_t d[3], const gt_mc_params *p)
{
    gt_mc_mesh a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    GT_ASSERT_OK(gt_mc_extract(GT_DEVICE_CPU, v, d, p, &a, NULL));
    GT_ASSERT_OK(gt_mc_extract(GT_DEVICE_CUDA, v, d, p, &b, NULL));
    double md;
    int rc = mc_same_mesh(&a, &b, 1e-5, &md);
    if (rc)
        fail_msg("dims %lldx%lldx%lld: GPU != CPU (code %d; V %zu/%zu T %zu/%zu; max diff %g)",
                 (long long)d[0], (long long)d[1], (long long)d[2], rc, a.nvert, b.nvert, a.ntri, b.ntri, md);
    gt_mc_mesh_free(&a);
    gt_mc_mesh_free(&b);
}

static void test_random_and_analytic(void **state)
{
    (void)state;
    const int64_t dims[][3] = {{32, 32, 32}, {33, 31, 17}, {97, 5, 9}, {1, 8, 8}, {8, 1, 8}, {8, 8, 1},
                               {2, 2, 2}, {65, 64, 3}, {130, 70, 40}, {31, 2, 33}};
    for (size_t c = 0; c < sizeof dims / sizeof dims[0]; c++)
        for (int kind = 0; kind < 4; kind++) {
            float *v = field(dims[c], 1000 + c * 4 + (uint64_t)kind, kind);
            gt_mc_params p;
            gt_mc_params_init(&p, kind == 3 ? 0.3 : 0.0);
            p.normals = (c + (size_t)kind) % 2 == 0;
            p.flip = kind == 2;
            p.dir[0][0] = 0.5;
            p.dir[1][1] = 2.0;
            p.dir[2][1] = 0.25; /* sheared */
            p.origin[0] = -3;
            compare(v, dims[c], &p);
            free(v);
        }
}

typedef struct { const float *v; size_t plane; } memsrc;
static gt_status rd(void *ctx, int64_t z0, int64_t nz, float *dst)
{
    memsrc *s = ctx;
    memcpy(dst, s->v + (size_t)z0 * s->plane, (size_t)nz * s->plane * sizeof(float));
    return GT_OK;
}

static void test_slabs(void **state)
{
    (void)state;
    int64_t d[3] = {45, 38, 29};
    for (int kind = 0; kind < 4; kind++) {
        float *v = field(d, 77 + (uint64_t)kind, kind);
        gt_mc_params p;
        gt_mc_params_init(&p, 0.1);
        p.normals = true;
        gt_mc_mesh one;
        memset(&one, 0, sizeof one);
        GT_ASSERT_OK(gt_mc_extract(GT_DEVICE_CPU, v, d, &p, &one, NULL));
        const int64_t planes[] = {1, 2, 5, 28, 29};
        for (size_t q = 0; q < sizeof planes / sizeof planes[0]; q++) {
            gt_mc_mesh m;
            memset(&m, 0, sizeof m);
            memsrc s = {v, (size_t)(d[0] * d[1])};
            GT_ASSERT_OK(gt_mc_extract_stream(GT_DEVICE_CUDA, d, rd, &s, &p, 0, planes[q], &m, NULL));
            double md;
            int rc = mc_same_mesh(&one, &m, 1e-5, &md);
            if (rc) fail_msg("slabs of %lld planes: != one CPU pass (code %d, diff %g)", (long long)planes[q], rc, md);
            gt_mc_mesh_free(&m);
        }
        /* from a device-memory budget */
        gt_mc_mesh m;
        memset(&m, 0, sizeof m);
        memsrc s = {v, (size_t)(d[0] * d[1])};
        GT_ASSERT_OK(gt_mc_extract_stream(GT_DEVICE_CUDA, d, rd, &s, &p, 400000, 0, &m, NULL));
        double md;
        assert_int_equal(mc_same_mesh(&one, &m, 1e-5, &md), 0);
        gt_mc_mesh_free(&m);
        gt_mc_mesh_free(&one);
        free(v);
    }
}

/* The overlapped upload (pinned staging slots, several pieces per slab):
 * the reader is asked for each plane exactly once, in z order, in pieces of
 * at most the slot size (planes the last slab brought up stay on the
 * device), and the mesh is the CPU's. */
typedef struct { const float *v; size_t plane; int64_t next, maxpiece; int bad; } seqsrc;
static gt_status seq_rd(void *ctx, int64_t z0, int64_t nz, float *dst)
{
    seqsrc *s = ctx;
    if (z0 != s->next || nz < 1 || nz > s->maxpiece) s->bad++;
    s->next = z0 + nz;
    memcpy(dst, s->v + (size_t)z0 * s->plane, (size_t)nz * s->plane * sizeof(float));
    return GT_OK;
}

static void test_staged_upload(void **state)
{
    (void)state;
    int64_t d[3] = {67, 41, 37};
    for (int kind = 0; kind < 4; kind += 3) {
        float *v = field(d, 500 + (uint64_t)kind, kind);
        gt_mc_params p;
        gt_mc_params_init(&p, kind == 3 ? 0.3 : 0.05);
        p.normals = true;
        gt_mc_mesh one;
        memset(&one, 0, sizeof one);
        GT_ASSERT_OK(gt_mc_extract(GT_DEVICE_CPU, v, d, &p, &one, NULL));
        const char *stage[] = {"1", "2", "3", "7", "100"};
        const int64_t planes[] = {1, 2, 5, 36, 37};
        for (size_t a = 0; a < sizeof stage / sizeof stage[0]; a++)
            for (size_t q = 0; q < sizeof planes / sizeof planes[0]; q++) {
                setenv("GT_MC_STAGE_PLANES", stage[a], 1);
                gt_mc_mesh m;
                memset(&m, 0, sizeof m);
                seqsrc s = {v, (size_t)(d[0] * d[1]), 0, atoll(stage[a]), 0};
                gt_timings tm;
                gt_timings_init(&tm);
                GT_ASSERT_OK(gt_mc_extract_stream(GT_DEVICE_CUDA, d, seq_rd, &s, &p, 0, planes[q], &m, &tm));
                unsetenv("GT_MC_STAGE_PLANES");
                if (s.bad || s.next != d[2])
                    fail_msg("stage %s, slabs of %lld: reads out of order, repeated or too large (%d bad, ended at %lld)",
                             stage[a], (long long)planes[q], s.bad, (long long)s.next);
                assert_true(gt_timings_get(&tm, "read (overlaps upload)") > 0);
                double md;
                int rc = mc_same_mesh(&one, &m, 1e-5, &md);
                if (rc)
                    fail_msg("stage %s planes, slabs of %lld: != one CPU pass (code %d, diff %g)", stage[a],
                             (long long)planes[q], rc, md);
                gt_mc_mesh_free(&m);
            }
        gt_mc_mesh_free(&one);
        free(v);
    }
}

/* closed meshes on the GPU too (noise inside an out border) */
static void test_gpu_watertight(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        int64_t d[3] = {40 + (int64_t)seed, 33, 21};
        float *v = field(d, seed, seed % 2);
        for (int64_t k = 0; k < d[2]; k++)
            for (int64_t j = 0; j < d[1]; j++)
                for (int64_t i = 0; i < d[0]; i++)
                    if (i == 0 || j == 0 || k == 0 || i == d[0] - 1 || j == d[1] - 1 || k == d[2] - 1)
                        v[(k * d[1] + j) * d[0] + i] = -1;
        gt_mc_params p;
        gt_mc_params_init(&p, 0.0);
        gt_mc_mesh m;
        memset(&m, 0, sizeof m);
        GT_ASSERT_OK(gt_mc_extract(GT_DEVICE_CUDA, v, d, &p, &m, NULL));
        size_t ne = 0;
        assert_int_equal(mc_check_closed(&m, &ne), 0);
        assert_int_equal(mc_duplicate_positions(&m), 0);
        gt_mc_mesh_free(&m);
        free(v);
    }
}

/* the shipped uint8 volume (testdata/mc), read as plain bytes */
static void test_testdata_blobs(void **state)
{
    (void)state;
    const char *td = getenv("GT_TESTDATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/mc/blobs_24x20x16.u8.raw", td ? td : "testdata");
    FILE *f = fopen(path, "rb");
    if (!f) f = fopen("testdata/mc/blobs_24x20x16.u8.raw", "rb"); /* from the repo root */
    if (!f) {
        printf("note: %s not found; skipping\n", path);
        skip();
    }
    int64_t d[3] = {24, 20, 16};
    uint8_t raw[24 * 20 * 16];
    assert_int_equal(fread(raw, 1, sizeof raw, f), sizeof raw);
    fclose(f);
    float v[24 * 20 * 16];
    for (size_t i = 0; i < sizeof raw; i++) v[i] = raw[i];
    const double isos[] = {1, 64, 128, 200, 255};
    for (size_t q = 0; q < sizeof isos / sizeof isos[0]; q++) {
        gt_mc_params p;
        gt_mc_params_init(&p, isos[q]); /* iso equal to data values: the >= rule */
        p.normals = true;
        p.dir[0][0] = p.dir[1][1] = 0.5;
        compare(v, d, &p);
    }
}

/* a real shape: the shell around the Stanford bunny, GPU == CPU, also in slabs */
static void test_bunny(void **state)
{
    (void)state;
    int64_t d[3] = {56, 56, 46};
    float *v = mc_load_u8_nrrd("bunny_dist.nrrd", 56 * 56 * 46);
    if (!v) {
        printf("note: testdata/mc/bunny_dist.nrrd not found; skipping\n");
        skip();
    }
    gt_mc_params p;
    gt_mc_params_init(&p, 48.0);
    p.normals = true;
    p.dir[0][0] = p.dir[1][1] = p.dir[2][2] = 0.0032437;
    compare(v, d, &p);
    gt_mc_mesh one, m;
    memset(&one, 0, sizeof one);
    memset(&m, 0, sizeof m);
    GT_ASSERT_OK(gt_mc_extract(GT_DEVICE_CPU, v, d, &p, &one, NULL));
    memsrc s = {v, (size_t)(d[0] * d[1])};
    GT_ASSERT_OK(gt_mc_extract_stream(GT_DEVICE_CUDA, d, rd, &s, &p, 0, 7, &m, NULL));
    double md;
    assert_int_equal(mc_same_mesh(&one, &m, 1e-5, &md), 0);
    gt_mc_mesh_free(&one);
    gt_mc_mesh_free(&m);
    free(v);
}

/* the CUDA context's two layouts of the per-word offsets (one packed scan for
 * slabs small enough, two scans beyond) give the CPU mesh, also in slabs with
 * a vertex base */
static void test_offset_layouts(void **state)
{
    (void)state;
    int64_t d[3] = {75, 38, 21};
    for (int kind = 0; kind < 4; kind++) {
        float *v = field(d, 4242 + (uint64_t)kind, kind);
        gt_mc_params p;
        gt_mc_params_init(&p, 0.05);
        p.normals = kind % 2 == 0;
        p.flip = kind == 1;
        gt_mc_geom g;
        GT_ASSERT_OK(gt_mc_geom_init(&g, d, &p));
        gt_mc_mesh one;
        memset(&one, 0, sizeof one);
        GT_ASSERT_OK(gt_mc_extract(GT_DEVICE_CPU, v, d, &p, &one, NULL));
        for (int two = 0; two < 2; two++) {
            gt_mc_cuda *c = NULL;
            GT_ASSERT_OK(gt_mc_cuda_create(&g, d[2], &c));
            gt_mc_cuda_force_two_scans(c, two != 0);
            GT_ASSERT_OK(gt_mc_cuda_upload(c, v, 0, d[2], NULL));
            gt_mc_mesh m;
            memset(&m, 0, sizeof m);
            const int64_t cuts[] = {0, 8, 9, d[2]}; /* slabs [0,8) [8,9) [9,Z) of one upload */
            for (int q = 0; q < 3; q++) {
                uint64_t nv = 0, nt = 0;
                GT_ASSERT_OK(gt_mc_cuda_slab(c, cuts[q], cuts[q + 1], m.nvert, &nv, &nt, NULL));
                GT_ASSERT_OK(gt_mc_cuda_download(c, &m, NULL));
            }
            gt_mc_cuda_destroy(c);
            double md;
            int rc = mc_same_mesh(&one, &m, 1e-5, &md);
            if (rc) fail_msg("kind %d, %s: != CPU (code %d, diff %g)", kind, two ? "two scans" : "packed", rc, md);
            gt_mc_mesh_free(&m);
        }
        gt_mc_mesh_free(&one);
        free(v);
    }
}

/* ---- the mesh straight from the device to a PLY (gt_mc_extract_stream_ply):
 * the same bytes as the whole-mesh download then gt_ply_write_trimesh, for
 * many small pieces and the default ones, all formats, with and without
 * normals; slabs take the host path (not overlapped), same bytes too */
typedef struct mem_vol {
    const float *v;
    size_t plane;
} mem_vol;

static gt_status mem_planes(void *ctx, int64_t z0, int64_t nz, float *dst)
{
    const mem_vol *m = ctx;
    memcpy(dst, m->v + (size_t)z0 * m->plane, (size_t)nz * m->plane * sizeof(float));
    return GT_OK;
}

static void test_ply_from_device(void **state)
{
    (void)state;
    const int64_t d[3] = {61, 47, 53};
    float *v = field(d, 5, 3);
    mem_vol mv = {v, (size_t)(d[0] * d[1])};
    char dir[] = "/tmp/gt_mcply_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pa[300], pb[300];
    snprintf(pa, sizeof pa, "%s/whole.ply", dir);
    snprintf(pb, sizeof pb, "%s/pieces.ply", dir);
    const char *pieces[] = {"997", "1000", NULL};
    for (int pc = 0; pc < 3; pc++)
        for (int nrm = 0; nrm < 2; nrm++)
            for (int fmt = 0; fmt < 3; fmt++)
                for (int slabs = 0; slabs < 2; slabs++) {
                    if (pieces[pc]) setenv("GT_PLY_PIECE_ROWS", pieces[pc], 1);
                    else unsetenv("GT_PLY_PIECE_ROWS");
                    gt_mc_params p;
                    gt_mc_params_init(&p, 0.1);
                    p.normals = nrm;
                    const int64_t P = slabs ? 7 : 0;
                    gt_mc_mesh m;
                    memset(&m, 0, sizeof m);
                    GT_ASSERT_OK(gt_mc_extract_stream(GT_DEVICE_CUDA, d, mem_planes, &mv, &p, 0, P, &m, NULL));
                    assert_true(m.nvert > 3000); /* several pieces of 1000 */
                    GT_ASSERT_OK(gt_ply_write_trimesh(pa, m.nvert, m.xyz, nrm ? m.nrm : NULL, 0, NULL, NULL, m.ntri,
                                                      m.tris, (gt_ply_format)fmt));
                    gt_mc_ply_result r;
                    gt_timings tm;
                    gt_timings_init(&tm);
                    GT_ASSERT_OK(gt_mc_extract_stream_ply(GT_DEVICE_CUDA, d, mem_planes, &mv, &p, 0, P, pb,
                                                          (gt_ply_format)fmt, &r, &tm));
                    assert_int_equal(r.nvert, m.nvert);
                    assert_int_equal(r.ntri, m.ntri);
                    assert_int_equal(r.overlapped, !slabs);
                    if (!slabs) {
                        assert_true(gt_timings_get(&tm, "download+write (overlapped)") > 0);
                        assert_int_equal(r.download_bytes, (nrm ? 24 : 12) * m.nvert + 12 * m.ntri);
                    }
                    GT_ASSERT_SAME_FILE(pa, pb);
                    gt_mc_mesh_free(&m);
                }
    unsetenv("GT_PLY_PIECE_ROWS");
    /* a failing write (a directory that is not there) after the extraction:
     * an error naming it, and the device context and pinned buffers freed */
    gt_mc_params p;
    gt_mc_params_init(&p, 0.1);
    gt_mc_ply_result r;
    size_t db, nb, pinned0, pinned1;
    gt_cu_held(&db, &nb, &pinned0);
    gt_status st = gt_mc_extract_stream_ply(GT_DEVICE_CUDA, d, mem_planes, &mv, &p, 0, 0, "/nonexistent-dir/x.ply",
                                            GT_PLY_BINARY_LE, &r, NULL);
    assert_int_equal(st, GT_ERR_RUNTIME);
    assert_non_null(strstr(gt_errmsg(), "/nonexistent-dir/x.ply"));
    gt_cu_held(&db, &nb, &pinned1);
    assert_int_equal(pinned1, pinned0);
    unlink(pa);
    unlink(pb);
    rmdir(dir);
    free(v);
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_and_analytic),
        cmocka_unit_test(test_slabs),
        cmocka_unit_test(test_staged_upload),
        cmocka_unit_test(test_gpu_watertight),
        cmocka_unit_test(test_testdata_blobs),
        cmocka_unit_test(test_bunny),
        cmocka_unit_test(test_offset_layouts),
        cmocka_unit_test(test_ply_from_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
