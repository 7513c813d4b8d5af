/* COLMAP's text model files (colmap.h). The whole file is read first: a
 * line of images.txt holds all 2-D points of an image (hundreds of KB for
 * a photograph with tens of thousands of features), longer than the
 * streaming reader's line limit. Errors name file:line. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/colmap.h"
#include "io/colmap_internal.h"
#include "io/numtext.h"

typedef struct txt_in {
    const char *path;
    unsigned char *data;
    size_t len, pos;
    long line;      /* number of the line last returned */
    char *s;        /* cursor in the current line (NUL-terminated in place) */
} txt_in;

static gt_status open_txt(txt_in *t, const char *path)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    GT_TRY(gt_in_read_all(path, &t->data, &t->len));
    unsigned char *d = realloc(t->data, t->len + 1); /* room for the NUL after the last line */
    if (!d) {
        free(t->data);
        return gt_fail(GT_ERR_RUNTIME, "out of memory reading '%s'", path);
    }
    t->data = d;
    t->data[t->len] = 0;
    if (memchr(t->data, 0, t->len)) {
        size_t at = (size_t)((unsigned char *)memchr(t->data, 0, t->len) - t->data);
        long line = 1;
        for (size_t k = 0; k < at; k++) line += t->data[k] == '\n';
        free(t->data);
        return gt_fail_at(GT_ERR_DATA, path, line, "a NUL byte: not a text file");
    }
    return GT_OK;
}

/* The next line (NUL-terminated in place, without '\n' and '\r'), or NULL at the end. */
static char *next_line(txt_in *t)
{
    if (t->pos >= t->len) return NULL;
    char *s = (char *)t->data + t->pos;
    char *nl = memchr(s, '\n', t->len - t->pos);
    size_t n = nl ? (size_t)(nl - s) : t->len - t->pos;
    t->pos += n + (nl ? 1 : 0);
    s[n] = 0; /* the '\n', or the NUL after the data */
    if (n && s[n - 1] == '\r') s[n - 1] = 0;
    t->line++;
    t->s = s;
    return s;
}

/* The next record line: blank lines and '#' comments skipped. */
static char *next_record(txt_in *t)
{
    char *s;
    while ((s = next_line(t))) {
        while (*s == ' ' || *s == '\t') s++;
        if (*s && *s != '#') {
            t->s = s;
            return s;
        }
    }
    return NULL;
}

static void skip_ws(txt_in *t)
{
    while (*t->s == ' ' || *t->s == '\t' || *t->s == '\r') t->s++;
}

static bool at_end(txt_in *t)
{
    skip_ws(t);
    return *t->s == 0;
}

static gt_status fail(const txt_in *t, const char *fmt, const char *what, const char *tok)
{
    char msg[320];
    snprintf(msg, sizeof msg, fmt, what, tok);
    return gt_fail_at(GT_ERR_DATA, t->path, t->line, "%s", msg);
}

/* The current token, for messages (at most 40 characters). */
static const char *token(const txt_in *t, char *buf, size_t n)
{
    size_t k = 0;
    const char *s = t->s;
    while (s[k] && s[k] != ' ' && s[k] != '\t' && k + 1 < n && k < 40) buf[k] = s[k], k++;
    buf[k] = 0;
    return buf;
}

static gt_status get_double(txt_in *t, const char *what, double *v)
{
    skip_ws(t);
    char buf[48];
    if (!*t->s) return fail(t, "the line ends before the %s%s", what, "");
    const char *end;
    if (!gt_scan_double(t->s, &end, v) || (*end && *end != ' ' && *end != '\t' && *end != '\r'))
        return fail(t, "the %s '%s' is not a number", what, token(t, buf, sizeof buf));
    t->s = (char *)end;
    return GT_OK;
}

/* An unsigned integer at most max (a leading '-' only for -1 when allow_neg). */
static gt_status get_uint(txt_in *t, const char *what, uint64_t max, uint64_t *v)
{
    skip_ws(t);
    char buf[48];
    if (!*t->s) return fail(t, "the line ends before the %s%s", what, "");
    const char *s = t->s;
    if (*s < '0' || *s > '9') return fail(t, "the %s '%s' is not a non-negative integer", what, token(t, buf, sizeof buf));
    errno = 0;
    char *end;
    unsigned long long u = strtoull(s, &end, 10);
    if (*end && *end != ' ' && *end != '\t' && *end != '\r')
        return fail(t, "the %s '%s' is not a non-negative integer", what, token(t, buf, sizeof buf));
    if (errno == ERANGE || u > max) return fail(t, "the %s '%s' is out of range", what, token(t, buf, sizeof buf));
    t->s = end;
    *v = u;
    return GT_OK;
}

/* A point3D id of a 2-D point: -1 or a non-negative integer. */
static gt_status get_point_ref(txt_in *t, int64_t *v)
{
    skip_ws(t);
    if (t->s[0] == '-' && t->s[1] == '1' && (!t->s[2] || t->s[2] == ' ' || t->s[2] == '\t' || t->s[2] == '\r')) {
        t->s += 2;
        *v = -1;
        return GT_OK;
    }
    uint64_t u;
    GT_TRY(get_uint(t, "3-D point id of a 2-D point", INT64_MAX, &u));
    *v = (int64_t)u;
    return GT_OK;
}

