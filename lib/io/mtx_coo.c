/* The body of a coordinate Matrix Market file, in parallel, straight to CSR.
 *
 * The body (already in memory) is cut at line boundaries into chunks that
 * threads parse independently into entry lists (mtx_chunk), each counting
 * its lines and content lines. The first error in file order is then found
 * serially: a chunk's own first error wins unless the declared entry count
 * ran out before it (then "more entries than declared", as a serial reader
 * sees it), and line numbers are the lines of the header and of the chunks
 * before. The entries are then assembled (mtx_coo_build.c): CSR by groups
 * of consecutive chunks (one per thread), per-group row counts -> row
 * offsets -> scatter, so every row holds its entries in file order whatever
 * the thread count; symmetric and skew-symmetric entries are mirrored
 * there. Each row is then sorted stably by column and duplicates summed in
 * that order, so the result is the same bit for bit for any number of
 * threads or chunk size.
 * GT_READ_THREADS sets the threads (default: OpenMP's); GT_MTX_CHUNK_BYTES
 * forces the chunk size (a test hook: boundaries at every position);
 * GT_NO_HUGEPAGE=1 keeps the large arrays out of huge pages (to compare). */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "io/mtx_internal.h"
#include "io/numtext.h"

#ifdef _OPENMP
#include <omp.h>
#endif

enum { E_NONE, E_OOM, E_BADIDX, E_BADVAL, E_NONFINITE, E_BADINT, E_EXTRA, E_RANGE, E_UPPER, E_SKEW };


