/* IC(0) and ILU(0) on the CPU: the input checks, the row-by-row
 * factorisations on A's pattern and the two triangular sweeps (layout of the
 * factors in sparse/ilu0.h). The GPU factorisation (kernels/sparse/ilu0.cu)
 * does the same operations in the same order for each row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/timer.h"
#include "sparse/ilu0.h"

static const char *kind_name(bool ic)
{
    return ic ? "IC(0)" : "ILU(0)";
}

gt_status gt_ilu0_breakdown(bool ic, int64_t row, double pivot)
{
    if (ic)
        return gt_fail(GT_ERR_DATA,
                       "IC(0) breaks down at row %lld: pivot %.6g (the matrix is not positive definite, "
                       "or try --precond ilu0/jacobi)",
                       (long long)row + 1, pivot);
    return gt_fail(GT_ERR_DATA, "ILU(0) breaks down at row %lld: pivot %.6g (try --precond jacobi, or reorder the matrix)",
                   (long long)row + 1, pivot);
}

/* Row i sound (finite, sorted, with a diagonal; for IC(0) every lower
   entry mirrored); its diagonal position in *d. */
static bool row_ok(const gt_csr *a, bool ic, int64_t i, int64_t *d)
{
    *d = -1;
    for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
        int32_t j = a->col[p];
        if (!isfinite(a->val[p]) || (p > a->ptr[i] && j <= a->col[p - 1])) return false;
        if (j == i) *d = p;
        if (ic && j < i) { /* binary search for (j, i) */
            int64_t lo = a->ptr[j], hi = a->ptr[j + 1];
            while (lo < hi) {
                int64_t m = lo + (hi - lo) / 2;
                if (a->col[m] < i) lo = m + 1;
                else hi = m;
            }
            if (lo == a->ptr[j + 1] || a->col[lo] != i) return false;
        }
    }
    return *d >= 0;
}

gt_status gt_ilu0_check(const gt_csr *a, bool ic, int64_t *diag)
{
    const char *what = kind_name(ic);
    if (a->nrows != a->ncols)
        return gt_fail(GT_ERR_DATA, "%s needs a square matrix, not %lldx%lld", what, (long long)a->nrows,
                       (long long)a->ncols);
    int64_t n = a->nrows;
    /* the common case in parallel: every row sound and, for IC(0), as many
       upper as lower entries (with every lower one mirrored: a bijection);
       otherwise the sequential pass below finds the first fault in order */
    int64_t first_bad = n, nlow = 0, nup = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(min : first_bad) reduction(+ : nlow, nup) if (a->nnz >= (1 << 18))
    for (int64_t i = 0; i < n; i++) {
        int64_t d;
        if (!row_ok(a, ic, i, &d)) {
            if (i < first_bad) first_bad = i;
            continue;
        }
        if (diag) diag[i] = d;
        nlow += d - a->ptr[i];
        nup += a->ptr[i + 1] - d - 1;
    }
    if (first_bad == n && (!ic || nlow == nup)) return GT_OK;
    for (int64_t i = 0; i < n; i++) {
        int64_t d = -1;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            if (!isfinite(a->val[p]))
                return gt_fail(GT_ERR_DATA, "%s: entry (%lld, %d) is %g, not a finite number (row %lld)", what,
                               (long long)i + 1, a->col[p] + 1, a->val[p], (long long)i + 1);
            if (p > a->ptr[i] && a->col[p] <= a->col[p - 1])
                return gt_fail(GT_ERR_DATA, "%s: columns of row %lld are not sorted and distinct", what,
                               (long long)i + 1);
            if (a->col[p] == i) d = p;
        }
        if (d < 0)
            return gt_fail(GT_ERR_DATA, "%s: row %lld has no diagonal entry (the factorisation needs every a_ii)",
                           what, (long long)i + 1);
        if (diag) diag[i] = d;
    }
    if (!ic) return GT_OK;
    /* structural symmetry: the lower entries of rows i = 0, 1, ... meet the
       upper entries of each row j in column order */
    int64_t *next = gt_malloc_array((size_t)n + 1, sizeof *next, "IC(0) symmetry check");
    if (!next) return GT_ERR_RUNTIME;
    gt_status st = GT_OK;
    for (int64_t j = 0; j < n; j++) {
        int64_t p = a->ptr[j];
        while (p < a->ptr[j + 1] && a->col[p] <= j) p++;
        next[j] = p;
    }
    for (int64_t i = 0; i < n && st == GT_OK; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1] && a->col[p] < i; p++) {
            int32_t j = a->col[p];
            int64_t q = next[j]++;
            if (q >= a->ptr[j + 1] || a->col[q] != i) {
                int64_t r = q < a->ptr[j + 1] && a->col[q] < i ? j : i;
                int64_t c = r == j ? a->col[q] : j;
                st = gt_fail(GT_ERR_DATA,
                             "IC(0) needs a symmetric matrix: entry (%lld, %lld) has no mirror entry (row %lld; "
                             "try --precond ilu0)",
                             (long long)r + 1, (long long)c + 1, (long long)r + 1);
                break;
            }
        }
    for (int64_t j = 0; j < n && st == GT_OK; j++)
        if (next[j] != a->ptr[j + 1])
            st = gt_fail(GT_ERR_DATA,
                         "IC(0) needs a symmetric matrix: entry (%lld, %d) has no mirror entry (row %lld; try "
                         "--precond ilu0)",
                         (long long)j + 1, a->col[next[j]] + 1, (long long)j + 1);
    free(next);
    return st;
}

