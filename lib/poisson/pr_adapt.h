/* The extraction's coarse leaves (issue 17 items 1 and 3): where the samples
 * are too sparse for the finest level, the mesh is cut from coarser cells
 * ("coarse blocks", any level from the full depth F to D - 1) instead of the
 * depth-D cells inside them, crack-free against the cells around them. The
 * per-block math and the tree's rules, shared verbatim by the CPU reference
 * (lib/poisson/extract.c, solve.c) and the CUDA kernels (kernels/poisson);
 * poisson.h defines the mesh.
 *
 * The extraction tree is PoissonRecon's: a node at level F..D-1 is
 * subdivided when one of its children has data in its subtree (a sample's
 * share in the 27 cells around a node: gt_pr_splat_node)
 * (PoissonRecon clips the children otherwise), levels below F always; its
 * leaves tile the cube. It is then 2:1 balanced, so that a leaf's neighbours
 * (faces, edges, corners) are leaves of its level or one level finer or
 * coarser: first the same-level neighbours of a subdivided node's parent are
 * subdivided where they have children (finest level first), then, coarsest
 * level first, a node stays subdivided only if its parent and all the
 * parent's same-level neighbours inside the cube are (so the result is
 * balanced even where the octree has no children to subdivide). A leaf
 * above level D is a coarse block; depth-D leaves are marching cubes' cells.
 *
 * A block of size s = 2^(D - L) finest cells has a 3 x 3 x 3 lattice of
 * spacing s / 2 (corners, edge middles, face centres, centre; chi at each).
 * Its surface is built as PoissonRecon builds a leaf's: iso-segments on each
 * face, chained into loops, each loop triangulated.
 *  - A face is subdivided into its 4 lattice squares when the same-level
 *    node across it is subdivided (its children, one level finer, cut the
 *    face so); else it is one square.
 *  - A block edge is split at its middle when one of the three other
 *    same-level nodes around it is subdivided. Every block around an edge
 *    sees the same nodes, so they agree; by the balance a coarser leaf
 *    across a face never has such an edge on its side.
 *  - A face polygon's nodes (counter-clockwise seen from outside the block:
 *    corners, and the middles of its split edges) are inside where chi <
 *    iso. Each run of inside nodes is cut off by one segment (the inside
 *    nodes separated, as lib/mc's table does on a face with diagonal inside
 *    corners), from the crossing entering the run to the crossing leaving
 *    it, so that the inside is on its right.
 *  - A crossing lies on a polygon side, an edge of a leaf that no finer leaf
 *    touches, from lattice point p to q. Its vertex is the one of a depth-D
 *    edge found by bisection (gt_pr_cross_step): while the piece is longer
 *    than a finest cell, chi at its middle picks the half whose ends differ.
 *    A function of the side alone, so every leaf sharing it finds the same
 *    depth-D edge, keyed and placed as the depth-D cells place theirs.
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
#include "poisson/pr_sort.h"

/* segments of a block: 6 faces of at most 8 (4 squares of 2, or one
 * polygon of 8 nodes with at most 4 inside runs) */
#define GT_PR_BLOCK_MAXSEG 48

/* a crossing: the polygon side from lattice point lo (i + 3 j + 9 k) along
 * axis ax, 1 or 2 lattice steps long, whose lower end is inside (in_lo) or
 * not; packed as lo | ax << 5 | (len - 1) << 7 | in_lo << 8 */
#define GT_PR_CROSS(lo, ax, len, in_lo) ((uint16_t)((lo) | (ax) << 5 | ((len) - 1) << 7 | (in_lo) << 8))

typedef struct gt_pr_block_poly {
    int nv;                                 /* loop vertices, the loops one after the other */
    int nloop;
    uint16_t cross[GT_PR_BLOCK_MAXSEG];     /* each one's crossing (GT_PR_CROSS) */
    uint8_t fmask[GT_PR_BLOCK_MAXSEG];      /* the block faces it lies on: bit 2 axis + side */
    uint8_t lstart[GT_PR_BLOCK_MAXSEG + 1]; /* loop l: [lstart[l], lstart[l + 1]) */
} gt_pr_block_poly;

