/* Structure analysis, the automatic format choice, --info and the greedy
 * colouring used by multicolour Gauss-Seidel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/sparse.h"

static double lookup(const gt_csr *a, int64_t i, int32_t j, bool *found)
{
    int64_t lo = a->ptr[i], hi = a->ptr[i + 1];
    while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (a->col[m] < j) lo = m + 1;
        else hi = m;
    }
    *found = lo < a->ptr[i + 1] && a->col[lo] == j;
    return *found ? a->val[lo] : 0.0;
}

gt_status gt_sp_analyze(const gt_csr *a, gt_sp_info *in)
{
    memset(in, 0, sizeof *in);
    in->nrows = a->nrows, in->ncols = a->ncols, in->nnz = a->nnz;
    in->zero_diag_row = -1;
    in->row_min = a->nrows ? INT64_MAX : 0;
    double s1 = 0, s2 = 0;
    bool sym = a->nrows == a->ncols, dd = a->nrows == a->ncols && a->nrows > 0, posd = dd;
    for (int64_t i = 0; i < a->nrows; i++) {
        int64_t len = a->ptr[i + 1] - a->ptr[i];
        if (len < in->row_min) in->row_min = len;
        if (len > in->row_max) in->row_max = len;
        if (len == 0) in->empty_rows++;
        s1 += (double)len, s2 += (double)len * (double)len;
        double diag = 0, off = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            if (a->col[p] == i) diag = a->val[p];
            else off += fabs(a->val[p]);
            if (sym) {
                bool f;
                double t = lookup(a, a->col[p], (int32_t)i, &f);
                if (!f || fabs(t - a->val[p]) > 1e-12 * (fabs(t) + fabs(a->val[p]))) sym = false;
            }
        }
        if (i < a->ncols && diag == 0.0 && in->zero_diag_row < 0) in->zero_diag_row = i;
        if (!(fabs(diag) > off)) dd = false;
        if (!(diag > 0)) posd = false;
    }
    in->symmetric = sym;
    in->diag_dominant = dd;
    in->positive_diagonal = posd;
    if (a->nrows > 0) {
        in->row_mean = s1 / (double)a->nrows;
        double var = s2 / (double)a->nrows - in->row_mean * in->row_mean;
        in->row_std = var > 0 ? sqrt(var) : 0;
    }
    /* diagonals */
    int64_t span = a->nrows + a->ncols;
    unsigned char *seen = calloc((size_t)(span ? span : 1), 1);
    if (!seen) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int64_t s = a->col[p] - i + a->nrows - 1;
            if (!seen[s]) seen[s] = 1, in->ndiag++;
        }
    free(seen);
    in->hyb_width = gt_hyb_width(a);
    for (int64_t i = 0; i < a->nrows; i++) {
        int64_t len = a->ptr[i + 1] - a->ptr[i];
        if (len > in->hyb_width) in->hyb_coo_nnz += len - in->hyb_width;
    }
    for (int f = 0; f < GT_SP_NFORMATS; f++) {
        in->bytes[f][0] = gt_sp_format_bytes(in, (gt_sp_format)f, 4);
        in->bytes[f][1] = gt_sp_format_bytes(in, (gt_sp_format)f, 8);
    }
    return GT_OK;
}

size_t gt_sp_format_bytes(const gt_sp_info *in, gt_sp_format f, int prec)
{
    size_t v = (size_t)prec, n = (size_t)in->nrows, z = (size_t)in->nnz;
    switch (f) {
    case GT_SP_COO: return z * (8 + v);
    case GT_SP_CSR: return (n + 1) * 8 + z * (4 + v);
    case GT_SP_ELL: return (size_t)in->row_max * n * (4 + v);
    case GT_SP_DIA: return (size_t)in->ndiag * (4 + n * v);
    case GT_SP_HYB: return (size_t)in->hyb_width * n * (4 + v) + (size_t)in->hyb_coo_nnz * (8 + v);
    default: return 0;
    }
}

