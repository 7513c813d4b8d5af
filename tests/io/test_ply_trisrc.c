/* The piecewise, parallel triangle-mesh PLY writer (gt_ply_write_trisrc and
 * gt_ply_write_trimesh over it): its bytes equal those of the sequential
 * gt_ply_write of the same mesh as a gt_ply_mesh, in every format, for sizes
 * around the piece boundaries, with and without normals and extra columns,
 * through the mmap appender and stdio, on one thread and several; it asks
 * for pieces in order and never reads one after asking for the next; a
 * failing source or a failing write leaves no file behind. */
#include "io_test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "gt_test.h"
#include "io/ply.h"

typedef struct mesh {
    size_t nv, nt;
    float *xyz, *nrm, *extra;
    int nextra;
    int32_t *tris;
} mesh;

static void make_mesh(mesh *m, size_t nv, size_t nt, bool normals, int nextra, gt_rng *rng)
{
    memset(m, 0, sizeof *m);
    m->nv = nv, m->nt = nt, m->nextra = nextra;
    m->xyz = malloc(nv * 3 * sizeof(float) + 4);
    m->nrm = normals ? malloc(nv * 3 * sizeof(float) + 4) : NULL;
    m->extra = nextra ? malloc(nv * (size_t)nextra * sizeof(float) + 4) : NULL;
    m->tris = malloc(nt * 3 * sizeof(int32_t) + 4);
    assert_non_null(m->xyz);
    assert_non_null(m->tris);
    for (size_t i = 0; i < 3 * nv; i++) m->xyz[i] = (float)gt_rng_range(rng, -1e3, 1e3);
    for (size_t i = 0; normals && i < 3 * nv; i++) m->nrm[i] = (float)gt_rng_range(rng, -1, 1);
    for (size_t i = 0; i < nv * (size_t)nextra; i++) m->extra[i] = (float)gt_rng_range(rng, 0, 1e-2);
    /* indices spanning the whole int32 range's bytes (the writer must not
     * care whether they are in range) */
    for (size_t i = 0; i < 3 * nt; i++) m->tris[i] = (int32_t)(uint32_t)gt_rng_u64(rng);
}

static void free_mesh(mesh *m)
{
    free(m->xyz);
    free(m->nrm);
    free(m->extra);
    free(m->tris);
}

static const char *const extra_names[] = {"density", "red", "green", "blue"};

