/* cameras.json of the reference 3DGS training code: an array of objects
 *   {"id": 0, "img_name": "00001", "width": 1959, "height": 1090,
 *    "position": [x, y, z], "rotation": [[...], [...], [...]],
 *    "fy": 1164.6, "fx": 1159.5}
 * position is the camera centre, rotation the camera-to-world rotation
 * (rows). Optional "cx", "cy": the principal point in pixels (COLMAP's
 * convention; absent: width/2, height/2).
 *
 * The JSON is parsed by cJSON (Debian's libcjson); this file checks the
 * shape and the values. A syntax error names its line and column; an entry
 * error names the entry (index, img_name) and the line it starts on. Other
 * keys are ignored; missing required keys are an error, and so are values a
 * renderer cannot use: a size outside 1..GT_GS_MAX_SIZE, focal lengths that
 * are not positive floats, a rotation that is not orthonormal (within
 * ROTATION_TOL), a position or principal point outside float range. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/output.h"
#include "gs/gs.h"
#include "io/numtext.h"

/* How far R R^T may be from I: loose enough for rotations printed with a
 * few digits, tight enough that a renderer may treat R as a rotation. */
#define ROTATION_TOL 1e-3

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Line and column (from 1) of byte offset `off`. */
static void line_col(const char *s, size_t off, long *line, long *col)
{
    long ln = 1;
    size_t bol = 0;
    for (size_t i = 0; i < off; i++)
        if (s[i] == '\n') ln++, bol = i + 1;
    *line = ln;
    *col = (long)(off - bol) + 1;
}

/* A walk over text already known to be JSON up to `stop` (or a syntax error
 * there): nesting depth at `stop`, whether `stop` lies in an unclosed
 * string, and the offset of element `entry` of the top-level array (-1:
 * none). Runs only to word a message, never to read values. */
typedef struct {
    int depth;
    bool in_string;
    long string_off; /* where the string `stop` lies in opened */
    long entry_off;
} json_walk;

static json_walk walk_to(const char *s, size_t stop, long entry)
{
    json_walk w = {0, false, -1, -1};
    long elem = -1;          /* top-level elements begun so far, minus one */
    bool esc = false, next = false; /* next: a top-level element may begin */
    for (size_t i = 0; i < stop; i++) {
        char c = s[i];
        if (w.in_string) {
            if (esc) esc = false;
            else if (c == '\\') esc = true;
            else if (c == '"') w.in_string = false;
            continue;
        }
        if (is_ws(c)) continue;
        if (w.depth == 1 && next && c != ']') {
            next = false;
            if (++elem == entry) w.entry_off = (long)i;
        }
        if (c == '"') w.in_string = true, w.string_off = (long)i;
        else if (c == '[' || c == '{') next = ++w.depth == 1;
        else if (c == ']' || c == '}') w.depth--;
        else if (c == ',' && w.depth == 1) next = true;
    }
    return w;
}

static gt_status syntax_error(const char *s, size_t len, const char *end, const char *path)
{
    size_t off = end && end >= s && (size_t)(end - s) <= len ? (size_t)(end - s) : len;
    /* cJSON reports the last byte when it ran out of text */
    size_t last = len;
    while (last > 0 && is_ws(s[last - 1])) last--;
    json_walk w = walk_to(s, len, -1);
    char what[64];
    if (w.in_string && (long)off >= w.string_off) {
        off = (size_t)w.string_off;
        snprintf(what, sizeof what, "a string never closed");
    } else if (off + 1 >= last && w.depth > 0) {
        off = last;
        snprintf(what, sizeof what, "the file ends inside an array or object");
    } else {
        json_walk at = walk_to(s, off, -1);
        unsigned char c = (unsigned char)s[off];
        if (at.depth >= CJSON_NESTING_LIMIT)
            snprintf(what, sizeof what, "nested deeper than %d", CJSON_NESTING_LIMIT);
        else if (c >= 0x20 && c < 0x7f) snprintf(what, sizeof what, "unexpected '%c'", c);
        else snprintf(what, sizeof what, "unexpected byte 0x%02x", c);
    }
    long ln, col;
    line_col(s, off, &ln, &col);
    return gt_fail_at(GT_ERR_DATA, path, ln, "cameras: not valid JSON: %s at column %ld", what, col);
}

