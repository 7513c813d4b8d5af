/* Mesh checks shared by the mc tests: closed oriented manifold (edge uses),
 * Euler characteristic, area, enclosed volume, canonical comparison. */
#ifndef MC_CHECK_H
#define MC_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mc/mc.h"

typedef struct { int64_t key; int dir; } mc_he;

static inline int mc_he_cmp(const void *a, const void *b)
{
    const mc_he *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->dir - y->dir;
}

/* Returns 0 when every edge is in exactly two triangles with opposite
 * directions (closed, oriented, edge-manifold), triangles have 3 distinct
 * vertices and every vertex is used; else a code saying what failed.
 * *nedges gets the number of distinct edges. */
static inline int mc_check_closed(const gt_mc_mesh *m, size_t *nedges)
{
    size_t n = 3 * m->ntri;
    mc_he *h = malloc((n ? n : 1) * sizeof *h);
    char *used = calloc(m->nvert ? m->nvert : 1, 1);
    int rc = 0;
    for (size_t t = 0; t < m->ntri; t++) {
        const int32_t *T = m->tris + 3 * t;
        if (T[0] == T[1] || T[1] == T[2] || T[0] == T[2]) rc = rc ? rc : 1;
        for (int w = 0; w < 3; w++) {
            int64_t a = T[w], b = T[(w + 1) % 3];
            if (a < 0 || b < 0 || (size_t)a >= m->nvert || (size_t)b >= m->nvert) { rc = 2; continue; }
            used[a] = 1;
            h[3 * t + w].key = a < b ? a * (int64_t)m->nvert + b : b * (int64_t)m->nvert + a;
            h[3 * t + w].dir = a < b ? 0 : 1;
        }
    }
    if (rc == 2) goto out;
    qsort(h, n, sizeof *h, mc_he_cmp);
    size_t ne = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && h[j].key == h[i].key) j++;
        if (j - i != 2) rc = rc ? rc : 3;                     /* edge not in exactly 2 triangles */
        else if (h[i].dir == h[i + 1].dir) rc = rc ? rc : 4;  /* inconsistent orientation */
        ne++;
        i = j;
    }
    for (size_t v = 0; v < m->nvert; v++)
        if (!used[v]) rc = rc ? rc : 5;
    if (nedges) *nedges = ne;
out:
    free(h);
    free(used);
    return rc;
}

/* vertices at identical positions (duplicates) */
static inline int mc_pos_cmp(const void *a, const void *b) { return memcmp(a, b, 3 * sizeof(float)); }
static inline size_t mc_duplicate_positions(const gt_mc_mesh *m)
{
    float *p = malloc((m->nvert ? m->nvert : 1) * 3 * sizeof(float));
    memcpy(p, m->xyz, m->nvert * 3 * sizeof(float));
    qsort(p, m->nvert, 3 * sizeof(float), mc_pos_cmp);
    size_t d = 0;
    for (size_t i = 1; i < m->nvert; i++)
        if (p[3 * i] == p[3 * i - 3] && p[3 * i + 1] == p[3 * i - 2] && p[3 * i + 2] == p[3 * i - 1]) d++;
    free(p);
    return d;
}

static inline void mc_area_volume(const gt_mc_mesh *m, double *area, double *vol)
{
    double A = 0, V = 0;
    for (size_t t = 0; t < m->ntri; t++) {
        const float *a = m->xyz + 3 * m->tris[3 * t], *b = m->xyz + 3 * m->tris[3 * t + 1],
                    *c = m->xyz + 3 * m->tris[3 * t + 2];
        double u[3], w[3], x[3];
        for (int k = 0; k < 3; k++) u[k] = b[k] - a[k], w[k] = c[k] - a[k];
        x[0] = u[1] * w[2] - u[2] * w[1];
        x[1] = u[2] * w[0] - u[0] * w[2];
        x[2] = u[0] * w[1] - u[1] * w[0];
        A += 0.5 * sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        V += (a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) - a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
              a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0])) / 6.0;
    }
    *area = A;
    *vol = V;
}

/* canonical triangle: rotate so the smallest index is first (keeps winding) */
static inline void mc_canon(const int32_t *in, int32_t *out)
{
    int r = in[0] <= in[1] && in[0] <= in[2] ? 0 : in[1] <= in[2] ? 1 : 2;
    for (int w = 0; w < 3; w++) out[w] = in[(r + w) % 3];
}
static inline int mc_tri_cmp(const void *a, const void *b) { return memcmp(a, b, 3 * sizeof(int32_t)) ; }
static inline int mc_tri_cmp_lex(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    for (int w = 0; w < 3; w++)
        if (x[w] != y[w]) return x[w] < y[w] ? -1 : 1;
    return 0;
}
/* 0 when both meshes have the same counts, the same triangle sets after
 * canonical ordering and positions (and normals) within rel * scale */
static inline int mc_same_mesh(const gt_mc_mesh *a, const gt_mc_mesh *b, double rel, double *maxdiff)
{
    (void)mc_tri_cmp;
    *maxdiff = 0;
    if (a->nvert != b->nvert) return 1;
    if (a->ntri != b->ntri) return 2;
    int32_t *ta = malloc((a->ntri ? a->ntri : 1) * 3 * sizeof(int32_t));
    int32_t *tb = malloc((a->ntri ? a->ntri : 1) * 3 * sizeof(int32_t));
    for (size_t t = 0; t < a->ntri; t++) {
        mc_canon(a->tris + 3 * t, ta + 3 * t);
        mc_canon(b->tris + 3 * t, tb + 3 * t);
    }
    qsort(ta, a->ntri, 3 * sizeof(int32_t), mc_tri_cmp_lex);
    qsort(tb, b->ntri, 3 * sizeof(int32_t), mc_tri_cmp_lex);
    int rc = memcmp(ta, tb, a->ntri * 3 * sizeof(int32_t)) ? 3 : 0;
    free(ta);
    free(tb);
    if (rc) return rc;
    for (size_t i = 0; i < 3 * a->nvert; i++) {
        double s = fabs((double)a->xyz[i]) > 1.0 ? fabs((double)a->xyz[i]) : 1.0;
        double d = fabs((double)a->xyz[i] - (double)b->xyz[i]) / s;
        if (d > *maxdiff) *maxdiff = d;
        if (a->nrm && b->nrm) {
            d = fabs((double)a->nrm[i] - (double)b->nrm[i]);
            if (d > *maxdiff) *maxdiff = d;
        }
    }
    if ((a->nrm != NULL) != (b->nrm != NULL)) return 5;
    return *maxdiff <= rel ? 0 : 4;
}

/* The uint8 test volume testdata/mc/<name> (raw NRRD of known size n
 * voxels), read without the io library: the data follow the blank line that
 * ends the header. NULL when missing. */
#include <stdio.h>
static inline float *mc_load_u8_nrrd(const char *name, size_t n)
{
    const char *td = getenv("GT_TESTDATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/mc/%s", td ? td : "testdata", name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(path, sizeof path, "testdata/mc/%s", name);
        f = fopen(path, "rb");
    }
    if (!f) return NULL;
    static unsigned char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    size_t h = 0;
    while (h + 1 < len && !(buf[h] == '\n' && buf[h + 1] == '\n')) h++;
    h += 2;
    if (h > len || len - h != n) return NULL;
    float *v = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) v[i] = buf[h + i];
    return v;
}

#endif
