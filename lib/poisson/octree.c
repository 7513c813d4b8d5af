/* Octree of the Poisson reconstruction, CPU reference (Zhou et al. 2011):
 * Morton keys, sort, unique leaves, widened to every depth-D cell within 2
 * cells of one with points (pr_morton.h, gt_pr_widen_key), parents by
 * dropping 3 bits, all 8 siblings allocated per occupied parent (flag +
 * scan), each level above the full depth widened the same way, every cell
 * of the levels up to the full depth, links, and neighbours through
 * LUTparent/LUTchild from the parent's 27 neighbours, level by level. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "poisson/poisson.h"
#include "poisson/pr_bspline.h"
#include "poisson/pr_morton.h"
#include "poisson/pr_sort.h"

uint8_t gt_pr_lut_parent[8][27];
uint8_t gt_pr_lut_child[8][27];
uint8_t gt_pr_lut_parent125[8][125];
uint8_t gt_pr_lut_child125[8][125];

/* Definition: child c has bit b_a on axis a. Moving by d along the axis gives
 * t = b_a + d; the parent neighbour moves by floor(t/2) and the child bit is
 * t mod 2. Parent offsets are always in -1..1 for |d| <= 2. */
void gt_pr_luts_init(void)
{
    static int done = 0;
    if (done) return;
    for (int c = 0; c < 8; c++) {
        for (int r = 1; r <= 2; r++) {
            int w = 2 * r + 1, cnt = w * w * w;
            for (int i = 0; i < cnt; i++) {
                int d[3] = {i % w - r, (i / w) % w - r, i / (w * w) - r};
                int pidx = 0, cidx = 0, mul = 1;
                for (int a = 0; a < 3; a++) {
                    int t = ((c >> a) & 1) + d[a];
                    int po = t >= 0 ? t / 2 : -((1 - t) / 2); /* floor(t/2) */
                    int cb = t - 2 * po;
                    pidx += (po + 1) * mul;
                    mul *= 3;
                    cidx |= cb << a;
                }
                if (r == 1) {
                    gt_pr_lut_parent[c][i] = (uint8_t)pidx;
                    gt_pr_lut_child[c][i] = (uint8_t)cidx;
                } else {
                    gt_pr_lut_parent125[c][i] = (uint8_t)pidx;
                    gt_pr_lut_child125[c][i] = (uint8_t)cidx;
                }
            }
        }
    }
    done = 1;
}

uint64_t gt_pr_morton(uint32_t x, uint32_t y, uint32_t z)
{
    return gt_pr_key(x, y, z);
}
void gt_pr_demorton(uint64_t k, uint32_t *x, uint32_t *y, uint32_t *z)
{
    gt_pr_key_xyz(k, x, y, z);
}

void gt_pr_octree_free(gt_pr_octree *o)
{
    free(o->key); free(o->parent); free(o->child); free(o->nbr);
    free(o->pt_start); free(o->pt_count); free(o->order);
    memset(o, 0, sizeof *o);
}

/* The occupied cells of one level, in key order: point ranges, and the
 * block of their 8 children in the level below (-1: none). */
typedef struct {
    uint64_t *key;
    uint32_t *st, *cn;
    int32_t *blk;
    size_t n;
} occ_list;

static void occ_free(occ_list *q)
{
    free(q->key); free(q->st); free(q->cn); free(q->blk);
    memset(q, 0, sizeof *q);
}

static gt_status occ_alloc(occ_list *q, size_t cap)
{
    memset(q, 0, sizeof *q);
    q->key = gt_malloc_array(cap, sizeof *q->key, "octree keys");
    q->st = gt_malloc_array(cap, sizeof *q->st, "octree ranges");
    q->cn = gt_malloc_array(cap, sizeof *q->cn, "octree ranges");
    q->blk = gt_malloc_array(cap, sizeof *q->blk, "octree links");
    if (q->key && q->st && q->cn && q->blk) return GT_OK;
    occ_free(q);
    return GT_ERR_RUNTIME;
}

/* q united with add[0..nadd) (sorted; repeats and keys of q allowed, keys >=
 * lim dropped): an added cell gets the empty range at its lower bound in the
 * sorted points and no children. */