typedef struct gt_pr_bseg {
    uint16_t a, b;
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

/* the crossing between polygon nodes p and q (local 0..2 lattice
 * coordinates, one axis apart by 1 or 2) and the block faces it lies on */
GT_HD void gt_pr_block_crossing(const int p[3], const int q[3], const double v[27], double iso, uint16_t *cr, uint8_t *fm)
{
    int lo[3], d = 0, len = 1;
    for (int a = 0; a < 3; a++) {
        lo[a] = p[a] < q[a] ? p[a] : q[a];
        if (p[a] != q[a]) {
            d = a;
            len = p[a] < q[a] ? q[a] - p[a] : p[a] - q[a];
        }
    }
    const int li = lo[0] + 3 * lo[1] + 9 * lo[2];
    *cr = GT_PR_CROSS(li, d, len, v[li] < iso ? 1 : 0);
    int f = 0;
    for (int a = 0; a < 3; a++)
        if (a != d) f |= lo[a] == 0 ? 1 << (2 * a) : lo[a] == 2 ? 1 << (2 * a + 1) : 0;
    *fm = (uint8_t)f;
}

/* a block's lowest corner and lattice spacing, finest units (key, l: the
 * block's key and level; D: the finest level) */
GT_HD void gt_pr_block_geom(uint64_t key, int l, int D, uint32_t base[3], uint32_t *h)
{
    uint32_t X, Y, Z;
    gt_pr_key_xyz(key, &X, &Y, &Z);
    base[0] = X << (D - l);
    base[1] = Y << (D - l);
    base[2] = Z << (D - l);
    *h = 1u << (D - l - 1);
}
/* lattice point q (i + 3 j + 9 k) of a block with lowest corner base and
 * spacing h (gt_pr_block_geom), finest units */
GT_HD void gt_pr_block_point(const uint32_t base[3], uint32_t h, int q, uint32_t c[3])
{
    c[0] = base[0] + (uint32_t)(q % 3) * h;
    c[1] = base[1] + (uint32_t)((q / 3) % 3) * h;
    c[2] = base[2] + (uint32_t)(q / 9) * h;
}

/* A crossing in finest-grid units: the side from point lo[] along axis ax,
 * m finest cells long, lower end inside or not (base: the block's lowest
 * corner, h: its lattice spacing in finest cells). */
typedef struct gt_pr_cross_edge {
    uint32_t lo[3];
    int ax, in_lo;
    uint32_t m;
} gt_pr_cross_edge;
GT_HD gt_pr_cross_edge gt_pr_cross_edge_of(uint16_t cr, const uint32_t base[3], uint32_t h)
{
    gt_pr_cross_edge e;
    gt_pr_block_point(base, h, cr & 31, e.lo);
    e.ax = (cr >> 5) & 3;
    e.m = (((cr >> 7) & 1) + 1) * h;
    e.in_lo = (cr >> 8) & 1;
    return e;
}
/* One bisection step of a crossing longer than a finest cell: vm, chi at
 * the middle of its piece (the finest-grid point lo + m/2 along ax), picks
 * the half whose ends differ. */
GT_HD void gt_pr_cross_step(gt_pr_cross_edge *e, double vm, double iso)
{
    const uint32_t half = e->m / 2;
    if ((vm < iso ? 1 : 0) == e->in_lo) e->lo[e->ax] += half;
    e->m = half;
}
/* the middle of the crossing's piece, finest-grid units */
GT_HD void gt_pr_cross_mid(const gt_pr_cross_edge *e, uint32_t mid[3])
{
    for (int a = 0; a < 3; a++) mid[a] = e->lo[a];
    mid[e->ax] += e->m / 2;
}
/* the key (GT_PR_EKEY) of a crossing bisected down to a finest edge */
GT_HD uint64_t gt_pr_cross_key(const gt_pr_cross_edge *e)
{
    return GT_PR_EKEY(gt_pr_key(e->lo[0], e->lo[1], e->lo[2]), 1u << e->ax);
}

/* the segments of one face polygon of m nodes P (counter-clockwise from
 * outside), appended to sg (count *ns) */
GT_HD void gt_pr_block_poly_segments(const int (*P)[3], int m, const double v[27], double iso, gt_pr_bseg *sg, int *ns)
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
        gt_pr_block_crossing(P[k], P[k1], v, iso, &s.a, &s.fa);
        gt_pr_block_crossing(P[k2], P[(k2 + 1) % m], v, iso, &s.b, &fb);
        sg[(*ns)++] = s;
    }
}

