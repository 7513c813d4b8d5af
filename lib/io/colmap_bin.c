/* COLMAP's binary model files (colmap.h has the layout), streamed through
 * the project's reader so that a file of hundreds of MB (the 2-D points of
 * images.bin, the tracks of points3D.bin) is never held whole. Every read
 * that runs past the end names the record and the byte offset of the field;
 * counts are checked against the bytes left before anything is allocated
 * for them. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "io/colmap.h"
#include "io/colmap_internal.h"
#include "io/reader.h"

typedef struct bin_in {
    gt_reader r;
    const char *path;
    long long size;   /* file size, -1 when unknown (a pipe) */
    const char *rec;  /* record kind, for messages */
    uint64_t i, n;    /* record i (0-based) of n */
} bin_in;

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static double f64(const unsigned char *p)
{
    uint64_t u = le64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static gt_status open_bin(bin_in *b, const char *path, const char *rec)
{
    memset(b, 0, sizeof *b);
    GT_TRY(gt_rd_open(&b->r, path));
    b->path = path;
    b->size = gt_rd_file_size(&b->r);
    b->rec = rec;
    return GT_OK;
}

/* n bytes of field `what` of the current record. */
static gt_status get(bin_in *b, void *dst, size_t n, const char *what)
{
    long long at = gt_rd_offset(&b->r);
    size_t got = gt_rd_bytes(&b->r, dst, n);
    if (got == n) return GT_OK;
    if (b->r.err) return gt_rd_ioerr(&b->r);
    if (b->n == 0 && b->i == 0 && !strcmp(what, "count"))
        return gt_fail_at_byte(GT_ERR_DATA, b->path, at, "truncated: the file ends in the %s count (%lld bytes)",
                               b->rec, (long long)at + (long long)got);
    return gt_fail_at_byte(GT_ERR_DATA, b->path, at, "truncated: the file ends in the %s of %s record %llu of %llu",
                           what, b->rec, (unsigned long long)b->i + 1, (unsigned long long)b->n);
}

/* Bytes left after the current position (-1 when unknown). */
static long long left(const bin_in *b)
{
    return b->size < 0 ? -1 : b->size - gt_rd_offset(&b->r);
}

/* Whether `count` items of at least `each` bytes can fit in what is left. */
static bool fits(const bin_in *b, uint64_t count, uint64_t each)
{
    long long l = left(b);
    return l < 0 || count <= (uint64_t)l / each;
}

/* Skip n bytes (the caller checked they are there when the size is known). */
static gt_status skip(bin_in *b, uint64_t n, const char *what)
{
    while (n > 0) {
        size_t want = n < GT_RD_BUF ? (size_t)n : GT_RD_BUF;
        size_t a = gt_rd_fill(&b->r, want);
        if (a == 0) {
            if (b->r.err) return gt_rd_ioerr(&b->r);
            return gt_fail_at_byte(GT_ERR_DATA, b->path, gt_rd_offset(&b->r),
                                   "truncated: the file ends in the %s of %s record %llu of %llu", what, b->rec,
                                   (unsigned long long)b->i + 1, (unsigned long long)b->n);
        }
        size_t take = a < want ? a : want;
        b->r.pos += take;
        n -= take;
    }
    return GT_OK;
}

/* The count at the start; checked against the bytes that follow. */
static gt_status get_count(bin_in *b, uint64_t min_record, const char *plural)
{
    unsigned char c[8];
    GT_TRY(get(b, c, 8, "count"));
    b->n = le64(c);
    if (!fits(b, b->n, min_record))
        return gt_fail_at_byte(GT_ERR_DATA, b->path, 0,
                               "the count of %llu %s is more than the file holds (%lld bytes after it, "
                               "at least %llu per record)",
                               (unsigned long long)b->n, plural, left(b), (unsigned long long)min_record);
    return GT_OK;
}

/* Nothing may follow the last record. */
static gt_status check_end(bin_in *b, const char *plural)
{
    size_t a = gt_rd_fill(&b->r, 1);
    if (b->r.err) return gt_rd_ioerr(&b->r);
    if (a == 0) return GT_OK;
    return gt_fail_at_byte(GT_ERR_DATA, b->path, gt_rd_offset(&b->r),
                           "data after the last of the %llu %s (a wrong count, or not a COLMAP model file)",
                           (unsigned long long)b->n, plural);
}

static gt_status bad(const bin_in *b, long long at, const char *why)
{
    return gt_fail_at_byte(GT_ERR_DATA, b->path, at, "%s", why);
}

gt_status gt_colmap_read_cameras_bin(const char *path, gt_colmap_model *m)
{
    gt_colmap_free_cameras(m);
    bin_in b;
    GT_TRY(open_bin(&b, path, "camera"));
    gt_status st = get_count(&b, 24 + 16, "cameras");
    size_t cap = 0;
    char why[COLMAP_WHY];
    for (b.i = 0; st == GT_OK && b.i < b.n; b.i++) {
        if (!colmap_grow((void **)&m->cameras, &cap, (size_t)b.i + 1, sizeof *m->cameras)) {
            st = gt_fail(GT_ERR_RUNTIME, "out of memory (cameras)");
            break;
        }
        gt_colmap_camera *c = &m->cameras[b.i];
        memset(c, 0, sizeof *c);
        c->where = gt_rd_offset(&b.r);
        unsigned char h[24];
        if ((st = get(&b, h, 24, "header")) != GT_OK) break;
        c->id = le32(h);
        c->model = (int)le32(h + 4);
        uint64_t w = le64(h + 8), hh = le64(h + 16);
        m->ncameras = (size_t)b.i + 1;
        if (!gt_colmap_model_name(c->model)) {
            snprintf(why, sizeof why, "camera %u: unknown camera model id %d (COLMAP's are 0..%d)", c->id, c->model,
                     GT_COLMAP_NMODELS - 1);
            st = bad(&b, c->where + 4, why);
            break;
        }
        if (w < 1 || w > INT_MAX || hh < 1 || hh > INT_MAX) {
            snprintf(why, sizeof why, "camera %u: size %llux%llu outside 1..%d", c->id, (unsigned long long)w,
                     (unsigned long long)hh, INT_MAX);
            st = bad(&b, c->where + 8, why);
            break;
        }
        c->width = (int)w, c->height = (int)hh;
        c->nparams = gt_colmap_model_nparams(c->model);
        unsigned char p[8 * GT_COLMAP_MAX_PARAMS];
        if ((st = get(&b, p, 8 * (size_t)c->nparams, "parameters")) != GT_OK) break;
        for (int k = 0; k < c->nparams; k++) c->params[k] = f64(p + 8 * k);
        if (!colmap_camera_ok(c, why)) st = bad(&b, c->where + 24, why);
    }
    if (st == GT_OK) st = check_end(&b, "cameras");
    gt_rd_close(&b.r);
    if (st == GT_OK) m->cameras_path = strdup(path);
    if (st == GT_OK && !m->cameras_path) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    if (st != GT_OK) gt_colmap_free_cameras(m);
    return st;
}

/* The NUL-terminated name of the current image. */
static gt_status get_name(bin_in *b, char **name)
{
    char buf[GT_COLMAP_MAX_NAME];
    long long at = gt_rd_offset(&b->r);
    size_t n = 0;
    for (;;) {
        size_t a = gt_rd_fill(&b->r, 1);
        if (a == 0) {
            if (b->r.err) return gt_rd_ioerr(&b->r);
            return gt_fail_at_byte(GT_ERR_DATA, b->path, gt_rd_offset(&b->r),
                                   "truncated: the file ends in the name of image record %llu of %llu",
                                   (unsigned long long)b->i + 1, (unsigned long long)b->n);
        }
        const unsigned char *s = b->r.buf + b->r.pos;
        const unsigned char *z = memchr(s, 0, a);
        size_t take = z ? (size_t)(z - s) : a;
        if (n + take >= sizeof buf)
            return gt_fail_at_byte(GT_ERR_DATA, b->path, at,
                                   "the name of image record %llu of %llu is not terminated within %d bytes",
                                   (unsigned long long)b->i + 1, (unsigned long long)b->n, GT_COLMAP_MAX_NAME);
        memcpy(buf + n, s, take);
        n += take;
        b->r.pos += take + (z ? 1 : 0);
        if (z) break;
    }
    buf[n] = 0;
    *name = strdup(buf);
    return *name ? GT_OK : gt_fail(GT_ERR_RUNTIME, "out of memory");
}

/* The 2-D points of image `im`: kept or skipped. */
static gt_status get_points2d(bin_in *b, gt_colmap_image *im, bool keep)
{
    long long at = gt_rd_offset(&b->r);
    if (!fits(b, im->npoints2d, 24))
        return gt_fail_at_byte(GT_ERR_DATA, b->path, at,
                               "truncated: image %u (record %llu of %llu) has %llu 2-D points of 24 bytes, the file "
                               "has %lld bytes left",
                               im->id, (unsigned long long)b->i + 1, (unsigned long long)b->n,
                               (unsigned long long)im->npoints2d, left(b));
    if (!keep) return skip(b, im->npoints2d * 24, "2-D points");
    size_t n = (size_t)im->npoints2d;
    im->xy = gt_malloc_array(n ? n : 1, 2 * sizeof *im->xy, "2-D points");
    im->point3d_id = gt_malloc_array(n ? n : 1, sizeof *im->point3d_id, "2-D points");
    if (!im->xy || !im->point3d_id) return GT_ERR_RUNTIME;
    for (size_t k = 0; k < n; k++) {
        unsigned char p[24];
        GT_TRY(get(b, p, 24, "2-D points"));
        im->xy[2 * k] = f64(p), im->xy[2 * k + 1] = f64(p + 8);
        im->point3d_id[k] = (int64_t)le64(p + 16);
    }
    return GT_OK;
}

gt_status gt_colmap_read_images_bin(const char *path, bool keep_points2d, gt_colmap_model *m)
{
    gt_colmap_free_images(m);
    bin_in b;
    GT_TRY(open_bin(&b, path, "image"));
    gt_status st = get_count(&b, 4 + 56 + 4 + 1 + 8, "images");
    size_t cap = 0;
    char why[COLMAP_WHY];
    for (b.i = 0; st == GT_OK && b.i < b.n; b.i++) {
        if (!colmap_grow((void **)&m->images, &cap, (size_t)b.i + 1, sizeof *m->images)) {
            st = gt_fail(GT_ERR_RUNTIME, "out of memory (images)");
            break;
        }
        gt_colmap_image *im = &m->images[b.i];
        memset(im, 0, sizeof *im);
        m->nimages = (size_t)b.i + 1;
        im->where = gt_rd_offset(&b.r);
        unsigned char h[64];
        if ((st = get(&b, h, 64, "pose")) != GT_OK) break;
        im->id = le32(h);
        for (int k = 0; k < 4; k++) im->qvec[k] = f64(h + 4 + 8 * k);
        for (int k = 0; k < 3; k++) im->tvec[k] = f64(h + 36 + 8 * k);
        im->camera_id = le32(h + 60);
        if ((st = get_name(&b, &im->name)) != GT_OK) break;
        if (!colmap_image_ok(im, why)) {
            st = bad(&b, im->where, why);
            break;
        }
        unsigned char c[8];
        if ((st = get(&b, c, 8, "2-D point count")) != GT_OK) break;
        im->npoints2d = le64(c);
        st = get_points2d(&b, im, keep_points2d);
    }
    if (st == GT_OK) st = check_end(&b, "images");
    gt_rd_close(&b.r);
    if (st == GT_OK) m->images_path = strdup(path);
    if (st == GT_OK && !m->images_path) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    if (st != GT_OK) gt_colmap_free_images(m);
    return st;
}

gt_status gt_colmap_read_points_bin(const char *path, bool keep_tracks, gt_colmap_model *m)
{
    gt_colmap_free_points(m);
    bin_in b;
    GT_TRY(open_bin(&b, path, "3-D point"));
    const uint64_t head = 8 + 24 + 3 + 8 + 8;
    gt_status st = get_count(&b, head, "3-D points");
    /* the count fits in the file when its size is known; else the arrays grow */
    size_t cap = b.size >= 0 ? (size_t)b.n : 0;
    if (st == GT_OK && cap) st = gt_colmap_points_alloc(&m->points, cap, keep_tracks);
    gt_colmap_points *p = &m->points;
    char why[COLMAP_WHY];
    for (b.i = 0; st == GT_OK && b.i < b.n; b.i++) {
        size_t i = (size_t)b.i;
        if ((st = colmap_points_reserve(p, &cap, i + 1, keep_tracks)) != GT_OK) break;
        p->where[i] = gt_rd_offset(&b.r);
        unsigned char h[51];
        if ((st = get(&b, h, (size_t)head, "fields")) != GT_OK) break;
        p->n = i + 1;
        p->id[i] = le64(h);
        for (int k = 0; k < 3; k++) p->xyz[3 * i + k] = f64(h + 8 + 8 * k);
        memcpy(p->rgb + 3 * i, h + 32, 3);
        p->error[i] = f64(h + 35);
        p->track_len[i] = le64(h + 43);
        if (!colmap_point_ok(p, i, why)) {
            st = bad(&b, p->where[i], why);
            break;
        }
        uint64_t tl = p->track_len[i];
        if (!fits(&b, tl, 8)) {
            st = gt_fail_at_byte(GT_ERR_DATA, b.path, gt_rd_offset(&b.r),
                                 "truncated: 3-D point %llu (record %llu of %llu) has a track of %llu elements of 8 "
                                 "bytes, the file has %lld bytes left",
                                 (unsigned long long)p->id[i], (unsigned long long)b.i + 1, (unsigned long long)b.n,
                                 (unsigned long long)tl, left(&b));
            break;
        }
        if (!keep_tracks) {
            st = skip(&b, tl * 8, "track");
            continue;
        }
        p->track[i] = gt_malloc_array(tl ? (size_t)tl : 1, 8, "3-D point track");
        if (!p->track[i]) {
            st = GT_ERR_RUNTIME;
            break;
        }
        for (uint64_t k = 0; k < tl && st == GT_OK; k++) {
            unsigned char t[8];
            if ((st = get(&b, t, 8, "track")) == GT_OK)
                p->track[i][2 * k] = le32(t), p->track[i][2 * k + 1] = le32(t + 4);
        }
    }
    if (st == GT_OK) st = check_end(&b, "3-D points");
    gt_rd_close(&b.r);
    if (st == GT_OK) m->points_path = strdup(path);
    if (st == GT_OK && !m->points_path) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    if (st != GT_OK) gt_colmap_free_points(m);
    return st;
}
