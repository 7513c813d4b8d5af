/* COLMAP sparse models (colmap.h): the model table, the folder reader, the
 * cross-checks between records and files, and releasing a model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/path.h"
#include "io/colmap.h"
#include "io/colmap_internal.h"

static const struct {
    const char *name;
    int nparams;
} MODELS[GT_COLMAP_NMODELS] = {
    {"SIMPLE_PINHOLE", 3}, {"PINHOLE", 4}, {"SIMPLE_RADIAL", 4}, {"RADIAL", 5},
    {"OPENCV", 8}, {"OPENCV_FISHEYE", 8}, {"FULL_OPENCV", 12}, {"FOV", 5},
    {"SIMPLE_RADIAL_FISHEYE", 4}, {"RADIAL_FISHEYE", 5}, {"THIN_PRISM_FISHEYE", 12},
    {"RAD_TAN_THIN_PRISM_FISHEYE", 16}, {"SIMPLE_DIVISION", 4}, {"DIVISION", 5},
    {"SIMPLE_FISHEYE", 3}, {"FISHEYE", 4}, {"EUCM", 6}, {"EQUIRECTANGULAR", 2},
};

const char *gt_colmap_model_name(int model)
{
    return model >= 0 && model < GT_COLMAP_NMODELS ? MODELS[model].name : NULL;
}

int gt_colmap_model_nparams(int model)
{
    return model >= 0 && model < GT_COLMAP_NMODELS ? MODELS[model].nparams : 0;
}

int gt_colmap_model_from_name(const char *name)
{
    for (int k = 0; k < GT_COLMAP_NMODELS; k++)
        if (!strcmp(name, MODELS[k].name)) return k;
    return -1;
}

/* ---- per-record checks (colmap_internal.h) ---- */
bool colmap_camera_ok(const gt_colmap_camera *c, char *why)
{
    if (c->nparams != gt_colmap_model_nparams(c->model)) {
        snprintf(why, COLMAP_WHY, "camera %u: model %s takes %d parameters, not %d", c->id,
                 gt_colmap_model_name(c->model), gt_colmap_model_nparams(c->model), c->nparams);
        return false;
    }
    for (int k = 0; k < c->nparams; k++)
        if (!isfinite(c->params[k])) {
            snprintf(why, COLMAP_WHY, "camera %u: parameter %d is not a finite number", c->id, k + 1);
            return false;
        }
    return true;
}

bool colmap_image_ok(const gt_colmap_image *im, char *why)
{
    double q2 = 0;
    for (int k = 0; k < 4; k++) {
        if (!isfinite(im->qvec[k])) {
            snprintf(why, COLMAP_WHY, "image %u: quaternion component %d is not a finite number", im->id, k + 1);
            return false;
        }
        q2 += im->qvec[k] * im->qvec[k];
    }
    for (int k = 0; k < 3; k++)
        if (!isfinite(im->tvec[k])) {
            snprintf(why, COLMAP_WHY, "image %u: translation component %d is not a finite number", im->id, k + 1);
            return false;
        }
    if (!(q2 > 1e-12)) {
        snprintf(why, COLMAP_WHY, "image %u: the rotation quaternion is zero", im->id);
        return false;
    }
    if (!im->name || !im->name[0]) {
        snprintf(why, COLMAP_WHY, "image %u has an empty name", im->id);
        return false;
    }
    return true;
}

bool colmap_point_ok(const gt_colmap_points *p, size_t i, char *why)
{
    const double *x = p->xyz + 3 * i;
    if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2])) {
        snprintf(why, COLMAP_WHY, "3-D point %llu: position is not finite", (unsigned long long)p->id[i]);
        return false;
    }
    if (!isfinite(p->error[i])) {
        snprintf(why, COLMAP_WHY, "3-D point %llu: error is not a finite number", (unsigned long long)p->id[i]);
        return false;
    }
    return true;
}

