/* Surface extraction on the GPU: the mesh of the CPU reference
 * (gt_pr_extract_mesh_cpu, lib/poisson/extract.c; defined in poisson.h),
 * built from sorted keys with CUB so that it is the same mesh.
 *
 * Growth, in rounds, from the depth-D nodes' cells: the new cells' 8 corners
 * -> sort, keep run heads not in the corner set -> chi there (the descent of
 * pr_eval_dev.cuh) -> merge into the corner set; the new cells' inside
 * masks by binary search of their corners; merge the new cells into the
 * cell set; neighbours across the mixed faces of mixed cells -> compact,
 * sort, keep run heads not in the cell set -> the next round's cells (cut
 * to the cap in key order). Sets are merged by rank: an element's place is
 * its index plus its lower bound in the other (disjoint) set.
 * Then per cell the crossed cube edge count and triangle count (the
 * marching cubes table of lib/mc, uploaded) -> exclusive scans (64-bit) ->
 * edge keys -> sort, run heads = the vertices -> chi at each vertex edge's
 * middle, the root on the edge, the position -> triangles, vertex ids by
 * binary search of the edge keys. The per-cell math (corner keys, cube edge
 * codes, crossed edges, mixed faces, the root and the position) is
 * lib/poisson/pr_mc.h's, the CPU's. Between growth and mesh, the coarse
 * blocks' stage (pr_extract_blocks.cu) drops the cells inside blocks and
 * adds the blocks' own crossings and triangles.
 *
 * Launch shape: every kernel is a grid-stride loop with one thread per
 * element (cell, corner, candidate, edge, vertex) in blocks of 256: the
 * elements are independent and their work small and uniform, so the only
 * concern is coalescing, which the key-sorted arrays give; sorts, scans
 * and selections are CUB's. */
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>
#include <utility>

#include "common/alloc.h"
#include "common/log.h"
#include "common/timer.h"
#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_eval_dev.cuh"
#include "kernels/poisson/pr_extract_stages.h"
#include "kernels/poisson/pr_gpu.h"
#include "kernels/poisson/pr_gpu_internal.h"
#include "poisson/pr_morton.h"
#include "mc/mc.h"
#include "poisson/pr_adapt.h"
#include "poisson/pr_mc.h"
#include "poisson/pr_sort.h"

