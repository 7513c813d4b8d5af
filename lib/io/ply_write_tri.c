/* Triangle meshes to PLY from a piecewise source (gt_ply_write_trisrc, see
 * ply.h). Binary: the caller's thread fetches piece k from the source and
 * formats it on several threads (vertex rows of float32, x y z as float64
 * where the source asks, moved by its origin; faces as a uchar 3
 * and three int32, 13 bytes, unaligned) into one of two buffers, while an
 * output thread writes the other buffer (piece k-1) through the parallel
 * mmap appender (common/mapout.h) or, for pipes and stdout, stdio. So the
 * source's transfer of piece k+1, the formatting of piece k and the write of
 * piece k-1 can all run at once. Ascii prints in order on one thread. The
 * header and bytes are those of ply_write.c's writer; output is atomic. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mapout.h"
#include "common/output.h"
#include "io/numtext.h"
#include "io/ply_internal.h"

#define DEFAULT_CHUNK ((size_t)1 << 20)
#define MAX_FMT_THREADS 16
#define PAR_MIN_ROWS 16384 /* fewer rows than this per thread: not worth a thread */

/* ------------------------------------------------------------ formatting */

typedef struct piece {
    bool faces;
    bool swap;
    size_t n;
    const float *xyz, *nrm, *extra;
    int nextra;
    const int32_t *tris;
    const double *origin; /* NULL, or added to x, y, z */
    bool xyz_double;      /* x, y, z as float64 */
    unsigned char *dst;
    size_t rs; /* output bytes per row */
} piece;

typedef struct part {
    const piece *p;
    size_t r0, r1;
} part;

static inline void put32(unsigned char *d, const void *s, bool swap)
{
    uint32_t v;
    memcpy(&v, s, 4);
    if (swap) v = ply_bs32(v);
    memcpy(d, &v, 4);
}

/* row r's x, y, z at d, moved by the origin and as float64 where asked;
 * the bytes written */
static size_t put_xyz(unsigned char *d, const piece *p, size_t r)
{
    for (int k = 0; k < 3; k++) {
        const double x = (double)p->xyz[3 * r + (size_t)k] + (p->origin ? p->origin[k] : 0.0);
        if (p->xyz_double) {
            uint64_t v;
            memcpy(&v, &x, 8);
            if (p->swap) v = ply_bs64(v);
            memcpy(d + 8 * k, &v, 8);
        } else {
            const float f = (float)x;
            put32(d + 4 * k, &f, p->swap);
        }
    }
    return p->xyz_double ? 24 : 12;
}

static void format_rows(const piece *p, size_t r0, size_t r1)
{
    unsigned char *d = p->dst + r0 * p->rs;
    if (p->faces) {
        const int32_t *t = p->tris + 3 * r0;
        if (!p->swap) {
            for (size_t r = r0; r < r1; r++, d += 13, t += 3) {
                d[0] = 3;
                memcpy(d + 1, t, 12);
            }
        } else {
            for (size_t r = r0; r < r1; r++, d += 13, t += 3) {
                d[0] = 3;
                for (int k = 0; k < 3; k++) put32(d + 1 + 4 * k, t + k, true);
            }
        }
        return;
    }
    const size_t ne = (size_t)p->nextra;
    const bool moved = p->origin || p->xyz_double;
    if (!p->swap && !p->nrm && !ne && !moved) { /* xyz rows as they are */
        memcpy(d, p->xyz + 3 * r0, (r1 - r0) * 12);
        return;
    }
    for (size_t r = r0; r < r1; r++) {
        if (moved) {
            d += put_xyz(d, p, r);
            if (p->nrm)
                for (int k = 0; k < 3; k++, d += 4) put32(d, p->nrm + 3 * r + k, p->swap);
            for (size_t k = 0; k < ne; k++, d += 4) put32(d, p->extra + ne * r + k, p->swap);
        } else if (!p->swap) {
            memcpy(d, p->xyz + 3 * r, 12);
            d += 12;
            if (p->nrm) {
                memcpy(d, p->nrm + 3 * r, 12);
                d += 12;
            }
            if (ne) {
                memcpy(d, p->extra + ne * r, 4 * ne);
                d += 4 * ne;
            }
        } else {
            for (int k = 0; k < 3; k++, d += 4) put32(d, p->xyz + 3 * r + k, true);
            if (p->nrm)
                for (int k = 0; k < 3; k++, d += 4) put32(d, p->nrm + 3 * r + k, true);
            for (size_t k = 0; k < ne; k++, d += 4) put32(d, p->extra + ne * r + k, true);
        }
    }
}