bool colmap_grow(void **a, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap) return true;
    size_t c = *cap ? *cap : 16;
    while (c < n) c *= 2;
    size_t bytes;
    if (!gt_mul_size(c, size, &bytes)) return false;
    void *b = realloc(*a, bytes);
    if (!b) return false;
    *a = b;
    *cap = c;
    return true;
}

/* ---- releasing ---- */
void gt_colmap_free_cameras(gt_colmap_model *m)
{
    free(m->cameras), m->cameras = NULL, m->ncameras = 0;
    free(m->cameras_path), m->cameras_path = NULL;
}

void gt_colmap_free_images(gt_colmap_model *m)
{
    for (size_t i = 0; i < m->nimages; i++)
        free(m->images[i].name), free(m->images[i].xy), free(m->images[i].point3d_id);
    free(m->images), m->images = NULL, m->nimages = 0;
    free(m->images_path), m->images_path = NULL;
}

void gt_colmap_free_points(gt_colmap_model *m)
{
    gt_colmap_points *p = &m->points;
    if (p->track)
        for (size_t i = 0; i < p->n; i++) free(p->track[i]);
    free(p->id), free(p->xyz), free(p->rgb), free(p->error), free(p->track_len), free(p->track), free(p->where);
    memset(p, 0, sizeof *p);
    free(m->points_path), m->points_path = NULL;
}

void gt_colmap_free(gt_colmap_model *m)
{
    if (!m) return;
    gt_colmap_free_cameras(m);
    gt_colmap_free_images(m);
    gt_colmap_free_points(m);
}

gt_status gt_colmap_points_alloc(gt_colmap_points *p, size_t n, bool keep_tracks)
{
    memset(p, 0, sizeof *p);
    size_t k = n ? n : 1;
    p->id = gt_malloc_array(k, sizeof *p->id, "3-D points");
    p->xyz = gt_malloc_array(k, 3 * sizeof *p->xyz, "3-D points");
    p->rgb = gt_malloc_array(k, 3, "3-D points");
    p->error = gt_malloc_array(k, sizeof *p->error, "3-D points");
    p->track_len = gt_malloc_array(k, sizeof *p->track_len, "3-D points");
    p->where = gt_malloc_array(k, sizeof *p->where, "3-D points");
    if (keep_tracks) p->track = gt_calloc(k, sizeof *p->track, "3-D point tracks");
    if (!p->id || !p->xyz || !p->rgb || !p->error || !p->track_len || !p->where || (keep_tracks && !p->track)) {
        free(p->id), free(p->xyz), free(p->rgb), free(p->error), free(p->track_len), free(p->where), free(p->track);
        memset(p, 0, sizeof *p);
        return GT_ERR_RUNTIME;
    }
    return GT_OK;
}

gt_status colmap_points_reserve(gt_colmap_points *p, size_t *cap, size_t n, bool keep)
{
    if (n <= *cap) return GT_OK;
    size_t c = *cap ? *cap * 2 : 1024;
    gt_colmap_points q;
    GT_TRY(gt_colmap_points_alloc(&q, c, keep));
    if (p->n) {
        memcpy(q.id, p->id, p->n * sizeof *p->id), memcpy(q.xyz, p->xyz, p->n * 3 * sizeof *p->xyz);
        memcpy(q.rgb, p->rgb, p->n * 3), memcpy(q.error, p->error, p->n * sizeof *p->error);
        memcpy(q.track_len, p->track_len, p->n * sizeof *p->track_len);
        memcpy(q.where, p->where, p->n * sizeof *p->where);
        if (keep) memcpy(q.track, p->track, p->n * sizeof *p->track);
    }
    q.n = p->n;
    free(p->id), free(p->xyz), free(p->rgb), free(p->error), free(p->track_len), free(p->track), free(p->where);
    *p = q;
    *cap = c;
    return GT_OK;
}

