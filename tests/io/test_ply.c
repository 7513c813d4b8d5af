/* PLY reader/writer: round trips of every format and scalar type, hand-made
 * files (both type naming schemes, lists in the vertex element, extra
 * elements, any property order, int counts / uint indices), pipes, and the
 * broken-input folder. */
#include "io_test_util.h"

#include <math.h>
#include <stdint.h>

#include "gt_test.h"
#include "io/ply.h"

/* A mesh with one property of every type, values exactly representable in
 * that type and in float (the reader's output type). */
static void make_all_types(gt_ply_mesh *m, size_t nv, gt_rng *rng)
{
    static const char *const names[] = {"p_i8", "p_u8", "p_i16", "p_u16", "p_i32", "p_u32", "x", "p_f64"};
    static const gt_ply_type types[] = {GT_PLY_INT8, GT_PLY_UINT8, GT_PLY_INT16, GT_PLY_UINT16,
                                        GT_PLY_INT32, GT_PLY_UINT32, GT_PLY_FLOAT32, GT_PLY_FLOAT64};
    GT_ASSERT_OK(gt_ply_mesh_alloc(m, nv, 8, names, types));
    for (size_t v = 0; v < nv; v++) {
        float *r = m->vdata + v * 8;
        r[0] = (float)((int)(gt_rng_u64(rng) % 256) - 128);
        r[1] = (float)(gt_rng_u64(rng) % 256);
        r[2] = (float)((int)(gt_rng_u64(rng) % 65536) - 32768);
        r[3] = (float)(gt_rng_u64(rng) % 65536);
        r[4] = (float)((int32_t)(gt_rng_u64(rng) % (1u << 24)) - (1 << 23)); /* exact in float */
        r[5] = (float)(gt_rng_u64(rng) % (1u << 24));
        r[6] = (float)gt_rng_range(rng, -1e6, 1e6);
        r[7] = (float)gt_rng_range(rng, -1e-3, 1e-3);
    }
    /* extremes of the integer types */
    if (nv >= 2) {
        float lo[] = {-128, 0, -32768, 0, -2147483648.0f, 0, -3.4e38f, 1e-30f};
        float hi[] = {127, 255, 32767, 65535, 2147483520.0f, 4294967040.0f, 3.4e38f, -1e30f};
        memcpy(m->vdata, lo, sizeof lo);
        memcpy(m->vdata + 8, hi, sizeof hi);
    }
}

static void add_faces(gt_ply_mesh *m, size_t nf, gt_rng *rng)
{
    m->nface = nf;
    m->face_start = malloc((nf + 1) * sizeof *m->face_start);
    m->face_idx = malloc(nf * 8 * sizeof *m->face_idx);
    assert_non_null(m->face_start);
    assert_non_null(m->face_idx);
    m->face_start[0] = 0;
    for (size_t f = 0; f < nf; f++) {
        unsigned k = 3 + (unsigned)(gt_rng_u64(rng) % 6);
        for (unsigned j = 0; j < k; j++)
            m->face_idx[m->face_start[f] + j] = (int32_t)(gt_rng_u64(rng) % m->nvert);
        m->face_start[f + 1] = m->face_start[f] + k;
    }
}

static void assert_same(const gt_ply_mesh *a, const gt_ply_mesh *b)
{
    assert_int_equal(a->nvert, b->nvert);
    assert_int_equal(a->nprops, b->nprops);
    for (int i = 0; i < a->nprops; i++) {
        assert_string_equal(a->props[i].name, b->props[i].name);
        assert_int_equal(a->props[i].type, b->props[i].type);
    }
    for (size_t i = 0; i < a->nvert * (size_t)a->nprops; i++)
        if (memcmp(&a->vdata[i], &b->vdata[i], sizeof(float)) != 0)
            fail_msg("value %zu differs: %.9g vs %.9g", i, (double)a->vdata[i], (double)b->vdata[i]);
    assert_int_equal(a->nface, b->nface);
    if (a->nface) {
        assert_memory_equal(a->face_start, b->face_start, (a->nface + 1) * sizeof(uint32_t));
        assert_memory_equal(a->face_idx, b->face_idx, a->face_start[a->nface] * sizeof(int32_t));
    }
}

