/* Matrix Market writers: coordinate real general matrices and dense
 * vectors, atomic (common/output.h), numbers formatted in parallel. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/output.h"
#include "io/mtx.h"
#include "io/numrows.h"
#include "io/numtext.h"

#ifdef _OPENMP
#include <omp.h>
#endif

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

enum { ENT_CHUNK = 8192 };
/* 1-based index, value, room: "2147483648 2147483648 " + GT_FMT_MAX + "\n" */
#define ENT_MAX (11 + 11 + GT_FMT_MAX + 1)

static char *put_index(char *p, int32_t i0)
{
    uint32_t v = (uint32_t)i0 + 1u;
    char t[12];
    int n = 0;
    do t[n++] = (char)('0' + v % 10), v /= 10;
    while (v);
    while (n) *p++ = t[--n];
    return p;
}

static size_t format_entries(char *buf, int64_t k0, int64_t k1, const int32_t *row, const int32_t *col,
                             const double *val)
{
    char *p = buf;
    for (int64_t k = k0; k < k1; k++) {
        p = put_index(p, row[k]);
        *p++ = ' ';
        p = put_index(p, col[k]);
        *p++ = ' ';
        p += gt_fmt_double(p, val[k]);
        *p++ = '\n';
    }
    return (size_t)(p - buf);
}

/* The entry lines, chunks formatted in parallel (shortest round-trip
 * values) and written in order; memory stays bounded by a round of chunks.
 * 0, or -1 on a write or memory error. */
static int write_entries(FILE *f, int64_t nnz, const int32_t *row, const int32_t *col, const double *val)
{
    if (nnz == 0) return 0;
    int nth = 1;
#ifdef _OPENMP
    if (nnz >= 20000) nth = omp_get_max_threads();
#endif
    int64_t nchunks = (nnz + ENT_CHUNK - 1) / ENT_CHUNK, per = (int64_t)nth * 2;
    if (per > nchunks) per = nchunks;
    size_t cap = (size_t)ENT_CHUNK * ENT_MAX;
    char *mem = malloc((size_t)per * cap);
    size_t *len = malloc((size_t)per * sizeof *len);
    int rc = 0;
    if (!mem || !len) rc = -1;
    for (int64_t c0 = 0; c0 < nchunks && rc == 0; c0 += per) {
        int64_t m = nchunks - c0 < per ? nchunks - c0 : per;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth) if (m > 1)
        for (int64_t c = 0; c < m; c++) {
            int64_t k0 = (c0 + c) * ENT_CHUNK, k1 = k0 + ENT_CHUNK < nnz ? k0 + ENT_CHUNK : nnz;
            len[c] = format_entries(mem + (size_t)c * cap, k0, k1, row, col, val);
        }
        for (int64_t c = 0; c < m && rc == 0; c++)
            if (fwrite(mem + (size_t)c * cap, 1, len[c], f) != len[c]) rc = -1;
    }
    free(mem);
    free(len);
    return rc;
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
    /* a write error is left in the stream for gt_out_commit to report */
    if (write_entries(f, nnz, row, col, val) != 0 && !ferror(f)) {
        gt_out_abort(&o);
        return gt_fail(GT_ERR_RUNTIME, "out of memory writing '%s'", path);
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
