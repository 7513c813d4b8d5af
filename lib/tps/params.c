/* The stpsfit parameter file: plain text, one value per token, %.17g so that
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
    fprintf(f, "stpsfit-params 1\nkernel %s\nlambda %.17g\nplanar %d\nn %zu\n",
            gt_tps_kernel_name(t->kernel), t->lambda, t->planar ? 1 : 0, t->n);
    static const char *rows[4] = {"a0", "ax", "ay", "az"};
    for (int r = 0; r < 4; r++)
        fprintf(f, "%s %.17g %.17g %.17g\n", rows[r], t->a[r][0], t->a[r][1], t->a[r][2]);
    for (size_t k = 0; k < t->n; k++) {
        const double *c = t->c + 3 * k, *w = t->w + 3 * k;
        fprintf(f, "%.17g %.17g %.17g %.17g %.17g %.17g\n", c[0], c[1], c[2], w[0], w[1], w[2]);
    }
    return gt_out_commit(&o);
}

/* next non-comment, non-blank line into buf; false at EOF */
static bool next_line(FILE *f, char *buf, size_t len, long *line)
{
    while (fgets(buf, (int)len, f)) {
        (*line)++;
        char *s = buf;
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
        if (*s == 0 || *s == '#') continue;
        return true;
    }
    return false;
}

static int parse_doubles(const char *s, double *v, int k)
{
    char *end;
    for (int i = 0; i < k; i++) {
        errno = 0;
        v[i] = strtod(s, &end);
        if (end == s || !isfinite(v[i])) return 0;
        s = end;
    }
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    return *s == 0;
}

gt_status gt_tps_read(const char *path, gt_tps *t)
{
    gt_status st = GT_OK;
    FILE *f = gt_in_open(path, &st);
    if (!f) return st;
    const char *name = gt_in_name(path);
    char buf[1024], word[64];
    long line = 0;
    gt_tps_init(t);
    int ver = 0;
#define BAD(...) do { st = gt_fail_at(GT_ERR_DATA, name, line, __VA_ARGS__); goto out; } while (0)
    if (!next_line(f, buf, sizeof buf, &line) || sscanf(buf, "stpsfit-params %d", &ver) != 1 ||
        ver != 1)
        BAD("not an stpsfit parameter file (expected 'stpsfit-params 1')");
    if (!next_line(f, buf, sizeof buf, &line) || sscanf(buf, "kernel %63s", word) != 1)
        BAD("expected 'kernel r2logr|r'");
    if (!strcmp(word, "r2logr")) t->kernel = GT_TPS_R2LOGR;
    else if (!strcmp(word, "r")) t->kernel = GT_TPS_R;
    else BAD("unknown kernel '%s' (expected r2logr or r)", word);
    if (!next_line(f, buf, sizeof buf, &line) || strncmp(buf, "lambda ", 7) ||
        !parse_doubles(buf + 7, &t->lambda, 1) || t->lambda < 0)
        BAD("expected 'lambda L' with L >= 0");
    int pl;
    if (!next_line(f, buf, sizeof buf, &line) || sscanf(buf, "planar %d", &pl) != 1 ||
        (pl != 0 && pl != 1))
        BAD("expected 'planar 0|1'");
    t->planar = pl;
    unsigned long long nn;
    if (!next_line(f, buf, sizeof buf, &line) || sscanf(buf, "n %llu", &nn) != 1 || nn < 1 ||
        nn > ((size_t)1 << 40))
        BAD("expected 'n COUNT' with COUNT >= 1");
    t->n = (size_t)nn;
    static const char *rows[4] = {"a0 ", "ax ", "ay ", "az "};
    for (int r = 0; r < 4; r++)
        if (!next_line(f, buf, sizeof buf, &line) || strncmp(buf, rows[r], 3) ||
            !parse_doubles(buf + 3, t->a[r], 3))
            BAD("expected '%.2s X Y Z' (affine part)", rows[r]);
    t->c = gt_malloc_array(t->n * 3, sizeof(double), "control points");
    t->w = gt_malloc_array(t->n * 3, sizeof(double), "weights");
    if (!t->c || !t->w) { st = GT_ERR_RUNTIME; goto out; }
    for (size_t k = 0; k < t->n; k++) {
        double v[6];
        if (!next_line(f, buf, sizeof buf, &line))
            BAD("file ends after %zu of %zu control points", k, t->n);
        if (!parse_doubles(buf, v, 6)) BAD("expected 'cx cy cz wx wy wz' (6 finite numbers)");
        memcpy(t->c + 3 * k, v, 3 * sizeof(double));
        memcpy(t->w + 3 * k, v + 3, 3 * sizeof(double));
    }
    if (next_line(f, buf, sizeof buf, &line)) BAD("extra data after %zu control points", t->n);
#undef BAD
out:
    gt_in_close(f);
    if (st != GT_OK) gt_tps_free(t);
    return st;
}
