/* Parallel mmap appender (see mapout.h). */
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
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels say EINVAL and pages fault in lazily */
#endif
#define MAX_THREADS 64
#define PRE_CAP 4096        /* small appends (a Y4M FRAME line) wait here for the next big one */
#define PAR_MIN (1u << 20)  /* below this a single thread copies */

struct gt_mapout {
    int fd;
    off_t off;       /* bytes in the file proper */
    off_t reserved;  /* bytes reserved from 0: fallocated, or (sparse) the file size */
    /* sparse: grow the file with ftruncate and let MADV_POPULATE_WRITE, run
     * by the pool, allocate and zero the pages in parallel; populate says
     * EFAULT where a fault would have been SIGBUS (ENOSPC), and that window
     * is then written with pwrite, which reports the errno. Without
     * MADV_POPULATE_WRITE (Linux < 5.14) space is fallocated first. */
    bool sparse;
    int perr; /* errno of a failed populate in the last job */
    size_t chunk, page;
    /* mode: mmap windows or plain pwrite; auto times a few appends of each
     * (after one warm-up each) and keeps the faster per byte */
    gt_mapout_mode mode;
    int probes;
    double ms[2], bytes[2];
    unsigned char pre[PRE_CAP];
    size_t npre;
    /* the pool: job generation `gen`, `left` slices still running */
    /* the next append's window, mapped and populated while the pool copies */
    unsigned char *next_win;
    off_t next_a;
    size_t next_len;
    int nt;
    bool pool; /* mutex and condition variables live */
    pthread_t th[MAX_THREADS];
    bool started[MAX_THREADS];
    pthread_mutex_t mu;
    pthread_cond_t job, done;
    long gen;
    int left;
    bool stop;
    bool populate; /* the job: copy src to dst, or populate dst's pages */
    unsigned char *dst;
    const unsigned char *src;
    size_t n;
};

/* slice i of nt of the current job, split at page boundaries of dst so that
 * no two threads fault the same page */
static void slice(const gt_mapout *m, int i, size_t *s, size_t *e)
{
    uintptr_t d = (uintptr_t)m->dst, pg = m->page;
    size_t per = m->n / (size_t)m->nt;
    size_t a = i == 0 ? 0 : (size_t)(((d + per * (size_t)i + pg - 1) & ~(pg - 1)) - d);
    size_t b = i == m->nt - 1 ? m->n : (size_t)(((d + per * (size_t)(i + 1) + pg - 1) & ~(pg - 1)) - d);
    if (a > m->n) a = m->n;
    if (b > m->n) b = m->n;
    *s = a;
    *e = b < a ? a : b;
}

typedef struct {
    gt_mapout *m;
    int i;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *wa = p;
    gt_mapout *m = wa->m;
    int i = wa->i;
    free(wa);
    long seen = 0;
    pthread_mutex_lock(&m->mu);
    for (;;) {
        while (m->gen == seen && !m->stop) pthread_cond_wait(&m->job, &m->mu);
        if (m->stop) break;
        seen = m->gen;
        pthread_mutex_unlock(&m->mu);
        size_t s, e;
        slice(m, i, &s, &e);
        int err = 0;
        if (e > s) {
            if (!m->populate) memcpy(m->dst + s, m->src + s, e - s);
            else if (madvise(m->dst + s, e - s, MADV_POPULATE_WRITE) != 0) err = errno;
        }
        pthread_mutex_lock(&m->mu);
        if (err) m->perr = err;
        if (--m->left == 0) pthread_cond_signal(&m->done);
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

static void pool_stop(gt_mapout *m)
{
    if (!m->pool) return;
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    pthread_cond_broadcast(&m->job);
    pthread_mutex_unlock(&m->mu);
    for (int i = 0; i < MAX_THREADS; i++)
        if (m->started[i]) pthread_join(m->th[i], NULL), m->started[i] = false;
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->job);
    pthread_cond_destroy(&m->done);
    m->pool = false;
}

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

static int default_threads(void)
{
    const char *e = getenv("GT_WRITE_THREADS");
    if (e && atoi(e) > 0) return atoi(e) > MAX_THREADS ? MAX_THREADS : atoi(e);
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    long t = c / 2;
    return t < 1 ? 1 : t > 8 ? 8 : (int)t;
}

gt_mapout *gt_mapout_open(int fd, off_t start, int nthreads, size_t chunk)
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
    m->reserved = start;
    m->page = (size_t)sysconf(_SC_PAGESIZE);
    if (!chunk) chunk = (size_t)64 << 20;
    m->chunk = (chunk + m->page - 1) & ~(m->page - 1);
    m->mode = env_mode();
    m->nt = nthreads > 0 ? (nthreads > MAX_THREADS ? MAX_THREADS : nthreads) : default_threads();
    if (m->nt >= 1) { /* even one worker: the caller populates the next window meanwhile */
        pthread_mutex_init(&m->mu, NULL);
        pthread_cond_init(&m->job, NULL);
        pthread_cond_init(&m->done, NULL);
        m->pool = true;
        for (int i = 0; i < m->nt; i++) {
            worker_arg *wa = malloc(sizeof *wa);
            if (wa) *wa = (worker_arg){m, i};
            if (!wa || pthread_create(&m->th[i], NULL, worker, wa) != 0) {
                free(wa);
                pool_stop(m); /* join those running, go on in the caller */
                m->nt = 0;
                break;
            }
            m->started[i] = true;
        }
    }
    return m;
}

