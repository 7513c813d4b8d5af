/* Surface extraction from the depth-D cells of the octree, on the CPU: the
 * reference for the CUDA path (kernels/poisson/pr_extract.cu), which builds
 * the same mesh (defined in poisson.h: cells, corners, vertices, triangles
 * by sorted keys, so that no visiting order shows in the result).
 *
 * Marching cubes on every cell with the case table of lib/mc, whose face
 * rule depends on a face's four corners only, so the two cells sharing a
 * face cut it alike; with vertices shared through the edge key the mesh is
 * a closed 2-manifold wherever the set of cells encloses the surface. A
 * vertex lies at the root of chi - iso on its edge, from chi at the edge's
 * ends and middle (pr_mc.h). The set starts as the depth-D nodes and grows, in
 * rounds, by the face neighbours that the surface crosses into, so holes in
 * the data, where the surface leaves the band of fine nodes, are closed too.
 *
 * Steps: per round, the new cells' corners (sorted, unique, not yet known)
 * are evaluated and merged into the sorted corner set; the new cells' inside
 * masks (bit c: chi < iso at corner c) come from it; the cells are merged
 * into the sorted cell set, and their mixed faces name the next round's
 * cells. Then every cell's crossed edges are keyed and sorted, which numbers
 * the vertices, chi is evaluated at their edges' middles, which places them,
 * and every cell writes its triangles at its offset (prefix sum of the
 * per-cell counts).
 *
 * Coarse blocks (pr_adapt.h; s->tree's leaves above depth D): the cells
 * inside them are given mask 0; chi at each block's 27 lattice points comes
 * from the corner set or is evaluated; the blocks the surface crosses make
 * loops, their crossings are bisected (in rounds of batched evaluations)
 * down to depth-D edges, whose keys join the cells' in the numbering, and
 * their triangles follow the cells'. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/timer.h"
#include "gt_config.h"
#include "poisson/poisson.h"
#include "mc/mc.h"
#include "poisson/pr_adapt.h"
#include "poisson/pr_mc.h"
#include "poisson/pr_sort.h"
#if GT_HAVE_CUDA
#include "kernels/poisson/pr_gpu.h"
#endif


/* chi at the n grid points cxyz (3 per point, in units of 2^-bits of the
 * unit cube; bits D for corners, D + 1 for edge middles), on the GPU when
 * the state's front end ran there, as before the restatement */
static gt_status eval_grid(const gt_pr_state *s, const uint32_t *cxyz, size_t n, int bits, double *val)
{
    const int D = s->oct.depth;
    if (n == 0) return GT_OK;
#if GT_HAVE_CUDA
    if (s->eval_on_gpu) return gt_pr_eval_grid_cuda(s, cxyz, n, bits, val);
#endif
#pragma omp parallel for schedule(dynamic, 256)
    for (long i = 0; i < (long)n; i++) {
        double q[3];
        for (int a = 0; a < 3; a++) q[a] = ldexp((double)cxyz[3 * (size_t)i + a], -bits);
        val[i] = gt_pr_eval_levels(&s->oct, q, s->coef, s->coef_lmin, D);
    }
    return GT_OK;
}

/* chi at the corners with the given keys */
static gt_status eval_corners(const gt_pr_state *s, const uint64_t *keys, size_t n, double *val)
{
    if (n == 0) return GT_OK;
    uint32_t *cxyz = gt_malloc_array(n, 3 * sizeof(uint32_t), "corners");
    if (!cxyz) return GT_ERR_RUNTIME;
    for (size_t i = 0; i < n; i++) gt_pr_demorton(keys[i], cxyz + 3 * i, cxyz + 3 * i + 1, cxyz + 3 * i + 2);
    gt_status st = eval_grid(s, cxyz, n, s->oct.depth, val);
    free(cxyz);
    return st;
}