/* the reference: the same mesh through the sequential gt_ply_write */
static void write_reference(const char *path, const mesh *m, gt_ply_format fmt)
{
    const char *names[10] = {"x", "y", "z"};
    int np = 3;
    if (m->nrm) names[np++] = "nx", names[np++] = "ny", names[np++] = "nz";
    for (int i = 0; i < m->nextra; i++) names[np++] = extra_names[i];
    gt_ply_mesh pm;
    GT_ASSERT_OK(gt_ply_mesh_alloc(&pm, m->nv, np, names, NULL));
    for (size_t v = 0; v < m->nv; v++) {
        float *r = pm.vdata + v * (size_t)np;
        int c = 0;
        for (int k = 0; k < 3; k++) r[c++] = m->xyz[3 * v + (size_t)k];
        for (int k = 0; m->nrm && k < 3; k++) r[c++] = m->nrm[3 * v + (size_t)k];
        for (int k = 0; k < m->nextra; k++) r[c++] = m->extra[v * (size_t)m->nextra + (size_t)k];
    }
    pm.nface = m->nt;
    if (m->nt) {
        pm.face_start = malloc((m->nt + 1) * sizeof *pm.face_start);
        pm.face_idx = malloc(3 * m->nt * sizeof *pm.face_idx);
        assert_non_null(pm.face_start);
        assert_non_null(pm.face_idx);
        for (size_t f = 0; f <= m->nt; f++) pm.face_start[f] = (uint32_t)(3 * f);
        memcpy(pm.face_idx, m->tris, 3 * m->nt * sizeof(int32_t));
    }
    GT_ASSERT_OK(gt_ply_write(path, &pm, fmt));
    gt_ply_free(&pm);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void assert_same_file(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
    if (na != nb) fail_msg("%s has %zu bytes, %s %zu", a, na, b, nb);
    for (size_t i = 0; i < na; i++)
        if (x[i] != y[i]) fail_msg("%s and %s differ first at byte %zu of %zu", a, b, i, na);
    free(x);
    free(y);
}

/* A source that hands out copies of its pieces and poisons the previous
 * copy when asked for the next one, as a double-buffered download would
 * overwrite it: a writer that read a piece late would write NaNs / -1s. It
 * checks that pieces come in order, each once, vertices first, and can fail
 * at request number fail_at. */
typedef struct src_ctx {
    const mesh *m;
    size_t chunk;
    size_t next_v, next_t;
    float *vbuf[3];
    int32_t *tbuf;
    int calls, fail_at;
} src_ctx;

static void poison(src_ctx *c)
{
    for (int i = 0; i < 3; i++)
        if (c->vbuf[i]) memset(c->vbuf[i], 0xff, c->chunk * 4 * 4);
    if (c->tbuf) memset(c->tbuf, 0xff, c->chunk * 3 * 4);
}

static gt_status src_verts(void *ctx, size_t v0, size_t n, const float **xyz, const float **nrm, const float **extra)
{
    src_ctx *c = ctx;
    if (++c->calls == c->fail_at) return gt_fail(GT_ERR_GPU, "test source failed at piece %d", c->calls);
    assert_int_equal(v0, c->next_v);
    assert_int_equal(c->next_t, 0);
    assert_true(n > 0 && n <= c->chunk && v0 + n <= c->m->nv);
    c->next_v = v0 + n;
    poison(c);
    const mesh *m = c->m;
    memcpy(c->vbuf[0], m->xyz + 3 * v0, n * 12);
    *xyz = c->vbuf[0];
    *nrm = NULL;
    *extra = NULL;
    if (m->nrm) {
        memcpy(c->vbuf[1], m->nrm + 3 * v0, n * 12);
        *nrm = c->vbuf[1];
    }
    if (m->nextra) {
        memcpy(c->vbuf[2], m->extra + (size_t)m->nextra * v0, n * 4 * (size_t)m->nextra);
        *extra = c->vbuf[2];
    }
    return GT_OK;
}

static gt_status src_tris(void *ctx, size_t t0, size_t n, const int32_t **tris)
{
    src_ctx *c = ctx;
    if (++c->calls == c->fail_at) return gt_fail(GT_ERR_GPU, "test source failed at piece %d", c->calls);
    assert_int_equal(c->next_v, c->m->nv);
    assert_int_equal(t0, c->next_t);
    assert_true(n > 0 && n <= c->chunk && t0 + n <= c->m->nt);
    c->next_t = t0 + n;
    poison(c);
    memcpy(c->tbuf, c->m->tris + 3 * t0, n * 12);
    *tris = c->tbuf;
    return GT_OK;
}

static gt_status write_src(const char *path, const mesh *m, size_t chunk, gt_ply_format fmt, int fail_at)
{
    src_ctx c = {.m = m, .chunk = chunk, .fail_at = fail_at};
    for (int i = 0; i < 3; i++) c.vbuf[i] = malloc(chunk * 4 * 4);
    c.tbuf = malloc(chunk * 3 * 4);
    gt_ply_trisrc s = {.nvert = m->nv, .ntri = m->nt, .normals = m->nrm != NULL, .nextra = m->nextra,
                       .extra_names = extra_names, .chunk = chunk, .verts = src_verts, .tris = src_tris, .ctx = &c};
    gt_status st = gt_ply_write_trisrc(path, &s, fmt);
    if (st == GT_OK) {
        assert_int_equal(c.next_v, m->nv);
        assert_int_equal(c.next_t, m->nt);
    }
    for (int i = 0; i < 3; i++) free(c.vbuf[i]);
    free(c.tbuf);
    return st;
}

/* one mesh of nv vertices and nt triangles (shape 0: xyz; 1: normals and
 * one extra column; 2: normals and four) written three ways, same bytes */
static void check_one(gt_ply_format fmt, size_t chunk, size_t nv, size_t nt, int shape, gt_rng *rng)
{
    mesh m;
    make_mesh(&m, nv, nt, shape >= 1, shape == 2 ? 4 : shape == 1 ? 1 : 0, rng);
    const char *ref = io_tmp("ref.ply"), *got = io_tmp("got.ply"), *tm = io_tmp("tm.ply");
    write_reference(ref, &m, fmt);
    GT_ASSERT_OK(write_src(got, &m, chunk, fmt, 0));
    assert_same_file(ref, got);
    /* and the host-array convenience writer (default pieces) */
    GT_ASSERT_OK(gt_ply_write_trimesh(tm, m.nv, m.xyz, m.nrm, m.nextra, extra_names, m.extra, m.nt, m.tris, fmt));
    assert_same_file(ref, tm);
    free_mesh(&m);
}

/* every size as the vertex count and as the triangle count, each beside two
 * other sizes (vertex and face pieces do not depend on each other) */
static void check_sizes(gt_ply_format fmt, size_t chunk, const size_t *nvs, int k)
{
    gt_rng rng = {7 + (uint64_t)fmt};
    for (int a = 0; a < k; a++)
        for (int shift = 0; shift < 2; shift++)
            for (int shape = 0; shape < 3; shape++)
                check_one(fmt, chunk, nvs[a], nvs[(a + 1 + 3 * shift) % k], shape, &rng);
}

/* small pieces: every size around 1, 2 and 3 pieces of 7 rows */
static void test_bytes_small_pieces(void **state)
{
    (void)state;
    static const size_t n[] = {0, 1, 6, 7, 8, 13, 14, 15, 22};
    for (int fmt = 0; fmt < 3; fmt++) check_sizes((gt_ply_format)fmt, 7, n, 9);
}

/* pieces large enough to be formatted on several threads, with and
 * without the mmap appender, on one thread and on four */
static void test_bytes_threads_and_paths(void **state)
{
    (void)state;
    static const size_t n[][2] = {{65535, 0}, {65536, 65536}, {131073, 70001}, {0, 131073}};
    const char *paths[][2] = {{"GT_NO_MMAP_WRITE", "1"}, {"GT_NO_MMAP_WRITE", "0"}};
    const char *threads[] = {"1", "4"};
    gt_rng rng0 = {3};
    for (int p = 0; p < 2; p++)
        for (int t = 0; t < 2; t++) {
            setenv(paths[p][0], paths[p][1], 1);
            setenv("GT_WRITE_THREADS", threads[t], 1);
            for (int fmt = 1; fmt < (p == 1 && t == 1 ? 3 : 2); fmt++) /* big-endian once */
                for (int i = 0; i < 4; i++)
                    for (int shape = 0; shape < 3; shape += 2)
                        check_one((gt_ply_format)fmt, 65536, n[i][0], n[i][1], shape, &rng0);
        }
    unsetenv("GT_NO_MMAP_WRITE");
    unsetenv("GT_WRITE_THREADS");
    /* the default piece size (1M rows), just past one piece */
    gt_rng rng = {99};
    mesh m;
    make_mesh(&m, (1u << 20) + 3, (1u << 20) + 1, true, 1, &rng);
    const char *ref = io_tmp("ref.ply"), *got = io_tmp("got.ply");
    write_reference(ref, &m, GT_PLY_BINARY_LE);
    GT_ASSERT_OK(gt_ply_write_trimesh(got, m.nv, m.xyz, m.nrm, m.nextra, extra_names, m.extra, m.nt, m.tris,
                                      GT_PLY_BINARY_LE));
    assert_same_file(ref, got);
    free_mesh(&m);
}

/* ascii: what the old writer printed, by hand, for a small mesh */
static void test_ascii_text(void **state)
{
    (void)state;
    float xyz[] = {0.5f, -1, 0.125f, 1, 2, 3};
    float ex[] = {0.25f, 16777216};
    const char *en[] = {"density"};
    int32_t tris[] = {0, 1, 1, -5, 2147483647, 0};
    const char *p = io_tmp("a.ply");
    GT_ASSERT_OK(gt_ply_write_trimesh(p, 2, xyz, NULL, 1, en, ex, 2, tris, GT_PLY_ASCII));
    size_t n;
    unsigned char *b = slurp(p, &n);
    const char *want = "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                       "property float z\nproperty float density\nelement face 2\n"
                       "property list uchar int vertex_indices\nend_header\n"
                       "0.5 -1 0.125 0.25\n1 2 3 16777216\n3 0 1 1\n3 -5 2147483647 0\n";
    assert_int_equal(n, strlen(want));
    assert_memory_equal(b, want, n);
    free(b);
}

static int count_dir(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) k++;
    closedir(d);
    return k;
}

