/* The Matrix Market banner and size line (see mtx.c for the rules). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "io/mtx_internal.h"

gt_status mtx_read_header(mtx_text *l, gt_mtx *m)
{
    int r = mtx_next_line(l);
    if (r < 0) return gt_fail(GT_ERR_RUNTIME, "out of memory reading '%s'", l->name);
    if (r == 0) return gt_fail_at(GT_ERR_DATA, l->name, 1, "empty file, expected a %%%%MatrixMarket banner");
    char w[5][32] = {{0}};
    int nw = sscanf(l->lbuf, "%31s %31s %31s %31s %31s", w[0], w[1], w[2], w[3], w[4]);
    if (nw < 1 || strcmp(w[0], "%%MatrixMarket") != 0)
        return gt_fail_at(GT_ERR_DATA, l->name, 1, "not a Matrix Market file (no %%%%MatrixMarket banner)");
    if (nw < 5)
        return gt_fail_at(GT_ERR_DATA, l->name, 1,
                          "incomplete banner: expected '%%%%MatrixMarket matrix <format> <field> <symmetry>'");
    if (strcasecmp(w[1], "matrix") != 0)
        return gt_fail_at(GT_ERR_DATA, l->name, 1, "object '%s' not supported (only 'matrix')", w[1]);
    if (strcasecmp(w[2], "coordinate") == 0) m->is_array = false;
    else if (strcasecmp(w[2], "array") == 0) m->is_array = true;
    else return gt_fail_at(GT_ERR_DATA, l->name, 1, "unknown format '%s' (expected coordinate or array)", w[2]);
    if (strcasecmp(w[3], "real") == 0 || strcasecmp(w[3], "double") == 0) m->field = GT_MTX_REAL;
    else if (strcasecmp(w[3], "integer") == 0) m->field = GT_MTX_INTEGER;
    else if (strcasecmp(w[3], "pattern") == 0) m->field = GT_MTX_PATTERN;
    else if (strcasecmp(w[3], "complex") == 0)
        return gt_fail_at(GT_ERR_DATA, l->name, 1, "complex matrices are not supported");
    else return gt_fail_at(GT_ERR_DATA, l->name, 1, "unknown field '%s' (expected real, integer or pattern)", w[3]);
    if (strcasecmp(w[4], "general") == 0) m->symmetry = GT_MTX_GENERAL;
    else if (strcasecmp(w[4], "symmetric") == 0) m->symmetry = GT_MTX_SYMMETRIC;
    else if (strcasecmp(w[4], "skew-symmetric") == 0) m->symmetry = GT_MTX_SKEW;
    else if (strcasecmp(w[4], "hermitian") == 0)
        return gt_fail_at(GT_ERR_DATA, l->name, 1, "hermitian matrices are not supported");
    else return gt_fail_at(GT_ERR_DATA, l->name, 1, "unknown symmetry '%s' (expected general, symmetric or skew-symmetric)", w[4]);
    if (m->is_array && m->field == GT_MTX_PATTERN)
        return gt_fail_at(GT_ERR_DATA, l->name, 1, "'array' matrices cannot have the 'pattern' field");

    r = mtx_next_content(l);
    if (r < 0) return gt_fail(GT_ERR_RUNTIME, "out of memory reading '%s'", l->name);
    if (r == 0) return gt_fail_at(GT_ERR_DATA, l->name, l->line + 1, "file ends before the size line");
    const char *p = l->lbuf, *e = l->lbuf + strlen(l->lbuf);
    int64_t nr, nc, nnz = 0;
    char tok[24];
    if (!mtx_parse_i64(&p, e, &nr) || !mtx_parse_i64(&p, e, &nc) || (!m->is_array && !mtx_parse_i64(&p, e, &nnz))) {
        mtx_tok_copy(tok, sizeof tok, p, e);
        return gt_fail_at(GT_ERR_DATA, l->name, l->line, "bad size line: expected %s, got '%s'",
                          m->is_array ? "'rows cols'" : "'rows cols entries'", l->lbuf[0] ? tok : "");
    }
    if (*mtx_skip_ws(p)) return gt_fail_at(GT_ERR_DATA, l->name, l->line, "extra text after the size line");
    if (nr < 1 || nc < 1)
        return gt_fail_at(GT_ERR_DATA, l->name, l->line, "matrix size %lld x %lld: sizes must be >= 1",
                          (long long)nr, (long long)nc);
    if (nr > INT32_MAX || nc > INT32_MAX)
        return gt_fail_at(GT_ERR_DATA, l->name, l->line,
                          "matrix size %lld x %lld exceeds the supported maximum %d", (long long)nr,
                          (long long)nc, INT32_MAX);
    if (m->symmetry != GT_MTX_GENERAL && nr != nc)
        return gt_fail_at(GT_ERR_DATA, l->name, l->line, "%s matrix must be square, got %lld x %lld",
                          m->symmetry == GT_MTX_SKEW ? "skew-symmetric" : "symmetric", (long long)nr,
                          (long long)nc);
    if (!m->is_array) {
        __int128 cells = (__int128)nr * nc;
        if (nnz < 0 || (__int128)nnz > cells)
            return gt_fail_at(GT_ERR_DATA, l->name, l->line,
                              "entry count %lld impossible for a %lld x %lld matrix", (long long)nnz,
                              (long long)nr, (long long)nc);
    }
    m->nrows = nr;
    m->ncols = nc;
    m->nnz = nnz; /* declared count, replaced after reading */
    return GT_OK;
}

