/* The extraction's coarse leaves (issue 17 item 1): where the samples are too
 * sparse for the finest level, the mesh is cut from depth-(D-1) cells
 * ("coarse blocks") instead of their 8 depth-D cells, crack-free against the
 * depth-D cells around them. The per-block math, shared verbatim by the CPU
 * reference (lib/poisson/extract.c) and the CUDA kernels
 * (kernels/poisson/pr_extract.cu); poisson.h defines the mesh.
 *
 * A coarse block is a depth-(D-1) node whose 8 children carry no splatted
 * normal (every sample near it splats below depth D): PoissonRecon's tree
 * ends there (its children are clipped), and so does the mesh. The block's
 * 27 depth-D grid points (corners, edge middles, face centres, centre) are
 * corners of its children, so their chi is known. Its surface is built as
 * PoissonRecon builds a leaf's: iso-segments on each face, chained into
 * loops, each loop triangulated.
 *  - A face is subdivided into its 4 depth-D squares when the block across
 *    it is not coarse (its depth-D cells cut the face by marching cubes'
 *    face rule); else it is one square.
 *  - A block edge is split at its middle when one of the three other blocks
 *    around it is not coarse: then depth-D cells, or subdivided faces, use
 *    its two halves. Every block around an edge sees the same four blocks,
 *    so they agree.
 *  - A face polygon's nodes (counter-clockwise seen from outside the block:
 *    corners, and the middles of its split edges) are inside where chi <
 *    iso. Each run of inside nodes is cut off by one segment (the inside
 *    nodes separated, as lib/mc's table does on a face with diagonal inside
 *    corners), from the crossing entering the run to the crossing leaving
 *    it, so that the inside is on its right.
 *  - A crossing's vertex is the one of the crossed depth-D edge: on an
 *    unsplit block edge, the half whose ends differ (chi at the middle says
 *    which). So every vertex is a depth-D edge's root, keyed by that edge,
 *    placed as the depth-D cells place theirs, and shared with them.
 *  - Segments chain into loops (a vertex ends one segment and starts one).
 *    A loop of 3 is a triangle; of 2, nothing (a sliver around an edge
 *    middle, closed by the cells across); of 4 or more, a fan from its first
 *    vertex that shares no block face with any vertex it is not next to (no
 *    other leaf can hold such a diagonal, so every mesh edge keeps exactly
 *    two triangles), else a fan around an added vertex at the loop's mean.
 * Triangles follow the loop order, which gives the normal towards increasing
 * chi, as the depth-D cells' table does. */
#ifndef GT_PR_ADAPT_H
#define GT_PR_ADAPT_H

#include <stdint.h>

#include "common/hostdev.h"
#include "poisson/poisson.h"
#include "poisson/pr_morton.h"

/* segments of a block: 6 faces of at most 8 (4 squares of 2, or one
 * polygon of 8 nodes with at most 4 inside runs) */
#define GT_PR_BLOCK_MAXSEG 48

typedef struct gt_pr_block_poly {
    int nv;                                 /* loop vertices, the loops one after the other */
    int nloop;
    uint64_t key[GT_PR_BLOCK_MAXSEG];       /* each one's edge key (GT_PR_EKEY, a depth-D edge) */
    uint8_t fmask[GT_PR_BLOCK_MAXSEG];      /* the block faces it lies on: bit 2 axis + side */
    uint8_t lstart[GT_PR_BLOCK_MAXSEG + 1]; /* loop l: [lstart[l], lstart[l + 1]) */
} gt_pr_block_poly;

typedef struct gt_pr_bseg {
    uint64_t a, b;
    uint8_t fa;
} gt_pr_bseg;

/* bit (dx+1) + 3 (dy+1) + 9 (dz+1) of the 27-neighbourhood mask */
GT_HD int gt_pr_nb27(int dx, int dy, int dz) { return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1); }

/* is the block edge along axis d through local point P (P[e] in {0, 2} for
 * e != d) split? nc: bit i set when neighbour block i (27-index) is not
 * coarse */
GT_HD int gt_pr_block_edge_split(uint32_t nc, int d, const int P[3])
{
    const int e = (d + 1) % 3, f = (d + 2) % 3;
    int o[3] = {0, 0, 0};
    o[e] = P[e] == 0 ? -1 : 1;
    o[f] = P[f] == 0 ? -1 : 1;
    int oe[3] = {0, 0, 0}, of[3] = {0, 0, 0};
    oe[e] = o[e];
    of[f] = o[f];
    return (int)(((nc >> gt_pr_nb27(oe[0], oe[1], oe[2])) | (nc >> gt_pr_nb27(of[0], of[1], of[2])) |
                  (nc >> gt_pr_nb27(o[0], o[1], o[2]))) & 1u);
}

