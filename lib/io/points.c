/* Point text (see points.h): x y [z] per line, separated by whitespace
 * and/or single commas; '#' starts a comment; blank lines are skipped.
 * The output array grows as lines arrive, so it works on pipes. */
#include "io/points.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/output.h"
#include "io/numrows.h"
#include "io/numtext.h"
#include "io/ply_internal.h"
#include "io/reader.h"

static gt_status push(double **xyz, size_t *n, size_t *cap, const double p[3])
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        double *d = realloc(*xyz, nc * 3 * sizeof *d);
        if (!d) return gt_fail(GT_ERR_RUNTIME, "out of memory for %zu points", nc);
        *xyz = d;
        *cap = nc;
    }
    memcpy(*xyz + 3 * *n, p, 3 * sizeof *p);
    (*n)++;
    return GT_OK;
}

/* what ends a token: a separator or the line's end */
static inline bool is_sep(char c)
{
    return c == 0 || c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\f' || c == '\v';
}

/* "<what>'<the token at s, 40 characters at most>' (file:line)" */
static gt_status bad_token(const gt_reader *r, const char *what, const char *s)
{
    size_t tl = strcspn(s, " \t,\r\f\v");
    return gt_fail_at(GT_ERR_DATA, r->name, r->line, "%s'%.*s'", what, (int)(tl < 40 ? tl : 40), s);
}

/* one line's values (at most kmax) into v; *nv: their count (0: blank);
 * noun names a value in messages ("coordinate", "number") */
static gt_status parse_values(gt_reader *r, char *s, double *v, int kmax, int *nv, const char *noun)
{
    char *hash = strchr(s, '#');
    if (hash) *hash = '\0';
    int n = 0;
    bool need_value = false; /* after a comma */
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\f' || *s == '\v') s++;
        if (!*s) break;
        if (*s == ',') {
            if (n == 0 || need_value) return gt_fail_at(GT_ERR_DATA, r->name, r->line, "empty field before ','");
            need_value = true;
            s++;
            continue;
        }
        /* a token is a number that ends at a separator or the line's end
         * (read in place: no copy, no second scan) */
        const char *end;
        double x;
        if (!gt_scan_double(s, &end, &x) || !is_sep(*end)) return bad_token(r, "not a number: ", s);
        if (!isfinite(x)) {
            char what[64];
            snprintf(what, sizeof what, "non-finite %s ", noun);
            return bad_token(r, what, s);
        }
        if (n == kmax) return gt_fail_at(GT_ERR_DATA, r->name, r->line, "more than %d %ss on a line", kmax, noun);
        v[n++] = x;
        need_value = false;
        s = (char *)end;
    }
    if (need_value) return gt_fail_at(GT_ERR_DATA, r->name, r->line, "line ends with ','");
    *nv = n;
    return GT_OK;
}

/* x y [z] on one line into v (z = 0 when absent); *nv: the count (0: blank) */
static gt_status parse_line(gt_reader *r, char *s, double v[3], int *nv)
{
    GT_TRY(parse_values(r, s, v, 3, nv, "coordinate"));
    if (*nv == 1) return gt_fail_at(GT_ERR_DATA, r->name, r->line, "expected 'x y' or 'x y z', got one number");
    if (*nv == 2) v[2] = 0;
    return GT_OK;
}