static void test_roundtrip_all_formats_types(void **state)
{
    (void)state;
    gt_rng rng = {42};
    for (int fmt = 0; fmt < 3; fmt++) {
        for (size_t nv = 0; nv <= 1000; nv = nv ? nv * 10 : 1) {
            gt_ply_mesh m, r;
            make_all_types(&m, nv, &rng);
            if (nv > 0) add_faces(&m, nv * 2, &rng);
            char *c[] = {"made by test_ply", "second comment"};
            m.comments = c;
            m.ncomments = 2;
            const char *p = io_tmp("rt.ply");
            GT_ASSERT_OK(gt_ply_write(p, &m, (gt_ply_format)fmt));
            GT_ASSERT_OK(gt_ply_read(p, &r));
            assert_int_equal(r.format, fmt);
            assert_same(&m, &r);
            assert_int_equal(r.ncomments, 2);
            assert_string_equal(r.comments[0], "made by test_ply");
            assert_string_equal(r.comments[1], "second comment");
            m.comments = NULL;
            m.ncomments = 0;
            gt_ply_free(&m);
            gt_ply_free(&r);
        }
    }
}

static void test_roundtrip_float32_fast_path(void **state)
{
    (void)state;
    gt_rng rng = {7};
    const char *names[] = {"x", "y", "z", "nx", "ny", "nz", "f_dc_0"};
    gt_ply_mesh m, r;
    size_t nv = 300000; /* several reader chunks */
    GT_ASSERT_OK(gt_ply_mesh_alloc(&m, nv, 7, names, NULL));
    for (size_t i = 0; i < nv * 7; i++) m.vdata[i] = (float)gt_rng_range(&rng, -10, 10);
    m.vdata[5] = NAN; /* bit pattern must survive */
    for (int fmt = 1; fmt < 3; fmt++) {
        const char *p = io_tmp("f32.ply");
        GT_ASSERT_OK(gt_ply_write(p, &m, (gt_ply_format)fmt));
        GT_ASSERT_OK(gt_ply_read(p, &r));
        assert_same(&m, &r);
        /* also through a pipe */
        gt_ply_free(&r);
        int saved;
        pid_t pid = io_stdin_from_pipe(p, &saved);
        gt_status st = gt_ply_read("-", &r);
        io_stdin_restore(pid, saved);
        GT_ASSERT_OK(st);
        assert_same(&m, &r);
        gt_ply_free(&r);
    }
    gt_ply_free(&m);
}

