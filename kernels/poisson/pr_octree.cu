/* Data-parallel octree (Zhou et al. 2011) on the GPU: Morton keys (30-bit
 * keys sorted as 32-bit up to depth 10, 64-bit beyond), radix sort, run-length
 * encoding into leaves, widened to every depth-D cell within 2 cells of one
 * with points (pr_morton.h: child 0 of the 27 neighbours of each occupied
 * cell's parent, sorted in with the leaves, unique, ranges by binary search),
 * then per level: the same widening above the full depth, every cell at the
 * full depth (same lookup), flag where the
 * parent changes, scan to number the parents, allocate all 8 siblings of
 * each, scatter point ranges and child blocks, and go up by dropping 3 bits. Links and the 27 neighbours of every
 * node come from the parent's neighbours through LUTparent/LUTchild.
 * Produces exactly the octree of gt_pr_octree_build_cpu; the keys and the
 * neighbour rule are lib/poisson/pr_morton.h's, the CPU's.
 *
 * Launch shape: one thread per point, occupied key, node or (node,
 * neighbour) pair, grid-stride in blocks of 256: each element is a few loads
 * and stores with no reuse, so coalescing over the sorted arrays is all
 * that matters; sorts, run-length encoding and scans are CUB's. */
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_gpu.h"
#include "kernels/poisson/pr_gpu_internal.h"
#include "poisson/pr_morton.h"

__constant__ uint8_t c_lut_parent[8][27];
__constant__ uint8_t c_lut_child[8][27];


__global__ void k_keys(const float *u, size_t n, int depth, uint64_t *k64, uint32_t *k32, uint32_t *idx)
{
    const uint32_t res = 1u << depth;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t c[3];
        for (int a = 0; a < 3; a++) {
            double v = (double)u[3 * i + a] * res; /* same arithmetic as the CPU */
            c[a] = v <= 0 ? 0u : v >= res ? res - 1 : (uint32_t)v;
        }
        uint64_t k = gt_pr_key(c[0], c[1], c[2]);
        if (k32) k32[i] = (uint32_t)k; else k64[i] = k;
        idx[i] = (uint32_t)i;
    }
}

__global__ void k_widen(const uint32_t *in, uint64_t *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

/* flag[k] = parent of occ[k] differs from the previous one */
__global__ void k_parent_flags(const uint64_t *occ, size_t n, uint32_t *flag)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x)
        flag[k] = (k == 0 || (occ[k] >> 3) != (occ[k - 1] >> 3)) ? 1u : 0u;
}

/* pidp1 = inclusive scan of flags (parent ordinal + 1). Scatter the occupied
 * nodes into their 8-sibling blocks (with their children's block oblk, -1:
 * none), and seed the next level's occupied keys, parent pid owning block pid. */
__global__ void k_scatter_level(const uint64_t *occ, const uint32_t *ost, const uint32_t *ocn, const int32_t *oblk,
                                const uint32_t *pidp1, size_t nocc, uint64_t *lkey, uint32_t *lst, uint32_t *lcn,
                                int32_t *lchild, uint64_t *nocc_key, uint32_t *nost, uint32_t *ncn, int32_t *nblk)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < nocc; k += (size_t)gridDim.x * blockDim.x) {
        uint32_t pid = pidp1[k] - 1;
        uint64_t pk = occ[k] >> 3;
        size_t base = 8 * (size_t)pid;
        size_t pos = base + (occ[k] & 7);
        lst[pos] = ost[k];
        lcn[pos] = ocn[k];
        lchild[pos] = oblk[k] >= 0 ? 8 * oblk[k] : -1;
        bool first = (k == 0 || (occ[k - 1] >> 3) != pk);
        if (first) {
            for (int c = 0; c < 8; c++) lkey[base + c] = pk << 3 | (uint64_t)c;
            nocc_key[pid] = pk;
            nost[pid] = ost[k];
            nblk[pid] = (int32_t)pid;
        }
        atomicAdd(&ncn[pid], ocn[k]); /* integer sums: order-independent */
    }
}

