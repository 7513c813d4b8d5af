/* A coordinate Matrix Market body's entries, as the parallel reader
 * (mtx_coo.c) left them in its chunks, into the matrix: CSR by groups of
 * consecutive chunks (per-group row counts -> row offsets -> scatter, so
 * every row holds its entries in file order whatever the thread count;
 * symmetric and skew-symmetric entries mirrored there), each row then
 * sorted stably by column and its duplicates summed in that order; or, for
 * a size line declaring far more rows than there are entries, sorted COO
 * without any array of the row count. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "io/mtx_internal.h"

/* Stable sort of a row's (col, val) pairs by col: insertion for short rows,
 * bottom-up merge (tmp of len pairs) for long ones. */
static void sort_row(int32_t *col, double *val, int64_t len, int32_t *tc, double *tv)
{
    int64_t k = 1;
    while (k < len && col[k - 1] <= col[k]) k++;
    if (k >= len) return;
    if (len <= 48 || !tc) {
        for (int64_t p = k; p < len; p++) {
            int32_t c = col[p];
            double v = val[p];
            int64_t q = p - 1;
            while (q >= 0 && col[q] > c) col[q + 1] = col[q], val[q + 1] = val[q], q--;
            col[q + 1] = c, val[q + 1] = v;
        }
        return;
    }
    int32_t *sc = col, *dc = tc;
    double *sv = val, *dv = tv;
    for (int64_t w = 1; w < len; w *= 2) {
        for (int64_t a = 0; a < len; a += 2 * w) {
            int64_t mid = a + w < len ? a + w : len, b = a + 2 * w < len ? a + 2 * w : len;
            int64_t x = a, y = mid, o = a;
            while (x < mid && y < b) {
                if (sc[y] < sc[x]) dc[o] = sc[y], dv[o++] = sv[y++];
                else dc[o] = sc[x], dv[o++] = sv[x++];
            }
            while (x < mid) dc[o] = sc[x], dv[o++] = sv[x++];
            while (y < b) dc[o] = sc[y], dv[o++] = sv[y++];
        }
        int32_t *t1 = sc;
        sc = dc, dc = t1;
        double *t2 = sv;
        sv = dv, dv = t2;
    }
    if (sc != col) {
        memcpy(col, sc, (size_t)len * sizeof *col);
        memcpy(val, sv, (size_t)len * sizeof *val);
    }
}

/* Sort every row and sum duplicates (pattern: keep one 1). Compacts in place. */
static gt_status sort_sum_rows(int64_t n, int64_t *ptr, int32_t **colp, double **valp, bool pattern, int nth)
{
    int32_t *col = *colp;
    double *val = *valp;
    int32_t *len = malloc((size_t)(n ? n : 1) * sizeof *len);
    if (!len) return gt_fail(GT_ERR_RUNTIME, "out of memory sorting matrix rows");
    int64_t dups = 0;
    int oom = 0;
#pragma omp parallel num_threads(nth) reduction(+ : dups) reduction(| : oom)
    {
        int32_t *tc = NULL;
        double *tv = NULL;
        int64_t tcap = 0;
#pragma omp for schedule(dynamic, 2048)
        for (int64_t i = 0; i < n; i++) {
            int64_t s = ptr[i], e = ptr[i + 1], l = e - s;
            if (l > 48 && l > tcap) {
                free(tc), free(tv);
                tc = malloc((size_t)l * sizeof *tc), tv = malloc((size_t)l * sizeof *tv);
                tcap = tc && tv ? l : 0;
                if (!tcap) oom = 1;
            }
            sort_row(col + s, val + s, l, tcap >= l ? tc : NULL, tv);
            int64_t w = s;
            for (int64_t p = s; p < e; p++) {
                if (w > s && col[w - 1] == col[p]) {
                    if (!pattern) val[w - 1] += val[p];
                } else {
                    col[w] = col[p], val[w] = val[p], w++;
                }
            }
            len[i] = (int32_t)(w - s);
            dups += e - w;
        }
        free(tc), free(tv);
    }
    (void)oom; /* a long row without its buffer was insertion-sorted: slower, still right */
    if (dups) {
        int64_t *np = malloc((size_t)(n + 1) * sizeof *np);
        if (!np) {
            free(len);
            return gt_fail(GT_ERR_RUNTIME, "out of memory summing duplicate matrix entries");
        }
        np[0] = 0;
        for (int64_t i = 0; i < n; i++) np[i + 1] = np[i] + len[i];
        for (int64_t i = 0; i < n; i++) { /* in place, front to back: rows only move down */
            if (np[i] != ptr[i]) {
                memmove(col + np[i], col + ptr[i], (size_t)len[i] * sizeof *col);
                memmove(val + np[i], val + ptr[i], (size_t)len[i] * sizeof *val);
            }
        }
        memcpy(ptr, np, (size_t)(n + 1) * sizeof *ptr);
        free(np);
        int64_t z = ptr[n] ? ptr[n] : 1;
        int32_t *c2 = realloc(col, (size_t)z * sizeof *c2);
        if (c2) *colp = col = c2;
        double *v2 = realloc(val, (size_t)z * sizeof *v2);
        if (v2) *valp = val = v2;
    }
    free(len);
    return GT_OK;
}