static void test_trimesh_writer(void **state)
{
    (void)state;
    float xyz[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    float nrm[] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    float ex[] = {0.5f, 1.5f, 2.5f, 3.5f};
    const char *en[] = {"density"};
    int32_t tris[] = {0, 1, 2, 0, 2, 3, 1, 3, 2};
    for (int fmt = 0; fmt < 3; fmt++) {
        const char *p = io_tmp("tri.ply");
        GT_ASSERT_OK(gt_ply_write_trimesh(p, 4, xyz, nrm, 1, en, ex, 3, tris, (gt_ply_format)fmt));
        gt_ply_mesh r;
        GT_ASSERT_OK(gt_ply_read(p, &r));
        assert_int_equal(r.nvert, 4);
        assert_int_equal(r.nprops, 7);
        assert_true(gt_ply_all_triangles(&r));
        assert_int_equal(r.nface, 3);
        assert_memory_equal(r.face_idx, tris, sizeof tris);
        float g[4 * 7];
        const char *want[] = {"x", "y", "z", "nx", "ny", "nz", "density"};
        GT_ASSERT_OK(gt_ply_gather(&r, p, want, 7, g));
        for (int v = 0; v < 4; v++) {
            for (int i = 0; i < 3; i++) assert_true(g[v * 7 + i] == xyz[v * 3 + i]);
            for (int i = 0; i < 3; i++) assert_true(g[v * 7 + 3 + i] == nrm[v * 3 + i]);
            assert_true(g[v * 7 + 6] == ex[v]);
        }
        gt_ply_free(&r);
    }
    /* without normals */
    const char *p = io_tmp("tri2.ply");
    GT_ASSERT_OK(gt_ply_write_trimesh(p, 4, xyz, NULL, 0, NULL, NULL, 3, tris, GT_PLY_BINARY_LE));
    gt_ply_mesh r;
    GT_ASSERT_OK(gt_ply_read(p, &r));
    assert_int_equal(r.nprops, 3);
    assert_int_equal(gt_ply_find(&r, "nx"), -1);
    assert_int_equal(gt_ply_find(&r, "z"), 2);
    gt_ply_free(&r);
}

static void test_gather_missing_names_all(void **state)
{
    (void)state;
    const char *names[] = {"x", "y", "z"};
    gt_ply_mesh m;
    GT_ASSERT_OK(gt_ply_mesh_alloc(&m, 2, 3, names, NULL));
    const char *want[] = {"x", "nx", "z", "opacity"};
    float out[8];
    assert_int_equal(gt_ply_gather(&m, "scene.ply", want, 4, out), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "'nx'"));
    assert_non_null(strstr(gt_errmsg(), "'opacity'"));
    assert_non_null(strstr(gt_errmsg(), "scene.ply"));
    gt_ply_free(&m);
}

/* ascii with the sized type names, properties out of order, a list in the
 * vertex element, obj_info, an extra element before and after, int counts */
static void test_ascii_handmade(void **state)
{
    (void)state;
    const char *txt =
        "ply\n"
        "format ascii 1.0\n"
        "comment hello world\n"
        "obj_info generated by hand\n"
        "element camera 1\n"
        "property float32 fx\n"
        "property list uint8 float32 k\n"
        "element vertex 3\n"
        "property int16 s\n"
        "property float32 z\n"
        "property list uint8 int32 tags\n"
        "property float64 y\n"
        "property uint8 red\n"
        "property float32 x\n"
        "element face 2\n"
        "property uint8 flags\n"
        "property list int32 uint32 vertex_index\n"
        "element edge 1\n"
        "property int vertex1\n"
        "property int vertex2\n"
        "end_header\n"
        "500 3 0.1 0.2 0.3\n"
        "-5 3.5 2 7 8 2.25 255 1\n"
        "6 -1 0 1e3 0 -2\n"
        "  7\t1.5 1 9 -0.5   17 3e-2  \n"
        "0 3 0 1 2\n"
        "1 4 2 1 0 1\n"
        "0 1\n";
    const char *p = io_tmp("hand.ply");
    io_write_text(p, txt);
    gt_ply_mesh m;
    GT_ASSERT_OK(gt_ply_read(p, &m));
    assert_int_equal(m.format, GT_PLY_ASCII);
    assert_int_equal(m.nvert, 3);
    assert_int_equal(m.nprops, 5);
    assert_int_equal(m.props[0].type, GT_PLY_INT16);
    assert_int_equal(m.props[1].type, GT_PLY_FLOAT32);
    assert_int_equal(m.props[2].type, GT_PLY_FLOAT64);
    assert_int_equal(m.props[3].type, GT_PLY_UINT8);
    const char *want[] = {"x", "y", "z", "red", "s"};
    float g[15];
    GT_ASSERT_OK(gt_ply_gather(&m, p, want, 5, g));
    float expect[] = {1, 2.25f, 3.5f, 255, -5, -2, 1e3f, -1, 0, 6, 3e-2f, -0.5f, 1.5f, 17, 7};
    assert_memory_equal(g, expect, sizeof expect);
    assert_int_equal(m.nface, 2);
    assert_false(gt_ply_all_triangles(&m));
    int32_t idx[] = {0, 1, 2, 2, 1, 0, 1};
    assert_memory_equal(m.face_idx, idx, sizeof idx);
    assert_int_equal(m.face_start[1], 3);
    assert_int_equal(m.ncomments, 1);
    assert_string_equal(m.comments[0], "hello world");
    gt_ply_free(&m);
}