/* ---- lookups and cross-checks ---- */
const gt_colmap_camera *gt_colmap_find_camera(const gt_colmap_model *m, uint32_t id)
{
    bool sorted = true;
    for (size_t i = 1; i < m->ncameras && sorted; i++) sorted = m->cameras[i - 1].id < m->cameras[i].id;
    if (sorted) {
        size_t lo = 0, hi = m->ncameras;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (m->cameras[mid].id < id) lo = mid + 1;
            else hi = mid;
        }
        return lo < m->ncameras && m->cameras[lo].id == id ? &m->cameras[lo] : NULL;
    }
    for (size_t i = 0; i < m->ncameras; i++)
        if (m->cameras[i].id == id) return &m->cameras[i];
    return NULL;
}

/* Sorting record indices by a key, to find duplicates in O(n log n). */
typedef struct {
    uint64_t key;
    const char *name;
    size_t idx;
} key_idx;

static int cmp_key(const void *a, const void *b)
{
    const key_idx *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_name(const void *a, const void *b)
{
    const key_idx *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static bool is_bin(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n >= 4 && !strcmp(path + n - 4, ".bin");
}

/* The place of record `where` in file path, appended to the message. */
static gt_status fail_place(const char *path, long long where, const char *fmt, const char *what,
                            unsigned long long id, long long first)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what, id, first);
    return is_bin(path) ? gt_fail_at_byte(GT_ERR_DATA, path, where, "%s", msg)
                        : gt_fail_at(GT_ERR_DATA, path, (long)where, "%s", msg);
}

/* Duplicate keys among n records: the message names the later record and
 * where the first one is. */
static gt_status check_dups(key_idx *k, size_t n, const char *path, const long long *where_of, size_t stride,
                            const char *what)
{
    if (n < 2) return GT_OK;
    qsort(k, n, sizeof *k, cmp_key);
    for (size_t i = 1; i < n; i++)
        if (k[i].key == k[i - 1].key) {
            long long w2 = *(const long long *)((const char *)where_of + k[i].idx * stride);
            long long w1 = *(const long long *)((const char *)where_of + k[i - 1].idx * stride);
            return fail_place(path, w2,
                              is_bin(path) ? "duplicate %s id %llu (the first at byte %lld)"
                                           : "duplicate %s id %llu (the first on line %lld)",
                              what, k[i].key, w1);
        }
    return GT_OK;
}

gt_status gt_colmap_check(const gt_colmap_model *m)
{
    size_t most = m->ncameras > m->nimages ? m->ncameras : m->nimages;
    if (m->points.n > most) most = m->points.n;
    key_idx *k = gt_malloc_array(most ? most : 1, sizeof *k, "model checks");
    if (!k) return GT_ERR_RUNTIME;
    gt_status st = GT_OK;
    for (size_t i = 0; i < m->ncameras; i++) k[i] = (key_idx){m->cameras[i].id, NULL, i};
    if (m->ncameras)
        st = check_dups(k, m->ncameras, m->cameras_path, &m->cameras[0].where, sizeof m->cameras[0], "camera");
    if (st == GT_OK && m->nimages) {
        for (size_t i = 0; i < m->nimages; i++) k[i] = (key_idx){m->images[i].id, m->images[i].name, i};
        st = check_dups(k, m->nimages, m->images_path, &m->images[0].where, sizeof m->images[0], "image");
        if (st == GT_OK) {
            qsort(k, m->nimages, sizeof *k, cmp_name);
            for (size_t i = 1; i < m->nimages && st == GT_OK; i++)
                if (!strcmp(k[i].name, k[i - 1].name)) {
                    const gt_colmap_image *a = &m->images[k[i - 1].idx], *b = &m->images[k[i].idx];
                    char msg[GT_COLMAP_MAX_NAME + 128];
                    snprintf(msg, sizeof msg, "images %u and %u have the same name '%s'", a->id, b->id, b->name);
                    st = is_bin(m->images_path) ? gt_fail_at_byte(GT_ERR_DATA, m->images_path, b->where, "%s", msg)
                                                : gt_fail_at(GT_ERR_DATA, m->images_path, (long)b->where, "%s", msg);
                }
        }
        for (size_t i = 0; i < m->nimages && st == GT_OK; i++) {
            const gt_colmap_image *im = &m->images[i];
            if (!gt_colmap_find_camera(m, im->camera_id)) {
                char msg[256];
                snprintf(msg, sizeof msg, "image %u refers to camera %u, which %s does not define", im->id,
                         im->camera_id, m->cameras_path ? m->cameras_path : "the model");
                st = is_bin(m->images_path) ? gt_fail_at_byte(GT_ERR_DATA, m->images_path, im->where, "%s", msg)
                                            : gt_fail_at(GT_ERR_DATA, m->images_path, (long)im->where, "%s", msg);
            }
        }
    }
    if (st == GT_OK && m->points.n) {
        for (size_t i = 0; i < m->points.n; i++) k[i] = (key_idx){m->points.id[i], NULL, i};
        st = check_dups(k, m->points.n, m->points_path, m->points.where, sizeof *m->points.where, "3-D point");
    }
    free(k);
    return st;
}

