/* Rig files and 3x3 homography helpers. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/reader.h"
#include "stitch/stitch.h"
#include "stitch/stitch_priv.h"

void gt_stitch_h_mul(const double A[9], const double B[9], double C[9])
{
    double T[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            T[r * 3 + c] = A[r * 3] * B[c] + A[r * 3 + 1] * B[3 + c] + A[r * 3 + 2] * B[6 + c];
    memcpy(C, T, sizeof T);
}

gt_status gt_stitch_h_invert(const double H[9], double Hinv[9])
{
    double a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7],
           i = H[8];
    double A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
    double det = a * A + b * B + c * C;
    double mx = 0;
    for (int k = 0; k < 9; k++) {
        if (!isfinite(H[k])) return gt_fail(GT_ERR_DATA, "homography has a non-finite entry");
        if (fabs(H[k]) > mx) mx = fabs(H[k]);
    }
    if (mx == 0 || !(fabs(det) > 1e-12 * mx * mx * mx))
        return gt_fail(GT_ERR_DATA, "singular homography (determinant %.3g)", det);
    double id = 1.0 / det;
    /* entries near the ends of the double range pass the test above with a
     * determinant or inverse that overflows (an inverse of zeros or inf) */
    if (!isfinite(det) || !isfinite(id))
        return gt_fail(GT_ERR_DATA, "homography entries out of range (largest |h| %.3g)", mx);
    Hinv[0] = A * id;
    Hinv[1] = -(b * i - c * h) * id;
    Hinv[2] = (b * f - c * e) * id;
    Hinv[3] = B * id;
    Hinv[4] = (a * i - c * g) * id;
    Hinv[5] = -(a * f - c * d) * id;
    Hinv[6] = C * id;
    Hinv[7] = -(a * h - b * g) * id;
    Hinv[8] = (a * e - b * d) * id;
    for (int k = 0; k < 9; k++)
        if (!isfinite(Hinv[k]))
            return gt_fail(GT_ERR_DATA, "homography entries out of range (largest |h| %.3g)", mx);
    return GT_OK;
}

void gt_stitch_h_macro(const double H[9], double Hm[9])
{
    /* s H s^-1 with s = diag(1/2, 1, 1): row 0 scaled by 1/2, column 0 by 2 */
    double s[9] = {0.5, 0, 0, 0, 1, 0, 0, 0, 1}, si[9] = {2, 0, 0, 0, 1, 0, 0, 0, 1};
    double T[9];
    gt_stitch_h_mul(s, H, T);
    gt_stitch_h_mul(T, si, Hm);
}

void gt_stitch_rig_free(gt_stitch_rig *rig)
{
    if (!rig) return;
    for (int i = 0; i < rig->ncam; i++) free(rig->cam[i].mask_path);
    free(rig->path);
    memset(rig, 0, sizeof *rig);
}

/* Tokenizer over lines with comments. Lines come from lib/io's reader, so a
 * line longer than GT_RD_MAX_LINE or one holding a NUL byte is an error
 * naming its line, never a token silently cut in two. */
typedef struct {
    gt_reader rd;
    const char *name;
    char *p;     /* rest of the current line (NULL: none) */
    long lineno; /* line of the last token (at the end of the file: its last line) */
    gt_status err;
} tok_t;

/* Next token, or NULL at the end of the file or on an error (then t->err). */
static char *next_tok(tok_t *t)
{
    for (;;) {
        if (t->p) {
            while (*t->p && isspace((unsigned char)*t->p)) t->p++;
            if (*t->p && *t->p != '#') {
                char *s = t->p;
                while (*t->p && !isspace((unsigned char)*t->p)) t->p++;
                if (*t->p) *t->p++ = 0;
                return s;
            }
        }
        t->p = NULL;
        char *line;
        if (t->err || (t->err = gt_rd_line(&t->rd, &line, NULL))) return NULL;
        t->lineno = t->rd.line > 0 ? t->rd.line : 1; /* at the end: the last line */
        if (!line) return NULL;
        t->p = line;
    }
}

