/* The mcmesh job through libcore's public API, as an outside C program uses
 * it (compiled against the installed headers and library through pkg-config
 * by tests/api/run-api-tests.sh), on testdata/mc: the sphere's isosurface is
 * a closed manifold of genus 0 at the right radius with outward normals; a
 * raw volume streamed in small slabs gives the same file as one pass; an iso
 * outside the data gives an empty mesh; a job without an iso value fails and
 * leaves no file. Exit 0: passed; 1: failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/ply.h"
#include "io/volume.h"
#include "mc/mc.h"

#include "api_test.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every edge in exactly two triangles and V - E + F = 2. */
static void check_closed(const gt_ply_mesh *m)
{
    size_t nf = m->nface, ne = 0, odd = 0;
    uint64_t *e = malloc(3 * nf * sizeof *e + 1);
    if (!e) return;
    for (size_t f = 0; f < nf; f++) {
        CHECK(m->face_start[f + 1] - m->face_start[f] == 3, "face %zu is not a triangle", f);
        if (m->face_start[f + 1] - m->face_start[f] != 3) break;
        const int32_t *t = m->face_idx + m->face_start[f];
        for (int k = 0; k < 3; k++) {
            uint64_t a = (uint64_t)t[k], b = (uint64_t)t[(k + 1) % 3];
            e[ne++] = a < b ? a * m->nvert + b : b * m->nvert + a;
        }
    }
    qsort(e, ne, sizeof *e, cmp_u64);
    size_t edges = 0;
    for (size_t i = 0; i < ne;) {
        size_t k = i;
        while (k < ne && e[k] == e[i]) k++;
        odd += k - i != 2;
        edges++;
        i = k;
    }
    CHECK(odd == 0, "%zu edges not shared by exactly two triangles", odd);
    long chi = (long)m->nvert - (long)edges + (long)nf;
    CHECK(chi == 2, "Euler characteristic %ld, want 2 (a sphere)", chi);
    free(e);
}

/* A job for `in` at iso value `iso` into `out`, the rest the defaults. */
static void job_at(gt_mc_job *j, const char *in, const char *out, double iso)
{
    gt_mc_job_init(j);
    j->input = in;
    j->output = out;
    j->have_iso = true;
    j->iso = iso;
}

/* sphere.nrrd: radius 8 voxels of spacing 0.25 around -3 + 11.5 * 0.25. */
static void sphere(const char *nrrd)
{
    gt_mc_job j;
    job_at(&j, nrrd, api_tmp("s.ply"), 0);
    j.normals = true;
    gt_status st = gt_mc_extract_job(&j);
    CHECK(st == GT_OK, "sphere: %s", gt_errmsg());
    gt_ply_mesh m;
    memset(&m, 0, sizeof m);
    if (st == GT_OK) st = gt_ply_read(api_tmp("s.ply"), &m);
    CHECK(st == GT_OK, "reading back: %s", gt_errmsg());
    if (st != GT_OK) return;
    CHECK(m.format == GT_PLY_BINARY_LE, "not binary little endian");
    CHECK(m.nvert > 100 && m.nface > 100, "%zu vertices, %zu faces", m.nvert, m.nface);
    int c[6];
    const char *names[6] = {"x", "y", "z", "nx", "ny", "nz"};
    bool have = true;
    for (int k = 0; k < 6; k++) have &= (c[k] = gt_ply_find(&m, names[k])) >= 0;
    CHECK(have, "no x, y, z, nx, ny, nz");
    const double centre = -3 + 11.5 * 0.25;
    double rerr = 0;
    size_t inward = 0;
    for (size_t v = 0; have && v < m.nvert; v++) {
        const float *p = m.vdata + v * m.nprops;
        double d[3], r = 0, dot = 0;
        for (int k = 0; k < 3; k++) {
            d[k] = p[c[k]] - centre;
            r += d[k] * d[k];
            dot += d[k] * p[c[3 + k]];
        }
        rerr = fmax(rerr, fabs(sqrt(r) - 2.0));
        inward += !(dot > 0);
    }
    CHECK(rerr < 0.25, "vertices up to %.3g from radius 2", rerr);
    CHECK(inward == 0, "%zu normals do not point outward", inward);
    check_closed(&m);
    gt_ply_free(&m);
}

