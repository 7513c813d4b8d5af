/* Shared helpers of the poissonrec tests: sampled surfaces and mesh checks. */
#ifndef PR_TESTUTIL_H
#define PR_TESTUTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gt_test.h"
#include "poisson/poisson.h"

/* n points on a sphere of radius r at c, outward normals */
static inline void pr_sample_sphere(gt_rng *g, size_t n, double r, const double c[3], float *xyz, float *nrm)
{
    for (size_t i = 0; i < n; i++) {
        double z = gt_rng_range(g, -1, 1), ph = gt_rng_range(g, 0, 2 * M_PI), s = sqrt(1 - z * z);
        double d[3] = {s * cos(ph), s * sin(ph), z};
        for (int a = 0; a < 3; a++) { xyz[3 * i + a] = (float)(c[a] + r * d[a]); nrm[3 * i + a] = (float)d[a]; }
    }
}
/* n points on a sphere of radius r at c whose density grows `ratio`-fold
 * from its -x pole to its +x pole (exponentially in x, as a scan's falls
 * with distance); outward normals */
static inline void pr_sample_sphere_uneven(gt_rng *g, size_t n, double r, const double c[3], double ratio, float *xyz,
                                           float *nrm)
{
    size_t i = 0;
    while (i < n) {
        double z = gt_rng_range(g, -1, 1), ph = gt_rng_range(g, 0, 2 * M_PI), s = sqrt(1 - z * z);
        double d[3] = {s * cos(ph), s * sin(ph), z};
        if (gt_rng_uniform(g) > pow(ratio, (d[0] - 1) / 2)) continue;
        for (int a = 0; a < 3; a++) { xyz[3 * i + a] = (float)(c[a] + r * d[a]); nrm[3 * i + a] = (float)d[a]; }
        i++;
    }
}
/* torus around z: major R, minor r; area-uniform by rejection */
static inline void pr_sample_torus(gt_rng *g, size_t n, double R, double r, float *xyz, float *nrm)
{
    size_t i = 0;
    while (i < n) {
        double u = gt_rng_range(g, 0, 2 * M_PI), v = gt_rng_range(g, 0, 2 * M_PI);
        if (gt_rng_uniform(g) * (R + r) > R + r * cos(v)) continue;
        double d[3] = {cos(v) * cos(u), cos(v) * sin(u), sin(v)};
        double p[3] = {(R + r * cos(v)) * cos(u), (R + r * cos(v)) * sin(u), r * sin(v)};
        for (int a = 0; a < 3; a++) { xyz[3 * i + a] = (float)p[a]; nrm[3 * i + a] = (float)d[a]; }
        i++;
    }
}
static inline double pr_torus_dist(const float *p, double R, double r)
{
    double q = sqrt((double)p[0] * p[0] + (double)p[1] * p[1]) - R;
    return fabs(sqrt(q * q + (double)p[2] * p[2]) - r);
}

/* Edge-manifold and closed: every undirected edge in exactly two triangles,
 * used once in each direction (consistent orientation). Returns Euler
 * characteristic through *chi; 0 when OK, else a count of bad edges. */
typedef struct { uint64_t k; int cnt; } pr_edge;
static int pr_edge_cmp(const void *a, const void *b)
{
    uint64_t x = ((const pr_edge *)a)->k, y = ((const pr_edge *)b)->k;
    return (x > y) - (x < y);
}
/* mean and max of | |v - c| - r | over the mesh's vertices: their distance
 * to the sphere of centre c and radius r */
static inline void pr_sphere_dist(const gt_pr_mesh *m, const double c[3], double r, double *mean, double *mx)
{
    double sum = 0, worst = 0;
    for (size_t v = 0; v < m->nvert; v++) {
        double d2 = 0;
        for (int a = 0; a < 3; a++) d2 += ((double)m->xyz[3 * v + a] - c[a]) * ((double)m->xyz[3 * v + a] - c[a]);
        const double e = fabs(sqrt(d2) - r);
        sum += e;
        if (e > worst) worst = e;
    }
    *mean = m->nvert ? sum / (double)m->nvert : 0.0;
    *mx = worst;
}
static inline long pr_check_closed_manifold(const gt_pr_mesh *m, long *euler)
{
    size_t ne = 3 * m->ntri;
    pr_edge *e = malloc((ne ? ne : 1) * sizeof *e);
    for (size_t t = 0; t < m->ntri; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = (uint32_t)m->tri[3 * t + k], b = (uint32_t)m->tri[3 * t + (k + 1) % 3];
            int dir = a < b ? 1 : 1000;
            uint64_t key = a < b ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
            e[3 * t + k].k = key;
            e[3 * t + k].cnt = dir;
        }
    qsort(e, ne, sizeof *e, pr_edge_cmp);
    long bad = 0, nedges = 0;
    for (size_t i = 0; i < ne;) {
        size_t j = i;
        int s = 0;
        while (j < ne && e[j].k == e[i].k) s += e[j++].cnt;
        if (s != 1001) bad++;
        nedges++;
        i = j;
    }
    /* used vertices */
    uint8_t *used = calloc(m->nvert ? m->nvert : 1, 1);
    long nv = 0;
    for (size_t t = 0; t < 3 * m->ntri; t++)
        if (!used[m->tri[t]]) { used[m->tri[t]] = 1; nv++; }
    free(used);
    free(e);
    *euler = nv - nedges + (long)m->ntri;
    return bad;
}
#endif

