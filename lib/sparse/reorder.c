/* Reverse Cuthill-McKee and the symmetric permutation of a CSR matrix (see
 * reorder.h): the CPU reference of --reorder, applied on the host before the
 * solve (its time is the "reorder" stage). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/reorder.h"

void gt_sp_locality(const gt_csr *a, gt_locality *out)
{
    int64_t bw = 0, near = 0;
    double sum = 0;
#pragma omp parallel for reduction(max : bw) reduction(+ : near, sum) schedule(static)
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int64_t d = a->col[p] - i;
            if (d < 0) d = -d;
            if (d > bw) bw = d;
            sum += (double)d;
            near += d <= GT_REORDER_WINDOW;
        }
    out->bandwidth = bw;
    out->mean_dist = a->nnz ? sum / (double)a->nnz : 0;
    out->near = a->nnz ? (double)near / (double)a->nnz : 1;
}

bool gt_reorder_pays(const gt_csr *a, const gt_locality *l, char *why, size_t why_len)
{
    if (a->nrows != a->ncols) {
        snprintf(why, why_len, "the matrix is not square");
        return false;
    }
    if (a->ncols * 8 <= (1 << 20)) {
        snprintf(why, why_len, "x (%lld KB) fits in cache in any order", (long long)(a->ncols * 8 / 1024));
        return false;
    }
    if (l->near >= 0.5) {
        snprintf(why, why_len, "%.0f%% of the entries already lie within %d columns of the diagonal",
                 100 * l->near, GT_REORDER_WINDOW);
        return false;
    }
    snprintf(why, why_len, "only %.1f%% of the entries lie within %d columns of the diagonal (mean |i-j| %.0f)",
             100 * l->near, GT_REORDER_WINDOW, l->mean_dist);
    return true;
}

/* The adjacency of A + A^T (CSR pattern, int64 ptr): A's own arrays when A
   is symmetric (the diagonal entry is skipped by the searches: a node is
   marked before its list is read), else a built copy without the diagonal. */
typedef struct graph {
    int64_t n;
    int64_t *ptr;
    int32_t *adj;
    int32_t *deg; /* neighbours other than the node, compact for the searches' random reads */
    bool borrowed; /* ptr and adj are A's */
} graph;

static void graph_free(graph *g)
{
    if (!g->borrowed) free(g->ptr), free(g->adj);
    free(g->deg);
    memset(g, 0, sizeof *g);
}

static gt_status graph_build(const gt_csr *a, bool symmetric, graph *g)
{
    int64_t n = a->nrows;
    memset(g, 0, sizeof *g);
    g->n = n;
    if (symmetric) {
        g->borrowed = true;
        g->ptr = a->ptr, g->adj = a->col;
        g->deg = malloc(((size_t)n + 1) * sizeof *g->deg);
        if (!g->deg) return gt_fail(GT_ERR_RUNTIME, "out of memory");
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            int32_t d = 0;
            for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) d += a->col[p] != i;
            g->deg[i] = d;
        }
        return GT_OK;
    }
    g->ptr = calloc((size_t)n + 1, sizeof *g->ptr);
    if (!g->ptr) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    size_t cap = (size_t)a->nnz * (symmetric ? 1 : 2);
    g->adj = malloc((cap ? cap : 1) * sizeof *g->adj);
    if (!g->adj) {
        graph_free(g);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    /* counts: row i gets its off-diagonal columns, and (unsymmetric) i in row j for each a_ij */
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int32_t j = a->col[p];
            if (j == i) continue;
            g->ptr[i + 1]++;
            if (!symmetric) g->ptr[j + 1]++;
        }
    for (int64_t i = 0; i < n; i++) g->ptr[i + 1] += g->ptr[i];
    int64_t *next = malloc(((size_t)n + 1) * sizeof *next);
    if (!next) {
        graph_free(g);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    memcpy(next, g->ptr, ((size_t)n + 1) * sizeof *next);
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int32_t j = a->col[p];
            if (j == i) continue;
            g->adj[next[i]++] = j;
            if (!symmetric) g->adj[next[j]++] = (int32_t)i;
        }
    free(next);
    g->deg = malloc(((size_t)n + 1) * sizeof *g->deg);
    if (!g->deg) {
        graph_free(g);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    if (!symmetric) { /* sort each list and drop the duplicates of a_ij, a_ji both present */
        int64_t w = 0, s = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t e = g->ptr[i + 1];
            for (int64_t p = s + 1; p < e; p++) {
                int32_t c = g->adj[p];
                int64_t q = p - 1;
                while (q >= s && g->adj[q] > c) g->adj[q + 1] = g->adj[q], q--;
                g->adj[q + 1] = c;
            }
            int64_t w0 = w;
            for (int64_t p = s; p < e; p++)
                if (w == w0 || g->adj[w - 1] != g->adj[p]) g->adj[w++] = g->adj[p];
            s = e;
            g->ptr[i + 1] = w;
        }
    }
    for (int64_t i = 0; i < n; i++) g->deg[i] = (int32_t)(g->ptr[i + 1] - g->ptr[i]);
    return GT_OK;
}

