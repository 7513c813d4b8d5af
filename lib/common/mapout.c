/* Parallel mmap appender (see mapout.h).
 *
 * Three stages run at once, each on its own threads:
 *   filler:   maps the file segment by segment ahead of the writer and makes
 *             its pages exist (MADV_POPULATE_WRITE through the populate pool,
 *             or fallocate where that is missing);
 *   writer:   the caller; copies each append into the ready segments through
 *             the copy pool;
 *   unmapper: unmaps the segments the writer has finished.
 * Measured on tmpfs (H100 host, 16 cores; scripts/bench/yuvstitch): page
 * allocation within one file is serialised by the kernel (about 3 ms per
 * 15 MB however many threads fault), while copying into existing pages takes
 * 0.5 ms and unmapping 0.7-1.4 ms. Done one after the other per append, as a
 * single pool did before, they add up (4.0 ms per 15 MB); pipelined, the
 * allocation alone sets the pace (3.1-3.4 ms). */
#define _GNU_SOURCE
#include "common/mapout.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels say EINVAL and the filler fallocates */
#endif
#define MAX_THREADS 32
#define PRE_CAP 4096              /* small appends (a Y4M FRAME line) wait here for the next big one */
#define PAR_MIN (1u << 20)        /* below this one thread copies or populates */
#define RING 64                   /* segments mapped at once, at most */
#define GROW ((off_t)64 << 20)    /* sparse growth step of the file size */
#define AHEAD_BYTES ((size_t)48 << 20) /* how far the filler runs ahead of the writer */

/* ---- a pool of threads that runs one job at a time, a slice each */
typedef struct {
    int nt; /* 0: jobs run in the caller */
    pthread_t th[MAX_THREADS];
    int started;
    pthread_mutex_t mu;
    pthread_cond_t job, done;
    long gen;
    int left;
    bool stop;
    bool populate; /* the job: copy src to dst, or populate dst's pages */
    unsigned char *dst;
    const unsigned char *src;
    size_t n, page;
    int err; /* errno of a failed populate */
} pool_t;

typedef struct {
    pool_t *p;
    int i;
} worker_arg;

/* slice i of nt, split at page boundaries of dst so that no two threads
 * fault the same page */
static void slice(const pool_t *p, int i, size_t *s, size_t *e)
{
    uintptr_t d = (uintptr_t)p->dst, pg = p->page;
    size_t per = p->n / (size_t)p->nt;
    size_t a = i == 0 ? 0 : (size_t)(((d + per * (size_t)i + pg - 1) & ~(pg - 1)) - d);
    size_t b = i == p->nt - 1 ? p->n : (size_t)(((d + per * (size_t)(i + 1) + pg - 1) & ~(pg - 1)) - d);
    if (a > p->n) a = p->n;
    if (b > p->n) b = p->n;
    *s = a;
    *e = b < a ? a : b;
}

static int do_part(bool populate, unsigned char *dst, const unsigned char *src, size_t n)
{
    if (!n) return 0;
    if (!populate) {
        memcpy(dst, src, n);
        return 0;
    }
    return madvise(dst, n, MADV_POPULATE_WRITE) == 0 ? 0 : errno;
}

static void *worker(void *arg)
{
    worker_arg *wa = arg;
    pool_t *p = wa->p;
    int i = wa->i;
    free(wa);
    long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->stop) pthread_cond_wait(&p->job, &p->mu);
        if (p->stop) break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        size_t s, e;
        slice(p, i, &s, &e);
        int err = do_part(p->populate, p->dst + s, p->src ? p->src + s : NULL, e - s);
        pthread_mutex_lock(&p->mu);
        if (err) p->err = err;
        if (--p->left == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void pool_stop(pool_t *p)
{
    if (!p->started) {
        p->nt = 0;
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->job);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++) pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->job);
    pthread_cond_destroy(&p->done);
    p->started = 0;
    p->nt = 0;
}

/* start nt threads; where that fails the jobs run in the caller */
static void pool_start(pool_t *p, int nt, size_t page)
{
    memset(p, 0, sizeof *p);
    p->page = page;
    if (nt < 2) return; /* one thread: the caller is it */
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->job, NULL);
    pthread_cond_init(&p->done, NULL);
    p->nt = nt;
    for (int i = 0; i < nt; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (wa) *wa = (worker_arg){p, i};
        if (!wa || pthread_create(&p->th[i], NULL, worker, wa) != 0) {
            free(wa);
            p->nt = i; /* workers wait for jobs, so none has read nt yet */
            break;
        }
        p->started = i + 1;
    }
    if (!p->started) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->job);
        pthread_cond_destroy(&p->done);
        p->nt = 0;
    }
}

