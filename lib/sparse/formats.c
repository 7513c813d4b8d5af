/* Sparse storage formats, conversions and the CPU reference SpMV. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "sparse/sparse.h"

static const char *const fmt_names[GT_SP_NFORMATS] = {"coo", "csr", "ell", "dia", "hyb"};
const char *gt_sp_format_name(gt_sp_format f)
{
    return (f >= 0 && f < GT_SP_NFORMATS) ? fmt_names[f] : "?";
}

static void *xcalloc(size_t n, size_t sz)
{
    return calloc(n ? n : 1, sz);
}

#define OOM() gt_fail(GT_ERR_RUNTIME, "out of memory")

void gt_csr_free(gt_csr *a)
{
    if (!a) return;
    free(a->ptr), free(a->col), free(a->val);
    memset(a, 0, sizeof *a);
}
void gt_coo_free(gt_coo *a)
{
    if (!a) return;
    free(a->row), free(a->col), free(a->val);
    memset(a, 0, sizeof *a);
}
void gt_ell_free(gt_ell *a)
{
    if (!a) return;
    free(a->col), free(a->val);
    memset(a, 0, sizeof *a);
}
void gt_dia_free(gt_dia *a)
{
    if (!a) return;
    free(a->offsets), free(a->val);
    memset(a, 0, sizeof *a);
}
void gt_hyb_free(gt_hyb *a)
{
    if (!a) return;
    gt_ell_free(&a->ell);
    gt_coo_free(&a->coo);
}

static gt_status csr_alloc(gt_csr *a, int64_t nrows, int64_t ncols, int64_t nnz)
{
    memset(a, 0, sizeof *a);
    a->nrows = nrows, a->ncols = ncols, a->nnz = nnz;
    a->ptr = xcalloc((size_t)nrows + 1, sizeof *a->ptr);
    a->col = xcalloc((size_t)nnz, sizeof *a->col);
    a->val = xcalloc((size_t)nnz, sizeof *a->val);
    if (!a->ptr || !a->col || !a->val) {
        gt_csr_free(a);
        return OOM();
    }
    return GT_OK;
}

gt_status gt_csr_from_triplets(int64_t nrows, int64_t ncols, int64_t nnz, const int32_t *row,
                               const int32_t *col, const double *val, gt_csr *out)
{
    if (nrows < 0 || ncols < 0 || nnz < 0 || nrows > INT32_MAX || ncols > INT32_MAX)
        return gt_fail(GT_ERR_DATA, "matrix dimensions %lldx%lld out of range",
                       (long long)nrows, (long long)ncols);
    for (int64_t k = 0; k < nnz; k++)
        if (row[k] < 0 || row[k] >= nrows || col[k] < 0 || col[k] >= ncols)
            return gt_fail(GT_ERR_DATA, "entry %lld at (%d, %d) outside the %lldx%lld matrix",
                           (long long)k + 1, row[k] + 1, col[k] + 1, (long long)nrows,
                           (long long)ncols);
    gt_csr t;
    GT_TRY(csr_alloc(&t, nrows, ncols, nnz));
    for (int64_t k = 0; k < nnz; k++) t.ptr[row[k] + 1]++;
    for (int64_t i = 0; i < nrows; i++) t.ptr[i + 1] += t.ptr[i];
    int64_t *next = xcalloc((size_t)nrows + 1, sizeof *next);
    if (!next) {
        gt_csr_free(&t);
        return OOM();
    }
    memcpy(next, t.ptr, ((size_t)nrows + 1) * sizeof *next);
    for (int64_t k = 0; k < nnz; k++) {
        int64_t p = next[row[k]]++;
        t.col[p] = col[k];
        t.val[p] = val ? val[k] : 1.0;
    }
    free(next);
    /* sort each row by column (insertion sort: rows are short and mostly sorted)
       and sum duplicates */
    int64_t w = 0;
    int64_t start = 0;
    for (int64_t i = 0; i < nrows; i++) {
        int64_t s = start, e = t.ptr[i + 1];
        for (int64_t p = s + 1; p < e; p++) {
            int32_t c = t.col[p];
            double v = t.val[p];
            int64_t q = p - 1;
            while (q >= s && t.col[q] > c) {
                t.col[q + 1] = t.col[q], t.val[q + 1] = t.val[q];
                q--;
            }
            t.col[q + 1] = c, t.val[q + 1] = v;
        }
        int64_t row_start = w;
        for (int64_t p = s; p < e; p++) {
            if (w > row_start && t.col[w - 1] == t.col[p]) {
                t.val[w - 1] += t.val[p];
            } else {
                t.col[w] = t.col[p], t.val[w] = t.val[p];
                w++;
            }
        }
        start = e;
        t.ptr[i + 1] = w;
    }
    t.nnz = w;
    *out = t;
    return GT_OK;
}

