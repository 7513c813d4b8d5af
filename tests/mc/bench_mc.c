/* Benchmark (not a test): marching cubes with the volume already on the GPU.
 *   bench_mc [--n N] [--kind gyroid|noise] [--iso V] [--reps R] [--write FILE.raw]
 * Builds an N^3 float32 volume (gyroid: 6 periods; noise: smooth value noise,
 * a sum of random plane waves), uploads it, measures the device copy bandwidth
 * (the floor: one read of the volume), then times extraction (results stay on
 * the device) with CUDA events, best of R, and prints G voxels/s, the stage
 * split and the peak device memory beyond the volume. --write saves the
 * volume (raw float32, x fastest) for the CLI and the peer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "common/timer.h"
#include "common/gpu_runtime.h"
#include "kernels/mc/mc_cuda.h"
#include "mc/mc.h"

int main(int argc, char **argv)
{
    int n = 512, reps = 10;
    const char *kind = "gyroid", *out = NULL;
    double iso = 0.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n")) n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--kind")) kind = argv[i + 1];
        else if (!strcmp(argv[i], "--iso")) iso = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--write")) out = argv[i + 1];
    }
    gt_device_kind k;
    if (gt_device_choose(GT_DEVICE_CUDA, 0, &k) != GT_OK) {
        fprintf(stderr, "bench_mc: no GPU: %s\n", gt_errmsg());
        return 77;
    }
    const size_t N = (size_t)n * n * n;
    float *v = malloc(N * sizeof(float));
    if (!v) return 1;
    const int gyroid = strcmp(kind, "noise") != 0;
    double w[24][4];
    srand(12345);
    for (int q = 0; q < 24; q++) {
        double a = 0;
        for (int c = 0; c < 3; c++) w[q][c] = (rand() / (double)RAND_MAX - 0.5), a += w[q][c] * w[q][c];
        double f = 2 * M_PI * (2.0 + 10.0 * rand() / (double)RAND_MAX) / n / sqrt(a);
        for (int c = 0; c < 3; c++) w[q][c] *= f;
        w[q][3] = 2 * M_PI * rand() / (double)RAND_MAX;
    }
#pragma omp parallel for
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                double val;
                if (gyroid) {
                    double s = 2 * M_PI * 6.0 / n;
                    val = sin(x * s) * cos(y * s) + sin(y * s) * cos(z * s) + sin(z * s) * cos(x * s);
                } else {
                    val = 0;
                    for (int q = 0; q < 24; q++) val += cos(w[q][0] * x + w[q][1] * y + w[q][2] * z + w[q][3]);
                    val /= sqrt(12.0);
                }
                v[((size_t)z * n + y) * n + x] = (float)val;
            }
    if (out) {
        FILE *f = fopen(out, "wb");
        if (!f || fwrite(v, sizeof(float), N, f) != N || fclose(f)) {
            fprintf(stderr, "bench_mc: cannot write %s\n", out);
            return 1;
        }
    }
    gt_cu_reset_peak();
    float *dv = NULL, *dv2 = NULL;
    if (gt_cu_malloc((void **)&dv, N * sizeof(float), "volume") || gt_cu_malloc((void **)&dv2, N * sizeof(float), "copy")) {
        fprintf(stderr, "bench_mc: %s\n", gt_errmsg());
        return 4;
    }
    gt_cu_memcpy_h2d(dv, v, N * sizeof(float), NULL);
    /* floor: device copy bandwidth (read + write) -> time to read the volume once */
    double best_copy = 1e30;
    for (int r = 0; r < 5; r++) {
        gt_timer t;
        gt_timer_start(&t, true, NULL);
        gt_cu_memcpy_d2d(dv2, dv, N * sizeof(float), NULL);
        double ms = gt_timer_stop(&t);
        if (ms < best_copy) best_copy = ms;
    }
    gt_cu_free(dv2);
    const double bw = 2.0 * N * sizeof(float) / (best_copy * 1e-3); /* bytes/s */
    const double floor_ms = N * sizeof(float) / bw * 1e3;
    gt_cu_sync();
    const size_t vol_bytes = gt_cu_current_bytes();
    gt_cu_reset_peak();

    gt_mc_params p;
    gt_mc_params_init(&p, iso);
    gt_mc_geom g;
    int64_t dims[3] = {n, n, n};
    if (gt_mc_geom_init(&g, dims, &p)) return 2;
    gt_mc_cuda *c = NULL;
    if (gt_mc_cuda_create(&g, n, &c)) {
        fprintf(stderr, "bench_mc: %s\n", gt_errmsg());
        return 4;
    }
    gt_mc_cuda_use_device_volume(c, dv);
    double best = 1e30;
    uint64_t nv = 0, nt = 0;
    gt_timings best_tm;
    gt_timings_init(&best_tm);
    /* best of reps without per-stage timing (no syncs between stages), then
     * reps with the stage split (events and a sync after each stage) */
    double best_staged = 1e30;
    for (int r = 0; r < 2 * reps + 1; r++) {
        const bool staged = r > reps;
        gt_timings tm;
        gt_timings_init(&tm);
        gt_timer t;
        gt_timer_start(&t, true, NULL);
        if (gt_mc_cuda_slab(c, 0, n, 0, &nv, &nt, staged ? &tm : NULL)) {
            fprintf(stderr, "bench_mc: %s\n", gt_errmsg());
            return 4;
        }
        gt_cu_sync();
        double ms = gt_timer_stop(&t);
        if (!staged && r > 0 && ms < best) best = ms; /* r = 0 warms up */
        if (staged && ms < best_staged) best_staged = ms, best_tm = tm;
    }
    const size_t peak = gt_cu_peak_bytes();
    char name[256];
    gt_gpu_describe(name, sizeof name);
    printf("bench_mc: %s, %d^3 float32 %s, iso %g\n", name, n, kind, iso);
    printf("  mesh: %llu vertices, %llu triangles\n", (unsigned long long)nv, (unsigned long long)nt);
    printf("  extraction (volume on GPU, best of %d): %.3f ms = %.1f G voxels/s\n", reps, best,
           (double)N / (best * 1e-3) / 1e9);
    printf("  floor: one read of %.0f MiB at %.0f GB/s (d2d copy) = %.3f ms = %.1f G voxels/s; ratio %.1fx\n",
           N * 4.0 / 1048576, bw / 1e9, floor_ms, (double)N / (floor_ms * 1e-3) / 1e9, best / floor_ms);
    printf("  peak device memory beyond the volume: %.1f MiB (volume %.1f MiB)\n", (peak - vol_bytes) / 1048576.0,
           vol_bytes / 1048576.0);
    printf("  with per-stage events and syncs: %.3f ms\n", best_staged);
    gt_timings_print(&best_tm, stdout, "  stages of the best staged run");
    gt_mc_cuda_destroy(c);
    gt_cu_free(dv);
    free(v);
    gt_device_shutdown();
    return 0;
}