namespace {

/* the marching cubes case table (gt_mc_table_get) and the cube edges' codes */
__constant__ uint8_t c_ntri[256];
__constant__ uint8_t c_tri[256][GT_MC_MAXTRI * 3];
__constant__ uint8_t c_edge[12];


__global__ void k_cell_corners(const uint64_t *cells, size_t n, uint64_t *out)
{
    GRID_LOOP(i, n) {
        uint32_t x, y, z;
        gt_pr_key_xyz(cells[i], &x, &y, &z);
        for (int c = 0; c < 8; c++) out[8 * i + c] = gt_pr_corner_key(x, y, z, c);
    }
}

/* heads of the runs of sorted k that are not in the sorted set `have` */
__global__ void k_flag_new(const uint64_t *k, size_t n, const uint64_t *have, size_t nh, uint8_t *flag)
{
    GRID_LOOP(i, n) {
        uint64_t v = k[i];
        flag[i] = (uint8_t)((i == 0 || k[i - 1] != v) && !gt_pr_contains(have, nh, v));
    }
}

__global__ void k_eval_keys(const eval_args A, const uint64_t *keys, size_t n, double *val)
{
    GRID_LOOP(i, n) {
        uint32_t x, y, z;
        gt_pr_key_xyz(keys[i], &x, &y, &z);
        val[i] = e_eval_corner(A, x, y, z);
    }
}

/* union of the disjoint sorted sets a and b (with values) into ok/ov */
template <typename V>
__global__ void k_merge(const uint64_t *a, const V *av, size_t na, const uint64_t *b, const V *bv, size_t nb,
                        uint64_t *ok, V *ov)
{
    GRID_LOOP(i, na + nb) {
        if (i < na) {
            size_t at = i + gt_pr_lower_bound(b, nb, a[i]);
            ok[at] = a[i];
            ov[at] = av[i];
        } else {
            size_t j = i - na, at = j + gt_pr_lower_bound(a, na, b[j]);
            ok[at] = b[j];
            ov[at] = bv[j];
        }
    }
}

__global__ void k_cell_masks(const uint64_t *cells, size_t n, const uint64_t *ck, const double *cv, size_t nc,
                             double iso, uint8_t *mask)
{
    GRID_LOOP(i, n) {
        uint32_t x, y, z;
        gt_pr_key_xyz(cells[i], &x, &y, &z);
        int m = 0;
        for (int c = 0; c < 8; c++) {
            size_t at = gt_pr_lower_bound(ck, nc, gt_pr_corner_key(x, y, z, c));
            double v = at < nc ? cv[at] : iso; /* always present */
            m |= (v < iso) << c;
        }
        mask[i] = (uint8_t)m;
    }
}

/* slot 6i + 2a + side: the neighbour across that face when the cell and the
 * face have mixed corners and it lies in the grid */
__global__ void k_candidates(const uint64_t *cells, const uint8_t *mask, size_t n, int D, uint64_t *cand,
                             uint8_t *flag)
{
    GRID_LOOP(i, n) {
        int m = mask[i];
        uint32_t x, y, z;
        gt_pr_key_xyz(cells[i], &x, &y, &z);
        const int64_t res = (int64_t)1 << D;
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                size_t slot = 6 * i + 2 * a + side;
                const bool mixed = gt_pr_face_mixed(m, a, side);
                int64_t q[3] = {x, y, z};
                q[a] += side ? 1 : -1;
                bool ok = m != 0 && m != 255 && mixed && q[a] >= 0 && q[a] < res;
                cand[slot] = ok ? gt_pr_key((uint32_t)q[0], (uint32_t)q[1], (uint32_t)q[2]) : 0;
                flag[slot] = (uint8_t)ok;
            }
    }
}

__global__ void k_counts(const uint8_t *mask, size_t n, uint64_t *ecnt, uint64_t *tcnt)
{
    GRID_LOOP(i, n) {
        int m = mask[i], e = 0, t = 0;
        for (int k = 0; k < 12; k++) e += gt_pr_edge_crossed(m, c_edge[k]);
        t = c_ntri[m];
        ecnt[i] = (uint64_t)e;
        tcnt[i] = (uint64_t)t;
    }
}

__global__ void k_edge_keys(const uint64_t *cells, const uint8_t *mask, const uint64_t *eoff, size_t n,
                            uint64_t *ek)
{
    GRID_LOOP(i, n) {
        int m = mask[i];
        if (m == 0 || m == 255) continue;
        uint32_t x, y, z;
        gt_pr_key_xyz(cells[i], &x, &y, &z);
        uint64_t j = eoff[i];
        for (int k = 0; k < 12; k++) {
            int code = c_edge[k];
            if (gt_pr_edge_crossed(m, code)) ek[j++] = GT_PR_EKEY(gt_pr_corner_key(x, y, z, code & 7), code >> 3);
        }
    }
}

struct place {
    double center[3], side, iso;
    int D;
};

/* the CPU's root and position (gt_pr_edge_root, gt_pr_edge_vertex: no
 * contraction into fused multiply-adds), chi at the edge's middle from the
 * descent of pr_eval_dev.cuh */
