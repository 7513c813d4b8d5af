/* Matrix Market writers: coordinate real general matrices and dense
 * vectors, atomic (common/output.h), numbers formatted in parallel. */
#include <stdio.h>
#include <string.h>

#include "common/output.h"
#include "io/mtx.h"
#include "io/numrows.h"

static void write_comment(FILE *f, const char *comment)
{
    if (!comment) return;
    const char *s = comment;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        fprintf(f, "%%%s%.*s\n", (len && s[0] != ' ') ? " " : "", (int)len, s);
        s += len;
        if (*s == '\n') s++;
    }
}

gt_status gt_mtx_write_coo(const char *path, int64_t nrows, int64_t ncols, int64_t nnz,
                           const int32_t *row, const int32_t *col, const double *val,
                           const char *comment)
{
    if (nrows < 1 || ncols < 1 || nnz < 0)
        return gt_fail(GT_ERR_RUNTIME, "cannot write a %lld x %lld matrix with %lld entries",
                       (long long)nrows, (long long)ncols, (long long)nnz);
    for (int64_t k = 0; k < nnz; k++)
        if (row[k] < 0 || row[k] >= nrows || col[k] < 0 || col[k] >= ncols)
            return gt_fail(GT_ERR_RUNTIME, "entry %lld at (%d, %d) outside the %lld x %lld matrix",
                           (long long)k, row[k], col[k], (long long)nrows, (long long)ncols);
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    FILE *f = o.fp;
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n");
    write_comment(f, comment);
    fprintf(f, "%lld %lld %lld\n", (long long)nrows, (long long)ncols, (long long)nnz);
    for (int64_t k = 0; k < nnz; k++) {
        if (fprintf(f, "%d %d %.17g\n", row[k] + 1, col[k] + 1, val[k]) < 0) break;
    }
    return gt_out_commit(&o);
}

gt_status gt_mtx_write_vector(const char *path, const double *v, int64_t n, const char *comment)
{
    if (n < 1) return gt_fail(GT_ERR_RUNTIME, "cannot write a vector of length %lld", (long long)n);
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    FILE *f = o.fp;
    fprintf(f, "%%%%MatrixMarket matrix array real general\n");
    write_comment(f, comment);
    fprintf(f, "%lld 1\n", (long long)n);
    /* a write error is left in the stream for gt_out_commit to report */
    if (gt_write_rows(f, (size_t)n, v, 1, NULL, 0) != 0 && !ferror(f)) {
        gt_out_abort(&o);
        return gt_fail(GT_ERR_RUNTIME, "out of memory writing '%s'", path);
    }
    return gt_out_commit(&o);
}