static void *format_main(void *arg)
{
    const part *a = arg;
    format_rows(a->p, a->r0, a->r1);
    return NULL;
}

/* threads that format a piece: GT_WRITE_THREADS, else half the cores, 1..8 */
static int format_threads(void)
{
    const char *e = getenv("GT_WRITE_THREADS");
    if (e && atoi(e) > 0) return atoi(e) > MAX_FMT_THREADS ? MAX_FMT_THREADS : atoi(e);
    long c = sysconf(_SC_NPROCESSORS_ONLN) / 2;
    return c < 1 ? 1 : c > 8 ? 8 : (int)c;
}

/* format p on up to nt threads (the caller is one; where a thread cannot be
 * started its rows are done by the caller) */
static void format_piece(const piece *p, int nt)
{
    if ((size_t)nt > p->n / PAR_MIN_ROWS) nt = (int)(p->n / PAR_MIN_ROWS);
    if (nt < 2) {
        format_rows(p, 0, p->n);
        return;
    }
    pthread_t th[MAX_FMT_THREADS];
    part parts[MAX_FMT_THREADS];
    bool started[MAX_FMT_THREADS] = {false};
    for (int i = 0; i < nt; i++) parts[i] = (part){p, p->n * (size_t)i / (size_t)nt, p->n * (size_t)(i + 1) / (size_t)nt};
    for (int i = 1; i < nt; i++) started[i] = pthread_create(&th[i], NULL, format_main, &parts[i]) == 0;
    format_rows(p, parts[0].r0, parts[0].r1);
    for (int i = 1; i < nt; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        else format_rows(p, parts[i].r0, parts[i].r1);
    }
}

/* -------------------------------------------------------- the output thread */

typedef struct sink {
    gt_out *o;
    gt_mapout *map; /* regular files; else stdio on o->fp */
    pthread_t th;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *buf[2];
    size_t len[2];
    bool full[2];
    int wnext; /* the buffer the thread writes next */
    bool stop;
    gt_status err;
    char msg[1024];
} sink;

static gt_status sink_put(sink *s, const unsigned char *b, size_t n)
{
    if (s->map) return gt_mapout_write(s->map, b, n, s->o->path);
    if (n && fwrite(b, 1, n, s->o->fp) != n)
        return gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s", s->o->path, strerror(errno));
    return GT_OK;
}

