/* The Matrix Market file in memory (one bulk read; stdin read to its end
 * first), the line cursor the header and array readers use, and the token
 * scanners shared with the parallel coordinate reader. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/output.h"
#include "io/mtx_internal.h"
#include "io/numtext.h"
#include "io/reader.h"

gt_status mtx_text_load(const char *path, mtx_text *t)
{
    memset(t, 0, sizeof *t);
    t->name = path ? path : "-";
    gt_status st;
    FILE *f = gt_in_open(path, &st);
    if (!f) return st;
    gt_reader r;
    st = gt_rd_wrap(&r, f, t->name);
    if (st != GT_OK) {
        gt_in_close(f);
        return st;
    }
    long long fsz = gt_rd_file_size(&r);
    long page = sysconf(_SC_PAGESIZE);
    if (fsz >= ((long long)1 << 20) && page > 0 && fsz % page != 0 && !getenv("GT_MTX_NO_MMAP")) {
        /* the rest of the last page reads as zeros: the NUL after the text */
        void *map = mmap(NULL, (size_t)fsz, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fileno(f), 0);
        if (map != MAP_FAILED) {
            t->buf = map, t->len = (size_t)fsz, t->maplen = (size_t)fsz;
            gt_rd_close(&r);
            gt_in_close(f);
            return GT_OK;
        }
    }
    size_t cap = fsz > 0 ? (size_t)fsz + 1 : (size_t)1 << 20, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        st = gt_fail(GT_ERR_RUNTIME, "out of memory reading '%s' (%zu bytes)", t->name, cap);
        goto out;
    }
    if (fsz > 0) len = gt_rd_bytes_bulk(&r, buf, (size_t)fsz);
    for (;;) { /* a pipe, or a file that grew since its size was taken */
        if (r.err) break;
        if (len == cap) {
            size_t nc = cap * 2;
            char *nb = realloc(buf, nc + 1);
            if (!nb) {
                st = gt_fail(GT_ERR_RUNTIME, "out of memory reading '%s' (%zu bytes)", t->name, nc);
                goto out;
            }
            buf = nb, cap = nc;
        }
        size_t got = gt_rd_bytes(&r, buf + len, cap - len);
        len += got;
        if (got == 0) break;
    }
    if (r.err) {
        st = gt_rd_ioerr(&r);
        goto out;
    }
    buf[len] = 0;
    t->buf = buf, t->len = len;
    buf = NULL;
out:
    free(buf);
    gt_rd_close(&r);
    gt_in_close(f);
    return st;
}

void mtx_text_free(mtx_text *t)
{
    if (t->maplen) munmap(t->buf, t->maplen);
    else free(t->buf);
    free(t->lbuf);
    memset(t, 0, sizeof *t);
}

int mtx_next_line(mtx_text *t)
{
    if (t->pos >= t->len) return 0;
    const char *p = t->buf + t->pos;
    const char *nl = memchr(p, '\n', t->len - t->pos);
    size_t n = nl ? (size_t)(nl - p) : t->len - t->pos;
    t->pos += n + (nl ? 1 : 0);
    t->line++;
    while (n > 0 && p[n - 1] == '\r') n--;
    if (n + 1 > t->lcap) {
        size_t c = n + 1 > 256 ? n + 1 : 256;
        char *b = realloc(t->lbuf, c);
        if (!b) return -1;
        t->lbuf = b, t->lcap = c;
    }
    if (memchr(p, 0, n)) { /* NUL inside a text line: a bad token */
        t->lbuf[0] = 1;
        t->lbuf[1] = 0;
        return 1;
    }
    memcpy(t->lbuf, p, n);
    t->lbuf[n] = 0;
    return 1;
}

int mtx_next_content(mtx_text *t)
{
    int r;
    while ((r = mtx_next_line(t)) == 1)
        if (t->lbuf[0] != '%' && *mtx_skip_ws(t->lbuf) != 0) return 1;
    return r;
}

void mtx_tok_copy(char *dst, size_t n, const char *s, const char *e)
{
    while (s < e && mtx_is_blank(*s)) s++;
    size_t i = 0;
    while (s + i < e && s[i] && !mtx_is_blank(s[i]) && i + 1 < n) {
        dst[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
        i++;
    }
    dst[i] = 0;
}

static int tok_end(const char *p, const char *e) { return p == e || mtx_is_blank(*p); }

int mtx_parse_i64(const char **s, const char *e, int64_t *v)
{
    const char *p = *s;
    while (p < e && mtx_is_blank(*p)) p++;
    if (p >= e) return 0;
    while (p < e && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++; /* as strtoll skips them */
    const char *q = p;
    bool neg = false;
    if (*q == '+' || *q == '-') neg = *q++ == '-';
    const char *d0 = q;
    uint64_t x = 0;
    while (q < e && (unsigned)(*q - '0') < 10 && q - d0 < 18) x = x * 10 + (uint64_t)(*q++ - '0');
    if (q == d0) return 0;
    if (q < e && (unsigned)(*q - '0') < 10) { /* 19 digits or more: strtoll decides */
        char tmp[64];
        size_t n = 0;
        while (p + n < e && !mtx_is_blank(p[n]) && n < sizeof tmp - 1) n++;
        if (p + n < e && !mtx_is_blank(p[n])) return 0;
        memcpy(tmp, p, n);
        tmp[n] = 0;
        char *end;
        errno = 0;
        long long y = strtoll(tmp, &end, 10);
        if (errno == ERANGE || *end) return 0;
        *v = y;
        *s = p + n;
        return 1;
    }
    if (!tok_end(q, e)) return 0;
    *v = neg ? -(int64_t)x : (int64_t)x;
    *s = q;
    return 1;
}

int mtx_parse_f64(const char **s, const char *e, double *v)
{
    const char *p = *s;
    while (p < e && mtx_is_blank(*p)) p++;
    if (p >= e) return 0;
    const char *end;
    double x;
    if (!gt_scan_double(p, &end, &x) || end > e || !tok_end(end, e)) return 0;
    if (isinf(x)) { /* written "inf"/"infinity" is read; an overflow is not */
        const char *q = p + (*p == '+' || *p == '-');
        if (*q != 'i' && *q != 'I') return 0;
    }
    *v = x;
    *s = end;
    return 1;
}
