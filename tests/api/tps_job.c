/* The stpsfit jobs through libcore's public API, as an outside C program
 * uses them (compiled against the installed headers and library through
 * pkg-config by tests/api/run-api-tests.sh), on testdata/tps and
 * testdata/mc: fit then apply (an interpolating spline maps the sources onto
 * the targets), a PLY mesh warp (faces and other properties kept, vertices
 * where the spline puts them), an identity volume warp, and a failing fit
 * that leaves no file. Exit 0: passed; 1: failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/ply.h"
#include "io/points.h"
#include "io/volume.h"
#include "tps/tps.h"

#include "api_test.h"

/* Fit the spline of SOURCE -> TARGET (lambda 0) into `out`. */
static gt_status fit(const char *src, const char *dst, const char *out)
{
    gt_tps_job j;
    gt_tps_job_init(&j);
    j.source = src;
    j.target = dst;
    j.output = out;
    return gt_tps_fit_job(&j);
}

/* lambda = 0 interpolates: the fitted spline applied to the sources gives
 * the targets (to 1e-9 of their scale). */
static void fit_apply(const char *src, const char *dst)
{
    gt_status st = fit(src, dst, api_tmp("p.tps"));
    CHECK(st == GT_OK, "fit: %s", gt_errmsg());
    gt_tps_job j;
    gt_tps_job_init(&j);
    j.params = api_tmp("p.tps");
    j.input = src;
    j.output = api_tmp("w.txt");
    if (st == GT_OK) st = gt_tps_apply_job(&j);
    CHECK(st == GT_OK, "apply: %s", gt_errmsg());
    double *w = NULL, *t = NULL;
    size_t nw = 0, nt = 0;
    if (st == GT_OK) st = gt_points_read(api_tmp("w.txt"), &w, &nw);
    if (st == GT_OK) st = gt_points_read(dst, &t, &nt);
    CHECK(st == GT_OK && nw == nt && nw > 0, "warped %zu points, %zu targets (%s)", nw, nt, gt_errmsg());
    if (st == GT_OK && nw == nt) {
        double err = 0, scale = 0;
        for (size_t i = 0; i < 3 * nw; i++) {
            err = fmax(err, fabs(w[i] - t[i]));
            scale = fmax(scale, fabs(t[i]));
        }
        CHECK(err <= 1e-9 * scale, "f(source) is %.3g from the targets (scale %.3g)", err, scale);
    }
    free(w);
    free(t);
}

/* A PLY mesh through the spline: same vertex count, faces and extra
 * properties; positions equal to gt_tps_eval_cpu of the input's (float). */
static void mesh(const char *grid)
{
    gt_tps_job j;
    gt_tps_job_init(&j);
    j.params = api_tmp("p.tps");
    j.input = grid;
    j.output = api_tmp("g.ply");
    j.ascii = true;
    gt_status st = gt_tps_apply_job(&j);
    CHECK(st == GT_OK, "mesh apply: %s", gt_errmsg());
    gt_ply_mesh a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    gt_tps t;
    gt_tps_init(&t);
    if (st == GT_OK) st = gt_ply_read(grid, &a);
    if (st == GT_OK) st = gt_ply_read(api_tmp("g.ply"), &b);
    if (st == GT_OK) st = gt_tps_read(api_tmp("p.tps"), &t);
    CHECK(st == GT_OK, "reading back: %s", gt_errmsg());
    if (st == GT_OK) {
        CHECK(b.format == GT_PLY_ASCII, "output is not ascii");
        CHECK(a.nvert == b.nvert && a.nprops == b.nprops && a.nface == b.nface && a.nface > 0,
              "mesh changed shape: %zu/%zu vertices, %zu/%zu faces", a.nvert, b.nvert, a.nface, b.nface);
        if (a.nface == b.nface && a.nface > 0)
            CHECK(!memcmp(a.face_idx, b.face_idx, a.face_start[a.nface] * sizeof *a.face_idx),
                  "faces changed");
        int q = gt_ply_find(&a, "quality");
        int c[3] = {gt_ply_find(&a, "x"), gt_ply_find(&a, "y"), gt_ply_find(&a, "z")};
        bool have = q >= 0 && c[0] >= 0 && c[1] >= 0 && c[2] >= 0;
        CHECK(have, "grid.ply lacks x, y, z or quality");
        double moved = 0, qdiff = 0, err = 0;
        for (size_t v = 0; have && v < a.nvert && a.nvert == b.nvert; v++) {
            const float *pa = a.vdata + v * a.nprops, *pb = b.vdata + v * b.nprops;
            double p[3] = {pa[c[0]], pa[c[1]], pa[c[2]]}, f[3];
            gt_tps_eval_cpu(&t, p, 1, f);
            for (int k = 0; k < 3; k++) {
                err = fmax(err, fabs(pb[c[k]] - f[k]) / fmax(1.0, fabs(f[k])));
                moved = fmax(moved, fabs(pb[c[k]] - pa[c[k]]));
            }
            qdiff = fmax(qdiff, fabs(pb[q] - pa[q]));
        }
        CHECK(err < 1e-6, "vertices are %.3g from the spline's values", err);
        CHECK(moved > 1e-3, "no vertex moved (%.3g)", moved);
        CHECK(qdiff == 0, "quality changed by %.3g", qdiff);
    }
    gt_tps_free(&t);
    gt_ply_free(&a);
    gt_ply_free(&b);
}

