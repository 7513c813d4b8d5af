/* PLY read/write throughput: bench_ply [FILE.ply] [MB]
 * Writes a binary little-endian PLY of about MB megabytes (default 100) with
 * 3DGS-like float32 vertex properties to FILE (default /dev/shm/bench.ply),
 * reads it back several times (page cache) and prints the best MB/s; also a
 * variant with mixed types (uchar colours, double) and a big-endian one that
 * exercise the per-property conversion. Not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/ply.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long long fsize(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long long n = ftell(f);
    fclose(f);
    return n;
}

static void bench(const char *path, const char *label, int np, const gt_ply_type *types, size_t nvert,
                  gt_ply_format fmt)
{
    char **names = malloc((size_t)np * sizeof *names);
    for (int i = 0; i < np; i++) {
        names[i] = malloc(16);
        snprintf(names[i], 16, "p%d", i);
    }
    gt_ply_mesh m;
    if (gt_ply_mesh_alloc(&m, nvert, np, (const char *const *)names, types) != GT_OK) {
        fprintf(stderr, "%s\n", gt_errmsg());
        exit(1);
    }
    for (size_t i = 0; i < nvert * (size_t)np; i++) m.vdata[i] = (float)(i % 251);
    double t0 = now();
    if (gt_ply_write(path, &m, fmt) != GT_OK) {
        fprintf(stderr, "%s\n", gt_errmsg());
        exit(1);
    }
    double tw = now() - t0;
    long long bytes = fsize(path);
    double best = 1e30, bestcpu = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        gt_ply_mesh r;
        double c0 = cpu();
        t0 = now();
        if (gt_ply_read(path, &r) != GT_OK) {
            fprintf(stderr, "%s\n", gt_errmsg());
            exit(1);
        }
        double t = now() - t0, c = cpu() - c0;
        if (t < best) best = t;
        if (c < bestcpu) bestcpu = c;
        if (r.nvert != nvert || memcmp(r.vdata, m.vdata, nvert * (size_t)np * sizeof(float)) != 0) {
            fprintf(stderr, "%s: read back differs\n", label);
            exit(1);
        }
        gt_ply_free(&r);
    }
    printf("%-30s %6.1f MB  write %6.0f MB/s  read best of 5: wall %6.3f s = %6.0f MB/s, cpu %6.3f s = %6.0f MB/s\n",
           label, bytes / 1e6, bytes / 1e6 / tw, best, bytes / 1e6 / best, bestcpu, bytes / 1e6 / bestcpu);
    gt_ply_free(&m);
    for (int i = 0; i < np; i++) free(names[i]);
    free(names);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/dev/shm/bench.ply";
    double mb = argc > 2 ? atof(argv[2]) : 100;
    gt_ply_type f32[62], mixed[10], sizes_check;
    (void)sizes_check;
    for (int i = 0; i < 62; i++) f32[i] = GT_PLY_FLOAT32;
    size_t n62 = (size_t)(mb * 1e6 / (62 * 4));
    bench(path, "3DGS 62 x float32 LE", 62, f32, n62, GT_PLY_BINARY_LE);
    bench(path, "3DGS 62 x float32 BE", 62, f32, n62, GT_PLY_BINARY_BE);
    gt_ply_type mx[] = {GT_PLY_FLOAT32, GT_PLY_FLOAT32, GT_PLY_FLOAT32, GT_PLY_FLOAT32, GT_PLY_FLOAT32,
                        GT_PLY_FLOAT32, GT_PLY_UINT8,   GT_PLY_UINT8,   GT_PLY_UINT8,   GT_PLY_FLOAT64};
    memcpy(mixed, mx, sizeof mx);
    size_t nmx = (size_t)(mb * 1e6 / (6 * 4 + 3 + 8));
    bench(path, "xyz nxyz rgb(uchar) double LE", 10, mixed, nmx, GT_PLY_BINARY_LE);
    remove(path);
    return 0;
}