static gt_status tok_double(tok_t *t, const char *what, double *v)
{
    char *s = next_tok(t);
    if (!s) {
        if (t->err) return t->err;
        return gt_fail_at(GT_ERR_DATA, t->name, t->lineno, "unexpected end of file, expected %s", what);
    }
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (*end || errno || !isfinite(*v))
        return gt_fail_at(GT_ERR_DATA, t->name, t->lineno, "bad %s '%s' (expected a number)", what, s);
    return GT_OK;
}

/* Rest of the current line (trimmed), for paths with spaces. */
static char *rest_of_line(tok_t *t)
{
    if (!t->p) return NULL;
    while (*t->p && isspace((unsigned char)*t->p)) t->p++;
    char *s = t->p;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    t->p = s + n;
    return n ? s : NULL;
}

/* n numbers into v (what: for messages) */
static gt_status tok_doubles(tok_t *t, const char *what, double *v, int n)
{
    for (int k = 0; k < n; k++) GT_TRY(tok_double(t, what, &v[k]));
    return GT_OK;
}

/* the keywords that need 'rig 2' */
static bool v2_keyword(const char *s)
{
    static const char *kw[] = {"projection", "size", "focal", "centre", "R", "distortion"};
    for (size_t k = 0; k < sizeof kw / sizeof *kw; k++)
        if (!strcmp(s, kw[k])) return true;
    return false;
}

/* 'projection KIND L R T B' */
static gt_status parse_projection(tok_t *t, gt_stitch_rig *rig)
{
    char *s = next_tok(t);
    if (!s) return t->err ? t->err : gt_fail_at(GT_ERR_DATA, t->name, t->lineno, "unexpected end of file, expected a projection");
    if (!strcmp(s, "plane")) rig->proj.kind = GT_PROJ_PLANE;
    else if (!strcmp(s, "cylindrical")) rig->proj.kind = GT_PROJ_CYLINDRICAL;
    else if (!strcmp(s, "spherical")) rig->proj.kind = GT_PROJ_SPHERICAL;
    else return gt_fail_at(GT_ERR_DATA, t->name, t->lineno, "unknown projection '%s' (expected plane, cylindrical or spherical)", s);
    double e[4];
    GT_TRY(tok_doubles(t, "projection extent (left right top bottom, degrees)", e, 4));
    rig->proj.left = e[0], rig->proj.right = e[1], rig->proj.top = e[2], rig->proj.bottom = e[3];
    return GT_OK;
}