gt_status gt_csr_from_dense(int64_t nrows, int64_t ncols, const double *a, gt_csr *out)
{
    int64_t nnz = 0;
    for (int64_t k = 0; k < nrows * ncols; k++) nnz += a[k] != 0.0;
    GT_TRY(csr_alloc(out, nrows, ncols, nnz));
    int64_t p = 0;
    for (int64_t i = 0; i < nrows; i++) {
        for (int64_t j = 0; j < ncols; j++)
            if (a[i * ncols + j] != 0.0) out->col[p] = (int32_t)j, out->val[p++] = a[i * ncols + j];
        out->ptr[i + 1] = p;
    }
    return GT_OK;
}

gt_status gt_csr_to_coo(const gt_csr *a, gt_coo *o)
{
    memset(o, 0, sizeof *o);
    o->nrows = a->nrows, o->ncols = a->ncols, o->nnz = a->nnz;
    o->row = xcalloc((size_t)a->nnz, sizeof *o->row);
    o->col = xcalloc((size_t)a->nnz, sizeof *o->col);
    o->val = xcalloc((size_t)a->nnz, sizeof *o->val);
    if (!o->row || !o->col || !o->val) {
        gt_coo_free(o);
        return OOM();
    }
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) o->row[p] = (int32_t)i;
    memcpy(o->col, a->col, (size_t)a->nnz * sizeof *o->col);
    memcpy(o->val, a->val, (size_t)a->nnz * sizeof *o->val);
    return GT_OK;
}

gt_status gt_coo_to_csr(const gt_coo *a, gt_csr *out)
{
    return gt_csr_from_triplets(a->nrows, a->ncols, a->nnz, a->row, a->col, a->val, out);
}

static gt_status ell_fill(const gt_csr *a, int64_t width, gt_ell *o)
{
    memset(o, 0, sizeof *o);
    size_t n;
    if (!gt_mul_size((size_t)width, (size_t)a->nrows, &n)) return OOM();
    o->nrows = a->nrows, o->ncols = a->ncols, o->width = width;
    o->col = malloc((n ? n : 1) * sizeof *o->col);
    o->val = xcalloc(n, sizeof *o->val);
    if (!o->col || !o->val) {
        gt_ell_free(o);
        return OOM();
    }
    for (size_t k = 0; k < n; k++) o->col[k] = -1;
    for (int64_t i = 0; i < a->nrows; i++) {
        int64_t k = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1] && k < width; p++, k++) {
            o->col[(size_t)k * a->nrows + i] = a->col[p];
            o->val[(size_t)k * a->nrows + i] = a->val[p];
        }
    }
    return GT_OK;
}

gt_status gt_csr_to_ell(const gt_csr *a, gt_ell *o)
{
    int64_t w = 0;
    for (int64_t i = 0; i < a->nrows; i++)
        if (a->ptr[i + 1] - a->ptr[i] > w) w = a->ptr[i + 1] - a->ptr[i];
    return ell_fill(a, w, o);
}

gt_status gt_csr_to_dia(const gt_csr *a, size_t max_bytes, gt_dia *o)
{
    memset(o, 0, sizeof *o);
    int64_t span = a->nrows + a->ncols; /* offset + nrows - 1 in [0, nrows + ncols - 2] */
    int32_t *slot = malloc((size_t)(span ? span : 1) * sizeof *slot);
    if (!slot) return OOM();
    for (int64_t k = 0; k < span; k++) slot[k] = -1;
    int64_t nd = 0;
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int64_t s = a->col[p] - i + a->nrows - 1;
            if (slot[s] < 0) slot[s] = 0, nd++;
        }
    size_t n, bytes;
    if (!gt_mul_size((size_t)nd, (size_t)a->nrows, &n) || !gt_mul_size(n, 12, &bytes) ||
        (max_bytes && bytes > max_bytes)) {
        free(slot);
        return gt_fail(GT_ERR_RUNTIME, "DIA format would need %lld diagonals x %lld rows: too large",
                       (long long)nd, (long long)a->nrows);
    }
    o->nrows = a->nrows, o->ncols = a->ncols, o->ndiag = nd;
    o->offsets = xcalloc((size_t)nd, sizeof *o->offsets);
    o->val = xcalloc(n, sizeof *o->val);
    if (!o->offsets || !o->val) {
        free(slot);
        gt_dia_free(o);
        return OOM();
    }
    int32_t d = 0;
    for (int64_t s = 0; s < span; s++)
        if (slot[s] >= 0) {
            slot[s] = d;
            o->offsets[d++] = (int32_t)(s - (a->nrows - 1));
        }
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int64_t s = a->col[p] - i + a->nrows - 1;
            o->val[(size_t)slot[s] * a->nrows + i] = a->val[p];
        }
    free(slot);
    return GT_OK;
}