/* binary big endian and little endian built byte by byte: classic names, a
 * list inside the vertex element, int counts with uint indices, an extra
 * element with a list after the faces. */
static size_t put(unsigned char *b, size_t o, const void *v, size_t n, bool be)
{
    const unsigned char *s = v;
    for (size_t i = 0; i < n; i++) b[o + i] = be ? s[n - 1 - i] : s[i];
    return o + n;
}

static void test_binary_handmade(void **state)
{
    (void)state;
    for (int be = 0; be < 2; be++) {
        char hdr[1024];
        snprintf(hdr, sizeof hdr,
                 "ply\nformat %s 1.0\n"
                 "element vertex 2\n"
                 "property double y\n"
                 "property list uchar int extra\n"
                 "property ushort q\n"
                 "property float x\n"
                 "property char c\n"
                 "element face 1\n"
                 "property list int uint vertex_indices\n"
                 "property short junk\n"
                 "element material 2\n"
                 "property list ushort double w\n"
                 "end_header\n",
                 be ? "binary_big_endian" : "binary_little_endian");
        unsigned char b[4096];
        size_t o = strlen(hdr);
        memcpy(b, hdr, o);
        for (int v = 0; v < 2; v++) {
            double y = v ? -1.5 : 2.75;
            o = put(b, o, &y, 8, be);
            uint8_t n = (uint8_t)(v + 1);
            o = put(b, o, &n, 1, be);
            for (int k = 0; k < n; k++) {
                int32_t t = 1000 + k;
                o = put(b, o, &t, 4, be);
            }
            uint16_t q = v ? 65535 : 3;
            o = put(b, o, &q, 2, be);
            float x = v ? 1e-3f : -4.5f;
            o = put(b, o, &x, 4, be);
            int8_t c = v ? -128 : 5;
            o = put(b, o, &c, 1, be);
        }
        int32_t cnt = 4;
        o = put(b, o, &cnt, 4, be);
        uint32_t ix[] = {1, 0, 1, 0};
        for (int k = 0; k < 4; k++) o = put(b, o, &ix[k], 4, be);
        int16_t junk = 99;
        o = put(b, o, &junk, 2, be);
        for (int k = 0; k < 2; k++) {
            uint16_t n = (uint16_t)(2 * k);
            o = put(b, o, &n, 2, be);
            for (int j = 0; j < n; j++) {
                double w = j;
                o = put(b, o, &w, 8, be);
            }
        }
        const char *p = io_tmp("handbin.ply");
        io_write_file(p, b, o);
        gt_ply_mesh m;
        GT_ASSERT_OK(gt_ply_read(p, &m));
        assert_int_equal(m.format, be ? GT_PLY_BINARY_BE : GT_PLY_BINARY_LE);
        assert_int_equal(m.nvert, 2);
        assert_int_equal(m.nprops, 4);
        const char *want[] = {"x", "y", "q", "c"};
        float g[8];
        GT_ASSERT_OK(gt_ply_gather(&m, p, want, 4, g));
        float expect[] = {-4.5f, 2.75f, 3, 5, 1e-3f, -1.5f, 65535, -128};
        assert_memory_equal(g, expect, sizeof expect);
        assert_int_equal(m.nface, 1);
        assert_int_equal(m.face_start[1], 4);
        assert_int_equal(m.face_idx[0], 1);
        assert_int_equal(m.face_idx[3], 0);
        gt_ply_free(&m);
        /* cut one byte short: an error naming a byte offset */
        io_write_file(p, b, o - 1);
        assert_int_equal(gt_ply_read(p, &m), GT_ERR_DATA);
        io_check_place(gt_errmsg(), p);
    }
}