/* one camera keyword s (the camera exists) */
static gt_status parse_camera_kw(tok_t *t, gt_stitch_rig *rig, const char *s, bool *have_h)
{
    gt_stitch_cam *c = &rig->cam[rig->ncam - 1];
    long l0 = t->lineno;
    if (!strcmp(s, "H")) {
        GT_TRY(tok_doubles(t, "H entry", c->H, 9));
        if (gt_stitch_h_invert(c->H, c->Hinv)) {
            char why[256];
            snprintf(why, sizeof why, "%s", gt_errmsg());
            return gt_fail_at(GT_ERR_DATA, t->name, l0, "camera %d: %s", rig->ncam, why);
        }
        *have_h = true;
    } else if (!strcmp(s, "R")) {
        GT_TRY(tok_doubles(t, "R entry", c->R, 9));
        c->rot = true;
    } else if (!strcmp(s, "size")) {
        double v[2];
        GT_TRY(tok_doubles(t, "camera size", v, 2));
        if (v[0] < 1 || v[1] < 1 || v[0] > 65536 || v[1] > 65536 || v[0] != floor(v[0]) || v[1] != floor(v[1]))
            return gt_fail_at(GT_ERR_DATA, t->name, l0, "camera size %gx%g is not a whole size in 1..65536", v[0], v[1]);
        c->w = (int)v[0], c->h = (int)v[1];
    } else if (!strcmp(s, "focal")) {
        GT_TRY(tok_double(t, "focal length", &c->f));
        if (!(c->f > 0) || c->f > 1e7)
            return gt_fail_at(GT_ERR_DATA, t->name, l0, "focal length %g out of range (0, 1e7] pixels", c->f);
    } else if (!strcmp(s, "centre")) {
        double v[2];
        GT_TRY(tok_doubles(t, "principal point", v, 2));
        c->cx = v[0], c->cy = v[1];
    } else if (!strcmp(s, "distortion")) {
        double v[2];
        GT_TRY(tok_doubles(t, "distortion coefficient", v, 2));
        if (fabs(v[0]) > 100 || fabs(v[1]) > 100)
            return gt_fail_at(GT_ERR_DATA, t->name, l0, "distortion %g %g out of range [-100, 100]", v[0], v[1]);
        c->k1 = v[0], c->k2 = v[1];
    } else if (!strcmp(s, "mask")) {
        char *p = rest_of_line(t);
        if (!p) return gt_fail_at(GT_ERR_DATA, t->name, t->lineno, "'mask' needs a path");
        free(c->mask_path);
        if (!(c->mask_path = strdup(p))) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    } else {
        /* s points into the line buffer, which the next token may refill */
        const char *kw = s[4] == 0 ? "gain" : s[5] == 'u' ? "gain_u" : "gain_v";
        float *dst = s[4] == 0 ? &c->gain : s[5] == 'u' ? &c->gain_u : &c->gain_v;
        double g;
        GT_TRY(tok_double(t, kw, &g));
        if (!(g > 0) || g > 100) return gt_fail_at(GT_ERR_DATA, t->name, t->lineno, "%s %g out of range (0, 100]", kw, g);
        *dst = (float)g;
    }
    return GT_OK;
}
/* a camera is complete: H, or (rig 2) size, focal and R */
static gt_status camera_complete(const tok_t *t, const gt_stitch_rig *rig, int i, bool have_h)
{
    const gt_stitch_cam *c = &rig->cam[i];
    if (!c->rot && !have_h) return gt_fail_at(GT_ERR_DATA, t->name, c->line, "camera %d has no H", i + 1);
    if (c->rot && have_h)
        return gt_fail_at(GT_ERR_DATA, t->name, c->line, "camera %d has both H and R: give one model", i + 1);
    if (c->rot && (c->w == 0 || !(c->f > 0)))
        return gt_fail_at(GT_ERR_DATA, t->name, c->line, "camera %d has R but no %s (a rotation-model camera needs size, focal and R)",
                          i + 1, c->w == 0 ? "size" : "focal");
    if (!c->rot && (c->w || c->f > 0 || !isnan(c->cx) || c->k1 != 0 || c->k2 != 0))
        return gt_fail_at(GT_ERR_DATA, t->name, c->line,
                          "camera %d has H and camera intrinsics (size, focal, centre, distortion): those go with R", i + 1);
    return GT_OK;
}

static const char *rig_keywords = "rig, panorama, projection, camera, H, size, focal, centre, R, distortion, mask, gain, gain_u or gain_v";