/* the vertex of the crossing between polygon nodes p and q (local 0..2
 * coordinates, one axis apart by 1 or 2): its depth-D edge key and faces */
GT_HD void gt_pr_block_crossing(const uint32_t base[3], const int p[3], const int q[3], const double v[27],
                                double iso, uint64_t *key, uint8_t *fm)
{
    int lo[3], hi[3], d = 0;
    for (int a = 0; a < 3; a++) {
        lo[a] = p[a] < q[a] ? p[a] : q[a];
        hi[a] = p[a] < q[a] ? q[a] : p[a];
        if (hi[a] != lo[a]) d = a;
    }
    if (hi[d] - lo[d] == 2) { /* an unsplit block edge: the half that crosses */
        const int m = lo[0] + 3 * lo[1] + 9 * lo[2] + (d == 0 ? 1 : d == 1 ? 3 : 9);
        const int in_lo = v[lo[0] + 3 * lo[1] + 9 * lo[2]] < iso, in_m = v[m] < iso;
        if (in_lo == in_m) lo[d] = 1;
    }
    *key = GT_PR_EKEY(gt_pr_key(base[0] + (uint32_t)lo[0], base[1] + (uint32_t)lo[1], base[2] + (uint32_t)lo[2]),
                      1u << d);
    int f = 0;
    for (int a = 0; a < 3; a++)
        if (a != d) f |= lo[a] == 0 ? 1 << (2 * a) : lo[a] == 2 ? 1 << (2 * a + 1) : 0;
    *fm = (uint8_t)f;
}

/* the segments of one face polygon of m nodes P (counter-clockwise from
 * outside), appended to sg (count *ns) */
GT_HD void gt_pr_block_poly_segments(const uint32_t base[3], const int (*P)[3], int m, const double v[27], double iso,
                                     gt_pr_bseg *sg, int *ns)
{
    int in[8];
    for (int k = 0; k < m; k++) in[k] = v[P[k][0] + 3 * P[k][1] + 9 * P[k][2]] < iso;
    for (int k = 0; k < m; k++) {
        const int k1 = (k + 1) % m;
        if (in[k] || !in[k1]) continue; /* not entering a run of inside nodes */
        int k2 = k1;
        while (!(in[k2] && !in[(k2 + 1) % m])) k2 = (k2 + 1) % m;
        uint8_t fb;
        gt_pr_bseg s;
        gt_pr_block_crossing(base, P[k], P[k1], v, iso, &s.a, &s.fa);
        gt_pr_block_crossing(base, P[k2], P[(k2 + 1) % m], v, iso, &s.b, &fb);
        sg[(*ns)++] = s;
    }
}

/* The loops of the coarse block with depth-(D-1) cell (X, Y, Z): v holds chi
 * at its 27 depth-D grid points (index i + 3 j + 9 k for local (i, j, k) in
 * 0..2), nc its non-coarse neighbour blocks (bit per 27-index). */
