/* Exact k nearest neighbours through a k-d tree (gs_knn.h).
 *
 * The tree is implicit: node 0 covers pt[0, n); node j's children are
 * 2j+1 (the first half of its range, [lo, mid) with mid = lo + (hi-lo)/2)
 * and 2j+2 ([mid, hi)); every node above depth `depth` is split, every
 * node at that depth is a leaf of at most LEAF points. Each node splits
 * its cell (the root's: the bounding box) on the cell's longest axis at the
 * median point. After the build,
 * the points of [lo, mid) have coordinate <= split[j] on axis dim[j] and
 * those of [mid, hi) >= it, so a subtree on the far side of a query lies at
 * least |q - split| away from it. */
#include "gs/gs_knn.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

#define LEAF 8

/* A point of the tree: its coordinates beside its index, so that the
 * partitions move them together and a leaf's points lie side by side. */
typedef struct kpt {
    float x[3];
    uint32_t i;
} kpt;

typedef struct tree {
    kpt *pt;
    float *split;
    unsigned char *dim;
    int depth;
} tree;

/* Reorder pt[lo, hi) so that pt[m] holds the point of rank m - lo along
 * axis d, smaller or equal ones before it, larger or equal after (Hoare's
 * selection with a median-of-three pivot, which always shrinks a range of
 * 3 or more; short ranges sorted). */
static void select_nth(kpt *a, size_t lo, size_t hi, size_t m, int d)
{
    while (hi - lo > 16) {
        size_t mid = lo + (hi - lo) / 2;
        float x = a[lo].x[d], y = a[mid].x[d], z = a[hi - 1].x[d];
        float pv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = lo, j = hi - 1;
        for (;;) {
            while (a[i].x[d] < pv) i++;
            while (a[j].x[d] > pv) j--;
            if (i >= j) break;
            kpt s = a[i];
            a[i] = a[j], a[j] = s;
            i++, j--;
        }
        /* [lo, j] <= pv <= [j+1, hi) */
        if (m <= j) hi = j + 1;
        else lo = j + 1;
    }
    for (size_t i = lo + 1; i < hi; i++) { /* a short range: insertion sort */
        kpt v = a[i];
        size_t j = i;
        while (j > lo && a[j - 1].x[d] > v.x[d]) a[j] = a[j - 1], j--;
        a[j] = v;
    }
}

/* Split node `node` (range [lo, hi), inside the box lo_box..hi_box) on the
 * box's longest axis, and its children below it. */
static void build(tree *t, size_t node, size_t lo, size_t hi, int level, const float bmin[3], const float bmax[3])
{
    if (level == t->depth) return;
    int d = 0;
    for (int e = 1; e < 3; e++)
        if ((double)bmax[e] - bmin[e] > (double)bmax[d] - bmin[d]) d = e;
    size_t mid = lo + (hi - lo) / 2;
    if (hi > lo) select_nth(t->pt, lo, hi, mid, d);
    float sv = mid < hi ? t->pt[mid].x[d] : bmin[d];
    t->dim[node] = (unsigned char)d;
    t->split[node] = sv;
    float lmax[3] = {bmax[0], bmax[1], bmax[2]}, rmin[3] = {bmin[0], bmin[1], bmin[2]};
    lmax[d] = sv, rmin[d] = sv;
#pragma omp task if (hi - lo > 65536)
    build(t, 2 * node + 1, lo, mid, level + 1, bmin, lmax);
    build(t, 2 * node + 2, mid, hi, level + 1, rmin, bmax);
#pragma omp taskwait
}

typedef struct best {
    int k, have;
    double d[GT_GS_KNN_MAX_K];
} best;

static double worst(const best *b)
{
    return b->have < b->k ? DBL_MAX : b->d[b->k - 1];
}

static void offer(best *b, double d)
{
    if (b->have == b->k && d >= b->d[b->k - 1]) return;
    int i = b->have < b->k ? b->have++ : b->k - 1;
    while (i > 0 && b->d[i - 1] > d) b->d[i] = b->d[i - 1], i--;
    b->d[i] = d;
}