static gt_status read_text(gt_reader *r, double **xyz, size_t *n)
{
    size_t cap = 0;
    *xyz = NULL;
    *n = 0;
    for (;;) {
        char *line;
        gt_status st = gt_rd_line(r, &line, NULL);
        if (st != GT_OK) goto fail;
        if (!line) break;
        double v[3];
        int nv = 0;
        st = parse_line(r, line, v, &nv);
        if (st != GT_OK) goto fail;
        if (nv == 0) continue;
        st = push(xyz, n, &cap, v);
        if (st != GT_OK) goto fail;
        continue;
    fail:
        free(*xyz);
        *xyz = NULL;
        *n = 0;
        return st;
    }
    if (*n == 0) {
        *xyz = malloc(3 * sizeof(double)); /* non-NULL even when empty */
        if (!*xyz) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    return GT_OK;
}

gt_status gt_points_read(const char *path, double **xyz, size_t *n)
{
    *xyz = NULL;
    *n = 0;
    gt_reader r;
    GT_TRY(gt_rd_open(&r, path));
    gt_status st = read_text(&r, xyz, n);
    gt_rd_close(&r);
    return st;
}

bool gt_points_is_ply_file(const char *path)
{
    if (!path || !strcmp(path, "-")) return false;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char b[4] = {0};
    size_t k = fread(b, 1, 4, f);
    fclose(f);
    return k == 4 && !memcmp(b, "ply", 3) && (b[3] == '\n' || b[3] == '\r');
}

gt_status gt_points_check_finite(const float *v, size_t n, int k, const char *const *names, const char *path)
{
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < k; a++)
            if (!isfinite(v[i * (size_t)k + (size_t)a]))
                return gt_fail_at(GT_ERR_DATA, path, 0,
                                  "vertex %zu (of %zu, counting from 0) has %s = %g: it must be a finite number", i, n,
                                  names[a], (double)v[i * (size_t)k + (size_t)a]);
    return GT_OK;
}

gt_status gt_points_read_any(const char *path, double **xyz, size_t *n)
{
    *xyz = NULL;
    *n = 0;
    gt_reader r;
    GT_TRY(gt_rd_open(&r, path));
    char magic[4];
    size_t k = gt_rd_peek(&r, magic, 4);
    gt_status st;
    if (k == 4 && memcmp(magic, "ply", 3) == 0 && (magic[3] == '\n' || magic[3] == '\r')) {
        gt_ply_mesh m;
        static const char *const xyzn[] = {"x", "y", "z"};
        st = gt_ply_read_reader(&r, &m, xyzn, 3); /* float64 far from 0: relative */
        if (st == GT_OK) {
            int cx = gt_ply_find(&m, "x"), cy = gt_ply_find(&m, "y"), cz = gt_ply_find(&m, "z");
            if (cx < 0 || cy < 0 || cz < 0) {
                st = gt_fail_at(GT_ERR_DATA, r.name, 0, "PLY has no x, y, z vertex properties");
            } else {
                *xyz = malloc((m.nvert ? m.nvert : 1) * 3 * sizeof(double));
                if (!*xyz) st = gt_fail(GT_ERR_RUNTIME, "out of memory for %zu points", m.nvert);
                for (size_t i = 0; st == GT_OK && i < m.nvert; i++) {
                    const float *row = m.vdata + i * (size_t)m.nprops;
                    if (!isfinite(row[cx]) || !isfinite(row[cy]) || !isfinite(row[cz])) {
                        st = gt_fail_at(GT_ERR_DATA, r.name, 0,
                                        "vertex %zu (of %zu, counting from 0) is (%g, %g, %g): points must be finite",
                                        i, m.nvert, (double)row[cx], (double)row[cy], (double)row[cz]);
                        break;
                    }
                    const int c[3] = {cx, cy, cz};
                    for (int a = 0; a < 3; a++) (*xyz)[3 * i + a] = (m.origin ? m.origin[c[a]] : 0.0) + row[c[a]];
                }
                if (st == GT_OK) {
                    *n = m.nvert;
                } else {
                    free(*xyz);
                    *xyz = NULL;
                }
            }
            gt_ply_free(&m);
        }
    } else {
        st = read_text(&r, xyz, n);
    }
    gt_rd_close(&r);
    return st;
}

/* the columns for messages: "x y z nx ny nz" (kmin names), then the others
 * in brackets when kmax > kmin */
static void join_names(const char *const *names, int kmin, int kmax, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < kmax && o + 1 < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s%s%s", i ? " " : "", i == kmin ? "[" : "", names[i],
                              i == kmax - 1 && kmax > kmin ? "]" : "");
}

