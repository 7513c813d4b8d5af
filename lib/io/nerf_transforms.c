/* NeRF "transforms" captures as a COLMAP model (nerf_transforms.h). The JSON
 * is parsed by cJSON (Debian's libcjson). */
#include "io/nerf_transforms.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "common/path.h"
#include "common/rng.h"
#include "io/image.h"
#include "io/ply.h"

bool gt_nerf_is_capture(const char *dir)
{
    bool yes = false;
    const char *names[2] = {"transforms_train.json", "transforms.json"};
    for (int k = 0; k < 2 && !yes; k++) {
        char *p = gt_path_join(dir, names[k]);
        yes = p && gt_path_is_file(p);
        free(p);
    }
    return yes;
}

/* The intrinsics a frame is trained with (those of COLMAP's OPENCV, or of
 * the model named by "camera_model"). */
typedef struct {
    int model, w, h;
    double p[8]; /* fx, fy, cx, cy, k1, k2, p1, p2 */
} lens;

static bool number(const cJSON *o, const cJSON *top, const char *key, double *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it && top) it = cJSON_GetObjectItemCaseSensitive(top, key);
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble)) return false;
    *v = it->valuedouble;
    return true;
}

typedef struct {
    const char *dir;
    char *json; /* the file being read (for messages) */
    gt_colmap_model *m; /* room for the file's frames made before they are read */
} reader;

static gt_status frame_fail(const reader *r, int k, const char *what, const char *detail)
{
    return gt_fail(GT_ERR_DATA, "frame %d: %s%s (%s)", k, what, detail ? detail : "", r->json);
}

/* The photograph's path relative to DIR: "./" dropped, ".png" added to a
 * name without an extension (the reference's Blender reader). */
static char *image_name(const char *file_path)
{
    while (file_path[0] == '.' && file_path[1] == '/') file_path += 2;
    const char *slash = strrchr(file_path, '/'), *base = slash ? slash + 1 : file_path;
    bool ext = strchr(base, '.') != NULL && base[0] != '.';
    size_t n = strlen(file_path) + 5;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", file_path, ext ? "" : ".png");
    return s;
}

static gt_status frame_lens(const reader *r, int k, const cJSON *f, const cJSON *top, const char *image, lens *L)
{
    memset(L, 0, sizeof *L);
    L->model = GT_COLMAP_PINHOLE;
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(f, "camera_model");
    if (!cm) cm = cJSON_GetObjectItemCaseSensitive(top, "camera_model");
    if (cJSON_IsString(cm) && cm->valuestring) {
        int id = gt_colmap_model_from_name(cm->valuestring);
        if (id < 0) return frame_fail(r, k, "unknown camera_model ", cm->valuestring);
        if (id != GT_COLMAP_PINHOLE && id != GT_COLMAP_OPENCV && id != GT_COLMAP_SIMPLE_PINHOLE)
            L->model = id; /* refused by name where the capture's lenses are made */
    }
    double w = 0, h = 0;
    bool have_wh = number(f, top, "w", &w) && number(f, top, "h", &h);
    if (!have_wh) {
        char *path = gt_path_join(r->dir, image);
        int iw = 0, ih = 0;
        gt_status st = path ? gt_image_size(path, &iw, &ih) : gt_fail(GT_ERR_RUNTIME, "out of memory");
        free(path);
        if (st != GT_OK) {
            gt_errmsg_prefix("frame %d of %s: the photograph's size", k, r->json);
            return st;
        }
        w = iw, h = ih;
    }
    if (!(w >= 1 && h >= 1 && w < 1 << 30 && h < 1 << 30 && w == floor(w) && h == floor(h)))
        return frame_fail(r, k, "w and h must be whole numbers of pixels", NULL);
    L->w = (int)w, L->h = (int)h;
    double fx, fy, angle;
    if (number(f, top, "fl_x", &fx)) {
        if (!number(f, top, "fl_y", &fy)) fy = fx;
        L->p[0] = fx, L->p[1] = fy;
        if (!number(f, top, "cx", &L->p[2])) L->p[2] = w / 2;
        if (!number(f, top, "cy", &L->p[3])) L->p[3] = h / 2;
        const char *dk[4] = {"k1", "k2", "p1", "p2"};
        for (int i = 0; i < 4; i++)
            if (number(f, top, dk[i], &L->p[4 + i]) && L->p[4 + i] != 0 && L->model == GT_COLMAP_PINHOLE)
                L->model = GT_COLMAP_OPENCV;
    } else if (number(f, top, "camera_angle_x", &angle)) {
        if (!(angle > 0 && angle < M_PI)) return frame_fail(r, k, "camera_angle_x must be in (0, pi)", NULL);
        L->p[0] = L->p[1] = w / (2 * tan(angle / 2));
        L->p[2] = w / 2, L->p[3] = h / 2;
    } else {
        return frame_fail(r, k, "no intrinsics: neither fl_x nor camera_angle_x", NULL);
    }
    if (!(L->p[0] > 0 && L->p[1] > 0)) return frame_fail(r, k, "focal lengths must be positive", NULL);
    return GT_OK;
}