/* The number of whitespace-separated tokens left on the line. */
static size_t count_tokens(const char *s)
{
    size_t n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\r') s++;
        if (!*s) break;
        n++;
        while (*s && *s != ' ' && *s != '\t' && *s != '\r') s++;
    }
    return n;
}

gt_status gt_colmap_read_cameras_txt(const char *path, gt_colmap_model *m)
{
    gt_colmap_free_cameras(m);
    txt_in t;
    GT_TRY(open_txt(&t, path));
    gt_status st = GT_OK;
    size_t cap = 0;
    char why[COLMAP_WHY], buf[48];
    while (st == GT_OK && next_record(&t)) {
        if (!colmap_grow((void **)&m->cameras, &cap, m->ncameras + 1, sizeof *m->cameras)) {
            st = gt_fail(GT_ERR_RUNTIME, "out of memory (cameras)");
            break;
        }
        gt_colmap_camera *c = &m->cameras[m->ncameras++];
        memset(c, 0, sizeof *c);
        c->where = t.line;
        uint64_t id, w, h;
        if ((st = get_uint(&t, "camera id", UINT32_MAX, &id)) != GT_OK) break;
        c->id = (uint32_t)id;
        skip_ws(&t);
        token(&t, buf, sizeof buf);
        c->model = gt_colmap_model_from_name(buf);
        if (c->model < 0) {
            st = fail(&t, "unknown camera model '%s'%s (COLMAP's names: SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, "
                          "OPENCV, ...)", buf, "");
            break;
        }
        t.s += strlen(buf);
        if ((st = get_uint(&t, "width", INT_MAX, &w)) != GT_OK || (st = get_uint(&t, "height", INT_MAX, &h)) != GT_OK)
            break;
        if (w < 1 || h < 1) {
            snprintf(why, sizeof why, "camera %u: size %llux%llu outside 1..%d", c->id, (unsigned long long)w,
                     (unsigned long long)h, INT_MAX);
            st = gt_fail_at(GT_ERR_DATA, path, t.line, "%s", why);
            break;
        }
        c->width = (int)w, c->height = (int)h;
        size_t np = count_tokens(t.s);
        if (np != (size_t)gt_colmap_model_nparams(c->model)) {
            snprintf(why, sizeof why, "camera %u: model %s takes %d parameters, not %zu", c->id,
                     gt_colmap_model_name(c->model), gt_colmap_model_nparams(c->model), np);
            st = gt_fail_at(GT_ERR_DATA, path, t.line, "%s", why);
            break;
        }
        c->nparams = (int)np;
        for (int k = 0; k < c->nparams && st == GT_OK; k++) st = get_double(&t, "camera parameter", &c->params[k]);
        if (st == GT_OK && !colmap_camera_ok(c, why)) st = gt_fail_at(GT_ERR_DATA, path, t.line, "%s", why);
    }
    free(t.data);
    if (st == GT_OK && !(m->cameras_path = strdup(path))) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    if (st != GT_OK) gt_colmap_free_cameras(m);
    return st;
}

/* The 2-D points line of image im (the line after its pose). */
static gt_status points2d_line(txt_in *t, gt_colmap_image *im, bool keep)
{
    char *s = next_line(t);
    if (!s) return GT_OK; /* the file ends after the pose: no 2-D points */
    size_t n = count_tokens(s);
    if (n % 3)
        return gt_fail_at(GT_ERR_DATA, t->path, t->line,
                          "the 2-D points of image %u: %zu values, not a multiple of 3 (X Y POINT3D_ID)", im->id, n);
    im->npoints2d = n / 3;
    if (keep) {
        im->xy = gt_malloc_array(n / 3 ? n / 3 : 1, 2 * sizeof *im->xy, "2-D points");
        im->point3d_id = gt_malloc_array(n / 3 ? n / 3 : 1, sizeof *im->point3d_id, "2-D points");
        if (!im->xy || !im->point3d_id) return GT_ERR_RUNTIME;
    }
    for (size_t k = 0; k < n / 3; k++) {
        double x, y;
        int64_t ref;
        GT_TRY(get_double(t, "2-D point x", &x));
        GT_TRY(get_double(t, "2-D point y", &y));
        GT_TRY(get_point_ref(t, &ref));
        if (keep) im->xy[2 * k] = x, im->xy[2 * k + 1] = y, im->point3d_id[k] = ref;
    }
    return GT_OK;
}