__global__ void k_vertices(const eval_args A, const uint64_t *E, size_t nv, const uint64_t *ck, const double *cv,
                           size_t nc, const place P, float *xyz)
{
    GRID_LOOP(v, nv) {
        uint64_t lk = E[v] >> 3;
        int m = (int)(E[v] & 7);
        uint32_t lo[3], up[3];
        gt_pr_key_xyz(lk, &lo[0], &lo[1], &lo[2]);
        for (int a = 0; a < 3; a++) up[a] = lo[a] + ((m >> a) & 1);
        const uint64_t kb = gt_pr_key(up[0], up[1], up[2]);
        size_t ia = gt_pr_lower_bound(ck, nc, lk), ib = gt_pr_lower_bound(ck, nc, kb);
        /* a corner of a cell, or an end only coarse blocks' crossings reach */
        double va = ia < nc && ck[ia] == lk ? cv[ia] : e_eval_corner(A, lo[0], lo[1], lo[2]);
        double vb = ib < nc && ck[ib] == kb ? cv[ib] : e_eval_corner(A, up[0], up[1], up[2]);
        /* the edge's middle: a grid point at depth D + 1 */
        double vm = e_eval_grid(A, 2 * lo[0] + (m & 1), 2 * lo[1] + ((m >> 1) & 1), 2 * lo[2] + ((m >> 2) & 1),
                                P.D + 1);
        double t = gt_pr_edge_root(va, vm, vb, P.iso);
        gt_pr_edge_vertex(lo, up, t, P.D, P.side, P.center, xyz + 3 * v);
    }
}

__global__ void k_triangles(const uint64_t *cells, const uint8_t *mask, const uint64_t *toff, size_t n,
                            const uint64_t *E, size_t nv, int32_t *tri)
{
    GRID_LOOP(i, n) {
        int m = mask[i];
        if (m == 0 || m == 255) continue;
        uint32_t x, y, z;
        gt_pr_key_xyz(cells[i], &x, &y, &z);
        uint64_t k = toff[i];
        for (int r = 0; r < c_ntri[m]; r++, k++)
            for (int q = 0; q < 3; q++) {
                int code = c_edge[c_tri[m][3 * r + q]];
                uint64_t key = GT_PR_EKEY(gt_pr_corner_key(x, y, z, code & 7), code >> 3);
                tri[3 * k + q] = (int32_t)gt_pr_lower_bound(E, nv, key); /* present: a crossed edge */
            }
    }
}

/* a mesh left on the device (gt_pr_mesh.dev) */
struct dev_mesh {
    float *xyz;
    int32_t *tri;
};

/* device buffer that only grows (contents are not kept when it does) */
struct dbuf {
    void *p = nullptr;
    size_t cap = 0;
};
gt_status need(dbuf &b, size_t bytes, const char *what)
{
    if (b.p && bytes <= b.cap) return GT_OK;
    size_t want = bytes + bytes / 4 + 256;
    gt_cu_free(b.p);
    b.p = nullptr;
    b.cap = 0;
    GT_TRY(gt_cu_malloc(&b.p, want, what));
    b.cap = want;
    return GT_OK;
}
template <typename T> T *P(dbuf &b) { return (T *)b.p; }

struct ctx {
    dbuf S, Sm, S2, S2m; /* cells and masks, merge output */
    dbuf C, Cv, C2, C2v; /* corners and chi, merge output */
    dbuf N, Nm, Nv;      /* new cells, their masks; values of new corners */
    dbuf A, B, F;        /* scratch keys, flags */
    dbuf eo, to, ao;     /* per cell and block edge/triangle counts, per block added vertices -> offsets */
    dbuf E, xyz, tri;
    dbuf bn, bv, bkk;    /* coarse blocks: node indices, lattice values, crossing keys */
    gt_arena arena;
    void free_all()
    {
        dbuf *all[] = {&S, &Sm, &S2, &S2m, &C, &Cv, &C2, &C2v, &N, &Nm, &Nv, &A, &B, &F, &eo, &to, &ao, &E, &xyz, &tri, &bn, &bv, &bkk};
        for (dbuf *b : all) {
            gt_cu_free(b->p);
            b->p = nullptr;
            b->cap = 0;
        }
        gt_arena_release(&arena);
    }
};