static gt_status occ_unite(occ_list *q, const uint64_t *add, size_t nadd, uint64_t lim, uint32_t npts)
{
    occ_list r;
    if (occ_alloc(&r, q->n + nadd) != GT_OK) return GT_ERR_RUNTIME;
    size_t m = 0, i = 0, j = 0;
    while (nadd > 0 && add[nadd - 1] >= lim) nadd--;
    while (i < q->n || j < nadd) {
        if (j < nadd && (i >= q->n || add[j] < q->key[i])) {
            if (m == 0 || r.key[m - 1] != add[j]) {
                r.key[m] = add[j];
                r.st[m] = i < q->n ? q->st[i] : npts;
                r.cn[m] = 0;
                r.blk[m] = -1;
                m++;
            }
            j++;
        } else {
            r.key[m] = q->key[i]; r.st[m] = q->st[i]; r.cn[m] = q->cn[i]; r.blk[m] = q->blk[i];
            m++; i++;
        }
    }
    r.n = m;
    occ_free(q);
    *q = r;
    return GT_OK;
}

static int first_of_parent(const occ_list *q, size_t k)
{
    return k == 0 || (q->key[k] >> 3) != (q->key[k - 1] >> 3);
}

/* The depth-D occupied cells widened (gt_pr_widen_key): child 0 of the 27
 * neighbours of each occupied cell's parent joins them. */
static gt_status occ_widen(occ_list *q, int depth, uint32_t npts)
{
    size_t npar = 0;
    for (size_t k = 0; k < q->n; k++) npar += first_of_parent(q, k);
    uint64_t *cand = gt_malloc_array(npar, 27 * sizeof *cand, "octree keys");
    uint64_t *tmp = gt_malloc_array(npar, 27 * sizeof *tmp, "octree keys");
    if (!cand || !tmp) {
        free(cand);
        free(tmp);
        return GT_ERR_RUNTIME;
    }
    size_t m = 0;
    for (size_t k = 0; k < q->n; k++)
        if (first_of_parent(q, k))
            for (int i = 0; i < 27; i++) cand[m++] = gt_pr_widen_key(q->key[k] >> 3, depth - 1, i);
    gt_pr_radix_u64(cand, tmp, m, 3 * depth + 1); /* keys of level depth, and GT_PR_NO_KEY(depth) */
    free(tmp);
    gt_status st = occ_unite(q, cand, m, GT_PR_NO_KEY(depth), npts);
    free(cand);
    return st;
}

/* Every cell of level l joins that level's occupied cells (the full depth). */
static gt_status occ_complete(occ_list *q, int l, uint32_t npts)
{
    size_t all = (size_t)1 << (3 * l);
    uint64_t *keys = gt_malloc_array(all, sizeof *keys, "octree keys");
    if (!keys) return GT_ERR_RUNTIME;
    for (size_t k = 0; k < all; k++) keys[k] = k;
    gt_status st = occ_unite(q, keys, all, (uint64_t)all, npts);
    free(keys);
    return st;
}

