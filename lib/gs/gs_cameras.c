/* cameras.json of the reference 3DGS training code: an array of objects
 *   {"id": 0, "img_name": "00001", "width": 1959, "height": 1090,
 *    "position": [x, y, z], "rotation": [[...], [...], [...]],
 *    "fy": 1164.6, "fx": 1159.5}
 * position is the camera centre, rotation the camera-to-world rotation
 * (rows). A small JSON reader for exactly that shape: other keys are
 * skipped (any JSON value), missing required keys are an error naming the
 * entry, and so are values a renderer cannot use: a size outside
 * 1..GT_GS_MAX_SIZE, focal lengths that are not positive floats, a rotation
 * that is not orthonormal (within ROTATION_TOL), a position outside
 * float range. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "gs/gs.h"

/* How far R R^T may be from I: loose enough for rotations printed with a
 * few digits, tight enough that a renderer may treat R as a rotation. */
#define ROTATION_TOL 1e-3

typedef struct {
    const char *s, *e, *p;
    const char *path;
    const char *lp; /* line_of's last position and its line: lines are */
    long ln;        /* counted once, not from the start at every entry */
} jp;

static long line_of(jp *j)
{
    if (j->lp > j->p) j->lp = j->s, j->ln = 1;
    for (; j->lp < j->p && j->lp < j->e; j->lp++) j->ln += *j->lp == '\n';
    return j->ln;
}

static gt_status jerr(jp *j, const char *what)
{
    return gt_fail_at(GT_ERR_DATA, j->path, line_of(j), "cameras: %s", what);
}

static void ws(jp *j)
{
    while (j->p < j->e && isspace((unsigned char)*j->p)) j->p++;
}

static int peek(jp *j)
{
    ws(j);
    return j->p < j->e ? (unsigned char)*j->p : -1;
}

static gt_status expect(jp *j, char c)
{
    if (peek(j) != c) {
        char m[64];
        snprintf(m, sizeof m, "expected '%c'", c);
        return jerr(j, m);
    }
    j->p++;
    return GT_OK;
}

/* string into out (truncated to cap-1; escapes kept simple) */
static gt_status jstring(jp *j, char *out, size_t cap)
{
    GT_TRY(expect(j, '"'));
    size_t n = 0;
    while (j->p < j->e && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            if (j->p >= j->e) break;
            c = *j->p++;
            if (c == 'u') {
                j->p += (j->e - j->p >= 4) ? 4 : (j->e - j->p);
                c = '?';
            } else if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
        }
        if (out && n + 1 < cap) out[n++] = c;
    }
    if (j->p >= j->e) return jerr(j, "unterminated string");
    j->p++;
    if (out && cap) out[n] = 0;
    return GT_OK;
}

static gt_status jnumber(jp *j, double *v)
{
    ws(j);
    char *end;
    char tmp[64];
    size_t n = 0;
    while (j->p + n < j->e && n < sizeof tmp - 1 && strchr("+-0123456789.eE", j->p[n])) {
        tmp[n] = j->p[n];
        n++;
    }
    tmp[n] = 0;
    if (n == 0) return jerr(j, "expected a number");
    *v = strtod(tmp, &end);
    if (end != tmp + n || !isfinite(*v)) return jerr(j, "bad number");
    j->p += n;
    return GT_OK;
}

static gt_status jskip(jp *j, int depth)
{
    if (depth > 64) return jerr(j, "nesting too deep");
    int c = peek(j);
    if (c == '"') return jstring(j, NULL, 0);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->p++;
        if (peek(j) == close) {
            j->p++;
            return GT_OK;
        }
        for (;;) {
            if (c == '{') {
                GT_TRY(jstring(j, NULL, 0));
                GT_TRY(expect(j, ':'));
            }
            GT_TRY(jskip(j, depth + 1));
            int d = peek(j);
            if (d == ',') {
                j->p++;
                continue;
            }
            return expect(j, close);
        }
    }
    if (c == 't' || c == 'f' || c == 'n') {
        const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t l = strlen(w);
        if ((size_t)(j->e - j->p) < l || strncmp(j->p, w, l) != 0) return jerr(j, "bad literal");
        j->p += l;
        return GT_OK;
    }
    double v;
    return jnumber(j, &v);
}