/* CSR from the chunks' entries: per-group counts, offsets, scatter. */
gt_status mtx_coo_build_csr(gt_mtx *m, mtx_chunk *ck, int64_t nck, int64_t total, int nth)
{
    const int64_t n = m->nrows;
    const bool mirror = m->symmetry != GT_MTX_GENERAL;
    const double sgn = m->symmetry == GT_MTX_SKEW ? -1.0 : 1.0;
    int ng = nth;
    while (ng > 1 && (double)ng * (double)(n + 1) > 2.0 * (double)total + (double)(1 << 22)) ng--;
    if (ng > nck) ng = nck > 0 ? (int)nck : 1;
    int32_t *cnt = calloc((size_t)ng * (size_t)n + 1, sizeof *cnt);
    int64_t *ptr = mtx_big_alloc((size_t)(n + 1) * sizeof *ptr);
    if (!cnt || !ptr) {
        free(cnt), free(ptr);
        return gt_fail(GT_ERR_RUNTIME, "out of memory for %lld matrix rows", (long long)n);
    }
#pragma omp parallel for schedule(static, 1) num_threads(ng)
    for (int g = 0; g < ng; g++) {
        int32_t *cg = cnt + (size_t)g * (size_t)n;
        for (int64_t c = nck * g / ng; c < nck * (g + 1) / ng; c++) {
            const mtx_chunk *k = &ck[c];
            for (int64_t e = 0; e < k->n; e++) {
                cg[k->r[e]]++;
                if (mirror && k->r[e] != k->c[e]) cg[k->c[e]]++;
            }
        }
    }
#pragma omp parallel for schedule(static) num_threads(nth)
    for (int64_t i = 0; i < n; i++) {
        int64_t s = 0;
        for (int g = 0; g < ng; g++) {
            int32_t x = cnt[(size_t)g * (size_t)n + (size_t)i];
            cnt[(size_t)g * (size_t)n + (size_t)i] = (int32_t)s;
            s += x;
        }
        ptr[i + 1] = s;
    }
    ptr[0] = 0;
    for (int64_t i = 0; i < n; i++) ptr[i + 1] += ptr[i];
    int64_t nnz = ptr[n];
    int32_t *col = mtx_big_alloc((size_t)(nnz ? nnz : 1) * sizeof *col);
    double *val = mtx_big_alloc((size_t)(nnz ? nnz : 1) * sizeof *val);
    if (!col || !val) {
        free(cnt), free(ptr), free(col), free(val);
        return gt_fail(GT_ERR_RUNTIME, "out of memory for %lld matrix entries", (long long)nnz);
    }
#pragma omp parallel for schedule(static, 1) num_threads(ng)
    for (int g = 0; g < ng; g++) {
        int32_t *cg = cnt + (size_t)g * (size_t)n;
        for (int64_t c = nck * g / ng; c < nck * (g + 1) / ng; c++) {
            mtx_chunk *k = &ck[c];
            for (int64_t e = 0; e < k->n; e++) {
                int32_t r = k->r[e], cc = k->c[e];
                double v = k->v[e];
                int64_t p = ptr[r] + cg[r]++;
                col[p] = cc, val[p] = v;
                if (mirror && r != cc) {
                    p = ptr[cc] + cg[cc]++;
                    col[p] = r, val[p] = sgn * v;
                }
            }
            free(k->r), free(k->c), free(k->v);
            k->r = k->c = NULL, k->v = NULL;
        }
    }
    free(cnt);
    gt_status st = sort_sum_rows(n, ptr, &col, &val, m->field == GT_MTX_PATTERN, nth);
    if (st != GT_OK) {
        free(ptr), free(col), free(val);
        return st;
    }
    m->ptr = ptr, m->col = col, m->val = val, m->nnz = ptr[n];
    return GT_OK;
}

typedef struct {
    int32_t r, c;
    double v;
    int64_t seq;
} trip;

static int cmp_trip(const void *a, const void *b)
{
    const trip *x = a, *y = b;
    if (x->r != y->r) return (x->r > y->r) - (x->r < y->r);
    if (x->c != y->c) return (x->c > y->c) - (x->c < y->c);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sorted COO without any array of the row count: for a size line declaring
 * far more rows than there are entries. */
gt_status mtx_coo_build_sorted(gt_mtx *m, const mtx_chunk *ck, int64_t nck, int64_t total)
{
    const bool mirror = m->symmetry != GT_MTX_GENERAL;
    const double sgn = m->symmetry == GT_MTX_SKEW ? -1.0 : 1.0;
    trip *s = malloc((size_t)(2 * total + 1) * sizeof *s);
    if (!s) return gt_fail(GT_ERR_RUNTIME, "out of memory sorting %lld matrix entries", (long long)total);
    int64_t n = 0;
    for (int64_t c = 0; c < nck; c++)
        for (int64_t e = 0; e < ck[c].n; e++) {
            int32_t r = ck[c].r[e], cc = ck[c].c[e];
            s[n] = (trip){r, cc, ck[c].v[e], n}, n++;
            if (mirror && r != cc) s[n] = (trip){cc, r, sgn * ck[c].v[e], n}, n++;
        }
    qsort(s, (size_t)n, sizeof *s, cmp_trip);
    int64_t out = 0;
    for (int64_t k = 0; k < n; k++) {
        if (out > 0 && s[out - 1].r == s[k].r && s[out - 1].c == s[k].c) {
            if (m->field != GT_MTX_PATTERN) s[out - 1].v += s[k].v;
        } else {
            s[out++] = s[k];
        }
    }
    size_t cnt = (size_t)(out ? out : 1);
    m->row = malloc(cnt * sizeof *m->row);
    m->col = malloc(cnt * sizeof *m->col);
    m->val = malloc(cnt * sizeof *m->val);
    if (!m->row || !m->col || !m->val) {
        free(s);
        return gt_fail(GT_ERR_RUNTIME, "out of memory for %lld matrix entries", (long long)out);
    }
    for (int64_t k = 0; k < out; k++) m->row[k] = s[k].r, m->col[k] = s[k].c, m->val[k] = s[k].v;
    m->nnz = out;
    free(s);
    return GT_OK;
}