/* Entry error: "cameras: entry <i> ("<img_name>") <what> (<file>:<line>)". */
typedef struct {
    const char *text;
    size_t len;
    const char *path;
    int index;
    const char *name;
} entry_ctx;

static gt_status entry_fail(const entry_ctx *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static gt_status entry_fail(const entry_ctx *e, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    json_walk w = walk_to(e->text, e->len, e->index);
    long ln = 0, col;
    if (w.entry_off >= 0) line_col(e->text, (size_t)w.entry_off, &ln, &col);
    if (e->name && *e->name)
        return gt_fail_at(GT_ERR_DATA, e->path, ln, "cameras: entry %d (\"%.64s\") %s", e->index,
                          e->name, what);
    return gt_fail_at(GT_ERR_DATA, e->path, ln, "cameras: entry %d %s", e->index, what);
}

/* A number member: 1 when present and a finite number, 0 when absent,
 * -1 (message set) when present but something else. */
static int number_of(const entry_ctx *e, const cJSON *o, const char *key, double *v,
                     gt_status *st)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) return 0;
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble)) {
        *st = entry_fail(e, "has %s that is not a finite number", key);
        return -1;
    }
    *v = it->valuedouble;
    return 1;
}

/* An array member of n finite numbers; same returns as number_of. */
static int vector_of(const entry_ctx *e, const cJSON *a, const char *key, double *v, int n,
                     gt_status *st)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) {
        *st = entry_fail(e, "has %s that is not an array of %d numbers", key, n);
        return -1;
    }
    int k = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, a)
    {
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) {
            *st = entry_fail(e, "has %s with an element that is not a finite number", key);
            return -1;
        }
        v[k++] = x->valuedouble;
    }
    return 1;
}

/* Largest entry of |R R^T - I| (rows of R are the camera axes in world). */
static double rotation_error(const double rot[9])
{
    double dev = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double d = rot[3 * a] * rot[3 * b] + rot[3 * a + 1] * rot[3 * b + 1] +
                       rot[3 * a + 2] * rot[3 * b + 2] - (a == b);
            if (!(fabs(d) <= dev)) dev = fabs(d); /* NaN sticks */
        }
    return dev;
}

static bool camera_finite(const gt_gs_camera *c)
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(c->t[k]) || !isfinite(c->campos[k])) return false;
    return true;
}