#ifndef PR_TESTUTIL_READER
#define PR_TESTUTIL_READER
#include <stdio.h>
/* Reader for the fixed layout of testdata/poisson PLY files (binary LE, 6 floats
 * x y z nx ny nz per vertex), so the algorithm tests do not depend on lib/io. */
static inline size_t pr_read_points(const char *path, float **xyz, float **nrm)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char line[256];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "element vertex", 14)) n = (size_t)atol(line + 15);
        if (!strncmp(line, "end_header", 10)) break;
    }
    float *buf = malloc(n * 24 + 1);
    if (fread(buf, 24, n, f) != n) n = 0;
    fclose(f);
    *xyz = malloc(n * 12 + 1);
    *nrm = malloc(n * 12 + 1);
    for (size_t i = 0; i < n; i++) {
        memcpy(*xyz + 3 * i, buf + 6 * i, 12);
        memcpy(*nrm + 3 * i, buf + 6 * i + 3, 12);
    }
    free(buf);
    return n;
}
static inline char *pr_testdata(const char *name)
{
    const char *d = getenv("GT_TESTDATA");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/poisson/%s", d ? d : "testdata", name);
    return buf;
}
/* CPU-prepared and CPU-solved state of `in` at depth/scale (p: the params used) */
/* the CPU solve at depth, scale and --coarse-levels, with or without
 * --dense-solve */
static inline void pr_solve_cpu_kd(const gt_pr_input *in, int depth, double scale, int coarse_levels, bool dense,
                                   gt_pr_state *s, gt_pr_params *p)
{
    gt_pr_params_default(p);
    p->depth = depth;
    p->scale = scale;
    p->coarse_levels = coarse_levels;
    p->dense_solve = dense;
    gt_pr_points pts;
    GT_ASSERT_OK(gt_pr_points_make(in, p, NULL, &pts));
    GT_ASSERT_OK(gt_pr_prepare_cpu(&pts, p, NULL, s));
    GT_ASSERT_OK(gt_pr_solve_cpu(s, p, NULL));
}
static inline void pr_solve_cpu_k(const gt_pr_input *in, int depth, double scale, int coarse_levels, gt_pr_state *s,
                                  gt_pr_params *p)
{
    pr_solve_cpu_kd(in, depth, scale, coarse_levels, false, s, p);
}
static inline void pr_solve_cpu(const gt_pr_input *in, int depth, double scale, gt_pr_state *s, gt_pr_params *p)
{
    pr_solve_cpu_k(in, depth, scale, GT_PR_COARSE_LEVELS, s, p);
}

typedef gt_status (*pr_extract_fn)(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out);
/* An iso value above or below chi's range crosses no cell: `extract` (the
 * CPU or the GPU extraction) gives an empty mesh for a solved sphere. */
static inline void pr_check_iso_outside(pr_extract_fn extract, uint64_t seed, size_t n, int depth)
{
    gt_rng g = {seed};
    float *x = malloc(12 * n), *nn = malloc(12 * n);
    double c[3] = {0, 0, 0};
    pr_sample_sphere(&g, n, 1.0, c, x, nn);
    gt_pr_input in = {n, x, nn, NULL};
    gt_pr_state s;
    gt_pr_params p;
    pr_solve_cpu(&in, depth, 1.1, &s, &p);
    double isos[2] = {1e300, -1e300};
    for (int i = 0; i < 2; i++) {
        s.iso = isos[i];
        gt_pr_mesh m;
        memset(&m, 0, sizeof m);
        GT_ASSERT_OK(extract(&s, &p, &m));
        assert_int_equal(m.nvert, 0);
        assert_int_equal(m.ntri, 0);
        gt_pr_mesh_free(&m);
    }
    gt_pr_state_free(&s);
    free(x);
    free(nn);
}
#endif