/* a source failing at its 1st, 3rd or last piece: its status and message,
 * and the directory as it was (an older file of that name untouched) */
static void test_source_failure_leaves_nothing(void **state)
{
    (void)state;
    char dir[] = "/tmp/gt_trisrc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[300], old[300];
    snprintf(path, sizeof path, "%s/out.ply", dir);
    snprintf(old, sizeof old, "%s/old.ply", dir);
    gt_rng rng = {5};
    mesh m;
    make_mesh(&m, 100, 100, false, 0, &rng);
    io_write_text(path, "old contents\n");
    for (int fmt = 0; fmt < 3; fmt++)
        for (int at = 1; at <= 10; at += (at == 1 ? 2 : 7)) { /* pieces of 20: 5 + 5 requests */
            gt_status st = write_src(path, &m, 20, (gt_ply_format)fmt, at);
            assert_int_equal(st, GT_ERR_GPU);
            assert_non_null(strstr(gt_errmsg(), "test source failed at piece"));
            assert_int_equal(count_dir(dir), 1);
            size_t n;
            unsigned char *b = slurp(path, &n);
            assert_int_equal(n, 13);
            assert_memory_equal(b, "old contents\n", 13);
            free(b);
        }
    free_mesh(&m);
    unlink(path);
    rmdir(dir);
    (void)old;
}

