/* Matrix Market reader and writer (see mtx.h).
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

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/numrows.h"

typedef struct {
    FILE *f;
    const char *name;
    char *buf;
    size_t cap;
    long line;
} lines;

/* Next line (trailing \r\n stripped) into l->buf; 0 at EOF, -1 on read error. */
static int next_line(lines *l)
{
    ssize_t n = getline(&l->buf, &l->cap, l->f);
    if (n < 0) return ferror(l->f) ? -1 : 0;
    l->line++;
    while (n > 0 && (l->buf[n - 1] == '\n' || l->buf[n - 1] == '\r')) l->buf[--n] = 0;
    if (memchr(l->buf, 0, (size_t)n)) { /* NUL inside a text line */
        l->buf[0] = 1;                  /* makes the parser report a bad token */
        l->buf[1] = 0;
    }
    return 1;
}

static int blank(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return *s == 0;
}

/* Next content line (not blank, not a % comment). */
static int next_content(lines *l)
{
    int r;
    while ((r = next_line(l)) == 1)
        if (l->buf[0] != '%' && !blank(l->buf)) return 1;
    return r;
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

/* Parse a decimal integer token at *s; advances *s. */
static int parse_i64(const char **s, int64_t *v)
{
    const char *p = skip_ws(*s);
    if (!*p) return 0;
    char *end;
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (end == p || errno == ERANGE || (*end && *end != ' ' && *end != '\t')) return 0;
    *v = x;
    *s = end;
    return 1;
}

static int parse_f64(const char **s, double *v)
{
    const char *p = skip_ws(*s);
    if (!*p) return 0;
    char *end;
    errno = 0;
    double x = strtod(p, &end);
    if (end == p || (*end && *end != ' ' && *end != '\t')) return 0;
    if (errno == ERANGE && isinf(x)) return 0; /* overflow; underflow to 0/denormal is fine */
    *v = x;
    *s = end;
    return 1;
}

static void tok_copy(char *dst, size_t n, const char *s)
{
    s = skip_ws(s);
    size_t i = 0;
    while (s[i] && s[i] != ' ' && s[i] != '\t' && i + 1 < n) {
        dst[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
        i++;
    }
    dst[i] = 0;
}

typedef struct {
    int32_t r, c;
    double v;
} entry;

typedef struct {
    entry *e;
    int64_t n, cap;
} entries;

static int push(entries *a, int32_t r, int32_t c, double v)
{
    if (a->n == a->cap) {
        int64_t nc = a->cap ? a->cap * 2 : 1024;
        entry *p = realloc(a->e, (size_t)nc * sizeof *p);
        if (!p) {
            gt_fail(GT_ERR_RUNTIME, "out of memory reading a Matrix Market file (%lld entries)",
                    (long long)a->n);
            return 0;
        }
        a->e = p;
        a->cap = nc;
    }
    a->e[a->n++] = (entry){r, c, v};
    return 1;
}

static int cmp_col(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return (x->c > y->c) - (x->c < y->c);
}

static int cmp_row_col(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->r != y->r) return (x->r > y->r) - (x->r < y->r);
    return (x->c > y->c) - (x->c < y->c);
}

/* Sort by (row, col) and sum duplicates; writes the result into m. A counting
 * sort on rows then each row by column when the row count is of the order of
 * the entry count (the usual case); a plain sort otherwise, so that a size
 * line declaring billions of rows over a few entries allocates nothing big. */
static gt_status finish_coo(entries *a, int64_t nrows, bool pattern, gt_mtx *m)
{
    int64_t n = a->n;
    entry *s = malloc((size_t)(n ? n : 1) * sizeof *s);
    if (!s) return gt_fail(GT_ERR_RUNTIME, "out of memory sorting %lld matrix entries", (long long)n);
    if (nrows > 4 * n + 4096) {
        if (n > 0) { /* a->e is NULL when there are no entries */
            memcpy(s, a->e, (size_t)n * sizeof *s);
            qsort(s, (size_t)n, sizeof *s, cmp_row_col);
        }
    } else {
        int64_t *start = calloc((size_t)nrows + 1, sizeof *start);
        if (!start) {
            free(s);
            return gt_fail(GT_ERR_RUNTIME, "out of memory sorting %lld matrix entries", (long long)n);
        }
        for (int64_t k = 0; k < n; k++) start[a->e[k].r + 1]++;
        for (int64_t i = 0; i < nrows; i++) start[i + 1] += start[i];
        for (int64_t k = 0; k < n; k++) s[start[a->e[k].r]++] = a->e[k];
        /* start[i] is now the end of row i */
        int64_t b = 0;
        for (int64_t i = 0; i < nrows; i++) {
            int64_t e = start[i];
            if (e - b > 1) qsort(s + b, (size_t)(e - b), sizeof *s, cmp_col);
            b = e;
        }
        free(start);
    }
    int64_t out = 0;
    for (int64_t k = 0; k < n; k++) {
        if (out > 0 && s[out - 1].r == s[k].r && s[out - 1].c == s[k].c) {
            if (!pattern) s[out - 1].v += s[k].v;
        } else {
            s[out++] = s[k];
        }
    }
    free(a->e);
    a->e = NULL;
    m->nnz = out;
    size_t cnt = (size_t)(out ? out : 1);
    m->row = malloc(cnt * sizeof *m->row);
    m->col = malloc(cnt * sizeof *m->col);
    m->val = malloc(cnt * sizeof *m->val);
    if (!m->row || !m->col || !m->val) {
        free(s);
        return gt_fail(GT_ERR_RUNTIME, "out of memory for %lld matrix entries", (long long)out);
    }
    for (int64_t k = 0; k < out; k++) {
        m->row[k] = s[k].r;
        m->col[k] = s[k].c;
        m->val[k] = s[k].v;
    }
    free(s);
    return GT_OK;
}

static gt_status read_header(lines *l, gt_mtx *m)
{
    int r = next_line(l);
    if (r < 0) return gt_fail(GT_ERR_RUNTIME, "read error on '%s': %s", l->name, strerror(errno));
    if (r == 0) return gt_fail_at(GT_ERR_DATA, l->name, 1, "empty file, expected a %%%%MatrixMarket banner");
    char w[5][32] = {{0}};
    int nw = sscanf(l->buf, "%31s %31s %31s %31s %31s", w[0], w[1], w[2], w[3], w[4]);
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

    r = next_content(l);
    if (r < 0) return gt_fail(GT_ERR_RUNTIME, "read error on '%s': %s", l->name, strerror(errno));
    if (r == 0) return gt_fail_at(GT_ERR_DATA, l->name, l->line + 1, "file ends before the size line");
    const char *p = l->buf;
    int64_t nr, nc, nnz = 0;
    char tok[24];
    if (!parse_i64(&p, &nr) || !parse_i64(&p, &nc) || (!m->is_array && !parse_i64(&p, &nnz))) {
        tok_copy(tok, sizeof tok, p);
        return gt_fail_at(GT_ERR_DATA, l->name, l->line, "bad size line: expected %s, got '%s'",
                          m->is_array ? "'rows cols'" : "'rows cols entries'", l->buf[0] ? tok : "");
    }
    if (!blank(p)) return gt_fail_at(GT_ERR_DATA, l->name, l->line, "extra text after the size line");
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

static gt_status read_coo(lines *l, gt_mtx *m)
{
    int64_t declared = m->nnz;
    entries a = {0};
    gt_status st = GT_OK;
    for (int64_t k = 0; k < declared; k++) {
        int r = next_content(l);
        if (r < 0) {
            st = gt_fail(GT_ERR_RUNTIME, "read error on '%s': %s", l->name, strerror(errno));
            goto out;
        }
        if (r == 0) {
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line + 1, "file ends after %lld of %lld entries",
                            (long long)k, (long long)declared);
            goto out;
        }
        const char *p = l->buf;
        int64_t i, j;
        double v = 1.0;
        char tok[24];
        if (!parse_i64(&p, &i) || !parse_i64(&p, &j)) {
            tok_copy(tok, sizeof tok, p);
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "bad entry: expected 'row col%s', bad token '%s'",
                            m->field == GT_MTX_PATTERN ? "" : " value", tok);
            goto out;
        }
        if (m->field == GT_MTX_REAL) {
            const char *vp = p;
            if (!parse_f64(&p, &v)) {
                tok_copy(tok, sizeof tok, p);
                st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "bad or missing value '%s'", tok);
                goto out;
            }
            if (!isfinite(v)) {
                tok_copy(tok, sizeof tok, vp);
                st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "value '%s' of entry (%lld, %lld) is not a finite number",
                                tok, (long long)i, (long long)j);
                goto out;
            }
        } else if (m->field == GT_MTX_INTEGER) {
            int64_t iv;
            if (!parse_i64(&p, &iv)) {
                tok_copy(tok, sizeof tok, p);
                st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "bad or missing integer value '%s'", tok);
                goto out;
            }
            v = (double)iv;
        }
        if (!blank(p)) {
            tok_copy(tok, sizeof tok, p);
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "extra text '%s' after the entry", tok);
            goto out;
        }
        if (i < 1 || i > m->nrows || j < 1 || j > m->ncols) {
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "index (%lld, %lld) outside the %lld x %lld matrix (indices are 1-based)",
                            (long long)i, (long long)j, (long long)m->nrows, (long long)m->ncols);
            goto out;
        }
        if (m->symmetry == GT_MTX_SYMMETRIC && i < j) {
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line,
                            "entry (%lld, %lld) above the diagonal in a symmetric matrix (only the lower triangle is stored)",
                            (long long)i, (long long)j);
            goto out;
        }
        if (m->symmetry == GT_MTX_SKEW && i <= j) {
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line,
                            "entry (%lld, %lld) on or above the diagonal in a skew-symmetric matrix (only the strict lower triangle is stored)",
                            (long long)i, (long long)j);
            goto out;
        }
        int32_t r0 = (int32_t)(i - 1), c0 = (int32_t)(j - 1);
        if (!push(&a, r0, c0, v)) {
            st = GT_ERR_RUNTIME;
            goto out;
        }
        if (m->symmetry != GT_MTX_GENERAL && r0 != c0 &&
            !push(&a, c0, r0, m->symmetry == GT_MTX_SKEW ? -v : v)) {
            st = GT_ERR_RUNTIME;
            goto out;
        }
    }
    {
        int r = next_content(l);
        if (r == 1) {
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "more entries than the %lld declared on the size line",
                            (long long)declared);
            goto out;
        }
    }
    st = finish_coo(&a, m->nrows, m->field == GT_MTX_PATTERN, m);
