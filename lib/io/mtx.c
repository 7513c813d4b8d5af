/* Matrix Market reading (see mtx.h): the entry points over the parts in
 * mtx_text.c (file in memory, lines, tokens), mtx_header.c, mtx_coo.c
 * (parallel coordinate body), mtx_array.c; writers in mtx_write.c.
 *
 * Reading rules, beyond the format itself:
 * - The banner must be "%%MatrixMarket matrix coordinate|array
 *   real|integer|pattern general|symmetric|skew-symmetric" (case-insensitive
 *   words). complex fields and hermitian symmetry are rejected as "not
 *   supported"; "pattern" is only valid with "coordinate".
 * - Sizes must be >= 1 and fit an int32 index; nnz must be 0..rows*cols.
 * - Symmetric and skew-symmetric files must be square and list only the lower
 *   triangle (row >= col; row > col for skew-symmetric), as the format says;
 *   the upper triangle is filled in on read (negated for skew-symmetric).
 * - Duplicate (row, col) entries are SUMMED (the usual finite-element
 *   assembly meaning); for pattern matrices they collapse to one entry of 1.
 * - The entry count must match the size line exactly: fewer entries or more
 *   are errors naming the line.
 * - Values must be finite: nan and inf entries are errors naming the line.
 * - Memory grows with the entries actually present, never from the header
 *   alone, so a lying header cannot cause a giant allocation.
 * Errors are GT_ERR_DATA with "<what> (<file>:<line>)". */
#include "io/mtx.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "io/mtx_internal.h"

static gt_status read_any(const char *path, gt_mtx *m, bool want_csr)
{
    memset(m, 0, sizeof *m);
    mtx_text t;
    GT_TRY(mtx_text_load(path, &t));
    gt_status st = mtx_read_header(&t, m);
    if (st == GT_OK) st = m->is_array ? mtx_read_array(&t, m) : mtx_read_coo(&t, m, want_csr);
    mtx_text_free(&t);
    if (st != GT_OK) gt_mtx_free(m);
    return st;
}

gt_status gt_mtx_read(const char *path, gt_mtx *m)
{
    memset(m, 0, sizeof *m);
    return read_any(path, m, false);
}

gt_status gt_mtx_read_csr(const char *path, gt_mtx *m)
{
    GT_TRY(read_any(path, m, true));
    if (m->is_array || m->ptr) return GT_OK;
    /* sorted COO came back (far more rows than entries): offsets once the
     * sizes are known plausible */
    gt_status st = gt_mtx_check_sizes(m, path);
    if (st == GT_OK && !(m->ptr = gt_calloc((size_t)m->nrows + 1, sizeof *m->ptr, "matrix row offsets")))
        st = GT_ERR_RUNTIME;
    if (st != GT_OK) {
        gt_mtx_free(m);
        return st;
    }
    for (int64_t k = 0; k < m->nnz; k++) m->ptr[m->row[k] + 1]++;
    for (int64_t i = 0; i < m->nrows; i++) m->ptr[i + 1] += m->ptr[i];
    free(m->row);
    m->row = NULL;
    return GT_OK;
}

void gt_mtx_free(gt_mtx *m)
{
    if (!m) return;
    free(m->row);
    free(m->ptr);
    free(m->col);
    free(m->val);
    free(m->dense);
    memset(m, 0, sizeof *m);
}

gt_status gt_mtx_check_sizes(const gt_mtx *m, const char *path)
{
    if (m->is_array) return GT_OK; /* every value was in the file */
    int64_t len = m->nrows > m->ncols ? m->nrows : m->ncols;
    if (len > ((int64_t)1 << 27) && len > 64 * m->nnz)
        return gt_fail_at(GT_ERR_DATA, path ? path : "-", 0,
                          "a %lld x %lld coordinate %s with only %lld entries is implausible (a size above 2^27 and "
                          "64 times the entries)",
                          (long long)m->nrows, (long long)m->ncols, m->nrows == 1 || m->ncols == 1 ? "vector" : "matrix",
                          (long long)m->nnz);
    return GT_OK;
}

gt_status gt_mtx_read_vector(const char *path, double **v, int64_t *n)
{
    *v = NULL;
    *n = 0;
    gt_mtx m;
    GT_TRY(gt_mtx_read(path, &m));
    gt_status st = GT_OK;
    if (m.nrows != 1 && m.ncols != 1) {
        st = gt_fail_at(GT_ERR_DATA, path ? path : "-", 0,
                        "expected a vector (one row or one column), got a %lld x %lld matrix",
                        (long long)m.nrows, (long long)m.ncols);
    } else if (m.is_array) {
        *v = m.dense;
        m.dense = NULL;
        *n = m.nrows * m.ncols;
    } else {
        int64_t len = m.nrows * m.ncols;
        /* a coordinate vector is stored dense: refuse a length out of all
         * proportion to the entries present (a lying size line) */
        double *x = NULL;
        st = gt_mtx_check_sizes(&m, path);
        if (st == GT_OK && !(x = gt_calloc((size_t)len, sizeof *x, "vector")))
            st = GT_ERR_RUNTIME;
        if (x) {
            for (int64_t k = 0; k < m.nnz; k++) x[m.ncols == 1 ? m.row[k] : m.col[k]] = m.val[k];
            *v = x;
            *n = len;
        }
    }
    gt_mtx_free(&m);
    return st;
}