GT_HD void gt_pr_block_loops(uint32_t X, uint32_t Y, uint32_t Z, const double v[27], uint32_t nc, double iso,
                             gt_pr_block_poly *out)
{
    const uint32_t base[3] = {2 * X, 2 * Y, 2 * Z};
    gt_pr_bseg sg[GT_PR_BLOCK_MAXSEG];
    int ns = 0;
    for (int a = 0; a < 3; a++)
        for (int s = 0; s < 2; s++) {
            const int b = (a + 1) % 3, c = (a + 2) % 3;
            int off[3] = {0, 0, 0};
            off[a] = s ? 1 : -1;
            const int sub = (int)((nc >> gt_pr_nb27(off[0], off[1], off[2])) & 1u);
            int P[8][3], m = 0;
            /* face points (i, j) in axes (b, c): counter-clockwise seen from
             * +a; reversed for the face on the - side */
#define GT_PR_FACE_PT(i, j)        \
    do {                           \
        P[m][a] = 2 * s;           \
        P[m][b] = (i);             \
        P[m][c] = (j);             \
        m++;                       \
    } while (0)
            if (sub) {
                for (int j = 0; j < 2; j++)
                    for (int i = 0; i < 2; i++) {
                        m = 0;
                        GT_PR_FACE_PT(i, j);
                        GT_PR_FACE_PT(i + 1, j);
                        GT_PR_FACE_PT(i + 1, j + 1);
                        GT_PR_FACE_PT(i, j + 1);
                        if (!s) {
                            for (int t = 0; t < 3; t++) {
                                int tmp = P[1][t];
                                P[1][t] = P[3][t];
                                P[3][t] = tmp;
                            }
                        }
                        gt_pr_block_poly_segments(base, (const int(*)[3])P, 4, v, iso, sg, &ns);
                    }
            } else {
                const int cs[4][2] = {{0, 0}, {2, 0}, {2, 2}, {0, 2}};
                for (int k = 0; k < 4; k++) {
                    GT_PR_FACE_PT(cs[k][0], cs[k][1]);
                    /* the side from corner k to corner k + 1, split? */
                    const int mi = (cs[k][0] + cs[(k + 1) % 4][0]) / 2, mj = (cs[k][1] + cs[(k + 1) % 4][1]) / 2;
                    int Q[3];
                    Q[a] = 2 * s;
                    Q[b] = mi;
                    Q[c] = mj;
                    const int d = (k == 0 || k == 2) ? b : c;
                    if (gt_pr_block_edge_split(nc, d, Q)) GT_PR_FACE_PT(mi, mj);
                }
                if (!s) { /* reverse, keeping the first node */
                    for (int lo = 1, hi = m - 1; lo < hi; lo++, hi--)
                        for (int t = 0; t < 3; t++) {
                            int tmp = P[lo][t];
                            P[lo][t] = P[hi][t];
                            P[hi][t] = tmp;
                        }
                }
                gt_pr_block_poly_segments(base, (const int(*)[3])P, m, v, iso, sg, &ns);
            }
#undef GT_PR_FACE_PT
        }
    /* chain into loops, each from its first unused segment */
    uint8_t used[GT_PR_BLOCK_MAXSEG];
    for (int i = 0; i < ns; i++) used[i] = 0;
    out->nv = 0;
    out->nloop = 0;
    out->lstart[0] = 0;
    for (int s0 = 0; s0 < ns; s0++) {
        if (used[s0]) continue;
        int cur = s0;
        for (;;) {
            used[cur] = 1;
            out->key[out->nv] = sg[cur].a;
            out->fmask[out->nv] = sg[cur].fa;
            out->nv++;
            if (sg[cur].b == sg[s0].a) break;
            int nx = -1;
            for (int j = 0; j < ns; j++)
                if (!used[j] && sg[j].a == sg[cur].b) {
                    nx = j;
                    break;
                }
            if (nx < 0) break; /* cannot happen: every vertex starts one segment */
            cur = nx;
        }
        out->nloop++;
        out->lstart[out->nloop] = (uint8_t)out->nv;
    }
}

/* The fan root of loop l (its offset in the loop), or -1 for a fan around
 * an added vertex at its mean; loops of fewer than 4 vertices: 0. */
GT_HD int gt_pr_block_loop_root(const gt_pr_block_poly *P, int l)
{
    const int s = P->lstart[l], n = P->lstart[l + 1] - s;
    if (n < 4) return 0;
    for (int r = 0; r < n; r++) {
        int ok = 1;
        for (int j = 0; j < n && ok; j++) {
            if (j == r || j == (r + 1) % n || j == (r + n - 1) % n) continue;
            if (P->fmask[s + r] & P->fmask[s + j]) ok = 0;
        }
        if (ok) return r;
    }
    return -1;
}
/* triangles of loop l with root r (gt_pr_block_loop_root) */
GT_HD int gt_pr_block_loop_ntri(const gt_pr_block_poly *P, int l, int r)
{
    const int n = P->lstart[l + 1] - P->lstart[l];
    return n < 3 ? 0 : n == 3 ? 1 : r >= 0 ? n - 2 : n;
}
/* triangle t of loop l with root r, as loop offsets (-1: the added vertex) */
GT_HD void gt_pr_block_loop_tri(const gt_pr_block_poly *P, int l, int r, int t, int out[3])
{
    const int n = P->lstart[l + 1] - P->lstart[l];
    if (r >= 0) {
        out[0] = r;
        out[1] = (r + 1 + t) % n;
        out[2] = (r + 2 + t) % n;
    } else {
        out[0] = -1;
        out[1] = t;
        out[2] = (t + 1) % n;
    }
}

/* A depth-(D-1) node is a coarse block when the adaptive extraction is on,
 * D - 1 is at or above the full depth, it has children and none of the 8
 * carries a splatted normal (vf: 3 per node, the splat of gt_pr_splat_node
 * times its scale; the child index is the first of 8) */
GT_HD int gt_pr_block_coarse(const int32_t *child, const double *vf, size_t node)
{
    const int32_t c = child[node];
    if (c < 0) return 0;
    for (int k = 0; k < 8; k++)
        for (int a = 0; a < 3; a++)
            if (vf[3 * ((size_t)c + k) + a] != 0.0) return 0;
    return 1;
}

#endif