static int32_t deg(const graph *g, int64_t i) { return g->deg[i]; }

/* Breadth-first search from `start` over the unplaced nodes (mark[v] !=
 * stamp), appending to order[*len...]; neighbours in order of increasing
 * degree. Returns the depth (number of levels); *last_lo is where the last
 * level begins in order. */
static int64_t bfs(const graph *g, int32_t start, int32_t *mark, int32_t stamp, int32_t *order, int64_t base,
                   int64_t *len, int64_t *last_lo)
{
    int64_t head = base, tail = base;
    order[tail++] = start;
    mark[start] = stamp;
    int64_t depth = 0, level_end = tail;
    *last_lo = base;
    while (head < tail) {
        if (head == level_end) {
            depth++;
            *last_lo = head;
            level_end = tail;
        }
        int32_t v = order[head++];
        int64_t t0 = tail;
        for (int64_t p = g->ptr[v]; p < g->ptr[v + 1]; p++) {
            int32_t u = g->adj[p];
            if (mark[u] == stamp) continue;
            mark[u] = stamp;
            /* insertion by degree among this node's new neighbours */
            int64_t q = tail++;
            int32_t du = deg(g, u);
            while (q > t0 && deg(g, order[q - 1]) > du) order[q] = order[q - 1], q--;
            order[q] = u;
        }
    }
    *len = tail - base;
    return depth + 1;
}

gt_status gt_rcm(const gt_csr *a, bool symmetric, int32_t *perm)
{
    if (a->nrows != a->ncols) return gt_fail(GT_ERR_DATA, "RCM needs a square matrix");
    int64_t n = a->nrows;
    graph g;
    GT_TRY(graph_build(a, symmetric, &g));
    /* mark: 0 unseen; the searches of component c use stamps 2c+2.. (trial
       searches) and placed nodes hold -1 */
    int32_t *mark = calloc((size_t)n + 1, sizeof *mark);
    int32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!mark || !order) {
        free(mark), free(order), graph_free(&g);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    int64_t placed = 0;
    int32_t stamp = 0;
    /* the first component from a node of least degree (a mesh's corner: one
       search then finds the far side), the others from their first node */
    int64_t first = 0;
    for (int64_t i = 1; i < n; i++)
        if (g.deg[i] < g.deg[first]) first = i;
    for (int64_t k = -1; k < n; k++) {
        int64_t seed = k < 0 ? first : k;
        if (n == 0 || mark[seed] < 0) continue;
        /* pseudo-peripheral node (George & Liu): search from a node of least
           degree in the last level while the depth grows (at most 4
           searches). Each search is already the Cuthill-McKee order from its
           start, so the last one is kept. */
        int32_t start = (int32_t)seed;
        int64_t len = 0, lo = 0, depth = -1;
        for (int trial = 0; trial < 4; trial++) {
            stamp++; /* < 2^31: at most 4 per component, components <= n / 1 */
            int64_t d = bfs(&g, start, mark, stamp, order, placed, &len, &lo);
            if (d <= depth) break;
            depth = d;
            int32_t best = order[lo];
            for (int64_t k = lo; k < placed + len; k++)
                if (deg(&g, order[k]) < deg(&g, best)) best = order[k];
            if (best == start || len < 3) break;
            start = best;
            if (trial == 3) { /* the cap: one more search from the best start */
                stamp++;
                bfs(&g, start, mark, stamp, order, placed, &len, &lo);
            }
        }
        for (int64_t k = placed; k < placed + len; k++) mark[order[k]] = -1;
        placed += len;
    }
    for (int64_t k = 0; k < n; k++) perm[k] = order[n - 1 - k];
    free(mark), free(order), graph_free(&g);
    return GT_OK;
}

