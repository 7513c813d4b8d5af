/* libcore's text and binary parsers (lib/io, also the rig file in
 * lib/stitch and the parameter file in lib/tps): a buffered streaming reader
 * over a FILE* that tracks the line number and byte offset, so parsers can
 * name the place of an error.
 * Works on pipes (never seeks). Lines longer than GT_RD_MAX_LINE are an
 * error rather than an unbounded allocation. */
#ifndef GT_IO_READER_H
#define GT_IO_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_RD_BUF (1u << 20)
#define GT_RD_MAX_LINE (1u << 16)

typedef struct gt_reader {
    FILE *f;
    const char *name;      /* for messages ("<stdin>" for "-") */
    unsigned char *buf;
    size_t pos, len;       /* unread data is buf[pos, len) */
    long long base;        /* file offset of buf[0] */
    long line;             /* number of the line last returned by gt_rd_line (1-based) */
    bool eof, err;
    bool own;              /* close f at the end */
    char *lbuf;            /* line returned by gt_rd_line (NUL-terminated) */
} gt_reader;

/* Open path ("-" = stdin). GT_ERR_RUNTIME when it cannot be opened. */
gt_status gt_rd_open(gt_reader *r, const char *path);
/* Wrap an open FILE (not closed by gt_rd_close). */
gt_status gt_rd_wrap(gt_reader *r, FILE *f, const char *name);
void gt_rd_close(gt_reader *r);

/* Byte offset of the next unread byte. */
static inline long long gt_rd_offset(const gt_reader *r) { return r->base + (long long)r->pos; }

/* Next line without its '\n' (and '\r'); *line points into the reader and
 * stays valid until the next call. Returns GT_OK and sets *line = NULL at
 * EOF. A line longer than GT_RD_MAX_LINE or a NUL byte is GT_ERR_DATA; a read
 * error is GT_ERR_RUNTIME. *len may be NULL. */
gt_status gt_rd_line(gt_reader *r, char **line, size_t *len);

/* Read exactly n bytes into dst. Returns the number read (< n at EOF);
 * sets r->err on a read error. */
size_t gt_rd_bytes(gt_reader *r, void *dst, size_t n);

/* gt_rd_bytes for large reads: on a regular file, chunks of 8 MiB are
 * pread() by several threads at once (reader_bulk.c); pipes and small reads
 * go through gt_rd_bytes. Same contract: the count read (< n at EOF), r->err
 * on a read error (a read error loses the whole call's data). */
size_t gt_rd_bytes_bulk(gt_reader *r, void *dst, size_t n);
/* Threads gt_rd_bytes_bulk uses: GT_READ_THREADS from the environment (1..16)
 * or the online CPUs, at most 8. */
int gt_rd_bulk_threads(void);

/* Make at least `want` bytes available in buf[pos..] (fewer at EOF); returns
 * the number available. want <= GT_RD_BUF. */
size_t gt_rd_fill(gt_reader *r, size_t want);

/* Peek the first n bytes (n <= 16) without consuming. Returns count available. */
size_t gt_rd_peek(gt_reader *r, void *dst, size_t n);

/* Size of the underlying file when it is a regular file, else -1. */
long long gt_rd_file_size(const gt_reader *r);

/* GT_ERR_RUNTIME message for a read error on r. */
gt_status gt_rd_ioerr(gt_reader *r);

#ifdef __cplusplus
}
#endif
#endif