/* A header that promises a huge count on a pipe must fail on the data that
 * actually arrives, without a giant allocation. */
static void test_lying_header_on_pipe(void **state)
{
    (void)state;
    const char *p = io_tmp("liar.ply");
    char b[256];
    int n = snprintf(b, sizeof b,
                     "ply\nformat binary_little_endian 1.0\nelement vertex 1000000000000\n"
                     "property float x\nproperty float y\nproperty float z\nend_header\n");
    memset(b + n, 0, 24);
    io_write_file(p, b, (size_t)n + 24);
    int saved;
    pid_t pid = io_stdin_from_pipe(p, &saved);
    gt_ply_mesh m;
    gt_status st = gt_ply_read("-", &m);
    io_stdin_restore(pid, saved);
    assert_int_equal(st, GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "<stdin>: byte"));
    /* the same on a regular file is caught from the file size */
    assert_int_equal(gt_ply_read(p, &m), GT_ERR_DATA);
    io_check_place(gt_errmsg(), p);
}

static gt_status read_ply_path(const char *path)
{
    gt_ply_mesh m;
    gt_status st = gt_ply_read(path, &m);
    if (st == GT_OK) gt_ply_free(&m);
    return st;
}

static void test_broken_folder(void **state)
{
    (void)state;
    char dir[1024];
    const char *td = getenv("GT_TESTDATA");
    snprintf(dir, sizeof dir, "%s/io/ply/broken", td ? td : "testdata");
    int n = io_check_broken_dir(dir, read_ply_path, getenv("GT_VERBOSE") != NULL);
    assert_true(n >= 25);
}

static void test_missing_file_is_runtime(void **state)
{
    (void)state;
    gt_ply_mesh m;
    assert_int_equal(gt_ply_read(io_tmp("does_not_exist.ply"), &m), GT_ERR_RUNTIME);
}

static void test_write_to_bad_dir_leaves_nothing(void **state)
{
    (void)state;
    const char *names[] = {"x"};
    gt_ply_mesh m;
    GT_ASSERT_OK(gt_ply_mesh_alloc(&m, 1, 1, names, NULL));
    assert_int_equal(gt_ply_write("/nonexistent_dir_gt/x.ply", &m, GT_PLY_BINARY_LE), GT_ERR_RUNTIME);
    gt_ply_free(&m);
}

static void test_good_folder(void **state)
{
    (void)state;
    char dir[1024];
    const char *td = getenv("GT_TESTDATA");
    snprintf(dir, sizeof dir, "%s/io/ply", td ? td : "testdata");
    const char *files[] = {"cube_ascii.ply", "cube_be.ply", "cube_le.ply"};
    gt_ply_mesh ref;
    for (int i = 0; i < 3; i++) {
        char p[1100];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        gt_ply_mesh m;
        GT_ASSERT_OK(gt_ply_read(p, &m));
        assert_int_equal(m.nvert, 8);
        assert_int_equal(m.nface, 6);
        if (i == 0) ref = m;
        else {
            assert_same(&ref, &m);
            gt_ply_free(&m);
        }
    }
    gt_ply_free(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_all_formats_types),
        cmocka_unit_test(test_roundtrip_float32_fast_path),
        cmocka_unit_test(test_trimesh_writer),
        cmocka_unit_test(test_gather_missing_names_all),
        cmocka_unit_test(test_ascii_handmade),
        cmocka_unit_test(test_binary_handmade),
        cmocka_unit_test(test_lying_header_on_pipe),
        cmocka_unit_test(test_broken_folder),
        cmocka_unit_test(test_good_folder),
        cmocka_unit_test(test_missing_file_is_runtime),
        cmocka_unit_test(test_write_to_bad_dir_leaves_nothing),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