/* The camera of lens L, a new one unless an equal one exists. */
static gt_status camera_of(reader *r, const lens *L, uint32_t *id)
{
    gt_colmap_model *m = r->m;
    int np = gt_colmap_model_nparams(L->model);
    for (size_t c = 0; c < m->ncameras; c++) {
        const gt_colmap_camera *cc = &m->cameras[c];
        if (cc->model == L->model && cc->width == L->w && cc->height == L->h &&
            memcmp(cc->params, L->p, sizeof(double) * (size_t)(np < 8 ? np : 8)) == 0) {
            *id = cc->id;
            return GT_OK;
        }
    }
    gt_colmap_camera *c = &m->cameras[m->ncameras];
    memset(c, 0, sizeof *c);
    c->id = (uint32_t)++m->ncameras;
    c->model = L->model, c->width = L->w, c->height = L->h, c->nparams = np;
    /* OPENCV's parameter order; a model named by camera_model takes fx fy cx
     * cy and what follows as far as it has parameters */
    for (int i = 0; i < np && i < 8; i++) c->params[i] = L->p[i];
    *id = c->id;
    return GT_OK;
}

/* COLMAP's world-to-camera pose of an OpenGL camera-to-world matrix. */
static bool pose_of(const double M[16], double q[4], double t[3])
{
    double R[9]; /* world -> camera = (c2w with y, z negated)^T */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[3 * j + i] = M[4 * i + j] * (j == 0 ? 1 : -1);
    double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                 R[2] * (R[3] * R[7] - R[4] * R[6]);
    if (!(det > 0.5)) return false; /* a mirror or a degenerate matrix */
    for (int i = 0; i < 3; i++) t[i] = -(R[3 * i] * M[3] + R[3 * i + 1] * M[7] + R[3 * i + 2] * M[11]);
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = sqrt(tr + 1) * 2;
        q[0] = s / 4, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = sqrt(1 + R[0] - R[4] - R[8]) * 2;
        q[0] = (R[7] - R[5]) / s, q[1] = s / 4, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = sqrt(1 + R[4] - R[0] - R[8]) * 2;
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = s / 4, q[3] = (R[5] + R[7]) / s;
    } else {
        double s = sqrt(1 + R[8] - R[0] - R[4]) * 2;
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = s / 4;
    }
    return true;
}

/* "transform_matrix": 4 rows of 4 numbers, or the top 3 (the last row is
 * then 0 0 0 1). */
static bool matrix_of(const cJSON *tm, double M[16])
{
    int rows = cJSON_IsArray(tm) ? cJSON_GetArraySize(tm) : 0;
    if (rows != 3 && rows != 4) return false;
    for (int i = 0; i < 16; i++) M[i] = i == 15;
    for (int i = 0; i < rows; i++) {
        const cJSON *row = cJSON_GetArrayItem(tm, i);
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != 4) return false;
        for (int j = 0; j < 4; j++) {
            const cJSON *x = cJSON_GetArrayItem(row, j);
            if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) return false;
            M[4 * i + j] = x->valuedouble;
        }
    }
    return true;
}

