/* bench_numtext (not a test): ns per number for gt_fmt_double/gt_fmt_float
 * against snprintf %.17g/%.9g and gt_scan_double against strtod, then the
 * text I/O of an stpsfit fit at n points (default 20000): reading SOURCE and
 * TARGET point text written with %.17g (as scripts/bench/stpsfit writes
 * them) and writing the parameter file, each beside the same work done the
 * old way (fprintf %.17g, strtod per token).
 *   bench_numtext [n]        figures on stdout, "name value" per line */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/timer.h"
#include "gt_test.h"
#include "io/numtext.h"
#include "io/points.h"
#include "io/reader.h"
#include "tps/tps.h"

enum { N = 1000000, REPS = 5 };

static double sink;

static double fill(gt_rng *r, double *v, int kind)
{
    for (int i = 0; i < N; i++) {
        if (kind == 0) {
            v[i] = gt_rng_range(r, -1e3, 1e3);
        } else {
            uint64_t b = gt_rng_u64(r);
            memcpy(&v[i], &b, sizeof b);
            if (!isfinite(v[i])) v[i] = 1.5;
        }
    }
    return 0;
}

static void bench_format(const double *v, const char *set)
{
    char b[64];
    double best_ours = 1e30, best_printf = 1e30, best_f = 1e30, best_pf = 1e30;
    size_t len = 0;
    for (int r = 0; r < REPS; r++) {
        double t0 = gt_now_ms();
        for (int i = 0; i < N; i++) len += (size_t)gt_fmt_double(b, v[i]);
        double t1 = gt_now_ms();
        for (int i = 0; i < N; i++) len += (size_t)snprintf(b, sizeof b, "%.17g", v[i]);
        double t2 = gt_now_ms();
        for (int i = 0; i < N; i++) len += (size_t)gt_fmt_float(b, (float)v[i]);
        double t3 = gt_now_ms();
        for (int i = 0; i < N; i++) len += (size_t)snprintf(b, sizeof b, "%.9g", (double)(float)v[i]);
        double t4 = gt_now_ms();
        best_ours = fmin(best_ours, t1 - t0);
        best_printf = fmin(best_printf, t2 - t1);
        best_f = fmin(best_f, t3 - t2);
        best_pf = fmin(best_pf, t4 - t3);
    }
    sink += (double)len;
    printf("format_double_%s_ns gt_fmt_double %.1f snprintf_17g %.1f\n", set, best_ours * 1e6 / N,
           best_printf * 1e6 / N);
    printf("format_float_%s_ns gt_fmt_float %.1f snprintf_9g %.1f\n", set, best_f * 1e6 / N, best_pf * 1e6 / N);
}

static void bench_parse(const double *v, const char *set, bool shortest)
{
    char *text = malloc((size_t)N * 32), **s = malloc(N * sizeof *s);
    char *p = text;
    for (int i = 0; i < N; i++) {
        s[i] = p;
        p += shortest ? gt_fmt_double(p, v[i]) : snprintf(p, 32, "%.17g", v[i]);
        *p++ = 0;
    }
    double best_ours = 1e30, best_strtod = 1e30, acc = 0;
    for (int r = 0; r < REPS; r++) {
        double t0 = gt_now_ms();
        for (int i = 0; i < N; i++) {
            const char *e;
            double x;
            gt_scan_double(s[i], &e, &x);
            acc += x;
        }
        double t1 = gt_now_ms();
        for (int i = 0; i < N; i++) acc += strtod(s[i], NULL);
        double t2 = gt_now_ms();
        best_ours = fmin(best_ours, t1 - t0);
        best_strtod = fmin(best_strtod, t2 - t1);
    }
    sink += acc;
    printf("parse_%s_%s_ns gt_scan_double %.1f strtod %.1f\n", set, shortest ? "shortest" : "17g",
           best_ours * 1e6 / N, best_strtod * 1e6 / N);
    free(text);
    free(s);
}

/* the old point text reader's work: a line at a time, strtod per token */
static size_t read_old(const char *path, double *out)
{
    gt_reader r;
    if (gt_rd_open(&r, path) != GT_OK) return 0;
    size_t n = 0;
    char *line;
    while (gt_rd_line(&r, &line, NULL) == GT_OK && line) {
        char *e;
        for (int k = 0; k < 3; k++) {
            out[3 * n + k] = strtod(line, &e);
            line = e;
        }
        n++;
    }
    gt_rd_close(&r);
    return n;
}

