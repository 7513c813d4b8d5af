/* Surface extraction from the depth-D cells of the octree.
 *
 * chi is evaluated once per cell corner (corners deduplicated by their
 * Morton key), and every cell is cut into the 6 tetrahedra of the Kuhn
 * triangulation (all sharing the cell's main diagonal), which is one
 * consistent triangulation of space: marching tetrahedra on it has no
 * ambiguous cases, and vertices shared through the (corner, corner) edge key
 * make the mesh a closed 2-manifold wherever the set of cells encloses the
 * surface. The set starts as the depth-D nodes and grows by any face-neighbour
 * cell that the surface crosses into, so holes in the data, where the
 * surface leaves the band of fine nodes, are closed too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/timer.h"
#include "gt_config.h"
#include "poisson/poisson.h"
#if GT_HAVE_CUDA
#include "kernels/poisson/pr_gpu.h"
#endif

/* ---------------------------------------------------- uint64 -> int32 map */
typedef struct {
    uint64_t *k; /* key + 1; 0 = empty */
    int32_t *v;
    size_t cap, n;
} hmap;

static inline uint64_t hmix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static gt_status hm_init(hmap *h, size_t expect)
{
    size_t cap = 64;
    while (cap < 2 * expect) cap <<= 1;
    h->k = gt_calloc(cap, sizeof *h->k, "hash map");
    h->v = gt_malloc_array(cap, sizeof *h->v, "hash map");
    h->cap = cap;
    h->n = 0;
    return (h->k && h->v) ? GT_OK : GT_ERR_RUNTIME;
}
static void hm_free(hmap *h) { free(h->k); free(h->v); memset(h, 0, sizeof *h); }
static gt_status hm_grow(hmap *h)
{
    hmap g;
    GT_TRY(hm_init(&g, h->cap));
    for (size_t i = 0; i < h->cap; i++) {
        if (!h->k[i]) continue;
        size_t j = hmix(h->k[i]) & (g.cap - 1);
        while (g.k[j]) j = (j + 1) & (g.cap - 1);
        g.k[j] = h->k[i];
        g.v[j] = h->v[i];
    }
    g.n = h->n;
    hm_free(h);
    *h = g;
    return GT_OK;
}
/* find key; when absent and insert_val >= 0 insert it. Returns value or -1;
 * *inserted tells whether it was new. */
static int32_t hm_get(hmap *h, uint64_t key, int32_t insert_val, int *inserted, gt_status *st)
{
    *inserted = 0;
    uint64_t kk = key + 1;
    size_t j = hmix(kk) & (h->cap - 1);
    while (h->k[j]) {
        if (h->k[j] == kk) return h->v[j];
        j = (j + 1) & (h->cap - 1);
    }
    if (insert_val < 0) return -1;
    if (2 * (h->n + 1) > h->cap) {
        if ((*st = hm_grow(h)) != GT_OK) return -1;
        return hm_get(h, key, insert_val, inserted, st);
    }
    h->k[j] = kk;
    h->v[j] = insert_val;
    h->n++;
    *inserted = 1;
    return insert_val;
}

/* growable arrays */
#define VEC_PUSH(arr, n, cap, val, st)                                              \
    do {                                                                            \
        if ((n) == (cap)) {                                                         \
            size_t nc_ = (cap) ? 2 * (cap) : 1024;                                  \
            void *np_ = realloc((arr), nc_ * sizeof *(arr));                        \
            if (!np_) { st = gt_fail(GT_ERR_RUNTIME, "out of memory (mesh)"); break; } \
            (arr) = np_;                                                            \
            (cap) = nc_;                                                            \
        }                                                                           \
        (arr)[(n)++] = (val);                                                       \
    } while (0)

/* value at unit point q of the functions of `level` with per-node values arr
 * (descending the octree, binary search only where a cell does not exist) */
