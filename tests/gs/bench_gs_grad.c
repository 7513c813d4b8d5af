/* Not a test: the driver of scripts/bench/gsrender-grad. Runs the
 * differentiable renderer (gt_gs_diff, or the CPU reference with "cpu") on
 * raw parameters and an upstream gradient given as float32 files, writes the
 * gradients and the image, and times forward + backward.
 *
 *   bench_gs_grad PARAMS.f32 N DEG CAMERA.txt DL.f32 GRAD.f32 RGB.f32 ITERS [ref] [cpu]
 *
 * PARAMS/GRAD: pos (3N) log_scale (3N) rot (4N, w x y z) logit_opacity (N)
 * sh (N (DEG+1)^2 3), float32 little endian; CAMERA.txt: w h fx fy R[9]
 * (world -> camera, rows) t[3] campos[3]; DL/RGB: planar 3 w h. "ref": the
 * reference's gradient variant (gt_gs_params.ref_grad). Prints
 * "fwd_ms", "bwd_ms" (means over ITERS after a warm-up), "bytes". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gs/gs_grad.h"
#include "common/gpu_runtime.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int die(const char *what)
{
    fprintf(stderr, "bench_gs_grad: error: %s\n", what);
    return 1;
}

static int read_f32(const char *path, float *dst, size_t count)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t got = fread(dst, sizeof(float), count, f);
    fclose(f);
    return got == count ? 0 : -1;
}

static int write_f32(const char *path, float *const *parts, const size_t *len, int nparts)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    for (int k = 0; k < nparts; k++)
        if (fwrite(parts[k], sizeof(float), len[k], f) != len[k]) {
            fclose(f);
            return -1;
        }
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 9) {
        fprintf(stderr, "usage: bench_gs_grad PARAMS.f32 N DEG CAMERA.txt DL.f32 GRAD.f32 RGB.f32 ITERS [ref] [cpu]\n");
        return 2;
    }
    size_t n = strtoull(argv[2], NULL, 10);
    int deg = atoi(argv[3]), iters = atoi(argv[8]);
    bool ref = false, cpu = false;
    for (int k = 9; k < argc; k++) {
        if (!strcmp(argv[k], "ref")) ref = true;
        if (!strcmp(argv[k], "cpu")) cpu = true;
    }
    gt_gs_camera c;
    memset(&c, 0, sizeof c);
    FILE *cf = fopen(argv[4], "r");
    if (!cf) return die("cannot open the camera file");
    int ok = fscanf(cf, "%d %d %f %f", &c.width, &c.height, &c.fx, &c.fy) == 4;
    for (int k = 0; k < 9 && ok; k++) ok = fscanf(cf, "%f", &c.R[k]) == 1;
    for (int k = 0; k < 3 && ok; k++) ok = fscanf(cf, "%f", &c.t[k]) == 1;
    for (int k = 0; k < 3 && ok; k++) ok = fscanf(cf, "%f", &c.campos[k]) == 1;
    fclose(cf);
    if (!ok) return die("camera file: expected w h fx fy R[9] t[3] campos[3]");
    c.cx = 0.5f * (float)c.width, c.cy = 0.5f * (float)c.height; /* centred, as the peers' */
    gt_gs_raw r, g;
    if (gt_gs_raw_alloc(&r, n, deg) != GT_OK || gt_gs_raw_alloc(&g, n, deg) != GT_OK) return die(gt_errmsg());
    float *parts[5] = {r.pos, r.log_scale, r.rot, r.logit_opacity, r.sh};
    float *gparts[5] = {g.pos, g.log_scale, g.rot, g.logit_opacity, g.sh};
    size_t len[5] = {3 * n, 3 * n, 4 * n, n, n * (size_t)r.sh_k * 3};
    size_t total = 0;
    for (int k = 0; k < 5; k++) total += len[k];
    float *all = malloc(total * sizeof(float));
    if (!all || read_f32(argv[1], all, total)) return die("cannot read the parameters");
    for (int k = 0, off = 0; k < 5; off += (int)len[k], k++) memcpy(parts[k], all + off, len[k] * sizeof(float));
    free(all);
    size_t np = (size_t)c.width * c.height;
    float *dl = malloc(3 * np * sizeof(float)), *rgb = malloc(3 * np * sizeof(float));
    if (!dl || !rgb || read_f32(argv[5], dl, 3 * np)) return die("cannot read the upstream gradient");
    gt_gs_params p;
    gt_gs_params_init(&p);
    p.ref_grad = ref;
    double tf = 0, tb = 0;
    if (cpu) {
        double t0 = now_ms();
        if (gt_gs_backward_cpu(&r, deg, &c, &p, dl, rgb, &g, NULL) != GT_OK) return die(gt_errmsg());
        tb = now_ms() - t0;
        printf("fwdbwd_ms %.3f\n", tb);
    } else {
        gt_gs_raw dr = r, dg = g;
        float **dp[5] = {&dr.pos, &dr.log_scale, &dr.rot, &dr.logit_opacity, &dr.sh};
        float **gp[5] = {&dg.pos, &dg.log_scale, &dg.rot, &dg.logit_opacity, &dg.sh};
        for (int k = 0; k < 5; k++) {
            if (gt_cu_malloc((void **)dp[k], len[k] * sizeof(float) + 16, "parameters") != GT_OK ||
                gt_cu_malloc((void **)gp[k], len[k] * sizeof(float) + 16, "gradients") != GT_OK ||
                gt_cu_memcpy_h2d(*dp[k], parts[k], len[k] * sizeof(float), NULL) != GT_OK)
                return die(gt_errmsg());
        }
        float *d_rgb, *d_dl;
        if (gt_cu_malloc((void **)&d_rgb, 3 * np * sizeof(float), "image") != GT_OK ||
            gt_cu_malloc((void **)&d_dl, 3 * np * sizeof(float), "upstream gradient") != GT_OK ||
            gt_cu_memcpy_h2d(d_dl, dl, 3 * np * sizeof(float), NULL) != GT_OK)
            return die(gt_errmsg());
        gt_gs_diff *d;
        if (gt_gs_diff_create(n, deg, c.width, c.height, NULL, &d) != GT_OK) return die(gt_errmsg());
        for (int it = -1; it < iters; it++) { /* -1: warm-up */
            for (int k = 0; k < 5; k++)
                if (gt_cu_memset(*gp[k], 0, len[k] * sizeof(float), NULL) != GT_OK) return die(gt_errmsg());
            if (gt_cu_sync() != GT_OK) return die(gt_errmsg());
            double t0 = now_ms();
            if (gt_gs_diff_forward(d, &dr, deg, &c, &p, d_rgb) != GT_OK || gt_cu_sync() != GT_OK)
                return die(gt_errmsg());
            double t1 = now_ms();
            if (gt_gs_diff_backward(d, d_dl, &dg, NULL) != GT_OK || gt_cu_sync() != GT_OK) return die(gt_errmsg());
            double t2 = now_ms();
            if (it >= 0) tf += t1 - t0, tb += t2 - t1;
        }
        if (iters > 0) printf("fwd_ms %.3f\nbwd_ms %.3f\nfwdbwd_ms %.3f\n", tf / iters, tb / iters, (tf + tb) / iters);
        printf("bytes %zu\n", gt_gs_diff_bytes(d));
        for (int k = 0; k < 5; k++)
            if (gt_cu_memcpy_d2h(gparts[k], *gp[k], len[k] * sizeof(float), NULL) != GT_OK) return die(gt_errmsg());
        if (gt_cu_memcpy_d2h(rgb, d_rgb, 3 * np * sizeof(float), NULL) != GT_OK) return die(gt_errmsg());
        gt_gs_diff_destroy(d);
    }
    float *rp[1] = {rgb};
    size_t rl[1] = {3 * np};
    if (write_f32(argv[6], gparts, len, 5) || write_f32(argv[7], rp, rl, 1)) return die("cannot write the outputs");
    return 0;
}