/* exclusive scan of cnt[0..n) in place into offsets, with the total in cnt[n] */
gt_status offsets(dbuf &cnt, size_t n, uint64_t *total, gt_arena *a)
{
    GT_TRY(gt_cu_memset(P<uint64_t>(cnt) + n, 0, sizeof(uint64_t), NULL));
    GT_TRY(gt_cu_scan_exclusive_u64(P<uint64_t>(cnt), P<uint64_t>(cnt), n + 1, a, NULL));
    return gt_cu_memcpy_d2h(total, P<uint64_t>(cnt) + n, sizeof(uint64_t), NULL);
}

gt_status extract(ctx &X, const eval_args &A, const uint8_t *d_tree, int virt, size_t nfine, double iso,
                  const double center[3], double side, bool keep, gt_pr_mesh *out)
{
    const int D = A.depth;
    const int cbits = 3 * (D + 1);
    gt_arena *ar = &X.arena;
    {
        const gt_mc_table *tab = gt_mc_table_get();
        uint8_t code[12];
        for (int e = 0; e < 12; e++) code[e] = (uint8_t)gt_pr_mc_edge_code(e);
        GT_CU(cudaMemcpyToSymbol(c_ntri, tab->ntri, sizeof tab->ntri));
        GT_CU(cudaMemcpyToSymbol(c_tri, tab->tri, sizeof tab->tri));
        GT_CU(cudaMemcpyToSymbol(c_edge, code, sizeof code));
    }
    const size_t cap = gt_pr_extract_cell_cap(nfine);
    size_t ns = 0, nc = 0, nn = nfine;
    int rounds = 0, capped = 0;
    double t0 = gt_now_ms();
    GT_TRY(need(X.N, nn * sizeof(uint64_t), "cells"));
    GT_TRY(gt_cu_memcpy_d2d(X.N.p, A.key + A.level_start[D], nn * sizeof(uint64_t), NULL));
    while (nn > 0) {
        rounds++;
        /* corners of the new cells not known yet, evaluated, merged in */
        size_t m8 = 8 * nn, m = 0;
        GT_TRY(need(X.A, m8 * sizeof(uint64_t), "corners"));
        GT_TRY(need(X.B, m8 * sizeof(uint64_t), "corners"));
        GT_TRY(need(X.F, m8, "flags"));
        LAUNCH(k_cell_corners, nn, P<uint64_t>(X.N), nn, P<uint64_t>(X.A));
        GT_TRY(gt_cu_sort_pairs_u64(P<uint64_t>(X.A), P<uint64_t>(X.B), NULL, NULL, m8, 0, cbits, ar, NULL));
        LAUNCH(k_flag_new, m8, P<uint64_t>(X.B), m8, P<uint64_t>(X.C), nc, P<uint8_t>(X.F));
        GT_TRY(gt_cu_select_flagged_u64(P<uint64_t>(X.B), P<uint8_t>(X.F), P<uint64_t>(X.A), m8, &m, ar, NULL));
        GT_TRY(need(X.Nv, (m + 1) * sizeof(double), "corner values"));
        LAUNCH(k_eval_keys, m, A, P<uint64_t>(X.A), m, P<double>(X.Nv));
        GT_TRY(need(X.C2, (nc + m) * sizeof(uint64_t), "corners"));
        GT_TRY(need(X.C2v, (nc + m) * sizeof(double), "corner values"));
        LAUNCH(k_merge<double>, nc + m, P<uint64_t>(X.C), P<double>(X.Cv), nc, P<uint64_t>(X.A), P<double>(X.Nv), m,
               P<uint64_t>(X.C2), P<double>(X.C2v));
        std::swap(X.C, X.C2);
        std::swap(X.Cv, X.C2v);
        nc += m;
        /* their inside masks, and the union with the cell set */
        GT_TRY(need(X.Nm, nn, "cell masks"));
        LAUNCH(k_cell_masks, nn, P<uint64_t>(X.N), nn, P<uint64_t>(X.C), P<double>(X.Cv), nc, iso, P<uint8_t>(X.Nm));
        GT_TRY(need(X.S2, (ns + nn) * sizeof(uint64_t), "cells"));
        GT_TRY(need(X.S2m, ns + nn, "cell masks"));
        LAUNCH(k_merge<uint8_t>, ns + nn, P<uint64_t>(X.S), P<uint8_t>(X.Sm), ns, P<uint64_t>(X.N), P<uint8_t>(X.Nm),
               nn, P<uint64_t>(X.S2), P<uint8_t>(X.S2m));
        std::swap(X.S, X.S2);
        std::swap(X.Sm, X.S2m);
        ns += nn;
        /* the next round's cells */
        size_t m6 = 6 * nn, nq = 0, nnew = 0;
        GT_TRY(need(X.A, m6 * sizeof(uint64_t), "cells"));
        GT_TRY(need(X.B, m6 * sizeof(uint64_t), "cells"));
        GT_TRY(need(X.F, m6, "flags"));
        LAUNCH(k_candidates, nn, P<uint64_t>(X.N), P<uint8_t>(X.Nm), nn, D, P<uint64_t>(X.A), P<uint8_t>(X.F));
        GT_TRY(gt_cu_select_flagged_u64(P<uint64_t>(X.A), P<uint8_t>(X.F), P<uint64_t>(X.B), m6, &nq, ar, NULL));
        GT_TRY(gt_cu_sort_pairs_u64(P<uint64_t>(X.B), P<uint64_t>(X.A), NULL, NULL, nq, 0, 3 * D > 0 ? 3 * D : 1, ar,
                                    NULL));
        LAUNCH(k_flag_new, nq, P<uint64_t>(X.A), nq, P<uint64_t>(X.S), ns, P<uint8_t>(X.F));
        GT_TRY(gt_cu_select_flagged_u64(P<uint64_t>(X.A), P<uint8_t>(X.F), P<uint64_t>(X.B), nq, &nnew, ar, NULL));
        size_t room = cap > ns ? cap - ns : 0;
        if (nnew > room) {
            nnew = room;
            capped = 1;
        }
        std::swap(X.N, X.B);
        nn = nnew;
    }
    double t1 = gt_now_ms();

    /* the coarse blocks: the cells inside them make nothing, the blocks
     * their loops, from chi at their lattice points */
    pr_blocks BL;
    memset(&BL, 0, sizeof BL);
    size_t nblk_all = 0;
    if (d_tree && D >= 1) {
        const size_t n1 = A.level_start[D];
        GT_TRY(need(X.A, (n1 + 1) * sizeof(uint64_t), "coarse blocks"));
        GT_TRY(need(X.F, n1 + 1, "coarse blocks"));
        GT_TRY(need(X.bn, (n1 + 1) * sizeof(uint64_t), "coarse blocks"));
        GT_TRY(pr_blocks_leaves(d_tree, n1, P<uint64_t>(X.A), P<uint8_t>(X.F)));
        GT_TRY(gt_cu_select_flagged_u64(P<uint64_t>(X.A), P<uint8_t>(X.F), P<uint64_t>(X.bn), n1, &BL.nb, ar, NULL));
        BL.node = P<uint64_t>(X.bn);
        BL.tree = d_tree;
        BL.virt = virt;
        nblk_all = BL.nb;
        if (BL.nb) {
            GT_TRY(pr_blocks_drop_cells(A, P<uint64_t>(X.S), P<uint8_t>(X.Sm), ns, BL));
            /* chi at the lattices; the blocks the surface crosses, in order */
            GT_TRY(need(X.bv, 27 * BL.nb * sizeof(double), "block lattices"));
            GT_TRY(pr_blocks_values(A, BL, P<uint64_t>(X.C), P<double>(X.Cv), nc, P<double>(X.bv)));
            GT_TRY(pr_blocks_crossed(BL, P<double>(X.bv), iso, P<uint8_t>(X.F)));
            GT_TRY(gt_cu_select_flagged_u64(P<uint64_t>(X.bn), P<uint8_t>(X.F), P<uint64_t>(X.A), BL.nb, &BL.nb, ar,
                                            NULL));
            std::swap(X.bn, X.A);
            BL.node = P<uint64_t>(X.bn);
            GT_TRY(pr_blocks_values(A, BL, P<uint64_t>(X.C), P<double>(X.Cv), nc, P<double>(X.bv)));
        }
    }
    const size_t nb = BL.nb;
    /* counts -> offsets */
    uint64_t ne = 0, ntri = 0, nadd = 0;
    GT_TRY(need(X.eo, (ns + nb + 1) * sizeof(uint64_t), "edge offsets"));
    GT_TRY(need(X.to, (ns + nb + 1) * sizeof(uint64_t), "triangle offsets"));
    GT_TRY(need(X.ao, (nb + 1) * sizeof(uint64_t), "added vertices"));
    LAUNCH(k_counts, ns, P<uint8_t>(X.Sm), ns, P<uint64_t>(X.eo), P<uint64_t>(X.to));
    GT_TRY(pr_blocks_counts(A, BL, P<double>(X.bv), iso, ns, P<uint64_t>(X.eo), P<uint64_t>(X.to), P<uint64_t>(X.ao)));
    GT_TRY(offsets(X.eo, ns + nb, &ne, ar));
    GT_TRY(offsets(X.to, ns + nb, &ntri, ar));
    GT_TRY(offsets(X.ao, nb, &nadd, ar));
    /* vertices: the sorted unique crossed-edge keys */
    size_t nvert = 0;
    GT_TRY(need(X.A, ne * sizeof(uint64_t), "edges"));
    GT_TRY(need(X.B, ne * sizeof(uint64_t), "edges"));
    GT_TRY(need(X.F, ne, "flags"));
    LAUNCH(k_edge_keys, ns, P<uint64_t>(X.S), P<uint8_t>(X.Sm), P<uint64_t>(X.eo), ns, P<uint64_t>(X.A));
    if (nb) {
        uint64_t e0 = 0;
        GT_TRY(gt_cu_memcpy_d2h(&e0, P<uint64_t>(X.eo) + ns, sizeof e0, NULL));
        GT_TRY(need(X.bkk, (ne - e0 + 1) * sizeof(uint64_t), "block crossings"));
        GT_TRY(pr_blocks_keys(A, BL, P<double>(X.bv), iso, ns, P<uint64_t>(X.eo), P<uint64_t>(X.A), P<uint64_t>(X.bkk)));
    }
    GT_TRY(gt_cu_sort_pairs_u64(P<uint64_t>(X.A), P<uint64_t>(X.B), NULL, NULL, ne, 0, cbits + 3, ar, NULL));
    LAUNCH(k_flag_new, ne, P<uint64_t>(X.B), ne, (const uint64_t *)NULL, (size_t)0, P<uint8_t>(X.F));
    GT_TRY(need(X.E, ne * sizeof(uint64_t), "vertices"));
    GT_TRY(gt_cu_select_flagged_u64(P<uint64_t>(X.B), P<uint8_t>(X.F), P<uint64_t>(X.E), ne, &nvert, ar, NULL));
    if (nvert + nadd > (size_t)INT32_MAX)
        return gt_fail(GT_ERR_RUNTIME, "the mesh has %zu vertices, more than %d (use a lower depth)",
                       nvert + (size_t)nadd, INT32_MAX);
    if (ntri > (uint64_t)SIZE_MAX / 12) return gt_fail(GT_ERR_RUNTIME, "the mesh has too many triangles");
    place PL;
    for (int a = 0; a < 3; a++) PL.center[a] = center[a];
    PL.side = side;
    PL.iso = iso;
    PL.D = D;
    GT_TRY(need(X.xyz, (nvert + nadd) * 3 * sizeof(float), "vertices"));
    GT_TRY(need(X.tri, (size_t)ntri * 3 * sizeof(int32_t), "triangles"));
    LAUNCH(k_vertices, nvert, A, P<uint64_t>(X.E), nvert, P<uint64_t>(X.C), P<double>(X.Cv), nc, PL, P<float>(X.xyz));
    LAUNCH(k_triangles, ns, P<uint64_t>(X.S), P<uint8_t>(X.Sm), P<uint64_t>(X.to), ns, P<uint64_t>(X.E), nvert,
           P<int32_t>(X.tri));
    GT_TRY(pr_blocks_tris(A, BL, P<double>(X.bv), iso, ns, P<uint64_t>(X.eo), P<uint64_t>(X.to), P<uint64_t>(X.ao),
                          P<uint64_t>(X.bkk), P<uint64_t>(X.E), nvert, P<float>(X.xyz), P<int32_t>(X.tri)));
    const size_t nedge_v = nvert;
    nvert += (size_t)nadd;
    GT_CU(cudaDeviceSynchronize());
    double t2 = gt_now_ms();
    if (keep) { /* the mesh stays where it is: its buffers leave X for out->dev */
        dev_mesh *dm = (dev_mesh *)calloc(1, sizeof *dm);
        if (!dm) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        dm->xyz = (float *)X.xyz.p;
        dm->tri = (int32_t *)X.tri.p;
        X.xyz = dbuf();
        X.tri = dbuf();
        gt_info("extract (gpu): %d rounds, %zu cells (%zu grown), %zu corners in %.1f ms; %zu coarse blocks (%zu crossed); "
                "%llu edges -> %zu vertices (%zu added), %llu triangles in %.1f ms; the mesh stays on the device for the "
                "writer",
                rounds, ns, ns - nfine, nc, t1 - t0, nblk_all, nb, (unsigned long long)ne, nvert, nvert - nedge_v,
                (unsigned long long)ntri, t2 - t1);
        if (capped) gt_warn("surface extraction stopped growing at %zu cells: the mesh may be open", ns);
        out->nvert = nvert;
        out->ntri = (size_t)ntri;
        out->xyz = NULL;
        out->tri = NULL;
        out->dev = dm;
        out->iso = iso;
        return GT_OK;
    }
    float *hx = (float *)gt_malloc_array(nvert ? nvert : 1, 3 * sizeof(float), "vertices");
    int32_t *ht = (int32_t *)gt_malloc_array(ntri ? (size_t)ntri : 1, 3 * sizeof(int32_t), "triangles");
    if (!hx || !ht) {
        free(hx);
        free(ht);
        return GT_ERR_RUNTIME;
    }
    gt_status st = gt_cu_memcpy_d2h(hx, X.xyz.p, nvert * 3 * sizeof(float), NULL);
    if (st == GT_OK) st = gt_cu_memcpy_d2h(ht, X.tri.p, (size_t)ntri * 3 * sizeof(int32_t), NULL);
    if (st != GT_OK) {
        free(hx);
        free(ht);
        return st;
    }
    gt_info("extract (gpu): %d rounds, %zu cells (%zu grown), %zu corners in %.1f ms; %zu coarse blocks (%zu crossed); %llu "
            "edges -> %zu vertices (%zu added), %llu triangles in %.1f ms; download %.1f ms",
            rounds, ns, ns - nfine, nc, t1 - t0, nblk_all, nb, (unsigned long long)ne, nvert, nvert - nedge_v,
            (unsigned long long)ntri, t2 - t1, gt_now_ms() - t2);
    if (capped) gt_warn("surface extraction stopped growing at %zu cells: the mesh may be open", ns);
    out->nvert = nvert;
    out->ntri = (size_t)ntri;
    out->xyz = hx;
    out->tri = ht;
    out->iso = iso;
    return GT_OK;
}

} // namespace

