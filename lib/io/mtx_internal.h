/* Shared between the Matrix Market reader's parts (mtx_text.c, mtx_header.c,
 * mtx_coo.c, mtx_coo_build.c, mtx_array.c, mtx.c): the whole file in memory, a line cursor
 * over it for the header and array bodies, the coordinate body's chunks,
 * and the small token helpers. */
#ifndef GT_MTX_INTERNAL_H
#define GT_MTX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/alloc.h"
#include "io/mtx.h"

/* The file's bytes, NUL-terminated (buf[len] == 0), and a line cursor. */
typedef struct mtx_text {
    char *buf;
    size_t len;
    size_t maplen;   /* buf is a read-only mapping of this many bytes (0: malloc'ed) */
    size_t pos;      /* start of the next line */
    long line;       /* number of the line last returned (1-based) */
    const char *name;
    char *lbuf;      /* the current line, NUL-terminated, trailing \r stripped */
    size_t lcap;
} mtx_text;

/* All of path ("-" = stdin) in t->buf: a regular file is mapped (private,
 * populated: no copy, no zeroed pages) when its size leaves room for the
 * NUL in its last page, else read (threaded pread on a regular file).
 * GT_ERR_RUNTIME when it cannot be opened or read. */
gt_status mtx_text_load(const char *path, mtx_text *t);
void mtx_text_free(mtx_text *t);

/* Next line into t->lbuf as the old getline reader gave it: trailing \r
 * stripped, a line holding a NUL byte replaced by "\x01" (a bad token).
 * 1, or 0 at the end; -1 when out of memory. */
int mtx_next_line(mtx_text *t);
/* Next line that is neither blank nor a '%' comment. */
int mtx_next_content(mtx_text *t);

/* Header: banner and size line; leaves the cursor after the size line and
 * m->nnz = the declared entry count. */
gt_status mtx_read_header(mtx_text *t, gt_mtx *m);

/* Bodies: the coordinate reader (parallel) builds CSR in m->ptr/col/val
 * when want_csr, else sorted COO in m->row/col/val; the array reader fills
 * m->dense. */
gt_status mtx_read_coo(mtx_text *t, gt_mtx *m, bool want_csr);
gt_status mtx_read_array(mtx_text *t, gt_mtx *m);

/* One chunk of a coordinate body: parsed by one thread (mtx_coo.c), then
 * assembled (mtx_coo_build.c). */
typedef struct mtx_chunk {
    const char *b, *e;     /* [b, e): e is just after a '\n' or the end of the file */
    int32_t *r, *c;        /* entries in file order, 0-based */
    double *v;
    int64_t n, cap;
    int64_t lines, content; /* lines and content lines seen (up to the error) */
    int err;
    int64_t err_line, err_content; /* its line in the chunk (1-based), content lines before it */
    int64_t ei, ej;
    char tok[24];
} mtx_chunk;

/* The large arrays, in huge pages (common/alloc.h; measured: page faults on
 * fresh memory were a quarter of a one-thread read). */
static inline void *mtx_big_alloc(size_t n)
{
    return gt_malloc_huge(n, "the matrix's arrays");
}
/* The chunks' entries (total: before mirroring) as CSR in m->ptr/col/val,
 * nth threads; the chunks' entry arrays are freed as they are used. */
gt_status mtx_coo_build_csr(gt_mtx *m, mtx_chunk *ck, int64_t nck, int64_t total, int nth);
/* The same as sorted COO in m->row/col/val, without any array of the row
 * count. */
gt_status mtx_coo_build_sorted(gt_mtx *m, const mtx_chunk *ck, int64_t nck, int64_t total);

/* Tokens */
static inline int mtx_is_blank(char c) { return c == ' ' || c == '\t'; }
static inline const char *mtx_skip_ws(const char *s)
{
    while (mtx_is_blank(*s)) s++;
    return s;
}
/* Copy the token at s (after blanks) into dst, at most n-1 characters,
 * stopping at a blank, a NUL or e (the line's end); unprintable bytes
 * become '?'. */
void mtx_tok_copy(char *dst, size_t n, const char *s, const char *e);
/* Decimal integer token at *s (after blanks), bounded by e; advances *s
 * past it. The token must end at e or at a blank. 0 when it is not one or
 * is out of int64 range (as strtoll with ERANGE). */
int mtx_parse_i64(const char **s, const char *e, int64_t *v);
/* Number token (strtod's syntax, gt_scan_double), same rules; an overflow
 * to infinity fails, "inf"/"nan" written out are read (the caller rejects them). */
int mtx_parse_f64(const char **s, const char *e, double *v);

#endif