/* ---- reading files and folders ---- */
gt_status gt_colmap_read_file(const char *path, const gt_colmap_read_opts *opts, gt_colmap_model *m)
{
    gt_colmap_read_opts none = {0};
    if (!opts) opts = &none;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    bool bin = n > 4 && !strcmp(base + n - 4, ".bin"), txt = n > 4 && !strcmp(base + n - 4, ".txt");
    if (bin || txt) {
        if (!strncmp(base, "cameras.", 8) && n == 11)
            return bin ? gt_colmap_read_cameras_bin(path, m) : gt_colmap_read_cameras_txt(path, m);
        if (!strncmp(base, "images.", 7) && n == 10)
            return bin ? gt_colmap_read_images_bin(path, opts->keep_points2d, m)
                       : gt_colmap_read_images_txt(path, opts->keep_points2d, m);
        if (!strncmp(base, "points3D.", 9) && n == 12)
            return bin ? gt_colmap_read_points_bin(path, opts->keep_tracks, m)
                       : gt_colmap_read_points_txt(path, opts->keep_tracks, m);
    }
    return gt_fail(GT_ERR_USAGE, "'%s': not a COLMAP model file (cameras, images or points3D .bin or .txt)", path);
}

/* dir/<part>.bin, else dir/<part>.txt, into path. */
static gt_status find_part(const char *dir, const char *part, char *path, size_t len)
{
    snprintf(path, len, "%s/%s.bin", dir, part);
    if (gt_path_is_file(path)) return GT_OK;
    snprintf(path, len, "%s/%s.txt", dir, part);
    if (gt_path_is_file(path)) return GT_OK;
    return gt_fail(GT_ERR_DATA, "the COLMAP model folder '%s' has no %s.bin or %s.txt", dir, part, part);
}

gt_status gt_colmap_read(const char *dir, const gt_colmap_read_opts *opts, gt_colmap_model *m)
{
    memset(m, 0, sizeof *m);
    if (!gt_path_is_dir(dir))
        return gt_fail(GT_ERR_DATA, "the COLMAP model folder '%s' does not exist or is not a folder", dir);
    gt_colmap_read_opts none = {0};
    if (!opts) opts = &none;
    char path[3][4200];
    const char *parts[3] = {"cameras", "images", "points3D"};
    gt_status st = GT_OK;
    bool have[3];
    for (int k = 0; k < 3; k++) have[k] = find_part(dir, parts[k], path[k], sizeof path[k]) == GT_OK;
    if (!have[0] && !have[1] && (!have[2] || opts->skip_points))
        return gt_fail(GT_ERR_DATA,
                       "'%s' holds no COLMAP model: looked for cameras, images and points3D as .bin or .txt",
                       dir);
    for (int k = 0; k < 3 && st == GT_OK; k++) {
        if (k == 2 && opts->skip_points) break;
        st = find_part(dir, parts[k], path[k], sizeof path[k]);
        if (st == GT_OK) st = gt_colmap_read_file(path[k], opts, m);
    }
    if (st == GT_OK) st = gt_colmap_check(m);
    if (st != GT_OK) gt_colmap_free(m);
    return st;
}