/* Widening: the leaf keys, then for each leaf that starts a parent the 27
 * keys gt_pr_widen_key of that parent (GT_PR_NO_KEY outside the grid; the
 * other leaves' 27 slots too) */
__global__ void k_widen_cand(const uint64_t *occ, size_t nocc, int depth, uint64_t *cand)
{
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < 28 * nocc;
         t += (size_t)gridDim.x * blockDim.x) {
        if (t < nocc) { cand[t] = occ[t]; continue; }
        size_t k = (t - nocc) / 27;
        int i = (int)((t - nocc) % 27);
        bool first = (k == 0 || (occ[k - 1] >> 3) != (occ[k] >> 3));
        cand[t] = first ? gt_pr_widen_key(occ[k] >> 3, depth - 1, i) : GT_PR_NO_KEY(depth);
    }
}

/* The occupied cells for keys[0..m) (sorted, a superset of occ; NULL: the
 * keys 0..m-1): occ's ranges and child blocks where the key is occ's, else
 * the empty range at the lower bound in the sorted points and no children. */
__global__ void k_occ_lookup(const uint64_t *keys, size_t m, const uint64_t *occ, const uint32_t *ost,
                             const uint32_t *ocn, const int32_t *oblk, size_t nocc, uint32_t npts, uint64_t *nkey,
                             uint32_t *nst, uint32_t *ncn, int32_t *nblk)
{
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < m; j += (size_t)gridDim.x * blockDim.x) {
        const uint64_t key = keys ? keys[j] : (uint64_t)j;
        size_t lo = 0, hi = nocc;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (occ[mid] < key) lo = mid + 1; else hi = mid;
        }
        const bool hit = lo < nocc && occ[lo] == key;
        nkey[j] = key;
        nst[j] = hit ? ost[lo] : lo < nocc ? ost[lo] : npts;
        ncn[j] = hit ? ocn[lo] : 0u;
        nblk[j] = hit ? oblk[lo] : -1;
    }
}

/* global arrays: level arrays copied in; child links made global */
__global__ void k_fix_children(int32_t *child, size_t n, int32_t offset)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (child[i] >= 0) child[i] += offset;
}

__global__ void k_parents(const int32_t *child, size_t n_above, int32_t *parent)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n_above; i += (size_t)gridDim.x * blockDim.x) {
        int32_t c = child[i];
        if (c >= 0)
            for (int j = 0; j < 8; j++) parent[c + j] = (int32_t)i;
    }
}

/* neighbours of level-l nodes [s0, s0+n) from their parents' (level l-1 done) */
__global__ void k_neighbours(const uint64_t *key, const int32_t *parent, const int32_t *child, int32_t *nbr, size_t s0,
                             size_t n)
{
    size_t total = 27 * n;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total; t += (size_t)gridDim.x * blockDim.x) {
        size_t v = s0 + t / 27;
        int i = (int)(t % 27);
        int32_t p = parent[v];
        int c = (int)(key[v] & 7);
        nbr[27 * v + i] = gt_pr_nbr_rule(nbr, child, p, c_lut_parent[c], c_lut_child[c], i);
    }
}

void gt_pr_dev_octree_free(gt_pr_dev_octree *d)
{
    gt_cu_free(d->key); gt_cu_free(d->parent); gt_cu_free(d->child); gt_cu_free(d->nbr);
    gt_cu_free(d->pt_start); gt_cu_free(d->pt_count); gt_cu_free(d->order);
    memset(d, 0, sizeof *d);
}

static inline size_t nz_bytes(size_t b) { return b ? b : 1; }

/* The widened cells of the occupied cells occ[0..nocc) of `level`
 * (k_widen_cand): sorted, unique, the out-of-grid key dropped, *nw of them
 * from cand + 2 * 28 nocc (cand: 3 * 28 nocc keys, runs: 28 nocc) */