off_t gt_mapout_offset(const gt_mapout *m) { return m->off + (off_t)m->npre; }

static gt_status fail_errno(const char *name, const char *what, int e)
{
    return gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s%s%s", name, what, *what ? ": " : "", strerror(e));
}

/* make [0, end) allocated */
static int reserve(gt_mapout *m, off_t end)
{
    if (end <= m->reserved) return 0;
    off_t to = m->reserved + (off_t)m->chunk;
    if (to < end) to = (end + (off_t)m->chunk - 1) / (off_t)m->chunk * (off_t)m->chunk;
    if (m->sparse) {
        if (ftruncate(m->fd, to) != 0) return -1;
        m->reserved = to;
        return 0;
    }
    if (fallocate(m->fd, 0, m->reserved, to - m->reserved) != 0) {
        /* a whole chunk may not fit where the exact need does */
        if (fallocate(m->fd, 0, m->reserved, end - m->reserved) != 0) return -1;
        to = end;
    }
    m->reserved = to;
    return 0;
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

static void job_start(gt_mapout *m, bool populate, unsigned char *dst, const void *src, size_t n)
{
    pthread_mutex_lock(&m->mu);
    m->populate = populate;
    m->dst = dst;
    m->src = src;
    m->n = n;
    m->left = m->nt;
    m->gen++;
    pthread_cond_broadcast(&m->job);
    pthread_mutex_unlock(&m->mu);
}

static void job_wait(gt_mapout *m)
{
    pthread_mutex_lock(&m->mu);
    while (m->left) pthread_cond_wait(&m->done, &m->mu);
    pthread_mutex_unlock(&m->mu);
}

/* populate [w, w+len): through the pool when there is one; 0 or an errno */
static int populate(gt_mapout *m, unsigned char *w, size_t len)
{
    if (m->pool && len >= PAR_MIN) {
        m->perr = 0;
        job_start(m, true, w, NULL, len);
        job_wait(m);
        return m->perr;
    }
    return madvise(w, len, MADV_POPULATE_WRITE) == 0 ? 0 : errno;
}

/* one big append through a mapped window, the pool copying slices */
static gt_status write_mapped(gt_mapout *m, const void *buf, size_t n, off_t end, const char *name)
{
    off_t a = m->off & ~(off_t)(m->page - 1);
    size_t len = (size_t)(end - a);
    unsigned char *win;
    bool ready = false; /* populated (sparse mode needs it before a byte is stored) */
    if (m->next_win && m->next_a == a && (size_t)(end - a) <= m->next_len) {
        win = m->next_win, len = m->next_len, ready = true;
    } else {
        if (m->next_win) munmap(m->next_win, m->next_len);
        win = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, a);
    }
    m->next_win = NULL;
    if (win != MAP_FAILED && m->sparse && !ready && populate(m, win, len) != 0) {
        munmap(win, len); /* no space (or no memory) for it: pwrite says which */
        win = MAP_FAILED;
    }
    if (win == MAP_FAILED) { /* no window: plain positioned writes, same bytes */
        if (pwrite_all(m->fd, m->pre, m->npre, m->off) != 0 ||
            pwrite_all(m->fd, buf, n, m->off + (off_t)m->npre) != 0)
            return fail_errno(name, "", errno);
        return GT_OK;
    }
    unsigned char *d = win + (m->off - a);
    memcpy(d, m->pre, m->npre);
    d += m->npre;
    if (m->pool && n >= PAR_MIN) {
        job_start(m, false, d, buf, n);
        /* while the pool copies: reserve what the next append of this size
         * needs and map its window; then the pool populates that window
         * (page allocation and zeroing spread over the threads, without a
         * fault per page). Failures here show again, and are reported,
         * next time. */
        int saved = errno;
        off_t next_end = end + (off_t)n + PRE_CAP;
        unsigned char *w2 = NULL;
        size_t len2 = 0;
        off_t a2 = end & ~(off_t)(m->page - 1);
        if (reserve(m, next_end) == 0) {
            len2 = (size_t)(next_end - a2);
            w2 = mmap(NULL, len2, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, a2);
            if (w2 == MAP_FAILED) w2 = NULL;
        }
        job_wait(m);
        if (w2) { /* the pool populates w2 while this thread unmaps the window behind */
            m->perr = 0;
            job_start(m, true, w2, NULL, len2);
        }
        int unmapped = munmap(win, len), ue = errno;
        if (w2) {
            job_wait(m);
            if (m->perr == 0) m->next_win = w2, m->next_a = a2, m->next_len = len2;
            else munmap(w2, len2);
        }
        if (unmapped != 0) return fail_errno(name, "munmap", ue);
        errno = saved;
        return GT_OK;
    }
    memcpy(d, buf, n);
    if (munmap(win, len) != 0) return fail_errno(name, "munmap", errno);
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
    if (use == GT_MAPOUT_AUTO) {
        k = m->probes++;
        use = k < PROBES ? GT_MAPOUT_MMAP : GT_MAPOUT_PWRITE;
    }
    double t0 = 0;
    gt_status st = GT_OK;
    if (use == GT_MAPOUT_MMAP) {
        if (reserve(m, end) != 0) return fail_errno(name, "", errno);
        t0 = now_ms();
        st = write_mapped(m, buf, n, end, name);
    } else { /* pwrite allocates as it goes and reports ENOSPC itself */
        t0 = now_ms();
        if (pwrite_all(m->fd, m->pre, m->npre, m->off) != 0 ||
            pwrite_all(m->fd, buf, n, m->off + (off_t)m->npre) != 0)
            st = fail_errno(name, "", errno);
    }
    if (st) return st;
    if (k >= 0) {
        int which = use == GT_MAPOUT_MMAP ? 0 : 1;
        if (k % PROBES) { /* not a warm-up */
            m->ms[which] += now_ms() - t0;
            m->bytes[which] += (double)(end - m->off);
        }
        if (k == 2 * PROBES - 1)
            m->mode = m->ms[0] / m->bytes[0] <= m->ms[1] / m->bytes[1] ? GT_MAPOUT_MMAP : GT_MAPOUT_PWRITE;
    }
    if (end > m->reserved) m->reserved = end; /* pwrite grew the file */
    m->off = end;
    m->npre = 0;
    return GT_OK;
}

gt_status gt_mapout_close(gt_mapout *m, int ok, const char *name)
{
    if (!m) return GT_OK;
    gt_status st = GT_OK;
    pool_stop(m);
    if (m->next_win) munmap(m->next_win, m->next_len);
    if (ok) {
        if (m->npre) {
            if (reserve(m, m->off + (off_t)m->npre) != 0 || pwrite_all(m->fd, m->pre, m->npre, m->off) != 0)
                st = fail_errno(name, "", errno);
            m->off += (off_t)m->npre;
        }
        if (!st && ftruncate(m->fd, m->off) != 0) st = fail_errno(name, "truncate", errno);
    }
    free(m);
    return st;
}