/* ILU(0), the IKJ order: for each k < i in row i, l_ik = a_ik / u_kk and
   row i -= l_ik * (upper part of row k), on row i's pattern only. */
static gt_status factor_ilu(gt_csr *f, const int64_t *diag)
{
    int64_t n = f->nrows;
    int64_t *pos = gt_malloc_array((size_t)n, sizeof *pos, "ILU(0) work array");
    if (!pos) return GT_ERR_RUNTIME;
    for (int64_t j = 0; j < n; j++) pos[j] = -1;
    gt_status st = GT_OK;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t p = f->ptr[i]; p < f->ptr[i + 1]; p++) pos[f->col[p]] = p;
        for (int64_t p = f->ptr[i]; p < diag[i]; p++) {
            int32_t k = f->col[p];
            double lik = f->val[p] / f->val[diag[k]];
            f->val[p] = lik;
            for (int64_t q = diag[k] + 1; q < f->ptr[k + 1]; q++) {
                int64_t t = pos[f->col[q]];
                if (t >= 0) f->val[t] -= lik * f->val[q];
            }
        }
        for (int64_t p = f->ptr[i]; p < f->ptr[i + 1]; p++) pos[f->col[p]] = -1;
        double piv = f->val[diag[i]];
        if (piv == 0.0 || !isfinite(piv)) {
            st = gt_ilu0_breakdown(false, i, piv);
            break;
        }
    }
    free(pos);
    return st;
}

/* IC(0), row by row on the lower pattern: l_ik = (a_ik - sum_{j<k} l_ij l_kj)
   / l_kk over the columns rows i and k share (found through pos, row i's
   positions by column; the terms in ascending j, the order of the GPU's
   merge), l_ii = sqrt(a_ii - sum l_ij^2); then the upper part gets L^T. */