out:
    free(a.e);
    return st;
}

static gt_status read_array(lines *l, gt_mtx *m)
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
        int r = next_content(l);
        if (r < 0) {
            st = gt_fail(GT_ERR_RUNTIME, "read error on '%s': %s", l->name, strerror(errno));
            goto out;
        }
        if (r == 0) {
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line + 1, "file ends after %lld of %lld values",
                            (long long)got, (long long)want);
            goto out;
        }
        double v;
        const char *p = l->buf;
        char tok[24];
        int ok;
        if (m->field == GT_MTX_INTEGER) {
            int64_t iv;
            ok = parse_i64(&p, &iv);
            v = (double)iv;
        } else {
            ok = parse_f64(&p, &v);
        }
        if (!ok) {
            tok_copy(tok, sizeof tok, p);
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "bad value '%s'", tok);
            goto out;
        }
        if (!isfinite(v)) {
            tok_copy(tok, sizeof tok, l->buf);
            st = gt_fail_at(GT_ERR_DATA, l->name, l->line, "value '%s' (number %lld of the array) is not a finite number",
                            tok, (long long)got + 1);
            goto out;
        }
        if (!blank(p)) {
            tok_copy(tok, sizeof tok, p);
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
    if (next_content(l) == 1) {
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

gt_status gt_mtx_read(const char *path, gt_mtx *m)
{
    memset(m, 0, sizeof *m);
    gt_status st;
    FILE *f = gt_in_open(path, &st);
    if (!f) return st;
    lines l = {f, path ? path : "-", NULL, 0, 0};
    st = read_header(&l, m);
    if (st == GT_OK) st = m->is_array ? read_array(&l, m) : read_coo(&l, m);
    free(l.buf);
    gt_in_close(f);
    if (st != GT_OK) {
        gt_mtx_free(m);
    }
    return st;
}

void gt_mtx_free(gt_mtx *m)
{
    if (!m) return;
    free(m->row);
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