/* Frame k of the file being read as the model's next image. */
static gt_status add_frame(reader *r, int k, const cJSON *f, const cJSON *doc)
{
    gt_colmap_model *m = r->m;
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(f, "file_path");
    if (!cJSON_IsString(fp) || !fp->valuestring || !*fp->valuestring)
        return frame_fail(r, k, "no \"file_path\"", NULL);
    double M[16];
    if (!matrix_of(cJSON_GetObjectItemCaseSensitive(f, "transform_matrix"), M))
        return frame_fail(r, k, "\"transform_matrix\" is not a 4x4 (or 3x4) array of numbers", NULL);
    gt_colmap_image *im = &m->images[m->nimages];
    memset(im, 0, sizeof *im);
    if (!(im->name = image_name(fp->valuestring))) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    im->id = (uint32_t)++m->nimages;
    if (!pose_of(M, im->qvec, im->tvec))
        return frame_fail(r, k, "\"transform_matrix\" is not a rotation (it mirrors or is degenerate)", NULL);
    lens L;
    GT_TRY(frame_lens(r, k, f, doc, im->name, &L));
    return camera_of(r, &L, &im->camera_id);
}

/* The frames of DIR/name appended to the model; *ply_path (when asked):
 * the file's "ply_file_path", malloc'ed, or NULL. r->json is the file's path
 * afterwards (the caller frees it). */
static gt_status read_file(reader *r, const char *name, char **ply_path)
{
    if (!(r->json = gt_path_join(r->dir, name))) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    unsigned char *text = NULL;
    size_t len = 0;
    GT_TRY(gt_in_read_all(r->json, &text, &len));
    cJSON *doc = cJSON_ParseWithLength((const char *)text, len);
    free(text);
    if (!doc) return gt_fail(GT_ERR_DATA, "not valid JSON (%s)", r->json);
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(doc, "frames");
    gt_status st = cJSON_IsArray(frames) ? GT_OK : gt_fail(GT_ERR_DATA, "no \"frames\" array (%s)", r->json);
    const size_t n = st == GT_OK ? (size_t)cJSON_GetArraySize(frames) : 0;
    if (st == GT_OK && n == 0) st = gt_fail(GT_ERR_DATA, "no frames (%s)", r->json);
    /* a camera per frame at most */
    gt_colmap_model *m = r->m;
    gt_colmap_image *im = st == GT_OK ? realloc(m->images, (m->nimages + n) * sizeof *im) : NULL;
    if (im) m->images = im;
    gt_colmap_camera *cam = im ? realloc(m->cameras, (m->ncameras + n) * sizeof *cam) : NULL;
    if (cam) m->cameras = cam;
    if (st == GT_OK && !cam) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    if (st == GT_OK) {
        int k = 0;
        const cJSON *f;
        cJSON_ArrayForEach(f, frames)
        {
            if ((st = add_frame(r, k++, f, doc)) != GT_OK) break;
        }
    }
    const cJSON *pp = cJSON_GetObjectItemCaseSensitive(doc, "ply_file_path");
    if (st == GT_OK && ply_path && cJSON_IsString(pp) && pp->valuestring && !(*ply_path = strdup(pp->valuestring)))
        st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    cJSON_Delete(doc);
    return st;
}

