/* CPU reference of marching cubes with shared vertices (one z-slab at a time;
 * a single pass is the slab [0, Z)). Plain and direct: per-point edge masks,
 * a prefix sum over points for vertex numbers, then the voxels' triangles.
 * The per-vertex math (edge numbering, position, normal) is mc_math.h's,
 * which the CUDA kernels compile too. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "mc/mc.h"
#include "mc/mc_math.h"

void gt_mc_params_init(gt_mc_params *p, double iso)
{
    memset(p, 0, sizeof *p);
    p->iso = iso;
    for (int a = 0; a < 3; a++) p->dir[a][a] = 1.0;
}

gt_status gt_mc_geom_init(gt_mc_geom *g, const int64_t dims[3], const gt_mc_params *p)
{
    memset(g, 0, sizeof *g);
    if (!isfinite(p->iso)) return gt_fail(GT_ERR_USAGE, "--iso: the iso value must be finite");
    for (int a = 0; a < 3; a++) {
        if (dims[a] < 1) return gt_fail(GT_ERR_DATA, "volume size %lld along axis %d", (long long)dims[a], a);
        g->dims[a] = dims[a];
        g->origin[a] = p->origin[a];
        for (int b = 0; b < 3; b++) g->dir[a][b] = p->dir[a][b];
    }
    g->iso = p->iso;
    if (p->iso > FLT_MAX) g->isof = INFINITY;
    else if (p->iso < -FLT_MAX) g->isof = -FLT_MAX;
    else {
        float f = (float)p->iso;
        if ((double)f < p->iso) f = nextafterf(f, INFINITY);
        while ((double)nextafterf(f, -INFINITY) >= p->iso) f = nextafterf(f, -INFINITY);
        g->isof = f;
    }
    const double(*d)[3] = p->dir;
    double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
                 d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                 d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
    if (!(fabs(det) > 0) || !isfinite(det))
        return gt_fail(GT_ERR_DATA, "space directions are singular (determinant %g)", det);
    double inv[3][3];
    inv[0][0] = (d[1][1] * d[2][2] - d[1][2] * d[2][1]) / det;
    inv[0][1] = (d[0][2] * d[2][1] - d[0][1] * d[2][2]) / det;
    inv[0][2] = (d[0][1] * d[1][2] - d[0][2] * d[1][1]) / det;
    inv[1][0] = (d[1][2] * d[2][0] - d[1][0] * d[2][2]) / det;
    inv[1][1] = (d[0][0] * d[2][2] - d[0][2] * d[2][0]) / det;
    inv[1][2] = (d[0][2] * d[1][0] - d[0][0] * d[1][2]) / det;
    inv[2][0] = (d[1][0] * d[2][1] - d[1][1] * d[2][0]) / det;
    inv[2][1] = (d[0][1] * d[2][0] - d[0][0] * d[2][1]) / det;
    inv[2][2] = (d[0][0] * d[1][1] - d[0][1] * d[1][0]) / det;
    /* world position w = origin + D^T g, so the world gradient is D^{-1} grad_g */
    memcpy(g->dinv, inv, sizeof inv);
    g->nsign = p->flip ? 1.0 : -1.0;
    g->reverse = p->flip != (det < 0);
    g->normals = p->normals;
    return GT_OK;
}

void gt_mc_mesh_free(gt_mc_mesh *m)
{
    free(m->xyz);
    free(m->nrm);
    free(m->tris);
    memset(m, 0, sizeof *m);
}

static gt_status grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return GT_OK;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return gt_fail(GT_ERR_RUNTIME, "out of memory (%zu bytes for the mesh)", c * elem);
    *p = q;
    *cap = c;
    return GT_OK;
}

gt_status gt_mc_mesh_reserve(gt_mc_mesh *m, size_t nv, size_t nt, bool normals)
{
    if (m->nvert + nv > (size_t)INT32_MAX)
        return gt_fail(GT_ERR_RUNTIME, "mesh too large: %zu vertices exceed the PLY int index range",
                       m->nvert + nv);
    if (m->nvert + nv > m->cap_v || (normals && !m->nrm)) {
        size_t c = m->cap_v ? m->cap_v : 1024;
        while (c < m->nvert + nv) c *= 2;
        float *x = realloc(m->xyz, c * 3 * sizeof(float));
        if (!x) return gt_fail(GT_ERR_RUNTIME, "out of memory (%zu vertices)", c);
        m->xyz = x;
        if (normals) {
            float *n = realloc(m->nrm, c * 3 * sizeof(float));
            if (!n) return gt_fail(GT_ERR_RUNTIME, "out of memory (%zu normals)", c);
            m->nrm = n;
        }
        m->cap_v = c;
    }
    size_t ct = m->cap_t;
    GT_TRY(grow((void **)&m->tris, &ct, m->ntri + nt, 3 * sizeof(int32_t)));
    m->cap_t = ct;
    return GT_OK;
}

/* ---------------------------------------------------------------- slab */

typedef struct slab {
    const float *buf;
    int64_t X, Y, Z, zb;
    float isof;
} slab;

static inline float val(const slab *s, int64_t i, int64_t j, int64_t k)
{
    return s->buf[(size_t)(k - s->zb) * (size_t)(s->X * s->Y) + (size_t)j * (size_t)s->X + (size_t)i];
}
static inline int is_in(const slab *s, int64_t i, int64_t j, int64_t k)
{
    return val(s, i, j, k) >= s->isof;
}
static inline unsigned edge_mask(const slab *s, int64_t i, int64_t j, int64_t k)
{
    int c = is_in(s, i, j, k);
    unsigned m = 0;
    if (i + 1 < s->X && is_in(s, i + 1, j, k) != c) m |= 1u;
    if (j + 1 < s->Y && is_in(s, i, j + 1, k) != c) m |= 2u;
    if (k + 1 < s->Z && is_in(s, i, j, k + 1) != c) m |= 4u;
    return m;
}