static bool same_file(const char *a, const char *b)
{
    FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
    bool same = f && g;
    while (same) {
        int x = fgetc(f), y = fgetc(g);
        same = x == y;
        if (x == EOF || y == EOF) break;
    }
    if (f) fclose(f);
    if (g) fclose(g);
    return same;
}

/* The raw blobs volume in one pass and in slabs of an 8 KiB budget. */
static void raw_slabs(const char *raw)
{
    gt_mc_job j;
    job_at(&j, raw, api_tmp("one.ply"), 128);
    j.have_dims = true;
    j.dims[0] = 24, j.dims[1] = 20, j.dims[2] = 16;
    j.type = GT_VOL_UINT8;
    j.have_spacing = true;
    j.spacing[0] = j.spacing[1] = 0.5;
    gt_status st = gt_mc_extract_job(&j);
    CHECK(st == GT_OK, "raw: %s", gt_errmsg());
    j.max_gpu_mem = 8192;
    j.output = api_tmp("slabs.ply");
    if (st == GT_OK) st = gt_mc_extract_job(&j);
    CHECK(st == GT_OK, "raw in slabs: %s", gt_errmsg());
    if (st == GT_OK) CHECK(same_file(api_tmp("one.ply"), api_tmp("slabs.ply")), "slabs give another file than one pass");
    gt_ply_mesh m;
    memset(&m, 0, sizeof m);
    if (st == GT_OK && gt_ply_read(api_tmp("one.ply"), &m) == GT_OK) {
        int x = gt_ply_find(&m, "x");
        float xmax = -INFINITY;
        for (size_t v = 0; x >= 0 && v < m.nvert; v++) xmax = fmaxf(xmax, m.vdata[v * m.nprops + x]);
        CHECK(m.nface > 0 && xmax <= 23 * 0.5f, "%zu faces, x up to %g (spacing 0.5: <= 11.5)", m.nface, xmax);
    }
    gt_ply_free(&m);
}

/* iso above the data: an empty mesh, still a file; no iso at all (the NRRD
 * has no iso key): GT_ERR_USAGE and no file. */
static void edges_of_use(const char *nrrd)
{
    gt_mc_job j;
    job_at(&j, nrrd, api_tmp("empty.ply"), 1000);
    gt_status st = gt_mc_extract_job(&j);
    CHECK(st == GT_OK, "iso above the data: %s", gt_errmsg());
    gt_ply_mesh m;
    memset(&m, 0, sizeof m);
    if (st == GT_OK) {
        st = gt_ply_read(api_tmp("empty.ply"), &m);
        CHECK(st == GT_OK && m.nvert == 0 && m.nface == 0, "empty mesh: %zu vertices, %zu faces (%s)", m.nvert,
              m.nface, gt_errmsg());
    }
    gt_ply_free(&m);
    j.have_iso = false;
    j.output = api_tmp("noiso.ply");
    st = gt_mc_extract_job(&j);
    CHECK(st == GT_ERR_USAGE, "no iso value: status %d, want %d", (int)st, (int)GT_ERR_USAGE);
    CHECK(!api_exists(api_tmp("noiso.ply")), "a failed job left its output");
}

int main(void)
{
    const char *nrrd = api_testdata("mc/sphere.nrrd"), *raw = api_testdata("mc/blobs_24x20x16.u8.raw");
    if (!api_begin("mc_job", nrrd)) return 1;
    sphere(nrrd);
    raw_slabs(raw);
    edges_of_use(nrrd);
    return api_end("mc_job");
}