/* The points of a PLY with x y z and (optional) red green blue. */
static gt_status read_points(const char *path, gt_colmap_points *p)
{
    gt_ply_mesh pm;
    GT_TRY(gt_ply_read(path, &pm));
    static const char *const xyz[3] = {"x", "y", "z"}, *const rgb[3] = {"red", "green", "blue"};
    float *a = gt_malloc_array(pm.nvert ? pm.nvert : 1, 3 * sizeof(float), "points");
    float *c = gt_malloc_array(pm.nvert ? pm.nvert : 1, 3 * sizeof(float), "point colours");
    gt_status st = a && c ? gt_ply_gather(&pm, path, xyz, 3, a) : GT_ERR_RUNTIME;
    bool colours = st == GT_OK && gt_ply_gather(&pm, path, rgb, 3, c) == GT_OK;
    gt_errmsg_clear();
    p->n = pm.nvert;
    if (st == GT_OK && (!(p->xyz = gt_malloc_array(p->n ? p->n : 1, 3 * sizeof(double), "points")) ||
                        !(p->rgb = gt_malloc_array(p->n ? p->n : 1, 3, "point colours"))))
        st = GT_ERR_RUNTIME;
    for (size_t i = 0; st == GT_OK && i < 3 * p->n; i++) {
        p->xyz[i] = a[i];
        double v = colours ? c[i] : 127;
        p->rgb[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    free(a), free(c);
    gt_ply_free(&pm);
    return st;
}

/* The reference's start for a Blender scene without points: uniform in the
 * cube, SH colour of about 0.5 (127 as its PLY stores it), seeded. */
static gt_status random_points(gt_colmap_points *p)
{
    p->n = GT_NERF_RANDOM_POINTS;
    if (!(p->xyz = gt_malloc_array(p->n, 3 * sizeof(double), "points")) ||
        !(p->rgb = gt_malloc_array(p->n, 3, "point colours")))
        return GT_ERR_RUNTIME;
    uint64_t s = 0;
    for (size_t i = 0; i < 3 * p->n; i++) {
        p->xyz[i] = (2 * gt_rng_unit(&s) - 1) * GT_NERF_RANDOM_EXTENT;
        p->rgb[i] = 127;
    }
    return GT_OK;
}

gt_status gt_nerf_read(const char *dir, gt_colmap_model *m, gt_nerf_split *split, bool *random)
{
    memset(m, 0, sizeof *m);
    memset(split, 0, sizeof *split);
    *random = false;
    reader r = {dir, NULL, m};
    char *train = gt_path_join(dir, "transforms_train.json"), *test = gt_path_join(dir, "transforms_test.json");
    char *ply = NULL, *pp = NULL;
    gt_status st = train && test ? GT_OK : gt_fail(GT_ERR_RUNTIME, "out of memory");
    bool blender = st == GT_OK && gt_path_is_file(train);
    split->given = blender && gt_path_is_file(test);
    if (st == GT_OK) st = read_file(&r, blender ? "transforms_train.json" : "transforms.json", &ply);
    if (st == GT_OK && (!(m->cameras_path = strdup(r.json)) || !(m->images_path = strdup(r.json))))
        st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    free(r.json);
    r.json = NULL;
    const size_t ntrain = m->nimages;
    if (st == GT_OK && split->given) {
        /* the held-out frames: the images read from this file on */
        st = read_file(&r, "transforms_test.json", NULL);
        free(r.json);
        if (st == GT_OK && !(split->test = calloc(m->nimages, 1))) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
        for (size_t i = ntrain; st == GT_OK && i < m->nimages; i++) split->test[i] = true;
    }
    /* the points: ply_file_path, else points3d.ply, else the random cube */
    if (st == GT_OK && !(pp = gt_path_join(dir, ply ? ply : "points3d.ply")))
        st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    if (st == GT_OK && (ply || gt_path_is_file(pp))) {
        st = read_points(pp, &m->points);
    } else if (st == GT_OK) {
        st = random_points(&m->points);
        *random = true;
        free(pp);
        if (!(pp = strdup("random points"))) st = gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    if (st == GT_OK) m->points_path = pp;
    else free(pp);
    free(ply), free(train), free(test);
    if (st != GT_OK) {
        gt_colmap_free(m);
        free(split->test);
        memset(split, 0, sizeof *split);
    }
    return st;
}