/* The loops of a coarse block: v holds chi at its 27 lattice points (index
 * i + 3 j + 9 k for local (i, j, k) in 0..2), nc its subdivided same-level
 * neighbours (bit per 27-index, gt_pr_nb27). The crossings are in lattice
 * terms (gt_pr_cross_edge_of places them). */
GT_HD void gt_pr_block_loops(const double v[27], uint32_t nc, double iso, gt_pr_block_poly *out)
{
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
                        gt_pr_block_poly_segments((const int(*)[3])P, 4, v, iso, sg, &ns);
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
                gt_pr_block_poly_segments((const int(*)[3])P, m, v, iso, sg, &ns);
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
            out->cross[out->nv] = sg[cur].a;
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

/* The extraction tree's flags per node (bits): */
#define GT_PR_T_DATA 1u  /* a sample's share in the 27 cells around the node or a descendant (gt_pr_tree_data) */
#define GT_PR_T_SUB 2u   /* subdivided */
#define GT_PR_T_LEAF 4u  /* a leaf above level D: a coarse block */
#define GT_PR_T_FN 8u    /* the node's basis function is in the solve (gt_pr_fn_active) */

/* is the same-level neighbour i (27-index) of a level-l cell (x, y, z) in
 * the cube? */
GT_HD int gt_pr_nb_inside(uint32_t x, uint32_t y, uint32_t z, int l, int i)
{
    const int64_t r = (int64_t)1 << l;
    const int64_t q[3] = {(int64_t)x + i % 3 - 1, (int64_t)y + (i / 3) % 3 - 1, (int64_t)z + i / 9 - 1};
    return q[0] >= 0 && q[1] >= 0 && q[2] >= 0 && q[0] < r && q[1] < r && q[2] < r;
}
/* The subdivided same-level neighbours of a block (bit per 27-index), the
 * nc of gt_pr_block_loops: a neighbour with the subdivided flag, or, with
 * virt, an absent one inside the cube (nbr: the block's 27 neighbours; key,
 * l: the block's key and level) */
GT_HD uint32_t gt_pr_block_nc(const int32_t *nbr27, const uint8_t *flag, uint64_t key, int l, int virt)
{
    uint32_t x, y, z, nc = 0;
    gt_pr_key_xyz(key, &x, &y, &z);
    for (int i = 0; i < 27; i++) {
        if (i == 13) continue;
        const int32_t q = nbr27[i];
        if (q >= 0 ? (flag[q] & GT_PR_T_SUB) != 0 : virt && gt_pr_nb_inside(x, y, z, l, i)) nc |= 1u << i;
    }
    return nc;
}
/* is the depth-D cell with key k inside a coarse block? (key, level_start:
 * the octree's; flag: the tree's flags per node) */
GT_HD int gt_pr_in_coarse_block(const uint64_t *key, const size_t *level_start, const uint8_t *flag, int D, uint64_t k)
{
    for (int l = D - 1; l >= 0; l--) {
        const size_t l0 = level_start[l], nl = level_start[l + 1] - l0;
        const uint64_t ak = k >> (3 * (D - l));
        const size_t at = gt_pr_lower_bound(key + l0, nl, ak);
        if (at == nl || key[l0 + at] != ak) continue;
        if (flag[l0 + at] & GT_PR_T_LEAF) return 1;
        if (flag[l0 + at] & GT_PR_T_SUB) return 0; /* inside the tree below a subdivided node */
    }
    return 0;
}

/* step 1, finest level first: the data bit from the node's own splat
 * (flag[node]'s GT_PR_T_DATA as the splat left it: a sample of the 27
 * cells around the node has a share at its level, gt_pr_splat_node) and
 * its children's bits */
GT_HD uint8_t gt_pr_tree_data(const int32_t *child, const uint8_t *flag, size_t node)
{
    if (flag[node] & GT_PR_T_DATA) return GT_PR_T_DATA;
    const int32_t c = child[node];
    if (c >= 0)
        for (int k = 0; k < 8; k++)
            if (flag[(size_t)c + k] & GT_PR_T_DATA) return GT_PR_T_DATA;
    return 0;
}
/* ... and, at levels T..D-1, subdivided as PoissonRecon's tree is after
 * its clip and support closure (FEMTree's _clipTree and
 * _supportApproximateProlongation): when a child has data, or when a
 * same-level neighbour has a subdivided child (the children of the 27
 * neighbours are the nodes within 2 cells of this node's children, and
 * the closure puts every node within 2 cells of a subdivided one into the
 * tree, level by level upwards). Above level T (gt_pr_coarse_top) a node
 * with children is subdivided. nbr: 27 per node. virt: a node without children counts as
 * subdivided down to D (its cells, if the surface crosses it, are the
 * extraction's grown depth-D cells), so that only depth-(D-1) nodes with
 * children become blocks (--coarse-levels 1, gt_pr_tree_virtual); else such
 * a node is a leaf, and the leaves tile the cube. Reads the bits of the
 * finer level only. */
GT_HD uint8_t gt_pr_tree_sub(const int32_t *child, const int32_t *nbr, const uint8_t *flag, size_t node, int level,
                             int T, int virt)
{
    const int32_t c = child[node];
    if (c < 0) return virt ? GT_PR_T_SUB : 0;
    if (level < T) return GT_PR_T_SUB;
    for (int k = 0; k < 8; k++)
        if (flag[(size_t)c + k] & GT_PR_T_DATA) return GT_PR_T_SUB;
    for (int i = 0; i < 27; i++) {
        const int32_t q = nbr[27 * node + (size_t)i];
        const int32_t qc = q >= 0 ? child[q] : -1;
        if (qc < 0) continue;
        for (int k = 0; k < 8; k++)
            if (flag[(size_t)qc + k] & GT_PR_T_SUB) return GT_PR_T_SUB;
    }
    return 0;
}
/* Does the basis function of a node above the full depth take part in
 * the solve? PoissonRecon's tree holds a node's functions only where its
 * clip and support closure keep the node: where the splat put data at
 * the node's level or below, within the B-spline's overlap. Here: when a
 * node within 2 cells of it at its level (the 125 that its function's
 * Laplacian couples) has GT_PR_T_DATA. Where every sample splats at depth
 * D, that is every node of the tree (the depth-D nodes lie within 2 cells
 * of a point's cell, and each point splats into the 27 cells around its
 * own); where the samples are too sparse for depth D (gt_pr_sample_depth
 * at most D - 1: no share at D), the depth-D functions, which no sample constrains and
 * which only add ripples between the samples, are left out. parent, child,
 * nbr, key: the octree's arrays; flag: bits of step 1 at the node's
 * level. */
GT_HD int gt_pr_fn_active(const int32_t *parent, const int32_t *child, const int32_t *nbr, const uint64_t *key,
                          const uint8_t *flag, size_t node)
{
    const int32_t P = parent[node];
    if (P < 0) return 1;
    const int c = (int)(key[node] & 7u), cx = c & 1, cy = (c >> 1) & 1, cz = c >> 2;
    for (int j = 0; j < 27; j++) {
        const int32_t pn = nbr[27 * (size_t)P + (size_t)j];
        const int32_t ch = pn >= 0 ? child[pn] : -1;
        if (ch < 0) continue;
        const int jx = j % 3 - 1, jy = (j / 3) % 3 - 1, jz = j / 9 - 1;
        for (int cc = 0; cc < 8; cc++) {
            const int dx = 2 * jx + (cc & 1) - cx, dy = 2 * jy + ((cc >> 1) & 1) - cy, dz = 2 * jz + (cc >> 2) - cz;
            if (dx < -2 || dx > 2 || dy < -2 || dy > 2 || dz < -2 || dz > 2) continue;
            if (flag[(size_t)ch + (size_t)cc] & GT_PR_T_DATA) return 1;
        }
    }
    return 0;
}
/* step 3, coarsest level first (levels F + 1 .. D - 1): does the node stay
 * subdivided? Only if its parent and every same-level neighbour of the
 * parent inside the cube are (nbr: 27 per node; pkey: the parent's key;
 * virt: an absent neighbour counts as subdivided, see gt_pr_tree_sub) */
GT_HD int gt_pr_tree_keep(const int32_t *nbr, const uint8_t *flag, int32_t parent, uint64_t pkey, int lp, int virt)
{
    if (!(flag[parent] & GT_PR_T_SUB)) return 0;
    uint32_t x, y, z;
    gt_pr_key_xyz(pkey, &x, &y, &z);
    for (int i = 0; i < 27; i++) {
        if (i == 13 || !gt_pr_nb_inside(x, y, z, lp, i)) continue;
        const int32_t q = nbr[27 * (size_t)parent + i];
        if (q < 0 ? !virt : !(flag[q] & GT_PR_T_SUB)) return 0;
    }
    return 1;
}

#endif