/* the per-cell tables of an inside mask: crossed cube edges (bit e in
 * marching cubes' numbering) and the case table; e -> local edge code */
typedef struct {
    const gt_mc_table *mc;
    uint16_t cross[256];
    uint8_t code[12];
} cell_tables;

static void cell_tables_init(cell_tables *T)
{
    T->mc = gt_mc_table_get();
    for (int e = 0; e < 12; e++) T->code[e] = (uint8_t)gt_pr_mc_edge_code(e);
    for (int m = 0; m < 256; m++) {
        unsigned cr = 0;
        for (int e = 0; e < 12; e++)
            if (gt_pr_edge_crossed(m, T->code[e])) cr |= 1u << e;
        T->cross[m] = (uint16_t)cr;
    }
}

size_t gt_pr_extract_cell_cap(size_t nfine) { return 16 * nfine + ((size_t)1 << 20); }

/* The coarse blocks of s (pr_adapt.h), in node order (level, then key):
 * node indices (NULL, 0 when there are none or p asks for the uniform mesh) */
static gt_status coarse_blocks(const gt_pr_state *s, const gt_pr_params *p, int32_t **bnode, size_t *nb)
{
    const gt_pr_octree *o = &s->oct;
    const int D = o->depth;
    *bnode = NULL;
    *nb = 0;
    if (!s->tree || p->uniform_mesh || D < 1) return GT_OK;
    size_t n = 0;
    for (size_t v = 0; v < o->level_start[D]; v++) n += (s->tree[v] & GT_PR_T_LEAF) != 0;
    if (n == 0) return GT_OK;
    *bnode = gt_malloc_array(n, sizeof **bnode, "coarse blocks");
    if (!*bnode) return GT_ERR_RUNTIME;
    for (size_t v = 0, j = 0; v < o->level_start[D]; v++)
        if (s->tree[v] & GT_PR_T_LEAF) (*bnode)[j++] = (int32_t)v;
    *nb = n;
    return GT_OK;
}

/* coarse block `node`'s lowest corner and lattice spacing (gt_pr_block_geom) */
static void block_geom(const gt_pr_octree *o, int32_t node, uint32_t base[3], uint32_t *h)
{
    gt_pr_block_geom(o->key[node], gt_pr_node_level(o, (size_t)node), o->depth, base, h);
}

/* the loops of coarse block `node` from chi at its 27 lattice points v */
static void block_poly(const gt_pr_state *s, int32_t node, const double *v, gt_pr_block_poly *P)
{
    const gt_pr_octree *o = &s->oct;
    const uint32_t ncm = gt_pr_block_nc(o->nbr + 27 * (size_t)node, s->tree, o->key[node],
                                        gt_pr_node_level(o, (size_t)node), gt_pr_tree_virtual(s->coarse_levels));
    gt_pr_block_loops(v, ncm, s->iso, P);
}

/* per block: loop vertices, triangles and added vertices */
static void block_counts(const gt_pr_block_poly *P, size_t *nv, size_t *nt, size_t *na)
{
    *nv = (size_t)P->nv;
    *nt = *na = 0;
    for (int l = 0; l < P->nloop; l++) {
        int r = gt_pr_block_loop_root(P, l);
        *nt += (size_t)gt_pr_block_loop_ntri(P, l, r);
        *na += r < 0;
    }
}

#define FAIL_OOM(what)                                               \
    do {                                                             \
        st = gt_fail(GT_ERR_RUNTIME, "out of memory (%s)", what);    \
        goto done;                                                   \
    } while (0)

