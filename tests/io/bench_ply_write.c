/* Triangle-mesh PLY writing throughput: bench_ply_write [FILE] [NVERT] [NTRI] [REPS]
 * Writes an NVERT-vertex (xyz float32), NTRI-triangle mesh (defaults: the
 * mcmesh 512^3 sphere-like case, 7.5M vertices and 15M triangles, about
 * 289 MB) as binary little-endian PLY to FILE (default /dev/shm/bench_tri.ply)
 * REPS times (default 5) with gt_ply_write_trimesh, and, for comparison,
 * once with the sequential gt_ply_write of the same mesh as a gt_ply_mesh
 * (the writer mcmesh and poissonrec used before). Prints the bytes, the
 * best and median times and GB/s (1e9 bytes). Not a test; GT_WRITE_THREADS,
 * GT_MAPOUT_MODE and GT_NO_MMAP_WRITE steer the writer as in the programs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "io/ply.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(void)
{
    fprintf(stderr, "bench_ply_write: %s\n", gt_errmsg());
    exit(1);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/dev/shm/bench_tri.ply";
    size_t nv = argc > 2 ? strtoull(argv[2], NULL, 10) : 7500000;
    size_t nt = argc > 3 ? strtoull(argv[3], NULL, 10) : 15000000;
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    if (reps < 1 || reps > 100 || nv == 0) {
        fprintf(stderr, "usage: bench_ply_write [FILE] [NVERT>0] [NTRI] [REPS 1..100]\n");
        return 2;
    }
    float *xyz = malloc(nv * 3 * sizeof(float));
    int32_t *tris = malloc(nt * 3 * sizeof(int32_t) + 4);
    if (!xyz || !tris) {
        fprintf(stderr, "bench_ply_write: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < 3 * nv; i++) xyz[i] = (float)(i % 1021) * 0.5f;
    for (size_t i = 0; i < 3 * nt; i++) tris[i] = (int32_t)((i * 2654435761u) % nv);
    double t[100];
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (gt_ply_write_trimesh(path, nv, xyz, NULL, 0, NULL, NULL, nt, tris, GT_PLY_BINARY_LE) != GT_OK) die();
        t[r] = now() - t0;
    }
    struct stat sb;
    if (stat(path, &sb) != 0) {
        perror(path);
        return 1;
    }
    double bytes = (double)sb.st_size;
    qsort(t, (size_t)reps, sizeof t[0], cmp_d);
    printf("%s: %zu vertices, %zu triangles, %.1f MB\n", path, nv, nt, bytes / 1e6);
    printf("gt_ply_write_trimesh (parallel, piecewise): best %.1f ms (%.2f GB/s), median %.1f ms (%.2f GB/s), %d runs\n",
           t[0] * 1e3, bytes / t[0] / 1e9, t[reps / 2] * 1e3, bytes / t[reps / 2] / 1e9, reps);

    /* the sequential writer, once (its own repacking into rows not timed) */
    const char *names[] = {"x", "y", "z"};
    gt_ply_mesh m;
    if (gt_ply_mesh_alloc(&m, nv, 3, names, NULL) != GT_OK) die();
    memcpy(m.vdata, xyz, nv * 3 * sizeof(float));
    m.nface = nt;
    m.face_start = malloc((nt + 1) * sizeof *m.face_start);
    m.face_idx = malloc(3 * nt * sizeof *m.face_idx + 4);
    if (!m.face_start || !m.face_idx) {
        fprintf(stderr, "bench_ply_write: out of memory\n");
        return 1;
    }
    for (size_t f = 0; f <= nt; f++) m.face_start[f] = (uint32_t)(3 * f);
    memcpy(m.face_idx, tris, 3 * nt * sizeof(int32_t));
    double t0 = now();
    if (gt_ply_write(path, &m, GT_PLY_BINARY_LE) != GT_OK) die();
    double ts = now() - t0;
    printf("gt_ply_write (sequential reference): %.1f ms (%.2f GB/s)\n", ts * 1e3, bytes / ts / 1e9);
    gt_ply_free(&m);
    free(xyz);
    free(tris);
    remove(path);
    return 0;
}