gt_status gt_pr_octree_build_cpu(const float *u, size_t n, int depth, int full_depth, gt_pr_octree *o)
{
    memset(o, 0, sizeof *o);
    if (depth < 1 || depth > GT_PR_MAX_DEPTH) return gt_fail(GT_ERR_USAGE, "depth %d out of 1..%d", depth, GT_PR_MAX_DEPTH);
    if (n == 0 || n > UINT32_MAX) return gt_fail(GT_ERR_DATA, "bad point count %zu", n);
    if (full_depth < 0) full_depth = 0;
    if (full_depth > depth) full_depth = depth;
    if (full_depth > GT_PR_MAX_FULL_DEPTH)
        return gt_fail(GT_ERR_USAGE, "full depth %d out of 0..%d", full_depth, GT_PR_MAX_FULL_DEPTH);
    gt_pr_luts_init();
    o->depth = depth;
    o->npts = n;
    const uint32_t res = 1u << depth;
    gt_pr_kv *kv = gt_malloc_array(n, sizeof *kv, "point keys");
    gt_pr_kv *kvt = gt_malloc_array(n, sizeof *kvt, "point keys");
    if (!kv || !kvt) {
        free(kv);
        free(kvt);
        return GT_ERR_RUNTIME;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint32_t c[3];
        for (int a = 0; a < 3; a++) {
            double v = (double)u[3 * i + a] * res;
            c[a] = v <= 0 ? 0 : v >= res ? res - 1 : (uint32_t)v;
        }
        kv[i].k = gt_pr_morton(c[0], c[1], c[2]);
        kv[i].v = i;
    }
    /* stable: points of one cell stay in input order */
    gt_pr_radix_kv(kv, kvt, n, 3 * depth);
    free(kvt);
    o->order = gt_malloc_array(n, sizeof *o->order, "point order");
    /* per level arrays, built bottom-up */
    uint64_t *lkey[GT_PR_MAX_DEPTH + 1] = {0};
    uint32_t *lst[GT_PR_MAX_DEPTH + 1] = {0}, *lcn[GT_PR_MAX_DEPTH + 1] = {0};
    int32_t *lchild[GT_PR_MAX_DEPTH + 1] = {0}; /* child index within level l+1 */
    size_t lcount[GT_PR_MAX_DEPTH + 1] = {0};
    occ_list occ; /* the occupied cells of the current level */
    gt_status st = occ_alloc(&occ, n);
    if (!o->order || st != GT_OK) { st = GT_ERR_RUNTIME; goto done; }
    for (size_t i = 0; i < n; i++) {
        o->order[i] = (uint32_t)kv[i].v;
        if (i == 0 || kv[i].k != kv[i - 1].k) {
            occ.key[occ.n] = kv[i].k;
            occ.st[occ.n] = (uint32_t)i;
            occ.cn[occ.n] = 0;
            occ.blk[occ.n] = -1;
            occ.n++;
        }
        occ.cn[occ.n - 1]++;
    }
    if ((st = occ_widen(&occ, depth, (uint32_t)n)) != GT_OK) goto done;
    for (int l = depth; l >= 1; l--) {
        /* every level between the full depth and D widened as D is: each
         * sample's 27 neighbours at the level where it splats are nodes */
        if (l < depth && l > full_depth && (st = occ_widen(&occ, l, (uint32_t)n)) != GT_OK) goto done;
        if (l == full_depth && (st = occ_complete(&occ, l, (uint32_t)n)) != GT_OK) goto done;
        /* the parents, numbered in key order: each gets a block of 8 nodes */
        size_t npar = 0;
        for (size_t k = 0; k < occ.n; k++) npar += first_of_parent(&occ, k);
        size_t nn = 8 * npar;
        lcount[l] = nn;
        lkey[l] = gt_malloc_array(nn, sizeof(uint64_t), "node keys");
        lst[l] = gt_calloc(nn, sizeof(uint32_t), "node ranges");
        lcn[l] = gt_calloc(nn, sizeof(uint32_t), "node ranges");
        lchild[l] = gt_malloc_array(nn, sizeof(int32_t), "child links");
        if (!lkey[l] || !lst[l] || !lcn[l] || !lchild[l]) { st = GT_ERR_RUNTIME; goto done; }
        for (size_t k = 0; k < nn; k++) lchild[l][k] = -1;
        /* scatter, and in place (m <= k) the next level's occupied cells: the
         * parents with merged ranges, owning block m - 1 of this level */
        size_t m = 0;
        uint64_t prev = 0;
        for (size_t k = 0; k < occ.n; k++) {
            uint64_t key = occ.key[k], pk = key >> 3;
            uint32_t st0 = occ.st[k], cn = occ.cn[k];
            int32_t blk = occ.blk[k];
            if (k == 0 || pk != prev) {
                for (int c = 0; c < 8; c++) lkey[l][8 * m + c] = pk << 3 | (uint64_t)c;
                occ.key[m] = pk;
                occ.st[m] = st0;
                occ.cn[m] = 0;
                occ.blk[m] = (int32_t)m;
                m++;
            }
            prev = pk;
            size_t pos = 8 * (m - 1) + (key & 7);
            lst[l][pos] = st0;
            lcn[l][pos] = cn;
            lchild[l][pos] = blk >= 0 ? 8 * blk : -1;
            occ.cn[m - 1] += cn;
        }
        occ.n = m;
    }
    /* level 0: the root */
    lcount[0] = 1;
    lkey[0] = gt_malloc(sizeof(uint64_t), "root");
    lst[0] = gt_malloc(sizeof(uint32_t), "root");
    lcn[0] = gt_malloc(sizeof(uint32_t), "root");
    lchild[0] = gt_malloc(sizeof(int32_t), "root");
    if (!lkey[0] || !lst[0] || !lcn[0] || !lchild[0]) { st = GT_ERR_RUNTIME; goto done; }
    lkey[0][0] = 0; lst[0][0] = 0; lcn[0][0] = (uint32_t)n; lchild[0][0] = 0;

    /* concatenate levels top-down */
    size_t total = 0;
    for (int l = 0; l <= depth; l++) { o->level_start[l] = total; total += lcount[l]; }
    o->level_start[depth + 1] = total;
    if (total > INT32_MAX) { st = gt_fail(GT_ERR_RUNTIME, "octree too large (%zu nodes)", total); goto done; }
    o->nnodes = total;
    o->key = gt_malloc_array(total, sizeof *o->key, "octree");
    o->parent = gt_malloc_array(total, sizeof *o->parent, "octree");
    o->child = gt_malloc_array(total, sizeof *o->child, "octree");
    o->nbr = gt_malloc_array(total, 27 * sizeof *o->nbr, "octree neighbours");
    o->pt_start = gt_malloc_array(total, sizeof *o->pt_start, "octree");
    o->pt_count = gt_malloc_array(total, sizeof *o->pt_count, "octree");
    if (!o->key || !o->parent || !o->child || !o->nbr || !o->pt_start || !o->pt_count) { st = GT_ERR_RUNTIME; goto done; }
    for (int l = 0; l <= depth; l++) {
        size_t s0 = o->level_start[l];
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < lcount[l]; k++) {
            o->key[s0 + k] = lkey[l][k];
            o->pt_start[s0 + k] = lst[l][k];
            o->pt_count[s0 + k] = lcn[l][k];
            int32_t ch = lchild[l][k];
            o->child[s0 + k] = (l < depth && ch >= 0) ? (int32_t)(o->level_start[l + 1] + (size_t)ch) : -1;
        }
    }
    o->parent[0] = -1;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < o->level_start[depth]; i++)
        if (o->child[i] >= 0)
            for (int c = 0; c < 8; c++) o->parent[o->child[i] + c] = (int32_t)i;
    /* neighbours, level by level from the parent's */
    for (int i = 0; i < 27; i++) o->nbr[i] = -1;
    o->nbr[13] = 0;
    for (int l = 1; l <= depth; l++) {
#pragma omp parallel for schedule(static)
        for (size_t v = o->level_start[l]; v < o->level_start[l + 1]; v++) {
            int32_t p = o->parent[v];
            int c = (int)(o->key[v] & 7);
            for (int i = 0; i < 27; i++)
                o->nbr[27 * v + i] = gt_pr_nbr_rule(o->nbr, o->child, p, gt_pr_lut_parent[c], gt_pr_lut_child[c], i);
        }
    }
done:
    free(kv);
    occ_free(&occ);
    for (int l = 0; l <= GT_PR_MAX_DEPTH; l++) { free(lkey[l]); free(lst[l]); free(lcn[l]); free(lchild[l]); }
    if (st != GT_OK) gt_pr_octree_free(o);
    return st;
}

int32_t gt_pr_find(const gt_pr_octree *o, int level, int64_t x, int64_t y, int64_t z)
{
    return gt_pr_find_key(o->key, o->level_start, level, x, y, z);
}

int32_t gt_pr_nbr125(const gt_pr_octree *o, int32_t node, int i125)
{
    if (node == 0) return i125 == 62 ? 0 : -1;
    int32_t p = o->parent[node];
    int c = (int)(o->key[node] & 7);
    return gt_pr_nbr_rule(o->nbr, o->child, p, gt_pr_lut_parent125[c], gt_pr_lut_child125[c], i125);
}