gt_status gt_pr_extract_mesh_keys_cpu(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out,
                                      uint64_t **vkeys)
{
    const gt_pr_octree *o = &s->oct;
    const int D = o->depth;
    const int64_t res = (int64_t)1 << D;
    const double iso = s->iso;
    const int cbits = 3 * (D + 1);
    gt_status st = GT_OK;
    uint64_t *sk = NULL, *ck = NULL, *nk = NULL, *kc = NULL, *kt = NULL, *ek = NULL;
    uint8_t *sm = NULL, *nm = NULL;
    double *cv = NULL, *vnew = NULL, *vmid = NULL;
    uint32_t *mxyz = NULL;
    size_t ns = 0, nc = 0, nn = 0, *eoff = NULL, *toff = NULL;
    gt_pr_kv *ev = NULL, *evt = NULL;
    int32_t *vemit = NULL, *tri = NULL;
    float *xyz = NULL;
    int32_t *bnode = NULL;
    size_t nb = 0, *aoff = NULL, nadd = 0;
    double *bval = NULL;
    gt_pr_cross_edge *bce = NULL;
    size_t nblk_all = 0;
    cell_tables T;
    cell_tables_init(&T);
    size_t nfine = o->level_start[D + 1] - o->level_start[D];
    size_t cap = gt_pr_extract_cell_cap(nfine);
    int capped = 0, rounds = 0;
    double t0 = gt_now_ms(), t_eval = 0;
    gt_progress prog;
    if (p->progress) gt_progress_start(&prog, "extract: cells", 0);

    nn = nfine;
    nk = gt_malloc_array(nn ? nn : 1, sizeof *nk, "cells");
    if (!nk) FAIL_OOM("cells");
    memcpy(nk, o->key + o->level_start[D], nn * sizeof *nk);
    while (nn > 0) {
        rounds++;
        /* the new cells' corners that are not known yet */
        size_t m8 = 8 * nn, m = 0;
        kc = gt_malloc_array(m8, sizeof *kc, "corners");
        kt = gt_malloc_array(m8, sizeof *kt, "corners");
        if (!kc || !kt) FAIL_OOM("corners");
#pragma omp parallel for schedule(static)
        for (long i = 0; i < (long)nn; i++) {
            uint32_t x, y, z;
            gt_pr_demorton(nk[i], &x, &y, &z);
            for (int c = 0; c < 8; c++) kc[8 * (size_t)i + c] = gt_pr_corner_key(x, y, z, c);
        }
        gt_pr_radix_u64(kc, kt, m8, cbits);
        m8 = gt_pr_unique_u64(kc, m8);
        for (size_t i = 0; i < m8; i++)
            if (!gt_pr_contains(ck, nc, kc[i])) kc[m++] = kc[i];
        vnew = gt_malloc_array(m ? m : 1, sizeof *vnew, "corner values");
        if (!vnew) FAIL_OOM("corner values");
        double te = gt_now_ms();
        if ((st = eval_corners(s, kc, m, vnew)) != GT_OK) goto done;
        t_eval += gt_now_ms() - te;
        /* merge them into the corner set (kt/vals as the output) */
        {
            uint64_t *k2 = gt_malloc_array(nc + m, sizeof *k2, "corners");
            double *v2 = gt_malloc_array(nc + m, sizeof *v2, "corner values");
            if (!k2 || !v2) { free(k2); free(v2); FAIL_OOM("corners"); }
            size_t i = 0, j = 0, w = 0;
            while (i < nc || j < m) {
                if (j >= m || (i < nc && ck[i] < kc[j])) { k2[w] = ck[i]; v2[w++] = cv[i++]; }
                else { k2[w] = kc[j]; v2[w++] = vnew[j++]; }
            }
            free(ck); free(cv); free(vnew); free(kc); free(kt);
            vnew = NULL; kc = kt = NULL;
            ck = k2; cv = v2; nc += m;
        }
        /* the new cells' inside masks */
        nm = gt_malloc_array(nn, 1, "cell masks");
        if (!nm) FAIL_OOM("cell masks");
#pragma omp parallel for schedule(static)
        for (long i = 0; i < (long)nn; i++) {
            uint32_t x, y, z;
            gt_pr_demorton(nk[i], &x, &y, &z);
            int msk = 0;
            for (int c = 0; c < 8; c++) {
                size_t at = gt_pr_lower_bound(ck, nc, gt_pr_corner_key(x, y, z, c));
                msk |= (cv[at] < iso) << c; /* present: every new cell's corners were added */
            }
            nm[i] = (uint8_t)msk;
        }
        /* merge the new cells into the set */
        {
            uint64_t *k2 = gt_malloc_array(ns + nn, sizeof *k2, "cells");
            uint8_t *m2 = gt_malloc_array(ns + nn, 1, "cell masks");
            if (!k2 || !m2) { free(k2); free(m2); FAIL_OOM("cells"); }
            size_t i = 0, j = 0, w = 0;
            while (i < ns || j < nn) {
                if (j >= nn || (i < ns && sk[i] < nk[j])) { k2[w] = sk[i]; m2[w++] = sm[i++]; }
                else { k2[w] = nk[j]; m2[w++] = nm[j++]; }
            }
            free(sk); free(sm);
            sk = k2; sm = m2; ns += nn;
        }
        /* the next round: neighbours across the mixed faces of mixed cells */
        kc = gt_malloc_array(6 * nn, sizeof *kc, "cells");
        kt = gt_malloc_array(6 * nn, sizeof *kt, "cells");
        if (!kc || !kt) FAIL_OOM("cells");
        size_t nq = 0;
        for (size_t i = 0; i < nn; i++) {
            int msk = nm[i];
            if (msk == 0 || msk == 255) continue;
            uint32_t x, y, z;
            gt_pr_demorton(nk[i], &x, &y, &z);
            for (int a = 0; a < 3; a++)
                for (int side = 0; side < 2; side++) {
                    if (!gt_pr_face_mixed(msk, a, side)) continue;
                    int64_t q[3] = {x, y, z};
                    q[a] += side ? 1 : -1;
                    if (q[a] < 0 || q[a] >= res) continue;
                    kc[nq++] = gt_pr_morton((uint32_t)q[0], (uint32_t)q[1], (uint32_t)q[2]);
                }
        }
        gt_pr_radix_u64(kc, kt, nq, 3 * D);
        nq = gt_pr_unique_u64(kc, nq);
        size_t nnew = 0;
        for (size_t i = 0; i < nq; i++)
            if (!gt_pr_contains(sk, ns, kc[i])) kc[nnew++] = kc[i];
        size_t room = cap > ns ? cap - ns : 0;
        if (nnew > room) { nnew = room; capped = 1; }
        free(nk); free(nm); free(kt);
        nm = NULL; kt = NULL;
        nk = kc;
        kc = NULL;
        nn = nnew;
        if (p->progress) gt_progress_update(&prog, (double)ns, NULL);
    }
    if (p->progress) gt_progress_end(&prog);
    double t1 = gt_now_ms();

    /* coarse blocks: the cells inside them make nothing, the blocks their
     * loops, from chi at their lattice points */
    if ((st = coarse_blocks(s, p, &bnode, &nb)) != GT_OK) FAIL_OOM("coarse blocks");
    if (nb > 0) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < (long)ns; i++)
            if (gt_pr_in_coarse_block(o->key, o->level_start, s->tree, D, sk[i])) sm[i] = 0;
        /* chi at the lattice points: from the corner set where a cell has
         * the point as a corner (all of a depth-(D-1) block's), else
         * evaluated */
        uint32_t *lxyz = gt_malloc_array(27 * nb, 3 * sizeof *lxyz, "block lattices");
        size_t *lat = gt_malloc_array(27 * nb, sizeof *lat, "block lattices");
        bval = gt_malloc_array(27 * nb, sizeof *bval, "block lattices");
        if (!lxyz || !lat || !bval) {
            free(lxyz);
            free(lat);
            FAIL_OOM("block lattices");
        }
        size_t nmiss = 0;
        for (size_t b = 0; b < nb; b++) {
            uint32_t base[3], h;
            block_geom(o, bnode[b], base, &h);
            for (int q = 0; q < 27; q++) {
                uint32_t c3[3];
                gt_pr_block_point(base, h, q, c3);
                uint64_t k = gt_pr_morton(c3[0], c3[1], c3[2]);
                size_t at = gt_pr_lower_bound(ck, nc, k);
                if (at < nc && ck[at] == k) bval[27 * b + (size_t)q] = cv[at];
                else {
                    memcpy(lxyz + 3 * nmiss, c3, sizeof c3);
                    lat[nmiss++] = 27 * b + (size_t)q;
                }
            }
        }
        double *mv = gt_malloc_array(nmiss ? nmiss : 1, sizeof *mv, "block lattices");
        double te = gt_now_ms();
        st = mv ? eval_grid(s, lxyz, nmiss, D, mv) : GT_ERR_RUNTIME;
        t_eval += gt_now_ms() - te;
        for (size_t k = 0; st == GT_OK && k < nmiss; k++) bval[lat[k]] = mv[k];
        free(lxyz);
        free(lat);
        free(mv);
        if (st != GT_OK) goto done;
        /* blocks the surface does not cross (one side at every lattice
         * point) make nothing: drop them, keeping the order */
        size_t w = 0;
        for (size_t b = 0; b < nb; b++) {
            int nin = 0;
            for (int q = 0; q < 27; q++) nin += bval[27 * b + (size_t)q] < iso;
            if (nin == 0 || nin == 27) continue;
            bnode[w] = bnode[b];
            if (w != b) memmove(bval + 27 * w, bval + 27 * b, 27 * sizeof *bval);
            w++;
        }
        nblk_all = nb;
        nb = w;
    }
    /* vertices: every cell's crossed edges and every block's loop vertices,
     * sorted with their positions */
    eoff = gt_malloc_array(ns + nb + 1, sizeof *eoff, "edge offsets");
    toff = gt_malloc_array(ns + nb + 1, sizeof *toff, "triangle offsets");
    aoff = gt_malloc_array(nb + 1, sizeof *aoff, "added vertices");
    if (!eoff || !toff || !aoff) FAIL_OOM("offsets");
    eoff[0] = toff[0] = aoff[0] = 0;
    for (size_t i = 0; i < ns; i++) {
        eoff[i + 1] = eoff[i] + (size_t)__builtin_popcount(T.cross[sm[i]]);
        toff[i + 1] = toff[i] + T.mc->ntri[sm[i]];
    }