gt_status gt_stitch_rig_parse(FILE *f, const char *name, gt_stitch_rig *rig)
{
    memset(rig, 0, sizeof *rig);
    rig->version = 1;
    tok_t t = {.name = name ? name : "-"};
    gt_status st = gt_rd_wrap(&t.rd, f, t.name);
    if (st) return st;
    int have_pano = 0, ntok = 0;
    bool have_h = true;
    char *s;
    while ((s = next_tok(&t))) {
        ntok++;
        if (!strcmp(s, "rig")) {
            double v;
            if (ntok != 1) {
                st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "'rig N' must come first");
                goto fail;
            }
            if ((st = tok_double(&t, "rig version", &v))) goto fail;
            if (v != 1 && v != 2) {
                st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "rig version %g is not supported (this yuvstitch reads 1 and 2)", v);
                goto fail;
            }
            rig->version = (int)v;
        } else if (v2_keyword(s) && rig->version < 2) {
            st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "'%s' needs 'rig 2' as the file's first line", s);
            goto fail;
        } else if (!strcmp(s, "panorama")) {
            double w, h;
            if ((st = tok_double(&t, "panorama width", &w)) || (st = tok_double(&t, "panorama height", &h)))
                goto fail;
            if (w < 1 || h < 1 || w > 65536 || h > 65536 || w != floor(w) || h != floor(h)) {
                st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "panorama size %gx%g is not a whole size in 1..65536", w, h);
                goto fail;
            }
            rig->pano_w = (int)w;
            rig->pano_h = (int)h;
            have_pano = 1;
        } else if (!strcmp(s, "projection")) {
            if (rig->ncam) {
                st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "'projection' after the first 'camera'");
                goto fail;
            }
            rig->proj_line = t.lineno;
            if ((st = parse_projection(&t, rig))) goto fail;
        } else if (!strcmp(s, "camera")) {
            if (rig->ncam && (st = camera_complete(&t, rig, rig->ncam - 1, have_h))) goto fail;
            if (rig->ncam == GT_STITCH_MAX_CAMS) {
                st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "more than %d cameras", GT_STITCH_MAX_CAMS);
                goto fail;
            }
            gt_stitch_cam *c = &rig->cam[rig->ncam++];
            c->gain = c->gain_u = c->gain_v = 1.0f;
            c->cx = c->cy = NAN; /* the size's centre unless given */
            c->line = t.lineno;
            have_h = false;
        } else if (!strcmp(s, "H") || !strcmp(s, "mask") || !strcmp(s, "gain") || !strcmp(s, "gain_u") ||
                   !strcmp(s, "gain_v") || v2_keyword(s)) {
            if (rig->ncam == 0) {
                st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "'%s' before the first 'camera'", s);
                goto fail;
            }
            if ((st = parse_camera_kw(&t, rig, s, &have_h))) goto fail;
        } else {
            st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "unknown keyword '%s' (expected %s)", s, rig_keywords);
            goto fail;
        }
    }
    if ((st = t.err)) goto fail;
    if (!have_pano) {
        st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "no 'panorama W H' line");
        goto fail;
    }
    if (rig->ncam == 0) {
        st = gt_fail_at(GT_ERR_DATA, t.name, t.lineno, "no cameras");
        goto fail;
    }
    if ((st = camera_complete(&t, rig, rig->ncam - 1, have_h))) goto fail;
    if ((st = gt_stitch_rig_finish_named(rig, t.name))) goto fail;
    gt_rd_close(&t.rd);
    return GT_OK;
fail:
    gt_rd_close(&t.rd);
    gt_stitch_rig_free(rig);
    return st;
}

gt_status gt_stitch_rig_load(const char *path, gt_stitch_rig *rig)
{
    gt_status st;
    FILE *f = gt_in_open(path, &st);
    if (!f) return st;
    st = gt_stitch_rig_parse(f, gt_in_name(path), rig);
    gt_in_close(f);
    if (st) return st;
    /* resolve relative mask paths against the rig's folder */
    const char *slash = strrchr(path, '/');
    if (slash && strcmp(path, "-")) {
        size_t dl = (size_t)(slash - path) + 1;
        for (int i = 0; i < rig->ncam; i++) {
            char *m = rig->cam[i].mask_path;
            if (!m || m[0] == '/') continue;
            char *n = malloc(dl + strlen(m) + 1);
            if (!n) {
                gt_stitch_rig_free(rig);
                return gt_fail(GT_ERR_RUNTIME, "out of memory");
            }
            memcpy(n, path, dl);
            strcpy(n + dl, m);
            free(m);
            rig->cam[i].mask_path = n;
        }
    }
    rig->path = strdup(path);
    if (!rig->path) {
        gt_stitch_rig_free(rig);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    return GT_OK;
}