static void emit_vertex(const slab *s, const gt_mc_geom *g, int64_t i, int64_t j, int64_t k, int a,
                        float *xyz, float *nrm)
{
    float v0 = val(s, i, j, k), v1 = val(s, i + (a == 0), j + (a == 1), k + (a == 2));
    gt_mc_vertex(s->buf, s->X, s->Y, s->Z, s->zb, g->origin, g->dir, g->dinv, g->nsign, g->iso, i, j, k, a, v0, v1,
                 xyz, nrm);
}

gt_status gt_mc_slab_cpu(const float *buf, int64_t zb, int64_t nzb, int64_t z0, int64_t z1,
                         const gt_mc_geom *g, gt_mc_mesh *m)
{
    const gt_mc_table *tab = gt_mc_table_get();
    slab s = {buf, g->dims[0], g->dims[1], g->dims[2], zb, g->isof};
    int64_t X = s.X, Y = s.Y, Z = s.Z;
    int64_t kc = z1 + 1 < Z ? z1 + 1 : Z; /* count planes: own + the next slab's first */
    if (zb > (z0 > 0 ? z0 - 1 : 0) || zb + nzb < (z1 + 2 < Z ? z1 + 2 : Z) || z0 >= z1)
        return gt_fail(GT_ERR_RUNTIME, "internal: bad slab [%lld,%lld) in [%lld,+%lld)",
                       (long long)z0, (long long)z1, (long long)zb, (long long)nzb);
    size_t np = (size_t)(kc - z0) * (size_t)(X * Y);
    uint8_t *mask = malloc(np ? np : 1);
    int64_t *vid = malloc((np ? np : 1) * sizeof *vid);
    if (!mask || !vid) {
        free(mask);
        free(vid);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (slab of %zu points)", np);
    }
    /* edge masks and vertex numbers in edge-id order */
    int64_t nv = 0, nv_own = 0;
    for (int64_t k = z0; k < kc; k++) {
        if (k == z1) nv_own = nv;
        for (int64_t j = 0; j < Y; j++)
            for (int64_t i = 0; i < X; i++) {
                size_t p = (size_t)((k - z0) * Y + j) * (size_t)X + (size_t)i;
                unsigned mk = edge_mask(&s, i, j, k);
                mask[p] = (uint8_t)mk;
                vid[p] = (int64_t)m->nvert + nv;
                nv += __builtin_popcount(mk);
            }
    }
    if (kc == z1) nv_own = nv;
    /* triangles */
    int64_t kt = z1 < Z - 1 ? z1 : Z - 1;
    size_t nt = 0;
    for (int64_t k = z0; k < kt; k++)
        for (int64_t j = 0; j + 1 < Y; j++)
            for (int64_t i = 0; i + 1 < X; i++) {
                unsigned c = 0;
                for (int n = 0; n < 8; n++) c |= (unsigned)is_in(&s, i + (n & 1), j + ((n >> 1) & 1), k + (n >> 2)) << n;
                nt += tab->ntri[c];
            }
    gt_status st = gt_mc_mesh_reserve(m, (size_t)nv_own, nt, g->normals);
    if (st != GT_OK) {
        free(mask);
        free(vid);
        return st;
    }
    size_t v = m->nvert;
    for (int64_t k = z0; k < z1; k++)
        for (int64_t j = 0; j < Y; j++)
            for (int64_t i = 0; i < X; i++) {
                unsigned mk = mask[(size_t)((k - z0) * Y + j) * (size_t)X + (size_t)i];
                for (int a = 0; a < 3; a++)
                    if (mk >> a & 1u) {
                        emit_vertex(&s, g, i, j, k, a, m->xyz + 3 * v, g->normals ? m->nrm + 3 * v : NULL);
                        v++;
                    }
            }
    size_t t = m->ntri;
    for (int64_t k = z0; k < kt; k++)
        for (int64_t j = 0; j + 1 < Y; j++)
            for (int64_t i = 0; i + 1 < X; i++) {
                unsigned c = 0;
                for (int n = 0; n < 8; n++) c |= (unsigned)is_in(&s, i + (n & 1), j + ((n >> 1) & 1), k + (n >> 2)) << n;
                for (int q = 0; q < tab->ntri[c]; q++) {
                    int32_t idx[3];
                    for (int w = 0; w < 3; w++) {
                        int ax;
                        unsigned o[3];
                        gt_mc_edge_start(tab->tri[c][3 * q + w], &ax, &o[0], &o[1], &o[2]);
                        size_t p = (size_t)((k + o[2] - z0) * Y + j + o[1]) * (size_t)X + (size_t)(i + o[0]);
                        unsigned mk = mask[p];
                        idx[w] = (int32_t)(vid[p] + __builtin_popcount(mk & ((1u << ax) - 1u)));
                    }
                    int32_t *T = m->tris + 3 * t;
                    T[0] = idx[0];
                    T[1] = g->reverse ? idx[2] : idx[1];
                    T[2] = g->reverse ? idx[1] : idx[2];
                    t++;
                }
            }
    m->nvert = v;
    m->ntri = t;
    free(mask);
    free(vid);
    return GT_OK;
}