#pragma omp parallel for schedule(dynamic, 64)
    for (long b = 0; b < (long)nb; b++) {
        gt_pr_block_poly P;
        block_poly(s, bnode[b], bval + 27 * b, &P);
        block_counts(&P, &eoff[ns + b + 1], &toff[ns + b + 1], &aoff[b + 1]);
    }
    for (size_t b = 0; b < nb; b++) {
        eoff[ns + b + 1] += eoff[ns + b];
        toff[ns + b + 1] += toff[ns + b];
        aoff[b + 1] += aoff[b];
    }
    nadd = aoff[nb];
    size_t ne = eoff[ns + nb], ntri = toff[ns + nb], nvert = 0;
    ev = gt_malloc_array(ne ? ne : 1, sizeof *ev, "edges");
    evt = gt_malloc_array(ne ? ne : 1, sizeof *evt, "edges");
    if (!ev || !evt) FAIL_OOM("edges");
#pragma omp parallel for schedule(static)
    for (long i = 0; i < (long)ns; i++) {
        uint32_t x, y, z, cr = T.cross[sm[i]];
        if (!cr) continue;
        gt_pr_demorton(sk[i], &x, &y, &z);
        size_t j = eoff[i];
        for (int e = 0; e < 12; e++)
            if ((cr >> e) & 1) {
                int code = T.code[e];
                ev[j].k = GT_PR_EKEY(gt_pr_corner_key(x, y, z, code & 7), code >> 3);
                ev[j].v = j;
                j++;
            }
    }
    /* the blocks' crossings, bisected down to depth-D edges (pr_adapt.h) */
    if (nb > 0) {
        const size_t nbe = ne - eoff[ns];
        bce = gt_malloc_array(nbe ? nbe : 1, sizeof *bce, "block crossings");
        if (!bce) FAIL_OOM("block crossings");
#pragma omp parallel for schedule(dynamic, 64)
        for (long b = 0; b < (long)nb; b++) {
            gt_pr_block_poly P;
            block_poly(s, bnode[b], bval + 27 * b, &P);
            uint32_t base[3], h;
            block_geom(o, bnode[b], base, &h);
            size_t j = eoff[ns + b] - eoff[ns];
            for (int q = 0; q < P.nv; q++) bce[j + (size_t)q] = gt_pr_cross_edge_of(P.cross[q], base, h);
        }
        size_t *pend = gt_malloc_array(nbe ? nbe : 1, sizeof *pend, "block crossings");
        uint32_t *mxyz2 = gt_malloc_array(nbe ? nbe : 1, 3 * sizeof *mxyz2, "block crossings");
        double *mv = gt_malloc_array(nbe ? nbe : 1, sizeof *mv, "block crossings");
        if (!pend || !mxyz2 || !mv) {
            free(pend); free(mxyz2); free(mv);
            FAIL_OOM("block crossings");
        }
        for (;;) {
            size_t nt = 0;
            for (size_t j = 0; j < nbe; j++)
                if (bce[j].m > 1) {
                    gt_pr_cross_mid(&bce[j], mxyz2 + 3 * nt);
                    pend[nt++] = j;
                }
            if (nt == 0) break;
            double te = gt_now_ms();
            st = eval_grid(s, mxyz2, nt, D, mv);
            t_eval += gt_now_ms() - te;
            if (st != GT_OK) break;
            for (size_t k = 0; k < nt; k++) gt_pr_cross_step(&bce[pend[k]], mv[k], iso);
        }
        free(pend); free(mxyz2); free(mv);
        if (st != GT_OK) goto done;
        for (size_t j = 0; j < nbe; j++) {
            ev[eoff[ns] + j].k = gt_pr_cross_key(&bce[j]);
            ev[eoff[ns] + j].v = eoff[ns] + j;
        }
    }
    gt_pr_radix_kv(ev, evt, ne, cbits + 3);
    free(evt);
    evt = NULL;
    ek = gt_malloc_array(ne ? ne : 1, sizeof *ek, "vertices");
    vemit = gt_malloc_array(ne ? ne : 1, sizeof *vemit, "vertices");
    if (!ek || !vemit) FAIL_OOM("vertices");
    for (size_t j = 0; j < ne; j++) {
        if (j == 0 || ev[j].k != ev[j - 1].k) {
            if (nvert == (size_t)INT32_MAX) {
                st = gt_fail(GT_ERR_RUNTIME, "the mesh has more than %d vertices (use a lower depth)", INT32_MAX);
                goto done;
            }
            ek[nvert++] = ev[j].k;
        }
        vemit[ev[j].v] = (int32_t)(nvert - 1);
    }
    free(ev);
    ev = NULL;
    if (nvert + nadd > (size_t)INT32_MAX) {
        st = gt_fail(GT_ERR_RUNTIME, "the mesh has more than %d vertices (use a lower depth)", INT32_MAX);
        goto done;
    }
    xyz = gt_malloc_array(nvert + nadd ? nvert + nadd : 1, 3 * sizeof *xyz, "vertices");
    tri = gt_malloc_array(ntri ? ntri : 1, 3 * sizeof *tri, "triangles");
    mxyz = gt_malloc_array(nvert ? nvert : 1, 3 * sizeof *mxyz, "edge middles");
    vmid = gt_malloc_array(nvert ? nvert : 1, sizeof *vmid, "edge middles");
    if (!xyz || !tri || !mxyz || !vmid) FAIL_OOM("mesh");
    /* chi at the edges' middles (grid points at depth D + 1) */
    for (size_t v = 0; v < nvert; v++) {
        uint32_t lo[3];
        int msk = (int)(ek[v] & 7);
        gt_pr_demorton(ek[v] >> 3, lo, lo + 1, lo + 2);
        for (int a = 0; a < 3; a++) mxyz[3 * v + a] = 2 * lo[a] + ((msk >> a) & 1);
    }
    {
        double te = gt_now_ms();
        if ((st = eval_grid(s, mxyz, nvert, D + 1, vmid)) != GT_OK) goto done;
        t_eval += gt_now_ms() - te;
    }
    /* chi at the vertices' edge ends: from the corner set, else (ends that
     * only coarse blocks' crossings reach) evaluated */
    double *vend = NULL;
    {
        vend = gt_malloc_array(2 * (nvert ? nvert : 1), sizeof *vend, "edge ends");
        uint32_t *exyz = gt_malloc_array(2 * (nvert ? nvert : 1), 3 * sizeof *exyz, "edge ends");
        size_t *eat = gt_malloc_array(2 * (nvert ? nvert : 1), sizeof *eat, "edge ends");
        if (!vend || !exyz || !eat) {
            free(vend); free(exyz); free(eat);
            FAIL_OOM("edge ends");
        }
        size_t nmiss = 0;
        for (size_t v = 0; v < nvert; v++) {
            uint64_t lk = ek[v] >> 3;
            int msk = (int)(ek[v] & 7);
            uint32_t c2[2][3];
            gt_pr_demorton(lk, c2[0], c2[0] + 1, c2[0] + 2);
            for (int a = 0; a < 3; a++) c2[1][a] = c2[0][a] + ((msk >> a) & 1);
            for (int e = 0; e < 2; e++) {
                uint64_t k = e ? gt_pr_morton(c2[1][0], c2[1][1], c2[1][2]) : lk;
                size_t at = gt_pr_lower_bound(ck, nc, k);
                if (at < nc && ck[at] == k) vend[2 * v + e] = cv[at];
                else {
                    memcpy(exyz + 3 * nmiss, c2[e], sizeof c2[e]);
                    eat[nmiss++] = 2 * v + (size_t)e;
                }
            }
        }
        double *mv = nmiss ? gt_malloc_array(nmiss, sizeof *mv, "edge ends") : NULL;
        if (nmiss && !mv) st = GT_ERR_RUNTIME;
        double te = gt_now_ms();
        if (st == GT_OK && nmiss) st = eval_grid(s, exyz, nmiss, D, mv);
        t_eval += gt_now_ms() - te;
        for (size_t k = 0; st == GT_OK && k < nmiss; k++) vend[eat[k]] = mv[k];
        free(mv); free(exyz); free(eat);
        if (st != GT_OK) {
            free(vend);
            goto done;
        }
    }