static gt_status factor_ic(gt_csr *f, const int64_t *diag)
{
    int64_t n = f->nrows;
    int64_t *pos = gt_malloc_array((size_t)n, sizeof *pos, "IC(0) work array");
    if (!pos) return GT_ERR_RUNTIME;
    for (int64_t j = 0; j < n; j++) pos[j] = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t b = f->ptr[i];
        for (int64_t p = b; p < diag[i]; p++) pos[f->col[p]] = p;
        for (int64_t p = b; p < diag[i]; p++) {
            int32_t k = f->col[p];
            double s = f->val[p];
            for (int64_t q = f->ptr[k]; q < diag[k]; q++) {
                int64_t t = pos[f->col[q]];
                if (t >= 0) s -= f->val[t] * f->val[q];
            }
            f->val[p] = s / f->val[diag[k]];
        }
        for (int64_t p = b; p < diag[i]; p++) pos[f->col[p]] = -1;
        double d = f->val[diag[i]];
        for (int64_t p = b; p < diag[i]; p++) d -= f->val[p] * f->val[p];
        if (!(d > 0.0) || !isfinite(d)) {
            free(pos);
            return gt_ilu0_breakdown(true, i, d);
        }
        f->val[diag[i]] = sqrt(d);
    }
    free(pos);
    int64_t *next = gt_malloc_array((size_t)n, sizeof *next, "IC(0) transpose");
    if (!next) return GT_ERR_RUNTIME;
    for (int64_t j = 0; j < n; j++) next[j] = diag[j] + 1;
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = f->ptr[i]; p < diag[i]; p++) f->val[next[f->col[p]]++] = f->val[p];
    free(next);
    return GT_OK;
}

gt_status gt_ilu0_factor(const gt_csr *a, bool ic, gt_ilu0 *out)
{
    memset(out, 0, sizeof *out);
    double t0 = gt_now_ms();
    out->ic = ic;
    out->n = a->nrows;
    int64_t n = a->nrows;
    gt_csr *f = &out->f;
    out->diag = gt_malloc_array((size_t)n + 1, sizeof *out->diag, "factor diagonal");
    f->ptr = gt_malloc_array((size_t)n + 1, sizeof *f->ptr, "factor rows");
    f->col = gt_malloc_array((size_t)a->nnz + 1, sizeof *f->col, "factor columns");
    f->val = gt_malloc_array((size_t)a->nnz + 1, sizeof *f->val, "factor values");
    if (!out->diag || !f->ptr || !f->col || !f->val) {
        gt_ilu0_free(out);
        return GT_ERR_RUNTIME;
    }
    f->nrows = f->ncols = n;
    f->nnz = a->nnz;
    gt_status st = gt_ilu0_check(a, ic, out->diag);
    if (st == GT_OK) {
        memcpy(f->ptr, a->ptr, ((size_t)n + 1) * sizeof *f->ptr);
        memcpy(f->col, a->col, (size_t)a->nnz * sizeof *f->col);
        memcpy(f->val, a->val, (size_t)a->nnz * sizeof *f->val);
        st = ic ? factor_ic(f, out->diag) : factor_ilu(f, out->diag);
    }
    if (st == GT_OK) st = gt_ilu0_levels(f, out->diag, false, &out->lower);
    if (st == GT_OK) st = gt_ilu0_levels(f, out->diag, true, &out->upper);
    if (st != GT_OK) {
        gt_ilu0_free(out);
        return st;
    }
    out->ms = gt_now_ms() - t0;
    return GT_OK;
}

void gt_ilu0_solve(const gt_ilu0 *F, const double *r, double *z)
{
    const gt_csr *f = &F->f;
    const int64_t *diag = F->diag;
    int64_t n = F->n;
    for (int64_t i = 0; i < n; i++) {
        double s = r[i];
        for (int64_t p = f->ptr[i]; p < diag[i]; p++) s -= f->val[p] * z[f->col[p]];
        z[i] = F->ic ? s / f->val[diag[i]] : s;
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = z[i];
        for (int64_t p = diag[i] + 1; p < f->ptr[i + 1]; p++) s -= f->val[p] * z[f->col[p]];
        z[i] = s / f->val[diag[i]];
    }
}

void gt_ilu0_free(gt_ilu0 *F)
{
    if (!F) return;
    gt_csr_free(&F->f);
    free(F->diag);
    gt_levels_free(&F->lower);
    gt_levels_free(&F->upper);
    memset(F, 0, sizeof *F);
}