static gt_status widen_cells(const uint64_t *occ, size_t nocc, int level, uint64_t *cand, uint32_t *runs, size_t *nw)
{
    const size_t nc = 28 * nocc;
    k_widen_cand<<<gt_grid(nc, 256), 256>>>(occ, nocc, level, cand);
    GT_CU_LAUNCH("k_widen_cand");
    GT_TRY(gt_cu_sort_pairs_u64(cand, cand + nc, NULL, NULL, nc, 0, 3 * level + 1, NULL, NULL));
    GT_TRY(gt_cu_rle_u64(cand + nc, cand + 2 * nc, runs, nc, nw, NULL, NULL));
    uint64_t last = 0;
    GT_TRY(gt_cu_memcpy_d2h(&last, cand + 2 * nc + *nw - 1, sizeof last, NULL));
    if (last == GT_PR_NO_KEY(level)) (*nw)--;
    return GT_OK;
}

/* The next level's occupied cells (keys, point ranges, child blocks) become
 * the current ones, and the current buffers the next's. */
template <class T> static inline void swap_ptr(T **a, T **b)
{
    T *t = *a;
    *a = *b;
    *b = t;
}
static inline void occ_swap(uint64_t **key, uint64_t **nkey, uint32_t **st, uint32_t **nst, uint32_t **cn,
                            uint32_t **ncn, int32_t **blk, int32_t **nblk)
{
    swap_ptr(key, nkey);
    swap_ptr(st, nst);
    swap_ptr(cn, ncn);
    swap_ptr(blk, nblk);
}
#define CUM(ptr, bytes, what) GT_TRY(gt_cu_malloc((void **)&(ptr), nz_bytes(bytes), what))