static int read_threads(void)
{
    const char *s = getenv("GT_READ_THREADS");
    if (s && *s) {
        int n = atoi(s);
        if (n >= 1) return n > 256 ? 256 : n;
    }
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static bool grow(mtx_chunk *k)
{
    if (!k->cap) { /* the first guess: lines of 12 bytes or more */
        int64_t nc = (int64_t)((k->e - k->b) / 12 + 64);
        k->r = mtx_big_alloc((size_t)nc * sizeof *k->r);
        k->c = mtx_big_alloc((size_t)nc * sizeof *k->c);
        k->v = mtx_big_alloc((size_t)nc * sizeof *k->v);
        if (!k->r || !k->c || !k->v) return false;
        k->cap = nc;
        return true;
    }
    int64_t nc = k->cap + k->cap / 2;
    int32_t *r = realloc(k->r, (size_t)nc * sizeof *r);
    if (r) k->r = r;
    int32_t *c = realloc(k->c, (size_t)nc * sizeof *c);
    if (c) k->c = c;
    double *v = realloc(k->v, (size_t)nc * sizeof *v);
    if (v) k->v = v;
    if (!r || !c || !v) return false;
    k->cap = nc;
    return true;
}

/* Unsigned decimal of up to 18 digits ending at a blank or e: the common
 * case, inline; anything else (sign, more digits) goes to mtx_parse_i64. */
static inline int scan_index(const char **s, const char *e, int64_t *v)
{
    const char *p = *s;
    while (p < e && mtx_is_blank(*p)) p++;
    const char *d = p;
    uint64_t x = 0;
    while (p < e && (unsigned)(*p - '0') < 10 && p - d < 18) x = x * 10 + (uint64_t)(*p++ - '0');
    if (p > d && (p == e || mtx_is_blank(*p))) {
        *v = (int64_t)x;
        *s = p;
        return 1;
    }
    return mtx_parse_i64(s, e, v);
}

/* Plain decimals ([-]digits[.digits][e[+-]digits], at most 19 significant
 * digits) whose value is w * 10^q with w <= 2^53 and |q| <= 22: both exact
 * doubles, so one multiplication or division rounds correctly (the fast
 * path of gt_scan_double, inline here). Anything else, mtx_parse_f64. */
static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline int scan_value(const char **s, const char *e, double *v)
{
    const char *p = *s;
    while (p < e && mtx_is_blank(*p)) p++;
    const char *start = p;
    bool neg = p < e && *p == '-';
    if (p < e && (*p == '-' || *p == '+')) p++;
    uint64_t w = 0;
    const char *d0 = p;
    while (p < e && (unsigned)(*p - '0') < 10) w = w * 10 + (uint64_t)(*p++ - '0');
    int nd = (int)(p - d0), q = 0;
    if (p < e && *p == '.') {
        const char *f = ++p;
        while (p < e && (unsigned)(*p - '0') < 10) w = w * 10 + (uint64_t)(*p++ - '0');
        nd += (int)(p - f);
        q = -(int)(p - f);
    }
    if (nd == 0 || nd > 19) goto slow;
    if (p < e && (*p == 'e' || *p == 'E')) {
        const char *x = p + 1;
        bool xneg = x < e && *x == '-';
        if (x < e && (*x == '-' || *x == '+')) x++;
        if (!(x < e && (unsigned)(*x - '0') < 10)) goto slow;
        int ex = 0;
        while (x < e && (unsigned)(*x - '0') < 10 && ex < 10000) ex = ex * 10 + (*x++ - '0');
        q += xneg ? -ex : ex;
        p = x;
    }
    if (!(p == e || mtx_is_blank(*p)) || w > (UINT64_C(1) << 53) || q < -22 || q > 22) goto slow;
    {
        double r = (double)w;
        r = q < 0 ? r / p10[-q] : r * p10[q];
        *v = neg ? -r : r;
        *s = p;
        return 1;
    }
slow:
    *s = start;
    return mtx_parse_f64(s, e, v);
}

static void fail(mtx_chunk *k, int kind, const char *tok, const char *e, int64_t i, int64_t j)
{
    k->err = kind;
    k->err_line = k->lines;
    k->err_content = k->content;
    k->ei = i, k->ej = j;
    k->tok[0] = 0;
    if (tok) mtx_tok_copy(k->tok, sizeof k->tok, tok, e);
}

/* The common line, "i j v" (or "i j") with plain digits, a plain decimal
 * and the line's end, in one pass without looking for the end first: the
 * scan stops at the line's '\n' (or at the NUL after the text, the end of
 * the last chunk), never beyond. 0 for anything else, which the careful path
 * then reads (and names, when it is an error). */
static inline int fast_line(const char *p, const char *end, gt_mtx_field field, int64_t *pi, int64_t *pj,
                            double *pv, const char **next)
{
    const char *s = p;
    while (mtx_is_blank(*s)) s++;
    int64_t i = 0, j = 0;
    const char *d = s;
    while ((unsigned)(*s - '0') < 10 && s - d < 10) i = i * 10 + (*s++ - '0');
    if (s == d || !mtx_is_blank(*s)) return 0;
    while (mtx_is_blank(*s)) s++;
    d = s;
    while ((unsigned)(*s - '0') < 10 && s - d < 10) j = j * 10 + (*s++ - '0');
    if (s == d) return 0;
    double v = 1.0;
    if (field == GT_MTX_REAL) {
        if (!mtx_is_blank(*s)) return 0;
        while (mtx_is_blank(*s)) s++;
        bool neg = *s == '-';
        if (*s == '-' || *s == '+') s++;
        uint64_t w = 0;
        d = s;
        while ((unsigned)(*s - '0') < 10) w = w * 10 + (uint64_t)(*s++ - '0');
        int nd = (int)(s - d), q = 0;
        if (*s == '.') {
            const char *f = ++s;
            while ((unsigned)(*s - '0') < 10) w = w * 10 + (uint64_t)(*s++ - '0');
            nd += (int)(s - f);
            q = -(int)(s - f);
        }
        if (nd == 0 || nd > 19) return 0;
        if (*s == 'e' || *s == 'E') {
            s++;
            bool xneg = *s == '-';
            if (*s == '-' || *s == '+') s++;
            d = s;
            int ex = 0;
            while ((unsigned)(*s - '0') < 10 && s - d < 4) ex = ex * 10 + (*s++ - '0');
            if (s == d || (unsigned)(*s - '0') < 10) return 0;
            q += xneg ? -ex : ex;
        }
        if (w > (UINT64_C(1) << 53) || q < -22 || q > 22) return 0;
        v = q < 0 ? (double)w / p10[-q] : (double)w * p10[q];
        if (neg) v = -v;
    } else if (field != GT_MTX_PATTERN) {
        return 0;
    }
    while (mtx_is_blank(*s)) s++;
    while (*s == '\r') s++;
    if (*s == '\n') *next = s + 1;
    else if (s == end) *next = end;
    else return 0;
    *pi = i, *pj = j, *pv = v;
    return 1;
}

static void parse_chunk(mtx_chunk *k, const gt_mtx *m)
{
    const char *p = k->b, *end = k->e;
    const int64_t nr = m->nrows, nc = m->ncols;
    const gt_mtx_field field = m->field;
    const gt_mtx_symmetry sym = m->symmetry;
    while (p < end) {
        {
            int64_t i, j;
            double v;
            const char *nx;
            if (fast_line(p, end, field, &i, &j, &v, &nx) && i >= 1 && i <= nr && j >= 1 && j <= nc &&
                (sym == GT_MTX_GENERAL || i > j || (sym == GT_MTX_SYMMETRIC && i == j))) {
                if (k->n == k->cap && !grow(k)) {
                    k->lines++;
                    fail(k, E_OOM, NULL, NULL, 0, 0);
                    return;
                }
                k->r[k->n] = (int32_t)(i - 1);
                k->c[k->n] = (int32_t)(j - 1);
                k->v[k->n] = v;
                k->n++;
                k->content++;
                k->lines++;
                p = nx;
                continue;
            }
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *q = nl ? nl : end, *next = nl ? nl + 1 : end;
        k->lines++;
        while (q > p && q[-1] == '\r') q--;
        const char *s = p;
        p = next;
        if (s < q && *s == '%' && !memchr(s, 0, (size_t)(q - s))) continue; /* comment */
        const char *line = s;
        while (s < q && mtx_is_blank(*s)) s++;
        if (s == q) continue; /* blank */
        int64_t i, j;
        double v = 1.0;
        const char *t = s;
        int kind = E_NONE;
        const char *at = NULL;
        if (!scan_index(&t, q, &i) || !scan_index(&t, q, &j)) {
            kind = E_BADIDX, at = t;
        } else if (field == GT_MTX_REAL) {
            const char *vp = t;
            if (!scan_value(&t, q, &v)) kind = E_BADVAL, at = t;
            else if (!isfinite(v)) kind = E_NONFINITE, at = vp;
        } else if (field == GT_MTX_INTEGER) {
            int64_t iv;
            if (!mtx_parse_i64(&t, q, &iv)) kind = E_BADINT, at = t;
            v = (double)iv;
        }
        if (kind == E_NONE) {
            while (t < q && mtx_is_blank(*t)) t++;
            if (t < q) kind = E_EXTRA, at = t;
        }
        if (kind == E_NONE && (i < 1 || i > nr || j < 1 || j > nc)) kind = E_RANGE;
        if (kind == E_NONE && sym == GT_MTX_SYMMETRIC && i < j) kind = E_UPPER;
        if (kind == E_NONE && sym == GT_MTX_SKEW && i <= j) kind = E_SKEW;
        if (kind != E_NONE) {
            if (memchr(line, 0, (size_t)(q - line))) { /* a NUL byte: one bad token, as a line reader sees it */
                static const char bad[] = "\x01";
                fail(k, E_BADIDX, bad, bad + 1, 0, 0);
            } else {
                fail(k, kind, at, q, i, j);
            }
            return;
        }
        if (k->n == k->cap && !grow(k)) {
            fail(k, E_OOM, NULL, NULL, 0, 0);
            return;
        }
        k->r[k->n] = (int32_t)(i - 1);
        k->c[k->n] = (int32_t)(j - 1);
        k->v[k->n] = v;
        k->n++;
        k->content++;
    }
}

/* Line (1-based, in the chunk) of the chunk's content line number `idx` (0-based). */
static int64_t content_line(const mtx_chunk *k, int64_t idx)
{
    const char *p = k->b;
    int64_t line = 0, seen = 0;
    while (p < k->e) {
        const char *nl = memchr(p, '\n', (size_t)(k->e - p));
        const char *q = nl ? nl : k->e;
        line++;
        while (q > p && q[-1] == '\r') q--;
        bool content = !(p < q && *p == '%' && !memchr(p, 0, (size_t)(q - p)));
        if (content) {
            const char *s = p;
            while (s < q && mtx_is_blank(*s)) s++;
            content = s < q;
        }
        if (content && seen++ == idx) return line;
        p = nl ? nl + 1 : k->e;
    }
    return line;
}

static gt_status report(const mtx_text *t, const gt_mtx *m, const mtx_chunk *k, long line)
{
    const char *f = t->name;
    switch (k->err) {
    case E_OOM:
        return gt_fail(GT_ERR_RUNTIME, "out of memory reading a Matrix Market file (%s)", f);
    case E_BADIDX:
        return gt_fail_at(GT_ERR_DATA, f, line, "bad entry: expected 'row col%s', bad token '%s'",
                          m->field == GT_MTX_PATTERN ? "" : " value", k->tok);
    case E_BADVAL: return gt_fail_at(GT_ERR_DATA, f, line, "bad or missing value '%s'", k->tok);
    case E_NONFINITE:
        return gt_fail_at(GT_ERR_DATA, f, line, "value '%s' of entry (%lld, %lld) is not a finite number", k->tok,
                          (long long)k->ei, (long long)k->ej);
    case E_BADINT: return gt_fail_at(GT_ERR_DATA, f, line, "bad or missing integer value '%s'", k->tok);
    case E_EXTRA: return gt_fail_at(GT_ERR_DATA, f, line, "extra text '%s' after the entry", k->tok);
    case E_RANGE:
        return gt_fail_at(GT_ERR_DATA, f, line, "index (%lld, %lld) outside the %lld x %lld matrix (indices are 1-based)",
                          (long long)k->ei, (long long)k->ej, (long long)m->nrows, (long long)m->ncols);
    case E_UPPER:
        return gt_fail_at(GT_ERR_DATA, f, line,
                          "entry (%lld, %lld) above the diagonal in a symmetric matrix (only the lower triangle is stored)",
                          (long long)k->ei, (long long)k->ej);
    default:
        return gt_fail_at(GT_ERR_DATA, f, line,
                          "entry (%lld, %lld) on or above the diagonal in a skew-symmetric matrix (only the strict "
                          "lower triangle is stored)",
                          (long long)k->ei, (long long)k->ej);
    }
}

/* The first error in file order, or the entry count against the declared one. */
static gt_status check_chunks(const mtx_text *t, const gt_mtx *m, const mtx_chunk *ck, int64_t nck, int64_t declared)
{
    long before = t->line; /* lines before the body */
    int64_t got = 0;
    for (int64_t c = 0; c < nck; c++) {
        const mtx_chunk *k = &ck[c];
        if (k->err && (k->err == E_OOM || got + k->err_content < declared))
            return report(t, m, k, before + (long)k->err_line);
        if (k->err || got + k->content > declared)
            return gt_fail_at(GT_ERR_DATA, t->name, before + (long)content_line(k, declared - got),
                              "more entries than the %lld declared on the size line", (long long)declared);
        got += k->content;
        before += (long)k->lines;
    }
    if (got < declared)
        return gt_fail_at(GT_ERR_DATA, t->name, before + 1, "file ends after %lld of %lld entries", (long long)got,
                          (long long)declared);
    return GT_OK;
}

gt_status mtx_read_coo(mtx_text *t, gt_mtx *m, bool want_csr)
{
    const int64_t declared = m->nnz;
    const char *body = t->buf + t->pos;
    const size_t blen = t->len - t->pos;
    int nth = read_threads();
    size_t csz;
    const char *hook = getenv("GT_MTX_CHUNK_BYTES");
    if (hook && atol(hook) > 0) csz = (size_t)atol(hook);
    else {
        if (blen < ((size_t)1 << 20)) nth = 1;
        csz = blen / ((size_t)nth * 4) + 1;
        if (csz < ((size_t)256 << 10)) csz = (size_t)256 << 10;
    }
    int64_t nck = (int64_t)((blen + csz - 1) / csz);
    if (nck < 1) nck = 1;
    mtx_chunk *ck = calloc((size_t)nck, sizeof *ck);
    if (!ck) return gt_fail(GT_ERR_RUNTIME, "out of memory reading '%s'", t->name);
    size_t at = 0;
    for (int64_t c = 0; c < nck; c++) {
        size_t x = c == nck - 1 ? blen : (size_t)(c + 1) * csz;
        if (x < at) x = at;
        if (x < blen && !(x > 0 && body[x - 1] == '\n')) {
            const char *nl = memchr(body + x, '\n', blen - x);
            x = nl ? (size_t)(nl - body) + 1 : blen;
        }
        ck[c].b = body + at, ck[c].e = body + x;
        at = x;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth) if (nck > 1 && nth > 1)
    for (int64_t c = 0; c < nck; c++) parse_chunk(&ck[c], m);
    gt_status st = check_chunks(t, m, ck, nck, declared);
    if (st == GT_OK) {
        const int64_t total = declared; /* entries in the file, before mirroring */
        bool rows_fit = m->nrows <= 4 * total + 4096 && 2 * total < INT32_MAX;
        if (rows_fit) {
            st = mtx_coo_build_csr(m, ck, nck, total, nth);
            if (st == GT_OK && !want_csr) { /* row indices from the offsets */
                int32_t *row = malloc((size_t)(m->nnz ? m->nnz : 1) * sizeof *row);
                if (!row) st = gt_fail(GT_ERR_RUNTIME, "out of memory for %lld matrix entries", (long long)m->nnz);
                else {
                    const int64_t *ptr = m->ptr;
#pragma omp parallel for schedule(static) num_threads(nth)
                    for (int64_t i = 0; i < m->nrows; i++)
                        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) row[p] = (int32_t)i;
                    m->row = row;
                    free(m->ptr);
                    m->ptr = NULL;
                }
            }
        } else {
            st = mtx_coo_build_sorted(m, ck, nck, total);
        }
    }
    for (int64_t c = 0; c < nck; c++) free(ck[c].r), free(ck[c].c), free(ck[c].v);
    free(ck);
    return st;
}