/* The identity spline (points fitted onto themselves) resamples a volume
 * onto itself. */
static void volume(const char *nrrd)
{
    FILE *f = fopen(api_tmp("id.txt"), "w");
    if (!f) {
        CHECK(0, "cannot write %s", api_tmp("id.txt"));
        return;
    }
    fputs("-3 -3 -3\n3 -3 -3\n-3 3 -3\n-3 -3 3\n3 3 3\n0.5 -1 2\n", f);
    fclose(f);
    gt_status st = fit(api_tmp("id.txt"), api_tmp("id.txt"), api_tmp("id.tps"));
    gt_tps_job j;
    gt_tps_job_init(&j);
    j.params = api_tmp("id.tps");
    j.input = nrrd;
    j.output = api_tmp("v.nrrd");
    if (st == GT_OK) st = gt_tps_apply_volume_job(&j);
    CHECK(st == GT_OK, "volume warp: %s", gt_errmsg());
    gt_volume a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (st == GT_OK) st = gt_nrrd_read(nrrd, &a);
    if (st == GT_OK) st = gt_nrrd_read(api_tmp("v.nrrd"), &b);
    CHECK(st == GT_OK, "reading back: %s", gt_errmsg());
    if (st == GT_OK) {
        const int64_t *d = a.info.dims;
        CHECK(!memcmp(d, b.info.dims, sizeof a.info.dims) && a.info.type == b.info.type,
              "the warped volume has another grid or type");
        double err = 0, range = 0;
        for (int64_t k = 0; k < d[2]; k++)
            for (int64_t jj = 0; jj < d[1]; jj++)
                for (int64_t i = 0; i < d[0]; i++) {
                    double va = gt_volume_get(&a, i, jj, k);
                    err = fmax(err, fabs(gt_volume_get(&b, i, jj, k) - va));
                    range = fmax(range, fabs(va));
                }
        CHECK(range > 0 && err <= 1e-4 * range, "identity warp changed voxels by %.3g (range %.3g)", err, range);
    }
    gt_volume_free(&a);
    gt_volume_free(&b);
}

/* SOURCE and TARGET of different lengths: GT_ERR_DATA, no parameter file. */
static void failure(const char *src, const char *other)
{
    gt_status st = fit(src, other, api_tmp("bad.tps"));
    CHECK(st == GT_ERR_DATA, "unpaired points: status %d, want %d (%s)", (int)st, (int)GT_ERR_DATA, gt_errmsg());
    CHECK(!api_exists(api_tmp("bad.tps")), "a failed fit left its output");
}

int main(void)
{
    const char *src = api_testdata("tps/src.txt"), *dst = api_testdata("tps/dst.txt");
    const char *src2d = api_testdata("tps/src2d.txt"), *grid = api_testdata("tps/grid.ply");
    const char *nrrd = api_testdata("mc/sphere.nrrd");
    if (!api_begin("tps_job", src)) return 1;
    fit_apply(src, dst);
    mesh(grid);
    volume(nrrd);
    failure(src, src2d);
    return api_end("tps_job");
}