static gt_status build(const float *d_u, size_t n, int depth, int full_depth, gt_pr_dev_octree *d, gt_pr_octree *h,
                       void **level_bufs, gt_timings *tm)
{
    const unsigned B = 256;
    gt_timer tmr;
    gt_timer_start(&tmr, true, NULL);
    gt_pr_luts_init();
    GT_CU(cudaMemcpyToSymbol(c_lut_parent, gt_pr_lut_parent, sizeof gt_pr_lut_parent));
    GT_CU(cudaMemcpyToSymbol(c_lut_child, gt_pr_lut_child, sizeof gt_pr_lut_child));
    memset(h, 0, sizeof *h);
    h->depth = depth;
    h->npts = n;
    /* level_bufs: 5 per level (key, st, cn, child, scratch) freed by caller on error */
    uint64_t **lkey = (uint64_t **)level_bufs;
    uint32_t **lst = (uint32_t **)(level_bufs + (GT_PR_MAX_DEPTH + 1));
    uint32_t **lcn = (uint32_t **)(level_bufs + 2 * (GT_PR_MAX_DEPTH + 1));
    int32_t **lch = (int32_t **)(level_bufs + 3 * (GT_PR_MAX_DEPTH + 1));
    void **tmp = level_bufs + 4 * (GT_PR_MAX_DEPTH + 1); /* 13 scratch pointers */
    size_t lcount[GT_PR_MAX_DEPTH + 1] = {0};

    uint64_t *k64 = NULL;
    uint32_t *idx = NULL, *k32 = NULL;
    CUM(k64, 2 * n * sizeof(uint64_t), "octree keys");
    tmp[0] = k64;
    CUM(idx, 2 * n * sizeof(uint32_t), "octree order");
    tmp[1] = idx;
    const bool narrow = depth <= 10;
    if (narrow) {
        k32 = (uint32_t *)k64; /* 2n u32 fit in the 2n u64 buffer */
        k_keys<<<gt_grid(n, B), B>>>(d_u, n, depth, NULL, k32, idx);
        GT_CU_LAUNCH("k_keys");
        GT_TRY(gt_cu_sort_pairs_u32(k32, k32 + n, idx, idx + n, n, 0, 3 * depth, NULL, NULL));
        /* widen the sorted keys into the second half of k64 (bytes [8n, 16n)
         * do not overlap k32 + n at bytes [4n, 8n)) */
        k_widen<<<gt_grid(n, B), B>>>(k32 + n, k64 + n, n);
        GT_CU_LAUNCH("k_widen");
    } else {
        k_keys<<<gt_grid(n, B), B>>>(d_u, n, depth, k64, NULL, idx);
        GT_CU_LAUNCH("k_keys");
        GT_TRY(gt_cu_sort_pairs_u64(k64, k64 + n, idx, idx + n, n, 0, 3 * depth, NULL, NULL));
    }
    CUM(d->order, n * sizeof(uint32_t), "point order");
    GT_TRY(gt_cu_memcpy_d2d(d->order, idx + n, n * sizeof(uint32_t), NULL));
    /* leaves: run-length encode the sorted keys, starts by exclusive scan */
    uint64_t *occ = NULL;
    uint32_t *ost = NULL, *ocn = NULL, *flag = NULL;
    CUM(occ, n * sizeof(uint64_t), "leaf keys");
    tmp[2] = occ;
    CUM(ost, n * sizeof(uint32_t), "leaf ranges");
    tmp[3] = ost;
    CUM(ocn, n * sizeof(uint32_t), "leaf ranges");
    tmp[4] = ocn;
    CUM(flag, n * sizeof(uint32_t), "flags");
    tmp[5] = flag;
    size_t nocc = 0;
    GT_TRY(gt_cu_rle_u64(k64 + n, occ, ocn, n, &nocc, NULL, NULL));
    GT_TRY(gt_cu_scan_exclusive_u32(ocn, ost, nocc, NULL, NULL));
    /* widen the leaves: candidates sorted, unique (the out-of-grid key last),
     * ranges by lookup */
    size_t ncand = 28 * nocc, nwide = 0;
    uint64_t *cand = NULL;
    CUM(cand, 3 * ncand * sizeof(uint64_t), "octree widening");
    tmp[6] = cand;
    uint32_t *runs = NULL;
    CUM(runs, ncand * sizeof(uint32_t), "octree widening");
    tmp[7] = runs;
    GT_TRY(widen_cells(occ, nocc, depth, cand, runs, &nwide));
    /* the level buffers, now that their largest size is known */
    const int F = full_depth;
    size_t cap = nwide > n ? nwide : n;
    if (F >= 1 && ((size_t)1 << (3 * F)) > cap) cap = (size_t)1 << (3 * F);
    uint64_t *nkey = NULL, *wkey = NULL;
    uint32_t *nst = NULL, *ncn = NULL, *wst = NULL, *wcn = NULL, *flag2 = NULL;
    int32_t *oblk = NULL, *nblk = NULL;
    CUM(wkey, cap * sizeof(uint64_t), "octree keys");
    tmp[8] = wkey;
    CUM(nkey, cap * sizeof(uint64_t), "octree keys");
    tmp[9] = nkey;
    CUM(wst, 4 * cap * sizeof(uint32_t), "octree ranges"); /* wst, wcn, nst, ncn */
    tmp[10] = wst;
    wcn = wst + cap; nst = wst + 2 * cap; ncn = wst + 3 * cap;
    CUM(oblk, 2 * cap * sizeof(int32_t), "octree links");
    tmp[11] = oblk;
    nblk = oblk + cap;
    CUM(flag2, cap * sizeof(uint32_t), "flags");
    tmp[12] = flag2;
    GT_TRY(gt_cu_memset(nblk, 0xff, nocc * sizeof(int32_t), NULL)); /* leaves: no children */
    k_occ_lookup<<<gt_grid(nwide, B), B>>>(cand + 2 * ncand, nwide, occ, ost, ocn, nblk, nocc, (uint32_t)n, wkey, wst,
                                          wcn, oblk);
    GT_CU_LAUNCH("k_occ_lookup");
    for (int i = 0; i <= 7; i++) { gt_cu_free(tmp[i]); tmp[i] = NULL; }
    occ = wkey; ost = wst; ocn = wcn; flag = flag2;
    nocc = nwide;
    for (int l = depth; l >= 1; l--) {
        if (l < depth && l > F) { /* widened as the leaves were (the CPU's occ_widen) */
            size_t nc = 28 * nocc, nw = 0;
            uint64_t *wc = NULL;
            uint32_t *wr = NULL;
            CUM(wc, 3 * nc * sizeof(uint64_t), "octree widening");
            tmp[0] = wc;
            CUM(wr, nc * sizeof(uint32_t), "octree widening");
            tmp[1] = wr;
            GT_TRY(widen_cells(occ, nocc, l, wc, wr, &nw));
            if (nw > cap) { /* the level buffers grow; the occupied cells move over */
                void *nb[5] = {NULL, NULL, NULL, NULL, NULL};
                CUM(nb[0], nw * sizeof(uint64_t), "octree keys");
                tmp[2] = nb[0];
                CUM(nb[1], nw * sizeof(uint64_t), "octree keys");
                tmp[3] = nb[1];
                CUM(nb[2], 4 * nw * sizeof(uint32_t), "octree ranges");
                tmp[4] = nb[2];
                CUM(nb[3], 2 * nw * sizeof(int32_t), "octree links");
                tmp[5] = nb[3];
                CUM(nb[4], nw * sizeof(uint32_t), "flags");
                tmp[6] = nb[4];
                uint32_t *r32 = (uint32_t *)nb[2];
                int32_t *b32 = (int32_t *)nb[3];
                GT_TRY(gt_cu_memcpy_d2d(nb[0], occ, nocc * sizeof(uint64_t), NULL));
                GT_TRY(gt_cu_memcpy_d2d(r32, ost, nocc * sizeof(uint32_t), NULL));
                GT_TRY(gt_cu_memcpy_d2d(r32 + nw, ocn, nocc * sizeof(uint32_t), NULL));
                GT_TRY(gt_cu_memcpy_d2d(b32, oblk, nocc * sizeof(int32_t), NULL));
                for (int i = 8; i <= 12; i++) {
                    gt_cu_free(tmp[i]);
                    tmp[i] = nb[i - 8];
                    tmp[i - 6] = NULL;
                }
                cap = nw;
                occ = (uint64_t *)nb[0]; nkey = (uint64_t *)nb[1];
                ost = r32; ocn = r32 + cap; nst = r32 + 2 * cap; ncn = r32 + 3 * cap;
                oblk = b32; nblk = b32 + cap;
                flag = (uint32_t *)nb[4];
            }
            k_occ_lookup<<<gt_grid(nw, B), B>>>(wc + 2 * nc, nw, occ, ost, ocn, oblk, nocc, (uint32_t)n, nkey, nst,
                                                ncn, nblk);
            GT_CU_LAUNCH("k_occ_lookup");
            gt_cu_free(tmp[0]); tmp[0] = NULL;
            gt_cu_free(tmp[1]); tmp[1] = NULL;
            occ_swap(&occ, &nkey, &ost, &nst, &ocn, &ncn, &oblk, &nblk);
            nocc = nw;
        }
        if (l == F) { /* every cell of the full depth */
            size_t all = (size_t)1 << (3 * l);
            k_occ_lookup<<<gt_grid(all, B), B>>>(NULL, all, occ, ost, ocn, oblk, nocc, (uint32_t)n, nkey, nst, ncn,
                                                nblk);
            GT_CU_LAUNCH("k_occ_lookup");
            occ_swap(&occ, &nkey, &ost, &nst, &ocn, &ncn, &oblk, &nblk);
            nocc = all;
        }
        k_parent_flags<<<gt_grid(nocc, B), B>>>(occ, nocc, flag);
        GT_CU_LAUNCH("k_parent_flags");
        GT_TRY(gt_cu_scan_inclusive_u32(flag, flag, nocc, NULL, NULL));
        uint32_t npar = 0;
        GT_TRY(gt_cu_memcpy_d2h(&npar, flag + nocc - 1, sizeof npar, NULL));
        size_t nn = 8 * (size_t)npar;
        lcount[l] = nn;
        CUM(lkey[l], nn * sizeof(uint64_t), "node keys");
        CUM(lst[l], nn * sizeof(uint32_t), "node ranges");
        CUM(lcn[l], nn * sizeof(uint32_t), "node ranges");
        CUM(lch[l], nn * sizeof(int32_t), "child links");
        GT_TRY(gt_cu_memset(lst[l], 0, nn * sizeof(uint32_t), NULL));
        GT_TRY(gt_cu_memset(lcn[l], 0, nn * sizeof(uint32_t), NULL));
        GT_TRY(gt_cu_memset(lch[l], 0xff, nn * sizeof(int32_t), NULL));
        GT_TRY(gt_cu_memset(ncn, 0, npar * sizeof(uint32_t), NULL));
        k_scatter_level<<<gt_grid(nocc, B), B>>>(occ, ost, ocn, oblk, flag, nocc, lkey[l], lst[l], lcn[l], lch[l],
                                                 nkey, nst, ncn, nblk);
        GT_CU_LAUNCH("k_scatter_level");
        /* swap: the unique parents become the occupied keys */
        occ_swap(&occ, &nkey, &ost, &nst, &ocn, &ncn, &oblk, &nblk);
        nocc = npar;
    }
    /* assemble, root first */
    size_t total = 1;
    h->level_start[0] = 0;
    for (int l = 1; l <= depth; l++) { h->level_start[l] = total; total += lcount[l]; }
    h->level_start[depth + 1] = total;
    if (total > INT32_MAX) return gt_fail(GT_ERR_RUNTIME, "octree too large (%zu nodes)", total);
    h->nnodes = total;
    CUM(d->key, total * sizeof(uint64_t), "octree");
    CUM(d->parent, total * sizeof(int32_t), "octree");
    CUM(d->child, total * sizeof(int32_t), "octree");
    CUM(d->nbr, total * 27 * sizeof(int32_t), "octree neighbours");
    CUM(d->pt_start, total * sizeof(uint32_t), "octree");
    CUM(d->pt_count, total * sizeof(uint32_t), "octree");
    {
        uint64_t k0 = 0;
        uint32_t s0 = 0, c0 = (uint32_t)n;
        int32_t ch0 = 1, p0 = -1;
        GT_TRY(gt_cu_memcpy_h2d(d->key, &k0, sizeof k0, NULL));
        GT_TRY(gt_cu_memcpy_h2d(d->pt_start, &s0, sizeof s0, NULL));
        GT_TRY(gt_cu_memcpy_h2d(d->pt_count, &c0, sizeof c0, NULL));
        GT_TRY(gt_cu_memcpy_h2d(d->child, &ch0, sizeof ch0, NULL));
        GT_TRY(gt_cu_memcpy_h2d(d->parent, &p0, sizeof p0, NULL));
    }
    for (int l = 1; l <= depth; l++) {
        size_t s0 = h->level_start[l], nl = lcount[l];
        GT_TRY(gt_cu_memcpy_d2d(d->key + s0, lkey[l], nl * sizeof(uint64_t), NULL));
        GT_TRY(gt_cu_memcpy_d2d(d->pt_start + s0, lst[l], nl * sizeof(uint32_t), NULL));
        GT_TRY(gt_cu_memcpy_d2d(d->pt_count + s0, lcn[l], nl * sizeof(uint32_t), NULL));
        GT_TRY(gt_cu_memcpy_d2d(d->child + s0, lch[l], nl * sizeof(int32_t), NULL));
        if (l < depth) {
            k_fix_children<<<gt_grid(nl, B), B>>>(d->child + s0, nl, (int32_t)h->level_start[l + 1]);
            GT_CU_LAUNCH("k_fix_children");
        }
    }
    k_parents<<<gt_grid(h->level_start[depth], B), B>>>(d->child, h->level_start[depth], d->parent);
    GT_CU_LAUNCH("k_parents");
    {
        int32_t root_nbr[27];
        for (int i = 0; i < 27; i++) root_nbr[i] = -1;
        root_nbr[13] = 0;
        GT_TRY(gt_cu_memcpy_h2d(d->nbr, root_nbr, sizeof root_nbr, NULL));
    }
    for (int l = 1; l <= depth; l++) {
        size_t s0 = h->level_start[l], nl = lcount[l];
        k_neighbours<<<gt_grid(27 * nl, B), B>>>(d->key, d->parent, d->child, d->nbr, s0, nl);
        GT_CU_LAUNCH("k_neighbours");
    }
    if (tm) gt_timings_add(tm, "octree (gpu)", gt_timer_stop(&tmr));
    return GT_OK;
}

