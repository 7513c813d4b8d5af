/* Buffered streaming reader with line and byte-offset tracking (see reader.h). */
#include "io/reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/output.h"

static gt_status rd_init(gt_reader *r, FILE *f, const char *name, bool own)
{
    memset(r, 0, sizeof *r);
    r->f = f;
    r->name = name;
    r->own = own;
    r->buf = malloc(GT_RD_BUF);
    r->lbuf = malloc(GT_RD_MAX_LINE + 1);
    if (!r->buf || !r->lbuf) {
        free(r->buf);
        free(r->lbuf);
        if (own) gt_in_close(f);
        memset(r, 0, sizeof *r);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (reader buffer)");
    }
    return GT_OK;
}

gt_status gt_rd_open(gt_reader *r, const char *path)
{
    gt_status st;
    FILE *f = gt_in_open(path, &st);
    if (!f) {
        memset(r, 0, sizeof *r);
        return st;
    }
    return rd_init(r, f, gt_in_name(path), true);
}

gt_status gt_rd_wrap(gt_reader *r, FILE *f, const char *name)
{
    return rd_init(r, f, name, false);
}

void gt_rd_close(gt_reader *r)
{
    if (r->own && r->f) gt_in_close(r->f);
    free(r->buf);
    free(r->lbuf);
    memset(r, 0, sizeof *r);
}

size_t gt_rd_fill(gt_reader *r, size_t want)
{
    if (want > GT_RD_BUF) want = GT_RD_BUF;
    size_t avail = r->len - r->pos;
    if (avail >= want || r->eof || r->err) return avail;
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, avail);
        r->base += (long long)r->pos;
        r->pos = 0;
        r->len = avail;
    }
    while (r->len < want && !r->eof && !r->err) {
        size_t got = fread(r->buf + r->len, 1, GT_RD_BUF - r->len, r->f);
        r->len += got;
        if (got == 0) {
            if (ferror(r->f)) r->err = true;
            else r->eof = true;
        }
        /* a pipe may return short reads; keep going until want is met */
    }
    return r->len - r->pos;
}

size_t gt_rd_peek(gt_reader *r, void *dst, size_t n)
{
    size_t a = gt_rd_fill(r, n);
    if (a > n) a = n;
    memcpy(dst, r->buf + r->pos, a);
    return a;
}

size_t gt_rd_bytes(gt_reader *r, void *dst, size_t n)
{
    unsigned char *d = dst;
    size_t done = 0;
    size_t avail = r->len - r->pos;
    size_t k = avail < n ? avail : n;
    if (k) {
        memcpy(d, r->buf + r->pos, k);
        r->pos += k;
        done = k;
    }
    if (done == n) return n;
    /* buffer is empty: large reads go straight to dst */
    r->base += (long long)r->pos;
    r->pos = r->len = 0;
    while (done < n && !r->eof && !r->err) {
        size_t want = n - done;
        if (want >= GT_RD_BUF / 2) {
            size_t got = fread(d + done, 1, want, r->f);
            done += got;
            r->base += (long long)got;
            if (got < want) {
                if (ferror(r->f)) r->err = true;
                else if (feof(r->f)) r->eof = true;
            }
        } else {
            size_t a = gt_rd_fill(r, want);
            size_t c = a < want ? a : want;
            memcpy(d + done, r->buf + r->pos, c);
            r->pos += c;
            done += c;
            if (c < want) break;
        }
    }
    return done;
}

gt_status gt_rd_line(gt_reader *r, char **line, size_t *len)
{
    *line = NULL;
    if (len) *len = 0;
    size_t n = 0;
    for (;;) {
        if (r->pos == r->len) {
            gt_rd_fill(r, 1);
            if (r->err) return gt_rd_ioerr(r);
            if (r->pos == r->len) { /* EOF */
                if (n == 0) return GT_OK;
                break;
            }
        }
        unsigned char *p = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        unsigned char *nl = memchr(p, '\n', avail);
        size_t take = nl ? (size_t)(nl - p) : avail;
        if (n + take > GT_RD_MAX_LINE)
            return gt_fail_at(GT_ERR_DATA, r->name, r->line + 1, "line longer than %u bytes",
                              GT_RD_MAX_LINE);
        if (memchr(p, '\0', take))
            return gt_fail_at(GT_ERR_DATA, r->name, r->line + 1, "NUL byte in a text line");
        memcpy(r->lbuf + n, p, take);
        n += take;
        r->pos += take;
        if (nl) {
            r->pos++;
            break;
        }
    }
    if (n > 0 && r->lbuf[n - 1] == '\r') n--;
    r->lbuf[n] = '\0';
    r->line++;
    *line = r->lbuf;
    if (len) *len = n;
    return GT_OK;
}

long long gt_rd_file_size(const gt_reader *r)
{
    struct stat sb;
    if (fstat(fileno(r->f), &sb) != 0 || !S_ISREG(sb.st_mode)) return -1;
    return (long long)sb.st_size;
}

gt_status gt_rd_ioerr(gt_reader *r)
{
    return gt_fail(GT_ERR_RUNTIME, "read error on '%s': %s", r->name, strerror(errno));
}
