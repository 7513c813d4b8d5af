/* The poissonrec job as an outside C program uses it (built against the
 * installed libcore by run-api-tests.sh): reconstruct the shipped bunny
 * points and check the mesh written: what the job reported, closed and
 * consistently oriented (each directed edge once, its reverse present),
 * genus 0 like the bunny, inside the bounding cube, with the density asked
 * for; and the volume beside it. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "common/log.h"
#include "common/timer.h"
#include "io/ply.h"
#include "poisson/poisson.h"

#include "api_test.h"


static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Closed and consistently oriented: every directed edge once and its
 * reverse present. Returns the number of undirected edges, or -1. */
static long oriented_closed_edges(const gt_ply_mesh *m)
{
    size_t ne = 3 * m->nface;
    uint64_t *e = malloc((ne + 1) * sizeof *e);
    if (!e) return -1;
    for (size_t f = 0; f < m->nface; f++) {
        const int32_t *t = m->face_idx + m->face_start[f];
        for (int k = 0; k < 3; k++) e[3 * f + k] = (uint64_t)(uint32_t)t[k] << 32 | (uint32_t)t[(k + 1) % 3];
    }
    qsort(e, ne, sizeof *e, cmp_u64);
    long ok = (long)(ne / 2);
    for (size_t i = 0; i < ne && ok >= 0; i++) {
        uint64_t rev = e[i] << 32 | e[i] >> 32;
        if ((i > 0 && e[i] == e[i - 1]) || !bsearch(&rev, e, ne, sizeof *e, cmp_u64)) ok = -1;
    }
    free(e);
    return ne % 2 ? -1 : ok;
}

/* The text after `key` in the first 4 KiB of a file (its header), or NULL. */
static const char *header_value(const char *path, const char *key, char *buf, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strstr(buf, key);
    return p ? p + strlen(key) : NULL;
}

int main(void)
{
    gt_set_progname("poisson_job");
    const char *in_path = api_testdata("poisson/bunny_8k.ply");
    if (!api_begin("poisson_job", in_path)) return 1;
    const char *mesh_path = api_tmp("mesh.ply"), *vol_path = api_tmp("chi.nrrd");

    gt_poisson_job job;
    gt_poisson_job_init(&job);
    job.input = in_path;
    job.output = mesh_path;
    job.volume = vol_path;
    job.params.depth = 5;
    job.params.volume_depth = 4;
    job.params.want_density = true;
    job.progress = false;
    gt_timings tm;
    gt_timings_init(&tm);
    gt_poisson_job_result res;
    gt_status s = gt_poisson_reconstruct_job(&job, &tm, &res);
    if (s != GT_OK) {
        gt_report(s);
        gt_device_shutdown();
        api_fails++;
        return api_end("poisson_job");
    }
    CHECK(res.npoints == 8000, "%zu points", res.npoints);
    CHECK(res.ntri > 1000 && res.nvert > 500, "%zu vertices, %zu triangles", res.nvert, res.ntri);
    CHECK(gt_timings_get(&tm, "read") > 0 && tm.n >= 4, "timings: %d stages", tm.n);

    gt_ply_mesh in, out;
    s = gt_ply_read(in_path, &in);
    CHECK(s == GT_OK, "%s", gt_errmsg());
    s = gt_ply_read(mesh_path, &out);
    CHECK(s == GT_OK, "mesh.ply: %s", gt_errmsg());
    if (api_fails) {
        gt_device_shutdown();
        return api_end("poisson_job");
    }
    CHECK(out.nvert == res.nvert && out.nface == res.ntri, "file %zu/%zu, reported %zu/%zu", out.nvert, out.nface,
          res.nvert, res.ntri);
    CHECK(gt_ply_all_triangles(&out), "faces are triangles");
    long ne = oriented_closed_edges(&out);
    CHECK(ne > 0, "closed and consistently oriented");
    long euler = (long)out.nvert - ne + (long)out.nface;
    CHECK(euler == 2, "Euler characteristic %ld (genus 0 expected)", euler);

    /* vertices inside the bounding cube: 1.1 x the points' longest side */
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t v = 0; v < in.nvert; v++)
        for (int a = 0; a < 3; a++) {
            double x = in.vdata[v * in.nprops + gt_ply_find(&in, a == 0 ? "x" : a == 1 ? "y" : "z")];
            lo[a] = fmin(lo[a], x), hi[a] = fmax(hi[a], x);
        }
    double side = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2])) * job.params.scale;
    size_t outside = 0;
    int px = gt_ply_find(&out, "x"), dens = gt_ply_find(&out, "density");
    for (size_t v = 0; v < out.nvert; v++)
        for (int a = 0; a < 3; a++) {
            double x = out.vdata[v * out.nprops + px + a], c = 0.5 * (lo[a] + hi[a]);
            if (!(fabs(x - c) <= 0.5 * side)) outside++;
        }
    CHECK(outside == 0, "%zu vertex coordinates outside the bounding cube", outside);

    /* the density asked for: finite and positive on the surface */
    CHECK(dens >= 0, "no density property");
    size_t bad = 0;
    for (size_t v = 0; dens >= 0 && v < out.nvert; v++) {
        float d = out.vdata[v * out.nprops + dens];
        if (!(d > 0 && isfinite(d))) bad++;
    }
    CHECK(bad == 0, "%zu vertices without a positive density", bad);

    /* the volume: (2^4)^3 samples and the iso the mesh was cut at */
    char hdr[4096];
    const char *sizes = header_value(vol_path, "sizes: ", hdr, sizeof hdr);
    CHECK(sizes && strncmp(sizes, "16 16 16\n", 9) == 0, "chi.nrrd sizes: %.20s", sizes ? sizes : "(none)");
    const char *iso = header_value(vol_path, "iso:=", hdr, sizeof hdr);
    double iso_file = iso ? strtod(iso, NULL) : NAN;
    CHECK(fabs(iso_file - res.iso) <= 1e-7 * fabs(res.iso), "chi.nrrd iso %.9g, job %.9g", iso_file, res.iso);

    gt_ply_free(&in), gt_ply_free(&out);
    gt_device_shutdown();
    return api_end("poisson_job");
}