static gt_status read_table_text(gt_reader *r, const char *const *names, int kmin, int kmax, int nrel,
                                 gt_ply_mesh *m)
{
    double v[64], origin[3] = {0, 0, 0};
    float *data = NULL;
    size_t n = 0, cap = 0;
    int k = 0;
    gt_status st = GT_OK;
    char want[512];
    join_names(names, kmin, kmax, want, sizeof want);
    for (;;) {
        char *line;
        if ((st = gt_rd_line(r, &line, NULL)) != GT_OK) goto fail;
        if (!line) break;
        int nv = 0;
        if ((st = parse_values(r, line, v, kmax, &nv, "number")) != GT_OK) {
            if (k == 0) gt_errmsg_prefix("not a PLY file, nor point text with %s per line", want);
            goto fail;
        }
        if (nv == 0) continue;
        if (k == 0) {
            if (nv != kmin && nv != kmax) {
                if (kmin == kmax) st = gt_fail_at(GT_ERR_DATA, r->name, r->line, "expected %d numbers per line (%s), got %d",
                                                  kmin, want, nv);
                else st = gt_fail_at(GT_ERR_DATA, r->name, r->line, "expected %d or %d numbers per line (%s), got %d",
                                     kmin, kmax, want, nv);
                goto fail;
            }
            k = nv;
            for (int i = 0; i < nrel; i++) origin[i] = ply_pick_origin(v[i]);
        } else if (nv != k) {
            st = gt_fail_at(GT_ERR_DATA, r->name, r->line, "%d numbers on this line, %d on the first", nv, k);
            goto fail;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 4096;
            float *d = realloc(data, nc * (size_t)k * sizeof *d);
            if (!d) { st = gt_fail(GT_ERR_RUNTIME, "out of memory for %zu points", nc); goto fail; }
            data = d;
            cap = nc;
        }
        for (int i = 0; i < k; i++) data[n * (size_t)k + (size_t)i] = (float)(i < nrel ? v[i] - origin[i] : v[i]);
        n++;
    }
    if (k == 0) {
        st = gt_fail_at(GT_ERR_DATA, r->name, 1, "not a PLY file, and no point text (%s per line) in it%s", want,
                        r->line <= 1 ? ": it is empty" : "");
        goto fail;
    }
    memset(m, 0, sizeof *m);
    m->props = calloc((size_t)k, sizeof *m->props);
    if (!m->props) { st = gt_fail(GT_ERR_RUNTIME, "out of memory"); goto fail; }
    for (int i = 0; i < k; i++) {
        snprintf(m->props[i].name, sizeof m->props[i].name, "%s", names[i]);
        m->props[i].type = GT_PLY_FLOAT32;
    }
    m->nprops = k;
    m->nvert = n;
    m->vdata = data ? data : malloc(sizeof(float));
    m->format = GT_PLY_ASCII;
    if (!m->vdata) { free(m->props); memset(m, 0, sizeof *m); return gt_fail(GT_ERR_RUNTIME, "out of memory"); }
    if (origin[0] != 0.0 || origin[1] != 0.0 || origin[2] != 0.0) {
        if (!(m->origin = calloc((size_t)k, sizeof *m->origin))) {
            gt_ply_free(m);
            return gt_fail(GT_ERR_RUNTIME, "out of memory");
        }
        memcpy(m->origin, origin, (size_t)nrel * sizeof *origin);
    }
    return GT_OK;
fail:
    free(data);
    return st;
}

gt_status gt_points_read_table(const char *path, const char *const *names, int kmin, int kmax, int nrel,
                               gt_ply_mesh *m)
{
    memset(m, 0, sizeof *m);
    if (kmin < 1 || kmax < kmin || kmax > 64 || nrel < 0 || nrel > 3 || nrel > kmin)
        return gt_fail(GT_ERR_RUNTIME, "gt_points_read_table: bad column counts");
    gt_reader r;
    GT_TRY(gt_rd_open(&r, path));
    char magic[4];
    size_t k = gt_rd_peek(&r, magic, 4);
    gt_status st;
    if (k == 4 && memcmp(magic, "ply", 3) == 0 && (magic[3] == '\n' || magic[3] == '\r'))
        st = gt_ply_read_reader(&r, m, names, nrel);
    else
        st = read_table_text(&r, names, kmin, kmax, nrel, m);
    gt_rd_close(&r);
    return st;
}

gt_status gt_points_write(const char *path, const double *xyz, size_t n)
{
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    /* a write error is left in the stream for gt_out_commit to report */
    if (gt_write_rows(o.fp, n, xyz, 3, NULL, 0) != 0 && !ferror(o.fp)) {
        gt_out_abort(&o);
        return gt_fail(GT_ERR_RUNTIME, "out of memory writing '%s'", path);
    }
    return gt_out_commit(&o);
}