static gt_status read_entry(const entry_ctx *e0, const cJSON *o, gt_gs_camera *cam)
{
    entry_ctx e = *e0;
    gt_status st = GT_OK;
    if (!cJSON_IsObject(o)) return entry_fail(&e, "is not an object");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "img_name");
    const char *name = cJSON_IsString(nm) && nm->valuestring ? nm->valuestring : "";
    e.name = name;

    static const char *required[] = {"width", "height", "fx", "fy", "position", "rotation"};
    char lacks[160] = "";
    for (int k = 0; k < 6; k++)
        if (!cJSON_GetObjectItemCaseSensitive(o, required[k])) {
            strncat(lacks, *lacks ? ", " : "", sizeof lacks - strlen(lacks) - 1);
            strncat(lacks, required[k], sizeof lacks - strlen(lacks) - 1);
        }
    if (*lacks) return entry_fail(&e, "lacks %s", lacks);

    double w = 0, h = 0, fx = 0, fy = 0, cx = 0, cy = 0, pos[3], rot[9];
    if (number_of(&e, o, "width", &w, &st) < 0 || number_of(&e, o, "height", &h, &st) < 0 ||
        number_of(&e, o, "fx", &fx, &st) < 0 || number_of(&e, o, "fy", &fy, &st) < 0)
        return st;
    int have_cx = number_of(&e, o, "cx", &cx, &st);
    if (have_cx < 0) return st;
    int have_cy = number_of(&e, o, "cy", &cy, &st);
    if (have_cy < 0) return st;
    if (have_cx != have_cy) return entry_fail(&e, "has %s without %s", have_cx ? "cx" : "cy",
                                              have_cx ? "cy" : "cx");
    if (vector_of(&e, cJSON_GetObjectItemCaseSensitive(o, "position"), "position", pos, 3, &st) < 0)
        return st;
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(o, "rotation");
    if (!cJSON_IsArray(ra) || cJSON_GetArraySize(ra) != 3)
        return entry_fail(&e, "has rotation that is not an array of 3 rows");
    for (int r = 0; r < 3; r++)
        if (vector_of(&e, cJSON_GetArrayItem(ra, r), "a rotation row", rot + 3 * r, 3, &st) < 0)
            return st;

    if (w < 1 || h < 1 || w > GT_GS_MAX_SIZE || h > GT_GS_MAX_SIZE || w != floor(w) ||
        h != floor(h))
        return entry_fail(&e, "has size %gx%g (want integers in 1..%d)", w, h, GT_GS_MAX_SIZE);
    if (!((float)fx > 0) || !((float)fy > 0) || !isfinite((float)fx) || !isfinite((float)fy))
        return entry_fail(&e, "has focal lengths fx=%g fy=%g (want > 0, in float range)", fx, fy);
    if (have_cx && (!isfinite((float)cx) || !isfinite((float)cy)))
        return entry_fail(&e, "has principal point cx=%g cy=%g out of float range", cx, cy);
    double dev = rotation_error(rot);
    if (!(dev <= ROTATION_TOL))
        return entry_fail(&e,
                          "has a rotation that is not orthonormal (|R R^T - I| = %.3g, want <= %g)",
                          dev, ROTATION_TOL);
    gt_gs_camera_from_c2w(cam, (int)w, (int)h, (float)fx, (float)fy, pos, rot);
    if (!camera_finite(cam))
        return entry_fail(&e, "has position (%g, %g, %g) out of float range", pos[0], pos[1],
                          pos[2]);
    if (have_cx) cam->cx = (float)cx, cam->cy = (float)cy;
    snprintf(cam->name, sizeof cam->name, "%s", name);
    return GT_OK;
}

gt_status gt_gs_cameras_parse(const char *text, size_t len, const char *path, gt_gs_camera **cams,
                              int *ncams)
{
    *cams = NULL;
    *ncams = 0;
    path = gt_in_name(path);
    size_t first = 0;
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) first = 3; /* a UTF-8 BOM, as cJSON skips */
    while (first < len && is_ws(text[first])) first++;
    if (first >= len || text[first] != '[') {
        long ln, col;
        line_col(text, first < len ? first : len, &ln, &col);
        return gt_fail_at(GT_ERR_DATA, path, ln,
                          "cameras: not a cameras.json: expected an array of camera objects");
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) return syntax_error(text, len, end, path);
    size_t off = end && end >= text ? (size_t)(end - text) : len;
    while (off < len && is_ws(text[off])) off++;
    if (off < len) {
        cJSON_Delete(root);
        long ln, col;
        line_col(text, off, &ln, &col);
        return gt_fail_at(GT_ERR_DATA, path, ln,
                          "cameras: trailing data after the camera array at column %ld", col);
    }
    int n = cJSON_GetArraySize(root);
    gt_gs_camera *v = n ? malloc((size_t)n * sizeof *v) : NULL;
    if (n && !v) {
        cJSON_Delete(root);
        return gt_fail(GT_ERR_RUNTIME, "out of memory reading cameras (%d entries)", n);
    }
    gt_status st = GT_OK;
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, root)
    {
        entry_ctx e = {text, len, path, i, NULL};
        if ((st = read_entry(&e, o, &v[i])) != GT_OK) break;
        i++;
    }
    cJSON_Delete(root);
    if (st != GT_OK) {
        free(v);
        return st;
    }
    *cams = v;
    *ncams = n;
    return GT_OK;
}