int64_t gt_hyb_width(const gt_csr *a)
{
    /* hist[k] = rows with exactly k entries; choose the largest K with
       #rows(len >= K) >= max(4096, nrows/3). */
    int64_t maxlen = 0;
    for (int64_t i = 0; i < a->nrows; i++)
        if (a->ptr[i + 1] - a->ptr[i] > maxlen) maxlen = a->ptr[i + 1] - a->ptr[i];
    int64_t *hist = xcalloc((size_t)maxlen + 2, sizeof *hist);
    if (!hist) return 0;
    for (int64_t i = 0; i < a->nrows; i++) hist[a->ptr[i + 1] - a->ptr[i]]++;
    int64_t need = a->nrows / 3;
    if (need < 4096) need = 4096;
    if (need > a->nrows) need = a->nrows; /* small matrices: K = min row length */
    int64_t atleast = 0, K = 0;
    for (int64_t k = maxlen; k >= 1; k--) {
        atleast += hist[k];
        if (atleast >= need) {
            K = k;
            break;
        }
    }
    free(hist);
    return K;
}

gt_status gt_csr_to_hyb(const gt_csr *a, int64_t width, gt_hyb *o)
{
    memset(o, 0, sizeof *o);
    if (width < 0) width = gt_hyb_width(a);
    GT_TRY(ell_fill(a, width, &o->ell));
    int64_t rest = 0;
    for (int64_t i = 0; i < a->nrows; i++) {
        int64_t len = a->ptr[i + 1] - a->ptr[i];
        if (len > width) rest += len - width;
    }
    gt_coo *c = &o->coo;
    c->nrows = a->nrows, c->ncols = a->ncols, c->nnz = rest;
    c->row = xcalloc((size_t)rest, sizeof *c->row);
    c->col = xcalloc((size_t)rest, sizeof *c->col);
    c->val = xcalloc((size_t)rest, sizeof *c->val);
    if (!c->row || !c->col || !c->val) {
        gt_hyb_free(o);
        return OOM();
    }
    int64_t q = 0;
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t p = a->ptr[i] + width; p < a->ptr[i + 1]; p++) {
            c->row[q] = (int32_t)i, c->col[q] = a->col[p], c->val[q] = a->val[p];
            q++;
        }
    return GT_OK;
}

/* room for n triplets (freed by triplets_to_csr) */
static gt_status triplets_new(size_t n, int32_t **r, int32_t **c, double **v)
{
    *r = xcalloc(n, sizeof **r), *c = xcalloc(n, sizeof **c);
    *v = xcalloc(n, sizeof **v);
    if (!*r || !*c || !*v) {
        free(*r), free(*c), free(*v);
        return OOM();
    }
    return GT_OK;
}
static gt_status triplets_to_csr(int64_t nrows, int64_t ncols, int64_t m, int32_t *r, int32_t *c, double *v,
                                 gt_csr *out)
{
    gt_status s = gt_csr_from_triplets(nrows, ncols, m, r, c, v, out);
    free(r), free(c), free(v);
    return s;
}

gt_status gt_ell_to_csr(const gt_ell *a, gt_csr *out)
{
    int32_t *r, *c;
    double *v;
    GT_TRY(triplets_new((size_t)a->width * a->nrows, &r, &c, &v));
    int64_t m = 0;
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t k = 0; k < a->width; k++) {
            size_t p = (size_t)k * a->nrows + i;
            if (a->col[p] >= 0) r[m] = (int32_t)i, c[m] = a->col[p], v[m] = a->val[p], m++;
        }
    return triplets_to_csr(a->nrows, a->ncols, m, r, c, v, out);
}