static double eval_levels(const gt_pr_octree *o, const double q[3], const double *arr, int lmin, int lmax)
{
    double sum = 0.0;
    /* cells outside the unit cube have no node: search (and find nothing) */
    int inside = 1;
    for (int a = 0; a < 3; a++) inside &= q[a] >= 0 && q[a] < 1;
    int32_t node = inside ? 0 : -1;
    for (int d = 0; d <= lmax; d++) {
        double sc = ldexp(1.0, d);
        int64_t c[3];
        for (int a = 0; a < 3; a++) c[a] = (int64_t)floor(q[a] * sc);
        if (d >= lmin) {
            for (int i = 0; i < 27; i++) {
                int64_t nc[3] = {c[0] + i % 3 - 1, c[1] + (i / 3) % 3 - 1, c[2] + i / 9 - 1};
                int32_t t = node >= 0 ? o->nbr[27 * (size_t)node + i] : gt_pr_find(o, d, nc[0], nc[1], nc[2]);
                if (t < 0) continue;
                double f = 1.0;
                for (int a = 0; a < 3; a++) f *= gt_pr_bspline(q[a] * sc - (double)nc[a] - 0.5);
                sum += arr[t] * f;
            }
        }
        if (d < lmax) {
            if (node >= 0 && o->child[node] >= 0) {
                int cb = 0;
                for (int a = 0; a < 3; a++) {
                    int64_t cc = (int64_t)floor(q[a] * sc * 2.0);
                    if (cc < 0) cc = 0;
                    cb |= (int)(cc & 1) << a;
                }
                node = o->child[node] + cb;
            } else {
                node = -1;
            }
        }
    }
    return sum;
}

typedef struct {
    const gt_pr_state *s;
    int D;
    hmap cmap; /* corner key -> corner index */
    double *cval;
    size_t nc, ccap;
    uint32_t *cxyz; /* 3 per corner */
    size_t cxcap;
} corners_t;

