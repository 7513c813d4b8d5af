/* The stpsfit parameter file: plain text, one value per token, each the
 * shortest decimal that reads back as the same double (io/numtext.h), so that
 * writing and reading back gives the same doubles.
 *
 *   # comment lines start with '#'
 *   stpsfit-params 1
 *   kernel r2logr            (or r)
 *   lambda <L>
 *   planar 0|1
 *   n <count>
 *   a0 <x> <y> <z>           constant term of f
 *   ax <x> <y> <z>           coefficient of p.x in f
 *   ay <x> <y> <z>
 *   az <x> <y> <z>
 *   then n lines: cx cy cz wx wy wz   (control point and weight)
 *
 * f(p) = a0 + p.x*ax + p.y*ay + p.z*az + sum_k w_k U(|p - c_k|). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/numrows.h"
#include "io/numtext.h"
#include "io/reader.h"
#include "tps/tps.h"

gt_status gt_tps_write(const char *path, const gt_tps *t)
{
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    FILE *f = o.fp;
    fprintf(f, "# smoothed thin-plate spline (stpsfit): f(p) = a0 + p.x*ax + p.y*ay + p.z*az"
               " + sum_k w_k U(|p - c_k|)\n");
    fprintf(f, "# U(r) = %s; control point lines: cx cy cz wx wy wz\n",
            t->kernel == GT_TPS_R ? "-r" : "r^2 log r");
    char b[3][GT_FMT_MAX];
    gt_fmt_double(b[0], t->lambda);
    fprintf(f, "stpsfit-params 1\nkernel %s\nlambda %s\nplanar %d\nn %zu\n",
            gt_tps_kernel_name(t->kernel), b[0], t->planar ? 1 : 0, t->n);
    static const char *rows[4] = {"a0", "ax", "ay", "az"};
    for (int r = 0; r < 4; r++) {
        for (int i = 0; i < 3; i++) gt_fmt_double(b[i], t->a[r][i]);
        fprintf(f, "%s %s %s %s\n", rows[r], b[0], b[1], b[2]);
    }
    /* the control point lines: cx cy cz wx wy wz */
    /* a write error is left in the stream for gt_out_commit to report */
    if (gt_write_rows(f, t->n, t->c, 3, t->w, 3) != 0 && !ferror(f)) {
        gt_out_abort(&o);
        return gt_fail(GT_ERR_RUNTIME, "out of memory writing '%s'", path);
    }
    return gt_out_commit(&o);
}

/* Next non-comment, non-blank line, leading blanks skipped; *s = NULL at
 * EOF. Lines come from lib/io's reader: an over-long line or a NUL byte is
 * an error naming its line, never a line silently cut in two. */
static gt_status next_line(gt_reader *r, char **s)
{
    for (;;) {
        GT_TRY(gt_rd_line(r, s, NULL));
        if (!*s) return GT_OK;
        *s += strspn(*s, " \t");
        if (**s && **s != '#') return GT_OK;
    }
}

/* The value of a "key value" line: the text after key and at least one
 * blank, or NULL when the line starts with another word. */
static const char *field(const char *s, const char *key)
{
    size_t k = strlen(key);
    if (strncmp(s, key, k) || (s[k] != ' ' && s[k] != '\t')) return NULL;
    return s + k + strspn(s + k, " \t");
}

/* k finite numbers and nothing after them */
static int parse_doubles(const char *s, double *v, int k)
{
    const char *end;
    for (int i = 0; i < k; i++) {
        if (!gt_scan_double(s, &end, &v[i]) || !isfinite(v[i])) return 0;
        s = end;
    }
    return s[strspn(s, " \t")] == 0;
}

/* a whole number in [lo, hi] written with digits only, and nothing after it */
static int parse_count(const char *s, unsigned long long lo, unsigned long long hi,
                       unsigned long long *v)
{
    if (!s || *s < '0' || *s > '9') return 0;
    char *end;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return !errno && s[strcspn(s, " \t")] == 0 && end[strspn(end, " \t")] == 0 && *v >= lo &&
           *v <= hi;
}