/* the file system refusing bytes partway (a file size limit: EFBIG), through
 * the mmap appender and through stdio: a write error naming the output, no
 * file left; and /dev/full (written in place) reports the error */
static void test_write_failure_leaves_nothing(void **state)
{
    (void)state;
    char dir[] = "/tmp/gt_trisrc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[300];
    snprintf(path, sizeof path, "%s/big.ply", dir);
    gt_rng rng = {11};
    mesh m;
    make_mesh(&m, 300000, 600000, true, 0, &rng); /* about 15 MB */
    struct rlimit saved, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
    for (int p = 0; p < 2; p++) {
        setenv("GT_NO_MMAP_WRITE", p ? "1" : "0", 1);
        lim = saved;
        lim.rlim_cur = 4u << 20;
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        gt_status st = gt_ply_write_trimesh(path, m.nv, m.xyz, m.nrm, 0, NULL, NULL, m.nt, m.tris, GT_PLY_BINARY_LE);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
        assert_int_equal(st, GT_ERR_RUNTIME);
        if (!strstr(gt_errmsg(), "write error") || !strstr(gt_errmsg(), path))
            fail_msg("message does not name a write error on %s: %s", path, gt_errmsg());
        assert_int_equal(count_dir(dir), 0);
    }
    unsetenv("GT_NO_MMAP_WRITE");
    signal(SIGXFSZ, old);
    struct stat sb;
    if (stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode)) {
        gt_status st = gt_ply_write_trimesh("/dev/full", m.nv, m.xyz, m.nrm, 0, NULL, NULL, m.nt, m.tris,
                                            GT_PLY_BINARY_LE);
        assert_int_equal(st, GT_ERR_RUNTIME);
        assert_non_null(strstr(gt_errmsg(), "/dev/full"));
    }
    free_mesh(&m);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_small_pieces),
        cmocka_unit_test(test_bytes_threads_and_paths),
        cmocka_unit_test(test_ascii_text),
        cmocka_unit_test(test_source_failure_leaves_nothing),
        cmocka_unit_test(test_write_failure_leaves_nothing),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return r;
}