static int32_t corner_get(corners_t *C, uint32_t x, uint32_t y, uint32_t z, gt_status *st)
{
    uint64_t key = gt_pr_morton(x, y, z);
    int ins;
    int32_t id = hm_get(&C->cmap, key, (int32_t)C->nc, &ins, st);
    if (*st != GT_OK) return -1;
    if (ins) {
        double q[3] = {ldexp((double)x, -C->D), ldexp((double)y, -C->D), ldexp((double)z, -C->D)};
        double v = eval_levels(&C->s->oct, q, C->s->coef, 0, C->D);
        size_t n0 = C->nc;
        VEC_PUSH(C->cval, C->nc, C->ccap, v, *st);
        if (*st != GT_OK) return -1;
        size_t m = 3 * n0;
        VEC_PUSH(C->cxyz, m, C->cxcap, x, *st);
        VEC_PUSH(C->cxyz, m, C->cxcap, y, *st);
        VEC_PUSH(C->cxyz, m, C->cxcap, z, *st);
        if (*st != GT_OK) return -1;
    }
    return id;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

gt_status gt_pr_extract_cpu(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out)
{
    const gt_pr_octree *o = &s->oct;
    const int D = o->depth;
    const uint32_t res = 1u << D;
    const double iso = s->iso;
    gt_status st = GT_OK;
    corners_t C;
    memset(&C, 0, sizeof C);
    C.s = s;
    C.D = D;
    hmap cells, edges;
    memset(&cells, 0, sizeof cells);
    memset(&edges, 0, sizeof edges);
    uint64_t *cellv = NULL;
    size_t ncell = 0, cellcap = 0;
    float *vx = NULL;
    size_t nvx = 0, vxcap = 0;
    int32_t *tri = NULL;
    size_t ntri3 = 0, tricap = 0;
    size_t nfine = o->level_start[D + 1] - o->level_start[D];
    if ((st = hm_init(&cells, 2 * nfine)) != GT_OK || (st = hm_init(&C.cmap, 2 * nfine)) != GT_OK ||
        (st = hm_init(&edges, 4 * nfine)) != GT_OK)
        goto done;
    for (size_t v = o->level_start[D]; v < o->level_start[D + 1]; v++) {
        int ins;
        hm_get(&cells, o->key[v], 1, &ins, &st);
        if (st != GT_OK) goto done;
        VEC_PUSH(cellv, ncell, cellcap, o->key[v], st);
        if (st != GT_OK) goto done;
    }
    double t_start = gt_now_ms(), t_eval0 = 0, t_eval1 = 0;
    /* corners of the depth-D cells first, evaluated in one batch (on the GPU
     * when the state came from it, else in parallel on the CPU); corners of
     * cells added by growth are evaluated as they come */
    for (size_t v = o->level_start[D]; v < o->level_start[D + 1]; v++) {
        uint32_t x, y, z;
        gt_pr_demorton(o->key[v], &x, &y, &z);
        for (int c = 0; c < 8; c++) {
            uint32_t cx = x + (c & 1), cy = y + ((c >> 1) & 1), cz = z + ((c >> 2) & 1);
            int ins;
            hm_get(&C.cmap, gt_pr_morton(cx, cy, cz), (int32_t)C.nc, &ins, &st);
            if (st != GT_OK) goto done;
            if (ins) {
                size_t n0 = C.nc, m3 = 3 * n0;
                VEC_PUSH(C.cval, C.nc, C.ccap, 0.0, st);
                VEC_PUSH(C.cxyz, m3, C.cxcap, cx, st);
                VEC_PUSH(C.cxyz, m3, C.cxcap, cy, st);
                VEC_PUSH(C.cxyz, m3, C.cxcap, cz, st);
                if (st != GT_OK) goto done;
            }
        }
    }
    t_eval0 = gt_now_ms();
    {
        size_t nc = C.nc;
        int done_gpu = 0;
#if GT_HAVE_CUDA
        if (s->eval_on_gpu) {
            st = gt_pr_eval_corners_cuda(s, C.cxyz, nc, C.cval);
            if (st != GT_OK) goto done;
            done_gpu = 1;
        }
#endif
        if (!done_gpu) {
#pragma omp parallel for schedule(dynamic, 256)
            for (long i = 0; i < (long)nc; i++) {
                double q[3];
                for (int a = 0; a < 3; a++) q[a] = ldexp((double)C.cxyz[3 * (size_t)i + a], -D);
                C.cval[i] = eval_levels(o, q, s->coef, 0, D);
            }
        }
    }
    t_eval1 = gt_now_ms();
    size_t cell_cap_limit = 16 * nfine + (1u << 20);
    int capped = 0;
    static const int tets[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7}, {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};
    gt_progress prog;
    if (p->progress) gt_progress_start(&prog, "extract", (double)ncell);
    for (size_t ci = 0; ci < ncell; ci++) {
        if (p->progress && (ci & 4095) == 0) gt_progress_update(&prog, (double)ci, NULL);
        uint32_t x, y, z;
        gt_pr_demorton(cellv[ci], &x, &y, &z);
        int32_t cid[8];
        double cv[8];
        for (int c = 0; c < 8; c++) {
            cid[c] = corner_get(&C, x + (c & 1), y + ((c >> 1) & 1), z + ((c >> 2) & 1), &st);
            if (st != GT_OK) goto done;
            cv[c] = C.cval[cid[c]];
        }
        int in[8], nin = 0;
        for (int c = 0; c < 8; c++) nin += in[c] = cv[c] < iso;
        if (nin == 0 || nin == 8) continue;
        /* grow across faces with mixed corners */
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                int cnt = 0;
                for (int c = 0; c < 8; c++)
                    if (((c >> a) & 1) == side) cnt += in[c];
                if (cnt == 0 || cnt == 4) continue;
                int64_t nc[3] = {x, y, z};
                nc[a] += side ? 1 : -1;
                if (nc[a] < 0 || nc[a] >= (int64_t)res) continue;
                uint64_t k = gt_pr_morton((uint32_t)nc[0], (uint32_t)nc[1], (uint32_t)nc[2]);
                if (ncell >= cell_cap_limit) { capped = 1; continue; }
                int ins;
                hm_get(&cells, k, 1, &ins, &st);
                if (st != GT_OK) goto done;
                if (ins) {
                    VEC_PUSH(cellv, ncell, cellcap, k, st);
                    if (st != GT_OK) goto done;
                }
            }
        /* marching tetrahedra */
        for (int t = 0; t < 6; t++) {
            const int *T = tets[t];
            int ins_[4], ni = 0;
            for (int k = 0; k < 4; k++) ni += ins_[k] = in[T[k]];
            if (ni == 0 || ni == 4) continue;
            int e[4][2], ne = 0;
            int A[4], B[4], na = 0, nb = 0; /* inside, outside local ids */
            for (int k = 0; k < 4; k++) {
                if (ins_[k]) A[na++] = T[k]; else B[nb++] = T[k];
            }
            if (na == 1) { for (int k = 0; k < 3; k++) { e[ne][0] = A[0]; e[ne][1] = B[k]; ne++; } }
            else if (na == 3) { for (int k = 0; k < 3; k++) { e[ne][0] = A[k]; e[ne][1] = B[0]; ne++; } }
            else {
                e[0][0] = A[0]; e[0][1] = B[0];
                e[1][0] = A[0]; e[1][1] = B[1];
                e[2][0] = A[1]; e[2][1] = B[1];
                e[3][0] = A[1]; e[3][1] = B[0];
                ne = 4;
            }
            int32_t vid[4];
            double mid[4][3];
            for (int k = 0; k < ne; k++) {
                int ca = e[k][0], cb = e[k][1];
                int32_t ia = cid[ca], ib = cid[cb];
                for (int a = 0; a < 3; a++) mid[k][a] = 0.5 * (((ca >> a) & 1) + ((cb >> a) & 1));
                uint64_t ek = ia < ib ? ((uint64_t)(uint32_t)ia << 32 | (uint32_t)ib) : ((uint64_t)(uint32_t)ib << 32 | (uint32_t)ia);
                int ins;
                int32_t id = hm_get(&edges, ek, (int32_t)(nvx / 3), &ins, &st);
                if (st != GT_OK) goto done;
                if (ins) {
                    double va = C.cval[ia], vb = C.cval[ib];
                    double tt = (iso - va) / (vb - va);
                    if (!(tt >= 0)) tt = 0;
                    if (tt > 1) tt = 1;
                    for (int a = 0; a < 3; a++) {
                        double pa = C.cxyz[3 * (size_t)ia + a], pb = C.cxyz[3 * (size_t)ib + a];
                        double u = ldexp(pa + tt * (pb - pa), -D);
                        float w = (float)((u - 0.5) * s->side + s->center[a]);
                        VEC_PUSH(vx, nvx, vxcap, w, st);
                    }
                    if (st != GT_OK) goto done;
                }
                vid[k] = id;
            }
            /* orientation: normal towards the outside (increasing chi) */
            double cin[3] = {0, 0, 0}, cout[3] = {0, 0, 0};
            for (int k = 0; k < na; k++)
                for (int a = 0; a < 3; a++) cin[a] += ((A[k] >> a) & 1) / (double)na;
            for (int k = 0; k < nb; k++)
                for (int a = 0; a < 3; a++) cout[a] += ((B[k] >> a) & 1) / (double)nb;
            double u1[3], u2[3], nrm[3];
            for (int a = 0; a < 3; a++) { u1[a] = mid[1][a] - mid[0][a]; u2[a] = mid[2][a] - mid[0][a]; }
            nrm[0] = u1[1] * u2[2] - u1[2] * u2[1];
            nrm[1] = u1[2] * u2[0] - u1[0] * u2[2];
            nrm[2] = u1[0] * u2[1] - u1[1] * u2[0];
            double dot = 0;
            for (int a = 0; a < 3; a++) dot += nrm[a] * (cout[a] - cin[a]);
            int flip = dot < 0;
            int32_t t0[3] = {vid[0], vid[1], vid[2]};
            if (flip) { t0[1] = vid[2]; t0[2] = vid[1]; }
            for (int k = 0; k < 3; k++) VEC_PUSH(tri, ntri3, tricap, t0[k], st);
            if (ne == 4) {
                int32_t t1[3] = {vid[0], vid[2], vid[3]};
                if (flip) { t1[1] = vid[3]; t1[2] = vid[2]; }
                for (int k = 0; k < 3; k++) VEC_PUSH(tri, ntri3, tricap, t1[k], st);
            }
            if (st != GT_OK) goto done;
        }
    }
    if (p->progress) gt_progress_end(&prog);
    gt_info("extract: %zu corners collected in %.1f ms, evaluated in %.1f ms; %zu cells (%zu grown) meshed in %.1f ms",
            C.nc, t_eval0 - t_start, t_eval1 - t_eval0, ncell, ncell - nfine, gt_now_ms() - t_eval1);
    if (capped) gt_warn("surface extraction stopped growing at %zu cells: the mesh may be open", ncell);
    out->nvert = nvx / 3;
    out->ntri = ntri3 / 3;
    out->xyz = vx;
    out->tri = tri;
    out->iso = iso;
    vx = NULL;
    tri = NULL;
    /* density per vertex (samples per density-depth node, B-spline weighted) */
    if (p->want_density || p->trim > 0) {
        out->density = gt_malloc_array(out->nvert ? out->nvert : 1, sizeof(float), "density");
        if (!out->density) { st = GT_ERR_RUNTIME; goto done; }
        for (size_t v = 0; v < out->nvert; v++) {
            double q[3];
            for (int a = 0; a < 3; a++) q[a] = (out->xyz[3 * v + a] - s->center[a]) / s->side + 0.5;
            out->density[v] = (float)eval_levels(o, q, s->wdens, s->density_depth, s->density_depth);
        }
    }
    if (p->want_colors && s->cdens) {
        out->rgb = gt_malloc_array(out->nvert ? out->nvert : 1, 3 * sizeof(float), "colours");
        if (!out->rgb) { st = GT_ERR_RUNTIME; goto done; }
        size_t NN = o->nnodes;
        for (size_t v = 0; v < out->nvert; v++) {
            double q[3];
            for (int a = 0; a < 3; a++) q[a] = (out->xyz[3 * v + a] - s->center[a]) / s->side + 0.5;
            double w = eval_levels(o, q, s->wdens, s->density_depth, s->density_depth);
            for (int a = 0; a < 3; a++) {
                double c = w > 0 ? eval_levels(o, q, s->cdens + a * NN, s->density_depth, s->density_depth) / w : 0;
                out->rgb[3 * v + a] = (float)(c < 0 ? 0 : c > 255 ? 255 : c);
            }
        }
    }
    if (p->trim > 0 && out->nvert > 0) {
        float *tmp = gt_malloc_array(out->nvert, sizeof(float), "trim");
        int32_t *remap = gt_malloc_array(out->nvert, sizeof(int32_t), "trim");
        if (!tmp || !remap) { free(tmp); free(remap); st = GT_ERR_RUNTIME; goto done; }
        memcpy(tmp, out->density, out->nvert * sizeof(float));
        qsort(tmp, out->nvert, sizeof(float), cmp_float);
        size_t qi = (size_t)(p->trim * (double)out->nvert);
        if (qi >= out->nvert) qi = out->nvert - 1;
        float thr = tmp[qi];
        size_t nt = 0;
        for (size_t t = 0; t < out->ntri; t++) {
            int keep = 1;
            for (int k = 0; k < 3; k++) keep &= out->density[out->tri[3 * t + k]] >= thr;
            if (keep) {
                memmove(out->tri + 3 * nt, out->tri + 3 * t, 3 * sizeof(int32_t));
                nt++;
            }
        }
        out->ntri = nt;
        for (size_t v = 0; v < out->nvert; v++) remap[v] = -1;
        size_t nv = 0;
        for (size_t t = 0; t < 3 * nt; t++) {
            int32_t v = out->tri[t];
            if (remap[v] < 0) {
                remap[v] = (int32_t)nv;
                nv++;
            }
        }
        /* compact in index order of first use */
        float *nx = gt_malloc_array(nv ? nv : 1, 3 * sizeof(float), "trim");
        float *nd = gt_malloc_array(nv ? nv : 1, sizeof(float), "trim");
        if (!nx || !nd) { free(nx); free(nd); free(tmp); free(remap); st = GT_ERR_RUNTIME; goto done; }
        for (size_t v = 0; v < out->nvert; v++)
            if (remap[v] >= 0) {
                memcpy(nx + 3 * (size_t)remap[v], out->xyz + 3 * v, 3 * sizeof(float));
                nd[remap[v]] = out->density[v];
                if (out->rgb) memmove(out->rgb + 3 * (size_t)remap[v], out->rgb + 3 * v, 3 * sizeof(float));
            }
        for (size_t t = 0; t < 3 * nt; t++) out->tri[t] = remap[out->tri[t]];
        free(out->xyz);
        free(out->density);
        out->xyz = nx;
        out->density = nd;
        out->nvert = nv;
        free(tmp);
        free(remap);
    }
    if (p->volume_depth > 0) {
        int vd = p->volume_depth < D ? p->volume_depth : D;
        int n = 1 << vd;
        out->vol_n = n;
        out->vol = gt_malloc_array((size_t)n * n * n, sizeof(float), "volume");
        if (!out->vol) { st = GT_ERR_RUNTIME; goto done; }
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) {
                    double q[3] = {(i + 0.5) / n, (j + 0.5) / n, (k + 0.5) / n};
                    out->vol[(size_t)i + (size_t)n * ((size_t)j + (size_t)n * k)] = (float)eval_levels(o, q, s->coef, 0, D);
                }
        out->vol_spacing = s->side / n;
        for (int a = 0; a < 3; a++) out->vol_origin[a] = s->center[a] - 0.5 * s->side + 0.5 * out->vol_spacing;
    }
done:
    hm_free(&cells);
    hm_free(&edges);
    hm_free(&C.cmap);
    free(C.cval);
    free(C.cxyz);
    free(cellv);
    free(vx);
    free(tri);
    if (st != GT_OK) gt_pr_mesh_free(out);
    return st;
}