gt_status gt_colmap_read_images_txt(const char *path, bool keep_points2d, gt_colmap_model *m)
{
    gt_colmap_free_images(m);
    txt_in t;
    GT_TRY(open_txt(&t, path));
    gt_status st = GT_OK;
    size_t cap = 0;
    char why[COLMAP_WHY];
    static const char *const QT[7] = {"QW", "QX", "QY", "QZ", "TX", "TY", "TZ"};
    while (st == GT_OK && next_record(&t)) {
        if (!colmap_grow((void **)&m->images, &cap, m->nimages + 1, sizeof *m->images)) {
            st = gt_fail(GT_ERR_RUNTIME, "out of memory (images)");
            break;
        }
        gt_colmap_image *im = &m->images[m->nimages++];
        memset(im, 0, sizeof *im);
        im->where = t.line;
        uint64_t id, cam;
        if ((st = get_uint(&t, "image id", UINT32_MAX, &id)) != GT_OK) break;
        im->id = (uint32_t)id;
        for (int k = 0; k < 7 && st == GT_OK; k++) st = get_double(&t, QT[k], k < 4 ? &im->qvec[k] : &im->tvec[k - 4]);
        if (st != GT_OK || (st = get_uint(&t, "camera id", UINT32_MAX, &cam)) != GT_OK) break;
        im->camera_id = (uint32_t)cam;
        skip_ws(&t);
        /* the name: the rest of the line (COLMAP names have no spaces, but
         * a binary model's can, and they stay whole through a text copy) */
        size_t n = strlen(t.s);
        while (n && (t.s[n - 1] == ' ' || t.s[n - 1] == '\t')) n--;
        if (n == 0) {
            st = gt_fail_at(GT_ERR_DATA, path, t.line, "image %u: the line ends before the NAME", im->id);
            break;
        }
        if (n >= GT_COLMAP_MAX_NAME) {
            st = gt_fail_at(GT_ERR_DATA, path, t.line, "image %u: a name longer than %d bytes", im->id,
                            GT_COLMAP_MAX_NAME - 1);
            break;
        }
        if (!(im->name = strndup(t.s, n))) {
            st = gt_fail(GT_ERR_RUNTIME, "out of memory");
            break;
        }
        long pose_line = t.line;
        if (!colmap_image_ok(im, why)) {
            st = gt_fail_at(GT_ERR_DATA, path, pose_line, "%s", why);
            break;
        }
        st = points2d_line(&t, im, keep_points2d);
    }
    free(t.data);
    if (st == GT_OK && !(m->images_path = strdup(path))) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    if (st != GT_OK) gt_colmap_free_images(m);
    return st;
}

gt_status gt_colmap_read_points_txt(const char *path, bool keep_tracks, gt_colmap_model *m)
{
    gt_colmap_free_points(m);
    txt_in t;
    GT_TRY(open_txt(&t, path));
    gt_status st = GT_OK;
    size_t cap = 0;
    gt_colmap_points *p = &m->points;
    char why[COLMAP_WHY];
    static const char *const XYZ[3] = {"X", "Y", "Z"}, *const RGB[3] = {"R", "G", "B"};
    while (st == GT_OK && next_record(&t)) {
        if ((st = colmap_points_reserve(p, &cap, p->n + 1, keep_tracks)) != GT_OK) break;
        size_t i = p->n++;
        p->where[i] = t.line;
        p->track_len[i] = 0;
        if (keep_tracks) p->track[i] = NULL;
        uint64_t id, c;
        if ((st = get_uint(&t, "3-D point id", UINT64_MAX, &id)) != GT_OK) break;
        p->id[i] = id;
        for (int k = 0; k < 3 && st == GT_OK; k++) st = get_double(&t, XYZ[k], &p->xyz[3 * i + k]);
        for (int k = 0; k < 3 && st == GT_OK; k++) {
            st = get_uint(&t, RGB[k], 255, &c);
            p->rgb[3 * i + k] = (uint8_t)c;
        }
        if (st != GT_OK || (st = get_double(&t, "ERROR", &p->error[i])) != GT_OK) break;
        if (!colmap_point_ok(p, i, why)) {
            st = gt_fail_at(GT_ERR_DATA, path, t.line, "%s", why);
            break;
        }
        size_t nt = count_tokens(t.s);
        if (nt % 2) {
            st = gt_fail_at(GT_ERR_DATA, path, t.line,
                            "3-D point %llu: the track has %zu values, not pairs (IMAGE_ID POINT2D_IDX)",
                            (unsigned long long)id, nt);
            break;
        }
        p->track_len[i] = nt / 2;
        if (keep_tracks && !(p->track[i] = gt_malloc_array(nt ? nt : 1, sizeof(uint32_t), "3-D point track"))) {
            st = GT_ERR_RUNTIME;
            break;
        }
        for (size_t k = 0; k < nt && st == GT_OK; k++) {
            st = get_uint(&t, k % 2 ? "POINT2D_IDX of a track" : "IMAGE_ID of a track", UINT32_MAX, &c);
            if (keep_tracks) p->track[i][k] = (uint32_t)c;
        }
        if (st == GT_OK && !at_end(&t)) st = fail(&t, "unexpected text '%s'%s", token(&t, why, 48), "");
    }
    free(t.data);
    if (st == GT_OK && !(m->points_path = strdup(path))) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    if (st != GT_OK) gt_colmap_free_points(m);
    return st;
}