/* run one job; 0 or the errno of a failed populate */
static int pool_run(pool_t *p, bool populate, unsigned char *dst, const void *src, size_t n)
{
    if (p->nt < 2 || n < PAR_MIN) return do_part(populate, dst, src, n);
    pthread_mutex_lock(&p->mu);
    p->populate = populate;
    p->dst = dst;
    p->src = src;
    p->n = n;
    p->err = 0;
    p->left = p->nt;
    p->gen++;
    pthread_cond_broadcast(&p->job);
    while (p->left) pthread_cond_wait(&p->done, &p->mu);
    int err = p->err;
    pthread_mutex_unlock(&p->mu);
    return err;
}

/* ---- the appender */
typedef struct {
    unsigned char *p; /* the segment's mapping (NULL after an error) */
    int err;          /* errno where it could not be made ready */
} seg_t;

struct gt_mapout {
    int fd;
    off_t floor;    /* bytes written before the pipeline started: never cut */
    off_t off;      /* bytes in the file proper */
    size_t page, seg;
    /* sparse: the file grows by ftruncate and the populate pool allocates and
     * zeroes the pages (populate says EFAULT where a fault would have been
     * SIGBUS: no space); else each segment is fallocated first */
    bool sparse;
    gt_mapout_mode mode;
    int probes;
    double ms[2], bytes[2];
    unsigned char pre[PRE_CAP];
    size_t npre;
    int nthreads;
    /* the pipeline (started with the first mapped append) */
    bool running;
    pool_t fill_pool, copy_pool;
    pthread_t filler, unmapper;
    bool filler_started, unmapper_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    seg_t ring[RING];
    long filled;   /* segments below are ready (or failed) */
    long want;     /* the filler may prepare segments below this */
    long released; /* segments below are written: the unmapper unmaps them */
    long unmapped; /* segments below are unmapped */
    long ahead;    /* segments the filler keeps ready beyond the writer's */
    bool stop;
    off_t grown;   /* sparse: file size set so far (filler only) */
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static gt_mapout_mode env_mode(void)
{
    const char *e = getenv("GT_MAPOUT_MODE");
    if (e && !strcmp(e, "mmap")) return GT_MAPOUT_MMAP;
    if (e && !strcmp(e, "pwrite")) return GT_MAPOUT_PWRITE;
    return GT_MAPOUT_AUTO;
}

gt_mapout_mode gt_mapout_get_mode(const gt_mapout *m) { return m->mode; }

/* threads per pool (populate, copy): a quarter of the cores, 1..4 */
static int default_threads(void)
{
    const char *e = getenv("GT_WRITE_THREADS");
    if (e && atoi(e) > 0) return atoi(e) > MAX_THREADS ? MAX_THREADS : atoi(e);
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    long t = c / 4;
    return t < 1 ? 1 : t > 4 ? 4 : (int)t;
}

off_t gt_mapout_offset(const gt_mapout *m) { return m->off + (off_t)m->npre; }

static gt_status fail_errno(const char *name, const char *what, int e)
{
    return gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s%s%s", name, what, *what ? ": " : "", strerror(e));
}

static int pwrite_all(int fd, const unsigned char *p, size_t n, off_t at)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w, n -= (size_t)w, at += w;
    }
    return 0;
}

/* make segment s ready: space, mapping, pages; 0 or an errno */
static int fill_segment(gt_mapout *m, long s, unsigned char **out)
{
    off_t at = (off_t)s * (off_t)m->seg, end = at + (off_t)m->seg;
    *out = NULL;
    if (m->sparse) {
        if (end > m->grown) {
            off_t to = end > m->grown + GROW ? end : m->grown + GROW;
            if (ftruncate(m->fd, to) != 0) return errno;
            m->grown = to;
        }
    } else if (fallocate(m->fd, 0, at, (off_t)m->seg) != 0) {
        return errno;
    }
    unsigned char *p = mmap(NULL, m->seg, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, at);
    if (p == MAP_FAILED) return errno;
    if (m->sparse) {
        int err = pool_run(&m->fill_pool, true, p, NULL, m->seg);
        if (err) {
            munmap(p, m->seg);
            return err;
        }
    }
    *out = p;
    return 0;
}

