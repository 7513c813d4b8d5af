/* Octree of the Poisson reconstruction, CPU reference (Zhou et al. 2011):
 * Morton keys, sort, unique leaves, parents by dropping 3 bits, all 8 siblings
 * allocated per occupied parent (flag + scan), links, and neighbours through
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

typedef struct { uint64_t key; uint32_t idx; } kv_t;
static int kv_cmp(const void *a, const void *b)
{
    const kv_t *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

void gt_pr_octree_free(gt_pr_octree *o)
{
    free(o->key); free(o->parent); free(o->child); free(o->nbr);
    free(o->pt_start); free(o->pt_count); free(o->order);
    memset(o, 0, sizeof *o);
}

gt_status gt_pr_octree_build_cpu(const float *u, size_t n, int depth, gt_pr_octree *o)
{
    memset(o, 0, sizeof *o);
    if (depth < 1 || depth > GT_PR_MAX_DEPTH) return gt_fail(GT_ERR_USAGE, "depth %d out of 1..%d", depth, GT_PR_MAX_DEPTH);
    if (n == 0 || n > UINT32_MAX) return gt_fail(GT_ERR_DATA, "bad point count %zu", n);
    gt_pr_luts_init();
    o->depth = depth;
    o->npts = n;
    const uint32_t res = 1u << depth;
    kv_t *kv = gt_malloc_array(n, sizeof *kv, "point keys");
    if (!kv) return GT_ERR_RUNTIME;
    for (size_t i = 0; i < n; i++) {
        uint32_t c[3];
        for (int a = 0; a < 3; a++) {
            double v = (double)u[3 * i + a] * res;
            c[a] = v <= 0 ? 0 : v >= res ? res - 1 : (uint32_t)v;
        }
        kv[i].key = gt_pr_morton(c[0], c[1], c[2]);
        kv[i].idx = (uint32_t)i;
    }
    qsort(kv, n, sizeof *kv, kv_cmp);
    o->order = gt_malloc_array(n, sizeof *o->order, "point order");
    /* unique occupied keys at the current level with point ranges */
    uint64_t *occ = gt_malloc_array(n, sizeof *occ, "keys");
    uint32_t *ost = gt_malloc_array(n, sizeof *ost, "ranges");
    uint32_t *ocn = gt_malloc_array(n, sizeof *ocn, "ranges");
    /* per level arrays, built bottom-up */
    uint64_t *lkey[GT_PR_MAX_DEPTH + 1] = {0};
    uint32_t *lst[GT_PR_MAX_DEPTH + 1] = {0}, *lcn[GT_PR_MAX_DEPTH + 1] = {0};
    int32_t *lchild[GT_PR_MAX_DEPTH + 1] = {0}; /* child index within level l+1 */
    size_t lcount[GT_PR_MAX_DEPTH + 1] = {0};
    gt_status st = GT_OK;
    uint32_t *occ_pos = NULL; /* positions of level l's occupied keys in its node array */
    if (!o->order || !occ || !ost || !ocn) { st = GT_ERR_RUNTIME; goto done; }
    size_t nocc = 0;
    for (size_t i = 0; i < n; i++) {
        o->order[i] = kv[i].idx;
        if (i == 0 || kv[i].key != kv[i - 1].key) {
            occ[nocc] = kv[i].key;
            ost[nocc] = (uint32_t)i;
            ocn[nocc] = 0;
            nocc++;
        }
        ocn[nocc - 1]++;
    }
    /* positions of the occupied keys of level l within level l's node array */
    for (int l = depth; l >= 1; l--) {
        /* flag where the parent differs, scan -> parent ordinal */
        size_t npar = 0;
        uint32_t *pid = gt_malloc_array(nocc, sizeof *pid, "parent ids");
        if (!pid) { st = GT_ERR_RUNTIME; goto done; }
        for (size_t k = 0; k < nocc; k++) {
            if (k == 0 || (occ[k] >> 3) != (occ[k - 1] >> 3)) npar++;
            pid[k] = (uint32_t)(npar - 1);
        }
        size_t nn = 8 * npar;
        lcount[l] = nn;
        lkey[l] = gt_malloc_array(nn, sizeof(uint64_t), "node keys");
        lst[l] = gt_calloc(nn, sizeof(uint32_t), "node ranges");
        lcn[l] = gt_calloc(nn, sizeof(uint32_t), "node ranges");
        lchild[l] = gt_malloc_array(nn, sizeof(int32_t), "child links");
        free(occ_pos);
        occ_pos = gt_malloc_array(nocc, sizeof *occ_pos, "positions");
        if (!lkey[l] || !lst[l] || !lcn[l] || !lchild[l] || !occ_pos) { free(pid); st = GT_ERR_RUNTIME; goto done; }
        for (size_t k = 0; k < nn; k++) lchild[l][k] = -1;
        for (size_t k = 0; k < nocc; k++) {
            uint64_t pk = occ[k] >> 3;
            size_t base = 8 * (size_t)pid[k];
            for (int c = 0; c < 8; c++) lkey[l][base + c] = pk << 3 | (uint64_t)c;
            size_t pos = base + (occ[k] & 7);
            occ_pos[k] = (uint32_t)pos;
            lst[l][pos] = ost[k];
            lcn[l][pos] = ocn[k];
        }
        /* the occupied keys of level l were children of level l+1 blocks: link
         * (positions computed for level l+1's parents were the ordinals) */
        if (l < depth) {
            /* the previous occ (level l) entries k own level l+1 block k */
            for (size_t k = 0; k < nocc; k++) lchild[l][occ_pos[k]] = (int32_t)(8 * k);
        }
        /* next level's occupied keys: the unique parents with merged ranges */
        size_t m = 0;
        for (size_t k = 0; k < nocc; k++) { /* in place: m <= k */
            uint32_t cnt = ocn[k];
            if (k == 0 || pid[k] != pid[k - 1]) {
                occ[m] = occ[k] >> 3;
                ost[m] = ost[k];
                ocn[m] = 0;
                m++;
            }
            ocn[m - 1] += cnt;
        }
        nocc = m;
        free(pid);
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
        for (size_t k = 0; k < lcount[l]; k++) {
            o->key[s0 + k] = lkey[l][k];
            o->pt_start[s0 + k] = lst[l][k];
            o->pt_count[s0 + k] = lcn[l][k];
            int32_t ch = lchild[l][k];
            o->child[s0 + k] = (l < depth && ch >= 0) ? (int32_t)(o->level_start[l + 1] + (size_t)ch) : -1;
        }
    }
    o->parent[0] = -1;
    for (size_t i = 0; i < o->level_start[depth]; i++)
        if (o->child[i] >= 0)
            for (int c = 0; c < 8; c++) o->parent[o->child[i] + c] = (int32_t)i;
    /* neighbours, level by level from the parent's */
    for (int i = 0; i < 27; i++) o->nbr[i] = -1;
    o->nbr[13] = 0;
    for (int l = 1; l <= depth; l++) {
        for (size_t v = o->level_start[l]; v < o->level_start[l + 1]; v++) {
            int32_t p = o->parent[v];
            int c = (int)(o->key[v] & 7);
            for (int i = 0; i < 27; i++)
                o->nbr[27 * v + i] = gt_pr_nbr_rule(o->nbr, o->child, p, gt_pr_lut_parent[c], gt_pr_lut_child[c], i);
        }
    }
done:
    free(occ_pos);
    free(kv); free(occ); free(ost); free(ocn);
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