gt_status gt_dia_to_csr(const gt_dia *a, gt_csr *out)
{
    int32_t *r, *c;
    double *v;
    GT_TRY(triplets_new((size_t)a->ndiag * a->nrows, &r, &c, &v));
    int64_t m = 0;
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t d = 0; d < a->ndiag; d++) {
            int64_t j = i + a->offsets[d];
            double x = a->val[(size_t)d * a->nrows + i];
            if (j >= 0 && j < a->ncols && x != 0.0) r[m] = (int32_t)i, c[m] = (int32_t)j, v[m] = x, m++;
        }
    return triplets_to_csr(a->nrows, a->ncols, m, r, c, v, out);
}

gt_status gt_hyb_to_csr(const gt_hyb *a, gt_csr *out)
{
    gt_csr e;
    GT_TRY(gt_ell_to_csr(&a->ell, &e));
    int64_t n = e.nnz + a->coo.nnz;
    int32_t *r = xcalloc((size_t)n, sizeof *r), *c = xcalloc((size_t)n, sizeof *c);
    double *v = xcalloc((size_t)n, sizeof *v);
    if (!r || !c || !v) {
        free(r), free(c), free(v), gt_csr_free(&e);
        return OOM();
    }
    int64_t m = 0;
    for (int64_t i = 0; i < e.nrows; i++)
        for (int64_t p = e.ptr[i]; p < e.ptr[i + 1]; p++) r[m] = (int32_t)i, c[m] = e.col[p], v[m++] = e.val[p];
    for (int64_t k = 0; k < a->coo.nnz; k++) r[m] = a->coo.row[k], c[m] = a->coo.col[k], v[m++] = a->coo.val[k];
    gt_status s = gt_csr_from_triplets(a->ell.nrows, a->ell.ncols, m, r, c, v, out);
    free(r), free(c), free(v), gt_csr_free(&e);
    return s;
}

/* ---------------------------------------------------------------- SpMV */
/* CSR rows on several threads from this many entries on (each row's sum in
 * the same order, so the same result on any number of threads): the GPU
 * solves' true residual is this product on the host, after the solve (a
 * 6M-entry matrix: ~15 ms on one core) */
#define CSR_SPMV_PAR_NNZ 200000
#define SPMV_BODIES(T, SFX)                                                        \
    void gt_csr_spmv##SFX(const gt_csr *a, const T *x, T *y)                      \
    {                                                                              \
        _Pragma("omp parallel for schedule(static) if (a->nnz >= CSR_SPMV_PAR_NNZ)") \
        for (int64_t i = 0; i < a->nrows; i++) {                                   \
            T s = 0;                                                               \
            for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)                    \
                s += (T)a->val[p] * x[a->col[p]];                                  \
            y[i] = s;                                                              \
        }                                                                          \
    }                                                                              \
    void gt_coo_spmv##SFX(const gt_coo *a, const T *x, T *y)                      \
    {                                                                              \
        for (int64_t i = 0; i < a->nrows; i++) y[i] = 0;                           \
        for (int64_t k = 0; k < a->nnz; k++) y[a->row[k]] += (T)a->val[k] * x[a->col[k]]; \
    }                                                                              \
    void gt_ell_spmv##SFX(const gt_ell *a, const T *x, T *y)                      \
    {                                                                              \
        for (int64_t i = 0; i < a->nrows; i++) {                                   \
            T s = 0;                                                               \
            for (int64_t k = 0; k < a->width; k++) {                               \
                size_t p = (size_t)k * a->nrows + i;                               \
                if (a->col[p] >= 0) s += (T)a->val[p] * x[a->col[p]];              \
            }                                                                      \
            y[i] = s;                                                              \
        }                                                                          \
    }                                                                              \
    void gt_dia_spmv##SFX(const gt_dia *a, const T *x, T *y)                      \
    {                                                                              \
        for (int64_t i = 0; i < a->nrows; i++) {                                   \
            T s = 0;                                                               \
            for (int64_t d = 0; d < a->ndiag; d++) {                               \
                int64_t j = i + a->offsets[d];                                     \
                if (j >= 0 && j < a->ncols) s += (T)a->val[(size_t)d * a->nrows + i] * x[j]; \
            }                                                                      \
            y[i] = s;                                                              \
        }                                                                          \
    }                                                                              \
    void gt_hyb_spmv##SFX(const gt_hyb *a, const T *x, T *y)                      \
    {                                                                              \
        gt_ell_spmv##SFX(&a->ell, x, y);                                           \
        for (int64_t k = 0; k < a->coo.nnz; k++)                                   \
            y[a->coo.row[k]] += (T)a->coo.val[k] * x[a->coo.col[k]];               \
    }

SPMV_BODIES(double, )
SPMV_BODIES(float, _f32)