static void *filler_main(void *arg)
{
    gt_mapout *m = arg;
    pthread_mutex_lock(&m->mu);
    for (;;) {
        while (!m->stop && (m->filled >= m->want || m->filled - m->unmapped >= RING)) pthread_cond_wait(&m->cv, &m->mu);
        if (m->stop) break;
        long s = m->filled;
        pthread_mutex_unlock(&m->mu);
        unsigned char *p;
        int err = fill_segment(m, s, &p);
        if (err) {
            /* give back what this segment took (populate may have allocated
             * part of it), so that the writer's plain writes find the space;
             * segments below s are the writer's, and so is what was
             * written before the pipeline started */
            off_t cut = (off_t)s * (off_t)m->seg;
            if (cut < m->floor) cut = m->floor;
            if (cut < m->grown && ftruncate(m->fd, cut) == 0) m->grown = cut;
        }
        pthread_mutex_lock(&m->mu);
        m->ring[s % RING] = (seg_t){p, err};
        m->filled = s + 1;
        pthread_cond_broadcast(&m->cv);
        if (err) break; /* the writer goes on with plain writes from segment s */
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

static void *unmapper_main(void *arg)
{
    gt_mapout *m = arg;
    pthread_mutex_lock(&m->mu);
    for (;;) {
        while (!m->stop && m->unmapped >= m->released) pthread_cond_wait(&m->cv, &m->mu);
        if (m->stop) break;
        long s = m->unmapped;
        unsigned char *p = m->ring[s % RING].p;
        pthread_mutex_unlock(&m->mu);
        if (p) munmap(p, m->seg);
        pthread_mutex_lock(&m->mu);
        m->ring[s % RING].p = NULL;
        m->unmapped = s + 1;
        pthread_cond_broadcast(&m->cv);
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

/* stop the threads and unmap what is still mapped */
static void pipeline_stop(gt_mapout *m)
{
    if (!m->running) return;
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    if (m->filler_started) pthread_join(m->filler, NULL);
    if (m->unmapper_started) pthread_join(m->unmapper, NULL);
    for (long s = m->unmapped; s < m->filled; s++)
        if (m->ring[s % RING].p) munmap(m->ring[s % RING].p, m->seg);
    pool_stop(&m->fill_pool);
    pool_stop(&m->copy_pool);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    m->running = m->filler_started = m->unmapper_started = false;
}

static int pipeline_start(gt_mapout *m)
{
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    m->stop = false;
    m->filled = m->want = m->released = m->unmapped = (long)(m->off / (off_t)m->seg);
    m->grown = m->floor = m->off;
    m->running = true;
    pool_start(&m->fill_pool, m->nthreads, m->page);
    pool_start(&m->copy_pool, m->nthreads, m->page);
    m->filler_started = pthread_create(&m->filler, NULL, filler_main, m) == 0;
    m->unmapper_started = m->filler_started && pthread_create(&m->unmapper, NULL, unmapper_main, m) == 0;
    if (!m->unmapper_started) {
        int e = errno ? errno : EAGAIN;
        pipeline_stop(m);
        return e;
    }
    return 0;
}

/* copy n bytes to file offset at through the segments; 0, or the errno of a
 * segment that could not be made ready (*done: bytes copied before it) */
static int copy_at(gt_mapout *m, const unsigned char *src, size_t n, off_t at, size_t *done)
{
    *done = 0;
    while (n) {
        long s = (long)(at / (off_t)m->seg);
        size_t o = (size_t)(at - (off_t)s * (off_t)m->seg), k = m->seg - o < n ? m->seg - o : n;
        pthread_mutex_lock(&m->mu);
        if (m->want < s + m->ahead) {
            m->want = s + m->ahead;
            pthread_cond_broadcast(&m->cv);
        }
        while (m->filled <= s) pthread_cond_wait(&m->cv, &m->mu);
        seg_t g = m->ring[s % RING];
        pthread_mutex_unlock(&m->mu);
        if (g.err) return g.err;
        pool_run(&m->copy_pool, false, g.p + o, src, k);
        src += k, n -= k, at += (off_t)k, *done += k;
        if (o + k == m->seg) { /* segment s is complete */
            pthread_mutex_lock(&m->mu);
            m->released = s + 1;
            pthread_cond_broadcast(&m->cv);
            pthread_mutex_unlock(&m->mu);
        }
    }
    return 0;
}

gt_mapout *gt_mapout_open(int fd, off_t start, int nthreads, size_t seg)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) return NULL;
    if (!S_ISREG(sb.st_mode)) {
        errno = ESPIPE;
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) != O_RDWR || (fl & O_APPEND)) { /* MAP_SHARED writes need O_RDWR */
        errno = EBADF;
        return NULL;
    }
    if (sb.st_size != start) { /* appends only */
        errno = EINVAL;
        return NULL;
    }
    /* probe: MADV_POPULATE_WRITE (sparse growth) or else fallocate must work
     * here (they are what make ENOSPC clean); then put the size back */
    bool sparse = false;
    long pg = sysconf(_SC_PAGESIZE);
    if (ftruncate(fd, start + 1) == 0) {
        off_t a = start & ~(off_t)(pg - 1);
        void *w = mmap(NULL, (size_t)(start + 1 - a), PROT_READ | PROT_WRITE, MAP_SHARED, fd, a);
        if (w != MAP_FAILED) {
            sparse = madvise(w, (size_t)(start + 1 - a), MADV_POPULATE_WRITE) == 0;
            munmap(w, (size_t)(start + 1 - a));
        }
    }
    if (!sparse && fallocate(fd, 0, start, 1) != 0) {
        int e = errno;
        if (ftruncate(fd, start) != 0) { /* nothing better to do */ }
        errno = e;
        return NULL;
    }
    if (ftruncate(fd, start) != 0) return NULL;
    gt_mapout *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->fd = fd;
    m->sparse = sparse;
    if (getenv("GT_MAPOUT_FALLOCATE")) m->sparse = false; /* tests: the other way of reserving */
    m->off = start;
    m->page = (size_t)pg;
    if (!seg) seg = (size_t)8 << 20;
    m->seg = (seg + m->page - 1) & ~(m->page - 1);
    m->ahead = (long)((AHEAD_BYTES + m->seg - 1) / m->seg);
    if (m->ahead < 2) m->ahead = 2;
    if (m->ahead > RING / 2) m->ahead = RING / 2;
    m->mode = env_mode();
    m->nthreads = nthreads > 0 ? (nthreads > MAX_THREADS ? MAX_THREADS : nthreads) : default_threads();
    return m;
}

/* one append (pre, then buf) through the segments; a segment that could not
 * be made ready (no space, no memory) ends the pipeline, and the rest goes
 * through pwrite, which names the errno */
static gt_status write_mapped(gt_mapout *m, const void *buf, size_t n, const char *name)
{
    int err = m->running ? 0 : pipeline_start(m);
    size_t done = 0;
    if (!err) err = copy_at(m, m->pre, m->npre, m->off, &done);
    off_t at = m->off + (off_t)done;
    if (!err) {
        err = copy_at(m, buf, n, at, &done);
        at += (off_t)done;
    } else {
        done = 0; /* of buf */
    }
    if (!err) return GT_OK;
    pipeline_stop(m);
    m->mode = GT_MAPOUT_PWRITE;
    size_t pre_left = at < m->off + (off_t)m->npre ? (size_t)(m->off + (off_t)m->npre - at) : 0;
    if (pre_left && pwrite_all(m->fd, m->pre + (m->npre - pre_left), pre_left, at) != 0)
        return fail_errno(name, "", errno);
    at += (off_t)pre_left;
    if (pwrite_all(m->fd, (const unsigned char *)buf + done, n - done, at) != 0) return fail_errno(name, "", errno);
    return GT_OK;
}

#define PROBES 3 /* per mode, the first of each a warm-up */

gt_status gt_mapout_write(gt_mapout *m, const void *buf, size_t n, const char *name)
{
    if (n <= PRE_CAP - m->npre) {
        memcpy(m->pre + m->npre, buf, n);
        m->npre += n;
        return GT_OK;
    }
    off_t end = m->off + (off_t)m->npre + (off_t)n;
    gt_mapout_mode use = m->mode;
    int k = -1;
    if (use == GT_MAPOUT_AUTO) { /* plain writes first, so the pipeline's read-ahead cannot help them */
        k = m->probes++;
        use = k < PROBES ? GT_MAPOUT_PWRITE : GT_MAPOUT_MMAP;
    }
    double t0 = now_ms();
    gt_status st = GT_OK;
    if (use == GT_MAPOUT_MMAP) {
        st = write_mapped(m, buf, n, name);
    } else if (pwrite_all(m->fd, m->pre, m->npre, m->off) != 0 ||
               pwrite_all(m->fd, buf, n, m->off + (off_t)m->npre) != 0) {
        st = fail_errno(name, "", errno);
    }
    if (st) return st;
    if (k >= 0 && m->mode == GT_MAPOUT_AUTO) {
        int which = use == GT_MAPOUT_MMAP ? 0 : 1;
        if (k % PROBES) { /* not a warm-up */
            m->ms[which] += now_ms() - t0;
            m->bytes[which] += (double)(end - m->off);
        }
        if (k == 2 * PROBES - 1) {
            m->mode = m->ms[0] / m->bytes[0] <= m->ms[1] / m->bytes[1] ? GT_MAPOUT_MMAP : GT_MAPOUT_PWRITE;
            if (m->mode == GT_MAPOUT_PWRITE) pipeline_stop(m);
        }
    }
    m->off = end;
    m->npre = 0;
    return GT_OK;
}

gt_status gt_mapout_close(gt_mapout *m, int ok, const char *name)
{
    if (!m) return GT_OK;
    gt_status st = GT_OK;
    pipeline_stop(m);
    if (ok) {
        if (m->npre) {
            if (pwrite_all(m->fd, m->pre, m->npre, m->off) != 0) st = fail_errno(name, "", errno);
            m->off += (off_t)m->npre;
        }
        if (!st && ftruncate(m->fd, m->off) != 0) st = fail_errno(name, "truncate", errno);
    }
    free(m);
    return st;
}