static void write_old(const char *path, const gt_tps *t)
{
    FILE *f = fopen(path, "w");
    for (size_t k = 0; k < t->n; k++) {
        const double *c = t->c + 3 * k, *w = t->w + 3 * k;
        fprintf(f, "%.17g %.17g %.17g %.17g %.17g %.17g\n", c[0], c[1], c[2], w[0], w[1], w[2]);
    }
    fclose(f);
}

static void bench_stpsfit_io(size_t n)
{
    gt_rng r = {7};
    char dir[] = "/tmp/bench_numtext_XXXXXX";
    if (!mkdtemp(dir)) return;
    char src[256], dst[256], par[256], par_old[256];
    snprintf(src, sizeof src, "%s/src.txt", dir);
    snprintf(dst, sizeof dst, "%s/dst.txt", dir);
    snprintf(par, sizeof par, "%s/p.txt", dir);
    snprintf(par_old, sizeof par_old, "%s/p_old.txt", dir);
    gt_tps t;
    gt_tps_init(&t);
    t.n = n;
    t.c = malloc(3 * n * sizeof(double));
    t.w = malloc(3 * n * sizeof(double));
    FILE *fs = fopen(src, "w"), *fd = fopen(dst, "w");
    for (size_t i = 0; i < n; i++) {
        double p[3], q[3];
        for (int k = 0; k < 3; k++) p[k] = gt_rng_range(&r, -1, 1);
        for (int k = 0; k < 3; k++) q[k] = p[k] + 0.1 * sin(3 * p[(k + 1) % 3]);
        fprintf(fs, "%.17g %.17g %.17g\n", p[0], p[1], p[2]);
        fprintf(fd, "%.17g %.17g %.17g\n", q[0], q[1], q[2]);
        memcpy(t.c + 3 * i, p, sizeof p);
        for (int k = 0; k < 3; k++) t.w[3 * i + k] = gt_rng_range(&r, -1, 1) * 1e-3; /* weights: small, 16-17 digits */
    }
    fclose(fs);
    fclose(fd);
    double *buf = malloc(3 * n * sizeof(double));
    double rd = 1e30, rd_old = 1e30, wr = 1e30, wr_old = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
        double *a, *b;
        size_t na, nb;
        double t0 = gt_now_ms();
        if (gt_points_read_any(src, &a, &na) != GT_OK || gt_points_read_any(dst, &b, &nb) != GT_OK) {
            fprintf(stderr, "bench_numtext: %s\n", gt_errmsg());
            exit(1);
        }
        double t1 = gt_now_ms();
        sink += (double)(read_old(src, buf) + read_old(dst, buf));
        double t2 = gt_now_ms();
        if (gt_tps_write(par, &t) != GT_OK) {
            fprintf(stderr, "bench_numtext: %s\n", gt_errmsg());
            exit(1);
        }
        double t3 = gt_now_ms();
        write_old(par_old, &t);
        double t4 = gt_now_ms();
        rd = fmin(rd, t1 - t0);
        rd_old = fmin(rd_old, t2 - t1);
        wr = fmin(wr, t3 - t2);
        wr_old = fmin(wr_old, t4 - t3);
        free(a);
        free(b);
    }
    printf("stpsfit_read_ms n %zu points_read_any_x2 %.2f old_strtod %.2f\n", n, rd, rd_old);
    printf("stpsfit_write_ms n %zu gt_tps_write %.2f old_fprintf_17g %.2f\n", n, wr, wr_old);
    unlink(src);
    unlink(dst);
    unlink(par);
    unlink(par_old);
    rmdir(dir);
    gt_tps_free(&t);
    free(buf);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
    double *v = malloc(N * sizeof *v);
    gt_rng r = {1};
    static const char *sets[2] = {"uniform", "bits"};
    for (int kind = 0; kind < 2; kind++) {
        fill(&r, v, kind);
        bench_format(v, sets[kind]);
        bench_parse(v, sets[kind], false);
        bench_parse(v, sets[kind], true);
    }
    bench_stpsfit_io(n);
    free(v);
    return sink == 42.0;
}