bool gt_is_permutation(const int32_t *perm, int64_t n)
{
    unsigned char *seen = calloc((size_t)n + 1, 1);
    if (!seen) return false;
    bool ok = true;
    for (int64_t k = 0; k < n && ok; k++) {
        if (perm[k] < 0 || perm[k] >= n || seen[perm[k]]) ok = false;
        else seen[perm[k]] = 1;
    }
    free(seen);
    return ok;
}

gt_status gt_csr_permute(const gt_csr *a, const int32_t *perm, gt_csr *out)
{
    int64_t n = a->nrows;
    if (a->nrows != a->ncols) return gt_fail(GT_ERR_DATA, "a symmetric permutation needs a square matrix");
    memset(out, 0, sizeof *out);
    int32_t *inv = malloc(((size_t)n + 1) * sizeof *inv);
    out->ptr = malloc(((size_t)n + 1) * sizeof *out->ptr);
    out->col = malloc(((size_t)a->nnz + 1) * sizeof *out->col);
    out->val = malloc(((size_t)a->nnz + 1) * sizeof *out->val);
    if (!inv || !out->ptr || !out->col || !out->val) {
        free(inv), gt_csr_free(out);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    out->nrows = out->ncols = n, out->nnz = a->nnz;
    for (int64_t k = 0; k < n; k++) inv[perm[k]] = (int32_t)k;
    out->ptr[0] = 0;
    for (int64_t k = 0; k < n; k++) out->ptr[k + 1] = out->ptr[k] + (a->ptr[perm[k] + 1] - a->ptr[perm[k]]);
    /* old rows in order (the matrix streams in; each row lands in one place),
       columns renumbered and sorted by insertion (rows are short) */
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t i = 0; i < n; i++) {
        int64_t s = a->ptr[i], e = a->ptr[i + 1], o = out->ptr[inv[i]];
        for (int64_t p = s; p < e; p++) {
            int32_t c = inv[a->col[p]];
            double v = a->val[p];
            int64_t q = o + (p - s);
            while (q > o && out->col[q - 1] > c) out->col[q] = out->col[q - 1], out->val[q] = out->val[q - 1], q--;
            out->col[q] = c, out->val[q] = v;
        }
    }
    free(inv);
    return GT_OK;
}

void gt_vec_permute(const double *v, const int32_t *perm, int64_t n, double *out)
{
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; k++) out[k] = v[perm[k]];
}

void gt_vec_unpermute(const double *v, const int32_t *perm, int64_t n, double *out)
{
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; k++) out[perm[k]] = v[k];
}

gt_status gt_reorder_apply(const gt_csr *a, bool symmetric, int kind, int32_t **perm, gt_csr *pa, char *why,
                           size_t why_len)
{
    *perm = NULL;
    why[0] = 0;
    if (kind == GT_REORDER_NONE) {
        snprintf(why, why_len, "reorder none: as asked");
        return GT_OK;
    }
    gt_locality before, after;
    gt_sp_locality(a, &before);
    char r[200];
    if (kind == GT_REORDER_AUTO && !gt_reorder_pays(a, &before, r, sizeof r)) {
        snprintf(why, why_len, "reorder none: %s", r);
        return GT_OK;
    }
    if (kind == GT_REORDER_AUTO) snprintf(why, why_len, "reorder rcm: %s", r);
    else snprintf(why, why_len, "reorder rcm: as asked");
    if (a->nrows != a->ncols) return gt_fail(GT_ERR_DATA, "--reorder rcm needs a square matrix");
    int32_t *p = malloc(((size_t)a->nrows + 1) * sizeof *p);
    if (!p) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_status s = gt_rcm(a, symmetric, p);
    if (s == GT_OK) s = gt_csr_permute(a, p, pa);
    if (s != GT_OK) {
        free(p);
        return s;
    }
    gt_sp_locality(pa, &after);
    size_t l = strlen(why);
    if (kind == GT_REORDER_AUTO && after.near <= before.near) {
        snprintf(why + l, why_len - l, "; but RCM leaves %.1f%% near (was %.1f%%): kept the original order",
                 100 * after.near, 100 * before.near);
        gt_csr_free(pa);
        free(p);
        return GT_OK;
    }
    snprintf(why + l, why_len - l, "; bandwidth %lld -> %lld, mean |i-j| %.0f -> %.0f, near %.1f%% -> %.1f%%",
             (long long)before.bandwidth, (long long)after.bandwidth, before.mean_dist, after.mean_dist,
             100 * before.near, 100 * after.near);
    *perm = p;
    return GT_OK;
}