#pragma omp parallel for schedule(static)
    for (long v = 0; v < (long)nvert; v++) {
        uint64_t lk = ek[v] >> 3;
        int msk = (int)(ek[v] & 7);
        uint32_t lo[3], up[3];
        gt_pr_demorton(lk, lo, lo + 1, lo + 2);
        for (int a = 0; a < 3; a++) up[a] = lo[a] + ((msk >> a) & 1);
        double va = vend[2 * v], vb = vend[2 * v + 1];
        double t = gt_pr_edge_root(va, vmid[v], vb, iso);
        gt_pr_edge_vertex(lo, up, t, D, s->side, s->center, xyz + 3 * (size_t)v);
    }
    free(vend);
    /* triangles: cells in key order, the case table's triangles in order */
#pragma omp parallel for schedule(static)
    for (long i = 0; i < (long)ns; i++) {
        int msk = sm[i], nt = T.mc->ntri[msk];
        if (!nt) continue;
        unsigned cr = T.cross[msk];
        size_t base = eoff[i], k = toff[i];
        for (int r = 0; r < nt; r++, k++)
            for (int q = 0; q < 3; q++) {
                int e = T.mc->tri[msk][3 * r + q];
                tri[3 * k + q] = vemit[base + (size_t)__builtin_popcount(cr & ((1u << e) - 1))];
            }
    }
    /* the coarse blocks' triangles, then their added vertices */