static gt_status jvec(jp *j, double *out, int n)
{
    GT_TRY(expect(j, '['));
    for (int k = 0; k < n; k++) {
        if (k) GT_TRY(expect(j, ','));
        GT_TRY(jnumber(j, &out[k]));
    }
    return expect(j, ']');
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

gt_status gt_gs_cameras_parse(const char *text, size_t len, const char *path, gt_gs_camera **cams,
                              int *ncams)
{
    *cams = NULL;
    *ncams = 0;
    jp j = {text, text + len, text, gt_in_name(path), text, 1};
    gt_status st = expect(&j, '[');
    if (st != GT_OK) {
        gt_errmsg_clear();
        return jerr(&j, "not a cameras.json: expected an array of camera objects");
    }
    int cap = 0, n = 0;
    gt_gs_camera *v = NULL;
    if (peek(&j) == ']') {
        j.p++;
        goto done;
    }
    for (;;) {
        if (n == cap) {
            if (cap > INT_MAX / 2) {
                st = jerr(&j, "more cameras than this reader can hold");
                goto fail;
            }
            cap = cap ? cap * 2 : 16;
            gt_gs_camera *nv = realloc(v, (size_t)cap * sizeof *v);
            if (!nv) {
                free(v);
                return gt_fail(GT_ERR_RUNTIME, "out of memory reading cameras");
            }
            v = nv;
        }
        double w = -1, h = -1, fx = -1, fy = -1, pos[3], rot[9];
        int have = 0; /* bits: w h fx fy pos rot */
        char name[128] = "";
        peek(&j);
        long entry_line = line_of(&j);
        if ((st = expect(&j, '{')) != GT_OK) goto fail;
        if (peek(&j) != '}')
            for (;;) {
                char key[64];
                if ((st = jstring(&j, key, sizeof key)) != GT_OK) goto fail;
                if ((st = expect(&j, ':')) != GT_OK) goto fail;
                if (!strcmp(key, "width")) st = jnumber(&j, &w), have |= 1;
                else if (!strcmp(key, "height")) st = jnumber(&j, &h), have |= 2;
                else if (!strcmp(key, "fx")) st = jnumber(&j, &fx), have |= 4;
                else if (!strcmp(key, "fy")) st = jnumber(&j, &fy), have |= 8;
                else if (!strcmp(key, "position")) st = jvec(&j, pos, 3), have |= 16;
                else if (!strcmp(key, "rotation")) {
                    have |= 32;
                    st = expect(&j, '[');
                    for (int r = 0; r < 3 && st == GT_OK; r++) {
                        if (r) st = expect(&j, ',');
                        if (st == GT_OK) st = jvec(&j, rot + 3 * r, 3);
                    }
                    if (st == GT_OK) st = expect(&j, ']');
                } else if (!strcmp(key, "img_name") && peek(&j) == '"')
                    st = jstring(&j, name, sizeof name);
                else st = jskip(&j, 0);
                if (st != GT_OK) goto fail;
                if (peek(&j) == ',') {
                    j.p++;
                    continue;
                }
                break;
            }
        if ((st = expect(&j, '}')) != GT_OK) goto fail;
        if (have != 63) {
            static const char *names[] = {"width", "height", "fx", "fy", "position", "rotation"};
            char m[160] = "";
            for (int k = 0; k < 6; k++)
                if (!(have & (1 << k))) {
                    strncat(m, *m ? ", " : "", sizeof m - strlen(m) - 1);
                    strncat(m, names[k], sizeof m - strlen(m) - 1);
                }
            st = gt_fail_at(GT_ERR_DATA, j.path, entry_line, "cameras: entry %d lacks %s", n, m);
            goto fail;
        }
        if (w < 1 || h < 1 || w > GT_GS_MAX_SIZE || h > GT_GS_MAX_SIZE || w != floor(w) ||
            h != floor(h)) {
            st = gt_fail_at(GT_ERR_DATA, j.path, entry_line,
                            "cameras: entry %d has size %gx%g (want integers in 1..%d)", n, w, h,
                            GT_GS_MAX_SIZE);
            goto fail;
        }
        if (!((float)fx > 0) || !((float)fy > 0) || !isfinite((float)fx) || !isfinite((float)fy)) {
            st = gt_fail_at(GT_ERR_DATA, j.path, entry_line,
                            "cameras: entry %d has focal lengths fx=%g fy=%g (want > 0, in float range)",
                            n, fx, fy);
            goto fail;
        }
        double dev = rotation_error(rot);
        if (!(dev <= ROTATION_TOL)) {
            st = gt_fail_at(GT_ERR_DATA, j.path, entry_line,
                            "cameras: entry %d has a rotation that is not orthonormal "
                            "(|R R^T - I| = %.3g, want <= %g)", n, dev, ROTATION_TOL);
            goto fail;
        }
        gt_gs_camera_from_c2w(&v[n], (int)w, (int)h, (float)fx, (float)fy, pos, rot);
        if (!camera_finite(&v[n])) {
            st = gt_fail_at(GT_ERR_DATA, j.path, entry_line,
                            "cameras: entry %d has position (%g, %g, %g) out of float range", n,
                            pos[0], pos[1], pos[2]);
            goto fail;
        }
        snprintf(v[n].name, sizeof v[n].name, "%s", name);
        n++;
        int c = peek(&j);
        if (c == ',') {
            j.p++;
            continue;
        }
        if ((st = expect(&j, ']')) != GT_OK) goto fail;
        break;
    }
done:
    if (peek(&j) != -1) {
        st = jerr(&j, "trailing data after the camera array");
        goto fail;
    }
    *cams = v;
    *ncams = n;
    return GT_OK;
fail:
    free(v);
    return st;
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
