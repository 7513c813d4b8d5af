/* The body of a Matrix Market array matrix: one value a line, column-major;
 * symmetric and skew-symmetric arrays list the lower triangle and are
 * completed here (see mtx.c for the rules). Serial: arrays are vectors of
 * at most a few million values here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "io/mtx_internal.h"

gt_status mtx_read_array(mtx_text *l, gt_mtx *m)
{
    int64_t n = m->nrows, nc = m->ncols;
    /* values expected in the file */
    __int128 want128 = m->symmetry == GT_MTX_GENERAL   ? (__int128)n * nc
                       : m->symmetry == GT_MTX_SYMMETRIC ? (__int128)n * (n + 1) / 2
                                                         : (__int128)n * (n - 1) / 2;
    if (want128 > (__int128)(SIZE_MAX / sizeof(double) / 2))
        return gt_fail_at(GT_ERR_DATA, l->name, l->line, "array size %lld x %lld too large",
                          (long long)n, (long long)nc);
    int64_t want = (int64_t)want128;
    double *vals = NULL;
    int64_t cap = 0, got = 0;
    gt_status st = GT_OK;
    while (got < want) {
        int r = mtx_next_content(l);
        if (r < 0) {
            st = gt_fail(GT_ERR_RUNTIME, "out of memory reading '%s'", l->name);
            goto out;
        }
        if (r == 0) {
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line + 1, "file ends after %lld of %lld values",
                            (long long)got, (long long)want);
            goto out;
        }
        double v;
        const char *p = l->lbuf, *e = l->lbuf + strlen(l->lbuf);
        char tok[24];
        int ok;
        if (m->field == GT_MTX_INTEGER) {
            int64_t iv;
            ok = mtx_parse_i64(&p, e, &iv);
            v = (double)iv;
        } else {
            ok = mtx_parse_f64(&p, e, &v);
        }
        if (!ok) {
            mtx_tok_copy(tok, sizeof tok, p, e);
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "bad value '%s'", tok);
            goto out;
        }
        if (!isfinite(v)) {
            mtx_tok_copy(tok, sizeof tok, l->lbuf, e);
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "value '%s' (number %lld of the array) is not a finite number",
                            tok, (long long)got + 1);
            goto out;
        }
        if (*mtx_skip_ws(p)) {
            mtx_tok_copy(tok, sizeof tok, p, e);
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "extra text '%s' after the value", tok);
            goto out;
        }
        if (got == cap) {
            int64_t ncap = cap ? cap * 2 : 1024;
            if (ncap > want) ncap = want;
            double *q = realloc(vals, (size_t)ncap * sizeof *q);
            if (!q) {
                st = gt_fail(GT_ERR_RUNTIME, "out of memory reading a Matrix Market array");
                goto out;
            }
            vals = q;
            cap = ncap;
        }
        vals[got++] = v;
    }
    if (mtx_next_content(l) == 1) {
        st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "more values than the %lld x %lld array holds",
                        (long long)n, (long long)nc);
        goto out;
    }
    if (m->symmetry == GT_MTX_GENERAL) {
        if (!vals) vals = malloc(sizeof *vals); /* cannot happen: sizes >= 1 */
        m->dense = vals;
        vals = NULL;
    } else {
        /* the file has all values now, so n*n is at most twice what was read */
        m->dense = gt_malloc_array((size_t)n * (size_t)n, sizeof(double), "dense matrix");
        if (!m->dense) {
            st = GT_ERR_RUNTIME;
            goto out;
        }
        int64_t k = 0;
        bool skew = m->symmetry == GT_MTX_SKEW;
        for (int64_t j = 0; j < n; j++) {
            if (skew) m->dense[j * n + j] = 0.0;
            for (int64_t i = skew ? j + 1 : j; i < n; i++) {
                double v = vals[k++];
                m->dense[j * n + i] = v;
                m->dense[i * n + j] = skew ? -v : v;
            }
        }
    }
    m->nnz = 0;
out:
    free(vals);
    return st;
}