/* one word and nothing after it, into w[cap] */
static int parse_word(const char *s, char *w, size_t cap)
{
    if (!s) return 0;
    size_t n = strcspn(s, " \t");
    if (n == 0 || n >= cap || s[n + strspn(s + n, " \t")]) return 0;
    memcpy(w, s, n);
    w[n] = 0;
    return 1;
}

gt_status gt_tps_read(const char *path, gt_tps *t)
{
    gt_tps_init(t);
    gt_reader rd;
    GT_TRY(gt_rd_open(&rd, path));
    gt_status st = GT_OK;
    char *s, word[16];
    unsigned long long v;
    size_t cap = 0;
#define NEXT() do { if ((st = next_line(&rd, &s)) != GT_OK) goto out; } while (0)
    /* the line of the error; at the end of the file its last line */
#define BAD(...) do { st = gt_fail_at(GT_ERR_DATA, rd.name, rd.line ? rd.line : 1, __VA_ARGS__); goto out; } while (0)
    NEXT();
    if (!s || !parse_count(field(s, "stpsfit-params"), 1, 1, &v))
        BAD("not an stpsfit parameter file (expected 'stpsfit-params 1')");
    NEXT();
    if (!s || !parse_word(field(s, "kernel"), word, sizeof word)) BAD("expected 'kernel r2logr|r'");
    if (!strcmp(word, "r2logr")) t->kernel = GT_TPS_R2LOGR;
    else if (!strcmp(word, "r")) t->kernel = GT_TPS_R;
    else BAD("unknown kernel '%s' (expected r2logr or r)", word);
    NEXT();
    const char *val = s ? field(s, "lambda") : NULL;
    if (!val || !parse_doubles(val, &t->lambda, 1) || t->lambda < 0)
        BAD("expected 'lambda L' with L >= 0");
    NEXT();
    if (!s || !parse_count(field(s, "planar"), 0, 1, &v)) BAD("expected 'planar 0|1'");
    t->planar = v;
    NEXT();
    if (!s || !parse_count(field(s, "n"), 1, (size_t)1 << 40, &v))
        BAD("expected 'n COUNT' with COUNT in 1..2^40");
    t->n = (size_t)v;
    static const char *rows[4] = {"a0", "ax", "ay", "az"};
    for (int r = 0; r < 4; r++) {
        NEXT();
        if (!s || !(val = field(s, rows[r])) || !parse_doubles(val, t->a[r], 3))
            BAD("expected '%s X Y Z' (affine part)", rows[r]);
    }
    /* the arrays grow with the lines actually read, so a count that the
     * file does not hold costs no more memory than the file */
    for (size_t k = 0; k < t->n; k++) {
        double p[6];
        NEXT();
        if (!s) BAD("file ends after %zu of %zu control points", k, t->n);
        if (!parse_doubles(s, p, 6)) BAD("expected 'cx cy cz wx wy wz' (6 finite numbers)");
        if (k == cap) {
            cap = k ? 2 * k : 1024;
            if (cap > t->n) cap = t->n;
            double *c = realloc(t->c, 3 * cap * sizeof(double));
            if (c) t->c = c;
            double *w = c ? realloc(t->w, 3 * cap * sizeof(double)) : NULL;
            if (w) t->w = w;
            if (!w) {
                st = gt_fail(GT_ERR_RUNTIME, "out of memory for %zu control points", cap);
                goto out;
            }
        }
        memcpy(t->c + 3 * k, p, 3 * sizeof(double));
        memcpy(t->w + 3 * k, p + 3, 3 * sizeof(double));
    }
    NEXT();
    if (s) BAD("extra data after %zu control points", t->n);
#undef NEXT
#undef BAD
out:
    gt_rd_close(&rd);
    if (st != GT_OK) gt_tps_free(t);
    return st;
}