extern "C" gt_status gt_pr_extract_dev(const uint64_t *d_key, const int32_t *d_child, const int32_t *d_nbr,
                                       const double *d_coef, const uint8_t *d_tree, int tree_virtual,
                                       const size_t *level_start, int lmin, int depth, double iso,
                                       const double center[3], double side, bool keep, gt_pr_mesh *out)
{
    if (depth < 0 || depth > GT_PR_MAX_DEPTH) return gt_fail(GT_ERR_RUNTIME, "extract: bad depth %d", depth);
    eval_args A;
    memset(&A, 0, sizeof A);
    A.key = d_key;
    A.child = d_child;
    A.nbr = d_nbr;
    A.coef = d_coef;
    A.lmin = lmin;
    A.depth = depth;
    for (int l = 0; l <= depth + 1; l++) A.level_start[l] = level_start[l];
    ctx X;
    gt_arena_init(&X.arena);
    gt_status st = extract(X, A, d_tree, tree_virtual, level_start[depth + 1] - level_start[depth], iso, center, side,
                           keep, out);
    X.free_all();
    return st;
}

extern "C" void gt_pr_dev_mesh_get(const void *dev, const float **xyz, const int32_t **tri)
{
    const dev_mesh *dm = (const dev_mesh *)dev;
    *xyz = dm->xyz;
    *tri = dm->tri;
}