/* The subtree of `node` for query q at qp; rd: the squared distance from
 * qp to the node's cell, off[d]: qp's offset from the cell along axis d
 * (0 inside its extent), so that a far child's distance updates in O(1)
 * (Arya and Mount's incremental distance). */
static void search(const tree *t, uint32_t q, const double qp[3], size_t node, size_t lo, size_t hi, int level,
                   double rd, double off[3], best *b)
{
    if (level == t->depth) {
        for (size_t p = lo; p < hi; p++) {
            const kpt *x = &t->pt[p];
            if (x->i == q) continue;
            double dx = qp[0] - x->x[0], dy = qp[1] - x->x[1], dz = qp[2] - x->x[2];
            offer(b, dx * dx + dy * dy + dz * dz);
        }
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    int d = t->dim[node];
    double cut = qp[d] - (double)t->split[node];
    size_t near = cut < 0 ? 2 * node + 1 : 2 * node + 2, far = cut < 0 ? 2 * node + 2 : 2 * node + 1;
    size_t nlo = cut < 0 ? lo : mid, nhi = cut < 0 ? mid : hi, flo = cut < 0 ? mid : lo, fhi = cut < 0 ? hi : mid;
    search(t, q, qp, near, nlo, nhi, level + 1, rd, off, b);
    double old = off[d];
    double frd = rd - old * old + cut * cut;
    if (frd < worst(b)) {
        off[d] = cut;
        search(t, q, qp, far, flo, fhi, level + 1, frd, off, b);
        off[d] = old;
    }
}

gt_status gt_gs_knn_mean_sq(const float *xyz, size_t n, int k, float *out)
{
    if (k < 1 || k > GT_GS_KNN_MAX_K)
        return gt_fail(GT_ERR_USAGE, "k nearest neighbours: k = %d outside 1..%d", k, GT_GS_KNN_MAX_K);
    if (n >= UINT32_MAX) return gt_fail(GT_ERR_USAGE, "k nearest neighbours: %zu points, at most 2^32 - 2", n);
    if (n == 0) return GT_OK;
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(xyz[i]))
            return gt_fail(GT_ERR_DATA, "k nearest neighbours: point %zu is not finite", i / 3);
    tree t = {0};
    while ((n + ((size_t)1 << t.depth) - 1) >> t.depth > LEAF) t.depth++;
    size_t inner = ((size_t)1 << t.depth) - 1;
    t.pt = gt_malloc_array(n, sizeof *t.pt, "nearest-neighbour tree");
    t.split = gt_malloc_array(inner ? inner : 1, sizeof *t.split, "nearest-neighbour tree");
    t.dim = gt_malloc_array(inner ? inner : 1, 1, "nearest-neighbour tree");
    if (!t.pt || !t.split || !t.dim) {
        free(t.pt), free(t.split), free(t.dim);
        return GT_ERR_RUNTIME;
    }
    float bmin[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, bmax[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
    for (size_t i = 0; i < n; i++) {
        kpt *p = &t.pt[i];
        for (int d = 0; d < 3; d++) {
            p->x[d] = xyz[3 * i + (size_t)d];
            bmin[d] = p->x[d] < bmin[d] ? p->x[d] : bmin[d], bmax[d] = p->x[d] > bmax[d] ? p->x[d] : bmax[d];
        }
        p->i = (uint32_t)i;
    }
#pragma omp parallel
#pragma omp single
    build(&t, 0, 0, n, 0, bmin, bmax);
    const int kk = (size_t)k < n ? k : (int)(n - 1);
#pragma omp parallel for schedule(dynamic, 1024)
    for (size_t p = 0; p < n; p++) {
        const kpt *x = &t.pt[p];
        double qp[3] = {x->x[0], x->x[1], x->x[2]};
        best b = {.k = kk, .have = 0};
        double s = 0;
        if (kk > 0) {
            double off[3] = {0, 0, 0};
            search(&t, x->i, qp, 0, 0, n, 0, 0.0, off, &b);
            for (int i = 0; i < b.have; i++) s += b.d[i];
            s /= b.have;
        }
        out[x->i] = (float)s;
    }
    free(t.pt), free(t.split), free(t.dim);
    return GT_OK;
}