static void *sink_main(void *arg)
{
    sink *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->full[s->wnext] && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
        if (!s->full[s->wnext]) break; /* stopped and drained */
        int w = s->wnext;
        pthread_mutex_unlock(&s->mu);
        gt_status st = s->err ? s->err : sink_put(s, s->buf[w], s->len[w]);
        pthread_mutex_lock(&s->mu);
        if (st && !s->err) {
            s->err = st;
            snprintf(s->msg, sizeof s->msg, "%s", gt_errmsg());
        }
        s->full[w] = false;
        s->wnext = w ^ 1;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* a free buffer (waits for the thread), or NULL after a write error */
static unsigned char *sink_acquire(sink *s, int i)
{
    if (!s->started) return s->err ? NULL : s->buf[i];
    pthread_mutex_lock(&s->mu);
    while (s->full[i] && !s->err) pthread_cond_wait(&s->cv, &s->mu);
    bool bad = s->err != GT_OK;
    pthread_mutex_unlock(&s->mu);
    return bad ? NULL : s->buf[i];
}

/* hand buffer i (n bytes) to the thread; without one, write it here */
static void sink_submit(sink *s, int i, size_t n)
{
    if (!s->started) {
        gt_status st = sink_put(s, s->buf[i], n);
        if (st) {
            s->err = st;
            snprintf(s->msg, sizeof s->msg, "%s", gt_errmsg());
        }
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->len[i] = n;
    s->full[i] = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* wait until everything handed over is written; the thread's status */
static gt_status sink_stop(sink *s)
{
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->stop = true;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->th, NULL);
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        s->started = false;
    }
    if (s->err) gt_fail(s->err, "%s", s->msg);
    return s->err;
}

/* Regular files get the mmap appender, as yuv_write.c does (and the same
 * GT_NO_MMAP_WRITE switch turns it off); the rest stdio. */
static void sink_map(sink *s)
{
    const char *no = getenv("GT_NO_MMAP_WRITE");
    if (s->o->is_stdout || (no && *no && strcmp(no, "0") != 0)) return;
    if (fflush(s->o->fp) != 0) return; /* the stdio path reports it */
    off_t at = ftello(s->o->fp);
    if (at >= 0) s->map = gt_mapout_open(fileno(s->o->fp), at, 0, 0);
}

/* ------------------------------------------------------------ the writer */

static void write_header(FILE *fp, const gt_ply_trisrc *src, gt_ply_format fmt)
{
    static const char *const fmtname[] = {"ascii", "binary_little_endian", "binary_big_endian"};
    static const char *const base[] = {"x", "y", "z", "nx", "ny", "nz"};
    fprintf(fp, "ply\nformat %s 1.0\nelement vertex %zu\n", fmtname[fmt], src->nvert);
    for (int i = 0; i < (src->normals ? 6 : 3); i++)
        fprintf(fp, "property %s %s\n", i < 3 && src->xyz_double ? "double" : "float", base[i]);
    for (int i = 0; i < src->nextra; i++) fprintf(fp, "property float %s\n", src->extra_names[i]);
    if (src->ntri > 0) fprintf(fp, "element face %zu\nproperty list uchar int vertex_indices\n", src->ntri);
    fputs("end_header\n", fp);
}

/* k floats as text, separated by ' ', then ' ' (more) or the line's end */
static void put_floats(FILE *fp, const float *v, int k, bool more)
{
    for (int i = 0; i < k; i++) {
        char b[GT_FMT_MAX + 1];
        int l = gt_fmt_float(b, v[i]);
        b[l++] = i + 1 < k || more ? ' ' : '\n';
        fwrite(b, 1, (size_t)l, fp);
    }
}

static gt_status write_ascii(gt_out *o, const gt_ply_trisrc *src, size_t chunk)
{
    FILE *fp = o->fp;
    for (size_t v0 = 0; v0 < src->nvert; v0 += chunk) {
        size_t n = src->nvert - v0 < chunk ? src->nvert - v0 : chunk;
        const float *xyz = NULL, *nrm = NULL, *extra = NULL;
        GT_TRY(src->verts(src->ctx, v0, n, &xyz, &nrm, &extra));
        for (size_t r = 0; r < n; r++) { /* a row: shortest round-trip numbers (io/numtext.h) */
            bool more = src->normals || src->nextra;
            if (src->origin || src->xyz_double) {
                for (int k = 0; k < 3; k++) {
                    char b[GT_FMT_MAX + 1];
                    const double x = (double)xyz[3 * r + k] + (src->origin ? src->origin[k] : 0.0);
                    int l = src->xyz_double ? gt_fmt_double(b, x) : gt_fmt_float(b, (float)x);
                    b[l++] = k < 2 || more ? ' ' : '\n';
                    fwrite(b, 1, (size_t)l, fp);
                }
            } else {
                put_floats(fp, xyz + 3 * r, 3, more);
            }
            if (src->normals) put_floats(fp, nrm + 3 * r, 3, src->nextra > 0);
            if (src->nextra) put_floats(fp, extra + r * (size_t)src->nextra, src->nextra, false);
        }
        if (ferror(fp)) return GT_OK; /* gt_out_commit names the error */
    }
    for (size_t t0 = 0; t0 < src->ntri; t0 += chunk) {
        size_t n = src->ntri - t0 < chunk ? src->ntri - t0 : chunk;
        const int32_t *t = NULL;
        GT_TRY(src->tris(src->ctx, t0, n, &t));
        for (size_t r = 0; r < n; r++) fprintf(fp, "3 %d %d %d\n", t[3 * r], t[3 * r + 1], t[3 * r + 2]);
        if (ferror(fp)) return GT_OK;
    }
    return GT_OK;
}

/* the binary body; *sink_st: the output thread's status (write errors) */
static gt_status write_binary(sink *s, const gt_ply_trisrc *src, gt_ply_format fmt, size_t chunk)
{
    const bool swap = (fmt == GT_PLY_BINARY_BE) == ply_host_le();
    const size_t vrs = 4 * (size_t)(3 + (src->normals ? 3 : 0) + src->nextra) + (src->xyz_double ? 12 : 0);
    const size_t cap = chunk * (vrs > 13 ? vrs : 13);
    for (int i = 0; i < 2; i++)
        if (!(s->buf[i] = malloc(cap ? cap : 1)))
            return gt_fail(GT_ERR_RUNTIME, "out of memory (PLY output buffers, 2 x %zu bytes)", cap);
    if (pthread_mutex_init(&s->mu, NULL) == 0) {
        if (pthread_cond_init(&s->cv, NULL) == 0) {
            s->started = pthread_create(&s->th, NULL, sink_main, s) == 0;
            if (!s->started) pthread_cond_destroy(&s->cv);
        }
        if (!s->started) pthread_mutex_destroy(&s->mu);
    }
    const int nt = format_threads();
    int k = 0;
    for (size_t v0 = 0; v0 < src->nvert; v0 += chunk, k ^= 1) {
        piece p = {.faces = false, .swap = swap, .n = src->nvert - v0 < chunk ? src->nvert - v0 : chunk,
                   .nextra = src->nextra, .origin = src->origin, .xyz_double = src->xyz_double, .rs = vrs};
        GT_TRY(src->verts(src->ctx, v0, p.n, &p.xyz, &p.nrm, &p.extra));
        if (!src->normals) p.nrm = NULL;
        if (!(p.dst = sink_acquire(s, k))) return GT_OK; /* sink_stop reports it */
        format_piece(&p, nt);
        sink_submit(s, k, p.n * vrs);
    }
    for (size_t t0 = 0; t0 < src->ntri; t0 += chunk, k ^= 1) {
        piece p = {.faces = true, .swap = swap, .n = src->ntri - t0 < chunk ? src->ntri - t0 : chunk, .rs = 13};
        GT_TRY(src->tris(src->ctx, t0, p.n, &p.tris));
        if (!(p.dst = sink_acquire(s, k))) return GT_OK;
        format_piece(&p, nt);
        sink_submit(s, k, p.n * 13);
    }
    return GT_OK;
}

gt_status gt_ply_write_trisrc(const char *path, const gt_ply_trisrc *src, gt_ply_format fmt)
{
    if (fmt != GT_PLY_ASCII && fmt != GT_PLY_BINARY_LE && fmt != GT_PLY_BINARY_BE)
        return gt_fail(GT_ERR_USAGE, "bad PLY format %d", (int)fmt);
    if (src->nextra < 0 || src->nextra > PLY_MAX_PROPS - 6)
        return gt_fail(GT_ERR_USAGE, "bad extra column count %d", src->nextra);
    const size_t chunk = src->chunk ? src->chunk : DEFAULT_CHUNK;
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    write_header(o.fp, src, fmt);
    gt_status st;
    if (fmt == GT_PLY_ASCII) {
        st = write_ascii(&o, src, chunk);
    } else {
        sink s;
        memset(&s, 0, sizeof s);
        s.o = &o;
        sink_map(&s);
        st = write_binary(&s, src, fmt, chunk);
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", gt_errmsg()); /* the source's or the allocation's message */
        gt_status wst = sink_stop(&s); /* drains what was handed over */
        if (st) gt_fail(st, "%s", msg);
        else st = wst;
        if (s.map) {
            gt_status cst = gt_mapout_close(s.map, st == GT_OK, o.path);
            if (!st) st = cst;
        }
        free(s.buf[0]);
        free(s.buf[1]);
    }
    if (st != GT_OK) {
        gt_out_abort(&o);
        return st;
    }
    return gt_out_commit(&o);
}
