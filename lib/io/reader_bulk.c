/* Bulk reads at page-cache speed (gt_rd_bytes_bulk, see reader.h): on a
 * regular file, a large read is split into chunks that several threads
 * pread() at once; one thread copying from the page cache reaches only a few
 * GB/s. Pipes, small reads and files whose stdio position is unknown take
 * gt_rd_bytes (sequential). Afterwards the reader and its FILE stand just
 * after the bytes read, as after gt_rd_bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "io/reader.h"

enum { BULK_MIN = 4u << 20, BULK_CHUNK = 8u << 20, BULK_MAX_THREADS = 16 };

typedef struct bulk_job {
    int fd;
    unsigned char *dst;
    size_t n;
    long long off;           /* file offset of dst[0] */
    atomic_size_t next;      /* next chunk to take */
    atomic_size_t short_at;  /* smallest byte count where the file ended (n if none) */
    atomic_int err;          /* first errno of a failed pread, 0 if none */
} bulk_job;

static void *bulk_worker(void *arg)
{
    bulk_job *j = arg;
    const size_t nchunks = (j->n + BULK_CHUNK - 1) / BULK_CHUNK;
    for (;;) {
        size_t c = atomic_fetch_add(&j->next, 1);
        if (c >= nchunks || atomic_load(&j->err)) break;
        size_t a = c * (size_t)BULK_CHUNK, b = a + BULK_CHUNK < j->n ? a + BULK_CHUNK : j->n;
        while (a < b) {
            ssize_t got = pread(j->fd, j->dst + a, b - a, (off_t)(j->off + (long long)a));
            if (got < 0) {
                if (errno == EINTR) continue;
                int zero = 0;
                atomic_compare_exchange_strong(&j->err, &zero, errno ? errno : EIO);
                return NULL;
            }
            if (got == 0) { /* the file ended here: keep the smallest such place */
                size_t cur = atomic_load(&j->short_at);
                while (a < cur && !atomic_compare_exchange_weak(&j->short_at, &cur, a)) {
                }
                break;
            }
            a += (size_t)got;
        }
    }
    return NULL;
}

int gt_rd_bulk_threads(void)
{
    const char *e = getenv("GT_READ_THREADS");
    if (e && *e) {
        int t = atoi(e);
        if (t >= 1) return t > BULK_MAX_THREADS ? BULK_MAX_THREADS : t;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1) ncpu = 1;
    return ncpu > 8 ? 8 : (int)ncpu;
}

size_t gt_rd_bytes_bulk(gt_reader *r, void *dst, size_t n)
{
    /* what the buffer holds first */
    size_t done = r->len - r->pos < n ? r->len - r->pos : n;
    memcpy(dst, r->buf + r->pos, done);
    r->pos += done;
    if (done == n) return n;
    const size_t rest = n - done;
    int nt = gt_rd_bulk_threads();
    long long here = r->base + (long long)r->len; /* stdio position after the buffer */
    if (rest < BULK_MIN || nt < 2 || r->eof || r->err || gt_rd_file_size(r) < 0 || ftello(r->f) != here)
        return done + gt_rd_bytes(r, (unsigned char *)dst + done, rest);

    bulk_job j;
    j.fd = fileno(r->f);
    j.dst = (unsigned char *)dst + done;
    j.n = rest;
    j.off = here;
    atomic_init(&j.next, 0);
    atomic_init(&j.short_at, rest);
    atomic_init(&j.err, 0);
    size_t nchunks = (rest + BULK_CHUNK - 1) / BULK_CHUNK;
    if ((size_t)nt > nchunks) nt = (int)nchunks;
    pthread_t th[BULK_MAX_THREADS];
    int started = 0;
    for (int i = 1; i < nt; i++) { /* this thread is worker 0 */
        if (pthread_create(&th[started], NULL, bulk_worker, &j) != 0) break;
        started++;
    }
    bulk_worker(&j);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);

    size_t got = atomic_load(&j.short_at);
    int err = atomic_load(&j.err);
    /* the reader and its FILE continue after what was read */
    r->base = here + (long long)(err ? 0 : got);
    r->pos = r->len = 0;
    if (err) {
        r->err = true;
        got = 0;
    } else if (fseeko(r->f, (off_t)r->base, SEEK_SET) != 0) {
        err = errno;
        r->err = true;
    }
    if (err) errno = err; /* for gt_rd_ioerr */
    return done + got;
}