gt_status gt_pr_dev_octree_build(const float *d_u, size_t n, int depth, int full_depth, gt_pr_dev_octree *d, gt_pr_octree *h,
                                 gt_timings *tm)
{
    memset(d, 0, sizeof *d);
    if (depth < 1 || depth > GT_PR_MAX_DEPTH) return gt_fail(GT_ERR_USAGE, "depth %d out of 1..%d", depth, GT_PR_MAX_DEPTH);
    if (n == 0 || n > UINT32_MAX / 2) return gt_fail(GT_ERR_DATA, "bad point count %zu", n);
    void *bufs[5 * (GT_PR_MAX_DEPTH + 1)];
    memset(bufs, 0, sizeof bufs);
    if (full_depth < 0) full_depth = 0;
    if (full_depth > depth) full_depth = depth;
    if (full_depth > GT_PR_MAX_FULL_DEPTH)
        return gt_fail(GT_ERR_USAGE, "full depth %d out of 0..%d", full_depth, GT_PR_MAX_FULL_DEPTH);
    gt_status st = build(d_u, n, depth, full_depth, d, h, bufs, tm);
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) gt_cu_free(bufs[i]);
    if (st != GT_OK) gt_pr_dev_octree_free(d);
    return st;
}

gt_status gt_pr_dev_octree_download(const gt_pr_dev_octree *d, gt_pr_octree *h)
{
    size_t t = h->nnodes, n = h->npts;
    h->key = (uint64_t *)gt_malloc_array(t, sizeof(uint64_t), "octree");
    h->parent = (int32_t *)gt_malloc_array(t, sizeof(int32_t), "octree");
    h->child = (int32_t *)gt_malloc_array(t, sizeof(int32_t), "octree");
    h->nbr = (int32_t *)gt_malloc_array(t, 27 * sizeof(int32_t), "octree");
    h->pt_start = (uint32_t *)gt_malloc_array(t, sizeof(uint32_t), "octree");
    h->pt_count = (uint32_t *)gt_malloc_array(t, sizeof(uint32_t), "octree");
    h->order = (uint32_t *)gt_malloc_array(n, sizeof(uint32_t), "octree");
    if (!h->key || !h->parent || !h->child || !h->nbr || !h->pt_start || !h->pt_count || !h->order)
        return GT_ERR_RUNTIME;
    GT_TRY(gt_cu_memcpy_d2h(h->key, d->key, t * sizeof(uint64_t), NULL));
    GT_TRY(gt_cu_memcpy_d2h(h->parent, d->parent, t * sizeof(int32_t), NULL));
    GT_TRY(gt_cu_memcpy_d2h(h->child, d->child, t * sizeof(int32_t), NULL));
    GT_TRY(gt_cu_memcpy_d2h(h->nbr, d->nbr, t * 27 * sizeof(int32_t), NULL));
    GT_TRY(gt_cu_memcpy_d2h(h->pt_start, d->pt_start, t * sizeof(uint32_t), NULL));
    GT_TRY(gt_cu_memcpy_d2h(h->pt_count, d->pt_count, t * sizeof(uint32_t), NULL));
    GT_TRY(gt_cu_memcpy_d2h(h->order, d->order, n * sizeof(uint32_t), NULL));
    GT_CU(cudaDeviceSynchronize());
    return GT_OK;
}

extern "C" gt_status gt_pr_octree_build_cuda(const float *u, size_t n, int depth, int full_depth, gt_pr_octree *o,
                                             gt_timings *tm)
{
    memset(o, 0, sizeof *o);
    float *d_u = NULL;
    GT_TRY(gt_cu_malloc((void **)&d_u, n * 3 * sizeof(float) + 4, "points"));
    gt_status st = gt_cu_memcpy_h2d(d_u, u, n * 3 * sizeof(float), NULL);
    gt_pr_dev_octree d;
    memset(&d, 0, sizeof d);
    if (st == GT_OK) st = gt_pr_dev_octree_build(d_u, n, depth, full_depth, &d, o, tm);
    if (st == GT_OK) st = gt_pr_dev_octree_download(&d, o);
    gt_pr_dev_octree_free(&d);
    gt_cu_free(d_u);
    if (st != GT_OK) gt_pr_octree_free(o);
    return st;
}