gt_status gt_gs_cameras_read(const char *path, gt_gs_camera **cams, int *ncams)
{
    unsigned char *buf;
    size_t len;
    GT_TRY(gt_in_read_all(path, &buf, &len));
    gt_status st = gt_gs_cameras_parse((const char *)buf, len, path, cams, ncams);
    free(buf);
    return st;
}

/* ------------------------------------------------------------------ writing */

/* A float as the shortest decimal that reads back as the same float
 * (cJSON prints doubles, which would give a float 17 digits). cJSON still
 * writes the document; only the number's digits are ours. */
static cJSON *float_item(float x)
{
    char b[GT_FMT_MAX];
    gt_fmt_float(b, x);
    return cJSON_CreateRaw(b);
}

static bool add_float(cJSON *o, const char *key, float x)
{
    cJSON *it = float_item(x);
    return it && cJSON_AddItemToObject(o, key, it);
}

static cJSON *float_array(const float *x, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; a && k < n; k++) {
        cJSON *it = float_item(x[k]);
        if (!it || !cJSON_AddItemToArray(a, it)) {
            cJSON_Delete(it);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

static cJSON *camera_json(const gt_gs_camera *c, int id)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    bool ok = cJSON_AddNumberToObject(o, "id", id) && cJSON_AddStringToObject(o, "img_name", c->name) &&
              cJSON_AddNumberToObject(o, "width", c->width) &&
              cJSON_AddNumberToObject(o, "height", c->height);
    cJSON *pos = ok ? float_array(c->campos, 3) : NULL;
    ok = pos && cJSON_AddItemToObject(o, "position", pos);
    if (!ok) cJSON_Delete(pos);
    /* camera-to-world rows: the transpose of R (world -> camera) */
    cJSON *rot = ok ? cJSON_CreateArray() : NULL;
    ok = rot != NULL;
    for (int r = 0; ok && r < 3; r++) {
        float row[3] = {c->R[r], c->R[3 + r], c->R[6 + r]};
        cJSON *a = float_array(row, 3);
        ok = a && cJSON_AddItemToArray(rot, a);
        if (!ok) cJSON_Delete(a);
    }
    if (rot && !(ok = ok && cJSON_AddItemToObject(o, "rotation", rot))) cJSON_Delete(rot);
    ok = ok && add_float(o, "fy", c->fy) && add_float(o, "fx", c->fx);
    if (ok && (c->cx != 0.5f * (float)c->width || c->cy != 0.5f * (float)c->height))
        ok = add_float(o, "cx", c->cx) && add_float(o, "cy", c->cy);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

gt_status gt_gs_cameras_write(const char *path, const gt_gs_camera *cams, int n)
{
    if (n < 0 || (n > 0 && !cams)) return gt_fail(GT_ERR_USAGE, "cameras: nothing to write");
    cJSON *root = cJSON_CreateArray();
    bool ok = root != NULL;
    for (int i = 0; ok && i < n; i++) {
        cJSON *o = camera_json(&cams[i], i);
        ok = o && cJSON_AddItemToArray(root, o);
        if (!ok) cJSON_Delete(o);
    }
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text) return gt_fail(GT_ERR_RUNTIME, "out of memory writing cameras (%d entries)", n);
    gt_out o;
    gt_status st = gt_out_open(&o, path);
    if (st == GT_OK) {
        fputs(text, o.fp);
        fputc('\n', o.fp);
        st = gt_out_commit(&o);
    }
    cJSON_free(text);
    return st;
}