gt_sp_format gt_sp_choose_format(const gt_sp_info *in, char *why, size_t wl)
{
    double nnz = (double)in->nnz;
    double dia_fill = in->ndiag ? nnz / ((double)in->ndiag * (double)in->nrows) : 0;
    double ell_fill = in->row_max ? nnz / ((double)in->row_max * (double)in->nrows) : 0;
    if (in->nnz == 0) {
        snprintf(why, wl, "the matrix has no nonzeros: CSR");
        return GT_SP_CSR;
    }
    if (in->nrows == in->ncols && dia_fill >= 2.0 / 3.0 && in->ndiag <= 256) {
        snprintf(why, wl,
                 "%lld diagonals hold all nonzeros with %.0f%% of the DIA slots used: DIA "
                 "(x is read contiguously, no column indices)",
                 (long long)in->ndiag, 100 * dia_fill);
        return GT_SP_DIA;
    }
    if (ell_fill >= 2.0 / 3.0) {
        snprintf(why, wl,
                 "row lengths are even (%lld..%lld, ELL width %lld is %.0f%% full): ELL",
                 (long long)in->row_min, (long long)in->row_max, (long long)in->row_max,
                 100 * ell_fill);
        return GT_SP_ELL;
    }
    if (in->hyb_width > 0 && (double)in->hyb_coo_nnz <= nnz / 3 && in->row_std <= in->row_mean) {
        snprintf(why, wl,
                 "rows are mostly regular: HYB with Bell & Garland ELL width %lld "
                 "(%.0f%% of the nonzeros in the COO part; plain ELL would be %.0f%% full)",
                 (long long)in->hyb_width, 100 * (double)in->hyb_coo_nnz / nnz, 100 * ell_fill);
        return GT_SP_HYB;
    }
    snprintf(why, wl,
             "row lengths are uneven (mean %.1f, std %.1f, max %lld; %lld diagonals): CSR",
             in->row_mean, in->row_std, (long long)in->row_max, (long long)in->ndiag);
    return GT_SP_CSR;
}

void gt_sp_print_info(const gt_sp_info *in, FILE *f)
{
    fprintf(f, "size          %lld x %lld\n", (long long)in->nrows, (long long)in->ncols);
    fprintf(f, "nnz           %lld (%.3g%% dense)\n", (long long)in->nnz,
            in->nrows && in->ncols ? 100.0 * (double)in->nnz / ((double)in->nrows * (double)in->ncols) : 0.0);
    fprintf(f, "symmetric     %s\n", in->symmetric ? "yes" : "no");
    fprintf(f, "diag dominant %s\n", in->diag_dominant ? "yes (strictly, by rows)" : "no");
    if (in->zero_diag_row >= 0)
        fprintf(f, "zero diagonal first at row %lld\n", (long long)in->zero_diag_row + 1);
    fprintf(f, "row length    min %lld  max %lld  mean %.2f  std %.2f  empty rows %lld\n",
            (long long)in->row_min, (long long)in->row_max, in->row_mean, in->row_std,
            (long long)in->empty_rows);
    fprintf(f, "diagonals     %lld\n", (long long)in->ndiag);
    fprintf(f, "HYB width     %lld (COO part %lld nonzeros)\n", (long long)in->hyb_width,
            (long long)in->hyb_coo_nnz);
    fprintf(f, "\n%-6s %14s %10s %14s %10s\n", "format", "bytes(single)", "B/nnz", "bytes(double)",
            "B/nnz");
    for (int k = 0; k < GT_SP_NFORMATS; k++) {
        double z = in->nnz ? (double)in->nnz : 1.0;
        fprintf(f, "%-6s %14zu %10.2f %14zu %10.2f\n", gt_sp_format_name((gt_sp_format)k),
                in->bytes[k][0], (double)in->bytes[k][0] / z, in->bytes[k][1],
                (double)in->bytes[k][1] / z);
    }
    char why[256];
    gt_sp_format c = gt_sp_choose_format(in, why, sizeof why);
    fprintf(f, "\nauto format   %s: %s\n", gt_sp_format_name(c), why);
}

gt_status gt_sp_colour(const gt_csr *a, int32_t *colour, int32_t *ncolours)
{
    int64_t n = a->nrows;
    /* transpose structure for the symmetrised graph */
    int64_t *tp = calloc((size_t)a->ncols + 2, sizeof *tp);
    int32_t *ti = malloc((size_t)(a->nnz ? a->nnz : 1) * sizeof *ti);
    int64_t *mark = malloc((size_t)(n + 1) * sizeof *mark);
    if (!tp || !ti || !mark) {
        free(tp), free(ti), free(mark);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    for (int64_t p = 0; p < a->nnz; p++) tp[a->col[p] + 1]++;
    for (int64_t j = 0; j < a->ncols; j++) tp[j + 1] += tp[j];
    int64_t *nx = malloc((size_t)(a->ncols + 1) * sizeof *nx);
    if (!nx) {
        free(tp), free(ti), free(mark);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    memcpy(nx, tp, (size_t)(a->ncols + 1) * sizeof *nx);
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) ti[nx[a->col[p]]++] = (int32_t)i;
    free(nx);
    for (int64_t c = 0; c <= n; c++) mark[c] = -1;
    int32_t nc = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int64_t j = a->col[p];
            if (j != i && j < n && j < i) mark[colour[j]] = i;
        }
        if (i < a->ncols)
            for (int64_t p = tp[i]; p < tp[i + 1]; p++) {
                int64_t j = ti[p];
                if (j < i) mark[colour[j]] = i;
            }
        int32_t c = 0;
        while (mark[c] == i) c++;
        colour[i] = c;
        if (c + 1 > nc) nc = c + 1;
    }
    free(tp), free(ti), free(mark);
    *ncolours = nc;
    return GT_OK;
}