extern "C" void gt_pr_dev_mesh_free(void *dev)
{
    dev_mesh *dm = (dev_mesh *)dev;
    if (!dm) return;
    gt_cu_free(dm->xyz);
    gt_cu_free(dm->tri);
    free(dm);
}

extern "C" gt_status gt_pr_extract_cuda(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out)
{
    /* the host needs the vertices only for density, trimming and colours */
    const bool keep = p->mesh_on_device && !p->want_density && !(p->trim > 0) && !p->want_colors;
    const gt_pr_octree *o = &s->oct;
    size_t NN = o->nnodes;
    const gt_pr_dev_state *ds = (const gt_pr_dev_state *)s->dev;
    if (ds && ds->coef) {
        /* solved on the device: the octree and coefficients are still there */
        GT_TRY(gt_pr_extract_dev(ds->oct.key, ds->oct.child, ds->oct.nbr, ds->coef, p->uniform_mesh ? NULL : ds->tree,
                                 gt_pr_tree_virtual(s->coarse_levels),
                                 o->level_start, s->coef_lmin, o->depth, s->iso, s->center, s->side, keep, out));
        return gt_pr_mesh_post(s, p, out);
    }
    void *b[5] = {0, 0, 0, 0, 0};
    const bool tree = s->tree && !p->uniform_mesh && o->depth >= 1;
    gt_status st = gt_cu_malloc(&b[0], NN * sizeof(uint64_t) + 8, "octree keys");
    if (st == GT_OK) st = gt_cu_malloc(&b[1], NN * sizeof(int32_t) + 4, "octree children");
    if (st == GT_OK) st = gt_cu_malloc(&b[2], 27 * NN * sizeof(int32_t) + 4, "octree neighbours");
    if (st == GT_OK) st = gt_cu_malloc(&b[3], NN * sizeof(double) + 8, "coefficients");
    if (st == GT_OK) st = gt_cu_memcpy_h2d(b[0], o->key, NN * sizeof(uint64_t), NULL);
    if (st == GT_OK) st = gt_cu_memcpy_h2d(b[1], o->child, NN * sizeof(int32_t), NULL);
    if (st == GT_OK) st = gt_cu_memcpy_h2d(b[2], o->nbr, 27 * NN * sizeof(int32_t), NULL);
    if (st == GT_OK) st = gt_cu_memcpy_h2d(b[3], s->coef, NN * sizeof(double), NULL);
    if (st == GT_OK && tree) st = gt_cu_malloc(&b[4], NN + 1, "extraction tree");
    if (st == GT_OK && tree) st = gt_cu_memcpy_h2d(b[4], s->tree, NN, NULL);
    if (st == GT_OK)
        st = gt_pr_extract_dev((const uint64_t *)b[0], (const int32_t *)b[1], (const int32_t *)b[2],
                               (const double *)b[3], (const uint8_t *)b[4], gt_pr_tree_virtual(s->coarse_levels), o->level_start,
                               s->coef_lmin, o->depth,
                               s->iso, s->center, s->side, keep, out);
    for (int i = 0; i < 5; i++) gt_cu_free(b[i]);
    if (st != GT_OK) return st;
    return gt_pr_mesh_post(s, p, out);
}