#pragma omp parallel for schedule(dynamic, 64)
    for (long b = 0; b < (long)nb; b++) {
        gt_pr_block_poly P;
        block_poly(s, bnode[b], bval + 27 * b, &P);
        const size_t base = eoff[ns + b];
        size_t k = toff[ns + b], a = nvert + aoff[b];
        for (int l = 0; l < P.nloop; l++) {
            const int r = gt_pr_block_loop_root(&P, l), nt = gt_pr_block_loop_ntri(&P, l, r);
            const size_t ls = base + P.lstart[l];
            for (int t = 0; t < nt; t++, k++) {
                int q3[3];
                gt_pr_block_loop_tri(&P, l, r, t, q3);
                for (int q = 0; q < 3; q++) tri[3 * k + q] = q3[q] < 0 ? (int32_t)a : vemit[ls + (size_t)q3[q]];
            }
            if (r < 0) {
                const int n = P.lstart[l + 1] - P.lstart[l];
                double sum[3] = {0, 0, 0};
                for (int q = 0; q < n; q++)
                    for (int c = 0; c < 3; c++) sum[c] += (double)xyz[3 * (size_t)vemit[ls + (size_t)q] + c];
                for (int c = 0; c < 3; c++) xyz[3 * a + c] = (float)(sum[c] / (double)n);
                a++;
            }
        }
    }
    gt_info("extract: %d rounds, %zu cells (%zu grown), %zu corners in %.1f ms (evaluation %.1f ms); "
            "%zu coarse blocks (%zu crossed); %zu edges -> %zu vertices (%zu added), %zu triangles in %.1f ms",
            rounds, ns, ns - nfine, nc, t1 - t0, t_eval, nblk_all, nb, ne, nvert + nadd, nadd, ntri, gt_now_ms() - t1);
    nvert += nadd;
    if (capped) gt_warn("surface extraction stopped growing at %zu cells: the mesh may be open", ns);
    if (vkeys) { /* the added vertices have no edge: UINT64_MAX */
        uint64_t *k2 = realloc(ek, (nvert ? nvert : 1) * sizeof *k2);
        if (!k2) FAIL_OOM("vertex keys");
        ek = k2;
        for (size_t v = nvert - nadd; v < nvert; v++) ek[v] = UINT64_MAX;
    }
    out->nvert = nvert;
    out->ntri = ntri;
    out->xyz = xyz;
    out->tri = tri;
    out->iso = iso;
    xyz = NULL;
    tri = NULL;
    if (vkeys) {
        *vkeys = ek;
        ek = NULL;
    }
done:
    free(sk); free(sm); free(ck); free(cv); free(nk); free(nm); free(kc); free(kt); free(vnew);
    free(eoff); free(toff); free(ev); free(evt); free(ek); free(vemit); free(xyz); free(tri);
    free(mxyz); free(vmid); free(bnode); free(aoff); free(bval); free(bce);
    return st;
}

gt_status gt_pr_extract_mesh_cpu(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out)
{
    return gt_pr_extract_mesh_keys_cpu(s, p, out, NULL);
}

gt_status gt_pr_extract_cpu(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out)
{
    GT_TRY(gt_pr_extract_mesh_cpu(s, p, out));
    return gt_pr_mesh_post(s, p, out);
}
